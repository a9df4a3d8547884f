//! Positional parameters: the reference's rules for absent, `null`, missing and surplus
//! arguments, and typed decoding with `invalid argument <i>: ...` messages.

use serde_json::Value;

use super::error::RpcError;

/// The positional parameters of one call. They may hold passphrases and key data: `Debug`
/// shows only how many there are, and every string in them is wiped when they are dropped.
#[derive(Clone, Default)]
pub struct Params {
    items: Vec<Value>,
}

impl std::fmt::Debug for Params {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Params({} items, redacted)", self.items.len())
    }
}

impl Drop for Params {
    fn drop(&mut self) {
        self.items.iter_mut().for_each(wipe);
    }
}

/// Overwrites every string in `v` (passphrases, key data) with zeros before it is freed.
pub fn wipe(v: &mut Value) {
    use zeroize::Zeroize;
    match v {
        Value::String(s) => s.zeroize(),
        Value::Array(items) => items.iter_mut().for_each(wipe),
        Value::Object(map) => map.values_mut().for_each(wipe),
        _ => {}
    }
}

impl Params {
    /// `params` absent or `null` is an empty list; any other non-array is `non-array args`.
    pub fn from_value(v: Option<Value>) -> Result<Params, RpcError> {
        match v {
            None | Some(Value::Null) => Ok(Params::default()),
            Some(Value::Array(items)) => Ok(Params { items }),
            Some(_) => Err(RpcError::invalid_params("non-array args")),
        }
    }

    pub fn from_vec(items: Vec<Value>) -> Params {
        Params { items }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Drops the first element (a subscription name) and shifts the rest down.
    pub fn shift(mut self) -> Params {
        if !self.items.is_empty() {
            self.items.remove(0);
        }
        self
    }

    /// The raw element `i`, `None` when absent.
    pub fn raw(&self, i: usize) -> Option<&Value> {
        self.items.get(i)
    }

    /// Refuses more than `n` elements: `too many arguments, want at most <n>`. Methods
    /// without parameters ignore surplus elements, as the reference does.
    pub fn at_most(&self, n: usize) -> Result<(), RpcError> {
        if n > 0 && self.items.len() > n {
            return Err(RpcError::invalid_params(format!(
                "too many arguments, want at most {n}"
            )));
        }
        Ok(())
    }

    /// Required element `i`: `missing value for required argument <i>` when absent; `null` is
    /// handed to the decoder (strings take it as `""`, addresses refuse it).
    pub fn required<T: FromParam>(&self, i: usize) -> Result<T, RpcError> {
        let v = self.items.get(i).ok_or_else(|| {
            RpcError::invalid_params(format!("missing value for required argument {i}"))
        })?;
        T::from_param(v).map_err(|m| RpcError::invalid_params(format!("invalid argument {i}: {m}")))
    }

    /// Optional element `i`: absent or `null` is `None`.
    pub fn optional<T: FromParam>(&self, i: usize) -> Result<Option<T>, RpcError> {
        match self.items.get(i) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => T::from_param(v)
                .map(Some)
                .map_err(|m| RpcError::invalid_params(format!("invalid argument {i}: {m}"))),
        }
    }
}

/// A type a parameter decodes into. The error is the decoder message after
/// `invalid argument <i>: `.
pub trait FromParam: Sized {
    fn from_param(v: &Value) -> Result<Self, String>;
}

/// The name Go's JSON decoder gives the type of a JSON value in its errors (`number`,
/// `string`, ...).
pub fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Go's JSON decoder's text for a value of JSON type `got` that does not fit Go type `ty`
/// (`json: cannot unmarshal number into Go value of type string`): the wire contract
/// (DECISIONS.md, "Errors on the wire"); clients explain it to a person.
pub fn go_type_error(got: &str, ty: &str) -> String {
    format!("json: cannot unmarshal {got} into Go value of type {ty}")
}

impl FromParam for String {
    /// A JSON string (Go `string`); `null` is `""`.
    fn from_param(v: &Value) -> Result<String, String> {
        match v {
            Value::Null => Ok(String::new()),
            Value::String(s) => Ok(s.clone()),
            other => Err(go_type_error(json_type(other), "string")),
        }
    }
}

impl FromParam for bool {
    /// A JSON boolean (Go `bool`); `null` is `false`.
    fn from_param(v: &Value) -> Result<bool, String> {
        match v {
            Value::Null => Ok(false),
            Value::Bool(b) => Ok(*b),
            other => Err(go_type_error(json_type(other), "bool")),
        }
    }
}

/// A JSON integer from `min` to `max` read as Go reads it into type `ty` (`null` is 0; a
/// fraction or a number out of range is `json: cannot unmarshal number <n> into Go value of
/// type <ty>`).
fn integer(v: &Value, min: i128, max: i128, ty: &str) -> Result<i128, String> {
    let n = match v {
        Value::Null => return Ok(0),
        Value::Number(n) => n,
        other => return Err(go_type_error(json_type(other), ty)),
    };
    let x = if let Some(u) = n.as_u64() {
        u as i128
    } else if let Some(i) = n.as_i64() {
        i as i128
    } else {
        return Err(go_type_error(&format!("number {n}"), ty));
    };
    if x < min || x > max {
        return Err(go_type_error(&format!("number {n}"), ty));
    }
    Ok(x)
}

