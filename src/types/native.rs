//! The reference's own typed transactions (type codes 0x08-0x4a): one shape for all of them.
//! A type is a base (its code a multiple of 8: value transfer, memo, account update, deploy,
//! execution, cancel, anchoring) and a fee mode (offset 0: the sender pays; 1: a fee payer
//! pays; 2: a fee payer pays `feeRatio` percent). The body is the base's fields (with the
//! ratio after them, or before `codeFormat` for a deploy), the sender's signatures and, when
//! delegated, the fee payer and the fee payer's signatures (the reference's
//! `tx_internal_data_*.go`, one file per type).

use super::account_key::AccountKey;
use super::rlp::{list, put_bytes, put_u64, put_uint, ListReader, RlpError};
use super::transaction::{Signature, TxError, U256};
use crate::crypto::{keccak256, Address};

/// The base of a native type; its code is a multiple of 8.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Base {
    ValueTransfer,
    ValueTransferMemo,
    AccountUpdate,
    SmartContractDeploy,
    SmartContractExecution,
    Cancel,
    ChainDataAnchoring,
}

impl Base {
    pub const ALL: [Base; 7] = [
        Base::ValueTransfer,
        Base::ValueTransferMemo,
        Base::AccountUpdate,
        Base::SmartContractDeploy,
        Base::SmartContractExecution,
        Base::Cancel,
        Base::ChainDataAnchoring,
    ];

    pub fn code(self) -> u8 {
        match self {
            Base::ValueTransfer => 0x08,
            Base::ValueTransferMemo => 0x10,
            Base::AccountUpdate => 0x20,
            Base::SmartContractDeploy => 0x28,
            Base::SmartContractExecution => 0x30,
            Base::Cancel => 0x38,
            Base::ChainDataAnchoring => 0x48,
        }
    }

    /// Which fields of the generic shape the base has: (to, value, input).
    fn has(self) -> (bool, bool, bool) {
        match self {
            Base::ValueTransfer => (true, true, false),
            Base::ValueTransferMemo | Base::SmartContractDeploy | Base::SmartContractExecution => {
                (true, true, true)
            }
            Base::AccountUpdate | Base::Cancel => (false, false, false),
            Base::ChainDataAnchoring => (false, false, true),
        }
    }
}

/// Who pays the fee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FeeMode {
    /// The sender (type offset 0).
    Sender,
    /// The fee payer, all of it (offset 1).
    Delegated,
    /// The fee payer, this percentage of it; the sender the rest (offset 2).
    Ratio(u8),
}

impl FeeMode {
    fn offset(self) -> u8 {
        match self {
            FeeMode::Sender => 0,
            FeeMode::Delegated => 1,
            FeeMode::Ratio(_) => 2,
        }
    }
}

/// The (base, fee mode) of a native type code, the ratio left 0; `None` for any other code
/// (0x18 account creation and 0x40 batch are defined but not built by the reference either).
pub fn split_code(code: u8) -> Option<(Base, FeeMode)> {
    let base = Base::ALL.into_iter().find(|b| b.code() == code & !7)?;
    let mode = match code & 7 {
        0 => FeeMode::Sender,
        1 => FeeMode::Delegated,
        2 => FeeMode::Ratio(0),
        _ => return None,
    };
    Some((base, mode))
}

/// The RPC `type` string of a native type code.
pub fn type_name(code: u8) -> &'static str {
    match code {
        0x08 => "TxTypeValueTransfer",
        0x09 => "TxTypeFeeDelegatedValueTransfer",
        0x0a => "TxTypeFeeDelegatedValueTransferWithRatio",
        0x10 => "TxTypeValueTransferMemo",
        0x11 => "TxTypeFeeDelegatedValueTransferMemo",
        0x12 => "TxTypeFeeDelegatedValueTransferMemoWithRatio",
        0x18 => "TxTypeAccountCreation",
        0x20 => "TxTypeAccountUpdate",
        0x21 => "TxTypeFeeDelegatedAccountUpdate",
        0x22 => "TxTypeFeeDelegatedAccountUpdateWithRatio",
        0x28 => "TxTypeSmartContractDeploy",
        0x29 => "TxTypeFeeDelegatedSmartContractDeploy",
        0x2a => "TxTypeFeeDelegatedSmartContractDeployWithRatio",
        0x30 => "TxTypeSmartContractExecution",
        0x31 => "TxTypeFeeDelegatedSmartContractExecution",
        0x32 => "TxTypeFeeDelegatedSmartContractExecutionWithRatio",
        0x38 => "TxTypeCancel",
        0x39 => "TxTypeFeeDelegatedCancel",
        0x3a => "TxTypeFeeDelegatedCancelWithRatio",
        0x40 => "TxTypeBatch",
        0x48 => "TxTypeChainDataAnchoring",
        0x49 => "TxTypeFeeDelegatedChainDataAnchoring",
        0x4a => "TxTypeFeeDelegatedChainDataAnchoringWithRatio",
        _ => "UndefinedTxType",
    }
}

