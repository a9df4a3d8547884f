//! The chain: its database, and (next) the state, the transaction pool, block sealing and
//! genesis. A domain beside `keystore`: it knows nothing of `rpc`, publishes typed events
//! into `events::Bus`, and runs its background work as `service::Service`s.

pub mod db;
pub mod genesis;
