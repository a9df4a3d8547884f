//! `chainctl`: the JSON-RPC client of `chaind`. The clap definition (also the source of
//! `man/chainctl*.1`) and the behaviour of every command live here; the binary only calls
//! [`main`]. The module and method subcommands are built from the method table
//! ([`crate::api::spec::methods`]), and so are the handling of secrets and the console's
//! completion: a method added to the table is a command here.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Arg, ArgAction, ArgMatches, Command};
use serde_json::Value;
use zeroize::Zeroizing;

use crate::api::spec;
use crate::api::{MethodSpec, ParamKind, ParamSpec};
use crate::console::{self, LineError, Secrets};
use crate::datadir::DataDir;
use crate::passphrase::{self, PassphraseError};
use crate::rpc::client::{endpoint_kind, Client, ClientError, EndpointKind};
use crate::rpc::error::METHOD_NOT_FOUND;

/// The endpoint tried when no IPC socket exists in the default data directory.
pub const FALLBACK_ENDPOINT: &str = "http://localhost:8551";

const AFTER_HELP: &str = "\
Output: the JSON `result` on stdout, pretty-printed; a string result is printed as a JSON \
string, in double quotes (pipe through `jq -r .` for the bare text).

Secrets (passphrases and raw key data) are never taken from the command line, where other \
users can read them. `chainctl MODULE METHOD`: the arguments give the other parameters, in \
order, and each passphrase parameter is read from the next --password-file (its first line), \
else prompted for without echo when stdin is a terminal; without either chainctl exits with \
2. Give --password-file once per passphrase, in the order of the method's parameters. Key \
data given as - is read from standard input; left out or null, it is prompted for without \
echo on a terminal (without one chainctl exits with 2). `call` and `exec` refuse a passphrase \
or key data written in their arguments (exit 2): null in its place, or leaving it out at the \
end, has it read as above; or give the params (`call METHOD -`) or the line (`exec -`) on \
standard input, at most 1 MiB, where secrets may be written out.

File paths (the file of admin exportChain and importChain), in every form: a relative path is \
made absolute against chainctl's working directory when the node runs on this machine (an IPC \
socket, or an http:// or ws:// endpoint on localhost or a loopback address); to a node \
elsewhere it is sent as given, and the node resolves it against its own working directory.

Subscriptions (chain subscribe newHeads, newPendingTransactions, or logs with filter \
criteria; also through call and exec): each notification's result is printed as one line of \
JSON as it comes, until ctrl-c (exit 0); they need a WebSocket or IPC endpoint. When the \
reader of the output goes away (`| head -1`), chainctl ends quietly with exit 0.

Exit codes: 0 success; 1 the call failed (an RPC error, printed as `error CODE: MESSAGE` on \
stderr, or a node that cannot be reached, printed with the endpoint tried); 2 bad usage \
(unknown module or method, also when the node answers error -32601; a malformed endpoint; \
bad JSON params; a console syntax error; a passphrase or key data that cannot be read; a \
subscription over HTTP). An error's data, when the node gives some, is printed on the next \
line as `  data: ...` (for -32601: no such method and the nearest name, a module this \
endpoint does not offer, or a method of the reference node not built here).";

/// The clap command, for parsing, `--help` and the man pages.
pub fn command() -> Command {
    let mut cmd = Command::new("chainctl")
        .version(env!("CARGO_PKG_VERSION"))
        .about("JSON-RPC client of chaind: call a method, run a console line, or attach a console")
        .long_about(
            "JSON-RPC client of chaind: call any method of the node as `chainctl MODULE METHOD \
[ARGS...]`, by its raw name with `call`, as a console line with `exec`, or interactively with \
`attach`.",
        )
        .max_term_width(100)
        .subcommand_required(true)
        .arg_required_else_help(true)
        .after_help(AFTER_HELP)
        .arg(
            Arg::new("endpoint")
                .long("endpoint")
                .value_name("E")
                .global(true)
                .help(
                    "The node: http://HOST:PORT, ws://HOST:PORT, or the path of an IPC socket \
[default: DATADIR/chaind.ipc with --datadir; else the IPC socket of the default data \
directory if it exists, else http://localhost:8551]",
                ),
        )
        .arg(
            Arg::new("datadir")
                .long("datadir")
                .value_name("DIR")
                .value_parser(clap::value_parser!(PathBuf))
                .global(true)
                .help(
                    "Data directory of the node: its chaind.ipc is the endpoint (unless \
--endpoint is given) and the console keeps its history in DIR/chainctl_history",
                ),
        )
        .arg(
            Arg::new("password_file")
                .long("password-file")
                .value_name("FILE")
                .value_parser(clap::value_parser!(PathBuf))
                .action(ArgAction::Append)
                .global(true)
                .help(
                    "Read a passphrase parameter left out of the arguments from the first line \
of FILE (repeat for methods with several passphrases, in order)",
                ),
        )
        .subcommand(
            Command::new("call")
                .about("Call a method by its raw name with a JSON array of params")
                .arg(
                    Arg::new("method")
                        .value_name("METHOD")
                        .required(true)
                        .help("The JSON-RPC method name, e.g. personal_listAccounts"),
                )
                .arg(
                    Arg::new("params")
                        .value_name("JSON_PARAMS")
                        .allow_hyphen_values(true)
                        .help("The positional params as one JSON array, e.g. '[\"0x..\", null, 600]', or - to read that array from standard input (at most 1 MiB): the way to write out passphrases and key data, which are refused here (null in their place has them read from --password-file or a prompt) [default: []]"),
                ),
        )
        .subcommand(
            Command::new("exec")
                .about("Run one console line, e.g. 'admin.datadir' or 'personal.unlockAccount(\"0x..\", null, 600)'")
                .arg(
                    Arg::new("line")
                        .value_name("LINE")
                        .required(true)
                        .allow_hyphen_values(true)
                        .help(
                            "module.method(args) with JavaScript-like literals: strings in \
double or single quotes, numbers, true, false, null, arrays, objects (keys may be unquoted); \
without parentheses the method gets no arguments. Passphrases and key data written in LINE \
are refused (null in their place has them read from --password-file or a prompt); - reads the \
line from standard input (at most 1 MiB), where they may be written out",
                        ),
                ),
        )
        .subcommand(
            Command::new("attach")
                .about("Interactive console: module.method(args) lines with editing, history and tab completion")
                .long_about(
                    "Interactive console: module.method(args) lines, as `exec` takes them, \
with line editing, tab completion of module and method names, and a history kept in \
DIR/chainctl_history with --datadir DIR, else in ~/.chainctl_history. A missing or null \
passphrase parameter is read from the next --password-file, else prompted for without echo, \
and missing or null key data is prompted for without echo, e.g. personal.newAccount(), \
personal.unlockAccount(\"0x..\", null, 600) or personal.importRawKey(). The history records \
only calls of known methods with no passphrase or key data written out, no more arguments than \
the method takes, and each argument of its parameter's kind: a line that does not parse, names \
an unknown method (a mistyped name) or has, say, a passphrase where the address goes is not \
recorded. Results are printed as pretty JSON, errors as `error CODE: MESSAGE`, and the \
console goes on. `help` lists the modules, `help admin` the methods of a module, `help \
admin.addPeer` (or admin_addPeer) one method's parameters and result. chain.subscribe(\"newHeads\") \
(or newPendingTransactions, or \"logs\" with filter criteria) prints each notification as one \
line of JSON until ctrl-c, then the prompt returns. ctrl-c drops the line being typed; \
`exit`, `quit` or ctrl-d leaves.",
                ),
        );
    for module in spec::modules() {
        cmd = cmd.subcommand(module_command(module));
    }
    cmd
}

