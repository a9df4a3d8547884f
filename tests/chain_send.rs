//! The send and sign methods through `chaind --dev` over HTTP: each moves balances, bumps the
//! nonce and yields a receipt and a block; signed output resubmits; every refusal is a clear
//! error that changes neither state nor pool; multisig and role-based keys; concurrency.

mod common;

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::transaction::{Legacy, Transaction, ValueTransfer};
use common::{err, http_call, ok, quantity_of as number, u256, Node, PRICE};
use serde_json::{json, Value};

const TO: &str = "0x3535353535353535353535353535353535353535";

fn node() -> Node {
    common::dev_http_node("chain,personal,txpool")
}

struct Chain<'a> {
    url: &'a str,
}

impl Chain<'_> {
    fn call(&self, m: &str, p: Value) -> Value {
        http_call(self.url, m, p)
    }

    fn balance(&self, a: &str) -> u128 {
        number(&ok(self.call("chain_getBalance", json!([a]))))
    }

    fn nonce(&self, a: &str) -> u128 {
        number(&ok(
            self.call("chain_getTransactionCount", json!([a, "pending"]))
        ))
    }

    fn pool(&self) -> Value {
        ok(self.call("txpool_status", json!([])))
    }

    /// Waits for the receipt of `hash`.
    fn receipt(&self, hash: &Value) -> Value {
        common::wait_receipt(self.url, hash)
    }

    /// Imports `key` under passphrase "pw" and funds it from the developer account.
    fn funded(&self, dev: &str, key: &SecretKey, amount: u128) -> String {
        let addr = ok(self.call(
            "personal_importRawKey",
            json!([hex::encode(&key.to_bytes()[..]), "pw"]),
        ));
        let h = ok(self.call(
            "personal_sendValueTransfer",
            json!([{"from": dev, "to": addr, "value": format!("0x{amount:x}")}, ""]),
        ));
        assert_eq!(self.receipt(&h)["status"], json!("0x1"));
        addr.as_str().unwrap().to_string()
    }
}

fn key(b: u8) -> SecretKey {
    SecretKey::from_slice(&[b; 32]).unwrap()
}

/// Each send method: the recipient gains the value, the sender pays value + gas used x
/// price, its nonce moves, a receipt and a block hold the transaction.
#[test]
fn each_send_method_moves_balances_and_is_sealed() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let b = c.funded(&dev, &key(0x51), 10u128.pow(21));
    ok(c.call("personal_unlockAccount", json!([b, "pw", 0])));
    let cases: Vec<(&str, Value, u128)> = vec![
        (
            "personal_sendTransaction",
            json!([{"from": b, "to": TO, "value": "0x10"}, "pw"]),
            0x10,
        ),
        (
            "personal_sendValueTransfer",
            json!([{"from": b, "to": TO, "value": "0x20"}, "pw"]),
            0x20,
        ),
        (
            "chain_sendTransaction",
            json!([{"from": b, "to": TO, "value": "0x40"}]),
            0x40,
        ),
        (
            "chain_sendTransaction",
            json!([{"from": b, "to": TO, "value": "0x80", "typeInt": 8}]),
            0x80,
        ),
    ];
    for (i, (method, params, value)) in cases.into_iter().enumerate() {
        let (before_to, before_b) = (c.balance(TO), c.balance(&b));
        let hash = ok(c.call(method, params));
        let r = c.receipt(&hash);
        assert_eq!(r["status"], json!("0x1"), "{method}");
        let gas_used = number(&r["gasUsed"]);
        assert_eq!(gas_used, 21_000, "{method}");
        assert_eq!(c.balance(TO), before_to + value, "{method}");
        assert_eq!(
            c.balance(&b),
            before_b - value - gas_used * PRICE,
            "{method}"
        );
        assert_eq!(c.nonce(&b), i as u128 + 1, "{method}");
        let tx = ok(c.call("chain_getTransactionByHash", json!([hash])));
        assert_eq!(
            tx["gas"],
            json!("0x5208"),
            "{method}: gas left out is estimated: a transfer's intrinsic gas (DECISIONS.md)"
        );
        let block = ok(c.call("chain_getBlockByNumber", json!([r["blockNumber"], false])));
        assert!(
            block["transactions"].as_array().unwrap().contains(&hash),
            "{method}"
        );
    }
    // An account update through personal_sendAccountUpdate: the key changes, gas is paid.
    let new_key = key(0x52);
    let public = AccountKey::Public(new_key.public_compressed()).encode();
    let before_b = c.balance(&b);
    let hash = ok(c.call(
        "personal_sendAccountUpdate",
        json!([{"from": b, "key": format!("0x{}", hex::encode(&public))}, "pw"]),
    ));
    let r = c.receipt(&hash);
    assert_eq!(r["status"], json!("0x1"));
    assert_eq!(c.balance(&b), before_b - number(&r["gasUsed"]) * PRICE);
    assert_eq!(
        ok(c.call("chain_getAccountKey", json!([b])))["keyType"],
        json!(2)
    );
    assert_eq!(c.nonce(&b), 5);
}

