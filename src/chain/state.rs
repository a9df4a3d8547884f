//! The account state now lives in [`crate::state`] (contract storage and code beside the
//! accounts); this path stays for the chain's modules.

pub use crate::state::*;
