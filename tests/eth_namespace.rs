//! The `eth` namespace through the binary, checked against the node's own `chain_` answers
//! and against what Ethereum's encodings say independently of the node: an EIP-1559
//! transaction signed here is sent in Ethereum's own encoding and comes back under the
//! Keccak-256 of those bytes; the Ethereum-shaped block, transaction and receipt agree field
//! by field with `chain_getBlockByNumber` and `chain_getTransactionReceipt` of the same block;
//! what the chain lacks is `null` (where `chain_` answers an error); refusals carry the
//! reference's texts and change nothing; a state override of `eth_call` runs code that is not
//! on the chain and leaves the chain as it was.

mod common;

use chain_node::crypto::Address;
use chain_node::types::ethereum::Ethereum;
use chain_node::types::transaction::Transaction;
use common::keyfile::keccak;
use common::{
    dev_account, dev_key, err, http_args, http_call, ok, quantity_of, u256, wait_receipt, ws_args,
    Node, PRICE,
};
use serde_json::{json, Value};

fn node() -> (Node, String) {
    let mut args = vec!["--dev", "--ipcdisable"];
    args.extend(http_args("chain,eth,net,rpc,personal,txpool"));
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    (node, url)
}

fn call(url: &str, method: &str, params: Value) -> Value {
    ok(http_call(url, method, params))
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

#[test]
fn an_eip1559_transaction_in_ethereums_encoding_and_its_block_agree_with_chain() {
    let (n, url) = node();
    let dev = dev_account(&n).to_lowercase();
    let key = dev_key(&n);
    let chain_id = quantity_of(&call(&url, "eth_chainId", json!([]))) as u64;
    assert_eq!(
        call(&url, "eth_chainId", json!([])),
        call(&url, "chain_chainId", json!([]))
    );
    let to = Address([0x36; 20]);
    let mut tx = Transaction::Ethereum(Ethereum {
        dynamic: true,
        chain_id,
        nonce: 0,
        gas_tip_cap: u256(PRICE),
        gas_fee_cap: u256(PRICE),
        gas: 21_000,
        to: Some(to),
        value: u256(7),
        input: Vec::new(),
        access_list: Vec::new(),
        signature: None,
    });
    tx.sign(&key, chain_id);
    let Transaction::Ethereum(e) = &tx else {
        unreachable!()
    };
    let raw = e.encode_ethereum();
    assert_eq!(
        raw[0], 0x02,
        "Ethereum's typed encoding starts with its type"
    );
    let hash = call(&url, "eth_sendRawTransaction", json!([hex0x(&raw)]));
    // Ethereum's transaction hash: Keccak-256 of the typed encoding.
    assert_eq!(hash, json!(hex0x(&keccak(&[&raw]))));
    let chain_receipt = wait_receipt(&url, &hash);

    // The raw bytes come back in Ethereum's encoding, without the reference's envelope.
    assert_eq!(
        call(&url, "eth_getRawTransactionByHash", json!([hash])),
        json!(hex0x(&raw))
    );

    let t = call(&url, "eth_getTransactionByHash", json!([hash]));
    let number = chain_receipt["blockNumber"].clone();
    assert_eq!(t["type"], "0x2");
    assert_eq!(t["from"], json!(dev));
    assert_eq!(t["to"], json!(hex0x(&to.0)));
    assert_eq!(t["value"], "0x7");
    assert_eq!(t["nonce"], "0x0");
    assert_eq!(t["gas"], "0x5208");
    assert_eq!(quantity_of(&t["maxFeePerGas"]), PRICE);
    assert_eq!(quantity_of(&t["maxPriorityFeePerGas"]), PRICE);
    assert_eq!(quantity_of(&t["gasPrice"]), PRICE);
    assert_eq!(t["chainId"], json!(format!("0x{chain_id:x}")));
    assert_eq!(t["accessList"], json!([]));
    assert_eq!(t["blockNumber"], number);
    assert_eq!(t["transactionIndex"], "0x0");
    let sig = tx.signatures()[0];
    assert!(t["v"] == "0x0" || t["v"] == "0x1", "{t}");
    assert_eq!(
        t["r"],
        json!(format!("0x{}", hex::encode(sig.r).trim_start_matches('0')))
    );

    let r = call(&url, "eth_getTransactionReceipt", json!([hash]));
    assert_eq!(r["status"], "0x1");
    assert_eq!(r["type"], "0x2");
    assert_eq!(r["gasUsed"], "0x5208");
    assert_eq!(r["cumulativeGasUsed"], "0x5208");
    assert_eq!(quantity_of(&r["effectiveGasPrice"]), PRICE);
    assert_eq!(r["contractAddress"], Value::Null);
    for k in [
        "blockHash",
        "blockNumber",
        "transactionHash",
        "transactionIndex",
        "from",
        "to",
        "logs",
        "logsBloom",
    ] {
        assert_eq!(r[k], chain_receipt[k], "{k}");
    }

    // The block in Ethereum's shape is the chain's block.
    let eth_block = call(&url, "eth_getBlockByNumber", json!([number, false]));
    let block = call(&url, "chain_getBlockByNumber", json!([number, false]));
    for (ours, theirs) in [
        ("hash", "hash"),
        ("parentHash", "parentHash"),
        ("stateRoot", "stateRoot"),
        ("transactionsRoot", "transactionsRoot"),
        ("receiptsRoot", "receiptsRoot"),
        ("logsBloom", "logsBloom"),
        ("number", "number"),
        ("timestamp", "timestamp"),
        ("gasUsed", "gasUsed"),
        ("size", "size"),
        ("transactions", "transactions"),
        ("difficulty", "blockScore"),
        ("totalDifficulty", "totalBlockScore"),
        ("miner", "reward"),
    ] {
        assert_eq!(eth_block[ours], block[theirs], "{ours} / {theirs}");
    }
    assert_eq!(eth_block["transactions"], json!([hash]));
    assert_eq!(eth_block["baseFeePerGas"], "0x0");
    assert_eq!(
        eth_block["gasLimit"],
        json!(format!("0x{:x}", 999_999_999_999u64))
    );
    assert_eq!(eth_block["nonce"], "0x0000000000000000");
    assert_eq!(eth_block["extraData"], "0x");
    assert_eq!(eth_block["uncles"], json!([]));
    // Keccak-256 of RLP([]), the uncles hash of a block without uncles.
    assert_eq!(eth_block["sha3Uncles"], json!(hex0x(&keccak(&[&[0xc0]]))));
    let by_hash = call(&url, "eth_getBlockByHash", json!([block["hash"], true]));
    assert_eq!(by_hash["transactions"][0], t);
    let header = call(&url, "eth_getHeaderByNumber", json!([number]));
    assert_eq!(header["hash"], block["hash"]);
    assert_eq!(header["stateRoot"], block["stateRoot"]);

    // The fee history: this block used 21,000 of the reference's upper gas limit, its tip
    // was the unit price; no base fee.
    let fh = call(&url, "eth_feeHistory", json!([1, number, [50]]));
    assert_eq!(fh["oldestBlock"], number);
    assert_eq!(fh["baseFeePerGas"], json!(["0x0", "0x0"]));
    assert_eq!(fh["reward"], json!([[format!("0x{PRICE:x}")]]));
    // The genesis holds no transaction: its tips are 0.
    let genesis = call(&url, "eth_feeHistory", json!([1, "0x0", [50]]));
    assert_eq!(genesis["reward"], json!([["0x0"]]));
    assert_eq!(genesis["gasUsedRatio"], json!([0.0]));
    assert_eq!(
        fh["gasUsedRatio"][0].as_f64().unwrap(),
        21_000.0 / 999_999_999_999.0
    );
    assert_eq!(
        call(&url, "eth_maxPriorityFeePerGas", json!([])),
        json!(format!("0x{PRICE:x}"))
    );
}

#[test]
fn what_the_chain_lacks_is_null_and_refusals_change_nothing() {
    let (n, url) = node();
    let dev = dev_account(&n).to_lowercase();
    let unknown = format!("0x{}", "ab".repeat(32));
    for (method, params) in [
        ("eth_getBlockByNumber", json!(["0x1000", false])),
        ("eth_getBlockByHash", json!([unknown, false])),
        ("eth_getHeaderByNumber", json!(["0x1000"])),
        ("eth_getHeaderByHash", json!([unknown])),
        ("eth_getTransactionByHash", json!([unknown])),
        ("eth_getTransactionReceipt", json!([unknown])),
        (
            "eth_getTransactionByBlockNumberAndIndex",
            json!(["latest", "0x5"]),
        ),
        ("eth_getBlockTransactionCountByNumber", json!(["0x1000"])),
        (
            "eth_getUncleByBlockNumberAndIndex",
            json!(["latest", "0x0"]),
        ),
        ("eth_getUncleCountByBlockHash", json!([unknown])),
    ] {
        assert_eq!(
            call(&url, method, params.clone()),
            Value::Null,
            "{method} {params}"
        );
    }
    // Where chain_ answers the reference's error.
    assert_eq!(
        err(http_call(
            &url,
            "chain_getBlockByNumber",
            json!(["0x1000", false])
        )),
        (
            -32000,
            "the block does not exist (block number: 4096)".into()
        )
    );
    assert_eq!(
        call(&url, "eth_getUncleCountByBlockNumber", json!(["latest"])),
        "0x0"
    );
    assert_eq!(call(&url, "eth_mining", json!([])), false);
    assert_eq!(call(&url, "eth_hashrate", json!([])), "0x0");
    assert_eq!(
        err(http_call(&url, "eth_getWork", json!([]))),
        (-32000, "no mining work available yet".into())
    );
    assert_eq!(
        err(http_call(&url, "eth_sendRawTransaction", json!(["0x"]))),
        (-32000, "Empty input".into())
    );
    let balance = call(&url, "eth_getBalance", json!([dev, "latest"]));
    let head = call(&url, "eth_blockNumber", json!([]));
    ok(http_call(
        &url,
        "personal_unlockAccount",
        json!([dev, "", 0]),
    ));
    // Before Magma an EIP-1559 transaction carries the unit price as both caps: a default
    // filled beside another price is refused by the argument rules, two given by the pool.
    assert_eq!(
        err(http_call(
            &url,
            "eth_sendTransaction",
            json!([{"from": dev, "to": dev, "maxPriorityFeePerGas": "0x1"}])
        )),
        (
            -32000,
            format!("only {PRICE:x} is allowed to be used as maxFeePerGas and maxPriorityPerGas")
        )
    );
    assert_eq!(
        err(http_call(
            &url,
            "eth_sendTransaction",
            json!([{"from": dev, "to": dev, "maxFeePerGas": "0x1", "maxPriorityFeePerGas": "0x1"}])
        )),
        (
            -32000,
            "invalid gas tip cap. It must be set to the same value as gas unit price".into()
        )
    );
    assert_eq!(
        err(http_call(
            &url,
            "eth_signTransaction",
            json!([{"from": dev, "to": dev, "gas": "0x5208"}])
        )),
        (
            -32000,
            "missing gasPrice or maxFeePerGas/maxPriorityFeePerGas".into()
        )
    );
    assert_eq!(
        err(http_call(
            &url,
            "eth_sendTransaction",
            json!([{"from": dev}])
        )),
        (-32000, "contract creation without any data provided".into())
    );
    // The fee history's refusals, with the reference's texts.
    for (params, text) in [
        (
            json!([2, "latest", [101]]),
            "invalid reward percentile: 101.000000".to_string(),
        ),
        (
            json!([2, "latest", [50, 20]]),
            "invalid reward percentile: #0:50.000000 > #1:20.000000".to_string(),
        ),
        (
            json!([2, "0x1000", []]),
            format!(
                "request beyond head block: requested 4096, head {}",
                quantity_of(&head)
            ),
        ),
    ] {
        assert_eq!(
            err(http_call(&url, "eth_feeHistory", params.clone())),
            (-32000, text),
            "{params}"
        );
    }
    assert_eq!(
        err(http_call(
            &url,
            "eth_feeHistory",
            json!(["0x", "latest", []])
        )),
        (-32602, "invalid argument 0: hex string \"0x\"".into())
    );
    assert_eq!(
        call(&url, "eth_getBalance", json!([dev, "latest"])),
        balance
    );
    assert_eq!(call(&url, "eth_blockNumber", json!([])), head);
    assert_eq!(call(&url, "txpool_status", json!([]))["pending"], "0x0");
}

#[test]
fn state_overrides_run_code_the_chain_does_not_have_and_keep_nothing() {
    let (_n, url) = node();
    let target = format!("0x{}", "42".repeat(20));
    // PUSH1 0x2a PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN: returns the word 42.
    let code = "0x602a60005260206000f3";
    let args = json!({"to": target});
    let out = call(
        &url,
        "eth_call",
        json!([args, "latest", {target.clone(): {"code": code}}]),
    );
    assert_eq!(out, json!(format!("0x{:064x}", 42)));
    // SLOAD of slot 1 returned: PUSH1 1 SLOAD PUSH1 0 MSTORE PUSH1 32 PUSH1 0 RETURN.
    let reader = "0x60015460005260206000f3";
    let slot1 = format!("0x{:064x}", 1);
    let value = format!("0x{:064x}", 0x99);
    let out = call(
        &url,
        "eth_call",
        json!([args, "latest", {target.clone(): {"code": reader, "stateDiff": {slot1.clone(): value}}}]),
    );
    assert_eq!(out, json!(value));
    assert_eq!(
        err(http_call(
            &url,
            "eth_call",
            json!([args, "latest", {target.clone(): {"code": reader, "state": {}, "stateDiff": {}}}])
        )),
        (
            -32000,
            format!(
                "account 0x{} has both 'state' and 'stateDiff'",
                "42".repeat(20)
            )
        )
    );
    // Nothing of it is on the chain.
    assert_eq!(call(&url, "eth_getCode", json!([target, "latest"])), "0x");
    assert_eq!(call(&url, "eth_call", json!([args, "latest"])), "0x");
}

/// An EIP-2930 transaction's access list is warmed and charged when its code runs, as the
/// reference's state transition does (EIP-2929/2930): a Token transfer listing the token and
/// the two balance slots it touches uses 2,400 + 2 x 1,900 gas more for the list and 2 x
/// 2,000 less for the two slots it no longer reads cold, than the same transfer without.
#[test]
fn an_access_list_is_warmed_and_charged_in_a_block() {
    use common::contracts::{addr_word, compiled, deploy, uint_word};
    let (n, url) = node();
    let key = dev_key(&n);
    let chain_id = quantity_of(&call(&url, "eth_chainId", json!([]))) as u64;
    let token = compiled("Token");
    let at = deploy(&url, &key, 0, token.with_args(&[uint_word(1_000_000)]));
    let holder = key.address();
    let to = Address([0x77; 20]);
    // Token.sol's balanceOf mapping is its slot 1: keccak(pad(holder) ++ pad(1)).
    let slot = |a: &Address| keccak(&[&addr_word(a), &uint_word(1)]);
    let transfer = token.call_data("transfer(address,uint256)", &[addr_word(&to), uint_word(5)]);
    let send = |nonce: u64, list: Vec<chain_node::types::ethereum::AccessTuple>| {
        let mut tx = Transaction::Ethereum(Ethereum {
            dynamic: false,
            chain_id,
            nonce,
            gas_tip_cap: u256(PRICE),
            gas_fee_cap: u256(PRICE),
            gas: 200_000,
            to: Some(at),
            value: [0; 32],
            input: transfer.clone(),
            access_list: list,
            signature: None,
        });
        tx.sign(&key, chain_id);
        let Transaction::Ethereum(e) = &tx else {
            unreachable!()
        };
        let hash = call(
            &url,
            "eth_sendRawTransaction",
            json!([hex0x(&e.encode_ethereum())]),
        );
        let r = wait_receipt(&url, &hash);
        assert_eq!(r["status"], "0x1", "{r}");
        quantity_of(&r["gasUsed"])
    };
    // The first transfer makes the recipient's balance slot non-zero; the two measured ones
    // then write the same kind of slots.
    send(1, Vec::new());
    let without = send(2, Vec::new());
    let with = send(
        3,
        vec![chain_node::types::ethereum::AccessTuple {
            address: at,
            storage_keys: vec![slot(&holder), slot(&to)],
        }],
    );
    assert_eq!(with, without + 2_400 + 2 * 1_900 - 2 * 2_000);
}

/// `eth_subscribe`: `newHeads` sends each new header in Ethereum's shape, the same object
/// `eth_getHeaderByHash` answers; `newPendingTransactions` the hash of each transaction
/// entering the pool; the notifications name the `eth` module.
#[test]
fn eth_subscriptions_send_ethereum_shaped_heads() {
    use common::ws;
    let mut args = vec!["--dev", "--ipcdisable"];
    args.extend(http_args("chain,eth,rpc"));
    args.extend(ws_args("eth"));
    let n = Node::start(&args);
    let url = n.http.clone().unwrap();
    let mut socket = ws::connect(n.ws.as_ref().unwrap());
    let heads = ok(ws::call(
        &mut socket,
        1,
        "eth_subscribe",
        json!(["newHeads"]),
    ));
    let pending = ok(ws::call(
        &mut socket,
        2,
        "eth_subscribe",
        json!(["newPendingTransactions"]),
    ));
    let key = dev_key(&n);
    let raw =
        common::contracts::raw_legacy(&key, 0, Some(Address([0x55; 20])), 1, Vec::new(), 21_000);
    let hash = call(&url, "eth_sendRawTransaction", json!([raw]));
    let (mut head, mut announced) = (None, None);
    while head.is_none() || announced.is_none() {
        let note = ws::read(&mut socket);
        assert_eq!(note["method"], "eth_subscription", "{note}");
        let sub = &note["params"]["subscription"];
        if *sub == heads {
            head = Some(note["params"]["result"].clone());
        } else if *sub == pending {
            announced = Some(note["params"]["result"].clone());
        }
    }
    assert_eq!(announced.unwrap(), hash);
    let head = head.unwrap();
    let receipt = wait_receipt(&url, &hash);
    assert_eq!(head["hash"], receipt["blockHash"]);
    assert_eq!(
        head,
        call(&url, "eth_getHeaderByHash", json!([head["hash"]]))
    );
    assert_eq!(
        head["gasLimit"],
        json!(format!("0x{:x}", 999_999_999_999u64))
    );
    assert_eq!(head["miner"], json!(dev_account(&n).to_lowercase()));
}
