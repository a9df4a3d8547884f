//! Start-up and shutdown of the whole node: the data directory and its lock, the keystore and
//! unlocked keys, the namespaces and their method table, and the background services (unlock
//! expiry, the keystore watch, the notification pump, the endpoints), started in dependency
//! order and stopped in reverse.

pub mod config;
pub mod info;
mod offline;
pub mod peers;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};

pub use config::Config;

use crate::api::admin::{
    split_list, AdminApi, EndpointInfo, EndpointRequest, Endpoints, RunningEndpoints,
};
use crate::api::chain::{ChainApi, ChainFeeds};
use crate::api::error::{AdminError, Result as ApiResult};
use crate::api::net::NetApi;
use crate::api::notify::NotificationPump;
use crate::api::personal::PersonalApi;
use crate::api::{rpc::RpcApi, web3::Web3Api, Apis};
use crate::chain::genesis::Genesis;
use crate::chain::{Chain, DEFAULT_NODE_CACHE_BYTES};
use crate::crypto::Address;
use crate::datadir::{atomic, DataDir, DatadirLock};
use crate::events::Bus;
use crate::keystore::unlock::Unlocked;
use crate::keystore::{Keystore, ScryptParams};
use crate::rpc::endpoint::{bind_address, Endpoint, HttpConfig, IpcConfig, WsConfig};
use crate::rpc::http::HttpServer;
use crate::rpc::ipc::IpcServer;
use crate::rpc::server::DEFAULT_LIMITS;
use crate::rpc::ws::WsServer;
use crate::rpc::{Dispatcher, Registry, SubscriptionLimit, Transport};
use crate::service::{Service, Services};
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
    Service(String),
    #[error(transparent)]
    Chain(#[from] crate::chain::ChainError),
}

/// One running endpoint, the `host:port` it was started with and the modules it offers.
struct Running {
    given: String,
    endpoint: Box<dyn Endpoint>,
    apis: BTreeSet<String>,
    registry: Arc<Registry>,
}

/// The running IPC endpoint and the registry it serves (told when it closes).
type RunningIpc = (Box<dyn Endpoint>, Arc<Registry>);

/// The node's endpoints; `admin_*` opens and closes HTTP and WebSocket through it.
pub struct EndpointSet {
    http: Mutex<Option<Running>>,
    ws: Mutex<Option<Running>>,
    ipc: Mutex<Option<RunningIpc>>,
    /// The configured virtual hosts (`--rpcvhosts`): what `admin_startHTTP` allows when its
    /// `vhosts` argument is omitted, as in the reference.
    vhosts: Vec<String>,
    /// Transport settings from the command line (timeouts, caps).
    tuning: Tuning,
}

/// Settings of the transports that the command line gives.
#[derive(Debug, Clone, Default)]
pub struct Tuning {
    /// `--rpcexecutiontimeout`: how long an HTTP call may run before it is answered 503.
    pub http_execution_timeout: Option<std::time::Duration>,
    /// `--rpcreadtimeout`: how long an HTTP request may take to arrive.
    pub http_read_timeout: Option<std::time::Duration>,
    /// `--rpcwritetimeout`: how long writing an HTTP response may take.
    pub http_write_timeout: Option<std::time::Duration>,
    /// `--rpcidletimeout`: how long a kept-alive HTTP connection may stay quiet.
    pub http_idle_timeout: Option<std::time::Duration>,
    /// `--ipcmaxconnections`.
    pub ipc_max_connections: Option<usize>,
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
    fn new(vhosts: Vec<String>, tuning: Tuning) -> EndpointSet {
        EndpointSet {
            http: Mutex::new(None),
            ws: Mutex::new(None),
            ipc: Mutex::new(None),
            vhosts,
            tuning,
        }
    }

    fn dispatcher(
        registry: Arc<Registry>,
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
            registry,
            apis,
            transport,
            public,
            DEFAULT_LIMITS,
        ))
    }

    /// Opens the IPC endpoint at `path`.
    pub fn start_ipc(&self, path: &Path, registry: Arc<Registry>) -> Result<(), String> {
        let d = Self::dispatcher(registry.clone(), Transport::Ipc, None, "", 0)?;
        let mut cfg = IpcConfig::new(path.to_path_buf());
        if let Some(n) = self.tuning.ipc_max_connections {
            cfg.max_connections = n;
        }
        let server = IpcServer::start(&cfg, d)
            .map_err(|e| format!("cannot open IPC endpoint {}: {e}", path.display()))?;
        let url = server.url();
        registry.endpoint_opened(Transport::Ipc, None);
        *lock(&self.ipc) = Some((Box::new(server), registry));
        // Logged once recorded: a script that waits for this line finds it in
        // admin_endpoints.
        log::info("IPC endpoint opened", &[("url", &url)]);
        Ok(())
    }

    /// Closes every endpoint.
    pub fn stop_all(&self) {
        let _ = Self::stop(&self.http, "HTTP", Transport::Http);
        let _ = Self::stop(&self.ws, "WebSocket", Transport::Ws);
        if let Some((e, registry)) = lock(&self.ipc).take() {
            let url = e.url();
            e.stop();
            registry.endpoint_closed(Transport::Ipc);
            log::info("IPC endpoint closed", &[("url", &url)]);
        }
    }
}

