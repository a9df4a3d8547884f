//! The WebSocket and IPC transports over real sockets (127.0.0.1 and a temporary directory):
//! framing, errors that close the connection, the origin check and the connection cap,
//! subscriptions and their per-connection limit, the socket file, and stopping.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use chain_node::rpc::endpoint::{Endpoint, IpcConfig, WsConfig};
use chain_node::rpc::ipc::{IpcServer, MAX_IPC_MESSAGE_BYTES};
use chain_node::rpc::server::DEFAULT_LIMITS;
use chain_node::rpc::ws::WsServer;
use chain_node::rpc::{
    Attachment, Call, Dispatcher, Feed, FeedKind, Limits, Notifier, Params, Registry, RpcError,
    SubscriptionKind, Transport,
};
use serde_json::{json, Value};
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::HandshakeError;
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::CloseFrame;
use tungstenite::{Message, WebSocket};

/// How long a test waits for something that should happen at once before it fails.
const PATIENCE: Duration = Duration::from_secs(10);

const LIMIT_MESSAGE: &str = "Maximum 2 subscriptions are allowed for a websocket connection. The limit can be updated with 'admin_setMaxSubscriptionPerWSConn' API";

/// A subscription kind that sends `"first"` from inside the subscribe call, before the
/// subscribe reply exists, then follows the feed.
struct Eager(Arc<Feed>);

impl SubscriptionKind for Eager {
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<Attachment, RpcError> {
        notifier.notify(&json!("first"));
        FeedKind(self.0.clone()).subscribe(args, notifier)
    }
}

/// A subscription kind that sends a notification and then fails: the subscribe call gets the
/// error and the notification must never go out.
struct Broken;

impl SubscriptionKind for Broken {
    fn subscribe(&self, _args: &Params, notifier: Notifier) -> Result<Attachment, RpcError> {
        notifier.notify(&json!("must not be seen"));
        Err(RpcError::invalid_params("broken"))
    }
}

struct Node {
    registry: Arc<Registry>,
    feed: Arc<Feed>,
}

fn node() -> Node {
    let mut r = Registry::default();
    // rpc_modules, as the node declares it.
    chain_node::api::register(&Arc::new(chain_node::api::rpc::RpcApi), &mut r);
    // Returns its argument.
    r.register(
        "chain_echo",
        1,
        Arc::new(|_c: &Call, p: &Params| Ok(p.raw(0).cloned().unwrap_or(Value::Null))),
    );
    let feed = Feed::new();
    r.register_subscription("chain", "newHeads", Arc::new(FeedKind(feed.clone())));
    r.register_subscription("chain", "eager", Arc::new(Eager(feed.clone())));
    r.register_subscription("chain", "broken", Arc::new(Broken));
    Node {
        registry: Arc::new(r),
        feed,
    }
}

impl Node {
    fn ws(&self, cfg: WsConfig, limits: Limits) -> WsServer {
        let d = Dispatcher::new(self.registry.clone(), None, Transport::Ws, false, limits);
        WsServer::start(&cfg, d).expect("start the WebSocket server")
    }

    fn ws_default(&self) -> WsServer {
        self.ws(WsConfig::new("127.0.0.1", 0), DEFAULT_LIMITS)
    }

    fn ipc(&self, path: &Path) -> std::io::Result<IpcServer> {
        let d = Dispatcher::new(
            self.registry.clone(),
            None,
            Transport::Ipc,
            false,
            DEFAULT_LIMITS,
        );
        IpcServer::start(&IpcConfig::new(path.to_path_buf()), d)
    }
}

/// Waits (boundedly) until `done` holds.
fn eventually(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + PATIENCE;
    while !done() {
        assert!(Instant::now() < deadline, "gave up waiting: {what}");
        thread::sleep(Duration::from_millis(10));
    }
}

fn call_text(id: &str, method: &str, params: Value) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
}

