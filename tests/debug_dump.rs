//! `debug_dumpBlock` and `debug_dumpStateTrie` over a state of many accounts, through the
//! binary: the node's memory grows by about one reply while it dumps (the reply is written
//! once as text, not built as a JSON tree and copied), other calls are answered meanwhile,
//! one dump runs at a time, and a dump can be asked for in pages.
//!
//! The accounts come from the genesis's `alloc` (`chaind init`), which makes a state of
//! 100,000 accounts in a few seconds; `DUMP_ACCOUNTS` sets another number.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{json, Value};

/// The refusal of a second dump while one runs (`api/dump.rs`).
const BUSY: &str =
    "another dump is running: debug_dumpBlock and debug_dumpStateTrie run one at a time";

/// How long a `chain_blockNumber` or `chain_getBalance` may take while a dump runs: a bound
/// for a loaded CI machine (they take about a millisecond on a quiet one; before, with every
/// worker dumping, they waited for a dump to end).
const CALL_BOUND: Duration = Duration::from_secs(1);

/// Account `i` of the genesis: `0x5a..5a<i as 8 bytes>`.
fn address(i: u64) -> String {
    format!("0x{}{:016x}", "5a".repeat(12), i)
}

/// Its balance, in wei.
fn balance(i: u64) -> u64 {
    1_000_000_007 + i
}

/// A node (HTTP with `chain` and `debug`, WebSocket, IPC) whose genesis funds `n` accounts.
fn node_with_accounts(n: u64) -> Node {
    let dir = tempfile::tempdir().unwrap();
    let mut alloc = String::with_capacity(n as usize * 80);
    for i in 0..n {
        if i > 0 {
            alloc.push(',');
        }
        alloc.push_str(&format!(
            r#""{}":{{"balance":"{}"}}"#,
            address(i),
            balance(i)
        ));
    }
    let genesis = format!(
        r#"{{"config":{{"chainId":9031}},"validator":"0x{}","alloc":{{{alloc}}}}}"#,
        "11".repeat(20)
    );
    let file = dir.path().join("genesis.json");
    std::fs::write(&file, genesis).unwrap();
    let datadir = tempfile::TempDir::new_in(dir.path()).unwrap();
    chaind_init(datadir.path(), &file);
    let mut args = http_args("chain,debug").to_vec();
    args.extend(ws_args("chain,debug"));
    let node = Node::start_in(datadir, &args);
    // The genesis directory goes with the test, the data directory with the node.
    std::mem::forget(dir);
    node
}

/// Resident memory of process `pid`, bytes.
fn rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// A call over HTTP: the response's text and object.
fn http_text(url: &str, method: &str, params: Value) -> (String, Value) {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let (status, text) = http_post(url, &body);
    assert_eq!(status, 200, "{method}: {text:.300}");
    let v = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:.300}"));
    (text, v)
}

/// Checks a whole dump of the genesis state: every account with its balance and nonce.
fn check_whole_dump(dump: &Value, n: u64, root: &Value) {
    assert_eq!(&dump["root"], root);
    let accounts = dump["accounts"].as_object().unwrap();
    assert_eq!(accounts.len() as u64, n);
    for i in [0, 1, n / 3, n / 2, n - 1] {
        let a = &accounts[&address(i)];
        assert_eq!(a["balance"], json!(balance(i).to_string()), "account {i}");
        assert_eq!(a["nonce"], json!(0));
    }
    assert!(dump.get("next").is_none(), "a whole dump has no next page");
}

