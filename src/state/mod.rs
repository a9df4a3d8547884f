//! Account state: every address's account (nonce, balance, account key and, for a contract,
//! its storage root, code hash and code format) in a secure Merkle Patricia Trie whose nodes
//! live in the chain's node store by hash; each contract's storage in a secure trie of its
//! own in the same store; contract code in the same store, keyed by its Keccak-256 (content
//! addressed like the trie nodes, so the node file checks it the same way).
//!
//! What a block changes is a [`Changes`]: the accounts as they end, the storage slots
//! written, the code deployed and the accounts removed. [`State::apply`] writes it: each
//! changed contract's storage trie first (its new root goes into the account), then the
//! accounts; it returns the new root and every node to store. Execution (`exec`) reads
//! through [`State`] and produces `Changes`; `chain` commits them.
//!
//! An externally owned account is stored as `RLP([nonce, balance, key])` (the key in its
//! serialization of `transactions-and-blocks.md` 7.1), exactly as before contracts came, so
//! the state roots of earlier chains are unchanged; a contract account as
//! `RLP([nonce, balance, key, storageRoot, codeHash, codeFormat, vmVersion])`. An address
//! with no entry is an empty account: nonce 0, balance 0 and, implicitly, the legacy key
//! (reference 7.4).

pub mod lookups;

use std::collections::{HashMap, HashSet};

use crate::crypto::{keccak256, Address};
use crate::trie::{NodeStore, SecureTrie, Trie, EMPTY_ROOT};
use crate::types::account_key::AccountKey;
use crate::types::rlp::{list, put_bytes, put_u64, put_uint, ListReader, RlpError};
use crate::types::transaction::U256;

pub type Hash = [u8; 32];

/// Keccak-256 of the empty string: the code hash of an account without code.
pub const EMPTY_CODE_HASH: Hash = [
    0xc5, 0xd2, 0x46, 0x01, 0x86, 0xf7, 0x23, 0x3c, 0x92, 0x7e, 0x7d, 0xb2, 0xdc, 0xc7, 0x03, 0xc0,
    0xe5, 0x00, 0xb6, 0x53, 0xca, 0x82, 0x27, 0x3b, 0x7b, 0xfa, 0xd8, 0x04, 0x5d, 0x85, 0xa4, 0x70,
];

/// What a contract account carries besides an account's nonce, balance and key (the
/// reference's smart-contract account).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contract {
    /// The root of the contract's storage trie.
    pub storage_root: Hash,
    /// Keccak-256 of its code (the code is in the node store under this hash).
    pub code_hash: Hash,
    /// The reference's code format: 0, the EVM (the only one it defines).
    pub code_format: u8,
    /// The reference's VM version: 1 for a contract created since its Istanbul-compatible fork
    /// (every contract here).
    pub vm_version: u8,
}

/// One account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub nonce: u64,
    pub balance: U256,
    pub key: AccountKey,
    /// `Some` for a contract account.
    pub contract: Option<Contract>,
}

impl Default for Account {
    fn default() -> Account {
        Account {
            nonce: 0,
            balance: [0; 32],
            key: AccountKey::Legacy,
            contract: None,
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
    #[error("storage slot record: {0}")]
    Slot(String),
    #[error("the code 0x{} is missing from the store", hex::encode(.0))]
    MissingCode(Hash),
}

impl Account {
    /// Whether this account is the empty one an absent address has.
    pub fn is_empty(&self) -> bool {
        self.nonce == 0
            && self.balance == [0; 32]
            && self.key == AccountKey::Legacy
            && self.contract.is_none()
    }

    /// The hash of the account's code: [`EMPTY_CODE_HASH`] without code.
    pub fn code_hash(&self) -> Hash {
        self.contract.map_or(EMPTY_CODE_HASH, |c| c.code_hash)
    }

    /// The root of the account's storage trie ([`EMPTY_ROOT`] without storage).
    pub fn storage_root(&self) -> Hash {
        self.contract.map_or(EMPTY_ROOT, |c| c.storage_root)
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(160);
        put_u64(&mut p, self.nonce);
        put_uint(&mut p, &self.balance);
        put_bytes(&mut p, &self.key.encode());
        if let Some(c) = &self.contract {
            put_bytes(&mut p, &c.storage_root);
            put_bytes(&mut p, &c.code_hash);
            put_u64(&mut p, u64::from(c.code_format));
            put_u64(&mut p, u64::from(c.vm_version));
        }
        list(&p)
    }

    pub fn decode(bytes: &[u8]) -> Result<Account, StateError> {
        let bad = |e: RlpError| StateError::Record(e.to_string());
        let mut r = ListReader::whole(bytes).map_err(bad)?;
        let nonce = r.u64().map_err(bad)?;
        let balance = r.u256().map_err(bad)?;
        let key = AccountKey::decode(r.bytes().map_err(bad)?)
            .map_err(|e| StateError::Record(e.to_string()))?;
        let contract = if r.is_empty() {
            None
        } else {
            let hash = |r: &mut ListReader<'_>| -> Result<Hash, StateError> {
                let b = r.bytes().map_err(bad)?;
                b.try_into()
                    .map_err(|_| StateError::Record(format!("a hash of {} bytes", b.len())))
            };
            let storage_root = hash(&mut r)?;
            let code_hash = hash(&mut r)?;
            let small = |r: &mut ListReader<'_>| -> Result<u8, StateError> {
                let n = r.u64().map_err(bad)?;
                u8::try_from(n).map_err(|_| StateError::Record(format!("code info {n}")))
            };
            let code_format = small(&mut r)?;
            let vm_version = small(&mut r)?;
            Some(Contract {
                storage_root,
                code_hash,
                code_format,
                vm_version,
            })
        };
        r.end().map_err(bad)?;
        Ok(Account {
            nonce,
            balance,
            key,
            contract,
        })
    }
}

