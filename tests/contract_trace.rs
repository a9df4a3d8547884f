//! Tracing through `chaind --dev` over HTTP (`debug_traceTransaction`, `debug_traceCall`,
//! `debug_traceBlockByNumber`, `debug_traceBlockByHash`): the struct logger's and the
//! callTracer's results in the reference's shapes and key order, for a transfer, a contract
//! calling another, reverts and running out of gas, a call at an older block and whole blocks;
//! every trace agrees with the receipt; every error with the reference's code and text.

mod common;

use chain_node::crypto::{Address, SecretKey};
use common::contracts::{compiled, create_address, deploy, raw_legacy, uint_word};
use common::{err, http_call, http_post, ok, quantity_of, wait_receipt, Node};
use serde_json::{json, Value};

const TO: Address = Address([0x35; 20]);

fn node() -> Node {
    common::dev_http_node("chain,debug")
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

/// Submits a raw transaction and waits for its receipt: (hash, receipt).
fn send(url: &str, raw: String) -> (Value, Value) {
    let hash = ok(http_call(url, "chain_sendRawTransaction", json!([raw])));
    let receipt = wait_receipt(url, &hash);
    (hash, receipt)
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

/// The keys of a JSON object's text, in their order.
fn keys(text: &str) -> Vec<String> {
    struct Keys(Vec<String>);
    impl<'de> serde::Deserialize<'de> for Keys {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Keys, D::Error> {
            struct V;
            impl<'de> serde::de::Visitor<'de> for V {
                type Value = Keys;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut m: A,
                ) -> Result<Keys, A::Error> {
                    let mut k = Vec::new();
                    while let Some((key, _)) = m.next_entry::<String, serde::de::IgnoredAny>()? {
                        k.push(key);
                    }
                    Ok(Keys(k))
                }
            }
            d.deserialize_map(V)
        }
    }
    serde_json::from_str::<Keys>(text).unwrap().0
}

fn trace(url: &str, hash: &Value, config: Value) -> Value {
    ok(http_call(
        url,
        "debug_traceTransaction",
        json!([hash, config]),
    ))
}

fn calls(url: &str, hash: &Value) -> Value {
    trace(url, hash, json!({"tracer": "callTracer"}))
}

/// 64 hex digits of `n`, as the struct logger writes words.
fn word_hex(n: u128) -> String {
    hex::encode(uint_word(n))
}

fn addr(a: &Address) -> String {
    hex0x(&a.0)
}

/// Every trace gives the receipt's gas and outcome.
fn agrees_with_receipt(t: &Value, receipt: &Value) {
    assert_eq!(
        t["gas"].as_u64().unwrap() as u128,
        quantity_of(&receipt["gasUsed"])
    );
    assert_eq!(
        t["failed"],
        json!(receipt["status"] != json!("0x1")),
        "{receipt}"
    );
}

/// Deploys Counter and a Caller of it (nonces 0 and 1): (counter, caller).
fn counter_and_caller(url: &str, key: &SecretKey) -> (Address, Address) {
    let counter = deploy(url, key, 0, compiled("Counter").bytecode);
    let caller_code = compiled("Caller").with_args(&[common::contracts::addr_word(&counter)]);
    let caller = deploy(url, key, 1, caller_code);
    (counter, caller)
}

/// A transfer runs no code: no steps, one frame, the reference's forms and key order.
#[test]
fn a_transfer_traces_as_the_reference() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let me = key.address();
    // The suite's case: 1.5 KLAY with gas 304,000.
    let (hash, receipt) = send(
        url,
        raw_legacy(
            &key,
            0,
            Some(TO),
            1_500_000_000_000_000_000,
            vec![],
            304_000,
        ),
    );
    assert_eq!(receipt["gasUsed"], json!("0x5208"));
    assert_eq!(
        raw_result(url, "debug_traceTransaction", json!([hash])),
        r#"{"gas":21000,"failed":false,"returnValue":"","structLogs":[]}"#
    );
    assert_eq!(
        raw_result(
            url,
            "debug_traceTransaction",
            json!([hash, {"tracer": "callTracer"}])
        ),
        format!(
            r#"{{"type":"CALL","from":"{}","to":"{}","value":"0x14d1120d7b160000","gas":"0x45178","gasUsed":"0x5208","input":"0x","output":"0x"}}"#,
            addr(&me),
            addr(&TO)
        )
    );
    // A value transfer of type 8: gas 21,000, all of it intrinsic.
    let raw = common::raw_transfer(&key, 1, TO, 5, common::PRICE, 1000);
    let (hash, receipt) = send(url, raw);
    agrees_with_receipt(&trace(url, &hash, Value::Null), &receipt);
    let c = calls(url, &hash);
    assert_eq!(
        (c["gas"].clone(), c["gasUsed"].clone(), c["value"].clone()),
        (json!("0x0"), json!("0x5208"), json!("0x5"))
    );
}

