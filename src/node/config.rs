//! `chaind`'s configuration: command-line flags and the `KEY=VALUE` configuration file of
//! `cli.md`. The file is turned into flags placed before the command line's, and clap lets a
//! later occurrence of a flag override an earlier one, so the command line wins.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{CommandFactory, Parser};

use crate::duration::parse_option;

/// The node: holds the keystore and unlocked keys and serves JSON-RPC over HTTP, WebSocket
/// and IPC. Runs in the foreground until SIGINT or SIGTERM, then closes every endpoint, drops
/// unlocked keys from memory and exits 0.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "chaind",
    version,
    max_term_width = 100,
    args_override_self = true
)]
#[command(
    after_help = "Port 0 for --rpcport, --wsport and --port picks a free port; the chosen address \
is logged on one line, e.g. `HTTP endpoint opened url=http://127.0.0.1:PORT`, \
`WebSocket endpoint opened url=ws://127.0.0.1:PORT`, `IPC endpoint opened url=PATH`, \
`P2P listening kni=KNI_URL`, `Prometheus endpoint opened url=http://127.0.0.1:PORT/metrics` \
(--prometheusport 0 too). The p2p listener runs only on a node with a chain (--dev, or \
after chaind init); static peers come from --staticnodes or DATADIR/static-nodes.json (a JSON \
array of kni URLs) and admin_addPeer. Flags marked \"accepted for compatibility\" are parsed \
but change nothing. \
`chaind init GENESIS.json` writes a chain's genesis block into the data directory; a node \
started there serves that chain (without --dev it does not seal). \
Durations (the --rpc*timeout flags, --dev.period, --txpool.lifetime, \
--state.trie-cache-save-period, and their settings in the configuration file) are a number \
of seconds (30, 0.5) or numbers with units ns, us, ms, s, m, h (90s, 1m30s, 1h). \
The options shared with the subcommands (--datadir, --config, --verbosity, --dev, --chainid, \
--networkid, --state.trie-cache-limit) may come before or after the subcommand."
)]
pub struct Config {
    #[command(subcommand)]
    pub command: Option<Subcommand>,
    /// Data directory: databases, the keystore, the node key, the IPC socket [default: the
    /// per-user data dir, e.g. ~/.local/share/chaind]
    #[arg(long, value_name = "DIR", global = true)]
    pub datadir: Option<PathBuf>,
    /// Configuration file of KEY=VALUE lines (shell style, # comments): RPC_ENABLE, RPC_API,
    /// RPC_ADDR, RPC_PORT, RPC_CORSDOMAIN, RPC_VHOSTS, WS_ENABLE, WS_API, WS_ADDR, WS_PORT,
    /// WS_ORIGINS, PORT, NETWORK_ID, DATA_DIR, METRICS, PROMETHEUS, ADDITIONAL (raw extra
    /// flags). Flags on the command line win
    #[arg(long, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    /// Keystore directory [default: DATADIR/keystore]
    #[arg(long, value_name = "DIR")]
    pub keystore: Option<PathBuf>,
    /// Use the light scrypt parameters (N=4096, p=6) for key files the node writes
    #[arg(long)]
    pub lightkdf: bool,

    /// Open the HTTP endpoint at start-up
    #[arg(long)]
    pub rpc: bool,
    /// HTTP listening host
    #[arg(long, value_name = "HOST", default_value = "localhost")]
    pub rpcaddr: String,
    /// HTTP listening port (0 = any free port)
    #[arg(long, value_name = "PORT", default_value_t = 8551)]
    pub rpcport: u16,
    /// Modules offered over HTTP, comma-separated, of admin, chain, debug, eth, net,
    /// personal, rpc, txpool, web3 (an empty list offers only rpc; the reference's klay
    /// offers chain, its other modules are accepted and offer nothing; any other unknown name
    /// is refused)
    #[arg(long, value_name = "LIST", default_value = "chain,net,rpc", value_parser = module_list)]
    pub rpcapi: String,
    /// Origins allowed by CORS, comma-separated (`*` for any; empty: CORS off)
    #[arg(long, value_name = "LIST", default_value = "")]
    pub rpccorsdomain: String,
    /// Virtual hosts accepted in the Host header, comma-separated (`*` for any)
    #[arg(long, value_name = "LIST", default_value = "localhost")]
    pub rpcvhosts: String,

