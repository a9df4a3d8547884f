//! `eth`: the reference's Ethereum-compatible namespace (its `EthereumAPI`), so that
//! Ethereum's tools (cast, ethers, web3.py, wallets) talk to the node unchanged. Most methods
//! answer what their `chain_` counterpart answers; blocks, headers, transactions and receipts
//! come in Ethereum's shape ([`super::ethjson`]); a block, header or transaction the chain
//! does not have is `null`, not an error, as Ethereum's clients expect; raw transactions are
//! Ethereum's own encodings (the reference's 0x78 envelope byte added on the way in and
//! removed on the way out); the proof-of-work methods answer as a chain without mining does.

use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::callargs::EthTxArgs;
use super::chain::{ChainApi, ChainFeeds};
use super::contract::{block_param, ContractApi};
use super::error::{Error, Result};
use super::ethargs::signed_json;
use super::ethjson::{self, Shape};
use super::fees::FeeApi;
use super::goparams::{BlockRef, BlockTag, HashParam, Index};
use super::logs::LogsApi;
use super::method::{opt, p, Method, Namespace, ParamKind as K, Subscription};
use super::HexOut;
use crate::chain::{BlockRecord, Chain};
use crate::crypto::Address;
use crate::method;
use crate::rpc::{Call, FeedKind, HexBytes, Params, RpcError};
use crate::types::transaction::Transaction;

/// The `eth` namespace: the `chain` namespaces it answers through, and the node's address.
pub struct EthApi {
    chain_api: Arc<ChainApi>,
    contract: Arc<ContractApi>,
    logs: Arc<LogsApi>,
    fees: Arc<FeeApi>,
    feeds: Arc<ChainFeeds>,
    chain: Option<Arc<Chain>>,
    /// `eth_coinbase`: the address this node seals as, else its node key's.
    node_address: Address,
}

const BLOCK: super::method::ParamSpec = p("block", K::String);
const HASH: super::method::ParamSpec = p("hash", K::Hash);
const FULL: super::method::ParamSpec = p("fullTransactions", K::Bool);
const INDEX: super::method::ParamSpec = p("index", K::String);
const ADDRESS: super::method::ParamSpec = p("address", K::Address);
const STATE_BLOCK: super::method::ParamSpec = p("block", K::Any);
const ARGS: super::method::ParamSpec = p("args", K::Object);

