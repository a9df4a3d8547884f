//! Importing blocks: `admin_importChain`, `admin_importChainFromString`, `chaind import`,
//! and (with the peer-to-peer issue) blocks from peers.
//!
//! Every block is checked in full before anything of it is stored: it extends the head,
//! its proposer seal and committed seals are the validator's, its time does not go back, its
//! transactions pass the pool's checks against the state its predecessors left (nonce,
//! balance, account key, gas), and the transactions root, receipts root, gas used and state
//! root it claims are the ones running it gives.
//!
//! Three kinds of thread share the work: recovery threads (one per core, at low priority)
//! recover the transactions' signatures and work out what needs no state, including making
//! the seals ready for a batch check (`seal_batch`); the calling thread runs the blocks in
//! order; a storing thread takes the checked blocks in chunks, checks each chunk's seals in
//! one batch against the validator's key, and stores the chunk in one database transaction,
//! after which it is the head, while the next chunk is being checked. A block that fails
//! any check ends the import there: the blocks before it are stored (in whole chunks and a
//! last partial one), nothing of it or after it.

use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use super::db::{BlockWrite, Hash};
use super::run::{state_source, BlockRun};
use super::seal_batch;
use super::state::State;
use super::validate::check_recovered;
use super::{Chain, DbNodes, Head};
use crate::crypto::{keccak256, recover_address, Address};
use crate::exec::Env;
use crate::trie::NodeStore;
use crate::types::account_key::Signer;
use crate::types::block::{BftExtra, Block, DeriveSha};
use crate::types::receipt::{block_bloom, Receipt};
use crate::types::rlp::list;
use crate::types::transaction::{Transaction, TxError};

/// Blocks read and stored together (the reference's batch size).
pub const BATCH: usize = 2500;

/// The trie nodes of the blocks of a batch not yet stored, in front of the database's.
struct BatchNodes<'a> {
    pending: &'a HashMap<Hash, Vec<u8>>,
    db: &'a DbNodes<'a>,
}

impl NodeStore for BatchNodes<'_> {
    fn node(&self, hash: &Hash) -> Option<Vec<u8>> {
        match self.pending.get(hash) {
            Some(n) => Some(n.clone()),
            None => self.db.node(hash),
        }
    }
}

/// What checking a block's signatures found, done before the block is run.
struct Recovered {
    /// The block's hash (the committed seals sign it; worked out here, off the critical
    /// path).
    hash: Hash,
    /// The header's RLP, as stored.
    header_rlp: Vec<u8>,
    /// Each transaction's encoding, their hashes, and the transactions root they make.
    encodings: Vec<Vec<u8>>,
    tx_hashes: Vec<Hash>,
    /// (sender transaction hash, transaction hash) of the fee-delegated ones.
    sender_hashes: Vec<(Hash, Hash)>,
    tx_root: Hash,
    /// The proposer seal's and every committed seal's signer (provisional when batched).
    sealers: Result<Vec<Address>, String>,
    /// The seals made ready for the batch check before storing, when they are left to it.
    seal_terms: Option<seal_batch::Prepared>,
    signers: Vec<Result<Vec<Signer>, TxError>>,
    /// Each transaction's fee payer's signers (none unless fee-delegated), recovered here
    /// too, on every core.
    fee_payer_signers: Vec<Result<Vec<Signer>, TxError>>,
}

fn recover_seal(hash: &[u8; 32], sig: &[u8]) -> Result<Address, String> {
    let rs: &[u8; 64] = sig
        .get(..64)
        .and_then(|s| s.try_into().ok())
        .filter(|_| sig.len() == 65)
        .ok_or("a seal is not 65 bytes")?;
    recover_address(hash, rs, sig[64]).map_err(|e| e.to_string())
}

/// The seals of a block that are checked in a batch: `(hash signed, signature, weight)` for
/// the proposer seal and each committed seal; `None` when the block is not of the usual
/// shape (its seals are then recovered one by one, which gives the reasons).
fn batchable_seals<'b>(
    block: &'b Block,
    extra: &'b BftExtra,
    hash: &Hash,
    index: u64,
    weights: &seal_batch::Weights,
) -> Option<Vec<(Hash, &'b [u8], u128)>> {
    if extra.committed_seals.is_empty() || extra.validators.len() != 1 {
        return None;
    }
    let seal_hash = block.header.seal_hash()?;
    let mut msg = hash.to_vec();
    msg.push(0x02);
    let commit_hash = keccak256(&msg);
    let mut out = vec![(seal_hash, extra.seal.as_slice(), weights.weight(index, 0))];
    for (j, s) in extra.committed_seals.iter().enumerate() {
        out.push((
            commit_hash,
            s.as_slice(),
            weights.weight(index, j as u64 + 1),
        ));
    }
    Some(out)
}

/// How the recovery threads check seals: one by one, or (when they fit a batch) made ready
/// for the storing thread, which checks each chunk's together against the validator's key
/// (`seal_batch`) before storing it.
#[derive(Clone, Copy)]
enum Seals<'a> {
    OneByOne,
    Batched {
        validator: Address,
        weights: &'a seal_batch::Weights,
    },
}

/// Each seal's signer, recovered one by one (the reasons an invalid seal is refused for).
fn recover_sealers(block: &Block, hash: &Hash) -> Result<Vec<Address>, String> {
    (|| {
        let extra = BftExtra::decode(&block.header.extra).map_err(|e| e.to_string())?;
        let seal_hash = block
            .header
            .seal_hash()
            .ok_or("extra data is not BFT extra data")?;
        let mut out = vec![recover_seal(&seal_hash, &extra.seal)?];
        if extra.committed_seals.is_empty() {
            return Err("no committed seal".to_string());
        }
        let mut msg = hash.to_vec();
        msg.push(0x02);
        let commit_hash = keccak256(&msg);
        for s in &extra.committed_seals {
            out.push(recover_seal(&commit_hash, s)?);
        }
        if extra.validators.len() != 1 {
            return Err(format!(
                "{} validators in the extra data, not the chain's one",
                extra.validators.len()
            ));
        }
        out.push(extra.validators[0]);
        Ok(out)
    })()
}

/// A block's seals to make ready for a batch: `(hash signed, signature, weight)`.
type OwnedSeals = Vec<(Hash, Vec<u8>, u128)>;

