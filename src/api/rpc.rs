//! `rpc`: what the endpoint offers.

use std::collections::BTreeMap;

use super::error::Result;
use super::method::{Method, Namespace};
use crate::method;
use crate::rpc::{Call, Params};

/// The `rpc` namespace (offered on every endpoint).
pub struct RpcApi;

impl Namespace for RpcApi {
    const MODULE: &'static str = "rpc";
    const METHODS: &'static [Method<Self>] = &[method!(
        "rpc_modules",
        [],
        "The modules this endpoint offers, each at version 1.0",
        "object: module name to version",
        Self::modules
    )];
}

impl RpcApi {
    /// `rpc_modules`: `{"<module>": "1.0", ...}` for the modules of the call's endpoint.
    fn modules(&self, call: &Call, _: &Params) -> Result<BTreeMap<&'static str, &'static str>> {
        Ok(call.modules().into_iter().map(|m| (m, "1.0")).collect())
    }
}
