use std::path::{Path, PathBuf};

use crate::crypto::CryptoError;

/// Errors of the keystore. The messages documented by the reference are reproduced exactly.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid hex string")]
    InvalidHex,
    #[error("Chain wallet key type must be 00.")]
    WalletKeyType,
    #[error("invalid wallet key: {0}")]
    InvalidWalletKey(String),
    #[error(transparent)]
    Key(#[from] CryptoError),
    /// A key file decrypted to bytes that are not a valid key (same messages as [`Error::Key`]).
    #[error(transparent)]
    KeyFileKey(CryptoError),
    #[error("account already exists")]
    AccountExists,
    #[error("unknown account")]
    UnknownAccount,
    #[error("no key for given address or file")]
    NoKey,
    #[error("multiple keys match address ({})", .0.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    MultipleKeys(Vec<PathBuf>),
    #[error("could not decrypt key with given passphrase")]
    WrongPassphrase,
    #[error("key content mismatch: have account {have}, want {want}")]
    KeyContentMismatch { have: String, want: String },
    #[error("undefined version: {0}")]
    UndefinedVersion(String),
    #[error("undefined type of version: {0}")]
    UndefinedVersionType(String),
    #[error("Cipher not supported: {0}")]
    CipherNotSupported(String),
    #[error("Unsupported KDF: {0}")]
    UnsupportedKdf(String),
    #[error("Unsupported PBKDF2 PRF: {0}")]
    UnsupportedPrf(String),
    #[error("key file holds no key")]
    NoKeyInFile,
    #[error("invalid key file: {0}")]
    InvalidKeyFile(String),
    #[error("keystore file corrupted: {path}: {source}")]
    ReadBack { path: PathBuf, source: Box<Error> },
    #[error("key file {0} changed while it was being replaced; nothing was written, try again")]
    ChangedDuringReplace(PathBuf),
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// A failure of the keystore directory's lock or of an atomic write
    /// ([`crate::datadir::atomic`]); same messages as [`Error::Io`].
    #[error(transparent)]
    Datadir(#[from] crate::datadir::Error),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error::Io {
            path: path.into(),
            source,
        }
    }

    /// The read-back check of the temporary file at `tmp` found `source`: the written copy
    /// is not what was meant, so nothing was renamed into place.
    pub(crate) fn read_back(tmp: &Path, source: Error) -> Error {
        Error::ReadBack {
            path: tmp.to_path_buf(),
            source: Box::new(source),
        }
    }

    /// True when the error lies in what the caller gave (malformed key data), as opposed to
    /// the state of the keystore or a wrong passphrase. Command-line tools exit 2 for these.
    pub fn is_bad_input(&self) -> bool {
        matches!(
            self,
            Error::InvalidHex | Error::WalletKeyType | Error::InvalidWalletKey(_) | Error::Key(_)
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_errors_keep_their_messages() {
        let tmp = Path::new("/ks/.UTC--x.tmp-1");
        let e = Error::read_back(tmp, Error::InvalidKeyFile("bad".into()));
        assert_eq!(
            e.to_string(),
            "keystore file corrupted: /ks/.UTC--x.tmp-1: invalid key file: bad"
        );
        let io = || std::io::Error::other("disk on fire");
        let from_datadir = Error::from(crate::datadir::Error::io("/ks/.lock", io()));
        assert_eq!(
            from_datadir.to_string(),
            Error::io("/ks/.lock", io()).to_string()
        );
        assert_eq!(from_datadir.to_string(), "/ks/.lock: disk on fire");
    }
}
