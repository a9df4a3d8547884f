//! Block headers, the BFT extra data, block hashes, block RLP and the transactions and
//! receipts roots (reference section 10). Decoders are pure functions of the bytes that
//! never panic.

use super::rlp::{list, put_bytes, put_u64, put_uint, ListReader, RlpError};
use super::transaction::{Transaction, TxError, U256};
use crate::crypto::{keccak256, Address};
use crate::trie::{MemoryStore, Trie};

/// A block header (section 10.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub parent_hash: [u8; 32],
    pub rewardbase: Address,
    pub state_root: [u8; 32],
    pub transactions_root: [u8; 32],
    pub receipts_root: [u8; 32],
    pub bloom: Box<[u8; 256]>,
    pub block_score: U256,
    pub number: u64,
    pub gas_used: u64,
    pub time: u64,
    pub time_fos: u8,
    pub extra: Vec<u8>,
    pub governance: Vec<u8>,
    pub vote: Vec<u8>,
    /// From the Magma fork on.
    pub base_fee: Option<U256>,
    /// From the Randao fork on (96 bytes).
    pub random_reveal: Option<Vec<u8>>,
    /// From the Randao fork on (32 bytes).
    pub mix_hash: Option<Vec<u8>>,
}

/// Why bytes are not a header or a block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlockError {
    #[error(transparent)]
    Rlp(#[from] RlpError),
    #[error("transaction {index}: {source}")]
    Transaction {
        index: usize,
        #[source]
        source: TxError,
    },
    #[error("{0}")]
    Field(&'static str),
}

fn fixed<const N: usize>(b: &[u8], what: &'static str) -> Result<[u8; N], BlockError> {
    b.try_into().map_err(|_| BlockError::Field(what))
}

fn small(v: U256, what: &'static str) -> Result<u64, BlockError> {
    if v[..24].iter().any(|&b| b != 0) {
        return Err(BlockError::Field(what));
    }
    Ok(u64::from_be_bytes(v[24..].try_into().expect("8 bytes")))
}

impl Header {
    /// The header's RLP: fields 0-13, then the optional ones up to the last present.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(600);
        put_bytes(&mut p, &self.parent_hash);
        put_bytes(&mut p, &self.rewardbase.0);
        put_bytes(&mut p, &self.state_root);
        put_bytes(&mut p, &self.transactions_root);
        put_bytes(&mut p, &self.receipts_root);
        put_bytes(&mut p, &self.bloom[..]);
        put_uint(&mut p, &self.block_score);
        put_u64(&mut p, self.number);
        put_u64(&mut p, self.gas_used);
        put_u64(&mut p, self.time);
        put_u64(&mut p, u64::from(self.time_fos));
        put_bytes(&mut p, &self.extra);
        put_bytes(&mut p, &self.governance);
        put_bytes(&mut p, &self.vote);
        let randao = self.random_reveal.is_some() || self.mix_hash.is_some();
        if self.base_fee.is_some() || randao {
            match &self.base_fee {
                Some(f) => put_uint(&mut p, f),
                None => put_bytes(&mut p, &[]),
            }
        }
        if randao {
            put_bytes(&mut p, self.random_reveal.as_deref().unwrap_or(&[]));
            put_bytes(&mut p, self.mix_hash.as_deref().unwrap_or(&[]));
        }
        list(&p)
    }

    /// Reads a header from a list reader positioned on it.
    fn read(r: &mut ListReader<'_>) -> Result<Header, BlockError> {
        let parent_hash = fixed(r.bytes()?, "parentHash is not 32 bytes")?;
        let rewardbase = Address(fixed(r.bytes()?, "reward is not 20 bytes")?);
        let state_root = fixed(r.bytes()?, "stateRoot is not 32 bytes")?;
        let transactions_root = fixed(r.bytes()?, "transactionsRoot is not 32 bytes")?;
        let receipts_root = fixed(r.bytes()?, "receiptsRoot is not 32 bytes")?;
        let bloom = Box::new(fixed(r.bytes()?, "logsBloom is not 256 bytes")?);
        let block_score = r.u256()?;
        let number = small(r.u256()?, "number does not fit 64 bits")?;
        let gas_used = r.u64()?;
        let time = small(r.u256()?, "timestamp does not fit 64 bits")?;
        let time_fos =
            u8::try_from(r.u64()?).map_err(|_| BlockError::Field("timestampFoS is not a byte"))?;
        let extra = r.bytes()?.to_vec();
        let governance = r.bytes()?.to_vec();
        let vote = r.bytes()?.to_vec();
        let mut h = Header {
            parent_hash,
            rewardbase,
            state_root,
            transactions_root,
            receipts_root,
            bloom,
            block_score,
            number,
            gas_used,
            time,
            time_fos,
            extra,
            governance,
            vote,
            base_fee: None,
            random_reveal: None,
            mix_hash: None,
        };
        if !r.is_empty() {
            h.base_fee = Some(r.u256()?);
            if !r.is_empty() {
                h.random_reveal = Some(r.bytes()?.to_vec());
                h.mix_hash = Some(r.bytes()?.to_vec());
            }
        }
        r.end()?;
        Ok(h)
    }

    /// The logs bloom of an encoded header, read without decoding the rest (a log query
    /// tests thousands of blocks' blooms and reads little else of them).
    pub fn bloom_of(bytes: &[u8]) -> Result<&[u8; 256], BlockError> {
        let mut r = ListReader::whole(bytes)?;
        for _ in 0..5 {
            r.raw()?;
        }
        r.bytes()?
            .try_into()
            .map_err(|_| BlockError::Field("logsBloom is not 256 bytes"))
    }

    /// Decodes a whole header.
    pub fn decode(bytes: &[u8]) -> Result<Header, BlockError> {
        let mut r = ListReader::whole(bytes)?;
        Header::read(&mut r)
    }

    /// The block hash (section 10.4): with BFT extra data, the header with round 0 and the
    /// committed seals emptied; otherwise the plain hash of the header.
    pub fn hash(&self) -> [u8; 32] {
        match BftExtra::decode(&self.extra) {
            Ok(mut bft) => {
                bft.round = 0;
                bft.committed_seals.clear();
                let mut copy = self.clone();
                copy.extra = bft.encode();
                keccak256(&copy.encode())
            }
            Err(_) => keccak256(&self.encode()),
        }
    }

    /// The reference's `sigHash`: keccak256(RLP(header')) with round 0, the seal and the
    /// committed seals emptied. `None` without BFT extra data.
    pub fn sig_hash(&self) -> Option<[u8; 32]> {
        let mut bft = BftExtra::decode(&self.extra).ok()?;
        bft.round = 0;
        bft.seal.clear();
        bft.committed_seals.clear();
        let mut copy = self.clone();
        copy.extra = bft.encode();
        Some(keccak256(&copy.encode()))
    }

    /// What the proposer signs: keccak256 of [`Header::sig_hash`]. `None` without BFT extra
    /// data.
    pub fn seal_hash(&self) -> Option<[u8; 32]> {
        self.sig_hash().map(|h| keccak256(&h))
    }

    /// Who made and committed this block, read from its seals (the reference's consensus
    /// information of a block after genesis). Fails when the extra data is not BFT extra
    /// data or a seal does not recover.
    pub fn sealers(&self) -> Result<Sealers, BlockError> {
        let extra = BftExtra::decode(&self.extra)?;
        let sig_hash = self
            .sig_hash()
            .ok_or(BlockError::Field("extra data is not BFT extra data"))?;
        let recover = |hash: &[u8; 32], seal: &[u8]| {
            let rs: &[u8; 64] = seal
                .get(..64)
                .and_then(|s| s.try_into().ok())
                .filter(|_| seal.len() == 65)
                .ok_or(BlockError::Field("a seal is not 65 bytes"))?;
            crate::crypto::recover_address(hash, rs, seal[64])
                .map_err(|_| BlockError::Field("a seal does not recover"))
        };
        let proposer = recover(&keccak256(&sig_hash), &extra.seal)?;
        let mut commit = self.hash().to_vec();
        commit.push(COMMIT_MESSAGE);
        let commit_hash = keccak256(&commit);
        let committers = extra
            .committed_seals
            .iter()
            .map(|s| recover(&commit_hash, s))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Sealers {
            sig_hash,
            proposer,
            committers,
            validators: extra.validators,
            round: extra.round,
        })
    }
}

