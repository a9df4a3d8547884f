//! Logs of contracts through the real binary: receipts' logs (and their place in the
//! block), `chain_getLogs`, the three kinds of polling filter over several polls,
//! `chain_getBlockReceipts`, the header methods, the `logs` subscription over WebSocket and
//! IPC, and every error path with the reference's code and text (the suite's cases of
//! klaytn-contracts.md section 5).
//!
//! The node seals at most every 2 s (`--dev.period 2`): transactions sent together just
//! after a block was sealed land in one block, so logs from several transactions share it.

mod common;

use chain_node::crypto::{keccak256, Address, SecretKey};
use common::contracts::{addr_word, compiled, create_address, deploy, raw_legacy, uint_word};
use common::{dev_key, err, http_call, http_post, ok, wait_receipt, Node};
use serde_json::{json, Value};

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn q(n: u64) -> String {
    format!("0x{n:x}")
}

fn event(signature: &str) -> String {
    hex0x(&keccak256(signature.as_bytes()))
}

/// Several calls in one HTTP batch: the results, in call order.
fn batch(url: &str, calls: &[(&str, Value)]) -> Vec<Value> {
    let body: Vec<Value> = calls
        .iter()
        .enumerate()
        .map(|(i, (m, p))| json!({"jsonrpc": "2.0", "id": i, "method": m, "params": p}))
        .collect();
    let (status, text) = http_post(url, &Value::Array(body).to_string());
    assert_eq!(status, 200, "{text}");
    let mut replies: Vec<Value> = serde_json::from_str(&text).unwrap();
    replies.sort_by_key(|r| r["id"].as_u64().unwrap());
    replies
}

use common::ws::{call as ws_call, connect as ws_connect, read as ws_read};

/// The contracts and accounts of the scenario.
struct World {
    node: Node,
    url: String,
    key: SecretKey,
    dev: Address,
    nonce: u64,
    counter: Address,
    token: Address,
    caller: Address,
}

const ALICE: Address = Address([0xa1; 20]);
const BOB: Address = Address([0xb0; 20]);

impl World {
    fn call(&self, method: &str, params: Value) -> Value {
        http_call(&self.url, method, params)
    }

    /// A signed legacy call of `to` with `data`, at the next nonce.
    fn tx(&mut self, to: Address, data: Vec<u8>) -> String {
        let raw = raw_legacy(&self.key, self.nonce, Some(to), 0, data, 300_000);
        self.nonce += 1;
        raw
    }

    /// Sends `raws` in one batch and waits for every receipt; the receipts, which must
    /// all be in one block.
    fn send_together(&self, raws: &[String]) -> Vec<Value> {
        let calls: Vec<(&str, Value)> = raws
            .iter()
            .map(|r| ("chain_sendRawTransaction", json!([r])))
            .collect();
        let hashes: Vec<Value> = batch(&self.url, &calls).into_iter().map(ok).collect();
        let receipts: Vec<Value> = hashes.iter().map(|h| wait_receipt(&self.url, h)).collect();
        for r in &receipts {
            assert_eq!(r["status"], json!("0x1"), "{r}");
            assert_eq!(r["blockHash"], receipts[0]["blockHash"], "one block: {r}");
        }
        receipts
    }
}

fn token_transfer(to: &Address, amount: u128) -> Vec<u8> {
    compiled("Token").call_data(
        "transfer(address,uint256)",
        &[addr_word(to), uint_word(amount)],
    )
}

fn increment() -> Vec<u8> {
    compiled("Counter").call_data("increment()", &[])
}

fn call_increment() -> Vec<u8> {
    compiled("Caller").call_data("callIncrement()", &[])
}

