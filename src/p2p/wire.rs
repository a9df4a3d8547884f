//! The peer protocol's messages and their encoding, as pure functions over bytes (a fuzzer
//! calls [`decode`] directly).
//!
//! Each message is one RLP list, `[code, fields...]`. Raw chain data (a block's RLP, a signed
//! transaction) travels as an RLP byte string wrapping those bytes unchanged, so the
//! protocol never re-encodes what the chain stores and a block's hash is that of the bytes
//! received. The decoder takes nothing on trust: trailing bytes, an unknown code, a missing
//! or extra field and counts over the limits below are errors, and it never panics.

use alloy_rlp::Encodable;

use crate::types::rlp::{self as rlp, ListReader, RlpError};

/// The name of the protocol, as a capability is written: `istanbul/65`.
pub const PROTOCOL_NAME: &str = "istanbul";
/// The protocol version this node speaks.
pub const PROTOCOL_VERSION: u64 = 65;

/// Most blocks in one [`Message::Blocks`].
pub const MAX_BLOCKS: usize = 10_000;
/// Most transactions in one [`Message::Transactions`].
pub const MAX_TXS: usize = 100_000;
/// Longest node name in a [`Status`], in bytes.
pub const MAX_NAME: usize = 256;
/// Most capabilities in a [`Status`].
pub const MAX_CAPS: usize = 16;

/// The message codes, the first item of every message.
mod code {
    pub const STATUS: u64 = 0;
    pub const DISCONNECT: u64 = 1;
    pub const PING: u64 = 2;
    pub const PONG: u64 = 3;
    pub const GET_BLOCKS: u64 = 4;
    pub const BLOCKS: u64 = 5;
    pub const NEW_BLOCK: u64 = 6;
    pub const TRANSACTIONS: u64 = 7;
}

/// What a node says of itself when a connection opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The protocol version, [`PROTOCOL_VERSION`].
    pub version: u64,
    pub network_id: u64,
    /// The genesis block's hash.
    pub genesis: [u8; 32],
    /// The head block's hash and number.
    pub head: [u8; 32],
    pub head_number: u64,
    /// The head's total block score.
    pub blockscore: u128,
    /// The node name (`Chain/v0.1.0/linux-amd64/...`), at most [`MAX_NAME`] bytes.
    pub name: String,
    /// Capabilities as `<name>/<version>`, for example `istanbul/65`; at most [`MAX_CAPS`].
    pub caps: Vec<String>,
    /// The TCP port the node listens on (0: none).
    pub listen_port: u16,
}

/// A peer protocol message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// The first message each side sends.
    Status(Status),
    /// The sender is closing the connection, and why.
    Disconnect {
        reason: String,
    },
    /// Asks for the canonical blocks `from .. from + count`.
    GetBlocks {
        from: u64,
        count: u64,
    },
    /// Blocks, each its RLP exactly as stored and exported; at most [`MAX_BLOCKS`].
    Blocks {
        blocks: Vec<Vec<u8>>,
    },
    /// A freshly sealed block's RLP.
    NewBlock {
        block: Vec<u8>,
    },
    /// Signed transactions, each as `chain_sendRawTransaction` takes it; at most [`MAX_TXS`].
    Transactions {
        txs: Vec<Vec<u8>>,
    },
    Ping,
    Pong,
}

impl Message {
    /// The message's name, as errors and logs show it.
    pub fn kind(&self) -> &'static str {
        match self {
            Message::Status(_) => "status",
            Message::Disconnect { .. } => "disconnect",
            Message::GetBlocks { .. } => "getBlocks",
            Message::Blocks { .. } => "blocks",
            Message::NewBlock { .. } => "newBlock",
            Message::Transactions { .. } => "transactions",
            Message::Ping => "ping",
            Message::Pong => "pong",
        }
    }
}

