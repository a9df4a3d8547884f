//! Sync, block propagation and transaction propagation between chains in one process: each
//! node is a `Chain` in a temporary directory with its own bus and `ChainProtocol`, and a
//! link between two nodes is a pair of `Peer`s whose send queues are pumped, one thread per
//! direction, into the other side's `on_message` (what the server's writer and reader
//! threads do over a socket). No sockets, no timing assertions: tests wait for a state,
//! with a generous deadline.

mod p2p_net;

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use chain_node::chain::genesis::Genesis;
use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};
use chain_node::p2p::peer::{Outgoing, Peer, PeerSet, Protocol};
use chain_node::p2p::url::NodeId;
use chain_node::p2p::wire::{self, Message};
use chain_node::types::block::Block;
use chain_node::types::transaction::{Transaction, ValueTransfer};
use p2p_net::{connect, peer_link, wait_for, Tamper};

/// A node of the test chain.
fn node(n: u8) -> p2p_net::Node {
    p2p_net::Node::new(n, &genesis())
}

fn validator() -> SecretKey {
    SecretKey::from_slice(&[0x46; 32]).unwrap()
}

fn genesis() -> Genesis {
    let mut funds = [0u8; 32];
    funds[20] = 1; // 2^88
    Genesis::dev(validator().address(), funds)
}

/// A transfer of `value` from the validator's account.
fn transfer(chain: &Chain, nonce: u64, value: u8) -> Transaction {
    let mut price = [0u8; 32];
    price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
    let mut v = [0u8; 32];
    v[31] = value;
    let key = validator();
    let mut tx = Transaction::of(ValueTransfer {
        nonce,
        gas_price: price,
        gas: 21_000,
        to: Address([nonce as u8 + 1; 20]),
        value: v,
        from: key.address(),
        signatures: Vec::new(),
    });
    tx.sign(&key, chain.chain_id());
    tx
}

/// Seals `count` blocks of one transfer each on `chain`.
fn seal_blocks(chain: &Chain, count: u64) {
    let key = validator();
    for _ in 0..count {
        let nonce = chain.pending_nonce(&key.address()).unwrap();
        chain.submit(transfer(chain, nonce, 1)).unwrap();
        chain.seal(&key).unwrap().unwrap();
    }
}

/// The canonical block at `number`, as the chain stores it.
fn block_at(chain: &Chain, number: u64) -> Block {
    let raw = chain.blocks_rlp(number, 1, usize::MAX).unwrap();
    Block::decode(&raw[0]).unwrap()
}

/// Asserts that two chains hold the same blocks, states and receipts up to their heads.
fn assert_same_chain(x: &Chain, y: &Chain) {
    assert_eq!(x.head_block(), y.head_block());
    for n in 0..=x.head_number() {
        let (hx, bx) = x.header_at(n).unwrap().unwrap();
        let (hy, by) = y.header_at(n).unwrap().unwrap();
        assert_eq!(hx, hy, "block {n}");
        assert_eq!(bx.state_root, by.state_root, "block {n}");
        for (tx, _) in x.block_by_number(Some(n)).unwrap().unwrap().transactions {
            let h = tx.hash();
            let rx = x.transaction(&h).unwrap().unwrap();
            let ry = y.transaction(&h).unwrap().unwrap();
            assert_eq!(rx.receipt, ry.receipt);
            assert_eq!(
                (rx.location.block_hash, rx.location.index),
                (ry.location.block_hash, ry.location.index)
            );
        }
    }
}

#[test]
fn a_follower_500_blocks_behind_syncs_to_the_same_chain() {
    let source = node(1);
    seal_blocks(&source.chain, 500);
    let follower = node(2);
    let link = connect(&follower, &source, None);
    wait_for("the follower to sync", || follower.head() == 500);
    assert_same_chain(&source.chain, &follower.chain);
    assert!(link.closed().is_empty(), "{:?}", link.closed());
    assert_eq!(link.count(1, "blocks"), 1, "one batch holds 500 blocks");
}

#[test]
fn a_sync_in_small_answers_asks_again_until_it_has_the_head() {
    let source = node(1);
    seal_blocks(&source.chain, 130);
    let follower = node(2);
    // The source answers with at most 25 blocks: fewer than asked is "what fits".
    let short: Tamper = Arc::new(|m| match m {
        Message::Blocks { mut blocks } => {
            blocks.truncate(25);
            Message::Blocks { blocks }
        }
        m => m,
    });
    let link = connect(&follower, &source, Some(short));
    wait_for("the follower to sync", || follower.head() == 130);
    assert_same_chain(&source.chain, &follower.chain);
    assert_eq!(link.count(0, "getBlocks"), 6);
    assert!(link.closed().is_empty());
}