    /// Open the WebSocket endpoint at start-up
    #[arg(long)]
    pub ws: bool,
    /// WebSocket listening host
    #[arg(long, value_name = "HOST", default_value = "localhost")]
    pub wsaddr: String,
    /// WebSocket listening port (0 = any free port)
    #[arg(long, value_name = "PORT", default_value_t = 8552)]
    pub wsport: u16,
    /// Modules offered over WebSocket, comma-separated (as --rpcapi)
    #[arg(long, value_name = "LIST", default_value = "chain,net,personal", value_parser = module_list)]
    pub wsapi: String,
    /// Allowed WebSocket Origin values, comma-separated (`*` for any; empty:
    /// `http://localhost` and `http://<hostname>`)
    #[arg(long, value_name = "LIST", default_value = "")]
    pub wsorigins: String,
    /// Most subscriptions per WebSocket or IPC connection, at least 1
    /// (admin_setMaxSubscriptionPerWSConn changes it at run time)
    #[arg(
        long,
        value_name = "N",
        default_value_t = 3000,
        value_parser = clap::value_parser!(i32).range(1..)
    )]
    pub wsmaxsubscriptionperconn: i32,

    /// How long an HTTP request may take to arrive (head and body) before it is answered 408
    /// (seconds, or e.g. 90s, 1m30s); under 1s means the default
    #[arg(long, value_name = "DURATION", default_value = "30", value_parser = parse_option)]
    pub rpcreadtimeout: Duration,
    /// How long writing an HTTP response may take before the connection is dropped (seconds,
    /// or e.g. 90s, 1m30s); under 1s means the default
    #[arg(long, value_name = "DURATION", default_value = "30", value_parser = parse_option)]
    pub rpcwritetimeout: Duration,
    /// How long a kept-alive HTTP connection may sit idle between requests (seconds, or e.g.
    /// 90s, 2m); under 1s means the default
    #[arg(long, value_name = "DURATION", default_value = "120", value_parser = parse_option)]
    pub rpcidletimeout: Duration,
    /// How long an HTTP call may run before its request is answered 503 `timeout` (the call
    /// itself runs on; the connection stays usable) (seconds, or e.g. 90s, 1m30s); under 1s
    /// means the default
    #[arg(long, value_name = "DURATION", default_value = "30", value_parser = parse_option)]
    pub rpcexecutiontimeout: Duration,

    /// IPC socket path; a bare file name is placed in the data directory [default:
    /// DATADIR/chaind.ipc]
    #[arg(long, value_name = "PATH", conflicts_with = "ipcdisable")]
    pub ipcpath: Option<PathBuf>,
    /// Do not open the IPC endpoint
    #[arg(long)]
    pub ipcdisable: bool,
    /// Most IPC connections open at once, at least 1; one more is answered with an error and
    /// closed
    #[arg(
        long,
        value_name = "N",
        default_value_t = 1000,
        value_parser = clap::value_parser!(u32).range(1..)
    )]
    pub ipcmaxconnections: u32,

    /// P2P listening port (0 = any free port); the listener runs on a node with a chain
    #[arg(long, value_name = "PORT", default_value_t = 32323)]
    pub port: u16,
    /// P2P listening host
    #[arg(long, value_name = "HOST", default_value = "0.0.0.0")]
    pub p2paddr: String,
    /// Most inbound peers at once; one more is refused (static peers are dialed regardless)
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub maxconnections: usize,
    /// Static peers file, a JSON array of kni URLs, kept connected [default:
    /// DATADIR/static-nodes.json when present]
    #[arg(long, value_name = "FILE")]
    pub staticnodes: Option<PathBuf>,
    /// Disable peer discovery (accepted for compatibility: this node has no discovery; peers
    /// come only from static nodes and admin_addPeer)
    #[arg(long)]
    pub nodiscover: bool,
    /// Network id (answered by net_version)
    #[arg(long, value_name = "N", default_value_t = 1000, global = true)]
    pub networkid: u64,
    /// Chain id of the --dev chain (signatures carry it; a data directory keeps the chain it
    /// was first started with)
    #[arg(long, value_name = "N", default_value_t = 1000, global = true)]
    pub chainid: u64,
    /// Node private key file, 64 hex digits (default <datadir>/nodekey, created when
    /// missing; a file named here must exist)
    #[arg(long, value_name = "FILE")]
    pub nodekey: Option<PathBuf>,

    /// Single-node developer network; on a fresh data directory the keystore gets one
    /// developer account whose passphrase is the empty string, its key file written with
    /// the lightest scrypt parameters (N=2, r=8, p=1): an empty passphrase gains nothing
    /// from a costly KDF, and the key is read at every start (for chaind import, see its
    /// --help)
    #[arg(long, global = true)]
    pub dev: bool,
    /// With --dev: seal at most once per DURATION (seconds, or e.g. 500ms, 2s), 0 = as soon
    /// as transactions are pending
    #[arg(
        long = "dev.period",
        value_name = "DURATION",
        default_value = "0",
        value_parser = parse_option
    )]
    pub dev_period: Duration,
    /// Take chain-data anchoring transactions (typeInt 72-74) from this node's own RPC users
    /// too; by default they are refused (`locally anchoring chaindata tx is not allowed in
    /// this node`), as the reference does
    #[arg(long = "txpool.allow-local-anchortx")]
    pub allow_local_anchortx: bool,
    /// Most queued transactions (waiting for an earlier nonce) of one sender; past it a
    /// transaction below the sender's highest queued nonce takes that one's place, one above
    /// it is refused
    #[arg(
        long = "txpool.nonexec-slots.account",
        value_name = "N",
        default_value_t = 64,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub txpool_nonexec_slots_account: u64,
    /// Most queued transactions in all; when full, the sender whose queue has been idle
    /// longest gives up its highest nonce to a new one
    #[arg(
        long = "txpool.nonexec-slots.all",
        value_name = "N",
        default_value_t = 1024,
        value_parser = clap::value_parser!(u64).range(1..)
    )]
    pub txpool_nonexec_slots_all: u64,
    /// A sender's queued transactions are dropped once its queue has been idle this long
    /// (nothing queued anew, nothing become pending)
    #[arg(
        long = "txpool.lifetime",
        value_name = "DURATION",
        default_value = "5m",
        value_parser = parse_option
    )]
    pub txpool_lifetime: Duration,
    /// Keep the index of sender transaction hashes (accepted for compatibility: this node
    /// always keeps it, so chain_getTransactionBySenderTxHash finds every sealed transaction)
    #[arg(long)]
    pub sendertxhashindexing: bool,
    /// Size of the in-memory trie-node cache in MB, 0 disables it
    #[arg(
        long = "state.trie-cache-limit",
        value_name = "MB",
        default_value_t = 512,
        global = true
    )]
    pub trie_cache_limit: u64,
    /// Also save the trie-node cache to <datadir>/fastcache periodically (seconds, or e.g. 1h,
    /// 1h30m); 0 = never
    #[arg(
        long = "state.trie-cache-save-period",
        value_name = "DURATION",
        default_value = "0",
        value_parser = parse_option
    )]
    pub trie_cache_save_period: Duration,

    /// Allow personal_unlockAccount through an HTTP or WebSocket endpoint that listens on a
    /// non-loopback address
    #[arg(long)]
    pub allow_insecure_unlock: bool,
    /// Serve the unsafe debug methods (debug_setHead, debug_verbosity, debug_memStats,
    /// debug_gcStats, debug_printBlock, debug_traceBlockFromFile,
    /// debug_standardTraceBlockToFile) over IPC only; HTTP and WebSocket keep the safe subset
    #[arg(long = "rpc.unsafe-debug.disable")]
    pub unsafe_debug_disable: bool,
    /// Enable metrics collection and reporting: RPC calls per method and transport, blocks
    /// and transactions sealed and imported (debug_metrics shows them; --prometheus serves
    /// them)
    #[arg(long)]
    pub metrics: bool,
    /// Enable prometheus exporter: with --metrics, serve the metrics at
    /// http://127.0.0.1:PORT/metrics (loopback only); without --metrics nothing listens
    #[arg(long)]
    pub prometheus: bool,
    /// Prometheus exporter listening port (0 = any free port)
    #[arg(long, value_name = "PORT", default_value_t = 61001)]
    pub prometheusport: u16,

    /// Log level: 0 silent, 1 error, 2 warn, 3 info, 4 debug, 5 trace
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=5), global = true)]
    pub verbosity: u8,
}

