//! The node under a hostile client, through the real `chaind` on 127.0.0.1 (issue
//! "Transports and secrets under attack"): each test here failed on the node before the fix.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use common::{chaind_bin, err, http_call, ok, write_file, Ipc, Node};
use serde_json::{json, Value};

fn random_hex(bytes: usize) -> String {
    let mut b = vec![0u8; bytes];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut b)
        .unwrap();
    hex::encode(b)
}

/// Every readable, writable mapping of process `pid`, read whole.
fn memory_of(pid: u32) -> Vec<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let mem = std::fs::File::open(format!("/proc/{pid}/mem"))
        .expect("reading a child's memory (is ptrace allowed here?)");
    let mut regions = Vec::new();
    for line in maps.lines() {
        let mut f = line.split_whitespace();
        let (Some(range), Some(perms)) = (f.next(), f.next()) else {
            continue;
        };
        if !perms.starts_with("rw") {
            continue;
        }
        let (a, b) = range.split_once('-').unwrap();
        let (a, b) = (
            u64::from_str_radix(a, 16).unwrap(),
            u64::from_str_radix(b, 16).unwrap(),
        );
        let mut buf = vec![0u8; (b - a) as usize];
        if mem.read_exact_at(&mut buf, a).is_ok() {
            regions.push(buf);
        }
    }
    assert!(!regions.is_empty(), "nothing of the node's memory was read");
    regions
}

fn count(regions: &[Vec<u8>], needle: &[u8]) -> usize {
    regions
        .iter()
        .map(|r| r.windows(needle.len()).filter(|w| *w == needle).count())
        .sum()
}

/// Over one transport, through `call`: import a fresh key, unlock it, sign (personal_ and
/// chain_), sign and send a transaction with the passphrase, a wrong unlock, replace the key
/// with another under a new passphrase, create a new account, lock; then, the connection
/// closed, a scan of the node's memory for every passphrase and both keys.
fn secrets_are_wiped_after(n: &Node, transport: &str, mut call: impl FnMut(&str, Value) -> Value) {
    let pass = format!("Sup3rS3cret-{}", random_hex(8));
    let wrong = format!("Wr0ngPass-{}", random_hex(8));
    let new_pass = format!("N3wS3cret-{}", random_hex(8));
    let account_pass = format!("Acc0untS3cret-{}", random_hex(8));
    let key_hex = random_hex(32);
    let key = hex::decode(&key_hex).unwrap();
    let new_key_hex = random_hex(32);
    let new_key = hex::decode(&new_key_hex).unwrap();
    let addr = ok(call("personal_importRawKey", json!([key_hex, pass])));
    let addr = addr.as_str().unwrap().to_string();
    assert_eq!(
        ok(call("personal_unlockAccount", json!([addr, pass, 0]))),
        json!(true)
    );
    ok(call("personal_sign", json!(["0x68656c6c6f", addr, pass])));
    ok(call("chain_sign", json!([addr, "0x68656c6c6f"])));
    let tx = json!({"from": addr, "to": addr, "value": "0x0", "gas": "0x5208", "nonce": "0x0"});
    ok(call("personal_signTransaction", json!([tx, pass])));
    // Unfunded: refused, but the passphrase went through the node all the same.
    let (code, msg) = err(call("personal_sendTransaction", json!([tx, pass])));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "insufficient funds of the sender for value ")
    );
    let (code, _) = err(call("personal_unlockAccount", json!([addr, wrong, 0])));
    assert_eq!(code, -32000);
    // The wallet-key form: the new key for the account's address.
    let wallet_key = format!("{new_key_hex}0x00{addr}");
    ok(call(
        "personal_replaceRawKey",
        json!([wallet_key, pass, new_pass]),
    ));
    ok(call("personal_newAccount", json!([account_pass])));
    assert_eq!(ok(call("personal_lockAccount", json!([addr]))), json!(true));
    drop(call);
    // The connection is closed; give the node a moment to end its threads.
    std::thread::sleep(Duration::from_millis(2000));
    let regions = memory_of(n.child.id());
    let found = [
        ("passphrase", count(&regions, pass.as_bytes())),
        ("wrong passphrase", count(&regions, wrong.as_bytes())),
        ("new passphrase", count(&regions, new_pass.as_bytes())),
        (
            "new account's passphrase",
            count(&regions, account_pass.as_bytes()),
        ),
        ("hex key", count(&regions, key_hex.as_bytes())),
        ("binary key", count(&regions, &key)),
        ("hex replacing key", count(&regions, new_key_hex.as_bytes())),
        ("binary replacing key", count(&regions, &new_key)),
    ];
    assert!(
        found.iter().all(|(_, n)| *n == 0),
        "secrets left in chaind's memory after calls over {transport}: {found:?}"
    );
}

