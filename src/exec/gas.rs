//! The reference's gas where it differs from Ethereum's, as revm's gas table: every byte of
//! a transaction's input costs 100 gas whatever its value (the reference's `TxDataGas`
//! since its Istanbul-compatible fork), instead of Ethereum's 4 or 16. The rest (21,000 a
//! transaction, 32,000 more to create a contract, 2 per word of creation code, the
//! opcodes' costs of the Cancun fork, refunds capped at a fifth) is the same.

use revm::context_interface::cfg::gas_params::{GasId, GasParams};

/// Gas per byte of a transaction's input.
pub const TX_DATA_GAS: u64 = 100;

/// The gas table of the EVM here (made once; each EVM holds a reference to it).
pub fn params() -> GasParams {
    static TABLE: std::sync::LazyLock<GasParams> = std::sync::LazyLock::new(|| {
        let mut p = GasParams::new_spec(super::SPEC);
        // tokens = zero bytes + non-zero bytes x 1; gas = tokens x 100.
        p.override_gas([
            (GasId::tx_token_non_zero_byte_multiplier(), 1),
            (GasId::tx_token_cost(), TX_DATA_GAS),
        ]);
        p
    });
    TABLE.clone()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::transaction::payload_gas as payload;

    /// revm's intrinsic gas with this table is the reference's for calls and creations.
    #[test]
    fn the_table_gives_the_reference_intrinsic_gas() {
        let p = params();
        for (input, create) in [
            (vec![], false),
            (vec![0, 0, 1, 2], false),
            (vec![0xff; 33], true),
            (vec![0; 64], true),
        ] {
            let base = if create { 53_000 } else { 21_000 };
            let revm = p
                .initial_tx_gas(&input, create, 0, 0, 0, None)
                .initial_total_gas();
            assert_eq!(revm, payload(base, &input, create), "{input:?} {create}");
        }
        assert_eq!(payload(53_000, &[1; 33], true), 53_000 + 3_300 + 4);
    }
}