/// A `--rpcapi`/`--wsapi` list, checked: every name a module of this node or of the
/// reference ([`crate::api::spec::resolve_modules`]).
fn module_list(s: &str) -> Result<String, String> {
    crate::api::spec::resolve_modules(s).map(|_| s.to_string())
}

/// A configuration-file problem, with its line number.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read configuration file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path}:{line}: {message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        message: String,
    },
}

/// Splits a shell-style word list: whitespace separates, `'...'` and `"..."` quote, `\`
/// escapes (outside single quotes).
pub fn shell_words(s: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(x) => cur.push(x),
                        None => return Err("unterminated single quote".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(x) => cur.push(x),
                            None => return Err("unterminated double quote".into()),
                        },
                        Some(x) => cur.push(x),
                        None => return Err("unterminated double quote".into()),
                    }
                }
            }
            '\\' => {
                in_word = true;
                if let Some(x) = chars.next() {
                    cur.push(x);
                }
            }
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

/// A boolean setting of the configuration file: `1`, `true`, `0` or `false` (any case);
/// anything else, the empty value included, is refused.
fn file_bool(key: &str, value: &str) -> Result<bool, String> {
    match value.to_ascii_lowercase().as_str() {
        "1" | "true" => Ok(true),
        "0" | "false" => Ok(false),
        _ => Err(format!(
            "{key}: invalid value {value:?}: use true, false, 1 or 0"
        )),
    }
}

