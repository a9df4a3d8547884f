//! The JSON-RPC layer: one transport-independent [`server::Dispatcher`] and thin transports
//! that move bytes in and out. This module knows nothing of the keystore or of any API: a
//! namespace registers its methods by name with their handlers, and which parameters are
//! secrets is the namespace's business (every request buffer is wiped anyway).

pub mod client;
mod conns;
pub mod endpoint;
pub mod error;
pub mod explain;
mod framing;
mod gate;
pub mod http;
pub mod ipc;
pub mod outbox;
pub mod params;
mod pool;
pub mod pubsub;
pub mod server;
mod wipe;
pub mod ws;

pub use error::RpcError;
pub use params::{go_type_error, json_type, FromParam, HexBytes, Params};
pub use pubsub::{
    Attachment, Connection, Feed, FeedKind, Notifier, SubscriptionKind, SubscriptionLimit,
};
pub use server::{Call, Dispatcher, Handler, Limits, RawJson, Registry, Transport};
