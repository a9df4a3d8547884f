//! Account keys (reference section 7): nil, legacy, public, fail, weighted multisig and
//! role-based, their serialization (`RLP(type)` then `RLP(body)`) and its decoder, which is a
//! pure function of the bytes that never panics.

use super::rlp::{list, put_bytes, put_u64, ListReader, RlpError};

/// A compressed secp256k1 public key (33 bytes, `02`/`03` then X).
pub type CompressedKey = [u8; 33];

/// An account key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AccountKey {
    Nil,
    Legacy,
    Public(CompressedKey),
    Fail,
    WeightedMultisig {
        threshold: u32,
        /// (weight, key), in order.
        keys: Vec<(u32, CompressedKey)>,
    },
    RoleBased(Vec<AccountKey>),
}

/// Why bytes are not an account key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("undefined account key type")]
    UndefinedType,
    #[error("invalid public key")]
    InvalidPublicKey,
    #[error(transparent)]
    Rlp(#[from] RlpError),
}

const NIL: u8 = 0;
const LEGACY: u8 = 1;
const PUBLIC: u8 = 2;
const FAIL: u8 = 3;
const MULTISIG: u8 = 4;
const ROLE_BASED: u8 = 5;

impl AccountKey {
    /// The key type code (0 nil .. 5 role-based).
    pub fn type_code(&self) -> u8 {
        match self {
            AccountKey::Nil => NIL,
            AccountKey::Legacy => LEGACY,
            AccountKey::Public(_) => PUBLIC,
            AccountKey::Fail => FAIL,
            AccountKey::WeightedMultisig { .. } => MULTISIG,
            AccountKey::RoleBased(_) => ROLE_BASED,
        }
    }

    /// The serialization of section 7.1.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            AccountKey::Nil => out.push(0x80),
            AccountKey::Legacy | AccountKey::Fail => {
                out.push(self.type_code());
                out.extend_from_slice(&list(&[]));
            }
            AccountKey::Public(k) => {
                out.push(PUBLIC);
                put_bytes(&mut out, k);
            }
            AccountKey::WeightedMultisig { threshold, keys } => {
                out.push(MULTISIG);
                let mut weighted = Vec::new();
                for (w, k) in keys {
                    let mut item = Vec::new();
                    put_u64(&mut item, u64::from(*w));
                    put_bytes(&mut item, k);
                    weighted.extend_from_slice(&list(&item));
                }
                let mut body = Vec::new();
                put_u64(&mut body, u64::from(*threshold));
                body.extend_from_slice(&list(&weighted));
                out.extend_from_slice(&list(&body));
            }
            AccountKey::RoleBased(roles) => {
                out.push(ROLE_BASED);
                let mut body = Vec::new();
                for r in roles {
                    put_bytes(&mut body, &r.encode());
                }
                out.extend_from_slice(&list(&body));
            }
        }
        out
    }

    /// Decodes a whole serialization (every byte must be used).
    pub fn decode(bytes: &[u8]) -> Result<AccountKey, KeyError> {
        let (&first, rest) = bytes.split_first().ok_or(RlpError::TooFew)?;
        if first == 0x80 {
            return if rest.is_empty() {
                Ok(AccountKey::Nil)
            } else {
                Err(RlpError::Trailing.into())
            };
        }
        if first == 0 {
            return Err(RlpError::Rlp("non-canonical integer (leading zero bytes)".into()).into());
        }
        if first >= 0x80 {
            return Err(KeyError::UndefinedType);
        }
        match first {
            LEGACY | FAIL => {
                let body = ListReader::whole(rest)?;
                body.end()?;
                Ok(if first == LEGACY {
                    AccountKey::Legacy
                } else {
                    AccountKey::Fail
                })
            }
            PUBLIC => {
                let mut buf = rest;
                let h = alloy_rlp::Header::decode(&mut buf).map_err(RlpError::from)?;
                if h.list {
                    return Err(RlpError::NotAString.into());
                }
                if buf.len() != h.payload_length {
                    return Err(RlpError::Trailing.into());
                }
                Ok(AccountKey::Public(compressed(buf)?))
            }
            MULTISIG => {
                let mut body = ListReader::whole(rest)?;
                let threshold = small(body.u64()?)?;
                let mut weighted = body.list()?;
                body.end()?;
                let mut keys = Vec::new();
                while !weighted.is_empty() {
                    let mut item = weighted.list()?;
                    let weight = small(item.u64()?)?;
                    let key = compressed(item.bytes()?)?;
                    item.end()?;
                    keys.push((weight, key));
                }
                Ok(AccountKey::WeightedMultisig { threshold, keys })
            }
            ROLE_BASED => {
                let mut body = ListReader::whole(rest)?;
                let mut roles = Vec::new();
                while !body.is_empty() {
                    roles.push(AccountKey::decode(body.bytes()?)?);
                }
                Ok(AccountKey::RoleBased(roles))
            }
            _ => Err(KeyError::UndefinedType),
        }
    }
}

