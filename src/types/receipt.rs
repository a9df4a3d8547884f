//! Receipts and log blooms (reference section 10.6).

use super::rlp::{list, put_bytes, put_u64, ListReader, RlpError};
use crate::crypto::{keccak256, Address};

/// A log entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Log {
    pub address: Address,
    pub topics: Vec<[u8; 32]>,
    pub data: Vec<u8>,
}

/// A receipt: status 1 for success, else the error code (2-0x1e); gas used; logs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub status: u64,
    pub gas_used: u64,
    pub logs: Vec<Log>,
}

/// The status of a successful transaction.
pub const STATUS_SUCCESS: u64 = 1;

/// Sets the three bloom bits of `x` (Ethereum's 2048-bit log bloom).
pub fn bloom_add(bloom: &mut [u8; 256], x: &[u8]) {
    let h = keccak256(x);
    for i in [0, 2, 4] {
        let bit = ((usize::from(h[i]) << 8) | usize::from(h[i + 1])) & 2047;
        bloom[255 - bit / 8] |= 1 << (bit % 8);
    }
}

/// Whether the three bloom bits of `x` are all set in `bloom`: false means no log with `x`
/// (as its address or a topic) went into it; true means one may have.
pub fn bloom_contains(bloom: &[u8; 256], x: &[u8]) -> bool {
    BloomBits::of(x).set_in(bloom)
}

/// The three bloom bits of a value (an address or a topic), worked out once: where a query
/// tests many blocks' blooms for the same values, it hashes each value once, not per block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BloomBits([(u8, u8); 3]);

impl BloomBits {
    /// The bits of `x`: three 11-bit numbers from Keccak-256(x), each a byte and a mask.
    pub fn of(x: &[u8]) -> BloomBits {
        let h = keccak256(x);
        let bit = |i: usize| ((usize::from(h[i]) << 8) | usize::from(h[i + 1])) & 2047;
        let at = |i: usize| ((255 - bit(i) / 8) as u8, 1u8 << (bit(i) % 8));
        BloomBits([at(0), at(2), at(4)])
    }

    /// Whether all three bits are set in `bloom`.
    pub fn set_in(&self, bloom: &[u8; 256]) -> bool {
        self.0
            .iter()
            .all(|&(byte, mask)| bloom[usize::from(byte)] & mask != 0)
    }
}

impl Receipt {
    /// The bloom of this receipt's logs.
    pub fn bloom(&self) -> [u8; 256] {
        let mut b = [0u8; 256];
        for log in &self.logs {
            bloom_add(&mut b, &log.address.0);
            for t in &log.topics {
                bloom_add(&mut b, t);
            }
        }
        b
    }

    /// `RLP([status, gasUsed, bloom, logs])`, what the receipts root is made of.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(300);
        put_u64(&mut p, self.status);
        put_u64(&mut p, self.gas_used);
        put_bytes(&mut p, &self.bloom());
        let mut logs = Vec::new();
        for log in &self.logs {
            let mut l = Vec::new();
            put_bytes(&mut l, &log.address.0);
            let mut topics = Vec::new();
            for t in &log.topics {
                put_bytes(&mut topics, t);
            }
            l.extend_from_slice(&list(&topics));
            put_bytes(&mut l, &log.data);
            logs.extend_from_slice(&list(&l));
        }
        p.extend_from_slice(&list(&logs));
        list(&p)
    }

    /// Reads one receipt of [`Receipt::encode`]'s form from `r` (the bloom is not kept: it
    /// is a function of the logs).
    pub fn decode_from(r: &mut ListReader<'_>) -> Result<Receipt, RlpError> {
        let mut one = r.list()?;
        let status = one.u64()?;
        let gas_used = one.u64()?;
        let _bloom = one.bytes()?;
        let mut logs_r = one.list()?;
        let mut logs = Vec::new();
        while !logs_r.is_empty() {
            let mut l = logs_r.list()?;
            let a = l.bytes()?;
            let address = Address(
                a.try_into()
                    .map_err(|_| RlpError::Rlp(format!("a log address of {} bytes", a.len())))?,
            );
            let mut tr = l.list()?;
            let mut topics = Vec::new();
            while !tr.is_empty() {
                let t = tr.bytes()?;
                topics.push(
                    t.try_into()
                        .map_err(|_| RlpError::Rlp(format!("a topic of {} bytes", t.len())))?,
                );
            }
            let data = l.bytes()?.to_vec();
            l.end()?;
            logs.push(Log {
                address,
                topics,
                data,
            });
        }
        one.end()?;
        Ok(Receipt {
            status,
            gas_used,
            logs,
        })
    }

    /// Every receipt of a stored receipt list (`RLP([receipt, ...])`).
    pub fn decode_list(bytes: &[u8]) -> Result<Vec<Receipt>, RlpError> {
        let mut r = ListReader::whole(bytes)?;
        let mut out = Vec::new();
        while !r.is_empty() {
            out.push(Receipt::decode_from(&mut r)?);
        }
        Ok(out)
    }
}

/// The OR of the receipts' blooms: a block header's bloom.
pub fn block_bloom(receipts: &[Receipt]) -> [u8; 256] {
    let mut b = [0u8; 256];
    for r in receipts {
        for (x, y) in b.iter_mut().zip(r.bloom()) {
            *x |= y;
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Section 10.6: a successful value-transfer receipt is `f90108 01 825208 b90100 <256
    /// zero bytes> c0` (267 bytes).
    #[test]
    fn a_value_transfer_receipt_encodes_as_the_reference() {
        let r = Receipt {
            status: STATUS_SUCCESS,
            gas_used: 21_000,
            logs: Vec::new(),
        };
        let mut want = hex::decode("f9010801825208b90100").unwrap();
        want.extend([0u8; 256]);
        want.push(0xc0);
        assert_eq!(r.encode(), want);
        assert_eq!(want.len(), 267);
    }

    /// Receipts with logs decode back from their stored list; the block bloom has the bits
    /// of every log's address and topics.
    #[test]
    fn receipts_with_logs_round_trip() {
        let a = Receipt {
            status: STATUS_SUCCESS,
            gas_used: 50_000,
            logs: vec![Log {
                address: Address([1; 20]),
                topics: vec![[2; 32], [3; 32]],
                data: vec![4, 5],
            }],
        };
        let b = Receipt {
            status: 9,
            gas_used: 21_000,
            logs: vec![],
        };
        let mut payload = a.encode();
        payload.extend(b.encode());
        let stored = list(&payload);
        assert_eq!(Receipt::decode_list(&stored).unwrap(), vec![a.clone(), b]);
        let bloom = block_bloom(std::slice::from_ref(&a));
        let mut only_address = [0u8; 256];
        bloom_add(&mut only_address, &[1; 20]);
        assert!(bloom.iter().zip(only_address).all(|(x, y)| x & y == y));
        assert!(bloom.iter().map(|b| b.count_ones()).sum::<u32>() <= 9);
        assert_ne!(bloom, [0; 256]);
        assert!(bloom_contains(&bloom, &[1; 20]));
        assert!(bloom_contains(&bloom, &[2; 32]) && bloom_contains(&bloom, &[3; 32]));
        assert!(!bloom_contains(&only_address, &[2; 32]));
        assert!(!bloom_contains(&[0; 256], &[1; 20]));
    }
}
