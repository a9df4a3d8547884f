//! Administration and account management for a chain node.
//!
//! Map of the crate:
//! - [`crypto`]: Keccak-256, secp256k1 signing and recovery, addresses, the signed-message hash.
//! - [`datadir`]: every path under the data directory (keystore, `chaindata`, `nodekey`,
//!   `fastcache`, `LOCK`, the IPC socket), the lock that keeps a second `chaind` out, and the
//!   crash-safe file operations (directory lock, atomic writes, sweep of dead writers'
//!   temporaries) that the keystore and the chain write with.
//! - [`keystore`]: key files (v3 written; v1, v3, v4 read), key data, the directory index;
//!   every write atomic, under a cross-process lock.
//! - [`passphrase`]: reading passphrases from a file or a no-echo prompt, never from argv.
//! - [`keytool`]: the `chain-keytool` command (its clap definition and behaviour); the binary
//!   in `src/bin/` only calls it.

pub mod api;
pub mod chainctl;
pub mod clock;
pub mod console;
pub mod crypto;
pub mod datadir;
pub mod events;
pub mod keystore;
pub mod keytool;
pub mod log;
pub mod manpage;
pub mod node;
pub mod passphrase;
pub mod rpc;
pub mod service;