fn small(n: u64) -> Result<u32, KeyError> {
    u32::try_from(n).map_err(|_| RlpError::TooLarge.into())
}

/// A compressed key of exactly 33 bytes that is a point on the curve.
fn compressed(b: &[u8]) -> Result<CompressedKey, KeyError> {
    let key: CompressedKey = b.try_into().map_err(|_| KeyError::InvalidPublicKey)?;
    if key[0] != 2 && key[0] != 3 {
        return Err(KeyError::InvalidPublicKey);
    }
    secp256k1::PublicKey::from_slice(&key).map_err(|_| KeyError::InvalidPublicKey)?;
    Ok(key)
}

/// Why a key may not be installed or replace another (reference 7.4); the messages are the
/// reference's.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyRuleError {
    #[error("AccountKeyNil cannot be initialized to an account")]
    NilNotInstallable,
    #[error("length is zero")]
    LengthZero,
    #[error("the number of keys exceeds the limit")]
    TooManyKeys,
    #[error("key weight is zero")]
    WeightZero,
    #[error("duplicated key")]
    Duplicated,
    #[error("weighted sum overflow")]
    WeightedSumOverflow,
    #[error("unsatisfiable threshold. Weighted sum of keys is less than the threshold.")]
    Unsatisfiable,
    #[error("length too long")]
    LengthTooLong,
    #[error("nested composite type")]
    Nested,
    #[error("AccountKeyFail is not updatable")]
    FailNotUpdatable,
}

/// Most keys of a weighted multisig key.
pub const MAX_MULTISIG_KEYS: usize = 10;
/// Most roles of a role-based key.
pub const MAX_ROLES: usize = 3;
/// Gas per extra signature checked against a multisig key (reference 7.5).
pub const TX_VALIDATION_GAS_PER_KEY: u64 = 15_000;

/// The roles of a role-based key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Legacy and value-transfer transactions.
    Transaction = 0,
    AccountUpdate = 1,
    FeePayer = 2,
}

/// A signer recovered from a signature: its address and its compressed public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signer {
    pub address: crate::crypto::Address,
    pub key: CompressedKey,
}

