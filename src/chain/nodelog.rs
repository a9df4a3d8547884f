//! The state-trie nodes, by hash, in one append-only file: `<chaindata>/trie-nodes.log`.
//!
//! Why not a table of the database: the keys are hashes, so each block's new nodes land on
//! random pages of a B-tree, and a copy-on-write B-tree rewrites every page it touches. With
//! a million accounts a block of 10,000 transfers wrote about 32,000 nodes onto as many pages
//! (0.5-1 s per block, most of the sealing time). Appended to a file, the same nodes are one
//! sequential write of a few megabytes.
//!
//! Each record is the node's hash (32 bytes), its length (4 bytes, big-endian) and the node.
//! An index in memory maps each hash to its record; it is rebuilt by reading the file once
//! ([`scan`]). The file is written before the block that needs the nodes is committed to
//! the database, which records the file's length with the block: at open the file is cut
//! back to the length of the last committed block, so a crash leaves exactly the nodes of the
//! sealed blocks. A node read from the file is checked against its hash.
//!
//! The index is built after open, by the `trie-node-index` thread: reading a file that grows
//! with the chain (26 MB after 50,000 transfers, 70 ms) would otherwise delay every start by
//! as much, though a node answers much (the head, blocks, receipts, the pool) without a trie
//! node. Until the index is complete every look-up and append waits for it; a malformed
//! record found meanwhile is logged and makes every one of them fail with the scan's error,
//! so nothing is read from, or appended to, a file whose records do not add up. The checks
//! against the database's head (the file at least as long as the head needs, cut back to it)
//! stay at open.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};

use super::store_error::{Error, Hash, Result};

/// The file inside the `chaindata` directory.
pub const FILE_NAME: &str = "trie-nodes.log";
/// A record's hash and length.
const RECORD_HEAD: usize = 36;
/// The largest node accepted: a full branch node with 16 hashes and a value is about 600 bytes.
pub const MAX_NODE: u32 = 1 << 20;

/// Where a node is in the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub offset: u64,
    pub len: u32,
}

/// The records of `bytes` (a prefix of the file): each node's hash and where it is. Fails at
/// the first record that is cut short or too long. A pure function of the bytes.
pub fn scan(bytes: &[u8]) -> std::result::Result<Vec<(Hash, Slot)>, String> {
    let mut out = Vec::new();
    let used = scan_whole(bytes, 0, &mut out)?;
    if used < bytes.len() {
        return Err(format!("record at byte {used} is cut short"));
    }
    Ok(out)
}

/// The whole records at the start of `bytes`, which begin at byte `base` of the file, into
/// `out`; returns the bytes they take (a record cut short by the end of `bytes` is left for
/// the caller). Fails at a record longer than [`MAX_NODE`].
fn scan_whole(
    bytes: &[u8],
    base: u64,
    out: &mut impl Extend<(Hash, Slot)>,
) -> std::result::Result<usize, String> {
    let mut at = 0usize;
    while let Some(head) = bytes.get(at..at + RECORD_HEAD) {
        let hash: Hash = head[..32].try_into().expect("32 bytes");
        let len = u32::from_be_bytes(head[32..].try_into().expect("4 bytes"));
        if len > MAX_NODE {
            return Err(format!(
                "record at byte {} claims {len} bytes",
                base + at as u64
            ));
        }
        let start = at + RECORD_HEAD;
        let end = start + len as usize;
        if end > bytes.len() {
            break;
        }
        out.extend([(
            hash,
            Slot {
                offset: base + start as u64,
                len,
            },
        )]);
        at = end;
    }
    Ok(at)
}

/// How much of the file the index thread reads at a time.
const READ_CHUNK: usize = 4 << 20;

