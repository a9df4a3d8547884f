//! The genesis specification that `chaind init GENESIS.json` reads, and the built-in `--dev`
//! one: the chain id, the network id, the validator, the unit price, the start time and the
//! funded accounts. Parsing is a pure function of the bytes (a fuzzer can call
//! [`Genesis::parse`]); every refusal names the field.
//!
//! The file (every field but `alloc` optional):
//!
//! ```json
//! {
//!   "config": { "chainId": 1000, "unitPrice": 25000000000 },
//!   "networkId": 1000,
//!   "validator": "0x819104a190255e0cedbdd9d5f59a557633d79db1",
//!   "timestamp": 0,
//!   "alloc": { "0x819104a190255e0cedbdd9d5f59a557633d79db1": { "balance": "0xde0b6b3a7640000" } }
//! }
//! ```
//!
//! Balances are `0x` hex or decimal strings (or JSON numbers below 2^53), at most 256 bits.

use std::collections::BTreeMap;

use serde::Deserialize;

use crate::crypto::Address;

/// The dev chain's id and network id (DECISIONS.md).
pub const DEV_CHAIN_ID: u64 = 1000;
/// The dev chain's unit price (DECISIONS.md: the pre-Magma rule, gas price = unit price).
pub const DEV_UNIT_PRICE: u64 = 25_000_000_000;

/// The reference's hard forks, each active or not, as this chain runs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Forks {
    pub istanbul: bool,
    pub london: bool,
    pub eth_tx_type: bool,
    pub magma: bool,
    pub kore: bool,
    pub shanghai: bool,
    pub cancun: bool,
    pub dragon: bool,
    pub randao: bool,
    /// Whether the block is the KIP-103 (treasury rebalance) block.
    pub kip103: bool,
}

/// The forks of every block of every chain here: a genesis names no fork blocks, so the
/// rules never change. The EVM is the reference's Cancun-compatible fork (`exec::SPEC`),
/// which carries the Istanbul, London, Kore and Shanghai ones; gas is priced by the unit price
/// (before Magma); Ethereum's access-list and dynamic-fee transactions are taken (EthTxType)
/// and headers carry no base fee or randomness (no Magma, no Randao); nothing of Dragon or
/// KIP-103 is built.
pub const FORKS: Forks = Forks {
    istanbul: true,
    london: true,
    eth_tx_type: true,
    magma: false,
    kore: true,
    shanghai: true,
    cancun: true,
    dragon: false,
    randao: false,
    kip103: false,
};

/// A balance: 256 bits, big-endian.
pub type Balance = [u8; 32];

/// A parsed, checked genesis specification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Genesis {
    pub chain_id: u64,
    pub network_id: u64,
    pub unit_price: u64,
    /// The validator that seals blocks; `None`: set by the node (`--dev` uses its developer
    /// account).
    pub validator: Option<Address>,
    pub timestamp: u64,
    /// Funded accounts, in address order.
    pub alloc: BTreeMap<Address, Balance>,
}

/// Why a genesis file is refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum Error {
    #[error("invalid genesis file: {0}")]
    Json(String),
    #[error("invalid genesis file: {field}: {why}")]
    Field { field: String, why: String },
}

