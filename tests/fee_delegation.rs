//! Fee delegation, cancels, anchoring and every transaction type through `chaind --dev` over
//! HTTP: who pays what (exact to the unit, the split computed here as the reference's
//! buyGas/refundGas do it), what the fee payer's account key accepts and the refusals with
//! the reference's texts (nothing changed after each), a cancel replacing the pending
//! transaction of its nonce, anchoring only with `--txpool.allow-local-anchortx`, and a chain
//! holding one transaction of each type exported and imported into a fresh data directory.

mod common;

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::transaction::{Base, FeeMode, Native, Transaction};
use common::contracts::compiled;
use common::{err, http_args, http_call, ok, quantity_of as number, u256, Node, PRICE};
use serde_json::{json, Value};

/// A recipient no test funds otherwise.
const R: &str = "0x7777777777777777777777777777777777777777";

fn key(b: u8) -> SecretKey {
    SecretKey::from_slice(&[b; 32]).unwrap()
}

fn hex_addr(a: &Address) -> String {
    format!("0x{}", hex::encode(a.0))
}

fn q(n: u128) -> String {
    format!("0x{n:x}")
}

/// `chaind --dev` with `extra` flags and HTTP offering `apis`.
fn start(extra: &[&str], apis: &str) -> Node {
    let mut args = vec!["--dev"];
    args.extend_from_slice(extra);
    args.extend(http_args(apis));
    Node::start(&args)
}

struct Rpc {
    url: String,
    dev: String,
    dev_key: SecretKey,
    chain_id: u64,
}

impl Rpc {
    /// The node's endpoint, its developer account unlocked (passphrase empty).
    fn of(n: &Node) -> Rpc {
        let url = n.http.clone().unwrap();
        let dev = common::dev_account(n);
        let chain_id = number(&ok(http_call(&url, "chain_chainId", json!([])))) as u64;
        let r = Rpc {
            url,
            dev: dev.clone(),
            dev_key: common::dev_key(n),
            chain_id,
        };
        assert_eq!(
            r.ok("personal_unlockAccount", json!([dev, "", 0])),
            json!(true)
        );
        r
    }

    fn call(&self, m: &str, p: Value) -> Value {
        http_call(&self.url, m, p)
    }

    fn ok(&self, m: &str, p: Value) -> Value {
        ok(self.call(m, p))
    }

    fn err(&self, m: &str, p: Value) -> (i64, String) {
        err(self.call(m, p))
    }

    fn balance_at(&self, a: &str, block: u64) -> u128 {
        number(&self.ok("chain_getBalance", json!([a, q(block.into())])))
    }

    fn balance(&self, a: &str) -> u128 {
        number(&self.ok("chain_getBalance", json!([a, "latest"])))
    }

    fn nonce(&self, a: &str) -> u64 {
        number(&self.ok("chain_getTransactionCount", json!([a, "pending"]))) as u64
    }

    fn head(&self) -> u64 {
        number(&self.ok("chain_blockNumber", json!([]))) as u64
    }

    fn receipt(&self, hash: &Value) -> Value {
        common::wait_receipt(&self.url, hash)
    }

    /// Imports `key` under passphrase "pw" and unlocks it; its address.
    fn import(&self, key: &SecretKey) -> String {
        let a = self.ok(
            "personal_importRawKey",
            json!([hex::encode(&key.to_bytes()[..]), "pw"]),
        );
        assert_eq!(
            self.ok("personal_unlockAccount", json!([a, "pw", 0])),
            json!(true)
        );
        a.as_str().unwrap().to_string()
    }

    /// Sends `amount` from the developer account to `to` (a raw legacy transfer); its
    /// receipt once sealed.
    fn fund(&self, to: &str, amount: u128) -> Value {
        let raw = common::raw_transfer(
            &self.dev_key,
            self.nonce(&self.dev),
            Address::parse_lenient(to).unwrap(),
            amount,
            PRICE,
            self.chain_id,
        );
        let h = self.ok("chain_sendRawTransaction", json!([raw]));
        let r = self.receipt(&h);
        assert_eq!(r["status"], json!("0x1"), "{r}");
        r
    }

    /// The sender signs `args` (chain_signTransaction), then the fee payer named in them
    /// sends it (chain_sendTransactionAsFeePayer) with the sender's `signatures` and the
    /// `nonce`, `gas` and `gasPrice` of the signed transaction copied, as the reference's
    /// suite does. The sign result and the hash.
    fn send_fd(&self, args: Value) -> (Value, Value) {
        let signed = self.ok("chain_signTransaction", json!([args]));
        assert_eq!(signed["tx"]["feePayerSignatures"], json!([]), "{signed}");
        let mut a = args.clone();
        for m in ["signatures", "nonce", "gas", "gasPrice"] {
            a[m] = signed["tx"][m].clone();
        }
        let h = self.ok("chain_sendTransactionAsFeePayer", json!([a]));
        (signed, h)
    }

    fn send(&self, args: Value) -> Value {
        self.ok("chain_sendTransaction", json!([args]))
    }

