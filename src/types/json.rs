//! The RPC JSON of transactions and receipts (reference 11.1): the reference emits Go maps,
//! so keys come in alphabetical order, which the field order of these types follows.

use serde::Serialize;

use serde_json::{Map, Value};

use super::transaction::{AccessTuple, Base, FeeMode, Native, Signature, Transaction};
use crate::chain::state::quantity;
use crate::crypto::Address;

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn q(n: u64) -> String {
    format!("0x{n:x}")
}

/// One signature with the reference's upper-case keys.
#[derive(Debug, Serialize, PartialEq, Eq)]
pub struct SignatureJson {
    #[serde(rename = "V")]
    pub v: String,
    #[serde(rename = "R")]
    pub r: String,
    #[serde(rename = "S")]
    pub s: String,
}

impl From<&Signature> for SignatureJson {
    fn from(s: &Signature) -> SignatureJson {
        SignatureJson {
            v: q(s.v),
            r: quantity(&s.r),
            s: quantity(&s.s),
        }
    }
}

/// Where a transaction is: in a block, or pending (zero hash, number and index).
#[derive(Debug, Clone, Copy)]
pub struct Location {
    pub block_hash: [u8; 32],
    pub block_number: u64,
    pub index: u64,
}

impl Location {
    pub const PENDING: Location = Location {
        block_hash: [0; 32],
        block_number: 0,
        index: 0,
    };
}

/// A transaction as `chain_getTransactionByHash` answers it: the members of its type (the
/// reference's `MakeRPCOutput`) and the location ones, in Go's map order (sorted).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_list: Option<Value>,
    pub block_hash: String,
    pub block_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_format: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_payer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_payer_signatures: Option<Vec<SignatureJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_ratio: Option<String>,
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_readable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(rename = "inputJSON", skip_serializing_if = "Option::is_none")]
    pub input_json: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_priority_fee_per_gas: Option<String>,
    pub nonce: String,
    pub sender_tx_hash: String,
    pub signatures: Vec<SignatureJson>,
    /// `null` for a contract creation; absent for the types without a recipient.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Option<String>>,
    pub transaction_index: String,
    #[serde(rename = "type")]
    pub type_name: &'static str,
    pub type_int: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// A log as receipts, `chain_getLogs` and filters give it (the reference's struct order).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct LogJson {
    pub address: String,
    pub topics: Vec<String>,
    pub data: String,
    pub block_number: String,
    pub transaction_hash: String,
    pub transaction_index: String,
    pub block_hash: String,
    pub log_index: String,
    pub removed: bool,
}

impl LogJson {
    /// `log`, the `log_index`th of its block, emitted by the transaction `tx_hash` at `at`.
    pub fn new(
        log: &super::receipt::Log,
        at: Location,
        tx_hash: &[u8; 32],
        log_index: u64,
    ) -> LogJson {
        LogJson {
            address: hex0x(&log.address.0),
            topics: log.topics.iter().map(|t| hex0x(t)).collect(),
            data: hex0x(&log.data),
            block_number: q(at.block_number),
            transaction_hash: hex0x(tx_hash),
            transaction_index: q(at.index),
            block_hash: hex0x(&at.block_hash),
            log_index: q(log_index),
            removed: false,
        }
    }
}

