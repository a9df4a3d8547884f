//! Merkle proofs (`eth_getProof`): the encodings of the nodes on the path to a key, from the
//! root down, as the reference's `Trie.Prove` gives them. A node is an element when its
//! parent refers to it by hash (its encoding is 32 bytes or more), and the root always is;
//! an embedded node is already inside its parent's element. For a key the trie lacks, the
//! proof is the path as far as it goes, ending with the node that shows the absence.

use super::node::{encode, nibbles, Child, Node};
use super::{Error, Result, SecureTrie, Trie};
use crate::crypto::keccak256;

impl Trie<'_> {
    /// The proof of `key`: the encoded nodes from the root to the key's value, or to where
    /// the key's path leaves the trie (empty for the empty trie). Fails when a node on the
    /// way is missing from the store or corrupt.
    pub fn prove(&self, key: &[u8]) -> Result<Vec<Vec<u8>>> {
        let mut proof = Vec::new();
        self.prove_at(&self.root, &nibbles(key), true, &mut proof)?;
        Ok(proof)
    }

    fn prove_at(
        &self,
        child: &Child,
        path: &[u8],
        root: bool,
        proof: &mut Vec<Vec<u8>>,
    ) -> Result<()> {
        let loaded;
        let node = match child {
            Child::Empty => return Ok(()),
            Child::Hash(h) => {
                let bytes = self.store.node(h).ok_or(Error::MissingNode(*h))?;
                loaded = super::node::decode(&bytes).map_err(|e| Error::BadNode(*h, e))?;
                proof.push(bytes);
                &loaded
            }
            Child::Node(n) => {
                // Changed since the last commit: encoded as the commit will store it.
                let enc = encode(n, &mut |_, _| {});
                if root || enc.len() >= 32 {
                    proof.push(enc);
                }
                n.as_ref()
            }
        };
        match node {
            Node::Leaf { .. } => Ok(()),
            Node::Extension { path: ep, child } => match path.strip_prefix(ep.as_slice()) {
                Some(rest) => self.prove_at(child, rest, false, proof),
                None => Ok(()),
            },
            Node::Branch { children, .. } => match path.split_first() {
                Some((&i, rest)) => self.prove_at(&children[i as usize], rest, false, proof),
                None => Ok(()),
            },
        }
    }
}

impl SecureTrie<'_> {
    /// [`Trie::prove`] of the Keccak-256 of `key`: the proof of an account by its address,
    /// or of a storage slot by its 32-byte key.
    pub fn prove(&self, key: &[u8]) -> Result<Vec<Vec<u8>>> {
        self.0.prove(&keccak256(key))
    }
}

/// The proof walker the integration tests use too: alloy-rlp and sha3, nothing of ours.
#[cfg(test)]
#[path = "../../tests/common/mptproof.rs"]
mod verify;

#[cfg(test)]
mod tests {
    use super::super::{MemoryStore, NodeStore, EMPTY_ROOT};
    use super::verify;
    use super::*;

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

    /// A key: 32 bytes as in the state (`short` false), or 0 to 3 bytes from a small
    /// alphabet, so that keys end inside others' paths (values in branches) and leaves are
    /// small enough to be embedded.
    fn random_key(rng: &mut Rng, short: bool) -> Vec<u8> {
        if short {
            let len = (rng.next() % 4) as usize;
            (0..len).map(|_| (rng.next() % 3) as u8 * 0x11).collect()
        } else {
            keccak256(&rng.bytes(8)).to_vec()
        }
    }

    /// A committed trie of `n` random pairs ([`random_key`]) with values of 1 to 40 bytes.
    /// A store, the root of the trie in it, and the (key, value) pairs it holds.
    type Built = (MemoryStore, [u8; 32], Vec<(Vec<u8>, Vec<u8>)>);

    fn random_trie(rng: &mut Rng, n: usize, short: bool) -> Built {
        let mut store = MemoryStore::default();
        let mut t = Trie::new(&store);
        let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        for _ in 0..n {
            let key = random_key(rng, short);
            let len = [1, 2, 5, 40][(rng.next() % 4) as usize];
            let mut value = rng.bytes(len);
            value[0] |= 1;
            t.insert(&key, value.clone()).unwrap();
            pairs.retain(|(k, _)| *k != key);
            pairs.push((key, value));
        }
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        (store, root, pairs)
    }

