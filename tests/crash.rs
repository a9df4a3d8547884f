//! Crash safety and concurrency of `chain-keytool`'s writes to the keystore.
//!
//! - `import-raw` and `replace-raw` are killed with SIGKILL at pseudo-random instants spread
//!   over the whole run of the command; after each kill the keystore must hold only whole key
//!   files (version 3 JSON, mode 0600, decrypting with the passphrase to a key we gave), the
//!   listing must match the files, and the next writer must sweep the dead writers' temporary
//!   files.
//! - Several processes import or replace at the same time; the directory lock must make the
//!   duplicate check and the compare-and-swap of a replace hold across processes.
//!
//! The delays come from a xorshift generator seeded from the clock; the seed is printed, and
//! `CRASH_SEED=<seed>` replays a run. The tests of this file run one at a time (their timing
//! matters), each in its own temporary directory.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::sync::{Mutex, MutexGuard};
use std::thread::sleep;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use chain_node::crypto::{keccak256, Address, SecretKey};
use chain_node::keystore::keyfile;

use common::{key_files, keytool, spawn_keytool, write_file};

const PASS: &str = "crash-test passphrase";
/// Kill iterations per kill test (more are added when timing left one outcome unseen).
const KILLS: usize = 40;

static SERIAL: Mutex<()> = Mutex::new(());

/// Runs the tests of this file one at a time: the kill delays are calibrated on a measured
/// run, which a sibling test hogging the CPU would make meaningless.
fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// xorshift64: deterministic delays and keys from a printed seed.
struct Rng(u64);

impl Rng {
    fn seeded(test: &str) -> Rng {
        let seed = std::env::var("CRASH_SEED")
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_nanos() as u64
            });
        eprintln!("{test}: seed {seed} (replay with CRASH_SEED={seed})");
        Rng(seed.max(1))
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// Uniform-ish in `0..=max`.
    fn up_to(&mut self, max: u64) -> u64 {
        self.next() % (max + 1)
    }

    /// A valid secp256k1 key: Keccak-256 of fresh generator output, with a leading byte
    /// below 0x80 (so below the group order) and a non-zero last byte.
    fn key(&mut self) -> SecretKey {
        let mut seed = [0u8; 16];
        seed[..8].copy_from_slice(&self.next().to_le_bytes());
        seed[8..].copy_from_slice(&self.next().to_le_bytes());
        let mut h = keccak256(&seed);
        h[0] &= 0x7f;
        h[31] |= 1;
        SecretKey::from_slice(&h).expect("scalar below the group order")
    }
}

fn key_hex(k: &SecretKey) -> String {
    hex::encode(*k.to_bytes())
}

/// The wallet-key form: `key` stored under `address`.
fn wallet_key(k: &SecretKey, address: Address) -> String {
    format!("{}0x000x{}", key_hex(k), address.to_hex())
}

