//! The transaction pool through the real binary: a gap in the nonces waits queued and closes
//! in order; the same nonce twice is refused; the queue's limits (a sender's share, the
//! global cap that evicts the idlest sender, the lifetime) hold against senders filling it.

mod common;

use chain_node::crypto::{Address, SecretKey};
use common::{err, http_call, ok};
use serde_json::{json, Value};

fn transfer(key: &SecretKey, nonce: u64, value: u128) -> String {
    common::raw_transfer(key, nonce, Address([0x35; 20]), value, common::PRICE, 1000)
}

#[test]
fn a_gap_waits_queued_then_everything_is_sealed_in_order() {
    let n = common::dev_http_node("chain,txpool");
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let dev = common::dev_account(&n);
    let key = common::dev_key(&n);

    let h2 = ok(call(
        "chain_sendRawTransaction",
        json!([transfer(&key, 2, 3)]),
    ));
    let h1 = ok(call(
        "chain_sendRawTransaction",
        json!([transfer(&key, 1, 2)]),
    ));
    assert_eq!(
        ok(call("txpool_status", json!([]))),
        json!({"pending": "0x0", "queued": "0x2"})
    );
    let content = ok(call("txpool_content", json!([])));
    assert_eq!(content["queued"][&dev]["1"]["hash"], h1);
    assert_eq!(content["queued"][&dev]["2"]["hash"], h2);
    assert_eq!(content["pending"], json!({}));
    assert_eq!(
        ok(call("chain_getTransactionCount", json!([dev, "pending"]))),
        json!("0x0")
    );
    // A queued transaction is known by hash, without a block.
    assert_eq!(
        ok(call("chain_getTransactionByHash", json!([h2])))["blockNumber"],
        json!("0x0")
    );
    // The same nonce again, queued or not: refused, nothing changes.
    for nonce in [1, 2] {
        assert_eq!(
            err(call(
                "chain_sendRawTransaction",
                json!([transfer(&key, nonce, 99)])
            )),
            (
                -32000,
                "there is another tx which has the same nonce in the tx pool".to_string()
            )
        );
    }
    std::thread::sleep(std::time::Duration::from_millis(100));
    assert_eq!(
        ok(call("chain_blockNumber", json!([]))),
        json!("0x0"),
        "nothing to seal yet"
    );

    let h0 = ok(call(
        "chain_sendRawTransaction",
        json!([transfer(&key, 0, 1)]),
    ));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while ok(call("chain_getTransactionCount", json!([dev]))) != json!("0x3") {
        assert!(std::time::Instant::now() < deadline, "not sealed");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(
        ok(call("txpool_status", json!([]))),
        json!({"pending": "0x0", "queued": "0x0"})
    );
    // Sealed in nonce order, all in one block.
    let block = ok(call("chain_getBlockByNumber", json!(["0x1", false])));
    assert_eq!(block["transactions"], json!([h0, h1, h2]));
    assert_eq!(
        ok(call(
            "chain_getBalance",
            json!(["0x3535353535353535353535353535353535353535"])
        )),
        json!("0x6")
    );
}

/// The attack measured on the default limits, scaled down (`--txpool.nonexec-slots.all 8`,
/// `.account 4`, `--txpool.lifetime 4s`): two funded senders fill the queue with gapped nonces
/// and a third one's gapped transaction still enters, at the cost of the sender that queued
/// first; a sender's fifth queued transaction is refused; after the lifetime every idle queue
/// is gone while a pending transaction stays. `--dev.period 30s` keeps that one pending: the
/// first block is sealed at once, the next not within the test.
#[test]
fn senders_filling_the_queue_are_evicted_and_expire() {
    let mut args = vec!["--dev", "--dev.period", "30s"];
    args.extend(common::http_args("chain,txpool"));
    args.extend([
        "--txpool.nonexec-slots.account",
        "4",
        "--txpool.nonexec-slots.all",
        "8",
        "--txpool.lifetime",
        "4s",
    ]);
    let n = common::Node::start(&args);
    let url = n.http.clone().unwrap();
    let call = |m: &str, p: Value| http_call(&url, m, p);
    let send = |k: &SecretKey, nonce: u64| {
        call("chain_sendRawTransaction", json!([transfer(k, nonce, 1)]))
    };
    let status = || ok(call("txpool_status", json!([])));
    let dev = common::dev_key(&n);
    let [a, b, c] = [0x61u8, 0x62, 0x63].map(|i| SecretKey::from_slice(&[i; 32]).unwrap());

    // Funding in the first block: nonces 1 and 2 wait queued until 0 arrives.
    for (nonce, k) in [(1, &b), (2, &c), (0, &a)] {
        let raw = common::raw_transfer(
            &dev,
            nonce,
            k.address(),
            10u128.pow(18),
            common::PRICE,
            1000,
        );
        ok(call("chain_sendRawTransaction", json!([raw])));
    }
    let c_addr = format!("0x{}", hex::encode(c.address().0));
    common::wait_until("the funding block", &n, || {
        ok(call("chain_getBalance", json!([c_addr]))) != json!("0x0")
    });

    // a fills its share, b the rest of the queue.
    let mut hashes = std::collections::HashMap::new();
    for (k, name) in [(&a, "a"), (&b, "b")] {
        for nonce in 1..=4 {
            hashes.insert((name, nonce), ok(send(k, nonce)));
        }
    }
    assert_eq!(
        err(send(&a, 5)),
        (
            -32000,
            "txpool is full: the sender already has 4 queued transactions, the most one sender may have"
                .to_string()
        )
    );
    assert_eq!(status(), json!({"pending": "0x0", "queued": "0x8"}));

    // A newcomer's gapped transaction enters: a, which queued first, gives up its highest.
    let hc = ok(send(&c, 1));
    let content = ok(call("txpool_content", json!([])));
    let queued_nonces = |k: &SecretKey| -> Vec<String> {
        let who = format!("0x{}", hex::encode(k.address().0));
        content["queued"][&who]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    };
    assert_eq!(queued_nonces(&a), ["1", "2", "3"]);
    assert_eq!(queued_nonces(&b), ["1", "2", "3", "4"]);
    assert_eq!(content["queued"][&c_addr]["1"]["hash"], hc);
    assert_eq!(
        ok(call(
            "chain_getTransactionByHash",
            json!([hashes[&("a", 4)]])
        )),
        Value::Null
    );
    assert_eq!(status(), json!({"pending": "0x0", "queued": "0x8"}));

    // A pending transaction (the next block is 30 s away), then the lifetime passes.
    let pending = ok(call(
        "chain_sendRawTransaction",
        json!([common::raw_transfer(
            &dev,
            3,
            a.address(),
            1,
            common::PRICE,
            1000
        )]),
    ));
    common::wait_until("the idle queues to expire", &n, || {
        status()["queued"] == json!("0x0")
    });
    assert_eq!(status(), json!({"pending": "0x1", "queued": "0x0"}));
    let content = ok(call("txpool_content", json!([])));
    assert_eq!(content["queued"], json!({}));
    let dev_addr = common::dev_account(&n);
    assert_eq!(content["pending"][&dev_addr]["3"]["hash"], pending);
    for h in [&hashes[&("a", 1)], &hashes[&("b", 4)], &hc] {
        assert_eq!(
            ok(call("chain_getTransactionByHash", json!([h]))),
            Value::Null
        );
    }
    // Their slots are free again.
    ok(send(&b, 1));
    assert_eq!(status(), json!({"pending": "0x1", "queued": "0x1"}));
}
