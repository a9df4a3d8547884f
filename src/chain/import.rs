//! Importing blocks: `admin_importChain`, `admin_importChainFromString`, `chaind import`,
//! and (with the peer-to-peer issue) blocks from peers.
//!
//! Every block is checked in full before anything of it is stored: it extends the head,
//! its proposer seal and committed seals are the validator's, its time does not go back, its
//! transactions pass the pool's checks against the state its predecessors left (nonce,
//! balance, account key, gas), and the transactions root, receipts root, gas used and state
//! root it claims are the ones running it gives. Signatures are recovered in parallel
//! before the blocks are run in order. A batch is stored in one database transaction:
//! all of it or none.

use std::collections::HashMap;
use std::io::BufRead;
use std::sync::atomic::{AtomicBool, Ordering};

use super::db::{BlockWrite, Hash};
use super::state::{sub, State};
use super::validate::check_tx;
use super::{BlockRun, Chain, ChainError, DbNodes, Head};
use crate::crypto::{keccak256, recover_address, Address};
use crate::trie::NodeStore;
use crate::types::account_key::Signer;
use crate::types::block::{BftExtra, Block, DeriveSha};
use crate::types::receipt::Receipt;
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
    tx_root: Hash,
    /// The proposer seal's and every committed seal's signer.
    sealers: Result<Vec<Address>, String>,
    signers: Vec<Result<Vec<Signer>, TxError>>,
}

fn recover_seal(hash: &[u8; 32], sig: &[u8]) -> Result<Address, String> {
    let rs: &[u8; 64] = sig
        .get(..64)
        .and_then(|s| s.try_into().ok())
        .filter(|_| sig.len() == 65)
        .ok_or("a seal is not 65 bytes")?;
    recover_address(hash, rs, sig[64]).map_err(|e| e.to_string())
}

fn recover(block: &Block) -> Recovered {
    let hash = block.header.hash();
    let sealers = (|| {
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
    })();
    // What needs no state is worked out here too, on every core, beside the signatures.
    let encodings: Vec<Vec<u8>> = block.transactions.iter().map(Transaction::encode).collect();
    Recovered {
        hash,
        header_rlp: block.header.encode(),
        tx_hashes: encodings.iter().map(|e| keccak256(e)).collect(),
        tx_root: DeriveSha::Original.root(&encodings),
        encodings,
        sealers,
        signers: block
            .transactions
            .iter()
            .map(Transaction::recovered)
            .collect(),
    }
}

