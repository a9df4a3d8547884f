//! A WebSocket JSON-RPC client for tests: connect with a 10 s read timeout, read the next
//! message, make one call.

use std::net::TcpStream;
use std::time::Duration;

use serde_json::{json, Value};

pub type Ws = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

/// Connects to `url` (ws://127.0.0.1:PORT); reads wait at most 10 s.
pub fn connect(url: &str) -> Ws {
    let (ws, _) = tungstenite::connect(url).unwrap_or_else(|e| panic!("connect {url}: {e}"));
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    ws
}

/// The next message (a response or a notification), parsed.
pub fn read(ws: &mut Ws) -> Value {
    loop {
        match ws.read().expect("a message within 10 s") {
            tungstenite::Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            tungstenite::Message::Binary(b) => return serde_json::from_slice(&b).unwrap(),
            _ => continue,
        }
    }
}

/// One call: its response, which must be the next message (no notification before it).
pub fn call(ws: &mut Ws, id: u64, method: &str, params: Value) -> Value {
    let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    ws.send(tungstenite::Message::text(req.to_string()))
        .unwrap();
    let v = read(ws);
    assert_eq!(v["id"], json!(id), "{v}");
    v
}
