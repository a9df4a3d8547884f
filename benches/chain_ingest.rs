//! The chain's throughput through the real `chaind --dev` on 127.0.0.1: value transfers
//! signed in advance, sent with `chain_sendRawTransaction` over 8 keep-alive HTTP connections
//! (one funded sender each, nonces in order), until all are sealed.
//!
//! Reported: ingestion (accepted by the pool, transactions/s while sending) and end to end
//! (from the first send to the block holding the last transaction).
//!
//! Run: `cargo bench --bench chain_ingest` (`INGEST_PER_SENDER`, default 5,000).

#[path = "../tests/common/mod.rs"]
#[allow(dead_code)]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::transaction::{Transaction, ValueTransfer};
use common::{http_call, Node};
use serde_json::{json, Value};

const SENDERS: usize = 8;
const PRICE: u128 = 25_000_000_000;

fn u256(v: u128) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[16..].copy_from_slice(&v.to_be_bytes());
    b
}

fn transfer(key: &SecretKey, nonce: u64, to: Address, value: u128) -> String {
    let mut tx = Transaction::ValueTransfer(ValueTransfer {
        nonce,
        gas_price: u256(PRICE),
        gas: 21_000,
        to,
        value: u256(value),
        from: key.address(),
        signatures: Vec::new(),
    });
    tx.sign(key, 1000);
    format!("0x{}", hex::encode(tx.encode()))
}

/// One keep-alive connection: sends a JSON-RPC body, returns the reply body.
struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
}

impl Conn {
    fn new(addr: &str) -> Conn {
        let w = TcpStream::connect(addr).unwrap();
        w.set_nodelay(true).unwrap();
        let r = BufReader::new(w.try_clone().unwrap());
        Conn { w, r }
    }

    fn call(&mut self, body: &str) -> String {
        let req = format!(
            "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        self.w.write_all(req.as_bytes()).unwrap();
        let mut len = 0;
        loop {
            let mut line = String::new();
            self.r.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(v) = line.strip_prefix("Content-Length: ") {
                len = v.trim().parse().unwrap();
            }
        }
        let mut b = vec![0; len];
        self.r.read_exact(&mut b).unwrap();
        String::from_utf8(b).unwrap()
    }
}

fn number(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

fn main() {
    let per_sender: u64 = std::env::var("INGEST_PER_SENDER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5000);
    let n = Node::start(&[
        "--dev",
        "--rpc",
        "--rpcaddr",
        "127.0.0.1",
        "--rpcport",
        "0",
        "--rpcapi",
        "chain",
    ]);
    let url = n.http.clone().unwrap();
    let addr = url.trim_start_matches("http://").to_string();
    let dev = std::fs::read_to_string(n.datadir.path().join("dev-account")).unwrap();
    let dev = Address::parse_lenient(dev.trim()).unwrap();
    let file = common::key_files(&n.keystore()).pop().unwrap();
    let dev_key = chain_node::keystore::load_key_file(&file, dev, "").unwrap();
    // Fund the senders.
    let senders: Vec<SecretKey> = (0..SENDERS)
        .map(|i| SecretKey::from_slice(&[i as u8 + 1; 32]).unwrap())
        .collect();
    for (i, s) in senders.iter().enumerate() {
        let raw = transfer(
            &dev_key,
            i as u64,
            s.address(),
            1_000_000_000_000_000_000_000_000,
        );
        let r = http_call(&url, "chain_sendRawTransaction", json!([raw]));
        assert!(r.get("result").is_some(), "{r}");
    }
    while number(&http_call(&url, "chain_blockNumber", json!([]))["result"]) < 1 {
        std::thread::sleep(Duration::from_millis(10));
    }
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
        "signed {total} value transfers in advance ({:.2} s)",
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
    println!(
        "ingestion: {:.0} tx/s ({total} transfers accepted over 8 connections in {:.2} s)",
        total as f64 / ingest.as_secs_f64(),
        ingest.as_secs_f64()
    );
    println!(
        "end to end: {:.0} tx/s (all sealed {:.2} s after the first send, in {blocks} blocks)",
        total as f64 / end_to_end.as_secs_f64(),
        end_to_end.as_secs_f64()
    );
    println!(
        "RESULT ingest_tps={:.0} end_to_end_tps={:.0}",
        total as f64 / ingest.as_secs_f64(),
        total as f64 / end_to_end.as_secs_f64()
    );
}
