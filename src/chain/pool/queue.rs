//! The queue's limits: what keeps transactions that cannot run yet (a nonce gap) from
//! filling the pool for good. The rules are go-ethereum's (klaytn's `tx_pool.go` has the
//! same), with its later fix of the eviction order:
//!
//! - **Per-sender share**: a sender holds at most [`QueueLimits::account_slots`] queued
//!   transactions (`--txpool.nonexec-slots.account`). The reference accepts one more and
//!   then cuts the sender's queue back to its lowest nonces; the outcome here is the same,
//!   decided before answering: a transaction below the sender's highest queued nonce takes
//!   that one's place, one above it is refused (the reference would drop it silently).
//! - **Global cap**: at most [`QueueLimits::all_slots`] queued in all
//!   (`--txpool.nonexec-slots.all`). When full, the sender whose queue has been idle
//!   longest gives up its highest nonce, so that a newcomer's transaction enters. klaytn
//!   drops from the most recently active sender instead: the go-ethereum bug fixed by its
//!   PR #24908 (issue #24907), which would evict the newcomer and keep the old fillers.
//!   Prices cannot rank them: before Magma every transaction pays the fixed unit price.
//! - **Lifetime**: a sender whose queue has been idle for [`QueueLimits::lifetime`]
//!   (`--txpool.lifetime`) loses all its queued transactions ([`Pool::expire`], run
//!   periodically by the node).
//!
//! A sender's heartbeat is set when its queue goes from empty to one transaction and again
//! whenever one of its transactions becomes pending (go-ethereum's `beats`). Pending
//! transactions are never evicted by these rules. No sender is exempt: the reference spares
//! "local" senders (those that came through the RPC), but the RPC is exactly where the
//! measured attack came from.

use std::time::{Duration, Instant};

use super::{Pool, PoolError, Sender};
use crate::crypto::Address;

/// The queue's limits (the reference's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueLimits {
    /// Most queued transactions of one sender.
    pub account_slots: usize,
    /// Most queued transactions in all.
    pub all_slots: usize,
    /// How long a sender's queue may stay idle before it is dropped.
    pub lifetime: Duration,
}

impl Default for QueueLimits {
    fn default() -> QueueLimits {
        QueueLimits {
            account_slots: 64,
            all_slots: 1024,
            lifetime: Duration::from_secs(5 * 60),
        }
    }
}

/// When a sender's queue last saw activity: the time, and a sequence number that orders
/// heartbeats set within the clock's resolution.
#[derive(Debug, Clone, Copy)]
pub(super) struct Beat {
    seq: u64,
    at: Instant,
}

impl Beat {
    /// A heartbeat now; `count` is the pool's count of those given.
    pub(super) fn next(count: &mut u64) -> Beat {
        *count += 1;
        Beat {
            seq: *count,
            at: Instant::now(),
        }
    }
}

impl Pool {
    /// Sets the queue's limits (at start-up, before any transaction arrives).
    pub fn set_limits(&mut self, limits: QueueLimits) {
        self.limits = limits;
    }

    /// The queue's limits.
    pub fn limits(&self) -> QueueLimits {
        self.limits
    }

    /// Makes room for `sender`'s transaction of `nonce` in the queue: within the sender's
    /// share, and within the global cap, evicting one transaction at most. Fails, evicting
    /// nothing, when the new transaction would itself be the one to go.
    pub(super) fn make_room(&mut self, sender: Address, nonce: u64) -> Result<(), PoolError> {
        let share = self.limits.account_slots;
        if let Some(top) = self
            .senders
            .get(&sender)
            .filter(|s| s.queued.len() >= share)
            .and_then(highest)
        {
            if nonce > top {
                return Err(PoolError::SenderQueueFull(share));
            }
            // The freed slot is the new one's: the total does not grow.
            self.drop_queued(sender, top);
            return Ok(());
        }
        while self.queued >= self.limits.all_slots {
            let idlest = self.idle.first().map(|(_, a)| *a);
            let Some((victim, top)) =
                idlest.and_then(|a| Some((a, highest(self.senders.get(&a)?)?)))
            else {
                return Err(PoolError::Full);
            };
            if victim == sender && nonce > top {
                return Err(PoolError::Full);
            }
            self.drop_queued(victim, top);
        }
        Ok(())
    }

    /// Drops the queued transactions of every sender whose queue has been idle for the
    /// lifetime as of `now`; their hashes.
    pub fn expire(&mut self, now: Instant) -> Vec<[u8; 32]> {
        let lifetime = self.limits.lifetime;
        let mut dropped = Vec::new();
        let mut emptied = Vec::new();
        // Heartbeats are numbered in the order of their times: the idle ones come first.
        while let Some(&(seq, a)) = self.idle.first() {
            let s = self.senders.get_mut(&a).filter(|s| s.indexed == Some(seq));
            let Some(s) = s else {
                // Not kept up to date (cannot happen): forgotten.
                self.idle.pop_first();
                continue;
            };
            if s.beat
                .is_some_and(|b| now.saturating_duration_since(b.at) < lifetime)
            {
                break;
            }
            self.idle.pop_first();
            dropped.extend(std::mem::take(&mut s.queued).into_values().map(|p| p.hash));
            s.beat = None;
            s.indexed = None;
            if s.pending.is_empty() && s.view.is_none() {
                emptied.push(a);
            }
        }
        for h in &dropped {
            self.by_hash.remove(h);
        }
        self.queued -= dropped.len();
        // Only the senders just emptied: a walk over every sender would cost a lock hold
        // that grows with the pending ones.
        for a in emptied {
            self.senders.remove(&a);
        }
        dropped
    }

