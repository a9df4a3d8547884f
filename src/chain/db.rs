//! The chain database under `<datadir>/chaindata`: blocks, receipts, the transaction
//! look-up, the canonical numbers and the head, in one embedded, transactional
//! file (`chain.redb`); the state-trie nodes by hash beside it in an append-only file whose
//! committed length the head records ([`super::nodelog`]).
//!
//! Why redb: pure Rust, ACID with copy-on-write pages and a checksummed commit, so a process
//! killed at any instant leaves the last committed transaction and nothing of a later one,
//! without a write-ahead log to replay; one writer and many readers that never block each
//! other (RPC reads while the sealer writes). Each sealed block is one write transaction:
//! its block, receipts, look-ups, new trie nodes and the head pointer become visible,
//! and durable, together or not at all.
//!
//! This layer stores bytes: the encodings (RLP of headers, bodies, receipts, trie nodes) are
//! `types`' and `trie`'s business.

use std::path::Path;

use redb::{Database, ReadableTable, TableDefinition};

pub use super::store_error::{Error, Hash, Result};

/// The layout version this code reads and writes; a file with another one is refused.
/// Version 2 moved the trie nodes out of the database into `trie-nodes.log`; version 3 keys
/// headers, bodies and receipts by (number, hash); version 4 stores each block whole, as
/// its RLP (`RLP([header, txList])`), instead of its header and body apart. A version 3 file
/// is upgraded in place when opened.
pub const SCHEMA_VERSION: u32 = 4;
/// The database file inside the `chaindata` directory.
pub const FILE_NAME: &str = "chain.redb";

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
/// Blocks and receipts are keyed by (number, hash), as go-ethereum keys them: a new block's
/// entries go to the end of each B-tree instead of onto random pages, and an export reads
/// them in one sequential scan.
type ByBlock = TableDefinition<'static, (u64, &'static [u8; 32]), &'static [u8]>;
/// Each block as its RLP, `RLP([header, txList])`: what an export writes and a peer is sent,
/// so that both copy stored bytes (export is then within reach of `dd`); a header or a body
/// is a slice of it.
const BLOCKS: ByBlock = TableDefinition::new("blocks");
const RECEIPTS: ByBlock = TableDefinition::new("receipts");
/// Schema version 3's headers and bodies, read once to upgrade a file.
const V3_HEADERS: ByBlock = TableDefinition::new("headers");
const V3_BODIES: ByBlock = TableDefinition::new("bodies");
const NUMBERS: TableDefinition<&[u8; 32], u64> = TableDefinition::new("numbers");
const CANONICAL: TableDefinition<u64, &[u8; 32]> = TableDefinition::new("canonical");
/// Transaction hash to the hash of its block and its index there.
const TX_LOOKUP: TableDefinition<&[u8; 32], (&[u8; 32], u32)> = TableDefinition::new("tx_lookup");
/// Sender transaction hash -> transaction hash, for fee-delegated transactions.
const SENDER_LOOKUP: TableDefinition<&[u8; 32], &[u8; 32]> = TableDefinition::new("sender_lookup");

const SCHEMA_KEY: &str = "schema";
const HEAD_KEY: &str = "head";
/// The length of the trie-node file that the head block needs.
const NODES_END_KEY: &str = "trie_nodes_end";
/// A digest of the genesis specification the chain was created from.
const GENESIS_SPEC_KEY: &str = "genesis_spec";
/// The name of the trie-node file in use (absent: `nodelog::FILE_NAME`).
const NODE_FILE_KEY: &str = "trie_node_file";
/// The block whose state a running migration copies (absent: none runs).
const MIGRATION_KEY: &str = "state_migration";
/// The states of blocks below this one were removed by a migration.
const PRUNED_KEY: &str = "state_pruned_before";

/// A new database file at `path`, made under a temporary name (an earlier one left by a
/// killed process is replaced) and renamed into place once redb has written its first pages:
/// a process killed while redb initialised the file under its own name left a file no later
/// start could open (`I/O error: invalid data`, 7 kills in 10 just after it appeared).
fn create_new(dir: &Path, path: &Path) -> Result<Database> {
    let tmp = dir.join(format!("{FILE_NAME}.new"));
    let shown = tmp.display().to_string();
    match std::fs::remove_file(&tmp) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(Error::Storage(format!("{shown}: {e}"))),
    }
    let db = Database::create(&tmp).map_err(|source| Error::Open {
        path: shown.clone(),
        source,
    })?;
    // The open file keeps its descriptor (and its lock) across the rename.
    std::fs::rename(&tmp, path).map_err(|e| Error::Storage(format!("{shown}: {e}")))?;
    crate::datadir::atomic::sync_dir(dir).map_err(|e| Error::Storage(e.to_string()))?;
    Ok(db)
}

