//! Contracts through `chaind --dev` over HTTP, with the solc-compiled contracts of
//! `tests/contracts`: deployed by every path (personal and chain send methods, legacy and
//! the deploy type, raw transactions of both), called (the execution type, legacy calls,
//! `chain_call`), their events in receipts, reverts with their reason, running out of gas,
//! CREATE2 and SELFDESTRUCT as Cancun defines it, storage read at an older block, the account
//! methods, and the refusals of the contract types' rules.

mod common;

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::transaction::{SmartContractDeploy, SmartContractExecution, Transaction};
use common::contracts::{addr_word, compiled, create_address, raw_legacy, uint_word};
use common::{err, http_call, ok, quantity_of as number, u256, Node, PRICE};
use serde_json::{json, Value};

struct Dev<'a> {
    url: &'a str,
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

impl Dev<'_> {
    fn call(&self, m: &str, p: Value) -> Value {
        http_call(self.url, m, p)
    }

    fn send(&self, m: &str, p: Value) -> Value {
        let hash = ok(self.call(m, p));
        common::wait_receipt(self.url, &hash)
    }

    fn raw(&self, raw: String) -> Value {
        self.send("chain_sendRawTransaction", json!([raw]))
    }

    fn nonce(&self, a: &Address) -> u64 {
        number(&ok(self.call(
            "chain_getTransactionCount",
            json!([hex0x(&a.0), "pending"]),
        ))) as u64
    }

    /// `chain_call` of `data` on `to` at `block`, the result's bytes.
    fn view(&self, to: &Address, data: Vec<u8>, block: Value) -> Vec<u8> {
        let out = ok(self.call(
            "chain_call",
            json!([{"to": hex0x(&to.0), "data": hex0x(&data)}, block]),
        ));
        hex::decode(out.as_str().unwrap().trim_start_matches("0x")).unwrap()
    }
}

fn node() -> Node {
    common::dev_http_node("chain,personal,txpool,debug")
}

fn key(b: u8) -> SecretKey {
    SecretKey::from_slice(&[b; 32]).unwrap()
}

/// Imports `k` under "pw", funds it from the developer account and unlocks it.
fn funded(d: &Dev<'_>, dev: &str, k: &SecretKey) -> String {
    let a = ok(d.call(
        "personal_importRawKey",
        json!([hex::encode(&k.to_bytes()[..]), "pw"]),
    ));
    let r = d.send(
        "personal_sendValueTransfer",
        json!([{"from": dev, "to": a, "value": format!("0x{:x}", 10u128.pow(24))}, ""]),
    );
    assert_eq!(r["status"], json!("0x1"));
    ok(d.call("personal_unlockAccount", json!([a, "pw", 0])));
    a.as_str().unwrap().to_string()
}

fn deploy_tx(k: &SecretKey, nonce: u64, input: Vec<u8>) -> String {
    let mut tx = Transaction::of(SmartContractDeploy {
        nonce,
        gas_price: u256(PRICE),
        gas: 3_000_000,
        to: None,
        value: [0; 32],
        from: k.address(),
        input,
        human_readable: false,
        code_format: 0,
        signatures: Vec::new(),
    });
    tx.sign(k, 1000);
    hex0x(&tx.encode())
}

fn execution_tx(k: &SecretKey, nonce: u64, to: Address, input: Vec<u8>) -> String {
    let mut tx = Transaction::of(SmartContractExecution {
        nonce,
        gas_price: u256(PRICE),
        gas: 500_000,
        to,
        value: [0; 32],
        from: k.address(),
        input,
        signatures: Vec::new(),
    });
    tx.sign(k, 1000);
    hex0x(&tx.encode())
}

fn word(n: u128) -> Vec<u8> {
    uint_word(n).to_vec()
}

