//! The reference's node and chain read methods through `chaind --dev`: the node's facts
//! (`chain_chainId`, `chain_clientVersion`, `chain_protocolVersion`, `chain_sha3`,
//! `chain_syncing`, `chain_isParallelDBWrite`, `chain_isSenderTxHashIndexingEnabled`,
//! `chain_forkStatus`, `chain_rewardbase`, `net_networkID`, `net_peerCountByType`,
//! `admin_nodeConfig`), a block's transactions by count and index, the consensus methods
//! (`chain_getCouncil`, `chain_getCommittee`, their sizes, `chain_getBlockWithConsensusInfo*`)
//! and the recovery methods (`chain_recoverFromMessage`, `chain_recoverFromTransaction`).
//! Expected values come from outside the node: Keccak test vectors, signatures made with
//! `k256` (the second secp256k1 implementation), transactions the test sent, the EVM's and the
//! reference's constants. Every error path with its code and (where the text is the method's)
//! its message.

mod common;

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::block::BftExtra;
use chain_node::types::transaction::{AccountUpdate, Transaction, ValueTransfer};
use common::{
    chaind_init, dev_account, dev_key, err, funded_genesis, http_args, http_call, http_post, ok,
    transfer_tx, u256, validator_datadir, wait_receipt, wait_until, Ipc, Node, PRICE,
};
use serde_json::{json, Value};
use sha3::{Digest, Keccak256};

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn keccak(parts: &[&[u8]]) -> [u8; 32] {
    let mut h = Keccak256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// The address of a secret key, worked out with `k256`.
fn k256_address(key: &[u8; 32]) -> Address {
    let sk = k256::ecdsa::SigningKey::from_slice(key).unwrap();
    let point = sk.verifying_key().to_encoded_point(false);
    let h = keccak(&[&point.as_bytes()[1..]]);
    Address(h[12..].try_into().unwrap())
}

/// The compressed public key of a secret key, from `k256`.
fn k256_public(key: &[u8; 32]) -> [u8; 33] {
    let sk = k256::ecdsa::SigningKey::from_slice(key).unwrap();
    sk.verifying_key()
        .to_encoded_point(true)
        .as_bytes()
        .try_into()
        .unwrap()
}

/// `hash` signed with `k256`: r ‖ s ‖ v, v = 27 + the recovery id.
fn k256_sign(key: &[u8; 32], hash: &[u8; 32]) -> [u8; 65] {
    let sk = k256::ecdsa::SigningKey::from_slice(key).unwrap();
    let (sig, id) = sk.sign_prehash_recoverable(hash).unwrap();
    let mut out = [0u8; 65];
    out[..64].copy_from_slice(&sig.to_bytes());
    out[64] = 27 + id.to_byte();
    out
}

/// The signer of `hash` by `k256`'s recovery.
fn k256_recover(hash: &[u8; 32], sig: &[u8]) -> Address {
    let s = k256::ecdsa::Signature::from_slice(&sig[..64]).unwrap();
    let id = k256::ecdsa::RecoveryId::from_byte(sig[64] % 27).unwrap();
    let vk = k256::ecdsa::VerifyingKey::recover_from_prehash(hash, &s, id).unwrap();
    let point = vk.to_encoded_point(false);
    Address(keccak(&[&point.as_bytes()[1..]])[12..].try_into().unwrap())
}

/// The `result` of a call as the node wrote it (its keys in the node's order).
fn raw_result(url: &str, method: &str, params: Value) -> String {
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let (status, text) = http_post(url, &body);
    assert_eq!(status, 200, "{text}");
    text.trim_end()
        .strip_prefix(r#"{"jsonrpc":"2.0","id":1,"result":"#)
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or_else(|| panic!("not a result: {text}"))
        .to_string()
}

/// The top-level keys of a JSON object's text, in their order.
fn keys(text: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(text).unwrap();
    // serde_json keeps the order of the text (the crate's `preserve_order`).
    v.as_object().unwrap().keys().cloned().collect()
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

/// An error's code and whether its message holds `part`.
fn fails(v: Value, code: i64, part: &str) {
    let (c, m) = err(v);
    assert_eq!(c, code, "{m}");
    assert!(m.contains(part), "{m:?} lacks {part:?}");
}

const FFF: &str = "0xffffffff";

#[test]
fn node_and_chain_facts() {
    let mut args = vec![
        "--dev",
        "--chainid",
        "2019",
        "--networkid",
        "77",
        "--state.trie-cache-limit",
        "64",
    ];
    args.extend(http_args("chain,net"));
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    // The chain id of --chainid, either spelling; surplus parameters are ignored.
    assert_eq!(ok(call("chain_chainId", json!([]))), json!("0x7e3"));
    assert_eq!(ok(call("chain_chainId", json!(["abcd"]))), json!("0x7e3"));
    assert_eq!(ok(call("chain_chainID", json!([]))), json!("0x7e3"));
    assert_eq!(
        ok(call("chain_clientVersion", json!(["abcd"]))),
        json!(format!(
            "chaind/v{}/{}-{}/rust",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH
        ))
    );
    // istanbul/65.
    assert_eq!(ok(call("chain_protocolVersion", json!([]))), json!("0x41"));
    // Keccak-256 test vectors: "" and "abc".
    assert_eq!(
        ok(call("chain_sha3", json!(["0x"]))),
        json!("0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470")
    );
    assert_eq!(
        ok(call("chain_sha3", json!(["0x616263"]))),
        json!("0x4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45")
    );
    fails(
        call("chain_sha3", json!([])),
        -32602,
        "missing value for required argument 0",
    );
    fails(
        call("chain_sha3", json!(["data"])),
        -32602,
        "hex string without 0x prefix",
    );
    // One node, no peers: not syncing.
    assert_eq!(ok(call("chain_syncing", json!([]))), json!(false));
    assert_eq!(ok(call("chain_syncing", json!(["abcd"]))), json!(false));
    assert_eq!(ok(call("chain_isParallelDBWrite", json!([]))), json!(false));
    assert_eq!(
        ok(call("chain_isSenderTxHashIndexingEnabled", json!(["abcd"]))),
        json!(true)
    );
    // The dev account is the validator: the rewardbase of what it seals.
    let dev = dev_account(&node);
    assert_eq!(ok(call("chain_rewardbase", json!([]))), json!(dev));
    // The forks: the reference's Rules as a Go map (keys in byte order).
    let status = raw_result(&url, "chain_forkStatus", json!(["latest"]));
    assert_eq!(
        status,
        r#"{"ChainID":2019,"IsCancun":true,"IsDragon":false,"IsEthTxType":true,"IsIstanbul":true,"IsKIP103":false,"IsKore":true,"IsLondon":true,"IsMagma":false,"IsRandao":false,"IsShanghai":true}"#
    );
    assert_eq!(
        ok(call("chain_forkStatus", json!(["0x0"]))),
        serde_json::from_str::<Value>(&status).unwrap()
    );
    fails(
        call("chain_forkStatus", json!([])),
        -32602,
        "missing value for required argument 0",
    );
    fails(
        call("chain_forkStatus", json!(["num"])),
        -32602,
        "hex string without 0x prefix",
    );
    let (code, msg) = err(call("chain_forkStatus", json!([FFF])));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the block does not exist (block number: 4294967295)"
        )
    );
    // net: the id of --networkid as a number; no peers.
    assert_eq!(ok(call("net_networkID", json!(["abcd"]))), json!(77));
    assert_eq!(ok(call("net_version", json!([]))), json!("77"));
    assert_eq!(
        ok(call("net_peerCountByType", json!([]))),
        json!({"total": 0})
    );

    // admin over IPC: the configuration in the reference's member names, in its order.
    let mut ipc = Ipc::connect(node.ipc.as_ref().unwrap());
    let config = ok(ipc.call("admin_nodeConfig", json!([])));
    assert_eq!(
        config,
        json!({
            "NetworkId": 77,
            "SyncMode": "full",
            "NoPruning": true,
            "WorkerDisable": false,
            "SenderTxHashIndexing": true,
            "ParallelDBWrite": false,
            "TrieNodeCacheConfig": {
                "CacheType": "LocalCache",
                "LocalCacheSizeMiB": 64,
                "FastCacheFileDir": node.datadir.path().join("fastcache").display().to_string(),
                "FastCacheSavePeriod": 0
            },
            "GasPrice": 25_000_000_000u64,
            "Rewardbase": dev,
            "Istanbul": {"BlockPeriod": 0, "ProposerPolicy": 0, "Epoch": 604_800, "SubGroupSize": 1},
            "DisableUnsafeDebug": false
        })
    );
    let order: Vec<String> = config.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        order,
        [
            "NetworkId",
            "SyncMode",
            "NoPruning",
            "WorkerDisable",
            "SenderTxHashIndexing",
            "ParallelDBWrite",
            "TrieNodeCacheConfig",
            "GasPrice",
            "Rewardbase",
            "Istanbul",
            "DisableUnsafeDebug"
        ]
    );
    // Not offered over HTTP (chain,net only).
    assert_eq!(err(call("admin_nodeConfig", json!([]))).0, -32601);
}

