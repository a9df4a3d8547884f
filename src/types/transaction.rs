//! Transactions of every type the reference carries (reference sections 2-6): legacy, the
//! reference's own typed transactions (`native`: value transfer with and without memo,
//! account update, contract deploy and execution, cancel, chain-data anchoring, each also
//! fee-delegated and fee-delegated with a ratio) and Ethereum's typed transactions in the
//! reference's envelope (`ethereum`): their signing hashes, V, the raw encoding and its
//! decoder (a pure function of the bytes that never panics), the transaction hash and the
//! sender transaction hash, and the intrinsic gas.

use super::account_key::{AccountKey, KeyError, Role, Signer};
pub use super::ethereum::{AccessTuple, Ethereum};
pub use super::native::{Base, FeeMode, Native};
use super::rlp::{list, put_bytes, put_u64, put_uint, ListReader, RlpError};
use crate::crypto::{keccak256, Address, SecretKey};

/// A 256-bit unsigned integer, big-endian (gas price, value).
pub type U256 = [u8; 32];

pub const TYPE_VALUE_TRANSFER: u8 = 0x08;
pub const TYPE_ACCOUNT_UPDATE: u8 = 0x20;
pub const TYPE_SMART_CONTRACT_DEPLOY: u8 = 0x28;
pub const TYPE_SMART_CONTRACT_EXECUTION: u8 = 0x30;

/// Intrinsic gas of a transfer with a recipient (legacy, value transfer, account update base).
pub const TX_GAS: u64 = 21_000;
/// Per public key an account update installs.
pub const TX_ACCOUNT_CREATION_GAS_PER_KEY: u64 = 20_000;
/// Per byte of a transaction's input (Istanbul-compatible fork active).
pub const TX_DATA_GAS: u64 = 100;
/// Intrinsic gas of a contract creation (`TxGasContractCreation`).
pub const TX_GAS_CONTRACT_CREATION: u64 = 53_000;
/// Per 32-byte word of a contract's creation code (Shanghai-compatible fork active).
pub const INIT_CODE_WORD_GAS: u64 = 2;
/// Added when a fee payer pays all (`TxGasFeeDelegated`).
pub const TX_GAS_FEE_DELEGATED: u64 = 10_000;
/// Added when a fee payer pays a ratio (`TxGasFeeDelegatedWithRatio`).
pub const TX_GAS_FEE_DELEGATED_WITH_RATIO: u64 = 15_000;
/// A deploy asking for a human-readable address (`TxGasHumanReadable`).
pub const TX_GAS_HUMAN_READABLE: u64 = 4_000_000_000;

/// One signature: V (with the chain id folded in), R and S.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    pub v: u64,
    pub r: [u8; 32],
    pub s: [u8; 32],
}

impl Signature {
    /// The chain id V carries: 0 for 27/28 (unprotected), else (V - 35) / 2.
    pub fn chain_id(&self) -> u64 {
        if self.v == 27 || self.v == 28 {
            0
        } else {
            self.v.saturating_sub(35) / 2
        }
    }

    /// The recovery id (0 or 1) V carries, or `None`.
    pub fn recovery_id(&self) -> Option<u8> {
        let id = if self.v == 27 || self.v == 28 {
            self.v - 27
        } else {
            self.v.checked_sub(35)? % 2
        };
        u8::try_from(id).ok()
    }

    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        put_u64(out, self.v);
        put_uint(out, &self.r);
        put_uint(out, &self.s);
    }

    pub(crate) fn decode(r: &mut ListReader<'_>) -> Result<Signature, RlpError> {
        let v = r.u64()?;
        let sig_r = r.u256()?;
        let s = r.u256()?;
        Ok(Signature { v, r: sig_r, s })
    }

    /// Signs `hash` with `key`: V = recid + 35 + 2 x chainId.
    pub fn make(key: &SecretKey, hash: &[u8; 32], chain_id: u64) -> Signature {
        let raw = key.sign_hash(hash);
        Signature {
            v: u64::from(raw[64]) + 35 + 2 * chain_id,
            r: raw[..32].try_into().expect("32 bytes"),
            s: raw[32..64].try_into().expect("32 bytes"),
        }
    }
}

