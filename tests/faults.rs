//! Fault injection through the real `chaind`:
//!
//! - SIGKILL at pseudo-random instants of `chaind import`, `chaind export`, a state
//!   migration and the trie-node cache's save: afterwards the chain database opens at a
//!   consistent head (a block of the source chain, its state readable and what its blocks
//!   made it), no export file is half-written, and the node serves; the interrupted work
//!   then completes.
//! - A full disk (a small tmpfs this test mounts; it needs root, as CI has): sealing fails
//!   with a clear error, no accepted transaction is lost, RPC keeps answering, a key cannot be
//!   made and leaves nothing behind, and once space returns the node seals everything.
//!
//! Killed key imports and replaces are tests/crash.rs; a node killed while sealing is
//! tests/chain_dev.rs. The instants come from a xorshift generator seeded from the clock; the
//! seed is printed, and `FAULT_SEED=<seed>` replays a run.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};
use common::{http_args, http_call, ok, Node};
use serde_json::{json, Value};

/// The tests here time their kills: one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

struct Rng(u64);

impl Rng {
    fn seeded(test: &str) -> Rng {
        let seed = std::env::var("FAULT_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
                    | 1
            });
        eprintln!("{test}: FAULT_SEED={seed}");
        Rng(seed)
    }

    fn up_to(&mut self, max: Duration) -> Duration {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        max.mul_f64((self.0 % 10_000) as f64 / 10_000.0)
    }
}

const BLOCKS: u64 = 1600;
const PER_BLOCK: u64 = 3;

/// A chain of [`BLOCKS`] blocks of [`PER_BLOCK`] transfers each from the genesis sender to
/// numbered accounts, built in process and exported: its genesis file, genesis, export file
/// and the hash of every block.
struct Source {
    genesis_file: PathBuf,
    genesis: Genesis,
    file: PathBuf,
    hashes: Vec<[u8; 32]>,
}

fn recipient(i: u64) -> Address {
    let mut a = [0x77u8; 20];
    a[12..].copy_from_slice(&(i % 97).to_be_bytes());
    Address(a)
}

fn source_chain(dir: &Path) -> Source {
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let (genesis_file, genesis) = common::funded_genesis(dir, validator.address(), 1000);
    let built = Chain::open(&dir.join("built"), &genesis).unwrap();
    let sender = common::genesis_sender();
    let mut hashes = vec![built.head_hash()];
    let mut nonce = 0;
    for _ in 0..BLOCKS {
        for _ in 0..PER_BLOCK {
            let tx = common::transfer_tx(&sender, nonce, recipient(nonce), 1, common::PRICE, 1000);
            built.submit(tx).unwrap();
            nonce += 1;
        }
        built.seal(&validator).unwrap().unwrap();
        hashes.push(built.head_hash());
    }
    let file = dir.join("source.rlp");
    let stop = std::sync::atomic::AtomicBool::new(false);
    chain_node::chain::export::export(&built, &file, None, None, &stop, &mut |_, _| {}).unwrap();
    Source {
        genesis_file,
        genesis,
        file,
        hashes,
    }
}

/// Opens the chain database of `datadir` in process: its head must be a block of `src`, the
/// sender's nonce at the head what the head's blocks sent, and a recipient's balance what
/// they paid it. The head's number.
#[track_caller]
fn assert_consistent(datadir: &Path, src: &Source, when: &str) -> u64 {
    let chain = Chain::open(&datadir.join("chaindata"), &src.genesis)
        .unwrap_or_else(|e| panic!("{when}: the chain database does not open: {e}"));
    let head = chain.head_number();
    assert!(head <= BLOCKS, "{when}: head {head}");
    assert_eq!(
        chain.head_hash(),
        src.hashes[head as usize],
        "{when}: head {head} is not the source's block"
    );
    let sent = head * PER_BLOCK;
    let sender = chain
        .account(&common::genesis_sender().address(), None)
        .unwrap()
        .unwrap_or_default();
    assert_eq!(
        sender.nonce, sent,
        "{when}: the sender's nonce at head {head}"
    );
    let paid = (0..sent).filter(|i| recipient(*i) == recipient(0)).count();
    let got = chain
        .account(&recipient(0), None)
        .unwrap()
        .map(|a| a.balance)
        .unwrap_or_default();
    assert_eq!(
        got,
        common::u256(paid as u128),
        "{when}: a recipient's balance at head {head}"
    );
    head
}

