//! A chain of contract transactions moves between nodes unchanged: made by a `--dev`
//! validator (deploys of both kinds, calls of both kinds, events, a revert, running out of
//! gas, CREATE2, SELFDESTRUCT, storage writes, a contract calling another), exported and
//! imported into a fresh node (`chaind import`), and synced to a follower over the network:
//! every block hash, state root, receipts root and receipt is the same on all three, and so
//! are the contracts' code and storage.

mod common;

use chain_node::crypto::Address;
use chain_node::types::transaction::{SmartContractDeploy, SmartContractExecution, Transaction};
use common::contracts::{addr_word, compiled, create_address, raw_legacy, uint_word};
use common::{
    chaind_init, funded_genesis, genesis_sender, http_args, http_call, ok, u256, validator_datadir,
    wait_until, Node, PRICE,
};
use serde_json::{json, Value};

const CHAIN_ID: u64 = 1000;

fn start(dd: tempfile::TempDir, extra: &[&str]) -> Node {
    let mut args: Vec<&str> = http_args("admin,net,chain,txpool,debug").to_vec();
    args.extend(extra);
    Node::start_in(dd, &args)
}

fn call(n: &Node, method: &str, params: Value) -> Value {
    ok(http_call(n.http.as_ref().unwrap(), method, params))
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

/// Sends the raw transactions one by one on `v`, each sealed before the next; their hashes.
fn send_all(v: &Node, raws: Vec<String>) -> Vec<Value> {
    let url = v.http.clone().unwrap();
    raws.into_iter()
        .map(|raw| {
            let h = call(v, "chain_sendRawTransaction", json!([raw]));
            common::wait_receipt(&url, &h);
            h
        })
        .collect()
}

/// Every block's hash, state root, receipts root and bloom, and every receipt.
fn summary(n: &Node, hashes: &[Value]) -> (Vec<Value>, Vec<Value>) {
    let head = common::quantity_of(&call(n, "chain_blockNumber", json!([]))) as u64;
    let blocks = (0..=head)
        .map(|b| {
            let block = call(n, "chain_getBlockByNumber", json!([format!("0x{b:x}")]));
            json!([
                block["hash"],
                block["stateRoot"],
                block["receiptsRoot"],
                block["logsBloom"]
            ])
        })
        .collect();
    let receipts = hashes
        .iter()
        .map(|h| call(n, "chain_getTransactionReceipt", json!([h])))
        .collect();
    (blocks, receipts)
}

#[test]
fn a_contract_chain_exports_imports_and_syncs_identically() {
    let dir = tempfile::tempdir().unwrap();
    let (vdir, v_key) = validator_datadir(dir.path());
    let (genesis_file, _) = funded_genesis(dir.path(), v_key.address(), CHAIN_ID);
    chaind_init(vdir.path(), &genesis_file);
    let v = start(vdir, &["--dev"]);

    let k = genesis_sender();
    let me = k.address();
    let token = compiled("Token");
    let factory = compiled("Factory");
    let counter = compiled("Counter");
    let caller = compiled("Caller");
    let reverter = compiled("Reverter");
    let child = compiled("Child");
    let t = create_address(&me, 0);
    let f = create_address(&me, 1);
    let cnt = create_address(&me, 2);
    let cal = create_address(&me, 3);
    let rev = create_address(&me, 4);
    let bob = Address([0xb0; 20]);
    let mut deploy = Transaction::of(SmartContractDeploy {
        nonce: 2,
        gas_price: u256(PRICE),
        gas: 1_000_000,
        to: None,
        value: [0; 32],
        from: me,
        input: counter.bytecode.clone(),
        human_readable: false,
        code_format: 0,
        signatures: Vec::new(),
    });
    deploy.sign(&k, CHAIN_ID);
    let mut execute = Transaction::of(SmartContractExecution {
        nonce: 5,
        gas_price: u256(PRICE),
        gas: 200_000,
        to: t,
        value: [0; 32],
        from: me,
        input: token.call_data(
            "transfer(address,uint256)",
            &[addr_word(&bob), uint_word(7)],
        ),
        signatures: Vec::new(),
    });
    execute.sign(&k, CHAIN_ID);
    let salt = [0x11; 32];
    let raws = vec![
        raw_legacy(
            &k,
            0,
            None,
            0,
            token.with_args(&[uint_word(1_000_000)]),
            3_000_000,
        ),
        raw_legacy(&k, 1, None, 0, factory.bytecode.clone(), 3_000_000),
        hex0x(&deploy.encode()),
        raw_legacy(
            &k,
            3,
            None,
            0,
            caller.with_args(&[addr_word(&cnt)]),
            3_000_000,
        ),
        raw_legacy(&k, 4, None, 0, reverter.bytecode.clone(), 3_000_000),
        hex0x(&execute.encode()),
        raw_legacy(
            &k,
            6,
            Some(cal),
            0,
            caller.call_data("callIncrement()", &[]),
            300_000,
        ),
        raw_legacy(
            &k,
            7,
            Some(rev),
            0,
            reverter.call_data("store(uint256)", &[uint_word(5)]),
            100_000,
        ),
        raw_legacy(
            &k,
            8,
            Some(rev),
            0,
            reverter.call_data("revertWithReason()", &[]),
            100_000,
        ),
        raw_legacy(
            &k,
            9,
            Some(rev),
            0,
            reverter.call_data("burnGas()", &[]),
            70_000,
        ),
        raw_legacy(
            &k,
            10,
            Some(f),
            500,
            factory.call_data("deploy(bytes32)", &[salt]),
            1_000_000,
        ),
        raw_legacy(
            &k,
            11,
            Some(f),
            0,
            factory.call_data(
                "deployAndDestroy(bytes32,address)",
                &[[0x12; 32], addr_word(&bob)],
            ),
            1_000_000,
        ),
        raw_legacy(
            &k,
            12,
            Some(rev),
            0,
            reverter.call_data("store(uint256)", &[uint_word(0)]),
            100_000,
        ),
    ];
    let mut hashes = send_all(&v, raws);
    // And a block of several contract transactions at once.
    let batch: Vec<String> = (0..5u64)
        .map(|i| {
            raw_legacy(
                &k,
                13 + i,
                Some(t),
                0,
                token.call_data(
                    "transfer(address,uint256)",
                    &[
                        addr_word(&Address([i as u8 + 1; 20])),
                        uint_word(u128::from(i) + 1),
                    ],
                ),
                200_000,
            )
        })
        .collect();
    let batch_hashes: Vec<Value> = batch
        .into_iter()
        .map(|raw| call(&v, "chain_sendRawTransaction", json!([raw])))
        .collect();
    for h in &batch_hashes {
        common::wait_receipt(v.http.as_ref().unwrap(), h);
    }
    hashes.extend(batch_hashes);
    let want = summary(&v, &hashes);
    // The failures are failures, the rest succeeded.
    let status: Vec<Value> = want.1.iter().map(|r| r["txError"].clone()).collect();
    assert_eq!(status[8], json!("0x9"));
    assert_eq!(status[9], json!("0x7"));
    assert!(
        status
            .iter()
            .enumerate()
            .all(|(i, s)| i == 8 || i == 9 || s.is_null()),
        "{status:?}"
    );
    let child_address = {
        let out = call(
            &v,
            "chain_call",
            json!([{"to": hex0x(&f.0), "data": hex0x(&factory.call_data("predict(bytes32)", &[salt]))}, "latest"]),
        );
        out.as_str().unwrap()[26..].to_string()
    };
    let state_of = |n: &Node| {
        let mut s = Vec::new();
        for a in [t, f, cnt, cal, rev] {
            s.push(call(n, "chain_getCode", json!([hex0x(&a.0), "latest"])));
            s.push(call(
                n,
                "chain_getStorageAt",
                json!([hex0x(&a.0), "0x0", "latest"]),
            ));
            s.push(call(n, "chain_getAccount", json!([hex0x(&a.0), "latest"])));
        }
        s.push(call(
            n,
            "chain_getCode",
            json!([format!("0x{child_address}"), "latest"]),
        ));
        s.push(call(n, "chain_call", json!([{"to": hex0x(&t.0), "data": hex0x(&token.call_data("balanceOf(address)", &[addr_word(&bob)]))}, "latest"])));
        s
    };
    let want_state = state_of(&v);
    assert_eq!(
        want_state[want_state.len() - 1],
        json!(hex0x(&uint_word(7)))
    );
    assert_ne!(want_state[want_state.len() - 2], json!("0x"));
    let _ = child;

    // Export, then `chaind import` into a fresh node of the same genesis.
    let file = dir.path().join("contracts.rlp");
    assert_eq!(call(&v, "admin_exportChain", json!([file])), json!(true));
    let idir = tempfile::TempDir::new_in(dir.path()).unwrap();
    chaind_init(idir.path(), &genesis_file);
    let out = common::chaind_run(idir.path(), &["import", file.to_str().unwrap()]);
    assert!(out.status.success(), "chaind import: {out:?}");
    let imported = start(idir, &[]);
    assert_eq!(summary(&imported, &hashes), want);
    assert_eq!(state_of(&imported), want_state);

    // A follower syncs the same chain over the network.
    let fdir = tempfile::TempDir::new_in(dir.path()).unwrap();
    chaind_init(fdir.path(), &genesis_file);
    let follower = start(fdir, &[]);
    assert_eq!(
        call(&follower, "admin_addPeer", json!([v.kni.clone().unwrap()])),
        json!(true)
    );
    let head = call(&v, "chain_blockNumber", json!([]));
    wait_until("the follower to sync", &follower, || {
        call(&follower, "chain_blockNumber", json!([])) == head
    });
    assert_eq!(summary(&follower, &hashes), want);
    assert_eq!(state_of(&follower), want_state);
    // The state tries agree node for node.
    let dump = |n: &Node| call(n, "debug_dumpStateTrie", json!(["latest"]));
    assert_eq!(dump(&follower), dump(&v));
    assert_eq!(dump(&imported), dump(&v));
}
