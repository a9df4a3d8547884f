//! Shared pieces of the integration tests: running the real binaries and snapshotting a
//! keystore directory byte for byte.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of the built `chain-keytool`.
pub fn keytool_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chain-keytool"))
}

/// What a finished command printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

impl Run {
    /// Asserts success with nothing on stderr; returns stdout without its final newline.
    #[track_caller]
    pub fn output_line(&self) -> String {
        assert_eq!(
            (self.code, self.stderr.as_str()),
            (0, ""),
            "command failed: {self:?}"
        );
        assert!(
            self.stdout.ends_with('\n'),
            "output must end with a newline: {self:?}"
        );
        self.stdout[..self.stdout.len() - 1].to_string()
    }

    /// Asserts a failure with exactly `error: <msg>\n` on stderr, exit `code`, nothing on
    /// stdout.
    #[track_caller]
    pub fn assert_fails(&self, code: i32, msg: &str) {
        assert_eq!(self.stderr, format!("error: {msg}\n"), "stderr of {self:?}");
        assert_eq!(self.code, code, "exit code of {self:?}");
        assert_eq!(self.stdout, "", "stdout of {self:?}");
    }
}

/// [`Run::output_line`] as a function: success with nothing on stderr; stdout without its
/// final newline.
#[track_caller]
pub fn run_ok(r: &Run) -> String {
    r.output_line()
}

/// [`Run::assert_fails`] as a function: exactly `error: <msg>\n` on stderr, exit `code`,
/// nothing on stdout.
#[track_caller]
pub fn run_fails(r: &Run, code: i32, msg: &str) {
    r.assert_fails(code, msg)
}

/// Starts `chain-keytool --keystore <ks> ARGS...` with no terminal and piped output, for a
/// test that waits on it (or kills it) itself.
pub fn spawn_keytool(ks: &Path, args: &[&str]) -> std::process::Child {
    Command::new(keytool_bin())
        .arg("--keystore")
        .arg(ks)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn chain-keytool")
}

/// Runs `chain-keytool --keystore <ks> ARGS...` with no terminal (stdin from /dev/null).
pub fn keytool(ks: &Path, args: &[&str]) -> Run {
    keytool_stdin(ks, args, None)
}

/// As [`keytool`], with `stdin` piped in when given.
pub fn keytool_stdin(ks: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = Command::new(keytool_bin());
    cmd.arg("--keystore").arg(ks).args(args);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        None => {
            cmd.stdin(Stdio::null());
            cmd.output().expect("run chain-keytool").into()
        }
        Some(input) => {
            use std::io::Write;
            cmd.stdin(Stdio::piped());
            let mut child = cmd.spawn().expect("spawn chain-keytool");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child.wait_with_output().expect("wait chain-keytool").into()
        }
    }
}

/// Every entry of a directory (recursively) with its bytes and permission bits, for
/// asserting that a failed command changed nothing. The saved index (a cache that any
/// listing may rewrite) and the lock file are left out.
pub fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if rel == ".chain-keystore-index" || rel == ".lock" {
                continue;
            }
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.insert(rel.clone() + "/", (Vec::new(), meta.permissions().mode()));
                walk(base, &p, out);
            } else {
                out.insert(
                    rel,
                    (fs::read(&p).unwrap_or_default(), meta.permissions().mode()),
                );
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Writes `content` to `dir/name` and returns the path (a password file, say).
pub fn write_file(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, content).unwrap();
    p
}