    #[test]
    fn proofs_of_present_and_absent_keys_verify_from_the_root() {
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let (mut embedded, mut in_branch) = (0, 0);
        for round in 0..80 {
            let n = [1, 2, 3, 17, 200][round % 5];
            let short = round % 2 == 1;
            let (store, root, pairs) = random_trie(&mut rng, n, short);
            let trie = Trie::open(&store, root);
            for (k, v) in &pairs {
                let proof = trie.prove(k).unwrap();
                assert_eq!(
                    verify::verify(&root, k, &proof),
                    Ok(Some(v.clone())),
                    "round {round}"
                );
                // Every element is a stored node: what the store holds under its hash.
                for e in &proof {
                    assert_eq!(store.node(&keccak256(e)).as_ref(), Some(e));
                }
                // Coverage: the value was found inside the last element's branch, in an
                // embedded leaf or as the branch's own value.
                let last = proof.last().unwrap();
                if let Ok(Node::Branch { value, .. }) = super::super::node::decode(last) {
                    if value.as_ref() == Some(v) {
                        in_branch += 1;
                    } else {
                        embedded += 1;
                    }
                }
            }
            for _ in 0..20 {
                let absent = random_key(&mut rng, short);
                if pairs.iter().any(|(k, _)| *k == absent) {
                    continue;
                }
                let proof = trie.prove(&absent).unwrap();
                assert!(!proof.is_empty());
                assert_eq!(verify::verify(&root, &absent, &proof), Ok(None));
            }
        }
        assert!(embedded > 0 && in_branch > 0, "{embedded} {in_branch}");
    }

    /// A leaf small enough to sit inside its branch is no element of its own: the proof
    /// ends with the branch, and the verifier finds the value inside it.
    #[test]
    fn an_embedded_leaf_is_inside_its_parents_element() {
        let mut store = MemoryStore::default();
        let mut t = Trie::new(&store);
        t.insert(&[0x10], vec![1]).unwrap();
        t.insert(&[0x20], vec![2]).unwrap();
        t.insert(&[0x30], vec![7; 40]).unwrap();
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        let trie = Trie::open(&store, root);
        let small = trie.prove(&[0x10]).unwrap();
        assert_eq!(small.len(), 1, "only the root branch");
        assert_eq!(verify::verify(&root, &[0x10], &small), Ok(Some(vec![1])));
        let big = trie.prove(&[0x30]).unwrap();
        assert_eq!(big.len(), 2, "the branch and the leaf it refers to by hash");
        assert_eq!(verify::verify(&root, &[0x30], &big), Ok(Some(vec![7; 40])));
        // Absent under an empty slot of the branch, and past a leaf's differing path.
        assert_eq!(
            verify::verify(&root, &[0x40], &trie.prove(&[0x40]).unwrap()),
            Ok(None)
        );
        assert_eq!(
            verify::verify(&root, &[0x31], &trie.prove(&[0x31]).unwrap()),
            Ok(None)
        );
    }

    /// A root under 32 bytes is still the first element (the reference keeps it).
    #[test]
    fn a_small_root_is_an_element() {
        let mut store = MemoryStore::default();
        let mut t = Trie::new(&store);
        t.insert(b"k", b"v".to_vec()).unwrap();
        // Before the commit the root is in memory; after it, in the store: the same proof.
        let before = t.prove(b"k").unwrap();
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        let trie = Trie::open(&store, root);
        let after = trie.prove(b"k").unwrap();
        assert_eq!(before, after);
        assert_eq!(after.len(), 1);
        assert!(after[0].len() < 32);
        assert_eq!(verify::verify(&root, b"k", &after), Ok(Some(b"v".to_vec())));
        assert_eq!(
            verify::verify(&root, b"x", &trie.prove(b"x").unwrap()),
            Ok(None)
        );
    }

    #[test]
    fn the_empty_trie_proves_nothing() {
        let store = MemoryStore::default();
        assert_eq!(Trie::open(&store, EMPTY_ROOT).prove(b"k"), Ok(vec![]));
    }

    #[test]
    fn uncommitted_changes_are_proved_as_the_commit_will_store_them() {
        let mut rng = Rng(77);
        let (mut store, root, pairs) = random_trie(&mut rng, 50, false);
        let mut t = Trie::open(&store, root);
        t.insert(&pairs[0].0, vec![9; 33]).unwrap();
        let before: Vec<_> = pairs.iter().map(|(k, _)| t.prove(k).unwrap()).collect();
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        let trie = Trie::open(&store, root);
        for ((k, _), proof) in pairs.iter().zip(before) {
            assert_eq!(trie.prove(k).unwrap(), proof);
        }
        assert_eq!(
            verify::verify(&root, &pairs[0].0, &trie.prove(&pairs[0].0).unwrap()),
            Ok(Some(vec![9; 33]))
        );
    }

    #[test]
    fn a_missing_node_is_an_error() {
        let store = MemoryStore::default();
        assert_eq!(
            Trie::open(&store, [7; 32]).prove(b"k"),
            Err(Error::MissingNode([7; 32]))
        );
    }

    #[test]
    fn the_secure_trie_proves_the_hash_of_the_key() {
        let mut store = MemoryStore::default();
        let mut t = SecureTrie(Trie::new(&store));
        t.insert(b"addr", vec![5; 50]).unwrap();
        t.insert(b"other", vec![6; 50]).unwrap();
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        let t = SecureTrie(Trie::open(&store, root));
        let proof = t.prove(b"addr").unwrap();
        assert_eq!(
            verify::verify(&root, &keccak256(b"addr"), &proof),
            Ok(Some(vec![5; 50]))
        );
    }
}
