//! Mixed load on every transport beside 2,000 slow sockets, through the real `chaind --dev`
//! on 127.0.0.1 (issue "Hardening", part 4).
//!
//! 64 clients for `LOAD_SECS` (default 60): 22 over keep-alive HTTP, 21 over WebSocket and 21
//! over IPC, the last two each subscribed to `newHeads`. Each client runs the same mix, one
//! call after the other: `chain_blockNumber`, `chain_getBalance`, `chain_sign` (the developer
//! account, unlocked), `chain_sendRawTransaction` (a transfer from the client's own funded
//! key), `chain_call` (an ERC-20 `balanceOf`), `chain_getFilterChanges` (the client's own
//! block filter), `chain_getTransactionReceipt` (its last transfer). Beside them, 2,000
//! sockets (1,000 on the HTTP port, 1,000 on the WebSocket port) send one byte a second.
//!
//! Reported: calls and p50/p99/max latency per method, every error (none is expected: each
//! is printed and the run fails), the fewest calls a client made and the fewest heads a
//! subscriber received (nothing starved), chaind's RSS before, peak and after, its threads,
//! and the transfers sealed.
//!
//! Run: `cargo bench --bench load` (about `LOAD_SECS` + 20 s).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/conn.rs"]
mod conn;
#[path = "support/slow.rs"]
mod slow;
#[path = "support/stats.rs"]
mod stats;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use common::contracts::{addr_word, compiled, deploy, uint_word};
use common::{http_call, ok, Ipc, Node};
use serde_json::{json, Value};

const METHODS: [&str; 7] = [
    "chain_blockNumber",
    "chain_getBalance",
    "chain_sign",
    "chain_sendRawTransaction",
    "chain_call",
    "chain_getFilterChanges",
    "chain_getTransactionReceipt",
];

/// One client's connection: sends a request text and returns the next message.
enum Link {
    Http(conn::Conn),
    Ws(Box<common::ws::Ws>),
    Ipc(Ipc),
}

impl Link {
    fn send(&mut self, text: &str) -> Option<Value> {
        match self {
            Link::Http(c) => Some(serde_json::from_str(&c.call(text)).unwrap()),
            Link::Ws(ws) => {
                ws.send(tungstenite::Message::text(text.to_string()))
                    .unwrap();
                None
            }
            Link::Ipc(c) => {
                c.send(text);
                None
            }
        }
    }

    fn next(&mut self) -> Value {
        match self {
            Link::Http(_) => unreachable!("HTTP answers in send"),
            Link::Ws(ws) => common::ws::read(ws),
            Link::Ipc(c) => c.recv().expect("the IPC connection closed"),
        }
    }

    /// One call: its response; notifications read on the way are counted in `heads`.
    fn call(&mut self, id: u64, method: &str, params: Value, heads: &mut usize) -> Value {
        let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        if let Some(v) = self.send(&req.to_string()) {
            return v;
        }
        loop {
            let v = self.next();
            if v.get("id") == Some(&json!(id)) {
                return v;
            }
            assert_eq!(v["method"], json!("chain_subscription"), "{v}");
            *heads += 1;
        }
    }
}

