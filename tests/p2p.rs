//! The p2p server through real `chaind` processes on 127.0.0.1: peering with admin_addPeer,
//! removal, redial after a crash, the static nodes file, the connection limit, and hostile or
//! foreign connections, each refused with its reason in the log while the node keeps serving.

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::{err, http_args, http_call, ok, Node};
use serde_json::{json, Value};

use chain_node::crypto::SecretKey;

/// Writes a genesis file: validator and one funded account, optionally a network id and an
/// extra funded account (another genesis block).
fn genesis(dir: &Path, name: &str, network_id: Option<u64>, other: bool) -> PathBuf {
    let validator = SecretKey::from_slice(&[0x41; 32]).unwrap();
    let mut alloc = format!(r#""0x{}": {{"balance": "1000000"}}"#, "42".repeat(20));
    if other {
        alloc.push_str(&format!(r#", "0x{}": {{"balance": "7"}}"#, "43".repeat(20)));
    }
    let mut text = format!(
        r#"{{"validator": "0x{}", "alloc": {{{alloc}}}"#,
        hex::encode(validator.address().0)
    );
    if let Some(n) = network_id {
        text.push_str(&format!(r#", "networkId": {n}"#));
    }
    text.push('}');
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A fresh data directory initialised with `genesis`.
fn init_dir(genesis: &Path) -> tempfile::TempDir {
    let dd = tempfile::tempdir().unwrap();
    let out = common::chaind_run(dd.path(), &["init", genesis.to_str().unwrap()]);
    assert!(out.status.success(), "{out:?}");
    dd
}

/// A follower node of `genesis` with HTTP (admin, net, chain) and `extra` flags.
fn start(dd: tempfile::TempDir, extra: &[&str]) -> Node {
    let mut args: Vec<&str> = http_args("admin,net,chain").to_vec();
    args.extend(extra);
    let n = Node::start_in(dd, &args);
    assert!(n.kni.is_some(), "no P2P listening line:\n{}", n.log_text());
    n
}

fn node(genesis: &Path, extra: &[&str]) -> Node {
    start(init_dir(genesis), extra)
}

fn call(n: &Node, method: &str, params: Value) -> Value {
    http_call(n.http.as_ref().unwrap(), method, params)
}

fn peers(n: &Node) -> Vec<Value> {
    ok(call(n, "admin_peers", json!([])))
        .as_array()
        .unwrap()
        .clone()
}

fn id_of(n: &Node) -> String {
    ok(call(n, "admin_nodeInfo", json!([])))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

fn kni(n: &Node) -> String {
    n.kni.clone().unwrap()
}

/// Polls `f` until it holds (at most 30 s; the test fails then, saying what it waited for).
fn wait_until(what: &str, n: &Node, mut f: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !f() {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; log:\n{}",
            n.log_text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn wait_log(n: &Node, needle: &str) {
    wait_until(&format!("log line {needle:?}"), n, || {
        n.log_text().contains(needle)
    });
}

fn peer_ids(n: &Node) -> Vec<String> {
    peers(n)
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_string())
        .collect()
}

fn connect(a: &Node, b: &Node) {
    assert_eq!(ok(call(a, "admin_addPeer", json!([kni(b)]))), json!(true));
    let (ida, idb) = (id_of(a), id_of(b));
    wait_until("the peers to connect", a, || {
        peer_ids(a).contains(&idb) && peer_ids(b).contains(&ida)
    });
}

/// The host:port of a kni URL.
fn addr_of(kni: &str) -> String {
    let rest = kni.split('@').nth(1).unwrap();
    rest.split('?').next().unwrap().to_string()
}

#[test]
fn two_nodes_peer_and_unpeer() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let a = node(&g, &[]);
    let b = node(&g, &[]);
    let (ida, idb) = (id_of(&a), id_of(&b));

    // nodeInfo is the listener's record, as the log line says.
    let info = ok(call(&b, "admin_nodeInfo", json!([])));
    let port: u16 = addr_of(&kni(&b))
        .rsplit(':')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert_ne!(port, 0);
    assert_eq!(
        info["kni"],
        json!(format!("kni://{idb}@127.0.0.1:{port}?discport=0"))
    );
    assert_eq!(info["kni"], json!(kni(&b)));
    assert!(
        b.log_text()
            .contains(&format!("P2P listening kni=\"{}\"", kni(&b))),
        "{}",
        b.log_text()
    );
    assert_eq!(info["ip"], json!("127.0.0.1"));
    assert_eq!(info["listenAddr"], json!(format!("127.0.0.1:{port}")));
    assert_eq!(info["ports"], json!({"discovery": 0, "listener": port}));
    assert_eq!(ok(call(&b, "net_listening", json!([]))), json!(true));
    assert_eq!(ok(call(&b, "net_peerCount", json!([]))), json!("0x0"));
    assert_eq!(peers(&b), Vec::<Value>::new());

    connect(&a, &b);
    let genesis_hash = ok(call(&a, "chain_getBlockByNumber", json!(["0x0"])))["hash"].clone();
    let pa = peers(&a);
    let pb = peers(&b);
    assert_eq!((pa.len(), pb.len()), (1, 1));
    for (p, id, inbound, is_static) in [(&pa[0], &idb, false, true), (&pb[0], &ida, true, false)] {
        let mut keys: Vec<&String> = p.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(keys, ["caps", "id", "name", "network", "protocols"], "{p}");
        assert_eq!(p["id"], json!(id));
        assert!(p["name"].as_str().unwrap().starts_with("chaind/"), "{p}");
        assert_eq!(p["caps"], json!(["istanbul/65"]));
        let net = &p["network"];
        let mut keys: Vec<&String> = net.as_object().unwrap().keys().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "inbound",
                "localAddress",
                "nodeType",
                "remoteAddress",
                "static",
                "trusted"
            ]
        );
        assert_eq!(net["inbound"], json!(inbound));
        assert_eq!(net["static"], json!(is_static));
        assert_eq!(net["trusted"], json!(false));
        assert_eq!(net["nodeType"], json!("unknown"));
        assert_eq!(
            p["protocols"]["istanbul"],
            json!({"version": 65, "difficulty": 131072, "head": genesis_hash})
        );
    }
    // A dialed B at its listening address.
    assert_eq!(pa[0]["network"]["remoteAddress"], json!(addr_of(&kni(&b))));
    assert_eq!(pb[0]["network"]["localAddress"], json!(addr_of(&kni(&b))));
    for n in [&a, &b] {
        assert_eq!(ok(call(n, "net_peerCount", json!([]))), json!("0x1"));
    }
    wait_log(&a, &format!("Peer connected id={}", &idb[..16]));
    wait_log(&b, "inbound=true");

    // Adding it again changes nothing; our own URL is not allowed.
    assert_eq!(ok(call(&a, "admin_addPeer", json!([kni(&b)]))), json!(true));
    assert_eq!(
        ok(call(&a, "admin_addPeer", json!([kni(&a)]))),
        json!(false)
    );
    assert_eq!(
        ok(call(&a, "admin_removePeer", json!([kni(&a)]))),
        json!(false)
    );
    assert_eq!(peers(&a).len(), 1);

    // removePeer drops it on both sides, and A does not dial it again.
    assert_eq!(
        ok(call(&a, "admin_removePeer", json!([kni(&b)]))),
        json!(true)
    );
    wait_until("the peers to part", &a, || {
        peers(&a).is_empty() && peers(&b).is_empty()
    });
    wait_log(&a, "reason=requested");
    wait_log(&b, "reason=\"disconnected by the peer: requested\"");
    std::thread::sleep(Duration::from_secs(3)); // several redial periods, were it still static
    assert!(peers(&a).is_empty() && peers(&b).is_empty());
    assert_eq!(
        a.log_text().matches("Peer connected").count(),
        1,
        "{}",
        a.log_text()
    );
    // Removing an unknown node is fine too.
    assert_eq!(
        ok(call(&a, "admin_removePeer", json!([kni(&b)]))),
        json!(true)
    );
}

#[test]
fn a_killed_static_peer_is_redialed_when_it_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let a = node(&g, &[]);
    let mut b = node(&g, &[]);
    let idb = id_of(&b);
    let port = addr_of(&kni(&b)).rsplit(':').next().unwrap().to_string();
    connect(&a, &b);

    b.child.kill().unwrap(); // SIGKILL
    b.child.wait().unwrap();
    wait_until("A to see B gone", &a, || peers(&a).is_empty());
    let dd = std::mem::replace(&mut b.datadir, tempfile::tempdir().unwrap());
    drop(b);
    let b = start(dd, &["--port", &port]);
    assert_eq!(id_of(&b), idb);
    wait_until("A to redial B", &a, || peer_ids(&a) == [idb.clone()]);
    assert_eq!(peers(&a)[0]["network"]["static"], json!(true));
}

/// A peer played by the test process (a fresh node key) that dials `n`, completes the
/// handshake and the status exchange (echoing `n`'s status), and is admitted: its id and
/// connection.
fn admitted_test_peer(n: &Node) -> (String, chain_node::p2p::transport::Connection) {
    use chain_node::p2p::{identity::NodeIdentity, transport, url::parse_kni, wire};
    let me = NodeIdentity::new(SecretKey::random());
    let url = parse_kni(&kni(n)).unwrap();
    let mut conn = transport::handshake(
        TcpStream::connect(url.addr.unwrap()).unwrap(),
        &me,
        transport::Role::Dialer { expected: url.id },
        Duration::from_secs(10),
    )
    .unwrap();
    conn.reader
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let theirs = match wire::decode(&conn.reader.recv().unwrap()).unwrap() {
        wire::Message::Status(s) => s,
        other => panic!("want a status first, got {other:?}"),
    };
    conn.writer
        .send(&wire::encode(&wire::Message::Status(theirs)))
        .unwrap();
    let my_id = me.id().to_string();
    wait_until("the test peer to be admitted", n, || {
        peer_ids(n).contains(&my_id)
    });
    (my_id, conn)
}

#[test]
fn hostile_connections_are_refused_and_the_node_keeps_its_peer() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let a = node(&g, &[]);
    let b = node(&g, &[]);
    let ida = id_of(&a);
    connect(&a, &b);
    let baddr = addr_of(&kni(&b));

    // Garbage bytes on the p2p port.
    let mut s = TcpStream::connect(&baddr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(&[0xffu8; 300]).unwrap();
    let mut buf = Vec::new();
    let _ = s.read_to_end(&mut buf); // B closes it
    wait_log(&b, "Peer handshake failed");
    assert!(
        b.log_text().contains("reason=\"handshake failed"),
        "{}",
        b.log_text()
    );

    // A dial to B's address expecting another node: the dialer (A) refuses it.
    let wrong = "ab".repeat(64);
    let url = format!("kni://{wrong}@{baddr}?discport=0");
    assert_eq!(ok(call(&a, "admin_addPeer", json!([url]))), json!(true));
    wait_log(&a, "wrong node id: dialed abab");
    assert!(!peer_ids(&a).contains(&wrong));
    assert_eq!(ok(call(&a, "admin_removePeer", json!([url]))), json!(true));

    // A huge message from a peer that passed the handshake and the status exchange.
    use chain_node::p2p::transport;
    let (my_id, mut conn) = admitted_test_peer(&b);
    // The transport refuses to send over the limit; the largest message it allows is junk.
    assert!(matches!(
        conn.writer.send(&vec![0u8; transport::MAX_MESSAGE + 1]),
        Err(transport::TransportError::TooLarge { .. })
    ));
    let _ = conn.writer.send(&vec![0xc1u8; transport::MAX_MESSAGE]);
    wait_log(&b, "undecodable message");
    wait_until("B to drop the test peer", &b, || {
        !peer_ids(&b).contains(&my_id)
    });

    // A header declaring more than the limit: refused before anything is read or allocated.
    let (my_id, mut conn) = admitted_test_peer(&b);
    conn.writer.send_length_header(u32::MAX).unwrap();
    wait_log(
        &b,
        "message of 4294967295 bytes exceeds the limit of 16777216 bytes",
    );
    wait_until("B to drop the second test peer", &b, || {
        !peer_ids(&b).contains(&my_id)
    });

    // B still serves and still has A.
    assert_eq!(peer_ids(&b), [ida]);
    assert_eq!(ok(call(&b, "net_peerCount", json!([]))), json!("0x1"));
}

#[test]
fn nodes_of_another_network_or_genesis_are_refused_on_both_sides() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let other_net = genesis(dir.path(), "net.json", Some(77), false);
    let other_gen = genesis(dir.path(), "gen.json", None, true);
    let a = node(&g, &[]);
    let c = node(&other_net, &[]);
    let d = node(&other_gen, &[]);
    for (n, want) in [(&c, "network id mismatch"), (&d, "genesis mismatch")] {
        assert_eq!(ok(call(&a, "admin_addPeer", json!([kni(n)]))), json!(true));
        wait_log(&a, want);
        wait_log(n, want);
        assert!(a.log_text().contains("Peer refused"));
        assert!(n.log_text().contains("Peer refused"));
        assert!(peers(&a).is_empty() && peers(n).is_empty());
        assert_eq!(
            ok(call(&a, "admin_removePeer", json!([kni(n)]))),
            json!(true)
        );
    }
    assert!(!a.log_text().contains("Peer connected"));
}

#[test]
fn malformed_urls_are_errors_with_the_reference_texts() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let a = node(&g, &[]);
    let id = "ab".repeat(64);
    for (url, want) in [
        (
            format!("http://{id}@127.0.0.1:1"),
            r#"invalid kni: invalid URL scheme, want "kni""#.to_string(),
        ),
        (
            "kni://abcd@127.0.0.1:1".into(),
            "invalid kni: invalid node ID (wrong length, want 128 hex chars)".into(),
        ),
        (
            format!("kni://{id}@127.0.0.1:99999"),
            "invalid kni: invalid port".into(),
        ),
        (
            format!("kni://{id}@no-such-host.invalid:1"),
            "invalid kni: lookup no-such-host.invalid: no such host".into(),
        ),
    ] {
        for m in ["admin_addPeer", "admin_removePeer"] {
            assert_eq!(
                err(call(&a, m, json!([url]))),
                (-32000, want.clone()),
                "{m} {url}"
            );
        }
    }
    // The parameter is required.
    assert_eq!(err(call(&a, "admin_addPeer", json!([]))).0, -32602);
    assert_eq!(
        ok(call(&a, "admin_addPeer", json!([kni(&a)]))),
        json!(false)
    );

    // A node without a chain runs no p2p.
    let bare = Node::start(&http_args("admin,net"));
    assert!(bare.kni.is_none());
    assert!(bare.log_text().contains("P2P disabled"));
    let c = |m: &str, p: Value| http_call(bare.http.as_ref().unwrap(), m, p);
    assert_eq!(ok(c("admin_peers", json!([]))), json!([]));
    assert_eq!(ok(c("net_peerCount", json!([]))), json!("0x0"));
    assert_eq!(ok(c("net_listening", json!([]))), json!(false));
    let (code, msg) = err(c("admin_addPeer", json!([kni(&a)])));
    assert_eq!(code, -32000);
    assert!(msg.starts_with("p2p is not running"), "{msg}");
    assert_eq!(
        ok(c("admin_nodeInfo", json!([])))["ports"],
        json!({"discovery": 0, "listener": 0})
    );
}

#[test]
fn maxconnections_refuses_one_inbound_peer_too_many() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let b = node(&g, &["--maxconnections", "1"]);
    let a = node(&g, &[]);
    let c = node(&g, &[]);
    connect(&a, &b);
    assert_eq!(ok(call(&c, "admin_addPeer", json!([kni(&b)]))), json!(true));
    wait_log(&b, "reason=\"too many peers (--maxconnections 1)\"");
    wait_log(&c, "too many peers");
    assert_eq!(peer_ids(&b), [id_of(&a)]);
    assert!(peers(&c).is_empty());

    // Stopping B with a peer connected: it exits cleanly and tells A why.
    let mut b = b;
    assert!(
        b.terminate(20).is_some_and(|st| st.success()),
        "{}",
        b.log_text()
    );
    wait_log(
        &a,
        "reason=\"disconnected by the peer: node shutting down\"",
    );
}

#[test]
fn static_nodes_file_connects_at_start_up_and_a_bad_entry_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let b = node(&g, &[]);
    let dd = init_dir(&g);
    std::fs::write(
        dd.path().join("static-nodes.json"),
        serde_json::to_string(&json!([kni(&b)])).unwrap(),
    )
    .unwrap();
    let a = start(dd, &[]);
    let idb = id_of(&b);
    wait_until("A to dial its static node", &a, || {
        peer_ids(&a) == [idb.clone()]
    });
    assert_eq!(peers(&a)[0]["network"]["static"], json!(true));

    // --staticnodes names another file; a bad entry is named in the start-up error.
    let bad = dir.path().join("bad.json");
    std::fs::write(&bad, r#"["kni://1234@127.0.0.1:1"]"#).unwrap();
    let dd = init_dir(&g);
    let out = common::chaind_run(
        dd.path(),
        &[
            "--port",
            "0",
            "--ipcdisable",
            "--staticnodes",
            bad.to_str().unwrap(),
        ],
    );
    assert_ne!(out.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "static nodes {}: entry 0 (\"kni://1234@127.0.0.1:1\"): invalid kni: invalid node ID",
            bad.display()
        )),
        "{stderr}"
    );
}

