//! Tracing (`debug_traceTransaction`, `debug_traceBlockByNumber`/`ByHash`, `debug_traceCall`):
//! a sealed transaction is run again over the state before it, rebuilt by running its
//! block's earlier transactions from the parent's state as an import does (`run.rs`), with
//! an `exec::trace::Tracer` watching; a block's transactions are each traced in turn; a call
//! is traced on a block's state. The traced run is checked against the stored receipt, so
//! that a trace shows what the block did.
//!
//! A trace is bounded: each transaction's trace has its own deadline (the `timeout` option),
//! and all the traces of one request share one budget of struct logs and recorded bytes
//! (`exec::trace::Budget`). A block's transaction whose trace stops still runs to its end,
//! so that the block's later transactions are traced over the right state.

use std::time::{Duration, Instant};

use super::call::CallArgs;
use super::run::{state_source, BlockRun};
use super::validate::check_tx;
use super::{Chain, ChainError};
use crate::crypto::Address;
use crate::exec::trace::{
    Budget, CallFrame, CallKind, FrameEnd, LogConfig, Mode, Recorded, Stopped, StructLog, Tracer,
};
use crate::exec::{self, CallError, Env, Outcome};
use crate::types::block::Header;
use crate::types::receipt::Receipt;
use crate::types::transaction::{Base, Transaction};

type Hash = [u8; 32];

/// How to trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceOptions {
    pub mode: Mode,
    /// How long one transaction's trace may take.
    pub timeout: Duration,
}

/// The reference's default `timeout`.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

/// One transaction's trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trace {
    /// The struct logger's: the gas used, whether it failed, what it returned (nothing when
    /// it failed) and its steps.
    Steps {
        gas: u64,
        failed: bool,
        return_value: Vec<u8>,
        logs: Vec<StructLog>,
    },
    /// The `callTracer`'s: the transaction's own frame, holding the others.
    Calls(CallFrame),
}

/// A block's traces: each transaction's hash with its trace, or why its trace failed.
pub type BlockTraces = Vec<(Hash, Result<Trace, TraceError>)>;

/// A block or a block's transaction to trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRef {
    Number(u64),
    Hash(Hash),
}

