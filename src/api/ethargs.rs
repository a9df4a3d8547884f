//! The `eth` namespace's transaction arguments (the reference's `EthTransactionArgs`): decoded
//! with Go's texts, their defaults filled as the reference fills them (`setDefaults`), and
//! made into a legacy, EIP-2930 or EIP-1559 transaction (`toTransaction`).
//!
//! The price rule on this chain (no Magma fork, so no dynamic base fee): a legacy or
//! access-list transaction carries the unit price as its gas price; an EIP-1559 one carries
//! the unit price as both `maxFeePerGas` and `maxPriorityFeePerGas`. Left out, the price is
//! EIP-1559 with both caps the unit price.

use serde_json::Value;

use super::error::{Error, Result};
use super::goparams::Member;
use crate::chain::call::CallArgs;
use crate::chain::Chain;
use crate::crypto::Address;
use crate::rpc::RpcError;
use crate::types::ethereum::{AccessTuple, Ethereum};
use crate::types::transaction::{Legacy, Transaction, U256};

/// The decoded members of an `EthTransactionArgs` object (absent or `null`: `None`).
#[derive(Debug, Clone, Default)]
pub struct EthTxArgs {
    pub from: Option<Address>,
    pub to: Option<Address>,
    pub gas: Option<u64>,
    pub gas_price: Option<U256>,
    pub max_fee_per_gas: Option<U256>,
    pub max_priority_fee_per_gas: Option<U256>,
    pub value: Option<U256>,
    pub nonce: Option<u64>,
    pub data: Option<Vec<u8>>,
    pub input: Option<Vec<u8>>,
    pub access_list: Option<Vec<AccessTuple>>,
    pub chain_id: Option<U256>,
}

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
    /// Parameter `i` as the reference's decoder reads an `EthTransactionArgs`: members
    /// matched without regard to case, the first that does not decode giving Go's
    /// struct-field text.
    pub fn decode(v: &Value, i: usize) -> Result<EthTxArgs> {
        let strukt = "EthTransactionArgs";
        let invalid = |m: String| {
            Error::Rpc(RpcError::invalid_params(format!(
                "invalid argument {i}: {m}"
            )))
        };
        let Value::Object(map) = v else {
            return Err(invalid(format!(
                "json: cannot unmarshal {} into Go value of type api.{strukt}",
                crate::rpc::json_type(v)
            )));
        };
        let mut a = EthTxArgs::default();
        for (key, value) in map {
            if value.is_null() {
                continue;
            }
            let name = match key.to_ascii_lowercase().as_str() {
                "from" => "from",
                "to" => "to",
                "gas" => "gas",
                "gasprice" => "gasPrice",
                "maxfeepergas" => "maxFeePerGas",
                "maxpriorityfeepergas" => "maxPriorityFeePerGas",
                "value" => "value",
                "nonce" => "nonce",
                "data" => "data",
                "input" => "input",
                "accesslist" => "accessList",
                "chainid" => "chainId",
                _ => continue,
            };
            let m = Member { strukt, name };
            match name {
                "from" => a.from = Some(m.address(value).map_err(invalid)?),
                "to" => a.to = Some(m.address(value).map_err(invalid)?),
                "gas" => a.gas = Some(m.uint64(value).map_err(invalid)?),
                "nonce" => a.nonce = Some(m.uint64(value).map_err(invalid)?),
                "data" => a.data = Some(m.bytes(value).map_err(invalid)?),
                "input" => a.input = Some(m.bytes(value).map_err(invalid)?),
                "accessList" => a.access_list = Some(super::txmembers::access_list(value)?),
                "gasPrice" => a.gas_price = Some(m.big(value).map_err(invalid)?),
                "maxFeePerGas" => a.max_fee_per_gas = Some(m.big(value).map_err(invalid)?),
                "maxPriorityFeePerGas" => {
                    a.max_priority_fee_per_gas = Some(m.big(value).map_err(invalid)?)
                }
                "value" => a.value = Some(m.big(value).map_err(invalid)?),
                _ => a.chain_id = Some(m.big(value).map_err(invalid)?),
            }
        }
        Ok(a)
    }

    /// The sender: the zero address when left out.
    pub fn from(&self) -> Address {
        self.from.unwrap_or(Address([0; 20]))
    }

    /// The call data: `input` preferred to `data`.
    pub fn data(&self) -> &[u8] {
        self.input
            .as_deref()
            .or(self.data.as_deref())
            .unwrap_or_default()
    }

    /// The message `eth_call` and `eth_estimateGas` run (`ToMessage` before Magma: the price
    /// is `gasPrice`, else `maxFeePerGas`).
    pub fn call_args(&self) -> Result<CallArgs> {
        if self.gas_price.is_some()
            && (self.max_fee_per_gas.is_some() || self.max_priority_fee_per_gas.is_some())
        {
            return Err(server(
                "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified",
            ));
        }
        if let (Some(fee), Some(tip)) = (self.max_fee_per_gas, self.max_priority_fee_per_gas) {
            if fee < tip {
                return Err(server("MaxPriorityFeePerGas is greater than MaxFeePerGas"));
            }
        }
        Ok(CallArgs {
            from: self.from,
            to: self.to,
            gas: self.gas,
            gas_price: self.gas_price.or(self.max_fee_per_gas),
            value: self.value,
            input: self.data().to_vec(),
        })
    }

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
