//! Logs and receipts of stored blocks: what `chain_getLogs`, the polling filters, the `logs`
//! subscription and `chain_getBlockReceipts` read. A [`LogFilter`] (addresses, topics)
//! picks logs; a range of canonical blocks is scanned block by block, each header's bloom
//! deciding whether its receipts are read at all; every log found carries where it is (its
//! block, its transaction and its index among all the logs of the block). No JSON here:
//! `api/logs.rs` shapes the answers.

use std::time::{Duration, Instant};

use super::db::{self, Hash};
use super::read::{created_contract, SealedReceipt};
use super::{ChainError, TxRecord};
use crate::crypto::Address;
use crate::types::block::{decode_tx_list, Header};
use crate::types::json::Location;
use crate::types::receipt::{BloomBits, Log, Receipt};

/// The most logs one query answers (the reference's limit); one more is an error.
pub const MAX_RESULTS: usize = 10_000;
/// How long one query may take (the reference's limit).
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Which logs a query wants: emitted by any of `addresses` (none listed: any address),
/// with, at each position of `topics`, any of the topics listed there (none listed: any).
/// A log with fewer topics than `topics` has positions does not match, wildcards or not
/// (the reference's rule).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogFilter {
    pub addresses: Vec<Address>,
    pub topics: Vec<Vec<Hash>>,
}

/// A filter's addresses and topics as bloom bits, hashed once for all the blocks of a query.
#[derive(Debug, Clone)]
pub struct BloomQuery {
    addresses: Vec<BloomBits>,
    topics: Vec<Vec<BloomBits>>,
}

impl BloomQuery {
    /// False when a block with this bloom holds no log the filter matches; true when it may.
    pub fn may_match(&self, bloom: &[u8; 256]) -> bool {
        (self.addresses.is_empty() || self.addresses.iter().any(|a| a.set_in(bloom)))
            && self
                .topics
                .iter()
                .all(|any| any.is_empty() || any.iter().any(|t| t.set_in(bloom)))
    }
}

impl LogFilter {
    /// False when a block with this bloom holds no log the filter matches; true when it may.
    pub fn may_match(&self, bloom: &[u8; 256]) -> bool {
        self.bloom_query().may_match(bloom)
    }

    /// The filter's bloom bits, for testing many blocks.
    pub fn bloom_query(&self) -> BloomQuery {
        BloomQuery {
            addresses: self.addresses.iter().map(|a| BloomBits::of(&a.0)).collect(),
            topics: self
                .topics
                .iter()
                .map(|any| any.iter().map(|t| BloomBits::of(t)).collect())
                .collect(),
        }
    }

    /// Whether `log` is one the filter wants.
    pub fn matches(&self, log: &Log) -> bool {
        if !self.addresses.is_empty() && !self.addresses.contains(&log.address) {
            return false;
        }
        if self.topics.len() > log.topics.len() {
            return false;
        }
        self.topics
            .iter()
            .zip(&log.topics)
            .all(|(any, topic)| any.is_empty() || any.contains(topic))
    }
}

/// A stored log and where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundLog {
    pub log: Log,
    pub block_hash: Hash,
    pub block_number: u64,
    /// The hash of the transaction that emitted it, and that transaction's index in the block.
    pub tx_hash: Hash,
    pub tx_index: u64,
    /// Its index among all the logs of its block.
    pub log_index: u64,
}

impl FoundLog {
    /// Where its transaction is.
    pub fn location(&self) -> Location {
        Location {
            block_hash: self.block_hash,
            block_number: self.block_number,
            index: self.tx_index,
        }
    }
}

/// Why a log query or a block's receipts could not be answered. The texts are the
/// reference's.
#[derive(Debug, thiserror::Error)]
pub enum LogsError {
    #[error("query returned more than {0} results")]
    TooMany(usize),
    #[error("query timeout exceeded")]
    Timeout,
    /// The range reaches a block the chain does not have.
    #[error("the header does not exist (block number: {0})")]
    NoHeader(u64),
    #[error("the size of transactions and receipts is different in the block (0x{})", hex::encode(.0))]
    ReceiptCount(Hash),
    #[error(transparent)]
    Chain(#[from] ChainError),
}

impl From<db::Error> for LogsError {
    fn from(e: db::Error) -> LogsError {
        LogsError::Chain(e.into())
    }
}

/// What bounds one query: how many logs it may answer and when it must have finished.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub max_results: usize,
    pub deadline: Instant,
}

