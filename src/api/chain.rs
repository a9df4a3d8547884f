//! `chain`: signing with unlocked accounts, the account list, sending transactions, blocks
//! and transactions (by hash, by block and index, counts), the node's facts (chain id, client
//! and protocol versions, Keccak-256, sync progress, the hard forks in force), and the
//! subscription kinds `newHeads` and `newPendingTransactions`, fed from the node's event bus
//! by [`super::notify::NotificationPump`].

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::error::Error;
use super::error::{AccountError, Result};
use super::goparams::{BlockTag, HashParam, Index};
use super::logs::Missing;
use super::method::{opt, p, Method, Namespace, ParamKind as K, Subscription};
pub use super::notify::ChainFeeds;
use super::HexOut;
use crate::chain::state::{quantity, Account};
use crate::chain::Chain;
use crate::crypto::{self, Address};

use crate::keystore::{unlock::Unlocked, Error as KsError, Keystore};
use crate::method;
use crate::p2p::sync::SyncProgress;
use crate::rpc::{Call, FeedKind, HexBytes, Params};

use crate::types::json::{AccountKeyJson, BlockJson, ReceiptJson, TransactionJson};

/// How stale `chain_sign`'s look at the keystore directory may be: a key file removed by
/// another process is noticed within this. Looking on every call (a directory `stat`, which
/// threads on several cores contend for) cost a tenth of `chain_sign`'s throughput; the
/// node's keystore watch refreshes the index more often than this, so calls never look.
pub const KEYSTORE_RECHECK: Duration = Duration::from_secs(1);

/// The `chain` namespace.
pub struct ChainApi {
    keystore: Arc<Keystore>,
    unlocked: Arc<Unlocked>,
    feeds: Arc<ChainFeeds>,
    /// `None` on a node started without a chain.
    chain: Option<Arc<Chain>>,
    /// Where a sync from a peer is; `None` on a node without p2p (never syncing).
    sync: Option<Arc<dyn SyncStatus>>,
}

/// The chain's sync from peers as `chain_syncing` sees it: the API asks without knowing
/// peers or threads.
pub trait SyncStatus: Send + Sync {
    /// The sync running now, if any.
    fn progress(&self) -> Option<SyncProgress>;
}

/// `chain_syncing`'s object while a sync runs (the reference's; this node fetches no state
/// apart from blocks, so `pulledStates` and `knownStates` are 0).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SyncingJson {
    starting_block: String,
    current_block: String,
    highest_block: String,
    pulled_states: String,
    known_states: String,
}

/// `chain_syncing`'s answer: `false`, or where the sync is.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Syncing {
    No(bool),
    Yes(SyncingJson),
}

impl Syncing {
    /// The answer for a sync at `progress` (none: not syncing): `false` once our head has
    /// reached the peer's, as the reference says.
    pub fn of(progress: Option<SyncProgress>) -> Syncing {
        let q = |n: u64| format!("0x{n:x}");
        match progress {
            Some(p) if p.current < p.highest => Syncing::Yes(SyncingJson {
                starting_block: q(p.starting),
                current_block: q(p.current),
                highest_block: q(p.highest),
                pulled_states: q(0),
                known_states: q(0),
            }),
            _ => Syncing::No(false),
        }
    }
}

/// `chain_forkStatus`'s object: the reference prints a Go map of its `Rules` (its keys sorted,
/// as here) plus `IsKIP103`.
#[derive(Debug, Serialize)]
pub struct ForkStatusJson {
    #[serde(rename = "ChainID")]
    chain_id: u64,
    #[serde(rename = "IsCancun")]
    cancun: bool,
    #[serde(rename = "IsDragon")]
    dragon: bool,
    #[serde(rename = "IsEthTxType")]
    eth_tx_type: bool,
    #[serde(rename = "IsIstanbul")]
    istanbul: bool,
    #[serde(rename = "IsKIP103")]
    kip103: bool,
    #[serde(rename = "IsKore")]
    kore: bool,
    #[serde(rename = "IsLondon")]
    london: bool,
    #[serde(rename = "IsMagma")]
    magma: bool,
    #[serde(rename = "IsRandao")]
    randao: bool,
    #[serde(rename = "IsShanghai")]
    shanghai: bool,
}

