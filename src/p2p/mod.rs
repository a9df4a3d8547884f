//! The peer-to-peer layer. Today: the node's identity (its node key, id and `kni` URL), the
//! `kni://` URL parser, and authenticated, encrypted connections; peers and sync come with
//! the peer-to-peer issue.

pub mod identity;
pub mod transport;
pub mod url;