impl Namespace for EthApi {
    const MODULE: &'static str = "eth";
    const METHODS: &'static [Method<Self>] = &[
        method!("eth_chainId", [], "The chain id (EIP-155)", "string: a 0x quantity", Self::chain_id),
        method!("eth_blockNumber", [], "The number of the head block", "string: a 0x quantity", Self::block_number),
        method!("eth_syncing", [], "false, or where a sync from a peer is", "false, or object: startingBlock, currentBlock, highestBlock, ...", Self::syncing),
        method!("eth_accounts", [], "The addresses of the keystore", "array of addresses", Self::accounts),
        method!("eth_coinbase", [], "The address this node seals blocks as (else its node key's)", "string: an address", Self::coinbase),
        method!("eth_etherbase", [], "The same as eth_coinbase", "string: an address", Self::coinbase),
        method!("eth_mining", [], "Whether the node mines: always false (no proof of work)", "bool: false", Self::mining),
        method!("eth_hashrate", [], "The proof-of-work hash rate: always 0", "string: 0x0", Self::hashrate),
        method!("eth_getHashrate", [], "The proof-of-work hash rate as a number: always 0", "number: 0", Self::get_hashrate),
        method!("eth_getWork", [], "Proof-of-work work: always the error no mining work available yet", "an error", Self::get_work),
        method!("eth_submitWork", [p("nonce", K::Bytes), p("powHash", K::Hash), p("mixDigest", K::Hash)], "Submit proof-of-work: always false", "bool: false", Self::submit_work),
        method!("eth_submitHashrate", [p("rate", K::String), p("id", K::Hash)], "Submit a hash rate: always false", "bool: false", Self::submit_hashrate),
        method!("eth_gasPrice", [], "The gas price to use (the unit price)", "string: a 0x quantity", Self::gas_price),
        method!("eth_maxPriorityFeePerGas", [], "The tip an EIP-1559 transaction should carry (the unit price)", "string: a 0x quantity", Self::max_priority_fee_per_gas),
        method!("eth_feeHistory", [p("blockCount", K::Any), p("lastBlock", K::String), p("rewardPercentiles", K::Any)], "Base fees, gas used ratios and tips at percentiles of up to 1024 blocks ending at lastBlock", "object: oldestBlock, reward, baseFeePerGas, gasUsedRatio", Self::fee_history),
        method!("eth_upperBoundGasPrice", [], "The highest gas price the chain accepts (the unit price)", "string: a 0x quantity", Self::gas_price),
        method!("eth_lowerBoundGasPrice", [], "The lowest gas price the chain accepts (the unit price)", "string: a 0x quantity", Self::gas_price),
        method!("eth_getBalance", [ADDRESS, STATE_BLOCK], "The balance of an account at a block", "string: a 0x quantity", Self::get_balance),
        method!("eth_getTransactionCount", [ADDRESS, STATE_BLOCK], "The nonce of an account at a block (pending: counting the pool)", "string: a 0x quantity", Self::get_transaction_count),
        method!("eth_getCode", [ADDRESS, STATE_BLOCK], "The code of an account at a block", "string: 0x-hex code", Self::get_code),
        method!("eth_getStorageAt", [ADDRESS, p("key", K::String), STATE_BLOCK], "A storage slot of a contract at a block, as 32 bytes", "string: 32 bytes, 0x-hex", Self::get_storage_at),
        method!("eth_call", [ARGS, STATE_BLOCK, opt("stateOverrides", K::Object)], "Run a message against the state of a block without sending it; what it returns", "string: the output, 0x-hex", Self::call),
        method!("eth_estimateGas", [ARGS, opt("block", K::Any)], "The least gas a message needs to succeed", "string: a 0x quantity", Self::estimate_gas),
        method!("eth_getBlockByNumber", [BLOCK, FULL], "A block in Ethereum's shape by number (or latest, earliest, pending); null when the chain lacks it", "block object, or null", Self::get_block_by_number),
        method!("eth_getBlockByHash", [HASH, FULL], "A block in Ethereum's shape by hash; null when unknown", "block object, or null", Self::get_block_by_hash),
        method!("eth_getHeaderByNumber", [BLOCK], "A header in Ethereum's shape by number; null when the chain lacks it", "header object, or null", Self::get_header_by_number),
        method!("eth_getHeaderByHash", [HASH], "A header in Ethereum's shape by hash; null when unknown", "header object, or null", Self::get_header_by_hash),
        method!("eth_getBlockTransactionCountByNumber", [BLOCK], "The number of transactions of a block by number; null when the chain lacks it", "string: a 0x quantity, or null", Self::count_by_number),
        method!("eth_getBlockTransactionCountByHash", [HASH], "The number of transactions of a block by hash; null when unknown", "string: a 0x quantity, or null", Self::count_by_hash),
        method!("eth_getUncleCountByBlockNumber", [BLOCK], "The number of uncles of a block: 0 (null when the chain lacks it)", "string: 0x0, or null", Self::uncle_count_by_number),
        method!("eth_getUncleCountByBlockHash", [HASH], "The number of uncles of a block: 0 (null when unknown)", "string: 0x0, or null", Self::uncle_count_by_hash),
        method!("eth_getUncleByBlockNumberAndIndex", [BLOCK, INDEX], "An uncle: always null (no uncles here)", "null", Self::uncle_by_number),
        method!("eth_getUncleByBlockHashAndIndex", [HASH, INDEX], "An uncle: always null (no uncles here)", "null", Self::uncle_by_hash),
        method!("eth_getTransactionByHash", [HASH], "A transaction in Ethereum's shape by hash, sealed or pending; null when unknown", "transaction object, or null", Self::get_transaction_by_hash),
        method!("eth_getTransactionByBlockNumberAndIndex", [BLOCK, INDEX], "A transaction by block number and index; null past the block's last", "transaction object, or null", Self::tx_by_number_and_index),
        method!("eth_getTransactionByBlockHashAndIndex", [HASH, INDEX], "A transaction by block hash and index; null past the block's last", "transaction object, or null", Self::tx_by_hash_and_index),
        method!("eth_getRawTransactionByHash", [HASH], "A transaction's bytes in Ethereum's encoding; 0x when unknown", "string: 0x-hex", Self::raw_by_hash),
        method!("eth_getRawTransactionByBlockNumberAndIndex", [BLOCK, INDEX], "A transaction's bytes by block number and index", "string: 0x-hex", Self::raw_by_number_and_index),
        method!("eth_getRawTransactionByBlockHashAndIndex", [HASH, INDEX], "A transaction's bytes by block hash and index", "string: 0x-hex", Self::raw_by_hash_and_index),
        method!("eth_getTransactionReceipt", [HASH], "The receipt of a sealed transaction in Ethereum's shape; null when pending or unknown", "receipt object, or null", Self::get_transaction_receipt),
        method!("eth_getBlockReceipts", [STATE_BLOCK], "The receipts of a block's transactions in Ethereum's shape", "array of receipt objects", Self::get_block_receipts),
        method!("eth_sendRawTransaction", [p("tx", K::Bytes)], "Submit a signed transaction in Ethereum's encoding (legacy, EIP-2930, EIP-1559) or the reference's; its hash", "string: the transaction hash", Self::send_raw_transaction),
        method!("eth_sendTransaction", [ARGS], "Sign a legacy, EIP-2930 or EIP-1559 transaction with an unlocked account and submit it (EIP-1559 at the unit price unless gasPrice is given); its hash", "string: the transaction hash", Self::send_transaction),
        method!("eth_signTransaction", [ARGS], "Sign a transaction with an unlocked account without sending it (gas, a price and nonce required): {raw, tx}", "object: raw (0x-hex) and tx", Self::sign_transaction),
        method!("eth_fillTransaction", [ARGS], "Fill in a transaction's defaults without signing it: {raw, tx}", "object: raw (0x-hex, unsigned) and tx", Self::fill_transaction),
        method!("eth_sign", [ADDRESS, p("message", K::Bytes)], "Sign a message with an unlocked account (the reference's Klaytn-prefixed hash)", "string: the 65-byte signature, 0x-hex", Self::sign),
        method!("eth_pendingTransactions", [], "The pool's transactions sent from this node's accounts", "array of transaction objects", Self::pending_transactions),
        method!("eth_getProof", [ADDRESS, p("storageKeys", K::Any), STATE_BLOCK], "The Merkle proof of a contract account and some of its storage slots at a block (EIP-1186)", "object: address, accountProof, balance, codeHash, nonce, storageHash, storageProof", Self::get_proof),
        method!("eth_createAccessList", [ARGS, opt("block", K::Any)], "The EIP-2930 access list a message touches, and the gas it uses with that list", "object: accessList, gasUsed, and error when the message fails", Self::create_access_list),
        method!("eth_getLogs", [p("criteria", K::Object)], "The logs matching {fromBlock, toBlock | blockHash, address, topics}", "array of log objects", Self::get_logs),
        method!("eth_newFilter", [p("criteria", K::Object)], "Install a filter of the logs of new blocks; its id", "string: the filter id", Self::new_filter),
        method!("eth_newBlockFilter", [], "Install a filter of the hashes of new blocks; its id", "string: the filter id", Self::new_block_filter),
        method!("eth_newPendingTransactionFilter", [], "Install a filter of the hashes of transactions entering the pool; its id", "string: the filter id", Self::new_pending_transaction_filter),
        method!("eth_getFilterChanges", [p("id", K::String)], "What a filter found since it was last polled", "array of hashes or log objects", Self::get_filter_changes),
        method!("eth_getFilterLogs", [p("id", K::String)], "Every log matching a log filter's criteria", "array of log objects", Self::get_filter_logs),
        method!("eth_uninstallFilter", [p("id", K::String)], "Remove a filter; false when there is no such filter", "bool", Self::uninstall_filter),
    ];
    const SUBSCRIPTIONS: &'static [Subscription<Self>] = &[
        Subscription {
            name: "newHeads",
            summary: "Each new block header, in Ethereum's shape",
            kind: |a| Arc::new(FeedKind(a.feeds.eth_new_heads.clone())),
        },
        Subscription {
            name: "newPendingTransactions",
            summary: "The hash of each transaction entering the pool",
            kind: |a| Arc::new(FeedKind(a.feeds.new_pending_transactions.clone())),
        },
        Subscription {
            name: "logs",
            summary: "Each log of a new block matching filter criteria, one per notification",
            kind: |a| a.feeds.logs.clone(),
        },
    ];
}

