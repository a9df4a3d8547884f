//! Where the programs keep their data: the data directory and the keystore inside it, and
//! (in [`atomic`]) the crash-safe file operations that the keystore writes with.

pub mod atomic;

use std::io;
use std::path::{Path, PathBuf};

/// Errors of the data-directory layer: each names the path it concerns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An operation on `path` failed.
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: io::Error },
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
/// defaults to [`default_datadir`].
pub fn keystore_dir(datadir: Option<&Path>, keystore: Option<&Path>) -> PathBuf {
    match keystore {
        Some(k) => k.to_path_buf(),
        None => datadir
            .map(Path::to_path_buf)
            .unwrap_or_else(default_datadir)
            .join("keystore"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keystore_defaults_to_datadir_keystore_and_the_flag_wins() {
        let dd = Path::new("/data/node");
        assert_eq!(keystore_dir(Some(dd), None), dd.join("keystore"));
        assert_eq!(
            keystore_dir(Some(dd), Some(Path::new("/keys"))),
            PathBuf::from("/keys")
        );
        assert_eq!(keystore_dir(None, None), default_datadir().join("keystore"));
    }
}
