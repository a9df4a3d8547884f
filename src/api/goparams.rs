//! The reference's parameter decoding, in one place: parameters as its JSON decoder and
//! hexutil read them, with their texts (the wire contract, DECISIONS.md; klaytn-contracts.md
//! 2.3, 4.1-4.6, 5.1-5.3, 6.1, 6.4). Here: block numbers (`rpc.BlockNumber`), block numbers
//! or hashes (`rpc.BlockNumberOrHash`), 32-byte hashes, quantities and hex bytes as hexutil
//! reads them, the members of the reference's argument structs ([`Member`]; the call
//! arguments are `callargs`), filter criteria (`fromBlock`, `toBlock`, `blockHash`,
//! `address`, `topics`) and filter ids. Each [`FromParam`] decoder returns the text that
//! follows `invalid argument <i>: ` in a -32602 error.

use serde_json::{Map, Value};

use crate::chain::logs::LogFilter;
use crate::crypto::Address;
use crate::rpc::{json_type, FromParam};

/// A 32-byte hash.
pub type Hash = [u8; 32];

/// A block named by the block-number grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockTag {
    Latest,
    Pending,
    Earliest,
    Number(u64),
}

impl BlockTag {
    /// The number it names when the head is `head`: `earliest` is 0; `latest` and `pending`
    /// are the head (this node builds no pending block).
    pub fn resolve(self, head: u64) -> u64 {
        match self {
            BlockTag::Latest | BlockTag::Pending => head,
            BlockTag::Earliest => 0,
            BlockTag::Number(n) => n,
        }
    }

    /// The reference's signed form: `latest` -1, `pending` -2, `earliest` 0.
    pub fn signed(self) -> i64 {
        match self {
            BlockTag::Latest => -1,
            BlockTag::Pending => -2,
            BlockTag::Earliest => 0,
            // A quantity is at most i64::MAX (checked when decoded); a JSON integer above it
            // wraps, as the reference's conversion of its uint64 does.
            BlockTag::Number(n) => n as i64,
        }
    }
}

const NO_PREFIX: &str = "hex string without 0x prefix";
const SYNTAX: &str = "invalid hex string";

/// The digits of a 0x quantity, with hexutil's texts (`checkNumber`): not empty, `0x` or
/// `0X`, at least one digit, no leading zero.
fn number_digits(s: &str) -> Result<&str, &'static str> {
    if s.is_empty() {
        return Err("empty hex string");
    }
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or(NO_PREFIX)?;
    if digits.is_empty() {
        return Err("hex string \"0x\"");
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err("hex number with leading zero digits");
    }
    Ok(digits)
}

/// A 0x quantity of 64 bits (hexutil's `DecodeUint64`): the digits are read in order, and
/// the first that is not hex, or the first that overflows, gives the text.
fn decode_uint64(s: &str) -> Result<u64, &'static str> {
    let mut n: u64 = 0;
    for c in number_digits(s)?.chars() {
        let d = c.to_digit(16).ok_or(SYNTAX)?;
        n = n
            .checked_mul(16)
            .and_then(|n| n.checked_add(u64::from(d)))
            .ok_or("hex number > 64 bits")?;
    }
    Ok(n)
}

/// 0x-hex bytes (hexutil's `Decode`): unlike a JSON member of type `hexutil.Bytes`, the
/// empty string is refused.
fn decode_bytes(s: &str) -> Result<Vec<u8>, &'static str> {
    if s.is_empty() {
        return Err("empty hex string");
    }
    crate::crypto::decode_hex0x(s)
}

