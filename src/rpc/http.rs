//! The HTTP transport (reference §1.7): a small HTTP/1.1 server on `std::net` that checks the
//! virtual host, applies CORS, enforces the request rules and hands each JSON-RPC body to the
//! [`Dispatcher`]. It moves bytes only; every JSON-RPC decision is the dispatcher's.
//!
//! Threads: one `http-accept` thread, and one `http-conn` thread per open connection (at most
//! [`HttpConfig::max_connections`]), which reads requests under deadlines, runs the call and writes the
//! response. The worker pool is a pool of `cfg.workers` permits: a connection thread takes one
//! only once a request has arrived in full, runs the call, and gives it back before writing
//! the response. So at most `cfg.workers` calls run at once, a slow or stalled client holds
//! its own connection thread but never a worker, and a call costs no hand-off to another
//! thread (on two cores the two context switches of a hand-off cost as much as the call). A
//! request (head and body) that takes longer than `cfg.body_timeout` is answered 408 and its
//! connection closed. Unlike the reference there is no execution timeout answering 503 while
//! a call runs on: every method here is bounded (scrypt's cost is capped by the key-file
//! parser).
//!
//! Why not `tiny_http`: release 0.12 drains an unread request body on drop into
//! `vec![0; remaining]`, sized by the client's `Content-Length`, so answering 413 to
//! `Content-Length: 1000000000000` aborts the whole process (tiny-http issue #252, PR #290). It
//! also has no socket timeouts and cannot close keep-alive connections when stopped.

use std::borrow::Cow;
use std::io::{self, BufRead, BufReader, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpListener, TcpStream};
use std::ops::Range;
use std::os::unix::io::AsRawFd;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::conns::{wait_readable, ConnTable, Waker};
use super::endpoint::{bind_address, Endpoint, HttpConfig};
use super::server::Dispatcher;

/// Most connections served at once by default ([`HttpConfig::max_connections`]); a connection
/// beyond this is answered 503 `server busy` and closed.
pub const MAX_CONNECTIONS: usize = 1024;
/// How long a keep-alive connection may sit idle between requests (the reference's idle timeout).
const IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// How long writing one response may take (the reference's write timeout).
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);
/// Largest request line plus headers (Go's default, which the reference uses).
const MAX_HEADER_BYTES: usize = 1 << 20;
/// Largest chunk-size line or trailer section of a chunked body.
const MAX_CHUNK_LINE: usize = 4096;
/// How long, and how much, a closing connection keeps reading what its client still sends.
const LINGER_TIME: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1 << 20;
/// How often a blocked thread looks at the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(50);
/// Media types a JSON-RPC request may declare.
const JSON_TYPES: [&str; 3] = [
    "application/json",
    "application/json-rpc",
    "application/jsonrequest",
];

/// A running HTTP JSON-RPC endpoint.
pub struct HttpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    acceptor: JoinHandle<()>,
    accept_waker: Arc<Waker>,
}

/// What every thread of one endpoint shares.
struct Shared {
    stop: AtomicBool,
    policy: Policy,
    dispatcher: Dispatcher,
    /// The worker pool: how many more calls may start now. Taken and returned with atomic
    /// operations; the mutex and condition variable only serve threads that must wait.
    permits: AtomicUsize,
    waiting: Mutex<()>,
    permit_freed: Condvar,
    max_connections: usize,
    /// Open connections: a handle on each socket (to shut it down on stop) and its thread.
    conns: Arc<ConnTable<Arc<TcpStream>>>,
}

/// The request rules of one endpoint.
struct Policy {
    /// Allowed virtual hosts, lower-cased.
    vhosts: Vec<String>,
    /// `None`: no CORS layer.
    cors: Option<Cors>,
    max_body: usize,
    body_timeout: Duration,
}

impl HttpServer {
    /// Binds `cfg.host:cfg.port` (port 0 picks a free port) and starts serving `dispatcher`.
    ///
    /// Fails when the host does not resolve, when threads cannot be started, or when the
    /// address cannot be bound; a bind failure reads like the reference's
    /// `listen tcp 127.0.0.1:8551: bind: address already in use` (the resolved address, then
    /// the system's error text) and keeps the error's kind.
    pub fn start(cfg: &HttpConfig, dispatcher: Dispatcher) -> io::Result<HttpServer> {
        let addr = bind_address(&cfg.host, cfg.port)?;
        let listener = TcpListener::bind(addr).map_err(|e| listen_error(addr, e))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            policy: Policy {
                vhosts: cfg.vhosts.iter().map(|v| v.to_lowercase()).collect(),
                cors: Cors::new(&cfg.cors),
                max_body: dispatcher.limits().max_request_bytes,
                body_timeout: cfg.body_timeout,
            },
            dispatcher,
            permits: AtomicUsize::new(cfg.workers.max(1)),
            waiting: Mutex::new(()),
            permit_freed: Condvar::new(),
            max_connections: cfg.max_connections.max(1),
            conns: Arc::new(ConnTable::default()),
        });
        let accept_waker = Arc::new(Waker::new()?);
        let (sh, waker) = (shared.clone(), accept_waker.clone());
        let acceptor = thread::Builder::new()
            .name("http-accept".into())
            .spawn(move || accept_loop(listener, &sh, &waker))?;
        Ok(HttpServer {
            addr: local,
            shared,
            acceptor,
            accept_waker,
        })
    }

    /// The address actually bound.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

