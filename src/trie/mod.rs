//! The Merkle Patricia Trie over a node store keyed by hash: what the chain's state (accounts
//! by address) and its transaction and receipt roots are built on.
//!
//! A [`Trie`] is opened at a root over a [`NodeStore`]; it loads the nodes it walks, keeps
//! what it changes in memory, and [`Trie::commit`] gives the new root and the new nodes to
//! write (the store keeps old nodes, so the states of older blocks stay readable until a
//! migration copies the live ones elsewhere: [`reachable`] walks them). Unchanged subtrees
//! stay references by hash and are never re-encoded.

pub mod node;

pub mod cache;
pub mod diff;
mod proof;
mod range;

use std::collections::HashMap;

use crate::crypto::keccak256;
use node::{decode, encode, nibbles, Child, DecodeError, Hash, Node};

/// The root of the empty trie: Keccak-256 of the RLP of the empty string.
pub const EMPTY_ROOT: Hash = [
    0x56, 0xe8, 0x1f, 0x17, 0x1b, 0xcc, 0x55, 0xa6, 0xff, 0x83, 0x45, 0xe6, 0x92, 0xc0, 0xf8, 0x6e,
    0x5b, 0x48, 0xe0, 0x1b, 0x99, 0x6c, 0xad, 0xc0, 0x01, 0x62, 0x2f, 0xb5, 0xe3, 0x63, 0xb4, 0x21,
];

/// Where trie nodes are kept, by the hash of their encoding.
pub trait NodeStore {
    /// The encoding of the node with this hash, if the store has it.
    fn node(&self, hash: &Hash) -> Option<Vec<u8>>;

    /// Calls `f` with the encoding of the node with this hash, without a copy where the store
    /// can lend it (a look-up reads nodes in place); false when the store lacks it.
    fn with_node(&self, hash: &Hash, f: &mut dyn FnMut(&[u8])) -> bool {
        match self.node(hash) {
            Some(n) => {
                f(&n);
                true
            }
            None => false,
        }
    }
}

impl<T: NodeStore + ?Sized> NodeStore for &T {
    fn node(&self, hash: &Hash) -> Option<Vec<u8>> {
        (**self).node(hash)
    }

    fn with_node(&self, hash: &Hash, f: &mut dyn FnMut(&[u8])) -> bool {
        (**self).with_node(hash, f)
    }
}

/// A node store in memory (tests, and the transaction and receipt roots of one block).
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    nodes: HashMap<Hash, Vec<u8>>,
}

impl MemoryStore {
    /// Adds the nodes a commit returned.
    pub fn apply(&mut self, nodes: Vec<(Hash, Vec<u8>)>) {
        self.nodes.extend(nodes);
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

impl NodeStore for MemoryStore {
    fn node(&self, hash: &Hash) -> Option<Vec<u8>> {
        self.nodes.get(hash).cloned()
    }

    fn with_node(&self, hash: &Hash, f: &mut dyn FnMut(&[u8])) -> bool {
        match self.nodes.get(hash) {
            Some(n) => {
                f(n);
                true
            }
            None => false,
        }
    }
}

/// Why a trie operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    #[error("trie node 0x{} is missing from the store", hex::encode(.0))]
    MissingNode(Hash),
    #[error("trie node 0x{hash}: {source}", hash = hex::encode(.0), source = .1)]
    BadNode(Hash, DecodeError),
}

pub type Result<T> = std::result::Result<T, Error>;

/// A Merkle Patricia Trie opened at a root over a store.
pub struct Trie<'s> {
    store: &'s dyn NodeStore,
    root: Child,
}

fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn empty_children() -> Box<[Child; 16]> {
    Box::new(std::array::from_fn(|_| Child::Empty))
}

fn concat(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(a.len() + b.len());
    v.extend_from_slice(a);
    v.extend_from_slice(b);
    v
}

