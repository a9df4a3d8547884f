//! The keys whose values differ between two tries in one store (`debug_getModifiedAccounts*`:
//! the accounts two states disagree on). Subtrees that are the same stored node in both are
//! skipped without being read, so the work follows the differences, not the size of the
//! tries.

use super::node::{decode, Child, Hash, Node};
use super::{Error, NodeStore, Result, EMPTY_ROOT};

/// One side of a comparison at a path: nothing, a stored node, or a node in hand (possibly
/// a leaf or an extension with the path's first nibbles taken off).
#[derive(Clone)]
enum Side {
    Empty,
    Stored(Hash),
    Node(Node),
}

fn load(store: &dyn NodeStore, side: Side) -> Result<Option<Node>> {
    match side {
        Side::Empty => Ok(None),
        Side::Node(n) => Ok(Some(n)),
        Side::Stored(h) => {
            let bytes = store.node(&h).ok_or(Error::MissingNode(h))?;
            decode(&bytes).map(Some).map_err(|e| Error::BadNode(h, e))
        }
    }
}

fn side_of(child: &Child) -> Side {
    match child {
        Child::Empty => Side::Empty,
        Child::Hash(h) => Side::Stored(*h),
        Child::Node(n) => Side::Node((**n).clone()),
    }
}

/// A node seen as a branch: its value at this path and what hangs under each nibble.
fn expand(node: Option<Node>) -> (Option<Vec<u8>>, Vec<Side>) {
    let mut children = vec![Side::Empty; 16];
    let value = match node {
        None => None,
        Some(Node::Leaf { path, value }) => {
            if path.is_empty() {
                Some(value)
            } else {
                children[usize::from(path[0])] = Side::Node(Node::Leaf {
                    path: path[1..].to_vec(),
                    value,
                });
                None
            }
        }
        Some(Node::Extension { path, child }) => {
            if path.is_empty() {
                // Not a node the encoder makes; treat it as its child.
                return expand_child(&child);
            }
            children[usize::from(path[0])] = if path.len() == 1 {
                side_of(&child)
            } else {
                Side::Node(Node::Extension {
                    path: path[1..].to_vec(),
                    child,
                })
            };
            None
        }
        Some(Node::Branch { children: c, value }) => {
            for (i, ch) in c.iter().enumerate() {
                children[i] = side_of(ch);
            }
            value
        }
    };
    (value, children)
}

fn expand_child(child: &Child) -> (Option<Vec<u8>>, Vec<Side>) {
    match child {
        Child::Node(n) => expand(Some((**n).clone())),
        // A stored child under an empty extension: compare it as a whole one level down.
        _ => (None, vec![Side::Empty; 16]),
    }
}

fn same(a: &Side, b: &Side) -> bool {
    match (a, b) {
        (Side::Empty, Side::Empty) => true,
        (Side::Stored(x), Side::Stored(y)) => x == y,
        (Side::Node(x), Side::Node(y)) => x == y,
        _ => false,
    }
}

fn walk(
    store: &dyn NodeStore,
    path: &mut Vec<u8>,
    a: Side,
    b: Side,
    out: &mut Vec<Vec<u8>>,
) -> Result<()> {
    if same(&a, &b) {
        return Ok(());
    }
    let (va, ca) = expand(load(store, a)?);
    let (vb, cb) = expand(load(store, b)?);
    if va != vb {
        out.push(pack(path));
    }
    for (i, (x, y)) in ca.into_iter().zip(cb).enumerate() {
        path.push(i as u8);
        walk(store, path, x, y, out)?;
        path.pop();
    }
    Ok(())
}

/// Nibbles back to bytes (a key's path has an even number of nibbles).
fn pack(nibbles: &[u8]) -> Vec<u8> {
    nibbles
        .chunks(2)
        .map(|c| (c[0] << 4) | c.get(1).copied().unwrap_or(0))
        .collect()
}

/// The keys (as stored: for a secure trie, the hashes of the original keys) whose values
/// differ between the tries at `a` and `b`: changed, added or removed. In key order.
pub fn changed_keys(store: &dyn NodeStore, a: Hash, b: Hash) -> Result<Vec<Vec<u8>>> {
    let side = |h: Hash| {
        if h == EMPTY_ROOT {
            Side::Empty
        } else {
            Side::Stored(h)
        }
    };
    let mut out = Vec::new();
    walk(store, &mut Vec::new(), side(a), side(b), &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trie::{MemoryStore, Trie};

    fn build(store: &mut MemoryStore, base: Hash, kv: &[(Vec<u8>, Option<Vec<u8>>)]) -> Hash {
        let mut t = Trie::open(store, base);
        for (k, v) in kv {
            match v {
                Some(v) => t.insert(k, v.clone()).unwrap(),
                None => t.delete(k).unwrap(),
            }
        }
        let (root, nodes) = t.commit();
        drop(t);
        store.apply(nodes);
        root
    }

    #[test]
    fn only_the_keys_that_differ_are_found() {
        let mut store = MemoryStore::default();
        let key = |i: u32| crate::crypto::keccak256(&i.to_be_bytes()).to_vec();
        let val = |i: u32| vec![0xaa; (i % 40 + 1) as usize];
        let all: Vec<_> = (0..500).map(|i| (key(i), Some(val(i)))).collect();
        let a = build(&mut store, EMPTY_ROOT, &all);
        assert!(changed_keys(&store, a, a).unwrap().is_empty());
        let edits = vec![
            (key(3), Some(vec![1, 2, 3])),
            (key(77), None),
            (key(1000), Some(vec![9])),
        ];
        let b = build(&mut store, a, &edits);
        let mut want = vec![key(3), key(77), key(1000)];
        want.sort();
        assert_eq!(changed_keys(&store, a, b).unwrap(), want);
        assert_eq!(changed_keys(&store, b, a).unwrap(), want);
        // Against the empty trie: every key.
        assert_eq!(changed_keys(&store, EMPTY_ROOT, a).unwrap().len(), 500);
        // A missing node is an error.
        assert!(changed_keys(&store, a, [7; 32]).is_err());
    }
}
