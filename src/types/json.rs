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
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub nonce: String,
    pub sender_tx_hash: String,
    pub signatures: Vec<SignatureJson>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub transaction_index: String,
    #[serde(rename = "type")]
    pub type_name: &'static str,
    pub type_int: u8,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

/// The fields a receipt shares with the transaction object.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReceiptJson {
    pub block_hash: String,
    pub block_number: String,
    pub contract_address: Option<String>,
    pub effective_gas_price: String,
    pub from: String,
    pub gas: String,
    pub gas_price: String,
    pub gas_used: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    pub logs: Vec<()>,
    pub logs_bloom: String,
    pub nonce: String,
    pub sender_tx_hash: String,
    pub signatures: Vec<SignatureJson>,
    pub status: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    pub transaction_hash: String,
    pub transaction_index: String,
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
        let (type_name, input, key, to, value, nonce, gas, gas_price, sigs) = match tx {
            Transaction::Legacy(t) => (
                "TxTypeLegacyTransaction",
                Some(hex0x(&t.input)),
                None,
                t.to.map(|a| hex0x(&a.0)),
                Some(quantity(&t.value)),
                t.nonce,
                t.gas,
                t.gas_price,
                t.signature.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::ValueTransfer(t) => (
                "TxTypeValueTransfer",
                None,
                None,
                Some(hex0x(&t.to.0)),
                Some(quantity(&t.value)),
                t.nonce,
                t.gas,
                t.gas_price,
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
            Transaction::AccountUpdate(t) => (
                "TxTypeAccountUpdate",
                None,
                Some(hex0x(&t.key.encode())),
                None,
                None,
                t.nonce,
                t.gas,
                t.gas_price,
                t.signatures.iter().map(SignatureJson::from).collect(),
            ),
        };
        TransactionJson {
            block_hash: hex0x(&at.block_hash),
            block_number: q(at.block_number),
            from: hex0x(&from.0),
            gas: q(gas),
            gas_price: quantity(&gas_price),
            sender_tx_hash: hash.clone(),
            hash,
            input,
            key,
            nonce: q(nonce),
            signatures: sigs,
            to,
            transaction_index: q(at.index),
            type_name,
            type_int: tx.type_code(),
            value,
        }
    }

    /// The receipt of this transaction: successful, `gas_used` used, no logs.
    pub fn into_receipt(self, status: u64, gas_used: u64) -> ReceiptJson {
        ReceiptJson {
            block_hash: self.block_hash,
            block_number: self.block_number,
            contract_address: None,
            effective_gas_price: self.gas_price.clone(),
            from: self.from,
            gas: self.gas,
            gas_price: self.gas_price,
            gas_used: q(gas_used),
            input: self.input,
            key: self.key,
            logs: Vec::new(),
            logs_bloom: hex0x(&[0u8; 256]),
            nonce: self.nonce,
            sender_tx_hash: self.sender_tx_hash,
            signatures: self.signatures,
            status: q(status),
            to: self.to,
            transaction_hash: self.hash,
            transaction_index: self.transaction_index,
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