/// How a process ended.
#[derive(Debug)]
struct Ended {
    /// Died of our SIGKILL (as opposed to exiting by itself before the kill).
    killed: bool,
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

fn collect(child: Child) -> Ended {
    let out = child.wait_with_output().expect("wait for chain-keytool");
    Ended {
        killed: out.status.signal() == Some(9),
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Sleeps `delay` after the spawn, then SIGKILLs the child unless it has already exited.
fn kill_after(mut child: Child, spawned: Instant, delay: Duration) -> Ended {
    if let Some(rest) = delay.checked_sub(spawned.elapsed()) {
        sleep(rest);
    }
    if child.try_wait().expect("try_wait").is_none() {
        // Child::kill sends SIGKILL on unix. The child may exit between try_wait and kill;
        // `collect` then reports its own exit status.
        let _ = child.kill();
    }
    collect(child)
}

/// Wall time of one uninterrupted `chain-keytool` run, which must succeed.
fn timed_ok(ks: &Path, args: &[&str]) -> Duration {
    let t = Instant::now();
    let r = keytool(ks, args);
    let d = t.elapsed();
    assert_eq!(r.code, 0, "chain-keytool {args:?} failed: {}", r.stderr);
    d
}

/// The median of a few timings (robust against one run slowed by a busy machine).
fn median(mut runs: Vec<Duration>) -> Duration {
    runs.sort();
    runs[runs.len() / 2]
}

/// Names of the hidden temporary files of writers in `ks`.
fn temporaries(ks: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(ks)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with('.') && n.contains(".tmp-"))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// Checks that `path` is a whole key file written by this program: `UTC--<time>--<address>`
/// name, version 3 JSON whose address matches the name, mode 0600, and that it decrypts with
/// [`PASS`]. Returns the address and the key.
fn whole_key_file(path: &Path) -> (Address, SecretKey) {
    let name = file_name(path);
    assert!(name.starts_with("UTC--"), "unexpected visible file {name}");
    let addr_hex = name.rsplit("--").next().unwrap();
    let address =
        Address::parse_lenient(addr_hex).unwrap_or_else(|| panic!("no address in name {name}"));
    let bytes = fs::read(path).unwrap_or_else(|e| panic!("read {name}: {e}"));
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
        panic!(
            "{name} is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&bytes)
        )
    });
    assert_eq!(v["version"], 3, "{name}: version");
    assert_eq!(v["address"], addr_hex, "{name}: address field");
    let mode = fs::metadata(path).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode, 0o600, "{name}: mode {mode:o}");
    let parsed = keyfile::parse(&bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(parsed.address, Some(address), "{name}: parsed address");
    let key = parsed
        .decrypt(PASS)
        .unwrap_or_else(|e| panic!("{name} does not decrypt: {e}"));
    (address, key)
}

/// `list` prints exactly `want` (as a set, each once).
fn assert_listed(ks: &Path, want: &[Address]) {
    let r = keytool(ks, &["list"]);
    assert_eq!(r.code, 0, "list failed: {}", r.stderr);
    let mut got: Vec<String> = r.stdout.lines().map(str::to_string).collect();
    got.sort();
    let mut want: Vec<String> = want.iter().map(|a| a.to_string()).collect();
    want.sort();
    assert_eq!(got, want, "list does not match the key files");
}

/// Signs through the CLI with the key of `address` and recovers the signer back.
fn assert_signs(ks: &Path, pw: &Path, address: Address) {
    let a = address.to_string();
    let s = keytool(
        ks,
        &[
            "sign",
            "--address",
            &a,
            "--password-file",
            pw.to_str().unwrap(),
            "0x00",
        ],
    );
    assert_eq!(s.code, 0, "sign failed: {}", s.stderr);
    let r = keytool(ks, &["recover", "0x00", s.stdout.trim()]);
    assert_eq!(r.code, 0, "recover failed: {}", r.stderr);
    assert_eq!(r.stdout.trim(), a);
}

/// A leftover as a writer that died after creating its temporary file would leave it.
fn plant_leftover(ks: &Path, address: Address) -> PathBuf {
    let p = ks.join(format!(
        ".UTC--2001-02-03T04-05-06.000000007Z--{}.tmp-123456789",
        address.to_hex()
    ));
    fs::write(&p, br#"{"address":"torn"#).unwrap();
    p
}

#[test]
fn import_killed_at_random_instants_leaves_only_whole_key_files() {
    let _serial = serial();
    let mut rng = Rng::seeded("import kill");
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    let pw = write_file(tmp.path(), "pw", &format!("{PASS}\n"));
    let pw_s = pw.to_str().unwrap();

    // Calibrate on a scratch keystore, so that `ks` holds only the keys of the kill loop.
    let scratch = tmp.path().join("scratch");
    let mut runs = Vec::new();
    for _ in 0..3 {
        let k = key_hex(&rng.key());
        runs.push(timed_ok(
            &scratch,
            &["import-raw", "--light", "--password-file", pw_s, &k],
        ));
    }
    let full = median(runs);
    eprintln!("import kill: an uninterrupted import takes {full:?} (median of 3)");

    let mut attempted: HashMap<Address, SecretKey> = HashMap::new();
    let (mut completed, mut interrupted, mut with_leftover, mut exited_first) =
        (0usize, 0usize, 0usize, 0usize);
    let mut i = 0;
    // Extra rounds (at most 2x) only while one of the two outcomes has not been seen yet; they
    // aim their delays at the missing outcome.
    while i < KILLS || (i < 3 * KILLS && (completed == 0 || interrupted == 0)) {
        let full_us = full.as_micros() as u64;
        let delay_us = if i < KILLS {
            rng.up_to(full_us * 12 / 10)
        } else if completed == 0 {
            full_us * (2 + (i - KILLS) as u64 / 4) + rng.up_to(full_us)
        } else {
            rng.up_to(full_us / 3)
        };
        let key = rng.key();
        let address = key.address();
        assert!(
            attempted.insert(address, key.clone()).is_none(),
            "generator repeated a key"
        );
        let k = key_hex(&key);
        let spawned = Instant::now();
        let child = spawn_keytool(&ks, &["import-raw", "--light", "--password-file", pw_s, &k]);
        let end = kill_after(child, spawned, Duration::from_micros(delay_us));
        if !end.killed {
            exited_first += 1;
            assert_eq!(
                end.code,
                Some(0),
                "import {i} exited by itself but failed: {}",
                end.stderr
            );
            assert_eq!(end.stdout.trim(), address.to_string());
        }
        let files: Vec<PathBuf> = key_files(&ks)
            .into_iter()
            .filter(|p| file_name(p).ends_with(&address.to_hex()))
            .collect();
        assert!(
            files.len() <= 1,
            "import {i} left several files for one key: {files:?}"
        );
        if files.is_empty() {
            assert!(end.killed, "import {i} succeeded but wrote no file");
            interrupted += 1;
        } else {
            let (a, got) = whole_key_file(&files[0]);
            assert_eq!(a, address);
            assert_eq!(
                *got.to_bytes(),
                *key.to_bytes(),
                "import {i} stored another key"
            );
            completed += 1;
        }
        if !temporaries(&ks).is_empty() {
            with_leftover += 1;
        }
        i += 1;
    }
    eprintln!(
        "import kill: {i} runs: {completed} imported ({exited_first} before the kill), {interrupted} \
         interrupted; a dead writer's temporary file was present after {with_leftover} kills"
    );
    assert!(
        completed > 0,
        "no import ever completed: kills all came too early"
    );
    assert!(
        interrupted > 0,
        "no kill ever interrupted an import: kills all came too late"
    );

    // Every visible file is whole, holds a key we imported, under its own address, once.
    let files = key_files(&ks);
    assert_eq!(files.len(), completed, "visible files: {files:?}");
    let mut addresses = Vec::new();
    for f in &files {
        let (a, key) = whole_key_file(f);
        let want = attempted
            .get(&a)
            .unwrap_or_else(|| panic!("{} holds an address never imported", f.display()));
        assert_eq!(*key.to_bytes(), *want.to_bytes());
        assert_eq!(key.address(), a);
        addresses.push(a);
    }
    assert_eq!(
        addresses.iter().collect::<BTreeSet<_>>().len(),
        addresses.len(),
        "an address has two files"
    );
    assert_listed(&ks, &addresses);

    // The next writer sweeps every leftover, the dead writers' and one planted for certain.
    let last = rng.key();
    let planted = plant_leftover(&ks, last.address());
    let r = keytool(
        &ks,
        &[
            "import-raw",
            "--light",
            "--password-file",
            pw_s,
            &key_hex(&last),
        ],
    );
    assert_eq!(r.code, 0, "import after the kills failed: {}", r.stderr);
    assert!(!planted.exists(), "the planted leftover was not swept");
    assert_eq!(
        temporaries(&ks),
        Vec::<String>::new(),
        "temporary files left after a normal import"
    );
    addresses.push(last.address());
    let files = key_files(&ks);
    assert_eq!(files.len(), addresses.len());
    for f in &files {
        whole_key_file(f);
    }
    assert_listed(&ks, &addresses);
    assert_signs(&ks, &pw, last.address());
    assert_signs(&ks, &pw, addresses[0]);
}

#[test]
fn replace_killed_at_random_instants_keeps_one_whole_file_with_the_old_or_new_key() {
    let _serial = serial();
    let mut rng = Rng::seeded("replace kill");
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    let pw = write_file(tmp.path(), "pw", &format!("{PASS}\n"));
    let pw_s = pw.to_str().unwrap();

    // One account whose key alternates between `a` (its own key) and `b`.
    let a = rng.key();
    let b = rng.key();
    let address = a.address();
    let r = keytool(
        &ks,
        &[
            "import-raw",
            "--light",
            "--password-file",
            pw_s,
            &key_hex(&a),
        ],
    );
    assert_eq!(r.code, 0, "import failed: {}", r.stderr);
    let files = key_files(&ks);
    assert_eq!(files.len(), 1);
    let path = files[0].clone();
    let keydata = |k: &SecretKey| wallet_key(k, address);
    let replace_args = |kd: &str| -> Vec<String> {
        [
            "replace-raw",
            "--light",
            "--old-password-file",
            pw_s,
            "--new-password-file",
            pw_s,
            kd,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let other = |k: &SecretKey| {
        if *k.to_bytes() == *a.to_bytes() {
            b.clone()
        } else {
            a.clone()
        }
    };

    // Calibrate: three uninterrupted replaces (a -> b -> a -> b).
    let mut current = a.clone();
    let mut runs = Vec::new();
    for _ in 0..3 {
        let next = other(&current);
        let args = replace_args(&keydata(&next));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        runs.push(timed_ok(&ks, &args));
        let (_, got) = whole_key_file(&path);
        assert_eq!(
            *got.to_bytes(),
            *next.to_bytes(),
            "uninterrupted replace did not store the new key"
        );
        current = next;
    }
    let full = median(runs);
    eprintln!("replace kill: an uninterrupted replace takes {full:?} (median of 3)");

    let (mut replaced, mut kept, mut with_leftover) = (0usize, 0usize, 0usize);
    let mut i = 0;
    while i < KILLS || (i < 3 * KILLS && (replaced == 0 || kept == 0)) {
        let full_us = full.as_micros() as u64;
        let delay_us = if i < KILLS {
            rng.up_to(full_us * 12 / 10)
        } else if replaced == 0 {
            full_us * (2 + (i - KILLS) as u64 / 4) + rng.up_to(full_us)
        } else {
            rng.up_to(full_us / 3)
        };
        let next = other(&current);
        let args = replace_args(&keydata(&next));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let spawned = Instant::now();
        let child = spawn_keytool(&ks, &args);
        let end = kill_after(child, spawned, Duration::from_micros(delay_us));
        if !end.killed {
            assert_eq!(
                end.code,
                Some(0),
                "replace {i} exited by itself but failed: {}",
                end.stderr
            );
        }
        // Exactly the one file, under the same name, whole, holding the old or the new key.
        assert_eq!(
            key_files(&ks),
            vec![path.clone()],
            "replace {i} changed the visible files"
        );
        let (got_addr, got) = whole_key_file(&path);
        assert_eq!(got_addr, address);
        if *got.to_bytes() == *next.to_bytes() {
            replaced += 1;
        } else {
            assert_eq!(
                *got.to_bytes(),
                *current.to_bytes(),
                "replace {i}: the file holds neither key"
            );
            assert!(
                end.killed,
                "replace {i} reported success but the old key is still there"
            );
            kept += 1;
        }
        if !temporaries(&ks).is_empty() {
            with_leftover += 1;
        }
        current = got;
        i += 1;
    }
    eprintln!(
        "replace kill: {i} runs: {replaced} replaced, {kept} interrupted; a dead writer's \
         temporary file was present after {with_leftover} kills"
    );
    assert!(
        replaced > 0,
        "no replace ever completed: kills all came too early"
    );
    assert!(
        kept > 0,
        "no kill ever interrupted a replace: kills all came too late"
    );

    // At the end the file is whole and usable; the next replace sweeps the leftovers.
    let planted = plant_leftover(&ks, address);
    let next = other(&current);
    let args = replace_args(&keydata(&next));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let r = keytool(&ks, &args);
    assert_eq!(r.code, 0, "replace after the kills failed: {}", r.stderr);
    assert_eq!(r.stdout.trim(), address.to_string());
    assert!(!planted.exists(), "the planted leftover was not swept");
    assert_eq!(
        temporaries(&ks),
        Vec::<String>::new(),
        "temporary files left after a normal replace"
    );
    assert_eq!(key_files(&ks), vec![path.clone()]);
    let (_, got) = whole_key_file(&path);
    assert_eq!(*got.to_bytes(), *next.to_bytes());
    assert_listed(&ks, &[address]);
    // The account signs with the key it now holds (for key b, not the address's own key, the
    // recovered signer is b's address; for key a it is the account address).
    let s = keytool(
        &ks,
        &[
            "sign",
            "--address",
            &address.to_string(),
            "--password-file",
            pw_s,
            "0x00",
        ],
    );
    assert_eq!(s.code, 0, "sign failed: {}", s.stderr);
    let r = keytool(&ks, &["recover", "0x00", s.stdout.trim()]);
    assert_eq!(r.code, 0, "recover failed: {}", r.stderr);
    assert_eq!(r.stdout.trim(), next.address().to_string());
}

#[test]
fn concurrent_imports_of_one_key_admit_exactly_one() {
    let _serial = serial();
    let mut rng = Rng::seeded("concurrent same-key imports");
    for round in 0..5 {
        let tmp = tempfile::tempdir().unwrap();
        let ks = tmp.path().join("keystore");
        let pw = write_file(tmp.path(), "pw", &format!("{PASS}\n"));
        let key = rng.key();
        let k = key_hex(&key);
        let children: Vec<Child> = (0..4)
            .map(|_| {
                spawn_keytool(
                    &ks,
                    &[
                        "import-raw",
                        "--light",
                        "--password-file",
                        pw.to_str().unwrap(),
                        &k,
                    ],
                )
            })
            .collect();
        let ends: Vec<Ended> = children.into_iter().map(collect).collect();
        let winners: Vec<&Ended> = ends.iter().filter(|e| e.code == Some(0)).collect();
        assert_eq!(
            winners.len(),
            1,
            "round {round}: {} imports of one key succeeded: {ends:?}",
            winners.len()
        );
        assert_eq!(winners[0].stdout.trim(), key.address().to_string());
        for e in ends.iter().filter(|e| e.code != Some(0)) {
            assert_eq!(e.code, Some(1), "round {round}: {e:?}");
            assert_eq!(e.stderr, "error: account already exists\n", "round {round}");
            assert_eq!(e.stdout, "");
        }
        let files = key_files(&ks);
        assert_eq!(files.len(), 1, "round {round}: {files:?}");
        let (a, got) = whole_key_file(&files[0]);
        assert_eq!(a, key.address());
        assert_eq!(*got.to_bytes(), *key.to_bytes());
        assert_eq!(temporaries(&ks), Vec::<String>::new());
        assert_listed(&ks, &[a]);
    }
}

#[test]
fn concurrent_imports_of_different_keys_all_succeed() {
    let _serial = serial();
    let mut rng = Rng::seeded("concurrent different-key imports");
    for round in 0..2 {
        let tmp = tempfile::tempdir().unwrap();
        let ks = tmp.path().join("keystore");
        let pw = write_file(tmp.path(), "pw", &format!("{PASS}\n"));
        let keys: Vec<SecretKey> = (0..8).map(|_| rng.key()).collect();
        let children: Vec<Child> = keys
            .iter()
            .map(|k| {
                spawn_keytool(
                    &ks,
                    &[
                        "import-raw",
                        "--light",
                        "--password-file",
                        pw.to_str().unwrap(),
                        &key_hex(k),
                    ],
                )
            })
            .collect();
        let ends: Vec<Ended> = children.into_iter().map(collect).collect();
        for (k, e) in keys.iter().zip(&ends) {
            assert_eq!(
                e.code,
                Some(0),
                "round {round}: import of {} failed: {}",
                k.address(),
                e.stderr
            );
            assert_eq!(e.stdout.trim(), k.address().to_string());
        }
        let files = key_files(&ks);
        assert_eq!(files.len(), 8, "round {round}: {files:?}");
        let mut stored: HashMap<Address, SecretKey> = HashMap::new();
        for f in &files {
            let (a, got) = whole_key_file(f);
            assert!(
                stored.insert(a, got).is_none(),
                "round {round}: two files for {a}"
            );
        }
        for k in &keys {
            let got = stored
                .get(&k.address())
                .unwrap_or_else(|| panic!("round {round}: no file for {}", k.address()));
            assert_eq!(*got.to_bytes(), *k.to_bytes());
        }
        assert_eq!(temporaries(&ks), Vec::<String>::new());
        let addresses: Vec<Address> = keys.iter().map(SecretKey::address).collect();
        assert_listed(&ks, &addresses);
    }
}

#[test]
fn concurrent_replaces_of_one_account_end_with_a_key_a_winner_wrote() {
    let _serial = serial();
    let mut rng = Rng::seeded("concurrent replaces");
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    let pw = write_file(tmp.path(), "pw", &format!("{PASS}\n"));
    let pw_s = pw.to_str().unwrap();
    let first = rng.key();
    let address = first.address();
    let r = keytool(
        &ks,
        &[
            "import-raw",
            "--light",
            "--password-file",
            pw_s,
            &key_hex(&first),
        ],
    );
    assert_eq!(r.code, 0, "import failed: {}", r.stderr);
    let path = key_files(&ks)[0].clone();
    let replace = |k: &SecretKey| -> Vec<String> {
        let kd = wallet_key(k, address);
        [
            "replace-raw",
            "--light",
            "--old-password-file",
            pw_s,
            "--new-password-file",
            pw_s,
            &kd,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    };
    let spawn_replace = |k: &SecretKey| {
        let args = replace(k);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        spawn_keytool(&ks, &args)
    };
    // One uninterrupted replace, to scale the stagger between the two processes.
    let warm = rng.key();
    let args = replace(&warm);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let full = timed_ok(&ks, &args);

    let (mut both, mut conflicts) = (0usize, 0usize);
    for round in 0..8 {
        let new_keys = [rng.key(), rng.key()];
        // Half the rounds start both at once (both read the same file before either writes);
        // the others start the second a random time (up to 1.5 runs) after the first.
        let stagger = if round % 2 == 0 {
            Duration::ZERO
        } else {
            Duration::from_micros(rng.up_to(full.as_micros() as u64 * 3 / 2))
        };
        let first_child = spawn_replace(&new_keys[0]);
        sleep(stagger);
        let children = vec![first_child, spawn_replace(&new_keys[1])];
        let ends: Vec<Ended> = children.into_iter().map(collect).collect();
        let mut written = Vec::new();
        for (k, e) in new_keys.iter().zip(&ends) {
            if e.code == Some(0) {
                assert_eq!(e.stdout.trim(), address.to_string());
                written.push(k);
            } else {
                assert_eq!(e.code, Some(1), "round {round}: {e:?}");
                assert!(
                    e.stderr.starts_with("error: key file ")
                        && e.stderr.contains(
                            "changed while it was being replaced; nothing was written, try again"
                        ),
                    "round {round}: unexpected failure: {}",
                    e.stderr
                );
            }
        }
        assert!(
            !written.is_empty(),
            "round {round}: neither replace succeeded: {ends:?}"
        );
        if written.len() == 2 {
            both += 1;
        } else {
            conflicts += 1;
        }
        assert_eq!(key_files(&ks), vec![path.clone()], "round {round}");
        let (a, got) = whole_key_file(&path);
        assert_eq!(a, address);
        assert!(
            written.iter().any(|k| *k.to_bytes() == *got.to_bytes()),
            "round {round}: the file holds a key no successful replace wrote ({} succeeded)",
            written.len()
        );
        assert_eq!(temporaries(&ks), Vec::<String>::new());
        assert_listed(&ks, &[address]);
    }
    eprintln!("concurrent replaces: 8 rounds: both succeeded in {both}, one refused (changed) in {conflicts}");
}
