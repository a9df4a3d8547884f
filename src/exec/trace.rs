//! Tracing a transaction's run on the EVM (`debug_trace*`): an inspector, [`Tracer`], that
//! records what the reference's two tracers report, in its names and texts:
//!
//! - the struct logger: every step with its pc, opcode, gas left, gas cost, depth, stack,
//!   memory, the storage the contract has written so far, and the reference's computation
//!   cost left and taken;
//! - the `callTracer`: the tree of call frames (type, from, to, value, gas, gas used, input,
//!   output, error).
//!
//! revm reaches an instruction differently from the reference, so the records are adjusted to
//! read as the reference's:
//! - a step's memory is shown grown by the step and not yet written by it (the reference
//!   grows memory before it logs; revm grows it inside the instruction): the copy taken
//!   before the step is padded with zeros to the size the step left;
//! - a step's gas cost is what the step took from its frame: for CALL* with the gas handed to
//!   the callee (the reference's dynamic gas holds it), for CREATE* without it;
//! - `error` marks a step only when it failed before the reference would have logged it
//!   (an undefined opcode, a stack out of bounds, gas run out); a REVERT, a write in a static
//!   call or a bad jump are logged without one, as there;
//! - a call that fails before it starts (too deep, a value beyond the balance, an address
//!   collision) makes no frame, as the reference calls its tracer only once a frame starts.
//!
//! The JSON forms are `api::trace`'s. A tracer is bounded: it stops at its deadline, and past
//! [`MAX_STEPS`] struct logs or [`MAX_BYTES`] of recorded data (one [`Budget`] may be shared by
//! the transactions of a block), with [`Stopped`] saying why.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Instant;

use revm::bytecode::opcode;
use revm::context_interface::{ContextTr, CreateScheme};
use revm::interpreter::interpreter::EthInterpreter;
use revm::interpreter::interpreter_types::{InputsTr, Jumps, LoopControl};
use revm::interpreter::{
    CallInputs, CallOutcome, CallScheme, CreateInputs, CreateOutcome, FrameInput,
    InstructionResult, Interpreter, InterpreterAction,
};
use revm::primitives::{Address as RAddress, U256 as RU256};
use revm::Inspector;

use crate::crypto::Address;

/// The most struct logs one request may produce.
pub const MAX_STEPS: usize = 1_000_000;
/// The most data (stack words, memory, storage entries, call inputs and outputs) one request
/// may record, in bytes: about half of what its JSON takes. With [`MAX_STEPS`] it keeps one
/// answer under about 250 MB of JSON.
pub const MAX_BYTES: usize = 64 << 20;

/// The reference's computation-cost limit of a transaction (since its Cancun-compatible fork):
/// what a trace's first step shows as `computation`.
pub const COMPUTATION_LIMIT: u64 = 150_000_000;

/// What a tracer records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// The struct logger, with what it leaves out.
    Steps(LogConfig),
    /// The `callTracer`'s frames.
    Calls,
}

/// The struct logger's options (the reference's `LogConfig`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogConfig {
    pub disable_memory: bool,
    pub disable_stack: bool,
    pub disable_storage: bool,
    /// The most steps to log; later steps are left out (0: no limit but [`MAX_STEPS`]; a
    /// negative limit logs none, as the reference's).
    pub limit: i64,
}

/// Why a tracer stopped recording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Stopped {
    /// The deadline passed (the reference's text).
    #[error("execution timeout")]
    Timeout,
    #[error(
        "trace too large: more than {MAX_STEPS} struct logs or {} MiB of recorded data; \
         trace less with the limit, disableMemory, disableStack or disableStorage options",
        MAX_BYTES >> 20
    )]
    TooLarge,
}

/// What the traces of one request may still record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub steps: usize,
    pub bytes: usize,
}

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            steps: MAX_STEPS,
            bytes: MAX_BYTES,
        }
    }
}

impl Budget {
    fn take(&mut self, steps: usize, bytes: usize) -> Result<(), Stopped> {
        if steps > self.steps || bytes > self.bytes {
            self.steps = 0;
            self.bytes = 0;
            return Err(Stopped::TooLarge);
        }
        self.steps -= steps;
        self.bytes -= bytes;
        Ok(())
    }
}

/// A step that failed after it was logged, as the standard-JSON logger shows it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The reference's text of the failure.
    pub error: String,
    /// The stack the step left, bottom first; `None` when disabled.
    pub stack: Option<Vec<RU256>>,
    /// The memory the step left; `None` when disabled.
    pub memory: Option<Vec<u8>>,
}

/// How the transaction's own frame ended (the standard-JSON logger's last line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameEnd {
    /// What it returned (a revert's data; nothing for another failure).
    pub output: Vec<u8>,
    /// Its gas limit less the gas it left, before refunds.
    pub gas_used: u64,
    /// The reference's text of its failure.
    pub error: Option<String>,
}

/// A contract's storage as the struct logger shows it: the slots written so far, by slot.
pub type Storage = BTreeMap<[u8; 32], [u8; 32]>;

/// One step of the struct logger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StructLog {
    pub pc: u64,
    pub op: u8,
    /// Gas left before the step.
    pub gas: u64,
    pub gas_cost: u64,
    /// 1 for the transaction's own frame.
    pub depth: u64,
    /// The reference's text of the step's failure, when it failed before the reference would
    /// have logged it.
    pub error: Option<String>,
    /// The failure of a step that failed after the reference logged it (a REVERT, a bad
    /// jump, a write in a static call): the reference's standard-JSON logger writes the step
    /// again, with the stack and memory it left ([`Fault`]).
    pub fault: Option<Box<Fault>>,
    /// The memory's size in bytes when the step is logged (grown by the step).
    pub mem_size: u64,
    /// The transaction's refund counter when the step is logged (the step's own SSTORE
    /// refund counted, as the reference charges it before logging).
    pub refund: u64,
    /// Bottom first; `None` when disabled.
    pub stack: Option<Vec<RU256>>,
    /// `None` when disabled.
    pub memory: Option<Vec<u8>>,
    /// The slots the contract (whose storage the step uses) has written so far; `None` when
    /// disabled.
    pub storage: Option<Arc<Storage>>,
    /// The computation cost the transaction may still spend, before the step.
    pub computation: u64,
    pub computation_cost: u64,
}