impl<'s> Trie<'s> {
    /// The empty trie over `store`.
    pub fn new(store: &'s dyn NodeStore) -> Trie<'s> {
        Trie {
            store,
            root: Child::Empty,
        }
    }

    /// The trie whose root is `root` in `store`. Nothing is read until a node is needed.
    pub fn open(store: &'s dyn NodeStore, root: Hash) -> Trie<'s> {
        Trie {
            store,
            root: if root == EMPTY_ROOT {
                Child::Empty
            } else {
                Child::Hash(root)
            },
        }
    }

    fn load(&self, hash: &Hash) -> Result<Node> {
        let bytes = self.store.node(hash).ok_or(Error::MissingNode(*hash))?;
        decode(&bytes).map_err(|e| Error::BadNode(*hash, e))
    }

    /// The node a child stands for (`None` for an empty child), loading it when stored.
    fn resolve<'c>(&self, child: &'c Child) -> Result<Option<std::borrow::Cow<'c, Node>>> {
        Ok(match child {
            Child::Empty => None,
            Child::Hash(h) => Some(std::borrow::Cow::Owned(self.load(h)?)),
            Child::Node(n) => Some(std::borrow::Cow::Borrowed(n)),
        })
    }

    /// The value under `key`, if any. Fails when a node on the way is missing or corrupt.
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.get_at(&self.root, &nibbles(key))
    }

    /// Walks from `child` by reference: only nodes loaded from the store are made.
    fn get_at(&self, child: &Child, path: &[u8]) -> Result<Option<Vec<u8>>> {
        match child {
            Child::Empty => Ok(None),
            Child::Hash(h) => self.get_stored(h, path),
            Child::Node(n) => self.get_in(n, path),
        }
    }

    /// Walks stored nodes from `hash`, each read in place where the store lends it
    /// ([`node::step`]): no node is built, only the value found is copied.
    fn get_stored(&self, hash: &Hash, path: &[u8]) -> Result<Option<Vec<u8>>> {
        enum Next {
            Done(Option<Vec<u8>>),
            Stored(Hash, usize),
            Bad(DecodeError),
        }
        let (mut hash, mut path) = (*hash, path);
        loop {
            let mut next = Next::Done(None);
            let found = self.store.with_node(&hash, &mut |bytes| {
                let (mut at, mut used) = (bytes, 0);
                next = loop {
                    match node::step(at, &path[used..]) {
                        Ok(node::Step::Value(v)) => break Next::Done(Some(v.to_vec())),
                        Ok(node::Step::Absent) => break Next::Done(None),
                        Ok(node::Step::Stored(h, u)) => break Next::Stored(h, used + u),
                        Ok(node::Step::Embedded(e, u)) => {
                            at = e;
                            used += u;
                        }
                        Err(e) => break Next::Bad(e),
                    }
                };
            });
            if !found {
                return Err(Error::MissingNode(hash));
            }
            match next {
                Next::Done(v) => return Ok(v),
                Next::Stored(h, used) => {
                    hash = h;
                    path = &path[used..];
                }
                Next::Bad(e) => return Err(Error::BadNode(hash, e)),
            }
        }
    }

    fn get_in(&self, node: &Node, path: &[u8]) -> Result<Option<Vec<u8>>> {
        match node {
            Node::Leaf { path: lp, value } => Ok((lp.as_slice() == path).then(|| value.clone())),
            Node::Extension { path: ep, child } => match path.strip_prefix(ep.as_slice()) {
                Some(rest) => self.get_at(child, rest),
                None => Ok(None),
            },
            Node::Branch { children, value } => match path.split_first() {
                None => Ok(value.clone()),
                Some((&i, tail)) => self.get_at(&children[i as usize], tail),
            },
        }
    }

    /// Sets `key` to `value`; an empty value deletes the key (as in the reference's tries).
    pub fn insert(&mut self, key: &[u8], value: Vec<u8>) -> Result<()> {
        if value.is_empty() {
            return self.delete(key);
        }
        let root = std::mem::replace(&mut self.root, Child::Empty);
        // A stored root is kept to restore on failure; an in-memory one is not copied (that
        // cost a deep copy per insert): after a failure the trie is not to be used again.
        let backup = match &root {
            Child::Node(_) => None,
            stored => Some(stored.clone()),
        };
        let path = nibbles(key);
        match self.insert_at(root, &path, value) {
            Ok(new) => {
                self.root = new;
                Ok(())
            }
            Err(e) => {
                self.root = backup.unwrap_or(Child::Empty);
                Err(e)
            }
        }
    }

    fn insert_at(&self, child: Child, path: &[u8], value: Vec<u8>) -> Result<Child> {
        let node = match child {
            Child::Empty => {
                return Ok(Child::Node(Box::new(Node::Leaf {
                    path: path.to_vec(),
                    value,
                })))
            }
            Child::Hash(h) => self.load(&h)?,
            Child::Node(n) => *n,
        };
        let node = match node {
            Node::Leaf {
                path: lp,
                value: lv,
            } => {
                let common = common_prefix(&lp, path);
                if common == lp.len() && common == path.len() {
                    Node::Leaf { path: lp, value }
                } else {
                    let mut children = empty_children();
                    let mut branch_value = None;
                    if common == lp.len() {
                        branch_value = Some(lv);
                    } else {
                        children[lp[common] as usize] = Child::Node(Box::new(Node::Leaf {
                            path: lp[common + 1..].to_vec(),
                            value: lv,
                        }));
                    }
                    split(children, branch_value, path, common, value)
                }
            }
            Node::Extension { path: ep, child } => {
                let common = common_prefix(&ep, path);
                if common == ep.len() {
                    let child = self.insert_at(child, &path[common..], value)?;
                    Node::Extension { path: ep, child }
                } else {
                    let mut children = empty_children();
                    let rest = &ep[common + 1..];
                    children[ep[common] as usize] = if rest.is_empty() {
                        child
                    } else {
                        Child::Node(Box::new(Node::Extension {
                            path: rest.to_vec(),
                            child,
                        }))
                    };
                    split(children, None, path, common, value)
                }
            }
            Node::Branch {
                mut children,
                value: bv,
            } => match path.split_first() {
                None => Node::Branch {
                    children,
                    value: Some(value),
                },
                Some((&i, tail)) => {
                    let slot = std::mem::replace(&mut children[i as usize], Child::Empty);
                    children[i as usize] = self.insert_at(slot, tail, value)?;
                    Node::Branch {
                        children,
                        value: bv,
                    }
                }
            },
        };
        Ok(Child::Node(Box::new(node)))
    }

    /// Removes `key`; nothing happens when it is absent. After a failure (a node missing
    /// from the store) the trie is not to be used again.
    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        let path = nibbles(key);
        let root = std::mem::replace(&mut self.root, Child::Empty);
        let backup = match &root {
            Child::Node(_) => None,
            stored => Some(stored.clone()),
        };
        match self.delete_at(root, &path) {
            Ok((new, _)) => {
                self.root = new;
                Ok(())
            }
            Err(e) => {
                self.root = backup.unwrap_or(Child::Empty);
                Err(e)
            }
        }
    }

    /// The child after deleting `path` under it, and whether anything changed (when not, a
    /// stored child stays a reference by hash).
    fn delete_at(&self, child: Child, path: &[u8]) -> Result<(Child, bool)> {
        let (node, stored) = match child {
            Child::Empty => return Ok((Child::Empty, false)),
            Child::Hash(h) => (self.load(&h)?, Some(h)),
            Child::Node(n) => (*n, None),
        };
        let unchanged = |node: Node| {
            let c = match stored {
                Some(h) => Child::Hash(h),
                None => Child::Node(Box::new(node)),
            };
            Ok((c, false))
        };
        match node {
            Node::Leaf { path: lp, value } => {
                if lp.as_slice() == path {
                    Ok((Child::Empty, true))
                } else {
                    unchanged(Node::Leaf { path: lp, value })
                }
            }
            Node::Extension { path: ep, child } => {
                let Some(rest) = path.strip_prefix(ep.as_slice()) else {
                    return unchanged(Node::Extension { path: ep, child });
                };
                let (new, changed) = self.delete_at(child, rest)?;
                if !changed {
                    return unchanged(Node::Extension {
                        path: ep,
                        child: new,
                    });
                }
                Ok((self.with_path(&ep, new)?, true))
            }
            Node::Branch {
                mut children,
                mut value,
            } => {
                match path.split_first() {
                    None => {
                        if value.take().is_none() {
                            return unchanged(Node::Branch { children, value });
                        }
                    }
                    Some((&i, tail)) => {
                        let slot = std::mem::replace(&mut children[i as usize], Child::Empty);
                        let (new, changed) = self.delete_at(slot, tail)?;
                        children[i as usize] = new;
                        if !changed {
                            return unchanged(Node::Branch { children, value });
                        }
                    }
                }
                Ok((self.collapse(children, value)?, true))
            }
        }
    }

    /// `path` followed by `child`, merged into one node where the child is a leaf or an
    /// extension.
    fn with_path(&self, path: &[u8], child: Child) -> Result<Child> {
        let Some(node) = self.resolve(&child)? else {
            return Ok(Child::Empty);
        };
        let merged = match node.into_owned() {
            Node::Leaf { path: cp, value } => Node::Leaf {
                path: concat(path, &cp),
                value,
            },
            Node::Extension { path: cp, child } => Node::Extension {
                path: concat(path, &cp),
                child,
            },
            Node::Branch { .. } if path.is_empty() => return Ok(child),
            Node::Branch { .. } => Node::Extension {
                path: path.to_vec(),
                child,
            },
        };
        Ok(Child::Node(Box::new(merged)))
    }

    /// A branch after a deletion: kept when it still branches, else folded into what is left.
    fn collapse(&self, children: Box<[Child; 16]>, value: Option<Vec<u8>>) -> Result<Child> {
        let used: Vec<usize> = (0..16).filter(|&i| children[i] != Child::Empty).collect();
        match (used.as_slice(), value) {
            ([], None) => Ok(Child::Empty),
            ([], Some(value)) => Ok(Child::Node(Box::new(Node::Leaf {
                path: Vec::new(),
                value,
            }))),
            (&[i], None) => {
                let mut children = children;
                let only = std::mem::replace(&mut children[i], Child::Empty);
                self.with_path(&[i as u8], only)
            }
            (_, value) => Ok(Child::Node(Box::new(Node::Branch { children, value }))),
        }
    }

    /// The root hash of the trie as it is now (nothing is written).
    pub fn root_hash(&self) -> Hash {
        root_of(&self.root, &mut |_, _| {})
    }

    /// Finishes the changes: the new root, and every node new since the last commit (hash,
    /// encoding) for the caller to write to the store before the trie is used again. The
    /// trie then refers to its root by hash.
    pub fn commit(&mut self) -> (Hash, Vec<(Hash, Vec<u8>)>) {
        let mut nodes = Vec::new();
        let root = root_of(&self.root, &mut |h, enc| nodes.push((h, enc)));
        if let Child::Node(_) = self.root {
            self.root = Child::Hash(root);
        }
        (root, nodes)
    }

    /// Every (key, value) pair, in key order. Fails when a node is missing or corrupt.
    pub fn entries(&self) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        self.visit_from(&[], &mut |k, v| {
            out.push((k.to_vec(), v.to_vec()));
            true
        })?;
        Ok(out)
    }
}

