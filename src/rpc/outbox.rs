//! The output queue of one stream connection (WebSocket or IPC), bounded in bytes.
//!
//! Two kinds of output wait in it. Replies come from the connection's own request loop,
//! which [`Outbox::put`] makes wait while more than the high mark is queued: a client that
//! sends requests without reading the answers gets no more requests read, instead of growing
//! the queue. Notifications come from publishers, which must never wait: [`Outbox::offer`]
//! queues one or, when the queue would pass its limit, closes the outbox, and the transport
//! cuts the connection off. So a connection holds at most `limit` bytes of output plus one
//! reply, whatever its client does.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Bytes of queued output beyond which a notification cuts the connection off.
pub const OUTBOX_LIMIT: usize = 4 << 20;
/// Bytes of queued output beyond which the request loop waits before queueing a reply.
pub const OUTBOX_HIGH: usize = 1 << 20;

struct State {
    queue: VecDeque<String>,
    bytes: usize,
    closed: bool,
}

/// A byte-bounded queue between the producers of one connection's output and its writer.
pub struct Outbox {
    limit: usize,
    high: usize,
    state: Mutex<State>,
    /// Signalled when output is queued or the outbox closes (the writer waits on it) and
    /// when output is taken (a reply waiting for room waits on it).
    changed: Condvar,
}

impl Outbox {
    /// An empty outbox that holds at most `limit` bytes of notifications and makes replies
    /// wait above `high` bytes.
    pub fn new(limit: usize, high: usize) -> Outbox {
        Outbox {
            limit,
            high: high.min(limit),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                bytes: 0,
                closed: false,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues a notification without waiting. False when the outbox is closed, or when the
    /// message would take the queue past the limit: the outbox is then closed (the reader
    /// has fallen too far behind) and what it held is dropped.
    pub fn offer(&self, message: String) -> bool {
        let mut st = self.lock();
        if st.closed {
            return false;
        }
        if st.bytes + message.len() > self.limit && !st.queue.is_empty() {
            st.closed = true;
            st.queue.clear();
            st.bytes = 0;
            drop(st);
            self.changed.notify_all();
            return false;
        }
        st.bytes += message.len();
        st.queue.push_back(message);
        drop(st);
        self.changed.notify_all();
        true
    }

    /// Queues a reply, first waiting while more than the high mark is queued. False when
    /// the outbox is or gets closed, or when no room came within `timeout` (the client does
    /// not read): the outbox is then closed.
    pub fn put(&self, message: String, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut st = self.lock();
        while !st.closed && st.bytes > self.high {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                st.closed = true;
                st.queue.clear();
                st.bytes = 0;
                drop(st);
                self.changed.notify_all();
                return false;
            }
            st = self
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        if st.closed {
            return false;
        }
        st.bytes += message.len();
        st.queue.push_back(message);
        drop(st);
        self.changed.notify_all();
        true
    }

    /// The next message, if one is queued.
    pub fn try_take(&self) -> Option<String> {
        let mut st = self.lock();
        let m = st.queue.pop_front()?;
        st.bytes -= m.len();
        drop(st);
        self.changed.notify_all();
        Some(m)
    }

    /// The next message, waiting for one; `None` once the outbox is closed (what was
    /// queued before [`Outbox::finish`] is still taken first).
    pub fn take(&self) -> Option<String> {
        let mut st = self.lock();
        loop {
            if let Some(m) = st.queue.pop_front() {
                st.bytes -= m.len();
                drop(st);
                self.changed.notify_all();
                return Some(m);
            }
            if st.closed {
                return None;
            }
            st = self.changed.wait(st).unwrap_or_else(|p| p.into_inner());
        }
    }

    /// No more output will be queued: the writer takes what is left, then sees the end.
    pub fn finish(&self) {
        self.lock().closed = true;
        self.changed.notify_all();
    }

    /// Drops what is queued and refuses everything from now on (the connection is gone).
    pub fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.queue.clear();
        st.bytes = 0;
        drop(st);
        self.changed.notify_all();
    }

    /// True once the outbox was closed or finished.
    pub fn is_closed(&self) -> bool {
        self.lock().closed
    }

    /// Bytes queued now.
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::thread;

    #[test]
    fn notifications_past_the_limit_close_the_outbox_and_free_what_it_held() {
        let out = Outbox::new(100, 50);
        for _ in 0..10 {
            assert!(out.offer("x".repeat(10)));
        }
        assert_eq!(out.bytes(), 100);
        assert!(!out.offer("y".into()), "the 101st byte cuts the reader off");
        assert!(out.is_closed());
        assert_eq!(out.bytes(), 0);
        assert_eq!(out.try_take(), None);
        assert!(!out.offer("z".into()));
        assert!(!out.put("z".into(), Duration::ZERO));
    }

    #[test]
    fn one_message_larger_than_the_limit_passes_an_empty_queue() {
        let out = Outbox::new(10, 5);
        assert!(out.offer("x".repeat(50)));
        assert!(!out.offer("y".into()));
    }

    #[test]
    fn a_reply_waits_for_room_and_gives_up_when_none_comes() {
        let out = Arc::new(Outbox::new(100, 10));
        assert!(
            out.put("x".repeat(20), Duration::ZERO),
            "room below the mark"
        );
        // Above the high mark: a reply waits until the writer takes output.
        let taker = {
            let out = out.clone();
            thread::spawn(move || {
                thread::sleep(Duration::from_millis(50));
                out.take()
            })
        };
        assert!(out.put("y".into(), Duration::from_secs(10)));
        assert_eq!(taker.join().unwrap().unwrap().len(), 20);
        assert_eq!(out.take().as_deref(), Some("y"));
        // No reader at all: the reply gives up and the outbox closes.
        assert!(out.put("x".repeat(20), Duration::ZERO));
        assert!(!out.put("y".into(), Duration::from_millis(20)));
        assert!(out.is_closed());
    }

    #[test]
    fn finish_lets_the_writer_take_what_is_left() {
        let out = Outbox::new(100, 50);
        assert!(out.offer("a".into()));
        out.finish();
        assert!(!out.offer("b".into()));
        assert_eq!(out.take().as_deref(), Some("a"));
        assert_eq!(out.take(), None);
    }
}
