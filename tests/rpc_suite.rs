//! The reference team's JSON-RPC test suite (klaytn/klaytn-rpc-tester), unmodified, against
//! this node's `chaind --dev`, over HTTP and then WebSocket: every test passes or is listed in
//! `tests/rpc-suite/known-failures.txt` with its reason (README, "The reference's test
//! suite"). The runner (`tests/rpc-suite/run.sh`) makes its own Python virtualenv; the suite
//! is read from `$RPC_TESTER_DIR`, by default `../shared/klaytn-rpc-tester` beside the
//! repository. Where neither the suite nor `python3` is present, the test says so and passes.

use std::path::PathBuf;
use std::process::Command;

#[test]
fn the_reference_suite_passes_or_lists_why_not() {
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let suite = std::env::var_os("RPC_TESTER_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo.join("../shared/klaytn-rpc-tester"));
    if !suite.join("main.py").is_file() {
        eprintln!(
            "skipped: no klaytn-rpc-tester at {} (set RPC_TESTER_DIR)",
            suite.display()
        );
        return;
    }
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: no python3 on this machine");
        return;
    }
    let out = Command::new(repo.join("tests/rpc-suite/run.sh"))
        .env("CHAIND", env!("CARGO_BIN_EXE_chaind"))
        .env("RPC_TESTER_DIR", &suite)
        .args(["--protocol", "both"])
        .output()
        .expect("tests/rpc-suite/run.sh runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    eprintln!("{text}");
    assert!(
        out.status.success(),
        "the reference suite has failures not listed in tests/rpc-suite/known-failures.txt:\n{text}"
    );
    assert!(
        text.contains("via namespace"),
        "the runner printed no counts:\n{text}"
    );
}
