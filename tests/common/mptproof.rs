//! A Merkle Patricia proof verifier written apart from the node's trie (alloy-rlp for the
//! RLP, sha3 for Keccak-256, the hex-prefix rule of the yellow paper's appendix C): the
//! integration tests check `eth_getProof` with it, and `src/trie/proof.rs` includes this file
//! for its unit tests. Nothing here may use the crate under test.
#![allow(dead_code)]

use alloy_rlp::Header;

fn keccak(bytes: &[u8]) -> [u8; 32] {
    use sha3::Digest;
    sha3::Keccak256::digest(bytes).into()
}

/// One RLP item: whether it is a list, its payload and its whole encoding.
type Item<'a> = (bool, &'a [u8], &'a [u8]);

/// The items of the RLP list `bytes`, which must be exactly one list.
fn list_items(bytes: &[u8]) -> Result<Vec<Item<'_>>, String> {
    let mut buf = bytes;
    let h = Header::decode(&mut buf).map_err(|e| format!("bad RLP: {e}"))?;
    if !h.list || buf.len() != h.payload_length {
        return Err("a node is not exactly one RLP list".into());
    }
    let mut out = Vec::new();
    while !buf.is_empty() {
        let start = buf;
        let h = Header::decode(&mut buf).map_err(|e| format!("bad RLP item: {e}"))?;
        if buf.len() < h.payload_length {
            return Err("RLP item runs past its list".into());
        }
        let payload = &buf[..h.payload_length];
        buf = &buf[h.payload_length..];
        out.push((h.list, payload, &start[..start.len() - buf.len()]));
    }
    Ok(out)
}

/// Where the walk goes next: a node by hash (the next proof element) or embedded.
enum Next<'a> {
    Hash([u8; 32]),
    Embedded(&'a [u8]),
    Absent,
}

fn child(item: Item<'_>) -> Result<Next<'_>, String> {
    let (is_list, payload, whole) = item;
    if is_list {
        if whole.len() >= 32 {
            return Err("an embedded node of 32 bytes or more".into());
        }
        return Ok(Next::Embedded(whole));
    }
    match payload.len() {
        0 => Ok(Next::Absent),
        32 => Ok(Next::Hash(payload.try_into().unwrap())),
        n => Err(format!("a child reference of {n} bytes")),
    }
}

/// The nibbles of a hex-prefix encoded path and whether it ends a leaf.
fn hex_prefix(hp: &[u8]) -> Result<(Vec<u8>, bool), String> {
    let first = *hp.first().ok_or("an empty path")?;
    let flag = first >> 4;
    if flag > 3 {
        return Err("a bad path flag".into());
    }
    let mut nibbles = Vec::new();
    if flag & 1 == 1 {
        nibbles.push(first & 0x0f);
    }
    for b in &hp[1..] {
        nibbles.push(b >> 4);
        nibbles.push(b & 0x0f);
    }
    Ok((nibbles, flag & 2 == 2))
}

/// Walks `proof` from `root` along `key`: `Ok(Some(value))` when the proof shows the key's
/// value, `Ok(None)` when it shows the key absent, `Err` when it proves neither (an element
/// whose Keccak-256 is not the reference its parent holds, one missing, one left over, or
/// a malformed node).
pub fn verify(root: &[u8; 32], key: &[u8], proof: &[Vec<u8>]) -> Result<Option<Vec<u8>>, String> {
    if proof.is_empty() && *root == keccak(&[0x80]) {
        return Ok(None); // the empty trie: nothing to walk
    }
    let path: Vec<u8> = key.iter().flat_map(|b| [b >> 4, b & 0x0f]).collect();
    let mut rest = &path[..];
    let mut used = 0;
    let mut next = Next::Hash(*root);
    let found = loop {
        let node: &[u8] = match next {
            Next::Absent => break None,
            Next::Embedded(bytes) => bytes,
            Next::Hash(h) => {
                let element = proof
                    .get(used)
                    .ok_or_else(|| format!("the proof ends at element {used}"))?;
                if keccak(element) != h {
                    return Err(format!("element {used} is not the node its parent names"));
                }
                used += 1;
                element
            }
        };
        let items = list_items(node)?;
        match items.len() {
            17 => match rest.split_first() {
                None => {
                    let value = items[16].1;
                    break (!value.is_empty()).then(|| value.to_vec());
                }
                Some((&i, tail)) => {
                    rest = tail;
                    next = child(items[i as usize])?;
                }
            },
            2 => {
                let (nibbles, leaf) = hex_prefix(items[0].1)?;
                if leaf {
                    break (nibbles == rest).then(|| items[1].1.to_vec());
                }
                match rest.strip_prefix(nibbles.as_slice()) {
                    Some(tail) => {
                        rest = tail;
                        next = child(items[1])?;
                    }
                    None => break None,
                }
            }
            n => return Err(format!("a node of {n} items")),
        }
    };
    if used != proof.len() {
        return Err(format!(
            "{} proof elements left over after the walk",
            proof.len() - used
        ));
    }
    Ok(found)
}

/// [`verify`] with the key hashed first (accounts, storage slots).
pub fn verify_secure(
    root: &[u8; 32],
    key: &[u8],
    proof: &[Vec<u8>],
) -> Result<Option<Vec<u8>>, String> {
    verify(root, &keccak(key), proof)
}
