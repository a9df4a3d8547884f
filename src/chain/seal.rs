//! Sealing: the pending transactions become the next block, signed by the chain's one
//! validator. [`Chain::seal`] takes the pool's pending transactions, runs them (`run.rs`,
//! on the EVM where they run code) over the accounts as the pool sees them, writes the new state's trie nodes, the roots and
//! the sealed header in one durable database write, and moves the head; [`seal_header`]
//! writes the BFT extra data and the seals; [`Sealer`] is the `--dev` service that seals
//! whenever transactions are pending.

use std::sync::Arc;

use super::admission::{Admission, ACCOUNT_CACHE_LIMIT};
use super::db::{BlockWrite, Hash};
use super::pool;
use super::read::RecentBlock;
use super::run::{state_source, BlockRun, CachedSource, Unfit};
use super::state::{Account, Changes, State};
use super::{preimage, Chain, ChainError, Head};
use crate::crypto::{keccak256, SecretKey};
use crate::events::{Event, NewHead};
use crate::exec::Env;
use crate::service::{Service, Worker};
use crate::types::block::{BftExtra, DeriveSha, Header};
use crate::types::receipt::{block_bloom, Receipt};
use crate::types::rlp::list;

/// Seals `header` as the chain's one validator: BFT extra data naming `validator`, its
/// proposer seal over the seal hash and its committed seal over the block hash (reference
/// 10.4). Everything else in the header must be final.
pub fn seal_header(header: &mut Header, validator: &SecretKey) {
    let mut extra = BftExtra {
        vanity: [0; 31],
        round: 0,
        validators: vec![validator.address()],
        seal: Vec::new(),
        committed_seals: Vec::new(),
    };
    header.extra = extra.encode();
    let seal_hash = header.seal_hash().expect("BFT extra data was just written");
    extra.seal = validator.sign_hash(&seal_hash).to_vec();
    header.extra = extra.encode();
    let mut commit = header.hash().to_vec();
    commit.push(0x02);
    extra.committed_seals = vec![validator.sign_hash(&keccak256(&commit)).to_vec()];
    header.extra = extra.encode();
}

/// What running the taken transactions gave: those that ran (in order), the block's
/// changes, receipts and gas used.
struct Executed {
    included: Vec<pool::Pending>,
    changes: Changes,
    receipts: Vec<Receipt>,
    gas: u64,
}