impl Endpoint for HttpServer {
    /// `http://<ip>:<port>` of the bound address, e.g. `http://127.0.0.1:8551`.
    fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Closes the listener, shuts every other open connection (a request in progress there
    /// gets no answer), and joins their threads. Returns within a fraction of a second unless a call is running,
    /// which is waited for.
    fn stop(self: Box<Self>) {
        let HttpServer {
            shared,
            acceptor,
            accept_waker,
            ..
        } = *self;
        shared.stop.store(true, Ordering::SeqCst);
        accept_waker.wake();
        // The acceptor drops the listener when it ends; after that no connection is added.
        let _ = acceptor.join();
        // A connection may stop its own endpoint (`admin_stopHTTP` over HTTP): its thread is
        // this one, which writes its answer and then ends, seeing the stop flag.
        shared.conns.end_all(|stream| {
            let _ = stream.shutdown(Shutdown::Both);
        });
    }
}

/// Locks `m`, ignoring poisoning: no lock here guards an invariant a panic could break.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The reference's wording of a failed listen: `listen tcp <addr>: bind: <error text>`.
pub(crate) fn listen_error(addr: SocketAddr, e: io::Error) -> io::Error {
    let text = e.to_string();
    let text = text
        .find(" (os error")
        .map_or(text.as_str(), |i| &text[..i]);
    let mut chars = text.chars();
    let text: String = chars
        .next()
        .map(|c| c.to_lowercase().chain(chars).collect())
        .unwrap_or_default();
    io::Error::new(e.kind(), format!("listen tcp {addr}: bind: {text}"))
}

/// Accepts connections until stopped, one `http-conn` thread each.
fn accept_loop(listener: TcpListener, shared: &Arc<Shared>, waker: &Waker) {
    while !shared.stop.load(Ordering::SeqCst) {
        let stream = match listener.accept() {
            Ok((s, _)) => s,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let _ = wait_readable(&[listener.as_raw_fd(), waker.fd()], None);
                waker.drain();
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // Out of descriptors and the like: back off and keep the port open.
            Err(_) => {
                thread::sleep(POLL_INTERVAL);
                continue;
            }
        };
        if stream.set_nonblocking(false).is_err() {
            continue;
        }
        // One descriptor per connection: the table's handle (to shut it on stop) and the
        // connection thread share it.
        let stream = Arc::new(stream);
        let sh = shared.clone();
        let conn = stream.clone();
        let spawned =
            shared
                .conns
                .spawn("http-conn", shared.max_connections, stream, move |entry| {
                    let _entry = entry; // dropped last: the thread's place in the table
                    serve(conn, &sh);
                });
        if let Err(stream) = spawned {
            refuse(&stream);
        }
    }
}

/// Answers a connection over the limit without blocking the acceptor.
fn refuse(stream: &TcpStream) {
    let _ = stream.set_nonblocking(true);
    let mut stream = stream;
    let _ = stream.write_all(&Response::text(503, "server busy\n").render(false, Keep::Close));
}

// ---------------------------------------------------------------------------------------------
// One connection

/// Why a request got no normal answer.
enum Fail {
    /// The client went away or the server is stopping: close without writing.
    Gone,
    /// Write this and close the connection.
    Answer(Response),
}

fn timed_out() -> Fail {
    Fail::Answer(Response::text(408, "request timeout\n"))
}

fn bad_request(why: &str) -> Fail {
    Fail::Answer(Response::text(400, format!("bad request: {why}\n")))
}

/// How a response ends as far as the connection goes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keep {
    /// `Connection: close`, then close.
    Close,
    /// HTTP/1.1 keep-alive: nothing to say.
    Alive11,
    /// HTTP/1.0 keep-alive, which must be said.
    Alive10,
}

