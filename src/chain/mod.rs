//! The chain: its database, genesis, account state and head, the transaction pool and
//! block sealing, import and export. A domain beside `keystore`: it knows nothing of `rpc`,
//! publishes typed events into `events::Bus`, and runs its background work as
//! `service::Service`s.
//!
//! This file holds [`Chain`] (opening it, its head, shutting its long operations down,
//! `debug_setHead`'s rewind), [`ChainError`] and the genesis block. The rest, by job; the
//! `impl Chain` is split across the files that say what each method does:
//!
//! - `admission.rs`: how a transaction enters the pool: the pool's view of the accounts,
//!   submission, the pending and queued lists, nonce locks, promotion when the head moves.
//! - `seal.rs`: a block from the pending transactions, written and made the head; the seal;
//!   the `--dev` [`Sealer`].
//! - `run.rs`: a block's transactions run over the accounts (`BlockRun`), for sealing and
//!   import alike.
//! - `read.rs`: look-ups: transactions, blocks, headers, accounts, dumps of a state.
//! - `call.rs`: calls on a block's state that keep nothing; `trace.rs`: a sealed block's
//!   transactions run again under a tracer, and a call traced (`debug_trace*`).
//! - `logs.rs`: the logs of a block range that match a filter (the header blooms deciding
//!   which receipts are read), and every receipt of a block.
//! - `import.rs` (blocks from a file or a peer, checked and stored), `export.rs`,
//!   `seal_batch.rs` (many seals checked at once), `migration.rs` (copying the head's state
//!   into a new node file).
//! - `nodecache.rs`: the trie-node cache saved and loaded ([`CacheSaver`]); `cachefile.rs` is
//!   its file format.
//! - `metrics.rs`: the chain's numbers for the node's metrics (a sample of the gauges; where
//!   sealed and imported blocks are counted).
//! - `pool.rs` (pending and queued transactions), `validate.rs` (the rules every transaction
//!   follows, and their refusals), `state.rs` (accounts in a secure trie), `genesis.rs`.
//! - Storage: `db.rs` (blocks, receipts, look-ups in redb; `reopen.rs` opens the file again
//!   after an I/O error), `nodelog.rs` (trie nodes in an append-only file), `store_error.rs`
//!   (the hash and error both share).
//!
//! Within `chain/` dependencies point one way: `pool` uses `validate`, `db` uses `nodelog`,
//! both storage files use `store_error`, sealing uses `admission` and `run`, tracing uses
//! `run`, `read` and `call`; no two files import each other.

mod admission;
pub mod cachefile;
pub mod call;
pub mod db;
pub mod export;
pub mod genesis;
pub mod import;
pub mod logs;
mod metrics;
pub mod migration;
mod nodecache;
pub mod nodelog;
pub mod pool;
pub mod proof;
mod read;
mod reopen;
mod run;
mod seal;
pub mod seal_batch;
pub mod state;
mod store_error;
pub mod trace;
pub mod validate;

pub use admission::{QueueExpiry, SubmitError};
pub use nodecache::{CacheSaver, CacheStatus, SaveOutcome};
pub use read::{BlockRecord, DumpEntry, TxRecord, BAD_BLOCKS};
pub use seal::{seal_header, Sealer};

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::crypto::{keccak256, Address};
use crate::events::{Bus, Event};
use crate::trie::cache::NodeCache;
use crate::trie::{NodeStore, EMPTY_ROOT};
use crate::types::block::{BftExtra, Header};
use crate::types::rlp::list;
use admission::Admission;
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
    #[error("the state of block {number} was removed by a state migration; states are kept from block {first} on")]
    StateRemoved { number: u64, first: u64 },
}

/// The trie-node cache's size unless configured otherwise.
pub const DEFAULT_NODE_CACHE_BYTES: usize = 512 << 20;

/// The trie nodes of the chain database, through the node cache, as a node store.
pub struct DbNodes<'a> {
    db: &'a ChainDb,
    cache: &'a NodeCache,
}

