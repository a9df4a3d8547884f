//! The unlock guard of DECISIONS.md: an HTTP or WebSocket endpoint that listens on a
//! non-loopback address refuses `personal_unlockAccount` unless the node allows insecure
//! unlocking; loopback endpoints and IPC are unaffected. Tests may only listen on 127.0.0.1,
//! so the endpoint's exposure is given to the dispatcher directly, as the node does after
//! resolving the listen address.

use std::sync::Arc;

use chain_node::api::personal::PersonalApi;
use chain_node::keystore::unlock::Unlocked;
use chain_node::keystore::{keydata, Keystore, ScryptParams};
use chain_node::rpc::server::{parse_module_list, DEFAULT_LIMITS};
use chain_node::rpc::{Dispatcher, Registry, Transport};
use serde_json::{json, Value};

const KEY: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
const ADDR: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";

fn registry(dir: &std::path::Path, allow_insecure: bool) -> (Arc<Registry>, Arc<Unlocked>) {
    let ks = Arc::new(
        Keystore::open(dir)
            .unwrap()
            .with_scrypt(ScryptParams::LIGHT),
    );
    ks.import(&keydata::parse(KEY).unwrap(), "pw").unwrap();
    let unlocked = Arc::new(Unlocked::new());
    let mut r = Registry::default();
    chain_node::api::register(
        &Arc::new(PersonalApi::new(ks, unlocked.clone(), allow_insecure)),
        &mut r,
    );
    (Arc::new(r), unlocked)
}

fn unlock(d: &Dispatcher) -> Value {
    let body =
        json!({"jsonrpc":"2.0","id":1,"method":"personal_unlockAccount","params":[ADDR,"pw",60]})
            .to_string();
    serde_json::from_str(&d.handle_bytes(body.as_bytes()).unwrap()).unwrap()
}

#[test]
fn public_http_and_ws_endpoints_refuse_unlocking() {
    let dir = tempfile::tempdir().unwrap();
    let (r, unlocked) = registry(dir.path(), false);
    for transport in [Transport::Http, Transport::Ws] {
        let d = Dispatcher::new(
            r.clone(),
            Some(parse_module_list("personal")),
            transport,
            true,
            DEFAULT_LIMITS,
        );
        assert_eq!(
            unlock(&d)["error"],
            json!({"code": -32000, "message": "account unlock with HTTP access is forbidden"})
        );
    }
    assert!(
        !unlocked.is_unlocked(ADDR.parse().unwrap()),
        "nothing was unlocked"
    );
    // Loopback endpoints and IPC unlock as the spec says.
    let loopback = Dispatcher::new(
        r.clone(),
        Some(parse_module_list("personal")),
        Transport::Http,
        false,
        DEFAULT_LIMITS,
    );
    assert_eq!(unlock(&loopback)["result"], json!(true));
    let ipc = Dispatcher::new(r, None, Transport::Ipc, false, DEFAULT_LIMITS);
    assert_eq!(unlock(&ipc)["result"], json!(true));
}

#[test]
fn allow_insecure_unlock_lifts_the_guard() {
    let dir = tempfile::tempdir().unwrap();
    let (r, unlocked) = registry(dir.path(), true);
    let d = Dispatcher::new(
        r,
        Some(parse_module_list("personal")),
        Transport::Http,
        true,
        DEFAULT_LIMITS,
    );
    assert_eq!(unlock(&d)["result"], json!(true));
    assert!(unlocked.is_unlocked(ADDR.parse().unwrap()));
}
