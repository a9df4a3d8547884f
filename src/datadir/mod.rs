//! The data directory: every path under it, the lock that keeps a second `chaind` out, and
//! (in [`atomic`]) the crash-safe file operations that the keystore and the chain write with.
//!
//! Layout of `<datadir>` (each name appears here only):
//!
//! ```text
//! keystore/          key files (--keystore moves it)
//! chaindata/         the chain database
//! nodekey            the p2p node key
//! fastcache/         the saved trie-node cache
//! LOCK               flock-ed by the running chaind
//! chaind.ipc         the IPC socket (--ipcpath moves it)
//! dev-account        the developer account of a --dev node
//! chainctl_history   the console's history with chainctl --datadir
//! ```
//!
//! [`DataDir`] only computes paths; nothing is created until [`DataDir::create`] or a write.

pub mod atomic;

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The keystore directory's name in the data directory.
pub const KEYSTORE: &str = "keystore";
/// The chain database's directory name.
pub const CHAINDATA: &str = "chaindata";
/// The p2p node key's file name.
pub const NODEKEY: &str = "nodekey";
/// The saved trie-node cache's directory name.
pub const FASTCACHE: &str = "fastcache";
/// The lock file held by the running `chaind` (see [`DataDir::lock`]).
pub const LOCK: &str = "LOCK";
/// The IPC socket's default file name.
pub const IPC_SOCKET: &str = "chaind.ipc";
/// The file naming the developer account of a `--dev` node.
pub const DEV_ACCOUNT: &str = "dev-account";
/// The console history of `chainctl --datadir`.
pub const CHAINCTL_HISTORY: &str = "chainctl_history";

/// Errors of the data-directory layer: each names the path it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operation on `path` failed.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
    /// The data directory itself could not be created.
    #[error("cannot create data directory {path}: {source}")]
    Create { path: PathBuf, source: io::Error },
    /// Another process (another `chaind`) holds the data directory's [`LOCK`].
    #[error("data directory {0} is in use by another chaind (its LOCK file is held)")]
    InUse(PathBuf),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }
}

/// The per-user data directory (`~/.local/share/chaind` on Linux), from the `directories`
/// crate; `./chaind-data` when the platform reports no home directory.
pub fn default_datadir() -> PathBuf {
    directories::ProjectDirs::from("", "", "chaind")
        .map(|d| d.data_dir().to_path_buf())
        .unwrap_or_else(|| PathBuf::from("chaind-data"))
}

/// The keystore directory: `keystore` if given, else `<datadir>/keystore`, where `datadir`
/// defaults to [`default_datadir`]. Short for [`DataDir::or_default`] +
/// [`DataDir::with_keystore`] + [`DataDir::keystore`].
pub fn keystore_dir(datadir: Option<&Path>, keystore: Option<&Path>) -> PathBuf {
    DataDir::or_default(datadir)
        .with_keystore(keystore)
        .keystore()
}

/// The layout of one data directory: where each of its files lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    root: PathBuf,
    /// `--keystore`: the keystore outside the data directory.
    keystore: Option<PathBuf>,
}

impl Default for DataDir {
    /// The layout of [`default_datadir`].
    fn default() -> DataDir {
        DataDir::new(default_datadir())
    }
}

impl DataDir {
    /// The layout of the data directory `root` (taken as given, relative or not).
    pub fn new(root: impl Into<PathBuf>) -> DataDir {
        DataDir {
            root: root.into(),
            keystore: None,
        }
    }

    /// The layout of `root` if given (`--datadir`), else of [`default_datadir`].
    pub fn or_default(root: Option<&Path>) -> DataDir {
        root.map_or_else(DataDir::default, DataDir::new)
    }

    /// The same layout with the keystore at `keystore` when given (`--keystore`).
    pub fn with_keystore(mut self, keystore: Option<&Path>) -> DataDir {
        self.keystore = keystore.map(Path::to_path_buf);
        self
    }

    /// The data directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The keystore directory: the `--keystore` override, else `<datadir>/keystore`.
    pub fn keystore(&self) -> PathBuf {
        self.keystore
            .clone()
            .unwrap_or_else(|| self.root.join(KEYSTORE))
    }