/// A `null`-able answer.
type Maybe = Result<Option<Value>>;

impl EthApi {
    pub fn new(
        chain_api: Arc<ChainApi>,
        contract: Arc<ContractApi>,
        logs: Arc<LogsApi>,
        fees: Arc<FeeApi>,
        feeds: Arc<ChainFeeds>,
        chain: Option<Arc<Chain>>,
        node_address: Address,
    ) -> EthApi {
        if let Some(c) = &chain {
            let c = Arc::downgrade(c);
            // newHeads in Ethereum's shape: the pump asks for the header it announces.
            let _ = feeds.eth_head.set(Box::new(move |hash| {
                let chain = c.upgrade()?;
                let header = chain.header_by_hash(hash).ok()??;
                ethjson::header(&chain, hash, &header, Shape::Sealed)
                    .ok()
                    .map(Value::Object)
            }));
        }
        EthApi {
            chain_api,
            contract,
            logs,
            fees,
            feeds,
            chain,
            node_address,
        }
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    fn chain_id(&self, c: &Call, p: &Params) -> Result<String> {
        self.chain_api.chain_id(c, p)
    }

    fn block_number(&self, c: &Call, p: &Params) -> Result<String> {
        self.chain_api.block_number(c, p)
    }

    fn syncing(&self, c: &Call, p: &Params) -> Result<super::chain::Syncing> {
        self.chain_api.syncing(c, p)
    }

    fn accounts(&self, c: &Call, p: &Params) -> Result<Vec<Address>> {
        self.chain_api.accounts(c, p)
    }

    fn coinbase(&self, _: &Call, _: &Params) -> Result<Address> {
        Ok(self.node_address)
    }

    fn mining(&self, _: &Call, _: &Params) -> Result<bool> {
        Ok(false)
    }

    fn hashrate(&self, _: &Call, _: &Params) -> Result<&'static str> {
        Ok("0x0")
    }