/// An ERC-20 deployed by each of the five paths behaves the same; transfers by the
/// execution type and by legacy calls move balances and log Transfer events in receipts.
#[test]
fn a_token_deployed_by_every_path_transfers_and_logs() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x61);
    let me = k.address();
    let a = funded(&d, &dev, &k);
    let token = compiled("Token");
    let supply = 10u128.pow(24);
    let code = token.with_args(&[uint_word(supply)]);
    let input = hex0x(&code);
    let mut tokens = Vec::new();
    // 1. personal_sendTransaction, legacy, data, no to (gas estimated).
    let r = d.send(
        "personal_sendTransaction",
        json!([{"from": a, "data": input}, "pw"]),
    );
    tokens.push(r);
    // 2. chain_sendTransaction, typeInt 40.
    tokens.push(d.send(
        "chain_sendTransaction",
        json!([{"typeInt": 40, "from": a, "value": "0x0", "input": input, "codeFormat": 0, "humanReadable": false}]),
    ));
    // 3. chain_sendTransaction, legacy with `input`.
    tokens.push(d.send(
        "chain_sendTransaction",
        json!([{"from": a, "input": input}]),
    ));
    // 4. A raw legacy creation. 5. A raw deploy (0x28).
    let nonce = d.nonce(&me);
    tokens.push(d.raw(raw_legacy(&k, nonce, None, 0, code.clone(), 3_000_000)));
    tokens.push(d.raw(deploy_tx(&k, nonce + 1, code.clone())));
    let mut addresses = Vec::new();
    for (i, r) in tokens.iter().enumerate() {
        assert_eq!(r["status"], json!("0x1"), "path {i}: {r}");
        let nonce = number(
            &ok(d.call("chain_getTransactionByHash", json!([r["transactionHash"]])))["nonce"],
        ) as u64;
        let address = create_address(&me, nonce);
        assert_eq!(r["contractAddress"], json!(hex0x(&address.0)), "path {i}");
        // The constructor's mint is a Transfer from the zero address.
        let log = &r["logs"][0];
        assert_eq!(log["address"], json!(hex0x(&address.0)));
        assert_eq!(log["topics"][1], json!(hex0x(&[0u8; 32])));
        assert_eq!(log["topics"][2], json!(hex0x(&addr_word(&me))));
        assert_eq!(log["data"], json!(hex0x(&uint_word(supply))));
        assert_eq!(log["transactionHash"], r["transactionHash"]);
        assert_eq!(
            ok(d.call("chain_getCode", json!([hex0x(&address.0), "latest"]))),
            json!(hex0x(&token.deployed)),
            "path {i}: the runtime code solc made"
        );
        addresses.push(address);
    }
    assert_eq!(tokens[1]["typeInt"], json!(40));
    assert_eq!(tokens[1]["codeFormat"], json!("0x0"));
    assert_eq!(tokens[1]["humanReadable"], json!(false));
    assert_eq!(
        tokens[0]["to"],
        json!(null),
        "a creation's receipt has to null"
    );
    // Gas left out was estimated: enough, and not far above what it used.
    let tx0 = ok(d.call(
        "chain_getTransactionByHash",
        json!([tokens[0]["transactionHash"]]),
    ));
    assert!(number(&tx0["gas"]) >= number(&tokens[0]["gasUsed"]));
    assert!(number(&tx0["gas"]) < number(&tokens[0]["gasUsed"]) * 2);

    // Transfers: the execution type (signed here and by the node), a legacy call.
    let bob = Address([0xb0; 20]);
    let t = addresses[4];
    let transfer = token.call_data(
        "transfer(address,uint256)",
        &[addr_word(&bob), uint_word(1000)],
    );
    let r1 = d.raw(execution_tx(&k, d.nonce(&me), t, transfer.clone()));
    let r2 = d.send(
        "chain_sendTransaction",
        json!([{"typeInt": 48, "from": a, "to": hex0x(&t.0), "value": "0x0", "input": hex0x(&transfer)}]),
    );
    let r3 = d.raw(raw_legacy(
        &k,
        d.nonce(&me),
        Some(t),
        0,
        transfer.clone(),
        200_000,
    ));
    for r in [&r1, &r2, &r3] {
        assert_eq!(r["status"], json!("0x1"), "{r}");
        assert_eq!(r["logs"].as_array().unwrap().len(), 1);
        assert_eq!(
            r["logs"][0]["topics"][0],
            json!(hex0x(&chain_node::crypto::keccak256(
                b"Transfer(address,address,uint256)"
            )))
        );
        assert_ne!(r["logsBloom"], json!(hex0x(&[0u8; 256])));
    }
    assert_eq!(r1["type"], json!("TxTypeSmartContractExecution"));
    let balance_of = |who: &Address, block: Value| {
        d.view(
            &t,
            token.call_data("balanceOf(address)", &[addr_word(who)]),
            block,
        )
    };
    assert_eq!(balance_of(&bob, json!("latest")), word(3000));
    assert_eq!(balance_of(&me, json!("latest")), word(supply - 3000));
    // At the block of the first transfer, bob had 1000 (state read at an older block).
    assert_eq!(balance_of(&bob, r1["blockNumber"].clone()), word(1000));
    // The block's bloom covers the token's logs; the header has it too.
    let block = ok(d.call("chain_getBlockByNumber", json!([r1["blockNumber"], false])));
    assert_eq!(block["logsBloom"], r1["logsBloom"]);
}

