//! The chain's side of the peer protocol, on top of the server's peers (see [`super::peer`]):
//!
//! - **serving**: a peer's `GetBlocks` is answered with the canonical blocks asked for, at
//!   most [`MAX_BLOCKS`] and about [`MAX_SERVE_BYTES`] of them (fewer means "that is what I
//!   have, or what fits"), at the pace [`super::serve_limit`] allows the peer;
//! - **sync**: when a peer's head is beyond ours, the blocks after our head are fetched from
//!   it in batches of [`SYNC_BATCH`], the next batch asked for while the previous one is
//!   checked and stored (`Chain::insert_blocks`: seals, signatures, state roots). A block
//!   that does not decode drops the peer (`bad block #N: <why>`) with nothing of its batch
//!   stored; one the chain refuses drops it too, the blocks before it in the batch, which
//!   passed every check, being kept (`insert_blocks` stores the valid prefix). A peer that
//!   does not answer within [`REQUEST_TIMEOUT`] is dropped, an empty answer ends the attempt,
//!   and the sync goes on from another peer ahead of us, if any. One sync at a time. (Every
//!   block after genesis scores 1, so "ahead" is a higher head number.)
//! - **block propagation**: each new head (sealed here or inserted from a peer) is sent as a
//!   `NewBlock`, encoded once, to every peer whose known head is below it; a `NewBlock` that
//!   extends our head is inserted at once, one further ahead starts a sync. A node announces
//!   a block only when it first stores it and never to the peer it came from, so a block
//!   crosses each link once and a line of nodes carries it to the end;
//! - **transaction propagation**: transactions that enter the pool are sent in batches (a few
//!   milliseconds or [`TX_BATCH`] of them) to the peers not known to have them (the last
//!   [`KNOWN_TXS`] hashes per peer); received ones enter our pool, which announces them
//!   onward. That is how a follower forwards what it is sent to the validator.
//!
//! The reader threads of the peers (which call [`Protocol`]) never do slow work: serving,
//! syncing, propagation and the admission of received transactions run on the threads of the
//! service [`ChainProtocol::service`]. Only a `NewBlock` that extends the head is inserted
//! on the reader thread: it is one block and the fastest path to the next peer. When a work
//! queue is full (or the service is not running) the work is done on the reader thread
//! instead: slower for that peer, but nothing is lost and nothing waits forever.
//!
//! Wiring, for the node: `let p = ChainProtocol::new(chain, bus)`; hand `p` to the server as
//! its `Protocol`; `p.attach(Arc::downgrade(&server_as_peer_set))`; start `p.service()`
//! before the server, so that `Services::stop_all` stops the server (no more messages)
//! before the protocol's workers.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use super::peer::{Peer, PeerHead, PeerSet, Protocol};
use super::serve_limit::{ServeLimit, Verdict};
use super::url::NodeId;
use super::wire::{encode, Message, Status, MAX_BLOCKS, MAX_TXS, PROTOCOL_NAME, PROTOCOL_VERSION};
use crate::chain::pool::PoolError;
use crate::chain::{Chain, SubmitError};
use crate::events::{Bus, Event, Gone, Kinds, Subscriber};
use crate::service::{Service, StopFlag, Worker};
use crate::types::block::Block;
use crate::types::transaction::Transaction;

/// Blocks asked for in one `GetBlocks` of a sync.
pub const SYNC_BATCH: u64 = 2048;
/// About the most block RLP one `Blocks` answer holds (the first block always goes, whatever
/// its size): half the transport's 16 MiB frame.
pub const MAX_SERVE_BYTES: usize = 8 << 20;
/// How long a sync waits for a peer's `Blocks` before it drops the peer.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Transaction hashes remembered per peer as known to it.
pub const KNOWN_TXS: usize = 32_768;
/// Most transactions in one `Transactions` this node sends.
pub const TX_BATCH: usize = 4096;
/// About the most bytes of transactions in one `Transactions` this node sends.
pub const TX_BATCH_BYTES: usize = 4 << 20;
/// How long new pending transactions are gathered before they are sent.
pub const TX_BATCH_WAIT: Duration = Duration::from_millis(5);

/// `GetBlocks` waiting to be served.
const SERVE_QUEUE: usize = 256;
/// Batches of received transactions waiting to be admitted.
const TX_IN_QUEUE: usize = 64;
/// Events a propagation worker may fall behind before the bus cuts it off.
const EVENT_QUEUE: usize = 1 << 18;
/// How often a waiting worker looks at its stop flag (stop also wakes it at once).
const TICK: Duration = Duration::from_millis(100);
/// How often the sync worker looks for a peer ahead of us without being told.
const SYNC_CHECK: Duration = Duration::from_secs(1);
/// New heads announced one by one after a burst; past that only the newest is (peers
/// further behind sync).
const HEAD_BURST: usize = 32;

