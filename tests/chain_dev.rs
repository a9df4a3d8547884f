//! The chain of `chaind --dev` through the real binary: the genesis block, the funded
//! developer account, the chain queries, and a data directory that keeps its chain.

mod common;

use common::{
    chaind_run as chaind, dev_account, dev_key, err, http_call, ok, raw_transfer as transfer, u256,
    Node,
};
use serde_json::{json, Value};

/// The arguments of a node with HTTP on 127.0.0.1 (any free port) offering `apis`, with
/// `--dev` when `dev`.
fn http_args(dev: bool, apis: &str) -> Vec<&str> {
    let mut args = if dev { vec!["--dev"] } else { Vec::new() };
    args.extend(common::http_args(apis));
    args
}

fn http_node(dev: bool, apis: &str) -> Node {
    Node::start(&http_args(dev, apis))
}

fn http_node_in(dir: tempfile::TempDir, dev: bool, apis: &str) -> Node {
    Node::start_in(dir, &http_args(dev, apis))
}

fn chain_opened_hash(n: &Node) -> String {
    let log = n.log_text();
    let line = log
        .lines()
        .find(|l| l.contains("Chain opened"))
        .unwrap_or_else(|| panic!("no 'Chain opened' line in:\n{log}"));
    line.split_whitespace()
        .find_map(|w| w.strip_prefix("hash="))
        .unwrap()
        .to_string()
}

#[test]
fn the_dev_chain_starts_at_a_funded_genesis() {
    let n = http_node(true, "chain");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = dev_account(&n);
    assert_eq!(ok(call("chain_blockNumber", json!([]))), json!("0x0"));
    assert_eq!(ok(call("chain_chainID", json!([]))), json!("0x3e8"));
    assert_eq!(ok(call("chain_gasPrice", json!([]))), json!("0x5d21dba00"));
    // 10^27: the developer account's genesis balance.
    for block in [
        json!([dev]),
        json!([dev, "latest"]),
        json!([dev, "earliest"]),
        json!([dev, "0x0"]),
    ] {
        assert_eq!(
            ok(call("chain_getBalance", block.clone())),
            json!("0x33b2e3c9fd0803ce8000000"),
            "{block}"
        );
    }
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev]))),
        json!("0x0")
    );
    let other = "0x0000000000000000000000000000000000000001";
    assert_eq!(ok(call("chain_getBalance", json!([other]))), json!("0x0"));
    // A block the chain does not have: the reference's error, not null.
    assert_eq!(
        err(call("chain_getBalance", json!([dev, "0x1"]))),
        (
            -32000,
            "the header does not exist (block number: 1)".to_string()
        )
    );
    assert_eq!(
        err(call(
            "chain_getBalance",
            json!([dev, format!("0x{}", "ab".repeat(32))])
        )),
        (-32000, "header for hash not found".to_string())
    );
    // Block parameters that do not decode: hexutil's texts, as the reference answers.
    for (bad, text) in [
        ("1", "hex string without 0x prefix"),
        ("0x", "hex string \"0x\""),
        ("0x01", "hex number with leading zero digits"),
        ("newest", "hex string without 0x prefix"),
    ] {
        let (code, msg) = err(call("chain_getBalance", json!([dev, bad])));
        assert_eq!(code, -32602, "{bad}");
        assert_eq!(msg, format!("invalid argument 1: {text}"));
    }
    assert_eq!(
        err(call("chain_getBalance", json!(["abc"]))),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address".to_string()
        )
    );
    assert_eq!(
        err(call("chain_getBalance", json!([7]))),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Address".to_string()
        )
    );
    assert_eq!(
        err(call("chain_getBalance", json!(["0x1234"]))),
        (
            -32602,
            "invalid argument 0: hex string has length 4, want 40 for common.Address".to_string()
        )
    );
}

#[test]
fn a_data_directory_keeps_its_chain() {
    let mut n = Node::start(&["--dev"]);
    let hash = chain_opened_hash(&n);
    assert!(hash.starts_with("0x") && hash.len() == 66, "{hash}");
    assert!(n
        .datadir
        .path()
        .join("chaindata")
        .join("chain.redb")
        .is_file());
    assert!(n.terminate(10).is_some_and(|s| s.success()));
    let dir = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
    drop(n);
    let again = Node::start_in(dir, &["--dev"]);
    assert_eq!(chain_opened_hash(&again), hash, "the same genesis block");
}