/// A flood of bare TCP connections that never speak, all from one address: that address
/// holds at most its share of the places of connections in their handshake, each new one
/// taking the place of its oldest (one warning in the log, not one per connection); RPC keeps
/// answering, and a real peer is admitted while the silent ones are still open.
#[test]
fn a_flood_of_silent_connections_from_one_address_holds_only_its_share() {
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let a = node(&g, &[]);
    let b = node(&g, &[]);
    let baddr = addr_of(&kni(&b));
    let share = chain_node::p2p::server::MAX_HANDSHAKING_PER_ADDRESS;
    let flood = chain_node::p2p::server::MAX_HANDSHAKING + 6;
    let mut silent = Vec::new();
    for _ in 0..flood {
        let s = TcpStream::connect(&baddr).unwrap();
        s.set_read_timeout(Some(Duration::from_millis(100)))
            .unwrap();
        silent.push(s);
    }
    // The node closes the oldest ones without a byte; the newest `share` stay open (their
    // handshake waits for them: 5 s).
    let closed = |s: &TcpStream| {
        let mut buf = [0u8; 1];
        match (&*s).read(&mut buf) {
            Ok(0) => true,
            Ok(_) => panic!("the node spoke first"),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => true,
            Err(_) => false, // timed out: still open
        }
    };
    // Within the newest connections' handshake time (5 s): they are still open...
    for (i, s) in silent[flood - share..].iter().enumerate() {
        assert!(!closed(s), "one of the newest {share} was closed: {i}");
    }
    // ...and a real peer from the same address gets in at once, while they stay.
    let started = Instant::now();
    connect(&a, &b);
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "the peer waited for the silent ones to time out"
    );
    // The older ones were closed by the node without a byte.
    for (i, s) in silent[..flood - share].iter().enumerate() {
        s.set_read_timeout(Some(Duration::from_secs(4))).unwrap();
        assert!(closed(s), "silent connection {i} of {flood} is still open");
    }
    wait_log(&b, "Too many inbound connections in their handshake");
    assert_eq!(
        b.log_text()
            .matches("Too many inbound connections in their handshake")
            .count(),
        1,
        "one warning, not one per connection"
    );
    assert_eq!(ok(call(&b, "net_peerCount", json!([]))), json!("0x1"));
    drop(silent);
}

