//! Chain administration through the real binary: export (RPC and `chaind export`).

mod common;

use common::{chaind_run as chaind, dev_key, err, http_call, ok, Node};
use serde_json::{json, Value};

use chain_node::crypto::{Address, SecretKey};

fn dev_node() -> Node {
    common::dev_http_node("admin,chain,debug")
}

/// Sends a transfer of 1 from the developer account (its `nonce`th) to `to` and waits for it
/// to be sealed.
fn seal_transfer(n: &Node, nonce: u64, to: Address) {
    let url = n.http.clone().unwrap();
    let raw = common::raw_transfer(&dev_key(n), nonce, to, 1, common::PRICE, 1000);
    let hash = ok(http_call(&url, "chain_sendRawTransaction", json!([raw])));
    common::wait_receipt(&url, &hash);
}

/// Seals `blocks` blocks of one transfer each; the head's number.
fn make_blocks(n: &Node, blocks: u64) -> u64 {
    for nonce in 0..blocks {
        seal_transfer(n, nonce, Address([0x35; 20]));
    }
    let head = ok(http_call(
        n.http.as_ref().unwrap(),
        "chain_blockNumber",
        json!([]),
    ));
    u64::from_str_radix(head.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// The blocks `first..=last` as `debug_getBlockRlp` gives them, concatenated.
fn expected(url: &str, first: u64, last: u64) -> Vec<u8> {
    let mut out = Vec::new();
    for b in first..=last {
        let hex = ok(http_call(url, "debug_getBlockRlp", json!([b])));
        out.extend(hex::decode(hex.as_str().unwrap()).unwrap());
    }
    out
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .unwrap();
    out
}

/// The names in `dir`, so that a test can tell nothing was left behind.
fn names(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn export_chain_writes_the_blocks_and_never_overwrites() {
    let n = dev_node();
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let head = make_blocks(&n, 3);
    let out = tempfile::tempdir().unwrap();
    let path = |name: &str| out.path().join(name).to_str().unwrap().to_string();

    // All blocks, genesis included; a range; the gzip form.
    assert_eq!(
        ok(call("admin_exportChain", json!([path("all.rlp")]))),
        json!(true)
    );
    assert_eq!(
        std::fs::read(path("all.rlp")).unwrap(),
        expected(&url, 0, head)
    );
    assert_eq!(
        ok(call(
            "admin_exportChain",
            json!([path("mid.rlp"), 1, "0x2"])
        )),
        json!(true)
    );
    assert_eq!(
        std::fs::read(path("mid.rlp")).unwrap(),
        expected(&url, 1, 2)
    );
    assert_eq!(
        ok(call(
            "admin_exportChain",
            json!([path("all.rlp.gz"), 0, "latest"])
        )),
        json!(true)
    );
    let gz = std::fs::read(path("all.rlp.gz")).unwrap();
    assert_eq!(&gz[..2], &[0x1f, 0x8b], "a gzip stream");
    assert_eq!(gunzip(&gz), expected(&url, 0, head));

    // Refusals: each an error, nothing written, nothing left behind.
    let before = names(out.path());
    let original = std::fs::read(path("mid.rlp")).unwrap();
    let missing_dir = out.path().join("no-such-dir").join("x.rlp");
    let cases = [
        (
            json!([path("mid.rlp")]),
            "location would overwrite an existing file".to_string(),
        ),
        (
            json!([out.path().to_str().unwrap()]),
            "location would overwrite an existing file".to_string(),
        ),
        (
            json!([path("new.rlp"), null, 2]),
            "last cannot be specified without first".to_string(),
        ),
        (
            json!([path("new.rlp"), 3, 1]),
            "export failed: first (3) is greater than last (1)".to_string(),
        ),
        (
            json!([path("new.rlp"), 1, head + 2]),
            format!("export failed on #{}: not found", head + 1),
        ),
        (
            json!([missing_dir.to_str().unwrap()]),
            format!("open {}: no such file or directory", missing_dir.display()),
        ),
    ];
    for (params, message) in cases {
        assert_eq!(
            err(call("admin_exportChain", params.clone())),
            (-32000, message),
            "{params}"
        );
    }
    assert_eq!(names(out.path()), before);
    assert_eq!(std::fs::read(path("mid.rlp")).unwrap(), original);
}

/// `chaind export` on a stopped node's data directory: the same bytes as the RPC; refused
/// beside a running node and for a bad range, with one line on standard error.
#[test]
fn chaind_export_works_offline() {
    let n = dev_node();
    let url = n.http.clone().unwrap();
    let head = make_blocks(&n, 2);
    let want = expected(&url, 0, head);
    let want_range = expected(&url, 1, 2);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("chain.rlp");
    let file = file.to_str().unwrap();
    let busy = chaind(n.datadir.path(), &["export", file]);
    assert_eq!(busy.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&busy.stderr);
    assert!(
        stderr.starts_with("error: ") && stderr.contains("in use"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!std::path::Path::new(file).exists());

    let dir = {
        let mut n = n;
        assert!(n.terminate(10).is_some_and(|s| s.success()));
        std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
    };
    let done = chaind(dir.path(), &["export", file]);
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    assert_eq!(std::fs::read(file).unwrap(), want);
    let ranged = out.path().join("range.rlp.gz");
    let done = chaind(dir.path(), &["export", ranged.to_str().unwrap(), "1", "2"]);
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    assert_eq!(gunzip(&std::fs::read(&ranged).unwrap()), want_range);

    let again = chaind(dir.path(), &["export", file]);
    assert_eq!(again.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&again.stderr),
        format!("error: cannot create {file}: the file exists (export never overwrites a file)\n")
    );
    let bad = chaind(
        dir.path(),
        &[
            "export",
            out.path().join("b.rlp").to_str().unwrap(),
            "2",
            "1",
        ],
    );
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&bad.stderr),
        "error: export failed: first (2) is greater than last (1)\n"
    );
    let empty = tempfile::tempdir().unwrap();
    let none = chaind(
        empty.path(),
        &["export", out.path().join("c.rlp").to_str().unwrap()],
    );
    assert_eq!(none.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&none.stderr).contains("holds no chain"),
        "{none:?}"
    );
}

