//! Admission: how a transaction enters the pool. The pool (`pool.rs`) and the accounts it
//! checks against sit behind one lock in [`Admission`]: the head's accounts, read from the
//! trie once and kept, and while a block is being sealed the accounts as that block will
//! leave them, so that a transaction is checked against the state it will run on. This file
//! holds submission (`submit`, `submit_recovered`), the pool's contents as the API and the
//! peers read them (pending, queued, raw bytes, counts, the next nonce), the per-sender nonce
//! locks of the send methods, the promotion of queued transactions when the head moves, and
//! the service that drops idle queues ([`QueueExpiry`]).
//! Sealing (`seal.rs`) and import (`import.rs`) change the view; nothing here writes a block.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::pool::{expiry_interval, Pool, PoolError, QueueLimits};
use super::state::{Account, State, StateError};
use super::{Chain, ChainError};
use crate::crypto::Address;
use crate::events::Event;
use crate::types::transaction::Transaction;

/// Most accounts the admission cache keeps before it starts over.
pub(super) const ACCOUNT_CACHE_LIMIT: usize = 1 << 20;

/// What admitting a transaction reads and changes, behind one lock: the pool, and the
/// accounts as the pool must see them.
#[derive(Default)]
pub(super) struct Admission {
    pub(super) pool: Pool,
    /// Accounts as of the head block, read once and kept (the sealer updates those a block
    /// changes), so that checking a transaction rarely walks the trie.
    pub(super) accounts: HashMap<Address, Account>,
    /// The accounts that the block being sealed changes, as they will be: the pool checks
    /// against the state after that block from the moment it took the block's transactions.
    pub(super) in_flight: HashMap<Address, Account>,
    /// The transactions of the block being sealed, by hash (no longer pending, not yet
    /// stored).
    pub(super) sealing: HashMap<[u8; 32], (Transaction, Address)>,
}