/// Turns the configuration file's `KEY=VALUE` lines into flags. As in the reference's
/// launcher, the `RPC_*` settings count only when `RPC_ENABLE` is on and the `WS_*` ones only
/// when `WS_ENABLE` is on (`1` or `true`; `0` or `false` is off; anything else is an error).
/// Unknown keys are an error, so that a typo does not pass silently.
pub fn config_file_args(path: &Path) -> Result<Vec<String>, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.into(),
        source,
    })?;
    let mut vars: Vec<(String, String, usize)> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line_no = i + 1;
        let syntax = |message: String| ConfigError::Syntax {
            path: path.into(),
            line: line_no,
            message,
        };
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line = line.strip_prefix("export ").unwrap_or(line);
        let (key, value) = line
            .split_once('=')
            .ok_or_else(|| syntax("expected KEY=VALUE".into()))?;
        let key = key.trim();
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(syntax(format!("invalid key {key:?}")));
        }
        // A value is one shell word (quotes allowed); an unquoted # starts a comment.
        let words = shell_words(strip_comment(value)).map_err(syntax)?;
        let value = match words.len() {
            0 => String::new(),
            1 => words.into_iter().next().expect("one word"),
            _ if key == "ADDITIONAL" => value.trim().to_string(),
            _ => {
                return Err(syntax(format!(
                    "the value of {key} must be one word; quote it"
                )))
            }
        };
        let value = if key == "ADDITIONAL" {
            strip_comment(&value).trim().to_string()
        } else {
            value
        };
        vars.push((key.to_string(), value, line_no));
    }
    let switch = |k: &str| -> Result<bool, ConfigError> {
        // Every occurrence is checked; the last one counts.
        let mut on = false;
        for (key, value, line) in vars.iter().filter(|(key, _, _)| key == k) {
            on = file_bool(key, value).map_err(|message| ConfigError::Syntax {
                path: path.into(),
                line: *line,
                message,
            })?;
        }
        Ok(on)
    };
    let rpc = switch("RPC_ENABLE")?;
    let ws = switch("WS_ENABLE")?;
    let mut args = Vec::new();
    for (key, value, line) in &vars {
        let flag = |f: &str| vec![format!("--{f}"), value.clone()];
        let strip = || {
            value
                .chars()
                .filter(|c| !c.is_whitespace())
                .collect::<String>()
        };
        let mut push = match key.as_str() {
            "RPC_ENABLE" | "WS_ENABLE" => Vec::new(),
            "RPC_API" if rpc => vec!["--rpcapi".into(), strip()],
            "RPC_ADDR" if rpc => flag("rpcaddr"),
            "RPC_PORT" if rpc => flag("rpcport"),
            "RPC_CORSDOMAIN" if rpc => flag("rpccorsdomain"),
            "RPC_VHOSTS" if rpc => flag("rpcvhosts"),
            "RPC_READ_TIMEOUT" if rpc => flag("rpcreadtimeout"),
            "RPC_WRITE_TIMEOUT" if rpc => flag("rpcwritetimeout"),
            "RPC_IDLE_TIMEOUT" if rpc => flag("rpcidletimeout"),
            "RPC_EXECUTION_TIMEOUT" if rpc => flag("rpcexecutiontimeout"),
            "WS_API" if ws => vec!["--wsapi".into(), strip()],
            "WS_ADDR" if ws => flag("wsaddr"),
            "WS_PORT" if ws => flag("wsport"),
            "WS_ORIGINS" if ws => flag("wsorigins"),
            "RPC_API"
            | "RPC_ADDR"
            | "RPC_PORT"
            | "RPC_CORSDOMAIN"
            | "RPC_VHOSTS"
            | "RPC_READ_TIMEOUT"
            | "RPC_WRITE_TIMEOUT"
            | "RPC_IDLE_TIMEOUT"
            | "RPC_EXECUTION_TIMEOUT"
            | "WS_API"
            | "WS_ADDR"
            | "WS_PORT"
            | "WS_ORIGINS" => Vec::new(),
            // The reference's launcher: `--metrics`, `--prometheus` when set to 1.
            "METRICS" | "PROMETHEUS" => {
                let on = file_bool(key, value).map_err(|message| ConfigError::Syntax {
                    path: path.into(),
                    line: *line,
                    message,
                })?;
                if on {
                    vec![format!("--{}", key.to_ascii_lowercase())]
                } else {
                    Vec::new()
                }
            }
            "PORT" => flag("port"),
            "NETWORK_ID" => flag("networkid"),
            "DATA_DIR" => flag("datadir"),
            "ADDITIONAL" => shell_words(value).map_err(|m| ConfigError::Syntax {
                path: path.into(),
                line: *line,
                message: m,
            })?,
            other => {
                return Err(ConfigError::Syntax {
                    path: path.into(),
                    line: *line,
                    message: format!("unknown setting {other}"),
                })
            }
        };
        // A bad value is reported against its line here: left to the final parse, clap would
        // name only the flag the line turned into.
        if let Err(message) = check_flags(&push) {
            return Err(ConfigError::Syntax {
                path: path.into(),
                line: *line,
                message: format!("{key}: {message}"),
            });
        }
        args.append(&mut push);
    }
    if rpc {
        args.insert(0, "--rpc".into());
    }
    if ws {
        args.insert(0, "--ws".into());
    }
    Ok(args)
}

