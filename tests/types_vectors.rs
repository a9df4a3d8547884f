//! Account keys and transactions against the worked examples of
//! `transactions-and-blocks.md` (sections 7.3 and 9), copied into
//! `tests/vectors/transactions.json`.

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::account_key::AccountKey;
use chain_node::types::transaction::{
    AccountUpdate, Legacy, Transaction, TxError, ValueTransfer, U256,
};
use serde_json::Value;

fn vectors() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/transactions.json"
    ))
    .unwrap();
    serde_json::from_str(&text).unwrap()
}

fn bytes(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

/// A quantity (hex string or JSON number) as 32 big-endian bytes.
fn u256(v: &Value) -> U256 {
    let mut out = [0u8; 32];
    match v {
        Value::Number(n) => out[24..].copy_from_slice(&n.as_u64().unwrap().to_be_bytes()),
        _ => {
            let s = v.as_str().unwrap().trim_start_matches("0x");
            let s = if s.len() % 2 == 1 {
                format!("0{s}")
            } else {
                s.to_string()
            };
            let b = hex::decode(s).unwrap();
            out[32 - b.len()..].copy_from_slice(&b);
        }
    }
    out
}

fn address(v: &Value) -> Address {
    Address(bytes(v).try_into().unwrap())
}

fn compressed(v: &Value) -> [u8; 33] {
    bytes(v).try_into().unwrap()
}

#[test]
fn account_keys_encode_and_decode_as_the_reference() {
    let d = vectors();
    let (k, keys) = (&d["keys"], &d["account_keys"]);
    let (k1, k2, k3) = (
        compressed(&k["K1_compressed"]),
        compressed(&k["K2_compressed"]),
        compressed(&k["K3_compressed"]),
    );
    let multisig = AccountKey::WeightedMultisig {
        threshold: 2,
        keys: vec![(1, k1), (1, k2)],
    };
    let cases = [
        ("nil", AccountKey::Nil),
        ("legacy", AccountKey::Legacy),
        ("fail", AccountKey::Fail),
        ("public_K1", AccountKey::Public(k1)),
        ("multisig_t2_K1_K2", multisig.clone()),
        (
            "role_based_public_K1_K2_K3",
            AccountKey::RoleBased(vec![
                AccountKey::Public(k1),
                AccountKey::Public(k2),
                AccountKey::Public(k3),
            ]),
        ),
        (
            "role_based_nil_K2_nil",
            AccountKey::RoleBased(vec![
                AccountKey::Nil,
                AccountKey::Public(k2),
                AccountKey::Nil,
            ]),
        ),
        (
            "role_based_multisig_legacy_fail",
            AccountKey::RoleBased(vec![multisig, AccountKey::Legacy, AccountKey::Fail]),
        ),
    ];
    for (name, key) in cases {
        let want = bytes(&keys[name]);
        assert_eq!(key.encode(), want, "{name}");
        assert_eq!(AccountKey::decode(&want).unwrap(), key, "{name}");
    }
    // The private keys give the published public keys and address.
    let key1 = SecretKey::from_slice(&bytes(&k["K1"])).unwrap();
    assert_eq!(key1.address(), address(&k["K1_address"]));
    let full = secp256k1::PublicKey::from_slice(&k1)
        .unwrap()
        .serialize_uncompressed();
    assert_eq!(
        full.to_vec(),
        bytes(&k["K1_uncompressed"]),
        "K1's uncompressed key"
    );
}

/// The transaction each vector describes, unsigned.
fn unsigned(d: &Value, case: &Value) -> Transaction {
    let c = &d["common"];
    let field = |name: &str| case.get(name).unwrap_or(&c[name]).clone();
    let nonce = field("nonce").as_u64().unwrap();
    let gas_price = u256(&field("gasPrice"));
    let gas = field("gas").as_u64().unwrap();
    let from = address(&d["keys"]["K1_address"]);
    match case["type"].as_str().unwrap() {
        "legacy" => Transaction::Legacy(Legacy {
            nonce,
            gas_price,
            gas,
            to: Some(address(&field("to"))),
            value: u256(&field("value")),
            input: Vec::new(),
            signature: None,
        }),
        "value_transfer" => Transaction::of(ValueTransfer {
            nonce,
            gas_price,
            gas,
            to: address(&field("to")),
            value: u256(&field("value")),
            from,
            signatures: Vec::new(),
        }),
        "account_update" => Transaction::of(AccountUpdate {
            nonce,
            gas_price,
            gas,
            from,
            key: AccountKey::decode(&bytes(&case["key"])).unwrap(),
            signatures: Vec::new(),
        }),
        other => panic!("unknown type {other}"),
    }
}

/// Each worked example: signing hash, V/R/S, raw bytes and hash from K1; the raw bytes decode
/// to the same transaction, re-encode byte for byte, and recover K1's address.
#[test]
fn transactions_match_the_worked_examples() {
    let d = vectors();
    let key = SecretKey::from_slice(&bytes(&d["keys"]["K1"])).unwrap();
    let sender = address(&d["keys"]["K1_address"]);
    let cases = d["transactions"].as_array().unwrap();
    assert_eq!(cases.len(), 7);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let chain_id = case["chainId"].as_u64().unwrap();
        let mut tx = unsigned(&d, case);
        if let Some(h) = case.get("sigHash") {
            assert_eq!(
                tx.sig_hash(chain_id).to_vec(),
                bytes(h),
                "{name}: signing hash"
            );
        }
        if let Some(g) = case.get("intrinsicGas") {
            assert_eq!(
                tx.intrinsic_gas(),
                g.as_u64().unwrap(),
                "{name}: intrinsic gas"
            );
        }
        tx.sign(&key, chain_id);
        let raw = bytes(&case["raw"]);
        assert_eq!(hex::encode(tx.encode()), hex::encode(&raw), "{name}: raw");
        if let Some(h) = case.get("hash") {
            assert_eq!(tx.hash().to_vec(), bytes(h), "{name}: hash");
            assert_eq!(
                tx.sender_tx_hash().to_vec(),
                bytes(h),
                "{name}: sender tx hash"
            );
        }
        let decoded = Transaction::decode(&raw).unwrap();
        assert_eq!(decoded, tx, "{name}: decoded");
        assert_eq!(decoded.encode(), raw, "{name}: re-encoded");
        assert_eq!(decoded.signers().unwrap(), vec![sender], "{name}: signer");
        let k1 = compressed(&d["keys"]["K1_compressed"]);
        assert_eq!(
            decoded.recovered().unwrap()[0].key,
            k1,
            "{name}: signer's key"
        );
        let sigs = match &decoded {
            Transaction::Legacy(t) => vec![t.signature.unwrap()],
            Transaction::Native(t) => t.signatures.clone(),
            other => panic!("{name}: not a type of these vectors: {}", other.type_name()),
        };
        assert_eq!(sigs[0].v, case["v"].as_u64().unwrap(), "{name}: V");
        assert_eq!(sigs[0].chain_id(), chain_id, "{name}: chain id from V");
        if let (Some(r), Some(s)) = (case.get("r"), case.get("s")) {
            assert_eq!(sigs[0].r, u256(r), "{name}: R");
            assert_eq!(sigs[0].s, u256(s), "{name}: S");
        }
    }
}