/// Serves requests on one connection until it closes, idles out, or the server stops.
fn serve(stream: Arc<TcpStream>, shared: &Shared) {
    let _ = stream.set_nodelay(true);
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let mut out: &TcpStream = &stream;
    let mut input = Input {
        reader: BufReader::new(SharedStream(stream.clone())),
        deadline: Instant::now(),
        slice: shared.policy.body_timeout,
        armed: None,
    };
    // A new connection gets the request timeout to start its first request, a kept-alive one
    // the idle timeout between requests (as Go's server, which the reference uses).
    let mut wait = shared.policy.body_timeout;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return;
        }
        input.deadline = Instant::now() + wait;
        wait = IDLE_TIMEOUT;
        match input.fill() {
            Ok(buf) if !buf.is_empty() => {}
            _ => return, // closed, or idle too long
        }
        input.deadline = Instant::now() + shared.policy.body_timeout;
        let (response, keep, head_only) = match read_head(&mut input) {
            Err(Fail::Gone) => return,
            Err(Fail::Answer(r)) => (r, Keep::Close, false),
            Ok(req) => match handle(&req, &mut input, shared) {
                Err(Fail::Gone) => return,
                Err(Fail::Answer(r)) => (r, Keep::Close, req.method() == "HEAD"),
                Ok((r, body_read)) => {
                    let keep = if !body_read {
                        Keep::Close
                    } else {
                        req.keep_alive()
                    };
                    (r, keep, req.method() == "HEAD")
                }
            },
        };
        if out.write_all(&response.render(head_only, keep)).is_err() {
            return;
        }
        if keep == Keep::Close {
            linger(&mut input, out);
            return;
        }
    }
}

/// Ends a connection gently: stops writing, then reads and drops what the client still sends
/// (an unread body) for a short while, because closing a socket with unread data resets the
/// connection, and the client may lose the response it has not read yet.
fn linger(input: &mut Input, out: &TcpStream) {
    let _ = out.shutdown(Shutdown::Write);
    input.deadline = Instant::now() + LINGER_TIME;
    let mut budget = LINGER_BYTES;
    while budget > 0 {
        match input.fill() {
            Ok(buf) if !buf.is_empty() => {
                let n = buf.len();
                input.reader.consume(n);
                budget = budget.saturating_sub(n);
            }
            _ => return,
        }
    }
}

/// A connection's socket, shared by its reader and its writer.
struct SharedStream(Arc<TcpStream>);

impl io::Read for SharedStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        (&*self.0).read(buf)
    }
}

/// The reading side of a connection, with a deadline on every read.
struct Input {
    reader: BufReader<SharedStream>,
    deadline: Instant,
    /// The longest single wait for data: the socket's receive timeout is armed with it once
    /// and only re-armed when the deadline comes closer than that (a system call saved on
    /// nearly every request of a kept-alive connection).
    slice: Duration,
    armed: Option<Duration>,
}

/// How far a read may overshoot its deadline before the socket timeout is re-armed.
const TIMEOUT_SLACK: Duration = Duration::from_millis(500);

impl Input {
    /// The buffered bytes, reading more if there are none; empty at end of stream.
    fn fill(&mut self) -> Result<&[u8], Fail> {
        loop {
            if self.reader.buffer().is_empty() {
                let left = self.deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(timed_out());
                }
                let want = left.min(self.slice);
                let rearm = match self.armed {
                    None => true,
                    Some(a) => a > left + TIMEOUT_SLACK || a + TIMEOUT_SLACK < want,
                };
                if rearm {
                    self.reader
                        .get_ref()
                        .0
                        .set_read_timeout(Some(want))
                        .map_err(|_| Fail::Gone)?;
                    self.armed = Some(want);
                }
            }
            match self.reader.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    // One slice is over; the deadline may not be.
                    if Instant::now() < self.deadline {
                        continue;
                    }
                    return Err(timed_out());
                }
                Err(_) => return Err(Fail::Gone),
            }
        }
        Ok(self.reader.buffer())
    }

    /// Reads one line (LF or CRLF, removed) and appends it to `out`. `false` when it would
    /// use more than `budget` bytes, which it is charged.
    fn read_line(&mut self, budget: &mut usize, out: &mut Vec<u8>) -> Result<bool, Fail> {
        let start = out.len();
        loop {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Err(Fail::Gone);
            }
            let (take, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            if take > *budget {
                return Ok(false);
            }
            *budget -= take;
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            if done {
                out.pop();
                if out.len() > start && out.last() == Some(&b'\r') {
                    out.pop();
                }
                return Ok(true);
            }
        }
    }

    /// Appends exactly `n` bytes to `out`.
    fn read_into(&mut self, mut n: usize, out: &mut Vec<u8>) -> Result<(), Fail> {
        while n > 0 {
            let buf = self.fill()?;
            if buf.is_empty() {
                return Err(Fail::Gone);
            }
            let take = n.min(buf.len());
            out.extend_from_slice(&buf[..take]);
            self.reader.consume(take);
            n -= take;
        }
        Ok(())
    }

    /// Writes an interim response (`100 Continue`).
    fn write_interim(&self, text: &[u8]) -> Result<(), Fail> {
        let mut stream: &TcpStream = &self.reader.get_ref().0;
        stream.write_all(text).map_err(|_| Fail::Gone)
    }
}

/// How the body of a request is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// `Content-Length` (0 when the request has neither header).
    Length(u64),
    Chunked,
}

