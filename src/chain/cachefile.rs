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
//! reading the file; instead the file is checksummed and indexed (per shard, by the first
//! eight bytes of each hash, sorted) by a second thread as the first reads it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use crate::trie::cache::{NodeCache, SavedNodes};

pub const DIR_NAME: &str = "fastcache";
pub const FILE_NAME: &str = "nodes.bin";
const MAGIC: &[u8; 8] = b"CHAINDTC";
const VERSION: u32 = 2;
const HEAD: usize = 8 + 4 + 32 + 8 + 4;

/// Per shard of the cache, each node's offset in the file and its length.
pub type ShardIndex = Vec<Vec<(u64, usize)>>;

/// Where the nodes of a saved cache file are: for each shard of the cache, each record's key
/// (the first eight bytes of its hash) and offset in the file, in the file's order. Fails when
/// the file is not one, belongs to another chain, is damaged (the checksum) or is cut short.
/// A pure function of the bytes.
pub fn parse(bytes: &[u8], genesis: &[u8; 32]) -> Result<ShardIndex, String> {
    let mut scan = Scan::new(bytes, genesis)?;
    scan.advance(bytes);
    scan.finish(bytes, crc32fast::hash(&bytes[HEAD..]))
}

/// The walk through a cache file's records, which can follow the file as it is read.
struct Scan {
    count: u64,
    crc: u32,
    seen: u64,
    at: usize,
    shards: ShardIndex,
    /// The first record found malformed; reported only if the checksum matches (a damaged
    /// file is reported as damaged).
    malformed: Option<String>,
}

impl Scan {
    /// Checks the header (the first [`HEAD`] bytes of `bytes`): the magic, the version, the
    /// chain. Fails with the reason.
    fn new(bytes: &[u8], genesis: &[u8; 32]) -> Result<Scan, String> {
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
        let per_shard = (count.min(1 << 26) as usize) / NodeCache::SHARDS + 16;
        Ok(Scan {
            count,
            crc: u32::from_be_bytes(head[52..56].try_into().expect("4 bytes")),
            seen: 0,
            at: HEAD,
            shards: (0..NodeCache::SHARDS)
                .map(|_| Vec::with_capacity(per_shard))
                .collect(),
            malformed: None,
        })
    }

    /// Indexes the records that `bytes` (the file so far) holds whole.
    fn advance(&mut self, bytes: &[u8]) {
        while self.malformed.is_none() && self.seen < self.count {
            let Some(rec) = bytes.get(self.at..self.at + RECORD_HEAD) else {
                return;
            };
            let hash: &[u8; 32] = rec[..32].try_into().expect("32 bytes");
            let len = u32::from_be_bytes(rec[32..].try_into().expect("4 bytes")) as usize;
            if len > crate::chain::nodelog::MAX_NODE as usize {
                self.malformed = Some(format!("cut short at node {}", self.seen));
                return;
            }
            if self.at + RECORD_HEAD + len > bytes.len() {
                return;
            }
            self.shards[NodeCache::shard_of(hash)].push((key_of(hash), self.at));
            self.at += RECORD_HEAD + len;
            self.seen += 1;
        }
    }

    /// Indexes the records of the file's bytes `start..start + chunk.len()`, which follow
    /// those of the previous call; `carry` keeps a record's head cut by a chunk's end.
    fn advance_chunk(&mut self, start: usize, chunk: &[u8], carry: &mut Vec<u8>) {
        let end = start + chunk.len();
        while self.malformed.is_none() && self.seen < self.count && self.at < end {
            let off = self.at - start.min(self.at);
            // The record's head: wholly in this chunk, or begun in the previous one.
            let head: &[u8] = if !carry.is_empty() {
                let need = RECORD_HEAD - carry.len();
                if chunk.len() < need {
                    carry.extend_from_slice(chunk);
                    return;
                }
                carry.extend_from_slice(&chunk[..need]);
                carry
            } else if self.at < start {
                // Inside a node's bytes that began before this chunk: nothing to read here.
                return;
            } else if off + RECORD_HEAD > chunk.len() {
                carry.extend_from_slice(&chunk[off..]);
                return;
            } else {
                &chunk[off..off + RECORD_HEAD]
            };
            let hash: [u8; 32] = head[..32].try_into().expect("32 bytes");
            let len = u32::from_be_bytes(head[32..].try_into().expect("4 bytes")) as usize;
            carry.clear();
            if len > crate::chain::nodelog::MAX_NODE as usize {
                self.malformed = Some(format!("cut short at node {}", self.seen));
                return;
            }
            self.shards[NodeCache::shard_of(&hash)].push((key_of(&hash), self.at));
            self.at += RECORD_HEAD + len;
            self.seen += 1;
        }
    }