/// What the subscription tests need from a client, so that they run on both transports.
trait Client {
    /// Sends one request (a WebSocket message, or bytes on the IPC stream).
    fn send(&mut self, text: &str);
    /// The next message, which must end with `\n`, parsed.
    fn recv(&mut self) -> Value;

    fn call(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(&call_text(&id.to_string(), method, params));
        let reply = self.recv();
        assert_eq!(reply["id"], id, "{reply}");
        reply
    }
}

struct Ws(WebSocket<TcpStream>);

#[allow(clippy::result_large_err)] // tungstenite's error type
fn ws_try_connect(addr: SocketAddr, origin: Option<&str>) -> Result<Ws, tungstenite::Error> {
    let stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut req = format!("ws://{addr}/").into_client_request().unwrap();
    if let Some(o) = origin {
        req.headers_mut().insert("Origin", o.parse().unwrap());
    }
    match tungstenite::client(req, stream) {
        Ok((ws, _)) => Ok(Ws(ws)),
        Err(HandshakeError::Failure(e)) => Err(e),
        Err(HandshakeError::Interrupted(_)) => panic!("handshake timed out"),
    }
}

fn ws_connect(addr: SocketAddr) -> Ws {
    ws_try_connect(addr, None).expect("WebSocket handshake")
}

impl Ws {
    fn send_message(&mut self, m: Message) {
        self.0.send(m).expect("send");
    }

    /// The next text message, verbatim.
    fn recv_text(&mut self) -> String {
        loop {
            match self.0.read().expect("read a message") {
                Message::Text(t) => return t.to_string(),
                Message::Ping(_) | Message::Pong(_) => {}
                other => panic!("expected a text message, got {other:?}"),
            }
        }
    }

    /// Reads until the server ends the connection; fails on any data message. Returns the
    /// close frame, if the server sent one.
    fn expect_closed(&mut self) -> Option<CloseFrame> {
        loop {
            match self.0.read() {
                Ok(Message::Close(f)) => return f,
                Ok(Message::Ping(_) | Message::Pong(_)) => {}
                Ok(m) => panic!("expected the connection to close, got {m:?}"),
                Err(tungstenite::Error::Io(e)) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    panic!("the server did not close the connection")
                }
                Err(_) => return None,
            }
        }
    }

    /// Closes from the client side; the server must answer with its close frame.
    fn close(mut self) {
        self.0.close(None).expect("send a close frame");
        loop {
            match self.0.read() {
                Ok(Message::Close(_)) => break,
                Ok(Message::Text(_)) => {} // a notification sent before the server saw it
                other => panic!("expected the server's close frame, got {other:?}"),
            }
        }
        assert!(matches!(
            self.0.read(),
            Err(tungstenite::Error::ConnectionClosed)
        ));
    }
}

impl Client for Ws {
    fn send(&mut self, text: &str) {
        self.send_message(Message::text(text));
    }

    fn recv(&mut self) -> Value {
        let t = self.recv_text();
        assert!(t.ends_with('\n'), "{t:?}");
        serde_json::from_str(&t).unwrap()
    }
}

struct Ipc {
    stream: UnixStream,
    reader: BufReader<UnixStream>,
}

fn ipc_connect(path: &Path) -> Ipc {
    let stream = UnixStream::connect(path).expect("connect to the IPC socket");
    stream.set_read_timeout(Some(PATIENCE)).unwrap();
    let reader = BufReader::new(stream.try_clone().unwrap());
    Ipc { stream, reader }
}

impl Ipc {
    /// The next line, `\n` included.
    fn line(&mut self) -> String {
        let mut l = String::new();
        self.reader.read_line(&mut l).expect("read a line");
        assert!(l.ends_with('\n'), "expected a line, got {l:?}");
        l
    }

    /// Asserts that the server closes the stream without sending anything more.
    fn expect_eof(&mut self) {
        let mut rest = Vec::new();
        self.reader
            .read_to_end(&mut rest)
            .expect("the server closes the stream");
        assert!(
            rest.is_empty(),
            "unexpected data: {:?}",
            String::from_utf8_lossy(&rest)
        );
    }
}