/// A request line and its headers, kept in one buffer (`text`) with the places of their
/// parts: one allocation per request instead of several per header.
struct Head {
    /// The request line and the header lines back to back, their line ends removed.
    text: String,
    method: Range<usize>,
    target: Range<usize>,
    http10: bool,
    /// Name and value (trimmed of spaces and tabs) of each header line, in order.
    headers: Vec<(Range<usize>, Range<usize>)>,
    framing: Framing,
    expects_continue: bool,
}

impl Head {
    fn method(&self) -> &str {
        &self.text[self.method.clone()]
    }

    fn target(&self) -> &str {
        &self.text[self.target.clone()]
    }

    /// The first value of header `name`.
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| self.text[k.clone()].eq_ignore_ascii_case(name))
            .map(|(_, v)| &self.text[v.clone()])
    }

    fn headers_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| self.text[k.clone()].eq_ignore_ascii_case(name))
            .map(|(_, v)| &self.text[v.clone()])
    }

    /// True when the `Connection` header lists `token`.
    fn connection_has(&self, token: &str) -> bool {
        self.headers_named("connection")
            .flat_map(|v| v.split(','))
            .any(|t| t.trim().eq_ignore_ascii_case(token))
    }

    fn keep_alive(&self) -> Keep {
        match (
            self.http10,
            self.connection_has("close"),
            self.connection_has("keep-alive"),
        ) {
            (_, true, _) => Keep::Close,
            (false, false, _) => Keep::Alive11,
            (true, false, true) => Keep::Alive10,
            (true, false, false) => Keep::Close,
        }
    }

    /// The query string, without `?`.
    fn query(&self) -> &str {
        self.target().split_once('?').map_or("", |(_, q)| q)
    }

    /// The host the request names: the authority of an absolute URL, else the `Host`
    /// header (as Go's server takes it).
    fn host(&self) -> Option<&str> {
        let target = self.target();
        let scheme = |s: &str| {
            target
                .get(..s.len())
                .is_some_and(|t| t.eq_ignore_ascii_case(s))
        };
        let rest = if scheme("http://") {
            Some(&target[7..])
        } else if scheme("https://") {
            Some(&target[8..])
        } else {
            None
        };
        if let Some(rest) = rest {
            let authority = &rest[..rest.find(['/', '?', '#']).unwrap_or(rest.len())];
            let authority = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            if !authority.is_empty() {
                return Some(authority);
            }
        }
        self.header("host").filter(|h| !h.is_empty())
    }
}

fn is_token(s: &str) -> bool {
    is_token_bytes(s.as_bytes())
}

fn is_token_bytes(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(b))
}

/// Checks a request line: `METHOD TARGET HTTP/1.x`. Returns where the method and the target
/// are, and whether it is HTTP/1.0.
fn parse_request_line(line: &[u8]) -> Result<(Range<usize>, Range<usize>, bool), Fail> {
    let malformed = || bad_request("malformed request line");
    let line = std::str::from_utf8(line).map_err(|_| malformed())?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(malformed());
    };
    if !is_token(method) || target.is_empty() || target.bytes().any(|b| b.is_ascii_control()) {
        return Err(malformed());
    }
    let http10 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        v if v.len() == 8
            && v.starts_with("HTTP/")
            && v.as_bytes()[5].is_ascii_digit()
            && v.as_bytes()[6] == b'.'
            && v.as_bytes()[7].is_ascii_digit() =>
        {
            return Err(Fail::Answer(Response::text(
                505,
                "http version not supported\n",
            )))
        }
        _ => return Err(malformed()),
    };
    let target_start = method.len() + 1;
    Ok((
        0..method.len(),
        target_start..target_start + target.len(),
        http10,
    ))
}