/// Indexes the first `committed` bytes of `file`, read `chunk` bytes at a time, as [`scan`]
/// does the whole; gives up with `stopping` set.
fn index_file(
    file: &File,
    path: &Path,
    committed: u64,
    chunk: usize,
    stopping: &AtomicBool,
) -> std::result::Result<HashMap<Hash, Slot>, String> {
    let mut index: HashMap<Hash, Slot> = HashMap::new();
    let mut sized = false;
    // `buf` holds the file from byte `base` on: what the last chunk left of a record cut by
    // its end, then the next chunk.
    let mut buf: Vec<u8> = Vec::with_capacity(chunk);
    let mut base = 0u64;
    let mut read_to = 0u64;
    while read_to < committed {
        if stopping.load(Ordering::Relaxed) {
            return Err("the node is shutting down".into());
        }
        let n = (committed - read_to).min(chunk as u64) as usize;
        let kept = buf.len();
        buf.resize(kept + n, 0);
        file.read_exact_at(&mut buf[kept..], read_to)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        read_to += n as u64;
        let used = scan_whole(&buf, base, &mut index)?;
        buf.drain(..used);
        base += used as u64;
        // Sized once, from the first chunk's mean record, for the whole file: grown as it
        // filled, the table was rehashed whole at every doubling.
        if !sized && !index.is_empty() {
            sized = true;
            let mean = (base / index.len() as u64).max(1);
            let want = usize::try_from(committed / mean + committed / mean / 16).unwrap_or(0);
            index.reserve(want.saturating_sub(index.len()));
        }
    }
    if !buf.is_empty() {
        return Err(format!("record at byte {base} is cut short"));
    }
    Ok(index)
}

/// Where a file's index stands.
#[derive(Debug, Clone)]
enum Indexing {
    /// The `trie-node-index` thread is reading the file.
    Running,
    /// The index covers the file.
    Done,
    /// The file's records do not add up (or could not be read): the reason.
    Failed(String),
}

/// One node file and its index.
struct Segment {
    name: String,
    path: PathBuf,
    file: File,
    index: RwLock<HashMap<Hash, Slot>>,
    /// The file's length: where the next record goes.
    end: Mutex<u64>,
    /// Set once the index covers the file: what every look-up checks first.
    indexed: AtomicBool,
    /// Where the index stands, and the condition its waiters sleep on.
    indexing: Mutex<Indexing>,
    indexing_done: Condvar,
    /// Set when the log is dropped: the index thread gives up.
    stopping: AtomicBool,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Storage(format!("{}: {e}", path.display()))
}

impl Segment {
    fn new(name: &str, path: PathBuf, file: File, end: u64, indexed: bool) -> Segment {
        Segment {
            name: name.to_string(),
            path,
            file,
            index: RwLock::new(HashMap::new()),
            end: Mutex::new(end),
            indexed: AtomicBool::new(indexed),
            indexing: Mutex::new(if indexed {
                Indexing::Done
            } else {
                Indexing::Running
            }),
            indexing_done: Condvar::new(),
            stopping: AtomicBool::new(false),
        }
    }

    /// Opens (creating) `dir/name` and keeps its first `committed` bytes; unless that is
    /// none, a `trie-node-index` thread (returned) indexes them.
    fn open(
        dir: &Path,
        name: &str,
        committed: u64,
    ) -> Result<(Arc<Segment>, Option<std::thread::JoinHandle<()>>)> {
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        let len = file.metadata().map_err(|e| io(&path, e))?.len();
        if len < committed {
            return Err(Error::Corrupt(format!(
                "{} holds {len} bytes; the database's head needs {committed}",
                path.display()
            )));
        }
        if len > committed {
            // Nodes of a block that was never committed.
            file.set_len(committed).map_err(|e| io(&path, e))?;
            file.sync_all().map_err(|e| io(&path, e))?;
        }
        let seg = Arc::new(Segment::new(name, path, file, committed, committed == 0));
        if committed == 0 {
            return Ok((seg, None));
        }
        let me = seg.clone();
        let thread = std::thread::Builder::new()
            .name("trie-node-index".into())
            .spawn(move || me.build_index(committed))
            .map_err(|e| Error::Storage(format!("cannot start the trie-node index: {e}")))?;
        Ok((seg, Some(thread)))
    }