/// A data directory with `n`'s developer account but no chain: a node started there with
/// `--dev` has the same genesis, so it can import `n`'s blocks.
fn twin_datadir(n: &Node) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        n.datadir.path().join("dev-account"),
        dir.path().join("dev-account"),
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("keystore")).unwrap();
    for f in common::key_files(&n.keystore()) {
        std::fs::copy(&f, dir.path().join("keystore").join(f.file_name().unwrap())).unwrap();
    }
    dir
}

fn twin(n: &Node) -> Node {
    common::dev_http_node_in(twin_datadir(n), "admin,chain,debug")
}

/// Every block's hash, state root and receipts root, block 0 to the head.
fn chain_summary(url: &str) -> Vec<(Value, Value, Value)> {
    let head = ok(http_call(url, "chain_blockNumber", json!([])));
    let head = u64::from_str_radix(head.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    (0..=head)
        .map(|b| {
            let block = ok(http_call(
                url,
                "chain_getBlockByNumber",
                json!([format!("0x{b:x}")]),
            ));
            (
                block["hash"].clone(),
                block["stateRoot"].clone(),
                block["receiptsRoot"].clone(),
            )
        })
        .collect()
}

/// Export, then import into a fresh node of the same genesis: identical heads, state roots,
/// receipts; the same file again imports nothing; the gzip form; a file that does not start
/// at the node's head is refused.
#[test]
fn import_chain_round_trip() {
    let a = dev_node();
    let a_url = a.http.clone().unwrap();
    let head = make_blocks(&a, 6);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("chain.rlp");
    let gz = out.path().join("chain.rlp.gz");
    let tail = out.path().join("tail.rlp");
    for (f, params) in [
        (&file, json!([file])),
        (&gz, json!([gz])),
        (&tail, json!([tail, 3])),
    ] {
        assert_eq!(
            ok(http_call(&a_url, "admin_exportChain", params)),
            json!(true),
            "{f:?}"
        );
    }
    let want = chain_summary(&a_url);
    assert_eq!(want.len() as u64, head + 1);

    let b = twin(&a);
    let b_url = b.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&b_url, m, p);
    assert_eq!(
        err(call("admin_importChain", json!([tail]))),
        (
            -32000,
            "batch 0: failed to insert: unknown ancestor".to_string()
        )
    );
    assert_eq!(ok(call("chain_blockNumber", json!([]))), json!("0x0"));
    assert_eq!(ok(call("admin_importChain", json!([file]))), json!(true));
    assert_eq!(chain_summary(&b_url), want);
    // A receipt and a balance, as the exporting node has them.
    let dev = common::dev_account(&a);
    for url in [&a_url, &b_url] {
        assert_eq!(
            ok(http_call(
                url,
                "chain_getTransactionCount",
                json!([dev.trim()])
            )),
            json!(format!("0x{head:x}"))
        );
    }
    let block2 = ok(http_call(
        &a_url,
        "chain_getBlockByNumber",
        json!(["0x2", true]),
    ));
    let tx = block2["transactions"][0]["hash"].clone();
    assert_eq!(
        ok(call("chain_getTransactionReceipt", json!([tx]))),
        ok(http_call(
            &a_url,
            "chain_getTransactionReceipt",
            json!([tx])
        ))
    );
    // Again: nothing new, nothing changed. The gzip form is the same chain.
    assert_eq!(ok(call("admin_importChain", json!([file]))), json!(true));
    assert_eq!(ok(call("admin_importChain", json!([gz]))), json!(true));
    assert_eq!(chain_summary(&b_url), want);
    assert!(
        b.log_text().contains("Imported blockchain"),
        "{}",
        b.log_text()
    );
    // The imported chain goes on: B seals on top of it.
    make_more(&b, head);
}

/// Seals one more block on `n`, whose developer account has sent `nonce` transfers.
fn make_more(n: &Node, nonce: u64) {
    seal_transfer(n, nonce, Address([0x36; 20]));
}