/// A legacy transaction (type 0).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Legacy {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    /// `None`: contract creation.
    pub to: Option<Address>,
    pub value: U256,
    pub input: Vec<u8>,
    pub signature: Option<Signature>,
}

/// A value transfer (type 0x08), as a builder of a [`Native`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueTransfer {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    pub to: Address,
    pub value: U256,
    pub from: Address,
    pub signatures: Vec<Signature>,
}

/// An account update (type 0x20), as a builder of a [`Native`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUpdate {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    pub from: Address,
    pub key: AccountKey,
    pub signatures: Vec<Signature>,
}

/// A smart contract deploy (type 0x28), as a builder of a [`Native`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartContractDeploy {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    pub to: Option<Address>,
    pub value: U256,
    pub from: Address,
    pub input: Vec<u8>,
    pub human_readable: bool,
    pub code_format: u8,
    pub signatures: Vec<Signature>,
}

/// A smart contract execution (type 0x30), as a builder of a [`Native`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartContractExecution {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    pub to: Address,
    pub value: U256,
    pub from: Address,
    pub input: Vec<u8>,
    pub signatures: Vec<Signature>,
}

impl From<ValueTransfer> for Transaction {
    fn from(t: ValueTransfer) -> Transaction {
        let mut n = Native::new(Base::ValueTransfer, FeeMode::Sender, t.from);
        (n.nonce, n.gas_price, n.gas, n.to, n.value) =
            (t.nonce, t.gas_price, t.gas, Some(t.to), t.value);
        n.signatures = t.signatures;
        Transaction::Native(n)
    }
}

impl From<AccountUpdate> for Transaction {
    fn from(t: AccountUpdate) -> Transaction {
        let mut n = Native::new(Base::AccountUpdate, FeeMode::Sender, t.from);
        (n.nonce, n.gas_price, n.gas, n.key) = (t.nonce, t.gas_price, t.gas, Some(t.key));
        n.signatures = t.signatures;
        Transaction::Native(n)
    }
}

impl From<SmartContractDeploy> for Transaction {
    fn from(t: SmartContractDeploy) -> Transaction {
        let mut n = Native::new(Base::SmartContractDeploy, FeeMode::Sender, t.from);
        (n.nonce, n.gas_price, n.gas, n.to, n.value, n.input) =
            (t.nonce, t.gas_price, t.gas, t.to, t.value, t.input);
        (n.human_readable, n.code_format) = (t.human_readable, t.code_format);
        n.signatures = t.signatures;
        Transaction::Native(n)
    }
}

impl From<SmartContractExecution> for Transaction {
    fn from(t: SmartContractExecution) -> Transaction {
        let mut n = Native::new(Base::SmartContractExecution, FeeMode::Sender, t.from);
        (n.nonce, n.gas_price, n.gas, n.to, n.value, n.input) =
            (t.nonce, t.gas_price, t.gas, Some(t.to), t.value, t.input);
        n.signatures = t.signatures;
        Transaction::Native(n)
    }
}

/// A transaction of one of the types this chain carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transaction {
    Legacy(Legacy),
    Native(Native),
    Ethereum(Ethereum),
}