/// Why a fixed-size hex text did not decode.
enum FixedHexError {
    /// A decoding error, which Go's JSON decoder wraps in a type error.
    Decode(&'static str),
    /// A length error, which it does not.
    Length(String),
}

impl From<FixedHexError> for String {
    /// The bare text (as `UnmarshalText` gives it, outside a JSON decoder).
    fn from(e: FixedHexError) -> String {
        match e {
            FixedHexError::Decode(m) => m.into(),
            FixedHexError::Length(m) => m,
        }
    }
}

/// `s` as `N` bytes of 0x-hex, Go type `ty` (hexutil's `UnmarshalFixedText`, in its order of
/// checks: the empty string is a length error).
fn fixed_hex<const N: usize>(s: &str, ty: &str) -> Result<[u8; N], FixedHexError> {
    let length = |digits: usize| {
        FixedHexError::Length(format!(
            "hex string has length {digits}, want {} for {ty}",
            2 * N
        ))
    };
    if s.is_empty() {
        return Err(length(0));
    }
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or(FixedHexError::Decode(NO_PREFIX))?;
    if digits.len() % 2 != 0 {
        return Err(FixedHexError::Decode("hex string of odd length"));
    }
    if digits.len() != 2 * N {
        return Err(length(digits.len()));
    }
    let mut out = [0u8; N];
    hex::decode_to_slice(digits, &mut out).map_err(|_| FixedHexError::Decode(SYNTAX))?;
    Ok(out)
}

/// A JSON value decoded as `N` bytes of Go type `ty` (`common.Hash`, `common.Address`),
/// with the JSON decoder's texts: a non-string and a decoding error are type errors `into`
/// (`Go value of type common.Hash`, `Go struct field CallArgs.to of type common.Address`); a
/// length error is not wrapped.
pub fn fixed_value<const N: usize>(v: &Value, into: &str, ty: &str) -> Result<[u8; N], String> {
    let Value::String(s) = v else {
        return Err(format!("json: cannot unmarshal non-string into {into}"));
    };
    fixed_hex(s, ty).map_err(|e| match e {
        FixedHexError::Decode(m) => format!("json: cannot unmarshal {m} into {into}"),
        FixedHexError::Length(m) => m,
    })
}

/// A block number or tag in text: `latest`, `pending`, `earliest` or a quantity of at most
/// 2^63-1; `too_high` is the text for a larger one (the reference writes `Blocknumber too
/// high` for a plain block number and `blocknumber too high` for a number-or-hash).
fn block_text(s: &str, too_high: &str) -> Result<BlockTag, String> {
    match s {
        "latest" => Ok(BlockTag::Latest),
        "pending" => Ok(BlockTag::Pending),
        "earliest" => Ok(BlockTag::Earliest),
        s => match decode_uint64(s)? {
            n if n > i64::MAX as u64 => Err(too_high.into()),
            n => Ok(BlockTag::Number(n)),
        },
    }
}

/// A plain block number as the reference's `rpc.BlockNumber` decodes it
/// (`chain_getHeaderByNumber`, `debug_traceBlockByNumber`, filter bounds): a JSON integer is
/// the number (`null` is 0, as Go decodes it into an integer); a string is a tag or a
/// quantity; anything else is read as its JSON text, which has no 0x prefix.
pub fn block_number(v: &Value) -> Result<BlockTag, String> {
    match v {
        Value::Null => Ok(BlockTag::Number(0)),
        Value::Number(n) => n
            .as_u64()
            .map(BlockTag::Number)
            .ok_or_else(|| NO_PREFIX.into()),
        Value::String(s) => block_text(s, "Blocknumber too high"),
        _ => Err(NO_PREFIX.into()),
    }
}

impl FromParam for BlockTag {
    fn from_param(v: &Value) -> Result<BlockTag, String> {
        block_number(v)
    }
}

/// A block by number or by hash, as the reference's `rpc.BlockNumberOrHash` decodes it
/// (`chain_call` and the state methods, `chain_getBlockReceipts`, `debug_traceCall`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRef {
    Tag(BlockTag),
    Hash(Hash),
    /// `{}` or `null`: naming neither, which the method refuses, not the decoder.
    Neither,
}

impl FromParam for BlockRef {
    /// `{"blockNumber": ..}` or `{"blockHash": ..}` (not both; `null` and `{}` name
    /// neither), a JSON integer, a tag, a 66-character hash or a quantity. The reference
    /// tries these forms in turn and reports the last failure: a string's own text, else
    /// `json: cannot unmarshal <type> into Go value of type string` (an object whose member
    /// does not decode included).
    fn from_param(v: &Value) -> Result<BlockRef, String> {
        let not_string = |v: &Value| {
            format!(
                "json: cannot unmarshal {} into Go value of type string",
                json_type(v)
            )
        };
        match v {
            Value::Null => Ok(BlockRef::Neither),
            Value::Object(m) => {
                let present = |name: &str| member(m, name).filter(|v| !v.is_null());
                let number = present("blockNumber")
                    .map(block_number)
                    .transpose()
                    .map_err(|_| not_string(v))?;
                let hash = present("blockHash")
                    .map(|h| {
                        h.as_str()
                            .and_then(|s| fixed_hex::<32>(s, "common.Hash").ok())
                            .ok_or_else(|| not_string(v))
                    })
                    .transpose()?;
                match (number, hash) {
                    (Some(_), Some(_)) => Err(
                        "cannot specify both BlockHash and BlockNumber, choose one or the other"
                            .into(),
                    ),
                    (Some(n), None) => Ok(BlockRef::Tag(n)),
                    (None, Some(h)) => Ok(BlockRef::Hash(h)),
                    (None, None) => Ok(BlockRef::Neither),
                }
            }
            Value::Number(n) => n
                .as_u64()
                .map(|n| BlockRef::Tag(BlockTag::Number(n)))
                .ok_or_else(|| not_string(v)),
            Value::String(s) if s.len() == 66 => Ok(BlockRef::Hash(
                fixed_hex::<32>(s, "common.Hash").map_err(String::from)?,
            )),
            Value::String(s) => block_text(s, "blocknumber too high").map(BlockRef::Tag),
            other => Err(not_string(other)),
        }
    }
}