    /// The index, once `bytes` is the whole file and `body_crc` the CRC-32 of its body.
    fn finish(self, bytes: &[u8], body_crc: u32) -> Result<ShardIndex, String> {
        if body_crc != self.crc {
            return Err("damaged: its checksum does not match".into());
        }
        if let Some(e) = self.malformed {
            return Err(e);
        }
        if self.at > bytes.len() {
            // The last record's head was whole, its bytes were not.
            return Err(format!("cut short at node {}", self.seen - 1));
        }
        if self.seen < self.count {
            return Err(format!("cut short at node {}", self.seen));
        }
        if self.at != bytes.len() {
            return Err(format!(
                "{} bytes after the last node",
                bytes.len() - self.at
            ));
        }
        Ok(self.shards)
    }
}

/// A record: the node's hash, its length (u32), its bytes.
const RECORD_HEAD: usize = 32 + 4;

/// The sort key of a node in the index: node hashes are Keccak-256 digests, so their first
/// eight bytes are as good as random; the full hash is compared on look-up.
fn key_of(hash: &[u8; 32]) -> u64 {
    u64::from_be_bytes(hash[..8].try_into().expect("8 bytes"))
}

/// A saved cache file as loaded: its bytes and, per shard, its records sorted by key. Kept
/// by the cache until each node is first asked for.
pub struct Saved {
    bytes: Vec<u8>,
    shards: ShardIndex,
}

impl Saved {
    /// The file's `bytes` (already checked by [`parse`]) and their index, sorted here on
    /// every core.
    fn new(bytes: Vec<u8>, mut shards: ShardIndex) -> Saved {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let per_thread = shards.len().div_ceil(threads);
        std::thread::scope(|s| {
            for part in shards.chunks_mut(per_thread) {
                s.spawn(move || part.iter_mut().for_each(|v| v.sort_unstable()));
            }
        });
        Saved { bytes, shards }
    }

    /// How many nodes the file holds.
    pub fn len(&self) -> usize {
        self.shards.iter().map(Vec::len).sum()
    }

    /// Whether the file holds no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Every node of the file, as its hash and bytes (unchecked).
    pub fn nodes(&self) -> impl Iterator<Item = ([u8; 32], &[u8])> + '_ {
        self.shards.iter().flatten().map(|&(_, at)| self.record(at))
    }

    fn record(&self, at: usize) -> ([u8; 32], &[u8]) {
        let hash: [u8; 32] = self.bytes[at..at + 32].try_into().expect("32 bytes");
        let len = u32::from_be_bytes(
            self.bytes[at + 32..at + RECORD_HEAD]
                .try_into()
                .expect("4 bytes"),
        ) as usize;
        (hash, &self.bytes[at + RECORD_HEAD..at + RECORD_HEAD + len])
    }
}

impl SavedNodes for Saved {
    fn find(&self, hash: &[u8; 32]) -> Option<&[u8]> {
        let shard = &self.shards[NodeCache::shard_of(hash)];
        let key = key_of(hash);
        let first = shard.partition_point(|&(k, _)| k < key);
        shard[first..]
            .iter()
            .take_while(|&&(k, _)| k == key)
            .map(|&(_, at)| self.record(at))
            .find(|(h, _)| h == hash)
            .map(|(_, node)| node)
    }
}

impl std::fmt::Debug for Saved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Saved")
            .field("bytes", &self.bytes.len())
            .field("nodes", &self.len())
            .finish()
    }
}

/// How far a save has come: the entries it writes, and those written so far (updated every
/// 65,536 entries and at the end).
#[derive(Debug, Default)]
pub struct SaveProgress {
    pub total: AtomicU64,
    pub written: AtomicU64,
}

/// Writes `cache` to `<datadir>/fastcache` for the chain of `genesis`. `stop` set abandons
/// the save (nothing is left behind). Returns the nodes and bytes written.
pub fn save(
    cache: &NodeCache,
    datadir: &Path,
    genesis: &[u8; 32],
    stop: &AtomicBool,
) -> Result<(u64, u64), String> {
    save_with_progress(cache, datadir, genesis, stop, &SaveProgress::default())
}