/// Why bytes are not a transaction.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TxError {
    #[error(transparent)]
    Rlp(#[from] RlpError),
    #[error(transparent)]
    Key(#[from] KeyError),
    #[error("undefined tx type")]
    UndefinedType,
    #[error("invalid transaction v, r, s values")]
    InvalidSignature,
    #[error("invalid sender")]
    InvalidSender,
}

const N: [u8; 32] = [
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
];
const HALF_N: [u8; 32] = [
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
];

impl Transaction {
    /// A transaction from one of the builders (`ValueTransfer`, `AccountUpdate`, ...).
    pub fn of(t: impl Into<Transaction>) -> Transaction {
        t.into()
    }

    /// The type as the RPC's `typeInt`: 0, a native code, or 0x7801/0x7802.
    pub fn type_code(&self) -> u16 {
        match self {
            Transaction::Legacy(_) => 0,
            Transaction::Native(t) => u16::from(t.type_code()),
            Transaction::Ethereum(t) => t.type_int(),
        }
    }

    /// The native transaction, if this is one.
    pub fn native(&self) -> Option<&Native> {
        match self {
            Transaction::Native(t) => Some(t),
            _ => None,
        }
    }

    /// The base of a native transaction.
    pub fn base(&self) -> Option<Base> {
        self.native().map(|t| t.base)
    }

    /// The sender's nonce the transaction carries.
    pub fn nonce(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => t.nonce,
            Transaction::Native(t) => t.nonce,
            Transaction::Ethereum(t) => t.nonce,
        }
    }

    /// The gas limit.
    pub fn gas(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => t.gas,
            Transaction::Native(t) => t.gas,
            Transaction::Ethereum(t) => t.gas,
        }
    }

    /// The gas price (an EIP-1559 transaction's fee cap).
    pub fn gas_price(&self) -> U256 {
        match self {
            Transaction::Legacy(t) => t.gas_price,
            Transaction::Native(t) => t.gas_price,
            Transaction::Ethereum(t) => t.gas_fee_cap,
        }
    }

    /// The recipient: `None` for a contract creation and for the types without one.
    pub fn to(&self) -> Option<Address> {
        match self {
            Transaction::Legacy(t) => t.to,
            Transaction::Native(t) => t.to,
            Transaction::Ethereum(t) => t.to,
        }
    }

    /// The value sent (zero for the types without one).
    pub fn value(&self) -> U256 {
        match self {
            Transaction::Legacy(t) => t.value,
            Transaction::Native(t) => t.value,
            Transaction::Ethereum(t) => t.value,
        }
    }

    /// The input: call data, creation code, a memo or anchored data (empty where none).
    pub fn input(&self) -> &[u8] {
        match self {
            Transaction::Legacy(t) => &t.input,
            Transaction::Native(t) => &t.input,
            Transaction::Ethereum(t) => &t.input,
        }
    }

    /// The `from` field of a native transaction; `None` where the sender is recovered.
    pub fn from(&self) -> Option<Address> {
        self.native().map(|t| t.from)
    }

    /// The fee payer of a fee-delegated transaction.
    pub fn fee_payer(&self) -> Option<Address> {
        self.native()
            .filter(|t| t.is_delegated())
            .map(|t| t.fee_payer)
    }

    /// The fee payer's share of the fee in percent (0 unless fee-delegated).
    pub fn fee_payer_percent(&self) -> u8 {
        self.native().map_or(0, Native::fee_payer_percent)
    }

    /// The key an account update installs.
    pub fn account_update_key(&self) -> Option<&AccountKey> {
        self.native().and_then(|t| t.key.as_ref())
    }

    /// The role of the sender's key that must sign.
    pub fn role(&self) -> Role {
        match self.base() {
            Some(Base::AccountUpdate) => Role::AccountUpdate,
            _ => Role::Transaction,
        }
    }

    /// Sets the nonce (an unsigned transaction being filled in).
    pub fn set_nonce(&mut self, nonce: u64) {
        match self {
            Transaction::Legacy(t) => t.nonce = nonce,
            Transaction::Native(t) => t.nonce = nonce,
            Transaction::Ethereum(t) => t.nonce = nonce,
        }
    }

    /// Sets the gas limit (an unsigned transaction being filled in).
    pub fn set_gas(&mut self, gas: u64) {
        match self {
            Transaction::Legacy(t) => t.gas = gas,
            Transaction::Native(t) => t.gas = gas,
            Transaction::Ethereum(t) => t.gas = gas,
        }
    }

    /// Whether this transaction creates a contract.
    pub fn is_create(&self) -> bool {
        match self {
            Transaction::Legacy(t) => t.to.is_none(),
            Transaction::Native(t) => t.base == Base::SmartContractDeploy,
            Transaction::Ethereum(t) => t.to.is_none(),
        }
    }

    /// The name of the type (the RPC `type` string).
    pub fn type_name(&self) -> &'static str {
        match self {
            Transaction::Legacy(_) => "TxTypeLegacyTransaction",
            Transaction::Native(t) => super::native::type_name(t.type_code()),
            Transaction::Ethereum(t) => t.type_name(),
        }
    }

    /// The hash a signer signs for `chain_id` (EIP-155 form for legacy).
    pub fn sig_hash(&self, chain_id: u64) -> [u8; 32] {
        match self {
            Transaction::Legacy(t) => {
                let mut p = Vec::new();
                t.common_fields(&mut p);
                put_u64(&mut p, chain_id);
                put_u64(&mut p, 0);
                put_u64(&mut p, 0);
                keccak256(&list(&p))
            }
            Transaction::Native(t) => t.sig_hash(chain_id),
            Transaction::Ethereum(t) => t.sig_hash(chain_id),
        }
    }

    /// Signs with `key` for `chain_id`. A native transaction gets this signature added to its
    /// list; a legacy or Ethereum one has it replaced (an Ethereum one's V is the y-parity,
    /// and its chain id is set when it had none).
    pub fn sign(&mut self, key: &SecretKey, chain_id: u64) {
        if let Transaction::Ethereum(t) = self {
            if t.chain_id == 0 {
                t.chain_id = chain_id;
            }
            let raw = key.sign_hash(&t.sig_hash(chain_id));
            t.signature = Some(Signature {
                v: u64::from(raw[64]),
                r: raw[..32].try_into().expect("32 bytes"),
                s: raw[32..64].try_into().expect("32 bytes"),
            });
            return;
        }
        let sig = Signature::make(key, &self.sig_hash(chain_id), chain_id);
        match self {
            Transaction::Legacy(t) => t.signature = Some(sig),
            Transaction::Native(t) => t.signatures.push(sig),
            Transaction::Ethereum(_) => unreachable!("signed above"),
        }
    }

    /// Signs as the fee payer with `key` for `chain_id` (the fee payer's address must be set):
    /// the signature is added to the fee payer's list. False when not fee-delegated.
    pub fn sign_as_fee_payer(&mut self, key: &SecretKey, chain_id: u64) -> bool {
        match self {
            Transaction::Native(t) if t.is_delegated() => {
                let sig = Signature::make(key, &t.fee_payer_sig_hash(chain_id), chain_id);
                t.fee_payer_signatures.push(sig);
                true
            }
            _ => false,
        }
    }

    /// The raw bytes: RLP of the fields, after the type byte(s) for a typed transaction.
    pub fn encode(&self) -> Vec<u8> {
        match self {
            Transaction::Legacy(t) => {
                let mut p = Vec::new();
                t.common_fields(&mut p);
                match &t.signature {
                    Some(s) => s.encode_into(&mut p),
                    None => {
                        put_u64(&mut p, 0);
                        put_u64(&mut p, 0);
                        put_u64(&mut p, 0);
                    }
                }
                list(&p)
            }
            Transaction::Native(t) => t.encode(),
            Transaction::Ethereum(t) => t.encode(),
        }
    }

    /// The transaction hash: `keccak256(raw)`, of Ethereum's own encoding for its types.
    pub fn hash(&self) -> [u8; 32] {
        match self {
            Transaction::Ethereum(t) => t.hash(),
            _ => keccak256(&self.encode()),
        }
    }

    /// The sender transaction hash: without the fee payer's part for a fee-delegated
    /// transaction, else the transaction hash.
    pub fn sender_tx_hash(&self) -> [u8; 32] {
        match self {
            Transaction::Native(t) if t.is_delegated() => t.sender_tx_hash(),
            _ => self.hash(),
        }
    }

    /// Decodes raw bytes; every byte must be used. Checks the ranges of the sender's
    /// signatures (reference 3.5), not who signed; a fee payer's signatures are checked when
    /// recovered ([`Transaction::recovered_fee_payer`]), as the reference's decoder leaves them.
    pub fn decode(bytes: &[u8]) -> Result<Transaction, TxError> {
        let (&first, rest) = bytes.split_first().ok_or(RlpError::TooFew)?;
        let tx = if first >= 0xc0 {
            let mut r = ListReader::whole(bytes)?;
            let nonce = r.u64()?;
            let gas_price = r.u256()?;
            let gas = r.u64()?;
            let to = r.bytes()?;
            let to = if to.is_empty() {
                None
            } else {
                Some(super::native::address(to)?)
            };
            let value = r.u256()?;
            let input = r.bytes()?.to_vec();
            let sig = Signature::decode(&mut r)?;
            r.end()?;
            Transaction::Legacy(Legacy {
                nonce,
                gas_price,
                gas,
                to,
                value,
                input,
                signature: Some(sig),
            })
        } else if first == super::ethereum::ENVELOPE {
            let (&eth_type, body) = rest.split_first().ok_or(RlpError::TooFew)?;
            Transaction::Ethereum(Ethereum::decode(eth_type, body)?)
        } else {
            Transaction::Native(Native::decode(first, rest)?)
        };
        tx.check_signatures()?;
        Ok(tx)
    }

    /// Decodes Ethereum's own encoding of its typed transactions (`01 ||` or `02 || RLP`),
    /// and a legacy transaction; the reference's native types are not Ethereum's.
    pub fn decode_ethereum(bytes: &[u8]) -> Result<Transaction, TxError> {
        match bytes.first() {
            Some(&t @ (1 | 2)) => {
                let tx = Transaction::Ethereum(Ethereum::decode(t, &bytes[1..])?);
                tx.check_signatures()?;
                Ok(tx)
            }
            Some(b) if *b >= 0xc0 => Transaction::decode(bytes),
            Some(_) => Err(TxError::UndefinedType),
            None => Err(RlpError::TooFew.into()),
        }
    }

    /// The chain id the signatures carry (0 for an unprotected legacy one; an Ethereum
    /// transaction's field); `None` when unsigned.
    pub fn signature_chain_id(&self) -> Option<u64> {
        match self {
            Transaction::Legacy(t) => t.signature.as_ref().map(Signature::chain_id),
            Transaction::Native(t) => t.signatures.first().map(Signature::chain_id),
            Transaction::Ethereum(t) => t.signature.map(|_| t.chain_id),
        }
    }

    /// The sender's signatures.
    pub fn signatures(&self) -> Vec<Signature> {
        match self {
            Transaction::Legacy(t) => t.signature.into_iter().collect(),
            Transaction::Native(t) => t.signatures.clone(),
            Transaction::Ethereum(t) => t.signature.into_iter().collect(),
        }
    }

    /// The sender's signatures: at least one; 1 <= R, S < n; recovery id 0 or 1; one chain id
    /// for all. The fee payer's are not checked here, as the reference's decoder does not
    /// (it validates the embedded `TxSignatures`, the sender's, only): they are checked when
    /// the fee payer is recovered, so that the sender's half of a fee-delegated transaction,
    /// with a placeholder for the fee payer's signature, decodes.
    fn check_signatures(&self) -> Result<(), TxError> {
        if let Transaction::Ethereum(t) = self {
            return match &t.signature {
                Some(s) if in_range(&s.r) && in_range(&s.s) && s.v <= 1 => Ok(()),
                _ => Err(TxError::InvalidSignature),
            };
        }
        let sigs = self.signatures();
        let Some(first) = sigs.first().copied() else {
            return Err(TxError::InvalidSignature);
        };
        for s in &sigs {
            if !in_range(&s.r) || !in_range(&s.s) || s.recovery_id().is_none_or(|id| id > 1) {
                return Err(TxError::InvalidSignature);
            }
            if self.type_code() != 0 && (s.v == 27 || s.v == 28) {
                return Err(TxError::InvalidSignature);
            }
            if s.chain_id() != first.chain_id() {
                return Err(TxError::InvalidSignature);
            }
        }
        Ok(())
    }

    /// The addresses that signed (one per signature). Fails when one does not recover.
    pub fn signers(&self) -> Result<Vec<Address>, TxError> {
        Ok(self.recovered()?.into_iter().map(|s| s.address).collect())
    }

    /// The signers (address and public key, one per signature), recovered from the signing
    /// hash for the chain id the signatures carry: what an account key is checked against.
    /// A high S is refused, as the reference's sender recovery does.
    pub fn recovered(&self) -> Result<Vec<Signer>, TxError> {
        let chain_id = self.signature_chain_id().unwrap_or(0);
        let hash = match self {
            Transaction::Legacy(t) if chain_id == 0 => {
                let mut p = Vec::new();
                t.common_fields(&mut p);
                keccak256(&list(&p))
            }
            _ => self.sig_hash(chain_id),
        };
        let ethereum = matches!(self, Transaction::Ethereum(_));
        self.signatures()
            .iter()
            .map(|s| {
                let id = if ethereum {
                    u8::try_from(s.v).ok().filter(|v| *v <= 1)
                } else {
                    s.recovery_id()
                };
                recover(&hash, s, id.ok_or(TxError::InvalidSignature)?)
            })
            .collect()
    }

    /// The fee payer's signers, recovered from the fee payer's signing hash for the chain id
    /// of the sender's signatures; empty unless fee-delegated. A signature whose V is not
    /// `35 + 2 x chainId` plus 0 or 1, or whose R or S is out of range, fails with
    /// `invalid transaction v, r, s values` (the reference's `recoverPlainCommon`).
    pub fn recovered_fee_payer(&self) -> Result<Vec<Signer>, TxError> {
        let Transaction::Native(t) = self else {
            return Ok(Vec::new());
        };
        if !t.is_delegated() {
            return Ok(Vec::new());
        }
        let chain_id = self.signature_chain_id().unwrap_or(0);
        let hash = t.fee_payer_sig_hash(chain_id);
        let base = chain_id.checked_mul(2).and_then(|c| c.checked_add(35));
        t.fee_payer_signatures
            .iter()
            .map(|s| {
                let id = base
                    .and_then(|b| s.v.checked_sub(b))
                    .filter(|id| *id <= 1)
                    .ok_or(TxError::InvalidSignature)?;
                recover(&hash, s, id as u8)
            })
            .collect()
    }

    /// The part of the intrinsic gas a fee payer's presence adds (10,000, or 15,000 with a
    /// ratio), which the EVM does not count.
    pub fn delegation_gas(&self) -> u64 {
        match self.native().map(|t| t.fee_mode) {
            Some(FeeMode::Delegated) => TX_GAS_FEE_DELEGATED,
            Some(FeeMode::Ratio(_)) => TX_GAS_FEE_DELEGATED_WITH_RATIO,
            _ => 0,
        }
    }

    /// The intrinsic gas (Istanbul- and Shanghai-compatible forks active), before the
    /// signers' key-validation gas.
    pub fn intrinsic_gas(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => match t.to {
                Some(_) => payload_gas(TX_GAS, &t.input, false),
                None => payload_gas(TX_GAS_CONTRACT_CREATION, &t.input, true),
            },
            Transaction::Native(t) => {
                let base = match t.base {
                    Base::ValueTransfer | Base::Cancel => TX_GAS,
                    Base::ValueTransferMemo
                    | Base::SmartContractExecution
                    | Base::ChainDataAnchoring => payload_gas(TX_GAS, &t.input, false),
                    Base::AccountUpdate => TX_GAS + t.key.as_ref().map_or(0, key_creation_gas),
                    Base::SmartContractDeploy => {
                        let gas = TX_GAS_CONTRACT_CREATION
                            + if t.human_readable {
                                TX_GAS_HUMAN_READABLE
                            } else {
                                0
                            };
                        payload_gas(gas, &t.input, true)
                    }
                };
                base.saturating_add(self.delegation_gas())
            }
            Transaction::Ethereum(t) => {
                let base = match t.to {
                    Some(_) => payload_gas(TX_GAS, &t.input, false),
                    None => payload_gas(TX_GAS_CONTRACT_CREATION, &t.input, true),
                };
                base.saturating_add(t.access_list_gas())
            }
        }
    }
}

