//! `chain-keytool`: offline keystore work. The clap definition (also the source of
//! `man/chain-keytool.1`) and the behaviour of every command live here; the binary only
//! calls [`main`].

use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, CommandFactory, Parser, Subcommand};
use serde::Serialize;
use zeroize::Zeroizing;

use crate::crypto::{self, Address};
use crate::datadir;
use crate::keystore::{self, keydata, KeyData, Keystore, ScryptParams};
use crate::passphrase::{self, PassphraseError};

/// Offline keystore tool: create, import and replace keys, list accounts, sign and recover
/// messages. Works on the keystore directory that chaind uses, with or without a running node.
#[derive(Debug, Parser)]
#[command(name = "chain-keytool", version, max_term_width = 100)]
#[command(
    after_help = "Exit codes: 0 success; 1 the operation failed (wrong passphrase, unknown \
account, duplicate import, unreadable key file, no keystore directory for list, sign or \
replace-raw); 2 bad usage or bad input (malformed key data, \
address, message or signature; missing password file)."
)]
pub struct Cli {
    /// Data directory; the keystore is DIR/keystore [default: the per-user data dir of chaind]
    #[arg(long, value_name = "DIR", global = true)]
    pub datadir: Option<PathBuf>,
    /// Keystore directory, overriding the one under the data directory
    #[arg(long, value_name = "DIR", global = true)]
    pub keystore: Option<PathBuf>,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args)]
pub struct KdfChoice {
    /// Encrypt with the light scrypt parameters (N=4096, p=6: fast, less protection) instead
    /// of the standard ones (N=262144, p=1)
    #[arg(long)]
    pub light: bool,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Create a new random key and print its address
    New {
        /// Read the passphrase from the first line of FILE (default: prompt on the terminal)
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        #[command(flatten)]
        kdf: KdfChoice,
    },
    /// Import a raw private key and print its address; refuses an address already present
    #[command(name = "import-raw")]
    ImportRaw {
        /// Read the passphrase from the first line of FILE (default: prompt on the terminal)
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        #[command(flatten)]
        kdf: KdfChoice,
        /// 64 hex digits (no 0x), or the wallet-key form <64 hex>0x00<0x-address>;
        /// `-` reads it from standard input, which keeps it out of the process list
        #[arg(value_name = "KEYDATA")]
        keydata: KeyDataArg,
    },
    /// Replace the key of an existing account, in place (personal_replaceRawKey)
    #[command(name = "replace-raw")]
    ReplaceRaw {
        /// File whose first line is the account's current passphrase
        #[arg(long, value_name = "FILE")]
        old_password_file: Option<PathBuf>,
        /// File whose first line is the passphrase for the new key
        #[arg(long, value_name = "FILE")]
        new_password_file: Option<PathBuf>,
        #[command(flatten)]
        kdf: KdfChoice,
        /// The new key, in either form of import-raw (`-` reads standard input); its address
        /// (the key's own, or the wallet key's) names the account to replace
        #[arg(value_name = "KEYDATA")]
        keydata: KeyDataArg,
    },
    /// List the accounts of the keystore, one address per line, sorted by key-file URL; a
    /// keystore directory that does not exist is an error (new and import-raw create it)
    List {
        /// Print the wallet objects of personal_listWallets as JSON
        #[arg(long)]
        json: bool,
    },
    /// Sign a message as personal_sign does; prints 0x + 130 hex digits (r, s, v = 27/28)
    Sign {
        /// The account to sign with (0x + 40 hex digits)
        #[arg(long, value_name = "ADDR")]
        address: String,
        /// Read the passphrase from the first line of FILE (default: prompt on the terminal)
        #[arg(long, value_name = "FILE")]
        password_file: Option<PathBuf>,
        /// Take MESSAGE as plain UTF-8 text instead of 0x-hex bytes
        #[arg(long)]
        text: bool,
        /// The message: 0x-prefixed hex bytes (`0x` is the empty message), or text with --text
        #[arg(value_name = "MESSAGE", allow_hyphen_values = true)]
        message: String,
    },
    /// Print the address that produced a personal_sign signature (personal_ecRecover)
    Recover {
        /// Take MESSAGE as plain UTF-8 text instead of 0x-hex bytes
        #[arg(long)]
        text: bool,
        /// The signed message: 0x-prefixed hex bytes, or text with --text
        #[arg(value_name = "MESSAGE", allow_hyphen_values = true)]
        message: String,
        /// The signature: 0x + 130 hex digits
        #[arg(value_name = "SIGNATURE")]
        signature: String,
    },
}