/// What a recovery thread works out for a block; with batched seals, also the seals to make
/// ready for the batch (then its sealers are provisional: see [`recover_claim`]).
fn recover(block: &Block, index: usize, seals: Seals<'_>) -> (Recovered, Option<OwnedSeals>) {
    let hash = block.header.hash();
    let batched = match seals {
        Seals::OneByOne => None,
        Seals::Batched { validator, weights } => {
            BftExtra::decode(&block.header.extra)
                .ok()
                .and_then(|extra| {
                    let list = batchable_seals(block, &extra, &hash, index as u64, weights)?;
                    // Every seal the validator's, provisionally: the storing thread checks them
                    // in a batch before the block is stored.
                    let mut s = vec![validator; list.len()];
                    s.push(extra.validators[0]);
                    let list = list
                        .into_iter()
                        .map(|(h, sig, w)| (h, sig.to_vec(), w))
                        .collect::<Vec<_>>();
                    Some((s, list))
                })
        }
    };
    let (sealers, list) = match batched {
        Some((s, list)) => (Ok(s), Some(list)),
        None => (recover_sealers(block, &hash), None),
    };

    // What needs no state is worked out here too, on every core, beside the signatures.
    let encodings: Vec<Vec<u8>> = block.transactions.iter().map(Transaction::encode).collect();
    let rec = Recovered {
        hash,
        header_rlp: block.header.encode(),
        tx_hashes: block
            .transactions
            .iter()
            .zip(&encodings)
            .map(|(t, e)| match t {
                Transaction::Ethereum(t) => t.hash(),
                _ => keccak256(e),
            })
            .collect(),
        sender_hashes: block
            .transactions
            .iter()
            .filter(|t| t.fee_payer().is_some())
            .map(|t| (t.sender_tx_hash(), t.hash()))
            .collect(),
        tx_root: DeriveSha::Original.root(&encodings),
        encodings,
        sealers,
        seal_terms: None,
        signers: block
            .transactions
            .iter()
            .map(Transaction::recovered)
            .collect(),
        fee_payer_signers: block
            .transactions
            .iter()
            .map(Transaction::recovered_fee_payer)
            .collect(),
    };
    (rec, list)
}

/// [`recover`] for a claim of blocks, their seals made ready for the batch together (one
/// inversion for them all); a block whose seals do not fit a batch has them recovered.
fn recover_claim(
    blocks: &[Block],
    claim: std::ops::Range<usize>,
    seals: Seals<'_>,
) -> Vec<(usize, Recovered)> {
    let mut out = Vec::with_capacity(claim.len());
    let mut lists = Vec::new();
    for i in claim {
        let (rec, list) = recover(&blocks[i], i, seals);
        if let Some(l) = list {
            lists.push((out.len(), l));
        }
        out.push((i, rec));
    }
    if !lists.is_empty() {
        let refs: Vec<&seal_batch::Seals<Vec<u8>>> =
            lists.iter().map(|(_, l)| l.as_slice()).collect();
        let prepared = seal_batch::Prepared::many(&refs);
        for ((k, _), p) in lists.iter().zip(prepared) {
            let (i, rec) = &mut out[*k];
            match p {
                Some(p) => rec.seal_terms = Some(p),
                None => rec.sealers = recover_sealers(&blocks[*i], &rec.hash),
            }
        }
    }
    out
}

/// Recovers the signatures of `blocks` on every core, in the background: `use_each` gets
/// each block's in order as soon as it is ready, so that checking block `i` overlaps with
/// recovering the blocks after it. Stops early when `use_each` says so.
fn with_recovered<T>(
    blocks: &[Block],
    seals: Seals<'_>,
    mut use_each: impl FnMut(usize, Recovered) -> Result<(), T>,
) -> Result<(), T> {
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicUsize;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let next = AtomicUsize::new(0);
    let quit = AtomicBool::new(false);
    // Blocks per claim: runs of 8 empty blocks (few atomics, results still early), but one
    // block at a time when blocks are big, so that at the end no core sits idle while another
    // recovers a long run alone.
    let sample = &blocks[..blocks.len().min(16)];
    let txs = sample.iter().map(|b| b.transactions.len()).sum::<usize>() / sample.len().max(1);
    let claim = (256 / (txs + 1)).clamp(1, 8);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Recovered)>(4096);
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, quit) = (&next, &quit);
            spawn_named(s, "import-recover", move || {
                background_priority();
                loop {
                    let start = next.fetch_add(claim, Ordering::Relaxed);
                    if start >= blocks.len() || quit.load(Ordering::Relaxed) {
                        return;
                    }
                    let end = (start + claim).min(blocks.len());
                    for item in recover_claim(blocks, start..end, seals) {
                        if tx.send(item).is_err() {
                            return;
                        }
                    }
                }
            });
        }
        drop(tx);
        let mut waiting = BTreeMap::new();
        let mut want = 0;
        let result = (|| {
            for (i, r) in rx.iter() {
                waiting.insert(i, r);
                while let Some(r) = waiting.remove(&want) {
                    use_each(want, r)?;
                    want += 1;
                }
            }
            Ok(())
        })();
        quit.store(true, Ordering::Relaxed);
        result
    })
}

/// Starts a named thread in `scope` (names show in `top -H` and in panics).
fn spawn_named<'s, 'e, T: Send + 's>(
    scope: &'s std::thread::Scope<'s, 'e>,
    name: &str,
    f: impl FnOnce() -> T + Send + 's,
) -> std::thread::ScopedJoinHandle<'s, T> {
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn_scoped(scope, f)
        .expect("the system starts a thread")
}

/// Lowers the calling thread's scheduling priority (nice 10), so that it runs on what the
/// other threads of the process leave. The recovery threads use it: the thread that checks
/// the blocks in order is the import's critical path, and when the recovery threads took
/// their equal share of two cores from it, the same import took 10 s or 18 s from run to
/// run. Where it is not supported this does nothing.
fn background_priority() {
    #[cfg(target_os = "linux")]
    // SAFETY: plain system calls on the calling thread's own id; no memory is shared.
    unsafe {
        let tid = libc::gettid();
        libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, 10);
    }
}

/// What an import did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Imported {
    /// Blocks stored.
    pub new: u64,
    /// Blocks skipped because the chain had them.
    pub known: u64,
}

/// The most trie-node entries reserved ahead for a batch (about 60 MB of map).
const MAX_PENDING_RESERVE: usize = 1 << 20;

/// Blocks from this many in one call have their seals checked in batches.
const BATCHED_SEALS_FROM: usize = 16;
/// Checked blocks are handed over to be stored in chunks of this many blocks, or fewer
/// whose parts and trie nodes reach [`CHUNK_BYTES`].
const CHUNK_BLOCKS: usize = 512;
const CHUNK_BYTES: usize = 16 << 20;

/// What the storing thread did: blocks stored, and why it stopped early.
struct Stored {
    new: usize,
    failure: Option<StoreFailure>,
}

enum StoreFailure {
    /// The block at this index has a false seal, for this reason.
    Block(usize, String),
    /// The database failed.
    Db(String),
}

/// The seals of a chunk of checked blocks: how many blocks from the first have true seals,
/// and the reason the next one does not. The seals the recovery threads made ready are
/// checked together; if the batch does not hold, one by one to find the first false one.
fn check_chunk_seals(
    blocks: &[Block],
    chunk: &mut [Ready],
    key: &seal_batch::Key,
    validator: Address,
) -> (usize, Option<String>) {
    let mut batch = seal_batch::Batch::new();
    let mut batched = Vec::new();
    for (i, r) in chunk.iter_mut().enumerate() {
        if let Some(terms) = r.seal_terms.take() {
            batch.add(terms);
            batched.push(i);
        }
    }
    if batched.is_empty() || seal_batch::holds([batch.finish()], key) {
        return (chunk.len(), None);
    }
    for i in batched {
        if let Err(why) = check_sealers(&blocks[i], &chunk[i].hash, validator) {
            return (i, Some(why));
        }
    }
    // Cannot happen (a batch of true seals holds); the chunk is refused at its first block.
    (
        0,
        Some(format!(
            "block {}: the seal batch does not hold",
            chunk[0].number
        )),
    )
}