impl NodeStore for DbNodes<'_> {
    fn node(&self, hash: &[u8; 32]) -> Option<Vec<u8>> {
        if let Some(n) = self.cache.get(hash) {
            return Some(n.to_vec());
        }
        let n = self.db.trie_node(hash).ok().flatten()?;
        self.cache.insert(*hash, Arc::from(n.as_slice()));
        Some(n)
    }

    fn with_node(&self, hash: &[u8; 32], f: &mut dyn FnMut(&[u8])) -> bool {
        if let Some(n) = self.cache.get(hash) {
            f(&n);
            return true;
        }
        match self.db.trie_node(hash).ok().flatten() {
            Some(n) => {
                let n: Arc<[u8]> = Arc::from(n);
                self.cache.insert(*hash, n.clone());
                f(&n);
                true
            }
            None => false,
        }
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
    nodes: NodeCache,
    /// Answers of account and slot look-ups by trie root, for calls (`chain_call`, the
    /// estimates, `debug_traceCall`): a fixed share of the trie-node cache's budget.
    lookups: Arc<crate::state::lookups::Lookups>,
    /// The pool and the account view it checks against.
    admission: Mutex<Admission>,
    /// Held by whoever seals a block, from taking its transactions to moving the head.
    sealing: Mutex<()>,
    bus: OnceLock<Arc<Bus>>,
    /// Set when the node shuts down: long operations (export, import) stop at once.
    stopping: std::sync::atomic::AtomicBool,
    /// The last blocks an import refused, with the reason (`debug_getBadBlocks`).
    bad_blocks: Mutex<std::collections::VecDeque<(crate::types::block::Block, String)>>,
    /// The state migration's status, stop flag and thread.
    migration: migration::Migration,
    /// States of blocks before this one were removed by a migration.
    pruned_before: std::sync::atomic::AtomicU64,
    /// Nodes the trie-node cache loaded from `<datadir>/fastcache` at start.
    cache_loaded: std::sync::atomic::AtomicUsize,
    /// Set while the trie-node cache is being saved.
    saving: std::sync::atomic::AtomicBool,
    /// Whether chain-data anchoring transactions are taken from this node's own users
    /// (`--txpool.allow-local-anchortx`).
    allow_local_anchor: std::sync::atomic::AtomicBool,
    /// How far the running (or last) save of the trie-node cache has come.
    save_progress: cachefile::SaveProgress,
    /// Where sealed and imported blocks are counted (`--metrics`).
    metrics: OnceLock<Arc<crate::metrics::Metrics>>,
    /// How many cache saves have started, and how the last one that ended went
    /// (`admin_trieNodeCacheStatus`).
    saves: Mutex<nodecache::SaveHistory>,
    /// The validator's public key, once an import learnt it (`import.rs`, batched seals).
    validator_key: OnceLock<seal_batch::Key>,
    /// The thread saving the trie-node cache, joined at shutdown.
    save_thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// One lock per sender for the send methods that fill in the nonce (reference 6.4).
    nonce_locks: Mutex<std::collections::HashMap<Address, Arc<Mutex<()>>>>,
    /// The last blocks this node sealed, decoded for transaction look-ups (`read.rs`).
    recent: Mutex<read::RecentBlocks>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chain").finish_non_exhaustive()
    }
}

/// An account's address kept under the Keccak-256 that keys it in the state trie, beside the
/// trie nodes: content-addressed like them (the node file checks it the same way), it lets
/// `debug_dumpBlock` name accounts.
pub fn preimage(address: &Address) -> (Hash, Vec<u8>) {
    (keccak256(&address.0), address.0.to_vec())
}

/// A trie node (or other content-addressed item) to store: its hash and its bytes.
pub type TrieNode = (Hash, Vec<u8>);

