//! Administration and account management for a chain node.
//!
//! Map of the crate, by layer (each uses only the layers below it; the next issues' `types`,
//! `trie`, `chain` and `p2p` slot in as README's Design section shows):
//!
//! Commands:
//! - [`node`]: `chaind`: configuration (flags and config file), the node built in one pass,
//!   its services started in order and stopped in reverse, the endpoints.
//! - [`chainctl`]: the `chainctl` command, its subcommands derived from [`api::spec`].
//! - [`console`]: the `module.method(args)` parser and the interactive console.
//! - [`keytool`]: the `chain-keytool` command (its clap definition and behaviour).
//! - [`manpage`]: man pages from the clap definitions.
//!
//! Above the transports:
//! - [`api`]: one type per namespace (admin, chain, debug, eth, net, personal, rpc, txpool, web3), each method
//!   declared once with its parameter kinds and handler; typed errors mapped to JSON-RPC
//!   codes in one place.
//!
//! Beside each other, neither importing the other:
//! - [`rpc`]: the dispatcher and the HTTP, WebSocket and IPC transports, subscriptions, the
//!   client; knows no domain.
//! - [`chain`]: the chain database (redb under `<datadir>/chaindata`); next the state, the
//!   transaction pool, sealing and genesis.
//! - [`keystore`]: key files (v3 written; v1, v3, v4 read), key data, the directory index,
//!   unlocked keys; every write atomic, under a cross-process lock.
//!
//! Below:
//! - [`events`]: a bounded broadcast of typed events (new head, pending transaction, peer
//!   added or dropped) that domains publish into; a slow subscriber is cut off.
//! - [`service`]: the lifecycle of background services (named threads, stop flags, joins).
//! - [`metrics`]: the node's counters and gauges (`--metrics`) and the Prometheus endpoint
//!   (`--prometheus`); knows no rpc and no chain: they record into it, the node samples them.
//! - [`trie`]: the Merkle Patricia Trie over a node store by hash (state, roots).
//! - [`types`]: account keys and transactions with their byte-exact encodings; blocks next.
//! - [`crypto`]: Keccak-256, secp256k1 signing and recovery, addresses, the signed-message
//!   hash.
//! - [`datadir`]: every path under the data directory (keystore, `chaindata`, `nodekey`,
//!   `fastcache`, `LOCK`, the IPC socket), the lock that keeps a second `chaind` out, and the
//!   crash-safe file operations that the keystore and the chain write with.
//! - [`passphrase`]: reading passphrases from a file, standard input or a no-echo prompt,
//!   never from argv.
//! - [`log`], [`clock`]: log lines; UTC calendar fields without a date crate.
//! - [`duration`]: durations as text: Go's syntax (RPC parameters) and the options' form.
//! - [`wipe_alloc`]: the global allocator of the binaries, which wipes freed memory.

pub mod api;
pub mod chain;
pub mod chainctl;
pub mod clock;
pub mod console;
pub mod crypto;
pub mod datadir;
pub mod duration;
pub mod events;
pub mod exec;
pub mod keystore;
pub mod keytool;
pub mod log;
pub mod manpage;
pub mod metrics;
pub mod node;
pub mod p2p;
pub mod passphrase;
pub mod rpc;
pub mod service;
pub mod state;
pub mod trie;
pub mod types;
pub mod wipe_alloc;
