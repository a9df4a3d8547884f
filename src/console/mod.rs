//! The node console: `module.method(args)` lines ([`parse`]), the secrets a call leaves out,
//! and the interactive loop of `chainctl attach` with line editing, history and tab completion
//! ([`complete`]). A line names the JSON-RPC method `module_method`; its secret parameters
//! (from the method table, [`crate::api::spec::methods`]) that are missing or `null` are
//! read without echo: passphrases from a password file or the prompt, key data from the
//! prompt.

pub mod complete;
pub mod help;
pub mod parse;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::Value;
use zeroize::Zeroizing;

use crate::api::spec;
use crate::api::{MethodSpec, ParamKind, ParamSpec};
use crate::passphrase::{self, PassphraseError};
use crate::rpc::client::{is_local, Client, ClientError, EndpointKind};

pub use parse::{parse_line, ConsoleCall, SyntaxError};

/// Where the secrets a call leaves out come from: a passphrase from the next
/// `--password-file` (one per passphrase, in the order of the method's parameters), else a
/// no-echo prompt on the terminal; key data from a no-echo prompt only.
#[derive(Debug, Default)]
pub struct Secrets {
    files: Vec<PathBuf>,
    used: usize,
}

impl Secrets {
    pub fn new(files: Vec<PathBuf>) -> Secrets {
        Secrets { files, used: 0 }
    }

    /// Whether any password file was given.
    pub fn has_files(&self) -> bool {
        !self.files.is_empty()
    }

    /// How many password files were given.
    pub fn count(&self) -> usize {
        self.files.len()
    }

    /// How many password files no passphrase has been read from yet.
    pub fn unused(&self) -> usize {
        self.files.len() - self.used
    }

    /// The value of the secret `param`: for a passphrase the next unused file, else a prompt
    /// when stdin is a terminal (asked twice for a passphrase that will encrypt a key file);
    /// for key data a prompt. Fails when neither can give it.
    fn next(&mut self, param: &ParamSpec) -> Result<Zeroizing<String>, PassphraseError> {
        if param.kind == ParamKind::KeyData {
            if !std::io::stdin().is_terminal() {
                return Err(PassphraseError::NoKeyData);
            }
            return passphrase::prompt("Key data: ");
        }
        let file = self.files.get(self.used);
        if file.is_some() {
            self.used += 1;
        }
        passphrase::obtain(
            file.map(PathBuf::as_path),
            "--password-file",
            &prompt_text(param.name),
            param.kind == ParamKind::NewPassphrase,
        )
    }
}

/// `Old passphrase: ` for `oldPassphrase`: the parameter name in words.
fn prompt_text(name: &str) -> String {
    let mut words = String::new();
    for (i, c) in name.chars().enumerate() {
        if i == 0 {
            words.push(c.to_ascii_uppercase());
        } else if c.is_ascii_uppercase() {
            words.push(' ');
            words.push(c.to_ascii_lowercase());
        } else {
            words.push(c);
        }
    }
    format!("{words}: ")
}

/// Fills the secret parameters of `method` (passphrases, key data) that `args` gives as
/// `null`, or leaves out when every parameter before them is given (a required one, or an
/// optional passphrase while a password file is still unused), from `source`. Fails when a
/// secret is needed and neither a file nor a terminal can give it.
pub fn fill_secrets(
    method: &MethodSpec,
    args: &mut Vec<Value>,
    source: &mut Secrets,
) -> Result<(), PassphraseError> {
    for (i, param) in method.params.iter().enumerate() {
        if !param.kind.is_secret() {
            continue;
        }
        let wanted = match args.get(i) {
            Some(v) => v.is_null(),
            None => {
                i == args.len()
                    && (!param.optional
                        || (param.kind.is_passphrase() && source.used < source.files.len()))
            }
        };
        if !wanted {
            continue;
        }
        let secret = source.next(param)?;
        let value = Value::String(secret.as_str().to_string());
        if i < args.len() {
            args[i] = value;
        } else {
            args.push(value);
        }
    }
    Ok(())
}

/// Whether `call` carries a secret as a literal: a passphrase or raw key data that is not
/// `null` (such a line stays out of the history).
fn carries_secret(call: &ConsoleCall) -> bool {
    let Some(method) = spec::find(&call.rpc_method()) else {
        return false;
    };
    method
        .params
        .iter()
        .zip(&call.args)
        .any(|(p, v)| p.kind.is_secret() && !v.is_null())
}

