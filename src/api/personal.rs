//! `personal`: keystore accounts, unlocking, and signing with key files.

use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use zeroize::Zeroizing;

use super::error::{AccountError, Result};
use super::method::{opt, p, Method, Namespace, ParamKind as K};
use super::txargs;
use super::HexOut;
use crate::chain::Chain;
use crate::crypto::{self, Address};
use crate::keystore::{self, keydata, unlock::Unlocked, Error as KsError, Keystore};
use crate::method;
use crate::rpc::{Call, HexBytes, Params, Transport};
use crate::types::json::SignedJson;

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
    /// The chain the send methods submit to; `None` on a node without one.
    chain: Option<Arc<Chain>>,
}

/// An element of `personal_listWallets`.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Wallet {
    url: String,
    status: &'static str,
    accounts: [WalletAccount; 1],
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WalletAccount {
    address: Address,
    url: String,
}

impl Namespace for PersonalApi {
    const MODULE: &'static str = "personal";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "personal_deriveAccount",
            [p("url", K::String), p("path", K::String), opt("pin", K::Bool)],
            "Derive an account of a hierarchical wallet",
            "an error: keystore wallets derive nothing",
            Self::derive_account
        ),
        method!(
            "personal_ecRecover",
            [p("message", K::Bytes), p("signature", K::Bytes)],
            "The address that signed a message",
            "string: the address",
            Self::ec_recover
        ),
        method!(
            "personal_importRawKey",
            [p("keydata", K::KeyData), p("passphrase", K::NewPassphrase)],
            "Import a raw private key; returns its address",
            "string: the address",
            Self::import_raw_key
        ),
        method!(
            "personal_listAccounts",
            [],
            "The addresses of the keystore, sorted by key-file URL",
            "array of addresses",
            Self::list_accounts
        ),
        method!(
            "personal_listWallets",
            [],
            "The keystore's wallets with their lock status",
            "array of {url, status, accounts}",
            Self::list_wallets
        ),
        method!(
            "personal_lockAccount",
            [p("address", K::Address)],
            "Drop an unlocked key from memory",
            "true for an account of the keystore, false otherwise",
            Self::lock_account
        ),
        method!(
            "personal_newAccount",
            [p("passphrase", K::NewPassphrase)],
            "Create a new key; returns its address",
            "string: the address",
            Self::new_account
        ),
        method!(
            "personal_openWallet",
            [p("url", K::String), opt("passphrase", K::Passphrase)],
            "Open a wallet (a no-op for keystore wallets)",
            "null",
            Self::open_wallet
        ),
        method!(
            "personal_replaceRawKey",
            [
                p("keydata", K::KeyData),
                p("oldPassphrase", K::Passphrase),
                p("newPassphrase", K::NewPassphrase)
            ],
            "Replace the key of an existing account",
            "string: the address",
            Self::replace_raw_key
        ),
        method!(
            "personal_sendTransaction",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign a legacy transaction with a key file and submit it; its hash",
            "string: the transaction hash",
            Self::send_transaction
        ),
        method!(
            "personal_signTransaction",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign a transaction of any type (typeInt) with a key file without sending it: {raw, tx}",
            "object: raw (0x-hex) and tx",
            Self::sign_transaction
        ),
        method!(
            "personal_sendTransactionAsFeePayer",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign a fee-delegated transaction (typeInt 9, 10, 17, 18, 33, 34, 41, 42, 49, 50, 57, 58, 73, 74) as its feePayer with that account's key file, beside the sender's signatures, and submit it; typeInt, nonce, gas, gasPrice and signatures must be given; its hash",
            "string: the transaction hash",
            Self::send_transaction_as_fee_payer
        ),
        method!(
            "personal_signTransactionAsFeePayer",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign a fee-delegated transaction as its feePayer with that account's key file, beside the sender's signatures if given, without sending it (nonce, gas and gasPrice filled in when left out): {raw, tx}",
            "object: raw (0x-hex) and tx",
            Self::sign_transaction_as_fee_payer
        ),
        method!(
            "personal_sendValueTransfer",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign a value transfer with a key file and submit it; its hash",
            "string: the transaction hash",
            Self::send_value_transfer
        ),
        method!(
            "personal_sendAccountUpdate",
            [p("args", K::Object), p("passphrase", K::Passphrase)],
            "Sign an account update (a new account key) with a key file and submit it; its hash",
            "string: the transaction hash",
            Self::send_account_update
        ),
        method!(
            "personal_sign",
            [p("message", K::Bytes), p("account", K::Address), p("password", K::Passphrase)],
            "Sign a message with a key file",
            "string: the 65-byte signature, 0x-hex",
            Self::sign
        ),
        method!(
            "personal_unlockAccount",
            [p("address", K::Address), p("passphrase", K::Passphrase), opt("duration", K::Integer)],
            "Keep an account's key in memory for duration seconds (default 300, 0 = until shutdown)",
            "true",
            Self::unlock_account
        ),
    ];
}

