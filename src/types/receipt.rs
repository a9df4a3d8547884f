//! Receipts and log blooms (reference section 10.6).

use super::rlp::{list, put_bytes, put_u64};
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
}