/// [`save`], reporting its progress into `progress`.
pub fn save_with_progress(
    cache: &NodeCache,
    datadir: &Path,
    genesis: &[u8; 32],
    stop: &AtomicBool,
    progress: &SaveProgress,
) -> Result<(u64, u64), String> {
    let entries = cache.entries();
    progress.written.store(0, Ordering::Relaxed);
    progress
        .total
        .store(entries.len() as u64, Ordering::Relaxed);
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
            if i % 65_536 == 0 {
                if stop.load(Ordering::Relaxed) {
                    return Err("stopped: the node is shutting down".to_string());
                }
                progress.written.store(i as u64, Ordering::Relaxed);
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
        progress
            .written
            .store(entries.len() as u64, Ordering::Relaxed);
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

/// The saved cache of `datadir` for the chain of `genesis`, checked whole (header, chain,
/// checksum, structure) and indexed; the nodes' hashes are the cache's to check when it
/// serves them. The file's path and its nodes; `Ok(None)` when there is none.
pub fn load(datadir: &Path, genesis: &[u8; 32]) -> Result<Option<(PathBuf, Saved)>, String> {
    let path = datadir.join(DIR_NAME).join(FILE_NAME);
    let file = match std::fs::File::open(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let (bytes, index) = read(&file, genesis).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(Some((path, Saved::new(bytes, index))))
}

/// Reads `file` and indexes it as [`parse`] does, with the same errors. Two threads share
/// the work: one reads the file a megabyte at a time while the other checksums and indexes
/// each megabyte the first has read, so that loading costs little more than reading.
fn read(file: &std::fs::File, genesis: &[u8; 32]) -> Result<(Vec<u8>, ShardIndex), String> {
    read_in_chunks(file, genesis, 1 << 20)
}

/// [`read`], `chunk` bytes at a time.
#[allow(clippy::type_complexity)]
fn read_in_chunks(
    file: &std::fs::File,
    genesis: &[u8; 32],
    chunk_size: usize,
) -> Result<(Vec<u8>, ShardIndex), String> {
    let size = usize::try_from(file.metadata().map_err(|e| e.to_string())?.len())
        .map_err(|_| "too large".to_string())?;
    let mut head = [0u8; HEAD];
    let got = read_full(file, &mut head).map_err(|e| e.to_string())?;
    let mut scan = Scan::new(&head[..got], genesis)?;
    // Zeroed by the allocator's fresh pages (calloc), not by a pass over the memory.
    let mut bytes = vec![0u8; size];
    bytes[..HEAD].copy_from_slice(&head);
    let (read_result, crc) = std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, &[u8])>(64);
        let indexer = s.spawn(move || {
            let mut crc = crc32fast::Hasher::new();
            // The head of a record cut by a chunk's end, completed from the next chunk.
            let mut carry: Vec<u8> = Vec::with_capacity(RECORD_HEAD);
            for (start, chunk) in rx {
                crc.update(chunk);
                scan.advance_chunk(start, chunk, &mut carry);
            }
            (scan, crc.finalize())
        });
        let mut result = Ok(());
        for (i, chunk) in bytes[HEAD..].chunks_mut(chunk_size).enumerate() {
            let start = HEAD + i * chunk_size;
            match read_full(file, chunk) {
                Ok(n) if n == chunk.len() => {}
                Ok(_) => {
                    result = Err("the file shrank while it was read".to_string());
                    break;
                }
                Err(e) => {
                    result = Err(e.to_string());
                    break;
                }
            }
            let chunk: &[u8] = chunk;
            if tx.send((start, chunk)).is_err() {
                break;
            }
        }
        drop(tx);
        let (scan, crc) = indexer.join().expect("the cache index thread panicked");
        (result.map(|()| scan), crc)
    });
    let scan = read_result?;
    let mut probe = [0u8; 1];
    if read_full(file, &mut probe).map_err(|e| e.to_string())? != 0 {
        return Err("the file grew while it was read".into());
    }
    let index = scan.finish(&bytes, crc)?;
    Ok((bytes, index))
}

