//! The peer-to-peer layer. Today: the node's identity (its node key, id and `kni` URL); the
//! listener, handshake, peers and sync come with the peer-to-peer issue.

pub mod identity;