impl Bounds {
    /// The reference's bounds, [`MAX_RESULTS`] and [`QUERY_TIMEOUT`] from now.
    pub fn standard() -> Bounds {
        Bounds {
            max_results: MAX_RESULTS,
            deadline: Instant::now() + QUERY_TIMEOUT,
        }
    }
}

fn corrupt(hash: &Hash, what: impl std::fmt::Display) -> ChainError {
    ChainError::Corrupt(format!("block 0x{}: {what}", hex::encode(hash)))
}

impl super::Chain {
    /// The logs that `filter` matches in the canonical blocks `from` to `to` (none when
    /// `from > to`), in chain order. Fails with [`LogsError::NoHeader`] (naming the first
    /// missing number) when the range goes past the head, and with [`LogsError::TooMany`] or
    /// [`LogsError::Timeout`] beyond `bounds`.
    pub fn logs(
        &self,
        from: u64,
        to: u64,
        filter: &LogFilter,
        bounds: &Bounds,
    ) -> Result<Vec<FoundLog>, LogsError> {
        if from > to {
            return Ok(Vec::new());
        }
        let head = self.head_number();
        if to > head {
            // The reference walks up to the missing block before it fails; the answer is
            // the same without the walk.
            return Err(LogsError::NoHeader(from.max(head + 1)));
        }
        let mut out = Vec::new();
        let bloom = filter.bloom_query();
        // One read transaction, one sequential scan of the stored blocks.
        let missing = self.db.block_reader()?.read_hashed(
            from,
            to,
            |number, hash, block| -> Result<(), LogsError> {
                if Instant::now() >= bounds.deadline {
                    return Err(LogsError::Timeout);
                }
                let (header, txs) = db::split_block(block)?;
                let header_bloom = Header::bloom_of(header)
                    .map_err(|e| ChainError::Corrupt(format!("a stored block's header: {e}")))?;
                if !bloom.may_match(header_bloom) {
                    return Ok(());
                }
                self.collect(hash, number, txs, filter, &mut out)?;
                if out.len() > bounds.max_results {
                    return Err(LogsError::TooMany(bounds.max_results));
                }
                Ok(())
            },
        )?;
        match missing {
            // The head moved back (debug_setHead) while the range was read.
            Some(n) => Err(LogsError::NoHeader(n)),
            None => Ok(out),
        }
    }

    /// The logs that `filter` matches in the block with this hash (canonical or not), or
    /// `None` when the chain does not have that block.
    pub fn block_logs(
        &self,
        hash: &Hash,
        filter: &LogFilter,
    ) -> Result<Option<Vec<FoundLog>>, ChainError> {
        let Some(block) = self.db.block(hash)? else {
            return Ok(None);
        };
        let (header, txs) = db::split_block(&block)?;
        let header = Header::decode(header).map_err(|e| corrupt(hash, e))?;
        let mut out = Vec::new();
        if filter.may_match(&header.bloom) {
            self.collect(hash, header.number, txs, filter, &mut out)?;
        }
        Ok(Some(out))
    }

    /// Appends the logs of block `hash` (number `number`, with the transaction list `txs`)
    /// that `filter` matches to `out`. The transactions are decoded only when a log matched.
    fn collect(
        &self,
        hash: &Hash,
        number: u64,
        txs: &[u8],
        filter: &LogFilter,
        out: &mut Vec<FoundLog>,
    ) -> Result<(), ChainError> {
        let receipts = self
            .db
            .receipts(hash)?
            .ok_or_else(|| corrupt(hash, "receipts missing"))?;
        let receipts = Receipt::decode_list(&receipts).map_err(|e| corrupt(hash, e))?;
        let mut tx_hashes: Option<Vec<Hash>> = None;
        let mut log_index = 0u64;
        for (tx_index, receipt) in receipts.into_iter().enumerate() {
            for log in receipt.logs {
                if filter.matches(&log) {
                    if tx_hashes.is_none() {
                        let list = decode_tx_list(txs).map_err(|e| corrupt(hash, e))?;
                        tx_hashes = Some(list.iter().map(|t| t.hash()).collect());
                    }
                    let tx_hash = *tx_hashes
                        .as_ref()
                        .and_then(|h| h.get(tx_index))
                        .ok_or_else(|| corrupt(hash, "more receipts than transactions"))?;
                    out.push(FoundLog {
                        log,
                        block_hash: *hash,
                        block_number: number,
                        tx_hash,
                        tx_index: tx_index as u64,
                        log_index,
                    });
                }
                log_index += 1;
            }
        }
        Ok(())
    }

