//! Transactions of the types this chain carries (reference sections 2-6): legacy, value
//! transfer (0x08), account update (0x20), smart contract deploy (0x28) and smart contract
//! execution (0x30): their signing hash with the chain id, V, the raw encoding and its
//! decoder (a pure function of the bytes that never panics), the transaction hash and the
//! sender transaction hash, and the intrinsic gas.

use super::account_key::{AccountKey, KeyError, Signer};
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

    fn encode_into(&self, out: &mut Vec<u8>) {
        put_u64(out, self.v);
        put_uint(out, &self.r);
        put_uint(out, &self.s);
    }

    fn decode(r: &mut ListReader<'_>) -> Result<Signature, RlpError> {
        let v = r.u64()?;
        let sig_r = r.u256()?;
        let s = r.u256()?;
        Ok(Signature { v, r: sig_r, s })
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

/// A value transfer (type 0x08).
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

/// An account update (type 0x20).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountUpdate {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    pub from: Address,
    pub key: AccountKey,
    pub signatures: Vec<Signature>,
}

/// A smart contract deploy (type 0x28).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmartContractDeploy {
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    /// Always `None` in a transaction the reference accepts (`contract deploy transaction
    /// can't have a recipient address`); carried so that every byte decodes back.
    pub to: Option<Address>,
    pub value: U256,
    pub from: Address,
    pub input: Vec<u8>,
    /// Always false where accepted (`Human-readable address is not supported now`).
    pub human_readable: bool,
    /// 0, the EVM, where accepted.
    pub code_format: u8,
    pub signatures: Vec<Signature>,
}

/// A smart contract execution (type 0x30).
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

/// A transaction of one of the types this chain carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transaction {
    Legacy(Legacy),
    ValueTransfer(ValueTransfer),
    AccountUpdate(AccountUpdate),
    SmartContractDeploy(SmartContractDeploy),
    SmartContractExecution(SmartContractExecution),
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

fn address(b: &[u8]) -> Result<Address, RlpError> {
    let a: [u8; 20] = b
        .try_into()
        .map_err(|_| RlpError::Rlp(format!("an address is 20 bytes, not {}", b.len())))?;
    Ok(Address(a))
}

fn signature_list(sigs: &[Signature]) -> Vec<u8> {
    let mut payload = Vec::new();
    for s in sigs {
        let mut one = Vec::new();
        s.encode_into(&mut one);
        payload.extend_from_slice(&list(&one));
    }
    list(&payload)
}

/// `keccak256(RLP([inner as a byte string, chainId, 0, 0]))`: the signing hash of a native
/// typed transaction.
fn typed_sig_hash(inner: &[u8], chain_id: u64) -> [u8; 32] {
    let mut outer = Vec::with_capacity(inner.len() + 16);
    put_bytes(&mut outer, inner);
    put_u64(&mut outer, chain_id);
    put_u64(&mut outer, 0);
    put_u64(&mut outer, 0);
    keccak256(&list(&outer))
}

impl Transaction {
    /// The type code: 0, 0x08 or 0x20.
    pub fn type_code(&self) -> u8 {
        match self {
            Transaction::Legacy(_) => 0,
            Transaction::ValueTransfer(_) => TYPE_VALUE_TRANSFER,
            Transaction::AccountUpdate(_) => TYPE_ACCOUNT_UPDATE,
            Transaction::SmartContractDeploy(_) => TYPE_SMART_CONTRACT_DEPLOY,
            Transaction::SmartContractExecution(_) => TYPE_SMART_CONTRACT_EXECUTION,
        }
    }

