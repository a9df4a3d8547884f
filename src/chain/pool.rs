//! The transaction pool: checks a transaction fully against the head state (chain id, unit
//! price, size, signature against the sender's account key, nonce, intrinsic gas, balance)
//! and keeps the accepted ones in arrival order until a block takes them. Signatures are
//! recovered once, here, and the sender kept.
//!
//! Today a transaction must carry its sender's next nonce (counting those already pending);
//! one with a later nonce is refused, not queued.

use std::collections::{HashMap, HashSet};

use super::state::{add, mul_u64, sub, Account};
use crate::crypto::Address;
use crate::types::account_key::{AccountKey, Role};
use crate::types::transaction::{Transaction, U256};

/// The largest serialized transaction accepted.
pub const MAX_TX_BYTES: usize = 128 * 1024;
/// Most transactions pending at once.
pub const MAX_PENDING: usize = 100_000;

/// A transaction the pool accepted, with what checking it established.
#[derive(Debug, Clone)]
pub struct Pending {
    pub tx: Transaction,
    pub hash: [u8; 32],
    pub sender: Address,
    /// Intrinsic plus key-validation gas: what the transaction uses.
    pub gas_used: u64,
}

/// Why the pool refused a transaction (the reference's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error("invalid chain id")]
    ChainId,
    #[error("invalid unit price")]
    UnitPrice,
    #[error("oversized data")]
    Oversized,
    #[error("invalid sender: invalid account key")]
    InvalidKey,
    #[error("a legacy transaction must be with a legacy account key")]
    LegacyKey,
    #[error("invalid transaction v, r, s values")]
    InvalidSignature,
    #[error("nonce too low")]
    NonceTooLow,
    #[error("nonce too high: the next nonce of the sender is {0}")]
    NonceTooHigh(u64),
    #[error("intrinsic gas too low")]
    IntrinsicGas,
    #[error("insufficient funds of the sender for value ")]
    InsufficientFunds,
    #[error("the address is reserved for pre-compiled contracts")]
    Reserved,
    #[error("contract creation and call data are not supported on this chain")]
    NoContracts,
    #[error("known transaction: 0x{0}")]
    Known(String),
    #[error("transaction pool is full")]
    Full,
    #[error("{0}")]
    Key(String),
}

/// An address in the reserved range `0x…0001`-`0x…03ff`.
pub fn reserved(a: &Address) -> bool {
    a.0[..18].iter().all(|&b| b == 0) && (a.0[18] != 0 || a.0[19] != 0) && a.0[18] <= 0x03
}

/// The pool's content.
#[derive(Debug, Default)]
pub struct Pool {
    pending: Vec<Pending>,
    known: HashSet<[u8; 32]>,
    /// Per sender: the next nonce and the balance left after the pending transactions.
    senders: HashMap<Address, (u64, U256)>,
}

impl Pool {
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// Takes every pending transaction, in arrival order (for a block).
    pub fn take(&mut self) -> Vec<Pending> {
        self.known.clear();
        self.senders.clear();
        std::mem::take(&mut self.pending)
    }

    /// The pending transactions with their senders, in arrival order.
    pub fn pending_list(&self) -> Vec<(Transaction, Address)> {
        self.pending
            .iter()
            .map(|p| (p.tx.clone(), p.sender))
            .collect()
    }

    /// The pending transaction with this hash.
    pub fn find(&self, hash: &[u8; 32]) -> Option<&Pending> {
        self.pending.iter().find(|p| &p.hash == hash)
    }

    /// The next nonce of `sender` counting the pending transactions, given its state nonce.
    pub fn next_nonce(&self, sender: &Address, state_nonce: u64) -> u64 {
        self.senders.get(sender).map_or(state_nonce, |s| s.0)
    }