/// Parses `args` (the flags of one configuration line) on their own: clap's error message,
/// without its `error: ` prefix and usage hint, when they do not parse. `--help` and
/// `--version` pass; the real parse acts on them.
fn check_flags(args: &[String]) -> Result<(), String> {
    if args.is_empty() {
        return Ok(());
    }
    let argv = std::iter::once("chaind".to_string()).chain(args.iter().cloned());
    match Config::command().try_get_matches_from(argv) {
        Ok(_) => Ok(()),
        Err(e) if !e.use_stderr() => Ok(()),
        Err(e) => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            Err(first.strip_prefix("error: ").unwrap_or(first).to_string())
        }
    }
}

/// The text before an unquoted `#`.
fn strip_comment(s: &str) -> &str {
    let (mut single, mut double) = (false, false);
    for (i, c) in s.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && (i == 0 || s[..i].ends_with(char::is_whitespace)) => {
                return &s[..i]
            }
            _ => {}
        }
    }
    s
}

/// What `chaind` does instead of running the node.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum Subcommand {
    /// Write the genesis block of GENESIS.json into the data directory (chaindata), which a
    /// node started there then serves; refused when the data directory holds another chain
    Init {
        /// The genesis file: {"config": {"chainId", "unitPrice"}, "networkId", "validator",
        /// "timestamp", "alloc": {"0x<address>": {"balance": "0x<wei>"}}}
        #[arg(value_name = "GENESIS.json")]
        genesis: PathBuf,
    },
    /// Write the canonical blocks FIRST..LAST (default: all) of the data directory's chain to
    /// FILE as concatenated block RLP (gzip when FILE ends with .gz); never overwrites FILE.
    /// A LAST past the head exports up to the head, with a warning naming it; a FIRST past the
    /// head is an error. FILE appears only once whole: SIGINT or SIGTERM stops the export at
    /// once and removes what was written. The node must not be running on the data directory
    Export {
        #[arg(value_name = "FILE")]
        file: PathBuf,
        #[arg(value_name = "FIRST")]
        first: Option<u64>,
        #[arg(value_name = "LAST")]
        last: Option<u64>,
    },
    /// Import the blocks of FILE (written by export; .gz: gzip) that the data directory's
    /// chain lacks, each fully checked, in batches of 2,500; nothing is deleted. SIGINT or
    /// SIGTERM is said at once and stops it once the blocks already checked are stored (whole
    /// blocks: the head is the last of them); a second signal ends it at once. With --dev on a
    /// data directory without a chain, FILE must start with the genesis block of a --dev chain
    /// (as chaind export of a --dev data directory writes it): that genesis is written first,
    /// as chaind init would, and a node there serves the chain (it seals with --dev once the
    /// keystore holds that chain's developer key, passphrase empty); an import that then
    /// stores no block removes it again. The node must not be running on the data directory
    Import {
        #[arg(value_name = "FILE")]
        file: PathBuf,
    },
}

impl Config {
    /// The pool's queue limits the `--txpool.*` flags set.
    pub fn queue_limits(&self) -> crate::chain::pool::QueueLimits {
        let slots = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        crate::chain::pool::QueueLimits {
            account_slots: slots(self.txpool_nonexec_slots_account),
            all_slots: slots(self.txpool_nonexec_slots_all),
            lifetime: self.txpool_lifetime,
        }
    }

    /// Parses the process's arguments, with the `--config` file's settings placed before
    /// them. Exits with clap's usage error (code 2) on bad flags, and with code 2 and
    /// `error: <file>:<line>: ...` on a bad configuration file (a bad value included).
    pub fn from_args() -> Config {
        let argv: Vec<String> = std::env::args().collect();
        match Config::from_argv(&argv) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        }
    }

    /// As [`Config::from_args`] for a given argument vector (program name first).
    pub fn from_argv(argv: &[String]) -> Result<Config, ConfigError> {
        let first = Config::parse_from(argv);
        let Some(file) = &first.config else {
            return Ok(first);
        };
        let mut merged = vec![argv[0].clone()];
        merged.extend(config_file_args(file)?);
        merged.extend(argv[1..].iter().cloned());
        Ok(Config::parse_from(merged))
    }

    /// The clap command, for `--help` and the man page.
    pub fn command() -> clap::Command {
        <Config as CommandFactory>::command()
    }

    /// `--rpcexecutiontimeout` (under 1 s: the default 30 s, as the reference).
    pub fn execution_timeout(&self) -> Duration {
        at_least_a_second_or(self.rpcexecutiontimeout, 30)
    }

    /// `--rpcreadtimeout` (under 1 s: the default 30 s).
    pub fn read_timeout(&self) -> Duration {
        at_least_a_second_or(self.rpcreadtimeout, 30)
    }

    /// `--rpcwritetimeout` (under 1 s: the default 30 s).
    pub fn write_timeout(&self) -> Duration {
        at_least_a_second_or(self.rpcwritetimeout, 30)
    }

    /// `--rpcidletimeout` (under 1 s: the default 120 s).
    pub fn idle_timeout(&self) -> Duration {
        at_least_a_second_or(self.rpcidletimeout, 120)
    }
}