/// The root hash of a child as the trie's root, giving every stored node (the root itself
/// included, whatever its size) to `store`.
fn root_of(root: &Child, store: &mut dyn FnMut(Hash, Vec<u8>)) -> Hash {
    match root {
        Child::Empty => EMPTY_ROOT,
        Child::Hash(h) => *h,
        Child::Node(n) => {
            let enc = encode(n, store);
            let h = keccak256(&enc);
            store(h, enc);
            h
        }
    }
}

/// Completes a split where `path` parts from an existing node after `common` nibbles: the
/// branch (already holding the existing part) gets `value` at `path`, under an extension
/// of the common part when there is one.
fn split(
    mut children: Box<[Child; 16]>,
    mut branch_value: Option<Vec<u8>>,
    path: &[u8],
    common: usize,
    value: Vec<u8>,
) -> Node {
    if common == path.len() {
        branch_value = Some(value);
    } else {
        children[path[common] as usize] = Child::Node(Box::new(Node::Leaf {
            path: path[common + 1..].to_vec(),
            value,
        }));
    }
    with_prefix(
        &path[..common],
        Node::Branch {
            children,
            value: branch_value,
        },
    )
}

/// With `prefix` non-empty, `node` under an extension of that path; else `node` itself.
fn with_prefix(prefix: &[u8], node: Node) -> Node {
    if prefix.is_empty() {
        node
    } else {
        Node::Extension {
            path: prefix.to_vec(),
            child: Child::Node(Box::new(node)),
        }
    }
}