/// Block 1: Counter. Block 2: Token (its constructor logs the mint) and Caller.
fn world(extra: &[&str]) -> World {
    let mut args = vec!["--dev", "--dev.period", "2"];
    args.extend(common::http_args("chain"));
    args.extend(common::ws_args("chain"));
    args.extend(extra);
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    let key = dev_key(&node);
    let dev = key.address();
    let counter = deploy(&url, &key, 0, compiled("Counter").bytecode);
    let token = create_address(&dev, 1);
    let caller = create_address(&dev, 2);
    let mut w = World {
        node,
        url,
        key,
        dev,
        nonce: 3,
        counter,
        token,
        caller,
    };
    let token_code = compiled("Token").with_args(&[uint_word(1_000_000)]);
    let caller_code = compiled("Caller").with_args(&[addr_word(&counter)]);
    let raws = [
        raw_legacy(&w.key, 1, None, 0, token_code, 5_000_000),
        raw_legacy(&w.key, 2, None, 0, caller_code, 5_000_000),
    ];
    let r = w.send_together(&raws);
    assert_eq!(r[0]["contractAddress"], json!(hex0x(&token.0)));
    assert_eq!(r[1]["contractAddress"], json!(hex0x(&caller.0)));
    assert_eq!(r[0]["blockNumber"], json!("0x2"));
    w.nonce = 3;
    w
}

/// The log object a receipt or a query should give.
fn log_object(
    address: &Address,
    topics: &[String],
    data: &[u8],
    receipt: &Value,
    log_index: u64,
) -> Value {
    json!({
        "address": hex0x(&address.0),
        "topics": topics,
        "data": hex0x(data),
        "blockNumber": receipt["blockNumber"],
        "transactionHash": receipt["transactionHash"],
        "transactionIndex": receipt["transactionIndex"],
        "blockHash": receipt["blockHash"],
        "logIndex": q(log_index),
        "removed": false,
    })
}

fn word_hex(w: [u8; 32]) -> String {
    hex0x(&w)
}

