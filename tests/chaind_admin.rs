//! `admin_*`, module gating, `web3`/`net`, malformed input and the node's lifecycle, through a
//! real `chaind`: endpoints opened and closed at run time over IPC, the subscription limit on
//! WebSocket and IPC, which modules each transport offers, exact JSON-RPC errors for bad
//! requests (each followed by a call proving the node still serves), the datadir lock, signals,
//! `--dev`, `--config` and the keystore shared with `chain-keytool`.
//!
//! Every listener is on 127.0.0.1 with port 0; every datadir is a temporary directory.

mod common;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{err, http_call, http_post, http_raw, keytool, ok, write_file, Ipc, Node, Run};
use serde_json::{json, Value};

const KEY: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
const ADDR: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";
const LIMIT_MSG_2: &str = "Maximum 2 subscriptions are allowed for a websocket connection. The limit can be updated with 'admin_setMaxSubscriptionPerWSConn' API";
const PARSE_ERROR: &str =
    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;

const HTTP: &[&str] = &["--rpc", "--rpcaddr", "127.0.0.1", "--rpcport", "0"];
const WS: &[&str] = &["--ws", "--wsaddr", "127.0.0.1", "--wsport", "0"];

// ---------------------------------------------------------------------------------------------
// Helpers

fn server_err(msg: &str) -> (i64, String) {
    (-32000, msg.to_string())
}

fn not_available(method: &str) -> (i64, String) {
    (
        -32601,
        format!("the method {method} does not exist/is not available"),
    )
}

/// The `rpc_modules` answer offering exactly `names`.
fn modules(names: &[&str]) -> Value {
    Value::Object(
        names
            .iter()
            .map(|n| (n.to_string(), json!("1.0")))
            .collect(),
    )
}

fn args<'a>(a: &[&'a str], b: &[&'a str]) -> Vec<&'a str> {
    a.iter().chain(b).copied().collect()
}

/// Polls `f` every 20 ms for up to `secs` seconds.
fn wait_until(secs: u64, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `url=` values of the log lines containing `marker`, in order.
fn logged_urls(node: &Node, marker: &str) -> Vec<String> {
    node.log_text()
        .lines()
        .filter(|l| l.contains(marker))
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("url="))
                .map(str::to_string)
        })
        .collect()
}

/// Waits for the `count+1`-th log line `<marker> url=<scheme>127.0.0.1:PORT` and returns its
/// URL (PORT a real port, not 0).
fn nth_endpoint(node: &Node, marker: &str, scheme: &str, count: usize) -> String {
    assert!(
        wait_until(5, || logged_urls(node, marker).len() > count),
        "no new `{marker}` line; log:\n{}",
        node.log_text()
    );
    let url = logged_urls(node, marker)[count].clone();
    let line = format!("{marker} url={url}");
    assert!(node.log_text().contains(&line), "{line}");
    let port: u16 = url
        .strip_prefix(&format!("{scheme}127.0.0.1:"))
        .unwrap_or_else(|| panic!("{url}"))
        .parse()
        .unwrap_or_else(|_| panic!("{url}"));
    assert_ne!(port, 0, "{url}");
    url
}

fn host_port(url: &str) -> &str {
    url.split_once("://").unwrap().1.trim_end_matches('/')
}

/// True when something accepts TCP connections at the URL's address.
fn answers(url: &str) -> bool {
    TcpStream::connect(host_port(url)).is_ok()
}

/// How many log lines contain `needle`.
fn count_lines(node: &Node, needle: &str) -> usize {
    node.log_text()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

type Ws = tungstenite::WebSocket<tungstenite::stream::MaybeTlsStream<TcpStream>>;

fn ws_connect(url: &str) -> Ws {
    let (ws, _) = tungstenite::connect(url).unwrap_or_else(|e| panic!("connect {url}: {e}"));
    if let tungstenite::stream::MaybeTlsStream::Plain(s) = ws.get_ref() {
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    }
    ws
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// Sends `text` and returns the next text message, parsed.
fn ws_raw(ws: &mut Ws, text: &str) -> Value {
    ws.send(tungstenite::Message::text(text.to_string()))
        .unwrap();
    loop {
        match ws.read().unwrap() {
            tungstenite::Message::Text(t) => return serde_json::from_str(t.as_str()).unwrap(),
            tungstenite::Message::Binary(b) => return serde_json::from_slice(&b).unwrap(),
            _ => continue,
        }
    }
}

/// One call over WebSocket: the response with the call's id (notifications are skipped).
fn ws_call(ws: &mut Ws, method: &str, params: Value) -> Value {
    let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
    let req = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string();
    let mut v = ws_raw(ws, &req);
    while v["id"] != json!(id) {
        assert!(v.get("method").is_some(), "unexpected message: {v}");
        v = match ws.read().unwrap() {
            tungstenite::Message::Text(t) => serde_json::from_str(t.as_str()).unwrap(),
            _ => continue,
        };
    }
    v
}

/// A raw IPC connection that can tell a closed connection from a silent one.
struct RawIpc {
    s: UnixStream,
    buf: Vec<u8>,
}

enum Read1 {
    Value(Value),
    Eof,
    Timeout,
}

impl RawIpc {
    fn connect(path: &Path, timeout_secs: u64) -> RawIpc {
        let s = UnixStream::connect(path).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(timeout_secs)))
            .unwrap();
        RawIpc { s, buf: Vec::new() }
    }

    fn send(&mut self, bytes: &[u8]) {
        self.s.write_all(bytes).unwrap();
    }

    fn read(&mut self) -> Read1 {
        loop {
            let mut it = serde_json::Deserializer::from_slice(&self.buf).into_iter::<Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let used = it.byte_offset();
                    self.buf.drain(..used);
                    return Read1::Value(v);
                }
                Some(Err(e)) if !e.is_eof() => panic!("bad JSON from server: {e}"),
                _ => {}
            }
            let mut chunk = [0u8; 65536];
            match self.s.read(&mut chunk) {
                Ok(0) => return Read1::Eof,
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Read1::Timeout
                }
                // A reset is a close too.
                Err(_) => return Read1::Eof,
            }
        }
    }

    fn value(&mut self) -> Value {
        match self.read() {
            Read1::Value(v) => v,
            Read1::Eof => panic!("connection closed, expected a response"),
            Read1::Timeout => panic!("no response"),
        }
    }

    fn expect_eof(&mut self) {
        match self.read() {
            Read1::Eof => {}
            Read1::Value(v) => panic!("expected the connection to be closed, got {v}"),
            Read1::Timeout => panic!("expected the connection to be closed, it stays open"),
        }
    }
}

