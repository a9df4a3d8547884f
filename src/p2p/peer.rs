//! A connected peer as the rest of the node sees it, and the seam between the two halves of
//! the peer-to-peer layer:
//!
//! - the server (`server`) owns sockets: it listens, dials, runs the handshake and the status
//!   exchange, and gives each peer a reader thread and a writer thread;
//! - the protocol (`sync`) owns meaning: what to do with a decoded [`Message`] (sync, block
//!   and transaction propagation), through the [`Protocol`] trait.
//!
//! A [`Peer`] is shared by both: the protocol sends through it (a bounded queue that the
//! peer's writer thread drains, so that no caller ever blocks on a slow peer's socket) and
//! reads the head the peer last announced.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use super::url::{NodeId, NodeType};
use super::wire::{encode, Message, Status};

/// Messages a peer's send queue holds before the peer is dropped as too slow.
pub const SEND_QUEUE: usize = 1024;
/// Bytes a peer's send queue holds before the peer is dropped as too slow: a peer that asks
/// for blocks (up to 8 MiB a reply) and never reads must not make the node buffer
/// gigabytes for it.
pub const SEND_QUEUE_BYTES: usize = 64 << 20;

/// What the peer last told us of its chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PeerHead {
    pub hash: [u8; 32],
    pub number: u64,
    pub blockscore: u128,
}

/// What the writer thread is asked to do.
#[derive(Debug)]
pub enum Outgoing {
    /// An encoded message to send.
    Message(Arc<Vec<u8>>),
    /// Send a `Disconnect` with this reason, then close.
    Close(String),
}

/// A peer that passed the handshake and the status exchange.
#[derive(Debug)]
pub struct Peer {
    /// Who it is and how it is connected.
    pub link: PeerLink,
    /// The name it announced (its `Status`).
    pub name: String,
    /// Its capabilities, `<name>/<version>`, sorted.
    pub caps: Vec<String>,
    /// The protocol version both sides run.
    pub version: u64,
    head: Mutex<PeerHead>,
    out: SyncSender<Outgoing>,
    /// Bytes queued and not yet written (see [`SEND_QUEUE_BYTES`]).
    queued: std::sync::atomic::AtomicUsize,
    closing: AtomicBool,
    /// The reason of the first `disconnect`, for the writer and the log (the queue may have
    /// been too full to carry it).
    reason: Mutex<Option<String>>,
}

/// How a peer's connection is described when it is made (the server's side of [`Peer`]).
#[derive(Debug, Clone)]
pub struct PeerLink {
    pub id: NodeId,
    pub inbound: bool,
    /// Dialed because it is in the static set.
    pub is_static: bool,
    pub trusted: bool,
    pub node_type: NodeType,
    pub local_addr: SocketAddr,
    pub remote_addr: SocketAddr,
}

impl Peer {
    /// A peer over `link` whose status is `status`, and the receiving end of its send queue
    /// (for the writer thread).
    pub fn new(link: PeerLink, status: &Status) -> (Arc<Peer>, Receiver<Outgoing>) {
        let (out, rx) = std::sync::mpsc::sync_channel(SEND_QUEUE);
        let mut caps = status.caps.clone();
        caps.sort();
        let peer = Peer {
            link,
            name: status.name.clone(),
            caps,
            version: status.version,
            head: Mutex::new(PeerHead {
                hash: status.head,
                number: status.head_number,
                blockscore: status.blockscore,
            }),
            out,
            queued: std::sync::atomic::AtomicUsize::new(0),
            closing: AtomicBool::new(false),
            reason: Mutex::new(None),
        };
        (Arc::new(peer), rx)
    }

    /// Queues `msg` for the peer. False when the peer is closing, or when its queue is full
    /// (the peer is then disconnected: a peer that cannot keep up is dropped, never waited
    /// for).
    pub fn send(&self, msg: &Message) -> bool {
        self.send_encoded(Arc::new(encode(msg)))
    }

    /// [`Peer::send`] of a message encoded once for many peers.
    pub fn send_encoded(&self, bytes: Arc<Vec<u8>>) -> bool {
        if self.closing.load(Ordering::Relaxed) {
            return false;
        }
        let len = bytes.len();
        if self.queued.fetch_add(len, Ordering::SeqCst) + len > SEND_QUEUE_BYTES {
            self.queued.fetch_sub(len, Ordering::SeqCst);
            self.disconnect("send queue full");
            return false;
        }
        match self.out.try_send(Outgoing::Message(bytes)) {
            Ok(()) => true,
            Err(e) => {
                self.queued.fetch_sub(len, Ordering::SeqCst);
                if matches!(e, TrySendError::Full(_)) {
                    self.disconnect("send queue full");
                }
                false
            }
        }
    }

    /// The writer took `len` bytes off the queue (written, or dropped with the connection).
    pub fn written(&self, len: usize) {
        self.queued.fetch_sub(len, Ordering::SeqCst);
    }

