//! The JSON-RPC namespaces: one type per module holding only the handles it uses, and the one
//! place where library errors become JSON-RPC errors. `api` knows nothing of sockets.

pub mod admin;
pub mod chain;
pub mod net;
pub mod personal;
pub mod spec;
pub mod web3;

use std::sync::Arc;

use serde_json::Value;

use crate::crypto::Address;
use crate::keystore;
use crate::rpc::{Call, FromParam, Params, Registry, RpcError};

impl From<keystore::Error> for RpcError {
    /// Every keystore failure is a plain method error: -32000 with the keystore's text.
    fn from(e: keystore::Error) -> RpcError {
        RpcError::server(e.to_string())
    }
}

impl From<crate::crypto::CryptoError> for RpcError {
    fn from(e: crate::crypto::CryptoError) -> RpcError {
        RpcError::server(e.to_string())
    }
}

impl FromParam for Address {
    /// `0x` + 40 hex digits, any case; `null` and other types are refused.
    fn from_param(v: &Value) -> Result<Address, String> {
        match v {
            Value::String(s) => s
                .parse()
                .map_err(|e: crate::crypto::AddressError| e.to_string()),
            Value::Null => Err("cannot unmarshal null into an address".into()),
            _ => Err("cannot unmarshal non-string into an address".into()),
        }
    }
}

/// Registers `f` as the handler of the method `name` of [`spec::METHODS`].
pub(crate) fn register<F>(r: &mut Registry, name: &str, f: F)
where
    F: Fn(&Call, &Params) -> Result<Value, RpcError> + Send + Sync + 'static,
{
    let spec = spec::find(name).unwrap_or_else(|| panic!("{name} is not in api::spec::METHODS"));
    r.register(*spec, Arc::new(f));
}

/// Hex with `0x`, lower case.
pub(crate) fn hex0x(b: &[u8]) -> Value {
    Value::String(crate::crypto::to_hex0x(b))
}
