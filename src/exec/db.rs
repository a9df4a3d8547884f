//! The state as the EVM sees it: a [`Source`] (the state before the block) under an
//! [`Overlay`] of what the block has changed so far, behind revm's `Database` trait; and the
//! folding of what each transaction changed back into the overlay.

use std::collections::HashMap;

use revm::bytecode::Bytecode;
use revm::primitives::{StorageKey, StorageValue, B256, KECCAK_EMPTY};
use revm::state::{AccountInfo, EvmState};

use super::ExecError;
use crate::crypto::{keccak256, Address};
use crate::state::lookups::Lookups;
use crate::state::{self, Account, Changes, Contract, Slots, State, StateError, EMPTY_CODE_HASH};
use crate::trie::{NodeStore, Trie, EMPTY_ROOT};
use crate::types::account_key::AccountKey;
use crate::types::transaction::U256;

type Hash = [u8; 32];

/// What execution reads: the state before the block (or the call).
pub trait Source {
    /// The account at `address`; `None` when the state has no entry for it.
    fn account(&mut self, address: &Address) -> Result<Option<Account>, StateError>;
    /// The value of `slot` in the storage trie whose root is `root`.
    fn storage(&mut self, root: &Hash, slot: &U256) -> Result<U256, StateError>;
    /// The code with this hash.
    fn code(&mut self, hash: &Hash) -> Result<Vec<u8>, StateError>;
    /// The hash of the canonical block `number` (BLOCKHASH), if there is one.
    fn block_hash(&mut self, number: u64) -> Option<Hash>;
}

/// A [`Source`] over the state at a root in a node store, with block hashes from `hashes`,
/// and optionally a cache of look-up answers ([`Lookups`]) in front of the tries.
pub struct StateSource<N: NodeStore, F: FnMut(u64) -> Option<Hash>> {
    store: N,
    root: Hash,
    hashes: F,
    lookups: Option<std::sync::Arc<Lookups>>,
}

impl<N: NodeStore, F: FnMut(u64) -> Option<Hash>> StateSource<N, F> {
    pub fn new(store: N, root: Hash, hashes: F) -> Self {
        StateSource {
            store,
            root,
            hashes,
            lookups: None,
        }
    }

    /// This source with `lookups` answering repeated look-ups.
    pub fn with_lookups(mut self, lookups: std::sync::Arc<Lookups>) -> Self {
        self.lookups = Some(lookups);
        self
    }

    /// The value under the hashed key `key` in the trie at `root`.
    fn lookup(&self, root: &Hash, key: &Hash) -> Result<Option<Vec<u8>>, StateError> {
        let walk = || Trie::open(&self.store, *root).get(key);
        Ok(match &self.lookups {
            Some(l) => l.get_or_walk(root, key, walk)?,
            None => walk()?,
        })
    }
}

impl<N: NodeStore, F: FnMut(u64) -> Option<Hash>> Source for StateSource<N, F> {
    fn account(&mut self, address: &Address) -> Result<Option<Account>, StateError> {
        if self.lookups.is_none() {
            // One walk of the trie: the entry, if any, is the account.
            return State::at(&self.store, self.root).entry(address);
        }
        let root = self.root;
        self.lookup(&root, &keccak256(&address.0))?
            .map(|b| Account::decode(&b))
            .transpose()
    }

    fn storage(&mut self, root: &Hash, slot: &U256) -> Result<U256, StateError> {
        if self.lookups.is_none() || *root == EMPTY_ROOT {
            return state::storage_at(&self.store, root, slot);
        }
        match self.lookup(root, &state::slot_key(slot))? {
            Some(v) => state::decode_slot(&v),
            None => Ok([0; 32]),
        }
    }

    fn code(&mut self, hash: &Hash) -> Result<Vec<u8>, StateError> {
        state::code(&self.store, hash)
    }

    fn block_hash(&mut self, number: u64) -> Option<Hash> {
        (self.hashes)(number)
    }
}

/// What a call's state override replaces in one account (`eth_call`); `None` leaves it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AccountOverride {
    pub nonce: Option<u64>,
    pub code: Option<Vec<u8>>,
    pub balance: Option<Hash>,
    /// The whole storage: every other slot reads zero.
    pub state: Option<Vec<(Hash, Hash)>>,
    /// Slots written over the storage.
    pub state_diff: Option<Vec<(Hash, Hash)>>,
}

