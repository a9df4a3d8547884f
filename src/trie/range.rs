//! Reading a trie's entries in key order without collecting them: [`Trie::visit_from`] walks
//! the nodes depth first, skips every subtree whose keys all lie below a start key, and stops
//! when the visitor says so. What a dump or a page of one needs: memory for one path of the
//! trie, whatever its size.

use super::node::{nibbles, Node};
use super::{concat, Child, Result, Trie};

impl Trie<'_> {
    /// Calls `visit(key, value)` for every entry whose key is at least `start`, in key
    /// order, until it returns false. Returns false when the visitor stopped the walk, true
    /// when every entry was visited. Fails when a node is missing or corrupt.
    pub fn visit_from(
        &self,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        let start = nibbles(start);
        let mut prefix = Vec::new();
        self.visit_child(&self.root, &mut prefix, &start, visit)
    }

    fn visit_child(
        &self,
        child: &Child,
        prefix: &mut Vec<u8>,
        start: &[u8],
        visit: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<bool> {
        // Every key under `prefix` is below `start`: nothing to read there.
        let n = prefix.len().min(start.len());
        if prefix[..n] < start[..n] {
            return Ok(true);
        }
        let Some(node) = self.resolve(child)? else {
            return Ok(true);
        };
        match node.as_ref() {
            Node::Leaf { path, value } => {
                let key = concat(prefix, path);
                if key.as_slice() >= start {
                    return Ok(visit(&to_key(&key), value));
                }
            }
            Node::Extension { path, child } => {
                let n = prefix.len();
                prefix.extend_from_slice(path);
                let go_on = self.visit_child(child, prefix, start, visit)?;
                prefix.truncate(n);
                return Ok(go_on);
            }
            Node::Branch { children, value } => {
                if let Some(v) = value {
                    if prefix.as_slice() >= start && !visit(&to_key(prefix), v) {
                        return Ok(false);
                    }
                }
                for (i, c) in children.iter().enumerate() {
                    prefix.push(i as u8);
                    let go_on = self.visit_child(c, prefix, start, visit)?;
                    prefix.pop();
                    if !go_on {
                        return Ok(false);
                    }
                }
            }
        }
        Ok(true)
    }
}

/// The bytes of a key given as nibbles (an odd last nibble as a byte's high half).
fn to_key(path: &[u8]) -> Vec<u8> {
    path.chunks(2)
        .map(|c| (c[0] << 4) | c.get(1).copied().unwrap_or(0))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::{MemoryStore, Trie};

    /// A stored trie of `keys` (value: the key's last byte) and its store.
    fn stored(keys: &[[u8; 2]]) -> (MemoryStore, [u8; 32]) {
        let store = MemoryStore::default();
        let mut t = Trie::new(&store);
        for k in keys {
            t.insert(k, vec![k[1]]).unwrap();
        }
        let (root, nodes) = t.commit();
        let mut store = store;
        store.apply(nodes);
        (store, root)
    }

    #[test]
    fn entries_from_a_start_key_in_order_and_a_stop() {
        let keys = [
            [0x10, 1],
            [0x12, 2],
            [0x12, 3],
            [0x20, 4],
            [0xf0, 5],
            [0x11, 6],
        ];
        let (store, root) = stored(&keys);
        let t = Trie::open(&store, root);
        let from = |start: &[u8], most: usize| {
            let mut seen = Vec::new();
            let all = t
                .visit_from(start, &mut |k, v| {
                    seen.push((k.to_vec(), v.to_vec()));
                    seen.len() < most
                })
                .unwrap();
            (seen, all)
        };
        let (all, done) = from(&[], usize::MAX);
        assert!(done);
        let want: Vec<(Vec<u8>, Vec<u8>)> = [
            [0x10, 1],
            [0x11, 6],
            [0x12, 2],
            [0x12, 3],
            [0x20, 4],
            [0xf0, 5],
        ]
        .iter()
        .map(|k| (k.to_vec(), vec![k[1]]))
        .collect();
        assert_eq!(all, want);
        // A start between keys, on a key, past every key.
        assert_eq!(from(&[0x12, 0x03], usize::MAX).0, want[3..].to_vec());
        assert_eq!(from(&[0x11, 0x07], usize::MAX).0, want[2..].to_vec());
        assert_eq!(from(&[0xf0, 0x06], usize::MAX), (vec![], true));
        // A visitor that stops after two entries.
        assert_eq!(from(&[0x11], 2), (want[1..3].to_vec(), false));
        assert_eq!(t.entries().unwrap(), want);
    }
}