impl AccountKey {
    /// The install check: may this key be put on an account (a new key of another type, or
    /// a new role)?
    pub fn check_install(&self) -> Result<(), KeyRuleError> {
        match self {
            AccountKey::Nil => Err(KeyRuleError::NilNotInstallable),
            AccountKey::Legacy | AccountKey::Fail | AccountKey::Public(_) => Ok(()),
            AccountKey::WeightedMultisig { threshold, keys } => {
                if keys.is_empty() {
                    return Err(KeyRuleError::LengthZero);
                }
                if keys.len() > MAX_MULTISIG_KEYS {
                    return Err(KeyRuleError::TooManyKeys);
                }
                let mut sum: u32 = 0;
                let mut seen = std::collections::HashSet::new();
                for (w, k) in keys {
                    if *w == 0 {
                        return Err(KeyRuleError::WeightZero);
                    }
                    if !seen.insert(*k) {
                        return Err(KeyRuleError::Duplicated);
                    }
                    sum = sum
                        .checked_add(*w)
                        .ok_or(KeyRuleError::WeightedSumOverflow)?;
                }
                if sum < *threshold {
                    return Err(KeyRuleError::Unsatisfiable);
                }
                Ok(())
            }
            AccountKey::RoleBased(roles) => {
                if roles.is_empty() {
                    return Err(KeyRuleError::LengthZero);
                }
                if roles.len() > MAX_ROLES {
                    return Err(KeyRuleError::LengthTooLong);
                }
                for r in roles {
                    if matches!(r, AccountKey::RoleBased(_)) {
                        return Err(KeyRuleError::Nested);
                    }
                    r.check_install()?;
                }
                Ok(())
            }
        }
    }

    /// Whether `new` may replace `self` (same type: the update check; else the install
    /// check); the key the account then has (role-based updates keep the old role where the
    /// new one is nil or missing).
    pub fn replaced_by(&self, new: &AccountKey) -> Result<AccountKey, KeyRuleError> {
        if self.type_code() != new.type_code() {
            new.check_install()?;
            return Ok(new.clone());
        }
        match (self, new) {
            (AccountKey::Fail, _) => Err(KeyRuleError::FailNotUpdatable),
            (AccountKey::RoleBased(old), AccountKey::RoleBased(roles)) => {
                if roles.is_empty() {
                    return Err(KeyRuleError::LengthZero);
                }
                if roles.len() > MAX_ROLES {
                    return Err(KeyRuleError::LengthTooLong);
                }
                let mut result = old.clone();
                for (i, r) in roles.iter().enumerate() {
                    if matches!(r, AccountKey::RoleBased(_)) {
                        return Err(KeyRuleError::Nested);
                    }
                    match old.get(i) {
                        None => {
                            r.check_install()?;
                            result.push(r.clone());
                        }
                        Some(_) if *r == AccountKey::Nil => {}
                        Some(o) => result[i] = o.replaced_by(r)?,
                    }
                }
                Ok(AccountKey::RoleBased(result))
            }
            _ => {
                new.check_install()?;
                Ok(new.clone())
            }
        }
    }

    /// The key that signs for `role`: a role-based key's entry when it has one, else its
    /// first; any other key itself.
    pub fn for_role(&self, role: Role) -> &AccountKey {
        match self {
            AccountKey::RoleBased(roles) => roles
                .get(role as usize)
                .or_else(|| roles.first())
                .unwrap_or(self),
            other => other,
        }
    }

    /// Whether `signers` (one per signature) satisfy this key for `role` on behalf of
    /// `from` (reference 7.4).
    pub fn validates(&self, role: Role, from: crate::crypto::Address, signers: &[Signer]) -> bool {
        match self.for_role(role) {
            AccountKey::Legacy => signers.len() == 1 && signers[0].address == from,
            AccountKey::Public(k) => signers.len() == 1 && signers[0].key == *k,
            AccountKey::WeightedMultisig { threshold, keys } => {
                if signers.is_empty() || signers.len() > keys.len() {
                    return false;
                }
                let mut matched = std::collections::HashSet::new();
                let mut weight: u64 = 0;
                for s in signers {
                    let Some((w, k)) = keys.iter().find(|(_, k)| *k == s.key) else {
                        return false;
                    };
                    if matched.insert(*k) {
                        weight += u64::from(*w);
                    }
                }
                weight >= u64::from(*threshold)
            }
            AccountKey::Nil | AccountKey::Fail | AccountKey::RoleBased(_) => false,
        }
    }

