//! Our `chaind --dev` and anvil side by side, for the benches that compare them
//! (`contracts.rs`, `eth.rs`): both started with the same chain id and a funder holding
//! `u128::MAX`, the ERC-20 `Token` (tests/contracts) deployed and its holders given tokens
//! and coin by the same signed transactions on both, and the client's view of a node: its
//! endpoint, its head, and whether transactions have receipts with status 1.
//!
//! The bench that includes this file declares at its root `mod common` (tests/common),
//! `mod conn`, `mod foundry` and `mod stats` (benches/support).

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use serde_json::{json, Value};

use crate::common;
use crate::common::contracts::{addr_word, create_address, legacy_tx, uint_word, Compiled};
use crate::conn::{request, Conn};
use crate::foundry::Anvil;

pub const CHAIN_ID: u64 = 1000;
/// Holders funded per `batchTransfer`, and its gas (about 26,000 a new holder, 100 a byte).
const BATCH: usize = 200;
const BATCH_GAS: u64 = 8_000_000;
/// Tokens each holder gets; the supply minted to the funder.
pub const HOLDER_TOKENS: u128 = 1_000_000_000_000_000_000_000_000;
const SUPPLY: u128 = u128::MAX / 2;
/// Native coin each holder gets for gas (100 coins: 40,000 transfers at the full limit).
const HOLDER_COIN: u128 = 100_000_000_000_000_000_000;
/// Receipts asked for in one JSON-RPC batch.
pub const RECEIPT_BATCH: usize = 200;

/// anvil's flags beside the port: one-second blocks, the EVM this chain runs (Cancun), no
/// base fee, a block gas limit that never binds, our chain id, one account, and no line
/// printed per transaction.
pub const ANVIL_ARGS: &[&str] = &[
    "--chain-id",
    "1000",
    "--block-time",
    "1",
    "--hardfork",
    "cancun",
    "--base-fee",
    "0",
    "--gas-limit",
    "1000000000000",
    "--accounts",
    "1",
    "--silent",
];

/// The key that deploys the token and funds the holders.
pub fn funder() -> SecretKey {
    SecretKey::from_slice(&[0xf1; 32]).unwrap()
}

/// One node's JSON-RPC endpoint: where, the prefix of the methods the bench calls on it
/// (`chain` or `eth`) and its pid.
pub struct Endpoint {
    pub name: &'static str,
    pub addr: String,
    pub prefix: &'static str,
    pub pid: u32,
    /// anvil (which gets the requests prepared for it), or ours.
    pub anvil: bool,
}

impl Endpoint {
    pub fn body(&self, method: &str, params: &Value) -> String {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
    }

    /// One call over a fresh connection.
    pub fn call(&self, method: &str, params: Value) -> Value {
        self.raw(&self.body(method, &params))
    }

    /// `{prefix}_method` over a fresh connection.
    pub fn call_p(&self, method: &str, params: Value) -> Value {
        self.call(&format!("{}_{method}", self.prefix), params)
    }

    pub fn raw(&self, body: &str) -> Value {
        let mut c = Conn::new(&self.addr);
        serde_json::from_slice(&c.roundtrip(&request(body))).unwrap()
    }

    /// The head's number, asked over `c`.
    pub fn head(&self, c: &mut Conn) -> u64 {
        let v: Value = serde_json::from_slice(&c.roundtrip(&request(
            &self.body(&format!("{}_blockNumber", self.prefix), &json!([])),
        )))
        .unwrap();
        common::quantity_of(&v["result"]) as u64
    }

    /// Runs `f` with this node stopped (SIGSTOP, then SIGCONT): the node not being measured
    /// takes no CPU meanwhile (anvil seals an empty block every second when idle).
    pub fn paused<T>(&self, f: impl FnOnce() -> T) -> T {
        // SAFETY: signals to our own child.
        unsafe { libc::kill(self.pid as i32, libc::SIGSTOP) };
        let out = f();
        unsafe { libc::kill(self.pid as i32, libc::SIGCONT) };
        out
    }

    /// CPU seconds (user + system, all threads) the node has used so far.
    pub fn cpu(&self) -> f64 {
        crate::stats::proc_cpu(self.pid)
    }
}

/// The two nodes running: ours (a genesis written by `chaind init` funding the funder,
/// sealed by its validator with `--dev`) and anvil ([`ANVIL_ARGS`], the funder's balance
/// set with `anvil_setBalance`).
pub struct Pair {
    pub ours_node: common::Node,
    pub anvil_proc: Anvil,
    pub ours: Endpoint,
    pub anvil: Endpoint,
    /// Our genesis file (for a fresh data directory of the same chain).
    pub genesis: PathBuf,
}

