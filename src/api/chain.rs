//! `chain`: signing with unlocked accounts, the account list, and the subscription kinds
//! `newHeads` and `newPendingTransactions`, fed from the node's event bus by
//! [`NotificationPump`].

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::error::Error;
use super::error::{AccountError, Result};
use super::method::{opt, p, Method, Namespace, ParamKind as K, Subscription};
use super::HexOut;
use super::goparams::{BlockTag, HashParam};
use super::logs::Missing;
use crate::chain::state::{quantity, Account};
use crate::chain::Chain;
use crate::crypto::{self, Address};
use crate::events::{Bus, Event, Gone, Kinds, NewHead, Subscriber};
use crate::keystore::{unlock::Unlocked, Error as KsError, Keystore};
use crate::method;
use crate::rpc::{Call, Feed, FeedKind, HexBytes, Params};
use crate::service::{Service, Worker};
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
}

/// Where notifications of the `chain` subscription kinds come from.
#[derive(Default)]
pub struct ChainFeeds {
    /// New block headers (`newHeads`).
    pub new_heads: Arc<Feed>,
    /// Hashes of transactions entering the pool (`newPendingTransactions`).
    pub new_pending_transactions: Arc<Feed>,
    /// The logs of new blocks, per subscriber's criteria (`logs`; fed by
    /// [`super::filters::FilterService`]).
    pub logs: Arc<super::filters::LogFeed>,
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
            "Sign a transaction (typeInt 0, 8 or 32) with an unlocked account and submit it; its hash",
            "string: the transaction hash",
            Self::send_transaction
        ),
        method!(
            "chain_signTransaction",
            [p("args", K::Object)],
            "Sign a transaction (typeInt 0, 8 or 32) with an unlocked account without sending it: {raw, tx}",
            "object: raw (0x-hex) and tx",
            Self::sign_transaction
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
            [p("hash", K::Bytes), opt("fullTransactions", K::Bool)],
            "A block by hash; null when unknown",
            "block object, or null",
            Self::get_block_by_hash
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
            [p("hash", K::Bytes)],
            "A transaction by hash, sealed or pending (null when unknown)",
            "transaction object, or null",
            Self::get_transaction_by_hash
        ),
        method!(
            "chain_getTransactionReceipt",
            [p("hash", K::Bytes)],
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
        }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// `chain_blockNumber`: the head block's number, as a quantity.
    fn block_number(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", self.chain()?.head_number()))
    }

    /// `chain_chainID`: the chain id, as a quantity.
    fn chain_id(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(format!("0x{:x}", self.chain()?.chain_id()))
    }

    /// `chain_gasPrice`: the unit price, as a quantity.
    fn gas_price(&self, _: &Call, _: &Params) -> Result<String> {
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
    fn get_balance(&self, _: &Call, p: &Params) -> Result<Option<String>> {
        Ok(self.account_at(p)?.map(|a| quantity(&a.balance)))
    }

    /// `chain_getTransactionCount(address, block?)`: the nonce, as a quantity; with
    /// `pending`, counting the sender's transactions in the pool.
    fn get_transaction_count(&self, _: &Call, p: &Params) -> Result<Option<String>> {
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
        let b = chain.block_by_number(Some(n))?.ok_or(Missing::BlockNumber(n))?;
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
        Ok(HexOut(chain.submit(tx)?.to_vec()))
    }

    /// The unlocked key of `from`: the account must still be in the keystore (`unknown
    /// account`), then unlocked (`authentication needed: password or unlock`).
    fn unlocked_key(&self, from: Address) -> super::txargs::KeySource<'_> {
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

    /// `chain_accounts`: the addresses of the keystore, sorted by key-file URL.
    fn accounts(&self, _: &Call, _: &Params) -> Result<Vec<Address>> {
        Ok(self.keystore.addresses())
    }

    /// `chain_sign(address, message)`: signs with an unlocked key. The account must still be
    /// in the keystore (`unknown account` once its key file is gone, even while its key is
    /// unlocked; noticed within [`KEYSTORE_RECHECK`]), then unlocked (`authentication needed:
    /// password or unlock`).
    fn sign(&self, _: &Call, p: &Params) -> Result<HexOut> {
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

/// The `newHeads` payload.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeadJson {
    hash: HexOut,
    number: String,
    parent_hash: HexOut,
    timestamp: String,
}

impl From<&NewHead> for HeadJson {
    fn from(h: &NewHead) -> HeadJson {
        HeadJson {
            hash: HexOut(h.hash.to_vec()),
            number: format!("0x{:x}", h.number),
            parent_hash: HexOut(h.parent_hash.to_vec()),
            timestamp: format!("0x{:x}", h.timestamp),
        }
    }
}

/// Events the pump may hold before it counts as fallen behind (and is re-subscribed).
const PUMP_CAPACITY: usize = 4096;
/// How often the pump looks at its stop flag while no event comes.
const PUMP_TICK: Duration = Duration::from_millis(100);

/// The service (`rpc-notify` thread) that turns events of the bus into notifications of the
/// `chain` subscription kinds: each event is serialized once and handed to every subscribed
/// connection, none of which can block it (a connection that cannot take more is cut off by
/// its transport).
pub struct NotificationPump {
    bus: Arc<Bus>,
    feeds: Arc<ChainFeeds>,
    worker: Option<Worker>,
}

impl NotificationPump {
    pub fn new(bus: Arc<Bus>, feeds: Arc<ChainFeeds>) -> NotificationPump {
        NotificationPump {
            bus,
            feeds,
            worker: None,
        }
    }
}

/// Hands one event to the feed of its kind.
fn deliver(feeds: &ChainFeeds, e: &Event) {
    match e {
        Event::NewHead(h) => {
            let payload = serde_json::to_value(HeadJson::from(&**h)).expect("a head serializes");
            feeds.new_heads.publish(&payload);
        }
        Event::PendingTransaction(hash) => {
            let payload = serde_json::Value::String(crypto::to_hex0x(hash));
            feeds.new_pending_transactions.publish(&payload);
        }
        Event::PeerAdded(_) | Event::PeerDropped(_) => {}
    }
}

impl Service for NotificationPump {
    fn name(&self) -> &'static str {
        "rpc-notify"
    }

    fn start(&mut self) -> std::result::Result<(), String> {
        let kinds = Kinds::NEW_HEAD.or(Kinds::PENDING_TRANSACTION);
        let (bus, feeds) = (self.bus.clone(), self.feeds.clone());
        let mut sub: Subscriber = bus.subscribe(kinds, PUMP_CAPACITY);
        self.worker = Some(Worker::spawn("rpc-notify", move |stop| {
            while !stop.is_set() {
                match sub.recv_timeout(PUMP_TICK) {
                    Ok(Some(e)) => deliver(&feeds, &e),
                    Ok(None) => {}
                    // Fallen behind a burst: the missed events are lost for subscribers, as
                    // for a slow connection; carry on with the next ones.
                    Err(Gone::CutOff) => {
                        crate::log::warn("Notification pump fell behind; events dropped", &[]);
                        sub = bus.subscribe(kinds, PUMP_CAPACITY);
                    }
                    Err(Gone::Closed) => return,
                }
            }
        })?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.stop();
        }
    }
}