/// A trie whose keys are hashed with Keccak-256 first (the state trie: accounts by the hash
/// of their address).
pub struct SecureTrie<'s>(pub Trie<'s>);

impl<'s> SecureTrie<'s> {
    pub fn get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.0.get(&keccak256(key))
    }

    pub fn insert(&mut self, key: &[u8], value: Vec<u8>) -> Result<()> {
        self.0.insert(&keccak256(key), value)
    }

    pub fn delete(&mut self, key: &[u8]) -> Result<()> {
        self.0.delete(&keccak256(key))
    }

    pub fn root_hash(&self) -> Hash {
        self.0.root_hash()
    }

    pub fn commit(&mut self) -> (Hash, Vec<(Hash, Vec<u8>)>) {
        self.0.commit()
    }
}

/// Calls `visit` with the hash and encoding of every stored node reachable from `root` (what
/// a state migration copies), parents before children. Fails on a missing or corrupt node.
pub fn reachable(
    store: &dyn NodeStore,
    root: Hash,
    visit: &mut dyn FnMut(&Hash, &[u8]),
) -> Result<()> {
    if root == EMPTY_ROOT {
        return Ok(());
    }
    let mut stack = vec![root];
    while let Some(h) = stack.pop() {
        let bytes = store.node(&h).ok_or(Error::MissingNode(h))?;
        let node = decode(&bytes).map_err(|e| Error::BadNode(h, e))?;
        visit(&h, &bytes);
        push_children(&node, &mut stack);
    }
    Ok(())
}

