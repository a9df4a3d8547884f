//! The peer server: the TCP listener, the dialer of static peers, and each connection's
//! handshake, status exchange, reader and writer threads (see [`super::peer`] for the seam
//! with the protocol).
//!
//! Threads, all named and all joined by [`PeerServer::stop`]:
//! - `p2p-listen` accepts connections (a non-blocking accept polled against the stop flag);
//! - `p2p-dial` keeps every static peer connected, redialing with [`Backoff`];
//! - one `p2p-conn` thread per connection runs the handshake, the status exchange and then
//!   reads; once connected it starts a `p2p-write` thread that drains the peer's send queue
//!   and pings. The reader thread alone takes the peer out of the set, after joining its
//!   writer, so a peer leaves exactly once.
//!
//! A refused or failed connection is logged with its reason and touches nothing else: no lock
//! is held across a socket operation, and every socket has a timeout or is shut down by stop.

use std::collections::{BTreeMap, HashMap};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::identity::NodeIdentity;
use super::peer::{Outgoing, Peer, PeerLink, PeerSet, Protocol};
use super::slots::{self, Entry, Place, Places, Slots};
use super::transport::{handshake, Role, SecureWriter, TransportError};
use super::url::{parse_kni, NodeId, NodeType, NodeUrl};
use super::wire::{check_status, decode, encode, Message, Status};
use crate::events::{Bus, Event, PeerEvent};
use crate::log;
use crate::service::{Service, StopFlag, Worker};

/// How long the Noise handshake (and the identity proof) may take.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);
/// Inbound connections that may be in their handshake or status exchange at once. Each holds
/// a thread for up to the handshake and status timeouts, so a flood of bare TCP connections
/// must not grow without bound; the places are shared between addresses (see [`super::slots`]).
pub const MAX_HANDSHAKING: usize = super::slots::TOTAL;
/// Of those, the most one address holds (its next connection takes its oldest one's place).
pub const MAX_HANDSHAKING_PER_ADDRESS: usize = super::slots::PER_ADDRESS;
/// How long we wait for the peer's `Status` after the handshake.
pub const STATUS_TIMEOUT: Duration = Duration::from_secs(5);
/// A `Ping` goes out this often on every connection.
pub const PING_INTERVAL: Duration = Duration::from_secs(15);
/// A peer that sends nothing (not even a ping) this long is dropped.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a write may block before the peer is taken for stuck.
const WRITE_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a TCP connect to a static peer may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the listener and the dialer look at their stop flag and the static set.
const POLL: Duration = Duration::from_millis(50);
/// The first redial delay, and the most it doubles to.
pub const BACKOFF_MIN: Duration = Duration::from_millis(500);
pub const BACKOFF_MAX: Duration = Duration::from_secs(10);
/// A connection that lasted this long resets the redial delay.
pub const BACKOFF_RESET: Duration = Duration::from_secs(30);
/// On stop: how long peers get to send their `Disconnect` before the sockets are shut.
const STOP_GRACE: Duration = Duration::from_secs(1);
/// The default static peers file in the data directory.
pub const STATIC_NODES_FILE: &str = "static-nodes.json";

/// What the server is started with.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// The listening host (`--p2paddr`), an IP literal (IPv6 with or without brackets) or a
    /// name.
    pub host: String,
    /// The listening port (`--port`); 0 picks a free one.
    pub port: u16,
    /// The most inbound peers at once (`--maxconnections`); static peers are dialed
    /// regardless.
    pub max_inbound: usize,
    /// The static peers at start-up.
    pub static_nodes: Vec<NodeUrl>,
}

/// The redial delay of one static peer: 0.5 s after the first failure, doubling up to 10 s,
/// back to 0.5 s after a connection that lasted 30 s.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Backoff {
    delay: Duration,
}

impl Default for Backoff {
    fn default() -> Backoff {
        Backoff { delay: BACKOFF_MIN }
    }
}

impl Backoff {
    /// The wait before the next dial, after a dial that failed (`lasted` is `None`) or a
    /// connection that lasted `lasted`.
    pub fn next(&mut self, lasted: Option<Duration>) -> Duration {
        if lasted.is_some_and(|d| d >= BACKOFF_RESET) {
            self.delay = BACKOFF_MIN;
        }
        let d = self.delay;
        self.delay = (self.delay * 2).min(BACKOFF_MAX);
        d
    }
}

