//! anvil and cast (foundry) from npm, shared by the benchmarks that run anvil beside our node
//! (`contracts.rs`, `startup.rs`) and by `tests/eth_tools.rs` (cast): installed on first use,
//! anvil started on a free port of 127.0.0.1 and killed when dropped. The bench or test that
//! includes this file declares `mod common` (tests/common) at its root.

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The foundry release installed from npm.
pub const FOUNDRY: &str = "1.7.1";

/// anvil, killed when dropped.
pub struct Anvil {
    pub child: Child,
    /// `127.0.0.1:PORT`.
    pub addr: String,
}

impl Anvil {
    /// Starts anvil (`bin`) on a free port of 127.0.0.1 with `args`, its output into `log`,
    /// and returns at once, before it listens.
    pub fn spawn(bin: &Path, log: &Path, args: &[&str]) -> Anvil {
        // A free port: bound on port 0, then released for anvil.
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let log = std::fs::File::create(log).unwrap();
        let child = Command::new(bin)
            .args(["--host", "127.0.0.1", "--port", &port.to_string()])
            .args(args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("start anvil");
        Anvil {
            child,
            addr: format!("127.0.0.1:{port}"),
        }
    }

    /// [`Anvil::spawn`], then waits (at most 20 s) until it accepts connections.
    pub fn start(bin: &Path, log: &Path, args: &[&str]) -> Anvil {
        let anvil = Anvil::spawn(bin, log, args);
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(&anvil.addr).is_err() {
            assert!(
                Instant::now() < deadline,
                "anvil did not listen on {}",
                anvil.addr
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        anvil
    }
}

impl Drop for Anvil {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// anvil and cast from npm (`@foundry-rs/anvil-linux-amd64`, `@foundry-rs/cast-linux-amd64`,
/// version [`FOUNDRY`]), installed when missing into `<target dir>/bench-cache/foundry-<version>`
/// (or `CONTRACTS_FOUNDRY_DIR`).
pub fn foundry() -> (PathBuf, PathBuf) {
    let dir = std::env::var_os("CONTRACTS_FOUNDRY_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            // <target>/release/chaind -> <target>/bench-cache
            let target = crate::common::chaind_bin()
                .parent()
                .unwrap()
                .parent()
                .unwrap()
                .to_path_buf();
            target
                .join("bench-cache")
                .join(format!("foundry-{FOUNDRY}"))
        });
    let bin = |tool: &str| {
        dir.join(format!(
            "node_modules/@foundry-rs/{tool}-linux-amd64/bin/{tool}"
        ))
    };
    if !bin("anvil").exists() || !bin("cast").exists() {
        std::fs::create_dir_all(&dir).unwrap();
        println!(
            "installing anvil and cast {FOUNDRY} from npm into {}",
            dir.display()
        );
        let st = Command::new("npm")
            .args([
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--prefix",
            ])
            .arg(&dir)
            .arg(format!("@foundry-rs/anvil-linux-amd64@{FOUNDRY}"))
            .arg(format!("@foundry-rs/cast-linux-amd64@{FOUNDRY}"))
            .status()
            .unwrap_or_else(|e| panic!("cannot run npm to install anvil and cast: {e}"));
        assert!(
            st.success(),
            "npm install of anvil and cast {FOUNDRY} failed ({st}): the npm registry must be \
             reachable (tests/eth_tools.rs: ETH_TOOLS_SKIP=1 skips it where it is not)"
        );
    }
    (bin("anvil"), bin("cast"))
}