/// Tampers with block `number` of each `Blocks` answer with `f`.
fn tamper_block(number: u64, f: fn(&mut Block)) -> Tamper {
    Arc::new(move |m| match m {
        Message::Blocks { mut blocks } => {
            for raw in blocks.iter_mut() {
                let mut b = Block::decode(raw).unwrap();
                if b.header.number == number {
                    f(&mut b);
                    *raw = b.encode();
                }
            }
            Message::Blocks { blocks }
        }
        m => m,
    })
}

#[test]
fn a_bad_block_is_refused_and_its_peer_dropped() {
    let source = node(1);
    seal_blocks(&source.chain, 20);
    type Lie = fn(&mut Block);
    let cases: [(Lie, &str); 3] = [
        // The header changed after sealing: the seal is not the validator's.
        (
            |b| b.header.time += 1,
            "bad block #1: not sealed by the validator",
        ),
        // Sealed again by the validator, but the state root is a lie.
        (
            |b| {
                b.header.state_root[0] ^= 1;
                chain_node::chain::seal_header(&mut b.header, &validator());
            },
            "bad block #1: state root mismatch",
        ),
        (
            |b| {
                b.header.gas_used += 1;
                chain_node::chain::seal_header(&mut b.header, &validator());
            },
            "bad block #1: gas used 21000 where the header says 21001",
        ),
    ];
    for (f, want) in cases {
        let follower = node(2);
        let link = connect(&follower, &source, Some(tamper_block(1, f)));
        wait_for("the source to be dropped", || !link.closed().is_empty());
        let closed = link.closed();
        // The follower (side 0) closed the connection, saying why.
        assert!(
            closed
                .iter()
                .any(|(side, r)| *side == 0 && r.starts_with(want)),
            "{closed:?} / {want}"
        );
        assert_eq!(follower.head(), 0, "{want}: nothing stored");
        assert!(follower.peers.peers().is_empty());
    }
}

#[test]
fn after_a_bad_block_the_sync_goes_on_from_another_peer() {
    // The liar is one block ahead, so it is asked first; it lies about block 5.
    let liar = node(1);
    seal_blocks(&liar.chain, 21);
    let honest = node(3);
    let blocks: Vec<Block> = (1..=20).map(|n| block_at(&liar.chain, n)).collect();
    honest.chain.insert_blocks(&blocks).unwrap();
    let follower = node(2);
    let bad = connect(
        &follower,
        &liar,
        Some(tamper_block(5, |b| {
            b.header.state_root[0] ^= 1;
            chain_node::chain::seal_header(&mut b.header, &validator());
        })),
    );
    let good = connect(&follower, &honest, None);
    wait_for("the follower to sync", || follower.head() == 20);
    assert!(bad
        .closed()
        .iter()
        .any(|(side, r)| *side == 0 && r.starts_with("bad block #5: state root mismatch")));
    assert!(good.closed().is_empty());
    assert_same_chain(&honest.chain, &follower.chain);
}

#[test]
fn a_sealed_block_reaches_the_peers_along_a_line() {
    let a = node(1);
    let b = node(2);
    let c = node(3);
    let ab = connect(&a, &b, None);
    let bc = connect(&b, &c, None);
    for n in 1..=3 {
        seal_blocks(&a.chain, 1);
        wait_for("the block to reach the end of the line", || c.head() == n);
    }
    assert_same_chain(&a.chain, &c.chain);
    assert_same_chain(&a.chain, &b.chain);
    // Each block crossed each link once, forward only, and needed no sync.
    assert_eq!(ab.count(0, "newBlock"), 3);
    assert_eq!(bc.count(0, "newBlock"), 3);
    assert_eq!(ab.count(1, "newBlock"), 0);
    assert_eq!(bc.count(1, "newBlock"), 0);
    assert_eq!(ab.count(1, "getBlocks") + bc.count(1, "getBlocks"), 0);
}

#[test]
fn a_new_block_beyond_the_next_starts_a_sync() {
    let a = node(1);
    let b = node(2);
    // The first four new blocks are lost on the way (a ping arrives instead): the fifth is
    // beyond `b`'s head + 1, and `b` syncs.
    let lost = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let lose: Tamper = Arc::new(move |m| match m {
        Message::NewBlock { .. } if lost.fetch_add(1, Ordering::Relaxed) < 4 => Message::Ping,
        m => m,
    });
    let link = connect(&b, &a, Some(lose));
    for n in 1..=4 {
        seal_blocks(&a.chain, 1);
        wait_for("the new block to be sent", || link.count(1, "ping") == n);
    }
    assert_eq!(b.head(), 0);
    seal_blocks(&a.chain, 1);
    wait_for("the sync", || b.head() == 5);
    assert_eq!(link.count(0, "getBlocks"), 1);
    seal_blocks(&a.chain, 1);
    wait_for("the next new block", || b.head() == 6);
    assert_same_chain(&a.chain, &b.chain);
    assert!(link.closed().is_empty());
}

