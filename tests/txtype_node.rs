//! A transaction signed by caver-js is accepted, executed and reported here as the reference
//! would: `chaind --dev --chainid 1001 --txpool.allow-local-anchortx` is given caver's fully
//! signed bytes (`tests/vectors/caver-transactions.json`, chain 1001) through
//! `chain_sendRawTransaction`. Every vector is K1's, at nonce 0, 1, 7 or 1234, so each test
//! is one chain on which K1's vectors line up: caver's transaction at each vector's nonce,
//! value transfers signed here to fill the nonces between (2..6). For each sealed vector: the
//! transaction as `chain_getTransactionByHash` (and, when fee-delegated,
//! `chain_getTransactionBySenderTxHash`) reports it, its receipt, and the balances of the
//! sender, the fee payer, the recipient and the rewardbase, which must move by exactly the
//! value and `gasUsed x price` split by the fee payer's ratio as the reference's
//! buyGas/refundGas split it (worked out here from the receipt's gas, never from the node's
//! balances). Vectors that cannot run where they are (a contract not there yet, a nonce
//! taken, a key that no longer signs) are refused with the reference's texts, leaving the
//! pool and the balances as they were.

mod common;

use std::collections::BTreeMap;

use chain_node::crypto::{keccak256, Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::transaction::{Base, FeeMode, Native, Transaction};
use common::caver::signatures_json;
use common::{err, http_call, ok, quantity_of, Node, PRICE};
use serde_json::{json, Value};

const CHAIN: u64 = 1001;
const KLAY: u128 = 1_000_000_000_000_000_000;
/// Where the vectors send value (0x3535...35).
const T: &str = "0x3535353535353535353535353535353535353535";

fn doc() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/caver-transactions.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The record named `name` (main list or multisig section).
fn vector(name: &str) -> Value {
    let d = doc();
    d["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .chain(d["multisig"].as_array().unwrap())
        .find(|r| r["name"] == json!(name))
        .unwrap_or_else(|| panic!("no vector {name}"))
        .clone()
}

fn addr(s: &str) -> Address {
    Address::parse_lenient(s).unwrap()
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn key(b: u8) -> SecretKey {
    SecretKey::from_slice(&[b; 32]).unwrap()
}

/// `keccak256(RLP([sender, nonce]))[12..]`, with RLP written out here (nonce < 0x80).
fn create_address(sender: &Address, nonce: u8) -> Address {
    let mut rlp = vec![0xd6, 0x94];
    rlp.extend_from_slice(&sender.0);
    rlp.push(if nonce == 0 { 0x80 } else { nonce });
    Address(keccak256(&rlp)[12..].try_into().unwrap())
}

/// What a sealed transaction moves: `value` from `sender` to `to`, and its fee, of which the
/// fee payer pays `percent`.
struct Moves {
    sender: Address,
    fee_payer: Option<Address>,
    percent: u128,
    gas: u128,
    to: Option<Address>,
    value: u128,
}

impl Moves {
    /// A vector's, from its inputs.
    fn of(rec: &Value) -> Moves {
        let i = &rec["inputs"];
        let fee_payer = i.get("feePayer").map(|a| addr(a.as_str().unwrap()));
        let percent = match (fee_payer, i.get("feeRatio")) {
            (None, _) => 0,
            (Some(_), None) => 100,
            (Some(_), Some(r)) => quantity_of(r),
        };
        Moves {
            sender: addr("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f"),
            fee_payer,
            percent,
            gas: quantity_of(&i["gas"]),
            to: i.get("to").and_then(Value::as_str).map(addr),
            value: i.get("value").map_or(0, quantity_of),
        }
    }
}

/// One `chaind --dev --chainid 1001` with K1 and K2 funded, and the balances it should hold.
struct Chain {
    /// Killed when the test ends.
    _node: Node,
    url: String,
    /// The developer account: the validator, whose address is every block's rewardbase.
    dev: SecretKey,
    dev_nonce: u64,
    /// The balances expected of every account a test looks at.
    want: BTreeMap<Address, u128>,
}

impl Chain {
    fn start() -> Chain {
        Chain::start_with(&["--txpool.allow-local-anchortx"])
    }

    fn start_with(extra: &[&str]) -> Chain {
        let mut args = vec!["--dev", "--chainid", "1001"];
        args.extend_from_slice(extra);
        args.extend(common::http_args("chain,txpool"));
        let node = Node::start(&args);
        let url = node.http.clone().unwrap();
        let dev = common::dev_key(&node);
        let mut c = Chain {
            _node: node,
            url,
            dev,
            dev_nonce: 0,
            want: BTreeMap::new(),
        };
        for k in [0x46, 0x47] {
            let raw = common::raw_transfer(
                &c.dev,
                c.dev_nonce,
                key(k).address(),
                100 * KLAY,
                PRICE,
                CHAIN,
            );
            c.dev_nonce += 1;
            let h = ok(c.call("chain_sendRawTransaction", json!([raw])));
            assert_eq!(c.receipt(&h)["status"], json!("0x1"));
        }
        let k1 = key(0x46).address();
        let tracked = [
            c.dev.address(),
            k1,
            key(0x47).address(),
            key(0x48).address(),
            addr(T),
            create_address(&k1, 0),
            create_address(&k1, 1),
        ];
        for a in tracked {
            let b = c.balance(&a);
            c.want.insert(a, b);
        }
        assert_eq!(c.want[&k1], 100 * KLAY);
        c
    }

    fn call(&self, m: &str, p: Value) -> Value {
        http_call(&self.url, m, p)
    }

    fn balance(&self, a: &Address) -> u128 {
        quantity_of(&ok(
            self.call("chain_getBalance", json!([hex0x(&a.0), "latest"]))
        ))
    }

    fn receipt(&self, hash: &Value) -> Value {
        common::wait_receipt(&self.url, hash)
    }

    fn pool(&self) -> Value {
        ok(self.call("txpool_status", json!([])))
    }

    fn send(&self, raw: &str) -> Value {
        ok(self.call("chain_sendRawTransaction", json!([raw])))
    }

    /// Waits for the receipt of `hash`, applies its moves to the expected balances and checks
    /// every tracked balance. Returns the receipt.
    fn sealed(&mut self, hash: &Value, m: &Moves) -> Value {
        let r = self.receipt(hash);
        self.apply(&r, m);
        self.check_balances();
        r
    }

    /// The reference's buyGas/refundGas: the fee payer pays `fee x percent / 100` of the gas
    /// limit up front and gets back `refund x percent / 100` of the unused gas; the sender
    /// pays and gets back the rest; the rewardbase gets `gasUsed x price`.
    fn apply(&mut self, r: &Value, m: &Moves) {
        let used = quantity_of(&r["gasUsed"]);
        assert!(used <= m.gas, "{r}");
        let (fee, refund) = (m.gas * PRICE, (m.gas - used) * PRICE);
        let (payer_up, payer_back) = (fee * m.percent / 100, refund * m.percent / 100);
        let by_payer = payer_up - payer_back;
        let by_sender = (fee - payer_up) - (refund - payer_back);
        assert_eq!(by_payer + by_sender, used * PRICE);
        let block = ok(self.call("chain_getBlockByNumber", json!([r["blockNumber"], false])));
        let rewardbase = addr(block["reward"].as_str().unwrap());
        assert_eq!(rewardbase, self.dev.address(), "the dev chain's rewardbase");
        let to = match r["contractAddress"].as_str() {
            Some(c) => Some(addr(c)),
            None => m.to,
        };
        let mut sub = |a: &Address, v: u128| {
            let b = self
                .want
                .get_mut(a)
                .unwrap_or_else(|| panic!("{a:?} untracked"));
            *b = b.checked_sub(v).unwrap();
        };
        sub(&m.sender, by_sender);
        if let Some(p) = &m.fee_payer {
            sub(p, by_payer);
        }
        if r["status"] == json!("0x1") && m.value > 0 {
            sub(&m.sender, m.value);
            *self.want.get_mut(&to.unwrap()).unwrap() += m.value;
        }
        *self.want.get_mut(&rewardbase).unwrap() += used * PRICE;
    }

    fn check_balances(&self) {
        for (a, want) in &self.want {
            assert_eq!(self.balance(a), *want, "balance of {}", hex0x(&a.0));
        }
    }

    /// Submits caver's `raw` of vector `name`, waits until it is sealed and checks what the
    /// node reports of it: the transaction (by hash and, fee-delegated, by sender transaction
    /// hash), a successful receipt using `gas` (when given: the intrinsic gas, for the types
    /// that run no code), and the balances. Returns the receipt.
    fn run(&mut self, name: &str, gas: Option<u128>) -> Value {
        let rec = vector(name);
        let hash = self.send(rec["raw"].as_str().unwrap());
        assert_eq!(hash, rec["txHash"], "{name}");
        let r = self.sealed(&hash, &Moves::of(&rec));
        assert_eq!(r["status"], json!("0x1"), "{name}: {r}");
        assert_eq!(r["transactionHash"], rec["txHash"], "{name}");
        if let Some(g) = gas {
            assert_eq!(quantity_of(&r["gasUsed"]), g, "{name}: gasUsed");
        }
        let tx = ok(self.call("chain_getTransactionByHash", json!([hash])));
        check_reported(&rec, &tx);
        assert_eq!(tx["blockHash"], r["blockHash"], "{name}");
        assert_eq!(tx["blockNumber"], r["blockNumber"], "{name}");
        for m in [
            "type",
            "typeInt",
            "senderTxHash",
            "feePayer",
            "feeRatio",
            "signatures",
        ] {
            assert_eq!(r.get(m), tx.get(m), "{name}: receipt's {m}");
        }
        if rec.get("feePayerSigHash").is_some() {
            assert_ne!(rec["senderTxHash"], rec["txHash"]);
            let by_sender = ok(self.call(
                "chain_getTransactionBySenderTxHash",
                json!([rec["senderTxHash"]]),
            ));
            assert_eq!(by_sender, tx, "{name}: by sender transaction hash");
            let receipt = ok(self.call(
                "chain_getTransactionReceiptBySenderTxHash",
                json!([rec["senderTxHash"]]),
            ));
            assert_eq!(receipt, r, "{name}: receipt by sender transaction hash");
        }
        r
    }

    /// `raw` is refused with `message`; the pool and every balance are as they were.
    fn refused(&self, raw: &str, message: &str) {
        let pool = self.pool();
        let (code, text) = err(self.call("chain_sendRawTransaction", json!([raw])));
        assert_eq!((code, text.as_str()), (-32000, message));
        assert_eq!(self.pool(), pool, "{message}");
        self.check_balances();
    }

    /// Caver's `raw` of vector `name` is refused with `message`.
    fn vector_refused(&self, name: &str, message: &str) {
        self.refused(vector(name)["raw"].as_str().unwrap(), message);
    }

    /// A value transfer of 1 peb from K1 to T at `nonce`, signed here by `keys` in order.
    fn filler(&self, nonce: u64, keys: &[&SecretKey]) -> (String, Moves) {
        let k1 = key(0x46).address();
        let mut t = Native::new(Base::ValueTransfer, FeeMode::Sender, k1);
        t.nonce = nonce;
        t.gas_price = common::u256(PRICE);
        t.gas = 21_000 + 15_000 * (keys.len() as u64 - 1);
        (t.to, t.value) = (Some(addr(T)), common::u256(1));
        let mut tx = Transaction::Native(t);
        for k in keys {
            tx.sign(k, CHAIN);
        }
        let m = Moves {
            sender: k1,
            fee_payer: None,
            percent: 0,
            gas: u128::from(tx.gas()),
            to: Some(addr(T)),
            value: 1,
        };
        (hex0x(&tx.encode()), m)
    }

    /// Sends [`Chain::filler`]s for K1's nonces `range`, all at once; their hashes and moves.
    fn send_fillers(
        &self,
        range: std::ops::Range<u64>,
        keys: &[&SecretKey],
    ) -> Vec<(Value, Moves)> {
        range
            .map(|n| {
                let (raw, m) = self.filler(n, keys);
                (self.send(&raw), m)
            })
            .collect()
    }

    /// Waits until every one of `sent` is sealed (successfully), applies their moves, then
    /// checks the balances (once: they may share blocks). Returns the receipts.
    fn settle(&mut self, sent: &[(Value, Moves)]) -> Vec<Value> {
        let receipts: Vec<Value> = sent.iter().map(|(h, _)| self.receipt(h)).collect();
        for (r, (_, m)) in receipts.iter().zip(sent) {
            assert_eq!(r["status"], json!("0x1"), "{r}");
            self.apply(r, m);
        }
        self.check_balances();
        receipts
    }

    /// Fills K1's nonces `range` with [`Chain::filler`]s, sealed.
    fn fill(&mut self, range: std::ops::Range<u64>, keys: &[&SecretKey]) {
        let sent = self.send_fillers(range, keys);
        self.settle(&sent);
    }

    fn account_key(&self, a: &str) -> Value {
        ok(self.call("chain_getAccountKey", json!([a, "latest"])))
    }
}

/// The members `chain_getTransactionByHash` gives of a vector's transaction, against the
/// vector: hash, type, typeInt, senderTxHash, from, nonce, gas, prices, recipient, value,
/// input, key, fee payer and ratio (hex), signatures.
fn check_reported(rec: &Value, tx: &Value) {
    let name = rec["name"].as_str().unwrap();
    let i = &rec["inputs"];
    assert_eq!(tx["hash"], rec["txHash"], "{name}");
    assert_eq!(tx["type"], rec["type"], "{name}");
    assert_eq!(tx["typeInt"], rec["typeInt"], "{name}");
    assert_eq!(tx["senderTxHash"], rec["senderTxHash"], "{name}");
    assert_eq!(
        tx["from"],
        json!("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f"),
        "{name}"
    );
    assert_eq!(tx["nonce"], i["nonce"], "{name}");
    assert_eq!(tx["gas"], i["gas"], "{name}");
    assert_eq!(
        tx["signatures"],
        signatures_json(&rec["signatures"]),
        "{name}"
    );
    let price = i.get("gasPrice").unwrap_or_else(|| &i["maxFeePerGas"]);
    assert_eq!(&tx["gasPrice"], price, "{name}");
    let same = [
        "to",
        "value",
        "input",
        "key",
        "feePayer",
        "feeRatio",
        "humanReadable",
        "maxFeePerGas",
        "maxPriorityFeePerGas",
        "accessList",
    ];
    for m in same {
        assert_eq!(tx.get(m), i.get(m), "{name}: {m}");
    }
    match rec.get("feePayerSignatures") {
        Some(s) => assert_eq!(tx["feePayerSignatures"], signatures_json(s), "{name}"),
        None => assert!(tx.get("feePayerSignatures").is_none(), "{name}"),
    }
    if let Some(c) = i.get("codeFormat") {
        assert_eq!(
            tx["codeFormat"],
            json!(format!("0x{:x}", c.as_u64().unwrap())),
            "{name}"
        );
    }
    if rec["typeInt"].as_u64().unwrap() >= 0x7801 {
        assert_eq!(tx["chainId"], json!("0x3e9"), "{name}");
    }
}

const DEPLOY0: &str = "SmartContractDeploy known vector, chain 1001, nonce 0";
const EXEC0: &str = "SmartContractExecution, value 0, chain 1001, nonce 0";
const FD_EXEC_RATIO1: &str = "FeeDelegatedSmartContractExecutionWithRatio 30, chain 1001, nonce 1";
const FD_TRANSFER_RATIO7: &str = "FeeDelegatedValueTransferWithRatio 30, chain 1001, nonce 7";
const FD_CANCEL7: &str = "FeeDelegatedCancel, chain 1001, nonce 7";
const DYNAMIC_FEE7: &str = "EthereumDynamicFee value transfer, chain 1001, nonce 7";
const NOT_PROGRAM: &str = "not a program account (e.g., an account having code and storage)";
const SAME_NONCE: &str = "there is another tx which has the same nonce in the tx pool";

/// K1's deploy at nonce 0 creates the contract the execution vectors call
/// (0x72665d3e...50eb, which returns 42); an execution sent before it is refused. Then a
/// fee-delegated execution with ratio 30 and a fee-delegated transfer with ratio 30; the five
/// vectors at nonce 1234 wait in the queue one at a time (the first queued, the others
/// refused: this chain's rule before Magma replaces no queued transaction but by a cancel).
#[test]
fn a_contract_deployed_there_runs_here_and_pays_by_ratio() {
    let mut c = Chain::start();
    let k1 = key(0x46).address();
    let contract = create_address(&k1, 0);
    assert_eq!(
        hex0x(&contract.0),
        "0x72665d3e94cb4f374b7728f1ab21a3115c4d50eb"
    );
    c.vector_refused(EXEC0, NOT_PROGRAM);
    c.vector_refused(FD_EXEC_RATIO1, NOT_PROGRAM);

    let r = c.run(DEPLOY0, None);
    assert_eq!(r["contractAddress"], json!(hex0x(&contract.0)));
    // 53,000 + 22 bytes x 100 + one word x 2, then the constructor's run and its 10 bytes.
    assert!(quantity_of(&r["gasUsed"]) > 55_202, "{r}");
    assert_eq!(
        ok(c.call("chain_getCode", json!([hex0x(&contract.0), "latest"]))),
        json!("0x602a60005260206000f3")
    );
    c.vector_refused(EXEC0, "nonce too low");

    // The sender's half alone: caver's placeholder fee payer signature does not recover.
    let half = vector(FD_EXEC_RATIO1)["senderRaw"]
        .as_str()
        .unwrap()
        .to_string();
    c.refused(
        &half,
        "invalid fee payer: invalid transaction v, r, s values",
    );
    let r = c.run(FD_EXEC_RATIO1, None);
    // 21,000 + 36 bytes x 100 + 15,000 (ratio), then the call.
    assert!(quantity_of(&r["gasUsed"]) > 39_600, "{r}");

    c.fill(2..7, &[&key(0x46)]);
    c.run(FD_TRANSFER_RATIO7, Some(21_000 + 15_000));
    assert_eq!(
        ok(c.call("chain_getTransactionCount", json!([hex0x(&k1.0), "latest"]))),
        json!("0x8")
    );

    let queued = vector("ValueTransfer, value 0, chain 1001, nonce 1234");
    let h = c.send(queued["raw"].as_str().unwrap());
    assert_eq!(h, queued["txHash"]);
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x1"}));
    for name in [
        "Legacy contract call, value 0, chain 1001, nonce 1234",
        "AccountUpdate to weighted multisig K1+K3, chain 1001, nonce 1234",
        "FeeDelegatedSmartContractExecution, chain 1001, nonce 1234",
        "FeeDelegatedChainDataAnchoringWithRatio 99, arbitrary payload, chain 1001, nonce 1234",
    ] {
        c.vector_refused(name, SAME_NONCE);
    }
    // The queued one is known to the pool, not sealed.
    let tx = ok(c.call("chain_getTransactionByHash", json!([h])));
    check_reported(&queued, &tx);
    assert!(ok(c.call("chain_getTransactionReceipt", json!([h]))).is_null());
}

/// K1's key becomes a weighted multisig of K1 and K3 (threshold 2) through a fee-delegated
/// account update with ratio 30; caver's transfer signed by both then runs, while K1's
/// signature alone is refused.
#[test]
fn a_multisig_sender_there_signs_here() {
    let mut c = Chain::start();
    // 21,000 + two keys x 20,000 + 15,000 (ratio).
    c.run(
        "FeeDelegatedAccountUpdateWithRatio 30 to weighted multisig K1+K3, chain 1001, nonce 0",
        Some(21_000 + 40_000 + 15_000),
    );
    let k = c.account_key("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f");
    assert_eq!(k["keyType"], json!(4), "{k}");
    assert_eq!(k["key"]["threshold"], json!(2), "{k}");
    let pubs = &doc()["publicKeys"];
    for (n, p) in ["K1", "K3"].into_iter().enumerate() {
        let x = &pubs[p].as_str().unwrap()[..66];
        assert_eq!(k["key"]["keys"][n]["key"]["x"], json!(x), "{k}");
    }
    c.fill(1..7, &[&key(0x46), &key(0x48)]);
    c.vector_refused(FD_CANCEL7, "invalid sender: invalid account key");
    // The reference's pool wraps this in `invalid sender: ` (tx_pool.go validateTx returns
    // types.ErrSender(err) for every ValidateSender error).
    let pool = c.pool();
    let (code, text) = err(c.call(
        "chain_sendRawTransaction",
        json!([vector(DYNAMIC_FEE7)["raw"]]),
    ));
    assert_eq!(code, -32000);
    assert_eq!(
        text,
        "invalid sender: a legacy transaction must be with a legacy account key"
    );
    assert_eq!(c.pool(), pool);
    c.check_balances();
    // 21,000 + one more signature x 15,000.
    c.run(
        "ValueTransfer signed by K1 and K3 (two sender signatures), chain 1001, nonce 7",
        Some(21_000 + 15_000),
    );
}

/// Ethereum's access-list and dynamic-fee transactions in the reference's envelope, and a
/// fee-delegated transfer between them.
#[test]
fn ethereum_types_there_run_here() {
    let mut c = Chain::start();
    // 21,000 + one address x 2,400 + two storage keys x 1,900.
    c.run(
        "EthereumAccessList value transfer, chain 1001, nonce 0",
        Some(27_200),
    );
    let half = vector("FeeDelegatedValueTransfer, chain 1001, nonce 1")["senderRaw"]
        .as_str()
        .unwrap()
        .to_string();
    c.refused(
        &half,
        "invalid fee payer: invalid transaction v, r, s values",
    );
    c.run(
        "FeeDelegatedValueTransfer, chain 1001, nonce 1",
        Some(21_000 + 10_000),
    );
    c.fill(2..7, &[&key(0x46)]);
    c.run(DYNAMIC_FEE7, Some(27_200));
}

/// caver's fee-delegated cancel replaces the queued transaction of its nonce and is sealed
/// in its place; a value transfer and a fee-delegated memo before it.
#[test]
fn a_cancel_there_replaces_a_queued_transaction_here() {
    let mut c = Chain::start();
    c.run(
        "ValueTransfer known vector, chain 1001, nonce 0",
        Some(21_000),
    );
    // 21,000 + 36 bytes x 100 + 10,000.
    c.run(
        "FeeDelegatedValueTransferMemo, chain 1001, nonce 1",
        Some(34_600),
    );
    let (raw, _) = c.filler(7, &[&key(0x46)]);
    let replaced = c.send(&raw);
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x1"}));
    let rec = vector(FD_CANCEL7);
    let h = c.send(rec["raw"].as_str().unwrap());
    assert_eq!(h, rec["txHash"]);
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x1"}));
    assert!(ok(c.call("chain_getTransactionByHash", json!([replaced]))).is_null());
    let mut sent = c.send_fillers(2..7, &[&key(0x46)]);
    sent.push((h.clone(), Moves::of(&rec)));
    let r = c.settle(&sent).pop().unwrap();
    assert_eq!(quantity_of(&r["gasUsed"]), 21_000 + 10_000);
    check_reported(&rec, &ok(c.call("chain_getTransactionByHash", json!([h]))));
    assert!(ok(c.call("chain_getTransactionByHash", json!([replaced]))).is_null());
    assert_eq!(c.pool(), json!({"pending": "0x0", "queued": "0x0"}));
}

/// A memo, a deploy whose fee a fee payer pays, and an update to the fail key, after which
/// K1 can sign nothing.
#[test]
fn a_fee_payer_deploys_and_a_fail_key_locks_the_account() {
    let mut c = Chain::start();
    // 21,000 + 5 bytes x 100.
    c.run("ValueTransferMemo, chain 1001, nonce 0", Some(21_500));
    let r = c.run("FeeDelegatedSmartContractDeploy, chain 1001, nonce 1", None);
    let contract = create_address(&key(0x46).address(), 1);
    assert_eq!(r["contractAddress"], json!(hex0x(&contract.0)));
    assert_eq!(
        ok(c.call("chain_getCode", json!([hex0x(&contract.0), "latest"]))),
        json!("0x602a60005260206000f3")
    );
    c.fill(2..7, &[&key(0x46)]);
    c.run(
        "AccountUpdate to AccountKeyFail, chain 1001, nonce 7",
        Some(21_000),
    );
    let k = c.account_key("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f");
    assert_eq!(k, json!({"keyType": 3, "key": {}}));
    let (raw, _) = c.filler(8, &[&key(0x46)]);
    c.refused(&raw, "invalid sender: invalid account key");
}

/// An update to the legacy key, then a fee-delegated update to K3's public key: K1's own
/// signature no longer counts, K3's does.
#[test]
fn account_updates_there_change_keys_here() {
    let mut c = Chain::start();
    c.run(
        "AccountUpdate to AccountKeyLegacy, chain 1001, nonce 0",
        Some(21_000),
    );
    let k = c.account_key("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f");
    assert_eq!(k, json!({"keyType": 1, "key": {}}));
    // 21,000 + one key x 20,000 + 10,000.
    c.run(
        "FeeDelegatedAccountUpdate to AccountKeyPublic(K3), chain 1001, nonce 1",
        Some(51_000),
    );
    let k = c.account_key("0x9d8a62f656a8d1615c1294fd71e9cfb3e4855a4f");
    assert_eq!(k["keyType"], json!(2), "{k}");
    let x = doc()["publicKeys"]["K3"].as_str().unwrap()[..66].to_string();
    assert_eq!(k["key"]["x"], json!(x), "{k}");
    let (raw, _) = c.filler(2, &[&key(0x46)]);
    c.refused(&raw, "invalid sender: invalid account key");
    c.fill(2..3, &[&key(0x48)]);
}

/// K2 makes its own key a weighted multisig of K2 and K3 (an update signed here); caver's
/// transfer whose fee payer signed with both then runs, after caver's cancel.
#[test]
fn a_multisig_fee_payer_there_pays_here() {
    let mut c = Chain::start();
    let (k2, k3) = (key(0x47), key(0x48));
    let mut t = Native::new(Base::AccountUpdate, FeeMode::Sender, k2.address());
    (t.gas_price, t.gas) = (common::u256(PRICE), 100_000);
    t.key = Some(AccountKey::WeightedMultisig {
        threshold: 2,
        keys: vec![(1, k2.public_compressed()), (1, k3.public_compressed())],
    });
    let mut tx = Transaction::Native(t);
    tx.sign(&k2, CHAIN);
    let h = c.send(&hex0x(&tx.encode()));
    let m = Moves {
        sender: k2.address(),
        fee_payer: None,
        percent: 0,
        gas: 100_000,
        to: None,
        value: 0,
    };
    assert_eq!(quantity_of(&c.sealed(&h, &m)["gasUsed"]), 21_000 + 40_000);

    c.run("Cancel, chain 1001, nonce 0", Some(21_000));
    // A fee payer signature of K2 alone no longer counts for K2.
    c.vector_refused(
        "FeeDelegatedValueTransfer, chain 1001, nonce 1",
        "invalid fee payer: invalid account key",
    );
    // 21,000 + 10,000 + one more fee payer signature x 15,000.
    c.run(
        "FeeDelegatedValueTransfer, fee payer signed with K2 and K3 (two fee payer signatures), chain 1001, nonce 1",
        Some(46_000),
    );
}

/// Chain-data anchoring from a local user needs `--txpool.allow-local-anchortx`; with it,
/// caver's is sealed (its payload is no anchoring data: `inputJSON` null).
#[test]
fn anchoring_there_is_sealed_here_when_allowed() {
    const ANCHOR0: &str = "ChainDataAnchoring, arbitrary payload, chain 1001, nonce 0";
    let c = Chain::start_with(&[]);
    c.vector_refused(
        ANCHOR0,
        "locally anchoring chaindata tx is not allowed in this node",
    );
    drop(c);
    let mut c = Chain::start();
    // 21,000 + 36 bytes x 100.
    let r = c.run(ANCHOR0, Some(24_600));
    assert_eq!(r["inputJSON"], Value::Null);
    let tx = ok(c.call("chain_getTransactionByHash", json!([r["transactionHash"]])));
    assert_eq!(tx["inputJSON"], Value::Null);
}

/// The legacy known vector (1 KLAY to 0x3535...35) of Klaytn's documentation.
#[test]
fn a_legacy_transaction_there_runs_here() {
    let mut c = Chain::start();
    c.run(
        "Legacy known vector (value transfer), chain 1001, nonce 0",
        Some(21_000),
    );
    assert_eq!(c.balance(&addr(T)), KLAY);
}