/// The byte after the block hash in what a committed seal signs (the BFT commit message's
/// code).
pub const COMMIT_MESSAGE: u8 = 0x02;

/// Who made and committed a block ([`Header::sealers`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealers {
    /// The reference's `sigHash` ([`Header::sig_hash`]).
    pub sig_hash: [u8; 32],
    /// The signer of the proposer seal.
    pub proposer: Address,
    /// The signer of each committed seal, in order.
    pub committers: Vec<Address>,
    /// The validators the extra data names.
    pub validators: Vec<Address>,
    /// The round the block was agreed in.
    pub round: u8,
}

/// The BFT extra data: 32 bytes of vanity (the last one the round), then
/// `RLP([validators, seal, committedSeals])`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BftExtra {
    /// The first 31 vanity bytes.
    pub vanity: [u8; 31],
    pub round: u8,
    pub validators: Vec<Address>,
    pub seal: Vec<u8>,
    pub committed_seals: Vec<Vec<u8>>,
}

impl BftExtra {
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + 64 + 70 * (1 + self.committed_seals.len()));
        out.extend_from_slice(&self.vanity);
        out.push(self.round);
        let mut vals = Vec::new();
        for v in &self.validators {
            put_bytes(&mut vals, &v.0);
        }
        let mut seals = Vec::new();
        for s in &self.committed_seals {
            put_bytes(&mut seals, s);
        }
        let mut p = list(&vals);
        put_bytes(&mut p, &self.seal);
        p.extend_from_slice(&list(&seals));
        out.extend_from_slice(&list(&p));
        out
    }

    /// Decodes extra data of this layout exactly; anything else is an error.
    pub fn decode(extra: &[u8]) -> Result<BftExtra, BlockError> {
        if extra.len() < 32 {
            return Err(BlockError::Field("extra data shorter than 32 bytes"));
        }
        let mut r = ListReader::whole(&extra[32..])?;
        let mut vals = r.list()?;
        let mut validators = Vec::new();
        while !vals.is_empty() {
            validators.push(Address(fixed(
                vals.bytes()?,
                "a validator is not 20 bytes",
            )?));
        }
        let seal = r.bytes()?.to_vec();
        let mut seals = r.list()?;
        let mut committed_seals = Vec::new();
        while !seals.is_empty() {
            committed_seals.push(seals.bytes()?.to_vec());
        }
        r.end()?;
        Ok(BftExtra {
            vanity: extra[..31].try_into().expect("31 bytes"),
            round: extra[31],
            validators,
            seal,
            committed_seals,
        })
    }
}