    /// The index thread: reads the first `committed` bytes, publishes their index (or the
    /// reason there is none) and wakes the waiters.
    fn build_index(&self, committed: u64) {
        let t = std::time::Instant::now();
        let outcome = index_file(
            &self.file,
            &self.path,
            committed,
            READ_CHUNK,
            &self.stopping,
        );
        let mut state = self.indexing.lock().unwrap_or_else(|p| p.into_inner());
        *state = match outcome {
            Ok(index) => {
                let nodes = index.len();
                *self.index.write().unwrap_or_else(|p| p.into_inner()) = index;
                self.indexed.store(true, Ordering::Release);
                crate::log::debug(
                    "Indexed the trie-node file",
                    &[
                        ("file", &self.path.display().to_string()),
                        ("nodes", &nodes.to_string()),
                        ("bytes", &committed.to_string()),
                        ("elapsed", &format!("{:.3}s", t.elapsed().as_secs_f64())),
                    ],
                );
                Indexing::Done
            }
            Err(e) => {
                let e = format!("{}: {e}", self.path.display());
                if !self.stopping.load(Ordering::Relaxed) {
                    crate::log::error(
                        "The trie-node file is corrupt; no state can be read or written",
                        &[("err", &e)],
                    );
                }
                Indexing::Failed(e)
            }
        };
        drop(state);
        self.indexing_done.notify_all();
    }

    /// Waits until the index covers the file: the scan's error when it cannot.
    fn wait_indexed(&self) -> Result<()> {
        if self.indexed.load(Ordering::Acquire) {
            return Ok(());
        }
        let mut state = self.indexing.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match &*state {
                Indexing::Done => return Ok(()),
                Indexing::Failed(e) => return Err(Error::Corrupt(e.clone())),
                Indexing::Running => {
                    state = self
                        .indexing_done
                        .wait(state)
                        .unwrap_or_else(|p| p.into_inner())
                }
            }
        }
    }

    /// A new, empty file `dir/name` (an existing one is emptied).
    fn create(dir: &Path, name: &str) -> Result<Segment> {
        let path = dir.join(name);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .map_err(|e| io(&path, e))?;
        Ok(Segment::new(name, path, file, 0, true))
    }

    fn get(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.wait_indexed()?;
        let slot = {
            let index = self.index.read().unwrap_or_else(|p| p.into_inner());
            match index.get(hash) {
                Some(s) => *s,
                None => return Ok(None),
            }
        };
        let mut node = vec![0u8; slot.len as usize];
        self.file
            .read_exact_at(&mut node, slot.offset)
            .map_err(|e| io(&self.path, e))?;
        if crate::crypto::keccak256(&node) != *hash {
            return Err(Error::Corrupt(format!(
                "{}: the node at byte {} does not match its hash 0x{}",
                self.path.display(),
                slot.offset,
                hex::encode(hash)
            )));
        }
        Ok(Some(node))
    }

    /// False too when the file could not be indexed.
    fn contains(&self, hash: &Hash) -> bool {
        if self.wait_indexed().is_err() {
            return false;
        }
        self.index
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .contains_key(hash)
    }

    /// Appends the nodes not yet in the file (synced when `sync`); the new length.
    fn append<'n>(
        &self,
        nodes: impl IntoIterator<Item = &'n (Hash, Vec<u8>)>,
        sync: bool,
    ) -> Result<u64> {
        self.wait_indexed()?;
        let mut end = self.end.lock().unwrap_or_else(|p| p.into_inner());
        let mut buf = Vec::new();
        let mut slots: Vec<(Hash, Slot)> = Vec::new();
        {
            let index = self.index.read().unwrap_or_else(|p| p.into_inner());
            for (hash, node) in nodes {
                if index.contains_key(hash) {
                    continue;
                }
                let len = u32::try_from(node.len())
                    .ok()
                    .filter(|l| *l <= MAX_NODE)
                    .ok_or_else(|| {
                        Error::Storage(format!("a trie node of {} bytes", node.len()))
                    })?;
                buf.extend_from_slice(hash);
                buf.extend_from_slice(&len.to_be_bytes());
                let offset = *end + buf.len() as u64;
                buf.extend_from_slice(node);
                slots.push((*hash, Slot { offset, len }));
            }
        }
        if buf.is_empty() {
            return Ok(*end);
        }
        self.file
            .write_all_at(&buf, *end)
            .map_err(|e| io(&self.path, e))?;
        if sync {
            self.file.sync_data().map_err(|e| io(&self.path, e))?;
        }
        *end += buf.len() as u64;
        self.index
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .extend(slots);
        Ok(*end)
    }

    fn len(&self) -> u64 {
        *self.end.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Nodes indexed (none when the file could not be indexed).
    fn count(&self) -> usize {
        if self.wait_indexed().is_err() {
            return 0;
        }
        self.index.read().unwrap_or_else(|p| p.into_inner()).len()
    }
}

