//! `web3`: the client version and Keccak-256.

use serde_json::json;

use super::{hex0x, register};
use crate::crypto::keccak256;
use crate::rpc::{HexBytes, Registry};

/// `chaind/v<version>/<os>-<arch>/rust`, like the reference's `Chain/v1.12.1/linux-amd64/go1.20`.
pub fn client_version() -> String {
    format!(
        "chaind/v{}/{}-{}/rust",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

pub fn register_web3(r: &mut Registry) {
    register(r, "web3_clientVersion", |_, _| Ok(json!(client_version())));
    register(r, "web3_sha3", |_, p| {
        let data: HexBytes = p.required(0)?;
        Ok(hex0x(&keccak256(&data.0)))
    });
}
