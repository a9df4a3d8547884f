//! Start-up and shutdown of the whole node: the data directory and its lock, the keystore and
//! unlocked keys, the method table, and the endpoints (HTTP, WebSocket, IPC) that `admin_*`
//! opens and closes.

pub mod config;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

pub use config::Config;

use crate::api::admin::{split_list, AdminApi, EndpointRequest, Endpoints};
use crate::api::chain::ChainFeeds;
use crate::api::net::NetApi;
use crate::api::personal::PersonalApi;
use crate::datadir::{atomic, DataDir, DatadirLock};
use crate::keystore::unlock::Unlocked;
use crate::keystore::{Keystore, ScryptParams};
use crate::rpc::endpoint::{bind_address, Endpoint, HttpConfig, IpcConfig, WsConfig};
use crate::rpc::http::HttpServer;
use crate::rpc::ipc::IpcServer;
use crate::rpc::server::{parse_module_list, DEFAULT_LIMITS};
use crate::rpc::ws::WsServer;
use crate::rpc::{Dispatcher, Registry, SubscriptionLimit, Transport};
use crate::{datadir, log};

/// Why the node could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The data directory cannot be created, is locked by another chaind, or a file in it
    /// cannot be written.
    #[error(transparent)]
    Datadir(#[from] datadir::Error),
    #[error("{0}")]
    Keystore(#[from] crate::keystore::Error),
    #[error("{0}")]
    Endpoint(String),
}

/// One running endpoint and the `host:port` it was started with.
struct Running {
    given: String,
    endpoint: Box<dyn Endpoint>,
}

/// The node's endpoints; `admin_*` opens and closes HTTP and WebSocket through it.
pub struct EndpointSet {
    registry: OnceLock<Arc<Registry>>,
    http: Mutex<Option<Running>>,
    ws: Mutex<Option<Running>>,
    ipc: Mutex<Option<Box<dyn Endpoint>>>,
    /// The configured virtual hosts (`--rpcvhosts`): what `admin_startHTTP` allows when its
    /// `vhosts` argument is omitted, as in the reference.
    vhosts: Vec<String>,
}

/// Whether an HTTP or WebSocket endpoint on `host:port` can be reached from other machines,
/// which arms the unlock guard of DECISIONS.md: true unless the address it binds is a
/// loopback address (`localhost`, `127.0.0.0/8`, `[::1]`). The unspecified addresses
/// (`0.0.0.0`, `::`) listen on every interface, so they count as public. Fails when the host
/// does not resolve.
pub(crate) fn listens_publicly(host: &str, port: u16) -> Result<bool, String> {
    let addr = bind_address(host, port).map_err(|e| e.to_string())?;
    Ok(!addr.ip().is_loopback())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl EndpointSet {
    fn new(vhosts: Vec<String>) -> EndpointSet {
        EndpointSet {
            registry: OnceLock::new(),
            http: Mutex::new(None),
            ws: Mutex::new(None),
            ipc: Mutex::new(None),
            vhosts,
        }
    }

    fn registry(&self) -> Arc<Registry> {
        self.registry
            .get()
            .expect("the registry is set before any endpoint starts")
            .clone()
    }

    fn dispatcher(
        &self,
        transport: Transport,
        apis: Option<BTreeSet<String>>,
        host: &str,
        port: u16,
    ) -> Result<Dispatcher, String> {
        let public = match transport {
            Transport::Ipc => false,
            _ => listens_publicly(host, port)?,
        };
        Ok(Dispatcher::new(
            self.registry(),
            apis,
            transport,
            public,
            DEFAULT_LIMITS,
        ))
    }

    /// Opens the IPC endpoint at `path`.
    pub fn start_ipc(&self, path: &Path) -> Result<(), String> {
        let d = self.dispatcher(Transport::Ipc, None, "", 0)?;
        let server = IpcServer::start(
            &IpcConfig {
                path: path.to_path_buf(),
            },
            d,
        )
        .map_err(|e| format!("cannot open IPC endpoint {}: {e}", path.display()))?;
        log::info("IPC endpoint opened", &[("url", &server.url())]);
        *lock(&self.ipc) = Some(Box::new(server));
        Ok(())
    }

    /// Closes every endpoint.
    pub fn stop_all(&self) {
        let _ = Self::stop(&self.http, "HTTP");
        let _ = Self::stop(&self.ws, "WebSocket");
        if let Some(e) = lock(&self.ipc).take() {
            let url = e.url();
            e.stop();
            log::info("IPC endpoint closed", &[("url", &url)]);
        }
    }
}

impl Endpoints for EndpointSet {
    fn start_http(&self, req: EndpointRequest) -> Result<(), String> {
        self.start(&self.http, "HTTP", Transport::Http, req, |req, d| {
            let mut cfg = HttpConfig::new(req.host.clone(), req.port);
            cfg.cors = req.origins.clone();
            cfg.vhosts = req.vhosts.clone().unwrap_or_else(|| self.vhosts.clone());
            Ok(Box::new(HttpServer::start(&cfg, d)?))
        })
    }

    fn stop_http(&self) -> Result<(), String> {
        Self::stop(&self.http, "HTTP")
    }

    fn start_ws(&self, req: EndpointRequest) -> Result<(), String> {
        self.start(&self.ws, "WebSocket", Transport::Ws, req, |req, d| {
            let mut cfg = WsConfig::new(req.host.clone(), req.port);
            cfg.origins = req.origins.clone();
            Ok(Box::new(WsServer::start(&cfg, d)?))
        })
    }

    fn stop_ws(&self) -> Result<(), String> {
        Self::stop(&self.ws, "WebSocket")
    }
}

impl EndpointSet {
    /// Starts the `name` endpoint (`HTTP` or `WebSocket`) into `slot` unless one runs:
    /// `<name> RPC already running on <host>:<port as given>`, or the listen error.
    fn start(
        &self,
        slot: &Mutex<Option<Running>>,
        name: &str,
        transport: Transport,
        req: EndpointRequest,
        open: impl FnOnce(&EndpointRequest, Dispatcher) -> std::io::Result<Box<dyn Endpoint>>,
    ) -> Result<(), String> {
        let mut slot = lock(slot);
        if let Some(r) = slot.as_ref() {
            return Err(format!("{name} RPC already running on {}", r.given));
        }
        let d = self.dispatcher(transport, Some(req.apis.clone()), &req.host, req.port)?;
        let endpoint = open(&req, d).map_err(|e| e.to_string())?;
        let apis: Vec<&str> = req.apis.iter().map(String::as_str).collect();
        log::info(
            &format!("{name} endpoint opened"),
            &[("url", &endpoint.url()), ("apis", &apis.join(","))],
        );
        *slot = Some(Running {
            given: format!("{}:{}", req.host, req.port),
            endpoint,
        });
        Ok(())
    }

    /// Stops the `name` endpoint of `slot`: `<name> RPC not running` when none runs.
    fn stop(slot: &Mutex<Option<Running>>, name: &str) -> Result<(), String> {
        let r = lock(slot)
            .take()
            .ok_or_else(|| format!("{name} RPC not running"))?;
        let url = r.endpoint.url();
        r.endpoint.stop();
        log::info(&format!("{name} endpoint closed"), &[("url", &url)]);
        Ok(())
    }
}

/// A running node.
pub struct Node {
    pub datadir: PathBuf,
    pub keystore: Arc<Keystore>,
    pub unlocked: Arc<Unlocked>,
    pub registry: Arc<Registry>,
    pub endpoints: Arc<EndpointSet>,
    pub feeds: ChainFeeds,
    _lock: DatadirLock,
}

/// The IPC path of `cfg`: a bare file name goes into the data directory (see
/// [`DataDir::ipc_path`]).
pub fn ipc_path(cfg: &Config, datadir: &Path) -> PathBuf {
    DataDir::new(datadir).ipc_path(cfg.ipcpath.as_deref())
}

impl Node {
    /// Opens the data directory (creating it with mode 0700), takes its lock, opens the
    /// keystore, builds the method table and opens the configured endpoints.
    pub fn start(cfg: &Config) -> Result<Node, StartError> {
        log::set_verbosity(cfg.verbosity);
        let datadir = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
        let datadir = std::path::absolute(&datadir).unwrap_or(datadir);
        let layout = DataDir::new(&datadir).with_keystore(cfg.keystore.as_deref());
        layout.create()?;
        let lock = layout.lock()?;
        let ks_dir = layout.keystore();
        let scrypt = if cfg.lightkdf {
            ScryptParams::LIGHT
        } else {
            ScryptParams::STANDARD
        };
        let keystore = Arc::new(Keystore::open(&ks_dir)?.with_scrypt(scrypt));
        if cfg.dev {
            ensure_dev_account(&layout, &keystore)?;
        }
        let unlocked = Arc::new(Unlocked::new());
        let limit = SubscriptionLimit::default();
        limit.set(i64::from(cfg.wsmaxsubscriptionperconn));
        let endpoints = Arc::new(EndpointSet::new(split_list(&cfg.rpcvhosts)));
        let feeds = ChainFeeds::default();
        let mut registry = Registry::new(limit.clone());
        Arc::new(PersonalApi::new(
            keystore.clone(),
            unlocked.clone(),
            cfg.allow_insecure_unlock,
        ))
        .register(&mut registry);
        Arc::new(AdminApi::new(datadir.clone(), endpoints.clone(), limit)).register(&mut registry);
        Arc::new(NetApi::new(cfg.networkid, Arc::new(AtomicBool::new(false))))
            .register(&mut registry);
        crate::api::web3::register_web3(&mut registry);
        feeds.register(&mut registry);
        let registry = Arc::new(registry);
        let _ = endpoints.registry.set(registry.clone());
        let node = Node {
            datadir: datadir.clone(),
            keystore,
            unlocked,
            registry,
            endpoints,
            feeds,
            _lock: lock,
        };
        log::info(
            "Keystore opened",
            &[
                ("dir", &ks_dir.display().to_string()),
                ("accounts", &node.keystore.accounts().len().to_string()),
            ],
        );
        if let Err(e) = node.open_endpoints(cfg, &datadir) {
            node.stop();
            return Err(StartError::Endpoint(e));
        }
        Ok(node)
    }

    fn open_endpoints(&self, cfg: &Config, datadir: &Path) -> Result<(), String> {
        if !cfg.ipcdisable {
            self.endpoints.start_ipc(&ipc_path(cfg, datadir))?;
        }
        if cfg.rpc {
            let req = EndpointRequest {
                host: cfg.rpcaddr.clone(),
                port: cfg.rpcport,
                origins: split_list(&cfg.rpccorsdomain),
                apis: parse_module_list(&cfg.rpcapi),
                vhosts: None,
            };
            self.endpoints.start_http(req)?;
        }
        if cfg.ws {
            let req = EndpointRequest {
                host: cfg.wsaddr.clone(),
                port: cfg.wsport,
                origins: split_list(&cfg.wsorigins),
                apis: parse_module_list(&cfg.wsapi),
                vhosts: None,
            };
            self.endpoints.start_ws(req)?;
        }
        Ok(())
    }

    /// Closes every endpoint and drops (zeroizes) every unlocked key.
    pub fn stop(&self) {
        self.endpoints.stop_all();
        self.unlocked.shutdown();
        log::info("Node stopped", &[]);
    }
}

/// On a fresh `--dev` data directory, creates the developer account (empty passphrase) and
/// records its address in `<datadir>/dev-account`; later starts leave the keystore alone.
fn ensure_dev_account(datadir: &DataDir, keystore: &Keystore) -> Result<(), StartError> {
    let marker = datadir.dev_account();
    if marker.exists() {
        return Ok(());
    }
    let acct = keystore.new_account("")?;
    // The data directory's LOCK is ours, so no other writer can race us here.
    atomic::write_atomic(&marker, format!("{}\n", acct.address).as_bytes(), |_, _| {
        Ok::<_, datadir::Error>(())
    })?;
    log::info(
        "Developer account created",
        &[
            ("address", &acct.address.to_string()),
            ("passphrase", "empty"),
        ],
    );
    Ok(())
}

/// Runs `chaind`: starts the node, waits for SIGINT or SIGTERM, shuts down. Returns the exit
/// code.
pub fn run(cfg: Config) -> i32 {
    use signal_hook::consts::{SIGINT, SIGTERM};
    // Register before starting, so that a signal during start-up is not lost.
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            log::error("Cannot install signal handlers", &[("err", &e.to_string())]);
            return 1;
        }
    };
    let node = match Node::start(&cfg) {
        Ok(n) => n,
        Err(e) => {
            log::error("Fatal: cannot start the node", &[("err", &e.to_string())]);
            eprintln!("error: {e}");
            return 1;
        }
    };
    log::info(
        "Node started",
        &[("datadir", &node.datadir.display().to_string())],
    );
    let sig = signals.forever().next();
    log::info("Shutting down", &[("signal", &format!("{sig:?}"))]);
    node.stop();
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_listeners_are_private_and_every_other_one_public() {
        for host in [
            "localhost",
            "LocalHost",
            "127.0.0.1",
            "127.0.0.2",
            "[::1]",
            "::1",
        ] {
            assert_eq!(listens_publicly(host, 0), Ok(false), "{host}");
        }
        for host in [
            "0.0.0.0",
            "::",
            "[::]",
            "192.168.1.10",
            "10.0.0.1",
            "[fe80::1]",
        ] {
            assert_eq!(listens_publicly(host, 8551), Ok(true), "{host}");
        }
        // An IPv4-mapped loopback address is not taken for loopback: the guard errs on the
        // safe side.
        assert_eq!(listens_publicly("::ffff:127.0.0.1", 0), Ok(true));
        assert!(listens_publicly("no such host.invalid", 0).is_err());
    }

    fn cfg(args: &[&str]) -> Config {
        let argv: Vec<String> = std::iter::once("chaind")
            .chain(args.iter().copied())
            .map(str::to_string)
            .collect();
        Config::from_argv(&argv).unwrap()
    }

    #[test]
    fn a_bare_ipc_file_name_goes_into_the_datadir() {
        let dd = Path::new("/data/node");
        assert_eq!(ipc_path(&cfg(&[]), dd), dd.join("chaind.ipc"));
        assert_eq!(
            ipc_path(&cfg(&["--ipcpath", "my.ipc"]), dd),
            dd.join("my.ipc")
        );
        // Anything with a directory part is taken as given (relative to the working
        // directory when relative).
        assert_eq!(
            ipc_path(&cfg(&["--ipcpath", "run/my.ipc"]), dd),
            PathBuf::from("run/my.ipc")
        );
        assert_eq!(
            ipc_path(&cfg(&["--ipcpath", "./my.ipc"]), dd),
            PathBuf::from("./my.ipc")
        );
        assert_eq!(
            ipc_path(&cfg(&["--ipcpath", "/tmp/x/my.ipc"]), dd),
            PathBuf::from("/tmp/x/my.ipc")
        );
    }

    #[test]
    fn comma_lists_are_trimmed_and_drop_empty_entries() {
        assert_eq!(
            split_list(" http://a , ,http://b,"),
            vec!["http://a", "http://b"]
        );
        assert!(split_list("").is_empty());
    }
}
