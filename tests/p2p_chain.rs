//! The chain over the network, through real `chaind` processes on 127.0.0.1: a `--dev`
//! validator and two followers; the followers sync the validator's 500 blocks, a transfer
//! sent to a follower is sealed by the validator and seen by all three; and a peer that
//! serves a block with a bad seal or a bad state root is dropped, the block refused, the
//! follower unchanged and still serving.

mod common;

use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use chain_node::chain::genesis::Genesis;
use chain_node::chain::{seal_header, Chain};
use chain_node::crypto::{Address, SecretKey};
use chain_node::p2p::identity::NodeIdentity;
use chain_node::p2p::transport::{handshake, Role};
use chain_node::p2p::url::parse_kni;
use chain_node::p2p::wire::{decode, encode, Message, Status};
use chain_node::types::block::Block;
use common::{
    chaind_init, funded_genesis, genesis_sender, http_args, http_call, ok, validator_datadir,
    wait_until, Node,
};
use serde_json::{json, Value};

const CHAIN_ID: u64 = 1000;

fn start(dd: tempfile::TempDir, extra: &[&str]) -> Node {
    let mut args: Vec<&str> = http_args("admin,net,chain,txpool").to_vec();
    args.extend(extra);
    let n = Node::start_in(dd, &args);
    assert!(n.kni.is_some(), "no P2P listening line:\n{}", n.log_text());
    n
}

fn call(n: &Node, method: &str, params: Value) -> Value {
    ok(http_call(n.http.as_ref().unwrap(), method, params))
}

fn head(n: &Node) -> u64 {
    common::quantity_of(&call(n, "chain_blockNumber", json!([]))) as u64
}

fn block(n: &Node, number: u64) -> Value {
    call(
        n,
        "chain_getBlockByNumber",
        json!([format!("0x{number:x}"), false]),
    )
}

fn peers_of(n: &Node) -> Vec<Value> {
    call(n, "admin_peers", json!([]))
        .as_array()
        .unwrap()
        .clone()
}

/// `blocks` blocks of one transfer each, sealed in process by `validator` on `genesis`.
fn build(dir: &Path, genesis: &Genesis, validator: &SecretKey, blocks: u64) -> Chain {
    let chain = Chain::open(dir, genesis).unwrap();
    for nonce in 0..blocks {
        let to = Address([(nonce % 200) as u8 + 1; 20]);
        let tx = common::transfer_tx(&genesis_sender(), nonce, to, 1, common::PRICE, CHAIN_ID);
        chain.submit(tx).unwrap();
        chain.seal(validator).unwrap().unwrap();
    }
    chain
}

#[test]
fn followers_sync_and_a_transfer_sent_to_one_is_sealed_by_the_validator() {
    let dir = tempfile::tempdir().unwrap();
    // The validator's key lives in its keystore (empty passphrase), where `--dev` finds it.
    let (vdir, v_key) = validator_datadir(dir.path());
    let (genesis_file, genesis) = funded_genesis(dir.path(), v_key.address(), CHAIN_ID);
    // 500 blocks for the validator to hold before the followers come.
    let built = build(&dir.path().join("built"), &genesis, &v_key, 500);
    let file = dir.path().join("500.rlp");
    let stop = std::sync::atomic::AtomicBool::new(false);
    chain_node::chain::export::export(&built, &file, None, None, &stop, &mut |_, _| {}).unwrap();
    drop(built);
    chaind_init(vdir.path(), &genesis_file);
    let out = common::chaind_run(vdir.path(), &["import", file.to_str().unwrap()]);
    assert!(out.status.success(), "chaind import: {out:?}");

    let v = start(vdir, &["--dev"]);
    assert_eq!(head(&v), 500);
    let followers: Vec<Node> = (0..2)
        .map(|_| {
            let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
            chaind_init(dd.path(), &genesis_file);
            start(dd, &[])
        })
        .collect();
    // One follower dials the validator, the validator dials the other.
    assert_eq!(
        call(&followers[0], "admin_addPeer", json!([followers_kni(&v)])),
        json!(true)
    );
    assert_eq!(
        call(&v, "admin_addPeer", json!([followers_kni(&followers[1])])),
        json!(true)
    );
    for (i, f) in followers.iter().enumerate() {
        wait_until(&format!("follower {i} to sync"), f, || head(f) == 500);
        for n in [1, 250, 500] {
            assert_eq!(block(f, n), block(&v, n), "follower {i}, block {n}");
        }
        let inbound = peers_of(f)[0]["network"]["inbound"].clone();
        assert_eq!(
            inbound,
            json!(i == 1),
            "follower {i}'s view of the validator"
        );
    }
    // And the validator's view of them: follower 0 dialed in, follower 1 was dialed.
    let id = |n: &Node| call(n, "admin_nodeInfo", json!([]))["id"].clone();
    let seen: Vec<(Value, Value)> = peers_of(&v)
        .iter()
        .map(|p| (p["id"].clone(), p["network"]["inbound"].clone()))
        .collect();
    let mut want = vec![
        (id(&followers[0]), json!(true)),
        (id(&followers[1]), json!(false)),
    ];
    want.sort_by_key(|(id, _)| id.as_str().unwrap().to_string());
    assert_eq!(seen, want, "admin_peers is sorted by id");

    // A transfer sent to follower 0 travels to the validator, is sealed there, and the block
    // reaches both followers.
    let raw = common::raw_transfer(
        &genesis_sender(),
        500,
        Address([0xee; 20]),
        12345,
        common::PRICE,
        CHAIN_ID,
    );
    let hash = call(&followers[0], "chain_sendRawTransaction", json!([raw]));
    let mut receipt = Value::Null;
    wait_until("the validator to seal the transfer", &v, || {
        receipt = call(&v, "chain_getTransactionReceipt", json!([hash]));
        !receipt.is_null()
    });
    assert_eq!(receipt["status"], json!("0x1"));
    for (i, f) in followers.iter().enumerate() {
        wait_until(&format!("follower {i} to get block 501"), f, || {
            head(f) == 501
        });
        assert_eq!(
            call(f, "chain_getTransactionReceipt", json!([hash])),
            receipt,
            "follower {i}"
        );
        assert_eq!(
            call(
                f,
                "chain_getBalance",
                json!(["0x".to_string() + &"ee".repeat(20), "latest"])
            ),
            json!("0x3039")
        );
    }
    // Nothing is left pending on the follower that took the transfer.
    assert_eq!(
        call(&followers[0], "txpool_status", json!([]))["pending"],
        json!("0x0")
    );
}

