//! The node console: `module.method(args)` lines ([`parse`]), the secrets a call leaves out,
//! and the interactive loop of `chainctl attach` with line editing, history and tab completion
//! ([`complete`]). A line names the JSON-RPC method `module_method`; its secret parameters
//! (from the method table, [`crate::api::spec::methods`]) that are missing or `null` are
//! read without echo: passphrases from a password file or the prompt, key data from the
//! prompt.

pub mod complete;
pub mod parse;

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;
use zeroize::Zeroizing;

use crate::api::spec;
use crate::api::{MethodSpec, ParamKind, ParamSpec};
use crate::passphrase::{self, PassphraseError};
use crate::rpc::client::{Client, ClientError};

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
        (ParamKind::Integer, v) => v.is_number(),
        (ParamKind::Bool, v) => v.is_boolean(),
        (ParamKind::Address | ParamKind::Bytes, _) => false,
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
}

/// Parses `line`, fills its secrets from `source` and calls the method on `client`.
pub fn run_line(client: &mut Client, line: &str, source: &mut Secrets) -> Result<Value, LineError> {
    let mut call = parse_line(line)?;
    let name = call.rpc_method();
    if let Some(method) = spec::find(&name) {
        fill_secrets(method, &mut call.args, source).map_err(|source| LineError::Secret {
            method: name.clone(),
            source,
        })?;
    }
    Ok(client.call(&name, call.args)?)
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
    println!(
        "Welcome to the chain console!\n\nendpoint: {}\n modules: {list}\n",
        client.endpoint()
    );
    println!("To exit, press ctrl-d or type exit");
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
        if kept_in_history(trimmed) {
            let _ = editor.add_history_entry(trimmed);
        }
        match run_line(&mut client, trimmed, &mut source) {
            Ok(v) => println!("{}", render(&v)),
            Err(LineError::Client(e @ ClientError::Rpc { .. })) => print_error(&e, true),
            Err(e) => print_error(&e, false),
        }
        let _ = std::io::stdout().flush();
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