    /// `<datadir>/chaindata`, the chain database.
    pub fn chaindata(&self) -> PathBuf {
        self.root.join(CHAINDATA)
    }

    /// `<datadir>/nodekey`, the p2p node key.
    pub fn nodekey(&self) -> PathBuf {
        self.root.join(NODEKEY)
    }

    /// `<datadir>/fastcache`, the saved trie-node cache.
    pub fn fastcache(&self) -> PathBuf {
        self.root.join(FASTCACHE)
    }

    /// `<datadir>/LOCK`, the file [`DataDir::lock`] holds.
    pub fn lock_file(&self) -> PathBuf {
        self.root.join(LOCK)
    }

    /// `<datadir>/chaind.ipc`, the default IPC socket.
    pub fn ipc_socket(&self) -> PathBuf {
        self.root.join(IPC_SOCKET)
    }

    /// The IPC socket for `--ipcpath`: [`DataDir::ipc_socket`] when not given; a bare file
    /// name goes into the data directory; anything with a directory part (`./x.ipc`,
    /// `run/x.ipc`, `/tmp/x.ipc`) is taken as given, relative to the working directory when
    /// relative.
    pub fn ipc_path(&self, ipcpath: Option<&Path>) -> PathBuf {
        match ipcpath {
            None => self.ipc_socket(),
            Some(p) if p.components().count() == 1 && !p.is_absolute() => self.root.join(p),
            Some(p) => p.to_path_buf(),
        }
    }

    /// `<datadir>/dev-account`, naming the developer account of a `--dev` node.
    pub fn dev_account(&self) -> PathBuf {
        self.root.join(DEV_ACCOUNT)
    }

    /// `<datadir>/chainctl_history`, the console history of `chainctl --datadir`.
    pub fn chainctl_history(&self) -> PathBuf {
        self.root.join(CHAINCTL_HISTORY)
    }

    /// Creates the data directory (and missing parents) with mode 0700 unless it exists.
    /// Fails with [`Error::Create`] when it cannot be created or is not a directory.
    pub fn create(&self) -> Result<(), Error> {
        atomic::ensure_dir(&self.root).map_err(|e| match e {
            Error::Io { source, .. } => Error::Create {
                path: self.root.clone(),
                source,
            },
            other => other,
        })
    }

    /// Takes the data directory's lock without waiting: the returned guard holds an exclusive
    /// `flock` on `<datadir>/LOCK` (created with mode 0600 if missing) until it is dropped,
    /// and the lock goes with the process if it dies. The directory must exist
    /// ([`DataDir::create`]). Fails with [`Error::InUse`] when another process holds the
    /// lock, with [`Error::Io`] when the lock file cannot be opened or locked.
    pub fn lock(&self) -> Result<DatadirLock, Error> {
        let path = self.lock_file();
        let file = atomic::open_lock_file(&path)?;
        match atomic::flock(&file, libc::LOCK_EX | libc::LOCK_NB) {
            Ok(()) => Ok(DatadirLock { _file: file, path }),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => Err(Error::InUse(self.root.clone())),
            Err(e) => Err(Error::io(path, e)),
        }
    }
}

/// The held lock of a data directory (see [`DataDir::lock`]); dropping it releases the lock.
/// The `LOCK` file stays: its presence means nothing, only its `flock` does.
#[must_use = "the data directory is unlocked when the value is dropped"]
#[derive(Debug)]
pub struct DatadirLock {
    _file: File,
    path: PathBuf,
}

