//! The trie-node cache on disk: `admin_saveTrieNodeCacheToDisk` (and the periodic save of
//! `--state.trie-cache-save-period`) writes it to `<datadir>/fastcache`, and a node starting
//! up loads it back.
//!
//! One file, `fastcache/nodes.bin`: the magic `CHAINDTC`, a format version (u32), the
//! genesis hash of the chain it belongs to, the number of nodes (u64), the CRC-32 of what
//! follows (u32), then each node as its hash, its length (u32) and its bytes (all
//! big-endian). It is written into a temporary directory beside `fastcache`, synced, and
//! renamed into place (the previous save is removed just before): a crash leaves the
//! previous save or none. Nothing loaded is trusted: a file of another chain, a cut,
//! malformed or damaged file (the checksum) is ignored whole, with a warning in the log; and
//! each node is checked against its hash when the cache first serves it (one that fails is
//! dropped and logged). Checking every hash at load would take several times as long as
//! reading the file.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::trie::cache::NodeCache;

pub const DIR_NAME: &str = "fastcache";
pub const FILE_NAME: &str = "nodes.bin";
const MAGIC: &[u8; 8] = b"CHAINDTC";
const VERSION: u32 = 2;
const HEAD: usize = 8 + 4 + 32 + 8 + 4;

/// The nodes of a saved cache file, each as its hash and where its bytes are. Fails when the
/// file is not one, belongs to another chain, or is cut short. A pure function of the bytes.
pub fn parse(
    bytes: &[u8],
    genesis: &[u8; 32],
) -> Result<Vec<([u8; 32], std::ops::Range<usize>)>, String> {
    let head = bytes.get(..HEAD).ok_or("shorter than its header")?;
    if &head[..8] != MAGIC {
        return Err("not a trie-node cache file".into());
    }
    let version = u32::from_be_bytes(head[8..12].try_into().expect("4 bytes"));
    if version != VERSION {
        return Err(format!("format version {version}, not {VERSION}"));
    }
    if &head[12..44] != genesis {
        return Err(format!(
            "saved by the chain of genesis 0x{}, not this one",
            hex::encode(&head[12..44])
        ));
    }
    let count = u64::from_be_bytes(head[44..52].try_into().expect("8 bytes"));
    let crc = u32::from_be_bytes(head[52..56].try_into().expect("4 bytes"));
    if crc32fast::hash(&bytes[HEAD..]) != crc {
        return Err("damaged: its checksum does not match".into());
    }
    let mut at = HEAD;
    let mut out = Vec::with_capacity(count.min(1 << 24) as usize);
    for i in 0..count {
        let rec = bytes
            .get(at..at + 36)
            .ok_or_else(|| format!("cut short at node {i}"))?;
        let hash: [u8; 32] = rec[..32].try_into().expect("32 bytes");
        let len = u32::from_be_bytes(rec[32..].try_into().expect("4 bytes")) as usize;
        let start = at + 36;
        if len > crate::chain::nodelog::MAX_NODE as usize || start + len > bytes.len() {
            return Err(format!("cut short at node {i}"));
        }
        out.push((hash, start..start + len));
        at = start + len;
    }
    if at != bytes.len() {
        return Err(format!("{} bytes after the last node", bytes.len() - at));
    }
    Ok(out)
}

