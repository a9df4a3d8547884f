//! Integration tests of the real `chain-keytool` binary: every command, its output, the files
//! it writes, and the exact error text, exit code and untouched keystore of every failure.
//!
//! Expected values come from the reference documents (personal-and-keystore.md, cli.md) or are
//! computed here with independent primitives (the `scrypt`, `aes`/`ctr` and `sha3` crates used
//! directly), never by the code under test.

mod common;

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::keyfile::{decrypt_independent, derive_independent, keccak};
use common::{
    key_files, keytool, keytool_bin, keytool_stdin, run_fails as fails, run_ok as ok, snapshot,
    write_file, Run,
};
use serde_json::Value;

// Reference example (personal-and-keystore.md 2.4, 3.4 personal_sign / personal_ecRecover).
const KEY_A: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";
const ADDR_A: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db1";
const SIG_HELLO_A: &str = "0x80f79479dab331d3d3ae067ff2db1fa8158d2b292b637c2075ceafd11deb739c42524edb57de715aa150146a79d1e3fbb37e377d7df52a84b7c871bb15e7bf431b";
const HELLO_HEX: &str = "0x68656c6c6f";
// Wallet-key example (personal-and-keystore.md 2.3): key f8cc..., own address 0x90b3...
const KEY_F: &str = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b";
const ADDR_F_OWN: &str = "0x90b3e9a3770481345a7f17f22f16d020bccfd33e";
const ADDR_DB2: &str = "0x819104a190255e0cedbdd9d5f59a557633d79db2";
// secp256k1 group order n.
const N_HEX: &str = "fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141";
// Well-known: private key 1 -> 0x7e5f4552091a69125d5dfcb7b8c2659029395bdf.
const KEY_ONE: &str = "0000000000000000000000000000000000000000000000000000000000000001";
const ADDR_ONE: &str = "0x7e5f4552091a69125d5dfcb7b8c2659029395bdf";

const WRONG_PASS: &str = "could not decrypt key with given passphrase";

// ---------------------------------------------------------------------------------------------
// Helpers

/// A test's own directory: `keystore` (not created) and a password file `pw` holding `1234`.
struct Env {
    _tmp: tempfile::TempDir,
    root: PathBuf,
    ks: PathBuf,
    pw: PathBuf,
}

/// A replace-raw case: what, old password file, new password file, key data, exit code,
/// message.
type Case<'a> = (
    &'a str,
    Option<&'a str>,
    Option<&'a str>,
    &'a str,
    i32,
    &'a str,
);

fn env() -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_path_buf();
    let ks = root.join("keystore");
    let pw = write_file(&root, "pw", "1234\n");
    Env {
        _tmp: tmp,
        root,
        ks,
        pw,
    }
}

impl Env {
    fn pw(&self) -> &str {
        self.pw.to_str().unwrap()
    }
    /// A password file with `content`, outside the keystore.
    fn pwfile(&self, name: &str, content: &str) -> String {
        write_file(&self.root, name, content)
            .to_str()
            .unwrap()
            .to_string()
    }
    fn run(&self, args: &[&str]) -> Run {
        keytool(&self.ks, args)
    }
    fn import(&self, keydata: &str) -> String {
        ok(&self.run(&[
            "import-raw",
            "--light",
            "--password-file",
            self.pw(),
            keydata,
        ]))
    }
    fn list(&self) -> Vec<String> {
        let r = self.run(&["list"]);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "list failed: {r:?}");
        assert!(r.stdout.is_empty() || r.stdout.ends_with('\n'), "{r:?}");
        r.stdout.lines().map(str::to_string).collect()
    }
    fn list_json(&self) -> Value {
        let r = self.run(&["list", "--json"]);
        let out = ok(&r);
        serde_json::from_str(&out)
            .unwrap_or_else(|e| panic!("list --json is not JSON ({e}): {out:?}"))
    }
    fn sign(&self, addr: &str, pwfile: &str, msg: &str) -> Run {
        self.run(&["sign", "--address", addr, "--password-file", pwfile, msg])
    }
    fn recover(&self, msg: &str, sig: &str) -> String {
        ok(&self.run(&["recover", msg, sig]))
    }
    /// The path of the only key file.
    fn only_file(&self) -> PathBuf {
        let files = key_files(&self.ks);
        assert_eq!(files.len(), 1, "{files:?}");
        files[0].clone()
    }
    fn url(&self, name: &str) -> String {
        format!("keystore://{}", self.ks.join(name).display())
    }
}

/// Runs `f` and asserts that the keystore directory is byte-for-byte the same afterwards.
#[track_caller]
fn unchanged(ks: &Path, f: impl FnOnce()) {
    let before = snapshot(ks);
    f();
    let after = snapshot(ks);
    assert_eq!(before, after, "the keystore changed");
}

fn file_name(p: &Path) -> String {
    p.file_name().unwrap().to_str().unwrap().to_string()
}

fn read_json(p: &Path) -> Value {
    serde_json::from_slice(&fs::read(p).unwrap()).unwrap()
}

/// Writes `content` to `dir/name` through a temporary file and a rename, as every key-file
/// writer of the ecosystem does (so the directory changes and a listing notices).
fn replace_file(dir: &Path, name: &str, content: &[u8]) {
    let tmp = dir.join(format!(".{name}.test-tmp"));
    fs::write(&tmp, content).unwrap();
    fs::rename(&tmp, dir.join(name)).unwrap();
}

/// Days since 1970-01-01 of a proleptic Gregorian date (inverse of the crate's direction).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Checks `UTC--YYYY-MM-DDTHH-MM-SS.NNNNNNNNNZ--<40 lower-case hex>` and returns the
/// timestamp it encodes and the address part.
fn parse_key_file_name(name: &str) -> (SystemTime, String) {
    const PAT: &str = "UTC--dddd-dd-ddTdd-dd-dd.dddddddddZ--";
    assert_eq!(name.len(), PAT.len() + 40, "length of {name}");
    for (i, (p, c)) in PAT.bytes().zip(name.bytes()).enumerate() {
        if p == b'd' {
            assert!(c.is_ascii_digit(), "{name}: position {i} must be a digit");
        } else {
            assert_eq!(c, p, "{name}: position {i}");
        }
    }
    let addr = &name[PAT.len()..];
    assert!(
        addr.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{name}"
    );
    let num = |a: usize, b: usize| name[a..b].parse::<i64>().unwrap();
    let (y, mo, d, h, mi, s, ns) = (
        num(5, 9),
        num(10, 12),
        num(13, 15),
        num(16, 18),
        num(19, 21),
        num(22, 24),
        num(25, 34),
    );
    assert!(
        (1..=12).contains(&mo) && (1..=31).contains(&d) && h < 24 && mi < 60 && s < 60,
        "{name}"
    );
    let secs = days_from_civil(y, mo, d) * 86_400 + h * 3600 + mi * 60 + s;
    (
        UNIX_EPOCH + Duration::new(secs as u64, ns as u32),
        addr.to_string(),
    )
}

/// Big-endian 256-bit a - b (a >= b).
fn sub256(a: &[u8], b: &[u8]) -> Vec<u8> {
    let mut out = vec![0u8; 32];
    let mut borrow = 0i16;
    for i in (0..32).rev() {
        let mut d = a[i] as i16 - b[i] as i16 - borrow;
        borrow = 0;
        if d < 0 {
            d += 256;
            borrow = 1;
        }
        out[i] = d as u8;
    }
    assert_eq!(borrow, 0);
    out
}

// ---------------------------------------------------------------------------------------------
// new

#[test]
fn new_creates_a_v3_file_with_the_reference_name_and_modes() {
    let e = env();
    assert!(!e.ks.exists());
    let before = SystemTime::now();
    let addr = ok(&e.run(&["new", "--light", "--password-file", e.pw()]));
    let after = SystemTime::now();
    assert_eq!(addr.len(), 42, "{addr}");
    assert!(
        addr.starts_with("0x")
            && addr[2..]
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()),
        "{addr}"
    );

    // Directory 0700, created by the write; exactly one visible file, mode 0600.
    assert_eq!(
        fs::metadata(&e.ks).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let path = e.only_file();
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let name = file_name(&path);
    let (t, name_addr) = parse_key_file_name(&name);
    assert_eq!(format!("0x{name_addr}"), addr);
    assert!(
        t + Duration::from_secs(1) >= before && t <= after + Duration::from_secs(1),
        "timestamp of {name}"
    );

    // Version 3 JSON (DECISIONS.md), light scrypt parameters (reference 1.9), decrypts with
    // an independent implementation to a key whose address we check by signing.
    let json = read_json(&path);
    assert_eq!(json["version"], 3);
    assert_eq!(json["address"].as_str().unwrap(), &addr[2..]);
    let kp = &json["crypto"]["kdfparams"];
    assert_eq!(
        (
            kp["n"].as_u64(),
            kp["r"].as_u64(),
            kp["p"].as_u64(),
            kp["dklen"].as_u64()
        ),
        (Some(4096), Some(8), Some(6), Some(32))
    );
    assert_eq!(hex::decode(kp["salt"].as_str().unwrap()).unwrap().len(), 32);
    assert_eq!(decrypt_independent(&json, "1234").len(), 32);
    // Nothing but the key file, the lock and the saved index: no temporary file left behind.
    let mut names: Vec<String> = fs::read_dir(&e.ks)
        .unwrap()
        .map(|d| d.unwrap().file_name().into_string().unwrap())
        .filter(|n| n != ".lock" && n != ".chain-keystore-index")
        .collect();
    names.sort();
    assert_eq!(names, vec![name.clone()]);

    // list shows it; a fresh process signs with it and the signature recovers to it.
    assert_eq!(e.list(), vec![addr.clone()]);
    let sig = ok(&e.sign(&addr, e.pw(), HELLO_HEX));
    assert_eq!(e.recover(HELLO_HEX, &sig), addr);
}

