//! Where the programs keep their data: the data directory and the keystore inside it.

use std::path::{Path, PathBuf};

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