/// The storage slots a block wrote to one contract.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Slots {
    /// The storage the account had before the block is gone (the contract was destroyed, or
    /// created at an address that had storage): only `written` remains.
    pub cleared: bool,
    /// Slot -> value; a zero value removes the slot.
    pub written: HashMap<U256, U256>,
}

/// What a block (or a call) changed, to be written with [`State::apply`].
#[derive(Debug, Clone, Default)]
pub struct Changes {
    /// The accounts as they end. A contract's `storage_root` here is still the one it had
    /// before the block (or [`EMPTY_ROOT`] when its storage was cleared): [`State::apply`]
    /// works out the new one from `storage`.
    pub accounts: HashMap<Address, Account>,
    /// Storage written, by contract.
    pub storage: HashMap<Address, Slots>,
    /// Code deployed, by its hash.
    pub code: HashMap<Hash, Vec<u8>>,
    /// Accounts removed (destroyed contracts; empty accounts touched by the EVM). Never also
    /// in `accounts`.
    pub removed: HashSet<Address>,
}

impl Changes {
    /// Every address whose account the changes write or remove.
    pub fn addresses(&self) -> impl Iterator<Item = &Address> {
        self.accounts.keys().chain(self.removed.iter())
    }
}

/// The state at one root, with changes kept in memory until [`State::commit`].
pub struct State<'s> {
    store: &'s dyn NodeStore,
    trie: SecureTrie<'s>,
}

/// Keccak-256 of a storage slot: its key in the contract's storage trie.
pub fn slot_key(slot: &U256) -> Hash {
    keccak256(slot)
}

/// A storage value as the trie holds it: the RLP of its minimal big-endian bytes.
fn encode_slot(value: &U256) -> Vec<u8> {
    let mut out = Vec::with_capacity(33);
    put_uint(&mut out, value);
    out
}

/// A storage value from its trie encoding (the RLP of its minimal bytes).
pub fn decode_slot(bytes: &[u8]) -> Result<U256, StateError> {
    let bad = |why: &str| StateError::Slot(why.to_string());
    let value = match bytes {
        [b] if *b < 0x80 => std::slice::from_ref(b),
        [h, rest @ ..] if (0x81..=0xa0).contains(h) && rest.len() == usize::from(h - 0x80) => {
            if rest[0] == 0 {
                return Err(bad("a value with a leading zero byte"));
            }
            if rest.len() == 1 && rest[0] < 0x80 {
                return Err(bad("a single byte below 0x80 written as a string"));
            }
            rest
        }
        _ => return Err(bad("not the RLP string of a value of at most 32 bytes")),
    };
    let mut out = [0u8; 32];
    out[32 - value.len()..].copy_from_slice(value);
    Ok(out)
}

/// The value of `slot` in the storage trie at `root` (zero when absent).
pub fn storage_at(store: &dyn NodeStore, root: &Hash, slot: &U256) -> Result<U256, StateError> {
    if *root == EMPTY_ROOT {
        return Ok([0; 32]);
    }
    match Trie::open(store, *root).get(&slot_key(slot))? {
        Some(v) => decode_slot(&v),
        None => Ok([0; 32]),
    }
}