/// A contract calling another: the struct logs (first step, SSTORE with the storage map, the
/// gas of each step, the options), the call frames nested Caller -> Counter, and a creation.
#[test]
fn a_contract_call_traces_its_steps_and_frames() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let me = key.address();
    let (counter, caller) = counter_and_caller(url, &key);
    let input = compiled("Caller").call_data("callIncrement()", &[]);
    let (hash, receipt) = send(
        url,
        raw_legacy(&key, 2, Some(caller), 0, input.clone(), 200_000),
    );
    assert_eq!(receipt["status"], json!("0x1"));

    let text = raw_result(url, "debug_traceTransaction", json!([hash]));
    assert_eq!(keys(&text), ["gas", "failed", "returnValue", "structLogs"]);
    // Gas 200,000 less the intrinsic 21,000 + 100 per input byte.
    assert!(
        text.contains(r#""structLogs":[{"pc":0,"op":"PUSH1","gas":178600,"gasCost":3,"depth":1,"stack":[],"memory":[],"storage":{},"computation":150000000,"computationCost":120},"#),
        "{}",
        &text[..400]
    );
    let t: Value = serde_json::from_str(&text).unwrap();
    agrees_with_receipt(&t, &receipt);
    assert_eq!(t["returnValue"], json!(word_hex(1)));
    let logs = t["structLogs"].as_array().unwrap();
    // Counter's SSTORE runs one call deep and shows its own write.
    let sstore = logs.iter().position(|l| l["op"] == "SSTORE").unwrap();
    assert_eq!(logs[sstore]["depth"], json!(2));
    assert_eq!(logs[sstore]["storage"], json!({ word_hex(0): word_hex(1) }));
    assert_eq!(
        logs[sstore + 1]["storage"],
        json!({ word_hex(0): word_hex(1) })
    );
    let call = logs.iter().position(|l| l["op"] == "CALL").unwrap();
    assert_eq!(
        (logs[call]["depth"].clone(), logs[call + 1]["depth"].clone()),
        (json!(1), json!(2))
    );
    for l in logs {
        assert!(l.get("error").is_none(), "{l}");
        for w in l["stack"]
            .as_array()
            .unwrap()
            .iter()
            .chain(l["memory"].as_array().unwrap())
        {
            let w = w.as_str().unwrap();
            assert!(
                w.len() == 64 && w.bytes().all(|b| b.is_ascii_hexdigit()),
                "{w}"
            );
        }
    }
    // Within a frame, each step starts with the gas the previous one left.
    for w in logs.windows(2) {
        if w[0]["depth"] == w[1]["depth"]
            && !matches!(w[0]["op"].as_str(), Some("CALL" | "STATICCALL"))
        {
            assert_eq!(
                w[1]["gas"].as_u64().unwrap(),
                w[0]["gas"].as_u64().unwrap() - w[0]["gasCost"].as_u64().unwrap(),
                "{} {}",
                w[0],
                w[1]
            );
        }
    }
    // The options leave out what they name; the limit cuts the steps.
    let t = trace(
        url,
        &hash,
        json!({"disableStorage": true, "disableMemory": true, "disableStack": true}),
    );
    let first = t["structLogs"][0].as_object().unwrap();
    assert!(
        !first.contains_key("stack")
            && !first.contains_key("memory")
            && !first.contains_key("storage")
    );
    assert_eq!(
        trace(url, &hash, json!({"limit": 10}))["structLogs"]
            .as_array()
            .unwrap()
            .len(),
        10
    );

    let text = raw_result(
        url,
        "debug_traceTransaction",
        json!([hash, {"tracer": "callTracer"}]),
    );
    assert_eq!(
        keys(&text),
        ["type", "from", "to", "value", "gas", "gasUsed", "input", "output", "calls"]
    );
    let c: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["from"], json!(addr(&me)));
    assert_eq!(c["to"], json!(addr(&caller)));
    assert_eq!(c["value"], json!("0x0"));
    assert_eq!(c["gas"], json!(format!("0x{:x}", 178_600)));
    assert_eq!(c["gasUsed"], receipt["gasUsed"]);
    assert_eq!(c["input"], json!(hex0x(&input)));
    assert_eq!(c["output"], json!(hex0x(&uint_word(1))));
    let inner = &c["calls"][0];
    assert_eq!(c["calls"].as_array().unwrap().len(), 1);
    let inner_keys: Vec<&str> = inner
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(inner_keys.len(), 8, "{inner}");
    assert_eq!(
        (
            &inner["type"],
            &inner["from"],
            &inner["to"],
            &inner["value"]
        ),
        (
            &json!("CALL"),
            &json!(addr(&caller)),
            &json!(addr(&counter)),
            &json!("0x0")
        )
    );
    assert_eq!(
        inner["input"],
        json!(hex0x(&compiled("Counter").selector("increment()")))
    );
    assert_eq!(inner["output"], json!(hex0x(&uint_word(1))));
    assert!(quantity_of(&inner["gasUsed"]) < quantity_of(&inner["gas"]));
    assert!(
        text.contains(r#""calls":[{"type":"CALL","from":"#),
        "{text}"
    );

    // The creation of Counter: CREATE to the new address, returning its runtime code.
    let deploy_hash = ok(http_call(
        url,
        "chain_getBlockByNumber",
        json!(["0x1", false]),
    ))["transactions"][0]
        .clone();
    let t = trace(url, &deploy_hash, Value::Null);
    assert_eq!(
        t["returnValue"],
        json!(hex::encode(compiled("Counter").deployed))
    );
    let c = calls(url, &deploy_hash);
    assert_eq!(
        (c["type"].clone(), c["to"].clone()),
        (json!("CREATE"), json!(addr(&create_address(&me, 0))))
    );
    assert_eq!(c["output"], json!(hex0x(&compiled("Counter").deployed)));
}