/// A block's seals recovered one by one and compared with the validator, with the reasons
/// [`Chain::check_block`] gives.
fn check_sealers(block: &Block, hash: &Hash, validator: Address) -> Result<(), String> {
    sealers_are(block.header.number, recover_sealers(block, hash), validator)
}

fn sealers_are(
    number: u64,
    sealers: Result<Vec<Address>, String>,
    validator: Address,
) -> Result<(), String> {
    let sealers = sealers.map_err(|e| format!("block {number}: invalid seal: {e}"))?;
    if sealers.iter().any(|a| *a != validator) {
        return Err(format!(
            "block {number}: not sealed by the validator {validator}"
        ));
    }
    Ok(())
}

/// The encoded parts of a checked block, ready to store.
struct Ready {
    number: u64,
    hash: Hash,
    header: Vec<u8>,
    body: Vec<u8>,
    receipts: Vec<u8>,
    tx_hashes: Vec<Hash>,
    sender_hashes: Vec<(Hash, Hash)>,
    nodes: Vec<(Hash, Vec<u8>)>,
    /// Its seals made ready for the batch check before it is stored, when left to it.
    seal_terms: Option<seal_batch::Prepared>,
}

impl Ready {
    /// About the bytes storing it writes.
    fn bytes(&self) -> usize {
        self.header.len()
            + self.body.len()
            + self.receipts.len()
            + self.tx_hashes.len() * 64
            + self.nodes.iter().map(|(_, n)| n.len() + 40).sum::<usize>()
    }
}

/// What a caller sees of a long import, and how it stops it.
#[derive(Clone, Copy)]
pub struct Watch<'a> {
    /// Set from outside: no block is checked after it, and the blocks checked by then are
    /// stored (whole blocks, each chunk in one database transaction), so the import ends
    /// within a chunk's storing however large the batch.
    pub stop: &'a AtomicBool,
    /// Raised by every block done: skipped because the chain has it, or stored.
    pub done: &'a AtomicU64,
}

impl Chain {
    /// Checks and stores `blocks` (consecutive, in order), skipping those the chain has.
    /// Fails with the reason (the reference's `unknown ancestor`, or what is wrong with which
    /// block); the blocks before the failing one are stored.
    pub fn insert_blocks(&self, blocks: &[Block]) -> Result<Imported, String> {
        let (never, done) = (AtomicBool::new(false), AtomicU64::new(0));
        self.insert_blocks_watched(
            blocks,
            Watch {
                stop: &never,
                done: &done,
            },
        )
    }

    /// [`Chain::insert_blocks`], stopped early by `watch.stop` (then `Ok` with the blocks
    /// stored by then) and counting the blocks done in `watch.done`.
    pub fn insert_blocks_watched(
        &self,
        blocks: &[Block],
        watch: Watch<'_>,
    ) -> Result<Imported, String> {
        let _sealing = self.sealing.lock().unwrap_or_else(|p| p.into_inner());
        let head = self.head();
        let mut out = Imported::default();
        // Blocks the chain has are skipped while the head is at or past them.
        let mut start = 0;
        while let Some(b) = blocks.get(start) {
            let known = b.header.number <= head.header.number
                && self
                    .db
                    .hash_at(b.header.number)
                    .map_err(|e| e.to_string())?
                    == Some(b.hash());
            if !known {
                break;
            }
            out.known += 1;
            start += 1;
        }
        watch.done.fetch_add(out.known, Ordering::Relaxed);
        let blocks = &blocks[start..];
        let Some(first) = blocks.first() else {
            return Ok(out);
        };
        if first.header.parent_hash != head.hash {
            let known_parent = self
                .db
                .number_of(&first.header.parent_hash)
                .map_err(|e| e.to_string())?
                .is_some();
            return Err(if known_parent {
                format!(
                    "block {}: its parent is not the head block {} (this chain does not reorganize)",
                    first.header.number, head.header.number
                )
            } else {
                "unknown ancestor".to_string()
            });
        }
        let validator = self
            .genesis
            .validator
            .ok_or("the chain's genesis names no validator: its blocks cannot be checked")?;
        // Many blocks: their seals are checked in batches against the validator's key.
        let key = if blocks.len() >= BATCHED_SEALS_FROM {
            self.validator_key(&blocks[0], validator)
        } else {
            None
        };
        // Drawn only for a batch (a block from a peer comes alone: no system call for it).
        let weights = key.map(|_| seal_batch::Weights::random());
        let seals = match &weights {
            Some(weights) => Seals::Batched { validator, weights },
            None => Seals::OneByOne,
        };
        // This thread checks the blocks in order and hands them over in chunks to a second,
        // which checks the chunk's batched seals and stores it while the next chunk is
        // checked. A block that fails either check ends the import there: the blocks before
        // it are stored, then its reason is returned.
        let db_nodes = self.db_nodes();
        let mut pending: HashMap<Hash, Vec<u8>> = HashMap::new();
        let mut batch_hashes: HashMap<u64, Hash> = HashMap::new();
        let mut parent = head.clone();
        let mut checked = 0usize;
        let stop = AtomicBool::new(false);
        let (check_failure, committed) = std::thread::scope(|s| {
            let (to_store, chunks) = std::sync::mpsc::sync_channel::<(Vec<Ready>, Head)>(1);
            let stop = &stop;
            let store = spawn_named(s, "import-store", move || {
                self.store_chunks(blocks, chunks, key, validator, stop, watch.done)
            });
            let mut chunk: Vec<Ready> = Vec::new();
            let mut chunk_bytes = 0usize;
            let result = with_recovered(blocks, seals, |i, rec| {
                // Told to stop: the blocks checked so far are stored below, and no more.
                if stop.load(Ordering::Relaxed) || watch.stop.load(Ordering::Relaxed) {
                    return Err(None);
                }
                let r = self
                    .check_block(
                        &blocks[i],
                        rec,
                        &parent,
                        validator,
                        &BatchNodes {
                            pending: &pending,
                            db: &db_nodes,
                        },
                        &batch_hashes,
                    )
                    .map_err(Some)?;
                batch_hashes.insert(r.number, r.hash);
                if checked == 0 {
                    // Room for the batch's nodes at once, as many a block as the first has
                    // (growing the map step by step rehashed it a dozen times).
                    let guess = r.nodes.len().saturating_mul(blocks.len());
                    pending.reserve(guess.min(MAX_PENDING_RESERVE));
                }
                pending.extend(r.nodes.iter().cloned());
                parent = Head {
                    hash: r.hash,
                    header: blocks[i].header.clone(),
                };
                checked += 1;
                chunk_bytes += r.bytes();
                chunk.push(r);
                if chunk.len() >= CHUNK_BLOCKS || chunk_bytes >= CHUNK_BYTES {
                    // A closed channel: the storing thread stopped; the flag says so next.
                    let _ = to_store.send((std::mem::take(&mut chunk), parent.clone()));
                    chunk_bytes = 0;
                }
                Ok(())
            });
            if !chunk.is_empty() {
                let _ = to_store.send((chunk, parent.clone()));
            }
            drop(to_store);
            let committed = store.join().expect("the storing thread panicked");
            (result.err().flatten(), committed)
        });
        let Stored {
            new,
            failure: store_failure,
        } = committed;
        out.new += new as u64;
        let failure: Option<(usize, String)> = match (store_failure, check_failure) {
            (Some(StoreFailure::Db(e)), _) => return Err(e),
            (Some(StoreFailure::Block(i, why)), _) => Some((i, why)),
            (None, Some(why)) => {
                // A block whose seals were left to the batch and that failed another check:
                // its seals are recovered, since checking them comes first.
                let b = &blocks[checked];
                let follows = b.header.parent_hash == parent.hash
                    && b.header.number == parent.header.number + 1;
                let seal = match key {
                    Some(_) if follows => check_sealers(b, &b.hash(), validator).err(),
                    _ => None,
                };
                Some((checked, seal.unwrap_or(why)))
            }
            (None, None) => None,
        };
        match failure {
            Some((i, why)) => {
                self.remember_bad_block(blocks[i].clone(), why.clone());
                Err(if new == 0 {
                    why
                } else {
                    format!("{why} ({new} blocks before it imported)")
                })
            }
            None => Ok(out),
        }
    }