impl Client for Ipc {
    fn send(&mut self, text: &str) {
        self.stream.write_all(text.as_bytes()).expect("write");
    }

    fn recv(&mut self) -> Value {
        serde_json::from_str(&self.line()).unwrap()
    }
}

/// Sends `request` on a fresh TCP connection and returns everything the server answers.
fn raw_http(addr: SocketAddr, request: &str) -> String {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(PATIENCE)).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out)
        .expect("the server answers and closes");
    String::from_utf8(out).unwrap()
}

fn upgrade_request(addr: SocketAddr, origin: Option<&str>) -> String {
    let origin = origin
        .map(|o| format!("Origin: {o}\r\n"))
        .unwrap_or_default();
    format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
         Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n{origin}\r\n"
    )
}

fn body(response: &str) -> &str {
    response
        .split_once("\r\n\r\n")
        .expect("a complete response")
        .1
}

#[test]
fn ws_calls_batches_and_ids() {
    let n = node();
    let server = n.ws_default();
    assert_eq!(server.url(), format!("ws://{}", server.local_addr()));
    assert!(server.url().starts_with("ws://127.0.0.1:"));
    let mut c = ws_connect(server.local_addr());

    c.send(&call_text(r#""abc""#, "chain_echo", json!([[1, 2]])));
    assert_eq!(
        c.recv_text(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"abc\",\"result\":[1,2]}\n"
    );
    // A binary message works too; the reply is text and echoes the id byte for byte.
    c.send_message(Message::binary(
        call_text("1.50", "chain_echo", json!(["b"])).into_bytes(),
    ));
    assert_eq!(
        c.recv_text(),
        "{\"jsonrpc\":\"2.0\",\"id\":1.50,\"result\":\"b\"}\n"
    );
    // A notification gets nothing: the next message is the batch's reply.
    c.send(r#"{"jsonrpc":"2.0","method":"chain_echo","params":[1]}"#);
    c.send(&format!(
        "[{},{},{}]",
        call_text("1", "chain_echo", json!(["x"])),
        r#"{"jsonrpc":"2.0","method":"chain_echo","params":[2]}"#,
        call_text(r#""b""#, "chain_nope", json!([]))
    ));
    assert_eq!(
        c.recv_text(),
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"x\"},{\"jsonrpc\":\"2.0\",\"id\":\"b\",\"error\":{\"code\":-32601,\"message\":\"the method chain_nope does not exist/is not available\",\"data\":\"no such method\"}}]\n"
    );
    // Only the first value of a message counts; what follows it is ignored.
    c.send(&format!(
        "{} {{oops",
        call_text("3", "chain_echo", json!([3]))
    ));
    assert_eq!(c.recv()["result"], 3);
    assert_eq!(
        c.call(4, "rpc_modules", json!([]))["result"],
        json!({"chain": "1.0", "rpc": "1.0"})
    );
    c.close();
    server.stop();
}

#[test]
fn ws_syntax_error_is_answered_then_the_connection_closes() {
    let n = node();
    let server = n.ws_default();
    let bad = r#"{"jsonrpc" x}"#;
    let mut c = ws_connect(server.local_addr());
    c.send(bad);
    let reply = c.recv();
    let decoder_text = serde_json::from_str::<Value>(bad).unwrap_err().to_string();
    assert_eq!(
        reply,
        json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32700, "message": decoder_text}})
    );
    c.expect_closed();

    // A value cut short, or an empty message: closed without a reply.
    for msg in [r#"{"jsonrpc":"2.0","id":1,"#, "", "  "] {
        let mut c = ws_connect(server.local_addr());
        c.send(msg);
        c.expect_closed();
    }
    server.stop();
}

#[test]
fn ws_over_deep_message_is_answered_then_the_connection_closes() {
    let n = node();
    let server = n.ws_default();
    let dir = tempfile::tempdir().unwrap();
    let ipc = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let nested = |levels: usize| format!("{}{}", "[".repeat(levels), "]".repeat(levels));
    let too_deep = "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"exceeded maximum nesting depth of 128\"}}\n";

    let mut c = ws_connect(server.local_addr());
    c.send(&nested(129));
    assert_eq!(c.recv_text(), too_deep);
    let frame = c.expect_closed().expect("a close frame");
    assert_eq!(frame.code, CloseCode::Invalid);
    // IPC answers the same text and closes too.
    let mut i = ipc_connect(ipc.path());
    i.send(&nested(129));
    assert_eq!(i.line(), too_deep);
    i.expect_eof();

    // 128 levels are allowed: the object, `params`, and 126 arrays inside it.
    let mut c = ws_connect(server.local_addr());
    let deepest = |id: u64| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"chain_echo","params":[{}]}}"#,
            nested(126)
        )
    };
    c.send(&deepest(1));
    let want: Value = serde_json::from_str(&nested(126)).unwrap();
    assert_eq!(c.recv()["result"], want);
    // Only the first value of a message counts, for its depth too.
    c.send(&format!("{} {}", deepest(2), nested(129)));
    assert_eq!(c.recv()["id"], 2);
    assert_eq!(c.call(3, "chain_echo", json!([3]))["result"], 3);
    c.close();
    server.stop();
    ipc.stop();
}