fn chaind(datadir: &Path, args: &[&std::ffi::OsStr]) -> Command {
    let mut c = Command::new(common::chaind_bin());
    c.arg("--datadir")
        .arg(datadir)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

/// Runs `cmd` and SIGKILLs it `after` its start unless it ended first; whether it was killed.
fn kill_after(mut cmd: Command, after: Duration) -> bool {
    let mut child = cmd.spawn().unwrap();
    let deadline = Instant::now() + after;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "ended by itself but failed: {status}");
            return false;
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let status = child.wait().unwrap();
            return status.code().is_none();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// How long `cmd` takes to succeed.
fn timed(mut cmd: Command) -> Duration {
    let t = Instant::now();
    let status = cmd.status().unwrap();
    assert!(status.success(), "{status}");
    t.elapsed()
}

fn os(s: &str) -> &std::ffi::OsStr {
    std::ffi::OsStr::new(s)
}

/// `chaind import` and `chaind export` killed at random instants: each kill leaves the chain
/// at a block of the source with its state, and no export file at all or a whole one; the
/// next import goes on from there and ends at the source's head.
#[test]
fn import_and_export_killed_at_random_instants() {
    let _one = serial();
    let mut rng = Rng::seeded("import_and_export_killed_at_random_instants");
    let dir = tempfile::tempdir().unwrap();
    let src = source_chain(dir.path());
    let init = |name: &str| {
        let dd = dir.path().join(name);
        common::chaind_init(&dd, &src.genesis_file);
        dd
    };
    let import = |dd: &Path| chaind(dd, &[os("import"), src.file.as_os_str()]);
    let whole = timed(import(&init("timing")));

    // Each kill interrupts the import where the last one stopped; a chain that reached the
    // source's head is set aside for a fresh one.
    let mut dd = init("dd-0");
    let mut heads = Vec::new();
    for round in 0..16 {
        let killed = kill_after(import(&dd), rng.up_to(whole));
        let head = assert_consistent(&dd, &src, &format!("import round {round}"));
        heads.push((killed, head));
        if head == BLOCKS {
            dd = init(&format!("dd-{}", round + 1));
        }
    }
    eprintln!("(killed, head) after each import: {heads:?}");
    assert!(
        heads.iter().any(|(killed, head)| *killed && *head < BLOCKS),
        "no kill came before the import's end: {heads:?}"
    );
    let status = import(&dd).status().unwrap();
    assert!(status.success());
    assert_eq!(
        assert_consistent(&dd, &src, "after the last import"),
        BLOCKS
    );

    let out = dir.path().join("out.rlp");
    let export = || chaind(&dd, &[os("export"), out.as_os_str()]);
    let whole = timed(export());
    let expected = std::fs::read(&src.file).unwrap();
    assert_eq!(std::fs::read(&out).unwrap(), expected);
    let mut killed_any = false;
    for round in 0..12 {
        std::fs::remove_file(&out).unwrap_or(());
        let killed = kill_after(export(), rng.up_to(whole.mul_f64(1.3)));
        killed_any |= killed;
        match std::fs::read(&out) {
            Ok(bytes) => assert!(bytes == expected, "export round {round}: a partial file"),
            Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::NotFound, "round {round}"),
        }
        assert_consistent(&dd, &src, &format!("export round {round}"));
    }
    assert!(killed_any, "no export was killed before its end");
}

/// A node of the source chain, on `dd` (a directory of `parent`), with admin and chain over
/// HTTP.
fn node_on(dd: tempfile::TempDir) -> Node {
    let mut args = vec!["--port", "0"];
    args.extend(http_args("admin,chain"));
    Node::start_in(dd, &args)
}

fn sigkill(mut n: Node) -> tempfile::TempDir {
    let _ = n.child.kill();
    let _ = n.child.wait();
    std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap())
}