/// `chainctl MODULE`: one subcommand per method of the module in the table. The long help
/// (and so the man page) lists every method with its parameters.
fn module_command(module: &'static str) -> Command {
    let methods: Vec<&'static MethodSpec> = spec::methods()
        .iter()
        .filter(|m| m.module() == module)
        .collect();
    let mut listing = format!("Methods (`chainctl {module} METHOD --help` tells more):");
    for m in &methods {
        let method = m.name.split_once('_').map_or(m.name, |(_, rest)| rest);
        let line = format!("{method} {}", usage_of(m));
        listing.push_str(&format!(
            "\n  {}\n      {}\n      Returns: {}",
            line.trim_end(),
            m.summary,
            m.returns
        ));
    }
    let mut cmd = Command::new(module)
        .about(format!("Methods of the {module} module"))
        .after_long_help(listing)
        .subcommand_value_name("METHOD")
        .subcommand_required(true)
        .arg_required_else_help(true);
    for m in methods {
        cmd = cmd.subcommand(method_command(m));
    }
    cmd
}

/// The arguments of `m` as a usage line: `<required>`, `[optional]`. Passphrases are not
/// arguments (they come from --password-file or a prompt) and are left out.
fn usage_of(m: &MethodSpec) -> String {
    m.params
        .iter()
        .filter(|p| !p.kind.is_passphrase())
        .map(|p| {
            if p.optional {
                format!("[{}]", p.name)
            } else {
                format!("<{}>", p.name)
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// `chainctl MODULE METHOD [ARGS...]`, its help listing the method's parameters.
fn method_command(m: &'static MethodSpec) -> Command {
    let (module, method) = m
        .name
        .split_once('_')
        .expect("table names are module_method");
    let mut params = String::new();
    for p in m.params {
        let what = match p.kind {
            ParamKind::KeyData => "raw private key data, hex: a secret, refused written out; give - to read it from standard input (on a terminal, - or leaving it out prompts for it without echo)",
            ParamKind::Passphrase | ParamKind::NewPassphrase => "a passphrase, never an argument: read from the next --password-file, else a no-echo prompt",
            ParamKind::Path => "a file path on the node's machine. A relative path is made absolute against chainctl's working directory when the node runs on this machine (an IPC socket, or an http:// or ws:// endpoint on localhost or a loopback address); to a node elsewhere it is sent as given, and the node resolves it against its own working directory",
            other => other.describe(),
        };
        let optional = if p.optional { ", optional" } else { "" };
        params.push_str(&format!("\n  {}: {what}{optional}", p.name));
    }
    if params.is_empty() {
        params.push_str("\n  none");
    }
    let command = Command::new(method)
        .about(m.summary)
        .after_help(format!(
            "JSON-RPC method {}. Parameters, in order:{params}{}\nReturns: {}{}",
            m.name,
            if m.params.iter().any(|p| p.kind.is_passphrase()) {
                "\nThe arguments give the parameters other than the passphrases, in order."
            } else {
                ""
            },
            m.returns,
            if crate::console::is_subscription(m.name) {
                "\nchainctl prints each notification's result as one line of JSON as it comes, \
until ctrl-c (exit 0) or until the reader of its output goes away; it needs a WebSocket or \
IPC endpoint (over HTTP: exit 2)."
            } else {
                ""
            }
        ))
        .override_usage(
            format!("chainctl {module} {method} [OPTIONS] {}", usage_of(m))
                .trim_end()
                .to_string(),
        )
        .arg(
            Arg::new("args")
                .value_name("ARGS")
                .num_args(0..)
                .allow_negative_numbers(true)
                .help(
                    "The positional params other than passphrases; each is taken as JSON when \
it parses as JSON (a string parameter only as a quoted JSON string or null), else as a string. \
Key data is given as - and read from standard input, or left out to be prompted for on a \
terminal (written out, it is refused)",
                ),
        );
    match m.name {
        WATCHED => command.arg(
            Arg::new("watch")
                .long("watch")
                .action(clap::ArgAction::SetTrue)
                .help(
                    "Follow the running migration (a progress bar on a terminal, one line a \
second otherwise) until it ends, then print its status; exit 1 if it ended with an error",
                ),
        ),
        SAVE => command.arg(
            Arg::new("wait")
                .long("wait")
                .action(clap::ArgAction::SetTrue)
                .help(
                    "Wait until the save has ended (admin_trieNodeCacheStatus), then print its \
outcome {number, path, nodes, bytes, error}; exit 1, saying why, if it failed",
                ),
        ),
        _ => command,
    }
}

/// The method `--watch` follows.
const WATCHED: &str = "admin_stateMigrationStatus";

/// The method `--wait` waits for, and the one it asks how it went.
const SAVE: &str = "admin_saveTrieNodeCacheToDisk";
const SAVE_STATUS: &str = "admin_trieNodeCacheStatus";

/// `chainctl admin saveTrieNodeCacheToDisk --wait`: starts the save, then polls until the
/// node reports it ended, and prints its outcome (the file written); a failed save fails.
fn save_and_wait(client: &mut Client, out: &mut impl Write) -> Result<(), Failure> {
    client.call(SAVE, Vec::new()).map_err(Failure::from)?;
    // The save just started is the latest one the node counts (none can start while it
    // runs); its number is the count of saves started.
    let mut number = None;
    let outcome = loop {
        let s = client
            .call(SAVE_STATUS, Vec::new())
            .map_err(Failure::from)?;
        let started = s["started"].as_u64().unwrap_or(0);
        let ours = *number.get_or_insert(started);
        if s["last"]["number"].as_u64().is_some_and(|n| n >= ours) {
            break s["last"].clone();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    if let Some(e) = outcome["error"].as_str() {
        return Err(Failure {
            code: 1,
            message: format!(
                "error: saving the trie node cache to {} failed: {e}",
                outcome["path"].as_str().unwrap_or("?")
            ),
        });
    }
    emit(out, &console::render(&outcome))
}

/// Writes `text` and a newline to `out`, flushed. A reader that went away (`| head -1`) ends
/// the command quietly with exit 0, as ripgrep does: [`Failure::output_closed`].
fn emit(out: &mut impl Write, text: &str) -> Result<(), Failure> {
    match writeln!(out, "{text}").and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Err(Failure::output_closed()),
        Err(e) => Err(Failure {
            code: 1,
            message: format!("error: cannot write output: {e}"),
        }),
    }
}

/// `chainctl admin stateMigrationStatus --watch`: polls until no migration runs, showing
/// its progress; the final status is printed. A migration that ended with an error fails.
fn watch_migration(client: &mut Client, out: &mut impl Write) -> Result<(), Failure> {
    use std::io::IsTerminal;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(10_000);
        b.set_style(
            indicatif::ProgressStyle::with_template("State migration [{bar:40}] {msg}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        b
    });
    let mut last_line = std::time::Instant::now() - std::time::Duration::from_secs(1);
    let status = loop {
        let s = client.call(WATCHED, Vec::new()).map_err(Failure::from)?;
        let progress = s["progress"].as_f64().unwrap_or(0.0);
        let text = format!(
            "{progress:.1}% block {} read {} committed {} pending {}",
            s["migrationBlockNumber"], s["read"], s["committed"], s["pending"]
        );
        match &bar {
            Some(b) => {
                b.set_position((progress * 100.0) as u64);
                b.set_message(text);
            }
            None if last_line.elapsed() >= std::time::Duration::from_secs(1) => {
                eprintln!("{text}");
                last_line = std::time::Instant::now();
            }
            None => {}
        }
        if !s["isMigration"].as_bool().unwrap_or(false) {
            break s;
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    if let Some(b) = bar {
        b.finish();
    }
    emit(out, &console::render(&status))?;
    match status["err"].as_str() {
        Some("null") | None => Ok(()),
        Some(e) => Err(Failure {
            code: 1,
            message: format!("error: the state migration ended with: {e}"),
        }),
    }
}

/// A failed command: the line for stderr and the exit code (1 the call failed, 2 bad usage).
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    /// The whole line: `error CODE: MESSAGE` for an RPC error, else `error: ...`.
    pub message: String,
}

impl Failure {
    fn usage(message: impl std::fmt::Display) -> Failure {
        Failure {
            code: 2,
            message: format!("error: {message}"),
        }
    }

    /// The end of a command whose output's reader went away: exit 0, nothing printed.
    fn output_closed() -> Failure {
        Failure {
            code: 0,
            message: String::new(),
        }
    }
}

impl From<ClientError> for Failure {
    /// An RPC error keeps the node's `error CODE: MESSAGE`; a method the node does not know
    /// (-32601) is bad usage (exit 2, as cli.md says of an unknown method), any other failure
    /// exit 1.
    fn from(e: ClientError) -> Failure {
        match &e {
            ClientError::Rpc { code, .. } => Failure {
                code: if *code == METHOD_NOT_FOUND { 2 } else { 1 },
                message: e.to_string(),
            },
            _ => Failure {
                code: 1,
                message: format!("error: {e}"),
            },
        }
    }
}

impl From<LineError> for Failure {
    fn from(e: LineError) -> Failure {
        match e {
            LineError::Client(c) => c.into(),
            LineError::Output(e) => Failure {
                code: 1,
                message: format!("error: cannot write output: {e}"),
            },
            other => Failure::usage(other),
        }
    }
}

/// The endpoint to use: `--endpoint`, else `DATADIR/chaind.ipc` for `--datadir`, else the IPC
/// socket of the default data directory when it exists, else [`FALLBACK_ENDPOINT`].
pub fn resolve_endpoint(endpoint: Option<&str>, datadir: Option<&Path>) -> String {
    if let Some(e) = endpoint {
        return e.to_string();
    }
    if let Some(d) = datadir {
        return DataDir::new(d).ipc_socket().display().to_string();
    }
    let ipc = DataDir::default().ipc_socket();
    if ipc.exists() {
        ipc.display().to_string()
    } else {
        FALLBACK_ENDPOINT.to_string()
    }
}

/// Checks the form of `endpoint` before anything connects, so that a typo is reported as
/// what it is (bad usage) rather than as an unreachable node. `http://`, `https://` and
/// `ws://` need a host and, when a port is given, a port number; `wss://` and other schemes
/// are refused. Anything without a scheme is the path of an IPC socket, except `HOST:PORT`
/// naming no file, which is taken for a URL without its scheme. Fails with the message.
pub fn check_endpoint(endpoint: &str) -> Result<(), String> {
    const HINT: &str = "did you mean http://HOST:PORT?";
    if endpoint.trim().is_empty() {
        return Err(
            "the endpoint is empty: give http://HOST:PORT, ws://HOST:PORT or the path of an IPC \
socket"
                .to_string(),
        );
    }
    let scheme_and_rest = endpoint.split_once("://").filter(|(scheme, _)| {
        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
    });
    let Some((scheme, rest)) = scheme_and_rest else {
        if looks_like_host_port(endpoint) && !Path::new(endpoint).exists() {
            return Err(format!(
                "endpoint {endpoint} is neither a URL nor an existing IPC socket path: did you \
mean http://{endpoint}?"
            ));
        }
        return Ok(());
    };
    match scheme.to_ascii_lowercase().as_str() {
        "http" | "https" | "ws" => {}
        "wss" => {
            return Err(format!(
                "endpoint {endpoint}: TLS WebSocket endpoints (wss://) are not supported; use \
ws://HOST:PORT, http://HOST:PORT or the path of an IPC socket"
            ))
        }
        _ => {
            return Err(format!(
                "endpoint {endpoint}: unknown scheme {scheme}://, {HINT} (ws://HOST:PORT and the \
path of an IPC socket work too)"
            ))
        }
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    // user:password@ may precede the host.
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, hp)| hp);
    let (host, port) = if let Some(bracketed) = host_port.strip_prefix('[') {
        match bracketed.split_once(']') {
            Some((host, "")) => (host, None),
            Some((host, after)) => match after.strip_prefix(':') {
                Some(port) => (host, Some(port)),
                None => return Err(format!("endpoint {endpoint}: malformed host: {HINT}")),
            },
            None => return Err(format!("endpoint {endpoint}: malformed host: {HINT}")),
        }
    } else {
        match host_port.rsplit_once(':') {
            Some((host, _)) if host.contains(':') => {
                return Err(format!(
                    "endpoint {endpoint}: an IPv6 address goes in brackets, e.g. \
{scheme}://[::1]:8551"
                ))
            }
            Some((host, port)) => (host, Some(port)),
            None => (host_port, None),
        }
    };
    if host.is_empty() || host.chars().any(|c| c.is_whitespace() || c == '%') {
        return Err(format!("endpoint {endpoint} names no host: {HINT}"));
    }
    if let Some(port) = port {
        if !port.parse::<u16>().is_ok_and(|p| p > 0) || port.starts_with('+') {
            return Err(format!(
                "endpoint {endpoint}: the port must be a number from 1 to 65535: {HINT}"
            ));
        }
    }
    Ok(())
}

/// Whether `s` reads as `HOST:PORT` (`localhost:8551`, `127.0.0.1:8551`, `[::1]:8551`).
fn looks_like_host_port(s: &str) -> bool {
    let Some((host, port)) = s.rsplit_once(':') else {
        return false;
    };
    !host.is_empty()
        && !port.is_empty()
        && port.chars().all(|c| c.is_ascii_digit())
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '[' | ']' | ':'))
}

/// Where the console keeps its history: `DATADIR/chainctl_history` with `--datadir`, else
/// `~/.chainctl_history`; `None` without a home directory.
pub fn history_path(datadir: Option<&Path>) -> Option<PathBuf> {
    match datadir {
        Some(d) => Some(DataDir::new(d).chainctl_history()),
        None => directories::BaseDirs::new().map(|b| b.home_dir().join(".chainctl_history")),
    }
}

/// An argument of `chainctl MODULE METHOD`: JSON when it parses, else a string. For a
/// parameter of a string kind only a quoted JSON string or `null` counts as JSON, so that
/// `1234` stays the text it is.
pub fn parse_arg(text: &str, kind: Option<ParamKind>) -> Value {
    let stringy = matches!(
        kind,
        Some(
            ParamKind::String
                | ParamKind::KeyData
                | ParamKind::Passphrase
                | ParamKind::NewPassphrase
                | ParamKind::Address
                | ParamKind::Bytes
                | ParamKind::Hash
        )
    );
    match serde_json::from_str::<Value>(text) {
        Ok(v) if !stringy || v.is_string() || v.is_null() => v,
        _ => Value::String(text.to_string()),
    }
}

/// The params of `m` from the command-line `args`, which give the parameters other than the
/// passphrases, in order: a passphrase is never taken from an argument. Its place is `null`
/// (an argument `null` there is taken as that `null`) and left out at the end, for
/// [`console::fill_secrets`] to fill from a password file or the prompt. Key data given as
/// `-` comes from `read_secret` (standard input); `null` or left out, [`console::fill_secrets`]
/// prompts for it; written out, it is refused. Arguments beyond the table's parameters
/// are passed on as they are, for the node to judge; but a method that takes a passphrase
/// refuses them as bad usage (such an argument is most likely a passphrase).
pub fn assemble_args(
    m: &MethodSpec,
    args: &[String],
    mut read_secret: impl FnMut(&ParamSpec) -> Result<Zeroizing<String>, Failure>,
) -> Result<Vec<Value>, Failure> {
    let mut out = Vec::new();
    // How many params the arguments gave, up to the last one given.
    let mut given = 0;
    let mut rest = args.iter().peekable();
    for p in m.params {
        if p.kind.is_passphrase() {
            if rest.peek().is_some_and(|a| a.as_str() == "null") {
                rest.next();
            }
            out.push(Value::Null);
            continue;
        }
        let Some(a) = rest.next() else {
            break;
        };
        out.push(if p.kind == ParamKind::KeyData && a == "-" {
            Value::String(read_secret(p)?.as_str().to_string())
        } else if p.kind == ParamKind::KeyData && a != "null" {
            return Err(Failure::usage(format!(
                "{}: the {} parameter is a secret, never taken from the command line; give - \
to read it from standard input",
                m.name, p.name
            )));
        } else {
            parse_arg(a, Some(p.kind))
        });
        given = out.len();
    }
    out.truncate(given);
    if rest.peek().is_none() {
        return Ok(out);
    }
    let passphrases: Vec<&str> = m
        .params
        .iter()
        .filter(|p| p.kind.is_passphrase())
        .map(|p| p.name)
        .collect();
    if passphrases.is_empty() {
        out.extend(rest.map(|a| parse_arg(a, None)));
        return Ok(out);
    }
    // The extra arguments are not repeated: one of them may be a passphrase.
    let usage = usage_of(m);
    Err(Failure::usage(format!(
        "too many arguments: {} takes {}; its passphrase parameters ({}) are never taken from \
the command line: give --password-file FILE, or run on a terminal to be prompted",
        m.name,
        if usage.is_empty() {
            "none".to_string()
        } else {
            usage
        },
        passphrases.join(", ")
    )))
}

/// Most bytes `call METHOD -` and `exec -` read from standard input.
const MAX_STDIN_PARAMS: usize = 1 << 20;

/// Reads what `call METHOD -` or `exec -` takes from standard input, at most
/// [`MAX_STDIN_PARAMS`] bytes, into a buffer that is wiped when dropped.
fn params_from_stdin(what: &'static str) -> Result<Zeroizing<String>, Failure> {
    passphrase::stdin_text(what, MAX_STDIN_PARAMS).map_err(Failure::usage)
}

/// Refuses a passphrase or key data written out in params that came from the command line
/// (readable by anyone in `/proc/<pid>/cmdline`): exit 2, naming the way to give it.
pub fn refuse_secrets_in_argv(name: &str, params: &[Value], instead: &str) -> Result<(), Failure> {
    let Some(m) = spec::find(name) else {
        return Ok(());
    };
    for (p, v) in m.params.iter().zip(params) {
        if p.kind.is_secret() && !v.is_null() {
            let fill = if p.kind.is_passphrase() {
                "give null there and --password-file FILE or the terminal prompt, or "
            } else {
                ""
            };
            return Err(Failure::usage(format!(
                "{name}: the {} parameter is a secret, never taken from the command line; \
{fill}give the parameters on standard input: chainctl {instead}",
                p.name
            )));
        }
    }
    Ok(())
}

/// Key data given as `-`: standard input, or a no-echo prompt on a terminal.
fn key_data_from_stdin(_: &ParamSpec) -> Result<Zeroizing<String>, Failure> {
    passphrase::secret_from_stdin("the key data", "Key data: ").map_err(Failure::usage)
}

/// Fills the secrets of `m` in `params` from `source`, failing as bad usage when one cannot be
/// had or when a password file goes unused. `key_data_how` tells, in the message for key data
/// that no terminal can prompt for, how this command takes it.
fn fill(
    m: Option<&MethodSpec>,
    name: &str,
    params: &mut Vec<Value>,
    source: &mut Secrets,
    key_data_how: &str,
) -> Result<(), Failure> {
    let Some(m) = m else {
        if source.has_files() {
            return Err(Failure::usage(format!(
                "--password-file given, but {name} is not a method chainctl knows to take a passphrase"
            )));
        }
        return Ok(());
    };
    console::fill_secrets(m, params, source).map_err(|e| secret_failure(m, e, key_data_how))?;
    if source.unused() > 0 {
        let names: Vec<&str> = m
            .params
            .iter()
            .filter(|p| p.kind.is_passphrase())
            .map(|p| p.name)
            .collect();
        return Err(Failure::usage(format!(
            "{} --password-file given, {} used: {name} takes {} passphrase parameter(s){}, and the \
arguments give the rest",
            source.count(),
            source.count() - source.unused(),
            names.len(),
            if names.is_empty() { String::new() } else { format!(" ({})", names.join(", ")) }
        )));
    }
    Ok(())
}

fn secret_failure(m: &MethodSpec, e: PassphraseError, key_data_how: &str) -> Failure {
    match e {
        PassphraseError::NoTerminal { .. } => Failure::usage(format!(
            "{} needs a passphrase: give --password-file FILE, or run on a terminal to be prompted",
            m.name
        )),
        PassphraseError::NoKeyData => Failure::usage(format!(
            "{} needs key data: {key_data_how}, or run on a terminal to be prompted",
            m.name
        )),
        other => Failure::usage(other),
    }
}

/// Runs `chainctl` with the process's arguments and returns its exit code.
pub fn main() -> ExitCode {
    let matches = command().get_matches();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match run(&matches, &mut out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            let _ = out.flush();
            if !f.message.is_empty() {
                let _ = writeln!(io::stderr(), "{}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

/// Runs one parsed command line, writing the result to `out`.
pub fn run(matches: &ArgMatches, out: &mut impl Write) -> Result<(), Failure> {
    let datadir = matches.get_one::<PathBuf>("datadir").map(PathBuf::as_path);
    let given_endpoint = matches.get_one::<String>("endpoint").map(String::as_str);
    let endpoint = resolve_endpoint(given_endpoint, datadir);
    check_endpoint(&endpoint).map_err(Failure::usage)?;
    // Whether the endpoint is the fallback chosen without being asked (said when unreachable).
    let defaulted = given_endpoint.is_none() && datadir.is_none();
    let files: Vec<PathBuf> = matches
        .get_many::<PathBuf>("password_file")
        .map(|v| v.cloned().collect())
        .unwrap_or_default();
    let mut source = Secrets::new(files);
    let (sub, sub_m) = matches.subcommand().expect("a subcommand is required");

    // Everything that can be bad usage is checked before connecting.
    let (name, params) = match sub {
        "attach" => {
            let client = connect(&endpoint, defaulted)?;
            return console::attach(client, history_path(datadir).as_deref(), source)
                .map_err(Failure::from);
        }
        "exec" => {
            let given = sub_m.get_one::<String>("line").expect("required");
            let from_stdin = given == "-";
            let line = if from_stdin {
                params_from_stdin("the console line")?
            } else {
                Zeroizing::new(given.clone())
            };
            let call = console::parse_line(&line).map_err(Failure::usage)?;
            let name = call.rpc_method();
            let mut params = call.args;
            let how = if from_stdin {
                "write it in the line"
            } else {
                refuse_secrets_in_argv(&name, &params, "exec -")?;
                "give the line on standard input: chainctl exec -"
            };
            fill(spec::find(&name), &name, &mut params, &mut source, how)?;
            resolve(&name, &mut params, &endpoint)?;
            (name, params)
        }
        "call" => {
            let name = sub_m.get_one::<String>("method").expect("required").clone();
            let given = sub_m.get_one::<String>("params");
            let from_stdin = given.is_some_and(|g| g == "-");
            let stdin_text;
            let text = if from_stdin {
                stdin_text = params_from_stdin("the params array")?;
                Some(stdin_text.as_str())
            } else {
                given.map(String::as_str)
            };
            let mut params = match text {
                None => Vec::new(),
                Some(text) => match serde_json::from_str::<Value>(text) {
                    Ok(Value::Array(a)) => a,
                    Ok(_) => {
                        return Err(Failure::usage(
                            "JSON_PARAMS must be a JSON array, e.g. '[\"0x..\", 600]'",
                        ))
                    }
                    Err(e) => {
                        return Err(Failure::usage(format!(
                            "JSON_PARAMS is not valid JSON: {e}"
                        )))
                    }
                },
            };
            let how = if from_stdin {
                "write it in the params".to_string()
            } else {
                refuse_secrets_in_argv(&name, &params, &format!("call {name} -"))?;
                format!("give the params on standard input: chainctl call {name} -")
            };
            fill(spec::find(&name), &name, &mut params, &mut source, &how)?;
            resolve(&name, &mut params, &endpoint)?;
            (name, params)
        }
        module => {
            let (method, args_m) = sub_m.subcommand().expect("a method subcommand is required");
            let name = format!("{module}_{method}");
            let m = spec::find(&name).expect("subcommands come from the table");
            let args: Vec<String> = args_m
                .get_many::<String>("args")
                .map(|v| v.cloned().collect())
                .unwrap_or_default();
            if name == WATCHED && args_m.get_flag("watch") {
                let mut client = connect(&endpoint, defaulted)?;
                return watch_migration(&mut client, out);
            }
            if name == SAVE && args_m.get_flag("wait") {
                let mut client = connect(&endpoint, defaulted)?;
                return save_and_wait(&mut client, out);
            }
            let mut params = assemble_args(m, &args, key_data_from_stdin)?;
            let how = "give - to read it from standard input";
            fill(Some(m), &name, &mut params, &mut source, how)?;
            resolve(&name, &mut params, &endpoint)?;
            (name, params)
        }
    };
    if console::is_subscription(&name) {
        if endpoint_kind(&endpoint) == EndpointKind::Http {
            return Err(LineError::NeedsStream(name).into());
        }
        let mut client = connect(&endpoint, defaulted)?;
        // Notifications until ctrl-c (exit 0) or until the output's reader goes away.
        console::until_interrupted(|stop| console::stream(&mut client, &name, params, out, stop))
            .map_err(|e| match e {
            LineError::Client(c) => explain(c, &endpoint, defaulted),
            other => other.into(),
        })?;
        return Ok(());
    }
    let mut client = connect(&endpoint, defaulted)?;
    let result = client
        .call(&name, params)
        .map_err(|e| explain(e, &endpoint, defaulted))?;
    emit(out, &console::render(&result))
}

/// Makes the relative path parameters of `name` absolute when the node is on this machine
/// ([`console::resolve_paths`]).
fn resolve(name: &str, params: &mut [Value], endpoint: &str) -> Result<(), Failure> {
    match spec::find(name) {
        Some(m) => console::resolve_paths(m, params, endpoint).map_err(Failure::from),
        None => Ok(()),
    }
}

fn connect(endpoint: &str, defaulted: bool) -> Result<Client, Failure> {
    Client::connect(endpoint).map_err(|e| explain(e, endpoint, defaulted))
}

/// Adds to an unreachable default endpoint that the IPC socket was looked for first.
fn explain(e: ClientError, endpoint: &str, defaulted: bool) -> Failure {
    let mut f = Failure::from(e);
    if f.code == 1
        && defaulted
        && endpoint_kind(endpoint) == EndpointKind::Http
        && f.message.starts_with("error: cannot reach")
    {
        f.message.push_str(&format!(
            " (and there is no IPC socket at {}; give --endpoint or --datadir)",
            DataDir::default().ipc_socket().display()
        ));
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_definition_is_consistent() {
        command().debug_assert();
        for builtin in ["call", "exec", "attach"] {
            assert!(
                !spec::modules().contains(&builtin),
                "module {builtin} would shadow a command"
            );
        }
    }

    #[test]
    fn every_table_method_is_a_command() {
        let cmd = command();
        for m in spec::methods() {
            let (module, method) = m.name.split_once('_').unwrap();
            let sub = cmd
                .find_subcommand(module)
                .unwrap_or_else(|| panic!("no module {module}"));
            assert!(
                sub.find_subcommand(method).is_some(),
                "no command for {}",
                m.name
            );
        }
    }

    #[test]
    fn method_commands_parse() {
        let m = command()
            .try_get_matches_from([
                "chainctl",
                "--endpoint",
                "x.ipc",
                "admin",
                "startHTTP",
                "127.0.0.1",
                "0",
            ])
            .unwrap();
        assert_eq!(m.get_one::<String>("endpoint").unwrap(), "x.ipc");
        let (module, mm) = m.subcommand().unwrap();
        let (method, am) = mm.subcommand().unwrap();
        assert_eq!((module, method), ("admin", "startHTTP"));
        let args: Vec<&String> = am.get_many::<String>("args").unwrap().collect();
        assert_eq!(args, ["127.0.0.1", "0"]);
        // Global options after the method, and negative numbers as arguments.
        let m = command()
            .try_get_matches_from([
                "chainctl",
                "personal",
                "unlockAccount",
                "0x1",
                "-5",
                "--password-file",
                "f",
            ])
            .unwrap();
        assert_eq!(m.get_many::<PathBuf>("password_file").unwrap().count(), 1);
        for bad in [
            vec!["chainctl", "nosuch", "x"],
            vec!["chainctl", "personal", "nosuch"],
            vec!["chainctl", "personal"],
        ] {
            let e = command().try_get_matches_from(&bad).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }

    #[test]
    fn args_are_json_when_they_parse() {
        assert_eq!(parse_arg("600", Some(ParamKind::Integer)), json!(600));
        assert_eq!(parse_arg("true", None), json!(true));
        assert_eq!(parse_arg("null", Some(ParamKind::Passphrase)), Value::Null);
        assert_eq!(
            parse_arg(r#"{"from":"0x1"}"#, Some(ParamKind::Object)),
            json!({"from": "0x1"})
        );
        assert_eq!(parse_arg("0xabc", Some(ParamKind::Address)), json!("0xabc"));
        assert_eq!(
            parse_arg("127.0.0.1", Some(ParamKind::String)),
            json!("127.0.0.1")
        );
        assert_eq!(parse_arg("hello", None), json!("hello"));
        // A string parameter keeps digits as text, unless quoted JSON.
        assert_eq!(parse_arg("1234", Some(ParamKind::String)), json!("1234"));
        assert_eq!(parse_arg("\"x y\"", Some(ParamKind::String)), json!("x y"));
        assert_eq!(parse_arg("1234", None), json!(1234));
    }

    #[test]
    fn passphrases_are_never_arguments() {
        let unlock = spec::find("personal_unlockAccount").unwrap();
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let no_stdin = |_: &ParamSpec| -> Result<Zeroizing<String>, Failure> {
            panic!("standard input read without a -")
        };
        let assemble = |m, v: &[&str]| assemble_args(m, &a(v), no_stdin);
        // The second argument is the duration; the passphrase's place is left null.
        assert_eq!(
            assemble(unlock, &["0x1", "600"]).unwrap(),
            vec![json!("0x1"), Value::Null, json!(600)]
        );
        assert_eq!(assemble(unlock, &["0x1"]).unwrap(), vec![json!("0x1")]);
        // A null in the passphrase's place is that place.
        assert_eq!(
            assemble(unlock, &["0x1", "null", "600"]).unwrap(),
            vec![json!("0x1"), Value::Null, json!(600)]
        );
        assert_eq!(
            assemble(unlock, &["0x1", "null"]).unwrap(),
            vec![json!("0x1")]
        );
        // A passphrase typed as an argument is refused, and not repeated.
        let e = assemble(unlock, &["0x1", "hunter2", "600"]).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(!e.message.contains("hunter2"), "{}", e.message);
        assert!(
            e.message
                .contains("personal_unlockAccount takes <address> [duration]"),
            "{}",
            e.message
        );
        let new = spec::find("personal_newAccount").unwrap();
        assert_eq!(assemble(new, &[]).unwrap(), Vec::<Value>::new());
        assert!(assemble(new, &["pw"])
            .unwrap_err()
            .message
            .contains("takes none"));
        let sign = spec::find("personal_sign").unwrap();
        assert_eq!(
            assemble(sign, &["0x68", "0x1"]).unwrap(),
            vec![json!("0x68"), json!("0x1")]
        );
        // Methods without a passphrase pass extra arguments on.
        let modules = spec::find("rpc_modules").unwrap();
        assert_eq!(
            assemble(modules, &["extra", "1"]).unwrap(),
            vec![json!("extra"), json!(1)]
        );
    }

    #[test]
    fn the_fee_payers_passphrase_is_never_an_argument() {
        let a = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let no_stdin = |_: &ParamSpec| -> Result<Zeroizing<String>, Failure> {
            panic!("standard input read without a -")
        };
        let tx = r#"{"typeInt":9,"from":"0x1","feePayer":"0x2"}"#;
        for name in [
            "personal_sendTransactionAsFeePayer",
            "personal_signTransactionAsFeePayer",
        ] {
            let m = spec::find(name).unwrap();
            assert_eq!(
                assemble_args(m, &a(&[tx]), no_stdin).unwrap(),
                vec![json!({"typeInt": 9, "from": "0x1", "feePayer": "0x2"})]
            );
            let e = assemble_args(m, &a(&[tx, "hunter2"]), no_stdin).unwrap_err();
            assert_eq!(e.code, 2);
            assert_eq!(
                e.message,
                format!(
                    "error: too many arguments: {name} takes <args>; its passphrase parameters \
(passphrase) are never taken from the command line: give --password-file FILE, or run on a \
terminal to be prompted"
                )
            );
            let (module, method) = name.split_once('_').unwrap();
            let mut help = command()
                .find_subcommand_mut(module)
                .unwrap()
                .find_subcommand_mut(method)
                .unwrap()
                .render_help()
                .to_string();
            help.retain(|c| c != '\n');
            assert!(
                help.contains(&format!(
                    "Usage: chainctl {module} {method} [OPTIONS] <args>"
                )),
                "{help}"
            );
        }
        // The unlocked-account twins take the object alone, and pass more arguments on.
        let m = spec::find("chain_sendTransactionAsFeePayer").unwrap();
        assert_eq!(
            assemble_args(m, &a(&[tx, "1"]), no_stdin).unwrap(),
            vec![
                json!({"typeInt": 9, "from": "0x1", "feePayer": "0x2"}),
                json!(1)
            ]
        );
    }

    #[test]
    fn key_data_dash_is_read_as_a_secret() {
        let import = spec::find("personal_importRawKey").unwrap();
        let mut reads = 0;
        let params = assemble_args(import, &["-".to_string()], |p: &ParamSpec| {
            assert_eq!(p.kind, ParamKind::KeyData);
            reads += 1;
            Ok(Zeroizing::new("aebb".to_string()))
        })
        .unwrap();
        assert_eq!((params, reads), (vec![json!("aebb")], 1));
        let replace = spec::find("personal_replaceRawKey").unwrap();
        let e = assemble_args(replace, &["-".to_string()], |_: &ParamSpec| {
            Err(Failure::usage("no input"))
        })
        .unwrap_err();
        assert_eq!((e.code, e.message.as_str()), (2, "error: no input"));
        // Elsewhere `-` is just a string.
        let modules = spec::find("rpc_modules").unwrap();
        assert_eq!(
            assemble_args(modules, &["-".to_string()], |_: &ParamSpec| unreachable!()).unwrap(),
            vec![json!("-")]
        );
    }

    #[test]
    fn malformed_endpoints_are_refused() {
        for good in [
            "http://127.0.0.1:8551",
            "HTTP://localhost:8551/",
            "http://localhost",
            "https://node.example:443/rpc",
            "ws://127.0.0.1:8552",
            "ws://[::1]:8552",
            "http://user:pw@host:1",
            "/tmp/chaind.ipc",
            "chaind.ipc",
            "./localhost:8551/x.ipc",
        ] {
            assert_eq!(check_endpoint(good), Ok(()), "{good}");
        }
        for (bad, says) in [
            ("http://", "names no host: did you mean http://HOST:PORT?"),
            ("ws://", "names no host"),
            ("http://:8551", "names no host"),
            (
                "http://127.0.0.1:notaport",
                "the port must be a number from 1 to 65535",
            ),
            ("http://127.0.0.1:", "the port must be a number"),
            ("ws://h:70000", "the port must be a number"),
            ("http://::1:8551", "an IPv6 address goes in brackets"),
            ("wss://x", "wss://) are not supported"),
            (
                "ftp://h:1",
                "unknown scheme ftp://, did you mean http://HOST:PORT?",
            ),
            ("localhost:8551", "did you mean http://localhost:8551?"),
            ("127.0.0.1:8551", "did you mean http://127.0.0.1:8551?"),
            ("", "the endpoint is empty"),
        ] {
            let e = check_endpoint(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn unused_password_files_are_bad_usage() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("pw");
        std::fs::write(&f, "x\n").unwrap();
        let unlock = spec::find("personal_unlockAccount").unwrap();
        let mut params = vec![json!("0x1"), json!("given")];
        let e = fill(
            Some(unlock),
            unlock.name,
            &mut params,
            &mut Secrets::new(vec![f.clone()]),
            "-",
        )
        .unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("1 --password-file given, 0 used"),
            "{}",
            e.message
        );
        let e = fill(
            None,
            "foo_bar",
            &mut vec![],
            &mut Secrets::new(vec![f.clone()]),
            "-",
        )
        .unwrap_err();
        assert_eq!(e.code, 2);
        let mut params = vec![json!("0x1"), Value::Null];
        fill(
            Some(unlock),
            unlock.name,
            &mut params,
            &mut Secrets::new(vec![f]),
            "-",
        )
        .unwrap();
        assert_eq!(params, vec![json!("0x1"), json!("x")]);
    }

    #[test]
    fn endpoints() {
        assert_eq!(
            resolve_endpoint(Some("ws://h:1"), Some(Path::new("/d"))),
            "ws://h:1"
        );
        assert_eq!(
            resolve_endpoint(None, Some(Path::new("/d"))),
            "/d/chaind.ipc"
        );
        let default = resolve_endpoint(None, None);
        let ipc = crate::datadir::default_datadir().join("chaind.ipc");
        if ipc.exists() {
            assert_eq!(default, ipc.display().to_string());
        } else {
            assert_eq!(default, FALLBACK_ENDPOINT);
        }
        assert_eq!(
            history_path(Some(Path::new("/d"))).unwrap(),
            Path::new("/d/chainctl_history")
        );
    }

    #[test]
    fn rpc_errors_print_code_and_message() {
        let f = Failure::from(ClientError::Rpc {
            code: -32601,
            message: "the method foo_bar does not exist/is not available".into(),
            data: None,
        });
        // An unknown method is bad usage; other errors of the node are failures.
        assert_eq!(
            (f.code, f.message.as_str()),
            (
                2,
                "error -32601: the method foo_bar does not exist/is not available"
            )
        );
        let f = Failure::from(ClientError::Rpc {
            code: -32000,
            message: "could not decrypt key with given password".into(),
            data: None,
        });
        assert_eq!(f.code, 1);
        let f = explain(
            ClientError::Unreachable {
                endpoint: FALLBACK_ENDPOINT.into(),
                detail: "refused".into(),
            },
            FALLBACK_ENDPOINT,
            true,
        );
        assert_eq!(f.code, 1);
        assert!(f.message.starts_with("error: cannot reach the node at http://localhost:8551: refused (and there is no IPC socket at "), "{}", f.message);
    }
}
