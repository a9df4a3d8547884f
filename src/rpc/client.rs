//! A synchronous JSON-RPC 2.0 client over the node's three transports: HTTP (`http://` or
//! `https://`, one POST per call on a keep-alive agent), WebSocket (`ws://`) and IPC (any other
//! endpoint is the path of a unix socket). `chainctl` and the integration tests use it.

use std::collections::VecDeque;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::io::AsRawFd;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value;
use zeroize::{Zeroize, Zeroizing};

/// How long a connection attempt may take before the node counts as unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a call produced no result.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The node answered with a JSON-RPC error object. Printed as `error CODE: MESSAGE`,
    /// with its `data` on the next line when it has some, and under a parameter error in
    /// Go's words what the parameter takes ([`super::explain`]).
    #[error("error {code}: {message}{}{}", data_line(.data), explain_line(*.code, .message))]
    Rpc {
        code: i64,
        message: String,
        data: Option<Value>,
    },
    /// No connection to `endpoint` could be made, or it broke.
    #[error("cannot reach the node at {endpoint}: {detail}")]
    Unreachable { endpoint: String, detail: String },
    /// The endpoint is not one we speak, or the node's answer is not JSON-RPC.
    #[error("{0}")]
    Protocol(String),
}

enum Transport {
    Http { agent: ureq::Agent, url: String },
    Ws(Box<tungstenite::WebSocket<TcpStream>>),
    Ipc(BufReader<UnixStream>),
}

/// A connection to one endpoint. Stream transports (WebSocket, IPC) reconnect on the next call
/// after the connection broke.
pub struct Client {
    endpoint: String,
    /// `None` after a stream broke, until the next call reconnects.
    transport: Option<Transport>,
    next_id: u64,
    /// Notifications that arrived while waiting for a response.
    pending: VecDeque<Value>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

/// What kind of endpoint a string names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointKind {
    Http,
    Ws,
    Ipc,
}

/// The `data` of an error as the line printed under its message: `\n  data: TEXT` (a string
/// as it is, other JSON compact), or nothing.
fn explain_line(code: i64, message: &str) -> String {
    super::explain::explain(code, message)
        .map(|e| format!("\n  meaning: {e}"))
        .unwrap_or_default()
}

fn data_line(data: &Option<Value>) -> String {
    match data {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => format!("\n  data: {s}"),
        Some(other) => format!("\n  data: {other}"),
    }
}

/// The kind of `endpoint`: `http://` and `https://` are HTTP, `ws://` and `wss://` WebSocket,
/// anything else the path of an IPC socket.
pub fn endpoint_kind(endpoint: &str) -> EndpointKind {
    let lower = endpoint.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        EndpointKind::Http
    } else if lower.starts_with("ws://") || lower.starts_with("wss://") {
        EndpointKind::Ws
    } else {
        EndpointKind::Ipc
    }
}

