//! The chain: its database, genesis, account state and head; next the transaction pool and
//! block sealing. A domain beside `keystore`: it knows nothing of `rpc`, publishes typed
//! events into `events::Bus`, and runs its background work as `service::Service`s.

pub mod db;
pub mod genesis;
pub mod pool;
pub mod state;

use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use crate::crypto::{keccak256, Address, SecretKey};
use crate::events::{Bus, Event, NewHead};
use crate::service::{Service, Worker};
use crate::trie::{NodeStore, EMPTY_ROOT};
use crate::types::block::{encode_tx_list, DeriveSha};
use crate::types::block::{BftExtra, Header};
use crate::types::receipt::{Receipt, STATUS_SUCCESS};
use crate::types::rlp::list;
use crate::types::transaction::Transaction;
use db::{BlockWrite, ChainDb, Hash};
use genesis::Genesis;
use pool::{Pool, PoolError};
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
    /// Held while a block is sealed, so that no transaction is checked against a head that
    /// is about to change.
    pool: Mutex<Pool>,
    bus: OnceLock<Arc<Bus>>,
    /// One lock per sender for the send methods that fill in the nonce (reference 6.4).
    nonce_locks: Mutex<std::collections::HashMap<Address, Arc<Mutex<()>>>>,
}

/// A block as the chain knows it.
#[derive(Debug, Clone)]
pub struct BlockRecord {
    pub hash: Hash,
    pub header: Header,
    /// Each transaction with its sender.
    pub transactions: Vec<(Transaction, Address)>,
    /// The length of the block's RLP.
    pub size: u64,
}

/// A transaction as the chain knows it.
#[derive(Debug, Clone)]
pub struct TxRecord {
    pub tx: Transaction,
    pub sender: Address,
    pub location: crate::types::json::Location,
    /// The receipt's status and gas used; `None` while pending.
    pub receipt: Option<(u64, u64)>,
}

