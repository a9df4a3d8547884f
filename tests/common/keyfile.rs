//! Version-3 key files read with an independent stack (the `scrypt`, `sha3`, `aes`/`ctr` and
//! `k256` crates directly, none of the crate's keystore code), for tests that check what a
//! binary wrote.

use serde_json::Value;

/// scrypt-derived key of a v3 crypto object, with the `scrypt` crate directly.
pub fn derive_independent(c: &Value, pw: &str) -> [u8; 32] {
    assert_eq!(c["kdf"], "scrypt");
    let p = &c["kdfparams"];
    let n = p["n"].as_u64().unwrap();
    assert!(n.is_power_of_two());
    assert_eq!(p["dklen"], 32);
    let salt = hex::decode(p["salt"].as_str().unwrap()).unwrap();
    let params = scrypt::Params::new(
        n.trailing_zeros() as u8,
        p["r"].as_u64().unwrap() as u32,
        p["p"].as_u64().unwrap() as u32,
        32,
    )
    .unwrap();
    let mut dk = [0u8; 32];
    scrypt::scrypt(pw.as_bytes(), &salt, &params, &mut dk).unwrap();
    dk
}

/// Keccak-256 of the concatenated `parts`.
pub fn keccak(parts: &[&[u8]]) -> [u8; 32] {
    use sha3::Digest;
    let mut h = sha3::Keccak256::new();
    for p in parts {
        h.update(p);
    }
    h.finalize().into()
}

/// Decrypts a version-3 key file with an independent scrypt / Keccak / AES-128-CTR stack,
/// checking the MAC; returns the plaintext bytes.
pub fn decrypt_independent(file: &Value, pw: &str) -> Vec<u8> {
    use ctr::cipher::{KeyIvInit, StreamCipher};
    let c = &file["crypto"];
    assert_eq!(c["cipher"], "aes-128-ctr");
    let dk = derive_independent(c, pw);
    let ct = hex::decode(c["ciphertext"].as_str().unwrap()).unwrap();
    let mac = keccak(&[&dk[16..32], &ct]);
    assert_eq!(hex::encode(mac), c["mac"].as_str().unwrap(), "MAC");
    let iv = hex::decode(c["cipherparams"]["iv"].as_str().unwrap()).unwrap();
    assert_eq!(iv.len(), 16);
    let mut buf = ct;
    let mut cipher = ctr::Ctr128BE::<aes::Aes128>::new(dk[..16].into(), iv[..].into());
    cipher.apply_keystream(&mut buf);
    buf
}

/// The address of a private key, `0x` + 40 hex digits, by `k256` and Keccak.
pub fn address_independent(key: &[u8]) -> String {
    let sk = k256::ecdsa::SigningKey::from_slice(key).unwrap();
    let point = sk.verifying_key().to_encoded_point(false);
    let h = keccak(&[&point.as_bytes()[1..]]);
    format!("0x{}", hex::encode(&h[12..]))
}