impl Pair {
    /// Starts both in `work`; ours serves `apis` over HTTP and is called with the methods of
    /// `ours_prefix`.
    pub fn start(work: &Path, anvil_bin: &Path, apis: &str, ours_prefix: &'static str) -> Pair {
        let funder = funder();
        let genesis = work.join("genesis.json");
        let (ours_dir, validator) = validator_dir(work);
        std::fs::write(
            &genesis,
            json!({
                "config": {"chainId": CHAIN_ID},
                "validator": format!("0x{}", hex::encode(validator.0)),
                "alloc": {
                    format!("0x{}", hex::encode(validator.0)): {"balance": "0x1"},
                    format!("0x{}", hex::encode(funder.address().0)): {"balance": format!("0x{:x}", u128::MAX)},
                }
            })
            .to_string(),
        )
        .unwrap();
        init(ours_dir.path(), &genesis);
        let mut ours_args = vec!["--dev", "--ipcdisable"];
        ours_args.extend(common::http_args(apis));
        let ours_node = common::Node::start_in(ours_dir, &ours_args);
        let ours = Endpoint {
            name: "ours",
            addr: addr_of(ours_node.http.as_ref().unwrap()),
            prefix: ours_prefix,
            pid: ours_node.child.id(),
            anvil: false,
        };
        let anvil_proc = Anvil::start(anvil_bin, &work.join("anvil.log"), ANVIL_ARGS);
        let anvil = Endpoint {
            name: "anvil",
            addr: anvil_proc.addr.clone(),
            prefix: "eth",
            pid: anvil_proc.child.id(),
            anvil: true,
        };
        let set = anvil.call(
            "anvil_setBalance",
            json!([
                format!("0x{}", hex::encode(funder.address().0)),
                format!("0x{:x}", u128::MAX)
            ]),
        );
        assert!(set.get("error").is_none(), "{set}");
        for ep in [&ours, &anvil] {
            let method = if ep.prefix == "chain" {
                "chain_chainID"
            } else {
                "eth_chainId"
            };
            let id = ep.call(method, json!([]));
            println!(
                "  {} at {} (pid {}), chain id {}",
                ep.name, ep.addr, ep.pid, id["result"]
            );
        }
        Pair {
            ours_node,
            anvil_proc,
            ours,
            anvil,
            genesis,
        }
    }
}