    /// Whether `signer` is one of this key's keys, for any role, on behalf of `from` (the
    /// reference's `ValidateMember`): a legacy key's member is `from` itself; a fail or nil
    /// key has none.
    pub fn has_member(&self, signer: &Signer, from: crate::crypto::Address) -> bool {
        match self {
            AccountKey::Legacy => signer.address == from,
            AccountKey::Public(k) => *k == signer.key,
            AccountKey::WeightedMultisig { keys, .. } => keys.iter().any(|(_, k)| *k == signer.key),
            AccountKey::RoleBased(roles) => roles.iter().any(|r| r.has_member(signer, from)),
            AccountKey::Nil | AccountKey::Fail => false,
        }
    }

    /// The gas added for checking the sender's `signatures` signatures against this key for
    /// `role` (reference 7.5, Istanbul-compatible fork active).
    pub fn validation_gas(&self, role: Role, signatures: usize) -> u64 {
        match self.for_role(role) {
            AccountKey::WeightedMultisig { .. } => {
                TX_VALIDATION_GAS_PER_KEY * signatures.saturating_sub(1) as u64
            }
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn garbage_is_refused_without_panicking() {
        let cases: &[(&[u8], KeyError)] = &[
            (&[], KeyError::Rlp(RlpError::TooFew)),
            (
                &[0x00],
                KeyError::Rlp(RlpError::Rlp(
                    "non-canonical integer (leading zero bytes)".into(),
                )),
            ),
            (&[0x06, 0xc0], KeyError::UndefinedType),
            (&[0x80, 0x00], KeyError::Rlp(RlpError::Trailing)),
            (&[0x01, 0xc0, 0x00], KeyError::Rlp(RlpError::Trailing)),
            (&[0x02, 0x02], KeyError::InvalidPublicKey),
            (
                &[0x02, 0x81, 0x02],
                KeyError::Rlp(RlpError::Rlp("non-canonical single byte".into())),
            ),
        ];
        for (bytes, want) in cases {
            assert_eq!(
                AccountKey::decode(bytes).as_ref(),
                Err(want),
                "{bytes:02x?}"
            );
        }
        // 33 bytes that are not a point: X = 2^256 - 1 is not below the field prime.
        let mut off_curve = vec![0x02, 0xa1, 0x02];
        off_curve.extend([0xff; 32]);
        assert_eq!(
            AccountKey::decode(&off_curve),
            Err(KeyError::InvalidPublicKey)
        );
        for b in 0..=255u8 {
            let _ = AccountKey::decode(&[b]);
            let _ = AccountKey::decode(&[b, 0xc1, 0x80]);
        }
    }

    fn key(b: u8) -> CompressedKey {
        let sk = crate::crypto::SecretKey::from_slice(&[b; 32]).unwrap();
        let pk = secp256k1::PublicKey::from_secret_key(
            &secp256k1::Secp256k1::new(),
            &secp256k1::SecretKey::from_slice(&*sk.to_bytes()).unwrap(),
        );
        pk.serialize()
    }

    #[test]
    fn install_and_update_rules_give_the_reference_errors() {
        let (a, b) = (key(1), key(2));
        let ms = |t: u32, ks: Vec<(u32, CompressedKey)>| AccountKey::WeightedMultisig {
            threshold: t,
            keys: ks,
        };
        let cases: Vec<(AccountKey, Result<(), KeyRuleError>)> = vec![
            (AccountKey::Nil, Err(KeyRuleError::NilNotInstallable)),
            (AccountKey::Legacy, Ok(())),
            (AccountKey::Fail, Ok(())),
            (AccountKey::Public(a), Ok(())),
            (ms(1, vec![]), Err(KeyRuleError::LengthZero)),
            (
                ms(1, (0..11).map(|i| (1, key(i + 1))).collect()),
                Err(KeyRuleError::TooManyKeys),
            ),
            (ms(1, vec![(0, a)]), Err(KeyRuleError::WeightZero)),
            (ms(1, vec![(1, a), (1, a)]), Err(KeyRuleError::Duplicated)),
            (
                ms(1, vec![(u32::MAX, a), (1, b)]),
                Err(KeyRuleError::WeightedSumOverflow),
            ),
            (
                ms(3, vec![(1, a), (1, b)]),
                Err(KeyRuleError::Unsatisfiable),
            ),
            (ms(0, vec![(1, a)]), Ok(())),
            (AccountKey::RoleBased(vec![]), Err(KeyRuleError::LengthZero)),
            (
                AccountKey::RoleBased(vec![AccountKey::Legacy; 4]),
                Err(KeyRuleError::LengthTooLong),
            ),
            (
                AccountKey::RoleBased(vec![AccountKey::RoleBased(vec![AccountKey::Legacy])]),
                Err(KeyRuleError::Nested),
            ),
            (
                AccountKey::RoleBased(vec![AccountKey::Legacy, AccountKey::Nil]),
                Err(KeyRuleError::NilNotInstallable),
            ),
        ];
        for (k, want) in cases {
            assert_eq!(k.check_install(), want, "{k:?}");
        }
        assert_eq!(
            AccountKey::Fail.replaced_by(&AccountKey::Fail),
            Err(KeyRuleError::FailNotUpdatable)
        );
        assert_eq!(
            AccountKey::Fail.replaced_by(&AccountKey::Public(a)),
            Ok(AccountKey::Public(a))
        );
        // Role-based to role-based: nil keeps the old role, a shorter list keeps the rest.
        let old = AccountKey::RoleBased(vec![
            AccountKey::Public(a),
            AccountKey::Public(a),
            AccountKey::Legacy,
        ]);
        let new = AccountKey::RoleBased(vec![AccountKey::Nil, AccountKey::Public(b)]);
        assert_eq!(
            old.replaced_by(&new),
            Ok(AccountKey::RoleBased(vec![
                AccountKey::Public(a),
                AccountKey::Public(b),
                AccountKey::Legacy
            ]))
        );
    }

    #[test]
    fn signatures_are_checked_against_the_key_of_the_role() {
        let (a, b, c) = (key(1), key(2), key(3));
        let signer = |k: CompressedKey| Signer {
            address: crate::crypto::Address([k[1]; 20]),
            key: k,
        };
        let from = crate::crypto::Address([9; 20]);
        let legacy_from = Signer {
            address: from,
            key: a,
        };
        assert!(AccountKey::Legacy.validates(Role::Transaction, from, &[legacy_from]));
        assert!(!AccountKey::Legacy.validates(Role::Transaction, from, &[signer(a)]));
        assert!(AccountKey::Public(a).validates(Role::Transaction, from, &[signer(a)]));
        assert!(!AccountKey::Public(a).validates(Role::Transaction, from, &[signer(b)]));
        assert!(!AccountKey::Fail.validates(Role::Transaction, from, &[signer(a)]));
        let ms = AccountKey::WeightedMultisig {
            threshold: 2,
            keys: vec![(1, a), (1, b), (1, c)],
        };
        assert!(ms.validates(Role::Transaction, from, &[signer(a), signer(c)]));
        assert!(
            !ms.validates(Role::Transaction, from, &[signer(a)]),
            "under the threshold"
        );
        assert!(
            !ms.validates(Role::Transaction, from, &[signer(a), signer(a)]),
            "one key twice"
        );
        assert_eq!(ms.validation_gas(Role::Transaction, 2), 15_000);
        let roles = AccountKey::RoleBased(vec![AccountKey::Public(a), AccountKey::Public(b)]);
        assert!(roles.validates(Role::Transaction, from, &[signer(a)]));
        assert!(roles.validates(Role::AccountUpdate, from, &[signer(b)]));
        assert!(!roles.validates(Role::AccountUpdate, from, &[signer(a)]));
        assert!(
            roles.validates(Role::FeePayer, from, &[signer(a)]),
            "no fee-payer role: the first"
        );
    }
}