    /// Removes `sender`'s queued transaction of `nonce`.
    fn drop_queued(&mut self, sender: Address, nonce: u64) {
        let Some(s) = self.senders.get_mut(&sender) else {
            return;
        };
        if let Some(p) = s.queued.remove(&nonce) {
            self.by_hash.remove(&p.hash);
            self.queued -= 1;
        }
        if s.queued.is_empty() {
            s.beat = None;
        }
        self.reindex(sender);
    }

    /// Puts `sender` in [`Pool::idle`] under its heartbeat if it has queued transactions,
    /// and takes it out if not: called wherever a sender's queue or heartbeat changed.
    pub(super) fn reindex(&mut self, sender: Address) {
        let Some(s) = self.senders.get_mut(&sender) else {
            return;
        };
        let want = s.beat.filter(|_| !s.queued.is_empty()).map(|b| b.seq);
        if want != s.indexed {
            if let Some(old) = s.indexed {
                self.idle.remove(&(old, sender));
            }
            if let Some(new) = want {
                self.idle.insert((new, sender));
            }
            s.indexed = want;
        }
    }
}

/// The highest nonce `s` has queued.
fn highest(s: &Sender) -> Option<u64> {
    s.queued.keys().next_back().copied()
}

/// How often the node looks for idle queues: a fraction of the lifetime, so that a
/// transaction outlives it by at most half again, and at least once a minute (the
/// reference's interval).
pub fn expiry_interval(lifetime: Duration) -> Duration {
    (lifetime / 2).clamp(Duration::from_millis(10), Duration::from_secs(60))
}

#[cfg(test)]
mod tests {
    use super::super::tests::{account, add, cost, tx};
    use super::*;
    use crate::crypto::SecretKey;

    fn key(n: u8) -> SecretKey {
        SecretKey::from_slice(&[n; 32]).unwrap()
    }

    fn pool(account_slots: usize, all_slots: usize) -> Pool {
        let mut p = Pool::default();
        p.set_limits(QueueLimits {
            account_slots,
            all_slots,
            lifetime: Duration::from_secs(60),
        });
        p
    }

    /// Checks that [`Pool::idle`] holds exactly the senders with queued transactions, under
    /// their heartbeats.
    fn assert_indexed(pool: &Pool) {
        let want: std::collections::BTreeSet<(u64, Address)> = pool
            .senders
            .iter()
            .filter(|(_, s)| !s.queued.is_empty())
            .map(|(a, s)| (s.beat.expect("a queue has a heartbeat").seq, *a))
            .collect();
        assert_eq!(pool.idle, want);
    }

    /// The queued nonces of `k`, in order (after [`assert_indexed`]).
    fn queued(pool: &Pool, k: &SecretKey) -> Vec<u64> {
        assert_indexed(pool);
        pool.senders
            .get(&k.address())
            .map(|s| s.queued.keys().copied().collect())
            .unwrap_or_default()
    }

    #[test]
    fn the_reference_defaults() {
        assert_eq!(
            QueueLimits::default(),
            QueueLimits {
                account_slots: 64,
                all_slots: 1024,
                lifetime: Duration::from_secs(300)
            }
        );
        assert_eq!(
            expiry_interval(Duration::from_secs(300)),
            Duration::from_secs(60)
        );
        assert_eq!(
            expiry_interval(Duration::from_secs(2)),
            Duration::from_secs(1)
        );
        assert_eq!(expiry_interval(Duration::ZERO), Duration::from_millis(10));
    }

    #[test]
    fn a_sender_keeps_its_lowest_nonces_within_its_share() {
        let k = key(1);
        let acct = account(0, 100 * cost(1));
        let mut p = pool(3, 100);
        for n in [2, 3, 4] {
            add(&mut p, tx(&k, n, 1), &acct).unwrap();
        }
        assert_eq!(
            add(&mut p, tx(&k, 5, 1), &acct).unwrap_err().to_string(),
            "txpool is full: the sender already has 3 queued transactions, the most one sender may have"
        );
        let h4 = p.senders[&k.address()].queued[&4].hash;
        add(&mut p, tx(&k, 1, 1), &acct).unwrap();
        assert_eq!(queued(&p, &k), [1, 2, 3]);
        assert_eq!(p.queued_len(), 3);
        assert!(p.find(&h4).is_none(), "the highest nonce made way");
        // Another sender has a share of its own.
        add(&mut p, tx(&key(2), 7, 1), &acct).unwrap();
        assert_eq!(p.queued_len(), 4);
    }

