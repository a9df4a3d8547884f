//! The checks every transaction passes, whether it enters the pool or arrives in a block to
//! import: size, no contract creation or call data, no reserved recipient, a valid signature
//! for this chain, the unit price, the sender's account key for the transaction's role (a
//! legacy transaction needs a legacy key), the install rules of a new key, and the intrinsic
//! plus validation gas. What depends on where the transaction goes (its nonce against the
//! sender's next one, the balance left by earlier transactions) is the caller's.

use super::pool::{reserved, PoolError, MAX_TX_BYTES};
use super::state::{add, mul_u64, Account};
use crate::crypto::Address;
use crate::types::account_key::{AccountKey, Role, Signer};
use crate::types::transaction::{Transaction, TxError, U256};

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
) -> Result<(Checked, Account), PoolError> {
    if size > MAX_TX_BYTES {
        return Err(PoolError::Oversized);
    }
    let (nonce, gas_price, gas, value, role, to) = match tx {
        Transaction::Legacy(t) => {
            if t.to.is_none() || !t.input.is_empty() {
                return Err(PoolError::NoContracts);
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
        return Err(PoolError::Reserved);
    }
    let signers = signers.map_err(|_| PoolError::InvalidSignature)?;
    let sig_chain = tx.signature_chain_id();
    // Unprotected legacy transactions (V 27/28) carry no chain id.
    if sig_chain.is_some_and(|c| c != chain_id && c != 0) {
        return Err(PoolError::ChainId);
    }
    let mut price = [0u8; 32];
    price[24..].copy_from_slice(&unit_price.to_be_bytes());
    if gas_price != price {
        return Err(PoolError::UnitPrice);
    }
    let sender = match tx {
        Transaction::Legacy(_) => signers.first().ok_or(PoolError::InvalidSignature)?.address,
        Transaction::ValueTransfer(t) => t.from,
        Transaction::AccountUpdate(t) => t.from,
    };
    let acct = account(&sender).map_err(PoolError::Key)?;
    if let Transaction::Legacy(_) = tx {
        if acct.key != AccountKey::Legacy {
            return Err(PoolError::LegacyKey);
        }
    } else if !acct.key.validates(role, sender, signers) {
        return Err(PoolError::InvalidKey);
    }
    if let Transaction::AccountUpdate(t) = tx {
        acct.key
            .replaced_by(&t.key)
            .map_err(|e| PoolError::Key(e.to_string()))?;
    }
    let gas_used = tx.intrinsic_gas() + acct.key.validation_gas(role, signers.len());
    if gas < gas_used {
        return Err(PoolError::IntrinsicGas);
    }
    let cost = mul_u64(&gas_price, gas)
        .and_then(|fee| add(&fee, &value))
        .ok_or(PoolError::InsufficientFunds)?;
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