/// The KEYDATA argument: kept in a zeroizing buffer and never shown by `Debug`.
#[derive(Clone)]
pub struct KeyDataArg(Zeroizing<String>);

impl std::str::FromStr for KeyDataArg {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<KeyDataArg, Self::Err> {
        Ok(KeyDataArg(Zeroizing::new(s.to_string())))
    }
}

impl std::fmt::Debug for KeyDataArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("KeyDataArg(<redacted>)")
    }
}

/// A failed command: the message for stderr and the exit code (1 failed, 2 bad input).
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    fn bad_input(message: impl Into<String>) -> Failure {
        Failure {
            code: 2,
            message: message.into(),
        }
    }
    fn failed(message: impl Into<String>) -> Failure {
        Failure {
            code: 1,
            message: message.into(),
        }
    }
}

impl From<keystore::Error> for Failure {
    fn from(e: keystore::Error) -> Failure {
        Failure {
            code: if e.is_bad_input() { 2 } else { 1 },
            message: e.to_string(),
        }
    }
}

impl From<PassphraseError> for Failure {
    fn from(e: PassphraseError) -> Failure {
        Failure::bad_input(e.to_string())
    }
}

impl From<crypto::CryptoError> for Failure {
    fn from(e: crypto::CryptoError) -> Failure {
        Failure::bad_input(e.to_string())
    }
}

/// The clap command, for `--help` and the man page.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Runs `chain-keytool` with the process's arguments and returns its exit code.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    let result = run(cli, &mut out).and_then(|()| {
        out.flush()
            .map_err(|e| Failure::failed(format!("cannot write output: {e}")))
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            drop(out);
            eprintln!("error: {}", f.message);
            ExitCode::from(f.code)
        }
    }
}

fn scrypt_of(kdf: &KdfChoice) -> ScryptParams {
    if kdf.light {
        ScryptParams::LIGHT
    } else {
        ScryptParams::STANDARD
    }
}

/// Key data from the argument, or from standard input for `-` (one trailing line ending
/// removed). Kept in a zeroizing buffer.
fn read_keydata(arg: KeyDataArg) -> Result<Zeroizing<String>, Failure> {
    let arg = arg.0;
    if arg.as_str() != "-" {
        return Ok(arg);
    }
    Ok(passphrase::secret_from_stdin("key data", "Key data: ")?)
}

/// The key data of a KEYDATA argument, parsed.
fn keydata_of(arg: KeyDataArg) -> Result<KeyData, Failure> {
    let raw = read_keydata(arg)?;
    Ok(keydata::parse(&raw)?)
}

/// The passphrase from `--password-file`, else from a prompt (asked twice when `confirm`).
fn passphrase_of(
    password_file: Option<&Path>,
    confirm: bool,
) -> Result<Zeroizing<String>, Failure> {
    Ok(passphrase::obtain(
        password_file,
        "--password-file",
        "Passphrase: ",
        confirm,
    )?)
}

/// A message as personal_sign takes it: 0x-prefixed hex bytes, or UTF-8 text with `--text`.
pub fn parse_message(s: &str, text: bool) -> Result<Vec<u8>, String> {
    if text {
        return Ok(s.as_bytes().to_vec());
    }
    crypto::decode_hex0x(s).map_err(|e| format!("invalid message: {e}"))
}

#[derive(Serialize)]
struct WalletJson<'a> {
    url: &'a str,
    status: &'static str,
    accounts: [AccountJson<'a>; 1],
}

#[derive(Serialize)]
struct AccountJson<'a> {
    address: String,
    url: &'a str,
}

/// Fails (code 1) unless `dir` is a directory that can be read: `keystore directory DIR does
/// not exist ...`, or `cannot read keystore directory DIR: <why>`.
fn keystore_must_exist(dir: &Path) -> Result<(), Failure> {
    match std::fs::read_dir(dir) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(Failure::failed(format!(
            "keystore directory {} does not exist (chain-keytool new or import-raw creates it)",
            dir.display()
        ))),
        Err(e) => Err(Failure::failed(format!(
            "cannot read keystore directory {}: {e}",
            dir.display()
        ))),
    }
}

