//! The chain's throughput through the real `chaind --dev` on 127.0.0.1: value transfers
//! signed in advance, sent with `chain_sendRawTransaction` over 8 keep-alive HTTP connections
//! (one funded sender each, nonces in order), until all are sealed.
//!
//! Three runs, each on a fresh node:
//! - `pool`: ingestion alone. The node runs with `--dev.period 3600`, so that after the block
//!   funding the senders no block is sealed while the transfers arrive: transactions/s
//!   accepted by the pool.
//! - `end-to-end`: `--dev` sealing as soon as transactions are pending; from the first send
//!   to the block holding the last transfer.
//! - `end-to-end-big-state`: the same on a chain written by `chaind init` whose genesis funds
//!   `INGEST_STATE_ACCOUNTS` more accounts (default 1,000,000), sealed by its validator with
//!   `--dev`; also chaind's peak RSS (VmHWM).
//!
//! Run: `cargo bench --bench chain_ingest` (`INGEST_PER_SENDER`, default 5,000;
//! `INGEST_RUNS`, default `pool,end-to-end,end-to-end-big-state`).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/conn.rs"]
mod conn;

use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use common::{http_call, Node};
use conn::Conn;
use serde_json::{json, Value};

const SENDERS: usize = 8;
const PRICE: u128 = 25_000_000_000;

fn transfer(key: &SecretKey, nonce: u64, to: Address, value: u128) -> String {
    common::raw_transfer(key, nonce, to, value, PRICE, 1000)
}