impl Chain {
    /// Seals the pending transactions into a block signed by `validator` and makes it the
    /// head. `None` when nothing is pending.
    ///
    /// The pool's lock is held to take the transactions and run them over the accounts as
    /// the pool sees them (the EVM for those that run code); from then on the pool checks
    /// new transactions against the accounts the block leaves. The trie update, the roots,
    /// the seal and the durable write happen without it, so that transactions keep arriving
    /// while a block is written. A taken transaction that can no longer run (a contract it
    /// needed went away, an earlier one of its sender was dropped) is left out and forgotten.
    /// When the block cannot be written, nothing of it is kept and its transactions are
    /// pending again.
    pub fn seal(&self, validator: &SecretKey) -> Result<Option<[u8; 32]>, ChainError> {
        let _sealing = self.sealing.lock().unwrap_or_else(|p| p.into_inner());
        let parent = self.head();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let time = now.as_secs().max(parent.header.time);
        let env = Env {
            number: parent.header.number + 1,
            timestamp: time,
            rewardbase: validator.address(),
            parent_hash: parent.hash,
            chain_id: self.chain_id(),
        };
        let mut run = {
            let mut adm = self.admission();
            if adm.pool.is_empty() {
                return Ok(None);
            }
            let taken = adm.pool.take();
            let run = self.execute(&adm, taken, &parent, env)?;
            adm.in_flight = run
                .changes
                .accounts
                .iter()
                .map(|(a, acct)| (*a, acct.clone()))
                .chain(run.changes.removed.iter().map(|a| (*a, Account::default())))
                .collect();
            adm.sealing = run
                .included
                .iter()
                .map(|p| (p.hash, (p.tx.clone(), p.sender)))
                .collect();
            run
        };
        let written = self.write_block(validator, &parent, &run, time, now.subsec_millis());
        let sealed_transactions = run.included.len();
        if let Ok((hash, header)) = &written {
            // Before the head moves: a client that sees the new head finds its receipts here.
            let recent = RecentBlock::new(
                *hash,
                header.number,
                run.included.iter().map(|p| p.hash).collect(),
                std::mem::take(&mut run.included)
                    .into_iter()
                    .map(|p| (p.tx, p.sender))
                    .collect(),
                std::mem::take(&mut run.receipts),
            );
            self.recent
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .push(recent);
        }
        // A failed write puts the block's transactions back (below): their fee payers are
        // recovered before the pool's lock is taken, as a submission's are.
        let fee_payers: Vec<_> = match &written {
            Ok(_) => Vec::new(),
            Err(_) => run
                .included
                .iter()
                .map(|p| p.tx.recovered_fee_payer())
                .collect(),
        };
        let mut adm = self.admission();
        adm.in_flight.clear();
        adm.sealing.clear();
        let (hash, header) = match written {
            Ok(w) => w,
            Err(e) => {
                // Nothing was written (a full disk, say): the block's transactions go back to
                // the pool, ahead of those that arrived meanwhile (which were checked against
                // the accounts the block would have left), all checked again against the
                // head's accounts, which the view goes back to. Without this, a failed write
                // lost them, and every later transaction of their senders with them.
                // Under one hold of the lock, so that no sender's nonce is read half-way; only
                // the few that arrived during the write are recovered under it. (Announced once
                // already: not published again.)
                let later: Vec<_> = adm
                    .pool
                    .take()
                    .into_iter()
                    .map(|p| {
                        let fee_payer = p.tx.recovered_fee_payer();
                        (p, fee_payer)
                    })
                    .collect();
                for (p, fee_payer) in run.included.into_iter().zip(fee_payers).chain(later) {
                    let _ = self.admit(&mut adm, p.tx, Ok(p.signers), fee_payer);
                }
                return Err(e);
            }
        };
        let head = NewHead {
            number: header.number,
            hash,
            parent_hash: header.parent_hash,
            timestamp: header.time,
        };
        *self.head.lock().unwrap_or_else(|p| p.into_inner()) = Head { hash, header };
        if adm.accounts.len() + run.changes.accounts.len() > ACCOUNT_CACHE_LIMIT {
            adm.accounts.clear();
        }
        // The pool's cache keeps accounts without code; a contract's (whose storage root the
        // write just changed) is read again from the trie when needed.
        for (a, acct) in run.changes.accounts {
            if acct.contract.is_some() {
                adm.accounts.remove(&a);
            } else {
                adm.accounts.insert(a, acct);
            }
        }
        for a in &run.changes.removed {
            adm.accounts.remove(a);
        }
        let promoted = self.promote_queued(&mut adm);
        drop(adm);
        self.count_sealed(sealed_transactions);
        self.publish(Event::NewHead(Arc::new(head)));
        for h in promoted {
            self.publish(Event::PendingTransaction(h));
        }
        Ok(Some(hash))
    }

    /// Runs `taken` on the state of `parent` with the pool's cached accounts in front: those
    /// that can run, in order, with the block's changes (the rewardbase credited with the
    /// fees), each one's receipt, and the gas used.
    fn execute(
        &self,
        adm: &Admission,
        taken: Vec<pool::Pending>,
        parent: &Head,
        env: Env,
    ) -> Result<Executed, ChainError> {
        let nodes = self.db_nodes();
        let source = CachedSource {
            cache: &adm.accounts,
            state: state_source(&nodes, parent.header.state_root, |n| {
                self.db.hash_at(n).ok().flatten()
            }),
        };
        let mut run = BlockRun::new(env, source);
        let mut included = Vec::with_capacity(taken.len());
        for p in taken {
            // The pool checked the transaction against the accounts as it saw them; what a
            // contract did since (or a transaction left out before) may have changed that.
            match run.fits(&p.tx, p.sender, &p.cost) {
                Ok(()) => {}
                Err(Unfit::Failed(e)) => return Err(e),
                Err(why) => {
                    crate::log::warn(
                        "Transaction left out of the block",
                        &[
                            ("hash", &format!("0x{}", hex::encode(p.hash))),
                            ("reason", &why.to_string()),
                        ],
                    );
                    continue;
                }
            }
            run.apply(&p.tx, p.sender, p.gas_used, p.validation_gas)?;
            included.push(p);
        }
        let (changes, receipts, gas) = run.finish();
        Ok(Executed {
            included,
            changes,
            receipts,
            gas,
        })
    }

