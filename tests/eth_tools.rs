//! Ethereum's own tools against `chaind --dev`'s `eth` namespace, as their users run them:
//! foundry's cast (chain id, fees, balances, nonces, code, storage, blocks, receipts, calls,
//! gas estimates, logs, legacy and EIP-1559 transactions signed by cast from a key file and
//! sent raw or through the node's eth_sendTransaction, message signatures), and a web3.py and
//! an ethers v6 script (`tests/oracle/eth`: deploy the Token, transfer, a log filter, getLogs,
//! receipts, a gas estimate, fee history, one EIP-1559 and one legacy transfer).
//!
//! What a tool reads is checked against a source independent of the `eth` namespace: the
//! node's `chain_` answers, the keccak of the bytes cast signed, solc's output, balances that
//! moved by value plus gasUsed times the price. The tools are installed under the target
//! directory on first use (`benches/support/foundry.rs`, `tests/common/ethtools.rs`); a failed
//! install fails the test unless `ETH_TOOLS_SKIP=1`. `tools_against_anvil` (ignored: run it
//! with `--ignored`) runs the same against anvil, with anvil's `eth_` as the oracle.

mod common;
#[path = "../benches/support/foundry.rs"]
mod foundry;
#[path = "eth_tools/summary.rs"]
mod summary;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use chain_node::keystore::{keyfile::ScryptParams, Keystore};
use common::contracts::{addr_word, compiled, uint_word};
use common::ethtools::{ethers, oracle_file, skipped, web3_python};
use common::{dev_account, http_args, http_call, key_files, ok, wait_receipt_by, Node, PRICE};
use serde_json::{json, Value};

/// The chain id the node is started with.
const CHAIN_ID: u64 = 1000;
/// 10^18, one coin in its smallest unit.
const ETHER: u128 = 1_000_000_000_000_000_000;
/// What each test account is given by the unlocked funder.
const FUND: u128 = 1000 * ETHER;
/// The Token's supply when cast deploys it.
const SUPPLY: u128 = 1_000_000;
/// The passphrase of the throwaway key files.
const PASSPHRASE: &str = "eth-tools";

/// A node under test and how to ask it for the answers the tools' are checked against.
struct Target {
    url: String,
    chain_id: u64,
    /// An account the node keeps unlocked: eth_sendTransaction signs for it.
    funder: String,
    /// chaind: `chain_` is the oracle and the dev chain's facts (unit price, no base fee,
    /// this chain's message prefix) hold. Otherwise anvil, whose `eth_` is the oracle.
    ours: bool,
    _node: Option<Node>,
    _anvil: Option<(foundry::Anvil, tempfile::TempDir)>,
}

impl Target {
    fn chaind() -> Target {
        let chain_id = CHAIN_ID.to_string();
        let mut args = vec!["--dev", "--chainid", &chain_id];
        args.extend(http_args("chain,eth,net,rpc,web3,personal"));
        let node = Node::start(&args);
        let url = node.http.clone().unwrap();
        // The developer account's passphrase is empty; unlocked until the node stops.
        let funder = dev_account(&node).to_lowercase();
        let unlocked = http_call(&url, "personal_unlockAccount", json!([funder, "", 0]));
        assert_eq!(ok(unlocked), json!(true));
        Target {
            url,
            chain_id: CHAIN_ID,
            funder,
            ours: true,
            _node: Some(node),
            _anvil: None,
        }
    }

    fn anvil() -> Target {
        let dir = tempfile::tempdir().unwrap();
        let anvil = foundry::Anvil::start(&foundry_bins().0, &dir.path().join("anvil.log"), &[]);
        let url = format!("http://{}", anvil.addr);
        let funder = ok(http_call(&url, "eth_accounts", json!([])))[0]
            .as_str()
            .unwrap()
            .to_lowercase();
        Target {
            url,
            chain_id: 31337,
            funder,
            ours: false,
            _node: None,
            _anvil: Some((anvil, dir)),
        }
    }

