//! `debug`: the first of the chain's debugging methods (the rest come with the chain
//! administration issue).

use std::sync::Arc;

use super::error::{Error, Result};
use super::method::{p, Method, Namespace, ParamKind as K};
use crate::chain::Chain;
use crate::method;
use crate::rpc::{Call, Params};

/// The `debug` namespace.
pub struct DebugApi {
    chain: Option<Arc<Chain>>,
}

impl Namespace for DebugApi {
    const MODULE: &'static str = "debug";
    const METHODS: &'static [Method<Self>] = &[method!(
        "debug_getBlockRlp",
        [p("block", K::Any)],
        "The RLP of a block (by number or hash), as hex without 0x",
        Self::get_block_rlp
    )];
}

impl DebugApi {
    pub fn new(chain: Option<Arc<Chain>>) -> DebugApi {
        DebugApi { chain }
    }

    /// `debug_getBlockRlp(number | hash)`: `RLP([header, txList])` as hex without `0x`
    /// (reference 10.7). A block the chain lacks is an error.
    fn get_block_rlp(&self, _: &Call, p: &Params) -> Result<String> {
        let chain = self.chain.as_deref().ok_or(Error::NoChain)?;
        let arg: serde_json::Value = p.required(0)?;
        let bad = || {
            Error::Rpc(crate::rpc::RpcError::invalid_params(
                "invalid argument 0: a block number or a 32-byte block hash",
            ))
        };
        let block = match &arg {
            serde_json::Value::Number(n) => {
                chain.block_by_number(Some(n.as_u64().ok_or_else(bad)?))?
            }
            serde_json::Value::String(s) => {
                let hex = s.strip_prefix("0x").ok_or_else(bad)?;
                if hex.len() == 64 {
                    let h: [u8; 32] = hex::decode(hex)
                        .map_err(|_| bad())?
                        .try_into()
                        .map_err(|_| bad())?;
                    chain.block_by_hash(&h)?
                } else {
                    let n = u64::from_str_radix(hex, 16).map_err(|_| bad())?;
                    chain.block_by_number(Some(n))?
                }
            }
            _ => return Err(bad()),
        };
        let block = block.ok_or_else(|| {
            Error::Rpc(crate::rpc::RpcError::server(format!(
                "block {arg} not found"
            )))
        })?;
        let b = crate::types::block::Block {
            header: block.header,
            transactions: block.transactions.into_iter().map(|(t, _)| t).collect(),
        };
        Ok(hex::encode(b.encode()))
    }
}
