//! Messages: what `chain_call`, `chain_estimateGas` and `debug_traceCall` run, from any
//! account, on a state, keeping nothing, with the reference's texts when a message cannot run
//! at all. Blocks' transactions are run by [`super::BlockExec`].

use revm::context::{BlockEnv, CfgEnv, Context, TxEnv};
use revm::primitives::{Bytes, TxKind, U256 as RU256};

use super::{
    block_env, cfg, outcome_of, raddr, ru256, Env, ExecError, Outcome, Overlay, Source, SPEC,
};
use crate::crypto::Address;
use crate::state::StateError;
use crate::types::transaction::{AccessTuple, U256};

/// A message run by `chain_call`, `chain_estimateGas` and `debug_traceCall`: from `from`
/// (any account: no signature, no nonce check), on a state, nothing kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub from: Address,
    /// `None`: the input is creation code, run as a contract creation.
    pub to: Option<Address>,
    pub gas: u64,
    pub gas_price: u128,
    pub value: U256,
    pub input: Vec<u8>,
    /// Warmed before the run and charged as intrinsic gas, as a transaction's (EIP-2930).
    pub access_list: Vec<AccessTuple>,
}

/// Why a message could not run at all (before any code ran), with the reference's texts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    #[error("intrinsic gas too low: msg.gas {gas}, want {want}")]
    IntrinsicGas { gas: u64, want: u64 },
    #[error("err: insufficient balance for transfer (supplied gas {gas})")]
    InsufficientBalance { gas: u64 },
    #[error("err: {why} (supplied gas {gas})")]
    Refused { why: String, gas: u64 },
    #[error(transparent)]
    State(#[from] StateError),
}

/// The interpreter frames and shared memory a thread's calls reuse.
type SpareFrames = (
    revm::context::FrameStack<
        revm::handler::EthFrame<revm::interpreter::interpreter::EthInterpreter>,
    >,
    revm::context::LocalContext,
);

thread_local! {
    static SPARE_FRAMES: std::cell::RefCell<Option<SpareFrames>> =
        const { std::cell::RefCell::new(None) };
}

/// Runs `msg` in block `env` over `source`, keeping nothing: the sender is first credited
/// the gas it may burn (gas x price), as the reference does, so that any account can call.
/// `inspector` watches every step (tracing); `NoOpInspector` watches nothing.
pub fn call<S: Source, I>(
    env: Env,
    source: S,
    msg: &Message,
    inspector: I,
) -> (Result<Outcome, CallError>, I)
where
    I: revm::Inspector<Context<BlockEnv, TxEnv, CfgEnv, Overlay<S>>>,
{
    call_overridden(env, source, msg, inspector, &[])
}

/// [`call`] on the state with `overrides` applied first (`eth_call`'s state overrides).
pub fn call_overridden<S: Source, I>(
    env: Env,
    source: S,
    msg: &Message,
    inspector: I,
    overrides: &[(Address, super::db::AccountOverride)],
) -> (Result<Outcome, CallError>, I)
where
    I: revm::Inspector<Context<BlockEnv, TxEnv, CfgEnv, Overlay<S>>>,
{
    use revm::InspectEvm;
    let mut overlay = Overlay::new(source);
    let overridden = overrides
        .iter()
        .try_for_each(|(address, o)| overlay.override_account(*address, o));
    let credit = overridden.and_then(|()| -> Result<(), StateError> {
        let fee = RU256::from(msg.gas).saturating_mul(RU256::from(msg.gas_price));
        if fee.is_zero() {
            return Ok(());
        }
        let mut from = overlay.account(&msg.from)?.unwrap_or_default();
        let balance = RU256::from_be_bytes(from.balance).saturating_add(fee);
        from.balance = balance.to_be_bytes();
        overlay.put(msg.from, from);
        Ok(())
    });
    let mut cfg = cfg(env.chain_id);
    cfg.disable_nonce_check = true;
    let ctx = Context::<BlockEnv, TxEnv, CfgEnv, Overlay<S>>::new(overlay, SPEC)
        .with_cfg(cfg)
        .with_block(block_env(&env));
    // The frames (a 32 KiB stack each) and the memory buffer of the thread's last call are
    // used again: made and freed per call (and wiped when freed, `wipe_alloc`) they cost a
    // call more than running it. (`build_mainnet` would make eight frames to start with.)
    let (frames, local) = SPARE_FRAMES
        .with(|s| s.borrow_mut().take())
        .unwrap_or_default();
    let mut ctx = ctx;
    ctx.local = local;
    let mut evm = revm::context::Evm {
        ctx,
        inspector,
        instruction: revm::handler::instructions::EthInstructions::new_mainnet_with_spec(SPEC),
        precompiles: revm::handler::EthPrecompiles::new(SPEC),
        frame_stack: frames,
    };
    if let Err(e) = credit {
        return (Err(e.into()), evm.inspector);
    }
    let txenv = TxEnv {
        // revm reads an access list (warms it, charges its intrinsic gas) only from a typed
        // transaction: EIP-2930's type, which is a legacy one plus the list.
        tx_type: if msg.access_list.is_empty() { 0 } else { 1 },
        caller: raddr(&msg.from),
        gas_limit: msg.gas,
        gas_price: msg.gas_price,
        kind: match msg.to {
            Some(to) => TxKind::Call(raddr(&to)),
            None => TxKind::Create,
        },
        value: ru256(&msg.value),
        data: Bytes::copy_from_slice(&msg.input),
        nonce: 0,
        chain_id: None,
        access_list: super::access_list(&msg.access_list),
        ..TxEnv::default()
    };
    let result = evm.inspect_tx(txenv);
    evm.frame_stack.clear();
    revm::context_interface::LocalContextTr::clear(&mut evm.ctx.local);
    let spare = (
        std::mem::take(&mut evm.frame_stack),
        std::mem::take(&mut evm.ctx.local),
    );
    SPARE_FRAMES.with(|s| *s.borrow_mut() = Some(spare));
    let outcome = match result {
        Ok(r) => Ok(outcome_of(r.result, 0, None)),
        Err(revm::context::result::EVMError::Transaction(t)) => Err(refusal(t, msg.gas)),
        Err(revm::context::result::EVMError::Database(ExecError::State(e))) => Err(e.into()),
        Err(e) => Err(CallError::Refused {
            why: format!("{e}"),
            gas: msg.gas,
        }),
    };
    (outcome, evm.inspector)
}

fn refusal(t: revm::context::result::InvalidTransaction, gas: u64) -> CallError {
    use revm::context::result::InvalidTransaction as T;
    match t {
        T::CallGasCostMoreThanGasLimit { initial_gas, .. } => CallError::IntrinsicGas {
            gas,
            want: initial_gas,
        },
        T::LackOfFundForMaxFee { .. } => CallError::InsufficientBalance { gas },
        other => CallError::Refused {
            why: other.to_string(),
            gas,
        },
    }
}