/// `d`, or `default` seconds when `d` is under one second (the reference replaces any value
/// under one second by the default).
fn at_least_a_second_or(d: Duration, default: u64) -> Duration {
    if d < Duration::from_secs(1) {
        Duration::from_secs(default)
    } else {
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rpcapi_help_names_every_module_of_the_node() {
        let cmd = Config::command();
        let help = cmd
            .get_arguments()
            .find(|a| a.get_id() == "rpcapi")
            .and_then(|a| a.get_help())
            .map(|h| h.to_string().replace('\n', " "))
            .unwrap();
        let modules = crate::api::spec::modules().join(", ");
        assert!(help.contains(&modules), "{help} / {modules}");
    }

    #[test]
    fn shell_words_quote_and_escape() {
        assert_eq!(
            shell_words(r#"--a "b c" 'd e' f\ g"#).unwrap(),
            vec!["--a", "b c", "d e", "f g"]
        );
        assert!(shell_words("'x").is_err());
    }

    #[test]
    fn config_file_becomes_flags_and_the_command_line_wins() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        std::fs::write(
            &f,
            "# node\nRPC_ENABLE=1\nRPC_API=\"chain, personal\"\nRPC_PORT=9000 # comment\nWS_ENABLE=0\nWS_PORT=9100\nNETWORK_ID=7\nADDITIONAL=\"--allow-insecure-unlock --verbosity 4\"\n",
        )
        .unwrap();
        let argv: Vec<String> = [
            "chaind",
            "--config",
            f.to_str().unwrap(),
            "--rpcport",
            "9001",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let c = Config::from_argv(&argv).unwrap();
        assert!(c.rpc);
        assert_eq!(c.rpcapi, "chain,personal");
        assert_eq!(c.rpcport, 9001, "the command line wins");
        assert!(!c.ws);
        assert_eq!(c.wsport, 8552, "WS settings count only with WS_ENABLE=1");
        assert_eq!(c.networkid, 7);
        assert!(c.allow_insecure_unlock);
        assert_eq!(c.verbosity, 4);
    }

    #[test]
    fn config_file_errors_name_the_line() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("bad.conf");
        std::fs::write(&f, "RPC_ENABLE=1\nRPC_PROT=9000\n").unwrap();
        assert_eq!(
            config_file_args(&f).unwrap_err().to_string(),
            format!("{}:2: unknown setting RPC_PROT", f.display())
        );
        std::fs::write(&f, "just words\n").unwrap();
        assert_eq!(
            config_file_args(&f).unwrap_err().to_string(),
            format!("{}:1: expected KEY=VALUE", f.display())
        );
        let missing = d.path().join("none.conf");
        assert!(config_file_args(&missing)
            .unwrap_err()
            .to_string()
            .starts_with("cannot read configuration file "));
    }

    #[test]
    fn bad_values_in_the_file_name_their_line() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        std::fs::write(&f, "# node\nRPC_ENABLE=1\nRPC_PORT=abc\n").unwrap();
        let e = config_file_args(&f).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}:3: RPC_PORT: invalid value 'abc' for '--rpcport",
                f.display()
            )),
            "{e}"
        );
        assert!(!e.contains('\n') && !e.contains("error:"), "{e:?}");
        std::fs::write(&f, "ADDITIONAL=\"--verbosity 4 --nosuchflag\"\n").unwrap();
        let e = config_file_args(&f).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}:1: ADDITIONAL: ", f.display())),
            "{e}"
        );
        assert!(e.contains("--nosuchflag"), "{e}");
        // A setting that does not count (RPC_ENABLE is not 1) is not checked either, as the
        // reference's launcher drops it.
        std::fs::write(&f, "RPC_PORT=abc\nWS_PORT=1\n").unwrap();
        assert!(config_file_args(&f).unwrap().is_empty());
    }

    #[test]
    fn switches_take_the_boolean_forms_and_nothing_else() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        for (value, on) in [
            ("1", true),
            ("true", true),
            ("TRUE", true),
            ("\"true\"", true),
            ("0", false),
            ("false", false),
            ("False", false),
        ] {
            std::fs::write(
                &f,
                format!("RPC_ENABLE={value}\nRPC_PORT=9000\nWS_ENABLE={value}\n"),
            )
            .unwrap();
            let args = config_file_args(&f).unwrap();
            assert_eq!(args.contains(&"--rpc".to_string()), on, "{value}: {args:?}");
            assert_eq!(args.contains(&"--ws".to_string()), on, "{value}: {args:?}");
            assert_eq!(args.contains(&"9000".to_string()), on, "{value}: {args:?}");
        }
        for (text, line, shown) in [
            ("RPC_ENABLE=yes\n", 1, "\"yes\""),
            ("# c\nWS_ENABLE=2\n", 2, "\"2\""),
            ("RPC_ENABLE=\n", 1, "\"\""),
            ("RPC_ENABLE=1\nRPC_ENABLE=on\n", 2, "\"on\""),
        ] {
            std::fs::write(&f, text).unwrap();
            let key = if text.contains("WS_") {
                "WS_ENABLE"
            } else {
                "RPC_ENABLE"
            };
            assert_eq!(
                config_file_args(&f).unwrap_err().to_string(),
                format!(
                    "{}:{line}: {key}: invalid value {shown}: use true, false, 1 or 0",
                    f.display()
                )
            );
        }
    }

    #[test]
    fn metrics_flags_and_the_launcher_switches() {
        let c = try_parse(&[]).unwrap();
        assert!(!c.metrics && !c.prometheus);
        assert_eq!(c.prometheusport, 61001);
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        std::fs::write(&f, "METRICS=1\nPROMETHEUS=true\n").unwrap();
        assert_eq!(
            config_file_args(&f).unwrap(),
            vec!["--metrics", "--prometheus"]
        );
        std::fs::write(&f, "METRICS=0\nPROMETHEUS=false\n").unwrap();
        assert!(config_file_args(&f).unwrap().is_empty());
        std::fs::write(&f, "# c\nPROMETHEUS=on\n").unwrap();
        assert_eq!(
            config_file_args(&f).unwrap_err().to_string(),
            format!(
                "{}:2: PROMETHEUS: invalid value \"on\": use true, false, 1 or 0",
                f.display()
            )
        );
    }

    #[test]
    fn timeouts_under_a_second_are_the_defaults() {
        let c = try_parse(&["--rpcexecutiontimeout", "0", "--rpcidletimeout", "5"]).unwrap();
        assert_eq!(c.execution_timeout(), Duration::from_secs(30));
        assert_eq!(c.idle_timeout(), Duration::from_secs(5));
        let c = try_parse(&["--rpcreadtimeout", "500ms", "--rpcwritetimeout", "1.5s"]).unwrap();
        assert_eq!(c.read_timeout(), Duration::from_secs(30));
        assert_eq!(c.write_timeout(), Duration::from_millis(1500));
        assert_eq!(
            try_parse(&[]).unwrap().read_timeout(),
            Duration::from_secs(30)
        );
        assert_eq!(try_parse(&[]).unwrap().ipcmaxconnections, 1000);
        assert!(try_parse(&["--ipcmaxconnections", "0"]).is_err());
    }

    #[test]
    fn every_duration_option_takes_seconds_and_units() {
        let durations: Vec<String> = Config::command()
            .get_arguments()
            .filter(|a| {
                a.get_value_names()
                    .is_some_and(|v| v.iter().any(|n| n == "DURATION" || n == "SECONDS"))
            })
            .map(|a| format!("--{}", a.get_long().unwrap()))
            .collect();
        assert_eq!(
            durations,
            [
                "--rpcreadtimeout",
                "--rpcwritetimeout",
                "--rpcidletimeout",
                "--rpcexecutiontimeout",
                "--dev.period",
                "--txpool.lifetime",
                "--state.trie-cache-save-period"
            ]
        );
        let of = |c: &Config, flag: &str| match flag {
            "--rpcreadtimeout" => c.read_timeout(),
            "--rpcwritetimeout" => c.write_timeout(),
            "--rpcidletimeout" => c.idle_timeout(),
            "--rpcexecutiontimeout" => c.execution_timeout(),
            "--dev.period" => c.dev_period,
            "--txpool.lifetime" => c.txpool_lifetime,
            _ => c.trie_cache_save_period,
        };
        for flag in &durations {
            for (text, secs) in [("90", 90), ("90s", 90), ("1m30s", 90), ("1h", 3600)] {
                let c = try_parse(&[flag, text]).unwrap();
                assert_eq!(of(&c, flag), Duration::from_secs(secs), "{flag} {text}");
            }
            let e = try_parse(&[flag, "soon"]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{flag}");
            assert!(
                e.to_string().contains(
                    "invalid duration \"soon\": use seconds (30, 0.5) or numbers with units"
                ),
                "{e}"
            );
        }
        // The configuration file's timeouts take the same forms.
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        std::fs::write(
            &f,
            "RPC_ENABLE=1\nRPC_READ_TIMEOUT=1m30s\nRPC_IDLE_TIMEOUT=45\nADDITIONAL=\"--dev.period 2s\"\n",
        )
        .unwrap();
        let argv: Vec<String> = ["chaind", "--config", f.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Config::from_argv(&argv).unwrap();
        assert_eq!(c.read_timeout(), Duration::from_secs(90));
        assert_eq!(c.idle_timeout(), Duration::from_secs(45));
        assert_eq!(c.dev_period, Duration::from_secs(2));
        std::fs::write(&f, "RPC_ENABLE=1\nRPC_WRITE_TIMEOUT=1x\n").unwrap();
        let e = config_file_args(&f).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}:2: RPC_WRITE_TIMEOUT: invalid value '1x' for '--rpcwritetimeout <DURATION>': invalid duration \"1x\"",
                f.display()
            )),
            "{e}"
        );
    }

    #[test]
    fn queue_limits_default_to_the_reference_and_take_at_least_one_slot() {
        use crate::chain::pool::QueueLimits;
        assert_eq!(
            try_parse(&[]).unwrap().queue_limits(),
            QueueLimits {
                account_slots: 64,
                all_slots: 1024,
                lifetime: Duration::from_secs(300)
            }
        );
        let c = try_parse(&[
            "--txpool.nonexec-slots.account",
            "16",
            "--txpool.nonexec-slots.all",
            "64",
            "--txpool.lifetime",
            "1500ms",
        ])
        .unwrap();
        assert_eq!(
            c.queue_limits(),
            QueueLimits {
                account_slots: 16,
                all_slots: 64,
                lifetime: Duration::from_millis(1500)
            }
        );
        for flag in [
            "--txpool.nonexec-slots.account",
            "--txpool.nonexec-slots.all",
        ] {
            let e = try_parse(&[flag, "0"]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{e}");
        }
    }

    #[test]
    fn pool_and_index_switches_on_the_command_line_and_in_the_file() {
        let c = try_parse(&[]).unwrap();
        assert!(!c.allow_local_anchortx && !c.sendertxhashindexing);
        let c = try_parse(&["--txpool.allow-local-anchortx", "--sendertxhashindexing"]).unwrap();
        assert!(c.allow_local_anchortx && c.sendertxhashindexing);
        // A switch takes no value, as every switch of the node.
        let e = try_parse(&["--txpool.allow-local-anchortx=false"]).unwrap_err();
        assert_eq!(e.kind(), clap::error::ErrorKind::TooManyValues, "{e}");
        // In a configuration file they are raw flags of ADDITIONAL, as --allow-insecure-unlock
        // and the reference's launcher (which has no key of its own for them either).
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("chaind.conf");
        std::fs::write(
            &f,
            "ADDITIONAL=\"--txpool.allow-local-anchortx --sendertxhashindexing\"\n",
        )
        .unwrap();
        assert_eq!(
            config_file_args(&f).unwrap(),
            ["--txpool.allow-local-anchortx", "--sendertxhashindexing"]
        );
        let argv: Vec<String> = ["chaind", "--config", f.to_str().unwrap()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let c = Config::from_argv(&argv).unwrap();
        assert!(c.allow_local_anchortx && c.sendertxhashindexing);
        // A misspelt one is the line's error, naming it.
        std::fs::write(&f, "# pool\nADDITIONAL=\"--txpool.allow-local-anchor\"\n").unwrap();
        let e = config_file_args(&f).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!(
                "{}:2: ADDITIONAL: unexpected argument '--txpool.allow-local-anchor' found",
                f.display()
            )),
            "{e}"
        );
    }

    fn try_parse(args: &[&str]) -> Result<Config, clap::Error> {
        Config::try_parse_from(std::iter::once("chaind").chain(args.iter().copied()))
    }

    #[test]
    fn flag_values_are_checked() {
        assert_eq!(try_parse(&[]).unwrap().wsmaxsubscriptionperconn, 3000);
        assert_eq!(
            try_parse(&["--wsmaxsubscriptionperconn", "1"])
                .unwrap()
                .wsmaxsubscriptionperconn,
            1
        );
        for v in ["0", "-1"] {
            let e = try_parse(&[&format!("--wsmaxsubscriptionperconn={v}")]).unwrap_err();
            assert_eq!(e.kind(), clap::error::ErrorKind::ValueValidation, "{v}");
        }
        assert_eq!(
            try_parse(&["--state.trie-cache-save-period", "2h"])
                .unwrap()
                .trie_cache_save_period,
            Duration::from_secs(7200)
        );
        assert!(try_parse(&["--state.trie-cache-save-period", "soon"]).is_err());
    }
}
