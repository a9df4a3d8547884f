//! `net`: the network id and whether peers can connect (never, until a peer-to-peer layer
//! exists).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::register;
use crate::rpc::Registry;

/// The `net` namespace.
pub struct NetApi {
    network_id: u64,
    listening: Arc<AtomicBool>,
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

    pub fn register(self: &Arc<Self>, r: &mut Registry) {
        let a = self.clone();
        register(r, "net_version", move |_, _| {
            Ok(json!(a.network_id.to_string()))
        });
        let a = self.clone();
        register(r, "net_listening", move |_, _| {
            Ok(Value::Bool(a.listening.load(Ordering::SeqCst)))
        });
    }
}
