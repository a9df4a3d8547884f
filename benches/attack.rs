//! The node under hostile clients, measured through the real `chaind --dev --rpc --ws` on
//! 127.0.0.1 (issue "Transports and secrets under attack").
//!
//! Cases:
//! - `slowloris`: a well-behaved client calls `rpc_modules` over HTTP and over WebSocket,
//!   each call on a fresh connection (the worst case: it passes the gate), one pair every
//!   20 ms, first for `ATTACK_SECS` unattacked, then for `ATTACK_SECS` while 2,000 sockets
//!   (half HTTP heads, half WebSocket handshakes) send one byte a second each and reconnect
//!   as soon as they are dropped. Reported: successes, p50, p99 of each, and chaind's RSS
//!   before, during and after the attack.
//! - `subscriptions`: 200 batches of 1,000 `chain_subscribe` then 1,000 `chain_unsubscribe`
//!   on one IPC connection, then 100 connections each dropping 1,000 subscriptions by
//!   closing: RSS before, after, and after a pause.
//! - `nonreader`: one IPC connection sends 1,000-call batches without reading for 5 s: bytes
//!   the node took and RSS during and after.
//! - `idle_ipc`: 3,000 idle IPC connections (1,000 served at the default cap, the rest
//!   refused), then all closed: RSS before, during, after; threads during.
//! - `shutdown`: SIGTERM to exit, with open connections on every transport.
//!
//! Run: `cargo bench --bench attack` (about 3 minutes with the default `ATTACK_SECS=60`).
//! `ATTACK_CASES` picks cases by name (comma separated).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/slow.rs"]
mod slow;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::raise_fd_limit;
use common::{Ipc, Node};
use slow::{rss_mb, threads};

const MODULES: &str = r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":[]}"#;

fn main() {
    raise_fd_limit();
    let secs: f64 = std::env::var("ATTACK_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(60.0);
    let cases = std::env::var("ATTACK_CASES")
        .unwrap_or_else(|_| "slowloris,subscriptions,nonreader,idle_ipc,shutdown".into());
    for case in cases.split(',') {
        match case.trim() {
            "slowloris" => slowloris(Duration::from_secs_f64(secs)),
            "subscriptions" => subscriptions(),
            "nonreader" => nonreader(),
            "idle_ipc" => idle_ipc(),
            "shutdown" => shutdown(),
            other => panic!("unknown case {other:?}"),
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// One `rpc_modules` over a fresh HTTP connection.
fn http_once(addr: &str) -> bool {
    let Ok(mut s) = TcpStream::connect(addr) else {
        return false;
    };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let req = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{MODULES}",
        MODULES.len()
    );
    if s.write_all(req.as_bytes()).is_err() {
        return false;
    }
    let mut reply = Vec::new();
    let _ = s.read_to_end(&mut reply);
    reply.starts_with(b"HTTP/1.1 200") && reply.windows(8).any(|w| w == b"\"result\"")
}

/// One `rpc_modules` over a fresh WebSocket connection.
fn ws_once(url: &str) -> bool {
    let Ok((mut ws, _)) = tungstenite::connect(url) else {
        return false;
    };
    if ws.send(tungstenite::Message::text(MODULES)).is_err() {
        return false;
    }
    loop {
        match ws.read() {
            Ok(tungstenite::Message::Text(t)) => {
                let ok = t.contains("\"result\"");
                let _ = ws.close(None);
                return ok;
            }
            Ok(_) => continue,
            Err(_) => return false,
        }
    }
}

struct Series {
    ok: usize,
    failed: usize,
    lat: Vec<Duration>,
}

/// Calls over HTTP and WebSocket, one pair every 20 ms, for `time`.
fn well_behaved(http: &str, ws: &str, time: Duration) -> (Series, Series) {
    let mut h = Series {
        ok: 0,
        failed: 0,
        lat: Vec::new(),
    };
    let mut w = Series {
        ok: 0,
        failed: 0,
        lat: Vec::new(),
    };
    let end = Instant::now() + time;
    while Instant::now() < end {
        let t = Instant::now();
        if http_once(http) {
            h.ok += 1;
            h.lat.push(t.elapsed());
        } else {
            h.failed += 1;
        }
        let t = Instant::now();
        if ws_once(ws) {
            w.ok += 1;
            w.lat.push(t.elapsed());
        } else {
            w.failed += 1;
        }
        thread::sleep(Duration::from_millis(20));
    }
    h.lat.sort();
    w.lat.sort();
    (h, w)
}

fn report(what: &str, s: &Series) {
    println!(
        "  {what:<28} {:>5} ok {:>4} failed   p50 {:>6.2} ms   p99 {:>6.2} ms",
        s.ok,
        s.failed,
        percentile(&s.lat, 0.5),
        percentile(&s.lat, 0.99)
    );
    println!(
        "RESULT case=slowloris what={} ok={} failed={} p50_ms={:.2} p99_ms={:.2}",
        what.replace(' ', "_"),
        s.ok,
        s.failed,
        percentile(&s.lat, 0.5),
        percentile(&s.lat, 0.99)
    );
}

fn slowloris(time: Duration) {
    println!(
        "slowloris: {} s unattacked, then {} s under 2,000 slow sockets",
        time.as_secs(),
        time.as_secs()
    );
    let n = Node::start(&[
        "--dev",
        "--rpc",
        "--rpcaddr",
        "127.0.0.1",
        "--rpcport",
        "0",
        "--ws",
        "--wsaddr",
        "127.0.0.1",
        "--wsport",
        "0",
    ]);
    let pid = n.child.id();
    let http = n
        .http
        .clone()
        .unwrap()
        .trim_start_matches("http://")
        .to_string();
    let ws = n.ws.clone().unwrap();
    let ws_addr = ws.trim_start_matches("ws://").to_string();
    let (h, w) = well_behaved(&http, &ws, time);
    report("HTTP, unattacked", &h);
    report("WebSocket, unattacked", &w);
    let before = rss_mb(pid);
    let stop = Arc::new(AtomicBool::new(false));
    let reconnects = Arc::new(AtomicUsize::new(0));
    // The attackers: 2 threads, each 1,000 sockets, one byte per socket per second.
    let attackers = slow::slow_sockets(&[http.clone(), ws_addr.clone()], 1000, &stop, &reconnects);
    thread::sleep(Duration::from_secs(2));
    let during_threads = threads(pid);
    let (h, w) = well_behaved(&http, &ws, time);
    let during = rss_mb(pid);
    report("HTTP, under attack", &h);
    report("WebSocket, under attack", &w);
    stop.store(true, Ordering::Relaxed);
    for a in attackers {
        let _ = a.join();
    }
    thread::sleep(Duration::from_secs(2));
    println!(
        "  chaind RSS {before:.1} MB before, {during:.1} MB during, {:.1} MB after; {during_threads} threads during; {} attacker reconnects",
        rss_mb(pid),
        reconnects.load(Ordering::Relaxed)
    );
}

fn batch(method: &str, params: impl Fn(usize) -> String, n: usize) -> String {
    let calls: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"{method}","params":{}}}"#,
                params(i)
            )
        })
        .collect();
    format!("[{}]", calls.join(","))
}