#[test]
fn new_twice_gives_two_accounts_listed_in_creation_order() {
    let e = env();
    let a1 = ok(&e.run(&["new", "--light", "--password-file", e.pw()]));
    let a2 = ok(&e.run(&["new", "--light", "--password-file", e.pw()]));
    assert_ne!(a1, a2);
    assert_eq!(e.list(), vec![a1.clone(), a2.clone()]);
    for a in [&a1, &a2] {
        let sig = ok(&e.sign(a, e.pw(), "0x"));
        assert_eq!(&e.recover("0x", &sig), a);
    }
}

#[test]
fn new_without_light_uses_the_standard_scrypt_parameters() {
    let e = env();
    let addr = ok(&e.run(&["new", "--password-file", e.pw()]));
    let json = read_json(&e.only_file());
    assert_eq!(json["address"].as_str().unwrap(), &addr[2..]);
    let kp = &json["crypto"]["kdfparams"];
    assert_eq!(
        (kp["n"].as_u64(), kp["r"].as_u64(), kp["p"].as_u64()),
        (Some(262_144), Some(8), Some(1))
    );
}

/// (N, r, p) of the single key file's kdfparams.
fn kdf_params_of(path: &Path) -> (u64, u64, u64) {
    let json = read_json(path);
    let kp = &json["crypto"]["kdfparams"];
    (
        kp["n"].as_u64().unwrap(),
        kp["r"].as_u64().unwrap(),
        kp["p"].as_u64().unwrap(),
    )
}

const LIGHT: (u64, u64, u64) = (4096, 8, 6);
const STANDARD: (u64, u64, u64) = (262_144, 8, 1);

#[test]
fn import_raw_and_replace_raw_honour_light() {
    let e = env();
    let import = |args: &[&str]| ok(&e.run(args));
    let file_of = |addr: &str| {
        key_files(&e.ks)
            .into_iter()
            .find(|p| file_name(p).ends_with(&addr[2..]))
            .unwrap()
    };
    assert_eq!(
        import(&["import-raw", "--light", "--password-file", e.pw(), KEY_A]),
        ADDR_A
    );
    assert_eq!(kdf_params_of(&file_of(ADDR_A)), LIGHT);
    assert_eq!(
        import(&["import-raw", "--password-file", e.pw(), KEY_F]),
        ADDR_F_OWN
    );
    assert_eq!(kdf_params_of(&file_of(ADDR_F_OWN)), STANDARD);
    // replace-raw writes with the parameters it is given, whatever the old file had.
    let replace = |light: bool, key: &str| {
        let mut args = vec!["replace-raw"];
        if light {
            args.push("--light");
        }
        args.extend([
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            e.pw(),
            key,
        ]);
        ok(&e.run(&args))
    };
    assert_eq!(replace(false, KEY_A), ADDR_A);
    assert_eq!(kdf_params_of(&file_of(ADDR_A)), STANDARD);
    assert_eq!(replace(true, KEY_F), ADDR_F_OWN);
    assert_eq!(kdf_params_of(&file_of(ADDR_F_OWN)), LIGHT);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn new_with_an_empty_passphrase_file() {
    let e = env();
    let empty = e.pwfile("empty", "");
    let addr = ok(&e.run(&["new", "--light", "--password-file", &empty]));
    assert_eq!(
        decrypt_independent(&read_json(&e.only_file()), "").len(),
        32
    );
    let sig = ok(&e.sign(&addr, &empty, HELLO_HEX));
    assert_eq!(e.recover(HELLO_HEX, &sig), addr);
    fails(&e.sign(&addr, e.pw(), HELLO_HEX), 1, WRONG_PASS);
}

// ---------------------------------------------------------------------------------------------
// import-raw

#[test]
fn import_raw_plain_key_matches_reference_and_file_decrypts() {
    let e = env();
    assert_eq!(e.import(KEY_A), ADDR_A);
    let path = e.only_file();
    let (_, name_addr) = parse_key_file_name(&file_name(&path));
    assert_eq!(format!("0x{name_addr}"), ADDR_A);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        fs::metadata(&e.ks).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let json = read_json(&path);
    assert_eq!(json["version"], 3);
    assert_eq!(json["address"], &ADDR_A[2..]);
    assert_eq!(hex::encode(decrypt_independent(&json, "1234")), KEY_A);
    assert_eq!(e.list(), vec![ADDR_A]);
    // A separate process reads the file back and signs as the reference says.
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn import_raw_accepts_upper_case_hex_and_boundary_keys() {
    let e = env();
    assert_eq!(e.import(&KEY_A.to_uppercase()), ADDR_A);
    assert_eq!(e.import(KEY_ONE), ADDR_ONE);
    // n - 1 is the largest valid key.
    let n_minus_1 = format!("{}40", &N_HEX[..62]);
    let addr = e.import(&n_minus_1);
    let sig = ok(&e.sign(&addr, e.pw(), HELLO_HEX));
    assert_eq!(e.recover(HELLO_HEX, &sig), addr);
    assert_eq!(e.list().len(), 3);
}

#[test]
fn import_raw_wallet_key_form_uses_the_given_address() {
    let e = env();
    // The address part in upper case: printed and stored in lower case.
    let wk = format!("{KEY_F}0x000x{}", ADDR_DB2[2..].to_uppercase());
    assert_eq!(wk.len(), 110);
    assert_eq!(e.import(&wk), ADDR_DB2);
    let json = read_json(&e.only_file());
    assert_eq!(json["address"], &ADDR_DB2[2..]);
    assert_eq!(hex::encode(decrypt_independent(&json, "1234")), KEY_F);
    assert_eq!(e.list(), vec![ADDR_DB2]);
    // Signing as the decoupled account uses key f8cc..., whose own address is 0x90b3....
    let sig = ok(&e.sign(ADDR_DB2, e.pw(), HELLO_HEX));
    assert_eq!(e.recover(HELLO_HEX, &sig), ADDR_F_OWN);
    // The key's own address is a different account: importing it plainly is no duplicate,
    // and neither is the plain key of 0x8191...db1 (reference 2.4).
    assert_eq!(e.import(KEY_F), ADDR_F_OWN);
    assert_eq!(e.import(KEY_A), ADDR_A);
    let mut got = e.list();
    got.sort();
    let mut want = vec![
        ADDR_A.to_string(),
        ADDR_DB2.to_string(),
        ADDR_F_OWN.to_string(),
    ];
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn import_raw_reads_key_data_from_stdin() {
    let e = env();
    let args = ["import-raw", "--light", "--password-file", e.pw(), "-"];
    assert_eq!(
        ok(&keytool_stdin(&e.ks, &args, Some(&format!("{KEY_A}\n")))),
        ADDR_A
    );
    assert_eq!(
        ok(&keytool_stdin(
            &e.ks,
            &args,
            Some(&format!("{KEY_F}0x00{ADDR_DB2}\r\n"))
        )),
        ADDR_DB2
    );
    assert_eq!(ok(&keytool_stdin(&e.ks, &args, Some(KEY_ONE))), ADDR_ONE);
    // Only one line ending is removed; other white space is part of the key data.
    unchanged(&e.ks, || {
        for input in [
            format!("{KEY_F}\n\n"),
            format!("{KEY_F} \n"),
            format!(" {KEY_F}\n"),
            format!("{KEY_F}\t"),
        ] {
            fails(
                &keytool_stdin(&e.ks, &args, Some(&input)),
                2,
                "invalid hex string",
            );
        }
        fails(
            &keytool_stdin(&e.ks, &args, Some("")),
            2,
            "invalid length, need 256 bits",
        );
        fails(
            &keytool_stdin(&e.ks, &args, Some("\n")),
            2,
            "invalid length, need 256 bits",
        );
    });
    // Signing in a fresh process recovers to the imported (own) address.
    let sig = ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX));
    assert_eq!(sig, SIG_HELLO_A);
}

#[test]
fn import_raw_rejects_malformed_key_data_with_exact_messages() {
    let e = env();
    e.import(KEY_A);
    let k = KEY_F;
    let a = &ADDR_A[2..];
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "62 hex digits",
            k[..62].to_string(),
            "invalid length, need 256 bits",
        ),
        (
            "66 hex digits",
            format!("{k}00"),
            "invalid length, need 256 bits",
        ),
        (
            "empty string",
            String::new(),
            "invalid length, need 256 bits",
        ),
        (
            "two hex digits",
            "00".into(),
            "invalid length, need 256 bits",
        ),
        ("odd length 63", k[..63].to_string(), "invalid hex string"),
        ("odd length 65", format!("{k}0"), "invalid hex string"),
        (
            "bad hex character",
            format!("{}g", &k[..63]),
            "invalid hex string",
        ),
        (
            "0x-prefixed plain key",
            format!("0x{k}"),
            "invalid hex string",
        ),
        (
            "0X-prefixed plain key",
            format!("0X{k}"),
            "invalid hex string",
        ),
        (
            "0x-prefixed 62 digits",
            format!("0x{}", &k[..62]),
            "invalid hex string",
        ),
        ("leading space", format!(" {k}"), "invalid hex string"),
        ("trailing space", format!("{k} "), "invalid hex string"),
        ("trailing newline", format!("{k}\n"), "invalid hex string"),
        (
            "leading and trailing space",
            format!(" {k} "),
            "invalid hex string",
        ),
        (
            "key equal to n",
            N_HEX.to_string(),
            "invalid private key, >=N",
        ),
        ("key all ff", "f".repeat(64), "invalid private key, >=N"),
        (
            "zero key",
            "0".repeat(64),
            "invalid private key, zero or negative",
        ),
        (
            "wallet key type 01",
            format!("{k}0x010x{a}"),
            "Chain wallet key type must be 00.",
        ),
        (
            "wallet key type ff",
            format!("{k}0xff0x{a}"),
            "Chain wallet key type must be 00.",
        ),
        (
            "wallet key 0y before type",
            format!("{k}0y000x{a}"),
            "invalid wallet key: expected \"0x\" before the key type",
        ),
        (
            "wallet key 0X before type",
            format!("{k}0X000x{a}"),
            "invalid wallet key: expected \"0x\" before the key type",
        ),
        (
            "wallet key xx before address",
            format!("{k}0x00xx{a}"),
            "invalid wallet key: expected \"0x\" before the address",
        ),
        (
            "wallet key bad address hex",
            format!("{k}0x000x{}z", &a[..39]),
            "invalid wallet key: address is not 40 hex digits",
        ),
        (
            "wallet key address with space",
            format!("{k}0x000x {}", &a[..39]),
            "invalid wallet key: address is not 40 hex digits",
        ),
        (
            "wallet key zero address",
            format!("{k}0x000x{}", "0".repeat(40)),
            "invalid wallet key: address is the zero address",
        ),
        (
            "wallet key zero key",
            format!("{}0x000x{a}", "0".repeat(64)),
            "invalid private key, zero or negative",
        ),
        (
            "wallet key key >= n",
            format!("{N_HEX}0x000x{a}"),
            "invalid private key, >=N",
        ),
        (
            "wallet key bad key hex",
            format!("{}g0x000x{a}", &k[..63]),
            "invalid hex string",
        ),
        (
            "109 characters",
            format!("{k}0x000x{}", &a[..39]),
            "invalid hex string",
        ),
        (
            "111 characters",
            format!("{k}0x000x{a}0"),
            "invalid hex string",
        ),
        // 110 bytes but not ASCII: taken as the plain form.
        (
            "110 bytes with non-ASCII",
            format!("{k}0x000x{}é", &a[..38]),
            "invalid hex string",
        ),
    ];
    for (label, keydata, msg) in &cases {
        if *label == "110 bytes with non-ASCII" {
            assert_eq!(keydata.len(), 110);
        }
        unchanged(&e.ks, || {
            let r = e.run(&["import-raw", "--light", "--password-file", e.pw(), keydata]);
            assert_eq!(r.stderr, format!("error: {msg}\n"), "case {label}: {r:?}");
            assert_eq!((r.code, r.stdout.as_str()), (2, ""), "case {label}: {r:?}");
        });
    }
    assert_eq!(e.list(), vec![ADDR_A]);
}