/// The node file in use and, while a state migration runs, the new one it builds.
pub struct NodeLog {
    dir: PathBuf,
    primary: RwLock<Arc<Segment>>,
    /// The file a migration fills: every node appended meanwhile goes to both.
    mirror: RwLock<Option<Arc<Segment>>>,
    /// Held by every append, so that the two files receive the same appends in order.
    writing: Mutex<()>,
    /// The file opened and the thread indexing it, stopped and joined when the log is
    /// dropped.
    indexer: Mutex<Option<(Arc<Segment>, std::thread::JoinHandle<()>)>>,
}

impl Drop for NodeLog {
    fn drop(&mut self) {
        let indexer = self
            .indexer
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some((seg, t)) = indexer {
            seg.stopping.store(true, Ordering::Relaxed);
            let _ = t.join();
        }
    }
}

impl std::fmt::Debug for NodeLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeLog").field("dir", &self.dir).finish()
    }
}

impl NodeLog {
    /// Opens (creating) `FILE_NAME` in `dir` and keeps its first `committed` bytes (what the
    /// database's last block recorded); they are indexed in the background (the module's
    /// comment). Fails when the file is shorter than that; malformed records fail every
    /// look-up and append instead.
    pub fn open(dir: &Path, committed: u64) -> Result<NodeLog> {
        NodeLog::open_named(dir, FILE_NAME, committed)
    }

    /// [`NodeLog::open`] of the file `name` (a migration's result has another name).
    pub fn open_named(dir: &Path, name: &str, committed: u64) -> Result<NodeLog> {
        let (seg, indexer) = Segment::open(dir, name, committed)?;
        Ok(NodeLog {
            dir: dir.to_path_buf(),
            indexer: Mutex::new(indexer.map(|t| (seg.clone(), t))),
            primary: RwLock::new(seg),
            mirror: RwLock::new(None),
            writing: Mutex::new(()),
        })
    }

    /// Waits until the file opened is indexed: the scan's error when its records are
    /// malformed.
    pub fn wait_indexed(&self) -> Result<()> {
        self.primary().wait_indexed()
    }

    fn primary(&self) -> Arc<Segment> {
        self.primary
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn mirror(&self) -> Option<Arc<Segment>> {
        self.mirror
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The node with this hash, read from the file and checked against its hash.
    pub fn get(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.primary().get(hash)
    }

    /// Appends the nodes not yet in the file and makes them durable (and to the migration's
    /// file, while one runs); the file's new length, for the database to record with the
    /// block that needs them.
    pub fn append<'n>(&self, nodes: impl IntoIterator<Item = &'n (Hash, Vec<u8>)>) -> Result<u64> {
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let nodes: Vec<&(Hash, Vec<u8>)> = nodes.into_iter().collect();
        let end = self.primary().append(nodes.iter().copied(), true)?;
        if let Some(m) = self.mirror() {
            m.append(nodes.iter().copied(), true)?;
        }
        Ok(end)
    }

    /// The file's name in the chain directory.
    pub fn name(&self) -> String {
        self.primary().name.clone()
    }

    /// The file's length.
    pub fn len(&self) -> u64 {
        self.primary().len()
    }

    /// Whether the file holds no node.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Nodes indexed.
    pub fn count(&self) -> usize {
        self.primary().count()
    }

    /// Starts a new file `name` that receives every append from now on, and what
    /// [`NodeLog::copy`] puts there.
    pub fn start_mirror(&self, name: &str) -> Result<()> {
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        if name == self.primary().name {
            return Err(Error::Storage(format!("{name} is the node file in use")));
        }
        let seg = Segment::create(&self.dir, name)?;
        *self.mirror.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(seg));
        Ok(())
    }

