//! The keystore: a directory of encrypted key files shared by `chain-keytool` and `chaind`.
//!
//! Verbs: [`Keystore::new_account`], [`Keystore::import`], [`Keystore::replace`],
//! [`Keystore::accounts`], [`Keystore::load_key`]. Every write is atomic (see
//! [`crate::datadir::atomic`]);
//! every read-modify-write of the directory happens under a cross-process advisory lock;
//! scrypt always runs outside that lock.
//!
//! The index is shared as an immutable snapshot: a refresh reads the directory outside the
//! in-process lock and publishes its result under it, so no caller waits for another's scan
//! of a large directory just to read the index.

mod error;
pub mod index;
pub mod keydata;
pub mod keyfile;
pub mod unlock;

use std::fs;
use std::ops::Deref;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

pub use error::Error;
pub use index::{Account, Index, RefreshStats};
pub use keydata::KeyData;
pub use keyfile::ScryptParams;

use crate::crypto::{Address, SecretKey};
use crate::datadir::atomic::{self, DirLock};

/// A keystore directory with its index.
#[derive(Debug)]
pub struct Keystore {
    dir: PathBuf,
    scrypt: ScryptParams,
    /// The published index. Held only to clone or replace the `Arc`: never across I/O.
    index: Mutex<Arc<Index>>,
    /// When the directory was last compared with the published index, in nanoseconds since
    /// `opened` (see [`Keystore::contains_within`]).
    checked: AtomicU64,
    opened: Instant,
}

/// A refreshed index: a snapshot that later changes do not alter, and what its refresh cost.
#[derive(Debug, Clone)]
pub struct Refreshed {
    index: Arc<Index>,
    /// What this refresh did (nothing, when the published index was still current).
    pub last: RefreshStats,
}

impl Deref for Refreshed {
    type Target = Index;
    fn deref(&self) -> &Index {
        &self.index
    }
}

/// `UTC--<YYYY-MM-DDTHH-MM-SS.NNNNNNNNNZ>--<40 hex address>`, the reference's key file name.
pub fn key_file_name(time: SystemTime, address: Address) -> String {
    let t = crate::clock::UtcTime::from(time);
    format!(
        "UTC--{:04}-{:02}-{:02}T{:02}-{:02}-{:02}.{:09}Z--{}",
        t.year,
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        t.nanos,
        address.to_hex()
    )
}

impl Keystore {
    /// Opens the keystore at `dir` (made absolute against the current directory). The
    /// directory is created with mode 0700 on the first write, not here.
    pub fn open(dir: impl AsRef<Path>) -> Result<Keystore, Error> {
        let dir = std::path::absolute(dir.as_ref()).map_err(|e| Error::io(dir.as_ref(), e))?;
        Ok(Keystore {
            index: Mutex::new(Arc::new(Index::new(&dir))),
            dir,
            scrypt: ScryptParams::STANDARD,
            checked: AtomicU64::new(0),
            opened: Instant::now(),
        })
    }

