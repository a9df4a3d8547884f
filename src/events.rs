//! Typed events that domain code publishes (a new head, a transaction entering the pool, a
//! peer connecting or leaving) and consumers receive, without either side knowing the other:
//! the chain and the peers publish here without knowing `rpc`; the API layer turns events into
//! JSON-RPC notifications.
//!
//! The [`Bus`] is a bounded broadcast: each subscriber has its own queue of `capacity`
//! events. Publishing never blocks and never waits for a subscriber: an event is cloned into
//! every interested queue that has room, and a subscriber whose queue is full has fallen
//! behind and is cut off (it sees [`Gone::CutOff`] once it has drained what it had). So a slow
//! or stuck consumer costs the publisher one failed push, never a wait.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A 32-byte hash (block or transaction).
pub type Hash = [u8; 32];

/// A new head of the chain. (The chain will carry its full header here; the fields are what a
/// `newHeads` notification needs.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewHead {
    pub number: u64,
    pub hash: Hash,
    pub parent_hash: Hash,
    pub timestamp: u64,
}

/// A peer connection that opened or closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeerEvent {
    /// The peer's node id, 128 hex digits.
    pub id: String,
    /// `host:port` of the other end.
    pub remote: String,
    pub inbound: bool,
}

/// Everything that can be published.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    NewHead(Arc<NewHead>),
    /// The hash of a transaction that entered the pool.
    PendingTransaction(Hash),
    PeerAdded(Arc<PeerEvent>),
    PeerDropped(Arc<PeerEvent>),
}

/// The kinds of [`Event`], as a set a subscriber chooses from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Kinds(u8);

impl Kinds {
    pub const NEW_HEAD: Kinds = Kinds(1);
    pub const PENDING_TRANSACTION: Kinds = Kinds(2);
    pub const PEERS: Kinds = Kinds(4);
    pub const ALL: Kinds = Kinds(7);

    pub const fn or(self, other: Kinds) -> Kinds {
        Kinds(self.0 | other.0)
    }

    fn contains(self, e: &Event) -> bool {
        let bit = match e {
            Event::NewHead(_) => Kinds::NEW_HEAD,
            Event::PendingTransaction(_) => Kinds::PENDING_TRANSACTION,
            Event::PeerAdded(_) | Event::PeerDropped(_) => Kinds::PEERS,
        };
        self.0 & bit.0 != 0
    }
}

/// Why a subscriber gets no more events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// It fell `capacity` events behind and was cut off.
    CutOff,
    /// The bus was closed (the node is stopping).
    Closed,
}

struct QueueState {
    events: VecDeque<Event>,
    /// Set when the subscriber is cut off or the bus closes; no event is added after it.
    gone: Option<Gone>,
    /// The subscriber was dropped: the publisher forgets the queue.
    dropped: bool,
}

struct Queue {
    kinds: Kinds,
    capacity: usize,
    state: Mutex<QueueState>,
    ready: Condvar,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The event bus of one node.
#[derive(Default)]
pub struct Bus {
    queues: Mutex<Vec<Arc<Queue>>>,
}

impl Bus {
    pub fn new() -> Arc<Bus> {
        Arc::new(Bus::default())
    }

    fn queues(&self) -> MutexGuard<'_, Vec<Arc<Queue>>> {
        self.queues.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A new subscriber to the events of `kinds`, holding at most `capacity` (at least 1)
    /// unread events before it is cut off.
    pub fn subscribe(&self, kinds: Kinds, capacity: usize) -> Subscriber {
        let q = Arc::new(Queue {
            kinds,
            capacity: capacity.max(1),
            state: Mutex::new(QueueState {
                events: VecDeque::new(),
                gone: None,
                dropped: false,
            }),
            ready: Condvar::new(),
        });
        self.queues().push(q.clone());
        Subscriber { queue: q }
    }

    /// Hands `event` to every subscriber of its kind that has room; cuts off those whose
    /// queue is full and forgets them and the dropped ones. Never waits for a subscriber.
    pub fn publish(&self, event: Event) {
        let mut queues = self.queues();
        queues.retain(|q| {
            if !q.kinds.contains(&event) {
                return !q.lock().dropped;
            }
            let mut st = q.lock();
            if st.dropped || st.gone.is_some() {
                return false;
            }
            if st.events.len() >= q.capacity {
                st.gone = Some(Gone::CutOff);
                drop(st);
                q.ready.notify_all();
                return false;
            }
            st.events.push_back(event.clone());
            drop(st);
            q.ready.notify_one();
            true
        });
    }

    /// Ends every subscription ([`Gone::Closed`] once drained); later publishing reaches no one.
    pub fn close(&self) {
        for q in self.queues().drain(..) {
            q.lock().gone.get_or_insert(Gone::Closed);
            q.ready.notify_all();
        }
    }