impl Endpoints for EndpointSet {
    fn start_http(&self, req: EndpointRequest, registry: Arc<Registry>) -> ApiResult<()> {
        self.start(
            &self.http,
            "HTTP",
            Transport::Http,
            req,
            registry,
            |req, d| {
                let mut cfg = HttpConfig::new(req.host.clone(), req.port);
                cfg.cors = req.origins.clone();
                cfg.vhosts = req.vhosts.clone().unwrap_or_else(|| self.vhosts.clone());
                let t = &self.tuning;
                if let Some(d) = t.http_execution_timeout {
                    cfg.execution_timeout = d;
                }
                if let Some(d) = t.http_read_timeout {
                    cfg.body_timeout = d;
                }
                if let Some(d) = t.http_write_timeout {
                    cfg.write_timeout = d;
                }
                if let Some(d) = t.http_idle_timeout {
                    cfg.idle_timeout = d;
                }
                Ok(Box::new(HttpServer::start(&cfg, d)?))
            },
        )
    }

    fn stop_http(&self) -> ApiResult<()> {
        Self::stop(&self.http, "HTTP", Transport::Http)
    }

    fn start_ws(&self, req: EndpointRequest, registry: Arc<Registry>) -> ApiResult<()> {
        self.start(
            &self.ws,
            "WebSocket",
            Transport::Ws,
            req,
            registry,
            |req, d| {
                let mut cfg = WsConfig::new(req.host.clone(), req.port);
                cfg.origins = req.origins.clone();
                Ok(Box::new(WsServer::start(&cfg, d)?))
            },
        )
    }

    fn stop_ws(&self) -> ApiResult<()> {
        Self::stop(&self.ws, "WebSocket", Transport::Ws)
    }

    fn running(&self) -> RunningEndpoints {
        let info = |slot: &Mutex<Option<Running>>| {
            lock(slot).as_ref().map(|r| {
                let mut apis: BTreeSet<String> = r.apis.clone();
                apis.insert("rpc".into());
                EndpointInfo {
                    url: r.endpoint.url(),
                    apis: Some(apis.into_iter().collect()),
                }
            })
        };
        RunningEndpoints {
            http: info(&self.http),
            ws: info(&self.ws),
            ipc: lock(&self.ipc).as_ref().map(|(e, _)| EndpointInfo {
                url: e.url(),
                apis: None,
            }),
        }
    }
}

impl EndpointSet {
    /// Starts the `name` endpoint (`HTTP` or `WebSocket`) into `slot` unless one runs:
    /// `<name> RPC already running on <host>:<port as given>`, or the listen error.
    fn start(
        &self,
        slot: &Mutex<Option<Running>>,
        name: &'static str,
        transport: Transport,
        req: EndpointRequest,
        registry: Arc<Registry>,
        open: impl FnOnce(&EndpointRequest, Dispatcher) -> std::io::Result<Box<dyn Endpoint>>,
    ) -> ApiResult<()> {
        let mut slot = lock(slot);
        if let Some(r) = slot.as_ref() {
            return Err(AdminError::AlreadyRunning {
                transport: name,
                given: r.given.clone(),
            }
            .into());
        }
        let d = Self::dispatcher(
            registry.clone(),
            transport,
            Some(req.apis.clone()),
            &req.host,
            req.port,
        )
        .map_err(AdminError::Open)?;
        let endpoint = open(&req, d).map_err(|e| AdminError::Open(e.to_string()))?;
        let apis = req.apis.iter().cloned().collect::<Vec<_>>().join(",");
        let url = endpoint.url();
        registry.endpoint_opened(transport, Some(req.apis.clone()));
        *slot = Some(Running {
            given: format!("{}:{}", req.host, req.port),
            endpoint,
            apis: req.apis,
            registry,
        });
        // The URL holds the port actually bound: the line a script greps for port 0, logged
        // once admin_endpoints shows it too.
        log::info(
            &format!("{name} endpoint opened"),
            &[("url", &url), ("apis", &apis)],
        );
        Ok(())
    }