    /// Checks `tx`, whose signers were recovered beforehand (`Transaction::recovered`, outside
    /// the pool's lock: it is the costly part), against the head state (`account` gives an
    /// account as of the head) and adds it. Returns its hash.
    pub fn add(
        &mut self,
        tx: Transaction,
        signers: Result<Vec<crate::types::account_key::Signer>, crate::types::transaction::TxError>,
        chain_id: u64,
        unit_price: u64,
        account: impl Fn(&Address) -> Result<Account, String>,
    ) -> Result<[u8; 32], PoolError> {
        let raw = tx.encode();
        if raw.len() > MAX_TX_BYTES {
            return Err(PoolError::Oversized);
        }
        let hash = crate::crypto::keccak256(&raw);
        if self.known.contains(&hash) {
            return Err(PoolError::Known(hex::encode(hash)));
        }
        if self.pending.len() >= MAX_PENDING {
            return Err(PoolError::Full);
        }
        let (nonce, gas_price, gas, value, role) = match &tx {
            Transaction::Legacy(t) => {
                if t.to.is_none() || !t.input.is_empty() {
                    return Err(PoolError::NoContracts);
                }
                (t.nonce, t.gas_price, t.gas, t.value, Role::Transaction)
            }
            Transaction::ValueTransfer(t) => {
                (t.nonce, t.gas_price, t.gas, t.value, Role::Transaction)
            }
            Transaction::AccountUpdate(t) => {
                (t.nonce, t.gas_price, t.gas, [0; 32], Role::AccountUpdate)
            }
        };
        let to = match &tx {
            Transaction::Legacy(t) => t.to,
            Transaction::ValueTransfer(t) => Some(t.to),
            Transaction::AccountUpdate(_) => None,
        };
        if to.as_ref().is_some_and(reserved) {
            return Err(PoolError::Reserved);
        }
        let signers = signers.map_err(|_| PoolError::InvalidSignature)?;
        let sig_chain = match &tx {
            Transaction::Legacy(t) => t.signature.map(|s| s.chain_id()),
            Transaction::ValueTransfer(t) => t.signatures.first().map(|s| s.chain_id()),
            Transaction::AccountUpdate(t) => t.signatures.first().map(|s| s.chain_id()),
        };
        // Unprotected legacy transactions (V 27/28) carry no chain id.
        if sig_chain.is_some_and(|c| c != chain_id && c != 0) {
            return Err(PoolError::ChainId);
        }
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&unit_price.to_be_bytes());
        if gas_price != price {
            return Err(PoolError::UnitPrice);
        }
        let sender = match &tx {
            Transaction::Legacy(_) => signers.first().ok_or(PoolError::InvalidSignature)?.address,
            Transaction::ValueTransfer(t) => t.from,
            Transaction::AccountUpdate(t) => t.from,
        };
        let acct = account(&sender).map_err(PoolError::Key)?;
        if let Transaction::Legacy(_) = &tx {
            if acct.key != AccountKey::Legacy {
                return Err(PoolError::LegacyKey);
            }
        } else if !acct.key.validates(role, sender, &signers) {
            return Err(PoolError::InvalidKey);
        }
        if let Transaction::AccountUpdate(t) = &tx {
            acct.key
                .replaced_by(&t.key)
                .map_err(|e| PoolError::Key(e.to_string()))?;
        }
        let (next, balance) = self
            .senders
            .get(&sender)
            .copied()
            .unwrap_or((acct.nonce, acct.balance));
        if nonce < next {
            return Err(PoolError::NonceTooLow);
        }
        if nonce > next {
            return Err(PoolError::NonceTooHigh(next));
        }
        let gas_used = tx.intrinsic_gas() + acct.key.validation_gas(role, signers.len());
        if gas < gas_used {
            return Err(PoolError::IntrinsicGas);
        }
        let cost = mul_u64(&gas_price, gas)
            .and_then(|fee| add(&fee, &value))
            .ok_or(PoolError::InsufficientFunds)?;
        let left = sub(&balance, &cost).ok_or(PoolError::InsufficientFunds)?;
        self.senders.insert(sender, (next + 1, left));
        self.known.insert(hash);
        self.pending.push(Pending {
            tx,
            hash,
            sender,
            gas_used,
        });
        Ok(hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reserved_range() {
        let a = |last: [u8; 2]| {
            let mut b = [0u8; 20];
            b[18..].copy_from_slice(&last);
            Address(b)
        };
        assert!(!reserved(&a([0, 0])));
        assert!(reserved(&a([0, 1])));
        assert!(reserved(&a([3, 0xff])));
        assert!(!reserved(&a([4, 0])));
        assert!(!reserved(&Address([1; 20])));
    }
}