    fn get_hashrate(&self, _: &Call, _: &Params) -> Result<u64> {
        Ok(0)
    }

    fn get_work(&self, _: &Call, _: &Params) -> Result<Value> {
        Err(Error::Rpc(RpcError::server("no mining work available yet")))
    }

    /// `eth_submitWork(nonce, powHash, mixDigest)`: the arguments decoded as the reference
    /// decodes them (an 8-byte `BlockNonce`, two hashes), then `false`.
    fn submit_work(&self, _: &Call, p: &Params) -> Result<bool> {
        let nonce = p
            .raw(0)
            .ok_or_else(|| RpcError::invalid_params("missing value for required argument 0"))?;
        let into = "Go value of type *api.BlockNonce";
        if !nonce.is_string() {
            return Err(RpcError::invalid_params(format!(
                "invalid argument 0: json: cannot unmarshal {} into {into}",
                crate::rpc::json_type(nonce)
            ))
            .into());
        }
        super::goparams::fixed_value::<8>(nonce, into, "BlockNonce")
            .map_err(|m| RpcError::invalid_params(format!("invalid argument 0: {m}")))?;
        let _: HashParam = p.required(1)?;
        let _: HashParam = p.required(2)?;
        Ok(false)
    }

    /// `eth_submitHashrate(rate, id)`: decoded, then `false`.
    fn submit_hashrate(&self, _: &Call, p: &Params) -> Result<bool> {
        let rate = p
            .raw(0)
            .ok_or_else(|| RpcError::invalid_params("missing value for required argument 0"))?;
        hexutil_uint64(rate)
            .map_err(|m| RpcError::invalid_params(format!("invalid argument 0: {m}")))?;
        let _: HashParam = p.required(1)?;
        Ok(false)
    }

