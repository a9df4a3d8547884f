//! The checks every transaction passes, whether it enters the pool or arrives in a block to
//! import: size, no contract creation or call data, no reserved recipient, a valid signature
//! for this chain, the unit price, the sender's account key for the transaction's role (a
//! legacy transaction needs a legacy key), the install rules of a new key, and the intrinsic
//! plus validation gas. What depends on where the transaction goes (its nonce against the
//! sender's next one, the balance left by earlier transactions) is the caller's.
//!
//! The rules' refusals ([`InvalidTransaction`]) live here, with the texts the reference
//! gives; the pool wraps them in its own error, which adds what only a pool refuses (a
//! known transaction, a nonce taken, a full pool).

use super::state::{add, mul_u64, Account};
use crate::crypto::Address;
use crate::types::account_key::{AccountKey, Role, Signer};
use crate::types::transaction::{Transaction, TxError, U256};

/// The largest serialized transaction accepted.
pub const MAX_TX_BYTES: usize = 128 * 1024;

/// Why a transaction breaks the rules every transaction must follow, in the pool or in a
/// block (the reference's texts).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InvalidTransaction {
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
    #[error("intrinsic gas too low")]
    IntrinsicGas,
    #[error("insufficient funds of the sender for value ")]
    InsufficientFunds,
    #[error("the address is reserved for pre-compiled contracts")]
    Reserved,
    #[error("contract creation and call data are not supported on this chain")]
    NoContracts,
    #[error("{0}")]
    Key(String),
}

/// An address in the reserved range `0x…0001`-`0x…03ff`.
pub fn reserved(a: &Address) -> bool {
    a.0[..18].iter().all(|&b| b == 0) && (a.0[18] != 0 || a.0[19] != 0) && a.0[18] <= 0x03
}

/// What checking a transaction established.
#[derive(Debug, Clone)]
pub struct Checked {
    pub sender: Address,
    pub nonce: u64,
    /// Intrinsic plus key-validation gas: what the transaction uses.
    pub gas_used: u64,
    /// Gas limit x gas price + value: what the sender must hold.
    pub cost: U256,
    /// The raw encoding's length.
    pub size: usize,
}

/// Checks `tx` (its signers recovered beforehand: the costly part) against its sender's
/// account, which `account` reads. Returns what it established and the account.
pub fn check_tx(
    tx: &Transaction,
    signers: Result<&[Signer], &TxError>,
    chain_id: u64,
    unit_price: u64,
    size: usize,
    account: impl FnOnce(&Address) -> Result<Account, String>,
) -> Result<(Checked, Account), InvalidTransaction> {
    if size > MAX_TX_BYTES {
        return Err(InvalidTransaction::Oversized);
    }
    let (nonce, gas_price, gas, value, role, to) = match tx {
        Transaction::Legacy(t) => {
            if t.to.is_none() || !t.input.is_empty() {
                return Err(InvalidTransaction::NoContracts);
            }
            (
                t.nonce,
                t.gas_price,
                t.gas,
                t.value,
                Role::Transaction,
                t.to,
            )
        }
        Transaction::ValueTransfer(t) => (
            t.nonce,
            t.gas_price,
            t.gas,
            t.value,
            Role::Transaction,
            Some(t.to),
        ),
        Transaction::AccountUpdate(t) => (
            t.nonce,
            t.gas_price,
            t.gas,
            [0; 32],
            Role::AccountUpdate,
            None,
        ),
    };
    if to.as_ref().is_some_and(reserved) {
        return Err(InvalidTransaction::Reserved);
    }
    let signers = signers.map_err(|_| InvalidTransaction::InvalidSignature)?;
    let sig_chain = tx.signature_chain_id();
    // Unprotected legacy transactions (V 27/28) carry no chain id.
    if sig_chain.is_some_and(|c| c != chain_id && c != 0) {
        return Err(InvalidTransaction::ChainId);
    }
    let mut price = [0u8; 32];
    price[24..].copy_from_slice(&unit_price.to_be_bytes());
    if gas_price != price {
        return Err(InvalidTransaction::UnitPrice);
    }
    let sender = match tx {
        Transaction::Legacy(_) => {
            signers
                .first()
                .ok_or(InvalidTransaction::InvalidSignature)?
                .address
        }
        Transaction::ValueTransfer(t) => t.from,
        Transaction::AccountUpdate(t) => t.from,
    };
    let acct = account(&sender).map_err(InvalidTransaction::Key)?;
    if let Transaction::Legacy(_) = tx {
        if acct.key != AccountKey::Legacy {
            return Err(InvalidTransaction::LegacyKey);
        }
    } else if !acct.key.validates(role, sender, signers) {
        return Err(InvalidTransaction::InvalidKey);
    }
    if let Transaction::AccountUpdate(t) = tx {
        acct.key
            .replaced_by(&t.key)
            .map_err(|e| InvalidTransaction::Key(e.to_string()))?;
    }
    let gas_used = tx.intrinsic_gas() + acct.key.validation_gas(role, signers.len());
    if gas < gas_used {
        return Err(InvalidTransaction::IntrinsicGas);
    }
    let cost = mul_u64(&gas_price, gas)
        .and_then(|fee| add(&fee, &value))
        .ok_or(InvalidTransaction::InsufficientFunds)?;
    Ok((
        Checked {
            sender,
            nonce,
            gas_used,
            cost,
            size,
        },
        acct,
    ))
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
