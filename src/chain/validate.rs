//! The checks every transaction passes, whether it enters the pool or arrives in a block to
//! import: size, no reserved recipient, a valid signature for this chain, the unit price,
//! the sender's account key for the transaction's role (a legacy transaction needs a legacy
//! key), the install rules of a new key, the intrinsic plus validation gas, and last the
//! rules of its type (a deploy has no recipient and runs EVM code; an execution goes to a
//! contract; a value transfer does not). What depends on where the transaction goes (its
//! nonce against the sender's next one, the balance left by earlier transactions) is the
//! caller's.
//!
//! The rules' refusals ([`InvalidTransaction`]) live here, with the texts the reference
//! gives; the pool wraps them in its own error, which adds what only a pool refuses (a
//! known transaction, a nonce taken, a full pool).

use super::state::{add, mul_u64, sub, Account};
use crate::crypto::Address;
use crate::types::account_key::{AccountKey, Role, Signer};
use crate::types::transaction::{Base, FeeMode, Transaction, TxError, U256};

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
    #[error("invalid sender: a legacy transaction must be with a legacy account key")]
    LegacyKey,
    #[error("invalid transaction v, r, s values")]
    InvalidSignature,
    #[error("intrinsic gas too low")]
    IntrinsicGas,
    #[error("insufficient funds of the sender for value ")]
    InsufficientFunds,
    #[error("the address is reserved for pre-compiled contracts")]
    Reserved,
    #[error("max initcode size exceeded: code size {0}, limit {MAX_INITCODE_SIZE}")]
    InitcodeSize(usize),
    #[error("contract deploy transaction can't have a recipient address")]
    DeployRecipient,
    #[error("Human-readable address is not supported now")]
    HumanReadable,
    #[error("smart contract code format is invalid")]
    CodeFormat,
    #[error("not a program account (e.g., an account having code and storage)")]
    NotProgramAccount,
    #[error("this type transaction cannot be sent to contract addresses")]
    NotForProgramAccount,
    #[error("{0}")]
    Key(String),
    #[error("invalid fee payer: {0}")]
    FeePayer(String),
    #[error("fee ratio is out of range [1, 99]")]
    FeeRatio,
    #[error("insufficient funds of the fee payer for gas * price")]
    FeePayerFunds,
    #[error("max fee per gas higher than max priority fee per gas")]
    TipAboveFeeCap,
    #[error("invalid gas tip cap. It must be set to the same value as gas unit price")]
    GasTipCap,
    #[error("invalid gas fee cap. It must be set to the same value as gas unit price")]
    GasFeeCap,
}

/// The largest creation code a transaction may carry (Shanghai: twice the code limit).
pub const MAX_INITCODE_SIZE: usize = 2 * 24_576;

/// An address in the reserved range `0x…0001`-`0x…03ff`.
pub fn reserved(a: &Address) -> bool {
    a.0[..18].iter().all(|&b| b == 0) && (a.0[18] != 0 || a.0[19] != 0) && a.0[18] <= 0x03
}

/// What checking a transaction established.
#[derive(Debug, Clone)]
pub struct Checked {
    pub sender: Address,
    pub nonce: u64,
    /// Intrinsic plus key-validation gas: what the transaction uses when it runs no code.
    pub gas_used: u64,
    /// The key-validation gas alone, the sender's and a fee payer's (charged on top of what
    /// running it costs).
    pub validation_gas: u64,
    /// A fee payer's key-validation gas (part of `validation_gas`).
    pub fee_payer_gas: u64,
    /// What the sender must hold: the value and its share of gas limit x gas price (all of
    /// it unless a fee payer pays; all of it too when it is its own fee payer).
    pub cost: U256,
    /// The raw encoding's length.
    pub size: usize,
}

/// Checks `tx` (its signers recovered beforehand: the costly part) against its sender's
/// account and its recipient's, which `account` reads. Returns what it established and the
/// sender's account.
pub fn check_tx(
    tx: &Transaction,
    signers: Result<&[Signer], &TxError>,
    chain_id: u64,
    unit_price: u64,
    size: usize,
    account: impl FnMut(&Address) -> Result<Account, String>,
) -> Result<(Checked, Account), InvalidTransaction> {
    let fee_payer_signers = tx.recovered_fee_payer();
    check_recovered(
        tx,
        signers,
        fee_payer_signers.as_deref(),
        chain_id,
        unit_price,
        size,
        account,
    )
}