    /// Every transaction of the block with this hash with its sender, place and receipt
    /// (each receipt knowing the block-wide index of its first log), in block order; `None`
    /// when the chain does not have that block. Fails with [`LogsError::ReceiptCount`] when
    /// the stored receipts do not pair with the transactions.
    pub fn block_receipts(&self, hash: &Hash) -> Result<Option<Vec<TxRecord>>, LogsError> {
        let Some(block) = self.block_by_hash(hash)? else {
            return Ok(None);
        };
        let receipts = self
            .db
            .receipts(hash)?
            .ok_or_else(|| corrupt(hash, "receipts missing"))?;
        let receipts = Receipt::decode_list(&receipts).map_err(|e| corrupt(hash, e))?;
        if receipts.len() != block.transactions.len() {
            return Err(LogsError::ReceiptCount(*hash));
        }
        let (mut first_log, mut cumulative_gas) = (0u64, 0u64);
        let mut out = Vec::with_capacity(receipts.len());
        for (index, ((tx, sender), receipt)) in
            block.transactions.into_iter().zip(receipts).enumerate()
        {
            let logs = receipt.logs.len() as u64;
            cumulative_gas += receipt.gas_used;
            let contract = created_contract(&tx, &sender);
            out.push(TxRecord {
                tx,
                sender,
                location: Location {
                    block_hash: *hash,
                    block_number: block.header.number,
                    index: index as u64,
                },
                receipt: Some(SealedReceipt {
                    receipt,
                    first_log,
                    cumulative_gas,
                    contract,
                }),
            });
            first_log += logs;
        }
        Ok(Some(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::genesis::Genesis;
    use crate::chain::Chain;
    use crate::crypto::SecretKey;
    use crate::types::transaction::{Legacy, Transaction, ValueTransfer};

    fn topic(b: u8) -> Hash {
        [b; 32]
    }

    fn log(address: u8, topics: &[u8]) -> Log {
        Log {
            address: Address([address; 20]),
            topics: topics.iter().map(|&t| topic(t)).collect(),
            data: vec![],
        }
    }

    fn filter(addresses: &[u8], topics: &[&[u8]]) -> LogFilter {
        LogFilter {
            addresses: addresses.iter().map(|&a| Address([a; 20])).collect(),
            topics: topics
                .iter()
                .map(|any| any.iter().map(|&t| topic(t)).collect())
                .collect(),
        }
    }

    /// The reference's matching rules: any of the addresses; per position any of the topics
    /// or a wildcard; more positions than the log has topics never matches.
    #[test]
    fn filters_match_by_address_and_topic_position() {
        let l = log(1, &[10, 20]);
        let yes = [
            filter(&[], &[]),
            filter(&[1], &[]),
            filter(&[2, 1], &[]),
            filter(&[], &[&[10]]),
            filter(&[], &[&[], &[20]]),
            filter(&[], &[&[11, 10], &[20, 21]]),
            filter(&[1], &[&[10], &[20]]),
        ];
        for f in &yes {
            assert!(f.matches(&l), "{f:?}");
        }
        let no = [
            filter(&[2], &[]),
            filter(&[], &[&[20]]),
            filter(&[], &[&[], &[10]]),
            filter(&[], &[&[10], &[20], &[]]),
            filter(&[2], &[&[10]]),
        ];
        for f in &no {
            assert!(!f.matches(&l), "{f:?}");
        }
    }

    /// The bloom pre-filter passes every filter that could match a log of the block and
    /// (barring bloom collisions, none for these values) refuses the others.
    #[test]
    fn the_bloom_decides_whether_a_block_is_read() {
        let r = Receipt {
            status: 1,
            gas_used: 0,
            logs: vec![log(1, &[10, 20]), log(2, &[30])],
        };
        let bloom = r.bloom();
        for f in [
            filter(&[], &[]),
            filter(&[1], &[&[10]]),
            filter(&[3, 2], &[&[30]]),
            filter(&[], &[&[], &[20]]),
            // The bloom does not know which address emitted which topic.
            filter(&[2], &[&[10]]),
        ] {
            assert!(f.may_match(&bloom), "{f:?}");
        }
        for f in [
            filter(&[3], &[]),
            filter(&[], &[&[40]]),
            filter(&[1], &[&[], &[40, 41]]),
        ] {
            assert!(!f.may_match(&bloom), "{f:?}");
        }
        assert!(filter(&[], &[]).may_match(&[0; 256]));
        assert!(!filter(&[1], &[]).may_match(&[0; 256]));
    }

    /// Creation code that emits one log with topic `t` (and data the word 42) from the new
    /// contract, and leaves no code.
    fn logging_init_code(t: u8) -> Vec<u8> {
        let mut c = vec![0x60, 0x2a, 0x60, 0x00, 0x52, 0x7f];
        c.extend([t; 32]);
        c.extend([0x60, 0x20, 0x60, 0x00, 0xa1, 0x00]);
        c
    }

    struct Fixture {
        _dir: tempfile::TempDir,
        chain: Chain,
        key: SecretKey,
        nonce: u64,
    }

    impl Fixture {
        fn new() -> Fixture {
            let dir = tempfile::tempdir().unwrap();
            let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
            let mut funds = [0u8; 32];
            funds[20] = 1;
            let chain = Chain::open(dir.path(), &Genesis::dev(key.address(), funds)).unwrap();
            Fixture {
                _dir: dir,
                chain,
                key,
                nonce: 0,
            }
        }

        fn price(&self) -> [u8; 32] {
            let mut p = [0u8; 32];
            p[24..].copy_from_slice(&self.chain.unit_price().to_be_bytes());
            p
        }

        /// Submits a creation emitting a log with topic `t`; the contract's address.
        fn create(&mut self, t: u8) -> (Address, Hash) {
            let mut tx = Transaction::Legacy(Legacy {
                nonce: self.nonce,
                gas_price: self.price(),
                gas: 200_000,
                to: None,
                value: [0; 32],
                input: logging_init_code(t),
                signature: None,
            });
            tx.sign(&self.key, self.chain.chain_id());
            let address = crate::exec::create_address(&self.key.address(), self.nonce);
            self.nonce += 1;
            (address, self.chain.submit(tx).unwrap())
        }

        /// Submits a transfer (no logs).
        fn transfer(&mut self) -> Hash {
            let mut tx = Transaction::of(ValueTransfer {
                nonce: self.nonce,
                gas_price: self.price(),
                gas: 21_000,
                to: Address([0x35; 20]),
                value: [0; 32],
                from: self.key.address(),
                signatures: Vec::new(),
            });
            tx.sign(&self.key, self.chain.chain_id());
            self.nonce += 1;
            self.chain.submit(tx).unwrap()
        }

        fn seal(&self) -> Hash {
            self.chain.seal(&self.key).unwrap().unwrap()
        }
    }

    /// Block 1: a transfer, then two creations logging topics 1 and 2. Block 2: a transfer.
    /// Block 3: a creation logging topic 1.
    #[test]
    fn logs_of_a_range_carry_their_place_in_the_block() {
        let mut f = Fixture::new();
        let t0 = f.transfer();
        let (a1, t1) = f.create(1);
        let (a2, t2) = f.create(2);
        let b1 = f.seal();
        f.transfer();
        let b2 = f.seal();
        let (a3, t3) = f.create(1);
        let b3 = f.seal();
        let c = &f.chain;
        let all = c
            .logs(0, 3, &LogFilter::default(), &Bounds::standard())
            .unwrap();
        let places: Vec<_> = all
            .iter()
            .map(|l| {
                (
                    l.block_hash,
                    l.block_number,
                    l.tx_hash,
                    l.tx_index,
                    l.log_index,
                )
            })
            .collect();
        assert_eq!(
            places,
            [(b1, 1, t1, 1, 0), (b1, 1, t2, 2, 1), (b3, 3, t3, 0, 0)]
        );
        let addresses: Vec<Address> = all.iter().map(|l| l.log.address).collect();
        assert_eq!(addresses, [a1, a2, a3]);
        assert_eq!(all[0].log.topics, [topic(1)]);
        assert_eq!(all[0].log.data[31], 42);
        assert_ne!(t0, t1);
        // By topic, by address, by range.
        let one = filter(&[], &[&[1]]);
        let got = c.logs(0, 3, &one, &Bounds::standard()).unwrap();
        assert_eq!(
            got.iter().map(|l| l.log.address).collect::<Vec<_>>(),
            [a1, a3]
        );
        let by_address = LogFilter {
            addresses: vec![a2, Address([9; 20])],
            topics: vec![],
        };
        let got = c.logs(0, 3, &by_address, &Bounds::standard()).unwrap();
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].log.address, got[0].log_index), (a2, 1));
        assert_eq!(c.logs(2, 3, &one, &Bounds::standard()).unwrap().len(), 1);
        assert!(c
            .logs(2, 2, &LogFilter::default(), &Bounds::standard())
            .unwrap()
            .is_empty());
        assert!(c
            .logs(3, 2, &LogFilter::default(), &Bounds::standard())
            .unwrap()
            .is_empty());
        // One block by hash (block 2 has no logs; an unknown block is None).
        let got = c.block_logs(&b1, &LogFilter::default()).unwrap().unwrap();
        assert_eq!(got, all[..2]);
        assert_eq!(
            c.block_logs(&b2, &LogFilter::default()).unwrap(),
            Some(vec![])
        );
        assert_eq!(c.block_logs(&[7; 32], &LogFilter::default()).unwrap(), None);
    }

