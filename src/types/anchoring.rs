//! The data a chain-data anchoring transaction carries, decoded for its `inputJSON` member
//! (the reference's `DecodeAnchoringDataToJSON`, `blockchain/types/anchoring_data.go`):
//! `RLP([type, data])` with type 0 (`data` the RLP of a block summary) or 128 (`data` a JSON
//! object), else the legacy form (the RLP of a summary without counts). Anything else is
//! `null`, as the reference leaves it.

use serde_json::{Map, Value};

use super::rlp::ListReader;

/// `payload` decoded as anchoring data, or `null`.
pub fn input_json(payload: &[u8]) -> Value {
    wrapped(payload)
        .or_else(|| summary(payload, false))
        .unwrap_or(Value::Null)
}

fn wrapped(payload: &[u8]) -> Option<Value> {
    let mut r = ListReader::whole(payload).ok()?;
    let kind = u8::try_from(r.u64().ok()?).ok()?;
    let data = r.bytes().ok()?;
    r.end().ok()?;
    match kind {
        0 => summary(data, true),
        128 => serde_json::from_slice::<Value>(data)
            .ok()
            .filter(Value::is_object)
            .map(sorted),
        _ => None,
    }
}

/// A block summary: six fields, or eight with the block and transaction counts.
fn summary(bytes: &[u8], counts: bool) -> Option<Value> {
    let mut r = ListReader::whole(bytes).ok()?;
    let mut m = Map::new();
    for name in [
        "blockHash",
        "transactionsRoot",
        "parentHash",
        "receiptsRoot",
        "stateRoot",
    ] {
        let h = r.bytes().ok()?;
        if h.len() != 32 {
            return None;
        }
        m.insert(name.into(), format!("0x{}", hex::encode(h)).into());
    }
    let names: &[&str] = if counts {
        &["blockNumber", "blockCount", "txCount"]
    } else {
        &["blockNumber"]
    };
    for name in names {
        let n = r.u256().ok()?;
        if n[..24].iter().any(|&b| b != 0) {
            return None;
        }
        m.insert(
            (*name).into(),
            u64::from_be_bytes(n[24..].try_into().expect("8 bytes")).into(),
        );
    }
    r.end().ok()?;
    Some(Value::Object(m))
}

/// A JSON value with its objects' keys in Go's map order (sorted).
fn sorted(v: Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(a) => Value::Array(a.into_iter().map(sorted).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::rlp::{list, put_bytes, put_u64};

    fn summary_rlp(counts: bool) -> Vec<u8> {
        let mut p = Vec::new();
        for b in 1..=5u8 {
            put_bytes(&mut p, &[b; 32]);
        }
        put_u64(&mut p, 1000);
        if counts {
            put_u64(&mut p, 10);
            put_u64(&mut p, 7);
        }
        list(&p)
    }

    #[test]
    fn the_three_forms_and_anything_else() {
        let mut p = Vec::new();
        put_u64(&mut p, 0);
        put_bytes(&mut p, &summary_rlp(true));
        let v = input_json(&list(&p));
        assert_eq!(
            v.to_string(),
            format!(
                r#"{{"blockHash":"0x{}","transactionsRoot":"0x{}","parentHash":"0x{}","receiptsRoot":"0x{}","stateRoot":"0x{}","blockNumber":1000,"blockCount":10,"txCount":7}}"#,
                "01".repeat(32),
                "02".repeat(32),
                "03".repeat(32),
                "04".repeat(32),
                "05".repeat(32)
            )
        );
        let legacy = input_json(&summary_rlp(false));
        assert_eq!(legacy["blockNumber"], 1000);
        assert!(legacy.get("txCount").is_none());
        let mut p = Vec::new();
        put_u64(&mut p, 128);
        put_bytes(&mut p, br#"{"z":1,"a":{"y":2,"b":3}}"#);
        assert_eq!(
            input_json(&list(&p)).to_string(),
            r#"{"a":{"b":3,"y":2},"z":1}"#
        );
        // The suite's memo, an unknown type, a short hash.
        let memo =
            hex::decode("b3f98adc0000000000000000000000000000000000000000000000000000000000000001")
                .unwrap();
        assert_eq!(input_json(&memo), Value::Null);
        let mut p = Vec::new();
        put_u64(&mut p, 1);
        put_bytes(&mut p, &summary_rlp(true));
        assert_eq!(input_json(&list(&p)), Value::Null);
        assert_eq!(input_json(&[]), Value::Null);
    }
}