fn addr_of(url: &str) -> String {
    url.trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

/// A keystore with one validator key (empty passphrase) in a fresh data directory.
fn validator_dir(work: &Path) -> (tempfile::TempDir, Address) {
    let dir = tempfile::TempDir::new_in(work).unwrap();
    let ks = chain_node::keystore::Keystore::open(dir.path().join("keystore"))
        .unwrap()
        .with_scrypt(chain_node::keystore::keyfile::ScryptParams::LIGHT);
    let v = ks.new_account("").unwrap().address;
    (dir, v)
}

/// `chaind init GENESIS` in `dir`.
pub fn init(dir: &Path, genesis: &Path) {
    let out = common::chaind_run(dir, &["init", genesis.to_str().unwrap()]);
    assert!(out.status.success(), "chaind init: {out:?}");
}

// ---------------------------------------------------------------------------------------
// The token's set-up.

/// The set-up of `Token`, signed by the funder (its nonces from 0; legacy transactions both
/// nodes take): the deployment (the supply minted to the funder), `batchTransfer`s giving
/// each of `holders` [`HOLDER_TOKENS`] in chunks of 200, and a value transfer of 100 coins
/// to each. The token's address and the transactions as (raw, hash) in `0x` hex.
pub fn token_setup(tok: &Compiled, holders: &[Address]) -> (Address, Vec<(String, String)>) {
    let funder = funder();
    let token = create_address(&funder.address(), 0);
    let mut setup = vec![legacy_tx(
        &funder,
        0,
        None,
        0,
        tok.with_args(&[uint_word(SUPPLY)]),
        5_000_000,
    )];
    let mut nonce = 1;
    for chunk in holders.chunks(BATCH) {
        // batchTransfer(address[] to, uint256 amount): offset of the array, amount, length,
        // the addresses.
        let mut words = vec![
            uint_word(64),
            uint_word(HOLDER_TOKENS),
            uint_word(chunk.len() as u128),
        ];
        words.extend(chunk.iter().map(addr_word));
        let data = tok.call_data("batchTransfer(address[],uint256)", &words);
        setup.push(legacy_tx(&funder, nonce, Some(token), 0, data, BATCH_GAS));
        nonce += 1;
    }
    for a in holders {
        setup.push(legacy_tx(
            &funder,
            nonce,
            Some(*a),
            HOLDER_COIN,
            Vec::new(),
            21_000,
        ));
        nonce += 1;
    }
    let setup = setup
        .iter()
        .map(|tx| {
            (
                format!("0x{}", hex::encode(tx.encode())),
                format!("0x{}", hex::encode(tx.hash())),
            )
        })
        .collect();
    (token, setup)
}

/// Sends the set-up of [`token_setup`] to `ep` (the deployment first, alone, so that the
/// calls after it find the code) and waits for every receipt; prints the time it took.
/// The head block then.
pub fn run_setup(ep: &Endpoint, setup: &[(String, String)]) -> u64 {
    let t = Instant::now();
    let head = send_and_confirm(ep, &setup[..1]);
    let head = head.max(send_and_confirm(ep, &setup[1..]));
    println!(
        "  set-up on {}: {} transactions confirmed in {:.2} s, head {head}",
        ep.name,
        setup.len(),
        t.elapsed().as_secs_f64()
    );
    head
}

// ---------------------------------------------------------------------------------------
// Receipts.

/// Sends `txs` (raw, hash) in order over one connection, then waits until each has a
/// receipt with status 1 (a set-up step, not timed). The head block then.
pub fn send_and_confirm(ep: &Endpoint, txs: &[(String, String)]) -> u64 {
    let mut c = Conn::new(&ep.addr);
    let method = format!("{}_sendRawTransaction", ep.prefix);
    for (raw, hash) in txs {
        let v: Value =
            serde_json::from_slice(&c.roundtrip(&request(&ep.body(&method, &json!([raw])))))
                .unwrap();
        assert_eq!(
            v["result"].as_str(),
            Some(hash.as_str()),
            "{}: {v}",
            ep.name
        );
    }
    let waiting: Mutex<VecDeque<String>> = Mutex::new(txs.iter().map(|(_, h)| h.clone()).collect());
    let deadline = Instant::now() + Duration::from_secs(120);
    while !waiting.lock().unwrap().is_empty() {
        let (n, _) = confirm(ep, &mut c, &waiting);
        if n == 0 {
            assert!(Instant::now() < deadline, "{}: set-up not sealed", ep.name);
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    ep.head(&mut c)
}

/// Asks for the receipts of `hashes` in one JSON-RPC batch: how many of them, from the first
/// on, are sealed (each must have status 1; those after the first missing one are not
/// counted, and are asked for again later).
pub fn sealed_prefix(ep: &Endpoint, c: &mut Conn, hashes: &[String]) -> usize {
    // Only the id and the status are read from each reply (the client shares the cores
    // with the node it measures: no JSON tree is built).
    #[derive(serde::Deserialize)]
    struct Status {
        status: String,
    }
    #[derive(serde::Deserialize)]
    struct Reply {
        id: usize,
        result: Option<Status>,
    }
    let mut body = String::with_capacity(hashes.len() * 120);
    body.push('[');
    for (i, h) in hashes.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(&format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"{}_getTransactionReceipt","params":["{h}"]}}"#,
            ep.prefix
        ));
    }
    body.push(']');
    let bytes = c.roundtrip(&request(&body));
    let replies: Vec<Reply> = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{}: {e}: {}", ep.name, String::from_utf8_lossy(&bytes)));
    let mut status: Vec<Option<String>> = vec![None; hashes.len()];
    for r in replies {
        status[r.id] = r.result.map(|s| s.status);
    }
    let mut found = 0;
    for (s, h) in status.iter().zip(hashes) {
        match s.as_deref() {
            None => break,
            Some("0x1") => found += 1,
            Some(other) => panic!("{}: transaction {h} failed: status {other}", ep.name),
        }
    }
    found
}

/// Confirms the oldest hashes of `waiting`, [`RECEIPT_BATCH`] at a time, until one is not
/// sealed yet: removes those confirmed and returns how many, and how many batches it sent.
pub fn confirm(ep: &Endpoint, c: &mut Conn, waiting: &Mutex<VecDeque<String>>) -> (usize, usize) {
    let (mut found, mut batches) = (0, 0);
    loop {
        let front: Vec<String> = waiting
            .lock()
            .unwrap()
            .iter()
            .take(RECEIPT_BATCH)
            .cloned()
            .collect();
        if front.is_empty() {
            return (found, batches);
        }
        batches += 1;
        let n = sealed_prefix(ep, c, &front);
        waiting.lock().unwrap().drain(..n);
        found += n;
        if n < front.len() {
            return (found, batches);
        }
    }
}
