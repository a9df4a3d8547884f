//! `txpool`: what the transaction pool holds. Shapes as go-ethereum's `txpool` namespace,
//! which the reference node carries: per sender, per nonce (decimal strings as keys).

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::error::{Error, Result};
use super::method::{Method, Namespace};
use crate::chain::state::quantity;
use crate::chain::Chain;
use crate::method;
use crate::rpc::{Call, Params};
use crate::types::json::{Location, TransactionJson};
use crate::types::transaction::Transaction;

/// The `txpool` namespace.
pub struct TxpoolApi {
    chain: Option<Arc<Chain>>,
}

/// `txpool_status`.
#[derive(Serialize)]
pub struct Status {
    pub pending: String,
    pub queued: String,
}

/// A pool view: pending and queued transactions by sender and nonce.
#[derive(Serialize)]
pub struct ByAccount<T> {
    pub pending: BTreeMap<String, BTreeMap<String, T>>,
    pub queued: BTreeMap<String, BTreeMap<String, T>>,
}

impl Namespace for TxpoolApi {
    const MODULE: &'static str = "txpool";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "txpool_status",
            [],
            "How many transactions are pending and queued",
            "object: pending, queued (0x quantities)",
            Self::status
        ),
        method!(
            "txpool_content",
            [],
            "The pending and queued transactions, by sender and nonce",
            "object: pending, queued, by sender and nonce",
            Self::content
        ),
        method!(
            "txpool_inspect",
            [],
            "A one-line summary of each pooled transaction, by sender and nonce",
            "object: pending, queued, by sender and nonce",
            Self::inspect
        ),
    ];
}

fn nonce_of(tx: &Transaction) -> u64 {
    tx.nonce()
}

impl TxpoolApi {
    pub fn new(chain: Option<Arc<Chain>>) -> TxpoolApi {
        TxpoolApi { chain }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// `txpool_status`: `{pending, queued}` as quantities.
    fn status(&self, _: &Call, _: &Params) -> Result<Status> {
        let (pending, queued) = self.chain()?.pool_counts();
        Ok(Status {
            pending: format!("0x{pending:x}"),
            queued: format!("0x{queued:x}"),
        })
    }

    fn by_account<T>(
        &self,
        f: impl Fn(&Transaction, crate::crypto::Address) -> T,
    ) -> Result<ByAccount<T>> {
        let chain = self.chain()?;
        let group = |list: Vec<(Transaction, crate::crypto::Address)>| {
            let mut out: BTreeMap<String, BTreeMap<String, T>> = BTreeMap::new();
            for (tx, sender) in list {
                out.entry(format!("0x{}", hex::encode(sender.0)))
                    .or_default()
                    .insert(nonce_of(&tx).to_string(), f(&tx, sender));
            }
            out
        };
        Ok(ByAccount {
            pending: group(chain.pending()),
            queued: group(chain.queued()),
        })
    }

    /// `txpool_content`: each transaction object (pending form).
    fn content(&self, _: &Call, _: &Params) -> Result<ByAccount<TransactionJson>> {
        self.by_account(|tx, sender| TransactionJson::new(tx, sender, Location::PENDING))
    }

    /// `txpool_inspect`: `<to>: <value> peb + <gas> gas × <gasPrice> peb`, the recipient
    /// checksummed, `contract creation` for every transaction without one (the reference's
    /// words, whatever the type).
    fn inspect(&self, _: &Call, _: &Params) -> Result<ByAccount<String>> {
        self.by_account(|tx, _| {
            let decimal = |v: &[u8; 32]| {
                u128::from_str_radix(quantity(v).trim_start_matches("0x"), 16)
                    .map_or_else(|_| quantity(v), |n| n.to_string())
            };
            format!(
                "{}: {} peb + {} gas × {} peb",
                tx.to()
                    .map_or_else(|| "contract creation".to_string(), |a| checksummed(&a)),
                decimal(&tx.value()),
                tx.gas(),
                decimal(&tx.gas_price())
            )
        })
    }
}

/// An address in EIP-55's mixed case (Go's `common.Address.Hex()`).
pub(super) fn checksummed(a: &crate::crypto::Address) -> String {
    let lower = hex::encode(a.0);
    let hash = crate::crypto::keccak256(lower.as_bytes());
    let mixed: String = lower
        .chars()
        .enumerate()
        .map(|(i, c)| {
            let nibble = (hash[i / 2] >> if i % 2 == 0 { 4 } else { 0 }) & 0x0f;
            if c.is_ascii_alphabetic() && nibble >= 8 {
                c.to_ascii_uppercase()
            } else {
                c
            }
        })
        .collect();
    format!("0x{mixed}")
}

#[cfg(test)]
mod tests {
    /// EIP-55's own examples.
    #[test]
    fn addresses_in_mixed_case() {
        for want in [
            "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
            "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
            "0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB",
            "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
        ] {
            let mut a = [0u8; 20];
            hex::decode_to_slice(want[2..].to_lowercase(), &mut a).unwrap();
            assert_eq!(super::checksummed(&crate::crypto::Address(a)), want);
        }
    }
}