#[test]
fn import_raw_refuses_duplicates_and_writes_nothing() {
    let e = env();
    e.import(KEY_A);
    let other = e.pwfile("other", "other\n");
    let upper = KEY_A.to_uppercase();
    // Wallet keys naming the existing address (reference 2.4), as given and upper-cased.
    let wk = format!("{KEY_F}0x00{ADDR_A}");
    let wk_upper = format!("{KEY_F}0x000x{}", ADDR_A[2..].to_uppercase());
    // (what, key data, password file); `-` reads the key from standard input.
    let cases: [(&str, &str, &str); 6] = [
        ("same key, same passphrase", KEY_A, e.pw()),
        ("same key, other passphrase", KEY_A, &other),
        ("upper-case spelling", &upper, e.pw()),
        ("wallet key", &wk, e.pw()),
        ("wallet key, upper-case address", &wk_upper, e.pw()),
        ("from stdin", "-", e.pw()),
    ];
    unchanged(&e.ks, || {
        for (what, key, pw) in cases {
            let args = ["import-raw", "--light", "--password-file", pw, key];
            let r = if key == "-" {
                keytool_stdin(&e.ks, &args, Some(KEY_A))
            } else {
                e.run(&args)
            };
            assert_eq!(r.stderr, "error: account already exists\n", "{what}: {r:?}");
            assert_eq!((r.code, r.stdout.as_str()), (1, ""), "{what}: {r:?}");
        }
    });
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn import_raw_sees_a_duplicate_placed_by_hand() {
    let e = env();
    e.import(KEY_A);
    let src = e.only_file();
    let json = read_json(&src);
    fs::remove_file(&src).unwrap();
    // The same key under a hand-chosen name, with a checksummed 0x-prefixed address.
    let mut j = json.clone();
    j["address"] = Value::from("0x819104A190255e0cedbDD9d5F59a557633d79db1");
    fs::write(e.ks.join("my-key.json"), serde_json::to_vec(&j).unwrap()).unwrap();
    assert_eq!(e.list(), vec![ADDR_A]);
    unchanged(&e.ks, || {
        fails(
            &e.run(&["import-raw", "--light", "--password-file", e.pw(), KEY_A]),
            1,
            "account already exists",
        );
    });
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

// ---------------------------------------------------------------------------------------------
// replace-raw

#[test]
fn replace_raw_rewrites_in_place_with_the_new_key_and_passphrase() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    let old_bytes = fs::read(&path).unwrap();
    let newpw = e.pwfile("newpw", "new passphrase\n");
    // Reference 2.4: replace 0x8191...db1 with the wallet key f8cc...0x000x8191...db1.
    let wk = format!("{KEY_F}0x00{ADDR_A}");
    let r = e.run(&[
        "replace-raw",
        "--light",
        "--old-password-file",
        e.pw(),
        "--new-password-file",
        &newpw,
        &wk,
    ]);
    assert_eq!(ok(&r), ADDR_A);
    // Same single file, same name, new content, mode 0600, version 3.
    assert_eq!(key_files(&e.ks), vec![path.clone()]);
    let new_bytes = fs::read(&path).unwrap();
    assert_ne!(old_bytes, new_bytes);
    assert_eq!(
        fs::metadata(&path).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let json = read_json(&path);
    assert_eq!(json["version"], 3);
    assert_eq!(json["address"], &ADDR_A[2..]);
    assert_eq!(
        hex::encode(decrypt_independent(&json, "new passphrase")),
        KEY_F
    );
    assert_eq!(e.list(), vec![ADDR_A]);
    // The new passphrase works and the new key signs; the old passphrase no longer works.
    let sig = ok(&e.sign(ADDR_A, &newpw, HELLO_HEX));
    assert_eq!(e.recover(HELLO_HEX, &sig), ADDR_F_OWN);
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, WRONG_PASS)
    });
}

#[test]
fn replace_raw_with_the_plain_key_changes_the_passphrase() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    let newpw = e.pwfile("newpw", "5678");
    // Key data from stdin.
    let r = keytool_stdin(
        &e.ks,
        &[
            "replace-raw",
            "--light",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            &newpw,
            "-",
        ],
        Some(&format!("{KEY_A}\n")),
    );
    assert_eq!(ok(&r), ADDR_A);
    assert_eq!(key_files(&e.ks), vec![path]);
    assert_eq!(ok(&e.sign(ADDR_A, &newpw, HELLO_HEX)), SIG_HELLO_A);
    fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, WRONG_PASS);
    // The old passphrase is no longer the old passphrase of a second replace either.
    unchanged(&e.ks, || {
        let r = e.run(&[
            "replace-raw",
            "--light",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            e.pw(),
            KEY_A,
        ]);
        fails(&r, 1, WRONG_PASS);
    });
}