#[test]
fn ws_message_over_the_limit_closes_with_1009() {
    let n = node();
    let limits = Limits {
        max_request_bytes: 1000,
        max_batch: 10,
    };
    let server = n.ws(WsConfig::new("127.0.0.1", 0), limits);
    let empty = call_text("1", "chain_echo", json!([""])).len();
    let padded = |len: usize| call_text("1", "chain_echo", json!(["a".repeat(len - empty)]));
    let mut c = ws_connect(server.local_addr());
    let at_limit = padded(1000);
    assert_eq!(at_limit.len(), 1000);
    c.send(&at_limit);
    assert_eq!(c.recv()["result"].as_str().unwrap().len(), 1000 - empty);
    c.send(&padded(1001));
    let frame = c.expect_closed().expect("a close frame");
    assert_eq!(frame.code, CloseCode::Size);
    assert_eq!(u16::from(frame.code), 1009);
    server.stop();
}

#[test]
fn ws_origin_check() {
    let n = node();
    let mut cfg = WsConfig::new("127.0.0.1", 0);
    cfg.origins = vec!["http://Allowed.example".into()];
    let server = n.ws(cfg, DEFAULT_LIMITS);
    let addr = server.local_addr();

    let mut c = ws_try_connect(addr, Some("HTTP://allowed.EXAMPLE")).expect("allowed origin");
    assert_eq!(c.call(1, "chain_echo", json!([1]))["result"], 1);
    ws_try_connect(addr, None).expect("no Origin header passes");
    match ws_try_connect(addr, Some("http://evil.example")) {
        Err(tungstenite::Error::Http(resp)) => assert_eq!(resp.status(), 403),
        other => panic!("expected 403, got {:?}", other.map(|_| ())),
    }
    let resp = raw_http(addr, &upgrade_request(addr, Some("http://evil.example")));
    assert!(resp.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{resp}");
    assert_eq!(body(&resp), "Forbidden");
    // Not an upgrade request at all.
    let resp = raw_http(addr, &format!("GET / HTTP/1.1\r\nHost: {addr}\r\n\r\n"));
    assert!(resp.starts_with("HTTP/1.1 400 "), "{resp}");
    // An upgrade attempt with a method other than GET.
    for method in ["POST", "PUT"] {
        let request = upgrade_request(addr, None).replacen("GET ", &format!("{method} "), 1);
        let resp = raw_http(addr, &request);
        assert!(
            resp.starts_with("HTTP/1.1 405 Method Not Allowed\r\n"),
            "{resp}"
        );
        assert_eq!(body(&resp), "Method Not Allowed");
    }
    server.stop();

    // The defaults: http://localhost (and the host name); `*` allows any.
    let server = n.ws_default();
    let addr = server.local_addr();
    ws_try_connect(addr, Some("http://localhost")).expect("the default origin");
    let resp = raw_http(addr, &upgrade_request(addr, Some("http://localhost:3000")));
    assert!(resp.starts_with("HTTP/1.1 403 "), "{resp}");
    server.stop();
    let mut cfg = WsConfig::new("127.0.0.1", 0);
    cfg.origins = vec!["*".into()];
    let server = n.ws(cfg, DEFAULT_LIMITS);
    ws_try_connect(server.local_addr(), Some("http://anything.example")).expect("`*`");
    server.stop();
}

#[test]
fn ws_connections_beyond_the_cap_get_an_empty_200() {
    let n = node();
    let mut cfg = WsConfig::new("127.0.0.1", 0);
    cfg.max_connections = 1;
    let server = n.ws(cfg, DEFAULT_LIMITS);
    let addr = server.local_addr();
    let mut first = ws_connect(addr);
    assert_eq!(first.call(1, "chain_echo", json!([1]))["result"], 1);
    let resp = raw_http(addr, &upgrade_request(addr, None));
    assert!(resp.starts_with("HTTP/1.1 200 OK\r\n"), "{resp}");
    assert!(!resp.to_ascii_lowercase().contains("upgrade"), "{resp}");
    assert_eq!(body(&resp), "");
    // The place is given back when the first connection ends.
    first.close();
    let mut again = None;
    eventually("a new connection is accepted", || {
        match ws_try_connect(addr, None) {
            Ok(c) => again = Some(c),
            Err(tungstenite::Error::Http(r)) => assert_eq!(r.status(), 200),
            Err(e) => panic!("{e}"),
        }
        again.is_some()
    });
    let mut again = again.unwrap();
    assert_eq!(again.call(2, "chain_echo", json!([2]))["result"], 2);
    server.stop();
}

/// Subscribe, notification envelope and order, unsubscribe.
fn notifications(n: &Node, c: &mut dyn Client) {
    let sub = c.call(1, "chain_subscribe", json!(["newHeads"]))["result"].clone();
    let id = sub.as_str().expect("a subscription id");
    assert!(
        id.starts_with("0x") && id[2..].chars().all(|ch| ch.is_ascii_hexdigit()),
        "{id}"
    );
    n.feed.publish(&json!({"number": "0x1"}));
    let note = c.recv();
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "chain_subscription",
               "params": {"subscription": id, "result": {"number": "0x1"}}})
    );

    // A notification sent while the subscribe call runs comes after its reply.
    c.send(&call_text("2", "chain_subscribe", json!(["eager"])));
    let reply = c.recv();
    assert_eq!(reply["id"], 2, "the reply first: {reply}");
    let eager = reply["result"].as_str().unwrap().to_string();
    let note = c.recv();
    assert_eq!(note["params"]["subscription"], eager.as_str());
    assert_eq!(note["params"]["result"], "first");
    assert_eq!(n.feed.subscriber_count(), 2);

    // After unsubscribing nothing more arrives: the next message is a call's reply.
    assert_eq!(c.call(3, "chain_unsubscribe", json!([id]))["result"], true);
    assert_eq!(
        c.call(4, "chain_unsubscribe", json!([id]))["error"]["message"],
        "subscription not found"
    );
    assert_eq!(
        c.call(5, "chain_unsubscribe", json!([eager]))["result"],
        true
    );
    n.feed.publish(&json!({"number": "0x2"}));
    assert_eq!(c.call(6, "chain_echo", json!(["after"]))["result"], "after");
    assert_eq!(n.feed.subscriber_count(), 0);

    // A subscribe that fails after its kind notified: only the error comes back (a stray
    // notification would arrive before the next reply).
    assert_eq!(
        c.call(7, "chain_subscribe", json!(["broken"]))["error"],
        json!({"code": -32602, "message": "broken"})
    );
    assert_eq!(c.call(8, "chain_echo", json!(["next"]))["result"], "next");
}