/// A bounded set of hashes that forgets the oldest first: the transactions a peer is known
/// to have.
#[derive(Debug)]
pub struct KnownSet {
    set: HashSet<[u8; 32]>,
    order: VecDeque<[u8; 32]>,
    cap: usize,
}

impl KnownSet {
    /// An empty set holding at most `cap` (at least 1) hashes.
    pub fn new(cap: usize) -> KnownSet {
        KnownSet {
            set: HashSet::new(),
            order: VecDeque::new(),
            cap: cap.max(1),
        }
    }

    /// Adds `h`; true when it was not in the set. The oldest hash goes when the set is full.
    pub fn insert(&mut self, h: [u8; 32]) -> bool {
        if !self.set.insert(h) {
            return false;
        }
        self.order.push_back(h);
        if self.order.len() > self.cap {
            if let Some(old) = self.order.pop_front() {
                self.set.remove(&old);
            }
        }
        true
    }

    pub fn contains(&self, h: &[u8; 32]) -> bool {
        self.set.contains(h)
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// Splits `items` (raw transactions) into runs of at most `max_count` items and about
/// `max_bytes` (a run holds at least one item): the `Transactions` messages to send. Returns
/// the end index of each run.
pub fn batch_ends(items: &[&[u8]], max_count: usize, max_bytes: usize) -> Vec<usize> {
    let mut ends = Vec::new();
    let (mut count, mut bytes) = (0usize, 0usize);
    for (i, it) in items.iter().enumerate() {
        if count > 0 && (count == max_count || bytes + it.len() > max_bytes) {
            ends.push(i);
            count = 0;
            bytes = 0;
        }
        count += 1;
        bytes += it.len();
    }
    if count > 0 {
        ends.push(items.len());
    }
    ends
}

/// The reason a peer is dropped for block `number`: `bad block #N: <why>`, without the
/// `block N: ` that the chain's own reasons start with.
pub fn bad_block_reason(number: u64, why: &str) -> String {
    let own = format!("block {number}: ");
    format!(
        "bad block #{number}: {}",
        why.strip_prefix(&own).unwrap_or(why)
    )
}

/// Where a running sync is: block numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SyncProgress {
    /// Our head when the sync started.
    pub starting: u64,
    /// Our head now.
    pub current: u64,
    /// The head of the peer it syncs from.
    pub highest: u64,
}

/// What this node knows of one peer.
struct PeerState {
    peer: Arc<Peer>,
    known_txs: KnownSet,
    /// The peer's head when a sync from it last ended without a block gained: no new
    /// attempt until it announces a further head.
    failed_at: Option<u64>,
    /// How fast it may have blocks served.
    serve_limit: ServeLimit,
}

impl PeerState {
    fn new(peer: &Arc<Peer>) -> PeerState {
        PeerState {
            peer: peer.clone(),
            known_txs: KnownSet::new(KNOWN_TXS),
            failed_at: None,
            serve_limit: ServeLimit::new(Instant::now()),
        }
    }
}

/// Where the `Blocks` answers of the peer a sync waits on go.
type Answers = mpsc::Sender<Vec<Vec<u8>>>;

/// A `GetBlocks` to serve.
struct ServeJob {
    peer: Arc<Peer>,
    from: u64,
    count: u64,
}

/// The work queues' receiving ends, taken by the service when it starts.
struct Queues {
    serve: Receiver<ServeJob>,
    txs_in: Receiver<Vec<Transaction>>,
}

/// The bus was closed: the node is stopping.
struct Closed;

/// The peer protocol over a chain.
pub struct ChainProtocol {
    chain: Arc<Chain>,
    bus: Arc<Bus>,
    peers: OnceLock<Weak<dyn PeerSet>>,
    states: Mutex<HashMap<NodeId, PeerState>>,
    /// Set (and the sync worker woken) when a peer may be ahead of us.
    sync_wanted: Mutex<bool>,
    sync_cv: Condvar,
    /// The peer a sync waits on for `Blocks`, and where its answers go.
    expecting: Mutex<Option<(Arc<Peer>, Answers)>>,
    /// The sync running now: the head it started from and the peer it syncs from.
    syncing: Mutex<Option<(u64, Arc<Peer>)>>,
    serve: SyncSender<ServeJob>,
    txs_in: SyncSender<Vec<Transaction>>,
    queues: Mutex<Option<Queues>>,
    /// Peers connected since the transaction worker last looked: they are sent our pending
    /// transactions.
    newcomers: Mutex<Vec<Arc<Peer>>>,
    /// The transaction worker's subscription, to wake it for a newcomer or at stop.
    tx_events: Mutex<Option<Arc<Subscriber>>>,
    stopping: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Logs that `peer` is dropped for `reason` (a warning) and gives the reason back, for the
/// caller to disconnect with.
fn dropping(peer: &Peer, reason: String) -> String {
    crate::log::warn(
        "Dropping a peer",
        &[("peer", &short(peer)), ("reason", &reason)],
    );
    reason
}

/// A peer's id as logs show it (the first 16 hex digits).
fn short(peer: &Peer) -> String {
    peer.link.id.to_hex()[..16].to_string()
}

/// Why a sync attempt ended early.
enum SyncEnd {
    /// The node is stopping, or the peer left.
    Quit,
    /// The peer was dropped (it has been told why).
    Dropped,
}

impl ChainProtocol {
    /// The protocol of `chain`, which learns of new heads and pending transactions on `bus`.
    /// Its workers run once [`ChainProtocol::service`] is started.
    pub fn new(chain: Arc<Chain>, bus: Arc<Bus>) -> Arc<ChainProtocol> {
        let (serve, serve_rx) = mpsc::sync_channel(SERVE_QUEUE);
        let (txs_in, txs_in_rx) = mpsc::sync_channel(TX_IN_QUEUE);
        Arc::new(ChainProtocol {
            chain,
            bus,
            peers: OnceLock::new(),
            states: Mutex::new(HashMap::new()),
            sync_wanted: Mutex::new(false),
            sync_cv: Condvar::new(),
            expecting: Mutex::new(None),
            syncing: Mutex::new(None),
            serve,
            txs_in,
            queues: Mutex::new(Some(Queues {
                serve: serve_rx,
                txs_in: txs_in_rx,
            })),
            newcomers: Mutex::new(Vec::new()),
            tx_events: Mutex::new(None),
            stopping: AtomicBool::new(false),
        })
    }

