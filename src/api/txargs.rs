//! The transaction arguments of the send and sign methods (reference
//! `personal-and-keystore.md` 6): parsing the JSON object, the defaults (gas estimated as
//! `chain_estimateGas` does, DECISIONS.md: exactly the intrinsic gas of a transaction that
//! runs no code; the unit price; the pool's next nonce), the member checks of 6.3 with the
//! reference's texts, and the one path every send method takes: fill under the sender's
//! nonce lock when the nonce is left out, sign, submit.

use serde_json::{Map, Value};

use super::error::{AccountError, Error, Result};
use super::goparams::Member;
use crate::chain::Chain;
use crate::crypto::{Address, SecretKey};
use crate::rpc::RpcError;
use crate::types::account_key::{AccountKey, Role};
use crate::types::transaction::{
    AccountUpdate, Legacy, SmartContractDeploy, SmartContractExecution, Transaction, ValueTransfer,
    U256,
};

/// Transaction types the send and sign methods build.
pub const TYPE_LEGACY: u64 = 0;
pub const TYPE_VALUE_TRANSFER: u64 = 8;
pub const TYPE_ACCOUNT_UPDATE: u64 = 32;
pub const TYPE_SMART_CONTRACT_DEPLOY: u64 = 40;
pub const TYPE_SMART_CONTRACT_EXECUTION: u64 = 48;

fn invalid(msg: impl Into<String>) -> Error {
    Error::Rpc(RpcError::invalid_params(msg.into()))
}

/// A member of the reference's `SendTxArgs`, decoded with Go's texts.
fn member(name: &str) -> Member<'_> {
    Member {
        strukt: "SendTxArgs",
        name,
    }
}

fn arg0(m: String) -> Error {
    invalid(format!("invalid argument 0: {m}"))
}

/// A 0x-hex quantity of at most 256 bits (`*hexutil.Big`), or Go's error naming `field`.
pub fn quantity(field: &str, v: &Value) -> Result<U256> {
    member(field).big(v).map_err(arg0)
}

/// A 0x-hex quantity of at most 64 bits (`hexutil.Uint64`).
pub fn quantity_u64(field: &str, v: &Value) -> Result<u64> {
    member(field).uint64(v).map_err(arg0)
}

fn address(field: &str, v: &Value) -> Result<Address> {
    member(field).address(v).map_err(arg0)
}

fn bytes(field: &str, v: &Value) -> Result<Vec<u8>> {
    member(field).bytes(v).map_err(arg0)
}

/// `codeFormat`: a JSON number of at most a byte (`params.CodeFormat`).
fn code_format(v: &Value) -> Result<u8> {
    member("codeFormat")
        .integer(v, "params.CodeFormat", u8::MAX.into())
        .map(|n| n as u8)
        .map_err(arg0)
}

/// `humanReadable`: a JSON boolean.
fn human_readable(v: &Value) -> Result<bool> {
    member("humanReadable").boolean(v).map_err(arg0)
}

/// Every transaction type the reference defines (`types.TxType`); any other `typeInt` is its
/// `undefined tx type`.
const REFERENCE_TYPES: &[u64] = &[
    0, 8, 9, 10, 16, 17, 18, 32, 33, 34, 40, 41, 42, 48, 49, 50, 56, 57, 58, 72, 73, 74, 30721,
    30722,
];