    /// Stops the `name` endpoint of `slot`: `<name> RPC not running` when none runs.
    fn stop(
        slot: &Mutex<Option<Running>>,
        name: &'static str,
        transport: Transport,
    ) -> ApiResult<()> {
        let r = lock(slot).take().ok_or(AdminError::NotRunning(name))?;
        let url = r.endpoint.url();
        r.endpoint.stop();
        r.registry.endpoint_closed(transport);
        log::info(&format!("{name} endpoint closed"), &[("url", &url)]);
        Ok(())
    }
}

/// The endpoints as a service: opens those the configuration asks for, in the order IPC,
/// HTTP, WebSocket, and closes every endpoint (those `admin_*` opened included) when stopped.
struct EndpointService {
    set: Arc<EndpointSet>,
    registry: Arc<Registry>,
    ipc: Option<PathBuf>,
    http: Option<EndpointRequest>,
    ws: Option<EndpointRequest>,
}

impl Service for EndpointService {
    fn name(&self) -> &'static str {
        "endpoints"
    }

    fn start(&mut self) -> Result<(), String> {
        let opened = (|| {
            if let Some(path) = &self.ipc {
                self.set.start_ipc(path, self.registry.clone())?;
            }
            if let Some(req) = self.http.clone() {
                self.set
                    .start_http(req, self.registry.clone())
                    .map_err(|e| e.to_string())?;
            }
            if let Some(req) = self.ws.clone() {
                self.set
                    .start_ws(req, self.registry.clone())
                    .map_err(|e| e.to_string())?;
            }
            Ok(())
        })();
        if opened.is_err() {
            self.set.stop_all();
        }
        opened
    }

    fn stop(&mut self) {
        self.set.stop_all();
    }
}

/// The modules a `--rpcapi`/`--wsapi` list offers, its notes about the reference's module
/// names logged. The configuration was checked at parse time ([`Config::check`]), so an
/// unknown name cannot reach here; were one to, it would offer nothing.
fn module_list(text: &str) -> BTreeSet<String> {
    match crate::api::spec::resolve_modules(text) {
        Ok(list) => {
            for w in &list.warnings {
                log::warn("Module list", &[("note", w)]);
            }
            list.offered
        }
        Err(e) => {
            log::error("Module list", &[("err", &e)]);
            BTreeSet::new()
        }
    }
}

/// What `admin_nodeConfig` shows of `cfg`: the node's network id, its chain's unit price,
/// the validator it seals as (`sealing_as`), its trie-node cache and BFT settings.
fn node_config(
    cfg: &Config,
    datadir: &Path,
    chain: Option<&Chain>,
    sealing_as: Option<crate::crypto::Address>,
) -> crate::api::admin::NodeConfigJson {
    use crate::api::admin::{IstanbulNodeConfig, NodeConfigJson, TrieNodeCacheJson};
    NodeConfigJson {
        network_id: cfg.networkid,
        sync_mode: "full",
        no_pruning: true,
        worker_disable: sealing_as.is_none(),
        // Always kept here (chain_isSenderTxHashIndexingEnabled).
        sender_tx_hash_indexing: true,
        parallel_db_write: false,
        trie_node_cache: TrieNodeCacheJson {
            cache_type: "LocalCache",
            local_cache_size_mib: cfg.trie_cache_limit,
            fast_cache_file_dir: datadir.join("fastcache").display().to_string(),
            fast_cache_save_period: u64::try_from(cfg.trie_cache_save_period.as_nanos())
                .unwrap_or(u64::MAX),
        },
        gas_price: chain.map(Chain::unit_price),
        rewardbase: sealing_as.unwrap_or_default(),
        istanbul: IstanbulNodeConfig {
            block_period: cfg.dev_period.as_secs(),
            proposer_policy: info::ISTANBUL.1,
            epoch: info::ISTANBUL.0,
            sub_group_size: info::ISTANBUL.2,
        },
        disable_unsafe_debug: cfg.unsafe_debug_disable,
    }
}

/// A running node.
pub struct Node {
    pub datadir: PathBuf,
    pub keystore: Arc<Keystore>,
    pub unlocked: Arc<Unlocked>,
    pub registry: Arc<Registry>,
    pub endpoints: Arc<EndpointSet>,
    /// Where domain code publishes events (new heads, pending transactions, peers).
    pub bus: Arc<Bus>,
    /// The chain, when the node has one.
    pub chain: Option<Arc<Chain>>,
    services: Mutex<Services>,
    _lock: DatadirLock,
}