    /// The oracle's name of `method` (a `chain_` name; `eth_` on anvil).
    fn oracle_method(&self, method: &str) -> String {
        match (self.ours, method) {
            (true, m) => m.to_string(),
            (false, "chain_chainID") => "eth_chainId".to_string(),
            (false, m) => m.replacen("chain_", "eth_", 1),
        }
    }

    /// The oracle's answer to `method` (a `chain_` name; `eth_` on anvil).
    #[track_caller]
    fn oracle(&self, method: &str, params: Value) -> Value {
        ok(http_call(&self.url, &self.oracle_method(method), params))
    }

    /// The oracle's receipt of `hash`, waited for (at most 10 s).
    fn receipt(&self, hash: &str) -> Value {
        let method = self.oracle_method("chain_getTransactionReceipt");
        wait_receipt_by(&self.url, &method, &json!(hash))
    }

    /// Gives `to` [`FUND`] from the unlocked funder through the node's eth_sendTransaction.
    fn fund(&self, to: &str) {
        let hash = ok(http_call(
            &self.url,
            "eth_sendTransaction",
            json!([{"from": self.funder, "to": to, "value": format!("0x{FUND:x}")}]),
        ));
        assert_eq!(self.receipt(hash.as_str().unwrap())["status"], "0x1");
        let balance = self.oracle("chain_getBalance", json!([to, "latest"]));
        assert_eq!(num(&balance), FUND);
    }
}

/// anvil and cast, installed once per test run.
fn foundry_bins() -> &'static (PathBuf, PathBuf) {
    static BINS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BINS.get_or_init(foundry::foundry)
}

/// A fresh key in a throwaway key file (light scrypt) with its passphrase file.
struct TestKey {
    _dir: tempfile::TempDir,
    file: PathBuf,
    passphrase_file: PathBuf,
    /// `0x` + 64 hex digits, for the scripts' environment.
    secret: String,
    /// Lower-case `0x` address.
    address: String,
}

impl TestKey {
    fn new() -> TestKey {
        let dir = tempfile::tempdir().unwrap();
        let ks = Keystore::open(dir.path().join("keystore"))
            .unwrap()
            .with_scrypt(ScryptParams::LIGHT);
        let address = ks.new_account(PASSPHRASE).unwrap().address;
        let key = ks.load_key(address, PASSPHRASE).unwrap();
        let passphrase_file = dir.path().join("passphrase");
        std::fs::write(&passphrase_file, PASSPHRASE).unwrap();
        TestKey {
            file: key_files(&dir.path().join("keystore")).pop().unwrap(),
            passphrase_file,
            secret: format!("0x{}", hex::encode(*key.to_bytes())),
            address: format!("0x{}", hex::encode(address.0)),
            _dir: dir,
        }
    }
}

/// A quantity: `0x` hex, a decimal string or a JSON number.
#[track_caller]
fn num(v: &Value) -> u128 {
    match v {
        Value::Number(n) => n.as_u64().unwrap_or_else(|| panic!("not a u64: {v}")) as u128,
        Value::String(s) => match s.strip_prefix("0x") {
            Some(h) => u128::from_str_radix(h, 16).unwrap_or_else(|e| panic!("{s}: {e}")),
            None => s.parse().unwrap_or_else(|e| panic!("{s}: {e}")),
        },
        _ => panic!("not a quantity: {v}"),
    }
}

/// A string member, lower-cased (addresses and hashes compare case-blind).
#[track_caller]
fn low(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_lowercase()
}

/// A 32-byte word holding `address`.
fn topic_of(address: &str) -> String {
    format!("0x{:0>64}", address.trim_start_matches("0x").to_lowercase())
}

