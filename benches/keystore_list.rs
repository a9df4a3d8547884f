//! Listing a keystore of 100,000 key files.
//!
//! The keystore is made once under `target/bench-keystore-100k` (override with the
//! environment variable `BENCH_KEYSTORE_DIR`) and reused while it holds exactly 100,000 key
//! files; making it takes about ten seconds. Every file is a copy of one real v3 key file
//! (standard scrypt parameters, written by `chain-keytool new`) with only its `address`
//! varied, since the index reads nothing else. `benches/compare.sh` makes the very same
//! directory (same names, same bytes) when it runs first.
//!
//! Measured (each a fresh `Keystore`, i.e. what a new process pays, unless said otherwise):
//! - `cold`: the saved index `.chain-keystore-index` deleted before each iteration, so every
//!   file is opened and read (from the page cache: the files stay cached between runs);
//! - `rescan_one_file_changed`: the saved index is present but one key file was added or
//!   removed since, so the directory is read and every file `stat`ed, one file read;
//! - `warm`: the saved index present and trusted (the directory unchanged for more than
//!   `RACY_WINDOW`): one `stat` and one read of the saved index;
//! - `warm_binary`: `chain-keytool --keystore DIR list > /dev/null` as a whole process (the
//!   binary is built by `cargo bench` itself, in the bench profile);
//! - `refresh_unchanged_in_process`: `Index::refresh` of an already-open index when nothing
//!   changed: one `stat` of the directory.
//!
//! Run: `cargo bench --bench keystore_list` (a few minutes on two cores), or a single one with
//! e.g. `cargo bench --bench keystore_list -- warm`.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, SystemTime};

use chain_node::keystore::index::{Index, CACHE_FILE, RACY_WINDOW};
use chain_node::keystore::Keystore;
#[path = "support/key_files.rs"]
mod key_files;

use criterion::{black_box, criterion_group, criterion_main, BatchSize, Criterion, SamplingMode};

/// Number of key files in the bench keystore.
const COUNT: usize = 100_000;

fn keystore_dir() -> PathBuf {
    match std::env::var_os("BENCH_KEYSTORE_DIR") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-keystore-100k"),
    }
}

fn count_key_files(dir: &Path) -> usize {
    match fs::read_dir(dir) {
        Ok(rd) => rd
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_str()
                    .is_some_and(|n| n.starts_with("UTC--"))
            })
            .count(),
        Err(_) => 0,
    }
}

/// Makes the 100k keystore at `dir` unless it already holds exactly [`COUNT`] key files.
/// Built in a side directory and renamed into place, so an interrupted run is not reused.
fn ensure_keystore(dir: &Path) {
    if count_key_files(dir) == COUNT {
        return;
    }
    let started = std::time::Instant::now();
    eprintln!(
        "making a keystore of {COUNT} key files in {} ...",
        dir.display()
    );
    let partial = dir.with_extension("partial");
    let _ = fs::remove_dir_all(&partial);
    fs::create_dir_all(&partial).expect("create the bench keystore");
    key_files::write_copies(&partial, COUNT);
    if dir.exists() {
        fs::remove_dir_all(dir).expect("remove the incomplete bench keystore");
    }
    fs::rename(&partial, dir).expect("move the bench keystore into place");
    eprintln!("made in {:.1} s", started.elapsed().as_secs_f64());
}

fn remove_saved_index(dir: &Path) {
    match fs::remove_file(dir.join(CACHE_FILE)) {
        Ok(()) => {}
        Err(e) if e.kind() == ErrorKind::NotFound => {}
        Err(e) => panic!("removing the saved index: {e}"),
    }
}

fn dir_age(dir: &Path) -> Duration {
    let m = fs::metadata(dir)
        .expect("stat the bench keystore")
        .modified()
        .unwrap();
    SystemTime::now().duration_since(m).unwrap_or_default()
}

/// Brings the keystore to the warm state: a saved index, trusted, matching the directory.
/// Waits until the directory's last change is more than `RACY_WINDOW` old, lists once so the
/// saved index is written with a trusted stamp, and checks that a fresh open now answers
/// without reading the directory. Saving an index that did not exist yet changes the
/// directory itself, hence the loop.
fn make_warm(dir: &Path) {
    let wait = RACY_WINDOW + Duration::from_millis(100);
    for _ in 0..5 {
        let age = dir_age(dir);
        if age < wait {
            std::thread::sleep(wait - age);
        }
        assert_eq!(Keystore::open(dir).unwrap().accounts().len(), COUNT);
        let ks = Keystore::open(dir).unwrap();
        let idx = ks.refreshed_index();
        if !idx.last.scanned && idx.len() == COUNT {
            return;
        }
    }
    panic!(
        "the saved index of {} is not trusted after 5 tries",
        dir.display()
    );
}

