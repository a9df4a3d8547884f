//! Trie nodes and their RLP: leaf, extension and branch (Ethereum's hexary Merkle Patricia
//! Trie, which the reference uses for state and roots), with hex-prefix encoded paths. A
//! child whose encoding is shorter than 32 bytes is embedded in its parent; a longer one is
//! referenced by the Keccak-256 of its encoding. [`decode`] is a pure function of the bytes
//! that never panics: a fuzzer can call it.

use alloy_rlp::{Encodable, Header};

use crate::crypto::keccak256;

pub type Hash = [u8; 32];

/// A path in nibbles (half-bytes, 0..16).
pub type Nibbles = Vec<u8>;

/// A reference to a child node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Child {
    Empty,
    /// Stored in the node store under this hash, not loaded.
    Hash(Hash),
    /// In memory: loaded, embedded, or new since the last commit.
    Node(Box<Node>),
}

/// A trie node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Node {
    Leaf {
        path: Nibbles,
        value: Vec<u8>,
    },
    Extension {
        path: Nibbles,
        child: Child,
    },
    Branch {
        children: Box<[Child; 16]>,
        value: Option<Vec<u8>>,
    },
}

/// Why bytes are not a trie node.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("malformed trie node: {0}")]
    Malformed(&'static str),
}

fn malformed(why: &'static str) -> DecodeError {
    DecodeError::Malformed(why)
}

/// The nibbles of `bytes`, high half first.
pub fn nibbles(bytes: &[u8]) -> Nibbles {
    bytes.iter().flat_map(|b| [b >> 4, b & 0x0f]).collect()
}

/// Hex-prefix encoding of a path (Ethereum yellow paper, appendix C).
pub fn hex_prefix(path: &[u8], leaf: bool) -> Vec<u8> {
    let flag = if leaf { 2 } else { 0 };
    let mut out = Vec::with_capacity(path.len() / 2 + 1);
    let rest = if path.len() % 2 == 1 {
        out.push(((flag + 1) << 4) | path[0]);
        &path[1..]
    } else {
        out.push(flag << 4);
        path
    };
    out.extend(rest.chunks(2).map(|c| (c[0] << 4) | c[1]));
    out
}

/// The path and leaf flag of a hex-prefix encoded path.
fn from_hex_prefix(bytes: &[u8]) -> Result<(Nibbles, bool), DecodeError> {
    let first = *bytes.first().ok_or(malformed("empty path"))?;
    let flag = first >> 4;
    if flag > 3 {
        return Err(malformed("bad path flag"));
    }
    let mut path = Vec::with_capacity(bytes.len() * 2);
    if flag & 1 == 1 {
        path.push(first & 0x0f);
    } else if first & 0x0f != 0 {
        return Err(malformed("bad path padding"));
    }
    path.extend(nibbles(&bytes[1..]));
    Ok((path, flag & 2 == 2))
}

fn encode_bytes(bytes: &[u8], out: &mut Vec<u8>) {
    bytes.encode(out);
}

/// The RLP of `node`, computing the references of its in-memory children; `store` receives
/// every child node whose encoding is 32 bytes or more (hash, encoding).
pub fn encode(node: &Node, store: &mut dyn FnMut(Hash, Vec<u8>)) -> Vec<u8> {
    let mut payload = Vec::new();
    match node {
        Node::Leaf { path, value } => {
            encode_bytes(&hex_prefix(path, true), &mut payload);
            encode_bytes(value, &mut payload);
        }
        Node::Extension { path, child } => {
            encode_bytes(&hex_prefix(path, false), &mut payload);
            encode_child(child, &mut payload, store);
        }
        Node::Branch { children, value } => {
            for c in children.iter() {
                encode_child(c, &mut payload, store);
            }
            encode_bytes(value.as_deref().unwrap_or(&[]), &mut payload);
        }
    }
    let mut out = Vec::with_capacity(payload.len() + 4);
    Header {
        list: true,
        payload_length: payload.len(),
    }
    .encode(&mut out);
    out.extend_from_slice(&payload);
    out
}

/// Appends a child's reference: empty string, embedded encoding, or its hash.
fn encode_child(child: &Child, out: &mut Vec<u8>, store: &mut dyn FnMut(Hash, Vec<u8>)) {
    match child {
        Child::Empty => out.push(alloy_rlp::EMPTY_STRING_CODE),
        Child::Hash(h) => encode_bytes(h, out),
        Child::Node(n) => {
            let enc = encode(n, store);
            if enc.len() < 32 {
                out.extend_from_slice(&enc);
            } else {
                let h = keccak256(&enc);
                store(h, enc);
                encode_bytes(&h, out);
            }
        }
    }
}