/// 1 <= x < n.
fn in_range(x: &[u8; 32]) -> bool {
    x.iter().any(|&b| b != 0) && x < &N
}

/// Recovers the signer of `hash` from `s` with recovery id `id`; R or S out of range and a
/// high S are refused (`invalid transaction v, r, s values`).
fn recover(hash: &[u8; 32], s: &Signature, id: u8) -> Result<Signer, TxError> {
    static SECP: std::sync::LazyLock<secp256k1::Secp256k1<secp256k1::VerifyOnly>> =
        std::sync::LazyLock::new(secp256k1::Secp256k1::verification_only);
    if !in_range(&s.r) || !in_range(&s.s) || s.s > HALF_N {
        return Err(TxError::InvalidSignature);
    }
    let mut rs = [0u8; 64];
    rs[..32].copy_from_slice(&s.r);
    rs[32..].copy_from_slice(&s.s);
    let id = secp256k1::ecdsa::RecoveryId::from_i32(i32::from(id))
        .map_err(|_| TxError::InvalidSignature)?;
    let sig = secp256k1::ecdsa::RecoverableSignature::from_compact(&rs, id)
        .map_err(|_| TxError::InvalidSignature)?;
    let pk = SECP
        .recover_ecdsa(&secp256k1::Message::from_digest(*hash), &sig)
        .map_err(|_| TxError::InvalidSender)?;
    let xy: [u8; 64] = pk.serialize_uncompressed()[1..]
        .try_into()
        .expect("64 bytes");
    Ok(Signer {
        address: Address::from_public_xy(&xy),
        key: pk.serialize(),
    })
}