    /// The sync running now, if any: the head it started from, our head, and the head of the
    /// peer it syncs from (`chain_syncing`).
    pub fn progress(&self) -> Option<SyncProgress> {
        let (starting, peer) = lock(&self.syncing).clone()?;
        Some(SyncProgress {
            starting,
            current: self.chain.head_number(),
            highest: peer.head().number,
        })
    }

    /// Gives the protocol the peer set it broadcasts to (the server, which holds the
    /// protocol: hence a weak reference). Only the first call counts.
    pub fn attach(&self, peers: Weak<dyn PeerSet>) {
        let _ = self.peers.set(peers);
    }

    /// The service running the protocol's workers (threads `p2p-sync`, `p2p-serve`,
    /// `p2p-blocks`, `p2p-txs`, `p2p-txs-in`). Start it once, after `attach`; stopping it
    /// stops and joins them all.
    pub fn service(self: &Arc<Self>) -> Box<dyn Service> {
        Box::new(SyncService {
            protocol: self.clone(),
            workers: Vec::new(),
            subscriptions: Vec::new(),
        })
    }

    /// The connected peers (none before `attach` or after the server is gone).
    fn peers(&self) -> Vec<Arc<Peer>> {
        self.peers
            .get()
            .and_then(Weak::upgrade)
            .map(|p| p.peers())
            .unwrap_or_default()
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    /// Runs `f` on what we know of `peer` (a fresh record for a peer not seen yet, or one
    /// that reconnected).
    fn with_state<R>(&self, peer: &Arc<Peer>, f: impl FnOnce(&mut PeerState) -> R) -> R {
        let mut states = lock(&self.states);
        let st = states
            .entry(peer.link.id)
            .or_insert_with(|| PeerState::new(peer));
        if !Arc::ptr_eq(&st.peer, peer) {
            *st = PeerState::new(peer);
        }
        f(st)
    }

    /// The head a peer has once it holds block `number` with `hash`.
    fn head_of(&self, number: u64, hash: [u8; 32]) -> PeerHead {
        PeerHead {
            hash,
            number,
            blockscore: u128::from(self.chain.total_block_score(number)),
        }
    }

    /// Wakes the sync worker: a peer may be ahead of us.
    fn want_sync(&self) {
        *lock(&self.sync_wanted) = true;
        self.sync_cv.notify_one();
    }

    // ---- serving ----

    /// Answers a `GetBlocks`: the blocks from `from`, at most `count`, [`MAX_BLOCKS`] and
    /// about [`MAX_SERVE_BYTES`]; their size is charged to the peer's [`ServeLimit`].
    fn serve_blocks(&self, peer: &Arc<Peer>, from: u64, count: u64) {
        if peer.is_closing() {
            return;
        }
        let count = count.min(MAX_BLOCKS as u64);
        let blocks = match self.chain.blocks_rlp(from, count, MAX_SERVE_BYTES) {
            Ok(b) => b,
            Err(e) => {
                crate::log::error(
                    "Reading blocks for a peer failed",
                    &[("err", &e.to_string())],
                );
                Vec::new()
            }
        };
        let bytes = blocks.iter().map(Vec::len).sum();
        if let Some(st) = lock(&self.states)
            .get_mut(&peer.link.id)
            .filter(|st| Arc::ptr_eq(&st.peer, peer))
        {
            st.serve_limit.served(bytes, Instant::now());
        }
        peer.send(&Message::Blocks { blocks });
    }

    /// Admits a peer's `GetBlocks` at the pace of its [`ServeLimit`]: waits (on the peer's
    /// reader thread, which reads nothing more from it meanwhile) while it is over its rate;
    /// an error (the peer is dropped) when it is far over.
    fn pace_request(&self, peer: &Arc<Peer>) -> Result<(), String> {
        let wait = match self.with_state(peer, |s| s.serve_limit.request(Instant::now())) {
            Verdict::Drop => {
                return Err(dropping(
                    peer,
                    "asks for blocks faster than it may be served".to_string(),
                ))
            }
            Verdict::After(w) => w,
        };
        let until = Instant::now() + wait;
        while !peer.is_closing() && !self.stopping() {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(TICK));
        }
        Ok(())
    }

