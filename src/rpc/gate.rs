//! The gate of the TCP transports (HTTP and WebSocket): one readiness loop per endpoint
//! (`<name>-gate`, on `epoll` through `mio`) that accepts connections and holds each one,
//! without a thread, until it has sent a whole request; only then is it handed to the
//! transport's workers. A kept-alive HTTP connection that goes quiet comes back here.
//!
//! Why: with a thread per connection, 2,000 clients sending one byte a second held every
//! thread the node would give, and well-behaved clients got 503 or nothing. Here such a
//! client costs a socket and a small buffer, and is closed when its time is up.
//!
//! A connection the gate holds keeps at most [`HANDOFF_BYTES`] of unfinished request: past
//! that it goes to a worker whether or not the request is whole (a large body is read there,
//! under the transport's read timeout), so the loop's memory stays bounded by
//! `max_connections x HANDOFF_BYTES`.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::TcpListener as StdListener;
use std::os::fd::{FromRawFd, IntoRawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use zeroize::Zeroizing;

use super::wipe::grow;

/// Unfinished request bytes beyond which a connection goes to a worker anyway.
pub const HANDOFF_BYTES: usize = 16 * 1024;
const LISTENER: Token = Token(usize::MAX - 1);
const WAKER: Token = Token(usize::MAX - 2);
/// How often the loop looks at deadlines when nothing happens.
const TICK: Duration = Duration::from_millis(100);
/// Bytes read at a time.
const READ_CHUNK: usize = 4096;
/// How long a connection answered and closing keeps reading what its client still sends.
const LINGER: Duration = Duration::from_secs(1);

/// One open connection as it goes between the gate and the workers: the socket (blocking
/// once handed to a worker), the bytes read and not yet used (wiped when dropped: requests
/// carry passphrases), and its place under the endpoint's connection cap, freed on drop.
pub struct Conn {
    pub stream: std::net::TcpStream,
    pub buf: Zeroizing<Vec<u8>>,
    _slot: Slot,
}

/// A connection's place under its endpoint's cap, freed when dropped.
pub struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Conn {
    /// The socket, the bytes read, and the place under the cap (keep it while the
    /// connection is open).
    pub fn into_parts(self) -> (std::net::TcpStream, Zeroizing<Vec<u8>>, Slot) {
        (self.stream, self.buf, self._slot)
    }
}

/// What a transport tells the gate.
pub trait Door: Send + 'static {
    /// True when `buf` (what a connection sent so far) holds what a worker can answer
    /// without waiting on the client: a whole request, or one already known to be refused.
    fn ready(&self, buf: &[u8]) -> bool;
    /// Takes a connection whose request is ready. Runs on the gate's thread: must not block.
    fn deliver(&mut self, conn: Conn);
    /// What a connection over the cap is told before it is closed.
    fn busy(&self) -> &[u8];
    /// What a connection whose request did not arrive in time (it had sent part of one) is
    /// told before it is closed.
    fn too_slow(&self) -> &[u8];
}

/// How a gate is set up.
pub struct GateConfig {
    /// Thread name: `<name>-gate`.
    pub name: &'static str,
    /// Most connections open at once, held here or by workers.
    pub max_connections: usize,
    /// How long a new connection may take to send its request.
    pub request_timeout: Duration,
    /// How long a connection given back may stay quiet before it is closed.
    pub idle_timeout: Duration,
}