/// A block: its header and its transactions (section 10.2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    pub header: Header,
    pub transactions: Vec<Transaction>,
}

/// The transaction list's RLP: each transaction's raw encoding, concatenated, in a list.
pub fn encode_tx_list(txs: &[Transaction]) -> Vec<u8> {
    let mut p = Vec::new();
    for t in txs {
        p.extend_from_slice(&t.encode());
    }
    list(&p)
}

/// Decodes a transaction list (a legacy transaction is one list item; a typed one, its type
/// byte then its body list; an Ethereum typed one, the envelope byte 0x78, its type byte and
/// its body list: three items, as the reference's `TxInternalDataSerializer` reads them).
pub fn decode_tx_list(bytes: &[u8]) -> Result<Vec<Transaction>, BlockError> {
    let mut txs = ListReader::whole(bytes)?;
    let mut transactions = Vec::new();
    while !txs.is_empty() {
        let index = transactions.len();
        let first = txs.raw()?;
        let raw = if first.first().is_some_and(|&b| b >= 0xc0) {
            first.to_vec()
        } else {
            // A type (an integer), then the body list; Ethereum's types are the envelope's
            // 0x78, Ethereum's type, then the body.
            let mut raw = first.to_vec();
            if first == [super::ethereum::ENVELOPE] {
                raw.extend_from_slice(txs.raw()?);
            }
            raw.extend_from_slice(txs.raw()?);
            raw
        };
        let tx = Transaction::decode(&raw)
            .map_err(|source| BlockError::Transaction { index, source })?;
        transactions.push(tx);
    }
    Ok(transactions)
}

impl Block {
    /// `RLP([header, txList])`.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = self.header.encode();
        p.extend_from_slice(&encode_tx_list(&self.transactions));
        list(&p)
    }

    /// Decodes a whole block.
    pub fn decode(bytes: &[u8]) -> Result<Block, BlockError> {
        let mut r = ListReader::whole(bytes)?;
        let mut hr = r.list()?;
        let header = Header::read(&mut hr)?;
        let txs = r.raw()?;
        r.end()?;
        let transactions = decode_tx_list(txs)?;
        Ok(Block {
            header,
            transactions,
        })
    }

    pub fn hash(&self) -> [u8; 32] {
        self.header.hash()
    }
}

