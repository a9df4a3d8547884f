//! File arguments of RPC methods (`admin_importChain`, `debug_traceBlockFromFile`) name files
//! on the node's machine: a FIFO, which blocks whoever opens it for reading until a writer
//! comes, or a device, which may never end, is refused at once with a clear error; the node
//! keeps serving and stops promptly when asked. A regular file still imports.

mod common;

use std::time::{Duration, Instant};

use common::{err, ok, Ipc, Node};
use serde_json::json;

fn mkfifo(path: &std::path::Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo runs");
    assert!(status.success());
}

#[test]
fn a_fifo_or_a_device_is_refused_at_once_and_the_node_stops_promptly() {
    let mut n = Node::start(&["--dev"]);
    let mut c = Ipc::connect(n.ipc.as_ref().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("blocks.fifo");
    mkfifo(&fifo);
    let fifo_text = fifo.display().to_string();
    let head = ok(c.call("chain_blockNumber", json!([])));
    // debug_traceBlockFromFile words a file it cannot read as the reference does.
    for (method, path, prefix) in [
        ("admin_importChain", fifo_text.as_str(), ""),
        ("admin_importChain", "/dev/zero", ""),
        (
            "debug_traceBlockFromFile",
            fifo_text.as_str(),
            "could not read file: ",
        ),
        (
            "debug_traceBlockFromFile",
            "/dev/zero",
            "could not read file: ",
        ),
    ] {
        let started = Instant::now();
        let reply = c.call(method, json!([path]));
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{method}({path}) took {:?}",
            started.elapsed()
        );
        assert_eq!(
            err(reply),
            (-32000, format!("{prefix}open {path}: not a regular file")),
            "{method}"
        );
    }
    // Nothing changed, and the node serves.
    assert_eq!(ok(c.call("chain_blockNumber", json!([]))), head);
    // A regular file still opens: an empty export imports nothing and succeeds.
    let empty = dir.path().join("empty.rlp");
    std::fs::write(&empty, b"").unwrap();
    assert_eq!(
        ok(c.call("admin_importChain", json!([empty.display().to_string()]))),
        json!(true)
    );
    let started = Instant::now();
    let status = n.terminate(10).expect("chaind stops on SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
}
