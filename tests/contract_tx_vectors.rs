//! The contract transaction types (smart contract deploy 0x28, smart contract execution
//! 0x30, and legacy creations and calls) against transactions built and signed offline by
//! an independent signer, caver-js 1.12.2 (`tests/oracle/caver`, vectors in
//! `tests/vectors/contract-transactions.json`): the signing pre-image's hash, V/R/S, the raw
//! bytes and the hashes are the same, and the raw bytes decode back to the transaction.

use chain_node::crypto::{keccak256, Address, SecretKey};
use chain_node::types::transaction::{
    Legacy, SmartContractDeploy, SmartContractExecution, Transaction, TxError,
};
use serde_json::Value;

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/contract-transactions.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

fn u256(v: &Value) -> [u8; 32] {
    let s = v.as_str().unwrap().trim_start_matches("0x");
    let s = format!("{s:0>64}");
    hex::decode(s).unwrap().try_into().unwrap()
}

fn address(v: &Value) -> Option<Address> {
    v.as_str().map(|_| Address(bytes(v).try_into().unwrap()))
}

/// The unsigned transaction a record's inputs describe.
fn unsigned(rec: &Value) -> Transaction {
    let i = &rec["inputs"];
    let nonce = i["nonce"].as_u64().unwrap();
    let gas = i["gas"].as_u64().unwrap();
    let gas_price = u256(&i["gasPrice"]);
    let value = u256(&i["value"]);
    let input = bytes(&i["input"]);
    match rec["type"].as_str().unwrap() {
        "TxTypeSmartContractDeploy" => Transaction::of(SmartContractDeploy {
            nonce,
            gas_price,
            gas,
            to: address(&i["to"]),
            value,
            from: address(&i["from"]).unwrap(),
            input,
            human_readable: i["humanReadable"].as_bool().unwrap(),
            code_format: i["codeFormat"].as_u64().unwrap() as u8,
            signatures: Vec::new(),
        }),
        "TxTypeSmartContractExecution" => Transaction::of(SmartContractExecution {
            nonce,
            gas_price,
            gas,
            to: address(&i["to"]).unwrap(),
            value,
            from: address(&i["from"]).unwrap(),
            input,
            signatures: Vec::new(),
        }),
        "TxTypeLegacyTransaction" => Transaction::Legacy(Legacy {
            nonce,
            gas_price,
            gas,
            to: address(&i["to"]),
            value,
            input,
            signature: None,
        }),
        other => panic!("unexpected type {other}"),
    }
}

#[test]
fn contract_transactions_are_byte_identical_to_caver_js() {
    let d = vectors();
    let key = SecretKey::from_slice(&bytes(&d["key"]["K1"])).unwrap();
    assert_eq!(Some(key.address()), address(&d["key"]["address"]));
    let mut records: Vec<&Value> = d["transactions"].as_array().unwrap().iter().collect();
    records.push(&d["check"]);
    assert!(records.len() >= 12);
    for rec in records {
        let name = rec["name"].as_str().unwrap();
        let chain_id = rec["inputs"]["chainId"].as_u64().unwrap();
        let mut tx = unsigned(rec);
        assert_eq!(tx.type_name(), rec["type"].as_str().unwrap(), "{name}");
        // The signing pre-image's hash (caver's sigRLP, hashed).
        assert_eq!(
            keccak256(&bytes(&rec["sigRLP"])),
            <[u8; 32]>::try_from(bytes(&rec["sigHash"])).unwrap(),
            "{name}: the vector is self-consistent"
        );
        assert_eq!(
            tx.sig_hash(chain_id).to_vec(),
            bytes(&rec["sigHash"]),
            "{name}"
        );
        tx.sign(&key, chain_id);
        let raw = tx.encode();
        assert_eq!(hex::encode(&raw), hex::encode(bytes(&rec["raw"])), "{name}");
        assert_eq!(tx.hash().to_vec(), bytes(&rec["txHash"]), "{name}");
        assert_eq!(
            tx.sender_tx_hash().to_vec(),
            bytes(&rec["senderTxHash"]),
            "{name}"
        );
        let back = Transaction::decode(&raw).unwrap();
        assert_eq!(back, tx, "{name}: decodes back");
        assert_eq!(back.signers().unwrap(), vec![key.address()], "{name}");
        assert_eq!(back.signature_chain_id(), Some(chain_id), "{name}");
    }
}

/// A deploy with a byte after its signatures, a `humanReadable` that is not a boolean, or a
/// code format past a byte is refused; the decoder never panics on a cut-off deploy.
#[test]
fn malformed_contract_transactions_are_refused() {
    let d = vectors();
    let rec = &d["transactions"][0];
    let raw = bytes(&rec["raw"]);
    assert!(Transaction::decode(&raw).is_ok());
    let mut trailing = raw.clone();
    trailing.push(0x80);
    assert!(Transaction::decode(&trailing).is_err());
    for cut in 1..raw.len() {
        let _ = Transaction::decode(&raw[..cut]);
    }
    // Re-encode with humanReadable = 2 and with code format 256: both refused.
    let key = SecretKey::from_slice(&bytes(&d["key"]["K1"])).unwrap();
    let Transaction::Native(mut t) = unsigned(rec) else {
        unreachable!()
    };
    t.code_format = 0xff;
    let mut tx = Transaction::Native(t);
    tx.sign(&key, 1000);
    let enc = tx.encode();
    assert!(
        Transaction::decode(&enc).is_ok(),
        "a format of one byte decodes"
    );
    // humanReadable (0x80) and codeFormat (0x81 0xff) sit before the signature list: swap
    // the boolean for the integer 2.
    let sigs = enc.len() - 73; // f847, f845 and the 69 bytes of V, R, S
    assert_eq!(&enc[sigs - 3..sigs], &[0x80, 0x81, 0xff]);
    let mut bad_bool = enc.clone();
    bad_bool[sigs - 3] = 0x02;
    assert!(matches!(
        Transaction::decode(&bad_bool),
        Err(TxError::Rlp(_))
    ));
}