/// Reads and checks the request line (before any header, as Go does) and the headers. The
/// lines are read into one buffer and checked for UTF-8 once; only a head with other bytes
/// takes the slow path (header values are then taken lossily, as Go does).
fn read_head(input: &mut Input) -> Result<Head, Fail> {
    let too_large = || Fail::Answer(Response::text(431, "request header fields too large\n"));
    let mut budget = MAX_HEADER_BYTES;
    let mut raw = Vec::with_capacity(256);
    // Empty lines before a request line are ignored (RFC 9112 §2.2).
    while raw.is_empty() {
        if !input.read_line(&mut budget, &mut raw)? {
            return Err(too_large());
        }
    }
    let (method, target, http10) = parse_request_line(&raw)?;
    // Each header line: where it starts, where its colon is (from the start) and where it
    // ends, in `raw`.
    let mut lines: Vec<(usize, usize, usize)> = Vec::with_capacity(8);
    loop {
        let start = raw.len();
        if !input.read_line(&mut budget, &mut raw)? {
            return Err(too_large());
        }
        let line = &raw[start..];
        if line.is_empty() {
            break;
        }
        if line[0] == b' ' || line[0] == b'\t' {
            return Err(bad_request("folded header line"));
        }
        match line.iter().position(|&b| b == b':') {
            Some(colon) if is_token_bytes(&line[..colon]) => lines.push((start, colon, raw.len())),
            _ => return Err(bad_request("malformed header line")),
        }
    }
    let (text, lines) = match String::from_utf8(raw) {
        Ok(text) => (text, lines),
        Err(e) => {
            // The request line is UTF-8 (checked); the names are ASCII tokens, so each colon
            // stays where it was.
            let raw = e.into_bytes();
            let request_end = lines.first().map_or(raw.len(), |&(start, _, _)| start);
            let mut text = String::from_utf8_lossy(&raw[..request_end]).into_owned();
            let lines = lines
                .iter()
                .map(|&(start, colon, end)| {
                    let at = text.len();
                    text.push_str(&String::from_utf8_lossy(&raw[start..end]));
                    (at, colon, text.len())
                })
                .collect();
            (text, lines)
        }
    };
    let blank = |b: &u8| *b == b' ' || *b == b'\t';
    let headers = lines
        .iter()
        .map(|&(start, colon, end)| {
            let value = &text.as_bytes()[start + colon + 1..end];
            let lead = value.iter().take_while(|b| blank(b)).count();
            let trail = value[lead..].iter().rev().take_while(|b| blank(b)).count();
            (start..start + colon, start + colon + 1 + lead..end - trail)
        })
        .collect();
    let mut head = Head {
        text,
        method,
        target,
        http10,
        headers,
        framing: Framing::Length(0),
        expects_continue: false,
    };
    let hosts = head.headers_named("host").count();
    if !http10 && hosts == 0 {
        return Err(bad_request("missing required Host header"));
    }
    if hosts > 1 {
        return Err(bad_request("too many Host headers"));
    }
    let (coding, more_codings) = {
        let mut codings = head.headers_named("transfer-encoding");
        (codings.next(), codings.next().is_some())
    };
    let first_length = head.headers_named("content-length").next();
    let framing = if let Some(coding) = coding {
        if more_codings || !coding.eq_ignore_ascii_case("chunked") {
            return Err(Fail::Answer(Response::text(
                501,
                "unsupported transfer encoding\n",
            )));
        }
        if first_length.is_some() {
            return Err(bad_request("both Transfer-Encoding and Content-Length"));
        }
        Framing::Chunked
    } else if let Some(first) = first_length {
        let parse = |v: &str| -> Option<u64> {
            let v = v.trim();
            if v.is_empty() || v.len() > 19 || !v.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            v.parse().ok()
        };
        let n = parse(first).ok_or_else(|| bad_request("bad Content-Length"))?;
        if head
            .headers_named("content-length")
            .any(|v| parse(v) != Some(n))
        {
            return Err(bad_request("bad Content-Length"));
        }
        Framing::Length(n)
    } else {
        Framing::Length(0)
    };
    head.framing = framing;
    if let Some(expect) = head.header("expect") {
        if !expect.eq_ignore_ascii_case("100-continue") {
            return Err(Fail::Answer(Response::text(417, "expectation failed\n")));
        }
        head.expects_continue = !http10;
    }
    Ok(head)
}

/// The reference's pipeline for one request: virtual host, CORS, then the RPC handler.
/// Returns the response and whether the request body was read to its end (if not, the
/// connection is closed after the response).
fn handle(req: &Head, input: &mut Input, shared: &Shared) -> Result<(Response, bool), Fail> {
    let no_body = req.framing == Framing::Length(0);
    if !host_allowed(req.host(), &shared.policy.vhosts) {
        return Ok((Response::text(403, "invalid host specified\n"), no_body));
    }
    let mut cors_headers = Vec::new();
    if let Some(cors) = &shared.policy.cors {
        let requested = req.header("access-control-request-method").unwrap_or("");
        if req.method() == "OPTIONS" && !requested.is_empty() {
            let mut r = Response::empty(200);
            r.headers = cors.preflight(
                req.header("origin"),
                requested,
                req.header("access-control-request-headers"),
            );
            return Ok((r, no_body));
        }
        cors_headers = cors.actual(req.method(), req.header("origin"));
    }
    let (mut response, body_read) = rpc(req, input, shared)?;
    if !cors_headers.is_empty() {
        response.headers.splice(0..0, cors_headers);
    }
    Ok((response, body_read))
}