    #[test]
    fn a_range_past_the_head_names_the_first_missing_block() {
        let mut f = Fixture::new();
        f.create(1);
        f.seal();
        let c = &f.chain;
        let e = c
            .logs(0, 5, &LogFilter::default(), &Bounds::standard())
            .unwrap_err();
        assert_eq!(e.to_string(), "the header does not exist (block number: 2)");
        let e = c
            .logs(4, 5, &LogFilter::default(), &Bounds::standard())
            .unwrap_err();
        assert_eq!(e.to_string(), "the header does not exist (block number: 4)");
    }

    #[test]
    fn queries_stop_beyond_their_bounds() {
        let mut f = Fixture::new();
        for t in 0..3 {
            f.create(t);
        }
        f.seal();
        let c = &f.chain;
        let any = LogFilter::default();
        let bounds = |max_results| Bounds {
            max_results,
            deadline: Instant::now() + QUERY_TIMEOUT,
        };
        assert_eq!(c.logs(0, 1, &any, &bounds(3)).unwrap().len(), 3);
        let e = c.logs(0, 1, &any, &bounds(2)).unwrap_err();
        assert_eq!(e.to_string(), "query returned more than 2 results");
        assert_eq!(
            LogsError::TooMany(MAX_RESULTS).to_string(),
            "query returned more than 10000 results"
        );
        let late = Bounds {
            max_results: MAX_RESULTS,
            deadline: Instant::now(),
        };
        let e = c.logs(0, 1, &any, &late).unwrap_err();
        assert_eq!(e.to_string(), "query timeout exceeded");
    }

