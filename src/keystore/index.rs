//! The index of a keystore directory: which files are key files and which address each holds,
//! found without decrypting anything.
//!
//! Listing 100,000 files must not re-read them all each time, in this process or the next. So
//! the index is kept in memory and also saved in a hidden cache file in the directory
//! (`.chain-keystore-index`), stamped with the directory's modification time:
//!
//! - If the directory's mtime equals the stamp, and the stamp was taken at least
//!   [`RACY_WINDOW`] before the directory was read, nothing was added, removed or renamed since:
//!   the cached list is used as it is (one `stat`, one read of the cache).
//! - Otherwise the directory is read again; each file is `stat`ed and only files that are new
//!   or whose mtime, size or inode changed are opened and parsed.
//!
//! The racy-window rule is git's: file-system timestamps are coarse, so a change made in the
//! same tick as the scan could leave the directory's mtime unchanged; such a scan is never
//! trusted. A key file rewritten in place (same name, no rename) without any change to the
//! directory is only seen at the next full scan; every writer of this ecosystem, this one
//! included, writes key files by rename.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::crypto::Address;

use super::atomic::flock;

/// Name of the saved index, hidden from the listing by its leading dot.
pub const CACHE_FILE: &str = ".chain-keystore-index";
/// A scan is trusted only if the directory was last changed at least this long before it.
pub const RACY_WINDOW: Duration = Duration::from_secs(1);
/// Files larger than this are not key files; only this much of them is read.
const MAX_KEY_FILE: u64 = 1 << 20;
const CACHE_MAGIC: &[u8; 8] = b"CKSIDX01";

/// What identifies one version of a file without reading it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    mtime_sec: i64,
    mtime_nsec: u32,
    size: u64,
    ino: u64,
}

impl Stamp {
    fn of(m: &fs::Metadata) -> Stamp {
        Stamp {
            mtime_sec: m.mtime(),
            mtime_nsec: m.mtime_nsec() as u32,
            size: m.size(),
            ino: m.ino(),
        }
    }
}

#[derive(Debug, Clone)]
struct Entry {
    name: String,
    stamp: Stamp,
    /// `None`: the file is not a usable key file (unreadable, not JSON, no address, zero
    /// address). It stays known so that it is only read again once it changes.
    address: Option<Address>,
}

/// One account of the keystore: an address and the key file that holds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub address: Address,
    pub path: PathBuf,
}

impl Account {
    /// `keystore://` + the absolute file path.
    pub fn url(&self) -> String {
        format!("keystore://{}", self.path.display())
    }
}

/// The directory's mtime at the last full scan, and whether that scan can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirStamp {
    mtime_sec: i64,
    mtime_nsec: u32,
    trusted: bool,
}

/// Statistics of the last refresh, for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RefreshStats {
    /// The directory was read (not answered from the in-memory or saved index).
    pub scanned: bool,
    /// Key files opened and parsed.
    pub files_read: usize,
}

/// In-memory index of one keystore directory.
#[derive(Debug)]
pub struct Index {
    dir: PathBuf,
    /// Sorted by file name, i.e. by URL as the reference orders wallets.
    entries: Vec<Entry>,
    stamp: Option<DirStamp>,
    by_address: Option<HashMap<Address, Vec<usize>>>,
    loaded_cache: bool,
    pub last: RefreshStats,
}

#[derive(Deserialize)]
struct AddressOnly<'a> {
    #[serde(borrow)]
    address: Option<std::borrow::Cow<'a, str>>,
}

/// The address of a key file as the index reads it: the top-level `address` string of the
/// first JSON value, leniently decoded; `None` for anything else or the zero address.
pub fn read_address(path: &Path) -> Option<Address> {
    let f = File::open(path).ok()?;
    let mut buf = Vec::with_capacity(1024);
    f.take(MAX_KEY_FILE).read_to_end(&mut buf).ok()?;
    address_of(&buf)
}

fn address_of(buf: &[u8]) -> Option<Address> {
    let mut it = serde_json::Deserializer::from_slice(buf).into_iter::<AddressOnly>();
    let v = it.next()?.ok()?;
    let a = Address::parse_lenient(v.address?.as_ref())?;
    (!a.is_zero()).then_some(a)
}

fn skipped_name(name: &str) -> bool {
    name.starts_with('.') || name.ends_with('~')
}

