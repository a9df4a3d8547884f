//! Start-up time of `chaind --dev`: from spawning the process to its first successful answer
//! of `chain_blockNumber` over HTTP on 127.0.0.1 (`--rpcport 0`; the port is read from the
//! log line `HTTP endpoint opened url=...`), side by side with anvil (foundry's dev node,
//! `eth_blockNumber`, on a port chosen beforehand).
//!
//! - **Fresh.** A new, empty data directory each time: ours creates the developer account
//!   (its key file), the genesis block, the node key. anvil on its defaults.
//! - **Restart.** One data directory holding a chain of `STARTUP_CHAIN_TXS` (default 50,000)
//!   value transfers to as many new accounts, built once at the beginning (not timed): a
//!   `--dev` node on a fresh directory, ten senders funded by the developer account, then the
//!   pre-signed transfers in JSON-RPC batches of 500; the node is stopped with SIGTERM. Each
//!   restart starts `--dev` on it again; besides the first `chain_blockNumber`, the time of the
//!   first answer that reads the state (`chain_getBalance` of the developer account at the
//!   head) is reported.
//!
//! Each node runs as a user would start it: our default p2p listener (on port 0) and IPC
//! endpoint are opened too, and no `--lightkdf`. The client polls every 0.5 ms, one request
//! per connection. Rounds are interleaved (fresh ours, fresh anvil, restart ours, ...); every
//! node is stopped (SIGTERM, then waited for) before the next starts.
//!
//! Run: `cargo bench --bench startup` (`STARTUP_ROUNDS`, default 15; `STARTUP_BINS=a,b`
//! measures these chaind binaries side by side instead of the one built with the bench, each
//! on a chain it built itself; `STARTUP_CHAIN_DIR` keeps the chains there, one directory per
//! binary, built when missing and used as they are when present). anvil comes from npm as
//! for `contracts.rs` (`support/foundry.rs`). Prints each round, the median, best and worst
//! of each figure, then `RESULT` lines.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/foundry.rs"]
mod foundry;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use serde_json::{json, Value};

/// The chain id of `--dev` (its default).
const CHAIN_ID: u64 = 1000;
/// Senders of the chain's transfers, funded by the developer account.
const SENDERS: u64 = 10;
/// Transactions per JSON-RPC batch while building the chain.
const BATCH: usize = 500;

fn main() {
    let rounds = common::env_or("STARTUP_ROUNDS", 15usize);
    let chain_txs = common::env_or("STARTUP_CHAIN_TXS", 50_000usize);
    // `STARTUP_BINS=a,b`: these chaind binaries side by side (another build, say), each on
    // a chain it built itself; by default the one built with this bench.
    let bins: Vec<PathBuf> = std::env::var("STARTUP_BINS").map_or_else(
        |_| vec![common::chaind_bin()],
        |v| v.split(',').map(PathBuf::from).collect(),
    );
    let (anvil_bin, _) = foundry::foundry();
    let work = tempfile::tempdir().unwrap();
    println!(
        "startup: {rounds} rounds, a chain of {chain_txs} transfers, {} cores, load average {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        loadavg()
    );

    // `STARTUP_CHAIN_DIR`: the restarts' chains are kept there, one directory per binary
    // (0, 1, ...; built when missing, used as they are when present), for profiling a start
    // by hand.
    let chains = std::env::var_os("STARTUP_CHAIN_DIR")
        .map_or_else(|| work.path().to_path_buf(), PathBuf::from);
    let mut ours: Vec<Ours> = Vec::new();
    for (i, bin) in bins.iter().enumerate() {
        let chain = chains.join(i.to_string());
        let t = Instant::now();
        if !chain.exists() {
            build_chain(bin, &chain, chain_txs);
        }
        println!(
            "  ours{i} = {}: chain ready in {:.1} s, {} blocks, {} MB in chaindata",
            bin.display(),
            t.elapsed().as_secs_f64(),
            head_after_restart(bin, &chain),
            dir_bytes(&chain.join("chaindata")) >> 20
        );
        ours.push(Ours {
            bin: bin.clone(),
            chain,
            fresh: Vec::new(),
            restart: Vec::new(),
            restart_state: Vec::new(),
        });
    }

    let mut anvil = Vec::new();
    for r in 0..rounds {
        let mut line = format!("  round {r}:");
        for (i, o) in ours.iter_mut().enumerate() {
            let dir = tempfile::TempDir::new_in(work.path()).unwrap();
            let (ms, _) = ours_start(&o.bin, dir.path(), None);
            o.fresh.push(ms);
            line.push_str(&format!(" fresh ours{i} {ms:.1} ms,"));
        }

        let a = foundry::Anvil::spawn(&anvil_bin, &work.path().join("anvil.log"), &[]);
        let t = Instant::now();
        first_answer(&a.addr, "eth_blockNumber", json!([]), t);
        anvil.push(t.elapsed().as_secs_f64() * 1e3);
        drop(a);
        line.push_str(&format!(" fresh anvil {:.1} ms,", anvil[r]));

        for (i, o) in ours.iter_mut().enumerate() {
            let (ms, state) = ours_start(&o.bin, &o.chain, Some(dev_account(&o.chain)));
            let state = state.unwrap();
            o.restart.push(ms);
            o.restart_state.push(state);
            line.push_str(&format!(
                " restart ours{i} {ms:.1} ms (state read {state:.1} ms),"
            ));
        }
        println!("{}", line.trim_end_matches(','));
    }

    println!("start to the first answer, ms           median    best   worst");
    let mut rows: Vec<(String, String, &[f64])> = Vec::new();
    for (i, o) in ours.iter().enumerate() {
        rows.push((
            format!("fresh, ours{i}"),
            format!("fresh_ours{i}"),
            &o.fresh,
        ));
    }
    rows.push(("fresh, anvil".into(), "fresh_anvil".into(), &anvil));
    for (i, o) in ours.iter().enumerate() {
        rows.push((
            format!("restart, ours{i}"),
            format!("restart_ours{i}"),
            &o.restart,
        ));
        rows.push((
            format!("restart, ours{i}, first state read"),
            format!("restart_ours{i}_state"),
            &o.restart_state,
        ));
    }
    for (name, _, v) in &rows {
        println!(
            "  {name:<36} {:>7.1} {:>7.1} {:>7.1}",
            median(v),
            min(v),
            max(v)
        );
    }
    for (_, key, v) in &rows {
        println!("RESULT {key}_ms_median={:.1}", median(v));
        println!("RESULT {key}_ms_worst={:.1}", max(v));
    }
}

