//! Fee suggestions and history, as the reference's gas price oracle gives them on a chain
//! without its Magma fork (a fixed unit price, no dynamic base fee): `chain_` and `eth_`
//! `maxPriorityFeePerGas`, `feeHistory`, `upperBoundGasPrice` and `lowerBoundGasPrice`.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use super::error::{Error, Result};
use super::goparams::{block_number, BlockTag};
use super::method::{p, Method, Namespace, ParamKind as K};
use crate::chain::Chain;
use crate::method;
use crate::rpc::{Call, Params, RpcError};

/// The most blocks one `feeHistory` covers (the reference's `MaxHeaderHistory` and
/// `MaxBlockHistory`).
pub const MAX_HISTORY: u64 = 1024;

/// The `chain` namespace's fee methods.
pub struct FeeApi {
    chain: Option<Arc<Chain>>,
}

impl Namespace for FeeApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_maxPriorityFeePerGas",
            [],
            "The tip an EIP-1559 transaction should carry (the unit price: there is no dynamic base fee)",
            "string: a 0x quantity",
            Self::max_priority_fee_per_gas
        ),
        method!(
            "chain_feeHistory",
            [
                p("blockCount", K::Any),
                p("lastBlock", K::String),
                p("rewardPercentiles", K::Any)
            ],
            "Base fees, gas used ratios and tips at percentiles of up to 1024 blocks ending at lastBlock",
            "object: oldestBlock, reward, baseFeePerGas, gasUsedRatio",
            Self::fee_history
        ),
        method!(
            "chain_upperBoundGasPrice",
            [],
            "The highest gas price the chain accepts (the unit price)",
            "string: a 0x quantity",
            Self::bound
        ),
        method!(
            "chain_lowerBoundGasPrice",
            [],
            "The lowest gas price the chain accepts (the unit price)",
            "string: a 0x quantity",
            Self::bound
        ),
    ];
}

/// `feeHistory`'s answer (the reference's `FeeHistoryResult`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FeeHistoryJson {
    oldest_block: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    reward: Option<Vec<Vec<String>>>,
    #[serde(rename = "baseFeePerGas", skip_serializing_if = "Option::is_none")]
    base_fee: Option<Vec<String>>,
    gas_used_ratio: Option<Vec<f64>>,
}

fn q(n: u64) -> String {
    format!("0x{n:x}")
}

fn server(m: String) -> Error {
    Error::Rpc(RpcError::server(m))
}

/// `blockCount` as the reference's `DecimalOrHex` reads it: a decimal (a JSON number or a
/// string of digits), else a 0x hex quantity, with hexutil's texts.
fn decimal_or_hex(v: &Value) -> std::result::Result<u64, String> {
    let raw = match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let input = raw.trim();
    if let Ok(n) = input.parse::<u64>() {
        return Ok(n);
    }
    let Some(digits) = input
        .strip_prefix("0x")
        .or_else(|| input.strip_prefix("0X"))
    else {
        return Err(if input.is_empty() {
            "empty hex string".into()
        } else {
            "hex string without 0x prefix".into()
        });
    };
    if digits.is_empty() {
        return Err("hex string \"0x\"".into());
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err("hex number with leading zero digits".into());
    }
    if digits.len() > 16 {
        return Err("hex number > 64 bits".into());
    }
    u64::from_str_radix(digits, 16).map_err(|_| "invalid hex string".into())
}

/// Go's `%f`: six decimals.
fn go_f(x: f64) -> String {
    format!("{x:.6}")
}

