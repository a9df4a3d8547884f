//! What `admin_nodeInfo` answers: the node's identity and p2p record, and its chain.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::api::admin::{
    ChainConfig, IstanbulConfig, NodeInfo, NodeInfoSource, Ports, ProtocolInfo,
};
use crate::api::error::Result;
use crate::chain::Chain;
use crate::p2p::identity::NodeIdentity;

/// The BFT parameters the chain runs with: a week of blocks per epoch (the reference's
/// default), round-robin proposers, a committee of one (the `--dev` validator).
pub const ISTANBUL: (u64, u64, u64) = (604_800, 0, 1);

/// The node as `admin_nodeInfo` describes it.
pub struct LocalNode {
    pub identity: Arc<NodeIdentity>,
    pub chain: Option<Arc<Chain>>,
    /// The p2p server, whose listener gives the record; `None` on a node without p2p.
    pub p2p: Option<Arc<crate::p2p::server::PeerServer>>,
}

impl NodeInfoSource for LocalNode {
    fn node_info(&self) -> Result<NodeInfo> {
        // No discovery: the record is the listener's bound address with UDP port 0, or
        // without a listener `0.0.0.0:0` (the reference's records for those cases).
        let addr: std::net::SocketAddr = self
            .p2p
            .as_ref()
            .and_then(|s| s.local_addr())
            .unwrap_or_else(|| ([0, 0, 0, 0], 0).into());
        let mut protocols = BTreeMap::new();
        if let Some(chain) = &self.chain {
            let (head, head_hash) = chain.head_block();
            protocols.insert(
                "istanbul",
                ProtocolInfo {
                    network: chain.network_id(),
                    difficulty: chain.total_block_score(head),
                    genesis: format!("0x{}", hex::encode(chain.genesis_hash()?)),
                    head: format!("0x{}", hex::encode(head_hash)),
                    config: ChainConfig {
                        chain_id: chain.chain_id(),
                        is_bft: true,
                        istanbul: IstanbulConfig {
                            epoch: ISTANBUL.0,
                            policy: ISTANBUL.1,
                            sub: ISTANBUL.2,
                        },
                        unit_price: chain.unit_price(),
                        derive_sha_impl: 0,
                    },
                },
            );
        }
        Ok(NodeInfo {
            kni: self.identity.kni(addr, 0),
            id: self.identity.id().to_string(),
            ip: addr.ip().to_string(),
            listen_addr: addr.to_string(),
            name: crate::api::web3::client_version(),
            ports: Ports {
                discovery: 0,
                listener: addr.port(),
            },
            protocols,
        })
    }
}