/// What the sign methods return resubmits through chain_sendRawTransaction; the raw bytes
/// are exactly those of the same transaction built and signed here (RFC 6979).
#[test]
fn signed_transactions_resubmit_and_match_an_independent_signature() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let k = key(0x53);
    let b = c.funded(&dev, &k, 10u128.pow(21));
    let signed = ok(c.call(
        "personal_signTransaction",
        json!([{"from": b, "to": TO, "value": "0x7", "nonce": "0x0"}, "pw"]),
    ));
    let mut mine = Transaction::Legacy(Legacy {
        nonce: 0,
        gas_price: u256(PRICE),
        gas: 21_000,
        to: Some(Address::parse_lenient(TO).unwrap()),
        value: u256(7),
        input: Vec::new(),
        signature: None,
    });
    mine.sign(&k, 1000);
    assert_eq!(
        signed["raw"],
        json!(format!("0x{}", hex::encode(mine.encode())))
    );
    assert_eq!(
        signed["tx"]["hash"],
        json!(format!("0x{}", hex::encode(mine.hash())))
    );
    // V = recovery id + 35 + 2 x chain id (1000).
    let v = number(&signed["tx"]["signatures"][0]["V"]);
    assert!(v == 2035 || v == 2036, "V {v}");
    // Member names match whatever their case, as the reference's JSON decoding does.
    let mixed = ok(c.call(
        "personal_signTransaction",
        json!([{"From": b, "TO": TO, "Value": "0x7", "NONCE": "0x0"}, "pw"]),
    ));
    assert_eq!(mixed["raw"], signed["raw"]);
    assert!(
        signed["tx"].get("typeInt").is_none(),
        "a legacy tx has no type members"
    );
    assert_eq!(c.nonce(&b), 0, "signing submits nothing");
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x0"}));
    let hash = ok(c.call("chain_sendRawTransaction", json!([signed["raw"]])));
    assert_eq!(hash, signed["tx"]["hash"]);
    assert_eq!(c.receipt(&hash)["status"], json!("0x1"));

    // The chain's own type through chain_signTransaction, nonce and gas filled in.
    ok(c.call("personal_unlockAccount", json!([b, "pw", 0])));
    let signed = ok(c.call(
        "chain_signTransaction",
        json!([{"typeInt": 8, "from": b, "to": TO, "value": "0x9"}]),
    ));
    let tx = &signed["tx"];
    assert_eq!(
        (tx["typeInt"].clone(), tx["type"].clone()),
        (json!(8), json!("TxTypeValueTransfer"))
    );
    assert_eq!(
        (tx["nonce"].clone(), tx["gas"].clone(), tx["from"].clone()),
        (json!("0x1"), json!("0x5208"), json!(b))
    );
    let mut mine = Transaction::of(ValueTransfer {
        nonce: 1,
        gas_price: u256(PRICE),
        gas: 21_000,
        to: Address::parse_lenient(TO).unwrap(),
        value: u256(9),
        from: k.address(),
        signatures: Vec::new(),
    });
    mine.sign(&k, 1000);
    assert_eq!(
        signed["raw"],
        json!(format!("0x{}", hex::encode(mine.encode())))
    );
    let hash = ok(c.call("chain_sendRawTransaction", json!([signed["raw"]])));
    assert_eq!(c.receipt(&hash)["status"], json!("0x1"));
    assert_eq!(c.balance(TO), 16);
}