/// The IPC path of `cfg`: a bare file name goes into the data directory (see
/// [`DataDir::ipc_path`]).
pub fn ipc_path(cfg: &Config, datadir: &Path) -> PathBuf {
    DataDir::new(datadir).ipc_path(cfg.ipcpath.as_deref())
}

impl Node {
    /// Opens the data directory (creating it with mode 0700), takes its lock, opens the
    /// keystore, builds every namespace and the method table in one pass, and starts the
    /// services: unlock expiry, the keystore watch, the notification pump, then the endpoints
    /// the configuration asks for. On failure, what was started is stopped again.
    pub fn start(cfg: &Config) -> Result<Node, StartError> {
        log::set_verbosity(cfg.verbosity);
        let datadir = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
        let datadir = std::path::absolute(&datadir).unwrap_or(datadir);
        let layout = DataDir::new(&datadir).with_keystore(cfg.keystore.as_deref());
        layout.create()?;
        let datadir_lock = layout.lock()?;
        let ks_dir = layout.keystore();
        let scrypt = if cfg.lightkdf {
            ScryptParams::LIGHT
        } else {
            ScryptParams::STANDARD
        };
        let keystore = Arc::new(Keystore::open(&ks_dir)?.with_scrypt(scrypt));
        let mut sealer = None;
        let chain = if let Some(genesis) = init_genesis(&layout)? {
            // A chain written by `chaind init`: served; sealed only with --dev, by the
            // validator the genesis names, whose key the keystore holds under an empty
            // passphrase (a private test network of one node).
            let chain = Arc::new(Chain::open_with(
                &layout.chaindata(),
                &genesis,
                cache_bytes(cfg),
            )?);
            chain.allow_local_anchor(cfg.allow_local_anchortx);
            chain.set_queue_limits(cfg.queue_limits());
            if cfg.dev {
                let validator = genesis.validator.ok_or_else(|| {
                    StartError::Service(
                        "--dev: the genesis of this data directory (chaind init) names no validator".into(),
                    )
                })?;
                let key = keystore.load_key(validator, "").map_err(|e| {
                    StartError::Service(format!(
                        "--dev: the genesis of this data directory (chaind init) names validator {validator}, whose key must be in the keystore with an empty passphrase: {e}"
                    ))
                })?;
                sealer = Some(crate::chain::Sealer::new(
                    chain.clone(),
                    key,
                    cfg.dev_period,
                ));
            }
            Some(chain)
        } else if cfg.dev {
            let developer = ensure_dev_account(&layout, &keystore)?;
            // The developer account is the validator: its key (passphrase empty) seals.
            let validator = keystore.load_key(developer, "")?;
            let mut genesis = Genesis::dev(developer, DEV_BALANCE);
            genesis.chain_id = cfg.chainid;
            genesis.network_id = cfg.networkid;
            let chain = Chain::open_with(&layout.chaindata(), &genesis, cache_bytes(cfg))?;
            chain.allow_local_anchor(cfg.allow_local_anchortx);
            chain.set_queue_limits(cfg.queue_limits());
            log::info(
                "Chain opened",
                &[
                    ("chainid", &chain.chain_id().to_string()),
                    ("number", &chain.head_number().to_string()),
                    ("hash", &format!("0x{}", hex::encode(chain.head_hash()))),
                ],
            );
            let chain = Arc::new(chain);
            sealer = Some(crate::chain::Sealer::new(
                chain.clone(),
                validator,
                cfg.dev_period,
            ));
            Some(chain)
        } else {
            None
        };
        // The node key: the one --nodekey names (which must exist), else <datadir>/nodekey,
        // created when missing.
        let identity = Arc::new(
            crate::p2p::identity::NodeIdentity::load_or_create(
                cfg.nodekey.as_deref().unwrap_or(&layout.nodekey()),
                cfg.nodekey.is_none(),
            )
            .map_err(|e| StartError::Service(e.to_string()))?,
        );
        if let Some(c) = &chain {
            c.load_node_cache(&datadir);
        }
        let unlocked = Arc::new(Unlocked::new());
        let limit = SubscriptionLimit::default();
        limit.set(i64::from(cfg.wsmaxsubscriptionperconn));
        let endpoints = Arc::new(EndpointSet::new(
            split_list(&cfg.rpcvhosts),
            Tuning {
                http_execution_timeout: Some(cfg.execution_timeout()),
                http_read_timeout: Some(cfg.read_timeout()),
                http_write_timeout: Some(cfg.write_timeout()),
                http_idle_timeout: Some(cfg.idle_timeout()),
                ipc_max_connections: Some(cfg.ipcmaxconnections as usize),
            },
        ));
        let bus = Bus::new();
        if let Some(c) = &chain {
            c.publish_to(bus.clone());
        }
        // The p2p server: only a node with a chain has something to speak about with peers.
        let listening = Arc::new(AtomicBool::new(false));
        let mut p2p_sync = None;
        let p2p = match &chain {
            Some(c) => {
                let static_nodes =
                    crate::p2p::server::load_static_nodes(cfg.staticnodes.as_deref(), &datadir)
                        .map_err(StartError::Service)?;
                let protocol = crate::p2p::sync::ChainProtocol::new(c.clone(), bus.clone());
                let server = crate::p2p::server::PeerServer::new(
                    identity.clone(),
                    protocol.clone(),
                    bus.clone(),
                    crate::p2p::server::ServerConfig {
                        host: cfg.p2paddr.clone(),
                        port: cfg.port,
                        max_inbound: cfg.maxconnections,
                        static_nodes,
                    },
                    listening.clone(),
                );
                let set: Arc<dyn crate::p2p::peer::PeerSet> = server.clone();
                protocol.attach(Arc::downgrade(&set));
                p2p_sync = Some(protocol);
                Some(server)
            }
            None => {
                log::info(
                    "P2P disabled",
                    &[(
                        "reason",
                        "no chain: start with --dev, or after chaind init GENESIS.json",
                    )],
                );
                None
            }
        };
        let peers: Option<Arc<dyn crate::api::admin::Peers>> = p2p
            .clone()
            .map(|s| Arc::new(peers::ServerPeers(s)) as Arc<dyn crate::api::admin::Peers>);
        let metrics = node_metrics(cfg, chain.as_ref(), peers.clone());
        let sealing_as = sealer.as_ref().and_then(|s| s.validator());
        let sync_status = p2p_sync
            .clone()
            .map(|p| Arc::new(peers::ProtocolSync(p)) as Arc<dyn crate::api::chain::SyncStatus>);
        let feeds = Arc::new(ChainFeeds::default());
        let filters = crate::api::filters::Filters::new();
        let chain_api = Arc::new(
            ChainApi::new(
                keystore.clone(),
                unlocked.clone(),
                feeds.clone(),
                chain.clone(),
            )
            .with_sync(sync_status),
        );
        let contract_api = Arc::new(crate::api::contract::ContractApi::new(chain.clone()));
        let logs_api = Arc::new(crate::api::logs::LogsApi::new(
            chain.clone(),
            filters.clone(),
        ));
        let fee_api = Arc::new(crate::api::fees::FeeApi::new(chain.clone()));
        let apis = Apis {
            admin: Arc::new(
                AdminApi::new(datadir.clone(), endpoints.clone(), limit.clone())
                    .with_node_info(Arc::new(info::LocalNode {
                        identity: identity.clone(),
                        chain: chain.clone(),
                        p2p: p2p.clone(),
                    }))
                    .with_chain(chain.clone())
                    .with_peers(peers.clone())
                    .with_node_config(node_config(cfg, &datadir, chain.as_deref(), sealing_as)),
            ),
            chain: chain_api.clone(),
            consensus: Arc::new(crate::api::consensus::ConsensusApi::new(
                chain.clone(),
                sealing_as,
            )),
            recover: Arc::new(crate::api::recover::RecoverApi::new(chain.clone())),
            contract: contract_api.clone(),
            logs: logs_api.clone(),
            eth: Arc::new(crate::api::eth::EthApi::new(
                chain_api,
                contract_api,
                logs_api,
                fee_api.clone(),
                feeds.clone(),
                chain.clone(),
                sealing_as.unwrap_or_else(|| identity.address()),
            )),
            fees: fee_api,
            net: Arc::new(NetApi::new(cfg.networkid, listening).with_peers(peers)),
            personal: Arc::new(
                PersonalApi::new(
                    keystore.clone(),
                    unlocked.clone(),
                    cfg.allow_insecure_unlock,
                )
                .with_chain(chain.clone()),
            ),
            rpc: Arc::new(RpcApi),
            debug: Arc::new(crate::api::debug::DebugApi::new(
                chain.clone(),
                metrics.clone(),
            )),
            txpool: Arc::new(crate::api::txpool::TxpoolApi::new(chain.clone())),
            web3: Arc::new(Web3Api),
        };
        let mut registry = Registry::new(limit);
        apis.register(&mut registry);
        if metrics.collecting() {
            registry.record_to(metrics.clone());
        }
        if cfg.unsafe_debug_disable {
            // The reference's unsafe debug groups: IPC only (admin-and-rpc 5).
            for m in crate::api::debug::UNSAFE {
                registry.restrict_to_ipc(m);
            }
        }
        let registry = Arc::new(registry);
        log::info(
            "Keystore opened",
            &[
                ("dir", &ks_dir.display().to_string()),
                ("accounts", &keystore.accounts().len().to_string()),
            ],
        );
        let endpoint_service = EndpointService {
            set: endpoints.clone(),
            registry: registry.clone(),
            ipc: (!cfg.ipcdisable).then(|| ipc_path(cfg, &datadir)),
            http: cfg.rpc.then(|| EndpointRequest {
                host: cfg.rpcaddr.clone(),
                port: cfg.rpcport,
                origins: split_list(&cfg.rpccorsdomain),
                apis: module_list(&cfg.rpcapi),
                vhosts: None,
            }),
            ws: cfg.ws.then(|| EndpointRequest {
                host: cfg.wsaddr.clone(),
                port: cfg.wsport,
                origins: split_list(&cfg.wsorigins),
                apis: module_list(&cfg.wsapi),
                vhosts: None,
            }),
        };
        let node = Node {
            datadir,
            keystore: keystore.clone(),
            unlocked: unlocked.clone(),
            registry,
            endpoints,
            bus: bus.clone(),
            chain: chain.clone(),
            services: Mutex::new(Services::default()),
            _lock: datadir_lock,
        };
        let mut plan: Vec<Box<dyn Service>> = vec![
            Box::new(crate::keystore::unlock::ExpiryService::new(unlocked)),
            Box::new(crate::keystore::WatchService::new(keystore)),
            Box::new(NotificationPump::new(bus.clone(), feeds.clone())),
        ];
        if let Some(c) = &chain {
            // Block, pending-transaction and log filters, and the `logs` subscription.
            plan.push(Box::new(crate::api::filters::FilterService::new(
                bus,
                c.clone(),
                filters,
                feeds.logs.clone(),
            )));
        }
        if let Some(c) = &chain {
            plan.push(Box::new(crate::chain::QueueExpiry::new(c.clone())));
        }
        if let Some(s) = sealer {
            plan.push(Box::new(s));
        }
        if let Some(c) = &chain {
            if !cfg.trie_cache_save_period.is_zero() && cfg.trie_cache_limit > 0 {
                plan.push(Box::new(crate::chain::CacheSaver::new(
                    c.clone(),
                    node.datadir.clone(),
                    cfg.trie_cache_save_period,
                )));
            }
        }
        if let Some(protocol) = p2p_sync {
            // The protocol's workers before the server, so that the server (stopped first)
            // no longer hands them work while they stop.
            plan.push(protocol.service());
        }
        if let Some(server) = p2p {
            plan.push(Box::new(crate::p2p::server::PeerService(server)));
        }
        if cfg.prometheus && cfg.metrics {
            // Before the endpoints: a script that waits for them finds this line logged.
            plan.push(Box::new(crate::metrics::Exporter::new(
                PROMETHEUS_HOST,
                cfg.prometheusport,
                metrics.clone(),
            )));
        } else if cfg.prometheus {
            // The reference starts no exporter then either, silently.
            log::warn(
                "Prometheus endpoint not opened: --prometheus needs --metrics",
                &[],
            );
        }
        plan.push(Box::new(endpoint_service));
        for s in plan {
            let started = lock(&node.services).start(s);
            if let Err(e) = started {
                node.stop();
                return Err(StartError::Service(e));
            }
        }
        Ok(node)
    }