/// One RLP item of a list's payload: (is a list, its payload, its whole encoding).
fn item<'a>(buf: &mut &'a [u8]) -> Result<(bool, &'a [u8], &'a [u8]), DecodeError> {
    let start = *buf;
    let h = Header::decode(buf).map_err(|_| malformed("bad RLP"))?;
    if buf.len() < h.payload_length {
        return Err(malformed("RLP item runs past the end"));
    }
    let payload = &buf[..h.payload_length];
    *buf = &buf[h.payload_length..];
    let whole = &start[..start.len() - buf.len()];
    Ok((h.list, payload, whole))
}

/// A child reference from one list item.
fn decode_child(is_list: bool, payload: &[u8], whole: &[u8]) -> Result<Child, DecodeError> {
    if is_list {
        if whole.len() >= 32 {
            return Err(malformed("embedded node of 32 bytes or more"));
        }
        return Ok(Child::Node(Box::new(decode(whole)?)));
    }
    match payload.len() {
        0 => Ok(Child::Empty),
        32 => Ok(Child::Hash(payload.try_into().expect("32 bytes"))),
        _ => Err(malformed(
            "child reference neither empty, embedded nor a hash",
        )),
    }
}

/// Where a look-up goes from one node: what [`step`] finds.
#[derive(Debug, PartialEq, Eq)]
pub enum Step<'a> {
    /// The value under the path.
    Value(&'a [u8]),
    /// Nothing is under the path.
    Absent,
    /// On to the stored node with this hash, the first `usize` nibbles of the path used.
    Stored(Hash, usize),
    /// On to this embedded node's encoding, the first `usize` nibbles of the path used.
    Embedded(&'a [u8], usize),
}

/// Whether hex-prefix encoded `hp` is a prefix of `path` (nibbles): the leaf flag and the
/// prefix's length in nibbles when it is. Checks the encoding as [`from_hex_prefix`] does.
fn hex_prefix_of(hp: &[u8], path: &[u8]) -> Result<(bool, Option<usize>), DecodeError> {
    let first = *hp.first().ok_or(malformed("empty path"))?;
    let flag = first >> 4;
    if flag > 3 {
        return Err(malformed("bad path flag"));
    }
    let odd = flag & 1 == 1;
    if !odd && first & 0x0f != 0 {
        return Err(malformed("bad path padding"));
    }
    let len = (hp.len() - 1) * 2 + usize::from(odd);
    let mut nib = path.iter();
    let mut matches = len <= path.len();
    if matches && odd {
        matches = nib.next() == Some(&(first & 0x0f));
    }
    if matches {
        for b in &hp[1..] {
            if nib.next() != Some(&(b >> 4)) || nib.next() != Some(&(b & 0x0f)) {
                matches = false;
                break;
            }
        }
    }
    Ok((flag & 2 == 2, matches.then_some(len)))
}

/// A child reference checked as [`decode_child`] checks it, without building it (an
/// embedded child is decoded, as `decode` would, only to check it).
fn child_ref<'a>(
    is_list: bool,
    payload: &'a [u8],
    whole: &'a [u8],
) -> Result<Option<Step<'a>>, DecodeError> {
    if is_list {
        if whole.len() >= 32 {
            return Err(malformed("embedded node of 32 bytes or more"));
        }
        decode(whole)?;
        return Ok(Some(Step::Embedded(whole, 0)));
    }
    match payload.len() {
        0 => Ok(None),
        32 => Ok(Some(Step::Stored(payload.try_into().expect("32 bytes"), 0))),
        _ => Err(malformed(
            "child reference neither empty, embedded nor a hash",
        )),
    }
}

/// One step of a look-up of `path` (nibbles) at the node encoded as `bytes`, read in place:
/// nothing is copied or built. Accepts and refuses exactly the encodings [`decode`] does.
pub fn step<'a>(bytes: &'a [u8], path: &[u8]) -> Result<Step<'a>, DecodeError> {
    let mut buf = bytes;
    let (is_list, mut payload, _) = item(&mut buf)?;
    if !is_list {
        return Err(malformed("not a list"));
    }
    if !buf.is_empty() {
        return Err(malformed("bytes after the node"));
    }
    let mut items: [(bool, &[u8], &[u8]); 17] = [(false, &[], &[]); 17];
    let mut n = 0;
    while !payload.is_empty() {
        if n == 17 {
            return Err(malformed("more than 17 items"));
        }
        items[n] = item(&mut payload)?;
        n += 1;
    }
    match n {
        2 => {
            let (path_list, hp, _) = items[0];
            if path_list {
                return Err(malformed("path is a list"));
            }
            let (leaf, used) = hex_prefix_of(hp, path)?;
            let (l, p, w) = items[1];
            if leaf {
                if l {
                    return Err(malformed("leaf value is a list"));
                }
                Ok(match used {
                    Some(u) if u == path.len() => Step::Value(p),
                    _ => Step::Absent,
                })
            } else {
                if hp.len() == 1 && hp[0] >> 4 & 1 == 0 {
                    return Err(malformed("extension with an empty path"));
                }
                let child = child_ref(l, p, w)?.ok_or(malformed("extension without a child"))?;
                Ok(match used {
                    Some(u) => with_used(child, u),
                    None => Step::Absent,
                })
            }
        }
        17 => {
            let mut next = None;
            for (i, (l, p, w)) in items[..16].iter().enumerate() {
                let c = child_ref(*l, p, w)?;
                if path.first() == Some(&(i as u8)) {
                    next = c;
                }
            }
            let (l, p, _) = items[16];
            if l {
                return Err(malformed("branch value is a list"));
            }
            Ok(match path.first() {
                None if p.is_empty() => Step::Absent,
                None => Step::Value(p),
                Some(_) => next.map_or(Step::Absent, |c| with_used(c, 1)),
            })
        }
        _ => Err(malformed("neither 2 nor 17 items")),
    }
}

