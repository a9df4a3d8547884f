//! The reference's parameter decoding, in one place: parameters as its JSON decoder and
//! hexutil read them, with their texts (the wire contract, DECISIONS.md). Here: filter
//! criteria (`fromBlock`, `toBlock`, `blockHash`, `address`, `topics`), block numbers, block
//! numbers or hashes, 32-byte hashes and filter ids. Each decoder returns the text that
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
            // Numbers are at most i64::MAX (checked when decoded).
            BlockTag::Number(n) => n as i64,
        }
    }
}

/// hexutil's texts for 0x-hex quantities (`DecodeUint64`).
fn decode_uint64(s: &str) -> Result<u64, &'static str> {
    if s.is_empty() {
        return Err("empty hex string");
    }
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or("hex string without 0x prefix")?;
    if digits.is_empty() {
        return Err("hex string \"0x\"");
    }
    if digits.len() > 1 && digits.starts_with('0') {
        return Err("hex number with leading zero digits");
    }
    u64::from_str_radix(digits, 16).map_err(|e| match e.kind() {
        std::num::IntErrorKind::PosOverflow => "hex number > 64 bits",
        _ => "invalid hex string",
    })
}

/// hexutil's texts for 0x-hex bytes (`Decode`): unlike parameters of the other methods,
/// the empty string is refused.
fn decode_bytes(s: &str) -> Result<Vec<u8>, &'static str> {
    if s.is_empty() {
        return Err("empty hex string");
    }
    crate::crypto::decode_hex0x(s)
}

/// The block-number grammar; `too_high` is the text for a number above 2^63-1 (the
/// reference writes `Blocknumber too high` for a plain block number and `blocknumber too
/// high` for a number-or-hash). A JSON integer is taken as a number; a string is a tag or a
/// 0x quantity; anything else is read as the reference reads its raw text.
fn block_tag(v: &Value, too_high: &str) -> Result<BlockTag, String> {
    let n = match v {
        Value::String(s) => match s.as_str() {
            "latest" => return Ok(BlockTag::Latest),
            "pending" => return Ok(BlockTag::Pending),
            "earliest" => return Ok(BlockTag::Earliest),
            s => decode_uint64(s)?,
        },
        Value::Number(n) => n
            .as_u64()
            .ok_or_else(|| "hex string without 0x prefix".to_string())?,
        _ => return Err("hex string without 0x prefix".into()),
    };
    if n > i64::MAX as u64 {
        return Err(too_high.into());
    }
    Ok(BlockTag::Number(n))
}

/// A plain block number (`chain_getHeaderByNumber`, filter bounds).
pub fn block_number(v: &Value) -> Result<BlockTag, String> {
    block_tag(v, "Blocknumber too high")
}

impl FromParam for BlockTag {
    fn from_param(v: &Value) -> Result<BlockTag, String> {
        block_number(v)
    }
}

/// A block by number or by hash (`chain_getBlockReceipts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockRef {
    Tag(BlockTag),
    Hash(Hash),
    /// `{}`: an object naming neither (the reference fails on it when it looks the block up).
    Neither,
}

impl FromParam for BlockRef {
    /// A tag, a quantity, a JSON integer, a 66-character hash, or `{"blockNumber": ..}` /
    /// `{"blockHash": ..}` (not both).
    fn from_param(v: &Value) -> Result<BlockRef, String> {
        const TOO_HIGH: &str = "blocknumber too high";
        match v {
            Value::Object(m) => {
                let number = member(m, "blockNumber").filter(|v| !v.is_null());
                let hash = member(m, "blockHash").filter(|v| !v.is_null());
                match (number, hash) {
                    (Some(_), Some(_)) => Err(
                        "cannot specify both BlockHash and BlockNumber, choose one or the other"
                            .into(),
                    ),
                    (None, Some(h)) => Ok(BlockRef::Hash(hash_value(h, Some("blockHash"))?)),
                    (Some(n), None) => Ok(BlockRef::Tag(block_tag(n, TOO_HIGH)?)),
                    (None, None) => Ok(BlockRef::Neither),
                }
            }
            Value::String(s) if s.len() == 66 => Ok(BlockRef::Hash(hash_text(s)?)),
            _ => Ok(BlockRef::Tag(block_tag(v, TOO_HIGH)?)),
        }
    }
}

/// The text of a 32-byte hash (hexutil's `UnmarshalFixedText`): `0x` and 64 hex digits.
fn hash_text(s: &str) -> Result<Hash, String> {
    if s.is_empty() {
        return Err("hex string has length 0, want 64 for common.Hash".into());
    }
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or("hex string without 0x prefix")?;
    if digits.len() % 2 != 0 {
        return Err("hex string of odd length".into());
    }
    if digits.len() != 64 {
        return Err(format!(
            "hex string has length {}, want 64 for common.Hash",
            digits.len()
        ));
    }
    let mut out = [0u8; 32];
    hex::decode_to_slice(digits, &mut out).map_err(|_| "invalid hex string")?;
    Ok(out)
}

/// A 32-byte hash in JSON, with the texts of the reference's JSON decoder: a syntax error
/// is reported as a type error of `common.Hash`, naming the struct member `field` when
/// the hash is one.
fn hash_value(v: &Value, field: Option<&str>) -> Result<Hash, String> {
    let into = match field {
        Some(f) => format!("Go struct field input.{f} of type common.Hash"),
        None => "Go value of type common.Hash".to_string(),
    };
    let Value::String(s) = v else {
        return Err(format!("json: cannot unmarshal non-string into {into}"));
    };
    hash_text(s).map_err(|e| {
        if e.starts_with("hex string has length") {
            e
        } else {
            format!("json: cannot unmarshal {e} into {into}")
        }
    })
}

/// A block or transaction hash parameter (`chain_getHeaderByHash`).
pub struct HashParam(pub Hash);

impl FromParam for HashParam {
    fn from_param(v: &Value) -> Result<HashParam, String> {
        hash_value(v, None).map(HashParam)
    }
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
            let h = hash_value(h, Some("blockHash"))?;
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
