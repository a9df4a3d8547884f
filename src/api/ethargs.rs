//! The `eth` namespace's transaction arguments (the reference's `EthTransactionArgs`): decoded
//! with Go's texts, their defaults filled as the reference fills them (`setDefaults`), and
//! made into a legacy, EIP-2930 or EIP-1559 transaction (`toTransaction`).
//!
//! The price rule on this chain (no Magma fork, so no dynamic base fee): a legacy or
//! access-list transaction carries the unit price as its gas price; an EIP-1559 one carries
//! the unit price as both `maxFeePerGas` and `maxPriorityFeePerGas`. Left out, the price is
//! EIP-1559 with both caps the unit price.

use serde_json::Value;

use super::callargs::EthTxArgs;
use super::error::{Error, Result};
use super::goparams::Member;
use crate::chain::Chain;
use crate::crypto::Address;
use crate::rpc::RpcError;
use crate::types::ethereum::Ethereum;
use crate::types::transaction::{Legacy, Transaction, U256};

fn server(m: impl Into<String>) -> Error {
    Error::Rpc(RpcError::server(m.into()))
}

/// A 256-bit word as hexutil prints a `*big.Int` (`0x` + digits without leading zeros).
fn hex_big(v: &U256) -> String {
    crate::chain::state::quantity(v)
}

fn word(n: u64) -> U256 {
    crate::state::from_u64(n)
}

impl EthTxArgs {
    /// The reference's `setDefaults`: the price (EIP-1559 at the unit price unless a gas
    /// price is given), value 0, the pool's next nonce when `fill_nonce`, the gas estimated,
    /// the chain id; with its checks and texts.
    pub fn set_defaults(&mut self, chain: &Chain, fill_nonce: bool) -> Result<()> {
        if self.gas_price.is_some()
            && (self.max_fee_per_gas.is_some() || self.max_priority_fee_per_gas.is_some())
        {
            return Err(server(
                "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified",
            ));
        }
        let unit = word(chain.unit_price());
        match (self.max_priority_fee_per_gas, self.max_fee_per_gas) {
            (Some(tip), Some(fee)) => {
                if fee < tip {
                    return Err(server(format!(
                        "maxFeePerGas ({}) < maxPriorityFeePerGas ({})",
                        hex_big(&fee),
                        hex_big(&tip)
                    )));
                }
            }
            _ if crate::chain::genesis::FORKS.eth_tx_type && self.gas_price.is_none() => {
                let tip = *self.max_priority_fee_per_gas.get_or_insert(unit);
                // Before Magma the fee cap defaults to the tip plus twice a zero base fee.
                let fee = *self.max_fee_per_gas.get_or_insert(tip);
                if tip != unit || fee != unit {
                    return Err(server(format!(
                        "only {} is allowed to be used as maxFeePerGas and maxPriorityPerGas",
                        hex_big(&unit).trim_start_matches("0x")
                    )));
                }
            }
            _ => {
                if self.max_fee_per_gas.is_some() || self.max_priority_fee_per_gas.is_some() {
                    return Err(server(
                        "maxFeePerGas or maxPriorityFeePerGas specified but london is not active yet",
                    ));
                }
                self.gas_price.get_or_insert(unit);
            }
        }
        self.value.get_or_insert([0; 32]);
        if fill_nonce && self.nonce.is_none() {
            self.nonce = Some(chain.pending_nonce(&self.from())?);
        }
        if let (Some(d), Some(i)) = (&self.data, &self.input) {
            if d != i {
                return Err(server(
                    r#"both "data" and "input" are set and not equal. Please use "input" to pass transaction call data"#,
                ));
            }
        }
        if self.to.is_none() && self.data().is_empty() {
            return Err(server("contract creation without any data provided"));
        }
        if self.gas.is_none() {
            let mut probe = self.call_args()?;
            probe.gas = None;
            let used = chain.estimate_gas(&probe)?;
            self.gas = Some(used);
        }
        self.chain_id.get_or_insert(word(chain.chain_id()));
        Ok(())
    }

