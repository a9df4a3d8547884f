//! The peer-to-peer layer. Today its lower half:
//!
//! - [`identity`]: the node's identity (its node key, id and `kni` URL);
//! - [`url`]: node ids and the `kni://` URL parser of `admin_addPeer`;
//! - [`transport`]: authenticated, encrypted connections (Noise XX, bound to the node key);
//! - [`wire`]: the peer protocol's messages, encoded and decoded as pure functions.
//!
//! The listener, dialing, peers and sync come on top of these with the peer-to-peer issue.

pub mod identity;
pub mod peer;
pub mod sync;
pub mod transport;
pub mod url;
pub mod wire;
