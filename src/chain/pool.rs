//! The transaction pool: checks each transaction fully (`validate::check_recovered`: chain
//! id, unit price, size, signature against the sender's account key, intrinsic gas) and
//! keeps it as
//!
//! - **pending** when its nonce is its sender's next one (counting the sender's pending
//!   transactions) and the sender's balance, less what its earlier pending transactions cost,
//!   covers it: a block takes every pending transaction, each sender's in nonce order;
//! - **queued** when its nonce is further ahead (at most [`MAX_NONCE_AHEAD`]): it waits, its
//!   signature and key already checked, until the transactions before it arrive; then it
//!   becomes pending (its cost checked against what is left then; one that no longer fits
//!   stays queued, and so do those after it).
//!
//! Replacement follows the reference before its KIP-71 fork, which this chain runs (the gas
//! price is the fixed unit price, so no transaction can outbid another): a transaction with
//! the nonce of one already in the pool, pending or queued, is refused with `there is another
//! tx which has the same nonce in the tx pool`.
//!
//! Limits: [`MAX_PER_SENDER`] transactions of one sender (pending and queued) and
//! [`MAX_PENDING`] pending in all (`txpool is full`, the reference's text); the queue has its
//! own, with eviction and expiry (`queue.rs`, [`QueueLimits`]).
//!
//! Signatures, the sender's and a fee payer's, are recovered before the pool's lock is taken;
//! the sender's signers are kept.

mod queue;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::state::{add, sub, Account};
use super::validate::{check_recovered, InvalidTransaction};
use crate::crypto::Address;
use crate::types::account_key::{AccountKey, Signer};
use crate::types::transaction::{Transaction, TxError, U256};
pub use queue::{expiry_interval, QueueLimits};

/// Most transactions pending at once.
pub const MAX_PENDING: usize = 200_000;
/// Most transactions of one sender in the pool, pending and queued.
pub const MAX_PER_SENDER: usize = 16_384;
/// How far ahead of its sender's next nonce a transaction may be queued.
pub const MAX_NONCE_AHEAD: u64 = 4_096;

/// A transaction the pool accepted, with what checking it established.
#[derive(Debug, Clone)]
pub struct Pending {
    pub tx: Transaction,
    pub hash: [u8; 32],
    pub sender: Address,
    /// Intrinsic plus key-validation gas: what the transaction uses when it runs no code.
    pub gas_used: u64,
    /// The key-validation gas alone (the sender's and a fee payer's).
    pub validation_gas: u64,
    /// A fee payer's key-validation gas (part of `validation_gas`).
    pub fee_payer_gas: u64,
    /// What the sender must hold for it (`validate::Checked::cost`).
    pub cost: U256,
    /// The recovered signers, kept to check the transaction again against the account key
    /// in force when it becomes pending.
    pub signers: Vec<Signer>,
}

/// Why the pool refused a transaction (the reference's texts): a rule of every transaction
/// broken (`validate`), or what only a pool refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    #[error(transparent)]
    Invalid(#[from] InvalidTransaction),
    #[error("nonce too low")]
    NonceTooLow,
    #[error("nonce too high: the next nonce of the sender is {next}, and a transaction may wait at most {} nonces ahead of it", MAX_NONCE_AHEAD)]
    NonceTooHigh { next: u64 },
    /// The hash in hex without `0x`, as the reference's `%x` prints it.
    #[error("known transaction: {0}")]
    Known(String),
    #[error("there is another tx which has the same nonce in the tx pool")]
    SameNonce,
    #[error("txpool is full")]
    Full,
    /// The sender's share of the queue is taken by lower nonces (`queue.rs`).
    #[error("txpool is full: the sender already has {0} queued transactions, the most one sender may have")]
    SenderQueueFull(usize),
    #[error(
        "the sender has {} transactions in the pool, the most one sender may have",
        MAX_PER_SENDER
    )]
    SenderFull,
}