/// A native typed transaction. Fields a base does not have are left empty (`to` None, value
/// zero, input empty, key None, fee payer zero with no signatures when not delegated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Native {
    pub base: Base,
    pub fee_mode: FeeMode,
    pub nonce: u64,
    pub gas_price: U256,
    pub gas: u64,
    /// A deploy's is `None` wherever accepted (`contract deploy transaction can't have a
    /// recipient address`) but is carried so that every byte decodes back.
    pub to: Option<Address>,
    pub value: U256,
    pub from: Address,
    /// A memo, call data, creation code or anchored data.
    pub input: Vec<u8>,
    /// The key an account update installs.
    pub key: Option<AccountKey>,
    /// A deploy's; false wherever accepted.
    pub human_readable: bool,
    /// A deploy's; 0 (the EVM) wherever accepted.
    pub code_format: u8,
    pub signatures: Vec<Signature>,
    pub fee_payer: Address,
    pub fee_payer_signatures: Vec<Signature>,
}

impl Native {
    /// An unsigned transaction of `base` with every field empty.
    pub fn new(base: Base, fee_mode: FeeMode, from: Address) -> Native {
        Native {
            base,
            fee_mode,
            nonce: 0,
            gas_price: [0; 32],
            gas: 0,
            to: None,
            value: [0; 32],
            from,
            input: Vec::new(),
            key: (base == Base::AccountUpdate).then_some(AccountKey::Legacy),
            human_readable: false,
            code_format: 0,
            signatures: Vec::new(),
            fee_payer: Address([0; 20]),
            fee_payer_signatures: Vec::new(),
        }
    }

    pub fn type_code(&self) -> u8 {
        self.base.code() + self.fee_mode.offset()
    }

    pub fn is_delegated(&self) -> bool {
        self.fee_mode != FeeMode::Sender
    }

    /// The fee payer's share in percent: 0, 100, or the ratio.
    pub fn fee_payer_percent(&self) -> u8 {
        match self.fee_mode {
            FeeMode::Sender => 0,
            FeeMode::Delegated => 100,
            FeeMode::Ratio(r) => r,
        }
    }

    /// The fields after the type and before the signatures, as signed and as sent: the base's
    /// own, with the fee ratio where the type has one.
    fn fields(&self, p: &mut Vec<u8>) {
        put_u64(p, self.nonce);
        put_uint(p, &self.gas_price);
        put_u64(p, self.gas);
        let (has_to, has_value, has_input) = self.base.has();
        if has_to {
            put_bytes(p, self.to.as_ref().map_or(&[][..], |a| &a.0[..]));
        }
        if has_value {
            put_uint(p, &self.value);
        }
        put_bytes(p, &self.from.0);
        if has_input {
            put_bytes(p, &self.input);
        }
        if let Some(key) = &self.key {
            put_bytes(p, &key.encode());
        }
        if self.base == Base::SmartContractDeploy {
            put_u64(p, u64::from(self.human_readable));
            if let FeeMode::Ratio(r) = self.fee_mode {
                put_u64(p, u64::from(r));
            }
            put_u64(p, u64::from(self.code_format));
        } else if let FeeMode::Ratio(r) = self.fee_mode {
            put_u64(p, u64::from(r));
        }
    }

