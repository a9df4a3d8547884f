//! The feeds of the `chain` and `eth` subscription kinds ([`ChainFeeds`]) and the
//! `rpc-notify` service filling them: events of the node's bus turned into notifications
//! (`newHeads`, in the `eth` namespace in Ethereum's shape, and `newPendingTransactions`),
//! each serialized once.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;

use super::HexOut;
use crate::crypto;
use crate::events::{Bus, Event, Gone, Kinds, NewHead, Subscriber};
use crate::rpc::Feed;
use crate::service::{Service, Worker};

/// The `newHeads` payload.
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
    /// New block headers in Ethereum's shape (the `eth` namespace's `newHeads`).
    pub eth_new_heads: Arc<Feed>,
    /// How a new head's Ethereum-shaped header is made from its hash (set by the `eth`
    /// namespace, which knows the chain; unset, `eth` `newHeads` has nothing to send).
    pub eth_head: std::sync::OnceLock<EthHeadFn>,
}

/// The Ethereum-shaped header of the block with this hash, if the chain has it.
pub type EthHeadFn = Box<dyn Fn(&[u8; 32]) -> Option<serde_json::Value> + Send + Sync>;

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
            if feeds.eth_new_heads.subscriber_count() > 0 {
                if let Some(eth) = feeds.eth_head.get().and_then(|f| f(&h.hash)) {
                    feeds.eth_new_heads.publish(&eth);
                }
            }
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
