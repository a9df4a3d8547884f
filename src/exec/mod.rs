//! Execution: a block's transactions, or one call, run on the EVM (`revm`, the EVM of reth
//! and foundry) over the state, with the reference's rules where they differ from
//! Ethereum's (gas for call data and contract creation, no base fee, its receipt status
//! codes).
//!
//! Execution reads the state only through a [`Source`] (an account, a storage slot by
//! the storage root it belongs to, code by hash, a block hash) and hands back what it
//! changed as a [`state::Changes`], with a receipt per transaction; `chain` checks the
//! transactions before (nonce, signature, key, funds: `chain::validate`) and commits the
//! changes after. Neither sealing nor the pool knows an opcode; this module knows no pool,
//! no database and no block.
//!
//! Transactions that run no code (a transfer to an account without code, an account update)
//! take a short path that does the arithmetic itself; everything else goes through the EVM.
//! Both leave the same kind of changes, and sealing and import run the same code, so a
//! block's state root is the same wherever it is run.

pub mod accesslist;
pub mod cost;
pub mod db;
#[cfg(test)]
pub(crate) mod fixtures;
pub mod gas;
mod message;
pub mod trace;

use revm::context::result::{ExecutionResult, HaltReason, OutOfGasError, Output};
use revm::context::{BlockEnv, CfgEnv, Context, TxEnv};
use revm::context_interface::block::BlobExcessGasAndPrice;
use revm::handler::{ExecuteEvm, MainBuilder, MainnetEvm};
use revm::primitives::hardfork::SpecId;
use revm::primitives::{Bytes, TxKind, B256, U256 as RU256};

use crate::crypto::{keccak256, Address};
use crate::state::{self, Account, Changes, StateError};
use crate::types::receipt::{Log, Receipt, STATUS_SUCCESS};
use crate::types::rlp::{list, put_bytes, put_u64};
use crate::types::transaction::{Base, Transaction, U256};
pub use db::{AccountOverride, Overlay, Source, StateSource};
pub use message::{call, call_overridden, CallError, Message};

/// The hard fork whose EVM runs here: the reference's latest, Cancun-compatible.
pub const SPEC: SpecId = SpecId::CANCUN;

/// The version the reference's EVM gives contracts created since its Istanbul-compatible
/// fork (kept in the contract account).
pub const VM_VERSION: u8 = 1;

/// The reference's receipt status codes for failed transactions (`txError`).
pub mod status {
    pub const ERR_DEFAULT: u64 = 0x02;
    pub const ERR_DEPTH: u64 = 0x03;
    pub const ERR_CONTRACT_ADDRESS_COLLISION: u64 = 0x04;
    pub const ERR_CODE_STORE_OUT_OF_GAS: u64 = 0x05;
    pub const ERR_MAX_CODE_SIZE_EXCEED: u64 = 0x06;
    pub const ERR_OUT_OF_GAS: u64 = 0x07;
    pub const ERR_WRITE_PROTECTION: u64 = 0x08;
    pub const ERR_EXECUTION_REVERTED: u64 = 0x09;
    pub const ERR_ADDRESS_ALREADY_EXISTS: u64 = 0x0b;
    pub const ERR_NOT_A_PROGRAM_ACCOUNT: u64 = 0x0c;

    /// The reference's text of a failed status (what `chain_call` answers for it).
    pub fn text(status: u64) -> &'static str {
        match status {
            ERR_DEPTH => "max call depth exceeded",
            ERR_CONTRACT_ADDRESS_COLLISION => "contract address collision",
            ERR_CODE_STORE_OUT_OF_GAS => "contract creation code storage out of gas",
            ERR_MAX_CODE_SIZE_EXCEED => "evm: max code size exceeded",
            ERR_OUT_OF_GAS => "out of gas",
            ERR_WRITE_PROTECTION => "evm: write protection",
            ERR_EXECUTION_REVERTED => "evm: execution reverted",
            0x0a => "reached the opcode computation cost limit",
            ERR_ADDRESS_ALREADY_EXISTS => "account already exists",
            ERR_NOT_A_PROGRAM_ACCOUNT => {
                "not a program account (e.g., an account having code and storage)"
            }
            _ => "VM error occurs while running smart contract",
        }
    }
}