    /// The transaction these (defaulted) arguments make, unsigned: EIP-1559 with a fee cap,
    /// else EIP-2930 with an access list, else legacy.
    pub fn to_transaction(&self) -> Result<Transaction> {
        let nonce = self.nonce.unwrap_or(0);
        let gas = self.gas.unwrap_or(0);
        let value = self.value.unwrap_or([0; 32]);
        let input = self.data().to_vec();
        let chain_id = || -> Result<u64> {
            let id = self.chain_id.unwrap_or([0; 32]);
            if id[..24].iter().any(|&b| b != 0) {
                return Err(server("chain id too large"));
            }
            Ok(u64::from_be_bytes(id[24..].try_into().expect("8 bytes")))
        };
        if let Some(fee) = self.max_fee_per_gas {
            return Ok(Transaction::Ethereum(Ethereum {
                dynamic: true,
                chain_id: chain_id()?,
                nonce,
                gas_tip_cap: self.max_priority_fee_per_gas.unwrap_or([0; 32]),
                gas_fee_cap: fee,
                gas,
                to: self.to,
                value,
                input,
                access_list: self.access_list.clone().unwrap_or_default(),
                signature: None,
            }));
        }
        let price = self.gas_price.unwrap_or([0; 32]);
        if let Some(list) = &self.access_list {
            return Ok(Transaction::Ethereum(Ethereum {
                dynamic: false,
                chain_id: chain_id()?,
                nonce,
                gas_tip_cap: price,
                gas_fee_cap: price,
                gas,
                to: self.to,
                value,
                input,
                access_list: list.clone(),
                signature: None,
            }));
        }
        Ok(Transaction::Legacy(Legacy {
            nonce,
            gas_price: price,
            gas,
            to: self.to,
            value,
            input,
            signature: None,
        }))
    }
}

/// What `eth_signTransaction` and `eth_fillTransaction` answer: the raw bytes in Ethereum's
/// own encoding (an EIP-2930 or EIP-1559 transaction without the reference's 0x78 envelope
/// byte) and the fields of the transaction as it was before signing (the reference's).
pub fn signed_json(signed: &Transaction, unsigned: &Transaction) -> Value {
    let raw = match signed {
        Transaction::Ethereum(e) => e.encode_ethereum(),
        other => other.encode(),
    };
    serde_json::json!({
        "raw": format!("0x{}", hex::encode(raw)),
        "tx": super::ethjson::tx_fields(unsigned),
    })
}

/// `eth_call`'s state overrides at parameter `i` (the reference's `EthStateOverride`: an
/// object from address to `{nonce, code, balance, state, stateDiff}`), with Go's texts; an
/// account with both `state` and `stateDiff` is the reference's error.
pub fn state_overrides(
    v: &Value,
    i: usize,
) -> Result<Vec<(Address, crate::exec::AccountOverride)>> {
    let invalid = |m: String| {
        Error::Rpc(RpcError::invalid_params(format!(
            "invalid argument {i}: {m}"
        )))
    };
    let Value::Object(accounts) = v else {
        return Err(invalid(format!(
            "json: cannot unmarshal {} into Go value of type api.EthStateOverride",
            crate::rpc::json_type(v)
        )));
    };
    let mut out = Vec::new();
    for (key, fields) in accounts {
        let address = super::goparams::fixed_value::<20>(
            &Value::String(key.clone()),
            "Go value of type common.Address",
            "common.Address",
        )
        .map(Address)
        .map_err(invalid)?;
        let Value::Object(fields) = fields else {
            return Err(invalid(format!(
                "json: cannot unmarshal {} into Go value of type api.EthOverrideAccount",
                crate::rpc::json_type(fields)
            )));
        };
        let mut o = crate::exec::AccountOverride::default();
        for (name, value) in fields {
            if value.is_null() {
                continue;
            }
            let m = Member {
                strukt: "EthOverrideAccount",
                name,
            };
            match name.to_ascii_lowercase().as_str() {
                "nonce" => o.nonce = Some(m.uint64(value).map_err(invalid)?),
                "code" => o.code = Some(m.bytes(value).map_err(invalid)?),
                "balance" => o.balance = Some(m.big(value).map_err(invalid)?),
                "state" => o.state = Some(slots(value, &m).map_err(invalid)?),
                "statediff" => o.state_diff = Some(slots(value, &m).map_err(invalid)?),
                _ => {}
            }
        }
        if o.state.is_some() && o.state_diff.is_some() {
            return Err(server(format!(
                "account {} has both 'state' and 'stateDiff'",
                super::txpool::checksummed(&address)
            )));
        }
        out.push((address, o));
    }
    Ok(out)
}

/// A `map[common.Hash]common.Hash` member: slot to value.
fn slots(v: &Value, m: &Member) -> std::result::Result<Vec<(U256, U256)>, String> {
    let ty = "map[common.Hash]common.Hash";
    let Value::Object(map) = v else {
        return Err(super::goparams::field_error(
            m.strukt,
            m.name,
            crate::rpc::json_type(v),
            ty,
        ));
    };
    let hash = |v: &Value| {
        super::goparams::fixed_value::<32>(v, "Go value of type common.Hash", "common.Hash")
    };
    map.iter()
        .map(|(k, v)| Ok((hash(&Value::String(k.clone()))?, hash(v)?)))
        .collect()
}