/// The fields a receipt shares with the transaction object, and its own (reference 11.1:
/// `hash` renamed `transactionHash`; `status`, `txError` on failure, `logsBloom`, `gasUsed`,
/// `effectiveGasPrice`, `logs`, `contractAddress`).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub access_list: Option<Value>,
    pub block_hash: String,
    pub block_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chain_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_format: Option<String>,
    pub contract_address: Option<String>,
    pub effective_gas_price: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_payer: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_payer_signatures: Option<Vec<SignatureJson>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fee_ratio: Option<String>,
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub gas_used: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_readable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(rename = "inputJSON", skip_serializing_if = "Option::is_none")]
    pub input_json: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub logs: Vec<LogJson>,
    pub logs_bloom: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_fee_per_gas: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_priority_fee_per_gas: Option<String>,
    pub nonce: String,
    pub sender_tx_hash: String,
    pub signatures: Vec<SignatureJson>,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Option<String>>,
    pub transaction_hash: String,
    pub transaction_index: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_error: Option<String>,
    #[serde(rename = "type")]
    pub type_name: &'static str,
    pub type_int: u16,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl TransactionJson {
    /// The object for `tx` sent by `from`, at `at`.
    pub fn new(tx: &Transaction, from: Address, at: Location) -> TransactionJson {
        let hash = hex0x(&tx.hash());
        let sigs = |v: &[Signature]| v.iter().map(SignatureJson::from).collect::<Vec<_>>();
        let mut out = TransactionJson {
            access_list: None,
            block_hash: hex0x(&at.block_hash),
            block_number: q(at.block_number),
            chain_id: None,
            code_format: None,
            fee_payer: None,
            fee_payer_signatures: None,
            fee_ratio: None,
            from: hex0x(&from.0),
            gas: q(tx.gas()),
            gas_price: quantity(&tx.gas_price()),
            sender_tx_hash: hex0x(&tx.sender_tx_hash()),
            hash,
            human_readable: None,
            input: None,
            input_json: None,
            key: None,
            max_fee_per_gas: None,
            max_priority_fee_per_gas: None,
            nonce: q(tx.nonce()),
            signatures: sigs(&tx.signatures()),
            to: None,
            transaction_index: q(at.index),
            type_name: tx.type_name(),
            type_int: tx.type_code(),
            value: None,
        };
        match tx {
            Transaction::Legacy(t) => {
                out.input = Some(hex0x(&t.input));
                out.to = Some(t.to.map(|a| hex0x(&a.0)));
                out.value = Some(quantity(&t.value));
            }
            Transaction::Native(t) => {
                let m = members(t);
                if m.to {
                    out.to = Some(t.to.map(|a| hex0x(&a.0)));
                }
                if m.value {
                    out.value = Some(quantity(&t.value));
                }
                if m.input {
                    out.input = Some(hex0x(&t.input));
                }
                if t.base == Base::ChainDataAnchoring {
                    out.input_json = Some(super::anchoring::input_json(&t.input));
                }
                out.key = t.key.as_ref().map(|k| hex0x(&k.encode()));
                if t.base == Base::SmartContractDeploy {
                    out.human_readable = Some(t.human_readable);
                    out.code_format = Some(q(u64::from(t.code_format)));
                }
                if t.is_delegated() {
                    out.fee_payer = Some(hex0x(&t.fee_payer.0));
                    out.fee_payer_signatures = Some(sigs(&t.fee_payer_signatures));
                }
                if let FeeMode::Ratio(r) = t.fee_mode {
                    out.fee_ratio = Some(q(u64::from(r)));
                }
            }
            Transaction::Ethereum(t) => {
                out.access_list = Some(access_list_json(&t.access_list));
                out.chain_id = Some(q(t.chain_id));
                out.input = Some(hex0x(&t.input));
                out.to = Some(t.to.map(|a| hex0x(&a.0)));
                out.value = Some(quantity(&t.value));
                if t.dynamic {
                    out.max_fee_per_gas = Some(quantity(&t.gas_fee_cap));
                    out.max_priority_fee_per_gas = Some(quantity(&t.gas_tip_cap));
                }
            }
        }
        out
    }

    /// The receipt of this transaction: its status (1, or the reference's error code, shown
    /// as status 0 with `txError`), the gas it used, its logs (their first index in the
    /// block is `first_log`) and the contract it created.
    pub fn into_receipt(
        self,
        receipt: &super::receipt::Receipt,
        at: Location,
        first_log: u64,
        contract: Option<Address>,
    ) -> ReceiptJson {
        let tx_hash: [u8; 32] = hex::decode(&self.hash[2..])
            .ok()
            .and_then(|b| b.try_into().ok())
            .unwrap_or_default();
        let ok = receipt.status == super::receipt::STATUS_SUCCESS;
        ReceiptJson {
            access_list: self.access_list,
            block_hash: self.block_hash,
            block_number: self.block_number,
            chain_id: self.chain_id,
            code_format: self.code_format,
            contract_address: contract.map(|a| hex0x(&a.0)),
            effective_gas_price: self.gas_price.clone(),
            fee_payer: self.fee_payer,
            fee_payer_signatures: self.fee_payer_signatures,
            fee_ratio: self.fee_ratio,
            from: self.from,
            gas: self.gas,
            gas_price: self.gas_price,
            gas_used: q(receipt.gas_used),
            human_readable: self.human_readable,
            input: self.input,
            input_json: self.input_json,
            key: self.key,
            logs: receipt
                .logs
                .iter()
                .enumerate()
                .map(|(i, l)| LogJson::new(l, at, &tx_hash, first_log + i as u64))
                .collect(),
            logs_bloom: hex0x(&receipt.bloom()),
            max_fee_per_gas: self.max_fee_per_gas,
            max_priority_fee_per_gas: self.max_priority_fee_per_gas,
            nonce: self.nonce,
            sender_tx_hash: self.sender_tx_hash,
            signatures: self.signatures,
            status: if ok { "0x1".into() } else { "0x0".into() },
            to: self.to,
            transaction_hash: self.hash,
            transaction_index: self.transaction_index,
            tx_error: (!ok).then(|| q(receipt.status)),
            type_name: self.type_name,
            type_int: self.type_int,
            value: self.value,
        }
    }
}