/// The block a transaction runs in.
#[derive(Debug, Clone, Copy)]
pub struct Env {
    pub number: u64,
    pub timestamp: u64,
    /// Receives the fees (COINBASE).
    pub rewardbase: Address,
    /// The parent block's hash: what PREVRANDAO answers on a chain without Randao.
    pub parent_hash: [u8; 32],
    pub chain_id: u64,
}

/// Why execution could not go on: the state could not be read (a missing node, a corrupt
/// record), or the EVM refused a transaction that the checks before had passed (a bug, or
/// a block that lies).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExecError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error("the EVM refused the transaction: {0}")]
    Refused(String),
}

impl revm::database_interface::DBErrorMarker for ExecError {}

/// What one transaction did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Its receipt (status 1, or the reference's error code).
    pub receipt: Receipt,
    /// What the EVM returned (the revert data when reverted).
    pub output: Vec<u8>,
    /// The contract it created, when it created one.
    pub contract: Option<Address>,
}

impl Outcome {
    pub fn succeeded(&self) -> bool {
        self.receipt.status == STATUS_SUCCESS
    }
}

/// The address a contract created by `sender` with `nonce` gets (CREATE).
pub fn create_address(sender: &Address, nonce: u64) -> Address {
    let mut p = Vec::with_capacity(32);
    put_bytes(&mut p, &sender.0);
    put_u64(&mut p, nonce);
    let h = keccak256(&list(&p));
    Address(h[12..].try_into().expect("20 bytes"))
}

fn raddr(a: &Address) -> revm::primitives::Address {
    revm::primitives::Address::from(a.0)
}

fn from_raddr(a: &revm::primitives::Address) -> Address {
    Address(a.0 .0)
}

fn ru256(v: &U256) -> RU256 {
    RU256::from_be_bytes(*v)
}

/// The reference's receipt status for an EVM halt.
fn halt_status(reason: &HaltReason) -> u64 {
    match reason {
        HaltReason::OutOfGas(OutOfGasError::InvalidOperand) => status::ERR_DEFAULT,
        HaltReason::OutOfGas(_) => status::ERR_OUT_OF_GAS,
        HaltReason::CallTooDeep => status::ERR_DEPTH,
        HaltReason::CreateCollision => status::ERR_CONTRACT_ADDRESS_COLLISION,
        HaltReason::CreateContractSizeLimit => status::ERR_MAX_CODE_SIZE_EXCEED,
        HaltReason::StateChangeDuringStaticCall | HaltReason::CallNotAllowedInsideStatic => {
            status::ERR_WRITE_PROTECTION
        }
        _ => status::ERR_DEFAULT,
    }
}

/// The configuration every EVM here runs with.
fn cfg(chain_id: u64) -> CfgEnv {
    let mut cfg = CfgEnv::new_with_spec(SPEC);
    cfg.set_gas_params(gas::params());
    cfg.chain_id = chain_id;
    // Transactions here carry the chain id in V only; the pool has checked it.
    cfg.tx_chain_id_check = false;
    // The reference's blocks have no gas limit (GASLIMIT answers 0).
    cfg.disable_block_gas_limit = true;
    cfg
}

fn block_env(env: &Env) -> BlockEnv {
    BlockEnv {
        number: RU256::from(env.number),
        beneficiary: raddr(&env.rewardbase),
        timestamp: RU256::from(env.timestamp),
        // What the reference's EVM answers: GASLIMIT 0 (its blocks have none), BASEFEE 0
        // (before Magma), PREVRANDAO the parent's hash (since Kore, without Randao),
        // BLOBBASEFEE 0.
        gas_limit: 0,
        basefee: 0,
        difficulty: RU256::from(1),
        prevrandao: Some(B256::from(env.parent_hash)),
        blob_excess_gas_and_price: Some(BlobExcessGasAndPrice {
            excess_blob_gas: 0,
            blob_gasprice: 0,
        }),
        ..BlockEnv::default()
    }
}

type Evm<S> = MainnetEvm<Context<BlockEnv, TxEnv, CfgEnv, Overlay<S>>>;