    fn gas_price(&self, c: &Call, p: &Params) -> Result<String> {
        self.chain_api.gas_price(c, p)
    }

    fn max_priority_fee_per_gas(&self, c: &Call, p: &Params) -> Result<String> {
        self.fees.max_priority_fee_per_gas(c, p)
    }

    fn fee_history(&self, c: &Call, p: &Params) -> Result<super::fees::FeeHistoryJson> {
        self.fees.fee_history(c, p)
    }

    fn get_balance(&self, c: &Call, p: &Params) -> Result<Option<String>> {
        self.chain_api.get_balance(c, p)
    }

    fn get_transaction_count(&self, c: &Call, p: &Params) -> Result<Option<String>> {
        self.chain_api.get_transaction_count(c, p)
    }

    fn get_code(&self, c: &Call, p: &Params) -> Result<HexOut> {
        self.contract.get_code(c, p)
    }

    fn get_storage_at(&self, c: &Call, p: &Params) -> Result<HexOut> {
        self.contract.get_storage_at(c, p)
    }

    /// `eth_call(args, block, overrides?)`: the message's output at the block.
    fn call(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let chain = self.chain()?;
        let args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?.call_args()?;
        let at = block_param(chain, p, 1)?;
        let overrides = match p.raw(2) {
            None | Some(Value::Null) => Vec::new(),
            Some(v) => super::ethargs::state_overrides(v, 2)?,
        };
        Ok(HexOut(chain.call_overridden(&args, &at, &overrides)?))
    }

    /// `eth_estimateGas(args, block?)`: the least gas it succeeds with (on the head's state,
    /// as the reference runs it whatever the block).
    fn estimate_gas(&self, _: &Call, p: &Params) -> Result<String> {
        let chain = self.chain()?;
        let args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?.call_args()?;
        if !matches!(p.raw(1), None | Some(Value::Null)) {
            block_param(chain, p, 1)?;
        }
        Ok(format!("0x{:x}", chain.estimate_gas(&args)?))
    }

    /// The canonical block `tag` names, if the chain has it, with the shape its header takes.
    fn block_at(&self, tag: BlockTag) -> Result<Option<(BlockRecord, Shape)>> {
        let chain = self.chain()?;
        let shape = if tag == BlockTag::Pending {
            Shape::Pending
        } else {
            Shape::Sealed
        };
        let n = tag.resolve(chain.head_number());
        Ok(chain.block_by_number(Some(n))?.map(|b| (b, shape)))
    }

    fn block_with_hash(&self, hash: &[u8; 32]) -> Result<Option<BlockRecord>> {
        Ok(self.chain()?.block_by_hash(hash)?)
    }

    fn get_block_by_number(&self, _: &Call, p: &Params) -> Maybe {
        let tag: BlockTag = p.required(0)?;
        let full: bool = p.required(1)?;
        let chain = self.chain()?;
        match self.block_at(tag)? {
            Some((b, shape)) => Ok(Some(ethjson::block(chain, &b, full, shape)?)),
            None => Ok(None),
        }
    }

    fn get_block_by_hash(&self, _: &Call, p: &Params) -> Maybe {
        let HashParam(hash) = p.required(0)?;
        let full: bool = p.required(1)?;
        let chain = self.chain()?;
        match self.block_with_hash(&hash)? {
            Some(b) => Ok(Some(ethjson::block(chain, &b, full, Shape::Sealed)?)),
            None => Ok(None),
        }
    }

    fn get_header_by_number(&self, _: &Call, p: &Params) -> Maybe {
        let tag: BlockTag = p.required(0)?;
        let chain = self.chain()?;
        let n = tag.resolve(chain.head_number());
        let shape = if tag == BlockTag::Pending {
            Shape::Pending
        } else {
            Shape::Sealed
        };
        Ok(match chain.header_at(n)? {
            Some((hash, h)) => Some(Value::Object(ethjson::header(chain, &hash, &h, shape)?)),
            None => None,
        })
    }