/// The developer account's key file carries the lightest scrypt parameters (N=2, r=8, p=1)
/// on a node started without `--lightkdf`, and an independent scrypt, Keccak, AES and
/// secp256k1 stack decrypts it with the empty passphrase to the key of the address in
/// `dev-account`. A restart reads it (the node seals with it) and leaves it as it is.
#[test]
fn the_dev_key_file_has_the_lightest_scrypt_and_the_empty_passphrase() {
    let dir = tempfile::tempdir().unwrap();
    // Not `Node::start`, which adds --lightkdf.
    let mut child = std::process::Command::new(common::chaind_bin())
        .arg("--datadir")
        .arg(dir.path())
        .args([
            "--dev",
            "--ipcdisable",
            "--port",
            "0",
            "--p2paddr",
            "127.0.0.1",
        ])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // The marker is written once the key file is durable.
    let marker = dir.path().join("dev-account");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !marker.exists() {
        assert!(
            std::time::Instant::now() < deadline,
            "no dev-account after 20 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let dev = std::fs::read_to_string(&marker).unwrap().trim().to_string();
    let files = common::key_files(&dir.path().join("keystore"));
    assert_eq!(files.len(), 1, "{files:?}");
    let bytes = std::fs::read(&files[0]).unwrap();
    let file: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(file["version"], json!(3));
    assert_eq!(file["crypto"]["kdf"], json!("scrypt"));
    let params = &file["crypto"]["kdfparams"];
    assert_eq!(
        (&params["n"], &params["r"], &params["p"], &params["dklen"]),
        (&json!(2), &json!(8), &json!(1), &json!(32))
    );
    let key = common::keyfile::decrypt_independent(&file, "");
    assert_eq!(common::keyfile::address_independent(&key), dev);
    assert_eq!(file["address"], json!(dev.trim_start_matches("0x")));

    let n = http_node_in(dir, true, "chain");
    let url = n.http.clone().unwrap();
    let to = Address([0x36; 20]);
    let hash = ok(http_call(
        &url,
        "chain_sendRawTransaction",
        json!([transfer(&dev_key(&n), 0, to, 7, common::PRICE, 1000)]),
    ));
    assert_eq!(common::wait_receipt(&url, &hash)["status"], json!("0x1"));
    assert_eq!(
        std::fs::read(&files[0]).unwrap(),
        bytes,
        "the key file is kept"
    );
}

/// A first `--dev` start killed while the chain database is being made (SIGKILL as soon as
/// its file appears, ten times) leaves a data directory the next start opens, at block 0.
#[test]
fn a_start_killed_while_the_chain_database_is_made_leaves_a_usable_directory() {
    for round in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let chaindata = dir.path().join("chaindata");
        let mut child = std::process::Command::new(common::chaind_bin())
            .arg("--datadir")
            .arg(dir.path())
            .args([
                "--dev",
                "--ipcdisable",
                "--port",
                "0",
                "--p2paddr",
                "127.0.0.1",
            ])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while !(chaindata.join("chain.redb").exists() || chaindata.join("chain.redb.new").exists())
        {
            assert!(std::time::Instant::now() < deadline, "no chain database");
        }
        child.kill().unwrap();
        child.wait().unwrap();
        let n = http_node_in(dir, true, "chain");
        assert_eq!(
            ok(http_call(
                n.http.as_ref().unwrap(),
                "chain_blockNumber",
                json!([])
            )),
            json!("0x0"),
            "round {round}"
        );
    }
}

#[test]
fn a_node_without_a_chain_says_so() {
    let n = http_node(false, "chain");
    let reply = http_call(n.http.as_ref().unwrap(), "chain_blockNumber", json!([]));
    assert_eq!(
        err(reply),
        (
            -32000,
            "this node has no chain: start it with --dev, or after chaind init GENESIS.json"
                .to_string()
        )
    );
}

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::transaction::{Transaction, ValueTransfer};

fn wait_for_block(call: &dyn Fn(&str, Value) -> Value, number: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ok(call("chain_blockNumber", json!([]))) != json!(number) {
        assert!(
            std::time::Instant::now() < deadline,
            "block {number} was not sealed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// A value transfer signed here and sent raw is sealed into block 1: balances and the nonce
/// move; every refused transaction leaves the state and the pool as they were.
#[test]
fn a_raw_value_transfer_is_sealed() {
    let n = http_node(true, "chain,debug,txpool");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = dev_account(&n);
    let key = dev_key(&n);
    let to = Address([0x35; 20]);
    let price = 25_000_000_000u128;
    let one = 1_000_000_000_000_000_000u128;

    // Refusals first: nothing changes.
    let stranger = SecretKey::from_slice(&[0x46; 32]).unwrap();
    let refusals = [
        (transfer(&key, 0, to, one, price, 1001), "invalid chain id"),
        (
            transfer(&key, 0, to, one, price + 1, 1000),
            "invalid unit price",
        ),
        (
            transfer(&key, 4097, to, one, price, 1000),
            "nonce too high: the next nonce of the sender is 0, and a transaction may wait at most 4096 nonces ahead of it",
        ),
        (
            transfer(&stranger, 0, to, one, price, 1000),
            "insufficient funds of the sender for value ",
        ),
        (
            transfer(
                &key,
                0,
                Address(
                    [0; 19]
                        .iter()
                        .copied()
                        .chain([1])
                        .collect::<Vec<_>>()
                        .try_into()
                        .unwrap(),
                ),
                one,
                price,
                1000,
            ),
            "the address is reserved for pre-compiled contracts",
        ),
    ];
    for (raw, want) in &refusals {
        let e = err(call("chain_sendRawTransaction", json!([raw])));
        assert_eq!(e, (-32000, want.to_string()), "{want}");
    }
    let (code, msg) = err(call("chain_sendRawTransaction", json!(["0x08c0"])));
    assert_eq!(code, -32000);
    assert!(msg.starts_with("rlp: "), "{msg}");
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev, "pending"]))),
        json!("0x0")
    );
    assert_eq!(ok(call("chain_blockNumber", json!([]))), json!("0x0"));
    assert_eq!(
        ok(call("txpool_status", json!([]))),
        json!({"pending": "0x0", "queued": "0x0"})
    );

    let raw = transfer(&key, 0, to, one, price, 1000);
    let hash = ok(call("chain_sendRawTransaction", json!([raw])));
    assert_eq!(hash.as_str().unwrap().len(), 66);
    wait_for_block(&call, "0x1");
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev]))),
        json!("0x1")
    );
    assert_eq!(
        ok(call(
            "chain_getBalance",
            json!(["0x3535353535353535353535353535353535353535"])
        )),
        json!("0xde0b6b3a7640000")
    );
    // The developer account is also the validator: the fee comes back to it.
    assert_eq!(
        ok(call("chain_getBalance", json!([dev]))),
        json!(format!(
            "0x{:x}",
            1_000_000_000_000_000_000_000_000_000u128 - one
        ))
    );
    // The genesis state is still readable.
    assert_eq!(
        ok(call("chain_getBalance", json!([dev, "0x0"]))),
        json!("0x33b2e3c9fd0803ce8000000")
    );
    // The transaction and its receipt, as reference 11.1 shapes them (keys in order).
    let tx = call("chain_getTransactionByHash", json!([hash]));
    let text = tx["result"].to_string();
    let keys: Vec<&str> = [
        "blockHash",
        "blockNumber",
        "from",
        "gas",
        "gasPrice",
        "hash",
        "nonce",
        "senderTxHash",
        "signatures",
        "to",
        "transactionIndex",
        "type",
        "typeInt",
        "value",
    ]
    .to_vec();
    let positions: Vec<usize> = keys
        .iter()
        .map(|k| text.find(&format!("\"{k}\"")).unwrap())
        .collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]), "{text}");
    let tx = ok(tx);
    let block1 = ok(call("chain_getTransactionReceipt", json!([hash])))["blockHash"].clone();
    assert_eq!(tx["blockHash"], block1);
    assert_eq!(tx["blockNumber"], json!("0x1"));
    assert_eq!(tx["from"], json!(dev));
    assert_eq!(
        tx["to"],
        json!("0x3535353535353535353535353535353535353535")
    );
    assert_eq!(tx["value"], json!("0xde0b6b3a7640000"));
    assert_eq!(
        (tx["gas"].clone(), tx["gasPrice"].clone()),
        (json!("0x5208"), json!("0x5d21dba00"))
    );
    assert_eq!(
        (tx["hash"].clone(), tx["senderTxHash"].clone()),
        (hash.clone(), hash.clone())
    );
    assert_eq!(
        (tx["type"].clone(), tx["typeInt"].clone()),
        (json!("TxTypeValueTransfer"), json!(8))
    );
    assert!(tx.get("input").is_none());
    let v = tx["signatures"][0]["V"].as_str().unwrap();
    assert!(v == "0x7f3" || v == "0x7f4", "V carries chain id 1000: {v}");
    let receipt = ok(call("chain_getTransactionReceipt", json!([hash])));
    assert_eq!(receipt["status"], json!("0x1"));
    assert_eq!(receipt["gasUsed"], json!("0x5208"));
    assert_eq!(receipt["transactionHash"], hash);
    assert_eq!(receipt["logs"], json!([]));
    assert_eq!(receipt["contractAddress"], Value::Null);
    let unknown = format!("0x{}", "ab".repeat(32));
    assert_eq!(
        ok(call("chain_getTransactionByHash", json!([unknown]))),
        Value::Null
    );
    assert_eq!(
        ok(call("chain_getTransactionReceipt", json!([unknown]))),
        Value::Null
    );
    assert_eq!(
        err(call("chain_getTransactionByHash", json!(["0x1234"]))).0,
        -32602
    );

    // Block 1, by number and by hash, with hashes or whole transactions.
    let b1 = ok(call("chain_getBlockByNumber", json!(["0x1"])));
    assert_eq!(b1["hash"], block1);
    assert_eq!(b1["number"], json!("0x1"));
    assert_eq!(b1["transactions"], json!([hash]));
    assert_eq!(b1["reward"], json!(dev), "the validator");
    assert_eq!(b1["blockScore"], json!("0x1"));
    assert_eq!(b1["totalBlockScore"], json!("0x20001"));
    assert_eq!(b1["gasUsed"], json!("0x5208"));
    let b0 = ok(call("chain_getBlockByNumber", json!(["earliest"])));
    assert_eq!(b1["parentHash"], b0["hash"]);
    assert_eq!(
        (b0["number"].clone(), b0["blockScore"].clone()),
        (json!("0x0"), json!("0x20000"))
    );
    assert_eq!(b0["transactions"], json!([]));
    let full = ok(call("chain_getBlockByHash", json!([block1, true])));
    assert_eq!(full["transactions"][0]["hash"], hash);
    assert_eq!(full["transactions"][0]["blockHash"], block1);
    assert_eq!(full["size"], b1["size"]);
    assert_eq!(
        ok(call("chain_getBlockByNumber", json!(["latest"])))["hash"],
        block1
    );
    // A block the chain does not have is the reference's error, not null.
    assert_eq!(
        err(call("chain_getBlockByNumber", json!(["0x5"]))),
        (
            -32000,
            "the block does not exist (block number: 5)".to_string()
        )
    );
    assert_eq!(
        err(call(
            "chain_getBlockByHash",
            json!([format!("0x{}", "00".repeat(32))])
        )),
        (
            -32000,
            format!(
                "the block does not exist (block hash: 0x{})",
                "00".repeat(32)
            )
        )
    );
    assert_eq!(
        err(call("chain_getBlockByHash", json!([true]))),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Hash".to_string()
        )
    );
    // Surplus arguments: the declared ones are decoded first, in order, as the reference's
    // decoder reads them; then the surplus is refused.
    assert_eq!(
        err(call("chain_getHeaderByHash", json!([true, true]))),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal non-string into Go value of type common.Hash".to_string()
        )
    );
    assert_eq!(
        err(call("chain_getHeaderByHash", json!([block1, true]))),
        (-32602, "too many arguments, want at most 1".to_string())
    );
    assert_eq!(
        err(call("chain_getBalance", json!(["abcd", "latest", 1]))),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address".to_string()
        )
    );
    assert_eq!(
        err(call("chain_getBlockByNumber", json!(["0x1", "yes"]))),
        (
            -32602,
            "invalid argument 1: json: cannot unmarshal string into Go value of type bool"
                .to_string()
        )
    );

    // debug_getBlockRlp: the block's RLP (hex without 0x) decodes to the same hash.
    let rlp = ok(call("debug_getBlockRlp", json!([1])));
    let block =
        chain_node::types::block::Block::decode(&hex::decode(rlp.as_str().unwrap()).unwrap())
            .unwrap();
    assert_eq!(json!(format!("0x{}", hex::encode(block.hash()))), block1);
    assert_eq!(
        ok(call("debug_getBlockRlp", json!([block1]))),
        rlp,
        "by hash"
    );
    assert_eq!(
        err(call("debug_getBlockRlp", json!([9]))),
        (-32000, "block #9 not found".to_string())
    );
    let unknown = format!("0x{}", "ab".repeat(32));
    assert_eq!(
        err(call("debug_getBlockRlp", json!([unknown]))),
        (-32000, format!("block {unknown} not found"))
    );
    assert_eq!(
        err(call("debug_getBlockRlp", json!(["nine"]))),
        (
            -32602,
            "invalid argument 0: hex string without 0x prefix".to_string()
        )
    );
    // The pool is empty again.
    assert_eq!(
        ok(call("txpool_status", json!([]))),
        json!({"pending": "0x0", "queued": "0x0"})
    );
    assert_eq!(
        ok(call("txpool_content", json!([]))),
        json!({"pending": {}, "queued": {}})
    );

    // The same transaction again: its nonce is used.
    assert_eq!(
        err(call("chain_sendRawTransaction", json!([raw]))),
        (-32000, "nonce too low".to_string())
    );
}