/// A node that does not seal (no --dev, on a chain of `chaind init`) has no rewardbase, says
/// so in its configuration, and still answers the chain facts.
#[test]
fn a_follower_has_no_rewardbase_and_counts_its_peers_by_type() {
    let dir = tempfile::tempdir().unwrap();
    let (vdir, v_key) = validator_datadir(dir.path());
    let fdir = tempfile::TempDir::new_in(dir.path()).unwrap();
    let (genesis, _) = funded_genesis(dir.path(), v_key.address(), 1000);
    chaind_init(vdir.path(), &genesis);
    chaind_init(fdir.path(), &genesis);
    let start = |dd: tempfile::TempDir, dev: bool| {
        let mut args: Vec<&str> = http_args("admin,chain,net").to_vec();
        if dev {
            args.push("--dev");
        }
        Node::start_in(dd, &args)
    };
    let validator = start(vdir, true);
    let follower = start(fdir, false);
    let (vurl, furl) = (
        validator.http.clone().unwrap(),
        follower.http.clone().unwrap(),
    );
    let (code, msg) = err(http_call(&furl, "chain_rewardbase", json!([])));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "rewardbase must be explicitly specified")
    );
    assert_eq!(
        ok(http_call(&vurl, "chain_rewardbase", json!([]))),
        json!(hex0x(&v_key.address().0))
    );
    let config = ok(http_call(&furl, "admin_nodeConfig", json!([])));
    assert_eq!(config["WorkerDisable"], json!(true));
    assert_eq!(config["Rewardbase"], json!(hex0x(&[0; 20])));
    // Connected: one peer each; this node's protocol exchanges no node types.
    let kni = validator.kni.clone().unwrap();
    assert_eq!(
        ok(http_call(&furl, "admin_addPeer", json!([kni]))),
        json!(true)
    );
    wait_until("the peers to connect", &follower, || {
        ok(http_call(&furl, "net_peerCountByType", json!([]))) == json!({"total": 1, "unknown": 1})
            && ok(http_call(&vurl, "net_peerCountByType", json!([])))
                == json!({"total": 1, "unknown": 1})
    });
    assert_eq!(
        raw_result(&furl, "net_peerCountByType", json!([])),
        r#"{"total":1,"unknown":1}"#
    );
    // In sync (both at genesis): not syncing.
    assert_eq!(
        ok(http_call(&furl, "chain_syncing", json!([]))),
        json!(false)
    );
}

