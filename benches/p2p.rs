//! Peer-to-peer figures between real `chaind` processes on 127.0.0.1 (issue 11):
//!
//! - sync of `P2P_EMPTY_BLOCKS` (default 10,000) empty blocks from one node to a fresh one:
//!   blocks/s, from `admin_addPeer` until the fresh node's head is the other's;
//! - the same with blocks holding `P2P_TRANSFERS` (default 100,000) value transfers in blocks
//!   of `P2P_BLOCK_TXS` (default 2,000): transfers/s;
//! - from sealing to arrival: a `--dev` validator and a line of four followers (each peered
//!   with the next); `P2P_LATENCY_BLOCKS` (default 200) transfers are sent one at a time to
//!   the validator, and each sealed block's arrival is taken from `newHeads` subscriptions on
//!   the validator, its peer and the far end of the line: p50, p99 and the worst, for the
//!   next hop and for the far end.
//!
//! Run: `cargo bench --bench p2p`. The blocks to sync are built in process and imported into
//! the serving node with `admin_importChain` before the clock starts.

#[path = "../tests/common/mod.rs"]
mod common;

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};
use common::{http_call, ok, Node};
use serde_json::{json, Value};

const CHAIN_ID: u64 = 1000;

/// A data directory written by `chaind init` with `genesis_file`, under `work`.
fn init_dir(work: &Path, genesis_file: &Path) -> tempfile::TempDir {
    let dd = tempfile::TempDir::new_in(work).unwrap();
    init_in(dd.path(), genesis_file);
    dd
}

fn init_in(dd: &Path, genesis_file: &Path) {
    let out = common::chaind_run(dd, &["init", genesis_file.to_str().unwrap()]);
    assert!(out.status.success(), "chaind init: {out:?}");
}

/// Starts `chaind` in `dd` with HTTP, WebSocket and p2p on 127.0.0.1 (any free ports).
fn start(dd: tempfile::TempDir, extra: &[&str]) -> Node {
    let mut args = common::http_args("admin,chain,net").to_vec();
    args.extend(common::ws_args("chain"));
    args.extend(["--p2paddr", "127.0.0.1", "--port", "0"]);
    args.extend(extra);
    Node::start_in(dd, &args)
}

fn call(n: &Node, method: &str, params: Value) -> Value {
    ok(http_call(n.http.as_ref().unwrap(), method, params))
}

fn kni(n: &Node) -> String {
    call(n, "admin_nodeInfo", json!([]))["kni"]
        .as_str()
        .unwrap()
        .to_string()
}

fn head(n: &Node) -> u64 {
    common::quantity_of(&call(n, "chain_blockNumber", json!([]))) as u64
}

/// `b` dials `a` and keeps it as a static peer.
fn connect(b: &Node, a: &Node) {
    assert_eq!(call(b, "admin_addPeer", json!([kni(a)])), json!(true));
}

/// Seconds from `b` dialing `a` until `b`'s head is `want`.
fn sync_time(a: &Node, b: &Node, want: u64) -> f64 {
    let t = Instant::now();
    connect(b, a);
    let deadline = t + Duration::from_secs(600);
    while head(b) < want {
        assert!(Instant::now() < deadline, "no sync after 10 minutes");
        std::thread::sleep(Duration::from_millis(2));
    }
    t.elapsed().as_secs_f64()
}