impl Namespace for ChainApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_accounts",
            [],
            "The addresses of the keystore (same as personal_listAccounts)",
            "array of addresses",
            Self::accounts
        ),
        method!(
            "chain_sign",
            [p("address", K::Address), p("message", K::Bytes)],
            "Sign a message with an unlocked account",
            "string: the 65-byte signature, 0x-hex",
            Self::sign
        ),
        method!(
            "chain_blockNumber",
            [],
            "The number of the head block",
            "string: a 0x quantity",
            Self::block_number
        ),
        method!("chain_chainID", [], "The chain id",
            "string: a 0x quantity", Self::chain_id),
        method!(
            "chain_chainId",
            [],
            "The chain id (the same as chain_chainID)",
            "quantity: the chain id",
            Self::chain_id
        ),
        method!(
            "chain_clientVersion",
            [],
            "The node's name and version (the same as web3_clientVersion)",
            "string: the node's name and version",
            Self::client_version
        ),
        method!(
            "chain_protocolVersion",
            [],
            "The version of the peer protocol this node speaks, as a quantity",
            "quantity: the chain protocol version",
            Self::protocol_version
        ),
        method!(
            "chain_sha3",
            [p("data", K::Bytes)],
            "Keccak-256 of the given bytes (the same as web3_sha3)",
            "data: the Keccak-256 hash of the bytes",
            Self::sha3
        ),
        method!(
            "chain_syncing",
            [],
            "false, or while blocks are fetched from a peer: {startingBlock, currentBlock, highestBlock, pulledStates, knownStates}",
            "false, or object: startingBlock, currentBlock, highestBlock, ...",
            Self::syncing
        ),
        method!(
            "chain_isParallelDBWrite",
            [],
            "Whether blocks are written to the database in parallel (false: one transaction per block)",
            "bool: always false here",
            Self::is_parallel_db_write
        ),
        method!(
            "chain_isSenderTxHashIndexingEnabled",
            [],
            "Whether transactions are indexed by sender transaction hash (true: the index is always kept)",
            "bool: whether senderTxHash look-ups are indexed",
            Self::is_sender_tx_hash_indexing_enabled
        ),
        method!(
            "chain_forkStatus",
            [p("block", K::Any)],
            "Which of the reference's hard forks are active at a block, and the chain id",
            "object: each hard fork and whether it is active at the block",
            Self::fork_status
        ),
        method!(
            "chain_gasPrice",
            [],
            "The gas price every transaction must carry (the unit price)",
            "string: a 0x quantity",
            Self::gas_price
        ),
        method!(
            "chain_getBalance",
            [p("address", K::Address), opt("block", K::String)],
            "The balance of an account at a block (latest by default)",
            "string: a 0x quantity",
            Self::get_balance
        ),
        method!(
            "chain_sendTransaction",
            [p("args", K::Object)],
            "Sign a transaction of any type (typeInt) with an unlocked account and submit it; its hash",
            "string: the transaction hash",
            Self::send_transaction
        ),
        method!(
            "chain_signTransaction",
            [p("args", K::Object)],
            "Sign a transaction of any type (typeInt) with an unlocked account without sending it: {raw, tx}",
            "object: raw (0x-hex) and tx",
            Self::sign_transaction
        ),
        method!(
            "chain_sendTransactionAsFeePayer",
            [p("args", K::Object)],
            "Sign a fee-delegated transaction (typeInt 9, 10, 17, 18, 33, 34, 41, 42, 49, 50, 57, 58, 73, 74) as its feePayer, an unlocked account, beside the sender's signatures, and submit it; typeInt, nonce, gas, gasPrice and signatures must be given; its hash",
            "string: the transaction hash",
            Self::send_transaction_as_fee_payer
        ),
        method!(
            "chain_signTransactionAsFeePayer",
            [p("args", K::Object)],
            "Sign a fee-delegated transaction as its feePayer, an unlocked account, beside the sender's signatures if given, without sending it (nonce, gas and gasPrice filled in when left out): {raw, tx}",
            "object: raw (0x-hex) and tx",
            Self::sign_transaction_as_fee_payer
        ),
        method!(
            "chain_getTransactionBySenderTxHash",
            [p("hash", K::Hash)],
            "A sealed transaction by its senderTxHash (the hash of what the sender signed, without the fee payer's part; the transaction hash for a type that is not fee-delegated), or null",
            "object: the transaction, or null",
            Self::get_transaction_by_sender_tx_hash
        ),
        method!(
            "chain_getTransactionReceiptBySenderTxHash",
            [p("hash", K::Hash)],
            "The receipt of a sealed transaction by its senderTxHash (as chain_getTransactionBySenderTxHash finds it), or null",
            "object: the receipt, or null",
            Self::get_transaction_receipt_by_sender_tx_hash
        ),
        method!(
            "chain_sendRawTransaction",
            [p("tx", K::Bytes)],
            "Submit a signed raw transaction to the pool; its hash",
            "string: the transaction hash",
            Self::send_raw_transaction
        ),
        method!(
            "chain_getBlockByNumber",
            [p("block", K::String), opt("fullTransactions", K::Bool)],
            "A block by number (or latest, earliest, pending); null when the chain lacks it",
            "block object, or null",
            Self::get_block_by_number
        ),
        method!(
            "chain_getBlockByHash",
            [p("hash", K::Hash), opt("fullTransactions", K::Bool)],
            "A block by hash; null when unknown",
            "block object, or null",
            Self::get_block_by_hash
        ),
        method!(
            "chain_getBlockTransactionCountByNumber",
            [p("block", K::Any)],
            "The number of transactions of a block by number (or latest, earliest, pending)",
            "quantity: the number of transactions in the block",
            Self::block_transaction_count_by_number
        ),
        method!(
            "chain_getBlockTransactionCountByHash",
            [p("hash", K::Hash)],
            "The number of transactions of a block by hash",
            "quantity: the number of transactions in the block",
            Self::block_transaction_count_by_hash
        ),
        method!(
            "chain_getTransactionByBlockNumberAndIndex",
            [p("block", K::Any), p("index", K::String)],
            "A transaction by block number and index (null past the block's last)",
            "object: the transaction, or null",
            Self::transaction_by_block_number_and_index
        ),
        method!(
            "chain_getTransactionByBlockHashAndIndex",
            [p("hash", K::Hash), p("index", K::String)],
            "A transaction by block hash and index (null past the block's last)",
            "object: the transaction, or null",
            Self::transaction_by_block_hash_and_index
        ),
        method!(
            "chain_getAccountKey",
            [p("address", K::Address), opt("block", K::String)],
            "The account key of an address at a block (latest by default)",
            "account key object, or null",
            Self::get_account_key
        ),
        method!(
            "chain_getTransactionByHash",
            [p("hash", K::Hash)],
            "A transaction by hash, sealed or pending (null when unknown)",
            "transaction object, or null",
            Self::get_transaction_by_hash
        ),
        method!(
            "chain_getTransactionReceipt",
            [p("hash", K::Hash)],
            "The receipt of a sealed transaction (null when pending or unknown)",
            "receipt object, or null",
            Self::get_transaction_receipt
        ),
        method!(
            "chain_getTransactionCount",
            [p("address", K::Address), opt("block", K::String)],
            "The nonce of an account at a block (latest by default)",
            "string: a 0x quantity",
            Self::get_transaction_count
        ),
    ];
    const SUBSCRIPTIONS: &'static [Subscription<Self>] = &[
        Subscription {
            name: "newHeads",
            summary: "Each new block header",
            kind: |a| Arc::new(FeedKind(a.feeds.new_heads.clone())),
        },
        Subscription {
            name: "newPendingTransactions",
            summary: "The hash of each transaction entering the pool",
            kind: |a| Arc::new(FeedKind(a.feeds.new_pending_transactions.clone())),
        },
        Subscription {
            name: "logs",
            summary: "Each log of a new block matching filter criteria, one per notification",
            kind: |a| a.feeds.logs.clone(),
        },
    ];
}

