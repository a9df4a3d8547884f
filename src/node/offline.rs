//! The subcommands that work on a stopped node's data directory: `chaind export` (and, with
//! the chain-administration issue, `chaind import`). Each takes the data directory's lock, so
//! it refuses to run beside a node, and shows a progress bar on a terminal.

use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::{datadir, existing_genesis, Config, DataDir, StartError};
use crate::chain::Chain;

/// Opens the chain of the data directory `cfg` names, under its lock.
fn open_chain(cfg: &Config) -> Result<(Chain, datadir::DatadirLock), StartError> {
    let root = cfg.datadir.clone().unwrap_or_else(datadir::default_datadir);
    let layout = DataDir::new(&root);
    let lock = layout.lock()?;
    let genesis = existing_genesis(cfg, &layout)?.ok_or_else(|| {
        StartError::Service(format!(
            "{} holds no chain: start a node there with --dev, or run chaind init GENESIS.json",
            root.display()
        ))
    })?;
    Ok((Chain::open(&layout.chaindata(), &genesis)?, lock))
}

/// A progress bar on a terminal (standard error), else log lines.
fn progress(what: &'static str) -> impl FnMut(u64, u64) {
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "{msg} [{bar:40}] {pos}/{len} blocks ({per_sec}, {eta})",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        b.set_message(what);
        b
    });
    move |done, total| match &bar {
        Some(b) => {
            b.set_length(total);
            b.set_position(done);
            if done == total {
                b.finish();
            }
        }
        None => crate::log::info(
            what,
            &[("done", &done.to_string()), ("of", &total.to_string())],
        ),
    }
}

/// `chaind export FILE [FIRST [LAST]]`: 0, or 1 with one `error: ...` line.
pub fn export(cfg: &Config, file: &Path, first: Option<u64>, last: Option<u64>) -> i32 {
    crate::log::set_verbosity(cfg.verbosity);
    let (chain, _lock) = match open_chain(cfg) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    // Ctrl-C stops the export cleanly: its temporary file is removed.
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    match crate::chain::export::export(&chain, file, first, last, &stop, &mut progress("Exporting"))
    {
        Ok((blocks, bytes)) => {
            crate::log::info(
                "Exported blockchain",
                &[
                    ("file", &file.display().to_string()),
                    ("blocks", &blocks.to_string()),
                    ("bytes", &bytes.to_string()),
                ],
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}

/// `chaind import FILE`: 0, or 1 with one `error: ...` line (the batches before the failing
/// one stay imported).
pub fn import(cfg: &Config, file: &Path) -> i32 {
    crate::log::set_verbosity(cfg.verbosity);
    let (chain, _lock) = match open_chain(cfg) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
    let opened = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) => {
            eprintln!(
                "error: {}",
                crate::chain::export::io_error("open", file, &e)
            );
            return 1;
        }
    };
    let size = opened.metadata().map(|m| m.len()).unwrap_or(0);
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = indicatif::ProgressBar::new(size);
        b.set_style(
            indicatif::ProgressStyle::with_template(
                "Importing [{bar:40}] {bytes}/{total_bytes} ({bytes_per_sec}, {eta}) {msg}",
            )
            .expect("a valid template")
            .progress_chars("=> "),
        );
        b
    });
    let counted = match &bar {
        Some(b) => Box::new(b.wrap_read(opened)) as Box<dyn std::io::Read + Send>,
        None => Box::new(opened),
    };
    let mut reader: Box<dyn std::io::BufRead + Send> = if file.to_string_lossy().ends_with(".gz") {
        Box::new(std::io::BufReader::new(flate2::read::GzDecoder::new(
            std::io::BufReader::new(counted),
        )))
    } else {
        Box::new(std::io::BufReader::with_capacity(1 << 20, counted))
    };
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(sig, stop.clone());
    }
    let result =
        crate::chain::import::import_stream(&chain, &mut reader, &stop, &mut |so_far| match &bar {
            Some(b) => b.set_message(format!("{} new, {} known", so_far.new, so_far.known)),
            None => crate::log::info(
                "Imported blocks",
                &[
                    ("new", &so_far.new.to_string()),
                    ("known", &so_far.known.to_string()),
                ],
            ),
        });
    if let Some(b) = &bar {
        b.finish();
    }
    match result {
        Ok(done) => {
            crate::log::info(
                "Imported blockchain",
                &[
                    ("file", &file.display().to_string()),
                    ("new", &done.new.to_string()),
                    ("known", &done.known.to_string()),
                    ("head", &chain.head_number().to_string()),
                ],
            );
            0
        }
        Err(e) => {
            eprintln!("error: {e}");
            1
        }
    }
}
