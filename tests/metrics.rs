//! Metrics through the real binary: `chaind --metrics --prometheus --prometheusport 0` on
//! 127.0.0.1, a validator and a follower; the scrape is parsed by Prometheus' own Python
//! parser (`prometheus_client`, installed at a pinned version into a virtual environment
//! under `target/`). Calls over HTTP, WebSocket and IPC, sealed and imported blocks, the
//! peer, a trie-node cache save and a state migration show in the numbers, and
//! `debug_metrics` shows the same. Without `--metrics` nothing more listens; a taken port
//! stops the start.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

use chain_node::crypto::Address;
use common::{
    chaind_init, funded_genesis, genesis_sender, http_args, http_call, ok, validator_datadir,
    wait_until, ws_args, Ipc, Node,
};
use serde_json::{json, Value};

const CHAIN_ID: u64 = 1000;

/// The `prometheus_client` release the scrapes are parsed with.
const PARSER_VERSION: &str = "0.21.1";

/// Reads Prometheus' text format on stdin, writes its families as JSON.
const PARSE: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
out = []
for f in text_string_to_metric_families(sys.stdin.read()):
    out.append({"name": f.name, "type": f.type, "samples": [
        {"name": s.name, "labels": s.labels, "value": s.value} for s in f.samples]})
json.dump(out, sys.stdout, allow_nan=False)
"#;

/// The Python of a virtual environment under `target/` holding `prometheus_client`
/// [`PARSER_VERSION`], made on first use; `None` (the test is skipped, saying why) only
/// when there is no `python3`.
fn parser_python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Option<PathBuf>> = OnceLock::new();
    PYTHON
        .get_or_init(|| {
            if Command::new("python3").arg("--version").output().is_err() {
                eprintln!("skipped: python3 is not installed; the scrape needs prometheus_client to parse it");
                return None;
            }
            let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
                .join(format!("prometheus-client-{PARSER_VERSION}"));
            let python = dir.join("bin").join("python");
            let check = |python: &Path| {
                Command::new(python)
                    .args(["-c", "import importlib.metadata as m, sys; sys.exit(0 if m.version('prometheus_client') == sys.argv[1] else 1)", PARSER_VERSION])
                    .output()
                    .is_ok_and(|o| o.status.success())
            };
            if check(&python) {
                return Some(python);
            }
            // Absent, or left half made by an interrupted run.
            let _ = std::fs::remove_dir_all(&dir);
            let run = |cmd: &mut Command| {
                let out = cmd.output().unwrap();
                assert!(out.status.success(), "{cmd:?}: {out:?}");
            };
            run(Command::new("python3").arg("-m").arg("venv").arg(&dir));
            run(Command::new(&python).args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                &format!("prometheus_client=={PARSER_VERSION}"),
            ]));
            assert!(check(&python), "prometheus_client {PARSER_VERSION} did not install");
            Some(python)
        })
        .clone()
}

/// One family of a scrape, as `prometheus_client` reads it (a counter's name without its
/// `_total`).
#[derive(Debug, Clone)]
struct Family {
    kind: String,
    samples: Vec<(String, BTreeMap<String, String>, f64)>,
}

/// A scrape parsed: families by name.
struct Scrape(BTreeMap<String, Family>);

impl Scrape {
    fn family(&self, name: &str) -> &Family {
        self.0
            .get(name)
            .unwrap_or_else(|| panic!("no family {name} in {:?}", self.0.keys()))
    }

    /// The value of sample `name` whose labels include `labels`, which must be one.
    fn value(&self, family: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
        let found: Vec<f64> = self
            .family(family)
            .samples
            .iter()
            .filter(|(n, l, _)| {
                n == name
                    && labels
                        .iter()
                        .all(|(k, v)| l.get(*k).map(String::as_str) == Some(v))
            })
            .map(|(_, _, v)| *v)
            .collect();
        assert_eq!(
            found.len(),
            1,
            "{name}{labels:?}: {:?}",
            self.family(family)
        );
        found[0]
    }

    /// The value of a family of one unlabelled sample.
    fn single(&self, family: &str) -> f64 {
        let f = self.family(family);
        let name = if f.kind == "counter" {
            format!("{family}_total")
        } else {
            family.to_string()
        };
        self.value(family, &name, &[])
    }

    /// The count of `method`'s calls over `transport`.
    fn calls(&self, method: &str, transport: &str) -> f64 {
        self.value(
            "chaind_rpc_requests",
            "chaind_rpc_requests_total",
            &[("method", method), ("transport", transport)],
        )
    }
}

