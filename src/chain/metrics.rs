//! The chain's numbers for the node's metrics: a sample of its gauges (head, pool, trie-node
//! cache and file, state migration, cache save), read when someone looks, and the handle
//! that sealing and import count blocks into.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::Chain;
use crate::metrics::{ChainSample, Metrics, MigrationSample, TrieCacheSample};

impl Chain {
    /// Counts the blocks this chain seals and imports into `metrics` from now on (once; a
    /// later call changes nothing).
    pub fn record_to(&self, metrics: Arc<Metrics>) {
        let _ = self.metrics.set(metrics);
    }

    /// Counts a sealed block of `transactions`, when recording.
    pub(super) fn count_sealed(&self, transactions: usize) {
        if let Some(m) = self.metrics.get() {
            m.sealed(transactions as u64);
        }
    }

    /// Counts `blocks` imported blocks of `transactions` in all, when recording.
    pub(super) fn count_imported(&self, blocks: usize, transactions: usize) {
        if let Some(m) = self.metrics.get() {
            m.imported(blocks as u64, transactions as u64);
        }
    }

    /// The chain's gauges now.
    pub fn metrics_sample(&self) -> ChainSample {
        let head = self.head();
        let (pending, queued) = self.pool_counts();
        let (entries, bytes, enabled) = self.node_cache_usage();
        let (file_nodes, file_bytes) = self.node_file_usage();
        let migration = self.state_migration_status();
        ChainSample {
            head_number: head.header.number,
            head_time: head.header.time,
            pending: pending as u64,
            queued: queued as u64,
            trie_cache: TrieCacheSample {
                enabled,
                entries: entries as u64,
                bytes: bytes as u64,
                loaded_from_disk: self.node_cache_loaded() as u64,
                saving: self.saving.load(Ordering::Relaxed),
                save_written: self.save_progress.written.load(Ordering::Relaxed),
                save_total: self.save_progress.total.load(Ordering::Relaxed),
            },
            node_file_nodes: file_nodes as u64,
            node_file_bytes: file_bytes,
            migration: MigrationSample {
                running: migration.is_migration,
                block_number: migration.migration_block_number,
                committed: migration.committed,
                read: migration.read,
                pending: migration.pending,
                progress: migration.progress,
            },
        }
    }
}