/// CREATE2 and SELFDESTRUCT frames: Factory deploys a Child and has it destroy itself.
#[test]
fn creations_and_selfdestructs_are_frames() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let f = compiled("Factory");
    let factory = deploy(url, &key, 0, f.bytecode.clone());
    let input = f.call_data(
        "deployAndDestroy(bytes32,address)",
        &[uint_word(7), common::contracts::addr_word(&TO)],
    );
    let (hash, receipt) = send(url, raw_legacy(&key, 1, Some(factory), 0, input, 1_000_000));
    assert_eq!(receipt["status"], json!("0x1"));
    let c = calls(url, &hash);
    let frames = c["calls"].as_array().unwrap();
    assert_eq!(frames.len(), 2, "{c}");
    let (create, destroy) = (&frames[0], &frames[1]);
    assert_eq!(create["type"], json!("CREATE2"));
    assert_eq!(create["from"], json!(addr(&factory)));
    assert_eq!(create["input"], json!(hex0x(&compiled("Child").bytecode)));
    let child = create["to"].clone();
    assert!(create["output"].as_str().unwrap().len() > 2);
    assert_eq!(
        (destroy["type"].clone(), destroy["to"].clone()),
        (json!("CALL"), child.clone())
    );
    assert_eq!(
        destroy["calls"],
        json!([{"type": "SELFDESTRUCT", "from": child, "to": addr(&TO), "value": "0x0",
                "gas": "0x0", "gasUsed": "0x0", "input": "0x", "output": "0x"}])
    );
    // A second Child at the same address collides: the reference starts no frame for it.
    let again = f.call_data("deploy(bytes32)", &[uint_word(9)]);
    let (first, _) = send(
        url,
        raw_legacy(&key, 2, Some(factory), 0, again.clone(), 1_000_000),
    );
    assert_eq!(calls(url, &first)["calls"][0]["type"], json!("CREATE2"));
    let (second, receipt) = send(url, raw_legacy(&key, 3, Some(factory), 0, again, 1_000_000));
    assert_eq!(receipt["status"], json!("0x0"));
    let c = calls(url, &second);
    assert!(c.get("calls").is_none(), "{c}");
    assert_eq!(c["error"], json!("evm: execution reverted"));
}