    /// The storing side of [`Chain::insert_blocks`]: each chunk of checked blocks (with the
    /// head its last block makes) has its batched seals checked, then is stored and becomes
    /// the head. Stops at the first block with a false seal (storing the blocks before it) or
    /// at a database error, and sets `stop` then.
    fn store_chunks(
        &self,
        blocks: &[Block],
        chunks: std::sync::mpsc::Receiver<(Vec<Ready>, Head)>,
        key: Option<seal_batch::Key>,
        validator: Address,
        stop: &AtomicBool,
        done: &AtomicU64,
    ) -> Stored {
        let first_number = blocks.first().map_or(0, |b| b.header.number);
        // Two stages: one thread checks a chunk's seals while this one stores the chunk
        // before it.
        std::thread::scope(|s| {
            let (to_store, checked) = std::sync::mpsc::sync_channel(1);
            spawn_named(s, "import-seals", move || {
                for (mut chunk, head) in chunks {
                    let Some(at) = chunk.first().map(|r| (r.number - first_number) as usize) else {
                        continue;
                    };
                    let (good, false_seal) = match key {
                        Some(key) => check_chunk_seals(
                            &blocks[at..at + chunk.len()],
                            &mut chunk,
                            &key,
                            validator,
                        ),
                        None => (chunk.len(), None),
                    };
                    let last = false_seal.is_some();
                    if last {
                        stop.store(true, Ordering::Relaxed);
                    }
                    // A closed channel: the storing side stopped.
                    if to_store.send((chunk, head, at, good, false_seal)).is_err() || last {
                        return;
                    }
                }
            });
            self.store_checked(blocks, checked, stop, done)
        })
    }

    /// The second stage of [`Chain::store_chunks`]: stores each chunk's blocks with true
    /// seals, and makes the last of them the head.
    #[allow(clippy::type_complexity)]
    fn store_checked(
        &self,
        blocks: &[Block],
        checked: std::sync::mpsc::Receiver<(Vec<Ready>, Head, usize, usize, Option<String>)>,
        stop: &AtomicBool,
        done: &AtomicU64,
    ) -> Stored {
        let mut new = 0usize;
        for (chunk, head, at, good, false_seal) in checked {
            if good > 0 {
                let writes: Vec<BlockWrite<'_>> = chunk[..good]
                    .iter()
                    .map(|r| BlockWrite {
                        number: r.number,
                        hash: &r.hash,
                        header: &r.header,
                        body: &r.body,
                        receipts: &r.receipts,
                        tx_hashes: &r.tx_hashes,
                        sender_hashes: &r.sender_hashes,
                        trie_nodes: &r.nodes,
                    })
                    .collect();
                if let Err(e) = self.db.commit_blocks(&writes) {
                    stop.store(true, Ordering::Relaxed);
                    return Stored {
                        new,
                        failure: Some(StoreFailure::Db(e.to_string())),
                    };
                }
                new += good;
                self.count_imported(good, chunk[..good].iter().map(|r| r.tx_hashes.len()).sum());
                done.fetch_add(good as u64, Ordering::Relaxed);
                let last = &chunk[good - 1];
                // The new head's nodes are the ones the next blocks will read; the nodes of
                // the chunk's earlier blocks would only push them out of the cache.
                for (h, n) in &last.nodes {
                    self.nodes.insert(*h, n.as_slice().into());
                }
                let head = if good == chunk.len() {
                    head
                } else {
                    Head {
                        hash: last.hash,
                        header: blocks[at + good - 1].header.clone(),
                    }
                };
                self.moved_to(&head);
            }
            if let Some(why) = false_seal {
                stop.store(true, Ordering::Relaxed);
                return Stored {
                    new,
                    failure: Some(StoreFailure::Block(at + good, why)),
                };
            }
        }
        Stored { new, failure: None }
    }

    /// The validator's public key, for checking seals in a batch: learnt from the first
    /// block's proposer seal when that recovers to the validator, and kept. `None` when it
    /// does not (the block is then checked seal by seal, which says why it fails).
    fn validator_key(&self, first: &Block, validator: Address) -> Option<seal_batch::Key> {
        if let Some(k) = self.validator_key.get() {
            return Some(*k);
        }
        let extra = BftExtra::decode(&first.header.extra).ok()?;
        let sig: &[u8; 65] = extra.seal.as_slice().try_into().ok()?;
        let xy = crate::crypto::recover_public_xy(&first.header.seal_hash()?, sig).ok()?;
        if Address::from_public_xy(&xy) != validator {
            return None;
        }
        let key = seal_batch::Key::from_xy(&xy)?;
        Some(*self.validator_key.get_or_init(|| key))
    }

    /// After blocks were stored (or the head rewound): `parent` is the head; the pool's view
    /// moves to it.
    pub(super) fn moved_to(&self, parent: &Head) {
        // The recent sealed blocks may no longer be canonical: look-ups read the database.
        self.recent
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
        // The pool's view moves to the new head: cached accounts are replaced, and pending
        // transactions are checked again (the imported blocks may hold them, or spend what
        // they counted on).
        let stale = {
            let mut adm = self.admission();
            *self.head.lock().unwrap_or_else(|p| p.into_inner()) = parent.clone();
            adm.accounts.clear();
            let stale = adm.pool.take();
            self.promote_queued(&mut adm);
            stale
        };
        for p in stale {
            // Its signers do not depend on the state: they are not recovered again.
            let _ = self.submit_recovered(p.tx, Ok(p.signers));
        }
        self.publish(crate::events::Event::NewHead(std::sync::Arc::new(
            crate::events::NewHead {
                number: parent.header.number,
                hash: parent.hash,
                parent_hash: parent.header.parent_hash,
                timestamp: parent.header.time,
            },
        )));
    }