/// GETs `url` (`http://127.0.0.1:PORT/metrics`): the status, the content type and the body.
fn get(url: &str) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (addr, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
    let content_type = head
        .lines()
        .find_map(|l| l.strip_prefix("Content-Type: "))
        .unwrap_or_default()
        .to_string();
    (status, content_type, body.to_string())
}

/// Scrapes `url` and parses the text with `python`'s `prometheus_client`.
fn scrape(python: &Path, url: &str) -> Scrape {
    let (status, content_type, body) = get(url);
    assert_eq!(status, 200, "{body}");
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    let mut child = Command::new(python)
        .args(["-c", PARSE])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the parser refused the scrape: {out:?}\n{body}"
    );
    let families: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    Scrape(
        families
            .into_iter()
            .map(|f| {
                let samples = f["samples"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|s| {
                        (
                            s["name"].as_str().unwrap().to_string(),
                            serde_json::from_value(s["labels"].clone()).unwrap(),
                            s["value"].as_f64().unwrap(),
                        )
                    })
                    .collect();
                (
                    f["name"].as_str().unwrap().to_string(),
                    Family {
                        kind: f["type"].as_str().unwrap().to_string(),
                        samples,
                    },
                )
            })
            .collect(),
    )
}

/// The metric names and types README's "Metrics" section lists (`| \`name\` | type | ...`).
fn documented() -> BTreeSet<(String, String)> {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let section = readme
        .split("\n## Metrics\n")
        .nth(1)
        .expect("README has a Metrics section");
    let section = section.split("\n## ").next().unwrap();
    section
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            let name = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
            let name = name.split('{').next().unwrap();
            Some((name.to_string(), cells.get(2)?.to_string()))
        })
        .collect()
}