#[derive(Default)]
struct Figures {
    latencies: BTreeMap<&'static str, Vec<Duration>>,
    errors: Vec<String>,
    calls_per_client: Vec<usize>,
    heads_per_subscriber: Vec<usize>,
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

struct Setup {
    dev: String,
    token: String,
    balance_of: String,
}

/// Client `i`: the mix of [`METHODS`] over `link` until `stop`, with `key` (funded).
fn client(
    i: usize,
    mut link: Link,
    subscribe: bool,
    key: SecretKey,
    setup: &Setup,
    stop: &AtomicBool,
    figures: &Mutex<Figures>,
) {
    let mut heads = 0usize;
    let mut id = 0u64;
    let mut next_id = || {
        id += 1;
        id
    };
    if subscribe {
        let r = link.call(
            next_id(),
            "chain_subscribe",
            json!(["newHeads"]),
            &mut heads,
        );
        ok(r);
    }
    let filter = ok(link.call(next_id(), "chain_newBlockFilter", json!([]), &mut heads));
    let mut nonce = 0u64;
    let mut last_tx = Value::Null;
    let mut mine: BTreeMap<&'static str, Vec<Duration>> = BTreeMap::new();
    let mut errors = Vec::new();
    let mut calls = 0usize;
    let to = Address([0x60; 20]);
    while !stop.load(Ordering::Relaxed) {
        let method = METHODS[calls % METHODS.len()];
        let params = match method {
            "chain_blockNumber" => json!([]),
            "chain_getBalance" => json!([setup.dev, "latest"]),
            "chain_sign" => json!([setup.dev, "0x68656c6c6f"]),
            "chain_sendRawTransaction" => {
                let raw = common::raw_transfer(&key, nonce, to, 1, common::PRICE, 1000);
                json!([raw])
            }
            "chain_call" => json!([{"to": setup.token, "data": setup.balance_of}, "latest"]),
            "chain_getFilterChanges" => json!([filter]),
            _ => json!([last_tx]),
        };
        let t = Instant::now();
        let r = link.call(next_id(), method, params, &mut heads);
        mine.entry(method).or_default().push(t.elapsed());
        calls += 1;
        match r.get("result") {
            Some(v) => {
                if method == "chain_sendRawTransaction" {
                    last_tx = v.clone();
                    nonce += 1;
                }
            }
            None => errors.push(format!("client {i} {method}: {r}")),
        }
    }
    let mut f = figures.lock().unwrap();
    for (m, mut l) in mine {
        f.latencies.entry(m).or_default().append(&mut l);
    }
    f.errors.extend(errors);
    f.calls_per_client.push(calls);
    if subscribe {
        f.heads_per_subscriber.push(heads);
    }
}

fn main() {
    common::raise_fd_limit();
    let secs: u64 = common::env_or("LOAD_SECS", 60);
    let mut args = vec!["--dev", "--port", "0"];
    args.extend(common::http_args("chain,personal"));
    args.extend(common::ws_args("chain"));
    let n = Node::start(&args);
    let pid = n.child.id();
    let url = n.http.clone().unwrap();
    let http_addr = url.trim_start_matches("http://").to_string();
    let ws_url = n.ws.clone().unwrap();
    let ipc = n.ipc.clone().unwrap();

    // Set-up: the developer account unlocked, a token deployed, 64 client keys funded.
    let dev_key = common::dev_key(&n);
    let dev = common::dev_account(&n);
    ok(http_call(
        &url,
        "personal_unlockAccount",
        json!([dev, "", 0]),
    ));
    let tok = compiled("Token");
    let token = deploy(
        &url,
        &dev_key,
        0,
        tok.with_args(&[uint_word(1_000_000_000)]),
    );
    let keys = common::numbered_keys(64);
    let mut last = Value::Null;
    for (i, k) in keys.iter().enumerate() {
        let raw = common::raw_transfer(
            &dev_key,
            1 + i as u64,
            k.address(),
            10u128.pow(21),
            common::PRICE,
            1000,
        );
        last = ok(http_call(&url, "chain_sendRawTransaction", json!([raw])));
    }
    common::wait_receipt(&url, &last);
    let setup = Setup {
        dev: dev.clone(),
        token: format!("0x{}", hex::encode(token.0)),
        balance_of: format!(
            "0x{}",
            hex::encode(tok.call_data("balanceOf(address)", &[addr_word(&dev_key.address())]))
        ),
    };

    let before = slow::rss_mb(pid);
    let stop_attack = Arc::new(AtomicBool::new(false));
    let reconnects = Arc::new(AtomicUsize::new(0));
    let ws_addr = ws_url.trim_start_matches("ws://").to_string();
    let attackers = slow::slow_sockets(
        &[http_addr.clone(), ws_addr],
        1000,
        &stop_attack,
        &reconnects,
    );
    thread::sleep(Duration::from_secs(2));
    println!(
        "load: 64 clients (22 HTTP, 21 WebSocket, 21 IPC) for {secs} s beside 2,000 slow sockets"
    );

    let stop = AtomicBool::new(false);
    let figures = Mutex::new(Figures::default());
    let mut threads_during = 0;
    thread::scope(|s| {
        for (i, key) in keys.into_iter().enumerate() {
            let (setup, stop, figures) = (&setup, &stop, &figures);
            let (http_addr, ws_url, ipc) = (&http_addr, &ws_url, &ipc);
            s.spawn(move || {
                let (link, subscribe) = match i % 3 {
                    0 => (Link::Http(conn::Conn::new(http_addr)), false),
                    1 => (Link::Ws(Box::new(common::ws::connect(ws_url))), true),
                    _ => (Link::Ipc(Ipc::connect(ipc)), true),
                };
                client(i, link, subscribe, key, setup, stop, figures);
            });
        }
        thread::sleep(Duration::from_secs(secs));
        threads_during = slow::threads(pid);
        stop.store(true, Ordering::Relaxed);
    });
    let peak = stats::vm_hwm_kib(pid) as f64 / 1024.0;
    stop_attack.store(true, Ordering::Relaxed);
    for a in attackers {
        let _ = a.join();
    }
    thread::sleep(Duration::from_secs(2));
    let after = slow::rss_mb(pid);

    let f = figures.into_inner().unwrap();
    println!(
        "  {:<30} {:>8} {:>9} {:>9} {:>9}",
        "method", "calls", "p50 ms", "p99 ms", "max ms"
    );
    let mut total = 0;
    for (m, mut l) in f.latencies {
        l.sort();
        total += l.len();
        println!(
            "  {m:<30} {:>8} {:>9.2} {:>9.2} {:>9.2}",
            l.len(),
            percentile(&l, 0.5),
            percentile(&l, 0.99),
            percentile(&l, 1.0)
        );
    }
    let sealed = common::quantity_of(&ok(http_call(
        &url,
        "chain_getBalance",
        json!([format!("0x{}", hex::encode([0x60u8; 20])), "latest"]),
    )));
    println!(
        "  {total} calls ({:.0}/s); fewest by one client {}; fewest heads by one subscriber {} (of {})",
        total as f64 / secs as f64,
        f.calls_per_client.iter().min().unwrap(),
        f.heads_per_subscriber.iter().min().unwrap(),
        f.heads_per_subscriber.len()
    );
    println!(
        "  transfers sealed {sealed}; chaind RSS {before:.1} MB before, peak {peak:.1} MB, {after:.1} MB after; {threads_during} threads during; {} slow-socket reconnects",
        reconnects.load(Ordering::Relaxed)
    );
    println!("  errors: {}", f.errors.len());
    for e in f.errors.iter().take(20) {
        println!("    {e}");
    }
    assert!(f.errors.is_empty(), "unexpected errors under load");
    assert!(
        f.calls_per_client.iter().all(|c| *c > 0),
        "a client was starved"
    );
    assert!(
        f.heads_per_subscriber.iter().all(|h| *h > 0),
        "a subscriber received no head"
    );
}