/// Every slot of the storage trie at `root`: (the Keccak-256 of the slot, value), in key
/// order.
pub fn storage_entries(
    store: &dyn NodeStore,
    root: &Hash,
) -> Result<Vec<(Hash, U256)>, StateError> {
    if *root == EMPTY_ROOT {
        return Ok(Vec::new());
    }
    Trie::open(store, *root)
        .entries()?
        .into_iter()
        .map(|(k, v)| {
            let key: Hash = k
                .as_slice()
                .try_into()
                .map_err(|_| StateError::Slot(format!("a key of {} bytes", k.len())))?;
            Ok((key, decode_slot(&v)?))
        })
        .collect()
}

/// The code with hash `hash` (empty for [`EMPTY_CODE_HASH`]).
pub fn code(store: &dyn NodeStore, hash: &Hash) -> Result<Vec<u8>, StateError> {
    if *hash == EMPTY_CODE_HASH {
        return Ok(Vec::new());
    }
    store.node(hash).ok_or(StateError::MissingCode(*hash))
}

impl<'s> State<'s> {
    /// The state whose root is `root` in `store`.
    pub fn at(store: &'s dyn NodeStore, root: Hash) -> State<'s> {
        State {
            store,
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

    /// The account at `address` if the trie has an entry for it (one walk of the trie where
    /// [`State::exists`] then [`State::account`] take two).
    pub fn entry(&self, address: &Address) -> Result<Option<Account>, StateError> {
        self.trie
            .get(&address.0)?
            .map(|b| Account::decode(&b))
            .transpose()
    }

    /// Whether the trie has an entry for `address` (an account that was created, even if it
    /// is empty).
    pub fn exists(&self, address: &Address) -> Result<bool, StateError> {
        Ok(self.trie.get(&address.0)?.is_some())
    }

    /// The value of `slot` in the storage of `address` as of this state's root.
    pub fn storage(&self, address: &Address, slot: &U256) -> Result<U256, StateError> {
        let root = self.account(address)?.storage_root();
        storage_at(self.store, &root, slot)
    }

    /// The code of `address` (empty for an account without code).
    pub fn code(&self, address: &Address) -> Result<Vec<u8>, StateError> {
        code(self.store, &self.account(address)?.code_hash())
    }

    /// Writes `account` at `address`.
    pub fn set(&mut self, address: &Address, account: &Account) -> Result<(), StateError> {
        Ok(self.trie.insert(&address.0, account.encode())?)
    }

    /// Removes the account at `address`.
    pub fn remove(&mut self, address: &Address) -> Result<(), StateError> {
        Ok(self.trie.delete(&address.0)?)
    }

    /// Writes `changes`: each changed contract's storage trie, then the accounts, the
    /// removals and the code. The nodes to store (storage tries' and code included) are
    /// returned by the next [`State::commit`], with the account trie's.
    pub fn apply(&mut self, changes: &Changes) -> Result<Vec<(Hash, Vec<u8>)>, StateError> {
        let mut nodes = Vec::new();
        for address in &changes.removed {
            self.remove(address)?;
        }
        for (address, account) in &changes.accounts {
            let mut account = account.clone();
            if let (Some(slots), Some(c)) = (changes.storage.get(address), &mut account.contract) {
                let base = if slots.cleared {
                    EMPTY_ROOT
                } else {
                    c.storage_root
                };
                let mut trie = Trie::open(self.store, base);
                for (slot, value) in &slots.written {
                    let key = slot_key(slot);
                    if *value == [0; 32] {
                        trie.delete(&key)?;
                    } else {
                        trie.insert(&key, encode_slot(value))?;
                    }
                }
                let (root, storage_nodes) = trie.commit();
                c.storage_root = root;
                nodes.extend(storage_nodes);
            }
            self.set(address, &account)?;
        }
        nodes.extend(changes.code.iter().map(|(h, c)| (*h, c.clone())));
        Ok(nodes)
    }

    /// Calls `visit(key, account)` for every account whose key (the Keccak-256 of its
    /// address) is at least `start`, in key order, until it returns false. Returns false
    /// when the visitor stopped the walk. Fails on a missing or corrupt node or record.
    pub fn visit_accounts_from(
        &self,
        start: &Hash,
        visit: &mut dyn FnMut(&Hash, Account) -> bool,
    ) -> Result<bool, StateError> {
        let mut bad = None;
        let all = self.trie.0.visit_from(start, &mut |k, v| {
            let record = <[u8; 32]>::try_from(k)
                .map_err(|_| StateError::Record(format!("a key of {} bytes", k.len())))
                .and_then(|key| Ok((key, Account::decode(v)?)));
            match record {
                Ok((key, account)) => visit(&key, account),
                Err(e) => {
                    bad = Some(e);
                    false
                }
            }
        })?;
        match bad {
            Some(e) => Err(e),
            None => Ok(all),
        }
    }

    /// The root of the state as it is now.
    pub fn root(&self) -> Hash {
        self.trie.root_hash()
    }

    /// The new root and the account trie's nodes to store.
    pub fn commit(&mut self) -> (Hash, Vec<(Hash, Vec<u8>)>) {
        self.trie.commit()
    }
}

/// Calls `visit` with the hash and bytes of every stored item the state at `root` needs:
/// the account trie's nodes, each contract's storage-trie nodes and its code (what a state
/// migration copies and a dump counts). Each storage trie and code is visited once however
/// many accounts share it. Fails on a missing or corrupt node or account.
pub fn reachable(
    store: &dyn NodeStore,
    root: Hash,
    visit: &mut dyn FnMut(&Hash, &[u8]),
) -> Result<(), StateError> {
    let mut contracts: Vec<Contract> = Vec::new();
    let mut failed = None;
    crate::trie::reachable_with_leaves(store, root, &mut |h, bytes, leaves| {
        visit(h, bytes);
        for value in leaves {
            match Account::decode(value) {
                Ok(a) => contracts.extend(a.contract),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let mut seen = HashSet::new();
    for c in contracts {
        if seen.insert(c.storage_root) {
            crate::trie::reachable(store, c.storage_root, visit)?;
        }
        if c.code_hash != EMPTY_CODE_HASH && seen.insert(c.code_hash) {
            let code = store
                .node(&c.code_hash)
                .ok_or(StateError::MissingCode(c.code_hash))?;
            visit(&c.code_hash, &code);
        }
    }
    Ok(())
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

/// `a / b` (rounded down) for a non-zero 64-bit `b`.
pub fn div_u64(a: &U256, b: u64) -> U256 {
    let mut out = [0u8; 32];
    let mut rem: u128 = 0;
    for i in 0..32 {
        let cur = (rem << 8) | u128::from(a[i]);
        out[i] = (cur / u128::from(b)) as u8;
        rem = cur % u128::from(b);
    }
    out
}

/// `fee` split by a fee payer's share in percent: (the fee payer's part, the sender's part),
/// the fee payer's `fee * percent / 100` rounded down and the sender's the rest (the
/// reference's `CalcFeeWithRatio`).
pub fn split_fee(fee: &U256, percent: u8) -> (U256, U256) {
    match percent {
        0 => ([0; 32], *fee),
        100 => (*fee, [0; 32]),
        p => {
            // fee * p overflows only past 2^249; divide first then, losing nothing that
            // matters for a fee that large.
            let payer = match mul_u64(fee, u64::from(p)) {
                Some(x) => div_u64(&x, 100),
                None => mul_u64(&div_u64(fee, 100), u64::from(p)).unwrap_or(*fee),
            };
            (payer, sub(fee, &payer).unwrap_or([0; 32]))
        }
    }
}

/// A 64-bit number as a 256-bit one.
pub fn from_u64(n: u64) -> U256 {
    let mut out = [0u8; 32];
    out[24..].copy_from_slice(&n.to_be_bytes());
    out
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
    use crate::trie::MemoryStore;

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
        assert_eq!(from_u64(1000), n(1000));
    }

    #[test]
    fn the_empty_code_hash_is_keccak_of_nothing() {
        assert_eq!(keccak256(&[]), EMPTY_CODE_HASH);
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
            contract: None,
        };
        state.set(&a, &acct).unwrap();
        let (root, nodes) = state.commit();
        drop(state);
        store.apply(nodes);
        assert_eq!(State::at(&store, root).account(&a).unwrap(), acct);
        assert_eq!(Account::decode(&acct.encode()).unwrap(), acct);
        assert!(Account::decode(&[0xc0]).is_err());
    }

    /// An externally owned account keeps the three-field record of the chains made before
    /// contracts (their state roots must not change).
    #[test]
    fn an_account_without_code_keeps_its_three_field_record() {
        let acct = Account {
            nonce: 1,
            balance: n(5),
            key: AccountKey::Legacy,
            contract: None,
        };
        assert_eq!(
            acct.encode(),
            hex::decode("c5010582 01c0".replace(' ', "")).unwrap()
        );
        let c = Account {
            contract: Some(Contract {
                storage_root: EMPTY_ROOT,
                code_hash: [7; 32],
                code_format: 0,
                vm_version: 0,
            }),
            key: AccountKey::Fail,
            ..acct
        };
        assert_eq!(Account::decode(&c.encode()).unwrap(), c);
        // A record cut after the storage root is refused.
        let mut p = Vec::new();
        put_u64(&mut p, 1);
        put_uint(&mut p, &n(5));
        put_bytes(&mut p, &AccountKey::Fail.encode());
        put_bytes(&mut p, &EMPTY_ROOT);
        assert!(Account::decode(&list(&p)).is_err());
    }

    /// Storage written through `apply` reads back at the new root, a zero value removes a
    /// slot, a cleared contract keeps only what was written after, and code is stored under
    /// its hash; everything the state needs is reachable from its root.
    #[test]
    fn storage_and_code_are_written_with_the_accounts() {
        let mut store = MemoryStore::default();
        let c = Address([9; 20]);
        let code_bytes = vec![0x60, 0x00, 0x60, 0x00, 0xf3];
        let code_hash = keccak256(&code_bytes);
        let contract = Account {
            key: AccountKey::Fail,
            contract: Some(Contract {
                storage_root: EMPTY_ROOT,
                code_hash,
                code_format: 0,
                vm_version: 0,
            }),
            ..Account::default()
        };
        let mut changes = Changes::default();
        changes.accounts.insert(c, contract.clone());
        changes.code.insert(code_hash, code_bytes.clone());
        changes.storage.insert(
            c,
            Slots {
                cleared: true,
                written: [(n(1), n(0x1234)), (n(2), n(5))].into_iter().collect(),
            },
        );
        let mut state = State::at(&store, EMPTY_ROOT);
        let mut nodes = state.apply(&changes).unwrap();
        let (root1, account_nodes) = state.commit();
        nodes.extend(account_nodes);
        drop(state);
        store.apply(nodes);
        let s = State::at(&store, root1);
        assert_eq!(s.storage(&c, &n(1)).unwrap(), n(0x1234));
        assert_eq!(s.storage(&c, &n(2)).unwrap(), n(5));
        assert_eq!(s.storage(&c, &n(3)).unwrap(), n(0));
        assert_eq!(s.code(&c).unwrap(), code_bytes);
        let stored = s.account(&c).unwrap();
        assert_ne!(stored.storage_root(), EMPTY_ROOT);
        assert_eq!(
            storage_entries(&store, &stored.storage_root())
                .unwrap()
                .len(),
            2
        );
        // The next block: slot 1 removed, slot 3 added, slot 2 untouched.
        let mut changes = Changes::default();
        changes.accounts.insert(c, stored.clone());
        changes.storage.insert(
            c,
            Slots {
                cleared: false,
                written: [(n(1), n(0)), (n(3), n(7))].into_iter().collect(),
            },
        );
        let mut state = State::at(&store, root1);
        let mut nodes = state.apply(&changes).unwrap();
        let (root2, account_nodes) = state.commit();
        nodes.extend(account_nodes);
        drop(state);
        store.apply(nodes);
        let s2 = State::at(&store, root2);
        assert_eq!(s2.storage(&c, &n(1)).unwrap(), n(0));
        assert_eq!(s2.storage(&c, &n(2)).unwrap(), n(5));
        assert_eq!(s2.storage(&c, &n(3)).unwrap(), n(7));
        // The older state still reads as it was.
        assert_eq!(
            State::at(&store, root1).storage(&c, &n(1)).unwrap(),
            n(0x1234)
        );
        // Everything root2 needs: account nodes, storage nodes and the code.
        let mut seen = Vec::new();
        reachable(&store, root2, &mut |h, b| {
            assert_eq!(keccak256(b), *h);
            seen.push(*h)
        })
        .unwrap();
        assert!(seen.contains(&code_hash));
        assert!(seen.contains(&s2.account(&c).unwrap().storage_root()));
        // Removing the contract leaves the empty state.
        let mut changes = Changes::default();
        changes.removed.insert(c);
        let mut state = State::at(&store, root2);
        state.apply(&changes).unwrap();
        assert_eq!(state.commit().0, EMPTY_ROOT);
    }
}