    fn send_raw(&self, tx: &Transaction) -> Value {
        self.call(
            "chain_sendRawTransaction",
            json!([format!("0x{}", hex::encode(tx.encode()))]),
        )
    }

    /// Balances and nonces of `accounts`, the head and the pool's counts and content: what a
    /// refused transaction must leave as it was.
    fn snapshot(&self, accounts: &[&str]) -> Value {
        json!({
            "balances": accounts.iter().map(|a| self.balance(a).to_string()).collect::<Vec<_>>(),
            "nonces": accounts.iter().map(|a| self.nonce(a)).collect::<Vec<_>>(),
            "head": self.head(),
            "pool": self.ok("txpool_status", json!([])),
            "content": self.ok("txpool_content", json!([])),
        })
    }
}

fn block_of(receipt: &Value) -> u64 {
    number(&receipt["blockNumber"]) as u64
}

/// The fee payer's and the sender's parts of `fee` at `ratio` percent: the fee payer's
/// rounded down, the sender the rest (the reference's `CalcFeeWithRatio`).
fn split(fee: u128, ratio: u128) -> (u128, u128) {
    let payer = fee * ratio / 100;
    (payer, fee - payer)
}

/// What the sender, the fee payer and the rewardbase gain or lose in the block of `receipt`
/// (balance at its block minus at the block before): (sender, fee payer, rewardbase).
fn deltas(c: &Rpc, receipt: &Value, sender: &str, payer: &str) -> (i128, i128, i128) {
    let b = block_of(receipt);
    let d = |a: &str| c.balance_at(a, b) as i128 - c.balance_at(a, b - 1) as i128;
    (d(sender), d(payer), d(&c.dev))
}

/// The members a fee-delegated transaction carries in its lookups and receipt.
fn assert_delegated(c: &Rpc, hash: &Value, payer: &str, ratio: Option<&str>) {
    let tx = c.ok("chain_getTransactionByHash", json!([hash]));
    let receipt = c.ok("chain_getTransactionReceipt", json!([hash]));
    for v in [&tx, &receipt] {
        assert_eq!(v["feePayer"], json!(payer), "{v}");
        let sigs = v["feePayerSignatures"].as_array().unwrap();
        assert_eq!(sigs.len(), 1, "{v}");
        for k in ["V", "R", "S"] {
            assert!(sigs[0][k].as_str().unwrap().starts_with("0x"), "{v}");
        }
        match ratio {
            Some(r) => assert_eq!(v["feeRatio"], json!(r), "{v}"),
            None => assert!(v.get("feeRatio").is_none(), "{v}"),
        }
        assert!(v["senderTxHash"].is_string(), "{v}");
        assert_ne!(v["senderTxHash"], *hash, "{v}");
    }
    assert_eq!(tx["hash"], *hash);
    assert_eq!(receipt["transactionHash"], *hash);
    let sender_hash = tx["senderTxHash"].clone();
    assert_eq!(receipt["senderTxHash"], sender_hash);
    assert_eq!(
        c.ok("chain_getTransactionBySenderTxHash", json!([sender_hash])),
        tx
    );
    assert_eq!(
        c.ok(
            "chain_getTransactionReceiptBySenderTxHash",
            json!([sender_hash])
        ),
        receipt
    );
}