/// A block or transaction hash parameter, as Go's `common.Hash` decodes it
/// (`chain_getHeaderByHash`, `debug_traceTransaction`, `debug_traceBlockByHash`).
pub struct HashParam(pub Hash);

impl FromParam for HashParam {
    fn from_param(v: &Value) -> Result<HashParam, String> {
        fixed_value(v, "Go value of type common.Hash", "common.Hash").map(HashParam)
    }
}

/// A `hexutil.Uint64` parameter (`debug_setHead`): a 0x quantity of at most 64 bits, with the
/// JSON decoder's type-error texts.
pub struct Uint64Param(pub u64);

impl FromParam for Uint64Param {
    fn from_param(v: &Value) -> Result<Uint64Param, String> {
        let ty = "hexutil.Uint64";
        let Value::String(s) = v else {
            return Err(crate::rpc::go_type_error("non-string", ty));
        };
        let digits = quantity_digits(s, 16, "hex number > 64 bits")
            .map_err(|m| crate::rpc::go_type_error(m, ty))?;
        Ok(Uint64Param(
            u64::from_str_radix(digits, 16).expect("at most 16 hex digits"),
        ))
    }
}

/// A transaction's index in its block, as the reference's `hexutil.Uint` decodes it (a 0x
/// quantity in a JSON string), with its texts.
pub struct Index(pub u64);

impl crate::rpc::FromParam for Index {
    fn from_param(v: &serde_json::Value) -> std::result::Result<Index, String> {
        let into = "Go value of type hexutil.Uint";
        let serde_json::Value::String(s) = v else {
            return Err(format!("json: cannot unmarshal non-string into {into}"));
        };
        let wrap = |m: &str| format!("json: cannot unmarshal {m} into {into}");
        if s.is_empty() {
            return Err(wrap("empty hex string"));
        }
        let digits = s
            .strip_prefix("0x")
            .or_else(|| s.strip_prefix("0X"))
            .ok_or_else(|| wrap("hex string without 0x prefix"))?;
        if digits.is_empty() {
            return Err(wrap("hex string \"0x\""));
        }
        if digits.len() > 1 && digits.starts_with('0') {
            return Err(wrap("hex number with leading zero digits"));
        }
        let mut n: u64 = 0;
        for c in digits.chars() {
            let d = c.to_digit(16).ok_or_else(|| wrap("invalid hex string"))?;
            n = n
                .checked_mul(16)
                .and_then(|n| n.checked_add(u64::from(d)))
                .ok_or_else(|| wrap("hex number > 64 bits"))?;
        }
        Ok(Index(n))
    }
}

/// Go's text for a member of struct `strukt` that does not decode: `value` is what it got
/// (`non-string`, `string`, a hexutil text), `ty` the member's Go type.
pub fn field_error(strukt: &str, field: &str, value: &str, ty: &str) -> String {
    format!("json: cannot unmarshal {value} into Go struct field {strukt}.{field} of type {ty}")
}

/// A member of one of the reference's argument structs (`SendTxArgs`, `CallArgs`), decoded as
/// Go's JSON decoder reads its `hexutil`/`common` type, with the struct-field text when it
/// does not decode (`json: cannot unmarshal non-string into Go struct field
/// SendTxArgs.gas of type hexutil.Uint64`). Each decoder's error is the text that follows
/// `invalid argument <i>: `.
pub struct Member<'a> {
    pub strukt: &'a str,
    pub name: &'a str,
}