/// A revert fails the trace and names the error; running out of gas marks the failing step.
#[test]
fn reverts_and_running_out_of_gas() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let reverter = deploy(url, &key, 0, compiled("Reverter").bytecode);
    let r = compiled("Reverter");
    let (hash, receipt) = send(
        url,
        raw_legacy(
            &key,
            1,
            Some(reverter),
            0,
            r.call_data("revertWithReason()", &[]),
            100_000,
        ),
    );
    assert_eq!(receipt["status"], json!("0x0"));
    let t = trace(url, &hash, Value::Null);
    agrees_with_receipt(&t, &receipt);
    assert_eq!(t["returnValue"], json!(""));
    let logs = t["structLogs"].as_array().unwrap();
    assert_eq!(logs.last().unwrap()["op"], json!("REVERT"));
    assert!(logs.iter().all(|l| l.get("error").is_none()));
    let text = raw_result(
        url,
        "debug_traceTransaction",
        json!([hash, {"tracer": "callTracer"}]),
    );
    assert_eq!(
        keys(&text),
        ["type", "from", "to", "value", "gas", "gasUsed", "input", "error"]
    );
    let c: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(c["error"], json!("evm: execution reverted"));
    assert_eq!(c["gasUsed"], receipt["gasUsed"]);

    let (hash, receipt) = send(
        url,
        raw_legacy(
            &key,
            2,
            Some(reverter),
            0,
            r.call_data("burnGas()", &[]),
            60_000,
        ),
    );
    assert_eq!(receipt["gasUsed"], json!("0xea60"));
    let t = trace(
        url,
        &hash,
        json!({"disableMemory": true, "disableStack": true}),
    );
    agrees_with_receipt(&t, &receipt);
    let last = t["structLogs"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(last["error"], json!({}), "{last}");
    let c = calls(url, &hash);
    assert_eq!(
        (c["error"].clone(), c["gasUsed"].clone()),
        (json!("out of gas"), json!("0xea60"))
    );
    assert!(c.get("output").is_none());
}