/// Sends `raws` in one HTTP batch: their hashes, in order.
fn send_batch(url: &str, raws: &[String]) -> Vec<Value> {
    let body: Vec<Value> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| {
            json!({"jsonrpc": "2.0", "id": i, "method": "chain_sendRawTransaction", "params": [r]})
        })
        .collect();
    let (status, text) = http_post(url, &Value::Array(body).to_string());
    assert_eq!(status, 200, "{text}");
    let mut replies: Vec<Value> = serde_json::from_str(&text).unwrap();
    replies.sort_by_key(|r| r["id"].as_u64().unwrap());
    replies.into_iter().map(ok).collect()
}

fn raw(tx: &Transaction) -> String {
    hex0x(&tx.encode())
}

#[test]
fn block_transactions_by_count_and_index_and_consensus_information() {
    // Blocks at least 2 s apart: two transactions sent together land in one block.
    let mut args = vec!["--dev", "--dev.period", "2"];
    args.extend(http_args("chain"));
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let key = dev_key(&node);
    let to = Address([0x77; 20]);
    let first = ok(call(
        "chain_sendRawTransaction",
        json!([raw(&transfer_tx(&key, 0, to, 1, PRICE, 1000))]),
    ));
    let r1 = wait_receipt(&url, &first);
    let hashes = send_batch(
        &url,
        &[
            raw(&transfer_tx(&key, 1, to, 2, PRICE, 1000)),
            raw(&transfer_tx(&key, 2, to, 3, PRICE, 1000)),
        ],
    );
    let r2 = wait_receipt(&url, &hashes[0]);
    let r3 = wait_receipt(&url, &hashes[1]);
    assert_eq!(
        r2["blockHash"], r3["blockHash"],
        "sent together, sealed together"
    );
    let (hash2, number2) = (r2["blockHash"].clone(), r2["blockNumber"].clone());
    assert_ne!(r1["blockHash"], hash2);

    // Counts: by number (a quantity, a tag) and by hash.
    assert_eq!(
        ok(call(
            "chain_getBlockTransactionCountByNumber",
            json!([number2])
        )),
        json!("0x2")
    );
    assert_eq!(
        ok(call("chain_getBlockTransactionCountByHash", json!([hash2]))),
        json!("0x2")
    );
    assert_eq!(
        ok(call(
            "chain_getBlockTransactionCountByHash",
            json!([r1["blockHash"]])
        )),
        json!("0x1")
    );
    assert_eq!(
        ok(call(
            "chain_getBlockTransactionCountByNumber",
            json!(["earliest"])
        )),
        json!("0x0")
    );
    assert_eq!(
        ok(call(
            "chain_getBlockTransactionCountByNumber",
            json!(["latest"])
        )),
        json!("0x2")
    );
    let missing_hash = format!("0x{}", "ff".repeat(32));
    let (code, msg) = err(call(
        "chain_getBlockTransactionCountByHash",
        json!([missing_hash]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!("the block does not exist (block hash: {missing_hash})")
        )
    );
    let (code, msg) = err(call("chain_getBlockTransactionCountByNumber", json!([FFF])));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the block does not exist (block number: 4294967295)"
        )
    );
    fails(
        call(
            "chain_getBlockTransactionCountByNumber",
            json!(["blocknumber"]),
        ),
        -32602,
        "hex string without 0x prefix",
    );
    fails(
        call("chain_getBlockTransactionCountByHash", json!([1234])),
        -32602,
        "invalid argument 0: ",
    );
    fails(
        call("chain_getBlockTransactionCountByHash", json!([])),
        -32602,
        "missing value for required argument 0",
    );

    // Transactions by block and index: the ones sent, in the order they were sealed.
    let by_number = |i: &str| {
        ok(call(
            "chain_getTransactionByBlockNumberAndIndex",
            json!([number2, i]),
        ))
    };
    let by_hash = |i: &str| {
        ok(call(
            "chain_getTransactionByBlockHashAndIndex",
            json!([hash2, i]),
        ))
    };
    let t0 = by_number("0x0");
    let t1 = by_number("0x1");
    assert_eq!(t0["hash"], hashes[0]);
    assert_eq!(t1["hash"], hashes[1]);
    assert_eq!(t1["transactionIndex"], json!("0x1"));
    assert_eq!(t1["blockHash"], hash2);
    assert_eq!(t1["value"], json!("0x3"));
    assert_eq!(t1["gasPrice"], json!("0x5d21dba00"));
    assert_eq!(by_hash("0x0"), t0);
    assert_eq!(by_hash("0x1"), t1);
    assert_eq!(by_number("0x2"), Value::Null, "past the last: null");
    assert_eq!(by_hash("0xffffffffffffffff"), Value::Null);
    assert_eq!(
        ok(call(
            "chain_getTransactionByBlockHashAndIndex",
            json!([r1["blockHash"], "0x0"])
        ))["hash"],
        first
    );
    let (code, msg) = err(call(
        "chain_getTransactionByBlockNumberAndIndex",
        json!([FFF, "0x0"]),
    ));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the block does not exist (block number: 4294967295)"
        )
    );
    let (code, msg) = err(call(
        "chain_getTransactionByBlockHashAndIndex",
        json!([missing_hash, "0x0"]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!("the block does not exist (block hash: {missing_hash})")
        )
    );
    fails(
        call(
            "chain_getTransactionByBlockHashAndIndex",
            json!(["txhash", "0x0"]),
        ),
        -32602,
        "invalid argument 0: ",
    );
    // The index, as the reference's hexutil.Uint decodes it.
    for (index, text) in [
        (json!("1"), "invalid argument 1: json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Uint"),
        (json!(1), "invalid argument 1: json: cannot unmarshal non-string into Go value of type hexutil.Uint"),
        (json!("0x01"), "invalid argument 1: json: cannot unmarshal hex number with leading zero digits into Go value of type hexutil.Uint"),
        (json!("0x10000000000000000"), "invalid argument 1: json: cannot unmarshal hex number > 64 bits into Go value of type hexutil.Uint"),
    ] {
        let (code, msg) = err(call(
            "chain_getTransactionByBlockNumberAndIndex",
            json!([number2, index]),
        ));
        assert_eq!((code, msg.as_str()), (-32602, text));
    }
    fails(
        call(
            "chain_getTransactionByBlockNumberAndIndex",
            json!([number2]),
        ),
        -32602,
        "missing value for required argument 1",
    );

    // The council and committee: the one validator, at every block.
    let dev = json!(dev_account(&node));
    for tag in [json!("latest"), json!("0x0"), number2.clone(), Value::Null] {
        assert_eq!(
            ok(call("chain_getCouncil", json!([tag]))),
            json!([dev]),
            "{tag}"
        );
        assert_eq!(ok(call("chain_getCommittee", json!([tag]))), json!([dev]));
        assert_eq!(ok(call("chain_getCouncilSize", json!([tag]))), json!(1));
        assert_eq!(ok(call("chain_getCommitteeSize", json!([tag]))), json!(1));
    }
    assert_eq!(ok(call("chain_getCommittee", json!([]))), json!([dev]));
    assert_eq!(ok(call("chain_getCouncilSize", json!([]))), json!(1));
    for m in [
        "chain_getCouncil",
        "chain_getCouncilSize",
        "chain_getCommittee",
        "chain_getCommitteeSize",
    ] {
        let (code, msg) = err(call(m, json!([FFF])));
        assert_eq!((code, msg.as_str()), (-32000, "unknown block"), "{m}");
        let (code, msg) = err(call(m, json!(["pending"])));
        assert_eq!(
            (code, msg.as_str()),
            (-32000, "pending is not allowed"),
            "{m}"
        );
        fails(
            call(m, json!(["tag"])),
            -32602,
            "hex string without 0x prefix",
        );
    }

    // The block with its consensus information: the block's fields, its receipts as
    // transactions, who proposed and committed it; a Go map (keys in byte order).
    let text = raw_result(
        &url,
        "chain_getBlockWithConsensusInfoByHash",
        json!([hash2]),
    );
    let info: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(keys(&text), sorted(keys(&text)));
    let block = ok(call("chain_getBlockByHash", json!([hash2, false])));
    for (k, v) in block.as_object().unwrap() {
        if k != "transactions" {
            assert_eq!(info[k], *v, "{k}");
        }
    }
    let mut expected_keys: Vec<String> = block.as_object().unwrap().keys().cloned().collect();
    for k in [
        "committee",
        "committers",
        "sigHash",
        "proposer",
        "round",
        "originProposer",
    ] {
        expected_keys.push(k.to_string());
    }
    assert_eq!(sorted(keys(&text)), sorted(expected_keys));
    assert_eq!(
        info["transactions"],
        json!([r2, r3]),
        "the receipts, in order"
    );
    assert_eq!(info["proposer"], dev);
    assert_eq!(info["originProposer"], dev);
    assert_eq!(info["committee"], json!([dev]));
    assert_eq!(info["committers"], json!([dev]));
    assert_eq!(info["round"], json!(0));
    // sigHash: the hash whose Keccak the proposer's seal signs, checked with k256.
    let sig_hash: [u8; 32] = hex::decode(&info["sigHash"].as_str().unwrap()[2..])
        .unwrap()
        .try_into()
        .unwrap();
    let extra = hex::decode(&info["extraData"].as_str().unwrap()[2..]).unwrap();
    let extra = BftExtra::decode(&extra).unwrap();
    assert_eq!(
        hex0x(&k256_recover(&keccak(&[&sig_hash]), &extra.seal).0),
        dev.as_str().unwrap()
    );
    assert_eq!(
        ok(call(
            "chain_getBlockWithConsensusInfoByNumber",
            json!([number2])
        )),
        info
    );
    // Genesis: no consensus information.
    let genesis = ok(call(
        "chain_getBlockWithConsensusInfoByNumber",
        json!(["earliest"]),
    ));
    assert_eq!(genesis["number"], json!("0x0"));
    assert_eq!(genesis["transactions"], json!([]));
    assert_eq!(genesis["committee"], Value::Null);
    assert_eq!(genesis["committers"], Value::Null);
    assert_eq!(genesis["proposer"], json!(hex0x(&[0; 20])));
    assert_eq!(genesis["originProposer"], json!(hex0x(&[0; 20])));
    assert_eq!(genesis["sigHash"], json!(hex0x(&[0; 32])));
    assert_eq!(genesis["round"], json!(0));
    for params in [json!([]), json!([null])] {
        let (code, msg) = err(call("chain_getBlockWithConsensusInfoByNumber", params));
        assert_eq!(
            (code, msg.as_str()),
            (-32000, "block number is not assigned")
        );
    }
    let (code, msg) = err(call(
        "chain_getBlockWithConsensusInfoByNumber",
        json!(["pending"]),
    ));
    assert_eq!((code, msg.as_str()), (-32000, "pending is not allowed"));
    let (code, msg) = err(call(
        "chain_getBlockWithConsensusInfoByNumber",
        json!([FFF]),
    ));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the block does not exist (block number: 4294967295)"
        )
    );
    fails(
        call("chain_getBlockWithConsensusInfoByNumber", json!(["tag"])),
        -32602,
        "hex string without 0x prefix",
    );
    let (code, msg) = err(call(
        "chain_getBlockWithConsensusInfoByHash",
        json!([missing_hash]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!("the block does not exist (block hash: {missing_hash})")
        )
    );
    fails(
        call("chain_getBlockWithConsensusInfoByHash", json!([1234])),
        -32602,
        "invalid argument 0: ",
    );
    fails(
        call("chain_getBlockWithConsensusInfoByHash", json!([])),
        -32602,
        "missing value for required argument 0",
    );
}