fn bench_list(c: &mut Criterion) {
    let dir = keystore_dir();
    ensure_keystore(&dir);
    let dir = std::path::absolute(&dir).unwrap();

    let mut g = c.benchmark_group("keystore_100k");
    g.sample_size(10);

    // (a) Cold: no saved index. About a second per iteration: ten samples of one iteration.
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(12));
    g.bench_function("cold", |b| {
        b.iter_batched(
            || remove_saved_index(&dir),
            |()| {
                let ks = Keystore::open(&dir).unwrap();
                let accounts = ks.accounts();
                assert_eq!(accounts.len(), COUNT);
                accounts
            },
            BatchSize::PerIteration,
        )
    });

    // A saved index that no longer matches the directory: one key file added or removed by
    // another process since it was saved. Every file is stat'ed; only the new one is read.
    let (extra_name, extra_body) =
        key_files::copy(COUNT, key_files::stamp(0) + Duration::from_secs(86_400));
    let extra = dir.join(extra_name);
    g.measurement_time(Duration::from_secs(8));
    let mut prepared = false;
    g.bench_function("rescan_one_file_changed", |b| {
        if !prepared {
            // Make sure a saved index exists, so that the scan only stats.
            Keystore::open(&dir).unwrap().accounts();
            prepared = true;
        }
        b.iter_batched(
            || {
                if extra.exists() {
                    fs::remove_file(&extra).unwrap();
                } else {
                    fs::write(&extra, &extra_body).unwrap();
                }
            },
            |()| {
                let ks = Keystore::open(&dir).unwrap();
                let n = {
                    let idx = ks.refreshed_index();
                    assert!(
                        idx.last.scanned && idx.last.files_read <= 1,
                        "{:?}",
                        idx.last
                    );
                    idx.len()
                };
                assert!(n == COUNT || n == COUNT + 1);
                ks.accounts()
            },
            BatchSize::PerIteration,
        )
    });
    let _ = fs::remove_file(&extra);

    // (b) Warm: a fresh Keystore each iteration, the saved index present and trusted.
    g.sampling_mode(SamplingMode::Auto);
    g.warm_up_time(Duration::from_secs(1));
    g.measurement_time(Duration::from_secs(5));
    let mut prepared = false;
    g.bench_function("warm", |b| {
        if !prepared {
            make_warm(&dir);
            prepared = true;
        }
        b.iter(|| {
            let ks = Keystore::open(&dir).unwrap();
            let accounts = ks.accounts();
            assert_eq!(accounts.len(), COUNT);
            accounts
        })
    });

    // (c) Warm, through the real binary: process start, listing, printing 100k lines.
    let exe = env!("CARGO_BIN_EXE_chain-keytool");
    let mut prepared = false;
    g.bench_function("warm_binary", |b| {
        if !prepared {
            make_warm(&dir);
            let out = Command::new(exe)
                .arg("--keystore")
                .arg(&dir)
                .arg("list")
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(out.stdout.iter().filter(|&&c| c == b'\n').count(), COUNT);
            prepared = true;
        }
        b.iter(|| {
            let status = Command::new(exe)
                .arg("--keystore")
                .arg(&dir)
                .arg("list")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        })
    });

    // (d) In-process refresh of an open index when nothing changed: one stat.
    g.sampling_mode(SamplingMode::Auto);
    g.measurement_time(Duration::from_secs(2));
    let mut idx: Option<Index> = None;
    g.bench_function("refresh_unchanged_in_process", |b| {
        let idx = idx.get_or_insert_with(|| {
            make_warm(&dir);
            let mut idx = Index::new(&dir);
            idx.refresh();
            idx.refresh();
            assert!(!idx.last.scanned);
            assert_eq!(idx.len(), COUNT);
            idx
        });
        b.iter(|| {
            idx.refresh();
            black_box(idx.last.scanned)
        })
    });
    g.finish();
}

criterion_group!(benches, bench_list);
criterion_main!(benches);