/// A sender as its pending transactions leave it.
#[derive(Debug, Clone)]
struct View {
    /// The next nonce after the pending transactions.
    next: u64,
    /// The balance they leave.
    left: U256,
    /// The account key in force after them (a pending account update changes it).
    key: AccountKey,
    /// The account key at the head, before them.
    head_key: AccountKey,
}

/// One sender's transactions.
#[derive(Debug, Default)]
struct Sender {
    pending: BTreeMap<u64, Pending>,
    queued: BTreeMap<u64, Pending>,
    /// `None` until the sender's account is read after the last block (then nothing is
    /// pending).
    view: Option<View>,
    /// When its queue last saw activity; set whenever something is queued.
    beat: Option<queue::Beat>,
    /// The heartbeat under which the sender is in [`Pool::idle`], if it is.
    indexed: Option<u64>,
}

/// Whether `p` may run under `key`: its signatures against the key for its role, and its
/// gas against what validating them costs (the checks of `validate::check_tx` that depend on
/// the key).
fn fits_key(p: &Pending, key: &AccountKey) -> bool {
    let role = p.tx.role();
    let valid = match (p.tx.from(), p.tx.account_update_key()) {
        (None, _) => *key == AccountKey::Legacy,
        (Some(_), Some(new)) => {
            key.validates(role, p.sender, &p.signers) && key.replaced_by(new).is_ok()
        }
        (Some(_), None) => key.validates(role, p.sender, &p.signers),
    };
    valid
        && p.tx.gas()
            >= p.tx.intrinsic_gas() + key.validation_gas(role, p.signers.len()) + p.fee_payer_gas
}

/// The key in force after `p` runs under `key`.
fn key_after(p: &Pending, key: AccountKey) -> AccountKey {
    match p.tx.account_update_key() {
        Some(new) => key.replaced_by(new).unwrap_or(key),
        None => key,
    }
}

/// The pool's content.
#[derive(Debug, Default)]
pub struct Pool {
    senders: HashMap<Address, Sender>,
    /// Every transaction in the pool: its sender and nonce.
    by_hash: HashMap<[u8; 32], (Address, u64)>,
    /// The pending transactions in the order they became pending.
    arrivals: Vec<(Address, u64)>,
    queued: usize,
    limits: QueueLimits,
    /// Heartbeats given so far (orders them).
    beats: u64,
    /// The senders with queued transactions by heartbeat, the idlest first (`queue.rs`).
    idle: BTreeSet<(u64, Address)>,
}

impl Pool {
    /// Transactions pending.
    pub fn len(&self) -> usize {
        self.arrivals.len()
    }

    /// Whether nothing is pending (queued transactions do not count: no block can take
    /// them).
    pub fn is_empty(&self) -> bool {
        self.arrivals.is_empty()
    }

    /// Transactions queued.
    pub fn queued_len(&self) -> usize {
        self.queued
    }

    /// Takes every pending transaction, each sender's in nonce order (for a block). Queued
    /// ones stay. From now on the callers' accounts are those after these transactions.
    pub fn take(&mut self) -> Vec<Pending> {
        let mut out = Vec::with_capacity(self.arrivals.len());
        for (sender, nonce) in std::mem::take(&mut self.arrivals) {
            let Some(s) = self.senders.get_mut(&sender) else {
                continue;
            };
            if let Some(p) = s.pending.remove(&nonce) {
                self.by_hash.remove(&p.hash);
                out.push(p);
            }
        }
        self.senders.retain(|_, s| {
            s.view = None;
            !s.queued.is_empty()
        });
        out
    }