/// The RPC handler's checks (reference §1.7, in order), then the call.
fn rpc(req: &Head, input: &mut Input, shared: &Shared) -> Result<(Response, bool), Fail> {
    let limit = shared.policy.max_body;
    let no_body = req.framing == Framing::Length(0);
    if req.method() == "GET" && no_body && req.query().is_empty() {
        return Ok((Response::empty(200), true)); // a load balancer's health check
    }
    if req.method() == "PUT" || req.method() == "DELETE" {
        return Ok((Response::text(405, "method not allowed\n"), no_body));
    }
    if let Framing::Length(n) = req.framing {
        if n > limit as u64 {
            return Ok((
                Response::text(413, format!("content length too large ({n}>{limit})\n")),
                false,
            ));
        }
    }
    if req.method() != "OPTIONS" && !json_content_type(req.header("content-type").unwrap_or("")) {
        return Ok((
            Response::text(
                415,
                "invalid content type, only application/json is supported\n",
            ),
            no_body,
        ));
    }
    if req.expects_continue && !no_body {
        input.write_interim(b"HTTP/1.1 100 Continue\r\n\r\n")?;
    }
    let (body, body_read) = match req.framing {
        Framing::Length(n) => {
            let mut body = Vec::with_capacity(n as usize);
            input.read_into(n as usize, &mut body)?;
            (body, true)
        }
        Framing::Chunked => read_chunked(input, limit)?,
    };
    Ok((call(shared, body)?, body_read))
}

/// Reads a chunked body, keeping at most `cap` bytes; a longer body is cut there (and then
/// usually fails to parse, as in the reference). The flag says whether the body was read to
/// its end.
fn read_chunked(input: &mut Input, cap: usize) -> Result<(Vec<u8>, bool), Fail> {
    let bad = || bad_request("malformed chunked encoding");
    let mut body = Vec::new();
    loop {
        let mut budget = MAX_CHUNK_LINE;
        let mut line = Vec::new();
        if !input.read_line(&mut budget, &mut line)? {
            return Err(bad());
        }
        let line = String::from_utf8_lossy(&line);
        let size = line
            .split(';')
            .next()
            .unwrap_or("")
            .trim_matches([' ', '\t']);
        if size.is_empty() || size.len() > 15 || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad());
        }
        let size = usize::from_str_radix(size, 16).map_err(|_| bad())?;
        if size == 0 {
            // Trailers, up to the empty line.
            let mut budget = MAX_CHUNK_LINE;
            let mut trailer = Vec::new();
            loop {
                trailer.clear();
                if !input.read_line(&mut budget, &mut trailer)? {
                    return Err(bad());
                }
                if trailer.is_empty() {
                    break;
                }
            }
            return Ok((body, true));
        }
        let room = cap - body.len();
        if size > room {
            input.read_into(room, &mut body)?;
            return Ok((body, false));
        }
        input.read_into(size, &mut body)?;
        let mut budget = 2;
        let mut end = Vec::new();
        if !input.read_line(&mut budget, &mut end)? || !end.is_empty() {
            return Err(bad());
        }
    }
}

/// Takes a permit of the worker pool if one is free.
fn try_take_permit(shared: &Shared) -> bool {
    shared
        .permits
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok()
}