/// A cut or corrupted file imports the blocks before the damage and names the block.
#[test]
fn import_chain_keeps_the_valid_prefix_of_a_damaged_file() {
    let a = dev_node();
    let a_url = a.http.clone().unwrap();
    make_blocks(&a, 5);
    let want = chain_summary(&a_url);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("chain.rlp");
    ok(http_call(&a_url, "admin_exportChain", json!([file])));
    let bytes = std::fs::read(&file).unwrap();
    // Where each block starts: the blocks are debug_getBlockRlp's, one after the other.
    let mut starts = vec![0usize];
    for b in 0..want.len() {
        let hex = ok(http_call(&a_url, "debug_getBlockRlp", json!([b])));
        starts.push(starts[b] + hex.as_str().unwrap().len() / 2);
    }

    // Cut in the middle of block 4: blocks 1 to 3 are imported.
    let cut = out.path().join("cut.rlp");
    std::fs::write(&cut, &bytes[..starts[4] + 10]).unwrap();
    let b = twin(&a);
    let b_url = b.http.clone().unwrap();
    let (code, message) = err(http_call(&b_url, "admin_importChain", json!([cut])));
    assert_eq!(code, -32000);
    assert!(
        message.starts_with("block 4: failed to parse: ")
            && message.ends_with("(3 blocks before it imported)"),
        "{message}"
    );
    assert_eq!(chain_summary(&b_url), want[..4].to_vec());

    // A byte changed inside block 3's header (its seal no longer matches): blocks 1 and 2.
    let bad = out.path().join("bad.rlp");
    let mut damaged = bytes.clone();
    damaged[starts[3] + 40] ^= 0x01;
    std::fs::write(&bad, &damaged).unwrap();
    let c = twin(&a);
    let c_url = c.http.clone().unwrap();
    let (_, message) = err(http_call(&c_url, "admin_importChain", json!([bad])));
    assert!(
        message.starts_with("batch 0: failed to insert: block 3: ")
            && message.ends_with("(2 blocks before it imported)"),
        "{message}"
    );
    assert_eq!(chain_summary(&c_url), want[..3].to_vec());
    // The rest comes from the good file.
    assert_eq!(
        ok(http_call(&c_url, "admin_importChain", json!([file]))),
        json!(true)
    );
    assert_eq!(chain_summary(&c_url), want);

    let missing = out.path().join("missing.rlp");
    assert_eq!(
        err(http_call(&c_url, "admin_importChain", json!([missing]))),
        (
            -32000,
            format!("open {}: no such file or directory", missing.display())
        )
    );
}

/// importChainFromString: hex blocks on a chain with none beyond genesis; refused once it has
/// some, and for bad hex.
#[test]
fn import_chain_from_string() {
    let a = dev_node();
    let a_url = a.http.clone().unwrap();
    make_blocks(&a, 2);
    let hex: String = (1..=2)
        .map(|b| {
            ok(http_call(&a_url, "debug_getBlockRlp", json!([b])))
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let b = twin(&a);
    let b_url = b.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&b_url, m, p);
    let (code, message) = err(call("admin_importChainFromString", json!(["0xzz"])));
    assert_eq!(code, -32000);
    assert!(message.starts_with("invalid hex"), "{message}");
    assert_eq!(
        ok(call(
            "admin_importChainFromString",
            json!([format!("0x{hex}")])
        )),
        json!(true)
    );
    assert_eq!(chain_summary(&b_url), chain_summary(&a_url));
    assert_eq!(
        err(call("admin_importChainFromString", json!([hex]))),
        (
            -32000,
            "importChainFromString works only on a chain without blocks beyond genesis; this one's head is block 2".to_string()
        )
    );
}

/// `chaind import` on a stopped node's data directory; one clear line on failure.
#[test]
fn chaind_import_works_offline() {
    let a = dev_node();
    let a_url = a.http.clone().unwrap();
    make_blocks(&a, 3);
    let want = chain_summary(&a_url);
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("chain.rlp.gz");
    ok(http_call(&a_url, "admin_exportChain", json!([file])));
    let dir = twin_datadir(&a);
    let done = chaind(dir.path(), &["--dev", "import", file.to_str().unwrap()]);
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    let missing = out.path().join("none.rlp");
    let failed = chaind(dir.path(), &["import", missing.to_str().unwrap()]);
    assert_eq!(failed.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&failed.stderr),
        format!(
            "error: cannot open {}: no such file or directory\n",
            missing.display()
        )
    );
    let b = common::dev_http_node_in(dir, "chain");
    assert_eq!(chain_summary(b.http.as_ref().unwrap()), want);
}