#[test]
fn replace_raw_failures_change_nothing() {
    let e = env();
    e.import(KEY_A);
    let wrong = e.pwfile("wrong", "12345\n");
    let newpw = e.pwfile("newpw", "x\n");
    let missing = e.root.join("no-such-file");
    let missing = missing.to_str().unwrap();
    let wk_unknown = format!("{KEY_A}0x00{ADDR_DB2}");
    let wk_type = format!("{KEY_F}0x010x{}", &ADDR_A[2..]);
    let no_file =
        format!("cannot read password file {missing}: No such file or directory (os error 2)");
    // (what, old password file, new password file, key data, exit code, message); `None`
    // leaves the flag out.
    let cases: [Case; 9] = [
        ("wrong old passphrase", Some(&wrong), Some(&newpw), KEY_A, 1, WRONG_PASS),
        ("unknown address, plain key", Some(e.pw()), Some(&newpw), KEY_F, 1, "no key for given address or file"),
        ("unknown address, wallet key", Some(e.pw()), Some(&newpw), &wk_unknown, 1, "no key for given address or file"),
        ("short key", Some(e.pw()), Some(&newpw), &KEY_A[..62], 2, "invalid length, need 256 bits"),
        ("wallet key type 01", Some(e.pw()), Some(&newpw), &wk_type, 2, "Chain wallet key type must be 00."),
        ("missing old password file", Some(missing), Some(&newpw), KEY_A, 2, &no_file),
        ("missing new password file", Some(e.pw()), Some(missing), KEY_A, 2, &no_file),
        ("no password files, no terminal", None, None, KEY_A, 2, "a passphrase is needed: give --old-password-file FILE, or run on a terminal to be prompted"),
        ("no new password file, no terminal", Some(e.pw()), None, KEY_A, 2, "a passphrase is needed: give --new-password-file FILE, or run on a terminal to be prompted"),
    ];
    unchanged(&e.ks, || {
        for (what, old, new, key, code, msg) in cases {
            let mut args = vec!["replace-raw", "--light"];
            if let Some(f) = old {
                args.extend(["--old-password-file", f]);
            }
            if let Some(f) = new {
                args.extend(["--new-password-file", f]);
            }
            args.push(key);
            let r = e.run(&args);
            assert_eq!(r.stderr, format!("error: {msg}\n"), "{what}: {r:?}");
            assert_eq!((r.code, r.stdout.as_str()), (code, ""), "{what}: {r:?}");
        }
    });
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

// ---------------------------------------------------------------------------------------------
// list

/// A keystore directory that does not exist is an error for the commands that read it (a
/// mistyped path is not an empty keystore), and is not created; an empty one lists nothing.
#[test]
fn list_of_a_missing_keystore_fails_and_of_an_empty_one_is_empty() {
    let e = env();
    let missing = format!(
        "keystore directory {} does not exist (chain-keytool new or import-raw creates it)",
        e.ks.display()
    );
    fails(&e.run(&["list"]), 1, &missing);
    fails(&e.run(&["list", "--json"]), 1, &missing);
    fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, &missing);
    fails(
        &e.run(&[
            "replace-raw",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            e.pw(),
            KEY_A,
        ]),
        1,
        &missing,
    );
    assert!(!e.ks.exists(), "reading must not create the keystore");
    // A file where the directory should be.
    fs::write(&e.ks, "").unwrap();
    let r = e.run(&["list"]);
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr.starts_with(&format!(
            "error: cannot read keystore directory {}: Not a directory",
            e.ks.display()
        )),
        "{r:?}"
    );
    fs::remove_file(&e.ks).unwrap();
    // The commands that write a key create the directory.
    assert_eq!(e.import(KEY_A), ADDR_A);
    assert_eq!(e.list(), vec![ADDR_A.to_string()]);
    fs::remove_dir_all(&e.ks).unwrap();
    fs::create_dir(&e.ks).unwrap();
    let r = e.run(&["list"]);
    assert_eq!((r.code, r.stdout.as_str(), r.stderr.as_str()), (0, "", ""));
    assert_eq!(ok(&e.run(&["list", "--json"])), "[]");
}

#[test]
fn list_json_has_the_wallet_shape_exactly() {
    let e = env();
    e.import(KEY_A);
    let name = file_name(&e.only_file());
    let url = e.url(&name);
    assert!(url.starts_with("keystore:///"), "{url}");
    let want = format!(
        r#"[{{"url":"{url}","status":"Locked","accounts":[{{"address":"{ADDR_A}","url":"{url}"}}]}}]"#
    );
    assert_eq!(ok(&e.run(&["list", "--json"])), want);
}

