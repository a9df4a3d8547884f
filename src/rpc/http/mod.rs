//! The HTTP transport (reference §1.7): a small HTTP/1.1 server that checks the virtual
//! host, applies CORS, enforces the request rules and hands each JSON-RPC body to the
//! [`Dispatcher`]. It moves bytes only; every JSON-RPC decision is the dispatcher's.
//!
//! - `rpc::gate` holds every connection that has not sent a whole request, without a
//!   thread (slow and idle clients cost a socket and a small buffer), and hands whole
//!   requests to the `http-worker` pool.
//! - A worker serves the connection (`serve`): head (`head`, on `httparse`), body
//!   (`body`), virtual host and CORS (`cors`), the call, the response (`response`).
//!   While the client keeps sending, the worker keeps the connection (a benchmark client
//!   never leaves its thread); once it is quiet for [`HOT_WAIT`] it goes back to the gate.
//! - At most `cfg.workers` calls run at once (permits taken once a request is whole).
//! - A call running longer than `cfg.execution_timeout` is answered 503 `timeout` by the
//!   watchdog (`http-watchdog`); the call's own answer is dropped when it comes, and the
//!   connection then serves its next request.
//!
//! Why not `tiny_http`: release 0.12 drains an unread request body on drop into
//! `vec![0; remaining]`, sized by the client's `Content-Length`, so answering 413 to
//! `Content-Length: 1000000000000` aborts the whole process (tiny-http issue #252, PR #290). It
//! also has no socket timeouts and cannot close keep-alive connections when stopped.

mod body;
mod cors;
mod head;
mod response;

use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use super::endpoint::{bind_address, listen_error, Endpoint, HttpConfig};
use super::gate::{Conn, Door, Gate, GateConfig, HANDOFF_BYTES};
use super::pool::Pool;
use super::server::Dispatcher;
use body::{Input, Quick};
use cors::{host_allowed, json_content_type, Cors};
use head::{Framing, Head};
use response::{Fail, Keep, Response};

/// Most worker threads (serving connections that have sent whole requests).
const MAX_WORKERS: usize = 256;
/// How long a worker waits for a kept-alive client's next request before giving the
/// connection back to the gate.
pub const HOT_WAIT: Duration = Duration::from_millis(50);
/// How long, and how much, a closing connection keeps reading what its client still sends.
const LINGER_TIME: Duration = Duration::from_secs(1);
const LINGER_BYTES: usize = 1 << 20;
/// How often a thread waiting for a permit looks at the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// A running HTTP JSON-RPC endpoint.
pub struct HttpServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    gate: Arc<Gate>,
    watchdog: JoinHandle<()>,
}

/// What every thread of one endpoint shares.
struct Shared {
    stop: AtomicBool,
    policy: Policy,
    dispatcher: Dispatcher,
    /// How many more calls may start now. Taken and returned with atomic operations; the
    /// mutex and condition variable only serve threads that must wait.
    permits: AtomicUsize,
    waiting: Mutex<()>,
    permit_freed: Condvar,
    pool: Arc<Pool>,
    gate: OnceLock<Arc<Gate>>,
    /// The connection each busy worker serves: what the watchdog and `stop` act on.
    flights: Mutex<Vec<Arc<Flight>>>,
    /// When the endpoint started: call start times are nanoseconds since then.
    epoch: Instant,
}

/// The request rules of one endpoint.
struct Policy {
    /// Allowed virtual hosts, lower-cased.
    vhosts: Vec<String>,
    /// `None`: no CORS layer.
    cors: Option<Cors>,
    max_body: usize,
    read_timeout: Duration,
    write_timeout: Duration,
    execution_timeout: Duration,
}

/// One connection a worker serves, as the watchdog sees it.
struct Flight {
    /// A second descriptor of the socket, for the watchdog's answer and for `stop`.
    stream: TcpStream,
    worker: ThreadId,
    /// When the running call started (nanoseconds since the epoch, plus one); 0 while no
    /// call runs; [`TAKEN`] once the watchdog answered it.
    since: AtomicU64,
    /// The [`Keep`] of the running call's request.
    keep: AtomicU8,
}