    /// The sender's nonce the transaction carries.
    pub fn nonce(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => t.nonce,
            Transaction::ValueTransfer(t) => t.nonce,
            Transaction::AccountUpdate(t) => t.nonce,
            Transaction::SmartContractDeploy(t) => t.nonce,
            Transaction::SmartContractExecution(t) => t.nonce,
        }
    }

    /// The gas limit.
    pub fn gas(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => t.gas,
            Transaction::ValueTransfer(t) => t.gas,
            Transaction::AccountUpdate(t) => t.gas,
            Transaction::SmartContractDeploy(t) => t.gas,
            Transaction::SmartContractExecution(t) => t.gas,
        }
    }

    /// The gas price.
    pub fn gas_price(&self) -> U256 {
        match self {
            Transaction::Legacy(t) => t.gas_price,
            Transaction::ValueTransfer(t) => t.gas_price,
            Transaction::AccountUpdate(t) => t.gas_price,
            Transaction::SmartContractDeploy(t) => t.gas_price,
            Transaction::SmartContractExecution(t) => t.gas_price,
        }
    }

    /// The recipient: `None` for a contract creation and for an account update.
    pub fn to(&self) -> Option<Address> {
        match self {
            Transaction::Legacy(t) => t.to,
            Transaction::ValueTransfer(t) => Some(t.to),
            Transaction::AccountUpdate(_) => None,
            Transaction::SmartContractDeploy(t) => t.to,
            Transaction::SmartContractExecution(t) => Some(t.to),
        }
    }

    /// The value sent (zero for an account update).
    pub fn value(&self) -> U256 {
        match self {
            Transaction::Legacy(t) => t.value,
            Transaction::ValueTransfer(t) => t.value,
            Transaction::AccountUpdate(_) => [0; 32],
            Transaction::SmartContractDeploy(t) => t.value,
            Transaction::SmartContractExecution(t) => t.value,
        }
    }

    /// The input: call data, or a contract's creation code (empty for the types without).
    pub fn input(&self) -> &[u8] {
        match self {
            Transaction::Legacy(t) => &t.input,
            Transaction::SmartContractDeploy(t) => &t.input,
            Transaction::SmartContractExecution(t) => &t.input,
            Transaction::ValueTransfer(_) | Transaction::AccountUpdate(_) => &[],
        }
    }

    /// The `from` field of a typed transaction; `None` for legacy (its sender is recovered).
    pub fn from(&self) -> Option<Address> {
        match self {
            Transaction::Legacy(_) => None,
            Transaction::ValueTransfer(t) => Some(t.from),
            Transaction::AccountUpdate(t) => Some(t.from),
            Transaction::SmartContractDeploy(t) => Some(t.from),
            Transaction::SmartContractExecution(t) => Some(t.from),
        }
    }

    /// Sets the nonce (an unsigned transaction being filled in).
    pub fn set_nonce(&mut self, nonce: u64) {
        match self {
            Transaction::Legacy(t) => t.nonce = nonce,
            Transaction::ValueTransfer(t) => t.nonce = nonce,
            Transaction::AccountUpdate(t) => t.nonce = nonce,
            Transaction::SmartContractDeploy(t) => t.nonce = nonce,
            Transaction::SmartContractExecution(t) => t.nonce = nonce,
        }
    }

    /// Sets the gas limit (an unsigned transaction being filled in).
    pub fn set_gas(&mut self, gas: u64) {
        match self {
            Transaction::Legacy(t) => t.gas = gas,
            Transaction::ValueTransfer(t) => t.gas = gas,
            Transaction::AccountUpdate(t) => t.gas = gas,
            Transaction::SmartContractDeploy(t) => t.gas = gas,
            Transaction::SmartContractExecution(t) => t.gas = gas,
        }
    }

    /// Whether this transaction creates a contract.
    pub fn is_create(&self) -> bool {
        match self {
            Transaction::Legacy(t) => t.to.is_none(),
            Transaction::SmartContractDeploy(_) => true,
            _ => false,
        }
    }

    /// The name of the type (the RPC `type` string).
    pub fn type_name(&self) -> &'static str {
        match self {
            Transaction::Legacy(_) => "TxTypeLegacyTransaction",
            Transaction::ValueTransfer(_) => "TxTypeValueTransfer",
            Transaction::AccountUpdate(_) => "TxTypeAccountUpdate",
            Transaction::SmartContractDeploy(_) => "TxTypeSmartContractDeploy",
            Transaction::SmartContractExecution(_) => "TxTypeSmartContractExecution",
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
            Transaction::ValueTransfer(t) => {
                let mut p = Vec::new();
                put_u64(&mut p, u64::from(TYPE_VALUE_TRANSFER));
                put_u64(&mut p, t.nonce);
                put_uint(&mut p, &t.gas_price);
                put_u64(&mut p, t.gas);
                put_bytes(&mut p, &t.to.0);
                put_uint(&mut p, &t.value);
                put_bytes(&mut p, &t.from.0);
                typed_sig_hash(&list(&p), chain_id)
            }
            Transaction::AccountUpdate(t) => {
                let mut p = Vec::new();
                put_u64(&mut p, u64::from(TYPE_ACCOUNT_UPDATE));
                put_u64(&mut p, t.nonce);
                put_uint(&mut p, &t.gas_price);
                put_u64(&mut p, t.gas);
                put_bytes(&mut p, &t.from.0);
                put_bytes(&mut p, &t.key.encode());
                typed_sig_hash(&list(&p), chain_id)
            }
            Transaction::SmartContractDeploy(t) => {
                let mut p = Vec::with_capacity(t.input.len() + 96);
                put_u64(&mut p, u64::from(TYPE_SMART_CONTRACT_DEPLOY));
                t.fields(&mut p);
                typed_sig_hash(&list(&p), chain_id)
            }
            Transaction::SmartContractExecution(t) => {
                let mut p = Vec::with_capacity(t.input.len() + 96);
                put_u64(&mut p, u64::from(TYPE_SMART_CONTRACT_EXECUTION));
                t.fields(&mut p);
                typed_sig_hash(&list(&p), chain_id)
            }
        }
    }

    /// Signs with `key` for `chain_id`: V = recid + 35 + 2 x chainId. A typed transaction gets
    /// this signature added to its list; a legacy one has it replaced.
    pub fn sign(&mut self, key: &SecretKey, chain_id: u64) {
        let hash = self.sig_hash(chain_id);
        let raw = key.sign_hash(&hash);
        let sig = Signature {
            v: u64::from(raw[64]) + 35 + 2 * chain_id,
            r: raw[..32].try_into().expect("32 bytes"),
            s: raw[32..64].try_into().expect("32 bytes"),
        };
        match self {
            Transaction::Legacy(t) => t.signature = Some(sig),
            Transaction::ValueTransfer(t) => t.signatures.push(sig),
            Transaction::AccountUpdate(t) => t.signatures.push(sig),
            Transaction::SmartContractDeploy(t) => t.signatures.push(sig),
            Transaction::SmartContractExecution(t) => t.signatures.push(sig),
        }
    }

    /// The raw bytes: RLP of the fields, after the type byte for a typed transaction.
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
            Transaction::ValueTransfer(t) => {
                let mut p = Vec::new();
                put_u64(&mut p, t.nonce);
                put_uint(&mut p, &t.gas_price);
                put_u64(&mut p, t.gas);
                put_bytes(&mut p, &t.to.0);
                put_uint(&mut p, &t.value);
                put_bytes(&mut p, &t.from.0);
                p.extend_from_slice(&signature_list(&t.signatures));
                let mut out = vec![TYPE_VALUE_TRANSFER];
                out.extend_from_slice(&list(&p));
                out
            }
            Transaction::AccountUpdate(t) => {
                let mut p = Vec::new();
                put_u64(&mut p, t.nonce);
                put_uint(&mut p, &t.gas_price);
                put_u64(&mut p, t.gas);
                put_bytes(&mut p, &t.from.0);
                put_bytes(&mut p, &t.key.encode());
                p.extend_from_slice(&signature_list(&t.signatures));
                let mut out = vec![TYPE_ACCOUNT_UPDATE];
                out.extend_from_slice(&list(&p));
                out
            }
            Transaction::SmartContractDeploy(t) => {
                let mut p = Vec::with_capacity(t.input.len() + 160);
                t.fields(&mut p);
                p.extend_from_slice(&signature_list(&t.signatures));
                let mut out = vec![TYPE_SMART_CONTRACT_DEPLOY];
                out.extend_from_slice(&list(&p));
                out
            }
            Transaction::SmartContractExecution(t) => {
                let mut p = Vec::with_capacity(t.input.len() + 160);
                t.fields(&mut p);
                p.extend_from_slice(&signature_list(&t.signatures));
                let mut out = vec![TYPE_SMART_CONTRACT_EXECUTION];
                out.extend_from_slice(&list(&p));
                out
            }
        }
    }

    /// `keccak256(raw)`.
    pub fn hash(&self) -> [u8; 32] {
        keccak256(&self.encode())
    }

    /// The sender transaction hash: the transaction hash for these types (they are not
    /// fee-delegated).
    pub fn sender_tx_hash(&self) -> [u8; 32] {
        self.hash()
    }

    /// Decodes raw bytes; every byte must be used. Checks the signatures' ranges (reference
    /// 3.5), not who signed.
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
                Some(address(to)?)
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
        } else {
            let mut r = ListReader::whole(rest)?;
            match first {
                TYPE_VALUE_TRANSFER => {
                    let nonce = r.u64()?;
                    let gas_price = r.u256()?;
                    let gas = r.u64()?;
                    let to = address(r.bytes()?)?;
                    let value = r.u256()?;
                    let from = address(r.bytes()?)?;
                    let signatures = decode_signatures(&mut r)?;
                    r.end()?;
                    Transaction::ValueTransfer(ValueTransfer {
                        nonce,
                        gas_price,
                        gas,
                        to,
                        value,
                        from,
                        signatures,
                    })
                }
                TYPE_ACCOUNT_UPDATE => {
                    let nonce = r.u64()?;
                    let gas_price = r.u256()?;
                    let gas = r.u64()?;
                    let from = address(r.bytes()?)?;
                    let key = AccountKey::decode(r.bytes()?)?;
                    let signatures = decode_signatures(&mut r)?;
                    r.end()?;
                    Transaction::AccountUpdate(AccountUpdate {
                        nonce,
                        gas_price,
                        gas,
                        from,
                        key,
                        signatures,
                    })
                }
                TYPE_SMART_CONTRACT_DEPLOY => {
                    let nonce = r.u64()?;
                    let gas_price = r.u256()?;
                    let gas = r.u64()?;
                    let to = r.bytes()?;
                    let to = if to.is_empty() {
                        None
                    } else {
                        Some(address(to)?)
                    };
                    let value = r.u256()?;
                    let from = address(r.bytes()?)?;
                    let input = r.bytes()?.to_vec();
                    let human_readable = match r.u64()? {
                        0 => false,
                        1 => true,
                        n => return Err(RlpError::Rlp(format!("invalid boolean value {n}")).into()),
                    };
                    let code_format = u8::try_from(r.u64()?)
                        .map_err(|_| RlpError::Rlp("input string too long for uint8".into()))?;
                    let signatures = decode_signatures(&mut r)?;
                    r.end()?;
                    Transaction::SmartContractDeploy(SmartContractDeploy {
                        nonce,
                        gas_price,
                        gas,
                        to,
                        value,
                        from,
                        input,
                        human_readable,
                        code_format,
                        signatures,
                    })
                }
                TYPE_SMART_CONTRACT_EXECUTION => {
                    let nonce = r.u64()?;
                    let gas_price = r.u256()?;
                    let gas = r.u64()?;
                    let to = address(r.bytes()?)?;
                    let value = r.u256()?;
                    let from = address(r.bytes()?)?;
                    let input = r.bytes()?.to_vec();
                    let signatures = decode_signatures(&mut r)?;
                    r.end()?;
                    Transaction::SmartContractExecution(SmartContractExecution {
                        nonce,
                        gas_price,
                        gas,
                        to,
                        value,
                        from,
                        input,
                        signatures,
                    })
                }
                _ => return Err(TxError::UndefinedType),
            }
        };
        tx.check_signatures()?;
        Ok(tx)
    }

    /// The chain id the first signature carries (0 for an unprotected legacy one); `None`
    /// when unsigned.
    pub fn signature_chain_id(&self) -> Option<u64> {
        match self {
            Transaction::Legacy(t) => t.signature.as_ref().map(Signature::chain_id),
            _ => self.signatures().first().map(Signature::chain_id),
        }
    }

    fn signatures(&self) -> Vec<Signature> {
        match self {
            Transaction::Legacy(t) => t.signature.into_iter().collect(),
            Transaction::ValueTransfer(t) => t.signatures.clone(),
            Transaction::AccountUpdate(t) => t.signatures.clone(),
            Transaction::SmartContractDeploy(t) => t.signatures.clone(),
            Transaction::SmartContractExecution(t) => t.signatures.clone(),
        }
    }

    /// At least one signature; 1 <= R, S < n; recovery id 0 or 1; one chain id for all.
    fn check_signatures(&self) -> Result<(), TxError> {
        const N: [u8; 32] = [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c,
            0xd0, 0x36, 0x41, 0x41,
        ];
        let sigs = self.signatures();
        let Some(first) = sigs.first() else {
            return Err(TxError::InvalidSignature);
        };
        for s in &sigs {
            let in_range = |x: &[u8; 32]| x.iter().any(|&b| b != 0) && x < &N;
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
        static SECP: std::sync::LazyLock<secp256k1::Secp256k1<secp256k1::VerifyOnly>> =
            std::sync::LazyLock::new(secp256k1::Secp256k1::verification_only);
        const HALF_N: [u8; 32] = [
            0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xff, 0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46,
            0x68, 0x1b, 0x20, 0xa0,
        ];
        let sigs = self.signatures();
        let chain_id = sigs.first().map_or(0, Signature::chain_id);
        let hash = match self {
            Transaction::Legacy(t) if chain_id == 0 => {
                let mut p = Vec::new();
                t.common_fields(&mut p);
                keccak256(&list(&p))
            }
            _ => self.sig_hash(chain_id),
        };
        let msg = secp256k1::Message::from_digest(hash);
        sigs.iter()
            .map(|s| {
                if s.s > HALF_N {
                    return Err(TxError::InvalidSignature);
                }
                let mut rs = [0u8; 64];
                rs[..32].copy_from_slice(&s.r);
                rs[32..].copy_from_slice(&s.s);
                let id = s.recovery_id().ok_or(TxError::InvalidSignature)?;
                let id = secp256k1::ecdsa::RecoveryId::from_i32(i32::from(id))
                    .map_err(|_| TxError::InvalidSignature)?;
                let sig = secp256k1::ecdsa::RecoverableSignature::from_compact(&rs, id)
                    .map_err(|_| TxError::InvalidSignature)?;
                let pk = SECP
                    .recover_ecdsa(&msg, &sig)
                    .map_err(|_| TxError::InvalidSender)?;
                let xy: [u8; 64] = pk.serialize_uncompressed()[1..]
                    .try_into()
                    .expect("64 bytes");
                Ok(Signer {
                    address: Address::from_public_xy(&xy),
                    key: pk.serialize(),
                })
            })
            .collect()
    }

    /// The intrinsic gas (Istanbul-compatible fork active), before the sender's
    /// key-validation gas.
    pub fn intrinsic_gas(&self) -> u64 {
        match self {
            Transaction::Legacy(t) => match t.to {
                Some(_) => payload_gas(TX_GAS, &t.input, false),
                None => payload_gas(TX_GAS_CONTRACT_CREATION, &t.input, true),
            },
            Transaction::ValueTransfer(_) => TX_GAS,
            Transaction::AccountUpdate(t) => TX_GAS + key_creation_gas(&t.key),
            Transaction::SmartContractDeploy(t) => {
                payload_gas(TX_GAS_CONTRACT_CREATION, &t.input, true)
            }
            Transaction::SmartContractExecution(t) => payload_gas(TX_GAS, &t.input, false),
        }
    }
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

fn decode_signatures(r: &mut ListReader<'_>) -> Result<Vec<Signature>, RlpError> {
    let mut all = r.list()?;
    let mut out = Vec::new();
    while !all.is_empty() {
        let mut one = all.list()?;
        out.push(Signature::decode(&mut one)?);
        one.end()?;
    }
    Ok(out)
}

impl SmartContractDeploy {
    /// The fields after the type and before the signatures, as signed and as sent.
    fn fields(&self, p: &mut Vec<u8>) {
        put_u64(p, self.nonce);
        put_uint(p, &self.gas_price);
        put_u64(p, self.gas);
        put_bytes(p, self.to.as_ref().map_or(&[][..], |a| &a.0[..]));
        put_uint(p, &self.value);
        put_bytes(p, &self.from.0);
        put_bytes(p, &self.input);
        put_u64(p, u64::from(self.human_readable));
        put_u64(p, u64::from(self.code_format));
    }
}

impl SmartContractExecution {
    /// The fields after the type and before the signatures, as signed and as sent.
    fn fields(&self, p: &mut Vec<u8>) {
        put_u64(p, self.nonce);
        put_uint(p, &self.gas_price);
        put_u64(p, self.gas);
        put_bytes(p, &self.to.0);
        put_uint(p, &self.value);
        put_bytes(p, &self.from.0);
        put_bytes(p, &self.input);
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

    fn signed(chain_id: u64) -> ValueTransfer {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut tx = Transaction::ValueTransfer(ValueTransfer {
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
            Transaction::ValueTransfer(t) => t,
            _ => unreachable!(),
        }
    }

    fn decode_with(f: impl FnOnce(&mut ValueTransfer)) -> Result<Transaction, TxError> {
        let mut t = signed(1000);
        f(&mut t);
        Transaction::decode(&Transaction::ValueTransfer(t).encode())
    }

    /// Reference 3.5: the checks made when a transaction is decoded.
    #[test]
    fn signatures_out_of_range_are_refused() {
        const N: [u8; 32] = [
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c,
            0xd0, 0x36, 0x41, 0x41,
        ];
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

    #[test]
    fn malformed_fields_are_refused() {
        let good = Transaction::ValueTransfer(signed(1000)).encode();
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
