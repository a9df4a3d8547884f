//! An in-process network for the peer protocol, shared by `tests/p2p_sync.rs` and
//! `benches/p2p_sync.rs`: each node is a `Chain` in a temporary directory with its own bus
//! and running `ChainProtocol`, and a link between two nodes is a pair of `Peer`s whose send
//! queues are pumped, one thread per direction, into the other side's `on_message` (what the
//! server's writer and reader threads do over a socket, less the socket).
#![allow(dead_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::chain::Chain;
use chain_node::events::Bus;
use chain_node::p2p::peer::{Outgoing, Peer, PeerLink, PeerSet, Protocol};
use chain_node::p2p::sync::ChainProtocol;
use chain_node::p2p::url::{NodeId, NodeType};
use chain_node::p2p::wire::{self, Message};
use chain_node::service::Service;

/// Waits (at most 60 s) for `cond`.
#[track_caller]
pub fn wait_for(what: &str, cond: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[derive(Default)]
pub struct Peers(pub Mutex<Vec<Arc<Peer>>>);

impl PeerSet for Peers {
    fn peers(&self) -> Vec<Arc<Peer>> {
        self.0.lock().unwrap().clone()
    }
}

pub struct Node {
    pub chain: Arc<Chain>,
    pub bus: Arc<Bus>,
    pub protocol: Arc<ChainProtocol>,
    pub peers: Arc<Peers>,
    service: Box<dyn Service>,
    pub id: NodeId,
    _dir: tempfile::TempDir,
}

impl Node {
    /// Node `n` (its id is 64 bytes `n`) on a fresh chain of `genesis`, its protocol's
    /// service started.
    pub fn new(n: u8, genesis: &Genesis) -> Node {
        let dir = tempfile::tempdir().unwrap();
        let chain = Arc::new(Chain::open(dir.path(), genesis).unwrap());
        let bus = Bus::new();
        chain.publish_to(bus.clone());
        let protocol = ChainProtocol::new(chain.clone(), bus.clone());
        let peers = Arc::new(Peers::default());
        let set: Arc<dyn PeerSet> = peers.clone();
        protocol.attach(Arc::downgrade(&set));
        let mut service = protocol.service();
        service.start().unwrap();
        Node {
            chain,
            bus,
            protocol,
            peers,
            service,
            id: NodeId([n; 64]),
            _dir: dir,
        }
    }

    pub fn head(&self) -> u64 {
        self.chain.head_number()
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.service.stop();
    }
}

/// Changes the messages of one direction of a link on their way.
pub type Tamper = Arc<dyn Fn(Message) -> Message + Send + Sync>;

/// A connection between two nodes.
pub struct Link {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    /// Why each side closed the connection, `(side, reason)`, side 0 being `a`.
    closed: Arc<Mutex<Vec<(usize, String)>>>,
    /// Messages carried, by direction (0: a to b) and kind.
    counts: Arc<Mutex<HashMap<(usize, &'static str), usize>>>,
}

impl Link {
    pub fn closed(&self) -> Vec<(usize, String)> {
        self.closed.lock().unwrap().clone()
    }

    pub fn count(&self, direction: usize, kind: &'static str) -> usize {
        *self
            .counts
            .lock()
            .unwrap()
            .get(&(direction, kind))
            .unwrap_or(&0)
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

pub fn peer_link(id: NodeId, inbound: bool) -> PeerLink {
    PeerLink {
        id,
        inbound,
        is_static: false,
        trusted: false,
        node_type: NodeType::Unknown,
        local_addr: ([127, 0, 0, 1], 1).into(),
        remote_addr: ([127, 0, 0, 1], 2).into(),
    }
}

/// Connects `a` and `b`; `tamper_b_to_a` changes what `b` sends `a`.
pub fn connect(a: &Node, b: &Node, tamper_b_to_a: Option<Tamper>) -> Link {
    // `a`'s handle on `b` carries `b`'s status, and the other way round.
    let (on_a, rx_a) = Peer::new(peer_link(b.id, false), &b.protocol.local_status());
    let (on_b, rx_b) = Peer::new(peer_link(a.id, true), &a.protocol.local_status());
    a.peers.0.lock().unwrap().push(on_a.clone());
    b.peers.0.lock().unwrap().push(on_b.clone());
    let link = Link {
        stop: Arc::new(AtomicBool::new(false)),
        threads: Vec::new(),
        closed: Arc::new(Mutex::new(Vec::new())),
        counts: Arc::new(Mutex::new(HashMap::new())),
    };
    let mut link = link;
    // Both ends, as (protocol, its handle, its peer set).
    let ends = [
        (a.protocol.clone(), on_a.clone(), a.peers.clone()),
        (b.protocol.clone(), on_b.clone(), b.peers.clone()),
    ];
    let ends = Arc::new(ends);
    for (from, rx, tamper) in [(0usize, rx_a, None), (1, rx_b, tamper_b_to_a)] {
        let to = 1 - from;
        let (ends, stop, closed, counts) = (
            ends.clone(),
            link.stop.clone(),
            link.closed.clone(),
            link.counts.clone(),
        );
        link.threads.push(std::thread::spawn(move || {
            let close = |reason: String| {
                closed.lock().unwrap().push((from, reason));
                for (proto, peer, set) in ends.iter() {
                    peer.disconnect("connection closed");
                    set.0.lock().unwrap().retain(|p| !Arc::ptr_eq(p, peer));
                    proto.on_disconnected(peer);
                }
            };
            loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                match rx.recv_timeout(Duration::from_millis(20)) {
                    Ok(Outgoing::Message(bytes)) => {
                        // As the server's writer does: the bytes leave the sender's queue.
                        ends[from].1.written(bytes.len());
                        let mut msg =
                            wire::decode(&bytes).expect("the protocol sends valid messages");
                        if let Some(t) = &tamper {
                            msg = t(msg);
                        }
                        *counts
                            .lock()
                            .unwrap()
                            .entry((from, msg.kind()))
                            .or_default() += 1;
                        let (proto, peer, _) = &ends[to];
                        if let Err(reason) = proto.on_message(peer, msg) {
                            // What the server does: the receiving side drops the sender.
                            peer.disconnect(&reason);
                        }
                    }
                    Ok(Outgoing::Close(reason)) => {
                        close(reason);
                        return;
                    }
                    Err(_) => {}
                }
            }
        }));
    }
    a.protocol.on_connected(&on_a);
    b.protocol.on_connected(&on_b);
    link
}