/// Why bytes are not a message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WireError {
    #[error("empty message")]
    Empty,
    #[error("malformed message: {0}")]
    Rlp(RlpError),
    #[error("message is not an RLP list")]
    NotList,
    #[error("{0} trailing bytes after the message")]
    Trailing(usize),
    #[error("message has no code")]
    NoCode,
    #[error("bad message code: {0}")]
    BadCode(RlpError),
    #[error("unknown message code {0}")]
    UnknownCode(u64),
    #[error("{kind} message has too few fields")]
    TooFewFields { kind: &'static str },
    #[error("{kind} message has too many fields")]
    TooManyFields { kind: &'static str },
    #[error("{kind} message: bad {field}: {why}")]
    Field {
        kind: &'static str,
        field: &'static str,
        why: String,
    },
    #[error("{kind} message: more than {max} {what}")]
    TooMany {
        kind: &'static str,
        what: &'static str,
        max: usize,
    },
    #[error("{kind} message: {field} longer than {max} bytes")]
    TooLong {
        kind: &'static str,
        field: &'static str,
        max: usize,
    },
}

/// Why a peer's status rules it out.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatusMismatch {
    #[error("protocol version mismatch: ours {ours}, theirs {theirs}")]
    Version { ours: u64, theirs: u64 },
    #[error("network id mismatch: ours {ours}, theirs {theirs}")]
    NetworkId { ours: u64, theirs: u64 },
    #[error("genesis mismatch: ours {}, theirs {}", crate::crypto::to_hex0x(.ours), crate::crypto::to_hex0x(.theirs))]
    Genesis { ours: [u8; 32], theirs: [u8; 32] },
}

/// The RLP of `m`: the list `[code, fields...]`. Never fails; the limits are the decoder's.
pub fn encode(m: &Message) -> Vec<u8> {
    let mut p = Vec::new();
    match m {
        Message::Status(s) => {
            rlp::put_u64(&mut p, code::STATUS);
            rlp::put_u64(&mut p, s.version);
            rlp::put_u64(&mut p, s.network_id);
            rlp::put_bytes(&mut p, &s.genesis);
            rlp::put_bytes(&mut p, &s.head);
            rlp::put_u64(&mut p, s.head_number);
            rlp::put_uint(&mut p, &s.blockscore.to_be_bytes());
            rlp::put_bytes(&mut p, s.name.as_bytes());
            let mut caps = Vec::new();
            for c in &s.caps {
                rlp::put_bytes(&mut caps, c.as_bytes());
            }
            p.extend_from_slice(&rlp::list(&caps));
            rlp::put_u64(&mut p, u64::from(s.listen_port));
        }
        Message::Disconnect { reason } => {
            rlp::put_u64(&mut p, code::DISCONNECT);
            rlp::put_bytes(&mut p, reason.as_bytes());
        }
        Message::GetBlocks { from, count } => {
            rlp::put_u64(&mut p, code::GET_BLOCKS);
            rlp::put_u64(&mut p, *from);
            rlp::put_u64(&mut p, *count);
        }
        Message::Blocks { blocks } => {
            rlp::put_u64(&mut p, code::BLOCKS);
            put_byte_strings(&mut p, blocks);
        }
        Message::NewBlock { block } => {
            rlp::put_u64(&mut p, code::NEW_BLOCK);
            rlp::put_bytes(&mut p, block);
        }
        Message::Transactions { txs } => {
            rlp::put_u64(&mut p, code::TRANSACTIONS);
            put_byte_strings(&mut p, txs);
        }
        Message::Ping => rlp::put_u64(&mut p, code::PING),
        Message::Pong => rlp::put_u64(&mut p, code::PONG),
    }
    rlp::list(&p)
}

/// Appends a list of byte strings, its length computed first so nothing is copied twice.
fn put_byte_strings(out: &mut Vec<u8>, items: &[Vec<u8>]) {
    let len: usize = items.iter().map(|b| b.as_slice().length()).sum();
    out.reserve(len + 9);
    rlp::put_list_head(out, len);
    for b in items {
        rlp::put_bytes(out, b);
    }
}

