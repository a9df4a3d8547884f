//! `eth_getProof` and `eth_createAccessList` through `chaind --dev`: the proofs checked
//! against the block's state root and the account's storage root by the independent verifier
//! of tests/common/mptproof.rs, the Token's balance slots computed here from its storage
//! layout (tests/contracts/Token.sol: `totalSupply` at slot 0, `balanceOf` at slot 1, the
//! constants taking none), and the access list of a Token transfer.

mod common;

use common::contracts::{addr_word, compiled, raw_legacy, uint_word};
use common::keyfile::keccak;
use common::mptproof::{verify, verify_secure};
use common::{dev_http_node, dev_key, err, http_call, ok, quantity_of, wait_receipt, Node};
use serde_json::{json, Value};

const APIS: &str = "chain,eth,net,rpc,personal";
const SUPPLY: u128 = 1_000_000;

fn call(n: &Node, method: &str, params: Value) -> Value {
    http_call(n.http.as_ref().unwrap(), method, params)
}

fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

fn unhex(v: &Value) -> Vec<u8> {
    hex::decode(v.as_str().unwrap().trim_start_matches("0x")).unwrap()
}

fn word32(v: &Value) -> [u8; 32] {
    unhex(v).try_into().unwrap()
}

/// `balanceOf[holder]`'s slot: keccak(pad32(holder) ++ pad32(1)).
fn balance_slot(holder: &[u8; 20]) -> [u8; 32] {
    let mut h = [0u8; 32];
    h[12..].copy_from_slice(holder);
    keccak(&[&h, &uint_word(1)])
}

fn send(n: &Node, raw: String) -> Value {
    let url = n.http.clone().unwrap();
    let hash = ok(call(n, "chain_sendRawTransaction", json!([raw])));
    let r = wait_receipt(&url, &hash);
    assert_eq!(r["status"], json!("0x1"), "{r}");
    r
}

/// The items of an RLP list's payload (the account record), as raw payloads.
fn rlp_items(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut buf = bytes;
    let h = alloy_rlp::Header::decode(&mut buf).unwrap();
    assert!(h.list);
    let mut out = Vec::new();
    while !buf.is_empty() {
        let h = alloy_rlp::Header::decode(&mut buf).unwrap();
        out.push(buf[..h.payload_length].to_vec());
        buf = &buf[h.payload_length..];
    }
    out
}

/// A storage value as the trie holds it: the RLP string of its minimal bytes.
fn value_bytes(stored: &[u8]) -> Vec<u8> {
    let mut buf = stored;
    let h = alloy_rlp::Header::decode(&mut buf).unwrap();
    assert!(!h.list);
    buf[..h.payload_length].to_vec()
}

fn minimal(n: u128) -> Vec<u8> {
    let b = n.to_be_bytes();
    b[b.iter().take_while(|&&x| x == 0).count()..].to_vec()
}

struct Setup {
    node: Node,
    dev: [u8; 20],
    token: [u8; 20],
    holder: [u8; 20],
}

/// A dev node with the Token deployed by the dev account (all of the supply) and 250 sent to
/// a holder; the block numbers before and after the transfer.
fn setup() -> (Setup, u64, u64) {
    let node = dev_http_node(APIS);
    let key = dev_key(&node);
    let token = compiled("Token");
    let address = common::contracts::deploy(
        node.http.as_ref().unwrap(),
        &key,
        0,
        token.with_args(&[uint_word(SUPPLY)]),
    );
    let before = quantity_of(&ok(call(&node, "chain_blockNumber", json!([])))) as u64;
    let holder = [0x77; 20];
    let data = token.call_data(
        "transfer(address,uint256)",
        &[
            addr_word(&chain_node::crypto::Address(holder)),
            uint_word(250),
        ],
    );
    send(&node, raw_legacy(&key, 1, Some(address), 0, data, 200_000));
    let after = quantity_of(&ok(call(&node, "chain_blockNumber", json!([])))) as u64;
    let s = Setup {
        dev: key.address().0,
        token: address.0,
        holder,
        node,
    };
    (s, before, after)
}

fn state_root(n: &Node, number: u64) -> [u8; 32] {
    let b = ok(call(
        n,
        "chain_getBlockByNumber",
        json!([format!("0x{number:x}"), false]),
    ));
    word32(&b["stateRoot"])
}

