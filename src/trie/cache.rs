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

/// A cached node.
struct Entry {
    node: Arc<[u8]>,
}

#[derive(Default)]
struct Shard {
    map: HashMap<Hash, Entry>,
    /// Insertion order, for eviction.
    order: VecDeque<Hash>,
    bytes: usize,
}

/// The nodes of a saved cache file, kept as they were read until each is first asked for
/// (then it is checked against its hash and moved into the cache). The file's format is its
/// owner's business (`chain::cachefile`); the cache only looks nodes up.
pub trait SavedNodes: Send + Sync {
    /// The bytes saved under `hash`, unchecked; `None` when the file has no such node.
    fn find(&self, hash: &Hash) -> Option<&[u8]>;
}

/// A bounded cache of trie nodes by hash.
pub struct NodeCache {
    shards: Vec<Mutex<Shard>>,
    preloaded: std::sync::RwLock<Option<Arc<dyn SavedNodes>>>,
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
            preloaded: std::sync::RwLock::new(None),
            shard_budget: budget / SHARDS,
        }
    }

    fn shard(&self, hash: &Hash) -> std::sync::MutexGuard<'_, Shard> {
        // The key is a hash already: its first byte spreads evenly.
        self.shards[Self::shard_of(hash)]
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// The node with this hash, if cached. A node not yet checked (loaded from a saved
    /// cache) is checked against its hash first; one that fails is dropped, never served.
    pub fn get(&self, hash: &Hash) -> Option<Arc<[u8]>> {
        if self.shard_budget == 0 {
            return None;
        }
        let s = self.shard(hash);
        match s.map.get(hash) {
            Some(e) => Some(e.node.clone()),
            None => {
                drop(s);
                self.checked_preload(hash)
            }
        }
    }

    /// A node of the loaded cache file: checked against its hash, then kept in the cache.
    fn checked_preload(&self, hash: &Hash) -> Option<Arc<[u8]>> {
        let pre = self
            .preloaded
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()?;
        let bytes = pre.find(hash)?;
        if crate::crypto::keccak256(bytes) != *hash {
            crate::log::warn(
                "A node of the saved trie node cache does not match its hash; not used",
                &[("hash", &format!("0x{}", hex::encode(hash)))],
            );
            return None;
        }
        let node: Arc<[u8]> = Arc::from(bytes);
        self.insert(*hash, node.clone());
        Some(node)
    }

    /// Takes the nodes of a saved cache file. Nothing is copied or checked now; a node is
    /// checked against its hash when first asked for.
    pub fn preload(&self, saved: Arc<dyn SavedNodes>) {
        if self.shard_budget == 0 {
            return;
        }
        *self.preloaded.write().unwrap_or_else(|p| p.into_inner()) = Some(saved);
    }

    /// Keeps `node` under `hash`, forgetting the shard's oldest entries when over budget.
    pub fn insert(&self, hash: Hash, node: Arc<[u8]>) {
        self.put(hash, node);
    }

    /// Which shard holds `hash` (0..16).
    pub fn shard_of(hash: &Hash) -> usize {
        usize::from(hash[0]) % SHARDS
    }

    /// How many shards there are.
    pub const SHARDS: usize = SHARDS;

    fn put(&self, hash: Hash, node: Arc<[u8]>) {
        let cost = node.len() + ENTRY_OVERHEAD;
        if cost > self.shard_budget {
            return;
        }
        let mut s = self.shard(&hash);
        if s.map.insert(hash, Entry { node }).is_some() {
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
    fn a_preloaded_node_is_checked_when_first_asked_for() {
        let c = NodeCache::new(1 << 20);
        struct Two(HashMap<Hash, &'static [u8]>);
        impl SavedNodes for Two {
            fn find(&self, hash: &Hash) -> Option<&[u8]> {
                self.0.get(hash).copied()
            }
        }
        let good = crate::crypto::keccak256(b"a node");
        let forged = crate::crypto::keccak256(b"something else");
        c.preload(Arc::new(Two(HashMap::from([
            (good, &b"a node"[..]),
            (forged, &b"forged"[..]),
        ]))));
        assert_eq!(c.usage().0, 0, "nothing is in the cache proper yet");
        assert_eq!(c.get(&good).as_deref(), Some(&b"a node"[..]));
        assert_eq!(c.usage().0, 1, "now it is");
        assert_eq!(
            c.get(&forged),
            None,
            "a node under another's hash is never served"
        );
    }

    #[test]
    fn a_zero_budget_caches_nothing() {
        let c = NodeCache::new(0);
        c.insert(h(1), Arc::from(&b"x"[..]));
        assert_eq!(c.get(&h(1)), None);
        assert_eq!(c.usage(), (0, 0));
    }
}