    /// Moves queued transactions that have become executable to pending, given the accounts
    /// as they are now (`account`), and drops those whose nonce is behind their sender's.
    /// Returns the hashes that became pending.
    pub fn promote(
        &mut self,
        mut account: impl FnMut(&Address) -> Option<Account>,
    ) -> Vec<[u8; 32]> {
        let mut promoted = Vec::new();
        let waiting: Vec<Address> = self
            .senders
            .iter()
            .filter(|(_, s)| s.view.is_none() && !s.queued.is_empty())
            .map(|(a, _)| *a)
            .collect();
        for a in waiting {
            let Some(acct) = account(&a) else { continue };
            let s = self.senders.get_mut(&a).expect("listed above");
            let stale: Vec<u64> = s.queued.range(..acct.nonce).map(|(n, _)| *n).collect();
            for n in stale {
                if let Some(p) = s.queued.remove(&n) {
                    self.by_hash.remove(&p.hash);
                    self.queued -= 1;
                }
            }
            s.view = Some(View {
                next: acct.nonce,
                left: acct.balance,
                key: acct.key.clone(),
                head_key: acct.key,
            });
            let mut dropped = Vec::new();
            let moved = Self::advance(s, a, &mut self.arrivals, &mut self.queued, &mut dropped);
            if !moved.is_empty() {
                s.beat = Some(queue::Beat::next(&mut self.beats));
            }
            promoted.extend(moved);
            for h in dropped {
                self.by_hash.remove(&h);
            }
            self.reindex(a);
        }
        self.senders
            .retain(|_, s| !s.queued.is_empty() || !s.pending.is_empty() || s.view.is_some());
        promoted
    }

    /// Moves `s`'s queued transactions that follow its pending ones, while its balance
    /// covers them.
    fn advance(
        s: &mut Sender,
        sender: Address,
        arrivals: &mut Vec<(Address, u64)>,
        queued: &mut usize,
        dropped: &mut Vec<[u8; 32]>,
    ) -> Vec<[u8; 32]> {
        let mut moved = Vec::new();
        while let Some(view) = s.view.as_mut() {
            let next = view.next;
            let Some(p) = s.queued.get(&next) else { break };
            if !fits_key(p, &view.key) {
                // Signed for a key the account no longer has: it can never run.
                let p = s.queued.remove(&next).expect("just seen");
                *queued -= 1;
                dropped.push(p.hash);
                break;
            }
            let Some(rest) = sub(&view.left, &p.cost) else {
                break;
            };
            let mut p = s.queued.remove(&next).expect("just seen");
            *queued -= 1;
            moved.push(p.hash);
            let role = p.tx.role();
            p.validation_gas = view.key.validation_gas(role, p.signers.len()) + p.fee_payer_gas;
            p.gas_used = p.tx.intrinsic_gas() + p.validation_gas;
            view.next = next + 1;
            view.left = rest;
            view.key = key_after(&p, std::mem::replace(&mut view.key, AccountKey::Legacy));
            s.pending.insert(next, p);
            arrivals.push((sender, next));
        }
        moved
    }

    /// The pending transactions with their senders, in the order they became pending.
    pub fn pending_list(&self) -> Vec<(Transaction, Address)> {
        self.arrivals
            .iter()
            .filter_map(|(a, n)| self.senders.get(a)?.pending.get(n))
            .map(|p| (p.tx.clone(), p.sender))
            .collect()
    }

    /// The hashes of the pending transactions, in the order they became pending.
    pub fn pending_hashes(&self) -> Vec<[u8; 32]> {
        self.arrivals
            .iter()
            .filter_map(|(a, n)| self.senders.get(a)?.pending.get(n))
            .map(|p| p.hash)
            .collect()
    }

    /// The queued transactions with their senders, by sender and nonce.
    pub fn queued_list(&self) -> Vec<(Transaction, Address)> {
        let mut out = Vec::with_capacity(self.queued);
        for (a, s) in &self.senders {
            out.extend(s.queued.values().map(|p| (p.tx.clone(), *a)));
        }
        out
    }

    /// The transaction with this hash, pending or queued.
    pub fn find(&self, hash: &[u8; 32]) -> Option<&Pending> {
        let (a, n) = self.by_hash.get(hash)?;
        let s = self.senders.get(a)?;
        s.pending.get(n).or_else(|| s.queued.get(n))
    }

