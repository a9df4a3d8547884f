//! The node key and what derives from it: the node id (the uncompressed public key's X ‖ Y
//! as 128 lower-case hex digits) and the `kni://` URL.
//!
//! The key file holds the 32-byte secret as 64 hex digits (the reference's format), written
//! atomically with mode 0600 when the default `<datadir>/nodekey` is missing. A file named
//! with `--nodekey` must exist.

use std::path::Path;

use zeroize::Zeroizing;

use crate::crypto::SecretKey;
use crate::datadir::atomic;

/// Why the node key could not be had.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    #[error("node key {path}: {why}")]
    Read { path: String, why: String },
    #[error(transparent)]
    Write(#[from] crate::datadir::Error),
}

/// The node's identity. Its key is never shown (`Debug` prints the id only).
pub struct NodeIdentity {
    key: SecretKey,
    id: String,
}

impl std::fmt::Debug for NodeIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeIdentity")
            .field("id", &self.id)
            .finish()
    }
}

/// Parses a node key file's text: 64 hex digits, surrounding white space allowed.
pub fn parse_key(text: &[u8]) -> Result<SecretKey, String> {
    let text = std::str::from_utf8(text).map_err(|_| "not text".to_string())?;
    let hex = text.trim();
    if hex.len() != 64 {
        return Err(format!("{} hex digits, not 64", hex.len()));
    }
    let bytes = Zeroizing::new(hex::decode(hex).map_err(|_| "not hex".to_string())?);
    SecretKey::from_slice(&bytes).map_err(|e| e.to_string())
}

impl NodeIdentity {
    /// The identity of `key`.
    pub fn new(key: SecretKey) -> NodeIdentity {
        let id = hex::encode(key.public_xy());
        NodeIdentity { key, id }
    }

    /// Reads the node key at `path`; when it is missing and `create` is set, makes a new one
    /// there (mode 0600, atomically). Fails when the file cannot be read or holds no valid
    /// key, naming the file.
    pub fn load_or_create(path: &Path, create: bool) -> Result<NodeIdentity, IdentityError> {
        let shown = path.display().to_string();
        match std::fs::read(path) {
            Ok(text) => {
                let text = Zeroizing::new(text);
                let key = parse_key(&text).map_err(|why| IdentityError::Read {
                    path: shown,
                    why: format!("invalid: {why}"),
                })?;
                Ok(NodeIdentity::new(key))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && create => {
                let key = SecretKey::random();
                let text = Zeroizing::new(hex::encode(&key.to_bytes()[..]));
                atomic::write_atomic(path, text.as_bytes(), |_, back| {
                    parse_key(back).map(|_| ()).map_err(|why| {
                        crate::datadir::Error::io(
                            path,
                            std::io::Error::other(format!("written back wrong: {why}")),
                        )
                    })
                })?;
                crate::log::info("Node key created", &[("path", &shown)]);
                Ok(NodeIdentity::new(key))
            }
            Err(e) => Err(IdentityError::Read {
                path: shown,
                why: e.to_string(),
            }),
        }
    }

    /// The address of the node key (the reference's node address).
    pub fn address(&self) -> crate::crypto::Address {
        self.key.address()
    }

    /// The node id: 128 lower-case hex digits, no `0x`.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The node key, for the handshake.
    pub fn key(&self) -> &SecretKey {
        &self.key
    }

    /// `kni://<id>@<ip>:<port>?discport=<discport>`, IPv6 in brackets.
    pub fn kni(&self, addr: std::net::SocketAddr, discport: u16) -> String {
        format!("kni://{}@{addr}?discport={discport}", self.id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_id_is_the_public_key_and_the_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("nodekey");
        let a = NodeIdentity::load_or_create(&path, true).unwrap();
        assert_eq!(a.id().len(), 128);
        assert!(a
            .id()
            .chars()
            .all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let b = NodeIdentity::load_or_create(&path, true).unwrap();
        assert_eq!(a.id(), b.id(), "the same key is read back");
        // The id of a known key: its uncompressed public key (the key 1 gives the generator).
        let one = NodeIdentity::new(
            SecretKey::from_slice(&{
                let mut k = [0u8; 32];
                k[31] = 1;
                k
            })
            .unwrap(),
        );
        assert_eq!(
            one.id(),
            "79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798\
             483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8"
        );
        assert_eq!(
            one.kni("[::]:32323".parse().unwrap(), 0),
            format!("kni://{}@[::]:32323?discport=0", one.id())
        );
        assert!(!format!("{one:?}").contains("0000000000000001"));
    }

    #[test]
    fn a_missing_named_file_and_a_bad_key_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("absent");
        let err = NodeIdentity::load_or_create(&path, false).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("node key {}: ", path.display())),
            "{err}"
        );
        assert!(!path.exists());
        for (text, why) in [
            ("abc", "invalid: 3 hex digits, not 64"),
            (&"zz".repeat(32), "invalid: not hex"),
            (
                &"00".repeat(32),
                "invalid: invalid private key, zero or negative",
            ),
        ] {
            std::fs::write(&path, text).unwrap();
            let err = NodeIdentity::load_or_create(&path, true).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("node key {}: {why}", path.display())
            );
            assert_eq!(
                std::fs::read_to_string(&path).unwrap(),
                text,
                "left as it was"
            );
        }
    }
}
