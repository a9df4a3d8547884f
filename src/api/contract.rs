//! The `chain` methods that read and run contracts: `chain_call`, `chain_estimateGas`,
//! `chain_estimateComputationCost`, `chain_getCode`, `chain_getStorageAt`,
//! `chain_getAccount`, `chain_isContractAccount`, `chain_accountCreated`, with the
//! reference's parameters, result shapes and error texts (a revert with data is error 3,
//! `execution reverted: <reason>`, its data the revert bytes).

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::callargs::call_args;
use super::error::{Error, Result};
use super::goparams::BlockRef;
use super::logs::Missing;
use super::method::{p, Method, Namespace, ParamKind as K};
use super::HexOut;
use crate::chain::call::{CallArgs, CallFailure};
use crate::chain::state::{quantity, Account};
use crate::chain::Chain;
use crate::crypto::Address;
use crate::exec::{self, status};
use crate::method;
use crate::rpc::{Call, Params, RpcError};
use crate::types::block::Header;
use crate::types::json::AccountKeyJson;

/// Contract calls and state reads of the `chain` namespace.
pub struct ContractApi {
    chain: Option<Arc<Chain>>,
}

impl Namespace for ContractApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_call",
            [p("callArgs", K::Object), p("block", K::Any)],
            "Run a message against the state of a block without sending it; what it returns",
            "string: the call's output, 0x-hex",
            Self::call
        ),
        method!(
            "chain_estimateGas",
            [p("callArgs", K::Object)],
            "The least gas a message needs to succeed on the latest state",
            "string: a 0x quantity",
            Self::estimate_gas
        ),
        method!(
            "chain_estimateComputationCost",
            [p("callArgs", K::Object), p("block", K::Any)],
            "The computation cost a message spends (the reference's opcode and precompile costs)",
            "string: a 0x quantity",
            Self::estimate_computation_cost
        ),
        method!(
            "chain_getCode",
            [p("address", K::Address), p("block", K::Any)],
            "The code of an account at a block (0x without code)",
            "string: 0x-hex code",
            Self::get_code
        ),
        method!(
            "chain_getStorageAt",
            [
                p("address", K::Address),
                p("key", K::String),
                p("block", K::Any)
            ],
            "A storage slot of a contract at a block, as 32 bytes",
            "string: 32 bytes, 0x-hex",
            Self::get_storage_at
        ),
        method!(
            "chain_getProof",
            [p("address", K::Address), p("storageKeys", K::Any), p("block", K::Any)],
            "The Merkle proof of a contract account and some of its storage slots at a block (EIP-1186)",
            "object: address, accountProof, balance, codeHash, nonce, storageHash, storageProof",
            Self::get_proof
        ),
        method!(
            "chain_createAccessList",
            [p("callArgs", K::Object), super::method::opt("block", K::Any)],
            "The EIP-2930 access list a message touches, and the gas it uses with that list",
            "object: accessList, gasUsed, and error when the message fails",
            Self::create_access_list
        ),
        method!(
            "chain_getAccount",
            [p("address", K::Address), p("block", K::Any)],
            "An account at a block: accType and its fields (null when it does not exist)",
            "object: accType, account; or null",
            Self::get_account
        ),
        method!(
            "chain_isContractAccount",
            [p("address", K::Address), p("block", K::Any)],
            "Whether an account has code at a block",
            "bool",
            Self::is_contract_account
        ),
        method!(
            "chain_accountCreated",
            [p("address", K::Address), p("block", K::Any)],
            "Whether an account exists at a block",
            "bool",
            Self::account_created
        ),
    ];
}

fn invalid(msg: impl Into<String>) -> Error {
    Error::Rpc(RpcError::invalid_params(msg.into()))
}

/// A block parameter at position `i` (required, decoded as [`BlockRef`]) resolved to the
/// canonical block with its state; the reference's texts when it is missing (`the header
/// does not exist (block number: <n>)`, `header for hash not found`, or for `{}` and `null`
/// `invalid arguments; neither block nor hash specified`).
pub fn block_param(chain: &Chain, params: &Params, i: usize) -> Result<([u8; 32], Header)> {
    let (_, header) = match params.required::<BlockRef>(i)? {
        BlockRef::Tag(t) => {
            let number = t.resolve(chain.head_number());
            chain
                .header_at(number)?
                .ok_or_else(|| missing_number(number))?
        }
        BlockRef::Hash(h) => {
            let b = chain
                .block_by_hash(&h)?
                .ok_or_else(|| Error::Rpc(RpcError::server("header for hash not found")))?;
            (b.hash, b.header)
        }
        BlockRef::Neither => return Err(Missing::Neither.into()),
    };
    chain
        .state_header(Some(header.number))?
        .ok_or_else(|| missing_number(header.number))
}

