//! The transaction pool through the real binary: a gap in the nonces waits queued and closes
//! in order; the same nonce twice is refused.

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
