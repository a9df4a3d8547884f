//! The block-tracing and printing methods of `debug` through `chaind --dev`:
//! `debug_traceBlock` (a block's RLP, in the chain or not), `debug_traceBlockFromFile`,
//! `debug_standardTraceBlockToFile` (standard-JSON traces written to files in the node's
//! temporary directory) and `debug_printBlock`, with the reference's errors; and
//! `--rpc.unsafe-debug.disable` keeping the unsafe ones to IPC. The expected traces are worked
//! out from the EVM's gas schedule (EIP-2929 cold slots, EIP-3529 refunds) for contracts
//! written here opcode by opcode.

mod common;

use std::os::unix::fs::PermissionsExt;

use chain_node::crypto::Address;
use chain_node::types::block::Block;
use common::contracts::{deploy, raw_legacy};
use common::{
    dev_key, err, http_args, http_call, http_post, ok, transfer_tx, wait_receipt, Ipc, Node, PRICE,
};
use serde_json::{json, Value};

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

/// Creation code that sets slot 1 to 0x2a and leaves the runtime `PUSH1 0 PUSH1 1 SSTORE
/// STOP` (clearing slot 1).
const CLEARER: &str = "602a6001556006601160003960066000f3600060015500";
/// Creation code leaving the runtime `PUSH1 0 PUSH1 0 REVERT`.
const REVERTER: &str = "6005600c60003960056000f360006000fd";

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

fn fails(v: Value, code: i64, part: &str) {
    let (c, m) = err(v);
    assert_eq!(c, code, "{m}");
    assert!(m.contains(part), "{m:?} lacks {part:?}");
}

/// The files in `dir`, sorted.
fn files_in(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    v.sort();
    v
}

/// A step line of the standard-JSON logger (stack and memory as given).
fn step(pc: u64, op: u8, name: &str, gas: u64, cost: u64, stack: Value, refund: u64) -> Value {
    json!({"pc": pc, "op": op, "gas": format!("0x{gas:x}"), "gasCost": format!("0x{cost:x}"),
           "memory": "0x", "memSize": 0, "stack": stack, "depth": 1, "refund": refund,
           "opName": name, "error": ""})
}