/// Asserts that the log lists `tool` and `oracle` name the same logs.
#[track_caller]
fn same_logs(tool: &Value, oracle: &Value) {
    let pick = |logs: &Value| -> Vec<Value> {
        logs.as_array()
            .unwrap_or_else(|| panic!("not a log list: {logs}"))
            .iter()
            .map(|l| {
                json!({
                    "address": low(&l["address"]),
                    "topics": l["topics"].as_array().unwrap().iter().map(low).collect::<Vec<_>>(),
                    "data": low(&l["data"]),
                    "blockNumber": num(&l["blockNumber"]) as u64,
                    "blockHash": low(&l["blockHash"]),
                    "transactionHash": low(&l["transactionHash"]),
                    "logIndex": num(&l["logIndex"]) as u64,
                })
            })
            .collect()
    };
    assert_eq!(pick(tool), pick(oracle));
}

/// Asserts that a receipt a tool read (Ethereum's JSON) says what the oracle's receipt of
/// the same transaction says; returns the oracle's.
#[track_caller]
fn same_receipt(t: &Target, tool: &Value) -> Value {
    let hash = low(&tool["transactionHash"]);
    let o = t.receipt(&hash);
    assert_eq!(low(&o["transactionHash"]), hash);
    for k in ["blockHash", "from"] {
        assert_eq!(low(&tool[k]), low(&o[k]), "{k} of {hash}: {tool} vs {o}");
    }
    for k in ["to", "contractAddress"] {
        let (a, b) = (&tool[k], &o[k]);
        assert_eq!(
            a.as_str().map(str::to_lowercase),
            b.as_str().map(str::to_lowercase),
            "{k} of {hash}: {tool} vs {o}"
        );
    }
    for k in ["blockNumber", "gasUsed", "status", "transactionIndex"] {
        assert_eq!(num(&tool[k]), num(&o[k]), "{k} of {hash}: {tool} vs {o}");
    }
    same_logs(&tool["logs"], &o["logs"]);
    o
}

/// Runs foundry's cast against a target: `run` with nothing to sign with, `signed` with the
/// test key file in its environment (ETH_KEYSTORE, ETH_PASSWORD), never in argv.
struct Cast<'a> {
    bin: &'a Path,
    url: &'a str,
    key: &'a TestKey,
}

impl Cast<'_> {
    #[track_caller]
    fn exec(&self, args: &[&str], sign: bool) -> String {
        let mut cmd = Command::new(self.bin);
        cmd.args(args)
            .env("ETH_RPC_URL", self.url)
            .env_remove("ETH_KEYSTORE")
            .env_remove("ETH_PASSWORD")
            .env_remove("ETH_FROM");
        if sign {
            cmd.env("ETH_KEYSTORE", &self.key.file)
                .env("ETH_PASSWORD", &self.key.passphrase_file);
        }
        let out = cmd.output().expect("run cast");
        assert!(
            out.status.success(),
            "cast {args:?} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// What cast printed on stderr when it failed, as it must.
    #[track_caller]
    fn fails(&self, args: &[&str]) -> String {
        let out = Command::new(self.bin)
            .args(args)
            .env("ETH_RPC_URL", self.url)
            .output()
            .expect("run cast");
        assert!(!out.status.success(), "cast {args:?} succeeded: {out:?}");
        String::from_utf8(out.stderr).unwrap()
    }

    #[track_caller]
    fn run(&self, args: &[&str]) -> String {
        self.exec(args, false)
    }

    #[track_caller]
    fn signed(&self, args: &[&str]) -> String {
        self.exec(args, true)
    }

    #[track_caller]
    fn json(&self, args: &[&str], sign: bool) -> Value {
        let text = self.exec(args, sign);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("cast {args:?}: {e}: {text}"))
    }
}