impl Member<'_> {
    fn wrap(&self, m: &str, ty: &str) -> String {
        field_error(self.strukt, self.name, m, ty)
    }

    fn text<'v>(&self, v: &'v Value, ty: &str) -> Result<&'v str, String> {
        v.as_str().ok_or_else(|| self.wrap("non-string", ty))
    }

    /// A `common.Address` member.
    pub fn address(&self, v: &Value) -> Result<Address, String> {
        let ty = "common.Address";
        let into = format!("Go struct field {}.{} of type {ty}", self.strukt, self.name);
        fixed_value(v, &into, ty).map(Address)
    }

    /// A `hexutil.Uint64` member.
    pub fn uint64(&self, v: &Value) -> Result<u64, String> {
        let ty = "hexutil.Uint64";
        let digits = quantity_digits(self.text(v, ty)?, 16, "hex number > 64 bits")
            .map_err(|m| self.wrap(m, ty))?;
        Ok(u64::from_str_radix(digits, 16).expect("at most 16 hex digits"))
    }

    /// A `*hexutil.Big` member of at most 256 bits, as a big-endian word.
    pub fn big(&self, v: &Value) -> Result<[u8; 32], String> {
        let ty = "*hexutil.Big";
        let digits = quantity_digits(self.text(v, ty)?, 64, "hex number > 256 bits")
            .map_err(|m| self.wrap(m, ty))?;
        let mut word = [0u8; 32];
        hex::decode_to_slice(format!("{digits:0>64}"), &mut word).expect("at most 64 hex digits");
        Ok(word)
    }

    /// A `hexutil.Bytes` member (`""` is empty).
    pub fn bytes(&self, v: &Value) -> Result<Vec<u8>, String> {
        let ty = "hexutil.Bytes";
        crate::crypto::decode_hex0x(self.text(v, ty)?).map_err(|m| self.wrap(m, ty))
    }

    /// A member that is a plain JSON boolean (Go `bool`).
    pub fn boolean(&self, v: &Value) -> Result<bool, String> {
        v.as_bool().ok_or_else(|| self.wrap(json_type(v), "bool"))
    }

    /// A member of Go type `ty` that is a plain JSON integer of at most `max`.
    pub fn integer(&self, v: &Value, ty: &str, max: u64) -> Result<u64, String> {
        match v {
            Value::Number(n) => match n.as_u64() {
                Some(x) if x <= max => Ok(x),
                _ => Err(self.wrap(&format!("number {n}"), ty)),
            },
            other => Err(self.wrap(json_type(other), ty)),
        }
    }
}

/// The digits of a quantity member (hexutil's `Uint64` and `Big`): as [`number_digits`], then
/// at most `max` digits (`too_big` otherwise), every one hex.
fn quantity_digits<'a>(
    s: &'a str,
    max: usize,
    too_big: &'static str,
) -> Result<&'a str, &'static str> {
    let digits = number_digits(s)?;
    if digits.len() > max {
        return Err(too_big);
    }
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(SYNTAX);
    }
    Ok(digits)
}

/// A filter id (the reference's `rpc.ID`, a string; `null` is the empty id, which names no
/// filter).
pub struct FilterId(pub String);

impl FromParam for FilterId {
    fn from_param(v: &Value) -> Result<FilterId, String> {
        match v {
            Value::String(s) => Ok(FilterId(s.clone())),
            Value::Null => Ok(FilterId(String::new())),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type rpc.ID",
                json_type(other)
            )),
        }
    }
}

/// Member `name` of `m` as Go's decoder finds it: the exact name, else one that differs
/// only in case.
fn member<'a>(m: &'a Map<String, Value>, name: &str) -> Option<&'a Value> {
    m.get(name).or_else(|| {
        m.iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    })
}

/// Filter criteria (`chain_getLogs`, `chain_newFilter`, the `logs` subscription).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Criteria {
    /// One block by hash; then `from` and `to` are absent.
    pub block_hash: Option<Hash>,
    /// Absent: `latest`.
    pub from: Option<BlockTag>,
    /// Absent: `latest`.
    pub to: Option<BlockTag>,
    pub filter: LogFilter,
}

impl Criteria {
    /// The first block of the range: `latest` when absent.
    pub fn from_tag(&self) -> BlockTag {
        self.from.unwrap_or(BlockTag::Latest)
    }

    /// The last block of the range: `latest` when absent.
    pub fn to_tag(&self) -> BlockTag {
        self.to.unwrap_or(BlockTag::Latest)
    }