/// One chaind binary under test: where its restarts' chain is, and its figures (ms).
struct Ours {
    bin: PathBuf,
    chain: PathBuf,
    fresh: Vec<f64>,
    restart: Vec<f64>,
    restart_state: Vec<f64>,
}

/// `chaind --datadir DIR --dev` with HTTP on 127.0.0.1 port 0, as a user starts it (IPC and
/// the p2p listener too; p2p on port 0 so as not to contend for the default port), its
/// stderr piped for [`http_addr`].
fn spawn_ours(bin: &Path, dir: &Path) -> Child {
    Command::new(bin)
        .arg("--datadir")
        .arg(dir)
        .args(["--dev", "--port", "0", "--p2paddr", "127.0.0.1"])
        .args(common::http_args("chain"))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chaind")
}

/// Reads `child`'s stderr until the HTTP endpoint's line; returns `127.0.0.1:PORT` and
/// leaves a thread draining the rest (so that the node never blocks on a full pipe).
fn http_addr(child: &mut Child) -> String {
    let mut r = BufReader::new(child.stderr.take().unwrap());
    let mut seen = String::new();
    loop {
        let mut line = String::new();
        assert!(
            r.read_line(&mut line).unwrap() > 0,
            "chaind ended before opening HTTP:\n{seen}"
        );
        if line.contains("HTTP endpoint opened") {
            let url = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("url="))
                .unwrap();
            std::thread::spawn(move || std::io::copy(&mut r, &mut std::io::sink()));
            return url.trim_start_matches("http://").to_string();
        }
        seen.push_str(&line);
    }
}

/// One start of ours on `dir`, stopped again: milliseconds to the first `chain_blockNumber`
/// and, with `state_of`, to the first `chain_getBalance` of that account after it.
fn ours_start(bin: &Path, dir: &Path, state_of: Option<String>) -> (f64, Option<f64>) {
    let t = Instant::now();
    let mut child = spawn_ours(bin, dir);
    let addr = http_addr(&mut child);
    first_answer(&addr, "chain_blockNumber", json!([]), t);
    let ms = t.elapsed().as_secs_f64() * 1e3;
    let state = state_of.map(|a| {
        let v = first_answer(&addr, "chain_getBalance", json!([a, "latest"]), t);
        assert_ne!(v, json!("0x0"), "the developer account has coin");
        t.elapsed().as_secs_f64() * 1e3
    });
    stop(child);
    (ms, state)
}

/// SIGTERM, then waits for the exit (a clean shutdown: the next start finds no repair to do).
fn stop(mut child: Child) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let st = child.wait().unwrap();
    assert!(st.success(), "chaind exited with {st}");
}

