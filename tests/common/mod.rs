//! Shared pieces of the integration tests: running the real binaries and snapshotting a
//! keystore directory byte for byte.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Path of the built `chain-keytool`.
pub fn keytool_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_chain-keytool"))
}

/// What a finished command printed and how it exited.
#[derive(Debug)]
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl From<Output> for Run {
    fn from(o: Output) -> Run {
        Run {
            code: o.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
        }
    }
}

/// Runs `chain-keytool --keystore <ks> ARGS...` with no terminal (stdin from /dev/null).
pub fn keytool(ks: &Path, args: &[&str]) -> Run {
    keytool_stdin(ks, args, None)
}

/// As [`keytool`], with `stdin` piped in when given.
pub fn keytool_stdin(ks: &Path, args: &[&str], stdin: Option<&str>) -> Run {
    let mut cmd = Command::new(keytool_bin());
    cmd.arg("--keystore").arg(ks).args(args);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    match stdin {
        None => {
            cmd.stdin(Stdio::null());
            cmd.output().expect("run chain-keytool").into()
        }
        Some(input) => {
            use std::io::Write;
            cmd.stdin(Stdio::piped());
            let mut child = cmd.spawn().expect("spawn chain-keytool");
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
            child.wait_with_output().expect("wait chain-keytool").into()
        }
    }
}

/// Every entry of a directory (recursively) with its bytes and permission bits, for
/// asserting that a failed command changed nothing. The saved index (a cache that any
/// listing may rewrite) and the lock file are left out.
pub fn snapshot(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    fn walk(base: &Path, dir: &Path, out: &mut BTreeMap<String, (Vec<u8>, u32)>) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let rel = p.strip_prefix(base).unwrap().to_string_lossy().into_owned();
            if rel == ".chain-keystore-index" || rel == ".lock" {
                continue;
            }
            let meta = fs::symlink_metadata(&p).unwrap();
            if meta.is_dir() {
                out.insert(rel.clone() + "/", (Vec::new(), meta.permissions().mode()));
                walk(base, &p, out);
            } else {
                out.insert(
                    rel,
                    (fs::read(&p).unwrap_or_default(), meta.permissions().mode()),
                );
            }
        }
    }
    walk(dir, dir, &mut out);
    out
}

/// Writes `content` to `dir/name` and returns the path (a password file, say).
pub fn write_file(dir: &Path, name: &str, content: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, content).unwrap();
    p
}

/// The visible key files of a keystore directory (names not starting with `.`), sorted.
pub fn key_files(ks: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = fs::read_dir(ks)
        .map(|rd| {
            rd.flatten()
                .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
