//! Key file format: writing version 3, reading versions 1, 3 and 4 (the `keyring` layout),
//! with scrypt or pbkdf2, AES-128-CTR (v3/v4) or AES-128-CBC (v1), and the Keccak MAC.

use aes::cipher::{BlockDecryptMut, KeyIvInit, StreamCipher};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::crypto::{keccak256, keccak256_concat, Address, SecretKey};

use super::Error;

/// scrypt cost parameters used when writing a key file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScryptParams {
    pub log_n: u8,
    pub r: u32,
    pub p: u32,
}

impl ScryptParams {
    /// N = 2^18, r = 8, p = 1: about 256 MiB and a second per derivation.
    pub const STANDARD: ScryptParams = ScryptParams {
        log_n: 18,
        r: 8,
        p: 1,
    };
    /// N = 2^12, r = 8, p = 6: about 4 MiB (`--light`, the reference's `--lightkdf`).
    pub const LIGHT: ScryptParams = ScryptParams {
        log_n: 12,
        r: 8,
        p: 6,
    };

    /// N = 2, r = 8, p = 1: the developer account of `--dev`, whose passphrase is empty, so
    /// that no KDF work can protect it; microseconds where `LIGHT` takes about 60 ms. N = 2
    /// is the least the v3 format allows (scrypt needs a power of two above 1: the
    /// reference's golang.org/x/crypto/scrypt, OpenSSL's and our reader refuse N = 1); r and
    /// p are the standard ones.
    pub const DEV: ScryptParams = ScryptParams {
        log_n: 1,
        r: 8,
        p: 1,
    };

    pub fn n(&self) -> u64 {
        1u64 << self.log_n
    }
}

/// Upper bounds on what a key file may ask of the KDF, so that a hostile file cannot make us
/// allocate or compute without limit (the standard parameters sit far below both).
const MAX_SCRYPT_MEMORY: u64 = 1 << 31; // 2 GiB: 128 * r * (N + p), see `scrypt_memory`
const MAX_SCRYPT_WORK: u64 = 1 << 27; // N * r * p; standard is 2^21
const MAX_PBKDF2_ROUNDS: u64 = 1 << 24;

#[derive(Serialize)]
struct CipherParamsOut<'a> {
    iv: &'a str,
}

#[derive(Serialize)]
struct KdfParamsOut<'a> {
    dklen: u32,
    n: u64,
    p: u32,
    r: u32,
    salt: &'a str,
}

#[derive(Serialize)]
struct CryptoOut<'a> {
    cipher: &'a str,
    ciphertext: &'a str,
    cipherparams: CipherParamsOut<'a>,
    kdf: &'a str,
    kdfparams: KdfParamsOut<'a>,
    mac: &'a str,
}

#[derive(Serialize)]
struct KeyFileV3Out<'a> {
    address: &'a str,
    crypto: CryptoOut<'a>,
    id: &'a str,
    version: u32,
}

fn random_bytes<const N: usize>() -> [u8; N] {
    let mut b = [0u8; N];
    getrandom::getrandom(&mut b).expect("operating system random source failed");
    b
}