/// Runs the transactions of one block, in order, over `S`.
pub struct BlockExec<S: Source> {
    env: Env,
    evm: Evm<S>,
    receipts: Vec<Receipt>,
    gas: u64,
}

/// How a transaction is run.
enum Path {
    /// No code runs: the value moves, the fee is paid, the nonce moves on (and, for an
    /// account update, the key changes).
    Plain,
    /// The EVM runs it.
    Evm,
}

impl<S: Source> BlockExec<S> {
    /// A block `env` over the state `source` reads.
    pub fn new(env: Env, source: S) -> BlockExec<S> {
        let ctx = Context::<BlockEnv, TxEnv, CfgEnv, Overlay<S>>::new(Overlay::new(source), SPEC)
            .with_cfg(cfg(env.chain_id))
            .with_block(block_env(&env));
        BlockExec {
            env,
            evm: ctx.build_mainnet(),
            receipts: Vec::new(),
            gas: 0,
        }
    }

    fn overlay(&mut self) -> &mut Overlay<S> {
        &mut self.evm.ctx.journaled_state.database
    }

    /// `address`'s account as the block has left it so far.
    pub fn account(&mut self, address: &Address) -> Result<Account, ExecError> {
        Ok(self.overlay().account(address)?.unwrap_or_default())
    }

    /// The gas the block's transactions used so far.
    pub fn gas_used(&self) -> u64 {
        self.gas
    }

    /// Runs a checked transaction of `sender`: its nonce is the account's and its funds
    /// cover gas limit x price + value (`chain::validate` made sure). `validation_gas` is
    /// what checking its signatures against the sender's key cost (charged on top of what
    /// running it costs); `plain_gas` what it uses when no code runs (intrinsic plus
    /// validation gas). Returns its outcome; the receipt is kept for [`BlockExec::finish`].
    pub fn run(
        &mut self,
        tx: &Transaction,
        sender: Address,
        plain_gas: u64,
        validation_gas: u64,
    ) -> Result<Outcome, ExecError> {
        let outcome = match (self.path(tx)?, tx.fee_payer()) {
            (Path::Plain, None) => self.run_plain(tx, sender, plain_gas)?,
            (Path::Evm, None) => self.run_evm(tx, sender, validation_gas)?,
            (path, Some(payer)) => {
                self.run_delegated(tx, sender, payer, path, plain_gas, validation_gas)?
            }
        };
        self.gas += outcome.receipt.gas_used;
        self.receipts.push(outcome.receipt.clone());
        Ok(outcome)
    }

    /// Whether `tx` runs code.
    fn path(&mut self, tx: &Transaction) -> Result<Path, ExecError> {
        Ok(match tx.base() {
            Some(Base::SmartContractDeploy | Base::SmartContractExecution) => Path::Evm,
            // Transfers (with or without a memo) go to no contract (the rules refused it);
            // the other native types run no code.
            Some(_) => Path::Plain,
            None => match tx.to() {
                Some(to) if tx.input().is_empty() && !self.overlay().has_code(&to)? => Path::Plain,
                _ => Path::Evm,
            },
        })
    }

