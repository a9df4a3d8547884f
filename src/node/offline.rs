//! The subcommands that work on a stopped node's data directory: `chaind export` and
//! `chaind import`. Each takes the data directory's lock, so it refuses to run beside a node;
//! shows its progress in blocks (a bar on a terminal, else log lines); and on SIGINT or
//! SIGTERM says at once what it does, then stops within moments: an export removes its
//! partial file, an import stores the blocks it has checked (whole blocks; the head is the
//! last of them) and checks no more.

use std::io::{BufRead, IsTerminal};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use signal_hook::consts::{SIGINT, SIGTERM};

use super::{cache_bytes, datadir, existing_genesis, signal_name, Config, DataDir, DEV_BALANCE};
use crate::chain::export::{io_text, ExportError};
use crate::chain::genesis::Genesis;
use crate::chain::import::{Watch, STOPPED};
use crate::chain::Chain;
use crate::log;
use crate::types::block::{BftExtra, Block};

/// What `chaind import` says when the data directory has no chain and `--dev` is not given.
const IMPORT_HINT: &str = "; for a file exported from a --dev chain, chaind --dev import FILE \
writes that chain's genesis first";

/// Opens the chain of the data directory `cfg` names, under its lock; `hint` is added to the
/// error when the directory holds no chain.
fn open_chain(cfg: &Config, hint: &str) -> Result<(Chain, datadir::DatadirLock), String> {
    let root = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
    let layout = DataDir::new(&root);
    let no_chain = || {
        format!(
            "{} holds no chain: start a node there with --dev, or run chaind init GENESIS.json{hint}",
            root.display()
        )
    };
    if !root.is_dir() {
        return Err(no_chain());
    }
    let lock = layout.lock().map_err(|e| e.to_string())?;
    let genesis = existing_genesis(cfg, &layout)
        .map_err(|e| e.to_string())?
        .ok_or_else(no_chain)?;
    let chain = Chain::open_with(&layout.chaindata(), &genesis, cache_bytes(cfg))
        .map_err(|e| e.to_string())?;
    Ok((chain, lock))
}

/// What `chaind --dev import` created for a chain it started: removed again when the import
/// stores no block beyond the genesis and fails (a wrong --chainid, say, or a bad first
/// block), so that the same command, corrected, can run again.
struct Created {
    /// The data directory, when this run made it.
    root: Option<std::path::PathBuf>,
    chaindata: std::path::PathBuf,
}

impl Created {
    fn remove(self) {
        let _ = std::fs::remove_dir_all(&self.chaindata);
        if let Some(root) = self.root {
            let _ = std::fs::remove_dir_all(root);
        }
    }
}

/// The chain `chaind import` adds to: the data directory's; or, with `--dev` on a data
/// directory without a chain, the `--dev` chain that FILE starts with, whose genesis is
/// written first (as `chaind init` writes one), with what was created for it.
fn open_for_import(
    cfg: &Config,
    file: &Path,
) -> Result<(Chain, datadir::DatadirLock, Option<Created>), String> {
    if !cfg.dev {
        let (chain, lock) = open_chain(cfg, IMPORT_HINT)?;
        return Ok((chain, lock, None));
    }
    let root = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
    let layout = DataDir::new(&root);
    let mut lock = None;
    if root.is_dir() {
        let held = layout.lock().map_err(|e| e.to_string())?;
        if let Some(genesis) = existing_genesis(cfg, &layout).map_err(|e| e.to_string())? {
            let chain = Chain::open_with(&layout.chaindata(), &genesis, cache_bytes(cfg))
                .map_err(|e| e.to_string())?;
            return Ok((chain, held, None));
        }
        lock = Some(held);
    }
    // Checked before anything is created: a refused file leaves no data directory behind.
    let genesis = dev_genesis_of(cfg, file)?;
    let created_root = lock.is_none().then(|| root.clone());
    let lock = match lock {
        Some(l) => l,
        None => {
            layout.create().map_err(|e| e.to_string())?;
            layout.lock().map_err(|e| e.to_string())?
        }
    };
    let created = (!layout.chaindata().exists()).then(|| Created {
        root: created_root,
        chaindata: layout.chaindata(),
    });
    let chain = super::write_genesis(
        &layout,
        &genesis,
        genesis.to_json().as_bytes(),
        cache_bytes(cfg),
    )
    .map_err(|e| e.to_string())?;
    let hash = chain.genesis_hash().map_err(|e| e.to_string())?;
    log::info(
        "Genesis block written",
        &[
            ("hash", &format!("0x{}", hex::encode(hash))),
            ("chainid", &genesis.chain_id.to_string()),
            (
                "validator",
                &genesis.validator.map(|v| v.to_string()).unwrap_or_default(),
            ),
            ("from", &file.display().to_string()),
        ],
    );
    Ok((chain, lock, created))
}

