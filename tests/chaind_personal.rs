//! `personal_*`, `chain_sign` and `chain_accounts` through a real `chaind`, over IPC (where
//! every module is offered) and WebSocket: every method's happy path and its documented errors
//! with exact codes and messages, and that failures change nothing on disk or in the node.

mod common;

use common::{err, ok, snapshot, write_file, Ipc, Node};
use serde_json::{json, Value};

const KEY: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
const ADDR: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";
const WALLET_KEY: &str = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b0x000x819104a190255e0cedbdd9d5f59a557633d79db1";
/// personal_sign of "hello" by KEY (personal-and-keystore.md, personal_sign example).
const HELLO_SIG: &str = "0x80f79479dab331d3d3ae067ff2db1fa8158d2b292b637c2075ceafd11deb739c42524edb57de715aa150146a79d1e3fbb37e377d7df52a84b7c871bb15e7bf431b";

fn server_err(msg: &str) -> (i64, String) {
    (-32000, msg.to_string())
}

fn params_err(msg: &str) -> (i64, String) {
    (-32602, msg.to_string())
}

fn node() -> (Node, Ipc) {
    let n = Node::start(&[]);
    let ipc = Ipc::connect(n.ipc.as_ref().unwrap());
    (n, ipc)
}

#[test]
fn new_account_import_and_listing() {
    let (n, mut c) = node();
    assert_eq!(ok(c.call("personal_listAccounts", json!([]))), json!([]));
    assert_eq!(ok(c.call("personal_listWallets", json!([]))), json!([]));
    assert_eq!(
        err(c.call("personal_newAccount", json!([]))),
        params_err("missing value for required argument 0")
    );
    let a = ok(c.call("personal_newAccount", json!(["pw"])));
    let a = a.as_str().unwrap().to_string();
    assert!(
        a.starts_with("0x") && a.len() == 42 && a == a.to_lowercase(),
        "{a}"
    );
    // null is the empty passphrase.
    let b = ok(c.call("personal_newAccount", json!([null])));
    assert_eq!(
        ok(c.call("personal_unlockAccount", json!([b, "", 5]))),
        json!(true)
    );
    assert_eq!(
        ok(c.call("personal_importRawKey", json!([KEY, "1234"]))),
        json!(ADDR)
    );
    let listed = ok(c.call("personal_listAccounts", json!([])));
    let mut want = vec![a.clone(), b.as_str().unwrap().to_string(), ADDR.to_string()];
    want.sort();
    let mut got: Vec<String> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(ok(c.call("chain_accounts", json!([]))), listed);
    // Wallets: URL-sorted, one account each, status from the unlocked set.
    let wallets = ok(c.call("personal_listWallets", json!([])));
    let ws = wallets.as_array().unwrap();
    assert_eq!(ws.len(), 3);
    let ks = std::fs::canonicalize(n.keystore()).unwrap();
    for w in ws {
        let url = w["url"].as_str().unwrap();
        assert!(
            url.starts_with(&format!("keystore://{}/UTC--", ks.display())),
            "{url}"
        );
        assert_eq!(
            w["accounts"],
            json!([{"address": w["accounts"][0]["address"], "url": url}])
        );
        let status = if w["accounts"][0]["address"] == b {
            "Unlocked"
        } else {
            "Locked"
        };
        assert_eq!(w["status"], status, "{w}");
        assert!(w.get("failure").is_none());
    }
    let urls: Vec<&str> = ws.iter().map(|w| w["url"].as_str().unwrap()).collect();
    let mut sorted = urls.clone();
    sorted.sort();
    assert_eq!(urls, sorted);
}