/// Whether `v` may stand in the place of `param` without being a secret out of place: `null`,
/// or a value of the parameter's kind (an address for an address, 0x-hex for bytes, a number
/// for an integer, a bool for a bool; anything for a string, an object or any value). A
/// secret's own place is judged by [`carries_secret`].
fn fits(param: &ParamSpec, v: &Value) -> bool {
    match (param.kind, v) {
        (_, Value::Null) => true,
        (ParamKind::Address, Value::String(s)) => s.parse::<crate::crypto::Address>().is_ok(),
        (ParamKind::Bytes, Value::String(s)) => crate::crypto::decode_hex0x(s).is_ok(),
        (ParamKind::Hash, Value::String(s)) => {
            crate::crypto::decode_hex0x(s).is_ok_and(|b| b.len() == 32)
        }
        (ParamKind::Integer, v) => v.is_number(),
        (ParamKind::Bool, v) => v.is_boolean(),
        (ParamKind::Address | ParamKind::Bytes | ParamKind::Hash, _) => false,
        _ => true,
    }
}

/// Whether a console line may be written to the history file: only a call of a method the
/// table knows, with no secret (passphrase, key data) written out, no more arguments than the
/// method takes, and every argument of its parameter's kind. Anything else may hold a secret
/// in a place we cannot tell, so it is left out: a line that does not parse, a mistyped
/// method name (`personal.unlockAcount("0x..", "pass", 60)`), or a passphrase typed where the
/// address goes (`personal.unlockAccount("pass")`).
pub fn kept_in_history(line: &str) -> bool {
    let Ok(call) = parse_line(line) else {
        return false;
    };
    let Some(method) = spec::find(&call.rpc_method()) else {
        return false;
    };
    call.args.len() <= method.params.len()
        && !carries_secret(&call)
        && method
            .params
            .iter()
            .zip(&call.args)
            .all(|(p, v)| fits(p, v))
}

/// Why a console line gave no result.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error(transparent)]
    Syntax(#[from] SyntaxError),
    #[error("{method}: {source}")]
    Secret {
        method: String,
        source: PassphraseError,
    },
    #[error(transparent)]
    Client(#[from] ClientError),
    /// A subscription asked of an HTTP endpoint, which cannot carry notifications.
    #[error("{0} needs a WebSocket or IPC endpoint (ws://HOST:PORT or the path of the IPC socket): HTTP cannot carry notifications")]
    NeedsStream(String),
    /// A path parameter that cannot be made absolute.
    #[error("{0}")]
    Path(String),
    /// Writing the output failed (other than its reader going away).
    #[error("cannot write output: {0}")]
    Output(std::io::Error),
}

/// Whether `name` makes a subscription (`chain_subscribe`): its notifications are streamed.
pub fn is_subscription(name: &str) -> bool {
    name.ends_with("_subscribe")
}

/// Makes every relative path parameter of `method` in `params` absolute against this
/// process's working directory when `endpoint` is a node on this machine ([`is_local`]); to
/// another machine paths go as given, for the node to resolve against its own working
/// directory. Fails when the working directory cannot be read.
pub fn resolve_paths(
    method: &MethodSpec,
    params: &mut [Value],
    endpoint: &str,
) -> Result<(), LineError> {
    if !is_local(endpoint) {
        return Ok(());
    }
    for (p, v) in method.params.iter().zip(params.iter_mut()) {
        if p.kind != ParamKind::Path {
            continue;
        }
        if let Value::String(s) = v {
            if !s.is_empty() && Path::new(s.as_str()).is_relative() {
                let abs = std::path::absolute(s.as_str()).map_err(|e| {
                    LineError::Path(format!(
                        "{}: cannot make {s} absolute against the working directory: {e}",
                        method.name
                    ))
                })?;
                *s = abs.display().to_string();
            }
        }
    }
    Ok(())
}

/// A console line parsed, its secrets filled from `source` and its paths resolved for the
/// node at `endpoint`: the method and its params.
pub fn prepare_line(
    line: &str,
    source: &mut Secrets,
    endpoint: &str,
) -> Result<(String, Vec<Value>), LineError> {
    let mut call = parse_line(line)?;
    let name = call.rpc_method();
    if let Some(method) = spec::find(&name) {
        fill_secrets(method, &mut call.args, source).map_err(|source| LineError::Secret {
            method: name.clone(),
            source,
        })?;
        resolve_paths(method, &mut call.args, endpoint)?;
    }
    Ok((name, call.args))
}

/// How a subscription stream ended without error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamEnd {
    /// `stop` was set (ctrl-c).
    Stopped,
    /// The output's reader went away (`| head -1`).
    OutputClosed,
}