/// The fee history of the chain (the reference's `Oracle.FeeHistory` before Magma).
pub fn fee_history(chain: &Chain, p: &Params) -> Result<FeeHistoryJson> {
    let invalid = |i: usize, m: String| {
        Error::Rpc(RpcError::invalid_params(format!(
            "invalid argument {i}: {m}"
        )))
    };
    let count = match p.raw(0) {
        None => return Err(invalid(0, "missing value for required argument 0".into())),
        Some(v) => decimal_or_hex(v).map_err(|m| invalid(0, m))?,
    };
    let last = match p.raw(1) {
        None => {
            return Err(Error::Rpc(RpcError::invalid_params(
                "missing value for required argument 1",
            )))
        }
        Some(v) => block_number(v).map_err(|m| invalid(1, m))?,
    };
    let percentiles: Vec<f64> = match p.raw(2) {
        None => {
            return Err(Error::Rpc(RpcError::invalid_params(
                "missing value for required argument 2",
            )))
        }
        Some(Value::Null) => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_f64().ok_or_else(|| {
                    invalid(
                        2,
                        format!(
                            "json: cannot unmarshal {} into Go value of type float64",
                            crate::rpc::json_type(v)
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?,
        Some(other) => {
            return Err(invalid(
                2,
                format!(
                    "json: cannot unmarshal {} into Go value of type []float64",
                    crate::rpc::json_type(other)
                ),
            ))
        }
    };
    p.at_most(3)?;
    let empty = FeeHistoryJson {
        oldest_block: q(0),
        reward: None,
        base_fee: None,
        gas_used_ratio: None,
    };
    if count < 1 {
        return Ok(empty);
    }
    let mut blocks = count.min(MAX_HISTORY);
    for (i, &x) in percentiles.iter().enumerate() {
        if !(0.0..=100.0).contains(&x) {
            return Err(server(format!("invalid reward percentile: {}", go_f(x))));
        }
        if i > 0 && x < percentiles[i - 1] {
            return Err(server(format!(
                "invalid reward percentile: #{}:{} > #{}:{}",
                i - 1,
                go_f(percentiles[i - 1]),
                i,
                go_f(x)
            )));
        }
    }
    let head = chain.head_number();
    let last = match last {
        BlockTag::Pending => {
            blocks -= 1;
            if blocks == 0 {
                return Ok(empty);
            }
            head
        }
        BlockTag::Latest => head,
        tag => {
            let n = tag.resolve(head);
            if n > head {
                return Err(server(format!(
                    "request beyond head block: requested {n}, head {head}"
                )));
            }
            n
        }
    };
    blocks = blocks.min(last + 1);
    let oldest = last + 1 - blocks;
    let unit = crate::chain::state::quantity(&crate::state::from_u64(chain.unit_price()));
    let mut reward = Vec::new();
    let mut base_fee = Vec::new();
    let mut ratio = Vec::new();
    // A block without transactions has the empty list's root: headers are all this reads (no
    // transaction decoded, no sender recovered, for up to 1,024 blocks).
    let no_transactions = crate::types::block::DeriveSha::Original.root(&[]);
    for n in oldest..=last {
        let (_, header) = chain
            .header_at(n)?
            .ok_or(super::logs::Missing::BlockNumber(n))?;
        base_fee.push(
            header
                .base_fee
                .as_ref()
                .map_or_else(|| q(0), crate::chain::state::quantity),
        );
        ratio.push(header.gas_used as f64 / super::ethjson::UPPER_GAS_LIMIT as f64);
        if !percentiles.is_empty() {
            // Before Magma every transaction's tip is the unit price.
            let tip = if header.transactions_root == no_transactions {
                q(0)
            } else {
                unit.clone()
            };
            reward.push(vec![tip; percentiles.len()]);
        }
    }
    // The base fee of the block after the last: zero without Magma.
    base_fee.push(q(0));
    Ok(FeeHistoryJson {
        oldest_block: q(oldest),
        reward: (!percentiles.is_empty()).then_some(reward),
        base_fee: Some(base_fee),
        gas_used_ratio: Some(ratio),
    })
}

impl FeeApi {
    pub fn new(chain: Option<Arc<Chain>>) -> FeeApi {
        FeeApi { chain }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// `chain_maxPriorityFeePerGas`: the unit price (before Magma the tip is the price).
    pub(super) fn max_priority_fee_per_gas(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(q(self.chain()?.unit_price()))
    }

    /// `chain_feeHistory(blockCount, lastBlock, rewardPercentiles)`.
    pub(super) fn fee_history(&self, _: &Call, p: &Params) -> Result<FeeHistoryJson> {
        fee_history(self.chain()?, p)
    }

    /// `chain_upperBoundGasPrice`, `chain_lowerBoundGasPrice`: the unit price.
    pub(super) fn bound(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(q(self.chain()?.unit_price()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_counts_read_as_decimal_or_hex() {
        assert_eq!(decimal_or_hex(&json!(3)), Ok(3));
        assert_eq!(decimal_or_hex(&json!("12")), Ok(12));
        assert_eq!(decimal_or_hex(&json!("0x10")), Ok(16));
        assert_eq!(
            decimal_or_hex(&json!(-1)),
            Err("hex string without 0x prefix".into())
        );
        assert_eq!(
            decimal_or_hex(&json!("0x")),
            Err("hex string \"0x\"".into())
        );
        assert_eq!(
            decimal_or_hex(&json!("0x01")),
            Err("hex number with leading zero digits".into())
        );
    }

    #[test]
    fn percentiles_print_as_go_does() {
        assert_eq!(go_f(101.0), "101.000000");
        assert_eq!(go_f(-0.5), "-0.500000");
    }
}
