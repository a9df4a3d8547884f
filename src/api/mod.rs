//! The JSON-RPC namespaces: one type per module holding only the handles it uses, each
//! declaring its methods once ([`method`]), and the one place where domain errors become
//! JSON-RPC errors ([`error`]). `api` knows nothing of sockets.

pub mod accesslist;
pub mod admin;
mod blockfiles;
pub mod callargs;
pub mod chain;
pub mod consensus;
pub mod contract;
pub mod debug;
mod dump;
pub mod error;
pub mod eth;
mod ethargs;
pub mod ethjson;
pub mod fees;
pub mod filters;
pub mod goparams;
pub mod logs;
pub mod method;
pub mod net;
pub mod notify;
pub mod personal;
pub mod proof;
pub mod recover;
pub mod reference;
pub mod rpc;
pub mod spec;
pub mod trace;
pub mod txargs;
mod txmembers;
pub mod txpool;
pub mod web3;

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::crypto::Address;
use crate::rpc::{FromParam, Registry};

pub use error::Error;
pub use method::{register, MethodSpec, Namespace, ParamKind, ParamSpec};

impl FromParam for Address {
    /// `0x` + 40 hex digits, any case, as Go's `common.Address` decodes it (its texts:
    /// `json: cannot unmarshal hex string without 0x prefix into Go value of type
    /// common.Address`, `hex string has length 4, want 40 for common.Address`); `null` and
    /// other types are `non-string`.
    fn from_param(v: &Value) -> Result<Address, String> {
        goparams::fixed_value::<20>(v, "Go value of type common.Address", "common.Address")
            .map(Address)
    }
}

impl Serialize for Address {
    /// `0x` + 40 lower-case hex digits.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = Vec::with_capacity(42);
        self.write_hex0x(&mut buf);
        s.serialize_str(std::str::from_utf8(&buf).expect("hex digits are ASCII"))
    }
}

/// Bytes answered as `0x` + lower-case hex.
pub struct HexOut(pub Vec<u8>);

impl Serialize for HexOut {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = Vec::with_capacity(2 + 2 * self.0.len());
        crate::crypto::write_hex0x(&self.0, &mut buf);
        s.serialize_str(std::str::from_utf8(&buf).expect("hex digits are ASCII"))
    }
}

/// Every namespace of the node, built once with the handles each one uses.
pub struct Apis {
    pub admin: Arc<admin::AdminApi>,
    pub chain: Arc<chain::ChainApi>,
    pub consensus: Arc<consensus::ConsensusApi>,
    pub contract: Arc<contract::ContractApi>,
    pub logs: Arc<logs::LogsApi>,
    pub net: Arc<net::NetApi>,
    pub personal: Arc<personal::PersonalApi>,
    pub recover: Arc<recover::RecoverApi>,
    pub rpc: Arc<rpc::RpcApi>,
    pub debug: Arc<debug::DebugApi>,
    pub eth: Arc<eth::EthApi>,
    pub fees: Arc<fees::FeeApi>,
    pub txpool: Arc<txpool::TxpoolApi>,
    pub web3: Arc<web3::Web3Api>,
}

impl Apis {
    /// Registers every method and subscription kind of every namespace.
    pub fn register(&self, r: &mut Registry) {
        register(&self.admin, r);
        register(&self.chain, r);
        register(&self.consensus, r);
        register(&self.recover, r);
        register(&self.contract, r);
        register(&self.logs, r);
        register(&self.debug, r);
        register(&self.eth, r);
        register(&self.fees, r);
        register(&self.net, r);
        register(&self.personal, r);
        register(&self.rpc, r);
        register(&self.txpool, r);
        register(&self.web3, r);
        reference::register(r);
    }
}
