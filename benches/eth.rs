//! Ethereum's tools against our node: the `eth_` methods they call, side by side with anvil
//! (foundry's dev node) in one run, the same client code and connections, rounds
//! interleaved (ours, anvil, ours, anvil, ...). The node not being measured is stopped
//! (SIGSTOP) during the other's round.
//!
//! Both nodes get the set-up of `contracts.rs` (benches/support/nodes.rs: anvil's flags, the
//! funder, `Token` deployed and `ETH_HOLDERS` holders, default 2,000, given tokens and coin
//! by the same signed legacy transactions), then:
//!
//! - **Calls.** `eth_call` of `balanceOf(address)` of the holders in turn at `latest`, at 1
//!   and at `ETH_CONNS` (default 8) keep-alive connections with one call in flight each,
//!   `ETH_CALL_SECS` (default 3) per round, `ETH_CALL_ROUNDS` (default 3) rounds per node.
//! - **Logs.** A chain of `ETH_LOG_BLOCKS` (default 10,000) blocks each holding exactly one
//!   token transfer (the funder's EIP-1559 `transfer` to one of the first 100 holders in
//!   turn) is built on both at once, not timed: on ours one transfer is sent and the head
//!   awaited before the next (`--dev` seals when a transaction is pending, looking every
//!   20 ms: about 4 minutes for 10,000 blocks), on anvil interval mining is switched off and
//!   each transfer is followed by `evm_mine`. Then `eth_getLogs`
//!   over exactly those blocks, one query in flight on one connection for `ETH_LOG_SECS`
//!   (default 3) per round, `ETH_LOG_ROUNDS` (default 3) rounds per node: every `Transfer`
//!   log of the token (one per block), and a selective one (the recipient's topic of holder
//!   0: one block in 100). Both nodes must return the same number of logs, one a block.
//! - **Sends.** `eth_sendRawTransaction` of pre-signed EIP-1559 token transfers between
//!   holders (fee cap = tip cap = 25 gwei, the unit price here; anvil runs with base fee 0),
//!   `ETH_ROUND_TXS` (default 10,000) a round over `ETH_CONNS` connections, each holder's
//!   transfers on one connection in nonce order, `ETH_ROUNDS` (default 3) rounds per node,
//!   timed from the first send until the client has seen a receipt with status 1 for each
//!   (the receipt watcher of benches/support/rounds.rs, as `contracts.rs` does, with
//!   `eth_getTransactionReceipt` and `eth_blockNumber`).
//!
//! Run: `cargo bench --bench eth` (`ETH_PARTS`, default `calls,logs,sends`). Every figure is
//! printed per round, then as median and spread, then as `RESULT` lines.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/conn.rs"]
mod conn;
#[path = "support/foundry.rs"]
mod foundry;
#[path = "support/nodes.rs"]
mod nodes;
#[path = "support/rounds.rs"]
mod rounds;
#[path = "support/stats.rs"]
mod stats;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use chain_node::crypto::{keccak256, Address};
use common::contracts::{addr_word, compiled, dynamic_fee_tx, uint_word};
use conn::{request, Conn};
use nodes::{funder, run_setup, token_setup, Endpoint, Pair};
use rounds::{call_load, Round};
use serde_json::{json, Value};
use stats::{loadavg, max, median, min, spread};

/// Gas of one ERC-20 transfer: about 35,000 here, about 30,000-50,000 on anvil.
const TRANSFER_GAS: u64 = 100_000;
/// The log chain's transfers go to the first this many holders in turn.
const LOG_RECIPIENTS: usize = 100;

