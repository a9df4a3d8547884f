//! The polling filters (`chain_newFilter`, `chain_newBlockFilter`,
//! `chain_newPendingTransactionFilter`), the `logs` subscription, and the service that feeds
//! both from the event bus ([`FilterService`]).
//!
//! Events are not copied into every filter. New blocks and transactions entering the pool
//! each go into one journal, numbered in order; a filter holds the number of the first event
//! it has not answered (its cursor), and a poll answers what lies between its cursor and the
//! journal's end. So an event costs the same however many filters there are, and a log
//! filter reads the logs of the blocks since its last poll when it is polled, outside any
//! lock. A journal keeps at most [`JOURNAL_CAPACITY`] events; the sweep drops those every
//! filter has read, and the filters nobody polled for [`FILTER_LIFETIME`].
//!
//! The bus never waits for this service (a full queue cuts it off; it subscribes again, and
//! the next new head fills in the blocks it missed); the service never waits for a client
//! (a notification goes to the connection's bounded queue or cuts the connection off).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::goparams::{Criteria, Hash};
use crate::chain::logs::LogFilter;
use crate::chain::Chain;
use crate::events::{Bus, Event, Gone, Kinds, NewHead};
use crate::rpc::{Attachment, FromParam, Notifier, Params, RpcError, SubscriptionKind};
use crate::service::{Service, Worker};
use crate::types::json::LogJson;

/// A filter not polled with `chain_getFilterChanges` for this long is removed (the
/// reference's deadline).
pub const FILTER_LIFETIME: Duration = Duration::from_secs(5 * 60);
/// The most filters installed at once; one more is refused (the reference has no limit).
pub const MAX_FILTERS: usize = 10_000;
/// The most events each journal keeps: a filter that falls further behind loses the oldest.
pub const JOURNAL_CAPACITY: usize = 100_000;

/// Why a filter method failed (the reference's texts, and our limit's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// An unknown id, or a filter of another kind than the method reads.
    #[error("filter not found")]
    NotFound,
    #[error("too many filters: at most {0} may be installed at once (uninstall one with chain_uninstallFilter; a filter not polled for 5 minutes is removed)")]
    TooMany(usize),
    #[error("invalid from and to block combination: from > to")]
    BlockRange,
}

/// What a new filter follows.
#[derive(Debug, Clone)]
pub enum FilterKind {
    Blocks,
    PendingTransactions,
    Logs(Criteria),
}

/// What `chain_getFilterChanges` found since the last poll.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changes {
    /// Block hashes (a block filter) or transaction hashes (a pending-transaction filter).
    Hashes(Vec<Hash>),
    /// A log filter: its criteria and the blocks (number, hash) sealed since, in order.
    Blocks {
        criteria: Arc<Criteria>,
        blocks: Vec<(u64, Hash)>,
    },
}

/// Events numbered from `first`, at most `capacity` of them.
#[derive(Debug)]
struct Journal<T> {
    first: u64,
    items: VecDeque<T>,
    capacity: usize,
}

impl<T: Clone> Journal<T> {
    fn new(capacity: usize) -> Journal<T> {
        Journal {
            first: 0,
            items: VecDeque::new(),
            capacity: capacity.max(1),
        }
    }

    /// The number the next event gets.
    fn end(&self) -> u64 {
        self.first + self.items.len() as u64
    }

    fn push(&mut self, x: T) {
        if self.items.len() == self.capacity {
            self.items.pop_front();
            self.first += 1;
        }
        self.items.push_back(x);
    }

    /// The events from number `cursor` on (those still kept).
    fn since(&self, cursor: u64) -> Vec<T> {
        let skip = cursor.saturating_sub(self.first) as usize;
        self.items.iter().skip(skip).cloned().collect()
    }

    /// Drops the events numbered below `cursor`.
    fn forget_before(&mut self, cursor: u64) {
        while self.first < cursor && self.items.pop_front().is_some() {
            self.first += 1;
        }
    }
}

#[derive(Debug, Clone)]
enum Kind {
    Blocks,
    PendingTransactions,
    Logs(Arc<Criteria>),
}

impl Kind {
    fn reads_heads(&self) -> bool {
        !matches!(self, Kind::PendingTransactions)
    }
}

#[derive(Debug)]
struct Installed {
    kind: Kind,
    /// The first journal event not yet answered.
    cursor: u64,
    /// When it was installed or last polled with `chain_getFilterChanges`.
    last_poll: Instant,
}

