//! Key data for import and replace: the plain form (64 hex digits) and the wallet-key form
//! (`<64 hex>0x00<0x + 40 hex address>`), chosen by length alone as the reference does, and
//! parsed strictly (DECISIONS.md): every part is validated.

use crate::crypto::{Address, SecretKey};

use super::Error;

/// Length of the wallet-key form: 64 + 2 + 2 + 2 + 40.
pub const WALLET_KEY_LEN: usize = 110;

/// Parsed key data: the key, and the account address it is stored under (the key's own
/// address for the plain form, the given address for the wallet-key form).
#[derive(Debug)]
pub struct KeyData {
    pub key: SecretKey,
    pub address: Address,
}

fn parse_plain(s: &str) -> Result<SecretKey, Error> {
    if !s.len().is_multiple_of(2) || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidHex);
    }
    let bytes = zeroize::Zeroizing::new(hex::decode(s).map_err(|_| Error::InvalidHex)?);
    Ok(SecretKey::from_slice(&bytes)?)
}

/// Parses key data. Errors: `invalid hex string`, `invalid length, need 256 bits`,
/// `invalid private key, >=N`, `invalid private key, zero or negative`,
/// `Chain wallet key type must be 00.`, and for a malformed wallet key its separators or
/// address (`invalid wallet key: ...`).
pub fn parse(s: &str) -> Result<KeyData, Error> {
    if s.len() != WALLET_KEY_LEN || !s.is_ascii() {
        let key = parse_plain(s)?;
        let address = key.address();
        return Ok(KeyData { key, address });
    }
    let (key_hex, rest) = s.split_at(64);
    if &rest[0..2] != "0x" {
        return Err(Error::InvalidWalletKey(
            "expected \"0x\" before the key type".into(),
        ));
    }
    if &rest[2..4] != "00" {
        return Err(Error::WalletKeyType);
    }
    let key = parse_plain(key_hex)?;
    if &rest[4..6] != "0x" {
        return Err(Error::InvalidWalletKey(
            "expected \"0x\" before the address".into(),
        ));
    }
    let addr_hex = &rest[6..];
    if !addr_hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::InvalidWalletKey(
            "address is not 40 hex digits".into(),
        ));
    }
    let address = Address::parse_lenient(addr_hex)
        .ok_or_else(|| Error::InvalidWalletKey("address is not 40 hex digits".into()))?;
    if address.is_zero() {
        return Err(Error::InvalidWalletKey(
            "address is the zero address".into(),
        ));
    }
    Ok(KeyData { key, address })
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "f8cc7c3813ad23817466b1802ee805ee417001fcce9376ab8728c92dd8ea0a6b";

    fn err(s: &str) -> String {
        parse(s).unwrap_err().to_string()
    }

    // Cases from personal-and-keystore.md 2.4.
    #[test]
    fn reference_cases() {
        let k = parse("aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e").unwrap();
        assert_eq!(
            k.address.to_string(),
            "0x819104a190255e0cedbdd9d5f59a557633d79db1"
        );
        let w = parse(&format!(
            "{KEY}0x000x819104a190255e0cedbdd9d5f59a557633d79db2"
        ))
        .unwrap();
        assert_eq!(
            w.address.to_string(),
            "0x819104a190255e0cedbdd9d5f59a557633d79db2"
        );
        assert_eq!(
            w.key.address().to_string(),
            "0x90b3e9a3770481345a7f17f22f16d020bccfd33e"
        );
        assert_eq!(
            err(&format!(
                "{KEY}0x010x819104a190255e0cedbdd9d5f59a557633d79db1"
            )),
            "Chain wallet key type must be 00."
        );
        assert_eq!(
            err(&format!(
                "{KEY}0x000x819104a190255e0cedbdd9d5f59a557633d79db"
            )),
            "invalid hex string"
        );
        assert_eq!(err(&KEY[..63]), "invalid hex string");
    }

    #[test]
    fn strict_wallet_key_parts() {
        assert_eq!(
            err(&format!(
                "{KEY}0y000x819104a190255e0cedbdd9d5f59a557633d79db1"
            )),
            "invalid wallet key: expected \"0x\" before the key type"
        );
        assert_eq!(
            err(&format!(
                "{KEY}0x00xx819104a190255e0cedbdd9d5f59a557633d79db1"
            )),
            "invalid wallet key: expected \"0x\" before the address"
        );
        assert_eq!(
            err(&format!(
                "{KEY}0x000x819104a190255e0cedbdd9d5f59a557633d79dbz"
            )),
            "invalid wallet key: address is not 40 hex digits"
        );
        assert_eq!(
            err(&format!("{KEY}0x000x{}", "0".repeat(40))),
            "invalid wallet key: address is the zero address"
        );
        assert_eq!(
            err(&format!(
                "{}0x000x819104a190255e0cedbdd9d5f59a557633d79db1",
                "0".repeat(64)
            )),
            "invalid private key, zero or negative"
        );
    }

    #[test]
    fn plain_form_errors() {
        assert_eq!(err(""), "invalid length, need 256 bits");
        assert_eq!(err("00"), "invalid length, need 256 bits");
        assert_eq!(err(&format!("0x{}", &KEY[..62])), "invalid hex string");
        assert_eq!(err(&format!(" {KEY}")), "invalid hex string");
        assert_eq!(err(&"f".repeat(64)), "invalid private key, >=N");
        assert_eq!(
            err(&"0".repeat(64)),
            "invalid private key, zero or negative"
        );
    }
}
