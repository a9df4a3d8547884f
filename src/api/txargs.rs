//! The transaction arguments of the send and sign methods (reference
//! `personal-and-keystore.md` 6): parsing the JSON object, the defaults (gas estimated as
//! `chain_estimateGas` does, DECISIONS.md: exactly the intrinsic gas of a transaction that
//! runs no code; the unit price; the pool's next nonce), the member checks of 6.3 with the
//! reference's texts, and the one path every send method takes: fill under the sender's
//! nonce lock when the nonce is left out, sign, submit.

use serde_json::{Map, Value};

use super::error::{AccountError, Result};
use super::txmembers::{
    access_list, address, arg0, bytes, code_format, fee_ratio, human_readable, member, signatures,
};
pub use super::txmembers::{quantity, quantity_u64};
use crate::chain::Chain;
use crate::crypto::{Address, SecretKey};
use crate::types::account_key::{AccountKey, Role};
use crate::types::native::{split_code, type_name as native_type_name};
use crate::types::transaction::{
    Base, Ethereum, FeeMode, Legacy, Native, Signature, Transaction, U256,
};

/// Transaction types the send and sign methods build.
pub const TYPE_LEGACY: u64 = 0;
pub const TYPE_VALUE_TRANSFER: u64 = 8;
pub const TYPE_ACCOUNT_UPDATE: u64 = 32;
pub const TYPE_SMART_CONTRACT_DEPLOY: u64 = 40;
pub const TYPE_SMART_CONTRACT_EXECUTION: u64 = 48;
pub const TYPE_ETHEREUM_ACCESS_LIST: u64 = 0x7801;
pub const TYPE_ETHEREUM_DYNAMIC_FEE: u64 = 0x7802;

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

/// The members each of the reference's own types has (besides `from`, `signatures`,
/// `typeInt`); none for a type it defines but does not build (account creation, batch).
fn fields_of(type_int: u64) -> Vec<&'static str> {
    let Some((base, mode)) = u8::try_from(type_int).ok().and_then(split_code) else {
        return Vec::new();
    };
    let mut f = Vec::new();
    if matches!(
        base,
        Base::ValueTransfer
            | Base::ValueTransferMemo
            | Base::SmartContractDeploy
            | Base::SmartContractExecution
    ) {
        f.push("to");
    }
    f.extend(["gas", "gasPrice"]);
    if matches!(
        base,
        Base::ValueTransfer
            | Base::ValueTransferMemo
            | Base::SmartContractDeploy
            | Base::SmartContractExecution
    ) {
        f.push("value");
    }
    f.push("nonce");
    if !matches!(
        base,
        Base::ValueTransfer | Base::AccountUpdate | Base::Cancel
    ) {
        f.push("input");
    }
    if base == Base::SmartContractDeploy {
        f.extend(["codeFormat", "humanReadable"]);
    }
    if base == Base::AccountUpdate {
        f.push("key");
    }
    if mode != FeeMode::Sender {
        f.push("feePayer");
    }
    if matches!(mode, FeeMode::Ratio(_)) {
        f.push("feeRatio");
    }
    f
}

fn type_name(type_int: u64) -> &'static str {
    match type_int {
        TYPE_LEGACY => "TxTypeLegacyTransaction",
        TYPE_ETHEREUM_ACCESS_LIST => "TxTypeEthereumAccessList",
        TYPE_ETHEREUM_DYNAMIC_FEE => "TxTypeEthereumDynamicFee",
        t => u8::try_from(t).map_or("UndefinedTxType", native_type_name),
    }
}