/// The `--dev` genesis (chain id and network id from `cfg`) whose block FILE starts with:
/// the developer account its header names as validator holds the `--dev` balance. Fails,
/// saying what to do, when FILE starts with another block.
fn dev_genesis_of(cfg: &Config, file: &Path) -> Result<Genesis, String> {
    let mut r = open_blocks(file)?;
    let item = crate::chain::import::next_item(&mut r)
        .map_err(|e| format!("{}: block 0: {e}", file.display()))?
        .ok_or_else(|| format!("{}: no blocks", file.display()))?;
    let block = Block::decode(&item).map_err(|e| format!("{}: block 0: {e}", file.display()))?;
    let what_to_do = "a data directory without a chain takes only a file that starts with the \
genesis block of a --dev chain; for another chain, run chaind init GENESIS.json first";
    if block.header.number != 0 {
        return Err(format!(
            "{} starts at block {}, not at a genesis block: {what_to_do}",
            file.display(),
            block.header.number
        ));
    }
    let validators = BftExtra::decode(&block.header.extra)
        .map(|e| e.validators)
        .unwrap_or_default();
    let mut genesis = match validators.as_slice() {
        [v] => Genesis::dev(*v, DEV_BALANCE),
        _ => {
            return Err(format!(
            "{} does not start with a --dev genesis block (it names {} validators): {what_to_do}",
            file.display(),
            validators.len()
        ))
        }
    };
    genesis.chain_id = cfg.chainid;
    genesis.network_id = cfg.networkid;
    let (header, _) = crate::chain::genesis_block(&genesis).map_err(|e| e.to_string())?;
    if header.hash() != block.hash() {
        return Err(format!(
            "{} does not start with a --dev genesis block: its block 0 is 0x{}, a --dev chain of its validator {} starts with 0x{}: {what_to_do}",
            file.display(),
            hex::encode(block.hash()),
            validators[0],
            hex::encode(header.hash())
        ));
    }
    Ok(genesis)
}

/// FILE's blocks as a buffered stream (through gzip when its name ends with `.gz`).
fn open_blocks(file: &Path) -> Result<Box<dyn BufRead + Send>, String> {
    let opened = std::fs::File::open(file)
        .map_err(|e| format!("cannot open {}: {}", file.display(), io_text(&e)))?;
    Ok(if is_gzip(file) {
        Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(
            std::io::BufReader::new(opened),
        )))
    } else {
        Box::new(std::io::BufReader::with_capacity(1 << 20, opened))
    })
}

fn is_gzip(file: &Path) -> bool {
    file.to_string_lossy().ends_with(".gz")
}

/// SIGINT and SIGTERM while an offline job runs. The first is logged at once, naming the
/// signal and what happens now, and sets the stop flag the job watches; with
/// `second_ends_it`, a second one ends the process at once (exit 130).
struct Interrupts {
    stop: Arc<AtomicBool>,
    got: Arc<AtomicI32>,
    handle: signal_hook::iterator::Handle,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Interrupts {
    /// Watches from now on; `then` completes `Received SIGINT, ...`. `bar`, when shown, is
    /// cleared for the line.
    fn watch(
        then: &'static str,
        second_ends_it: bool,
        bar: Option<ProgressBar>,
    ) -> std::io::Result<Interrupts> {
        let stop = Arc::new(AtomicBool::new(false));
        if second_ends_it {
            for sig in [SIGINT, SIGTERM] {
                // Does nothing until the watcher below has set the flag.
                signal_hook::flag::register_conditional_shutdown(sig, 130, stop.clone())?;
            }
        }
        let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM])?;
        let handle = signals.handle();
        let got = Arc::new(AtomicI32::new(0));
        let thread = std::thread::Builder::new().name("signals".into()).spawn({
            let (stop, got) = (stop.clone(), got.clone());
            move || {
                if let Some(sig) = signals.forever().next() {
                    let say = || log::info(&format!("Received {}, {then}", signal_name(sig)), &[]);
                    match &bar {
                        Some(b) => b.suspend(say),
                        None => say(),
                    }
                    got.store(sig, Ordering::SeqCst);
                    // Set after the line: the job ends only once it is said.
                    stop.store(true, Ordering::SeqCst);
                }
            }
        })?;
        Ok(Interrupts {
            stop,
            got,
            handle,
            thread: Some(thread),
        })
    }

    fn stop(&self) -> &AtomicBool {
        &self.stop
    }

    /// The signal that stopped the job, if one did.
    fn received(&self) -> Option<String> {
        match self.got.load(Ordering::SeqCst) {
            0 => None,
            sig => Some(signal_name(sig)),
        }
    }
}