/// Decodes one message that makes up all of `b`. Fails with a [`WireError`] for empty input,
/// malformed or truncated RLP, trailing bytes, an unknown code, a missing or extra field, a
/// field of the wrong shape, and counts or lengths over [`MAX_BLOCKS`], [`MAX_TXS`],
/// [`MAX_NAME`] and [`MAX_CAPS`]. Never panics, whatever the input.
pub fn decode(b: &[u8]) -> Result<Message, WireError> {
    if b.is_empty() {
        return Err(WireError::Empty);
    }
    let mut rest = b;
    let list = ListReader::next_of(&mut rest).map_err(|e| match e {
        RlpError::NotAList => WireError::NotList,
        e => WireError::Rlp(e),
    })?;
    if !rest.is_empty() {
        return Err(WireError::Trailing(rest.len()));
    }
    let mut list = list;
    if list.is_empty() {
        return Err(WireError::NoCode);
    }
    let code = list.u64().map_err(WireError::BadCode)?;
    let kind = match code {
        code::STATUS => "status",
        code::DISCONNECT => "disconnect",
        code::PING => "ping",
        code::PONG => "pong",
        code::GET_BLOCKS => "getBlocks",
        code::BLOCKS => "blocks",
        code::NEW_BLOCK => "newBlock",
        code::TRANSACTIONS => "transactions",
        other => return Err(WireError::UnknownCode(other)),
    };
    let mut f = Fields { list, kind };
    let m = match code {
        code::STATUS => Message::Status(status(&mut f)?),
        code::DISCONNECT => Message::Disconnect {
            reason: f.string("reason")?,
        },
        code::PING => Message::Ping,
        code::PONG => Message::Pong,
        code::GET_BLOCKS => Message::GetBlocks {
            from: f.u64("from")?,
            count: f.u64("count")?,
        },
        code::BLOCKS => Message::Blocks {
            blocks: f.byte_strings("blocks", MAX_BLOCKS)?,
        },
        code::NEW_BLOCK => Message::NewBlock {
            block: f.bytes("block")?.to_vec(),
        },
        code::TRANSACTIONS => Message::Transactions {
            txs: f.byte_strings("transactions", MAX_TXS)?,
        },
        _ => unreachable!("every known code has a kind above"),
    };
    if !f.list.is_empty() {
        return Err(WireError::TooManyFields { kind });
    }
    Ok(m)
}

fn status(f: &mut Fields<'_>) -> Result<Status, WireError> {
    let version = f.u64("version")?;
    let network_id = f.u64("network id")?;
    let genesis = f.hash("genesis")?;
    let head = f.hash("head")?;
    let head_number = f.u64("head number")?;
    let blockscore = f.u128("blockscore")?;
    let name = f.string("name")?;
    if name.len() > MAX_NAME {
        return Err(WireError::TooLong {
            kind: f.kind,
            field: "name",
            max: MAX_NAME,
        });
    }
    let mut caps_list = f.list("caps")?;
    let mut caps = Vec::new();
    while !caps_list.is_empty() {
        if caps.len() == MAX_CAPS {
            return Err(f.too_many("caps", MAX_CAPS));
        }
        let c = caps_list.bytes().map_err(|e| f.bad("caps", e))?;
        let c = std::str::from_utf8(c).map_err(|_| f.bad("caps", "not UTF-8"))?;
        caps.push(c.to_string());
    }
    let port = f.u64("listen port")?;
    let listen_port = u16::try_from(port).map_err(|_| f.bad("listen port", "over 65535"))?;
    Ok(Status {
        version,
        network_id,
        genesis,
        head,
        head_number,
        blockscore,
        name,
        caps,
        listen_port,
    })
}

/// The fields of one message after its code, read in order with errors naming the field.
struct Fields<'a> {
    list: ListReader<'a>,
    kind: &'static str,
}

impl<'a> Fields<'a> {
    fn bad(&self, field: &'static str, why: impl ToString) -> WireError {
        WireError::Field {
            kind: self.kind,
            field,
            why: why.to_string(),
        }
    }

    fn too_many(&self, what: &'static str, max: usize) -> WireError {
        WireError::TooMany {
            kind: self.kind,
            what,
            max,
        }
    }

