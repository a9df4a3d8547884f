//! The errors of the namespaces, and the one mapping from them to JSON-RPC errors.
//!
//! Handlers return `Result<T, Error>`: a parameter that does not decode is already a
//! JSON-RPC error (-32602 with the rpc layer's text); every domain failure (keystore,
//! crypto, accounts, endpoints; later the chain, the pool and the peers) is a method error,
//! -32000 with the reference's message, which each domain's `Display` gives.

use crate::crypto::CryptoError;
use crate::keystore;
use crate::rpc::RpcError;

/// Every error a handler returns.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Already a JSON-RPC error (bad parameters): passed on as it is.
    #[error("{}", .0.message)]
    Rpc(RpcError),
    #[error(transparent)]
    Keystore(#[from] keystore::Error),
    #[error(transparent)]
    Crypto(#[from] CryptoError),
    #[error(transparent)]
    Account(#[from] AccountError),
    #[error(transparent)]
    Admin(#[from] AdminError),
    #[error(transparent)]
    Chain(#[from] crate::chain::ChainError),
    #[error(transparent)]
    Submit(#[from] crate::chain::SubmitError),
    #[error(transparent)]
    Transaction(#[from] crate::types::transaction::TxError),
    /// A `debug_trace*` failure (the reference's texts).
    #[error(transparent)]
    Trace(#[from] crate::chain::trace::TraceError),
    #[error(transparent)]
    Logs(#[from] crate::chain::logs::LogsError),
    #[error(transparent)]
    Missing(#[from] super::logs::Missing),
    #[error(transparent)]
    Filter(#[from] super::filters::FilterError),
    /// A chain method on a node started without a chain.
    #[error("this node has no chain: start it with --dev, or after chaind init GENESIS.json")]
    NoChain,
}

impl From<RpcError> for Error {
    fn from(e: RpcError) -> Error {
        Error::Rpc(e)
    }
}

impl From<Error> for RpcError {
    /// The one mapping: JSON-RPC errors pass through; every domain error is -32000 with its
    /// text.
    fn from(e: Error) -> RpcError {
        match e {
            Error::Rpc(r) => r,
            other => RpcError::server(other.to_string()),
        }
    }
}

/// Failures of account methods beyond the keystore's own (the reference's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AccountError {
    /// `chain_sign` with an account that is not unlocked.
    #[error("authentication needed: password or unlock")]
    Locked,
    /// `personal_unlockAccount` through a public HTTP or WebSocket endpoint (DECISIONS.md).
    #[error("account unlock with HTTP access is forbidden")]
    InsecureUnlock,
    #[error("unlock duration too large")]
    UnlockDurationTooLarge,
    #[error("protocol scheme missing")]
    SchemeMissing,
    #[error("unknown wallet")]
    UnknownWallet,
    /// Keystore wallets cannot derive accounts.
    #[error("not supported")]
    NotSupported,
    /// A malformed derivation path, with the reference's text.
    #[error("{0}")]
    DerivationPath(String),
    /// A send method's arguments lack a member the transaction needs (`to`, `value`).
    #[error("tx fields should be filled with valid values")]
    TxFields,
    /// An account key that does not decode, with the decoder's text.
    #[error("{0}")]
    Key(String),
    /// Transaction arguments the reference refuses while building the transaction, with its
    /// text (reference 6.3).
    #[error("{0}")]
    Args(String),
}

/// Failures of node-control methods.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AdminError {
    /// `<HTTP|WebSocket> RPC already running on <host>:<port as given>`.
    #[error("{transport} RPC already running on {given}")]
    AlreadyRunning {
        transport: &'static str,
        given: String,
    },
    #[error("{0} RPC not running")]
    NotRunning(&'static str),
    /// The endpoint could not be opened: the listen or resolve error, as the reference
    /// words it (`listen tcp 127.0.0.1:8551: bind: address already in use`).
    #[error("{0}")]
    Open(String),
    #[error("invalid subscription limit {0}: must be at least 1")]
    SubscriptionLimit(i32),
    /// An export or import failure, with its reason.
    #[error("{0}")]
    Chain(String),
    /// The reference's `ErrNodeStopped`.
    #[error("node not started")]
    NodeNotStarted,
    /// A peer method on a node that runs no p2p server.
    #[error("p2p is not running: this node has no chain (start it with --dev, or after chaind init GENESIS.json)")]
    NoP2p,
    /// A peer method's failure, with its text (`invalid kni: ...`).
    #[error("{0}")]
    Peer(String),
    /// An `apis` argument naming a module that exists nowhere, with the known ones.
    #[error("{0}")]
    Modules(String),
}

/// The result type of handlers.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mapping_to_json_rpc_errors() {
        let cases: Vec<(Error, i64, &str)> = vec![
            (
                RpcError::invalid_params("missing value for required argument 0").into(),
                -32602,
                "missing value for required argument 0",
            ),
            (
                keystore::Error::UnknownAccount.into(),
                -32000,
                "unknown account",
            ),
            (
                AccountError::Locked.into(),
                -32000,
                "authentication needed: password or unlock",
            ),
            (
                AdminError::AlreadyRunning {
                    transport: "HTTP",
                    given: "localhost:8551".into(),
                }
                .into(),
                -32000,
                "HTTP RPC already running on localhost:8551",
            ),
            (
                AdminError::NotRunning("WebSocket").into(),
                -32000,
                "WebSocket RPC not running",
            ),
            (
                AdminError::SubscriptionLimit(0).into(),
                -32000,
                "invalid subscription limit 0: must be at least 1",
            ),
            (
                CryptoError::SignatureLength.into(),
                -32000,
                "signature must be 65 bytes long",
            ),
        ];
        for (e, code, message) in cases {
            let r = RpcError::from(e);
            assert_eq!((r.code, r.message.as_str()), (code, message));
        }
    }
}