/// A revert gives the reference's status (txError 0x9) and pays its gas; chain_call and
/// chain_estimateGas answer it as error 3 with the reason and the data; running out of gas
/// uses the whole limit (txError 0x7); a panic is a revert too; storage written before stays.
#[test]
fn reverts_and_out_of_gas_are_failed_receipts_and_call_errors() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x62);
    let me = k.address();
    let a = funded(&d, &dev, &k);
    let rev = compiled("Reverter");
    let r = common::contracts::deploy(&url, &k, 0, rev.bytecode.clone());
    let store7 = rev.call_data("store(uint256)", &[uint_word(7)]);
    let s1 = d.raw(raw_legacy(&k, 1, Some(r), 0, store7, 100_000));
    assert_eq!(s1["status"], json!("0x1"));
    let before = number(&ok(d.call("chain_getBalance", json!([a]))));
    let failed = d.raw(raw_legacy(
        &k,
        2,
        Some(r),
        0,
        rev.call_data("revertWithReason()", &[]),
        100_000,
    ));
    assert_eq!(
        (failed["status"].clone(), failed["txError"].clone()),
        (json!("0x0"), json!("0x9"))
    );
    let used = number(&failed["gasUsed"]);
    assert!(used > 21_000 && used < 100_000);
    assert_eq!(
        number(&ok(d.call("chain_getBalance", json!([a])))),
        before - used * PRICE,
        "a failed transaction pays the gas it used"
    );
    assert_eq!(
        ok(d.call("chain_getTransactionCount", json!([a]))),
        json!("0x3")
    );
    let oog = d.raw(raw_legacy(
        &k,
        3,
        Some(r),
        0,
        rev.call_data("burnGas()", &[]),
        80_000,
    ));
    assert_eq!(
        (oog["txError"].clone(), oog["gasUsed"].clone()),
        (json!("0x7"), json!("0x13880"))
    );
    let panic = d.raw(raw_legacy(
        &k,
        4,
        Some(r),
        0,
        rev.call_data("assertFail()", &[]),
        80_000,
    ));
    assert_eq!(panic["txError"], json!("0x9"));
    // chain_call and estimateGas: error 3, the reason, the revert data.
    let call = json!({"from": a, "to": hex0x(&r.0), "data": hex0x(&rev.call_data("revertWithReason()", &[]))});
    for (m, p) in [
        ("chain_call", json!([call, "latest"])),
        ("chain_estimateGas", json!([call])),
    ] {
        let v = d.call(m, p);
        let e = &v["error"];
        assert_eq!(e["code"], json!(3), "{m}: {v}");
        assert_eq!(
            e["message"],
            json!("execution reverted: nope: reverted on purpose"),
            "{m}"
        );
        assert!(e["data"].as_str().unwrap().starts_with("0x08c379a0"), "{m}");
    }
    // A custom error: "execution reverted" with its data.
    let v = d.call(
        "chain_call",
        json!([{"to": hex0x(&r.0), "data": hex0x(&rev.call_data("revertCustom()", &[]))}, "latest"]),
    );
    assert_eq!(
        (v["error"]["code"].clone(), v["error"]["message"].clone()),
        (json!(3), json!("execution reverted"))
    );
    // Out of gas in a call and at the estimate's cap.
    let burn = json!({"to": hex0x(&r.0), "data": hex0x(&rev.call_data("burnGas()", &[])), "gas": "0x30d40"});
    assert_eq!(
        err(d.call("chain_call", json!([burn, "latest"]))),
        (-32000, "out of gas".into())
    );
    assert_eq!(
        err(d.call("chain_estimateGas", json!([burn]))),
        (-32000, "gas required exceeds allowance (200000)".into())
    );
    // Storage: slot 0 is 7, read through getStorageAt, the call and at the older block.
    let at = |block: Value| ok(d.call("chain_getStorageAt", json!([hex0x(&r.0), "0x0", block])));
    assert_eq!(at(json!("latest")), json!(hex0x(&uint_word(7))));
    assert_eq!(at(s1["blockNumber"].clone()), json!(hex0x(&uint_word(7))));
    let deployed_at = number(&s1["blockNumber"]) - 1;
    assert_eq!(
        at(json!(format!("0x{deployed_at:x}"))),
        json!(hex0x(&[0u8; 32]))
    );
    let s2 = d.raw(raw_legacy(
        &k,
        5,
        Some(r),
        0,
        rev.call_data("store(uint256)", &[uint_word(9)]),
        100_000,
    ));
    assert_eq!(at(json!("latest")), json!(hex0x(&uint_word(9))));
    assert_eq!(
        at(s1["blockNumber"].clone()),
        json!(hex0x(&uint_word(7))),
        "the older state is kept"
    );
    assert_eq!(
        d.view(
            &r,
            rev.call_data("stored()", &[]),
            s1["blockNumber"].clone()
        ),
        word(7)
    );
    assert_eq!(s2["logs"][0]["data"], json!(hex0x(&uint_word(9))));
    let _ = me;
}