/// The block's changes so far over the state before it.
pub struct Overlay<S: Source> {
    source: S,
    /// Accounts read from the source: the state before the block does not change during it,
    /// and the EVM asks for the same account several times a transaction (its code, its
    /// storage root for each slot, the caller, the rewardbase).
    read: HashMap<Address, Option<Account>>,
    changes: Changes,
    /// Code read or deployed, analysed once (jump destinations) for the whole block.
    bytecode: HashMap<Hash, Bytecode>,
}

impl<S: Source> Overlay<S> {
    pub fn new(source: S) -> Overlay<S> {
        Overlay {
            source,
            read: HashMap::new(),
            changes: Changes::default(),
            bytecode: HashMap::new(),
        }
    }

    /// The account as the block has left it; `None` when it does not exist.
    pub fn account(&mut self, address: &Address) -> Result<Option<Account>, StateError> {
        if let Some(a) = self.changes.accounts.get(address) {
            return Ok(Some(a.clone()));
        }
        if self.changes.removed.contains(address) {
            return Ok(None);
        }
        if let Some(a) = self.read.get(address) {
            return Ok(a.clone());
        }
        let a = self.source.account(address)?;
        self.read.insert(*address, a.clone());
        Ok(a)
    }

    /// Whether the account at `address` has code.
    pub fn has_code(&mut self, address: &Address) -> Result<bool, StateError> {
        Ok(self
            .account(address)?
            .is_some_and(|a| a.code_hash() != EMPTY_CODE_HASH))
    }

    /// Sets the account at `address` (a transaction that ran no code).
    pub fn put(&mut self, address: Address, account: Account) {
        self.changes.removed.remove(&address);
        self.changes.accounts.insert(address, account);
    }

    /// Replaces parts of the account at `address` before a call runs (`eth_call`'s state
    /// override): nonce, code, balance, the whole storage (`state`) or some slots
    /// (`state_diff`). Code makes the account a contract account.
    pub fn override_account(
        &mut self,
        address: Address,
        o: &AccountOverride,
    ) -> Result<(), StateError> {
        let mut a = self.account(&address)?.unwrap_or_default();
        if let Some(n) = o.nonce {
            a.nonce = n;
        }
        if let Some(b) = o.balance {
            a.balance = b;
        }
        if let Some(code) = &o.code {
            let code_hash = crate::crypto::keccak256(code);
            self.changes.code.insert(code_hash, code.clone());
            let mut c = a.contract.unwrap_or(Contract {
                storage_root: EMPTY_ROOT,
                code_hash,
                code_format: 0,
                vm_version: super::VM_VERSION,
            });
            c.code_hash = code_hash;
            a.contract = Some(c);
        }
        if let Some(state) = &o.state {
            self.changes.storage.insert(
                address,
                Slots {
                    cleared: true,
                    written: state.iter().copied().collect(),
                },
            );
        }
        if let Some(diff) = &o.state_diff {
            self.changes
                .storage
                .entry(address)
                .or_default()
                .written
                .extend(diff.iter().copied());
        }
        self.put(address, a);
        Ok(())
    }

    /// The changes, leaving none.
    pub fn take_changes(&mut self) -> Changes {
        std::mem::take(&mut self.changes)
    }

    /// Folds what one EVM transaction changed into the block's changes.
    pub fn commit_evm(&mut self, evm_state: EvmState) -> Result<(), StateError> {
        for (raddress, acc) in evm_state {
            if !acc.is_touched() {
                continue;
            }
            let address = Address(raddress.0 .0);
            if acc.is_selfdestructed() {
                self.changes.accounts.remove(&address);
                self.changes.storage.remove(&address);
                self.changes.removed.insert(address);
                continue;
            }
            let before = self.account(&address)?;
            let mut ours = before.clone().unwrap_or_default();
            ours.nonce = acc.info.nonce;
            ours.balance = acc.info.balance.to_be_bytes();
            if acc.is_created() {
                // A new contract account (the reference makes one at CREATE, whatever code
                // its constructor leaves): no key can sign for it, and its storage starts
                // empty.
                let code_hash = acc.info.code_hash.0;
                ours.key = AccountKey::Fail;
                ours.contract = Some(Contract {
                    storage_root: EMPTY_ROOT,
                    code_hash,
                    code_format: 0,
                    vm_version: super::VM_VERSION,
                });
                if code_hash != EMPTY_CODE_HASH {
                    if let Some(code) = &acc.info.code {
                        self.changes
                            .code
                            .insert(code_hash, code.original_byte_slice().to_vec());
                        self.bytecode.insert(code_hash, code.clone());
                    }
                }
                self.changes.storage.insert(
                    address,
                    Slots {
                        cleared: true,
                        written: HashMap::new(),
                    },
                );
            }
            let mut written = acc
                .storage
                .iter()
                .filter(|(_, s)| s.is_changed())
                .map(|(k, s)| (k.to_be_bytes::<32>(), s.present_value.to_be_bytes::<32>()))
                .peekable();
            if written.peek().is_some() {
                self.changes
                    .storage
                    .entry(address)
                    .or_default()
                    .written
                    .extend(written);
            }
            // An empty account the EVM touched is not kept (EIP-161), nor created.
            if ours.is_empty() {
                self.changes.accounts.remove(&address);
                self.changes.storage.remove(&address);
                if before.is_some() {
                    self.changes.removed.insert(address);
                }
                continue;
            }
            self.put(address, ours);
        }
        Ok(())
    }