    /// How many subscribers are registered (cut-off and dropped ones are forgotten at the
    /// next publish).
    pub fn subscriber_count(&self) -> usize {
        self.queues().len()
    }
}

/// One subscriber's end of the bus. Dropping it unsubscribes.
pub struct Subscriber {
    queue: Arc<Queue>,
}

impl Subscriber {
    /// The next event, waiting at most `timeout`: `Ok(None)` when none came in time, `Err`
    /// once the subscription has ended and every event before the end was received.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Option<Event>, Gone> {
        let deadline = Instant::now() + timeout;
        let mut st = self.queue.lock();
        loop {
            if let Some(e) = st.events.pop_front() {
                return Ok(Some(e));
            }
            if let Some(g) = st.gone {
                return Err(g);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            st = self
                .queue
                .ready
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
    }

    /// Wakes a thread blocked in [`Subscriber::recv_timeout`] without an event (it returns
    /// `Ok(None)` at once if nothing is queued): how a service waiting for events is stopped.
    pub fn interrupt(&self) {
        self.queue.ready.notify_all();
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        let mut st = self.queue.lock();
        st.dropped = true;
        st.events.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::thread;

    fn head(n: u64) -> Event {
        Event::NewHead(Arc::new(NewHead {
            number: n,
            hash: [n as u8; 32],
            parent_hash: [0; 32],
            timestamp: n,
        }))
    }

    #[test]
    fn subscribers_get_their_kinds_in_order() {
        let bus = Bus::new();
        let heads = bus.subscribe(Kinds::NEW_HEAD, 10);
        let all = bus.subscribe(Kinds::ALL, 10);
        bus.publish(head(1));
        bus.publish(Event::PendingTransaction([9; 32]));
        bus.publish(head(2));
        let t = Duration::from_millis(1);
        assert_eq!(heads.recv_timeout(t), Ok(Some(head(1))));
        assert_eq!(heads.recv_timeout(t), Ok(Some(head(2))));
        assert_eq!(heads.recv_timeout(t), Ok(None));
        assert_eq!(all.recv_timeout(t), Ok(Some(head(1))));
        assert_eq!(
            all.recv_timeout(t),
            Ok(Some(Event::PendingTransaction([9; 32])))
        );
        assert_eq!(all.recv_timeout(t), Ok(Some(head(2))));
    }

    #[test]
    fn a_slow_subscriber_is_cut_off_and_never_delays_the_publisher() {
        let bus = Bus::new();
        // Never read while the publisher runs: its queue fills after 4 events.
        let stuck = bus.subscribe(Kinds::NEW_HEAD, 4);
        let fast = bus.subscribe(Kinds::NEW_HEAD, 100_000);
        let (done_tx, done_rx) = mpsc::channel();
        let b = bus.clone();
        let publisher = thread::spawn(move || {
            for n in 0..50_000 {
                b.publish(head(n));
            }
            done_tx.send(()).unwrap();
        });
        // A publisher that waited for the stuck subscriber would never finish.
        done_rx
            .recv_timeout(Duration::from_secs(60))
            .expect("the publisher finished without the stuck subscriber reading");
        publisher.join().unwrap();
        let t = Duration::from_millis(1);
        for n in 0..50_000 {
            assert_eq!(fast.recv_timeout(t), Ok(Some(head(n))));
        }
        // The stuck one keeps what it had, then learns it was cut off.
        for n in 0..4 {
            assert_eq!(stuck.recv_timeout(t), Ok(Some(head(n))));
        }
        assert_eq!(stuck.recv_timeout(t), Err(Gone::CutOff));
        assert_eq!(bus.subscriber_count(), 1, "the cut-off queue is forgotten");
    }

    #[test]
    fn dropping_unsubscribes_and_close_ends_every_subscription() {
        let bus = Bus::new();
        let a = bus.subscribe(Kinds::ALL, 4);
        drop(bus.subscribe(Kinds::ALL, 4));
        bus.publish(head(1));
        assert_eq!(bus.subscriber_count(), 1);
        let waiter = {
            let b = bus.clone();
            thread::spawn(move || {
                let s = b.subscribe(Kinds::PEERS, 4);
                s.recv_timeout(Duration::from_secs(60))
            })
        };
        while bus.subscriber_count() < 2 {
            thread::yield_now();
        }
        bus.close();
        assert_eq!(waiter.join().unwrap(), Err(Gone::Closed));
        assert_eq!(a.recv_timeout(Duration::ZERO), Ok(Some(head(1))));
        assert_eq!(a.recv_timeout(Duration::ZERO), Err(Gone::Closed));
        bus.publish(head(2));
        assert_eq!(bus.subscriber_count(), 0);
    }
}