impl ChainApi {
    pub fn new(
        keystore: Arc<Keystore>,
        unlocked: Arc<Unlocked>,
        feeds: Arc<ChainFeeds>,
        chain: Option<Arc<Chain>>,
    ) -> ChainApi {
        ChainApi {
            keystore,
            unlocked,
            feeds,
            chain,
            sync: None,
        }
    }

    /// The sync `chain_syncing` reports on.
    pub fn with_sync(mut self, sync: Option<Arc<dyn SyncStatus>>) -> ChainApi {
        self.sync = sync;
        self
    }

    pub(super) fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// `chain_blockNumber`: the head block's number, as a quantity.
    pub(super) fn block_number(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", self.chain()?.head_number()))
    }

    /// `chain_chainID`: the chain id, as a quantity.
    pub(super) fn chain_id(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", self.chain()?.chain_id()))
    }

    /// `chain_clientVersion`: `chaind/v<version>/<os>-<arch>/rust`.
    fn client_version(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(super::web3::client_version())
    }

    /// `chain_protocolVersion`: the peer protocol's version (`istanbul/65`), as a quantity.
    fn protocol_version(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", crate::p2p::wire::PROTOCOL_VERSION))
    }

    /// `chain_sha3(data)`: Keccak-256 of the bytes.
    fn sha3(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let data: HexBytes = p.required(0)?;
        Ok(HexOut(crypto::keccak256(&data.0).to_vec()))
    }