/// Malformed raw transactions are refused with the reference's kind of error, never a panic.
#[test]
fn malformed_raw_transactions_are_refused() {
    let d = vectors();
    let vt = bytes(&d["transactions"][1]["raw"]);
    // Every prefix of a valid transaction.
    for n in 0..vt.len() {
        assert!(
            Transaction::decode(&vt[..n]).is_err(),
            "prefix of {n} bytes"
        );
    }
    // Trailing bytes.
    let mut trailing = vt.clone();
    trailing.push(0);
    assert!(Transaction::decode(&trailing).is_err());
    // An undefined type (0x18, account creation, is disabled).
    let mut other = vt.clone();
    other[0] = 0x18;
    assert_eq!(Transaction::decode(&other), Err(TxError::UndefinedType));
    // No signature at all.
    let mut tx = Transaction::decode(&vt).unwrap();
    if let Transaction::Native(t) = &mut tx {
        t.signatures.clear();
    }
    assert_eq!(
        Transaction::decode(&tx.encode()),
        Err(TxError::InvalidSignature)
    );
    // Every byte flipped in turn: an error or a transaction, never a panic.
    for i in 0..vt.len() {
        let mut b = vt.clone();
        b[i] ^= 0xff;
        let _ = Transaction::decode(&b);
    }
}

#[test]
fn the_real_block_decodes_reencodes_and_hashes() {
    use chain_node::types::block::{Block, DeriveSha};
    let d = vectors();
    let v = &d["blocks"]["real_block"];
    let raw = bytes(&v["rlp"]);
    assert_eq!(raw.len() as u64, v["size"].as_u64().unwrap());
    let block = Block::decode(&raw).unwrap();
    assert_eq!(block.encode(), raw, "lossless");
    assert_eq!(block.header.number, v["number"].as_u64().unwrap());
    assert_eq!(
        block.hash().to_vec(),
        bytes(&v["hash"]),
        "the BFT hash rule"
    );
    assert_ne!(
        chain_node::crypto::keccak256(&block.header.encode()).to_vec(),
        bytes(&v["hash"]),
        "the plain header hash is not the block hash"
    );
    assert_eq!(block.transactions.len(), 1);
    let tx_root = bytes(&v["transactionsRoot"]);
    assert_eq!(block.header.transactions_root.to_vec(), tx_root);
    let encodings: Vec<Vec<u8>> = block.transactions.iter().map(|t| t.encode()).collect();
    assert_eq!(DeriveSha::Concat.root(&encodings).to_vec(), tx_root);
    assert_eq!(block.transactions[0].hash().to_vec(), tx_root);
    // The proposer's seal recovers to one of the validators (double-keccak rule).
    let bft = chain_node::types::block::BftExtra::decode(&block.header.extra).unwrap();
    let seal_hash = block.header.seal_hash().unwrap();
    let mut rs = [0u8; 64];
    rs.copy_from_slice(&bft.seal[..64]);
    let proposer = chain_node::crypto::recover_address(&seal_hash, &rs, bft.seal[64]).unwrap();
    assert!(bft.validators.contains(&proposer), "{proposer:?}");
    // Every prefix is refused without a panic.
    for n in 0..raw.len() {
        assert!(Block::decode(&raw[..n]).is_err());
    }
}