fn number(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

fn senders() -> Vec<SecretKey> {
    (0..SENDERS)
        .map(|i| SecretKey::from_slice(&[i as u8 + 1; 32]).unwrap())
        .collect()
}

const FUNDS: u128 = 1_000_000_000_000_000_000_000_000;

/// chaind's peak resident set, from /proc.
fn peak_rss_kib(n: &Node) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", n.child.id())).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The figures of one run.
struct Figures {
    ingest_tps: f64,
    end_to_end_tps: Option<f64>,
    blocks: u64,
}

/// Sends `per_sender` pre-signed transfers from each sender over its own connection; with
/// `until_sealed`, waits until the last one is sealed.
fn drive(n: &Node, per_sender: u64, until_sealed: bool) -> Figures {
    let url = n.http.clone().unwrap();
    let addr = url.trim_start_matches("http://").to_string();
    let senders = senders();
    let start_block = number(&http_call(&url, "chain_blockNumber", json!([]))["result"]);
    let t = Instant::now();
    let signed: Vec<Vec<String>> = senders
        .iter()
        .enumerate()
        .map(|(i, k)| {
            (0..per_sender)
                .map(|nonce| {
                    let mut to = [0u8; 20];
                    to[..8].copy_from_slice(&(nonce * SENDERS as u64 + i as u64 + 1).to_be_bytes());
                    to[19] = 0xaa;
                    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "chain_sendRawTransaction",
                                      "params": [transfer(k, nonce, Address(to), 1)]});
                    body.to_string()
                })
                .collect()
        })
        .collect();
    let total = per_sender * SENDERS as u64;
    println!(
        "  signed {total} value transfers in advance ({:.2} s)",
        t.elapsed().as_secs_f64()
    );
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for bodies in &signed {
            let addr = addr.clone();
            s.spawn(move || {
                let mut c = Conn::new(&addr);
                for b in bodies {
                    let reply = c.call(b);
                    assert!(reply.contains("\"result\""), "{reply}");
                }
            });
        }
    });
    let ingest = t0.elapsed();
    let ingest_tps = total as f64 / ingest.as_secs_f64();
    println!(
        "  ingestion: {ingest_tps:.0} tx/s ({total} transfers accepted over 8 connections in {:.2} s)",
        ingest.as_secs_f64()
    );
    if !until_sealed {
        let blocks =
            number(&http_call(&url, "chain_blockNumber", json!([]))["result"]) - start_block;
        return Figures {
            ingest_tps,
            end_to_end_tps: None,
            blocks,
        };
    }
    // Until the last sender's last nonce is sealed.
    let last = senders.last().unwrap().address();
    loop {
        let n = http_call(
            &url,
            "chain_getTransactionCount",
            json!([format!("0x{}", hex::encode(last.0))]),
        );
        if number(&n["result"]) == per_sender {
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let end_to_end = t0.elapsed();
    let blocks = number(&http_call(&url, "chain_blockNumber", json!([]))["result"]) - start_block;
    let tps = total as f64 / end_to_end.as_secs_f64();
    println!(
        "  end to end: {tps:.0} tx/s (all sealed {:.2} s after the first send, in {blocks} blocks)",
        end_to_end.as_secs_f64()
    );
    Figures {
        ingest_tps,
        end_to_end_tps: Some(tps),
        blocks,
    }
}

/// A `--dev` node (with `extra` arguments) whose senders the developer account funded.
fn dev_node(extra: &[&str]) -> Node {
    let mut args = vec!["--dev"];
    args.extend(common::http_args("chain"));
    args.extend(extra);
    let n = Node::start(&args);
    let url = n.http.clone().unwrap();
    let dev = std::fs::read_to_string(n.datadir.path().join("dev-account")).unwrap();
    let dev = Address::parse_lenient(dev.trim()).unwrap();
    let file = common::key_files(&n.keystore()).pop().unwrap();
    let dev_key = chain_node::keystore::load_key_file(&file, dev, "").unwrap();
    for (i, s) in senders().iter().enumerate() {
        let raw = transfer(&dev_key, i as u64, s.address(), FUNDS);
        let r = http_call(&url, "chain_sendRawTransaction", json!([raw]));
        assert!(r.get("result").is_some(), "{r}");
    }
    while number(&http_call(&url, "chain_blockNumber", json!([]))["result"]) < 1 {
        std::thread::sleep(Duration::from_millis(10));
    }
    n
}

/// A node on a chain written by `chaind init` whose genesis funds the senders and
/// `accounts` more accounts, sealed with `--dev` by its validator.
fn big_state_node(accounts: u64) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let ks = chain_node::keystore::Keystore::open(dir.path().join("keystore"))
        .unwrap()
        .with_scrypt(chain_node::keystore::keyfile::ScryptParams::LIGHT);
    let validator = ks.new_account("").unwrap().address;
    let mut alloc = String::with_capacity(accounts as usize * 80);
    alloc.push_str(&format!("\"{validator}\": {{\"balance\": \"0x1\"}}"));
    for s in senders() {
        alloc.push_str(&format!(
            ",\"0x{}\": {{\"balance\": \"{FUNDS}\"}}",
            hex::encode(s.address().0)
        ));
    }
    for i in 0..accounts {
        let mut a = [0x5au8; 20];
        a[12..].copy_from_slice(&i.to_be_bytes());
        alloc.push_str(&format!(
            ",\"0x{}\": {{\"balance\": \"0x1\"}}",
            hex::encode(a)
        ));
    }
    let genesis = format!("{{\"validator\": \"{validator}\", \"alloc\": {{{alloc}}}}}");
    let file = dir.path().join("genesis.json");
    std::fs::write(&file, genesis).unwrap();
    let t = Instant::now();
    let out = std::process::Command::new(common::chaind_bin())
        .arg("--datadir")
        .arg(dir.path())
        .arg("init")
        .arg(&file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    println!(
        "  chaind init with {} funded accounts: {:.1} s",
        accounts + 1 + SENDERS as u64,
        t.elapsed().as_secs_f64()
    );
    let mut args = vec!["--dev"];
    args.extend(common::http_args("chain"));
    let t = Instant::now();
    let n = Node::start_in(dir, &args);
    println!(
        "  chaind started on it in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    n
}

fn main() {
    let per_sender = common::env_or("INGEST_PER_SENDER", 5000);
    let runs = std::env::var("INGEST_RUNS")
        .unwrap_or_else(|_| "pool,end-to-end,end-to-end-big-state".into());
    let mut results = Vec::new();
    for run in runs.split(',') {
        println!("{run}:");
        match run {
            "pool" => {
                let n = dev_node(&["--dev.period", "3600"]);
                let f = drive(&n, per_sender, false);
                assert_eq!(f.blocks, 0, "a block was sealed during the pool run");
                results.push(format!("pool_ingest_tps={:.0}", f.ingest_tps));
            }
            "end-to-end" => {
                let n = dev_node(&[]);
                let f = drive(&n, per_sender, true);
                results.push(format!(
                    "end_to_end_tps={:.0} (ingest {:.0}, {} blocks)",
                    f.end_to_end_tps.unwrap(),
                    f.ingest_tps,
                    f.blocks
                ));
            }
            "end-to-end-big-state" => {
                let accounts = common::env_or("INGEST_STATE_ACCOUNTS", 1_000_000);
                let n = big_state_node(accounts);
                println!(
                    "  chaind peak RSS after start: {} MiB",
                    peak_rss_kib(&n) / 1024
                );
                let f = drive(&n, per_sender, true);
                results.push(format!(
                    "end_to_end_tps_{accounts}_accounts={:.0} (ingest {:.0}, {} blocks) peak_rss_mib={}",
                    f.end_to_end_tps.unwrap(),
                    f.ingest_tps,
                    f.blocks,
                    peak_rss_kib(&n) / 1024
                ));
            }
            other => panic!("unknown run {other:?}"),
        }
    }
    for r in results {
        println!("RESULT {r}");
    }
}