/// The transactions of a block: their hashes, or the whole objects.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum BlockTransactions {
    Hashes(Vec<String>),
    Full(Vec<TransactionJson>),
}

/// A block as `chain_getBlockByNumber` / `chain_getBlockByHash` answer it (reference 10.8,
/// pre-Magma: no base fee).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockJson {
    pub block_score: String,
    pub extra_data: String,
    pub gas_used: String,
    pub governance_data: String,
    pub hash: String,
    pub logs_bloom: String,
    pub number: String,
    pub parent_hash: String,
    pub receipts_root: String,
    pub reward: String,
    pub size: String,
    pub state_root: String,
    pub timestamp: String,
    #[serde(rename = "timestampFoS")]
    pub timestamp_fos: String,
    pub total_block_score: String,
    pub transactions: BlockTransactions,
    pub transactions_root: String,
    pub vote_data: String,
}

impl BlockJson {
    /// The object for block `hash` with `header`; `full` gives the transaction objects
    /// (with their senders), else their hashes.
    pub fn new(
        hash: [u8; 32],
        header: &super::block::Header,
        transactions: &[(Transaction, Address)],
        size: u64,
        total_block_score: u64,
        full: bool,
    ) -> BlockJson {
        let txs = if full {
            BlockTransactions::Full(
                transactions
                    .iter()
                    .enumerate()
                    .map(|(i, (tx, from))| {
                        TransactionJson::new(
                            tx,
                            *from,
                            Location {
                                block_hash: hash,
                                block_number: header.number,
                                index: i as u64,
                            },
                        )
                    })
                    .collect(),
            )
        } else {
            BlockTransactions::Hashes(transactions.iter().map(|(t, _)| hex0x(&t.hash())).collect())
        };
        BlockJson {
            block_score: quantity(&header.block_score),
            extra_data: hex0x(&header.extra),
            gas_used: q(header.gas_used),
            governance_data: hex0x(&header.governance),
            hash: hex0x(&hash),
            logs_bloom: hex0x(&header.bloom[..]),
            number: q(header.number),
            parent_hash: hex0x(&header.parent_hash),
            receipts_root: hex0x(&header.receipts_root),
            reward: hex0x(&header.rewardbase.0),
            size: q(size),
            state_root: hex0x(&header.state_root),
            timestamp: q(header.time),
            timestamp_fos: q(u64::from(header.time_fos)),
            total_block_score: q(total_block_score),
            transactions: txs,
            transactions_root: hex0x(&header.transactions_root),
            vote_data: hex0x(&header.vote),
        }
    }
}

/// A header as `chain_getHeaderByNumber` / `chain_getHeaderByHash` answer it (reference
/// 10.8): the reference emits a Go map, so keys come in alphabetical order; `baseFeePerGas`,
/// `randomReveal` and `mixhash` (all lower-case here) only when the header carries them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeaderJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_fee_per_gas: Option<String>,
    pub block_score: String,
    pub extra_data: String,
    pub gas_used: String,
    pub governance_data: String,
    pub hash: String,
    pub logs_bloom: String,
    #[serde(rename = "mixhash", skip_serializing_if = "Option::is_none")]
    pub mix_hash: Option<String>,
    pub number: String,
    pub parent_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub random_reveal: Option<String>,
    pub receipts_root: String,
    pub reward: String,
    pub state_root: String,
    pub timestamp: String,
    #[serde(rename = "timestampFoS")]
    pub timestamp_fos: String,
    pub transactions_root: String,
    pub vote_data: String,
}

impl HeaderJson {
    /// The object for the header of block `hash`.
    pub fn new(hash: [u8; 32], header: &super::block::Header) -> HeaderJson {
        HeaderJson {
            base_fee_per_gas: header.base_fee.as_ref().map(quantity),
            block_score: quantity(&header.block_score),
            extra_data: hex0x(&header.extra),
            gas_used: q(header.gas_used),
            governance_data: hex0x(&header.governance),
            hash: hex0x(&hash),
            logs_bloom: hex0x(&header.bloom[..]),
            mix_hash: header.mix_hash.as_deref().map(hex0x),
            number: q(header.number),
            parent_hash: hex0x(&header.parent_hash),
            random_reveal: header.random_reveal.as_deref().map(hex0x),
            receipts_root: hex0x(&header.receipts_root),
            reward: hex0x(&header.rewardbase.0),
            state_root: hex0x(&header.state_root),
            timestamp: q(header.time),
            timestamp_fos: q(u64::from(header.time_fos)),
            transactions_root: hex0x(&header.transactions_root),
            vote_data: hex0x(&header.vote),
        }
    }
}

