//! Calls on the chain's state that keep nothing: `chain_call` (a message run at a block),
//! `chain_estimateGas` (the least gas a message succeeds with, by bisection as the reference
//! does), `chain_createAccessList` (the slots and addresses a message touches), and the state
//! reads a call needs (code, storage, accounts with their existence).

use super::run::state_source;
use super::state::{self, Account};
use super::{Chain, ChainError};
use crate::crypto::Address;
use crate::exec::accesslist::AccessListTracer;
use crate::exec::{self, CallError, Env, Message, Outcome};
use crate::types::block::Header;
use crate::types::transaction::{AccessTuple, U256};
use revm::inspector::NoOpInspector;

/// The gas a call gets when it names none (the reference's `UpperGasLimit`).
pub const CALL_GAS_CAP: u64 = 999_999_999_999;
/// The least gas any transaction needs (`TxGas`).
const TX_GAS: u64 = 21_000;

/// Block hashes by number, as a call's BLOCKHASH reads them.
pub type BlockHashes<'a> = Box<dyn FnMut(u64) -> Option<[u8; 32]> + 'a>;

/// The EVM context a call runs in (what an inspector watching it sees).
pub type CallContext<'a> = revm::context::Context<
    revm::context::BlockEnv,
    revm::context::TxEnv,
    revm::context::CfgEnv,
    exec::Overlay<exec::StateSource<super::DbNodes<'a>, BlockHashes<'a>>>,
>;

/// A call's arguments (`CallArgs`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CallArgs {
    pub from: Option<Address>,
    pub to: Option<Address>,
    /// `None` or 0: [`CALL_GAS_CAP`].
    pub gas: Option<u64>,
    /// `None`: 0 (this chain has no base fee).
    pub gas_price: Option<U256>,
    pub value: Option<U256>,
    pub input: Vec<u8>,
    /// Warmed and charged as a transaction's (`chain_createAccessList`; `chain_call` takes
    /// none, as before).
    pub access_list: Vec<AccessTuple>,
}

/// What [`Chain::create_access_list`] found: the list, the gas the message uses with it,
/// and the reference's text of the code's failure, if it failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessListOutcome {
    pub access_list: Vec<AccessTuple>,
    pub gas_used: u64,
    pub failure: Option<&'static str>,
}

/// A message [`Chain::create_access_list`] could not run, and the list it ran with.
#[derive(Debug)]
pub struct AccessListFailure {
    pub error: CallError,
    pub access_list: Vec<AccessTuple>,
}