#[test]
fn list_is_sorted_by_url() {
    let e = env();
    e.import(KEY_A);
    let utc = file_name(&e.only_file());
    // Files placed by hand; the index reads only their address (reference 1.11).
    let a1 = "0x1111111111111111111111111111111111111111";
    let a2 = "0x2222222222222222222222222222222222222222";
    let a3 = "0x3333333333333333333333333333333333333333";
    fs::write(
        e.ks.join("a-file"),
        format!(r#"{{"address":"{}"}}"#, &a1[2..]),
    )
    .unwrap();
    fs::write(e.ks.join("Z-file"), format!(r#"{{"address":"{a2}"}}"#)).unwrap();
    fs::write(
        e.ks.join("B-file"),
        format!(r#"{{"address":"{}"}}"#, &a3[2..]),
    )
    .unwrap();
    // Byte order: 'B' < 'U' < 'Z' < 'a'.
    assert_eq!(e.list(), vec![a3, ADDR_A, a2, a1]);
    let wallets = e.list_json();
    let got: Vec<(String, String, String)> = wallets
        .as_array()
        .unwrap()
        .iter()
        .map(|w| {
            assert_eq!(w.as_object().unwrap().len(), 3, "{w}");
            assert_eq!(w["status"], "Locked");
            let accts = w["accounts"].as_array().unwrap();
            assert_eq!(accts.len(), 1);
            assert_eq!(accts[0].as_object().unwrap().len(), 2);
            (
                w["url"].as_str().unwrap().to_string(),
                accts[0]["url"].as_str().unwrap().to_string(),
                accts[0]["address"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("B-file", a3),
        (utc.as_str(), ADDR_A),
        ("Z-file", a2),
        ("a-file", a1),
    ]
    .iter()
    .map(|(n, a)| (e.url(n), e.url(n), a.to_string()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn list_skips_everything_that_is_not_a_key_file() {
    let e = env();
    e.import(KEY_A);
    let utc = file_name(&e.only_file());
    let ks = &e.ks;
    let addr_json = |a: &str| format!(r#"{{"address":"{a}","version":3}}"#);
    // Skipped by name.
    fs::write(
        ks.join(".hidden"),
        addr_json("1111111111111111111111111111111111111111"),
    )
    .unwrap();
    fs::write(
        ks.join("backup~"),
        addr_json("2222222222222222222222222222222222222222"),
    )
    .unwrap();
    // Sub-directories are not descended, even one named like a key file.
    fs::create_dir(ks.join("sub")).unwrap();
    fs::write(
        ks.join("sub").join("key"),
        addr_json("3333333333333333333333333333333333333333"),
    )
    .unwrap();
    fs::create_dir(
        ks.join("UTC--2020-01-01T00-00-00.000000000Z--4444444444444444444444444444444444444444"),
    )
    .unwrap();
    // Symbolic links, to a file outside and to a key file inside.
    let outside = write_file(
        &e.root,
        "outside.json",
        &addr_json("5555555555555555555555555555555555555555"),
    );
    std::os::unix::fs::symlink(&outside, ks.join("link-out")).unwrap();
    std::os::unix::fs::symlink(ks.join(&utc), ks.join("link-in")).unwrap();
    std::os::unix::fs::symlink(ks.join("sub"), ks.join("link-dir")).unwrap();
    std::os::unix::fs::symlink(e.root.join("dangling"), ks.join("link-dangling")).unwrap();
    // Regular files that are not key files.
    fs::write(ks.join("notes.txt"), "hello, not JSON").unwrap();
    fs::write(ks.join("empty"), "").unwrap();
    fs::write(ks.join("no-address"), r#"{"version":3,"crypto":{}}"#).unwrap();
    fs::write(
        ks.join("zero-address"),
        addr_json("0000000000000000000000000000000000000000"),
    )
    .unwrap();
    fs::write(
        ks.join("zero-address-0x"),
        addr_json("0x0000000000000000000000000000000000000000"),
    )
    .unwrap();
    fs::write(
        ks.join("number-address"),
        r#"{"address":819104,"version":3}"#,
    )
    .unwrap();
    fs::write(
        ks.join("array"),
        r#"[{"address":"6666666666666666666666666666666666666666"}]"#,
    )
    .unwrap();
    fs::write(
        ks.join("string"),
        r#""6666666666666666666666666666666666666666""#,
    )
    .unwrap();
    fs::write(ks.join("null-address"), r#"{"address":null}"#).unwrap();
    fs::write(
        ks.join("truncated"),
        r#"{"address":"7777777777777777777777777777777777777777","crypto":{"ciph"#,
    )
    .unwrap();
    // Regular files that are: lenient address (0X, mixed case), trailing data after the JSON.
    fs::write(
        ks.join("lenient"),
        r#"{"address":"0XAbCdEf0123456789abcdef0123456789ABCDEF01"}"#,
    )
    .unwrap();
    fs::write(
        ks.join("trailing"),
        r#"{"address":"8888888888888888888888888888888888888888"} trailing garbage"#,
    )
    .unwrap();
    let mut want = [
        (utc.clone(), ADDR_A.to_string()),
        (
            "lenient".to_string(),
            "0xabcdef0123456789abcdef0123456789abcdef01".to_string(),
        ),
        (
            "trailing".to_string(),
            "0x8888888888888888888888888888888888888888".to_string(),
        ),
    ];
    want.sort();
    let addrs: Vec<String> = want.iter().map(|(_, a)| a.clone()).collect();
    assert_eq!(e.list(), addrs);
    let urls: Vec<String> = e
        .list_json()
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["url"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(urls, want.iter().map(|(n, _)| e.url(n)).collect::<Vec<_>>());
    // A second listing (from the saved index) says the same.
    assert_eq!(e.list(), addrs);
    // Signing with an address only found behind an ignored entry: unknown.
    fails(
        &e.sign(
            "0x5555555555555555555555555555555555555555",
            e.pw(),
            HELLO_HEX,
        ),
        1,
        "unknown account",
    );
    fails(
        &e.sign(
            "0x1111111111111111111111111111111111111111",
            e.pw(),
            HELLO_HEX,
        ),
        1,
        "unknown account",
    );
}

#[test]
fn list_skips_json_that_is_not_an_object_with_an_address() {
    // Reference 1.11: only the top-level `address` member of the first JSON value counts. A
    // JSON array (even one whose first element is an address string) has no such member.
    let e = env();
    e.import(KEY_A);
    for (name, content) in [
        (
            "array-of-string",
            r#"["6666666666666666666666666666666666666666"]"#,
        ),
        (
            "array-of-string-0x",
            r#"["0x7777777777777777777777777777777777777777", 3]"#,
        ),
        (
            "array-of-object",
            r#"[{"address":"8888888888888888888888888888888888888888"}]"#,
        ),
        ("string", r#""9999999999999999999999999999999999999999""#),
    ] {
        fs::write(e.ks.join(name), content).unwrap();
    }
    assert_eq!(e.list(), vec![ADDR_A]);
    unchanged(&e.ks, || {
        fails(
            &e.sign(
                "0x6666666666666666666666666666666666666666",
                e.pw(),
                HELLO_HEX,
            ),
            1,
            "unknown account",
        );
    });
}

/// Runs the tool with a deadline: a FIFO in the keystore must never be opened (it would block).
fn keytool_with_deadline(ks: &Path, args: &[&str], secs: u64) -> Run {
    let mut child = common::spawn_keytool(ks, args);
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap().into();
        }
        if start.elapsed() > Duration::from_secs(secs) {
            let _ = child.kill();
            let _ = child.wait();
            panic!("chain-keytool {args:?} did not finish within {secs} s");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn list_skips_a_fifo_without_opening_it() {
    let e = env();
    e.import(KEY_A);
    let fifo = e.ks.join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let out = ok(&keytool_with_deadline(&e.ks, &["list"], 20));
    assert_eq!(out, ADDR_A);
}

#[test]
fn list_notices_files_added_and_removed_by_hand() {
    let e = env();
    e.import(KEY_A);
    let orig = e.only_file();
    assert_eq!(e.list(), vec![ADDR_A]);
    // A copy under another name shows up at once, sorted after the UTC-- name.
    let copy = e.ks.join("zz-copy.json");
    fs::copy(&orig, &copy).unwrap();
    assert_eq!(e.list(), vec![ADDR_A, ADDR_A]);
    // Removing the original leaves the copy, which signs.
    fs::remove_file(&orig).unwrap();
    assert_eq!(e.list(), vec![ADDR_A]);
    let urls = e.list_json();
    assert_eq!(urls[0]["url"].as_str().unwrap(), e.url("zz-copy.json"));
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
    // Another account's file appears; then everything goes.
    let other = write_file(
        &e.ks,
        "other",
        r#"{"address":"1111111111111111111111111111111111111111"}"#,
    );
    assert_eq!(
        e.list(),
        // "other" sorts before "zz-copy.json".
        vec!["0x1111111111111111111111111111111111111111", ADDR_A]
    );
    fs::remove_file(&copy).unwrap();
    assert_eq!(e.list(), vec!["0x1111111111111111111111111111111111111111"]);
    fs::remove_file(&other).unwrap();
    assert_eq!(e.list(), Vec::<String>::new());
    fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, "unknown account");
    // A file whose address changes (rewritten by rename) is read again.
    fs::write(
        e.ks.join("moving"),
        r#"{"address":"2222222222222222222222222222222222222222"}"#,
    )
    .unwrap();
    assert_eq!(e.list(), vec!["0x2222222222222222222222222222222222222222"]);
    replace_file(
        &e.ks,
        "moving",
        br#"{"address":"3333333333333333333333333333333333333333"}"#,
    );
    assert_eq!(e.list(), vec!["0x3333333333333333333333333333333333333333"]);
}

#[test]
fn list_notices_changes_after_a_trusted_saved_index() {
    // Past the racy window the saved index is trusted; the directory's mtime must still
    // reveal additions and removals made by hand.
    let e = env();
    e.import(KEY_A);
    let orig = e.only_file();
    std::thread::sleep(Duration::from_millis(1100));
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(e.list(), vec![ADDR_A]);
    fs::copy(&orig, e.ks.join("zz-copy")).unwrap();
    assert_eq!(e.list(), vec![ADDR_A, ADDR_A]);
    fs::remove_file(&orig).unwrap();
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(e.list_json()[0]["url"].as_str().unwrap(), e.url("zz-copy"));
    // A new import by another process is seen too.
    assert_eq!(e.import(KEY_F), ADDR_F_OWN);
    let mut got = e.list();
    got.sort();
    let mut want = vec![ADDR_A.to_string(), ADDR_F_OWN.to_string()];
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn list_and_import_with_a_relative_keystore_or_a_datadir() {
    let e = env();
    // Relative --keystore: URLs are still absolute.
    let run_in = |args: &[&str]| -> Run {
        Command::new(keytool_bin())
            .current_dir(&e.root)
            .args(args)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .into()
    };
    assert_eq!(
        ok(&run_in(&[
            "--keystore",
            "rel-ks",
            "import-raw",
            "--light",
            "--password-file",
            "pw",
            KEY_A
        ])),
        ADDR_A
    );
    let files = key_files(&e.root.join("rel-ks"));
    assert_eq!(files.len(), 1);
    let out = ok(&run_in(&["--keystore", "rel-ks", "list", "--json"]));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v[0]["url"].as_str().unwrap(),
        format!("keystore://{}", files[0].display())
    );
    assert!(files[0].is_absolute());
    // --datadir D: the keystore is D/keystore.
    let dd = e.root.join("data");
    assert_eq!(
        ok(&run_in(&[
            "--datadir",
            dd.to_str().unwrap(),
            "import-raw",
            "--light",
            "--password-file",
            "pw",
            KEY_F
        ])),
        ADDR_F_OWN
    );
    assert_eq!(key_files(&dd.join("keystore")).len(), 1);
    assert_eq!(
        ok(&run_in(&["--datadir", dd.to_str().unwrap(), "list"])),
        ADDR_F_OWN
    );
    // --keystore wins over --datadir; the global flags may follow the subcommand.
    assert_eq!(
        ok(&run_in(&[
            "--datadir",
            dd.to_str().unwrap(),
            "--keystore",
            "rel-ks",
            "list"
        ])),
        ADDR_A
    );
    assert_eq!(ok(&run_in(&["list", "--keystore", "rel-ks"])), ADDR_A);
}

#[test]
fn list_survives_a_damaged_saved_index() {
    let e = env();
    e.import(KEY_A);
    assert_eq!(e.list(), vec![ADDR_A]);
    let cache = e.ks.join(".chain-keystore-index");
    assert!(cache.exists(), "the listing saves its index");
    let good = fs::read(&cache).unwrap();
    for damaged in [
        good[..good.len() / 2].to_vec(),
        Vec::new(),
        b"garbage".to_vec(),
        vec![0xffu8; good.len()],
    ] {
        fs::write(&cache, &damaged).unwrap();
        assert_eq!(e.list(), vec![ADDR_A]);
        assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
    }
}

#[test]
fn writes_sweep_dead_temporaries_but_keep_other_hidden_files() {
    let e = env();
    e.import(KEY_A);
    let name = file_name(&e.only_file());
    // A temporary file a dead writer left (its name as atomic.rs makes them), and hidden
    // files of someone else.
    let dead = e.ks.join(format!(".{name}.tmp-12345"));
    fs::write(&dead, "partial").unwrap();
    fs::write(e.ks.join(".hidden"), "mine").unwrap();
    fs::write(e.ks.join(".tmp"), "mine too").unwrap();
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(e.import(KEY_F), ADDR_F_OWN);
    assert!(
        !dead.exists(),
        "a dead writer's temporary file is removed under the lock"
    );
    assert_eq!(fs::read(e.ks.join(".hidden")).unwrap(), b"mine");
    assert_eq!(fs::read(e.ks.join(".tmp")).unwrap(), b"mine too");
}

#[test]
fn concurrent_imports_of_one_key_create_one_file() {
    let e = env();
    let children: Vec<_> = (0..4)
        .map(|_| {
            common::spawn_keytool(
                &e.ks,
                &["import-raw", "--light", "--password-file", e.pw(), KEY_A],
            )
        })
        .collect();
    let runs: Vec<Run> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap().into())
        .collect();
    let winners: Vec<&Run> = runs.iter().filter(|r| r.code == 0).collect();
    assert_eq!(winners.len(), 1, "{runs:?}");
    assert_eq!(winners[0].stdout, format!("{ADDR_A}\n"));
    for r in runs.iter().filter(|r| r.code != 0) {
        fails(r, 1, "account already exists");
    }
    assert_eq!(key_files(&e.ks).len(), 1);
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn concurrent_imports_of_different_keys_all_land() {
    let e = env();
    let keys = [KEY_A, KEY_F, KEY_ONE];
    let children: Vec<_> = keys
        .iter()
        .map(|k| {
            common::spawn_keytool(
                &e.ks,
                &["import-raw", "--light", "--password-file", e.pw(), k],
            )
        })
        .collect();
    let outs: Vec<String> = children
        .into_iter()
        .map(|c| ok(&c.wait_with_output().unwrap().into()))
        .collect();
    assert_eq!(outs, vec![ADDR_A, ADDR_F_OWN, ADDR_ONE]);
    let mut got = e.list();
    got.sort();
    let mut want = vec![ADDR_A, ADDR_F_OWN, ADDR_ONE];
    want.sort();
    assert_eq!(got, want);
}

// ---------------------------------------------------------------------------------------------
// sign and recover

#[test]
fn sign_matches_the_reference_example() {
    let e = env();
    e.import(KEY_A);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
    // --text hello is the same message; the address in upper case is the same account.
    let r = e.run(&[
        "sign",
        "--address",
        ADDR_A,
        "--password-file",
        e.pw(),
        "--text",
        "hello",
    ]);
    assert_eq!(ok(&r), SIG_HELLO_A);
    let upper = format!("0X{}", ADDR_A[2..].to_uppercase());
    assert_eq!(ok(&e.sign(&upper, e.pw(), "0X68656C6C6F")), SIG_HELLO_A);
    // Password file: only the first line, without its line ending.
    for content in ["1234", "1234\r\n", "1234\nsecond line\n"] {
        let f = e.pwfile("pw2", content);
        assert_eq!(
            ok(&e.sign(ADDR_A, &f, HELLO_HEX)),
            SIG_HELLO_A,
            "{content:?}"
        );
    }
    // Deterministic; differs for another message; recovers to the account.
    let empty = ok(&e.sign(ADDR_A, e.pw(), "0x"));
    assert_ne!(empty, SIG_HELLO_A);
    assert_eq!(empty.len(), 132);
    assert_eq!(e.recover("0x", &empty), ADDR_A);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), "0x")), empty);
    let r = e.run(&[
        "sign",
        "--address",
        ADDR_A,
        "--password-file",
        e.pw(),
        "--text",
        "-hello-",
    ]);
    let sig = ok(&r);
    assert_eq!(ok(&e.run(&["recover", "--text", "-hello-", &sig])), ADDR_A);
    assert_eq!(e.recover("0x2d68656c6c6f2d", &sig), ADDR_A);
}

#[test]
fn recover_matches_the_reference_example() {
    let e = env();
    assert_eq!(e.recover(HELLO_HEX, SIG_HELLO_A), ADDR_A);
    assert_eq!(
        ok(&e.run(&["recover", "--text", "hello", SIG_HELLO_A])),
        ADDR_A
    );
    assert_eq!(
        e.recover(
            "0X68656C6C6F",
            &SIG_HELLO_A.to_uppercase().replacen("0X", "0x", 1)
        ),
        ADDR_A
    );
    // The high-s twin of the signature (s' = n - s, v flipped) is accepted for recovery.
    let sig = hex::decode(&SIG_HELLO_A[2..]).unwrap();
    let n = hex::decode(N_HEX).unwrap();
    let mut twin = sig[..32].to_vec();
    twin.extend(sub256(&n, &sig[32..64]));
    twin.push(if sig[64] == 27 { 28 } else { 27 });
    assert_eq!(
        e.recover(HELLO_HEX, &format!("0x{}", hex::encode(&twin))),
        ADDR_A
    );
    // Another message gives another address, without error.
    let other = e.recover("0x68656c6c6f21", SIG_HELLO_A);
    assert_ne!(other, ADDR_A);
    assert_eq!(other.len(), 42);
    // recover needs no keystore and creates none.
    assert!(!e.ks.exists());
}

#[test]
fn sign_failures_change_nothing() {
    let e = env();
    e.import(KEY_A);
    let wrong = e.pwfile("wrong", "123\n");
    let missing = e.root.join("missing-pw");
    let missing = missing.to_str().unwrap();
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, &wrong, HELLO_HEX), 1, WRONG_PASS);
        // Trailing white space is part of the passphrase.
        fails(
            &e.sign(ADDR_A, &e.pwfile("pw-space", "1234 \n"), HELLO_HEX),
            1,
            WRONG_PASS,
        );
        fails(
            &e.sign(ADDR_A, missing, HELLO_HEX),
            2,
            &format!("cannot read password file {missing}: No such file or directory (os error 2)"),
        );
        fails(&e.run(&["sign", "--address", ADDR_A, HELLO_HEX]), 2, "a passphrase is needed: give --password-file FILE, or run on a terminal to be prompted");
        // Bad addresses.
        let long = format!("{ADDR_A}00");
        let bad_hex = format!("{}z", &ADDR_A[..41]);
        let bad_addresses = [
            (
                &ADDR_A[2..],
                "invalid address: hex string without 0x prefix",
            ),
            ("", "invalid address: hex string without 0x prefix"),
            (
                "0x819104",
                "invalid address: hex string has length 6, want 40 for common.Address",
            ),
            (
                &long,
                "invalid address: hex string has length 42, want 40 for common.Address",
            ),
            (&bad_hex, "invalid address: invalid hex string"),
        ];
        for (address, msg) in bad_addresses {
            let r = e.sign(address, e.pw(), HELLO_HEX);
            assert_eq!(
                r.stderr,
                format!("error: {msg}\n"),
                "address {address:?}: {r:?}"
            );
            assert_eq!(
                (r.code, r.stdout.as_str()),
                (2, ""),
                "address {address:?}: {r:?}"
            );
        }
        // Unknown address; said before any passphrase is asked for.
        fails(&e.sign(ADDR_DB2, e.pw(), HELLO_HEX), 1, "unknown account");
        fails(
            &e.run(&["sign", "--address", ADDR_DB2, HELLO_HEX]),
            1,
            "unknown account",
        );
        fails(
            &e.sign(
                "0x0000000000000000000000000000000000000000",
                e.pw(),
                HELLO_HEX,
            ),
            1,
            "unknown account",
        );
        // Bad messages.
        fails(
            &e.sign(ADDR_A, e.pw(), "68656c6c6f"),
            2,
            "invalid message: hex string without 0x prefix",
        );
        fails(
            &e.sign(ADDR_A, e.pw(), "hello"),
            2,
            "invalid message: hex string without 0x prefix",
        );
        fails(
            &e.sign(ADDR_A, e.pw(), "0x68656c6c6"),
            2,
            "invalid message: hex string of odd length",
        );
        fails(
            &e.sign(ADDR_A, e.pw(), "0x0"),
            2,
            "invalid message: hex string of odd length",
        );
        fails(
            &e.sign(ADDR_A, e.pw(), "0xzz"),
            2,
            "invalid message: invalid hex string",
        );
    });
}

#[test]
fn sign_with_two_files_of_one_address_names_both() {
    let e = env();
    e.import(KEY_A);
    let orig = e.only_file();
    let dup = e.ks.join("copy-of-key");
    fs::copy(&orig, &dup).unwrap();
    // Paths absolute and sorted: "UTC--..." < "copy-of-key".
    let msg = format!(
        "multiple keys match address ({}, {})",
        orig.display(),
        dup.display()
    );
    assert_eq!(e.list(), vec![ADDR_A, ADDR_A]);
    let newpw = e.pwfile("newpw", "n\n");
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, &msg);
        let r = e.run(&[
            "replace-raw",
            "--light",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            &newpw,
            KEY_A,
        ]);
        fails(&r, 1, &msg);
        fails(
            &e.run(&["import-raw", "--light", "--password-file", e.pw(), KEY_A]),
            1,
            "account already exists",
        );
    });
    // A copy sorting first is named first.
    let first = e.ks.join("AAA-copy");
    fs::copy(&orig, &first).unwrap();
    let msg3 = format!(
        "multiple keys match address ({}, {}, {})",
        first.display(),
        orig.display(),
        dup.display()
    );
    fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, &msg3);
}

#[test]
fn recover_rejects_malformed_signatures() {
    let e = env();
    let sig = &SIG_HELLO_A[2..];
    let with_v = |v: &str| format!("0x{}{v}", &sig[..128]);
    let zero_27 = format!("0x{}1b", "0".repeat(128));
    let r_is_n = format!("0x{N_HEX}{}", &sig[64..]);
    let cases: Vec<(String, &str, String)> = vec![
        (
            HELLO_HEX.into(),
            "signature must be 65 bytes long",
            format!("0x{}", &sig[..128]),
        ),
        (
            HELLO_HEX.into(),
            "signature must be 65 bytes long",
            format!("{SIG_HELLO_A}00"),
        ),
        (
            HELLO_HEX.into(),
            "signature must be 65 bytes long",
            "0x".into(),
        ),
        (
            HELLO_HEX.into(),
            "invalid signature (V is not 27 or 28)",
            with_v("01"),
        ),
        (
            HELLO_HEX.into(),
            "invalid signature (V is not 27 or 28)",
            with_v("00"),
        ),
        (
            HELLO_HEX.into(),
            "invalid signature (V is not 27 or 28)",
            with_v("1d"),
        ),
        (HELLO_HEX.into(), "recovery failed", zero_27),
        (HELLO_HEX.into(), "recovery failed", r_is_n),
        (
            HELLO_HEX.into(),
            "invalid signature: hex string without 0x prefix",
            sig.to_string(),
        ),
        (
            HELLO_HEX.into(),
            "invalid signature: hex string of odd length",
            SIG_HELLO_A[..131].to_string(),
        ),
        (
            HELLO_HEX.into(),
            "invalid signature: invalid hex string",
            format!("{}zz", &SIG_HELLO_A[..130]),
        ),
        (
            "68656c6c6f".into(),
            "invalid message: hex string without 0x prefix",
            SIG_HELLO_A.into(),
        ),
        (
            "0x68656c6c6".into(),
            "invalid message: hex string of odd length",
            SIG_HELLO_A.into(),
        ),
        (
            "0xhello".into(),
            "invalid message: hex string of odd length",
            SIG_HELLO_A.into(),
        ),
        (
            "0xhi".into(),
            "invalid message: invalid hex string",
            SIG_HELLO_A.into(),
        ),
    ];
    for (msg, err, s) in &cases {
        let r = e.run(&["recover", msg, s]);
        assert_eq!(
            (r.stderr.as_str(), r.code, r.stdout.as_str()),
            (format!("error: {err}\n").as_str(), 2, ""),
            "recover {msg} {s}"
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Damaged key files

/// Rewrites the key file at `path` with `f` applied to its JSON (in place, as an editor would).
fn edit_json(path: &Path, f: impl FnOnce(&mut Value)) {
    let mut j = read_json(path);
    f(&mut j);
    fs::write(path, serde_json::to_vec(&j).unwrap()).unwrap();
}

#[test]
fn corrupted_mac_is_a_decryption_failure() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    edit_json(&path, |j| {
        let mac = j["crypto"]["mac"].as_str().unwrap().to_string();
        let first = if mac.starts_with('0') { '1' } else { '0' };
        let flipped = format!("{first}{}", &mac[1..]);
        j["crypto"]["mac"] = Value::from(flipped);
    });
    assert_eq!(e.list(), vec![ADDR_A]);
    let newpw = e.pwfile("newpw", "n\n");
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, WRONG_PASS);
        let r = e.run(&[
            "replace-raw",
            "--light",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            &newpw,
            KEY_A,
        ]);
        fails(&r, 1, WRONG_PASS);
    });
    // A MAC of the wrong length, too.
    edit_json(&path, |j| {
        let mac = j["crypto"]["mac"].as_str().unwrap().to_string();
        j["crypto"]["mac"] = Value::from(&mac[..62]);
    });
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, WRONG_PASS)
    });
}