/// Reference 10.8: the header JSON of the real block, as the reference printed it (long
/// fields shortened there; their starts and the others compared whole), keys alphabetical.
#[test]
fn the_real_block_header_as_json() {
    use chain_node::types::block::Block;
    use chain_node::types::json::HeaderJson;
    let d = vectors();
    let block = Block::decode(&bytes(&d["blocks"]["real_block"]["rlp"])).unwrap();
    let text = serde_json::to_string(&HeaderJson::new(block.hash(), &block.header)).unwrap();
    let v: Value = serde_json::from_str(&text).unwrap();
    let want = serde_json::json!({
        "blockScore": "0x1",
        "gasUsed": "0x5208",
        "governanceData": "0x",
        "hash": "0x87fe52e244702e4c4c540cdab29f52f03ced4a961e3f0ebd33217867b7da3a56",
        "number": "0x4ffa71e",
        "parentHash": "0xc2adf89ac1218bca784fb6b456a4d6d992efd726208edac9a268f72e8daa52a7",
        "receiptsRoot": "0xe38e5532717f12f769b07ea016014bd39b74fb72def4de8442114cc2728609f2",
        "reward": "0xb2bd3178affccd9f9f5189457f1cad7d17a01c9d",
        "stateRoot": "0xce26cd14bfe586c11f9ebae0186a3e4744dfb6233e603d477cdebc69d9dc7953",
        "timestamp": "0x62134f3a",
        "timestampFoS": "0x0",
        "transactionsRoot": "0x5b8713ac41d655e85124c14d558b67dbb5d0417da4096c2ea00c93d78a12daa7",
        "voteData": "0xf09499fb17d324fa0e07f23b49d09028ac0919414db694676f7665726e616e63652e756e6974707269636585ae9f7bcc00",
    });
    for (k, w) in want.as_object().unwrap() {
        assert_eq!(&v[k], w, "{k}");
    }
    assert!(v["extraData"].as_str().unwrap().starts_with("0xd883010703"));
    assert!(v["logsBloom"].as_str().unwrap().starts_with("0x0000"));
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 15, "{keys:?}");
    // The text's own key order is alphabetical (serde_json's map sorts; the text is ours).
    let order: Vec<usize> = keys
        .iter()
        .map(|k| text.find(&format!("\"{k}\":")).unwrap())
        .collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{text}");
}

#[test]
fn transaction_roots_by_each_method() {
    use chain_node::types::block::{encode_tx_list, DeriveSha};
    let d = vectors();
    let b = &d["blocks"];
    let legacy = Transaction::decode(&bytes(&d["transactions"][0]["raw"])).unwrap();
    let vt = Transaction::decode(&bytes(&d["transactions"][1]["raw"])).unwrap();
    let txs = vec![legacy, vt.clone()];
    assert_eq!(encode_tx_list(&txs), bytes(&b["tx_list_legacy_vt_1001"]));
    let encodings: Vec<Vec<u8>> = txs.iter().map(|t| t.encode()).collect();
    let roots = &b["roots_legacy_vt_1001"];
    for (method, name) in [
        (DeriveSha::Original, "original"),
        (DeriveSha::Simple, "simple"),
        (DeriveSha::Concat, "concat"),
    ] {
        assert_eq!(
            method.root(&encodings).to_vec(),
            bytes(&roots[name]),
            "{name}"
        );
        assert_eq!(
            method.root(&[]).to_vec(),
            bytes(&b["empty_roots"][name]),
            "{name}, empty"
        );
    }
    let one = vec![vt.encode()];
    assert_eq!(
        DeriveSha::Original.root(&one).to_vec(),
        bytes(&b["root_original_vt_1001"])
    );
    assert_eq!(DeriveSha::Simple.root(&one), vt.hash());
    assert_eq!(DeriveSha::Concat.root(&one), vt.hash());
}