    fn bytecode_of(&mut self, hash: &Hash) -> Result<Bytecode, StateError> {
        if let Some(b) = self.bytecode.get(hash) {
            return Ok(b.clone());
        }
        if let Some(b) = shared_code()
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(hash)
        {
            self.bytecode.insert(*hash, b.clone());
            return Ok(b.clone());
        }
        let raw = match self.changes.code.get(hash) {
            Some(c) => c.clone(),
            None => self.source.code(hash)?,
        };
        let b = Bytecode::new_raw(raw.into());
        self.bytecode.insert(*hash, b.clone());
        let mut shared = shared_code().lock().unwrap_or_else(|p| p.into_inner());
        if shared.len() >= SHARED_CODE {
            shared.clear();
        }
        shared.insert(*hash, b.clone());
        Ok(b)
    }
}

/// Most analysed codes kept for every run (then the cache starts over).
const SHARED_CODE: usize = 256;

/// Code analysed once (its jump destinations) for every block run and call: code is found by
/// the hash of its bytes, so an entry never goes stale. Without it each `chain_call` copied
/// and analysed the contract's code again.
fn shared_code() -> &'static std::sync::Mutex<HashMap<Hash, Bytecode>> {
    static CODE: std::sync::OnceLock<std::sync::Mutex<HashMap<Hash, Bytecode>>> =
        std::sync::OnceLock::new();
    CODE.get_or_init(Default::default)
}

impl<S: Source> revm::Database for Overlay<S> {
    type Error = ExecError;

    fn basic(
        &mut self,
        address: revm::primitives::Address,
    ) -> Result<Option<AccountInfo>, ExecError> {
        let Some(a) = self.account(&Address(address.0 .0))? else {
            return Ok(None);
        };
        let code_hash = a.code_hash();
        let balance = revm::primitives::U256::from_be_bytes(a.balance);
        let info = if code_hash == EMPTY_CODE_HASH {
            AccountInfo::default().with_code_hash(KECCAK_EMPTY)
        } else {
            let code = self.bytecode_of(&code_hash)?;
            AccountInfo::default().with_code_and_hash(code, B256::from(code_hash))
        };
        let info = AccountInfo {
            balance,
            nonce: a.nonce,
            ..info
        };
        Ok(Some(info))
    }

    fn code_by_hash(&mut self, code_hash: B256) -> Result<Bytecode, ExecError> {
        if code_hash == KECCAK_EMPTY {
            return Ok(Bytecode::default());
        }
        Ok(self.bytecode_of(&code_hash.0)?)
    }

    fn storage(
        &mut self,
        address: revm::primitives::Address,
        index: StorageKey,
    ) -> Result<StorageValue, ExecError> {
        let address = Address(address.0 .0);
        let slot = index.to_be_bytes::<32>();
        if let Some(s) = self.changes.storage.get(&address) {
            if let Some(v) = s.written.get(&slot) {
                return Ok(StorageValue::from_be_bytes(*v));
            }
            if s.cleared {
                return Ok(StorageValue::ZERO);
            }
        }
        let Some(a) = self.account(&address)? else {
            return Ok(StorageValue::ZERO);
        };
        let root = a.storage_root();
        if root == EMPTY_ROOT {
            return Ok(StorageValue::ZERO);
        }
        Ok(StorageValue::from_be_bytes(
            self.source.storage(&root, &slot)?,
        ))
    }

    fn block_hash(&mut self, number: u64) -> Result<B256, ExecError> {
        Ok(self
            .source
            .block_hash(number)
            .map(B256::from)
            .unwrap_or_default())
    }
}