impl Index {
    pub fn new(dir: impl Into<PathBuf>) -> Index {
        Index {
            dir: dir.into(),
            entries: Vec::new(),
            stamp: None,
            by_address: None,
            loaded_cache: false,
            last: RefreshStats::default(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Brings the index up to date with the directory (see the module doc for the cost).
    /// A missing directory is an empty keystore, not an error.
    pub fn refresh(&mut self) {
        self.last = RefreshStats::default();
        let meta = match fs::metadata(&self.dir) {
            Ok(m) if m.is_dir() => m,
            _ => {
                if !self.entries.is_empty() || self.stamp.is_some() {
                    self.entries.clear();
                    self.stamp = None;
                    self.by_address = None;
                }
                return;
            }
        };
        let (sec, nsec) = (meta.mtime(), meta.mtime_nsec() as u32);
        let unchanged = |s: &Option<DirStamp>| matches!(s, Some(s) if s.trusted && s.mtime_sec == sec && s.mtime_nsec == nsec);
        if unchanged(&self.stamp) {
            return;
        }
        if !self.loaded_cache {
            self.loaded_cache = true;
            if let Some((stamp, entries)) = load_cache(&self.dir) {
                self.entries = entries;
                self.stamp = Some(stamp);
                self.by_address = None;
                if unchanged(&self.stamp) {
                    return;
                }
            }
        }
        self.full_scan(sec, nsec);
        self.save_cache();
    }

    fn full_scan(&mut self, dir_sec: i64, dir_nsec: u32) {
        self.last.scanned = true;
        let Ok(rd) = fs::read_dir(&self.dir) else {
            return;
        };
        let old: HashMap<&str, &Entry> =
            self.entries.iter().map(|e| (e.name.as_str(), e)).collect();
        let mut next: Vec<Entry> = Vec::with_capacity(self.entries.len());
        let mut to_read: Vec<usize> = Vec::new();
        for de in rd.flatten() {
            let Ok(name) = de.file_name().into_string() else {
                continue;
            };
            if skipped_name(&name) {
                continue;
            }
            // d_type from readdir: directories, symbolic links and other non-regular files
            // are skipped without a stat.
            match de.file_type() {
                Ok(t) if t.is_file() => {}
                _ => continue,
            }
            let Ok(meta) = de.metadata() else { continue };
            let stamp = Stamp::of(&meta);
            match old.get(name.as_str()) {
                Some(e) if e.stamp == stamp => next.push((*e).clone()),
                _ => {
                    to_read.push(next.len());
                    next.push(Entry {
                        name,
                        stamp,
                        address: None,
                    });
                }
            }
        }
        self.last.files_read = to_read.len();
        read_addresses(&self.dir, &mut next, &to_read);
        next.sort_unstable_by(|a, b| a.name.cmp(&b.name));
        let scanned_at = SystemTime::now();
        let dir_time = UNIX_EPOCH + Duration::new(dir_sec.max(0) as u64, dir_nsec);
        let trusted = scanned_at
            .duration_since(dir_time)
            .map(|d| d >= RACY_WINDOW)
            .unwrap_or(false);
        self.entries = next;
        self.stamp = Some(DirStamp {
            mtime_sec: dir_sec,
            mtime_nsec: dir_nsec,
            trusted,
        });
        self.by_address = None;
    }

    /// Records a key file this process has just written, so that it is listed at once.
    pub fn note_written(&mut self, path: &Path, address: Address) {
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            return;
        };
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        let entry = Entry {
            name: name.to_string(),
            stamp: Stamp::of(&meta),
            address: Some(address),
        };
        match self
            .entries
            .binary_search_by(|e| e.name.as_bytes().cmp(name.as_bytes()))
        {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
        // The directory changed under us; the next refresh must look at it.
        if let Some(s) = self.stamp.as_mut() {
            s.trusted = false;
        }
        self.by_address = None;
    }

    /// Every account, sorted by URL. Files that are not key files are left out.
    pub fn accounts(&self) -> Vec<Account> {
        self.entries
            .iter()
            .filter_map(|e| {
                e.address.map(|address| Account {
                    address,
                    path: self.dir.join(&e.name),
                })
            })
            .collect()
    }

    /// Number of accounts listed.
    pub fn len(&self) -> usize {
        self.entries.iter().filter(|e| e.address.is_some()).count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key files holding `address`, sorted by path.
    pub fn find(&mut self, address: Address) -> Vec<PathBuf> {
        let entries = &self.entries;
        let map = self.by_address.get_or_insert_with(|| {
            let mut m: HashMap<Address, Vec<usize>> = HashMap::new();
            for (i, e) in entries.iter().enumerate() {
                if let Some(a) = e.address {
                    m.entry(a).or_default().push(i);
                }
            }
            m
        });
        map.get(&address)
            .map(|v| v.iter().map(|&i| self.dir.join(&entries[i].name)).collect())
            .unwrap_or_default()
    }

    fn save_cache(&self) {
        let Some(stamp) = self.stamp else { return };
        let path = self.dir.join(CACHE_FILE);
        let mut buf = Vec::with_capacity(64 + self.entries.len() * 128);
        buf.extend_from_slice(CACHE_MAGIC);
        buf.extend_from_slice(&stamp.mtime_sec.to_le_bytes());
        buf.extend_from_slice(&stamp.mtime_nsec.to_le_bytes());
        buf.push(stamp.trusted as u8);
        buf.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        for e in &self.entries {
            buf.extend_from_slice(&(e.name.len() as u16).to_le_bytes());
            buf.extend_from_slice(e.name.as_bytes());
            buf.extend_from_slice(&e.stamp.mtime_sec.to_le_bytes());
            buf.extend_from_slice(&e.stamp.mtime_nsec.to_le_bytes());
            buf.extend_from_slice(&e.stamp.size.to_le_bytes());
            buf.extend_from_slice(&e.stamp.ino.to_le_bytes());
            match e.address {
                Some(a) => {
                    buf.push(1);
                    buf.extend_from_slice(&a.0);
                }
                None => buf.push(0),
            }
        }
        let sum = checksum(&buf);
        buf.extend_from_slice(&sum.to_le_bytes());
        // Rewritten in place (not renamed), so that saving the index does not itself change
        // the directory's mtime. Readers take a shared lock and check the checksum, so a torn
        // or crashed write is only a cache miss. Failure to save (read-only keystore) is fine.
        let Ok(mut f) = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
        else {
            return;
        };
        if flock(&f, libc::LOCK_EX).is_err() {
            return;
        }
        let _ = f.set_len(0).and_then(|_| f.write_all(&buf));
    }
}

/// Reads the addresses of `next[i]` for every i in `to_read`, on a few threads when there are
/// many (a cold start of a large keystore is dominated by open/read system calls).
fn read_addresses(dir: &Path, next: &mut [Entry], to_read: &[usize]) {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(8);
    if to_read.len() < 256 || threads == 1 {
        for &i in to_read {
            next[i].address = read_address(&dir.join(&next[i].name));
        }
        return;
    }
    let chunk = to_read.len().div_ceil(threads);
    let results: Vec<Vec<(usize, Option<Address>)>> = std::thread::scope(|s| {
        let next = &*next;
        let handles: Vec<_> = to_read
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut path = dir.to_path_buf();
                    part.iter()
                        .map(|&i| {
                            path.push(&next[i].name);
                            let a = read_address(&path);
                            path.pop();
                            (i, a)
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("index reader panicked"))
            .collect()
    });
    for (i, a) in results.into_iter().flatten() {
        next[i].address = a;
    }
}

fn checksum(data: &[u8]) -> u64 {
    // A fast 64-bit multiply-xor hash: it only has to catch torn or truncated writes.
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ data.len() as u64;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        h = (h ^ w).wrapping_mul(0x0100_0000_01b3).rotate_left(29);
    }
    for &b in chunks.remainder() {
        h = (h ^ b as u64).wrapping_mul(0x0100_0000_01b3);
    }
    h
}

struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.buf.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}

fn load_cache(dir: &Path) -> Option<(DirStamp, Vec<Entry>)> {
    let mut f = File::open(dir.join(CACHE_FILE)).ok()?;
    flock(&f, libc::LOCK_SH).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    drop(f);
    if buf.len() < CACHE_MAGIC.len() + 8 || &buf[..8] != CACHE_MAGIC {
        return None;
    }
    let (body, sum) = buf.split_at(buf.len() - 8);
    if checksum(body) != u64::from_le_bytes(sum.try_into().ok()?) {
        return None;
    }
    let mut r = Reader { buf: body, pos: 8 };
    let stamp = DirStamp {
        mtime_sec: r.i64()?,
        mtime_nsec: r.u32()?,
        trusted: r.u8()? == 1,
    };
    let count = r.u64()? as usize;
    let mut entries = Vec::with_capacity(count.min(body.len() / 40));
    for _ in 0..count {
        let len = r.u16()? as usize;
        let name = std::str::from_utf8(r.take(len)?).ok()?.to_string();
        let stamp = Stamp {
            mtime_sec: r.i64()?,
            mtime_nsec: r.u32()?,
            size: r.u64()?,
            ino: r.u64()?,
        };
        let address = match r.u8()? {
            1 => Some(Address(r.take(20)?.try_into().ok()?)),
            _ => None,
        };
        entries.push(Entry {
            name,
            stamp,
            address,
        });
    }
    (r.pos == body.len()).then_some((stamp, entries))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn address_is_read_leniently_from_the_first_json_value() {
        assert_eq!(
            address_of(br#"{"address":"0X819104A190255E0CEDBDD9D5F59A557633D79DB1"} trailing"#)
                .unwrap()
                .to_hex(),
            "819104a190255e0cedbdd9d5f59a557633d79db1"
        );
        assert!(address_of(br#"{"address":"0000000000000000000000000000000000000000"}"#).is_none());
        assert!(address_of(br#"{"address":5}"#).is_none());
        assert!(address_of(b"").is_none());
        assert!(address_of(b"not json").is_none());
        assert!(address_of(br#"{"id":"x"}"#).is_none());
    }

    #[test]
    fn checksum_detects_truncation_and_flips() {
        let data = b"0123456789abcdef0123";
        assert_ne!(checksum(data), checksum(&data[..19]));
        let mut flipped = *data;
        flipped[3] ^= 1;
        assert_ne!(checksum(data), checksum(&flipped));
    }
}