impl Drop for Interrupts {
    fn drop(&mut self) {
        self.handle.close();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A progress bar on standard error when it is a terminal.
fn bar(template: &str) -> Option<ProgressBar> {
    std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::no_length();
        b.set_style(style(template));
        b
    })
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template)
        .expect("a valid template")
        .progress_chars("=> ")
}

/// The blocks `chaind export` writes: as `admin_exportChain`'s range, except that a LAST past
/// the head stops at the head, with a warning that names it (what `head -n` does with a
/// shorter file); a FIRST past the head is an error that names it.
fn export_range(first: Option<u64>, last: Option<u64>, head: u64) -> Result<(u64, u64), String> {
    let (first, last) =
        crate::chain::export::range(first, last, head).map_err(|e| e.to_string())?;
    if first > head {
        return Err(format!(
            "export failed: first ({first}) is past the head block {head}"
        ));
    }
    if last > head {
        log::warn(
            "Exporting up to the head block: LAST is past it",
            &[("last", &last.to_string()), ("head", &head.to_string())],
        );
        return Ok((first, head));
    }
    Ok((first, last))
}

/// An export's failure as `chaind export` words it: the file's errors name the file.
fn export_error(e: &ExportError, file: &Path) -> String {
    match e {
        ExportError::Exists => format!(
            "cannot create {}: the file exists (export never overwrites a file)",
            file.display()
        ),
        ExportError::File { op, source, .. } => format!(
            "cannot {} {}: {}",
            if *op == "write" { "write" } else { "create" },
            file.display(),
            io_text(source)
        ),
        other => other.to_string(),
    }
}

