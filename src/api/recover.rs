//! `chain_recoverFromMessage` and `chain_recoverFromTransaction`: who signed a message or a
//! raw transaction, checked against the signing account's key in the state of a block (the
//! reference's, with its texts). A namespace of its own beside [`super::chain::ChainApi`],
//! under the same module name.

use std::sync::Arc;

use super::error::{Error, Result};
use super::goparams::BlockTag;
use super::logs::Missing;
use super::method::{p, Method, Namespace, ParamKind as K};
use crate::chain::Chain;
use crate::crypto::{keccak256_concat, signed_message_hash, Address, CryptoError};
use crate::method;
use crate::rpc::{Call, HexBytes, Params, RpcError};
use crate::types::account_key::{AccountKey, Signer};
use crate::types::transaction::Transaction;

/// The prefix of the messages Ethereum wallets sign, which the reference also accepts.
pub const ETHEREUM_MESSAGE_PREFIX: &[u8] = b"\x19Ethereum Signed Message:\n";

/// The recovery methods of the `chain` namespace.
pub struct RecoverApi {
    /// `None` on a node started without a chain.
    chain: Option<Arc<Chain>>,
}

impl Namespace for RecoverApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_recoverFromMessage",
            [
                p("address", K::Address),
                p("message", K::Bytes),
                p("signature", K::Bytes),
                p("block", K::Any)
            ],
            "The signer of a signed message (this chain's or Ethereum's prefix), if its key is one of the account's at a block",
            "address: the account whose key signed the message",
            Self::recover_from_message
        ),
        method!(
            "chain_recoverFromTransaction",
            [p("tx", K::Bytes), p("block", K::Any)],
            "The sender of a signed raw transaction, once its signatures satisfy the sender's key at a block",
            "address: the sender whose key signed the raw transaction",
            Self::recover_from_transaction
        ),
    ];
}

fn server(text: impl Into<String>) -> Error {
    Error::Rpc(RpcError::server(text))
}

/// The signer of `sig` (r ‖ s ‖ recovery id 0 or 1) over `hash`: its address and its
/// compressed public key.
fn recover_signer(hash: &[u8; 32], sig: &[u8; 65]) -> std::result::Result<Signer, CryptoError> {
    let xy = crate::crypto::recover_public_xy(hash, sig)?;
    let mut key = [0u8; 33];
    key[0] = 0x02 | (xy[63] & 1);
    key[1..].copy_from_slice(&xy[..32]);
    Ok(Signer {
        address: Address::from_public_xy(&xy),
        key,
    })
}

impl RecoverApi {
    pub fn new(chain: Option<Arc<Chain>>) -> RecoverApi {
        RecoverApi { chain }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// The key of `address` in the state of the block `tag` names (`latest` and `pending`:
    /// the head); the reference's text when the chain lacks the block.
    fn key_at(&self, address: &Address, tag: BlockTag) -> Result<AccountKey> {
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        let account = chain
            .account(address, Some(n))?
            .ok_or(Missing::HeaderNumber(n))?;
        Ok(account.key)
    }

    /// `chain_recoverFromMessage(address, message, signature, block)`: the address of the
    /// key that signed `message` (with this chain's prefix, else Ethereum's), when that key
    /// is one of `address`'s keys (any role; for a legacy key, `address` itself) at `block`.
    /// The signer may differ from `address` (a multisig member). Errors, in order: a
    /// signature not of 65 bytes, a V other than 27 or 28, a block the chain lacks, a
    /// signature that recovers under neither prefix (`recovery failed`), and `Invalid
    /// signature` when no recovered key is the account's.
    fn recover_from_message(&self, _: &Call, p: &Params) -> Result<Address> {
        let address: Address = p.required(0)?;
        let message: HexBytes = p.required(1)?;
        let sig: HexBytes = p.required(2)?;
        let tag: BlockTag = p.required(3)?;
        let mut sig: [u8; 65] = sig
            .0
            .as_slice()
            .try_into()
            .map_err(|_| CryptoError::SignatureLength)?;
        if sig[64] != 27 && sig[64] != 28 {
            return Err(CryptoError::SignatureV.into());
        }
        sig[64] -= 27;
        let key = self.key_at(&address, tag)?;
        let len = message.0.len().to_string();
        let hashes = [
            signed_message_hash(&message.0),
            keccak256_concat(&[ETHEREUM_MESSAGE_PREFIX, len.as_bytes(), &message.0]),
        ];
        let mut failure = None;
        for hash in &hashes {
            match recover_signer(hash, &sig) {
                Ok(signer) if key.has_member(&signer, address) => return Ok(signer.address),
                Ok(_) => {}
                Err(e) => failure = Some(e),
            }
        }
        Err(match failure {
            Some(e) => e.into(),
            None => server("Invalid signature"),
        })
    }

    /// `chain_recoverFromTransaction(tx, block)`: the sender of a signed raw transaction
    /// (its `from`, or a legacy one's signer), once its signatures are checked against the
    /// sender's key for the transaction's role in the state of `block`. Errors: `Empty
    /// input`, the decoder's, a block the chain lacks, a signature for another chain
    /// (`invalid chain id for signer`), a legacy transaction from an account whose key is
    /// not legacy, and `invalid account key` when the signatures do not satisfy the key.
    fn recover_from_transaction(&self, _: &Call, p: &Params) -> Result<Address> {
        let raw: HexBytes = p.required(0)?;
        let tag: BlockTag = p.required(1)?;
        if raw.0.is_empty() {
            return Err(server("Empty input"));
        }
        let tx = Transaction::decode(&raw.0)?;
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        chain.header_at(n)?.ok_or(Missing::HeaderNumber(n))?;
        if tx
            .signature_chain_id()
            .is_some_and(|c| c != 0 && c != chain.chain_id())
        {
            return Err(server("invalid chain id for signer"));
        }
        let signers = tx.recovered()?;
        let role = tx.role();
        match tx.from() {
            None => {
                let sender = signers
                    .first()
                    .map(|s| s.address)
                    .ok_or_else(|| server("invalid transaction v, r, s values"))?;
                if self.key_at(&sender, tag)? != AccountKey::Legacy {
                    return Err(server(
                        "a legacy transaction must be with a legacy account key",
                    ));
                }
                Ok(sender)
            }
            Some(from) => {
                if !self.key_at(&from, tag)?.validates(role, from, &signers) {
                    return Err(server("invalid account key"));
                }
                Ok(from)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signer recovered from a signature is the key that made it, compressed as account
    /// keys hold it.
    #[test]
    fn a_recovered_signer_is_the_signing_key() {
        let key = crate::crypto::SecretKey::from_slice(&[0x33; 32]).unwrap();
        let hash = [7u8; 32];
        let s = recover_signer(&hash, &key.sign_hash(&hash)).unwrap();
        assert_eq!(s.address, key.address());
        assert_eq!(s.key, key.public_compressed());
    }
}