#[test]
fn import_errors_change_nothing() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let before = snapshot(&n.keystore());
    for (keydata, want) in [
        (KEY.to_string(), "account already exists"),
        (WALLET_KEY.to_string(), "account already exists"),
        (KEY[..63].to_string(), "invalid hex string"),
        (format!("0x{}", &KEY[..62]), "invalid hex string"),
        ("".to_string(), "invalid length, need 256 bits"),
        ("f".repeat(64), "invalid private key, >=N"),
        ("0".repeat(64), "invalid private key, zero or negative"),
        (
            WALLET_KEY.replace("0x000x", "0x010x"),
            "Chain wallet key type must be 00.",
        ),
    ] {
        assert_eq!(
            err(c.call("personal_importRawKey", json!([keydata, "x"]))),
            server_err(want),
            "{keydata}"
        );
    }
    assert_eq!(
        err(c.call("personal_importRawKey", json!([KEY]))),
        params_err("missing value for required argument 1")
    );
    assert_eq!(
        err(c.call("personal_importRawKey", json!([KEY, "a", "b"]))),
        params_err("too many arguments, want at most 2")
    );
    assert_eq!(
        snapshot(&n.keystore()),
        before,
        "failed imports must not touch the keystore"
    );
}

#[test]
fn replace_raw_key_semantics() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let files_before: Vec<_> = common::key_files(&n.keystore());
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 0])));
    let before = snapshot(&n.keystore());
    // Failures: nothing changes, not the file and not the lock state.
    assert_eq!(
        err(c.call(
            "personal_replaceRawKey",
            json!([WALLET_KEY, "wrong", "new"])
        )),
        server_err("could not decrypt key with given passphrase")
    );
    assert_eq!(
        err(c.call(
            "personal_replaceRawKey",
            json!([WALLET_KEY.replace("db1", "db2"), "1234", "new"])
        )),
        server_err("no key for given address or file")
    );
    assert_eq!(
        err(c.call("personal_replaceRawKey", json!(["zz", "1234", "new"]))),
        server_err("invalid hex string")
    );
    assert_eq!(snapshot(&n.keystore()), before);
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG),
        "still unlocked"
    );
    // Success: same file name, new key, new passphrase, account locked.
    assert_eq!(
        ok(c.call("personal_replaceRawKey", json!([WALLET_KEY, "1234", "new"]))),
        json!(ADDR)
    );
    assert_eq!(
        common::key_files(&n.keystore()),
        files_before,
        "the file keeps its name"
    );
    assert_eq!(
        err(c.call("chain_sign", json!([ADDR, "0x00"]))),
        server_err("authentication needed: password or unlock")
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["0x68656c6c6f", ADDR, "1234"]))),
        server_err("could not decrypt key with given passphrase")
    );
    let sig = ok(c.call("personal_sign", json!(["0x68656c6c6f", ADDR, "new"])));
    assert_ne!(sig, json!(HELLO_SIG));
    // The new key's own address signed it; the account address stays the wallet key's.
    assert_eq!(
        ok(c.call("personal_ecRecover", json!(["0x68656c6c6f", sig]))),
        json!("0x90b3e9a3770481345a7f17f22f16d020bccfd33e")
    );
}