    /// Runs `tx` as [`BlockExec::run`] does, with `inspector` watching the EVM (tracing).
    /// Returns its outcome, the inspector, and whether the EVM ran: a transaction that runs
    /// no code (a transfer to an account without code, an account update) is not shown to it.
    pub fn run_inspected<'o, I>(
        &'o mut self,
        tx: &Transaction,
        sender: Address,
        plain_gas: u64,
        validation_gas: u64,
        inspector: I,
    ) -> Result<(Outcome, I, bool), ExecError>
    where
        I: revm::Inspector<Context<BlockEnv, TxEnv, CfgEnv, &'o mut Overlay<S>>>,
    {
        use revm::InspectEvm;
        if matches!(self.path(tx)?, Path::Plain) {
            return Ok((
                self.run(tx, sender, plain_gas, validation_gas)?,
                inspector,
                false,
            ));
        }
        // As `run_evm`, or as `run_delegated` for a fee-delegated transaction: the fee taken
        // up front by the ratio, the EVM charging none itself, the rest settled after.
        let payer = tx.fee_payer();
        let evm_validation_gas = match payer {
            Some(payer) => {
                buy_gas(self.overlay(), tx, sender, payer)?;
                validation_gas + tx.delegation_gas()
            }
            None => {
                self.charge_validation(tx, sender, validation_gas)?;
                validation_gas
            }
        };
        let created = tx.is_create().then(|| create_address(&sender, tx.nonce()));
        let txenv = tx_env(tx, sender, evm_validation_gas);
        // An EVM of its own over the block's overlay: between transactions the block's EVM
        // keeps nothing that the overlay does not hold.
        let BlockExec {
            env,
            evm,
            receipts,
            gas,
        } = self;
        let overlay = &mut evm.ctx.journaled_state.database;
        let mut evm_cfg = cfg(env.chain_id);
        evm_cfg.disable_fee_charge = payer.is_some();
        let ctx = Context::<BlockEnv, TxEnv, CfgEnv, &'o mut Overlay<S>>::new(overlay, SPEC)
            .with_cfg(evm_cfg)
            .with_block(block_env(env));
        let mut evm = ctx.build_mainnet_with_inspector(inspector);
        let done = evm
            .inspect_tx(txenv)
            .map_err(|e| ExecError::Refused(format!("{e:?}")));
        let inspector = evm.inspector;
        let overlay = evm.ctx.journaled_state.database;
        let done = done?;
        overlay.commit_evm(done.state)?;
        let outcome = outcome_of(done.result, evm_validation_gas, created);
        if let Some(payer) = payer {
            refund_gas(
                overlay,
                env.rewardbase,
                tx,
                sender,
                payer,
                outcome.receipt.gas_used,
            )?;
        }
        *gas += outcome.receipt.gas_used;
        receipts.push(outcome.receipt.clone());
        Ok((outcome, inspector, true))
    }

    fn run_plain(
        &mut self,
        tx: &Transaction,
        sender: Address,
        gas_used: u64,
    ) -> Result<Outcome, ExecError> {
        let corrupt = |what: &str| ExecError::Refused(what.to_string());
        let price = tx.gas_price();
        let value = tx.value();
        let fee = state::mul_u64(&price, gas_used).ok_or_else(|| corrupt("fee overflow"))?;
        let cost = state::add(&fee, &value).ok_or_else(|| corrupt("cost overflow"))?;
        let overlay = self.overlay();
        let mut from = overlay.account(&sender)?.unwrap_or_default();
        from.balance = state::sub(&from.balance, &cost)
            .ok_or_else(|| corrupt("a checked transaction overdraws"))?;
        from.nonce += 1;
        if let Some(new) = tx.account_update_key() {
            from.key = from.key.replaced_by(new).unwrap_or(from.key.clone());
        }
        overlay.put(sender, from);
        if let Some(to) = tx.to() {
            let mut r = overlay.account(&to)?.unwrap_or_default();
            r.balance =
                state::add(&r.balance, &value).ok_or_else(|| corrupt("balance overflow"))?;
            overlay.put(to, r);
        }
        let rewardbase = self.env.rewardbase;
        let overlay = self.overlay();
        let mut reward = overlay.account(&rewardbase)?.unwrap_or_default();
        reward.balance = state::add(&reward.balance, &fee).unwrap_or(reward.balance);
        overlay.put(rewardbase, reward);
        Ok(Outcome {
            receipt: Receipt {
                status: STATUS_SUCCESS,
                gas_used,
                logs: Vec::new(),
            },
            output: Vec::new(),
            contract: None,
        })
    }

    fn run_evm(
        &mut self,
        tx: &Transaction,
        sender: Address,
        validation_gas: u64,
    ) -> Result<Outcome, ExecError> {
        self.charge_validation(tx, sender, validation_gas)?;
        let created = tx.is_create().then(|| create_address(&sender, tx.nonce()));
        let txenv = tx_env(tx, sender, validation_gas);
        let done = self
            .evm
            .transact(txenv)
            .map_err(|e| ExecError::Refused(format!("{e:?}")))?;
        let result = done.result;
        self.overlay().commit_evm(done.state)?;
        Ok(outcome_of(result, validation_gas, created))
    }

    /// Runs a fee-delegated transaction as the reference does: gas limit x price is taken
    /// up front from the fee payer and the sender by the fee ratio (the fee payer's part
    /// rounded down), the transaction runs (the EVM charging no fee itself), what is left
    /// of the limit is given back by the same ratio, and the fee for the gas used goes to
    /// the rewardbase.
    fn run_delegated(
        &mut self,
        tx: &Transaction,
        sender: Address,
        payer: Address,
        path: Path,
        plain_gas: u64,
        validation_gas: u64,
    ) -> Result<Outcome, ExecError> {
        let corrupt = |what: &str| ExecError::Refused(what.to_string());
        buy_gas(self.overlay(), tx, sender, payer)?;
        let outcome = match path {
            Path::Plain => {
                let overlay = self.overlay();
                let mut from = overlay.account(&sender)?.unwrap_or_default();
                let value = tx.value();
                from.balance = state::sub(&from.balance, &value)
                    .ok_or_else(|| corrupt("a checked transaction overdraws"))?;
                from.nonce += 1;
                if let Some(new) = tx.account_update_key() {
                    from.key = from.key.replaced_by(new).unwrap_or(from.key.clone());
                }
                overlay.put(sender, from);
                if let Some(to) = tx.to() {
                    move_balance(overlay, &to, &value, true)?;
                }
                Outcome {
                    receipt: Receipt {
                        status: STATUS_SUCCESS,
                        gas_used: plain_gas,
                        logs: Vec::new(),
                    },
                    output: Vec::new(),
                    contract: None,
                }
            }
            Path::Evm => {
                let validation_gas = validation_gas + tx.delegation_gas();
                let created = tx.is_create().then(|| create_address(&sender, tx.nonce()));
                let txenv = tx_env(tx, sender, validation_gas);
                self.evm.ctx.cfg.disable_fee_charge = true;
                let done = self.evm.transact(txenv);
                self.evm.ctx.cfg.disable_fee_charge = false;
                let done = done.map_err(|e| ExecError::Refused(format!("{e:?}")))?;
                let result = done.result;
                self.overlay().commit_evm(done.state)?;
                outcome_of(result, validation_gas, created)
            }
        };
        let rewardbase = self.env.rewardbase;
        refund_gas(
            self.overlay(),
            rewardbase,
            tx,
            sender,
            payer,
            outcome.receipt.gas_used,
        )?;
        Ok(outcome)
    }

    /// Charges the key-validation gas, which is paid apart: the EVM gets the rest of the
    /// limit.
    fn charge_validation(
        &mut self,
        tx: &Transaction,
        sender: Address,
        validation_gas: u64,
    ) -> Result<(), ExecError> {
        if validation_gas == 0 {
            return Ok(());
        }
        let fee = state::mul_u64(&tx.gas_price(), validation_gas)
            .ok_or_else(|| ExecError::Refused("fee overflow".into()))?;
        let rewardbase = self.env.rewardbase;
        let overlay = self.overlay();
        let mut from = overlay.account(&sender)?.unwrap_or_default();
        from.balance = state::sub(&from.balance, &fee)
            .ok_or_else(|| ExecError::Refused("a checked transaction overdraws".into()))?;
        overlay.put(sender, from);
        let mut reward = overlay.account(&rewardbase)?.unwrap_or_default();
        reward.balance = state::add(&reward.balance, &fee).unwrap_or(reward.balance);
        overlay.put(rewardbase, reward);
        Ok(())
    }

    /// The block's changes, its receipts and the gas it used.
    pub fn finish(mut self) -> (Changes, Vec<Receipt>, u64) {
        let changes = self.overlay().take_changes();
        (changes, self.receipts, self.gas)
    }
}