/// `chaind export FILE [FIRST [LAST]]`: 0, or 1 with one `error: ...` line.
pub fn export(cfg: &Config, file: &Path, first: Option<u64>, last: Option<u64>) -> i32 {
    log::set_verbosity(cfg.verbosity);
    let fail = |e: String| {
        eprintln!("error: {e}");
        1
    };
    let (chain, _lock) = match open_chain(cfg, "") {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let (first, last) = match export_range(first, last, chain.head_number()) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let bar = bar("Exporting [{bar:40}] {pos}/{len} blocks ({per_sec}, {eta})");
    let interrupts = match Interrupts::watch(
        "stopping the export and removing its partial file",
        false,
        bar.clone(),
    ) {
        Ok(i) => i,
        Err(e) => return fail(format!("cannot watch for signals: {e}")),
    };
    let mut logged = None;
    let mut progress = |done: u64, total: u64| match &bar {
        Some(b) => {
            b.set_length(total);
            b.set_position(done);
        }
        // The last count comes twice: after the last segment, and once the file is whole.
        None if logged != Some(done) => {
            logged = Some(done);
            log::info(
                "Exporting",
                &[("done", &done.to_string()), ("of", &total.to_string())],
            )
        }
        None => {}
    };
    let result = crate::chain::export::export(
        &chain,
        file,
        Some(first),
        Some(last),
        interrupts.stop(),
        &mut progress,
    );
    if let Some(b) = &bar {
        b.finish();
    }
    match result {
        Ok((blocks, bytes)) => {
            log::info(
                "Exported blockchain",
                &[
                    ("file", &file.display().to_string()),
                    ("first", &first.to_string()),
                    ("last", &last.to_string()),
                    ("blocks", &blocks.to_string()),
                    ("bytes", &bytes.to_string()),
                ],
            );
            0
        }
        Err(ExportError::Stopped) => fail(format!(
            "export interrupted by {}: {} not written",
            interrupts.received().unwrap_or_else(|| "a signal".into()),
            file.display()
        )),
        Err(e) => fail(export_error(&e, file)),
    }
}

const COUNTING: &str = "Importing {pos} blocks ({per_sec}) {msg}";
const COUNTED: &str = "Importing [{bar:40}] {pos}/{len} blocks ({per_sec}, {eta}) {msg}";

/// `chaind import FILE`: 0, or 1 with one `error: ...` line (the blocks stored before a
/// failure or an interruption stay imported).
pub fn import(cfg: &Config, file: &Path) -> i32 {
    log::set_verbosity(cfg.verbosity);
    let fail = |e: String| {
        eprintln!("error: {e}");
        1
    };
    let mut reader = match open_blocks(file) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let (chain, lock, created) = match open_for_import(cfg, file) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let before = chain.head_number();
    let bar = bar(COUNTING);
    let interrupts = match Interrupts::watch(
        "stopping the import once the blocks already checked are stored (a second signal ends it at once)",
        true,
        bar.clone(),
    ) {
        Ok(i) => i,
        Err(e) => return fail(format!("cannot watch for signals: {e}")),
    };
    log::info(
        "Importing blockchain",
        &[("file", &file.display().to_string())],
    );
    // Blocks done (skipped or stored), and the file's blocks once counted (a .gz file's are
    // not: that would mean decompressing it twice).
    let done = AtomicU64::new(0);
    let total = AtomicU64::new(0);
    let finished = AtomicBool::new(false);
    // Counting goes on to the end unless the import failed or was stopped: it takes a
    // fraction of the import's time, and the last line then shows the total.
    let failed = AtomicBool::new(false);
    let result = std::thread::scope(|s| {
        if !is_gzip(file) {
            let (total, failed) = (&total, &failed);
            let _ = std::thread::Builder::new()
                .name("import-count".into())
                .spawn_scoped(s, move || {
                    let Ok(f) = std::fs::File::open(file) else {
                        return;
                    };
                    let size = f.metadata().map(|m| m.len()).unwrap_or(0);
                    let mut r = std::io::BufReader::with_capacity(1 << 20, f);
                    if let Some(n) = crate::chain::import::count_items(&mut r, size, failed) {
                        total.store(n, Ordering::Relaxed);
                    }
                });
        }
        if let Some(b) = &bar {
            let (done, total, finished) = (&done, &total, &finished);
            let _ = std::thread::Builder::new()
                .name("import-bar".into())
                .spawn_scoped(s, move || {
                    let mut counted = false;
                    while !finished.load(Ordering::Relaxed) {
                        let n = total.load(Ordering::Relaxed);
                        if n > 0 && !counted {
                            b.set_style(style(COUNTED));
                            b.set_length(n);
                            counted = true;
                        }
                        b.set_position(done.load(Ordering::Relaxed));
                        std::thread::sleep(Duration::from_millis(100));
                    }
                });
        }
        let result = crate::chain::import::import_stream_watched(
            &chain,
            &mut reader,
            Watch {
                stop: interrupts.stop(),
                done: &done,
            },
            &mut |so_far| match &bar {
                Some(b) => b.set_message(format!("{} new, {} known", so_far.new, so_far.known)),
                None => {
                    let n = total.load(Ordering::Relaxed);
                    let mut fields = vec![
                        ("new", so_far.new.to_string()),
                        ("known", so_far.known.to_string()),
                    ];
                    if n > 0 {
                        fields.push(("of", n.to_string()));
                    }
                    let fields: Vec<(&str, &str)> =
                        fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
                    log::info("Imported blocks", &fields);
                }
            },
        );
        if result.is_err() {
            failed.store(true, Ordering::Relaxed);
        }
        finished.store(true, Ordering::Relaxed);
        result
    });
    if let Some(b) = &bar {
        let n = total.load(Ordering::Relaxed);
        if n > 0 {
            b.set_style(style(COUNTED));
            b.set_length(n);
        }
        b.set_position(done.load(Ordering::Relaxed));
        b.finish();
    }
    let head = chain.head_number();
    if let (Err(_), 0, Some(created)) = (&result, head, created) {
        drop(chain);
        created.remove();
        drop(lock);
        log::info(
            "Nothing imported: the genesis block written for it is removed",
            &[],
        );
    }
    match result {
        Ok(done) => {
            log::info(
                "Imported blockchain",
                &[
                    ("file", &file.display().to_string()),
                    ("new", &done.new.to_string()),
                    ("known", &done.known.to_string()),
                    ("head", &head.to_string()),
                ],
            );
            0
        }
        Err(e) if e == STOPPED && interrupts.received().is_some() => fail(format!(
            "import interrupted by {}: {} blocks imported, the chain's head is block {head}",
            interrupts.received().unwrap_or_default(),
            head - before
        )),
        Err(e) => fail(e),
    }
}
