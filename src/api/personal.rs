//! `personal`: keystore accounts, unlocking, and signing with key files. Also `chain_sign`
//! and `chain_accounts`, which share the account look-up.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use serde_json::{json, Value};

use super::{hex0x, register};
use crate::crypto::{self, Address};
use crate::keystore::{self, keydata, unlock::Unlocked, Error as KsError, Keystore};
use crate::rpc::{Call, HexBytes, Params, Registry, RpcError, Transport};

/// How stale `chain_sign`'s look at the keystore directory may be: a key file removed by
/// another process is noticed within this. Looking on every call (a directory `stat`, which
/// threads on several cores contend for) cost a tenth of `chain_sign`'s throughput.
pub const KEYSTORE_RECHECK: Duration = Duration::from_secs(1);

/// Default unlock duration, seconds.
pub const DEFAULT_UNLOCK_SECS: u64 = 300;
/// Longest unlock, seconds: the largest whole number of seconds whose nanoseconds fit in an
/// i64 (the reference's limit); more is `unlock duration too large`.
pub const MAX_UNLOCK_SECS: u64 = (i64::MAX as u64) / 1_000_000_000;

/// The `personal` namespace.
pub struct PersonalApi {
    keystore: Arc<Keystore>,
    unlocked: Arc<Unlocked>,
    /// `--allow-insecure-unlock`: permit unlocking through a non-loopback HTTP/WS endpoint.
    allow_insecure_unlock: bool,
}

#[derive(Serialize)]
struct WalletJson {
    url: String,
    status: &'static str,
    accounts: [AccountJson; 1],
}

#[derive(Serialize)]
struct AccountJson {
    address: String,
    url: String,
}

/// A parsed derivation path error, with the reference's messages.
pub fn parse_derivation_path(path: &str) -> Result<Vec<u32>, String> {
    let mut components: Vec<&str> = path.split('/').collect();
    if components[0].trim().is_empty() {
        return Err("ambiguous path: use 'm/' prefix for absolute paths, or no leading '/' for relative ones".into());
    }
    let mut out = Vec::new();
    if components[0].trim() == "m" {
        components.remove(0);
    } else {
        out.extend_from_slice(&[0x8000_002c, 0x8000_2019, 0x8000_0000, 0]);
    }
    if components.is_empty() {
        return Err("empty derivation path".into());
    }
    for c in components {
        let mut c = c.trim();
        let mut base_value: u64 = 0;
        if let Some(rest) = c.strip_suffix('\'') {
            base_value = 0x8000_0000;
            c = rest.trim();
        }
        let v = parse_big_int(c).ok_or_else(|| format!("invalid component: {c}"))?;
        let max = u32::MAX as i128 - base_value as i128;
        if v < 0 || v > max {
            return Err(if base_value == 0 {
                format!("component {v} out of allowed range [0, {max}]")
            } else {
                format!("component {v} out of allowed hardened range [0, {max}]")
            });
        }
        out.push((base_value as i128 + v) as u32);
    }
    Ok(out)
}

/// An integer with an optional sign and base prefix (`0x`, `0b`, `0o`, or a leading `0` for
/// octal), as Go's big.Int SetString with base 0 reads it. Saturates far beyond u32.
fn parse_big_int(s: &str) -> Option<i128> {
    let (neg, s) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = s.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d.to_string())
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d.to_string())
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, lower[1..].to_string())
    } else {
        (10, lower.clone())
    };
    let digits = if radix != 10 {
        digits.replace('_', "")
    } else {
        digits
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let mut v: i128 = 0;
    for c in digits.chars() {
        v = v
            .saturating_mul(radix as i128)
            .saturating_add(c.to_digit(radix)? as i128);
    }
    Some(if neg { -v } else { v })
}

impl PersonalApi {
    pub fn new(
        keystore: Arc<Keystore>,
        unlocked: Arc<Unlocked>,
        allow_insecure_unlock: bool,
    ) -> PersonalApi {
        PersonalApi {
            keystore,
            unlocked,
            allow_insecure_unlock,
        }
    }

    /// Registers the `personal` methods and `chain_sign`, `chain_accounts`.
    pub fn register(self: &Arc<Self>, r: &mut Registry) {
        let a = self.clone();
        register(r, "personal_newAccount", move |_, p| a.new_account(p));
        let a = self.clone();
        register(r, "personal_importRawKey", move |_, p| a.import_raw_key(p));
        let a = self.clone();
        register(r, "personal_replaceRawKey", move |_, p| {
            a.replace_raw_key(p)
        });
        let a = self.clone();
        register(
            r,
            "personal_listAccounts",
            move |_, _| Ok(a.list_accounts()),
        );
        let a = self.clone();
        register(r, "chain_accounts", move |_, _| Ok(a.list_accounts()));
        let a = self.clone();
        register(r, "personal_listWallets", move |_, _| Ok(a.list_wallets()));
        let a = self.clone();
        register(r, "personal_openWallet", move |_, p| a.open_wallet(p));
        let a = self.clone();
        register(r, "personal_deriveAccount", move |_, p| a.derive_account(p));
        let a = self.clone();
        register(r, "personal_lockAccount", move |_, p| a.lock_account(p));
        let a = self.clone();
        register(r, "personal_unlockAccount", move |c, p| {
            a.unlock_account(c, p)
        });
        let a = self.clone();
        register(r, "personal_sign", move |_, p| a.sign(p));
        register(r, "personal_ecRecover", |_, p| ec_recover(p));
        let a = self.clone();
        register(r, "chain_sign", move |_, p| a.chain_sign(p));
    }