/// Item 1: a sender without funds, a fee payer with; full delegation (9), a delegated
/// contract execution (49), a ratio of 30 (10). The sender loses exactly the value (and its
/// share), the fee payer exactly its share of gasUsed x price, the rewardbase gains gasUsed
/// x price; the lookups carry the fee payer's members and find the transaction by its sender
/// transaction hash.
#[test]
fn the_fee_payer_pays_and_the_sender_only_its_share() {
    let n = start(&[], "chain,personal,txpool");
    let c = Rpc::of(&n);
    let s = c.import(&key(0x61));
    let p = c.import(&key(0x62));
    c.fund(&p, 10u128.pow(18));
    assert_eq!(c.balance(&s), 0);

    // Full delegation from a sender holding nothing: value 0.
    let (signed, h) = c.send_fd(json!({
        "typeInt": 9, "from": s, "to": R, "value": "0x0", "gas": "0x9c40", "feePayer": p,
    }));
    assert_eq!(signed["tx"]["typeInt"], json!(9));
    let r = c.receipt(&h);
    assert_eq!(r["status"], json!("0x1"), "{r}");
    // TxGas + TxGasFeeDelegated.
    assert_eq!(number(&r["gasUsed"]), 31_000);
    let fee = 31_000 * PRICE as i128;
    assert_eq!(deltas(&c, &r, &s, &p), (0, -fee, fee));
    assert_eq!(c.balance(&s), 0);
    assert_eq!(c.nonce(&s), 1);
    let block = c.ok("chain_getBlockByNumber", json!([r["blockNumber"], false]));
    assert_eq!(block["reward"], json!(c.dev));
    assert_delegated(&c, &h, &p, None);

    // Full delegation with a value: the sender loses exactly the value.
    let value = 123_456_789u128;
    c.fund(&s, value);
    let (_, h) = c.send_fd(json!({
        "typeInt": 9, "from": s, "to": R, "value": q(value), "gas": "0x9c40", "feePayer": p,
    }));
    let r = c.receipt(&h);
    assert_eq!(number(&r["gasUsed"]), 31_000);
    assert_eq!(deltas(&c, &r, &s, &p), (-(value as i128), -fee, fee));
    assert_eq!(c.balance(&s), 0);
    assert_eq!(c.balance(R), value);

    // A delegated execution of a contract from the sender holding nothing.
    let counter = common::contracts::deploy(
        &c.url,
        &c.dev_key,
        c.nonce(&c.dev),
        compiled("Counter").bytecode,
    );
    let input = compiled("Counter").call_data("increment()", &[]);
    let (_, h) = c.send_fd(json!({
        "typeInt": 49, "from": s, "to": hex_addr(&counter), "value": "0x0",
        "input": format!("0x{}", hex::encode(&input)), "gas": "0x30d40", "feePayer": p,
    }));
    let r = c.receipt(&h);
    assert_eq!(r["status"], json!("0x1"), "{r}");
    assert_eq!(r["logs"].as_array().unwrap().len(), 1, "{r}");
    let used = number(&r["gasUsed"]) as i128;
    assert_eq!(
        deltas(&c, &r, &s, &p),
        (0, -used * PRICE as i128, used * PRICE as i128)
    );
    assert_delegated(&c, &h, &p, None);

    // A ratio of 30: the sender holds exactly its 70 % of gas x price plus the value, as the
    // pool demands; one unit less is refused and changes nothing.
    let (gas, ratio, value) = (50_000u128, 30u128, 1_000u128);
    let (payer_up, sender_up) = split(gas * PRICE, ratio);
    let used = 21_000 + 15_000; // TxGas + TxGasFeeDelegatedWithRatio
    let (payer_back, sender_back) = split((gas - used) * PRICE, ratio);
    c.fund(&s, sender_up + value - 1);
    let args = json!({
        "typeInt": 10, "from": s, "to": R, "value": q(value), "gas": q(gas),
        "feePayer": p, "feeRatio": 30,
    });
    let signed = c.ok("chain_signTransaction", json!([args]));
    assert_eq!(signed["tx"]["feeRatio"], json!("0x1e"));
    let mut send = args.clone();
    send["signatures"] = signed["tx"]["signatures"].clone();
    send["nonce"] = signed["tx"]["nonce"].clone();
    send["gasPrice"] = signed["tx"]["gasPrice"].clone();
    let before = c.snapshot(&[&s, &p, &c.dev]);
    assert_eq!(
        c.err("chain_sendTransactionAsFeePayer", json!([send])),
        (
            -32000,
            "insufficient funds of the sender for value ".to_string()
        )
    );
    assert_eq!(c.snapshot(&[&s, &p, &c.dev]), before);
    c.fund(&s, 1);
    assert_eq!(c.balance(&s), sender_up + value);
    let h = c.ok("chain_sendTransactionAsFeePayer", json!([send]));
    let r = c.receipt(&h);
    assert_eq!(number(&r["gasUsed"]), used);
    let by_payer = (payer_up - payer_back) as i128;
    let by_sender = (sender_up - sender_back) as i128;
    assert_eq!(by_payer + by_sender, (used * PRICE) as i128);
    assert_eq!(
        deltas(&c, &r, &s, &p),
        (
            -by_sender - value as i128,
            -by_payer,
            (used * PRICE) as i128
        )
    );
    assert_eq!(c.balance(&s), sender_back);
    assert_delegated(&c, &h, &p, Some("0x1e"));
    let tx = c.ok("chain_getTransactionByHash", json!([h]));
    assert_eq!(tx["typeInt"], json!(10));
    assert_eq!(
        tx["type"],
        json!("TxTypeFeeDelegatedValueTransferWithRatio")
    );
    assert_eq!(tx["from"], json!(s));
}

/// A fee-delegated value transfer of 0 from `sender` at `nonce`, signed by it for
/// `chain_id`, naming `fee_payer`; not yet signed by the fee payer.
fn fd_transfer(
    sender: &SecretKey,
    nonce: u64,
    fee_payer: Address,
    mode: FeeMode,
    chain_id: u64,
) -> Transaction {
    let mut n = Native::new(Base::ValueTransfer, mode, sender.address());
    n.nonce = nonce;
    n.gas_price = u256(PRICE);
    n.gas = 40_000;
    n.to = Some(Address::parse_lenient(R).unwrap());
    n.fee_payer = fee_payer;
    let mut tx = Transaction::Native(n);
    tx.sign(sender, chain_id);
    tx
}

fn fee_payer_signed(mut tx: Transaction, key: &SecretKey, chain_id: u64) -> Transaction {
    assert!(tx.sign_as_fee_payer(key, chain_id));
    tx
}