/// How a list of encodings is hashed into a root (governance `deriveshaimpl`, section 10.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeriveSha {
    /// 0: a Merkle Patricia Trie keyed by RLP(index).
    Original,
    /// 1: pairwise Keccak of the items' hashes.
    Simple,
    /// 2: Keccak of the concatenation.
    Concat,
}

impl DeriveSha {
    /// The method of governance code `code`.
    pub fn from_code(code: u64) -> Option<DeriveSha> {
        match code {
            0 => Some(DeriveSha::Original),
            1 => Some(DeriveSha::Simple),
            2 => Some(DeriveSha::Concat),
            _ => None,
        }
    }

    /// The root of `items` (transaction or receipt encodings).
    pub fn root(self, items: &[Vec<u8>]) -> [u8; 32] {
        match self {
            DeriveSha::Original => {
                let store = MemoryStore::default();
                let mut trie = Trie::new(&store);
                for (i, item) in items.iter().enumerate() {
                    let mut key = Vec::new();
                    put_u64(&mut key, i as u64);
                    trie.insert(&key, item.clone())
                        .expect("an in-memory trie built here needs no stored node");
                }
                trie.root_hash()
            }
            DeriveSha::Simple => {
                let mut level: Vec<[u8; 32]> = items.iter().map(|i| keccak256(i)).collect();
                if level.is_empty() {
                    return keccak256(&[]);
                }
                while level.len() > 1 {
                    if level.len() % 2 == 1 {
                        level.push(*level.last().expect("not empty"));
                    }
                    level = level
                        .chunks(2)
                        .map(|p| keccak256(&[&p[0][..], &p[1][..]].concat()))
                        .collect();
                }
                level[0]
            }
            DeriveSha::Concat => keccak256(&items.concat()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In a block, a native typed transaction is two items (type, body) and an Ethereum one
    /// three (0x78, its type, body); a legacy one is one list. All come back.
    #[test]
    fn transaction_lists_of_every_shape() {
        use crate::crypto::SecretKey;
        use crate::types::transaction::{Base, Ethereum, FeeMode, Legacy, Native};
        let key = SecretKey::from_slice(&[0x46; 32]).unwrap();
        let mut eth = Transaction::Ethereum(Ethereum {
            dynamic: true,
            chain_id: 1001,
            nonce: 2,
            gas_tip_cap: [1; 32],
            gas_fee_cap: [1; 32],
            gas: 30_000,
            to: Some(Address([0x35; 20])),
            value: [0; 32],
            input: vec![1, 2],
            access_list: Vec::new(),
            signature: None,
        });
        eth.sign(&key, 1001);
        let mut fd = Native::new(Base::ValueTransfer, FeeMode::Ratio(30), key.address());
        fd.to = Some(Address([0x35; 20]));
        fd.fee_payer = key.address();
        let mut fd = Transaction::Native(fd);
        fd.sign(&key, 1001);
        assert!(fd.sign_as_fee_payer(&key, 1001));
        let mut legacy = Transaction::Legacy(Legacy {
            nonce: 0,
            gas_price: [0; 32],
            gas: 21_000,
            to: None,
            value: [0; 32],
            input: vec![0x60],
            signature: None,
        });
        legacy.sign(&key, 1001);
        let txs = vec![eth.clone(), fd, legacy, eth];
        assert_eq!(decode_tx_list(&encode_tx_list(&txs)).unwrap(), txs);
    }

    fn header() -> Header {
        Header {
            parent_hash: [1; 32],
            rewardbase: Address([2; 20]),
            state_root: [3; 32],
            transactions_root: [4; 32],
            receipts_root: [5; 32],
            bloom: Box::new([0; 256]),
            block_score: [0; 32],
            number: 7,
            gas_used: 0,
            time: 9,
            time_fos: 0,
            extra: Vec::new(),
            governance: Vec::new(),
            vote: Vec::new(),
            base_fee: None,
            random_reveal: None,
            mix_hash: None,
        }
    }

    /// The payload items of a header's RLP.
    fn items(h: &Header) -> Vec<Vec<u8>> {
        let enc = h.encode();
        let mut r = ListReader::whole(&enc).unwrap();
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(r.raw().unwrap().to_vec());
        }
        out
    }

    /// Reference 10.1: 14, 15 or 17 fields decode; 13, 16 and 18 do not.
    #[test]
    fn header_field_counts() {
        let mut randao = header();
        randao.random_reveal = Some(vec![0; 96]);
        randao.mix_hash = Some(vec![0; 32]);
        let all = items(&randao);
        assert_eq!(all.len(), 17);
        for n in 13..=18 {
            let mut fields: Vec<Vec<u8>> = all.iter().take(n).cloned().collect();
            if n == 18 {
                fields.push(vec![0x80]);
            }
            let decoded = Header::decode(&list(&fields.concat()));
            assert_eq!(decoded.is_ok(), matches!(n, 14 | 15 | 17), "{n} fields");
        }
        let mut magma = header();
        magma.base_fee = Some([0; 32]);
        assert_eq!(Header::decode(&magma.encode()).unwrap(), magma);
        assert_eq!(Header::decode(&header().encode()).unwrap(), header());
    }

    /// The bloom read alone is the header's; a header cut short is an error, not a panic.
    #[test]
    fn a_headers_bloom_is_read_without_decoding_the_rest() {
        let mut h = header();
        for (i, b) in h.bloom.iter_mut().enumerate() {
            *b = i as u8;
        }
        let enc = h.encode();
        assert_eq!(Header::bloom_of(&enc).unwrap(), &*h.bloom);
        let five: Vec<Vec<u8>> = items(&h).into_iter().take(5).collect();
        assert!(Header::bloom_of(&list(&five.concat())).is_err());
        let mut short = items(&h);
        short[5] = vec![0x81, 0x01];
        assert!(Header::bloom_of(&list(&short.concat())).is_err());
    }

    /// Extra data that is not the BFT layout hashes by the plain rule, and is refused as BFT.
    #[test]
    fn extra_data_that_is_not_bft() {
        for extra in [vec![0; 31], vec![0; 32], [vec![0; 32], vec![0xc0]].concat()] {
            let mut h = header();
            h.extra = extra.clone();
            assert!(BftExtra::decode(&extra).is_err(), "{extra:02x?}");
            assert_eq!(h.hash(), keccak256(&h.encode()));
            assert_eq!(h.seal_hash(), None);
        }
        let bft = BftExtra {
            vanity: [0; 31],
            round: 3,
            validators: vec![Address([9; 20])],
            seal: vec![1; 65],
            committed_seals: vec![vec![2; 65]],
        };
        assert_eq!(BftExtra::decode(&bft.encode()).unwrap(), bft);
    }

    /// The seals name who signed them: the proposer's seal over keccak256(sigHash), each
    /// committed seal over keccak256(hash ‖ 0x02); the round and validators come from the
    /// extra data. Signed here by hand with two keys, so that the two signers differ.
    #[test]
    fn sealers_are_read_from_the_seals() {
        let proposer = crate::crypto::SecretKey::from_slice(&[0x11; 32]).unwrap();
        let committer = crate::crypto::SecretKey::from_slice(&[0x22; 32]).unwrap();
        let mut h = header();
        let mut extra = BftExtra {
            vanity: [0; 31],
            round: 2,
            validators: vec![proposer.address(), committer.address()],
            seal: Vec::new(),
            committed_seals: Vec::new(),
        };
        h.extra = extra.encode();
        let sig_hash = h.sig_hash().unwrap();
        // sigHash is the plain Keccak-256 of the header with round 0 and no seals.
        let mut plain = h.clone();
        extra.round = 0;
        plain.extra = extra.encode();
        assert_eq!(sig_hash, keccak256(&plain.encode()));
        extra.round = 2;
        extra.seal = proposer.sign_hash(&keccak256(&sig_hash)).to_vec();
        h.extra = extra.encode();
        let mut commit = h.hash().to_vec();
        commit.push(0x02);
        extra.committed_seals = vec![committer.sign_hash(&keccak256(&commit)).to_vec()];
        h.extra = extra.encode();
        let s = h.sealers().unwrap();
        assert_eq!(s.sig_hash, sig_hash);
        assert_eq!(s.proposer, proposer.address());
        assert_eq!(s.committers, vec![committer.address()]);
        assert_eq!(s.validators, vec![proposer.address(), committer.address()]);
        assert_eq!(s.round, 2);
        extra.seal = vec![1; 64];
        h.extra = extra.encode();
        assert_eq!(
            h.sealers().unwrap_err().to_string(),
            "a seal is not 65 bytes"
        );
    }
}