fn proofs(v: &Value) -> Vec<Vec<u8>> {
    v.as_array().unwrap().iter().map(unhex).collect()
}

#[test]
fn proofs_verify_against_the_state_and_storage_roots() {
    let (s, before, after) = setup();
    let n = &s.node;
    let dev_slot = balance_slot(&s.dev);
    let holder_slot = balance_slot(&s.holder);
    let absent = keccak(&[b"no such slot"]);
    let keys = json!([
        hex0x(&dev_slot),
        hex0x(&holder_slot),
        "0x0",
        hex0x(&absent),
        "0x1"
    ]);
    let r = ok(call(
        n,
        "eth_getProof",
        json!([hex0x(&s.token), keys, "latest"]),
    ));
    let members: Vec<&str> = r.as_object().unwrap().keys().map(String::as_str).collect();
    assert_eq!(
        members,
        [
            "address",
            "accountProof",
            "balance",
            "codeHash",
            "nonce",
            "storageHash",
            "storageProof"
        ]
    );
    assert_eq!(r["address"], json!(hex0x(&s.token)));
    assert_eq!(r["balance"], json!("0x0"));
    assert_eq!(r["nonce"], json!("0x1")); // a contract starts at nonce 1 (EIP-161)
    let code = unhex(&ok(call(
        n,
        "eth_getCode",
        json!([hex0x(&s.token), "latest"]),
    )));
    assert_eq!(word32(&r["codeHash"]), keccak(&[&code]));

    // The account: proved from the block's state root, its record holding the storage root
    // and the code hash answered.
    let root = state_root(n, after);
    let record = verify_secure(&root, &s.token, &proofs(&r["accountProof"]))
        .unwrap()
        .expect("the account is in the state");
    let items = rlp_items(&record);
    let storage_hash = word32(&r["storageHash"]);
    assert!(items.contains(&storage_hash.to_vec()), "{items:?}");
    assert!(items.contains(&keccak(&[&code]).to_vec()));

    // The slots: each proved from the storage root, its value the one answered.
    let sp = r["storageProof"].as_array().unwrap();
    let want: [(String, u128); 5] = [
        (hex0x(&dev_slot), SUPPLY - 250),
        (hex0x(&holder_slot), 250),
        ("0x0".into(), SUPPLY), // totalSupply; a short key echoed as a quantity
        (hex0x(&absent), 0),
        ("0x1".into(), 0), // the mapping's own slot holds nothing
    ];
    for (entry, (key, value)) in sp.iter().zip(&want) {
        assert_eq!(entry["key"], json!(key));
        assert_eq!(quantity_of(&entry["value"]), *value, "{entry}");
        let mut slot = [0u8; 32];
        let short = unhex(&json!(format!("0x{:0>64}", key.trim_start_matches("0x"))));
        slot.copy_from_slice(&short);
        let proved = verify_secure(&storage_hash, &slot, &proofs(&entry["proof"])).unwrap();
        assert_eq!(
            proved.map(|v| value_bytes(&v)),
            (*value != 0).then(|| minimal(*value))
        );
    }
    assert_eq!(sp.len(), 5);

    // At the block before the transfer the holder has nothing: a proof of absence there.
    let old = ok(call(
        n,
        "eth_getProof",
        json!([
            hex0x(&s.token),
            [hex0x(&holder_slot)],
            format!("0x{before:x}")
        ]),
    ));
    let old_root = word32(&old["storageHash"]);
    assert_ne!(old_root, storage_hash);
    assert!(verify_secure(
        &state_root(n, before),
        &s.token,
        &proofs(&old["accountProof"])
    )
    .unwrap()
    .is_some());
    let entry = &old["storageProof"][0];
    assert_eq!(entry["value"], json!("0x0"));
    assert_eq!(
        verify_secure(&old_root, &holder_slot, &proofs(&entry["proof"])),
        Ok(None)
    );
    // A proof does not verify against another root.
    assert!(verify(&root, &keccak(&[&s.token]), &proofs(&old["accountProof"])).is_err());
}