/// A frame's kind, named as the reference's `callTracer` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Call,
    CallCode,
    DelegateCall,
    StaticCall,
    Create,
    Create2,
    SelfDestruct,
}

impl CallKind {
    pub fn name(self) -> &'static str {
        match self {
            CallKind::Call => "CALL",
            CallKind::CallCode => "CALLCODE",
            CallKind::DelegateCall => "DELEGATECALL",
            CallKind::StaticCall => "STATICCALL",
            CallKind::Create => "CREATE",
            CallKind::Create2 => "CREATE2",
            CallKind::SelfDestruct => "SELFDESTRUCT",
        }
    }

    fn is_create(self) -> bool {
        matches!(self, CallKind::Create | CallKind::Create2)
    }
}

/// One frame of the `callTracer`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallFrame {
    pub kind: CallKind,
    pub from: Address,
    /// `None` for a creation that failed.
    pub to: Option<Address>,
    /// `None` for a STATICCALL; a DELEGATECALL carries its caller's value.
    pub value: Option<[u8; 32]>,
    pub gas: u64,
    pub gas_used: u64,
    pub input: Vec<u8>,
    /// What it returned; `None` when it failed.
    pub output: Option<Vec<u8>>,
    /// The reference's text of its failure.
    pub error: Option<String>,
    pub calls: Vec<CallFrame>,
}

/// What a tracer recorded of one transaction.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    pub steps: Vec<StructLog>,
    /// The transaction's own frame (`None` in [`Mode::Steps`], or when no EVM ran).
    pub frame: Option<CallFrame>,
    /// How the transaction's own frame ended, in either mode (`None` when no EVM ran).
    pub end: Option<FrameEnd>,
}

/// A step taken and not finished yet (revm calls `step_end` after the instruction).
struct Pending {
    log: StructLog,
    /// The step is logged (under the user's limit).
    logged: bool,
}

/// What the tracer keeps of each open frame.
#[derive(Default, Clone, Copy)]
struct Open {
    /// The opcode of its latest step and the stack's height before it.
    op: u8,
    stack: usize,
    /// The gas cost and computation cost of its latest logged step (the reference shows them
    /// again on a step that fails before its costs are known).
    cost: u64,
    computation_cost: u64,
    /// The frame's gas limit.
    gas_limit: u64,
    /// Its refund counter (revm keeps one per frame, a callee's added to its caller's when
    /// it returns): as of its latest step.
    refunded: i64,
}

/// The inspector that records a trace; see the module's comment.
pub struct Tracer {
    mode: Mode,
    deadline: Instant,
    /// Stop the run when recording stops (a call, whose state is thrown away); a block's
    /// transaction runs to its end, so that the block's later transactions see its state.
    halt_when_stopped: bool,
    budget: Budget,
    stopped: Option<Stopped>,
    ticks: u32,
    computation_used: u64,
    steps: Vec<StructLog>,
    pending: Option<Pending>,
    storage: HashMap<RAddress, Arc<Storage>>,
    open: Vec<Open>,
    frames: Vec<CallFrame>,
    root: Option<CallFrame>,
    end: Option<FrameEnd>,
}

/// How often (in steps) a tracer looks at the clock.
const CLOCK_EVERY: u32 = 256;

impl Tracer {
    /// A tracer recording `mode` until `deadline`, within `budget`. With `halt_when_stopped`
    /// it ends the run as soon as it stops recording.
    pub fn new(mode: Mode, deadline: Instant, budget: Budget, halt_when_stopped: bool) -> Tracer {
        Tracer {
            mode,
            deadline,
            halt_when_stopped,
            budget,
            stopped: if Instant::now() >= deadline {
                Some(Stopped::Timeout)
            } else {
                None
            },
            ticks: 0,
            computation_used: 0,
            steps: Vec::new(),
            pending: None,
            storage: HashMap::new(),
            open: Vec::new(),
            frames: Vec::new(),
            root: None,
            end: None,
        }
    }

    /// What it recorded, or why it stopped; and what is left of the budget.
    pub fn finish(self) -> (Result<Recorded, Stopped>, Budget) {
        let out = match self.stopped {
            Some(why) => Err(why),
            None => Ok(Recorded {
                steps: self.steps,
                frame: self.root,
                end: self.end,
            }),
        };
        (out, self.budget)
    }

    fn stop(&mut self, why: Stopped) {
        if self.stopped.is_none() {
            self.stopped = Some(why);
            self.steps = Vec::new();
            self.frames = Vec::new();
            self.root = None;
            self.storage = HashMap::new();
        }
    }

    fn take(&mut self, steps: usize, bytes: usize) -> bool {
        match self.budget.take(steps, bytes) {
            Ok(()) => true,
            Err(why) => {
                self.stop(why);
                false
            }
        }
    }

    /// The transaction's refund counter: the open frames' own, summed.
    fn refund(&self) -> u64 {
        let sum: i64 = self.open.iter().map(|o| o.refunded).sum();
        u64::try_from(sum).unwrap_or(0)
    }

    fn open_frame(&mut self, frame: CallFrame) {
        self.open.push(Open {
            gas_limit: frame.gas,
            ..Open::default()
        });
        if self.stopped.is_some() || self.mode != Mode::Calls {
            return;
        }
        if self.take(0, frame.input.len()) {
            self.frames.push(frame);
        }
    }