    /// Writes the block of `run` on top of `parent`: the state with its changes, the roots,
    /// the bloom, the header sealed by `validator`, all in one durable database transaction.
    /// Its hash and header.
    fn write_block(
        &self,
        validator: &SecretKey,
        parent: &Head,
        run: &Executed,
        time: u64,
        millis: u32,
    ) -> Result<(Hash, Header), ChainError> {
        let nodes = self.db_nodes();
        let mut state = State::at(&nodes, parent.header.state_root);
        let mut nodes_new = state.apply(&run.changes)?;
        let (state_root, account_nodes) = state.commit();
        drop(state);
        nodes_new.extend(account_nodes);
        nodes_new.extend(run.changes.accounts.keys().map(preimage));
        let rewardbase = validator.address();
        let tx_encodings: Vec<Vec<u8>> = run.included.iter().map(|p| p.tx.encode()).collect();
        let receipt_encodings: Vec<Vec<u8>> = run.receipts.iter().map(Receipt::encode).collect();
        let mut block_score = [0u8; 32];
        block_score[31] = 1;
        let mut header = Header {
            parent_hash: parent.hash,
            rewardbase,
            state_root,
            transactions_root: DeriveSha::Original.root(&tx_encodings),
            receipts_root: DeriveSha::Original.root(&receipt_encodings),
            bloom: Box::new(block_bloom(&run.receipts)),
            block_score,
            number: parent.header.number + 1,
            gas_used: run.gas,
            time,
            time_fos: (millis / 10) as u8,
            extra: Vec::new(),
            governance: Vec::new(),
            vote: Vec::new(),
            base_fee: None,
            random_reveal: None,
            mix_hash: None,
        };
        seal_header(&mut header, validator);
        let hash = header.hash();
        let tx_hashes: Vec<[u8; 32]> = run.included.iter().map(|p| p.hash).collect();
        let sender_hashes: Vec<([u8; 32], [u8; 32])> = run
            .included
            .iter()
            .filter(|p| p.tx.fee_payer().is_some())
            .map(|p| (p.tx.sender_tx_hash(), p.hash))
            .collect();
        let mut body = Vec::new();
        for t in &tx_encodings {
            body.extend_from_slice(t);
        }
        let mut receipts_rlp = Vec::new();
        for r in &receipt_encodings {
            receipts_rlp.extend_from_slice(r);
        }
        self.db.commit_block(&BlockWrite {
            number: header.number,
            hash: &hash,
            header: &header.encode(),
            body: &list(&list(&body)),
            receipts: &list(&receipts_rlp),
            tx_hashes: &tx_hashes,
            sender_hashes: &sender_hashes,
            trie_nodes: &nodes_new,
        })?;
        for (h, n) in nodes_new {
            self.nodes.insert(h, n.into());
        }
        Ok((hash, header))
    }
}

/// How often the sealer looks at the pool.
const SEAL_TICK: std::time::Duration = std::time::Duration::from_millis(20);
/// The longest the sealer waits before trying again after failures.
const RETRY_MAX: std::time::Duration = std::time::Duration::from_secs(5);
/// How often a failure that goes on is logged again.
const FAILURE_LOG_EVERY: std::time::Duration = std::time::Duration::from_secs(30);

/// The sealer's failures in a row: it waits before trying again (doubling from
/// [`SEAL_TICK`] to [`RETRY_MAX`]), logs the first failure, then one line per
/// [`FAILURE_LOG_EVERY`] with the count, and one line when sealing works again.
#[derive(Default)]
struct Failing {
    count: u64,
    retry_at: Option<std::time::Instant>,
    wait: std::time::Duration,
    logged: Option<std::time::Instant>,
}

impl Failing {
    fn waiting(&self) -> bool {
        self.retry_at.is_some_and(|t| std::time::Instant::now() < t)
    }

    fn failed(&mut self, err: &str) {
        self.count += 1;
        self.wait = (self.wait * 2).clamp(SEAL_TICK, RETRY_MAX);
        let now = std::time::Instant::now();
        self.retry_at = Some(now + self.wait);
        if self
            .logged
            .is_none_or(|t| now.duration_since(t) >= FAILURE_LOG_EVERY)
        {
            self.logged = Some(now);
            crate::log::error(
                "Sealing failed",
                &[
                    ("err", err),
                    ("failures", &self.count.to_string()),
                    ("retry_in", &format!("{:?}", self.wait)),
                ],
            );
        }
    }

    fn recovered(&mut self) {
        if self.count > 0 {
            crate::log::info(
                "Sealing works again",
                &[("failures", &self.count.to_string())],
            );
        }
        *self = Failing::default();
    }
}