fn lines(path: &str) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn blocks_traced_from_rlp_files_and_to_files_and_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let mut args = vec!["--dev", "--dev.period", "1"];
    args.extend(http_args("chain,debug"));
    let node = Node::start_with_env(
        tempfile::tempdir().unwrap(),
        &args,
        &[("TMPDIR", tmp.path().as_os_str())],
    );
    let url = node.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let key = dev_key(&node);
    let clearer = deploy(&url, &key, 0, hex::decode(CLEARER).unwrap());
    let reverter = deploy(&url, &key, 1, hex::decode(REVERTER).unwrap());
    // A call clearing the slot and a transfer, sent together: one block.
    let hashes = send_batch(
        &url,
        &[
            raw_legacy(&key, 2, Some(clearer), 0, Vec::new(), 100_000),
            hex0x(&transfer_tx(&key, 3, Address([0x44; 20]), 5, PRICE, 1000).encode()),
        ],
    );
    let (r0, r1) = (
        wait_receipt(&url, &hashes[0]),
        wait_receipt(&url, &hashes[1]),
    );
    assert_eq!(r0["blockHash"], r1["blockHash"]);
    let (block_hash, number) = (r0["blockHash"].clone(), r0["blockNumber"].clone());
    let reverted = wait_receipt(
        &url,
        &ok(call(
            "chain_sendRawTransaction",
            json!([raw_legacy(&key, 4, Some(reverter), 0, Vec::new(), 100_000)]),
        )),
    );
    assert_eq!(reverted["status"], json!("0x0"));

    // debug_traceBlock: the block's RLP traced as debug_traceBlockByNumber traces it.
    let rlp = ok(call("debug_getBlockRlp", json!([number])));
    let rlp = format!("0x{}", rlp.as_str().unwrap());
    let traced = ok(call("debug_traceBlock", json!([rlp])));
    assert_eq!(
        traced,
        ok(call("debug_traceBlockByNumber", json!([number])))
    );
    assert_eq!(traced[0]["txHash"], hashes[0]);
    assert_eq!(traced[1]["txHash"], hashes[1]);
    let ops: Vec<&str> = traced[0]["result"]["structLogs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["op"].as_str().unwrap())
        .collect();
    assert_eq!(ops, ["PUSH1", "PUSH1", "SSTORE", "STOP"]);
    assert_eq!(traced[1]["result"]["structLogs"], json!([]));
    let calls = ok(call(
        "debug_traceBlock",
        json!([rlp, {"tracer": "callTracer"}]),
    ));
    assert_eq!(calls[0]["result"]["to"], json!(hex0x(&clearer.0)));
    // The whole transaction's gas: 21,000 + 5,006 less the refund of 4,800.
    assert_eq!(calls[0]["result"]["gasUsed"], json!("0x52d6"));
    // A block the chain does not hold (another timestamp): traced on its parent's state.
    let mut block = Block::decode(&hex::decode(&rlp[2..]).unwrap()).unwrap();
    block.header.time += 1000;
    let other = hex0x(&block.encode());
    assert_ne!(
        block.hash(),
        <[u8; 32]>::try_from(hex::decode(&block_hash.as_str().unwrap()[2..]).unwrap()).unwrap()
    );
    assert_eq!(ok(call("debug_traceBlock", json!([other]))), traced);
    // Its parent missing: by number, then by hash.
    let head = common::quantity_of(&ok(call("chain_blockNumber", json!([])))) as u64;
    let mut orphan = block.clone();
    orphan.header.number = head + 10;
    let (code, msg) = err(call("debug_traceBlock", json!([hex0x(&orphan.encode())])));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!("the block does not exist (block number: {})", head + 9)
        )
    );
    let mut orphan = block.clone();
    orphan.header.parent_hash = [0xab; 32];
    let (code, msg) = err(call("debug_traceBlock", json!([hex0x(&orphan.encode())])));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!(
                "the block does not exist (block hash: 0x{})",
                "ab".repeat(32)
            )
        )
    );
    let genesis = format!(
        "0x{}",
        ok(call("debug_getBlockRlp", json!([0]))).as_str().unwrap()
    );
    let (code, msg) = err(call("debug_traceBlock", json!([genesis])));
    assert_eq!((code, msg.as_str()), (-32000, "genesis is not traceable"));
    let (code, msg) = err(call("debug_traceBlock", json!(["0xffff"])));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "could not decode block: rlp: value size exceeds available input length"
        )
    );
    fails(
        call("debug_traceBlock", json!(["abcd"])),
        -32602,
        "hex string without 0x prefix",
    );
    fails(
        call("debug_traceBlock", json!([])),
        -32602,
        "missing value for required argument 0",
    );

    // debug_traceBlockFromFile: the RLP as hex in a file (as debug_getBlockRlp gives it,
    // with a final newline).
    let file = tmp.path().join("block.rlp");
    std::fs::write(&file, format!("{}\n", &rlp[2..])).unwrap();
    let from_file = ok(call(
        "debug_traceBlockFromFile",
        json!([file.display().to_string()]),
    ));
    assert_eq!(from_file, traced);
    let missing = tmp.path().join("invalid_file");
    let (code, msg) = err(call(
        "debug_traceBlockFromFile",
        json!([missing.display().to_string()]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!(
                "could not read file: open {}: no such file or directory",
                missing.display()
            )
        )
    );
    let (code, msg) = err(call(
        "debug_traceBlockFromFile",
        json!([tmp.path().display().to_string()]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!(
                "could not read file: read {}: is a directory",
                tmp.path().display()
            )
        )
    );
    fails(
        call("debug_traceBlockFromFile", json!([1234])),
        -32602,
        "invalid argument 0: ",
    );
    fails(
        call("debug_traceBlockFromFile", json!([])),
        -32602,
        "missing value for required argument 0",
    );
    std::fs::remove_file(&file).unwrap();
    assert!(files_in(tmp.path()).is_empty());

    // debug_standardTraceBlockToFile: a file per transaction, named after the block and the
    // transaction, readable by the node's user only; the steps as the JSON logger writes them.
    let files = ok(call("debug_standardTraceBlockToFile", json!([block_hash])));
    let files: Vec<String> = serde_json::from_value(files).unwrap();
    assert_eq!(files.len(), 2);
    let bh = &block_hash.as_str().unwrap()[2..10];
    for (i, f) in files.iter().enumerate() {
        let prefix = format!(
            "{}/block_0x{bh}-{i}-0x{}-",
            tmp.path().display(),
            &hashes[i].as_str().unwrap()[2..10]
        );
        assert!(f.starts_with(&prefix), "{f} is not {prefix}...");
        assert!(f[prefix.len()..].parse::<u32>().is_ok(), "{f}");
        let mode = std::fs::metadata(f).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{f}");
    }
    assert_eq!(files_in(tmp.path()), files);
    // The call: 100,000 gas less the 21,000 of a legacy call without data; the SSTORE
    // clears a slot set in an earlier transaction: 2,100 (cold) + 2,900, refund 4,800.
    let gas = 79_000;
    assert_eq!(
        lines(&files[0]),
        [
            step(0, 0x60, "PUSH1", gas, 3, json!([]), 0),
            step(2, 0x60, "PUSH1", gas - 3, 3, json!(["0x0"]), 0),
            step(
                4,
                0x55,
                "SSTORE",
                gas - 6,
                5000,
                json!(["0x0", "0x1"]),
                4800
            ),
            step(5, 0x00, "STOP", gas - 5006, 0, json!([]), 4800),
            json!({"output": "", "gasUsed": "0x138e"}),
        ]
    );
    // The transfer runs no code: the EVM ends at once.
    assert_eq!(lines(&files[1]), [json!({"output": "", "gasUsed": "0x0"})]);
    // Only one transaction, without stack and memory.
    let only = ok(call(
        "debug_standardTraceBlockToFile",
        json!([block_hash, {"txHash": hashes[0], "disableStack": true, "disableMemory": true}]),
    ));
    let only: Vec<String> = serde_json::from_value(only).unwrap();
    assert_eq!(only.len(), 1);
    let l = lines(&only[0]);
    assert_eq!(l.len(), 5);
    assert_eq!(l[2]["stack"], Value::Null);
    assert_eq!(l[2]["memory"], json!("0x"));
    assert_eq!(l[2]["refund"], json!(4800));
    // A REVERT: logged, then logged again with its error and the stack it left.
    let rfiles = ok(call(
        "debug_standardTraceBlockToFile",
        json!([reverted["blockHash"]]),
    ));
    let rfiles: Vec<String> = serde_json::from_value(rfiles).unwrap();
    let mut fault = step(4, 0xfd, "REVERT", gas - 6, 0, json!([]), 0);
    fault["error"] = json!("evm: execution reverted");
    assert_eq!(
        lines(&rfiles[0]),
        [
            step(0, 0x60, "PUSH1", gas, 3, json!([]), 0),
            step(2, 0x60, "PUSH1", gas - 3, 3, json!(["0x0"]), 0),
            step(4, 0xfd, "REVERT", gas - 6, 0, json!(["0x0", "0x0"]), 0),
            fault,
            json!({"output": "", "gasUsed": "0x6", "error": "evm: execution reverted"}),
        ]
    );
    let written = files_in(tmp.path());
    assert_eq!(written.len(), 4);
    // Errors write nothing.
    let other_tx = reverted["transactionHash"].as_str().unwrap().to_string();
    let (code, msg) = err(call(
        "debug_standardTraceBlockToFile",
        json!([block_hash, {"txHash": other_tx}]),
    ));
    assert_eq!(
        (code, msg),
        (
            -32000,
            format!("transaction {} not found in block", &other_tx[2..])
        )
    );
    let unknown = format!("0x{}", "ee".repeat(32));
    let (code, msg) = err(call("debug_standardTraceBlockToFile", json!([unknown])));
    assert_eq!(
        (code, msg),
        (-32000, format!("block {} not found", "ee".repeat(32)))
    );
    let genesis_hash = ok(call("chain_getBlockByNumber", json!(["0x0", false])))["hash"].clone();
    let (code, msg) = err(call(
        "debug_standardTraceBlockToFile",
        json!([genesis_hash]),
    ));
    assert_eq!((code, msg.as_str()), (-32000, "genesis is not traceable"));
    fails(
        call("debug_standardTraceBlockToFile", json!([1234])),
        -32602,
        "invalid argument 0: ",
    );
    fails(
        call("debug_standardTraceBlockToFile", json!([block_hash, {"disableStack": 1}])),
        -32602,
        "invalid argument 1: json: cannot unmarshal number into Go struct field StdTraceConfig.DisableStack of type bool",
    );
    fails(
        call(
            "debug_standardTraceBlockToFile",
            json!([block_hash, {"txHash": "0x12"}]),
        ),
        -32602,
        "invalid argument 1: hex string has length 2, want 64 for common.Hash",
    );
    fails(
        call("debug_standardTraceBlockToFile", json!([])),
        -32602,
        "missing value for required argument 0",
    );
    assert_eq!(files_in(tmp.path()), written);

    // debug_printBlock: by number, tag or hash, the same text.
    let text = ok(call("debug_printBlock", json!([number])));
    let text = text.as_str().unwrap();
    let n = common::quantity_of(&number);
    assert!(
        text.starts_with(&format!(
            "Block(#{n}) hash: {}\n",
            block_hash.as_str().unwrap()
        )),
        "{text}"
    );
    assert!(text.contains(&format!("\n  Number: {n}\n")), "{text}");
    assert!(text.contains("\nTransactions: 2\n"), "{text}");
    for h in &hashes {
        assert!(text.contains(h.as_str().unwrap()), "{text}");
    }
    assert_eq!(
        ok(call("debug_printBlock", json!([block_hash]))),
        json!(text)
    );
    assert_eq!(
        ok(call("debug_printBlock", json!([{"blockHash": block_hash}]))),
        json!(text)
    );
    assert!(ok(call("debug_printBlock", json!(["latest"])))
        .as_str()
        .unwrap()
        .contains(reverted["transactionHash"].as_str().unwrap()));
    let (code, msg) = err(call("debug_printBlock", json!([999_999])));
    assert_eq!((code, msg.as_str()), (-32000, "block #999999 not found"));
    let (code, msg) = err(call("debug_printBlock", json!([unknown])));
    assert_eq!((code, msg), (-32000, format!("block {unknown} not found")));
    fails(
        call("debug_printBlock", json!(["abcd"])),
        -32602,
        "hex string without 0x prefix",
    );
    fails(
        call("debug_printBlock", json!([])),
        -32602,
        "missing value for required argument 0",
    );
}

/// With `--rpc.unsafe-debug.disable`, HTTP keeps `debug_traceBlock` and loses the methods
/// that read or write the node's files or print its blocks; IPC serves them all.
#[test]
fn unsafe_block_methods_are_ipc_only_when_asked() {
    let mut args = vec!["--dev", "--rpc.unsafe-debug.disable"];
    args.extend(http_args("chain,debug"));
    let node = Node::start(&args);
    let url = node.http.clone().unwrap();
    let (code, msg) = err(http_call(&url, "debug_traceBlock", json!(["0xffff"])));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32000,
            "could not decode block: rlp: value size exceeds available input length"
        )
    );
    let mut ipc = Ipc::connect(node.ipc.as_ref().unwrap());
    for (m, p) in [
        ("debug_printBlock", json!([0])),
        (
            "debug_traceBlockFromFile",
            json!(["/nonexistent/block.rlp"]),
        ),
        (
            "debug_standardTraceBlockToFile",
            json!([format!("0x{}", "ee".repeat(32))]),
        ),
    ] {
        assert_eq!(err(http_call(&url, m, p.clone())).0, -32601, "{m}");
        let (code, _) = match ipc.call(m, p) {
            v if v.get("error").is_some() => err(v),
            _ => (0, String::new()),
        };
        assert_ne!(code, -32601, "{m} over IPC");
    }
}
