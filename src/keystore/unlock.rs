//! Keys unlocked in memory by `personal_unlockAccount`, with their expiry.
//!
//! A named thread ("unlock-expiry") sleeps until the earliest expiry and drops what is due;
//! dropping a key zeroizes it. A later unlock of an address replaces the earlier one and its
//! timer, whatever the durations.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::crypto::{Address, SecretKey};

struct Entry {
    key: SecretKey,
    /// `None`: until shutdown.
    expires: Option<Instant>,
}

#[derive(Default)]
struct State {
    keys: HashMap<Address, Entry>,
    stopping: bool,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

/// The unlocked keys of the node.
pub struct Unlocked {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Default for Unlocked {
    fn default() -> Self {
        Unlocked::new()
    }
}

impl Unlocked {
    /// An empty table with its expiry thread running.
    pub fn new() -> Unlocked {
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            wake: Condvar::new(),
        });
        let s = shared.clone();
        let thread = std::thread::Builder::new()
            .name("unlock-expiry".into())
            .spawn(move || expiry_loop(&s))
            .expect("spawn the unlock-expiry thread");
        Unlocked {
            shared,
            thread: Mutex::new(Some(thread)),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.shared.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Keeps `key` for `address` for `duration` (`None`: until shutdown), replacing (and
    /// zeroizing) any earlier unlock of the address.
    pub fn unlock(&self, address: Address, key: SecretKey, duration: Option<Duration>) {
        let expires = duration.map(|d| Instant::now() + d);
        let old = self.state().keys.insert(address, Entry { key, expires });
        drop(old); // zeroized here, outside nothing slow
        self.shared.wake.notify_all();
    }

    /// Drops the key of `address`; true when one was unlocked.
    pub fn lock(&self, address: Address) -> bool {
        let old = self.state().keys.remove(&address);
        old.is_some()
    }

    /// A copy of the unlocked key of `address` (in its own zeroizing buffer).
    pub fn key(&self, address: Address) -> Option<SecretKey> {
        let st = self.state();
        st.keys
            .get(&address)
            .filter(|e| e.expires.is_none_or(|t| t > Instant::now()))
            .map(|e| e.key.clone())
    }

    pub fn is_unlocked(&self, address: Address) -> bool {
        self.key(address).is_some()
    }

    /// Drops every key and stops the expiry thread. Called at shutdown.
    pub fn shutdown(&self) {
        {
            let mut st = self.state();
            st.stopping = true;
            st.keys.clear();
        }
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = t.join();
        }
    }
}

impl Drop for Unlocked {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn expiry_loop(shared: &Shared) {
    let mut st = shared.state.lock().unwrap_or_else(|p| p.into_inner());
    loop {
        if st.stopping {
            return;
        }
        let now = Instant::now();
        st.keys.retain(|_, e| e.expires.is_none_or(|t| t > now));
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

    #[test]
    fn expiry_lock_and_replacement() {
        let u = Unlocked::new();
        let k = SecretKey::from_slice(&[7u8; 32]).unwrap();
        u.unlock(addr(1), k.clone(), Some(Duration::from_millis(100)));
        u.unlock(addr(2), k.clone(), None);
        assert!(u.is_unlocked(addr(1)));
        std::thread::sleep(Duration::from_millis(250));
        assert!(!u.is_unlocked(addr(1)), "expired");
        assert!(u.is_unlocked(addr(2)));
        // A later, shorter unlock replaces an unlimited one.
        u.unlock(addr(2), k.clone(), Some(Duration::from_millis(100)));
        std::thread::sleep(Duration::from_millis(250));
        assert!(!u.is_unlocked(addr(2)));
        u.unlock(addr(3), k, None);
        assert!(u.lock(addr(3)));
        assert!(!u.lock(addr(3)));
        u.shutdown();
    }
}