#[derive(Debug)]
struct State {
    filters: HashMap<String, Installed>,
    /// New blocks: (number, hash).
    heads: Journal<(u64, Hash)>,
    /// Hashes of transactions that entered the pool.
    pending: Journal<Hash>,
    /// How many installed filters read `heads` and `pending`.
    head_readers: usize,
    pending_readers: usize,
}

/// The installed filters and the journals they read.
pub struct Filters {
    state: Mutex<State>,
    lifetime: Duration,
    max_filters: usize,
}

impl Default for Filters {
    fn default() -> Filters {
        Filters::with_limits(FILTER_LIFETIME, MAX_FILTERS, JOURNAL_CAPACITY)
    }
}

impl Filters {
    /// The reference's lifetime, [`MAX_FILTERS`] and [`JOURNAL_CAPACITY`].
    pub fn new() -> Arc<Filters> {
        Arc::new(Filters::default())
    }

    /// Filters with other limits (tests shorten the lifetime).
    pub fn with_limits(lifetime: Duration, max_filters: usize, journal_capacity: usize) -> Filters {
        Filters {
            state: Mutex::new(State {
                filters: HashMap::new(),
                heads: Journal::new(journal_capacity),
                pending: Journal::new(journal_capacity),
                head_readers: 0,
                pending_readers: 0,
            }),
            lifetime,
            max_filters,
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long an unpolled filter lives.
    pub fn lifetime(&self) -> Duration {
        self.lifetime
    }

    /// How many filters are installed.
    pub fn len(&self) -> usize {
        self.state().filters.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Installs a filter that answers what happens from now on; its id (`0x` + the hex of
    /// 16 random bytes, leading zeros stripped). Fails beyond the limit of filters, and for
    /// a log filter whose bounds the reference refuses.
    pub fn install(&self, kind: FilterKind, now: Instant) -> Result<String, FilterError> {
        let kind = match kind {
            FilterKind::Blocks => Kind::Blocks,
            FilterKind::PendingTransactions => Kind::PendingTransactions,
            FilterKind::Logs(c) if c.live_range_ok() => Kind::Logs(Arc::new(c)),
            FilterKind::Logs(_) => return Err(FilterError::BlockRange),
        };
        let mut st = self.state();
        if st.filters.len() >= self.max_filters {
            return Err(FilterError::TooMany(self.max_filters));
        }
        let cursor = if kind.reads_heads() {
            st.head_readers += 1;
            st.heads.end()
        } else {
            st.pending_readers += 1;
            st.pending.end()
        };
        let id = loop {
            let id = crate::rpc::pubsub::new_subscription_id();
            if !st.filters.contains_key(&id) {
                break id;
            }
        };
        st.filters.insert(
            id.clone(),
            Installed {
                kind,
                cursor,
                last_poll: now,
            },
        );
        Ok(id)
    }

    /// Removes filter `id`: false when there is no such filter.
    pub fn uninstall(&self, id: &str) -> bool {
        let mut st = self.state();
        match st.filters.remove(id) {
            Some(f) => {
                if f.kind.reads_heads() {
                    st.head_readers -= 1;
                } else {
                    st.pending_readers -= 1;
                }
                true
            }
            None => false,
        }
    }

    /// What filter `id` has not answered yet, which it now has; the poll keeps the filter
    /// alive for another lifetime.
    pub fn changes(&self, id: &str, now: Instant) -> Result<Changes, FilterError> {
        let mut guard = self.state();
        let st = &mut *guard;
        let f = st.filters.get_mut(id).ok_or(FilterError::NotFound)?;
        f.last_poll = now;
        Ok(match &f.kind {
            Kind::Blocks => {
                let blocks = st.heads.since(f.cursor);
                f.cursor = st.heads.end();
                Changes::Hashes(blocks.into_iter().map(|(_, h)| h).collect())
            }
            Kind::PendingTransactions => {
                let hashes = st.pending.since(f.cursor);
                f.cursor = st.pending.end();
                Changes::Hashes(hashes)
            }
            Kind::Logs(c) => {
                let blocks = st.heads.since(f.cursor);
                f.cursor = st.heads.end();
                Changes::Blocks {
                    criteria: c.clone(),
                    blocks,
                }
            }
        })
    }

    /// The criteria of log filter `id` (`chain_getFilterLogs`, which does not count as a
    /// poll); [`FilterError::NotFound`] for another kind of filter too.
    pub fn log_criteria(&self, id: &str) -> Result<Arc<Criteria>, FilterError> {
        match self.state().filters.get(id).map(|f| &f.kind) {
            Some(Kind::Logs(c)) => Ok(c.clone()),
            _ => Err(FilterError::NotFound),
        }
    }

    /// Whether some filter follows new blocks.
    pub fn wants_heads(&self) -> bool {
        self.state().head_readers > 0
    }

    /// New blocks (number, hash), in order, for the block and log filters.
    pub fn new_heads(&self, blocks: &[(u64, Hash)]) {
        let mut st = self.state();
        if st.head_readers > 0 {
            for b in blocks {
                st.heads.push(*b);
            }
        }
    }

    /// A transaction that entered the pool, for the pending-transaction filters.
    pub fn new_pending(&self, hash: Hash) {
        let mut st = self.state();
        if st.pending_readers > 0 {
            st.pending.push(hash);
        }
    }

    /// Removes the filters not polled for a lifetime before `now`, and the journal events
    /// every remaining filter has read; how many filters it removed.
    pub fn sweep(&self, now: Instant) -> usize {
        let mut guard = self.state();
        let st = &mut *guard;
        let before = st.filters.len();
        let lifetime = self.lifetime;
        st.filters
            .retain(|_, f| now.saturating_duration_since(f.last_poll) < lifetime);
        let (mut heads, mut pending) = (st.heads.end(), st.pending.end());
        let (mut head_readers, mut pending_readers) = (0, 0);
        for f in st.filters.values() {
            if f.kind.reads_heads() {
                head_readers += 1;
                heads = heads.min(f.cursor);
            } else {
                pending_readers += 1;
                pending = pending.min(f.cursor);
            }
        }
        st.heads.forget_before(heads);
        st.pending.forget_before(pending);
        (st.head_readers, st.pending_readers) = (head_readers, pending_readers);
        before - st.filters.len()
    }
}

/// One `logs` subscription.
#[derive(Clone)]
struct LogSubscriber {
    criteria: Arc<Criteria>,
    notifier: Notifier,
}

/// The `logs` subscription kind: each log of a new block that a subscriber's criteria
/// match is sent to it, one log per notification.
#[derive(Default)]
pub struct LogFeed {
    subscribers: Arc<Mutex<HashMap<u64, LogSubscriber>>>,
    next: AtomicU64,
}

fn lock_subscribers(
    m: &Mutex<HashMap<u64, LogSubscriber>>,
) -> MutexGuard<'_, HashMap<u64, LogSubscriber>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl LogFeed {
    /// Number of live subscriptions.
    pub fn subscriber_count(&self) -> usize {
        lock_subscribers(&self.subscribers).len()
    }

    /// Sends the matching logs of each new block (number, hash) to every subscriber. Each
    /// log is serialized once, whatever the number of subscribers.
    pub fn deliver(&self, chain: &Chain, blocks: &[(u64, Hash)]) {
        let subs: Vec<LogSubscriber> = lock_subscribers(&self.subscribers)
            .values()
            .cloned()
            .collect();
        if subs.is_empty() {
            return;
        }
        for (number, hash) in blocks {
            let mut wanting: Vec<&LogSubscriber> =
                subs.iter().filter(|s| s.criteria.within(*number)).collect();
            if wanting.is_empty() {
                continue;
            }
            let header = match chain.header_by_hash(hash) {
                Ok(Some(h)) => h,
                Ok(None) => continue,
                Err(e) => {
                    crate::log::warn(
                        "Cannot read a new block's header",
                        &[("err", &e.to_string())],
                    );
                    continue;
                }
            };
            wanting.retain(|s| s.criteria.filter.may_match(&header.bloom));
            if wanting.is_empty() {
                continue;
            }
            let logs = match chain.block_logs(hash, &LogFilter::default()) {
                Ok(Some(logs)) => logs,
                Ok(None) => continue,
                Err(e) => {
                    crate::log::warn("Cannot read a new block's logs", &[("err", &e.to_string())]);
                    continue;
                }
            };
            for found in &logs {
                let mut raw = None;
                for s in &wanting {
                    if s.criteria.filter.matches(&found.log) {
                        let raw = raw.get_or_insert_with(|| {
                            let json = LogJson::new(
                                &found.log,
                                found.location(),
                                &found.tx_hash,
                                found.log_index,
                            );
                            serde_json::value::to_raw_value(&json).expect("a log serializes")
                        });
                        s.notifier.notify_raw(raw);
                    }
                }
            }
        }
    }
}

impl SubscriptionKind for LogFeed {
    /// `["logs", criteria]`: the criteria of `chain_getLogs` (a `blockHash` is ignored), with
    /// the bounds a filter accepts.
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<Attachment, RpcError> {
        // The name was argument 0: the criteria are argument 1.
        if args.len() > 1 {
            return Err(RpcError::invalid_params(
                "too many arguments, want at most 2",
            ));
        }
        let v = args
            .raw(0)
            .ok_or_else(|| RpcError::invalid_params("missing value for required argument 1"))?;
        let criteria = Criteria::from_param(v)
            .map_err(|m| RpcError::invalid_params(format!("invalid argument 1: {m}")))?;
        if !criteria.live_range_ok() {
            return Err(RpcError::server(FilterError::BlockRange.to_string()));
        }
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        lock_subscribers(&self.subscribers).insert(
            key,
            LogSubscriber {
                criteria: Arc::new(criteria),
                notifier,
            },
        );
        let subscribers = Arc::downgrade(&self.subscribers);
        Ok(Attachment::on_drop(move || {
            if let Some(s) = subscribers.upgrade() {
                let gone = lock_subscribers(&s).remove(&key);
                drop(gone); // outside the lock
            }
        }))
    }
}

/// Events the service may hold before it counts as fallen behind.
const CAPACITY: usize = 4096;
/// How often the service looks at its stop flag while no event comes.
const TICK: Duration = Duration::from_millis(100);

/// The service (`filters` thread) that hands new blocks to the block and log filters and to
/// the `logs` subscribers, and pending transactions to the pending-transaction filters, and
/// sweeps the filters nobody polls.
pub struct FilterService {
    bus: Arc<Bus>,
    chain: Arc<Chain>,
    filters: Arc<Filters>,
    logs: Arc<LogFeed>,
    worker: Option<Worker>,
}

impl FilterService {
    pub fn new(
        bus: Arc<Bus>,
        chain: Arc<Chain>,
        filters: Arc<Filters>,
        logs: Arc<LogFeed>,
    ) -> FilterService {
        FilterService {
            bus,
            chain,
            filters,
            logs,
            worker: None,
        }
    }
}

/// The blocks from the one after `last` up to `head`, in order, found by walking back from
/// `head` through the parents (at most `max` of them): an import announces only the last
/// block of a batch. After a rewind (`head` not above `last`) there are none.
fn new_blocks(chain: &Chain, last: (u64, Hash), head: &NewHead, max: usize) -> Vec<(u64, Hash)> {
    if head.number <= last.0 {
        return Vec::new();
    }
    let mut out = vec![(head.number, head.hash)];
    let (mut number, mut parent) = (head.number, head.parent_hash);
    while number > last.0 + 1 && out.len() < max {
        match chain.header_by_hash(&parent) {
            Ok(Some(h)) => {
                out.push((h.number, parent));
                (number, parent) = (h.number, h.parent_hash);
            }
            _ => break,
        }
    }
    out.reverse();
    out
}

impl Service for FilterService {
    fn name(&self) -> &'static str {
        "filters"
    }

    fn start(&mut self) -> Result<(), String> {
        let kinds = Kinds::NEW_HEAD.or(Kinds::PENDING_TRANSACTION);
        let (bus, chain) = (self.bus.clone(), self.chain.clone());
        let (filters, logs) = (self.filters.clone(), self.logs.clone());
        let mut sub = bus.subscribe(kinds, CAPACITY);
        let mut last = chain.head_block();
        // Removal comes within a tenth of the lifetime after it is due.
        let sweep_every = (filters.lifetime() / 10).max(Duration::from_millis(1));
        self.worker = Some(Worker::spawn("filters", move |stop| {
            let mut next_sweep = Instant::now() + sweep_every;
            while !stop.is_set() {
                match sub.recv_timeout(TICK.min(sweep_every)) {
                    Ok(Some(Event::NewHead(h))) => {
                        if filters.wants_heads() || logs.subscriber_count() > 0 {
                            let blocks = new_blocks(&chain, last, &h, JOURNAL_CAPACITY);
                            filters.new_heads(&blocks);
                            logs.deliver(&chain, &blocks);
                        }
                        last = (h.number, h.hash);
                    }
                    Ok(Some(Event::PendingTransaction(hash))) => filters.new_pending(hash),
                    Ok(Some(_)) | Ok(None) => {}
                    // Fallen behind a burst: pending transactions are lost for the filters;
                    // the blocks are found again from the next head.
                    Err(Gone::CutOff) => {
                        crate::log::warn("Filter service fell behind; events dropped", &[]);
                        sub = bus.subscribe(kinds, CAPACITY);
                    }
                    Err(Gone::Closed) => return,
                }
                let now = Instant::now();
                if now >= next_sweep {
                    filters.sweep(now);
                    next_sweep = now + sweep_every;
                }
            }
        })?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api::goparams::BlockTag;

    fn blocks(f: &Filters, id: &str) -> Vec<Hash> {
        match f.changes(id, Instant::now()).unwrap() {
            Changes::Hashes(h) => h,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_filter_answers_what_came_since_its_last_poll() {
        let f = Filters::new();
        let now = Instant::now();
        // Nobody listens: nothing is kept.
        f.new_heads(&[(1, [1; 32])]);
        f.new_pending([9; 32]);
        let b = f.install(FilterKind::Blocks, now).unwrap();
        let p = f.install(FilterKind::PendingTransactions, now).unwrap();
        let l = f
            .install(FilterKind::Logs(Criteria::default()), now)
            .unwrap();
        assert!(b.starts_with("0x") && b.len() <= 34 && !b[2..].starts_with('0'));
        assert_eq!(blocks(&f, &b), Vec::<Hash>::new());
        f.new_heads(&[(2, [2; 32]), (3, [3; 32])]);
        f.new_pending([8; 32]);
        let b2 = f.install(FilterKind::Blocks, now).unwrap();
        f.new_heads(&[(4, [4; 32])]);
        assert_eq!(blocks(&f, &b), [[2; 32], [3; 32], [4; 32]]);
        assert_eq!(blocks(&f, &b), Vec::<Hash>::new());
        assert_eq!(blocks(&f, &b2), [[4; 32]]);
        assert_eq!(blocks(&f, &p), [[8; 32]]);
        match f.changes(&l, now).unwrap() {
            Changes::Blocks { blocks, criteria } => {
                assert_eq!(blocks, [(2, [2; 32]), (3, [3; 32]), (4, [4; 32])]);
                assert_eq!(*criteria, Criteria::default());
            }
            other => panic!("{other:?}"),
        }
        assert!(f.log_criteria(&l).is_ok());
        assert_eq!(f.log_criteria(&b), Err(FilterError::NotFound));
        assert_eq!(f.changes(&format!("{b}1"), now), Err(FilterError::NotFound));
        assert!(f.uninstall(&b));
        assert!(!f.uninstall(&b));
        assert_eq!(f.changes(&b, now), Err(FilterError::NotFound));
        assert_eq!(f.len(), 3);
    }

    #[test]
    fn log_filters_take_the_reference_bounds() {
        let f = Filters::new();
        let c = Criteria {
            from: Some(BlockTag::Number(5)),
            to: Some(BlockTag::Number(1)),
            ..Criteria::default()
        };
        assert_eq!(
            f.install(FilterKind::Logs(c), Instant::now()),
            Err(FilterError::BlockRange)
        );
        assert!(f.is_empty());
    }

    #[test]
    fn the_number_of_filters_is_bounded() {
        let f = Filters::with_limits(FILTER_LIFETIME, 3, 10);
        let now = Instant::now();
        let ids: Vec<String> = (0..3)
            .map(|_| f.install(FilterKind::Blocks, now).unwrap())
            .collect();
        let e = f.install(FilterKind::PendingTransactions, now).unwrap_err();
        assert_eq!(e, FilterError::TooMany(3));
        assert!(e
            .to_string()
            .starts_with("too many filters: at most 3 may be installed at once"));
        assert!(f.uninstall(&ids[0]));
        f.install(FilterKind::PendingTransactions, now).unwrap();
    }

    /// The sweep removes filters not polled for a lifetime; a poll of getFilterChanges keeps
    /// one alive (getFilterLogs does not); the journal forgets what everyone has read.
    #[test]
    fn the_sweep_removes_unpolled_filters() {
        let life = Duration::from_secs(300);
        let f = Filters::with_limits(life, 100, 100);
        let t0 = Instant::now();
        let polled = f.install(FilterKind::Blocks, t0).unwrap();
        let idle = f
            .install(FilterKind::Logs(Criteria::default()), t0)
            .unwrap();
        f.new_heads(&[(1, [1; 32]), (2, [2; 32])]);
        assert_eq!(f.sweep(t0 + Duration::from_secs(200)), 0);
        f.changes(&polled, t0 + Duration::from_secs(200)).unwrap();
        f.log_criteria(&idle).unwrap();
        assert_eq!(f.sweep(t0 + life - Duration::from_millis(1)), 0);
        assert_eq!(f.sweep(t0 + life), 1);
        assert_eq!(f.log_criteria(&idle), Err(FilterError::NotFound));
        assert_eq!(f.changes(&idle, t0 + life), Err(FilterError::NotFound));
        // The polled filter read both heads: the journal keeps nothing.
        assert!(f.state().heads.items.is_empty());
        assert_eq!(f.state().heads.first, 2);
        assert_eq!(f.sweep(t0 + Duration::from_secs(200) + life), 1);
        assert!(f.is_empty());
        assert!(!f.wants_heads());
        f.new_heads(&[(3, [3; 32])]);
        assert!(
            f.state().heads.items.is_empty(),
            "nobody reads: nothing is kept"
        );
    }

    /// A filter that falls behind by more than the journal keeps loses the oldest events.
    #[test]
    fn a_journal_keeps_its_capacity() {
        let f = Filters::with_limits(FILTER_LIFETIME, 10, 3);
        let id = f
            .install(FilterKind::PendingTransactions, Instant::now())
            .unwrap();
        for i in 0..5u8 {
            f.new_pending([i; 32]);
        }
        assert_eq!(blocks(&f, &id), [[2; 32], [3; 32], [4; 32]]);
        f.new_pending([5; 32]);
        assert_eq!(blocks(&f, &id), [[5; 32]]);
    }

    /// The service, on a real chain and bus: a block filter hears of sealed blocks; a filter
    /// left unpolled is swept once its (short) lifetime is over.
    #[test]
    fn the_service_feeds_filters_from_the_bus_and_sweeps() {
        use crate::chain::genesis::Genesis;
        use crate::crypto::SecretKey;
        let dir = tempfile::tempdir().unwrap();
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let chain = Arc::new(Chain::open(dir.path(), &Genesis::dev(key.address(), funds)).unwrap());
        let bus = Bus::new();
        chain.publish_to(bus.clone());
        let filters = Arc::new(Filters::with_limits(Duration::from_millis(300), 10, 100));
        let mut service =
            FilterService::new(bus.clone(), chain.clone(), filters.clone(), Arc::default());
        service.start().unwrap();
        let now = Instant::now();
        let b = filters.install(FilterKind::Blocks, now).unwrap();
        let p = filters
            .install(FilterKind::PendingTransactions, now)
            .unwrap();
        let idle = filters.install(FilterKind::Blocks, now).unwrap();
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut tx =
            crate::types::transaction::Transaction::of(crate::types::transaction::ValueTransfer {
                nonce: 0,
                gas_price: price,
                gas: 21_000,
                to: crate::crypto::Address([0x35; 20]),
                value: [0; 32],
                from: key.address(),
                signatures: Vec::new(),
            });
        tx.sign(&key, chain.chain_id());
        let tx_hash = chain.submit(tx).unwrap();
        let block = chain.seal(&key).unwrap().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let (mut got_b, mut got_p) = (Vec::new(), Vec::new());
        while got_b.is_empty() || got_p.is_empty() {
            assert!(Instant::now() < deadline, "the service delivered nothing");
            got_b.extend(blocks(&filters, &b));
            got_p.extend(blocks(&filters, &p));
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!((got_b, got_p), (vec![block], vec![tx_hash]));
        // Kept alive by polls; the idle one goes.
        let deadline = Instant::now() + Duration::from_secs(10);
        while filters.len() > 2 {
            assert!(Instant::now() < deadline, "the idle filter was never swept");
            blocks(&filters, &b);
            blocks(&filters, &p);
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            filters.changes(&idle, Instant::now()),
            Err(FilterError::NotFound)
        );
        service.stop();
    }
}