    // ---- sync ----

    /// The peer furthest ahead of our head that is worth a sync attempt.
    fn best_peer(&self) -> Option<Arc<Peer>> {
        let ours = self.chain.head_number();
        let failed: HashMap<NodeId, u64> = lock(&self.states)
            .iter()
            .filter_map(|(id, s)| s.failed_at.map(|f| (*id, f)))
            .collect();
        self.peers()
            .into_iter()
            .filter(|p| {
                let n = p.head().number;
                !p.is_closing() && n > ours && failed.get(&p.link.id).is_none_or(|f| n > *f)
            })
            .max_by_key(|p| p.head().number)
    }

    /// The sync worker: whenever told (or every [`SYNC_CHECK`]), syncs from the best peer
    /// until none is ahead.
    fn sync_loop(&self, stop: &StopFlag) {
        loop {
            {
                let mut wanted = lock(&self.sync_wanted);
                let deadline = Instant::now() + SYNC_CHECK;
                while !*wanted && !self.stopping() && !stop.is_set() {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    wanted = self
                        .sync_cv
                        .wait_timeout(wanted, left.min(TICK))
                        .unwrap_or_else(|p| p.into_inner())
                        .0;
                }
                *wanted = false;
            }
            if self.stopping() || stop.is_set() {
                return;
            }
            while let Some(peer) = self.best_peer() {
                if self.stopping() || stop.is_set() {
                    return;
                }
                self.sync_from(&peer, stop);
            }
        }
    }

    /// One sync attempt from `peer`: until we reach its head, it has nothing more to give,
    /// or it is dropped.
    fn sync_from(&self, peer: &Arc<Peer>, stop: &StopFlag) {
        let start = self.chain.head_number();
        let started = Instant::now();
        let (tx, rx) = mpsc::channel();
        *lock(&self.syncing) = Some((start, peer.clone()));
        *lock(&self.expecting) = Some((peer.clone(), tx));
        let end = self.run_sync(peer, &rx, stop);
        *lock(&self.expecting) = None;
        *lock(&self.syncing) = None;
        let gained = self.chain.head_number().saturating_sub(start);
        if gained == 0 {
            let at = peer.head().number;
            self.with_state(peer, |s| s.failed_at = Some(at));
        }
        if gained > 0 || end.is_err() {
            crate::log::info(
                "Synced from a peer",
                &[
                    ("peer", &short(peer)),
                    ("blocks", &gained.to_string()),
                    ("head", &self.chain.head_number().to_string()),
                    (
                        "elapsed",
                        &format!("{:.3}s", started.elapsed().as_secs_f64()),
                    ),
                    (
                        "end",
                        match end {
                            Ok(()) => "done",
                            Err(SyncEnd::Quit) => "stopped",
                            Err(SyncEnd::Dropped) => "peer dropped",
                        },
                    ),
                ],
            );
        }
    }

    /// Drops `peer` for `reason`, logged as a warning.
    fn drop_peer(&self, peer: &Peer, reason: &str) {
        peer.disconnect(&dropping(peer, reason.to_string()));
    }

