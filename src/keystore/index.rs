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
//! trusted.
//!
//! [`Index::refreshed`] reads the directory without changing the index it starts from, so that
//! a shared index (the keystore's) can be scanned outside its lock and the result published
//! under it. A scan also notes whether it saw temporary files of dead writers, so that writers
//! sweep the directory only when there is something to sweep. A key file rewritten in place (same name, no rename) without any change to the
//! directory is only seen at the next full scan; every writer of this ecosystem, this one
//! included, writes key files by rename.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::os::unix::io::{AsRawFd, FromRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::crypto::Address;

use crate::datadir::atomic::{flock, is_temporary};

/// Name of the saved index, hidden from the listing by its leading dot.
pub const CACHE_FILE: &str = ".chain-keystore-index";
/// A scan is trusted only if the directory was last changed at least this long before it.
pub const RACY_WINDOW: Duration = Duration::from_secs(1);
/// Files larger than this are not key files; only this much of them is read.
const MAX_KEY_FILE: u64 = 1 << 20;
const CACHE_MAGIC: &[u8; 8] = b"CKSIDX03";

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

    fn of_stat(st: &libc::stat) -> Stamp {
        Stamp {
            mtime_sec: st.st_mtime,
            mtime_nsec: st.st_mtime_nsec as u32,
            size: st.st_size as u64,
            ino: st.st_ino,
        }
    }
}

/// One file of the directory. Its name lives in the index's arena, so that a listing of
/// 100,000 files makes a handful of allocations, not 100,000.
#[derive(Debug, Clone, Copy)]
struct Entry {
    name_at: u32,
    name_len: u16,
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
    /// File names, back to back; entries point into it.
    names: Vec<u8>,
    /// Sorted by file name, i.e. by URL as the reference orders wallets.
    entries: Vec<Entry>,
    stamp: Option<DirStamp>,
    /// Built on the first look-up by address; reset by every change.
    by_address: OnceLock<HashMap<Address, Vec<usize>>>,
    loaded_cache: bool,
    /// The last scan saw temporary files of [`crate::datadir::atomic::write_atomic`].
    temporaries: bool,
    pub last: RefreshStats,
}

impl Clone for Index {
    /// A copy without the address map, which is rebuilt when needed.
    fn clone(&self) -> Index {
        Index {
            dir: self.dir.clone(),
            names: self.names.clone(),
            entries: self.entries.clone(),
            stamp: self.stamp,
            by_address: OnceLock::new(),
            loaded_cache: self.loaded_cache,
            temporaries: self.temporaries,
            last: self.last,
        }
    }
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
    // Only an object has a top-level `address` member; serde would otherwise read a JSON
    // array into the struct positionally.
    if buf.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return None;
    }
    let mut it = serde_json::Deserializer::from_slice(buf).into_iter::<AddressOnly>();
    let v = it.next()?.ok()?;
    let a = Address::parse_lenient(v.address?.as_ref())?;
    (!a.is_zero()).then_some(a)
}

fn skipped_name(name: &[u8]) -> bool {
    name.first() == Some(&b'.') || name.last() == Some(&b'~')
}

/// An open directory, for `openat`/`fstatat` by bare name: the kernel does not walk the
/// absolute path again for each of 100,000 files.
struct DirFd(RawFd);