/// The block RLP `RLP([header, txList])` from a header and a body `RLP([txList])`.
pub fn join_block(header: &[u8], body: &[u8]) -> Result<Vec<u8>> {
    let mut r = crate::types::rlp::ListReader::whole(body)
        .map_err(|e| Error::Corrupt(format!("block body: {e}")))?;
    let txs = r
        .raw()
        .map_err(|e| Error::Corrupt(format!("block body: {e}")))?;
    let mut out = Vec::with_capacity(header.len() + txs.len() + 9);
    crate::types::rlp::put_list_head(&mut out, header.len() + txs.len());
    out.extend_from_slice(header);
    out.extend_from_slice(txs);
    Ok(out)
}

/// A stored block's header RLP and its transaction list's RLP (slices of `block`).
pub fn split_block(block: &[u8]) -> Result<(&[u8], &[u8])> {
    let corrupt = |e: crate::types::rlp::RlpError| Error::Corrupt(format!("stored block: {e}"));
    let mut r = crate::types::rlp::ListReader::whole(block).map_err(corrupt)?;
    let header = r.raw().map_err(corrupt)?;
    let txs = r.raw().map_err(corrupt)?;
    if !r.is_empty() {
        return Err(Error::Corrupt("stored block: more than two items".into()));
    }
    Ok((header, txs))
}

/// The body `RLP([txList])` of a stored block.
fn body_of(block: &[u8]) -> Result<Vec<u8>> {
    let (_, txs) = split_block(block)?;
    let mut out = Vec::with_capacity(txs.len() + 9);
    crate::types::rlp::put_list_head(&mut out, txs.len());
    out.extend_from_slice(txs);
    Ok(out)
}

macro_rules! storage_errors {
    ($($t:ty),*) => {$(
        impl From<$t> for Error {
            fn from(e: $t) -> Error {
                Error::Storage(e.to_string())
            }
        }
    )*};
}
storage_errors!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// Everything one sealed (or imported) block writes, in one transaction.
#[derive(Debug, Clone, Copy)]
pub struct BlockWrite<'a> {
    pub number: u64,
    pub hash: &'a Hash,
    pub header: &'a [u8],
    pub body: &'a [u8],
    pub receipts: &'a [u8],
    /// The block's transaction hashes, in order.
    pub tx_hashes: &'a [Hash],
    /// (sender transaction hash, transaction hash) of its fee-delegated transactions, whose
    /// two hashes differ.
    pub sender_hashes: &'a [(Hash, Hash)],
    /// State-trie nodes new in this block, by hash.
    pub trie_nodes: &'a [(Hash, Vec<u8>)],
}

/// The open chain database.
pub struct ChainDb {
    /// The redb file, opened again after an I/O error (a full disk).
    db: super::reopen::Reopening,
    nodes: super::nodelog::NodeLog,
}

impl std::fmt::Debug for ChainDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ChainDb")
    }
}

impl ChainDb {
    /// Opens (creating when missing) `<dir>/chain.redb`, creating `dir` too. Fails when the
    /// file cannot be opened, is not a redb file, or holds another schema version.
    pub fn open(dir: &Path) -> Result<ChainDb> {
        let path = dir.join(FILE_NAME);
        let shown = path.display().to_string();
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::Storage(format!("{}: {e}", dir.display())))?;
        let db = if path.exists() {
            Database::create(&path).map_err(|source| Error::Open {
                path: shown.clone(),
                source,
            })?
        } else {
            create_new(dir, &path)?
        };
        check_schema(&db, &shown)?;
        let (committed, name, migration) = {
            let tx = db.begin_read()?;
            let meta = tx.open_table(META)?;
            let get = |k: &str| -> Result<Option<Vec<u8>>> {
                Ok(meta.get(k)?.map(|v| v.value().to_vec()))
            };
            let committed = get(NODES_END_KEY)?.map(|b| decode_u64(&b)).transpose()?;
            let name = get(NODE_FILE_KEY)?
                .map(|b| String::from_utf8(b).map_err(|_| Error::Corrupt("node file name".into())))
                .transpose()?;
            let migration = get(MIGRATION_KEY)?.map(|b| decode_u64(&b)).transpose()?;
            (
                committed.unwrap_or(0),
                name.unwrap_or_else(|| super::nodelog::FILE_NAME.to_string()),
                migration,
            )
        };
        // A migration the process did not finish is abandoned: its partial file goes (the
        // file in use is complete), and so does any other leftover node file.
        if let Some(n) = migration {
            crate::log::warn(
                "A state migration was interrupted; it is abandoned (start it again with admin_startStateMigration)",
                &[("block", &n.to_string())],
            );
            let tx = db.begin_write()?;
            tx.open_table(META)?.remove(MIGRATION_KEY)?;
            tx.commit()?;
        }
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                let file = e.file_name().to_string_lossy().into_owned();
                if file.starts_with("trie-nodes") && file.ends_with(".log") && file != name {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let nodes = super::nodelog::NodeLog::open_named(dir, &name, committed)?;
        Ok(ChainDb {
            db: super::reopen::Reopening::new(path, db),
            nodes,
        })
    }