    /// The sync loop proper: one request in flight while the previous answer is inserted.
    fn run_sync(
        &self,
        peer: &Arc<Peer>,
        rx: &Receiver<Vec<Vec<u8>>>,
        stop: &StopFlag,
    ) -> Result<(), SyncEnd> {
        let mut from = self.chain.head_number() + 1;
        if !peer.send(&Message::GetBlocks {
            from,
            count: SYNC_BATCH,
        }) {
            return Err(SyncEnd::Quit);
        }
        loop {
            let raw = self.wait_blocks(peer, rx, stop)?;
            if raw.is_empty() {
                return Ok(());
            }
            if raw.len() as u64 > SYNC_BATCH {
                self.drop_peer(peer, "sent more blocks than asked for");
                return Err(SyncEnd::Dropped);
            }
            let next = from + raw.len() as u64;
            // Ask for the next batch first: the peer reads it while we check this one.
            let more = next <= peer.head().number;
            if more
                && !peer.send(&Message::GetBlocks {
                    from: next,
                    count: SYNC_BATCH,
                })
            {
                return Err(SyncEnd::Quit);
            }
            let mut blocks = Vec::with_capacity(raw.len());
            for (i, r) in raw.iter().enumerate() {
                let number = from + i as u64;
                let b = match Block::decode(r) {
                    Ok(b) => b,
                    Err(e) => {
                        self.drop_peer(peer, &bad_block_reason(number, &e.to_string()));
                        return Err(SyncEnd::Dropped);
                    }
                };
                if b.header.number != number {
                    let why = format!("block {} where {number} was asked for", b.header.number);
                    self.drop_peer(peer, &bad_block_reason(number, &why));
                    return Err(SyncEnd::Dropped);
                }
                blocks.push(b);
            }
            drop(raw);
            if let Some(last) = blocks.last() {
                peer.note_head(self.head_of(last.header.number, last.hash()));
            }
            if let Err(e) = self.chain.insert_blocks(&blocks) {
                // The blocks before the refused one passed every check and are kept.
                let number = self.chain.head_number() + 1;
                self.drop_peer(peer, &bad_block_reason(number, &e));
                return Err(SyncEnd::Dropped);
            }
            if !more {
                return Ok(());
            }
            from = next;
        }
    }

    /// The next `Blocks` from `peer`; drops it after [`REQUEST_TIMEOUT`].
    fn wait_blocks(
        &self,
        peer: &Peer,
        rx: &Receiver<Vec<Vec<u8>>>,
        stop: &StopFlag,
    ) -> Result<Vec<Vec<u8>>, SyncEnd> {
        let asked = Instant::now();
        loop {
            match rx.recv_timeout(TICK) {
                Ok(b) => return Ok(b),
                Err(RecvTimeoutError::Disconnected) => return Err(SyncEnd::Quit),
                Err(RecvTimeoutError::Timeout) => {
                    if self.stopping() || stop.is_set() || peer.is_closing() {
                        return Err(SyncEnd::Quit);
                    }
                    if asked.elapsed() >= REQUEST_TIMEOUT {
                        self.drop_peer(peer, "block request timed out");
                        return Err(SyncEnd::Dropped);
                    }
                }
            }
        }
    }

    /// A `NewBlock` from `peer`: inserted when it extends our head, a sync when it is
    /// further ahead, ignored when we have it.
    fn on_new_block(&self, peer: &Arc<Peer>, raw: &[u8]) -> Result<(), String> {
        let block = Block::decode(raw).map_err(|e| dropping(peer, format!("bad block: {e}")))?;
        let number = block.header.number;
        let hash = block.hash();
        peer.note_head(self.head_of(number, hash));
        let head = self.chain.head_number();
        if number <= head {
            return Ok(());
        }
        if number > head + 1 {
            self.want_sync();
            return Ok(());
        }
        // One on another parent is refused by the chain (it does not reorganize).
        match self.chain.insert_blocks(std::slice::from_ref(&block)) {
            Ok(_) => Ok(()),
            // A sync stored it meanwhile.
            Err(_) if self.chain.head_number() >= number => Ok(()),
            Err(e) => Err(dropping(peer, bad_block_reason(number, &e))),
        }
    }

    // ---- block propagation ----

    /// The next event of `sub` within a tick (`None`: none came). A subscriber cut off for
    /// falling behind is logged as `behind` and replaced by a new one of `kinds`; `Closed`
    /// when the bus is.
    fn next_event(
        &self,
        sub: &mut Arc<Subscriber>,
        kinds: Kinds,
        behind: &str,
    ) -> Result<Option<Event>, Closed> {
        match sub.recv_timeout(TICK) {
            Ok(e) => Ok(e),
            Err(Gone::Closed) => Err(Closed),
            Err(Gone::CutOff) => {
                crate::log::warn(behind, &[]);
                *sub = Arc::new(self.bus.subscribe(kinds, EVENT_QUEUE));
                Ok(None)
            }
        }
    }