/// A state migration and a save of the trie-node cache, each killed at random instants: the
/// node starts again at the same head with the same state (an interrupted migration
/// abandoned, a half-written cache file ignored), and both then complete.
#[test]
fn state_migration_and_cache_save_killed_at_random_instants() {
    let _one = serial();
    let mut rng = Rng::seeded("state_migration_and_cache_save_killed_at_random_instants");
    let dir = tempfile::tempdir().unwrap();
    let src = source_chain(dir.path());
    let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
    common::chaind_init(dd.path(), &src.genesis_file);
    assert!(chaind(dd.path(), &[os("import"), src.file.as_os_str()])
        .status()
        .unwrap()
        .success());
    let mut dd = Some(dd);
    let status = |n: &Node| {
        ok(http_call(
            n.http.as_ref().unwrap(),
            "admin_stateMigrationStatus",
            json!([]),
        ))
    };

    // How long a whole migration takes here.
    let n = node_on(dd.take().unwrap());
    let url = n.http.clone().unwrap();
    let t = Instant::now();
    assert_eq!(
        ok(http_call(&url, "admin_startStateMigration", json!([]))),
        Value::Null
    );
    common::wait_until("the migration to end", &n, || {
        status(&n)["isMigration"] == json!(false)
    });
    let migration = t.elapsed();
    let t = Instant::now();
    ok(http_call(&url, "admin_saveTrieNodeCacheToDisk", json!([])));
    common::wait_until("the cache to be saved", &n, || {
        n.log_text().contains("Saved the trie node cache")
    });
    let save = t.elapsed();
    dd = Some(sigkill(n));

    for round in 0..10 {
        let n = node_on(dd.take().unwrap());
        let url = n.http.clone().unwrap();
        let (method, window) = if round % 2 == 0 {
            ("admin_startStateMigration", migration)
        } else {
            ("admin_saveTrieNodeCacheToDisk", save)
        };
        ok(http_call(&url, method, json!([])));
        std::thread::sleep(rng.up_to(window.mul_f64(1.3)));
        let d = sigkill(n);
        assert_eq!(
            assert_consistent(d.path(), &src, &format!("{method} round {round}")),
            BLOCKS
        );
        dd = Some(d);
    }
    // The node serves the same chain, and both complete.
    let n = node_on(dd.take().unwrap());
    let url = n.http.clone().unwrap();
    let head = ok(http_call(
        &url,
        "chain_getBlockByNumber",
        json!(["latest", false]),
    ));
    assert_eq!(
        head["hash"],
        json!(format!("0x{}", hex::encode(src.hashes[BLOCKS as usize])))
    );
    assert_eq!(status(&n)["isMigration"], json!(false));
    assert_eq!(
        ok(http_call(&url, "admin_startStateMigration", json!([]))),
        Value::Null
    );
    common::wait_until("the migration to end", &n, || {
        status(&n)["isMigration"] == json!(false)
    });
    assert_eq!(status(&n)["err"], json!("null"));
    ok(http_call(&url, "admin_saveTrieNodeCacheToDisk", json!([])));
    common::wait_until("the cache to be saved", &n, || {
        n.log_text().contains("Saved the trie node cache")
    });
    let mut n = n;
    assert!(n.terminate(10).is_some_and(|s| s.success()));
    let d = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
    assert_eq!(assert_consistent(d.path(), &src, "at the end"), BLOCKS);
}

/// A tmpfs of a given size on a new directory, unmounted when dropped.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(kib: u64) -> SmallDisk {
        let dir = tempfile::tempdir().unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={kib}k"), "tmpfs"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "this test mounts a small tmpfs to fill: it needs root (CI runs as root): {out:?}"
        );
        SmallDisk { dir }
    }

    fn resize(&self, kib: u64) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,size={kib}k")])
            .arg(self.dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}