/// Everything cast is asked, each answer checked against the oracle or a fact of its own.
fn cast_checks(t: &Target, bin: &Path) {
    let key = TestKey::new();
    let c = Cast {
        bin,
        url: &t.url,
        key: &key,
    };
    let me = key.address.as_str();

    // The chain's facts.
    assert_eq!(c.run(&["chain-id"]), t.chain_id.to_string());
    assert_eq!(
        num(&t.oracle("chain_chainID", json!([]))),
        t.chain_id as u128
    );
    let gas_price: u128 = c.run(&["gas-price"]).parse().unwrap();
    assert_eq!(gas_price, num(&t.oracle("chain_gasPrice", json!([]))));
    if t.ours {
        assert_eq!(gas_price, PRICE);
        assert_eq!(c.run(&["base-fee"]), "0");
        assert_eq!(
            c.run(&["rpc", "eth_maxPriorityFeePerGas"]),
            format!("\"0x{PRICE:x}\"")
        );
    }

    // cast's EIP-1559 fees are alloy's estimate: 2 * base fee + the median of the non-zero
    // rewards of eth_feeHistory over the last 10 blocks, else 1 wei, never
    // eth_maxPriorityFeePerGas. Where no recent block holds a transaction the reward is 0 (as
    // the reference gives it), so cast offers 1 wei, which the node refuses (the reference
    // wants the unit price).
    let fund = FUND.to_string();
    let send = [
        "send",
        "--unlocked",
        "--from",
        &t.funder,
        me,
        "--value",
        &fund,
    ];
    if t.ours {
        let history = t.oracle("chain_feeHistory", json!(["0xa", "latest", [20]]));
        assert_eq!(history["reward"], json!([["0x0"]]), "{history}");
        let refused = c.fails(&send);
        assert!(
            refused.contains(
                "error code -32000: invalid gas tip cap. It must be set to the same value as gas unit price"
            ),
            "{refused}"
        );
    }

    // eth_sendTransaction: the unlocked funder pays the test key, legacy (at eth_gasPrice).
    let r = c.json(&[&send[..], &["--legacy", "--json"]].concat(), false);
    assert_eq!(num(&r["type"]), 0, "{r}");
    same_receipt(t, &r);
    assert_eq!((num(&r["status"]), num(&r["gasUsed"])), (1, 21_000));
    assert_eq!(c.run(&["balance", me]), fund);
    assert_eq!(c.run(&["nonce", me]), "0");

    // Raw transactions signed by cast (cast mktx), sent by cast publish: legacy, EIP-2930
    // (an access list naming the payee: 2,400 gas more) and EIP-1559. The hash the node
    // answers is the keccak of the signed bytes; the sender paid value + gasUsed * price.
    let payee = "0x5151515151515151515151515151515151515151";
    let access_list = format!(r#"[{{"address":"{payee}","storageKeys":[]}}]"#);
    let listed = ["--legacy", "--access-list", &access_list];
    if t.ours {
        // The reference's eth_estimateGas (EthDoCall) counts the intrinsic gas without the
        // access list, and so does ours: 21,000, 2,400 short of what the transaction needs,
        // so a transaction cast makes with that estimate is refused.
        let estimate = c.run(
            &[
                &["estimate", payee, "--value", "1", "--from", me],
                &listed[1..],
            ]
            .concat(),
        );
        assert_eq!(estimate, "21000");
        let raw = c.signed(&[&["mktx", payee, "--value", "1"], &listed[..]].concat());
        let refused = c.fails(&["publish", &raw]);
        assert!(
            refused.contains("error code -32000: intrinsic gas too low"),
            "{refused}"
        );
    }
    let with_gas = [&listed[..], &["--gas-limit", "23400"]].concat();
    let kinds: [(&[&str], u128, u128); 3] = [
        (&["--legacy"], 0, 21_000),
        (&with_gas, 1, 23_400),
        (&[], 2, 21_000),
    ];
    for (nonce, (flags, kind, gas)) in kinds.into_iter().enumerate() {
        let value = 1000 + nonce as u128;
        let value_text = value.to_string();
        let raw = c.signed(&[&["mktx", payee, "--value", &value_text], flags].concat());
        // A legacy transaction is an RLP list (0xc0 and up); a typed one starts with its type.
        let first = u8::from_str_radix(&raw[2..4], 16).unwrap();
        assert_eq!(
            first as u128,
            if kind == 0 {
                first.max(0xc0) as u128
            } else {
                kind
            }
        );
        let hash = c.run(&["keccak", &raw]);
        assert_eq!(c.run(&["publish", "--async", &raw]), hash);
        let r = c.json(&["receipt", &hash, "--json"], false);
        let o = same_receipt(t, &r);
        assert_eq!((num(&r["status"]), num(&r["type"])), (1, kind), "{r}");
        assert_eq!(num(&r["gasUsed"]), gas, "{r}");
        let tx = c.json(&["tx", &hash, "--json"], false);
        assert_eq!(low(&tx["hash"]), hash);
        assert_eq!(low(&tx["from"]), me);
        assert_eq!(num(&tx["type"]), kind, "{tx}");
        assert_eq!(
            (num(&tx["nonce"]), num(&tx["value"])),
            (nonce as u128, value)
        );
        if kind == 1 {
            assert_eq!(tx["accessList"][0]["address"], json!(payee), "{tx}");
        }
        let otx = t.oracle("chain_getTransactionByHash", json!([hash]));
        assert_eq!(low(&otx["from"]), me);
        assert_eq!(num(&otx["nonce"]), nonce as u128);
        let price = num(&r["effectiveGasPrice"]);
        if t.ours {
            assert_eq!(price, PRICE);
            assert_eq!(num(&o["gasPrice"]), PRICE, "{o}");
        }
        let block = num(&r["blockNumber"]);
        let balance = |b: u128| -> u128 {
            c.run(&["balance", me, "--block", &b.to_string()])
                .parse()
                .unwrap()
        };
        assert_eq!(balance(block - 1) - balance(block), value + gas * price);
        assert_eq!(c.run(&["nonce", me]), (nonce + 1).to_string());
    }
    assert_eq!(
        num(&t.oracle("chain_getBalance", json!([payee, "latest"]))),
        1000 + 1001 + 1002
    );

    // The Token deployed by cast send --create (EIP-1559), at the address of the sender and
    // its nonce; its code is solc's runtime code, its slot 0 the supply.
    let token = compiled("Token");
    let expected = c.run(&["compute-address", me, "--nonce", "3"]);
    let expected = expected.rsplit(' ').next().unwrap().to_lowercase();
    let args = c.run(&["abi-encode", "constructor(uint256)", &SUPPLY.to_string()]);
    let create = format!("0x{}{}", hex::encode(&token.bytecode), &args[2..]);
    let r = c.json(&["send", "--create", &create, "--json"], true);
    same_receipt(t, &r);
    assert_eq!(num(&r["status"]), 1, "{r}");
    assert_eq!(low(&r["contractAddress"]), expected);
    let ca = expected.as_str();
    let deploy_block = num(&r["blockNumber"]);
    let code = format!("0x{}", hex::encode(&token.deployed));
    assert_eq!(c.run(&["code", ca]), code);
    assert_eq!(
        t.oracle("chain_getCode", json!([ca, "latest"])),
        json!(code)
    );
    let slot0 = format!("0x{}", hex::encode(uint_word(SUPPLY)));
    assert_eq!(c.run(&["storage", ca, "0"]), slot0);
    let zero = format!("0x{}", "0".repeat(64));
    assert_eq!(
        t.oracle("chain_getStorageAt", json!([ca, zero, "latest"])),
        json!(slot0)
    );

    // A token transfer, legacy, sent by cast send: its Transfer log.
    let holder = "0x6262626262626262626262626262626262626262";
    let r = c.json(
        &[
            "send",
            "--legacy",
            ca,
            "transfer(address,uint256)",
            holder,
            "77",
            "--json",
        ],
        true,
    );
    same_receipt(t, &r);
    assert_eq!((num(&r["status"]), num(&r["type"])), (1, 0), "{r}");
    let transfer_topic = c.run(&["sig-event", "Transfer(address,address,uint256)"]);
    assert_eq!(
        r["logs"][0]["topics"],
        json!([transfer_topic, topic_of(me), topic_of(holder)])
    );
    assert_eq!(
        low(&r["logs"][0]["data"]),
        format!("0x{}", hex::encode(uint_word(77)))
    );
    let transfer_hash = low(&r["transactionHash"]);
    let transfer_block = num(&r["blockNumber"]);

    // eth_call and eth_estimateGas.
    assert_eq!(
        c.run(&["call", ca, "balanceOf(address)(uint256)", holder]),
        "77"
    );
    let holder_addr = chain_node::crypto::Address::parse_lenient(holder).unwrap();
    let data = token.call_data("balanceOf(address)", &[addr_word(&holder_addr)]);
    let answer = t.oracle(
        "chain_call",
        json!([{"to": ca, "data": format!("0x{}", hex::encode(data))}, "latest"]),
    );
    assert_eq!(num(&answer), 77);
    let estimate = c.run(&[
        "estimate",
        ca,
        "transfer(address,uint256)",
        holder,
        "1",
        "--from",
        me,
    ]);
    let data = token.call_data(
        "transfer(address,uint256)",
        &[addr_word(&holder_addr), uint_word(1)],
    );
    let oracle_estimate = t.oracle(
        "chain_estimateGas",
        json!([{"from": me, "to": ca, "data": format!("0x{}", hex::encode(data))}]),
    );
    assert_eq!(estimate, num(&oracle_estimate).to_string());
    assert_eq!(
        c.run(&["estimate", holder, "--value", "1", "--from", me]),
        "21000"
    );

    // eth_getLogs: the mint and the transfer.
    let from = deploy_block.to_string();
    let logs = c.json(
        &[
            "logs",
            "--address",
            ca,
            "Transfer(address,address,uint256)",
            "--from-block",
            &from,
            "--to-block",
            "latest",
            "--json",
        ],
        false,
    );
    let oracle_logs = t.oracle(
        "chain_getLogs",
        json!([{"address": ca, "fromBlock": format!("0x{deploy_block:x}"), "toBlock": "latest"}]),
    );
    same_logs(&logs, &oracle_logs);
    assert_eq!(logs.as_array().unwrap().len(), 2, "{logs}");
    assert_eq!(low(&logs[1]["transactionHash"]), transfer_hash);

    // Blocks: by number and the latest.
    let check_block = |b: &Value| {
        let n = num(&b["number"]);
        let o = t.oracle("chain_getBlockByNumber", json!([format!("0x{n:x}"), false]));
        for k in [
            "hash",
            "parentHash",
            "stateRoot",
            "transactionsRoot",
            "receiptsRoot",
        ] {
            assert_eq!(low(&b[k]), low(&o[k]), "{k} of block {n}: {b} vs {o}");
        }
        assert_eq!(num(&b["timestamp"]), num(&o["timestamp"]));
        assert_eq!(b["transactions"], o["transactions"]);
        if t.ours {
            assert_eq!(num(&b["baseFeePerGas"]), 0);
        }
    };
    let b = c.json(&["block", &transfer_block.to_string(), "--json"], false);
    assert_eq!(b["transactions"], json!([transfer_hash]));
    check_block(&b);
    let latest = c.json(&["block", "latest", "--json"], false);
    check_block(&latest);
    assert_eq!(c.run(&["block-number"]), num(&latest["number"]).to_string());

    if t.ours {
        message_signatures(t, &c);
    }
}

/// cast wallet sign hashes under Ethereum's prefix ("\x19Ethereum Signed Message:\n" + length).
/// The reference's personal_ecRecover recovers under its own chain's prefix only, and so does
/// ours ("\x19Chain Signed Message:\n"), while chain_recoverFromMessage accepts both. A hash
/// under our prefix, signed by cast with --no-hash, recovers to the signer.
fn message_signatures(t: &Target, c: &Cast) {
    let me = c.key.address.as_str();
    let message = "hello from cast";
    let hex_message = format!("0x{}", hex::encode(message));
    let ethereum = c.signed(&["wallet", "sign", message]);
    c.run(&["wallet", "verify", "--address", me, message, &ethereum]);
    let recovered = ok(http_call(
        &t.url,
        "personal_ecRecover",
        json!([hex_message, ethereum]),
    ));
    assert_ne!(
        low(&recovered),
        me,
        "personal_ecRecover took Ethereum's prefix"
    );
    let recovered = t.oracle(
        "chain_recoverFromMessage",
        json!([me, hex_message, ethereum, "latest"]),
    );
    assert_eq!(low(&recovered), me);

    let mut prefixed = format!("\x19Chain Signed Message:\n{}", message.len()).into_bytes();
    prefixed.extend_from_slice(message.as_bytes());
    let hash = c.run(&["keccak", &format!("0x{}", hex::encode(&prefixed))]);
    let ours = c.signed(&["wallet", "sign", "--no-hash", &hash]);
    let recovered = ok(http_call(
        &t.url,
        "personal_ecRecover",
        json!([hex_message, ours]),
    ));
    assert_eq!(low(&recovered), me);
}

/// Runs a client script with the node's URL, a funded test key and a recipient in its
/// environment; checks its JSON summary against the oracle.
fn script_checks(t: &Target, mut cmd: Command, recipient: &str) {
    let key = TestKey::new();
    t.fund(&key.address);
    let out = cmd
        .env("ETH_RPC_URL", &t.url)
        .env("ETH_TEST_KEY", &key.secret)
        .env("ETH_TEST_RECIPIENT", recipient)
        .output()
        .expect("run the client script");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let s: Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    summary::summary_checks(t, &s, &key.address, recipient);
}

/// `python web3_check.py` in the web3.py virtual environment.
fn web3py_script() -> Command {
    let mut cmd = Command::new(web3_python());
    cmd.arg(oracle_file("web3_check.py"));
    cmd
}

/// `node ethers_check.mjs` with ethers on NODE_PATH.
fn ethers_script() -> Command {
    let mut cmd = Command::new("node");
    cmd.arg(oracle_file("ethers_check.mjs"))
        .env("NODE_PATH", ethers());
    cmd
}

#[test]
fn cast_against_chaind() {
    if skipped() {
        return;
    }
    let cast = &foundry_bins().1;
    cast_checks(&Target::chaind(), cast);
}

#[test]
fn web3py_against_chaind() {
    if skipped() {
        return;
    }
    let script = web3py_script();
    script_checks(
        &Target::chaind(),
        script,
        "0x7171717171717171717171717171717171717171",
    );
}

#[test]
fn ethers_against_chaind() {
    if skipped() {
        return;
    }
    let script = ethers_script();
    script_checks(
        &Target::chaind(),
        script,
        "0x7272727272727272727272727272727272727272",
    );
}

/// The same tools against anvil, an Ethereum dev node: what passes there is what the tools
/// expect of any node.
#[test]
#[ignore = "a check of the tests themselves against anvil: cargo test --test eth_tools -- --ignored"]
fn tools_against_anvil() {
    if skipped() {
        return;
    }
    let t = Target::anvil();
    cast_checks(&t, &foundry_bins().1);
    script_checks(
        &t,
        web3py_script(),
        "0x7171717171717171717171717171717171717171",
    );
    script_checks(
        &t,
        ethers_script(),
        "0x7272727272727272727272727272727272727272",
    );
}