/// The `--dev` sealer (`sealer` thread): seals a block as soon as transactions are pending,
/// and, given a period, no sooner than that after the previous block.
pub struct Sealer {
    chain: Arc<Chain>,
    key: Option<SecretKey>,
    period: std::time::Duration,
    worker: Option<Worker>,
}

impl Sealer {
    /// A sealer of `chain` signing with `key` (the validator's), sealing at most once per
    /// `period` (zero: whenever transactions are pending).
    pub fn new(chain: Arc<Chain>, key: SecretKey, period: std::time::Duration) -> Sealer {
        Sealer {
            chain,
            key: Some(key),
            period,
            worker: None,
        }
    }

    /// The validator it seals as (`None` once started: the key has moved to its thread).
    pub fn validator(&self) -> Option<crate::crypto::Address> {
        self.key.as_ref().map(SecretKey::address)
    }
}

impl Service for Sealer {
    fn name(&self) -> &'static str {
        "sealer"
    }

    fn start(&mut self) -> Result<(), String> {
        let chain = self.chain.clone();
        let key = self.key.take().ok_or("the sealer was started twice")?;
        let period = self.period;
        let mut last: Option<std::time::Instant> = None;
        let mut failing = Failing::default();
        self.worker = Some(Worker::periodic("sealer", SEAL_TICK, move || {
            if last.is_some_and(|l| l.elapsed() < period) || failing.waiting() {
                return;
            }
            match chain.seal(&key) {
                Ok(Some(hash)) => {
                    last = Some(std::time::Instant::now());
                    failing.recovered();
                    crate::log::info(
                        "Sealed a block",
                        &[
                            ("number", &chain.head_number().to_string()),
                            ("hash", &format!("0x{}", hex::encode(hash))),
                        ],
                    )
                }
                Ok(None) => {}
                Err(e) => failing.failed(&e.to_string()),
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
    use crate::crypto::Address;
    use crate::types::transaction::Transaction;

    #[test]
    fn a_sealed_block_is_signed_by_the_validator_and_holds_the_new_state() {
        use crate::types::transaction::ValueTransfer;
        let dir = tempfile::tempdir().unwrap();
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1; // 2^88
        let chain = Chain::open(dir.path(), &Genesis::dev(key.address(), funds)).unwrap();
        let to = Address([0x35; 20]);
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut value = [0u8; 32];
        value[31] = 5;
        let mut tx = Transaction::of(ValueTransfer {
            nonce: 0,
            gas_price: price,
            gas: 21_000,
            to,
            value,
            from: key.address(),
            signatures: Vec::new(),
        });
        tx.sign(&key, chain.chain_id());
        let hash = chain.submit(tx).unwrap();
        assert_eq!(chain.pending().len(), 1);
        assert_eq!(chain.pending_nonce(&key.address()).unwrap(), 1);
        let block_hash = chain.seal(&key).unwrap().unwrap();
        assert!(chain.pending().is_empty());
        assert_eq!(chain.seal(&key).unwrap(), None, "nothing left to seal");
        let b = chain.block_by_number(Some(1)).unwrap().unwrap();
        assert_eq!((b.hash, b.header.hash()), (block_hash, block_hash));
        assert_eq!(b.header.parent_hash, chain.genesis_hash().unwrap());
        let bft = BftExtra::decode(&b.header.extra).unwrap();
        assert_eq!(bft.validators, vec![key.address()]);
        let recover = |hash: &[u8; 32], sig: &[u8]| {
            crate::crypto::recover_address(hash, sig[..64].try_into().unwrap(), sig[64]).unwrap()
        };
        assert_eq!(
            recover(&b.header.seal_hash().unwrap(), &bft.seal),
            key.address()
        );
        let mut commit = block_hash.to_vec();
        commit.push(0x02);
        assert_eq!(
            recover(&keccak256(&commit), &bft.committed_seals[0]),
            key.address()
        );
        assert_eq!(b.transactions[0].0.hash(), hash);
        let record = chain.transaction(&hash).unwrap().unwrap();
        let sealed = record.receipt.unwrap();
        assert_eq!(
            (sealed.receipt.status, sealed.receipt.gas_used),
            (1, 21_000)
        );
        assert_eq!(chain.account(&to, None).unwrap().unwrap().balance, value);
        assert_eq!(
            chain.account(&key.address(), None).unwrap().unwrap().nonce,
            1
        );
        // The block's roots are those of its content.
        let enc = vec![b.transactions[0].0.encode()];
        assert_eq!(b.header.transactions_root, DeriveSha::Original.root(&enc));
    }
}