/// Receipts carry their logs with the block-wide index; the block's receipts, getLogs by
/// address, topics, range and hash agree with them; the header methods describe the block.
#[test]
fn receipts_logs_and_queries() {
    let mut w = world(&[]);
    let transfer = event("Transfer(address,address,uint256)");
    let incremented = event("Incremented(uint256,address)");
    let called = event("CalledIncrement(address,uint256)");
    // Block 2's mint, seen in the token's deploy receipt.
    let mint = ok(w.call(
        "chain_getLogs",
        json!([{"address": hex0x(&w.token.0), "fromBlock": "earliest"}]),
    ));
    assert_eq!(mint.as_array().unwrap().len(), 1);
    assert_eq!(
        mint[0]["topics"],
        json!([transfer, word_hex([0; 32]), word_hex(addr_word(&w.dev))])
    );
    assert_eq!(mint[0]["data"], json!(word_hex(uint_word(1_000_000))));
    assert_eq!(
        (
            &mint[0]["blockNumber"],
            &mint[0]["logIndex"],
            &mint[0]["transactionIndex"]
        ),
        (&json!("0x2"), &json!("0x0"), &json!("0x0"))
    );

    // Block 3: a token transfer, an increment, an increment through Caller (two logs from
    // two addresses), a value transfer (no log), another token transfer.
    let (counter, caller, token) = (w.counter, w.caller, w.token);
    let raws = [
        w.tx(token, token_transfer(&ALICE, 10)),
        w.tx(counter, increment()),
        w.tx(caller, call_increment()),
        w.tx(ALICE, vec![]),
        w.tx(token, token_transfer(&BOB, 5)),
    ];
    let r = w.send_together(&raws);
    let expected = [
        vec![log_object(
            &token,
            &[
                transfer.clone(),
                word_hex(addr_word(&w.dev)),
                word_hex(addr_word(&ALICE)),
            ],
            &uint_word(10),
            &r[0],
            0,
        )],
        vec![log_object(
            &counter,
            std::slice::from_ref(&incremented),
            &[uint_word(1), addr_word(&w.dev)].concat(),
            &r[1],
            1,
        )],
        vec![
            log_object(
                &counter,
                std::slice::from_ref(&incremented),
                &[uint_word(2), addr_word(&caller)].concat(),
                &r[2],
                2,
            ),
            log_object(
                &caller,
                &[called.clone(), word_hex(addr_word(&counter))],
                &uint_word(2),
                &r[2],
                3,
            ),
        ],
        vec![],
        vec![log_object(
            &token,
            &[
                transfer.clone(),
                word_hex(addr_word(&w.dev)),
                word_hex(addr_word(&BOB)),
            ],
            &uint_word(5),
            &r[4],
            4,
        )],
    ];
    for (i, (receipt, logs)) in r.iter().zip(&expected).enumerate() {
        assert_eq!(receipt["transactionIndex"], json!(q(i as u64)));
        assert_eq!(&receipt["logs"], &json!(logs), "receipt {i}");
        let empty_bloom = receipt["logsBloom"] == json!(hex0x(&[0; 256]));
        assert_eq!(empty_bloom, logs.is_empty(), "receipt {i}");
    }
    let block3 = r[0]["blockHash"].clone();
    let all3: Vec<Value> = expected.iter().flatten().cloned().collect();

    // chain_getBlockReceipts: by hash, number, JSON integer, object forms, latest.
    for by in [
        json!([block3]),
        json!(["0x3"]),
        json!([3]),
        json!(["latest"]),
        json!([{"blockHash": block3}]),
        json!([{"blockNumber": "0x3"}]),
    ] {
        assert_eq!(
            ok(w.call("chain_getBlockReceipts", by.clone())),
            json!(r),
            "{by}"
        );
    }
    assert_eq!(
        ok(w.call("chain_getBlockReceipts", json!(["earliest"]))),
        json!([])
    );
    let one = ok(w.call(
        "chain_getTransactionReceipt",
        json!([r[2]["transactionHash"]]),
    ));
    assert_eq!(one, r[2]);

    // chain_getLogs by range, hash, address, topics.
    let logs = |criteria: Value| ok(w.call("chain_getLogs", json!([criteria])));
    assert_eq!(
        logs(json!({"fromBlock": "0x3", "toBlock": "0x3"})),
        json!(all3)
    );
    assert_eq!(logs(json!({})), json!(all3), "latest..latest by default");
    assert_eq!(logs(json!({"blockHash": block3})), json!(all3));
    assert_eq!(logs(json!({"fromBlock": "0x1", "toBlock": "0x2"})), mint);
    let everything = logs(json!({"fromBlock": "earliest", "toBlock": "latest"}));
    assert_eq!(everything.as_array().unwrap().len(), 6);
    assert_eq!(
        logs(json!({"fromBlock": 0, "address": [hex0x(&token.0), hex0x(&caller.0)]})),
        json!([mint[0], all3[0], all3[3], all3[4]])
    );
    assert_eq!(
        logs(json!({"fromBlock": "0x0", "topics": [transfer, null, word_hex(addr_word(&BOB))]})),
        json!([all3[4]])
    );
    assert_eq!(
        logs(json!({"fromBlock": "0x0", "topics": [[incremented, called]]})),
        json!([all3[1], all3[2], all3[3]])
    );
    assert_eq!(
        logs(json!({"fromBlock": "0x0", "address": hex0x(&counter.0), "topics": [null, null]})),
        json!([]),
        "more topic positions than Incremented has"
    );
    assert_eq!(
        logs(json!({"topics": [[transfer, null]], "address": hex0x(&counter.0)})),
        json!([all3[1], all3[2]]),
        "a null among alternatives is a wildcard"
    );
    assert_eq!(logs(json!({"fromBlock": "0xffffffff"})), json!([]));
    assert_eq!(
        logs(json!({"fromBlock": "0x3", "toBlock": "0x1"})),
        json!([])
    );
    assert_eq!(
        err(w.call(
            "chain_getLogs",
            json!([{"fromBlock": "0x2", "toBlock": "0x9"}])
        )),
        (-32000, "the header does not exist (block number: 4)".into())
    );
    // Headers: by number (tag, quantity, JSON integer) and by hash; what the block says.
    let header = ok(w.call("chain_getHeaderByNumber", json!(["0x3"])));
    for by in [json!(["latest"]), json!([3]), json!(["pending"])] {
        assert_eq!(ok(w.call("chain_getHeaderByNumber", by)), header);
    }
    assert_eq!(ok(w.call("chain_getHeaderByHash", json!([block3]))), header);
    let block = ok(w.call("chain_getBlockByNumber", json!(["0x3"])));
    for k in [
        "blockScore",
        "extraData",
        "gasUsed",
        "governanceData",
        "hash",
        "logsBloom",
        "number",
        "parentHash",
        "receiptsRoot",
        "reward",
        "stateRoot",
        "timestamp",
        "timestampFoS",
        "transactionsRoot",
        "voteData",
    ] {
        assert_eq!(header[k], block[k], "{k}");
    }
    assert_eq!(header.as_object().unwrap().len(), 15, "{header}");
    assert_eq!(header["hash"], block3);
    let genesis = ok(w.call("chain_getHeaderByNumber", json!(["earliest"])));
    assert_eq!(genesis["number"], json!("0x0"));
    assert_eq!(genesis["logsBloom"], json!(hex0x(&[0; 256])));
    let (_, text) = http_post(
        &w.url,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "chain_getHeaderByHash", "params": [block3]})
            .to_string(),
    );
    let keys = [
        "blockScore",
        "extraData",
        "gasUsed",
        "governanceData",
        "hash",
        "logsBloom",
        "number",
        "parentHash",
        "receiptsRoot",
        "reward",
        "stateRoot",
        "timestamp\"",
        "timestampFoS",
        "transactionsRoot",
        "voteData",
    ];
    let at: Vec<usize> = keys
        .iter()
        .map(|k| text.find(&format!("\"{k}")).unwrap())
        .collect();
    assert!(at.windows(2).all(|p| p[0] < p[1]), "alphabetical: {text}");
}

