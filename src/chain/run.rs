//! A block's run: its transactions, each checked against the state the block has reached
//! (nonce, funds, the rules of its type), then executed (`exec`) one after another, giving
//! the block's changes, receipts and gas. Sealing runs the pool's transactions through it
//! (`seal.rs`, over the head's state with the pool's cached accounts in front) and an import
//! runs each received block's (`import.rs`, over the parent's state), so that both reach
//! the same state from the same transactions; tracing runs a sealed block's again
//! (`trace.rs`), with an inspector watching. It writes nothing: committing the changes to
//! the tries is the caller's job.

use std::collections::HashMap;

use super::state::{self, Account, Changes, StateError};
use super::validate::{check_type_rules, InvalidTransaction};
use super::ChainError;
use crate::crypto::Address;
use crate::exec::{BlockExec, Env, ExecError, Outcome, Source, StateSource};
use crate::trie::NodeStore;
use crate::types::receipt::Receipt;
use crate::types::transaction::{Transaction, U256};

type Hash = [u8; 32];

impl From<ExecError> for ChainError {
    fn from(e: ExecError) -> ChainError {
        match e {
            ExecError::State(s) => ChainError::State(s),
            ExecError::Refused(why) => ChainError::Corrupt(why),
        }
    }
}

/// A [`Source`] over a state with a cache of externally owned accounts in front (the
/// pool's view of the head, which sealing reads to save walking the trie for every sender).
/// Only accounts that exist, hold something and have no code are taken from the cache: an
/// empty one may be absent (execution tells the two apart), and a contract's storage root
/// must come from the trie.
pub(crate) struct CachedSource<'a, S: Source> {
    pub cache: &'a HashMap<Address, Account>,
    pub state: S,
}

impl<S: Source> Source for CachedSource<'_, S> {
    fn account(&mut self, address: &Address) -> Result<Option<Account>, StateError> {
        match self.cache.get(address) {
            Some(a) if !a.is_empty() && a.contract.is_none() => Ok(Some(a.clone())),
            _ => self.state.account(address),
        }
    }

    fn storage(&mut self, root: &Hash, slot: &U256) -> Result<U256, StateError> {
        self.state.storage(root, slot)
    }

    fn code(&mut self, hash: &Hash) -> Result<Vec<u8>, StateError> {
        self.state.code(hash)
    }

    fn block_hash(&mut self, number: u64) -> Option<Hash> {
        self.state.block_hash(number)
    }
}

/// A state source over `store` at `root`, with block hashes from `hashes`.
pub(crate) fn state_source<N: NodeStore, F: FnMut(u64) -> Option<Hash>>(
    store: N,
    root: Hash,
    hashes: F,
) -> StateSource<N, F> {
    StateSource::new(store, root, hashes)
}

/// Why a transaction cannot run where the block has got to.
#[derive(Debug)]
pub(crate) enum Unfit {
    /// Its nonce is not the sender's next one.
    Nonce { tx: u64, account: u64 },
    /// The sender cannot pay for it, or the rules of its type refuse it.
    Invalid(InvalidTransaction),
    /// The state could not be read.
    Failed(ChainError),
}

impl std::fmt::Display for Unfit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unfit::Nonce { tx, account } => {
                write!(f, "nonce {tx} where the sender's is {account}")
            }
            Unfit::Invalid(e) => write!(f, "{e}"),
            Unfit::Failed(e) => write!(f, "{e}"),
        }
    }
}

/// The block being run.
pub(crate) struct BlockRun<S: Source> {
    exec: BlockExec<S>,
}

impl<S: Source> BlockRun<S> {
    pub fn new(env: Env, source: S) -> BlockRun<S> {
        BlockRun {
            exec: BlockExec::new(env, source),
        }
    }

    /// `address`'s account as the block has left it so far.
    pub fn account(&mut self, address: &Address) -> Result<Account, ChainError> {
        Ok(self.exec.account(address)?)
    }

    /// Whether `tx` of `sender`, needing `cost` (gas limit x price + value), may run now:
    /// its nonce is the sender's next, the sender can pay, and its type's rules hold.
    pub fn fits(&mut self, tx: &Transaction, sender: Address, cost: &U256) -> Result<(), Unfit> {
        let acct = self.account(&sender).map_err(Unfit::Failed)?;
        if tx.nonce() != acct.nonce {
            return Err(Unfit::Nonce {
                tx: tx.nonce(),
                account: acct.nonce,
            });
        }
        if state::sub(&acct.balance, cost).is_none() {
            return Err(Unfit::Invalid(InvalidTransaction::InsufficientFunds));
        }
        if let Some(payer) = tx.fee_payer().filter(|p| *p != sender) {
            let fee = state::mul_u64(&tx.gas_price(), tx.gas()).unwrap_or([0xff; 32]);
            let (by_payer, _) = state::split_fee(&fee, tx.fee_payer_percent());
            let acct = self.account(&payer).map_err(Unfit::Failed)?;
            if state::sub(&acct.balance, &by_payer).is_none() {
                return Err(Unfit::Invalid(InvalidTransaction::FeePayerFunds));
            }
        }
        let mut failed = None;
        let rules = check_type_rules(tx, sender, |a| {
            self.account(a).map_err(|e| {
                let text = e.to_string();
                failed = Some(e);
                InvalidTransaction::Key(text)
            })
        });
        if let Some(e) = failed {
            return Err(Unfit::Failed(e));
        }
        rules.map_err(Unfit::Invalid)
    }

    /// Runs a transaction that [`BlockRun::fits`]: `plain_gas` is what it uses when no code
    /// runs (intrinsic plus key-validation gas), `validation_gas` the key-validation part.
    pub fn apply(
        &mut self,
        tx: &Transaction,
        sender: Address,
        plain_gas: u64,
        validation_gas: u64,
    ) -> Result<Outcome, ChainError> {
        Ok(self.exec.run(tx, sender, plain_gas, validation_gas)?)
    }

    /// Runs a transaction that [`BlockRun::fits`] as [`BlockRun::apply`] does, with
    /// `inspector` watching the EVM (tracing): its outcome, the inspector, and whether the
    /// EVM ran (a transaction that runs no code is not shown to the inspector).
    pub fn apply_inspected<'o, I>(
        &'o mut self,
        tx: &Transaction,
        sender: Address,
        plain_gas: u64,
        validation_gas: u64,
        inspector: I,
    ) -> Result<(Outcome, I, bool), ChainError>
    where
        I: revm::Inspector<
            revm::context::Context<
                revm::context::BlockEnv,
                revm::context::TxEnv,
                revm::context::CfgEnv,
                &'o mut crate::exec::Overlay<S>,
            >,
        >,
    {
        Ok(self
            .exec
            .run_inspected(tx, sender, plain_gas, validation_gas, inspector)?)
    }

    /// The block's changes, receipts and gas used.
    pub fn finish(self) -> (Changes, Vec<Receipt>, u64) {
        self.exec.finish()
    }
}