/// [`check_tx`] with the fee payer's signers recovered beforehand too
/// (`Transaction::recovered_fee_payer`, empty unless fee-delegated): the pool recovers both
/// before it takes its lock.
pub fn check_recovered(
    tx: &Transaction,
    signers: Result<&[Signer], &TxError>,
    fee_payer_signers: Result<&[Signer], &TxError>,
    chain_id: u64,
    unit_price: u64,
    size: usize,
    mut account: impl FnMut(&Address) -> Result<Account, String>,
) -> Result<(Checked, Account), InvalidTransaction> {
    if tx.is_create() && tx.input().len() > MAX_INITCODE_SIZE {
        return Err(InvalidTransaction::InitcodeSize(tx.input().len()));
    }
    if size > MAX_TX_BYTES {
        return Err(InvalidTransaction::Oversized);
    }
    let role = tx.role();
    let (nonce, gas_price, gas, value) = (tx.nonce(), tx.gas_price(), tx.gas(), tx.value());
    // A transfer's or a legacy call's recipient may not be a precompile (an execution's is
    // no contract account: its own rule below says so).
    let transfer = matches!(
        tx.base(),
        Some(Base::ValueTransfer | Base::ValueTransferMemo)
    );
    if (transfer || !matches!(tx, Transaction::Native(_))) && tx.to().as_ref().is_some_and(reserved)
    {
        return Err(InvalidTransaction::Reserved);
    }
    let signers = signers.map_err(|_| InvalidTransaction::InvalidSignature)?;
    let sig_chain = tx.signature_chain_id();
    // Unprotected legacy transactions (V 27/28) carry no chain id.
    if sig_chain.is_some_and(|c| c != chain_id && c != 0) {
        return Err(InvalidTransaction::ChainId);
    }
    let price = crate::state::from_u64(unit_price);
    if let Transaction::Ethereum(t) = tx {
        if t.dynamic {
            if t.gas_fee_cap < t.gas_tip_cap {
                return Err(InvalidTransaction::TipAboveFeeCap);
            }
            if t.gas_tip_cap != price {
                return Err(InvalidTransaction::GasTipCap);
            }
            if t.gas_fee_cap != price {
                return Err(InvalidTransaction::GasFeeCap);
            }
        }
    }
    if gas_price != price {
        return Err(InvalidTransaction::UnitPrice);
    }
    let sender = match tx.from() {
        Some(from) => from,
        None => {
            signers
                .first()
                .ok_or(InvalidTransaction::InvalidSignature)?
                .address
        }
    };
    let acct = account(&sender).map_err(InvalidTransaction::Key)?;
    if tx.from().is_none() {
        if acct.key != AccountKey::Legacy {
            return Err(InvalidTransaction::LegacyKey);
        }
    } else if !acct.key.validates(role, sender, signers) {
        return Err(InvalidTransaction::InvalidKey);
    }
    if let Some(new) = tx.account_update_key() {
        acct.key
            .replaced_by(new)
            .map_err(|e| InvalidTransaction::Key(e.to_string()))?;
    }
    let mut validation_gas = acct.key.validation_gas(role, signers.len());
    let mut fee_payer_gas = 0;
    let fee = mul_u64(&gas_price, gas).ok_or(InvalidTransaction::InsufficientFunds)?;
    let percent = tx.fee_payer_percent();
    let cost = match tx.fee_payer() {
        None => add(&fee, &value),
        Some(payer) => {
            let payers =
                fee_payer_signers.map_err(|e| InvalidTransaction::FeePayer(e.to_string()))?;
            let payer_acct = if payer == sender {
                acct.clone()
            } else {
                account(&payer).map_err(InvalidTransaction::Key)?
            };
            if !payer_acct.key.validates(Role::FeePayer, payer, payers) {
                return Err(InvalidTransaction::FeePayer("invalid account key".into()));
            }
            fee_payer_gas = payer_acct.key.validation_gas(Role::FeePayer, payers.len());
            validation_gas += fee_payer_gas;
            if tx
                .native()
                .is_some_and(|t| matches!(t.fee_mode, FeeMode::Ratio(r) if !(1..=99).contains(&r)))
            {
                return Err(InvalidTransaction::FeeRatio);
            }
            let (by_payer, by_sender) = crate::state::split_fee(&fee, percent);
            if payer == sender {
                add(&fee, &value)
            } else {
                if sub(&payer_acct.balance, &by_payer).is_none() {
                    // The sender's part is checked by the caller, which knows what its
                    // earlier transactions leave; the reference checks the sender's first.
                    if add(&by_sender, &value).is_some_and(|c| sub(&acct.balance, &c).is_some()) {
                        return Err(InvalidTransaction::FeePayerFunds);
                    }
                    return Err(InvalidTransaction::InsufficientFunds);
                }
                add(&by_sender, &value)
            }
        }
    }
    .ok_or(InvalidTransaction::InsufficientFunds)?;
    let gas_used = tx.intrinsic_gas().saturating_add(validation_gas);
    if gas < gas_used {
        return Err(InvalidTransaction::IntrinsicGas);
    }
    check_type_rules(tx, sender, |a| account(a).map_err(InvalidTransaction::Key))?;
    Ok((
        Checked {
            sender,
            nonce,
            gas_used,
            validation_gas,
            fee_payer_gas,
            cost,
            size,
        },
        acct,
    ))
}

/// The rules of a transaction's type that depend on the state it runs in (the reference's
/// `Validate`): a deploy has no recipient, its contract's address is no precompile's, it is
/// not human-readable and its code format is the EVM's; an execution goes to an account with
/// code; a value transfer goes to no contract account. Checked on admission and again when
/// the transaction runs in a block (a contract may come or go in between).
pub fn check_type_rules(
    tx: &Transaction,
    sender: Address,
    mut account: impl FnMut(&Address) -> Result<Account, InvalidTransaction>,
) -> Result<(), InvalidTransaction> {
    let Some(t) = tx.native() else {
        return Ok(());
    };
    match t.base {
        Base::SmartContractDeploy => {
            if t.to.is_some() {
                return Err(InvalidTransaction::DeployRecipient);
            }
            if reserved(&crate::exec::create_address(&sender, t.nonce)) {
                return Err(InvalidTransaction::Reserved);
            }
            if t.human_readable {
                return Err(InvalidTransaction::HumanReadable);
            }
            if t.code_format != 0 {
                return Err(InvalidTransaction::CodeFormat);
            }
        }
        Base::SmartContractExecution => {
            let to = account(&t.to.unwrap_or(Address([0; 20])))?;
            if to.code_hash() == crate::state::EMPTY_CODE_HASH {
                return Err(InvalidTransaction::NotProgramAccount);
            }
        }
        Base::ValueTransfer | Base::ValueTransferMemo => {
            if account(&t.to.unwrap_or(Address([0; 20])))?
                .contract
                .is_some()
            {
                return Err(InvalidTransaction::NotForProgramAccount);
            }
        }
        Base::AccountUpdate | Base::Cancel | Base::ChainDataAnchoring => {}
    }
    Ok(())
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