fn changes(w: &World, id: &Value) -> Value {
    ok(w.call("chain_getFilterChanges", json!([id])))
}

/// Each kind of filter over several polls: what came since the last poll, then nothing;
/// bounds of a log filter; getFilterLogs over its range; uninstalling.
#[test]
fn filters_over_several_polls() {
    let mut w = world(&[]);
    let transfer = event("Transfer(address,address,uint256)");
    let blocks = ok(w.call("chain_newBlockFilter", json!([])));
    let pending = ok(w.call("chain_newPendingTransactionFilter", json!([])));
    let tokens = ok(w.call("chain_newFilter", json!([{"address": hex0x(&w.token.0)}])));
    let to_bob = ok(w.call(
        "chain_newFilter",
        json!([{"fromBlock": "earliest", "topics": [transfer, null, word_hex(addr_word(&BOB))]}]),
    ));
    let up_to_3 = ok(w.call(
        "chain_newFilter",
        json!([{"fromBlock": "0x1", "toBlock": "0x3"}]),
    ));
    for id in [&blocks, &pending, &tokens, &to_bob, &up_to_3] {
        let s = id.as_str().unwrap();
        assert!(
            s.starts_with("0x") && s.len() <= 34 && !s[2..].starts_with('0'),
            "{s}"
        );
        assert_eq!(changes(&w, id), json!([]), "nothing happened yet");
    }

    // Block 3.
    let (token, counter) = (w.token, w.counter);
    let raws = [
        w.tx(token, token_transfer(&ALICE, 10)),
        w.tx(counter, increment()),
        w.tx(token, token_transfer(&BOB, 5)),
    ];
    let r = w.send_together(&raws);
    let hashes: Vec<Value> = r.iter().map(|r| r["transactionHash"].clone()).collect();
    let block3 = r[0]["blockHash"].clone();
    let logs3 = ok(w.call("chain_getLogs", json!([{"blockHash": block3}])));
    assert_eq!(logs3.as_array().unwrap().len(), 3);
    assert_eq!(changes(&w, &blocks), json!([block3]));
    assert_eq!(changes(&w, &pending), json!(hashes));
    assert_eq!(changes(&w, &tokens), json!([logs3[0], logs3[2]]));
    assert_eq!(changes(&w, &to_bob), json!([logs3[2]]));
    assert_eq!(changes(&w, &up_to_3), logs3);
    // Polled again at once: nothing new.
    for id in [&blocks, &pending, &tokens, &to_bob, &up_to_3] {
        assert_eq!(changes(&w, id), json!([]));
    }

    // Block 4: beyond up_to_3's range; no token log.
    let raws = [w.tx(counter, increment())];
    let r4 = w.send_together(&raws);
    let block4 = r4[0]["blockHash"].clone();
    assert_eq!(changes(&w, &blocks), json!([block4]));
    assert_eq!(changes(&w, &pending), json!([r4[0]["transactionHash"]]));
    assert_eq!(changes(&w, &tokens), json!([]));
    assert_eq!(changes(&w, &up_to_3), json!([]));

    // Blocks 5 and 6 before the next poll: both, in order.
    let raws = [w.tx(token, token_transfer(&BOB, 1))];
    let r5 = w.send_together(&raws);
    let raws = [w.tx(token, token_transfer(&BOB, 2))];
    let r6 = w.send_together(&raws);
    assert_eq!(
        changes(&w, &blocks),
        json!([r5[0]["blockHash"], r6[0]["blockHash"]])
    );
    let bob_logs = changes(&w, &to_bob);
    assert_eq!(bob_logs.as_array().unwrap().len(), 2);
    assert_eq!(bob_logs[0]["data"], json!(word_hex(uint_word(1))));
    assert_eq!(bob_logs[1]["data"], json!(word_hex(uint_word(2))));

    // getFilterLogs: the filter's whole range, not only what is new; not a poll.
    let all_to_bob = ok(w.call("chain_getFilterLogs", json!([to_bob])));
    assert_eq!(all_to_bob, json!([logs3[2], bob_logs[0], bob_logs[1]]));
    let in_range = ok(w.call("chain_getFilterLogs", json!([up_to_3])));
    let mint = ok(w.call(
        "chain_getLogs",
        json!([{"fromBlock": "0x2", "toBlock": "0x2"}]),
    ));
    assert_eq!(in_range[0], mint[0]);
    assert_eq!(in_range.as_array().unwrap().len(), 4);
    // A log filter with the default range (latest..latest) gets the head's logs.
    assert_eq!(
        ok(w.call("chain_getFilterLogs", json!([tokens]))),
        json!([r6[0]["logs"][0]])
    );
    assert_eq!(changes(&w, &to_bob), json!([]));

    // Uninstalled: gone.
    assert_eq!(
        ok(w.call("chain_uninstallFilter", json!([tokens]))),
        json!(true)
    );
    assert_eq!(
        ok(w.call("chain_uninstallFilter", json!([tokens]))),
        json!(false)
    );
    assert_eq!(
        err(w.call("chain_getFilterChanges", json!([tokens]))),
        (-32000, "filter not found".into())
    );
}

