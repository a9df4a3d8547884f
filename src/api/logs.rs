//! `chain` logs, filters, block receipts and headers: `chain_getLogs`, the polling filters
//! (`chain_newFilter`, `chain_newBlockFilter`, `chain_newPendingTransactionFilter`,
//! `chain_getFilterChanges`, `chain_getFilterLogs`, `chain_uninstallFilter`),
//! `chain_getBlockReceipts`, `chain_getHeaderByNumber` and `chain_getHeaderByHash`. A
//! namespace of its own beside [`super::chain::ChainApi`], under the same module name. The
//! filters live in [`super::filters`]; the parameters are decoded as the reference decodes
//! them ([`super::goparams`]).

use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::error::{Error, Result};
use super::filters::{Changes, FilterKind, Filters};
use super::goparams::{BlockRef, BlockTag, Criteria, FilterId, Hash, HashParam};
use super::method::{p, Method, Namespace, ParamKind as K};
use crate::chain::logs::{Bounds, FoundLog, LogsError, MAX_RESULTS};
use crate::chain::Chain;
use crate::method;
use crate::rpc::{Call, Params};
use crate::types::json::{HeaderJson, LogJson, ReceiptJson};

/// A block or header the chain does not have (the reference's texts: these are errors, not
/// `null`, DECISIONS.md).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Missing {
    #[error("the header does not exist (block number: {0})")]
    HeaderNumber(u64),
    /// The reference prints the hash as Go prints a byte array: its bytes in decimal.
    #[error("the header does not exist (hash: {})", go_bytes(.0))]
    HeaderHash(Hash),
    #[error("the block does not exist (block number: {0})")]
    BlockNumber(u64),
    #[error("the block does not exist (block hash: 0x{})", hex::encode(.0))]
    BlockHash(Hash),
    #[error("invalid arguments; neither block nor hash specified")]
    Neither,
}

/// `[1 2 255 ...]`.
fn go_bytes(h: &Hash) -> String {
    let bytes: Vec<String> = h.iter().map(u8::to_string).collect();
    format!("[{}]", bytes.join(" "))
}

/// The `chain` namespace's log, filter, receipt and header methods.
pub struct LogsApi {
    /// `None` on a node started without a chain.
    chain: Option<Arc<Chain>>,
    filters: Arc<Filters>,
}

impl Namespace for LogsApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_getLogs",
            [p("criteria", K::Object)],
            "The logs matching {fromBlock, toBlock | blockHash, address, topics} (at most 10000)",
            "array of log objects",
            Self::get_logs
        ),
        method!(
            "chain_newFilter",
            [p("criteria", K::Object)],
            "Install a filter of the logs of new blocks matching criteria; its id",
            "string: the filter id",
            Self::new_filter
        ),
        method!(
            "chain_newBlockFilter",
            [],
            "Install a filter of the hashes of new blocks; its id",
            "string: the filter id",
            Self::new_block_filter
        ),
        method!(
            "chain_newPendingTransactionFilter",
            [],
            "Install a filter of the hashes of transactions entering the pool; its id",
            "string: the filter id",
            Self::new_pending_transaction_filter
        ),
        method!(
            "chain_getFilterChanges",
            [p("id", K::String)],
            "What a filter found since it was last polled: block or transaction hashes, or logs",
            "array of hashes or log objects",
            Self::get_filter_changes
        ),
        method!(
            "chain_getFilterLogs",
            [p("id", K::String)],
            "Every log matching a log filter's criteria",
            "array of log objects",
            Self::get_filter_logs
        ),
        method!(
            "chain_uninstallFilter",
            [p("id", K::String)],
            "Remove a filter; false when there is no such filter",
            "bool",
            Self::uninstall_filter
        ),
        method!(
            "chain_getBlockReceipts",
            [p("block", K::Any)],
            "The receipts of a block's transactions, by number (or latest, earliest) or hash",
            "array of receipt objects",
            Self::get_block_receipts
        ),
        method!(
            "chain_getHeaderByNumber",
            [p("block", K::Any)],
            "A block header by number (or latest, earliest, pending)",
            "header object",
            Self::get_header_by_number
        ),
        method!(
            "chain_getHeaderByHash",
            [p("hash", K::Hash)],
            "A block header by hash",
            "header object",
            Self::get_header_by_hash
        ),
    ];
}

