//! The `eth` namespace's JSON: blocks, headers, transactions and receipts in Ethereum's shape,
//! mapped from this chain's as the reference maps them (`rpcMarshalHeader`,
//! `newEthRPCTransaction`, `newEthTransactionReceipt` of its `api/api_ethereum.go`):
//!
//! - a header: no nonce, mix hash, uncles or extra data (all empty), the proposer recovered
//!   from the seal as `miner`, the block score as `difficulty`, `gasLimit` the reference's
//!   upper gas limit (there is no block gas limit), `baseFeePerGas` 0 before Magma;
//! - a transaction of one of the reference's own types shows as type 0 with its first
//!   signature as v, r, s, and `to` its sender where the type has no recipient (account
//!   update, cancel, anchoring); Ethereum's types show as themselves (1 and 2);
//! - a receipt: status 0 or 1 only, the cumulative gas of the block up to it.
//!
//! The reference marshals headers, blocks and receipts as Go maps (keys sorted) and
//! transactions as a struct (its field order): the builders below insert in that order.

use serde_json::{Map, Value};

use crate::chain::{BlockRecord, Chain, ChainError, TxRecord};
use crate::crypto::Address;
use crate::types::block::Header;
use crate::types::json::{access_list_json, LogJson};
use crate::types::transaction::{Base, Transaction, U256};

/// `gasLimit` of every block: the reference's `UpperGasLimit`.
pub const UPPER_GAS_LIMIT: u64 = 999_999_999_999;
/// Keccak-256 of the RLP of an empty list: the uncles hash of a block without uncles.
const EMPTY_UNCLES: &str = "0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347";
/// `reflect.TypeOf(types.Header{}).Size()` of the reference on 64-bit machines: the fixed part
/// of what its `Header.Size()` counts.
const GO_HEADER_SIZE: u64 = 576;

fn hex0x(b: &[u8]) -> Value {
    Value::String(format!("0x{}", hex::encode(b)))
}

fn q(n: u64) -> Value {
    Value::String(format!("0x{n:x}"))
}

fn big(v: &U256) -> Value {
    Value::String(crate::chain::state::quantity(v))
}

fn bit_len(bytes: &[u8]) -> u64 {
    match bytes.iter().position(|&b| b != 0) {
        None => 0,
        Some(i) => (bytes.len() - i) as u64 * 8 - u64::from(bytes[i].leading_zeros()),
    }
}

/// The reference's `Header.Size()`: Go's in-memory size of the header, not its encoding.
pub fn header_size(h: &Header) -> u64 {
    let bytes = h.extra.len()
        + h.governance.len()
        + h.vote.len()
        + h.random_reveal.as_ref().map_or(0, Vec::len)
        + h.mix_hash.as_ref().map_or(0, Vec::len);
    let ints = (bit_len(&h.block_score)
        + bit_len(&h.number.to_be_bytes())
        + bit_len(&h.time.to_be_bytes()))
        / 8;
    let base_fee = h.base_fee.as_ref().map_or(0, |f| bit_len(f) / 8);
    GO_HEADER_SIZE + bytes as u64 + ints + base_fee
}

/// The proposer of a block, recovered from its seal (the zero address for the genesis).
fn miner(h: &Header) -> Result<Address, ChainError> {
    if h.number == 0 {
        return Ok(Address([0; 20]));
    }
    h.sealers()
        .map(|s| s.proposer)
        .map_err(|e| ChainError::Corrupt(format!("block {}: {e}", h.number)))
}

/// Which fields a header object leaves out or empties.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A sealed block as it is.
    Sealed,
    /// The pending block: `hash`, `nonce` and `miner` are `null`.
    Pending,
}

/// A header in Ethereum's shape (`eth_getHeaderBy*`, the `newHeads` subscription): keys in
/// Go's map order. `size` is the reference's `Header.Size()`; a block object replaces it.
pub fn header(
    chain: &Chain,
    hash: &[u8; 32],
    h: &Header,
    shape: Shape,
) -> Result<Map<String, Value>, ChainError> {
    let forks = crate::chain::genesis::FORKS;
    let proposer = match shape {
        Shape::Sealed => hex0x(&miner(h)?.0),
        Shape::Pending => Value::Null,
    };
    let mut m = Map::new();
    if forks.eth_tx_type {
        m.insert(
            "baseFeePerGas".into(),
            h.base_fee.as_ref().map_or_else(|| q(0), big),
        );
    }
    m.insert("difficulty".into(), big(&h.block_score));
    m.insert("extraData".into(), Value::String("0x".into()));
    m.insert("gasLimit".into(), q(UPPER_GAS_LIMIT));
    m.insert("gasUsed".into(), q(h.gas_used));
    m.insert(
        "hash".into(),
        if shape == Shape::Pending {
            Value::Null
        } else {
            hex0x(hash)
        },
    );
    m.insert("logsBloom".into(), hex0x(&h.bloom[..]));
    m.insert("miner".into(), proposer);
    let mix = if forks.randao {
        hex0x(h.mix_hash.as_deref().unwrap_or_default())
    } else {
        hex0x(&[0; 32])
    };
    m.insert("mixHash".into(), mix);
    m.insert(
        "nonce".into(),
        if shape == Shape::Pending {
            Value::Null
        } else {
            hex0x(&[0; 8])
        },
    );
    m.insert("number".into(), q(h.number));
    m.insert("parentHash".into(), hex0x(&h.parent_hash));
    if forks.randao {
        m.insert(
            "randomReveal".into(),
            hex0x(h.random_reveal.as_deref().unwrap_or_default()),
        );
    }
    m.insert("receiptsRoot".into(), hex0x(&h.receipts_root));
    m.insert("sha3Uncles".into(), Value::String(EMPTY_UNCLES.into()));
    m.insert("size".into(), q(header_size(h)));
    m.insert("stateRoot".into(), hex0x(&h.state_root));
    m.insert("timestamp".into(), q(h.time));
    m.insert(
        "totalDifficulty".into(),
        q(chain.total_block_score(h.number)),
    );
    m.insert("transactionsRoot".into(), hex0x(&h.transactions_root));
    Ok(m)
}