/// Item 2: a fee payer whose key is role-based signs with its fee-payer key: accepted. Its
/// transaction key, its old legacy key, a signature over another fee payer's address, a
/// ratio of 0 or 100, a fee payer without funds: each refused with the reference's text,
/// nothing changed.
#[test]
fn the_fee_payer_role_key_signs_and_the_rest_is_refused() {
    let n = start(&[], "chain,personal,txpool");
    let c = Rpc::of(&n);
    let legacy = key(0x71);
    let (k_tx, k_update, k_fee) = (key(0x72), key(0x73), key(0x74));
    let payer = c.import(&legacy);
    let payer_addr = legacy.address();
    c.fund(&payer, 10u128.pow(18));
    let role_based = AccountKey::RoleBased(vec![
        AccountKey::Public(k_tx.public_compressed()),
        AccountKey::Public(k_update.public_compressed()),
        AccountKey::Public(k_fee.public_compressed()),
    ]);
    let h = c.send(json!({
        "typeInt": 32, "from": payer,
        "key": format!("0x{}", hex::encode(role_based.encode())),
    }));
    assert_eq!(c.receipt(&h)["status"], json!("0x1"));
    assert_eq!(
        c.ok("chain_getAccountKey", json!([payer, "latest"]))["keyType"],
        json!(5)
    );

    let sender = key(0x75);
    let s = hex_addr(&sender.address());
    let id = c.chain_id;
    let watched = [s.as_str(), payer.as_str(), c.dev.as_str()];
    let before = c.snapshot(&watched);
    let refused = |tx: &Transaction, text: &str| {
        assert_eq!(
            err(c.send_raw(tx)),
            (-32000, text.to_string()),
            "{}",
            tx.type_name()
        );
        assert_eq!(c.snapshot(&watched), before);
    };
    let bad_key = "invalid fee payer: invalid account key";
    let plain = || fd_transfer(&sender, 0, payer_addr, FeeMode::Delegated, id);
    refused(&fee_payer_signed(plain(), &k_tx, id), bad_key);
    refused(&fee_payer_signed(plain(), &k_update, id), bad_key);
    refused(&fee_payer_signed(plain(), &legacy, id), bad_key);
    // Signed over another fee payer's address, then naming this one.
    let other = Address([0x99; 20]);
    let mut elsewhere = fee_payer_signed(
        fd_transfer(&sender, 0, other, FeeMode::Delegated, id),
        &k_fee,
        id,
    );
    if let Transaction::Native(t) = &mut elsewhere {
        t.fee_payer = payer_addr;
    }
    refused(&elsewhere, bad_key);
    // The keystore holds only the legacy key: the node signs for the fee payer with it.
    let args = json!({
        "typeInt": 9, "from": s, "to": R, "value": "0x0", "gas": "0x9c40",
        "gasPrice": q(PRICE), "nonce": "0x0", "feePayer": payer,
    });
    let mut sent = args.clone();
    let t = fd_transfer(&sender, 0, payer_addr, FeeMode::Delegated, id);
    let sig = &t.signatures()[0];
    sent["signatures"] = json!([{
        "V": q(sig.v.into()),
        "R": format!("0x{}", hex::encode(sig.r)),
        "S": format!("0x{}", hex::encode(sig.s)),
    }]);
    assert_eq!(
        c.err("chain_sendTransactionAsFeePayer", json!([sent])),
        (-32000, bad_key.to_string())
    );
    assert_eq!(c.snapshot(&watched), before);
    // Ratios out of range, signed correctly.
    for ratio in [0, 100] {
        refused(
            &fee_payer_signed(
                fd_transfer(&sender, 0, payer_addr, FeeMode::Ratio(ratio), id),
                &k_fee,
                id,
            ),
            "fee ratio is out of range [1, 99]",
        );
    }
    // A fee payer holding nothing.
    let poor = key(0x76);
    refused(
        &fee_payer_signed(
            fd_transfer(&sender, 0, poor.address(), FeeMode::Delegated, id),
            &poor,
            id,
        ),
        "insufficient funds of the fee payer for gas * price",
    );

    // The fee-payer role's key: accepted, the fee payer pays.
    let good = fee_payer_signed(plain(), &k_fee, id);
    let h = ok(c.send_raw(&good));
    assert_eq!(h, json!(format!("0x{}", hex::encode(good.hash()))));
    let r = c.receipt(&h);
    assert_eq!(r["status"], json!("0x1"), "{r}");
    // Public keys cost no validation gas.
    assert_eq!(number(&r["gasUsed"]), 31_000);
    let fee = 31_000 * PRICE as i128;
    assert_eq!(deltas(&c, &r, &s, &payer), (0, -fee, fee));
    assert_delegated(&c, &h, &payer, None);
}