    /// `RLP([type, fields...])`: what the sender signs (inside the chain-id wrapper) and what
    /// the fee payer signs beside its own address.
    pub fn sign_inner(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.input.len() + 128);
        put_u64(&mut p, u64::from(self.type_code()));
        self.fields(&mut p);
        list(&p)
    }

    /// `keccak256(RLP([inner, chainId, 0, 0]))`.
    pub fn sig_hash(&self, chain_id: u64) -> [u8; 32] {
        let inner = self.sign_inner();
        let mut outer = Vec::with_capacity(inner.len() + 16);
        put_bytes(&mut outer, &inner);
        put_u64(&mut outer, chain_id);
        put_u64(&mut outer, 0);
        put_u64(&mut outer, 0);
        keccak256(&list(&outer))
    }

    /// `keccak256(RLP([inner, feePayer, chainId, 0, 0]))` (the reference's `HashFeePayer`).
    pub fn fee_payer_sig_hash(&self, chain_id: u64) -> [u8; 32] {
        let inner = self.sign_inner();
        let mut outer = Vec::with_capacity(inner.len() + 40);
        put_bytes(&mut outer, &inner);
        put_bytes(&mut outer, &self.fee_payer.0);
        put_u64(&mut outer, chain_id);
        put_u64(&mut outer, 0);
        put_u64(&mut outer, 0);
        keccak256(&list(&outer))
    }

    /// The raw bytes: the type byte, then the body list.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.input.len() + 256);
        self.fields(&mut p);
        p.extend_from_slice(&signature_list(&self.signatures));
        if self.is_delegated() {
            put_bytes(&mut p, &self.fee_payer.0);
            p.extend_from_slice(&signature_list(&self.fee_payer_signatures));
        }
        let mut out = vec![self.type_code()];
        out.extend_from_slice(&list(&p));
        out
    }

    /// `keccak256(type || RLP([fields..., signatures]))`: the hash without the fee payer's
    /// part, the same whoever pays (equal to the transaction hash when the sender pays).
    pub fn sender_tx_hash(&self) -> [u8; 32] {
        let mut p = Vec::with_capacity(self.input.len() + 256);
        self.fields(&mut p);
        p.extend_from_slice(&signature_list(&self.signatures));
        let mut out = vec![self.type_code()];
        out.extend_from_slice(&list(&p));
        keccak256(&out)
    }

    /// Decodes the body list of native type `code` (the type byte already read).
    pub fn decode(code: u8, body: &[u8]) -> Result<Native, TxError> {
        let (base, mode) = split_code(code).ok_or(TxError::UndefinedType)?;
        let mut r = ListReader::whole(body)?;
        let mut t = Native::new(base, mode, Address([0; 20]));
        t.nonce = r.u64()?;
        t.gas_price = r.u256()?;
        t.gas = r.u64()?;
        let (has_to, has_value, has_input) = base.has();
        if has_to {
            let to = r.bytes()?;
            t.to = if to.is_empty() && base == Base::SmartContractDeploy {
                None
            } else {
                Some(address(to)?)
            };
        }
        if has_value {
            t.value = r.u256()?;
        }
        t.from = address(r.bytes()?)?;
        if has_input {
            t.input = r.bytes()?.to_vec();
        }
        if base == Base::AccountUpdate {
            t.key = Some(AccountKey::decode(r.bytes()?)?);
        }
        let ratio = |r: &mut ListReader<'_>| -> Result<u8, RlpError> {
            u8::try_from(r.u64()?)
                .map_err(|_| RlpError::Rlp("input string too long for uint8".into()))
        };
        if base == Base::SmartContractDeploy {
            t.human_readable = match r.u64()? {
                0 => false,
                1 => true,
                n => return Err(RlpError::Rlp(format!("invalid boolean value {n}")).into()),
            };
            if mode == FeeMode::Ratio(0) {
                t.fee_mode = FeeMode::Ratio(ratio(&mut r)?);
            }
            t.code_format = ratio(&mut r)?;
        } else if mode == FeeMode::Ratio(0) {
            t.fee_mode = FeeMode::Ratio(ratio(&mut r)?);
        }
        t.signatures = decode_signatures(&mut r)?;
        if t.is_delegated() {
            t.fee_payer = address(r.bytes()?)?;
            t.fee_payer_signatures = decode_signatures(&mut r)?;
        }
        r.end()?;
        Ok(t)
    }
}

pub(crate) fn address(b: &[u8]) -> Result<Address, RlpError> {
    let a: [u8; 20] = b
        .try_into()
        .map_err(|_| RlpError::Rlp(format!("an address is 20 bytes, not {}", b.len())))?;
    Ok(Address(a))
}

pub(crate) fn signature_list(sigs: &[Signature]) -> Vec<u8> {
    let mut payload = Vec::new();
    for s in sigs {
        let mut one = Vec::new();
        s.encode_into(&mut one);
        payload.extend_from_slice(&list(&one));
    }
    list(&payload)
}

pub(crate) fn decode_signatures(r: &mut ListReader<'_>) -> Result<Vec<Signature>, RlpError> {
    let mut all = r.list()?;
    let mut out = Vec::new();
    while !all.is_empty() {
        let mut one = all.list()?;
        out.push(Signature::decode(&mut one)?);
        one.end()?;
    }
    Ok(out)
}