#[test]
fn ws_notifications() {
    let n = node();
    let server = n.ws_default();
    let mut c = ws_connect(server.local_addr());
    notifications(&n, &mut c);
    server.stop();
}

#[test]
fn ipc_notifications() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let mut c = ipc_connect(server.path());
    notifications(&n, &mut c);
    server.stop();
}

/// The per-connection limit, for single calls and inside one batch. `connect` opens a new
/// connection.
fn subscription_limit(n: &Node, connect: &dyn Fn() -> Box<dyn Client>) {
    n.registry.limit().set(2);
    let mut c = connect();
    let a = c.call(1, "chain_subscribe", json!(["newHeads"]))["result"].clone();
    c.call(2, "chain_subscribe", json!(["newHeads"]))["result"]
        .as_str()
        .unwrap();
    assert_eq!(
        c.call(3, "chain_subscribe", json!(["newHeads"]))["error"],
        json!({"code": -32000, "message": LIMIT_MESSAGE})
    );
    // The limit is per connection.
    let mut other = connect();
    assert!(other.call(1, "chain_subscribe", json!(["newHeads"]))["result"].is_string());
    // Freeing a place makes room again.
    assert_eq!(c.call(4, "chain_unsubscribe", json!([a]))["result"], true);
    assert!(c.call(5, "chain_subscribe", json!(["newHeads"]))["result"].is_string());

    // Subscriptions made earlier in a batch count.
    let mut b = connect();
    let batch = (1..=3)
        .map(|i| call_text(&i.to_string(), "chain_subscribe", json!(["newHeads"])))
        .collect::<Vec<_>>()
        .join(",");
    b.send(&format!("[{batch}]"));
    let replies = b.recv();
    let replies = replies.as_array().expect("a batch reply");
    assert_eq!(replies.len(), 3);
    assert!(replies[0]["result"].is_string() && replies[1]["result"].is_string());
    assert_eq!(replies[2]["error"]["message"], LIMIT_MESSAGE);
    assert_eq!(n.feed.subscriber_count(), 5);
}