/// Item 4 (refusal): without `--txpool.allow-local-anchortx` an anchoring transaction from
/// this node's RPC is refused, plain or fee-delegated; nothing enters the pool.
#[test]
fn local_anchoring_needs_the_flag() {
    let n = start(&[], "chain,personal,txpool");
    let c = Rpc::of(&n);
    let p = c.import(&key(0x91));
    let before = c.snapshot(&[&c.dev, &p]);
    let text = "locally anchoring chaindata tx is not allowed in this node";
    assert_eq!(
        c.err(
            "chain_sendTransaction",
            json!([{"typeInt": 72, "from": c.dev, "input": "0x1234"}])
        ),
        (-32000, text.to_string())
    );
    let signed = c.ok(
        "chain_signTransaction",
        json!([{"typeInt": 73, "from": c.dev, "input": "0x1234", "feePayer": p, "gas": "0x186a0"}]),
    );
    assert_eq!(
        c.err(
            "chain_sendTransactionAsFeePayer",
            json!([{
                "typeInt": 73, "from": c.dev, "input": "0x1234", "feePayer": p,
                "gas": "0x186a0", "gasPrice": signed["tx"]["gasPrice"],
                "nonce": signed["tx"]["nonce"], "signatures": signed["tx"]["signatures"],
            }])
        ),
        (-32000, text.to_string())
    );
    assert_eq!(
        c.err("chain_sendRawTransaction", json!([signed["raw"]])),
        (-32000, text.to_string())
    );
    assert_eq!(c.snapshot(&[&c.dev, &p]), before);
    assert_eq!(before["pool"], json!({"pending": "0x0", "queued": "0x0"}));
}

/// The nonces (as numbers, in order) of one sender's entries in a txpool view.
fn nonces_in(view: &Value) -> Vec<u64> {
    let mut v: Vec<u64> = view
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {view}"))
        .keys()
        .map(|k| k.parse().unwrap())
        .collect();
    v.sort();
    v
}

