//! The trie-node cache seen from the chain: saving it to `<datadir>/fastcache` in the
//! background (`admin_saveTrieNodeCacheToDisk`, and every period through [`CacheSaver`]),
//! loading it back at start, and the numbers the admin API reports about it and about the
//! node file. The file's format is `cachefile`'s; the cache itself is `trie::cache`'s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Serialize;

use super::{cachefile, Chain};
use crate::service::{Service, Worker};

/// The saves of the trie-node cache since the node started.
#[derive(Debug, Clone, Default)]
pub struct SaveHistory {
    /// How many saves have started.
    started: u64,
    /// The last save that ended.
    last: Option<SaveOutcome>,
}

/// How one save of the trie-node cache ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SaveOutcome {
    /// Which save it was: 1 for the first since the node started.
    pub number: u64,
    /// The file it wrote (or was writing), absolute.
    pub path: PathBuf,
    /// The nodes and bytes written; 0 when it failed.
    pub nodes: u64,
    pub bytes: u64,
    /// Why it failed; `None` when the file is complete.
    pub error: Option<String>,
}

/// The trie-node cache and its saves, as `admin_trieNodeCacheStatus` answers them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CacheStatus {
    /// False when `--state.trie-cache-limit 0` disabled the cache (nothing can be saved).
    pub enabled: bool,
    /// A save is running.
    pub saving: bool,
    /// How many saves have started since the node started (the number of the latest).
    pub started: u64,
    /// The last save that ended, if any.
    pub last: Option<SaveOutcome>,
}

impl Chain {
    /// Waits for a running cache save to end.
    pub fn wait_for_cache_save(&self) {
        let saving = self
            .save_thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take();
        if let Some(t) = saving {
            let _ = t.join();
        }
    }

    /// The trie-node cache's saves: whether one runs, how many started, how the last ended.
    pub fn node_cache_status(&self) -> CacheStatus {
        // The history is read under its lock, and `saving` is cleared only after the
        // outcome is recorded: `saving` false with `last.number == started` means done.
        let h = self.saves.lock().unwrap_or_else(|p| p.into_inner()).clone();
        CacheStatus {
            enabled: self.nodes.is_enabled(),
            saving: self.saving.load(std::sync::atomic::Ordering::Acquire),
            started: h.started,
            last: h.last,
        }
    }

    /// Starts saving the trie-node cache to `<datadir>/fastcache` in the background
    /// (`trie-cache-save` thread) and returns the save's number; the outcome is logged and
    /// kept for [`Chain::node_cache_status`]. Fails when the cache is disabled or a save is
    /// running (the reference's texts).
    pub fn save_node_cache(self: &Arc<Self>, datadir: &Path) -> Result<u64, String> {
        use std::sync::atomic::Ordering;
        if !self.nodes.is_enabled() {
            return Err("trie node cache is disabled, nothing to save to file".into());
        }
        if self.saving.swap(true, Ordering::AcqRel) {
            return Err("saving trie node cache has been triggered already".into());
        }
        let number = {
            let mut h = self.saves.lock().unwrap_or_else(|p| p.into_inner());
            h.started += 1;
            h.started
        };
        let chain = self.clone();
        let datadir = std::path::absolute(datadir).unwrap_or_else(|_| datadir.to_path_buf());
        let file = datadir.join(cachefile::DIR_NAME).join(cachefile::FILE_NAME);
        let path = file.clone();
        let spawned = std::thread::Builder::new()
            .name("trie-cache-save".into())
            .spawn(move || {
                let t = std::time::Instant::now();
                let genesis = chain.genesis_hash().unwrap_or_default();
                let mut outcome = SaveOutcome {
                    number,
                    path: path.clone(),
                    nodes: 0,
                    bytes: 0,
                    error: None,
                };
                match cachefile::save_with_progress(
                    &chain.nodes,
                    &datadir,
                    &genesis,
                    &chain.stopping,
                    &chain.save_progress,
                ) {
                    Ok((nodes, bytes)) => {
                        crate::log::info(
                            "Saved the trie node cache",
                            &[
                                ("file", &path.display().to_string()),
                                ("nodes", &nodes.to_string()),
                                ("bytes", &bytes.to_string()),
                                ("elapsed", &format!("{:.3}s", t.elapsed().as_secs_f64())),
                            ],
                        );
                        (outcome.nodes, outcome.bytes) = (nodes, bytes);
                    }
                    Err(e) => {
                        crate::log::warn("Saving the trie node cache failed", &[("err", &e)]);
                        outcome.error = Some(e);
                    }
                }
                chain.saves.lock().unwrap_or_else(|p| p.into_inner()).last = Some(outcome);
                chain.saving.store(false, Ordering::Release);
            });
        match spawned {
            Ok(handle) => {
                let previous = self
                    .save_thread
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .replace(handle);
                // The previous save has ended (the flag said so): reap its thread.
                if let Some(p) = previous {
                    let _ = p.join();
                }
                Ok(number)
            }
            Err(e) => {
                let message = format!("cannot start the save: {e}");
                self.saves.lock().unwrap_or_else(|p| p.into_inner()).last = Some(SaveOutcome {
                    number,
                    path: file,
                    nodes: 0,
                    bytes: 0,
                    error: Some(message.clone()),
                });
                self.saving.store(false, Ordering::Release);
                Err(message)
            }
        }
    }