    /// `personal_newAccount(passphrase)`: the new account's address.
    fn new_account(&self, p: &Params) -> Result<Value, RpcError> {
        let pass = zeroize::Zeroizing::new(p.required::<String>(0)?);
        let acct = self.keystore.new_account(&pass)?;
        Ok(json!(acct.address.to_string()))
    }

    /// `personal_importRawKey(keydata, passphrase)`: the imported address.
    fn import_raw_key(&self, p: &Params) -> Result<Value, RpcError> {
        let raw = zeroize::Zeroizing::new(p.required::<String>(0)?);
        let pass = zeroize::Zeroizing::new(p.required::<String>(1)?);
        let kd = keydata::parse(&raw)?;
        let acct = self.keystore.import(&kd, &pass)?;
        Ok(json!(acct.address.to_string()))
    }

    /// `personal_replaceRawKey(keydata, old, new)`: the address; the account is locked after
    /// a successful replace, and nothing changes when it fails.
    fn replace_raw_key(&self, p: &Params) -> Result<Value, RpcError> {
        let raw = zeroize::Zeroizing::new(p.required::<String>(0)?);
        let old = zeroize::Zeroizing::new(p.required::<String>(1)?);
        let new = zeroize::Zeroizing::new(p.required::<String>(2)?);
        let kd = keydata::parse(&raw)?;
        let acct = self.keystore.replace(&kd, &old, &new)?;
        self.unlocked.lock(acct.address);
        Ok(json!(acct.address.to_string()))
    }

    fn list_accounts(&self) -> Value {
        let addresses = self.keystore.addresses();
        Value::Array(
            addresses
                .iter()
                .map(|a| Value::String(a.to_string()))
                .collect(),
        )
    }

    fn list_wallets(&self) -> Value {
        let unlocked = self.unlocked.unlocked_addresses();
        let wallets: Vec<WalletJson> = self
            .keystore
            .accounts()
            .into_iter()
            .map(|a| {
                let url = a.url();
                WalletJson {
                    status: if unlocked.contains(&a.address) {
                        "Unlocked"
                    } else {
                        "Locked"
                    },
                    accounts: [AccountJson {
                        address: a.address.to_string(),
                        url: url.clone(),
                    }],
                    url,
                }
            })
            .collect();
        serde_json::to_value(wallets).expect("wallets serialize")
    }

    /// Finds the wallet of `url`: `protocol scheme missing` or `unknown wallet`.
    fn wallet(&self, url: &str) -> Result<(), RpcError> {
        match url.split_once("://") {
            Some((scheme, rest)) if !scheme.is_empty() && !rest.contains("://") => {}
            _ => return Err(RpcError::server("protocol scheme missing")),
        }
        if self.keystore.accounts().iter().any(|a| a.url() == url) {
            Ok(())
        } else {
            Err(RpcError::server("unknown wallet"))
        }
    }

    /// `personal_openWallet(url, passphrase?)`: `null` for a keystore wallet (nothing to open).
    fn open_wallet(&self, p: &Params) -> Result<Value, RpcError> {
        let url: String = p.required(0)?;
        let _pass: Option<zeroize::Zeroizing<String>> =
            p.optional::<String>(1)?.map(zeroize::Zeroizing::new);
        self.wallet(&url)?;
        Ok(Value::Null)
    }

    /// `personal_deriveAccount(url, path, pin?)`: keystore wallets cannot derive:
    /// `not supported`, after the wallet and path checks.
    fn derive_account(&self, p: &Params) -> Result<Value, RpcError> {
        let url: String = p.required(0)?;
        let path: String = p.required(1)?;
        let _pin: Option<bool> = p.optional(2)?;
        self.wallet(&url)?;
        parse_derivation_path(&path).map_err(RpcError::server)?;
        Err(RpcError::server("not supported"))
    }

    /// `personal_lockAccount(address)`: true when the keystore holds the account (now locked).
    fn lock_account(&self, p: &Params) -> Result<Value, RpcError> {
        let address: Address = p.required(0)?;
        self.unlocked.lock(address);
        Ok(json!(self.keystore.contains(address)))
    }