    /// Each receipt of a block with its transaction, place, first log index and created
    /// contract.
    #[test]
    fn a_blocks_receipts_know_their_first_log() {
        let mut f = Fixture::new();
        let (a1, t1) = f.create(1);
        let t2 = f.transfer();
        let (_, t3) = f.create(2);
        let b = f.seal();
        let records = f.chain.block_receipts(&b).unwrap().unwrap();
        let summary: Vec<_> = records
            .iter()
            .map(|r| {
                let s = r.receipt.as_ref().unwrap();
                (
                    r.tx.hash(),
                    r.location.index,
                    s.first_log,
                    s.receipt.logs.len(),
                )
            })
            .collect();
        assert_eq!(summary, [(t1, 0, 0, 1), (t2, 1, 1, 0), (t3, 2, 1, 1)]);
        assert_eq!(records[0].receipt.as_ref().unwrap().contract, Some(a1));
        assert_eq!(records[1].receipt.as_ref().unwrap().contract, None);
        assert!(records
            .iter()
            .all(|r| r.location.block_hash == b && r.location.block_number == 1));
        assert_eq!(records[0].sender, f.key.address());
        let genesis = f.chain.genesis_hash().unwrap();
        assert_eq!(f.chain.block_receipts(&genesis).unwrap().unwrap().len(), 0);
        assert!(f.chain.block_receipts(&[7; 32]).unwrap().is_none());
        // What chain_getTransactionReceipt reports agrees.
        let one = f.chain.transaction(&t3).unwrap().unwrap();
        assert_eq!(one.receipt, records[2].receipt);
        // The cumulative gas of each: the sum of the gas used so far, the same whether the
        // record comes from the block's receipts or a look-up by hash.
        let used: Vec<u64> = records
            .iter()
            .map(|r| r.receipt.as_ref().unwrap().receipt.gas_used)
            .collect();
        assert!(used.iter().all(|&g| g >= 21_000));
        for (i, r) in records.iter().enumerate() {
            let sealed = r.receipt.as_ref().unwrap();
            assert_eq!(sealed.cumulative_gas, used[..=i].iter().sum::<u64>());
            let by_hash = f.chain.transaction(&r.tx.hash()).unwrap().unwrap();
            assert_eq!(
                by_hash.receipt.unwrap().cumulative_gas,
                sealed.cumulative_gas
            );
        }
    }
}