/// A parsed derivation path error, with the reference's messages.
pub fn parse_derivation_path(path: &str) -> std::result::Result<Vec<u32>, String> {
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
            chain: None,
        }
    }

    /// `personal_newAccount(passphrase)`: the new account's address.
    fn new_account(&self, _: &Call, p: &Params) -> Result<Address> {
        let pass = Zeroizing::new(p.required::<String>(0)?);
        Ok(self.keystore.new_account(&pass)?.address)
    }

    /// `personal_importRawKey(keydata, passphrase)`: the imported address.
    fn import_raw_key(&self, _: &Call, p: &Params) -> Result<Address> {
        let raw = Zeroizing::new(p.required::<String>(0)?);
        let pass = Zeroizing::new(p.required::<String>(1)?);
        let kd = keydata::parse(&raw)?;
        Ok(self.keystore.import(&kd, &pass)?.address)
    }

    /// `personal_replaceRawKey(keydata, old, new)`: the address; the account is locked after
    /// a successful replace, and nothing changes when it fails.
    fn replace_raw_key(&self, _: &Call, p: &Params) -> Result<Address> {
        let raw = Zeroizing::new(p.required::<String>(0)?);
        let old = Zeroizing::new(p.required::<String>(1)?);
        let new = Zeroizing::new(p.required::<String>(2)?);
        let kd = keydata::parse(&raw)?;
        let acct = self.keystore.replace(&kd, &old, &new)?;
        self.unlocked.lock(acct.address);
        Ok(acct.address)
    }

    /// `personal_listAccounts`: the addresses of the keystore, sorted by key-file URL.
    pub fn list_accounts(&self, _: &Call, _: &Params) -> Result<Vec<Address>> {
        Ok(self.keystore.addresses())
    }

    /// `personal_listWallets`: one wallet per key file, with its lock status.
    fn list_wallets(&self, _: &Call, _: &Params) -> Result<Vec<Wallet>> {
        let unlocked = self.unlocked.unlocked_addresses();
        Ok(self
            .keystore
            .accounts()
            .into_iter()
            .map(|a| {
                let url = a.url();
                Wallet {
                    status: if unlocked.contains(&a.address) {
                        "Unlocked"
                    } else {
                        "Locked"
                    },
                    accounts: [WalletAccount {
                        address: a.address,
                        url: url.clone(),
                    }],
                    url,
                }
            })
            .collect())
    }

    /// Finds the wallet of `url`: `protocol scheme missing` or `unknown wallet`.
    fn wallet(&self, url: &str) -> Result<()> {
        match url.split_once("://") {
            Some((scheme, rest)) if !scheme.is_empty() && !rest.contains("://") => {}
            _ => return Err(AccountError::SchemeMissing.into()),
        }
        if self.keystore.accounts().iter().any(|a| a.url() == url) {
            Ok(())
        } else {
            Err(AccountError::UnknownWallet.into())
        }
    }

    /// `personal_openWallet(url, passphrase?)`: `null` for a keystore wallet (nothing to open).
    fn open_wallet(&self, _: &Call, p: &Params) -> Result<()> {
        let url: String = p.required(0)?;
        let _pass: Option<Zeroizing<String>> = p.optional::<String>(1)?.map(Zeroizing::new);
        self.wallet(&url)
    }

    /// `personal_deriveAccount(url, path, pin?)`: keystore wallets cannot derive:
    /// `not supported`, after the wallet and path checks.
    fn derive_account(&self, _: &Call, p: &Params) -> Result<()> {
        let url: String = p.required(0)?;
        let path: String = p.required(1)?;
        let _pin: Option<bool> = p.optional(2)?;
        self.wallet(&url)?;
        parse_derivation_path(&path).map_err(AccountError::DerivationPath)?;
        Err(AccountError::NotSupported.into())
    }

    /// `personal_lockAccount(address)`: true when the keystore holds the account (now locked).
    fn lock_account(&self, _: &Call, p: &Params) -> Result<bool> {
        let address: Address = p.required(0)?;
        self.unlocked.lock(address);
        Ok(self.keystore.contains(address))
    }

    /// `personal_unlockAccount(address, passphrase, duration?)`: true, or an error.
    ///
    /// A duration above [`MAX_UNLOCK_SECS`] is `unlock duration too large`, checked before
    /// the key file is decrypted. When the account is locked while its key is being
    /// decrypted (`personal_lockAccount`, `personal_replaceRawKey`), the unlock counts as
    /// having happened just before that lock: the answer is `true` and the account stays
    /// locked, so a key read from a since-replaced file is never kept.
    fn unlock_account(&self, call: &Call, p: &Params) -> Result<bool> {
        if call.transport != Transport::Ipc && call.public_listener && !self.allow_insecure_unlock {
            return Err(AccountError::InsecureUnlock.into());
        }
        let address: Address = p.required(0)?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        let secs: u64 = p.optional(2)?.unwrap_or(DEFAULT_UNLOCK_SECS);
        if secs > MAX_UNLOCK_SECS {
            return Err(AccountError::UnlockDurationTooLarge.into());
        }
        let pending = self.unlocked.begin(address);
        let key = self.keystore.load_key(address, &pass)?;
        let duration = (secs > 0).then(|| Duration::from_secs(secs));
        // A duration too far away for the clock is "until shutdown".
        let duration = duration.filter(|d| std::time::Instant::now().checked_add(*d).is_some());
        pending.finish(key, duration);
        Ok(true)
    }

    /// The chain the send methods submit to.
    pub fn with_chain(mut self, chain: Option<Arc<Chain>>) -> PersonalApi {
        self.chain = chain;
        self
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(super::error::Error::NoChain)
    }

    /// The key of `from` decrypted from its key file with `pass` (never unlocking the
    /// account): `unknown account` when the keystore lacks it.
    fn key_file_key<'a>(&'a self, from: Address, pass: &'a str) -> txargs::KeySource<'a> {
        Box::new(move || {
            let path = self.keystore.find(from).map_err(|e| match e {
                KsError::NoKey => KsError::UnknownAccount,
                other => other,
            })?;
            Ok(keystore::load_key_file(&path, from, pass)?)
        })
    }

    /// `unknown account` unless the keystore has `from`.
    fn known(&self, from: Address) -> Result<()> {
        match self.keystore.find(from) {
            Ok(_) => Ok(()),
            Err(KsError::NoKey) => Err(KsError::UnknownAccount.into()),
            Err(e) => Err(e.into()),
        }
    }

    /// `personal_sendTransaction(tx, passphrase)`: a legacy transaction (the spec) signed
    /// with the key file and submitted; its hash.
    fn send_transaction(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let args = txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        if args.type_int != txargs::TYPE_LEGACY {
            return Err(super::error::Error::Rpc(crate::rpc::RpcError::invalid_params(format!(
                "invalid argument 0: personal_sendTransaction sends legacy transactions (typeInt 0); typeInt {} is sent with chain_sendTransaction (an unlocked account), or signed with personal_signTransaction and sent with chain_sendRawTransaction",
                args.type_int
            ))));
        }
        let key = self.key_file_key(args.from, &pass);
        Ok(HexOut(txargs::send(chain, &args, key)?.to_vec()))
    }

    /// `personal_signTransaction(tx, passphrase)`: the transaction (of any type)
    /// signed with the key file, not submitted: `{raw, tx}`.
    fn sign_transaction(&self, _: &Call, p: &Params) -> Result<SignedJson> {
        let args = txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        let key = self.key_file_key(args.from, &pass);
        Ok(SignedJson::new(&txargs::sign(chain, &args, key)?))
    }

    /// `personal_signTransactionAsFeePayer(tx, passphrase)`: signed by the fee payer it
    /// names with the fee payer's key file, beside the sender's signatures given: `{raw, tx}`.
    fn sign_transaction_as_fee_payer(&self, _: &Call, p: &Params) -> Result<SignedJson> {
        let args = txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        let key = |payer| self.key_file_key(payer, &pass);
        Ok(SignedJson::new(&txargs::sign_as_fee_payer(
            chain, &args, &key,
        )?))
    }

    /// `personal_sendTransactionAsFeePayer(tx, passphrase)`: as
    /// `personal_signTransactionAsFeePayer`, every member given, then submitted; the hash.
    fn send_transaction_as_fee_payer(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let args = txargs::TxArgs::general(p.required(0)?)?;
        let chain = self.chain()?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        let key = |payer| self.key_file_key(payer, &pass);
        Ok(HexOut(
            txargs::send_as_fee_payer(chain, &args, &key)?.to_vec(),
        ))
    }

    /// `personal_sendValueTransfer({from, to, value, gas?, gasPrice?, nonce?}, passphrase)`:
    /// a value transfer, signed with the key file and submitted; the hash. The account is
    /// looked up first.
    fn send_value_transfer(&self, _: &Call, p: &Params) -> Result<HexOut> {
        self.send_typed(p, txargs::TYPE_VALUE_TRANSFER)
    }

    /// `personal_sendAccountUpdate({from, key, gas?, gasPrice?, nonce?}, passphrase)`: an
    /// account update to `key` (the hex of its serialization), signed with the key file and
    /// submitted; the hash. A malformed key fails with its decoding error before the
    /// passphrase is tried.
    fn send_account_update(&self, _: &Call, p: &Params) -> Result<HexOut> {
        self.send_typed(p, txargs::TYPE_ACCOUNT_UPDATE)
    }

    fn send_typed(&self, p: &Params, type_int: u64) -> Result<HexOut> {
        let args = txargs::TxArgs::typed(p.required(0)?, type_int)?;
        let chain = self.chain()?;
        let pass = Zeroizing::new(p.required::<String>(1)?);
        // The account is looked up first (reference 3.4), then the arguments are built.
        self.known(args.from)?;
        let key = self.key_file_key(args.from, &pass);
        Ok(HexOut(txargs::send(chain, &args, key)?.to_vec()))
    }

    /// `personal_sign(message, account, password)`: 65-byte signature, v = 27/28.
    fn sign(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let message: HexBytes = p.required(0)?;
        let address: Address = p.required(1)?;
        let pass = Zeroizing::new(p.required::<String>(2)?);
        // One look at the index: the account's file, or `unknown account`.
        let path = self.keystore.find(address).map_err(|e| match e {
            KsError::NoKey => KsError::UnknownAccount,
            other => other,
        })?;
        let key = keystore::load_key_file(&path, address, &pass)?;
        Ok(HexOut(crypto::sign_message(&key, &message.0).to_vec()))
    }

    /// `personal_ecRecover(message, signature)`: the signer's address.
    fn ec_recover(&self, _: &Call, p: &Params) -> Result<Address> {
        let message: HexBytes = p.required(0)?;
        let sig: HexBytes = p.required(1)?;
        Ok(crypto::recover_message_signer(&message.0, &sig.0)?)
    }
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