    /// `personal_unlockAccount(address, passphrase, duration?)`: true, or an error.
    ///
    /// A duration above [`MAX_UNLOCK_SECS`] is `unlock duration too large`, checked before
    /// the key file is decrypted. When the account is locked while its key is being
    /// decrypted (`personal_lockAccount`, `personal_replaceRawKey`), the unlock counts as
    /// having happened just before that lock: the answer is `true` and the account stays
    /// locked, so a key read from a since-replaced file is never kept.
    fn unlock_account(&self, call: &Call, p: &Params) -> Result<Value, RpcError> {
        if call.transport != Transport::Ipc && call.public_listener && !self.allow_insecure_unlock {
            return Err(RpcError::server(
                "account unlock with HTTP access is forbidden",
            ));
        }
        let address: Address = p.required(0)?;
        let pass = zeroize::Zeroizing::new(p.required::<String>(1)?);
        let secs: u64 = p.optional(2)?.unwrap_or(DEFAULT_UNLOCK_SECS);
        if secs > MAX_UNLOCK_SECS {
            return Err(RpcError::server("unlock duration too large"));
        }
        let pending = self.unlocked.begin(address);
        let key = self.keystore.load_key(address, &pass)?;
        let duration = (secs > 0).then(|| Duration::from_secs(secs));
        // A duration too far away for the clock is "until shutdown".
        let duration = duration.filter(|d| std::time::Instant::now().checked_add(*d).is_some());
        pending.finish(key, duration);
        Ok(Value::Bool(true))
    }

    /// `personal_sign(message, account, password)`: 65-byte signature, v = 27/28.
    fn sign(&self, p: &Params) -> Result<Value, RpcError> {
        let message: HexBytes = p.required(0)?;
        let address: Address = p.required(1)?;
        let pass = zeroize::Zeroizing::new(p.required::<String>(2)?);
        // One look at the index: the account's file, or `unknown account`.
        let path = self.keystore.find(address).map_err(|e| match e {
            KsError::NoKey => KsError::UnknownAccount,
            other => other,
        })?;
        let key = keystore::load_key_file(&path, address, &pass)?;
        Ok(hex0x(&crypto::sign_message(&key, &message.0)))
    }

    /// `chain_sign(address, message)`: signs with an unlocked key. The account must still be
    /// in the keystore (`unknown account` once its key file is gone, even while its key is
    /// unlocked; noticed within [`KEYSTORE_RECHECK`]), then unlocked (`authentication needed:
    /// password or unlock`).
    fn chain_sign(&self, p: &Params) -> Result<Value, RpcError> {
        let address: Address = p.required(0)?;
        let message: HexBytes = p.required(1)?;
        if !self.keystore.contains_within(address, KEYSTORE_RECHECK) {
            return Err(KsError::UnknownAccount.into());
        }
        match self.unlocked.key(address) {
            Some(key) => Ok(hex0x(&crypto::sign_message(&key, &message.0))),
            None => Err(RpcError::server(
                "authentication needed: password or unlock",
            )),
        }
    }
}

/// `personal_ecRecover(message, signature)`: the signer's address.
fn ec_recover(p: &Params) -> Result<Value, RpcError> {
    let message: HexBytes = p.required(0)?;
    let sig: HexBytes = p.required(1)?;
    Ok(json!(
        crypto::recover_message_signer(&message.0, &sig.0)?.to_string()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unlock_limit_is_the_largest_second_count_in_i64_nanoseconds() {
        assert_eq!(MAX_UNLOCK_SECS, 9_223_372_036);
        assert!(i64::try_from(u128::from(MAX_UNLOCK_SECS) * 1_000_000_000).is_ok());
        assert!(i64::try_from(u128::from(MAX_UNLOCK_SECS + 1) * 1_000_000_000).is_err());
    }

    #[test]
    fn derivation_paths_follow_the_reference_rules() {
        assert_eq!(
            parse_derivation_path("m/44'/60'/0'/0/1").unwrap(),
            vec![0x8000_002c, 0x8000_003c, 0x8000_0000, 0, 1]
        );
        assert_eq!(parse_derivation_path("0x10").unwrap().last(), Some(&16));
        assert_eq!(parse_derivation_path(" 010 ").unwrap().last(), Some(&8));
        assert_eq!(parse_derivation_path("").unwrap_err(), "ambiguous path: use 'm/' prefix for absolute paths, or no leading '/' for relative ones");
        assert_eq!(parse_derivation_path("/1").unwrap_err(), "ambiguous path: use 'm/' prefix for absolute paths, or no leading '/' for relative ones");
        assert_eq!(
            parse_derivation_path("m").unwrap_err(),
            "empty derivation path"
        );
        assert_eq!(
            parse_derivation_path("m/x").unwrap_err(),
            "invalid component: x"
        );
        assert_eq!(
            parse_derivation_path("m/4294967296").unwrap_err(),
            "component 4294967296 out of allowed range [0, 4294967295]"
        );
        assert_eq!(
            parse_derivation_path("m/2147483648'").unwrap_err(),
            "component 2147483648 out of allowed hardened range [0, 2147483647]"
        );
        assert_eq!(
            parse_derivation_path("m/-1").unwrap_err(),
            "component -1 out of allowed range [0, 4294967295]"
        );
    }
}