/// The visible key files of a keystore directory (names not starting with `.`), sorted.
pub fn key_files(ks: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(ks)
        .map(|rd| {
            rd.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Path of the built `chaind`.
pub fn chaind_bin() -> PathBuf {
    // Resolved at run time: the binary is built with the tests (cargo builds every [[bin]]).
    PathBuf::from(env!("CARGO_BIN_EXE_chain-keytool")).with_file_name("chaind")
}

/// A `chaind` started for a test: a temporary datadir, its endpoints read from the log, killed
/// when dropped.
pub struct Node {
    pub child: std::process::Child,
    pub datadir: tempfile::TempDir,
    pub http: Option<String>,
    pub ws: Option<String>,
    pub ipc: Option<PathBuf>,
    /// The kni URL of `P2P listening kni=...` (a node with a chain).
    pub kni: Option<String>,
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Node {
    /// Starts `chaind --datadir <tmp> --lightkdf ARGS...` and waits until the endpoints the
    /// arguments ask for (`--rpc`, `--ws`, IPC unless `--ipcdisable`) are logged as opened.
    /// Unless ARGS set them, the p2p listener gets `--port 0 --p2paddr 127.0.0.1`, so that
    /// tests running at once never contend for the default port.
    pub fn start(args: &[&str]) -> Node {
        Node::start_in(tempfile::tempdir().unwrap(), args)
    }

    /// As [`Node::start`] in a given datadir.
    pub fn start_in(datadir: tempfile::TempDir, args: &[&str]) -> Node {
        Node::start_with_env(datadir, args, &[])
    }

    /// As [`Node::start_in`], with `env` added to the node's environment.
    pub fn start_with_env(
        datadir: tempfile::TempDir,
        args: &[&str],
        env: &[(&str, &std::ffi::OsStr)],
    ) -> Node {
        let mut p2p: Vec<&str> = Vec::new();
        if !args.contains(&"--port") {
            p2p.extend(["--port", "0"]);
        }
        if !args.contains(&"--p2paddr") {
            p2p.extend(["--p2paddr", "127.0.0.1"]);
        }
        let mut child = Command::new(chaind_bin())
            .arg("--datadir")
            .arg(datadir.path())
            .arg("--lightkdf")
            .args(&p2p)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn chaind");
        let stderr = child.stderr.take().unwrap();
        let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let sink = log.clone();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                sink.lock().unwrap().push(line.clone());
                let _ = tx.send(line);
            }
        });
        let want_http = args.contains(&"--rpc");
        let want_ws = args.contains(&"--ws");
        let want_ipc = !args.contains(&"--ipcdisable");
        let mut node = Node {
            child,
            datadir,
            http: None,
            ws: None,
            ipc: None,
            kni: None,
            log,
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while (want_http && node.http.is_none())
            || (want_ws && node.ws.is_none())
            || (want_ipc && node.ipc.is_none())
        {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let line = rx.recv_timeout(left).unwrap_or_else(|_| {
                panic!(
                    "chaind did not open its endpoints; log:\n{}",
                    node.log_text()
                )
            });
            let url = line
                .split_whitespace()
                .find_map(|w| w.strip_prefix("url="))
                .map(str::to_string);
            if line.contains("HTTP endpoint opened") {
                node.http = url;
            } else if line.contains("WebSocket endpoint opened") {
                node.ws = url;
            } else if line.contains("IPC endpoint opened") {
                node.ipc = url.map(PathBuf::from);
            } else if line.contains("P2P listening") {
                // The log quotes a value holding `=` (the URL's query), as logfmt does.
                node.kni = line
                    .split_whitespace()
                    .find_map(|w| w.strip_prefix("kni="))
                    .map(|v| v.trim_matches('"').to_string());
            }
        }
        node
    }

    /// Everything the node logged so far.
    pub fn log_text(&self) -> String {
        self.log.lock().unwrap().join("\n")
    }

    pub fn keystore(&self) -> PathBuf {
        self.datadir.path().join("keystore")
    }

    /// Sends SIGTERM and waits (up to `secs`) for the exit status.
    pub fn terminate(&mut self, secs: u64) -> Option<std::process::ExitStatus> {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(st)) = self.child.try_wait() {
                return Some(st);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// POSTs `body` as JSON to `url` (http://127.0.0.1:PORT) and returns the status and body.
pub fn http_post(url: &str, body: &str) -> (u16, String) {
    http_raw(url, "POST", &[("Content-Type", "application/json")], body)
}

/// One HTTP/1.1 request over a fresh connection; returns the status and the body.
pub fn http_raw(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let (status, _, body) = http_exchange(url, method, "localhost", headers, body);
    (status, body)
}

/// One HTTP/1.1 request with the given `Host` over a fresh connection (closed after it);
/// returns the status, the response head and the body.
pub fn http_exchange(
    url: &str,
    method: &str,
    host: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, String, String) {
    use std::io::{Read, Write};
    let addr = url.strip_prefix("http://").unwrap().trim_end_matches('/');
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut req = format!(
        "{method} / HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut resp = Vec::new();
    s.read_to_end(&mut resp).unwrap();
    let text = String::from_utf8_lossy(&resp).into_owned();
    let (head, rest) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    // chaind always answers with Content-Length, never chunked.
    (status, head.to_string(), rest.to_string())
}

/// A JSON-RPC call over HTTP: the parsed response object.
pub fn http_call(url: &str, method: &str, params: serde_json::Value) -> serde_json::Value {
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
        .to_string();
    let (status, text) = http_post(url, &body);
    assert_eq!(status, 200, "{text}");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text:?}"))
}

/// A connection to the IPC socket that sends requests and reads one JSON value per reply.
pub struct Ipc {
    stream: std::os::unix::net::UnixStream,
    buf: Vec<u8>,
}

impl Ipc {
    pub fn connect(path: &Path) -> Ipc {
        let stream = std::os::unix::net::UnixStream::connect(path).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(20)))
            .unwrap();
        Ipc {
            stream,
            buf: Vec::new(),
        }
    }

    pub fn send(&mut self, text: &str) {
        use std::io::Write;
        self.stream.write_all(text.as_bytes()).unwrap();
    }

    /// The next JSON value the server writes (None at EOF).
    pub fn recv(&mut self) -> Option<serde_json::Value> {
        use std::io::Read;
        loop {
            let mut it =
                serde_json::Deserializer::from_slice(&self.buf).into_iter::<serde_json::Value>();
            match it.next() {
                Some(Ok(v)) => {
                    let used = it.byte_offset();
                    self.buf.drain(..used);
                    return Some(v);
                }
                Some(Err(e)) if !e.is_eof() => panic!("bad JSON from server: {e}"),
                _ => {}
            }
            let mut chunk = [0u8; 65536];
            let n = match self.stream.read(&mut chunk) {
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => panic!("IPC read failed: {e}"),
            };
            if n == 0 {
                return None;
            }
            self.buf.extend_from_slice(&chunk[..n]);
        }
    }

    /// One call: the response object.
    pub fn call(&mut self, method: &str, params: serde_json::Value) -> serde_json::Value {
        self.send(
            &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
                .to_string(),
        );
        self.recv().unwrap_or_else(|| {
            panic!("the node closed the IPC connection before answering {method}")
        })
    }
}

/// The `result` of a JSON-RPC response, asserting there is no error.
pub fn ok(v: serde_json::Value) -> serde_json::Value {
    assert!(v.get("error").is_none(), "unexpected error: {v}");
    assert!(v.get("result").is_some(), "no result: {v}");
    v["result"].clone()
}

/// The `(code, message)` of a JSON-RPC error response, asserting there is no result.
pub fn err(v: serde_json::Value) -> (i64, String) {
    let e = v
        .get("error")
        .unwrap_or_else(|| panic!("expected an error: {v}"));
    assert!(
        v.get("result").is_none(),
        "error and result both present: {v}"
    );
    (
        e["code"].as_i64().unwrap(),
        e["message"].as_str().unwrap().to_string(),
    )
}

/// `chaind --dev` with HTTP on 127.0.0.1 (any free port) offering `apis`.
pub fn dev_http_node(apis: &str) -> Node {
    dev_http_node_in(tempfile::tempdir().unwrap(), apis)
}

/// [`dev_http_node`] in a given data directory.
pub fn dev_http_node_in(dir: tempfile::TempDir, apis: &str) -> Node {
    let mut args = vec!["--dev"];
    args.extend(http_args(apis));
    Node::start_in(dir, &args)
}

/// The arguments of HTTP on 127.0.0.1, any free port, offering `apis`.
pub fn http_args(apis: &str) -> [&str; 7] {
    [
        "--rpc",
        "--rpcaddr",
        "127.0.0.1",
        "--rpcport",
        "0",
        "--rpcapi",
        apis,
    ]
}

/// The arguments of a WebSocket endpoint on 127.0.0.1, any free port, serving `apis`.
pub fn ws_args(apis: &str) -> [&str; 7] {
    [
        "--ws",
        "--wsaddr",
        "127.0.0.1",
        "--wsport",
        "0",
        "--wsapi",
        apis,
    ]
}

/// `chaind --datadir DIR ARGS...` run to its end (subcommands, refused starts).
pub fn chaind_run(datadir: &Path, args: &[&str]) -> Output {
    Command::new(chaind_bin())
        .arg("--datadir")
        .arg(datadir)
        .args(args)
        .output()
        .unwrap()
}

/// The address of `n`'s developer account, `0x` + 40 hex digits.
pub fn dev_account(n: &Node) -> String {
    fs::read_to_string(n.datadir.path().join("dev-account"))
        .unwrap()
        .trim()
        .to_string()
}

/// The key of `n`'s developer account, decrypted from its key file (passphrase empty).
pub fn dev_key(n: &Node) -> chain_node::crypto::SecretKey {
    let address = chain_node::crypto::Address::parse_lenient(&dev_account(n)).unwrap();
    let file = key_files(&n.keystore()).pop().unwrap();
    chain_node::keystore::load_key_file(&file, address, "").unwrap()
}

/// `v` as a 256-bit big-endian value.
pub fn u256(v: u128) -> [u8; 32] {
    let mut b = [0u8; 32];
    b[16..].copy_from_slice(&v.to_be_bytes());
    b
}

/// The dev chain's unit price.
pub const PRICE: u128 = 25_000_000_000;

/// A value transfer of `value` to `to` signed by `key` for `chain_id` at gas price `price`.
pub fn transfer_tx(
    key: &chain_node::crypto::SecretKey,
    nonce: u64,
    to: chain_node::crypto::Address,
    value: u128,
    price: u128,
    chain_id: u64,
) -> chain_node::types::transaction::Transaction {
    use chain_node::types::transaction::{Transaction, ValueTransfer};
    let mut tx = Transaction::of(ValueTransfer {
        nonce,
        gas_price: u256(price),
        gas: 21_000,
        to,
        value: u256(value),
        from: key.address(),
        signatures: Vec::new(),
    });
    tx.sign(key, chain_id);
    tx
}

/// [`transfer_tx`] as the raw transaction in `0x`-hex.
pub fn raw_transfer(
    key: &chain_node::crypto::SecretKey,
    nonce: u64,
    to: chain_node::crypto::Address,
    value: u128,
    price: u128,
    chain_id: u64,
) -> String {
    let tx = transfer_tx(key, nonce, to, value, price, chain_id);
    format!("0x{}", hex::encode(tx.encode()))
}

/// A 0x-hex quantity as a number.
pub fn quantity_of(v: &serde_json::Value) -> u128 {
    u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// Waits (at most 10 s) for the receipt of transaction `hash` and returns it.
pub fn wait_receipt(url: &str, hash: &serde_json::Value) -> serde_json::Value {
    wait_receipt_by(url, "chain_getTransactionReceipt", hash)
}

/// [`wait_receipt`] asking `method` (`eth_getTransactionReceipt` of another node).
pub fn wait_receipt_by(url: &str, method: &str, hash: &serde_json::Value) -> serde_json::Value {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = ok(http_call(url, method, serde_json::json!([hash])));
        if !r.is_null() {
            return r;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{hash} was not sealed"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// The environment variable `name` parsed, or `default` (benchmark settings).
pub fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// An empty block on `parent`, sealed by `v` by hand (`Chain::seal` makes no empty block).
/// Its state root is its parent's, which holds when `v`'s account (the rewardbase) exists.
pub fn empty_block(
    parent: &chain_node::types::block::Header,
    v: &chain_node::crypto::SecretKey,
) -> chain_node::types::block::Header {
    let mut h = parent.clone();
    h.parent_hash = parent.hash();
    h.rewardbase = v.address();
    h.transactions_root = chain_node::trie::EMPTY_ROOT;
    h.receipts_root = chain_node::trie::EMPTY_ROOT;
    h.block_score = u256(1);
    h.number = parent.number + 1;
    h.gas_used = 0;
    h.time = parent.time + 1;
    chain_node::chain::seal_header(&mut h, v);
    h
}

/// `n` keys numbered from 1 (the benchmarks' senders): `[i, 0x22...]`.
pub fn numbered_keys(n: u64) -> Vec<chain_node::crypto::SecretKey> {
    (0..n)
        .map(|i| {
            let mut k = [0x22u8; 32];
            k[..8].copy_from_slice(&(i + 1).to_be_bytes());
            chain_node::crypto::SecretKey::from_slice(&k).unwrap()
        })
        .collect()
}

/// The benchmarks' transfer number `i`: 1 to an account numbered like it, from
/// `senders[i % len]` at its next nonce (counted in `nonces`).
pub fn numbered_transfer(
    senders: &[chain_node::crypto::SecretKey],
    nonces: &mut [u64],
    i: usize,
    chain_id: u64,
) -> chain_node::types::transaction::Transaction {
    let s = i % senders.len();
    let mut to = [0x5a; 20];
    to[12..].copy_from_slice(&(i as u64).to_be_bytes());
    let tx = transfer_tx(
        &senders[s],
        nonces[s],
        chain_node::crypto::Address(to),
        1,
        PRICE,
        chain_id,
    );
    nonces[s] += 1;
    tx
}

/// Writes `n` hand-sealed empty blocks on the genesis of `genesis` to `path`, as an export
/// file (concatenated block RLP).
pub fn write_empty_blocks(
    path: &Path,
    genesis: &chain_node::chain::genesis::Genesis,
    v: &chain_node::crypto::SecretKey,
    n: u64,
) {
    use std::io::Write;
    let (mut parent, _) = chain_node::chain::genesis_block(genesis).unwrap();
    let mut out = std::io::BufWriter::new(fs::File::create(path).unwrap());
    for _ in 0..n {
        let h = empty_block(&parent, v);
        let b = chain_node::types::block::Block {
            header: h.clone(),
            transactions: Vec::new(),
        };
        out.write_all(&b.encode()).unwrap();
        parent = h;
    }
    out.flush().unwrap();
}
/// The account a [`funded_genesis`] funds.
pub fn genesis_sender() -> chain_node::crypto::SecretKey {
    chain_node::crypto::SecretKey::from_slice(&[0x42; 32]).unwrap()
}

/// A genesis of chain `chain_id` naming `validator` and giving [`genesis_sender`] 10^24,
/// written as `<dir>/genesis.json` for `chaind init`: the file and the parsed genesis.
pub fn funded_genesis(
    dir: &Path,
    validator: chain_node::crypto::Address,
    chain_id: u64,
) -> (PathBuf, chain_node::chain::genesis::Genesis) {
    let text = format!(
        r#"{{"config": {{"chainId": {chain_id}}}, "validator": "0x{}", "alloc": {{"0x{}": {{"balance": "1000000000000000000000000"}}}}}}"#,
        hex::encode(validator.0),
        hex::encode(genesis_sender().address().0)
    );
    let path = dir.join("genesis.json");
    fs::write(&path, &text).unwrap();
    (
        path,
        chain_node::chain::genesis::Genesis::parse(text.as_bytes()).unwrap(),
    )
}

/// A data directory under `parent` whose keystore holds one new account, passphrase empty:
/// the key `chaind --dev` seals with. The directory and that key.
pub fn validator_datadir(parent: &Path) -> (tempfile::TempDir, chain_node::crypto::SecretKey) {
    let dd = tempfile::TempDir::new_in(parent).unwrap();
    let ks = chain_node::keystore::Keystore::open(dd.path().join("keystore"))
        .unwrap()
        .with_scrypt(chain_node::keystore::keyfile::ScryptParams::LIGHT);
    let address = ks.new_account("").unwrap().address;
    let key = ks.load_key(address, "").unwrap();
    (dd, key)
}

/// `chaind init GENESIS` in `datadir`, which must succeed.
pub fn chaind_init(datadir: &Path, genesis: &Path) {
    let out = chaind_run(datadir, &["init", genesis.to_str().unwrap()]);
    assert!(out.status.success(), "chaind init: {out:?}");
}

/// Polls `f` every 50 ms until it holds; after 60 s the test fails, saying what it waited
/// for, with `n`'s log.
pub fn wait_until(what: &str, n: &Node, mut f: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !f() {
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}; log:\n{}",
            n.log_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Lets this process hold as many descriptors as it may (the attack tests and benches open
/// thousands of sockets).
pub fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid, initialised struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

pub mod caver;
pub mod contracts;
pub mod ethtools;
pub mod keyfile;
pub mod mptproof;
pub mod ws;
