//! The fuzz targets' bodies: each takes the fuzzer's bytes to one entry point of `chain-node`
//! that reads untrusted input, and checks what the decoder promises where that is cheap (an
//! encoder that gives back what was decoded). A panic, a hang or a huge allocation is a
//! finding. The libFuzzer binaries (`fuzz_targets/`) and the corpus replay of the root
//! package's `tests/fuzz_corpora.rs` (plain `cargo test` on stable) both call these.

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use chain_node::rpc::error::RpcError;
use chain_node::rpc::params::Params;
use chain_node::rpc::server::{Call, Dispatcher, Registry, Transport, DEFAULT_LIMITS};
use serde_json::{json, Value};

/// A target's body.
pub type Target = fn(&[u8]);

/// Every target, by name (the corpus directories).
pub const TARGETS: &[(&str, Target)] = &[
    ("rpc_envelope", rpc_envelope),
    ("keydata", keydata),
    ("key_file", key_file),
    ("transaction", transaction),
    ("account_key", account_key),
    ("block", block),
    ("receipt", receipt),
    ("kni_url", kni_url),
    ("p2p_wire", p2p_wire),
    ("p2p_handshake", p2p_handshake),
    ("console_line", console_line),
    ("config_file", config_file),
    ("genesis", genesis),
    ("export_file", export_file),
];

fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

fn invalid(e: impl std::fmt::Display) -> RpcError {
    RpcError::invalid_params(e.to_string())
}

/// A dispatcher whose methods run the API's parameter decoders on their parameters.
fn dispatcher() -> &'static Dispatcher {
    static D: OnceLock<Dispatcher> = OnceLock::new();
    D.get_or_init(|| {
        use chain_node::api::{callargs, goparams, txargs::TxArgs};
        let mut r = Registry::default();
        let first = |p: &Params| p.raw(0).cloned().unwrap_or(Value::Null);
        r.register(
            "fuzz_echo",
            4,
            Arc::new(|_c: &Call, p: &Params| {
                Ok(json!([p.optional::<String>(0)?, p.optional::<u64>(1)?]))
            }),
        );
        r.register(
            "fuzz_txArgs",
            2,
            Arc::new(move |_c: &Call, p: &Params| {
                let v = first(p);
                let t = match p.optional::<u64>(1)? {
                    Some(t) => TxArgs::typed(v, t),
                    None => TxArgs::general(v),
                };
                t.map(|a| json!(format!("{:?}", a.nonce().ok())))
                    .map_err(invalid)
            }),
        );
        r.register(
            "fuzz_callArgs",
            1,
            Arc::new(move |_c: &Call, p: &Params| {
                let v = first(p);
                callargs::call_args(&v, 0).map_err(invalid)?;
                let eth = callargs::EthTxArgs::decode(&v, 0).map_err(invalid)?;
                eth.call_args().map_err(invalid)?;
                Ok(json!(true))
            }),
        );
        r.register(
            "fuzz_blockNumber",
            1,
            Arc::new(move |_c: &Call, p: &Params| {
                goparams::block_number(&first(p)).map_err(invalid)?;
                Ok(json!(true))
            }),
        );
        Dispatcher::new(Arc::new(r), None, Transport::Http, false, DEFAULT_LIMITS)
    })
}

/// A request body (one call or a batch) through the dispatcher and the parameter decoders:
/// every reply must be JSON.
pub fn rpc_envelope(data: &[u8]) {
    if let Some(reply) = dispatcher().handle_bytes(data) {
        serde_json::from_str::<Value>(&reply).expect("a reply that is not JSON");
    }
}

/// `personal_importRawKey`'s and `chain-keytool import-raw`'s key data.
pub fn keydata(data: &[u8]) {
    if let Some(s) = text(data) {
        let _ = chain_node::keystore::keydata::parse(s);
    }
}

/// A key file as the keystore reads it (not decrypted: that is scrypt's time).
pub fn key_file(data: &[u8]) {
    let _ = chain_node::keystore::keyfile::parse(data);
}

/// A raw transaction of any type, native or in Ethereum's envelope: decoded, it encodes to
/// bytes that decode to the same transaction.
pub fn transaction(data: &[u8]) {
    use chain_node::types::transaction::Transaction;
    for tx in [
        Transaction::decode(data),
        Transaction::decode_ethereum(data),
    ]
    .into_iter()
    .flatten()
    {
        let again = Transaction::decode(&tx.encode()).expect("its own encoding decodes");
        assert_eq!(again, tx);
        let _ = (tx.hash(), tx.recovered(), tx.recovered_fee_payer());
    }
}

/// An account key's RLP, and the state's own encodings (accounts, trie nodes).
pub fn account_key(data: &[u8]) {
    use chain_node::types::account_key::AccountKey;
    if let Ok(k) = AccountKey::decode(data) {
        assert_eq!(AccountKey::decode(&k.encode()).expect("re-decodes"), k);
    }
    let _ = chain_node::state::Account::decode(data);
    let _ = chain_node::trie::node::decode(data);
}