/// What [`reachable_with_leaves`] calls: a node's hash, its bytes and its leaves' values.
pub type LeafVisitor<'a> = dyn FnMut(&Hash, &[u8], &[&[u8]]) + 'a;

/// [`reachable`], also giving `visit` the values of the leaves each stored node holds
/// (embedded children's included): how the state finds the storage tries and code its
/// accounts point to.
pub fn reachable_with_leaves(
    store: &dyn NodeStore,
    root: Hash,
    visit: &mut LeafVisitor<'_>,
) -> Result<()> {
    if root == EMPTY_ROOT {
        return Ok(());
    }
    let mut stack = vec![root];
    while let Some(h) = stack.pop() {
        let bytes = store.node(&h).ok_or(Error::MissingNode(h))?;
        let node = decode(&bytes).map_err(|e| Error::BadNode(h, e))?;
        let mut values: Vec<&[u8]> = Vec::new();
        leaf_values(&node, &mut values);
        visit(&h, &bytes, &values);
        push_children(&node, &mut stack);
    }
    Ok(())
}

/// The values of the leaves a stored node holds itself or in embedded children (the
/// accounts of a state-trie node), from its encoding.
pub fn leaf_values_in(bytes: &[u8]) -> std::result::Result<Vec<Vec<u8>>, DecodeError> {
    let node = decode(bytes)?;
    let mut values = Vec::new();
    leaf_values(&node, &mut values);
    Ok(values.into_iter().map(<[u8]>::to_vec).collect())
}