    /// Stops every service, the endpoints first and the unlock expiry (which drops and
    /// zeroizes every unlocked key) last, and closes the event bus.
    pub fn stop(&self) {
        if let Some(c) = &self.chain {
            c.stop_long_operations();
        }
        lock(&self.services).stop_all();
        self.bus.close();
        self.unlocked.shutdown();
        log::info("Node stopped", &[]);
    }

    /// The names of the running services, in start order.
    pub fn services(&self) -> Vec<&'static str> {
        lock(&self.services).names()
    }
}

/// Where the Prometheus endpoint listens. The reference listens on every interface and has
/// no flag to choose; metrics tell anyone who can read them the node's load and peers, so
/// ours stays on the loopback address (README, "Metrics").
pub const PROMETHEUS_HOST: &str = "127.0.0.1";

/// The node's metrics: collecting when `--metrics` is given, with samplers that read the
/// chain's numbers and the peer count when someone looks. A chain given collects its sealed
/// and imported blocks into them.
fn node_metrics(
    cfg: &Config,
    chain: Option<&Arc<Chain>>,
    peers: Option<Arc<dyn crate::api::admin::Peers>>,
) -> Arc<crate::metrics::Metrics> {
    let metrics = Arc::new(crate::metrics::Metrics::new(cfg.metrics));
    if let Some(c) = chain {
        if cfg.metrics {
            c.record_to(metrics.clone());
        }
        // Weak: the chain holds the metrics, which must not keep the chain alive.
        let c = Arc::downgrade(c);
        metrics.add_sampler(Box::new(move |s| {
            s.chain = c.upgrade().map(|c| c.metrics_sample());
        }));
    }
    if let Some(p) = peers {
        metrics.add_sampler(Box::new(move |s| s.peers = Some(p.count() as u64)));
    }
    metrics
}