/// `personal_sendValueTransfer` signs with the key file and submits: concurrent sends from one
/// account get consecutive nonces (the nonce lock), all are sealed, the balance is exact; each
/// bad call is refused before anything is signed or changed.
#[test]
fn personal_send_value_transfer() {
    let n = http_node(true, "chain,personal");
    let url = n.http.clone().unwrap();
    let dev = dev_account(&n);
    let to = "0x7777777777777777777777777777777777777777";
    let send = |args: Value, pass: &str| {
        http_call(&url, "personal_sendValueTransfer", json!([args, pass]))
    };
    let refusals = [
        (json!({"from": dev, "to": to}), ""),
        (json!({"from": dev, "value": "0x1"}), ""),
    ];
    for (args, pass) in refusals {
        assert_eq!(
            err(send(args.clone(), pass)),
            (
                -32000,
                "tx fields should be filled with valid values".to_string()
            ),
            "{args}"
        );
    }
    assert_eq!(
        err(send(
            json!({"from": dev, "to": to, "value": "0x1"}),
            "wrong"
        )),
        (
            -32000,
            "could not decrypt key with given passphrase".to_string()
        )
    );
    assert_eq!(
        err(send(
            json!({"from": "0x0000000000000000000000000000000000000009", "to": to, "value": "0x1"}),
            ""
        )),
        (-32000, "unknown account".to_string())
    );
    let (code, _) = err(send(json!({"from": dev, "to": to, "value": "12"}), ""));
    assert_eq!(code, -32602);
    assert_eq!(
        ok(http_call(
            &url,
            "chain_getTransactionCount",
            json!([dev, "pending"])
        )),
        json!("0x0")
    );

    // 8 clients x 5 sends, concurrently.
    let hashes: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(|| {
                    (0..5)
                        .map(|_| {
                            let r = send(json!({"from": dev, "to": to, "value": "0x3e8"}), "");
                            ok(r).as_str().unwrap().to_string()
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect()
    });
    let distinct: std::collections::HashSet<&String> = hashes.iter().collect();
    assert_eq!(distinct.len(), 40, "distinct hashes");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ok(http_call(&url, "chain_getTransactionCount", json!([dev]))) != json!("0x28") {
        assert!(
            std::time::Instant::now() < deadline,
            "not all 40 were sealed"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert_eq!(
        ok(http_call(&url, "chain_getBalance", json!([to]))),
        json!(format!("0x{:x}", 40 * 1000))
    );
}

/// Subscribers hear of a transaction entering the pool and of the block that seals it.
#[test]
fn subscriptions_hear_pending_transactions_and_new_heads() {
    let n = Node::start(&["--dev"]);
    let mut c = common::Ipc::connect(n.ipc.as_ref().unwrap());
    let heads = ok(c.call("chain_subscribe", json!(["newHeads"])));
    let pending = ok(c.call("chain_subscribe", json!(["newPendingTransactions"])));
    let dev = dev_account(&n);
    let to = "0x3535353535353535353535353535353535353535";
    c.send(
        &json!({"jsonrpc": "2.0", "id": 9, "method": "personal_sendValueTransfer",
                "params": [{"from": dev, "to": to, "value": "0x1"}, ""]})
        .to_string(),
    );
    let mut hash = None;
    let mut got_pending = None;
    let mut got_head = None;
    while hash.is_none() || got_pending.is_none() || got_head.is_none() {
        let v = c.recv().expect("the node keeps the connection");
        if v["id"] == json!(9) {
            hash = Some(ok(v));
        } else if v["params"]["subscription"] == pending {
            got_pending = Some(v["params"]["result"].clone());
        } else if v["params"]["subscription"] == heads {
            got_head = Some(v["params"]["result"].clone());
        }
    }
    assert_eq!(
        got_pending, hash,
        "the pending notification carries the hash"
    );
    let head = got_head.unwrap();
    assert_eq!(head["number"], json!("0x1"));
    assert_eq!(head["hash"].as_str().unwrap().len(), 66);
}

/// An account update to a public key through `personal_sendAccountUpdate`: afterwards a
/// transfer signed with the account's old key is refused, one signed with the new key is
/// sealed; malformed keys are refused before anything is signed.
#[test]
fn an_account_update_changes_who_may_sign() {
    let n = http_node(true, "chain,personal");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = dev_account(&n);
    let old_key = dev_key(&n);
    let new_key = SecretKey::from_slice(&[0x46; 32]).unwrap();
    // K1's public key, as transactions-and-blocks.md 7.3 serializes it.
    let public_k1 = "0x02a1024bc2a31265153f07e70e0bab08724e6b85e217f8cd628ceb62974247bb493382";
    let update = |key: &str| {
        call(
            "personal_sendAccountUpdate",
            json!([{"from": dev, "key": key}, ""]),
        )
    };
    assert_eq!(
        err(call(
            "personal_sendAccountUpdate",
            json!([{"from": dev}, ""])
        )),
        (
            -32000,
            "tx fields should be filled with valid values".to_string()
        )
    );
    assert_eq!(
        err(update("0x06c0")),
        (-32000, "undefined account key type".to_string())
    );
    assert_eq!(
        err(update("0x80")),
        (
            -32000,
            "AccountKeyNil cannot be initialized to an account".to_string()
        )
    );
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev, "pending"]))),
        json!("0x0")
    );

    assert_eq!(
        ok(call("chain_getAccountKey", json!([dev]))),
        json!({"keyType": 1, "key": {}})
    );
    let hash = ok(update(public_k1));
    wait_for_block(&call, "0x1");
    // Reference 7.3: K1's point.
    assert_eq!(
        ok(call("chain_getAccountKey", json!([dev]))),
        json!({"keyType": 2, "key": {
            "x": "0x4bc2a31265153f07e70e0bab08724e6b85e217f8cd628ceb62974247bb493382",
            "y": "0xce28cab79ad7119ee1ad3ebcdb98a16805211530ecc6cfefa1b88e6dff99232a"}})
    );
    assert_eq!(
        ok(call("chain_getAccountKey", json!([dev, "0x0"]))),
        json!({"keyType": 1, "key": {}}),
        "the key at genesis"
    );
    let receipt = ok(call("chain_getTransactionReceipt", json!([hash])));
    assert_eq!(
        receipt["gasUsed"],
        json!("0xa028"),
        "21000 + 20000 for the public key"
    );
    assert_eq!(receipt["key"], json!(public_k1));

    let to = Address([0x35; 20]);
    let price = 25_000_000_000u128;
    let with = |k: &SecretKey| {
        let mut tx = Transaction::of(ValueTransfer {
            nonce: 1,
            gas_price: u256(price),
            gas: 21_000,
            to,
            value: u256(5),
            from: Address::parse_lenient(&dev).unwrap(),
            signatures: Vec::new(),
        });
        tx.sign(k, 1000);
        format!("0x{}", hex::encode(tx.encode()))
    };
    assert_eq!(
        err(call("chain_sendRawTransaction", json!([with(&old_key)]))),
        (-32000, "invalid sender: invalid account key".to_string())
    );
    ok(call("chain_sendRawTransaction", json!([with(&new_key)])));
    wait_for_block(&call, "0x2");
    assert_eq!(
        ok(call(
            "chain_getBalance",
            json!(["0x3535353535353535353535353535353535353535"])
        )),
        json!("0x5")
    );
}

