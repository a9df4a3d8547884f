//! Passphrases for the command-line programs: the first line of a `--password-file`, or a
//! no-echo prompt on the terminal. Never from argv. Shared by `chain-keytool` and `chainctl`.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

/// Why no passphrase could be had. All of these are bad usage (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum PassphraseError {
    #[error("cannot read password file {path}: {source}")]
    File {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("password file {0} is not valid UTF-8")]
    NotUtf8(PathBuf),
    #[error("a passphrase is needed: give {flag} FILE, or run on a terminal to be prompted")]
    NoTerminal { flag: &'static str },
    #[error("passphrases do not match")]
    Mismatch,
    #[error("cannot read the passphrase from the terminal: {0}")]
    Prompt(std::io::Error),
}

/// The first line of `path`, without its line ending (`\n` or `\r\n`).
pub fn from_file(path: &Path) -> Result<Zeroizing<String>, PassphraseError> {
    let bytes = Zeroizing::new(std::fs::read(path).map_err(|source| PassphraseError::File {
        path: path.to_path_buf(),
        source,
    })?);
    let line = bytes.split(|&b| b == b'\n').next().unwrap_or(&[]);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let s = std::str::from_utf8(line).map_err(|_| PassphraseError::NotUtf8(path.to_path_buf()))?;
    Ok(Zeroizing::new(s.to_string()))
}

/// Prompts on the terminal without echo.
pub fn prompt(text: &str) -> Result<Zeroizing<String>, PassphraseError> {
    rpassword::prompt_password(text)
        .map(Zeroizing::new)
        .map_err(PassphraseError::Prompt)
}

/// The passphrase from `file` if given, else from a prompt when stdin is a terminal (asked
/// twice when `confirm`), else an error naming `flag`.
pub fn obtain(
    file: Option<&Path>,
    flag: &'static str,
    prompt_text: &str,
    confirm: bool,
) -> Result<Zeroizing<String>, PassphraseError> {
    if let Some(f) = file {
        return from_file(f);
    }
    if !std::io::stdin().is_terminal() {
        return Err(PassphraseError::NoTerminal { flag });
    }
    let first = prompt(prompt_text)?;
    if confirm {
        let again = prompt("Repeat passphrase: ")?;
        if *again != *first {
            return Err(PassphraseError::Mismatch);
        }
    }
    Ok(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_without_its_ending() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("pw");
        for (content, want) in [
            ("abc\n", "abc"),
            ("abc\r\nsecond\n", "abc"),
            ("abc", "abc"),
            ("", ""),
            ("\n", ""),
            (" a b \n", " a b "),
        ] {
            std::fs::write(&p, content).unwrap();
            assert_eq!(from_file(&p).unwrap().as_str(), want, "{content:?}");
        }
        let missing = dir.path().join("none");
        assert!(from_file(&missing)
            .unwrap_err()
            .to_string()
            .starts_with("cannot read password file "));
    }
}
