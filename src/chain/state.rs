//! Account state: nonce, balance and account key of each address, in a secure Merkle
//! Patricia Trie (keys hashed) whose nodes live in the chain database by hash.
//!
//! An account is stored as `RLP([nonce, balance, key])`, the key in its serialization of
//! `transactions-and-blocks.md` 7.1. An address with no entry is an empty account: nonce 0,
//! balance 0 and, implicitly, the legacy key (reference 7.4).

use crate::crypto::Address;
use crate::trie::{NodeStore, SecureTrie, Trie};
use crate::types::account_key::AccountKey;
use crate::types::rlp::{list, put_bytes, put_u64, put_uint, ListReader, RlpError};
use crate::types::transaction::U256;

/// One account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub nonce: u64,
    pub balance: U256,
    pub key: AccountKey,
}

impl Default for Account {
    fn default() -> Account {
        Account {
            nonce: 0,
            balance: [0; 32],
            key: AccountKey::Legacy,
        }
    }
}

/// Why the state could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StateError {
    #[error(transparent)]
    Trie(#[from] crate::trie::Error),
    #[error("account record: {0}")]
    Record(String),
}

impl Account {
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::new();
        put_u64(&mut p, self.nonce);
        put_uint(&mut p, &self.balance);
        put_bytes(&mut p, &self.key.encode());
        list(&p)
    }

    pub fn decode(bytes: &[u8]) -> Result<Account, StateError> {
        let bad = |e: RlpError| StateError::Record(e.to_string());
        let mut r = ListReader::whole(bytes).map_err(bad)?;
        let nonce = r.u64().map_err(bad)?;
        let balance = r.u256().map_err(bad)?;
        let key = AccountKey::decode(r.bytes().map_err(bad)?)
            .map_err(|e| StateError::Record(e.to_string()))?;
        r.end().map_err(bad)?;
        Ok(Account {
            nonce,
            balance,
            key,
        })
    }
}

/// The state at one root, with changes kept in memory until [`State::commit`].
pub struct State<'s> {
    trie: SecureTrie<'s>,
}

impl<'s> State<'s> {
    /// The state whose root is `root` in `store`.
    pub fn at(store: &'s dyn NodeStore, root: [u8; 32]) -> State<'s> {
        State {
            trie: SecureTrie(Trie::open(store, root)),
        }
    }

    /// The account at `address` (an empty one when absent).
    pub fn account(&self, address: &Address) -> Result<Account, StateError> {
        match self.trie.get(&address.0)? {
            Some(bytes) => Account::decode(&bytes),
            None => Ok(Account::default()),
        }
    }

    /// Writes `account` at `address`.
    pub fn set(&mut self, address: &Address, account: &Account) -> Result<(), StateError> {
        Ok(self.trie.insert(&address.0, account.encode())?)
    }

    /// Every account, by the Keccak-256 of its address (the trie's key), in key order.
    pub fn entries(&self) -> Result<Vec<([u8; 32], Account)>, StateError> {
        self.trie
            .0
            .entries()?
            .into_iter()
            .map(|(k, v)| {
                let key: [u8; 32] = k
                    .as_slice()
                    .try_into()
                    .map_err(|_| StateError::Record(format!("a key of {} bytes", k.len())))?;
                Ok((key, Account::decode(&v)?))
            })
            .collect()
    }

    /// The root of the state as it is now.
    pub fn root(&self) -> [u8; 32] {
        self.trie.root_hash()
    }

    /// The new root and the trie nodes to store.
    pub fn commit(&mut self) -> ([u8; 32], Vec<([u8; 32], Vec<u8>)>) {
        self.trie.commit()
    }
}

/// `a + b`, or `None` on overflow past 256 bits.
pub fn add(a: &U256, b: &U256) -> Option<U256> {
    let mut out = [0u8; 32];
    let mut carry = 0u16;
    for i in (0..32).rev() {
        let s = u16::from(a[i]) + u16::from(b[i]) + carry;
        out[i] = s as u8;
        carry = s >> 8;
    }
    (carry == 0).then_some(out)
}

/// `a - b`, or `None` when `b > a`.
pub fn sub(a: &U256, b: &U256) -> Option<U256> {
    let mut out = [0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = i16::from(a[i]) - i16::from(b[i]) - borrow;
        borrow = 0;
        if d < 0 {
            d += 256;
            borrow = 1;
        }
        out[i] = d as u8;
    }
    (borrow == 0).then_some(out)
}

/// `a * b` for a 64-bit `b`, or `None` on overflow.
pub fn mul_u64(a: &U256, b: u64) -> Option<U256> {
    let mut out = [0u8; 32];
    let mut carry: u128 = 0;
    for i in (0..32).rev() {
        let p = u128::from(a[i]) * u128::from(b) + carry;
        out[i] = p as u8;
        carry = p >> 8;
    }
    (carry == 0).then_some(out)
}

/// A 256-bit value as the JSON-RPC quantity `0x…` (no leading zeros; `0x0` for zero).
pub fn quantity(v: &U256) -> String {
    let hex = hex::encode(v);
    let trimmed = hex.trim_start_matches('0');
    if trimmed.is_empty() {
        "0x0".into()
    } else {
        format!("0x{trimmed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trie::{MemoryStore, EMPTY_ROOT};

    fn n(x: u128) -> U256 {
        let mut b = [0u8; 32];
        b[16..].copy_from_slice(&x.to_be_bytes());
        b
    }

    #[test]
    fn arithmetic_in_256_bits() {
        assert_eq!(add(&n(1), &n(2)), Some(n(3)));
        assert_eq!(add(&[0xff; 32], &n(1)), None);
        assert_eq!(sub(&n(5), &n(3)), Some(n(2)));
        assert_eq!(sub(&n(3), &n(5)), None);
        assert_eq!(
            mul_u64(&n(25_000_000_000), 21_000),
            Some(n(525_000_000_000_000))
        );
        assert_eq!(mul_u64(&[0xff; 32], 2), None);
        assert_eq!(quantity(&n(0)), "0x0");
        assert_eq!(quantity(&n(1000)), "0x3e8");
    }

    #[test]
    fn accounts_round_trip_through_the_trie() {
        let mut store = MemoryStore::default();
        let a = Address([1; 20]);
        let mut state = State::at(&store, EMPTY_ROOT);
        assert_eq!(state.account(&a).unwrap(), Account::default());
        let acct = Account {
            nonce: 3,
            balance: n(10),
            key: AccountKey::Fail,
        };
        state.set(&a, &acct).unwrap();
        let (root, nodes) = state.commit();
        drop(state);
        store.apply(nodes);
        assert_eq!(State::at(&store, root).account(&a).unwrap(), acct);
        assert_eq!(Account::decode(&acct.encode()).unwrap(), acct);
        assert!(Account::decode(&[0xc0]).is_err());
    }
}