#[test]
fn unlock_lock_and_expiry() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    assert_eq!(
        err(c.call("personal_unlockAccount", json!([ADDR, "nope"]))),
        server_err("could not decrypt key with given passphrase")
    );
    assert_eq!(
        err(c.call(
            "personal_unlockAccount",
            json!(["0x0000000000000000000000000000000000000001", "x"])
        )),
        server_err("no key for given address or file")
    );
    assert_eq!(
        err(c.call("personal_unlockAccount", json!([ADDR]))),
        params_err("missing value for required argument 1")
    );
    let (code, msg) = err(c.call("personal_unlockAccount", json!(["0x1234", "x"])));
    assert_eq!(
        (code, msg.as_str()),
        (
            -32602,
            "invalid argument 0: hex string has length 4, want 40 for common.Address"
        )
    );
    let (code, msg) = err(c.call("personal_unlockAccount", json!([ADDR, "1234", "10"])));
    assert_eq!(code, -32602);
    assert!(msg.starts_with("invalid argument 2: "), "{msg}");
    assert_eq!(
        err(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        server_err("authentication needed: password or unlock")
    );
    // A one-second unlock, observed to expire.
    assert_eq!(
        ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 1]))),
        json!(true)
    );
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let r = c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]));
        if r.get("error").is_some() {
            assert_eq!(
                err(r),
                server_err("authentication needed: password or unlock")
            );
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the unlock never expired"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // An unlimited unlock followed by a short one expires (the later unlock replaces).
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 0])));
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 1])));
    std::thread::sleep(std::time::Duration::from_millis(1600));
    assert_eq!(
        err(c.call("chain_sign", json!([ADDR, "0x00"]))).1,
        "authentication needed: password or unlock"
    );
    // Default duration (300 s) and lock.
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", null])));
    let w = ok(c.call("personal_listWallets", json!([])));
    assert_eq!(w[0]["status"], "Unlocked");
    assert_eq!(
        ok(c.call("personal_lockAccount", json!([ADDR]))),
        json!(true)
    );
    assert_eq!(
        ok(c.call("personal_lockAccount", json!([ADDR]))),
        json!(true),
        "an account of the keystore"
    );
    assert_eq!(
        ok(c.call(
            "personal_lockAccount",
            json!(["0x0000000000000000000000000000000000000001"])
        )),
        json!(false)
    );
    assert_eq!(
        ok(c.call("personal_listWallets", json!([])))[0]["status"],
        "Locked"
    );
    assert_eq!(
        err(c.call("chain_sign", json!([ADDR, "0x00"]))).1,
        "authentication needed: password or unlock"
    );
    drop(n);
}

#[test]
fn sign_and_recover() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let before = snapshot(&n.keystore());
    assert_eq!(
        ok(c.call("personal_sign", json!(["0x68656c6c6f", ADDR, "1234"]))),
        json!(HELLO_SIG)
    );
    assert_eq!(
        ok(c.call("personal_ecRecover", json!(["0x68656c6c6f", HELLO_SIG]))),
        json!(ADDR)
    );
    // Signing needs no unlock and leaves the account locked.
    assert_eq!(
        ok(c.call("personal_listWallets", json!([])))[0]["status"],
        "Locked"
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["0x68656c6c6f", ADDR, "bad"]))),
        server_err("could not decrypt key with given passphrase")
    );
    assert_eq!(
        err(c.call(
            "personal_sign",
            json!([
                "0x68656c6c6f",
                "0x0000000000000000000000000000000000000001",
                "x"
            ])
        )),
        server_err("unknown account")
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["hello", ADDR, "1234"]))),
        params_err("invalid argument 0: json: cannot unmarshal hex string without 0x prefix into Go value of type hexutil.Bytes")
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["0x123", ADDR, "1234"]))),
        params_err("invalid argument 0: json: cannot unmarshal hex string of odd length into Go value of type hexutil.Bytes")
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["0x68656c6c6f", null, "1234"]))).0,
        -32602
    );
    assert_eq!(
        err(c.call(
            "chain_sign",
            json!(["0x0000000000000000000000000000000000000001", "0x00"])
        )),
        server_err("unknown account")
    );
    // ecRecover's checks, in order.
    assert_eq!(
        err(c.call(
            "personal_ecRecover",
            json!(["0x00", format!("0x{}", "11".repeat(64))])
        )),
        server_err("signature must be 65 bytes long")
    );
    assert_eq!(
        err(c.call(
            "personal_ecRecover",
            json!(["0x00", format!("0x{}01", "11".repeat(64))])
        )),
        server_err("invalid signature (V is not 27 or 28)")
    );
    assert_eq!(
        err(c.call(
            "personal_ecRecover",
            json!(["0x00", format!("0x{}1b", "00".repeat(64))])
        )),
        server_err("recovery failed")
    );
    // chain_sign gives the same signature as personal_sign once unlocked.
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 60])));
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
    assert_eq!(snapshot(&n.keystore()), before, "signing writes nothing");
}

