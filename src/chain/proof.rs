//! Merkle proofs of an account and of its storage slots at a block (`eth_getProof`): the
//! account trie's proof of the address, and each slot's proof in the account's storage trie,
//! with the values they prove.

use super::state::{self, Account};
use super::{Chain, ChainError};
use crate::crypto::Address;
use crate::trie::{SecureTrie, Trie};
use crate::types::block::Header;
use crate::types::transaction::U256;

/// An account's proof at one block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountProof {
    /// The account, `None` when the state has no entry for the address.
    pub account: Option<Account>,
    /// The account trie's nodes from the state root to the address (or to where its path
    /// leaves the trie).
    pub proof: Vec<Vec<u8>>,
    /// One per slot asked for, in the order asked.
    pub storage: Vec<SlotProof>,
}

/// A storage slot's value and its proof in the account's storage trie.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotProof {
    pub value: U256,
    /// Empty when the account has no storage.
    pub proof: Vec<Vec<u8>>,
}

impl Chain {
    /// The proof of `address` in the state of `at`, and of each of `slots` in its storage
    /// (the trie at the account's storage root: the empty one for an account without
    /// code). Fails when a node of the state is missing or corrupt.
    pub fn prove_account(
        &self,
        address: &Address,
        slots: &[U256],
        at: &([u8; 32], Header),
    ) -> Result<AccountProof, ChainError> {
        let nodes = self.db_nodes();
        let accounts = SecureTrie(Trie::open(&nodes, at.1.state_root));
        let account = state::State::at(&nodes, at.1.state_root).entry(address)?;
        let proof = accounts
            .prove(&address.0)
            .map_err(state::StateError::from)?;
        let root = account
            .as_ref()
            .map_or(crate::trie::EMPTY_ROOT, Account::storage_root);
        let storage = SecureTrie(Trie::open(&nodes, root));
        let storage = slots
            .iter()
            .map(|slot| {
                Ok(SlotProof {
                    value: state::storage_at(&nodes, &root, slot)?,
                    proof: storage.prove(slot).map_err(state::StateError::from)?,
                })
            })
            .collect::<Result<_, ChainError>>()?;
        Ok(AccountProof {
            account,
            proof,
            storage,
        })
    }
}