#[test]
fn what_the_reference_refuses() {
    let (s, _, _) = setup();
    let n = &s.node;
    let token = hex0x(&s.token);
    let cases = [
        (
            json!([hex0x(&s.dev), [], "latest"]),
            -32000,
            "given address is not a contract address",
        ),
        (
            json!([hex0x(&[0x42; 20]), [], "latest"]),
            -32000,
            "there is no account corresponding to the given address",
        ),
        (
            json!([token, ["0xzz"], "latest"]),
            -32000,
            "hex string invalid",
        ),
        (
            json!([token, [format!("0x{}", "ab".repeat(33))], "latest"]),
            -32000,
            "hex string too long, want at most 32 bytes",
        ),
        (
            json!([token, [1], "latest"]),
            -32602,
            "invalid argument 1: json: cannot unmarshal number into Go value of type string",
        ),
        (
            json!([token, []]),
            -32602,
            "missing value for required argument 2",
        ),
        (
            json!([token, [], "0xffff"]),
            -32000,
            "the header does not exist (block number: 65535)",
        ),
    ];
    for (params, code, message) in cases {
        assert_eq!(
            err(call(n, "eth_getProof", params.clone())),
            (code, message.to_string()),
            "{params}"
        );
    }
}

#[test]
fn a_token_transfer_lists_the_token_and_its_two_balance_slots() {
    let (s, _, _) = setup();
    let n = &s.node;
    let key = dev_key(n);
    let token = compiled("Token");
    let to = [0x55; 20];
    let data = token.call_data(
        "transfer(address,uint256)",
        &[addr_word(&chain_node::crypto::Address(to)), uint_word(5)],
    );
    let args = json!({"from": hex0x(&s.dev), "to": hex0x(&s.token), "data": hex0x(&data)});
    let r = ok(call(n, "eth_createAccessList", json!([args])));
    let mut slots = [balance_slot(&s.dev), balance_slot(&to)];
    slots.sort();
    assert_eq!(
        r,
        json!({
            "accessList": [{"address": hex0x(&s.token), "storageKeys": [hex0x(&slots[0]), hex0x(&slots[1])]}],
            "gasUsed": r["gasUsed"],
        })
    );
    // The gas with the list: what the transfer uses without it, plus the list's intrinsic
    // gas (one address, 2,400; two keys, 1,900 each), less the cold surcharge of each slot's
    // first access that the list saves (2,100 - 100 each).
    let with_list = quantity_of(&r["gasUsed"]);
    let receipt = send(
        n,
        raw_legacy(
            &key,
            2,
            Some(chain_node::crypto::Address(s.token)),
            0,
            data.clone(),
            200_000,
        ),
    );
    let plain = quantity_of(&receipt["gasUsed"]);
    assert_eq!(with_list, plain + 2_400 + 2 * 1_900 - 2 * 2_000);

    // A list given is kept (an extra slot of the token here), and a failure of the code is
    // reported beside the list.
    let extra = keccak(&[b"extra"]);
    let too_much = token.call_data(
        "transfer(address,uint256)",
        &[
            addr_word(&chain_node::crypto::Address(to)),
            uint_word(SUPPLY * 2),
        ],
    );
    let args = json!({"from": hex0x(&s.dev), "to": hex0x(&s.token), "data": hex0x(&too_much),
                      "accessList": [{"address": hex0x(&s.token), "storageKeys": [hex0x(&extra)]}]});
    let r = ok(call(n, "eth_createAccessList", json!([args, "latest"])));
    assert_eq!(r["error"], json!("evm: execution reverted"));
    let listed: Vec<&str> = r["accessList"][0]["storageKeys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap())
        .collect();
    assert!(listed.contains(&hex0x(&extra).as_str()), "{r}");
    assert!(
        listed.contains(&hex0x(&balance_slot(&s.dev)).as_str()),
        "{r}"
    );

    // A message that cannot run at all names the transaction it would be.
    let poor = json!({"from": hex0x(&[0x33; 20]), "to": hex0x(&to), "value": "0x1"});
    let (code, message) = err(call(n, "eth_createAccessList", json!([poor])));
    assert_eq!(code, -32000);
    assert!(
        message.starts_with("failed to apply transaction: 0x")
            && message.ends_with(" err: insufficient balance for transfer"),
        "{message}"
    );
    let creation = json!({"from": hex0x(&s.dev)});
    assert_eq!(
        err(call(n, "eth_createAccessList", json!([creation]))),
        (-32000, "contract creation without any data provided".into())
    );
}