/// The `logs` subscription: one log object per notification, the same object the receipt
/// holds, only those the criteria match; over WebSocket and IPC.
#[test]
fn the_logs_subscription() {
    let mut w = world(&[]);
    let mut ws = ws_connect(w.node.ws.as_deref().unwrap());
    let counter_sub = ok(ws_call(
        &mut ws,
        1,
        "chain_subscribe",
        json!(["logs", {"address": hex0x(&w.counter.0)}]),
    ));
    let all_sub = ok(ws_call(&mut ws, 2, "chain_subscribe", json!(["logs", {}])));
    let mut ipc = common::Ipc::connect(w.node.ipc.as_ref().unwrap());
    let called = event("CalledIncrement(address,uint256)");
    let ipc_sub = ok(ipc.call("chain_subscribe", json!(["logs", {"topics": [called]}])));

    let (token, counter, caller) = (w.token, w.counter, w.caller);
    let raws = [
        w.tx(token, token_transfer(&ALICE, 10)),
        w.tx(caller, call_increment()),
        w.tx(counter, increment()),
    ];
    let r = w.send_together(&raws);
    let receipt_logs: Vec<Value> = r
        .iter()
        .flat_map(|r| r["logs"].as_array().unwrap().clone())
        .collect();
    assert_eq!(receipt_logs.len(), 4);
    let mut got_counter = Vec::new();
    let mut got_all = Vec::new();
    while got_counter.len() < 2 || got_all.len() < 4 {
        let n = ws_read(&mut ws);
        assert_eq!(n["method"], json!("chain_subscription"), "{n}");
        let result = n["params"]["result"].clone();
        assert!(result.is_object(), "one log per notification: {n}");
        if n["params"]["subscription"] == counter_sub {
            got_counter.push(result);
        } else {
            assert_eq!(n["params"]["subscription"], all_sub);
            got_all.push(result);
        }
    }
    assert_eq!(got_all, receipt_logs);
    assert_eq!(
        got_counter,
        [receipt_logs[1].clone(), receipt_logs[3].clone()]
    );
    let n = ipc.recv().unwrap();
    assert_eq!(n["params"]["subscription"], ipc_sub);
    assert_eq!(n["params"]["result"], receipt_logs[2]);

    // Unsubscribed: the next block's logs reach only the remaining subscription.
    assert_eq!(
        ok(ws_call(
            &mut ws,
            3,
            "chain_unsubscribe",
            json!([counter_sub])
        )),
        json!(true)
    );
    let raws = [w.tx(counter, increment())];
    let r = w.send_together(&raws);
    let n = ws_read(&mut ws);
    assert_eq!(n["params"]["subscription"], all_sub);
    assert_eq!(n["params"]["result"], r[0]["logs"][0]);

    // Subscribing with bad criteria.
    assert_eq!(
        err(ws_call(
            &mut ws,
            4,
            "chain_subscribe",
            json!(["logs", {"fromBlock": "1234"}])
        )),
        (
            -32602,
            "invalid argument 1: hex string without 0x prefix".into()
        )
    );
    assert_eq!(
        err(ws_call(
            &mut ws,
            5,
            "chain_subscribe",
            json!(["logs", {"address": 5}])
        )),
        (
            -32602,
            "invalid argument 1: invalid addresses in query".into()
        )
    );
    assert_eq!(
        err(ws_call(&mut ws, 6, "chain_subscribe", json!(["logs"]))),
        (-32602, "missing value for required argument 1".into())
    );
    assert_eq!(
        err(ws_call(
            &mut ws,
            7,
            "chain_subscribe",
            json!(["logs", {"fromBlock": "0x5", "toBlock": "0x1"}])
        )),
        (
            -32000,
            "invalid from and to block combination: from > to".into()
        )
    );
    assert_eq!(
        err(w.call("chain_subscribe", json!(["logs", {}]))),
        (-32000, "notifications not supported".into())
    );
}

