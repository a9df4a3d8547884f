//! The WebSocket transport: a TCP listener that only serves WebSocket upgrades (any path),
//! one JSON-RPC request per data message.
//!
//! The gate (`rpc::gate`) holds a new connection, without a thread, until its upgrade
//! request is whole; then the connection gets a thread of its own (`ws-conn`), which owns
//! its socket. Notifications wait in an outbox bounded in bytes; a client that lets 4 MiB
//! pile up is cut off. The thread waits in `poll(2)` on the socket and on a
//! waker that the connection's notification sink pokes, so notifications go out as soon
//! as they are published and an idle connection costs no CPU. Requests of one connection are
//! handled one after the other, in order, on that thread (the reference may answer out of
//! order; clients match by id either way). Notifications wait while a request runs.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::value::RawValue;
use tungstenite::error::ProtocolError;
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::handshake::HandshakeError;
use tungstenite::http::{HeaderValue, StatusCode};
use tungstenite::protocol::frame::coding::CloseCode;
use tungstenite::protocol::{CloseFrame, WebSocketConfig};
use tungstenite::{Message, WebSocket};

use zeroize::Zeroizing;

use super::conns::{wait_readable, ConnTable, Entry, Waker};
use super::endpoint::{bind_address, listen_error, Endpoint, WsConfig};
use super::error::RpcError;
use super::gate::{Conn, Door, Gate, GateConfig};
use super::outbox::{Outbox, OUTBOX_LIMIT};
use super::pubsub::Connection;
use super::server::{error_response, too_deep, Dispatcher, NestingScanner};
use super::wipe::consume;

/// How long a client may take to send its upgrade request.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one write may block before the connection is dropped (the reference's 10 s).
pub(super) const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections in their handshake (held by the gate, without a thread) beyond the cap of
/// upgraded ones; past that, new TCP connections are answered 503 and closed.
const MAX_HANDSHAKES: usize = 4096;
/// After we close a connection, how long we keep reading (and discarding) what the client
/// still sends, so the kernel does not answer it with a reset that could swallow our reply.
const LINGER: Duration = Duration::from_secs(1);
/// How long `stop` lets connections send their close frame before shutting the sockets.
const STOP_GRACE: Duration = Duration::from_millis(500);

/// A running WebSocket endpoint.
pub struct WsServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    gate: Arc<Gate>,
}

struct Shared {
    dispatcher: Dispatcher,
    /// Lower-cased allowed `Origin` values (`*` allows any).
    origins: Vec<String>,
    max_connections: usize,
    config: WebSocketConfig,
    stopping: AtomicBool,
    /// Upgraded connections (what `max_connections` caps).
    upgraded: AtomicUsize,
    /// Every connection thread, handshaking or upgraded, with what `stop` needs to end it.
    conns: Arc<ConnTable<(Arc<TcpStream>, Arc<Waker>)>>,
}

impl Shared {
    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }
}

impl WsServer {
    /// Binds `cfg.host:cfg.port` and starts accepting connections. Fails when the address
    /// does not resolve or cannot be bound, or a thread cannot be started.
    pub fn start(cfg: &WsConfig, dispatcher: Dispatcher) -> io::Result<WsServer> {
        let at = bind_address(&cfg.host, cfg.port)?;
        let listener = TcpListener::bind(at).map_err(|e| listen_error(at, e))?;
        let addr = listener.local_addr()?;
        let limit = dispatcher.limits().max_request_bytes;
        let config = WebSocketConfig::default()
            .max_message_size(Some(limit))
            .max_frame_size(Some(limit));
        let shared = Arc::new(Shared {
            dispatcher,
            origins: allowed_origins(&cfg.origins),
            max_connections: cfg.max_connections,
            config,
            stopping: AtomicBool::new(false),
            upgraded: AtomicUsize::new(0),
            conns: Arc::new(ConnTable::default()),
        });
        let gate = Gate::start(
            listener,
            GateConfig {
                name: "ws",
                max_connections: cfg.max_connections.saturating_add(MAX_HANDSHAKES),
                request_timeout: HANDSHAKE_TIMEOUT,
                idle_timeout: HANDSHAKE_TIMEOUT,
            },
            WsDoor {
                shared: shared.clone(),
            },
        )?;
        Ok(WsServer { addr, shared, gate })
    }

    /// The address bound (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Closes the listener and every connection (upgraded ones get a 1001 close frame if
    /// they can take it within half a second) and joins the threads.
    pub fn stop(self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        self.gate.stop();
        // The gate is gone, so no entry is added from here on.
        let conns = &self.shared.conns;
        conns.for_each(|(_, waker)| waker.wake());
        let deadline = Instant::now() + STOP_GRACE;
        while conns.others() > 0 && Instant::now() < deadline {
            thread::sleep(Duration::from_millis(5));
        }
        conns.end_all(|(stream, _)| {
            let _ = stream.shutdown(Shutdown::Both);
        });
    }
}