fn quantity(v: &Value) -> u64 {
    u64::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// The node on a disk that fills up: sealing fails with the system's words in the log (not a
/// line per attempt), every transaction accepted stays pending (none is lost), RPC answers,
/// a new key is refused with a clear error and leaves no file; once space returns the node
/// seals them all, and it restarts at the same head.
#[test]
fn a_full_disk_loses_nothing_and_the_node_recovers_when_space_returns() {
    let _one = serial();
    let disk = SmallDisk::mount(3 * 1024);
    let dd = tempfile::TempDir::new_in(disk.dir.path()).unwrap();
    let mut args = vec!["--dev", "--port", "0"];
    args.extend(http_args("personal,chain,txpool"));
    let n = Node::start_in(dd, &args);
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let key = common::dev_key(&n);
    let dev = common::dev_account(&n);
    let to = Address([0x35; 20]);

    // Transfers until sealing fails for want of space, then a few more.
    let mut sent = 0u64;
    let mut after_full = 0;
    while after_full < 200 {
        assert!(sent < 100_000, "the disk never filled: {}", n.log_text());
        let raw = common::raw_transfer(&key, sent, to, 1, common::PRICE, 1000);
        ok(call("chain_sendRawTransaction", json!([raw])));
        sent += 1;
        if after_full > 0 || (sent.is_multiple_of(100) && n.log_text().contains("Sealing failed")) {
            after_full += 1;
        }
    }
    let log = n.log_text();
    assert!(log.contains("No space left on device"), "{log}");
    let sealed = quantity(&ok(call(
        "chain_getTransactionCount",
        json!([dev, "latest"]),
    )));
    assert!(sealed < sent);
    let status = ok(call("txpool_status", json!([])));
    assert_eq!(
        quantity(&status["pending"]),
        sent - sealed,
        "every accepted transaction not sealed is pending"
    );
    // Not a line per attempt: the sealer backs off and repeats itself rarely.
    std::thread::sleep(Duration::from_secs(2));
    let failures = n.log_text().matches("Sealing failed").count();
    assert!(failures <= 3, "{failures} lines of 'Sealing failed'");

    // A new key: refused, nothing left in the keystore.
    let before = common::snapshot(&n.keystore());
    let (code, msg) = common::err(call("personal_newAccount", json!(["pw"])));
    assert_eq!(code, -32000);
    assert!(
        msg.ends_with("No space left on device (os error 28)"),
        "{msg}"
    );
    assert_eq!(common::snapshot(&n.keystore()), before);

    // Space returns: everything is sealed, in order, and new keys can be made.
    disk.resize(64 * 1024);
    common::wait_until("the pending transfers to be sealed", &n, || {
        quantity(&ok(call(
            "chain_getTransactionCount",
            json!([dev, "latest"]),
        ))) == sent
    });
    assert!(n.log_text().contains("Sealing works again"));
    let balance = ok(call(
        "chain_getBalance",
        json!([format!("0x{}", hex::encode(to.0)), "latest"]),
    ));
    assert_eq!(quantity(&balance), sent);
    ok(call("personal_newAccount", json!(["pw"])));
    let head = ok(call("chain_getBlockByNumber", json!(["latest", false])))["hash"].clone();

    let mut n = n;
    assert!(n.terminate(10).is_some_and(|s| s.success()));
    let dd = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
    drop(n);
    let n = Node::start_in(dd, &args);
    let url = n.http.clone().unwrap();
    assert_eq!(
        ok(http_call(
            &url,
            "chain_getBlockByNumber",
            json!(["latest", false])
        ))["hash"],
        head
    );
    drop(n);
    drop(disk);
}

/// `admin_importChain` of a long file stops when the node is told to stop (SIGTERM): the node
/// exits promptly and cleanly with the blocks imported so far, whole; the import then goes on
/// from there.
#[test]
fn an_rpc_import_stops_on_shutdown() {
    let _one = serial();
    let dir = tempfile::tempdir().unwrap();
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let (genesis_file, genesis) = common::funded_genesis(dir.path(), validator.address(), 1000);
    let total = 120_000;
    let file = dir.path().join("empty.rlp");
    common::write_empty_blocks(&file, &genesis, &validator, total);
    let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
    common::chaind_init(dd.path(), &genesis_file);
    let mut n = node_on(dd);
    let url = n.http.clone().unwrap();
    let importing = {
        let (url, file) = (url.clone(), file.clone());
        std::thread::spawn(move || {
            common::http_post(
                &url,
                &json!({"jsonrpc": "2.0", "id": 1, "method": "admin_importChain", "params": [file]})
                    .to_string(),
            )
        })
    };
    common::wait_until("the import to start", &n, || {
        n.log_text().contains("Imported blocks")
    });
    let asked = Instant::now();
    let status = n.terminate(10).expect("the node did not stop within 10 s");
    assert!(status.success(), "{status}");
    let took = asked.elapsed();
    assert!(took < Duration::from_secs(5), "stopping took {took:?}");
    let _ = importing.join();
    let dd = std::mem::replace(&mut n.datadir, tempfile::tempdir().unwrap());
    drop(n);
    let chain = Chain::open(&dd.path().join("chaindata"), &genesis).unwrap();
    let head = chain.head_number();
    assert!(0 < head && head < total, "head {head} of {total}");
    drop(chain);
    assert!(chaind(dd.path(), &[os("import"), file.as_os_str()])
        .status()
        .unwrap()
        .success());
    let chain = Chain::open(&dd.path().join("chaindata"), &genesis).unwrap();
    assert_eq!(chain.head_number(), total);
}
