//! Version-1 and role-based version-4 key files made by an independent implementation
//! (tests/vectors/make_extra_vectors.py, pycryptodome) decrypt here, in the library and
//! through the `chain-keytool` binary.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use chain_node::keystore::{decrypt_for, keyfile};
use common::{key_files, keytool, run_fails as fails, run_ok as ok, snapshot, write_file, Run};

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

// ---------------------------------------------------------------------------------------------
// Through the `chain-keytool` binary

const HELLO_HEX: &str = "0x68656c6c6f";
// personal-and-keystore.md 3.4: key aebb... (the version-1 file's) signs "hello" as this.
const SIG_HELLO_A: &str = "0x80f79479dab331d3d3ae067ff2db1fa8158d2b292b637c2075ceafd11deb739c42524edb57de715aa150146a79d1e3fbb37e377d7df52a84b7c871bb15e7bf431b";
const KEY_A: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
// The own address of key f8cc... (keyring[0][0] of the role-based file), reference 2.3.
const ADDR_F_OWN: &str = "0x90b3e9a3770481345a7f17f22f16d020bccfd33e";

fn case(name: &str) -> serde_json::Value {
    cases()
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("no case {name}"))
}

/// A keystore holding only the key file of `c`, named `<case name>.json`; the temporary
/// directory also holds `pw` (the case's password) and `new-pw`.
struct Store {
    tmp: tempfile::TempDir,
    ks: PathBuf,
    file: PathBuf,
}

impl Store {
    fn of(c: &serde_json::Value) -> Store {
        let tmp = tempfile::tempdir().unwrap();
        let ks = tmp.path().join("keystore");
        fs::create_dir(&ks).unwrap();
        let json = serde_json::to_string(&c["keyfile"]).unwrap();
        let file = write_file(&ks, &format!("{}.json", c["name"].as_str().unwrap()), &json);
        write_file(tmp.path(), "pw", c["password"].as_str().unwrap());
        write_file(tmp.path(), "new-pw", "new passphrase\n");
        Store { tmp, ks, file }
    }
    fn pw(&self, name: &str) -> String {
        self.tmp.path().join(name).to_str().unwrap().to_string()
    }
    fn sign(&self, address: &str, pw: &str) -> Run {
        let pw = self.pw(pw);
        keytool(
            &self.ks,
            &[
                "sign",
                "--address",
                address,
                "--password-file",
                &pw,
                HELLO_HEX,
            ],
        )
    }
}

/// `personal_sign` of `message` with `key_hex`, computed here with `k256` (the crate under
/// test signs with libsecp256k1).
fn independent_signature(key_hex: &str, message: &[u8]) -> String {
    use sha3::Digest;
    let mut h = sha3::Keccak256::new();
    h.update(b"\x19Chain Signed Message:\n");
    h.update(message.len().to_string().as_bytes());
    h.update(message);
    let hash: [u8; 32] = h.finalize().into();
    let key = k256::ecdsa::SigningKey::from_slice(&hex::decode(key_hex).unwrap()).unwrap();
    let (sig, recid) = key.sign_prehash_recoverable(&hash).unwrap();
    format!(
        "0x{}{:02x}",
        hex::encode(sig.to_bytes()),
        recid.to_byte() + 27
    )
}

fn read_json(p: &Path) -> serde_json::Value {
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

#[test]
fn v1_and_role_based_v4_files_list_one_account_and_sign_with_the_first_key() {
    for (name, want_sig) in [
        ("version-1-cbc", SIG_HELLO_A.to_string()),
        (
            "version-4-role-based",
            independent_signature(
                "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b",
                b"hello",
            ),
        ),
    ] {
        let c = case(name);
        let s = Store::of(&c);
        let address = c["address"].as_str().unwrap();
        // One account per file, however many keys the file holds.
        assert_eq!(ok(&keytool(&s.ks, &["list"])), address, "{name}");
        let wallets: serde_json::Value =
            serde_json::from_str(&ok(&keytool(&s.ks, &["list", "--json"]))).unwrap();
        assert_eq!(wallets.as_array().unwrap().len(), 1, "{name}: {wallets}");
        let before = snapshot(&s.ks);
        // keyring[0][0] signs (for the version-1 file, its only key).
        assert_eq!(ok(&s.sign(address, "pw")), want_sig, "{name}");
        fails(
            &s.sign(address, "new-pw"),
            1,
            "could not decrypt key with given passphrase",
        );
        assert_eq!(
            snapshot(&s.ks),
            before,
            "{name}: signing changed the keystore"
        );
    }
    // The role-based file's signature is by key f8cc..., not by the account's address.
    let c = case("version-4-role-based");
    let s = Store::of(&c);
    let sig = ok(&s.sign(c["address"].as_str().unwrap(), "pw"));
    assert_eq!(
        ok(&keytool(&s.ks, &["recover", HELLO_HEX, &sig])),
        ADDR_F_OWN
    );
}

#[test]
fn replace_raw_turns_v1_and_role_based_files_into_single_key_v3_files() {
    for name in ["version-4-role-based", "version-1-cbc"] {
        let c = case(name);
        let s = Store::of(&c);
        let address = c["address"].as_str().unwrap();
        // KEY_A's own address is the account of both files (0x8191...db1).
        let (old, new) = (s.pw("pw"), s.pw("new-pw"));
        let r = keytool(
            &s.ks,
            &[
                "replace-raw",
                "--light",
                "--old-password-file",
                &old,
                "--new-password-file",
                &new,
                KEY_A,
            ],
        );
        assert_eq!(ok(&r), address, "{name}");
        // Same file, now version 3 with one crypto object and no keyring.
        assert_eq!(key_files(&s.ks), vec![s.file.clone()], "{name}");
        let json = read_json(&s.file);
        assert_eq!(json["version"], 3, "{name}: {json}");
        assert_eq!(json["address"], &address[2..], "{name}");
        assert!(json.get("keyring").is_none(), "{name}: {json}");
        assert_eq!(json["crypto"]["cipher"], "aes-128-ctr", "{name}");
        assert_eq!(ok(&keytool(&s.ks, &["list"])), address, "{name}");
        assert_eq!(ok(&s.sign(address, "new-pw")), SIG_HELLO_A, "{name}");
        fails(
            &s.sign(address, "pw"),
            1,
            "could not decrypt key with given passphrase",
        );
    }
}