#[test]
fn truncated_key_file_is_not_an_account() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    let name = file_name(&path);
    let bytes = fs::read(&path).unwrap();
    // Cut in half: the address is still in the bytes, but the file is not JSON, and the index
    // reads the address only from a complete first JSON value (reference 1.11). Rewritten by
    // rename so that the directory changes, as it does for every writer of key files.
    let half = &bytes[..bytes.len() / 2];
    assert!(std::str::from_utf8(half).unwrap().contains(&ADDR_A[2..]));
    replace_file(&e.ks, &name, half);
    assert_eq!(e.list(), Vec::<String>::new());
    assert_eq!(ok(&e.run(&["list", "--json"])), "[]");
    let newpw = e.pwfile("newpw", "n\n");
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, "unknown account");
        let r = e.run(&[
            "replace-raw",
            "--light",
            "--old-password-file",
            e.pw(),
            "--new-password-file",
            &newpw,
            KEY_A,
        ]);
        fails(&r, 1, "no key for given address or file");
    });
    // Only the first ~60 bytes, cut inside the crypto object.
    replace_file(&e.ks, &name, &bytes[..60]);
    assert_eq!(e.list(), Vec::<String>::new());
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, "unknown account")
    });
    // The truncated file holds no account, so the key can be imported again beside it.
    assert_eq!(e.import(KEY_A), ADDR_A);
    assert_eq!(key_files(&e.ks).len(), 2);
    assert_eq!(e.list(), vec![ADDR_A]);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn complete_json_with_damaged_crypto() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    let name = file_name(&path);
    let good = read_json(&path);
    let put = |j: &Value| replace_file(&e.ks, &name, &serde_json::to_vec(j).unwrap());

    // Ciphertext shortened by one byte, MAC as it was: the MAC no longer matches.
    let mut j = good.clone();
    let ct = good["crypto"]["ciphertext"].as_str().unwrap();
    j["crypto"]["ciphertext"] = Value::from(&ct[..62]);
    put(&j);
    assert_eq!(e.list(), vec![ADDR_A]);
    unchanged(&e.ks, || {
        fails(&e.sign(ADDR_A, e.pw(), HELLO_HEX), 1, WRONG_PASS)
    });

    // Ciphertext shortened and the MAC recomputed for it (independent scrypt + Keccak): the
    // MAC matches, and the 31-byte plaintext is not a key (reference 1.6 step 4).
    let dk = derive_independent(&good["crypto"], "1234");
    let short = hex::decode(&ct[..62]).unwrap();
    let mut j = good.clone();
    j["crypto"]["ciphertext"] = Value::from(&ct[..62]);
    j["crypto"]["mac"] = Value::from(hex::encode(keccak(&[&dk[16..32], &short])));
    put(&j);
    unchanged(&e.ks, || {
        fails(
            &e.sign(ADDR_A, e.pw(), HELLO_HEX),
            1,
            "invalid length, need 256 bits",
        )
    });
    // ... and the wrong passphrase still fails on the MAC first.
    unchanged(&e.ks, || {
        fails(
            &e.sign(ADDR_A, &e.pwfile("w", "w"), HELLO_HEX),
            1,
            WRONG_PASS,
        )
    });

    // The crypto object missing: the address is listed, the key cannot be read.
    let mut j = good.clone();
    j.as_object_mut().unwrap().remove("crypto");
    put(&j);
    assert_eq!(e.list(), vec![ADDR_A]);
    unchanged(&e.ks, || {
        fails(
            &e.sign(ADDR_A, e.pw(), HELLO_HEX),
            1,
            "invalid key file: missing crypto",
        )
    });

    // The stored address names the account, not the key (reference 1.6 step 5, 2.3): the
    // file of 0x8191...db1 relabelled 0x8191...db2 lists and signs as 0x8191...db2.
    let mut j = good.clone();
    j["address"] = Value::from(&ADDR_DB2[2..]);
    put(&j);
    assert_eq!(e.list(), vec![ADDR_DB2]);
    let sig = ok(&e.sign(ADDR_DB2, e.pw(), HELLO_HEX));
    assert_eq!(
        sig, SIG_HELLO_A,
        "the stored address names the account; the key signs"
    );

    // Restored, everything works again.
    put(&good);
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

