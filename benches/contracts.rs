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

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use chain_node::crypto::Address;
use common::contracts::{addr_word, compiled, legacy_tx, uint_word};
use conn::request;
use foundry::foundry;
use nodes::{init, run_setup, token_setup, Endpoint, Pair};
use rounds::{call_load, Round, RoundFigures};
use serde_json::{json, Value};
use stats::{loadavg, max, median, min, spread, vm_hwm_kib};

/// Gas of one ERC-20 transfer: about 35,000 here (27,800 intrinsic with 68 input bytes at
/// 100 gas), about 30,000-50,000 on anvil.
const TRANSFER_GAS: u64 = 100_000;

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

    let t = Instant::now();
    let holders = common::numbered_keys(holders_n as u64);
    let holder_addrs: Vec<Address> = holders.iter().map(|k| k.address()).collect();
    println!(
        "  {holders_n} holder keys in {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let Pair {
        mut ours_node,
        anvil_proc,
        ours,
        anvil,
        genesis,
    } = Pair::start(work.path(), &anvil_bin, "chain,admin", "chain");

    // Set-up, the same signed transactions on both: deploy, tokens, coin.
    let t = Instant::now();
    let tok = compiled("Token");
    let (token, setup) = token_setup(&tok, &holder_addrs);
    println!(
        "  signed {} set-up transactions in {:.2} s",
        setup.len(),
        t.elapsed().as_secs_f64()
    );
    for ep in [&ours, &anvil] {
        if ep.name == "anvil" && !with_anvil {
            continue;
        }
        run_setup(ep, &setup);
    }
    let balance_of = |a: &Address| tok.call_data("balanceOf(address)", &[addr_word(a)]);

    // ERC-20 transfers, rounds interleaved.
    let mut nonces = vec![0u64; holders_n];
    let mut figures: Vec<(usize, RoundFigures)> = Vec::new();
    // Our blocks of each round: (first, last, transfers).
    let mut our_blocks: Vec<(u64, u64, usize)> = Vec::new();
    // `CONTRACTS_LAST_ONLY`: the clock stops when each connection's last transfer is
    // sealed, and only those receipts are asked for (what the receipts cost, by difference).
    let last_only = std::env::var_os("CONTRACTS_LAST_ONLY").is_some();
    let transfer = tok.selector("transfer(address,uint256)");
    if part("transfers") {
        for r in 0..rounds {
            let t = Instant::now();
            let mut round = Round::sign(
                holders_n,
                &mut nonces,
                r,
                round_txs,
                conns,
                |h, nonce, to| {
                    let mut data = transfer.clone();
                    data.extend_from_slice(&addr_word(&holder_addrs[to]));
                    data.extend_from_slice(&uint_word(1));
                    let tx = legacy_tx(&holders[h], nonce, Some(token), 0, data, TRANSFER_GAS);
                    let raw = format!("0x{}", hex::encode(tx.encode()));
                    let body = |prefix: &str| {
                        request(&format!(
                            r#"{{"jsonrpc":"2.0","id":1,"method":"{prefix}_sendRawTransaction","params":["{raw}"]}}"#
                        ))
                    };
                    (
                        body("chain"),
                        body("eth"),
                        format!("0x{}", hex::encode(tx.hash())),
                    )
                },
            );
            round.last_only = last_only;
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