    /// Asks the writer to send `Disconnect { reason }` and close the connection. Only the
    /// first call counts.
    pub fn disconnect(&self, reason: &str) {
        if self.closing.swap(true, Ordering::SeqCst) {
            return;
        }
        *self.reason.lock().unwrap_or_else(|p| p.into_inner()) = Some(reason.to_string());
        // The queue may be full: the writer also watches `closing` (see `is_closing`).
        let _ = self.out.try_send(Outgoing::Close(reason.to_string()));
    }

    /// Whether [`Peer::disconnect`] was called.
    pub fn is_closing(&self) -> bool {
        self.closing.load(Ordering::Relaxed)
    }

    /// The reason given to the first [`Peer::disconnect`], if it was called.
    pub fn close_reason(&self) -> Option<String> {
        self.reason
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// The head the peer last announced.
    pub fn head(&self) -> PeerHead {
        *self.head.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Records a head the peer announced (a `NewBlock`, or blocks it served), if it is
    /// further than the one known.
    pub fn note_head(&self, head: PeerHead) {
        let mut h = self.head.lock().unwrap_or_else(|p| p.into_inner());
        if head.number > h.number {
            *h = head;
        }
    }
}

/// What the server asks of the protocol. Every method is called from a peer's reader thread
/// (or the server's threads) and must not block for long: slow work goes to the protocol's
/// own threads.
pub trait Protocol: Send + Sync {
    /// Our status, sent to every new peer.
    fn local_status(&self) -> Status;
    /// A peer passed the status exchange and is in the peer set.
    fn on_connected(&self, peer: &Arc<Peer>);
    /// A message from `peer` (never `Status`, `Disconnect`, `Ping` or `Pong`: the server
    /// handles those). An error disconnects the peer with the error as the reason.
    fn on_message(&self, peer: &Arc<Peer>, msg: Message) -> Result<(), String>;
    /// The peer left the peer set.
    fn on_disconnected(&self, peer: &Arc<Peer>);
}

/// The connected peers, as the protocol sees them.
pub trait PeerSet: Send + Sync {
    /// Every connected peer.
    fn peers(&self) -> Vec<Arc<Peer>>;
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::p2p::wire::example_status as status;

    fn link() -> PeerLink {
        PeerLink {
            id: NodeId([3; 64]),
            inbound: true,
            is_static: false,
            trusted: false,
            node_type: NodeType::Unknown,
            local_addr: ([127, 0, 0, 1], 1).into(),
            remote_addr: ([127, 0, 0, 1], 2).into(),
        }
    }

    #[test]
    fn a_full_queue_disconnects_the_peer_instead_of_blocking() {
        let (peer, rx) = Peer::new(link(), &status());
        assert_eq!(peer.caps, vec!["istanbul/64", "istanbul/65"]);
        for _ in 0..SEND_QUEUE {
            assert!(peer.send(&Message::Ping));
        }
        assert!(!peer.is_closing());
        assert!(!peer.send(&Message::Ping), "the queue is full");
        assert!(peer.is_closing());
        assert!(!peer.send(&Message::Ping), "a closing peer takes nothing");
        assert_eq!(rx.try_iter().count(), SEND_QUEUE);
    }

    #[test]
    fn a_queue_over_its_byte_bound_disconnects_the_peer() {
        let (peer, rx) = Peer::new(link(), &status());
        let big = Arc::new(vec![0u8; 8 << 20]);
        for _ in 0..SEND_QUEUE_BYTES / big.len() {
            assert!(peer.send_encoded(big.clone()));
        }
        assert!(!peer.is_closing());
        assert!(!peer.send_encoded(big.clone()), "64 MiB are queued");
        assert!(peer.is_closing());
        // What the writer takes off the queue counts no more.
        let (peer, rx2) = Peer::new(link(), &status());
        for _ in 0..2 * SEND_QUEUE_BYTES / big.len() {
            assert!(peer.send_encoded(big.clone()));
            match rx2.try_recv().unwrap() {
                Outgoing::Message(b) => peer.written(b.len()),
                Outgoing::Close(r) => panic!("closed: {r}"),
            }
        }
        assert!(!peer.is_closing());
        drop(rx);
    }

    #[test]
    fn disconnect_queues_one_close() {
        let (peer, rx) = Peer::new(link(), &status());
        assert!(peer.send(&Message::Pong));
        peer.disconnect("requested");
        peer.disconnect("again");
        let got: Vec<_> = rx.try_iter().collect();
        assert_eq!(got.len(), 2);
        assert!(matches!(&got[1], Outgoing::Close(r) if r == "requested"));
        assert_eq!(peer.close_reason().as_deref(), Some("requested"));
    }

    #[test]
    fn only_a_further_head_replaces_the_known_one() {
        let s = status();
        let (peer, _rx) = Peer::new(link(), &s);
        peer.note_head(PeerHead {
            hash: [9; 32],
            number: s.head_number - 1,
            blockscore: 5,
        });
        assert_eq!(peer.head().number, s.head_number);
        peer.note_head(PeerHead {
            hash: [9; 32],
            number: s.head_number + 2,
            blockscore: 8,
        });
        assert_eq!(peer.head().hash, [9; 32]);
        assert_eq!(peer.head().number, s.head_number + 2);
    }
}
