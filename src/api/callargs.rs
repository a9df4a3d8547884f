//! The call and transaction arguments of the reference's `CallArgs` (`chain_call`,
//! `chain_estimateGas`, `chain_estimateComputationCost`, `debug_traceCall`) and
//! `EthTransactionArgs` (the `eth` namespace's calls, sends and signs; klaytn-contracts.md
//! 4.1), decoded by one decoder as Go's reads them: members matched without regard to case,
//! read in the object's order, the first that does not decode giving the -32602 error with its
//! Go struct-field text (`json: cannot unmarshal hex string without 0x prefix into Go struct
//! field CallArgs.to of type common.Address`); `input` wins over `data`. As a message
//! ([`EthTxArgs::call_args`]): `gasPrice` with `maxFeePerGas` or `maxPriorityFeePerGas`, or a
//! priority fee above the fee cap, is the -32000 error the reference gives; without a base fee
//! the price is `gasPrice`, else `maxFeePerGas`. What a send makes of them is `ethargs`.

use serde_json::Value;

use super::error::{Error, Result};
use super::goparams::Member;
use crate::chain::call::CallArgs;
use crate::crypto::Address;
use crate::rpc::RpcError;
use crate::types::ethereum::AccessTuple;
use crate::types::transaction::U256;

fn server(m: impl Into<String>) -> Error {
    Error::Rpc(RpcError::server(m.into()))
}

/// The call arguments at position `i` (`CallArgs`), as the message they make.
pub fn call_args(v: &Value, i: usize) -> Result<CallArgs> {
    EthTxArgs::decode_as(v, i, "CallArgs")?.call_args()
}

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

impl EthTxArgs {
    /// Parameter `i` as the reference's decoder reads an `EthTransactionArgs`: members
    /// matched without regard to case, read in the object's order, the first that does not
    /// decode giving Go's struct-field text.
    pub fn decode(v: &Value, i: usize) -> Result<EthTxArgs> {
        EthTxArgs::decode_as(v, i, "EthTransactionArgs")
    }

