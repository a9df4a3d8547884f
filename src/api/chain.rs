//! `chain`: signing with unlocked accounts, the account list, and the subscription kinds
//! `newHeads` and `newPendingTransactions`, fed from the node's event bus by
//! [`NotificationPump`].

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::error::{AccountError, Result};
use super::method::{p, Method, Namespace, ParamKind as K, Subscription};
use super::HexOut;
use crate::crypto::{self, Address};
use crate::events::{Bus, Event, Gone, Kinds, NewHead, Subscriber};
use crate::keystore::{unlock::Unlocked, Error as KsError, Keystore};
use crate::method;
use crate::rpc::{Call, Feed, FeedKind, HexBytes, Params};
use crate::service::{Service, Worker};

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
}

/// Where notifications of the `chain` subscription kinds come from.
#[derive(Default)]
pub struct ChainFeeds {
    /// New block headers (`newHeads`).
    pub new_heads: Arc<Feed>,
    /// Hashes of transactions entering the pool (`newPendingTransactions`).
    pub new_pending_transactions: Arc<Feed>,
}

impl Namespace for ChainApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_accounts",
            [],
            "The addresses of the keystore (same as personal_listAccounts)",
            Self::accounts
        ),
        method!(
            "chain_sign",
            [p("address", K::Address), p("message", K::Bytes)],
            "Sign a message with an unlocked account",
            Self::sign
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
    ];
}

impl ChainApi {
    pub fn new(
        keystore: Arc<Keystore>,
        unlocked: Arc<Unlocked>,
        feeds: Arc<ChainFeeds>,
    ) -> ChainApi {
        ChainApi {
            keystore,
            unlocked,
            feeds,
        }
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