/// Every refusal: the exact code and text, and neither the sender's balance and nonce nor
/// the pool changed.
#[test]
fn refusals_change_neither_state_nor_pool() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let b = c.funded(&dev, &key(0x54), 10u128.pow(21));
    // One transfer sealed, so that nonce 0 is now too low.
    let h = ok(c.call(
        "personal_sendValueTransfer",
        json!([{"from": b, "to": TO, "value": "0x1"}, "pw"]),
    ));
    c.receipt(&h);
    let poor = ok(c.call(
        "personal_importRawKey",
        json!([hex::encode(&key(0x55).to_bytes()[..]), "pw"]),
    ));
    let stranger = "0x1111111111111111111111111111111111111111";
    let too_high = "nonce too high: the next nonce of the sender is 1, and a transaction may wait at most 4096 nonces ahead of it";
    let cases: Vec<(&str, Value, i64, &str)> = vec![
        ("personal_sendValueTransfer", json!([{"from": b, "to": TO, "value": "0x1"}, "wrong"]), -32000, "could not decrypt key with given passphrase"),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "value": "0x1"}, "wrong"]), -32000, "could not decrypt key with given passphrase"),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1"}, "wrong"]), -32000, "could not decrypt key with given passphrase"),
        ("personal_sendValueTransfer", json!([{"from": poor, "to": TO, "value": "0x1"}, "pw"]), -32000, "insufficient funds of the sender for value "),
        ("personal_sendValueTransfer", json!([{"from": b, "to": TO, "value": "0x1", "nonce": "0x0"}, "pw"]), -32000, "nonce too low"),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "value": "0x1", "nonce": "0x2000"}, "pw"]), -32000, too_high),
        ("personal_sendValueTransfer", json!([{"from": stranger, "to": TO, "value": "0x1"}, "pw"]), -32000, "unknown account"),
        ("personal_sendTransaction", json!([{"from": stranger, "to": TO, "value": "0x1"}, "pw"]), -32000, "unknown account"),
        ("chain_sendTransaction", json!([{"from": stranger, "to": TO, "value": "0x1"}]), -32000, "unknown account"),
        ("chain_sendTransaction", json!([{"from": b, "to": TO, "value": "0x1"}]), -32000, "authentication needed: password or unlock"),
        ("chain_signTransaction", json!([{"from": b, "to": TO, "value": "0x1"}]), -32000, "authentication needed: password or unlock"),
        ("personal_sendValueTransfer", json!(["not an object", "pw"]), -32602, "invalid argument 0: json: cannot unmarshal string into Go value of type api.SendTxArgs"),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "value": "12"}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field SendTxArgs.value of type *hexutil.Big"),
        ("personal_sendTransaction", json!([{"from": b, "to": "0x12", "value": "0x1"}, "pw"]), -32602, "invalid argument 0: hex string has length 2, want 40 for common.Address"),
        ("personal_sendTransaction", json!([{"from": 12, "to": TO, "value": "0x1"}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal non-string into Go struct field SendTxArgs.from of type common.Address"),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "gas": 21000}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal non-string into Go struct field SendTxArgs.gas of type hexutil.Uint64"),
        // Go's decoder stops at the first member that does not decode, in the object's order.
        ("personal_sendTransaction", json!([{"gasPrice": "0x01", "from": "0x1"}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field SendTxArgs.gasPrice of type *hexutil.Big"),
        ("chain_signTransaction", json!([{"from": b, "to": TO, "typeInt": 30800}]), -32000, "undefined tx type"),
        ("chain_sendTransaction", json!([{"from": b, "to": TO, "typeInt": "8"}]), -32602, "invalid argument 0: json: cannot unmarshal string into Go struct field SendTxArgs.typeInt of type types.TxType"),
        // `from` left out is the zero address: a contract creation without data first, then
        // an account the keystore does not hold.
        ("chain_sendTransaction", json!([{"value": "0x1"}]), -32000, "contract creation without any data provided"),
        ("chain_sendTransaction", json!([{"to": TO, "gas": "0x5208"}]), -32000, "unknown account"),
        ("personal_sendTransaction", json!([{"to": TO, "gas": "0x5208"}, "pw"]), -32000, "unknown account"),
        ("personal_sendValueTransfer", json!([{"from": b, "value": "0x1"}, "pw"]), -32000, "tx fields should be filled with valid values"),
        ("personal_sendValueTransfer", json!([{"from": b, "to": TO}, "pw"]), -32000, "tx fields should be filled with valid values"),
        ("personal_sendAccountUpdate", json!([{"from": b}, "pw"]), -32000, "tx fields should be filled with valid values"),
        ("personal_sendAccountUpdate", json!([{"from": b, "key": "0x06c0"}, "pw"]), -32000, "undefined account key type"),
        ("personal_sendTransaction", json!([{"from": b}, "pw"]), -32000, "contract creation without any data provided"),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "data": "0x01", "input": "0x02"}, "pw"]), -32000, r#"Both "data" and "input" are set and not equal. Please use "input" to pass transaction call data."#),
        ("personal_sendTransaction", json!([{"from": b, "to": TO, "value": "0x1", "typeInt": 8}, "pw"]), -32602, "invalid argument 0: personal_sendTransaction sends legacy transactions (typeInt 0); typeInt 8 is sent with chain_sendTransaction (an unlocked account), or signed with personal_signTransaction and sent with chain_sendRawTransaction"),
        ("personal_signTransaction", json!([{"from": b, "value": "0x1", "typeInt": 8}, "pw"]), -32000, r#"json:"to" is required for TxTypeValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "typeInt": 8}, "pw"]), -32000, r#"json:"value" is required for TxTypeValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "input": "0x", "typeInt": 8}, "pw"]), -32000, r#"json:"input" is not a field of TxTypeValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "accessList": [], "typeInt": 8}, "pw"]), -32000, r#"json:"accessList,omitempty" is not a field of TxTypeValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "typeInt": 32}, "pw"]), -32000, r#"json:"key" is required for TxTypeAccountUpdate"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "key": "0x01c0", "typeInt": 32}, "pw"]), -32000, r#"json:"to" is not a field of TxTypeAccountUpdate"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "typeInt": 48}, "pw"]), -32000, r#"json:"value" is required for TxTypeSmartContractExecution"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "typeInt": 56}, "pw"]), -32000, r#"json:"to" is not a field of TxTypeCancel"#),
        ("personal_signTransaction", json!([{"from": b, "typeInt": 24}, "pw"]), -32000, r#"json:"gas" is not a field of TxTypeAccountCreation"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "typeInt": 9}, "pw"]), -32000, r#"json:"feePayer" is required for TxTypeFeeDelegatedValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "feePayer": b, "typeInt": 10}, "pw"]), -32000, r#"json:"feeRatio" is required for TxTypeFeeDelegatedValueTransferWithRatio"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "feePayer": b, "feeRatio": 30, "typeInt": 9}, "pw"]), -32000, r#"json:"feeRatio" is not a field of TxTypeFeeDelegatedValueTransfer"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "feePayer": b, "feeRatio": "0x1e", "typeInt": 10}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal string into Go struct field SendTxArgs.feeRatio of type types.FeeRatio"),
        ("personal_signTransaction", json!([{"from": b, "value": "0x1", "typeInt": 72}, "pw"]), -32000, r#"json:"value" is not a field of TxTypeChainDataAnchoring"#),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "typeInt": 30723}, "pw"]), -32000, "undefined tx type"),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "gasPrice": "0x5d21dba00", "accessList": {"address": TO}, "typeInt": 30721}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal object into Go struct field SendTxArgs.accessList of type types.AccessList"),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "gasPrice": "0x5d21dba00", "accessList": [{"address": TO, "storageKeys": ["0x01"]}], "typeInt": 30721}, "pw"]), -32602, "invalid argument 0: hex string has length 2, want 64 for common.Hash"),
        ("personal_sendTransactionAsFeePayer", json!([{"typeInt": 9, "from": b, "to": TO, "nonce": "0x0", "gas": "0x5208", "gasPrice": "0x5d21dba00", "signatures": ["0x01"]}, "pw"]), -32602, "invalid argument 0: json: cannot unmarshal string into Go struct field SendTxArgs.signatures of type types.TxSignaturesJSON"),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "typeInt": 30722}, "pw"]), -32000, "missing gasPrice or maxFeePerGas/maxPriorityFeePerGas"),
        ("personal_signTransaction", json!([{"from": b, "to": TO, "value": "0x1", "gasPrice": "0x5d21dba00", "typeInt": 30721}, "pw"]), -32000, "AccessList must be a type of AccessList"),
        ("personal_sendTransactionAsFeePayer", json!([{"from": b, "to": TO, "nonce": "0x0", "gas": "0x5208", "gasPrice": "0x5d21dba00", "signatures": []}, "pw"]), -32000, "tx should have a type value"),
        ("personal_sendTransactionAsFeePayer", json!([{"typeInt": 9, "from": b, "to": TO, "gas": "0x5208", "gasPrice": "0x5d21dba00", "signatures": []}, "pw"]), -32000, "nonce of the sender is not set"),
        ("personal_sendTransactionAsFeePayer", json!([{"typeInt": 9, "from": b, "to": TO, "nonce": "0x0", "gasPrice": "0x5d21dba00", "signatures": []}, "pw"]), -32000, "gas limit is not set"),
        ("personal_sendTransactionAsFeePayer", json!([{"typeInt": 9, "from": b, "to": TO, "nonce": "0x0", "gas": "0x5208", "signatures": []}, "pw"]), -32000, "gas price is not set"),
        ("personal_sendTransactionAsFeePayer", json!([{"typeInt": 9, "from": b, "to": TO, "nonce": "0x0", "gas": "0x5208", "gasPrice": "0x5d21dba00"}, "pw"]), -32000, "sender signature is not set"),
        ("personal_signTransactionAsFeePayer", json!([{"from": b, "to": TO, "value": "0x1"}, "pw"]), -32000, "invalid fee payer is set"),
    ];
    let state = |c: &Chain| {
        (
            c.balance(&b),
            c.nonce(&b),
            c.balance(poor.as_str().unwrap()),
            c.pool(),
        )
    };
    let before = state(&c);
    for (method, params, code, message) in cases {
        assert_eq!(
            err(c.call(method, params.clone())),
            (code, message.to_string()),
            "{method} {params}"
        );
        assert_eq!(state(&c), before, "{method} {params} changed something");
    }
}

