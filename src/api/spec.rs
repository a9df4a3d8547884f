//! The one table of every JSON-RPC method the node serves: names, positional parameters and a
//! summary. The node registers a handler for each entry; `chainctl` builds its subcommands,
//! its passphrase handling and the console's completion from the same table.

use crate::rpc::{MethodSpec, ParamKind as K, ParamSpec};

const fn p(name: &'static str, kind: K) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        optional: false,
    }
}

const fn opt(name: &'static str, kind: K) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        optional: true,
    }
}

const fn m(name: &'static str, params: &'static [ParamSpec], summary: &'static str) -> MethodSpec {
    MethodSpec {
        name,
        params,
        summary,
    }
}

/// Every method, grouped by module.
pub static METHODS: &[MethodSpec] = &[
    // admin
    m("admin_datadir", &[], "The node's data directory (absolute path)"),
    m(
        "admin_startHTTP",
        &[opt("host", K::String), opt("port", K::Integer), opt("cors", K::String), opt("apis", K::String), opt("vhosts", K::String)],
        "Open the HTTP endpoint (defaults: localhost, 8551, no CORS, chain,net,rpc, localhost)",
    ),
    m("admin_stopHTTP", &[], "Close the HTTP endpoint"),
    m(
        "admin_startRPC",
        &[opt("host", K::String), opt("port", K::Integer), opt("cors", K::String), opt("apis", K::String), opt("vhosts", K::String)],
        "Deprecated alias of admin_startHTTP",
    ),
    m("admin_stopRPC", &[], "Deprecated alias of admin_stopHTTP"),
    m(
        "admin_startWS",
        &[opt("host", K::String), opt("port", K::Integer), opt("origins", K::String), opt("apis", K::String)],
        "Open the WebSocket endpoint (defaults: localhost, 8552, localhost origins, chain,net,personal)",
    ),
    m("admin_stopWS", &[], "Close the WebSocket endpoint"),
    m(
        "admin_setMaxSubscriptionPerWSConn",
        &[p("limit", K::Integer)],
        "Set the most subscriptions one WebSocket or IPC connection may hold (at least 1)",
    ),
    // chain
    m("chain_accounts", &[], "The addresses of the keystore (same as personal_listAccounts)"),
    m("chain_sign", &[p("address", K::Address), p("message", K::Bytes)], "Sign a message with an unlocked account"),
    m("chain_subscribe", &[p("name", K::String)], "Subscribe to newHeads or newPendingTransactions (WebSocket, IPC)"),
    m("chain_unsubscribe", &[p("id", K::String)], "Cancel a subscription"),
    // net
    m("net_listening", &[], "Whether the node accepts peer connections"),
    m("net_version", &[], "The network id, as a decimal string"),
    // personal
    m("personal_deriveAccount", &[p("url", K::String), p("path", K::String), opt("pin", K::Bool)], "Derive an account of a hierarchical wallet"),
    m("personal_ecRecover", &[p("message", K::Bytes), p("signature", K::Bytes)], "The address that signed a message"),
    m(
        "personal_importRawKey",
        &[p("keydata", K::KeyData), p("passphrase", K::NewPassphrase)],
        "Import a raw private key; returns its address",
    ),
    m("personal_listAccounts", &[], "The addresses of the keystore, sorted by key-file URL"),
    m("personal_listWallets", &[], "The keystore's wallets with their lock status"),
    m("personal_lockAccount", &[p("address", K::Address)], "Drop an unlocked key from memory"),
    m("personal_newAccount", &[p("passphrase", K::NewPassphrase)], "Create a new key; returns its address"),
    m("personal_openWallet", &[p("url", K::String), opt("passphrase", K::Passphrase)], "Open a wallet (a no-op for keystore wallets)"),
    m(
        "personal_replaceRawKey",
        &[p("keydata", K::KeyData), p("oldPassphrase", K::Passphrase), p("newPassphrase", K::NewPassphrase)],
        "Replace the key of an existing account",
    ),
    m("personal_sign", &[p("message", K::Bytes), p("account", K::Address), p("password", K::Passphrase)], "Sign a message with a key file"),
    m(
        "personal_unlockAccount",
        &[p("address", K::Address), p("passphrase", K::Passphrase), opt("duration", K::Integer)],
        "Keep an account's key in memory for duration seconds (default 300, 0 = until shutdown)",
    ),
    // rpc
    m("rpc_modules", &[], "The modules this endpoint offers, each at version 1.0"),
    // web3
    m("web3_clientVersion", &[], "The node's name and version"),
    m("web3_sha3", &[p("data", K::Bytes)], "Keccak-256 of the given bytes"),
];

/// The spec of `name`, if the node serves it.
pub fn find(name: &str) -> Option<&'static MethodSpec> {
    METHODS.iter().find(|m| m.name == name)
}

/// The module names of the table, sorted.
pub fn modules() -> Vec<&'static str> {
    let mut v: Vec<&'static str> = METHODS.iter().map(MethodSpec::module).collect();
    v.dedup();
    v.sort_unstable();
    v.dedup();
    v
}
