//! Every transaction type against transactions built and signed offline by an independent
//! signer, caver-js 1.12.2 (`tests/oracle/caver/generate.js`; its output copied byte for byte
//! into `tests/vectors/caver-transactions.json`): legacy, the reference's 21 own types (value
//! transfer, memo, account update, deploy, execution, cancel, anchoring; each sender-paid,
//! fee-delegated and fee-delegated with a ratio) and Ethereum's 0x7801 / 0x7802, at chain ids
//! 1000 and 1001, plus two multisig transactions. For each: the raw bytes decode, re-encode
//! byte for byte and hash as caver hashes them; the signing pre-images and hashes are caver's;
//! the same transaction built and signed here (RFC 6979 in both) gives caver's bytes; the
//! signatures recover the keys; and the JSON of `personal_signTransaction`'s `tx` has the
//! reference's members, in the order of its `*JSON` structs, with the vector's values.

#[path = "common/caver.rs"]
mod caver;
use caver::signatures_json;
use chain_node::crypto::{keccak256, Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::json::SignedTxJson;
use chain_node::types::transaction::{
    AccessTuple, Base, Ethereum, FeeMode, Legacy, Native, Signature, Transaction, TxError,
};
use serde_json::{json, Value};

fn doc() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/caver-transactions.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Every record: the main list, then the multisig ones.
fn records() -> Vec<Value> {
    let d = doc();
    let mut all = d["vectors"].as_array().unwrap().clone();
    all.extend(d["multisig"].as_array().unwrap().iter().cloned());
    all
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

fn u256(v: &Value) -> [u8; 32] {
    let s = v.as_str().unwrap().trim_start_matches("0x");
    hex::decode(format!("{s:0>64}"))
        .unwrap()
        .try_into()
        .unwrap()
}

fn u64_of(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

fn address(v: &Value) -> Address {
    Address(bytes(v).try_into().unwrap())
}

fn name(rec: &Value) -> &str {
    rec["name"].as_str().unwrap()
}

fn chain_id(rec: &Value) -> u64 {
    rec["chainId"].as_u64().unwrap()
}

fn key(d: &Value, k: &str) -> SecretKey {
    SecretKey::from_slice(&bytes(&d["keys"][k]["privateKey"])).unwrap()
}

fn key_address(d: &Value, k: &str) -> Address {
    address(&d["keys"][k]["address"])
}

/// The keys that signed as the sender and as the fee payer, in caver's order: K1 (and K3 in
/// the sender multisig record), K2 (and K3 in the fee payer multisig record).
fn signing_keys(rec: &Value) -> (Vec<&'static str>, Vec<&'static str>) {
    let n = |m: &str| rec[m].as_array().map_or(0, Vec::len);
    let senders = if n("signatures") == 2 {
        vec!["K1", "K3"]
    } else {
        vec!["K1"]
    };
    let payers = match n("feePayerSignatures") {
        0 => vec![],
        1 => vec!["K2"],
        _ => vec!["K2", "K3"],
    };
    (senders, payers)
}

/// The base and fee mode a caver type name spells (`TxType[FeeDelegated]<Base>[WithRatio]`),
/// the ratio taken from the inputs; `None` for legacy and Ethereum's types.
fn native_kind(rec: &Value) -> Option<(Base, FeeMode)> {
    let ty = rec["type"]
        .as_str()
        .unwrap()
        .strip_prefix("TxType")
        .unwrap();
    let (delegated, ty) = match ty.strip_prefix("FeeDelegated") {
        Some(rest) => (true, rest),
        None => (false, ty),
    };
    let (ratio, ty) = match ty.strip_suffix("WithRatio") {
        Some(rest) => (true, rest),
        None => (false, ty),
    };
    let base = match ty {
        "ValueTransfer" => Base::ValueTransfer,
        "ValueTransferMemo" => Base::ValueTransferMemo,
        "AccountUpdate" => Base::AccountUpdate,
        "SmartContractDeploy" => Base::SmartContractDeploy,
        "SmartContractExecution" => Base::SmartContractExecution,
        "Cancel" => Base::Cancel,
        "ChainDataAnchoring" => Base::ChainDataAnchoring,
        "LegacyTransaction" | "EthereumAccessList" | "EthereumDynamicFee" => return None,
        other => panic!("unknown type {other}"),
    };
    let mode = match (delegated, ratio) {
        (false, false) => FeeMode::Sender,
        (true, false) => FeeMode::Delegated,
        (true, true) => FeeMode::Ratio(u64_of(&rec["inputs"]["feeRatio"]) as u8),
        (false, true) => panic!("a ratio without delegation"),
    };
    Some((base, mode))
}

/// The unsigned transaction the record's inputs describe, built with our types.
fn unsigned(rec: &Value) -> Transaction {
    let i = &rec["inputs"];
    let to = |v: &Value| (!v.is_null()).then(|| address(v));
    let nonce = u64_of(&i["nonce"]);
    let gas = u64_of(&i["gas"]);
    match rec["type"].as_str().unwrap() {
        "TxTypeLegacyTransaction" => Transaction::Legacy(Legacy {
            nonce,
            gas_price: u256(&i["gasPrice"]),
            gas,
            to: to(&i["to"]),
            value: u256(&i["value"]),
            input: bytes(&i["input"]),
            signature: None,
        }),
        ty @ ("TxTypeEthereumAccessList" | "TxTypeEthereumDynamicFee") => {
            let dynamic = ty == "TxTypeEthereumDynamicFee";
            let (tip, cap) = if dynamic {
                (u256(&i["maxPriorityFeePerGas"]), u256(&i["maxFeePerGas"]))
            } else {
                (u256(&i["gasPrice"]), u256(&i["gasPrice"]))
            };
            let access_list = i["accessList"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| AccessTuple {
                    address: address(&t["address"]),
                    storage_keys: t["storageKeys"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|k| bytes(k).try_into().unwrap())
                        .collect(),
                })
                .collect();
            Transaction::Ethereum(Ethereum {
                dynamic,
                chain_id: chain_id(rec),
                nonce,
                gas_tip_cap: tip,
                gas_fee_cap: cap,
                gas,
                to: to(&i["to"]),
                value: u256(&i["value"]),
                input: bytes(&i["input"]),
                access_list,
                signature: None,
            })
        }
        _ => {
            let (base, mode) = native_kind(rec).unwrap();
            let mut t = Native::new(base, mode, address(&i["from"]));
            t.nonce = nonce;
            t.gas_price = u256(&i["gasPrice"]);
            t.gas = gas;
            if i.get("to").is_some() {
                t.to = to(&i["to"]);
            }
            if i.get("value").is_some() {
                t.value = u256(&i["value"]);
            }
            if i.get("input").is_some() {
                t.input = bytes(&i["input"]);
            }
            if i.get("key").is_some() {
                t.key = Some(AccountKey::decode(&bytes(&i["key"])).unwrap());
            }
            if let Some(h) = i.get("humanReadable") {
                t.human_readable = h.as_bool().unwrap();
            }
            if let Some(c) = i.get("codeFormat") {
                t.code_format = c.as_u64().unwrap() as u8;
            }
            Transaction::Native(t)
        }
    }
}

fn decoded(rec: &Value) -> Transaction {
    Transaction::decode(&bytes(&rec["raw"])).unwrap_or_else(|e| panic!("{}: {e}", name(rec)))
}

// A minimal RLP encoder of the test's own, to rebuild caver's signing pre-images.
fn rlp_str(b: &[u8]) -> Vec<u8> {
    if b.len() == 1 && b[0] < 0x80 {
        return b.to_vec();
    }
    let mut out = rlp_head(0x80, b.len());
    out.extend_from_slice(b);
    out
}

fn rlp_uint(n: u64) -> Vec<u8> {
    let be = n.to_be_bytes();
    let first = be.iter().position(|&b| b != 0).unwrap_or(8);
    rlp_str(&be[first..])
}

fn rlp_list(payload: &[u8]) -> Vec<u8> {
    let mut out = rlp_head(0xc0, payload.len());
    out.extend_from_slice(payload);
    out
}

fn rlp_head(offset: u8, len: usize) -> Vec<u8> {
    if len < 56 {
        return vec![offset + len as u8];
    }
    let be = (len as u64).to_be_bytes();
    let first = be.iter().position(|&b| b != 0).unwrap();
    let mut out = vec![offset + 55 + (8 - first) as u8];
    out.extend_from_slice(&be[first..]);
    out
}

/// The 24 types (typeInt) the reference builds: every one has a vector, and the multisig
/// section has a sender multisig and a fee payer multisig.
#[test]
fn the_vectors_cover_every_type() {
    let d = doc();
    assert_eq!(d["generator"]["version"], json!("1.12.2"));
    let mut types: Vec<u64> = d["vectors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["typeInt"].as_u64().unwrap())
        .collect();
    types.dedup();
    assert_eq!(
        types,
        [
            0, 8, 9, 10, 16, 17, 18, 32, 33, 34, 40, 41, 42, 48, 49, 50, 56, 57, 58, 72, 73, 74,
            30721, 30722
        ]
    );
    let multisig = d["multisig"].as_array().unwrap();
    assert_eq!(multisig[0]["signatures"].as_array().unwrap().len(), 2);
    assert_eq!(
        multisig[1]["feePayerSignatures"].as_array().unwrap().len(),
        2
    );
    // The keys are the ones the brief names (K1 sender, K2 fee payer, K3 a third).
    for k in ["K1", "K2", "K3"] {
        assert_eq!(key(&d, k).address(), key_address(&d, k), "{k}");
    }
}

/// `raw` decodes to the vector's type, encodes back byte for byte, and hashes to caver's
/// transaction hash and sender transaction hash.
#[test]
fn raw_decodes_encodes_and_hashes_as_caver() {
    for rec in records() {
        let n = name(&rec);
        let tx = decoded(&rec);
        assert_eq!(
            u64::from(tx.type_code()),
            rec["typeInt"].as_u64().unwrap(),
            "{n}"
        );
        assert_eq!(tx.type_name(), rec["type"].as_str().unwrap(), "{n}");
        assert_eq!(tx.encode(), bytes(&rec["raw"]), "{n}");
        assert_eq!(tx.hash().to_vec(), bytes(&rec["txHash"]), "{n}");
        assert_eq!(
            tx.sender_tx_hash().to_vec(),
            bytes(&rec["senderTxHash"]),
            "{n}"
        );
        assert_eq!(tx.nonce(), u64_of(&rec["inputs"]["nonce"]), "{n}");
        assert_eq!(tx.gas(), u64_of(&rec["inputs"]["gas"]), "{n}");
        // Decoding is a function of the bytes: decoding what we encode gives the same.
        assert_eq!(Transaction::decode(&tx.encode()).unwrap(), tx, "{n}");
        // The fee payer and its share as the vector gives them.
        let ratio = rec["inputs"].get("feeRatio").map(u64_of);
        match rec["inputs"].get("feePayer") {
            Some(fp) => {
                assert_eq!(tx.fee_payer(), Some(address(fp)), "{n}");
                assert_eq!(
                    u64::from(tx.fee_payer_percent()),
                    ratio.unwrap_or(100),
                    "{n}"
                );
            }
            None => {
                assert_eq!(tx.fee_payer(), None, "{n}");
                assert_eq!(tx.fee_payer_percent(), 0, "{n}");
            }
        }
    }
}

/// The sender's signing hash is caver's `sigHash`, and for the reference's own types the
/// signed pre-image `RLP([RLP([type, fields...]), chainId, 0, 0])` is caver's `sigRLP` byte
/// for byte; likewise the fee payer's `RLP([inner, feePayer, chainId, 0, 0])`.
#[test]
fn signing_pre_images_and_hashes_are_caver_s() {
    for rec in records() {
        let n = name(&rec);
        let tx = decoded(&rec);
        let id = chain_id(&rec);
        assert_eq!(tx.sig_hash(id).to_vec(), bytes(&rec["sigHash"]), "{n}");
        assert_eq!(
            keccak256(&bytes(&rec["sigRLP"])).to_vec(),
            bytes(&rec["sigHash"]),
            "{n}"
        );
        let Transaction::Native(t) = &tx else {
            assert!(rec.get("feePayerSigHash").is_none(), "{n}");
            continue;
        };
        let inner = t.sign_inner();
        let mut outer = rlp_str(&inner);
        outer.extend(rlp_uint(id));
        outer.extend([0x80, 0x80]);
        assert_eq!(rlp_list(&outer), bytes(&rec["sigRLP"]), "{n}");
        if !t.is_delegated() {
            assert!(rec.get("feePayerSigHash").is_none(), "{n}");
            continue;
        }
        assert_eq!(
            t.fee_payer_sig_hash(id).to_vec(),
            bytes(&rec["feePayerSigHash"]),
            "{n}"
        );
        let mut outer = rlp_str(&inner);
        outer.extend(rlp_str(&t.fee_payer.0));
        outer.extend(rlp_uint(id));
        outer.extend([0x80, 0x80]);
        assert_eq!(rlp_list(&outer), bytes(&rec["feePayerSigRLP"]), "{n}");
    }
}

/// The transaction built here from the vector's inputs and signed here with the same keys,
/// in caver's order, is caver's `raw` byte for byte (both sign with RFC 6979 nonces); signed
/// by the sender only, with caver's placeholder for the missing fee payer (the zero address
/// and the signature `[0x01, 0x, 0x]`), it is caver's `senderRaw`.
#[test]
fn signing_here_gives_caver_s_bytes() {
    let d = doc();
    for rec in records() {
        let n = name(&rec);
        let id = chain_id(&rec);
        let (senders, payers) = signing_keys(&rec);
        let mut tx = unsigned(&rec);
        assert_eq!(
            tx.sig_hash(id).to_vec(),
            bytes(&rec["sigHash"]),
            "{n}: before signing"
        );
        for k in &senders {
            tx.sign(&key(&d, k), id);
        }
        assert_eq!(
            tx.sender_tx_hash().to_vec(),
            bytes(&rec["senderTxHash"]),
            "{n}"
        );
        let Transaction::Native(t) = &mut tx else {
            assert!(payers.is_empty(), "{n}");
            assert_eq!(tx.encode(), bytes(&rec["raw"]), "{n}");
            assert_eq!(tx.encode(), bytes(&rec["senderRaw"]), "{n}");
            continue;
        };
        if !t.is_delegated() {
            assert!(payers.is_empty(), "{n}");
            assert_eq!(t.encode(), bytes(&rec["raw"]), "{n}");
            assert_eq!(t.encode(), bytes(&rec["senderRaw"]), "{n}");
            continue;
        }
        let placeholder = Signature {
            v: 1,
            r: [0; 32],
            s: [0; 32],
        };
        let mut half = t.clone();
        half.fee_payer_signatures = vec![placeholder];
        assert_eq!(half.encode(), bytes(&rec["senderRaw"]), "{n}: senderRaw");
        t.fee_payer = address(&rec["inputs"]["feePayer"]);
        for k in &payers {
            assert!(tx.sign_as_fee_payer(&key(&d, k), id), "{n}");
        }
        assert_eq!(tx.encode(), bytes(&rec["raw"]), "{n}");
        assert_eq!(tx.hash().to_vec(), bytes(&rec["txHash"]), "{n}");
        assert_eq!(
            tx.sender_tx_hash().to_vec(),
            bytes(&rec["senderTxHash"]),
            "{n}"
        );
    }
}

/// The sender's signatures recover K1 (and K3 in the sender multisig record); the fee payer's
/// recover K2 (and K3 in the fee payer multisig record).
#[test]
fn signatures_recover_caver_s_keys() {
    let d = doc();
    for rec in records() {
        let n = name(&rec);
        let tx = decoded(&rec);
        let (senders, payers) = signing_keys(&rec);
        let want = |ks: &[&str]| ks.iter().map(|k| key_address(&d, k)).collect::<Vec<_>>();
        let got = |s: Vec<chain_node::types::account_key::Signer>| {
            s.into_iter().map(|s| s.address).collect::<Vec<_>>()
        };
        assert_eq!(got(tx.recovered().unwrap()), want(&senders), "{n}");
        assert_eq!(tx.signers().unwrap(), want(&senders), "{n}");
        assert_eq!(got(tx.recovered_fee_payer().unwrap()), want(&payers), "{n}");
        assert_eq!(tx.signature_chain_id(), Some(chain_id(&rec)), "{n}");
    }
}

/// caver's `senderRaw` of a fee-delegated type carries the zero fee payer and the placeholder
/// signature `[0x01, 0x, 0x]` (R = S = 0, out of range). The reference's decoder checks the
/// sender's signatures only (`Transaction.DecodeRLP` calls the `ValidateSignature` of the
/// embedded `TxSignatures`; `FeePayerSignatures` is a named field), so the bytes decode, and
/// the placeholder fails only where the fee payer is recovered (`recoverPlainCommon`:
/// `invalid transaction v, r, s values`, which the pool reports as `invalid fee payer: ...`).
#[test]
fn sender_only_raw_decodes_and_its_placeholder_does_not_recover() {
    let d = doc();
    let mut delegated = 0;
    for rec in records() {
        let n = name(&rec);
        let raw = bytes(&rec["senderRaw"]);
        if rec.get("feePayerSigHash").is_none() {
            assert_eq!(raw, bytes(&rec["raw"]), "{n}");
            continue;
        }
        delegated += 1;
        let tx = Transaction::decode(&raw).unwrap_or_else(|e| panic!("{n}: {e}"));
        let Transaction::Native(t) = &tx else {
            panic!("{n}")
        };
        assert_eq!(t.fee_payer, Address([0; 20]), "{n}");
        assert_eq!(
            t.fee_payer_signatures,
            [Signature {
                v: 1,
                r: [0; 32],
                s: [0; 32]
            }],
            "{n}"
        );
        assert_eq!(tx.encode(), raw, "{n}");
        assert_eq!(tx.hash(), keccak256(&raw), "{n}");
        assert_eq!(
            tx.sender_tx_hash().to_vec(),
            bytes(&rec["senderTxHash"]),
            "{n}"
        );
        assert_eq!(tx.signers().unwrap(), [key_address(&d, "K1")], "{n}");
        let e = tx.recovered_fee_payer().unwrap_err();
        assert_eq!(e, TxError::InvalidSignature, "{n}");
        assert_eq!(e.to_string(), "invalid transaction v, r, s values", "{n}");
    }
    assert_eq!(delegated, 19);
    // A sender signature out of range is still refused when decoding (the reference's
    // `ErrInvalidSig`), here the sender's R of a fee-delegated record set to zero.
    let rec = &records()[7];
    assert_eq!(rec["typeInt"], json!(9));
    let Transaction::Native(mut t) = decoded(rec) else {
        panic!()
    };
    t.signatures[0].r = [0; 32];
    let e = Transaction::decode(&t.encode()).unwrap_err();
    assert_eq!(e.to_string(), "invalid transaction v, r, s values");
}

/// The members of the reference's `*JSON` struct of each type, in order
/// (`blockchain/types/tx_internal_data_*.go`, what `Transaction.MarshalJSON` writes).
const JSON_MEMBERS: &[(&str, &str)] = &[
    ("TxTypeLegacyTransaction", "nonce gasPrice gas to value input signatures hash"),
    ("TxTypeValueTransfer", "typeInt type nonce gasPrice gas to value from signatures hash"),
    ("TxTypeFeeDelegatedValueTransfer", "typeInt type nonce gasPrice gas to value from signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedValueTransferWithRatio", "typeInt type nonce gasPrice gas to value from feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeValueTransferMemo", "typeInt type nonce gasPrice gas to value from input signatures hash"),
    ("TxTypeFeeDelegatedValueTransferMemo", "typeInt type nonce gasPrice gas to value from input signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedValueTransferMemoWithRatio", "typeInt type nonce gasPrice gas to value from input feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeAccountUpdate", "typeInt type nonce gasPrice gas from key signatures hash"),
    ("TxTypeFeeDelegatedAccountUpdate", "typeInt type nonce gasPrice gas from key signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedAccountUpdateWithRatio", "typeInt type nonce gasPrice gas from key feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeSmartContractDeploy", "typeInt type nonce gasPrice gas to value from input humanReadable codeFormat signatures hash"),
    ("TxTypeFeeDelegatedSmartContractDeploy", "typeInt type nonce gasPrice gas to value from input humanReadable codeFormat signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedSmartContractDeployWithRatio", "typeInt type nonce gasPrice gas to value from input humanReadable feeRatio codeFormat signatures feePayer feePayerSignatures hash"),
    ("TxTypeSmartContractExecution", "typeInt type nonce gasPrice gas to value from input signatures hash"),
    ("TxTypeFeeDelegatedSmartContractExecution", "typeInt type nonce gasPrice gas to value from input signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedSmartContractExecutionWithRatio", "typeInt type nonce gasPrice gas to value from input feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeCancel", "typeInt type nonce gasPrice gas from signatures hash"),
    ("TxTypeFeeDelegatedCancel", "typeInt type nonce gasPrice gas from signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedCancelWithRatio", "typeInt type nonce gasPrice gas from feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeChainDataAnchoring", "typeInt type nonce gasPrice gas from input inputJSON signatures hash"),
    ("TxTypeFeeDelegatedChainDataAnchoring", "typeInt type nonce gasPrice gas from input inputJSON signatures feePayer feePayerSignatures hash"),
    ("TxTypeFeeDelegatedChainDataAnchoringWithRatio", "typeInt type nonce gasPrice gas from input inputJSON feeRatio signatures feePayer feePayerSignatures hash"),
    ("TxTypeEthereumAccessList", "typeInt type chainId nonce gasPrice gas to value input accessList signatures hash"),
    ("TxTypeEthereumDynamicFee", "typeInt type chainId nonce maxPriorityFeePerGas maxFeePerGas gas to value input accessList signatures hash"),
];

/// What the reference writes for member `m` of the record's transaction, from the vector.
fn expected_member(rec: &Value, m: &str) -> Value {
    let i = &rec["inputs"];
    match m {
        "typeInt" => rec["typeInt"].clone(),
        "type" => rec["type"].clone(),
        "chainId" => json!(format!("0x{:x}", chain_id(rec))),
        "hash" => rec["txHash"].clone(),
        "signatures" => signatures_json(&rec["signatures"]),
        "feePayerSignatures" => signatures_json(&rec["feePayerSignatures"]),
        // hexutil.Uint
        "codeFormat" => json!(format!("0x{:x}", i["codeFormat"].as_u64().unwrap())),
        // The payload (a function call) is neither form of anchoring data: `null`.
        "inputJSON" => Value::Null,
        _ => i
            .get(m)
            .unwrap_or_else(|| panic!("{}: no input {m}", name(rec)))
            .clone(),
    }
}

/// `SignedTxJson` (the `tx` of `personal_signTransaction`) of each decoded vector: the
/// reference's members in its struct's order, each with the vector's value.
#[test]
fn signed_tx_json_has_the_reference_s_members_in_order_with_caver_s_values() {
    for rec in records() {
        let n = name(&rec);
        let tx = decoded(&rec);
        let json = serde_json::to_value(SignedTxJson::new(&tx)).unwrap();
        let obj = json.as_object().unwrap();
        let (_, order) = JSON_MEMBERS
            .iter()
            .find(|(t, _)| *t == rec["type"].as_str().unwrap())
            .unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        assert_eq!(keys.join(" "), *order, "{n}");
        for m in order.split(' ') {
            assert_eq!(obj[m], expected_member(&rec, m), "{n}: {m}");
        }
        // The text too: serde_json keeps the order when printing.
        let text = serde_json::to_string(&SignedTxJson::new(&tx)).unwrap();
        let at: Vec<usize> = order
            .split(' ')
            .map(|m| text.find(&format!("\"{m}\":")).unwrap())
            .collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{n}: {text}");
    }
}

/// A block's transaction list holds each transaction's raw bytes, one after the other (the
/// reference's `TxInternalDataSerializer.EncodeRLP`: a legacy one as its list, a typed one as
/// its type then its body, an Ethereum one as 0x78, its type byte, then its body), and reads
/// back as the same transactions.
#[test]
fn a_block_s_transaction_list_holds_every_type() {
    use chain_node::types::block::{decode_tx_list, encode_tx_list};
    let all = records();
    let txs: Vec<Transaction> = all.iter().map(decoded).collect();
    let raws: Vec<u8> = all.iter().flat_map(|r| bytes(&r["raw"])).collect();
    let list = encode_tx_list(&txs);
    assert_eq!(list, rlp_list(&raws));
    assert_eq!(decode_tx_list(&list).unwrap(), txs);
    // Each alone, too: an Ethereum transaction last in the list, or the only one.
    for (rec, tx) in all.iter().zip(&txs) {
        let one = rlp_list(&bytes(&rec["raw"]));
        assert_eq!(
            decode_tx_list(&one).unwrap(),
            std::slice::from_ref(tx),
            "{}",
            name(rec)
        );
    }
}