    /// Whether the migration's file has this node already.
    pub fn mirrored(&self, hash: &Hash) -> bool {
        self.mirror().is_some_and(|m| m.contains(hash))
    }

    /// Copies nodes into the migration's file (not synced: [`NodeLog::adopt_mirror`]
    /// syncs). Returns how many were new there.
    pub fn copy(&self, nodes: &[(Hash, Vec<u8>)]) -> Result<usize> {
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let Some(m) = self.mirror() else {
            return Err(Error::Storage("no migration file".into()));
        };
        let before = m.count();
        m.append(nodes.iter(), false)?;
        Ok(m.count() - before)
    }

    /// Drops the migration's file (a stopped or failed migration).
    pub fn drop_mirror(&self) {
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = self
            .mirror
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = std::fs::remove_file(&m.path);
        }
    }

    /// Makes the migration's file durable and hands over its name and length, with the
    /// appends held until `commit` (which records them in the database) has run; then it
    /// becomes the file in use and the old one is removed. If `commit` fails, nothing changes
    /// but the migration's file is dropped.
    pub fn adopt_mirror(&self, commit: impl FnOnce(&str, u64) -> Result<()>) -> Result<()> {
        let _w = self.writing.lock().unwrap_or_else(|p| p.into_inner());
        let Some(m) = self.mirror() else {
            return Err(Error::Storage("no migration file".into()));
        };
        let synced = m
            .file
            .sync_all()
            .map_err(|e| io(&m.path, e))
            .and_then(|()| {
                crate::datadir::atomic::sync_dir(&self.dir)
                    .map_err(|e| Error::Storage(e.to_string()))
            });
        if let Err(e) = synced.and_then(|()| commit(&m.name, m.len())) {
            *self.mirror.write().unwrap_or_else(|p| p.into_inner()) = None;
            let _ = std::fs::remove_file(&m.path);
            return Err(e);
        }
        let old = std::mem::replace(
            &mut *self.primary.write().unwrap_or_else(|p| p.into_inner()),
            m,
        );
        *self.mirror.write().unwrap_or_else(|p| p.into_inner()) = None;
        let _ = std::fs::remove_file(&old.path);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keccak256;

    fn node(s: &str) -> (Hash, Vec<u8>) {
        (keccak256(s.as_bytes()), s.as_bytes().to_vec())
    }

    #[test]
    fn appended_nodes_are_found_again_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let log = NodeLog::open(dir.path(), 0).unwrap();
        let (a, b) = (node("alpha"), node("beta"));
        let end = log.append(&[a.clone(), b.clone()]).unwrap();
        assert_eq!(end, 2 * 36 + 5 + 4);
        assert_eq!(
            log.append(std::slice::from_ref(&a)).unwrap(),
            end,
            "a known node is not written again"
        );
        assert_eq!(log.get(&a.0).unwrap(), Some(a.1.clone()));
        drop(log);
        let log = NodeLog::open(dir.path(), end).unwrap();
        assert_eq!(log.get(&b.0).unwrap(), Some(b.1));
        assert_eq!(log.get(&[7; 32]).unwrap(), None);
        assert_eq!(log.count(), 2);
    }

    #[test]
    fn nodes_past_the_committed_length_are_cut_off() {
        let dir = tempfile::tempdir().unwrap();
        let log = NodeLog::open(dir.path(), 0).unwrap();
        let first = log.append(&[node("sealed")]).unwrap();
        log.append(&[node("never committed")]).unwrap();
        drop(log);
        let log = NodeLog::open(dir.path(), first).unwrap();
        assert_eq!(log.count(), 1);
        assert_eq!(log.get(&node("never committed").0).unwrap(), None);
        assert_eq!(
            std::fs::metadata(dir.path().join(FILE_NAME)).unwrap().len(),
            first
        );
    }

    #[test]
    fn a_short_file_or_a_changed_node_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let log = NodeLog::open(dir.path(), 0).unwrap();
        let n = node("gamma");
        let end = log.append(std::slice::from_ref(&n)).unwrap();
        drop(log);
        let err = NodeLog::open(dir.path(), end + 1).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "holds {end} bytes; the database's head needs {}",
                end + 1
            )),
            "{err}"
        );
        // One byte of the node changed on disk.
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[36] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        let log = NodeLog::open(dir.path(), end).unwrap();
        let err = log.get(&n.0).unwrap_err();
        assert!(err.to_string().contains("does not match its hash"), "{err}");
    }

    #[test]
    fn records_cut_by_the_read_chunks_are_indexed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let log = NodeLog::open(dir.path(), 0).unwrap();
        // Nodes of 1 to 40 bytes: record k starts where the 36 + len of those before end.
        let nodes: Vec<(Hash, Vec<u8>)> = (1..=40u8)
            .map(|len| {
                let n = vec![len; len as usize];
                (keccak256(&n), n)
            })
            .collect();
        let end = log.append(&nodes).unwrap();
        drop(log);
        let file = File::open(dir.path().join(FILE_NAME)).unwrap();
        let never = AtomicBool::new(false);
        for chunk in [1, 7, 36, 37, 100, 1 << 20] {
            let index = index_file(&file, dir.path(), end, chunk, &never).unwrap();
            assert_eq!(index.len(), nodes.len(), "chunk {chunk}");
            let mut offset = 0u64;
            for (hash, node) in &nodes {
                offset += 36;
                let want = Slot {
                    offset,
                    len: node.len() as u32,
                };
                assert_eq!(index.get(hash), Some(&want), "chunk {chunk}");
                offset += node.len() as u64;
            }
        }
        // Cut inside the last record's node: refused whatever the chunk.
        for chunk in [1, 7, 1 << 20] {
            assert_eq!(
                index_file(&file, dir.path(), end - 1, chunk, &never).unwrap_err(),
                format!("record at byte {} is cut short", end - 36 - 40)
            );
        }
        let stop = AtomicBool::new(true);
        assert_eq!(
            index_file(&file, dir.path(), end, 7, &stop).unwrap_err(),
            "the node is shutting down"
        );
    }

    /// A file whose records do not add up opens (its length is what the head needs), but
    /// no node is read from it and nothing is appended to it.
    #[test]
    fn malformed_records_fail_every_look_up_and_append() {
        let dir = tempfile::tempdir().unwrap();
        let log = NodeLog::open(dir.path(), 0).unwrap();
        let n = node("delta");
        let end = log.append(std::slice::from_ref(&n)).unwrap();
        drop(log);
        // The record's length field claims more than any node may hold.
        let path = dir.path().join(FILE_NAME);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[32..36].copy_from_slice(&(MAX_NODE + 1).to_be_bytes());
        std::fs::write(&path, &bytes).unwrap();
        let log = NodeLog::open(dir.path(), end).unwrap();
        let want = format!(
            "chain database is corrupt: {}: record at byte 0 claims {} bytes",
            path.display(),
            MAX_NODE + 1
        );
        assert_eq!(log.wait_indexed().unwrap_err().to_string(), want);
        assert_eq!(log.get(&n.0).unwrap_err().to_string(), want);
        assert_eq!(
            log.append(&[node("epsilon")]).unwrap_err().to_string(),
            want
        );
        assert_eq!(log.count(), 0);
        assert_eq!(std::fs::read(&path).unwrap(), bytes, "nothing was appended");
    }

    #[test]
    fn scan_refuses_cut_and_oversized_records() {
        let mut rec = vec![1u8; 32];
        rec.extend_from_slice(&3u32.to_be_bytes());
        rec.extend_from_slice(b"abc");
        assert_eq!(scan(&rec).unwrap().len(), 1);
        assert_eq!(
            scan(&rec[..rec.len() - 1]).unwrap_err(),
            "record at byte 0 is cut short"
        );
        assert_eq!(
            scan(&rec[..10]).unwrap_err(),
            "record at byte 0 is cut short"
        );
        let mut big = vec![1u8; 32];
        big.extend_from_slice(&(MAX_NODE + 1).to_be_bytes());
        assert_eq!(
            scan(&big).unwrap_err(),
            format!("record at byte 0 claims {} bytes", MAX_NODE + 1)
        );
        assert_eq!(scan(&[]).unwrap(), vec![]);
    }
}
