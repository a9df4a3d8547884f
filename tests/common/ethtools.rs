//! Ethereum's client libraries for `tests/eth_tools.rs`, installed from the registries at
//! pinned versions under the target directory on first use (`<target>/eth-tools/`): ethers
//! v6 by `npm ci` of `tests/oracle/eth/package-lock.json`, web3.py by pip from
//! `tests/oracle/eth/requirements.txt` into a virtual environment. An install is redone when
//! its pin file changes. foundry's cast comes from `benches/support/foundry.rs`.
//!
//! A failed install fails the test, saying why; `ETH_TOOLS_SKIP=1` skips these tests where
//! the registries cannot be reached.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The environment variable that skips the tests of Ethereum's tools.
pub const SKIP: &str = "ETH_TOOLS_SKIP";

/// Whether `ETH_TOOLS_SKIP=1` is set; says so on stderr when it is.
pub fn skipped() -> bool {
    let skip = std::env::var(SKIP).is_ok_and(|v| v == "1");
    if skip {
        eprintln!("skipped: {SKIP}=1");
    }
    skip
}

/// `tests/oracle/eth/NAME`.
pub fn oracle_file(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/oracle/eth")
        .join(name)
}

/// `<target>/eth-tools/NAME`.
fn tools_dir(name: &str) -> PathBuf {
    // <target>/release/chaind -> <target>
    let target = super::chaind_bin()
        .parent()
        .and_then(Path::parent)
        .unwrap()
        .to_path_buf();
    target.join("eth-tools").join(name)
}

/// Runs `cmd`, panicking with its output and the way to skip when it fails.
#[track_caller]
pub fn must_run(what: &str, cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e} (set {SKIP}=1 to skip)"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {cmd:?}\n{}{}\nThese tests install Ethereum's tools from npm and PyPI; set {SKIP}=1 to skip them where the registries cannot be reached.",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
}

/// `dir`, made by `install` unless `dir/.installed` holds `pin` (the content of the pin
/// file) already; an install interrupted half way is started again from nothing.
fn installed(dir: PathBuf, pin: &str, install: impl FnOnce(&Path)) -> PathBuf {
    let stamp = dir.join(".installed");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == pin) {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    install(&dir);
    std::fs::write(&stamp, pin).unwrap();
    dir
}

/// The `node_modules` directory holding ethers at the version of
/// `tests/oracle/eth/package-lock.json` (for `NODE_PATH`).
pub fn ethers() -> PathBuf {
    let lock = std::fs::read_to_string(oracle_file("package-lock.json")).unwrap();
    let dir = installed(tools_dir("ethers"), &lock, |dir| {
        for f in ["package.json", "package-lock.json"] {
            std::fs::copy(oracle_file(f), dir.join(f)).unwrap();
        }
        eprintln!("installing ethers from npm into {}", dir.display());
        must_run(
            "npm ci (ethers)",
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund", "--prefix"])
                .arg(dir),
        );
    });
    dir.join("node_modules")
}

/// The Python of a virtual environment holding web3.py and its dependencies at the
/// versions of `tests/oracle/eth/requirements.txt`.
pub fn web3_python() -> PathBuf {
    let reqs = std::fs::read_to_string(oracle_file("requirements.txt")).unwrap();
    let dir = installed(tools_dir("web3py"), &reqs, |dir| {
        eprintln!("installing web3.py from PyPI into {}", dir.display());
        must_run(
            "python3 -m venv",
            Command::new("python3").args(["-m", "venv"]).arg(dir),
        );
        must_run(
            "pip install (web3.py)",
            Command::new(dir.join("bin/python"))
                .args([
                    "-m",
                    "pip",
                    "install",
                    "--quiet",
                    "--disable-pip-version-check",
                    "-r",
                ])
                .arg(oracle_file("requirements.txt")),
        );
    });
    dir.join("bin/python")
}