const TAKEN: u64 = u64::MAX;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
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
        let local = listener.local_addr()?;
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            policy: Policy {
                vhosts: cfg.vhosts.iter().map(|v| v.to_lowercase()).collect(),
                cors: Cors::new(&cfg.cors),
                max_body: dispatcher.limits().max_request_bytes,
                read_timeout: cfg.body_timeout,
                write_timeout: cfg.write_timeout,
                execution_timeout: cfg.execution_timeout,
            },
            dispatcher,
            permits: AtomicUsize::new(cfg.workers.max(1)),
            waiting: Mutex::new(()),
            permit_freed: Condvar::new(),
            pool: Pool::new("http-worker", MAX_WORKERS),
            gate: OnceLock::new(),
            flights: Mutex::new(Vec::new()),
            epoch: Instant::now(),
        });
        let door = HttpDoor {
            shared: shared.clone(),
            busy: Response::text(503, "server busy\n").render(false, Keep::Close),
            slow: response::timed_out_response().render(false, Keep::Close),
        };
        let gate = Gate::start(
            listener,
            GateConfig {
                name: "http",
                max_connections: cfg.max_connections.max(1),
                request_timeout: cfg.body_timeout,
                idle_timeout: cfg.idle_timeout,
            },
            door,
        )?;
        let _ = shared.gate.set(gate.clone());
        let sh = shared.clone();
        let watchdog = thread::Builder::new()
            .name("http-watchdog".into())
            .spawn(move || watch(&sh))?;
        Ok(HttpServer {
            addr: local,
            shared,
            gate,
            watchdog,
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

    /// Closes the listener and every connection (a request in progress gets no answer) and
    /// joins the threads. Returns within a fraction of a second unless a call is running,
    /// which is waited for. A worker may stop its own endpoint (`admin_stopHTTP` over
    /// HTTP): its connection is left to write its answer, and its thread is not joined.
    fn stop(self: Box<Self>) {
        let HttpServer {
            shared,
            gate,
            watchdog,
            ..
        } = *self;
        shared.stop.store(true, Ordering::SeqCst);
        gate.stop();
        let me = thread::current().id();
        for f in lock(&shared.flights).iter() {
            if f.worker != me {
                let _ = f.stream.shutdown(Shutdown::Both);
            }
        }
        shared.pool.stop();
        let _ = watchdog.join();
    }
}

/// What the gate asks of HTTP.
struct HttpDoor {
    shared: Arc<Shared>,
    busy: Vec<u8>,
    slow: Vec<u8>,
}

impl Door for HttpDoor {
    fn ready(&self, buf: &[u8]) -> bool {
        head::ready(buf, self.shared.policy.max_body)
    }

    fn deliver(&mut self, conn: Conn) {
        let sh = self.shared.clone();
        self.shared.pool.submit(Box::new(move || serve(conn, &sh)));
    }

    fn busy(&self) -> &[u8] {
        &self.busy
    }

    fn too_slow(&self) -> &[u8] {
        &self.slow
    }
}

// ---------------------------------------------------------------------------------------------
// One connection

/// Serves requests on `conn` while its client keeps sending them; gives it back to the gate
/// when the client goes quiet, closes it on `Connection: close`, an error or a stop.
fn serve(conn: Conn, shared: &Arc<Shared>) {
    let _ = conn
        .stream
        .set_write_timeout(Some(shared.policy.write_timeout));
    let Ok(second) = conn.stream.try_clone() else {
        return;
    };
    let flight = Arc::new(Flight {
        stream: second,
        worker: thread::current().id(),
        since: AtomicU64::new(0),
        keep: AtomicU8::new(0),
    });
    lock(&shared.flights).push(flight.clone());
    let back = serve_requests(
        Input::new(conn, shared.policy.read_timeout),
        shared,
        &flight,
    );
    lock(&shared.flights).retain(|f| !Arc::ptr_eq(f, &flight));
    if let Some(conn) = back {
        if let Some(gate) = shared.gate.get() {
            gate.give_back(conn);
        }
    }
}

/// How long a worker keeps a quiet kept-alive connection: [`HOT_WAIT`], or not at all while
/// other connections wait for a worker.
fn hot_wait(shared: &Shared) -> Duration {
    if shared.pool.backlog() > 0 {
        Duration::ZERO
    } else {
        HOT_WAIT
    }
}

/// The request loop of [`serve`]: the connection, when it is to go back to the gate.
fn serve_requests(mut input: Input, shared: &Shared, flight: &Flight) -> Option<Conn> {
    let max_body = shared.policy.max_body;
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return None;
        }
        let (req, head_len) = match head::parse(input.buf()) {
            Ok(Some(parsed)) => parsed,
            Ok(None) => {
                // A head larger than the gate holds is read here, under the deadline.
                if input.buf().len() >= HANDOFF_BYTES {
                    if let Err(fail) = input.read_more() {
                        answer_failure(&mut input, fail);
                        return None;
                    }
                    continue;
                }
                match input.wait_briefly(hot_wait(shared)) {
                    Quick::More => continue,
                    Quick::Quiet => return Some(input.conn),
                    Quick::Gone => return None,
                }
            }
            Err(fail) => {
                answer_failure(&mut input, fail);
                return None;
            }
        };
        if let Framing::Length(len) = req.framing {
            let whole = head_len as u64 + len;
            let short = (input.buf().len() as u64) < whole;
            if short
                && len <= max_body as u64
                && !req.expects_continue
                && whole <= HANDOFF_BYTES as u64
            {
                match input.wait_briefly(hot_wait(shared)) {
                    Quick::More => continue,
                    Quick::Quiet => return Some(input.conn),
                    Quick::Gone => return None,
                }
            }
        }
        input.consume(head_len);
        input.deadline = Instant::now() + shared.policy.read_timeout;
        let head_only = req.method() == "HEAD";
        let (response, keep) = match handle(&req, &mut input, shared, flight) {
            Err(Fail::Gone) => return None,
            Err(Fail::Answer(r)) => (Some(r), Keep::Close),
            Ok((r, body_read)) => (
                r,
                if body_read {
                    req.keep_alive()
                } else {
                    Keep::Close
                },
            ),
        };
        // `None`: the watchdog answered this request already.
        if let Some(response) = response {
            if response
                .write_to(&mut input.stream(), head_only, keep)
                .is_err()
            {
                return None;
            }
        }
        if keep == Keep::Close {
            linger(&mut input);
            return None;
        }
    }
}