/// Parses a static peers file: a JSON array of kni URL strings. Fails naming the file and
/// the first bad entry (its index and text) with the parser's reason.
pub fn parse_static_nodes(path: &Path, bytes: &[u8]) -> Result<Vec<NodeUrl>, String> {
    let shown = path.display();
    let entries: Vec<serde_json::Value> = serde_json::from_slice(bytes)
        .map_err(|e| format!("static nodes {shown}: not a JSON array of kni URLs: {e}"))?;
    entries
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let s = v
                .as_str()
                .ok_or_else(|| format!("static nodes {shown}: entry {i} ({v}): not a string"))?;
            parse_kni(s).map_err(|e| format!("static nodes {shown}: entry {i} ({s:?}): {e}"))
        })
        .collect()
}

/// The static peers of a node: those of `file` (`--staticnodes`, which must exist), else
/// those of `<datadir>/static-nodes.json` when it exists, else none.
pub fn load_static_nodes(file: Option<&Path>, datadir: &Path) -> Result<Vec<NodeUrl>, String> {
    let default = datadir.join(STATIC_NODES_FILE);
    let path = match file {
        Some(f) => f,
        None if default.exists() => &default,
        None => return Ok(Vec::new()),
    };
    let bytes = std::fs::read(path).map_err(|e| format!("static nodes {}: {e}", path.display()))?;
    parse_static_nodes(path, &bytes)
}

/// One static peer and when to dial it next.
struct StaticEntry {
    url: NodeUrl,
    backoff: Backoff,
    next_dial: Instant,
    dialing: bool,
}

/// Every open socket (handshaking or connected), so that stop can shut them all.
#[derive(Default)]
struct Sockets {
    next: u64,
    open: HashMap<u64, TcpStream>,
    /// Set by stop: no socket is registered after it.
    closed: bool,
}

/// The peer server. Shared (`Arc`) by its service, the API handles and the protocol.
pub struct PeerServer {
    identity: Arc<NodeIdentity>,
    me: NodeId,
    protocol: Arc<dyn Protocol>,
    bus: Arc<Bus>,
    cfg: ServerConfig,
    peers: Mutex<BTreeMap<NodeId, Arc<Peer>>>,
    statics: Mutex<BTreeMap<NodeId, StaticEntry>>,
    listening: Arc<AtomicBool>,
    local: Mutex<Option<SocketAddr>>,
    stopping: StopFlag,
    sockets: Mutex<Sockets>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    workers: Mutex<Vec<Worker>>,
    /// The places of inbound connections not yet peers (see [`MAX_HANDSHAKING`]).
    handshaking: Places,
    /// When the last "too many handshakes" warning was logged (one per 10 s at most).
    flood_warned: Mutex<Option<Instant>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The first 16 hex digits of a node id, as logs show it.
fn short(id: &NodeId) -> String {
    id.to_hex()[..16].to_string()
}

/// The address a `--p2paddr` host and port bind: an IP literal (IPv6 with or without
/// brackets) or a name, resolved.
fn bind_addr(host: &str, port: u16) -> Result<SocketAddr, String> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return Ok(SocketAddr::new(ip, port));
    }
    (bare, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .next()
        .ok_or_else(|| format!("cannot resolve {host}: no address"))
}

/// Whether the connection was dialed (to which id) or accepted.
#[derive(Clone, Copy)]
enum Direction {
    Dialed(NodeId),
    Accepted,
}