    /// Parameter `i` decoded as the reference's Go struct `strukt`: `EthTransactionArgs`,
    /// or `CallArgs`, which has no `nonce` (a member of that name is not read).
    fn decode_as(v: &Value, i: usize, strukt: &str) -> Result<EthTxArgs> {
        let with_nonce = strukt == "EthTransactionArgs";
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
                "nonce" if with_nonce => "nonce",
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
                "accessList" => {
                    a.access_list = Some(super::txmembers::access_list_in(strukt, value)?)
                }
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
            // Left out of calls and estimates, as the reference's EthDoCall leaves it.
            access_list: Vec::new(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn call_args_as_go_decodes_them() {
        let a = call_args(
            &json!({"from": "0x0000000000000000000000000000000000000001", "TO": "0x0000000000000000000000000000000000000002",
                    "gas": "0x5208", "gasPrice": "0x5d21dba00", "value": "0x1",
                    "data": "0x01", "input": "0x02"}),
            0,
        )
        .unwrap();
        assert_eq!(a.from.unwrap().0[19], 1);
        assert_eq!(a.to.unwrap().0[19], 2);
        assert_eq!(a.gas, Some(21_000));
        assert_eq!(a.gas_price.unwrap()[27..], [0x05, 0xd2, 0x1d, 0xba, 0x00]);
        assert_eq!(a.value.unwrap()[31], 1);
        assert_eq!(a.input, vec![2], "input wins over data");
        let e = |v: Value| match call_args(&v, 0).unwrap_err() {
            Error::Rpc(r) => (r.code, r.message),
            other => panic!("{other}"),
        };
        assert_eq!(
            e(json!({"from": 5})).1,
            "invalid argument 0: json: cannot unmarshal non-string into Go struct field CallArgs.from of type common.Address"
        );
        assert_eq!(
            e(json!({"to": "abcd"})).1,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.to of type common.Address"
        );
        assert_eq!(
            e(json!({"to": "0xabcd"})).1,
            "invalid argument 0: hex string has length 4, want 40 for common.Address"
        );
        assert_eq!(
            e(json!({"gas": "txGas"})).1,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.gas of type hexutil.Uint64"
        );
        assert_eq!(
            e(json!({"value": "txValue"})).1,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.value of type *hexutil.Big"
        );
        assert_eq!(
            e(json!({"data": "abcd"})).1,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.data of type hexutil.Bytes"
        );
        assert_eq!(
            e(json!({"gasPrice": "0x1", "maxFeePerGas": "0x1"})),
            (
                -32000,
                "both gasPrice and (maxFeePerGas or maxPriorityFeePerGas) specified".into()
            )
        );
        assert_eq!(
            e(json!(1)).1,
            "invalid argument 0: json: cannot unmarshal number into Go value of type api.CallArgs"
        );
    }

    /// (Was api/contract.rs's test.)
    #[test]
    fn call_args_take_input_over_data_and_name_bad_members() {
        let a = call_args(&json!({"to": "0x1111111111111111111111111111111111111111", "data": "0x01", "input": "0x02"}), 0).unwrap();
        assert_eq!(a.input, vec![2]);
        let e = call_args(&json!({"to": "abcd"}), 0).unwrap_err();
        assert_eq!(
            RpcError::from(e).message,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.to of type common.Address"
        );
        let e = call_args(&json!({"from": 5}), 0).unwrap_err();
        assert_eq!(
            RpcError::from(e).message,
            "invalid argument 0: json: cannot unmarshal non-string into Go struct field CallArgs.from of type common.Address"
        );
        let e = call_args(&json!({"data": "abcd"}), 0).unwrap_err();
        assert_eq!(
            RpcError::from(e).message,
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.data of type hexutil.Bytes"
        );
    }

    /// Where api/contract.rs's copy answered differently (chain_call and the estimates),
    /// the reference's CallArgs as api/trace.rs had it.
    #[test]
    fn call_args_in_the_corners() {
        let message = |v: Value| RpcError::from(call_args(&v, 0).unwrap_err()).message;
        assert_eq!(
            message(json!(null)),
            "invalid argument 0: json: cannot unmarshal null into Go value of type api.CallArgs"
        );
        assert_eq!(
            message(json!({"gas": "0x01"})),
            "invalid argument 0: json: cannot unmarshal hex number with leading zero digits into Go struct field CallArgs.gas of type hexutil.Uint64"
        );
        // The first member in the object's order that does not decode is the error.
        assert_eq!(
            message(json!({"value": "1", "gas": "1"})),
            "invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go struct field CallArgs.value of type *hexutil.Big"
        );
        let a = call_args(
            &json!({"TO": "0X0000000000000000000000000000000000000002", "data": "",
                    "maxFeePerGas": "0x7", "maxPriorityFeePerGas": "0x1"}),
            0,
        )
        .unwrap();
        assert_eq!(
            a.to,
            Some(Address({
                let mut b = [0; 20];
                b[19] = 2;
                b
            }))
        );
        assert!(a.input.is_empty(), "an empty string is empty bytes");
        assert_eq!(
            a.gas_price.unwrap()[31],
            7,
            "without gasPrice, maxFeePerGas"
        );
        assert_eq!(
            RpcError::from(
                call_args(
                    &json!({"maxFeePerGas": "0x1", "maxPriorityFeePerGas": "0x2"}),
                    0
                )
                .unwrap_err()
            ),
            RpcError::server("MaxPriorityFeePerGas is greater than MaxFeePerGas")
        );
    }

    /// One decoder, two structs: `CallArgs` has no nonce, `EthTransactionArgs` does; each
    /// error names its struct.
    #[test]
    fn the_two_structs_differ_only_in_the_nonce_and_their_names() {
        assert!(call_args(&json!({"nonce": 5}), 0).is_ok());
        let e = EthTxArgs::decode(&json!({"nonce": 5}), 0).unwrap_err();
        assert_eq!(
            RpcError::from(e).message,
            "invalid argument 0: json: cannot unmarshal non-string into Go struct field EthTransactionArgs.nonce of type hexutil.Uint64"
        );
        let a = EthTxArgs::decode(&json!({"nonce": "0x7", "gas": "0x5208"}), 0).unwrap();
        assert_eq!((a.nonce, a.gas), (Some(7), Some(21_000)));
        let e = EthTxArgs::decode(&json!({"to": "abcd"}), 1).unwrap_err();
        assert_eq!(
            RpcError::from(e).message,
            "invalid argument 1: json: cannot unmarshal hex string without 0x prefix into Go struct field EthTransactionArgs.to of type common.Address"
        );
    }
}
