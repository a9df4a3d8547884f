//! What the chain answers about itself: a transaction (sealed, or pending in the pool) with
//! its receipt, blocks by hash or number, canonical headers, an account in the state of a
//! block, a whole state (`debug_dumpBlock`, `debug_getStateNodes`), the accounts a range of
//! blocks changed, the total block score, and the blocks an import refused lately. All reads,
//! apart from the list of refused blocks that `import.rs` adds to (`remember_bad_block`):
//! nothing here takes the sealing lock or moves the head (`debug_setHead` is `mod.rs`'s).

use super::db::{self, Hash};
use super::state::{Account, State, StateError};
use super::{Chain, ChainError, GENESIS_BLOCK_SCORE};
use crate::crypto::Address;
use crate::types::block::Header;
use crate::types::receipt::Receipt;
use crate::types::transaction::Transaction;

/// Refused blocks kept for `debug_getBadBlocks`.
pub const BAD_BLOCKS: usize = 10;

/// Most transactions the recent sealed blocks keep decoded (the newest block is kept whatever
/// its size).
const RECENT_TXS: usize = 65_536;

/// A block this node sealed, as its lookups need it: each transaction with its sender, each
/// receipt with the block-wide index of its first log.
pub(super) struct RecentBlock {
    pub hash: Hash,
    pub number: u64,
    /// The transactions' hashes, in the block's order.
    pub tx_hashes: Vec<Hash>,
    pub txs: Vec<(Transaction, Address)>,
    pub receipts: Vec<Receipt>,
    first_logs: Vec<u64>,
    /// The gas used by the block's transactions up to and including each.
    cumulative_gas: Vec<u64>,
}

impl RecentBlock {
    pub fn new(
        hash: Hash,
        number: u64,
        tx_hashes: Vec<Hash>,
        txs: Vec<(Transaction, Address)>,
        receipts: Vec<Receipt>,
    ) -> RecentBlock {
        let mut first_logs = Vec::with_capacity(receipts.len());
        let mut cumulative_gas = Vec::with_capacity(receipts.len());
        let (mut logs, mut gas) = (0, 0);
        for r in &receipts {
            first_logs.push(logs);
            logs += r.logs.len() as u64;
            gas += r.gas_used;
            cumulative_gas.push(gas);
        }
        RecentBlock {
            hash,
            number,
            tx_hashes,
            txs,
            receipts,
            first_logs,
            cumulative_gas,
        }
    }
}

/// The last blocks this node sealed, decoded. A client waiting for its transactions asks for
/// each one's receipt as soon as the block is out; from the stored block that costs decoding
/// every transaction and receipt of the block and recovering the sender, for each look-up
/// (milliseconds for a block of thousands). Kept here, with the transactions by hash, it is
/// one look-up in memory (no database read, not the pool's lock).
#[derive(Default)]
pub(super) struct RecentBlocks {
    blocks: std::collections::VecDeque<std::sync::Arc<RecentBlock>>,
    /// Transaction hash -> its block and index.
    by_tx: std::collections::HashMap<Hash, (std::sync::Arc<RecentBlock>, u32)>,
    txs: usize,
}

impl RecentBlocks {
    /// Keeps `b`, dropping the oldest blocks beyond [`RECENT_TXS`] transactions.
    pub fn push(&mut self, b: RecentBlock) {
        while !self.blocks.is_empty() && self.txs + b.txs.len() > RECENT_TXS {
            if let Some(old) = self.blocks.pop_front() {
                self.txs -= old.txs.len();
                for h in &old.tx_hashes {
                    self.by_tx.remove(h);
                }
            }
        }
        self.txs += b.txs.len();
        let b = std::sync::Arc::new(b);
        for (i, h) in b.tx_hashes.iter().enumerate() {
            self.by_tx.insert(*h, (b.clone(), i as u32));
        }
        self.blocks.push_back(b);
    }

    fn transaction(&self, hash: &Hash) -> Option<(std::sync::Arc<RecentBlock>, u32)> {
        self.by_tx.get(hash).cloned()
    }

    /// Forgets every block: the head moved other than by this node's sealing.
    pub fn clear(&mut self) {
        self.blocks.clear();
        self.by_tx.clear();
        self.txs = 0;
    }
}