/// The raw value transfer of `amount` from `key`'s account.
fn transfer(key: &SecretKey, nonce: u64, to: Address, amount: u128, chain_id: u64) -> String {
    raw(&transfer_tx(key, nonce, to, amount, PRICE, chain_id))
}

#[test]
fn recovering_signers_of_messages_and_transactions() {
    let mut args = vec!["--dev"];
    args.extend(http_args("chain"));
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = dev_key(&node);

    // A message signed (with k256) by an account that does not exist yet: its key is the
    // legacy one, whose only member is the address itself.
    let (k1, k2) = ([0x51u8; 32], [0x52u8; 32]);
    let (a1, a2) = (k256_address(&k1), k256_address(&k2));
    let message = b"deadbeef message";
    let len = message.len().to_string();
    let chain_hash = keccak(&[b"\x19Chain Signed Message:\n", len.as_bytes(), message]);
    let eth_hash = keccak(&[b"\x19Ethereum Signed Message:\n", len.as_bytes(), message]);
    let by_k1 = hex0x(&k256_sign(&k1, &chain_hash));
    let eth_by_k1 = hex0x(&k256_sign(&k1, &eth_hash));
    let recover = |address: &Address, sig: &str, block: &str| {
        call(
            "chain_recoverFromMessage",
            json!([hex0x(&address.0), hex0x(message), sig, block]),
        )
    };
    assert_eq!(ok(recover(&a1, &by_k1, "latest")), json!(hex0x(&a1.0)));
    assert_eq!(ok(recover(&a1, &eth_by_k1, "latest")), json!(hex0x(&a1.0)));
    let (code, msg) = err(recover(&a2, &by_k1, "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "Invalid signature"));

    // A1's key replaced by K2's public key (an account update, signed by K1): now K2
    // signs for A1 (the signer, K2's address, is answered) and K1 no longer does; at the
    // block before the update, K1 still did.
    let fund = ok(call(
        "chain_sendRawTransaction",
        json!([transfer(&dev, 0, a1, 10u128.pow(18), 1000)]),
    ));
    let funded = wait_receipt(&url, &fund);
    let k1_key = SecretKey::from_slice(&k1).unwrap();
    let mut update = Transaction::of(AccountUpdate {
        nonce: 0,
        gas_price: u256(PRICE),
        gas: 100_000,
        from: a1,
        key: AccountKey::Public(k256_public(&k2)),
        signatures: Vec::new(),
    });
    update.sign(&k1_key, 1000);
    let updated = wait_receipt(
        &url,
        &ok(call("chain_sendRawTransaction", json!([raw(&update)]))),
    );
    assert_eq!(updated["status"], json!("0x1"));
    let by_k2 = hex0x(&k256_sign(&k2, &chain_hash));
    assert_eq!(ok(recover(&a1, &by_k2, "latest")), json!(hex0x(&a2.0)));
    let (code, msg) = err(recover(&a1, &by_k1, "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "Invalid signature"));
    let before = funded["blockNumber"].as_str().unwrap().to_string();
    assert_eq!(ok(recover(&a1, &by_k1, &before)), json!(hex0x(&a1.0)));

    // The message checks, in the reference's order.
    let (code, msg) = err(recover(&a1, "0xff", "latest"));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "signature must be 65 bytes long")
    );
    let mut bad_v = k256_sign(&k1, &chain_hash);
    bad_v[64] = 1;
    let (code, msg) = err(recover(&a1, &hex0x(&bad_v), "latest"));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "invalid signature (V is not 27 or 28)")
    );
    let (code, msg) = err(recover(&a1, &by_k1, FFF));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the header does not exist (block number: 4294967295)"
        )
    );
    // r = 0: recovers under neither prefix.
    let mut zero_r = k256_sign(&k1, &chain_hash);
    zero_r[..32].fill(0);
    let (code, msg) = err(recover(&a1, &hex0x(&zero_r), "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "recovery failed"));
    fails(
        call(
            "chain_recoverFromMessage",
            json!([hex0x(&a1.0), "0xdeadbeef", 123, "latest"]),
        ),
        -32602,
        "invalid argument 2: ",
    );
    fails(
        call(
            "chain_recoverFromMessage",
            json!([hex0x(&a1.0), "0xdeadbeef", "num", "latest"]),
        ),
        -32602,
        "hex string without 0x prefix",
    );
    fails(
        call(
            "chain_recoverFromMessage",
            json!([hex0x(&a1.0), "0x", by_k1]),
        ),
        -32602,
        "missing value for required argument 3",
    );

    // Transactions: the sender of a transfer (its `from`) and of a legacy transaction (its
    // signer), checked against the sender's key at the block.
    let recover_tx =
        |raw: &str, block: &str| call("chain_recoverFromTransaction", json!([raw, block]));
    let dev_address = json!(dev_account(&node));
    let later = transfer(&dev, 5, a2, 1, 1000);
    assert_eq!(ok(recover_tx(&later, "latest")), dev_address);
    let k2_key = SecretKey::from_slice(&k2).unwrap();
    let legacy = common::contracts::raw_legacy(&k2_key, 0, Some(a1), 0, Vec::new(), 21_000);
    assert_eq!(ok(recover_tx(&legacy, "latest")), json!(hex0x(&a2.0)));
    // From A1, signed by K1: valid before the update, not after.
    let from_a1 = transfer(&k1_key, 1, a2, 1, 1000);
    assert_eq!(ok(recover_tx(&from_a1, &before)), json!(hex0x(&a1.0)));
    let (code, msg) = err(recover_tx(&from_a1, "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "invalid account key"));
    // From A1 signed by K2, its key now; signed by both, too many signatures for a public key.
    let mut by_new_key = Transaction::of(ValueTransfer {
        nonce: 1,
        gas_price: u256(PRICE),
        gas: 21_000,
        to: a2,
        value: u256(1),
        from: a1,
        signatures: Vec::new(),
    });
    by_new_key.sign(&k2_key, 1000);
    assert_eq!(
        ok(recover_tx(&raw(&by_new_key), "latest")),
        json!(hex0x(&a1.0))
    );
    let mut by_both = transfer_tx(&k1_key, 1, a2, 1, PRICE, 1000);
    by_both.sign(&k2_key, 1000);
    let (code, msg) = err(recover_tx(&raw(&by_both), "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "invalid account key"));
    // A legacy transaction needs a legacy key.
    let legacy_from_a1 = common::contracts::raw_legacy(&k1_key, 1, Some(a2), 0, Vec::new(), 21_000);
    assert_eq!(
        ok(recover_tx(&legacy_from_a1, &before)),
        json!(hex0x(&a1.0))
    );
    let (code, msg) = err(recover_tx(&legacy_from_a1, "latest"));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "a legacy transaction must be with a legacy account key"
        )
    );
    // Signed for another chain.
    let (code, msg) = err(recover_tx(&transfer(&dev, 5, a2, 1, 1001), "latest"));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "invalid chain id for signer")
    );
    // The suite's malformed inputs: a truncated head, and a legacy transaction with V 1,
    // R 0, S 0.
    let (code, msg) = err(recover_tx("0xffff", "latest"));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "rlp: value size exceeds available input length")
    );
    let (code, msg) = err(recover_tx(
        "0xec0c850ba43b74008261a8949957dfd92e4b70f91131c573293343bc5f21f2158829a2241af62c000080018080",
        "latest",
    ));
    assert_eq!(
        (code, msg.as_str()),
        (-32000, "invalid transaction v, r, s values")
    );
    let (code, msg) = err(recover_tx("0x", "latest"));
    assert_eq!((code, msg.as_str()), (-32000, "Empty input"));
    let (code, msg) = err(recover_tx(&later, FFF));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "the header does not exist (block number: 4294967295)"
        )
    );
    fails(
        recover_tx("num", "latest"),
        -32602,
        "hex string without 0x prefix",
    );
    fails(
        call("chain_recoverFromTransaction", json!([123, "latest"])),
        -32602,
        "invalid argument 0: ",
    );
    fails(
        call("chain_recoverFromTransaction", json!([later])),
        -32602,
        "missing value for required argument 1",
    );
    fails(
        call("chain_recoverFromTransaction", json!([])),
        -32602,
        "missing value for required argument 0",
    );
}