    /// Closes the innermost frame with `result`, its gas left and output; `created` is the
    /// address a creation made.
    fn close_frame(
        &mut self,
        result: InstructionResult,
        gas_left: u64,
        output: &[u8],
        created: Option<RAddress>,
    ) {
        let open = self.open.pop().unwrap_or_default();
        let failure = (!result.is_ok()).then(|| error_text(result, open.op, open.stack));
        if self.open.is_empty() && self.stopped.is_none() {
            let returned = result.is_ok() || result == InstructionResult::Revert;
            self.end = Some(FrameEnd {
                output: if returned {
                    output.to_vec()
                } else {
                    Vec::new()
                },
                gas_used: open.gas_limit.saturating_sub(gas_left),
                error: failure.clone(),
            });
        }
        if self.stopped.is_some() || self.mode != Mode::Calls {
            return;
        }
        let Some(mut frame) = self.frames.pop() else {
            return;
        };
        let top = self.frames.is_empty();
        // The reference starts a frame only past these checks: no frame, unless it is the
        // transaction's own.
        let never_started = matches!(
            result,
            InstructionResult::CallTooDeep
                | InstructionResult::OutOfFunds
                | InstructionResult::CreateCollision
        ) || (frame.kind.is_create() && created.is_none() && !top);
        if never_started && !top {
            return;
        }
        frame.gas_used = frame.gas.saturating_sub(gas_left);
        if let Some(a) = created {
            frame.to = Some(Address(a.0 .0));
        }
        if result.is_ok() {
            if !self.take(0, output.len()) {
                return;
            }
            frame.output = Some(output.to_vec());
        } else {
            frame.error = failure;
            if frame.kind.is_create() && !top {
                frame.to = None;
            }
        }
        match self.frames.last_mut() {
            Some(parent) => parent.calls.push(frame),
            None => self.root = Some(frame),
        }
    }
}

/// Whether the reference fails a step with `result` before it logs it: those steps carry an
/// `error`.
fn fails_before_logging(result: InstructionResult) -> bool {
    use InstructionResult as R;
    matches!(
        result,
        R::OutOfGas
            | R::MemoryOOG
            | R::MemoryLimitOOG
            | R::InvalidOperandOOG
            | R::ReentrancySentryOOG
            | R::OpcodeNotFound
            | R::InvalidFEOpcode
            | R::NotActivated
            | R::StackUnderflow
            | R::StackOverflow
            | R::CreateInitCodeSizeLimit
    )
}

/// Whether the step failed before it cost anything (the reference then shows the costs of the
/// frame's previous step).
fn fails_before_charging(result: InstructionResult) -> bool {
    use InstructionResult as R;
    matches!(
        result,
        R::OpcodeNotFound
            | R::InvalidFEOpcode
            | R::NotActivated
            | R::StackUnderflow
            | R::StackOverflow
    )
}

/// The reference's text of a frame that ended with `result`, whose latest step was `op` with
/// `stack` items on the stack.
pub fn error_text(result: InstructionResult, op: u8, stack: usize) -> String {
    use InstructionResult as R;
    let (inputs, outputs) = opcode::OpCode::new(op).map_or((0, 0), |o| (o.inputs(), o.outputs()));
    match result {
        R::Revert => "evm: execution reverted".into(),
        R::OutOfGas
        | R::MemoryOOG
        | R::MemoryLimitOOG
        | R::PrecompileOOG
        | R::ReentrancySentryOOG
        | R::CreateInitCodeSizeLimit => "out of gas".into(),
        R::InvalidOperandOOG => "gas uint64 overflow".into(),
        R::OpcodeNotFound | R::InvalidFEOpcode | R::NotActivated => {
            format!("invalid opcode 0x{op:x}")
        }
        R::StackUnderflow => format!("stack underflow ({stack} <=> {inputs})"),
        R::StackOverflow => format!(
            "stack limit reached {stack} ({})",
            1024 + usize::from(inputs) - usize::from(outputs)
        ),
        R::CallNotAllowedInsideStatic | R::StateChangeDuringStaticCall => {
            "evm: write protection".into()
        }
        R::InvalidJump => "evm: invalid jump destination".into(),
        R::OutOfOffset => "evm: return data out of bounds".into(),
        R::CallTooDeep => "max call depth exceeded".into(),
        R::OutOfFunds => "insufficient balance for transfer".into(),
        R::CreateCollision => "contract address collision".into(),
        R::CreateContractSizeLimit => "evm: max code size exceeded".into(),
        R::CreateContractStartingWithEF => "invalid code: must not begin with 0xef".into(),
        _ => "VM error occurs while running smart contract".into(),
    }
}

impl<CTX: ContextTr> Inspector<CTX, EthInterpreter> for Tracer {
    fn step(&mut self, interp: &mut Interpreter<EthInterpreter>, _: &mut CTX) {
        if self.stopped.is_none() {
            self.ticks = self.ticks.wrapping_add(1);
            if self.ticks.is_multiple_of(CLOCK_EVERY) && Instant::now() >= self.deadline {
                self.stop(Stopped::Timeout);
            }
        }
        if self.stopped.is_some() {
            if self.halt_when_stopped {
                interp.halt(InstructionResult::OutOfGas);
            }
            return;
        }
        let op = interp.bytecode.opcode();
        let stack = interp.stack.data();
        if let Some(o) = self.open.last_mut() {
            o.op = op;
            o.stack = stack.len();
        }
        let Mode::Steps(cfg) = self.mode else {
            return;
        };
        let logged = cfg.limit == 0 || (self.steps.len() as i64) < cfg.limit;
        let address = interp.input.target_address();
        if logged && op == opcode::SSTORE && stack.len() >= 2 {
            let slot = stack[stack.len() - 1].to_be_bytes::<32>();
            let value = stack[stack.len() - 2].to_be_bytes::<32>();
            Arc::make_mut(self.storage.entry(address).or_default()).insert(slot, value);
        }
        let log = StructLog {
            pc: interp.bytecode.pc() as u64,
            op,
            gas: interp.gas.remaining(),
            gas_cost: 0,
            depth: interp.input.depth() as u64 + 1,
            error: None,
            fault: None,
            mem_size: interp.memory.len() as u64,
            refund: 0,
            stack: (logged && !cfg.disable_stack).then(|| stack.clone()),
            memory: (logged && !cfg.disable_memory)
                .then(|| interp.memory.context_memory().to_vec()),
            storage: (logged && !cfg.disable_storage)
                .then(|| self.storage.entry(address).or_default().clone()),
            computation: COMPUTATION_LIMIT.saturating_sub(self.computation_used),
            computation_cost: computation_cost(op),
        };
        self.pending = Some(Pending { log, logged });
    }

