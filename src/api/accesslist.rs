//! `chain_createAccessList` and `eth_createAccessList`: the EIP-2930 access list a message
//! would use (every address and storage slot it touches but its sender, its recipient and
//! the precompiles), found by running it until the list is stable, with the gas it uses
//! with that list and the code's failure, if any. Registered by the namespaces that serve
//! it; this module only answers.
//!
//! The arguments are the reference's `EthTransactionArgs`: `chain_call`'s members (decoded
//! by [`call_args_named`], with that struct's name in the texts), and `nonce` and
//! `accessList`. As in a call, the sender is credited the gas it may burn before the run,
//! where the reference (1.12.1) makes the sender pay for it at the unit price.

use serde::Serialize;
use serde_json::Value;

use super::contract::block_param;
use super::error::{Error, Result};
use super::goparams::{call_args_named, BlockRef, Member};
use super::txmembers::{access_list_in, arg0};
use crate::chain::call::{AccessListFailure, CallArgs};
use crate::chain::Chain;
use crate::crypto::Address;
use crate::exec::CallError;
use crate::rpc::{Params, RpcError};
use crate::types::ethereum::Ethereum;
use crate::types::transaction::{AccessTuple, U256};

const STRUKT: &str = "EthTransactionArgs";

/// The answer: `{accessList, error, gasUsed}` (`error` only when the code failed).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessListJson {
    access_list: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    gas_used: String,
}

/// `EthTransactionArgs` as this method reads them.
struct EthArgs {
    call: CallArgs,
    nonce: Option<u64>,
    chain_id: Option<U256>,
    /// `gasPrice` was given: the transaction the reference names in its errors is an
    /// access-list one, else a dynamic-fee one.
    gas_price: bool,
}

/// The members [`call_args_named`] leaves to the caller, matched without regard to case as
/// Go's decoder does.
fn eth_args(v: &Value) -> Result<EthArgs> {
    let mut call = call_args_named(v, 0, STRUKT)?;
    let (mut nonce, mut chain_id, mut gas_price) = (None, None, false);
    for (key, value) in v.as_object().into_iter().flatten() {
        if value.is_null() {
            continue;
        }
        let member = |name| Member {
            strukt: STRUKT,
            name,
        };
        match key.to_ascii_lowercase().as_str() {
            "accesslist" => call.access_list = access_list_in(STRUKT, value)?,
            "nonce" => nonce = Some(member("nonce").uint64(value).map_err(arg0)?),
            "chainid" => chain_id = Some(member("chainId").big(value).map_err(arg0)?),
            "gasprice" => gas_price = true,
            _ => {}
        }
    }
    Ok(EthArgs {
        call,
        nonce,
        chain_id,
        gas_price,
    })
}

/// `createAccessList(args, block)`: the block defaults to `pending` (the head here); a
/// missing block is `block_param`'s error, a creation without code is refused as the
/// reference refuses it, and a message that cannot run at all is `failed to apply
/// transaction: <hash> err: <why>` with the hash of the transaction the arguments make.
pub fn create_access_list(chain: &Chain, p: &Params) -> Result<AccessListJson> {
    let args = eth_args(&p.required::<Value>(0)?)?;
    let at = match p.optional::<BlockRef>(1)? {
        Some(_) => block_param(chain, p, 1)?,
        None => chain
            .state_header(None)?
            .ok_or_else(|| Error::Rpc(RpcError::server("no head block")))?,
    };
    let from = args.call.from.unwrap_or(Address([0; 20]));
    let nonce = match args.nonce {
        Some(n) => n,
        None => chain.pending_nonce(&from)?,
    };
    if args.call.to.is_none() && args.call.input.is_empty() {
        return Err(Error::Rpc(RpcError::server(
            "contract creation without any data provided",
        )));
    }
    let to = args
        .call
        .to
        .unwrap_or_else(|| crate::exec::create_address(&from, nonce));
    match chain.create_access_list(&args.call, to, &at) {
        Ok(found) => Ok(AccessListJson {
            access_list: crate::types::json::access_list_json(&found.access_list),
            error: found.failure,
            gas_used: format!("0x{:x}", found.gas_used),
        }),
        Err(AccessListFailure { error, access_list }) => {
            let why = match error {
                CallError::IntrinsicGas { .. } => "intrinsic gas too low".to_string(),
                CallError::InsufficientBalance { .. } => {
                    "insufficient balance for transfer".to_string()
                }
                CallError::Refused { why, .. } => why,
                CallError::State(e) => return Err(crate::chain::ChainError::from(e).into()),
            };
            let hash = refused_tx_hash(chain, &args, nonce, access_list);
            Err(Error::Rpc(RpcError::server(format!(
                "failed to apply transaction: 0x{} err: {why}",
                hex::encode(hash)
            ))))
        }
    }
}

