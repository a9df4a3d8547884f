//! Keys unlocked in memory by `personal_unlockAccount`, with their expiry.
//!
//! A named thread ("unlock-expiry") sleeps until the earliest expiry and drops what is due;
//! dropping a key zeroizes it. A later unlock of an address replaces the earlier one and its
//! timer, whatever the durations.
//!
//! An unlock decrypts the key file (scrypt, about a second) before it can keep the key, and
//! no lock is held across scrypt. So an unlock is done in two steps: [`Unlocked::begin`]
//! before the decryption, [`PendingUnlock::finish`] after it. A [`Unlocked::lock`] of the
//! address in between (`personal_lockAccount`, or `personal_replaceRawKey`, which locks
//! after rewriting the key file) wins: the finishing unlock keeps nothing, so a key decrypted
//! from a file that has since been replaced never lands in memory after the lock.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::crypto::{Address, SecretKey};

struct Entry {
    /// Boxed: the table then holds a pointer, not the key. A table keeps the bytes of a value
    /// removed from it (and of its old storage when it grows); a boxed key is overwritten
    /// when it drops, wherever the table moved its entry.
    key: Box<SecretKey>,
    /// `None`: until shutdown.
    expires: Option<Instant>,
}

impl Entry {
    fn live(&self, now: Instant) -> bool {
        self.expires.is_none_or(|t| t > now)
    }
}

/// The unlocks of one address that are between [`Unlocked::begin`] and their end.
struct InFlight {
    /// How many there are; the record is removed when the last one ends, so the table only
    /// holds addresses being unlocked right now.
    count: usize,
    /// Bumped by every [`Unlocked::lock`] of the address.
    generation: u64,
}

#[derive(Default)]
struct State {
    keys: HashMap<Address, Entry>,
    in_flight: HashMap<Address, InFlight>,
    stopping: bool,
}

impl State {
    /// Ends one in-flight unlock of `address`.
    fn end(&mut self, address: Address) {
        if let Some(f) = self.in_flight.get_mut(&address) {
            f.count -= 1;
            if f.count == 0 {
                self.in_flight.remove(&address);
            }
        }
    }
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The unlocked keys of the node. Expired keys are invisible at once; the node's
/// [`ExpiryService`] also drops (and so zeroizes) them when they expire.
pub struct Unlocked {
    shared: Arc<Shared>,
}

/// An unlock between [`Unlocked::begin`] and [`PendingUnlock::finish`]. Dropping it without
/// finishing (the decryption failed) ends it and keeps nothing.
#[must_use = "an unlock keeps its key only through finish"]
pub struct PendingUnlock<'a> {
    unlocked: &'a Unlocked,
    address: Address,
    generation: u64,
    ended: bool,
}

impl PendingUnlock<'_> {
    /// Keeps `key` for `duration` (`None`: until shutdown), replacing (and zeroizing) any
    /// earlier unlock of the address, unless the address was locked since [`Unlocked::begin`]
    /// or the node is shutting down. Returns whether the key was kept; when it was not, the
    /// key is zeroized here.
    pub fn finish(mut self, key: SecretKey, duration: Option<Duration>) -> bool {
        let expires = duration.map(|d| Instant::now() + d);
        let mut st = self.unlocked.state();
        let current = st.in_flight.get(&self.address).map(|f| f.generation);
        let keep = !st.stopping && current == Some(self.generation);
        st.end(self.address);
        self.ended = true;
        let old = if keep {
            st.keys.insert(
                self.address,
                Entry {
                    key: Box::new(key),
                    expires,
                },
            )
        } else {
            drop(key);
            None
        };
        drop(st);
        drop(old); // zeroized outside the lock
        if keep {
            self.unlocked.shared.wake.notify_all();
        }
        keep
    }
}

impl Drop for PendingUnlock<'_> {
    fn drop(&mut self) {
        if !self.ended {
            self.unlocked.state().end(self.address);
        }
    }
}