/// Reads into `buf` until it is full or the file ends; how many bytes were read.
fn read_full(mut file: &std::fs::File, buf: &mut [u8]) -> std::io::Result<usize> {
    use std::io::Read;
    let mut n = 0;
    while n < buf.len() {
        match file.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Loads the saved cache of `datadir` (see [`load`]) into `cache`, each node to be checked
/// when first served. The file and the number of nodes; `Ok(None)` when there is no saved
/// cache.
pub fn load_into(
    cache: &NodeCache,
    datadir: &Path,
    genesis: &[u8; 32],
) -> Result<Option<(PathBuf, usize)>, String> {
    let Some((path, saved)) = load(datadir, genesis)? else {
        return Ok(None);
    };
    let count = saved.len();
    cache.preload(std::sync::Arc::new(saved));
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
        let (_, loaded) = load(dir.path(), &g).unwrap().unwrap();
        let mut nodes: Vec<([u8; 32], Vec<u8>)> =
            loaded.nodes().map(|(h, n)| (h, n.to_vec())).collect();
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
    fn nodes_whose_hashes_share_the_index_key_are_both_found() {
        let dir = tempfile::tempdir().unwrap();
        let g = [7u8; 32];
        let c = NodeCache::new(1 << 20);
        // The same first eight bytes (the index's key), different hashes; and a third whose
        // key sorts between nothing.
        let (mut a, mut b, mut other) = ([1u8; 32], [1u8; 32], [1u8; 32]);
        a[31] = 0xaa;
        b[31] = 0xbb;
        other[7] = 2;
        c.insert(a, Arc::from(&b"node a"[..]));
        c.insert(b, Arc::from(&b"node b"[..]));
        c.insert(other, Arc::from(&b"node c"[..]));
        save(&c, dir.path(), &g, &AtomicBool::new(false)).unwrap();
        let (_, saved) = load(dir.path(), &g).unwrap().unwrap();
        assert_eq!(saved.len(), 3);
        assert_eq!(saved.find(&a), Some(&b"node a"[..]));
        assert_eq!(saved.find(&b), Some(&b"node b"[..]));
        assert_eq!(saved.find(&other), Some(&b"node c"[..]));
        let mut missing = a;
        missing[31] = 0xcc;
        assert_eq!(saved.find(&missing), None);
        assert_eq!(saved.find(&[9u8; 32]), None);
    }

    #[test]
    fn reading_in_chunks_finds_what_parsing_the_whole_finds() {
        let dir = tempfile::tempdir().unwrap();
        let g = [7u8; 32];
        let nodes: Vec<String> = (0..40).map(|i| "n".repeat(i * 3 + 1)).collect();
        let refs: Vec<&str> = nodes.iter().map(String::as_str).collect();
        save(&cache_of(&refs), dir.path(), &g, &AtomicBool::new(false)).unwrap();
        let path = dir.path().join(DIR_NAME).join(FILE_NAME);
        let good = std::fs::read(&path).unwrap();
        let want = parse(&good, &g).unwrap();
        // Chunks that cut records' heads and bodies everywhere, and one larger than the file.
        for chunk in [1, 2, 7, 35, 36, 37, 100, 1 << 20] {
            let file = std::fs::File::open(&path).unwrap();
            let (bytes, index) = read_in_chunks(&file, &g, chunk).unwrap();
            assert_eq!(bytes, good, "chunk {chunk}");
            assert_eq!(index, want, "chunk {chunk}");
        }
        // The errors are parse's too, whatever the chunk.
        let fit = |mut b: Vec<u8>| {
            let crc = crc32fast::hash(&b[HEAD..]).to_be_bytes();
            b[HEAD - 4..HEAD].copy_from_slice(&crc);
            b
        };
        let mut damaged = good.clone();
        damaged[HEAD + 40] ^= 1;
        let mut extra = good.clone();
        extra.push(0);
        let mut huge = good.clone();
        huge[HEAD + 32..HEAD + 36].copy_from_slice(&u32::MAX.to_be_bytes());
        for bad in [
            damaged,
            fit(good[..good.len() - 1].to_vec()),
            fit(good[..HEAD + 20].to_vec()),
            fit(extra),
            fit(huge),
            good[..HEAD - 1].to_vec(),
        ] {
            std::fs::write(&path, &bad).unwrap();
            let want = parse(&bad, &g).unwrap_err();
            for chunk in [1, 7, 36, 100, 1 << 20] {
                let file = std::fs::File::open(&path).unwrap();
                assert_eq!(
                    read_in_chunks(&file, &g, chunk).unwrap_err(),
                    want,
                    "chunk {chunk}"
                );
            }
        }
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