/// `debug_traceCall` on the state of an older block, by number, hash or object; nothing it
/// runs is kept; a sender that cannot pay for its gas is refused as the reference refuses it.
#[test]
fn trace_call_at_an_older_block() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let r = compiled("Reverter");
    let reverter = deploy(url, &key, 0, r.bytecode.clone());
    let store = |nonce, v| {
        let input = r.call_data("store(uint256)", &[uint_word(v)]);
        send(
            url,
            raw_legacy(&key, nonce, Some(reverter), 0, input, 100_000),
        )
        .1
    };
    let at7 = store(1, 7);
    store(2, 9);
    let stored = json!({"to": addr(&reverter), "data": hex0x(&r.selector("stored()"))});
    let call = |block: Value, config: Value| {
        ok(http_call(
            url,
            "debug_traceCall",
            json!([stored, block, config]),
        ))
    };
    let word = |n| json!(hex0x(&uint_word(n)));
    assert_eq!(
        call(at7["blockNumber"].clone(), json!({"tracer": "callTracer"}))["output"],
        word(7)
    );
    assert_eq!(
        call(at7["blockHash"].clone(), json!({"tracer": "callTracer"}))["output"],
        word(7)
    );
    assert_eq!(
        call(
            json!({"blockNumber": at7["blockNumber"]}),
            json!({"tracer": "callTracer"})
        )["output"],
        word(7)
    );
    assert_eq!(
        call(json!("latest"), json!({"tracer": "callTracer"}))["output"],
        word(9)
    );
    let t = call(at7["blockNumber"].clone(), Value::Null);
    assert_eq!(
        (t["failed"].clone(), t["returnValue"].clone()),
        (json!(false), json!(word_hex(7)))
    );
    assert!(t["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .any(|l| l["op"] == "SLOAD"));

    // A write traced is not kept.
    let write = json!({"to": addr(&reverter), "data": hex0x(&r.call_data("store(uint256)", &[uint_word(5)]))});
    let t = ok(http_call(url, "debug_traceCall", json!([write, "latest"])));
    let sstore = t["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["op"] == "SSTORE")
        .unwrap()
        .clone();
    assert_eq!(sstore["storage"], json!({ word_hex(0): word_hex(5) }));
    assert_eq!(
        call(json!("latest"), json!({"tracer": "callTracer"}))["output"],
        word(9)
    );

    // A trace past the bounds is refused; with a limit the same run is cut short.
    let burn = json!({"to": addr(&reverter), "data": hex0x(&r.selector("burnGas()")),
                      "gas": format!("0x{:x}", 20_000_000)});
    assert_eq!(
        err(http_call(url, "debug_traceCall", json!([burn, "latest"]))),
        (-32000, "trace too large: more than 1000000 struct logs or 64 MiB of recorded data; trace less with the limit, disableMemory, disableStack or disableStorage options".into())
    );
    let t = ok(http_call(
        url,
        "debug_traceCall",
        json!([burn, "latest", {"limit": 100}]),
    ));
    assert_eq!(
        (t["gas"].clone(), t["failed"].clone()),
        (json!(20_000_000), json!(true))
    );
    assert_eq!(t["structLogs"].as_array().unwrap().len(), 100);

    // Before the reference's Magma fork the sender is not credited its gas.
    let poor = json!({"from": addr(&Address([0x77; 20])), "to": addr(&reverter), "gas": "0x99999",
                      "gasPrice": "0x5d21dba00", "data": hex0x(&r.selector("stored()"))});
    assert_eq!(
        err(http_call(url, "debug_traceCall", json!([poor, "latest"]))),
        (
            -32000,
            "tracing failed: insufficient balance of the fee payer to pay for gas".into()
        )
    );
}

/// A block's traces: each transaction's, in order, the same as its own trace (the state before
/// each is rebuilt), by number and by hash; a trace that stops is that transaction's error.
#[test]
fn block_traces() {
    let mut args = vec!["--dev", "--dev.period", "2"];
    args.extend(common::http_args("chain,debug"));
    let n = Node::start(&args);
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let counter = deploy(url, &key, 0, compiled("Counter").bytecode);
    // Sent at once, right after a block: sealed together, two seconds later.
    let increment = compiled("Counter").selector("increment()");
    let raws = [
        raw_legacy(&key, 1, Some(counter), 0, increment.clone(), 100_000),
        raw_legacy(&key, 2, Some(counter), 0, increment.clone(), 100_000),
        raw_legacy(&key, 3, Some(TO), 1, vec![], 21_000),
    ];
    let hashes: Vec<Value> = raws
        .iter()
        .map(|r| ok(http_call(url, "chain_sendRawTransaction", json!([r]))))
        .collect();
    let receipts: Vec<Value> = hashes.iter().map(|h| wait_receipt(url, h)).collect();
    let number = receipts[0]["blockNumber"].clone();
    assert!(
        receipts.iter().all(|r| r["blockNumber"] == number),
        "{receipts:?}"
    );

    let text = raw_result(
        url,
        "debug_traceBlockByNumber",
        json!([quantity_of(&number) as u64]),
    );
    let traces: Value = serde_json::from_str(&text).unwrap();
    let traces = traces.as_array().unwrap();
    assert_eq!(traces.len(), 3);
    assert!(text.starts_with(r#"[{"txHash":"#), "{}", &text[..100]);
    for ((t, hash), receipt) in traces.iter().zip(&hashes).zip(&receipts) {
        assert_eq!(t["txHash"], *hash);
        agrees_with_receipt(&t["result"], receipt);
        assert_eq!(t["result"], trace(url, hash, Value::Null));
    }
    // The second increment runs over the first's state.
    let sstore = |t: &Value| {
        t["result"]["structLogs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|l| l["op"] == "SSTORE")
            .unwrap()["storage"]
            .clone()
    };
    assert_eq!(sstore(&traces[0]), json!({ word_hex(0): word_hex(1) }));
    assert_eq!(sstore(&traces[1]), json!({ word_hex(0): word_hex(2) }));
    assert_eq!(traces[2]["result"]["structLogs"], json!([]));
    let by_hash = ok(http_call(
        url,
        "debug_traceBlockByHash",
        json!([receipts[0]["blockHash"]]),
    ));
    assert_eq!(by_hash, Value::Array(traces.clone()));
    let latest = ok(http_call(
        url,
        "debug_traceBlockByNumber",
        json!(["latest", {"tracer": "callTracer"}]),
    ));
    assert_eq!(latest[1]["result"]["output"], json!(hex0x(&uint_word(2))));
    assert_eq!(latest[2]["result"]["to"], json!(addr(&TO)));

    // A deadline already past stops every trace that runs code; the transfer runs none.
    let stopped = ok(http_call(
        url,
        "debug_traceBlockByNumber",
        json!([number, {"timeout": "0s"}]),
    ));
    assert_eq!(
        stopped[0],
        json!({"txHash": hashes[0], "error": "execution timeout"})
    );
    assert_eq!(stopped[1]["error"], json!("execution timeout"));
    assert!(stopped[2].get("result").is_some());
    assert_eq!(
        err(http_call(
            url,
            "debug_traceTransaction",
            json!([hashes[1], {"timeout": "0s"}])
        )),
        (-32000, "execution timeout".into())
    );
}

/// Every error path, with the reference's code and text.
#[test]
fn errors_as_the_reference() {
    let n = node();
    let url = n.http.as_deref().unwrap();
    let key = common::dev_key(&n);
    let (hash, receipt) = send(url, raw_legacy(&key, 0, Some(TO), 1, vec![], 21_000));
    let e = |method: &str, params: Value| err(http_call(url, method, params));
    let s = |t: &str| t.to_string();

    // debug_traceTransaction
    let ffff = format!("0x{}", "f".repeat(64));
    assert_eq!(
        e("debug_traceTransaction", json!([ffff])),
        (-32000, format!("transaction {} not found", "f".repeat(64)))
    );
    let h = hash.as_str().unwrap();
    let missing = format!("{}fff", &h[..h.len() - 3]);
    assert_eq!(
        e("debug_traceTransaction", json!([missing])),
        (-32000, format!("transaction {} not found", &missing[2..]))
    );
    assert_eq!(
        e("debug_traceTransaction", json!(["abcd"])),
        (-32602, s("invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash"))
    );
    assert_eq!(
        e("debug_traceTransaction", json!(["0xabcd"])),
        (
            -32602,
            s("invalid argument 0: hex string has length 4, want 64 for common.Hash")
        )
    );
    assert_eq!(
        e("debug_traceTransaction", json!([])),
        (-32602, s("missing value for required argument 0"))
    );
    assert_eq!(
        e("debug_traceTransaction", json!([hash, {}, 1])),
        (-32602, s("too many arguments, want at most 2"))
    );
    // The trace config.
    assert_eq!(
        e(
            "debug_traceTransaction",
            json!([hash, {"tracer": "{step: function() {}}"}])
        ),
        (-32000, s("Only predefined tracers are supported"))
    );
    assert_eq!(
        e("debug_traceTransaction", json!([hash, {"tracer": "prestateTracer"}])),
        (-32000, s("tracer prestateTracer is not available on this node: use callTracer, or no tracer for the struct logger"))
    );
    assert_eq!(
        e("debug_traceTransaction", json!([hash, {"timeout": "abc"}])),
        (-32000, s(r#"time: invalid duration "abc""#))
    );
    assert_eq!(
        e("debug_traceTransaction", json!([hash, {"limit": "x"}])),
        (-32602, s("invalid argument 1: json: cannot unmarshal string into Go struct field TraceConfig.Limit of type int"))
    );
    assert_eq!(
        e("debug_traceTransaction", json!([hash, "x"])),
        (-32602, s("invalid argument 1: json: cannot unmarshal string into Go value of type tracers.TraceConfig"))
    );

    // debug_traceBlockByNumber and ByHash
    assert_eq!(
        e("debug_traceBlockByNumber", json!(["0xffffffff"])),
        (
            -32000,
            s("the block does not exist (block number: 4294967295)")
        )
    );
    assert_eq!(
        e("debug_traceBlockByNumber", json!(["abcd"])),
        (
            -32602,
            s("invalid argument 0: hex string without 0x prefix")
        )
    );
    assert_eq!(
        e("debug_traceBlockByNumber", json!([0])),
        (-32000, s("genesis is not traceable"))
    );
    assert_eq!(
        e("debug_traceBlockByNumber", json!(["earliest"])),
        (-32000, s("genesis is not traceable"))
    );
    let head = receipt["blockNumber"].clone();
    assert_eq!(
        ok(http_call(
            url,
            "debug_traceBlockByNumber",
            json!([quantity_of(&head) as u64])
        ))[0]["txHash"],
        hash
    );
    let bh = receipt["blockHash"].as_str().unwrap();
    let missing = format!("{}fff", &bh[..bh.len() - 3]);
    assert_eq!(
        e("debug_traceBlockByHash", json!([missing])),
        (
            -32000,
            format!("the block does not exist (block hash: {missing})")
        )
    );
    assert_eq!(
        e("debug_traceBlockByHash", json!(["abcd"])),
        (-32602, s("invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash"))
    );

    // debug_traceCall
    let args = json!({"to": addr(&TO)});
    assert_eq!(
        e("debug_traceCall", json!([args])),
        (-32602, s("missing value for required argument 1"))
    );
    assert_eq!(
        e("debug_traceCall", json!([args, "0xffffffff"])),
        (
            -32000,
            s("the block does not exist (block number: 4294967295)")
        )
    );
    assert_eq!(
        e("debug_traceCall", json!([args, missing])),
        (
            -32000,
            format!("the block does not exist (block hash: {missing})")
        )
    );
    assert_eq!(
        e("debug_traceCall", json!([args, {}])),
        (
            -32000,
            s("invalid arguments; neither block nor hash specified")
        )
    );
    assert_eq!(
        e("debug_traceCall", json!([args, "abcd"])),
        (
            -32602,
            s("invalid argument 1: hex string without 0x prefix")
        )
    );
    assert_eq!(
        e("debug_traceCall", json!([{"to": "abcd"}, "latest"])),
        (-32602, s("invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.to of type common.Address"))
    );
    assert_eq!(
        e("debug_traceCall", json!([{"gas": 5}, "latest"])),
        (-32602, s("invalid argument 0: json: cannot unmarshal non-string into Go struct field CallArgs.gas of type hexutil.Uint64"))
    );
    assert_eq!(
        e(
            "debug_traceCall",
            json!([{"to": addr(&TO), "gas": "0x99"}, "latest"])
        ),
        (-32000, s("tracing failed: intrinsic gas too low"))
    );
    // A call to an account without code: one frame, no steps.
    let t = ok(http_call(url, "debug_traceCall", json!([args, "latest"])));
    assert_eq!(
        t,
        json!({"gas": 21000, "failed": false, "returnValue": "", "structLogs": []})
    );
}
