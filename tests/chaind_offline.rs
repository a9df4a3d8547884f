//! `chaind export` and `chaind import` as an operator meets them, through the real binary: a
//! range past the head, errors that name the file, SIGINT during an import (said at once, a
//! prompt exit, a consistent chain after), `--dev import` into a fresh data directory, and
//! the shared options after the subcommand.

mod common;

use std::ffi::OsStr;
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::crypto::SecretKey;
use chain_node::types::block::Block;
use common::{chaind_bin, http_call, ok, Node};
use serde_json::json;

/// `chaind ARGS...` run to its end (no `--datadir` added).
fn chaind<S: AsRef<OsStr>>(args: &[S]) -> Output {
    Command::new(chaind_bin())
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// The validator of the test chains.
fn validator() -> SecretKey {
    SecretKey::from_slice(&[0x41; 32]).unwrap()
}

/// A chain's blocks as an export file holds them: block 0 and `n` hand-sealed empty blocks
/// on it, with where each block's bytes start (and, last, where the file ends).
struct Blocks {
    bytes: Vec<u8>,
    starts: Vec<usize>,
}

impl Blocks {
    fn new(genesis: &Genesis, v: &SecretKey, n: u64) -> Blocks {
        let (mut parent, _) = chain_node::chain::genesis_block(genesis).unwrap();
        let mut bytes = Vec::new();
        let mut starts = Vec::new();
        let mut add = |header: &chain_node::types::block::Header| {
            starts.push(bytes.len());
            bytes.extend(
                Block {
                    header: header.clone(),
                    transactions: Vec::new(),
                }
                .encode(),
            );
        };
        add(&parent);
        for _ in 0..n {
            let h = common::empty_block(&parent, v);
            add(&h);
            parent = h;
        }
        starts.push(bytes.len());
        Blocks { bytes, starts }
    }

    /// Blocks `a..=b` as their bytes.
    fn range(&self, a: usize, b: usize) -> &[u8] {
        &self.bytes[self.starts[a]..self.starts[b + 1]]
    }

    /// The file of blocks 1..=n, as `chaind import` takes it into an initialised chain.
    fn write_after_genesis(&self, path: &Path) {
        std::fs::write(path, &self.bytes[self.starts[1]..]).unwrap();
    }
}

/// A genesis file in `dir` (validated by [`validator`]) and a data directory `dir/NAME`
/// initialised with it by `chaind init`.
fn init_datadir(dir: &Path, name: &str) -> (PathBuf, Genesis) {
    let (file, genesis) = common::funded_genesis(dir, validator().address(), 1000);
    let dd = dir.join(name);
    common::chaind_init(&dd, &file);
    (dd, genesis)
}

/// The names in `dir`, sorted: a test can tell that nothing was left behind.
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// `export FILE 0 100` on a chain of 5 blocks writes blocks 0..5 and says that it stopped at
/// the head; a FIRST past the head is an error naming the head; the errors of the file name
/// it; nothing half-written is left.
#[test]
fn export_past_the_head_stops_there_and_errors_name_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let (dd, genesis) = init_datadir(dir.path(), "dd");
    let blocks = Blocks::new(&genesis, &validator(), 5);
    let source = dir.path().join("source.rlp");
    blocks.write_after_genesis(&source);
    let d = dd.to_str().unwrap();
    let imported = chaind(&["--datadir", d, "import", source.to_str().unwrap()]);
    assert_eq!(imported.status.code(), Some(0), "{imported:?}");

    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let path = |name: &str| out.join(name).to_str().unwrap().to_string();
    let whole = chaind(&["--datadir", d, "export", &path("a.rlp"), "0", "100"]);
    assert_eq!(whole.status.code(), Some(0), "{whole:?}");
    let log = stderr(&whole);
    assert!(
        log.lines().any(|l| l.starts_with("WARN ")
            && l.ends_with("] Exporting up to the head block: LAST is past it last=100 head=5")),
        "{log}"
    );
    assert!(
        log.contains(&format!(
            "Exported blockchain file={} first=0 last=5 blocks=6 ",
            path("a.rlp")
        )),
        "{log}"
    );
    assert_eq!(std::fs::read(path("a.rlp")).unwrap(), blocks.range(0, 5));
    let tail = chaind(&["--datadir", d, "export", &path("b.rlp"), "2", "9"]);
    assert_eq!(tail.status.code(), Some(0), "{tail:?}");
    assert_eq!(std::fs::read(path("b.rlp")).unwrap(), blocks.range(2, 5));

    // Refusals: one line each, nothing written.
    let refused = |args: &[&str], want: String| {
        let mut all = vec!["--datadir", d, "export"];
        all.extend(args);
        let r = chaind(&all);
        assert_eq!(r.status.code(), Some(1), "{args:?}: {r:?}");
        assert_eq!(stderr(&r), format!("error: {want}\n"), "{args:?}");
    };
    refused(
        &[&path("c.rlp"), "6", "100"],
        "export failed: first (6) is past the head block 5".into(),
    );
    refused(
        &[&path("c.rlp"), "3", "2"],
        "export failed: first (3) is greater than last (2)".into(),
    );
    let missing = out.join("no-such-dir").join("c.rlp");
    refused(
        &[missing.to_str().unwrap()],
        format!(
            "cannot create {}: no such file or directory",
            missing.display()
        ),
    );
    refused(
        &[&path("a.rlp")],
        format!(
            "cannot create {}: the file exists (export never overwrites a file)",
            path("a.rlp")
        ),
    );
    assert_eq!(std::fs::read(path("a.rlp")).unwrap(), blocks.range(0, 5));
    assert_eq!(names(&out), ["a.rlp", "b.rlp"]);
    let unreadable = out.join("none.rlp");
    let r = chaind(&["--datadir", d, "import", unreadable.to_str().unwrap()]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        stderr(&r),
        format!(
            "error: cannot open {}: no such file or directory\n",
            unreadable.display()
        )
    );
}