fn wait_for_log(n: &Node, text: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(line) = n.log_text().lines().find(|l| l.contains(text)) {
            return line.to_string();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no {text:?} in:\n{}",
            n.log_text()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn field(line: &str, name: &str) -> String {
    line.split_whitespace()
        .find_map(|w| w.strip_prefix(&format!("{name}=")))
        .unwrap_or_else(|| panic!("no {name}= in {line}"))
        .to_string()
}

fn restart(n: Node, args: &[&str]) -> Node {
    let dir = {
        let mut n = n;
        assert!(n.terminate(10).is_some_and(|s| s.success()));
        std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
    };
    Node::start_in(dir, args)
}

/// admin_saveTrieNodeCacheToDisk: null, then the file appears; a restart loads it; a corrupt
/// file is reported and ignored; a disabled cache is an error; the periodic save works.
#[test]
fn the_trie_node_cache_is_saved_and_loaded() {
    let mut args = vec!["--dev"];
    args.extend(common::http_args("admin,chain"));
    let n = dev_node();
    let url = n.http.clone().unwrap();
    make_blocks(&n, 3);
    let file = n.datadir.path().join("fastcache").join("nodes.bin");
    assert!(!file.exists());
    assert_eq!(
        ok(http_call(&url, "admin_saveTrieNodeCacheToDisk", json!([]))),
        Value::Null
    );
    let saved = wait_for_log(&n, "Saved the trie node cache");
    let nodes = field(&saved, "nodes");
    assert!(nodes.parse::<u64>().unwrap() > 0, "{saved}");
    assert!(file.exists());

    let n = restart(n, &args);
    let loaded = wait_for_log(&n, "Loaded the trie node cache");
    assert_eq!(field(&loaded, "nodes"), nodes);

    // A corrupt file: reported, ignored, the node serves as before.
    let dir = {
        let mut n = n;
        assert!(n.terminate(10).is_some_and(|s| s.success()));
        std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
    };
    let mut bytes = std::fs::read(dir.path().join("fastcache/nodes.bin")).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    std::fs::write(dir.path().join("fastcache/nodes.bin"), &bytes).unwrap();
    let n = Node::start_in(dir, &args);
    let warned = wait_for_log(&n, "Ignored the saved trie node cache");
    assert!(
        warned.contains("damaged: its checksum does not match"),
        "{warned}"
    );
    assert!(!n.log_text().contains("Loaded the trie node cache"));
    assert_eq!(
        ok(http_call(
            n.http.as_ref().unwrap(),
            "chain_blockNumber",
            json!([])
        )),
        json!("0x3")
    );

    // Disabled: an error, nothing written.
    let mut disabled: Vec<&str> = args.to_vec();
    disabled.extend(["--state.trie-cache-limit", "0"]);
    let d = Node::start(&disabled);
    assert_eq!(
        err(http_call(
            d.http.as_ref().unwrap(),
            "admin_saveTrieNodeCacheToDisk",
            json!([])
        )),
        (
            -32000,
            "trie node cache is disabled, nothing to save to file".to_string()
        )
    );
    assert!(!d.datadir.path().join("fastcache").exists());

    // Periodic: a save within the period without any call.
    let mut periodic: Vec<&str> = args.to_vec();
    periodic.extend(["--state.trie-cache-save-period", "1s"]);
    let p = Node::start(&periodic);
    wait_for_log(&p, "Saved the trie node cache");
    assert!(p.datadir.path().join("fastcache/nodes.bin").exists());
}

fn ws_call(url: &str, method: &str, params: Value) -> Value {
    let (mut ws, _) = tungstenite::connect(url).unwrap();
    let req = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    ws.send(tungstenite::Message::text(req)).unwrap();
    loop {
        if let tungstenite::Message::Text(t) = ws.read().unwrap() {
            return serde_json::from_str(t.as_str()).unwrap();
        }
    }
}

/// `--rpc.unsafe-debug.disable`: the unsafe debug methods do not exist over HTTP and
/// WebSocket, IPC still serves them; the safe subset stays everywhere. Without the flag
/// they are served wherever `debug` is.
#[test]
fn the_unsafe_debug_methods_are_ipc_only_under_the_flag() {
    let args = |flag: bool| {
        let mut a = vec!["--dev"];
        a.extend(common::http_args("debug,chain"));
        a.extend(common::ws_args("debug"));
        if flag {
            a.push("--rpc.unsafe-debug.disable");
        }
        a
    };
    let n = Node::start(&args(true));
    let (http, ws) = (n.http.clone().unwrap(), n.ws.clone().unwrap());
    let mut ipc = common::Ipc::connect(n.ipc.as_ref().unwrap());
    for m in [
        "debug_memStats",
        "debug_gcStats",
        "debug_setHead",
        "debug_verbosity",
    ] {
        let params = match m {
            "debug_setHead" => json!(["0x0"]),
            "debug_verbosity" => json!([3]),
            _ => json!([]),
        };
        let gone = (
            -32601,
            format!("the method {m} does not exist/is not available"),
        );
        assert_eq!(err(http_call(&http, m, params.clone())), gone, "HTTP {m}");
        assert_eq!(err(ws_call(&ws, m, params.clone())), gone, "WS {m}");
        ok(ipc.call(m, params));
    }
    for (m, params) in [
        ("debug_metrics", json!([false])),
        ("debug_getBadBlocks", json!([])),
    ] {
        ok(http_call(&http, m, params.clone()));
        ok(ws_call(&ws, m, params.clone()));
        ok(ipc.call(m, params));
    }
    ok(http_call(&http, "debug_dumpBlock", json!(["latest"])));
    ok(ws_call(&ws, "debug_getBlockRlp", json!([0])));

    let open = Node::start(&args(false));
    ok(http_call(
        open.http.as_ref().unwrap(),
        "debug_memStats",
        json!([]),
    ));
    ok(ws_call(
        open.ws.as_ref().unwrap(),
        "debug_gcStats",
        json!([]),
    ));
}

/// What the debug methods answer about a real chain.
#[test]
fn the_debug_methods_describe_the_chain() {
    let n = dev_node();
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = common::dev_account(&n);
    let head = make_blocks(&n, 3);
    assert_eq!(head, 3);
    let to = "0x3535353535353535353535353535353535353535";

    let dump = ok(call("debug_dumpBlock", json!([1])));
    let block1 = ok(call("chain_getBlockByNumber", json!(["0x1", false])));
    assert_eq!(dump["root"], block1["stateRoot"]);
    assert_eq!(
        dump["accounts"][to]["balance"],
        json!("1"),
        "decimal, as of block 1"
    );
    assert_eq!(dump["accounts"][to]["nonce"], json!(0));
    assert_eq!(dump["accounts"][&dev]["nonce"], json!(1));
    assert_eq!(
        dump["accounts"][&dev]["accountKey"],
        json!({"keyType": 1, "key": {}})
    );
    assert_eq!(dump["accounts"].as_object().unwrap().len(), 2);

    let trie = ok(call("debug_dumpStateTrie", json!(["0x1"])));
    assert_eq!(trie["root"], block1["stateRoot"]);
    assert!(trie["nodes"]
        .as_array()
        .unwrap()
        .contains(&block1["stateRoot"]));

    let mut both = vec![dev.clone(), to.to_string()];
    both.sort();
    assert_eq!(
        ok(call("debug_getModifiedAccountsByNumber", json!([0, 3]))),
        json!(both)
    );
    assert_eq!(
        ok(call("debug_getModifiedAccountsByNumber", json!([1]))),
        json!(both)
    );
    let h0 = ok(call("chain_getBlockByNumber", json!(["0x0", false])))["hash"].clone();
    assert_eq!(
        ok(call(
            "debug_getModifiedAccountsByHash",
            json!([h0, block1["hash"]])
        )),
        json!(both)
    );
    assert_eq!(
        err(call("debug_getModifiedAccountsByNumber", json!([2, 1]))),
        (
            -32000,
            "start block height (2) must be less than end block height (1)".to_string()
        )
    );
    assert_eq!(
        ok(call(
            "debug_getModifiedStorageNodesByNumber",
            json!([to, 1])
        )),
        json!(0)
    );

    let metrics = ok(call("debug_metrics", json!([true])));
    assert_eq!(metrics["chain"]["head"], json!(3));
    assert_eq!(metrics["txpool"], json!({"pending": 0, "queued": 0}));
    assert_eq!(metrics["trie"]["cache"]["enabled"], json!(true));
    assert!(metrics["trie"]["file"]["nodes"].as_u64().unwrap() > 0);
    assert!(metrics["process"]["rss"].as_u64().unwrap() > 0);

    // A refused import is kept as a bad block.
    assert_eq!(ok(call("debug_getBadBlocks", json!([]))), json!([]));
    let mut file_bytes = Vec::new();
    for b in 1..=3 {
        let rlp = ok(call("debug_getBlockRlp", json!([b])));
        let mut bytes = hex::decode(rlp.as_str().unwrap()).unwrap();
        if b == 3 {
            bytes[40] ^= 1;
        }
        file_bytes.extend(bytes);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad.rlp");
    std::fs::write(&file, &file_bytes).unwrap();
    let other = twin(&n);
    let other_url = other.http.clone().unwrap();
    err(http_call(&other_url, "admin_importChain", json!([file])));
    let bad = ok(http_call(&other_url, "debug_getBadBlocks", json!([])));
    assert_eq!(bad.as_array().unwrap().len(), 1, "{bad}");
    assert_eq!(bad[0]["number"], json!("0x3"));
    assert!(
        bad[0]["reason"].as_str().unwrap().starts_with("block 3: "),
        "{bad}"
    );
    let first_two: usize = (1..=2)
        .map(|b| {
            ok(call("debug_getBlockRlp", json!([b])))
                .as_str()
                .unwrap()
                .len()
                / 2
        })
        .sum();
    assert_eq!(
        bad[0]["rlp"],
        json!(format!("0x{}", hex::encode(&file_bytes[first_two..])))
    );

    // setHead: back to block 1; the later transfers are gone from the chain, and it goes on.
    let tx3 =
        ok(call("chain_getBlockByNumber", json!(["0x3", true])))["transactions"][0]["hash"].clone();
    assert_eq!(ok(call("debug_setHead", json!(["0x1"]))), Value::Null);
    assert_eq!(ok(call("chain_blockNumber", json!([]))), json!("0x1"));
    assert_eq!(
        ok(call("chain_getTransactionReceipt", json!([tx3]))),
        Value::Null
    );
    assert_eq!(ok(call("chain_getBalance", json!([to]))), json!("0x1"));
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev]))),
        json!("0x1")
    );
    make_more(&n, 1);
    assert_eq!(ok(call("chain_blockNumber", json!([]))), json!("0x2"));
}

