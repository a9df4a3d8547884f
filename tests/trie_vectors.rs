//! The Merkle Patricia Trie against `tests/vectors/trie.json` (made by an independent
//! implementation), and against a sorted map over random changes.

use std::collections::BTreeMap;

use chain_node::crypto::keccak256;
use chain_node::trie::{reachable, MemoryStore, SecureTrie, Trie, EMPTY_ROOT};
use serde_json::Value;

fn hex_bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

fn cases() -> Vec<Value> {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/trie.json"
    ))
    .unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    v["cases"].as_array().unwrap().clone()
}

/// Every case: the ops applied in order give the vector's root, before and after a commit;
/// reopened from the store at that root, the trie holds exactly the final key set.
/// A trie's content: key to value.
type Contents = BTreeMap<Vec<u8>, Vec<u8>>;

#[test]
fn roots_match_the_vectors() {
    let all = cases();
    assert_eq!(all.len(), 15);
    for case in all {
        let name = case["name"].as_str().unwrap();
        let secure = case["secure"].as_bool().unwrap();
        let mut store = MemoryStore::default();
        let mut trie = Trie::new(&store);
        let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        for op in case["ops"].as_array().unwrap() {
            let key = hex_bytes(&op[0]);
            let key = if secure {
                keccak256(&key).to_vec()
            } else {
                key
            };
            if op[1].is_null() {
                trie.delete(&key).unwrap();
                model.remove(&key);
            } else {
                let value = hex_bytes(&op[1]);
                trie.insert(&key, value.clone()).unwrap();
                model.insert(key, value);
            }
        }
        let want = hex_bytes(&case["root"]);
        assert_eq!(trie.root_hash().to_vec(), want, "{name}");
        let (root, nodes) = trie.commit();
        assert_eq!(root.to_vec(), want, "{name}: committed");
        drop(trie);
        store.apply(nodes);
        let reopened = Trie::open(&store, root);
        for (k, v) in &model {
            assert_eq!(reopened.get(k).unwrap().as_ref(), Some(v), "{name}");
        }
        let entries: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
        assert_eq!(
            reopened.entries().unwrap(),
            entries,
            "{name}: entries in key order"
        );
    }
}

/// A small deterministic generator (xorshift), so that a failure can be replayed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

/// Random inserts, overwrites and deletes over several commits: after each, the root equals
/// that of a trie built afresh from the map's content, every key reads back, older roots stay
/// readable, and deleting everything gives the empty root.
#[test]
fn random_changes_agree_with_a_sorted_map() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut store = MemoryStore::default();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut root = EMPTY_ROOT;
    let mut history: Vec<([u8; 32], Contents)> = Vec::new();
    for round in 0..8 {
        let mut trie = Trie::open(&store, root);
        for _ in 0..400 {
            // Short keys from a small alphabet: shared prefixes, branches with values,
            // collapses.
            let len = 1 + (rng.next() % 4) as usize;
            let key: Vec<u8> = (0..len).map(|_| (rng.next() % 5) as u8 * 0x11).collect();
            if rng.next().is_multiple_of(3) {
                trie.delete(&key).unwrap();
                model.remove(&key);
            } else {
                let len = 1 + (rng.next() % 40) as usize;
                let value = rng.bytes(len);
                trie.insert(&key, value.clone()).unwrap();
                model.insert(key, value);
            }
        }
        let (new_root, nodes) = trie.commit();
        drop(trie);
        store.apply(nodes);
        let fresh_store = MemoryStore::default();
        let mut fresh = Trie::new(&fresh_store);
        for (k, v) in &model {
            fresh.insert(k, v.clone()).unwrap();
        }
        assert_eq!(fresh.root_hash(), new_root, "round {round}");
        root = new_root;
        history.push((root, model.clone()));
    }
    for (i, (old_root, old_model)) in history.iter().enumerate() {
        let t = Trie::open(&store, *old_root);
        let entries: Vec<(Vec<u8>, Vec<u8>)> = old_model.clone().into_iter().collect();
        assert_eq!(t.entries().unwrap(), entries, "the state of round {i}");
    }
    // Every node reachable from the last root is in the store, each visited once.
    let mut seen = std::collections::HashSet::new();
    reachable(&store, root, &mut |h, bytes| {
        assert_eq!(&keccak256(bytes), h);
        assert!(seen.insert(*h), "visited twice");
    })
    .unwrap();
    assert!(!seen.is_empty());
    let mut trie = Trie::open(&store, root);
    for k in model.keys() {
        trie.delete(k).unwrap();
    }
    assert_eq!(trie.root_hash(), EMPTY_ROOT);
    assert_eq!(trie.get(&[0x11]).unwrap(), None);
}

#[test]
fn the_secure_trie_hashes_its_keys() {
    let store = MemoryStore::default();
    let mut secure = SecureTrie(Trie::new(&store));
    let mut plain = Trie::new(&store);
    secure.insert(b"dog", b"puppy".to_vec()).unwrap();
    plain.insert(&keccak256(b"dog"), b"puppy".to_vec()).unwrap();
    assert_eq!(secure.root_hash(), plain.root_hash());
    assert_eq!(secure.get(b"dog").unwrap(), Some(b"puppy".to_vec()));
    secure.delete(b"dog").unwrap();
    assert_eq!(secure.root_hash(), EMPTY_ROOT);
}