/// The members of the general transaction object, in the reference's declaration order,
/// with the declaration text its member checks quote.
const MEMBERS: &[(&str, &str)] = &[
    ("to", r#"json:"to""#),
    ("gas", r#"json:"gas""#),
    ("gasPrice", r#"json:"gasPrice""#),
    ("maxPriorityFeePerGas", r#"json:"maxPriorityFeePerGas""#),
    ("maxFeePerGas", r#"json:"maxFeePerGas""#),
    ("value", r#"json:"value""#),
    ("nonce", r#"json:"nonce""#),
    ("data", r#"json:"data""#),
    ("input", r#"json:"input""#),
    ("codeFormat", r#"json:"codeFormat""#),
    ("humanReadable", r#"json:"humanReadable""#),
    ("key", r#"json:"key""#),
    ("accessList", r#"json:"accessList,omitempty""#),
    ("chainId", r#"json:"chainId,omitempty""#),
    ("feePayer", r#"json:"feePayer""#),
    ("feeRatio", r#"json:"feeRatio""#),
];

/// Every member name of the general object, as the reference spells it.
const KNOWN: &[&str] = &[
    "typeInt",
    "from",
    "to",
    "gas",
    "gasPrice",
    "maxPriorityFeePerGas",
    "maxFeePerGas",
    "value",
    "nonce",
    "data",
    "input",
    "codeFormat",
    "humanReadable",
    "key",
    "accessList",
    "chainId",
    "feePayer",
    "feeRatio",
    "signatures",
];

/// The members each of the chain's own types has (besides `from`, `signatures`, `typeInt`).
fn fields_of(type_int: u64) -> &'static [&'static str] {
    match type_int {
        TYPE_VALUE_TRANSFER => &["to", "gas", "gasPrice", "value", "nonce"],
        TYPE_ACCOUNT_UPDATE => &["gas", "gasPrice", "nonce", "key"],
        TYPE_SMART_CONTRACT_DEPLOY => &[
            "to",
            "gas",
            "gasPrice",
            "value",
            "nonce",
            "input",
            "codeFormat",
            "humanReadable",
        ],
        TYPE_SMART_CONTRACT_EXECUTION => &["to", "gas", "gasPrice", "value", "nonce", "input"],
        _ => &[],
    }
}

fn type_name(type_int: u64) -> &'static str {
    match type_int {
        TYPE_VALUE_TRANSFER => "TxTypeValueTransfer",
        TYPE_ACCOUNT_UPDATE => "TxTypeAccountUpdate",
        TYPE_SMART_CONTRACT_DEPLOY => "TxTypeSmartContractDeploy",
        TYPE_SMART_CONTRACT_EXECUTION => "TxTypeSmartContractExecution",
        _ => "TxTypeLegacyTransaction",
    }
}

/// A transaction object as given: each member present (JSON `null` counts as absent).
#[derive(Debug, Clone)]
pub struct TxArgs {
    pub type_int: u64,
    pub from: Address,
    members: Map<String, Value>,
    /// Whether the reference's member checks apply (the general object); the typed methods
    /// say `tx fields should be filled with valid values` for a missing member instead.
    member_checks: bool,
}

impl TxArgs {
    /// Parses the general object of `personal_sendTransaction` and the sign methods.
    /// Unknown members are ignored, as the reference ignores them.
    pub fn general(v: Value) -> Result<TxArgs> {
        let Value::Object(given) = v else {
            return Err(arg0(crate::rpc::go_type_error(
                crate::rpc::json_type(&v),
                "api.SendTxArgs",
            )));
        };
        // Member names match whatever their case, as the reference's JSON decoding does (an
        // exact match wins over one that differs only in case).
        let mut members = Map::new();
        for (name, value) in given {
            if value.is_null() {
                continue;
            }
            let canonical = KNOWN
                .iter()
                .find(|k| k.eq_ignore_ascii_case(&name))
                .map_or(name.clone(), |k| (*k).to_string());
            if canonical != name && members.contains_key(&canonical) {
                continue;
            }
            members.insert(canonical, value);
        }
        // Every given value must be of its kind, whatever the type then does with it; Go's
        // decoder stops at the first member that does not decode, in the object's order.
        for (name, v) in &members {
            match name.as_str() {
                "typeInt" => {
                    member("typeInt")
                        .integer(v, "types.TxType", u16::MAX.into())
                        .map_err(arg0)?;
                }
                "from" | "to" | "feePayer" => {
                    address(name, v)?;
                }
                "gas" | "nonce" => {
                    quantity_u64(name, v)?;
                }
                "gasPrice" | "maxPriorityFeePerGas" | "maxFeePerGas" | "value" | "chainId" => {
                    quantity(name, v)?;
                }
                "data" | "input" | "key" => {
                    bytes(name, v)?;
                }
                "codeFormat" => {
                    code_format(v)?;
                }
                "humanReadable" => {
                    human_readable(v)?;
                }
                _ => {}
            }
        }
        let type_int = members
            .remove("typeInt")
            .and_then(|t| t.as_u64())
            .unwrap_or(TYPE_LEGACY);
        // `from` left out is the zero address, as Go leaves it; the keystore does not hold it
        // (`unknown account`, after the argument checks).
        let from = match members.remove("from") {
            Some(v) => address("from", &v)?,
            None => Address([0; 20]),
        };
        members.remove("signatures");
        let args = TxArgs {
            type_int,
            from,
            members,
            member_checks: true,
        };
        Ok(args)
    }

    /// The object of `personal_sendValueTransfer` / `personal_sendAccountUpdate` (members
    /// `from`, `to`/`key`, `value`, `gas`, `gasPrice`, `nonce`; others are ignored), as the
    /// general object of `type_int`.
    pub fn typed(v: Value, type_int: u64) -> Result<TxArgs> {
        let Value::Object(members) = v else {
            return Err(arg0(crate::rpc::go_type_error(
                crate::rpc::json_type(&v),
                "api.SendTxArgs",
            )));
        };
        let keep: &[&str] = if type_int == TYPE_VALUE_TRANSFER {
            &["from", "to", "value", "gas", "gasPrice", "nonce"]
        } else {
            &["from", "key", "gas", "gasPrice", "nonce"]
        };
        let mut obj: Map<String, Value> = members
            .into_iter()
            .filter(|(k, _)| keep.iter().any(|x| x.eq_ignore_ascii_case(k)))
            .collect();
        obj.insert("typeInt".into(), type_int.into());
        let mut args = TxArgs::general(Value::Object(obj))?;
        args.member_checks = false;
        Ok(args)
    }

    fn get(&self, name: &str) -> Option<&Value> {
        self.members.get(name)
    }

    /// The nonce given, if any.
    pub fn nonce(&self) -> Result<Option<u64>> {
        self.get("nonce")
            .map(|v| quantity_u64("nonce", v))
            .transpose()
    }

    /// The unsigned transaction with `nonce` and the defaults filled in, after the member
    /// checks of the reference; `key` is the sender's current account key (what its
    /// signature's validation costs).
    pub fn build(&self, chain: &Chain, nonce: u64, key: &AccountKey) -> Result<Transaction> {
        let gas_price = match self.get("gasPrice") {
            Some(v) => quantity("gasPrice", v)?,
            None => {
                let mut b = [0u8; 32];
                b[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
                b
            }
        };
        let gas = self
            .get("gas")
            .map(|v| quantity_u64("gas", v))
            .transpose()?;
        let value = self
            .get("value")
            .map(|v| quantity("value", v))
            .transpose()?;
        let mut tx = match self.type_int {
            TYPE_LEGACY => {
                let data = self.get("data").map(|v| bytes("data", v)).transpose()?;
                let input = self.get("input").map(|v| bytes("input", v)).transpose()?;
                if let (Some(d), Some(i)) = (&data, &input) {
                    if d != i {
                        return Err(AccountError::Args(
                            r#"Both "data" and "input" are set and not equal. Please use "input" to pass transaction call data."#.into(),
                        )
                        .into());
                    }
                }
                let input = data.or(input).unwrap_or_default();
                let to = self.get("to").map(|v| address("to", v)).transpose()?;
                if to.is_none() && input.is_empty() {
                    return Err(AccountError::Args(
                        "contract creation without any data provided".into(),
                    )
                    .into());
                }
                Transaction::Legacy(Legacy {
                    nonce,
                    gas_price,
                    gas: 0,
                    to,
                    value: value.unwrap_or([0; 32]),
                    input,
                    signature: None,
                })
            }
            TYPE_VALUE_TRANSFER | TYPE_ACCOUNT_UPDATE => {
                if self.member_checks {
                    self.check_members()?;
                }
                if self.type_int == TYPE_VALUE_TRANSFER {
                    Transaction::ValueTransfer(ValueTransfer {
                        nonce,
                        gas_price,
                        gas: 0,
                        to: address("to", self.get("to").ok_or(AccountError::TxFields)?)?,
                        value: value.ok_or(AccountError::TxFields)?,
                        from: self.from,
                        signatures: Vec::new(),
                    })
                } else {
                    let raw = bytes("key", self.get("key").ok_or(AccountError::TxFields)?)?;
                    let key = AccountKey::decode(&raw)
                        .map_err(|e| AccountError::Key(e.to_string()))?;
                    Transaction::AccountUpdate(AccountUpdate {
                        nonce,
                        gas_price,
                        gas: 0,
                        from: self.from,
                        key,
                        signatures: Vec::new(),
                    })
                }
            }
            TYPE_SMART_CONTRACT_DEPLOY | TYPE_SMART_CONTRACT_EXECUTION => {
                if self.member_checks {
                    self.check_members()?;
                }
                let input = bytes("input", self.get("input").ok_or(AccountError::TxFields)?)?;
                let value = value.ok_or(AccountError::TxFields)?;
                let to = self.get("to").map(|v| address("to", v)).transpose()?;
                if self.type_int == TYPE_SMART_CONTRACT_DEPLOY {
                    Transaction::SmartContractDeploy(SmartContractDeploy {
                        nonce,
                        gas_price,
                        gas: 0,
                        to,
                        value,
                        from: self.from,
                        input,
                        human_readable: human_readable(
                            self.get("humanReadable").ok_or(AccountError::TxFields)?,
                        )?,
                        code_format: code_format(
                            self.get("codeFormat").ok_or(AccountError::TxFields)?,
                        )?,
                        signatures: Vec::new(),
                    })
                } else {
                    Transaction::SmartContractExecution(SmartContractExecution {
                        nonce,
                        gas_price,
                        gas: 0,
                        to: to.ok_or(AccountError::TxFields)?,
                        value,
                        from: self.from,
                        input,
                        signatures: Vec::new(),
                    })
                }
            }
            other if !REFERENCE_TYPES.contains(&other) => {
                return Err(AccountError::Args("undefined tx type".into()).into())
            }
            other => {
                return Err(invalid(format!(
                    "invalid argument 0: typeInt {other}: this node builds transactions of type 0 (legacy), 8 (value transfer), 32 (account update), 40 (smart contract deploy) and 48 (smart contract execution)"
                )))
            }
        };
        let gas = match gas {
            Some(g) => g,
            None => estimate(chain, &tx, self.from, key)?,
        };
        tx.set_gas(gas);
        Ok(tx)
    }

    /// The reference's member checks for its own types: every member the type has must be
    /// given, and none it lacks (the defaults count as given).
    fn check_members(&self) -> Result<()> {
        let fields = fields_of(self.type_int);
        let defaulted = ["gas", "gasPrice", "nonce"];
        for (name, decl) in MEMBERS {
            let given = self.members.contains_key(*name) || defaulted.contains(name);
            let has = fields.contains(name);
            // A deploy may leave its recipient out (it must, to pass the pool).
            let optional = *name == "to" && self.type_int == TYPE_SMART_CONTRACT_DEPLOY;
            if !given && has && !optional {
                return Err(AccountError::Args(format!(
                    "{decl} is required for {}",
                    type_name(self.type_int)
                ))
                .into());
            }
            if given && !has {
                return Err(AccountError::Args(format!(
                    "{decl} is not a field of {}",
                    type_name(self.type_int)
                ))
                .into());
            }
        }
        Ok(())
    }
}

/// The gas `tx` of `from` needs: what running it takes (`chain_estimateGas`), plus what
/// validating one signature against the sender's `key` costs. A transaction that runs no
/// code needs exactly its intrinsic gas.
fn estimate(chain: &Chain, tx: &Transaction, from: Address, key: &AccountKey) -> Result<u64> {
    let role = match tx {
        Transaction::AccountUpdate(_) => Role::AccountUpdate,
        _ => Role::Transaction,
    };
    let validation = key.validation_gas(role, 1);
    let runs_code = match tx {
        Transaction::AccountUpdate(_) | Transaction::ValueTransfer(_) => false,
        _ => match tx.to() {
            None => true,
            Some(to) => {
                !tx.input().is_empty()
                    || chain
                        .account(&to, None)?
                        .is_some_and(|a| a.code_hash() != crate::state::EMPTY_CODE_HASH)
            }
        },
    };
    if !runs_code {
        return Ok(tx.intrinsic_gas() + validation);
    }
    let args = crate::chain::call::CallArgs {
        from: Some(from),
        to: tx.to(),
        gas: None,
        gas_price: None,
        value: Some(tx.value()),
        input: tx.input().to_vec(),
    };
    let used = chain.estimate_gas(&args)?;
    // The intrinsic gas of the contract types equals that of the legacy message estimated.
    Ok(used.max(tx.intrinsic_gas()) + validation)
}

/// How the sender's key is had: decrypted from its key file, or the unlocked one.
pub type KeySource<'a> = Box<dyn FnOnce() -> Result<SecretKey> + 'a>;

/// The send path: the transaction built and checked, the key had (after every argument
/// check), then, under the sender's nonce lock when the nonce is left out (reference 6.4),
/// the nonce filled, the signature for the node's chain, the submission; its hash. The lock
/// is taken after the key is decrypted, not across it (STYLE.md: no lock across scrypt): the
/// nonces of concurrent sends are still consecutive, since the lock covers reading the pending
/// nonce up to the pool's answer.
pub fn send(chain: &Chain, args: &TxArgs, key: KeySource<'_>) -> Result<[u8; 32]> {
    let given = args.nonce()?;
    let account_key = chain
        .account(&args.from, None)?
        .map_or(AccountKey::Legacy, |a| a.key);
    let mut tx = args.build(chain, given.unwrap_or(0), &account_key)?;
    let key = key()?;
    let lock = given.is_none().then(|| chain.nonce_lock(&args.from));
    let _held = lock
        .as_ref()
        .map(|l| l.lock().unwrap_or_else(|p| p.into_inner()));
    if given.is_none() {
        tx.set_nonce(chain.pending_nonce(&args.from)?);
    }
    tx.sign(&key, chain.chain_id());
    drop(key);
    Ok(chain.submit(tx)?)
}

/// The sign path: as [`send`] without the lock and without submitting; the signed
/// transaction.
pub fn sign(chain: &Chain, args: &TxArgs, key: KeySource<'_>) -> Result<Transaction> {
    let nonce = match args.nonce()? {
        Some(n) => n,
        None => chain.pending_nonce(&args.from)?,
    };
    let account_key = chain
        .account(&args.from, None)?
        .map_or(AccountKey::Legacy, |a| a.key);
    let mut tx = args.build(chain, nonce, &account_key)?;
    let key = key()?;
    tx.sign(&key, chain.chain_id());
    Ok(tx)
}