    fn step_end(&mut self, interp: &mut Interpreter<EthInterpreter>, _: &mut CTX) {
        let Some(Pending { mut log, logged }) = self.pending.take() else {
            return;
        };
        if self.stopped.is_some() {
            return;
        }
        // A creation's gas goes to the new frame after the reference logs the step.
        let handed = match interp.bytecode.action() {
            Some(InterpreterAction::NewFrame(FrameInput::Create(c))) => c.gas_limit(),
            _ => 0,
        };
        let result = interp.bytecode.instruction_result();
        log.gas_cost = log
            .gas
            .saturating_sub(interp.gas.remaining())
            .saturating_sub(handed);
        let open = self.open.last().copied().unwrap_or_default();
        let failure = |r| error_text(r, open.op, open.stack);
        match result {
            Some(r) if fails_before_charging(r) => {
                log.error = Some(failure(r));
                log.gas_cost = open.cost;
                log.computation_cost = open.computation_cost;
            }
            Some(r) if fails_before_logging(r) => log.error = Some(failure(r)),
            Some(r) => {
                self.computation_used += log.computation_cost;
                if !r.is_ok() {
                    let Mode::Steps(cfg) = self.mode else {
                        return;
                    };
                    log.fault = Some(Box::new(Fault {
                        error: failure(r),
                        stack: (!cfg.disable_stack).then(|| interp.stack.data().clone()),
                        memory: (!cfg.disable_memory)
                            .then(|| interp.memory.context_memory().to_vec()),
                    }));
                }
            }
            None => self.computation_used += log.computation_cost,
        }
        if let Some(o) = self.open.last_mut() {
            o.cost = log.gas_cost;
            o.computation_cost = log.computation_cost;
            o.refunded = interp.gas.refunded();
        }
        log.refund = self.refund();
        if !logged {
            return;
        }
        if log.error.is_none() {
            // The step's growth, unless it failed before growing memory.
            let grown = interp.memory.len();
            log.mem_size = log.mem_size.max(grown as u64);
            if let Some(m) = &mut log.memory {
                m.resize(m.len().max(grown), 0);
            }
        }
        let bytes = 32
            + 32 * log.stack.as_ref().map_or(0, Vec::len)
            + log.memory.as_ref().map_or(0, Vec::len)
            + 64 * log.storage.as_ref().map_or(0, |s| s.len());
        if self.take(1, bytes) {
            self.steps.push(log);
        }
    }

    fn call(&mut self, ctx: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if self.stopped.is_some() || self.mode != Mode::Calls {
            self.open.push(Open {
                gas_limit: inputs.gas_limit,
                ..Open::default()
            });
            return None;
        }
        let top = self.frames.is_empty();
        let kind = match inputs.scheme {
            CallScheme::Call => CallKind::Call,
            CallScheme::CallCode => CallKind::CallCode,
            CallScheme::DelegateCall => CallKind::DelegateCall,
            CallScheme::StaticCall => CallKind::StaticCall,
        };
        let value = (top || kind != CallKind::StaticCall).then(|| inputs.value.get().to_be_bytes());
        self.open_frame(CallFrame {
            kind: if top { CallKind::Call } else { kind },
            from: Address(inputs.caller.0 .0),
            to: Some(Address(inputs.target_address.0 .0)),
            value,
            gas: inputs.gas_limit,
            gas_used: 0,
            input: inputs.input.bytes(ctx).to_vec(),
            output: None,
            error: None,
            calls: Vec::new(),
        });
        None
    }

    fn call_end(&mut self, ctx: &mut CTX, inputs: &CallInputs, outcome: &mut CallOutcome) {
        let r = &outcome.result;
        if outcome.was_precompile_called {
            let input = inputs.input.bytes(ctx);
            self.computation_used += precompile_computation_cost(
                inputs.bytecode_address.0 .0,
                &input,
                r.gas.limit().saturating_sub(r.gas.remaining()),
            );
        }
        self.close_frame(r.result, r.gas.remaining(), &r.output, None);
    }

    fn create(&mut self, _: &mut CTX, inputs: &mut CreateInputs) -> Option<CreateOutcome> {
        if self.stopped.is_some() || self.mode != Mode::Calls {
            self.open.push(Open {
                gas_limit: inputs.gas_limit(),
                ..Open::default()
            });
            return None;
        }
        let kind = match inputs.scheme() {
            CreateScheme::Create2 { .. } => CallKind::Create2,
            _ => CallKind::Create,
        };
        self.open_frame(CallFrame {
            kind,
            from: Address(inputs.caller().0 .0),
            to: None,
            value: Some(inputs.value().to_be_bytes()),
            gas: inputs.gas_limit(),
            gas_used: 0,
            input: inputs.init_code().to_vec(),
            output: None,
            error: None,
            calls: Vec::new(),
        });
        None
    }

    fn create_end(&mut self, _: &mut CTX, _: &CreateInputs, outcome: &mut CreateOutcome) {
        let r = &outcome.result;
        self.close_frame(r.result, r.gas.remaining(), &r.output, outcome.address);
    }

    fn selfdestruct(&mut self, contract: RAddress, target: RAddress, value: RU256) {
        if self.stopped.is_some() || self.mode != Mode::Calls {
            return;
        }
        if let Some(parent) = self.frames.last_mut() {
            parent.calls.push(CallFrame {
                kind: CallKind::SelfDestruct,
                from: Address(contract.0 .0),
                to: Some(Address(target.0 .0)),
                value: Some(value.to_be_bytes()),
                gas: 0,
                gas_used: 0,
                input: Vec::new(),
                output: Some(Vec::new()),
                error: None,
                calls: Vec::new(),
            });
        }
    }
}