/// Why a trace failed, with the reference's texts.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The hash in hex without `0x`, as the reference prints it.
    #[error("transaction {0} not found")]
    TransactionNotFound(String),
    /// A transaction a standard trace was asked for is not in the block (hex without `0x`).
    #[error("transaction {0} not found in block")]
    NotInBlock(String),
    #[error("genesis is not traceable")]
    Genesis,
    #[error("the block does not exist (block number: {0})")]
    NoBlockNumber(u64),
    #[error("the block does not exist (block hash: 0x{})", hex::encode(.0))]
    NoBlockHash(Hash),
    /// The transaction could not run at all (the reference's text for its pre-execution
    /// errors).
    #[error("tracing failed: {0}")]
    Failed(String),
    #[error(transparent)]
    Stopped(#[from] Stopped),
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl From<super::db::Error> for TraceError {
    fn from(e: super::db::Error) -> TraceError {
        TraceError::Chain(e.into())
    }
}

impl Chain {
    /// `debug_traceTransaction`: the trace of sealed transaction `hash`.
    pub fn trace_transaction(&self, hash: &Hash, opts: &TraceOptions) -> Result<Trace, TraceError> {
        let not_found = || TraceError::TransactionNotFound(hex::encode(hash));
        let (block_hash, index) = self.db.tx_location(hash)?.ok_or_else(not_found)?;
        let block = self
            .block_by_hash(&block_hash)?
            .ok_or_else(|| corrupt(&block_hash, "block missing"))?;
        if block.header.number == 0 {
            return Err(TraceError::Genesis);
        }
        let mut traces = self.trace_replayed(
            &block.hash,
            &block.header,
            &block.transactions,
            Some(index as usize),
            opts,
        )?;
        traces.pop().ok_or_else(not_found)?.1
    }

    /// `debug_traceBlockByNumber` / `ByHash`: each transaction's hash with its trace, or why
    /// its trace failed.
    pub fn trace_block(
        &self,
        block: BlockRef,
        opts: &TraceOptions,
    ) -> Result<BlockTraces, TraceError> {
        let found = match block {
            BlockRef::Number(n) => self
                .block_by_number(Some(n))?
                .ok_or(TraceError::NoBlockNumber(n))?,
            BlockRef::Hash(h) => self.block_by_hash(&h)?.ok_or(TraceError::NoBlockHash(h))?,
        };
        if found.header.number == 0 {
            return Err(TraceError::Genesis);
        }
        self.trace_replayed(&found.hash, &found.header, &found.transactions, None, opts)
    }

    /// `debug_traceCall`: the trace of `args` run on the state of block `at`. As the
    /// reference (before its Magma fork, without a base fee) the sender is not credited its
    /// gas: it must afford gas x price.
    pub fn trace_call(
        &self,
        args: &CallArgs,
        at: &(Hash, Header),
        opts: &TraceOptions,
    ) -> Result<Trace, TraceError> {
        let msg = args.message(args.gas());
        let from = self.account_at(&msg.from, at)?.unwrap_or_default();
        let fee =
            revm::primitives::U256::from(msg.gas) * revm::primitives::U256::from(msg.gas_price);
        if revm::primitives::U256::from_be_bytes(from.balance) < fee {
            return Err(TraceError::Failed(
                "insufficient balance of the fee payer to pay for gas".into(),
            ));
        }
        let tracer = Tracer::new(
            opts.mode,
            Instant::now() + opts.timeout,
            Budget::default(),
            true,
        );
        let (out, tracer) = self.run_message(at, &msg, tracer);
        let (recorded, _) = tracer.finish();
        let out = out.map_err(|e| {
            TraceError::Failed(match e {
                CallError::IntrinsicGas { .. } => "intrinsic gas too low".into(),
                CallError::InsufficientBalance { .. } => "insufficient balance for transfer".into(),
                other => other.to_string(),
            })
        })?;
        let created = msg
            .to
            .is_none()
            .then(|| exec::create_address(&msg.from, from.nonce));
        Ok(assemble(opts.mode, &out, recorded?, created, None))
    }

    /// The parent of `header` as the reference finds it (the canonical block below it, else
    /// the block its parent hash names), with its texts when there is none.
    fn parent_of(&self, header: &Header) -> Result<Header, TraceError> {
        let below = header.number.saturating_sub(1);
        if self.header_at(below)?.is_none() {
            return Err(TraceError::NoBlockNumber(below));
        }
        self.header_by_hash(&header.parent_hash)?
            .ok_or(TraceError::NoBlockHash(header.parent_hash))
    }

    /// Runs a block (`hash`, `header`, its transactions with their senders) again from its
    /// parent's state: every transaction up to `only` (all when `None`), tracing `only` (or
    /// each) in `mode`, and hands each traced one to `each`. The traces share one budget, or
    /// each has its own with `budget_each` (their records are not kept together). A block the
    /// chain holds is checked against the receipts it was sealed with.
    #[allow(clippy::too_many_arguments)]
    fn replay<'t>(
        &self,
        hash: &Hash,
        header: &Header,
        transactions: &'t [(Transaction, Address)],
        only: Option<usize>,
        mode: Mode,
        timeout: Duration,
        budget_each: bool,
        mut each: impl FnMut(Ran<'t>) -> Result<(), TraceError>,
    ) -> Result<(), TraceError> {
        let h = header;
        let parent = self.parent_of(h)?;
        self.check_state_kept(parent.number)?;
        let receipts = match self.db.receipts(hash)? {
            Some(r) => Some(Receipt::decode_list(&r).map_err(|e| corrupt(hash, &e.to_string()))?),
            None => None,
        };
        let env = Env {
            number: h.number,
            timestamp: h.time,
            rewardbase: h.rewardbase,
            parent_hash: h.parent_hash,
            chain_id: self.chain_id(),
        };
        let hashes = |n| self.db.hash_at(n).ok().flatten();
        let mut run = BlockRun::new(
            env,
            state_source(self.db_nodes(), parent.state_root, hashes),
        );
        let mut budget = Budget::default();
        let last = only.unwrap_or(transactions.len().saturating_sub(1));
        for (i, (tx, _)) in transactions.iter().enumerate().take(last + 1) {
            let signers = tx.recovered();
            let (checked, _) = check_tx(
                tx,
                signers.as_deref(),
                self.chain_id(),
                self.unit_price(),
                tx.encode().len(),
                |a| run.account(a).map_err(|e| e.to_string()),
            )
            .map_err(|e| TraceError::Failed(e.to_string()))?;
            run.fits(tx, checked.sender, &checked.cost)
                .map_err(|e| TraceError::Failed(e.to_string()))?;
            let (plain_gas, validation_gas) = (checked.gas_used, checked.validation_gas);
            if only.is_some_and(|o| o != i) {
                run.apply(tx, checked.sender, plain_gas, validation_gas)?;
                continue;
            }
            let deadline = Instant::now() + timeout;
            let tracer = Tracer::new(mode, deadline, budget, false);
            let (outcome, tracer, ran) =
                run.apply_inspected(tx, checked.sender, plain_gas, validation_gas, tracer)?;
            let (recorded, left) = tracer.finish();
            budget = if budget_each { Budget::default() } else { left };
            let as_sealed = receipts
                .as_ref()
                .is_none_or(|r| r.get(i) == Some(&outcome.receipt));
            each(Ran {
                index: i,
                tx,
                sender: checked.sender,
                plain_gas,
                outcome,
                recorded,
                ran,
                as_sealed,
            })?;
        }
        Ok(())
    }

    /// The traces of a block's transactions run in `opts`'s mode: each transaction's hash
    /// with its trace, or why its trace failed.
    fn trace_replayed(
        &self,
        hash: &Hash,
        header: &Header,
        transactions: &[(Transaction, Address)],
        only: Option<usize>,
        opts: &TraceOptions,
    ) -> Result<BlockTraces, TraceError> {
        let mut out = Vec::new();
        self.replay(
            hash,
            header,
            transactions,
            only,
            opts.mode,
            opts.timeout,
            false,
            |r| {
                let trace = if !r.as_sealed {
                    Err(TraceError::Failed(format!(
                        "transaction {} of block {} ran otherwise than when it was sealed",
                        r.index, header.number
                    )))
                } else if !r.ran {
                    Ok(plain(opts.mode, r.tx, r.sender, r.plain_gas, &r.outcome))
                } else {
                    let created =
                        r.tx.is_create()
                            .then(|| exec::create_address(&r.sender, r.tx.nonce()));
                    r.recorded
                        .map(|rec| assemble(opts.mode, &r.outcome, rec, created, None))
                        .map_err(TraceError::from)
                };
                out.push((r.tx.hash(), trace));
                Ok(())
            },
        )?;
        Ok(out)
    }

    /// `debug_traceBlock` / `debug_traceBlockFromFile`: the transactions of `block` (which
    /// the chain need not hold; its parent it must) run on its parent's state under its
    /// header, each traced, as [`Chain::trace_block`] answers.
    pub fn trace_given_block(
        &self,
        block: &crate::types::block::Block,
        opts: &TraceOptions,
    ) -> Result<BlockTraces, TraceError> {
        if block.header.number == 0 {
            return Err(TraceError::Genesis);
        }
        let transactions = block
            .transactions
            .iter()
            .map(|tx| {
                super::read::sender_of(tx)
                    .map(|s| (tx.clone(), s))
                    .map_err(TraceError::Failed)
            })
            .collect::<Result<Vec<_>, _>>()?;
        self.trace_replayed(
            &block.header.hash(),
            &block.header,
            &transactions,
            None,
            opts,
        )
    }

    /// `debug_standardTraceBlockToFile`: the block with this hash run again, each
    /// transaction (or only `tx` when given) traced by the standard-JSON logger with `log`'s
    /// options; each trace is handed to `each` as soon as its transaction ran. `None` when
    /// the chain has no such block.
    pub fn standard_trace_block(
        &self,
        hash: &Hash,
        log: LogConfig,
        tx: Option<Hash>,
        mut each: impl FnMut(StandardTrace) -> Result<(), TraceError>,
    ) -> Result<Option<()>, TraceError> {
        let Some(block) = self.block_by_hash(hash)? else {
            return Ok(None);
        };
        let only = match tx {
            Some(t) => Some(
                block
                    .transactions
                    .iter()
                    .position(|(x, _)| x.hash() == t)
                    .ok_or_else(|| TraceError::NotInBlock(hex::encode(t)))?,
            ),
            None => None,
        };
        if block.header.number == 0 {
            return Err(TraceError::Genesis);
        }
        let mode = Mode::Steps(LogConfig {
            disable_storage: true,
            limit: 0,
            ..log
        });
        self.replay(
            hash,
            &block.header,
            &block.transactions,
            only,
            mode,
            DEFAULT_TIMEOUT,
            true,
            |r| {
                let tx_hash = r.tx.hash();
                let (steps, end) = if r.ran {
                    let rec = r.recorded?;
                    (rec.steps, rec.end)
                } else if matches!(
                    r.tx.base(),
                    Some(Base::AccountUpdate | Base::Cancel | Base::ChainDataAnchoring)
                ) {
                    // The reference updates the key, cancels or anchors without calling the EVM:
                    // nothing logged.
                    (Vec::new(), None)
                } else {
                    // A call of an account without code: the EVM ends at once.
                    let end = FrameEnd {
                        output: Vec::new(),
                        gas_used: 0,
                        error: None,
                    };
                    (Vec::new(), Some(end))
                };
                each(StandardTrace {
                    index: r.index,
                    tx_hash,
                    steps,
                    end,
                })
            },
        )?;
        Ok(Some(()))
    }
}

/// One transaction run again by [`Chain::replay`].
struct Ran<'t> {
    index: usize,
    tx: &'t Transaction,
    sender: Address,
    /// Its intrinsic plus validation gas.
    plain_gas: u64,
    outcome: Outcome,
    recorded: Result<Recorded, Stopped>,
    /// Whether the EVM ran (a transaction that runs no code is not shown to the tracer).
    ran: bool,
    /// Whether it gave the receipt the block was sealed with (true for a block the chain
    /// does not hold).
    as_sealed: bool,
}