/// `base` plus 100 gas per byte of `input` and, for a contract creation, 2 per 32-byte word
/// of its code (the reference's `IntrinsicGasPayload` with Istanbul and Shanghai active).
pub fn payload_gas(base: u64, input: &[u8], create: bool) -> u64 {
    let len = input.len() as u64;
    let mut gas = base.saturating_add(TX_DATA_GAS.saturating_mul(len));
    if create {
        gas = gas.saturating_add(INIT_CODE_WORD_GAS * len.div_ceil(32));
    }
    gas
}

/// The creation gas of a key an account update installs (reference 7.5).
pub fn key_creation_gas(key: &AccountKey) -> u64 {
    match key {
        AccountKey::Nil | AccountKey::Legacy | AccountKey::Fail => 0,
        AccountKey::Public(_) => TX_ACCOUNT_CREATION_GAS_PER_KEY,
        AccountKey::WeightedMultisig { keys, .. } => {
            TX_ACCOUNT_CREATION_GAS_PER_KEY * keys.len() as u64
        }
        AccountKey::RoleBased(roles) => roles.iter().map(key_creation_gas).sum(),
    }
}

impl Legacy {
    /// nonce, gasPrice, gas, to, value, input: the fields every legacy form starts with.
    fn common_fields(&self, p: &mut Vec<u8>) {
        put_u64(p, self.nonce);
        put_uint(p, &self.gas_price);
        put_u64(p, self.gas);
        put_bytes(p, self.to.as_ref().map_or(&[][..], |a| &a.0[..]));
        put_uint(p, &self.value);
        put_bytes(p, &self.input);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signed(chain_id: u64) -> Native {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut tx = Transaction::of(ValueTransfer {
            nonce: 0,
            gas_price: [0; 32],
            gas: 21_000,
            to: Address([0x35; 20]),
            value: [0; 32],
            from: key.address(),
            signatures: Vec::new(),
        });
        tx.sign(&key, chain_id);
        match tx {
            Transaction::Native(t) => t,
            _ => unreachable!(),
        }
    }

    fn decode_with(f: impl FnOnce(&mut Native)) -> Result<Transaction, TxError> {
        let mut t = signed(1000);
        f(&mut t);
        Transaction::decode(&Transaction::Native(t).encode())
    }

    /// Reference 3.5: the checks made when a transaction is decoded.
    #[test]
    fn signatures_out_of_range_are_refused() {
        let bad = Err(TxError::InvalidSignature);
        assert!(decode_with(|_| {}).is_ok());
        assert_eq!(decode_with(|t| t.signatures[0].r = [0; 32]), bad);
        assert_eq!(decode_with(|t| t.signatures[0].s = [0; 32]), bad);
        assert_eq!(decode_with(|t| t.signatures[0].r = N), bad);
        assert_eq!(decode_with(|t| t.signatures[0].s = [0xff; 32]), bad);
        assert_eq!(
            decode_with(|t| t.signatures[0].v = 27),
            bad,
            "typed: always protected"
        );
        let other_chain = signed(1001).signatures[0];
        assert_eq!(
            decode_with(|t| t.signatures.push(other_chain)),
            bad,
            "two chain ids"
        );
        let high_s = decode_with(|t| {
            // n - s: the same signature with a high S, which recovery refuses.
            let mut borrow = 0i16;
            for i in (0..32).rev() {
                let mut d = i16::from(N[i]) - i16::from(t.signatures[0].s[i]) - borrow;
                borrow = i16::from(d < 0);
                if d < 0 {
                    d += 256;
                }
                t.signatures[0].s[i] = d as u8;
            }
        })
        .unwrap();
        assert_eq!(high_s.recovered(), Err(TxError::InvalidSignature));
    }

    /// A fee-delegated transfer signed by 0x46..46 and its fee payer 0x47..47, for chain
    /// 1000, its fee payer's signatures changed by `f`, encoded and decoded again.
    fn delegated_with(f: impl FnOnce(&mut Vec<Signature>)) -> Result<Transaction, TxError> {
        let (sender, payer) = (
            SecretKey::from_slice(&[0x46; 32]).unwrap(),
            SecretKey::from_slice(&[0x47; 32]).unwrap(),
        );
        let mut n = Native::new(Base::ValueTransfer, FeeMode::Delegated, sender.address());
        (n.gas, n.to) = (31_000, Some(Address([0x35; 20])));
        n.fee_payer = payer.address();
        let mut tx = Transaction::Native(n);
        tx.sign(&sender, 1000);
        assert!(tx.sign_as_fee_payer(&payer, 1000));
        let Transaction::Native(mut n) = tx else {
            unreachable!()
        };
        f(&mut n.fee_payer_signatures);
        Transaction::decode(&Transaction::Native(n).encode())
    }

    /// The reference's decoder checks the sender's signatures only; a fee payer's are
    /// checked when recovered, V against the chain id of the sender's (`recoverPlainCommon`).
    #[test]
    fn fee_payer_signatures_are_checked_when_recovered() {
        let bad = Err(TxError::InvalidSignature);
        let payers = |t: Result<Transaction, TxError>| {
            t.unwrap()
                .recovered_fee_payer()
                .map(|s| s.into_iter().map(|s| s.address).collect::<Vec<_>>())
        };
        let payer = SecretKey::from_slice(&[0x47; 32]).unwrap().address();
        assert_eq!(payers(delegated_with(|_| {})), Ok(vec![payer]));
        // caver's placeholder before the fee payer signs: V 1, R = S = 0.
        let placeholder = Signature {
            v: 1,
            r: [0; 32],
            s: [0; 32],
        };
        assert_eq!(payers(delegated_with(|s| *s = vec![placeholder])), bad);
        assert_eq!(payers(delegated_with(|s| s[0].r = [0; 32])), bad, "R = 0");
        assert_eq!(payers(delegated_with(|s| s[0].s = [0; 32])), bad, "S = 0");
        assert_eq!(payers(delegated_with(|s| s[0].r = N)), bad, "R = n");
        assert_eq!(
            payers(delegated_with(|s| s[0].s = [0xff; 32])),
            bad,
            "S > n"
        );
        assert_eq!(payers(delegated_with(|s| s[0].s = N)), bad, "S = n, high");
        // V for chain 1001 (2037 + parity) while the sender's is for 1000.
        assert_eq!(
            payers(delegated_with(|s| s[0].v += 2)),
            bad,
            "another chain id"
        );
        assert_eq!(
            payers(delegated_with(|s| s[0].v = 27)),
            bad,
            "unprotected V"
        );
        assert_eq!(payers(delegated_with(Vec::clear)), Ok(vec![]));
    }

    #[test]
    fn malformed_fields_are_refused() {
        let good = Transaction::Native(signed(1000)).encode();
        // The `to` address (after nonce 80, gasPrice 80, gas 82 5208) as 19 and 21 bytes.
        let at = 1 + 2 + 1 + 1 + 3; // type, list header (f8 len), nonce, gas price, gas
        assert_eq!(good[1], 0xf8);
        assert_eq!(good[at], 0x94, "a 20-byte string");
        for (header, len) in [(0x93u8, 19usize), (0x95, 21)] {
            let mut b = good[..at].to_vec();
            b.push(header);
            b.extend(vec![0x35; len]);
            b.extend_from_slice(&good[at + 21..]);
            b[2] = (b.len() - 3) as u8;
            assert!(
                matches!(Transaction::decode(&b), Err(TxError::Rlp(_))),
                "{len} bytes"
            );
        }
        // A non-canonical integer: nonce 0 written as 0x00.
        let mut b = good.clone();
        assert_eq!(b[3], 0x80);
        b[3] = 0x00;
        assert!(matches!(Transaction::decode(&b), Err(TxError::Rlp(_))));
    }
}