/// Takes gas limit x price of a fee-delegated `tx` up front from `payer` and `sender` by the
/// fee ratio, the fee payer's part rounded down (the reference's `buyGas`).
fn buy_gas<S: Source>(
    overlay: &mut Overlay<S>,
    tx: &Transaction,
    sender: Address,
    payer: Address,
) -> Result<(), ExecError> {
    let upfront = state::mul_u64(&tx.gas_price(), tx.gas())
        .ok_or_else(|| ExecError::Refused("fee overflow".into()))?;
    let (by_payer, by_sender) = state::split_fee(&upfront, tx.fee_payer_percent());
    move_balance(overlay, &payer, &by_payer, false)?;
    move_balance(overlay, &sender, &by_sender, false)
}

/// Gives back what a fee-delegated `tx` left of its gas limit (`used` spent), split by the
/// same ratio, and pays `rewardbase` the fee for the gas used (the reference's `refundGas`).
fn refund_gas<S: Source>(
    overlay: &mut Overlay<S>,
    rewardbase: Address,
    tx: &Transaction,
    sender: Address,
    payer: Address,
    used: u64,
) -> Result<(), ExecError> {
    let overflow = || ExecError::Refused("fee overflow".into());
    let price = tx.gas_price();
    let left = state::mul_u64(&price, tx.gas().saturating_sub(used)).ok_or_else(overflow)?;
    let (back_to_payer, back_to_sender) = state::split_fee(&left, tx.fee_payer_percent());
    move_balance(overlay, &payer, &back_to_payer, true)?;
    move_balance(overlay, &sender, &back_to_sender, true)?;
    let fee = state::mul_u64(&price, used).ok_or_else(overflow)?;
    move_balance(overlay, &rewardbase, &fee, true)
}

