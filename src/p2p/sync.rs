//! The chain's side of the peer protocol: our status, and (to come) sync, block propagation
//! and transaction propagation, on top of the server's peers (see [`super::peer`]).
//!
//! Today a stub: it answers `local_status` and ignores every message, so that the server can
//! be built and tested against it.

use std::sync::{Arc, OnceLock, Weak};

use super::peer::{Peer, PeerSet, Protocol};
use super::wire::{Message, Status, PROTOCOL_NAME, PROTOCOL_VERSION};
use crate::chain::Chain;
use crate::events::Bus;

/// The peer protocol over a chain.
pub struct ChainProtocol {
    chain: Arc<Chain>,
    #[allow(dead_code)]
    bus: Arc<Bus>,
    peers: OnceLock<Weak<dyn PeerSet>>,
}

impl ChainProtocol {
    /// The protocol of `chain`, which learns of new heads and pending transactions on `bus`.
    pub fn new(chain: Arc<Chain>, bus: Arc<Bus>) -> Arc<ChainProtocol> {
        Arc::new(ChainProtocol {
            chain,
            bus,
            peers: OnceLock::new(),
        })
    }

    /// Gives the protocol the peer set it broadcasts to (the server, which holds the
    /// protocol: hence a weak reference). Only the first call counts.
    pub fn attach(&self, peers: Weak<dyn PeerSet>) {
        let _ = self.peers.set(peers);
    }

    /// The connected peers (none before `attach` or after the server is gone).
    #[allow(dead_code)]
    fn peers(&self) -> Vec<Arc<Peer>> {
        self.peers
            .get()
            .and_then(Weak::upgrade)
            .map(|p| p.peers())
            .unwrap_or_default()
    }
}

impl Protocol for ChainProtocol {
    /// Our chain as a new peer should see it. `listen_port` is 0: the server fills it in.
    fn local_status(&self) -> Status {
        let (number, head) = self.chain.head_block();
        Status {
            version: PROTOCOL_VERSION,
            network_id: self.chain.network_id(),
            genesis: self.chain.genesis_hash().unwrap_or_default(),
            head,
            head_number: number,
            blockscore: u128::from(self.chain.total_block_score(number)),
            name: crate::api::web3::client_version(),
            caps: vec![format!("{PROTOCOL_NAME}/{PROTOCOL_VERSION}")],
            listen_port: 0,
        }
    }

    fn on_connected(&self, _peer: &Arc<Peer>) {}

    fn on_message(&self, _peer: &Arc<Peer>, _msg: Message) -> Result<(), String> {
        Ok(())
    }

    fn on_disconnected(&self, _peer: &Arc<Peer>) {}
}
