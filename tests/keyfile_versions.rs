//! Version-1 and role-based version-4 key files made by an independent implementation
//! (tests/vectors/make_extra_vectors.py, pycryptodome) decrypt here.

use chain_node::keystore::{decrypt_for, keyfile};

fn cases() -> Vec<serde_json::Value> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/vectors/keystore-extra.json"
    );
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

#[test]
fn independent_v1_and_v4_files_decrypt_to_their_keys() {
    for c in cases() {
        let bytes = serde_json::to_vec(&c["keyfile"]).unwrap();
        let address = c["address"].as_str().unwrap().parse().unwrap();
        let pw = c["password"].as_str().unwrap();
        let key = decrypt_for(&bytes, address, pw).unwrap_or_else(|e| panic!("{}: {e}", c["name"]));
        assert_eq!(
            hex::encode(*key.to_bytes()),
            c["private_key"].as_str().unwrap(),
            "{}",
            c["name"]
        );
        let err = decrypt_for(&bytes, address, "wrong").unwrap_err();
        assert_eq!(
            err.to_string(),
            "could not decrypt key with given passphrase",
            "{}",
            c["name"]
        );
    }
}

#[test]
fn role_based_file_signs_with_the_first_key_of_the_first_role() {
    let c = cases()
        .into_iter()
        .find(|c| c["name"] == "version-4-role-based")
        .unwrap();
    let bytes = serde_json::to_vec(&c["keyfile"]).unwrap();
    let f = keyfile::parse(&bytes).unwrap();
    assert_eq!(f.version, 4);
    assert_eq!(f.keys.len(), 2, "keyring[0] holds two keys");
}

#[test]
fn a_file_for_another_account_is_refused_after_decryption() {
    let c = &cases()[0];
    let bytes = serde_json::to_vec(&c["keyfile"]).unwrap();
    let other = "0x7ef5a6135f1fd6a02593eedc869c6d41d934aef8"
        .parse()
        .unwrap();
    let err = decrypt_for(&bytes, other, c["password"].as_str().unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "key content mismatch: have account 819104a190255e0cedbdd9d5f59a557633d79db1, want 7ef5a6135f1fd6a02593eedc869c6d41d934aef8"
    );
}