impl Endpoint for WsServer {
    /// `ws://<ip>:<port>`.
    fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }

    fn stop(self: Box<Self>) {
        WsServer::stop(*self)
    }
}

/// The allow-list as compared: lower-cased; the defaults when empty.
fn allowed_origins(configured: &[String]) -> Vec<String> {
    if configured.is_empty() {
        let mut v = vec!["http://localhost".to_string()];
        if let Some(h) = hostname() {
            v.push(format!("http://{}", h.to_lowercase()));
        }
        return v;
    }
    configured.iter().map(|o| o.trim().to_lowercase()).collect()
}

fn hostname() -> Option<String> {
    let mut buf = [0u8; 256];
    // SAFETY: the buffer is valid for `buf.len()` bytes; gethostname writes at most that many.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if r != 0 {
        return None;
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8(buf[..end].to_vec())
        .ok()
        .filter(|h| !h.is_empty())
}

/// A request without `Origin` (or with an empty one) is not from a browser and passes.
fn origin_allowed(allowed: &[String], origin: Option<&HeaderValue>) -> bool {
    let Some(origin) = origin else { return true };
    let Ok(origin) = origin.to_str() else {
        return false;
    };
    if origin.is_empty() {
        return true;
    }
    let origin = origin.to_lowercase();
    allowed.iter().any(|a| a == "*" || *a == origin)
}

/// What the gate asks of WebSocket: an upgrade request is whole at its blank line.
struct WsDoor {
    shared: Arc<Shared>,
}

impl Door for WsDoor {
    fn ready(&self, buf: &[u8]) -> bool {
        let mut slots = [httparse::EMPTY_HEADER; 64];
        // Complete, or already refused (the handshake answers it).
        !matches!(
            httparse::Request::new(&mut slots).parse(buf),
            Ok(httparse::Status::Partial)
        )
    }

    fn deliver(&mut self, conn: Conn) {
        let Ok(waker) = Waker::new() else {
            return; // dropping the connection closes it
        };
        let shared = &self.shared;
        let (stream, buf, slot) = conn.into_parts();
        let (stream, waker) = (Arc::new(stream), Arc::new(waker));
        let max = shared.max_connections.saturating_add(MAX_HANDSHAKES);
        let handle = (stream.clone(), waker.clone());
        let s = shared.clone();
        // Refused (no thread): dropping the handle closes the socket.
        let _ = shared.conns.spawn("ws-conn", max, handle, move |entry| {
            let _slot = slot;
            connection(entry, Sock::new(stream, buf), s, waker)
        });
    }

    fn busy(&self) -> &[u8] {
        b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    }

    /// A handshake that does not finish in time is closed without a word.
    fn too_slow(&self) -> &[u8] {
        b""
    }
}