#[test]
fn a_transfer_sent_to_a_follower_is_sealed_by_the_validator_and_comes_back() {
    let validator_node = node(1);
    let follower = node(2);
    let link = connect(&follower, &validator_node, None);
    let tx = transfer(&follower.chain, 0, 9);
    let hash = follower.chain.submit(tx).unwrap();
    wait_for("the transfer to reach the validator", || {
        validator_node.chain.pool_counts().0 == 1
    });
    let sealed = validator_node.chain.seal(&validator()).unwrap().unwrap();
    wait_for("the block to reach the follower", || follower.head() == 1);
    assert_eq!(follower.chain.head_hash(), sealed);
    assert_eq!(follower.chain.pool_counts(), (0, 0));
    let record = follower.chain.transaction(&hash).unwrap().unwrap();
    let sealed = record.receipt.unwrap();
    assert_eq!(
        (sealed.receipt.status, sealed.receipt.gas_used),
        (1, 21_000)
    );
    // The validator never sends the transfer back to where it came from.
    assert_eq!(link.count(0, "transactions"), 1);
    assert_eq!(link.count(1, "transactions"), 0);
}

#[test]
fn a_new_peer_gets_the_pending_transactions() {
    let follower = node(2);
    let hash = follower
        .chain
        .submit(transfer(&follower.chain, 0, 9))
        .unwrap();
    let validator_node = node(1);
    let _link = connect(&follower, &validator_node, None);
    wait_for("the transfer to reach the validator", || {
        validator_node.chain.transaction(&hash).unwrap().is_some()
    });
}

#[test]
fn an_undecodable_transaction_drops_the_peer() {
    let a = node(1);
    let b = node(2);
    let garble: Tamper = Arc::new(|m| match m {
        Message::Transactions { mut txs } => {
            txs[0].push(0);
            Message::Transactions { txs }
        }
        m => m,
    });
    let link = connect(&a, &b, Some(garble));
    b.chain.submit(transfer(&b.chain, 0, 9)).unwrap();
    wait_for("the drop", || !link.closed().is_empty());
    assert!(link
        .closed()
        .iter()
        .any(|(side, r)| *side == 0 && r.starts_with("bad transaction: ")));
    assert_eq!(a.chain.pool_counts(), (0, 0));
}

/// The `Blocks` answers to `GetBlocks` sent to `node` through a peer handle of our own.
fn ask(node: &p2p_net::Node, from: u64, count: u64) -> Vec<Block> {
    let status = node.protocol.local_status();
    let (peer, rx) = Peer::new(peer_link(NodeId([9; 64]), true), &status);
    node.protocol
        .on_message(&peer, Message::GetBlocks { from, count })
        .unwrap();
    match rx.recv_timeout(Duration::from_secs(60)).unwrap() {
        Outgoing::Message(bytes) => match wire::decode(&bytes).unwrap() {
            Message::Blocks { blocks } => {
                blocks.iter().map(|b| Block::decode(b).unwrap()).collect()
            }
            m => panic!("{m:?}"),
        },
        o => panic!("{o:?}"),
    }
}

#[test]
fn serving_respects_the_count_the_head_and_the_size() {
    let node = node(1);
    seal_blocks(&node.chain, 12);
    let numbers = |bs: Vec<Block>| bs.iter().map(|b| b.header.number).collect::<Vec<_>>();
    assert_eq!(numbers(ask(&node, 3, 4)), vec![3, 4, 5, 6]);
    assert_eq!(numbers(ask(&node, 10, 100)), vec![10, 11, 12]);
    assert!(ask(&node, 13, 5).is_empty());
    assert!(ask(&node, 1, 0).is_empty());
    let b5 = block_at(&node.chain, 5);
    assert_eq!(ask(&node, 5, 1)[0].hash(), b5.hash());

    // The size cap: whole blocks up to the cap, the first one whatever its size.
    let one = node.chain.blocks_rlp(1, 1, usize::MAX).unwrap()[0].len();
    let all = node.chain.blocks_rlp(1, 12, usize::MAX).unwrap();
    assert_eq!(all.len(), 12);
    let two = all[0].len() + all[1].len();
    assert_eq!(node.chain.blocks_rlp(1, 12, two).unwrap().len(), 2);
    assert_eq!(node.chain.blocks_rlp(1, 12, two - 1).unwrap().len(), 1);
    assert_eq!(node.chain.blocks_rlp(1, 12, 0).unwrap().len(), 1);
    assert_eq!(node.chain.blocks_rlp(1, 12, 0).unwrap()[0].len(), one);
    assert_eq!(Block::decode(&all[4]).unwrap().hash(), b5.hash());
}