/// Runs one body under a permit of the worker pool: waits for a free permit (giving up when
/// the endpoint stops), runs the call on this thread, frees the permit, and wipes the body.
fn call(shared: &Shared, mut body: Vec<u8>) -> Result<Response, Fail> {
    if !try_take_permit(shared) {
        let mut guard = lock(&shared.waiting);
        while !try_take_permit(shared) {
            if shared.stop.load(Ordering::SeqCst) {
                return Err(Fail::Gone);
            }
            guard = shared
                .permit_freed
                .wait_timeout(guard, POLL_INTERVAL)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }
    // The dispatcher already turns handler panics into errors; this keeps the permit count
    // right should anything else panic.
    let outcome = catch_unwind(AssertUnwindSafe(|| shared.dispatcher.handle_bytes(&body)));
    // The body may carry passphrases or key data.
    zeroize::Zeroize::zeroize(&mut body);
    if shared.permits.fetch_add(1, Ordering::AcqRel) == 0 {
        // Someone may be waiting for the permit just freed. Taking the lock orders this
        // notification after a waiter's last look, so it cannot be lost.
        drop(lock(&shared.waiting));
        shared.permit_freed.notify_one();
    }
    match outcome {
        Ok(reply) => Ok(Response::json(reply)),
        Err(_) => Err(Fail::Gone),
    }
}

/// The virtual-host rule: no host, an IP address, `*` or a listed name passes. The incoming
/// name is compared as sent (the list is lower-cased), as in the reference.
fn host_allowed(host: Option<&str>, vhosts: &[String]) -> bool {
    let Some(host) = host else { return true };
    let name = split_host(host);
    name.parse::<IpAddr>().is_ok() || vhosts.iter().any(|v| v == "*" || v == name)
}

/// The host part of `host[:port]` as Go's `net.SplitHostPort` finds it, or the whole value
/// where that fails (no port, too many colons).
fn split_host(h: &str) -> &str {
    if let Some(rest) = h.strip_prefix('[') {
        if let Some(end) = rest.find(']') {
            let port = &rest[end + 1..];
            if port.starts_with(':')
                && !port[1..].contains([':', '[', ']'])
                && !rest[..end].contains('[')
            {
                return &rest[..end];
            }
        }
        return h;
    }
    match h.rfind(':') {
        Some(i) if !h[..i].contains([':', '[', ']']) && !h[i + 1..].contains([']']) => &h[..i],
        _ => h,
    }
}

/// True when the media type of `value` is one of [`JSON_TYPES`] and its parameters are well
/// formed (`mime.ParseMediaType` in the reference).
fn json_content_type(value: &str) -> bool {
    let mut parts = value.split(';');
    let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
    if !JSON_TYPES.contains(&media.as_str()) {
        return false;
    }
    let params: Vec<&str> = parts.map(str::trim).collect();
    let last = params.len().saturating_sub(1);
    params.iter().enumerate().all(|(i, p)| {
        // A trailing `;` is allowed.
        (p.is_empty() && i == last)
            || p.split_once('=')
                .is_some_and(|(k, v)| is_token(k.trim()) && !v.trim().is_empty())
    })
}

// ---------------------------------------------------------------------------------------------
// CORS

/// The CORS layer as the reference configures it: methods `POST` and `GET`, any request
/// header, max-age 600, no credentials.
struct Cors {
    any: bool,
    /// Lower-cased origins.
    exact: Vec<String>,
    /// `prefix*suffix` patterns.
    wildcards: Vec<(String, String)>,
}

const VARY_PREFLIGHT: [&str; 3] = [
    "Origin",
    "Access-Control-Request-Method",
    "Access-Control-Request-Headers",
];

impl Cors {
    /// `None` for an empty list: no CORS layer at all.
    fn new(origins: &[String]) -> Option<Cors> {
        if origins.is_empty() {
            return None;
        }
        let mut cors = Cors {
            any: false,
            exact: Vec::new(),
            wildcards: Vec::new(),
        };
        for o in origins {
            let o = o.to_lowercase();
            if o == "*" {
                cors.any = true;
            } else if let Some((p, s)) = o.split_once('*') {
                cors.wildcards.push((p.to_string(), s.to_string()));
            } else {
                cors.exact.push(o);
            }
        }
        Some(cors)
    }

    fn origin_allowed(&self, origin: &str) -> bool {
        let o = origin.to_lowercase();
        self.any
            || self.exact.contains(&o)
            || self
                .wildcards
                .iter()
                .any(|(p, s)| o.len() >= p.len() + s.len() && o.starts_with(p) && o.ends_with(s))
    }

    fn method_allowed(method: &str) -> bool {
        matches!(
            method.to_ascii_uppercase().as_str(),
            "OPTIONS" | "GET" | "POST"
        )
    }

    fn allow_origin(&self, origin: &str) -> Header {
        (
            "Access-Control-Allow-Origin",
            if self.any {
                "*".into()
            } else {
                origin.to_string().into()
            },
        )
    }

    /// The headers of a preflight answer.
    fn preflight(
        &self,
        origin: Option<&str>,
        method: &str,
        req_headers: Option<&str>,
    ) -> Vec<Header> {
        let mut h: Vec<Header> = VARY_PREFLIGHT
            .iter()
            .map(|v| ("Vary", Cow::Borrowed(*v)))
            .collect();
        let origin = origin.unwrap_or("");
        if origin.is_empty() || !self.origin_allowed(origin) || !Cors::method_allowed(method) {
            return h;
        }
        h.push(self.allow_origin(origin));
        h.push((
            "Access-Control-Allow-Methods",
            method.to_ascii_uppercase().into(),
        ));
        let names = parse_header_list(req_headers.unwrap_or(""));
        if !names.is_empty() {
            h.push(("Access-Control-Allow-Headers", names.join(", ").into()));
        }
        h.push(("Access-Control-Max-Age", "600".into()));
        h
    }

    /// The headers added to an actual (non-preflight) request's answer.
    fn actual(&self, method: &str, origin: Option<&str>) -> Vec<Header> {
        if method == "OPTIONS" {
            return Vec::new();
        }
        let mut h = vec![("Vary", "Origin".into())];
        let origin = origin.unwrap_or("");
        if !origin.is_empty() && self.origin_allowed(origin) && Cors::method_allowed(method) {
            h.push(self.allow_origin(origin));
        }
        h
    }
}

/// Splits `Access-Control-Request-Headers` into canonical names (`content-type` becomes
/// `Content-Type`), dropping other characters, as the reference's CORS library does.
fn parse_header_list(list: &str) -> Vec<String> {
    let bytes = list.as_bytes();
    let mut names = Vec::new();
    let mut name = Vec::new();
    let mut upper = true;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'a'..=b'z' => name.push(if upper { b.to_ascii_uppercase() } else { b }),
            b'A'..=b'Z' => name.push(if upper { b } else { b.to_ascii_lowercase() }),
            b'-' | b'_' | b'.' | b'0'..=b'9' => name.push(b),
            _ => {}
        }
        if b == b' ' || b == b',' || i == bytes.len() - 1 {
            if !name.is_empty() {
                names.push(String::from_utf8(std::mem::take(&mut name)).expect("ASCII only"));
                upper = true;
            }
        } else {
            upper = b == b'-';
        }
    }
    names
}