    /// `chain_syncing`: `false` unless blocks are being fetched from a peer whose head is
    /// beyond ours; then where the sync is.
    pub(super) fn syncing(&self, _: &Call, _: &Params) -> Result<Syncing> {
        Ok(Syncing::of(self.sync.as_ref().and_then(|s| s.progress())))
    }

    /// `chain_isParallelDBWrite`: false; a block's data goes to the database in one
    /// transaction, after its trie nodes are appended to the node file.
    fn is_parallel_db_write(&self, _: &Call, _: &Params) -> Result<bool> {
        Ok(false)
    }

    /// `chain_isSenderTxHashIndexingEnabled`: true; the index of sender transaction hashes is
    /// always kept (DECISIONS.md), where the reference keeps it only with
    /// `--sendertxhashindexing`.
    fn is_sender_tx_hash_indexing_enabled(&self, _: &Call, _: &Params) -> Result<bool> {
        Ok(true)
    }

    /// `chain_forkStatus(block)`: the forks active at a block of the chain (the same at
    /// every block: `chain::genesis::FORKS`); the reference's error for a block the chain
    /// lacks.
    fn fork_status(&self, _: &Call, p: &Params) -> Result<ForkStatusJson> {
        let tag: BlockTag = p.required(0)?;
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        chain.header_at(n)?.ok_or(Missing::BlockNumber(n))?;
        let f = crate::chain::genesis::FORKS;
        Ok(ForkStatusJson {
            chain_id: chain.chain_id(),
            cancun: f.cancun,
            dragon: f.dragon,
            eth_tx_type: f.eth_tx_type,
            istanbul: f.istanbul,
            kip103: f.kip103,
            kore: f.kore,
            london: f.london,
            magma: f.magma,
            randao: f.randao,
            shanghai: f.shanghai,
        })
    }

    /// The canonical block `tag` names, or the reference's error.
    fn block_at(&self, tag: BlockTag) -> Result<crate::chain::BlockRecord> {
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        Ok(chain
            .block_by_number(Some(n))?
            .ok_or(Missing::BlockNumber(n))?)
    }

    /// The block with this hash, or the reference's error.
    fn block_with_hash(&self, hash: [u8; 32]) -> Result<crate::chain::BlockRecord> {
        Ok(self
            .chain()?
            .block_by_hash(&hash)?
            .ok_or(Missing::BlockHash(hash))?)
    }

    /// `chain_getBlockTransactionCountByNumber(block)`: the count, as a quantity.
    fn block_transaction_count_by_number(&self, _: &Call, p: &Params) -> Result<String> {
        let block = self.block_at(p.required(0)?)?;
        Ok(format!("0x{:x}", block.transactions.len()))
    }