/// A dump of many accounts, while another client keeps calling: its calls are answered
/// within [`CALL_BOUND`], and the node's memory grows by less than twice the reply (it grew
/// by eleven times before). Then three dumps at once: one runs, the others are refused.
#[test]
fn a_large_dump_keeps_memory_to_its_reply_and_other_calls_served() {
    let n: u64 = env_or("DUMP_ACCOUNTS", 100_000);
    let started = Instant::now();
    let node = node_with_accounts(n);
    let url = node.http.clone().unwrap();
    let root = ok(http_call(
        &url,
        "chain_getBlockByNumber",
        json!(["0x0", false]),
    ))["stateRoot"]
        .clone();
    eprintln!("{n} accounts: node up in {:.1?}", started.elapsed());

    // The first walk of the state fills the trie-node cache (bounded by its own setting):
    // walked once in small pages first, so that what is measured is the dump's own memory.
    let mut start = Value::Null;
    while start != json!("") {
        let page = ok(http_call(
            &url,
            "debug_dumpBlock",
            json!(["0x0", start, n / 10 + 1]),
        ));
        start = page.get("next").cloned().unwrap_or(json!(""));
    }
    let pid = node.child.id();
    let before = rss(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !stop.load(Ordering::Relaxed) {
                peak = peak.max(rss(pid));
                std::thread::sleep(Duration::from_millis(2));
            }
            peak
        })
    };
    let caller = {
        let (stop, url) = (stop.clone(), url.clone());
        std::thread::spawn(move || {
            let mut slowest = Duration::ZERO;
            let mut calls = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let i = calls % n;
                let t = Instant::now();
                assert_eq!(
                    ok(http_call(&url, "chain_blockNumber", json!([]))),
                    json!("0x0")
                );
                let b = ok(http_call(
                    &url,
                    "chain_getBalance",
                    json!([address(i), "latest"]),
                ));
                slowest = slowest.max(t.elapsed() / 2);
                assert_eq!(quantity_of(&b), balance(i) as u128);
                calls += 1;
            }
            (calls, slowest)
        })
    };
    std::thread::sleep(Duration::from_millis(100));
    let t = Instant::now();
    let (text, reply) = http_text(&url, "debug_dumpBlock", json!(["latest"]));
    let took = t.elapsed();
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::Relaxed);
    let peak = sampler.join().unwrap();
    let (calls, slowest) = caller.join().unwrap();

    check_whole_dump(&ok(reply), n, &root);
    let growth = peak.saturating_sub(before);
    eprintln!(
        "dump: {} bytes in {took:.2?}; node RSS {} MB -> peak {} MB (+{:.2} x the reply); \
         {calls} call pairs meanwhile, slowest {slowest:.1?}",
        text.len(),
        before >> 20,
        peak >> 20,
        growth as f64 / text.len() as f64
    );
    assert!(calls > 0, "no call was answered during the dump");
    assert!(
        slowest < CALL_BOUND,
        "a call took {slowest:?} during a dump"
    );
    assert!(
        growth < 2 * text.len(),
        "RSS grew by {growth} bytes for a reply of {}",
        text.len()
    );

    // Three dumps asked for at once: each is the whole state or the refusal.
    let barrier = Arc::new(Barrier::new(3));
    let answers: Vec<Value> = (0..3)
        .map(|_| {
            let (barrier, url) = (barrier.clone(), url.clone());
            std::thread::spawn(move || {
                barrier.wait();
                http_text(&url, "debug_dumpBlock", json!(["0x0"])).1
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    let mut refused = 0;
    for a in answers {
        if a.get("error").is_some() {
            assert_eq!(err(a), (-32000, BUSY.to_string()));
            refused += 1;
        } else {
            check_whole_dump(&ok(a), n, &root);
        }
    }
    assert!(
        (1..3).contains(&refused),
        "{refused} of 3 dumps at once refused"
    );
    // Once they are done, a dump runs again.
    let trie = ok(http_call(&url, "debug_dumpStateTrie", json!(["0x0"])));
    assert_eq!(trie["root"], root);
    assert!(trie["nodes"].as_array().unwrap().len() as u64 > n);
}

/// Pages of `debug_dumpBlock`: each at most `maxResults` accounts in trie-key order, with the
/// key of the next; together the whole state, as one dump over each transport shows it.
#[test]
fn a_dump_in_pages_is_the_whole_dump() {
    let n = 1_000;
    let node = node_with_accounts(n);
    let url = node.http.clone().unwrap();
    let whole = ok(http_call(&url, "debug_dumpBlock", json!(["latest"])));
    let root = ok(http_call(
        &url,
        "chain_getBlockByNumber",
        json!(["0x0", false]),
    ))["stateRoot"]
        .clone();
    check_whole_dump(&whole, n, &root);
    // The same over WebSocket and IPC.
    let mut ws = common::ws::connect(node.ws.as_ref().unwrap());
    assert_eq!(
        ok(common::ws::call(
            &mut ws,
            1,
            "debug_dumpBlock",
            json!(["0x0"])
        )),
        whole
    );
    let mut ipc = Ipc::connect(node.ipc.as_ref().unwrap());
    assert_eq!(ok(ipc.call("debug_dumpBlock", json!(["0x0"]))), whole);

    let mut seen = serde_json::Map::new();
    let mut start = Value::Null;
    let mut pages = 0;
    let mut last_key = String::new();
    loop {
        let page = ok(http_call(
            &url,
            "debug_dumpBlock",
            json!(["0x0", start, 300]),
        ));
        assert_eq!(page["root"], root);
        let accounts = page["accounts"].as_object().unwrap();
        pages += 1;
        let keys: Vec<String> = accounts
            .values()
            .map(|a| a["key"].as_str().unwrap().to_string())
            .collect();
        // In trie-key order, each page after the last.
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert!(keys[0] > last_key);
        last_key = keys.last().unwrap().clone();
        for (name, a) in accounts {
            assert!(
                seen.insert(name.clone(), a.clone()).is_none(),
                "{name} twice"
            );
        }
        match page.get("next") {
            Some(next) => {
                assert_eq!(accounts.len(), 300);
                assert!(next.as_str().unwrap() > last_key.as_str());
                start = next.clone();
            }
            None => {
                assert_eq!(accounts.len(), 100);
                break;
            }
        }
    }
    assert_eq!(pages, 4);
    assert_eq!(Value::Object(seen), whole["accounts"]);

    // A page past the last key is empty; maxResults 0 is refused.
    let past = format!("0x{}", "ff".repeat(32));
    let empty = ok(http_call(&url, "debug_dumpBlock", json!(["0x0", past, 5])));
    assert_eq!(empty, json!({"root": root, "accounts": {}}));
    assert_eq!(
        err(http_call(&url, "debug_dumpBlock", json!(["0x0", null, 0]))),
        (-32000, "maxResults must be at least 1".to_string())
    );
    assert_eq!(
        err(http_call(
            &url,
            "debug_dumpBlock",
            json!(["0x0", "0x12", 5])
        )),
        (
            -32602,
            "invalid argument 1: hex string has length 2, want 64 for common.Hash".to_string()
        )
    );
}