    /// The trie-node file, for a state migration to build its successor.
    pub fn node_log(&self) -> &super::nodelog::NodeLog {
        &self.nodes
    }

    /// Records that a migration of the state of block `number` runs (so that a restart
    /// knows to abandon it), or that none does.
    pub fn set_migration(&self, number: Option<u64>) -> Result<()> {
        let tx = self.db.begin_write()?;
        {
            let mut meta = tx.open_table(META)?;
            match number {
                Some(n) => {
                    meta.insert(MIGRATION_KEY, n.to_be_bytes().as_slice())?;
                }
                None => {
                    meta.remove(MIGRATION_KEY)?;
                }
            }
        }
        tx.commit()?;
        Ok(())
    }

    /// Makes the migration's node file the one in use, recording it with the states below
    /// block `number` as removed, in one transaction; the old file is then deleted. The
    /// caller holds off block commits meanwhile.
    pub fn adopt_migrated_nodes(&self, number: u64) -> Result<()> {
        self.nodes.adopt_mirror(|name, len| {
            let tx = self.db.begin_write()?;
            {
                let mut meta = tx.open_table(META)?;
                meta.insert(NODE_FILE_KEY, name.as_bytes())?;
                meta.insert(NODES_END_KEY, len.to_be_bytes().as_slice())?;
                meta.insert(PRUNED_KEY, number.to_be_bytes().as_slice())?;
                meta.remove(MIGRATION_KEY)?;
            }
            tx.commit()?;
            Ok(())
        })
    }

