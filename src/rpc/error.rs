//! JSON-RPC error objects. The codes and the texts of the protocol-level errors are the
//! reference's; method errors are mapped to them in `api` (one place).

use std::fmt;

use serde::Serialize;

/// A JSON-RPC error: `{"code": .., "message": ..}`, with `data` when there is more to say (a
/// contract's revert data; for -32601, which of its cases it is).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<serde_json::Value>,
}

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const SERVER_ERROR: i64 = -32000;

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> RpcError {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// This error with `data` (a 0x-hex string, an explanation).
    pub fn with_data(mut self, data: impl Into<serde_json::Value>) -> RpcError {
        self.data = Some(data.into());
        self
    }

    /// -32700 with `message` (`parse error` over HTTP, the decoder's text on streams).
    pub fn parse(message: impl Into<String>) -> RpcError {
        RpcError::new(PARSE_ERROR, message)
    }

    /// -32600 `invalid request`.
    pub fn invalid_request() -> RpcError {
        RpcError::new(INVALID_REQUEST, "invalid request")
    }

    /// -32601 `the method <name> does not exist/is not available`.
    pub fn method_not_found(name: &str) -> RpcError {
        RpcError::new(
            METHOD_NOT_FOUND,
            format!("the method {name} does not exist/is not available"),
        )
    }

    /// -32602 with `message`.
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError::new(INVALID_PARAMS, message)
    }

    /// -32000 with `message`: every error a method returns.
    pub fn server(message: impl Into<String>) -> RpcError {
        RpcError::new(SERVER_ERROR, message)
    }
}

impl fmt::Display for RpcError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {}: {}", self.code, self.message)
    }
}

impl std::error::Error for RpcError {}