/// Writes the answer to a refused request and ends the connection.
fn answer_failure(input: &mut Input, fail: Fail) {
    if let Fail::Answer(r) = fail {
        if input
            .stream()
            .write_all(&r.render(false, Keep::Close))
            .is_ok()
        {
            linger(input);
        }
    }
}

/// Ends a connection gently: stops writing, then reads and drops what the client still sends
/// (an unread body) for a short while, because closing a socket with unread data resets the
/// connection, and the client may lose the response it has not read yet.
fn linger(input: &mut Input) {
    let _ = input.stream().shutdown(Shutdown::Write);
    input.deadline = Instant::now() + LINGER_TIME;
    let mut budget = LINGER_BYTES;
    while budget > 0 {
        let n = input.buf().len();
        input.consume(n);
        budget = budget.saturating_sub(n);
        if input.read_more().is_err() {
            return;
        }
    }
}

/// The reference's pipeline for one request: virtual host, CORS, then the RPC handler.
/// Returns the response (`None` when the watchdog answered) and whether the request body
/// was read to its end (if not, the connection is closed after the response).
fn handle(
    req: &Head,
    input: &mut Input,
    shared: &Shared,
    flight: &Flight,
) -> Result<(Option<Response>, bool), Fail> {
    let no_body = req.framing == Framing::Length(0);
    if !host_allowed(req.host(), &shared.policy.vhosts) {
        return Ok((
            Some(Response::text(403, "invalid host specified\n")),
            no_body,
        ));
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
            return Ok((Some(r), no_body));
        }
        cors_headers = cors.actual(req.method(), req.header("origin"));
    }
    let (mut response, body_read) = rpc(req, input, shared, flight)?;
    if let Some(r) = response.as_mut() {
        if !cors_headers.is_empty() {
            r.headers.splice(0..0, cors_headers);
        }
    }
    Ok((response, body_read))
}