/// An account key as `chain_getAccountKey` answers it (reference 7.6): `keyType` and `key`
/// as JSON numbers and objects.
#[derive(Debug, Serialize)]
pub struct AccountKeyJson {
    #[serde(rename = "keyType")]
    pub key_type: u8,
    pub key: KeyBody,
}

/// The `key` member of [`AccountKeyJson`].
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum KeyBody {
    Empty(Empty),
    Public(Point),
    Multisig { threshold: u32, keys: Vec<Weighted> },
    Roles(Vec<AccountKeyJson>),
}

/// `{}`.
#[derive(Debug, Serialize)]
pub struct Empty {}

/// A public key's point, coordinates as quantities.
#[derive(Debug, Serialize)]
pub struct Point {
    pub x: String,
    pub y: String,
}

/// One key of a weighted multisig key.
#[derive(Debug, Serialize)]
pub struct Weighted {
    pub weight: u32,
    pub key: Point,
}

fn point(k: &super::account_key::CompressedKey) -> Point {
    // The key was checked to be on the curve when it was decoded.
    let full = secp256k1::PublicKey::from_slice(k)
        .map(|p| p.serialize_uncompressed())
        .unwrap_or([0; 65]);
    let coordinate = |b: &[u8]| quantity(&b.try_into().expect("32 bytes"));
    Point {
        x: coordinate(&full[1..33]),
        y: coordinate(&full[33..]),
    }
}

