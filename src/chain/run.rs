//! A block's run: its transactions applied one after another to the accounts as the block
//! has left them so far, giving the accounts changed, the receipts, the gas used and the
//! fees credited to the rewardbase. Sealing runs the pool's transactions through it
//! (`seal.rs`, on the pool's view of the accounts) and an import runs each received block's
//! (`import.rs`, on the parent's state), so that both reach the same state from the same
//! transactions. It reads accounts through a closure and writes nothing: committing the
//! changes to the state trie is the caller's job.

use std::collections::HashMap;

use super::state::{self, Account};
use super::ChainError;
use crate::crypto::Address;
use crate::types::receipt::{Receipt, STATUS_SUCCESS};
use crate::types::transaction::Transaction;

/// The effects of a block's transactions while it is run: the accounts changed, the
/// receipts, the gas used and the fees owed to the rewardbase.
#[derive(Default)]
pub(crate) struct BlockRun {
    pub changed: HashMap<Address, Account>,
    pub receipts: Vec<Receipt>,
    pub gas: u64,
    fees: [u8; 32],
}

type ReadAccount<'a> = dyn FnMut(&Address) -> Result<Account, ChainError> + 'a;

impl BlockRun {
    /// `address`'s account as the block has left it so far.
    pub fn account(
        &self,
        address: &Address,
        read: &mut ReadAccount<'_>,
    ) -> Result<Account, ChainError> {
        match self.changed.get(address) {
            Some(a) => Ok(a.clone()),
            None => read(address),
        }
    }

    fn take(
        &mut self,
        address: &Address,
        read: &mut ReadAccount<'_>,
    ) -> Result<Account, ChainError> {
        match self.changed.remove(address) {
            Some(a) => Ok(a),
            None => read(address),
        }
    }

    /// Runs a checked transaction: the sender pays the value and `gas_used` x the gas price,
    /// its nonce moves on and, for an update, its key changes; the recipient gets the value.
    pub fn apply(
        &mut self,
        tx: &Transaction,
        sender: Address,
        gas_used: u64,
        read: &mut ReadAccount<'_>,
    ) -> Result<(), ChainError> {
        let (price, value, to, new_key) = match tx {
            Transaction::Legacy(t) => (t.gas_price, t.value, t.to, None),
            Transaction::ValueTransfer(t) => (t.gas_price, t.value, Some(t.to), None),
            Transaction::AccountUpdate(t) => (t.gas_price, [0; 32], None, Some(&t.key)),
        };
        let fee = state::mul_u64(&price, gas_used)
            .ok_or_else(|| ChainError::Corrupt("fee overflow".into()))?;
        let mut from = self.take(&sender, read)?;
        let cost =
            state::add(&fee, &value).ok_or_else(|| ChainError::Corrupt("cost overflow".into()))?;
        from.balance = state::sub(&from.balance, &cost)
            .ok_or_else(|| ChainError::Corrupt("a checked transaction overdraws".into()))?;
        from.nonce += 1;
        if let Some(k) = new_key {
            from.key = from.key.replaced_by(k).unwrap_or(from.key.clone());
        }
        self.changed.insert(sender, from);
        if let Some(to) = to {
            let mut r = self.take(&to, read)?;
            r.balance = state::add(&r.balance, &value)
                .ok_or_else(|| ChainError::Corrupt("balance overflow".into()))?;
            self.changed.insert(to, r);
        }
        self.fees = state::add(&self.fees, &fee).unwrap_or(self.fees);
        self.gas += gas_used;
        self.receipts.push(Receipt {
            status: STATUS_SUCCESS,
            gas_used,
            logs: Vec::new(),
        });
        Ok(())
    }

    /// Credits the fees to `rewardbase`: the accounts changed, the receipts, the gas used.
    #[allow(clippy::type_complexity)]
    pub fn finish(
        mut self,
        rewardbase: Address,
        read: &mut ReadAccount<'_>,
    ) -> Result<(HashMap<Address, Account>, Vec<Receipt>, u64), ChainError> {
        let mut reward = self.take(&rewardbase, read)?;
        reward.balance = state::add(&reward.balance, &self.fees).unwrap_or(reward.balance);
        self.changed.insert(rewardbase, reward);
        Ok((self.changed, self.receipts, self.gas))
    }
}