/// Item 3, with every new type pending at once: a cancel (56) takes the place of the
/// pending transfer of its nonce, a fee-delegated cancel (57) too; a transfer at a taken
/// nonce is refused, the same cancel again is a known transaction; txpool_content and
/// txpool_inspect show the pending transactions of every type; once sealed, the replaced
/// transfers are unknown and never ran.
#[test]
fn a_cancel_replaces_the_pending_transaction_of_its_nonce() {
    let n = start(
        &["--dev.period", "6s", "--txpool.allow-local-anchortx"],
        "chain,personal,txpool",
    );
    let c = Rpc::of(&n);
    let s = c.import(&key(0x81));
    // The first block is sealed at once, the next no sooner than 6 s after it: until then
    // everything sent stays pending.
    c.fund(&s, 10u128.pow(21));
    let head = c.head();
    let transfer = |nonce: u64, value: u128| json!({"typeInt": 8, "from": s, "to": R, "value": q(value), "nonce": q(nonce.into())});
    let t0 = c.send(transfer(0, 1));
    let x0 = c.send(json!({"typeInt": 56, "from": s, "nonce": "0x0"}));
    let content = c.ok("txpool_content", json!([]));
    let mine = &content["pending"][&s];
    assert_eq!(nonces_in(mine), [0], "{content}");
    assert_eq!(mine["0"]["hash"], x0);
    assert_eq!(mine["0"]["typeInt"], json!(56));
    assert_eq!(c.ok("chain_getTransactionByHash", json!([t0])), Value::Null);
    let before = c.snapshot(&[&s, &c.dev]);
    assert_eq!(
        c.err("chain_sendTransaction", json!([transfer(0, 2)])),
        (
            -32000,
            "there is another tx which has the same nonce in the tx pool".to_string()
        )
    );
    assert_eq!(
        c.err(
            "chain_sendTransaction",
            json!([{"typeInt": 56, "from": s, "nonce": "0x0"}])
        ),
        (
            -32000,
            format!(
                "known transaction: {}",
                x0.as_str().unwrap().trim_start_matches("0x")
            )
        )
    );
    assert_eq!(c.snapshot(&[&s, &c.dev]), before);

    // A fee-delegated cancel over the transfer of nonce 1, the developer account paying.
    let t1 = c.send(transfer(1, 3));
    let (_, x1) = c.send_fd(json!({"typeInt": 57, "from": s, "feePayer": c.dev, "nonce": "0x1"}));

    // The other new types, pending beside them.
    let other = "0x7878787878787878787878787878787878787878";
    let code = format!("0x{}", hex::encode(compiled("Counter").bytecode));
    let fd = |t: u64, extra: Value| {
        let mut a = json!({"typeInt": t, "from": s, "feePayer": c.dev});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        if t % 8 == 2 {
            a["feeRatio"] = json!(30);
        }
        c.send_fd(a).1
    };
    let transfer0 = json!({"to": other, "value": "0x0"});
    let memo = json!({"to": other, "value": "0x0", "input": "0x6d656d6f"});
    let update = json!({"key": "0x01c0"});
    let deploy = json!({"value": "0x0", "input": code, "humanReadable": false, "codeFormat": 0});
    let anchor = json!({"input": "0xb3f98adc"});
    let access = json!([{"address": other, "storageKeys": [format!("0x{:064x}", 3)]}]);
    let mut sent: Vec<(u64, Value)> = vec![(56, x0.clone()), (57, x1.clone())];
    for (t, extra) in [
        (9, &transfer0),
        (10, &transfer0),
        (17, &memo),
        (18, &memo),
        (33, &update),
        (34, &update),
        (41, &deploy),
        (42, &deploy),
        (58, &json!({})),
        (73, &anchor),
        (74, &anchor),
    ] {
        sent.push((t, fd(t, extra.clone())));
    }
    sent.push((
        30721,
        c.send(json!({
            "typeInt": 30721, "from": s, "to": other, "value": "0x0", "gasPrice": q(PRICE),
            "accessList": access,
        })),
    ));
    sent.push((
        30722,
        c.send(json!({
            "typeInt": 30722, "from": s, "to": other, "value": "0x0",
            "maxFeePerGas": q(PRICE), "maxPriorityFeePerGas": q(PRICE), "accessList": access,
        })),
    ));
    let content = c.ok("txpool_content", json!([]));
    let inspect = c.ok("txpool_inspect", json!([]));
    assert_eq!(
        c.head(),
        head,
        "a block was sealed within the period: the pending window of this test closed early"
    );
    let mine = &content["pending"][&s];
    let want: Vec<u64> = (0..sent.len() as u64).collect();
    assert_eq!(nonces_in(mine), want, "{content}");
    assert_eq!(nonces_in(&inspect["pending"][&s]), want, "{inspect}");
    for (nonce, (t, h)) in sent.iter().enumerate() {
        let entry = &mine[nonce.to_string()];
        assert_eq!(entry["typeInt"], json!(t), "{entry}");
        assert_eq!(entry["hash"], *h, "{entry}");
        assert_eq!(entry["blockNumber"], json!("0x0"), "{entry}");
        if t % 8 != 0 && *t < 0x7800 {
            assert_eq!(entry["feePayer"], json!(c.dev), "{entry}");
            assert_eq!(entry["feePayerSignatures"].as_array().unwrap().len(), 1);
        }
        let line = inspect["pending"][&s][nonce.to_string()].as_str().unwrap();
        assert!(line.contains(" gas × "), "{line}");
        assert!(line.ends_with(" peb"), "{line}");
        // The reference words every transaction without a recipient as a creation.
        if matches!(t, 32..=34 | 56..=58 | 72..=74) {
            assert!(line.starts_with("contract creation: 0 peb + "), "{line}");
        }
    }
    assert_eq!(content["queued"], json!({}));
    // A pending fee-delegated transaction is found by its hash, not yet by its sender hash.
    let pending57 = mine["1"].clone();
    assert_ne!(pending57["senderTxHash"], x1);
    assert_eq!(
        c.ok(
            "chain_getTransactionBySenderTxHash",
            json!([pending57["senderTxHash"]])
        ),
        Value::Null
    );
    assert_eq!(
        c.ok("chain_getTransactionBySenderTxHash", json!([x1])),
        pending57
    );

    // Sealed: the cancels ran, the transfers they replaced are unknown and never ran.
    for (t, h) in &sent {
        let r = c.receipt(h);
        assert_eq!(r["status"], json!("0x1"), "type {t}: {r}");
        assert_eq!(block_of(&r), head + 1, "type {t}: {r}");
    }
    for t in [&t0, &t1] {
        assert_eq!(c.ok("chain_getTransactionByHash", json!([t])), Value::Null);
        assert_eq!(c.ok("chain_getTransactionReceipt", json!([t])), Value::Null);
    }
    assert_eq!(c.balance(R), 0);
    assert_eq!(c.nonce(&s), sent.len() as u64);
    assert_eq!(
        c.ok("txpool_status", json!([])),
        json!({"pending": "0x0", "queued": "0x0"})
    );
}

fn rlp_str(b: &[u8]) -> Vec<u8> {
    if b.len() == 1 && b[0] < 0x80 {
        return b.to_vec();
    }
    rlp_with(0x80, b)
}

fn rlp_uint(n: u64) -> Vec<u8> {
    let bytes = n.to_be_bytes();
    let first = bytes.iter().position(|&b| b != 0).unwrap_or(8);
    rlp_str(&bytes[first..])
}

fn rlp_list(items: &[Vec<u8>]) -> Vec<u8> {
    rlp_with(0xc0, &items.concat())
}

fn rlp_with(offset: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    if payload.len() < 56 {
        out.push(offset + payload.len() as u8);
    } else {
        let len = (payload.len() as u64).to_be_bytes();
        let first = len.iter().position(|&b| b != 0).unwrap();
        out.push(offset + 55 + (8 - first) as u8);
        out.extend_from_slice(&len[first..]);
    }
    out.extend_from_slice(payload);
    out
}

