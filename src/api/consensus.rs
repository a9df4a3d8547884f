//! The `chain` methods of the BFT consensus (the reference's Istanbul API extension, which it
//! serves under `klay`): `chain_getCouncil`, `chain_getCouncilSize`, `chain_getCommittee`,
//! `chain_getCommitteeSize`, `chain_getBlockWithConsensusInfoByNumber` and `ByHash`, and
//! `chain_rewardbase`. A chain here has one validator, named in every block's extra data: it
//! is the council and the committee of every block, the proposer and the one committer.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::error::{Error, Result};
use super::goparams::{BlockTag, HashParam};
use super::logs::Missing;
use super::method::{opt, p, Method, Namespace, ParamKind as K};
use crate::chain::{BlockRecord, Chain};
use crate::crypto::Address;
use crate::method;
use crate::rpc::{Call, Params, RpcError};
use crate::types::block::{BftExtra, Header};
use crate::types::json::BlockJson;

/// The consensus methods of the `chain` namespace.
pub struct ConsensusApi {
    /// `None` on a node started without a chain.
    chain: Option<Arc<Chain>>,
    /// The validator this node seals as (`--dev`); `None` on a node that does not seal.
    sealer: Option<Address>,
}

impl Namespace for ConsensusApi {
    const MODULE: &'static str = "chain";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "chain_rewardbase",
            [],
            "The address the fees of the blocks this node seals go to (its validator)",
            "address: the validator's reward address",
            Self::rewardbase
        ),
        method!(
            "chain_getCouncil",
            [opt("block", K::Any)],
            "The validators of a block (latest by default)",
            "array of addresses: the council at the block",
            Self::council
        ),
        method!(
            "chain_getCouncilSize",
            [opt("block", K::Any)],
            "How many validators a block has (latest by default)",
            "number: the council's size",
            Self::council_size
        ),
        method!(
            "chain_getCommittee",
            [opt("block", K::Any)],
            "The validators that agreed on a block (latest by default)",
            "array of addresses: the committee at the block",
            Self::committee
        ),
        method!(
            "chain_getCommitteeSize",
            [opt("block", K::Any)],
            "How many validators agreed on a block (latest by default)",
            "number: the committee's size",
            Self::committee_size
        ),
        method!(
            "chain_getBlockWithConsensusInfoByNumber",
            [opt("block", K::Any)],
            "A block by number with its receipts and who proposed and committed it",
            "object: the block with its proposer, committee and round",
            Self::block_with_consensus_by_number
        ),
        method!(
            "chain_getBlockWithConsensusInfoByHash",
            [p("hash", K::Hash)],
            "A block by hash with its receipts and who proposed and committed it",
            "object: the block with its proposer, committee and round",
            Self::block_with_consensus_by_hash
        ),
    ];
}

fn server(text: impl Into<String>) -> Error {
    Error::Rpc(RpcError::server(text))
}

fn encode<T: serde::Serialize>(v: &T) -> Result<Value> {
    serde_json::to_value(v).map_err(|e| server(format!("cannot encode the block: {e}")))
}

/// `0x` + lower-case hex.
fn hex0x(b: &[u8]) -> String {
    format!("0x{}", hex::encode(b))
}