/// A peer that sends `GetBlocks` back to back is served at the pace of its limit (a burst,
/// then the rate), not as fast as the node can read blocks; it stays connected (slowed, not
/// dropped) and RPC answers meanwhile.
#[test]
fn a_peer_asking_for_blocks_too_fast_is_slowed() {
    use chain_node::p2p::{serve_limit, wire};
    let dir = tempfile::tempdir().unwrap();
    let g = genesis(dir.path(), "g.json", None, false);
    let b = node(&g, &[]);
    let (my_id, mut conn) = admitted_test_peer(&b);
    let asked = 1000;
    let get = wire::encode(&wire::Message::GetBlocks { from: 0, count: 1 });
    let started = Instant::now();
    for _ in 0..asked {
        conn.writer.send(&get).unwrap();
    }
    conn.reader
        .set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let window = Duration::from_secs(2);
    let mut answered = 0usize;
    while started.elapsed() < window {
        match conn.reader.recv() {
            Ok(m) => {
                if let wire::Message::Blocks { blocks } = wire::decode(&m).unwrap() {
                    assert_eq!(blocks.len(), 1, "the genesis block");
                    answered += 1;
                }
            }
            Err(_) => continue, // timed out: nothing came
        }
    }
    let elapsed = started.elapsed().as_secs_f64();
    let allowed = serve_limit::REQUEST_BURST + serve_limit::REQUESTS_PER_SECOND * elapsed;
    assert!(
        (answered as f64) <= allowed + 2.0,
        "{answered} of {asked} answered in {elapsed:.2} s; the limit allows {allowed:.0}"
    );
    assert!(
        answered as f64 >= serve_limit::REQUEST_BURST,
        "only {answered} answered"
    );
    // Slowed, not dropped; RPC is served meanwhile.
    assert!(peer_ids(&b).contains(&my_id));
    assert_eq!(ok(call(&b, "net_peerCount", json!([]))), json!("0x1"));
}