/// A random version-4 UUID, lower case, 8-4-4-4-12.
pub fn new_uuid() -> String {
    let mut b: [u8; 16] = random_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = hex::encode(b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn scrypt_derive(
    pass: &[u8],
    salt: &[u8],
    log_n: u8,
    r: u32,
    p: u32,
    dklen: usize,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    let params = scrypt::Params::new(log_n, r, p, dklen)
        .map_err(|_| Error::InvalidKeyFile("invalid scrypt parameters".into()))?;
    let mut dk = Zeroizing::new(vec![0u8; dklen]);
    scrypt::scrypt(pass, salt, &params, &mut dk)
        .map_err(|_| Error::InvalidKeyFile("invalid scrypt parameters".into()))?;
    Ok(dk)
}

/// Derives the scrypt key for `passphrase` with `params` and `salt` (dkLen 32).
pub fn derive_scrypt(passphrase: &str, salt: &[u8], params: ScryptParams) -> Zeroizing<Vec<u8>> {
    let dk = scrypt_derive(
        passphrase.as_bytes(),
        salt,
        params.log_n,
        params.r,
        params.p,
        32,
    )
    .expect("built-in scrypt parameters are valid");
    crate::wipe_alloc::wipe_stack();
    dk
}

type Aes128Ctr = ctr::Ctr128BE<aes::Aes128>;

fn aes_ctr(key16: &[u8], iv: &[u8; 16], data: &mut [u8]) {
    let mut c = Aes128Ctr::new(key16.into(), iv.into());
    c.apply_keystream(data);
}

/// The result of encrypting a key: the exact file bytes, plus what is needed to check a
/// read-back copy without a second scrypt run.
pub struct Encrypted {
    pub json: Vec<u8>,
    derived: Zeroizing<Vec<u8>>,
}

impl Encrypted {
    /// Checks that `on_disk` is a key file that decrypts, with the derived key used to write it,
    /// to `key` for `address`. This proves the bytes that reached the disk are whole and
    /// correct without paying for scrypt again.
    pub fn verify_copy(
        &self,
        on_disk: &[u8],
        key: &SecretKey,
        address: Address,
    ) -> Result<(), Error> {
        if on_disk != self.json.as_slice() {
            return Err(Error::InvalidKeyFile(
                "written bytes differ from the encrypted key".into(),
            ));
        }
        let parsed = parse(on_disk)?;
        if parsed.address != Some(address) {
            return Err(Error::InvalidKeyFile("written address differs".into()));
        }
        let crypto = parsed.keys.first().ok_or(Error::NoKeyInFile)?;
        let got = crypto.decrypt_with_derived(&self.derived, parsed.version)?;
        if *got.to_bytes() != *key.to_bytes() {
            return Err(Error::InvalidKeyFile("written key differs".into()));
        }
        Ok(())
    }
}

/// Encrypts `key` for `address` under `passphrase` as a version-3 key file (compact JSON,
/// keys in the order the ecosystem's tools write them).
pub fn encrypt(
    key: &SecretKey,
    address: Address,
    passphrase: &str,
    params: ScryptParams,
) -> Encrypted {
    let salt: [u8; 32] = random_bytes();
    let iv: [u8; 16] = random_bytes();
    let dk = derive_scrypt(passphrase, &salt, params);
    let mut ct = key.to_bytes();
    aes_ctr(&dk[..16], &iv, &mut ct[..]);
    let mac = keccak256_concat(&[&dk[16..32], &ct[..]]);
    let (addr_hex, ct_hex, iv_hex, salt_hex, mac_hex) = (
        address.to_hex(),
        hex::encode(&ct[..]),
        hex::encode(iv),
        hex::encode(salt),
        hex::encode(mac),
    );
    let id = new_uuid();
    let file = KeyFileV3Out {
        address: &addr_hex,
        crypto: CryptoOut {
            cipher: "aes-128-ctr",
            ciphertext: &ct_hex,
            cipherparams: CipherParamsOut { iv: &iv_hex },
            kdf: "scrypt",
            kdfparams: KdfParamsOut {
                dklen: 32,
                n: params.n(),
                p: params.p,
                r: params.r,
                salt: &salt_hex,
            },
            mac: &mac_hex,
        },
        id: &id,
        version: 3,
    };
    let json = serde_json::to_vec(&file).expect("serializing a key file cannot fail");
    Encrypted { json, derived: dk }
}

#[derive(Debug, Clone, Deserialize)]
struct CryptoJson {
    cipher: Option<String>,
    ciphertext: Option<String>,
    cipherparams: Option<CipherParamsJson>,
    kdf: Option<String>,
    kdfparams: Option<Value>,
    mac: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct CipherParamsJson {
    iv: Option<String>,
}

/// Which KDF a crypto object names, with its parameters as read from the file.
#[derive(Debug, Clone)]
enum Kdf {
    Scrypt {
        log_n: u8,
        r: u32,
        p: u32,
        dklen: usize,
        salt: Vec<u8>,
    },
    Pbkdf2 {
        c: u32,
        dklen: usize,
        salt: Vec<u8>,
    },
}

/// One encrypted key of a key file, validated in shape but not yet decrypted.
#[derive(Debug, Clone)]
pub struct CryptoObject {
    ciphertext: Vec<u8>,
    iv: Vec<u8>,
    mac: Vec<u8>,
    kdf: Kdf,
}

/// A parsed key file: its version, stored address and its keys (`keyring[0]` first).
#[derive(Debug, Clone)]
pub struct KeyFile {
    pub version: u32,
    pub address: Option<Address>,
    pub keys: Vec<CryptoObject>,
}

/// The bytes scrypt allocates for N, r, p: its V table (128 * r * N) and its B buffer
/// (128 * r * p); the 256 * r of its X and Y buffers are left out. Both large buffers count:
/// a small N with a huge p allocates as much as the converse.
fn scrypt_memory(n: u64, r: u64, p: u64) -> u128 {
    128 * r as u128 * (n as u128 + p as u128)
}

fn bad(msg: impl Into<String>) -> Error {
    Error::InvalidKeyFile(msg.into())
}

fn decode_hex_field(v: Option<&str>, name: &str) -> Result<Vec<u8>, Error> {
    let s = v.ok_or_else(|| bad(format!("missing {name}")))?;
    let s = s.strip_prefix("0x").unwrap_or(s);
    hex::decode(s).map_err(|_| bad(format!("{name} is not hex")))
}

fn uint_param(params: &serde_json::Map<String, Value>, name: &str) -> Result<u64, Error> {
    params
        .get(name)
        .and_then(Value::as_u64)
        .ok_or_else(|| bad(format!("kdfparams.{name} must be a non-negative integer")))
}

impl CryptoObject {
    fn from_json(c: CryptoJson, version: u32) -> Result<CryptoObject, Error> {
        let cipher = c.cipher.unwrap_or_default();
        if version != 1 && cipher != "aes-128-ctr" {
            return Err(Error::CipherNotSupported(cipher));
        }
        let kdf_name = c.kdf.unwrap_or_default();
        let params = match c.kdfparams {
            Some(Value::Object(m)) => m,
            _ => serde_json::Map::new(),
        };
        let kdf = match kdf_name.as_str() {
            "scrypt" => {
                let n = uint_param(&params, "n")?;
                let r = uint_param(&params, "r")?;
                let p = uint_param(&params, "p")?;
                let dklen = uint_param(&params, "dklen")?;
                if n < 2
                    || !n.is_power_of_two()
                    || r == 0
                    || p == 0
                    || r > u32::MAX as u64
                    || p > u32::MAX as u64
                {
                    return Err(bad("invalid scrypt parameters"));
                }
                if scrypt_memory(n, r, p) > MAX_SCRYPT_MEMORY as u128
                    || n as u128 * r as u128 * p as u128 > MAX_SCRYPT_WORK as u128
                {
                    return Err(bad("scrypt parameters exceed the allowed cost"));
                }
                Kdf::Scrypt {
                    log_n: n.trailing_zeros() as u8,
                    r: r as u32,
                    p: p as u32,
                    dklen: dklen as usize,
                    salt: decode_hex_field(
                        params.get("salt").and_then(Value::as_str),
                        "kdfparams.salt",
                    )?,
                }
            }
            "pbkdf2" => {
                let prf = params.get("prf").and_then(Value::as_str).unwrap_or("");
                if prf != "hmac-sha256" {
                    return Err(Error::UnsupportedPrf(prf.to_string()));
                }
                let c = uint_param(&params, "c")?;
                if c == 0 || c > MAX_PBKDF2_ROUNDS {
                    return Err(bad("pbkdf2 iteration count out of range"));
                }
                Kdf::Pbkdf2 {
                    c: c as u32,
                    dklen: uint_param(&params, "dklen")? as usize,
                    salt: decode_hex_field(
                        params.get("salt").and_then(Value::as_str),
                        "kdfparams.salt",
                    )?,
                }
            }
            other => return Err(Error::UnsupportedKdf(other.to_string())),
        };
        let dklen = match &kdf {
            Kdf::Scrypt { dklen, .. } | Kdf::Pbkdf2 { dklen, .. } => *dklen,
        };
        if !(32..=64).contains(&dklen) {
            return Err(bad("kdfparams.dklen must be between 32 and 64"));
        }
        let iv = decode_hex_field(
            c.cipherparams.as_ref().and_then(|p| p.iv.as_deref()),
            "cipherparams.iv",
        )?;
        if iv.len() != 16 {
            return Err(bad("cipherparams.iv must be 16 bytes"));
        }
        Ok(CryptoObject {
            ciphertext: decode_hex_field(c.ciphertext.as_deref(), "ciphertext")?,
            mac: decode_hex_field(c.mac.as_deref(), "mac")?,
            iv,
            kdf,
        })
    }

    fn derive(&self, passphrase: &str) -> Result<Zeroizing<Vec<u8>>, Error> {
        let dk = self.derive_unwiped(passphrase);
        crate::wipe_alloc::wipe_stack();
        dk
    }

    fn derive_unwiped(&self, passphrase: &str) -> Result<Zeroizing<Vec<u8>>, Error> {
        match &self.kdf {
            Kdf::Scrypt {
                log_n,
                r,
                p,
                dklen,
                salt,
            } => scrypt_derive(passphrase.as_bytes(), salt, *log_n, *r, *p, *dklen),
            Kdf::Pbkdf2 { c, dklen, salt } => {
                let mut dk = Zeroizing::new(vec![0u8; *dklen]);
                pbkdf2::pbkdf2_hmac::<sha2::Sha256>(passphrase.as_bytes(), salt, *c, &mut dk);
                Ok(dk)
            }
        }
    }

    /// Decrypts with `passphrase`: derive, check the MAC in constant time, decrypt, range-check.
    pub fn decrypt(&self, passphrase: &str, version: u32) -> Result<SecretKey, Error> {
        let dk = self.derive(passphrase)?;
        self.decrypt_with_derived(&dk, version)
    }

    fn decrypt_with_derived(&self, dk: &[u8], version: u32) -> Result<SecretKey, Error> {
        let mac = keccak256_concat(&[&dk[16..32], &self.ciphertext]);
        if self.mac.len() != 32 || !bool::from(mac.ct_eq(&self.mac[..])) {
            return Err(Error::WrongPassphrase);
        }
        let iv: [u8; 16] = self
            .iv
            .as_slice()
            .try_into()
            .expect("iv length checked at parse");
        let mut plain = Zeroizing::new(self.ciphertext.clone());
        if version == 1 {
            let k = Zeroizing::new(keccak256(&dk[..16]));
            let dec = cbc::Decryptor::<aes::Aes128>::new((&k[..16]).into(), (&iv).into());
            let len = dec
                .decrypt_padded_mut::<aes::cipher::block_padding::Pkcs7>(&mut plain[..])
                .map_err(|_| Error::WrongPassphrase)?
                .len();
            plain.truncate(len);
        } else {
            aes_ctr(&dk[..16], &iv, &mut plain[..]);
        }
        SecretKey::from_slice(&plain).map_err(Error::KeyFileKey)
    }
}

/// Parses a key file of version 1, 3 or 4. Checks shape and parameters; decrypts nothing.
pub fn parse(bytes: &[u8]) -> Result<KeyFile, Error> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| bad(format!("not JSON: {e}")))?;
    let obj = v.as_object().ok_or_else(|| bad("not a JSON object"))?;
    let version = match obj.get("version") {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(3.0) => 3,
            Some(4.0) => 4,
            Some(f) => return Err(Error::UndefinedVersion(format!("{f:.6}"))),
            None => return Err(Error::UndefinedVersion(n.to_string())),
        },
        Some(Value::String(s)) if s == "1" => 1,
        Some(Value::String(s)) => return Err(Error::UndefinedVersion(format!("{s:?}"))),
        _ => return Err(Error::UndefinedVersionType(v.to_string())),
    };
    let address = obj
        .get("address")
        .and_then(Value::as_str)
        .and_then(Address::parse_lenient);
    let crypto_of = |c: &Value| -> Result<CryptoObject, Error> {
        let cj: CryptoJson = serde_json::from_value(c.clone())
            .map_err(|e| bad(format!("malformed crypto object: {e}")))?;
        CryptoObject::from_json(cj, version)
    };
    let keys = match version {
        1 | 3 => {
            let c = obj
                .get("crypto")
                .or_else(|| obj.get("Crypto"))
                .ok_or_else(|| bad("missing crypto"))?;
            vec![crypto_of(c)?]
        }
        _ => match obj.get("keyring") {
            Some(Value::Array(roles)) if roles.iter().all(Value::is_array) => {
                // Role-based layout: only keyring[0] is ever used for signing.
                match roles.first().and_then(Value::as_array) {
                    Some(first) => first.iter().map(crypto_of).collect::<Result<_, _>>()?,
                    None => Vec::new(),
                }
            }
            Some(Value::Array(flat)) => flat.iter().map(crypto_of).collect::<Result<_, _>>()?,
            _ => Vec::new(),
        },
    };
    if keys.is_empty() {
        return Err(Error::NoKeyInFile);
    }
    Ok(KeyFile {
        version,
        address,
        keys,
    })
}