impl DirFd {
    fn open(dir: &Path) -> Option<DirFd> {
        let c = CString::new(dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: a valid C string; the descriptor is owned by the returned value.
        let fd = unsafe {
            libc::open(
                c.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        (fd >= 0).then_some(DirFd(fd))
    }

    /// `lstat` of `name`: `None` unless it is a regular file.
    fn stat(&self, name: &CStr) -> Option<Stamp> {
        // SAFETY: `st` is written by fstatat before it is read; the name is a C string.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        let r = unsafe { libc::fstatat(self.0, name.as_ptr(), &mut st, libc::AT_SYMLINK_NOFOLLOW) };
        (r == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFREG).then(|| Stamp::of_stat(&st))
    }

    /// Opens `name` (never following a link, never blocking on a FIFO) and reads its address.
    /// `None` when it is not a regular file; `Some((stamp, None))` when it is one but holds
    /// no usable address or cannot be read.
    fn read(&self, name: &CStr) -> Option<(Stamp, Option<Address>)> {
        // SAFETY: a C string and flags; the descriptor is owned by the File below.
        let fd = unsafe {
            libc::openat(
                self.0,
                name.as_ptr(),
                libc::O_RDONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK,
            )
        };
        if fd < 0 {
            // Unreadable (no permission): known, with no address, until its stamp changes.
            return self.stat(name).map(|s| (s, None));
        }
        // SAFETY: fd is a fresh descriptor we own.
        let f = unsafe { File::from_raw_fd(fd) };
        let meta = f.metadata().ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut buf = Vec::with_capacity((meta.len() as usize).min(MAX_KEY_FILE as usize) + 1);
        let address = f
            .take(MAX_KEY_FILE)
            .read_to_end(&mut buf)
            .ok()
            .and_then(|_| address_of(&buf));
        Some((Stamp::of(&meta), address))
    }
}

impl Drop for DirFd {
    fn drop(&mut self) {
        // SAFETY: closing the descriptor we own.
        unsafe { libc::close(self.0) };
    }
}

impl AsRawFd for DirFd {
    fn as_raw_fd(&self) -> RawFd {
        self.0
    }
}

/// A name found by readdir, and what is known of it from before.
struct Candidate {
    name: CString,
    old: Option<(Stamp, Option<Address>)>,
}

/// What the scan learned of one candidate: its stamp and address, and whether it was read.
type Found = Option<(Stamp, Option<Address>, bool)>;

fn examine(dir: &DirFd, c: &Candidate) -> Found {
    if let Some((old_stamp, old_addr)) = c.old {
        let now = dir.stat(&c.name)?;
        if now == old_stamp {
            return Some((now, old_addr, false));
        }
    }
    dir.read(&c.name).map(|(s, a)| (s, a, true))
}

impl Index {
    pub fn new(dir: impl Into<PathBuf>) -> Index {
        Index {
            dir: dir.into(),
            names: Vec::new(),
            entries: Vec::new(),
            stamp: None,
            by_address: OnceLock::new(),
            loaded_cache: false,
            temporaries: false,
            last: RefreshStats::default(),
        }
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn name(&self, e: &Entry) -> &[u8] {
        &self.names[e.name_at as usize..e.name_at as usize + e.name_len as usize]
    }

    fn path(&self, e: &Entry) -> PathBuf {
        self.dir.join(std::ffi::OsStr::from_bytes(self.name(e)))
    }

    /// Brings the index up to date with the directory (see the module doc for the cost) and
    /// saves it when the directory was read. A missing directory is an empty keystore, not an
    /// error.
    pub fn refresh(&mut self) {
        match self.refreshed() {
            Some(next) => {
                *self = next;
                if self.last.scanned {
                    self.save_cache();
                }
            }
            None => self.last = RefreshStats::default(),
        }
    }

    /// The index as the directory is now, or `None` when this one is still current. Reads
    /// the file system but changes nothing, so it may run while others use `self`; the
    /// caller saves the result ([`Index::save_cache`]) when its `last.scanned` is set.
    pub fn refreshed(&self) -> Option<Index> {
        let meta = match fs::metadata(&self.dir) {
            Ok(m) if m.is_dir() => m,
            _ => {
                if self.entries.is_empty() && self.stamp.is_none() {
                    return None;
                }
                let mut empty = Index::new(&self.dir);
                empty.loaded_cache = self.loaded_cache;
                return Some(empty);
            }
        };
        let (sec, nsec) = (meta.mtime(), meta.mtime_nsec() as u32);
        let unchanged = |s: &Option<DirStamp>| matches!(s, Some(s) if s.trusted && s.mtime_sec == sec && s.mtime_nsec == nsec);
        if unchanged(&self.stamp) {
            return None;
        }
        let mut cached = None;
        if !self.loaded_cache {
            if let Some((stamp, names, entries, temporaries)) = load_cache(&self.dir) {
                let from_cache = Index {
                    dir: self.dir.clone(),
                    names,
                    entries,
                    stamp: Some(stamp),
                    by_address: OnceLock::new(),
                    loaded_cache: true,
                    temporaries,
                    last: RefreshStats::default(),
                };
                if unchanged(&from_cache.stamp) {
                    return Some(from_cache);
                }
                cached = Some(from_cache);
            }
        }
        let base = cached.as_ref().unwrap_or(self);
        match base.full_scan(sec, nsec) {
            Some(next) => Some(next),
            // The directory could not be read: keep what is known.
            None => cached,
        }
    }

    /// Reads the directory (mtime `dir_sec`.`dir_nsec`, taken before the read) and returns
    /// the index it holds, re-reading only files that are new or changed since `self`.
    /// `None` when the directory cannot be read.
    fn full_scan(&self, dir_sec: i64, dir_nsec: u32) -> Option<Index> {
        let (Ok(rd), Some(dirfd)) = (fs::read_dir(&self.dir), DirFd::open(&self.dir)) else {
            return None;
        };
        let old: HashMap<&[u8], (Stamp, Option<Address>)> = self
            .entries
            .iter()
            .map(|e| (self.name(e), (e.stamp, e.address)))
            .collect();
        let mut candidates = Vec::with_capacity(self.entries.len() + 16);
        let mut temporaries = false;
        for de in rd.flatten() {
            let name = de.file_name();
            let bytes = name.as_bytes();
            if skipped_name(bytes) || bytes.len() > u16::MAX as usize {
                temporaries |= is_temporary(bytes);
                continue;
            }
            // d_type from readdir: directories, links and other non-regular files are
            // skipped without a system call (DT_UNKNOWN is settled by fstatat/openat).
            match de.file_type() {
                Ok(t) if t.is_dir() || t.is_symlink() => continue,
                _ => {}
            }
            let Ok(cname) = CString::new(bytes) else {
                continue;
            };
            let old = old.get(bytes).copied();
            candidates.push(Candidate { name: cname, old });
        }
        drop(old);
        let found = examine_all(&dirfd, &candidates);
        let mut last = RefreshStats {
            scanned: true,
            files_read: 0,
        };
        let mut names =
            Vec::with_capacity(candidates.iter().map(|c| c.name.as_bytes().len()).sum());
        let mut entries = Vec::with_capacity(candidates.len());
        let mut order: Vec<usize> = (0..candidates.len()).collect();
        order.sort_unstable_by(|&a, &b| candidates[a].name.cmp(&candidates[b].name));
        for i in order {
            let Some((stamp, address, read)) = found[i] else {
                continue;
            };
            if read {
                last.files_read += 1;
            }
            let n = candidates[i].name.as_bytes();
            entries.push(Entry {
                name_at: names.len() as u32,
                name_len: n.len() as u16,
                stamp,
                address,
            });
            names.extend_from_slice(n);
        }
        let scanned_at = SystemTime::now();
        let dir_time = UNIX_EPOCH + Duration::new(dir_sec.max(0) as u64, dir_nsec);
        let trusted = scanned_at
            .duration_since(dir_time)
            .map(|d| d >= RACY_WINDOW)
            .unwrap_or(false);
        Some(Index {
            dir: self.dir.clone(),
            names,
            entries,
            stamp: Some(DirStamp {
                mtime_sec: dir_sec,
                mtime_nsec: dir_nsec,
                trusted,
            }),
            by_address: OnceLock::new(),
            loaded_cache: true,
            temporaries,
            last,
        })
    }

    /// True when the last scan saw temporary files that a dead writer may have left (under
    /// the keystore's directory lock, no live writer has one).
    pub fn has_temporaries(&self) -> bool {
        self.temporaries
    }

    /// Records a key file this process has just written, so that it is listed at once.
    pub fn note_written(&mut self, path: &Path, address: Address) {
        if let Ok(meta) = fs::symlink_metadata(path) {
            self.note_written_meta(path, &meta, address);
        }
    }

    /// [`Index::note_written`] with the file's metadata already read (so that a shared index
    /// is updated without any I/O under its lock).
    pub fn note_written_meta(&mut self, path: &Path, meta: &fs::Metadata, address: Address) {
        let Some(name) = path.file_name() else { return };
        let name = name.as_bytes();
        let at = self.entries.binary_search_by(|e| self.name(e).cmp(name));
        let entry = Entry {
            name_at: self.names.len() as u32,
            name_len: name.len() as u16,
            stamp: Stamp::of(meta),
            address: Some(address),
        };
        self.names.extend_from_slice(name);
        match at {
            Ok(i) => self.entries[i] = entry,
            Err(i) => self.entries.insert(i, entry),
        }
        // The directory changed under us; the next refresh must look at it.
        if let Some(s) = self.stamp.as_mut() {
            s.trusted = false;
        }
        self.by_address = OnceLock::new();
    }

    /// Every account, sorted by URL. Files that are not key files are left out.
    pub fn accounts(&self) -> Vec<Account> {
        self.entries
            .iter()
            .filter_map(|e| {
                e.address.map(|address| Account {
                    address,
                    path: self.path(e),
                })
            })
            .collect()
    }

    /// The addresses of every account, in the order of [`Index::accounts`], without building
    /// their paths.
    pub fn addresses(&self) -> impl Iterator<Item = Address> + '_ {
        self.entries.iter().filter_map(|e| e.address)
    }

    /// Number of accounts listed.
    pub fn len(&self) -> usize {
        self.addresses().count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key files holding `address`, sorted by path.
    /// True when some key file holds `address` (no paths are built).
    pub fn contains(&self, address: Address) -> bool {
        self.by_address().contains_key(&address)
    }

    fn by_address(&self) -> &HashMap<Address, Vec<usize>> {
        self.by_address.get_or_init(|| {
            let mut m: HashMap<Address, Vec<usize>> = HashMap::new();
            for (i, e) in self.entries.iter().enumerate() {
                if let Some(a) = e.address {
                    m.entry(a).or_default().push(i);
                }
            }
            m
        })
    }

    pub fn find(&self, address: Address) -> Vec<PathBuf> {
        self.by_address()
            .get(&address)
            .map(|idx| idx.iter().map(|&i| self.path(&self.entries[i])).collect())
            .unwrap_or_default()
    }

    /// Saves the index in the directory's cache file, for the next process. Failure (a
    /// read-only keystore) is only a missed cache.
    pub fn save_cache(&self) {
        let Some(stamp) = self.stamp else { return };
        let path = self.dir.join(CACHE_FILE);
        let mut buf = Vec::with_capacity(64 + self.names.len() + self.entries.len() * 56);
        buf.extend_from_slice(CACHE_MAGIC);
        buf.extend_from_slice(&stamp.mtime_sec.to_le_bytes());
        buf.extend_from_slice(&stamp.mtime_nsec.to_le_bytes());
        buf.push(stamp.trusted as u8);
        buf.push(self.temporaries as u8);
        buf.extend_from_slice(&(self.entries.len() as u64).to_le_bytes());
        for e in &self.entries {
            let name = self.name(e);
            buf.extend_from_slice(&(name.len() as u16).to_le_bytes());
            buf.extend_from_slice(name);
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

/// Examines every candidate (a `stat` for known names, an open and read for new or changed
/// ones), on a few threads when there are many: a cold start of a large keystore is
/// dominated by system calls.
fn examine_all(dir: &DirFd, candidates: &[Candidate]) -> Vec<Found> {
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8);
    if candidates.len() < 512 || threads == 1 {
        return candidates.iter().map(|c| examine(dir, c)).collect();
    }
    let chunk = candidates.len().div_ceil(threads);
    std::thread::scope(|s| {
        let handles: Vec<_> = candidates
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || part.iter().map(|c| examine(dir, c)).collect::<Vec<Found>>())
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("index scanner panicked"))
            .collect()
    })
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
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }
}

/// Reads the saved index: its stamp, the name arena (the file's own bytes, so names are not
/// copied), the entries, and whether its scan saw temporary files.
fn load_cache(dir: &Path) -> Option<(DirStamp, Vec<u8>, Vec<Entry>, bool)> {
    let mut f = File::open(dir.join(CACHE_FILE)).ok()?;
    flock(&f, libc::LOCK_SH).ok()?;
    let mut buf = Vec::new();
    f.read_to_end(&mut buf).ok()?;
    drop(f);
    if buf.len() < CACHE_MAGIC.len() + 8
        || &buf[..8] != CACHE_MAGIC
        || buf.len() > u32::MAX as usize
    {
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
    let temporaries = r.u8()? == 1;
    let count = r.u64()? as usize;
    let mut entries = Vec::with_capacity(count.min(body.len() / 40));
    let mut prev: Option<&[u8]> = None;
    for _ in 0..count {
        let len = r.u16()?;
        let name_at = r.pos as u32;
        let name = r.take(len as usize)?;
        // Names must come sorted and be ones a scan would keep; anything else is damage.
        if skipped_name(name) || name.contains(&0) || prev.is_some_and(|p| p >= name) {
            return None;
        }
        prev = Some(name);
        let stamp = Stamp {
            mtime_sec: r.i64()?,
            mtime_nsec: r.u32()?,
            size: r.u64()?,
            ino: r.u64()?,
        };
        let address = match r.u8()? {
            1 => Some(Address(r.array()?)),
            0 => None,
            _ => return None,
        };
        entries.push(Entry {
            name_at,
            name_len: len,
            stamp,
            address,
        });
    }
    if r.pos != body.len() {
        return None;
    }
    Some((stamp, buf, entries, temporaries))
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
        assert!(address_of(br#"["819104a190255e0cedbdd9d5f59a557633d79db1"]"#).is_none());
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