/// A transaction object as given: each member present (JSON `null` counts as absent).
#[derive(Debug, Clone)]
pub struct TxArgs {
    pub type_int: u64,
    pub from: Address,
    /// The sender's signatures given (`signatures`), for a fee payer to add its own to.
    pub signatures: Option<Vec<Signature>>,
    /// Whether `typeInt` was given (the fee payer's send demands it).
    pub type_given: bool,
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
                "feeRatio" => {
                    fee_ratio(v)?;
                }
                "accessList" => {
                    access_list(v)?;
                }
                "signatures" => {
                    signatures(v)?;
                }
                _ => {}
            }
        }
        let given_type = members.remove("typeInt");
        let type_given = given_type.is_some();
        let type_int = given_type.and_then(|t| t.as_u64()).unwrap_or(TYPE_LEGACY);
        // `from` left out is the zero address, as Go leaves it; the keystore does not hold it
        // (`unknown account`, after the argument checks).
        let from = match members.remove("from") {
            Some(v) => address("from", &v)?,
            None => Address([0; 20]),
        };
        let sigs = members
            .remove("signatures")
            .map(|v| signatures(&v))
            .transpose()?;
        let args = TxArgs {
            type_int,
            from,
            signatures: sigs,
            type_given,
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
            TYPE_ETHEREUM_ACCESS_LIST | TYPE_ETHEREUM_DYNAMIC_FEE => {
                self.ethereum(chain, nonce, gas_price, value)?
            }
            t if !REFERENCE_TYPES.contains(&t) && t >= 0x7800 => {
                return Err(AccountError::Args("undefined tx type".into()).into())
            }
            t => {
                if self.member_checks {
                    self.check_members()?;
                }
                let Some((base, mode)) = u8::try_from(t).ok().and_then(split_code) else {
                    return Err(AccountError::Args("undefined tx type".into()).into());
                };
                let mut n = Native::new(base, mode, self.from);
                n.nonce = nonce;
                n.gas_price = gas_price;
                let fields = fields_of(t);
                let required = |name: &str| self.get(name).ok_or(AccountError::TxFields);
                if fields.contains(&"to") {
                    n.to = match self.get("to") {
                        Some(v) => Some(address("to", v)?),
                        None if base == Base::SmartContractDeploy => None,
                        None => return Err(AccountError::TxFields.into()),
                    };
                }
                if fields.contains(&"value") {
                    n.value = value.ok_or(AccountError::TxFields)?;
                }
                if fields.contains(&"input") {
                    n.input = bytes("input", required("input")?)?;
                }
                if base == Base::AccountUpdate {
                    let raw = bytes("key", required("key")?)?;
                    n.key = Some(
                        AccountKey::decode(&raw).map_err(|e| AccountError::Key(e.to_string()))?,
                    );
                }
                if base == Base::SmartContractDeploy {
                    n.human_readable = human_readable(required("humanReadable")?)?;
                    n.code_format = code_format(required("codeFormat")?)?;
                }
                if mode != FeeMode::Sender {
                    n.fee_payer = address("feePayer", required("feePayer")?)?;
                }
                if let FeeMode::Ratio(_) = mode {
                    n.fee_mode = FeeMode::Ratio(fee_ratio(required("feeRatio")?)?);
                }
                Transaction::Native(n)
            }
        };
        let gas = match gas {
            Some(g) => g,
            None => estimate(chain, &tx, self.from, key)?,
        };
        tx.set_gas(gas);
        Ok(tx)
    }

    /// An Ethereum typed transaction (the reference's `setDefaults` and map rules: the chain
    /// id defaults to the node's, `accessList` is required, members the type lacks are
    /// `undefined key remains`; before Magma both fee caps must be the unit price).
    fn ethereum(
        &self,
        chain: &Chain,
        nonce: u64,
        gas_price: U256,
        value: Option<U256>,
    ) -> Result<Transaction> {
        let dynamic = self.type_int == TYPE_ETHEREUM_DYNAMIC_FEE;
        let args = |m: &str| AccountError::Args(m.to_string());
        let foreign: &[&str] = if dynamic {
            &[
                "gasPrice",
                "feePayer",
                "feeRatio",
                "key",
                "codeFormat",
                "humanReadable",
            ]
        } else {
            &[
                "maxFeePerGas",
                "maxPriorityFeePerGas",
                "feePayer",
                "feeRatio",
                "key",
                "codeFormat",
                "humanReadable",
            ]
        };
        let unit = crate::state::from_u64(chain.unit_price());
        let (tip, cap) = if dynamic {
            let tip = match self.get("maxPriorityFeePerGas") {
                Some(v) => quantity("maxPriorityFeePerGas", v)?,
                None => unit,
            };
            let cap = match self.get("maxFeePerGas") {
                Some(v) => quantity("maxFeePerGas", v)?,
                None => tip,
            };
            if tip != unit || cap != unit {
                return Err(args(&format!(
                    "only {} is allowed to be used as maxFeePerGas and maxPriorityPerGas",
                    crate::state::quantity(&unit).trim_start_matches("0x")
                ))
                .into());
            }
            (tip, cap)
        } else {
            (gas_price, gas_price)
        };
        if foreign.iter().any(|m| self.get(m).is_some()) {
            return Err(args("undefined key remains").into());
        }
        let access_list = match self.get("accessList") {
            Some(v) => access_list(v)?,
            None => return Err(args("AccessList must be a type of AccessList").into()),
        };
        let chain_id = match self.get("chainId") {
            Some(v) => {
                let id = quantity("chainId", v)?;
                if id[..24].iter().any(|&b| b != 0) {
                    return Err(args("invalid chain id for signer").into());
                }
                u64::from_be_bytes(id[24..].try_into().expect("8 bytes"))
            }
            None => chain.chain_id(),
        };
        Ok(Transaction::Ethereum(Ethereum {
            dynamic,
            chain_id,
            nonce,
            gas_tip_cap: tip,
            gas_fee_cap: cap,
            gas: 0,
            to: self.get("to").map(|v| address("to", v)).transpose()?,
            value: value.unwrap_or([0; 32]),
            input: self
                .get("input")
                .map(|v| bytes("input", v))
                .transpose()?
                .unwrap_or_default(),
            access_list,
            signature: None,
        }))
    }

    /// The reference's member checks for its own types: every member the type has must be
    /// given, and none it lacks (the defaults count as given).
    fn check_members(&self) -> Result<()> {
        let fields = fields_of(self.type_int);
        let defaulted = ["gas", "gasPrice", "nonce"];
        for (name, decl) in MEMBERS {
            let given = self.members.contains_key(*name) || defaulted.contains(name);
            let name = *name;
            let has = fields.contains(&name);
            // A deploy may leave its recipient out (it must, to pass the pool).
            let optional = name == "to"
                && u8::try_from(self.type_int)
                    .ok()
                    .and_then(split_code)
                    .is_some_and(|(b, _)| b == Base::SmartContractDeploy);
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
    let mut validation = key.validation_gas(tx.role(), 1);
    if let Some(payer) = tx.fee_payer() {
        let payer_key = chain
            .account(&payer, None)?
            .map_or(AccountKey::Legacy, |a| a.key);
        validation += payer_key.validation_gas(Role::FeePayer, 1);
    }
    let runs_code = match tx.base() {
        Some(b) => matches!(b, Base::SmartContractDeploy | Base::SmartContractExecution),
        None => match tx.to() {
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
        access_list: Vec::new(),
    };
    let used = chain.estimate_gas(&args)?;
    // The intrinsic gas of the contract types equals that of the legacy message estimated;
    // a fee payer adds its part.
    Ok(used.max(tx.intrinsic_gas() - tx.delegation_gas()) + tx.delegation_gas() + validation)
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
    check_ethereum_price(args)?;
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
    Ok(chain.submit_local(tx)?)
}

/// The sign path: as [`send`] without the lock and without submitting; the signed
/// transaction.
pub fn sign(chain: &Chain, args: &TxArgs, key: KeySource<'_>) -> Result<Transaction> {
    check_ethereum_price(args)?;
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

/// The check the sign and send paths make before the defaults for Ethereum's types: a price
/// must be given, as `gasPrice` or as both fee caps.
fn check_ethereum_price(args: &TxArgs) -> Result<()> {
    let ethereum =
        args.type_int == TYPE_ETHEREUM_ACCESS_LIST || args.type_int == TYPE_ETHEREUM_DYNAMIC_FEE;
    if ethereum
        && args.get("gasPrice").is_none()
        && (args.get("maxPriorityFeePerGas").is_none() || args.get("maxFeePerGas").is_none())
    {
        return Err(AccountError::Args(
            "missing gasPrice or maxFeePerGas/maxPriorityFeePerGas".into(),
        )
        .into());
    }
    Ok(())
}

/// A fee payer's key, had once the fee payer is known.
pub type FeePayerKey<'a> = &'a dyn Fn(Address) -> KeySource<'a>;

/// The fee payer's sign path (`signTransactionAsFeePayer`): the transaction built as the
/// sender's sign path builds it (defaults filled), the sender's `signatures` as given, then
/// signed by the fee payer it names (a native type that is not fee-delegated names its
/// sender; legacy and Ethereum's types none: `invalid fee payer is set`).
pub fn sign_as_fee_payer(
    chain: &Chain,
    args: &TxArgs,
    key: FeePayerKey<'_>,
) -> Result<Transaction> {
    check_ethereum_price(args)?;
    let nonce = match args.nonce()? {
        Some(n) => n,
        None => chain.pending_nonce(&args.from)?,
    };
    let account_key = chain
        .account(&args.from, None)?
        .map_or(AccountKey::Legacy, |a| a.key);
    let mut tx = args.build(chain, nonce, &account_key)?;
    let payer = match &mut tx {
        Transaction::Native(n) => {
            if let Some(sigs) = &args.signatures {
                n.signatures = sigs.clone();
            }
            if n.is_delegated() {
                n.fee_payer
            } else {
                n.from
            }
        }
        _ => return Err(AccountError::Args("invalid fee payer is set".into()).into()),
    };
    let key = key(payer)()?;
    if !tx.sign_as_fee_payer(&key, chain.chain_id()) {
        return Err(AccountError::Args("not a fee delegation type transaction".into()).into());
    }
    Ok(tx)
}

/// The fee payer's send path (`sendTransactionAsFeePayer`): nothing is defaulted (the type,
/// the nonce, the gas, the price and the sender's signatures must be given, checked in the
/// reference's order), then as [`sign_as_fee_payer`], then submitted; the hash.
pub fn send_as_fee_payer(chain: &Chain, args: &TxArgs, key: FeePayerKey<'_>) -> Result<[u8; 32]> {
    let missing = |m: &str| -> Result<[u8; 32]> { Err(AccountError::Args(m.into()).into()) };
    if !args.type_given {
        return missing("tx should have a type value");
    }
    if args.get("nonce").is_none() {
        return missing("nonce of the sender is not set");
    }
    if args.get("gas").is_none() {
        return missing("gas limit is not set");
    }
    if args.get("gasPrice").is_none() {
        return missing("gas price is not set");
    }
    if args.signatures.is_none() {
        return missing("sender signature is not set");
    }
    let tx = sign_as_fee_payer(chain, args, key)?;
    Ok(chain.submit_local(tx)?)
}
