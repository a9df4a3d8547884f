//! The chain: its database, genesis, account state and head; next the transaction pool and
//! block sealing. A domain beside `keystore`: it knows nothing of `rpc`, publishes typed
//! events into `events::Bus`, and runs its background work as `service::Service`s.

pub mod db;
pub mod genesis;
pub mod state;

use std::path::Path;
use std::sync::Mutex;

use crate::crypto::Address;
use crate::trie::{NodeStore, EMPTY_ROOT};
use crate::types::block::{BftExtra, Header};
use crate::types::rlp::list;
use db::{BlockWrite, ChainDb, Hash};
use genesis::Genesis;
use state::{Account, State, StateError};

/// The block score of a genesis header (reference 10.1).
pub const GENESIS_BLOCK_SCORE: u64 = 131_072;

/// Why the chain could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum ChainError {
    #[error(transparent)]
    Db(#[from] db::Error),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("the chain database holds another chain: its genesis block is 0x{stored}, this configuration's is 0x{expected}")]
    OtherChain { stored: String, expected: String },
    #[error("chain database is corrupt: {0}")]
    Corrupt(String),
}

/// The trie nodes of the chain database as a node store.
struct DbNodes<'a>(&'a ChainDb);

impl NodeStore for DbNodes<'_> {
    fn node(&self, hash: &[u8; 32]) -> Option<Vec<u8>> {
        self.0.trie_node(hash).ok().flatten()
    }
}

/// The head block.
#[derive(Debug, Clone)]
struct Head {
    hash: Hash,
    header: Header,
}

/// An open chain.
pub struct Chain {
    db: ChainDb,
    genesis: Genesis,
    head: Mutex<Head>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").finish_non_exhaustive()
    }
}

/// The genesis block of `g`: its header and the state's trie nodes.
pub fn genesis_block(g: &Genesis) -> Result<(Header, Vec<(Hash, Vec<u8>)>), ChainError> {
    let store = crate::trie::MemoryStore::default();
    let mut state = State::at(&store, EMPTY_ROOT);
    for (address, balance) in &g.alloc {
        state.set(
            address,
            &Account {
                balance: *balance,
                ..Account::default()
            },
        )?;
    }
    let (state_root, nodes) = state.commit();
    let extra = BftExtra {
        vanity: [0; 31],
        round: 0,
        validators: g.validator.into_iter().collect(),
        seal: Vec::new(),
        committed_seals: Vec::new(),
    }
    .encode();
    let mut block_score = [0u8; 32];
    block_score[24..].copy_from_slice(&GENESIS_BLOCK_SCORE.to_be_bytes());
    let header = Header {
        parent_hash: [0; 32],
        rewardbase: Address([0; 20]),
        state_root,
        transactions_root: EMPTY_ROOT,
        receipts_root: EMPTY_ROOT,
        bloom: Box::new([0; 256]),
        block_score,
        number: 0,
        gas_used: 0,
        time: g.timestamp,
        time_fos: 0,
        extra,
        governance: Vec::new(),
        vote: Vec::new(),
        base_fee: None,
        random_reveal: None,
        mix_hash: None,
    };
    Ok((header, nodes))
}

impl Chain {
    /// Opens the chain database in `dir`; a new one gets the genesis block of `genesis`. A
    /// database of another chain (another genesis block) is refused, untouched.
    pub fn open(dir: &Path, genesis: &Genesis) -> Result<Chain, ChainError> {
        let db = ChainDb::open(dir)?;
        let (header, nodes) = genesis_block(genesis)?;
        let hash = header.hash();
        match db.hash_at(0)? {
            None => {
                let empty_list = list(&[]);
                db.commit_block(&BlockWrite {
                    number: 0,
                    hash: &hash,
                    header: &header.encode(),
                    body: &list(&empty_list),
                    receipts: &empty_list,
                    tx_hashes: &[],
                    trie_nodes: &nodes,
                })?;
            }
            Some(stored) if stored == hash => {}
            Some(stored) => {
                return Err(ChainError::OtherChain {
                    stored: hex::encode(stored),
                    expected: hex::encode(hash),
                })
            }
        }
        let (_, head_hash) = db
            .head()?
            .ok_or_else(|| ChainError::Corrupt("no head block".into()))?;
        let bytes = db
            .header(&head_hash)?
            .ok_or_else(|| ChainError::Corrupt("the head block's header is missing".into()))?;
        let head_header =
            Header::decode(&bytes).map_err(|e| ChainError::Corrupt(format!("head header: {e}")))?;
        Ok(Chain {
            db,
            genesis: genesis.clone(),
            head: Mutex::new(Head {
                hash: head_hash,
                header: head_header,
            }),
        })
    }

