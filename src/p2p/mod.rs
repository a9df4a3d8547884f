//! The peer-to-peer layer. Today: the node's identity (its node key, id and `kni` URL) and
//! the `kni://` URL parser; the listener, handshake, peers and sync come with the
//! peer-to-peer issue.

pub mod identity;
pub mod url;