/// SIGKILL while transfers stream in, at several instants: the node reopens on the last
/// sealed block with a consistent state (the developer's nonce equals the transactions the
/// blocks hold), and keeps sealing.
#[test]
fn a_killed_node_reopens_consistent_and_keeps_sealing() {
    use std::collections::HashMap;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Mutex;
    let to = Address([0x35; 20]);
    let to_hex = format!("0x{}", hex::encode(to.0));
    let mut datadir = tempfile::tempdir().unwrap();
    let mut nonce = 0u64;
    // SIGKILL at many instants of a stream of sends: during admission, sealing and writing.
    for (round, wait_ms) in [15u64, 40, 65, 95, 130, 170, 220, 290]
        .into_iter()
        .enumerate()
    {
        let mut n = http_node_in(datadir, true, "chain");
        let url = n.http.clone().unwrap();
        let key = dev_key(&n);
        let stop = AtomicBool::new(false);
        let accepted: Mutex<Vec<Value>> = Mutex::new(Vec::new());
        // What the node reported sealed before it died: transaction hash -> block hash.
        let reported: Mutex<HashMap<String, Value>> = Mutex::new(HashMap::new());
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut next = nonce;
                while !stop.load(Ordering::Relaxed) {
                    let raw = transfer(&key, next, to, 1, 25_000_000_000, 1000);
                    let Some(v) = try_call(&url, "chain_sendRawTransaction", json!([raw])) else {
                        break; // the node died under it
                    };
                    match v.get("result") {
                        Some(h) => {
                            accepted.lock().unwrap().push(h.clone());
                            next += 1;
                        }
                        None => break,
                    }
                }
            });
            s.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let hashes: Vec<Value> = accepted.lock().unwrap().clone();
                    for h in hashes {
                        if reported.lock().unwrap().contains_key(h.as_str().unwrap()) {
                            continue;
                        }
                        let Some(r) = try_call(&url, "chain_getTransactionReceipt", json!([h]))
                        else {
                            return;
                        };
                        if let Some(block) = r.get("result").and_then(|r| r.get("blockHash")) {
                            reported
                                .lock()
                                .unwrap()
                                .insert(h.as_str().unwrap().to_string(), block.clone());
                        }
                    }
                }
            });
            std::thread::sleep(std::time::Duration::from_millis(wait_ms));
            let _ = n.child.kill(); // SIGKILL
            let _ = n.child.wait();
            stop.store(true, Ordering::Relaxed);
        });
        datadir = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
        drop(n);
        let n = http_node_in(datadir, true, "chain");
        let url = n.http.clone().unwrap();
        let call = |m: &str, p: Value| http_call(&url, m, p);
        // Every receipt reported before the kill is still there, in the same block.
        let reported = reported.into_inner().unwrap();
        for (hash, block) in &reported {
            let r = ok(call("chain_getTransactionReceipt", json!([hash])));
            assert_eq!(&r["blockHash"], block, "round {round}: receipt of {hash}");
        }
        // The blocks link up, each state is readable, and the head's state is what the
        // sealed transfers made it.
        let head = ok(call("chain_blockNumber", json!([])));
        let head =
            u64::from_str_radix(head.as_str().unwrap().trim_start_matches("0x"), 16).unwrap();
        let mut sealed = 0u64;
        let mut parent = ok(call("chain_getBlockByNumber", json!(["0x0"])))["hash"].clone();
        for b in 1..=head {
            let number = format!("0x{b:x}");
            let block = ok(call("chain_getBlockByNumber", json!([number])));
            assert_eq!(block["parentHash"], parent, "round {round}: block {b}");
            parent = block["hash"].clone();
            sealed += block["transactions"].as_array().unwrap().len() as u64;
            assert_eq!(
                ok(call("chain_getBalance", json!([to_hex, number]))),
                json!(format!("0x{sealed:x}")),
                "round {round}: the state of block {b}"
            );
        }
        assert!(sealed >= nonce + reported.len() as u64, "round {round}");
        assert_eq!(
            ok(call("chain_getTransactionCount", json!([dev_account(&n)]))),
            json!(format!("0x{sealed:x}")),
            "round {round}: the nonce agrees with the sealed blocks"
        );
        eprintln!(
            "round {round}: reopened at block {head} holding {sealed} transfers ({} reported sealed before the kill)",
            reported.len()
        );
        // It keeps sealing.
        nonce = sealed;
        ok(call(
            "chain_sendRawTransaction",
            json!([transfer(&key, nonce, to, 1, 25_000_000_000, 1000)]),
        ));
        nonce += 1;
        wait_for_block(&call, &format!("0x{:x}", head + 1));
        datadir = {
            let mut n = n;
            assert!(n.terminate(10).is_some_and(|s| s.success()));
            std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
        };
    }
}