#[test]
fn a_peer_that_does_not_answer_is_dropped() {
    let source = node(1);
    seal_blocks(&source.chain, 3);
    let follower = node(2);
    // The answers are lost on the way (a ping arrives instead).
    let silent: Tamper = Arc::new(|m| match m {
        Message::Blocks { .. } => Message::Ping,
        m => m,
    });
    let link = connect(&follower, &source, Some(silent));
    wait_for("the drop", || !link.closed().is_empty());
    assert!(link
        .closed()
        .iter()
        .any(|(side, r)| *side == 0 && r == "block request timed out"));
    assert_eq!(follower.head(), 0);
}

#[test]
fn the_service_starts_once() {
    let n = node(1);
    let mut again = n.protocol.service();
    assert_eq!(
        again.start().unwrap_err(),
        "the peer protocol's service was started twice"
    );
}

#[test]
fn a_bad_new_block_is_refused_and_its_peer_dropped() {
    let a = node(1);
    let b = node(2);
    let lie: Tamper = Arc::new(|m| match m {
        Message::NewBlock { block } => {
            let mut b = Block::decode(&block).unwrap();
            b.header.state_root[0] ^= 1;
            chain_node::chain::seal_header(&mut b.header, &validator());
            Message::NewBlock { block: b.encode() }
        }
        m => m,
    });
    let link = connect(&b, &a, Some(lie));
    seal_blocks(&a.chain, 1);
    wait_for("the drop", || !link.closed().is_empty());
    assert!(link
        .closed()
        .iter()
        .any(|(side, r)| *side == 0 && r.starts_with("bad block #1: state root mismatch")));
    assert_eq!(b.head(), 0);
    assert_eq!(b.chain.bad_blocks().len(), 1, "kept for debug_getBadBlocks");
}

/// A fee-delegated transfer (a sender without funds, the validator paying) and an EIP-1559
/// transaction go from a follower to the validator, are sealed, and come back in the block:
/// the follower's copy of the chain is the same, finds the fee-delegated one by its sender
/// transaction hash, and both carry their own type.
#[test]
fn every_kind_of_transaction_travels_and_comes_back_sealed() {
    use chain_node::types::transaction::{Base, Ethereum, FeeMode, Native};
    let validator_node = node(1);
    let follower = node(2);
    let _link = connect(&follower, &validator_node, None);
    let chain = &follower.chain;
    let price = chain_node::state::from_u64(chain.unit_price());
    let (payer, sender) = (validator(), SecretKey::from_slice(&[0x47; 32]).unwrap());
    let mut fd = Native::new(Base::ValueTransfer, FeeMode::Delegated, sender.address());
    (fd.gas_price, fd.gas, fd.to) = (price, 31_000, Some(Address([0x35; 20])));
    fd.fee_payer = payer.address();
    let mut fd = Transaction::Native(fd);
    fd.sign(&sender, chain.chain_id());
    assert!(fd.sign_as_fee_payer(&payer, chain.chain_id()));
    let mut eth = Transaction::Ethereum(Ethereum {
        dynamic: true,
        chain_id: chain.chain_id(),
        nonce: 0,
        gas_tip_cap: price,
        gas_fee_cap: price,
        gas: 21_000,
        to: Some(Address([0x36; 20])),
        value: [0; 32],
        input: Vec::new(),
        access_list: Vec::new(),
        signature: None,
    });
    eth.sign(&payer, chain.chain_id());
    let fd_hash = chain.submit(fd.clone()).unwrap();
    let eth_hash = chain.submit(eth).unwrap();
    assert_ne!(fd.sender_tx_hash(), fd_hash);
    wait_for("both to reach the validator", || {
        validator_node.chain.pool_counts().0 == 2
    });
    validator_node.chain.seal(&validator()).unwrap().unwrap();
    wait_for("the block to reach the follower", || follower.head() == 1);
    assert_same_chain(&validator_node.chain, &follower.chain);
    let by_sender = chain
        .transaction_by_sender_hash(&fd.sender_tx_hash())
        .unwrap()
        .expect("found by its sender hash");
    assert_eq!(by_sender.tx.hash(), fd_hash);
    assert_eq!(by_sender.tx.fee_payer(), Some(payer.address()));
    assert_eq!(by_sender.receipt.unwrap().receipt.gas_used, 31_000);
    let eth = chain.transaction(&eth_hash).unwrap().unwrap();
    assert_eq!(eth.tx.type_code(), 0x7802);
    assert_eq!(eth.sender, payer.address());
    // The sender paid nothing: the fee payer paid the fee.
    let sender_acct = chain.account(&sender.address(), None).unwrap();
    assert!(sender_acct.is_none_or(|a| a.balance == [0; 32]));
}