impl FromParam for u64 {
    /// A JSON integer from 0 to 2^64-1 (Go `uint64`; `null` is 0).
    fn from_param(v: &Value) -> Result<u64, String> {
        integer(v, 0, u64::MAX as i128, "uint64").map(|x| x as u64)
    }
}

impl FromParam for i32 {
    /// A JSON integer of 32 bits (the reference's Go `int`).
    fn from_param(v: &Value) -> Result<i32, String> {
        integer(v, i32::MIN as i128, i32::MAX as i128, "int").map(|x| x as i32)
    }
}

impl FromParam for u16 {
    /// A port number: the reference takes a Go `int` (a number out of 0..=65535 is refused
    /// with the same text).
    fn from_param(v: &Value) -> Result<u16, String> {
        integer(v, 0, u16::MAX as i128, "int").map(|x| x as u16)
    }
}

impl FromParam for Value {
    fn from_param(v: &Value) -> Result<Value, String> {
        Ok(v.clone())
    }
}

/// 0x-prefixed hex bytes (`""` and `"0x"` are empty), as the reference's decoder takes them
/// (Go `hexutil.Bytes`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HexBytes(pub Vec<u8>);

impl FromParam for HexBytes {
    fn from_param(v: &Value) -> Result<HexBytes, String> {
        let Value::String(s) = v else {
            return Err(go_type_error("non-string", "hexutil.Bytes"));
        };
        crate::crypto::decode_hex0x(s)
            .map(HexBytes)
            .map_err(|m| go_type_error(m, "hexutil.Bytes"))
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn params_keep_their_secrets() {
        let p = Params::from_vec(vec![json!("0xaddress"), json!("hunter2")]);
        let shown = format!("{p:?}");
        assert!(
            !shown.contains("hunter2") && !shown.contains("0xaddress"),
            "{shown}"
        );
        assert_eq!(shown, "Params(2 items, redacted)");
        let mut v = json!(["pass", {"k": "key", "n": 1}, [true, "x"]]);
        wipe(&mut v);
        assert_eq!(v, json!(["", {"k": "", "n": 1}, [true, ""]]));
    }

    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Params {
        Params::from_value(Some(v)).unwrap()
    }

    #[test]
    fn absent_null_and_non_array() {
        assert!(Params::from_value(None).unwrap().is_empty());
        assert!(Params::from_value(Some(Value::Null)).unwrap().is_empty());
        assert_eq!(
            Params::from_value(Some(json!({"a":1})))
                .unwrap_err()
                .message,
            "non-array args"
        );
        assert_eq!(
            Params::from_value(Some(json!("x"))).unwrap_err().code,
            -32602
        );
    }

    #[test]
    fn missing_surplus_and_invalid_arguments() {
        let ps = p(json!(["a"]));
        assert_eq!(
            ps.required::<String>(1).unwrap_err().message,
            "missing value for required argument 1"
        );
        assert_eq!(
            p(json!([1, 2, 3])).at_most(2).unwrap_err().message,
            "too many arguments, want at most 2"
        );
        assert!(p(json!([1, 2, 3])).at_most(0).is_ok());
        assert_eq!(
            p(json!([5])).required::<String>(0).unwrap_err().message,
            "invalid argument 0: json: cannot unmarshal number into Go value of type string"
        );
        assert_eq!(p(json!([null])).required::<String>(0).unwrap(), "");
        assert_eq!(p(json!([null])).optional::<u64>(0).unwrap(), None);
        assert_eq!(
            p(json!([-1])).required::<u64>(0).unwrap_err().message,
            "invalid argument 0: json: cannot unmarshal number -1 into Go value of type uint64"
        );
        assert_eq!(p(json!([1.5])).required::<u64>(0).unwrap_err().code, -32602);
    }

    #[test]
    fn hex_bytes() {
        assert_eq!(
            HexBytes::from_param(&json!("0x")).unwrap().0,
            Vec::<u8>::new()
        );
        assert_eq!(
            HexBytes::from_param(&json!("")).unwrap().0,
            Vec::<u8>::new()
        );
        assert_eq!(
            HexBytes::from_param(&json!("0X0aff")).unwrap().0,
            vec![10, 255]
        );
        assert_eq!(
            HexBytes::from_param(&json!("abcd")).unwrap_err(),
            "json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Bytes"
        );
        assert_eq!(
            HexBytes::from_param(&json!("0xabc")).unwrap_err(),
            "json: cannot unmarshal hex string of odd length into Go value of type hexutil.Bytes"
        );
        assert_eq!(
            HexBytes::from_param(&json!("0xzz")).unwrap_err(),
            "json: cannot unmarshal invalid hex string into Go value of type hexutil.Bytes"
        );
        assert_eq!(
            HexBytes::from_param(&json!(null)).unwrap_err(),
            "json: cannot unmarshal non-string into Go value of type hexutil.Bytes"
        );
        assert_eq!(
            bool::from_param(&json!("yes")).unwrap_err(),
            "json: cannot unmarshal string into Go value of type bool"
        );
        assert_eq!(
            u16::from_param(&json!("8551")).unwrap_err(),
            "json: cannot unmarshal string into Go value of type int"
        );
        assert_eq!(
            u16::from_param(&json!(70000)).unwrap_err(),
            "json: cannot unmarshal number 70000 into Go value of type int"
        );
        assert_eq!(
            i32::from_param(&json!(1.5)).unwrap_err(),
            "json: cannot unmarshal number 1.5 into Go value of type int"
        );
    }
}