/// Polls `addr` every 0.5 ms (a new connection each time) until `method` is answered with a
/// result, which is returned; fails after 30 s from `since`.
fn first_answer(addr: &str, method: &str, params: Value, since: Instant) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let req = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    loop {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "{addr} did not answer {method}"
        );
        if let Some(v) = try_call(addr, &req) {
            if let Some(r) = v.get("result") {
                return r.clone();
            }
        }
        std::thread::sleep(Duration::from_micros(500));
    }
}

/// One request over a new connection: the parsed body, or None when the connection or the
/// exchange failed.
fn try_call(addr: &str, req: &str) -> Option<Value> {
    let mut s = TcpStream::connect(addr).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(10))).ok()?;
    s.write_all(req.as_bytes()).ok()?;
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).ok()?;
    let text = String::from_utf8_lossy(&resp);
    let (head, body) = text.split_once("\r\n\r\n")?;
    if !head.starts_with("HTTP/1.1 200") {
        return None;
    }
    serde_json::from_str(body).ok()
}

/// The developer account of a `--dev` data directory, `0x` + 40 hex digits.
fn dev_account(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("dev-account"))
        .unwrap()
        .trim()
        .to_string()
}

/// The developer account's key, decrypted from its key file (passphrase empty).
fn dev_key(dir: &Path) -> SecretKey {
    let address = Address::parse_lenient(&dev_account(dir)).unwrap();
    let file = common::key_files(&dir.join("keystore")).pop().unwrap();
    chain_node::keystore::load_key_file(&file, address, "").unwrap()
}

/// Builds the restart's chain in `dir`: a fresh `--dev` node, [`SENDERS`] senders funded by
/// the developer account, then `txs` transfers from them to as many new accounts; the node
/// is stopped cleanly.
fn build_chain(bin: &Path, dir: &Path, txs: usize) {
    std::fs::create_dir_all(dir).unwrap();
    let mut child = spawn_ours(bin, dir);
    let addr = http_addr(&mut child);
    let url = format!("http://{addr}");
    let dev = dev_key(dir);
    let senders = common::numbered_keys(SENDERS);
    let funding: Vec<String> = senders
        .iter()
        .enumerate()
        .map(|(i, s)| {
            common::raw_transfer(
                &dev,
                i as u64,
                s.address(),
                10u128.pow(24),
                common::PRICE,
                CHAIN_ID,
            )
        })
        .collect();
    send(&url, &funding);
    wait_nonce(&url, &dev.address(), SENDERS);
    let mut nonces = vec![0u64; senders.len()];
    let signed: Vec<String> = (0..txs)
        .map(|i| {
            let tx = common::numbered_transfer(&senders, &mut nonces, i, CHAIN_ID);
            format!("0x{}", hex::encode(tx.encode()))
        })
        .collect();
    for chunk in signed.chunks(BATCH) {
        send(&url, chunk);
    }
    for (s, n) in senders.iter().zip(&nonces) {
        wait_nonce(&url, &s.address(), *n);
    }
    stop(child);
}

/// Sends raw transactions in one JSON-RPC batch; every one must be accepted.
fn send(url: &str, raws: &[String]) {
    let batch: Vec<Value> = raws
        .iter()
        .enumerate()
        .map(|(i, raw)| {
            json!({"jsonrpc": "2.0", "id": i, "method": "chain_sendRawTransaction", "params": [raw]})
        })
        .collect();
    let (status, body) = common::http_post(url, &Value::Array(batch).to_string());
    assert_eq!(status, 200, "{body}");
    let replies: Vec<Value> = serde_json::from_str(&body).unwrap();
    for r in replies {
        assert!(r.get("result").is_some(), "refused: {r}");
    }
}

/// Waits until `who`'s nonce at the head reaches `n`.
fn wait_nonce(url: &str, who: &Address, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let v = common::ok(common::http_call(
            url,
            "chain_getTransactionCount",
            json!([format!("0x{}", hex::encode(who.0)), "latest"]),
        ));
        if common::quantity_of(&v) as u64 >= n {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "the chain did not take {n} transactions of {who}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The head number of the chain in `dir` (a start of its own, not timed).
fn head_after_restart(bin: &Path, dir: &Path) -> u64 {
    let mut child = spawn_ours(bin, dir);
    let addr = http_addr(&mut child);
    let v = first_answer(&addr, "chain_blockNumber", json!([]), Instant::now());
    stop(child);
    common::quantity_of(&v) as u64
}

/// Bytes of the files under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    let m = e.metadata().unwrap();
                    if m.is_dir() {
                        dir_bytes(&e.path())
                    } else {
                        m.len()
                    }
                })
                .sum()
        })
        .unwrap_or(0)
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}