    /// Loads the trie-node cache saved in `<datadir>/fastcache`, if any; a file that is not
    /// this chain's, or not intact, is reported in the log and ignored.
    pub fn load_node_cache(&self, datadir: &Path) {
        if !self.nodes.is_enabled() {
            return;
        }
        let t = std::time::Instant::now();
        let genesis = match self.genesis_hash() {
            Ok(g) => g,
            Err(_) => return,
        };
        match cachefile::load_into(&self.nodes, datadir, &genesis) {
            Ok(None) => {}
            Ok(Some((path, count))) => {
                self.cache_loaded
                    .store(count, std::sync::atomic::Ordering::Relaxed);
                crate::log::info(
                    "Loaded the trie node cache",
                    &[
                        ("file", &path.display().to_string()),
                        ("nodes", &count.to_string()),
                        ("elapsed", &format!("{:.3}s", t.elapsed().as_secs_f64())),
                    ],
                );
            }
            Err(e) => crate::log::warn("Ignored the saved trie node cache", &[("err", &e)]),
        }
    }

    /// The node file's nodes and bytes.
    pub fn node_file_usage(&self) -> (usize, u64) {
        self.db.node_file_usage()
    }

    /// How many nodes the trie-node cache loaded from disk at start.
    pub fn node_cache_loaded(&self) -> usize {
        self.cache_loaded.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The trie-node cache's entries and bytes, and whether it is enabled.
    pub fn node_cache_usage(&self) -> (usize, usize, bool) {
        let (n, b) = self.nodes.usage();
        (n, b, self.nodes.is_enabled())
    }
}

/// Saves the trie-node cache every period (`--state.trie-cache-save-period`), the first time
/// after a random 50-100% of it, as the reference does.
pub struct CacheSaver {
    chain: Arc<Chain>,
    datadir: std::path::PathBuf,
    period: std::time::Duration,
    worker: Option<Worker>,
}

impl CacheSaver {
    pub fn new(
        chain: Arc<Chain>,
        datadir: std::path::PathBuf,
        period: std::time::Duration,
    ) -> CacheSaver {
        CacheSaver {
            chain,
            datadir,
            period,
            worker: None,
        }
    }
}

impl Service for CacheSaver {
    fn name(&self) -> &'static str {
        "trie-cache-saver"
    }

    fn start(&mut self) -> Result<(), String> {
        let (chain, datadir, period) = (self.chain.clone(), self.datadir.clone(), self.period);
        let mut r = [0u8; 1];
        getrandom::getrandom(&mut r).map_err(|e| e.to_string())?;
        let first = period.mul_f64(0.5 + f64::from(r[0]) / 510.0);
        self.worker = Some(Worker::spawn("trie-cache-saver", move |stop| {
            let mut wait = first;
            while !stop.wait(wait) {
                if let Err(e) = chain.save_node_cache(&datadir) {
                    crate::log::warn("Periodic trie node cache save skipped", &[("err", &e)]);
                }
                wait = period;
            }
        })?);
        Ok(())
    }

    fn stop(&mut self) {
        if let Some(mut w) = self.worker.take() {
            w.stop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::{keccak256, Address};

    fn genesis() -> Genesis {
        let mut b = [0u8; 32];
        b[31] = 1;
        Genesis::dev(Address([7; 20]), b)
    }

    #[test]
    fn a_second_cache_save_while_one_runs_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let chain = Arc::new(Chain::open(&dir.path().join("chaindata"), &genesis()).unwrap());
        // Enough nodes that the first save is still writing when the second call comes.
        for i in 0..200_000u32 {
            let node = i.to_be_bytes().repeat(40);
            chain.nodes.insert(keccak256(&node), node.into());
        }
        chain.save_node_cache(dir.path()).unwrap();
        assert_eq!(
            chain.save_node_cache(dir.path()).unwrap_err(),
            "saving trie node cache has been triggered already"
        );
        chain.stop_long_operations();
        // Once it has ended, a save may start again (the stop flag now ends it at once).
        chain.save_node_cache(dir.path()).unwrap();
        chain.stop_long_operations();
        let disabled = Chain::open_with(&dir.path().join("other"), &genesis(), 0).unwrap();
        assert_eq!(
            Arc::new(disabled).save_node_cache(dir.path()).unwrap_err(),
            "trie node cache is disabled, nothing to save to file"
        );
    }
}