    /// Whether a log of block `number` is within the bounds a live filter or subscription
    /// keeps to: only numbered bounds count (`latest` and `pending` bound nothing).
    pub fn within(&self, number: u64) -> bool {
        let from = self.from_tag().signed();
        let to = self.to_tag().signed();
        let before = from >= 0 && number < from as u64;
        let after = to >= 0 && number > to as u64;
        !before && !after
    }

    /// Whether a filter or subscription may follow these bounds (the reference's accepted
    /// combinations: pending..pending, latest..latest, n..m with m >= n, n or
    /// latest..pending, n..latest).
    pub fn live_range_ok(&self) -> bool {
        let (from, to) = (self.from_tag().signed(), self.to_tag().signed());
        (from == -2 && to == -2)
            || (from == -1 && to == -1)
            || (from >= 0 && to >= 0 && to >= from)
            || (from >= -1 && to == -2)
            || (from >= 0 && to == -1)
    }
}

fn address(s: &str) -> Result<Address, String> {
    let b = decode_bytes(s)?;
    let a: [u8; 20] = b
        .as_slice()
        .try_into()
        .map_err(|_| format!("hex has invalid length {} after decoding", b.len()))?;
    Ok(Address(a))
}

fn topic(s: &str) -> Result<Hash, String> {
    let b = decode_bytes(s)?;
    b.as_slice()
        .try_into()
        .map_err(|_| format!("hex has invalid length {} after decoding", b.len()))
}

const INVALID_TOPICS: &str = "invalid topic(s)";