/// When each new head (by hash) was announced to this process by `n`'s `newHeads`.
fn watch_heads(n: &Node) -> Arc<Mutex<HashMap<String, Instant>>> {
    let seen = Arc::new(Mutex::new(HashMap::new()));
    let (mut ws, _) = tungstenite::connect(n.ws.as_ref().unwrap().as_str()).unwrap();
    ws.send(tungstenite::Message::text(
        json!({"jsonrpc": "2.0", "id": 1, "method": "chain_subscribe", "params": ["newHeads"]})
            .to_string(),
    ))
    .unwrap();
    let sink = seen.clone();
    std::thread::spawn(move || {
        while let Ok(m) = ws.read() {
            let at = Instant::now();
            let Ok(text) = m.into_text() else { continue };
            let v: Value = serde_json::from_str(&text).unwrap_or(Value::Null);
            if let Some(h) = v["params"]["result"]["hash"].as_str() {
                sink.lock().unwrap().insert(h.to_string(), at);
            }
        }
    });
    seen
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

fn main() {
    let n_empty = common::env_or("P2P_EMPTY_BLOCKS", 10_000u64);
    let n_transfers = common::env_or("P2P_TRANSFERS", 100_000usize);
    let per_block = common::env_or("P2P_BLOCK_TXS", 2_000usize);
    let n_latency = common::env_or("P2P_LATENCY_BLOCKS", 200usize);
    let work = tempfile::tempdir().unwrap();

    // The validator's data directory first: its keystore holds the validator's key (empty
    // passphrase), which also seals the blocks built here.
    let vdir = tempfile::TempDir::new_in(work.path()).unwrap();
    let ks = chain_node::keystore::Keystore::open(vdir.path().join("keystore"))
        .unwrap()
        .with_scrypt(chain_node::keystore::keyfile::ScryptParams::LIGHT);
    let v_address = ks.new_account("").unwrap().address;
    let v = ks.load_key(v_address, "").unwrap();
    let senders: Vec<SecretKey> = common::numbered_keys(100);
    // The validator is funded too: an empty block sealed by hand (see `empty_block`) keeps
    // its parent's state root, which holds only if the rewardbase account already exists.
    let alloc: Vec<String> = senders
        .iter()
        .map(|s| s.address())
        .chain([v_address])
        .map(|a| {
            format!(
                r#""0x{}": {{"balance": "1000000000000000000000000000"}}"#,
                hex::encode(a.0)
            )
        })
        .collect();
    let genesis_json = format!(
        r#"{{"config": {{"chainId": {CHAIN_ID}}}, "validator": "0x{}", "alloc": {{{}}}}}"#,
        hex::encode(v_address.0),
        alloc.join(", ")
    );
    let genesis_file = work.path().join("genesis.json");
    std::fs::write(&genesis_file, &genesis_json).unwrap();
    let genesis = Genesis::parse(genesis_json.as_bytes()).unwrap();
    let mut results = Vec::new();

    // Empty blocks, written as an export file.
    if n_empty > 0 {
        let file = work.path().join("empty.rlp");
        common::write_empty_blocks(&file, &genesis, &v, n_empty);
        let a = start(init_dir(work.path(), &genesis_file), &[]);
        assert_eq!(call(&a, "admin_importChain", json!([file])), json!(true));
        let b = start(init_dir(work.path(), &genesis_file), &[]);
        let secs = sync_time(&a, &b, n_empty);
        println!(
            "sync: {n_empty} empty blocks in {secs:.2} s = {:.0} blocks/s",
            n_empty as f64 / secs
        );
        results.push(format!(
            "sync_empty_blocks_per_s={:.0}",
            n_empty as f64 / secs
        ));
    }

    // Blocks of transfers, sealed in process and exported.
    if n_transfers > 0 {
        let dir = tempfile::TempDir::new_in(work.path()).unwrap();
        let built = Chain::open(dir.path(), &genesis).unwrap();
        let mut nonces = vec![0u64; senders.len()];
        let mut i = 0;
        while i < n_transfers {
            for _ in 0..per_block.min(n_transfers - i) {
                let tx = common::numbered_transfer(&senders, &mut nonces, i, CHAIN_ID);
                built.submit(tx).unwrap();
                i += 1;
            }
            built.seal(&v).unwrap().unwrap();
        }
        let file = work.path().join("transfers.rlp");
        let stop = std::sync::atomic::AtomicBool::new(false);
        chain_node::chain::export::export(&built, &file, None, None, &stop, &mut |_, _| {})
            .unwrap();
        let blocks = built.head_number();
        drop(built);
        let a = start(init_dir(work.path(), &genesis_file), &[]);
        assert_eq!(call(&a, "admin_importChain", json!([file])), json!(true));
        let b = start(init_dir(work.path(), &genesis_file), &[]);
        let secs = sync_time(&a, &b, blocks);
        println!(
            "sync: {n_transfers} transfers in {blocks} blocks in {secs:.2} s = {:.0} transfers/s",
            n_transfers as f64 / secs
        );
        results.push(format!(
            "sync_transfers_per_s={:.0}",
            n_transfers as f64 / secs
        ));
    }

    // From sealing to arrival, along a line validator - f1 - f2 - f3 - f4.
    if n_latency > 0 {
        init_in(vdir.path(), &genesis_file);
        let validator = start(vdir, &["--dev"]);
        let followers: Vec<Node> = (0..4)
            .map(|_| start(init_dir(work.path(), &genesis_file), &[]))
            .collect();
        connect(&followers[0], &validator);
        for w in followers.windows(2) {
            connect(&w[1], &w[0]);
        }
        // Every link up before the clock starts.
        for (i, f) in followers.iter().enumerate() {
            let want = if i == 3 { 1 } else { 2 };
            let deadline = Instant::now() + Duration::from_secs(20);
            while common::quantity_of(&call(f, "net_peerCount", json!([]))) < want {
                assert!(Instant::now() < deadline, "follower {i} has no peers");
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let at_v = watch_heads(&validator);
        let at_next = watch_heads(&followers[0]);
        let at_end = watch_heads(&followers[3]);
        std::thread::sleep(Duration::from_millis(200));
        let (mut next, mut end) = (Vec::new(), Vec::new());
        for i in 0..n_latency {
            let raw = common::raw_transfer(
                &senders[0],
                i as u64,
                Address([0x77; 20]),
                1,
                common::PRICE,
                CHAIN_ID,
            );
            let hash = call(&validator, "chain_sendRawTransaction", json!([raw]));
            let receipt = common::wait_receipt(validator.http.as_ref().unwrap(), &hash);
            let block = receipt["blockHash"].as_str().unwrap().to_string();
            let deadline = Instant::now() + Duration::from_secs(10);
            let (sealed, hop, far) = loop {
                let sealed = at_v.lock().unwrap().get(&block).copied();
                let hop = at_next.lock().unwrap().get(&block).copied();
                let far = at_end.lock().unwrap().get(&block).copied();
                if let (Some(s), Some(h), Some(f)) = (sealed, hop, far) {
                    break (s, h, f);
                }
                assert!(
                    Instant::now() < deadline,
                    "block {block} did not reach the far end"
                );
                std::thread::sleep(Duration::from_millis(1));
            };
            next.push(hop.saturating_duration_since(sealed).as_secs_f64() * 1000.0);
            end.push(far.saturating_duration_since(sealed).as_secs_f64() * 1000.0);
        }
        for (name, v) in [("next_peer", &mut next), ("line_far_end", &mut end)] {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            println!(
                "seal to {name}: {} blocks, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms",
                v.len(),
                percentile(v, 0.5),
                percentile(v, 0.99),
                v[v.len() - 1]
            );
            results.push(format!("{name}_p99_ms={:.2}", percentile(v, 0.99)));
        }
    }
    for r in results {
        println!("RESULT {r}");
    }
}