#[test]
fn signed_message_vectors_through_the_node() {
    let (_n, mut c) = node();
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/signed-message.json"
    );
    let v: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    for case in v["cases"].as_array().unwrap() {
        let addr = ok(c.call("personal_importRawKey", json!([case["private_key"], "p"])));
        assert_eq!(addr, case["address"]);
        assert_eq!(
            ok(c.call("personal_sign", json!([case["message_hex"], addr, "p"]))),
            case["signature"]
        );
        assert_eq!(
            ok(c.call(
                "personal_ecRecover",
                json!([case["message_hex"], case["signature"]])
            )),
            case["address"]
        );
    }
}

#[test]
fn wallets_open_and_derive() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let url = ok(c.call("personal_listWallets", json!([])))[0]["url"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(ok(c.call("personal_openWallet", json!([url]))), Value::Null);
    assert_eq!(
        ok(c.call("personal_openWallet", json!([url, "anything"]))),
        Value::Null
    );
    assert_eq!(
        err(c.call("personal_openWallet", json!(["no-scheme"]))),
        server_err("protocol scheme missing")
    );
    assert_eq!(
        err(c.call("personal_openWallet", json!(["keystore:///nowhere"]))),
        server_err("unknown wallet")
    );
    assert_eq!(
        err(c.call("personal_deriveAccount", json!([url, "m/44'/60'/0'/0/0"]))),
        server_err("not supported")
    );
    assert_eq!(
        err(c.call("personal_deriveAccount", json!([url, "m/x", true]))),
        server_err("invalid component: x")
    );
    assert_eq!(
        err(c.call(
            "personal_deriveAccount",
            json!(["keystore:///nowhere", "m/0"])
        )),
        server_err("unknown wallet")
    );
    assert_eq!(
        err(c.call("personal_deriveAccount", json!([url]))),
        params_err("missing value for required argument 1")
    );
    drop(n);
}

#[test]
fn duplicate_key_files_are_reported_with_their_paths() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let f = common::key_files(&n.keystore()).pop().unwrap();
    let copy = n.keystore().join("zz-copy");
    std::fs::copy(&f, &copy).unwrap();
    let listed = ok(c.call("personal_listAccounts", json!([])));
    assert_eq!(listed, json!([ADDR, ADDR]), "both files are listed");
    let ks = std::path::absolute(n.keystore()).unwrap();
    let want = format!(
        "multiple keys match address ({}, {})",
        ks.join(f.file_name().unwrap()).display(),
        ks.join("zz-copy").display()
    );
    assert_eq!(
        err(c.call("personal_unlockAccount", json!([ADDR, "1234"]))),
        server_err(&want)
    );
    assert_eq!(
        err(c.call("personal_sign", json!(["0x00", ADDR, "1234"]))),
        server_err(&want)
    );
}