/// A weighted multisig key (2 of 3, weights 1 each) and a role-based key: who may send
/// what afterwards.
#[test]
fn multisig_and_role_based_keys() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let owner = key(0x56);
    let a = c.funded(&dev, &owner, 10u128.pow(21));
    let (k1, k2, k3) = (key(0x61), key(0x62), key(0x63));
    let multisig = AccountKey::WeightedMultisig {
        threshold: 2,
        keys: vec![
            (1, k1.public_compressed()),
            (1, k2.public_compressed()),
            (1, k3.public_compressed()),
        ],
    };
    let h = ok(c.call(
        "personal_sendAccountUpdate",
        json!([{"from": a, "key": format!("0x{}", hex::encode(multisig.encode()))}, "pw"]),
    ));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    let from = Address::parse_lenient(&a).unwrap();
    let transfer = |nonce: u64, signers: &[&SecretKey]| {
        let mut tx = Transaction::of(ValueTransfer {
            nonce,
            gas_price: u256(PRICE),
            gas: 100_000,
            to: Address::parse_lenient(TO).unwrap(),
            value: u256(3),
            from,
            signatures: Vec::new(),
        });
        for s in signers {
            tx.sign(s, 1000);
        }
        format!("0x{}", hex::encode(tx.encode()))
    };
    assert_eq!(
        err(c.call("chain_sendRawTransaction", json!([transfer(1, &[&k1])]))),
        (-32000, "invalid sender: invalid account key".to_string())
    );
    assert_eq!(
        err(c.call(
            "personal_sendValueTransfer",
            json!([{"from": a, "to": TO, "value": "0x1"}, "pw"])
        )),
        (-32000, "invalid sender: invalid account key".to_string()),
        "the key file's key is no longer the account's"
    );
    let h = ok(c.call(
        "chain_sendRawTransaction",
        json!([transfer(1, &[&k1, &k3])]),
    ));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    assert_eq!(c.balance(TO), 3);

    // Role-based: transactions by k1, updates by k2, fee payment by k3.
    let roles = AccountKey::RoleBased(vec![
        AccountKey::Public(k1.public_compressed()),
        AccountKey::Public(k2.public_compressed()),
        AccountKey::Public(k3.public_compressed()),
    ]);
    let update = |nonce: u64, signer: &SecretKey, new: &AccountKey| {
        let mut tx = Transaction::of(chain_node::types::transaction::AccountUpdate {
            nonce,
            gas_price: u256(PRICE),
            gas: 300_000,
            from,
            key: new.clone(),
            signatures: Vec::new(),
        });
        tx.sign(signer, 1000);
        format!("0x{}", hex::encode(tx.encode()))
    };
    // The multisig key needs two signatures for an update too.
    let mut both = Transaction::of(chain_node::types::transaction::AccountUpdate {
        nonce: 2,
        gas_price: u256(PRICE),
        gas: 300_000,
        from,
        key: roles.clone(),
        signatures: Vec::new(),
    });
    both.sign(&k2, 1000);
    both.sign(&k3, 1000);
    let h = ok(c.call(
        "chain_sendRawTransaction",
        json!([format!("0x{}", hex::encode(both.encode()))]),
    ));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    assert_eq!(
        ok(c.call("chain_getAccountKey", json!([a])))["keyType"],
        json!(5)
    );
    // A transfer signed with the update key: refused; with the transaction key: sealed.
    assert_eq!(
        err(c.call("chain_sendRawTransaction", json!([transfer(3, &[&k2])]))),
        (-32000, "invalid sender: invalid account key".to_string())
    );
    let h = ok(c.call("chain_sendRawTransaction", json!([transfer(3, &[&k1])])));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    // An update signed with the transaction key: refused; with the update key: sealed.
    let legacy = AccountKey::Legacy;
    assert_eq!(
        err(c.call("chain_sendRawTransaction", json!([update(4, &k1, &legacy)]))),
        (-32000, "invalid sender: invalid account key".to_string())
    );
    let h = ok(c.call("chain_sendRawTransaction", json!([update(4, &k2, &legacy)])));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    assert_eq!(
        ok(c.call("chain_getAccountKey", json!([a])))["keyType"],
        json!(1)
    );
    assert_eq!(c.balance(TO), 6);
}