/// Runs `chaind ARGS...` to its end (at most `secs` seconds, then it is killed and the test
/// fails).
fn run_chaind(args: &[&std::ffi::OsStr], secs: u64) -> Run {
    let mut child = Command::new(common::chaind_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chaind");
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap().into();
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let out: Run = child.wait_with_output().unwrap().into();
            panic!("chaind {args:?} still runs after {secs} s: {out:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A child process killed (and reaped) when dropped, even when the test panics.
struct KillOnDrop(std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

fn ipc_of(node: &Node) -> Ipc {
    Ipc::connect(node.ipc.as_ref().expect("IPC endpoint"))
}

// ---------------------------------------------------------------------------------------------
// admin over IPC: datadir, HTTP and WebSocket endpoints

#[test]
fn admin_datadir_is_the_absolute_datadir() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    let dd = ok(c.call("admin_datadir", json!([])));
    let dd = dd.as_str().unwrap();
    assert!(Path::new(dd).is_absolute(), "{dd}");
    assert_eq!(
        std::fs::canonicalize(dd).unwrap(),
        std::fs::canonicalize(n.datadir.path()).unwrap()
    );
    // Surplus arguments of a method without parameters are ignored.
    assert_eq!(ok(c.call("admin_datadir", json!([1, 2]))), json!(dd));

    // A relative --datadir is reported absolute.
    let base = tempfile::tempdir().unwrap();
    let child = Command::new(common::chaind_bin())
        .current_dir(base.path())
        .args(["--datadir", "rel/dd", "--lightkdf"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = KillOnDrop(child);
    let sock = base.path().join("rel/dd/chaind.ipc");
    let up = wait_until(10, || UnixStream::connect(&sock).is_ok());
    let answer = up.then(|| Ipc::connect(&sock).call("admin_datadir", json!([])));
    drop(child);
    assert!(
        up,
        "the node with a relative datadir did not open its IPC socket"
    );
    let want = std::fs::canonicalize(base.path()).unwrap().join("rel/dd");
    let got = ok(answer.unwrap());
    assert_eq!(std::fs::canonicalize(got.as_str().unwrap()).unwrap(), want);
    assert!(Path::new(got.as_str().unwrap()).is_absolute(), "{got}");
}

/// `admin_startHTTP`/`admin_startWS` on port 0 answer `true` (the spec); the port bound is in
/// the log line and in `admin_endpoints`, which lists what runs.
#[test]
fn admin_endpoints_shows_the_bound_ports() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    let before = ok(c.call("admin_endpoints", json!([])));
    assert_eq!(
        before,
        json!({"http": null, "ws": null, "ipc": {"url": n.ipc.as_ref().unwrap().to_str().unwrap(), "apis": null}})
    );
    assert_eq!(
        ok(c.call(
            "admin_startHTTP",
            json!(["127.0.0.1", 0, null, "admin,net"])
        )),
        json!(true)
    );
    let http = nth_endpoint(&n, "HTTP endpoint opened", "http://", 0);
    assert!(
        n.log_text()
            .contains(&format!("HTTP endpoint opened url={http} apis=admin,net")),
        "{}",
        n.log_text()
    );
    assert_eq!(
        ok(c.call("admin_startWS", json!(["localhost", 0, null, "chain"]))),
        json!(true)
    );
    let ws = nth_endpoint(&n, "WebSocket endpoint opened", "ws://", 0);
    let running = ok(c.call("admin_endpoints", json!([])));
    assert_eq!(
        running["http"],
        json!({"url": http, "apis": ["admin", "net", "rpc"]})
    );
    assert_eq!(running["ws"], json!({"url": ws, "apis": ["chain", "rpc"]}));
    // The same answer over the endpoint it describes.
    assert_eq!(ok(http_call(&http, "admin_endpoints", json!([]))), running);
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));
    let after = ok(c.call("admin_endpoints", json!([])));
    assert_eq!(
        (after["http"].clone(), after["ws"].clone()),
        (Value::Null, running["ws"].clone())
    );
    assert_eq!(ok(c.call("admin_stopWS", json!([]))), json!(true));
    assert_eq!(ok(c.call("admin_endpoints", json!([]))), before);
}

/// The `apis` argument: an unknown module is refused (-32000 naming it and the known ones,
/// nothing opened); the reference's names are accepted, as its test suite passes them.
#[test]
fn admin_start_http_checks_its_module_list() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    for method in ["admin_startHTTP", "admin_startWS", "admin_startRPC"] {
        assert_eq!(
            err(c.call(method, json!(["127.0.0.1", 0, null, "admin,nosuch,klay,foo"]))),
            server_err(
                "unknown modules nosuch, foo in the module list: this node's modules are admin, chain, debug, eth, net, personal, rpc, txpool, web3; the reference's klay, governance, istanbul, miner, shh, mainbridge, subbridge, chaindatafetcher, clique are accepted too (klay offers chain, the others nothing)"
            ),
            "{method}"
        );
    }
    assert_eq!(
        ok(c.call("admin_endpoints", json!([])))["http"],
        Value::Null
    );
    assert_eq!(count_lines(&n, "endpoint opened url=http"), 0);
    assert_eq!(count_lines(&n, "endpoint opened url=ws"), 0);
    // The list the reference's test suite gives admin_startRPC and admin_startWS.
    let suite = "admin,eth,klay,net,personal,debug,web3,txpool";
    assert_eq!(
        ok(c.call("admin_startRPC", json!(["127.0.0.1", 0, null, suite]))),
        json!(true)
    );
    let url = nth_endpoint(&n, "HTTP endpoint opened", "http://", 0);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["admin", "chain", "debug", "eth", "net", "personal", "rpc", "txpool", "web3"])
    );
    assert!(
        n.log_text().lines().any(|l| l.starts_with("WARN")
            && l.contains(
                "module klay is the reference's name of this node's chain module: chain is offered"
            )),
        "{}",
        n.log_text()
    );
}

/// -32601 keeps the reference's text; its data says which case it is.
#[test]
fn method_not_found_data_on_the_wire() {
    let n = Node::start(&args(HTTP, &["--rpcapi", "chain"]));
    let http = n.http.clone().unwrap();
    let mut c = ipc_of(&n);
    let data = |v: Value, method: &str| -> String {
        assert_eq!(err(v.clone()), not_available(method));
        v["error"]["data"].as_str().unwrap().to_string()
    };
    assert_eq!(
        data(
            http_call(&http, "personal_listAccounts", json!([])),
            "personal_listAccounts"
        ),
        "module personal is not offered on this HTTP endpoint; it is offered over IPC"
    );
    assert_eq!(
        data(c.call("chain_getBalnce", json!([])), "chain_getBalnce"),
        "no such method; did you mean chain_getBalance?"
    );
    assert_eq!(
        data(c.call("klay_getBalance", json!([])), "klay_getBalance"),
        "no such method: this node serves the reference's klay module as chain; did you mean chain_getBalance?"
    );
    for unbuilt in [
        "governance_vote",
        "klay_getStakingInfo",
        "chain_getStakingInfo",
        "eth_resend",
    ] {
        assert_eq!(
            data(c.call(unbuilt, json!([])), unbuilt),
            format!("{unbuilt} is a method of the reference node that this node does not build")
        );
    }
    assert_eq!(
        data(c.call("foo_bar", json!([])), "foo_bar"),
        "no such method"
    );
}

#[test]
fn admin_start_stop_http() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    const OPENED: &str = "HTTP endpoint opened";

    // Start, default modules, already running, stop, not running.
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "http://", 0);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["chain", "net", "rpc"])
    );
    assert_eq!(ok(http_call(&url, "net_version", json!([]))), json!("1000"));
    assert_eq!(
        err(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        server_err("HTTP RPC already running on 127.0.0.1:0")
    );
    // Whatever the arguments of the second start.
    assert_eq!(
        err(c.call("admin_startHTTP", json!(["127.0.0.1", 1, null, "admin"]))),
        server_err("HTTP RPC already running on 127.0.0.1:0")
    );
    assert!(answers(&url), "the running endpoint is untouched");
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));
    assert!(
        !answers(&url),
        "{url} still accepts connections after admin_stopHTTP"
    );
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );

    // The deprecated aliases: same behaviour, plus a deprecation warning each.
    let warnings = count_lines(&n, "Deprecation warning");
    assert_eq!(
        ok(c.call("admin_startRPC", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    assert!(
        wait_until(5, || count_lines(&n, "Deprecation warning") > warnings),
        "admin_startRPC logged no deprecation warning; log:\n{}",
        n.log_text()
    );
    assert!(
        n.log_text()
            .lines()
            .any(|l| l.contains("Deprecation warning") && l.contains("admin.StartRPC")),
        "{}",
        n.log_text()
    );
    let url = nth_endpoint(&n, OPENED, "http://", 1);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["chain", "net", "rpc"])
    );
    assert_eq!(
        err(c.call("admin_startRPC", json!(["127.0.0.1", 0]))),
        server_err("HTTP RPC already running on 127.0.0.1:0")
    );
    assert_eq!(
        err(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        server_err("HTTP RPC already running on 127.0.0.1:0")
    );
    let warnings = count_lines(&n, "Deprecation warning");
    assert_eq!(ok(c.call("admin_stopRPC", json!([]))), json!(true));
    assert!(!answers(&url));
    assert!(
        wait_until(5, || count_lines(&n, "Deprecation warning") > warnings),
        "admin_stopRPC logged no deprecation warning; log:\n{}",
        n.log_text()
    );
    assert!(
        n.log_text()
            .lines()
            .any(|l| l.contains("Deprecation warning") && l.contains("admin.StopRPC")),
        "{}",
        n.log_text()
    );
    let before = count_lines(&n, "Deprecation warning");
    assert_eq!(
        err(c.call("admin_stopRPC", json!([]))),
        server_err("HTTP RPC not running")
    );
    // The deprecated name warns even when the call fails; the log arrives asynchronously.
    assert!(wait_until(5, || count_lines(&n, "Deprecation warning") > before));
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );
    let plain = count_lines(&n, "Deprecation warning");
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));
    let _ = nth_endpoint(&n, OPENED, "http://", 2);
    assert_eq!(
        count_lines(&n, "Deprecation warning"),
        plain,
        "only the deprecated names warn"
    );

    // An explicit module list: exactly those, plus rpc.
    assert_eq!(
        ok(c.call(
            "admin_startHTTP",
            json!(["127.0.0.1", 0, null, "personal,admin"])
        )),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "http://", 3);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["admin", "personal", "rpc"])
    );
    assert_eq!(
        ok(http_call(&url, "personal_listAccounts", json!([]))),
        json!([])
    );
    assert_eq!(
        ok(http_call(&url, "admin_datadir", json!([]))),
        ok(c.call("admin_datadir", json!([])))
    );
    assert_eq!(
        err(http_call(&url, "net_version", json!([]))),
        not_available("net_version")
    );
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));

    // An empty list: rpc only.
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0, null, ""]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "http://", 4);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["rpc"])
    );
    assert_eq!(
        err(http_call(&url, "chain_accounts", json!([]))),
        not_available("chain_accounts")
    );
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));

    // A listen error is the socket error, changes nothing, and a later start succeeds.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    assert_eq!(
        err(c.call("admin_startHTTP", json!(["127.0.0.1", port]))),
        server_err(&format!(
            "listen tcp 127.0.0.1:{port}: bind: address already in use"
        ))
    );
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );
    assert_eq!(
        logged_urls(&n, OPENED).len(),
        5,
        "a failed start logs no opened endpoint"
    );
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "http://", 5);
    assert_eq!(ok(http_call(&url, "net_version", json!([]))), json!("1000"));
    assert_eq!(
        err(c.call("admin_startHTTP", json!(["127.0.0.1", port]))),
        server_err("HTTP RPC already running on 127.0.0.1:0")
    );
    assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));
    drop(held);

    // Bad argument types are parameter errors.
    let (code, msg) = err(c.call("admin_startHTTP", json!(["127.0.0.1", "x"])));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 1: "), "{msg}");
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );
}