/// Releases an upgraded connection's place under the cap.
struct Slot<'a>(&'a AtomicUsize);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// How a handshake ended without an upgrade.
enum Refused {
    /// The connection cap is reached: `200` with an empty body, as the reference answers.
    Full,
    /// The answer was already written (403 for a refused origin).
    Answered,
    /// Not a WebSocket upgrade request.
    Status(u16, &'static str),
    /// The client went away or was too slow: nothing to answer.
    Silent,
}

fn connection(
    _entry: Entry<(Arc<TcpStream>, Arc<Waker>)>,
    sock: Sock,
    shared: Arc<Shared>,
    waker: Arc<Waker>,
) {
    let stream = sock.stream.clone();
    let _ = stream.set_nodelay(true);
    let _ = stream.set_nonblocking(false); // the gate's sockets were non-blocking
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let ws = match handshake(sock, &shared, &waker) {
        Ok(ws) => ws,
        Err(refused) => {
            let answer = match refused {
                Refused::Full => Some(
                    "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                ),
                Refused::Status(code, text) => Some(format!(
                    "HTTP/1.1 {code} {text}\r\nContent-Type: text/plain; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                )),
                Refused::Answered | Refused::Silent => None,
            };
            if let Some(a) = answer {
                let _ = (&*stream).write_all(a.as_bytes());
            }
            if !matches!(refused, Refused::Silent) {
                linger(&stream, &shared, &waker);
            }
            return;
        }
    };
    let _slot = Slot(&shared.upgraded);
    let outbox = Arc::new(Outbox::new(OUTBOX_LIMIT, OUTBOX_LIMIT));
    let sink = outbox.clone();
    let sink_waker = waker.clone();
    let sink_stream = stream.clone();
    let conn = Connection::new(move |m| {
        // A client that lets notifications pile up past the outbox's bytes is cut off
        // rather than allowed to grow the node's memory.
        let ok = sink.offer(m);
        if !ok {
            let _ = sink_stream.shutdown(Shutdown::Both);
        }
        sink_waker.wake();
        ok
    });
    let close = serve(ws, &conn, &outbox, &shared, &waker);
    outbox.close();
    conn.close();
    if close == Closed::ByUs {
        linger(&stream, &shared, &waker);
    }
    let _ = stream.shutdown(Shutdown::Both);
}

/// Runs the upgrade, checking the cap and the origin in tungstenite's callback.
fn handshake(sock: Sock, shared: &Shared, waker: &Waker) -> Result<WebSocket<Sock>, Refused> {
    let fd = sock.stream.as_raw_fd();
    let deadline = Instant::now() + HANDSHAKE_TIMEOUT;
    let took_slot = AtomicBool::new(false);
    #[allow(clippy::result_large_err)] // the type is tungstenite's
    let callback = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let max = shared.max_connections;
        let slot = shared
            .upgraded
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| {
                (n < max).then_some(n + 1)
            });
        if slot.is_err() {
            // tungstenite refuses to write a success status itself; `connection` writes it.
            let mut r = ErrorResponse::new(None);
            *r.status_mut() = StatusCode::OK;
            return Err(r);
        }
        took_slot.store(true, Ordering::SeqCst);
        if !origin_allowed(&shared.origins, req.headers().get("Origin")) {
            shared.upgraded.fetch_sub(1, Ordering::SeqCst);
            took_slot.store(false, Ordering::SeqCst);
            let body = "Forbidden";
            let mut r = ErrorResponse::new(Some(body.to_string()));
            *r.status_mut() = StatusCode::FORBIDDEN;
            let h = r.headers_mut();
            h.insert(
                "Content-Type",
                HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            h.insert("Content-Length", HeaderValue::from(body.len()));
            h.insert("Connection", HeaderValue::from_static("close"));
            return Err(r);
        }
        Ok(resp)
    };
    let mut result = tungstenite::accept_hdr_with_config(sock, callback, Some(shared.config));
    let refused = loop {
        match result {
            Ok(ws) => return Ok(ws),
            Err(HandshakeError::Interrupted(mid)) => {
                let now = Instant::now();
                if shared.stopping() || now >= deadline {
                    break Refused::Silent;
                }
                let _ = wait_readable(&[fd, waker.fd()], Some(deadline - now));
                waker.drain();
                result = mid.handshake();
            }
            Err(HandshakeError::Failure(e)) => break refusal(e),
        }
    };
    // The slot was taken but the 101 response could not be written.
    if took_slot.load(Ordering::SeqCst) {
        shared.upgraded.fetch_sub(1, Ordering::SeqCst);
    }
    Err(refused)
}

fn refusal(e: tungstenite::Error) -> Refused {
    use tungstenite::Error as E;
    match e {
        E::Http(_) => Refused::Answered,
        E::Protocol(ProtocolError::CustomResponseSuccessful) => Refused::Full,
        E::Protocol(ProtocolError::WrongHttpMethod) => Refused::Status(405, "Method Not Allowed"),
        E::Io(_)
        | E::ConnectionClosed
        | E::AlreadyClosed
        | E::Protocol(ProtocolError::HandshakeIncomplete) => Refused::Silent,
        _ => Refused::Status(400, "Bad Request"),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum Closed {
    /// The client closed, the socket failed, or the server is stopping.
    Done,
    /// We sent a close frame because of what the client sent.
    ByUs,
}

/// The message loop of one upgraded connection.
fn serve(
    mut ws: WebSocket<Sock>,
    conn: &Arc<Connection>,
    outgoing: &Outbox,
    shared: &Shared,
    waker: &Waker,
) -> Closed {
    let fd = ws.get_ref().stream.as_raw_fd();
    loop {
        if shared.stopping() {
            let _ = ws.close(Some(close_frame(CloseCode::Away, "server stopping")));
            return Closed::Done;
        }
        // Notifications first: what was queued before a request was read goes out before
        // that request's reply. None once the client has sent its close frame.
        while ws.can_write() {
            match outgoing.try_take() {
                Some(mut m) => {
                    m.push('\n');
                    if ws.write(Message::text(m)).is_err() {
                        return Closed::Done;
                    }
                }
                None if outgoing.is_closed() => return Closed::Done,
                None => break,
            }
        }
        // Also writes queued pong and close replies; after the client's close frame has
        // been answered this ends the connection.
        if ws.flush().is_err() {
            return Closed::Done;
        }
        let data = match ws.read() {
            Ok(Message::Text(t)) => t.into(),
            Ok(Message::Binary(b)) => b,
            Ok(_) => continue, // ping, pong, close: tungstenite queued the replies
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                let _ = wait_readable(&[fd, waker.fd()], None);
                waker.drain();
                continue;
            }
            Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(tungstenite::Error::Capacity(_)) => {
                let _ = ws.close(Some(close_frame(CloseCode::Size, "message too big")));
                return Closed::ByUs;
            }
            Err(_) => return Closed::Done,
        };
        let first = serde_json::Deserializer::from_slice(&data)
            .into_iter::<&RawValue>()
            .next();
        match first {
            // Answered and closed as IPC does (its decoder refuses the same value).
            Some(Ok(raw)) if !NestingScanner::within_limit(raw.get().as_bytes()) => {
                let mut reply = error_response(too_deep());
                reply.push('\n');
                let _ = ws.send(Message::text(reply));
                let _ = ws.close(Some(close_frame(
                    CloseCode::Invalid,
                    "JSON nested too deep",
                )));
                return Closed::ByUs;
            }
            Some(Ok(raw)) => {
                if let Some(mut reply) = shared.dispatcher.handle_within_limit(raw, Some(conn)) {
                    reply.push('\n');
                    if ws.send(Message::text(reply)).is_err() {
                        return Closed::Done;
                    }
                }
                conn.activate();
            }
            Some(Err(e)) if e.is_syntax() => {
                let mut reply = error_response(RpcError::parse(e.to_string()));
                reply.push('\n');
                let _ = ws.send(Message::text(reply));
                let _ = ws.close(Some(close_frame(CloseCode::Invalid, "invalid JSON")));
                return Closed::ByUs;
            }
            // Empty, or a value cut short: closed without a reply, as the reference does.
            _ => {
                let _ = ws.close(Some(close_frame(CloseCode::Invalid, "incomplete JSON")));
                return Closed::ByUs;
            }
        }
    }
}

fn close_frame(code: CloseCode, reason: &'static str) -> CloseFrame {
    CloseFrame {
        code,
        reason: reason.into(),
    }
}

/// Half-closes a connection we are ending and discards what the client still sends, for at
/// most [`LINGER`] or until it closes too, so that what we wrote last is not lost to a reset.
fn linger(stream: &TcpStream, shared: &Shared, waker: &Waker) {
    let _ = stream.shutdown(Shutdown::Write);
    let deadline = Instant::now() + LINGER;
    let mut buf = [0u8; 16 * 1024];
    while !shared.stopping() {
        match recv_nonblocking(stream, &mut buf) {
            Ok(0) => return,
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let now = Instant::now();
                if now >= deadline {
                    return;
                }
                let _ = wait_readable(&[stream.as_raw_fd(), waker.fd()], Some(deadline - now));
                waker.drain();
            }
            Err(_) => return,
        }
    }
}

/// `recv` that returns `WouldBlock` instead of waiting, whatever the socket's mode.
fn recv_nonblocking(stream: &TcpStream, buf: &mut [u8]) -> io::Result<usize> {
    loop {
        // SAFETY: `buf` is valid for writes of `buf.len()` bytes; the descriptor is open.
        let n = unsafe {
            libc::recv(
                stream.as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                libc::MSG_DONTWAIT,
            )
        };
        if n >= 0 {
            return Ok(n as usize);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A TCP stream whose reads never block (`MSG_DONTWAIT`) and whose writes do (bounded by
/// [`WRITE_TIMEOUT`]): the connection thread waits for input in `poll`, not in `read`. What
/// the gate read before the handshake is read first (and wiped once read).
struct Sock {
    stream: Arc<TcpStream>,
    read_first: Zeroizing<Vec<u8>>,
}

impl Sock {
    fn new(stream: Arc<TcpStream>, read_first: Zeroizing<Vec<u8>>) -> Sock {
        Sock { stream, read_first }
    }
}

impl Read for Sock {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if !self.read_first.is_empty() {
            let n = buf.len().min(self.read_first.len());
            buf[..n].copy_from_slice(&self.read_first[..n]);
            consume(&mut self.read_first, n);
            return Ok(n);
        }
        recv_nonblocking(&self.stream, buf)
    }
}

impl Write for Sock {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        (&*self.stream).write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        (&*self.stream).flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_compared_lower_cased_and_default_to_localhost() {
        let list = allowed_origins(&["HTTP://Example.org".into()]);
        let h = |s: &'static str| HeaderValue::from_static(s);
        assert!(origin_allowed(&list, None));
        assert!(origin_allowed(&list, Some(&h(""))));
        assert!(origin_allowed(&list, Some(&h("http://EXAMPLE.org"))));
        assert!(!origin_allowed(&list, Some(&h("http://example.org:80"))));
        assert!(origin_allowed(
            &allowed_origins(&["*".into()]),
            Some(&h("http://x"))
        ));
        let default = allowed_origins(&[]);
        assert_eq!(default[0], "http://localhost");
        assert!(origin_allowed(&default, Some(&h("http://LOCALHOST"))));
        assert!(!origin_allowed(&default, Some(&h("http://localhost:8080"))));
    }
}
