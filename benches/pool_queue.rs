//! The pool's queue when it is full (issue 21, "Hardening", part 3): what a gapped
//! transaction from a new sender costs under the pool's lock, where each one evicts the
//! highest nonce of the idlest sender, and what dropping every idle queue costs.
//!
//! The queue is filled to its default cap (1,024: 16 senders x 64, the per-sender share)
//! beside `POOL_PENDING_SENDERS` senders with one pending transaction each (default
//! 100,000): the eviction must not grow with the senders that have nothing queued. Then
//! `POOL_NEWCOMERS` (default 5,000) new senders each add one gapped transaction, timed one
//! by one around `Pool::add` only (signatures are made and recovered before). Reported: the
//! median and the 99th percentile in µs, then `Pool::expire` of the full queue in ms.
//!
//! Run: `cargo bench --bench pool_queue` (POOL_PENDING_SENDERS=0 for the queue alone).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/stats.rs"]
mod stats;

use std::time::{Duration, Instant};

use chain_node::chain::pool::{Pool, QueueLimits};
use chain_node::chain::state::Account;
use chain_node::crypto::{Address, SecretKey};
use chain_node::types::transaction::Transaction;

const CHAIN: u64 = 1000;

/// `tx` added to `pool` against a funded account at nonce 0.
fn add(pool: &mut Pool, tx: Transaction, signers: Vec<chain_node::types::account_key::Signer>) {
    let funded = Account {
        balance: common::u256(10u128.pow(24)),
        ..Account::default()
    };
    let fee_payer = tx.recovered_fee_payer();
    pool.add(
        tx,
        Ok(signers),
        fee_payer,
        CHAIN,
        common::PRICE as u64,
        |_| Ok(funded.clone()),
    )
    .expect("accepted");
}

/// Transfers of `keys[i]` at `nonce`, with their recovered signers.
fn signed(
    keys: &[SecretKey],
    nonce: u64,
) -> Vec<(Transaction, Vec<chain_node::types::account_key::Signer>)> {
    keys.iter()
        .map(|k| {
            let t = common::transfer_tx(k, nonce, Address([0x35; 20]), 1, common::PRICE, CHAIN);
            let s = t.recovered().expect("signed");
            (t, s)
        })
        .collect()
}

fn main() {
    let pending_senders: u64 = common::env_or("POOL_PENDING_SENDERS", 100_000);
    let newcomers: u64 = common::env_or("POOL_NEWCOMERS", 5_000);
    let limits = QueueLimits::default();
    let keys = common::numbered_keys(pending_senders + 16 + newcomers);
    let (pending, rest) = keys.split_at(pending_senders as usize);
    let (fillers, fresh) = rest.split_at(16);
    eprintln!("signing {} transactions", keys.len() + 16 * 63);
    let pending = signed(pending, 0);
    let fill: Vec<_> = (1..=limits.account_slots as u64)
        .flat_map(|n| signed(fillers, n))
        .collect();
    let fresh = signed(fresh, 1);

    let mut pool = Pool::default();
    pool.set_limits(limits);
    for (t, s) in pending.into_iter().chain(fill) {
        add(&mut pool, t, s);
    }
    assert_eq!(
        (pool.len(), pool.queued_len()),
        (pending_senders as usize, limits.all_slots)
    );
    let mut micros = Vec::with_capacity(fresh.len());
    for (t, s) in fresh {
        let start = Instant::now();
        add(&mut pool, t, s);
        micros.push(start.elapsed().as_secs_f64() * 1e6);
    }
    assert_eq!(pool.queued_len(), limits.all_slots, "each one evicted one");
    micros.sort_by(f64::total_cmp);
    let p99 = micros[(micros.len() * 99 / 100).min(micros.len() - 1)];
    println!(
        "pool_queue: {pending_senders} pending senders, queue full ({}): a newcomer's gapped add median {:.2} µs, p99 {:.2} µs ({} adds)",
        limits.all_slots,
        stats::median(&micros),
        p99,
        micros.len()
    );
    let start = Instant::now();
    let dropped = pool.expire(Instant::now() + limits.lifetime + Duration::from_secs(1));
    println!(
        "pool_queue: expire of {} queued transactions: {:.3} ms; {} pending stay",
        dropped.len(),
        start.elapsed().as_secs_f64() * 1e3,
        pool.len()
    );
}
