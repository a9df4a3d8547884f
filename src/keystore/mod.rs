//! The keystore: a directory of encrypted key files shared by `chain-keytool` and `chaind`.
//!
//! Verbs: [`Keystore::new_account`], [`Keystore::import`], [`Keystore::replace`],
//! [`Keystore::accounts`], [`Keystore::load_key`]. Every write is atomic (see [`atomic`]);
//! every read-modify-write of the directory happens under a cross-process advisory lock;
//! scrypt always runs outside that lock.

pub mod atomic;
mod error;
pub mod index;
pub mod keydata;
pub mod keyfile;
pub mod unlock;

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::SystemTime;

pub use error::Error;
pub use index::{Account, Index};
pub use keydata::KeyData;
pub use keyfile::ScryptParams;

use crate::crypto::{Address, SecretKey};
use atomic::DirLock;

/// A keystore directory with its index.
#[derive(Debug)]
pub struct Keystore {
    dir: PathBuf,
    scrypt: ScryptParams,
    index: Mutex<Index>,
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
            index: Mutex::new(Index::new(&dir)),
            dir,
            scrypt: ScryptParams::STANDARD,
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

    fn index(&self) -> MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The refreshed index, for callers that need more than [`Keystore::accounts`].
    pub fn refreshed_index(&self) -> MutexGuard<'_, Index> {
        let mut idx = self.index();
        idx.refresh();
        idx
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
        let mut paths = self.refreshed_index().find(address);
        match paths.len() {
            0 => Err(Error::NoKey),
            1 => Ok(paths.pop().expect("one path")),
            _ => Err(Error::MultipleKeys(paths)),
        }
    }

    /// True when some key file holds `address`.
    pub fn contains(&self, address: Address) -> bool {
        !self.refreshed_index().find(address).is_empty()
    }

    /// Reads and decrypts the key of `address`. Errors: those of [`Keystore::find`], the
    /// file's read error, its format errors, `could not decrypt key with given passphrase`,
    /// and `key content mismatch` when the file's address is not `address`.
    pub fn load_key(&self, address: Address, passphrase: &str) -> Result<SecretKey, Error> {
        let path = self.find(address)?;
        let bytes = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        decrypt_for(&bytes, address, passphrase)
    }

    /// Creates a random key encrypted with `passphrase` and returns its account.
    pub fn new_account(&self, passphrase: &str) -> Result<Account, Error> {
        let key = SecretKey::random();
        let address = key.address();
        self.write_new(&KeyData { key, address }, passphrase)
    }

    /// Imports `keydata` encrypted with `passphrase` under a new `UTC--...` file. Refuses an
    /// address the keystore already holds with `account already exists`, writing nothing.
    pub fn import(&self, keydata: &KeyData, passphrase: &str) -> Result<Account, Error> {
        if self.contains(keydata.address) {
            return Err(Error::AccountExists);
        }
        self.write_new(keydata, passphrase)
    }

    fn write_new(&self, kd: &KeyData, passphrase: &str) -> Result<Account, Error> {
        // scrypt first, outside every lock.
        let enc = keyfile::encrypt(&kd.key, kd.address, passphrase, self.scrypt);
        let _lock = DirLock::acquire(&self.dir)?;
        atomic::sweep_temporaries(&self.dir);
        if self.contains(kd.address) {
            return Err(Error::AccountExists);
        }
        let path = self.dir.join(key_file_name(SystemTime::now(), kd.address));
        atomic::write_atomic(&path, &enc.json, |back| {
            enc.verify_copy(back, &kd.key, kd.address)
        })?;
        self.index().note_written(&path, kd.address);
        Ok(Account {
            address: kd.address,
            path,
        })
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
        atomic::sweep_temporaries(&self.dir);
        // Compare-and-swap under the lock: the file we checked the old passphrase against
        // must still be the one we replace, and still the only one of its address.
        let still = self.find(address)?;
        let now = fs::read(&path).map_err(|e| Error::io(&path, e))?;
        if still != path || now != before {
            return Err(Error::ChangedDuringReplace(path));
        }
        atomic::write_atomic(&path, &enc.json, |back| {
            enc.verify_copy(back, &keydata.key, address)
        })?;
        self.index().note_written(&path, address);
        Ok(Account { address, path })
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::UNIX_EPOCH;

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
