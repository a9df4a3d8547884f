//! `admin`: the data directory, the HTTP and WebSocket endpoints, the subscription limit, the
//! node's p2p record and its peers.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

use super::error::{AdminError, Result};
use super::method::{opt, p, Method, Namespace, ParamKind as K};
use crate::method;
use crate::rpc::{Call, Params, Registry, SubscriptionLimit};

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

/// The node's control over its endpoints: the API asks for an endpoint serving `registry`
/// without knowing sockets.
pub trait Endpoints: Send + Sync {
    fn start_http(&self, req: EndpointRequest, registry: Arc<Registry>) -> Result<()>;
    fn stop_http(&self) -> Result<()>;
    fn start_ws(&self, req: EndpointRequest, registry: Arc<Registry>) -> Result<()>;
    fn stop_ws(&self) -> Result<()>;
    /// The endpoints running now, with the addresses they are bound to.
    fn running(&self) -> RunningEndpoints;
}

/// `admin_endpoints`'s result: each running endpoint, `null` for one that is not running.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct RunningEndpoints {
    pub http: Option<EndpointInfo>,
    pub ws: Option<EndpointInfo>,
    pub ipc: Option<EndpointInfo>,
}

/// One running endpoint.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct EndpointInfo {
    /// `http://IP:PORT` or `ws://IP:PORT` with the port actually bound (the one chosen for
    /// port 0), or the IPC socket's path.
    pub url: String,
    /// The modules it offers, sorted, `rpc` included; `null` for IPC, which offers every one.
    pub apis: Option<Vec<String>>,
}

/// The node's identity, p2p record and chain as `admin_nodeInfo` shows them: the API asks
/// without knowing keys, sockets or databases.
pub trait NodeInfoSource: Send + Sync {
    fn node_info(&self) -> Result<NodeInfo>;
}

/// The node's peers as `admin_peers`, `admin_addPeer` and `admin_removePeer` see them: the API
/// asks without knowing sockets or threads.
pub trait Peers: Send + Sync {
    /// Every connected peer, in any order.
    fn peers(&self) -> Vec<PeerInfo>;
    /// How many peers are connected.
    fn count(&self) -> usize {
        self.peers().len()
    }
    /// Adds `url` to the static set (kept connected); false when it is not allowed (this node).
    fn add(&self, url: crate::p2p::url::NodeUrl) -> bool;
    /// Removes `id` from the static set and disconnects it; false when it is not allowed.
    fn remove(&self, id: crate::p2p::url::NodeId) -> bool;
}

/// An element of `admin_peers` (the service spec's members, in the reference's order).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PeerInfo {
    /// 128 hex digits.
    pub id: String,
    /// The name the peer announced.
    pub name: String,
    /// `<name>/<version>`, sorted.
    pub caps: Vec<String>,
    pub network: PeerNetwork,
    /// Keyed by protocol name (`istanbul`).
    pub protocols: std::collections::BTreeMap<&'static str, PeerProtocol>,
}

/// A peer's connection record.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct PeerNetwork {
    /// `ip:port`, IPv6 in brackets.
    pub local_address: String,
    pub remote_address: String,
    pub inbound: bool,
    pub trusted: bool,
    /// Dialed because it is in the static set.
    #[serde(rename = "static")]
    pub is_static: bool,
    /// `cn`, `pn`, `en`, `bn` or `unknown`.
    pub node_type: String,
}

/// A peer's protocol entry.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct PeerProtocol {
    /// The protocol version both sides run.
    pub version: u64,
    /// The peer's total block score, a JSON number.
    pub difficulty: u128,
    /// `0x` + the hash of the head the peer last announced.
    pub head: String,
}

/// `admin_nodeInfo`'s result (the service spec's members, in its order).
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeInfo {
    pub kni: String,
    pub id: String,
    pub ip: String,
    pub listen_addr: String,
    pub name: String,
    pub ports: Ports,
    /// Keyed by protocol name (`istanbul`); empty on a node without a chain.
    pub protocols: std::collections::BTreeMap<&'static str, ProtocolInfo>,
}