fn main() {
    let holders_n = common::env_or("ETH_HOLDERS", 2_000usize);
    let conns = common::env_or("ETH_CONNS", 8usize);
    let call_rounds = common::env_or("ETH_CALL_ROUNDS", 3usize);
    let call_secs = Duration::from_secs_f64(common::env_or("ETH_CALL_SECS", 3.0f64));
    let log_blocks = common::env_or("ETH_LOG_BLOCKS", 10_000usize);
    let log_rounds = common::env_or("ETH_LOG_ROUNDS", 3usize);
    let log_secs = Duration::from_secs_f64(common::env_or("ETH_LOG_SECS", 3.0f64));
    let rounds = common::env_or("ETH_ROUNDS", 3usize);
    let round_txs = common::env_or("ETH_ROUND_TXS", 10_000usize);
    let parts = std::env::var("ETH_PARTS").unwrap_or_else(|_| "calls,logs,sends".into());
    let part = |p: &str| parts.split(',').any(|x| x == p);

    let (anvil_bin, _) = foundry::foundry();
    let work = tempfile::tempdir().unwrap();
    println!(
        "eth: {holders_n} holders, {} cores, load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg()
    );
    let holders = common::numbered_keys(holders_n as u64);
    let holder_addrs: Vec<Address> = holders.iter().map(|k| k.address()).collect();
    let pair = Pair::start(work.path(), &anvil_bin, "eth,chain", "eth");
    let (ours, anvil) = (&pair.ours, &pair.anvil);
    let tok = compiled("Token");
    let (token, setup) = token_setup(&tok, &holder_addrs);
    for ep in [ours, anvil] {
        run_setup(ep, &setup);
    }
    let mut results = Vec::new();

    if part("calls") {
        // The same requests to both.
        let bodies: Vec<String> = holder_addrs
            .iter()
            .take(1000)
            .map(|a| {
                let data = tok.call_data("balanceOf(address)", &[addr_word(a)]);
                let params = json!([{"to": hex0x(&token.0), "data": hex0x(&data)}, "latest"]);
                ours.body("eth_call", &params)
            })
            .collect();
        let bodies: Vec<&str> = bodies.iter().map(String::as_str).collect();
        let probe: Vec<Value> = [ours, anvil].iter().map(|ep| ep.raw(bodies[0])).collect();
        println!(
            "calls: balanceOf(holder 0): ours {}, anvil {}",
            probe[0], probe[1]
        );
        assert_eq!(probe[0]["result"], probe[1]["result"], "the nodes disagree");
        for c in [1, conns] {
            let mut rates = [Vec::new(), Vec::new()];
            for r in 0..call_rounds {
                for (i, ep) in [ours, anvil].into_iter().enumerate() {
                    let other = if i == 0 { anvil } else { ours };
                    let (rate, p50, p99, cpu) =
                        other.paused(|| call_load(ep, &bodies, c, call_secs));
                    println!(
                        "  round {r}, {c} conn: {:<5} {rate:>7.0} calls/s (p50 {:.0} µs, p99 {:.0} µs; node {cpu:.2} cores, {:.1} µs of CPU a call)",
                        ep.name,
                        p50 * 1e6,
                        p99 * 1e6,
                        cpu * 1e6 / rate
                    );
                    rates[i].push(rate);
                }
            }
            compare(
                &format!("eth_call balanceOf at {c} connection(s), calls/s"),
                &format!("calls_{c}conn"),
                &rates,
                &mut results,
            );
        }
    }

    if part("logs") {
        let transfer_topic = hex0x(&keccak256(b"Transfer(address,address,uint256)"));
        let transfer = tok.selector("transfer(address,uint256)");
        let t = Instant::now();
        let txs: Vec<(String, String)> = (0..log_blocks)
            .map(|i| {
                let mut data = transfer.clone();
                data.extend_from_slice(&addr_word(&holder_addrs[i % LOG_RECIPIENTS]));
                data.extend_from_slice(&uint_word(1));
                let nonce = (setup.len() + i) as u64;
                let tx = dynamic_fee_tx(&funder(), nonce, token, 0, data, TRANSFER_GAS);
                (hex0x(&tx.encode_ethereum()), hex0x(&tx.hash()))
            })
            .collect();
        println!(
            "logs: signed {log_blocks} transfers in {:.2} s",
            t.elapsed().as_secs_f64()
        );
        // Both at once: ours is paced by its sealer's 20 ms tick, not by the CPU.
        let ranges = std::thread::scope(|s| {
            let a = s.spawn(|| one_per_block(anvil, &txs));
            let o = one_per_block(ours, &txs);
            [o, a.join().unwrap()]
        });
        let criteria = |range: (u64, u64), selective: bool| {
            let mut topics = vec![json!(transfer_topic)];
            if selective {
                topics.push(Value::Null);
                topics.push(json!(hex0x(&addr_word(&holder_addrs[0]))));
            }
            json!([{"fromBlock": format!("0x{:x}", range.0), "toBlock": format!("0x{:x}", range.1),
                    "address": hex0x(&token.0), "topics": topics}])
        };
        for (selective, label, key) in [
            (false, "every Transfer", "logs_all"),
            (true, "one recipient's Transfers", "logs_one"),
        ] {
            let bodies: Vec<String> = [ours, anvil]
                .iter()
                .zip(ranges)
                .map(|(ep, range)| ep.body("eth_getLogs", &criteria(range, selective)))
                .collect();
            // Both must find the same logs: as many, in as many blocks, on the token.
            let counts: Vec<(usize, usize)> = [ours, anvil]
                .iter()
                .zip(&bodies)
                .map(|(ep, b)| {
                    let v = ep.raw(b);
                    let logs = v["result"]
                        .as_array()
                        .unwrap_or_else(|| panic!("{}: {v}", ep.name));
                    let blocks: BTreeSet<&str> = logs
                        .iter()
                        .map(|l| l["blockNumber"].as_str().unwrap())
                        .collect();
                    assert!(logs.iter().all(|l| l["address"] == json!(hex0x(&token.0))));
                    (logs.len(), blocks.len())
                })
                .collect();
            let expected = if selective {
                log_blocks.div_ceil(LOG_RECIPIENTS)
            } else {
                log_blocks
            };
            println!(
                "  {label}: ours {} logs in {} blocks, anvil {} in {}",
                counts[0].0, counts[0].1, counts[1].0, counts[1].1
            );
            assert_eq!(counts, vec![(expected, expected); 2], "{label}");
            let mut rates = [Vec::new(), Vec::new()];
            for r in 0..log_rounds {
                for (i, ep) in [ours, anvil].into_iter().enumerate() {
                    let other = if i == 0 { anvil } else { ours };
                    let (rate, p50, p99, cpu) =
                        other.paused(|| call_load(ep, &[bodies[i].as_str()], 1, log_secs));
                    println!(
                        "  round {r}, {label}: {:<5} {rate:>7.1} queries/s (p50 {:.2} ms, p99 {:.2} ms; node {cpu:.2} cores)",
                        ep.name,
                        p50 * 1e3,
                        p99 * 1e3
                    );
                    rates[i].push(rate);
                }
            }
            compare(
                &format!(
                    "eth_getLogs of {label} over {log_blocks} blocks ({expected} logs), queries/s"
                ),
                key,
                &rates,
                &mut results,
            );
            let ms = |v: &[f64]| v.iter().map(|q| 1e3 / q).collect::<Vec<_>>();
            println!(
                "    ms per query: ours {:.2}, anvil {:.2} (medians)",
                median(&ms(&rates[0])),
                median(&ms(&rates[1]))
            );
        }
    }

    if part("sends") {
        let transfer = tok.selector("transfer(address,uint256)");
        let mut nonces = vec![0u64; holders_n];
        let mut rates = [Vec::new(), Vec::new()];
        for r in 0..rounds {
            let t = Instant::now();
            let round = Round::sign(
                holders_n,
                &mut nonces,
                r,
                round_txs,
                conns,
                |h, nonce, to| {
                    let mut data = transfer.clone();
                    data.extend_from_slice(&addr_word(&holder_addrs[to]));
                    data.extend_from_slice(&uint_word(1));
                    let tx = dynamic_fee_tx(&holders[h], nonce, token, 0, data, TRANSFER_GAS);
                    let raw = hex0x(&tx.encode_ethereum());
                    let body = request(&format!(
                        r#"{{"jsonrpc":"2.0","id":1,"method":"eth_sendRawTransaction","params":["{raw}"]}}"#
                    ));
                    // The same request to both.
                    (body.clone(), body, hex0x(&tx.hash()))
                },
            );
            println!(
                "sends, round {r}: signed {round_txs} EIP-1559 transfers in {:.2} s (load average {})",
                t.elapsed().as_secs_f64(),
                loadavg()
            );
            for (i, ep) in [ours, anvil].into_iter().enumerate() {
                let other = if i == 0 { anvil } else { ours };
                let f = other.paused(|| round.run(ep));
                println!(
                    "  {:<5} {:>6.0} tx/s end to end ({:.2} s; accepted in {:.2} s = {:.0} tx/s; blocks {}..={}; {} receipt polls; CPU: node {:.2} cores, client {:.2} cores)",
                    ep.name,
                    f.tps(),
                    f.receipts_secs,
                    f.ingest_secs,
                    round_txs as f64 / f.ingest_secs,
                    f.first_block,
                    f.last_block,
                    f.polls,
                    f.node_cpu / f.receipts_secs,
                    f.client_cpu / f.receipts_secs
                );
                println!("        µs of CPU per transfer: {}", f.threads);
                rates[i].push(f.tps());
            }
        }
        compare(
            &format!("eth_sendRawTransaction of EIP-1559 token transfers end to end ({round_txs} a round, {conns} connections), tx/s"),
            "sends_tps",
            &rates,
            &mut results,
        );
    }

    println!();
    println!("load average at the end {}", loadavg());
    for r in results {
        println!("RESULT {r}");
    }
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

/// Puts each of `txs` (raw, hash), in order, alone in a block of `ep`: on ours the next is
/// sent when the head has moved (our dev chain seals as soon as a transaction is pending),
/// on anvil interval mining is off and `evm_mine` follows each send. Checks that every
/// transaction has a receipt with status 1 in its own block; the first and last block.
fn one_per_block(ep: &Endpoint, txs: &[(String, String)]) -> (u64, u64) {
    let n = txs.len();
    let t = Instant::now();
    let mut c = Conn::new(&ep.addr);
    let call = |c: &mut Conn, method: &str, params: Value| -> Value {
        let v: Value = serde_json::from_str(&c.call(&ep.body(method, &params))).unwrap();
        assert!(v.get("error").is_none(), "{}: {method}: {v}", ep.name);
        v["result"].clone()
    };
    if ep.anvil {
        call(&mut c, "evm_setIntervalMining", json!([0]));
    }
    let first = ep.head(&mut c) + 1;
    let mut hashes = Vec::with_capacity(n);
    for (head, (raw, hash)) in (first - 1..).zip(txs) {
        assert_eq!(
            call(&mut c, "eth_sendRawTransaction", json!([raw])),
            json!(hash)
        );
        if ep.anvil {
            call(&mut c, "evm_mine", json!([]));
        }
        let deadline = Instant::now() + Duration::from_secs(10);
        while ep.head(&mut c) == head {
            assert!(Instant::now() < deadline, "{}: no block sealed", ep.name);
            std::thread::sleep(Duration::from_micros(100));
        }
        hashes.push(hash.clone());
    }
    let secs = t.elapsed().as_secs_f64();
    if ep.anvil {
        call(&mut c, "evm_setIntervalMining", json!([1]));
    }
    let last = first + n as u64 - 1;
    // Each in its own block: the receipts' block numbers are first..=last in order.
    for (i, chunk) in hashes.chunks(nodes::RECEIPT_BATCH).enumerate() {
        let batch: Vec<Value> = chunk
            .iter()
            .enumerate()
            .map(|(j, h)| json!({"jsonrpc": "2.0", "id": j, "method": "eth_getTransactionReceipt", "params": [h]}))
            .collect();
        let replies: Vec<Value> =
            serde_json::from_str(&c.call(&Value::Array(batch).to_string())).unwrap();
        for r in replies {
            let j = r["id"].as_u64().unwrap() as usize;
            let number = (i * nodes::RECEIPT_BATCH + j) as u64 + first;
            assert_eq!(r["result"]["status"], json!("0x1"), "{}: {r}", ep.name);
            assert_eq!(
                common::quantity_of(&r["result"]["blockNumber"]) as u64,
                number,
                "{}: transfer {j} of batch {i} not alone in its block",
                ep.name
            );
        }
    }
    println!(
        "  {}: {n} blocks of one transfer each, {first}..={last}, in {secs:.1} s ({:.2} ms a block)",
        ep.name,
        secs * 1e3 / n as f64
    );
    (first, last)
}

/// Prints `label` with ours and anvil's rounds (median [min-max]) and the ratio of each
/// pair of rounds; adds `key_ours`, `key_anvil` and `key_ours_vs_anvil` to `results`.
fn compare(label: &str, key: &str, rates: &[Vec<f64>; 2], results: &mut Vec<String>) {
    let [o, a] = rates;
    let ratios: Vec<f64> = o.iter().zip(a).map(|(x, y)| x / y).collect();
    let precise = median(o) < 100.0 || median(a) < 100.0;
    let show = |v: &[f64]| {
        if precise {
            format!("{:.1} [{:.1}-{:.1}]", median(v), min(v), max(v))
        } else {
            spread(v)
        }
    };
    println!(
        "  {label}: ours {}, anvil {}, ours/anvil {:.2}x [{:.2}-{:.2}]",
        show(o),
        show(a),
        median(&ratios),
        min(&ratios),
        max(&ratios)
    );
    results.push(format!("{key}_ours={:.1}", median(o)));
    results.push(format!("{key}_anvil={:.1}", median(a)));
    results.push(format!("{key}_ours_vs_anvil={:.2}", median(&ratios)));
}