/// A block, a header, a header's BFT extra data, a transaction list.
pub fn block(data: &[u8]) {
    use chain_node::types::block::{decode_tx_list, BftExtra, Block, Header};
    if let Ok(b) = Block::decode(data) {
        let again = Block::decode(&b.encode()).expect("re-decodes");
        assert_eq!(again.header.hash(), b.header.hash());
        assert_eq!(again.transactions, b.transactions);
    }
    if let Ok(h) = Header::decode(data) {
        let _ = (h.hash(), h.seal_hash());
    }
    let _ = BftExtra::decode(data);
    let _ = decode_tx_list(data);
}

/// A block's receipts.
pub fn receipt(data: &[u8]) {
    let _ = chain_node::types::receipt::Receipt::decode_list(data);
}

/// `admin_addPeer`'s kni URL (a host name "resolves" to 127.0.0.1 here: no lookup leaves the
/// machine).
pub fn kni_url(data: &[u8]) {
    if let Some(s) = text(data) {
        let _ = chain_node::p2p::url::parse_kni_with(s, |_| Some([127, 0, 0, 1].into()));
    }
}

/// A peer protocol message: decoded, it encodes to bytes that decode to the same message.
pub fn p2p_wire(data: &[u8]) {
    use chain_node::p2p::wire::{decode, encode};
    if let Ok(m) = decode(data) {
        assert_eq!(decode(&encode(&m)).expect("re-decodes"), m);
    }
}

/// The bytes a connecting peer sends, read by our side of the handshake (the listener's),
/// which must end with an error or a connection, never hang or panic.
pub fn p2p_handshake(data: &[u8]) {
    use chain_node::p2p::{identity::NodeIdentity, transport};
    static ME: OnceLock<(NodeIdentity, TcpListener)> = OnceLock::new();
    let (me, listener) = ME.get_or_init(|| {
        let key = chain_node::crypto::SecretKey::from_slice(&[7; 32]).unwrap();
        (
            NodeIdentity::new(key),
            TcpListener::bind("127.0.0.1:0").unwrap(),
        )
    });
    let mut peer = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (ours, _) = listener.accept().unwrap();
    peer.write_all(data).unwrap();
    peer.shutdown(Shutdown::Write).unwrap();
    let _ = transport::handshake(
        ours,
        me,
        transport::Role::Listener,
        Duration::from_millis(200),
    );
}

/// A console line.
pub fn console_line(data: &[u8]) {
    if let Some(s) = text(data) {
        let _ = chain_node::console::parse::parse_line(s);
    }
}

/// `chaind --config FILE`.
pub fn config_file(data: &[u8]) {
    static PATH: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, path) = PATH.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("chaind.toml");
        (dir, path)
    });
    std::fs::write(path, data).unwrap();
    let _ = chain_node::node::config::config_file_args(path);
}

/// `chaind init`'s genesis file.
pub fn genesis(data: &[u8]) {
    if let Ok(g) = chain_node::chain::genesis::Genesis::parse(data) {
        let _ = chain_node::chain::genesis_block(&g);
    }
}

/// An export file, imported into a chain whose genesis is that of `examples/seeds.rs`'s
/// chain (so that its blocks, with true seals, are stored and mutations of them reach the
/// deeper checks); the chain is set back to its genesis after each input. What was stored
/// must be whole: the head's block and state readable.
pub fn export_file(data: &[u8]) {
    use chain_node::chain::Chain;
    static CHAIN: OnceLock<(tempfile::TempDir, Chain)> = OnceLock::new();
    let (_, chain) = CHAIN.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let chain = Chain::open(dir.path(), &seed_genesis()).unwrap();
        (dir, chain)
    });
    let stop = AtomicBool::new(false);
    let _ = chain_node::chain::import::import_stream(chain, &mut &data[..], &stop, &mut |_| {});
    let head = chain.head_number();
    if head > 0 {
        assert!(chain.block_by_number(Some(head)).unwrap().is_some());
        chain
            .account(&chain_node::crypto::Address([0x35; 20]), None)
            .expect("the head's state reads");
        chain.set_head(0).unwrap();
    }
}

/// The genesis of the seeds' chain: validator key `[0x41; 32]`, `[0x42; 32]` funded.
pub fn seed_genesis() -> chain_node::chain::genesis::Genesis {
    use chain_node::crypto::SecretKey;
    let v = SecretKey::from_slice(&[0x41; 32]).unwrap().address();
    let s = SecretKey::from_slice(&[0x42; 32]).unwrap().address();
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    chain_node::chain::genesis::Genesis::parse(
        format!(
            r#"{{"config": {{"chainId": 1000}}, "validator": "0x{}", "alloc": {{"0x{}": {{"balance": "1000000000000000000000000"}}}}}}"#,
            hex(&v.0),
            hex(&s.0)
        )
        .as_bytes(),
    )
    .unwrap()
}