/// Writes `cache` to `<datadir>/fastcache` for the chain of `genesis`. `stop` set abandons
/// the save (nothing is left behind). Returns the nodes and bytes written.
pub fn save(
    cache: &NodeCache,
    datadir: &Path,
    genesis: &[u8; 32],
    stop: &AtomicBool,
) -> Result<(u64, u64), String> {
    let entries = cache.entries();
    let mut random = [0u8; 6];
    getrandom::getrandom(&mut random).map_err(|e| e.to_string())?;
    let temp = datadir.join(format!(".{DIR_NAME}.tmp-{}", hex::encode(random)));
    let result = (|| {
        std::fs::create_dir(&temp).map_err(|e| format!("{}: {e}", temp.display()))?;
        let path = temp.join(FILE_NAME);
        let file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        let mut w = std::io::BufWriter::with_capacity(1 << 20, &file);
        let io = |e: std::io::Error| format!("{}: {e}", path.display());
        w.write_all(MAGIC).map_err(io)?;
        w.write_all(&VERSION.to_be_bytes()).map_err(io)?;
        w.write_all(genesis).map_err(io)?;
        w.write_all(&(entries.len() as u64).to_be_bytes())
            .map_err(io)?;
        // The checksum's place; written once the body is.
        w.write_all(&[0; 4]).map_err(io)?;
        // Records are gathered into a buffer of about a megabyte that is checksummed and
        // written whole: far fewer calls than three small writes per node.
        let mut crc = crc32fast::Hasher::new();
        let mut buf: Vec<u8> = Vec::with_capacity(1 << 20);
        for (i, (hash, node)) in entries.iter().enumerate() {
            if i % 65_536 == 0 && stop.load(Ordering::Relaxed) {
                return Err("stopped: the node is shutting down".to_string());
            }
            buf.extend_from_slice(hash);
            buf.extend_from_slice(&(node.len() as u32).to_be_bytes());
            buf.extend_from_slice(node);
            if buf.len() >= 1 << 20 {
                crc.update(&buf);
                w.write_all(&buf).map_err(io)?;
                buf.clear();
            }
        }
        crc.update(&buf);
        w.write_all(&buf).map_err(io)?;
        w.flush().map_err(io)?;
        drop(w);
        {
            use std::os::unix::fs::FileExt;
            file.write_all_at(&crc.finalize().to_be_bytes(), (HEAD - 4) as u64)
                .map_err(io)?;
        }
        file.sync_all().map_err(io)?;
        let bytes = file.metadata().map_err(io)?.len();
        crate::datadir::atomic::sync_dir(&temp).map_err(|e| e.to_string())?;
        let target = datadir.join(DIR_NAME);
        match std::fs::remove_dir_all(&target) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", target.display())),
        }
        std::fs::rename(&temp, &target).map_err(|e| format!("{}: {e}", target.display()))?;
        let _ = crate::datadir::atomic::sync_dir(datadir);
        Ok((entries.len() as u64, bytes))
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&temp);
    }
    result
}

/// A loaded cache file: its bytes and where each node is in them.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    pub bytes: Vec<u8>,
    pub index: Vec<([u8; 32], std::ops::Range<usize>)>,
}

/// The saved cache of `datadir` for the chain of `genesis`, checked whole (header, chain,
/// checksum, structure); the nodes' hashes are the cache's to check when it serves them.
/// `Ok(None)` when there is none.
pub fn load(datadir: &Path, genesis: &[u8; 32]) -> Result<Option<Loaded>, String> {
    let path = datadir.join(DIR_NAME).join(FILE_NAME);
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let index = parse(&bytes, genesis).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some(Loaded { path, bytes, index }))
}

