//! Subscriptions over stream transports (WebSocket, IPC): per-connection state, the limit,
//! the notification envelope, and [`Feed`], the event source that subscription kinds attach to.
//!
//! Notifications produced before the subscribe response has been written are buffered and
//! sent after it ([`Connection::activate`]).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use serde_json::value::RawValue;
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
/// arguments. It returns what keeps the notifier attached to its source: the connection
/// holds it while the subscription lives and drops it on unsubscribe or disconnect, which
/// detaches (and frees) the notifier at once.
pub trait SubscriptionKind: Send + Sync {
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<Attachment, RpcError>;
}

/// Keeps a notifier attached to its source; dropping it detaches the notifier.
pub struct Attachment(#[allow(dead_code)] Box<dyn Send + Sync>);

impl Attachment {
    /// An attachment that runs `detach` when dropped.
    pub fn on_drop(detach: impl FnOnce() + Send + Sync + 'static) -> Attachment {
        struct OnDrop<F: FnOnce()>(Option<F>);
        impl<F: FnOnce()> Drop for OnDrop<F> {
            fn drop(&mut self) {
                if let Some(f) = self.0.take() {
                    f()
                }
            }
        }
        Attachment(Box::new(OnDrop(Some(detach))))
    }
}

struct SubState {
    id: String,
    /// `{"jsonrpc":"2.0","method":"<module>_subscription","params":{"subscription":"<id>",
    /// "result":` : every notification of this subscription starts so.
    head: String,
    cancelled: AtomicBool,
    /// `None` once active; before that, notifications waiting for the subscribe response.
    pending: Mutex<Option<Vec<String>>>,
    /// What keeps the notifier attached to its source; taken (and dropped) on removal.
    attachment: Mutex<Option<Attachment>>,
}

impl SubState {
    fn pending(&self) -> MutexGuard<'_, Option<Vec<String>>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the subscription cancelled and detaches it from its source, outside any lock of
    /// the connection (the source's own lock is taken to detach).
    fn cancel(&self) {
        self.cancelled.store(true, Ordering::SeqCst);
        let attachment = self
            .attachment
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        drop(attachment);
        self.pending().take();
    }
}

/// One client connection of a stream transport, as the subscription machinery sees it.
pub struct Connection {
    /// Queues a message for the connection's writer; false once the connection is gone.
    sink: Box<dyn Fn(String) -> bool + Send + Sync>,
    subs: Mutex<HashMap<String, Arc<SubState>>>,
    /// Subscriptions added since the last [`Connection::activate`], in the order they were
    /// made: what the next activation releases. Usually empty, so that a request on a
    /// connection with thousands of subscriptions costs no walk over them.
    inactive: Mutex<Vec<Arc<SubState>>>,
    closed: AtomicBool,
}

impl Connection {
    /// A connection whose outgoing messages go to `sink` (typically a channel to the
    /// connection's writer, so that no lock is held across a network write).
    pub fn new(sink: impl Fn(String) -> bool + Send + Sync + 'static) -> Arc<Connection> {
        Arc::new(Connection {
            sink: Box::new(sink),
            subs: Mutex::new(HashMap::new()),
            inactive: Mutex::new(Vec::new()),
            closed: AtomicBool::new(false),
        })
    }

    fn subs(&self) -> MutexGuard<'_, HashMap<String, Arc<SubState>>> {
        self.subs.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn inactive(&self) -> MutexGuard<'_, Vec<Arc<SubState>>> {
        self.inactive.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Number of live subscriptions, pending ones included.
    pub fn subscription_count(&self) -> usize {
        self.subs().len()
    }

    /// Registers a new subscription of `module` and returns its notifier (not yet active).
    pub fn add(self: &Arc<Self>, module: &str) -> Notifier {
        let id = new_subscription_id();
        let method =
            serde_json::to_string(&format!("{module}_subscription")).expect("a string serializes");
        let state = Arc::new(SubState {
            head: format!(
                r#"{{"jsonrpc":"2.0","method":{method},"params":{{"subscription":"{id}","result":"#
            ),
            id: id.clone(),
            cancelled: AtomicBool::new(false),
            pending: Mutex::new(Some(Vec::new())),
            attachment: Mutex::new(None),
        });
        self.subs().insert(id, state.clone());
        self.inactive().push(state.clone());
        Notifier {
            conn: Arc::downgrade(self),
            state,
        }
    }

    /// Keeps `attachment` for subscription `id` (made by [`Connection::add`]) until it is
    /// removed; when it is already gone (the connection closed meanwhile) the attachment is
    /// dropped at once.
    pub fn attach(&self, id: &str, attachment: Attachment) {
        let state = self.subs().get(id).cloned();
        match state {
            Some(s) => {
                *s.attachment.lock().unwrap_or_else(|e| e.into_inner()) = Some(attachment);
                // A close between the look-up and the store would have missed it.
                if s.cancelled.load(Ordering::SeqCst) {
                    s.cancel();
                }
            }
            None => drop(attachment),
        }
    }

    /// Removes subscription `id` and frees it: false when this connection has no such
    /// subscription.
    pub fn remove(&self, id: &str) -> bool {
        let removed = self.subs().remove(id);
        match removed {
            Some(s) => {
                s.cancel();
                true
            }
            None => false,
        }
    }

    /// Makes the subscriptions added since the last call active and sends the notifications
    /// they buffered meanwhile (none for those already removed). Transports call it right
    /// after writing a response; with no new subscription it only takes one uncontended lock.
    pub fn activate(&self) {
        let new = std::mem::take(&mut *self.inactive());
        for s in new {
            // Sent under the lock, so that a notification racing with this one cannot
            // overtake what was buffered.
            let mut p = s.pending();
            let buffered = p.take();
            if s.cancelled.load(Ordering::SeqCst) {
                continue;
            }
            for m in buffered.into_iter().flatten() {
                (self.sink)(m);
            }
        }
    }

    /// Cancels and frees every subscription; later notifications are dropped.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        self.inactive().clear();
        let subs: Vec<Arc<SubState>> = self.subs().drain().map(|(_, s)| s).collect();
        for s in subs {
            s.cancel();
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

    /// The connection, while the subscription lives (not unsubscribed, connection open).
    fn live_conn(&self) -> Option<Arc<Connection>> {
        if self.state.cancelled.load(Ordering::SeqCst) {
            return None;
        }
        self.conn
            .upgrade()
            .filter(|c| !c.closed.load(Ordering::SeqCst))
    }

    /// True while the subscription lives (not unsubscribed, connection open).
    pub fn is_live(&self) -> bool {
        self.live_conn().is_some()
    }

    /// Sends `{"jsonrpc":"2.0","method":"<module>_subscription","params":{"subscription":id,
    /// "result":payload}}`, buffered until the subscribe response is out. False when the
    /// subscription is gone (the caller should drop this notifier). To send one payload to
    /// many subscribers, serialize it once and use [`Notifier::notify_raw`], as
    /// [`Feed::publish`] does.
    pub fn notify(&self, payload: &Value) -> bool {
        if !self.is_live() {
            return false;
        }
        let raw = serde_json::value::to_raw_value(payload).expect("a JSON value serializes");
        self.notify_raw(&raw)
    }

    /// [`Notifier::notify`] with the payload already serialized: the text is copied into the
    /// envelope as is.
    pub fn notify_raw(&self, payload: &RawValue) -> bool {
        let Some(conn) = self.live_conn() else {
            return false;
        };
        let (head, payload) = (&self.state.head, payload.get());
        let mut msg = String::with_capacity(head.len() + payload.len() + 2);
        msg.push_str(head);
        msg.push_str(payload);
        msg.push_str("}}");
        let mut p = self.state.pending();
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

/// A source of notifications: every published value goes to every attached subscriber.
/// Subscribers are detached when their subscription ends (unsubscribe or disconnect), not
/// when something is next published, so a feed holds only live subscriptions.
#[derive(Default)]
pub struct Feed {
    subscribers: Mutex<HashMap<u64, Notifier>>,
    next: std::sync::atomic::AtomicU64,
}

impl Feed {
    pub fn new() -> Arc<Feed> {
        Arc::new(Feed::default())
    }

    fn subscribers(&self) -> MutexGuard<'_, HashMap<u64, Notifier>> {
        self.subscribers.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Attaches `notifier` until the returned attachment is dropped.
    pub fn attach(self: &Arc<Self>, notifier: Notifier) -> Attachment {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        self.subscribers().insert(key, notifier);
        let feed = Arc::downgrade(self);
        Attachment::on_drop(move || {
            if let Some(f) = feed.upgrade() {
                let gone = f.subscribers().remove(&key);
                drop(gone); // outside the lock
            }
        })
    }

    /// Sends `payload` to every attached subscriber. The payload is serialized once,
    /// whatever the number of subscribers; sending never blocks (a connection that cannot
    /// take more is cut off by its transport).
    pub fn publish(&self, payload: &Value) {
        let subs: Vec<Notifier> = self.subscribers().values().cloned().collect();
        if subs.is_empty() {
            return;
        }
        let raw = serde_json::value::to_raw_value(payload).expect("a JSON value serializes");
        for n in &subs {
            n.notify_raw(&raw);
        }
    }

    /// Number of attached subscribers.
    pub fn subscriber_count(&self) -> usize {
        self.subscribers().len()
    }
}

/// A subscription kind that takes no arguments and forwards a [`Feed`].
pub struct FeedKind(pub Arc<Feed>);

impl SubscriptionKind for FeedKind {
    fn subscribe(&self, args: &Params, notifier: Notifier) -> Result<Attachment, RpcError> {
        // The name was argument 0, so surplus arguments start at index 1.
        if !args.is_empty() {
            return Err(RpcError::invalid_params(
                "too many arguments, want at most 1",
            ));
        }
        Ok(self.0.attach(notifier))
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
        let a = FeedKind(feed.clone())
            .subscribe(&Params::default(), n.clone())
            .unwrap();
        conn.attach(n.id(), a);
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
    fn the_envelope_is_built_around_the_payload_text() {
        let (tx, rx) = mpsc::channel::<String>();
        let conn = Connection::new(move |m| tx.send(m).is_ok());
        let feed = Feed::new();
        let (a, b) = (conn.add("chain"), conn.add("admin"));
        for n in [&a, &b] {
            let att = FeedKind(feed.clone())
                .subscribe(&Params::default(), n.clone())
                .unwrap();
            conn.attach(n.id(), att);
        }
        conn.activate();
        feed.publish(&serde_json::json!({"k": "a\"b", "n": [1, null]}));
        let want = |method: &str, id: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","method":"{method}","params":{{"subscription":"{id}","result":{{"k":"a\"b","n":[1,null]}}}}}}"#
            )
        };
        // One notification each; the feed keeps no order between subscriptions.
        let mut got = vec![rx.try_recv().unwrap(), rx.try_recv().unwrap()];
        got.sort();
        let mut wanted = vec![
            want("chain_subscription", a.id()),
            want("admin_subscription", b.id()),
        ];
        wanted.sort();
        assert_eq!(got, wanted);
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn activation_releases_new_subscriptions_in_order_and_skips_removed_ones() {
        let (tx, rx) = mpsc::channel::<String>();
        let conn = Connection::new(move |m| tx.send(m).is_ok());
        let (a, gone, b) = (conn.add("chain"), conn.add("chain"), conn.add("chain"));
        assert!(b.notify(&serde_json::json!("b")));
        assert!(gone.notify(&serde_json::json!("gone")));
        assert!(a.notify(&serde_json::json!("a")));
        // Unsubscribed (or a failed subscribe) before its reply went out: what it buffered
        // is dropped.
        assert!(conn.remove(gone.id()));
        assert!(rx.try_recv().is_err());
        conn.activate();
        let results: Vec<Value> = rx
            .try_iter()
            .map(|m| serde_json::from_str::<Value>(&m).unwrap()["params"]["result"].clone())
            .collect();
        assert_eq!(results, [serde_json::json!("a"), serde_json::json!("b")]);
        // Nothing new: activating again sends nothing; later notifications go straight out.
        conn.activate();
        assert!(rx.try_recv().is_err());
        assert!(a.notify(&serde_json::json!(2)));
        assert_eq!(rx.try_iter().count(), 1);
        assert!(!gone.notify(&serde_json::json!(3)));
    }

    #[test]
    fn unsubscribe_and_close_free_the_subscription_at_once() {
        let conn = Connection::new(|_| true);
        let feed = Feed::new();
        let mut weak = Vec::new();
        for _ in 0..1000 {
            let n = conn.add("chain");
            weak.push(Arc::downgrade(&n.state));
            let att = FeedKind(feed.clone())
                .subscribe(&Params::default(), n.clone())
                .unwrap();
            conn.attach(n.id(), att);
            conn.activate();
        }
        assert_eq!(
            (feed.subscriber_count(), conn.subscription_count()),
            (1000, 1000)
        );
        // Unsubscribe half: nothing is published in between, and yet they are gone.
        let ids: Vec<String> = conn.subs().keys().take(500).cloned().collect();
        for id in &ids {
            assert!(conn.remove(id));
        }
        assert_eq!(
            (feed.subscriber_count(), conn.subscription_count()),
            (500, 500)
        );
        // Disconnect: the rest go too, and no subscription state is left anywhere.
        conn.close();
        assert_eq!((feed.subscriber_count(), conn.subscription_count()), (0, 0));
        assert!(
            weak.iter().all(|w| w.upgrade().is_none()),
            "every SubState was freed"
        );
        // An attachment arriving after the close is dropped at once.
        let late = conn.add("chain");
        let att = FeedKind(feed.clone())
            .subscribe(&Params::default(), late.clone())
            .unwrap();
        conn.close();
        conn.attach(late.id(), att);
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