/// Why a submitted transaction was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(transparent)]
    Pool(#[from] PoolError),
    #[error(transparent)]
    Chain(#[from] ChainError),
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
            pool: Mutex::new(Pool::default()),
            bus: OnceLock::new(),
            nonce_locks: Mutex::new(std::collections::HashMap::new()),
        })
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

    fn pool(&self) -> std::sync::MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Checks `tx` against the head state and adds it to the pool; its hash.
    pub fn submit(&self, tx: Transaction) -> Result<[u8; 32], SubmitError> {
        // Signatures are recovered before the pool's lock is taken (libsecp256k1, once).
        let signers = tx.recovered();
        // The pool's lock, then the head: a block being sealed finishes (and moves the head)
        // before this transaction is checked against the head's state.
        let mut pool = self.pool();
        let root = self.head().header.state_root;
        let nodes = DbNodes(&self.db);
        let state = State::at(&nodes, root);
        let hash = pool.add(tx, signers, self.chain_id(), self.unit_price(), |a| {
            state.account(a).map_err(|e| e.to_string())
        })?;
        drop(pool);
        self.publish(Event::PendingTransaction(hash));
        Ok(hash)
    }

    /// A transaction by hash: sealed (with its block, index and receipt's status and gas
    /// used) or pending (no receipt). `None` when the chain has never seen it.
    pub fn transaction(&self, hash: &[u8; 32]) -> Result<Option<TxRecord>, ChainError> {
        if let Some(p) = self.pool().find(hash) {
            return Ok(Some(TxRecord {
                tx: p.tx.clone(),
                sender: p.sender,
                location: crate::types::json::Location::PENDING,
                receipt: None,
            }));
        }
        let Some((block_hash, index)) = self.db.tx_location(hash)? else {
            return Ok(None);
        };
        let corrupt = |what: &str| {
            ChainError::Corrupt(format!("transaction 0x{}: {what}", hex::encode(hash)))
        };
        let number = self
            .db
            .number_of(&block_hash)?
            .ok_or_else(|| corrupt("block number missing"))?;
        let body = self
            .db
            .body(&block_hash)?
            .ok_or_else(|| corrupt("block body missing"))?;
        // The body is RLP([txList]): decode it as a block's transaction list.
        let mut r =
            crate::types::rlp::ListReader::whole(&body).map_err(|e| corrupt(&e.to_string()))?;
        let txs = r.raw().map_err(|e| corrupt(&e.to_string()))?;
        let transactions =
            crate::types::block::decode_tx_list(txs).map_err(|e| corrupt(&e.to_string()))?;
        let tx = transactions
            .get(index as usize)
            .cloned()
            .ok_or_else(|| corrupt("index past the block's transactions"))?;
        let sender = match &tx {
            Transaction::Legacy(_) => *tx
                .signers()
                .map_err(|e| corrupt(&e.to_string()))?
                .first()
                .ok_or_else(|| corrupt("no signature"))?,
            Transaction::ValueTransfer(t) => t.from,
            Transaction::AccountUpdate(t) => t.from,
        };
        let receipts = self
            .db
            .receipts(&block_hash)?
            .ok_or_else(|| corrupt("receipts missing"))?;
        let mut rl =
            crate::types::rlp::ListReader::whole(&receipts).map_err(|e| corrupt(&e.to_string()))?;
        let mut receipt = None;
        for i in 0..=index {
            let mut one = rl.list().map_err(|e| corrupt(&e.to_string()))?;
            if i == index {
                let status = one.u64().map_err(|e| corrupt(&e.to_string()))?;
                let gas_used = one.u64().map_err(|e| corrupt(&e.to_string()))?;
                receipt = Some((status, gas_used));
            }
        }
        Ok(Some(TxRecord {
            tx,
            sender,
            location: crate::types::json::Location {
                block_hash,
                block_number: number,
                index: u64::from(index),
            },
            receipt,
        }))
    }

    /// The block with this hash: its header, its transactions with their senders, and the
    /// length of its RLP.
    pub fn block_by_hash(&self, hash: &Hash) -> Result<Option<BlockRecord>, ChainError> {
        let corrupt =
            |what: String| ChainError::Corrupt(format!("block 0x{}: {what}", hex::encode(hash)));
        let Some(header_rlp) = self.db.header(hash)? else {
            return Ok(None);
        };
        let header = Header::decode(&header_rlp).map_err(|e| corrupt(e.to_string()))?;
        let body = self
            .db
            .body(hash)?
            .ok_or_else(|| corrupt("body missing".into()))?;
        let mut r =
            crate::types::rlp::ListReader::whole(&body).map_err(|e| corrupt(e.to_string()))?;
        let tx_list = r.raw().map_err(|e| corrupt(e.to_string()))?;
        let txs =
            crate::types::block::decode_tx_list(tx_list).map_err(|e| corrupt(e.to_string()))?;
        let mut whole = header_rlp.clone();
        whole.extend_from_slice(tx_list);
        let size = list(&whole).len() as u64;
        let mut transactions = Vec::with_capacity(txs.len());
        for tx in txs {
            let sender = match &tx {
                Transaction::Legacy(_) => *tx
                    .signers()
                    .map_err(|e| corrupt(e.to_string()))?
                    .first()
                    .ok_or_else(|| corrupt("a transaction without a signature".into()))?,
                Transaction::ValueTransfer(t) => t.from,
                Transaction::AccountUpdate(t) => t.from,
            };
            transactions.push((tx, sender));
        }
        Ok(Some(BlockRecord {
            hash: *hash,
            header,
            transactions,
            size,
        }))
    }

    /// The canonical block at `number` (the head when `None`).
    pub fn block_by_number(&self, number: Option<u64>) -> Result<Option<BlockRecord>, ChainError> {
        let number = number.unwrap_or_else(|| self.head_number());
        match self.db.hash_at(number)? {
            Some(h) => self.block_by_hash(&h),
            None => Ok(None),
        }
    }

    /// The sum of the block scores from genesis to block `number` (every block after
    /// genesis scores 1).
    pub fn total_block_score(&self, number: u64) -> u64 {
        GENESIS_BLOCK_SCORE + number
    }

    /// The nonce lock of `sender`: held by a send method from before it reads the pending
    /// nonce until the pool has answered, so that concurrent sends get consecutive nonces.
    pub fn nonce_lock(&self, sender: &Address) -> Arc<Mutex<()>> {
        let mut locks = self.nonce_locks.lock().unwrap_or_else(|p| p.into_inner());
        // Locks nobody holds or waits for are dropped, so the table stays small.
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        locks.entry(*sender).or_default().clone()
    }

    /// The pending transactions with their senders, in arrival order.
    pub fn pending(&self) -> Vec<(Transaction, Address)> {
        self.pool().pending_list()
    }

    /// The next nonce of `address`, counting its pending transactions.
    pub fn pending_nonce(&self, address: &Address) -> Result<u64, ChainError> {
        let pool = self.pool();
        let nonce = self.account(address, None)?.map_or(0, |a| a.nonce);
        Ok(pool.next_nonce(address, nonce))
    }

    /// Seals the pending transactions into a block signed by `validator` and makes it the
    /// head. `None` when nothing is pending.
    pub fn seal(&self, validator: &SecretKey) -> Result<Option<[u8; 32]>, ChainError> {
        let mut pool = self.pool();
        if pool.is_empty() {
            return Ok(None);
        }
        let parent = self.head();
        let nodes = DbNodes(&self.db);
        let mut state = State::at(&nodes, parent.header.state_root);
        let taken = pool.take();
        let rewardbase = validator.address();
        let mut receipts = Vec::with_capacity(taken.len());
        let mut gas_total = 0u64;
        let mut fees = [0u8; 32];
        for p in &taken {
            let (price, value, to, new_key) = match &p.tx {
                Transaction::Legacy(t) => (t.gas_price, t.value, t.to, None),
                Transaction::ValueTransfer(t) => (t.gas_price, t.value, Some(t.to), None),
                Transaction::AccountUpdate(t) => (t.gas_price, [0; 32], None, Some(&t.key)),
            };
            let fee = state::mul_u64(&price, p.gas_used)
                .ok_or_else(|| ChainError::Corrupt("fee overflow".into()))?;
            let mut sender = state.account(&p.sender)?;
            // The pool checked the nonce and the balance against this very state.
            let cost = state::add(&fee, &value)
                .ok_or_else(|| ChainError::Corrupt("cost overflow".into()))?;
            sender.balance = state::sub(&sender.balance, &cost)
                .ok_or_else(|| ChainError::Corrupt("a pooled transaction overdraws".into()))?;
            sender.nonce += 1;
            if let Some(k) = new_key {
                sender.key = sender.key.replaced_by(k).unwrap_or(sender.key.clone());
            }
            state.set(&p.sender, &sender)?;
            if let Some(to) = to {
                let mut r = state.account(&to)?;
                r.balance = state::add(&r.balance, &value)
                    .ok_or_else(|| ChainError::Corrupt("balance overflow".into()))?;
                state.set(&to, &r)?;
            }
            fees = state::add(&fees, &fee).unwrap_or(fees);
            gas_total += p.gas_used;
            receipts.push(Receipt {
                status: STATUS_SUCCESS,
                gas_used: p.gas_used,
                logs: Vec::new(),
            });
        }
        let mut reward = state.account(&rewardbase)?;
        reward.balance = state::add(&reward.balance, &fees).unwrap_or(reward.balance);
        state.set(&rewardbase, &reward)?;
        let (state_root, nodes_new) = state.commit();
        drop(state);
        let txs: Vec<Transaction> = taken.iter().map(|p| p.tx.clone()).collect();
        let tx_encodings: Vec<Vec<u8>> = txs.iter().map(Transaction::encode).collect();
        let receipt_encodings: Vec<Vec<u8>> = receipts.iter().map(Receipt::encode).collect();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let mut block_score = [0u8; 32];
        block_score[31] = 1;
        let mut header = Header {
            parent_hash: parent.hash,
            rewardbase,
            state_root,
            transactions_root: DeriveSha::Original.root(&tx_encodings),
            receipts_root: DeriveSha::Original.root(&receipt_encodings),
            bloom: Box::new([0; 256]),
            block_score,
            number: parent.header.number + 1,
            gas_used: gas_total,
            time: now.as_secs().max(parent.header.time),
            time_fos: (now.subsec_millis() / 10) as u8,
            extra: Vec::new(),
            governance: Vec::new(),
            vote: Vec::new(),
            base_fee: None,
            random_reveal: None,
            mix_hash: None,
        };
        let mut extra = BftExtra {
            vanity: [0; 31],
            round: 0,
            validators: vec![rewardbase],
            seal: Vec::new(),
            committed_seals: Vec::new(),
        };
        header.extra = extra.encode();
        let seal_hash = header.seal_hash().expect("BFT extra data was just written");
        extra.seal = validator.sign_hash(&seal_hash).to_vec();
        header.extra = extra.encode();
        let hash = header.hash();
        let mut commit_msg = hash.to_vec();
        commit_msg.push(0x02);
        extra
            .committed_seals
            .push(validator.sign_hash(&keccak256(&commit_msg)).to_vec());
        header.extra = extra.encode();
        let tx_hashes: Vec<[u8; 32]> = taken.iter().map(|p| p.hash).collect();
        let mut receipts_rlp = Vec::new();
        for r in &receipt_encodings {
            receipts_rlp.extend_from_slice(r);
        }
        self.db.commit_block(&BlockWrite {
            number: header.number,
            hash: &hash,
            header: &header.encode(),
            body: &list(&encode_tx_list(&txs)),
            receipts: &list(&receipts_rlp),
            tx_hashes: &tx_hashes,
            trie_nodes: &nodes_new,
        })?;
        let head = NewHead {
            number: header.number,
            hash,
            parent_hash: header.parent_hash,
            timestamp: header.time,
        };
        *self.head.lock().unwrap_or_else(|p| p.into_inner()) = Head { hash, header };
        drop(pool);
        self.publish(Event::NewHead(Arc::new(head)));
        Ok(Some(hash))
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

/// How often the sealer looks at the pool.
const SEAL_TICK: std::time::Duration = std::time::Duration::from_millis(20);

/// The `--dev` sealer (`sealer` thread): seals a block as soon as transactions are pending.
pub struct Sealer {
    chain: Arc<Chain>,
    key: Option<SecretKey>,
    worker: Option<Worker>,
}

impl Sealer {
    /// A sealer of `chain` signing with `key` (the validator's).
    pub fn new(chain: Arc<Chain>, key: SecretKey) -> Sealer {
        Sealer {
            chain,
            key: Some(key),
            worker: None,
        }
    }
}

impl Service for Sealer {
    fn name(&self) -> &'static str {
        "sealer"
    }

    fn start(&mut self) -> Result<(), String> {
        let chain = self.chain.clone();
        let key = self.key.take().ok_or("the sealer was started twice")?;
        self.worker = Some(Worker::periodic(
            "sealer",
            SEAL_TICK,
            move || match chain.seal(&key) {
                Ok(Some(hash)) => crate::log::info(
                    "Sealed a block",
                    &[
                        ("number", &chain.head_number().to_string()),
                        ("hash", &format!("0x{}", hex::encode(hash))),
                    ],
                ),
                Ok(None) => {}
                Err(e) => crate::log::error("Sealing failed", &[("err", &e.to_string())]),
            },
        )?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.stop();
        }
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

    #[test]
    fn a_sealed_block_is_signed_by_the_validator_and_holds_the_new_state() {
        use crate::types::transaction::ValueTransfer;
        let dir = tempfile::tempdir().unwrap();
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1; // 2^88
        let chain = Chain::open(dir.path(), &Genesis::dev(key.address(), funds)).unwrap();
        let to = Address([0x35; 20]);
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut value = [0u8; 32];
        value[31] = 5;
        let mut tx = Transaction::ValueTransfer(ValueTransfer {
            nonce: 0,
            gas_price: price,
            gas: 21_000,
            to,
            value,
            from: key.address(),
            signatures: Vec::new(),
        });
        tx.sign(&key, chain.chain_id());
        let hash = chain.submit(tx).unwrap();
        assert_eq!(chain.pending().len(), 1);
        assert_eq!(chain.pending_nonce(&key.address()).unwrap(), 1);
        let block_hash = chain.seal(&key).unwrap().unwrap();
        assert!(chain.pending().is_empty());
        assert_eq!(chain.seal(&key).unwrap(), None, "nothing left to seal");
        let b = chain.block_by_number(Some(1)).unwrap().unwrap();
        assert_eq!((b.hash, b.header.hash()), (block_hash, block_hash));
        assert_eq!(b.header.parent_hash, chain.genesis_hash().unwrap());
        let bft = BftExtra::decode(&b.header.extra).unwrap();
        assert_eq!(bft.validators, vec![key.address()]);
        let recover = |hash: &[u8; 32], sig: &[u8]| {
            crate::crypto::recover_address(hash, sig[..64].try_into().unwrap(), sig[64]).unwrap()
        };
        assert_eq!(
            recover(&b.header.seal_hash().unwrap(), &bft.seal),
            key.address()
        );
        let mut commit = block_hash.to_vec();
        commit.push(0x02);
        assert_eq!(
            recover(&keccak256(&commit), &bft.committed_seals[0]),
            key.address()
        );
        assert_eq!(b.transactions[0].0.hash(), hash);
        let record = chain.transaction(&hash).unwrap().unwrap();
        assert_eq!(record.receipt, Some((1, 21_000)));
        assert_eq!(chain.account(&to, None).unwrap().unwrap().balance, value);
        assert_eq!(
            chain.account(&key.address(), None).unwrap().unwrap().nonce,
            1
        );
        // The block's roots are those of its content.
        let enc = vec![b.transactions[0].0.encode()];
        assert_eq!(b.header.transactions_root, DeriveSha::Original.root(&enc));
    }
}
