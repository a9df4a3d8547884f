//! Sealing alone: from a full pool to a committed block (state trie updated and hashed,
//! transaction and receipt roots, the proposer seal, one durable database transaction),
//! in process, on a state of `SEAL_ACCOUNTS` funded accounts (default 100,000).
//!
//! The transfers are signed and admitted to the pool before the clock starts; each round
//! seals one block of `SEAL_BLOCK` transfers (default 10,000) from 1,000 senders to accounts
//! drawn across the whole state, so that every transfer touches a cold path of the trie.
//!
//! Run: `cargo bench --bench chain_seal` (`SEAL_ACCOUNTS`, `SEAL_BLOCK`, `SEAL_ROUNDS`).

#[path = "../tests/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};

const SENDERS: usize = 1_000;

/// The `i`th account of the state (not a key's address: only ever a recipient).
fn account(i: usize) -> Address {
    let mut a = [0x5a; 20];
    a[12..].copy_from_slice(&(i as u64).to_be_bytes());
    Address(a)
}

/// A small pseudo-random sequence, the same on every run.
struct Lcg(u64);
impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 17
    }
}

fn main() {
    let accounts = common::env_or("SEAL_ACCOUNTS", 100_000);
    let block = common::env_or("SEAL_BLOCK", 10_000);
    let rounds = common::env_or("SEAL_ROUNDS", 5);
    let validator = SecretKey::from_slice(&[0x11; 32]).unwrap();
    let senders: Vec<SecretKey> = (0..SENDERS)
        .map(|i| {
            let mut k = [0x22u8; 32];
            k[..8].copy_from_slice(&(i as u64 + 1).to_be_bytes());
            SecretKey::from_slice(&k).unwrap()
        })
        .collect();
    let mut genesis = Genesis::dev(validator.address(), common::u256(1 << 100));
    for i in 0..accounts {
        genesis.alloc.insert(account(i), common::u256(1));
    }
    for s in &senders {
        genesis.alloc.insert(s.address(), common::u256(1 << 100));
    }
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let chain = Chain::open(&dir.path().join("chaindata"), &genesis).unwrap();
    eprintln!(
        "genesis of {} accounts written in {:.2} s",
        genesis.alloc.len(),
        t.elapsed().as_secs_f64()
    );
    let mut price = [0u8; 32];
    price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
    let mut rng = Lcg(7);
    let mut nonces = vec![0u64; SENDERS];
    let mut total = Duration::ZERO;
    let mut sealed = 0usize;
    for round in 0..rounds {
        for i in 0..block {
            let s = i % SENDERS;
            let to = account(rng.next() as usize % accounts);
            let tx = common::transfer_tx(
                &senders[s],
                nonces[s],
                to,
                1,
                common::PRICE,
                chain.chain_id(),
            );
            chain.submit(tx).unwrap();
            nonces[s] += 1;
        }
        let t = Instant::now();
        chain.seal(&validator).unwrap().expect("a block");
        let took = t.elapsed();
        assert!(chain.pending().is_empty());
        eprintln!(
            "round {round}: {block} transfers sealed in {:.1} ms ({:.0} tx/s)",
            took.as_secs_f64() * 1e3,
            block as f64 / took.as_secs_f64()
        );
        if round > 0 {
            // The first round warms the caches; the rest are reported.
            total += took;
            sealed += block;
        }
    }
    if sealed > 0 {
        println!(
            "sealing, {accounts} funded accounts, blocks of {block}: {:.0} tx/s",
            sealed as f64 / total.as_secs_f64()
        );
    }
}
