//! `eth_getProof` (and the reference's `klay_getProof`): an account's Merkle proof and its
//! storage slots' at a block (EIP-1186), with the reference's parameters, result shape and
//! texts. Registered by the namespaces that serve it; this module only answers.
//!
//! As the reference (1.12.1) does, an address that is not a contract account is refused
//! (`given address is not a contract address`, or `there is no account corresponding to the
//! given address` when the state has no entry): it reads the storage root before anything
//! else, and only a contract account has one.

use serde::Serialize;
use serde_json::Value;

use super::contract::block_param;
use super::error::{Error, Result};
use super::goparams::BlockRef;
use super::HexOut;
use crate::chain::state::quantity;
use crate::chain::Chain;
use crate::crypto::Address;
use crate::rpc::{go_type_error, json_type, FromParam, Params, RpcError};

/// The answer, members in the order of the reference's `EthAccountResult`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProofJson {
    address: Address,
    account_proof: Vec<HexOut>,
    balance: String,
    code_hash: HexOut,
    nonce: String,
    storage_hash: HexOut,
    storage_proof: Vec<SlotProofJson>,
}

#[derive(Serialize)]
pub struct SlotProofJson {
    key: String,
    value: String,
    proof: Vec<HexOut>,
}

/// The storage keys parameter: Go's `[]string` (`null` is none, a `null` element is `""`).
struct StorageKeys(Vec<String>);

impl FromParam for StorageKeys {
    fn from_param(v: &Value) -> std::result::Result<StorageKeys, String> {
        match v {
            Value::Null => Ok(StorageKeys(Vec::new())),
            Value::Array(items) => items
                .iter()
                .map(String::from_param)
                .collect::<std::result::Result<_, _>>()
                .map(StorageKeys),
            other => Err(go_type_error(json_type(other), "[]string")),
        }
    }
}

/// A storage key as the reference's `decodeHash` reads it: `0x` or `0X` optional, an odd
/// number of digits padded on the left, at most 32 bytes, right-aligned; with the number of
/// bytes given (which decides how the key is echoed).
fn decode_hash(s: &str) -> Result<([u8; 32], usize)> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    let padded;
    let digits = if digits.len() % 2 == 1 {
        padded = format!("0{digits}");
        &padded
    } else {
        digits
    };
    let server = |m: &str| Error::Rpc(RpcError::server(m));
    let bytes = hex::decode(digits).map_err(|_| server("hex string invalid"))?;
    if bytes.len() > 32 {
        return Err(server("hex string too long, want at most 32 bytes"));
    }
    let mut word = [0u8; 32];
    word[32 - bytes.len()..].copy_from_slice(&bytes);
    Ok((word, bytes.len()))
}

/// A key as the answer echoes it: a 32-byte input as 32 bytes of hex, a shorter one as a
/// quantity (what the reference keeps for older clients).
fn echo_key(word: &[u8; 32], input_len: usize) -> String {
    if input_len == 32 {
        format!("0x{}", hex::encode(word))
    } else {
        quantity(word)
    }
}

/// `eth_getProof(address, storageKeys, block)`: the account's proof and balance, code hash,
/// nonce and storage root at the block, and each key's value with its proof in the account's
/// storage trie. Parameters are decoded in order (-32602 with Go's texts), then every key
/// (`hex string invalid`, `hex string too long, want at most 32 bytes`, -32000) before the
/// block is looked up (`block_param`'s texts); then the account is refused unless it is a
/// contract (the module comment).
pub fn get_proof(chain: &Chain, p: &Params) -> Result<ProofJson> {
    let address: Address = p.required(0)?;
    let StorageKeys(texts) = p.required(1)?;
    p.required::<BlockRef>(2)?;
    let keys = texts
        .iter()
        .map(|t| decode_hash(t))
        .collect::<Result<Vec<_>>>()?;
    let at = block_param(chain, p, 2)?;
    let slots: Vec<[u8; 32]> = keys.iter().map(|(k, _)| *k).collect();
    let proved = chain.prove_account(&address, &slots, &at)?;
    let server = |m: &str| Error::Rpc(RpcError::server(m));
    let account = proved
        .account
        .ok_or_else(|| server("there is no account corresponding to the given address"))?;
    let contract = account
        .contract
        .ok_or_else(|| server("given address is not a contract address"))?;
    let hexes = |proof: Vec<Vec<u8>>| proof.into_iter().map(HexOut).collect();
    Ok(ProofJson {
        address,
        account_proof: hexes(proved.proof),
        balance: quantity(&account.balance),
        code_hash: HexOut(contract.code_hash.to_vec()),
        nonce: format!("0x{:x}", account.nonce),
        storage_hash: HexOut(contract.storage_root.to_vec()),
        storage_proof: keys
            .iter()
            .zip(proved.storage)
            .map(|((word, len), slot)| SlotProofJson {
                key: echo_key(word, *len),
                value: quantity(&slot.value),
                proof: hexes(slot.proof),
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(r: Result<([u8; 32], usize)>) -> String {
        match r {
            Err(Error::Rpc(e)) => format!("{} {}", e.code, e.message),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn keys_are_decoded_as_the_reference_decodes_them() {
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(decode_hash("0x1").unwrap(), (one, 1));
        assert_eq!(decode_hash("0X01").unwrap(), (one, 1));
        assert_eq!(decode_hash("1").unwrap(), (one, 1));
        assert_eq!(decode_hash("").unwrap(), ([0; 32], 0));
        let full = format!("0x{}", "00".repeat(31) + "01");
        assert_eq!(decode_hash(&full).unwrap(), (one, 32));
        assert_eq!(message(decode_hash("0xzz")), "-32000 hex string invalid");
        assert_eq!(
            message(decode_hash(&format!("0x{}", "ab".repeat(33)))),
            "-32000 hex string too long, want at most 32 bytes"
        );
    }

    #[test]
    fn keys_are_echoed_as_given_or_as_quantities() {
        let mut w = [0u8; 32];
        w[30] = 0x01;
        w[31] = 0x0a;
        assert_eq!(echo_key(&w, 2), "0x10a");
        assert_eq!(echo_key(&[0; 32], 0), "0x0");
        assert_eq!(echo_key(&w, 32), format!("0x{}10a", "0".repeat(61)));
    }

    #[test]
    fn storage_keys_are_a_go_string_slice() {
        let keys = |v: Value| StorageKeys::from_param(&v).map(|k| k.0);
        assert_eq!(keys(Value::Null), Ok(vec![]));
        assert_eq!(
            keys(serde_json::json!(["0x1", null])),
            Ok(vec!["0x1".to_string(), String::new()])
        );
        assert_eq!(
            keys(serde_json::json!([1])),
            Err("json: cannot unmarshal number into Go value of type string".into())
        );
        assert_eq!(
            keys(serde_json::json!("0x1")),
            Err("json: cannot unmarshal string into Go value of type []string".into())
        );
    }
}