fn hash_of(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

/// Item 4 (accepted) and item 5: a chain with one transaction of each type (the anchoring
/// ones accepted with the flag, `inputJSON` decoded for a real anchoring payload, null for
/// another); a delegated execution traces as the same call sent plainly; exported and
/// imported into a fresh data directory (without the flag), the same head, state root, and
/// the same transactions, receipts and trace.
#[test]
fn every_type_survives_export_and_import() {
    let n = start(
        &["--txpool.allow-local-anchortx"],
        "admin,chain,debug,personal,txpool",
    );
    let c = Rpc::of(&n);
    let s = c.import(&key(0xa1));
    let p = c.import(&key(0xa2));
    c.fund(&s, 10u128.pow(21));
    c.fund(&p, 10u128.pow(21));
    let counter = compiled("Counter");
    let mut sent: Vec<(u64, Value)> = Vec::new();
    let fd = |t: u64, extra: &Value| {
        let mut a = json!({"typeInt": t, "from": s, "feePayer": p});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        if t % 8 == 2 {
            a["feeRatio"] = json!(30);
        }
        c.send_fd(a).1
    };
    let plain = |t: u64, extra: &Value| {
        let mut a = json!({"typeInt": t, "from": s});
        for (k, v) in extra.as_object().unwrap() {
            a[k] = v.clone();
        }
        c.send(a)
    };
    let send = |t: u64, extra: &Value| {
        if t.is_multiple_of(8) {
            plain(t, extra)
        } else {
            fd(t, extra)
        }
    };

    // The deploys first: the executions call the first one's contract.
    let deploy = json!({
        "value": "0x0", "input": format!("0x{}", hex::encode(&counter.bytecode)),
        "humanReadable": false, "codeFormat": 0,
    });
    let h40 = send(40, &deploy);
    let r40 = c.receipt(&h40);
    assert_eq!(r40["status"], json!("0x1"), "{r40}");
    let contract = r40["contractAddress"].clone();
    sent.push((40, h40));
    for t in [41, 42] {
        sent.push((t, send(t, &deploy)));
    }
    // 48 and 49 call the same view function with the same gas for the EVM (a fee payer adds
    // 10,000 to the intrinsic gas), so that their traces must be equal.
    let get = format!("0x{}", hex::encode(counter.call_data("get()", &[])));
    let h48 = send(
        48,
        &json!({"to": contract, "value": "0x0", "input": get, "gas": "0x186a0"}),
    );
    let h49 = send(
        49,
        &json!({"to": contract, "value": "0x0", "input": get, "gas": "0x1adb0"}),
    );
    sent.push((48, h48.clone()));
    sent.push((49, h49.clone()));
    let increment = format!("0x{}", hex::encode(counter.call_data("increment()", &[])));
    sent.push((
        50,
        send(
            50,
            &json!({"to": contract, "value": "0x0", "input": increment}),
        ),
    ));
    let transfer = json!({"to": R, "value": "0x1"});
    let memo = json!({"to": R, "value": "0x1", "input": "0x6d656d6f"});
    let update = json!({"key": "0x01c0"});
    for (t, extra) in [
        (8, &transfer),
        (9, &transfer),
        (10, &transfer),
        (16, &memo),
        (17, &memo),
        (18, &memo),
        (32, &update),
        (33, &update),
        (34, &update),
        (56, &json!({})),
        (57, &json!({})),
        (58, &json!({})),
    ] {
        sent.push((t, send(t, extra)));
    }
    // Anchoring: a summary of block 1 (type 0), then an arbitrary payload.
    let b1 = c.ok("chain_getBlockByNumber", json!(["0x1", false]));
    let tx_count = b1["transactions"].as_array().unwrap().len() as u64;
    let summary = rlp_list(&[
        rlp_str(&hash_of(&b1["hash"])),
        rlp_str(&hash_of(&b1["transactionsRoot"])),
        rlp_str(&hash_of(&b1["parentHash"])),
        rlp_str(&hash_of(&b1["receiptsRoot"])),
        rlp_str(&hash_of(&b1["stateRoot"])),
        rlp_uint(1),
        rlp_uint(1),
        rlp_uint(tx_count),
    ]);
    let payload = format!(
        "0x{}",
        hex::encode(rlp_list(&[rlp_uint(0), rlp_str(&summary)]))
    );
    let decoded = json!({
        "blockHash": b1["hash"], "transactionsRoot": b1["transactionsRoot"],
        "parentHash": b1["parentHash"], "receiptsRoot": b1["receiptsRoot"],
        "stateRoot": b1["stateRoot"], "blockNumber": 1, "blockCount": 1, "txCount": tx_count,
    });
    let arbitrary = "0xb3f98adc0000000000000000000000000000000000000000000000000000000000000001";
    let h72 = send(72, &json!({"input": payload}));
    let h73 = send(73, &json!({"input": arbitrary}));
    sent.push((72, h72.clone()));
    sent.push((73, h73.clone()));
    sent.push((74, send(74, &json!({"input": payload}))));
    let access =
        json!([{"address": R, "storageKeys": [format!("0x{:064x}", 3), format!("0x{:064x}", 7)]}]);
    sent.push((
        30721,
        plain(
            30721,
            &json!({"to": R, "value": "0x1", "gasPrice": q(PRICE), "accessList": access}),
        ),
    ));
    sent.push((
        30722,
        plain(
            30722,
            &json!({
                "to": R, "value": "0x1", "maxFeePerGas": q(PRICE),
                "maxPriorityFeePerGas": q(PRICE), "accessList": access,
            }),
        ),
    ));
    let mut types: Vec<u64> = sent.iter().map(|(t, _)| *t).collect();
    types.sort();
    assert_eq!(
        types,
        [
            8, 9, 10, 16, 17, 18, 32, 33, 34, 40, 41, 42, 48, 49, 50, 56, 57, 58, 72, 73, 74,
            30721, 30722
        ]
    );
    let mut txs = Vec::new();
    for (t, h) in &sent {
        let r = c.receipt(h);
        assert_eq!(r["status"], json!("0x1"), "type {t}: {r}");
        let tx = c.ok("chain_getTransactionByHash", json!([h]));
        assert_eq!(tx["typeInt"], json!(t), "{tx}");
        // Read again through its block's body.
        assert_eq!(
            c.ok(
                "chain_getTransactionByBlockNumberAndIndex",
                json!([tx["blockNumber"], tx["transactionIndex"]])
            ),
            tx,
            "type {t}"
        );
        txs.push((tx, r));
    }

    // Anchoring data decoded where it is anchoring data, null where not.
    let t72 = c.ok("chain_getTransactionByHash", json!([h72]));
    assert_eq!(t72["input"], json!(payload));
    assert_eq!(t72["inputJSON"], decoded);
    assert_eq!(
        c.ok("chain_getTransactionReceipt", json!([h72]))["inputJSON"],
        decoded
    );
    let t73 = c.ok("chain_getTransactionByHash", json!([h73]));
    assert_eq!(t73["input"], json!(arbitrary));
    assert_eq!(t73["inputJSON"], Value::Null);
    assert!(t73.as_object().unwrap().contains_key("inputJSON"), "{t73}");

    // A delegated execution is traced as the same call sent plainly.
    let trace48 = c.ok("debug_traceTransaction", json!([h48]));
    let trace49 = c.ok("debug_traceTransaction", json!([h49]));
    assert!(
        trace48["structLogs"].as_array().unwrap().len() > 10,
        "{trace48}"
    );
    let steps = |t: &Value| t["structLogs"].as_array().unwrap().len();
    assert_eq!(
        steps(&trace49),
        steps(&trace48),
        "a delegated execution traced"
    );
    assert!(trace49["structLogs"] == trace48["structLogs"]);
    assert_eq!(trace49["returnValue"], trace48["returnValue"]);
    assert_eq!(trace49["failed"], json!(false));
    // The gas a trace reports is the receipt's: with the fee payer's 10,000 for 49.
    let used = |h: &Value| c.ok("chain_getTransactionReceipt", json!([h]))["gasUsed"].clone();
    assert_eq!(
        trace48["gas"].as_u64().unwrap() as u128,
        number(&used(&h48))
    );
    assert_eq!(
        trace49["gas"].as_u64().unwrap() as u128,
        number(&used(&h49))
    );
    assert_eq!(number(&used(&h49)), number(&used(&h48)) + 10_000);

    // Export, then import into a fresh data directory of the same genesis.
    let head = c.head();
    let head_block = c.ok("chain_getBlockByNumber", json!([q(head.into()), false]));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("chain.rlp");
    assert_eq!(c.ok("admin_exportChain", json!([file])), json!(true));
    let twin = tempfile::tempdir().unwrap();
    std::fs::copy(
        n.datadir.path().join("dev-account"),
        twin.path().join("dev-account"),
    )
    .unwrap();
    std::fs::create_dir(twin.path().join("keystore")).unwrap();
    for f in common::key_files(&n.keystore()) {
        std::fs::copy(
            &f,
            twin.path().join("keystore").join(f.file_name().unwrap()),
        )
        .unwrap();
    }
    let done = common::chaind_run(twin.path(), &["--dev", "import", file.to_str().unwrap()]);
    assert!(done.status.success(), "{done:?}");
    let m = common::dev_http_node_in(twin, "chain,debug");
    let url = m.http.clone().unwrap();
    let call = |method: &str, p: Value| ok(http_call(&url, method, p));
    assert_eq!(number(&call("chain_blockNumber", json!([]))) as u64, head);
    let imported = call("chain_getBlockByNumber", json!([q(head.into()), false]));
    assert_eq!(imported["hash"], head_block["hash"]);
    assert_eq!(imported["stateRoot"], head_block["stateRoot"]);
    for ((t, h), (tx, r)) in sent.iter().zip(&txs) {
        assert_eq!(
            call("chain_getTransactionByHash", json!([h])),
            *tx,
            "type {t}"
        );
        assert_eq!(
            call("chain_getTransactionReceipt", json!([h])),
            *r,
            "type {t}"
        );
        assert_eq!(
            call(
                "chain_getTransactionBySenderTxHash",
                json!([tx["senderTxHash"]])
            ),
            *tx,
            "type {t}"
        );
    }
    assert_eq!(call("debug_traceTransaction", json!([h49])), trace49);
}