/// Subscribes on `client` with `method` (`chain_subscribe`) and `params`, and writes each
/// notification's `result` to `out` as one line of compact JSON, flushed, until `stop` is set
/// or `out`'s reader goes away; then unsubscribes. Fails on an HTTP endpoint (before
/// sending anything), when the node refuses the subscription, when the connection breaks,
/// or when the output cannot be written.
pub fn stream(
    client: &mut Client,
    method: &str,
    params: Vec<Value>,
    out: &mut dyn Write,
    stop: &AtomicBool,
) -> Result<StreamEnd, LineError> {
    if client.kind() == EndpointKind::Http {
        return Err(LineError::NeedsStream(method.to_string()));
    }
    let id = client.call(method, params)?;
    let unsubscribe = method.replace("_subscribe", "_unsubscribe");
    let end = loop {
        if stop.load(Ordering::Relaxed) {
            break StreamEnd::Stopped;
        }
        let Some(n) = client.next_notification(Duration::from_millis(100))? else {
            continue;
        };
        if n["params"]["subscription"] != id {
            continue;
        }
        let line = format!("{}\n", n["params"]["result"]);
        match out.write_all(line.as_bytes()).and_then(|()| out.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => break StreamEnd::OutputClosed,
            Err(e) => return Err(LineError::Output(e)),
        }
    };
    // Best effort: the node frees the subscription with the connection anyway.
    let _ = client.call(&unsubscribe, vec![id]);
    Ok(end)
}

/// Runs `f` with a flag that SIGINT (ctrl-c) sets instead of ending the process.
pub fn until_interrupted<T>(f: impl FnOnce(&AtomicBool) -> T) -> T {
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let id = signal_hook::flag::register(signal_hook::consts::SIGINT, stop.clone()).ok();
    let result = f(&stop);
    if let Some(id) = id {
        signal_hook::low_level::unregister(id);
    }
    result
}

/// A result as the console and `chainctl` print it: pretty JSON (a string stays quoted).
pub fn render(v: &Value) -> String {
    serde_json::to_string_pretty(v).expect("JSON values serialize")
}

/// Prints `e` on stderr as the console and `chainctl` do: `error CODE: MESSAGE` for an error
/// of the node, `error: MESSAGE` for anything else.
pub fn print_error(e: &dyn std::fmt::Display, rpc: bool) {
    if rpc {
        eprintln!("{e}");
    } else {
        eprintln!("error: {e}");
    }
}