/// Adds `amount` to `who`'s balance (`credit`) or takes it (a checked transaction's funds
/// cover it).
fn move_balance<S: Source>(
    overlay: &mut Overlay<S>,
    who: &Address,
    amount: &U256,
    credit: bool,
) -> Result<(), ExecError> {
    if amount.iter().all(|&b| b == 0) {
        return Ok(());
    }
    let mut a = overlay.account(who)?.unwrap_or_default();
    a.balance = if credit {
        state::add(&a.balance, amount).unwrap_or(a.balance)
    } else {
        state::sub(&a.balance, amount)
            .ok_or_else(|| ExecError::Refused("a checked transaction overdraws".into()))?
    };
    overlay.put(*who, a);
    Ok(())
}

/// The EVM's view of `tx` from `sender`, whose key-validation gas is paid apart.
fn tx_env(tx: &Transaction, sender: Address, validation_gas: u64) -> TxEnv {
    let price = tx.gas_price();
    TxEnv {
        // revm warms and charges an access list only for a typed transaction; EIP-2930's
        // type is the legacy one plus the list (an EIP-1559 transaction's price is its fee
        // cap here: there is no base fee).
        tx_type: match tx {
            Transaction::Ethereum(_) => 1,
            _ => 0,
        },
        caller: raddr(&sender),
        gas_limit: tx.gas() - validation_gas,
        gas_price: u128::from_be_bytes(price[16..].try_into().expect("16 bytes")),
        kind: match tx.to() {
            Some(to) => TxKind::Call(raddr(&to)),
            None => TxKind::Create,
        },
        value: ru256(&tx.value()),
        data: Bytes::copy_from_slice(tx.input()),
        nonce: tx.nonce(),
        chain_id: None,
        access_list: match tx {
            Transaction::Ethereum(t) => access_list(&t.access_list),
            _ => Default::default(),
        },
        ..TxEnv::default()
    }
}

/// An access list as revm takes it.
fn access_list(
    list: &[crate::types::transaction::AccessTuple],
) -> revm::context::transaction::AccessList {
    revm::context::transaction::AccessList(
        list.iter()
            .map(|e| revm::context::transaction::AccessListItem {
                address: raddr(&e.address),
                storage_keys: e.storage_keys.iter().map(|k| B256::from(*k)).collect(),
            })
            .collect(),
    )
}

/// The outcome of an EVM result: receipt status, gas (plus `extra_gas`, charged apart),
/// logs, output. `created` is the address a successful creation made (when known).
fn outcome_of(result: ExecutionResult, extra_gas: u64, created: Option<Address>) -> Outcome {
    let gas_used = result.tx_gas_used() + extra_gas;
    let (status, output, logs) = match result {
        ExecutionResult::Success { logs, output, .. } => {
            let (out, address) = match output {
                Output::Call(b) => (b.to_vec(), None),
                Output::Create(b, a) => (b.to_vec(), a),
            };
            let _ = address;
            (STATUS_SUCCESS, out, logs)
        }
        ExecutionResult::Revert { output, .. } => {
            (status::ERR_EXECUTION_REVERTED, output.to_vec(), Vec::new())
        }
        ExecutionResult::Halt { reason, .. } => (halt_status(&reason), Vec::new(), Vec::new()),
    };
    let logs = logs
        .into_iter()
        .map(|l| Log {
            address: from_raddr(&l.address),
            topics: l.data.topics().iter().map(|t| t.0).collect(),
            data: l.data.data.to_vec(),
        })
        .collect();
    Outcome {
        receipt: Receipt {
            status,
            gas_used,
            logs,
        },
        output,
        contract: created.filter(|_| status == STATUS_SUCCESS),
    }
}

