//! Contracts on the chain, side by side with anvil (foundry's dev node) in one run: the same
//! pre-signed transactions, the same client code, rounds interleaved (ours, anvil, ours,
//! anvil, ...).
//!
//! - **ERC-20 transfers, end to end.** `Token` (tests/contracts) is deployed by one funder,
//!   which then gives `CONTRACTS_HOLDERS` (default 10,000) holders tokens with
//!   `batchTransfer` in chunks of 200 and native coin with value transfers; none of this is
//!   timed. Each measured round sends `CONTRACTS_ROUND_TXS` (default 50,000) pre-signed
//!   `transfer(address,uint256)` calls between holders (each holder its own nonce sequence,
//!   every holder's transfers on one of `CONTRACTS_CONNS`, default 8, keep-alive HTTP
//!   connections, in nonce order) with `*_sendRawTransaction`. The clock runs from the first
//!   send until the client has seen a receipt with status 1 for every transfer of the round:
//!   a watcher polls the head every 2 ms and, whenever it moves, asks for the receipts of
//!   each connection's oldest unconfirmed transfers, 200 per JSON-RPC batch, until it meets
//!   one not yet sealed. Also reported: when the last transfer was accepted (ingestion).
//! - **Calls.** `balanceOf(address)` of the holders in turn, `chain_call` against anvil's
//!   `eth_call`, over `CONTRACTS_CONNS` connections with one call in flight each, for
//!   `CONTRACTS_CALL_SECS` (default 5) per round.
//! - **Import.** Our node is stopped; `chaind export` writes the set-up blocks and the blocks
//!   of the first rounds holding at least `CONTRACTS_IMPORT_TXS` (default 100,000) transfers;
//!   a fresh data directory of the same genesis imports the set-up (not timed), then
//!   `chaind import` of the transfer blocks is timed (the whole process: start, every check,
//!   the durable writes), `CONTRACTS_IMPORT_RUNS` (default 3) times, each on a fresh copy.
//! - **Memory.** VmHWM of chaind and of anvil after the transfer and call rounds.
//!
//! anvil and cast come from npm (`@foundry-rs/anvil-linux-amd64` and
//! `@foundry-rs/cast-linux-amd64`, version [`foundry::FOUNDRY`]), installed on first use under
//! `<target dir>/bench-cache/foundry-<version>` (or `CONTRACTS_FOUNDRY_DIR`). anvil runs
//! with `--block-time 1 --hardfork cancun` (the EVM this chain runs), `--base-fee 0`, a block
//! gas limit that never binds, chain id 1000, `--silent` (no line printed per transaction)
//! and the funder's balance set with `anvil_setBalance`. Transactions are legacy (EIP-155,
//! chain id 1000) at 25 gwei, the unit price here. Gas limits suit both chains: this one
//! charges 100 gas per input byte where anvil charges 4 or 16. cast, as an independent
//! client, reads balances and nonces from anvil at the end, which must equal ours.
//!
//! Run: `cargo bench --bench contracts` (`CONTRACTS_ROUNDS`, default 4 per node;
//! `CONTRACTS_CALL_ROUNDS`, default 3 per node; `CONTRACTS_PARTS`, default
//! `transfers,calls,import`). Every figure is printed per round, then as median and spread,
//! then as `RESULT` lines.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/foundry.rs"]
mod foundry;

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use common::contracts::{addr_word, compiled, create_address, legacy_tx, uint_word};
use foundry::{foundry, Anvil};
use serde_json::{json, Value};

const CHAIN_ID: u64 = 1000;
/// Gas of one ERC-20 transfer: about 35,000 here (27,800 intrinsic with 68 input bytes at
/// 100 gas), about 30,000-50,000 on anvil.
const TRANSFER_GAS: u64 = 100_000;
/// Holders funded per `batchTransfer`, and its gas (about 26,000 a new holder, 100 a byte).
const BATCH: usize = 200;
const BATCH_GAS: u64 = 8_000_000;
/// Tokens each holder gets; the supply minted to the funder.
const HOLDER_TOKENS: u128 = 1_000_000_000_000_000_000_000_000;
const SUPPLY: u128 = u128::MAX / 2;
/// Native coin each holder gets for gas (100 coins: 40,000 transfers at the full limit).
const HOLDER_COIN: u128 = 100_000_000_000_000_000_000;
/// Receipts asked for in one JSON-RPC batch.
const RECEIPT_BATCH: usize = 200;