#[derive(Debug, Serialize)]
pub struct Ports {
    pub discovery: u16,
    pub listener: u16,
}

/// The chain as the `istanbul` protocol entry shows it.
#[derive(Debug, Serialize)]
pub struct ProtocolInfo {
    pub network: u64,
    /// The head's total block score.
    pub difficulty: u64,
    pub genesis: String,
    pub head: String,
    pub config: ChainConfig,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ChainConfig {
    pub chain_id: u64,
    #[serde(rename = "isBFT")]
    pub is_bft: bool,
    pub istanbul: IstanbulConfig,
    pub unit_price: u64,
    pub derive_sha_impl: u8,
}

/// The BFT engine's parameters: `policy` 0 is round robin, `sub` the committee size.
#[derive(Debug, Serialize)]
pub struct IstanbulConfig {
    pub epoch: u64,
    pub policy: u64,
    pub sub: u64,
}

/// `admin_nodeConfig`'s object: the members of the reference's node configuration (its Go
/// field names and order, `cn.Config`) that this node has a counterpart of, with this node's
/// values; the reference's members for what this node does not have (database back-ends,
/// remote caches, a gas-price oracle, service chains, ...) are left out.
#[derive(Debug, Clone, Serialize)]
pub struct NodeConfigJson {
    #[serde(rename = "NetworkId")]
    pub network_id: u64,
    /// `full`: blocks are fetched whole and run.
    #[serde(rename = "SyncMode")]
    pub sync_mode: &'static str,
    /// States are kept (a state migration may drop old ones on request).
    #[serde(rename = "NoPruning")]
    pub no_pruning: bool,
    /// Whether this node does not seal blocks.
    #[serde(rename = "WorkerDisable")]
    pub worker_disable: bool,
    #[serde(rename = "SenderTxHashIndexing")]
    pub sender_tx_hash_indexing: bool,
    #[serde(rename = "ParallelDBWrite")]
    pub parallel_db_write: bool,
    #[serde(rename = "TrieNodeCacheConfig")]
    pub trie_node_cache: TrieNodeCacheJson,
    /// The unit price (`null` on a node without a chain).
    #[serde(rename = "GasPrice")]
    pub gas_price: Option<u64>,
    /// The validator this node seals as, else the zero address.
    #[serde(rename = "Rewardbase")]
    pub rewardbase: crate::crypto::Address,
    #[serde(rename = "Istanbul")]
    pub istanbul: IstanbulNodeConfig,
    /// `--rpc.unsafe-debug.disable`.
    #[serde(rename = "DisableUnsafeDebug")]
    pub disable_unsafe_debug: bool,
}

/// The trie-node cache's settings, as the reference's `TrieNodeCacheConfig` names them.
#[derive(Debug, Clone, Serialize)]
pub struct TrieNodeCacheJson {
    /// `LocalCache`: in this process's memory.
    #[serde(rename = "CacheType")]
    pub cache_type: &'static str,
    /// `--state.trie-cache-limit` (0: no cache).
    #[serde(rename = "LocalCacheSizeMiB")]
    pub local_cache_size_mib: u64,
    /// Where the cache is saved (`<datadir>/fastcache`).
    #[serde(rename = "FastCacheFileDir")]
    pub fast_cache_file_dir: String,
    /// `--state.trie-cache-save-period`, in nanoseconds (a Go duration).
    #[serde(rename = "FastCacheSavePeriod")]
    pub fast_cache_save_period: u64,
}

/// The BFT engine's settings, as the reference's `istanbul.Config` names them.
#[derive(Debug, Clone, Serialize)]
pub struct IstanbulNodeConfig {
    /// `--dev.period`, seconds.
    #[serde(rename = "BlockPeriod")]
    pub block_period: u64,
    /// 0: round robin.
    #[serde(rename = "ProposerPolicy")]
    pub proposer_policy: u64,
    #[serde(rename = "Epoch")]
    pub epoch: u64,
    #[serde(rename = "SubGroupSize")]
    pub sub_group_size: u64,
}

/// The `admin` namespace.
pub struct AdminApi {
    datadir: PathBuf,
    endpoints: Arc<dyn Endpoints>,
    limit: SubscriptionLimit,
    /// `None` until the node gives one: `admin_nodeInfo` is then `node not started`.
    info: Option<Arc<dyn NodeInfoSource>>,
    /// The chain that export and import work on; `None` on a node without one.
    chain: Option<Arc<crate::chain::Chain>>,
    /// The peer server; `None` on a node without p2p (no chain).
    peers: Option<Arc<dyn Peers>>,
    /// What `admin_nodeConfig` answers; `None` until the node gives it (`node not started`).
    config: Option<NodeConfigJson>,
}

const HTTP_PARAMS: &[super::method::ParamSpec] = &[
    opt("host", K::String),
    opt("port", K::Integer),
    opt("cors", K::String),
    opt("apis", K::String),
    opt("vhosts", K::String),
];

impl Namespace for AdminApi {
    const MODULE: &'static str = "admin";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "admin_datadir",
            [],
            "The node's data directory (absolute path)",
            "string: the absolute path of the data directory",
            Self::datadir
        ),
        Method {
            spec: super::method::MethodSpec {
                name: "admin_startHTTP",
                params: HTTP_PARAMS,
                summary: "Open the HTTP endpoint (defaults: localhost, 8551, no CORS, chain,net,rpc, localhost)",
                returns: "true once the HTTP endpoint listens (admin_endpoints shows the bound port)",
            },
            handler: |a, c, p| super::method::reply(a.start_http(c, p)),
        },
        method!(
            "admin_nodeInfo",
            [],
            "The node's id, kni URL, p2p ports and, with a chain, its protocol entry (network, total block score, genesis, head, config)",
            "object: kni, id, ip, listenAddr, name, ports {discovery, listener}, protocols",
            Self::node_info
        ),
        method!(
            "admin_nodeConfig",
            [],
            "The node's configuration, in the reference's member names (those this node has)",
            "object: the node's configuration (networkId, syncMode, trie-node cache, istanbul, ...)",
            Self::node_config
        ),
        method!(
            "admin_peers",
            [],
            "The connected peers, sorted by id: id, name, caps, network (localAddress, remoteAddress, inbound, trusted, static, nodeType), protocols",
            "array of peer objects",
            Self::peers
        ),
        method!(
            "admin_addPeer",
            [p("url", K::String)],
            "Add a kni URL to the static peers, which the node keeps connected; false for this node's own URL",
            "true once the URL is a static peer; false for this node's own URL",
            Self::add_peer
        ),
        method!(
            "admin_removePeer",
            [p("url", K::String)],
            "Remove a kni URL from the static peers and disconnect it; false for this node's own URL",
            "true once the URL is no static peer; false for this node's own URL",
            Self::remove_peer
        ),
        method!("admin_stopHTTP", [], "Close the HTTP endpoint",
            "true once the endpoint is closed", Self::stop_http),
        method!(
            "admin_exportChain",
            [p("file", K::Path), opt("first", K::Any), opt("last", K::Any)],
            "Write the canonical blocks first..last (default: all) to a new file as concatenated RLP; .gz names are gzip-compressed",
            "true once the blocks are in the file",
            Self::export_chain
        ),
        method!(
            "admin_startStateMigration",
            [],
            "Copy the head's state into a new trie-node file in the background; older states go when it is done",
            "null once the migration runs",
            Self::start_state_migration
        ),
        method!(
            "admin_stopStateMigration",
            [],
            "Stop the running state migration and discard its copy",
            "null once the migration has stopped",
            Self::stop_state_migration
        ),
        method!(
            "admin_stateMigrationStatus",
            [],
            "The state migration's progress: committed, pending, read, progress, isMigration, migrationBlockNumber, err",
            "object: committed, pending, read, progress, isMigration, migrationBlockNumber, err",
            Self::state_migration_status
        ),
        method!(
            "admin_saveTrieNodeCacheToDisk",
            [],
            "Save the trie-node cache to <datadir>/fastcache/nodes.bin in the background (loaded at the next start); null once started, admin_trieNodeCacheStatus tells when it is done",
            "null once the save has started",
            Self::save_trie_node_cache
        ),
        method!(
            "admin_trieNodeCacheStatus",
            [],
            "The trie-node cache's saves: enabled, saving, started (saves since start) and last (number, path, nodes, bytes, error of the last save that ended)",
            "object: enabled, saving, started, last {number, path, nodes, bytes, error} or null",
            Self::trie_node_cache_status
        ),
        method!(
            "admin_endpoints",
            [],
            "The running HTTP, WebSocket and IPC endpoints (null when not running): url with the port actually bound, apis",
            "object: http, ws, ipc, each {url, apis} or null",
            Self::endpoints
        ),
        method!(
            "admin_importChain",
            [p("file", K::Path)],
            "Import the blocks of an exported file (.gz: gzip) that the chain lacks, each fully checked",
            "true once every block of the file is in the chain",
            Self::import_chain
        ),
        method!(
            "admin_importChainFromString",
            [p("blockRlp", K::String)],
            "Import blocks given as hex RLP (debug_getBlockRlp's form), on a chain with no block beyond genesis",
            "true once the blocks are imported",
            Self::import_chain_from_string
        ),
        Method {
            spec: super::method::MethodSpec {
                name: "admin_startRPC",
                params: HTTP_PARAMS,
                summary: "Deprecated alias of admin_startHTTP",
                returns: "true once the HTTP endpoint listens",
            },
            handler: |a, c, p| {
                deprecated("admin.StartRPC", "admin.StartHTTP");
                super::method::reply(a.start_http(c, p))
            },
        },
        Method {
            spec: super::method::MethodSpec {
                name: "admin_stopRPC",
                params: &[],
                summary: "Deprecated alias of admin_stopHTTP",
                returns: "true once the endpoint is closed",
            },
            handler: |a, c, p| {
                deprecated("admin.StopRPC", "admin.StopHTTP");
                super::method::reply(a.stop_http(c, p))
            },
        },
        method!(
            "admin_startWS",
            [opt("host", K::String), opt("port", K::Integer), opt("origins", K::String), opt("apis", K::String)],
            "Open the WebSocket endpoint (defaults: localhost, 8552, localhost origins, chain,net,personal)",
            "true once the WebSocket endpoint listens (admin_endpoints shows the bound port)",
            Self::start_ws
        ),
        method!("admin_stopWS", [], "Close the WebSocket endpoint",
            "true once the endpoint is closed", Self::stop_ws),
        method!(
            "admin_setMaxSubscriptionPerWSConn",
            [p("limit", K::Integer)],
            "Set the most subscriptions one WebSocket or IPC connection may hold (at least 1)",
            "null",
            Self::set_max_subscriptions
        ),
    ];
}

