//! Reading caver-js's vectors (tests/vectors/caver-transactions.json) as the reference's JSON
//! writes the same values.

use serde_json::{json, Value};

/// A hex quantity without leading zeros, as Go's `hexutil.Big` writes it (caver keeps the
/// leading zeros of V, R and S).
pub fn minimal(v: &Value) -> Value {
    let s = v
        .as_str()
        .unwrap()
        .trim_start_matches("0x")
        .trim_start_matches('0');
    json!(format!("0x{}", if s.is_empty() { "0" } else { s }))
}

/// caver's `[V, R, S]` signatures as the reference's JSON writes them.
pub fn signatures_json(sigs: &Value) -> Value {
    sigs.as_array()
        .unwrap()
        .iter()
        .map(|s| json!({"V": minimal(&s[0]), "R": minimal(&s[1]), "S": minimal(&s[2])}))
        .collect()
}
