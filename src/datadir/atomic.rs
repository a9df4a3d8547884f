//! Crash-safe file operations under the data directory: directories created private, an
//! exclusive directory lock, atomic writes, and the removal of temporary files left by writers
//! that died. The keystore writes its key files with them; the chain will write its files the
//! same way.
//!
//! A file is written to a hidden temporary file in the same directory, fsynced, checked,
//! renamed over its final name, and the directory is fsynced. A crash at any instant leaves
//! the old file or the new one, never a partial one under a visible name: the rename is atomic
//! within one file system (hence the temporary in the same directory), the first fsync makes
//! sure the renamed file has its content, the second that the rename itself is on disk.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use super::Error;

/// Name of the advisory lock file of [`DirLock`], hidden from listings by its leading dot.
pub const LOCK_FILE: &str = ".lock";
/// Marker in the names of this program's temporary files.
const TMP_MARKER: &str = ".tmp-";

/// Creates `dir` (and missing parents) with mode 0700 if it does not exist. Fails with
/// `<dir>: not a directory` when `dir` exists but is something else, or with the error of
/// the creation.
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

/// An exclusive advisory lock on a directory (its [`LOCK_FILE`]), held across processes until
/// the value is dropped. Every read-modify-write of the directory (for the keystore: the
/// duplicate check and the rename of an import, the compare-and-swap of a replace) happens
/// under it.
#[must_use = "the lock is released when the value is dropped"]
#[derive(Debug)]
pub struct DirLock {
    _file: File,
}

impl DirLock {
    /// Creates `dir` if needed ([`ensure_dir`]) and waits until it holds the lock. Fails with
    /// the error of the creation, or of opening or locking the lock file.
    pub fn acquire(dir: &Path) -> Result<DirLock, Error> {
        ensure_dir(dir)?;
        let path = dir.join(LOCK_FILE);
        let file = open_lock_file(&path)?;
        flock(&file, libc::LOCK_EX).map_err(|e| Error::io(&path, e))?;
        Ok(DirLock { _file: file })
    }
}

/// Opens (creating with mode 0600) the lock file at `path`, without truncating it.
pub(crate) fn open_lock_file(path: &Path) -> Result<File, Error> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| Error::io(path, e))
}

/// `flock(2)` with `op` (`LOCK_EX`, `LOCK_SH`, optionally `| LOCK_NB`) on `file`, retried when
/// a signal interrupts it. Fails with the system's error (`WouldBlock` for a held lock under
/// `LOCK_NB`).
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

/// fsync of a directory, so that a rename in it survives a crash. Fails with the error of
/// opening or syncing `dir`.
pub fn sync_dir(dir: &Path) -> Result<(), Error> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| Error::io(dir, e))
}

/// Writes `bytes` to `final_path` atomically with mode 0600, creating its directory if needed
/// ([`ensure_dir`]). `check` is called with the path of the fsynced temporary file and the
/// bytes read back from it before it is renamed; if it fails, the temporary file is removed,
/// nothing visible changes, and its error is returned. The caller must hold the [`DirLock`]
/// of the directory (or another lock that keeps other writers out).
///
/// Returns `Ok` once the rename has happened: the new file is then in place, so a failure of
/// the directory fsync that follows is logged, not returned (an error would tell the caller
/// that nothing was written). Fails with the error of `check`, or of creating, writing,
/// syncing, reading back or renaming the temporary file.
///
/// # Panics
///
/// When `final_path` has no file name or no parent directory.
pub fn write_atomic<E: From<Error>>(
    final_path: &Path,
    bytes: &[u8],
    check: impl FnOnce(&Path, &[u8]) -> Result<(), E>,
) -> Result<(), E> {
    write_atomic_with(final_path, bytes, check, sync_dir)
}

/// [`write_atomic`] with the directory fsync given, so that its failure can be tested.
fn write_atomic_with<E: From<Error>>(
    final_path: &Path,
    bytes: &[u8],
    check: impl FnOnce(&Path, &[u8]) -> Result<(), E>,
    sync: impl FnOnce(&Path) -> Result<(), Error>,
) -> Result<(), E> {
    let dir = final_path
        .parent()
        .expect("atomically written paths have a directory");
    ensure_dir(dir)?;
    let name = final_path
        .file_name()
        .expect("atomically written paths have a name")
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}{TMP_MARKER}{}", random_suffix()));
    let result = (|| -> Result<(), E> {
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
        check(&tmp, &back)?;
        fs::rename(&tmp, final_path).map_err(|e| E::from(Error::io(final_path, e)))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    if let Err(e) = sync(dir) {
        crate::log::warn(
            "File written, but its directory could not be synced",
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

/// Removes temporary files that writers of this program left in `dir` when they died, and
/// returns their paths (a directory that cannot be read, or a file that cannot be removed,
/// is skipped: the next sweep tries again). Only call it under the [`DirLock`]: live writers
/// hold the lock for as long as their temporary file exists, so any such file seen under the
/// lock belongs to a dead writer.
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
        write_atomic_with(&path, b"new", |_, _| Ok::<_, Error>(()), failing).unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(names(d.path()), vec!["key"], "no temporary file is left");
    }

    #[test]
    fn a_failed_check_leaves_the_old_file_and_no_temporary() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("key");
        fs::write(&path, b"old").unwrap();
        let mut checked = None;
        let err = write_atomic_with(
            &path,
            b"new",
            |tmp, back| {
                checked = Some((tmp.to_path_buf(), back.to_vec()));
                Err(Error::io(tmp, io::Error::other("bad")))
            },
            |_| panic!("no sync without a rename"),
        )
        .unwrap_err();
        let (tmp, back) = checked.expect("the check ran");
        assert_eq!(back, b"new", "the check sees the bytes read back");
        assert_eq!(tmp.parent(), Some(d.path()), "in the same directory");
        assert!(is_temporary(tmp.file_name().unwrap().as_bytes()));
        assert_eq!(err.to_string(), format!("{}: bad", tmp.display()));
        assert_eq!(fs::read(&path).unwrap(), b"old");
        assert_eq!(names(d.path()), vec!["key"]);
    }

    #[test]
    fn written_files_and_created_directories_are_private() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("a/b/file");
        write_atomic(&path, b"x", |_, _| Ok::<_, Error>(())).unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&d.path().join("a/b")), 0o700);
        assert_eq!(mode(&d.path().join("a")), 0o700);
    }

    #[test]
    fn a_file_where_a_directory_should_be_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("f");
        fs::write(&f, b"").unwrap();
        let err = ensure_dir(&f).unwrap_err();
        assert_eq!(err.to_string(), format!("{}: not a directory", f.display()));
        assert!(DirLock::acquire(&f).is_err());
    }

    #[test]
    fn temporaries_are_recognised_and_swept() {
        assert!(is_temporary(b".UTC--x--ab.tmp-123"));
        assert!(!is_temporary(b"UTC--x--ab.tmp-123"));
        assert!(!is_temporary(b".tmp"));
        assert!(!is_temporary(b".hidden"));
        let d = tempfile::tempdir().unwrap();
        for n in [".key.tmp-1", "key", ".lock", ".hidden"] {
            fs::write(d.path().join(n), b"").unwrap();
        }
        assert_eq!(
            sweep_temporaries(d.path()),
            vec![d.path().join(".key.tmp-1")]
        );
        assert_eq!(names(d.path()), vec![".hidden", ".lock", "key"]);
    }
}