/// The URL of `Prometheus endpoint opened url=...` in `n`'s log.
fn prometheus_url(n: &Node) -> String {
    let log = n.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("Prometheus endpoint opened"))
        .unwrap_or_else(|| panic!("no Prometheus endpoint line:\n{log}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("url="))
        .unwrap()
        .to_string()
}

/// The ports `pid` listens on over TCP, each with its address as /proc writes it
/// (`0100007F` is 127.0.0.1): the listening sockets of /proc/net/tcp{,6} whose inode is
/// one of the process's descriptors.
fn listening(pid: u32) -> BTreeSet<(String, u16)> {
    let inodes: BTreeSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter_map(|t| {
            let t = t.to_string_lossy().into_owned();
            Some(t.strip_prefix("socket:[")?.strip_suffix(']')?.to_string())
        })
        .collect();
    let mut out = BTreeSet::new();
    for table in ["tcp", "tcp6"] {
        let text = std::fs::read_to_string(format!("/proc/{pid}/net/{table}")).unwrap_or_default();
        for line in text.lines().skip(1) {
            let f: Vec<&str> = line.split_whitespace().collect();
            // local_address is field 1, the state field 3 (0A: listening), the inode field 9.
            if f.len() > 9 && f[3] == "0A" && inodes.contains(f[9]) {
                let (addr, port) = f[1].rsplit_once(':').unwrap();
                out.insert((addr.to_string(), u16::from_str_radix(port, 16).unwrap()));
            }
        }
    }
    out
}

/// The port of an endpoint URL (`http://127.0.0.1:PORT`, a kni URL `...@HOST:PORT?...`).
fn port_of(url: &str) -> u16 {
    let url = url.split('?').next().unwrap().trim_end_matches("/metrics");
    url.rsplit(':').next().unwrap().parse().unwrap()
}

fn call(n: &Node, method: &str, params: Value) -> Value {
    ok(http_call(n.http.as_ref().unwrap(), method, params))
}

fn head(n: &Node) -> u64 {
    common::quantity_of(&call(n, "chain_blockNumber", json!([]))) as u64
}

/// A node of the chain of `genesis` in `dd`, with `--metrics --prometheus` on a free port
/// and HTTP and WebSocket on 127.0.0.1.
fn metrics_node(dd: tempfile::TempDir, extra: &[&str]) -> Node {
    let mut args = vec!["--metrics", "--prometheus", "--prometheusport", "0"];
    args.extend(http_args("admin,chain,debug,net,rpc,txpool"));
    args.extend(ws_args("chain"));
    args.extend(extra);
    Node::start_in(dd, &args)
}

#[test]
fn a_validator_and_a_follower_serve_their_numbers_to_prometheus() {
    let Some(python) = parser_python() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (vdir, v_key) = validator_datadir(dir.path());
    let (genesis_file, _) = funded_genesis(dir.path(), v_key.address(), CHAIN_ID);
    chaind_init(vdir.path(), &genesis_file);
    let fdir = tempfile::TempDir::new_in(dir.path()).unwrap();
    chaind_init(fdir.path(), &genesis_file);
    let v = metrics_node(vdir, &["--dev"]);
    let f = metrics_node(fdir, &[]);
    let v_url = prometheus_url(&v);
    assert!(
        v_url.starts_with("http://127.0.0.1:") && v_url.ends_with("/metrics"),
        "{v_url}"
    );
    // Port 0 picked a free port; the endpoint listens on the loopback address only.
    let v_port = port_of(&v_url);
    assert!(v_port != 0 && v_port != 61001);
    let want: BTreeSet<(String, u16)> = [
        port_of(v.http.as_ref().unwrap()),
        port_of(v.ws.as_ref().unwrap()),
        port_of(v.kni.as_ref().unwrap()),
        v_port,
    ]
    .into_iter()
    .map(|p| ("0100007F".to_string(), p))
    .collect();
    assert_eq!(listening(v.child.id()), want);

    // Three blocks of one transfer each, sealed by the validator; the follower syncs them.
    for nonce in 0..3 {
        let raw = common::raw_transfer(
            &genesis_sender(),
            nonce,
            Address([0x35; 20]),
            1,
            common::PRICE,
            CHAIN_ID,
        );
        let hash = call(&v, "chain_sendRawTransaction", json!([raw]));
        common::wait_receipt(v.http.as_ref().unwrap(), &hash);
    }
    assert_eq!(
        call(&f, "admin_addPeer", json!([v.kni.clone().unwrap()])),
        json!(true)
    );
    wait_until("the follower to sync", &f, || head(&f) == 3);
    wait_until("the validator to count its peer", &v, || {
        call(&v, "net_peerCount", json!([])) == json!("0x1")
    });

    // Calls over each transport: chain_blockNumber 4 times over HTTP (head() above ran on
    // the follower only), 3 over WebSocket, 2 over IPC.
    let mut numbers = Vec::new();
    for _ in 0..4 {
        numbers.push(call(&v, "chain_blockNumber", json!([])));
    }
    let (mut ws, _) = tungstenite::connect(v.ws.as_ref().unwrap()).unwrap();
    for id in 0..3 {
        ws.send(tungstenite::Message::text(
            json!({"jsonrpc": "2.0", "id": id, "method": "chain_blockNumber"}).to_string(),
        ))
        .unwrap();
        let reply: Value = serde_json::from_str(ws.read().unwrap().to_text().unwrap()).unwrap();
        numbers.push(ok(reply));
    }
    let mut ipc = Ipc::connect(v.ipc.as_ref().unwrap());
    for _ in 0..2 {
        numbers.push(ok(ipc.call("chain_blockNumber", json!([]))));
    }
    assert!(numbers.iter().all(|n| *n == json!("0x3")), "{numbers:?}");

    let s = scrape(&python, &v_url);
    // Every family README lists is served with its type, and nothing else.
    let served: BTreeSet<(String, String)> =
        s.0.iter()
            .map(|(name, f)| {
                let name = if f.kind == "counter" {
                    format!("{name}_total")
                } else {
                    name.clone()
                };
                (name, f.kind.clone())
            })
            .collect();
    assert_eq!(served, documented());

    assert_eq!(s.calls("chain_blockNumber", "http"), 4.0);
    assert_eq!(s.calls("chain_blockNumber", "ws"), 3.0);
    assert_eq!(s.calls("chain_blockNumber", "ipc"), 2.0);
    assert_eq!(s.calls("chain_sendRawTransaction", "http"), 3.0);
    // The latency histogram counts the same calls, in cumulative buckets.
    let h = "chaind_rpc_request_duration_seconds";
    let labels = [("method", "chain_blockNumber"), ("transport", "http")];
    assert_eq!(s.value(h, &format!("{h}_count"), &labels), 4.0);
    assert!(s.value(h, &format!("{h}_sum"), &labels) > 0.0);
    let buckets: Vec<f64> = s
        .family(h)
        .samples
        .iter()
        .filter(|(n, l, _)| {
            n == &format!("{h}_bucket")
                && l["method"] == "chain_blockNumber"
                && l["transport"] == "http"
        })
        .map(|(_, _, v)| *v)
        .collect();
    assert_eq!(buckets.len(), 18, "17 bounds and +Inf");
    assert!(buckets.windows(2).all(|w| w[0] <= w[1]), "{buckets:?}");
    assert_eq!(buckets.last(), Some(&4.0));

    assert_eq!(s.single("chaind_head_block_number"), 3.0);
    let age = s.single("chaind_head_age_seconds");
    assert!((0.0..600.0).contains(&age), "{age}");
    assert_eq!(s.single("chaind_sealed_blocks"), 3.0);
    assert_eq!(s.single("chaind_sealed_transactions"), 3.0);
    assert_eq!(s.single("chaind_imported_blocks"), 0.0);
    assert_eq!(s.single("chaind_p2p_peers"), 1.0);
    assert_eq!(s.single("chaind_txpool_pending"), 0.0);
    assert_eq!(s.single("chaind_txpool_queued"), 0.0);
    assert!(s.single("chaind_trie_node_file_nodes") > 0.0);
    let rss = s.single("process_resident_memory_bytes");
    assert!(rss > 1e6, "{rss}");
    assert!(s.single("chaind_resident_memory_peak_bytes") >= rss);
    assert_eq!(
        s.value(
            "chaind_build_info",
            "chaind_build_info",
            &[("version", env!("CARGO_PKG_VERSION"))]
        ),
        1.0
    );

    // The follower imported what the validator sealed, and sealed nothing.
    let fs = scrape(&python, &prometheus_url(&f));
    assert_eq!(fs.single("chaind_imported_blocks"), 3.0);
    assert_eq!(fs.single("chaind_imported_transactions"), 3.0);
    assert_eq!(fs.single("chaind_sealed_blocks"), 0.0);
    assert_eq!(fs.single("chaind_head_block_number"), 3.0);
    assert_eq!(fs.single("chaind_p2p_peers"), 1.0);

    // debug_metrics shows the same numbers.
    let d = call(&v, "debug_metrics", json!([true]));
    assert_eq!(d["collecting"], json!(true));
    assert_eq!(d["chain"]["head"], json!(3));
    assert_eq!(d["p2p"], json!({"peers": 1}));
    assert_eq!(d["txpool"], json!({"pending": 0, "queued": 0}));
    assert_eq!(
        d["blocks"],
        json!({"sealed": 3, "sealedTransactions": 3, "imported": 0, "importedTransactions": 0})
    );
    assert_eq!(d["rpc"]["chain_blockNumber"]["http"]["count"], json!(4));
    assert_eq!(d["rpc"]["chain_blockNumber"]["ws"]["count"], json!(3));
    assert_eq!(d["rpc"]["chain_blockNumber"]["ipc"]["count"], json!(2));
    let seconds = d["rpc"]["chain_blockNumber"]["http"]["seconds"]
        .as_f64()
        .unwrap();
    assert_eq!(seconds, s.value(h, &format!("{h}_sum"), &labels));
    assert_eq!(
        d["trie"]["file"]["nodes"].as_f64(),
        Some(s.single("chaind_trie_node_file_nodes"))
    );
    let fd = call(&f, "debug_metrics", json!([true]));
    assert_eq!(fd["blocks"]["imported"], json!(3));
    assert_eq!(fd["blocks"]["importedTransactions"], json!(3));

    // The counts move: one more call, one more in the next scrape.
    call(&v, "chain_blockNumber", json!([]));
    let s = scrape(&python, &v_url);
    assert_eq!(s.calls("chain_blockNumber", "http"), 5.0);
    assert_eq!(s.calls("debug_metrics", "http"), 1.0);

    // A save of the trie-node cache: its progress ends at every node written.
    assert_eq!(
        ok(ipc.call("admin_saveTrieNodeCacheToDisk", json!([]))),
        Value::Null
    );
    wait_until("the cache save", &v, || {
        v.log_text().contains("Saved the trie node cache")
    });
    let log = v.log_text();
    let saved: f64 = log
        .lines()
        .find(|l| l.contains("Saved the trie node cache"))
        .and_then(|l| l.split_whitespace().find_map(|w| w.strip_prefix("nodes=")))
        .unwrap()
        .parse()
        .unwrap();
    assert!(saved > 0.0);
    wait_until("the save to end", &v, || {
        scrape(&python, &v_url).single("chaind_trie_cache_save_running") == 0.0
    });
    let s = scrape(&python, &v_url);
    assert_eq!(s.single("chaind_trie_cache_save_total_entries"), saved);
    assert_eq!(s.single("chaind_trie_cache_save_written_entries"), saved);

    // A state migration: its numbers are admin_stateMigrationStatus's.
    assert_eq!(s.single("chaind_state_migration_running"), 0.0);
    assert_eq!(s.single("chaind_state_migration_block_number"), 0.0);
    assert_eq!(
        ok(ipc.call("admin_startStateMigration", json!([]))),
        Value::Null
    );
    let mut status = Value::Null;
    wait_until("the migration to end", &v, || {
        status = ok(ipc.call("admin_stateMigrationStatus", json!([])));
        status["isMigration"] == json!(false)
    });
    let s = scrape(&python, &v_url);
    assert_eq!(s.single("chaind_state_migration_running"), 0.0);
    // 0 once no migration runs, as admin_stateMigrationStatus answers.
    assert_eq!(s.single("chaind_state_migration_block_number"), 0.0);
    assert_eq!(status["migrationBlockNumber"], json!(0));
    assert_eq!(s.single("chaind_state_migration_progress_percent"), 100.0);
    assert_eq!(
        Some(s.single("chaind_state_migration_committed_nodes")),
        status["committed"].as_f64()
    );
    assert!(s.single("chaind_state_migration_committed_nodes") > 0.0);
    assert_eq!(
        Some(s.single("chaind_state_migration_read_nodes")),
        status["read"].as_f64()
    );
}

#[test]
fn without_metrics_no_endpoint_listens_and_nothing_is_counted() {
    // --prometheus alone: as the reference, no endpoint; a warning says why.
    let mut args = vec!["--dev", "--prometheus", "--prometheusport", "0"];
    args.extend(http_args("chain,debug"));
    let n = Node::start(&args);
    let log = n.log_text();
    assert!(
        log.lines().any(|l| l.starts_with("WARN ")
            && l.ends_with("] Prometheus endpoint not opened: --prometheus needs --metrics")),
        "{log}"
    );
    assert!(!log.contains("Prometheus endpoint opened"), "{log}");
    let want: BTreeSet<(String, u16)> = [
        port_of(n.http.as_ref().unwrap()),
        port_of(n.kni.as_ref().unwrap()),
    ]
    .into_iter()
    .map(|p| ("0100007F".to_string(), p))
    .collect();
    assert_eq!(listening(n.child.id()), want);
    call(&n, "chain_blockNumber", json!([]));
    let d = call(&n, "debug_metrics", json!([true]));
    assert_eq!(d["collecting"], json!(false));
    assert!(d.get("rpc").is_none() && d.get("blocks").is_none(), "{d}");
    // The gauges are read all the same.
    assert_eq!(d["chain"]["head"], json!(0));
    assert!(d["process"]["rss"].as_u64().unwrap() > 0);

    // --metrics alone: counted, shown by debug_metrics, served to nobody.
    let mut args = vec!["--dev", "--metrics"];
    args.extend(http_args("chain,debug"));
    let n = Node::start(&args);
    assert!(
        !n.log_text().contains("Prometheus endpoint"),
        "{}",
        n.log_text()
    );
    let want: BTreeSet<(String, u16)> = [
        port_of(n.http.as_ref().unwrap()),
        port_of(n.kni.as_ref().unwrap()),
    ]
    .into_iter()
    .map(|p| ("0100007F".to_string(), p))
    .collect();
    assert_eq!(listening(n.child.id()), want);
    call(&n, "chain_blockNumber", json!([]));
    call(&n, "chain_blockNumber", json!([]));
    let d = call(&n, "debug_metrics", json!([true]));
    assert_eq!(d["collecting"], json!(true));
    assert_eq!(d["rpc"]["chain_blockNumber"]["http"]["count"], json!(2));
    assert_eq!(
        d["blocks"],
        json!({"sealed": 0, "sealedTransactions": 0, "imported": 0, "importedTransactions": 0})
    );
}

#[test]
fn a_taken_port_stops_the_start() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let dir = tempfile::tempdir().unwrap();
    let out = common::chaind_run(
        dir.path(),
        &[
            "--dev",
            "--lightkdf",
            "--port",
            "0",
            "--p2paddr",
            "127.0.0.1",
            "--metrics",
            "--prometheus",
            "--prometheusport",
            &port,
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        stderr.lines().last(),
        Some(
            format!(
                "error: prometheus: cannot open the Prometheus endpoint on 127.0.0.1:{port}: Address already in use (os error 98)"
            )
            .as_str()
        ),
        "{stderr}"
    );
    // The endpoints that come after it were never opened.
    assert!(!stderr.contains("endpoint opened"), "{stderr}");
    assert!(!dir.path().join("chaind.ipc").exists());
}