/// State migration through the binary while transfers keep arriving: the status moves to
/// 100% without going back, the current state is whole afterwards, a state older than the
/// migration's block is gone with a clear error; stop and a second start are errors when
/// they do not apply.
#[test]
fn state_migration_under_load() {
    let n = dev_node();
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let to = "0x3535353535353535353535353535353535353535";
    make_blocks(&n, 5);
    assert_eq!(
        err(call("admin_stopStateMigration", json!([]))),
        (-32000, "not in migration".to_string())
    );
    let idle = ok(call("admin_stateMigrationStatus", json!([])));
    assert_eq!(
        idle,
        json!({"committed": 0, "err": "null", "isMigration": false, "migrationBlockNumber": 0,
               "pending": 0, "progress": 0.0, "read": 0})
    );
    let key = dev_key(&n);
    let sending = std::sync::atomic::AtomicBool::new(true);
    std::thread::scope(|s| {
        // Transfers keep coming during the migration.
        s.spawn(|| {
            let mut nonce = 5;
            while sending.load(std::sync::atomic::Ordering::Relaxed) {
                let raw = common::raw_transfer(
                    &key,
                    nonce,
                    Address::parse_lenient(to).unwrap(),
                    1,
                    common::PRICE,
                    1000,
                );
                let r = http_call(&url, "chain_sendRawTransaction", json!([raw]));
                assert!(r.get("result").is_some(), "{r}");
                nonce += 1;
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        let start_block = ok(call("chain_blockNumber", json!([])));
        assert_eq!(
            ok(call("admin_startStateMigration", json!([]))),
            Value::Null
        );
        let mut last = -1.0;
        let status = loop {
            let s = ok(call("admin_stateMigrationStatus", json!([])));
            let p = s["progress"].as_f64().unwrap();
            assert!(p >= last, "progress went back: {last} -> {s}");
            last = p;
            if !s["isMigration"].as_bool().unwrap() {
                break s;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        };
        sending.store(false, std::sync::atomic::Ordering::Relaxed);
        assert_eq!(status["err"], json!("null"), "{status}");
        assert_eq!(status["progress"], json!(100.0));
        // As the reference's: 0 once no migration runs.
        assert_eq!(status["migrationBlockNumber"], json!(0), "{status}");
        let start = u64::from_str_radix(start_block.as_str().unwrap().trim_start_matches("0x"), 16)
            .unwrap();
        // The state as of the head is whole, and still moving.
        let balance = |b: &str| call("chain_getBalance", json!([to, b]));
        assert!(ok(balance("latest")).as_str().unwrap() != "0x0");
        let (code, text) = err(balance("0x1"));
        let m: u64 = text
            .rsplit("from block ")
            .next()
            .and_then(|t| t.strip_suffix(" on"))
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{text}"));
        assert!(m >= start, "{text}");
        assert_eq!(
            (code, text),
            (
                -32000,
                format!("the state of block 1 was removed by a state migration; states are kept from block {m} on")
            )
        );
        ok(balance(&format!("0x{m:x}")));
        assert_eq!(
            ok(call("debug_dumpBlock", json!([m])))["accounts"][to]["nonce"],
            json!(0)
        );
    });
    let head = ok(call("chain_blockNumber", json!([])));
    make_more_after(&n, &head);
}

/// Seals one more transfer after whatever the developer account sent.
fn make_more_after(n: &Node, _head: &Value) {
    let url = n.http.clone().unwrap();
    let dev = common::dev_account(n);
    let nonce = ok(http_call(
        &url,
        "chain_getTransactionCount",
        json!([dev.trim(), "pending"]),
    ));
    let nonce = u64::from_str_radix(nonce.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
    make_more(n, nonce);
}

fn chainctl(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_chainctl"))
        .args(args)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

/// The operator's cron lines: `chainctl admin exportChain`, `importChain` and
/// `saveTrieNodeCacheToDisk` exit 0 on success, and 1 with one clear line on standard error
/// on failure; `stateMigrationStatus --watch` follows a migration to its end.
#[test]
fn chainctl_admin_in_a_cron_like_script() {
    let n = dev_node();
    make_blocks(&n, 2);
    let ipc = n.ipc.clone().unwrap();
    let ep = ipc.to_str().unwrap();
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("backup.rlp.gz");
    let f = file.to_str().unwrap();
    for (args, code, stderr) in [
        (vec!["admin", "exportChain", f], 0, String::new()),
        (
            vec!["admin", "exportChain", f],
            1,
            "error -32000: location would overwrite an existing file\n".to_string(),
        ),
        (vec!["admin", "importChain", f], 0, String::new()),
        (
            vec!["admin", "importChain", "/no/such/file.rlp"],
            1,
            "error -32000: open /no/such/file.rlp: no such file or directory\n".to_string(),
        ),
        (vec!["admin", "saveTrieNodeCacheToDisk"], 0, String::new()),
    ] {
        let mut all = vec!["--endpoint", ep];
        all.extend(args.iter().copied());
        let r = chainctl(&all);
        assert_eq!(r.status.code(), Some(code), "{args:?}: {r:?}");
        assert_eq!(String::from_utf8_lossy(&r.stderr), stderr, "{args:?}");
        if code == 0 {
            assert!(
                !String::from_utf8_lossy(&r.stdout).is_empty(),
                "{args:?} printed its result"
            );
        }
    }
    assert!(file.exists());

    // --watch on a migration: the final status, progress 100.
    let r = chainctl(&["--endpoint", ep, "admin", "startStateMigration"]);
    assert_eq!(r.status.code(), Some(0), "{r:?}");
    let r = chainctl(&["--endpoint", ep, "admin", "stateMigrationStatus", "--watch"]);
    assert_eq!(r.status.code(), Some(0), "{r:?}");
    let status: Value = serde_json::from_slice(&r.stdout).unwrap();
    assert_eq!(
        (
            status["isMigration"].clone(),
            status["progress"].clone(),
            status["err"].clone()
        ),
        (json!(false), json!(100.0), json!("null")),
        "{status}"
    );
}

/// A genesis with `validator` and `funded` holding `balance` each, written as
/// `<dir>/genesis.json` for `chaind init`: the file and the parsed genesis.
fn validator_genesis(
    dir: &std::path::Path,
    validator: &SecretKey,
    funded: &[&SecretKey],
    balance: &str,
) -> (std::path::PathBuf, chain_node::chain::genesis::Genesis) {
    let alloc: Vec<String> = funded
        .iter()
        .map(|k| {
            format!(
                r#""0x{}": {{"balance": "{balance}"}}"#,
                hex::encode(k.address().0)
            )
        })
        .collect();
    let json = format!(
        r#"{{"validator": "0x{}", "alloc": {{{}}}}}"#,
        hex::encode(validator.address().0),
        alloc.join(", ")
    );
    let file = dir.join("genesis.json");
    std::fs::write(&file, &json).unwrap();
    (
        file,
        chain_node::chain::genesis::Genesis::parse(json.as_bytes()).unwrap(),
    )
}

/// The issue's round trip at size: a chain of 1,000 blocks (sealed here, in process, on the
/// genesis a `chaind init` node runs) goes into node A by import; A exports it; a fresh node
/// B imports A's file: heads, state roots and receipts are identical.
#[test]
fn a_thousand_blocks_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let sender = SecretKey::from_slice(&[0x42; 32]).unwrap();
    let (genesis_file, genesis) = validator_genesis(
        dir.path(),
        &validator,
        &[&sender],
        "1000000000000000000000000",
    );
    // The blocks, sealed in process: one or two transfers each.
    let built = chain_node::chain::Chain::open(&dir.path().join("built"), &genesis).unwrap();
    let mut nonce = 0;
    for b in 0..1000u64 {
        for _ in 0..(1 + b % 2) {
            let to = Address([(b % 200) as u8 + 1; 20]);
            let tx =
                common::transfer_tx(&sender, nonce, to, u128::from(b) + 1, common::PRICE, 1000);
            built.submit(tx).unwrap();
            nonce += 1;
        }
        built.seal(&validator).unwrap().unwrap();
    }
    let source = dir.path().join("built.rlp");
    let stop = std::sync::atomic::AtomicBool::new(false);
    chain_node::chain::export::export(&built, &source, None, None, &stop, &mut |_, _| {}).unwrap();
    let want_head = format!("0x{}", hex::encode(built.head_hash()));
    drop(built);

    let init_node = |name: &str| {
        let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
        let out = std::process::Command::new(common::chaind_bin())
            .arg("--datadir")
            .arg(dd.path())
            .arg("init")
            .arg(&genesis_file)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {out:?}");
        Node::start_in(dd, &common::http_args("admin,chain"))
    };
    let a = init_node("a");
    let a_url = a.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&a_url, "admin_importChain", json!([source]))),
        json!(true)
    );
    assert_eq!(
        ok(http_call(
            &a_url,
            "chain_getBlockByNumber",
            json!(["latest"])
        ))["hash"],
        json!(want_head)
    );
    let exported = dir.path().join("a.rlp");
    assert_eq!(
        ok(http_call(&a_url, "admin_exportChain", json!([exported]))),
        json!(true)
    );
    assert_eq!(
        std::fs::read(&exported).unwrap(),
        std::fs::read(&source).unwrap(),
        "A exports what it imported"
    );

    let b = init_node("b");
    let b_url = b.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&b_url, "admin_importChain", json!([exported]))),
        json!(true)
    );
    let summary = chain_summary(&b_url);
    assert_eq!(summary.len(), 1001);
    assert_eq!(summary, chain_summary(&a_url));
    for number in [1u64, 500, 1000] {
        let block = ok(http_call(
            &a_url,
            "chain_getBlockByNumber",
            json!([format!("0x{number:x}"), true]),
        ));
        for tx in block["transactions"].as_array().unwrap() {
            assert_eq!(
                ok(http_call(
                    &b_url,
                    "chain_getTransactionReceipt",
                    json!([tx["hash"]])
                )),
                ok(http_call(
                    &a_url,
                    "chain_getTransactionReceipt",
                    json!([tx["hash"]])
                ))
            );
        }
    }
    // Again: nothing imported, nothing changed.
    assert_eq!(
        ok(http_call(&b_url, "admin_importChain", json!([exported]))),
        json!(true)
    );
    assert_eq!(chain_summary(&b_url), summary);
}