/// The computation cost the reference adds for a run of the precompile at `address` with
/// `input`, which took `gas`.
pub fn precompile_computation_cost(address: [u8; 20], input: &[u8], gas: u64) -> u64 {
    if address[..19] != [0; 19] {
        return 0;
    }
    let words = (input.len() as u64).div_ceil(32);
    match address[19] {
        0x01 => 113_150,
        0x02 => 1_000 + 100 * words,
        0x03 => 100 + 10 * words,
        0x05 => gas / 100 + 100,
        0x06 => 8_000,
        0x07 => 100_000,
        0x08 => 2_000_000 + 1_000_000 * (input.len() as u64 / 192),
        0x09 => {
            let rounds = input
                .get(..4)
                .map_or(0, |r| u32::from_be_bytes(r.try_into().expect("4 bytes")));
            10_000 + 10 * u64::from(rounds)
        }
        0x0a => 2_200_000,
        _ => 0,
    }
}

/// The reference's name of opcode `op` (its table has no TLOAD, TSTORE or INVALID, and names
/// 0x20 SHA3 and 0x44 DIFFICULTY).
pub fn op_name(op: u8) -> std::borrow::Cow<'static, str> {
    let name = match op {
        0x00 => "STOP",
        0x01 => "ADD",
        0x02 => "MUL",
        0x03 => "SUB",
        0x04 => "DIV",
        0x05 => "SDIV",
        0x06 => "MOD",
        0x07 => "SMOD",
        0x08 => "ADDMOD",
        0x09 => "MULMOD",
        0x0a => "EXP",
        0x0b => "SIGNEXTEND",
        0x10 => "LT",
        0x11 => "GT",
        0x12 => "SLT",
        0x13 => "SGT",
        0x14 => "EQ",
        0x15 => "ISZERO",
        0x16 => "AND",
        0x17 => "OR",
        0x18 => "XOR",
        0x19 => "NOT",
        0x1a => "BYTE",
        0x1b => "SHL",
        0x1c => "SHR",
        0x1d => "SAR",
        0x20 => "SHA3",
        0x30 => "ADDRESS",
        0x31 => "BALANCE",
        0x32 => "ORIGIN",
        0x33 => "CALLER",
        0x34 => "CALLVALUE",
        0x35 => "CALLDATALOAD",
        0x36 => "CALLDATASIZE",
        0x37 => "CALLDATACOPY",
        0x38 => "CODESIZE",
        0x39 => "CODECOPY",
        0x3a => "GASPRICE",
        0x3b => "EXTCODESIZE",
        0x3c => "EXTCODECOPY",
        0x3d => "RETURNDATASIZE",
        0x3e => "RETURNDATACOPY",
        0x3f => "EXTCODEHASH",
        0x40 => "BLOCKHASH",
        0x41 => "COINBASE",
        0x42 => "TIMESTAMP",
        0x43 => "NUMBER",
        0x44 => "DIFFICULTY",
        0x45 => "GASLIMIT",
        0x46 => "CHAINID",
        0x47 => "SELFBALANCE",
        0x48 => "BASEFEE",
        0x49 => "BLOBHASH",
        0x4a => "BLOBBASEFEE",
        0x50 => "POP",
        0x51 => "MLOAD",
        0x52 => "MSTORE",
        0x53 => "MSTORE8",
        0x54 => "SLOAD",
        0x55 => "SSTORE",
        0x56 => "JUMP",
        0x57 => "JUMPI",
        0x58 => "PC",
        0x59 => "MSIZE",
        0x5a => "GAS",
        0x5b => "JUMPDEST",
        0x5e => "MCOPY",
        0x5f => "PUSH0",
        0x60..=0x7f => return format!("PUSH{}", op - 0x5f).into(),
        0x80..=0x8f => return format!("DUP{}", op - 0x7f).into(),
        0x90..=0x9f => return format!("SWAP{}", op - 0x8f).into(),
        0xa0..=0xa4 => return format!("LOG{}", op - 0xa0).into(),
        // The reference's parsing-only names.
        0xb0 => "PUSH",
        0xb1 => "DUP",
        0xb2 => "SWAP",
        0xf0 => "CREATE",
        0xf1 => "CALL",
        0xf2 => "CALLCODE",
        0xf3 => "RETURN",
        0xf4 => "DELEGATECALL",
        0xf5 => "CREATE2",
        0xfa => "STATICCALL",
        0xfd => "REVERT",
        0xff => "SELFDESTRUCT",
        _ => return format!("Missing opcode 0x{op:x}").into(),
    };
    name.into()
}