    /// Uses `params` for the key files this keystore writes.
    pub fn with_scrypt(mut self, params: ScryptParams) -> Keystore {
        self.scrypt = params;
        self
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    fn slot(&self) -> MutexGuard<'_, Arc<Index>> {
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn published(&self) -> Arc<Index> {
        Arc::clone(&self.slot())
    }

    /// The index brought up to date with the directory, for callers that need more than
    /// [`Keystore::accounts`]. The directory is read and the saved index written outside the
    /// in-process lock; the result is published under it unless another refresh or a write
    /// of this process published first (then the next refresh reconciles the two: a write
    /// leaves the index untrusted, so it is scanned again).
    pub fn refreshed_index(&self) -> Refreshed {
        let current = self.published();
        let started = self.opened.elapsed().as_nanos() as u64;
        let refreshed = current.refreshed();
        self.checked.fetch_max(started.max(1), Ordering::Relaxed);
        let Some(next) = refreshed else {
            return Refreshed {
                index: current,
                last: RefreshStats::default(),
            };
        };
        let next = Arc::new(next);
        {
            let mut slot = self.slot();
            if Arc::ptr_eq(&slot, &current) {
                *slot = Arc::clone(&next);
            }
        }
        if next.last.scanned {
            next.save_cache();
        }
        Refreshed {
            last: next.last,
            index: next,
        }
    }

    /// Records a key file this process has just written. The copy is made outside the lock;
    /// under it only the `Arc` is swapped (retried if a refresh published meanwhile).
    fn note_written(&self, path: &Path, address: Address) {
        let Ok(meta) = fs::symlink_metadata(path) else {
            return;
        };
        loop {
            let current = self.published();
            let mut next = Index::clone(&current);
            next.note_written_meta(path, &meta, address);
            let mut slot = self.slot();
            if Arc::ptr_eq(&slot, &current) {
                *slot = Arc::new(next);
                return;
            }
        }
    }

    /// Every account, sorted by key-file URL, after noticing changes made by other processes.
    pub fn accounts(&self) -> Vec<Account> {
        self.refreshed_index().accounts()
    }

    /// The address of every account, sorted by key-file URL, without building file paths.
    pub fn addresses(&self) -> Vec<Address> {
        self.refreshed_index().addresses().collect()
    }

    /// The one key file of `address`: `no key for given address or file`, or
    /// `multiple keys match address (...)`.
    pub fn find(&self, address: Address) -> Result<PathBuf, Error> {
        the_one(self.refreshed_index().find(address))
    }

    /// True when some key file holds `address`.
    pub fn contains(&self, address: Address) -> bool {
        self.refreshed_index().contains(address)
    }

    /// [`Keystore::contains`] for hot paths (`chain_sign`): the directory is looked at again
    /// only when it was last compared with the index more than `max_age` ago, so a key file
    /// removed by another process is noticed within `max_age` (the reference's account cache
    /// also notices such changes after a delay: its watcher's, or its 2 s reload interval).
    pub fn contains_within(&self, address: Address, max_age: Duration) -> bool {
        let checked = self.checked.load(Ordering::Relaxed);
        let now = self.opened.elapsed().as_nanos() as u64;
        if checked != 0 && now.saturating_sub(checked) < max_age.as_nanos() as u64 {
            return self.published().contains(address);
        }
        self.contains(address)
    }

    /// Reads and decrypts the key of `address`. Errors: those of [`Keystore::find`], the
    /// file's read error, its format errors, `could not decrypt key with given passphrase`,
    /// and `key content mismatch` when the file's address is not `address`.
    pub fn load_key(&self, address: Address, passphrase: &str) -> Result<SecretKey, Error> {
        load_key_file(&self.find(address)?, address, passphrase)
    }

    /// Creates a random key encrypted with `passphrase` and returns its account.
    pub fn new_account(&self, passphrase: &str) -> Result<Account, Error> {
        self.new_account_with(passphrase, self.scrypt)
    }

    /// [`Keystore::new_account`] with the scrypt parameters `params` instead of the
    /// keystore's (the developer account of `--dev`: [`ScryptParams::DEV`]).
    pub fn new_account_with(
        &self,
        passphrase: &str,
        params: ScryptParams,
    ) -> Result<Account, Error> {
        let key = SecretKey::random();
        let address = key.address();
        self.write_new(&KeyData { key, address }, passphrase, params)
    }

    /// Imports `keydata` encrypted with `passphrase` under a new `UTC--...` file. Refuses an
    /// address the keystore already holds with `account already exists`, writing nothing.
    /// The index is read twice: before scrypt, so that a duplicate costs no derivation, and
    /// under the directory lock, where the answer is final.
    pub fn import(&self, keydata: &KeyData, passphrase: &str) -> Result<Account, Error> {
        if self.contains(keydata.address) {
            return Err(Error::AccountExists);
        }
        self.write_new(keydata, passphrase, self.scrypt)
    }

    fn write_new(
        &self,
        kd: &KeyData,
        passphrase: &str,
        params: ScryptParams,
    ) -> Result<Account, Error> {
        // scrypt first, outside every lock.
        let enc = keyfile::encrypt(&kd.key, kd.address, passphrase, params);
        let _lock = DirLock::acquire(&self.dir)?;
        let idx = self.refreshed_index();
        if !idx.find(kd.address).is_empty() {
            return Err(Error::AccountExists);
        }
        self.sweep_if_needed(&idx);
        drop(idx);
        let path = self.dir.join(key_file_name(SystemTime::now(), kd.address));
        atomic::write_atomic(&path, &enc.json, |tmp, back| {
            enc.verify_copy(back, &kd.key, kd.address)
                .map_err(|e| Error::read_back(tmp, e))
        })?;
        self.note_written(&path, kd.address);
        Ok(Account {
            address: kd.address,
            path,
        })
    }

    /// Removes dead writers' temporary files when the scan under the directory lock saw some
    /// (the scan reads every name anyway, so a write costs no extra directory read).
    fn sweep_if_needed(&self, idx: &Index) {
        if idx.has_temporaries() {
            atomic::sweep_temporaries(&self.dir);
        }
    }

    /// `personal_replaceRawKey`: the key file of `keydata`'s address, decrypted with
    /// `old_passphrase`, is rewritten in place (same name) with `keydata`'s key under
    /// `new_passphrase`. Atomic; on any failure nothing changes.
    pub fn replace(
        &self,
        keydata: &KeyData,
        old_passphrase: &str,
        new_passphrase: &str,
    ) -> Result<Account, Error> {
        let address = keydata.address;
        let path = self.find(address)?;
        let before = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        drop(decrypt_for(&before, address, old_passphrase)?);
        let enc = keyfile::encrypt(&keydata.key, address, new_passphrase, self.scrypt);
        let _lock = DirLock::acquire(&self.dir)?;
        // Compare-and-swap under the lock: the file we checked the old passphrase against
        // must still be the one we replace, and still the only one of its address.
        let idx = self.refreshed_index();
        let still = the_one(idx.find(address))?;
        self.sweep_if_needed(&idx);
        drop(idx);
        let now = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        if still != path || now != before {
            return Err(Error::ChangedDuringReplace(path));
        }
        atomic::write_atomic(&path, &enc.json, |tmp, back| {
            enc.verify_copy(back, &keydata.key, address)
                .map_err(|e| Error::read_back(tmp, e))
        })?;
        self.note_written(&path, address);
        Ok(Account { address, path })
    }
}

/// The only path of `paths`: `no key for given address or file` when there is none,
/// `multiple keys match address (...)` when there are several.
fn the_one(mut paths: Vec<PathBuf>) -> Result<PathBuf, Error> {
    match paths.len() {
        0 => Err(Error::NoKey),
        1 => Ok(paths.pop().expect("one path")),
        _ => Err(Error::MultipleKeys(paths)),
    }
}

/// Reads the key file at `path` (found with [`Keystore::find`]) and decrypts it for
/// `address`. Errors: the file's read error, then those of [`decrypt_for`].
pub fn load_key_file(path: &Path, address: Address, passphrase: &str) -> Result<SecretKey, Error> {
    let bytes = fs::read(path).map_err(|e| Error::io(path, e))?;
    decrypt_for(&bytes, address, passphrase)
}

/// Decrypts key-file `bytes` with `passphrase` and checks that the file holds `address`.
pub fn decrypt_for(bytes: &[u8], address: Address, passphrase: &str) -> Result<SecretKey, Error> {
    let file = keyfile::parse(bytes)?;
    let key = file.decrypt(passphrase)?;
    let have = file.address.unwrap_or_default();
    if have != address {
        return Err(Error::KeyContentMismatch {
            have: have.to_hex(),
            want: address.to_hex(),
        });
    }
    Ok(key)
}

/// How often the keystore watch looks at the directory: well within
/// `api::chain::KEYSTORE_RECHECK`, so that calls on the hot path never do.
pub const WATCH_INTERVAL: Duration = Duration::from_millis(500);

/// The `keystore-watch` service: a thread that brings the index up to date with the
/// directory every [`WATCH_INTERVAL`], so that key files added or removed by other processes
/// (`chain-keytool`) are noticed without a call having to look.
pub struct WatchService {
    keystore: Arc<Keystore>,
    worker: Option<crate::service::Worker>,
}

impl WatchService {
    pub fn new(keystore: Arc<Keystore>) -> WatchService {
        WatchService {
            keystore,
            worker: None,
        }
    }
}

impl crate::service::Service for WatchService {
    fn name(&self) -> &'static str {
        "keystore-watch"
    }

