//! Subscriptions over stream transports (WebSocket, IPC): per-connection state, the limit,
//! the notification envelope, and [`Feed`], the event source that subscription kinds attach to.
//!
//! Notifications produced before the subscribe response has been written are buffered and
//! sent after it ([`Connection::activate`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use serde_json::Value;

use super::error::RpcError;
use super::params::Params;

/// The process-wide limit of subscriptions per connection (`admin_setMaxSubscriptionPerWSConn`),
/// shared by every WebSocket and IPC connection.
#[derive(Debug, Clone)]
pub struct SubscriptionLimit(Arc<AtomicI64>);

/// The default limit, as in the reference.
pub const DEFAULT_SUBSCRIPTION_LIMIT: i64 = 3000;

impl Default for SubscriptionLimit {
    fn default() -> Self {
        SubscriptionLimit(Arc::new(AtomicI64::new(DEFAULT_SUBSCRIPTION_LIMIT)))
    }
}

impl SubscriptionLimit {
    pub fn get(&self) -> i64 {
        self.0.load(Ordering::SeqCst)
    }
    pub fn set(&self, n: i64) {
        self.0.store(n, Ordering::SeqCst)
    }
    /// The error of a subscribe call beyond the limit.
    pub fn exceeded(n: i64) -> RpcError {
        RpcError::server(format!(
            "Maximum {n} subscriptions are allowed for a websocket connection. The limit can be updated with 'admin_setMaxSubscriptionPerWSConn' API"
        ))
    }
}

/// Something that can be subscribed to (`chain_subscribe` with its name). `subscribe` gets
/// the arguments after the name and a notifier; it fails with a -32602 error for bad
/// arguments.
pub trait SubscriptionKind: Send + Sync {
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<(), RpcError>;
}

struct SubState {
    /// `<module>_subscription`.
    method: String,
    id: String,
    cancelled: AtomicBool,
    /// `None` once active; before that, notifications waiting for the subscribe response.
    pending: Mutex<Option<Vec<String>>>,
}

/// One client connection of a stream transport, as the subscription machinery sees it.
pub struct Connection {
    /// Queues a message for the connection's writer; false once the connection is gone.
    sink: Box<dyn Fn(String) -> bool + Send + Sync>,
    subs: Mutex<HashMap<String, Arc<SubState>>>,
    closed: AtomicBool,
}

