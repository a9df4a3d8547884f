//! The trie-node cache: state-trie nodes by hash, in memory, in front of a node store.
//!
//! Reading an account walks several nodes from the root; without the cache each is a look-up
//! in the database (a read transaction, a B-tree walk and a copy). Nodes are immutable (their
//! key is their hash), so a cached node never goes stale: the cache needs no invalidation,
//! only a bound. It is split into shards, each behind its own lock, so that RPC workers and
//! the sealer rarely wait for each other; each shard forgets its oldest entries first when it
//! grows past its share of the byte budget.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::node::Hash;

const SHARDS: usize = 16;
/// What an entry costs besides its bytes (key, map slot, queue slot, `Arc` header).
const ENTRY_OVERHEAD: usize = 96;

/// A cached node; one loaded from a saved cache file is checked against its hash the first
/// time it is served.
struct Entry {
    node: Arc<[u8]>,
    checked: bool,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Hash, Entry>,
    /// Insertion order, for eviction.
    order: VecDeque<Hash>,
    bytes: usize,
}

/// A bounded cache of trie nodes by hash.
pub struct NodeCache {
    shards: Vec<Mutex<Shard>>,
    /// Bytes each shard may hold; 0 disables the cache.
    shard_budget: usize,
}

impl std::fmt::Debug for NodeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeCache")
            .field("budget", &(self.shard_budget * SHARDS))
            .finish()
    }
}

impl NodeCache {
    /// A cache holding up to about `budget` bytes (0: nothing is cached).
    pub fn new(budget: usize) -> NodeCache {
        NodeCache {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            shard_budget: budget / SHARDS,
        }
    }

    fn shard(&self, hash: &Hash) -> std::sync::MutexGuard<'_, Shard> {
        // The key is a hash already: its first byte spreads evenly.
        self.shards[usize::from(hash[0]) % SHARDS]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The node with this hash, if cached. A node not yet checked (loaded from a saved
    /// cache) is checked against its hash first; one that fails is dropped, never served.
    pub fn get(&self, hash: &Hash) -> Option<Arc<[u8]>> {
        if self.shard_budget == 0 {
            return None;
        }
        let mut s = self.shard(hash);
        let e = s.map.get_mut(hash)?;
        if !e.checked {
            if crate::crypto::keccak256(&e.node) != *hash {
                let bad = s.map.remove(hash).expect("just found");
                s.bytes -= bad.node.len() + ENTRY_OVERHEAD;
                drop(s);
                crate::log::warn(
                    "A node of the saved trie node cache does not match its hash; dropped",
                    &[("hash", &format!("0x{}", hex::encode(hash)))],
                );
                return None;
            }
            e.checked = true;
        }
        Some(e.node.clone())
    }

    /// Keeps `node` under `hash`, forgetting the shard's oldest entries when over budget.
    pub fn insert(&self, hash: Hash, node: Arc<[u8]>) {
        self.put(hash, node, true);
    }

    /// Keeps a node read from a saved cache file, to be checked when first served.
    pub fn insert_unchecked(&self, hash: Hash, node: Arc<[u8]>) {
        self.put(hash, node, false);
    }

    fn put(&self, hash: Hash, node: Arc<[u8]>, checked: bool) {
        let cost = node.len() + ENTRY_OVERHEAD;
        if cost > self.shard_budget {
            return;
        }
        let mut s = self.shard(&hash);
        if s.map.insert(hash, Entry { node, checked }).is_some() {
            return;
        }
        s.order.push_back(hash);
        s.bytes += cost;
        while s.bytes > self.shard_budget {
            let Some(old) = s.order.pop_front() else {
                break;
            };
            if let Some(n) = s.map.remove(&old) {
                s.bytes -= n.node.len() + ENTRY_OVERHEAD;
            }
        }
    }

    /// Whether the cache holds anything at all (a budget of 0 disables it).
    pub fn is_enabled(&self) -> bool {
        self.shard_budget > 0
    }

    /// Every entry, oldest first within each shard (the nodes are shared, not copied).
    pub fn entries(&self) -> Vec<(Hash, Arc<[u8]>)> {
        let mut out = Vec::new();
        for s in &self.shards {
            let s = s.lock().unwrap_or_else(|p| p.into_inner());
            out.extend(
                s.order
                    .iter()
                    .filter_map(|h| s.map.get(h).map(|e| (*h, e.node.clone()))),
            );
        }
        out
    }

    /// Entries and bytes held.
    pub fn usage(&self) -> (usize, usize) {
        self.shards.iter().fold((0, 0), |(n, b), s| {
            let s = s.lock().unwrap_or_else(|p| p.into_inner());
            (n + s.map.len(), b + s.bytes)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(i: u32) -> Hash {
        let mut b = [0u8; 32];
        b[..4].copy_from_slice(&i.to_be_bytes());
        b[0] = 0; // one shard, so that the eviction order is observable
        b
    }

    #[test]
    fn keeps_nodes_and_forgets_the_oldest_past_its_budget() {
        let c = NodeCache::new(SHARDS * (3 * (ENTRY_OVERHEAD + 4)));
        for i in 1..=3 {
            c.insert(h(i), Arc::from(&i.to_be_bytes()[..]));
        }
        assert_eq!(c.get(&h(2)).as_deref(), Some(&2u32.to_be_bytes()[..]));
        c.insert(h(4), Arc::from(&4u32.to_be_bytes()[..]));
        assert_eq!(c.get(&h(1)), None, "the oldest went");
        assert!(c.get(&h(4)).is_some() && c.get(&h(3)).is_some());
        assert_eq!(c.usage(), (3, 3 * (ENTRY_OVERHEAD + 4)));
    }

    #[test]
    fn an_unchecked_node_is_checked_when_first_served() {
        let c = NodeCache::new(1 << 20);
        let good = b"a node".to_vec();
        let h = crate::crypto::keccak256(&good);
        c.insert_unchecked(h, Arc::from(&good[..]));
        assert_eq!(c.get(&h).as_deref(), Some(&good[..]));
        let forged = crate::crypto::keccak256(b"something else");
        c.insert_unchecked(forged, Arc::from(&good[..]));
        assert_eq!(
            c.get(&forged),
            None,
            "a node under another's hash is never served"
        );
        assert_eq!(c.usage().0, 1, "and it is gone");
    }

    #[test]
    fn a_zero_budget_caches_nothing() {
        let c = NodeCache::new(0);
        c.insert(h(1), Arc::from(&b"x"[..]));
        assert_eq!(c.get(&h(1)), None);
        assert_eq!(c.usage(), (0, 0));
    }
}