/// A block in Ethereum's shape (`eth_getBlockBy*`): the header's fields with the block's RLP
/// size, its transactions (hashes, or objects when `full`) and no uncles.
pub fn block(
    chain: &Chain,
    b: &BlockRecord,
    full: bool,
    shape: Shape,
) -> Result<Value, ChainError> {
    let mut m = header(chain, &b.hash, &b.header, shape)?;
    m.insert("size".into(), q(b.size));
    let txs = b
        .transactions
        .iter()
        .enumerate()
        .map(|(i, (tx, from))| {
            if full {
                transaction(tx, *from, Some((&b.hash, &b.header, i as u64)))
            } else {
                hex0x(&tx.hash())
            }
        })
        .collect();
    // Go's map order: "transactions" < "transactionsRoot" < "uncles".
    let root = m.remove("transactionsRoot").expect("inserted above");
    m.insert("transactions".into(), Value::Array(txs));
    m.insert("transactionsRoot".into(), root);
    m.insert("uncles".into(), Value::Array(Vec::new()));
    Ok(Value::Object(m))
}

/// The type a transaction shows in the `eth` namespace: Ethereum's own types as themselves,
/// every other as legacy (0).
pub fn eth_type(tx: &Transaction) -> u64 {
    match tx {
        Transaction::Ethereum(e) => u64::from(e.eth_type()),
        _ => 0,
    }
}

/// The `to` of a transaction in the `eth` namespace: its sender for the reference's types
/// that have no recipient (Ethereum's transactions always have one).
pub fn resolved_to(tx: &Transaction, from: Address) -> Option<Address> {
    match tx.base() {
        Some(Base::AccountUpdate | Base::Cancel | Base::ChainDataAnchoring) => Some(from),
        _ => tx.to(),
    }
}

/// A transaction in Ethereum's shape (the reference's `EthRPCTransaction`, its field order);
/// `at` is its block (hash, header) and index, `None` while pending.
pub fn transaction(
    tx: &Transaction,
    from: Address,
    at: Option<(&[u8; 32], &Header, u64)>,
) -> Value {
    let sig = tx.signatures().into_iter().next();
    let (v, r, s) = match &sig {
        Some(s) => (q(s.v), big(&s.r), big(&s.s)),
        None => (q(0), q(0), q(0)),
    };
    let mut m = Map::new();
    match at {
        Some((hash, header, _)) => {
            m.insert("blockHash".into(), hex0x(hash));
            m.insert("blockNumber".into(), q(header.number));
        }
        None => {
            m.insert("blockHash".into(), Value::Null);
            m.insert("blockNumber".into(), Value::Null);
        }
    }
    m.insert("from".into(), hex0x(&from.0));
    m.insert("gas".into(), q(tx.gas()));
    // Before Magma the effective price of every type is its gas price (an EIP-1559
    // transaction's fee cap).
    m.insert("gasPrice".into(), big(&tx.gas_price()));
    if let Transaction::Ethereum(e) = tx {
        if e.dynamic {
            m.insert("maxFeePerGas".into(), big(&e.gas_fee_cap));
            m.insert("maxPriorityFeePerGas".into(), big(&e.gas_tip_cap));
        }
    }
    m.insert("hash".into(), hex0x(&tx.hash()));
    m.insert("input".into(), hex0x(tx.input()));
    m.insert("nonce".into(), q(tx.nonce()));
    m.insert(
        "to".into(),
        resolved_to(tx, from).map_or(Value::Null, |a| hex0x(&a.0)),
    );
    m.insert(
        "transactionIndex".into(),
        at.map_or(Value::Null, |(_, _, i)| q(i)),
    );
    m.insert("value".into(), big(&tx.value()));
    m.insert("type".into(), q(eth_type(tx)));
    if let Transaction::Ethereum(e) = tx {
        m.insert("accessList".into(), access_list_json(&e.access_list));
        m.insert("chainId".into(), q(e.chain_id));
    }
    m.insert("v".into(), v);
    m.insert("r".into(), r);
    m.insert("s".into(), s);
    Value::Object(m)
}