/// The reference's computation cost of opcode `op` in its Cancun-compatible instruction set
/// (0 for an undefined one).
pub fn computation_cost(op: u8) -> u64 {
    const DUP: [u64; 16] = [
        190, 190, 176, 142, 177, 165, 147, 157, 138, 174, 141, 144, 157, 143, 237, 149,
    ];
    const SWAP: [u64; 16] = [
        141, 156, 145, 135, 115, 146, 199, 130, 160, 134, 147, 128, 121, 114, 197, 128,
    ];
    match op {
        0x00 => 0,
        0x01 => 150,
        0x02 => 200,
        0x03 => 219,
        0x04 => 404,
        0x05 => 360,
        0x06 => 320,
        0x07 => 560,
        0x08 => 360,
        0x09 => 700,
        0x0a => 720,
        0x0b => 481,
        0x10 => 201,
        0x11 => 264,
        0x12 => 176,
        0x13 => 222,
        0x14 => 220,
        0x15 => 165,
        0x16 => 288,
        0x17 => 160,
        0x18 => 454,
        0x19 => 364,
        0x1a => 589,
        0x1b => 478,
        0x1c => 498,
        0x1d => 834,
        0x20 => 560,
        0x30 => 284,
        0x31 => 1407,
        0x32 => 210,
        0x33 => 188,
        0x34 => 149,
        0x35 => 596,
        0x36 => 194,
        0x37 => 100,
        0x38 => 145,
        0x39 => 898,
        0x3a => 131,
        0x3b => 1481,
        0x3c => 1000,
        0x3d => 10,
        0x3e => 40,
        0x3f => 1000,
        0x40 => 500,
        0x41 => 189,
        0x42 => 265,
        0x43 => 202,
        0x44 => 1498,
        0x45 => 166,
        0x46 => 120,
        0x47 => 374,
        0x48 => 198,
        0x49 => 165,
        0x4a => 120,
        0x50 => 140,
        0x51 => 376,
        0x52 => 288,
        0x53 => 230,
        0x54 => 2550,
        0x55 => 2510,
        0x56 => 253,
        0x57 => 176,
        0x58 => 147,
        0x59 => 137,
        0x5a => 230,
        0x5b => 10,
        0x5c => 220,
        0x5d => 280,
        0x5e => 250,
        0x5f => 80,
        0x60..=0x7f => 120,
        0x80..=0x8f => DUP[usize::from(op - 0x80)],
        0x90..=0x9f => SWAP[usize::from(op - 0x90)],
        0xa0 => 100,
        0xa1..=0xa4 => 500,
        0xf0 => 2094,
        0xf1 => 5000,
        0xf2 => 4000,
        0xf3 => 0,
        0xf4 => 696,
        0xf5 => 10000,
        0xfa => 10000,
        0xfd => 0,
        0xff => 0,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::{keccak256, SecretKey};
    use crate::exec::fixtures::{creation_code, env, rich_world as world};
    use crate::exec::{call, create_address, BlockExec, Message, Outcome, StateSource};
    use crate::state::{self, State};
    use crate::trie::MemoryStore;
    use crate::types::transaction::{payload_gas, Transaction};
    use std::time::Duration;

    fn later() -> Instant {
        Instant::now() + Duration::from_secs(60)
    }

    fn steps() -> Mode {
        Mode::Steps(LogConfig::default())
    }

    /// Runs `code` as a creation from `from` under a tracer in `mode`.
    fn trace_creation(code: &[u8], mode: Mode) -> (Outcome, Result<Recorded, Stopped>) {
        let from = Address([0x11; 20]);
        let (store, root) = world(from);
        let msg = Message {
            from,
            to: None,
            gas: 1_000_000,
            gas_price: 0,
            value: [0; 32],
            input: code.to_vec(),
            access_list: Vec::new(),
        };
        let source = StateSource::new(&store, root, |_| None);
        let tracer = Tracer::new(mode, later(), Budget::default(), true);
        let (out, tracer) = call(env(1), source, &msg, tracer);
        (out.unwrap(), tracer.finish().0)
    }

    fn word(n: u64) -> RU256 {
        RU256::from(n)
    }

    /// Each step as the reference's struct logger shows it: pc, name, gas before and cost
    /// (each step's gas is the previous one's less its cost), the stack before, memory grown
    /// but not yet written, the slots written so far (the SSTORE's own included), the
    /// computation cost left and taken.
    #[test]
    fn struct_logs_follow_the_reference() {
        // PUSH1 2a PUSH1 01 SSTORE PUSH1 20 PUSH1 00 MSTORE PUSH1 20 PUSH1 00 RETURN
        let code = hex::decode("602a600155602060005260206000f3").unwrap();
        let (out, rec) = trace_creation(&code, steps());
        assert!(out.succeeded());
        let logs = rec.unwrap().steps;
        let names: Vec<_> = logs.iter().map(|l| op_name(l.op).into_owned()).collect();
        assert_eq!(
            names,
            ["PUSH1", "PUSH1", "SSTORE", "PUSH1", "PUSH1", "MSTORE", "PUSH1", "PUSH1", "RETURN"]
        );
        let pcs: Vec<u64> = logs.iter().map(|l| l.pc).collect();
        assert_eq!(pcs, [0, 2, 4, 5, 7, 9, 10, 12, 14]);
        assert_eq!(logs[0].gas, 1_000_000 - payload_gas(53_000, &code, true));
        for w in logs.windows(2) {
            assert_eq!(w[1].gas, w[0].gas - w[0].gas_cost, "{:?}", w[0]);
            assert_eq!(w[1].computation, w[0].computation - w[0].computation_cost);
        }
        assert_eq!(logs[0].computation, COMPUTATION_LIMIT);
        assert_eq!(logs[0].computation_cost, 120);
        assert_eq!(logs[0].gas_cost, 3);
        // A new slot, cold: 20,000 + 2,100.
        assert_eq!(logs[2].gas_cost, 22_100);
        assert_eq!(logs[2].stack, Some(vec![word(0x2a), word(1)]));
        let slot = |n: u8| {
            let mut k = [0u8; 32];
            k[31] = n;
            k
        };
        let stored: Storage = [(slot(1), slot(0x2a))].into();
        assert_eq!(logs[1].storage.as_deref(), Some(&Storage::new()));
        assert_eq!(logs[2].storage.as_deref(), Some(&stored));
        assert_eq!(logs[8].storage.as_deref(), Some(&stored));
        // MSTORE: one word of memory, grown and still zero; the word is there after it.
        assert_eq!(logs[5].gas_cost, 6);
        assert_eq!(logs[4].memory, Some(vec![]));
        assert_eq!(logs[5].memory, Some(vec![0; 32]));
        assert_eq!(logs[6].memory, Some(slot(0x20).to_vec()));
        assert!(logs.iter().all(|l| l.depth == 1 && l.error.is_none()));
        // The memory's size as logged (grown by the step), and no refund.
        let sizes: Vec<u64> = logs.iter().map(|l| l.mem_size).collect();
        assert_eq!(sizes, [0, 0, 0, 0, 0, 32, 32, 32, 32]);
        assert!(logs.iter().all(|l| l.refund == 0 && l.fault.is_none()));
    }

    /// The transaction's frame ends with what it returned and the gas it used before
    /// refunds (for a creation, the code deposit included), in either mode.
    #[test]
    fn the_frame_end_is_recorded() {
        let code = hex::decode("602a600155602060005260206000f3").unwrap();
        for mode in [steps(), Mode::Calls] {
            let (_, rec) = trace_creation(&code, mode);
            let end = rec.unwrap().end.unwrap();
            assert_eq!(end.output, slot(0x20).to_vec());
            // The steps' costs (3+3+22,100+3+3+6+3+3+0) and 200 per byte of code.
            assert_eq!(end.gas_used, 22_124 + 32 * 200);
            assert_eq!(end.error, None);
        }
        // A REVERT after PUSH1 0 PUSH1 0: the step logged, then again as a fault with the
        // stack it left; the frame's error.
        let (_, rec) = trace_creation(&hex::decode("60006000fd").unwrap(), steps());
        let rec = rec.unwrap();
        let revert = &rec.steps[2];
        assert_eq!(revert.error, None);
        let fault = revert.fault.as_ref().unwrap();
        assert_eq!(fault.error, "evm: execution reverted");
        assert_eq!(fault.stack, Some(vec![]));
        let end = rec.end.unwrap();
        assert_eq!(
            (end.gas_used, end.error.as_deref()),
            (6, Some("evm: execution reverted"))
        );
    }

    fn slot(n: u8) -> [u8; 32] {
        let mut k = [0u8; 32];
        k[31] = n;
        k
    }

    #[test]
    fn struct_log_options_leave_out_what_they_say() {
        let code = hex::decode("602a600155602060005260206000f3").unwrap();
        let cfg = LogConfig {
            disable_memory: true,
            disable_stack: true,
            disable_storage: true,
            limit: 4,
        };
        let (_, rec) = trace_creation(&code, Mode::Steps(cfg));
        let logs = rec.unwrap().steps;
        assert_eq!(logs.len(), 4);
        assert!(logs
            .iter()
            .all(|l| l.stack.is_none() && l.memory.is_none() && l.storage.is_none()));
        let cfg = LogConfig {
            limit: -1,
            ..LogConfig::default()
        };
        assert!(trace_creation(&code, Mode::Steps(cfg))
            .1
            .unwrap()
            .steps
            .is_empty());
    }

    /// A step that fails before the reference would log it carries an error, and the frame
    /// the reference's text.
    #[test]
    fn failing_steps_and_frames() {
        let (out, rec) = trace_creation(&[0x60, 0x01, 0xfe], steps());
        assert!(!out.succeeded());
        let logs = rec.unwrap().steps;
        assert_eq!(logs.len(), 2);
        assert!(logs[0].error.is_none());
        assert_eq!(logs[1].error.as_deref(), Some("invalid opcode 0xfe"));
        assert_eq!(op_name(logs[1].op), "Missing opcode 0xfe");
        // The costs shown again are those of the frame's previous step.
        assert_eq!((logs[1].gas_cost, logs[1].computation_cost), (3, 120));
        let (_, rec) = trace_creation(&[0xfe], Mode::Calls);
        let top = rec.unwrap().frame.unwrap();
        assert_eq!(top.kind, CallKind::Create);
        assert_eq!(top.error.as_deref(), Some("invalid opcode 0xfe"));
        let (_, rec) = trace_creation(&[0x01], Mode::Calls);
        assert_eq!(
            rec.unwrap().frame.unwrap().error.as_deref(),
            Some("stack underflow (0 <=> 2)")
        );
        // PUSH1 0 PUSH1 0 REVERT: logged without an error; the frame reverted.
        let (_, rec) = trace_creation(&hex::decode("60006000fd").unwrap(), steps());
        assert!(rec.unwrap().steps.iter().all(|l| l.error.is_none()));
        let (_, rec) = trace_creation(&hex::decode("60006000fd").unwrap(), Mode::Calls);
        assert_eq!(
            rec.unwrap().frame.unwrap().error.as_deref(),
            Some("evm: execution reverted")
        );
    }

    /// An endless loop stops at the deadline (the run is halted); a budget too small stops
    /// the trace as too large.
    #[test]
    fn traces_are_bounded() {
        let from = Address([0x11; 20]);
        let (store, root) = world(from);
        let msg = Message {
            from,
            to: None,
            gas: 999_999_999_999,
            gas_price: 0,
            value: [0; 32],
            // JUMPDEST PUSH1 0 JUMP
            input: hex::decode("5b600056").unwrap(),
            access_list: Vec::new(),
        };
        let started = Instant::now();
        let deadline = Instant::now() + Duration::from_millis(50);
        let tracer = Tracer::new(Mode::Calls, deadline, Budget::default(), true);
        let (out, tracer) = call(
            env(1),
            StateSource::new(&store, root, |_| None),
            &msg,
            tracer,
        );
        assert!(!out.unwrap().succeeded());
        assert_eq!(tracer.finish().0, Err(Stopped::Timeout));
        assert!(started.elapsed() < Duration::from_secs(30));
        let budget = Budget {
            steps: 5,
            bytes: MAX_BYTES,
        };
        let tracer = Tracer::new(steps(), later(), budget, true);
        let (_, tracer) = call(
            env(1),
            StateSource::new(&store, root, |_| None),
            &msg,
            tracer,
        );
        let (rec, left) = tracer.finish();
        assert_eq!(rec, Err(Stopped::TooLarge));
        assert_eq!(left.steps, 0);
    }

    /// A legacy transaction with gas enough for the test contracts.
    fn legacy(key: &SecretKey, nonce: u64, to: Option<Address>, input: Vec<u8>) -> Transaction {
        crate::exec::fixtures::legacy(key, nonce, to, input, 3_000_000)
    }

    fn root_after(store: &MemoryStore, root: [u8; 32], changes: &state::Changes) -> [u8; 32] {
        let mut s = State::at(store, root);
        s.apply(changes).unwrap();
        s.commit().0
    }

    /// A block run with a tracer watching one transaction gives the outcome the block run
    /// without gives, and the same state; the call frames nest Caller -> Counter.
    #[test]
    fn a_traced_run_is_the_run() {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let me = key.address();
        let (mut store, root) = world(me);
        let counter = create_address(&me, 0);
        let caller = create_address(&me, 1);
        let mut with_arg = creation_code("Caller");
        with_arg.extend([0u8; 12]);
        with_arg.extend(counter.0);
        let deploys = [
            legacy(&key, 0, None, creation_code("Counter")),
            legacy(&key, 1, None, with_arg),
        ];
        let mut exec = BlockExec::new(env(1), StateSource::new(&store, root, |_| None));
        for tx in &deploys {
            assert!(exec.run(tx, me, tx.intrinsic_gas(), 0).unwrap().succeeded());
        }
        let (changes, _, _) = exec.finish();
        let mut s = State::at(&store, root);
        let mut nodes = s.apply(&changes).unwrap();
        let (root, n) = s.commit();
        nodes.extend(n);
        drop(s);
        store.apply(nodes);

        let input = keccak256(b"callIncrement()")[..4].to_vec();
        let txs = [
            legacy(&key, 2, Some(caller), input.clone()),
            legacy(&key, 3, Some(caller), input.clone()),
        ];
        let plain = {
            let mut exec = BlockExec::new(env(2), StateSource::new(&store, root, |_| None));
            let outs: Vec<Outcome> = txs
                .iter()
                .map(|tx| exec.run(tx, me, tx.intrinsic_gas(), 0).unwrap())
                .collect();
            (outs, exec.finish())
        };
        for mode in [steps(), Mode::Calls] {
            let mut exec = BlockExec::new(env(2), StateSource::new(&store, root, |_| None));
            let first = exec.run(&txs[0], me, txs[0].intrinsic_gas(), 0).unwrap();
            let tracer = Tracer::new(mode, later(), Budget::default(), false);
            let (second, tracer, ran) = exec
                .run_inspected(&txs[1], me, txs[1].intrinsic_gas(), 0, tracer)
                .unwrap();
            assert!(ran);
            assert_eq!(vec![first, second.clone()], plain.0);
            let (changes, receipts, gas) = exec.finish();
            assert_eq!((receipts, gas), (plain.1 .1.clone(), plain.1 .2));
            assert_eq!(
                root_after(&store, root, &changes),
                root_after(&store, root, &plain.1 .0)
            );
            let rec = tracer.finish().0.unwrap();
            match mode {
                Mode::Steps(_) => {
                    // Counter's SSTORE (depth 2) writes 2 to slot 0, the second increment.
                    let sstore = rec.steps.iter().find(|l| l.op == opcode::SSTORE).unwrap();
                    assert_eq!(sstore.depth, 2);
                    let mut two = [0u8; 32];
                    two[31] = 2;
                    assert_eq!(sstore.storage.as_ref().unwrap().get(&[0; 32]), Some(&two));
                }
                Mode::Calls => {
                    let top = rec.frame.unwrap();
                    assert_eq!(
                        (top.kind, top.from, top.to),
                        (CallKind::Call, me, Some(caller))
                    );
                    assert_eq!(top.input, input);
                    assert_eq!(top.gas, 3_000_000 - txs[1].intrinsic_gas());
                    assert_eq!(top.calls.len(), 1);
                    let inner = &top.calls[0];
                    assert_eq!(
                        (inner.kind, inner.from, inner.to),
                        (CallKind::Call, caller, Some(counter))
                    );
                    assert_eq!(inner.input, keccak256(b"increment()")[..4].to_vec());
                    assert_eq!(inner.output.as_deref(), Some(&second.output[..]));
                    assert!(inner.gas_used > 0 && inner.gas_used < inner.gas);
                    assert_eq!(inner.value, Some([0; 32]));
                }
            }
        }
        // A transfer runs no code: the tracer is not shown it.
        let mut exec = BlockExec::new(env(2), StateSource::new(&store, root, |_| None));
        let transfer = legacy(&key, 2, Some(Address([0x35; 20])), Vec::new());
        let tracer = Tracer::new(Mode::Calls, later(), Budget::default(), false);
        let (out, tracer, ran) = exec
            .run_inspected(&transfer, me, 21_000, 0, tracer)
            .unwrap();
        assert!(!ran && out.succeeded());
        assert_eq!(tracer.finish().0.unwrap(), Recorded::default());
    }

    #[test]
    fn names_and_costs_of_the_reference() {
        assert_eq!(op_name(0x20), "SHA3");
        assert_eq!(op_name(0x44), "DIFFICULTY");
        assert_eq!(op_name(0x5c), "Missing opcode 0x5c");
        assert_eq!(op_name(0x5d), "Missing opcode 0x5d");
        assert_eq!(op_name(0x0c), "Missing opcode 0xc");
        assert_eq!(op_name(0x7f), "PUSH32");
        assert_eq!(op_name(0x8f), "DUP16");
        assert_eq!(op_name(0x90), "SWAP1");
        assert_eq!(op_name(0xa4), "LOG4");
        assert_eq!(op_name(0xb0), "PUSH");
        // The 148 opcodes of the Cancun-compatible set: STOP, RETURN, REVERT and
        // SELFDESTRUCT cost nothing, every other defined one something.
        let defined = (0..=255u8)
            .filter(|&op| computation_cost(op) > 0 || matches!(op, 0x00 | 0xf3 | 0xfd | 0xff))
            .count();
        assert_eq!(defined, 148);
        assert_eq!(computation_cost(0x55), 2510);
        assert_eq!(computation_cost(0x8e), 237);
        assert_eq!(computation_cost(0x9e), 197);
    }
}