impl ConsensusApi {
    pub fn new(chain: Option<Arc<Chain>>, sealer: Option<Address>) -> ConsensusApi {
        ConsensusApi { chain, sealer }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// `chain_rewardbase`: the validator this node seals as, which every block it seals names
    /// as rewardbase; the reference's error on a node that does not seal.
    fn rewardbase(&self, _: &Call, _: &Params) -> Result<Address> {
        self.sealer
            .ok_or_else(|| server("rewardbase must be explicitly specified"))
    }

    /// The header of the canonical block an optional block parameter names (absent or
    /// `null`: the head), with the reference's texts: `pending is not allowed`, `unknown
    /// block`.
    fn header(&self, p: &Params) -> Result<Header> {
        let tag: Option<BlockTag> = p.optional(0)?;
        let chain = self.chain()?;
        let n = match tag {
            Some(BlockTag::Pending) => return Err(server("pending is not allowed")),
            Some(t) => t.resolve(chain.head_number()),
            None => chain.head_number(),
        };
        let (_, header) = chain.header_at(n)?.ok_or_else(|| server("unknown block"))?;
        Ok(header)
    }

    /// The validators a header's extra data names (the genesis's, or the one that sealed the
    /// block).
    fn validators(header: &Header) -> Result<Vec<Address>> {
        Ok(BftExtra::decode(&header.extra)
            .map_err(|_| {
                server("extract Istanbul Extra from block header of the given block number")
            })?
            .validators)
    }

    /// The validators that agreed on the block of `p` (after genesis, checked by recovering
    /// its proposer from its seal, as the reference does); with one validator, the council.
    fn committee_of(&self, p: &Params) -> Result<Vec<Address>> {
        let header = self.header(p)?;
        if header.number > 0 {
            header.sealers().map_err(|e| server(e.to_string()))?;
        }
        Self::validators(&header)
    }

    /// `chain_getCouncil(block?)`: the block's validators.
    fn council(&self, _: &Call, p: &Params) -> Result<Vec<Address>> {
        Self::validators(&self.header(p)?)
    }

    /// `chain_getCouncilSize(block?)`.
    fn council_size(&self, _: &Call, p: &Params) -> Result<usize> {
        Ok(Self::validators(&self.header(p)?)?.len())
    }

    /// `chain_getCommittee(block?)`.
    fn committee(&self, _: &Call, p: &Params) -> Result<Vec<Address>> {
        self.committee_of(p)
    }

    /// `chain_getCommitteeSize(block?)`.
    fn committee_size(&self, _: &Call, p: &Params) -> Result<usize> {
        Ok(self.committee_of(p)?.len())
    }

    /// `chain_getBlockWithConsensusInfoByNumber(block)`: as the reference, the block
    /// parameter is required (`block number is not assigned`) and may not be `pending`.
    fn block_with_consensus_by_number(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<BTreeMap<String, Value>> {
        let Some(tag) = p.optional::<BlockTag>(0)? else {
            return Err(server("block number is not assigned"));
        };
        if tag == BlockTag::Pending {
            return Err(server("pending is not allowed"));
        }
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        let block = chain
            .block_by_number(Some(n))?
            .ok_or(Missing::BlockNumber(n))?;
        self.with_consensus(block)
    }

    /// `chain_getBlockWithConsensusInfoByHash(hash)`.
    fn block_with_consensus_by_hash(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<BTreeMap<String, Value>> {
        let HashParam(hash) = p.required(0)?;
        let block = self
            .chain()?
            .block_by_hash(&hash)?
            .ok_or(Missing::BlockHash(hash))?;
        self.with_consensus(block)
    }

    /// The reference's object: the block's fields (as `chain_getBlockByHash` gives them),
    /// `transactions` holding the receipt objects, and `committee`, `committers`, `sigHash`,
    /// `proposer`, `round`, `originProposer` (zero and null for genesis). A Go map: keys in
    /// byte order.
    fn with_consensus(&self, block: BlockRecord) -> Result<BTreeMap<String, Value>> {
        let chain = self.chain()?;
        let hash = block.hash;
        let json = BlockJson::new(
            hash,
            &block.header,
            &block.transactions,
            block.size,
            chain.total_block_score(block.header.number),
            false,
        );
        let Value::Object(fields) = encode(&json)? else {
            return Err(server("cannot encode the block"));
        };
        let mut out: BTreeMap<String, Value> = fields.into_iter().collect();
        let receipts: Vec<_> = chain
            .block_receipts(&hash)?
            .ok_or(Missing::BlockHash(hash))?
            .into_iter()
            .filter_map(super::chain::receipt_json)
            .collect();
        out.insert("transactions".into(), encode(&receipts)?);
        let zero = |n: usize| Value::String(hex0x(&vec![0; n]));
        let addresses = |list: Vec<Address>| {
            Value::Array(list.iter().map(|a| Value::String(hex0x(&a.0))).collect())
        };
        if block.header.number == 0 {
            out.insert("committee".into(), Value::Null);
            out.insert("committers".into(), Value::Null);
            out.insert("sigHash".into(), zero(32));
            out.insert("proposer".into(), zero(20));
            out.insert("originProposer".into(), zero(20));
            out.insert("round".into(), Value::from(0));
        } else {
            let s = block.header.sealers().map_err(|e| server(e.to_string()))?;
            // One validator: the proposer of round 0 is the validator, as is every round's.
            let origin = s.validators.first().copied().unwrap_or(s.proposer);
            out.insert("committee".into(), addresses(s.validators));
            out.insert("committers".into(), addresses(s.committers));
            out.insert("sigHash".into(), Value::String(hex0x(&s.sig_hash)));
            out.insert("proposer".into(), Value::String(hex0x(&s.proposer.0)));
            out.insert("originProposer".into(), Value::String(hex0x(&origin.0)));
            out.insert("round".into(), Value::from(s.round));
        }
        Ok(out)
    }
}