#[test]
fn admin_start_stop_ws() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    const OPENED: &str = "WebSocket endpoint opened";

    assert_eq!(
        ok(c.call("admin_startWS", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "ws://", 0);
    let mut ws = ws_connect(&url);
    assert_eq!(
        ok(ws_call(&mut ws, "rpc_modules", json!([]))),
        modules(&["chain", "net", "personal", "rpc"])
    );
    assert_eq!(
        ok(ws_call(&mut ws, "personal_listAccounts", json!([]))),
        json!([])
    );
    assert_eq!(
        err(ws_call(&mut ws, "admin_datadir", json!([]))),
        not_available("admin_datadir")
    );
    assert_eq!(
        err(c.call("admin_startWS", json!(["127.0.0.1", 0]))),
        server_err("WebSocket RPC already running on 127.0.0.1:0")
    );
    assert_eq!(ok(c.call("admin_stopWS", json!([]))), json!(true));
    assert!(
        !answers(&url),
        "{url} still accepts connections after admin_stopWS"
    );
    // The connection that was open is closed too.
    match ws.read() {
        Ok(tungstenite::Message::Close(_)) => {}
        Ok(m) => panic!("unexpected message after stop: {m:?}"),
        Err(tungstenite::Error::Io(e))
            if matches!(
                e.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            panic!("the WebSocket connection stays open after admin_stopWS")
        }
        Err(_) => {}
    }
    assert_eq!(
        err(c.call("admin_stopWS", json!([]))),
        server_err("WebSocket RPC not running")
    );

    // HTTP and WebSocket are independent.
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );

    // An explicit module list, and the empty one.
    assert_eq!(
        ok(c.call(
            "admin_startWS",
            json!(["127.0.0.1", 0, null, "admin, web3"])
        )),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "ws://", 1);
    let mut ws = ws_connect(&url);
    assert_eq!(
        ok(ws_call(&mut ws, "rpc_modules", json!([]))),
        modules(&["admin", "rpc", "web3"])
    );
    assert_eq!(
        err(ws_call(&mut ws, "personal_listAccounts", json!([]))),
        not_available("personal_listAccounts")
    );
    drop(ws);
    assert_eq!(ok(c.call("admin_stopWS", json!([]))), json!(true));
    assert_eq!(
        ok(c.call("admin_startWS", json!(["127.0.0.1", 0, null, ""]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "ws://", 2);
    let mut ws = ws_connect(&url);
    assert_eq!(
        ok(ws_call(&mut ws, "rpc_modules", json!([]))),
        modules(&["rpc"])
    );
    drop(ws);
    assert_eq!(ok(c.call("admin_stopWS", json!([]))), json!(true));

    // A listen error, then a start on a free port.
    let held = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let listen_err = err(c.call("admin_startWS", json!(["127.0.0.1", port])));
    assert_eq!(
        err(c.call("admin_stopWS", json!([]))),
        server_err("WebSocket RPC not running")
    );
    assert_eq!(
        ok(c.call("admin_startWS", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let url = nth_endpoint(&n, OPENED, "ws://", 3);
    let mut ws = ws_connect(&url);
    assert_eq!(
        ok(ws_call(&mut ws, "net_version", json!([]))),
        json!("1000")
    );
    drop(ws);
    assert_eq!(ok(c.call("admin_stopWS", json!([]))), json!(true));
    drop(held);
    // Checked last so that the checks above run whatever the wording.
    assert_eq!(listen_err.0, -32000, "{listen_err:?}");
    assert!(
        listen_err
            .1
            .to_lowercase()
            .contains("address already in use"),
        "{listen_err:?}"
    );
    assert_eq!(
        listen_err,
        server_err(&format!("listen tcp 127.0.0.1:{port}: bind: address already in use")),
        "the WebSocket listen error should read like the HTTP one (the socket error of the reference)"
    );
}

/// Reads one HTTP response (head and Content-Length body) from a keep-alive connection.
fn read_http_response(s: &mut TcpStream) -> (u16, String) {
    let mut data = Vec::new();
    let mut byte = [0u8; 1];
    while !data.ends_with(b"\r\n\r\n") {
        assert_eq!(
            s.read(&mut byte).unwrap(),
            1,
            "connection closed inside a response head"
        );
        data.push(byte[0]);
    }
    let head = String::from_utf8(data).unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let len: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap())
        })
        .expect("a Content-Length");
    let mut body = vec![0u8; len];
    s.read_exact(&mut body).unwrap();
    (status, String::from_utf8(body).unwrap())
}

#[test]
fn stopping_http_with_clients_connected_is_prompt_and_ipc_keeps_working() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    let mut other = ipc_of(&n);
    for round in 0..2 {
        assert_eq!(
            ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
            json!(true)
        );
        let url = nth_endpoint(&n, "HTTP endpoint opened", "http://", round);
        // A keep-alive client that has made one request, and one that has sent nothing.
        let mut keep = TcpStream::connect(host_port(&url)).unwrap();
        keep.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let body = r#"{"jsonrpc":"2.0","id":1,"method":"net_version"}"#;
        let req = format!("POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len());
        keep.write_all(req.as_bytes()).unwrap();
        let (status, text) = read_http_response(&mut keep);
        assert_eq!(status, 200, "{text}");
        assert_eq!(
            serde_json::from_str::<Value>(&text).unwrap()["result"],
            json!("1000")
        );
        // The same connection serves a second request.
        keep.write_all(req.as_bytes()).unwrap();
        assert_eq!(read_http_response(&mut keep).0, 200);
        let mut idle = TcpStream::connect(host_port(&url)).unwrap();
        idle.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        std::thread::sleep(Duration::from_millis(100)); // let the server accept both

        // Answered (not held up by the connected clients; how long it takes is measured by
        // the attack bench's shutdown case, not asserted here).
        assert_eq!(ok(c.call("admin_stopHTTP", json!([]))), json!(true));
        assert!(!answers(&url));
        // Both connections were closed by the stop.
        for s in [&mut keep, &mut idle] {
            let mut buf = [0u8; 64];
            match s.read(&mut buf) {
                Ok(0) => {}
                Ok(k) => panic!(
                    "unexpected bytes after stop: {:?}",
                    String::from_utf8_lossy(&buf[..k])
                ),
                Err(e) => assert!(
                    !matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ),
                    "a client connection stays open after admin_stopHTTP"
                ),
            }
        }
        // IPC keeps working, on both connections.
        assert_eq!(ok(c.call("net_version", json!([]))), json!("1000"));
        assert_eq!(
            ok(other.call("rpc_modules", json!([])))["admin"],
            json!("1.0")
        );
    }
    assert_eq!(
        ok(Ipc::connect(n.ipc.as_ref().unwrap()).call("net_listening", json!([]))),
        json!(false)
    );
}

// ---------------------------------------------------------------------------------------------
// Subscription limit

#[test]
fn subscription_limit_per_connection() {
    let n = Node::start(&args(HTTP, WS));
    let ws_url = n.ws.clone().unwrap();
    let http = n.http.clone().unwrap();
    let mut c = ipc_of(&n);

    for bad in [0, -1] {
        assert_eq!(
            err(c.call("admin_setMaxSubscriptionPerWSConn", json!([bad]))),
            server_err(&format!(
                "invalid subscription limit {bad}: must be at least 1"
            ))
        );
    }
    // Bad arguments: -32602 with the start of the message.
    let bad_args = [
        (json!(["x"]), "invalid argument 0: "),
        (json!([]), "missing value for required argument 0"),
        (json!([1.5]), "invalid argument 0: "),
        (json!([4_294_967_296u64]), "invalid argument 0: "), // out of int32 range
    ];
    for (params, start) in bad_args {
        let (code, msg) = err(c.call("admin_setMaxSubscriptionPerWSConn", params.clone()));
        assert_eq!(code, -32602, "{params}: {msg}");
        assert!(msg.starts_with(start), "{params}: {msg}");
    }
    assert_eq!(
        ok(c.call("admin_setMaxSubscriptionPerWSConn", json!([2]))),
        Value::Null
    );

    // One WebSocket connection: two subscriptions, the third is refused.
    let mut a = ws_connect(&ws_url);
    let s1 = ok(ws_call(&mut a, "chain_subscribe", json!(["newHeads"])));
    let s2 = ok(ws_call(
        &mut a,
        "chain_subscribe",
        json!(["newPendingTransactions"]),
    ));
    for s in [&s1, &s2] {
        let s = s.as_str().unwrap();
        assert!(s.starts_with("0x") && s.len() <= 34 && s.len() > 2, "{s}");
    }
    assert_ne!(s1, s2);
    assert_eq!(
        err(ws_call(&mut a, "chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );
    // The limit is checked before the name.
    assert_eq!(
        err(ws_call(&mut a, "chain_subscribe", json!(["foo"]))),
        server_err(LIMIT_MSG_2)
    );

    // Another connection has its own two.
    let mut b = ws_connect(&ws_url);
    ok(ws_call(&mut b, "chain_subscribe", json!(["newHeads"])));
    ok(ws_call(&mut b, "chain_subscribe", json!(["newHeads"])));
    assert_eq!(
        err(ws_call(&mut b, "chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );

    // Unsubscribing frees a slot; an unknown or already cancelled id is an error.
    assert_eq!(
        ok(ws_call(&mut a, "chain_unsubscribe", json!([s1]))),
        json!(true)
    );
    assert_eq!(
        err(ws_call(&mut a, "chain_unsubscribe", json!([s1]))),
        server_err("subscription not found")
    );
    // Another connection's subscription cannot be cancelled from here.
    assert_eq!(
        err(ws_call(&mut b, "chain_unsubscribe", json!([s2]))),
        server_err("subscription not found")
    );
    let s3 = ok(ws_call(&mut a, "chain_subscribe", json!(["newHeads"])));
    assert_eq!(
        err(ws_call(&mut a, "chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );
    // Any module prefix unsubscribes.
    assert_eq!(
        ok(ws_call(&mut a, "foo_unsubscribe", json!([s3]))),
        json!(true)
    );
    ok(ws_call(&mut a, "chain_subscribe", json!(["newHeads"])));

    // Unknown names, on a fresh connection.
    let mut d = ws_connect(&ws_url);
    assert_eq!(
        err(ws_call(&mut d, "chain_subscribe", json!(["foo"]))),
        (
            -32601,
            r#"no "foo" subscription in chain namespace"#.to_string()
        )
    );
    assert_eq!(
        err(ws_call(&mut d, "chain_subscribe", json!([5]))),
        (
            -32602,
            "expected subscription name as first argument".to_string()
        )
    );
    // A failed subscribe takes no slot.
    ok(ws_call(&mut d, "chain_subscribe", json!(["newHeads"])));
    ok(ws_call(&mut d, "chain_subscribe", json!(["newHeads"])));
    assert_eq!(
        err(ws_call(&mut d, "chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );

    // Subscriptions made inside one batch count too (DECISIONS.md).
    let mut e = ws_connect(&ws_url);
    let batch = (1..=3)
        .map(|i| json!({"jsonrpc":"2.0","id":i,"method":"chain_subscribe","params":["newHeads"]}))
        .collect::<Vec<_>>();
    let replies = ws_raw(&mut e, &Value::Array(batch).to_string());
    let replies = replies.as_array().unwrap_or_else(|| panic!("{replies}"));
    assert_eq!(replies.len(), 3);
    assert!(
        replies[0]["result"].is_string() && replies[1]["result"].is_string(),
        "{replies:?}"
    );
    assert_eq!(err(replies[2].clone()), server_err(LIMIT_MSG_2));

    // The same limit on IPC connections.
    let mut i1 = ipc_of(&n);
    ok(i1.call("chain_subscribe", json!(["newHeads"])));
    ok(i1.call("chain_subscribe", json!(["newPendingTransactions"])));
    assert_eq!(
        err(i1.call("chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );
    let mut i2 = ipc_of(&n);
    ok(i2.call("chain_subscribe", json!(["newHeads"])));

    // Raising the limit applies at once to existing connections.
    assert_eq!(
        ok(c.call("admin_setMaxSubscriptionPerWSConn", json!([3]))),
        Value::Null
    );
    ok(ws_call(&mut b, "chain_subscribe", json!(["newHeads"])));
    ok(i1.call("chain_subscribe", json!(["newHeads"])));
    assert_eq!(
        err(i1.call("chain_subscribe", json!(["newHeads"]))),
        server_err(&LIMIT_MSG_2.replace("Maximum 2", "Maximum 3"))
    );

    // HTTP has no subscriptions at all.
    assert_eq!(
        err(http_call(&http, "chain_subscribe", json!(["newHeads"]))),
        server_err("notifications not supported")
    );
    assert_eq!(
        err(http_call(&http, "chain_subscribe", json!(["foo"]))),
        server_err("notifications not supported")
    );
    assert_eq!(
        err(http_call(&http, "chain_unsubscribe", json!(["0x1"]))),
        server_err("subscription not found")
    );
}

#[test]
fn subscription_limit_from_the_command_line() {
    let n = Node::start(&args(WS, &["--wsmaxsubscriptionperconn", "2"]));
    let mut a = ws_connect(n.ws.as_ref().unwrap());
    ok(ws_call(&mut a, "chain_subscribe", json!(["newHeads"])));
    ok(ws_call(&mut a, "chain_subscribe", json!(["newHeads"])));
    assert_eq!(
        err(ws_call(&mut a, "chain_subscribe", json!(["newHeads"]))),
        server_err(LIMIT_MSG_2)
    );
}

// ---------------------------------------------------------------------------------------------
// Module gating

#[test]
fn default_modules_per_transport() {
    let n = Node::start(&args(HTTP, WS));
    let http = n.http.clone().unwrap();
    assert!(http.starts_with("http://127.0.0.1:"), "{http}");
    assert_eq!(
        ok(http_call(&http, "rpc_modules", json!([]))),
        modules(&["chain", "net", "rpc"])
    );
    for m in [
        "personal_listAccounts",
        "admin_datadir",
        "admin_startHTTP",
        "web3_clientVersion",
        "personal_newAccount",
    ] {
        assert_eq!(err(http_call(&http, m, json!([]))), not_available(m));
    }
    // Lookup comes before parameter decoding.
    assert_eq!(
        err(http_call(&http, "admin_datadir", json!({"x": 1}))),
        not_available("admin_datadir")
    );
    assert_eq!(ok(http_call(&http, "chain_accounts", json!([]))), json!([]));

    let mut ws = ws_connect(n.ws.as_ref().unwrap());
    assert_eq!(
        ok(ws_call(&mut ws, "rpc_modules", json!([]))),
        modules(&["chain", "net", "personal", "rpc"])
    );
    assert_eq!(
        ok(ws_call(&mut ws, "personal_listAccounts", json!([]))),
        json!([])
    );
    for m in [
        "admin_datadir",
        "admin_setMaxSubscriptionPerWSConn",
        "web3_sha3",
    ] {
        assert_eq!(err(ws_call(&mut ws, m, json!([]))), not_available(m));
    }

    let mut c = ipc_of(&n);
    assert_eq!(
        ok(c.call("rpc_modules", json!([]))),
        modules(&["admin", "chain", "debug", "eth", "net", "personal", "rpc", "txpool", "web3"])
    );
    assert_eq!(ok(c.call("personal_listAccounts", json!([]))), json!([]));
    assert_eq!(
        err(c.call("admin_foo", json!([]))),
        not_available("admin_foo")
    );
    assert_eq!(
        err(c.call("nounderscore", json!([]))),
        not_available("nounderscore")
    );
    assert_eq!(
        err(c.call("Admin_datadir", json!([]))),
        not_available("Admin_datadir")
    );
    // The console's own helpers are not server methods.
    assert_eq!(
        err(c.call("admin_sleepBlocks", json!([]))),
        not_available("admin_sleepBlocks")
    );
}

#[test]
fn rpcapi_flag_chooses_the_http_modules() {
    let n = Node::start(&args(HTTP, &["--rpcapi", "personal"]));
    let http = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&http, "rpc_modules", json!([]))),
        modules(&["personal", "rpc"])
    );
    assert_eq!(
        ok(http_call(&http, "personal_listAccounts", json!([]))),
        json!([])
    );
    assert_eq!(
        err(http_call(&http, "net_version", json!([]))),
        not_available("net_version")
    );
    assert_eq!(
        err(http_call(&http, "admin_datadir", json!([]))),
        not_available("admin_datadir")
    );

    let n2 = Node::start(&args(HTTP, &["--rpcapi", ""]));
    let http2 = n2.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&http2, "rpc_modules", json!([]))),
        modules(&["rpc"])
    );
    assert_eq!(
        err(http_call(&http2, "net_version", json!([]))),
        not_available("net_version")
    );

    // Entries are trimmed; the reference's module names are accepted (klay is our chain,
    // istanbul is not built here), each with a warning in the log.
    let n3 = Node::start(&args(
        HTTP,
        &["--rpcapi", " web3 , eth,admin, klay, istanbul"],
    ));
    let http3 = n3.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&http3, "rpc_modules", json!([]))),
        modules(&["admin", "chain", "eth", "rpc", "web3"])
    );
    let log = n3.log_text();
    for note in [
        "note=\"module istanbul is a module of the reference node that this node does not build: ignored\"",
        "note=\"module klay is the reference's name of this node's chain module: chain is offered\"",
    ] {
        assert!(
            log.lines().any(|l| l.starts_with("WARN") && l.contains(note)),
            "{note}: {log}"
        );
    }
    // A name that is nobody's module is refused before anything starts: exit 2, naming it
    // and the known ones; no data directory is made.
    let base = tempfile::tempdir().unwrap();
    let dd = base.path().join("dd");
    for (flag, list) in [("--rpcapi", " web3 , nosuch,admin"), ("--wsapi", "Chain")] {
        let run = run_chaind(
            &[
                os("--datadir"),
                dd.as_os_str(),
                os("--rpc"),
                os("--rpcport"),
                os("0"),
                os(flag),
                os(list),
            ],
            10,
        );
        assert_eq!(run.code, 2, "{run:?}");
        let name = list
            .split(',')
            .map(str::trim)
            .find(|m| *m == "nosuch" || *m == "Chain")
            .unwrap();
        assert!(
            run.stderr.contains(&format!(
                "unknown module {name} in the module list: this node's modules are admin, chain, debug, eth, net, personal, rpc, txpool, web3; the reference's klay, governance, istanbul, miner, shh, mainbridge, subbridge, chaindatafetcher, clique are accepted too"
            )),
            "{run:?}"
        );
        assert!(!dd.exists(), "a refused start made the data directory");
    }

    let n4 = Node::start(&args(WS, &["--wsapi", ""]));
    let mut ws = ws_connect(n4.ws.as_ref().unwrap());
    assert_eq!(
        ok(ws_call(&mut ws, "rpc_modules", json!([]))),
        modules(&["rpc"])
    );
}

// ---------------------------------------------------------------------------------------------
// web3 and net

#[test]
fn web3_and_net() {
    let n = Node::start(HTTP);
    let mut c = ipc_of(&n);
    let v = ok(c.call("web3_clientVersion", json!([])));
    assert!(v.as_str().unwrap().starts_with("chaind/v"), "{v}");
    assert_eq!(
        ok(c.call("web3_sha3", json!(["0x68656c6c6f"]))),
        json!("0x1c8aff950685c2ed4bc3174f3472287b56d9517b9c948127319a09a7a36deac8")
    );
    assert_eq!(
        ok(c.call("web3_sha3", json!(["0x"]))),
        json!("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    );
    let (code, msg) = err(c.call("web3_sha3", json!(["hello"])));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 0: "), "{msg}");
    assert_eq!(ok(c.call("net_version", json!([]))), json!("1000"));
    assert!(ok(c.call("net_listening", json!([]))).is_boolean());
    let http = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&http, "net_version", json!([]))),
        json!("1000")
    );
    assert!(ok(http_call(&http, "net_listening", json!([]))).is_boolean());

    let n7 = Node::start(&["--networkid", "7"]);
    assert_eq!(ok(ipc_of(&n7).call("net_version", json!([]))), json!("7"));
}

// ---------------------------------------------------------------------------------------------
// Malformed input

/// POSTs `body` and returns the trimmed body, asserting status 200.
fn post200(url: &str, body: &str) -> String {
    let (status, text) = http_post(url, body);
    assert_eq!(status, 200, "{text}");
    text.trim_end().to_string()
}

fn still_serves(url: &str) {
    assert_eq!(ok(http_call(url, "net_version", json!([]))), json!("1000"));
}

#[test]
fn malformed_http_requests() {
    let n = Node::start(&args(HTTP, &["--rpcapi", "chain,net,personal"]));
    let url = n.http.clone().unwrap();

    // Truncated JSON.
    assert_eq!(
        post200(&url, r#"{"jsonrpc":"2.0","id":1,"method":"net_ver"#),
        PARSE_ERROR
    );
    still_serves(&url);
    assert_eq!(post200(&url, "not json"), PARSE_ERROR);
    still_serves(&url);

    // Wrong parameter types.
    let (code, msg) = err(http_call(&url, "personal_unlockAccount", json!([5, "", 1])));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 0: "), "{msg}");
    let (code, msg) = err(http_call(
        &url,
        "personal_unlockAccount",
        json!([ADDR, "", "x"]),
    ));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 2: "), "{msg}");
    still_serves(&url);

    // Unknown members are ignored.
    assert_eq!(
        post200(
            &url,
            r#"{"jsonrpc":"2.0","id":3,"method":"net_version","foo":[1,{"a":2}],"bar":null}"#
        ),
        r#"{"jsonrpc":"2.0","id":3,"result":"1000"}"#
    );
    // Missing or wrong jsonrpc.
    assert_eq!(
        post200(&url, r#"{"id":4,"method":"net_version"}"#),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request"}}"#
    );
    assert_eq!(
        post200(&url, r#"{"jsonrpc":"1.0","id":4,"method":"net_version"}"#),
        r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32600,"message":"invalid request"}}"#
    );
    still_serves(&url);

    // Params as an object.
    assert_eq!(
        post200(
            &url,
            r#"{"jsonrpc":"2.0","id":5,"method":"net_version","params":{"a":1}}"#
        ),
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"non-array args"}}"#
    );
    assert_eq!(
        err(http_call(
            &url,
            "personal_unlockAccount",
            json!({"address": ADDR})
        )),
        (-32602, "non-array args".into())
    );
    still_serves(&url);

    // The size limit: 512 KiB is accepted, one byte more is 413.
    let call = r#"{"jsonrpc":"2.0","id":6,"method":"net_version"}"#;
    let at_limit = format!("{call}{}", " ".repeat(524_288 - call.len()));
    assert_eq!(
        post200(&url, &at_limit),
        r#"{"jsonrpc":"2.0","id":6,"result":"1000"}"#
    );
    for len in [524_289usize, 600_000] {
        let big = format!("{call}{}", " ".repeat(len - call.len()));
        let (status, text) = http_post(&url, &big);
        assert_eq!(status, 413, "{text}");
        assert_eq!(text, format!("content length too large ({len}>524288)\n"));
        still_serves(&url);
    }

    // A batch mixing a call, a notification, an invalid element and an unknown method.
    assert_eq!(
        post200(
            &url,
            r#"[{"jsonrpc":"2.0","id":1,"method":"net_version"},{"jsonrpc":"2.0","method":"net_version"},5,{"jsonrpc":"2.0","id":"b","method":"admin_datadir"},{"id":2,"method":"net_version"}]"#
        ),
        r#"[{"jsonrpc":"2.0","id":1,"result":"1000"},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}},{"jsonrpc":"2.0","id":"b","error":{"code":-32601,"message":"the method admin_datadir does not exist/is not available","data":"module admin is not offered on this HTTP endpoint; it is offered over IPC"}},{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request"}}]"#
    );
    // Only notifications: an empty body.
    assert_eq!(
        post200(&url, r#"[{"jsonrpc":"2.0","method":"net_version"}]"#),
        ""
    );
    assert_eq!(
        post200(&url, r#"{"jsonrpc":"2.0","method":"net_version"}"#),
        ""
    );
    // The empty batch.
    assert_eq!(
        post200(&url, "[]"),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}"#
    );
    still_serves(&url);
    // 1000 calls are served, 1001 are too many.
    let batch = |k: usize| {
        format!(
            "[{}]",
            (0..k)
                .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"net_version"}}"#))
                .collect::<Vec<_>>()
                .join(",")
        )
    };
    let replies: Value = serde_json::from_str(&post200(&url, &batch(1000))).unwrap();
    let replies = replies.as_array().unwrap();
    assert_eq!(replies.len(), 1000);
    assert!(replies
        .iter()
        .enumerate()
        .all(|(i, r)| r["id"] == json!(i) && r["result"] == json!("1000")));
    assert_eq!(
        post200(&url, &batch(1001)),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large: 1001 calls, at most 1000 allowed"}}"#
    );
    still_serves(&url);

    // Content types.
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"net_version"}"#;
    let (status, text) = http_raw(&url, "POST", &[("Content-Type", "text/plain")], body);
    assert_eq!(
        (status, text.as_str()),
        (
            415,
            "invalid content type, only application/json is supported\n"
        )
    );
    let (status, text) = http_raw(&url, "POST", &[], body);
    assert_eq!(status, 415, "{text}");
    let (status, text) = http_raw(
        &url,
        "POST",
        &[("Content-Type", "application/json; charset=utf-8")],
        body,
    );
    assert_eq!(
        (status, text.trim_end()),
        (200, r#"{"jsonrpc":"2.0","id":1,"result":"1000"}"#)
    );
    still_serves(&url);
}

#[test]
fn malformed_ipc_requests() {
    let n = Node::start(&[]);
    let path = n.ipc.clone().unwrap();

    // Requests before a syntax error are answered; the error is answered with the decoder's
    // text and the connection is closed.
    let mut r = RawIpc::connect(&path, 5);
    r.send(br#"{"jsonrpc":"2.0","id":1,"method":"net_version"} {"jsonrpc":"2.0","id":2,]"#);
    assert_eq!(r.value(), json!({"jsonrpc":"2.0","id":1,"result":"1000"}));
    let v = r.value();
    assert_eq!(v["id"], Value::Null, "{v}");
    let (code, msg) = err(v);
    assert_eq!(code, -32700);
    assert!(
        !msg.is_empty() && msg != "parse error" && msg.contains("column"),
        "{msg}"
    );
    r.expect_eof();

    // A new connection works; values may follow each other without separators.
    let mut r = RawIpc::connect(&path, 5);
    r.send(br#"{"jsonrpc":"2.0","id":1,"method":"net_version"}{"jsonrpc":"2.0","id":2,"method":"rpc_modules"}"#);
    assert_eq!(r.value()["result"], json!("1000"));
    assert_eq!(r.value()["id"], json!(2));

    let mut c = ipc_of(&n);
    let (code, msg) = err(c.call("personal_unlockAccount", json!([5, "", 1])));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 0: "), "{msg}");
    assert_eq!(
        err(c.call("personal_unlockAccount", json!({"a": 1}))),
        (-32602, "non-array args".into())
    );
    c.send(r#"{"id":9,"method":"net_version","params":[]}"#);
    assert_eq!(
        c.recv().unwrap(),
        json!({"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"invalid request"}})
    );
    c.send(r#"{"jsonrpc":"2.0","id":10,"method":"net_version","unknown":{"x":[1]}}"#);
    assert_eq!(
        c.recv().unwrap(),
        json!({"jsonrpc":"2.0","id":10,"result":"1000"})
    );
    c.send("[]");
    assert_eq!(
        c.recv().unwrap(),
        json!({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}})
    );
    // A notification gets nothing: the next answer is the next call's.
    c.send(r#"{"jsonrpc":"2.0","method":"net_version"}{"jsonrpc":"2.0","id":11,"method":"net_version"}"#);
    assert_eq!(c.recv().unwrap()["id"], json!(11));
    assert_eq!(ok(c.call("net_version", json!([]))), json!("1000"));
}

/// The reference's decoder refuses values nested deeper than 10000 levels, so a deeply nested
/// body is a syntax error: `parse error` over HTTP, whether or not the brackets are closed.
#[test]
fn deeply_nested_http_body_is_a_parse_error() {
    let n = Node::start(HTTP);
    let url = n.http.clone().unwrap();
    let open = "[".repeat(100_000);
    assert_eq!(post200(&url, &open), PARSE_ERROR);
    still_serves(&url);
    let closed = format!("{open}{}", "]".repeat(100_000));
    let answer = post200(&url, &closed);
    still_serves(&url);
    assert_eq!(answer, PARSE_ERROR, "100000 nested arrays over HTTP");
}

/// Over IPC the same depth error is answered -32700 and the connection closed, at once (the
/// decoder fails on the 10001st level; it does not wait for the rest of the value).
#[test]
fn deeply_nested_ipc_input_is_a_parse_error_and_closes() {
    let n = Node::start(&[]);
    let path = n.ipc.clone().unwrap();
    let mut r = RawIpc::connect(&path, 5);
    r.send("[".repeat(100_000).as_bytes());
    let answer = match r.read() {
        Read1::Value(v) => Ok((v, matches!(r.read(), Read1::Eof))),
        Read1::Eof => Err("closed without an answer"),
        Read1::Timeout => Err("no answer within 5 s"),
    };
    drop(r);
    assert_eq!(ok(ipc_of(&n).call("net_version", json!([]))), json!("1000"));
    let (v, eof) = answer.unwrap_or_else(|e| panic!("100000 '[' over IPC: {e}"));
    assert_eq!(v["id"], Value::Null, "{v}");
    assert_eq!(v["error"]["code"], json!(-32700), "{v}");
    assert!(eof, "the IPC connection stays open after the parse error");
}

/// A batch element that is not an object is an invalid request with id null (reference §1.5),
/// even when it is an array shaped like a call.
#[test]
fn batch_elements_that_are_not_objects_are_invalid() {
    let n = Node::start(HTTP);
    let url = n.http.clone().unwrap();
    let invalid =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}"#;
    assert_eq!(
        post200(&url, r#"[1,"x",null,true]"#),
        format!("[{}]", [invalid; 4].join(","))
    );
    assert_eq!(post200(&url, r#"[[]]"#), format!("[{invalid}]"));
    let as_array = post200(&url, r#"[["2.0",1,"net_version"]]"#);
    still_serves(&url);
    assert_eq!(
        as_array,
        format!("[{invalid}]"),
        "an array element of a batch was run as a call"
    );
}

/// `params` that is not an array is `non-array args` for every method (reference §1.3),
/// `rpc_modules` included (surplus array elements are what it ignores, §2.5).
#[test]
fn rpc_modules_with_object_params_is_non_array_args() {
    let n = Node::start(HTTP);
    let url = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([1, 2]))),
        modules(&["chain", "net", "rpc"])
    );
    assert_eq!(
        post200(
            &url,
            r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":{}}"#
        ),
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"non-array args"}}"#
    );
}

// ---------------------------------------------------------------------------------------------
// Lifecycle

#[test]
fn a_second_node_on_the_same_datadir_exits_1() {
    let n = Node::start(HTTP);
    let run = run_chaind(
        &[
            os("--datadir"),
            n.datadir.path().as_os_str(),
            os("--lightkdf"),
        ],
        10,
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.contains("is in use by another chaind"),
        "{run:?}"
    );
    // The first node is unharmed: its socket, its HTTP endpoint.
    assert!(n.ipc.as_ref().unwrap().exists());
    assert_eq!(ok(ipc_of(&n).call("net_version", json!([]))), json!("1000"));
    still_serves(n.http.as_ref().unwrap());
}

#[test]
fn sigterm_and_sigint_stop_cleanly() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut n = Node::start(&args(HTTP, WS));
        let ipc = n.ipc.clone().unwrap();
        let http = n.http.clone().unwrap();
        assert!(ipc.exists());
        assert_eq!(ok(ipc_of(&n).call("net_version", json!([]))), json!("1000"));
        // A client connected while the node stops does not hold it up.
        let _held = ipc_of(&n);
        let _ws = ws_connect(n.ws.as_ref().unwrap());
        let status = if sig == libc::SIGTERM {
            n.terminate(2)
        } else {
            // SAFETY: kill(2) on our own child's pid.
            unsafe { libc::kill(n.child.id() as i32, libc::SIGINT) };
            let mut st = None;
            wait_until(2, || {
                st = n.child.try_wait().unwrap();
                st.is_some()
            });
            st
        };
        let status = status.unwrap_or_else(|| {
            panic!(
                "chaind did not exit within 2 s of signal {sig}; log:\n{}",
                n.log_text()
            )
        });
        assert_eq!(
            status.code(),
            Some(0),
            "signal {sig}: {status:?}; log:\n{}",
            n.log_text()
        );
        assert!(
            !ipc.exists(),
            "the IPC socket {} is left behind after signal {sig}",
            ipc.display()
        );
        // The log names the signal.
        let name = if sig == libc::SIGTERM {
            "SIGTERM"
        } else {
            "SIGINT"
        };
        let said = format!("] Received {name}, shutting down");
        assert!(
            wait_until(10, || n.log_text().lines().any(|l| l.ends_with(&said))),
            "no {said:?} in the log:\n{}",
            n.log_text()
        );
        assert!(!answers(&http));
        // The datadir is free again.
        let dir = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
        drop(n);
        let again = Node::start_in(dir, &[]);
        assert_eq!(
            ok(ipc_of(&again).call("net_version", json!([]))),
            json!("1000")
        );
    }
}

#[test]
fn dev_account_is_created_once() {
    let mut n = Node::start(&["--dev"]);
    let mut c = ipc_of(&n);
    let accts = ok(c.call("personal_listAccounts", json!([])));
    let accts = accts.as_array().unwrap().clone();
    assert_eq!(accts.len(), 1, "{accts:?}");
    let acct = accts[0].as_str().unwrap().to_string();
    assert_eq!(
        ok(c.call("personal_unlockAccount", json!([acct, "", 1]))),
        json!(true)
    );
    assert_eq!(common::key_files(&n.keystore()).len(), 1);
    drop(c);

    assert!(
        n.terminate(5).is_some_and(|s| s.success()),
        "log:\n{}",
        n.log_text()
    );
    let dir = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
    drop(n);
    let n2 = Node::start_in(dir, &["--dev"]);
    let mut c = ipc_of(&n2);
    assert_eq!(
        ok(c.call("personal_listAccounts", json!([]))),
        json!([acct])
    );
    assert_eq!(common::key_files(&n2.keystore()).len(), 1);
    assert_eq!(
        ok(c.call("personal_unlockAccount", json!([acct, "", 1]))),
        json!(true)
    );

    // Without --dev there is no developer account.
    let plain = Node::start(&[]);
    assert_eq!(
        ok(ipc_of(&plain).call("personal_listAccounts", json!([]))),
        json!([])
    );
}

#[test]
fn config_file_opens_http() {
    let dir = tempfile::tempdir().unwrap();
    let conf = write_file(
        dir.path(),
        "chaind.conf",
        "# test node\nRPC_ENABLE=1\nRPC_ADDR=\"127.0.0.1\"\nRPC_PORT=0\nRPC_API=\"personal\"\n",
    );
    let n = Node::start(&["--config", conf.to_str().unwrap()]);
    let url = nth_endpoint(&n, "HTTP endpoint opened", "http://", 0);
    assert_eq!(
        ok(http_call(&url, "rpc_modules", json!([]))),
        modules(&["personal", "rpc"])
    );
    assert_eq!(
        ok(http_call(&url, "personal_listAccounts", json!([]))),
        json!([])
    );

    // The command line wins over the file.
    let n2 = Node::start(&["--config", conf.to_str().unwrap(), "--rpcapi", "net"]);
    let url2 = nth_endpoint(&n2, "HTTP endpoint opened", "http://", 0);
    assert_eq!(
        ok(http_call(&url2, "rpc_modules", json!([]))),
        modules(&["net", "rpc"])
    );

    // RPC_* settings count only with RPC_ENABLE=1.
    let off = write_file(
        dir.path(),
        "off.conf",
        "RPC_ENABLE=0\nRPC_ADDR=\"127.0.0.1\"\nRPC_PORT=0\nNETWORK_ID=7\n",
    );
    let n3 = Node::start(&["--config", off.to_str().unwrap()]);
    assert_eq!(ok(ipc_of(&n3).call("net_version", json!([]))), json!("7"));
    assert!(
        logged_urls(&n3, "HTTP endpoint opened").is_empty(),
        "{}",
        n3.log_text()
    );
}

#[test]
fn bad_config_file_and_help() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write_file(dir.path(), "bad.conf", "RPC_ENABLE=1\nRPC_PROT=9000\n");
    let dd = dir.path().join("dd");
    let run = run_chaind(
        &[
            os("--datadir"),
            dd.as_os_str(),
            os("--config"),
            bad.as_os_str(),
        ],
        10,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&format!("{}:2:", bad.display())),
        "{run:?}"
    );
    assert!(run.stderr.contains("RPC_PROT"), "{run:?}");
    let missing = dir.path().join("none.conf");
    let run = run_chaind(
        &[
            os("--datadir"),
            dd.as_os_str(),
            os("--config"),
            missing.as_os_str(),
        ],
        10,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr.contains(&missing.display().to_string()),
        "{run:?}"
    );

    let run = run_chaind(&[os("--help")], 10);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("--rpcapi"), "{}", run.stdout);
    let run = run_chaind(&[os("--nosuchflag")], 10);
    assert_eq!(run.code, 2, "{run:?}");
}

#[test]
fn keystore_is_shared_live_with_keytool() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    assert_eq!(ok(c.call("personal_listAccounts", json!([]))), json!([]));
    let dir = tempfile::tempdir().unwrap();
    let pw = write_file(dir.path(), "pw", "secret\n");
    let run = keytool(
        &n.keystore(),
        &[
            "import-raw",
            "--light",
            "--password-file",
            pw.to_str().unwrap(),
            KEY,
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.trim(), ADDR);
    assert_eq!(
        ok(c.call("personal_listAccounts", json!([]))),
        json!([ADDR])
    );
    assert_eq!(
        ok(c.call("personal_unlockAccount", json!([ADDR, "secret", 1]))),
        json!(true)
    );
}

// ---------------------------------------------------------------------------------------------
// An endpoint stopped through itself

/// Waits for a log line `<marker> url=<url>`.
fn logged(node: &Node, marker: &str, url: &str) -> bool {
    let line = format!("{marker} url={url}");
    wait_until(5, || node.log_text().contains(&line))
}

#[test]
fn http_and_ws_endpoints_stop_themselves() {
    let mut n = Node::start(&args(
        &args(HTTP, &["--rpcapi", "admin"]),
        &args(WS, &["--wsapi", "admin"]),
    ));
    let http = n.http.clone().unwrap();
    let ws_url = n.ws.clone().unwrap();
    let mut c = ipc_of(&n);

    // admin_stopHTTP over HTTP: answered on the connection that asked, then closed.
    assert_eq!(
        ok(http_call(&http, "admin_stopHTTP", json!([]))),
        json!(true)
    );
    assert!(
        logged(&n, "HTTP endpoint closed", &http),
        "no `HTTP endpoint closed url={http}` line; log:\n{}",
        n.log_text()
    );
    assert!(
        !answers(&http),
        "{http} still accepts connections after stopping itself"
    );
    assert_eq!(
        err(c.call("admin_stopHTTP", json!([]))),
        server_err("HTTP RPC not running")
    );

    // admin_stopWS over WebSocket: the answer, then the server's close.
    let mut ws = ws_connect(&ws_url);
    assert_eq!(ok(ws_call(&mut ws, "admin_stopWS", json!([]))), json!(true));
    match ws.read() {
        Ok(tungstenite::Message::Close(_)) | Err(_) => {}
        Ok(m) => panic!("unexpected message after admin_stopWS: {m:?}"),
    }
    assert!(
        logged(&n, "WebSocket endpoint closed", &ws_url),
        "no `WebSocket endpoint closed url={ws_url}` line; log:\n{}",
        n.log_text()
    );
    assert!(
        !answers(&ws_url),
        "{ws_url} still accepts connections after stopping itself"
    );
    assert_eq!(
        err(c.call("admin_stopWS", json!([]))),
        server_err("WebSocket RPC not running")
    );

    // The node goes on: IPC serves, both endpoints can be opened again.
    assert_eq!(ok(c.call("net_version", json!([]))), json!("1000"));
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0, null, "admin"]))),
        json!(true)
    );
    let again = nth_endpoint(&n, "HTTP endpoint opened", "http://", 1);
    assert_eq!(
        ok(http_call(&again, "admin_stopHTTP", json!([]))),
        json!(true)
    );
    assert_eq!(
        ok(c.call("admin_startWS", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let ws_again = nth_endpoint(&n, "WebSocket endpoint opened", "ws://", 1);
    assert!(answers(&ws_again));
    assert!(
        !n.log_text().contains("panicked"),
        "a thread panicked; log:\n{}",
        n.log_text()
    );
    let status = n.terminate(5).expect("chaind exits after SIGTERM");
    assert_eq!(status.code(), Some(0), "log:\n{}", n.log_text());
    assert!(!n.log_text().contains("panicked"), "{}", n.log_text());
}

// ---------------------------------------------------------------------------------------------
// Virtual hosts, CORS and WebSocket origins

/// One HTTP/1.1 POST of `rpc_modules` with the given `Host` and extra headers: the status and
/// the response head, lower-cased.
fn post_with(url: &str, host: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules"}"#;
    let mut all = vec![("Content-Type", "application/json")];
    all.extend_from_slice(headers);
    let (status, head, _) = common::http_exchange(url, "POST", host, &all, body);
    (status, head.to_lowercase())
}

/// The `Access-Control-Allow-Origin` value of a lower-cased response head.
fn allow_origin(head: &str) -> Option<&str> {
    head.lines()
        .find_map(|l| l.strip_prefix("access-control-allow-origin:"))
        .map(str::trim)
}

/// Checks an HTTP endpoint that allows the virtual host `good.example` and the CORS origin
/// `http://good.example`.
fn check_vhosts_and_cors(url: &str) {
    let port = url.rsplit(':').next().unwrap();
    let (status, head) = post_with(url, "evil.example", &[]);
    assert_eq!(status, 403, "a Host outside --rpcvhosts: {head}");
    let (status, _) = post_with(url, &format!("good.example:{port}"), &[]);
    assert_eq!(status, 200);
    // An IP address always passes (the reference's rule).
    let (status, _) = post_with(url, &format!("127.0.0.1:{port}"), &[]);
    assert_eq!(status, 200);
    // localhost is not listed here, so it is refused like any other name.
    let (status, _) = post_with(url, "localhost", &[]);
    assert_eq!(status, 403);

    let (status, head) = post_with(url, "good.example", &[("Origin", "http://good.example")]);
    assert_eq!(status, 200);
    assert_eq!(allow_origin(&head), Some("http://good.example"), "{head}");
    let (status, head) = post_with(url, "good.example", &[("Origin", "http://evil.example")]);
    assert_eq!(status, 200, "the call is served, without the CORS header");
    assert_eq!(allow_origin(&head), None, "{head}");
}

/// Opens a WebSocket connection to `url` with the given `Origin`: the HTTP status of a
/// refusal, or `None` when upgraded.
fn ws_refusal(url: &str, origin: &str) -> Option<u16> {
    use tungstenite::client::IntoClientRequest;
    let mut req = url.into_client_request().unwrap();
    req.headers_mut().insert("Origin", origin.parse().unwrap());
    match tungstenite::connect(req) {
        Ok(_) => None,
        Err(tungstenite::Error::Http(resp)) => Some(resp.status().as_u16()),
        Err(e) => panic!("connect {url} with Origin {origin}: {e}"),
    }
}

#[test]
fn vhosts_cors_and_origins_from_the_command_line() {
    let n = Node::start(&args(
        &args(
            HTTP,
            &[
                "--rpcvhosts",
                "good.example",
                "--rpccorsdomain",
                "http://good.example",
            ],
        ),
        &args(WS, &["--wsorigins", "http://good.example"]),
    ));
    check_vhosts_and_cors(n.http.as_ref().unwrap());
    let ws = n.ws.as_ref().unwrap();
    assert_eq!(ws_refusal(ws, "http://evil.example"), Some(403));
    assert_eq!(ws_refusal(ws, "http://localhost"), Some(403), "not listed");
    assert_eq!(ws_refusal(ws, "http://GOOD.example"), None);

    // Without --rpccorsdomain there is no CORS header at all.
    let plain = Node::start(HTTP);
    let (status, head) = post_with(
        plain.http.as_ref().unwrap(),
        "localhost",
        &[("Origin", "http://localhost")],
    );
    assert_eq!(status, 200);
    assert_eq!(allow_origin(&head), None, "{head}");
}

#[test]
fn vhosts_cors_and_origins_of_admin_start() {
    let n = Node::start(&[]);
    let mut c = ipc_of(&n);
    assert_eq!(
        ok(c.call(
            "admin_startHTTP",
            json!(["127.0.0.1", 0, "http://good.example", null, "good.example"])
        )),
        json!(true)
    );
    check_vhosts_and_cors(&nth_endpoint(&n, "HTTP endpoint opened", "http://", 0));
    assert_eq!(
        ok(c.call(
            "admin_startWS",
            json!(["127.0.0.1", 0, "http://good.example"])
        )),
        json!(true)
    );
    let ws = nth_endpoint(&n, "WebSocket endpoint opened", "ws://", 0);
    assert_eq!(ws_refusal(&ws, "http://evil.example"), Some(403));
    assert_eq!(ws_refusal(&ws, "http://good.example"), None);
}

/// `admin_startHTTP` without `vhosts` allows the configured virtual hosts (`--rpcvhosts`), as
/// the reference does, not a fixed `localhost`.
#[test]
fn admin_start_http_defaults_to_the_configured_vhosts() {
    let n = Node::start(&["--rpcvhosts", "good.example"]);
    let mut c = ipc_of(&n);
    assert_eq!(
        ok(c.call("admin_startHTTP", json!(["127.0.0.1", 0]))),
        json!(true)
    );
    let url = nth_endpoint(&n, "HTTP endpoint opened", "http://", 0);
    let (status, _) = post_with(&url, "good.example", &[]);
    assert_eq!(status, 200);
    let (status, head) = post_with(&url, "localhost", &[]);
    assert_eq!(status, 403, "{head}");
}

// ---------------------------------------------------------------------------------------------
// Where the node keeps its files, and flags checked at start-up

#[test]
fn ipcpath_bare_name_and_keystore_flag() {
    let other = tempfile::tempdir().unwrap();
    let ks = other.path().join("keys");
    let n = Node::start(&["--ipcpath", "node.ipc", "--keystore", ks.to_str().unwrap()]);
    // A bare file name goes into the data directory.
    assert_eq!(
        n.ipc.as_deref(),
        Some(n.datadir.path().join("node.ipc").as_path()),
        "log:\n{}",
        n.log_text()
    );
    let mut c = ipc_of(&n);
    let a = ok(c.call("personal_newAccount", json!(["pw"])));
    let files = common::key_files(&ks);
    assert_eq!(files.len(), 1, "the key file is written to --keystore");
    assert!(files[0]
        .to_string_lossy()
        .ends_with(&a.as_str().unwrap()[2..]));
    assert!(
        !n.datadir.path().join("keystore").exists(),
        "nothing is written to DATADIR/keystore"
    );
    let wallets = ok(c.call("personal_listWallets", json!([])));
    assert_eq!(
        wallets[0]["url"],
        json!(format!("keystore://{}", files[0].display()))
    );

    // A path with a directory part is taken as it is.
    let sock = other.path().join("elsewhere.ipc");
    let n2 = Node::start(&["--ipcpath", sock.to_str().unwrap()]);
    assert_eq!(n2.ipc.as_deref(), Some(sock.as_path()));
    assert_eq!(
        ok(ipc_of(&n2).call("net_version", json!([]))),
        json!("1000")
    );
}

#[test]
fn subscription_limit_flag_must_be_positive() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["0", "-1"] {
        let flag = format!("--wsmaxsubscriptionperconn={v}");
        let run = run_chaind(&[os("--datadir"), dir.path().as_os_str(), os(&flag)], 10);
        assert_eq!(run.code, 2, "{v}: {run:?}");
        assert!(run.stderr.contains("--wsmaxsubscriptionperconn"), "{run:?}");
    }
    assert!(!dir.path().join("LOCK").exists(), "the node did not start");
}

#[test]
fn bad_value_in_the_config_file_names_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let conf = write_file(
        dir.path(),
        "chaind.conf",
        "# node\nRPC_ENABLE=1\nRPC_PORT=abc\n",
    );
    let dd = dir.path().join("dd");
    let run = run_chaind(
        &[
            os("--datadir"),
            dd.as_os_str(),
            os("--config"),
            conf.as_os_str(),
        ],
        10,
    );
    assert_eq!(run.code, 2, "{run:?}");
    let want = format!("error: {}:3: RPC_PORT: invalid value 'abc'", conf.display());
    assert!(run.stderr.starts_with(&want), "{run:?}");
    assert!(!dd.exists(), "the node did not start");

    // The same for a bad flag in ADDITIONAL and a bad duration.
    let conf = write_file(
        dir.path(),
        "extra.conf",
        "NETWORK_ID=7\nADDITIONAL=\"--state.trie-cache-save-period soon\"\n",
    );
    let run = run_chaind(
        &[
            os("--datadir"),
            dd.as_os_str(),
            os("--config"),
            conf.as_os_str(),
        ],
        10,
    );
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .starts_with(&format!("error: {}:2: ADDITIONAL: ", conf.display())),
        "{run:?}"
    );
    assert!(run.stderr.contains("soon"), "{run:?}");
}