fn followers_kni(n: &Node) -> String {
    n.kni.clone().unwrap()
}

/// A peer played by the test: dials `n`, says it holds `blocks` (on top of the genesis of
/// `n`), serves them when asked, and returns what `n` said when it hung up (its
/// `Disconnect` reason, or `None` when it kept the connection until `blocks` were taken).
fn serve_blocks(n: &Node, blocks: &[Block]) -> Option<String> {
    let url = parse_kni(n.kni.as_ref().unwrap()).unwrap();
    let stream = TcpStream::connect(url.addr.unwrap()).unwrap();
    let me = NodeIdentity::new(SecretKey::random());
    let mut conn = handshake(
        stream,
        &me,
        Role::Dialer { expected: url.id },
        Duration::from_secs(5),
    )
    .unwrap();
    let theirs = match decode(&conn.reader.recv().unwrap()).unwrap() {
        Message::Status(s) => s,
        other => panic!("first message {other:?}"),
    };
    let last = blocks.last().unwrap();
    let ours = Status {
        head: last.hash(),
        head_number: last.header.number,
        blockscore: theirs.blockscore + blocks.len() as u128,
        name: "test peer".into(),
        listen_port: 0,
        ..theirs.clone()
    };
    conn.writer.send(&encode(&Message::Status(ours))).unwrap();
    conn.reader
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    loop {
        let bytes = match conn.reader.recv() {
            Ok(b) => b,
            Err(e) => panic!("the node closed without a Disconnect: {e}"),
        };
        match decode(&bytes).unwrap() {
            Message::GetBlocks { from, count } => {
                let served: Vec<Vec<u8>> = blocks
                    .iter()
                    .filter(|b| b.header.number >= from && b.header.number < from + count)
                    .map(Block::encode)
                    .collect();
                conn.writer
                    .send(&encode(&Message::Blocks { blocks: served }))
                    .unwrap();
            }
            Message::Disconnect { reason } => return Some(reason),
            _ => {}
        }
        if head(n) == last.header.number {
            return None;
        }
    }
}

#[test]
fn a_peer_serving_a_bad_block_is_dropped_and_the_block_refused() {
    let dir = tempfile::tempdir().unwrap();
    let v_key = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let (genesis_file, genesis) = funded_genesis(dir.path(), v_key.address(), CHAIN_ID);
    let built = build(&dir.path().join("built"), &genesis, &v_key, 1);
    let good = {
        let r = built.block_by_number(Some(1)).unwrap().unwrap();
        Block {
            header: r.header,
            transactions: r.transactions.into_iter().map(|(t, _)| t).collect(),
        }
    };
    let dd = tempfile::TempDir::new_in(dir.path()).unwrap();
    chaind_init(dd.path(), &genesis_file);
    let f = start(dd, &[]);

    // Sealed by someone else.
    let mut bad_seal = good.clone();
    seal_header(
        &mut bad_seal.header,
        &SecretKey::from_slice(&[0x47; 32]).unwrap(),
    );
    // Sealed by the validator, over a state that is not the block's.
    let mut bad_root = good.clone();
    bad_root.header.state_root[0] ^= 1;
    seal_header(&mut bad_root.header, &v_key);

    for (bad, why) in [
        (bad_seal, "not sealed by the validator"),
        (bad_root, "state root mismatch"),
    ] {
        let reason = serve_blocks(&f, &[bad]).expect("the node hangs up");
        assert!(reason.contains("bad block"), "{reason}");
        assert!(reason.contains(why), "{reason}");
        // The log reaches this process through a pipe, maybe after the hang-up.
        wait_until("the reason in the node's log", &f, || {
            f.log_text().contains(why)
        });
        assert_eq!(head(&f), 0, "nothing of the bad block is stored");
        wait_until("the lying peer to be dropped", &f, || {
            call(&f, "admin_peers", json!([])) == json!([])
        });
    }
    // The same peer with the true block: taken.
    assert_eq!(serve_blocks(&f, std::slice::from_ref(&good)), None);
    assert_eq!(
        block(&f, 1)["hash"],
        json!(format!("0x{}", hex::encode(good.hash())))
    );
}