fn with_used(child: Step<'_>, used: usize) -> Step<'_> {
    match child {
        Step::Stored(h, _) => Step::Stored(h, used),
        Step::Embedded(e, _) => Step::Embedded(e, used),
        other => other,
    }
}

/// Decodes one node's RLP. Fails on anything but a well-formed leaf, extension or branch.
pub fn decode(bytes: &[u8]) -> Result<Node, DecodeError> {
    let mut buf = bytes;
    let (is_list, mut payload, _) = item(&mut buf)?;
    if !is_list {
        return Err(malformed("not a list"));
    }
    if !buf.is_empty() {
        return Err(malformed("bytes after the node"));
    }
    let mut items = Vec::with_capacity(17);
    while !payload.is_empty() {
        if items.len() == 17 {
            return Err(malformed("more than 17 items"));
        }
        items.push(item(&mut payload)?);
    }
    match items.len() {
        2 => {
            let (path_list, path, _) = items[0];
            if path_list {
                return Err(malformed("path is a list"));
            }
            let (path, leaf) = from_hex_prefix(path)?;
            let (l, p, w) = items[1];
            if leaf {
                if l {
                    return Err(malformed("leaf value is a list"));
                }
                Ok(Node::Leaf {
                    path,
                    value: p.to_vec(),
                })
            } else {
                if path.is_empty() {
                    return Err(malformed("extension with an empty path"));
                }
                let child = decode_child(l, p, w)?;
                if child == Child::Empty {
                    return Err(malformed("extension without a child"));
                }
                Ok(Node::Extension { path, child })
            }
        }
        17 => {
            let mut children: Box<[Child; 16]> = Box::new(std::array::from_fn(|_| Child::Empty));
            for (i, (l, p, w)) in items[..16].iter().enumerate() {
                children[i] = decode_child(*l, p, w)?;
            }
            let (l, p, _) = items[16];
            if l {
                return Err(malformed("branch value is a list"));
            }
            Ok(Node::Branch {
                children,
                value: (!p.is_empty()).then(|| p.to_vec()),
            })
        }
        _ => Err(malformed("neither 2 nor 17 items")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_prefix_round_trips() {
        for (path, leaf, want) in [
            (vec![1, 2, 3, 4, 5], false, vec![0x11, 0x23, 0x45]),
            (vec![0, 1, 2, 3, 4, 5], false, vec![0x00, 0x01, 0x23, 0x45]),
            (
                vec![0, 15, 1, 12, 11, 8],
                true,
                vec![0x20, 0x0f, 0x1c, 0xb8],
            ),
            (vec![15, 1, 12, 11, 8], true, vec![0x3f, 0x1c, 0xb8]),
        ] {
            assert_eq!(hex_prefix(&path, leaf), want);
            assert_eq!(from_hex_prefix(&want).unwrap(), (path, leaf));
        }
    }

    #[test]
    fn garbage_is_refused_without_panicking() {
        let cases: &[&[u8]] = &[
            b"",
            &[0x80],
            &[0xc0],
            &[0xc1, 0x80],
            &[0xc2, 0x80, 0x80],
            &[0xc3, 0x82, 0x00],
            &[0xff, 0xff, 0xff],
            &[0xc3, 0x81, 0x40, 0x80],
        ];
        for c in cases {
            assert!(decode(c).is_err(), "{c:?}");
        }
        // Every prefix of a real node is refused too.
        let node = Node::Leaf {
            path: vec![1, 2, 3],
            value: vec![7; 40],
        };
        let enc = encode(&node, &mut |_, _| {});
        assert_eq!(decode(&enc).unwrap(), node);
        for n in 0..enc.len() {
            assert!(decode(&enc[..n]).is_err());
        }
    }
}