#[test]
fn damaged_crypto_parameters_fail_sign_and_replace_and_change_nothing() {
    let e = env();
    e.import(KEY_A);
    let path = e.only_file();
    let name = file_name(&path);
    let good = read_json(&path);
    let newpw = e.pwfile("newpw", "n\n");
    let edited = |f: &dyn Fn(&mut Value)| {
        let mut j = good.clone();
        f(&mut j);
        j
    };
    let cases: Vec<(&str, Value, &str)> = vec![
        (
            "dklen 16",
            edited(&|j| j["crypto"]["kdfparams"]["dklen"] = Value::from(16)),
            "invalid key file: kdfparams.dklen must be between 32 and 64",
        ),
        (
            "15-byte IV",
            edited(&|j| {
                let iv = j["crypto"]["cipherparams"]["iv"]
                    .as_str()
                    .unwrap()
                    .to_string();
                j["crypto"]["cipherparams"]["iv"] = Value::from(&iv[..30]);
            }),
            "invalid key file: cipherparams.iv must be 16 bytes",
        ),
        (
            "missing salt",
            edited(&|j| {
                j["crypto"]["kdfparams"]
                    .as_object_mut()
                    .unwrap()
                    .remove("salt");
            }),
            "invalid key file: missing kdfparams.salt",
        ),
        (
            // Within the work bound (N * r * p = 2^27), but scrypt's B buffer of
            // 128 * r * p bytes would be 8 GiB: refused before anything is allocated.
            "huge p",
            edited(&|j| {
                j["crypto"]["kdfparams"]["n"] = Value::from(2);
                j["crypto"]["kdfparams"]["p"] = Value::from(8_388_608u64);
            }),
            "invalid key file: scrypt parameters exceed the allowed cost",
        ),
        (
            "version 2",
            edited(&|j| j["version"] = Value::from(2)),
            "undefined version: 2.000000",
        ),
    ];
    for (what, json, msg) in cases {
        replace_file(&e.ks, &name, &serde_json::to_vec(&json).unwrap());
        // The index reads only the address: the account is still listed.
        assert_eq!(e.list(), vec![ADDR_A], "{what}");
        unchanged(&e.ks, || {
            // A deadline, so that a file that makes scrypt run away fails here, not the CI.
            let sign = [
                "sign",
                "--address",
                ADDR_A,
                "--password-file",
                e.pw(),
                HELLO_HEX,
            ];
            let r = keytool_with_deadline(&e.ks, &sign, 60);
            assert_eq!(r.stderr, format!("error: {msg}\n"), "sign, {what}: {r:?}");
            fails(&r, 1, msg);
            let replace = [
                "replace-raw",
                "--light",
                "--old-password-file",
                e.pw(),
                "--new-password-file",
                &newpw,
                KEY_A,
            ];
            let r = keytool_with_deadline(&e.ks, &replace, 60);
            assert_eq!(
                r.stderr,
                format!("error: {msg}\n"),
                "replace, {what}: {r:?}"
            );
            fails(&r, 1, msg);
        });
    }
    replace_file(&e.ks, &name, &serde_json::to_vec(&good).unwrap());
    assert_eq!(ok(&e.sign(ADDR_A, e.pw(), HELLO_HEX)), SIG_HELLO_A);
}