/// The genesis file `chaind init` kept in the data directory.
const INIT_GENESIS: &str = "genesis.json";

/// The genesis that `chaind init` wrote into `datadir`, if any.
fn init_genesis(datadir: &DataDir) -> Result<Option<Genesis>, StartError> {
    let path = datadir.chaindata().join(INIT_GENESIS);
    match std::fs::read(&path) {
        Ok(bytes) => Genesis::parse(&bytes)
            .map(Some)
            .map_err(|e| StartError::Service(format!("{}: {e}", path.display()))),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(StartError::Service(format!("{}: {e}", path.display()))),
    }
}

/// The trie-node cache's size in bytes (`--state.trie-cache-limit`, in MB; 0 disables it).
fn cache_bytes(cfg: &Config) -> usize {
    usize::try_from(cfg.trie_cache_limit.saturating_mul(1 << 20)).unwrap_or(usize::MAX)
}

/// The genesis of the chain in `layout` as a node started with `cfg` would open it, without
/// creating anything: the one `chaind init` wrote, else the `--dev` genesis of the developer
/// account recorded there. `None` when the data directory has neither.
pub(crate) fn existing_genesis(
    cfg: &Config,
    layout: &DataDir,
) -> Result<Option<Genesis>, StartError> {
    if let Some(g) = init_genesis(layout)? {
        return Ok(Some(g));
    }
    let marker = layout.dev_account();
    let Ok(text) = std::fs::read_to_string(&marker) else {
        return Ok(None);
    };
    let developer = Address::parse_lenient(text.trim()).ok_or_else(|| {
        StartError::Service(format!(
            "{}: not an address: {:?}",
            marker.display(),
            text.trim()
        ))
    })?;
    let mut genesis = Genesis::dev(developer, DEV_BALANCE);
    genesis.chain_id = cfg.chainid;
    genesis.network_id = cfg.networkid;
    Ok(Some(genesis))
}