    /// The next nonce of `sender` counting the pending transactions, given its state nonce.
    pub fn next_nonce(&self, sender: &Address, state_nonce: u64) -> u64 {
        self.senders
            .get(sender)
            .and_then(|s| s.view.as_ref())
            .map_or(state_nonce, |v| v.next)
    }

    /// Checks `tx`, whose signers and fee payer's signers were recovered beforehand
    /// (`Transaction::recovered`, `Transaction::recovered_fee_payer`, outside the pool's
    /// lock: it is the costly part), against the accounts as of the head (after any block
    /// being written) that `account` reads, and adds it as pending or queued. Returns its
    /// hash and whether it is pending.
    pub fn add(
        &mut self,
        tx: Transaction,
        signers: Result<Vec<Signer>, TxError>,
        fee_payer_signers: Result<Vec<Signer>, TxError>,
        chain_id: u64,
        unit_price: u64,
        account: impl Fn(&Address) -> Result<Account, String>,
    ) -> Result<([u8; 32], bool), PoolError> {
        let raw = tx.encode();
        let hash = tx.hash();
        if self.by_hash.contains_key(&hash) {
            return Err(PoolError::Known(hex::encode(hash)));
        }
        // The sender's key is the one its pending transactions leave in force (an account
        // update among them changes it), as the block will run them.
        let sender = match (tx.from(), &signers) {
            (Some(from), _) => Some(from),
            (None, Ok(s)) => s.first().map(|s| s.address),
            (None, Err(_)) => None,
        };
        let in_force = sender
            .and_then(|a| self.senders.get(&a))
            .and_then(|s| s.view.as_ref())
            .map(|v| v.key.clone());
        let (checked, acct) = check_recovered(
            &tx,
            signers.as_deref(),
            fee_payer_signers.as_deref(),
            chain_id,
            unit_price,
            raw.len(),
            |a| {
                let mut acct = account(a)?;
                if let Some(k) = in_force.as_ref().filter(|_| Some(*a) == sender) {
                    acct.key = k.clone();
                }
                Ok(acct)
            },
        )?;
        let signers = signers.unwrap_or_default();
        let s = self.senders.entry(checked.sender).or_default();
        let view = s
            .view
            .get_or_insert_with(|| View {
                next: acct.nonce,
                left: acct.balance,
                key: acct.key.clone(),
                head_key: acct.key.clone(),
            })
            .clone();
        let (next, left) = (view.next, view.left);
        let nonce = checked.nonce;
        // A cancel takes the place of the sender's transaction of the same nonce, whatever
        // their prices (the reference's `txList.Add`).
        let cancel = tx.base() == Some(crate::types::transaction::Base::Cancel);
        if cancel && (s.pending.contains_key(&nonce) || s.queued.contains_key(&nonce)) {
            let entry = Pending {
                tx,
                hash,
                sender: checked.sender,
                gas_used: checked.gas_used,
                validation_gas: checked.validation_gas,
                fee_payer_gas: checked.fee_payer_gas,
                cost: checked.cost,
                signers,
            };
            let pending = s.pending.contains_key(&nonce);
            let old = if pending {
                let old = s.pending.get(&nonce).expect("just seen");
                let mut rest = add(&left, &old.cost)
                    .and_then(|l| sub(&l, &entry.cost))
                    .ok_or(InvalidTransaction::InsufficientFunds)?;
                let mut next = next;
                // A cancelled account update leaves the key as it was: the sender's later
                // pending transactions, checked against the new key, leave the pool.
                if old.tx.account_update_key().is_some() {
                    let later: Vec<u64> = s.pending.range(nonce + 1..).map(|(n, _)| *n).collect();
                    for n in later {
                        let p = s.pending.remove(&n).expect("just listed");
                        rest = add(&rest, &p.cost).unwrap_or(rest);
                        self.by_hash.remove(&p.hash);
                    }
                    let who = checked.sender;
                    self.arrivals.retain(|(a, n)| *a != who || *n <= nonce);
                    next = nonce + 1;
                }
                let old = s.pending.insert(nonce, entry).expect("just seen");
                let key = s
                    .pending
                    .values()
                    .fold(view.head_key.clone(), |k, p| key_after(p, k));
                s.view = Some(View {
                    next,
                    left: rest,
                    key,
                    head_key: view.head_key.clone(),
                });
                old
            } else {
                s.queued.insert(nonce, entry).expect("just seen")
            };
            self.by_hash.remove(&old.hash);
            self.by_hash.insert(hash, (checked.sender, nonce));
            return Ok((hash, pending));
        }
        if nonce < next {
            return Err(if s.pending.contains_key(&nonce) {
                PoolError::SameNonce
            } else {
                PoolError::NonceTooLow
            });
        }
        if s.queued.contains_key(&nonce) {
            return Err(PoolError::SameNonce);
        }
        if s.pending.len() + s.queued.len() >= MAX_PER_SENDER {
            return Err(PoolError::SenderFull);
        }
        let entry = Pending {
            tx,
            hash,
            sender: checked.sender,
            gas_used: checked.gas_used,
            validation_gas: checked.validation_gas,
            fee_payer_gas: checked.fee_payer_gas,
            cost: checked.cost,
            signers,
        };
        if nonce > next {
            if nonce - next > MAX_NONCE_AHEAD {
                return Err(PoolError::NonceTooHigh { next });
            }
            // It must be affordable on its own now; what the transactions before it will
            // leave, and the key then in force, are checked when it becomes pending.
            if sub(&acct.balance, &checked.cost).is_none() {
                return Err(InvalidTransaction::InsufficientFunds.into());
            }
            self.make_room(checked.sender, nonce)?;
            let s = self.senders.entry(checked.sender).or_default();
            if s.queued.is_empty() {
                s.beat = Some(queue::Beat::next(&mut self.beats));
            }
            s.queued.insert(nonce, entry);
            self.queued += 1;
            self.by_hash.insert(hash, (checked.sender, nonce));
            self.reindex(checked.sender);
            return Ok((hash, false));
        }
        if self.arrivals.len() >= MAX_PENDING {
            return Err(PoolError::Full);
        }
        let rest = sub(&left, &checked.cost).ok_or(InvalidTransaction::InsufficientFunds)?;
        let key = key_after(&entry, view.key);
        s.pending.insert(nonce, entry);
        s.view = Some(View {
            next: next + 1,
            left: rest,
            key,
            head_key: view.head_key,
        });
        // A sender whose transactions become pending is active: its queue is not idle.
        s.beat = Some(queue::Beat::next(&mut self.beats));
        self.arrivals.push((checked.sender, nonce));
        self.by_hash.insert(hash, (checked.sender, nonce));
        let mut dropped = Vec::new();
        Self::advance(
            s,
            checked.sender,
            &mut self.arrivals,
            &mut self.queued,
            &mut dropped,
        );
        for h in dropped {
            self.by_hash.remove(&h);
        }
        self.reindex(checked.sender);
        Ok((hash, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::SecretKey;
    use crate::types::transaction::ValueTransfer;

    const PRICE: u64 = 25_000_000_000;
    const CHAIN: u64 = 1000;

    fn u256(v: u128) -> U256 {
        let mut b = [0u8; 32];
        b[16..].copy_from_slice(&v.to_be_bytes());
        b
    }

    pub(super) fn tx(key: &SecretKey, nonce: u64, value: u128) -> Transaction {
        let mut t = Transaction::of(ValueTransfer {
            nonce,
            gas_price: u256(u128::from(PRICE)),
            gas: 21_000,
            to: Address([0x35; 20]),
            value: u256(value),
            from: key.address(),
            signatures: Vec::new(),
        });
        t.sign(key, CHAIN);
        t
    }

    /// The cost of `tx(_, _, value)`.
    pub(super) fn cost(value: u128) -> u128 {
        u128::from(PRICE) * 21_000 + value
    }

    pub(super) fn add(
        pool: &mut Pool,
        t: Transaction,
        acct: &Account,
    ) -> Result<([u8; 32], bool), PoolError> {
        let (signers, fee_payer_signers) = (t.recovered(), t.recovered_fee_payer());
        pool.add(t, signers, fee_payer_signers, CHAIN, PRICE, |_| {
            Ok(acct.clone())
        })
    }

    pub(super) fn account(nonce: u64, balance: u128) -> Account {
        Account {
            nonce,
            balance: u256(balance),
            ..Account::default()
        }
    }

    fn nonces(list: &[Pending]) -> Vec<u64> {
        list.iter()
            .map(|p| match &p.tx {
                Transaction::Native(t) => t.nonce,
                _ => unreachable!(),
            })
            .collect()
    }

    #[test]
    fn a_gap_waits_queued_and_closes_in_nonce_order() {
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        let acct = account(0, 10 * cost(1));
        let mut pool = Pool::default();
        let (h2, pending) = add(&mut pool, tx(&k, 2, 1), &acct).unwrap();
        assert!(!pending);
        add(&mut pool, tx(&k, 1, 1), &acct).unwrap();
        assert_eq!((pool.len(), pool.queued_len()), (0, 2));
        assert!(pool.is_empty(), "nothing a block could take");
        assert_eq!(pool.next_nonce(&k.address(), 0), 0);
        assert_eq!(pool.find(&h2).unwrap().hash, h2, "a queued one is found");
        let (_, pending) = add(&mut pool, tx(&k, 0, 1), &acct).unwrap();
        assert!(pending);
        assert_eq!((pool.len(), pool.queued_len()), (3, 0));
        assert_eq!(pool.next_nonce(&k.address(), 0), 3);
        let taken = pool.take();
        assert_eq!(nonces(&taken), [0, 1, 2]);
        assert!(pool.find(&h2).is_none());
    }

    #[test]
    fn a_queued_one_the_balance_no_longer_covers_stays_queued() {
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        // Enough for nonce 0 and either of the others, not both.
        let acct = account(0, cost(5) + cost(5) + cost(0) - 1);
        let mut pool = Pool::default();
        add(&mut pool, tx(&k, 1, 5), &acct).unwrap();
        add(&mut pool, tx(&k, 2, 5), &acct).unwrap();
        add(&mut pool, tx(&k, 0, 0), &acct).unwrap();
        assert_eq!((pool.len(), pool.queued_len()), (2, 1));
        assert_eq!(pool.next_nonce(&k.address(), 0), 2);
    }

    #[test]
    fn the_same_nonce_twice_is_refused_pending_or_queued() {
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        let acct = account(0, 10 * cost(9));
        let mut pool = Pool::default();
        let (h, _) = add(&mut pool, tx(&k, 0, 1), &acct).unwrap();
        add(&mut pool, tx(&k, 5, 1), &acct).unwrap();
        assert_eq!(
            add(&mut pool, tx(&k, 0, 1), &acct).unwrap_err(),
            PoolError::Known(hex::encode(h))
        );
        for nonce in [0, 5] {
            let e = add(&mut pool, tx(&k, nonce, 2), &acct).unwrap_err();
            assert_eq!(
                e.to_string(),
                "there is another tx which has the same nonce in the tx pool"
            );
        }
        assert_eq!((pool.len(), pool.queued_len()), (1, 1));
        // A nonce the chain has passed: too low.
        let mut fresh = Pool::default();
        assert_eq!(
            add(&mut fresh, tx(&k, 3, 1), &account(4, 10 * cost(9))).unwrap_err(),
            PoolError::NonceTooLow
        );
    }

    #[test]
    fn limits_and_their_texts() {
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        let acct = account(0, 10 * cost(1));
        let mut pool = Pool::default();
        let far = MAX_NONCE_AHEAD + 1;
        assert_eq!(
            add(&mut pool, tx(&k, far, 1), &acct).unwrap_err().to_string(),
            format!("nonce too high: the next nonce of the sender is 0, and a transaction may wait at most {MAX_NONCE_AHEAD} nonces ahead of it")
        );
        assert_eq!(
            add(&mut pool, tx(&k, 3, 20 * cost(1)), &acct).unwrap_err(),
            PoolError::Invalid(InvalidTransaction::InsufficientFunds),
            "a queued transaction must be affordable on its own"
        );
        let mut full = Pool {
            queued: QueueLimits::default().all_slots,
            ..Pool::default()
        };
        assert_eq!(
            add(&mut full, tx(&k, 1, 1), &acct).unwrap_err().to_string(),
            "txpool is full"
        );
        assert_eq!(pool.len() + pool.queued_len(), 0, "nothing was added");
    }

    #[test]
    fn take_leaves_the_queue_and_promote_moves_what_the_new_state_allows() {
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        let mut pool = Pool::default();
        let acct = account(0, 10 * cost(1));
        add(&mut pool, tx(&k, 0, 1), &acct).unwrap();
        add(&mut pool, tx(&k, 2, 1), &acct).unwrap();
        let (h3, _) = add(&mut pool, tx(&k, 3, 1), &acct).unwrap();
        assert_eq!(nonces(&pool.take()), [0]);
        assert_eq!((pool.len(), pool.queued_len()), (0, 2));
        // Nonce 1 arrives after the block: the queue follows it.
        let after = account(1, 9 * cost(1));
        add(&mut pool, tx(&k, 1, 1), &after).unwrap();
        assert_eq!((pool.len(), pool.queued_len()), (3, 0));
        assert_eq!(nonces(&pool.take()), [1, 2, 3]);
        // A block from elsewhere moved the nonce to 3: nonce 2 is stale, 3 becomes pending.
        let mut pool = Pool::default();
        add(&mut pool, tx(&k, 2, 1), &acct).unwrap();
        add(&mut pool, tx(&k, 3, 1), &acct).unwrap();
        assert!(pool.take().is_empty(), "a block was sealed elsewhere");
        let promoted = pool.promote(|_| Some(account(3, 5 * cost(1))));
        assert_eq!(promoted, vec![h3]);
        assert_eq!((pool.len(), pool.queued_len()), (1, 0));
        assert_eq!(pool.next_nonce(&k.address(), 3), 4);
    }

    /// A queued transaction signed with a key that a pending update replaces is dropped when
    /// its turn comes, never made pending.
    #[test]
    fn a_queued_transaction_for_a_replaced_key_is_dropped() {
        use crate::types::transaction::AccountUpdate;
        let k = SecretKey::from_slice(&[1; 32]).unwrap();
        let new = SecretKey::from_slice(&[2; 32]).unwrap();
        let acct = account(0, 10 * cost(1) + u128::from(PRICE) * 100_000);
        let mut pool = Pool::default();
        let (stale, _) = add(&mut pool, tx(&k, 1, 1), &acct).unwrap();
        assert_eq!(pool.queued_len(), 1);
        let mut update = Transaction::of(AccountUpdate {
            nonce: 0,
            gas_price: u256(u128::from(PRICE)),
            gas: 100_000,
            from: k.address(),
            key: AccountKey::Public(new.public_compressed()),
            signatures: Vec::new(),
        });
        update.sign(&k, CHAIN);
        add(&mut pool, update, &acct).unwrap();
        assert_eq!((pool.len(), pool.queued_len()), (1, 0), "the update only");
        assert!(pool.find(&stale).is_none());
        // Nonce 1 of the account signed with the new key is taken.
        let mut t = tx(&k, 1, 1);
        if let Transaction::Native(v) = &mut t {
            v.signatures.clear();
        }
        t.sign(&new, CHAIN);
        let (_, pending) = add(&mut pool, t, &acct).unwrap();
        assert!(pending);
        assert_eq!(pool.len(), 2);
    }
}