impl From<&super::account_key::AccountKey> for AccountKeyJson {
    fn from(k: &super::account_key::AccountKey) -> AccountKeyJson {
        use super::account_key::AccountKey as K;
        let key = match k {
            K::Nil | K::Legacy | K::Fail => KeyBody::Empty(Empty {}),
            K::Public(p) => KeyBody::Public(point(p)),
            K::WeightedMultisig { threshold, keys } => KeyBody::Multisig {
                threshold: *threshold,
                keys: keys
                    .iter()
                    .map(|(w, p)| Weighted {
                        weight: *w,
                        key: point(p),
                    })
                    .collect(),
            },
            K::RoleBased(roles) => KeyBody::Roles(roles.iter().map(AccountKeyJson::from).collect()),
        };
        AccountKeyJson {
            key_type: k.type_code(),
            key,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::account_key::AccountKey;

    /// Reference 7.3 and 7.6: K1's point, and the shapes of each kind.
    #[test]
    fn account_keys_as_json() {
        let k1: [u8; 33] =
            hex::decode("024bc2a31265153f07e70e0bab08724e6b85e217f8cd628ceb62974247bb493382")
                .unwrap()
                .try_into()
                .unwrap();
        let public = serde_json::to_string(&AccountKeyJson::from(&AccountKey::Public(k1))).unwrap();
        assert_eq!(
            public,
            r#"{"keyType":2,"key":{"x":"0x4bc2a31265153f07e70e0bab08724e6b85e217f8cd628ceb62974247bb493382","y":"0xce28cab79ad7119ee1ad3ebcdb98a16805211530ecc6cfefa1b88e6dff99232a"}}"#
        );
        assert_eq!(
            serde_json::to_string(&AccountKeyJson::from(&AccountKey::Legacy)).unwrap(),
            r#"{"keyType":1,"key":{}}"#
        );
        let ms = AccountKey::WeightedMultisig {
            threshold: 2,
            keys: vec![(1, k1)],
        };
        let text = serde_json::to_string(&AccountKeyJson::from(&AccountKey::RoleBased(vec![
            ms,
            AccountKey::Fail,
        ])))
        .unwrap();
        assert!(text.starts_with(r#"{"keyType":5,"key":[{"keyType":4,"key":{"threshold":2,"keys":[{"weight":1,"key":{"x":"0x4bc2"#), "{text}");
        assert!(text.ends_with(r#"{"keyType":3,"key":{}}]}"#), "{text}");
    }
}

/// A signed transaction as `personal_signTransaction` answers it in `tx` (reference 3.4): the
/// reference's JSON struct of its type, members in the struct's order (a legacy one without
/// type members, the others with `typeInt` and `type` first).
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct SignedTxJson(pub Map<String, Value>);

impl SignedTxJson {
    pub fn new(tx: &Transaction) -> SignedTxJson {
        let mut m = Map::new();
        let mut put = |k: &str, v: Value| {
            m.insert(k.to_string(), v);
        };
        let sigs = |v: &[Signature]| {
            serde_json::to_value(v.iter().map(SignatureJson::from).collect::<Vec<_>>())
                .unwrap_or_default()
        };
        let addr = |a: &Address| Value::from(hex0x(&a.0));
        let opt_addr = |a: &Option<Address>| a.as_ref().map_or(Value::Null, addr);
        match tx {
            Transaction::Legacy(t) => {
                put("nonce", q(t.nonce).into());
                put("gasPrice", quantity(&t.gas_price).into());
                put("gas", q(t.gas).into());
                put("to", opt_addr(&t.to));
                put("value", quantity(&t.value).into());
                put("input", hex0x(&t.input).into());
                put("signatures", sigs(&tx.signatures()));
            }
            Transaction::Native(t) => {
                let mb = members(t);
                put("typeInt", tx.type_code().into());
                put("type", tx.type_name().into());
                put("nonce", q(t.nonce).into());
                put("gasPrice", quantity(&t.gas_price).into());
                put("gas", q(t.gas).into());
                if mb.to {
                    put("to", opt_addr(&t.to));
                }
                if mb.value {
                    put("value", quantity(&t.value).into());
                }
                put("from", addr(&t.from));
                if mb.input {
                    put("input", hex0x(&t.input).into());
                }
                if t.base == Base::ChainDataAnchoring {
                    put("inputJSON", super::anchoring::input_json(&t.input));
                }
                if let Some(k) = &t.key {
                    put("key", hex0x(&k.encode()).into());
                }
                let ratio = match t.fee_mode {
                    FeeMode::Ratio(r) => Some(Value::from(q(u64::from(r)))),
                    _ => None,
                };
                if t.base == Base::SmartContractDeploy {
                    put("humanReadable", t.human_readable.into());
                    if let Some(r) = ratio.clone() {
                        put("feeRatio", r);
                    }
                    put("codeFormat", q(u64::from(t.code_format)).into());
                } else if let Some(r) = ratio {
                    put("feeRatio", r);
                }
                put("signatures", sigs(&t.signatures));
                if t.is_delegated() {
                    put("feePayer", addr(&t.fee_payer));
                    put("feePayerSignatures", sigs(&t.fee_payer_signatures));
                }
            }
            Transaction::Ethereum(t) => {
                put("typeInt", tx.type_code().into());
                put("type", tx.type_name().into());
                put("chainId", q(t.chain_id).into());
                put("nonce", q(t.nonce).into());
                if t.dynamic {
                    put("maxPriorityFeePerGas", quantity(&t.gas_tip_cap).into());
                    put("maxFeePerGas", quantity(&t.gas_fee_cap).into());
                } else {
                    put("gasPrice", quantity(&t.gas_fee_cap).into());
                }
                put("gas", q(t.gas).into());
                put("to", opt_addr(&t.to));
                put("value", quantity(&t.value).into());
                put("input", hex0x(&t.input).into());
                put("accessList", access_list_json(&t.access_list));
                put("signatures", sigs(&tx.signatures()));
            }
        }
        m.insert("hash".into(), hex0x(&tx.hash()).into());
        SignedTxJson(m)
    }
}

/// Which of the optional members a native type has.
struct Members {
    to: bool,
    value: bool,
    input: bool,
}

fn members(t: &Native) -> Members {
    use Base::*;
    Members {
        to: matches!(
            t.base,
            ValueTransfer | ValueTransferMemo | SmartContractDeploy | SmartContractExecution
        ),
        value: matches!(
            t.base,
            ValueTransfer | ValueTransferMemo | SmartContractDeploy | SmartContractExecution
        ),
        input: matches!(
            t.base,
            ValueTransferMemo | SmartContractDeploy | SmartContractExecution | ChainDataAnchoring
        ),
    }
}

/// An access list as JSON: `[{"address", "storageKeys"}]`.
pub fn access_list_json(list: &[AccessTuple]) -> Value {
    Value::Array(
        list.iter()
            .map(|t| {
                serde_json::json!({
                    "address": hex0x(&t.address.0),
                    "storageKeys": t.storage_keys.iter().map(|k| hex0x(k)).collect::<Vec<_>>(),
                })
            })
            .collect(),
    )
}

/// `personal_signTransaction`'s result: the raw encoding and the transaction.
#[derive(Debug, Serialize)]
pub struct SignedJson {
    pub raw: String,
    pub tx: SignedTxJson,
}

impl SignedJson {
    pub fn new(tx: &Transaction) -> SignedJson {
        SignedJson {
            raw: hex0x(&tx.encode()),
            tx: SignedTxJson::new(tx),
        }
    }
}
