//! Ethereum's typed transactions as the reference carries them: EIP-2930 access lists
//! (`TxTypeEthereumAccessList`, 0x7801) and EIP-1559 dynamic fees
//! (`TxTypeEthereumDynamicFee`, 0x7802). The body is Ethereum's own (chain id inside, one
//! signature with V the y-parity 0 or 1); the signing hash and the transaction hash are
//! Ethereum's (`keccak256(ethType || RLP(...))`); on the reference's wire and in its blocks the
//! body follows the two bytes `78 01` / `78 02` instead of Ethereum's one type byte
//! (`tx_internal_data_ethereum_*.go`, `tx_internal_data_serializer.go`).

use super::native::address;
use super::rlp::{list, put_bytes, put_u64, put_uint, ListReader};
use super::transaction::{Signature, TxError, U256};
use crate::crypto::{keccak256, Address};

/// The first byte of the reference's envelope for Ethereum's types.
pub const ENVELOPE: u8 = 0x78;
pub const TYPE_ACCESS_LIST: u16 = 0x7801;
pub const TYPE_DYNAMIC_FEE: u16 = 0x7802;
/// Gas per address of an access list (EIP-2930).
pub const ACCESS_LIST_ADDRESS_GAS: u64 = 2400;
/// Gas per storage key of an access list.
pub const ACCESS_LIST_STORAGE_KEY_GAS: u64 = 1900;

/// One entry of an access list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessTuple {
    pub address: Address,
    pub storage_keys: Vec<[u8; 32]>,
}

/// An Ethereum typed transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ethereum {
    /// EIP-1559 (0x7802) when true, else EIP-2930 (0x7801).
    pub dynamic: bool,
    pub chain_id: u64,
    pub nonce: u64,
    /// `maxPriorityFeePerGas`; the gas price of an access-list transaction.
    pub gas_tip_cap: U256,
    /// `maxFeePerGas`; the gas price of an access-list transaction.
    pub gas_fee_cap: U256,
    pub gas: u64,
    /// `None`: contract creation.
    pub to: Option<Address>,
    pub value: U256,
    pub input: Vec<u8>,
    pub access_list: Vec<AccessTuple>,
    /// V is the y-parity, 0 or 1.
    pub signature: Option<Signature>,
}

impl Ethereum {
    pub fn type_int(&self) -> u16 {
        if self.dynamic {
            TYPE_DYNAMIC_FEE
        } else {
            TYPE_ACCESS_LIST
        }
    }

    /// Ethereum's one type byte (1 or 2).
    pub fn eth_type(&self) -> u8 {
        if self.dynamic {
            2
        } else {
            1
        }
    }

    pub fn type_name(&self) -> &'static str {
        if self.dynamic {
            "TxTypeEthereumDynamicFee"
        } else {
            "TxTypeEthereumAccessList"
        }
    }

    fn fields(&self, p: &mut Vec<u8>, chain_id: u64) {
        put_u64(p, chain_id);
        put_u64(p, self.nonce);
        if self.dynamic {
            put_uint(p, &self.gas_tip_cap);
        }
        put_uint(p, &self.gas_fee_cap);
        put_u64(p, self.gas);
        put_bytes(p, self.to.as_ref().map_or(&[][..], |a| &a.0[..]));
        put_uint(p, &self.value);
        put_bytes(p, &self.input);
        let mut entries = Vec::new();
        for t in &self.access_list {
            let mut e = Vec::new();
            put_bytes(&mut e, &t.address.0);
            let mut keys = Vec::new();
            for k in &t.storage_keys {
                put_bytes(&mut keys, k);
            }
            e.extend_from_slice(&list(&keys));
            entries.extend_from_slice(&list(&e));
        }
        p.extend_from_slice(&list(&entries));
    }

    /// `keccak256(ethType || RLP([chainId, ...fields]))`; a chain id of 0 is the signer's.
    pub fn sig_hash(&self, chain_id: u64) -> [u8; 32] {
        let id = if self.chain_id == 0 {
            chain_id
        } else {
            self.chain_id
        };
        let mut p = Vec::with_capacity(self.input.len() + 128);
        self.fields(&mut p, id);
        let mut out = vec![self.eth_type()];
        out.extend_from_slice(&list(&p));
        keccak256(&out)
    }

    /// Ethereum's encoding: `ethType || RLP([...fields, v, r, s])` (what `eth_` methods take).
    pub fn encode_ethereum(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(self.input.len() + 192);
        self.fields(&mut p, self.chain_id);
        match &self.signature {
            Some(s) => s.encode_into(&mut p),
            None => {
                put_u64(&mut p, 0);
                put_u64(&mut p, 0);
                put_u64(&mut p, 0);
            }
        }
        let mut out = vec![self.eth_type()];
        out.extend_from_slice(&list(&p));
        out
    }

    /// The reference's encoding: `78 || ethType || RLP([...])`.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![ENVELOPE];
        out.extend_from_slice(&self.encode_ethereum());
        out
    }

    /// The transaction hash (and sender transaction hash): of Ethereum's encoding.
    pub fn hash(&self) -> [u8; 32] {
        keccak256(&self.encode_ethereum())
    }

    /// Decodes the body list of Ethereum type `eth_type` (1 or 2).
    pub fn decode(eth_type: u8, body: &[u8]) -> Result<Ethereum, TxError> {
        let dynamic = match eth_type {
            1 => false,
            2 => true,
            _ => return Err(TxError::UndefinedType),
        };
        let mut r = ListReader::whole(body)?;
        let chain_id = r.u64()?;
        let nonce = r.u64()?;
        let (gas_tip_cap, gas_fee_cap) = if dynamic {
            let tip = r.u256()?;
            (tip, r.u256()?)
        } else {
            let price = r.u256()?;
            (price, price)
        };
        let gas = r.u64()?;
        let to = r.bytes()?;
        let to = if to.is_empty() {
            None
        } else {
            Some(address(to)?)
        };
        let value = r.u256()?;
        let input = r.bytes()?.to_vec();
        let mut entries = r.list()?;
        let mut access_list = Vec::new();
        while !entries.is_empty() {
            let mut e = entries.list()?;
            let address = address(e.bytes()?)?;
            let mut keys = e.list()?;
            let mut storage_keys = Vec::new();
            while !keys.is_empty() {
                let k: [u8; 32] = keys
                    .bytes()?
                    .try_into()
                    .map_err(|_| super::rlp::RlpError::Rlp("a storage key is 32 bytes".into()))?;
                storage_keys.push(k);
            }
            e.end()?;
            access_list.push(AccessTuple {
                address,
                storage_keys,
            });
        }
        let signature = Signature::decode(&mut r)?;
        r.end()?;
        Ok(Ethereum {
            dynamic,
            chain_id,
            nonce,
            gas_tip_cap,
            gas_fee_cap,
            gas,
            to,
            value,
            input,
            access_list,
            signature: Some(signature),
        })
    }

    /// The access list's intrinsic gas.
    pub fn access_list_gas(&self) -> u64 {
        let keys: u64 = self
            .access_list
            .iter()
            .map(|t| t.storage_keys.len() as u64)
            .sum();
        ACCESS_LIST_ADDRESS_GAS * self.access_list.len() as u64 + ACCESS_LIST_STORAGE_KEY_GAS * keys
    }
}