impl PeerServer {
    /// A server for `identity` speaking `protocol`, publishing peer events on `bus`. Nothing
    /// listens or dials until [`PeerServer::start`]. `listening` is the flag `net_listening`
    /// reads.
    pub fn new(
        identity: Arc<NodeIdentity>,
        protocol: Arc<dyn Protocol>,
        bus: Arc<Bus>,
        cfg: ServerConfig,
        listening: Arc<AtomicBool>,
    ) -> Arc<PeerServer> {
        let me = NodeId::parse_hex(identity.id()).expect("the node id is 128 hex digits");
        let server = Arc::new(PeerServer {
            identity,
            me,
            protocol,
            bus,
            cfg,
            peers: Mutex::new(BTreeMap::new()),
            statics: Mutex::new(BTreeMap::new()),
            listening,
            local: Mutex::new(None),
            stopping: StopFlag::new(),
            sockets: Mutex::new(Sockets::default()),
            threads: Mutex::new(Vec::new()),
            workers: Mutex::new(Vec::new()),
            handshaking: Arc::new(Mutex::new(Slots::new(
                MAX_HANDSHAKING,
                MAX_HANDSHAKING_PER_ADDRESS,
            ))),
            flood_warned: Mutex::new(None),
        });
        for url in server.cfg.static_nodes.clone() {
            server.add_static(url);
        }
        server
    }

