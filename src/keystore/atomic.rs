//! Crash-safe file operations of the keystore: the directory lock, atomic writes, and the
//! removal of temporary files left by writers that died.
//!
//! A key file is written to a hidden temporary file in the same directory, fsynced, checked,
//! renamed over its final name, and the directory is fsynced. A crash at any instant leaves
//! the old file or the new one, never a partial one under a visible name.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::Error;

/// Name of the advisory lock file, hidden from the index by its leading dot.
pub const LOCK_FILE: &str = ".lock";
/// Marker in the names of this program's temporary files.
const TMP_MARKER: &str = ".tmp-";

/// Creates `dir` (and missing parents) with mode 0700 if it does not exist.
pub fn ensure_dir(dir: &Path) -> Result<(), Error> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => Ok(()),
        Ok(_) => Err(Error::io(
            dir,
            io::Error::new(io::ErrorKind::AlreadyExists, "not a directory"),
        )),
        Err(_) => fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| Error::io(dir, e)),
    }
}

/// An exclusive advisory lock on the keystore directory, released on drop. Every
/// read-modify-write of the directory (the duplicate check and the rename of an import,
/// the compare-and-swap of a replace) happens under it, across processes.
pub struct DirLock {
    _file: File,
}

impl DirLock {
    pub fn acquire(dir: &Path) -> Result<DirLock, Error> {
        ensure_dir(dir)?;
        let path = dir.join(LOCK_FILE);
        let file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| Error::io(&path, e))?;
        flock(&file, libc::LOCK_EX).map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { _file: file })
    }
}

pub(crate) fn flock(file: &File, op: libc::c_int) -> io::Result<()> {
    loop {
        // SAFETY: flock on a valid, open descriptor.
        let r = unsafe { libc::flock(file.as_raw_fd(), op) };
        if r == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

fn random_suffix() -> u64 {
    let mut b = [0u8; 8];
    getrandom::getrandom(&mut b).expect("operating system random source failed");
    u64::from_le_bytes(b)
}

/// fsync of a directory, so that a rename in it survives a crash.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Writes `bytes` to `final_path` atomically with mode 0600. `check` is called with the bytes
/// read back from the fsynced temporary file before it is renamed; if it fails, the
/// temporary file is removed and nothing visible changes. The caller must hold the
/// [`DirLock`] of the directory.
///
/// Returns `Ok` once the rename has happened: the new file is then in place, so a failure of
/// the directory fsync that follows is logged, not returned (an error would tell the caller
/// that nothing was written).
pub fn write_atomic(
    final_path: &Path,
    bytes: &[u8],
    check: impl FnOnce(&[u8]) -> Result<(), Error>,
) -> Result<(), Error> {
    write_atomic_with(final_path, bytes, check, sync_dir)
}

/// [`write_atomic`] with the directory fsync given, so that its failure can be tested.
fn write_atomic_with(
    final_path: &Path,
    bytes: &[u8],
    check: impl FnOnce(&[u8]) -> Result<(), Error>,
    sync: impl FnOnce(&Path) -> Result<(), Error>,
) -> Result<(), Error> {
    let dir = final_path
        .parent()
        .expect("key file paths have a directory");
    ensure_dir(dir)?;
    let name = final_path
        .file_name()
        .expect("key file paths have a name")
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}{TMP_MARKER}{}", random_suffix()));
    let result = (|| {
        let mut f = OpenOptions::new()
            .write(true)
            .read(true)
            .create_new(true)
            .mode(0o600)
            .open(&tmp)
            .map_err(|e| Error::io(&tmp, e))?;
        // The mode given to open is filtered by the umask; make sure it is exactly 0600.
        f.set_permissions(fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::io(&tmp, e))?;
        f.write_all(bytes).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        drop(f);
        let mut back = Vec::with_capacity(bytes.len());
        File::open(&tmp)
            .and_then(|mut f| f.read_to_end(&mut back))
            .map_err(|e| Error::io(&tmp, e))?;
        check(&back).map_err(|e| Error::ReadBack {
            path: tmp.clone(),
            source: Box::new(e),
        })?;
        fs::rename(&tmp, final_path).map_err(|e| Error::io(final_path, e))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    if let Err(e) = sync(dir) {
        crate::log::warn(
            "Key file written, but its directory could not be synced",
            &[
                ("path", &final_path.display().to_string()),
                ("err", &e.to_string()),
            ],
        );
    }
    Ok(())
}

/// True for the name of a temporary file of [`write_atomic`] (one that a dead writer may have
/// left behind).
pub fn is_temporary(name: &[u8]) -> bool {
    name.first() == Some(&b'.')
        && name
            .windows(TMP_MARKER.len())
            .any(|w| w == TMP_MARKER.as_bytes())
}

/// Removes temporary files that writers of this program left when they died. Only call it
/// under the [`DirLock`]: live writers hold the lock for as long as their temporary file
/// exists, so any such file seen under the lock belongs to a dead writer.
pub fn sweep_temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    let Ok(rd) = fs::read_dir(dir) else {
        return removed;
    };
    for entry in rd.flatten() {
        if is_temporary(entry.file_name().as_bytes()) {
            let p = entry.path();
            if fs::remove_file(&p).is_ok() {
                removed.push(p);
            }
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_failed_directory_sync_after_the_rename_is_not_a_failure() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("key");
        fs::write(&path, b"old").unwrap();
        let failing = |dir: &Path| -> Result<(), Error> {
            Err(Error::io(dir, io::Error::other("injected fsync failure")))
        };
        write_atomic_with(&path, b"new", |_| Ok(()), failing).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(names(d.path()), vec!["key"], "no temporary file is left");
    }

    #[test]
    fn a_failed_check_leaves_the_old_file_and_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("key");
        fs::write(&path, b"old").unwrap();
        let err = write_atomic_with(
            &path,
            b"new",
            |_| Err(Error::InvalidKeyFile("bad".into())),
            |_| panic!("no sync without a rename"),
        )
        .unwrap_err();
        assert!(matches!(err, Error::ReadBack { .. }), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(names(d.path()), vec!["key"]);
    }

    #[test]
    fn temporary_names_are_recognised() {
        assert!(is_temporary(b".UTC--x--ab.tmp-123"));
        assert!(!is_temporary(b"UTC--x--ab.tmp-123"));
        assert!(!is_temporary(b".tmp"));
        assert!(!is_temporary(b".hidden"));
    }
}
