//! State migration (`admin_startStateMigration`): the trie nodes reachable from the head's
//! state root, and the addresses of its accounts, are copied into a new node file
//! (`state-migration` thread) while the node keeps sealing and serving; every node appended
//! meanwhile goes to both files. When the copy is done the new file replaces the old one in
//! one database transaction (block commits are held off for that instant) and the old file
//! is deleted: the states of blocks before the migration's block are gone.
//!
//! Stopping (`admin_stopStateMigration`, or shutdown) ends the copy at its next batch and
//! deletes the partial file. A node killed in the middle comes back with the old file, which
//! is complete: the partial one is deleted at open and the migration is abandoned (logged),
//! to be started again.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde::Serialize;

use super::{Chain, ChainError};
use crate::crypto::keccak256;
use crate::trie::NodeStore;

/// Nodes copied per batch (between two looks at the stop flag and two status updates).
const BATCH: usize = 4096;

/// `admin_stateMigrationStatus` (the reference's members).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct MigrationStatus {
    /// Nodes written to the new file by the copy.
    pub committed: u64,
    /// The last migration's error, or `"null"`.
    pub err: String,
    pub is_migration: bool,
    /// The block whose state is (or was last) copied; 0 before any.
    pub migration_block_number: u64,
    /// Nodes found and not yet copied.
    pub pending: u64,
    /// Percent of the key space walked (it only grows), 100 when done.
    pub progress: f64,
    /// Nodes read.
    pub read: u64,
}

impl Default for MigrationStatus {
    fn default() -> MigrationStatus {
        MigrationStatus {
            committed: 0,
            err: "null".into(),
            is_migration: false,
            migration_block_number: 0,
            pending: 0,
            progress: 0.0,
            read: 0,
        }
    }
}

/// The migration's state, held by the chain.
#[derive(Default)]
pub(super) struct Migration {
    status: Mutex<MigrationStatus>,
    stop: AtomicBool,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// The share of the key space before `path` (nibbles), in percent.
fn keyspace(path: &[u8]) -> f64 {
    let mut f = 0.0;
    let mut scale = 1.0 / 16.0;
    for &n in path.iter().take(12) {
        f += f64::from(n) * scale;
        scale /= 16.0;
    }
    f * 100.0
}

/// The chain's trie nodes, without filling the cache.
struct Uncached<'a>(&'a Chain);

impl crate::trie::NodeStore for Uncached<'_> {
    fn node(&self, hash: &[u8; 32]) -> Option<Vec<u8>> {
        if let Some(n) = self.0.nodes.get(hash) {
            return Some(n.to_vec());
        }
        self.0.db.trie_node(hash).ok().flatten()
    }
}

impl Chain {
    fn migration_status_mut(&self) -> std::sync::MutexGuard<'_, MigrationStatus> {
        self.migration
            .status
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// `admin_stateMigrationStatus`.
    /// (`migrationBlockNumber` is 0 unless a migration runs, as the reference's.)
    pub fn state_migration_status(&self) -> MigrationStatus {
        let mut s = self.migration_status_mut().clone();
        if !s.is_migration {
            s.migration_block_number = 0;
        }
        s
    }