    #[test]
    fn a_full_queue_evicts_the_highest_nonce_of_the_idlest_sender() {
        let (a, b, c) = (key(1), key(2), key(3));
        let acct = account(0, 100 * cost(1));
        let mut p = pool(10, 4);
        for k in [&a, &b] {
            for n in [1, 2] {
                add(&mut p, tx(k, n, 1), &acct).unwrap();
            }
        }
        add(&mut p, tx(&c, 1, 1), &acct).unwrap();
        assert_eq!((queued(&p, &a), queued(&p, &b)), (vec![1], vec![1, 2]));
        add(&mut p, tx(&c, 2, 1), &acct).unwrap();
        assert_eq!(queued(&p, &a), Vec::<u64>::new(), "a queued first");
        add(&mut p, tx(&c, 3, 1), &acct).unwrap();
        assert_eq!(queued(&p, &b), [1]);
        assert_eq!(queued(&p, &c), [1, 2, 3]);
        assert_eq!(p.queued_len(), 4);
        // When c is the idlest, a nonce above its highest would itself be the one to go.
        add(&mut p, tx(&c, 4, 1), &acct).unwrap();
        assert_eq!(queued(&p, &b), Vec::<u64>::new());
        assert_eq!(
            add(&mut p, tx(&c, 5, 1), &acct).unwrap_err().to_string(),
            "txpool is full"
        );
        assert_eq!(queued(&p, &c), [1, 2, 3, 4]);
    }

    #[test]
    fn a_sender_whose_transactions_become_pending_is_not_idle() {
        let (a, b, c, d) = (key(1), key(2), key(3), key(4));
        let acct = account(0, 100 * cost(1));
        let mut p = pool(10, 3);
        add(&mut p, tx(&a, 1, 1), &acct).unwrap();
        add(&mut p, tx(&a, 3, 1), &acct).unwrap();
        add(&mut p, tx(&b, 1, 1), &acct).unwrap();
        // a queued before b, but then its nonces 0 and 1 became pending.
        add(&mut p, tx(&a, 0, 1), &acct).unwrap();
        assert_eq!((p.len(), queued(&p, &a)), (2, vec![3]));
        add(&mut p, tx(&d, 1, 1), &acct).unwrap();
        add(&mut p, tx(&c, 1, 1), &acct).unwrap();
        assert_eq!(queued(&p, &b), Vec::<u64>::new());
        assert_eq!(queued(&p, &a), [3]);
        assert_eq!((p.len(), p.queued_len()), (2, 3), "pending untouched");
    }

    /// A block from elsewhere empties a queue (a stale nonce dropped, the next promoted):
    /// the sender leaves the heartbeat order, and the promotion counts as activity.
    #[test]
    fn promotion_after_a_block_keeps_the_order() {
        let (a, b, c) = (key(1), key(2), key(3));
        let acct = account(0, 100 * cost(1));
        let mut p = pool(10, 3);
        add(&mut p, tx(&a, 2, 1), &acct).unwrap();
        add(&mut p, tx(&a, 3, 1), &acct).unwrap();
        add(&mut p, tx(&b, 5, 1), &acct).unwrap();
        assert!(p.take().is_empty());
        let promoted = p.promote(|k| {
            Some(if *k == a.address() {
                account(3, 100 * cost(1))
            } else {
                acct.clone()
            })
        });
        assert_eq!(promoted.len(), 1);
        assert_eq!((queued(&p, &a), queued(&p, &b)), (vec![], vec![5]));
        // a queues again, after b: b is the idlest when the queue is full.
        add(&mut p, tx(&a, 6, 1), &acct).unwrap();
        add(&mut p, tx(&c, 1, 1), &acct).unwrap();
        add(&mut p, tx(&c, 2, 1), &acct).unwrap();
        assert_eq!((queued(&p, &a), queued(&p, &b)), (vec![6], vec![]));
    }

    #[test]
    fn an_idle_queue_expires_and_pending_transactions_stay() {
        let (a, b) = (key(1), key(2));
        let acct = account(0, 100 * cost(1));
        let mut p = pool(10, 100);
        add(&mut p, tx(&a, 0, 1), &acct).unwrap();
        let (h2, _) = add(&mut p, tx(&a, 2, 1), &acct).unwrap();
        add(&mut p, tx(&b, 5, 1), &acct).unwrap();
        let start = Instant::now();
        assert!(p.expire(start + Duration::from_secs(59)).is_empty());
        assert_eq!(p.queued_len(), 2);
        let dropped = p.expire(start + Duration::from_secs(61));
        assert_eq!(dropped.len(), 2);
        assert!(dropped.contains(&h2));
        assert_eq!((p.len(), p.queued_len()), (1, 0));
        assert!(p.find(&h2).is_none());
        assert_eq!(queued(&p, &b), Vec::<u64>::new());
        // The same nonce may come again.
        add(&mut p, tx(&a, 2, 1), &acct).unwrap();
        assert_eq!(queued(&p, &a), [2]);
        assert_eq!(p.queued_len(), 1);
    }
}