// ---------------------------------------------------------------------------------------------
// Passphrase sources and other failures

#[test]
fn missing_password_file_and_no_terminal() {
    let e = env();
    e.import(KEY_A);
    let missing = e.root.join("does-not-exist");
    let m = missing.to_str().unwrap();
    let no_file = format!("cannot read password file {m}: No such file or directory (os error 2)");
    let no_tty =
        "a passphrase is needed: give --password-file FILE, or run on a terminal to be prompted";
    unchanged(&e.ks, || {
        fails(
            &e.run(&["new", "--light", "--password-file", m]),
            2,
            &no_file,
        );
        fails(&e.run(&["new", "--light"]), 2, no_tty);
        fails(
            &e.run(&["import-raw", "--light", "--password-file", m, KEY_F]),
            2,
            &no_file,
        );
        fails(&e.run(&["import-raw", "--light", KEY_F]), 2, no_tty);
        // Key data from stdin leaves no terminal for the passphrase either.
        fails(
            &keytool_stdin(&e.ks, &["import-raw", "--light", "-"], Some(KEY_F)),
            2,
            no_tty,
        );
        fails(&e.sign(ADDR_A, m, HELLO_HEX), 2, &no_file);
        // A directory as password file.
        let d = e.root.to_str().unwrap();
        fails(
            &e.sign(ADDR_A, d, HELLO_HEX),
            2,
            &format!("cannot read password file {d}: Is a directory (os error 21)"),
        );
    });
    // `new` with no passphrase does not create the keystore directory.
    let e2 = env();
    fails(&e2.run(&["new", "--light"]), 2, no_tty);
    assert!(!e2.ks.exists());
}

#[test]
fn password_file_that_is_not_utf8() {
    let e = env();
    e.import(KEY_A);
    let p = e.root.join("latin1");
    fs::write(&p, b"p\xe4ss\n").unwrap();
    unchanged(&e.ks, || {
        fails(
            &e.sign(ADDR_A, p.to_str().unwrap(), HELLO_HEX),
            2,
            &format!("password file {} is not valid UTF-8", p.display()),
        );
    });
}

#[test]
fn keystore_path_that_is_a_file() {
    let e = env();
    fs::write(&e.ks, "not a directory").unwrap();
    assert_eq!(e.run(&["list"]).stdout, "");
    let r = e.run(&["import-raw", "--light", "--password-file", e.pw(), KEY_A]);
    fails(&r, 1, &format!("{}: not a directory", e.ks.display()));
    assert_eq!(fs::read(&e.ks).unwrap(), b"not a directory");
}

#[test]
fn usage_errors_exit_2() {
    let e = env();
    for args in [
        vec![],
        vec!["no-such-command"],
        vec!["sign", HELLO_HEX],
        vec!["sign", "--address", ADDR_A],
        vec!["recover", HELLO_HEX],
        vec!["import-raw"],
        vec!["list", "--bogus"],
    ] {
        let r = e.run(&args);
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(r.stderr.contains("Usage: chain-keytool"), "{args:?}: {r:?}");
        assert_eq!(r.stdout, "", "{args:?}");
    }
    assert!(!e.ks.exists());
}

#[test]
fn empty_keystore_or_datadir_is_a_usage_error() {
    let e = env();
    for args in [
        vec!["--keystore", "", "list"],
        vec!["list", "--keystore", ""],
        vec!["--keystore=", "list"],
        vec!["--datadir", "", "list"],
        vec![
            "--keystore",
            "",
            "import-raw",
            "--light",
            "--password-file",
            e.pw(),
            KEY_A,
        ],
    ] {
        let r: Run = Command::new(keytool_bin())
            .args(&args)
            .current_dir(&e.root)
            .stdin(Stdio::null())
            .output()
            .unwrap()
            .into();
        assert_eq!(r.code, 2, "{args:?}: {r:?}");
        assert!(
            r.stderr.contains("a value is required for '--"),
            "{args:?}: {r:?}"
        );
        assert_eq!(r.stdout, "", "{args:?}");
    }
    assert_eq!(
        fs::read_dir(&e.root).unwrap().count(),
        1,
        "only the pw file"
    );
}

// ---------------------------------------------------------------------------------------------
// --help

#[test]
fn help_on_every_subcommand() {
    let e = env();
    let cases: [(&str, &[&str]); 6] = [
        (
            "new",
            &["--password-file", "--light", "--keystore", "--datadir"],
        ),
        (
            "import-raw",
            &["--password-file", "--light", "KEYDATA", "--keystore"],
        ),
        (
            "replace-raw",
            &[
                "--old-password-file",
                "--new-password-file",
                "--light",
                "KEYDATA",
            ],
        ),
        ("list", &["--json", "--keystore"]),
        (
            "sign",
            &["--address", "--password-file", "--text", "MESSAGE"],
        ),
        ("recover", &["--text", "MESSAGE", "SIGNATURE"]),
    ];
    for (cmd, words) in cases {
        for args in [vec![cmd, "--help"], vec!["help", cmd]] {
            let r = e.run(&args);
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{args:?}");
            assert!(
                r.stdout.contains(&format!("Usage: chain-keytool {cmd}")),
                "{args:?}: {}",
                r.stdout
            );
            for w in words {
                assert!(
                    r.stdout.contains(w),
                    "{args:?} must mention {w}: {}",
                    r.stdout
                );
            }
        }
        let r = e.run(&[cmd, "-h"]);
        assert_eq!(r.code, 0, "{cmd} -h");
    }
    let r = e.run(&["--help"]);
    assert_eq!(r.code, 0);
    for cmd in [
        "new",
        "import-raw",
        "replace-raw",
        "list",
        "sign",
        "recover",
        "--keystore",
        "--datadir",
        "Exit codes",
    ] {
        assert!(
            r.stdout.contains(cmd),
            "top-level help must mention {cmd}: {}",
            r.stdout
        );
    }
    let r = e.run(&["--version"]);
    assert_eq!(
        (r.code, r.stdout),
        (0, format!("chain-keytool {}\n", env!("CARGO_PKG_VERSION")))
    );
    assert!(!e.ks.exists());
}