    /// Binds the listener, logs `P2P listening kni=...`, and starts the listener and dialer
    /// threads. Fails when the address does not resolve or cannot be bound.
    pub fn start(self: &Arc<Self>) -> Result<(), String> {
        let want = bind_addr(&self.cfg.host, self.cfg.port)?;
        let listener =
            TcpListener::bind(want).map_err(|e| format!("cannot listen on {want}: {e}"))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| format!("cannot listen on {want}: {e}"))?;
        let bound = listener
            .local_addr()
            .map_err(|e| format!("cannot listen on {want}: {e}"))?;
        *lock(&self.local) = Some(bound);
        self.listening.store(true, Ordering::SeqCst);
        log::info("P2P listening", &[("kni", &self.identity.kni(bound, 0))]);
        let me = self.clone();
        let listen = Worker::spawn("p2p-listen", move |stop| me.accept_loop(listener, stop));
        let me = self.clone();
        let dial = Worker::spawn("p2p-dial", move |stop| me.dial_loop(stop));
        let mut workers = lock(&self.workers);
        for w in [listen, dial] {
            match w {
                Ok(w) => workers.push(w),
                Err(e) => {
                    drop(workers);
                    self.stop();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Closes the listener, stops the dialer, disconnects every peer ("node shutting down"),
    /// shuts every socket and joins every thread. Idempotent.
    pub fn stop(&self) {
        self.stopping.set();
        let workers: Vec<Worker> = lock(&self.workers).drain(..).collect();
        for mut w in workers {
            w.stop();
        }
        self.listening.store(false, Ordering::SeqCst);
        for p in self.peers() {
            p.disconnect("node shutting down");
        }
        // Writers send their Disconnect and close; a peer that does not go in time is cut.
        let deadline = Instant::now() + STOP_GRACE;
        while !lock(&self.peers).is_empty() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        {
            let mut socks = lock(&self.sockets);
            socks.closed = true;
            for s in socks.open.values() {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let threads: Vec<JoinHandle<()>> = lock(&self.threads).drain(..).collect();
        for t in threads {
            let _ = t.join();
        }
    }

    /// The bound listening address, while the listener runs.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        if self.listening.load(Ordering::SeqCst) {
            *lock(&self.local)
        } else {
            None
        }
    }

    /// How many peers are connected.
    pub fn peer_count(&self) -> usize {
        lock(&self.peers).len()
    }

    /// Adds `url` to the static set: the dialer keeps it connected. False when it names this
    /// node; adding an id already present changes nothing and is true.
    pub fn add_static(&self, url: NodeUrl) -> bool {
        if url.id == self.me {
            return false;
        }
        let mut statics = lock(&self.statics);
        if statics.contains_key(&url.id) {
            return true;
        }
        log::info(
            "Static peer added",
            &[("id", &short(&url.id)), ("kni", &url.to_string())],
        );
        statics.insert(
            url.id,
            StaticEntry {
                url,
                backoff: Backoff::default(),
                next_dial: Instant::now(),
                dialing: false,
            },
        );
        true
    }

    /// Forgets `id` as a static peer and disconnects it ("requested") if connected. False
    /// only for this node's own id.
    pub fn remove_static(&self, id: NodeId) -> bool {
        if id == self.me {
            return false;
        }
        let mut statics = lock(&self.statics);
        if statics.remove(&id).is_some() {
            log::info("Static peer removed", &[("id", &short(&id))]);
        }
        if let Some(p) = lock(&self.peers).get(&id) {
            p.disconnect("requested");
        }
        drop(statics);
        true
    }

    /// Starts a connection thread, unless the server is stopping.
    fn spawn_conn(self: &Arc<Self>, f: impl FnOnce() + Send + 'static) {
        if self.stopping.is_set() {
            return;
        }
        let mut threads = lock(&self.threads);
        threads.retain(|t| !t.is_finished());
        match std::thread::Builder::new().name("p2p-conn".into()).spawn(f) {
            Ok(t) => threads.push(t),
            Err(e) => log::error("Cannot start a peer thread", &[("err", &e.to_string())]),
        }
    }

    fn accept_loop(self: Arc<Self>, listener: TcpListener, stop: StopFlag) {
        loop {
            match listener.accept() {
                Ok((stream, from)) => {
                    let counted = match slots::enter(&self.handshaking, from.ip(), &stream) {
                        Entry::Admitted(place) => place,
                        Entry::Displacing(place) => {
                            self.warn_flood(
                                from,
                                "the oldest of the same or a larger share closed",
                            );
                            place
                        }
                        Entry::Refused => {
                            drop(stream);
                            self.warn_flood(from, "the new one closed");
                            continue;
                        }
                    };
                    let me = self.clone();
                    self.spawn_conn(move || {
                        let _ = me.run_connection(stream, Direction::Accepted, Some(counted));
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    if stop.wait(POLL) {
                        break;
                    }
                }
                Err(e) => {
                    // Out of descriptors and the like: wait rather than spin.
                    log::warn("P2P accept failed", &[("err", &e.to_string())]);
                    if stop.wait(POLL) {
                        break;
                    }
                }
            }
        }
        self.listening.store(false, Ordering::SeqCst);
    }

    fn dial_loop(self: Arc<Self>, stop: StopFlag) {
        while !stop.wait(POLL) {
            let now = Instant::now();
            let due: Vec<NodeUrl> = {
                let mut statics = lock(&self.statics);
                let peers = lock(&self.peers);
                statics
                    .iter_mut()
                    .filter(|(id, e)| {
                        !e.dialing
                            && e.url.addr.is_some()
                            && now >= e.next_dial
                            && !peers.contains_key(id)
                    })
                    .map(|(_, e)| {
                        e.dialing = true;
                        e.url.clone()
                    })
                    .collect()
            };
            for url in due {
                let me = self.clone();
                self.spawn_conn(move || me.dial(url));
            }
        }
    }

    /// Dials a static peer once, runs the connection to its end, and schedules the next dial.
    fn dial(self: Arc<Self>, url: NodeUrl) {
        let addr = url
            .addr
            .expect("only static peers with an address are dialed");
        let lasted = match TcpStream::connect_timeout(&addr, DIAL_TIMEOUT) {
            Ok(stream) => self.run_connection(stream, Direction::Dialed(url.id), None),
            Err(e) => {
                log::debug(
                    "Peer dial failed",
                    &[
                        ("id", &short(&url.id)),
                        ("addr", &addr.to_string()),
                        ("err", &e.to_string()),
                    ],
                );
                None
            }
        };
        if let Some(e) = lock(&self.statics).get_mut(&url.id) {
            e.dialing = false;
            e.next_dial = Instant::now() + e.backoff.next(lasted);
        }
    }

    /// Registers a socket for stop; `None` once the server is stopping.
    fn register(&self, stream: &TcpStream) -> Option<u64> {
        let clone = stream.try_clone().ok()?;
        let mut socks = lock(&self.sockets);
        if socks.closed {
            return None;
        }
        let n = socks.next;
        socks.next += 1;
        socks.open.insert(n, clone);
        Some(n)
    }

    /// Runs one connection: handshake, status exchange, admission, then the peer's life.
    /// Returns how long it was a connected peer (`None`: it never became one).
    fn run_connection(
        self: &Arc<Self>,
        stream: TcpStream,
        dir: Direction,
        counted: Option<Place>,
    ) -> Option<Duration> {
        let key = self.register(&stream)?;
        let result = self.connect(stream, dir, counted);
        lock(&self.sockets).open.remove(&key);
        result
    }

    /// Logs that inbound connections are being closed unanswered (at most every 10 s).
    fn warn_flood(&self, from: SocketAddr, what: &str) {
        let mut last = lock(&self.flood_warned);
        if last.is_some_and(|t| t.elapsed() < Duration::from_secs(10)) {
            return;
        }
        *last = Some(Instant::now());
        log::warn(
            "Too many inbound connections in their handshake",
            &[
                ("limit", &MAX_HANDSHAKING.to_string()),
                ("per_address", &MAX_HANDSHAKING_PER_ADDRESS.to_string()),
                ("addr", &from.to_string()),
                ("closed", what),
            ],
        );
    }

    /// `counted`: the inbound connection's place among those handshaking, given up once it
    /// is a peer or gone.
    fn connect(
        self: &Arc<Self>,
        stream: TcpStream,
        dir: Direction,
        counted: Option<Place>,
    ) -> Option<Duration> {
        let inbound = matches!(dir, Direction::Accepted);
        let addr = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        let role = match dir {
            Direction::Dialed(id) => Role::Dialer { expected: id },
            Direction::Accepted => Role::Listener,
        };
        let _ = stream.set_nonblocking(false);
        let mut conn = match handshake(stream, &self.identity, role, HANDSHAKE_TIMEOUT) {
            Ok(c) => c,
            Err(e) => {
                log::warn(
                    "Peer handshake failed",
                    &[
                        ("addr", &addr),
                        ("inbound", &inbound.to_string()),
                        ("reason", &e.to_string()),
                    ],
                );
                return None;
            }
        };
        let id = conn.remote_id;
        let refuse = |writer: &mut SecureWriter, reason: &str, tell: bool| {
            if tell {
                let _ = writer.send(&encode(&Message::Disconnect {
                    reason: reason.to_string(),
                }));
            }
            writer.shutdown();
            log::warn(
                "Peer refused",
                &[
                    ("id", &short(&id)),
                    ("addr", &addr),
                    ("inbound", &inbound.to_string()),
                    ("reason", reason),
                ],
            );
        };
        if id == self.me {
            refuse(&mut conn.writer, "connected to ourselves", true);
            return None;
        }
        let _ = conn.writer.set_write_timeout(Some(WRITE_TIMEOUT));
        let mut ours = self.protocol.local_status();
        ours.listen_port = lock(&self.local).map(|a| a.port()).unwrap_or(0);
        if let Err(e) = conn.writer.send(&encode(&Message::Status(ours.clone()))) {
            refuse(&mut conn.writer, &format!("sending status: {e}"), false);
            return None;
        }
        let _ = conn.reader.set_read_timeout(Some(STATUS_TIMEOUT));
        let theirs: Status = match conn.reader.recv().map(|b| decode(&b)) {
            Ok(Ok(Message::Status(s))) => s,
            Ok(Ok(Message::Disconnect { reason })) => {
                let why = format!("disconnected by the peer: {reason}");
                refuse(&mut conn.writer, &why, false);
                return None;
            }
            Ok(Ok(other)) => {
                let why = format!("expected a status message, got {}", other.kind());
                refuse(&mut conn.writer, &why, true);
                return None;
            }
            Ok(Err(e)) => {
                refuse(&mut conn.writer, &format!("bad status: {e}"), true);
                return None;
            }
            Err(e) => {
                refuse(&mut conn.writer, &format!("status: {e}"), true);
                return None;
            }
        };
        if let Err(m) = check_status(&ours, &theirs) {
            refuse(&mut conn.writer, &m.to_string(), true);
            return None;
        }
        let link = PeerLink {
            id,
            inbound,
            is_static: !inbound,
            trusted: false,
            node_type: NodeType::Unknown,
            local_addr: conn.local_addr,
            remote_addr: conn.remote_addr,
        };
        // Past the handshake and the status exchange: no longer counted as handshaking.
        drop(counted);
        let (peer, rx) = Peer::new(link, &theirs);
        // Admission, atomic with the insertion (lock order: statics, then peers).
        let refused = {
            let statics = lock(&self.statics);
            let mut peers = lock(&self.peers);
            if peers.contains_key(&id) {
                Some("already connected".to_string())
            } else if !inbound && !statics.contains_key(&id) {
                Some("no longer a static peer".to_string())
            } else if inbound
                && peers.values().filter(|p| p.link.inbound).count() >= self.cfg.max_inbound
            {
                Some(format!(
                    "too many peers (--maxconnections {})",
                    self.cfg.max_inbound
                ))
            } else if self.stopping.is_set() {
                Some("node shutting down".to_string())
            } else {
                peers.insert(id, peer.clone());
                None
            }
        };
        if let Some(why) = refused {
            refuse(&mut conn.writer, &why, true);
            return None;
        }
        let connected = Instant::now();
        log::info(
            "Peer connected",
            &[
                ("id", &short(&id)),
                ("addr", &addr),
                ("inbound", &inbound.to_string()),
                ("name", &peer.name),
            ],
        );
        let event = Arc::new(PeerEvent {
            id: id.to_hex(),
            remote: addr.clone(),
            inbound,
        });
        self.bus.publish(Event::PeerAdded(event.clone()));
        self.protocol.on_connected(&peer);

        let writer = {
            let peer = peer.clone();
            let w = conn.writer;
            std::thread::Builder::new()
                .name("p2p-write".into())
                .spawn(move || write_loop(w, rx, peer))
        };
        let reason = match writer {
            Ok(writer) => {
                let reason = self.read_loop(&mut conn.reader, &peer);
                peer.disconnect(&reason);
                let _ = writer.join();
                peer.close_reason().unwrap_or(reason)
            }
            Err(e) => format!("cannot start the writer thread: {e}"),
        };
        {
            let mut peers = lock(&self.peers);
            if peers.get(&id).is_some_and(|p| Arc::ptr_eq(p, &peer)) {
                peers.remove(&id);
            }
        }
        self.protocol.on_disconnected(&peer);
        self.bus.publish(Event::PeerDropped(event));
        log::info(
            "Peer dropped",
            &[("id", &short(&id)), ("addr", &addr), ("reason", &reason)],
        );
        Some(connected.elapsed())
    }

    /// Reads until the connection ends; returns why it ended.
    fn read_loop(&self, reader: &mut super::transport::SecureReader, peer: &Arc<Peer>) -> String {
        let _ = reader.set_read_timeout(Some(IDLE_TIMEOUT));
        loop {
            if peer.is_closing() {
                return peer.close_reason().unwrap_or_else(|| "disconnected".into());
            }
            let bytes = match reader.recv() {
                Ok(b) => b,
                Err(_) if peer.is_closing() => {
                    return peer.close_reason().unwrap_or_else(|| "disconnected".into())
                }
                Err(TransportError::Timeout("a message")) => {
                    return format!("no message for {} s", IDLE_TIMEOUT.as_secs())
                }
                Err(e) => return e.to_string(),
            };
            match decode(&bytes) {
                Ok(Message::Ping) => {
                    peer.send(&Message::Pong);
                }
                Ok(Message::Pong) => {}
                Ok(Message::Disconnect { reason }) => {
                    return format!("disconnected by the peer: {reason}")
                }
                Ok(Message::Status(_)) => {
                    return "protocol error: status message after the handshake".into()
                }
                Ok(msg) => {
                    if let Err(e) = self.protocol.on_message(peer, msg) {
                        return e;
                    }
                }
                Err(e) => return format!("undecodable message: {e}"),
            }
        }
    }
}

/// Drains a peer's send queue into the socket and pings every [`PING_INTERVAL`]; on a
/// `Close` (or a closing peer) sends `Disconnect` and shuts the socket, which ends the reader.
fn write_loop(mut w: SecureWriter, rx: Receiver<Outgoing>, peer: Arc<Peer>) {
    let mut last_ping = Instant::now();
    let disconnect = |w: &mut SecureWriter, reason: String| {
        let _ = w.send(&encode(&Message::Disconnect { reason }));
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(500)) {
            Ok(Outgoing::Message(bytes)) => {
                let sent = w.send(&bytes);
                peer.written(bytes.len());
                if let Err(e) = sent {
                    peer.disconnect(&format!("write failed: {e}"));
                    break;
                }
            }
            Ok(Outgoing::Close(reason)) => {
                disconnect(&mut w, reason);
                break;
            }
            Err(RecvTimeoutError::Timeout) => {
                if peer.is_closing() {
                    let reason = peer.close_reason().unwrap_or_else(|| "disconnected".into());
                    disconnect(&mut w, reason);
                    break;
                }
                if last_ping.elapsed() >= PING_INTERVAL {
                    last_ping = Instant::now();
                    if let Err(e) = w.send(&encode(&Message::Ping)) {
                        peer.disconnect(&format!("write failed: {e}"));
                        break;
                    }
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    w.shutdown();
}

impl PeerSet for PeerServer {
    fn peers(&self) -> Vec<Arc<Peer>> {
        lock(&self.peers).values().cloned().collect()
    }
}

/// The server as a node service (`p2p`).
pub struct PeerService(pub Arc<PeerServer>);

impl Service for PeerService {
    fn name(&self) -> &'static str {
        "p2p"
    }

    fn start(&mut self) -> Result<(), String> {
        self.0.start()
    }

    fn stop(&mut self) {
        self.0.stop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_backoff_doubles_to_ten_seconds_and_a_long_connection_resets_it() {
        let mut b = Backoff::default();
        let got: Vec<u64> = (0..8).map(|_| b.next(None).as_millis() as u64).collect();
        assert_eq!(got, [500, 1000, 2000, 4000, 8000, 10000, 10000, 10000]);
        // A short connection does not reset it.
        assert_eq!(b.next(Some(Duration::from_secs(29))).as_millis(), 10000);
        // One that lasted 30 s does.
        assert_eq!(b.next(Some(BACKOFF_RESET)).as_millis(), 500);
        assert_eq!(b.next(None).as_millis(), 1000);
    }

    fn id_hex(b: u8) -> String {
        hex::encode([b; 64])
    }

    #[test]
    fn static_nodes_are_a_json_array_of_kni_urls() {
        let path = Path::new("/dd/static-nodes.json");
        let text = format!(
            r#"["kni://{}@127.0.0.1:30303?discport=0", "kni://{}@[::1]:1"]"#,
            id_hex(1),
            id_hex(2)
        );
        let got = parse_static_nodes(path, text.as_bytes()).unwrap();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].id, NodeId([1; 64]));
        assert_eq!(got[0].addr, Some(([127, 0, 0, 1], 30303).into()));
        assert_eq!(got[1].addr.unwrap().port(), 1);
        assert!(parse_static_nodes(path, b"[]").unwrap().is_empty());

        let bad = format!(
            r#"["kni://{}@127.0.0.1:1", "kni://abc@127.0.0.1:1"]"#,
            id_hex(1)
        );
        assert_eq!(
            parse_static_nodes(path, bad.as_bytes()).unwrap_err(),
            "static nodes /dd/static-nodes.json: entry 1 (\"kni://abc@127.0.0.1:1\"): invalid kni: invalid node ID (encoding/hex: odd length hex string)"
        );
        assert_eq!(
            parse_static_nodes(path, b"[1]").unwrap_err(),
            "static nodes /dd/static-nodes.json: entry 0 (1): not a string"
        );
        assert!(parse_static_nodes(path, b"{}")
            .unwrap_err()
            .starts_with("static nodes /dd/static-nodes.json: not a JSON array of kni URLs: "));
    }

    #[test]
    fn static_nodes_come_from_the_flag_or_else_the_datadir_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(load_static_nodes(None, dir.path()).unwrap().is_empty());
        let missing = dir.path().join("nope.json");
        assert!(load_static_nodes(Some(&missing), dir.path())
            .unwrap_err()
            .starts_with(&format!("static nodes {}: ", missing.display())));
        let text = format!(r#"["kni://{}@127.0.0.1:5"]"#, id_hex(7));
        std::fs::write(dir.path().join(STATIC_NODES_FILE), text).unwrap();
        assert_eq!(load_static_nodes(None, dir.path()).unwrap().len(), 1);
    }

    #[test]
    fn bind_addresses_take_brackets_and_names() {
        assert_eq!(bind_addr("0.0.0.0", 5).unwrap(), ([0, 0, 0, 0], 5).into());
        assert_eq!(bind_addr("[::1]", 5).unwrap().to_string(), "[::1]:5");
        assert_eq!(bind_addr("::", 0).unwrap().to_string(), "[::]:0");
        assert!(bind_addr("localhost", 1).is_ok());
    }
}
