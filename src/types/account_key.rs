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
}