/// Loads the saved cache of `datadir` (see [`load`]) into `cache` from every core, each node
/// to be checked when first served. The file and the number of nodes; `Ok(None)` when there
/// is no saved cache.
pub fn load_into(
    cache: &NodeCache,
    datadir: &Path,
    genesis: &[u8; 32],
) -> Result<Option<(PathBuf, usize)>, String> {
    let Some(loaded) = load(datadir, genesis)? else {
        return Ok(None);
    };
    let count = loaded.index.len();
    // An index per shard of the cache, built on every core; the bytes stay as they are.
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let shards = NodeCache::SHARDS;
    let index: Vec<HashMap<[u8; 32], (usize, u32)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let loaded = &loaded;
                s.spawn(move || {
                    let mut mine: Vec<(usize, HashMap<[u8; 32], (usize, u32)>)> = (0..shards)
                        .filter(|sh| sh % threads == t)
                        .map(|sh| (sh, HashMap::with_capacity(count / shards + 16)))
                        .collect();
                    for (h, r) in &loaded.index {
                        let sh = NodeCache::shard_of(h);
                        if sh % threads == t {
                            let slot = mine.iter_mut().find(|(x, _)| *x == sh).expect("mine");
                            slot.1.insert(*h, (r.start, r.len() as u32));
                        }
                    }
                    mine
                })
            })
            .collect();
        let mut all: Vec<(usize, HashMap<[u8; 32], (usize, u32)>)> = handles
            .into_iter()
            .flat_map(|h| h.join().expect("an index thread panicked"))
            .collect();
        all.sort_by_key(|(sh, _)| *sh);
        all.into_iter().map(|(_, m)| m).collect()
    });
    let path = loaded.path;
    cache.preload(loaded.bytes, index);
    Ok(Some((path, count)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keccak256;
    use std::sync::Arc;

    fn cache_of(nodes: &[&str]) -> NodeCache {
        let c = NodeCache::new(1 << 20);
        for n in nodes {
            c.insert(keccak256(n.as_bytes()), Arc::from(n.as_bytes()));
        }
        c
    }

    #[test]
    fn a_saved_cache_loads_back_and_replaces_the_previous_save() {
        let dir = tempfile::tempdir().unwrap();
        let g = [7u8; 32];
        let stop = AtomicBool::new(false);
        assert!(load(dir.path(), &g).unwrap().is_none());
        save(&cache_of(&["one"]), dir.path(), &g, &stop).unwrap();
        let (n, _) = save(&cache_of(&["alpha", "beta"]), dir.path(), &g, &stop).unwrap();
        assert_eq!(n, 2);
        let loaded = load(dir.path(), &g).unwrap().unwrap();
        let mut nodes: Vec<([u8; 32], Vec<u8>)> = loaded
            .index
            .iter()
            .map(|(h, r)| (*h, loaded.bytes[r.clone()].to_vec()))
            .collect();
        nodes.sort();
        let mut want = vec![
            (keccak256(b"alpha"), b"alpha".to_vec()),
            (keccak256(b"beta"), b"beta".to_vec()),
        ];
        want.sort();
        assert_eq!(nodes, want);
        // Only fastcache is left: no temporary directory.
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from(DIR_NAME)]);
    }

    #[test]
    fn a_foreign_cut_or_forged_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let g = [7u8; 32];
        let stop = AtomicBool::new(false);
        save(&cache_of(&["alpha", "beta"]), dir.path(), &g, &stop).unwrap();
        let err = load(dir.path(), &[8u8; 32]).unwrap_err();
        assert!(
            err.ends_with(&format!(
                "saved by the chain of genesis 0x{}, not this one",
                hex::encode(g)
            )),
            "{err}"
        );
        let path = dir.path().join(DIR_NAME).join(FILE_NAME);
        let good = std::fs::read(&path).unwrap();
        let refused = |bytes: &[u8]| {
            std::fs::write(&path, bytes).unwrap();
            load(dir.path(), &g).unwrap_err()
        };
        // Cut, or a byte changed: the checksum.
        assert!(refused(&good[..good.len() - 1]).ends_with("damaged: its checksum does not match"));
        let mut damaged = good.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        assert!(refused(&damaged).ends_with("damaged: its checksum does not match"));
        // The structure is checked too (files whose checksum was made to fit).
        let fit = |mut b: Vec<u8>| {
            let crc = crc32fast::hash(&b[HEAD..]).to_be_bytes();
            b[HEAD - 4..HEAD].copy_from_slice(&crc);
            b
        };
        assert!(refused(&fit(good[..good.len() - 1].to_vec())).ends_with("cut short at node 1"));
        let mut extra = good.clone();
        extra.push(0);
        assert!(refused(&fit(extra)).ends_with("1 bytes after the last node"));
        assert!(refused(b"garbage").ends_with("shorter than its header"));
        // A node that does not hash to its key loads, and the cache never serves it.
        let mut forged = good.clone();
        let last = forged.len() - 1;
        forged[last] ^= 1;
        std::fs::write(&path, fit(forged)).unwrap();
        let cache = NodeCache::new(1 << 20);
        let (_, count) = load_into(&cache, dir.path(), &g).unwrap().unwrap();
        assert_eq!(count, 2);
        assert!(
            cache.get(&keccak256(b"alpha")).is_some() != cache.get(&keccak256(b"beta")).is_some()
        );
    }

    #[test]
    fn a_stopped_save_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        let err = save(&cache_of(&["alpha"]), dir.path(), &[7; 32], &stop).unwrap_err();
        assert_eq!(err, "stopped: the node is shutting down");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
