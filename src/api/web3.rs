//! `web3`: the client version and Keccak-256.

use super::error::Result;
use super::method::{p, Method, Namespace, ParamKind as K};
use super::HexOut;
use crate::crypto::keccak256;
use crate::method;
use crate::rpc::{Call, HexBytes, Params};

/// `chaind/v<version>/<os>-<arch>/rust`, like the reference's `Chain/v1.12.1/linux-amd64/go1.20`.
pub fn client_version() -> String {
    format!(
        "chaind/v{}/{}-{}/rust",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    )
}

/// The `web3` namespace.
pub struct Web3Api;

impl Namespace for Web3Api {
    const MODULE: &'static str = "web3";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "web3_clientVersion",
            [],
            "The node's name and version",
            "string",
            Self::client_version
        ),
        method!(
            "web3_sha3",
            [p("data", K::Bytes)],
            "Keccak-256 of the given bytes",
            "string: 32 bytes, 0x-hex",
            Self::sha3
        ),
    ];
}

impl Web3Api {
    fn client_version(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(client_version())
    }

    fn sha3(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let data: HexBytes = p.required(0)?;
        Ok(HexOut(keccak256(&data.0).to_vec()))
    }
}