#[test]
fn ws_subscription_limit() {
    let n = node();
    let server = n.ws_default();
    let addr = server.local_addr();
    subscription_limit(&n, &|| Box::new(ws_connect(addr)));
    server.stop();
    assert_eq!(
        n.feed.subscriber_count(),
        0,
        "stopping cancels every subscription"
    );
}

#[test]
fn ipc_subscription_limit() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let path = server.path().to_path_buf();
    subscription_limit(&n, &|| Box::new(ipc_connect(&path)));
    server.stop();
    assert_eq!(
        n.feed.subscriber_count(),
        0,
        "stopping cancels every subscription"
    );
}

#[test]
fn closing_a_connection_cancels_its_subscriptions() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let ws = n.ws_default();
    let ipc = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let mut w = ws_connect(ws.local_addr());
    let mut i = ipc_connect(ipc.path());
    for id in 1..=2 {
        w.call(id, "chain_subscribe", json!(["newHeads"]));
        i.call(id, "chain_subscribe", json!(["newHeads"]));
    }
    assert_eq!(n.feed.subscriber_count(), 4);
    w.close();
    eventually("the WebSocket subscriptions end", || {
        n.feed.subscriber_count() == 2
    });
    drop(i);
    eventually("the IPC subscriptions end", || {
        n.feed.subscriber_count() == 0
    });
    ws.stop();
    ipc.stop();
}