/// The reason a revert's data gives, when it is `Error(string)` (selector 0x08c379a0).
pub fn revert_reason(data: &[u8]) -> Option<String> {
    let body = data.strip_prefix(&[0x08, 0xc3, 0x79, 0xa0][..])?;
    let word = |i: usize| -> Option<usize> {
        let w = body.get(i..i + 32)?;
        if w[..24].iter().any(|&b| b != 0) {
            return None;
        }
        usize::try_from(u64::from_be_bytes(w[24..].try_into().ok()?)).ok()
    };
    let offset = word(0)?;
    let len = word(offset)?;
    let start = offset.checked_add(32)?;
    let text = body.get(start..start.checked_add(len)?)?;
    String::from_utf8(text.to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::fixtures::{creation_code, env, legacy, rich_world, PRICE};
    use super::*;
    use crate::crypto::SecretKey;
    use crate::state::State;
    use crate::trie::MemoryStore;
    use crate::types::account_key::AccountKey;

    struct World {
        store: MemoryStore,
        root: [u8; 32],
        number: u64,
    }

    impl World {
        /// One funded account.
        fn new(rich: Address) -> World {
            let (store, root) = rich_world(rich);
            World {
                store,
                root,
                number: 0,
            }
        }

        /// Runs `txs` as the next block and stores its state.
        fn block(&mut self, txs: &[(Transaction, Address)]) -> Vec<Outcome> {
            self.number += 1;
            let source = StateSource::new(&self.store, self.root, |_| None);
            let mut exec = BlockExec::new(env(self.number), source);
            let mut out = Vec::new();
            for (tx, sender) in txs {
                out.push(exec.run(tx, *sender, tx.intrinsic_gas(), 0).unwrap());
            }
            let (changes, receipts, gas) = exec.finish();
            assert_eq!(receipts.len(), txs.len());
            assert_eq!(gas, out.iter().map(|o| o.receipt.gas_used).sum::<u64>());
            let mut s = State::at(&self.store, self.root);
            let mut nodes = s.apply(&changes).unwrap();
            let (root, n) = s.commit();
            nodes.extend(n);
            drop(s);
            self.store.apply(nodes);
            self.root = root;
            out
        }

        fn state(&self) -> State<'_> {
            State::at(&self.store, self.root)
        }
    }

    fn word(n: u64) -> U256 {
        state::from_u64(n)
    }

    /// A contract deployed by a legacy creation runs when called: its storage, its event,
    /// the gas (100 per byte of input), the fees to the rewardbase, all in the state.
    #[test]
    fn a_contract_is_deployed_called_and_its_state_kept() {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let me = key.address();
        let mut w = World::new(me);
        let code = creation_code("Counter");
        let deploy = legacy(&key, 0, None, code.clone(), 500_000);
        let out = w.block(&[(deploy, me)]);
        let counter = create_address(&me, 0);
        assert!(out[0].succeeded(), "{:?}", out[0]);
        assert_eq!(out[0].contract, Some(counter));
        let stored = w.state().account(&counter).unwrap();
        assert_eq!(stored.key, AccountKey::Fail);
        assert_eq!(stored.nonce, 1, "a new contract's nonce is 1 (EIP-161)");
        let runtime = w.state().code(&counter).unwrap();
        assert!(!runtime.is_empty() && runtime.len() < code.len());
        assert!(out[0].receipt.gas_used > 53_000 + 100 * code.len() as u64);

        let increment = hex::decode("d09de08a").unwrap();
        let call = legacy(&key, 1, Some(counter), increment.clone(), 100_000);
        let call2 = legacy(&key, 2, Some(counter), increment, 100_000);
        let out = w.block(&[(call, me), (call2, me)]);
        assert!(out[0].succeeded() && out[1].succeeded());
        assert_eq!(
            out[1].output,
            word(2).to_vec(),
            "increment() returns the new count"
        );
        assert_eq!(w.state().storage(&counter, &word(0)).unwrap(), word(2));
        let log = &out[1].receipt.logs[0];
        assert_eq!(log.address, counter);
        assert_eq!(log.topics, vec![keccak256(b"Incremented(uint256,address)")]);
        let mut data = word(2).to_vec();
        data.extend([0u8; 12]);
        data.extend(me.0);
        assert_eq!(log.data, data);
        // Fees: every unit of gas used, at the unit price, to the rewardbase.
        let all_gas: u64 = out.iter().map(|o| o.receipt.gas_used).sum();
        let reward = w.state().account(&Address([0xee; 20])).unwrap().balance;
        assert!(
            reward > state::mul_u64(&word(PRICE), all_gas).unwrap(),
            "two blocks of fees"
        );
        assert_eq!(w.state().account(&me).unwrap().nonce, 3);
    }

    /// A revert keeps its reason and charges the gas used; running out of gas charges the
    /// whole limit; both are the reference's status codes, the nonce moves on, and storage
    /// is untouched.
    #[test]
    fn failures_get_the_reference_status_and_pay_their_gas() {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let me = key.address();
        let mut w = World::new(me);
        let reverter = create_address(&me, 0);
        let out = w.block(&[(
            legacy(&key, 0, None, creation_code("Reverter"), 1_000_000),
            me,
        )]);
        assert!(out[0].succeeded());
        let sel = |s: &str| hex::decode(s).unwrap();
        let mut store7 = sel("6057361d");
        store7.extend(word(7));
        let out = w.block(&[
            (legacy(&key, 1, Some(reverter), store7, 100_000), me),
            (
                legacy(&key, 2, Some(reverter), sel("5b2dd100"), 100_000),
                me,
            ),
            (legacy(&key, 3, Some(reverter), sel("b9554c59"), 60_000), me),
            (
                legacy(&key, 4, Some(reverter), sel("09ccaefb"), 100_000),
                me,
            ),
        ]);
        assert!(out[0].succeeded());
        let reverted = &out[1];
        assert_eq!(reverted.receipt.status, status::ERR_EXECUTION_REVERTED);
        assert!(reverted.receipt.gas_used < 100_000);
        // Error(string) "nope: reverted on purpose"
        assert_eq!(&reverted.output[..4], &sel("08c379a0")[..]);
        assert!(String::from_utf8_lossy(&reverted.output).contains("nope: reverted on purpose"));
        assert_eq!(out[2].receipt.status, status::ERR_OUT_OF_GAS);
        assert_eq!(
            out[2].receipt.gas_used, 60_000,
            "out of gas uses the whole limit"
        );
        // A failed assert reverts with Panic(0x01): a revert for the reference too.
        assert_eq!(out[3].receipt.status, status::ERR_EXECUTION_REVERTED);
        assert_eq!(&out[3].output[..4], &sel("4e487b71")[..]);
        assert_eq!(w.state().storage(&reverter, &word(0)).unwrap(), word(7));
        assert_eq!(w.state().account(&me).unwrap().nonce, 5);
    }

    /// A plain transfer to an account without code takes the short path and costs the
    /// intrinsic gas only; a transfer to a contract runs its code (Counter has no receive
    /// function: it reverts).
    #[test]
    fn a_transfer_to_a_contract_runs_its_code() {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let me = key.address();
        let mut w = World::new(me);
        w.block(&[(legacy(&key, 0, None, creation_code("Counter"), 500_000), me)]);
        let counter = create_address(&me, 0);
        let out = w.block(&[
            (
                legacy(&key, 1, Some(Address([0x35; 20])), vec![], 21_000),
                me,
            ),
            (legacy(&key, 2, Some(counter), vec![], 50_000), me),
        ]);
        assert_eq!(
            (out[0].receipt.status, out[0].receipt.gas_used),
            (1, 21_000)
        );
        assert_eq!(out[1].receipt.status, status::ERR_EXECUTION_REVERTED);
    }
}