    /// Fails with `TooFewFields` when the message has run out.
    fn present(&self) -> Result<(), WireError> {
        if self.list.is_empty() {
            Err(WireError::TooFewFields { kind: self.kind })
        } else {
            Ok(())
        }
    }

    fn u64(&mut self, field: &'static str) -> Result<u64, WireError> {
        self.present()?;
        self.list.u64().map_err(|e| self.bad(field, e))
    }

    fn u128(&mut self, field: &'static str) -> Result<u128, WireError> {
        let b = self.bytes(field)?;
        if b.len() > 16 {
            return Err(self.bad(field, "over 128 bits"));
        }
        if b.first() == Some(&0) {
            return Err(self.bad(field, "leading zero bytes"));
        }
        let mut be = [0u8; 16];
        be[16 - b.len()..].copy_from_slice(b);
        Ok(u128::from_be_bytes(be))
    }

    fn bytes(&mut self, field: &'static str) -> Result<&'a [u8], WireError> {
        self.present()?;
        self.list.bytes().map_err(|e| self.bad(field, e))
    }

    fn hash(&mut self, field: &'static str) -> Result<[u8; 32], WireError> {
        let b = self.bytes(field)?;
        b.try_into()
            .map_err(|_| self.bad(field, format!("{} bytes, want 32", b.len())))
    }

    fn string(&mut self, field: &'static str) -> Result<String, WireError> {
        let b = self.bytes(field)?;
        std::str::from_utf8(b)
            .map(str::to_string)
            .map_err(|_| self.bad(field, "not UTF-8"))
    }

    fn list(&mut self, field: &'static str) -> Result<ListReader<'a>, WireError> {
        self.present()?;
        self.list.list().map_err(|e| self.bad(field, e))
    }

    /// A list of byte strings, refused as soon as it holds more than `max`.
    fn byte_strings(&mut self, field: &'static str, max: usize) -> Result<Vec<Vec<u8>>, WireError> {
        let mut items = self.list(field)?;
        let mut out = Vec::new();
        while !items.is_empty() {
            if out.len() == max {
                return Err(self.too_many(field, max));
            }
            out.push(items.bytes().map_err(|e| self.bad(field, e))?.to_vec());
        }
        Ok(out)
    }
}

/// Checks that a peer's status is of our network: the protocol version, the network id and
/// the genesis hash must all be ours. Returns the first that differs, in that order.
pub fn check_status(ours: &Status, theirs: &Status) -> Result<(), StatusMismatch> {
    if ours.version != theirs.version {
        return Err(StatusMismatch::Version {
            ours: ours.version,
            theirs: theirs.version,
        });
    }
    if ours.network_id != theirs.network_id {
        return Err(StatusMismatch::NetworkId {
            ours: ours.network_id,
            theirs: theirs.network_id,
        });
    }
    if ours.genesis != theirs.genesis {
        return Err(StatusMismatch::Genesis {
            ours: ours.genesis,
            theirs: theirs.genesis,
        });
    }
    Ok(())
}

/// A status with every field set, for the p2p modules' tests.
#[cfg(test)]
pub(crate) fn example_status() -> Status {
    Status {
        version: PROTOCOL_VERSION,
        network_id: 8217,
        genesis: [0x11; 32],
        head: [0x22; 32],
        head_number: 123_456,
        blockscore: u128::MAX - 5,
        name: "Chain/v0.1.0/linux-amd64/rustc1.95".into(),
        caps: vec![format!("{PROTOCOL_NAME}/64"), format!("{PROTOCOL_NAME}/65")],
        listen_port: 32323,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::keccak256;

    fn every_variant() -> Vec<Message> {
        vec![
            Message::Status(example_status()),
            Message::Status(Status {
                version: 0,
                network_id: 0,
                genesis: [0; 32],
                head: [0; 32],
                head_number: 0,
                blockscore: 0,
                name: String::new(),
                caps: vec![],
                listen_port: 0,
            }),
            Message::Disconnect {
                reason: "too many peers".into(),
            },
            Message::Disconnect {
                reason: String::new(),
            },
            Message::GetBlocks {
                from: 0,
                count: u64::MAX,
            },
            Message::Blocks { blocks: vec![] },
            Message::Blocks {
                blocks: vec![vec![0xc0], vec![], vec![0x01], vec![0xf9; 300]],
            },
            Message::NewBlock {
                block: vec![0xf8, 0x40, 0xaa],
            },
            Message::Transactions {
                txs: vec![vec![0x02; 100], vec![0xf8; 3]],
            },
            Message::Ping,
            Message::Pong,
        ]
    }

    #[test]
    fn every_variant_round_trips() {
        for m in every_variant() {
            let b = encode(&m);
            assert_eq!(decode(&b).unwrap(), m, "{}", m.kind());
        }
    }

    #[test]
    fn small_messages_have_the_bytes_worked_out_by_hand() {
        // [4, 1, 128]: code 4 is 0x04, 1 is 0x01, 128 a one-byte string 0x81 0x80;
        // a payload of 4 bytes makes the list head 0xc0 + 4.
        assert_eq!(
            encode(&Message::GetBlocks {
                from: 1,
                count: 128
            }),
            [0xc4, 0x04, 0x01, 0x81, 0x80]
        );
        // [2]: a one-byte list.
        assert_eq!(encode(&Message::Ping), [0xc1, 0x02]);
        // [5, ["\xc0"]]: the block 0xc0 wrapped as a string is 0x81 0xc0, in a list c2;
        // the payload 05 c2 81 c0 is 4 bytes.
        assert_eq!(
            encode(&Message::Blocks {
                blocks: vec![vec![0xc0]]
            }),
            [0xc4, 0x05, 0xc2, 0x81, 0xc0]
        );
        // [1, "ab"]: code 0x01, the string 0x82 'a' 'b'.
        assert_eq!(
            encode(&Message::Disconnect {
                reason: "ab".into()
            }),
            [0xc4, 0x01, 0x82, b'a', b'b']
        );
    }

    #[test]
    fn malformed_input_is_refused_with_a_clear_message() {
        let e = |b: &[u8]| decode(b).unwrap_err().to_string();
        assert_eq!(e(&[]), "empty message");
        assert_eq!(e(&[0x02]), "message is not an RLP list");
        assert_eq!(e(&[0xc0]), "message has no code");
        assert_eq!(e(&[0xc1, 0x63]), "unknown message code 99");
        assert_eq!(e(&[0xc1, 0xc0]), "bad message code: rlp: unexpected list");
        // Truncated: the list head promises more than there is.
        let get = encode(&Message::GetBlocks { from: 1, count: 2 });
        assert_eq!(
            e(&get[..get.len() - 1]),
            "malformed message: rlp: input too short"
        );
        let mut trailing = get.clone();
        trailing.extend_from_slice(&[0xc0, 0x00]);
        assert_eq!(e(&trailing), "2 trailing bytes after the message");
        assert_eq!(
            e(&[0xc2, 0x04, 0x01]),
            "getBlocks message has too few fields"
        );
        assert_eq!(
            e(&[0xc4, 0x04, 0x01, 0x02, 0x03]),
            "getBlocks message has too many fields"
        );
        assert_eq!(e(&[0xc2, 0x02, 0x80]), "ping message has too many fields");
        assert_eq!(
            e(&[0xc3, 0x04, 0x00, 0x01]),
            "getBlocks message: bad from: rlp: leading zero"
        );
        assert_eq!(
            e(&[0xc3, 0x06, 0xc1, 0x01]),
            "newBlock message: bad block: rlp: expected a string"
        );
        assert_eq!(
            e(&[0xc3, 0x01, 0x81, 0xff]),
            "disconnect message: bad reason: not UTF-8"
        );
    }

    #[test]
    fn counts_and_lengths_over_the_limits_are_refused() {
        let e = |m: &Message| decode(&encode(m)).unwrap_err().to_string();
        let ok = Message::Blocks {
            blocks: vec![vec![]; MAX_BLOCKS],
        };
        assert_eq!(decode(&encode(&ok)).unwrap(), ok);
        assert_eq!(
            e(&Message::Blocks {
                blocks: vec![vec![]; MAX_BLOCKS + 1]
            }),
            "blocks message: more than 10000 blocks"
        );
        let ok = Message::Transactions {
            txs: vec![vec![1]; MAX_TXS],
        };
        assert_eq!(decode(&encode(&ok)).unwrap(), ok);
        assert_eq!(
            e(&Message::Transactions {
                txs: vec![vec![1]; MAX_TXS + 1]
            }),
            "transactions message: more than 100000 transactions"
        );
        let mut s = example_status();
        s.name = "n".repeat(MAX_NAME);
        assert!(decode(&encode(&Message::Status(s.clone()))).is_ok());
        s.name.push('n');
        assert_eq!(
            e(&Message::Status(s)),
            "status message: name longer than 256 bytes"
        );
        let mut s = example_status();
        s.caps = vec!["x/1".into(); MAX_CAPS];
        assert!(decode(&encode(&Message::Status(s.clone()))).is_ok());
        s.caps.push("x/1".into());
        assert_eq!(e(&Message::Status(s)), "status message: more than 16 caps");
    }

    #[test]
    fn status_fields_of_the_wrong_shape_are_refused() {
        // The listen port is the last field: replace its encoding by 65536.
        let mut b = encode(&Message::Status(example_status()));
        let port = 32323u64.length();
        b.truncate(b.len() - port);
        65536u64.encode(&mut b);
        let mut p = b[2..].to_vec(); // the head is 2 bytes for this size (0xf8, len)
        p = rlp::list(&p);
        assert_eq!(
            decode(&p).unwrap_err().to_string(),
            "status message: bad listen port: over 65535"
        );
    }

    #[test]
    fn check_status_names_what_differs() {
        let ours = example_status();
        assert_eq!(check_status(&ours, &ours.clone()), Ok(()));
        let mut t = ours.clone();
        t.version = 64;
        assert_eq!(
            check_status(&ours, &t).unwrap_err().to_string(),
            "protocol version mismatch: ours 65, theirs 64"
        );
        let mut t = ours.clone();
        t.network_id = 1;
        assert_eq!(
            check_status(&ours, &t).unwrap_err().to_string(),
            "network id mismatch: ours 8217, theirs 1"
        );
        let mut t = ours.clone();
        t.genesis = [0xab; 32];
        assert_eq!(
            check_status(&ours, &t).unwrap_err().to_string(),
            format!(
                "genesis mismatch: ours 0x{}, theirs 0x{}",
                "11".repeat(32),
                "ab".repeat(32)
            )
        );
        // The head, name and caps may differ.
        let mut t = ours.clone();
        t.head = [0; 32];
        t.name = "other".into();
        t.caps.clear();
        assert_eq!(check_status(&ours, &t), Ok(()));
    }

    /// Without proptest among the dev-dependencies: every prefix of every encoding, and a few
    /// thousand mutations from a fixed Keccak stream, decode to a value or an error, never a
    /// panic; whatever decodes encodes back to the same bytes (the encoding is canonical).
    #[test]
    fn no_input_makes_decode_panic() {
        let mut seed = keccak256(b"wire mutations");
        let mut next = || {
            seed = keccak256(&seed);
            seed
        };
        for m in every_variant() {
            let b = encode(&m);
            for n in 0..b.len() {
                assert!(decode(&b[..n]).is_err());
            }
            for _ in 0..500 {
                let r = next();
                let mut x = b.clone();
                let at = usize::from(u16::from_be_bytes([r[0], r[1]])) % x.len();
                match r[2] % 3 {
                    0 => x[at] ^= r[3] | 1,
                    1 => x.insert(at, r[3]),
                    _ => {
                        x.remove(at);
                    }
                }
                if let Ok(m) = decode(&x) {
                    assert_eq!(encode(&m), x, "re-encoding {x:02x?}");
                }
            }
        }
        for _ in 0..5000 {
            let r = next();
            let len = usize::from(r[0] % 32);
            let _ = decode(&r[1..1 + len]);
        }
    }
}