/// CREATE2 puts the child where `predict` says; a contract calling another leaves both
/// logs in order; SELFDESTRUCT of a contract made in an earlier transaction sends its
/// balance and keeps its code (EIP-6780), one made and destroyed in the same transaction
/// leaves nothing.
#[test]
fn create2_inner_calls_and_selfdestruct() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x63);
    let me = k.address();
    funded(&d, &dev, &k);
    let f = compiled("Factory");
    let factory = common::contracts::deploy(&url, &k, 0, f.bytecode.clone());
    let salt = [0x5a; 32];
    let predicted = d.view(
        &factory,
        f.call_data("predict(bytes32)", &[salt]),
        json!("latest"),
    );
    let child = Address(predicted[12..].try_into().unwrap());
    let r = d.raw(raw_legacy(
        &k,
        1,
        Some(factory),
        1000,
        f.call_data("deploy(bytes32)", &[salt]),
        1_000_000,
    ));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    assert_eq!(r["logs"][0]["data"], json!(hex0x(&addr_word(&child))));
    // Child's runtime code, with its immutable (the factory's address) filled in.
    let mut child_code = compiled("Child").deployed;
    let at = child_code.windows(32).position(|w| w == [0u8; 32]).unwrap();
    child_code[at..at + 32].copy_from_slice(&addr_word(&factory));
    assert_eq!(
        ok(d.call("chain_getCode", json!([hex0x(&child.0), "latest"]))),
        json!(hex0x(&child_code))
    );
    assert_eq!(
        ok(d.call("chain_getBalance", json!([hex0x(&child.0)]))),
        json!("0x3e8")
    );
    let acct = ok(d.call("chain_getAccount", json!([hex0x(&child.0), "latest"])));
    assert_eq!(acct["accType"], json!(2));
    assert_eq!(acct["account"]["key"], json!({"keyType": 3, "key": {}}));
    assert_eq!(acct["account"]["nonce"], json!(1));
    assert_eq!(acct["account"]["vmVersion"], json!(1));
    assert_eq!(
        ok(d.call(
            "chain_isContractAccount",
            json!([hex0x(&child.0), "latest"])
        )),
        json!(true)
    );
    // The same salt again collides: the inner CREATE2 fails, so does the call.
    let again = d.raw(raw_legacy(
        &k,
        2,
        Some(factory),
        0,
        f.call_data("deploy(bytes32)", &[salt]),
        1_000_000,
    ));
    assert_eq!(again["status"], json!("0x0"));
    // Destroying the child made in an earlier transaction: its balance goes, its code stays.
    let sink = Address([0x5e; 20]);
    let c = compiled("Child");
    let gone = d.raw(raw_legacy(
        &k,
        3,
        Some(child),
        0,
        c.call_data("destroy(address)", &[addr_word(&sink)]),
        200_000,
    ));
    assert_eq!(gone["status"], json!("0x1"));
    assert_eq!(
        ok(d.call("chain_getBalance", json!([hex0x(&sink.0)]))),
        json!("0x3e8")
    );
    assert_eq!(
        ok(d.call("chain_getCode", json!([hex0x(&child.0), "latest"]))),
        json!(hex0x(&child_code))
    );
    // Made and destroyed in one transaction: no account is left.
    let salt2 = [0x5b; 32];
    let eph = d.view(
        &factory,
        f.call_data("predict(bytes32)", &[salt2]),
        json!("latest"),
    );
    let eph = Address(eph[12..].try_into().unwrap());
    let r = d.raw(raw_legacy(
        &k,
        4,
        Some(factory),
        0,
        f.call_data(
            "deployAndDestroy(bytes32,address)",
            &[salt2, addr_word(&sink)],
        ),
        1_000_000,
    ));
    assert_eq!(r["status"], json!("0x1"), "{r}");
    assert_eq!(
        ok(d.call("chain_getCode", json!([hex0x(&eph.0), "latest"]))),
        json!("0x")
    );
    assert_eq!(
        ok(d.call("chain_accountCreated", json!([hex0x(&eph.0), "latest"]))),
        json!(false)
    );
    assert_eq!(
        ok(d.call("chain_getAccount", json!([hex0x(&eph.0), "latest"]))),
        json!(null)
    );

    // A contract calling another: Counter's log, then Caller's.
    let counter = common::contracts::deploy(&url, &k, 5, compiled("Counter").bytecode);
    let caller_c = compiled("Caller");
    let caller = common::contracts::deploy(&url, &k, 6, caller_c.with_args(&[addr_word(&counter)]));
    let r = d.raw(raw_legacy(
        &k,
        7,
        Some(caller),
        0,
        caller_c.call_data("callIncrement()", &[]),
        300_000,
    ));
    assert_eq!(r["status"], json!("0x1"));
    let logs = r["logs"].as_array().unwrap();
    assert_eq!(logs.len(), 2);
    assert_eq!(logs[0]["address"], json!(hex0x(&counter.0)));
    assert_eq!(logs[1]["address"], json!(hex0x(&caller.0)));
    assert_eq!(
        (logs[0]["logIndex"].clone(), logs[1]["logIndex"].clone()),
        (json!("0x0"), json!("0x1"))
    );
    assert_eq!(
        d.view(
            &caller,
            caller_c.call_data("callGet()", &[]),
            json!("latest")
        ),
        word(1)
    );
    // An externally owned account: type 1, not a contract.
    let eoa = ok(d.call("chain_getAccount", json!([hex0x(&me.0), "latest"])));
    assert_eq!(eoa["accType"], json!(1));
    assert!(eoa["account"].get("codeHash").is_none());
    assert_eq!(
        ok(d.call("chain_isContractAccount", json!([hex0x(&me.0), "latest"]))),
        json!(false)
    );
}

