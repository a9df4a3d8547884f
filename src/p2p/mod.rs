//! The peer-to-peer layer:
//!
//! - [`identity`]: the node's identity (its node key, id and `kni` URL);
//! - [`url`]: node ids and the `kni://` URL parser of `admin_addPeer`;
//! - [`transport`]: authenticated, encrypted connections (Noise XX, bound to the node key);
//! - [`wire`]: the peer protocol's messages, encoded and decoded as pure functions;
//! - [`peer`]: a connected peer and the seam between the server and the protocol;
//! - [`server`]: the listener, the static-peer dialer, and each connection's threads;
//! - [`slots`]: the places of inbound connections in their handshake, shared by address;
//! - [`sync`]: the chain's side of the protocol, serving blocks at the pace of
//!   [`serve_limit`].

pub mod identity;
pub mod peer;
pub mod serve_limit;
pub mod server;
pub mod slots;
pub mod sync;
pub mod transport;
pub mod url;
pub mod wire;
