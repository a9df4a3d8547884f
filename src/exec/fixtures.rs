//! What the execution tests start from (test builds only): a block environment, an
//! in-memory state with one rich account, the compiled test contracts and signed legacy
//! transactions at the unit price.

use super::Env;
use crate::crypto::{Address, SecretKey};
use crate::state::{self, Account, State};
use crate::trie::{MemoryStore, EMPTY_ROOT};
use crate::types::transaction::{Legacy, Transaction};

/// The unit price the test transactions pay.
pub const PRICE: u64 = 25_000_000_000;

/// The environment of block `number` of chain 1000, fees to `0xee..ee`.
pub fn env(number: u64) -> Env {
    Env {
        number,
        timestamp: 1_700_000_000 + number,
        rewardbase: Address([0xee; 20]),
        parent_hash: [number as u8; 32],
        chain_id: 1000,
    }
}

/// A state in memory where only `rich` exists, holding 2^88: its store and root.
pub fn rich_world(rich: Address) -> (MemoryStore, [u8; 32]) {
    let mut store = MemoryStore::default();
    let mut s = State::at(&store, EMPTY_ROOT);
    let mut balance = [0u8; 32];
    balance[20] = 1;
    s.set(
        &rich,
        &Account {
            balance,
            ..Account::default()
        },
    )
    .unwrap();
    let (root, nodes) = s.commit();
    drop(s);
    store.apply(nodes);
    (store, root)
}

/// The creation code of test contract `name` (tests/contracts/out/<name>.json).
pub fn creation_code(name: &str) -> Vec<u8> {
    let path = format!(
        "{}/tests/contracts/out/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    hex::decode(v["bytecode"].as_str().unwrap().trim_start_matches("0x")).unwrap()
}

/// A legacy transaction of no value at [`PRICE`], signed by `key` for chain 1000.
pub fn legacy(
    key: &SecretKey,
    nonce: u64,
    to: Option<Address>,
    input: Vec<u8>,
    gas: u64,
) -> Transaction {
    let mut tx = Transaction::Legacy(Legacy {
        nonce,
        gas_price: state::from_u64(PRICE),
        gas,
        to,
        value: [0; 32],
        input,
        signature: None,
    });
    tx.sign(key, 1000);
    tx
}