impl RecentBlock {
    /// The record of the transaction at `index`.
    fn record(&self, index: u32) -> Option<TxRecord> {
        let i = index as usize;
        let ((tx, sender), receipt) = (self.txs.get(i)?, self.receipts.get(i)?);
        Some(TxRecord {
            tx: tx.clone(),
            sender: *sender,
            location: crate::types::json::Location {
                block_hash: self.hash,
                block_number: self.number,
                index: u64::from(index),
            },
            receipt: Some(SealedReceipt {
                receipt: receipt.clone(),
                first_log: self.first_logs[i],
                cumulative_gas: self.cumulative_gas[i],
                contract: created_contract(tx, sender),
            }),
        })
    }
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
    /// The receipt; `None` while pending.
    pub receipt: Option<SealedReceipt>,
}

/// A sealed transaction's receipt, with what its JSON needs besides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedReceipt {
    pub receipt: Receipt,
    /// The block-wide index of its first log.
    pub first_log: u64,
    /// The gas the block's transactions used up to and including this one.
    pub cumulative_gas: u64,
    /// The contract a creation made (filled for every creation, as the reference does,
    /// even one that failed).
    pub contract: Option<Address>,
}

/// The address the receipt of `tx` from `sender` names as created.
pub fn created_contract(tx: &Transaction, sender: &Address) -> Option<Address> {
    tx.is_create()
        .then(|| crate::exec::create_address(sender, tx.nonce()))
}

/// The sender of a stored transaction: its `from`, or the signer of a legacy one.
pub(crate) fn sender_of(tx: &Transaction) -> Result<Address, String> {
    match tx.from() {
        Some(a) => Ok(a),
        None => tx
            .signers()
            .map_err(|e| e.to_string())?
            .first()
            .copied()
            .ok_or_else(|| "a transaction without a signature".to_string()),
    }
}

/// An account of a state as a dump shows it.
pub struct DumpEntry {
    /// Its address, when the chain knows it (the preimage of its trie key).
    pub address: Option<Address>,
    /// Its key in the state trie: the Keccak-256 of its address.
    pub key: Hash,
    pub account: Account,
}

/// What a dump shows of a contract: its code and its storage (slot hash, value).
pub type ContractDump = (Vec<u8>, Vec<(Hash, [u8; 32])>);

impl Chain {
    /// The code and storage of `account` (a contract of a state this chain keeps).
    pub fn contract_dump(&self, account: &Account) -> Result<Option<ContractDump>, ChainError> {
        let Some(c) = account.contract else {
            return Ok(None);
        };
        let nodes = self.db_nodes();
        let code = crate::state::code(&nodes, &c.code_hash)?;
        let storage = crate::state::storage_entries(&nodes, &c.storage_root)?;
        Ok(Some((code, storage)))
    }

    /// A transaction by its sender transaction hash: the fee-delegated transaction sealed
    /// with that sender hash, else the transaction whose hash it is (the two are the same for
    /// every other transaction), as the reference answers.
    pub fn transaction_by_sender_hash(
        &self,
        hash: &[u8; 32],
    ) -> Result<Option<TxRecord>, ChainError> {
        match self.db.tx_hash_by_sender(hash)? {
            Some(h) => self.transaction(&h),
            None => self.transaction(hash),
        }
    }