fn missing_number(number: u64) -> Error {
    Error::Rpc(RpcError::server(format!(
        "the header does not exist (block number: {number})"
    )))
}

/// A failed call or estimate as the reference answers it.
impl From<CallFailure> for Error {
    fn from(f: CallFailure) -> Error {
        match f {
            CallFailure::Failed { status: s, output } if s == status::ERR_EXECUTION_REVERTED => {
                if output.is_empty() {
                    Error::Rpc(RpcError::server("evm: execution reverted"))
                } else {
                    let message = match exec::revert_reason(&output) {
                        Some(reason) => format!("execution reverted: {reason}"),
                        None => "execution reverted".to_string(),
                    };
                    Error::Rpc(
                        RpcError::new(3, message).with_data(format!("0x{}", hex::encode(&output))),
                    )
                }
            }
            CallFailure::Chain(e) => Error::Chain(e),
            other => Error::Rpc(RpcError::server(other.to_string())),
        }
    }
}

/// An account as `chain_getAccount` answers it: `{accType, account}`.
#[derive(Debug, Serialize)]
pub struct AccountJson {
    #[serde(rename = "accType")]
    acc_type: u8,
    account: AccountBody,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct AccountBody {
    nonce: u64,
    balance: String,
    human_readable: bool,
    key: AccountKeyJson,
    #[serde(skip_serializing_if = "Option::is_none")]
    storage_root: Option<String>,
    /// Base64, as the reference's Go `[]byte` gives it.
    #[serde(skip_serializing_if = "Option::is_none")]
    code_hash: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    code_format: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    vm_version: Option<u8>,
}

impl From<&Account> for AccountJson {
    fn from(a: &Account) -> AccountJson {
        let c = a.contract;
        AccountJson {
            acc_type: if c.is_some() { 2 } else { 1 },
            account: AccountBody {
                nonce: a.nonce,
                balance: quantity(&a.balance),
                human_readable: false,
                key: AccountKeyJson::from(&a.key),
                storage_root: c.map(|c| format!("0x{}", hex::encode(c.storage_root))),
                code_hash: c.map(|c| base64(&c.code_hash)),
                code_format: c.map(|c| c.code_format),
                vm_version: c.map(|c| c.vm_version),
            },
        }
    }
}

/// Standard base64 with padding.
fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for k in 0..4 {
            if k <= chunk.len() {
                out.push(T[((n >> (18 - 6 * k)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A storage key as the reference reads it: hex with or without `0x`, an odd length padded
/// on the left, reading stops at the first character that is not hex; right-aligned in 32
/// bytes.
fn storage_key(s: &str) -> [u8; 32] {
    let s = s.strip_prefix("0x").unwrap_or(s);
    let digits: String = s.chars().take_while(|c| c.is_ascii_hexdigit()).collect();
    let digits = if digits.len() % 2 == 1 {
        format!("0{digits}")
    } else {
        digits
    };
    let bytes = hex::decode(&digits).unwrap_or_default();
    let mut out = [0u8; 32];
    let take = bytes.len().min(32);
    out[32 - take..].copy_from_slice(&bytes[bytes.len() - take..]);
    out
}

impl ContractApi {
    pub fn new(chain: Option<Arc<Chain>>) -> ContractApi {
        ContractApi { chain }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    fn args(p: &Params) -> Result<CallArgs> {
        call_args(&p.required::<Value>(0)?, 0)
    }

    /// `chain_call(callArgs, block)`: the message's return data.
    fn call(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let chain = self.chain()?;
        let args = Self::args(p)?;
        let at = block_param(chain, p, 1)?;
        Ok(HexOut(chain.call(&args, &at)?))
    }

    /// `chain_estimateGas(callArgs)`: the least gas it succeeds with, as a quantity.
    fn estimate_gas(&self, _: &Call, p: &Params) -> Result<String> {
        if p.len() > 1 {
            return Err(invalid("too many arguments, want at most 1"));
        }
        let chain = self.chain()?;
        let args = Self::args(p)?;
        Ok(format!("0x{:x}", chain.estimate_gas(&args)?))
    }

    /// `chain_estimateComputationCost(callArgs, block)`: the computation cost it spends,
    /// as a quantity (a failure of the code is no error here).
    fn estimate_computation_cost(&self, _: &Call, p: &Params) -> Result<String> {
        let chain = self.chain()?;
        let args = Self::args(p)?;
        let at = block_param(chain, p, 1)?;
        let gas = match args.gas {
            Some(g) if g > 0 => g,
            _ => crate::chain::call::CALL_GAS_CAP,
        };
        let msg = args.message(gas);
        let (out, cost) = chain.run_message(&at, &msg, exec::cost::ComputationCost::default());
        out.map_err(|e| Error::from(CallFailure::from(e)))?;
        Ok(format!("0x{:x}", cost.total))
    }

    /// `chain_getCode(address, block)`.
    pub(super) fn get_code(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let chain = self.chain()?;
        let address: Address = p.required(0)?;
        let at = block_param(chain, p, 1)?;
        Ok(HexOut(chain.code_at(&address, &at)?))
    }

    /// `chain_getStorageAt(address, key, block)`: always 32 bytes.
    pub(super) fn get_storage_at(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let chain = self.chain()?;
        let address: Address = p.required(0)?;
        let key: String = p.required(1)?;
        let at = block_param(chain, p, 2)?;
        Ok(HexOut(
            chain
                .storage_at(&address, &storage_key(&key), &at)?
                .to_vec(),
        ))
    }

    /// `chain_getProof(address, storageKeys, block)`: as `eth_getProof`.
    fn get_proof(&self, _: &Call, p: &Params) -> Result<super::proof::ProofJson> {
        super::proof::get_proof(self.chain()?, p)
    }

    /// `chain_createAccessList(callArgs, block?)`: as `eth_createAccessList`.
    fn create_access_list(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<super::accesslist::AccessListJson> {
        super::accesslist::create_access_list(self.chain()?, p)
    }

    /// `chain_getAccount(address, block)`: `null` when the account does not exist.
    fn get_account(&self, _: &Call, p: &Params) -> Result<Option<AccountJson>> {
        let chain = self.chain()?;
        let address: Address = p.required(0)?;
        let at = block_param(chain, p, 1)?;
        Ok(chain
            .account_at(&address, &at)?
            .as_ref()
            .map(AccountJson::from))
    }

    /// `chain_isContractAccount(address, block)`: a contract account with code.
    fn is_contract_account(&self, _: &Call, p: &Params) -> Result<bool> {
        let chain = self.chain()?;
        let address: Address = p.required(0)?;
        let at = block_param(chain, p, 1)?;
        Ok(chain
            .account_at(&address, &at)?
            .is_some_and(|a| a.code_hash() != crate::state::EMPTY_CODE_HASH))
    }

    /// `chain_accountCreated(address, block)`: whether the state has the account.
    fn account_created(&self, _: &Call, p: &Params) -> Result<bool> {
        let chain = self.chain()?;
        let address: Address = p.required(0)?;
        let at = block_param(chain, p, 1)?;
        Ok(chain.account_at(&address, &at)?.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_hashes_are_base64_as_the_reference_gives_them() {
        assert_eq!(
            base64(&crate::state::EMPTY_CODE_HASH),
            "xdJGAYb3IzySfn2y3McDwOUAtlPKgic7e/rYBF2FpHA="
        );
        assert_eq!(base64(b"ab"), "YWI=");
        assert_eq!(base64(b"a"), "YQ==");
    }

    #[test]
    fn storage_keys_are_read_leniently() {
        let mut one = [0u8; 32];
        one[31] = 1;
        assert_eq!(storage_key("0x1"), one);
        assert_eq!(storage_key("1"), one);
        assert_eq!(storage_key("position"), [0; 32]);
        assert_eq!(storage_key(&format!("0x{}", "00".repeat(31) + "01")), one);
    }
}
