//! `chain_createAccessList` and `eth_createAccessList`: the EIP-2930 access list a message
//! would use (every address and storage slot it touches but its sender, its recipient and
//! the precompiles), found by running it until the list is stable, with the gas it uses
//! with that list and the code's failure, if any. Registered by the namespaces that serve
//! it; this module only answers.
//!
//! The arguments are the reference's `EthTransactionArgs` ([`EthTxArgs`]), defaulted as it
//! defaults them (the gas, when left out, is the call cap rather than an estimate). As in a
//! call, the sender is credited the gas it may burn before the run, where the reference
//! (1.12.1) makes the sender pay for it at the unit price.

use serde::Serialize;
use serde_json::Value;

use super::callargs::EthTxArgs;
use super::contract::block_param;
use super::error::{Error, Result};
use super::goparams::BlockRef;
use crate::chain::call::{AccessListFailure, CALL_GAS_CAP};
use crate::chain::Chain;
use crate::exec::CallError;
use crate::rpc::{Params, RpcError};

/// The answer: `{accessList, error, gasUsed}` (`error` only when the code failed).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AccessListJson {
    access_list: Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'static str>,
    gas_used: String,
}

/// `createAccessList(args, block)`: the block defaults to `pending` (the head here) and is
/// looked up first (`block_param`'s texts); then the arguments are defaulted with the
/// reference's checks and texts (`EthTxArgs::set_defaults`); a message that cannot run at
/// all is `failed to apply transaction: <hash> err: <why>`, naming the transaction the
/// arguments make with the list it ran with.
pub fn create_access_list(chain: &Chain, p: &Params) -> Result<AccessListJson> {
    let mut args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?;
    let at = match p.optional::<BlockRef>(1)? {
        Some(_) => block_param(chain, p, 1)?,
        None => chain
            .state_header(None)?
            .ok_or_else(|| Error::Rpc(RpcError::server("no head block")))?,
    };
    args.gas.get_or_insert(CALL_GAS_CAP);
    args.set_defaults(chain, true)?;
    let from = args.from();
    let to = args.to.unwrap_or_else(|| {
        crate::exec::create_address(&from, args.nonce.expect("set_defaults fills the nonce"))
    });
    let mut call = args.call_args()?;
    call.access_list = args.access_list.clone().unwrap_or_default();
    match chain.create_access_list(&call, to, &at) {
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
            args.access_list = Some(access_list);
            let hash = args.to_transaction()?.hash();
            Err(Error::Rpc(RpcError::server(format!(
                "failed to apply transaction: 0x{} err: {why}",
                hex::encode(hash)
            ))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A malformed `accessList` is named as a member of `EthTransactionArgs`.
    #[test]
    fn a_bad_access_list_names_the_reference_struct() {
        let e = EthTxArgs::decode(&serde_json::json!({"accessList": {}}), 0).err();
        let Some(Error::Rpc(e)) = e else {
            panic!("{e:?}")
        };
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                -32602,
                "invalid argument 0: json: cannot unmarshal object into Go struct field \
                 EthTransactionArgs.accessList of type types.AccessList"
            )
        );
    }
}