/// The genesis block of `g`: its header and the state's trie nodes.
pub fn genesis_block(g: &Genesis) -> Result<(Header, Vec<TrieNode>), ChainError> {
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
    let (state_root, mut nodes) = state.commit();
    drop(state);
    nodes.extend(g.alloc.keys().map(preimage));
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
        Chain::open_with(dir, genesis, DEFAULT_NODE_CACHE_BYTES)
    }

    /// [`Chain::open`] with a trie-node cache of `cache_bytes` (0: none).
    pub fn open_with(
        dir: &Path,
        genesis: &Genesis,
        cache_bytes: usize,
    ) -> Result<Chain, ChainError> {
        let db = ChainDb::open(dir)?;
        let digest = genesis.digest();
        let known = db.hash_at(0)?.is_some() && db.genesis_spec()? == Some(digest);
        if !known {
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
                        sender_hashes: &[],
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
            // The same genesis block from this specification: known from now on.
            db.set_genesis_spec(&digest)?;
        }
        let pruned_before = db.pruned_before()?;
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
            nodes: NodeCache::new(cache_bytes),
            lookups: Arc::new(crate::state::lookups::Lookups::new(cache_bytes / 8)),
            admission: Mutex::new(Admission::default()),
            sealing: Mutex::new(()),
            bus: OnceLock::new(),
            stopping: std::sync::atomic::AtomicBool::new(false),
            saving: std::sync::atomic::AtomicBool::new(false),
            allow_local_anchor: std::sync::atomic::AtomicBool::new(false),
            save_progress: cachefile::SaveProgress::default(),
            metrics: OnceLock::new(),
            saves: Mutex::new(nodecache::SaveHistory::default()),
            validator_key: OnceLock::new(),
            cache_loaded: std::sync::atomic::AtomicUsize::new(0),
            migration: migration::Migration::default(),
            pruned_before: std::sync::atomic::AtomicU64::new(pruned_before),
            bad_blocks: Mutex::new(std::collections::VecDeque::new()),
            save_thread: Mutex::new(None),
            nonce_locks: Mutex::new(std::collections::HashMap::new()),
            recent: Mutex::new(read::RecentBlocks::default()),
        })
    }

    /// Tells long operations (export, import, a cache save) to stop, and waits for a cache
    /// save to end: the node is shutting down.
    pub fn stop_long_operations(&self) {
        self.stopping
            .store(true, std::sync::atomic::Ordering::Relaxed);
        self.stop_and_join_migration();
        let saving = self
            .save_thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(t) = saving {
            let _ = t.join();
        }
    }

    /// Set once the node is shutting down.
    pub fn stopping(&self) -> &std::sync::atomic::AtomicBool {
        &self.stopping
    }

    /// Where new heads and pending transactions are published from now on.
    pub fn publish_to(&self, bus: Arc<Bus>) {
        let _ = self.bus.set(bus);
    }

    fn publish(&self, e: Event) {
        if let Some(bus) = self.bus.get() {
            bus.publish(e);
        }
    }

    fn db_nodes(&self) -> DbNodes<'_> {
        DbNodes {
            db: &self.db,
            cache: &self.nodes,
        }
    }

    /// Rewinds the chain to block `number` (`debug_setHead`): the blocks above it leave the
    /// canonical chain, the pool is checked again against the older state.
    pub fn set_head(&self, number: u64) -> Result<(), ChainError> {
        let _sealing = self.sealing.lock().unwrap_or_else(|p| p.into_inner());
        if number >= self.head_number() {
            return Ok(());
        }
        let hash = self.db.set_head(number)?;
        let (_, header) = self
            .header_at(number)?
            .ok_or_else(|| ChainError::Corrupt(format!("block {number} vanished")))?;
        self.moved_to(&Head { hash, header });
        Ok(())
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

    /// The head block's number and hash, read together.
    pub fn head_block(&self) -> (u64, Hash) {
        let h = self.head();
        (h.header.number, h.hash)
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