impl DatadirLock {
    /// The lock file held.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_of_the_layout() {
        let dd = DataDir::new("/data/node");
        assert_eq!(dd.root(), Path::new("/data/node"));
        assert_eq!(dd.keystore(), PathBuf::from("/data/node/keystore"));
        assert_eq!(dd.chaindata(), PathBuf::from("/data/node/chaindata"));
        assert_eq!(dd.nodekey(), PathBuf::from("/data/node/nodekey"));
        assert_eq!(dd.fastcache(), PathBuf::from("/data/node/fastcache"));
        assert_eq!(dd.lock_file(), PathBuf::from("/data/node/LOCK"));
        assert_eq!(dd.ipc_socket(), PathBuf::from("/data/node/chaind.ipc"));
        assert_eq!(dd.dev_account(), PathBuf::from("/data/node/dev-account"));
        assert_eq!(
            dd.chainctl_history(),
            PathBuf::from("/data/node/chainctl_history")
        );
        assert_eq!(DataDir::default().root(), default_datadir());
        assert_eq!(DataDir::or_default(None), DataDir::default());
        assert_eq!(DataDir::or_default(Some(Path::new("/data/node"))), dd);
    }

    #[test]
    fn keystore_defaults_to_datadir_keystore_and_the_flag_wins() {
        let dd = Path::new("/data/node");
        let keys = Path::new("/keys");
        assert_eq!(keystore_dir(Some(dd), None), dd.join("keystore"));
        assert_eq!(keystore_dir(Some(dd), Some(keys)), keys);
        assert_eq!(keystore_dir(None, None), default_datadir().join("keystore"));
        let moved = DataDir::new(dd).with_keystore(Some(keys));
        assert_eq!(moved.keystore(), keys);
        // Only the keystore moves.
        assert_eq!(moved.chaindata(), dd.join("chaindata"));
        assert_eq!(
            moved.with_keystore(None).keystore(),
            dd.join("keystore"),
            "None takes the override back"
        );
    }

    #[test]
    fn a_bare_ipc_file_name_goes_into_the_datadir() {
        let dd = DataDir::new("/data/node");
        let ipc = |p: &str| dd.ipc_path(Some(Path::new(p)));
        assert_eq!(dd.ipc_path(None), PathBuf::from("/data/node/chaind.ipc"));
        assert_eq!(ipc("my.ipc"), PathBuf::from("/data/node/my.ipc"));
        // Anything with a directory part is taken as given.
        assert_eq!(ipc("run/my.ipc"), PathBuf::from("run/my.ipc"));
        assert_eq!(ipc("./my.ipc"), PathBuf::from("./my.ipc"));
        assert_eq!(ipc("/tmp/x/my.ipc"), PathBuf::from("/tmp/x/my.ipc"));
        assert_eq!(ipc("/my.ipc"), PathBuf::from("/my.ipc"));
    }

    #[test]
    fn a_second_lock_fails_while_the_first_is_held_and_succeeds_after() {
        let d = tempfile::tempdir().unwrap();
        let dd = DataDir::new(d.path());
        let held = dd.lock().unwrap();
        assert_eq!(held.path(), d.path().join("LOCK"));
        // flock locks belong to the open file, so a second open in this process conflicts
        // exactly as another chaind would.
        let err = dd.lock().unwrap_err();
        assert!(matches!(&err, Error::InUse(p) if p == d.path()), "{err:?}");
        assert_eq!(
            err.to_string(),
            format!(
                "data directory {} is in use by another chaind (its LOCK file is held)",
                d.path().display()
            )
        );
        drop(held);
        let again = dd
            .lock()
            .expect("the lock is released when its guard drops");
        drop(again);
        assert!(
            d.path().join("LOCK").exists(),
            "the file stays; only the lock goes"
        );
    }

    #[test]
    fn locking_a_missing_directory_is_an_io_error() {
        let d = tempfile::tempdir().unwrap();
        let dd = DataDir::new(d.path().join("missing"));
        let err = dd.lock().unwrap_err();
        assert!(
            matches!(&err, Error::Io { path, .. } if *path == dd.lock_file()),
            "{err:?}"
        );
    }

    #[test]
    fn create_makes_a_private_directory_and_names_what_failed() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let dd = DataDir::new(d.path().join("a/node"));
        dd.create().unwrap();
        dd.create().unwrap();
        let mode = std::fs::metadata(dd.root()).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o700);
        let file = d.path().join("file");
        std::fs::write(&file, b"").unwrap();
        let err = DataDir::new(&file).create().unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "cannot create data directory {}: not a directory",
                file.display()
            )
        );
    }
}
