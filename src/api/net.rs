//! `net`: the network id and whether peers can connect (never, until a peer-to-peer layer
//! exists).

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
}

impl Namespace for NetApi {
    const MODULE: &'static str = "net";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "net_listening",
            [],
            "Whether the node accepts peer connections",
            Self::listening
        ),
        method!(
            "net_version",
            [],
            "The network id, as a decimal string",
            Self::version
        ),
    ];
}

impl NetApi {
    /// `listening` is what `net_listening` answers. There is no peer-to-peer layer yet, so the
    /// node passes a flag that stays false; a future listener would set it while it accepts
    /// connections.
    pub fn new(network_id: u64, listening: Arc<AtomicBool>) -> NetApi {
        NetApi {
            network_id,
            listening,
        }
    }

    fn version(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(self.network_id.to_string())
    }

    fn listening(&self, _: &Call, _: &Params) -> Result<bool> {
        Ok(self.listening.load(Ordering::SeqCst))
    }
}