#[test]
fn ipc_is_a_stream_of_json_values() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    assert_eq!(
        server.url(),
        dir.path().join("chain.ipc").display().to_string()
    );
    let mut c = ipc_connect(server.path());
    // Two requests back to back in one write, no separator: two replies, in order.
    c.send(&format!(
        "{}{}",
        call_text("1", "chain_echo", json!(["a"])),
        call_text(r#""two""#, "chain_echo", json!(["b"]))
    ));
    assert_eq!(
        c.line(),
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"a\"}\n"
    );
    assert_eq!(
        c.line(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"two\",\"result\":\"b\"}\n"
    );
    // A value split over two writes, then a notification (no reply) and a batch.
    let req = call_text("3", "chain_echo", json!([{"k": [1, 2]}]));
    let (head, tail) = req.split_at(20);
    c.send(head);
    c.stream.flush().unwrap();
    thread::sleep(Duration::from_millis(20));
    c.send(tail);
    assert_eq!(c.recv()["result"], json!({"k": [1, 2]}));
    c.send("\n  {\"jsonrpc\":\"2.0\",\"method\":\"chain_echo\",\"params\":[0]}\n");
    c.send(&format!(
        "[{},{}]",
        call_text("4", "chain_echo", json!([4])),
        call_text("5", "chain_echo", json!([5]))
    ));
    assert_eq!(
        c.recv(),
        json!([{"jsonrpc": "2.0", "id": 4, "result": 4}, {"jsonrpc": "2.0", "id": 5, "result": 5}])
    );

    // A clean EOF: what was asked is answered, then the server closes.
    c.send(&call_text("6", "chain_echo", json!([6])));
    c.stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(c.recv()["id"], 6);
    c.expect_eof();

    // Cut short at EOF: closed without a reply.
    let mut c = ipc_connect(server.path());
    c.send(r#"{"jsonrpc":"2.0","id":7,"#);
    c.stream.shutdown(std::net::Shutdown::Write).unwrap();
    c.expect_eof();
    server.stop();
}

#[test]
fn ipc_syntax_error_is_answered_then_the_connection_closes() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let mut c = ipc_connect(server.path());
    c.send(&format!(
        "{} {{\"jsonrpc\" x}}",
        call_text("1", "chain_echo", json!([1]))
    ));
    assert_eq!(c.recv()["result"], 1);
    let err = c.recv();
    assert_eq!(err["id"], Value::Null);
    assert_eq!(err["error"]["code"], -32700);
    let text = err["error"]["message"].as_str().unwrap();
    assert!(text.starts_with("expected `:` at line 1 column"), "{text}");
    c.expect_eof();
    server.stop();
}

#[test]
fn ipc_message_over_the_cap_is_refused() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let mut c = ipc_connect(server.path());
    let mut w = c.stream.try_clone().unwrap();
    // The server stops reading part way, so the write may fail; it runs beside the reader.
    let writer = thread::spawn(move || {
        let pad = "a".repeat(MAX_IPC_MESSAGE_BYTES);
        let _ = w.write_all(call_text("1", "chain_echo", json!([pad])).as_bytes());
    });
    let err = c.recv();
    assert_eq!(
        err["error"],
        json!({"code": -32600, "message": format!("message too large: more than {MAX_IPC_MESSAGE_BYTES} bytes")})
    );
    c.expect_eof();
    writer.join().unwrap();
    server.stop();
}