    /// `chain_getBlockTransactionCountByHash(hash)`: the count, as a quantity.
    fn block_transaction_count_by_hash(&self, _: &Call, p: &Params) -> Result<String> {
        let HashParam(hash) = p.required(0)?;
        let block = self.block_with_hash(hash)?;
        Ok(format!("0x{:x}", block.transactions.len()))
    }

    /// The transaction object of `block`'s transaction at `index`; `None` past its last.
    fn transaction_at(block: crate::chain::BlockRecord, index: u64) -> Option<TransactionJson> {
        let (tx, sender) = block.transactions.get(usize::try_from(index).ok()?)?;
        Some(TransactionJson::new(
            tx,
            *sender,
            crate::types::json::Location {
                block_hash: block.hash,
                block_number: block.header.number,
                index,
            },
        ))
    }

    /// `chain_getTransactionByBlockNumberAndIndex(block, index)`.
    fn transaction_by_block_number_and_index(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<Option<TransactionJson>> {
        let tag: BlockTag = p.required(0)?;
        let Index(index) = p.required(1)?;
        Ok(Self::transaction_at(self.block_at(tag)?, index))
    }

    /// `chain_getTransactionByBlockHashAndIndex(hash, index)`.
    fn transaction_by_block_hash_and_index(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<Option<TransactionJson>> {
        let HashParam(hash) = p.required(0)?;
        let Index(index) = p.required(1)?;
        Ok(Self::transaction_at(self.block_with_hash(hash)?, index))
    }

    /// `chain_gasPrice`: the unit price, as a quantity.
    pub(super) fn gas_price(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", self.chain()?.unit_price()))
    }

    /// The account of params `[address, block?]` (the block by number, tag or hash, as the
    /// reference's `BlockNumberOrHash`; absent: the head). A block the chain does not have is
    /// the reference's error (`the header does not exist (block number: <n>)`).
    fn account_at(&self, p: &Params) -> Result<Option<Account>> {
        let address: Address = p.required(0)?;
        let block = self.state_number(p, 1)?;
        Ok(self.chain()?.account(&address, block)?)
    }

    /// The block of the state parameter at `i`: `None` (the head) when absent or `null`.
    fn state_number(&self, p: &Params, i: usize) -> Result<Option<u64>> {
        if matches!(p.raw(i), None | Some(serde_json::Value::Null)) {
            return Ok(None);
        }
        let (_, header) = super::contract::block_param(self.chain()?, p, i)?;
        Ok(Some(header.number))
    }

    /// `chain_getAccountKey(address, block?)`: the JSON form of reference 7.6 (an address the
    /// state does not hold has the legacy key).
    fn get_account_key(&self, _: &Call, p: &Params) -> Result<Option<AccountKeyJson>> {
        Ok(self.account_at(p)?.map(|a| AccountKeyJson::from(&a.key)))
    }

    /// `chain_getBalance(address, block?)`: the balance, as a quantity.
    pub(super) fn get_balance(&self, _: &Call, p: &Params) -> Result<Option<String>> {
        Ok(self.account_at(p)?.map(|a| quantity(&a.balance)))
    }

    /// `chain_getTransactionCount(address, block?)`: the nonce, as a quantity; with
    /// `pending`, counting the sender's transactions in the pool.
    pub(super) fn get_transaction_count(&self, _: &Call, p: &Params) -> Result<Option<String>> {
        if p.raw(1).and_then(|v| v.as_str()) == Some("pending") {
            let address: Address = p.required(0)?;
            let n = self.chain()?.pending_nonce(&address)?;
            return Ok(Some(format!("0x{n:x}")));
        }
        Ok(self.account_at(p)?.map(|a| format!("0x{:x}", a.nonce)))
    }

    fn block_json(
        &self,
        b: Option<crate::chain::BlockRecord>,
        p: &Params,
    ) -> Result<Option<BlockJson>> {
        let full = p.optional::<bool>(1)?.unwrap_or(false);
        let chain = self.chain()?;
        Ok(b.map(|b| {
            BlockJson::new(
                b.hash,
                &b.header,
                &b.transactions,
                b.size,
                chain.total_block_score(b.header.number),
                full,
            )
        }))
    }

    /// `chain_getBlockByNumber(block, fullTransactions?)`: the block object of reference 10.8;
    /// a block the chain does not have is the reference's error (`the block does not exist
    /// (block number: <n>)`).
    fn get_block_by_number(&self, _: &Call, p: &Params) -> Result<Option<BlockJson>> {
        let tag: BlockTag = p.required(0)?;
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        let b = chain
            .block_by_number(Some(n))?
            .ok_or(Missing::BlockNumber(n))?;
        self.block_json(Some(b), p)
    }

    /// `chain_getBlockByHash(hash, fullTransactions?)`; a block the chain does not have is
    /// the reference's error (`the block does not exist (block hash: 0x..)`).
    fn get_block_by_hash(&self, _: &Call, p: &Params) -> Result<Option<BlockJson>> {
        let HashParam(hash) = p.required(0)?;
        let b = self
            .chain()?
            .block_by_hash(&hash)?
            .ok_or(Missing::BlockHash(hash))?;
        self.block_json(Some(b), p)
    }

    fn record(&self, p: &Params) -> Result<Option<crate::chain::TxRecord>> {
        let HashParam(hash) = p.required(0)?;
        Ok(self.chain()?.transaction(&hash)?)
    }

    /// `chain_getTransactionBySenderTxHash(hash)`: the transaction whose sender transaction
    /// hash this is (a fee-delegated one sealed), else whose hash it is.
    fn get_transaction_by_sender_tx_hash(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<Option<TransactionJson>> {
        let HashParam(hash) = p.required(0)?;
        Ok(self
            .chain()?
            .transaction_by_sender_hash(&hash)?
            .map(|r| TransactionJson::new(&r.tx, r.sender, r.location)))
    }

    /// `chain_getTransactionReceiptBySenderTxHash(hash)`: the receipt of the transaction
    /// `chain_getTransactionBySenderTxHash` finds.
    fn get_transaction_receipt_by_sender_tx_hash(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<Option<ReceiptJson>> {
        let HashParam(hash) = p.required(0)?;
        Ok(self
            .chain()?
            .transaction_by_sender_hash(&hash)?
            .and_then(receipt_json))
    }

    /// `chain_getTransactionByHash(hash)`: the transaction object of reference 11.1.
    fn get_transaction_by_hash(&self, _: &Call, p: &Params) -> Result<Option<TransactionJson>> {
        Ok(self
            .record(p)?
            .map(|r| TransactionJson::new(&r.tx, r.sender, r.location)))
    }

    /// `chain_getTransactionReceipt(hash)`: the receipt object of reference 11.1.
    fn get_transaction_receipt(&self, _: &Call, p: &Params) -> Result<Option<ReceiptJson>> {
        Ok(self.record(p)?.and_then(receipt_json))
    }

    /// `chain_sendRawTransaction(tx)`: decodes the raw bytes, checks the transaction fully
    /// against the head state and adds it to the pool; its hash.
    fn send_raw_transaction(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let raw: HexBytes = p.required(0)?;
        let chain = self.chain()?;
        let tx = crate::types::transaction::Transaction::decode(&raw.0)?;
        Ok(HexOut(chain.submit_local(tx)?.to_vec()))
    }

    /// The unlocked key of `from`: the account must still be in the keystore (`unknown
    /// account`), then unlocked (`authentication needed: password or unlock`).
    pub(super) fn unlocked_key(&self, from: Address) -> super::txargs::KeySource<'_> {
        Box::new(move || {
            if !self.keystore.contains_within(from, KEYSTORE_RECHECK) {
                return Err(KsError::UnknownAccount.into());
            }
            self.unlocked
                .key(from)
                .ok_or_else(|| AccountError::Locked.into())
        })
    }

    /// `chain_sendTransaction(tx)`: signed with the unlocked key of `from` and submitted;
    /// the hash. The nonce, when left out, is filled under the sender's nonce lock.
    fn send_transaction(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let args = super::txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let key = self.unlocked_key(args.from);
        Ok(HexOut(super::txargs::send(chain, &args, key)?.to_vec()))
    }

    /// `chain_signTransaction(tx)`: signed with the unlocked key of `from`, not submitted:
    /// `{raw, tx}`.
    fn sign_transaction(&self, _: &Call, p: &Params) -> Result<crate::types::json::SignedJson> {
        let args = super::txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let key = self.unlocked_key(args.from);
        Ok(crate::types::json::SignedJson::new(&super::txargs::sign(
            chain, &args, key,
        )?))
    }

    /// `chain_signTransactionAsFeePayer(tx)`: signed by the fee payer it names with its
    /// unlocked key, beside the sender's signatures given, not submitted: `{raw, tx}`.
    fn sign_transaction_as_fee_payer(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<crate::types::json::SignedJson> {
        let args = super::txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let key = |payer| self.unlocked_key(payer);
        Ok(crate::types::json::SignedJson::new(
            &super::txargs::sign_as_fee_payer(chain, &args, &key)?,
        ))
    }

    /// `chain_sendTransactionAsFeePayer(tx)`: as `chain_signTransactionAsFeePayer`, every
    /// member given, then submitted; the hash.
    fn send_transaction_as_fee_payer(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let args = super::txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let key = |payer| self.unlocked_key(payer);
        Ok(HexOut(
            super::txargs::send_as_fee_payer(chain, &args, &key)?.to_vec(),
        ))
    }

    /// `chain_accounts`: the addresses of the keystore, sorted by key-file URL.
    pub(super) fn accounts(&self, _: &Call, _: &Params) -> Result<Vec<Address>> {
        Ok(self.keystore.addresses())
    }

    /// `chain_sign(address, message)`: signs with an unlocked key. The account must still be
    /// in the keystore (`unknown account` once its key file is gone, even while its key is
    /// unlocked; noticed within [`KEYSTORE_RECHECK`]), then unlocked (`authentication needed:
    /// password or unlock`).
    pub(super) fn sign(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let address: Address = p.required(0)?;
        let message: HexBytes = p.required(1)?;
        if !self.keystore.contains_within(address, KEYSTORE_RECHECK) {
            return Err(KsError::UnknownAccount.into());
        }
        match self.unlocked.key(address) {
            Some(key) => Ok(HexOut(crypto::sign_message(&key, &message.0).to_vec())),
            None => Err(AccountError::Locked.into()),
        }
    }
}

/// The receipt object (reference 11.1) of a sealed transaction; `None` while it is pending.
pub(super) fn receipt_json(r: crate::chain::TxRecord) -> Option<ReceiptJson> {
    let sealed = r.receipt?;
    Some(
        TransactionJson::new(&r.tx, r.sender, r.location).into_receipt(
            &sealed.receipt,
            r.location,
            sealed.first_log,
            sealed.contract,
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rpc::FromParam;
    use serde_json::json;

    #[test]
    fn syncing_is_false_unless_a_peer_is_ahead() {
        let at = |starting, current, highest| {
            serde_json::to_value(Syncing::of(Some(SyncProgress {
                starting,
                current,
                highest,
            })))
            .unwrap()
        };
        assert_eq!(
            at(3, 5, 9),
            json!({"startingBlock": "0x3", "currentBlock": "0x5", "highestBlock": "0x9",
                   "pulledStates": "0x0", "knownStates": "0x0"})
        );
        assert_eq!(at(3, 9, 9), json!(false));
        assert_eq!(
            serde_json::to_value(Syncing::of(None)).unwrap(),
            json!(false)
        );
    }

    #[test]
    fn an_index_as_hexutil_reads_it() {
        let index = |v| Index::from_param(&v).map(|i| i.0);
        assert_eq!(index(json!("0x0")), Ok(0));
        assert_eq!(index(json!("0X1f")), Ok(31));
        assert_eq!(index(json!("0xffffffffffffffff")), Ok(u64::MAX));
        let text = |m: &str| {
            Err(format!(
                "json: cannot unmarshal {m} into Go value of type hexutil.Uint"
            ))
        };
        assert_eq!(index(json!("")), text("empty hex string"));
        assert_eq!(index(json!("0x")), text("hex string \"0x\""));
        assert_eq!(index(json!("0xg")), text("invalid hex string"));
        assert_eq!(index(json!(null)), text("non-string"));
    }
}