/// Why a call or an estimate failed.
#[derive(Debug, thiserror::Error)]
pub enum CallFailure {
    /// The message ran and failed: the receipt status and, for a revert, its data.
    #[error("{}", exec::status::text(*status))]
    Failed { status: u64, output: Vec<u8> },
    #[error(transparent)]
    Refused(#[from] CallError),
    #[error("gas required exceeds allowance ({0})")]
    Allowance(u64),
    #[error("insufficient funds for transfer")]
    InsufficientFunds,
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl CallArgs {
    /// The message these arguments make, with `gas`.
    pub fn message(&self, gas: u64) -> Message {
        let price = self.gas_price.unwrap_or([0; 32]);
        Message {
            from: self.from.unwrap_or(Address([0; 20])),
            to: self.to,
            gas,
            gas_price: u128::from_be_bytes(price[16..].try_into().expect("16 bytes")),
            value: self.value.unwrap_or([0; 32]),
            input: self.input.clone(),
            access_list: self.access_list.clone(),
        }
    }

    /// The gas the message gets: `gas`, or [`CALL_GAS_CAP`] for none or 0.
    pub fn gas(&self) -> u64 {
        match self.gas {
            Some(g) if g > 0 => g,
            _ => CALL_GAS_CAP,
        }
    }
}

impl Chain {
    /// The block environment of a call made at block `(hash, header)`: its number, time and
    /// rewardbase.
    fn call_env(&self, hash: &[u8; 32], header: &Header) -> Env {
        let _ = hash;
        Env {
            number: header.number,
            timestamp: header.time,
            rewardbase: header.rewardbase,
            parent_hash: header.parent_hash,
            chain_id: self.chain_id(),
        }
    }

    /// The canonical header at `number` (the head when `None`), its state kept; `None` when
    /// the chain lacks the block.
    pub fn state_header(
        &self,
        number: Option<u64>,
    ) -> Result<Option<([u8; 32], Header)>, ChainError> {
        let number = number.unwrap_or_else(|| self.head_number());
        let Some(found) = self.header_at(number)? else {
            return Ok(None);
        };
        self.check_state_kept(number)?;
        Ok(Some(found))
    }

    /// Runs `msg` on the state of `(hash, header)` with `inspector` watching.
    pub fn run_message<'a, I>(
        &'a self,
        at: &([u8; 32], Header),
        msg: &Message,
        inspector: I,
    ) -> (Result<Outcome, CallError>, I)
    where
        I: revm::Inspector<CallContext<'a>>,
    {
        let hashes: BlockHashes<'a> = Box::new(|n| self.db.hash_at(n).ok().flatten());
        let source = state_source(self.db_nodes(), at.1.state_root, hashes)
            .with_lookups(self.lookups.clone());
        exec::call(self.call_env(&at.0, &at.1), source, msg, inspector)
    }

    /// `chain_call`: what `args` returns when run at `at`; a failure of the code is
    /// [`CallFailure::Failed`].
    pub fn call(&self, args: &CallArgs, at: &([u8; 32], Header)) -> Result<Vec<u8>, CallFailure> {
        self.call_overridden(args, at, &[])
    }

    /// [`Chain::call`] on the state at `at` with `overrides` applied (`eth_call`).
    pub fn call_overridden(
        &self,
        args: &CallArgs,
        at: &([u8; 32], Header),
        overrides: &[(Address, exec::AccountOverride)],
    ) -> Result<Vec<u8>, CallFailure> {
        let hashes: BlockHashes<'_> = Box::new(|n| self.db.hash_at(n).ok().flatten());
        let source = state_source(self.db_nodes(), at.1.state_root, hashes)
            .with_lookups(self.lookups.clone());
        let msg = args.message(args.gas());
        let env = self.call_env(&at.0, &at.1);
        let (out, _) = exec::call_overridden(env, source, &msg, NoOpInspector, overrides);
        let out = out?;
        if out.succeeded() {
            Ok(out.output)
        } else {
            Err(CallFailure::Failed {
                status: out.receipt.status,
                output: out.output,
            })
        }
    }

    /// `chain_estimateGas`: the least gas with which `args` succeeds on the head's state,
    /// found by bisection between 21,000 and the gas given (or [`CALL_GAS_CAP`]), capped by
    /// what the sender can pay at the given price. The reference's errors: the code's own
    /// failure at the cap, `gas required exceeds allowance (<cap>)` when even the cap runs
    /// out of gas.
    pub fn estimate_gas(&self, args: &CallArgs) -> Result<u64, CallFailure> {
        let at = self
            .state_header(None)?
            .ok_or_else(|| ChainError::Corrupt("no head block".into()))?;
        let mut lo = TX_GAS - 1;
        let mut hi = match args.gas {
            Some(g) if g >= TX_GAS => g,
            _ => CALL_GAS_CAP,
        };
        if let Some(price) = args.gas_price.filter(|p| *p != [0; 32]) {
            let from = args.from.unwrap_or(Address([0; 20]));
            let balance = self.account(&from, None)?.unwrap_or_default().balance;
            let value = args.value.unwrap_or([0; 32]);
            if value >= balance {
                return Err(CallFailure::InsufficientFunds);
            }
            let left = state::sub(&balance, &value).unwrap_or([0; 32]);
            let allowance = div_u256(&left, &price);
            hi = hi.min(allowance);
        }
        let cap = hi;
        // `Ok(None)`: it runs with that gas; `Ok(Some(outcome))`: it fails (or needs more
        // intrinsic gas); `Err`: it cannot run at all.
        let probe = |gas: u64| -> Result<Option<Outcome>, CallFailure> {
            match self.run_message(&at, &args.message(gas), NoOpInspector).0 {
                Ok(o) if o.succeeded() => Ok(None),
                Ok(o) => Ok(Some(o)),
                Err(CallError::IntrinsicGas { .. }) => Ok(Some(Outcome {
                    receipt: crate::types::receipt::Receipt {
                        status: exec::status::ERR_OUT_OF_GAS,
                        gas_used: gas,
                        logs: Vec::new(),
                    },
                    output: Vec::new(),
                    contract: None,
                })),
                Err(e) => Err(e.into()),
            }
        };
        while lo + 1 < hi {
            let mid = lo + (hi - lo) / 2;
            if probe(mid)?.is_none() {
                hi = mid;
            } else {
                lo = mid;
            }
        }
        if hi == cap {
            if let Some(failed) = probe(hi)? {
                if failed.receipt.status != exec::status::ERR_OUT_OF_GAS {
                    return Err(CallFailure::Failed {
                        status: failed.receipt.status,
                        output: failed.output,
                    });
                }
                return Err(CallFailure::Allowance(cap));
            }
        }
        Ok(hi)
    }

    /// `chain_createAccessList`: runs `args` at `at` under the access-list tracer, then
    /// again with the list it recorded, until a run records no more (what the reference
    /// does, without a bound of its own: each round only adds). `to` is left out of the
    /// list's addresses with the sender (the recipient, or the address a creation makes).
    /// A failure of the code is in the outcome; a message that cannot run is the error.
    pub fn create_access_list(
        &self,
        args: &CallArgs,
        to: Address,
        at: &([u8; 32], Header),
    ) -> Result<AccessListOutcome, AccessListFailure> {
        let from = args.from.unwrap_or(Address([0; 20]));
        let mut previous = AccessListTracer::new(&args.access_list, from, to);
        let mut args = args.clone();
        loop {
            args.access_list = previous.access_list();
            let tracer = AccessListTracer::new(&args.access_list, from, to);
            let (out, tracer) = self.run_message(at, &args.message(args.gas()), tracer);
            let out = out.map_err(|error| AccessListFailure {
                error,
                access_list: args.access_list.clone(),
            })?;
            if tracer.same_list(&previous) {
                return Ok(AccessListOutcome {
                    access_list: args.access_list,
                    gas_used: out.receipt.gas_used,
                    failure: (!out.succeeded()).then(|| exec::status::text(out.receipt.status)),
                });
            }
            previous = tracer;
        }
    }

    /// The account at `address` in the state at `at`; `None` when the state has no entry.
    pub fn account_at(
        &self,
        address: &Address,
        at: &([u8; 32], Header),
    ) -> Result<Option<Account>, ChainError> {
        let nodes = self.db_nodes();
        let s = state::State::at(&nodes, at.1.state_root);
        if s.exists(address)? {
            Ok(Some(s.account(address)?))
        } else {
            Ok(None)
        }
    }

    /// The code of `address` in the state at `at` (empty without).
    pub fn code_at(
        &self,
        address: &Address,
        at: &([u8; 32], Header),
    ) -> Result<Vec<u8>, ChainError> {
        let nodes = self.db_nodes();
        Ok(state::State::at(&nodes, at.1.state_root).code(address)?)
    }

    /// The value of storage `slot` of `address` in the state at `at`.
    pub fn storage_at(
        &self,
        address: &Address,
        slot: &U256,
        at: &([u8; 32], Header),
    ) -> Result<U256, ChainError> {
        let nodes = self.db_nodes();
        Ok(state::State::at(&nodes, at.1.state_root).storage(address, slot)?)
    }
}

/// `a / b` for a non-zero `b`, saturated to 64 bits.
fn div_u256(a: &U256, b: &U256) -> u64 {
    let a = revm::primitives::U256::from_be_bytes(*a);
    let b = revm::primitives::U256::from_be_bytes(*b);
    if b.is_zero() {
        return u64::MAX;
    }
    let q = a / b;
    u64::try_from(q).unwrap_or(u64::MAX)
}
