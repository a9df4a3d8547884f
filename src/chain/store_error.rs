//! What the two files of the chain database share: the hash that keys blocks and trie nodes,
//! and the error of reading or writing either. `db` (the redb file) and `nodelog` (the
//! trie-node file) both import them from here, so neither imports the other's types; `db`
//! re-exports them, and `db::Error` stays the name the rest of the chain uses.

/// A block's, a transaction's or a trie node's Keccak-256 hash.
pub type Hash = [u8; 32];

/// What can go wrong with the chain database.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("chain database {path}: {source}")]
    Open {
        path: String,
        #[source]
        source: redb::DatabaseError,
    },
    #[error(
        "chain database {path} has schema version {found}; this chaind reads version {expected}"
    )]
    Schema {
        path: String,
        found: u32,
        expected: u32,
    },
    #[error("chain database is corrupt: {0}")]
    Corrupt(String),
    #[error("chain database: {0}")]
    Storage(String),
}

pub type Result<T> = std::result::Result<T, Error>;