fn main() {
    let holders_n = common::env_or("CONTRACTS_HOLDERS", 10_000usize);
    let round_txs = common::env_or("CONTRACTS_ROUND_TXS", 50_000usize);
    let rounds = common::env_or("CONTRACTS_ROUNDS", 4usize);
    let conns = common::env_or("CONTRACTS_CONNS", 8usize);
    let call_rounds = common::env_or("CONTRACTS_CALL_ROUNDS", 3usize);
    let call_secs = common::env_or("CONTRACTS_CALL_SECS", 5.0f64);
    let import_txs = common::env_or("CONTRACTS_IMPORT_TXS", 100_000usize);
    let import_runs = common::env_or("CONTRACTS_IMPORT_RUNS", 3usize);
    let parts =
        std::env::var("CONTRACTS_PARTS").unwrap_or_else(|_| "transfers,calls,import".into());
    let part = |p: &str| parts.split(',').any(|x| x == p);
    // `CONTRACTS_NODES=ours`: anvil only gets the set-up (for profiling ours alone).
    let with_anvil = std::env::var("CONTRACTS_NODES").map_or(true, |v| v.contains("anvil"));
    let with_ours = std::env::var("CONTRACTS_NODES").map_or(true, |v| v.contains("ours"));

    let (anvil_bin, cast_bin) = foundry();
    let work = tempfile::tempdir().unwrap();
    println!(
        "contracts: {holders_n} holders, rounds of {round_txs} transfers over {conns} connections, {} cores, load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg()
    );

    let funder = SecretKey::from_slice(&[0xf1; 32]).unwrap();
    let t = Instant::now();
    let holders = common::numbered_keys(holders_n as u64);
    let holder_addrs: Vec<Address> = holders.iter().map(|k| k.address()).collect();
    println!(
        "  {holders_n} holder keys in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    let token = create_address(&funder.address(), 0);

    // Our node: a genesis funding the funder, sealed by its validator with --dev.
    let genesis = work.path().join("genesis.json");
    let (ours_dir, validator) = validator_dir(work.path());
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
    ours_args.extend(common::http_args("chain,admin"));
    let mut ours_node = common::Node::start_in(ours_dir, &ours_args);
    let ours = Endpoint {
        name: "ours",
        addr: addr_of(ours_node.http.as_ref().unwrap()),
        prefix: "chain",
        pid: ours_node.child.id(),
    };
    let anvil_proc = Anvil::start(
        &anvil_bin,
        &work.path().join("anvil.log"),
        &[
            "--chain-id",
            &CHAIN_ID.to_string(),
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
        ],
    );
    let anvil = Endpoint {
        name: "anvil",
        addr: anvil_proc.addr.clone(),
        prefix: "eth",
        pid: anvil_proc.child.id(),
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

    // Set-up, the same signed transactions on both: deploy, tokens, coin.
    let t = Instant::now();
    let tok = compiled("Token");
    let mut setup = vec![legacy_tx(
        &funder,
        0,
        None,
        0,
        tok.with_args(&[uint_word(SUPPLY)]),
        5_000_000,
    )];
    let mut nonce = 1;
    for chunk in holder_addrs.chunks(BATCH) {
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
    for a in &holder_addrs {
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
    let setup: Vec<(String, String)> = setup
        .iter()
        .map(|tx| {
            (
                format!("0x{}", hex::encode(tx.encode())),
                format!("0x{}", hex::encode(tx.hash())),
            )
        })
        .collect();
    println!(
        "  signed {} set-up transactions in {:.2} s",
        setup.len(),
        t.elapsed().as_secs_f64()
    );
    for ep in [&ours, &anvil] {
        if ep.name == "anvil" && !with_anvil {
            continue;
        }
        let t = Instant::now();
        // The deployment first, alone, so that the calls after it find the code.
        let head = send_and_confirm(ep, &setup[..1]);
        let head = head.max(send_and_confirm(ep, &setup[1..]));
        println!(
            "  set-up on {}: {} transactions confirmed in {:.2} s, head {head}",
            ep.name,
            setup.len(),
            t.elapsed().as_secs_f64()
        );
    }
    let balance_of = |a: &Address| tok.call_data("balanceOf(address)", &[addr_word(a)]);

    // ERC-20 transfers, rounds interleaved.
    let mut nonces = vec![0u64; holders_n];
    let mut figures: Vec<(usize, RoundFigures)> = Vec::new();
    // Our blocks of each round: (first, last, transfers).
    let mut our_blocks: Vec<(u64, u64, usize)> = Vec::new();
    if part("transfers") {
        for r in 0..rounds {
            let t = Instant::now();
            let round = Round::sign(
                &holders,
                &holder_addrs,
                &mut nonces,
                token,
                &tok,
                r,
                round_txs,
                conns,
            );
            println!(
                "round {r}: signed {round_txs} transfers in {:.2} s (load average {})",
                t.elapsed().as_secs_f64(),
                loadavg()
            );
            for (i, ep) in [&ours, &anvil].into_iter().enumerate() {
                if (i == 1 && !with_anvil) || (i == 0 && !with_ours) {
                    continue;
                }
                let other = if i == 0 { &anvil } else { &ours };
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
                if std::env::var_os("CONTRACTS_SHOW_BLOCKS").is_some() {
                    show_blocks(ep, f.first_block, f.last_block);
                }
                if i == 0 {
                    our_blocks.push((f.first_block, f.last_block, round_txs));
                }
                figures.push((i, f));
            }
        }
    }

    // Calls.
    let mut call_figures: Vec<(usize, f64)> = Vec::new();
    let mut floor_figures: Vec<(usize, f64)> = Vec::new();
    let mut ours_has_call = true;
    if part("calls") {
        let bodies: Vec<[String; 2]> = holder_addrs
            .iter()
            .take(1000)
            .map(|a| {
                let params = json!([{"to": format!("0x{}", hex::encode(token.0)),
                                     "data": format!("0x{}", hex::encode(balance_of(a)))}, "latest"]);
                [ours.body("chain_call", &params), anvil.body("eth_call", &params)]
            })
            .collect();
        // Both must answer the same, and ours must have chain_call.
        let probe: Vec<Value> = [&ours, &anvil]
            .iter()
            .enumerate()
            .map(|(i, ep)| ep.raw(&bodies[0][i]))
            .collect();
        println!(
            "calls: balanceOf(holder 0): ours {}, anvil {}",
            probe[0], probe[1]
        );
        if probe[0].get("result").is_none() {
            ours_has_call = false;
            println!("  ours has no chain_call yet: only anvil is measured");
        } else if with_anvil {
            assert_eq!(
                probe[0]["result"], probe[1]["result"],
                "the two chains disagree"
            );
        }
        for r in 0..call_rounds {
            for (i, ep) in [&ours, &anvil].into_iter().enumerate() {
                if (i == 0 && !ours_has_call) || (i == 1 && !with_anvil) {
                    continue;
                }
                let mine: Vec<&str> = bodies.iter().map(|b| b[i].as_str()).collect();
                let (rate, p50, p99, cpu) = (if i == 0 { &anvil } else { &ours })
                    .paused(|| call_load(ep, &mine, conns, Duration::from_secs_f64(call_secs)));
                println!(
                    "  round {r}: {:<5} {rate:>7.0} calls/s (p50 {:.0} µs, p99 {:.0} µs; node {cpu:.2} cores, {:.1} µs of CPU a call)",
                    ep.name,
                    p50 * 1e6,
                    p99 * 1e6,
                    cpu * 1e6 / rate
                );
                call_figures.push((i, rate));
                // The transport's ceiling with the same client: the cheapest method each
                // node has (the head's number), for a few seconds.
                let floor_body = ep.body(&format!("{}_blockNumber", ep.prefix), &json!([]));
                let (floor, _, _, fcpu) = (if i == 0 { &anvil } else { &ours }).paused(|| {
                    call_load(
                        ep,
                        &[floor_body.as_str()],
                        conns,
                        Duration::from_secs_f64(call_secs / 2.0),
                    )
                });
                println!(
                    "           {:<5} {floor:>7.0} {}_blockNumber/s (node {fcpu:.2} cores, {:.1} µs a call)",
                    ep.name,
                    ep.prefix,
                    fcpu * 1e6 / floor
                );
                floor_figures.push((i, floor));
            }
        }
    }

    // Memory after the same run on both.
    let hwm = [vm_hwm_kib(ours.pid), vm_hwm_kib(anvil.pid)];
    println!(
        "memory: VmHWM ours {} MiB, anvil {} MiB",
        hwm[0] / 1024,
        hwm[1] / 1024
    );

    // An independent client (cast) reads the end state from anvil: it must be ours.
    if part("transfers") && with_anvil && with_ours {
        for h in [0, holders_n / 2, holders_n - 1] {
            let a = format!("0x{}", hex::encode(holder_addrs[h].0));
            let nonce = cast(
                &cast_bin,
                &["nonce", &a, "--rpc-url", &format!("http://{}", anvil.addr)],
            );
            let ours_nonce = ours.call("chain_getTransactionCount", json!([a, "latest"]));
            assert_eq!(
                common::quantity_of(&ours_nonce["result"]),
                nonce.trim().parse::<u128>().unwrap(),
                "holder {h}: nonces differ"
            );
            if ours_has_call && part("calls") {
                let bal = cast(
                    &cast_bin,
                    &[
                        "call",
                        &format!("0x{}", hex::encode(token.0)),
                        "balanceOf(address)(uint256)",
                        &a,
                        "--rpc-url",
                        &format!("http://{}", anvil.addr),
                    ],
                );
                let ours_bal = ours.call(
                    "chain_call",
                    json!([{"to": format!("0x{}", hex::encode(token.0)),
                            "data": format!("0x{}", hex::encode(balance_of(&holder_addrs[h])))}, "latest"]),
                );
                let ours_bal = u128::from_str_radix(
                    ours_bal["result"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("0x")
                        .trim_start_matches('0'),
                    16,
                )
                .unwrap_or(0);
                let cast_bal: u128 = bal.split_whitespace().next().unwrap().parse().unwrap();
                assert_eq!(ours_bal, cast_bal, "holder {h}: token balances differ");
            }
        }
        println!("  cast on anvil: the same nonces (and token balances) as ours for three holders");
    }
    drop(anvil_proc);

    // Import of our transfer blocks.
    let mut import_figures: Vec<f64> = Vec::new();
    let mut import_detail = String::new();
    if part("import") && part("transfers") {
        assert_eq!(
            ours_node.terminate(30).map(|s| s.success()),
            Some(true),
            "chaind did not stop"
        );
        let src = ours_node.datadir.path().to_path_buf();
        let (mut last, mut txs) = (0, 0);
        for (_, l, n) in &our_blocks {
            if txs >= import_txs {
                break;
            }
            last = *l;
            txs += n;
        }
        let first = our_blocks[0].0;
        let setup_file = work.path().join("setup.rlp");
        let transfers_file = work.path().join("transfers.rlp");
        export(&src, &setup_file, 1, first - 1);
        export(&src, &transfers_file, first, last);
        let bytes = std::fs::metadata(&transfers_file).unwrap().len();
        println!(
            "import: blocks {first}..={last} ({} blocks, {txs} transfers, {:.1} MB), after the {} set-up blocks",
            last - first + 1,
            bytes as f64 / 1e6,
            first - 1
        );
        // `CONTRACTS_IMPORT_BINS=A,B`: the import runs alternate between these chaind
        // binaries (alternatives side by side); only the first one's runs are the figure.
        let bins: Vec<PathBuf> = std::env::var("CONTRACTS_IMPORT_BINS").map_or_else(
            |_| vec![common::chaind_bin()],
            |v| v.split(',').map(PathBuf::from).collect(),
        );
        for run in 0..import_runs {
            let bin = &bins[run % bins.len()];
            let dir = tempfile::TempDir::new_in(work.path()).unwrap();
            init(dir.path(), &genesis);
            let (secs, _, _) =
                run_chaind(bin, dir.path(), &["import", setup_file.to_str().unwrap()]);
            let (secs_t, rss, cpu) = run_chaind(
                bin,
                dir.path(),
                &["import", transfers_file.to_str().unwrap()],
            );
            println!(
                "  run {run}: {:.0} transfers/s ({txs} in {secs_t:.2} s, {:.2} cores busy; set-up import {secs:.2} s; peak RSS {} MiB; load average {}{})",
                txs as f64 / secs_t,
                cpu / secs_t,
                rss / 1024,
                loadavg(),
                if bins.len() > 1 { format!("; {}", bin.display()) } else { String::new() }
            );
            if run % bins.len() == 0 {
                import_figures.push(txs as f64 / secs_t);
            }
            import_detail = format!("{txs} transfers in {} blocks", last - first + 1);
        }
    }

    // Summary.
    println!();
    println!("summary (medians; spread in brackets):");
    let mut results = Vec::new();
    if !figures.is_empty() {
        let tps = |i| {
            figures
                .iter()
                .filter(|(j, _)| *j == i)
                .map(|(_, f)| f.tps())
                .collect::<Vec<_>>()
        };
        let ingest = |i| {
            figures
                .iter()
                .filter(|(j, _)| *j == i)
                .map(|(_, f)| round_txs as f64 / f.ingest_secs)
                .collect::<Vec<_>>()
        };
        let (o, a) = (tps(0), tps(1));
        let ratios: Vec<f64> = o.iter().zip(&a).map(|(x, y)| x / y).collect();
        println!(
            "  ERC-20 transfers end to end: ours {} tx/s, anvil {} tx/s, ours/anvil {:.2}x [{:.2}-{:.2}]; accepted: ours {}, anvil {}",
            spread(&o),
            spread(&a),
            median(&ratios),
            min(&ratios),
            max(&ratios),
            spread(&ingest(0)),
            spread(&ingest(1))
        );
        results.push(format!("transfers_tps_ours={:.0}", median(&o)));
        results.push(format!("transfers_tps_anvil={:.0}", median(&a)));
        results.push(format!("transfers_ours_vs_anvil={:.2}", median(&ratios)));
    }
    if !call_figures.is_empty() {
        let of = |i| {
            call_figures
                .iter()
                .filter(|(j, _)| *j == i)
                .map(|(_, r)| *r)
                .collect::<Vec<_>>()
        };
        let (o, a) = (of(0), of(1));
        if o.is_empty() {
            println!(
                "  balanceOf calls: anvil {} calls/s; ours: no chain_call",
                spread(&a)
            );
        } else {
            let ratios: Vec<f64> = o.iter().zip(&a).map(|(x, y)| x / y).collect();
            println!(
                "  balanceOf calls at {conns} connections: ours {} calls/s, anvil {} calls/s, ours/anvil {:.2}x [{:.2}-{:.2}]",
                spread(&o),
                spread(&a),
                median(&ratios),
                min(&ratios),
                max(&ratios)
            );
            let floor = |i| {
                floor_figures
                    .iter()
                    .filter(|(j, _)| *j == i)
                    .map(|(_, r)| *r)
                    .collect::<Vec<_>>()
            };
            println!(
                "  the cheapest call (blockNumber) with the same client: ours {} /s, anvil {} /s",
                spread(&floor(0)),
                spread(&floor(1))
            );
            results.push(format!("calls_ours={:.0}", median(&o)));
            results.push(format!("calls_ours_vs_anvil={:.2}", median(&ratios)));
        }
        results.push(format!("calls_anvil={:.0}", median(&a)));
    }
    if !import_figures.is_empty() {
        println!(
            "  import of {import_detail}: {} transfers/s",
            spread(&import_figures)
        );
        results.push(format!("import_tps={:.0}", median(&import_figures)));
    }
    println!(
        "  VmHWM after the run: ours {} MiB, anvil {} MiB: {:.2}",
        hwm[0] / 1024,
        hwm[1] / 1024,
        hwm[0] as f64 / hwm[1] as f64
    );
    results.push(format!("vmhwm_mib_ours={}", hwm[0] / 1024));
    results.push(format!("vmhwm_mib_anvil={}", hwm[1] / 1024));
    for r in results {
        println!("RESULT {r}");
    }
}

// ---------------------------------------------------------------------------------------
// The two nodes.

/// One node's JSON-RPC endpoint: where, its method prefix (`chain` or `eth`) and its pid.
struct Endpoint {
    name: &'static str,
    addr: String,
    prefix: &'static str,
    pid: u32,
}

impl Endpoint {
    fn body(&self, method: &str, params: &Value) -> String {
        json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string()
    }

    /// One call over a fresh connection.
    fn call(&self, method: &str, params: Value) -> Value {
        self.raw(&self.body(method, &params))
    }

    fn raw(&self, body: &str) -> Value {
        let mut c = Conn::new(&self.addr);
        serde_json::from_slice(&c.roundtrip(&request(body))).unwrap()
    }

    fn head(&self, c: &mut Conn) -> u64 {
        let v: Value = serde_json::from_slice(&c.roundtrip(&request(
            &self.body(&format!("{}_blockNumber", self.prefix), &json!([])),
        )))
        .unwrap();
        common::quantity_of(&v["result"]) as u64
    }

    /// CPU seconds (user + system, all threads) the node has used so far.
    /// Runs `f` with this node stopped (SIGSTOP, then SIGCONT): the node not being measured
    /// takes no CPU meanwhile (anvil seals an empty block every second when idle).
    fn paused<T>(&self, f: impl FnOnce() -> T) -> T {
        // SAFETY: signals to our own child.
        unsafe { libc::kill(self.pid as i32, libc::SIGSTOP) };
        let out = f();
        unsafe { libc::kill(self.pid as i32, libc::SIGCONT) };
        out
    }

    fn cpu(&self) -> f64 {
        proc_cpu(self.pid)
    }
}

/// Prints the transactions and the time of blocks `first..=last` (a diagnosis).
fn show_blocks(ep: &Endpoint, first: u64, last: u64) {
    let mut line = String::new();
    for n in first..=last {
        let b = ep.call(
            &format!("{}_getBlockByNumber", ep.prefix),
            json!([format!("0x{n:x}"), false]),
        );
        let b = &b["result"];
        line.push_str(&format!(
            " {n}:{}@{}",
            b["transactions"].as_array().map_or(0, Vec::len),
            common::quantity_of(&b["timestamp"]) % 1000
        ));
    }
    println!("    blocks (number:transactions@time mod 1000 s):{line}");
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

fn init(dir: &Path, genesis: &Path) {
    let out = common::chaind_run(dir, &["init", genesis.to_str().unwrap()]);
    assert!(out.status.success(), "chaind init: {out:?}");
}

fn export(dir: &Path, file: &Path, first: u64, last: u64) {
    let out = common::chaind_run(
        dir,
        &[
            "export",
            file.to_str().unwrap(),
            &first.to_string(),
            &last.to_string(),
        ],
    );
    assert!(out.status.success(), "chaind export: {out:?}");
}

/// `chaind --datadir DIR ARGS...` to its end: seconds, its peak RSS in KiB and the CPU
/// seconds it used.
// The child is waited for with wait4 (for its resource use), which clippy does not see.
#[allow(clippy::zombie_processes)]
fn run_chaind(bin: &Path, dir: &Path, args: &[&str]) -> (f64, u64, f64) {
    let t = Instant::now();
    let child = Command::new(bin)
        .arg("--datadir")
        .arg(dir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    // The exit status and resource use together (wait4), before the stderr is read: the
    // import writes little there.
    let mut status = 0;
    // SAFETY: waits for our own child and fills the rusage we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    let secs = t.elapsed().as_secs_f64();
    assert_eq!(r, pid);
    let mut err = String::new();
    child.stderr.unwrap().read_to_string(&mut err).unwrap();
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "chaind {args:?}: {err}"
    );
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    (secs, ru.ru_maxrss as u64, t(ru.ru_utime) + t(ru.ru_stime))
}

fn cast(bin: &Path, args: &[&str]) -> String {
    let out = Command::new(bin).args(args).output().unwrap();
    assert!(
        out.status.success(),
        "cast {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

// ---------------------------------------------------------------------------------------
// The client: keep-alive HTTP/1.1, one request in flight per connection.

fn request(body: &str) -> Vec<u8> {
    format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

struct Conn {
    w: TcpStream,
    r: BufReader<TcpStream>,
    line: String,
}

impl Conn {
    fn new(addr: &str) -> Conn {
        let w = TcpStream::connect(addr).unwrap();
        w.set_nodelay(true).unwrap();
        w.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        let r = BufReader::with_capacity(1 << 16, w.try_clone().unwrap());
        Conn {
            w,
            r,
            line: String::new(),
        }
    }

    /// Sends one prepared request; the response body (Content-Length or chunked).
    fn roundtrip(&mut self, req: &[u8]) -> Vec<u8> {
        self.w.write_all(req).unwrap();
        let mut len = None;
        let mut chunked = false;
        let mut status_line = true;
        loop {
            self.line.clear();
            self.r.read_line(&mut self.line).unwrap();
            if self.line.is_empty() {
                panic!("connection closed");
            }
            if status_line {
                assert!(self.line.starts_with("HTTP/1.1 200"), "{}", self.line);
                status_line = false;
                continue;
            }
            if self.line == "\r\n" {
                break;
            }
            let (k, v) = self.line.split_once(':').unwrap();
            if k.eq_ignore_ascii_case("content-length") {
                len = Some(v.trim().parse::<usize>().unwrap());
            } else if k.eq_ignore_ascii_case("transfer-encoding")
                && v.trim().eq_ignore_ascii_case("chunked")
            {
                chunked = true;
            }
        }
        if let Some(n) = len {
            let mut b = vec![0; n];
            self.r.read_exact(&mut b).unwrap();
            return b;
        }
        assert!(chunked, "a response with neither length nor chunks");
        let mut b = Vec::new();
        loop {
            self.line.clear();
            self.r.read_line(&mut self.line).unwrap();
            let n = usize::from_str_radix(self.line.trim(), 16).unwrap();
            let start = b.len();
            b.resize(start + n + 2, 0);
            self.r.read_exact(&mut b[start..]).unwrap();
            b.truncate(start + n);
            if n == 0 {
                return b;
            }
        }
    }
}

/// Sends `txs` (raw, hash) in order over one connection, then waits until each has a
/// receipt with status 1 (a set-up step, not timed). The head block then.
fn send_and_confirm(ep: &Endpoint, txs: &[(String, String)]) -> u64 {
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
fn sealed_prefix(ep: &Endpoint, c: &mut Conn, hashes: &[String]) -> usize {
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
fn confirm(ep: &Endpoint, c: &mut Conn, waiting: &Mutex<VecDeque<String>>) -> (usize, usize) {
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

// ---------------------------------------------------------------------------------------
// Transfer rounds.

/// One signed transfer: its request to our node, its request to anvil, its hash.
type Signed = (Vec<u8>, Vec<u8>, String);

/// The transfers of one round, signed, as HTTP requests per connection, with their hashes.
struct Round {
    per_conn: Vec<Vec<Signed>>,
    total: usize,
}

/// What one round on one node gave.
struct RoundFigures {
    ingest_secs: f64,
    receipts_secs: f64,
    first_block: u64,
    last_block: u64,
    polls: usize,
    node_cpu: f64,
    client_cpu: f64,
    /// CPU µs per transfer of the node's busiest threads.
    threads: String,
    total: usize,
}

impl RoundFigures {
    fn tps(&self) -> f64 {
        self.total as f64 / self.receipts_secs
    }
}

impl Round {
    /// Round `r`: `total` transfers of 1 token unit, holder `h` sending (in nonce order) to
    /// holder `h + 1 + r` (mod the holders), the holders taken in turn; holder `h`'s
    /// transfers go over connection `h % conns`.
    #[allow(clippy::too_many_arguments)]
    fn sign(
        holders: &[SecretKey],
        addrs: &[Address],
        nonces: &mut [u64],
        token: Address,
        tok: &common::contracts::Compiled,
        r: usize,
        total: usize,
        conns: usize,
    ) -> Round {
        let n = holders.len();
        let selector = tok.selector("transfer(address,uint256)");
        // (holder, nonce, recipient) in sending order.
        let plan: Vec<(usize, u64, usize)> = (0..total)
            .map(|i| {
                let h = i % n;
                let nonce = nonces[h] + (i / n) as u64;
                (h, nonce, (h + 1 + r % (n - 1)) % n)
            })
            .collect();
        for (i, nonce) in nonces.iter_mut().enumerate() {
            *nonce += (total / n + usize::from(i < total % n)) as u64;
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = total.div_ceil(threads);
        let signed: Vec<(usize, Vec<u8>, Vec<u8>, String)> = std::thread::scope(|s| {
            let hs: Vec<_> = plan
                .chunks(chunk)
                .map(|part| {
                    let selector = &selector;
                    s.spawn(move || {
                        part.iter()
                            .map(|&(h, nonce, to)| {
                                let mut data = selector.clone();
                                data.extend_from_slice(&addr_word(&addrs[to]));
                                data.extend_from_slice(&uint_word(1));
                                let tx = legacy_tx(&holders[h], nonce, Some(token), 0, data, TRANSFER_GAS);
                                let raw = format!("0x{}", hex::encode(tx.encode()));
                                let hash = format!("0x{}", hex::encode(tx.hash()));
                                let body = |prefix: &str| {
                                    request(&format!(
                                        r#"{{"jsonrpc":"2.0","id":1,"method":"{prefix}_sendRawTransaction","params":["{raw}"]}}"#
                                    ))
                                };
                                (h, body("chain"), body("eth"), hash)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut per_conn = vec![Vec::new(); conns];
        for (h, ours, anvil, hash) in signed {
            per_conn[h % conns].push((ours, anvil, hash));
        }
        Round { per_conn, total }
    }

    /// Sends the round to `ep` and waits for every receipt.
    fn run(&self, ep: &Endpoint) -> RoundFigures {
        let conns = self.per_conn.len();
        let mut probe = Conn::new(&ep.addr);
        let start_head = ep.head(&mut probe);
        // Each connection's sent, unconfirmed hashes, oldest first.
        let sent: Vec<Mutex<VecDeque<String>>> =
            (0..conns).map(|_| Mutex::new(VecDeque::new())).collect();
        let senders_left = AtomicUsize::new(conns);
        let last_sent: Mutex<Option<Instant>> = Mutex::new(None);
        let confirmed = AtomicUsize::new(0);
        let done = AtomicBool::new(false);
        let barrier = Barrier::new(conns + 2);
        let anvil = ep.prefix == "eth";
        // `CONTRACTS_LAST_ONLY`: the clock stops when each connection's last transfer is
        // sealed, and only those receipts are asked for (what the receipts cost, by
        // difference).
        let last_only = std::env::var_os("CONTRACTS_LAST_ONLY").is_some();
        let node_cpu = ep.cpu();
        let threads = thread_cpu(ep.pid);
        let client_cpu = proc_cpu(std::process::id());
        let mut ingest_secs = 0.0;
        let mut receipts_secs = 0.0;
        let mut polls = 0;
        let mut last_block = 0;
        std::thread::scope(|s| {
            for (i, reqs) in self.per_conn.iter().enumerate() {
                let (sent, barrier, senders_left, addr, last_sent) =
                    (&sent[i], &barrier, &senders_left, &ep.addr, &last_sent);
                s.spawn(move || {
                    let mut c = Conn::new(addr);
                    barrier.wait();
                    for (ours, anv, hash) in reqs {
                        let reply = c.roundtrip(if anvil { anv } else { ours });
                        if !reply.starts_with(br#"{"jsonrpc":"2.0","id":1,"result""#)
                            && !String::from_utf8_lossy(&reply).contains("\"result\"")
                        {
                            panic!("refused: {}", String::from_utf8_lossy(&reply));
                        }
                        sent.lock().unwrap().push_back(hash.clone());
                    }
                    if senders_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                        *last_sent.lock().unwrap() = Some(Instant::now());
                    }
                });
            }
            // The watcher: when the head moves, the receipts of each connection's oldest
            // unconfirmed transfers.
            let watcher = s.spawn(|| {
                let mut c = Conn::new(&ep.addr);
                barrier.wait();
                let t0 = Instant::now();
                let mut seen_head = start_head;
                let mut polls = 0;
                loop {
                    let head = ep.head(&mut c);
                    if head == seen_head {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                    seen_head = head;
                    for q in &sent {
                        if last_only {
                            // Diagnosis: only each connection's last transfer, once all
                            // are sent (a block holds every transfer sent before it).
                            if senders_left.load(Ordering::Acquire) > 0 {
                                break;
                            }
                            let last = q.lock().unwrap().back().cloned();
                            if let Some(last) = last {
                                polls += 1;
                                if sealed_prefix(ep, &mut c, &[last]) == 1 {
                                    let n = q.lock().unwrap().drain(..).count();
                                    confirmed.fetch_add(n, Ordering::AcqRel);
                                }
                            }
                            continue;
                        }
                        let (found, batches) = confirm(ep, &mut c, q);
                        polls += batches;
                        confirmed.fetch_add(found, Ordering::AcqRel);
                    }
                    if confirmed.load(Ordering::Acquire) == self.total {
                        let secs = t0.elapsed().as_secs_f64();
                        done.store(true, Ordering::Release);
                        return (t0, secs, polls, head);
                    }
                }
            });
            barrier.wait();
            let (t0, r, p, h) = watcher.join().unwrap();
            ingest_secs = last_sent
                .lock()
                .unwrap()
                .unwrap()
                .duration_since(t0)
                .as_secs_f64();
            receipts_secs = r;
            polls = p;
            last_block = h;
        });
        assert!(done.load(Ordering::Acquire));
        RoundFigures {
            ingest_secs,
            receipts_secs,
            first_block: start_head + 1,
            last_block,
            polls,
            node_cpu: ep.cpu() - node_cpu,
            threads: per_tx(&threads, &thread_cpu(ep.pid), self.total),
            client_cpu: proc_cpu(std::process::id()) - client_cpu,
            total: self.total,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Calls.

/// `conns` connections, one call in flight each, cycling through `bodies` for `secs`:
/// calls/s, p50 and p99 latency (s), the node's cores busy.
fn call_load(ep: &Endpoint, bodies: &[&str], conns: usize, secs: Duration) -> (f64, f64, f64, f64) {
    let reqs: Vec<Vec<u8>> = bodies.iter().map(|b| request(b)).collect();
    let barrier = Barrier::new(conns + 1);
    let stop = AtomicBool::new(false);
    let cpu0 = ep.cpu();
    let mut lat: Vec<f64> = Vec::new();
    let t0 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..conns)
            .map(|i| {
                let (reqs, barrier, stop) = (&reqs, &barrier, &stop);
                s.spawn(move || {
                    let mut c = Conn::new(&ep.addr);
                    let mut lat = Vec::with_capacity(1 << 16);
                    // Warm-up: one pass over a few bodies.
                    for r in reqs.iter().take(50) {
                        c.roundtrip(r);
                    }
                    barrier.wait();
                    let mut k = i * 97;
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        let reply = c.roundtrip(&reqs[k % reqs.len()]);
                        lat.push(t.elapsed().as_secs_f64());
                        assert!(
                            reply.windows(9).any(|w| w == b"\"result\":"),
                            "{}",
                            String::from_utf8_lossy(&reply)
                        );
                        k += 1;
                    }
                    lat
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        std::thread::sleep(secs);
        stop.store(true, Ordering::Relaxed);
        for h in hs {
            lat.extend(h.join().unwrap());
        }
        t0
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let cpu = (ep.cpu() - cpu0) / elapsed;
    lat.sort_by(f64::total_cmp);
    let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    (lat.len() as f64 / elapsed, p(0.5), p(0.99), cpu)
}

// ---------------------------------------------------------------------------------------
// The machine.

fn proc_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / hz
}

/// CPU seconds of each thread name of process `pid` (threads that ended are not counted).
fn thread_cpu(pid: u32) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in dir.flatten() {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let (Some(a), Some(b)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[a + 1..b].to_string();
        let f: Vec<&str> = stat[b + 1..].split_whitespace().collect();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        *out.entry(name).or_insert(0.0) += (ticks(11) + ticks(12)) / hz;
    }
    out
}

/// Microseconds of CPU per transaction by thread name between two [`thread_cpu`] readings,
/// the largest first.
fn per_tx(
    before: &std::collections::BTreeMap<String, f64>,
    after: &std::collections::BTreeMap<String, f64>,
    txs: usize,
) -> String {
    let mut v: Vec<(String, f64)> = after
        .iter()
        .map(|(k, a)| (k.clone(), a - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.iter()
        .take(5)
        .map(|(k, d)| format!("{k} {:.0}", d * 1e6 / txs as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    // An even count: the mean of the two middle values.
    (s[(s.len() - 1) / 2] + s[s.len() / 2]) / 2.0
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

fn spread(v: &[f64]) -> String {
    format!("{:.0} [{:.0}-{:.0}]", median(v), min(v), max(v))
}