/// A transaction's trace by the reference's standard-JSON logger
/// (`debug_standardTraceBlockToFile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandardTrace {
    /// Its index in the block.
    pub index: usize,
    pub tx_hash: Hash,
    /// Every step, with memory and stack as the options say (no storage, no limit).
    pub steps: Vec<StructLog>,
    /// How the EVM's frame ended; `None` for an account update, which runs no EVM.
    pub end: Option<FrameEnd>,
}

fn corrupt(block: &Hash, what: &str) -> TraceError {
    ChainError::Corrupt(format!("block 0x{}: {what}", hex::encode(block))).into()
}

/// A trace from what the tracer recorded of a run that ended with `outcome`; `created` is the
/// address a creation makes, `frame` a frame made without the EVM.
fn assemble(
    mode: Mode,
    outcome: &Outcome,
    recorded: Recorded,
    created: Option<Address>,
    frame: Option<CallFrame>,
) -> Trace {
    match mode {
        Mode::Steps(_) => Trace::Steps {
            gas: outcome.receipt.gas_used,
            failed: !outcome.succeeded(),
            return_value: if outcome.succeeded() {
                outcome.output.clone()
            } else {
                Vec::new()
            },
            logs: recorded.steps,
        },
        Mode::Calls => {
            let mut top = recorded.frame.or(frame).unwrap_or_else(|| CallFrame {
                kind: CallKind::Call,
                from: Address([0; 20]),
                to: None,
                value: Some([0; 32]),
                gas: 0,
                gas_used: 0,
                input: Vec::new(),
                output: Some(Vec::new()),
                error: None,
                calls: Vec::new(),
            });
            // The reference reports the transaction's whole gas (intrinsic gas, refunds) at
            // the top, and no output beside an error.
            top.gas_used = outcome.receipt.gas_used;
            if top.error.is_some() {
                top.output = None;
            }
            if top.kind == CallKind::Create && top.to.is_none() {
                top.to = created;
            }
            Trace::Calls(top)
        }
    }
}

/// The trace of a transaction that ran no code: no steps; one frame from the sender to the
/// recipient (none for an account update).
fn plain(
    mode: Mode,
    tx: &Transaction,
    sender: Address,
    plain_gas: u64,
    outcome: &Outcome,
) -> Trace {
    let frame = CallFrame {
        kind: CallKind::Call,
        from: sender,
        to: tx.to(),
        value: Some(tx.value()),
        gas: tx.gas().saturating_sub(plain_gas),
        gas_used: outcome.receipt.gas_used,
        input: tx.input().to_vec(),
        output: Some(Vec::new()),
        error: None,
        calls: Vec::new(),
    };
    assemble(mode, outcome, Recorded::default(), None, Some(frame))
}