/// Every duration option takes seconds and the unit form, on the command line and in the
/// configuration file: a read timeout of `1500ms` from the file answers a request whose body
/// never comes with 408 (the default would wait 30 s, past the client's patience here); the
/// other options start a node in either form; a bad value is a usage error that says which
/// forms are taken.
#[test]
fn durations_take_seconds_or_units_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    let conf = write_file(
        dir.path(),
        "chaind.conf",
        "RPC_ENABLE=1\nRPC_ADDR=127.0.0.1\nRPC_PORT=0\nRPC_READ_TIMEOUT=1500ms\nRPC_IDLE_TIMEOUT=2m\n",
    );
    let n = Node::start(&[
        "--config",
        conf.to_str().unwrap(),
        "--dev",
        "--dev.period",
        "500ms",
        "--rpcwritetimeout",
        "1m30s",
        "--rpcexecutiontimeout",
        "90",
        "--state.trie-cache-save-period",
        "1h30m",
    ]);
    let url = nth_endpoint(&n, "HTTP endpoint opened", "http://", 0);
    assert_eq!(ok(http_call(&url, "net_version", json!([]))), json!("1000"));
    let mut s = TcpStream::connect(host_port(&url)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(
        b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{",
    )
    .unwrap();
    let (status, _) = read_http_response(&mut s);
    assert_eq!(status, 408);
    for (flag, value) in [
        ("--rpcreadtimeout", "soon"),
        ("--dev.period", "-1"),
        ("--rpcidletimeout", "1h 30m"),
    ] {
        let run = run_chaind(&[os(&format!("{flag}={value}"))], 10);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(
            run.stderr.starts_with(&format!(
                "error: invalid value '{value}' for '{flag} <DURATION>': invalid duration {value:?}: use seconds (30, 0.5) or numbers with units ns, us, ms, s, m, h (90s, 1m30s, 1h)"
            )),
            "{run:?}"
        );
    }
}

#[test]
fn help_marks_the_flags_without_effect() {
    let run = run_chaind(&[os("--help")], 10);
    assert_eq!(run.code, 0, "{run:?}");
    // Each option's entry: its line (indented less than its description), then the
    // description's lines, joined.
    let mut entries: Vec<(String, String)> = Vec::new();
    for line in run.stdout.lines() {
        let indent = line.len() - line.trim_start().len();
        if indent < 10 && line.trim_start().starts_with('-') {
            entries.push((line.trim().to_string(), String::new()));
        } else if let Some((_, text)) = entries.last_mut() {
            text.push(' ');
            text.push_str(line.trim());
        }
    }
    {
        let flag = "--nodiscover";
        let (_, text) = entries
            .iter()
            .find(|(f, _)| f == flag)
            .unwrap_or_else(|| panic!("{flag} missing from --help:\n{}", run.stdout));
        assert!(
            text.contains("(accepted for compatibility: this node has no discovery"),
            "{flag}:{text}"
        );
    }
    // The flags that took effect say what they do, without the mark.
    for flag in [
        "--port <PORT>",
        "--p2paddr <HOST>",
        "--maxconnections <N>",
        "--staticnodes <FILE>",
        "--nodekey <FILE>",
        "--dev.period <DURATION>",
        "--state.trie-cache-limit <MB>",
        "--state.trie-cache-save-period <DURATION>",
        "--rpc.unsafe-debug.disable",
    ] {
        let (_, text) = entries.iter().find(|(f, _)| f == flag).unwrap();
        assert!(!text.contains("no effect"), "{flag}:{text}");
    }
    let help = run.stdout.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help.contains("Port 0 for --rpcport, --wsport and --port picks a free port")
            && help.contains("`P2P listening kni=KNI_URL`"),
        "--port 0 logs no address:\n{}",
        run.stdout
    );
}
