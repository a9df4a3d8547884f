//! The RPC JSON of transactions and receipts (reference 11.1): the reference emits Go maps,
//! so keys come in alphabetical order, which the field order of these types follows.

use serde::Serialize;

use super::transaction::{Signature, Transaction};
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

/// A transaction as `chain_getTransactionByHash` answers it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TransactionJson {
    pub block_hash: String,
    pub block_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_format: Option<String>,
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_readable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub nonce: String,
    pub sender_tx_hash: String,
    pub signatures: Vec<SignatureJson>,
    /// `null` for a contract creation; absent for an account update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Option<String>>,
    pub transaction_index: String,
    #[serde(rename = "type")]
    pub type_name: &'static str,
    pub type_int: u8,
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
    pub block_hash: String,
    pub block_number: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_format: Option<String>,
    pub contract_address: Option<String>,
    pub effective_gas_price: String,
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub gas_used: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_readable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub logs: Vec<LogJson>,
    pub logs_bloom: String,
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
    pub type_int: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl TransactionJson {
    /// The object for `tx` sent by `from`, at `at`.
    pub fn new(tx: &Transaction, from: Address, at: Location) -> TransactionJson {
        let hash = hex0x(&tx.hash());
        let to_json = |a: Option<Address>| Some(a.map(|a| hex0x(&a.0)));
        let (input, key, to, value, code_format, human_readable, sigs) = match tx {
            Transaction::Legacy(t) => (
                Some(hex0x(&t.input)),
                None,
                to_json(t.to),
                Some(quantity(&t.value)),
                None,
                None,
                t.signature.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::ValueTransfer(t) => (
                None,
                None,
                to_json(Some(t.to)),
                Some(quantity(&t.value)),
                None,
                None,
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::AccountUpdate(t) => (
                None,
                Some(hex0x(&t.key.encode())),
                None,
                None,
                None,
                None,
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::SmartContractDeploy(t) => (
                Some(hex0x(&t.input)),
                None,
                to_json(t.to),
                Some(quantity(&t.value)),
                Some(q(u64::from(t.code_format))),
                Some(t.human_readable),
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::SmartContractExecution(t) => (
                Some(hex0x(&t.input)),
                None,
                to_json(Some(t.to)),
                Some(quantity(&t.value)),
                None,
                None,
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
        };
        TransactionJson {
            block_hash: hex0x(&at.block_hash),
            block_number: q(at.block_number),
            code_format,
            from: hex0x(&from.0),
            gas: q(tx.gas()),
            gas_price: quantity(&tx.gas_price()),
            sender_tx_hash: hash.clone(),
            hash,
            human_readable,
            input,
            key,
            nonce: q(tx.nonce()),
            signatures: sigs,
            to,
            transaction_index: q(at.index),
            type_name: tx.type_name(),
            type_int: tx.type_code(),
            value,
        }
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
            block_hash: self.block_hash,
            block_number: self.block_number,
            code_format: self.code_format,
            contract_address: contract.map(|a| hex0x(&a.0)),
            effective_gas_price: self.gas_price.clone(),
            from: self.from,
            gas: self.gas,
            gas_price: self.gas_price,
            gas_used: q(receipt.gas_used),
            human_readable: self.human_readable,
            input: self.input,
            key: self.key,
            logs: receipt
                .logs
                .iter()
                .enumerate()
                .map(|(i, l)| LogJson::new(l, at, &tx_hash, first_log + i as u64))
                .collect(),
            logs_bloom: hex0x(&receipt.bloom()),
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

/// A signed transaction as `personal_signTransaction` answers it in `tx` (reference 3.4): a
/// legacy one without type members, the chain's own types with `typeInt` and `type` first.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SignedTxJson {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub type_int: Option<u8>,
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub type_name: Option<&'static str>,
    pub nonce: String,
    pub gas_price: String,
    pub gas: String,
    /// `null` is kept for a legacy contract creation; absent for an account update.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub human_readable: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_format: Option<String>,
    pub signatures: Vec<SignatureJson>,
    pub hash: String,
}

impl SignedTxJson {
    pub fn new(tx: &Transaction) -> SignedTxJson {
        let hash = hex0x(&tx.hash());
        match tx {
            Transaction::Legacy(t) => SignedTxJson {
                type_int: None,
                type_name: None,
                nonce: q(t.nonce),
                gas_price: quantity(&t.gas_price),
                gas: q(t.gas),
                to: Some(t.to.map(|a| hex0x(&a.0))),
                value: Some(quantity(&t.value)),
                input: Some(hex0x(&t.input)),
                from: None,
                key: None,
                human_readable: None,
                code_format: None,
                signatures: t.signature.iter().map(SignatureJson::from).collect(),
                hash,
            },
            Transaction::ValueTransfer(t) => SignedTxJson {
                type_int: Some(8),
                type_name: Some("TxTypeValueTransfer"),
                nonce: q(t.nonce),
                gas_price: quantity(&t.gas_price),
                gas: q(t.gas),
                to: Some(Some(hex0x(&t.to.0))),
                value: Some(quantity(&t.value)),
                input: None,
                from: Some(hex0x(&t.from.0)),
                key: None,
                human_readable: None,
                code_format: None,
                signatures: t.signatures.iter().map(SignatureJson::from).collect(),
                hash,
            },
            Transaction::AccountUpdate(t) => SignedTxJson {
                type_int: Some(32),
                type_name: Some("TxTypeAccountUpdate"),
                nonce: q(t.nonce),
                gas_price: quantity(&t.gas_price),
                gas: q(t.gas),
                to: None,
                value: None,
                input: None,
                from: Some(hex0x(&t.from.0)),
                key: Some(hex0x(&t.key.encode())),
                human_readable: None,
                code_format: None,
                signatures: t.signatures.iter().map(SignatureJson::from).collect(),
                hash,
            },
            Transaction::SmartContractDeploy(t) => SignedTxJson {
                type_int: Some(tx.type_code()),
                type_name: Some(tx.type_name()),
                nonce: q(t.nonce),
                gas_price: quantity(&t.gas_price),
                gas: q(t.gas),
                to: Some(t.to.map(|a| hex0x(&a.0))),
                value: Some(quantity(&t.value)),
                input: Some(hex0x(&t.input)),
                from: Some(hex0x(&t.from.0)),
                key: None,
                human_readable: Some(t.human_readable),
                code_format: Some(q(u64::from(t.code_format))),
                signatures: t.signatures.iter().map(SignatureJson::from).collect(),
                hash,
            },
            Transaction::SmartContractExecution(t) => SignedTxJson {
                type_int: Some(tx.type_code()),
                type_name: Some(tx.type_name()),
                nonce: q(t.nonce),
                gas_price: quantity(&t.gas_price),
                gas: q(t.gas),
                to: Some(Some(hex0x(&t.to.0))),
                value: Some(quantity(&t.value)),
                input: Some(hex0x(&t.input)),
                from: Some(hex0x(&t.from.0)),
                key: None,
                human_readable: None,
                code_format: None,
                signatures: t.signatures.iter().map(SignatureJson::from).collect(),
                hash,
            },
        }
    }
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