fn field(field: impl Into<String>, why: impl Into<String>) -> Error {
    Error::Field {
        field: field.into(),
        why: why.into(),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    #[serde(default)]
    config: Config,
    network_id: Option<u64>,
    validator: Option<String>,
    timestamp: Option<u64>,
    alloc: BTreeMap<String, Account>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    chain_id: Option<u64>,
    unit_price: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Account {
    balance: serde_json::Value,
}

impl Genesis {
    /// Parses and checks a genesis file. Fails on malformed JSON, an unknown field, a chain
    /// id of 0, a bad address or balance, naming the field.
    pub fn parse(bytes: &[u8]) -> Result<Genesis, Error> {
        let file: File = serde_json::from_slice(bytes).map_err(|e| Error::Json(e.to_string()))?;
        let chain_id = file.config.chain_id.unwrap_or(DEV_CHAIN_ID);
        if chain_id == 0 {
            return Err(field("config.chainId", "must be at least 1"));
        }
        let validator = file
            .validator
            .map(|v| parse_address(&v).map_err(|why| field("validator", why)))
            .transpose()?;
        let mut alloc = BTreeMap::new();
        for (addr, account) in file.alloc {
            let name = format!("alloc.{addr}");
            let a = parse_address(&addr).map_err(|why| field(&name, why))?;
            let balance = parse_balance(&account.balance)
                .map_err(|why| field(format!("{name}.balance"), why))?;
            if alloc.insert(a, balance).is_some() {
                return Err(field(&name, "listed twice"));
            }
        }
        Ok(Genesis {
            chain_id,
            network_id: file.network_id.unwrap_or(chain_id),
            unit_price: file.config.unit_price.unwrap_or(DEV_UNIT_PRICE),
            validator,
            timestamp: file.timestamp.unwrap_or(0),
            alloc,
        })
    }

    /// A digest of everything the genesis block is made from, so that a chain can tell
    /// cheaply that it was created from this very specification (computing the genesis
    /// block of a large allocation takes seconds).
    pub fn digest(&self) -> [u8; 32] {
        use sha3::Digest;
        let mut h = sha3::Keccak256::new();
        h.update(b"chain-node genesis v1");
        h.update(self.unit_price.to_be_bytes());
        h.update([u8::from(self.validator.is_some())]);
        h.update(self.validator.map_or([0; 20], |v| v.0));
        h.update(self.timestamp.to_be_bytes());
        h.update((self.alloc.len() as u64).to_be_bytes());
        for (address, balance) in &self.alloc {
            h.update(address.0);
            h.update(balance);
        }
        h.finalize().into()
    }

    /// The genesis as a file that [`Genesis::parse`] reads back to the same value: what
    /// `chaind --dev import` keeps in a data directory, as `chaind init` keeps its file.
    pub fn to_json(&self) -> String {
        let alloc: serde_json::Map<String, serde_json::Value> = self
            .alloc
            .iter()
            .map(|(a, b)| {
                (
                    a.to_string(),
                    serde_json::json!({ "balance": hex_quantity(b) }),
                )
            })
            .collect();
        let mut file = serde_json::json!({
            "config": { "chainId": self.chain_id, "unitPrice": self.unit_price },
            "networkId": self.network_id,
            "timestamp": self.timestamp,
            "alloc": alloc,
        });
        if let Some(v) = self.validator {
            file["validator"] = serde_json::Value::String(v.to_string());
        }
        serde_json::to_string_pretty(&file).expect("a genesis serializes") + "\n"
    }

    /// The built-in `--dev` genesis: `validator` sealing and funded with `balance`.
    pub fn dev(validator: Address, balance: Balance) -> Genesis {
        Genesis {
            chain_id: DEV_CHAIN_ID,
            network_id: DEV_CHAIN_ID,
            unit_price: DEV_UNIT_PRICE,
            validator: Some(validator),
            timestamp: 0,
            alloc: BTreeMap::from([(validator, balance)]),
        }
    }
}

/// `0x` and the hex digits of `b` without leading zeros (`0x0` for zero).
fn hex_quantity(b: &Balance) -> String {
    let digits = hex::encode(b);
    let digits = digits.trim_start_matches('0');
    format!("0x{}", if digits.is_empty() { "0" } else { digits })
}

/// `0x` + 40 hex digits (any case).
fn parse_address(s: &str) -> Result<Address, String> {
    let hex = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .ok_or("an address is 0x followed by 40 hex digits")?;
    if hex.len() != 40 {
        return Err(format!("an address is 40 hex digits, not {}", hex.len()));
    }
    let bytes = hex::decode(hex).map_err(|_| "an address is 40 hex digits".to_string())?;
    let mut a = [0u8; 20];
    a.copy_from_slice(&bytes);
    Ok(Address(a))
}

/// A balance as `0x` hex, a decimal string, or a JSON integer; at most 256 bits.
fn parse_balance(v: &serde_json::Value) -> Result<Balance, String> {
    let too_large = || "more than 256 bits".to_string();
    match v {
        serde_json::Value::Number(n) => {
            let n = n
                .as_u64()
                .ok_or("a balance is a whole number, not negative")?;
            let mut b = [0u8; 32];
            b[24..].copy_from_slice(&n.to_be_bytes());
            Ok(b)
        }
        serde_json::Value::String(s) => {
            if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
                let hex = hex.trim_start_matches('0');
                if hex.len() > 64 {
                    return Err(too_large());
                }
                if !hex.bytes().all(|c| c.is_ascii_hexdigit()) || s.len() == 2 {
                    return Err("bad hex number".into());
                }
                let padded = format!("{hex:0>64}");
                let bytes = hex::decode(padded).map_err(|_| "bad hex number".to_string())?;
                let mut b = [0u8; 32];
                b.copy_from_slice(&bytes);
                return Ok(b);
            }
            if s.is_empty() || !s.bytes().all(|c| c.is_ascii_digit()) {
                return Err("a balance is 0x hex or decimal digits".into());
            }
            // Decimal: multiply-and-add in 256 bits.
            let mut b = [0u8; 32];
            for d in s.bytes() {
                let mut carry = u32::from(d - b'0');
                for byte in b.iter_mut().rev() {
                    let x = u32::from(*byte) * 10 + carry;
                    *byte = x as u8;
                    carry = x >> 8;
                }
                if carry != 0 {
                    return Err(too_large());
                }
            }
            Ok(b)
        }
        _ => Err("a balance is a string or a number".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ADDR: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";

    fn be(n: u128) -> Balance {
        let mut b = [0u8; 32];
        b[16..].copy_from_slice(&n.to_be_bytes());
        b
    }

    #[test]
    fn a_written_genesis_reads_back_the_same() {
        let mut g = Genesis::dev(parse_address(ADDR).unwrap(), be(10u128.pow(27)));
        g.chain_id = 2019;
        g.network_id = 7;
        assert_eq!(Genesis::parse(g.to_json().as_bytes()).unwrap(), g);
        g.validator = None;
        g.alloc.clear();
        assert_eq!(Genesis::parse(g.to_json().as_bytes()).unwrap(), g);
    }

    #[test]
    fn a_full_file_is_read() {
        let text = format!(
            r#"{{"config":{{"chainId":7,"unitPrice":1}},"networkId":9,"validator":"{ADDR}","timestamp":5,
               "alloc":{{"{ADDR}":{{"balance":"0xde0b6b3a7640000"}},
                         "0x0000000000000000000000000000000000000001":{{"balance":"1000000000000000000"}},
                         "0x0000000000000000000000000000000000000002":{{"balance":12}}}}}}"#
        );
        let g = Genesis::parse(text.as_bytes()).unwrap();
        assert_eq!(
            (g.chain_id, g.network_id, g.unit_price, g.timestamp),
            (7, 9, 1, 5)
        );
        assert_eq!(g.validator, Some(parse_address(ADDR).unwrap()));
        let balances: Vec<Balance> = g.alloc.values().copied().collect();
        assert_eq!(
            balances,
            vec![
                be(1_000_000_000_000_000_000),
                be(12),
                be(1_000_000_000_000_000_000)
            ]
        );
    }

    #[test]
    fn defaults_are_the_dev_chain() {
        let g = Genesis::parse(br#"{"alloc":{}}"#).unwrap();
        assert_eq!(
            (g.chain_id, g.network_id, g.unit_price, g.validator),
            (1000, 1000, 25_000_000_000, None)
        );
    }

    #[test]
    fn bad_files_name_the_field() {
        let max = format!("0x{}", "f".repeat(64));
        let over = format!("0x1{}", "0".repeat(64));
        let cases: Vec<(String, &str)> = vec![
            (r#"{"config":{"chainId":0},"alloc":{}}"#.into(), "invalid genesis file: config.chainId: must be at least 1"),
            (r#"{"validator":"0x12","alloc":{}}"#.into(), "invalid genesis file: validator: an address is 40 hex digits, not 2"),
            (r#"{"alloc":{"819104a190255e0cedbdd9d5f59a557633d79db1":{"balance":"1"}}}"#.into(), "invalid genesis file: alloc.819104a190255e0cedbdd9d5f59a557633d79db1: an address is 0x followed by 40 hex digits"),
            (format!(r#"{{"alloc":{{"{ADDR}":{{"balance":"{over}"}}}}}}"#), "more than 256 bits"),
            (format!(r#"{{"alloc":{{"{ADDR}":{{"balance":"12a"}}}}}}"#), "a balance is 0x hex or decimal digits"),
            (format!(r#"{{"alloc":{{"{ADDR}":{{"balance":-1}}}}}}"#), "a balance is a whole number, not negative"),
            (format!(r#"{{"alloc":{{"{ADDR}":{{"balance":"1"}},"{}":{{"balance":"1"}}}}}}"#, ADDR.to_uppercase().replace("0X", "0x")), "listed twice"),
        ];
        for (text, want) in cases {
            let e = Genesis::parse(text.as_bytes()).unwrap_err().to_string();
            assert!(e.ends_with(want), "{text}: {e}");
        }
        assert!(matches!(Genesis::parse(b"{"), Err(Error::Json(_))));
        assert!(matches!(
            Genesis::parse(br#"{"alloc":{},"extra":1}"#),
            Err(Error::Json(_))
        ));
        assert!(
            matches!(Genesis::parse(br#"{}"#), Err(Error::Json(_))),
            "alloc is required"
        );
        let ok = format!(r#"{{"alloc":{{"{ADDR}":{{"balance":"{max}"}}}}}}"#);
        assert_eq!(
            Genesis::parse(ok.as_bytes()).unwrap().alloc.values().next(),
            Some(&[0xff; 32])
        );
    }
}