/// After the calls of [`secrets_are_wiped_after`], with the connection closed and the
/// account locked, no copy of the passphrases or of the keys (as hex or as bytes) is left in
/// the node's memory: over IPC (whose decoder used to keep them), HTTP and WebSocket.
#[test]
fn no_secret_is_left_in_memory_after_calls() {
    let mut args = vec!["--dev"];
    args.extend(common::http_args("personal,chain"));
    args.extend(common::ws_args("personal,chain"));
    let n = Node::start(&args);
    let mut c = Ipc::connect(n.ipc.as_ref().unwrap());
    secrets_are_wiped_after(&n, "IPC", move |m, p| c.call(m, p));
    let url = n.http.clone().unwrap();
    secrets_are_wiped_after(&n, "HTTP", move |m, p| http_call(&url, m, p));
    let (mut ws, _) = tungstenite::connect(n.ws.clone().unwrap().as_str()).unwrap();
    secrets_are_wiped_after(&n, "WebSocket", move |m, p| {
        let req = json!({"jsonrpc": "2.0", "id": 1, "method": m, "params": p});
        ws.send(tungstenite::Message::text(req.to_string()))
            .unwrap();
        loop {
            if let tungstenite::Message::Text(t) = ws.read().unwrap() {
                return serde_json::from_str(&t).unwrap();
            }
        }
    });
}

/// More IPC connections than `--ipcmaxconnections` are refused with a JSON-RPC error and
/// closed; the node keeps serving the others, and a place freed is taken again.
#[test]
fn ipc_connections_are_capped() {
    let n = Node::start(&["--dev", "--ipcmaxconnections", "3"]);
    let path = n.ipc.clone().unwrap();
    let mut held: Vec<Ipc> = (0..3).map(|_| Ipc::connect(&path)).collect();
    for c in &mut held {
        ok(c.call("net_version", json!([])));
    }
    let mut extra = Ipc::connect(&path);
    let refusal = extra.recv().expect("an error before the close");
    assert_eq!(
        err(refusal),
        (-32000, "too many IPC connections: at most 3 allowed".into())
    );
    assert!(extra.recv().is_none(), "then the connection is closed");
    ok(held[0].call("net_version", json!([])));
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut c = UnixStream::connect(&path).unwrap();
        let _ = c.write_all(br#"{"jsonrpc":"2.0","id":1,"method":"net_version","params":[]}"#);
        let _ = c.shutdown(std::net::Shutdown::Write);
        let mut reply = String::new();
        let _ = c.read_to_string(&mut reply);
        if reply.contains("result") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the freed place was not taken again: {reply}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client that sends batches and never reads the replies gets no more requests read once
/// about a megabyte of replies waits: what it can write stays bounded. The node used to
/// queue 10,000 replies whatever their size (a gigabyte in 18 s).
#[test]
fn ipc_replies_to_a_client_that_does_not_read_are_bounded() {
    let n = Node::start(&["--dev"]);
    let stream = UnixStream::connect(n.ipc.as_ref().unwrap()).unwrap();
    stream
        .set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":[]}"#;
    let batch = format!("[{}]", vec![call; 1000].join(","));
    let mut written = 0usize;
    let mut w = &stream;
    // Each batch's reply is about 90 KB; 2,000 batches would queue 180 MB of replies.
    for _ in 0..2000 {
        match w.write_all(batch.as_bytes()) {
            Ok(()) => written += batch.len(),
            Err(_) => break, // the node stopped reading: the write timed out
        }
    }
    assert!(
        written < 64 << 20,
        "the node kept reading requests whose replies nobody reads: {written} bytes taken"
    );
    // The node still serves everyone else.
    let mut other = Ipc::connect(n.ipc.as_ref().unwrap());
    ok(other.call("net_version", json!([])));
}

/// `VmRSS` of `pid` in bytes.
fn rss(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    let kb: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb * 1024
}

/// Subscribes `n` times and unsubscribes each, in two batches.
fn subscribe_and_unsubscribe(c: &mut Ipc, n: usize) {
    let subs: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"chain_subscribe","params":["newHeads"]}}"#
            )
        })
        .collect();
    c.send(&format!("[{}]", subs.join(",")));
    let replies = c.recv().unwrap();
    let ids: Vec<String> = replies
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["result"].as_str().expect("a subscription id").to_string())
        .collect();
    let unsubs: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"chain_unsubscribe","params":["{id}"]}}"#)
        })
        .collect();
    c.send(&format!("[{}]", unsubs.join(",")));
    let replies = c.recv().unwrap();
    assert!(replies
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["result"] == json!(true)));
}