    /// Checks one block on top of `parent`, running it against the state `nodes` hold (the
    /// hashes of the batch's earlier blocks, not stored yet, in `batch_hashes`): its encoded
    /// parts and the trie nodes it adds.
    fn check_block(
        &self,
        block: &Block,
        rec: Recovered,
        parent: &Head,
        validator: Address,
        nodes: &BatchNodes<'_>,
        batch_hashes: &HashMap<u64, Hash>,
    ) -> Result<Ready, String> {
        let h = &block.header;
        let number = h.number;
        let bad = |why: String| format!("block {number}: {why}");
        if h.parent_hash != parent.hash || number != parent.header.number + 1 {
            return Err(bad(format!(
                "non contiguous insert: follows block {} 0x{}",
                parent.header.number,
                hex::encode(parent.hash)
            )));
        }
        sealers_are(number, rec.sealers, validator)?;
        if h.time < parent.header.time {
            return Err(bad("its time is before its parent's".into()));
        }
        let mut one = [0u8; 32];
        one[31] = 1;
        if h.block_score != one {
            return Err(bad("block score is not 1".into()));
        }
        let encodings = &rec.encodings;
        if rec.tx_root != h.transactions_root {
            return Err(bad("transactions root mismatch".into()));
        }
        let env = Env {
            number,
            timestamp: h.time,
            rewardbase: h.rewardbase,
            parent_hash: parent.hash,
            chain_id: self.chain_id(),
        };
        let source = state_source(nodes, parent.header.state_root, |n| {
            batch_hashes
                .get(&n)
                .copied()
                .or_else(|| self.db.hash_at(n).ok().flatten())
        });
        let mut run = BlockRun::new(env, source);
        for (i, (((tx, signers), payers), raw)) in block
            .transactions
            .iter()
            .zip(&rec.signers)
            .zip(&rec.fee_payer_signers)
            .zip(encodings)
            .enumerate()
        {
            let tx_err = |why: String| bad(format!("transaction {i}: {why}"));
            let (checked, _) = check_recovered(
                tx,
                signers.as_deref(),
                payers.as_deref(),
                self.chain_id(),
                self.unit_price(),
                raw.len(),
                |a| run.account(a).map_err(|e| e.to_string()),
            )
            .map_err(|e| tx_err(e.to_string()))?;
            run.fits(tx, checked.sender, &checked.cost)
                .map_err(|e| tx_err(e.to_string()))?;
            run.apply(tx, checked.sender, checked.gas_used, checked.validation_gas)
                .map_err(|e| tx_err(e.to_string()))?;
        }
        let (changes, receipts, gas) = run.finish();
        if gas != h.gas_used {
            return Err(bad(format!(
                "gas used {} where the header says {}",
                gas, h.gas_used
            )));
        }
        let receipt_encodings: Vec<Vec<u8>> = receipts.iter().map(Receipt::encode).collect();
        if DeriveSha::Original.root(&receipt_encodings) != h.receipts_root {
            return Err(bad("receipts root mismatch".into()));
        }
        if *h.bloom != block_bloom(&receipts) {
            return Err(bad("logs bloom mismatch".into()));
        }
        let mut state = State::at(nodes, parent.header.state_root);
        let mut new_nodes = state.apply(&changes).map_err(|e| bad(e.to_string()))?;
        let (root, account_nodes) = state.commit();
        new_nodes.extend(account_nodes);
        new_nodes.extend(changes.accounts.keys().map(super::preimage));
        if root != h.state_root {
            return Err(bad(format!(
                "state root mismatch: 0x{} where the header says 0x{}",
                hex::encode(root),
                hex::encode(h.state_root)
            )));
        }
        let mut body = Vec::new();
        for e in encodings {
            body.extend_from_slice(e);
        }
        let mut receipts_rlp = Vec::new();
        for r in &receipt_encodings {
            receipts_rlp.extend_from_slice(r);
        }
        Ok(Ready {
            number,
            hash: rec.hash,
            header: rec.header_rlp,
            body: list(&list(&body)),
            receipts: list(&receipts_rlp),
            tx_hashes: rec.tx_hashes,
            sender_hashes: rec.sender_hashes,
            nodes: new_nodes,
            seal_terms: rec.seal_terms,
        })
    }
}

/// Reads the next RLP item of a stream of concatenated items; `None` at the end.
pub fn next_item(r: &mut impl BufRead) -> Result<Option<Vec<u8>>, String> {
    let mut first = [0u8; 1];
    match r.read(&mut first) {
        Ok(0) => return Ok(None),
        Ok(_) => {}
        Err(e) => return Err(e.to_string()),
    }
    let b = first[0];
    let (len_of_len, short) = match b {
        0x00..=0x7f => return Ok(Some(vec![b])),
        0x80..=0xb7 => (0, usize::from(b - 0x80)),
        0xb8..=0xbf => (usize::from(b - 0xb7), 0),
        0xc0..=0xf7 => (0, usize::from(b - 0xc0)),
        0xf8..=0xff => (usize::from(b - 0xf7), 0),
    };
    let mut item = vec![b];
    let len = if len_of_len == 0 {
        short
    } else {
        let mut l = vec![0u8; len_of_len];
        r.read_exact(&mut l)
            .map_err(|_| "unexpected EOF".to_string())?;
        item.extend_from_slice(&l);
        if l[0] == 0 {
            return Err("non-canonical size information".into());
        }
        l.iter().fold(0usize, |acc, &x| {
            acc.saturating_mul(256).saturating_add(usize::from(x))
        })
    };
    if len > 64 << 20 {
        return Err(format!("an item of {len} bytes"));
    }
    let at = item.len();
    item.resize(at + len, 0);
    r.read_exact(&mut item[at..])
        .map_err(|_| "unexpected EOF".to_string())?;
    Ok(Some(item))
}

/// What [`import_stream`] says when its stop flag ends it.
pub const STOPPED: &str = "import stopped: the node is shutting down";

/// The import loop of `admin_importChain` and `chaind import`: blocks read from `r` in
/// batches of [`BATCH`], each batch checked and stored (or skipped when the chain has all of
/// it). `progress(imported)` is called after each batch. Errors are the reference's:
/// `block <index>: failed to parse: <why>` and `batch <b>: failed to insert: <why>`;
/// earlier batches stay imported. `stop` set ends it with [`STOPPED`] once the blocks
/// checked by then are stored (see [`Watch`]).
pub fn import_stream(
    chain: &Chain,
    r: &mut (impl BufRead + Send),
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Imported),
) -> Result<Imported, String> {
    let done = AtomicU64::new(0);
    import_stream_watched(chain, r, Watch { stop, done: &done }, progress)
}