impl FromParam for Criteria {
    /// An object (`null` is the empty one) with the optional members `fromBlock`,
    /// `toBlock`, `blockHash` (not with the other two), `address` (one or a list) and
    /// `topics` (per position `null`, a topic or a list of topics, a `null` in the list
    /// making the position a wildcard). Other members are ignored.
    fn from_param(v: &Value) -> Result<Criteria, String> {
        let m = match v {
            Value::Object(m) => m,
            Value::Null => return Ok(Criteria::default()),
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type filters.input",
                    json_type(other)
                ))
            }
        };
        let present = |name: &str| member(m, name).filter(|v| !v.is_null());
        let mut c = Criteria::default();
        let from = present("fromBlock").map(block_number).transpose()?;
        let to = present("toBlock").map(block_number).transpose()?;
        if let Some(h) = present("blockHash") {
            let h = fixed_value(
                h,
                "Go struct field input.blockHash of type common.Hash",
                "common.Hash",
            )?;
            if from.is_some() || to.is_some() {
                return Err(
                    "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other"
                        .into(),
                );
            }
            c.block_hash = Some(h);
        } else {
            (c.from, c.to) = (from, to);
        }
        match present("address") {
            None => {}
            Some(Value::String(s)) => {
                c.filter.addresses = vec![address(s).map_err(|e| format!("invalid address: {e}"))?]
            }
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let Value::String(s) = item else {
                        return Err(format!("non-string address at index {i}"));
                    };
                    c.filter.addresses.push(
                        address(s).map_err(|e| format!("invalid address at index {i}: {e}"))?,
                    );
                }
            }
            Some(_) => return Err("invalid addresses in query".into()),
        }
        match present("topics") {
            None => {}
            Some(Value::Array(positions)) => {
                for p in positions {
                    let mut any = Vec::new();
                    match p {
                        Value::Null => {}
                        Value::String(s) => any.push(topic(s)?),
                        Value::Array(items) => {
                            for item in items {
                                match item {
                                    // A wildcard among the alternatives: the position
                                    // matches anything (the rest is not read).
                                    Value::Null => {
                                        any.clear();
                                        break;
                                    }
                                    Value::String(s) => any.push(topic(s)?),
                                    _ => return Err(INVALID_TOPICS.into()),
                                }
                            }
                        }
                        _ => return Err(INVALID_TOPICS.into()),
                    }
                    c.filter.topics.push(any);
                }
            }
            Some(other) => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go struct field input.topics of type []interface {{}}",
                    json_type(other)
                ))
            }
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn criteria(v: Value) -> Result<Criteria, String> {
        Criteria::from_param(&v)
    }

    const A: &str = "0x0101010101010101010101010101010101010101";
    const T: &str = "0x0202020202020202020202020202020202020202020202020202020202020202";
    const T3: &str = "0x0303030303030303030303030303030303030303030303030303030303030303";

    #[test]
    fn block_numbers_follow_the_reference_grammar() {
        let ok = |v: Value| block_number(&v).unwrap();
        assert_eq!(ok(json!("latest")), BlockTag::Latest);
        assert_eq!(ok(json!("pending")), BlockTag::Pending);
        assert_eq!(ok(json!("earliest")), BlockTag::Earliest);
        assert_eq!(ok(json!("0x1f")), BlockTag::Number(31));
        assert_eq!(ok(json!(10)), BlockTag::Number(10));
        assert_eq!(
            ok(json!("0x7fffffffffffffff")),
            BlockTag::Number(i64::MAX as u64)
        );
        let bad = |v: Value| block_number(&v).unwrap_err();
        assert_eq!(bad(json!("1234")), "hex string without 0x prefix");
        assert_eq!(bad(json!("fromBlock")), "hex string without 0x prefix");
        assert_eq!(bad(json!(true)), "hex string without 0x prefix");
        assert_eq!(bad(json!(-1)), "hex string without 0x prefix");
        assert_eq!(bad(json!("")), "empty hex string");
        assert_eq!(bad(json!("0x")), "hex string \"0x\"");
        assert_eq!(bad(json!("0x01")), "hex number with leading zero digits");
        assert_eq!(bad(json!("0xzz")), "invalid hex string");
        assert_eq!(bad(json!("0x10000000000000000")), "hex number > 64 bits");
        assert_eq!(bad(json!("0x8000000000000000")), "Blocknumber too high");
        assert_eq!(
            BlockRef::from_param(&json!("0x8000000000000000")).unwrap_err(),
            "blocknumber too high"
        );
    }

    #[test]
    fn a_block_by_number_or_hash() {
        let h = format!("0x{}", "ab".repeat(32));
        let r = |v: Value| BlockRef::from_param(&v);
        assert_eq!(r(json!(h)).unwrap(), BlockRef::Hash([0xab; 32]));
        assert_eq!(
            r(json!({"blockHash": h})).unwrap(),
            BlockRef::Hash([0xab; 32])
        );
        assert_eq!(
            r(json!({"blockNumber": "0x2"})).unwrap(),
            BlockRef::Tag(BlockTag::Number(2))
        );
        assert_eq!(r(json!(10)).unwrap(), BlockRef::Tag(BlockTag::Number(10)));
        assert_eq!(r(json!("latest")).unwrap(), BlockRef::Tag(BlockTag::Latest));
        assert_eq!(
            r(json!("abcd")).unwrap_err(),
            "hex string without 0x prefix"
        );
        assert_eq!(
            r(json!({"blockHash": h, "blockNumber": "0x1"})).unwrap_err(),
            "cannot specify both BlockHash and BlockNumber, choose one or the other"
        );
        assert_eq!(
            r(json!(format!("0x{}", "zz".repeat(32)))).unwrap_err(),
            "invalid hex string"
        );
    }

    #[test]
    fn hashes_and_block_numbers_as_go_decodes_them() {
        let h = |v: Value| HashParam::from_param(&v).map(|h| h.0);
        assert_eq!(
            h(json!("abcd")).unwrap_err(),
            "json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash"
        );
        assert_eq!(
            h(json!("0xabcd")).unwrap_err(),
            "hex string has length 4, want 64 for common.Hash"
        );
        assert_eq!(
            h(json!(5)).unwrap_err(),
            "json: cannot unmarshal non-string into Go value of type common.Hash"
        );
        assert_eq!(
            h(json!(format!("0x{}", "zz".repeat(32)))).unwrap_err(),
            "json: cannot unmarshal invalid hex string into Go value of type common.Hash"
        );
        assert_eq!(
            h(json!(format!("0x{}", "ab".repeat(32)))).unwrap(),
            [0xab; 32]
        );
        let n = |v: Value| block_number(&v);
        assert_eq!(n(json!(7)).unwrap(), BlockTag::Number(7));
        assert_eq!(n(json!("0x7")).unwrap(), BlockTag::Number(7));
        assert_eq!(n(json!("latest")).unwrap(), BlockTag::Latest);
        assert_eq!(n(json!("earliest")).unwrap(), BlockTag::Earliest);
        assert_eq!(
            n(json!("abcd")).unwrap_err(),
            "hex string without 0x prefix"
        );
        assert_eq!(
            n(json!("0x07")).unwrap_err(),
            "hex number with leading zero digits"
        );
        assert_eq!(
            n(json!("0x8000000000000000")).unwrap_err(),
            "Blocknumber too high"
        );
        assert_eq!(n(json!(-1)).unwrap_err(), "hex string without 0x prefix");
        let b = |v: Value| BlockRef::from_param(&v);
        assert_eq!(b(json!("latest")), Ok(BlockRef::Tag(BlockTag::Latest)));
        assert_eq!(
            b(json!({"blockNumber": "0x2"})),
            Ok(BlockRef::Tag(BlockTag::Number(2)))
        );
        assert_eq!(
            b(json!(format!("0x{}", "01".repeat(32)))),
            Ok(BlockRef::Hash([1; 32]))
        );
        assert_eq!(b(json!({})), Ok(BlockRef::Neither));
        assert_eq!(
            b(json!({"blockNumber": "abcd"})).err().unwrap(),
            "json: cannot unmarshal object into Go value of type string"
        );
        assert_eq!(
            b(json!(true)).err().unwrap(),
            "json: cannot unmarshal bool into Go value of type string"
        );
    }

    /// Where api/criteria.rs, api/trace.rs and api/contract.rs answered differently, the
    /// reference's `rpc.BlockNumber`, `rpc.BlockNumberOrHash` and hexutil's `DecodeUint64`.
    #[test]
    fn block_parameters_in_the_corners() {
        // Go decodes `null` into an integer as 0, and into BlockNumberOrHash as naming neither.
        assert_eq!(block_number(&json!(null)), Ok(BlockTag::Number(0)));
        assert_eq!(BlockRef::from_param(&json!(null)), Ok(BlockRef::Neither));
        // A JSON integer is a uint64: no bound on it.
        assert_eq!(
            block_number(&json!(u64::MAX)),
            Ok(BlockTag::Number(u64::MAX))
        );
        assert_eq!(
            BlockRef::from_param(&json!(u64::MAX)),
            Ok(BlockRef::Tag(BlockTag::Number(u64::MAX)))
        );
        assert_eq!(
            BlockRef::from_param(&json!(-1)).unwrap_err(),
            "json: cannot unmarshal number into Go value of type string"
        );
        assert_eq!(
            BlockRef::from_param(&json!({"blockNumber": "0x8000000000000000"})).unwrap_err(),
            "json: cannot unmarshal object into Go value of type string"
        );
        assert_eq!(
            BlockRef::from_param(&json!({"BlockHash": format!("0x{}", "01".repeat(32))})),
            Ok(BlockRef::Hash([1; 32])),
            "member names match in any case"
        );
        // Digits are read in order: a sign is not a digit, and a bad digit before the
        // 17th is a syntax error, not an overflow.
        assert_eq!(
            block_number(&json!("0x+1")).unwrap_err(),
            "invalid hex string"
        );
        assert_eq!(
            block_number(&json!("0xfffffffffffffffz0")).unwrap_err(),
            "invalid hex string"
        );
        assert_eq!(
            block_number(&json!("0X1f")),
            Ok(BlockTag::Number(31)),
            "0X is a prefix too"
        );
    }

    #[test]
    fn hashes_and_filter_ids_have_the_reference_texts() {
        let h = |v: Value| HashParam::from_param(&v).map(|h| h.0);
        assert_eq!(h(json!(format!("0x{}", "01".repeat(32)))).unwrap(), [1; 32]);
        assert_eq!(
            h(json!(true)).unwrap_err(),
            "json: cannot unmarshal non-string into Go value of type common.Hash"
        );
        assert_eq!(
            h(json!("abcd")).unwrap_err(),
            "json: cannot unmarshal hex string without 0x prefix into Go value of type common.Hash"
        );
        assert_eq!(
            h(json!("0x1234")).unwrap_err(),
            "hex string has length 4, want 64 for common.Hash"
        );
        assert_eq!(
            FilterId::from_param(&json!(5)).err().unwrap(),
            "json: cannot unmarshal number into Go value of type rpc.ID"
        );
        assert_eq!(FilterId::from_param(&json!(null)).ok().unwrap().0, "");
    }

    #[test]
    fn criteria_members() {
        let c = criteria(json!({
            "fromBlock": "0x1", "toBlock": "latest", "address": A,
            "topics": [T, null, [T, T3], [T, null]],
            "other": 1
        }))
        .unwrap();
        assert_eq!(c.from, Some(BlockTag::Number(1)));
        assert_eq!(c.to, Some(BlockTag::Latest));
        assert_eq!(c.block_hash, None);
        assert_eq!(c.filter.addresses, [Address([1; 20])]);
        assert_eq!(c.filter.topics.len(), 4);
        assert_eq!(c.filter.topics[0], [[2; 32]]);
        assert!(c.filter.topics[1].is_empty());
        assert_eq!(c.filter.topics[2].len(), 2);
        assert!(
            c.filter.topics[3].is_empty(),
            "a null alternative is a wildcard"
        );
        assert_eq!(criteria(json!(null)).unwrap(), Criteria::default());
        assert_eq!(criteria(json!({})).unwrap(), Criteria::default());
        let list = criteria(json!({"address": [A, A], "FromBlock": "earliest"})).unwrap();
        assert_eq!(list.filter.addresses.len(), 2);
        assert_eq!(
            list.from,
            Some(BlockTag::Earliest),
            "member names match in any case"
        );
        let by_hash = criteria(json!({"blockHash": T, "fromBlock": null})).unwrap();
        assert_eq!(by_hash.block_hash, Some([2; 32]));
    }

    #[test]
    fn criteria_errors() {
        let bad = |v: Value| criteria(v).unwrap_err();
        assert_eq!(
            bad(json!({"fromBlock": "fromBlock"})),
            "hex string without 0x prefix"
        );
        assert_eq!(
            bad(json!({"toBlock": "1234"})),
            "hex string without 0x prefix"
        );
        assert_eq!(
            bad(json!({"blockHash": T, "toBlock": "0x1"})),
            "cannot specify both BlockHash and FromBlock/ToBlock, choose one or the other"
        );
        assert_eq!(
            bad(json!({"blockHash": "0x12"})),
            "hex string has length 2, want 64 for common.Hash"
        );
        assert_eq!(
            bad(json!({"blockHash": 1})),
            "json: cannot unmarshal non-string into Go struct field input.blockHash of type common.Hash"
        );
        assert_eq!(
            bad(json!({"address": "0x1234"})),
            "invalid address: hex has invalid length 2 after decoding"
        );
        assert_eq!(
            bad(json!({"address": "1234"})),
            "invalid address: hex string without 0x prefix"
        );
        assert_eq!(
            bad(json!({"address": [A, "0x12"]})),
            "invalid address at index 1: hex has invalid length 1 after decoding"
        );
        assert_eq!(
            bad(json!({"address": [A, 5]})),
            "non-string address at index 1"
        );
        assert_eq!(bad(json!({"address": 5})), "invalid addresses in query");
        assert_eq!(bad(json!({"topics": [5]})), "invalid topic(s)");
        assert_eq!(bad(json!({"topics": [[T, 5]]})), "invalid topic(s)");
        assert_eq!(
            bad(json!({"topics": ["0x1234"]})),
            "hex has invalid length 2 after decoding"
        );
        assert_eq!(bad(json!({"topics": [""]})), "empty hex string");
        assert_eq!(
            bad(json!({"topics": T})),
            "json: cannot unmarshal string into Go struct field input.topics of type []interface {}"
        );
        assert_eq!(
            bad(json!("abc")),
            "json: cannot unmarshal string into Go value of type filters.input"
        );
    }

    #[test]
    fn live_bounds_and_their_combinations() {
        let c = |from: Option<BlockTag>, to: Option<BlockTag>| Criteria {
            from,
            to,
            ..Criteria::default()
        };
        use BlockTag::*;
        let accepted = [
            (None, None),
            (Some(Pending), Some(Pending)),
            (Some(Latest), Some(Latest)),
            (Some(Number(1)), Some(Number(1))),
            (Some(Number(1)), Some(Number(5))),
            (Some(Earliest), Some(Number(5))),
            (Some(Number(3)), Some(Pending)),
            (Some(Latest), Some(Pending)),
            (Some(Number(3)), Some(Latest)),
            (Some(Number(3)), None),
        ];
        for (from, to) in accepted {
            assert!(c(from, to).live_range_ok(), "{from:?}..{to:?}");
        }
        let refused = [
            (Some(Number(5)), Some(Number(1))),
            (Some(Latest), Some(Number(5))),
            (Some(Pending), Some(Latest)),
            (Some(Pending), Some(Number(5))),
            (None, Some(Number(5))),
        ];
        for (from, to) in refused {
            assert!(!c(from, to).live_range_ok(), "{from:?}..{to:?}");
        }
        let bounded = c(Some(Number(2)), Some(Number(4)));
        assert!(!bounded.within(1) && bounded.within(2) && bounded.within(4) && !bounded.within(5));
        assert!(c(Some(Latest), Some(Pending)).within(0));
    }
}