/// Every error path of the methods, with the reference's code and text (the suite's cases
/// of klaytn-contracts.md 3.2, 5.1-5.3), and the bound on installed filters.
#[test]
fn error_paths() {
    let w = world(&[]);
    let call = |m: &str, p: Value| w.call(m, p);
    let e = |m: &str, p: Value| err(call(m, p));
    let missing = (-32602, "missing value for required argument 0".to_string());
    let no_prefix = (
        -32602,
        "invalid argument 0: hex string without 0x prefix".to_string(),
    );
    let ff = format!("0x{}", "ff".repeat(32));

    // getLogs.
    assert_eq!(e("chain_getLogs", json!([])), missing);
    assert_eq!(
        e("chain_getLogs", json!([{"fromBlock": "fromBlock"}])),
        no_prefix
    );
    ok(call("chain_getLogs", json!([{"fromBlock": "latest"}])));
    let (code, message) = e("chain_getLogs", json!([{"blockHash": ff}]));
    assert_eq!(code, -32000);
    assert_eq!(
        message,
        format!(
            "the header does not exist (hash: [{}])",
            vec!["255"; 32].join(" ")
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"blockHash": ff, "fromBlock": "0x1"}])),
        (
            -32602,
            "invalid argument 0: cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"address": "0x1234"}])),
        (
            -32602,
            "invalid argument 0: invalid address: hex has invalid length 2 after decoding".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"address": ["0x1234"]}])),
        (
            -32602,
            "invalid argument 0: invalid address at index 0: hex has invalid length 2 after decoding".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"address": [1]}])),
        (
            -32602,
            "invalid argument 0: non-string address at index 0".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"address": {}}])),
        (
            -32602,
            "invalid argument 0: invalid addresses in query".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"topics": [1]}])),
        (-32602, "invalid argument 0: invalid topic(s)".into())
    );
    assert_eq!(
        e("chain_getLogs", json!([{"topics": ["0x12"]}])),
        (
            -32602,
            "invalid argument 0: hex has invalid length 1 after decoding".into()
        )
    );
    assert_eq!(
        e("chain_getLogs", json!([{"toBlock": "0x8000000000000000"}])),
        (-32602, "invalid argument 0: Blocknumber too high".into())
    );

    // newFilter and friends.
    assert_eq!(e("chain_newFilter", json!([])), missing);
    assert_eq!(
        e("chain_newFilter", json!([{"fromBlock": "1234"}])),
        no_prefix
    );
    assert_eq!(
        e(
            "chain_newFilter",
            json!([{"fromBlock": "0x5", "toBlock": "0x1"}])
        ),
        (
            -32000,
            "invalid from and to block combination: from > to".into()
        )
    );
    assert_eq!(
        e(
            "chain_newFilter",
            json!([{"fromBlock": "latest", "toBlock": "0x1"}])
        ),
        (
            -32000,
            "invalid from and to block combination: from > to".into()
        )
    );
    for ok_range in [
        json!({"fromBlock": "pending", "toBlock": "pending"}),
        json!({"fromBlock": "0x1", "toBlock": "pending"}),
        json!({"fromBlock": "latest", "toBlock": "pending"}),
        json!({"fromBlock": "0x1"}),
    ] {
        ok(call("chain_newFilter", json!([ok_range])));
    }
    // Extra parameters are ignored by the methods without parameters.
    let id = ok(call("chain_newBlockFilter", json!(["abcd"])));
    ok(call("chain_newPendingTransactionFilter", json!(["abcd"])));
    let log_filter = ok(call("chain_newFilter", json!([{}])));
    let unknown = format!("{}1", id.as_str().unwrap());
    let not_found = (-32000, "filter not found".to_string());
    let rpc_id = (
        -32602,
        "invalid argument 0: json: cannot unmarshal number into Go value of type rpc.ID"
            .to_string(),
    );
    for m in [
        "chain_getFilterChanges",
        "chain_getFilterLogs",
        "chain_uninstallFilter",
    ] {
        assert_eq!(e(m, json!([])), missing, "{m}");
        assert_eq!(e(m, json!([123])), rpc_id, "{m}");
    }
    assert_eq!(e("chain_getFilterChanges", json!([unknown])), not_found);
    assert_eq!(e("chain_getFilterLogs", json!([unknown])), not_found);
    assert_eq!(
        e("chain_getFilterLogs", json!([id])),
        not_found,
        "a block filter"
    );
    assert_eq!(
        ok(call("chain_getFilterLogs", json!([log_filter]))),
        ok(call("chain_getLogs", json!([{}]))),
        "latest..latest: the mint of block 2"
    );
    assert_eq!(
        ok(call("chain_uninstallFilter", json!([unknown]))),
        json!(false)
    );
    assert_eq!(ok(call("chain_uninstallFilter", json!([id]))), json!(true));

    // getBlockReceipts.
    assert_eq!(e("chain_getBlockReceipts", json!([])), missing);
    assert_eq!(e("chain_getBlockReceipts", json!(["abcd"])), no_prefix);
    assert_eq!(
        e("chain_getBlockReceipts", json!([ff])),
        (
            -32000,
            format!("the block does not exist (block hash: {ff})")
        )
    );
    assert_eq!(
        e("chain_getBlockReceipts", json!([1000])),
        (
            -32000,
            "the block does not exist (block number: 1000)".into()
        )
    );
    assert_eq!(
        e("chain_getBlockReceipts", json!([{"blockHash": ff, "blockNumber": "0x1"}])),
        (
            -32602,
            "invalid argument 0: cannot specify both BlockHash and BlockNumber, choose one or the other".into()
        )
    );
    assert_eq!(
        e("chain_getBlockReceipts", json!([{}])),
        (
            -32000,
            "invalid arguments; neither block nor hash specified".into()
        )
    );
    assert_eq!(
        e("chain_getBlockReceipts", json!(["0x8000000000000000"])),
        (-32602, "invalid argument 0: blocknumber too high".into())
    );
    assert_eq!(
        ok(call("chain_getBlockReceipts", json!([2])))
            .as_array()
            .unwrap()
            .len(),
        2
    );

    // Headers.
    assert_eq!(e("chain_getHeaderByNumber", json!([])), missing);
    assert_eq!(e("chain_getHeaderByNumber", json!([true])), no_prefix);
    assert_eq!(
        e("chain_getHeaderByNumber", json!([1000])),
        (
            -32000,
            "the header does not exist (block number: 1000)".into()
        )
    );
    assert_eq!(
        e("chain_getHeaderByNumber", json!(["0x8000000000000000"])),
        (-32602, "invalid argument 0: Blocknumber too high".into())
    );
    assert_eq!(e("chain_getHeaderByHash", json!([])), missing);
    let (code, message) = e("chain_getHeaderByHash", json!([ff]));
    assert_eq!(code, -32000);
    assert!(
        message.starts_with("the header does not exist"),
        "{message}"
    );
    assert_eq!(
        e("chain_getHeaderByHash", json!(["abcd"])),
        (
            -32602,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash".into()
        )
    );
    assert_eq!(
        e("chain_getHeaderByHash", json!(["0x1234"])),
        (
            -32602,
            "invalid argument 0: hex string has length 4, want 64 for common.Hash".into()
        )
    );

    // At most 10,000 filters (the node has 6 by now); one more is refused until one goes.
    let installed = 6;
    let calls: Vec<(&str, Value)> = (0..1000)
        .map(|_| ("chain_newBlockFilter", json!([])))
        .collect();
    let mut ids = Vec::new();
    for round in 0..10 {
        for (i, reply) in batch(&w.url, &calls).into_iter().enumerate() {
            if ids.len() + installed < 10_000 {
                ids.push(ok(reply));
            } else {
                let (code, message) = err(reply);
                assert_eq!(code, -32000, "round {round} call {i}");
                assert!(
                    message.starts_with("too many filters: at most 10000 may be installed at once"),
                    "{message}"
                );
            }
        }
    }
    assert_eq!(ids.len(), 10_000 - installed);
    assert_eq!(
        ok(call("chain_uninstallFilter", json!([ids[0]]))),
        json!(true)
    );
    ok(call("chain_newPendingTransactionFilter", json!([])));
    assert_eq!(err(call("chain_newBlockFilter", json!([]))).0, -32000);
}