/// An optional block-number parameter: a number, a 0x quantity, `earliest` (0) or `latest`
/// (the head).
fn block_param(p: &Params, i: usize, chain: &crate::chain::Chain) -> Result<Option<u64>> {
    let v: Option<serde_json::Value> = p.optional(i)?;
    let bad = || {
        super::error::Error::Rpc(crate::rpc::RpcError::invalid_params(format!(
            "invalid argument {i}: a block number, a 0x quantity, earliest or latest"
        )))
    };
    Ok(match v {
        None | Some(serde_json::Value::Null) => None,
        Some(serde_json::Value::Number(n)) => Some(n.as_u64().ok_or_else(bad)?),
        Some(serde_json::Value::String(s)) => match s.as_str() {
            "earliest" => Some(0),
            "latest" => Some(chain.head_number()),
            q => {
                let hex = q.strip_prefix("0x").ok_or_else(bad)?;
                Some(u64::from_str_radix(hex, 16).map_err(|_| bad())?)
            }
        },
        Some(_) => return Err(bad()),
    })
}

/// Logs the use of a deprecated method, as the reference does.
fn deprecated(method: &str, instead: &str) {
    crate::log::warn(
        "Deprecation warning",
        &[("method", method), ("use-instead", instead)],
    );
}

/// The modules of an `apis` argument: those of this node, the reference's names accepted
/// with a warning in the log; `-32000` naming any unknown one and the known ones.
fn module_list(text: &str) -> Result<BTreeSet<String>> {
    let list = super::spec::resolve_modules(text).map_err(AdminError::Modules)?;
    for w in &list.warnings {
        crate::log::warn("Module list", &[("note", w)]);
    }
    Ok(list.offered)
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
            info: None,
            chain: None,
            peers: None,
            config: None,
        }
    }

    /// The peer server that `admin_peers`, `admin_addPeer` and `admin_removePeer` use.
    pub fn with_peers(mut self, peers: Option<Arc<dyn Peers>>) -> AdminApi {
        self.peers = peers;
        self
    }

    /// The configuration `admin_nodeConfig` answers.
    pub fn with_node_config(mut self, config: NodeConfigJson) -> AdminApi {
        self.config = Some(config);
        self
    }

    /// `admin_nodeConfig`: the node's configuration in the reference's shape.
    fn node_config(&self, _: &Call, _: &Params) -> Result<NodeConfigJson> {
        self.config.clone().ok_or(AdminError::NodeNotStarted.into())
    }

    /// `admin_peers`: the connected peers sorted by id; `[]` on a node without p2p.
    fn peers(&self, _: &Call, _: &Params) -> Result<Vec<PeerInfo>> {
        let mut v = self.peers.as_ref().map(|p| p.peers()).unwrap_or_default();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        Ok(v)
    }

    /// The peer server, or the error of a node without p2p.
    fn peer_server(&self) -> Result<&Arc<dyn Peers>> {
        self.peers.as_ref().ok_or_else(|| AdminError::NoP2p.into())
    }

    /// `admin_addPeer(url)`: true once the node is in the static set (no reachability
    /// check), false for this node's own id; `invalid kni: ...` for a bad URL.
    fn add_peer(&self, _: &Call, p: &Params) -> Result<bool> {
        let url: String = p.required(0)?;
        let peers = self.peer_server()?;
        let url = crate::p2p::url::parse_kni(&url).map_err(|e| AdminError::Peer(e.to_string()))?;
        Ok(peers.add(url))
    }

    /// `admin_removePeer(url)`: true (known or not), false for this node's own id;
    /// `invalid kni: ...` for a bad URL.
    fn remove_peer(&self, _: &Call, p: &Params) -> Result<bool> {
        let url: String = p.required(0)?;
        let peers = self.peer_server()?;
        let url = crate::p2p::url::parse_kni(&url).map_err(|e| AdminError::Peer(e.to_string()))?;
        Ok(peers.remove(url.id))
    }

    /// The chain that export and import work on.
    pub fn with_chain(mut self, chain: Option<Arc<crate::chain::Chain>>) -> AdminApi {
        self.chain = chain;
        self
    }

    /// `admin_importChain(file)`: true once every block of the file is in the chain (those
    /// it had are skipped). A `.gz` file is read through gzip.
    fn import_chain(&self, _: &Call, p: &Params) -> Result<bool> {
        let chain = self.chain.as_deref().ok_or(super::error::Error::NoChain)?;
        let file: String = p.required(0)?;
        // A relative name is the node's working directory's (chainctl sends absolute ones).
        let path = std::path::absolute(&file).unwrap_or_else(|_| PathBuf::from(&file));
        let opened = crate::chain::export::open_for_reading(&path).map_err(AdminError::Chain)?;
        let mut reader: Box<dyn std::io::BufRead + Send> = if file.ends_with(".gz") {
            Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(
                std::io::BufReader::new(opened),
            )))
        } else {
            Box::new(std::io::BufReader::with_capacity(1 << 20, opened))
        };
        let shown = path.display().to_string();
        crate::log::info("Importing blockchain", &[("file", &shown)]);
        let done = crate::chain::import::import_stream(
            chain,
            &mut reader,
            chain.stopping(),
            &mut |so_far| {
                crate::log::info(
                    "Imported blocks",
                    &[
                        ("new", &so_far.new.to_string()),
                        ("known", &so_far.known.to_string()),
                    ],
                )
            },
        )
        .map_err(AdminError::Chain)?;
        crate::log::info(
            "Imported blockchain",
            &[
                ("file", &shown),
                ("new", &done.new.to_string()),
                ("known", &done.known.to_string()),
                ("head", &chain.head_number().to_string()),
            ],
        );
        Ok(true)
    }

    /// `admin_importChainFromString(blockRlp)`: blocks as hex (`debug_getBlockRlp`'s form,
    /// `0x` optional, several concatenated), only on a chain with no block beyond genesis.
    fn import_chain_from_string(&self, _: &Call, p: &Params) -> Result<bool> {
        let chain = self.chain.as_deref().ok_or(super::error::Error::NoChain)?;
        let text: String = p.required(0)?;
        let hex_text = text
            .strip_prefix("0x")
            .or_else(|| text.strip_prefix("0X"))
            .unwrap_or(&text);
        let bytes =
            hex::decode(hex_text).map_err(|e| AdminError::Chain(format!("invalid hex: {e}")))?;
        if chain.head_number() > 0 {
            return Err(AdminError::Chain(format!(
                "importChainFromString works only on a chain without blocks beyond genesis; this one's head is block {}",
                chain.head_number()
            ))
            .into());
        }
        let stop = std::sync::atomic::AtomicBool::new(false);
        crate::chain::import::import_stream(chain, &mut bytes.as_slice(), &stop, &mut |_| {})
            .map_err(AdminError::Chain)?;
        Ok(true)
    }

    /// `admin_startStateMigration`: null once the migration runs.
    fn start_state_migration(&self, _: &Call, _: &Params) -> Result<()> {
        let chain = self.chain.as_ref().ok_or(super::error::Error::NoChain)?;
        chain
            .start_state_migration()
            .map_err(|e| AdminError::Chain(e).into())
    }

    /// `admin_stopStateMigration`: null once the migration has stopped.
    fn stop_state_migration(&self, _: &Call, _: &Params) -> Result<()> {
        let chain = self.chain.as_ref().ok_or(super::error::Error::NoChain)?;
        chain
            .stop_state_migration()
            .map_err(|e| AdminError::Chain(e).into())
    }

    /// `admin_stateMigrationStatus`.
    fn state_migration_status(
        &self,
        _: &Call,
        _: &Params,
    ) -> Result<crate::chain::migration::MigrationStatus> {
        let chain = self.chain.as_ref().ok_or(super::error::Error::NoChain)?;
        Ok(chain.state_migration_status())
    }

    /// `admin_saveTrieNodeCacheToDisk`: null once the save has started in the background.
    fn save_trie_node_cache(&self, _: &Call, _: &Params) -> Result<()> {
        let chain = self.chain.as_ref().ok_or(super::error::Error::NoChain)?;
        chain
            .save_node_cache(&self.datadir)
            .map(|_| ())
            .map_err(|e| AdminError::Chain(e).into())
    }

    /// `admin_trieNodeCacheStatus`: whether a save runs, how many started, how the last one
    /// that ended went (its file, or its error).
    fn trie_node_cache_status(&self, _: &Call, _: &Params) -> Result<crate::chain::CacheStatus> {
        let chain = self.chain.as_ref().ok_or(super::error::Error::NoChain)?;
        Ok(chain.node_cache_status())
    }

    /// `admin_endpoints`: the running endpoints and the addresses they are bound to.
    fn endpoints(&self, _: &Call, _: &Params) -> Result<RunningEndpoints> {
        Ok(self.endpoints.running())
    }

    /// `admin_exportChain(file, first?, last?)`: true once the blocks are in the file.
    fn export_chain(&self, _: &Call, p: &Params) -> Result<bool> {
        let chain = self.chain.as_deref().ok_or(super::error::Error::NoChain)?;
        let file: String = p.required(0)?;
        if file.is_empty() {
            // As the reference's open of an empty name fails.
            return Err(AdminError::Chain("open : no such file or directory".into()).into());
        }
        let first = block_param(p, 1, chain)?;
        let last = block_param(p, 2, chain)?;
        // A relative name is the node's working directory's (chainctl sends absolute ones).
        let path = std::path::absolute(&file).unwrap_or_else(|_| PathBuf::from(&file));
        let shown = path.display().to_string();
        crate::log::info("Exporting blockchain", &[("file", &shown)]);
        let (blocks, bytes) = crate::chain::export::export(
            chain,
            &path,
            first,
            last,
            chain.stopping(),
            &mut |done, total| {
                crate::log::info(
                    "Exporting blocks",
                    &[("exported", &done.to_string()), ("of", &total.to_string())],
                )
            },
        )
        .map_err(|e| AdminError::Chain(e.to_string()))?;
        crate::log::info(
            "Exported blockchain",
            &[
                ("file", &shown),
                ("blocks", &blocks.to_string()),
                ("bytes", &bytes.to_string()),
            ],
        );
        Ok(true)
    }

    /// Where `admin_nodeInfo` gets its answer.
    pub fn with_node_info(mut self, info: Arc<dyn NodeInfoSource>) -> AdminApi {
        self.info = Some(info);
        self
    }

    /// `admin_nodeInfo`: the node information object.
    fn node_info(&self, _: &Call, _: &Params) -> Result<NodeInfo> {
        self.info
            .as_ref()
            .ok_or(AdminError::NodeNotStarted)?
            .node_info()
    }

    /// `admin_datadir`: the absolute data directory.
    fn datadir(&self, _: &Call, _: &Params) -> Result<String> {
        Ok(self.datadir.display().to_string())
    }

    fn request(p: &Params, port: u16, apis: &str, with_vhosts: bool) -> Result<EndpointRequest> {
        Ok(EndpointRequest {
            host: p
                .optional::<String>(0)?
                .unwrap_or_else(|| "localhost".into()),
            port: p.optional::<u16>(1)?.unwrap_or(port),
            origins: p
                .optional::<String>(2)?
                .map(|s| split_list(&s))
                .unwrap_or_default(),
            apis: module_list(&p.optional::<String>(3)?.unwrap_or_else(|| apis.into()))?,
            vhosts: if with_vhosts {
                p.optional::<String>(4)?.map(|s| split_list(&s))
            } else {
                None
            },
        })
    }

    /// `admin_startHTTP(host?, port?, cors?, apis?, vhosts?)`: true, or an error.
    fn start_http(&self, call: &Call, p: &Params) -> Result<bool> {
        let req = Self::request(p, DEFAULT_HTTP_PORT, DEFAULT_HTTP_APIS, true)?;
        self.endpoints.start_http(req, call.registry().clone())?;
        Ok(true)
    }

    /// `admin_stopHTTP`: true, or `HTTP RPC not running`.
    fn stop_http(&self, _: &Call, _: &Params) -> Result<bool> {
        self.endpoints.stop_http()?;
        Ok(true)
    }

    /// `admin_startWS(host?, port?, origins?, apis?)`: true, or an error.
    fn start_ws(&self, call: &Call, p: &Params) -> Result<bool> {
        let req = Self::request(p, DEFAULT_WS_PORT, DEFAULT_WS_APIS, false)?;
        self.endpoints.start_ws(req, call.registry().clone())?;
        Ok(true)
    }

    /// `admin_stopWS`: true, or `WebSocket RPC not running`.
    fn stop_ws(&self, _: &Call, _: &Params) -> Result<bool> {
        self.endpoints.stop_ws()?;
        Ok(true)
    }

    /// `admin_setMaxSubscriptionPerWSConn(limit)`: null; the limit must be at least 1.
    fn set_max_subscriptions(&self, _: &Call, p: &Params) -> Result<()> {
        let limit: i32 = p.required(0)?;
        if limit < 1 {
            return Err(AdminError::SubscriptionLimit(limit).into());
        }
        self.limit.set(i64::from(limit));
        Ok(())
    }
}