/// [`import_stream`], counting the blocks done (skipped or stored) in `watch.done` as they
/// are, for a progress bar finer than the batches.
pub fn import_stream_watched(
    chain: &Chain,
    r: &mut (impl BufRead + Send),
    watch: Watch<'_>,
    progress: &mut dyn FnMut(Imported),
) -> Result<Imported, String> {
    let stop = watch.stop;
    // A second thread reads and decodes the next batch while this one imports the last.
    // It sends each batch with, when the stream ended in a block that cannot be read, the
    // reason and the block's index (the batch then holds the blocks before it).
    type Read = (Vec<Block>, Option<(usize, String)>);
    let mut total = Imported::default();
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Read>(1);
        spawn_named(s, "import-read", move || {
            let mut index = 0usize;
            loop {
                let mut batch = Vec::with_capacity(BATCH);
                let mut failed = None;
                while batch.len() < BATCH && !stop.load(Ordering::Relaxed) {
                    let parsed = next_item(r).and_then(|item| {
                        item.map(|i| Block::decode(&i).map_err(|e| e.to_string()))
                            .transpose()
                    });
                    match parsed {
                        Ok(Some(block)) => batch.push(block),
                        Ok(None) => break,
                        Err(e) => {
                            failed = Some((index, e));
                            break;
                        }
                    }
                    index += 1;
                }
                let last = batch.len() < BATCH || failed.is_some();
                // A closed channel: the importing side stopped.
                if tx.send((batch, failed)).is_err() || last {
                    return;
                }
            }
        });
        for (batch_no, (batch, failed)) in rx.into_iter().enumerate() {
            if stop.load(Ordering::Relaxed) {
                return Err(STOPPED.to_string());
            }
            if !batch.is_empty() {
                let got = chain
                    .insert_blocks_watched(&batch, watch)
                    .map_err(|e| format!("batch {batch_no}: failed to insert: {e}"))?;
                total.new += got.new;
                total.known += got.known;
                progress(total);
                // Stopped within the batch: what was checked is stored, the rest is not.
                if stop.load(Ordering::Relaxed) {
                    return Err(STOPPED.to_string());
                }
            }
            if let Some((index, e)) = failed {
                // The blocks read before the bad one were imported first.
                return Err(format!(
                    "block {index}: failed to parse: {e} ({} blocks before it imported)",
                    total.new
                ));
            }
        }
        Ok(total)
    })
}

