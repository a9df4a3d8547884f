//! Answers of state look-ups by (trie root, key): an account of a state, a slot of a storage
//! trie. A trie never changes under its root, so an answer never goes stale; the cache only
//! needs a bound. Calls (`chain_call`, estimates) read the same few accounts and slots of the
//! head's state again and again: with it, a repeated look-up costs a map probe instead of a
//! walk of four or five trie nodes.

use std::collections::HashMap;
use std::sync::Mutex;

type Hash = [u8; 32];

const SHARDS: usize = 16;
/// What an entry costs besides its value (two keys, the map's slot, the allocation).
const ENTRY_OVERHEAD: usize = 112;

#[derive(Default)]
struct Shard {
    map: HashMap<(Hash, Hash), Option<Box<[u8]>>>,
    bytes: usize,
}

/// A bounded cache of trie look-ups; a shard that fills up starts over (the look-ups it
/// forgets are walked again).
pub struct Lookups {
    shards: Vec<Mutex<Shard>>,
    shard_budget: usize,
}

impl Lookups {
    /// A cache of about `budget` bytes (0: nothing is kept).
    pub fn new(budget: usize) -> Lookups {
        Lookups {
            shards: (0..SHARDS).map(|_| Mutex::default()).collect(),
            shard_budget: budget / SHARDS,
        }
    }

    fn shard(&self, key: &Hash) -> std::sync::MutexGuard<'_, Shard> {
        // Keys are addresses or slots: mix a few bytes for the shard.
        let i = usize::from(key[31] ^ key[19] ^ key[0]) % SHARDS;
        self.shards[i].lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The value under `key` in the trie at `root`, looked up with `walk` when not known
    /// (`None`: the trie has no such key).
    pub fn get_or_walk<E>(
        &self,
        root: &Hash,
        key: &Hash,
        walk: impl FnOnce() -> Result<Option<Vec<u8>>, E>,
    ) -> Result<Option<Vec<u8>>, E> {
        if self.shard_budget == 0 {
            return walk();
        }
        if let Some(v) = self.shard(key).map.get(&(*root, *key)) {
            return Ok(v.as_ref().map(|b| b.to_vec()));
        }
        let value = walk()?;
        let mut s = self.shard(key);
        let cost = ENTRY_OVERHEAD + value.as_ref().map_or(0, Vec::len);
        if s.bytes + cost > self.shard_budget {
            s.map.clear();
            s.bytes = 0;
        }
        if s.map
            .insert(
                (*root, *key),
                value.as_ref().map(|v| v.clone().into_boxed_slice()),
            )
            .is_none()
        {
            s.bytes += cost;
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_kept_by_root_and_key_within_the_budget() {
        let c = Lookups::new(SHARDS * (ENTRY_OVERHEAD + 4) * 2);
        let walks = std::cell::Cell::new(0);
        let get = |root: u8, key: u8| {
            c.get_or_walk::<()>(&[root; 32], &[key; 32], || {
                walks.set(walks.get() + 1);
                Ok((key != 0).then(|| vec![root, key, 0, 0]))
            })
            .unwrap()
        };
        assert_eq!(get(1, 2), Some(vec![1, 2, 0, 0]));
        assert_eq!(get(1, 2), Some(vec![1, 2, 0, 0]));
        assert_eq!(get(1, 0), None);
        assert_eq!(get(1, 0), None);
        assert_eq!(
            get(3, 2),
            Some(vec![3, 2, 0, 0]),
            "another root is another answer"
        );
        assert_eq!(walks.get(), 3);
        // Past its budget a shard starts over: still right, walked again.
        let c = Lookups::new(SHARDS * (ENTRY_OVERHEAD + 4));
        for root in 0..10u8 {
            let v = c
                .get_or_walk::<()>(&[root; 32], &[5; 32], || Ok(Some(vec![root; 4])))
                .unwrap();
            assert_eq!(v, Some(vec![root; 4]));
        }
        let disabled = Lookups::new(0);
        let mut n = 0;
        for _ in 0..3 {
            disabled
                .get_or_walk::<()>(&[0; 32], &[1; 32], || {
                    n += 1;
                    Ok(None)
                })
                .unwrap();
        }
        assert_eq!(n, 3);
    }
}
