//! The test contracts of `tests/contracts` (compiled by solc; see its README): their code
//! and ABI selectors, legacy transactions that deploy and call them, and ABI words.
#![allow(dead_code)]

use chain_node::crypto::{keccak256, Address, SecretKey};
use chain_node::types::transaction::{Ethereum, Legacy, Transaction};

/// A compiled contract of `tests/contracts/out`.
pub struct Compiled {
    pub name: String,
    pub bytecode: Vec<u8>,
    pub deployed: Vec<u8>,
    json: serde_json::Value,
}

/// The compiled contract `name` (`Token`, `Counter`, `Caller`, `Reverter`, `Factory`, ...).
pub fn compiled(name: &str) -> Compiled {
    let path = format!(
        "{}/tests/contracts/out/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let hexfield =
        |k: &str| hex::decode(json[k].as_str().unwrap().trim_start_matches("0x")).unwrap();
    Compiled {
        name: name.to_string(),
        bytecode: hexfield("bytecode"),
        deployed: hexfield("deployedBytecode"),
        json,
    }
}

impl Compiled {
    /// The 4-byte selector of `signature` (e.g. `transfer(address,uint256)`), checked
    /// against solc's own table.
    pub fn selector(&self, signature: &str) -> Vec<u8> {
        let ours = keccak256(signature.as_bytes())[..4].to_vec();
        let solc = self.json["methodIdentifiers"][signature]
            .as_str()
            .unwrap_or_else(|| panic!("{} has no {signature}", self.name));
        assert_eq!(hex::encode(&ours), solc);
        ours
    }

    /// Call data: the selector of `signature` followed by `words`.
    pub fn call_data(&self, signature: &str, words: &[[u8; 32]]) -> Vec<u8> {
        let mut d = self.selector(signature);
        for w in words {
            d.extend_from_slice(w);
        }
        d
    }

    /// Creation code followed by constructor arguments.
    pub fn with_args(&self, words: &[[u8; 32]]) -> Vec<u8> {
        let mut d = self.bytecode.clone();
        for w in words {
            d.extend_from_slice(w);
        }
        d
    }
}

/// An address as an ABI word.
pub fn addr_word(a: &Address) -> [u8; 32] {
    let mut w = [0u8; 32];
    w[12..].copy_from_slice(&a.0);
    w
}

/// A number as an ABI word.
pub fn uint_word(n: u128) -> [u8; 32] {
    let mut w = [0u8; 32];
    w[16..].copy_from_slice(&n.to_be_bytes());
    w
}

/// The address a contract created by `sender` with `nonce` gets.
pub fn create_address(sender: &Address, nonce: u64) -> Address {
    chain_node::exec::create_address(sender, nonce)
}

/// A legacy transaction (a creation when `to` is `None`) signed by `key` for chain 1000 at
/// the dev unit price.
pub fn legacy_tx(
    key: &SecretKey,
    nonce: u64,
    to: Option<Address>,
    value: u128,
    input: Vec<u8>,
    gas: u64,
) -> Transaction {
    let mut tx = Transaction::Legacy(Legacy {
        nonce,
        gas_price: super::u256(super::PRICE),
        gas,
        to,
        value: super::u256(value),
        input,
        signature: None,
    });
    tx.sign(key, 1000);
    tx
}

/// An EIP-1559 transaction (Ethereum's dynamic-fee type) to `to` signed by `key` for chain
/// 1000, its fee cap and tip cap both the dev unit price (the base fee being 0), no access
/// list. `encode_ethereum()` of its body is what `eth_sendRawTransaction` takes, `encode()`
/// the reference's envelope (`78 ||`) that `chain_sendRawTransaction` takes.
pub fn dynamic_fee_tx(
    key: &SecretKey,
    nonce: u64,
    to: Address,
    value: u128,
    input: Vec<u8>,
    gas: u64,
) -> Ethereum {
    let mut tx = Transaction::Ethereum(Ethereum {
        dynamic: true,
        chain_id: 1000,
        nonce,
        gas_tip_cap: super::u256(super::PRICE),
        gas_fee_cap: super::u256(super::PRICE),
        gas,
        to: Some(to),
        value: super::u256(value),
        input,
        access_list: Vec::new(),
        signature: None,
    });
    tx.sign(key, 1000);
    match tx {
        Transaction::Ethereum(t) => t,
        _ => unreachable!("built as Ethereum's"),
    }
}

/// [`legacy_tx`] as `0x`-hex raw bytes for `chain_sendRawTransaction`.
pub fn raw_legacy(
    key: &SecretKey,
    nonce: u64,
    to: Option<Address>,
    value: u128,
    input: Vec<u8>,
    gas: u64,
) -> String {
    format!(
        "0x{}",
        hex::encode(legacy_tx(key, nonce, to, value, input, gas).encode())
    )
}

/// Deploys `code` from `key` (its next nonce `nonce`) through `chain_sendRawTransaction`
/// on the node at `url`, waits for the receipt and returns the contract's address.
pub fn deploy(url: &str, key: &SecretKey, nonce: u64, code: Vec<u8>) -> Address {
    let raw = raw_legacy(key, nonce, None, 0, code, 5_000_000);
    let hash = super::ok(super::http_call(
        url,
        "chain_sendRawTransaction",
        serde_json::json!([raw]),
    ));
    let r = super::wait_receipt(url, &hash);
    assert_eq!(r["status"], serde_json::json!("0x1"), "deploy failed: {r}");
    let address = create_address(&key.address(), nonce);
    assert_eq!(
        r["contractAddress"],
        serde_json::json!(format!("0x{}", hex::encode(address.0)))
    );
    address
}