    fn head(&self) -> Head {
        self.head.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub fn chain_id(&self) -> u64 {
        self.genesis.chain_id
    }

    pub fn network_id(&self) -> u64 {
        self.genesis.network_id
    }

    /// The unit price: the gas price every transaction must carry (pre-Magma rule).
    pub fn unit_price(&self) -> u64 {
        self.genesis.unit_price
    }

    /// The head block's number.
    pub fn head_number(&self) -> u64 {
        self.head().header.number
    }

    /// The head block's hash.
    pub fn head_hash(&self) -> Hash {
        self.head().hash
    }

    /// The genesis block's hash.
    pub fn genesis_hash(&self) -> Result<Hash, ChainError> {
        self.db
            .hash_at(0)?
            .ok_or_else(|| ChainError::Corrupt("no genesis block".into()))
    }

    /// The canonical header at `number`, with its hash.
    pub fn header_at(&self, number: u64) -> Result<Option<(Hash, Header)>, ChainError> {
        let Some(hash) = self.db.hash_at(number)? else {
            return Ok(None);
        };
        let bytes = self
            .db
            .header(&hash)?
            .ok_or_else(|| ChainError::Corrupt(format!("header of block {number} missing")))?;
        let header = Header::decode(&bytes)
            .map_err(|e| ChainError::Corrupt(format!("block {number}: {e}")))?;
        Ok(Some((hash, header)))
    }

    /// The account at `address` in the state of block `number` (the head when `None`).
    pub fn account(
        &self,
        address: &Address,
        number: Option<u64>,
    ) -> Result<Option<Account>, ChainError> {
        let root = match number {
            None => self.head().header.state_root,
            Some(n) => match self.header_at(n)? {
                Some((_, h)) => h.state_root,
                None => return Ok(None),
            },
        };
        let nodes = DbNodes(&self.db);
        Ok(Some(State::at(&nodes, root).account(address)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn genesis(balance: u8) -> Genesis {
        let mut b = [0u8; 32];
        b[31] = balance;
        Genesis::dev(Address([7; 20]), b)
    }

    #[test]
    fn a_new_database_gets_the_genesis_block_and_keeps_it() {
        let dir = tempfile::tempdir().unwrap();
        let g = genesis(100);
        let chain = Chain::open(dir.path(), &g).unwrap();
        assert_eq!(chain.head_number(), 0);
        let hash = chain.head_hash();
        assert_eq!(chain.genesis_hash().unwrap(), hash);
        let acct = chain.account(&Address([7; 20]), None).unwrap().unwrap();
        assert_eq!(acct.balance[31], 100);
        assert_eq!(
            chain.account(&Address([8; 20]), Some(0)).unwrap(),
            Some(Account::default())
        );
        assert_eq!(chain.account(&Address([7; 20]), Some(1)).unwrap(), None);
        drop(chain);
        let again = Chain::open(dir.path(), &g).unwrap();
        assert_eq!(again.head_hash(), hash);
        let (h, header) = again.header_at(0).unwrap().unwrap();
        assert_eq!((h, header.number), (hash, 0));
        assert_eq!(header.block_score[29..], [0x02, 0x00, 0x00]);
    }

    #[test]
    fn another_chain_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        drop(Chain::open(dir.path(), &genesis(1)).unwrap());
        let err = Chain::open(dir.path(), &genesis(2)).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("the chain database holds another chain: its genesis block is 0x"),
            "{err}"
        );
    }
}