/// `chaind import` of 600 blocks, block 550's committed seal forged: the import checks seals
/// in batches and stores chunks of blocks while it checks the next, yet it keeps exactly the
/// blocks before the forged one, names it as a one-by-one check would, and the true file then
/// adds the rest.
#[test]
fn chaind_import_refuses_a_forged_seal_and_keeps_the_blocks_before_it() {
    use chain_node::types::block::{BftExtra, Block};
    let dir = tempfile::tempdir().unwrap();
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let forger = SecretKey::from_slice(&[0x43; 32]).unwrap();
    let (genesis_file, genesis) = validator_genesis(dir.path(), &validator, &[&validator], "1");
    let (mut parent, _) = chain_node::chain::genesis_block(&genesis).unwrap();
    let (mut good, mut forged) = (Vec::new(), Vec::new());
    for number in 1..=600u64 {
        let header = common::empty_block(&parent, &validator);
        let mut block = Block {
            header: header.clone(),
            transactions: Vec::new(),
        };
        good.extend(block.encode());
        if number == 550 {
            // The block's hash leaves the committed seals out: its child still follows it.
            let mut extra = BftExtra::decode(&block.header.extra).unwrap();
            extra.committed_seals[0] = forger.sign_hash(&[9; 32]).to_vec();
            block.header.extra = extra.encode();
        }
        forged.extend(block.encode());
        parent = header;
    }
    let (good_file, forged_file) = (dir.path().join("good.rlp"), dir.path().join("forged.rlp"));
    std::fs::write(&good_file, &good).unwrap();
    std::fs::write(&forged_file, &forged).unwrap();

    let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
    let init = chaind(dd.path(), &["init", genesis_file.to_str().unwrap()]);
    assert!(init.status.success(), "{init:?}");
    let refused = chaind(dd.path(), &["import", forged_file.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(
        stderr.lines().last().unwrap(),
        format!(
            "error: batch 0: failed to insert: block 550: not sealed by the validator {} (549 blocks before it imported)",
            validator.address()
        )
    );
    let done = chaind(dd.path(), &["import", good_file.to_str().unwrap()]);
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    let log = String::from_utf8_lossy(&done.stderr);
    let last = log
        .lines()
        .find(|l| l.contains("Imported blockchain"))
        .unwrap_or_else(|| panic!("{log}"));
    assert!(
        last.contains("new=51") && last.contains("known=549") && last.contains("head=600"),
        "{last}"
    );
}

/// A chain database of the previous layout (schema version 3: headers and bodies apart) is
/// upgraded when `chaind` opens it: the log says so, and the node serves the same blocks.
#[test]
fn a_schema_3_database_is_upgraded_when_the_node_starts() {
    use redb::{ReadableTable, TableDefinition};
    type ByBlock = TableDefinition<'static, (u64, &'static [u8; 32]), &'static [u8]>;
    let dir = tempfile::tempdir().unwrap();
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let (genesis_file, genesis) = validator_genesis(dir.path(), &validator, &[&validator], "1");
    let blocks_file = dir.path().join("blocks.rlp");
    common::write_empty_blocks(&blocks_file, &genesis, &validator, 20);
    let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
    assert!(chaind(dd.path(), &["init", genesis_file.to_str().unwrap()])
        .status
        .success());
    let imported = chaind(dd.path(), &["import", blocks_file.to_str().unwrap()]);
    assert!(imported.status.success(), "{imported:?}");
    // Back to version 3, as the previous chaind wrote it.
    let (mut hashes, mut stored) = (Vec::new(), 0);
    {
        let db = redb::Database::create(dd.path().join("chaindata").join("chain.redb")).unwrap();
        let tx = db.begin_write().unwrap();
        {
            let blocks = tx.open_table(ByBlock::new("blocks")).unwrap();
            let mut headers = tx.open_table(ByBlock::new("headers")).unwrap();
            let mut bodies = tx.open_table(ByBlock::new("bodies")).unwrap();
            for entry in blocks.iter().unwrap() {
                let (k, v) = entry.unwrap();
                let (header, txs) = chain_node::chain::db::split_block(v.value()).unwrap();
                let mut body = Vec::new();
                chain_node::types::rlp::put_list_head(&mut body, txs.len());
                body.extend_from_slice(txs);
                headers.insert(k.value(), header).unwrap();
                bodies.insert(k.value(), body.as_slice()).unwrap();
                hashes.push((k.value().0, format!("0x{}", hex::encode(k.value().1))));
                stored += 1;
            }
        }
        tx.delete_table(ByBlock::new("blocks")).unwrap();
        tx.open_table(TableDefinition::<&str, &[u8]>::new("meta"))
            .unwrap()
            .insert("schema", 3u32.to_be_bytes().as_slice())
            .unwrap();
        tx.commit().unwrap();
    }
    assert_eq!(stored, 21);
    let n = Node::start_in(dd, &common::http_args("chain,debug"));
    let line = wait_for_log(&n, "Upgraded the chain database from schema version 3 to 4");
    assert!(line.contains("blocks=21"), "{line}");
    let url = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&url, "chain_blockNumber", json!([]))),
        json!("0x14")
    );
    for (number, hash) in hashes {
        let b = ok(http_call(
            &url,
            "chain_getBlockByNumber",
            json!([format!("0x{number:x}"), false]),
        ));
        assert_eq!(b["hash"], json!(hash), "block {number}");
    }
    // Their bytes too: the last block's RLP is the file's last item.
    let file = std::fs::read(&blocks_file).unwrap();
    let mut r = file.as_slice();
    let mut last = None;
    while let Some(item) = chain_node::chain::import::next_item(&mut r).unwrap() {
        last = Some(item);
    }
    assert_eq!(
        ok(http_call(&url, "debug_getBlockRlp", json!([20]))),
        json!(hex::encode(last.unwrap()))
    );
}