/// A running gate. Dropping it does not stop it: call [`Gate::stop`].
pub struct Gate {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

struct Shared {
    stopping: AtomicBool,
    waker: Waker,
    /// Connections workers gave back, for the loop to take.
    returned: Mutex<Vec<Conn>>,
    open: Arc<AtomicUsize>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Pending {
    stream: TcpStream,
    buf: Zeroizing<Vec<u8>>,
    deadline: Instant,
    slot: Slot,
    /// Answered and closing: what the client still sends is read and dropped until it
    /// closes or the deadline, so that our answer is not lost to a reset.
    closing: bool,
}

impl Gate {
    /// Starts the loop on `listener` (made non-blocking here). Fails when the poller or
    /// the thread cannot be made.
    pub fn start(listener: StdListener, cfg: GateConfig, door: impl Door) -> io::Result<Arc<Gate>> {
        listener.set_nonblocking(true)?;
        let mut listener = TcpListener::from_std(listener);
        let poll = Poll::new()?;
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let shared = Arc::new(Shared {
            stopping: AtomicBool::new(false),
            waker: Waker::new(poll.registry(), WAKER)?,
            returned: Mutex::new(Vec::new()),
            open: Arc::new(AtomicUsize::new(0)),
        });
        let sh = shared.clone();
        let thread = thread::Builder::new()
            .name(format!("{}-gate", cfg.name))
            .spawn(move || Loop::new(poll, listener, cfg, door, sh).run())?;
        Ok(Arc::new(Gate {
            shared,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// A worker is done with `conn` for now: the gate waits for its next request (for the
    /// idle timeout) and closes it if none comes.
    pub fn give_back(&self, conn: Conn) {
        if self.shared.stopping.load(Ordering::SeqCst) {
            return; // dropped: closed
        }
        lock(&self.shared.returned).push(conn);
        let _ = self.shared.waker.wake();
    }

    /// Closes the listener and every connection the gate holds, and joins its thread.
    /// Connections that workers hold are theirs to close.
    pub fn stop(&self) {
        self.shared.stopping.store(true, Ordering::SeqCst);
        let _ = self.shared.waker.wake();
        if let Some(t) = lock(&self.thread).take() {
            let _ = t.join();
        }
        lock(&self.shared.returned).clear();
    }
}

struct Loop<D> {
    poll: Poll,
    listener: TcpListener,
    cfg: GateConfig,
    door: D,
    shared: Arc<Shared>,
    /// Held connections by token; `None` marks a free place.
    held: Vec<Option<Pending>>,
    free: Vec<usize>,
    /// Tokens in the order their deadlines come (deadlines only grow when a connection
    /// comes back, which pushes it again): looked at from the front.
    order: VecDeque<(Instant, usize)>,
}

impl<D: Door> Loop<D> {
    fn new(
        poll: Poll,
        listener: TcpListener,
        cfg: GateConfig,
        door: D,
        shared: Arc<Shared>,
    ) -> Loop<D> {
        Loop {
            poll,
            listener,
            cfg,
            door,
            shared,
            held: Vec::new(),
            free: Vec::new(),
            order: VecDeque::new(),
        }
    }

    fn run(mut self) {
        let mut events = Events::with_capacity(1024);
        while !self.shared.stopping.load(Ordering::SeqCst) {
            if let Err(e) = self.poll.poll(&mut events, Some(TICK)) {
                if e.kind() != io::ErrorKind::Interrupted {
                    thread::sleep(TICK);
                }
                continue;
            }
            for ev in events.iter() {
                match ev.token() {
                    LISTENER => self.accept(),
                    WAKER => {}
                    Token(t) => self.readable(t),
                }
            }
            let returned = std::mem::take(&mut *lock(&self.shared.returned));
            for conn in returned {
                self.take_back(conn);
            }
            self.expire(Instant::now());
        }
        // Dropping the loop closes the listener and every held socket.
    }

    fn accept(&mut self) {
        loop {
            let stream = match self.listener.accept() {
                Ok((s, _)) => s,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // Out of descriptors and the like: try again at the next event.
                Err(_) => return,
            };
            let open = self.shared.open.fetch_add(1, Ordering::AcqRel);
            let slot = Slot(self.shared.open.clone());
            if open >= self.cfg.max_connections {
                // Best effort: a fresh socket's send buffer takes a short answer whole.
                let _ = (&stream).write(self.door.busy());
                continue;
            }
            let _ = stream.set_nodelay(true);
            let deadline = Instant::now() + self.cfg.request_timeout;
            self.hold(stream, Zeroizing::new(Vec::new()), deadline, slot);
        }
    }

    fn hold(
        &mut self,
        mut stream: TcpStream,
        buf: Zeroizing<Vec<u8>>,
        deadline: Instant,
        slot: Slot,
    ) {
        let t = match self.free.pop() {
            Some(t) => t,
            None => {
                self.held.push(None);
                self.held.len() - 1
            }
        };
        if self
            .poll
            .registry()
            .register(&mut stream, Token(t), Interest::READABLE)
            .is_err()
        {
            self.free.push(t);
            return;
        }
        self.held[t] = Some(Pending {
            stream,
            buf,
            deadline,
            slot,
            closing: false,
        });
        self.order.push_back((deadline, t));
    }

    fn release(&mut self, t: usize) -> Option<Pending> {
        let mut p = self.held.get_mut(t)?.take()?;
        let _ = self.poll.registry().deregister(&mut p.stream);
        self.free.push(t);
        Some(p)
    }

    fn readable(&mut self, t: usize) {
        let Some(Some(p)) = self.held.get_mut(t) else {
            return;
        };
        if p.closing {
            let mut sink = [0u8; 4096];
            loop {
                match p.stream.read(&mut sink) {
                    Ok(n) if n > 0 => continue,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    _ => break,
                }
            }
            self.release(t);
            return;
        }
        let mut open = true;
        loop {
            let len = p.buf.len();
            if p.buf.capacity() - len < READ_CHUNK {
                grow(&mut p.buf, READ_CHUNK);
            }
            p.buf.resize(len + READ_CHUNK, 0);
            match p.stream.read(&mut p.buf[len..]) {
                Ok(0) => {
                    p.buf.truncate(len);
                    open = false;
                    break;
                }
                Ok(n) => {
                    p.buf.truncate(len + n);
                    if p.buf.len() >= HANDOFF_BYTES {
                        break;
                    }
                }
                Err(e) => {
                    p.buf.truncate(len);
                    match e.kind() {
                        io::ErrorKind::WouldBlock => break,
                        io::ErrorKind::Interrupted => continue,
                        _ => {
                            open = false;
                            break;
                        }
                    }
                }
            }
        }
        let ready = !p.buf.is_empty() && (p.buf.len() >= HANDOFF_BYTES || self.door.ready(&p.buf));
        if ready {
            // A request followed by the end of the stream still gets its answer.
            let p = self.release(t).expect("held");
            self.deliver(p);
        } else if !open {
            self.release(t); // closed by the client: dropped
        }
    }

    fn deliver(&mut self, p: Pending) {
        // SAFETY: the descriptor is ours alone; the std stream takes it over.
        let stream = unsafe { std::net::TcpStream::from_raw_fd(p.stream.into_raw_fd()) };
        if stream.set_nonblocking(false).is_err() {
            return;
        }
        self.door.deliver(Conn {
            stream,
            buf: p.buf,
            _slot: p.slot,
        });
    }

    fn take_back(&mut self, conn: Conn) {
        let Conn {
            stream,
            mut buf,
            _slot,
        } = conn;
        if buf.is_empty() && buf.capacity() > HANDOFF_BYTES {
            // After a large request, a quiet connection goes back to a small buffer.
            buf = Zeroizing::new(Vec::new());
        }
        if !buf.is_empty() && self.door.ready(&buf) {
            self.door.deliver(Conn { stream, buf, _slot });
            return;
        }
        if stream.set_nonblocking(true).is_err() {
            return;
        }
        // A request begun has the request timeout to finish; a quiet connection the idle one.
        let wait = if buf.is_empty() {
            self.cfg.idle_timeout
        } else {
            self.cfg.request_timeout
        };
        let deadline = Instant::now() + wait;
        self.hold(TcpStream::from_std(stream), buf, deadline, _slot);
    }

    /// Closes the connections whose time is up; one that had sent part of a request is
    /// told so first.
    fn expire(&mut self, now: Instant) {
        while let Some(&(deadline, t)) = self.order.front() {
            if deadline > now {
                break;
            }
            self.order.pop_front();
            let due = matches!(self.held.get(t), Some(Some(p)) if p.deadline <= now);
            if !due {
                continue; // the place was freed or reused since
            }
            let Some(p) = self.held[t].as_mut() else {
                continue;
            };
            if p.buf.is_empty() || p.closing {
                self.release(t);
                continue;
            }
            // Best effort: a short answer fits the socket's send buffer.
            let _ = (&p.stream).write(self.door.too_slow());
            let _ = p.stream.shutdown(std::net::Shutdown::Write);
            p.closing = true;
            p.buf.clear();
            p.deadline = now + LINGER;
            self.order.push_back((p.deadline, t));
        }
    }
}
