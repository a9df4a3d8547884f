//! Writes the starting corpora that need the library to make them (run once, with
//! `cargo run --release --example seeds`, after `seed.py`): blocks and an export file of a
//! small chain, receipts, peer messages, the first bytes a dialing peer sends.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};
use chain_node::p2p::wire::{encode, Message, Status};
use chain_node::types::receipt::{Log, Receipt};
use chain_node::types::rlp::list;

fn put(target: &str, data: &[u8]) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target);
    std::fs::create_dir_all(&dir).unwrap();
    let name = hex(&chain_node::crypto::keccak256(data)[..20]);
    std::fs::write(dir.join(name), data).unwrap();
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let v = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let sender = SecretKey::from_slice(&[0x42; 32]).unwrap();
    let g = chain_node_fuzz::seed_genesis();
    let chain = Chain::open(dir.path(), &g).unwrap();
    for n in 0..4u64 {
        use chain_node::types::transaction::{Transaction, ValueTransfer};
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&25_000_000_000u64.to_be_bytes());
        let mut value = [0u8; 32];
        value[31] = 1;
        let mut tx = Transaction::of(ValueTransfer {
            nonce: n,
            gas_price: price,
            gas: 21_000,
            to: Address([0x35; 20]),
            value,
            from: sender.address(),
            signatures: Vec::new(),
        });
        tx.sign(&sender, 1000);
        chain.submit(tx).unwrap();
        chain.seal(&v).unwrap().unwrap();
    }
    let blocks = chain.blocks_rlp(0, 5, 1 << 20).unwrap();
    let mut all = Vec::new();
    for b in &blocks {
        put("block", b);
        all.extend_from_slice(b);
    }
    put("export_file", &all);
    put("export_file", &blocks[1]);
    let r = Receipt {
        status: 1,
        gas_used: 21_000,
        logs: vec![Log {
            address: Address([0x36; 20]),
            topics: vec![[0x11; 32], [0x22; 32]],
            data: vec![1, 2, 3],
        }],
    };
    let failed = Receipt {
        status: 9,
        gas_used: 30_000,
        logs: Vec::new(),
    };
    let mut both = r.encode();
    both.extend_from_slice(&failed.encode());
    put("receipt", &list(&both));
    put("receipt", &list(&r.encode()));

    let status = Status {
        version: chain_node::p2p::wire::PROTOCOL_VERSION,
        network_id: 1000,
        genesis: [1; 32],
        head: [2; 32],
        head_number: 4,
        blockscore: 5,
        name: "chaind/0.1".into(),
        caps: vec!["chain/1".into()],
        listen_port: 32323,
    };
    for m in [
        Message::Status(status),
        Message::Disconnect {
            reason: "too many peers".into(),
        },
        Message::GetBlocks {
            from: 1,
            count: 2048,
        },
        Message::Blocks {
            blocks: blocks.clone(),
        },
        Message::NewBlock {
            block: blocks[4].clone(),
        },
        Message::Transactions {
            txs: vec![vec![0xf8, 0x01, 0x00]],
        },
        Message::Ping,
        Message::Pong,
    ] {
        put("p2p_wire", &encode(&m));
    }

    // The first bytes a dialer sends (its Noise message), read by a listener that answers
    // nothing.
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    let reader = std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        s.set_read_timeout(Some(Duration::from_millis(500)))
            .unwrap();
        let mut got = vec![0u8; 4096];
        let n = s.read(&mut got).unwrap_or(0);
        got.truncate(n);
        got
    });
    let me = chain_node::p2p::identity::NodeIdentity::new(SecretKey::from_slice(&[9; 32]).unwrap());
    let _ = chain_node::p2p::transport::handshake(
        std::net::TcpStream::connect(addr).unwrap(),
        &me,
        chain_node::p2p::transport::Role::Dialer {
            expected: chain_node::p2p::url::NodeId([7; 64]),
        },
        Duration::from_millis(300),
    );
    let first = reader.join().unwrap();
    assert!(!first.is_empty());
    put("p2p_handshake", &first);
    put("p2p_handshake", &[0, 0]);
}
