//! `net`: the network id, whether peers can connect (the p2p listener runs), and how many
//! are connected, in all and by node type.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::error::Result;
use super::method::{Method, Namespace};
use crate::method;
use crate::rpc::{Call, Params};

/// The `net` namespace.
pub struct NetApi {
    network_id: u64,
    listening: Arc<AtomicBool>,
    /// The peer server; `None` on a node without p2p (0 peers).
    peers: Option<Arc<dyn super::admin::Peers>>,
}

impl Namespace for NetApi {
    const MODULE: &'static str = "net";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "net_listening",
            [],
            "Whether the node accepts peer connections",
            "bool",
            Self::listening
        ),
        method!(
            "net_peerCount",
            [],
            "The number of connected peers, as a 0x quantity",
            "string: a 0x quantity",
            Self::peer_count
        ),
        method!(
            "net_version",
            [],
            "The network id, as a decimal string",
            "string: a decimal number",
            Self::version
        ),
        method!(
            "net_networkID",
            [],
            "The network id, as a number",
            "quantity: the network id",
            Self::network_id
        ),
        method!(
            "net_peerCountByType",
            [],
            "The connected peers by node type (cn, pn, en, bn, unknown) and in total",
            "object: the number of peers by node type, and total",
            Self::peer_count_by_type
        ),
    ];
}

impl NetApi {
    /// `listening` is what `net_listening` answers: the p2p server sets it while its
    /// listener accepts connections (a node without p2p passes a flag that stays false).
    pub fn new(network_id: u64, listening: Arc<AtomicBool>) -> NetApi {
        NetApi {
            network_id,
            listening,
            peers: None,
        }
    }

    /// The peers `net_peerCount` counts.
    pub fn with_peers(mut self, peers: Option<Arc<dyn super::admin::Peers>>) -> NetApi {
        self.peers = peers;
        self
    }

    /// `net_peerCount`: the connected peers as a 0x quantity (`0x0` without p2p).
    fn peer_count(&self, _: &Call, _: &Params) -> Result<String> {
        let n = self.peers.as_ref().map_or(0, |p| p.count());
        Ok(format!("0x{n:x}"))
    }

    /// `net_networkID`: the network id, a JSON number.
    fn network_id(&self, _: &Call, _: &Params) -> Result<u64> {
        Ok(self.network_id)
    }

    /// `net_peerCountByType`: `{"total": n}` and, per node type with connected peers, their
    /// number (a Go map in the reference: keys in byte order). This node's protocol
    /// exchanges no node types, so its peers count as `unknown`.
    fn peer_count_by_type(&self, _: &Call, _: &Params) -> Result<BTreeMap<String, u64>> {
        let mut counts = BTreeMap::from([("total".to_string(), 0)]);
        for peer in self.peers.as_ref().map(|p| p.peers()).unwrap_or_default() {
            *counts.entry(peer.network.node_type).or_default() += 1;
            *counts.entry("total".to_string()).or_default() += 1;
        }
        Ok(counts)
    }

    fn version(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(self.network_id.to_string())
    }

    fn listening(&self, _: &Call, _: &Params) -> Result<bool> {
        Ok(self.listening.load(Ordering::SeqCst))
    }
}