    /// The first block whose state is still kept (0 until a migration removed older ones).
    pub fn pruned_before(&self) -> Result<u64> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let v = meta.get(PRUNED_KEY)?.map(|v| v.value().to_vec());
        v.map_or(Ok(0), |b| decode_u64(&b))
    }

    /// The digest of the genesis specification recorded with the chain.
    pub fn genesis_spec(&self) -> Result<Option<Hash>> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let v = meta.get(GENESIS_SPEC_KEY)?.map(|v| v.value().to_vec());
        v.map(|b| {
            b.as_slice()
                .try_into()
                .map_err(|_| Error::Corrupt(format!("genesis digest of {} bytes", b.len())))
        })
        .transpose()
    }

    /// Records the digest of the genesis specification.
    pub fn set_genesis_spec(&self, digest: &Hash) -> Result<()> {
        let tx = self.db.begin_write()?;
        tx.open_table(META)?
            .insert(GENESIS_SPEC_KEY, digest.as_slice())?;
        tx.commit()?;
        Ok(())
    }

    /// Writes a block and makes it the head, atomically and durably.
    pub fn commit_block(&self, b: &BlockWrite<'_>) -> Result<()> {
        self.commit_blocks(std::slice::from_ref(b))
    }

    /// Writes consecutive blocks and makes the last the head, atomically and durably: their
    /// trie nodes go to the node file (synced) first, then everything else and the file's
    /// new length in one database transaction.
    pub fn commit_blocks(&self, blocks: &[BlockWrite<'_>]) -> Result<()> {
        let Some(last) = blocks.last() else {
            return Ok(());
        };
        let nodes_end = self
            .nodes
            .append(blocks.iter().flat_map(|b| b.trie_nodes.iter()))?;
        let joined = blocks
            .iter()
            .map(|b| join_block(b.header, b.body))
            .collect::<Result<Vec<_>>>()?;
        let tx = self.db.begin_write()?;
        {
            let mut stored = tx.open_table(BLOCKS)?;
            let mut receipts = tx.open_table(RECEIPTS)?;
            let mut numbers = tx.open_table(NUMBERS)?;
            let mut canonical = tx.open_table(CANONICAL)?;
            // Keys in ascending order: the B-tree's pages are then visited once each, left to
            // right, instead of at random (the keys are hashes).
            let mut lookups: Vec<(&Hash, &Hash, u32)> = Vec::new();
            let mut by_hash: Vec<&BlockWrite<'_>> = blocks.iter().collect();
            by_hash.sort_unstable_by_key(|b| b.hash);
            for b in by_hash {
                numbers.insert(b.hash, b.number)?;
            }
            for (b, rlp) in blocks.iter().zip(&joined) {
                stored.insert((b.number, b.hash), rlp.as_slice())?;
                receipts.insert((b.number, b.hash), b.receipts)?;
            }
            for b in blocks {
                canonical.insert(b.number, b.hash)?;
                for (i, h) in b.tx_hashes.iter().enumerate() {
                    let index = u32::try_from(i)
                        .map_err(|_| Error::Storage("too many transactions".into()))?;
                    lookups.push((h, b.hash, index));
                }
            }
            lookups.sort_unstable();
            let mut lookup = tx.open_table(TX_LOOKUP)?;
            for (h, block, index) in lookups {
                lookup.insert(h, (block, index))?;
            }
            let mut senders = tx.open_table(SENDER_LOOKUP)?;
            for b in blocks {
                for (sender, hash) in b.sender_hashes {
                    senders.insert(sender, hash)?;
                }
            }
            let mut head = Vec::with_capacity(40);
            head.extend_from_slice(&last.number.to_be_bytes());
            head.extend_from_slice(last.hash);
            let mut meta = tx.open_table(META)?;
            meta.insert(HEAD_KEY, head.as_slice())?;
            meta.insert(NODES_END_KEY, nodes_end.to_be_bytes().as_slice())?;
        }
        tx.commit()?;
        Ok(())
    }

    /// The head block's number and hash; `None` before the genesis block is written.
    pub fn head(&self) -> Result<Option<(u64, Hash)>> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let Some(v) = meta.get(HEAD_KEY)? else {
            return Ok(None);
        };
        let v = v.value();
        if v.len() != 40 {
            return Err(Error::Corrupt(format!("head pointer of {} bytes", v.len())));
        }
        let number = u64::from_be_bytes(v[..8].try_into().expect("8 bytes"));
        let hash: Hash = v[8..].try_into().expect("32 bytes");
        Ok(Some((number, hash)))
    }

    /// `f` applied to the stored bytes under the block with this hash in `table`.
    fn with_bytes<T>(
        &self,
        table: ByBlock,
        key: &Hash,
        f: impl FnOnce(&[u8]) -> Result<T>,
    ) -> Result<Option<T>> {
        let tx = self.db.begin_read()?;
        let Some(number) = tx.open_table(NUMBERS)?.get(key)?.map(|v| v.value()) else {
            return Ok(None);
        };
        let t = tx.open_table(table)?;
        let found = t.get((number, key))?;
        found.map(|v| f(v.value())).transpose()
    }

    /// The block RLP (`RLP([header, txList])`) of the block with this hash.
    pub fn block(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.with_bytes(BLOCKS, hash, |b| Ok(b.to_vec()))
    }

    /// The header (RLP) of the block with this hash.
    pub fn header(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.with_bytes(BLOCKS, hash, |b| Ok(split_block(b)?.0.to_vec()))
    }

    /// The body (`RLP([txList])`) of the block with this hash.
    pub fn body(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.with_bytes(BLOCKS, hash, body_of)
    }

    /// The receipts (RLP) of the block with this hash.
    pub fn receipts(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.with_bytes(RECEIPTS, hash, |b| Ok(b.to_vec()))
    }

    /// The node file's nodes and bytes.
    pub fn node_file_usage(&self) -> (usize, u64) {
        (self.nodes.count(), self.nodes.len())
    }

    /// The state-trie node with this hash.
    pub fn trie_node(&self, hash: &Hash) -> Result<Option<Vec<u8>>> {
        self.nodes.get(hash)
    }

    /// The hash of the canonical block at `number`.
    pub fn hash_at(&self, number: u64) -> Result<Option<Hash>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(CANONICAL)?;
        Ok(t.get(number)?.map(|v| *v.value()))
    }

    /// The number of the block with this hash.
    pub fn number_of(&self, hash: &Hash) -> Result<Option<u64>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(NUMBERS)?;
        Ok(t.get(hash)?.map(|v| v.value()))
    }

    /// Calls `f(number, block RLP)` for each canonical block from `first` to `last`, in
    /// order, within one read transaction (a consistent view however the head moves). Stops
    /// at the first error of `f`; a missing block is `Ok(Some(number))`.
    pub fn read_blocks<E: From<Error>>(
        &self,
        first: u64,
        last: u64,
        f: impl FnMut(u64, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<u64>, E> {
        self.block_reader()?.read(first, last, f)
    }

    /// A consistent view of the stored blocks (one read transaction) that several threads
    /// can read at once.
    pub fn block_reader(&self) -> Result<BlockReader> {
        let tx = self.db.begin_read()?;
        let meta = tx.open_table(META)?;
        let head = match meta.get(HEAD_KEY)? {
            Some(v) if v.value().len() == 40 => Some(u64::from_be_bytes(
                v.value()[..8].try_into().expect("8 bytes"),
            )),
            Some(v) => {
                return Err(Error::Corrupt(format!(
                    "head pointer of {} bytes",
                    v.value().len()
                )))
            }
            None => None,
        };
        Ok(BlockReader {
            head,
            canonical: tx.open_table(CANONICAL)?,
            blocks: tx.open_table(BLOCKS)?,
        })
    }

    /// Makes block `number` (which must be stored) the head: the canonical numbers above it
    /// and the look-ups of their transactions are removed, in one transaction. Blocks and
    /// trie nodes stay (the states of those blocks stay readable by hash).
    pub fn set_head(&self, number: u64) -> Result<Hash> {
        let tx = self.db.begin_write()?;
        let hash = {
            let mut canonical = tx.open_table(CANONICAL)?;
            let hash = canonical
                .get(number)?
                .map(|v| *v.value())
                .ok_or_else(|| Error::Corrupt(format!("no block {number}")))?;
            let above: Vec<(u64, Hash)> = canonical
                .range((number + 1)..)?
                .map(|e| e.map(|(k, v)| (k.value(), *v.value())))
                .collect::<std::result::Result<_, _>>()?;
            let blocks = tx.open_table(BLOCKS)?;
            let mut lookup = tx.open_table(TX_LOOKUP)?;
            for (n, h) in &above {
                canonical.remove(n)?;
                let block = blocks.get((*n, h))?.map(|v| v.value().to_vec());
                if let Some(block) = block {
                    let (_, list) = split_block(&block)?;
                    let txs = crate::types::block::decode_tx_list(list)
                        .map_err(|e| Error::Corrupt(e.to_string()))?;
                    let mut senders = tx.open_table(SENDER_LOOKUP)?;
                    for t in txs {
                        lookup.remove(&t.hash())?;
                        if t.fee_payer().is_some() {
                            senders.remove(&t.sender_tx_hash())?;
                        }
                    }
                }
            }
            let mut head = Vec::with_capacity(40);
            head.extend_from_slice(&number.to_be_bytes());
            head.extend_from_slice(&hash);
            tx.open_table(META)?.insert(HEAD_KEY, head.as_slice())?;
            hash
        };
        tx.commit()?;
        Ok(hash)
    }

    /// The hash of the fee-delegated transaction whose sender transaction hash is `sender`.
    pub fn tx_hash_by_sender(&self, sender: &Hash) -> Result<Option<Hash>> {
        let tx = self.db.begin_read()?;
        let t = match tx.open_table(SENDER_LOOKUP) {
            Ok(t) => t,
            // A file written before the index existed: nothing indexed yet.
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        Ok(t.get(sender)?.map(|v| *v.value()))
    }

    /// Where a transaction is: its block's hash and its index there.
    pub fn tx_location(&self, tx_hash: &Hash) -> Result<Option<(Hash, u32)>> {
        let tx = self.db.begin_read()?;
        let t = tx.open_table(TX_LOOKUP)?;
        Ok(t.get(tx_hash)?.map(|v| {
            let (block, index) = v.value();
            (*block, index)
        }))
    }
}

/// Writes the schema version into a new file; upgrades a version 3 file; refuses a file
/// with another one (and leaves it as it was).
fn check_schema(db: &Database, shown: &str) -> Result<()> {
    let tx = db.begin_write()?;
    let found = {
        let meta = tx.open_table(META)?;
        let found = meta.get(SCHEMA_KEY)?.map(|v| v.value().to_vec());
        found.map(|b| decode_u32(&b)).transpose()?
    };
    match found {
        // Current: every table exists already; nothing to commit (a commit is two syncs).
        Some(SCHEMA_VERSION) => {
            tx.abort()?;
            return Ok(());
        }
        None => {}
        Some(3) => upgrade_from_v3(&tx)?,
        Some(v) => {
            return Err(Error::Schema {
                path: shown.to_string(),
                found: v,
                expected: SCHEMA_VERSION,
            })
        }
    }
    tx.open_table(META)?
        .insert(SCHEMA_KEY, SCHEMA_VERSION.to_be_bytes().as_slice())?;
    // Every table exists from the first open, so that readers never meet a missing one.
    tx.open_table(BLOCKS)?;
    tx.open_table(RECEIPTS)?;
    tx.open_table(NUMBERS)?;
    tx.open_table(CANONICAL)?;
    tx.open_table(TX_LOOKUP)?;
    tx.open_table(SENDER_LOOKUP)?;
    tx.commit()?;
    Ok(())
}

/// Version 3 to 4, inside the opening transaction (a crash leaves version 3 whole): each
/// stored header and its body become one block; the two old tables go.
fn upgrade_from_v3(tx: &redb::WriteTransaction) -> Result<()> {
    let mut count = 0u64;
    {
        let headers = tx.open_table(V3_HEADERS)?;
        let bodies = tx.open_table(V3_BODIES)?;
        let mut blocks = tx.open_table(BLOCKS)?;
        for entry in headers.iter()? {
            let (k, header) = entry?;
            let (number, hash) = k.value();
            let body = bodies.get((number, hash))?.ok_or_else(|| {
                Error::Corrupt(format!(
                    "block {number} 0x{}: body missing",
                    hex::encode(hash)
                ))
            })?;
            let block = join_block(header.value(), body.value())?;
            blocks.insert((number, hash), block.as_slice())?;
            count += 1;
        }
    }
    tx.delete_table(V3_HEADERS)?;
    tx.delete_table(V3_BODIES)?;
    crate::log::info(
        "Upgraded the chain database from schema version 3 to 4 (blocks stored whole)",
        &[("blocks", &count.to_string())],
    );
    Ok(())
}

fn decode_u64(bytes: &[u8]) -> Result<u64> {
    let arr: [u8; 8] = bytes
        .try_into()
        .map_err(|_| Error::Corrupt(format!("trie-node file length of {} bytes", bytes.len())))?;
    Ok(u64::from_be_bytes(arr))
}

fn decode_u32(bytes: &[u8]) -> Result<u32> {
    let arr: [u8; 4] = bytes
        .try_into()
        .map_err(|_| Error::Corrupt(format!("schema version of {} bytes", bytes.len())))?;
    Ok(u32::from_be_bytes(arr))
}

/// The canonical blocks as of one read transaction; shared by reference between threads
/// (an export reads its range on every core).
pub struct BlockReader {
    /// The head's number in this view (`None`: no block at all).
    head: Option<u64>,
    canonical: redb::ReadOnlyTable<u64, &'static [u8; 32]>,
    blocks: redb::ReadOnlyTable<(u64, &'static [u8; 32]), &'static [u8]>,
}

type Entry<'a> = (
    redb::AccessGuard<'a, (u64, &'static [u8; 32])>,
    redb::AccessGuard<'a, &'static [u8]>,
);

impl BlockReader {
    /// Calls `f(number, block RLP)` for each canonical block from `first` to `last`, in
    /// order. Stops at the first error of `f`; a missing block is `Ok(Some(number))`.
    ///
    /// The blocks are read in one sequential scan. Up to the head, the one block stored at
    /// a number is the canonical one; only where a rewound chain (`debug_setHead`) left more
    /// than one is the canonical table asked which.
    pub fn read<E: From<Error>>(
        &self,
        first: u64,
        last: u64,
        mut f: impl FnMut(u64, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<u64>, E> {
        self.read_hashed(first, last, |number, _, block| f(number, block))
    }

    /// [`BlockReader::read`], giving each block's hash too (its key in the table: no header
    /// is hashed again).
    pub fn read_hashed<E: From<Error>>(
        &self,
        first: u64,
        last: u64,
        mut f: impl FnMut(u64, &Hash, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<Option<u64>, E> {
        let Some(head) = self.head else {
            return Ok(Some(first));
        };
        let from: (u64, &[u8; 32]) = (first, &[0; 32]);
        let to: (u64, &[u8; 32]) = (last.min(head), &[0xff; 32]);
        let mut scan = self.blocks.range(from..=to).map_err(Error::from)?;
        let mut next =
            || -> Result<Option<Entry<'_>>> { scan.next().transpose().map_err(Error::from) };
        let number_of = |e: &Option<Entry<'_>>| e.as_ref().map(|(k, _)| k.value().0);
        let mut ahead = next()?;
        for number in first..=last {
            if number > head || number_of(&ahead) != Some(number) {
                return Ok(Some(number));
            }
            let (k, v) = ahead.take().expect("checked above");
            let mut hash = *k.value().1;
            let mut block = Some(v);
            ahead = next()?;
            if number_of(&ahead) == Some(number) {
                // More than one block at this number: the canonical table decides.
                let Some(c) = self.canonical.get(number).map_err(Error::from)? else {
                    return Ok(Some(number));
                };
                let canonical = *c.value();
                if hash != canonical {
                    block = None;
                }
                while number_of(&ahead) == Some(number) {
                    let (k, v) = ahead.take().expect("checked above");
                    if *k.value().1 == canonical {
                        (hash, block) = (canonical, Some(v));
                    }
                    ahead = next()?;
                }
            }
            let Some(block) = block else {
                return Err(Error::Corrupt(format!(
                    "block {number} 0x{}: missing",
                    hex::encode(hash)
                ))
                .into());
            };
            f(number, &hash, block.value())?;
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h(b: u8) -> Hash {
        [b; 32]
    }

    /// The schema version recorded in the database file at `path`.
    fn stored_schema(path: &Path) -> u32 {
        let db = Database::create(path).unwrap();
        let tx = db.begin_read().unwrap();
        let v = tx
            .open_table(META)
            .unwrap()
            .get(SCHEMA_KEY)
            .unwrap()
            .unwrap()
            .value()
            .to_vec();
        decode_u32(&v).unwrap()
    }

    #[test]
    fn a_committed_block_is_there_after_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let db = ChainDb::open(dir.path()).unwrap();
        assert_eq!(db.head().unwrap(), None);
        let node_hash = crate::crypto::keccak256(b"node");
        let nodes = vec![(node_hash, b"node".to_vec())];
        db.commit_block(&BlockWrite {
            number: 0,
            hash: &h(1),
            header: b"\x87header0",
            body: b"\xc6\xc5body0",
            receipts: b"receipts0",
            tx_hashes: &[h(5), h(6)],
            sender_hashes: &[],
            trie_nodes: &nodes,
        })
        .unwrap();
        drop(db);
        let db = ChainDb::open(dir.path()).unwrap();
        assert_eq!(db.head().unwrap(), Some((0, h(1))));
        assert_eq!(
            db.header(&h(1)).unwrap().as_deref(),
            Some(&b"\x87header0"[..])
        );
        assert_eq!(
            db.body(&h(1)).unwrap().as_deref(),
            Some(&b"\xc6\xc5body0"[..])
        );
        assert_eq!(
            db.receipts(&h(1)).unwrap().as_deref(),
            Some(&b"receipts0"[..])
        );
        assert_eq!(db.hash_at(0).unwrap(), Some(h(1)));
        assert_eq!(db.number_of(&h(1)).unwrap(), Some(0));
        assert_eq!(db.tx_location(&h(6)).unwrap(), Some((h(1), 1)));
        assert_eq!(
            db.trie_node(&node_hash).unwrap().as_deref(),
            Some(&b"node"[..])
        );
        assert_eq!(db.trie_node(&h(9)).unwrap(), None);
        assert_eq!(db.header(&h(2)).unwrap(), None);
        assert_eq!(db.hash_at(1).unwrap(), None);
    }

    #[test]
    fn another_schema_version_is_refused_and_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        drop(ChainDb::open(dir.path()).unwrap());
        {
            let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
            let tx = db.begin_write().unwrap();
            tx.open_table(META)
                .unwrap()
                .insert(SCHEMA_KEY, 7u32.to_be_bytes().as_slice())
                .unwrap();
            tx.commit().unwrap();
        }
        let err = ChainDb::open(dir.path()).unwrap_err();
        let path = dir.path().join(FILE_NAME);
        assert_eq!(
            err.to_string(),
            format!(
                "chain database {} has schema version 7; this chaind reads version 4",
                path.display()
            )
        );
        // Still version 7: refusing wrote nothing.
        assert_eq!(stored_schema(&path), 7);
    }

    /// A block RLP as an independent encoder would write it: a list of a header and a
    /// transaction list.
    fn block_of(header: &[u8], txs: &[u8]) -> Vec<u8> {
        let mut payload = header.to_vec();
        payload.extend_from_slice(txs);
        let mut out = vec![0xc0 + payload.len() as u8];
        out.extend_from_slice(&payload);
        out
    }

    #[test]
    fn a_version_3_file_is_upgraded_in_place_and_its_blocks_read_the_same() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        // Version 3: headers and bodies apart; two blocks at number 1 (a rewound chain).
        let header = |b: u8| vec![0xc2, 0x80, b];
        let body = |tx: u8| vec![0xc3, 0xc2, 0x01, tx];
        {
            let db = Database::create(&path).unwrap();
            let tx = db.begin_write().unwrap();
            {
                let mut meta = tx.open_table(META).unwrap();
                meta.insert(SCHEMA_KEY, 3u32.to_be_bytes().as_slice())
                    .unwrap();
                let mut head = 1u64.to_be_bytes().to_vec();
                head.extend_from_slice(&h(3));
                meta.insert(HEAD_KEY, head.as_slice()).unwrap();
                let mut headers = tx.open_table(V3_HEADERS).unwrap();
                let mut bodies = tx.open_table(V3_BODIES).unwrap();
                let mut numbers = tx.open_table(NUMBERS).unwrap();
                let mut canonical = tx.open_table(CANONICAL).unwrap();
                for (n, hash, b) in [(0u64, h(1), 1u8), (1, h(2), 2), (1, h(3), 3)] {
                    headers.insert((n, &hash), header(b).as_slice()).unwrap();
                    bodies.insert((n, &hash), body(b).as_slice()).unwrap();
                    numbers.insert(&hash, n).unwrap();
                }
                canonical.insert(0, &h(1)).unwrap();
                canonical.insert(1, &h(3)).unwrap();
            }
            tx.commit().unwrap();
        }
        let db = ChainDb::open(dir.path()).unwrap();
        assert_eq!(
            db.block(&h(2)).unwrap(),
            Some(block_of(&header(2), &[0xc2, 0x01, 2]))
        );
        assert_eq!(db.header(&h(3)).unwrap(), Some(header(3)));
        assert_eq!(db.body(&h(3)).unwrap(), Some(body(3)));
        let mut seen = Vec::new();
        let missing = db
            .read_blocks(0, 1, |n, b| {
                seen.push((n, b.to_vec()));
                Ok::<(), Error>(())
            })
            .unwrap();
        assert_eq!(missing, None);
        assert_eq!(
            seen,
            vec![
                (0, block_of(&header(1), &[0xc2, 0x01, 1])),
                (1, block_of(&header(3), &[0xc2, 0x01, 3]))
            ]
        );
        drop(db);
        // Now version 4, without the old tables.
        assert_eq!(stored_schema(&path), 4);
        let db = Database::create(&path).unwrap();
        let tx = db.begin_read().unwrap();
        assert!(tx.open_table(V3_HEADERS).is_err());
        assert!(tx.open_table(V3_BODIES).is_err());
    }

    #[test]
    fn a_version_3_file_with_a_body_missing_is_refused_and_left_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        {
            let db = Database::create(&path).unwrap();
            let tx = db.begin_write().unwrap();
            {
                tx.open_table(META)
                    .unwrap()
                    .insert(SCHEMA_KEY, 3u32.to_be_bytes().as_slice())
                    .unwrap();
                tx.open_table(V3_HEADERS)
                    .unwrap()
                    .insert((0, &h(1)), [0xc1, 0x80].as_slice())
                    .unwrap();
                tx.open_table(V3_BODIES).unwrap();
            }
            tx.commit().unwrap();
        }
        let err = ChainDb::open(dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "chain database is corrupt: block 0 0x{}: body missing",
                hex::encode(h(1))
            )
        );
        assert_eq!(stored_schema(&path), 3);
        let db = Database::create(&path).unwrap();
        let tx = db.begin_read().unwrap();
        use redb::ReadableTableMetadata;
        assert_eq!(tx.open_table(V3_HEADERS).unwrap().len().unwrap(), 1);
    }

    #[test]
    fn a_block_is_stored_whole_and_its_header_and_body_are_slices_of_it() {
        let dir = tempfile::tempdir().unwrap();
        let db = ChainDb::open(dir.path()).unwrap();
        let header = [0xc3, 0x82, 0xaa, 0xbb];
        let body = [0xc4, 0xc3, 0x01, 0x02, 0x03];
        db.commit_block(&BlockWrite {
            number: 0,
            hash: &h(1),
            header: &header,
            body: &body,
            receipts: &[0xc0],
            tx_hashes: &[],
            sender_hashes: &[],
            trie_nodes: &[],
        })
        .unwrap();
        let expected = block_of(&header, &[0xc3, 0x01, 0x02, 0x03]);
        assert_eq!(db.block(&h(1)).unwrap(), Some(expected));
        assert_eq!(db.header(&h(1)).unwrap().as_deref(), Some(&header[..]));
        assert_eq!(db.body(&h(1)).unwrap().as_deref(), Some(&body[..]));
        // A body that is not RLP([txList]) is refused and nothing is written.
        let err = db
            .commit_block(&BlockWrite {
                number: 1,
                hash: &h(2),
                header: &header,
                body: &[0x01],
                receipts: &[0xc0],
                tx_hashes: &[],
                sender_hashes: &[],
                trie_nodes: &[],
            })
            .unwrap_err();
        assert!(
            err.to_string()
                .starts_with("chain database is corrupt: block body:"),
            "{err}"
        );
        assert_eq!(db.head().unwrap(), Some((0, h(1))));
        assert_eq!(db.block(&h(2)).unwrap(), None);
    }

    #[test]
    fn a_file_that_is_not_a_database_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(FILE_NAME), b"not a database at all").unwrap();
        let err = ChainDb::open(dir.path()).unwrap_err();
        assert!(matches!(err, Error::Open { .. }), "{err}");
    }
}