/// SIGINT while `chaind import` runs: one line says at once what happens; the import stores
/// the blocks it has checked and ends (the test waits generously and asserts no timing);
/// the chain then holds exactly the file's first blocks, a node serves them, and the same
/// import run again adds the rest.
#[test]
fn sigint_stops_an_import_and_leaves_a_consistent_chain() {
    let dir = tempfile::tempdir().unwrap();
    let (dd, genesis) = init_datadir(dir.path(), "dd");
    // Enough blocks that the import is far from done when the first batch of 2,500 is.
    let n = 20_000;
    let blocks = Blocks::new(&genesis, &validator(), n);
    let file = dir.path().join("blocks.rlp");
    blocks.write_after_genesis(&file);

    let mut child = Command::new(chaind_bin())
        .arg("--datadir")
        .arg(&dd)
        .arg("import")
        .arg(&file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let pipe = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(pipe).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let mut log = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    // The first batch imported (the file's blocks counted by then), then the signal.
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .unwrap_or_else(|_| panic!("no batch imported; log:\n{}", log.join("\n")));
        log.push(line.clone());
        if line.contains("Imported blocks new=2500 known=0") {
            break;
        }
    }
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        log.push(line);
    }
    let status = loop {
        if let Some(st) = child.try_wait().unwrap() {
            break st;
        }
        assert!(
            Instant::now() < deadline,
            "chaind import ran on after SIGINT; log:\n{}",
            log.join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = log.join("\n");
    assert_eq!(status.code(), Some(1), "{text}");
    let said = log
        .iter()
        .position(|l| {
            l.starts_with("INFO ")
                && l.ends_with("] Received SIGINT, stopping the import once the blocks already checked are stored (a second signal ends it at once)")
        })
        .unwrap_or_else(|| panic!("the signal is not said; log:\n{text}"));
    assert_eq!(
        log.iter().filter(|l| l.contains("Received SIGINT")).count(),
        1,
        "{text}"
    );
    let last = log.last().unwrap();
    let head: usize = last
        .strip_prefix("error: import interrupted by SIGINT: ")
        .and_then(|rest| rest.split_once(" blocks imported, the chain's head is block "))
        .map(|(imported, head)| {
            assert_eq!(imported, head, "{last}");
            head.parse().unwrap()
        })
        .unwrap_or_else(|| panic!("{text}"));
    assert!(said < log.len() - 1);
    assert!(
        (2500..n as usize).contains(&head),
        "the import stopped early, after the first batch: head {head}; log:\n{text}"
    );
    // The progress lines count blocks, with the file's total.
    assert!(
        log.iter()
            .any(|l| l.contains(&format!("Imported blocks new=2500 known=0 of={n}"))),
        "{text}"
    );

    // Consistent: the chain is the file's first `head` blocks, whole.
    let out = dir.path().join("after.rlp");
    let exported = chaind(&[
        OsStr::new("--datadir"),
        dd.as_os_str(),
        OsStr::new("export"),
        out.as_os_str(),
    ]);
    assert_eq!(exported.status.code(), Some(0), "{exported:?}");
    assert!(
        std::fs::read(&out).unwrap() == blocks.range(0, head),
        "the exported chain is not the file's first {head} blocks"
    );
    let dd_dir = tempfile::TempDir::new_in(dir.path()).unwrap();
    std::fs::remove_dir(dd_dir.path()).unwrap();
    std::fs::rename(&dd, dd_dir.path()).unwrap();
    let node = Node::start_in(dd_dir, &common::http_args("chain"));
    let number = ok(http_call(
        node.http.as_ref().unwrap(),
        "chain_blockNumber",
        json!([]),
    ));
    assert_eq!(number, json!(format!("0x{head:x}")));
    let dd_dir = {
        let mut node = node;
        assert!(node.terminate(20).is_some_and(|s| s.success()));
        std::mem::replace(&mut node.datadir, tempfile::tempdir().unwrap())
    };
    // The same import again adds what is missing.
    let again = chaind(&[
        OsStr::new("--datadir"),
        dd_dir.path().as_os_str(),
        OsStr::new("import"),
        file.as_os_str(),
    ]);
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    let want = format!("new={} known={head} head={n}", n as usize - head);
    assert!(stderr(&again).contains(&want), "{want}: {again:?}");
}

/// Runs `chaind ARGS...` that must end by itself within `secs`.
fn chaind_within(args: &[&OsStr], secs: u64) -> Output {
    let mut child = Command::new(chaind_bin())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(secs);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("chaind {args:?} did not end within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

/// `chaind import --dev FILE` on a data directory without a chain, FILE exported from a
/// `--dev` node: the dev genesis FILE starts with is written and the blocks imported; a node
/// serves them, and seals with `--dev` once the keystore holds the validator's key. A file
/// that does not start with a dev genesis is refused, saying what to do, and a failed
/// import leaves no data directory behind.
#[test]
fn dev_import_into_a_fresh_datadir_takes_the_dev_chain_of_the_file() {
    let dir = tempfile::tempdir().unwrap();
    // A --dev chain of three blocks, exported.
    let (source_dir, want_head, dev_key) = {
        let mut source = common::dev_http_node("chain");
        let url = source.http.clone().unwrap();
        let key = common::dev_key(&source);
        for nonce in 0..3 {
            let raw = common::raw_transfer(
                &key,
                nonce,
                chain_node::crypto::Address([0x35; 20]),
                1,
                common::PRICE,
                1000,
            );
            let hash = ok(http_call(&url, "chain_sendRawTransaction", json!([raw])));
            common::wait_receipt(&url, &hash);
        }
        let head = ok(http_call(&url, "chain_getBlockByNumber", json!(["latest"])));
        assert_eq!(head["number"], json!("0x3"));
        assert!(source.terminate(20).is_some_and(|s| s.success()));
        let d = std::mem::replace(&mut source.datadir, tempfile::tempdir().unwrap());
        (d, head["hash"].clone(), key)
    };
    let file = dir.path().join("dev.rlp.gz");
    let from_one = dir.path().join("from-one.rlp");
    for (f, range) in [(&file, &[][..]), (&from_one, &["1", "3"][..])] {
        let mut args = vec![
            OsStr::new("--datadir"),
            source_dir.path().as_os_str(),
            OsStr::new("export"),
            f.as_os_str(),
        ];
        args.extend(range.iter().map(OsStr::new));
        let r = chaind_within(&args, 60);
        assert_eq!(r.status.code(), Some(0), "{r:?}");
    }
    let developer = std::fs::read_to_string(source_dir.path().join("dev-account"))
        .unwrap()
        .trim()
        .to_string();

    // Refused: a file that starts after the genesis, and nothing is created.
    let fresh = dir.path().join("fresh");
    let refused = chaind_within(
        &[
            OsStr::new("--datadir"),
            fresh.as_os_str(),
            OsStr::new("--dev"),
            OsStr::new("import"),
            from_one.as_os_str(),
        ],
        60,
    );
    assert_eq!(refused.status.code(), Some(1));
    assert_eq!(
        stderr(&refused),
        format!(
            "error: {} starts at block 1, not at a genesis block: a data directory without a chain takes only a file that starts with the genesis block of a --dev chain; for another chain, run chaind init GENESIS.json first\n",
            from_one.display()
        )
    );
    assert!(!fresh.exists());
    // Without --dev: what to do.
    let plain = chaind_within(
        &[
            OsStr::new("--datadir"),
            fresh.as_os_str(),
            OsStr::new("import"),
            file.as_os_str(),
        ],
        60,
    );
    assert_eq!(plain.status.code(), Some(1));
    assert_eq!(
        stderr(&plain),
        format!(
            "error: {} holds no chain: start a node there with --dev, or run chaind init GENESIS.json; for a file exported from a --dev chain, chaind --dev import FILE writes that chain's genesis first\n",
            fresh.display()
        )
    );
    assert!(!fresh.exists());
    // The options after the subcommand: with another chain id the genesis matches (a
    // chain id is not part of it) but the first transaction does not; the import fails at
    // block 1 and leaves nothing, so that the right command can run next.
    let wrong = chaind_within(
        &[
            OsStr::new("import"),
            OsStr::new("--datadir"),
            fresh.as_os_str(),
            OsStr::new("--dev"),
            OsStr::new("--chainid"),
            OsStr::new("2000"),
            file.as_os_str(),
        ],
        60,
    );
    assert_eq!(wrong.status.code(), Some(1), "{wrong:?}");
    let text = stderr(&wrong);
    assert_eq!(
        text.lines().last().unwrap(),
        "error: batch 0: failed to insert: block 1: transaction 0: invalid chain id",
        "{text}"
    );
    assert!(!fresh.exists(), "{text}");

    let done = chaind_within(
        &[
            OsStr::new("import"),
            OsStr::new("--dev"),
            OsStr::new("--datadir"),
            fresh.as_os_str(),
            file.as_os_str(),
        ],
        60,
    );
    assert_eq!(done.status.code(), Some(0), "{done:?}");
    let text = stderr(&done);
    assert!(
        text.contains(&format!(
            "Genesis block written hash=0x{} chainid=1000 validator={developer} ",
            hex::encode(Block::decode(&first_block(&file)).unwrap().hash())
        )),
        "{text}"
    );
    assert!(text.contains("new=3 known=1 head=3"), "{text}");
    let fresh_dir = tempfile::TempDir::new_in(dir.path()).unwrap();
    std::fs::remove_dir(fresh_dir.path()).unwrap();
    std::fs::rename(&fresh, fresh_dir.path()).unwrap();
    let fresh = fresh_dir.path().to_path_buf();

    // Without the validator's key, --dev cannot seal there, and says why.
    let no_key = chaind_within(
        &[
            OsStr::new("--datadir"),
            fresh.as_os_str(),
            OsStr::new("--dev"),
            OsStr::new("--ipcdisable"),
            OsStr::new("--port"),
            OsStr::new("0"),
            OsStr::new("--p2paddr"),
            OsStr::new("127.0.0.1"),
        ],
        60,
    );
    assert_eq!(no_key.status.code(), Some(1), "{no_key:?}");
    assert!(
        stderr(&no_key).contains(&format!(
            "--dev: the genesis of this data directory (chaind init) names validator {developer}, whose key must be in the keystore with an empty passphrase"
        )),
        "{no_key:?}"
    );
    // With it, the node serves the chain and seals on it.
    let keystore = fresh.join("keystore");
    std::fs::create_dir_all(&keystore).unwrap();
    for f in common::key_files(&source_dir.path().join("keystore")) {
        std::fs::copy(&f, keystore.join(f.file_name().unwrap())).unwrap();
    }
    let mut args = vec!["--dev"];
    args.extend(common::http_args("chain"));
    let node = Node::start_in(fresh_dir, &args);
    let url = node.http.clone().unwrap();
    let head = ok(http_call(&url, "chain_getBlockByNumber", json!(["latest"])));
    assert_eq!(head["hash"], want_head);
    let raw = common::raw_transfer(
        &dev_key,
        3,
        chain_node::crypto::Address([0x35; 20]),
        1,
        common::PRICE,
        1000,
    );
    let hash = ok(http_call(&url, "chain_sendRawTransaction", json!([raw])));
    let receipt = common::wait_receipt(&url, &hash);
    assert_eq!(receipt["blockNumber"], json!("0x4"));
}

/// The first block of an export file (gzip or not).
fn first_block(file: &Path) -> Vec<u8> {
    let f = std::fs::File::open(file).unwrap();
    let mut r: Box<dyn BufRead> = if file.to_string_lossy().ends_with(".gz") {
        Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(f)))
    } else {
        Box::new(std::io::BufReader::new(f))
    };
    chain_node::chain::import::next_item(&mut r)
        .unwrap()
        .unwrap()
}

/// The options shared with the subcommands may follow them: `--datadir`, `--config`,
/// `--verbosity`, `--state.trie-cache-limit` (and `--dev`, `--chainid`, tested above); the
/// node's own options are refused there.
#[test]
fn shared_options_may_follow_the_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let (genesis_file, genesis) = common::funded_genesis(dir.path(), validator().address(), 1000);
    let blocks = Blocks::new(&genesis, &validator(), 3);
    let file = dir.path().join("blocks.rlp");
    blocks.write_after_genesis(&file);
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let s = |p: &Path| p.to_str().unwrap().to_string();

    // init, quiet.
    let init = chaind(&[
        "init",
        "--datadir",
        &s(&a),
        "--verbosity",
        "0",
        &s(&genesis_file),
    ]);
    assert_eq!(init.status.code(), Some(0), "{init:?}");
    assert_eq!(stderr(&init), "");
    assert!(a.join("chaindata").join("genesis.json").exists());
    // import, warnings only, without a trie-node cache.
    let import = chaind(&[
        "import",
        &s(&file),
        "--datadir",
        &s(&a),
        "--verbosity=2",
        "--state.trie-cache-limit",
        "0",
    ]);
    assert_eq!(import.status.code(), Some(0), "{import:?}");
    assert_eq!(stderr(&import), "");
    // export, the data directory from a configuration file.
    let conf = dir.path().join("chaind.conf");
    std::fs::write(&conf, format!("DATA_DIR={}\n", s(&a))).unwrap();
    let out = dir.path().join("out.rlp");
    let export = chaind(&["export", "--config", &s(&conf), &s(&out)]);
    assert_eq!(export.status.code(), Some(0), "{export:?}");
    assert_eq!(std::fs::read(&out).unwrap(), blocks.range(0, 3));
    // The other order still works.
    let init = chaind(&["--datadir", &s(&b), "init", &s(&genesis_file)]);
    assert_eq!(init.status.code(), Some(0), "{init:?}");
    // A node option after a subcommand is a usage error.
    for args in [
        vec!["export", "--rpc", &s(&out)],
        vec!["import", "--port", "0", &s(&file)],
        vec!["init", "--ws", &s(&genesis_file)],
    ] {
        let r = chaind(&args);
        assert_eq!(r.status.code(), Some(2), "{args:?}: {r:?}");
        assert!(
            stderr(&r).starts_with("error: unexpected argument '--"),
            "{args:?}: {r:?}"
        );
    }
}