fn subscriptions() {
    let n = Node::start(&["--dev"]);
    let pid = n.child.id();
    let path = n.ipc.clone().unwrap();
    let mut c = Ipc::connect(&path);
    let start = rss_mb(pid);
    let t = Instant::now();
    for _ in 0..200 {
        c.send(&batch(
            "chain_subscribe",
            |_| r#"["newHeads"]"#.into(),
            1000,
        ));
        let ids: Vec<String> = c
            .recv()
            .unwrap()
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["result"].as_str().unwrap().to_string())
            .collect();
        c.send(&batch(
            "chain_unsubscribe",
            |i| format!(r#"["{}"]"#, ids[i]),
            1000,
        ));
        c.recv().unwrap();
    }
    let pairs_time = t.elapsed();
    let after_pairs = rss_mb(pid);
    for _ in 0..100 {
        let mut d = Ipc::connect(&path);
        d.send(&batch(
            "chain_subscribe",
            |_| r#"["newHeads"]"#.into(),
            1000,
        ));
        d.recv().unwrap();
    }
    let after_drops = rss_mb(pid);
    thread::sleep(Duration::from_secs(2));
    println!(
        "subscriptions (IPC): RSS {start:.1} MB at start, {after_pairs:.1} MB after 200,000 subscribe/unsubscribe pairs ({:.1} s), {after_drops:.1} MB after 100,000 dropped with their connections, {:.1} MB 2 s later",
        pairs_time.as_secs_f64(),
        rss_mb(pid)
    );
}

fn nonreader() {
    let n = Node::start(&["--dev"]);
    let pid = n.child.id();
    let start = rss_mb(pid);
    let s = UnixStream::connect(n.ipc.as_ref().unwrap()).unwrap();
    s.set_write_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let body = batch("rpc_modules", |_| "[]".into(), 1000);
    let mut taken = 0usize;
    let end = Instant::now() + Duration::from_secs(5);
    while Instant::now() < end {
        match (&s).write(body.as_bytes()) {
            Ok(k) => taken += k,
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
    let during = rss_mb(pid);
    drop(s);
    thread::sleep(Duration::from_secs(1));
    println!(
        "nonreader (IPC, 1,000-call batches, never reading, 5 s): the node took {:.1} MB of requests; RSS {start:.1} MB before, {during:.1} MB during, {:.1} MB after",
        taken as f64 / 1e6,
        rss_mb(pid)
    );
}

fn idle_ipc() {
    let n = Node::start(&["--dev"]);
    let pid = n.child.id();
    let path = n.ipc.clone().unwrap();
    let start = rss_mb(pid);
    let start_threads = threads(pid);
    let conns: Vec<UnixStream> = (0..3000)
        .filter_map(|_| UnixStream::connect(&path).ok())
        .collect();
    thread::sleep(Duration::from_secs(2));
    let during = rss_mb(pid);
    let during_threads = threads(pid);
    drop(conns);
    thread::sleep(Duration::from_secs(2));
    println!(
        "idle_ipc (3,000 connections, cap 1,000): RSS {start:.1} MB before, {during:.1} MB during, {:.1} MB after; threads {start_threads} before, {during_threads} during, {} after",
        rss_mb(pid),
        threads(pid)
    );
}

fn shutdown() {
    let mut n = Node::start(&[
        "--dev",
        "--rpc",
        "--rpcaddr",
        "127.0.0.1",
        "--rpcport",
        "0",
        "--ws",
        "--wsaddr",
        "127.0.0.1",
        "--wsport",
        "0",
    ]);
    let http = n
        .http
        .clone()
        .unwrap()
        .trim_start_matches("http://")
        .to_string();
    let _h: Vec<TcpStream> = (0..50)
        .filter_map(|_| TcpStream::connect(&http).ok())
        .collect();
    let _w = tungstenite::connect(n.ws.clone().unwrap().as_str()).ok();
    let _i = UnixStream::connect(n.ipc.as_ref().unwrap()).ok();
    let t = Instant::now();
    let status = n.terminate(10);
    println!(
        "shutdown: SIGTERM to exit {:.0} ms ({status:?})",
        t.elapsed().as_secs_f64() * 1000.0
    );
}