/// Writes the block of `genesis` into the chain database of `layout` (refused when it holds
/// another chain), keeps `file` (the genesis as a file) beside it for the node, and returns
/// the chain opened with a trie-node cache of `cache` bytes. The caller holds the lock.
fn write_genesis(
    layout: &DataDir,
    genesis: &Genesis,
    file: &[u8],
    cache: usize,
) -> Result<Chain, StartError> {
    let chain = Chain::open_with(&layout.chaindata(), genesis, cache)?;
    atomic::write_atomic(&layout.chaindata().join(INIT_GENESIS), file, |_, _| {
        Ok::<_, datadir::Error>(())
    })?;
    Ok(chain)
}

/// `chaind init GENESIS.json`: checks the file, writes its genesis block into the data
/// directory (refused when it holds another chain), and keeps the file there for the node.
/// Returns the exit code: 0, 2 for a bad file, 1 when the data directory cannot take it.
pub fn init(cfg: &Config, genesis_file: &Path) -> i32 {
    log::set_verbosity(cfg.verbosity);
    let bytes = match std::fs::read(genesis_file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", genesis_file.display());
            return 2;
        }
    };
    let genesis = match Genesis::parse(&bytes) {
        Ok(g) => g,
        Err(e) => {
            eprintln!("error: {}: {e}", genesis_file.display());
            return 2;
        }
    };
    let datadir = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
    let layout = DataDir::new(&datadir);
    let opened = layout
        .create()
        .map_err(StartError::from)
        .and_then(|()| layout.lock().map_err(StartError::from))
        .and_then(|lock| {
            let chain = write_genesis(&layout, &genesis, &bytes, DEFAULT_NODE_CACHE_BYTES)?;
            Ok((chain.genesis_hash()?, lock))
        });
    match opened {
        Ok((hash, _lock)) => {
            log::info(
                "Genesis block written",
                &[
                    ("hash", &format!("0x{}", hex::encode(hash))),
                    ("chainid", &genesis.chain_id.to_string()),
                ],
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// The developer account's balance in the `--dev` genesis: 10^9 of the coin (10^27 of its
/// smallest unit).
const DEV_BALANCE: [u8; 32] = {
    let mut b = [0u8; 32];
    // 10^27 = 0x033b2e3c9fd0803ce8000000
    let v: [u8; 12] = [
        0x03, 0x3b, 0x2e, 0x3c, 0x9f, 0xd0, 0x80, 0x3c, 0xe8, 0x00, 0x00, 0x00,
    ];
    let mut i = 0;
    while i < 12 {
        b[20 + i] = v[i];
        i += 1;
    }
    b
};

/// The developer account of a `--dev` data directory, created (passphrase empty) on the
/// first `--dev` start and recorded in `<datadir>/dev-account`. Its key file is written with
/// [`ScryptParams::DEV`] whatever `--lightkdf` says: with an empty passphrase, standard scrypt
/// (a second at each start, where the key is read to seal) would protect nothing.
fn ensure_dev_account(datadir: &DataDir, keystore: &Keystore) -> Result<Address, StartError> {
    let marker = datadir.dev_account();
    if let Ok(text) = std::fs::read_to_string(&marker) {
        return Address::parse_lenient(text.trim()).ok_or_else(|| {
            StartError::Service(format!(
                "{}: not an address: {:?}",
                marker.display(),
                text.trim()
            ))
        });
    }
    let acct = keystore.new_account_with("", ScryptParams::DEV)?;
    // The data directory's LOCK is ours, so no other writer can race us here.
    atomic::write_atomic(&marker, format!("{}\n", acct.address).as_bytes(), |_, _| {
        Ok::<_, datadir::Error>(())
    })?;
    log::info(
        "Developer account created",
        &[
            ("address", &acct.address.to_string()),
            ("passphrase", "empty"),
            ("kdf", "scrypt n=2"),
        ],
    );
    Ok(acct.address)
}

/// Raises the soft limit of open descriptors to the hard limit, as Go's runtime does for the
/// reference node: every connection is a descriptor, and the default soft limit (often 1,024)
/// would cap the node far below what its connection limits allow.
fn raise_open_files_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit with a valid, initialised struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

/// Caps glibc's malloc arenas at four per core (its default is eight), before any thread
/// starts. The node runs many threads (connection threads that come and go, the peers',
/// the services'), and each arena keeps what was freed in it: with sixteen arenas on two
/// cores, 200,000 subscriptions made and freed over short-lived IPC connections left 15 MB
/// more resident (`tests/under_attack.rs`); with eight, none. `MALLOC_ARENA_MAX` in the
/// environment still wins.
fn bound_malloc_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    if std::env::var_os("MALLOC_ARENA_MAX").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let arenas = i32::try_from(cores.saturating_mul(4)).unwrap_or(i32::MAX);
        // SAFETY: mallopt only changes an allocator setting; called before other threads.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

/// A signal's name as `kill -l` gives it, with the `SIG` prefix: `SIGINT`, `SIGTERM`, ...,
/// or `signal N` for one without a name here.
pub(crate) fn signal_name(sig: i32) -> String {
    use signal_hook::consts::*;
    let name = match sig {
        SIGHUP => "SIGHUP",
        SIGINT => "SIGINT",
        SIGQUIT => "SIGQUIT",
        SIGTERM => "SIGTERM",
        SIGUSR1 => "SIGUSR1",
        SIGUSR2 => "SIGUSR2",
        _ => return format!("signal {sig}"),
    };
    name.to_string()
}

/// Runs `chaind`: starts the node, waits for SIGINT or SIGTERM, shuts down. Returns the exit
/// code.
pub fn run(cfg: Config) -> i32 {
    use signal_hook::consts::{SIGINT, SIGTERM};
    bound_malloc_arenas();
    match &cfg.command {
        Some(config::Subcommand::Init { genesis }) => return init(&cfg, genesis),
        Some(config::Subcommand::Export { file, first, last }) => {
            return offline::export(&cfg, file, *first, *last)
        }
        Some(config::Subcommand::Import { file }) => return offline::import(&cfg, file),
        None => {}
    }
    // Register before starting, so that a signal during start-up is not lost.
    let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        Ok(s) => s,
        Err(e) => {
            log::error("Cannot install signal handlers", &[("err", &e.to_string())]);
            return 1;
        }
    };
    raise_open_files_limit();
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
    let name = sig.map_or_else(|| "a signal".to_string(), signal_name);
    log::info(&format!("Received {name}, shutting down"), &[]);
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

    #[test]
    fn comma_lists_are_trimmed_and_drop_empty_entries() {
        assert_eq!(
            split_list(" http://a , ,http://b,"),
            vec!["http://a", "http://b"]
        );
        assert!(split_list("").is_empty());
    }
}