/// The RPC handler's checks (reference §1.7, in order), then the call.
fn rpc(
    req: &Head,
    input: &mut Input,
    shared: &Shared,
    flight: &Flight,
) -> Result<(Option<Response>, bool), Fail> {
    let limit = shared.policy.max_body;
    let no_body = req.framing == Framing::Length(0);
    if req.method() == "GET" && no_body && req.query().is_empty() {
        return Ok((Some(Response::empty(200)), true)); // a load balancer's health check
    }
    if req.method() == "PUT" || req.method() == "DELETE" {
        return Ok((Some(Response::text(405, "method not allowed\n")), no_body));
    }
    if let Framing::Length(n) = req.framing {
        if n > limit as u64 {
            return Ok((
                Some(Response::text(
                    413,
                    format!("content length too large ({n}>{limit})\n"),
                )),
                false,
            ));
        }
    }
    if req.method() != "OPTIONS" && !json_content_type(req.header("content-type").unwrap_or("")) {
        return Ok((
            Some(Response::text(
                415,
                "invalid content type, only application/json is supported\n",
            )),
            no_body,
        ));
    }
    if req.expects_continue && !no_body {
        input
            .stream()
            .write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
            .map_err(|_| Fail::Gone)?;
    }
    let keep = req.keep_alive();
    let response = match req.framing {
        Framing::Length(n) => {
            let n = n as usize;
            input.fill_to(n)?;
            let r = call(shared, flight, keep, &input.buf()[..n]);
            input.consume(n);
            r?
        }
        Framing::Chunked => {
            let body = input.chunked(limit)?;
            call(shared, flight, keep, &body)?
        }
    };
    Ok((response, true))
}

/// Takes a permit of the worker pool if one is free.
fn try_take_permit(shared: &Shared) -> bool {
    shared
        .permits
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| n.checked_sub(1))
        .is_ok()
}

/// Runs one body under a permit: waits for a free permit (giving up when the endpoint
/// stops), runs the call on this thread under the watchdog's eye, and frees the permit.
/// `None` when the watchdog answered the request first.
fn call(
    shared: &Shared,
    flight: &Flight,
    keep: Keep,
    body: &[u8],
) -> Result<Option<Response>, Fail> {
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
    flight.keep.store(keep as u8, Ordering::Relaxed);
    let since = shared.epoch.elapsed().as_nanos() as u64 + 1;
    flight.since.store(since, Ordering::Release);
    // The dispatcher already turns handler panics into errors; this keeps the permit count
    // right should anything else panic.
    let outcome = catch_unwind(AssertUnwindSafe(|| shared.dispatcher.handle_bytes(body)));
    let answered_by_watchdog = flight
        .since
        .compare_exchange(since, 0, Ordering::AcqRel, Ordering::Acquire)
        .is_err();
    if answered_by_watchdog {
        flight.since.store(0, Ordering::Release);
    }
    if shared.permits.fetch_add(1, Ordering::AcqRel) == 0 {
        // Someone may be waiting for the permit just freed. Taking the lock orders this
        // notification after a waiter's last look, so it cannot be lost.
        drop(lock(&shared.waiting));
        shared.permit_freed.notify_one();
    }
    match outcome {
        Ok(_) if answered_by_watchdog => Ok(None),
        Ok(reply) => Ok(Some(Response::json(reply))),
        Err(_) => Err(Fail::Gone),
    }
}

/// The watchdog: answers 503 `timeout` for every call that runs past the execution timeout.
fn watch(shared: &Shared) {
    let limit = shared.policy.execution_timeout;
    let tick = (limit / 4).clamp(Duration::from_millis(5), Duration::from_millis(100));
    let keeps = [Keep::Close, Keep::Alive11, Keep::Alive10];
    while !shared.stop.load(Ordering::SeqCst) {
        thread::sleep(tick);
        let now = shared.epoch.elapsed().as_nanos() as u64 + 1;
        let limit = limit.as_nanos() as u64;
        let late: Vec<(Arc<Flight>, u64)> = lock(&shared.flights)
            .iter()
            .filter_map(|f| {
                let since = f.since.load(Ordering::Acquire);
                (since != 0 && since != TAKEN && now.saturating_sub(since) >= limit)
                    .then(|| (f.clone(), since))
            })
            .collect();
        for (f, since) in late {
            if f.since
                .compare_exchange(since, TAKEN, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                let keep = keeps[f.keep.load(Ordering::Relaxed) as usize % 3];
                let _ = (&f.stream).write_all(&Response::text(503, "timeout").render(false, keep));
                if keep == Keep::Close {
                    let _ = f.stream.shutdown(Shutdown::Both);
                }
            }
        }
    }
}