/// The values of the leaves `node` holds itself or in embedded children.
fn leaf_values<'n>(node: &'n Node, out: &mut Vec<&'n [u8]>) {
    let child = |c: &'n Child, out: &mut Vec<&'n [u8]>| {
        if let Child::Node(n) = c {
            leaf_values(n, out)
        }
    };
    match node {
        Node::Leaf { value, .. } => out.push(value),
        Node::Extension { child: c, .. } => child(c, out),
        Node::Branch { children, value } => {
            out.extend(value.as_deref());
            for c in children.iter() {
                child(c, out);
            }
        }
    }
}

/// One stored node as [`walk`] meets it.
pub struct Visit<'a> {
    pub hash: &'a Hash,
    pub bytes: &'a [u8],
    /// The path (in nibbles) from the root to this node.
    pub path: &'a [u8],
    /// The full keys (in nibbles) of the leaves in this node, embedded ones included.
    pub leaves: Vec<Vec<u8>>,
    /// Stored nodes found and not yet visited.
    pub pending: usize,
}

/// Visits every stored node reachable from `root` depth first, children in nibble order, so
/// that the paths visited only ever grow in key order (what a progress figure needs).
/// `visit` returning false stops the walk. Fails on a missing or corrupt node.
pub fn walk(
    store: &dyn NodeStore,
    root: Hash,
    visit: &mut dyn FnMut(Visit<'_>) -> bool,
) -> Result<()> {
    if root == EMPTY_ROOT {
        return Ok(());
    }
    let mut stack: Vec<(Hash, Vec<u8>)> = vec![(root, Vec::new())];
    while let Some((h, path)) = stack.pop() {
        let bytes = store.node(&h).ok_or(Error::MissingNode(h))?;
        let node = decode(&bytes).map_err(|e| Error::BadNode(h, e))?;
        let mut children = Vec::new();
        let mut leaves = Vec::new();
        ordered_children(&node, &path, &mut children, &mut leaves);
        // Pushed in reverse, so that the lowest nibble is visited first.
        stack.extend(children.into_iter().rev());
        let go_on = visit(Visit {
            hash: &h,
            bytes: &bytes,
            path: &path,
            leaves,
            pending: stack.len(),
        });
        if !go_on {
            break;
        }
    }
    Ok(())
}

fn ordered_children(
    node: &Node,
    path: &[u8],
    children: &mut Vec<(Hash, Vec<u8>)>,
    leaves: &mut Vec<Vec<u8>>,
) {
    let child = |c: &Child,
                 p: Vec<u8>,
                 children: &mut Vec<(Hash, Vec<u8>)>,
                 leaves: &mut Vec<Vec<u8>>| match c {
        Child::Hash(h) => children.push((*h, p)),
        Child::Node(n) => ordered_children(n, &p, children, leaves),
        Child::Empty => {}
    };
    match node {
        Node::Leaf { path: rest, .. } => leaves.push(concat(path, rest)),
        Node::Extension {
            path: rest,
            child: c,
        } => child(c, concat(path, rest), children, leaves),
        Node::Branch { children: cs, .. } => {
            for (i, c) in cs.iter().enumerate() {
                let mut p = path.to_vec();
                p.push(i as u8);
                child(c, p, children, leaves);
            }
        }
    }
}

fn push_children(node: &Node, stack: &mut Vec<Hash>) {
    let mut child = |c: &Child| match c {
        Child::Hash(h) => stack.push(*h),
        Child::Node(n) => push_children(n, stack),
        Child::Empty => {}
    };
    match node {
        Node::Leaf { .. } => {}
        Node::Extension { child: c, .. } => child(c),
        Node::Branch { children, .. } => children.iter().for_each(child),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_empty_root_is_the_hash_of_the_empty_string() {
        assert_eq!(keccak256(&[0x80]), EMPTY_ROOT);
        let store = MemoryStore::default();
        assert_eq!(Trie::new(&store).root_hash(), EMPTY_ROOT);
    }

    #[test]
    fn a_missing_node_is_an_error_not_a_panic() {
        let store = MemoryStore::default();
        let t = Trie::open(&store, [7; 32]);
        assert_eq!(t.get(b"k"), Err(Error::MissingNode([7; 32])));
        let mut t = Trie::open(&store, [7; 32]);
        assert_eq!(
            t.insert(b"k", b"v".to_vec()),
            Err(Error::MissingNode([7; 32]))
        );
        assert_eq!(
            t.root_hash(),
            [7; 32],
            "a failed insert leaves the trie as it was"
        );
    }

    /// The same look-up through built nodes (`decode`), the way `get` walked stored nodes
    /// before it read them in place.
    fn get_decoded(store: &MemoryStore, root: Hash, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let t = Trie::open(store, root);
        match &t.root {
            Child::Hash(h) => {
                let n = t.load(h)?;
                get_in_decoded(&t, &n, &nibbles(key))
            }
            _ => Ok(None),
        }
    }

    fn get_in_decoded(t: &Trie<'_>, node: &Node, path: &[u8]) -> Result<Option<Vec<u8>>> {
        let at = |c: &Child, rest: &[u8]| match c {
            Child::Empty => Ok(None),
            Child::Hash(h) => get_in_decoded(t, &t.load(h)?, rest),
            Child::Node(n) => get_in_decoded(t, n, rest),
        };
        match node {
            Node::Leaf { path: lp, value } => Ok((lp.as_slice() == path).then(|| value.clone())),
            Node::Extension { path: ep, child } => match path.strip_prefix(ep.as_slice()) {
                Some(rest) => at(child, rest),
                None => Ok(None),
            },
            Node::Branch { children, value } => match path.split_first() {
                None => Ok(value.clone()),
                Some((&i, tail)) => at(&children[i as usize], tail),
            },
        }
    }

    /// Reading stored nodes in place finds what building them finds: keys of every length
    /// (values in branches, embedded nodes of short keys and values, long extensions),
    /// present and absent, from a fixed seed.
    #[test]
    fn in_place_reads_find_what_decoded_nodes_find() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for round in 0..40 {
            let mut store = MemoryStore::default();
            let mut t = Trie::new(&store);
            let mut keys = Vec::new();
            for _ in 0..(1 + next() % 300) {
                let len = (next() % 6) as usize + usize::from(round % 2 == 0) * 26;
                let key: Vec<u8> = (0..len).map(|_| (next() % 4) as u8 * 0x11).collect();
                let vlen = [1, 3, 40][(next() % 3) as usize];
                let value: Vec<u8> = (0..vlen).map(|_| next() as u8 | 1).collect();
                t.insert(&key, value).unwrap();
                keys.push(key);
            }
            let (root, nodes) = t.commit();
            drop(t);
            store.apply(nodes);
            for _ in 0..50 {
                let len = (next() % 6) as usize + usize::from(round % 2 == 0) * 26;
                keys.push((0..len).map(|_| (next() % 4) as u8 * 0x11).collect());
            }
            let trie = Trie::open(&store, root);
            for k in &keys {
                assert_eq!(trie.get(k), get_decoded(&store, root, k), "key {k:?}");
            }
        }
    }

    /// A corrupt node on the way is refused as `decode` refuses it.
    #[test]
    fn in_place_reads_refuse_what_decode_refuses() {
        let node = Node::Branch {
            children: Box::new(std::array::from_fn(|i| {
                if i % 3 == 0 {
                    Child::Hash([i as u8; 32])
                } else {
                    Child::Empty
                }
            })),
            value: Some(vec![9; 3]),
        };
        let enc = encode(&node, &mut |_, _| {});
        for n in 0..enc.len() {
            let mut bad = enc[..n].to_vec();
            if n > 0 {
                bad[0] = enc[0];
            }
            for path in [&[][..], &[0, 1][..], &[3][..]] {
                assert_eq!(
                    node::step(&bad, path).is_err(),
                    decode(&bad).is_err(),
                    "{n} {path:?}"
                );
            }
        }
        for flipped in 0..enc.len() {
            let mut bad = enc.clone();
            bad[flipped] ^= 0x40;
            for path in [&[][..], &[0, 1][..], &[3][..], &[6, 2][..]] {
                assert_eq!(
                    node::step(&bad, path).err(),
                    decode(&bad).err(),
                    "byte {flipped} {path:?}"
                );
            }
        }
    }
}
