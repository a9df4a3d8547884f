//! The few RLP shapes the chain's encodings need, on `alloy-rlp`'s primitives: lists built
//! from encoded items, canonical integers (minimal big-endian, no leading zero), byte strings,
//! and a reader that takes the items of a list one by one and checks that it is used up.

use alloy_rlp::{Decodable, Encodable, Header};

/// Why bytes are not the RLP expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RlpError {
    #[error("rlp: {0}")]
    Rlp(String),
    #[error("rlp: input contains more than one value")]
    Trailing,
    #[error("rlp: too few elements")]
    TooFew,
    #[error("rlp: input list has too many elements")]
    TooMany,
    #[error("rlp: expected a list")]
    NotAList,
    #[error("rlp: expected a string")]
    NotAString,
    #[error("rlp: value too large")]
    TooLarge,
    /// The input's first item declares more bytes than there are (Go's `ErrValueTooLarge`,
    /// whose text clients match).
    #[error("rlp: value size exceeds available input length")]
    ValueSize,
}

impl From<alloy_rlp::Error> for RlpError {
    fn from(e: alloy_rlp::Error) -> RlpError {
        RlpError::Rlp(e.to_string())
    }
}

/// Whether the head of the item at the start of `bytes` (a list or a string) declares more
/// bytes, its length field included, than `bytes` holds.
fn declares_too_much(bytes: &[u8]) -> bool {
    let Some((&first, rest)) = bytes.split_first() else {
        return false;
    };
    let len_of_len = match first {
        0xb8..=0xbf => usize::from(first - 0xb7),
        0xf8..=0xff => usize::from(first - 0xf7),
        0x80..=0xb7 => return usize::from(first - 0x80) > rest.len(),
        0xc0..=0xf7 => return usize::from(first - 0xc0) > rest.len(),
        _ => return false,
    };
    let Some(len) = rest.get(..len_of_len) else {
        return true;
    };
    let declared = len.iter().fold(0u128, |n, &b| (n << 8) | u128::from(b));
    declared > (rest.len() - len_of_len) as u128
}

/// A list whose payload is `payload` (already encoded items).
pub fn list(payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 9);
    Header {
        list: true,
        payload_length: payload.len(),
    }
    .encode(&mut out);
    out.extend_from_slice(payload);
    out
}

/// Appends the head of a list whose payload is `payload_length` bytes.
pub fn put_list_head(out: &mut Vec<u8>, payload_length: usize) {
    Header {
        list: true,
        payload_length,
    }
    .encode(out);
}

/// Appends `bytes` as an RLP string.
pub fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    bytes.encode(out);
}

/// Appends an unsigned integer.
pub fn put_u64(out: &mut Vec<u8>, n: u64) {
    n.encode(out);
}

/// Appends a big-endian unsigned integer of any width, minimal (leading zeros dropped).
pub fn put_uint(out: &mut Vec<u8>, be: &[u8]) {
    let first = be.iter().position(|&b| b != 0).unwrap_or(be.len());
    put_bytes(out, &be[first..]);
}

/// Reads the items of one list.
pub struct ListReader<'a> {
    payload: &'a [u8],
}

impl<'a> ListReader<'a> {
    /// The list that makes up all of `bytes` (trailing bytes are an error).
    pub fn whole(bytes: &'a [u8]) -> Result<ListReader<'a>, RlpError> {
        let mut buf = bytes;
        let r = ListReader::next_of(&mut buf).map_err(|e| {
            if declares_too_much(bytes) {
                RlpError::ValueSize
            } else {
                e
            }
        })?;
        if !buf.is_empty() {
            return Err(RlpError::Trailing);
        }
        Ok(r)
    }

    /// The list at the front of `buf`, which advances past it.
    pub fn next_of(buf: &mut &'a [u8]) -> Result<ListReader<'a>, RlpError> {
        let h = Header::decode(buf)?;
        if !h.list {
            return Err(RlpError::NotAList);
        }
        let payload = buf.get(..h.payload_length).ok_or(RlpError::TooFew)?;
        *buf = &buf[h.payload_length..];
        Ok(ListReader { payload })
    }

    pub fn is_empty(&self) -> bool {
        self.payload.is_empty()
    }

    /// The next item, encoded whole (header included).
    pub fn raw(&mut self) -> Result<&'a [u8], RlpError> {
        if self.payload.is_empty() {
            return Err(RlpError::TooFew);
        }
        let start = self.payload;
        let h = Header::decode(&mut self.payload)?;
        if self.payload.len() < h.payload_length {
            return Err(RlpError::TooFew);
        }
        self.payload = &self.payload[h.payload_length..];
        Ok(&start[..start.len() - self.payload.len()])
    }

    /// The next item, a byte string.
    pub fn bytes(&mut self) -> Result<&'a [u8], RlpError> {
        if self.payload.is_empty() {
            return Err(RlpError::TooFew);
        }
        let h = Header::decode(&mut self.payload)?;
        if h.list {
            return Err(RlpError::NotAString);
        }
        let b = self
            .payload
            .get(..h.payload_length)
            .ok_or(RlpError::TooFew)?;
        self.payload = &self.payload[h.payload_length..];
        Ok(b)
    }

    /// The next item, a canonical unsigned integer of at most 64 bits.
    pub fn u64(&mut self) -> Result<u64, RlpError> {
        if self.payload.is_empty() {
            return Err(RlpError::TooFew);
        }
        Ok(u64::decode(&mut self.payload)?)
    }

    /// The next item, a canonical unsigned integer of at most 256 bits, big-endian.
    pub fn u256(&mut self) -> Result<[u8; 32], RlpError> {
        let b = self.bytes()?;
        if b.len() > 32 {
            return Err(RlpError::TooLarge);
        }
        if b.first() == Some(&0) {
            return Err(RlpError::Rlp(
                "non-canonical integer (leading zero bytes)".into(),
            ));
        }
        let mut out = [0u8; 32];
        out[32 - b.len()..].copy_from_slice(b);
        Ok(out)
    }

    /// The next item, a list.
    pub fn list(&mut self) -> Result<ListReader<'a>, RlpError> {
        if self.payload.is_empty() {
            return Err(RlpError::TooFew);
        }
        ListReader::next_of(&mut self.payload)
    }

    /// Fails unless every item was read.
    pub fn end(&self) -> Result<(), RlpError> {
        if self.payload.is_empty() {
            Ok(())
        } else {
            Err(RlpError::TooMany)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A head that promises more than the input holds reads as Go's decoder words it.
    #[test]
    fn a_value_larger_than_the_input() {
        let text = |b: &[u8]| ListReader::whole(b).err().map(|e| e.to_string());
        let value_size = Some("rlp: value size exceeds available input length".to_string());
        // A list head with 8 length bytes, of which 1 is there.
        assert_eq!(text(&[0xff, 0xff]), value_size);
        // A list of 3 bytes with 2.
        assert_eq!(text(&[0xc3, 0x01, 0x02]), value_size);
        // A list of 56 bytes (long form) with 1.
        assert_eq!(text(&[0xf8, 0x38, 0x01]), value_size);
        assert_eq!(text(&[0xc2, 0x01, 0x02]), None);
        assert_eq!(text(&[]), Some("rlp: input too short".to_string()));
    }
}