/// What `chain_getFilterChanges` answers: hashes, or log objects.
#[derive(Serialize)]
#[serde(untagged)]
pub enum FilterChanges {
    Hashes(Vec<String>),
    Logs(Vec<LogJson>),
}

fn log_json(l: &FoundLog) -> LogJson {
    LogJson::new(&l.log, l.location(), &l.tx_hash, l.log_index)
}

impl LogsApi {
    pub fn new(chain: Option<Arc<Chain>>, filters: Arc<Filters>) -> LogsApi {
        LogsApi { chain, filters }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// The logs of the blocks `from` to `to` (`latest` and `pending` are the head) that
    /// `c` matches, within the reference's bounds.
    fn range_logs(&self, c: &Criteria) -> Result<Vec<FoundLog>> {
        let chain = self.chain()?;
        let head = chain.head_number();
        let (from, to) = (c.from_tag().resolve(head), c.to_tag().resolve(head));
        Ok(chain.logs(from, to, &c.filter, &Bounds::standard())?)
    }

    /// `chain_getLogs(criteria)`: the matching logs of one block (`blockHash`) or of a
    /// range (`fromBlock`, `toBlock`, both `latest` by default), in chain order. A range
    /// starting past the head is empty; one ending past it is an error naming the first
    /// missing block; more than 10000 logs or 10 s are errors.
    pub(super) fn get_logs(&self, _: &Call, p: &Params) -> Result<Vec<LogJson>> {
        let c: Criteria = p.required(0)?;
        let chain = self.chain()?;
        let found = match c.block_hash {
            Some(hash) => {
                let logs = chain
                    .block_logs(&hash, &c.filter)?
                    .ok_or(Missing::HeaderHash(hash))?;
                if logs.len() > MAX_RESULTS {
                    return Err(LogsError::TooMany(MAX_RESULTS).into());
                }
                logs
            }
            None => self.range_logs(&c)?,
        };
        Ok(found.iter().map(log_json).collect())
    }

    /// `chain_newFilter(criteria)`: a log filter's id. Its criteria's bounds must be one of
    /// the reference's combinations; a `blockHash` is ignored, as the reference ignores it.
    pub(super) fn new_filter(&self, _: &Call, p: &Params) -> Result<String> {
        let c: Criteria = p.required(0)?;
        self.chain()?;
        Ok(self.filters.install(FilterKind::Logs(c), Instant::now())?)
    }

    /// `chain_newBlockFilter()`: a block filter's id (parameters are ignored).
    pub(super) fn new_block_filter(&self, _: &Call, _: &Params) -> Result<String> {
        self.chain()?;
        Ok(self.filters.install(FilterKind::Blocks, Instant::now())?)
    }

    /// `chain_newPendingTransactionFilter()`: a pending-transaction filter's id
    /// (parameters are ignored).
    pub(super) fn new_pending_transaction_filter(&self, _: &Call, _: &Params) -> Result<String> {
        self.chain()?;
        Ok(self
            .filters
            .install(FilterKind::PendingTransactions, Instant::now())?)
    }

    /// `chain_getFilterChanges(id)`: since the filter's last poll (or its creation), the
    /// hashes of new blocks, the hashes of transactions that entered the pool, or the
    /// matching logs of the new blocks; `[]` when nothing came. Keeps the filter alive.
    pub(super) fn get_filter_changes(&self, _: &Call, p: &Params) -> Result<FilterChanges> {
        let FilterId(id) = p.required(0)?;
        let chain = self.chain()?;
        match self.filters.changes(&id, Instant::now())? {
            Changes::Hashes(h) => Ok(FilterChanges::Hashes(
                h.iter().map(|h| crate::crypto::to_hex0x(h)).collect(),
            )),
            Changes::Blocks { criteria, blocks } => {
                let mut out = Vec::new();
                for (number, hash) in blocks {
                    if !criteria.within(number) {
                        continue;
                    }
                    if let Some(logs) = chain.block_logs(&hash, &criteria.filter)? {
                        out.extend(logs.iter().map(log_json));
                    }
                }
                Ok(FilterChanges::Logs(out))
            }
        }
    }

    /// `chain_getFilterLogs(id)`: every log matching a log filter's criteria over its
    /// range, as `chain_getLogs` answers it; `filter not found` for a filter of another
    /// kind. Does not count as a poll.
    pub(super) fn get_filter_logs(&self, _: &Call, p: &Params) -> Result<Vec<LogJson>> {
        let FilterId(id) = p.required(0)?;
        self.chain()?;
        let c = self.filters.log_criteria(&id)?;
        Ok(self.range_logs(&c)?.iter().map(log_json).collect())
    }

    /// `chain_uninstallFilter(id)`: true when the filter existed, false otherwise.
    pub(super) fn uninstall_filter(&self, _: &Call, p: &Params) -> Result<bool> {
        let FilterId(id) = p.required(0)?;
        self.chain()?;
        Ok(self.filters.uninstall(&id))
    }

    /// `chain_getBlockReceipts(block)`: the receipt object of each transaction of the block
    /// (by number, tag or hash), in order; `[]` for a block without transactions.
    fn get_block_receipts(&self, _: &Call, p: &Params) -> Result<Vec<ReceiptJson>> {
        let block: BlockRef = p.required(0)?;
        let chain = self.chain()?;
        let hash = match block {
            BlockRef::Hash(h) => h,
            BlockRef::Tag(t) => {
                let n = t.resolve(chain.head_number());
                chain.header_at(n)?.ok_or(Missing::BlockNumber(n))?.0
            }
            BlockRef::Neither => return Err(Missing::Neither.into()),
        };
        let records = chain
            .block_receipts(&hash)?
            .ok_or(Missing::BlockHash(hash))?;
        Ok(records
            .into_iter()
            .filter_map(super::chain::receipt_json)
            .collect())
    }

    /// `chain_getHeaderByNumber(block)`: the header object of reference 10.8 of the
    /// canonical block (`latest` and `pending`: the head).
    fn get_header_by_number(&self, _: &Call, p: &Params) -> Result<HeaderJson> {
        let tag: BlockTag = p.required(0)?;
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        let (hash, header) = chain.header_at(n)?.ok_or(Missing::HeaderNumber(n))?;
        Ok(HeaderJson::new(hash, &header))
    }

    /// `chain_getHeaderByHash(hash)`: the header object of the block with this hash.
    fn get_header_by_hash(&self, _: &Call, p: &Params) -> Result<HeaderJson> {
        let HashParam(hash) = p.required(0)?;
        let chain = self.chain()?;
        let header = chain
            .header_by_hash(&hash)?
            .ok_or(Missing::HeaderHash(hash))?;
        Ok(HeaderJson::new(hash, &header))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_blocks_and_headers_read_as_the_reference() {
        assert_eq!(
            Missing::HeaderNumber(7).to_string(),
            "the header does not exist (block number: 7)"
        );
        let mut h = [0xff; 32];
        h[0] = 1;
        let text = Missing::HeaderHash(h).to_string();
        assert!(
            text.starts_with("the header does not exist (hash: [1 255 255 "),
            "{text}"
        );
        assert!(text.ends_with(" 255])"), "{text}");
        assert_eq!(
            Missing::BlockHash([0xff; 32]).to_string(),
            format!(
                "the block does not exist (block hash: 0x{})",
                "ff".repeat(32)
            )
        );
        assert_eq!(
            Missing::BlockNumber(3).to_string(),
            "the block does not exist (block number: 3)"
        );
    }
}