impl Default for Unlocked {
    fn default() -> Self {
        Unlocked::new()
    }
}

impl Unlocked {
    /// An empty table.
    pub fn new() -> Unlocked {
        Unlocked {
            shared: Arc::new(Shared {
                state: Mutex::new(State::default()),
                wake: Condvar::new(),
            }),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Starts an unlock of `address`; call it before decrypting the key, then
    /// [`PendingUnlock::finish`] with the key.
    pub fn begin(&self, address: Address) -> PendingUnlock<'_> {
        let mut st = self.state();
        let f = st.in_flight.entry(address).or_insert(InFlight {
            count: 0,
            generation: 0,
        });
        f.count += 1;
        PendingUnlock {
            unlocked: self,
            address,
            generation: f.generation,
            ended: false,
        }
    }

    /// Keeps `key` for `address` for `duration` (`None`: until shutdown), replacing (and
    /// zeroizing) any earlier unlock of the address. For a key already in hand; an unlock
    /// that decrypts first goes through [`Unlocked::begin`]. Returns false (keeping nothing)
    /// once the node is shutting down.
    pub fn unlock(&self, address: Address, key: SecretKey, duration: Option<Duration>) -> bool {
        self.begin(address).finish(key, duration)
    }

    /// Drops the key of `address`, and makes every unlock of it still in progress keep
    /// nothing; true when a key was unlocked.
    pub fn lock(&self, address: Address) -> bool {
        let mut st = self.state();
        if let Some(f) = st.in_flight.get_mut(&address) {
            f.generation += 1;
        }
        let old = st.keys.remove(&address);
        drop(st);
        old.is_some()
    }

    /// A copy of the unlocked key of `address` (in its own zeroizing buffer).
    pub fn key(&self, address: Address) -> Option<SecretKey> {
        let now = Instant::now();
        let st = self.state();
        st.keys
            .get(&address)
            .filter(|e| e.live(now))
            .map(|e| (*e.key).clone())
    }

    /// True while `address` has an unexpired unlocked key (nothing is copied).
    pub fn is_unlocked(&self, address: Address) -> bool {
        let now = Instant::now();
        self.state().keys.get(&address).is_some_and(|e| e.live(now))
    }

    /// The addresses that have an unexpired unlocked key, read under one lock (for listing
    /// many accounts).
    pub fn unlocked_addresses(&self) -> HashSet<Address> {
        let now = Instant::now();
        self.state()
            .keys
            .iter()
            .filter(|(_, e)| e.live(now))
            .map(|(a, _)| *a)
            .collect()
    }

    /// Drops (zeroizes) every key and ends the expiry service's loop; unlocks still in
    /// progress keep nothing. Called at shutdown.
    pub fn shutdown(&self) {
        let keys = {
            let mut st = self.state();
            st.stopping = true;
            std::mem::take(&mut st.keys)
        };
        self.shared.wake.notify_all();
        drop(keys); // zeroized outside the lock
    }
}

impl Drop for Unlocked {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The `unlock-expiry` service: a thread that sleeps until the earliest expiry and drops
/// (zeroizes) what is due. Stopping it is [`Unlocked::shutdown`]: every key is dropped.
pub struct ExpiryService {
    unlocked: Arc<Unlocked>,
    thread: Option<JoinHandle<()>>,
}

impl ExpiryService {
    pub fn new(unlocked: Arc<Unlocked>) -> ExpiryService {
        ExpiryService {
            unlocked,
            thread: None,
        }
    }
}

impl crate::service::Service for ExpiryService {
    fn name(&self) -> &'static str {
        "unlock-expiry"
    }

    fn start(&mut self) -> Result<(), String> {
        let shared = self.unlocked.shared.clone();
        let t = std::thread::Builder::new()
            .name("unlock-expiry".into())
            .spawn(move || expiry_loop(&shared))
            .map_err(|e| format!("cannot start thread unlock-expiry: {e}"))?;
        self.thread = Some(t);
        Ok(())
    }