/// Whether `endpoint` is a node on this machine: an IPC socket, or an `http://`/`ws://`
/// endpoint whose host is `localhost` or a loopback address (`127.0.0.0/8`, `[::1]`).
pub fn is_local(endpoint: &str) -> bool {
    if endpoint_kind(endpoint) == EndpointKind::Ipc {
        return true;
    }
    let rest = endpoint.split_once("://").map_or(endpoint, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let host = match host_port.strip_prefix('[') {
        Some(b) => b.split_once(']').map_or(b, |(h, _)| h),
        None => host_port.rsplit_once(':').map_or(host_port, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

impl Client {
    /// Connects to `endpoint` (see [`endpoint_kind`]). WebSocket and IPC connect at once and
    /// fail with [`ClientError::Unreachable`] when nobody listens; HTTP connects on the first
    /// call. `wss://` is refused with [`ClientError::Protocol`].
    pub fn connect(endpoint: &str) -> Result<Client, ClientError> {
        let mut client = Client {
            endpoint: endpoint.to_string(),
            transport: None,
            next_id: 1,
            pending: VecDeque::new(),
        };
        client.transport = Some(client.open()?);
        Ok(client)
    }

    /// The endpoint as given to [`Client::connect`].
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The kind of transport this client uses.
    pub fn kind(&self) -> EndpointKind {
        endpoint_kind(&self.endpoint)
    }

    fn unreachable(&self, detail: impl ToString) -> ClientError {
        ClientError::Unreachable {
            endpoint: self.endpoint.clone(),
            detail: detail.to_string(),
        }
    }

    fn open(&self) -> Result<Transport, ClientError> {
        match endpoint_kind(&self.endpoint) {
            EndpointKind::Http => Ok(Transport::Http {
                agent: ureq::AgentBuilder::new()
                    .timeout_connect(CONNECT_TIMEOUT)
                    .build(),
                url: self.endpoint.clone(),
            }),
            EndpointKind::Ws => self.open_ws().map(|ws| Transport::Ws(Box::new(ws))),
            EndpointKind::Ipc => {
                let stream =
                    UnixStream::connect(&self.endpoint).map_err(|e| self.unreachable(e))?;
                Ok(Transport::Ipc(BufReader::new(stream)))
            }
        }
    }

    fn open_ws(&self) -> Result<tungstenite::WebSocket<TcpStream>, ClientError> {
        let rest = &self.endpoint[self.endpoint.find("://").map_or(0, |i| i + 3)..];
        if self.endpoint.to_ascii_lowercase().starts_with("wss://") {
            return Err(ClientError::Protocol(format!(
                "{}: TLS WebSocket endpoints (wss://) are not supported; use ws:// or IPC",
                self.endpoint
            )));
        }
        let authority = rest.split(['/', '?']).next().unwrap_or(rest);
        let addrs: Vec<_> = authority
            .to_socket_addrs()
            .or_else(|_| format!("{authority}:80").to_socket_addrs())
            .map_err(|e| self.unreachable(e))?
            .collect();
        let mut last = io::Error::new(io::ErrorKind::NotFound, "no address");
        let mut stream = None;
        for addr in &addrs {
            match TcpStream::connect_timeout(addr, CONNECT_TIMEOUT) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = e,
            }
        }
        let stream = stream.ok_or_else(|| self.unreachable(last))?;
        // Requests are small; do not let Nagle hold them back.
        let _ = stream.set_nodelay(true);
        let (ws, _) = tungstenite::client(self.endpoint.as_str(), stream).map_err(|e| match e {
            tungstenite::HandshakeError::Failure(e) => {
                self.unreachable(format!("WebSocket handshake failed: {e}"))
            }
            tungstenite::HandshakeError::Interrupted(_) => {
                self.unreachable("WebSocket handshake interrupted")
            }
        })?;
        Ok(ws)
    }

    /// Calls `method` with positional `params` and returns its `result`. Fails with
    /// [`ClientError::Rpc`] when the node answers an error object, with
    /// [`ClientError::Unreachable`] when the node cannot be reached or the connection breaks,
    /// and with [`ClientError::Protocol`] when the answer is not a JSON-RPC response.
    ///
    /// `params` may hold passphrases. The strings in `params` and the request text are
    /// zeroized once sent, and so is the WebSocket message buffer. Copies made beyond this
    /// client's reach are not: the masked frame tungstenite keeps in its write buffer, the
    /// buffers ureq copies an HTTP body through (and the TLS ones for `https://`), and the
    /// kernel's socket buffers.
    pub fn call(&mut self, method: &str, params: Vec<Value>) -> Result<Value, ClientError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = request_text(id, method, params);
        if self.transport.is_none() {
            self.transport = Some(self.open()?);
        }
        let result = self.exchange(id, &request);
        if matches!(result, Err(ClientError::Unreachable { .. }))
            && self.kind() != EndpointKind::Http
        {
            self.transport = None;
        }
        result
    }

    fn exchange(&mut self, id: u64, request: &str) -> Result<Value, ClientError> {
        if let Some(Transport::Http { agent, url }) = &self.transport {
            let answer = agent
                .post(url)
                .set("Content-Type", "application/json")
                .send_string(request);
            let response = match answer {
                Ok(r) => r,
                // A JSON-RPC error may come with an HTTP error status; the body tells.
                Err(ureq::Error::Status(status, r)) => {
                    let body = r.into_string().unwrap_or_default();
                    return match serde_json::from_str::<Value>(&body) {
                        Ok(v) if v.get("error").is_some() => response_of(v),
                        _ => Err(ClientError::Protocol(format!(
                            "{}: HTTP status {status}: {}",
                            self.endpoint,
                            body.trim()
                        ))),
                    };
                }
                Err(ureq::Error::Transport(t)) => {
                    // ureq's own text repeats the URL; the cause alone reads better after it.
                    let detail = match std::error::Error::source(&t) {
                        Some(cause) => cause.to_string(),
                        None => t
                            .message()
                            .map_or_else(|| t.kind().to_string(), str::to_string),
                    };
                    return Err(self.unreachable(detail));
                }
            };
            let v: Value = serde_json::from_reader(response.into_reader()).map_err(|e| {
                ClientError::Protocol(format!("{}: answer is not JSON: {e}", self.endpoint))
            })?;
            return response_of(v);
        }
        if let Some(Transport::Ws(ws)) = self.transport.as_mut() {
            // A notification wait may have left a read timeout behind; a call waits as long
            // as the node takes.
            ws.get_mut()
                .set_read_timeout(None)
                .map_err(|e| self.unreachable(e))?;
        }
        self.send(request)?;
        loop {
            let Some(message) = self.receive()? else {
                continue;
            };
            if is_notification(&message) {
                self.pending.push_back(message);
                continue;
            }
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                return response_of(message);
            }
            // A late answer to an earlier call, or a batch nobody asked for: not ours.
        }
    }

    fn send(&mut self, text: &str) -> Result<(), ClientError> {
        let result = match self.transport.as_mut() {
            Some(Transport::Ws(ws)) => ws_send_wiped(ws, text).map(|_| ()),
            Some(Transport::Ipc(r)) => {
                let s = r.get_mut();
                s.write_all(text.as_bytes())
                    .and_then(|()| s.write_all(b"\n"))
                    .and_then(|()| s.flush())
                    .map_err(|e| e.to_string())
            }
            _ => Err("not connected".to_string()),
        };
        result.map_err(|e| self.unreachable(e))
    }

    /// Reads the next JSON message from a stream transport, blocking; `Ok(None)` when a read
    /// timeout set by [`Client::wait_readable`] expired first.
    fn receive(&mut self) -> Result<Option<Value>, ClientError> {
        let endpoint = self.endpoint.clone();
        let broke = |detail: String| ClientError::Unreachable {
            endpoint: endpoint.clone(),
            detail,
        };
        match self.transport.as_mut() {
            Some(Transport::Ws(ws)) => loop {
                match ws.read() {
                    Ok(tungstenite::Message::Text(t)) => {
                        return serde_json::from_str(t.as_str()).map(Some).map_err(|e| {
                            ClientError::Protocol(format!("{endpoint}: answer is not JSON: {e}"))
                        })
                    }
                    Ok(tungstenite::Message::Binary(b)) => {
                        return serde_json::from_slice(&b).map(Some).map_err(|e| {
                            ClientError::Protocol(format!("{endpoint}: answer is not JSON: {e}"))
                        })
                    }
                    Ok(tungstenite::Message::Close(_)) => {
                        return Err(broke("the node closed the connection".into()))
                    }
                    // Pings are answered by tungstenite itself.
                    Ok(_) => continue,
                    // A read timeout, or a signal (ctrl-c) during a read with a timeout,
                    // which the kernel never restarts: the caller looks again. tungstenite
                    // resumes a frame after either.
                    Err(tungstenite::Error::Io(e))
                        if matches!(
                            e.kind(),
                            io::ErrorKind::WouldBlock
                                | io::ErrorKind::TimedOut
                                | io::ErrorKind::Interrupted
                        ) =>
                    {
                        return Ok(None)
                    }
                    Err(e) => return Err(broke(e.to_string())),
                }
            },
            Some(Transport::Ipc(r)) => {
                let mut de = serde_json::Deserializer::from_reader(r);
                Value::deserialize(&mut de).map(Some).map_err(|e| {
                    if e.is_eof() {
                        broke("the node closed the connection".into())
                    } else if e.is_io() {
                        broke(e.to_string())
                    } else {
                        ClientError::Protocol(format!("{endpoint}: answer is not JSON: {e}"))
                    }
                })
            }
            _ => Err(broke("not connected".into())),
        }
    }

    /// The next subscription notification (the whole message, `params` holding `subscription`
    /// and `result`), waiting at most `timeout`; `Ok(None)` when none arrived in time. Only
    /// WebSocket and IPC carry notifications; on HTTP this is a [`ClientError::Protocol`].
    pub fn next_notification(&mut self, timeout: Duration) -> Result<Option<Value>, ClientError> {
        if let Some(n) = self.pending.pop_front() {
            return Ok(Some(n));
        }
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if !self.wait_readable(left)? {
                return Ok(None);
            }
            let message = match self.receive() {
                Ok(Some(m)) => m,
                Ok(None) => return Ok(None),
                Err(e) => {
                    self.transport = None;
                    return Err(e);
                }
            };
            if is_notification(&message) {
                return Ok(Some(message));
            }
        }
    }

    /// Whether a message can be read within `timeout`. For IPC this polls the socket (bytes
    /// already buffered count); for WebSocket it sets a read timeout that `receive` then meets,
    /// since tungstenite resumes a frame after a timed-out read.
    fn wait_readable(&mut self, timeout: Duration) -> Result<bool, ClientError> {
        match self.transport.as_mut() {
            Some(Transport::Ipc(r)) => {
                let deadline = Instant::now() + timeout;
                let endpoint = &self.endpoint;
                let broke = |e: io::Error| ClientError::Unreachable {
                    endpoint: endpoint.clone(),
                    detail: e.to_string(),
                };
                loop {
                    // The newline after the last value is no message: waiting on it would
                    // block until the next real one.
                    let blank = r
                        .buffer()
                        .iter()
                        .take_while(|b| b.is_ascii_whitespace())
                        .count();
                    r.consume(blank);
                    if !r.buffer().is_empty() {
                        return Ok(true);
                    }
                    let left = deadline.saturating_duration_since(Instant::now());
                    let mut fds = libc::pollfd {
                        fd: r.get_ref().as_raw_fd(),
                        events: libc::POLLIN,
                        revents: 0,
                    };
                    let ms = left.as_millis().min(i32::MAX as u128) as i32;
                    // SAFETY: one valid pollfd for the duration of the call.
                    let n = unsafe { libc::poll(&mut fds, 1, ms) };
                    if n < 0 {
                        let e = io::Error::last_os_error();
                        if e.kind() == io::ErrorKind::Interrupted {
                            continue;
                        }
                        return Err(broke(e));
                    }
                    if n == 0 {
                        return Ok(false);
                    }
                    // Readable: this read does not block. End of stream is for receive() to
                    // report.
                    if r.fill_buf().map_err(broke)?.is_empty() {
                        return Ok(true);
                    }
                }
            }
            Some(Transport::Ws(ws)) => {
                let t = if timeout.is_zero() {
                    Duration::from_millis(1)
                } else {
                    timeout
                };
                ws.get_mut()
                    .set_read_timeout(Some(t))
                    .map_err(|e| self.unreachable(e))?;
                Ok(true)
            }
            Some(Transport::Http { .. }) => Err(ClientError::Protocol(
                "notifications need a WebSocket or IPC endpoint, not HTTP".into(),
            )),
            None => Err(self.unreachable("not connected")),
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Some(Transport::Ws(ws)) = self.transport.as_mut() {
            let _ = ws.close(None);
            let _ = ws.flush();
        }
    }
}

/// The JSON text of a call, in a buffer allocated once at its final size (a buffer grown on
/// the way would leave copies of its start behind, unwiped). The strings of `params` are
/// zeroized before this returns.
fn request_text(id: u64, method: &str, params: Vec<Value>) -> Zeroizing<String> {
    let mut envelope = serde_json::Map::new();
    envelope.insert("jsonrpc".into(), "2.0".into());
    envelope.insert("id".into(), id.into());
    envelope.insert("method".into(), method.into());
    // Moved in, not serialized into a copy as `json!` would.
    envelope.insert("params".into(), Value::Array(params));
    let mut envelope = Value::Object(envelope);
    let mut size = Counter(0);
    serde_json::to_writer(&mut size, &envelope).expect("a JSON value serializes");
    let mut text = Vec::with_capacity(size.0);
    serde_json::to_writer(&mut text, &envelope).expect("a JSON value serializes");
    wipe(&mut envelope);
    Zeroizing::new(String::from_utf8(text).expect("serde_json writes UTF-8"))
}

/// An `io::Write` that only counts the bytes written to it.
struct Counter(usize);

impl Write for Counter {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Sends `text` as one text message, then zeroizes the message's own copy of it, which
/// tungstenite has let go of by then (it keeps only the masked frame in its write buffer).
/// Returns whether that copy was wiped.
fn ws_send_wiped(ws: &mut tungstenite::WebSocket<TcpStream>, text: &str) -> Result<bool, String> {
    let copy = tungstenite::Bytes::from(text.as_bytes().to_vec());
    let message = tungstenite::Utf8Bytes::try_from(copy.clone()).expect("a str is UTF-8");
    // The error is turned into text first: it may hold the message.
    let sent = ws
        .send(tungstenite::Message::Text(message))
        .map_err(|e| e.to_string());
    let wiped = match copy.try_into_mut() {
        Ok(mut b) => {
            b.as_mut().zeroize();
            true
        }
        Err(_) => false,
    };
    sent.map(|()| wiped)
}

/// Zeroizes every string inside `v`.
fn wipe(v: &mut Value) {
    match v {
        Value::String(s) => s.zeroize(),
        Value::Array(a) => a.iter_mut().for_each(wipe),
        Value::Object(o) => o.values_mut().for_each(wipe),
        _ => {}
    }
}

/// A message with a `method` and no `id`.
fn is_notification(v: &Value) -> bool {
    v.get("method").is_some() && v.get("id").is_none()
}

/// The `result` of a response, or its `error` as [`ClientError::Rpc`].
fn response_of(v: Value) -> Result<Value, ClientError> {
    let Value::Object(mut obj) = v else {
        return Err(ClientError::Protocol(format!(
            "answer is not a JSON-RPC response: {v}"
        )));
    };
    if let Some(err) = obj.remove("error") {
        let code = err.get("code").and_then(Value::as_i64);
        let message = err.get("message").and_then(Value::as_str);
        return match (code, message) {
            (Some(code), Some(message)) => Err(ClientError::Rpc {
                code,
                message: message.to_string(),
                data: err.get("data").cloned(),
            }),
            _ => Err(ClientError::Protocol(format!(
                "malformed error object: {err}"
            ))),
        };
    }
    obj.remove("result").ok_or_else(|| {
        ClientError::Protocol(format!(
            "response without result or error: {}",
            Value::Object(obj)
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::os::unix::net::UnixListener;

    #[test]
    fn local_endpoints() {
        for local in [
            "/tmp/x/chaind.ipc",
            "chaind.ipc",
            "http://localhost:8551",
            "http://LOCALHOST",
            "http://127.0.0.1:8551/",
            "ws://127.0.0.2:1",
            "ws://[::1]:8552",
            "http://u:p@127.0.0.1:1",
        ] {
            assert!(is_local(local), "{local}");
        }
        for remote in [
            "http://10.0.0.1:8551",
            "ws://node.example:8552",
            "http://[fe80::1]:1",
            "http://0.0.0.0:8551",
        ] {
            assert!(!is_local(remote), "{remote}");
        }
    }

    #[test]
    fn endpoint_kinds() {
        assert_eq!(endpoint_kind("http://127.0.0.1:8551"), EndpointKind::Http);
        assert_eq!(endpoint_kind("HTTPS://example.org"), EndpointKind::Http);
        assert_eq!(endpoint_kind("ws://localhost:8552"), EndpointKind::Ws);
        assert_eq!(endpoint_kind("/tmp/x/chaind.ipc"), EndpointKind::Ipc);
        assert_eq!(endpoint_kind("chaind.ipc"), EndpointKind::Ipc);
    }

    #[test]
    fn responses_and_errors() {
        assert_eq!(
            response_of(json!({"jsonrpc":"2.0","id":1,"result":null})).unwrap(),
            Value::Null
        );
        match response_of(json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope"}}))
        {
            Err(ClientError::Rpc {
                code,
                message,
                data: None,
            }) => assert_eq!((code, message.as_str()), (-32601, "nope")),
            other => panic!("{other:?}"),
        }
        let e = response_of(json!({"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"nope","data":"no such method"}})).unwrap_err();
        assert_eq!(e.to_string(), "error -32601: nope\n  data: no such method");
        let e = response_of(json!({"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"execution reverted","data":{"a":1}}})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "error 3: execution reverted\n  data: {\"a\":1}"
        );
        assert!(matches!(
            response_of(json!({"id":1})),
            Err(ClientError::Protocol(_))
        ));
        assert!(matches!(
            response_of(json!([1])),
            Err(ClientError::Protocol(_))
        ));
        let e = ClientError::Rpc {
            code: -32000,
            message: "x".into(),
            data: None,
        };
        assert_eq!(e.to_string(), "error -32000: x");
    }

    #[test]
    fn request_text_is_sized_once_and_params_are_moved_in() {
        let params = vec![
            json!("secret \"pass\""),
            json!({"k": ["x", 1]}),
            Value::Null,
        ];
        let text = request_text(7, "personal_unlockAccount", params.clone());
        let want = json!({"jsonrpc": "2.0", "id": 7, "method": "personal_unlockAccount", "params": params});
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), want);
        assert_eq!(
            text.capacity(),
            text.len(),
            "no grown-out copies left behind"
        );
        let mut v = want;
        wipe(&mut v);
        assert_eq!(v["params"], json!(["", {"k": ["", 1]}, null]));
    }

    /// The WebSocket message buffer is released by tungstenite once sent, so it is wiped.
    #[test]
    fn ws_message_buffer_is_wiped_after_sending() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = std::thread::spawn(move || {
            let (s, _) = listener.accept().unwrap();
            let mut ws = tungstenite::accept(s).unwrap();
            let mut got = Vec::new();
            for _ in 0..2 {
                got.push(ws.read().unwrap().into_text().unwrap().to_string());
            }
            got
        });
        let stream = TcpStream::connect(addr).unwrap();
        let (mut ws, _) = tungstenite::client(format!("ws://{addr}/"), stream).unwrap();
        let text = request_text(1, "personal_unlockAccount", vec![json!("pass")]);
        assert_eq!(ws_send_wiped(&mut ws, &text), Ok(true));
        assert_eq!(ws_send_wiped(&mut ws, "second"), Ok(true));
        assert_eq!(
            peer.join().unwrap(),
            [text.to_string(), "second".to_string()]
        );
    }

    #[test]
    fn ipc_missing_socket_is_unreachable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("none.ipc");
        match Client::connect(path.to_str().unwrap()) {
            Err(ClientError::Unreachable { endpoint, .. }) => {
                assert_eq!(endpoint, path.to_str().unwrap())
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refused_http_and_ws_are_unreachable() {
        // A port that was free a moment ago: bind, learn it, close.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let http = format!("http://127.0.0.1:{port}");
        let mut c = Client::connect(&http).unwrap();
        match c.call("rpc_modules", vec![]) {
            Err(ClientError::Unreachable { endpoint, .. }) => assert_eq!(endpoint, http),
            other => panic!("{other:?}"),
        }
        let ws = format!("ws://127.0.0.1:{port}");
        assert!(matches!(
            Client::connect(&ws),
            Err(ClientError::Unreachable { .. })
        ));
    }

    /// A scripted IPC peer: answers each request after sending a notification and a stale
    /// response, so the client must match by id and keep the notification.
    #[test]
    fn ipc_matches_by_id_and_keeps_notifications() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.ipc");
        let listener = UnixListener::bind(&path).unwrap();
        let server = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut reader =
                serde_json::Deserializer::from_reader(s.try_clone().unwrap()).into_iter::<Value>();
            let mut seen = Vec::new();
            for _ in 0..2 {
                let req = reader.next().unwrap().unwrap();
                let id = req["id"].clone();
                seen.push(req.clone());
                let note = json!({"jsonrpc":"2.0","method":"chain_subscription","params":{"subscription":"0x1","result":id}});
                let stale = json!({"jsonrpc":"2.0","id":999,"result":"stale"});
                // Written in pieces, to exercise reads of a value split across packets.
                let answer = format!(
                    "{note}\n{stale}{}",
                    json!({"jsonrpc":"2.0","id":id,"result":{"echo":req["params"]}})
                );
                let (a, b) = answer.split_at(answer.len() / 2);
                s.write_all(a.as_bytes()).unwrap();
                s.flush().unwrap();
                std::thread::sleep(Duration::from_millis(20));
                s.write_all(b.as_bytes()).unwrap();
            }
            s.write_all(
                json!({"jsonrpc":"2.0","method":"late","params":{}})
                    .to_string()
                    .as_bytes(),
            )
            .unwrap();
            seen
        });
        let mut c = Client::connect(path.to_str().unwrap()).unwrap();
        assert_eq!(c.call("a_b", vec![json!(1)]).unwrap(), json!({"echo":[1]}));
        assert_eq!(
            c.call("a_c", vec![json!("x"), Value::Null]).unwrap(),
            json!({"echo":["x",null]})
        );
        let seen = server.join().unwrap();
        assert_eq!(seen[0]["id"], json!(1));
        assert_eq!(seen[1]["id"], json!(2));
        assert_eq!(seen[1]["method"], json!("a_c"));
        assert_eq!(seen[1]["jsonrpc"], json!("2.0"));
        let n1 = c
            .next_notification(Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert_eq!(n1["params"]["result"], json!(1));
        let n2 = c
            .next_notification(Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert_eq!(n2["params"]["result"], json!(2));
        let n3 = c
            .next_notification(Duration::from_secs(5))
            .unwrap()
            .unwrap();
        assert_eq!(n3["method"], json!("late"));
        // The peer has hung up: the next wait reports the broken connection or nothing.
        match c.next_notification(Duration::from_millis(200)) {
            Ok(None) | Err(ClientError::Unreachable { .. }) => {}
            other => panic!("{other:?}"),
        }
    }

    /// The node ends each message with a newline; that newline alone must not make a
    /// notification wait block.
    #[test]
    fn ipc_notification_wait_ignores_the_trailing_newline() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nl.ipc");
        let listener = UnixListener::bind(&path).unwrap();
        let peer = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut reader =
                serde_json::Deserializer::from_reader(s.try_clone().unwrap()).into_iter::<Value>();
            for _ in 0..2 {
                let req = reader.next().unwrap().unwrap();
                s.write_all(
                    format!(
                        "{}\n",
                        json!({"jsonrpc":"2.0","id":req["id"],"result":"0xab"})
                    )
                    .as_bytes(),
                )
                .unwrap();
            }
            // Hold the connection until the client is done.
            let _ = reader.next();
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let p = path.clone();
        std::thread::spawn(move || {
            let mut c = Client::connect(p.to_str().unwrap()).unwrap();
            let first = c.call("chain_subscribe", vec![json!("newHeads")]).unwrap();
            let waited = c.next_notification(Duration::from_millis(50)).unwrap();
            let second = c.call("rpc_modules", vec![]).unwrap();
            tx.send((first, waited, second)).unwrap();
        });
        let (first, waited, second) = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the client hung");
        assert_eq!(
            (first, waited, second),
            (json!("0xab"), None, json!("0xab"))
        );
        peer.join().unwrap();
    }

    #[test]
    fn ipc_notification_wait_times_out() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("quiet.ipc");
        let listener = UnixListener::bind(&path).unwrap();
        let mut c = Client::connect(path.to_str().unwrap()).unwrap();
        let (_peer, _) = listener.accept().unwrap();
        assert!(c
            .next_notification(Duration::from_millis(50))
            .unwrap()
            .is_none());
    }
}
