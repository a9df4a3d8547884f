//! The check of a client script's JSON summary (`tests/oracle/eth`) against the oracle of
//! `tests/eth_tools.rs`.

use serde_json::{json, Value};

use super::common::contracts::{addr_word, compiled};
use super::common::PRICE;
use super::{low, num, Target, FUND};

/// A script's summary against the oracle: receipts, code, logs through the filter and
/// getLogs, balances, nonce, fee history and the block of its last transfer.
pub fn summary_checks(t: &Target, s: &Value, me: &str, recipient: &str) {
    let client = s["client"].as_str().unwrap();
    assert_eq!(num(&s["chainId"]), t.chain_id as u128, "{client}");
    assert_eq!(low(&s["sender"]), me, "{client}");
    assert_eq!(num(&s["startBalance"]), FUND, "{client}");

    // Receipts: the oracle's, and what each transaction cost.
    let mut spent = 0;
    for k in ["deploy", "transfer", "eip1559", "legacy"] {
        let r = &s[k];
        let o = t.receipt(&low(&r["hash"]));
        assert_eq!(num(&r["status"]), 1, "{client} {k}: {r}");
        assert_eq!(num(&o["status"]), 1, "{client} {k}: {o}");
        assert_eq!(
            num(&r["blockNumber"]),
            num(&o["blockNumber"]),
            "{client} {k}"
        );
        assert_eq!(low(&r["blockHash"]), low(&o["blockHash"]), "{client} {k}");
        assert_eq!(num(&r["gasUsed"]), num(&o["gasUsed"]), "{client} {k}");
        assert_eq!(num(&r["logs"]), o["logs"].as_array().unwrap().len() as u128);
        let price = num(&r["effectiveGasPrice"]);
        if t.ours {
            assert_eq!(price, PRICE, "{client} {k}");
        }
        spent += num(&r["gasUsed"]) * price;
    }
    let (eip1559, legacy) = (&s["eip1559"], &s["legacy"]);
    assert_eq!(
        (num(&eip1559["type"]), num(&legacy["type"])),
        (2, 0),
        "{client}"
    );
    if t.ours {
        // The fees a client computes from the node's answers: 2 * base fee (0) + the tip.
        for k in ["maxFeePerGas", "maxPriorityFeePerGas"] {
            assert_eq!(num(&eip1559[k]), PRICE, "{client} {k}");
        }
        assert_eq!(num(&legacy["gasPrice"]), PRICE, "{client}");
        assert_eq!(num(&s["gasPrice"]), PRICE, "{client}");
        assert_eq!(num(&t.oracle("chain_gasPrice", json!([]))), PRICE);
        assert_eq!(num(&s["maxPriorityFee"]), PRICE, "{client}");
    }
    // ethers' fee data: EIP-1559 fees only where the latest base fee is not 0.
    if let Some(fees) = s.get("feeData") {
        assert_eq!(fees["maxFeePerGas"].is_null(), t.ours, "{client}: {fees}");
        assert_eq!(num(&fees["gasPrice"]), num(&s["gasPrice"]), "{client}");
    }
    let sent = num(&eip1559["value"]) + num(&legacy["value"]);
    let balance = |a: &str| num(&t.oracle("chain_getBalance", json!([a, "latest"])));
    assert_eq!(num(&s["endBalance"]), FUND - spent - sent, "{client}");
    assert_eq!(balance(me), FUND - spent - sent, "{client}");
    assert_eq!(num(&s["recipientBalance"]), sent, "{client}");
    assert_eq!(balance(recipient), sent, "{client}");
    assert_eq!(num(&s["nonce"]), 4, "{client}");
    let nonce = t.oracle("chain_getTransactionCount", json!([me, "latest"]));
    assert_eq!(num(&nonce), 4, "{client}");

    // The Token: where the deploy put it, its code, the recipient's tokens.
    let token = low(&s["token"]);
    let deploy = t.receipt(&low(&s["deploy"]["hash"]));
    assert_eq!(low(&deploy["contractAddress"]), token, "{client}");
    let code = format!("0x{}", hex::encode(compiled("Token").deployed));
    assert_eq!(s["code"], json!(code), "{client}");
    assert_eq!(
        t.oracle("chain_getCode", json!([token, "latest"])),
        json!(code)
    );
    let tokens = num(&s["tokenBalance"]);
    let holder = chain_node::crypto::Address::parse_lenient(recipient).unwrap();
    let data = compiled("Token").call_data("balanceOf(address)", &[addr_word(&holder)]);
    let call = json!([{"to": token, "data": format!("0x{}", hex::encode(data))}, "latest"]);
    assert_eq!(num(&t.oracle("chain_call", call)), tokens, "{client}");
    // The estimate was made on the state the transfer then ran on.
    let transfer_gas = num(&s["transfer"]["gasUsed"]);
    let estimate = num(&s["estimate"]);
    assert!(
        estimate >= transfer_gas,
        "{client}: estimate {estimate} < gasUsed {transfer_gas}"
    );

    // Logs: the oracle's Transfer logs of the token from the deploy on.
    let from = num(&s["deploy"]["blockNumber"]);
    let oracle_logs = t.oracle(
        "chain_getLogs",
        json!([{"address": token, "fromBlock": format!("0x{from:x}"), "toBlock": "latest"}]),
    );
    let oracle_logs = oracle_logs.as_array().unwrap();
    assert_eq!(oracle_logs.len(), 2, "{oracle_logs:?}");
    let event = |l: &Value| {
        let t = l["topics"].as_array().unwrap();
        json!({
            "txHash": low(&l["transactionHash"]),
            "blockNumber": num(&l["blockNumber"]) as u64,
            "logIndex": num(&l["logIndex"]) as u64,
            "address": low(&l["address"]),
            "from": format!("0x{}", &low(&t[1])[26..]),
            "to": format!("0x{}", &low(&t[2])[26..]),
            "value": num(&l["data"]).to_string(),
        })
    };
    let summary_event = |e: &Value| {
        json!({
            "txHash": low(&e["txHash"]),
            "blockNumber": num(&e["blockNumber"]) as u64,
            "logIndex": num(&e["logIndex"]) as u64,
            "address": low(&e["address"]),
            "from": low(&e["from"]),
            "to": low(&e["to"]),
            "value": num(&e["value"]).to_string(),
        })
    };
    let expected: Vec<Value> = oracle_logs.iter().map(event).collect();
    assert_eq!(expected[1]["to"], json!(recipient), "{client}");
    assert_eq!(num(&expected[1]["value"]), tokens, "{client}");
    let events =
        |k: &str| -> Vec<Value> { s[k].as_array().unwrap().iter().map(summary_event).collect() };
    assert_eq!(events("logs"), expected, "{client} getLogs");
    // The filter was made before the transfer: what it gave is the transfer's log, after
    // the mint's when the mint was still in the filter's first block.
    let filtered = events("filterEvents");
    assert!(
        filtered == expected[1..] || filtered == expected,
        "{client} filter: {filtered:?} vs {expected:?}"
    );
    for (raw, o) in s["rawLogs"].as_array().unwrap().iter().zip(oracle_logs) {
        assert_eq!(low(&raw["address"]), low(&o["address"]));
        assert_eq!(raw["topics"], o["topics"], "{client}");
        assert_eq!(low(&raw["data"]), low(&o["data"]), "{client}");
        assert_eq!(low(&raw["txHash"]), low(&o["transactionHash"]), "{client}");
    }
    assert_eq!(s["rawLogs"].as_array().unwrap().len(), 2, "{client}");

    // Fee history of the 4 blocks up to the newest the client saw.
    let fh = &s["feeHistory"];
    let oldest = num(&fh["oldestBlock"]);
    let nums = |v: &Value| -> Vec<u128> { v.as_array().unwrap().iter().map(num).collect() };
    let rewards =
        |v: &Value| -> Vec<Vec<u128>> { v.as_array().unwrap().iter().map(nums).collect() };
    let ratios = |v: &Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| r.as_f64().unwrap())
            .collect()
    };
    let (base_fees, used_ratios, block_rewards) = if t.ours {
        // The reference's rule before its Magma fork, from the blocks as chain_ gives them:
        // no base fee; gasUsed over its fixed upper gas limit (a block has no gas limit);
        // the unit price as every transaction's reward, zero for a block without any.
        let mut used_ratios = Vec::new();
        let mut block_rewards = Vec::new();
        for n in oldest..oldest + 4 {
            let b = t.oracle("chain_getBlockByNumber", json!([format!("0x{n:x}"), false]));
            used_ratios.push(num(&b["gasUsed"]) as f64 / 999_999_999_999.0);
            let any = !b["transactions"].as_array().unwrap().is_empty();
            block_rewards.push(vec![if any { PRICE } else { 0 }; 2]);
        }
        (vec![0; 5], used_ratios, block_rewards)
    } else {
        let o = t.oracle(
            "chain_feeHistory",
            json!(["0x4", format!("0x{:x}", oldest + 3), [25, 75]]),
        );
        assert_eq!(num(&o["oldestBlock"]), oldest, "{client}");
        (
            nums(&o["baseFeePerGas"]),
            ratios(&o["gasUsedRatio"]),
            rewards(&o["reward"]),
        )
    };
    assert_eq!(nums(&fh["baseFeePerGas"]), base_fees, "{client}");
    assert_eq!(ratios(&fh["gasUsedRatio"]), used_ratios, "{client}");
    assert_eq!(rewards(&fh["reward"]), block_rewards, "{client}");

    // The block of the legacy transfer.
    let b = &s["block"];
    let n = num(&b["number"]);
    assert_eq!(n, num(&legacy["blockNumber"]));
    let o = t.oracle("chain_getBlockByNumber", json!([format!("0x{n:x}"), false]));
    assert_eq!(low(&b["hash"]), low(&o["hash"]), "{client}");
    assert_eq!(b["transactions"], o["transactions"], "{client}");
    assert_eq!(b["transactions"], json!([low(&legacy["hash"])]), "{client}");
    if t.ours {
        assert_eq!(num(&b["baseFeePerGas"]), 0, "{client}");
    }
}