    /// The block propagation worker: each new head goes to the peers below it.
    fn blocks_loop(&self, mut sub: Arc<Subscriber>, stop: &StopFlag) {
        loop {
            if self.stopping() || stop.is_set() {
                return;
            }
            let behind = "Block propagation fell behind the new heads";
            let first = match self.next_event(&mut sub, Kinds::NEW_HEAD, behind) {
                Ok(Some(Event::NewHead(h))) => h,
                Ok(_) => continue,
                Err(Closed) => return,
            };
            let mut heads = vec![first];
            while let Ok(Some(e)) = sub.recv_timeout(Duration::ZERO) {
                if let Event::NewHead(h) = e {
                    heads.push(h);
                }
            }
            if heads.len() > HEAD_BURST {
                heads.drain(..heads.len() - 1);
            }
            for h in heads {
                self.announce_block(h.number, h.hash);
            }
        }
    }

    /// Sends block `number` (`hash`) as a `NewBlock` to every peer whose head is below it,
    /// read and encoded once.
    fn announce_block(&self, number: u64, hash: [u8; 32]) {
        let peers: Vec<Arc<Peer>> = self
            .peers()
            .into_iter()
            .filter(|p| !p.is_closing() && p.head().number < number)
            .collect();
        if peers.is_empty() {
            return;
        }
        let block = match self.chain.blocks_rlp(number, 1, usize::MAX) {
            Ok(mut b) if b.len() == 1 => b.remove(0),
            Ok(_) => return,
            Err(e) => {
                crate::log::error("Reading a new block failed", &[("err", &e.to_string())]);
                return;
            }
        };
        let bytes = Arc::new(encode(&Message::NewBlock { block }));
        let head = self.head_of(number, hash);
        for p in peers {
            if p.send_encoded(bytes.clone()) {
                // It has the block now, or will sync to it: not sent again.
                p.note_head(head);
            }
        }
    }

    // ---- transaction propagation ----