#[test]
fn ipc_socket_file() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new/sub/chain.ipc");
    let server = n.ipc(&path).unwrap();
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    let parent = path.parent().unwrap();
    assert!(parent.is_dir());
    assert_eq!(
        mode(parent) & 0o026,
        0,
        "created 0751: no write for group or others"
    );
    // A live socket is not taken over.
    let err = n
        .ipc(&path)
        .err()
        .expect("a second server on a live socket");
    assert_eq!(err.kind(), std::io::ErrorKind::AddrInUse);
    assert_eq!(
        ipc_connect(&path).call(1, "chain_echo", json!([1]))["result"],
        1
    );
    server.stop();
    assert!(!path.exists(), "stop removes the socket file");
    assert!(UnixStream::connect(&path).is_err());

    // A stale socket (nobody listening) is replaced.
    let stale = dir.path().join("stale.ipc");
    drop(UnixListener::bind(&stale).unwrap());
    assert!(stale.exists());
    let server = n.ipc(&stale).unwrap();
    assert_eq!(
        ipc_connect(&stale).call(1, "chain_echo", json!([2]))["result"],
        2
    );
    server.stop();

    // Anything else at the path is left alone.
    let file = dir.path().join("file.ipc");
    std::fs::write(&file, "keep me").unwrap();
    let err = n.ipc(&file).err().expect("a regular file is not replaced");
    assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep me");
}

#[test]
fn stop_with_clients_connected() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let ws = n.ws_default();
    let ipc = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let addr = ws.local_addr();
    let mut w = ws_connect(addr);
    w.call(1, "chain_subscribe", json!(["newHeads"]));
    let mut idle = ws_connect(addr);
    // A TCP connection that never sends its upgrade request.
    let mut silent = TcpStream::connect(addr).unwrap();
    silent.set_read_timeout(Some(PATIENCE)).unwrap();
    let mut i = ipc_connect(ipc.path());
    i.call(1, "chain_subscribe", json!(["newHeads"]));
    assert_eq!(n.feed.subscriber_count(), 2);

    let endpoints: Vec<Box<dyn Endpoint>> = vec![Box::new(ws), Box::new(ipc)];
    for e in endpoints {
        e.stop();
    }
    let frame = w.expect_closed().expect("a close frame");
    assert_eq!(frame.code, CloseCode::Away);
    idle.expect_closed();
    // Ended: closed once accepted, or reset if it was still waiting in the listen queue.
    let mut rest = Vec::new();
    match silent.read_to_end(&mut rest) {
        Ok(0) => {}
        Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
        other => panic!("expected the connection to end, got {other:?}"),
    }
    i.expect_eof();
    assert_eq!(n.feed.subscriber_count(), 0);
    assert!(TcpStream::connect(addr).is_err(), "the listener is closed");
    assert!(!dir.path().join("chain.ipc").exists());
}

/// A client that stops reading while events keep coming is disconnected once
/// `OUTBOX_LIMIT` bytes of notifications pile up, instead of growing the node's memory
/// without bound.
fn slow_reader_is_cut_off(n: &Node, c: &mut dyn Client) {
    c.call(1, "chain_subscribe", json!(["newHeads"]));
    assert_eq!(n.feed.subscriber_count(), 1);
    let payload = json!({"filler": "x".repeat(1024)});
    // Far more than the socket buffers and the queue hold; the client reads none of it.
    // 1 KiB each: three times what the outbox holds, on top of the socket buffers.
    for _ in 0..(chain_node::rpc::outbox::OUTBOX_LIMIT / 1024 * 3) {
        n.feed.publish(&payload);
        if n.feed.subscriber_count() == 0 {
            break;
        }
    }
    eventually("the slow subscriber is dropped", || {
        n.feed.subscriber_count() == 0
    });
}

#[test]
fn ws_slow_reader_is_cut_off() {
    let n = node();
    let server = n.ws_default();
    let mut c = ws_connect(server.local_addr());
    slow_reader_is_cut_off(&n, &mut c);
    server.stop();
}

#[test]
fn ipc_slow_reader_is_cut_off() {
    let n = node();
    let dir = tempfile::tempdir().unwrap();
    let server = n.ipc(&dir.path().join("chain.ipc")).unwrap();
    let mut c = ipc_connect(server.path());
    slow_reader_is_cut_off(&n, &mut c);
    // The connection is gone: reading drains what was sent, then ends.
    let mut rest = Vec::new();
    let _ = c.reader.read_to_end(&mut rest);
    server.stop();
}