// ---------------------------------------------------------------------------------------------
// Responses

/// A response header: its name and value.
type Header = (&'static str, Cow<'static, str>);

/// A response to write.
struct Response {
    status: u16,
    headers: Vec<Header>,
    body: Vec<u8>,
}

impl Response {
    fn empty(status: u16) -> Response {
        Response {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// An HTTP-level error in the reference's format (Go's `http.Error`).
    fn text(status: u16, body: impl Into<String>) -> Response {
        Response {
            status,
            headers: vec![
                ("Content-Type", "text/plain; charset=utf-8".into()),
                ("X-Content-Type-Options", "nosniff".into()),
            ],
            body: body.into().into_bytes(),
        }
    }

    /// A JSON-RPC answer: always 200; an empty body when there is nothing to say.
    fn json(reply: Option<String>) -> Response {
        let body = reply
            .map(|r| {
                let mut b = r.into_bytes();
                b.push(b'\n');
                b
            })
            .unwrap_or_default();
        Response {
            status: 200,
            headers: vec![("Content-Type", "application/json".into())],
            body,
        }
    }

    /// The bytes on the wire; `head_only` leaves the body out (HEAD). Written piece by piece
    /// into one buffer (no formatting machinery: this runs for every request).
    fn render(&self, head_only: bool, keep: Keep) -> Vec<u8> {
        let headers: usize = self
            .headers
            .iter()
            .map(|(k, v)| k.len() + v.len() + 4)
            .sum();
        let body = if head_only { &[][..] } else { &self.body[..] };
        let mut out = Vec::with_capacity(96 + headers + body.len());
        out.extend_from_slice(b"HTTP/1.1 ");
        push_decimal(&mut out, self.status.into());
        out.push(b' ');
        out.extend_from_slice(reason(self.status).as_bytes());
        out.extend_from_slice(b"\r\n");
        for (k, v) in &self.headers {
            out.extend_from_slice(k.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(v.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"Content-Length: ");
        push_decimal(&mut out, self.body.len() as u64);
        out.extend_from_slice(b"\r\n");
        match keep {
            Keep::Close => out.extend_from_slice(b"Connection: close\r\n"),
            Keep::Alive10 => out.extend_from_slice(b"Connection: keep-alive\r\n"),
            Keep::Alive11 => {}
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(body);
        out
    }
}

/// Appends the decimal digits of `n`.
fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Request Entity Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        505 => "HTTP Version Not Supported",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_parts_as_go_splits_them() {
        assert_eq!(split_host("localhost:1234"), "localhost");
        assert_eq!(split_host("localhost"), "localhost");
        assert_eq!(split_host("[::1]:80"), "::1");
        assert_eq!(split_host("[::1]"), "[::1]");
        assert_eq!(split_host("::1"), "::1");
        assert_eq!(split_host("a:b:c"), "a:b:c");
        let list = vec!["localhost".to_string()];
        assert!(host_allowed(None, &list));
        assert!(host_allowed(Some("::1"), &list));
        assert!(host_allowed(Some("[::1]:8551"), &list));
        assert!(!host_allowed(Some("[::1]"), &list));
        assert!(!host_allowed(Some("LOCALHOST"), &list));
    }

    #[test]
    fn media_types() {
        assert!(json_content_type("application/json"));
        assert!(json_content_type("Application/JSON; charset=UTF-8"));
        assert!(json_content_type("application/json;"));
        assert!(json_content_type("application/json-rpc"));
        assert!(json_content_type("application/jsonrequest"));
        assert!(!json_content_type(""));
        assert!(!json_content_type("text/plain"));
        assert!(!json_content_type("application/json; charset"));
        assert!(!json_content_type("application/json; charset="));
        assert!(!json_content_type("application/json;; a=b"));
    }

    #[test]
    fn header_lists_are_canonicalised() {
        assert_eq!(
            parse_header_list("content-type, x-FOO-bar,accept"),
            ["Content-Type", "X-Foo-Bar", "Accept"]
        );
        assert_eq!(parse_header_list(""), Vec::<String>::new());
        assert_eq!(parse_header_list("x_y"), ["X_y"]);
    }

    #[test]
    fn listen_errors_read_like_the_reference() {
        let e = io::Error::from_raw_os_error(libc::EADDRINUSE);
        let e = listen_error(SocketAddr::from(([127, 0, 0, 1], 8551)), e);
        assert_eq!(
            e.to_string(),
            "listen tcp 127.0.0.1:8551: bind: address already in use"
        );
        assert_eq!(e.kind(), io::ErrorKind::AddrInUse);
    }
}
