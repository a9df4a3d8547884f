//! Plain words for the node's parameter errors. The node answers Go's JSON-decoding texts, as
//! the reference does (`invalid argument 0: json: cannot unmarshal hex string without 0x
//! prefix into Go value of type common.Address`): that is the wire contract its clients and
//! test suites match on. A person should not have to know Go to read them, so `chainctl` and
//! the console print a line under such an error saying which parameter (or member) was wrong
//! and what it takes.

/// What a value of the reference's Go type `ty` is, as a person writes it.
fn takes(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "string" => "a JSON string",
        "bool" => "true or false",
        "int" | "uint" | "uint64" | "int64" => "a JSON number (not quoted)",
        "common.Address" => "an address: \"0x\" and 40 hex digits",
        "common.Hash" => "a 32-byte hash: \"0x\" and 64 hex digits",
        "hexutil.Bytes" => "bytes as \"0x\" and an even number of hex digits",
        "hexutil.Uint64" => "a quantity as a quoted 0x hex number, e.g. \"0x5208\"",
        "hexutil.Uint" => "a quantity as a quoted 0x hex number, e.g. \"0x10\"",
        "*hexutil.Big" | "hexutil.Big" => "a quantity as a quoted 0x hex number, e.g. \"0x1\"",
        "api.SendTxArgs" | "api.EthTransactionArgs" => {
            "a transaction object, e.g. {\"from\": \"0x..\", \"to\": \"0x..\", \"value\": \"0x1\"}"
        }
        "api.CallArgs" => "a call object, e.g. {\"to\": \"0x..\", \"data\": \"0x..\"}",
        "types.TxType" => "a transaction type number (typeInt), e.g. 8",
        "params.CodeFormat" => "a code format number (0: EVM)",
        "rpc.ID" => "an id string as returned when it was made",
        "tracers.TraceConfig" => "a trace options object, e.g. {\"tracer\": \"callTracer\"}",
        "*api.BlockNonce" => "a block nonce: \"0x\" and 16 hex digits",
        _ => return None,
    })
}

/// What went wrong with the text itself, for hexutil's messages.
fn why(got: &str) -> Option<String> {
    Some(match got {
        "hex string without 0x prefix" => "it does not start with 0x".into(),
        "hex string of odd length" => "it has an odd number of hex digits".into(),
        "invalid hex string" => "it has a character that is not a hex digit".into(),
        "hex number with leading zero digits" => {
            "a quantity has no leading zeros (\"0x1\", not \"0x01\")".into()
        }
        "hex number > 64 bits" => "it is larger than 64 bits".into(),
        "hex number > 256 bits" => "it is larger than 256 bits".into(),
        "empty hex string" => "it is empty".into(),
        "hex string \"0x\"" => "\"0x\" alone has no digits".into(),
        "non-string" => "it is not a quoted string".into(),
        "number" | "string" | "bool" | "object" | "array" | "null" => format!("it is a JSON {got}"),
        n if n.starts_with("number ") => format!("{} is out of range", &n[7..]),
        _ => return None,
    })
}

/// The explanation of the -32602 `message`, or `None` when it is not one of Go's decoding
/// texts (it then explains itself).
pub fn explain(code: i64, message: &str) -> Option<String> {
    if code != -32602 {
        return None;
    }
    let rest = message.strip_prefix("invalid argument ")?;
    let (index, text) = rest.split_once(": ")?;
    let index: usize = index.parse().ok()?;
    let what = |field: Option<&str>| match field {
        Some(f) => format!("member \"{f}\" of parameter {} ", index + 1),
        None => format!("parameter {} ", index + 1),
    };
    if let Some(t) = text.strip_prefix("json: cannot unmarshal ") {
        let (got, into) = t.split_once(" into Go ")?;
        let (field, ty) = if let Some(v) = into.strip_prefix("value of type ") {
            (None, v)
        } else {
            let f = into.strip_prefix("struct field ")?;
            let (path, ty) = f.split_once(" of type ")?;
            (path.rsplit_once('.').map(|(_, name)| name), ty)
        };
        let wanted = takes(ty)?;
        let because = why(got).map(|w| format!(" ({w})")).unwrap_or_default();
        return Some(format!(
            "{}takes {wanted}; the value given does not fit{because}",
            what(field)
        ));
    }
    if let Some(t) = text.strip_prefix("hex string has length ") {
        let (got, rest) = t.split_once(", want ")?;
        let (want, ty) = rest.split_once(" for ")?;
        let wanted = takes(ty)?;
        return Some(format!(
            "{}takes {wanted}; it has {got} hex digits, not {want}",
            what(None)
        ));
    }
    let w = why(text)?;
    Some(format!(
        "{}takes a block number (\"0x10\"), a tag (\"latest\", \"earliest\", \"pending\") or, where a hash is taken, a block hash; {w}",
        what(None)
    ))
}

#[cfg(test)]
mod tests {
    use super::explain;

    #[test]
    fn go_texts_in_plain_words() {
        let e = |m: &str| explain(-32602, m).unwrap();
        assert_eq!(
            e("invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type common.Address"),
            "parameter 1 takes an address: \"0x\" and 40 hex digits; the value given does not fit (it does not start with 0x)"
        );
        assert_eq!(
            e("invalid argument 1: json: cannot unmarshal number into Go value of type string"),
            "parameter 2 takes a JSON string; the value given does not fit (it is a JSON number)"
        );
        assert_eq!(
            e("invalid argument 0: json: cannot unmarshal non-string into Go struct field SendTxArgs.gas of type hexutil.Uint64"),
            "member \"gas\" of parameter 1 takes a quantity as a quoted 0x hex number, e.g. \"0x5208\"; the value given does not fit (it is not a quoted string)"
        );
        assert_eq!(
            e("invalid argument 2: json: cannot unmarshal number 70000 into Go value of type int"),
            "parameter 3 takes a JSON number (not quoted); the value given does not fit (70000 is out of range)"
        );
        assert_eq!(
            e("invalid argument 0: hex string has length 4, want 40 for common.Address"),
            "parameter 1 takes an address: \"0x\" and 40 hex digits; it has 4 hex digits, not 40"
        );
        assert!(e("invalid argument 1: hex string without 0x prefix")
            .starts_with("parameter 2 takes a block number"));
    }

    #[test]
    fn other_errors_are_left_alone() {
        assert_eq!(
            explain(
                -32000,
                "invalid argument 0: json: cannot unmarshal number into Go value of type string"
            ),
            None
        );
        assert_eq!(
            explain(-32602, "missing value for required argument 0"),
            None
        );
        assert_eq!(explain(-32602, "too many arguments, want at most 1"), None);
        assert_eq!(explain(-32602, "invalid argument 0: json: cannot unmarshal number into Go value of type foo.Unknown"), None);
    }
}