/// A transaction the chain knows, sealed or pending, in Ethereum's shape.
pub fn transaction_record(chain: &Chain, r: &TxRecord) -> Result<Value, ChainError> {
    if r.receipt.is_none() {
        return Ok(transaction(&r.tx, r.sender, None));
    }
    let header = chain
        .header_by_hash(&r.location.block_hash)?
        .ok_or_else(|| ChainError::Corrupt("can't find a block in database".into()))?;
    Ok(transaction(
        &r.tx,
        r.sender,
        Some((&r.location.block_hash, &header, r.location.index)),
    ))
}

/// The fields of a transaction an unsigned or signed `eth_signTransaction` /
/// `eth_fillTransaction` result shows (the reference's `ethTxJSON`: type, nonce, the price
/// fields, gas, value, input, v, r, s, to, then chainId and accessList for Ethereum's types,
/// and the hash).
pub fn tx_fields(tx: &Transaction) -> Value {
    let sig = tx.signatures().into_iter().next();
    let mut m = Map::new();
    m.insert("type".into(), q(eth_type(tx)));
    m.insert("nonce".into(), q(tx.nonce()));
    match tx {
        Transaction::Ethereum(e) if e.dynamic => {
            m.insert("gasPrice".into(), Value::Null);
            m.insert("maxPriorityFeePerGas".into(), big(&e.gas_tip_cap));
            m.insert("maxFeePerGas".into(), big(&e.gas_fee_cap));
        }
        _ => {
            m.insert("gasPrice".into(), big(&tx.gas_price()));
            m.insert("maxPriorityFeePerGas".into(), Value::Null);
            m.insert("maxFeePerGas".into(), Value::Null);
        }
    }
    m.insert("gas".into(), q(tx.gas()));
    m.insert("value".into(), big(&tx.value()));
    m.insert("input".into(), hex0x(tx.input()));
    let (v, r, s) = match &sig {
        Some(s) => (q(s.v), big(&s.r), big(&s.s)),
        None => (q(0), q(0), q(0)),
    };
    m.insert("v".into(), v);
    m.insert("r".into(), r);
    m.insert("s".into(), s);
    m.insert("to".into(), tx.to().map_or(Value::Null, |a| hex0x(&a.0)));
    if let Transaction::Ethereum(e) = tx {
        m.insert("chainId".into(), q(e.chain_id));
        m.insert("accessList".into(), access_list_json(&e.access_list));
    }
    m.insert("hash".into(), hex0x(&tx.hash()));
    Value::Object(m)
}

/// A sealed transaction's receipt in Ethereum's shape (with the gas the block's
/// transactions used up to and including it). `None` while pending.
pub fn receipt(r: &TxRecord) -> Option<Value> {
    let sealed = r.receipt.as_ref()?;
    let at = r.location;
    let mut m = Map::new();
    m.insert("blockHash".into(), hex0x(&at.block_hash));
    m.insert("blockNumber".into(), q(at.block_number));
    m.insert(
        "contractAddress".into(),
        sealed.contract.map_or(Value::Null, |a| hex0x(&a.0)),
    );
    m.insert("cumulativeGasUsed".into(), q(sealed.cumulative_gas));
    m.insert("effectiveGasPrice".into(), big(&r.tx.gas_price()));
    m.insert("from".into(), hex0x(&r.sender.0));
    m.insert("gasUsed".into(), q(sealed.receipt.gas_used));
    let tx_hash = r.tx.hash();
    let logs: Vec<Value> = sealed
        .receipt
        .logs
        .iter()
        .enumerate()
        .map(|(i, log)| {
            serde_json::to_value(LogJson::new(log, at, &tx_hash, sealed.first_log + i as u64))
                .expect("a log serializes")
        })
        .collect();
    m.insert("logs".into(), Value::Array(logs));
    m.insert("logsBloom".into(), hex0x(&sealed.receipt.bloom()[..]));
    let ok = sealed.receipt.status == crate::types::receipt::STATUS_SUCCESS;
    m.insert("status".into(), q(u64::from(ok)));
    m.insert(
        "to".into(),
        resolved_to(&r.tx, r.sender).map_or(Value::Null, |a| hex0x(&a.0)),
    );
    m.insert("transactionHash".into(), hex0x(&tx_hash));
    m.insert("transactionIndex".into(), q(at.index));
    m.insert("type".into(), q(eth_type(&r.tx)));
    Some(Value::Object(m))
}

/// The receipts of a block's transactions in Ethereum's shape, in order.
pub fn block_receipts(records: &[TxRecord]) -> Vec<Value> {
    records.iter().filter_map(receipt).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_lengths_are_go_big_int_bit_len() {
        assert_eq!(bit_len(&[]), 0);
        assert_eq!(bit_len(&[0, 0]), 0);
        assert_eq!(bit_len(&[0, 1]), 1);
        assert_eq!(bit_len(&[0, 0x80]), 8);
        assert_eq!(bit_len(&[1, 0]), 9);
        assert_eq!(bit_len(&0x6000_0000u64.to_be_bytes()), 31);
    }
}
