//! The reference's computation cost (`chain_estimateComputationCost`): a cost per executed
//! opcode of its Cancun-compatible instruction set, plus one per precompile call, summed
//! over every frame of a call. Counted by an inspector; nothing else here limits or
//! charges it (README: the per-transaction limit is not enforced).

use revm::context_interface::ContextTr;
use revm::interpreter::interpreter_types::Jumps;
use revm::interpreter::{CallInputs, CallOutcome, Interpreter};
use revm::Inspector;

/// The cost of each opcode (0 for undefined ones, which fail anyway).
const OPCODE_COST: [u64; 256] = {
    let mut t = [0u64; 256];
    let pairs: [(usize, u64); 77] = [
        (0x00, 0),
        (0x01, 150),
        (0x02, 200),
        (0x03, 219),
        (0x04, 404),
        (0x05, 360),
        (0x06, 320),
        (0x07, 560),
        (0x08, 360),
        (0x09, 700),
        (0x0a, 720),
        (0x0b, 481),
        (0x10, 201),
        (0x11, 264),
        (0x12, 176),
        (0x13, 222),
        (0x14, 220),
        (0x15, 165),
        (0x16, 288),
        (0x17, 160),
        (0x18, 454),
        (0x19, 364),
        (0x1a, 589),
        (0x1b, 478),
        (0x1c, 498),
        (0x1d, 834),
        (0x20, 560),
        (0x30, 284),
        (0x31, 1407),
        (0x32, 210),
        (0x33, 188),
        (0x34, 149),
        (0x35, 596),
        (0x36, 194),
        (0x37, 100),
        (0x38, 145),
        (0x39, 898),
        (0x3a, 131),
        (0x3b, 1481),
        (0x3c, 1000),
        (0x3d, 10),
        (0x3e, 40),
        (0x3f, 1000),
        (0x40, 500),
        (0x41, 189),
        (0x42, 265),
        (0x43, 202),
        (0x44, 1498),
        (0x45, 166),
        (0x46, 120),
        (0x47, 374),
        (0x48, 198),
        (0x49, 165),
        (0x4a, 120),
        (0x50, 140),
        (0x51, 376),
        (0x52, 288),
        (0x53, 230),
        (0x54, 2550),
        (0x55, 2510),
        (0x56, 253),
        (0x57, 176),
        (0x58, 147),
        (0x59, 137),
        (0x5a, 230),
        (0x5b, 10),
        (0x5c, 220),
        (0x5d, 280),
        (0x5e, 250),
        (0x5f, 80),
        (0xa0, 100),
        (0xf0, 2094),
        (0xf1, 5000),
        (0xf2, 4000),
        (0xf4, 696),
        (0xf5, 10000),
        (0xfa, 10000),
    ];
    let mut i = 0;
    while i < pairs.len() {
        t[pairs[i].0] = pairs[i].1;
        i += 1;
    }
    // PUSH1..PUSH32
    let mut op = 0x60;
    while op <= 0x7f {
        t[op] = 120;
        op += 1;
    }
    let dup: [u64; 16] = [
        190, 190, 176, 142, 177, 165, 147, 157, 138, 174, 141, 144, 157, 143, 237, 149,
    ];
    let swap: [u64; 16] = [
        141, 156, 145, 135, 115, 146, 199, 130, 160, 134, 147, 128, 121, 114, 197, 128,
    ];
    let mut k = 0;
    while k < 16 {
        t[0x80 + k] = dup[k];
        t[0x90 + k] = swap[k];
        k += 1;
    }
    // LOG1..LOG4
    let mut l = 0xa1;
    while l <= 0xa4 {
        t[l] = 500;
        l += 1;
    }
    t
};

/// The computation cost of a precompile call with `len` bytes of input (the reference's
/// table); `None` for an address that is no precompile.
fn precompile_cost(address: &[u8; 20], len: usize) -> Option<u64> {
    if address[..19].iter().any(|&b| b != 0) {
        return None;
    }
    let words = len.div_ceil(32) as u64;
    Some(match address[19] {
        0x01 => 113_150,
        0x02 => 1_000 + 100 * words,
        0x03 => 100 + 10 * words,
        0x04 => 0,
        // modexp: gas / 100 + 100; its gas is not known here: the floor.
        0x05 => 102,
        0x06 => 8_000,
        0x07 => 100_000,
        0x08 => 2_000_000 + 1_000_000 * (len as u64 / 192),
        0x09 => 10_000,
        0x0a => 2_200_000,
        _ => return None,
    })
}

/// Sums the computation cost of what it watches.
#[derive(Debug, Default, Clone, Copy)]
pub struct ComputationCost {
    pub total: u64,
}

impl<CTX: ContextTr> Inspector<CTX> for ComputationCost {
    fn step(&mut self, interp: &mut Interpreter, _: &mut CTX) {
        self.total = self
            .total
            .saturating_add(OPCODE_COST[usize::from(interp.bytecode.opcode())]);
    }

    fn call(&mut self, _: &mut CTX, inputs: &mut CallInputs) -> Option<CallOutcome> {
        if let Some(c) = precompile_cost(&inputs.bytecode_address.0 .0, inputs.input.len()) {
            self.total = self.total.saturating_add(c);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_the_reference_costs() {
        assert_eq!(OPCODE_COST[0x54], 2550, "SLOAD");
        assert_eq!(OPCODE_COST[0x55], 2510, "SSTORE");
        assert_eq!(OPCODE_COST[0x60], 120, "PUSH1");
        assert_eq!(OPCODE_COST[0x7f], 120, "PUSH32");
        assert_eq!(OPCODE_COST[0x8f], 149, "DUP16");
        assert_eq!(OPCODE_COST[0x9e], 197, "SWAP15");
        assert_eq!(OPCODE_COST[0xa4], 500, "LOG4");
        assert_eq!(OPCODE_COST[0xfd], 0, "REVERT");
        let defined = OPCODE_COST.iter().filter(|&&c| c > 0).count();
        // 148 defined opcodes, of which STOP, RETURN, REVERT, SELFDESTRUCT cost nothing.
        assert_eq!(defined, 148 - 4);
        let mut one = [0u8; 20];
        one[19] = 1;
        assert_eq!(precompile_cost(&one, 128), Some(113_150));
        assert_eq!(precompile_cost(&[1; 20], 0), None);
    }
}
