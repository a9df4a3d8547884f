//! The state-trie nodes, by hash, in one append-only file: `<chaindata>/trie-nodes.log`.
//!
//! Why not a table of the database: the keys are hashes, so each block's new nodes land on
//! random pages of a B-tree, and a copy-on-write B-tree rewrites every page it touches. With
//! a million accounts a block of 10,000 transfers wrote about 32,000 nodes onto as many pages
//! (0.5-1 s per block, most of the sealing time). Appended to a file, the same nodes are one
//! sequential write of a few megabytes.
//!
//! Each record is the node's hash (32 bytes), its length (4 bytes, big-endian) and the node.
//! An index in memory maps each hash to its record; it is rebuilt at open by reading the file
//! once ([`scan`]). The file is written before the block that needs the nodes is committed to
//! the database, which records the file's length with the block: at open the file is cut
//! back to the length of the last committed block, so a crash leaves exactly the nodes of the
//! sealed blocks. A node read from the file is checked against its hash.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

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
    let mut at = 0usize;
    while at < bytes.len() {
        let head = bytes
            .get(at..at + RECORD_HEAD)
            .ok_or_else(|| format!("record at byte {at} is cut short"))?;
        let hash: Hash = head[..32].try_into().expect("32 bytes");
        let len = u32::from_be_bytes(head[32..].try_into().expect("4 bytes"));
        if len > MAX_NODE {
            return Err(format!("record at byte {at} claims {len} bytes"));
        }
        let start = at + RECORD_HEAD;
        let end = start + len as usize;
        if end > bytes.len() {
            return Err(format!("record at byte {at} is cut short"));
        }
        out.push((
            hash,
            Slot {
                offset: start as u64,
                len,
            },
        ));
        at = end;
    }
    Ok(out)
}

/// One node file and its index.
struct Segment {
    name: String,
    path: PathBuf,
    file: File,
    index: RwLock<HashMap<Hash, Slot>>,
    /// The file's length: where the next record goes.
    end: Mutex<u64>,
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Storage(format!("{}: {e}", path.display()))
}

impl Segment {
    /// Opens (creating) `dir/name`, keeps its first `committed` bytes and indexes them.
    fn open(dir: &Path, name: &str, committed: u64) -> Result<Segment> {
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
        let mut bytes = vec![0u8; committed as usize];
        file.read_exact_at(&mut bytes, 0)
            .map_err(|e| io(&path, e))?;
        let records =
            scan(&bytes).map_err(|e| Error::Corrupt(format!("{}: {e}", path.display())))?;
        drop(bytes);
        let index = records.into_iter().collect();
        Ok(Segment {
            name: name.to_string(),
            path,
            file,
            index: RwLock::new(index),
            end: Mutex::new(committed),
        })
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
        Ok(Segment {
            name: name.to_string(),
            path,
            file,
            index: RwLock::new(HashMap::new()),
            end: Mutex::new(0),
        })
    }

    fn get(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
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

    fn contains(&self, hash: &Hash) -> bool {
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

    fn count(&self) -> usize {
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
}

impl std::fmt::Debug for NodeLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeLog").field("dir", &self.dir).finish()
    }
}

impl NodeLog {
    /// Opens (creating) `FILE_NAME` in `dir`, keeps its first `committed` bytes (what the
    /// database's last block recorded) and indexes them. Fails when the file is shorter than
    /// that or its records are malformed.
    pub fn open(dir: &Path, committed: u64) -> Result<NodeLog> {
        NodeLog::open_named(dir, FILE_NAME, committed)
    }

    /// [`NodeLog::open`] of the file `name` (a migration's result has another name).
    pub fn open_named(dir: &Path, name: &str, committed: u64) -> Result<NodeLog> {
        let seg = Segment::open(dir, name, committed)?;
        Ok(NodeLog {
            dir: dir.to_path_buf(),
            primary: RwLock::new(Arc::new(seg)),
            mirror: RwLock::new(None),
            writing: Mutex::new(()),
        })
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
