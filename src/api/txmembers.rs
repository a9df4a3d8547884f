//! The members of the send and sign methods' transaction object (`SendTxArgs`), each decoded
//! as the reference's Go decoder reads its type, with Go's texts when it does not decode
//! (`invalid argument 0: json: cannot unmarshal ... into Go struct field SendTxArgs.<name> of
//! type <type>`). What the object as a whole means is `txargs`.

use serde_json::{Map, Value};

use super::error::{Error, Result};
use super::goparams::Member;
use crate::crypto::Address;
use crate::rpc::RpcError;
use crate::types::transaction::{AccessTuple, Signature, U256};

pub(super) fn invalid(msg: impl Into<String>) -> Error {
    Error::Rpc(RpcError::invalid_params(msg.into()))
}

/// A member of the reference's `SendTxArgs`, decoded with Go's texts.
pub(super) fn member(name: &str) -> Member<'_> {
    Member {
        strukt: "SendTxArgs",
        name,
    }
}

pub(super) fn arg0(m: String) -> Error {
    invalid(format!("invalid argument 0: {m}"))
}

/// A 0x-hex quantity of at most 256 bits (`*hexutil.Big`), or Go's error naming `field`.
pub fn quantity(field: &str, v: &Value) -> Result<U256> {
    member(field).big(v).map_err(arg0)
}

/// A 0x-hex quantity of at most 64 bits (`hexutil.Uint64`).
pub fn quantity_u64(field: &str, v: &Value) -> Result<u64> {
    member(field).uint64(v).map_err(arg0)
}

pub(super) fn address(field: &str, v: &Value) -> Result<Address> {
    member(field).address(v).map_err(arg0)
}

pub(super) fn bytes(field: &str, v: &Value) -> Result<Vec<u8>> {
    member(field).bytes(v).map_err(arg0)
}

/// `codeFormat`: a JSON number of at most a byte (`params.CodeFormat`).
pub(super) fn code_format(v: &Value) -> Result<u8> {
    member("codeFormat")
        .integer(v, "params.CodeFormat", u8::MAX.into())
        .map(|n| n as u8)
        .map_err(arg0)
}

/// `humanReadable`: a JSON boolean.
pub(super) fn human_readable(v: &Value) -> Result<bool> {
    member("humanReadable").boolean(v).map_err(arg0)
}

/// `feeRatio`: a JSON number of at most a byte (`types.FeeRatio`).
pub(super) fn fee_ratio(v: &Value) -> Result<u8> {
    member("feeRatio")
        .integer(v, "types.FeeRatio", u8::MAX.into())
        .map(|n| n as u8)
        .map_err(arg0)
}

/// The objects of an array member (`[{...}, ...]`), or Go's text naming the member and its
/// type when the member, or one of its items, is not of that shape.
fn objects<'v>(
    strukt: &str,
    name: &str,
    ty: &str,
    v: &'v Value,
) -> Result<Vec<&'v Map<String, Value>>> {
    let bad = |what: &str| arg0(super::goparams::field_error(strukt, name, what, ty));
    let Value::Array(items) = v else {
        return Err(bad(crate::rpc::json_type(v)));
    };
    items
        .iter()
        .map(|item| match item {
            Value::Object(o) => Ok(o),
            other => Err(bad(crate::rpc::json_type(other))),
        })
        .collect()
}

/// A member of an object matched without regard to case, as Go's decoder does; `null` is
/// absent.
fn get<'v>(o: &'v Map<String, Value>, k: &str) -> Option<&'v Value> {
    o.iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(k))
        .map(|(_, v)| v)
        .filter(|v| !v.is_null())
}

/// `accessList`: `[{"address", "storageKeys"}]` (`types.AccessList`).
pub(super) fn access_list(v: &Value) -> Result<Vec<AccessTuple>> {
    access_list_in("SendTxArgs", v)
}

/// [`access_list`] as a member of the reference's Go struct `strukt` (its name in the texts).
pub(super) fn access_list_in(strukt: &str, v: &Value) -> Result<Vec<AccessTuple>> {
    let ty = "types.AccessList";
    let mut out = Vec::new();
    for o in objects(strukt, "accessList", ty, v)? {
        let address = match get(o, "address") {
            Some(a) => Member {
                strukt: "AccessTuple",
                name: "address",
            }
            .address(a)
            .map_err(arg0)?,
            None => Address([0; 20]),
        };
        let mut storage_keys = Vec::new();
        match get(o, "storageKeys") {
            None => {}
            Some(Value::Array(keys)) => {
                for k in keys {
                    let h: [u8; 32] = super::goparams::fixed_value(
                        k,
                        "Go struct field AccessTuple.storageKeys of type common.Hash",
                        "common.Hash",
                    )
                    .map_err(arg0)?;
                    storage_keys.push(h);
                }
            }
            Some(other) => {
                return Err(arg0(super::goparams::field_error(
                    strukt,
                    "accessList",
                    crate::rpc::json_type(other),
                    ty,
                )))
            }
        }
        out.push(AccessTuple {
            address,
            storage_keys,
        });
    }
    Ok(out)
}

/// `signatures`: `[{"V", "R", "S"}]` (`types.TxSignaturesJSON`), keys in any case.
pub(super) fn signatures(v: &Value) -> Result<Vec<Signature>> {
    let mut out = Vec::new();
    for o in objects("SendTxArgs", "signatures", "types.TxSignaturesJSON", v)? {
        let word = |k: &str| match get(o, k) {
            Some(v) => Member {
                strukt: "TxSignatureJSON",
                name: k,
            }
            .big(v)
            .map_err(arg0),
            None => Ok([0; 32]),
        };
        let v = word("V")?;
        if v[..24].iter().any(|&b| b != 0) {
            return Err(arg0("V out of range".into()));
        }
        out.push(Signature {
            v: u64::from_be_bytes(v[24..].try_into().expect("8 bytes")),
            r: word("R")?,
            s: word("S")?,
        });
    }
    Ok(out)
}