/// The contract types' rules refuse what the reference refuses, and nothing changes.
#[test]
fn the_contract_types_rules_refuse_with_the_reference_texts() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x64);
    let a = funded(&d, &dev, &k);
    let counter = common::contracts::deploy(&url, &k, 0, compiled("Counter").bytecode);
    let c = hex0x(&counter.0);
    let eoa = "0x3535353535353535353535353535353535353535";
    let cases: Vec<(Value, &str)> = vec![
        (
            json!({"typeInt": 8, "from": a, "to": c, "value": "0x1"}),
            "this type transaction cannot be sent to contract addresses",
        ),
        (
            json!({"typeInt": 48, "from": a, "to": eoa, "value": "0x0", "input": "0x01"}),
            "not a program account (e.g., an account having code and storage)",
        ),
        (
            json!({"typeInt": 40, "from": a, "to": eoa, "value": "0x0", "input": "0x6000", "codeFormat": 0, "humanReadable": false, "gas": "0x30d40"}),
            "contract deploy transaction can't have a recipient address",
        ),
        // A human-readable address costs 4,000,000,000 gas first (TxGasHumanReadable), then
        // is refused.
        (
            json!({"typeInt": 40, "from": a, "value": "0x0", "input": "0x6000", "codeFormat": 0, "humanReadable": true, "gas": "0x30d40"}),
            "intrinsic gas too low",
        ),
        (
            json!({"typeInt": 40, "from": a, "value": "0x0", "input": "0x6000", "codeFormat": 0, "humanReadable": true, "gas": "0xee6cbb22"}),
            "Human-readable address is not supported now",
        ),
        (
            json!({"typeInt": 40, "from": a, "value": "0x0", "input": "0x6000", "codeFormat": 1, "humanReadable": false, "gas": "0x30d40"}),
            "smart contract code format is invalid",
        ),
        (
            json!({"typeInt": 40, "from": a, "input": "0x6000", "codeFormat": 0, "humanReadable": false}),
            r#"json:"value" is required for TxTypeSmartContractDeploy"#,
        ),
        (
            json!({"typeInt": 48, "from": a, "to": c, "value": "0x0", "data": "0x01"}),
            r#"json:"data" is not a field of TxTypeSmartContractExecution"#,
        ),
        (
            json!({"from": a}),
            "contract creation without any data provided",
        ),
    ];
    let count = ok(d.call("chain_getTransactionCount", json!([a])));
    for (args, message) in cases {
        assert_eq!(
            err(d.call("chain_sendTransaction", json!([args]))),
            (-32000, message.to_string()),
            "{args}"
        );
    }
    assert_eq!(ok(d.call("chain_getTransactionCount", json!([a]))), count);
    assert_eq!(
        ok(d.call("txpool_status", json!([]))),
        json!({"pending": "0x0", "queued": "0x0"})
    );
    // Parameter errors of the call methods.
    assert_eq!(
        err(d.call("chain_call", json!([{"to": "abcd"}, "latest"]))),
        (-32602, "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.to of type common.Address".into())
    );
    assert_eq!(
        err(d.call("chain_call", json!([]))),
        (-32602, "missing value for required argument 0".into())
    );
    assert_eq!(
        err(d.call("chain_call", json!([{"to": c}, "0xffffffff"]))),
        (
            -32000,
            "the header does not exist (block number: 4294967295)".into()
        )
    );
    assert_eq!(
        err(d.call("chain_getAccount", json!([c, "blockNumber"]))),
        (
            -32602,
            "invalid argument 1: hex string without 0x prefix".into()
        )
    );
    // Calling Counter without data: no fallback, reverts with empty data.
    assert_eq!(
        err(d.call("chain_call", json!([{"to": c}, "latest"]))),
        (-32000, "evm: execution reverted".into())
    );
    // An invalid opcode at the start of creation code.
    assert_eq!(
        err(d.call("chain_call", json!([{"data": "0xb3f98adc"}, "latest"]))),
        (
            -32000,
            "VM error occurs while running smart contract".into()
        )
    );
    // Computation cost of a call, and gas estimates of what runs no code.
    let cost = ok(d.call(
        "chain_estimateComputationCost",
        json!([{"to": c, "data": "0xd09de08a"}, "latest"]),
    ));
    assert!(number(&cost) > 5_000, "{cost}");
    assert_eq!(
        ok(d.call(
            "chain_estimateGas",
            json!([{"from": a, "to": eoa, "value": "0x1"}])
        )),
        json!("0x5208")
    );
    // From an account without funds, value cannot move.
    let (code, message) = err(d.call("chain_estimateGas", json!([{"to": eoa, "value": "0x1"}])));
    assert_eq!(code, -32000);
    assert!(
        message.starts_with("err: insufficient balance for transfer (supplied gas "),
        "{message}"
    );
}