impl KeyFile {
    /// Decrypts the first key of the first role with `passphrase`.
    pub fn decrypt(&self, passphrase: &str) -> Result<SecretKey, Error> {
        self.keys[0].decrypt(passphrase, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(h: &str) -> SecretKey {
        SecretKey::from_slice(&hex::decode(h).unwrap()).unwrap()
    }

    // Vectors from personal-and-keystore.md 1.3 and 1.7 (independently made files).
    #[test]
    fn reads_reference_v3_and_v4_vectors() {
        let v3 = br#"{"address":"45dea0fb0bba44f4fcf290bba71fd57d7117cbb8","crypto":{"cipher":"aes-128-ctr","ciphertext":"b87781948a1befd247bff51ef4063f716cf6c2d3481163e9a8f42e1f9bb74145","cipherparams":{"iv":"dc4926b48a105133d2f16b96833abf1e"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":2,"p":1,"r":8,"salt":"004244bbdc51cadda545b1cfa43cff9ed2ae88e08c61f1479dbb45410722f8f0"},"mac":"39990c1684557447940d4c69e06b1b82b2aceacb43f284df65c956daf3046b85"},"id":"ce541d8d-c79b-40f8-9f8c-20f59616faba","version":3}"#;
        let f = parse(v3).unwrap();
        assert_eq!(
            hex::encode(*f.decrypt("").unwrap().to_bytes()),
            "33ff86a4a29a842eedd42a84f569d945c771857d4ddb639de730a547f08030c3"
        );
        let v4 = br#"{"version":4,"id":"7a0a8557-22a5-4c90-b554-d6f3b13783ea","address":"0x86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2","keyring":[{"ciphertext":"696d0e8e8bd21ff1f82f7c87b6964f0f17f8bfbd52141069b59f084555f277b7","cipherparams":{"iv":"1fd13e0524fa1095c5f80627f1d24cbd"},"cipher":"aes-128-ctr","kdf":"scrypt","kdfparams":{"dklen":32,"salt":"7ee980925cef6a60553cda3e91cb8e3c62733f64579f633d0f86ce050c151e26","n":4096,"r":8,"p":1},"mac":"8684d8dc4bf17318cd46c85dbd9a9ec5d9b290e04d78d4f6b5be9c413ff30ea4"}]}"#;
        let f = parse(v4).unwrap();
        assert_eq!(
            f.address.unwrap().to_hex(),
            "86bce8c859f5f304aa30adb89f2f7b6ee5a0d6e2"
        );
        let k = f.decrypt("password").unwrap();
        assert_eq!(
            hex::encode(*k.to_bytes()),
            "36e0a792553f94a7660e5484cfc8367e7d56a383261175b9abced7416a5d87df"
        );
        assert_eq!(
            f.decrypt("wrong").unwrap_err().to_string(),
            "could not decrypt key with given passphrase"
        );
    }

    #[test]
    fn written_file_round_trips_and_has_v3_shape() {
        let k = key("aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e");
        let enc = encrypt(
            &k,
            k.address(),
            "1234",
            ScryptParams {
                log_n: 4,
                r: 8,
                p: 1,
            },
        );
        let v: Value = serde_json::from_slice(&enc.json).unwrap();
        assert_eq!(v["version"], 3);
        assert_eq!(v["address"], "819104a190255e0cedbdd9d5f59a557633d79db1");
        assert_eq!(v["crypto"]["kdfparams"]["n"], 16);
        let f = parse(&enc.json).unwrap();
        assert_eq!(*f.decrypt("1234").unwrap().to_bytes(), *k.to_bytes());
        enc.verify_copy(&enc.json, &k, k.address()).unwrap();
        let mut torn = enc.json.clone();
        torn.truncate(torn.len() - 5);
        assert!(enc.verify_copy(&torn, &k, k.address()).is_err());
    }

    #[test]
    fn version_errors_use_reference_messages() {
        assert_eq!(
            parse(br#"{"version":2}"#).unwrap_err().to_string(),
            "undefined version: 2.000000"
        );
        assert!(parse(br#"{"address":"00"}"#)
            .unwrap_err()
            .to_string()
            .starts_with("undefined type of version: "));
        assert_eq!(
            parse(br#"{"version":4,"keyring":[]}"#)
                .unwrap_err()
                .to_string(),
            "key file holds no key"
        );
    }

    #[test]
    fn hostile_kdf_parameters_are_refused_before_any_work() {
        let f = br#"{"version":3,"crypto":{"cipher":"aes-128-ctr","ciphertext":"00","cipherparams":{"iv":"00000000000000000000000000000000"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":1073741824,"p":1,"r":8,"salt":"00"},"mac":"00"}}"#;
        assert!(parse(f).unwrap_err().to_string().contains("exceed"));
        // A tiny N with a huge p: little work per block, but scrypt's B buffer (128 * r * p
        // bytes) would be 8 GiB.
        let f = br#"{"version":3,"crypto":{"cipher":"aes-128-ctr","ciphertext":"00","cipherparams":{"iv":"00000000000000000000000000000000"},"kdf":"scrypt","kdfparams":{"dklen":32,"n":2,"p":8388608,"r":8,"salt":"00"},"mac":"00"}}"#;
        assert_eq!(
            parse(f).unwrap_err().to_string(),
            "invalid key file: scrypt parameters exceed the allowed cost"
        );
        // V and B together: 128 * 8 * (2^20 + 2^20) is exactly 2 GiB, one more p is over.
        assert_eq!(
            scrypt_memory(1 << 20, 8, 1 << 20),
            MAX_SCRYPT_MEMORY as u128
        );
        assert!(scrypt_memory(1 << 20, 8, (1 << 20) + 1) > MAX_SCRYPT_MEMORY as u128);
        assert!(scrypt_memory(1 << 21, 8, 1) > MAX_SCRYPT_MEMORY as u128);
        // The standard, light and developer parameters stay far inside both bounds.
        for sp in [
            ScryptParams::STANDARD,
            ScryptParams::LIGHT,
            ScryptParams::DEV,
        ] {
            let (n, r, p) = (sp.n(), sp.r as u64, sp.p as u64);
            assert!(scrypt_memory(n, r, p) <= MAX_SCRYPT_MEMORY as u128 / 4);
            assert!(n * r * p <= MAX_SCRYPT_WORK / 4);
        }
        let f = br#"{"version":3,"crypto":{"cipher":"aes-256-ctr","kdf":"scrypt"}}"#;
        assert_eq!(
            parse(f).unwrap_err().to_string(),
            "Cipher not supported: aes-256-ctr"
        );
        let f = br#"{"version":3,"crypto":{"cipher":"aes-128-ctr","kdf":"argon2"}}"#;
        assert_eq!(parse(f).unwrap_err().to_string(), "Unsupported KDF: argon2");
        let f = br#"{"version":3,"crypto":{"cipher":"aes-128-ctr","kdf":"pbkdf2","kdfparams":{"prf":"hmac-sha1"}}}"#;
        assert_eq!(
            parse(f).unwrap_err().to_string(),
            "Unsupported PBKDF2 PRF: hmac-sha1"
        );
    }
}