#[test]
fn keys_imported_offline_are_seen_by_the_running_node() {
    let (n, mut c) = node();
    let pw = write_file(n.datadir.path(), "pw", "1234\n");
    let r = common::keytool(
        &n.keystore(),
        &[
            "import-raw",
            "--light",
            "--password-file",
            pw.to_str().unwrap(),
            KEY,
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        ok(c.call("personal_listAccounts", json!([]))),
        json!([ADDR])
    );
    assert_eq!(
        ok(c.call("personal_sign", json!(["0x68656c6c6f", ADDR, "1234"]))),
        json!(HELLO_SIG)
    );
    // And a key created by the node is seen offline.
    let a = ok(c.call("personal_newAccount", json!(["x"])));
    let listed = common::keytool(&n.keystore(), &["list"]);
    assert!(
        listed.stdout.contains(a.as_str().unwrap()),
        "{}",
        listed.stdout
    );
}

#[test]
fn personal_over_websocket_when_listed() {
    let n = Node::start(&["--ws", "--wsaddr", "127.0.0.1", "--wsport", "0"]);
    let (mut ws, _) = tungstenite::connect(n.ws.as_ref().unwrap().as_str()).unwrap();
    let mut call = |method: &str, params: Value| -> Value {
        ws.send(tungstenite::Message::text(
            json!({"jsonrpc":"2.0","id":1,"method":method,"params":params}).to_string(),
        ))
        .unwrap();
        loop {
            if let tungstenite::Message::Text(t) = ws.read().unwrap() {
                return serde_json::from_str(t.as_str()).unwrap();
            }
        }
    };
    assert_eq!(
        ok(call("personal_importRawKey", json!([KEY, "1234"]))),
        json!(ADDR)
    );
    // The WebSocket endpoint listens on loopback, so unlocking is allowed (DECISIONS.md).
    assert_eq!(
        ok(call("personal_unlockAccount", json!([ADDR, "1234", 30]))),
        json!(true)
    );
    assert_eq!(
        ok(call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
}

#[test]
fn unlock_duration_limit() {
    let (_n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    let too_large = server_err("unlock duration too large");
    // Above the limit: the error, before the key file is looked at (so also with a wrong
    // passphrase, and for an unknown account).
    for secs in [json!(9_223_372_037u64), json!(u64::MAX)] {
        assert_eq!(
            err(c.call("personal_unlockAccount", json!([ADDR, "1234", secs]))),
            too_large,
            "{secs}"
        );
        assert_eq!(
            err(c.call("personal_unlockAccount", json!([ADDR, "wrong", secs]))),
            too_large
        );
        assert_eq!(
            err(c.call(
                "personal_unlockAccount",
                json!(["0x0000000000000000000000000000000000000001", "x", secs])
            )),
            too_large
        );
    }
    // Nothing was unlocked.
    assert_eq!(
        err(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        server_err("authentication needed: password or unlock")
    );
    assert_eq!(
        ok(c.call("personal_listWallets", json!([])))[0]["status"],
        "Locked"
    );
    // Beyond u64 it is a decoding error, as any non-integer.
    let (code, msg) = err(c.call(
        "personal_unlockAccount",
        json!([ADDR, "1234", 18_446_744_073_709_551_616f64]),
    ));
    assert_eq!(code, -32602, "{msg}");
    // The limit itself is allowed.
    assert_eq!(
        ok(c.call(
            "personal_unlockAccount",
            json!([ADDR, "1234", 9_223_372_036u64])
        )),
        json!(true)
    );
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
    // A refused unlock leaves an earlier one as it was.
    assert_eq!(
        err(c.call(
            "personal_unlockAccount",
            json!([ADDR, "1234", 9_223_372_037u64])
        )),
        too_large
    );
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
}

#[test]
fn chain_sign_refuses_an_account_whose_key_file_is_gone() {
    let (n, mut c) = node();
    ok(c.call("personal_importRawKey", json!([KEY, "1234"])));
    ok(c.call("personal_unlockAccount", json!([ADDR, "1234", 0])));
    assert_eq!(
        ok(c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]))),
        json!(HELLO_SIG)
    );
    let files = common::key_files(&n.keystore());
    assert_eq!(files.len(), 1);
    std::fs::remove_file(&files[0]).unwrap();
    // The key is still in memory, but the account is no longer in the keystore: noticed
    // within a second (chain_sign looks at the directory at most once a second).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let gone = loop {
        let v = c.call("chain_sign", json!([ADDR, "0x68656c6c6f"]));
        if v.get("error").is_some() {
            break err(v);
        }
        assert_eq!(ok(v), json!(HELLO_SIG));
        assert!(
            std::time::Instant::now() < deadline,
            "the deletion was never noticed"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(gone, server_err("unknown account"));
    assert_eq!(ok(c.call("personal_listAccounts", json!([]))), json!([]));
    assert_eq!(ok(c.call("chain_accounts", json!([]))), json!([]));
}