impl Connection {
    /// A connection whose outgoing messages go to `sink` (typically a channel to the
    /// connection's writer, so that no lock is held across a network write).
    pub fn new(sink: impl Fn(String) -> bool + Send + Sync + 'static) -> Arc<Connection> {
        Arc::new(Connection {
            sink: Box::new(sink),
            subs: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    fn subs(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<SubState>>> {
        self.subs.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Number of live subscriptions, pending ones included.
    pub fn subscription_count(&self) -> usize {
        self.subs().len()
    }

    /// Registers a new subscription of `module` and returns its notifier (not yet active).
    pub fn add(self: &Arc<Self>, module: &str) -> Notifier {
        let id = new_subscription_id();
        let state = Arc::new(SubState {
            method: format!("{module}_subscription"),
            id: id.clone(),
            cancelled: AtomicBool::new(false),
            pending: Mutex::new(Some(Vec::new())),
        });
        self.subs().insert(id, state.clone());
        Notifier {
            conn: Arc::downgrade(self),
            state,
        }
    }

    /// Removes subscription `id`: false when this connection has no such subscription.
    pub fn remove(&self, id: &str) -> bool {
        match self.subs().remove(id) {
            Some(s) => {
                s.cancelled.store(true, Ordering::SeqCst);
                true
            }
            None => false,
        }
    }

    /// Sends the notifications buffered while their subscribe responses were being written.
    /// Transports call it right after writing a response.
    pub fn activate(&self) {
        let states: Vec<Arc<SubState>> = self.subs().values().cloned().collect();
        for s in states {
            let mut p = s.pending.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(buffered) = p.take() {
                for m in buffered {
                    (self.sink)(m);
                }
            }
        }
    }

    /// Cancels every subscription; later notifications are dropped.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for (_, s) in self.subs().drain() {
            s.cancelled.store(true, Ordering::SeqCst);
        }
    }
}

/// Sends notifications of one subscription.
#[derive(Clone)]
pub struct Notifier {
    conn: Weak<Connection>,
    state: Arc<SubState>,
}

impl Notifier {
    pub fn id(&self) -> &str {
        &self.state.id
    }

    /// True while the subscription lives (not unsubscribed, connection open).
    pub fn is_live(&self) -> bool {
        !self.state.cancelled.load(Ordering::SeqCst)
            && self
                .conn
                .upgrade()
                .is_some_and(|c| !c.closed.load(Ordering::SeqCst))
    }

    /// Sends `{"jsonrpc":"2.0","method":"<module>_subscription","params":{"subscription":id,
    /// "result":payload}}`, buffered until the subscribe response is out. False when the
    /// subscription is gone (the caller should drop this notifier).
    pub fn notify(&self, payload: &Value) -> bool {
        if !self.is_live() {
            return false;
        }
        let Some(conn) = self.conn.upgrade() else {
            return false;
        };
        let msg = serde_json::json!({
            "jsonrpc": "2.0",
            "method": self.state.method,
            "params": {"subscription": self.state.id, "result": payload},
        })
        .to_string();
        let mut p = self.state.pending.lock().unwrap_or_else(|e| e.into_inner());
        match p.as_mut() {
            Some(buf) => {
                buf.push(msg);
                true
            }
            None => (conn.sink)(msg),
        }
    }
}

/// `0x` + lower-case hex of 16 random bytes, leading zeros stripped (`0x0` if all zero).
pub fn new_subscription_id() -> String {
    let mut b = [0u8; 16];
    getrandom::getrandom(&mut b).expect("operating system random source failed");
    let h = hex::encode(b);
    let t = h.trim_start_matches('0');
    format!("0x{}", if t.is_empty() { "0" } else { t })
}

/// An event source: every published value goes to every live subscriber.
#[derive(Default)]
pub struct Feed {
    subscribers: Mutex<Vec<Notifier>>,
}

impl Feed {
    pub fn new() -> Arc<Feed> {
        Arc::new(Feed::default())
    }

    /// Sends `payload` to every live subscriber and forgets the dead ones.
    pub fn publish(&self, payload: &Value) {
        let subs: Vec<Notifier> = self
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let dead: Vec<String> = subs
            .iter()
            .filter(|n| !n.notify(payload))
            .map(|n| n.id().to_string())
            .collect();
        if !dead.is_empty() {
            self.subscribers
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|n| !dead.iter().any(|d| d == n.id()));
        }
    }

    /// Number of live subscribers.
    pub fn subscriber_count(&self) -> usize {
        let mut s = self.subscribers.lock().unwrap_or_else(|e| e.into_inner());
        s.retain(Notifier::is_live);
        s.len()
    }
}

/// A subscription kind that takes no arguments and forwards a [`Feed`].
pub struct FeedKind(pub Arc<Feed>);

impl SubscriptionKind for FeedKind {
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<(), RpcError> {
        // The name was argument 0, so surplus arguments start at index 1.
        if !args.is_empty() {
            return Err(RpcError::invalid_params(
                "too many arguments, want at most 1",
            ));
        }
        self.0
            .subscribers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(notifier);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn notifications_wait_for_activation_and_stop_after_unsubscribe() {
        let (tx, rx) = mpsc::channel::<String>();
        let conn = Connection::new(move |m| tx.send(m).is_ok());
        let feed = Feed::new();
        let n = conn.add("chain");
        FeedKind(feed.clone())
            .subscribe(&Params::default(), n.clone())
            .unwrap();
        feed.publish(&serde_json::json!(1));
        assert!(
            rx.try_recv().is_err(),
            "buffered until the response is written"
        );
        conn.activate();
        let m: Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(m["method"], "chain_subscription");
        assert_eq!(m["params"]["subscription"], n.id());
        assert_eq!(m["params"]["result"], 1);
        assert!(m.get("id").is_none());
        assert!(conn.remove(n.id()));
        assert!(!conn.remove(n.id()));
        feed.publish(&serde_json::json!(2));
        assert!(rx.try_recv().is_err());
        assert_eq!(feed.subscriber_count(), 0);
    }

    #[test]
    fn subscription_ids_are_short_hex() {
        for _ in 0..100 {
            let id = new_subscription_id();
            assert!(id.starts_with("0x") && id.len() <= 34 && id.len() > 2);
            assert!(id == "0x0" || !id[2..].starts_with('0'));
        }
    }
}
