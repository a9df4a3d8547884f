//! Passphrases for the command-line programs: the first line of a `--password-file`, or a
//! no-echo prompt on the terminal. Never from argv. Shared by `chain-keytool` and `chainctl`.

use std::io::{IsTerminal, Read};
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
    #[error("key data is needed: write it out where it is read from, or run on a terminal to be prompted")]
    NoKeyData,
    #[error("passphrases do not match")]
    Mismatch,
    #[error("cannot read the passphrase from the terminal: {0}")]
    Prompt(std::io::Error),
    #[error("cannot read {what} from standard input: {source}")]
    Stdin {
        what: &'static str,
        source: std::io::Error,
    },
    #[error("{what} on standard input is longer than {max} bytes")]
    StdinTooLong { what: &'static str, max: usize },
    #[error("cannot read {what} from standard input: stream did not contain valid UTF-8")]
    StdinNotUtf8 { what: &'static str },
}

/// Most bytes a secret read from standard input may have (key data is 64 to 110 characters).
pub const MAX_STDIN_SECRET: usize = 4096;

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

/// A secret given as `-` on the command line (key data, say): prompted for without echo as
/// `prompt_text` when stdin is a terminal, else all of standard input (at most
/// [`MAX_STDIN_SECRET`] bytes) with one trailing line ending (`\n` or `\r\n`) removed.
/// `what` names the secret in errors.
pub fn secret_from_stdin(
    what: &'static str,
    prompt_text: &str,
) -> Result<Zeroizing<String>, PassphraseError> {
    if std::io::stdin().is_terminal() {
        return prompt(prompt_text);
    }
    let mut text = stdin_text(what, MAX_STDIN_SECRET)?;
    let end = strip_line_ending_bytes(text.as_bytes()).len();
    text.truncate(end);
    Ok(text)
}

/// All of standard input, at most `max` bytes, as UTF-8 text that may hold secrets (`chainctl
/// call METHOD -` reads its params this way). `what` names the text in errors.
///
/// It is read through a duplicate of descriptor 0, not through `Stdin`, whose buffer lives as
/// long as the process and would keep a copy, and into one zeroizing buffer with room for all
/// that may come, so that no reallocation leaves a copy behind in freed memory.
pub fn stdin_text(what: &'static str, max: usize) -> Result<Zeroizing<String>, PassphraseError> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(|source| PassphraseError::Stdin { what, source })?;
    let mut buf = Zeroizing::new(Vec::with_capacity(max + 1));
    std::fs::File::from(fd)
        .take(max as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|source| PassphraseError::Stdin { what, source })?;
    if buf.len() > max {
        return Err(PassphraseError::StdinTooLong { what, max });
    }
    // `from_utf8` takes the buffer over without copying it; on failure it hands it back to
    // be wiped.
    match String::from_utf8(std::mem::take(&mut *buf)) {
        Ok(s) => Ok(Zeroizing::new(s)),
        Err(e) => {
            drop(Zeroizing::new(e.into_bytes()));
            Err(PassphraseError::StdinNotUtf8 { what })
        }
    }
}

/// `b` without one trailing `\n` or `\r\n`.
fn strip_line_ending_bytes(b: &[u8]) -> &[u8] {
    match b.strip_suffix(b"\n") {
        Some(t) => t.strip_suffix(b"\r").unwrap_or(t),
        None => b,
    }
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

    #[test]
    fn one_line_ending_is_stripped() {
        for (input, want) in [
            ("abc\n", "abc"),
            ("abc\r\n", "abc"),
            ("abc", "abc"),
            ("abc\n\n", "abc\n"),
            ("", ""),
        ] {
            assert_eq!(
                strip_line_ending_bytes(input.as_bytes()),
                want.as_bytes(),
                "{input:?}"
            );
        }
    }
}
