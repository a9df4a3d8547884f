//! The shared test vectors (tests/vectors/*.json, independent implementations) against the
//! library and against the `chain-keytool` binary.

mod common;

use std::fs;
use std::path::Path;

use chain_node::crypto::{self, Address, SecretKey};
use chain_node::keystore::{self, keyfile};
use common::{key_files, keytool, run_fails as fails, run_ok as ok, write_file};
use serde_json::Value;

const WRONG_PASS: &str = "could not decrypt key with given passphrase";

fn load(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name);
    let v: Value = serde_json::from_slice(&fs::read(&path).unwrap()).unwrap();
    let cases = v["cases"].as_array().unwrap().clone();
    assert!(!cases.is_empty(), "{name} has no cases");
    cases
}

fn s<'a>(v: &'a Value, k: &str) -> &'a str {
    v[k].as_str()
        .unwrap_or_else(|| panic!("{k} missing in {v}"))
}

fn unhex(h: &str) -> Vec<u8> {
    hex::decode(h.strip_prefix("0x").unwrap_or(h)).unwrap()
}

// ---------------------------------------------------------------------------------------------
// keystore-v3.json, library level

#[test]
fn keystore_v3_vectors_decrypt_in_the_library() {
    let cases = load("keystore-v3.json");
    assert_eq!(cases.len(), 5);
    for c in &cases {
        let name = s(c, "name");
        let pw = s(c, "password");
        let want_addr = s(c, "address");
        // Compact and pretty-printed serializations parse alike.
        let compact = serde_json::to_vec(&c["keyfile"]).unwrap();
        let pretty = serde_json::to_vec_pretty(&c["keyfile"]).unwrap();
        for bytes in [&compact, &pretty] {
            let f = keyfile::parse(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(f.version, 3, "{name}");
            assert_eq!(
                f.address.map(|a| a.to_string()).as_deref(),
                Some(want_addr),
                "{name}: stored address"
            );
        }
        let f = keyfile::parse(&compact).unwrap();
        let key = f.decrypt(pw).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(
            hex::encode(*key.to_bytes()),
            s(c, "private_key"),
            "{name}: key"
        );
        assert_eq!(
            key.address().to_string(),
            want_addr,
            "{name}: key's own address"
        );
        let addr: Address = want_addr.parse().unwrap();
        assert_eq!(addr.to_string(), want_addr);
        // decrypt_for checks the stored address too.
        let k2 = keystore::decrypt_for(&compact, addr, pw).unwrap();
        assert_eq!(*k2.to_bytes(), *key.to_bytes(), "{name}");
        // Wrong passphrases: a changed one, and the empty one.
        for wrong in [format!("{pw}x"), String::new()] {
            let e = f.decrypt(&wrong).unwrap_err();
            assert_eq!(
                e.to_string(),
                WRONG_PASS,
                "{name}: wrong passphrase {wrong:?}"
            );
        }
    }
}

#[test]
fn keystore_v3_vectors_with_another_requested_address_mismatch() {
    let cases = load("keystore-v3.json");
    let c = cases
        .iter()
        .find(|c| s(c, "name") == "scrypt-light")
        .unwrap();
    let bytes = serde_json::to_vec(&c["keyfile"]).unwrap();
    let other: Address = "0x819104a190255e0cedbdd9d5f59a557633d79db1"
        .parse()
        .unwrap();
    let e = keystore::decrypt_for(&bytes, other, s(c, "password")).unwrap_err();
    assert_eq!(
        e.to_string(),
        "key content mismatch: have account 7324ad89dfd261e0456e943f5c52deecd8288770, want 819104a190255e0cedbdd9d5f59a557633d79db1"
    );
}

// ---------------------------------------------------------------------------------------------
// signed-message.json, library level

#[test]
fn signed_message_vectors_in_the_library() {
    let cases = load("signed-message.json");
    for c in &cases {
        let msg = unhex(s(c, "message_hex"));
        let key = SecretKey::from_slice(&unhex(s(c, "private_key"))).unwrap();
        let label = s(c, "message_hex");
        assert_eq!(
            format!("0x{}", hex::encode(crypto::signed_message_hash(&msg))),
            s(c, "hash"),
            "hash of {label}"
        );
        assert_eq!(
            format!("0x{}", hex::encode(crypto::sign_message(&key, &msg))),
            s(c, "signature"),
            "signature of {label}"
        );
        let sig = unhex(s(c, "signature"));
        assert_eq!(
            crypto::recover_message_signer(&msg, &sig)
                .unwrap()
                .to_string(),
            s(c, "address"),
            "recovery of {label}"
        );
        assert_eq!(
            key.address().to_string(),
            s(c, "address"),
            "address of the key of {label}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Through the binary

/// Places every v3 vector key file in one keystore directory, named `<case name>.json`.
fn keystore_of_vectors(cases: &[Value]) -> (tempfile::TempDir, std::path::PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    fs::create_dir(&ks).unwrap();
    for c in cases {
        let json = serde_json::to_string(&c["keyfile"]).unwrap();
        write_file(&ks, &format!("{}.json", s(c, "name")), &json);
    }
    (tmp, ks)
}

#[test]
fn keystore_v3_vectors_list_sign_and_recover_through_the_binary() {
    let cases = load("keystore-v3.json");
    let (tmp, ks) = keystore_of_vectors(&cases);
    // list: lower-case 0x addresses, sorted by file name.
    let mut by_name: Vec<(&str, &str)> = cases
        .iter()
        .map(|c| (s(c, "name"), s(c, "address")))
        .collect();
    by_name.sort();
    let want: Vec<&str> = by_name.iter().map(|(_, a)| *a).collect();
    let out = ok(&keytool(&ks, &["list"]));
    assert_eq!(out.lines().collect::<Vec<_>>(), want);
    for a in &want {
        assert_eq!(a.to_lowercase(), *a);
    }
    let wallets: Value = serde_json::from_str(&ok(&keytool(&ks, &["list", "--json"]))).unwrap();
    let urls: Vec<&str> = wallets
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["url"].as_str().unwrap())
        .collect();
    let want_urls: Vec<String> = by_name
        .iter()
        .map(|(n, _)| format!("keystore://{}", ks.join(format!("{n}.json")).display()))
        .collect();
    assert_eq!(urls, want_urls);

    // sign with each (password from a file; the unicode one as UTF-8), recover to the address.
    let msg = "0x766563746f72";
    for (i, c) in cases.iter().enumerate() {
        let name = s(c, "name");
        let addr = s(c, "address");
        let pwf = write_file(
            tmp.path(),
            &format!("pw{i}"),
            &format!("{}\n", s(c, "password")),
        );
        let r = keytool(
            &ks,
            &[
                "sign",
                "--address",
                addr,
                "--password-file",
                pwf.to_str().unwrap(),
                msg,
            ],
        );
        let sig = ok(&r);
        assert_eq!(sig.len(), 132, "{name}");
        assert_eq!(ok(&keytool(&ks, &["recover", msg, &sig])), addr, "{name}");
        // The checksummed spelling of the address names the same account.
        let mixed = format!("0x{}", s(&c["keyfile"], "address"));
        assert_eq!(
            ok(&keytool(
                &ks,
                &[
                    "sign",
                    "--address",
                    &mixed,
                    "--password-file",
                    pwf.to_str().unwrap(),
                    msg
                ]
            )),
            sig,
            "{name}"
        );
    }
    // A wrong passphrase, on the cheap cases.
    let wrong = write_file(tmp.path(), "wrong", "wrong\n");
    let before = common::snapshot(&ks);
    for c in cases
        .iter()
        .filter(|c| !s(c, "name").ends_with("-standard"))
    {
        let r = keytool(
            &ks,
            &[
                "sign",
                "--address",
                s(c, "address"),
                "--password-file",
                wrong.to_str().unwrap(),
                msg,
            ],
        );
        fails(&r, 1, WRONG_PASS);
    }
    assert_eq!(common::snapshot(&ks), before);
}

#[test]
fn keystore_v3_vector_files_refuse_duplicate_import_and_accept_replace() {
    let cases = load("keystore-v3.json");
    let light: Vec<Value> = cases
        .iter()
        .filter(|c| !s(c, "name").ends_with("-standard"))
        .cloned()
        .collect();
    let (tmp, ks) = keystore_of_vectors(&light);
    let pw = write_file(tmp.path(), "pw", "new\n");
    let pw = pw.to_str().unwrap();
    // The files' addresses are checksummed; importing their keys is still a duplicate.
    let before = common::snapshot(&ks);
    for c in &light {
        let r = keytool(
            &ks,
            &[
                "import-raw",
                "--light",
                "--password-file",
                pw,
                s(c, "private_key"),
            ],
        );
        fails(&r, 1, "account already exists");
    }
    assert_eq!(common::snapshot(&ks), before);
    // replace-raw rewrites the pbkdf2 file in place with the same key under a new passphrase.
    let c = light
        .iter()
        .find(|c| s(c, "name") == "pbkdf2-light")
        .unwrap();
    let old = write_file(tmp.path(), "old", s(c, "password"));
    let r = keytool(
        &ks,
        &[
            "replace-raw",
            "--light",
            "--old-password-file",
            old.to_str().unwrap(),
            "--new-password-file",
            pw,
            s(c, "private_key"),
        ],
    );
    assert_eq!(ok(&r), s(c, "address"));
    assert_eq!(key_files(&ks).len(), light.len());
    let written: Value =
        serde_json::from_slice(&fs::read(ks.join("pbkdf2-light.json")).unwrap()).unwrap();
    assert_eq!(written["version"], 3);
    assert_eq!(written["crypto"]["kdf"], "scrypt");
    let msg = "0x01";
    let sig = ok(&keytool(
        &ks,
        &[
            "sign",
            "--address",
            s(c, "address"),
            "--password-file",
            pw,
            msg,
        ],
    ));
    assert_eq!(ok(&keytool(&ks, &["recover", msg, &sig])), s(c, "address"));
    let r = keytool(
        &ks,
        &[
            "sign",
            "--address",
            s(c, "address"),
            "--password-file",
            old.to_str().unwrap(),
            msg,
        ],
    );
    fails(&r, 1, WRONG_PASS);
}

#[test]
fn signed_message_vectors_through_the_binary() {
    let cases = load("signed-message.json");
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    // `list` reads the keystore, which must exist (only writing commands create it).
    std::fs::create_dir(&ks).unwrap();
    let pw = write_file(tmp.path(), "pw", "vector\n");
    let pw = pw.to_str().unwrap();
    for c in &cases {
        let addr = s(c, "address");
        let key = s(c, "private_key");
        let listed = keytool(&ks, &["list"]);
        assert_eq!((listed.code, listed.stderr.as_str()), (0, ""), "{listed:?}");
        if !listed.stdout.lines().any(|l| l == addr) {
            assert_eq!(
                ok(&keytool(
                    &ks,
                    &["import-raw", "--light", "--password-file", pw, key]
                )),
                addr
            );
        }
        let msg = s(c, "message_hex");
        assert_eq!(
            ok(&keytool(
                &ks,
                &["sign", "--address", addr, "--password-file", pw, msg]
            )),
            s(c, "signature"),
            "{msg}"
        );
        assert_eq!(
            ok(&keytool(&ks, &["recover", msg, s(c, "signature")])),
            addr,
            "{msg}"
        );
        // Messages that are UTF-8 text sign alike with --text.
        if let Ok(text) = String::from_utf8(unhex(msg)) {
            if !text.is_empty() && !text.contains('\0') {
                let r = keytool(
                    &ks,
                    &[
                        "sign",
                        "--address",
                        addr,
                        "--password-file",
                        pw,
                        "--text",
                        &text,
                    ],
                );
                assert_eq!(ok(&r), s(c, "signature"), "--text {text:?}");
            }
        }
    }
}

/// The independently made files of personal-and-keystore.md 1.7, through the binary.
#[test]
fn reference_key_files_through_the_binary() {
    let tmp = tempfile::tempdir().unwrap();
    let ks = tmp.path().join("keystore");
    fs::create_dir(&ks).unwrap();
    let v3 = r#"{"address":"7ef5a6135f1fd6a02593eedc869c6d41d934aef8","crypto":{"cipher":"aes-128-ctr","ciphertext":"1d0839166e7a15b9c1333fc865d69858b22df26815ccf601b28219b6192974e1","cipherparams":{"iv":"8df6caa7ff1b00c4e871f002cb7921ed"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":8,"p":16,"r":8,"salt":"e5e6ef3f4ea695f496b643ebd3f75c0aa58ef4070e90c80c5d3fb0241bf1595c"},"mac":"6d16dfde774845e4585357f24bce530528bc69f4f84e1e22880d34fa45c273e5"},"id":"950077c7-71e3-4c44-a4a1-143919141ed4","version":3}"#;
    let v4 = r#"{"version":4,"id":"7a0a8557-22a5-4c90-b554-d6f3b13783ea","address":"0x86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2","keyring":[{"ciphertext":"696d0e8e8bd21ff1f82f7c87b6964f0f17f8bfbd52141069b59f084555f277b7","cipherparams":{"iv":"1fd13e0524fa1095c5f80627f1d24cbd"},"cipher":"aes-128-ctr","kdf":"scrypt","kdfparams":{"dklen":32,"salt":"7ee980925cef6a60553cda3e91cb8e3c62733f64579f633d0f86ce050c151e26","n":4096,"r":8,"p":1},"mac":"8684d8dc4bf17318cd46c85dbd9a9ec5d9b290e04d78d4f6b5be9c413ff30ea4"}]}"#;
    write_file(
        &ks,
        "UTC--2016-03-22T12-57-55.920751759Z--7ef5a6135f1fd6a02593eedc869c6d41d934aef8",
        v3,
    );
    write_file(&ks, "v4-flat", v4);
    let out = ok(&keytool(&ks, &["list"]));
    assert_eq!(
        out,
        "0x7ef5a6135f1fd6a02593eedc869c6d41d934aef8\n0x86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2"
    );
    let pw = |name: &str, content: &str| {
        write_file(tmp.path(), name, content)
            .to_str()
            .unwrap()
            .to_string()
    };
    let (foobar, password) = (pw("foobar", "foobar"), pw("password", "password\n"));
    let msg = "0x68656c6c6f";
    // The v3 key 976f... signs as its address.
    let sig = ok(&keytool(
        &ks,
        &[
            "sign",
            "--address",
            "0x7ef5a6135f1fd6a02593eedc869c6d41d934aef8",
            "--password-file",
            &foobar,
            msg,
        ],
    ));
    assert_eq!(
        ok(&keytool(&ks, &["recover", msg, &sig])),
        "0x7ef5a6135f1fd6a02593eedc869c6d41d934aef8"
    );
    // The v4 account 0x86bc... holds key 36e0..., whose own address is 0x0de37a8f...: the
    // stored address names the account, the key's own address is what recovery finds.
    let sig = ok(&keytool(
        &ks,
        &[
            "sign",
            "--address",
            "0x86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2",
            "--password-file",
            &password,
            msg,
        ],
    ));
    assert_eq!(
        ok(&keytool(&ks, &["recover", msg, &sig])),
        "0x0de37a8fe164826a6e61a9bfcdd53a7635c8ec60"
    );
    fails(
        &keytool(
            &ks,
            &[
                "sign",
                "--address",
                "0x86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2",
                "--password-file",
                &foobar,
                msg,
            ],
        ),
        1,
        WRONG_PASS,
    );
}
