//! The chain of `chaind --dev` through the real binary: the genesis block, the funded
//! developer account, the chain queries, and a data directory that keeps its chain.

mod common;

use common::{err, http_call, ok, Node};
use serde_json::{json, Value};

fn dev_account(n: &Node) -> String {
    std::fs::read_to_string(n.datadir.path().join("dev-account"))
        .unwrap()
        .trim()
        .to_string()
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
    let n = Node::start(&["--dev", "--rpc", "--rpcapi", "chain"]);
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
    // A block the chain does not have: null.
    assert_eq!(
        ok(call("chain_getBalance", json!([dev, "0x1"]))),
        Value::Null
    );
    for bad in ["1", "0x", "0x01", "newest"] {
        let (code, msg) = err(call("chain_getBalance", json!([dev, bad])));
        assert_eq!(code, -32602, "{bad}");
        assert_eq!(
            msg,
            format!("invalid argument 1: a block is latest, earliest, pending or a 0x quantity, not {bad:?}")
        );
    }
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

#[test]
fn a_node_without_a_chain_says_so() {
    let n = Node::start(&["--rpc", "--rpcapi", "chain"]);
    let reply = http_call(n.http.as_ref().unwrap(), "chain_blockNumber", json!([]));
    assert_eq!(
        err(reply),
        (
            -32000,
            "this node has no chain: start it with --dev".to_string()
        )
    );
}
