//! The peer server as the `admin` and `net` namespaces see it: [`Peers`] over
//! [`PeerServer`], turning each connected peer into its `admin_peers` object; and the chain's
//! sync from peers as `chain_syncing` sees it ([`SyncStatus`] over [`ChainProtocol`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::admin::{PeerInfo, PeerNetwork, PeerProtocol, Peers};
use crate::api::chain::SyncStatus;
use crate::p2p::peer::{Peer, PeerSet};
use crate::p2p::server::PeerServer;
use crate::p2p::sync::{ChainProtocol, SyncProgress};
use crate::p2p::url::{NodeId, NodeUrl};
use crate::p2p::wire::PROTOCOL_NAME;

/// [`Peers`] backed by the running p2p server.
pub struct ServerPeers(pub Arc<PeerServer>);

/// `peer` as an element of `admin_peers`.
pub fn peer_info(peer: &Peer) -> PeerInfo {
    let head = peer.head();
    PeerInfo {
        id: peer.link.id.to_hex(),
        name: peer.name.clone(),
        caps: peer.caps.clone(),
        network: PeerNetwork {
            local_address: peer.link.local_addr.to_string(),
            remote_address: peer.link.remote_addr.to_string(),
            inbound: peer.link.inbound,
            trusted: peer.link.trusted,
            is_static: peer.link.is_static,
            node_type: peer.link.node_type.as_str().to_string(),
        },
        protocols: BTreeMap::from([(
            PROTOCOL_NAME,
            PeerProtocol {
                version: peer.version,
                difficulty: head.blockscore,
                head: format!("0x{}", hex::encode(head.hash)),
            },
        )]),
    }
}

impl Peers for ServerPeers {
    fn peers(&self) -> Vec<PeerInfo> {
        self.0.peers().iter().map(|p| peer_info(p)).collect()
    }

    fn count(&self) -> usize {
        self.0.peer_count()
    }

    fn add(&self, url: NodeUrl) -> bool {
        self.0.add_static(url)
    }

    fn remove(&self, id: NodeId) -> bool {
        self.0.remove_static(id)
    }
}

/// [`SyncStatus`] backed by the chain's peer protocol.
pub struct ProtocolSync(pub Arc<ChainProtocol>);

impl SyncStatus for ProtocolSync {
    fn progress(&self) -> Option<SyncProgress> {
        self.0.progress()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::p2p::peer::PeerLink;
    use crate::p2p::url::NodeType;
    use crate::p2p::wire::Status;

    #[test]
    fn a_peer_object_has_the_spec_members() {
        let status = Status {
            version: 65,
            head: [0xab; 32],
            blockscore: 131_075,
            name: "Chain/v1".into(),
            caps: vec!["istanbul/65".into()],
            ..crate::p2p::wire::example_status()
        };
        let link = PeerLink {
            id: NodeId([0x11; 64]),
            inbound: false,
            is_static: true,
            trusted: false,
            node_type: NodeType::Unknown,
            local_addr: ([127, 0, 0, 1], 1000).into(),
            remote_addr: "[::1]:2000".parse().unwrap(),
        };
        let (peer, _rx) = Peer::new(link, &status);
        let v = serde_json::to_value(peer_info(&peer)).unwrap();
        assert_eq!(
            v,
            serde_json::json!({
                "id": "11".repeat(64),
                "name": "Chain/v1",
                "caps": ["istanbul/65"],
                "network": {
                    "localAddress": "127.0.0.1:1000",
                    "remoteAddress": "[::1]:2000",
                    "inbound": false,
                    "trusted": false,
                    "static": true,
                    "nodeType": "unknown"
                },
                "protocols": {"istanbul": {"version": 65, "difficulty": 131075, "head": format!("0x{}", "ab".repeat(32))}}
            })
        );
        // The order of the members as serialized (the reference's).
        let text = serde_json::to_string(&peer_info(&peer)).unwrap();
        let pos = |k: &str| text.find(&format!("\"{k}\"")).unwrap();
        assert!(pos("id") < pos("name") && pos("name") < pos("caps"));
        assert!(pos("caps") < pos("network") && pos("network") < pos("protocols"));
        assert!(pos("localAddress") < pos("remoteAddress") && pos("inbound") < pos("trusted"));
        assert!(pos("trusted") < pos("static") && pos("static") < pos("nodeType"));
    }
}