/// The memory of a subscription is freed on unsubscribe and on disconnect: 100,000
/// subscribe/unsubscribe pairs and 100,000 subscriptions dropped with their connections leave
/// the node's RSS where it was after a warm-up. The node used to keep every entry (about
/// 300 bytes a pair, 30 MB here) until a notification was published.
#[test]
fn subscriptions_are_freed_on_unsubscribe_and_disconnect() {
    let n = Node::start(&["--dev"]);
    let path = n.ipc.clone().unwrap();
    let pid = n.child.id();
    let mut c = Ipc::connect(&path);
    // Warm-up: the allocator's pools and the table's capacity reach their steady size.
    for _ in 0..20 {
        subscribe_and_unsubscribe(&mut c, 1000);
    }
    let before = rss(pid);
    for _ in 0..100 {
        subscribe_and_unsubscribe(&mut c, 1000);
    }
    for _ in 0..100 {
        let mut d = Ipc::connect(&path);
        let subs: Vec<String> = (0..1000)
            .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"chain_subscribe","params":["newHeads"]}}"#))
            .collect();
        d.send(&format!("[{}]", subs.join(",")));
        d.recv().unwrap();
    }
    std::thread::sleep(Duration::from_millis(300));
    let after = rss(pid);
    assert!(
        after < before + (12 << 20),
        "RSS grew from {before} to {after} bytes over 200,000 freed subscriptions"
    );
}

/// A slowloris crowd (5,000 sockets sending HTTP heads and WebSocket handshakes a byte at
/// a time) does not stop a well-behaved client: each of its `rpc_modules` calls over HTTP
/// and over WebSocket succeeds. The node used to hold a thread per socket and answer 503
/// (HTTP) or drop the upgrade (WebSocket).
#[test]
fn slow_clients_do_not_stop_http_or_websocket() {
    common::raise_fd_limit();
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
    let http = n.http.clone().unwrap();
    let ws = n.ws.clone().unwrap();
    let http_addr = http.trim_start_matches("http://").to_string();
    let ws_addr = ws.trim_start_matches("ws://").to_string();
    // More than the old node's 1,024 HTTP connection threads and its 3,064 WebSocket ones.
    let mut crowd = Vec::new();
    for i in 0..5000 {
        let addr = if i < 1500 { &http_addr } else { &ws_addr };
        let mut s = TcpStream::connect(addr).expect("the node accepts the crowd");
        let _ = s.write_all(b"GET / HTTP/1.1\r\nHost: localhost\r\n");
        crowd.push(s);
    }
    for round in 0..20 {
        // The crowd dribbles on.
        for s in crowd.iter_mut() {
            let _ = s.write_all(b"X");
        }
        let reply = http_call(&http, "rpc_modules", json!([]));
        assert!(reply.get("result").is_some(), "HTTP call {round}: {reply}");
        let (mut socket, _) =
            tungstenite::connect(ws.as_str()).unwrap_or_else(|e| panic!("WS call {round}: {e}"));
        socket
            .send(tungstenite::Message::text(
                r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":[]}"#,
            ))
            .unwrap();
        let text = loop {
            match socket.read().unwrap() {
                tungstenite::Message::Text(t) => break t.to_string(),
                _ => continue,
            }
        };
        let v: Value = serde_json::from_str(&text).unwrap();
        assert!(v.get("result").is_some(), "WS call {round}: {v}");
    }
}

/// `RPC_ENABLE=true` (and the other boolean forms) in the configuration file opens HTTP; a
/// value that is not a boolean is refused with the file and line. `true` used to be ignored.
#[test]
fn config_file_booleans() {
    let dir = tempfile::tempdir().unwrap();
    let conf = write_file(
        dir.path(),
        "on.conf",
        "RPC_ENABLE=true\nRPC_ADDR=\"127.0.0.1\"\nRPC_PORT=0\nWS_ENABLE=TRUE\nWS_ADDR=\"127.0.0.1\"\nWS_PORT=0\n",
    );
    let n = Node::start(&["--config", conf.to_str().unwrap()]);
    let deadline = Instant::now() + Duration::from_secs(10);
    let opened = |what: &str| {
        n.log_text()
            .lines()
            .filter(|l| l.contains(what))
            .find_map(|l| l.split_whitespace().find_map(|w| w.strip_prefix("url=")))
            .map(str::to_string)
    };
    while (opened("HTTP endpoint opened").is_none()
        || opened("WebSocket endpoint opened").is_none())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let http = opened("HTTP endpoint opened").unwrap_or_else(|| panic!("{}", n.log_text()));
    assert!(
        opened("WebSocket endpoint opened").is_some(),
        "{}",
        n.log_text()
    );
    let reply = http_call(&http, "rpc_modules", json!([]));
    assert!(reply.get("result").is_some(), "{reply}");

    let bad = write_file(dir.path(), "bad.conf", "# node\nRPC_ENABLE=yes\n");
    let out = Command::new(chaind_bin())
        .arg("--datadir")
        .arg(dir.path().join("dd"))
        .arg("--config")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:2: RPC_ENABLE: invalid value \"yes\": use true, false, 1 or 0",
            bad.display()
        )),
        "{stderr}"
    );
    assert!(!Path::new(&dir.path().join("dd")).join("LOCK").exists());
}