/// What the node's sign methods make of the contract types is byte for byte what an
/// independent signer (caver-js 1.12.2, tests/vectors/contract-transactions.json) made of the
/// same fields, and the `tx` object has the reference's member order.
#[test]
fn the_node_signs_contract_types_as_caver_js_does() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let vectors: Value = serde_json::from_str(
        &std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/vectors/contract-transactions.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let k1 = vectors["key"]["K1"]
        .as_str()
        .unwrap()
        .trim_start_matches("0x");
    let a = ok(d.call("personal_importRawKey", json!([k1, "pw"])));
    ok(d.call("personal_unlockAccount", json!([a, "pw", 0])));
    let mut checked = 0;
    for rec in vectors["transactions"].as_array().unwrap() {
        let i = &rec["inputs"];
        if i["chainId"] != json!(1000) {
            continue;
        }
        let mut args = json!({
            "from": a,
            "nonce": format!("0x{:x}", i["nonce"].as_u64().unwrap()),
            "gas": format!("0x{:x}", i["gas"].as_u64().unwrap()),
            "gasPrice": i["gasPrice"],
            "value": i["value"],
        });
        match rec["type"].as_str().unwrap() {
            "TxTypeSmartContractDeploy" => {
                args["typeInt"] = json!(40);
                args["input"] = i["input"].clone();
                args["codeFormat"] = i["codeFormat"].clone();
                args["humanReadable"] = i["humanReadable"].clone();
            }
            "TxTypeSmartContractExecution" => {
                args["typeInt"] = json!(48);
                args["to"] = i["to"].clone();
                args["input"] = i["input"].clone();
            }
            _ => {
                args["data"] = i["input"].clone();
                if !i["to"].is_null() {
                    args["to"] = i["to"].clone();
                }
            }
        }
        let signed = ok(d.call("chain_signTransaction", json!([args.clone()])));
        assert_eq!(signed["raw"], rec["raw"], "{}", rec["name"]);
        assert_eq!(signed["tx"]["hash"], rec["txHash"], "{}", rec["name"]);
        // The member order, as the bytes on the wire give it.
        let request =
            json!({"jsonrpc": "2.0", "id": 1, "method": "chain_signTransaction", "params": [args]});
        let (_, body) = common::http_post(&url, &request.to_string());
        let tx = &body[body.find(r#""tx":{"#).unwrap()..];
        let mut keys: Vec<(usize, &str)> = signed["tx"]
            .as_object()
            .unwrap()
            .keys()
            .map(|k| (tx.find(&format!("\"{k}\":")).unwrap(), k.as_str()))
            .collect();
        keys.sort();
        let keys: Vec<&str> = keys.into_iter().map(|(_, k)| k).collect();
        let want: &[&str] = match rec["type"].as_str().unwrap() {
            "TxTypeSmartContractDeploy" => &[
                "typeInt",
                "type",
                "nonce",
                "gasPrice",
                "gas",
                "to",
                "value",
                "from",
                "input",
                "humanReadable",
                "codeFormat",
                "signatures",
                "hash",
            ],
            "TxTypeSmartContractExecution" => &[
                "typeInt",
                "type",
                "nonce",
                "gasPrice",
                "gas",
                "to",
                "value",
                "from",
                "input",
                "signatures",
                "hash",
            ],
            _ => &[
                "nonce",
                "gasPrice",
                "gas",
                "to",
                "value",
                "input",
                "signatures",
                "hash",
            ],
        };
        assert_eq!(keys, want, "{}", rec["name"]);
        checked += 1;
    }
    assert_eq!(checked, 5);
}

/// The debug methods cover contract state: a dump shows a contract's code and storage,
/// the accounts a block modified include a contract changed only by another's inner call,
/// and the storage-trie nodes a block added are counted.
#[test]
fn the_debug_methods_see_contract_state() {
    let n = node();
    let url = n.http.clone().unwrap();
    let d = Dev { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x65);
    funded(&d, &dev, &k);
    let counter_c = compiled("Counter");
    let counter = common::contracts::deploy(&url, &k, 0, counter_c.bytecode.clone());
    let caller_c = compiled("Caller");
    let caller = common::contracts::deploy(&url, &k, 1, caller_c.with_args(&[addr_word(&counter)]));
    let r = d.raw(raw_legacy(
        &k,
        2,
        Some(caller),
        0,
        caller_c.call_data("callIncrement()", &[]),
        300_000,
    ));
    assert_eq!(r["status"], json!("0x1"));
    let block = number(&r["blockNumber"]) as u64;
    let dump = ok(d.call("debug_dumpBlock", json!([format!("0x{block:x}")])));
    let c = &dump["accounts"][hex0x(&counter.0)];
    let runtime = ok(d.call("chain_getCode", json!([hex0x(&counter.0), "latest"])));
    assert_eq!(c["code"], runtime);
    assert_eq!(
        c["codeHash"],
        json!(hex0x(&chain_node::crypto::keccak256(
            &hex::decode(runtime.as_str().unwrap().trim_start_matches("0x")).unwrap()
        )))
    );
    let slot0 = hex0x(&chain_node::crypto::keccak256(&[0u8; 32]));
    assert_eq!(c["storage"][&slot0], json!("0x1"), "{c}");
    assert_ne!(
        c["root"],
        json!("0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421")
    );
    let eoa = &dump["accounts"][hex0x(&k.address().0)];
    assert!(
        eoa.get("code").is_none() && eoa.get("storage").is_none(),
        "{eoa}"
    );
    // Modified between the block before and this one: the sender, the rewardbase, Counter
    // (changed by Caller's inner call; not the transaction's recipient) and not Caller
    // (whose state did not change).
    let modified = ok(d.call(
        "debug_getModifiedAccountsByNumber",
        json!([block - 1, block]),
    ));
    let modified: Vec<&str> = modified
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert!(
        modified.contains(&hex0x(&counter.0).as_str()),
        "{modified:?}"
    );
    assert!(
        modified.contains(&hex0x(&k.address().0).as_str()),
        "{modified:?}"
    );
    assert!(
        !modified.contains(&hex0x(&caller.0).as_str()),
        "{modified:?}"
    );
    let count = |contract: &Address| {
        ok(d.call(
            "debug_getModifiedStorageNodesByNumber",
            json!([hex0x(&contract.0), block - 1, block]),
        ))
    };
    assert_eq!(count(&counter), json!(1), "one slot: a one-leaf trie");
    assert_eq!(count(&caller), json!(0));
    // The state trie's node list holds the storage trie and the code.
    let nodes = ok(d.call("debug_dumpStateTrie", json!([format!("0x{block:x}")])));
    assert!(nodes["nodes"].as_array().unwrap().contains(&c["root"]));
    assert!(nodes["nodes"].as_array().unwrap().contains(&c["codeHash"]));
}