/// Runs one parsed command, writing its result to `out`.
pub fn run(cli: Cli, out: &mut impl Write) -> Result<(), Failure> {
    let dir = datadir::keystore_dir(cli.datadir.as_deref(), cli.keystore.as_deref());
    let open = |kdf: Option<&KdfChoice>| -> Result<Keystore, Failure> {
        let ks = Keystore::open(&dir)?;
        Ok(match kdf {
            Some(k) => ks.with_scrypt(scrypt_of(k)),
            None => ks,
        })
    };
    // The commands that read accounts need the directory: a wrong path is said, not listed
    // as an empty keystore. The ones that write a key create it.
    let existing = || -> Result<Keystore, Failure> {
        keystore_must_exist(&dir)?;
        open(None)
    };
    let werr = |e: io::Error| Failure::failed(format!("cannot write output: {e}"));
    match cli.command {
        Command::New { password_file, kdf } => {
            let ks = open(Some(&kdf))?;
            let pass = passphrase_of(password_file.as_deref(), true)?;
            let acct = ks.new_account(&pass)?;
            writeln!(out, "{}", acct.address).map_err(werr)?;
        }
        Command::ImportRaw {
            password_file,
            kdf,
            keydata,
        } => {
            let ks = open(Some(&kdf))?;
            let kd = keydata_of(keydata)?;
            let pass = passphrase_of(password_file.as_deref(), true)?;
            // The keystore refuses a duplicate itself, before scrypt and again under its lock.
            let acct = ks.import(&kd, &pass)?;
            writeln!(out, "{}", acct.address).map_err(werr)?;
        }
        Command::ReplaceRaw {
            old_password_file,
            new_password_file,
            kdf,
            keydata,
        } => {
            keystore_must_exist(&dir)?;
            let ks = open(Some(&kdf))?;
            let kd = keydata_of(keydata)?;
            let old = passphrase::obtain(
                old_password_file.as_deref(),
                "--old-password-file",
                "Current passphrase: ",
                false,
            )?;
            let new = passphrase::obtain(
                new_password_file.as_deref(),
                "--new-password-file",
                "New passphrase: ",
                true,
            )?;
            let acct = ks.replace(&kd, &old, &new)?;
            writeln!(out, "{}", acct.address).map_err(werr)?;
        }
        Command::List { json } => {
            let ks = existing()?;
            let idx = ks.refreshed_index();
            if json {
                let accounts = idx.accounts();
                drop(idx);
                let urls: Vec<String> = accounts.iter().map(|a| a.url()).collect();
                let wallets: Vec<WalletJson> = accounts
                    .iter()
                    .zip(&urls)
                    .map(|(a, url)| WalletJson {
                        url,
                        status: "Locked",
                        accounts: [AccountJson {
                            address: a.address.to_string(),
                            url,
                        }],
                    })
                    .collect();
                serde_json::to_writer(&mut *out, &wallets)
                    .map_err(|e| Failure::failed(e.to_string()))?;
                writeln!(out).map_err(werr)?;
            } else {
                // One buffer for the whole listing: 100,000 lines without an allocation each.
                let mut buf = Vec::with_capacity(idx.len() * 43);
                for a in idx.addresses() {
                    a.write_hex0x(&mut buf);
                    buf.push(b'\n');
                }
                drop(idx);
                out.write_all(&buf).map_err(werr)?;
            }
        }
        Command::Sign {
            address,
            password_file,
            text,
            message,
        } => {
            let address: Address = address
                .parse()
                .map_err(|e| Failure::bad_input(format!("invalid address: {e}")))?;
            let message = parse_message(&message, text).map_err(Failure::bad_input)?;
            let ks = existing()?;
            // One look at the index, before the prompt: an unknown account is said at once.
            let path = ks.find(address).map_err(|e| match e {
                keystore::Error::NoKey => keystore::Error::UnknownAccount,
                other => other,
            })?;
            let pass = passphrase_of(password_file.as_deref(), false)?;
            let key = keystore::load_key_file(&path, address, &pass)?;
            let sig = crypto::sign_message(&key, &message);
            writeln!(out, "{}", crypto::to_hex0x(&sig)).map_err(werr)?;
        }
        Command::Recover {
            text,
            message,
            signature,
        } => {
            let message = parse_message(&message, text).map_err(Failure::bad_input)?;
            let sig = crypto::decode_hex0x(&signature)
                .map_err(|e| Failure::bad_input(format!("invalid signature: {e}")))?;
            let address = crypto::recover_message_signer(&message, &sig)?;
            writeln!(out, "{address}").map_err(werr)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_never_shows_key_data() {
        let key = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
        let cli = Cli::try_parse_from(["chain-keytool", "import-raw", key]).unwrap();
        let shown = format!("{cli:?}");
        assert!(!shown.contains(&key[..16]), "{shown}");
        assert!(shown.contains("redacted"), "{shown}");
    }
}