    /// The transaction propagation worker: new pending transactions, gathered for
    /// [`TX_BATCH_WAIT`], go to the peers not known to have them; a new peer gets every
    /// pending transaction.
    fn txs_loop(&self, mut sub: Arc<Subscriber>, stop: &StopFlag) {
        loop {
            if self.stopping() || stop.is_set() {
                return;
            }
            let newcomers = std::mem::take(&mut *lock(&self.newcomers));
            if !newcomers.is_empty() {
                let pending = self.chain.pending_hashes();
                for p in &newcomers {
                    self.send_txs(&pending, std::slice::from_ref(p));
                }
            }
            let behind = "Transaction propagation fell behind the pool";
            let first = match self.next_event(&mut sub, Kinds::PENDING_TRANSACTION, behind) {
                Ok(Some(Event::PendingTransaction(h))) => h,
                Ok(Some(_)) => continue,
                Ok(None) => {
                    // Replaced after falling behind: the new subscriber is the one to interrupt.
                    if !lock(&self.tx_events)
                        .as_ref()
                        .is_some_and(|s| Arc::ptr_eq(s, &sub))
                    {
                        *lock(&self.tx_events) = Some(sub.clone());
                    }
                    continue;
                }
                Err(Closed) => return,
            };
            let mut hashes = vec![first];
            let deadline = Instant::now() + TX_BATCH_WAIT;
            while hashes.len() < TX_BATCH {
                let left = deadline.saturating_duration_since(Instant::now());
                match sub.recv_timeout(left) {
                    Ok(Some(Event::PendingTransaction(h))) => hashes.push(h),
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            self.send_txs(&hashes, &self.peers());
        }
    }

    /// Sends those of `hashes` still in the pool to each of `peers` not known to have them,
    /// in messages of at most [`TX_BATCH`] transactions and about [`TX_BATCH_BYTES`].
    fn send_txs(&self, hashes: &[[u8; 32]], peers: &[Arc<Peer>]) {
        let peers: Vec<&Arc<Peer>> = peers.iter().filter(|p| !p.is_closing()).collect();
        if peers.is_empty() || hashes.is_empty() {
            return;
        }
        let raws = self.chain.pending_raw(hashes);
        for p in peers {
            let fresh: Vec<usize> = self.with_state(p, |s| {
                (0..raws.len())
                    .filter(|&i| s.known_txs.insert(raws[i].0))
                    .collect()
            });
            let items: Vec<&[u8]> = fresh.iter().map(|&i| raws[i].1.as_slice()).collect();
            let mut start = 0;
            for end in batch_ends(&items, TX_BATCH.min(MAX_TXS), TX_BATCH_BYTES) {
                let txs = items[start..end].iter().map(|t| t.to_vec()).collect();
                if !p.send(&Message::Transactions { txs }) {
                    break;
                }
                start = end;
            }
        }
    }

    /// A `Transactions` from `peer`: each decoded as `chain_sendRawTransaction` does (one
    /// that does not decode drops the peer), marked known to the peer, and admitted to the
    /// pool by the `p2p-txs-in` worker.
    fn on_transactions(&self, peer: &Arc<Peer>, txs: Vec<Vec<u8>>) -> Result<(), String> {
        let mut decoded = Vec::with_capacity(txs.len());
        for raw in &txs {
            let tx = Transaction::decode(raw)
                .map_err(|e| dropping(peer, format!("bad transaction: {e}")))?;
            decoded.push(tx);
        }
        self.with_state(peer, |s| {
            for tx in &decoded {
                s.known_txs.insert(tx.hash());
            }
        });
        match self.txs_in.try_send(decoded) {
            Ok(()) => {}
            Err(TrySendError::Full(d)) | Err(TrySendError::Disconnected(d)) => self.admit(d),
        }
        Ok(())
    }

    /// Submits received transactions to the pool. Those it has or whose nonce is past are
    /// passed over in silence; other refusals are logged (the chain may have moved on since
    /// the peer checked them).
    fn admit(&self, txs: Vec<Transaction>) {
        for (i, tx) in txs.into_iter().enumerate() {
            // A large batch does not hold up shutdown.
            if i % 1024 == 1023 && self.stopping() {
                return;
            }
            match self.chain.submit(tx) {
                Ok(_) => {}
                Err(SubmitError::Pool(PoolError::Known(_) | PoolError::NonceTooLow)) => {}
                Err(e) => crate::log::debug(
                    "A transaction from a peer was refused",
                    &[("err", &e.to_string())],
                ),
            }
        }
    }
}

impl Protocol for ChainProtocol {
    /// Our chain as a new peer should see it. `listen_port` is 0: the server fills it in.
    fn local_status(&self) -> Status {
        let (number, head) = self.chain.head_block();
        Status {
            version: PROTOCOL_VERSION,
            network_id: self.chain.network_id(),
            genesis: self.chain.genesis_hash().unwrap_or_default(),
            head,
            head_number: number,
            blockscore: u128::from(self.chain.total_block_score(number)),
            name: crate::api::web3::client_version(),
            caps: vec![format!("{PROTOCOL_NAME}/{PROTOCOL_VERSION}")],
            listen_port: 0,
        }
    }

    /// Records the peer, has it sent our pending transactions, and starts a sync when it is
    /// ahead of us.
    fn on_connected(&self, peer: &Arc<Peer>) {
        self.with_state(peer, |_| {});
        lock(&self.newcomers).push(peer.clone());
        if let Some(s) = lock(&self.tx_events).as_ref() {
            s.interrupt();
        }
        if peer.head().number > self.chain.head_number() {
            self.want_sync();
        }
    }

    /// Serves `GetBlocks`, hands `Blocks` to the running sync, inserts or syncs on
    /// `NewBlock`, admits `Transactions`. A block or transaction that does not decode, or a
    /// `NewBlock` the chain refuses, is an error (the peer is dropped).
    fn on_message(&self, peer: &Arc<Peer>, msg: Message) -> Result<(), String> {
        match msg {
            Message::GetBlocks { from, count } => {
                self.pace_request(peer)?;
                let job = ServeJob {
                    peer: peer.clone(),
                    from,
                    count,
                };
                match self.serve.try_send(job) {
                    Ok(()) => {}
                    Err(TrySendError::Full(j)) | Err(TrySendError::Disconnected(j)) => {
                        self.serve_blocks(&j.peer, j.from, j.count)
                    }
                }
                Ok(())
            }
            Message::Blocks { blocks } => {
                let expecting = lock(&self.expecting);
                match expecting.as_ref() {
                    Some((p, tx)) if Arc::ptr_eq(p, peer) => {
                        let _ = tx.send(blocks);
                    }
                    // A late answer to a sync that ended: nothing waits for it.
                    _ => {}
                }
                Ok(())
            }
            Message::NewBlock { block } => self.on_new_block(peer, &block),
            Message::Transactions { txs } => self.on_transactions(peer, txs),
            Message::Status(_) | Message::Disconnect { .. } | Message::Ping | Message::Pong => {
                Ok(())
            }
        }
    }

    /// Forgets the peer; a sync waiting on it ends.
    fn on_disconnected(&self, peer: &Arc<Peer>) {
        {
            let mut states = lock(&self.states);
            if states
                .get(&peer.link.id)
                .is_some_and(|s| Arc::ptr_eq(&s.peer, peer))
            {
                states.remove(&peer.link.id);
            }
        }
        lock(&self.newcomers).retain(|p| !Arc::ptr_eq(p, peer));
        let mut expecting = lock(&self.expecting);
        if expecting
            .as_ref()
            .is_some_and(|(p, _)| Arc::ptr_eq(p, peer))
        {
            // Dropping the sender wakes the sync worker.
            *expecting = None;
        }
    }
}

/// A worker named `name` that hands each item of `queue` to `handle`, until the queue
/// closes, the protocol stops or the worker is told to.
fn draining<T: Send + 'static>(
    p: &Arc<ChainProtocol>,
    name: &str,
    queue: std::sync::mpsc::Receiver<T>,
    handle: impl Fn(&ChainProtocol, T) + Send + 'static,
) -> Result<Worker, String> {
    let q = p.clone();
    Worker::spawn(name, move |stop| loop {
        match queue.recv_timeout(TICK) {
            Ok(item) => handle(&q, item),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => return,
        }
        if q.stopping() || stop.is_set() {
            return;
        }
    })
}

/// The workers of a [`ChainProtocol`], as a node service (see [`ChainProtocol::service`]).
struct SyncService {
    protocol: Arc<ChainProtocol>,
    workers: Vec<Worker>,
    subscriptions: Vec<Arc<Subscriber>>,
}

impl Service for SyncService {
    fn name(&self) -> &'static str {
        "p2p-sync"
    }