/// One call over a fresh connection; `None` when the node is gone (no reply, or not JSON).
fn try_call(url: &str, method: &str, params: Value) -> Option<Value> {
    use std::io::{Read, Write};
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut c = std::net::TcpStream::connect(url.trim_start_matches("http://")).ok()?;
    let req = format!(
        "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    c.write_all(req.as_bytes()).ok()?;
    let mut reply = String::new();
    c.read_to_string(&mut reply).ok()?;
    let (_, json) = reply.split_once("\r\n\r\n")?;
    serde_json::from_str(json).ok()
}

/// `chaind init GENESIS.json` writes the genesis block of a file; a node started on that data
/// directory serves that chain; a bad file and another chain are refused, changing nothing.
#[test]
fn init_writes_a_genesis_that_the_node_serves() {
    let dir = tempfile::tempdir().unwrap();
    let funded = "0x1111111111111111111111111111111111111111";
    let good = common::write_file(
        dir.path(),
        "genesis.json",
        &format!(
            r#"{{"config": {{"chainId": 2024, "unitPrice": 1}}, "alloc": {{"{funded}": {{"balance": "0x64"}}}}}}"#
        ),
    );
    let dd = dir.path().join("dd");
    let out = chaind(&dd, &["init", good.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("Genesis block written hash=0x"));
    // Again with the same file: nothing to do, still fine.
    assert_eq!(
        chaind(&dd, &["init", good.to_str().unwrap()]).status.code(),
        Some(0)
    );

    let bad = common::write_file(
        dir.path(),
        "bad.json",
        r#"{"config": {"chainId": 0}, "alloc": {}}"#,
    );
    let out = chaind(&dd, &["init", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        format!(
            "error: {}: invalid genesis file: config.chainId: must be at least 1\n",
            bad.display()
        )
    );
    let other = common::write_file(dir.path(), "other.json", r#"{"alloc": {}}"#);
    let out = chaind(&dd, &["init", other.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("the chain database holds another chain"),
        "{out:?}"
    );

    let dd_dir = tempfile::TempDir::new_in(dir.path()).unwrap();
    std::fs::remove_dir(dd_dir.path()).unwrap();
    std::fs::rename(&dd, dd_dir.path()).unwrap();
    let n = http_node_in(dd_dir, false, "chain");
    let url = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(&url, "chain_chainID", json!([]))),
        json!("0x7e8")
    );
    assert_eq!(
        ok(http_call(&url, "chain_gasPrice", json!([]))),
        json!("0x1")
    );
    assert_eq!(
        ok(http_call(&url, "chain_getBalance", json!([funded]))),
        json!("0x64")
    );
    assert_eq!(
        ok(http_call(&url, "chain_blockNumber", json!([]))),
        json!("0x0")
    );
}

/// The block's time in hundredths of a second (`timestamp` and `timestampFoS`).
fn block_time(call: &dyn Fn(&str, Value) -> Value, number: &str) -> u64 {
    let b = ok(call("chain_getBlockByNumber", json!([number, false])));
    let q = |k: &str| u64::from_str_radix(b[k].as_str().unwrap().trim_start_matches("0x"), 16);
    q("timestamp").unwrap() * 100 + q("timestampFoS").unwrap()
}

/// `--dev.period 1`: a transaction arriving right after a block waits until a second has
/// passed since it; blocks are never closer than that.
#[test]
fn dev_period_spaces_the_blocks() {
    let mut args = http_args(true, "chain");
    args.extend(["--dev.period", "1"]);
    let n = Node::start(&args);
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let key = dev_key(&n);
    let to = Address([0x35; 20]);
    for (nonce, block) in [(0, "0x1"), (1, "0x2"), (2, "0x3")] {
        ok(call(
            "chain_sendRawTransaction",
            json!([transfer(&key, nonce, to, 1, 25_000_000_000, 1000)]),
        ));
        wait_for_block(&call, block);
    }
    // The first block comes as soon as something is pending; the next ones a period apart
    // (block times are in hundredths; the clock may have moved by at most one of them
    // between the sealer's check and the header's time).
    for (a, b) in [("0x1", "0x2"), ("0x2", "0x3")] {
        let gap = block_time(&call, b) - block_time(&call, a);
        assert!(gap >= 99, "blocks {a} and {b} are {gap} hundredths apart");
    }
}

/// `--dev` on a data directory written by `chaind init` seals with the validator its genesis
/// names, whose key the keystore holds with an empty passphrase; without that key the node
/// refuses to start, saying why.
#[test]
fn dev_seals_an_initialized_chain_with_its_validator() {
    let dir = tempfile::tempdir().unwrap();
    let dd = dir.path().join("dd");
    let ks = chain_node::keystore::Keystore::open(dd.join("keystore"))
        .unwrap()
        .with_scrypt(chain_node::keystore::keyfile::ScryptParams::LIGHT);
    let validator = ks.new_account("").unwrap().address;
    let sender = SecretKey::from_slice(&[0x46; 32]).unwrap();
    let genesis = |validator: &str| {
        format!(
            r#"{{"config": {{"chainId": 77, "unitPrice": 1}}, "validator": "{validator}", "alloc": {{"0x{}": {{"balance": "1000000"}}}}}}"#,
            hex::encode(sender.address().0)
        )
    };
    let file = common::write_file(dir.path(), "genesis.json", &genesis(&validator.to_string()));
    assert_eq!(
        chaind(&dd, &["init", file.to_str().unwrap()]).status.code(),
        Some(0)
    );

    // A validator whose key is not here: refused at start.
    let stranger = "0x2222222222222222222222222222222222222222";
    let other_dd = dir.path().join("other");
    let other = common::write_file(dir.path(), "other.json", &genesis(stranger));
    assert_eq!(
        chaind(&other_dd, &["init", other.to_str().unwrap()])
            .status
            .code(),
        Some(0)
    );
    let out = chaind(&other_dd, &["--dev", "--ipcdisable"]);
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("--dev: the genesis of this data directory (chaind init) names validator {stranger}, whose key must be in the keystore with an empty passphrase")),
        "{stderr}"
    );

    let dd_dir = tempfile::TempDir::new_in(dir.path()).unwrap();
    std::fs::remove_dir(dd_dir.path()).unwrap();
    std::fs::rename(&dd, dd_dir.path()).unwrap();
    let n = http_node_in(dd_dir, true, "chain");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let to = Address([0x35; 20]);
    let hash = ok(call(
        "chain_sendRawTransaction",
        json!([transfer(&sender, 0, to, 5, 1, 77)]),
    ));
    wait_for_block(&call, "0x1");
    let receipt = ok(call("chain_getTransactionReceipt", json!([hash])));
    assert_eq!(receipt["status"], json!("0x1"));
    let block = ok(call("chain_getBlockByNumber", json!(["0x1", false])));
    assert_eq!(block["reward"], json!(validator.to_string()));
    assert_eq!(
        ok(call(
            "chain_getBalance",
            json!([format!("0x{}", hex::encode(to.0))])
        )),
        json!("0x5")
    );
}

/// `admin_nodeInfo`: the id of the node key in the data directory (created 0600 on first
/// start, kept after), the record of the node's p2p listener, and the protocol entry
/// of the real chain, which follows the head. A node without a chain has no protocol entry;
/// a `--nodekey` file that does not exist stops the start.
#[test]
fn node_info_shows_the_node_key_and_the_chain() {
    let n = http_node(true, "admin,chain");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let nodekey = n.datadir.path().join("nodekey");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&nodekey).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let key = chain_node::p2p::identity::parse_key(&std::fs::read(&nodekey).unwrap()).unwrap();
    let id = hex::encode(key.public_xy());
    let genesis = ok(call("chain_getBlockByNumber", json!(["0x0"])))["hash"].clone();
    let info = ok(call("admin_nodeInfo", json!([])));
    let mut keys: Vec<&String> = info.as_object().unwrap().keys().collect();
    keys.sort();
    assert_eq!(
        keys,
        [
            "id",
            "ip",
            "kni",
            "listenAddr",
            "name",
            "ports",
            "protocols"
        ],
        "exactly the spec's members"
    );
    assert_eq!(info["id"], json!(id));
    // The record of the p2p listener (the test helper binds it to 127.0.0.1, any port).
    let kni = n
        .kni
        .clone()
        .expect("a node with a chain listens for peers");
    let port: u16 = kni
        .rsplit(':')
        .next()
        .unwrap()
        .split('?')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        info["kni"],
        json!(format!("kni://{id}@127.0.0.1:{port}?discport=0"))
    );
    assert_eq!(info["ports"], json!({"discovery": 0, "listener": port}));
    assert!(info["name"].as_str().unwrap().starts_with("chaind/v"));
    let entry = |info: &Value| info["protocols"]["istanbul"].clone();
    assert_eq!(
        entry(&info),
        json!({
            "network": 1000, "difficulty": 131072, "genesis": genesis, "head": genesis,
            "config": {"chainId": 1000, "isBFT": true, "istanbul": {"epoch": 604800, "policy": 0, "sub": 1},
                       "unitPrice": 25_000_000_000u64, "deriveShaImpl": 0}
        })
    );
    let key = dev_key(&n);
    ok(call(
        "chain_sendRawTransaction",
        json!([transfer(
            &key,
            0,
            Address([0x35; 20]),
            1,
            25_000_000_000,
            1000
        )]),
    ));
    wait_for_block(&call, "0x1");
    let head = ok(call("chain_getBlockByNumber", json!(["0x1"])))["hash"].clone();
    let info = ok(call("admin_nodeInfo", json!([])));
    assert_eq!(entry(&info)["head"], head);
    assert_eq!(entry(&info)["difficulty"], json!(131073));

    // The same key after a restart.
    let dir = {
        let mut n = n;
        assert!(n.terminate(10).is_some_and(|s| s.success()));
        std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
    };
    let n = http_node_in(dir, false, "admin");
    let info = ok(http_call(
        n.http.as_ref().unwrap(),
        "admin_nodeInfo",
        json!([]),
    ));
    assert_eq!(info["id"], json!(id));
    // That data directory's chain is --dev's: without --dev it is not served, so no entry.
    assert_eq!(info["protocols"], json!({}));

    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-key");
    let out = chaind(
        &dir.path().join("dd"),
        &["--ipcdisable", "--nodekey", missing.to_str().unwrap()],
    );
    assert_ne!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!("node key {}: ", missing.display())),
        "{out:?}"
    );
    assert!(!missing.exists());
}