/// Runs the interactive console on `client` until `exit` or end of input. History is read
/// from and written to `history` when given; secrets left out of a line come from `source`
/// (its files, then the prompt). Fails only when the node cannot be reached at the
/// start; errors of single lines are printed and the console goes on.
pub fn attach(
    mut client: Client,
    history: Option<&Path>,
    mut source: Secrets,
) -> Result<(), ClientError> {
    let modules = client.call("rpc_modules", vec![])?;
    let config = rustyline::Config::builder()
        .completion_type(rustyline::CompletionType::List)
        .auto_add_history(false)
        .build();
    let mut editor: rustyline::Editor<complete::ConsoleHelper, rustyline::history::FileHistory> =
        rustyline::Editor::with_config(config)
            .map_err(|e| ClientError::Protocol(format!("cannot open the terminal: {e}")))?;
    editor.set_helper(Some(complete::ConsoleHelper::new(spec::methods())));
    if let Some(h) = history {
        // A missing history file is the normal first run.
        let _ = editor.load_history(h);
    }
    let list = match &modules {
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| format!("{k}:{}", v.as_str().unwrap_or("?")))
            .collect::<Vec<_>>()
            .join(" "),
        other => other.to_string(),
    };
    let offered: Vec<String> = match &modules {
        Value::Object(m) => m.keys().cloned().collect(),
        _ => Vec::new(),
    };
    let mut stdout = std::io::stdout();
    // A closed standard output (the reader went away) ends the console quietly.
    let mut say = |text: &str| {
        writeln!(stdout, "{text}")
            .and_then(|()| stdout.flush())
            .is_ok()
    };
    say(&format!(
        "Welcome to the chain console!\n\nendpoint: {}\n modules: {list}\n\n\
Tab completes module and method names; help lists the modules, help MODULE a module's \
methods, help MODULE.METHOD one method's parameters and result.\n\
To exit, press ctrl-d or type exit",
        client.endpoint()
    ));
    loop {
        let line = match editor.readline("> ") {
            Ok(l) => l,
            Err(rustyline::error::ReadlineError::Interrupted) => continue,
            Err(rustyline::error::ReadlineError::Eof) => break,
            Err(e) => {
                print_error(&e, false);
                break;
            }
        };
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        if trimmed == "exit" || trimmed == "quit" {
            break;
        }
        if trimmed == "help" || trimmed.starts_with("help ") {
            match help::help(trimmed.strip_prefix("help"), &offered) {
                Ok(text) => {
                    let _ = editor.add_history_entry(trimmed);
                    if !say(&text) {
                        break;
                    }
                }
                Err(e) => print_error(&e, false),
            }
            continue;
        }
        if kept_in_history(trimmed) {
            let _ = editor.add_history_entry(trimmed);
        }
        let endpoint = client.endpoint().to_string();
        let outcome = match prepare_line(trimmed, &mut source, &endpoint) {
            Ok((name, args)) if is_subscription(&name) => {
                // Notifications until ctrl-c, then back to the prompt.
                let mut out = std::io::stdout();
                until_interrupted(|stop| stream(&mut client, &name, args, &mut out, stop))
                    .map(|_| None)
            }
            Ok((name, args)) => client.call(&name, args).map(Some).map_err(LineError::from),
            Err(e) => Err(e),
        };
        match outcome {
            Ok(Some(v)) => {
                if !say(&render(&v)) {
                    break;
                }
            }
            Ok(None) => {}
            Err(LineError::Client(e @ ClientError::Rpc { .. })) => print_error(&e, true),
            Err(e) => print_error(&e, false),
        }
    }
    if let Some(h) = history {
        if let Err(e) = editor.save_history(h) {
            eprintln!(
                "warning: cannot save the console history to {}: {e}",
                h.display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn method(name: &str) -> &'static MethodSpec {
        spec::find(name).unwrap_or_else(|| panic!("{name} is not in the table"))
    }

    fn files(dir: &Path, passes: &[&str]) -> Secrets {
        let paths = passes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let f = dir.join(format!("pw{i}"));
                std::fs::write(&f, format!("{p}\n")).unwrap();
                f
            })
            .collect();
        Secrets::new(paths)
    }

    #[test]
    fn prompts_read_as_words() {
        assert_eq!(prompt_text("passphrase"), "Passphrase: ");
        assert_eq!(prompt_text("oldPassphrase"), "Old passphrase: ");
        assert_eq!(prompt_text("password"), "Password: ");
    }

    #[test]
    fn null_and_missing_passphrases_come_from_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![json!("0xabc"), Value::Null, json!(600)];
        fill_secrets(
            method("personal_unlockAccount"),
            &mut args,
            &mut files(dir.path(), &["s3cret"]),
        )
        .unwrap();
        assert_eq!(args, vec![json!("0xabc"), json!("s3cret"), json!(600)]);

        let mut args = vec![json!("0xabc")];
        fill_secrets(
            method("personal_unlockAccount"),
            &mut args,
            &mut files(dir.path(), &["s3cret"]),
        )
        .unwrap();
        assert_eq!(args, vec![json!("0xabc"), json!("s3cret")]);

        let mut args = vec![];
        fill_secrets(
            method("personal_newAccount"),
            &mut args,
            &mut files(dir.path(), &["a b"]),
        )
        .unwrap();
        assert_eq!(args, vec![json!("a b")]);

        let mut args = vec![json!("kd")];
        fill_secrets(
            method("personal_replaceRawKey"),
            &mut args,
            &mut files(dir.path(), &["old", "new"]),
        )
        .unwrap();
        assert_eq!(args, vec![json!("kd"), json!("old"), json!("new")]);
    }

    #[test]
    fn given_passphrases_and_earlier_gaps_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut source = files(dir.path(), &["unused"]);
        let mut args = vec![json!("0xabc"), json!("given")];
        fill_secrets(method("personal_unlockAccount"), &mut args, &mut source).unwrap();
        assert_eq!(args, vec![json!("0xabc"), json!("given")]);
        // personal_sign without its account: the node reports the missing parameter.
        let mut args = vec![json!("0x68")];
        fill_secrets(method("personal_sign"), &mut args, &mut source).unwrap();
        assert_eq!(args, vec![json!("0x68")]);
        assert_eq!(source.used, 0);
    }

    #[test]
    fn an_optional_passphrase_is_filled_only_from_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut args = vec![json!("keystore://x")];
        fill_secrets(
            method("personal_openWallet"),
            &mut args,
            &mut Secrets::default(),
        )
        .unwrap();
        assert_eq!(args, vec![json!("keystore://x")]);
        fill_secrets(
            method("personal_openWallet"),
            &mut args,
            &mut files(dir.path(), &["p"]),
        )
        .unwrap();
        assert_eq!(args, vec![json!("keystore://x"), json!("p")]);
    }

    #[test]
    fn secret_lines_are_recognised() {
        let secret = |line: &str| carries_secret(&parse_line(line).unwrap());
        assert!(secret(r#"personal.unlockAccount("0x1", "pw")"#));
        assert!(secret(r#"personal.newAccount("pw")"#));
        assert!(secret("personal.importRawKey('aebb68')"));
        assert!(secret("personal.importRawKey('aebb68', null)"));
        assert!(secret("personal.replaceRawKey('aebb68', null, null)"));
        assert!(!secret(r#"personal.unlockAccount("0x1", null, 5)"#));
        assert!(!secret("personal.newAccount()"));
        assert!(!secret("personal.importRawKey(null)"));
        assert!(!secret(r#"admin.startHTTP("pw")"#));
    }

    #[test]
    fn only_known_calls_without_secrets_go_to_the_history() {
        const A: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";
        let cases = [
            // A mistyped method name: its string arguments might be secrets.
            (
                format!(r#"personal.unlockAcount("{A}", "Sup3rS3cretPass!", 60)"#),
                false,
            ),
            (
                format!(r#"personal.unlockAccount("{A}", "Sup3rS3cretPass!", 60)"#),
                false,
            ),
            ("personal.importRawKey('aebb68', null)".into(), false),
            ("this is not a call".into(), false),
            // A passphrase where the address goes, or after the last parameter.
            (
                r#"personal.unlockAccount("Sup3rS3cretPass!")"#.into(),
                false,
            ),
            (r#"personal.lockAccount("Sup3rS3cretPass!")"#.into(), false),
            (
                format!(r#"personal.lockAccount("{A}", "Sup3rS3cretPass!")"#),
                false,
            ),
            (r#"personal.sign("Sup3rS3cretPass!")"#.into(), false),
            (
                r#"admin.setMaxSubscriptionPerWSConn("Sup3rS3cretPass!")"#.into(),
                false,
            ),
            (r#"rpc.modules("Sup3rS3cretPass!")"#.into(), false),
            // Known calls keep their other arguments.
            (format!(r#"personal.unlockAccount("{A}", null, 60)"#), true),
            (format!("personal.unlockAccount('{A}')"), true),
            ("personal.importRawKey(null, null)".into(), true),
            (format!(r#"personal.sign("0x68656c6c6f", "{A}")"#), true),
            (format!("chain.getBalance('{A}', 'latest')"), true),
            ("admin.datadir()".into(), true),
            (
                r#"admin.startHTTP("127.0.0.1", 0, "", "chain,net")"#.into(),
                true,
            ),
            ("admin.setMaxSubscriptionPerWSConn(0x10)".into(), true),
        ];
        for (line, kept) in cases {
            assert_eq!(kept_in_history(&line), kept, "{line}");
        }
    }
}