    /// A transaction by hash: sealed (with its block, index and receipt's status and gas
    /// used) or pending (no receipt). `None` when the chain has never seen it.
    pub fn transaction(&self, hash: &[u8; 32]) -> Result<Option<TxRecord>, ChainError> {
        // A transaction of a block this node sealed lately (not in the pool any more).
        let recent = self
            .recent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .transaction(hash);
        if let Some(record) = recent.and_then(|(b, index)| b.record(index)) {
            return Ok(Some(record));
        }
        {
            let adm = self.admission();
            let pending = adm
                .pool
                .find(hash)
                .map(|p| (p.tx.clone(), p.sender))
                .or_else(|| adm.sealing.get(hash).cloned());
            if let Some((tx, sender)) = pending {
                return Ok(Some(TxRecord {
                    tx,
                    sender,
                    location: crate::types::json::Location::PENDING,
                    receipt: None,
                }));
            }
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
        let sender = sender_of(&tx).map_err(|e| corrupt(&e))?;
        let receipts = self
            .db
            .receipts(&block_hash)?
            .ok_or_else(|| corrupt("receipts missing"))?;
        let receipts = Receipt::decode_list(&receipts).map_err(|e| corrupt(&e.to_string()))?;
        let before = receipts.iter().take(index as usize);
        let first_log = before.clone().map(|r| r.logs.len() as u64).sum();
        let gas_before: u64 = before.map(|r| r.gas_used).sum();
        let receipt = receipts
            .into_iter()
            .nth(index as usize)
            .map(|receipt| SealedReceipt {
                cumulative_gas: gas_before + receipt.gas_used,
                receipt,
                first_log,
                contract: created_contract(&tx, &sender),
            });
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
        let Some(block) = self.db.block(hash)? else {
            return Ok(None);
        };
        let (header_rlp, tx_list) = db::split_block(&block)?;
        let header = Header::decode(header_rlp).map_err(|e| corrupt(e.to_string()))?;
        let txs =
            crate::types::block::decode_tx_list(tx_list).map_err(|e| corrupt(e.to_string()))?;
        let size = block.len() as u64;
        let mut transactions = Vec::with_capacity(txs.len());
        for tx in txs {
            let sender = sender_of(&tx).map_err(corrupt)?;
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

    /// The blocks an import refused lately (at most [`BAD_BLOCKS`]), newest last, with why.
    pub fn bad_blocks(&self) -> Vec<(crate::types::block::Block, String)> {
        self.bad_blocks
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .cloned()
            .collect()
    }

    pub(crate) fn remember_bad_block(&self, block: crate::types::block::Block, why: String) {
        let mut bad = self.bad_blocks.lock().unwrap_or_else(|p| p.into_inner());
        if bad.len() == BAD_BLOCKS {
            bad.pop_front();
        }
        bad.push_back((block, why));
    }

    /// Every account of the state of block `number` (the head when `None`), collected (a
    /// state's size in memory: [`Chain::visit_dump`] is the walk without it). `None` when
    /// the chain lacks the block.
    pub fn dump(&self, number: Option<u64>) -> Result<Option<(Hash, Vec<DumpEntry>)>, ChainError> {
        let mut out = Vec::new();
        let root = self.visit_dump(number, &[0; 32], &mut |e| {
            out.push(e);
            true
        })?;
        Ok(root.map(|r| (r, out)))
    }

    /// Calls `visit` with the accounts of the state of block `number` (the head when
    /// `None`) from trie key `start` on, in trie-key order, until it returns false; one
    /// account in memory at a time. The state root; `None` when the chain lacks the block.
    /// Fails when the state was removed by a migration or a node is missing.
    pub fn visit_dump(
        &self,
        number: Option<u64>,
        start: &Hash,
        visit: &mut dyn FnMut(DumpEntry) -> bool,
    ) -> Result<Option<Hash>, ChainError> {
        let number = number.unwrap_or_else(|| self.head_number());
        let Some((_, header)) = self.header_at(number)? else {
            return Ok(None);
        };
        self.check_state_kept(number)?;
        let nodes = self.db_nodes();
        let mut failed = None;
        State::at(&nodes, header.state_root).visit_accounts_from(start, &mut |key, account| {
            match self.db.trie_node(key) {
                Ok(preimage) => visit(DumpEntry {
                    address: preimage
                        .filter(|b| b.len() == 20)
                        .map(|b| Address(b.try_into().expect("20 bytes"))),
                    key: *key,
                    account,
                }),
                Err(e) => {
                    failed = Some(e);
                    false
                }
            }
        })?;
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(Some(header.state_root)),
        }
    }

    /// Calls `visit` with the hash of every trie node of the state of block `number` (the
    /// account trie's, then each contract's storage trie's and code's), none collected.
    /// The state root; `None` when the chain lacks the block.
    pub fn visit_state_nodes(
        &self,
        number: Option<u64>,
        visit: &mut dyn FnMut(&Hash),
    ) -> Result<Option<Hash>, ChainError> {
        let number = number.unwrap_or_else(|| self.head_number());
        let Some((_, header)) = self.header_at(number)? else {
            return Ok(None);
        };
        self.check_state_kept(number)?;
        let nodes = self.db_nodes();
        crate::state::reachable(&nodes, header.state_root, &mut |h, _| visit(h))?;
        Ok(Some(header.state_root))
    }

    /// The accounts whose state differs between block `start` and block `end` (balances,
    /// nonces, keys, code, storage: whatever the blocks in between changed, contracts'
    /// doings included), sorted. Found by comparing the two state tries, skipping what they
    /// share. `None` when the chain lacks one of the blocks. An account whose address is not
    /// known (no preimage) is left out.
    pub fn modified_accounts(
        &self,
        start: u64,
        end: u64,
    ) -> Result<Option<Vec<Address>>, ChainError> {
        let (Some((_, a)), Some((_, b))) = (self.header_at(start)?, self.header_at(end)?) else {
            return Ok(None);
        };
        self.check_state_kept(start)?;
        let nodes = self.db_nodes();
        let keys = crate::trie::diff::changed_keys(&nodes, a.state_root, b.state_root)
            .map_err(StateError::from)?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let Ok(key) = <[u8; 32]>::try_from(key.as_slice()) else {
                continue;
            };
            if let Some(pre) = self.db.trie_node(&key)?.filter(|b| b.len() == 20) {
                out.push(Address(pre.try_into().expect("20 bytes")));
            }
        }
        out.sort();
        Ok(Some(out))
    }

    /// The number of nodes of `contract`'s storage trie in the state of block `end` that its
    /// storage trie in the state of block `start` does not have. `None` when the chain lacks
    /// a block.
    pub fn modified_storage_nodes(
        &self,
        contract: &Address,
        start: u64,
        end: u64,
    ) -> Result<Option<usize>, ChainError> {
        let (Some((_, a)), Some((_, b))) = (self.header_at(start)?, self.header_at(end)?) else {
            return Ok(None);
        };
        self.check_state_kept(start)?;
        let nodes = self.db_nodes();
        let root = |state_root| -> Result<Hash, ChainError> {
            Ok(State::at(&nodes, state_root)
                .account(contract)?
                .storage_root())
        };
        let (ra, rb) = (root(a.state_root)?, root(b.state_root)?);
        let mut before = std::collections::HashSet::new();
        crate::trie::reachable(&nodes, ra, &mut |h, _| {
            before.insert(*h);
        })
        .map_err(StateError::from)?;
        let mut count = 0;
        crate::trie::reachable(&nodes, rb, &mut |h, _| {
            count += usize::from(!before.contains(h));
        })
        .map_err(StateError::from)?;
        Ok(Some(count))
    }

    /// The canonical header at `number`, with its hash.
    pub fn header_at(&self, number: u64) -> Result<Option<(Hash, Header)>, ChainError> {
        // The head's is in memory (every call and read at "latest" asks for it).
        let head = self.head();
        if head.header.number == number {
            return Ok(Some((head.hash, head.header)));
        }
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

    /// The header of the block with this hash, canonical or not (a block a rewind left
    /// behind is still stored).
    pub fn header_by_hash(&self, hash: &Hash) -> Result<Option<Header>, ChainError> {
        let Some(bytes) = self.db.header(hash)? else {
            return Ok(None);
        };
        Header::decode(&bytes)
            .map(Some)
            .map_err(|e| ChainError::Corrupt(format!("block 0x{}: {e}", hex::encode(hash))))
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
                Some((_, h)) => {
                    self.check_state_kept(n)?;
                    h.state_root
                }
                None => return Ok(None),
            },
        };
        let nodes = self.db_nodes();
        Ok(Some(State::at(&nodes, root).account(address)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::SecretKey;
    use crate::types::transaction::Legacy;

    /// A transaction of a block this node sealed reads the same from the recent blocks as
    /// from the stored block: sender, location, receipt, the index of its first log.
    #[test]
    fn recent_blocks_answer_as_the_stored_block() {
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &Genesis::dev(key.address(), funds)).unwrap();
        let code = {
            let path = format!(
                "{}/tests/contracts/out/Counter.json",
                env!("CARGO_MANIFEST_DIR")
            );
            let v: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
            hex::decode(v["bytecode"].as_str().unwrap().trim_start_matches("0x")).unwrap()
        };
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let tx = |nonce: u64, to: Option<Address>, input: Vec<u8>| {
            let mut t = Transaction::Legacy(Legacy {
                nonce,
                gas_price: price,
                gas: 500_000,
                to,
                value: [0; 32],
                input,
                signature: None,
            });
            t.sign(&key, chain.chain_id());
            t
        };
        chain.submit(tx(0, None, code)).unwrap();
        chain.seal(&key).unwrap().unwrap();
        let counter = crate::exec::create_address(&key.address(), 0);
        // increment() logs once: the second call's first log is the block's second.
        let hashes: Vec<Hash> = (1..4)
            .map(|n| {
                let input = if n == 2 {
                    Vec::new()
                } else {
                    hex::decode("d09de08a").unwrap()
                };
                let to = if n == 2 { Address([0x35; 20]) } else { counter };
                chain.submit(tx(n, Some(to), input)).unwrap()
            })
            .collect();
        chain.seal(&key).unwrap().unwrap();
        let recent: Vec<String> = hashes
            .iter()
            .map(|h| format!("{:?}", chain.transaction(h).unwrap().unwrap()))
            .collect();
        chain
            .recent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        let stored: Vec<TxRecord> = hashes
            .iter()
            .map(|h| chain.transaction(h).unwrap().unwrap())
            .collect();
        assert_eq!(stored[2].receipt.as_ref().unwrap().first_log, 1);
        assert_eq!(stored[0].sender, key.address());
        let stored: Vec<String> = stored.iter().map(|r| format!("{r:?}")).collect();
        assert_eq!(recent, stored);
    }
}