/// Why a submitted transaction was refused.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    #[error(transparent)]
    Pool(#[from] PoolError),
    #[error("locally anchoring chaindata tx is not allowed in this node")]
    LocalAnchor,
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl Chain {
    /// The pool and its account view, locked.
    pub(super) fn admission(&self) -> std::sync::MutexGuard<'_, Admission> {
        self.admission.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `address`'s account as the pool sees it: after the block being sealed, if any,
    /// else as of the head. Read from the trie at most once per head.
    pub(super) fn admission_account(
        &self,
        adm: &mut Admission,
        address: &Address,
    ) -> Result<Account, StateError> {
        if let Some(a) = adm.in_flight.get(address) {
            return Ok(a.clone());
        }
        if let Some(a) = adm.accounts.get(address) {
            return Ok(a.clone());
        }
        let root = self.head().header.state_root;
        let nodes = self.db_nodes();
        let a = State::at(&nodes, root).account(address)?;
        if adm.accounts.len() >= ACCOUNT_CACHE_LIMIT {
            adm.accounts.clear();
        }
        adm.accounts.insert(*address, a.clone());
        Ok(a)
    }

    /// Moves the queued transactions that the head's accounts now allow to pending.
    pub(super) fn promote_queued(&self, adm: &mut Admission) -> Vec<[u8; 32]> {
        if adm.pool.queued_len() == 0 {
            return Vec::new();
        }
        let Admission { pool, accounts, .. } = adm;
        let root = self.head().header.state_root;
        let nodes = self.db_nodes();
        let state = State::at(&nodes, root);
        pool.promote(|a| match accounts.get(a) {
            Some(acct) => Some(acct.clone()),
            None => state.account(a).ok(),
        })
    }

    /// Checks `tx` against the head state (after the block being sealed) and adds it to the
    /// pool, pending or queued; its hash.
    pub fn submit(&self, tx: Transaction) -> Result<[u8; 32], SubmitError> {
        // Signatures are recovered before the lock is taken (libsecp256k1, once; a fee
        // payer's in `submit_recovered`).
        let signers = tx.recovered();
        self.submit_recovered(tx, signers)
    }

    /// Takes chain-data anchoring transactions from this node's users too (off by default,
    /// as the reference's `--txpool.allow-local-anchortx`).
    pub fn allow_local_anchor(&self, allow: bool) {
        self.allow_local_anchor
            .store(allow, std::sync::atomic::Ordering::Relaxed);
    }

    /// Sets the queue's limits (`--txpool.nonexec-slots.*`, `--txpool.lifetime`); at
    /// start-up.
    pub fn set_queue_limits(&self, limits: QueueLimits) {
        self.admission().pool.set_limits(limits);
    }

    /// Drops the queued transactions of senders idle for the queue's lifetime; how many.
    pub fn expire_queued(&self) -> usize {
        self.admission()
            .pool
            .expire(std::time::Instant::now())
            .len()
    }

    /// [`Chain::submit`] of a transaction from this node's own users (the RPC): a chain-data
    /// anchoring transaction is refused unless allowed.
    pub fn submit_local(&self, tx: Transaction) -> Result<[u8; 32], SubmitError> {
        if tx.base() == Some(crate::types::transaction::Base::ChainDataAnchoring)
            && !self
                .allow_local_anchor
                .load(std::sync::atomic::Ordering::Relaxed)
        {
            return Err(SubmitError::LocalAnchor);
        }
        self.submit(tx)
    }

    /// [`Chain::submit`] of a transaction whose signers were recovered before (a pending
    /// transaction checked again after the head moved keeps them: no second recovery).
    /// A fee payer's signers are recovered here, before the lock is taken: a recovery under
    /// it (about 35 µs) would hold up every other submission and the sealer.
    pub(crate) fn submit_recovered(
        &self,
        tx: Transaction,
        signers: Result<Vec<crate::types::account_key::Signer>, crate::types::transaction::TxError>,
    ) -> Result<[u8; 32], SubmitError> {
        let fee_payer_signers = tx.recovered_fee_payer();
        let mut adm = self.admission();
        let (hash, pending) = self.admit(&mut adm, tx, signers, fee_payer_signers)?;
        drop(adm);
        if pending {
            self.publish(Event::PendingTransaction(hash));
        }
        Ok(hash)
    }

    /// Adds `tx`, its signers and its fee payer's recovered, to the pool under the lock
    /// `adm`; its hash and whether it is pending.
    pub(super) fn admit(
        &self,
        adm: &mut Admission,
        tx: Transaction,
        signers: Result<Vec<crate::types::account_key::Signer>, crate::types::transaction::TxError>,
        fee_payer_signers: Result<
            Vec<crate::types::account_key::Signer>,
            crate::types::transaction::TxError,
        >,
    ) -> Result<([u8; 32], bool), SubmitError> {
        let sender = match (tx.from(), &signers) {
            (Some(from), _) => Some(from),
            (None, Ok(s)) => s.first().map(|s| s.address),
            (None, Err(_)) => None,
        };
        // The sender's and the fee payer's accounts are in the view before the pool asks
        // for them (the fee payer's is read for every transaction it pays for).
        let read = sender
            .iter()
            .chain(tx.fee_payer().as_ref())
            .try_for_each(|a| self.admission_account(adm, a).map(|_| ()));
        let (in_flight, accounts) = (&adm.in_flight, &adm.accounts);
        let head_root = self.head().header.state_root;
        let nodes = self.db_nodes();
        Ok(adm.pool.add(
            tx,
            signers,
            fee_payer_signers,
            self.chain_id(),
            self.unit_price(),
            |a| {
                if let Err(e) = &read {
                    return Err(e.to_string());
                }
                match in_flight.get(a).or_else(|| accounts.get(a)) {
                    Some(acct) => Ok(acct.clone()),
                    None => State::at(&nodes, head_root)
                        .account(a)
                        .map_err(|e| e.to_string()),
                }
            },
        )?)
    }

    /// The nonce lock of `sender`: held by a send method from before it reads the pending
    /// nonce until the pool has answered, so that concurrent sends get consecutive nonces.
    pub fn nonce_lock(&self, sender: &Address) -> Arc<Mutex<()>> {
        let mut locks = self.nonce_locks.lock().unwrap_or_else(|p| p.into_inner());
        // Locks nobody holds or waits for are dropped, so the table stays small.
        locks.retain(|_, l| Arc::strong_count(l) > 1);
        locks.entry(*sender).or_default().clone()
    }

    /// The pending transactions with their senders, in arrival order.
    pub fn pending(&self) -> Vec<(Transaction, Address)> {
        self.admission().pool.pending_list()
    }

    /// The signed bytes (as `chain_sendRawTransaction` takes them) of those of `hashes` that
    /// are in the pool, pending or queued, with their hashes, in the order asked; the others
    /// are left out. What the peers are sent.
    pub fn pending_raw(&self, hashes: &[[u8; 32]]) -> Vec<([u8; 32], Vec<u8>)> {
        let found: Vec<([u8; 32], Transaction)> = {
            let adm = self.admission();
            hashes
                .iter()
                .filter_map(|h| adm.pool.find(h).map(|p| (*h, p.tx.clone())))
                .collect()
        };
        // Encoded outside the pool's lock.
        found.into_iter().map(|(h, tx)| (h, tx.encode())).collect()
    }

    /// The hashes of the pending transactions, in arrival order.
    pub fn pending_hashes(&self) -> Vec<[u8; 32]> {
        self.admission().pool.pending_hashes()
    }

    /// How many transactions are pending and queued.
    pub fn pool_counts(&self) -> (usize, usize) {
        let adm = self.admission();
        (adm.pool.len(), adm.pool.queued_len())
    }

    /// The queued transactions (waiting for an earlier nonce) with their senders.
    pub fn queued(&self) -> Vec<(Transaction, Address)> {
        self.admission().pool.queued_list()
    }

    /// The next nonce of `address`, counting its pending transactions.
    pub fn pending_nonce(&self, address: &Address) -> Result<u64, ChainError> {
        let mut adm = self.admission();
        let nonce = self.admission_account(&mut adm, address)?.nonce;
        Ok(adm.pool.next_nonce(address, nonce))
    }
}

/// The service that drops idle queues: every [`expiry_interval`] of the lifetime (the
/// reference's eviction ticker).
pub struct QueueExpiry {
    chain: Arc<Chain>,
    worker: Option<crate::service::Worker>,
}

impl QueueExpiry {
    pub fn new(chain: Arc<Chain>) -> QueueExpiry {
        QueueExpiry {
            chain,
            worker: None,
        }
    }
}

impl crate::service::Service for QueueExpiry {
    fn name(&self) -> &'static str {
        "txpool-expiry"
    }

    fn start(&mut self) -> Result<(), String> {
        let chain = self.chain.clone();
        let every = expiry_interval(chain.admission().pool.limits().lifetime);
        self.worker = Some(crate::service::Worker::periodic(
            "txpool-expiry",
            every,
            move || {
                let n = chain.expire_queued();
                if n > 0 {
                    crate::log::debug(
                        "Dropped idle queued transactions",
                        &[("count", &n.to_string())],
                    );
                }
            },
        )?);
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
    use crate::chain::genesis::Genesis;
    use crate::chain::Chain;
    use crate::crypto::{Address, SecretKey};
    use crate::types::transaction::Transaction;

    /// A transfer signed with the key an account update still pending installs is taken (and
    /// one with the old key refused), sealed in the update's block, and the block imports on
    /// another node: the pool checks what the block will run.
    #[test]
    fn after_a_pending_update_the_new_key_signs() {
        use crate::types::account_key::AccountKey;
        use crate::types::transaction::{AccountUpdate, ValueTransfer};
        let v = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let new = SecretKey::from_slice(&[0x47; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let g = Genesis::dev(v.address(), funds);
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &g).unwrap();
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        let mut update = Transaction::of(AccountUpdate {
            nonce: 0,
            gas_price: price,
            gas: 100_000,
            from: v.address(),
            key: AccountKey::Public(new.public_compressed()),
            signatures: Vec::new(),
        });
        update.sign(&v, chain.chain_id());
        chain.submit(update).unwrap();
        let transfer = |k: &SecretKey| {
            let mut t = Transaction::of(ValueTransfer {
                nonce: 1,
                gas_price: price,
                gas: 100_000,
                to: Address([0x35; 20]),
                value: [0; 32],
                from: v.address(),
                signatures: Vec::new(),
            });
            t.sign(k, chain.chain_id());
            t
        };
        assert_eq!(
            chain.submit(transfer(&v)).unwrap_err().to_string(),
            "invalid sender: invalid account key"
        );
        chain.submit(transfer(&new)).unwrap();
        chain.seal(&v).unwrap().unwrap();
        let b = chain.block_by_number(Some(1)).unwrap().unwrap();
        assert_eq!(b.transactions.len(), 2);
        let block = crate::types::block::Block {
            header: b.header,
            transactions: b.transactions.into_iter().map(|(t, _)| t).collect(),
        };
        let other = tempfile::tempdir().unwrap();
        let twin = Chain::open(other.path(), &g).unwrap();
        assert_eq!(twin.insert_blocks(&[block]).unwrap().new, 1);
        assert_eq!(twin.head_hash(), chain.head_hash());
    }

    /// A fee-delegated transfer is checked with the fee payer's signature recovered before
    /// the pool's lock: taken when the fee payer signed it and can pay, refused with the
    /// reference's texts when another key signed, no key signed, the signature's V is not
    /// one, or the fee payer cannot pay; a refusal leaves the pool empty. The one taken runs
    /// with its fee paid by the fee payer alone.
    #[test]
    fn a_fee_payer_signs_and_pays() {
        use crate::types::transaction::{FeeMode, ValueTransfer};
        let payer = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let sender = SecretKey::from_slice(&[0x47; 32]).unwrap();
        let poor = SecretKey::from_slice(&[0x48; 32]).unwrap();
        let validator = SecretKey::from_slice(&[0x49; 32]).unwrap();
        let mut funds = [0u8; 32];
        funds[20] = 1;
        let mut g = Genesis::dev(validator.address(), [0; 32]);
        g.alloc.insert(payer.address(), funds);
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &g).unwrap();
        let id = chain.chain_id();
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
        // The sender holds nothing: the value is 0 and the fee payer pays all the fee.
        let delegated = |fee_payer: &SecretKey, signer: Option<&SecretKey>| {
            let mut t = Transaction::of(ValueTransfer {
                nonce: 0,
                gas_price: price,
                gas: 31_000,
                to: Address([0x35; 20]),
                value: [0; 32],
                from: sender.address(),
                signatures: Vec::new(),
            });
            let Transaction::Native(n) = &mut t else {
                unreachable!("a value transfer is native")
            };
            n.fee_mode = FeeMode::Delegated;
            n.fee_payer = fee_payer.address();
            t.sign(&sender, id);
            if let Some(k) = signer {
                assert!(t.sign_as_fee_payer(k, id));
            }
            t
        };
        let refused = |t: Transaction| chain.submit(t).unwrap_err().to_string();
        assert_eq!(
            refused(delegated(&payer, Some(&poor))),
            "invalid fee payer: invalid account key"
        );
        assert_eq!(
            refused(delegated(&payer, None)),
            "invalid fee payer: invalid account key"
        );
        let mut bad_v = delegated(&payer, Some(&payer));
        let Transaction::Native(n) = &mut bad_v else {
            unreachable!("a value transfer is native")
        };
        n.fee_payer_signatures[0].v = 0;
        assert_eq!(
            refused(bad_v),
            "invalid fee payer: invalid transaction v, r, s values"
        );
        assert_eq!(
            refused(delegated(&poor, Some(&poor))),
            "insufficient funds of the fee payer for gas * price"
        );
        assert_eq!(chain.pool_counts(), (0, 0));

        chain.submit(delegated(&payer, Some(&payer))).unwrap();
        assert_eq!(chain.pool_counts(), (1, 0));
        chain.seal(&validator).unwrap().unwrap();
        let after = |k: &SecretKey| chain.account(&k.address(), None).unwrap().unwrap();
        assert_eq!(after(&sender).nonce, 1);
        assert_eq!(after(&sender).balance, [0; 32]);
        // 31,000 gas (21,000 and 10,000 for the fee payer) at 25 ston, from the payer to the
        // validator (the rewardbase).
        let fee = 31_000u128 * 25_000_000_000;
        let mut left = funds;
        left[16..].copy_from_slice(&((1u128 << 88) - fee).to_be_bytes());
        assert_eq!(after(&payer).balance, left);
        let mut reward = [0u8; 32];
        reward[16..].copy_from_slice(&fee.to_be_bytes());
        assert_eq!(after(&validator).balance, reward);
    }
}