    fn stop(&mut self) {
        self.unlocked.shutdown();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn expiry_loop(shared: &Shared) {
    let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if st.stopping {
            return;
        }
        let now = Instant::now();
        st.keys.retain(|_, e| e.live(now));
        let next = st.keys.values().filter_map(|e| e.expires).min();
        st = match next {
            Some(t) => {
                shared
                    .wake
                    .wait_timeout(st, t.saturating_duration_since(now))
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            None => shared.wake.wait(st).unwrap_or_else(|p| p.into_inner()),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(b: u8) -> Address {
        Address([b; 20])
    }

    fn key(b: u8) -> SecretKey {
        SecretKey::from_slice(&[b; 32]).unwrap()
    }

    #[test]
    fn expiry_lock_and_replacement() {
        use crate::service::Service;
        let u = Arc::new(Unlocked::new());
        let mut expiry = ExpiryService::new(u.clone());
        expiry.start().unwrap();
        let k = key(7);
        assert!(u.unlock(addr(1), k.clone(), Some(Duration::from_millis(100))));
        assert!(u.unlock(addr(2), k.clone(), None));
        assert!(u.is_unlocked(addr(1)));
        std::thread::sleep(Duration::from_millis(250));
        assert!(!u.is_unlocked(addr(1)), "expired");
        assert!(u.is_unlocked(addr(2)));
        // A later, shorter unlock replaces an unlimited one.
        assert!(u.unlock(addr(2), k.clone(), Some(Duration::from_millis(100))));
        std::thread::sleep(Duration::from_millis(250));
        assert!(!u.is_unlocked(addr(2)));
        assert!(u.unlock(addr(3), k, None));
        assert!(u.lock(addr(3)));
        assert!(!u.lock(addr(3)));
        // The expiry thread dropped the expired keys (not only hid them).
        assert!(u.state().keys.is_empty());
        assert!(u.unlock(addr(4), key(4), None));
        expiry.stop();
        assert!(u.state().keys.is_empty(), "stopping drops every key");
        assert!(
            !u.unlock(addr(5), key(5), None),
            "nothing is kept after shutdown"
        );
    }

    #[test]
    fn a_lock_during_an_unlock_wins() {
        let u = Unlocked::new();
        // The unlock has read the old key file and is in scrypt when the account is
        // locked (personal_replaceRawKey has rewritten the file): the old key is not kept.
        let pending = u.begin(addr(1));
        assert!(!u.lock(addr(1)));
        assert!(!pending.finish(key(1), None));
        assert!(!u.is_unlocked(addr(1)));
        assert!(u.key(addr(1)).is_none());

        // A lock of another address, or one before the unlock began, changes nothing.
        assert!(!u.lock(addr(2)));
        let pending = u.begin(addr(2));
        assert!(!u.lock(addr(3)));
        assert!(pending.finish(key(2), None));
        assert!(u.is_unlocked(addr(2)));

        // Two unlocks in flight: a lock in between cancels both; a later one is unaffected.
        let a = u.begin(addr(4));
        let b = u.begin(addr(4));
        u.lock(addr(4));
        let c = u.begin(addr(4));
        assert!(!a.finish(key(4), None));
        assert!(!b.finish(key(4), None));
        assert!(c.finish(key(5), None));
        assert!(u.is_unlocked(addr(4)));

        // An abandoned unlock (wrong passphrase) leaves no record behind.
        drop(u.begin(addr(6)));
        assert!(u.state().in_flight.is_empty(), "records are removed");

        // After shutdown nothing is kept.
        let pending = u.begin(addr(7));
        u.shutdown();
        assert!(!pending.finish(key(7), None));
        assert!(!u.is_unlocked(addr(7)));
    }

    #[test]
    fn listing_reads_the_live_set_once() {
        let u = Unlocked::new();
        u.unlock(addr(1), key(1), None);
        u.unlock(addr(2), key(2), Some(Duration::from_millis(1)));
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(u.unlocked_addresses(), HashSet::from([addr(1)]));
    }
}