    /// Starts copying the head's state into a new node file; it runs until done, stopped or
    /// shut down. Fails with `migration already started` while one runs.
    pub fn start_state_migration(self: &Arc<Self>) -> Result<(), String> {
        let mut status = self.migration_status_mut();
        if status.is_migration {
            return Err("migration already started".into());
        }
        // Reap the thread of the last migration.
        if let Some(t) = self
            .migration
            .thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = t.join();
        }
        let (number, root) = {
            // No block is committed while the new file starts: every node of a later block
            // is appended to both files.
            let _sealing = self.sealing.lock().unwrap_or_else(|p| p.into_inner());
            let head = self.head();
            // A second migration at the same head must not reuse (and truncate) the file
            // the first made, which is the one in use.
            let mut name = format!("trie-nodes.migrated-{}.log", head.header.number);
            if name == self.db.node_log().name() {
                name = format!("trie-nodes.migrated-{}.again.log", head.header.number);
            }
            self.db
                .node_log()
                .start_mirror(&name)
                .map_err(|e| e.to_string())?;
            if let Err(e) = self.db.set_migration(Some(head.header.number)) {
                self.db.node_log().drop_mirror();
                return Err(e.to_string());
            }
            (head.header.number, head.header.state_root)
        };
        *status = MigrationStatus {
            is_migration: true,
            migration_block_number: number,
            ..MigrationStatus::default()
        };
        drop(status);
        self.migration.stop.store(false, Ordering::SeqCst);
        crate::log::info("State migration started", &[("block", &number.to_string())]);
        let chain = self.clone();
        let handle = std::thread::Builder::new()
            .name("state-migration".into())
            .spawn(move || chain.run_migration(number, root))
            .map_err(|e| {
                self.db.node_log().drop_mirror();
                let _ = self.db.set_migration(None);
                self.migration_status_mut().is_migration = false;
                format!("cannot start the migration: {e}")
            })?;
        *self
            .migration
            .thread
            .lock()
            .unwrap_or_else(|p| p.into_inner()) = Some(handle);
        Ok(())
    }

    /// Stops the running migration and discards its partial copy; returns once it has
    /// stopped. Fails with `not in migration` when none runs.
    pub fn stop_state_migration(&self) -> Result<(), String> {
        if !self.migration_status_mut().is_migration {
            return Err("not in migration".into());
        }
        self.stop_and_join_migration();
        Ok(())
    }

    /// Stops a running migration and waits for it (its copy is discarded); also at shutdown.
    pub(super) fn stop_and_join_migration(&self) {
        self.migration.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self
            .migration
            .thread
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
        {
            let _ = t.join();
        }
    }

    fn run_migration(&self, number: u64, root: [u8; 32]) {
        let t = std::time::Instant::now();
        let copied = self.copy_state(root);
        let finished = copied.and_then(|()| {
            let _sealing = self.sealing.lock().unwrap_or_else(|p| p.into_inner());
            self.db
                .adopt_migrated_nodes(number)
                .map_err(|e| e.to_string())?;
            self.pruned_before
                .store(number, std::sync::atomic::Ordering::SeqCst);
            Ok(())
        });
        let mut status = self.migration_status_mut();
        status.is_migration = false;
        match finished {
            Ok(()) => {
                status.progress = 100.0;
                status.pending = 0;
                crate::log::info(
                    "State migration done",
                    &[
                        ("block", &number.to_string()),
                        ("nodes", &status.committed.to_string()),
                        ("elapsed", &format!("{:.3}s", t.elapsed().as_secs_f64())),
                    ],
                );
            }
            Err(e) => {
                self.db.node_log().drop_mirror();
                let _ = self.db.set_migration(None);
                crate::log::warn("State migration ended without a result", &[("err", &e)]);
                status.err = e;
            }
        }
    }

    /// Copies the nodes reachable from `root`, and the addresses its leaves stand for, into
    /// the migration's file, batch by batch.
    fn copy_state(&self, root: [u8; 32]) -> Result<(), String> {
        // Read around the trie-node cache (a cached node is used, a read one is not kept):
        // the whole state passing through would push out what the sealer needs.
        let nodes = Uncached(self);
        let log = self.db.node_log();
        let mut batch: Vec<([u8; 32], Vec<u8>)> = Vec::with_capacity(BATCH);
        let mut read = 0u64;
        let mut failure: Option<String> = None;
        let flush = |batch: &mut Vec<([u8; 32], Vec<u8>)>,
                     pending: usize,
                     progress: f64,
                     read: u64|
         -> Result<(), String> {
            let added = log.copy(batch).map_err(|e| e.to_string())?;
            batch.clear();
            let mut s = self.migration_status_mut();
            s.committed += added as u64;
            s.read = read;
            s.pending = pending as u64;
            if progress > s.progress {
                s.progress = progress;
            }
            Ok(())
        };
        // The contracts' storage tries and code, copied after the accounts.
        let mut contracts: Vec<crate::state::Contract> = Vec::new();
        let walked = crate::trie::walk(&nodes, root, &mut |v| {
            read += 1;
            batch.push((*v.hash, v.bytes.to_vec()));
            if let Ok(values) = crate::trie::leaf_values_in(v.bytes) {
                contracts.extend(
                    values
                        .iter()
                        .filter_map(|a| crate::state::Account::decode(a).ok())
                        .filter_map(|a| a.contract),
                );
            }
            for leaf in &v.leaves {
                // The leaf's key: the Keccak-256 of an address, whose preimage is stored.
                if leaf.len() == 64 {
                    let key: Vec<u8> = leaf.chunks(2).map(|p| (p[0] << 4) | p[1]).collect();
                    let key: [u8; 32] = key.try_into().expect("32 bytes");
                    if let Ok(Some(address)) = self.db.trie_node(&key) {
                        if address.len() == 20 && keccak256(&address) == key {
                            batch.push((key, address));
                        }
                    }
                }
            }
            if batch.len() >= BATCH {
                if self.migration.stop.load(Ordering::SeqCst)
                    || self.stopping.load(Ordering::Relaxed)
                {
                    failure = Some("stop state migration".into());
                    return false;
                }
                if let Err(e) = flush(&mut batch, v.pending, keyspace(v.path), read) {
                    failure = Some(e);
                    return false;
                }
            }
            true
        });
        walked.map_err(|e| format!("failed to retrieve node data: {e}"))?;
        if let Some(f) = failure {
            return Err(f);
        }
        let mut seen = std::collections::HashSet::new();
        for c in contracts {
            if self.migration.stop.load(Ordering::SeqCst) || self.stopping.load(Ordering::Relaxed) {
                return Err("stop state migration".into());
            }
            if seen.insert(c.storage_root) {
                let mut failed = None;
                crate::trie::reachable(&nodes, c.storage_root, &mut |h, b| {
                    read += 1;
                    batch.push((*h, b.to_vec()));
                    if batch.len() >= BATCH {
                        if let Err(e) = flush(&mut batch, 0, 99.9, read) {
                            failed.get_or_insert(e);
                        }
                    }
                })
                .map_err(|e| format!("failed to retrieve node data: {e}"))?;
                if let Some(e) = failed {
                    return Err(e);
                }
            }
            if c.code_hash != crate::state::EMPTY_CODE_HASH && seen.insert(c.code_hash) {
                let code = nodes.node(&c.code_hash).ok_or_else(|| {
                    format!("failed to retrieve the code 0x{}", hex::encode(c.code_hash))
                })?;
                read += 1;
                batch.push((c.code_hash, code));
            }
        }
        if self.migration.stop.load(Ordering::SeqCst) {
            return Err("stop state migration".into());
        }
        flush(&mut batch, 0, 100.0, read)
    }

    /// The first block whose state is kept (states before it were removed by a migration).
    pub fn pruned_before(&self) -> u64 {
        self.pruned_before.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Refuses a state that a migration removed.
    pub(super) fn check_state_kept(&self, number: u64) -> Result<(), ChainError> {
        let first = self.pruned_before();
        if number < first {
            return Err(ChainError::StateRemoved { number, first });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::{Address, SecretKey};
    use crate::types::transaction::{Transaction, ValueTransfer};

    fn genesis(v: &SecretKey, accounts: u64) -> Genesis {
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let mut g = Genesis::dev(v.address(), funds);
        for i in 0..accounts {
            let mut a = [0x77u8; 20];
            a[12..].copy_from_slice(&i.to_be_bytes());
            g.alloc.insert(Address(a), funds);
        }
        g
    }

    fn chain_with_blocks(dir: &std::path::Path, blocks: u64) -> (Arc<Chain>, SecretKey) {
        chain_with(dir, blocks, 0)
    }

    fn chain_with(dir: &std::path::Path, blocks: u64, accounts: u64) -> (Arc<Chain>, SecretKey) {
        let v = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let chain = Arc::new(Chain::open(dir, &genesis(&v, accounts)).unwrap());
        for nonce in 0..blocks {
            send(&chain, &v, nonce);
            chain.seal(&v).unwrap().unwrap();
        }
        (chain, v)
    }

    fn send(chain: &Chain, v: &SecretKey, nonce: u64) {
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut to = [0x35u8; 20];
        to[19] = nonce as u8;
        let mut value = [0u8; 32];
        value[31] = 1;
        let mut tx = Transaction::of(ValueTransfer {
            nonce,
            gas_price: price,
            gas: 21_000,
            to: Address(to),
            value,
            from: v.address(),
            signatures: Vec::new(),
        });
        tx.sign(v, chain.chain_id());
        chain.submit(tx).unwrap();
    }

    fn wait_done(chain: &Chain) -> MigrationStatus {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        loop {
            let s = chain.state_migration_status();
            if !s.is_migration {
                return s;
            }
            assert!(std::time::Instant::now() < deadline, "{s:?}");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
    }

    #[test]
    fn a_migration_keeps_the_head_state_and_removes_older_ones() {
        let dir = tempfile::tempdir().unwrap();
        let (chain, v) = chain_with_blocks(dir.path(), 20);
        let before = chain.node_file_usage();
        let head_state = chain.dump(None).unwrap().unwrap();
        chain.start_state_migration().unwrap();
        // Blocks keep coming while it runs.
        send(&chain, &v, 20);
        chain.seal(&v).unwrap().unwrap();
        let s = wait_done(&chain);
        assert_eq!(
            (s.err.as_str(), s.progress, s.migration_block_number),
            ("null", 100.0, 0),
            "the block number is 0 once no migration runs"
        );
        assert!(s.committed > 0 && s.read > 0);
        // The head's state (block 21, sealed during the copy) is whole; 20's is too.
        assert_eq!(
            chain.account(&v.address(), None).unwrap().unwrap().nonce,
            21
        );
        assert_eq!(
            chain.dump(Some(20)).unwrap().unwrap().1.len(),
            head_state.1.len()
        );
        let err = chain.account(&v.address(), Some(19)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "the state of block 19 was removed by a state migration; states are kept from block 20 on"
        );
        let after = chain.node_file_usage();
        assert!(after.0 < before.0, "nodes {before:?} -> {after:?}");
        assert_eq!(
            chain.stop_state_migration().unwrap_err(),
            "not in migration"
        );
        // The new file is the one a reopened chain reads.
        drop(chain);
        let again = Chain::open(dir.path(), &genesis(&v, 0)).unwrap();
        assert_eq!(
            again.account(&v.address(), None).unwrap().unwrap().nonce,
            21
        );
        assert_eq!(again.pruned_before(), 20);
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("trie-nodes"))
            .collect();
        assert_eq!(names, vec!["trie-nodes.migrated-20.log".to_string()]);
    }

    #[test]
    fn a_second_migration_at_the_same_head_keeps_the_file_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let (chain, v) = chain_with_blocks(dir.path(), 5);
        for _ in 0..3 {
            chain.start_state_migration().unwrap();
            assert_eq!(wait_done(&chain).err, "null");
            assert_eq!(chain.account(&v.address(), None).unwrap().unwrap().nonce, 5);
        }
        drop(chain);
        let again = Chain::open(dir.path(), &genesis(&v, 0)).unwrap();
        assert_eq!(again.account(&v.address(), None).unwrap().unwrap().nonce, 5);
    }

    #[test]
    fn a_second_start_stop_and_an_interrupted_migration() {
        let dir = tempfile::tempdir().unwrap();
        // A state big enough that the copy is still running when it is stopped.
        let (chain, v) = chain_with(dir.path(), 3, 200_000);
        chain.start_state_migration().unwrap();
        assert_eq!(
            chain.start_state_migration().unwrap_err(),
            "migration already started"
        );
        chain.stop_state_migration().unwrap();
        let s = chain.state_migration_status();
        assert_eq!(
            (s.is_migration, s.err.as_str()),
            (false, "stop state migration")
        );
        assert_eq!(chain.pruned_before(), 0, "the old states stay");
        assert!(chain.account(&v.address(), Some(1)).unwrap().is_some());
        assert!(
            !dir.path().join("trie-nodes.migrated-3.log").exists(),
            "the copy is gone"
        );

        // Interrupted: the marker and a partial file as a killed node leaves them.
        drop(chain);
        let db = crate::chain::db::ChainDb::open(dir.path()).unwrap();
        db.node_log()
            .start_mirror("trie-nodes.migrated-9.log")
            .unwrap();
        db.set_migration(Some(9)).unwrap();
        drop(db);
        assert!(dir.path().join("trie-nodes.migrated-9.log").exists());
        let again = Arc::new(Chain::open(dir.path(), &genesis(&v, 200_000)).unwrap());
        assert!(
            !dir.path().join("trie-nodes.migrated-9.log").exists(),
            "abandoned"
        );
        assert_eq!(again.account(&v.address(), None).unwrap().unwrap().nonce, 3);
        assert!(!again.state_migration_status().is_migration);
        // And a migration can run again, to its end.
        again.start_state_migration().unwrap();
        let s = wait_done(&again);
        assert_eq!((s.err.as_str(), s.progress), ("null", 100.0));
    }

    #[test]
    fn keyspace_grows_with_the_path() {
        assert_eq!(super::keyspace(&[]), 0.0);
        assert_eq!(super::keyspace(&[8]), 50.0);
        assert!(super::keyspace(&[8, 1]) > super::keyspace(&[8]));
        assert!(super::keyspace(&[15, 15, 15]) < 100.0);
    }
}

#[cfg(test)]
mod contract_tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::SecretKey;
    use crate::types::transaction::{Legacy, Transaction};

    /// A contract's storage trie and code survive a migration: after it, the head state's
    /// contract still reads its storage and code, and still runs.
    #[test]
    fn a_migration_keeps_contracts_storage_and_code() {
        let dir = tempfile::tempdir().unwrap();
        let v = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        // No trie-node cache: every node read after the migration comes from its file.
        let chain =
            Arc::new(Chain::open_with(dir.path(), &Genesis::dev(v.address(), funds), 0).unwrap());
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let send = |nonce: u64, to, input: Vec<u8>| {
            let mut tx = Transaction::Legacy(Legacy {
                nonce,
                gas_price: price,
                gas: 1_000_000,
                to,
                value: [0; 32],
                input,
                signature: None,
            });
            tx.sign(&v, chain.chain_id());
            chain.submit(tx).unwrap();
            chain.seal(&v).unwrap().unwrap();
        };
        // Store(uint256) on the Reverter test contract: slot 0.
        let out = std::fs::read_to_string(format!(
            "{}/tests/contracts/out/Reverter.json",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap();
        let json: serde_json::Value = serde_json::from_str(&out).unwrap();
        let code =
            hex::decode(json["bytecode"].as_str().unwrap().trim_start_matches("0x")).unwrap();
        send(0, None, code);
        let c = crate::exec::create_address(&v.address(), 0);
        let mut store = hex::decode("6057361d").unwrap();
        store.extend(crate::state::from_u64(0x1234));
        send(1, Some(c), store);
        let head = chain.head_number();
        let at = chain.state_header(None).unwrap().unwrap();
        let code_before = chain.code_at(&c, &at).unwrap();
        chain.start_state_migration().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while chain.state_migration_status().is_migration {
            assert!(std::time::Instant::now() < deadline);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(chain.state_migration_status().err, "null");
        assert_eq!(chain.pruned_before(), head);
        let at = chain.state_header(None).unwrap().unwrap();
        assert_eq!(
            chain.storage_at(&c, &[0; 32], &at).unwrap(),
            crate::state::from_u64(0x1234)
        );
        assert_eq!(chain.code_at(&c, &at).unwrap(), code_before);
        // It still runs: store again, then read it back.
        let mut store = hex::decode("6057361d").unwrap();
        store.extend(crate::state::from_u64(7));
        send(2, Some(c), store);
        let at = chain.state_header(None).unwrap().unwrap();
        assert_eq!(
            chain.storage_at(&c, &[0; 32], &at).unwrap(),
            crate::state::from_u64(7)
        );
    }
}