    fn start(&mut self) -> Result<(), String> {
        let queues = lock(&self.protocol.queues)
            .take()
            .ok_or("the peer protocol's service was started twice")?;
        let p = &self.protocol;
        // Subscribed before `start` returns: no head or transaction after it is missed.
        let heads = Arc::new(p.bus.subscribe(Kinds::NEW_HEAD, EVENT_QUEUE));
        let txs = Arc::new(p.bus.subscribe(Kinds::PENDING_TRANSACTION, EVENT_QUEUE));
        *lock(&p.tx_events) = Some(txs.clone());
        self.subscriptions = vec![heads.clone(), txs.clone()];

        let q = p.clone();
        self.workers
            .push(Worker::spawn("p2p-sync", move |stop| q.sync_loop(&stop))?);
        self.workers
            .push(draining(p, "p2p-serve", queues.serve, |q, j| {
                q.serve_blocks(&j.peer, j.from, j.count)
            })?);
        self.workers.push(draining(
            p,
            "p2p-txs-in",
            queues.txs_in,
            ChainProtocol::admit,
        )?);
        let q = p.clone();
        self.workers.push(Worker::spawn("p2p-blocks", move |stop| {
            q.blocks_loop(heads, &stop)
        })?);
        let q = p.clone();
        self.workers.push(Worker::spawn("p2p-txs", move |stop| {
            q.txs_loop(txs, &stop)
        })?);
        Ok(())
    }

    fn stop(&mut self) {
        let p = &self.protocol;
        p.stopping.store(true, Ordering::Relaxed);
        p.sync_cv.notify_all();
        for s in &self.subscriptions {
            s.interrupt();
        }
        if let Some(s) = lock(&p.tx_events).as_ref() {
            s.interrupt();
        }
        // A sync waiting for blocks wakes when its channel closes.
        *lock(&p.expecting) = None;
        for w in &mut self.workers {
            w.stop();
        }
        self.workers.clear();
        self.subscriptions.clear();
        *lock(&p.tx_events) = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_known_set_forgets_the_oldest_first() {
        let mut k = KnownSet::new(3);
        assert!(k.insert([1; 32]));
        assert!(!k.insert([1; 32]), "a second insert is not new");
        assert!(k.insert([2; 32]));
        assert!(k.insert([3; 32]));
        assert!(k.insert([4; 32]));
        assert_eq!(k.len(), 3);
        assert!(!k.contains(&[1; 32]), "the oldest went");
        assert!(k.contains(&[2; 32]) && k.contains(&[4; 32]));
        assert!(k.insert([1; 32]), "a forgotten hash is new again");
        assert!(!k.contains(&[2; 32]));
        assert_eq!(KnownSet::new(0).cap, 1);
    }

    #[test]
    fn batches_respect_count_and_size() {
        let a = [0u8; 10];
        let items: Vec<&[u8]> = vec![&a; 7];
        assert_eq!(batch_ends(&items, 3, 1000), vec![3, 6, 7]);
        assert_eq!(batch_ends(&items, 100, 25), vec![2, 4, 6, 7]);
        let big = [0u8; 50];
        let items: Vec<&[u8]> = vec![&big, &a, &big];
        // A run holds at least one item, however large.
        assert_eq!(batch_ends(&items, 100, 20), vec![1, 2, 3]);
        assert!(batch_ends(&[], 3, 10).is_empty());
    }

    #[test]
    fn a_bad_block_reason_names_the_block_once() {
        assert_eq!(
            bad_block_reason(7, "block 7: state root mismatch"),
            "bad block #7: state root mismatch"
        );
        assert_eq!(
            bad_block_reason(7, "unknown ancestor"),
            "bad block #7: unknown ancestor"
        );
    }
}