/// Recovers the signatures of `blocks` on every core, in the background: `use_each` gets
/// each block's in order as soon as it is ready, so that checking block `i` overlaps with
/// recovering the blocks after it. Stops early when `use_each` says so.
fn with_recovered<T>(
    blocks: &[Block],
    mut use_each: impl FnMut(usize, Recovered) -> Result<(), T>,
) -> Result<(), T> {
    use std::collections::BTreeMap;
    use std::sync::atomic::AtomicUsize;
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(8);
    let next = AtomicUsize::new(0);
    let quit = AtomicBool::new(false);
    std::thread::scope(|s| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<(usize, Recovered)>(4096);
        for _ in 0..threads {
            let tx = tx.clone();
            let (next, quit) = (&next, &quit);
            s.spawn(move || {
                background_priority();
                loop {
                    // Small runs of blocks per claim: few atomics, results still early.
                    let start = next.fetch_add(8, Ordering::Relaxed);
                    if start >= blocks.len() || quit.load(Ordering::Relaxed) {
                        return;
                    }
                    for (i, b) in blocks.iter().enumerate().skip(start).take(8) {
                        if tx.send((i, recover(b))).is_err() {
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

/// The encoded parts of a checked block, ready to store.
struct Ready {
    number: u64,
    hash: Hash,
    header: Vec<u8>,
    body: Vec<u8>,
    receipts: Vec<u8>,
    tx_hashes: Vec<Hash>,
    nodes: Vec<(Hash, Vec<u8>)>,
}

impl Chain {
    /// Checks and stores `blocks` (consecutive, in order), skipping those the chain has.
    /// Fails with the reason (the reference's `unknown ancestor`, or what is wrong with which
    /// block) and stores nothing of the batch then.
    pub fn insert_blocks(&self, blocks: &[Block]) -> Result<Imported, String> {
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
        let db_nodes = self.db_nodes();
        let mut pending: HashMap<Hash, Vec<u8>> = HashMap::new();
        let mut ready: Vec<Ready> = Vec::with_capacity(blocks.len());
        let mut parent = head.clone();
        // A block that fails its checks ends the batch: the blocks before it are stored,
        // then its reason is returned.
        let failure: Option<String> = with_recovered(blocks, |i, rec| {
            let (r, _changed) = self.check_block(
                &blocks[i],
                rec,
                &parent,
                validator,
                &BatchNodes {
                    pending: &pending,
                    db: &db_nodes,
                },
            )?;
            pending.extend(r.nodes.iter().cloned());
            parent = Head {
                hash: r.hash,
                header: blocks[i].header.clone(),
            };
            ready.push(r);
            Ok(())
        })
        .err();
        if let Some(why) = &failure {
            if let Some(bad) = blocks.get(ready.len()) {
                self.remember_bad_block(bad.clone(), why.clone());
            }
        }
        if ready.is_empty() {
            return Err(failure.unwrap_or_default());
        }
        let writes: Vec<BlockWrite<'_>> = ready
            .iter()
            .map(|r| BlockWrite {
                number: r.number,
                hash: &r.hash,
                header: &r.header,
                body: &r.body,
                receipts: &r.receipts,
                tx_hashes: &r.tx_hashes,
                trie_nodes: &r.nodes,
            })
            .collect();
        self.db.commit_blocks(&writes).map_err(|e| e.to_string())?;
        drop(pending);
        // The new head's nodes are the ones the next blocks will read; the nodes of the
        // batch's earlier blocks would only push them out of the cache.
        if let Some(last) = ready.last() {
            for (h, n) in &last.nodes {
                self.nodes.insert(*h, n.as_slice().into());
            }
        }
        out.new += ready.len() as u64;
        self.moved_to(&parent);
        match failure {
            Some(e) => Err(format!("{e} ({} blocks before it imported)", out.new)),
            None => Ok(out),
        }
    }

    /// After blocks were stored (or the head rewound): `parent` is the head; the pool's view
    /// moves to it.
    pub(super) fn moved_to(&self, parent: &Head) {
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

    /// Checks one block on top of `parent`, running it against the state `nodes` hold: its
    /// encoded parts and the trie nodes it adds, and the accounts it changed.
    #[allow(clippy::type_complexity)]
    fn check_block(
        &self,
        block: &Block,
        rec: Recovered,
        parent: &Head,
        validator: Address,
        nodes: &BatchNodes<'_>,
    ) -> Result<(Ready, HashMap<Address, super::state::Account>), String> {
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
        let sealers = rec.sealers.map_err(|e| bad(format!("invalid seal: {e}")))?;
        if sealers.iter().any(|a| *a != validator) {
            return Err(bad(format!("not sealed by the validator {validator}")));
        }
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
        let state = State::at(nodes, parent.header.state_root);
        let mut read = |a: &Address| state.account(a).map_err(ChainError::from);
        let mut run = BlockRun::default();
        for (i, ((tx, signers), raw)) in block
            .transactions
            .iter()
            .zip(&rec.signers)
            .zip(encodings)
            .enumerate()
        {
            let tx_err = |why: String| bad(format!("transaction {i}: {why}"));
            let (checked, acct) = check_tx(
                tx,
                signers.as_deref(),
                self.chain_id(),
                self.unit_price(),
                raw.len(),
                |a| run.account(a, &mut read).map_err(|e| e.to_string()),
            )
            .map_err(|e| tx_err(e.to_string()))?;
            if checked.nonce != acct.nonce {
                return Err(tx_err(format!(
                    "nonce {} where the sender's is {}",
                    checked.nonce, acct.nonce
                )));
            }
            if sub(&acct.balance, &checked.cost).is_none() {
                return Err(tx_err("insufficient funds of the sender for value ".into()));
            }
            run.apply(tx, checked.sender, checked.gas_used, &mut read)
                .map_err(|e| tx_err(e.to_string()))?;
        }
        let (changed, receipts, gas) = run
            .finish(h.rewardbase, &mut read)
            .map_err(|e| bad(e.to_string()))?;
        drop(state);
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
        if h.bloom.iter().any(|&b| b != 0) {
            return Err(bad("logs bloom is not empty".into()));
        }
        let mut state = State::at(nodes, parent.header.state_root);
        for (a, acct) in &changed {
            state.set(a, acct).map_err(|e| bad(e.to_string()))?;
        }
        let (root, mut new_nodes) = state.commit();
        new_nodes.extend(changed.keys().map(super::preimage));
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
        Ok((
            Ready {
                number,
                hash: rec.hash,
                header: rec.header_rlp,
                body: list(&list(&body)),
                receipts: list(&receipts_rlp),
                tx_hashes: rec.tx_hashes,
                nodes: new_nodes,
            },
            changed,
        ))
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

/// The import loop of `admin_importChain` and `chaind import`: blocks read from `r` in
/// batches of [`BATCH`], each batch checked and stored (or skipped when the chain has all of
/// it). `progress(imported)` is called after each batch. Errors are the reference's:
/// `block <index>: failed to parse: <why>` and `batch <b>: failed to insert: <why>`;
/// earlier batches stay imported.
pub fn import_stream(
    chain: &Chain,
    r: &mut impl BufRead,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Imported),
) -> Result<Imported, String> {
    let mut total = Imported::default();
    let mut index = 0usize;
    for batch_no in 0.. {
        let mut batch = Vec::with_capacity(BATCH);
        while batch.len() < BATCH {
            if stop.load(Ordering::Relaxed) {
                return Err("import stopped: the node is shutting down".into());
            }
            let parsed = next_item(r).and_then(|item| {
                item.map(|i| Block::decode(&i).map_err(|e| e.to_string()))
                    .transpose()
            });
            match parsed {
                Ok(Some(block)) => batch.push(block),
                Ok(None) => break,
                Err(e) => {
                    // The blocks read before the bad one are imported first.
                    let before = chain
                        .insert_blocks(&batch)
                        .map_err(|e| format!("batch {batch_no}: failed to insert: {e}"))?;
                    total.new += before.new;
                    total.known += before.known;
                    progress(total);
                    return Err(format!(
                        "block {index}: failed to parse: {e} ({} blocks before it imported)",
                        total.new
                    ));
                }
            }
            index += 1;
        }
        if batch.is_empty() {
            break;
        }
        let got = chain
            .insert_blocks(&batch)
            .map_err(|e| format!("batch {batch_no}: failed to insert: {e}"))?;
        total.new += got.new;
        total.known += got.known;
        progress(total);
    }
    Ok(total)
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
        let mut tx = Transaction::ValueTransfer(ValueTransfer {
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
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &genesis(v)).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &genesis(&v)).unwrap();
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
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &genesis(&v)).unwrap();
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
