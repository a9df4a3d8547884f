//! The reference's computation cost (`chain_estimateComputationCost`): a cost per executed
//! opcode of its Cancun-compatible instruction set, plus one per precompile run, summed
//! over every frame of a call. Counted by an inspector with the tables of [`super::trace`]
//! (which the struct logger reports too); nothing here limits or charges it (README: the
//! per-transaction limit is not enforced on blocks).

use revm::context_interface::ContextTr;
use revm::interpreter::interpreter_types::Jumps;
use revm::interpreter::{CallInputs, CallOutcome, Interpreter};
use revm::Inspector;

use super::trace::{computation_cost, precompile_computation_cost};

/// Sums the computation cost of what it watches.
#[derive(Debug, Default, Clone, Copy)]
pub struct ComputationCost {
    pub total: u64,
}

impl<CTX: ContextTr> Inspector<CTX> for ComputationCost {
    fn step(&mut self, interp: &mut Interpreter, _: &mut CTX) {
        self.total = self
            .total
            .saturating_add(computation_cost(interp.bytecode.opcode()));
    }

    fn call_end(&mut self, ctx: &mut CTX, inputs: &CallInputs, outcome: &mut CallOutcome) {
        if outcome.was_precompile_called {
            let r = &outcome.result;
            let input = inputs.input.bytes(ctx);
            self.total = self.total.saturating_add(precompile_computation_cost(
                inputs.bytecode_address.0 .0,
                &input,
                r.gas.limit().saturating_sub(r.gas.remaining()),
            ));
        }
    }
}
