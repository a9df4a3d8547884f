//! The chain's data types and their byte-exact encodings (`transactions-and-blocks.md`):
//! account keys and transactions so far; headers, blocks and receipts next. Every decoder is
//! a pure function of the bytes that never panics, for the fuzzer of the hardening issue.

pub mod account_key;
pub mod anchoring;
pub mod block;
pub mod ethereum;
pub mod json;
pub mod native;
pub mod receipt;
pub mod rlp;
pub mod transaction;
