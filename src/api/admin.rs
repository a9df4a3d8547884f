//! `admin`: the data directory, the HTTP and WebSocket endpoints, the subscription limit.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde_json::{json, Value};

use super::register;
use crate::rpc::server::parse_module_list;
use crate::rpc::{Params, Registry, RpcError, SubscriptionLimit};

/// Defaults of `admin_startHTTP` / `admin_startWS` (the service spec's).
pub const DEFAULT_HTTP_PORT: u16 = 8551;
pub const DEFAULT_WS_PORT: u16 = 8552;
pub const DEFAULT_HTTP_APIS: &str = "chain,net,rpc";
pub const DEFAULT_WS_APIS: &str = "chain,net,personal";

/// What to open: the endpoint settings after defaults are applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndpointRequest {
    pub host: String,
    pub port: u16,
    /// CORS origins (HTTP) or allowed WebSocket origins (WS).
    pub origins: Vec<String>,
    pub apis: BTreeSet<String>,
    /// Virtual hosts (HTTP only); `None`: the configured ones (`--rpcvhosts`).
    pub vhosts: Option<Vec<String>>,
}

/// The node's control over its endpoints. Errors are the messages to return
/// (`HTTP RPC already running on <host>:<port>`, `HTTP RPC not running`, listen errors).
pub trait Endpoints: Send + Sync {
    fn start_http(&self, req: EndpointRequest) -> Result<(), String>;
    fn stop_http(&self) -> Result<(), String>;
    fn start_ws(&self, req: EndpointRequest) -> Result<(), String>;
    fn stop_ws(&self) -> Result<(), String>;
}

/// The `admin` namespace.
pub struct AdminApi {
    datadir: PathBuf,
    endpoints: Arc<dyn Endpoints>,
    limit: SubscriptionLimit,
}

/// The entries of a comma-separated list (`--rpccorsdomain`, `--rpcvhosts`, `--wsorigins`, the
/// `cors`/`vhosts` arguments), trimmed, empty ones left out.
pub(crate) fn split_list(s: &str) -> Vec<String> {
    s.split(',')
        .map(|x| x.trim().to_string())
        .filter(|x| !x.is_empty())
        .collect()
}

impl AdminApi {
    pub fn new(
        datadir: PathBuf,
        endpoints: Arc<dyn Endpoints>,
        limit: SubscriptionLimit,
    ) -> AdminApi {
        AdminApi {
            datadir,
            endpoints,
            limit,
        }
    }

    pub fn register(self: &Arc<Self>, r: &mut Registry) {
        let a = self.clone();
        register(r, "admin_datadir", move |_, _| {
            Ok(json!(a.datadir.display().to_string()))
        });
        for (name, deprecated) in [("admin_startHTTP", false), ("admin_startRPC", true)] {
            let a = self.clone();
            register(r, name, move |_, p| {
                if deprecated {
                    crate::log::warn(
                        "Deprecation warning",
                        &[
                            ("method", "admin.StartRPC"),
                            ("use-instead", "admin.StartHTTP"),
                        ],
                    );
                }
                a.start_http(p)
            });
        }
        for (name, deprecated) in [("admin_stopHTTP", false), ("admin_stopRPC", true)] {
            let a = self.clone();
            register(r, name, move |_, _| {
                if deprecated {
                    crate::log::warn(
                        "Deprecation warning",
                        &[
                            ("method", "admin.StopRPC"),
                            ("use-instead", "admin.StopHTTP"),
                        ],
                    );
                }
                a.endpoints.stop_http().map_err(RpcError::server)?;
                Ok(Value::Bool(true))
            });
        }
        let a = self.clone();
        register(r, "admin_startWS", move |_, p| a.start_ws(p));
        let a = self.clone();
        register(r, "admin_stopWS", move |_, _| {
            a.endpoints.stop_ws().map_err(RpcError::server)?;
            Ok(Value::Bool(true))
        });
        let a = self.clone();
        register(r, "admin_setMaxSubscriptionPerWSConn", move |_, p| {
            let limit: i32 = p.required(0)?;
            if limit < 1 {
                return Err(RpcError::server(format!(
                    "invalid subscription limit {limit}: must be at least 1"
                )));
            }
            a.limit.set(i64::from(limit));
            Ok(Value::Null)
        });
    }

    fn request(
        p: &Params,
        port: u16,
        apis: &str,
        with_vhosts: bool,
    ) -> Result<EndpointRequest, RpcError> {
        Ok(EndpointRequest {
            host: p
                .optional::<String>(0)?
                .unwrap_or_else(|| "localhost".into()),
            port: p.optional::<u16>(1)?.unwrap_or(port),
            origins: p
                .optional::<String>(2)?
                .map(|s| split_list(&s))
                .unwrap_or_default(),
            apis: parse_module_list(&p.optional::<String>(3)?.unwrap_or_else(|| apis.into())),
            vhosts: if with_vhosts {
                p.optional::<String>(4)?.map(|s| split_list(&s))
            } else {
                None
            },
        })
    }

    /// `admin_startHTTP(host?, port?, cors?, apis?, vhosts?)`: true, or an error.
    fn start_http(&self, p: &Params) -> Result<Value, RpcError> {
        let req = Self::request(p, DEFAULT_HTTP_PORT, DEFAULT_HTTP_APIS, true)?;
        self.endpoints.start_http(req).map_err(RpcError::server)?;
        Ok(Value::Bool(true))
    }

    /// `admin_startWS(host?, port?, origins?, apis?)`: true, or an error.
    fn start_ws(&self, p: &Params) -> Result<Value, RpcError> {
        let req = Self::request(p, DEFAULT_WS_PORT, DEFAULT_WS_APIS, false)?;
        self.endpoints.start_ws(req).map_err(RpcError::server)?;
        Ok(Value::Bool(true))
    }
}