    fn get_header_by_hash(&self, _: &Call, p: &Params) -> Maybe {
        let HashParam(hash) = p.required(0)?;
        let chain = self.chain()?;
        Ok(match chain.header_by_hash(&hash)? {
            Some(h) => Some(Value::Object(ethjson::header(
                chain,
                &hash,
                &h,
                Shape::Sealed,
            )?)),
            None => None,
        })
    }

    fn count_by_number(&self, _: &Call, p: &Params) -> Result<Option<String>> {
        let tag: BlockTag = p.required(0)?;
        Ok(self
            .block_at(tag)?
            .map(|(b, _)| format!("0x{:x}", b.transactions.len())))
    }

    fn count_by_hash(&self, _: &Call, p: &Params) -> Result<Option<String>> {
        let HashParam(hash) = p.required(0)?;
        Ok(self
            .block_with_hash(&hash)?
            .map(|b| format!("0x{:x}", b.transactions.len())))
    }

    fn uncle_count_by_number(&self, _: &Call, p: &Params) -> Result<Option<&'static str>> {
        let tag: BlockTag = p.required(0)?;
        Ok(self.block_at(tag)?.map(|_| "0x0"))
    }

    fn uncle_count_by_hash(&self, _: &Call, p: &Params) -> Result<Option<&'static str>> {
        let HashParam(hash) = p.required(0)?;
        Ok(self.block_with_hash(&hash)?.map(|_| "0x0"))
    }

    fn uncle_by_number(&self, _: &Call, p: &Params) -> Maybe {
        let _: BlockTag = p.required(0)?;
        let _: Index = p.required(1)?;
        Ok(None)
    }

    fn uncle_by_hash(&self, _: &Call, p: &Params) -> Maybe {
        let _: HashParam = p.required(0)?;
        let _: Index = p.required(1)?;
        Ok(None)
    }

    fn get_transaction_by_hash(&self, _: &Call, p: &Params) -> Maybe {
        let HashParam(hash) = p.required(0)?;
        let chain = self.chain()?;
        match chain.transaction(&hash)? {
            Some(r) => Ok(Some(ethjson::transaction_record(chain, &r)?)),
            None => Ok(None),
        }
    }

    /// The transaction at `index` of a block, as `f` shows it; `None` past its last.
    fn at_index<T>(
        b: Option<BlockRecord>,
        index: u64,
        f: impl FnOnce(&BlockRecord, usize) -> T,
    ) -> Option<T> {
        let b = b?;
        let i = usize::try_from(index)
            .ok()
            .filter(|&i| i < b.transactions.len())?;
        Some(f(&b, i))
    }

    fn tx_object(b: &BlockRecord, i: usize) -> Value {
        let (tx, from) = &b.transactions[i];
        ethjson::transaction(tx, *from, Some((&b.hash, &b.header, i as u64)))
    }

    fn tx_by_number_and_index(&self, _: &Call, p: &Params) -> Maybe {
        let tag: BlockTag = p.required(0)?;
        let Index(index) = p.required(1)?;
        let b = self.block_at(tag).ok().flatten().map(|(b, _)| b);
        Ok(Self::at_index(b, index, Self::tx_object))
    }

    fn tx_by_hash_and_index(&self, _: &Call, p: &Params) -> Maybe {
        let HashParam(hash) = p.required(0)?;
        let Index(index) = p.required(1)?;
        let b = self.block_with_hash(&hash).ok().flatten();
        Ok(Self::at_index(b, index, Self::tx_object))
    }

    fn raw_of(tx: &Transaction) -> HexOut {
        HexOut(match tx {
            Transaction::Ethereum(e) => e.encode_ethereum(),
            other => other.encode(),
        })
    }

    fn raw_by_hash(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let HashParam(hash) = p.required(0)?;
        Ok(match self.chain()?.transaction(&hash)? {
            Some(r) => Self::raw_of(&r.tx),
            None => HexOut(Vec::new()),
        })
    }

    fn raw_by_number_and_index(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let tag: BlockTag = p.required(0)?;
        let Index(index) = p.required(1)?;
        let b = self.block_at(tag).ok().flatten().map(|(b, _)| b);
        Ok(
            Self::at_index(b, index, |b, i| Self::raw_of(&b.transactions[i].0))
                .unwrap_or(HexOut(Vec::new())),
        )
    }

    fn raw_by_hash_and_index(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let HashParam(hash) = p.required(0)?;
        let Index(index) = p.required(1)?;
        let b = self.block_with_hash(&hash).ok().flatten();
        Ok(
            Self::at_index(b, index, |b, i| Self::raw_of(&b.transactions[i].0))
                .unwrap_or(HexOut(Vec::new())),
        )
    }

    /// `eth_getTransactionReceipt(hash)`: with the block's gas used up to the transaction.
    fn get_transaction_receipt(&self, _: &Call, p: &Params) -> Maybe {
        let HashParam(hash) = p.required(0)?;
        let chain = self.chain()?;
        let Some(r) = chain.transaction(&hash)? else {
            return Ok(None);
        };
        Ok(ethjson::receipt(&r))
    }

    /// `eth_getBlockReceipts(block)`: by number, tag or hash; the reference's errors for a
    /// block the chain lacks.
    fn get_block_receipts(&self, _: &Call, p: &Params) -> Result<Vec<Value>> {
        let block: BlockRef = p.required(0)?;
        let chain = self.chain()?;
        let missing = super::logs::Missing::BlockNumber;
        let hash = match block {
            BlockRef::Hash(h) => h,
            BlockRef::Tag(t) => {
                let n = t.resolve(chain.head_number());
                chain.header_at(n)?.ok_or(missing(n))?.0
            }
            BlockRef::Neither => return Err(super::logs::Missing::Neither.into()),
        };
        let records = chain
            .block_receipts(&hash)?
            .ok_or(super::logs::Missing::BlockHash(hash))?;
        Ok(ethjson::block_receipts(&records))
    }

    /// `eth_sendRawTransaction(bytes)`: Ethereum's typed encodings (a first byte below 0x7f)
    /// get the reference's envelope byte; then as `chain_sendRawTransaction`.
    fn send_raw_transaction(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let raw: HexBytes = p.required(0)?;
        let chain = self.chain()?;
        let Some(&first) = raw.0.first() else {
            return Err(Error::Rpc(RpcError::server("Empty input")));
        };
        let tx = if 0 < first && first < 0x7f {
            let mut bytes = Vec::with_capacity(raw.0.len() + 1);
            bytes.push(crate::types::ethereum::ENVELOPE);
            bytes.extend_from_slice(&raw.0);
            Transaction::decode(&bytes)?
        } else {
            Transaction::decode(&raw.0)?
        };
        Ok(HexOut(chain.submit_local(tx)?.to_vec()))
    }

    /// `eth_sendTransaction(args)`: defaults filled, signed with the unlocked key of `from`,
    /// submitted; the nonce, when left out, taken under the sender's nonce lock.
    fn send_transaction(&self, _: &Call, p: &Params) -> Result<HexOut> {
        let chain = self.chain()?;
        let mut args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?;
        args.set_defaults(chain, false)?;
        let from = args.from();
        let key = (self.chain_api.unlocked_key(from))()?;
        let lock: Option<Arc<Mutex<()>>> = args.nonce.is_none().then(|| chain.nonce_lock(&from));
        let _held = lock
            .as_ref()
            .map(|l| l.lock().unwrap_or_else(|e| e.into_inner()));
        if args.nonce.is_none() {
            args.nonce = Some(chain.pending_nonce(&from)?);
        }
        let mut tx = args.to_transaction()?;
        tx.sign(&key, chain.chain_id());
        drop(key);
        Ok(HexOut(chain.submit_local(tx)?.to_vec()))
    }

    /// `eth_signTransaction(args)`: gas, a price and the nonce must be given; signed with the
    /// unlocked key of `from`, not sent.
    fn sign_transaction(&self, _: &Call, p: &Params) -> Result<Value> {
        let chain = self.chain()?;
        let mut args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?;
        let server = |m: &str| Error::Rpc(RpcError::server(m));
        if args.gas.is_none() {
            return Err(server("gas not specified"));
        }
        if args.gas_price.is_none()
            && (args.max_priority_fee_per_gas.is_none() || args.max_fee_per_gas.is_none())
        {
            return Err(server(
                "missing gasPrice or maxFeePerGas/maxPriorityFeePerGas",
            ));
        }
        if args.nonce.is_none() {
            return Err(server("nonce not specified"));
        }
        args.set_defaults(chain, false)?;
        let unsigned = args.to_transaction()?;
        let key = (self.chain_api.unlocked_key(args.from()))()?;
        let mut signed = unsigned.clone();
        signed.sign(&key, chain.chain_id());
        Ok(signed_json(&signed, &unsigned))
    }

    /// `eth_fillTransaction(args)`: the defaults filled, nothing signed.
    fn fill_transaction(&self, _: &Call, p: &Params) -> Result<Value> {
        let chain = self.chain()?;
        let mut args = EthTxArgs::decode(&p.required::<Value>(0)?, 0)?;
        args.set_defaults(chain, true)?;
        let tx = args.to_transaction()?;
        Ok(signed_json(&tx, &tx))
    }

    fn sign(&self, c: &Call, p: &Params) -> Result<HexOut> {
        self.chain_api.sign(c, p)
    }

    /// `eth_pendingTransactions`: the pool's transactions whose sender is in the keystore.
    fn pending_transactions(&self, c: &Call, p: &Params) -> Result<Vec<Value>> {
        let chain = self.chain()?;
        let ours = self.chain_api.accounts(c, p)?;
        Ok(chain
            .pending()
            .into_iter()
            .filter(|(_, from)| ours.contains(from))
            .map(|(tx, from)| ethjson::transaction(&tx, from, None))
            .collect())
    }

    fn get_proof(&self, _: &Call, p: &Params) -> Result<super::proof::ProofJson> {
        super::proof::get_proof(self.chain()?, p)
    }

    fn create_access_list(
        &self,
        _: &Call,
        p: &Params,
    ) -> Result<super::accesslist::AccessListJson> {
        super::accesslist::create_access_list(self.chain()?, p)
    }

    fn get_logs(&self, c: &Call, p: &Params) -> Result<Vec<crate::types::json::LogJson>> {
        self.logs.get_logs(c, p)
    }

    fn new_filter(&self, c: &Call, p: &Params) -> Result<String> {
        self.logs.new_filter(c, p)
    }

    fn new_block_filter(&self, c: &Call, p: &Params) -> Result<String> {
        self.logs.new_block_filter(c, p)
    }

    fn new_pending_transaction_filter(&self, c: &Call, p: &Params) -> Result<String> {
        self.logs.new_pending_transaction_filter(c, p)
    }

    fn get_filter_changes(&self, c: &Call, p: &Params) -> Result<super::logs::FilterChanges> {
        self.logs.get_filter_changes(c, p)
    }

    fn get_filter_logs(&self, c: &Call, p: &Params) -> Result<Vec<crate::types::json::LogJson>> {
        self.logs.get_filter_logs(c, p)
    }

    fn uninstall_filter(&self, c: &Call, p: &Params) -> Result<bool> {
        self.logs.uninstall_filter(c, p)
    }
}

/// A `hexutil.Uint64` argument, with hexutil's texts.
fn hexutil_uint64(v: &Value) -> std::result::Result<u64, String> {
    let into = "Go value of type hexutil.Uint64";
    let Value::String(s) = v else {
        return Err(format!("json: cannot unmarshal non-string into {into}"));
    };
    let m = super::goparams::Member {
        strukt: "",
        name: "",
    };
    m.uint64(&Value::String(s.clone())).map_err(|e| {
        // The member text names a struct field; an argument names the Go value.
        let tail = e
            .split_once(" into ")
            .map(|(head, _)| head.to_string())
            .unwrap_or(e);
        format!("{tail} into {into}")
    })
}