/// After an update to a new key, the account's key file is replaced by the new key given in
/// wallet-key form (`<key>0x00<address>`, reference 2.3); personal sends then work again.
#[test]
fn a_new_key_in_wallet_key_form_sends_for_the_account() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let a = c.funded(&dev, &key(0x57), 10u128.pow(21));
    let new_key = key(0x58);
    let public = AccountKey::Public(new_key.public_compressed()).encode();
    let h = ok(c.call(
        "personal_sendAccountUpdate",
        json!([{"from": a, "key": format!("0x{}", hex::encode(&public))}, "pw"]),
    ));
    c.receipt(&h);
    let send = || {
        c.call(
            "personal_sendValueTransfer",
            json!([{"from": a, "to": TO, "value": "0x5"}, "pw"]),
        )
    };
    assert_eq!(
        err(send()),
        (-32000, "invalid sender: invalid account key".to_string())
    );
    let wallet_form = format!("{}0x00{}", hex::encode(&new_key.to_bytes()[..]), a);
    assert_eq!(
        ok(c.call("personal_replaceRawKey", json!([wallet_form, "pw", "pw"]))),
        json!(a)
    );
    let h = ok(send());
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    assert_eq!(c.balance(TO), 5);
}

/// 16 clients x 50 personal_sendValueTransfer from one account: distinct hashes,
/// consecutive nonces without gaps, all sealed, exact final balances.
#[test]
fn concurrent_sends_from_one_account_get_consecutive_nonces() {
    let n = node();
    let url = n.http.clone().unwrap();
    let c = Chain { url: &url };
    let dev = common::dev_account(&n);
    let a = c.funded(&dev, &key(0x59), 10u128.pow(21));
    let start = c.balance(&a);
    let hashes: Vec<Value> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..16)
            .map(|_| {
                s.spawn(|| {
                    (0..50)
                        .map(|_| {
                            ok(http_call(
                                &url,
                                "personal_sendValueTransfer",
                                json!([{"from": a, "to": TO, "value": "0x1"}, "pw"]),
                            ))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let distinct: std::collections::HashSet<String> = hashes
        .iter()
        .map(|h| h.as_str().unwrap().to_string())
        .collect();
    assert_eq!(distinct.len(), 800);
    let mut nonces: Vec<u128> = hashes
        .iter()
        .map(|h| {
            c.receipt(h);
            number(&ok(c.call("chain_getTransactionByHash", json!([h])))["nonce"])
        })
        .collect();
    nonces.sort_unstable();
    assert_eq!(nonces, (0..800).collect::<Vec<u128>>());
    assert_eq!(c.balance(TO), 800);
    assert_eq!(c.balance(&a), start - 800 - 800 * 21_000 * PRICE);
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x0"}));
}