/// The hash of the unsigned transaction the reference builds from the arguments to name a
/// message that could not run: an access-list transaction when `gasPrice` was given, else
/// a dynamic-fee one at the price (the unit price by default).
fn refused_tx_hash(chain: &Chain, args: &EthArgs, nonce: u64, list: Vec<AccessTuple>) -> [u8; 32] {
    let price = args
        .call
        .gas_price
        .unwrap_or_else(|| crate::state::from_u64(chain.unit_price()));
    let chain_id = args.chain_id.map_or(chain.chain_id(), |id| {
        u64::from_be_bytes(id[24..].try_into().expect("8 bytes"))
    });
    Ethereum {
        dynamic: !args.gas_price,
        chain_id,
        nonce,
        gas_tip_cap: price,
        gas_fee_cap: price,
        gas: args.call.gas(),
        to: args.call.to,
        value: args.call.value.unwrap_or([0; 32]),
        input: args.call.input.clone(),
        access_list: list,
        signature: None,
    }
    .hash()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc(e: Error) -> (i64, String) {
        match e {
            Error::Rpc(e) => (e.code, e.message),
            other => panic!("{other}"),
        }
    }

    #[test]
    fn the_arguments_are_eth_transaction_args() {
        let a = eth_args(&serde_json::json!({
            "from": "0x1111111111111111111111111111111111111111",
            "NONCE": "0x7",
            "gasPrice": "0x5",
            "accessList": [{"address": "0x2222222222222222222222222222222222222222",
                            "storageKeys": [format!("0x{}01", "00".repeat(31))]}],
        }))
        .unwrap();
        assert_eq!(a.nonce, Some(7));
        assert!(a.gas_price);
        assert_eq!(a.call.access_list.len(), 1);
        assert_eq!(a.call.access_list[0].storage_keys[0][31], 1);
        assert_eq!(
            rpc(eth_args(&serde_json::json!({"to": 5})).err().unwrap()),
            (
                -32602,
                "invalid argument 0: json: cannot unmarshal non-string into Go struct field \
                 EthTransactionArgs.to of type common.Address"
                    .into()
            )
        );
        assert_eq!(
            rpc(eth_args(&serde_json::json!({"nonce": 7})).err().unwrap()),
            (
                -32602,
                "invalid argument 0: json: cannot unmarshal non-string into Go struct field \
                 EthTransactionArgs.nonce of type hexutil.Uint64"
                    .into()
            )
        );
        assert_eq!(
            rpc(eth_args(&serde_json::json!({"accessList": {}}))
                .err()
                .unwrap()),
            (
                -32602,
                "invalid argument 0: json: cannot unmarshal object into Go struct field \
                 EthTransactionArgs.accessList of type types.AccessList"
                    .into()
            )
        );
        assert_eq!(
            rpc(eth_args(&serde_json::json!([])).err().unwrap()),
            (
                -32602,
                "invalid argument 0: json: cannot unmarshal array into Go value of type \
                 api.EthTransactionArgs"
                    .into()
            )
        );
    }
}