    fn start(&mut self) -> Result<(), String> {
        let ks = self.keystore.clone();
        self.worker = Some(crate::service::Worker::periodic(
            "keystore-watch",
            WATCH_INTERVAL,
            move || {
                ks.refreshed_index();
            },
        )?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    const TINY: ScryptParams = ScryptParams {
        log_n: 4,
        r: 8,
        p: 1,
    };

    #[test]
    fn a_held_index_snapshot_blocks_no_other_call() {
        let d = tempfile::tempdir().unwrap();
        let ks = Keystore::open(d.path().join("keystore"))
            .unwrap()
            .with_scrypt(TINY);
        let first = ks.new_account("").unwrap();
        // Run in a thread: were the index's lock held by `held`, the calls below would wait
        // for it forever; the channel turns that into a failure.
        let (tx, rx) = std::sync::mpsc::channel();
        let worker = std::thread::spawn(move || {
            let held = ks.refreshed_index();
            assert_eq!(held.len(), 1);
            let second = ks.new_account("").unwrap();
            let other = KeyData {
                key: SecretKey::random(),
                address: first.address,
            };
            assert!(matches!(ks.import(&other, ""), Err(Error::AccountExists)));
            ks.replace(&other, "", "x").unwrap();
            assert_eq!(ks.accounts().len(), 2);
            assert!(ks.contains(second.address));
            // The snapshot is what it was when taken.
            assert_eq!(held.len(), 1);
            assert_eq!(held.addresses().collect::<Vec<_>>(), vec![first.address]);
            tx.send(()).unwrap();
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("keystore calls waited for a held index snapshot");
        worker.join().unwrap();
    }

    #[test]
    fn writes_of_one_handle_are_seen_by_another() {
        let d = tempfile::tempdir().unwrap();
        let dir = d.path().join("keystore");
        let a = Keystore::open(&dir).unwrap().with_scrypt(TINY);
        let b = Keystore::open(&dir).unwrap().with_scrypt(TINY);
        assert!(b.accounts().is_empty());
        let acct = a.new_account("pw").unwrap();
        assert_eq!(b.find(acct.address).unwrap(), acct.path);
        assert_eq!(
            *b.load_key(acct.address, "pw").unwrap().to_bytes(),
            *a.load_key(acct.address, "pw").unwrap().to_bytes()
        );
        let kd = KeyData {
            key: SecretKey::random(),
            address: acct.address,
        };
        assert!(matches!(b.import(&kd, "pw"), Err(Error::AccountExists)));
    }

    #[test]
    fn key_file_names_follow_the_reference_pattern() {
        let a: Address = "0x7ef5a6135f1fd6a02593eedc869c6d41d934aef8"
            .parse()
            .unwrap();
        let t = UNIX_EPOCH + std::time::Duration::new(1_458_651_475, 920_751_759);
        assert_eq!(
            key_file_name(t, a),
            "UTC--2016-03-22T12-57-55.920751759Z--7ef5a6135f1fd6a02593eedc869c6d41d934aef8"
        );
        let t = UNIX_EPOCH + std::time::Duration::new(951_782_400, 5); // 2000-02-29
        assert!(key_file_name(t, a).starts_with("UTC--2000-02-29T00-00-00.000000005Z--"));
    }
}
