//! Sync and propagation in process: the peer protocol and the chain without sockets or
//! encryption (`tests/p2p_net`), so the upper bound of what two nodes on loopback reach.
//!
//! - sync of `P2P_EMPTY_BLOCKS` (default 10,000) empty blocks from one node to another;
//! - sync of blocks holding `P2P_TRANSFERS` (default 100,000) transfers, `P2P_BLOCK_TXS`
//!   (default 2,000) a block;
//! - seal to arrival at a peer, and at the far end of a line of 5 nodes, over `P2P_ROUNDS`
//!   (default 200) blocks of one transfer: p50 and p99, from the call to `seal` (which
//!   includes writing the block) and from its return.
//!
//! Run: `cargo bench --bench p2p_sync`.

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "../tests/p2p_net/mod.rs"]
mod p2p_net;

use std::time::{Duration, Instant};

use chain_node::chain::genesis::Genesis;
use chain_node::chain::{genesis_block, Chain};
use chain_node::crypto::{Address, SecretKey};
use chain_node::events::{Event, Kinds};
use chain_node::types::block::Block;
use p2p_net::{connect, Node};

/// Waits for `node` to reach block `number`: seconds since `t`.
fn synced(node: &Node, number: u64, t: Instant) -> f64 {
    while node.head() < number {
        assert!(t.elapsed() < Duration::from_secs(600), "sync stalled");
        std::thread::sleep(Duration::from_millis(1));
    }
    t.elapsed().as_secs_f64()
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i]
}

/// Seals `rounds` blocks of one transfer on `from` and times each one's arrival at `to`:
/// milliseconds from the call to `seal`, and from its return.
fn latencies(from: &Chain, to: &Node, v: &SecretKey, rounds: usize) -> (Vec<f64>, Vec<f64>) {
    let heads = to.bus.subscribe(Kinds::NEW_HEAD, 1 << 16);
    let (mut from_call, mut from_return) = (Vec::new(), Vec::new());
    for i in 0..rounds {
        let nonce = from.pending_nonce(&v.address()).unwrap();
        let tx = common::transfer_tx(
            v,
            nonce,
            Address([7; 20]),
            1,
            common::PRICE,
            from.chain_id(),
        );
        from.submit(tx).unwrap();
        let want = from.head_number() + 1;
        let t0 = Instant::now();
        from.seal(v).unwrap().unwrap();
        let t1 = Instant::now();
        loop {
            match heads.recv_timeout(Duration::from_secs(10)) {
                Ok(Some(Event::NewHead(h))) if h.number >= want => break,
                Ok(Some(_)) => {}
                e => panic!("round {i}: no new head at the peer: {e:?}"),
            }
        }
        from_call.push(t0.elapsed().as_secs_f64() * 1e3);
        from_return.push(t1.elapsed().as_secs_f64() * 1e3);
    }
    from_call.sort_by(f64::total_cmp);
    from_return.sort_by(f64::total_cmp);
    (from_call, from_return)
}

fn main() {
    let n_empty = common::env_or("P2P_EMPTY_BLOCKS", 10_000u64);
    let n_transfers = common::env_or("P2P_TRANSFERS", 100_000usize);
    let block_txs = common::env_or("P2P_BLOCK_TXS", 2_000usize);
    let rounds = common::env_or("P2P_ROUNDS", 200usize);
    let v = SecretKey::from_slice(&[0x11; 32]).unwrap();
    let senders: Vec<SecretKey> = common::numbered_keys(1000);
    let mut genesis = Genesis::dev(v.address(), common::u256(1 << 100));
    for s in &senders {
        genesis.alloc.insert(s.address(), common::u256(1 << 100));
    }
    let mut results = Vec::new();

    {
        let source = Node::new(1, &genesis);
        let (mut parent, _) = genesis_block(&genesis).unwrap();
        let mut batch = Vec::new();
        for _ in 0..n_empty {
            let h = common::empty_block(&parent, &v);
            batch.push(Block {
                header: h.clone(),
                transactions: Vec::new(),
            });
            parent = h;
            if batch.len() == 2500 {
                source.chain.insert_blocks(&batch).unwrap();
                batch.clear();
            }
        }
        source.chain.insert_blocks(&batch).unwrap();
        let follower = Node::new(2, &genesis);
        let t = Instant::now();
        let _link = connect(&follower, &source, None);
        let secs = synced(&follower, n_empty, t);
        assert_eq!(follower.chain.head_hash(), source.chain.head_hash());
        let rate = n_empty as f64 / secs;
        println!("sync: {n_empty} empty blocks in {secs:.2} s = {rate:.0} blocks/s");
        results.push(format!("p2p_sync_empty_blocks_per_s={rate:.0}"));
    }

    {
        let source = Node::new(1, &genesis);
        let mut nonces = vec![0u64; senders.len()];
        let blocks = n_transfers.div_ceil(block_txs);
        for b in 0..blocks {
            let count = block_txs.min(n_transfers - b * block_txs);
            for i in b * block_txs..b * block_txs + count {
                let tx =
                    common::numbered_transfer(&senders, &mut nonces, i, source.chain.chain_id());
                source.chain.submit(tx).unwrap();
            }
            source.chain.seal(&v).unwrap().unwrap();
        }
        let follower = Node::new(2, &genesis);
        let t = Instant::now();
        let _link = connect(&follower, &source, None);
        let secs = synced(&follower, blocks as u64, t);
        assert_eq!(follower.chain.head_hash(), source.chain.head_hash());
        let rate = n_transfers as f64 / secs;
        println!(
            "sync: {blocks} blocks of {n_transfers} transfers in {secs:.2} s = {rate:.0} transfers/s"
        );
        results.push(format!("p2p_sync_transfers_per_s={rate:.0}"));
    }

    {
        let a = Node::new(1, &genesis);
        let b = Node::new(2, &genesis);
        let _link = connect(&a, &b, None);
        let (call, ret) = latencies(&a.chain, &b, &v, rounds);
        println!(
            "seal to peer: p50 {:.2} ms, p99 {:.2} ms from the seal call; p50 {:.2} ms, p99 {:.2} ms from its return",
            percentile(&call, 0.5),
            percentile(&call, 0.99),
            percentile(&ret, 0.5),
            percentile(&ret, 0.99)
        );
        results.push(format!(
            "p2p_seal_to_peer_p99_ms={:.2}",
            percentile(&call, 0.99)
        ));
    }

    {
        let line: Vec<Node> = (1..=5).map(|n| Node::new(n, &genesis)).collect();
        let _links: Vec<_> = line
            .windows(2)
            .map(|w| connect(&w[0], &w[1], None))
            .collect();
        let (call, ret) = latencies(&line[0].chain, &line[4], &v, rounds);
        println!(
            "seal to the end of a line of 5: p50 {:.2} ms, p99 {:.2} ms from the seal call; p50 {:.2} ms, p99 {:.2} ms from its return",
            percentile(&call, 0.5),
            percentile(&call, 0.99),
            percentile(&ret, 0.5),
            percentile(&ret, 0.99)
        );
        results.push(format!("p2p_line5_p99_ms={:.2}", percentile(&call, 0.99)));
    }

    for r in results {
        println!("RESULT {r}");
    }
}