/// The number of RLP items in the `size` bytes of `r`, found by reading each item's length
/// and skipping its payload (within the buffer when it can); `None` when `stop` is set, the
/// stream fails, or an item runs past the end (the import then says why). What a progress
/// bar shows as the total.
pub fn count_items<R: Read + std::io::Seek>(
    r: &mut std::io::BufReader<R>,
    size: u64,
    stop: &AtomicBool,
) -> Option<u64> {
    let (mut count, mut pos) = (0u64, 0u64);
    while pos < size {
        if count % 4096 == 0 && stop.load(Ordering::Relaxed) {
            return None;
        }
        let mut first = [0u8; 1];
        r.read_exact(&mut first).ok()?;
        let b = first[0];
        let (head, len) = match b {
            0x00..=0x7f => (1, 0),
            0x80..=0xb7 => (1, u64::from(b - 0x80)),
            0xc0..=0xf7 => (1, u64::from(b - 0xc0)),
            0xb8..=0xbf | 0xf8..=0xff => {
                let len_of_len = usize::from(if b >= 0xf8 { b - 0xf7 } else { b - 0xb7 });
                let mut l = [0u8; 8];
                r.read_exact(&mut l[8 - len_of_len..]).ok()?;
                (1 + len_of_len as u64, u64::from_be_bytes(l))
            }
        };
        pos = pos.checked_add(head)?.checked_add(len)?;
        if pos > size {
            return None;
        }
        r.seek_relative(i64::try_from(len).ok()?).ok()?;
        count += 1;
    }
    Some(count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::crypto::SecretKey;
    use crate::types::block::Header;
    use crate::types::transaction::ValueTransfer;

    fn key(b: u8) -> SecretKey {
        SecretKey::from_slice(&[b; 32]).unwrap()
    }

    /// A chain of `genesis(v)` in a temporary directory (kept as long as the first).
    fn fresh_chain(v: &SecretKey) -> (tempfile::TempDir, Chain) {
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &genesis(v)).unwrap();
        (dir, chain)
    }

    fn genesis(validator: &SecretKey) -> Genesis {
        let mut funds = [0u8; 32];
        funds[20] = 1;
        Genesis::dev(validator.address(), funds)
    }

    fn transfer(from: &SecretKey, nonce: u64, chain: &Chain) -> Transaction {
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut value = [0u8; 32];
        value[31] = 7;
        let mut tx = Transaction::of(ValueTransfer {
            nonce,
            gas_price: price,
            gas: 21_000,
            to: Address([0x35; 20]),
            value,
            from: from.address(),
            signatures: Vec::new(),
        });
        tx.sign(from, chain.chain_id());
        tx
    }

    /// Signs `header` again as `sealer`: a block whose seals are valid whatever else it says.
    fn reseal(header: &mut Header, sealer: &SecretKey) {
        crate::chain::seal_header(header, sealer);
    }

    /// Two blocks sealed on one chain, for another chain of the same genesis to import.
    fn sealed_blocks(v: &SecretKey) -> (tempfile::TempDir, Vec<Block>) {
        let (dir, chain) = fresh_chain(v);
        let mut blocks = Vec::new();
        for nonce in 0..2 {
            chain.submit(transfer(v, nonce, &chain)).unwrap();
            chain.seal(v).unwrap().unwrap();
            let b = chain.block_by_number(None).unwrap().unwrap();
            blocks.push(Block {
                header: b.header,
                transactions: b.transactions.into_iter().map(|(t, _)| t).collect(),
            });
        }
        (dir, blocks)
    }

    #[test]
    fn each_lie_of_a_block_is_found_and_nothing_of_it_stored() {
        let v = key(0x46);
        let (_a, blocks) = sealed_blocks(&v);
        let (_dir, chain) = fresh_chain(&v);
        let lie = |f: &dyn Fn(&mut Block), sealer: &SecretKey| {
            let mut b = blocks[0].clone();
            f(&mut b);
            reseal(&mut b.header, sealer);
            b
        };
        let cases: Vec<(Block, &str)> = vec![
            (
                lie(&|_| {}, &key(0x47)),
                "block 1: not sealed by the validator",
            ),
            (
                lie(&|b| b.header.state_root[0] ^= 1, &v),
                "block 1: state root mismatch",
            ),
            (
                lie(&|b| b.header.receipts_root[0] ^= 1, &v),
                "block 1: receipts root mismatch",
            ),
            (
                lie(&|b| b.header.gas_used += 1, &v),
                "block 1: gas used 21000 where the header says 21001",
            ),
            (
                lie(&|b| b.header.transactions_root[0] ^= 1, &v),
                "block 1: transactions root mismatch",
            ),
            (
                lie(&|b| b.transactions[0] = transfer(&v, 1, &chain), &v),
                "block 1: transactions root mismatch",
            ),
            (
                lie(
                    &|b| {
                        b.transactions[0] = transfer(&v, 1, &chain);
                        b.header.transactions_root =
                            DeriveSha::Original.root(&[b.transactions[0].encode()]);
                    },
                    &v,
                ),
                "block 1: transaction 0: nonce 1 where the sender's is 0",
            ),
            (
                lie(
                    &|b| {
                        let poor = key(0x48);
                        b.transactions[0] = transfer(&poor, 0, &chain);
                        b.header.transactions_root =
                            DeriveSha::Original.root(&[b.transactions[0].encode()]);
                    },
                    &v,
                ),
                "block 1: transaction 0: insufficient funds of the sender for value ",
            ),
        ];
        for (block, want) in cases {
            let e = chain.insert_blocks(&[block]).unwrap_err();
            assert!(e.starts_with(want), "{e} / {want}");
            assert_eq!(chain.head_number(), 0, "{want}: nothing stored");
        }
        assert_eq!(
            chain.insert_blocks(&blocks[1..]).unwrap_err(),
            "unknown ancestor"
        );
        // The true blocks go in, then count as known.
        assert_eq!(
            chain.insert_blocks(&blocks).unwrap(),
            Imported { new: 2, known: 0 }
        );
        assert_eq!(
            chain.insert_blocks(&blocks).unwrap(),
            Imported { new: 0, known: 2 }
        );
        assert_eq!(chain.head_hash(), blocks[1].hash());
    }

    /// A follower's pool after it imports a block: the transactions the block holds leave,
    /// the ones after them stay pending (checked again, signers kept).
    #[test]
    fn an_imported_block_takes_its_transactions_out_of_the_pool() {
        let v = key(0x46);
        let (_a, blocks) = sealed_blocks(&v);
        let (_dir, chain) = fresh_chain(&v);
        let included = chain.submit(blocks[0].transactions[0].clone()).unwrap();
        let after = chain.submit(blocks[1].transactions[0].clone()).unwrap();
        assert_eq!(chain.pool_counts(), (2, 0));
        chain.insert_blocks(&blocks[..1]).unwrap();
        assert_eq!(chain.pool_counts(), (1, 0));
        assert_eq!(chain.pending_hashes(), vec![after]);
        assert!(chain.pending_raw(&[included]).is_empty());
        assert_eq!(
            chain.pending_raw(&[after]),
            vec![(after, blocks[1].transactions[0].encode())]
        );
        chain.insert_blocks(&blocks[1..]).unwrap();
        assert_eq!(chain.pool_counts(), (0, 0));
    }

    /// `n` empty blocks on the genesis of `genesis(v)`, block `i` (from 1) sealed by
    /// `sealer(i)`, then `tamper(i, extra)` applied to its BFT extra data (after the hash
    /// its child names was taken when the committed seals are all it changes).
    fn empty_blocks(
        v: &SecretKey,
        n: u64,
        sealer: impl Fn(u64) -> SecretKey,
        tamper: impl Fn(u64, &mut BftExtra),
    ) -> Vec<Block> {
        empty_blocks_with(v, n, |_, _| {}, sealer, tamper)
    }

    /// [`empty_blocks`], with `pre(i, header)` changing block `i`'s header before it is
    /// sealed.
    fn empty_blocks_with(
        v: &SecretKey,
        n: u64,
        pre: impl Fn(u64, &mut Header),
        sealer: impl Fn(u64) -> SecretKey,
        tamper: impl Fn(u64, &mut BftExtra),
    ) -> Vec<Block> {
        let (mut parent, _) = crate::chain::genesis_block(&genesis(v)).unwrap();
        let mut out = Vec::new();
        for i in 1..=n {
            let mut h = parent.clone();
            h.parent_hash = parent.hash();
            h.rewardbase = v.address();
            h.transactions_root = crate::trie::EMPTY_ROOT;
            h.receipts_root = crate::trie::EMPTY_ROOT;
            h.block_score = [0; 32];
            h.block_score[31] = 1;
            h.number = i;
            h.gas_used = 0;
            h.time = parent.time + 1;
            pre(i, &mut h);
            crate::chain::seal_header(&mut h, &sealer(i));
            let mut extra = BftExtra::decode(&h.extra).unwrap();
            tamper(i, &mut extra);
            h.extra = extra.encode();
            parent = h.clone();
            out.push(Block {
                header: h,
                transactions: Vec::new(),
            });
        }
        out
    }

    /// A tamper for [`empty_blocks`]: `f` applied to block `at`'s extra data.
    fn on_block(at: u64, f: impl Fn(&mut BftExtra)) -> impl Fn(u64, &mut BftExtra) {
        move |i, e| {
            if i == at {
                f(e)
            }
        }
    }

    /// A tamper for [`empty_blocks`]: block `at`'s committed seal signed by `signer` over
    /// another hash.
    fn false_committed_seal(at: u64, signer: &SecretKey) -> impl Fn(u64, &mut BftExtra) + '_ {
        on_block(at, move |e| {
            e.committed_seals[0] = signer.sign_hash(&[9; 32]).to_vec()
        })
    }

    /// What importing `blocks` on a fresh chain says, the head after it, and whether the
    /// chain learnt the validator's key (the seals were batched).
    fn import_fresh(v: &SecretKey, blocks: &[Block]) -> (Result<Imported, String>, u64, bool) {
        let (_dir, chain) = fresh_chain(v);
        let r = chain.insert_blocks(blocks);
        (r, chain.head_number(), chain.validator_key.get().is_some())
    }

    #[test]
    fn a_batch_of_true_seals_is_imported_with_the_seals_checked_together() {
        let v = key(0x46);
        let blocks = empty_blocks(&v, 40, |_| v.clone(), |_, _| {});
        let (r, head, batched) = import_fresh(&v, &blocks);
        assert_eq!(r.unwrap(), Imported { new: 40, known: 0 });
        assert_eq!(head, 40);
        assert!(batched);
    }

    #[test]
    fn one_false_seal_in_a_batch_stops_it_at_that_block_with_the_one_by_one_reason() {
        let v = key(0x46);
        let other = key(0x47);
        let cases: Vec<(&str, Vec<Block>, String)> = vec![
            (
                "committed seal by another key",
                empty_blocks(&v, 40, |_| v.clone(), false_committed_seal(25, &other)),
                "block 25: not sealed by the validator".into(),
            ),
            (
                "committed seal with its recovery id flipped",
                empty_blocks(
                    &v,
                    40,
                    |_| v.clone(),
                    on_block(25, |e| {
                        e.committed_seals[0][64] ^= 1;
                    }),
                ),
                "block 25: not sealed by the validator".into(),
            ),
            (
                "a second committed seal, damaged",
                empty_blocks(
                    &v,
                    40,
                    |_| v.clone(),
                    on_block(25, |e| {
                        let again = e.committed_seals[0].clone();
                        e.committed_seals.push(again);
                        e.committed_seals[1][10] ^= 1;
                    }),
                ),
                "block 25: ".into(),
            ),
            (
                "proposer and committed seal by another key",
                empty_blocks(
                    &v,
                    40,
                    |i| if i == 25 { other.clone() } else { v.clone() },
                    |_, _| {},
                ),
                "block 25: not sealed by the validator".into(),
            ),
            (
                "a seal of 64 bytes",
                empty_blocks(
                    &v,
                    40,
                    |_| v.clone(),
                    on_block(25, |e| {
                        e.committed_seals[0].pop();
                    }),
                ),
                "block 25: invalid seal: a seal is not 65 bytes".into(),
            ),
            (
                "a recovery id of 4",
                empty_blocks(
                    &v,
                    40,
                    |_| v.clone(),
                    on_block(25, |e| {
                        e.committed_seals[0][64] = 4;
                    }),
                ),
                "block 25: invalid seal: ".into(),
            ),
        ];
        for (what, blocks, want) in cases {
            let (r, head, batched) = import_fresh(&v, &blocks);
            let e = r.unwrap_err();
            assert!(e.starts_with(&want), "{what}: {e}");
            assert!(
                e.ends_with(" (24 blocks before it imported)"),
                "{what}: {e}"
            );
            assert_eq!(head, 24, "{what}: the blocks before it are stored");
            assert!(batched, "{what}");
            // The same reason as when the block comes alone (seals recovered one by one).
            let (_dir, chain) = fresh_chain(&v);
            for b in &blocks[..24] {
                chain.insert_blocks(std::slice::from_ref(b)).unwrap();
            }
            let alone = chain.insert_blocks(&blocks[24..25]).unwrap_err();
            assert!(chain.validator_key.get().is_none(), "{what}");
            assert_eq!(
                format!("{alone} (24 blocks before it imported)"),
                e,
                "{what}"
            );
        }
    }

    #[test]
    fn a_false_seal_in_a_later_chunk_leaves_the_chunks_before_it_stored() {
        let v = key(0x46);
        let other = key(0x47);
        let n = CHUNK_BLOCKS as u64 + 100;
        let bad = CHUNK_BLOCKS as u64 + 50;
        let blocks = empty_blocks(&v, n, |_| v.clone(), false_committed_seal(bad, &other));
        let (r, head, batched) = import_fresh(&v, &blocks);
        assert_eq!(
            r.unwrap_err(),
            format!(
                "block {bad}: not sealed by the validator {} ({} blocks before it imported)",
                v.address(),
                bad - 1
            )
        );
        assert_eq!(head, bad - 1);
        assert!(batched);
    }

    #[test]
    fn a_block_with_a_false_seal_and_another_lie_is_refused_for_its_seal_first() {
        let v = key(0x46);
        let other = key(0x47);
        let score_two = |i: u64, h: &mut Header| {
            if i == 25 {
                h.block_score[31] = 2;
            }
        };
        let blocks = empty_blocks_with(
            &v,
            40,
            score_two,
            |_| v.clone(),
            false_committed_seal(25, &other),
        );
        let (r, head, _) = import_fresh(&v, &blocks);
        assert_eq!(
            r.unwrap_err(),
            format!(
                "block 25: not sealed by the validator {} (24 blocks before it imported)",
                v.address()
            )
        );
        assert_eq!(head, 24);
        // With true seals, the other lie is found.
        let blocks = empty_blocks_with(&v, 40, score_two, |_| v.clone(), |_, _| {});
        let (r, head, _) = import_fresh(&v, &blocks);
        assert_eq!(
            r.unwrap_err(),
            "block 25: block score is not 1 (24 blocks before it imported)"
        );
        assert_eq!(head, 24);
    }

    #[test]
    fn a_batch_whose_first_block_is_not_the_validators_is_checked_seal_by_seal() {
        let v = key(0x46);
        let other = key(0x47);
        let blocks = empty_blocks(
            &v,
            40,
            |i| if i == 1 { other.clone() } else { v.clone() },
            |_, _| {},
        );
        let (r, head, batched) = import_fresh(&v, &blocks);
        assert_eq!(
            r.unwrap_err(),
            format!("block 1: not sealed by the validator {}", v.address())
        );
        assert_eq!(head, 0);
        assert!(!batched);
    }

    #[test]
    fn a_watched_import_counts_every_block_done_and_a_stop_checks_no_more() {
        let v = key(0x46);
        let blocks = empty_blocks(&v, 40, |_| v.clone(), |_, _| {});
        let (_dir, chain) = fresh_chain(&v);
        let (stop, done) = (AtomicBool::new(false), AtomicU64::new(0));
        let watch = Watch {
            stop: &stop,
            done: &done,
        };
        let r = chain.insert_blocks_watched(&blocks[..30], watch).unwrap();
        assert_eq!(r, Imported { new: 30, known: 0 });
        assert_eq!(done.load(Ordering::Relaxed), 30);
        // Stopped before it starts: the blocks the chain has are still skipped and counted,
        // and nothing after them is checked or stored.
        stop.store(true, Ordering::Relaxed);
        let r = chain.insert_blocks_watched(&blocks, watch).unwrap();
        assert_eq!(r, Imported { new: 0, known: 30 });
        assert_eq!(done.load(Ordering::Relaxed), 60);
        assert_eq!(chain.head_number(), 30);
        // The stream says it stopped, and leaves the chain as it was.
        let mut file: Vec<u8> = blocks.iter().flat_map(|b| b.encode()).collect();
        let e = import_stream(&chain, &mut file.as_slice(), &stop, &mut |_| {}).unwrap_err();
        assert_eq!(e, STOPPED);
        assert_eq!(chain.head_number(), 30);
        stop.store(false, Ordering::Relaxed);
        let r = import_stream(&chain, &mut file.as_slice(), &stop, &mut |_| {}).unwrap();
        assert_eq!(r, Imported { new: 10, known: 30 });
        // Counting the file's blocks without decoding them; a cut one gives no count.
        let count = |bytes: &[u8]| {
            let mut r = std::io::BufReader::with_capacity(64, std::io::Cursor::new(bytes));
            count_items(&mut r, bytes.len() as u64, &AtomicBool::new(false))
        };
        assert_eq!(count(&file), Some(40));
        assert_eq!(count(&[]), Some(0));
        assert_eq!(count(&[0x05, 0x82, 0xaa, 0xbb, 0xc1, 0x01]), Some(3));
        file.pop();
        assert_eq!(count(&file), None);
        assert_eq!(count(&[0xb9, 0x01]), None);
    }

    #[test]
    fn next_item_frames_a_stream_of_items() {
        let mut stream: &[u8] = &[0x05, 0x82, 0xaa, 0xbb, 0xc1, 0x01, 0xb8];
        assert_eq!(next_item(&mut stream).unwrap(), Some(vec![0x05]));
        assert_eq!(
            next_item(&mut stream).unwrap(),
            Some(vec![0x82, 0xaa, 0xbb])
        );
        assert_eq!(next_item(&mut stream).unwrap(), Some(vec![0xc1, 0x01]));
        assert_eq!(next_item(&mut stream).unwrap_err(), "unexpected EOF");
        assert_eq!(next_item(&mut &[][..]).unwrap(), None);
        assert_eq!(
            next_item(&mut &[0xb9, 0x00, 0x40][..]).unwrap_err(),
            "non-canonical size information"
        );
    }
}
