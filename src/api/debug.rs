//! `debug`: the chain's debugging methods. The safe subset (what `--rpc.unsafe-debug.disable`
//! keeps on HTTP and WebSocket, reference admin-and-rpc 5): `debug_metrics`,
//! `debug_getBlockRlp`, `debug_dumpBlock`, `debug_dumpStateTrie`, `debug_getBadBlocks`,
//! `debug_getModifiedAccountsByNumber`, `debug_getModifiedAccountsByHash`,
//! `debug_getModifiedStorageNodesByNumber`, and tracing with predefined tracers only
//! (`debug_traceTransaction`, `debug_traceCall`, `debug_traceBlockByNumber`,
//! `debug_traceBlockByHash`, `debug_traceBlock`: this node runs no JavaScript tracer, so its
//! tracing methods are always the safe ones, with their cap on concurrent requests). The rest
//! ([`UNSAFE`]: `debug_setHead`, `debug_verbosity`, `debug_memStats`, `debug_gcStats`, and the
//! reference's unsafe `debug_printBlock`, `debug_traceBlockFromFile` and
//! `debug_standardTraceBlockToFile`, which read and write the node's files) is then served
//! over IPC only.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use serde_json::{json, Value};

use super::blockfiles::{hex_prefix, print_block, read_file, write_temp_file};
use super::callargs::call_args;
use super::dump::{Dumps, Page};
use super::error::{Error, Result};
use super::goparams::{BlockRef as BlockParam, BlockTag, HashParam};
use super::logs::Missing;
use super::method::{opt, p, Method, Namespace, ParamKind as K};
use super::trace as wire;
use crate::chain::trace::{BlockRef, TraceError};
use crate::chain::Chain;
use crate::method;
use crate::metrics::{Metrics, ProcessMemory};
use crate::rpc::{Call, HexBytes, Params, RawJson};

/// The methods `--rpc.unsafe-debug.disable` keeps off HTTP and WebSocket.
pub const UNSAFE: &[&str] = &[
    "debug_setHead",
    "debug_verbosity",
    "debug_memStats",
    "debug_gcStats",
    "debug_printBlock",
    "debug_traceBlockFromFile",
    "debug_standardTraceBlockToFile",
];

/// How many tracing requests may run at once (the reference's
/// `--rpc.unsafe-debug.heavy-debug.request-limit` default).
pub const HEAVY_REQUEST_LIMIT: usize = 50;

/// The `debug` namespace.
pub struct DebugApi {
    chain: Option<Arc<Chain>>,
    /// What `debug_metrics` shows: the same numbers the Prometheus endpoint serves.
    metrics: Arc<Metrics>,
    /// Tracing requests running now.
    heavy: AtomicUsize,
    /// The dump running now.
    dumps: Dumps,
}

/// A tracing request's place under [`HEAVY_REQUEST_LIMIT`], given back when dropped.
struct HeavySlot<'a>(&'a AtomicUsize);

impl Drop for HeavySlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Namespace for DebugApi {
    const MODULE: &'static str = "debug";
    const METHODS: &'static [Method<Self>] = &[
        method!(
            "debug_getBlockRlp",
            [p("block", K::Any)],
            "The RLP of a block (by number or hash), as hex without 0x",
            "string: hex without 0x",
            Self::get_block_rlp
        ),
        method!(
            "debug_dumpBlock",
            [p("block", K::Any), opt("start", K::Hash), opt("maxResults", K::Integer)],
            "Every account of a block's state (by number or hash): balance, nonce, account key; a page of them from trie key start, at most maxResults",
            "object: root, accounts by address (next: the trie key of the next page)",
            Self::dump_block
        ),
        method!(
            "debug_dumpStateTrie",
            [p("block", K::Any)],
            "The hash of every state-trie node of a block (by number or hash)",
            "object: root, nodes (hashes)",
            Self::dump_state_trie
        ),
        method!(
            "debug_getBadBlocks",
            [],
            "The last blocks an import refused, with the reason",
            "array of {hash, number, rlp, reason}",
            Self::get_bad_blocks
        ),
        method!(
            "debug_getModifiedAccountsByNumber",
            [p("start", K::Any), opt("end", K::Any)],
            "The accounts changed by the blocks after start up to end (default start + 1)",
            "array of addresses",
            Self::modified_by_number
        ),
        method!(
            "debug_getModifiedAccountsByHash",
            [p("startHash", K::Hash), opt("endHash", K::Hash)],
            "The accounts changed by the blocks after startHash up to endHash",
            "array of addresses",
            Self::modified_by_hash
        ),
        method!(
            "debug_getModifiedStorageNodesByNumber",
            [
                p("contract", K::Address),
                p("start", K::Any),
                opt("end", K::Any),
                opt("printDetail", K::Bool)
            ],
            "Storage-trie nodes of a contract at the end block that its trie at the start lacks",
            "number: how many nodes",
            Self::modified_storage_nodes
        ),
        method!(
            "debug_traceTransaction",
            [p("txHash", K::Hash), opt("config", K::Object)],
            "Run a sealed transaction again and trace it: struct logs, or call frames with {\"tracer\":\"callTracer\"}",
            "object: the trace",
            Self::trace_transaction
        ),
        method!(
            "debug_traceCall",
            [p("args", K::Object), p("block", K::Any), opt("config", K::Object)],
            "Trace a call (as chain_call takes it) on the state of a block (number, tag or hash)",
            "object: the trace",
            Self::trace_call
        ),
        method!(
            "debug_traceBlockByNumber",
            [p("number", K::Any), opt("config", K::Object)],
            "Trace every transaction of a block by number: [{txHash, result}]",
            "array of {txHash, result}",
            Self::trace_block_by_number
        ),
        method!(
            "debug_traceBlockByHash",
            [p("hash", K::Hash), opt("config", K::Object)],
            "Trace every transaction of a block by hash: [{txHash, result}]",
            "array of {txHash, result}",
            Self::trace_block_by_hash
        ),
        method!(
            "debug_traceBlock",
            [p("blockRlp", K::Bytes), opt("config", K::Object)],
            "Trace every transaction of a block given as its RLP (its parent must be in the chain): [{txHash, result}]",
            "array: {txHash, result} per transaction",
            Self::trace_block
        ),
        method!(
            "debug_traceBlockFromFile",
            [p("file", K::String), opt("config", K::Object)],
            "As debug_traceBlock, the block's RLP read as hex from a file of the node's machine",
            "array: {txHash, result} per transaction",
            Self::trace_block_from_file
        ),
        method!(
            "debug_standardTraceBlockToFile",
            [p("hash", K::Hash), opt("config", K::Object)],
            "Trace a block's transactions (or config.txHash's) as standard JSON into files in the node's temporary directory; their names",
            "array of strings: the files written",
            Self::standard_trace_block_to_file
        ),
        method!(
            "debug_printBlock",
            [p("block", K::Any)],
            "A block (by number, tag or hash) printed as text: its header's fields and its transactions",
            "string: the block as text",
            Self::print_block
        ),
        method!(
            "debug_metrics",
            [p("raw", K::Bool)],
            "The node's numbers: memory, head, pool, trie-node cache, migration, peers; with --metrics also RPC calls and blocks sealed and imported",
            "object: process, collecting, chain, txpool, trie, migration, peers (rpc, blocks with --metrics)",
            Self::metrics
        ),
        method!(
            "debug_setHead",
            [p("number", K::Any)],
            "Rewind the chain to a block (the blocks above it leave the chain)",
            "null",
            Self::set_head
        ),
        method!(
            "debug_verbosity",
            [p("level", K::Integer)],
            "Set the log verbosity (0 silent .. 5 trace)",
            "null",
            Self::verbosity
        ),
        method!(
            "debug_memStats",
            [],
            "The process's memory: resident, peak, virtual (bytes)",
            "object: rss, peakRss, virtual (bytes)",
            Self::mem_stats
        ),
        method!(
            "debug_gcStats",
            [],
            "Garbage-collector statistics: all zero (chaind has no garbage collector)",
            "object of zeros",
            Self::gc_stats
        ),
    ];
}

impl DebugApi {
    /// The namespace over `chain` (if any), reporting `metrics` (whose samplers read the
    /// chain, the pool and the peers).
    pub fn new(chain: Option<Arc<Chain>>, metrics: Arc<Metrics>) -> DebugApi {
        DebugApi {
            chain,
            metrics,
            heavy: AtomicUsize::new(0),
            dumps: Dumps::new(),
        }
    }

    /// A place for one more tracing request, or the reference's refusal past the limit.
    fn heavy_slot(&self) -> Result<HeavySlot<'_>> {
        if self.heavy.fetch_add(1, Ordering::AcqRel) >= HEAVY_REQUEST_LIMIT {
            self.heavy.fetch_sub(1, Ordering::AcqRel);
            return Err(Error::Rpc(crate::rpc::RpcError::server(format!(
                "heavy debug api requests exceed the limit: {HEAVY_REQUEST_LIMIT}"
            ))));
        }
        Ok(HeavySlot(&self.heavy))
    }

    /// `debug_traceTransaction(txHash, config?)`: the trace of a sealed transaction, run
    /// again over the state before it (the struct logger's result, or the tracer's).
    fn trace_transaction(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let HashParam(hash) = p.required(0)?;
        let opts = wire::trace_options(p.raw(1), 1)?;
        let chain = self.chain()?;
        let _slot = self.heavy_slot()?;
        Ok(wire::trace_json(&chain.trace_transaction(&hash, &opts)?))
    }

    /// `debug_traceCall(callArgs, block, config?)`: the trace of a call on the state of
    /// `block`.
    fn trace_call(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let args = call_args(&p.required::<Value>(0)?, 0)?;
        let block: BlockParam = p.required(1)?;
        let opts = wire::trace_options(p.raw(2), 2)?;
        let chain = self.chain()?;
        let _slot = self.heavy_slot()?;
        let at = match block {
            BlockParam::Tag(t) => {
                let n = t.resolve(chain.head_number());
                chain
                    .state_header(Some(n))?
                    .ok_or(TraceError::NoBlockNumber(n))?
            }
            BlockParam::Hash(h) => {
                let b = chain.block_by_hash(&h)?.ok_or(TraceError::NoBlockHash(h))?;
                chain
                    .state_header(Some(b.header.number))?
                    .filter(|(hash, _)| *hash == h)
                    .unwrap_or((h, b.header))
            }
            BlockParam::Neither => return Err(Missing::Neither.into()),
        };
        Ok(wire::trace_json(&chain.trace_call(&args, &at, &opts)?))
    }

    /// `debug_traceBlockByNumber(number, config?)`: `[{txHash, result}]` (or `{txHash,
    /// error}` for a transaction whose trace failed).
    fn trace_block_by_number(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let tag: BlockTag = p.required(0)?;
        let opts = wire::trace_options(p.raw(1), 1)?;
        let chain = self.chain()?;
        let _slot = self.heavy_slot()?;
        let number = tag.resolve(chain.head_number());
        let traces = chain.trace_block(BlockRef::Number(number), &opts)?;
        Ok(wire::block_json(&traces))
    }

    /// `debug_traceBlockByHash(hash, config?)`: as [`DebugApi::trace_block_by_number`].
    fn trace_block_by_hash(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let HashParam(hash) = p.required(0)?;
        let opts = wire::trace_options(p.raw(1), 1)?;
        let chain = self.chain()?;
        let _slot = self.heavy_slot()?;
        let traces = chain.trace_block(BlockRef::Hash(hash), &opts)?;
        Ok(wire::block_json(&traces))
    }

    fn chain(&self) -> Result<&Chain> {
        self.chain.as_deref().ok_or(Error::NoChain)
    }

    /// The traces of the block `rlp` encodes, as `debug_traceBlockByNumber` answers; the
    /// reference's `could not decode block: ...` for bytes that are not a block.
    fn trace_rlp(&self, rlp: &[u8], opts: &crate::chain::trace::TraceOptions) -> Result<RawJson> {
        let block = crate::types::block::Block::decode(rlp)
            .map_err(|e| server(format!("could not decode block: {e}")))?;
        let traces = self.chain()?.trace_given_block(&block, opts)?;
        Ok(wire::block_json(&traces))
    }

    /// `debug_traceBlock(blockRlp, config?)`: the block's transactions run on its parent's
    /// state under its header, each traced (the block need not be in the chain).
    fn trace_block(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let rlp: HexBytes = p.required(0)?;
        let opts = wire::trace_options(p.raw(1), 1)?;
        self.chain()?;
        let _slot = self.heavy_slot()?;
        self.trace_rlp(&rlp.0, &opts)
    }

    /// `debug_traceBlockFromFile(file, config?)`: as `debug_traceBlock`, the RLP read from a
    /// file as hex digits (without `0x`; as the reference reads it, decoding stops at the
    /// first character that is not part of a hex pair, a final newline for one). The
    /// reference's `could not read file: ...` when the file cannot be read.
    fn trace_block_from_file(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let file: String = p.required(0)?;
        let opts = wire::trace_options(p.raw(1), 1)?;
        self.chain()?;
        let path = std::path::Path::new(&file);
        let text = read_file(path).map_err(|e| server(format!("could not read file: {e}")))?;
        self.trace_rlp(&hex_prefix(&text), &opts)
    }

    /// `debug_standardTraceBlockToFile(hash, config?)`: each transaction of the block (or
    /// only `config.txHash`) traced by the standard-JSON logger into a new file
    /// `block_0x<4 bytes of the block hash>-<index>-0x<4 bytes of the tx hash>-<random>` in
    /// the temporary directory (`$TMPDIR`, else `/tmp`), mode 0600; the files' paths. The
    /// reference's `block <hash> not found` (hex without `0x`) for a block the chain lacks.
    fn standard_trace_block_to_file(&self, _: &Call, p: &Params) -> Result<Vec<String>> {
        let HashParam(hash) = p.required(0)?;
        let (log, tx) = wire::std_trace_options(p.raw(1), 1)?;
        let chain = self.chain()?;
        let dir = std::env::temp_dir();
        let mut files = Vec::new();
        let found = chain.standard_trace_block(&hash, log, tx, |t| {
            let prefix = format!(
                "block_0x{}-{}-0x{}-",
                hex::encode(&hash[..4]),
                t.index,
                hex::encode(&t.tx_hash[..4])
            );
            let path = write_temp_file(&dir, &prefix, |out| wire::write_standard_trace(&t, out))
                .map_err(|e| TraceError::Failed(e.to_string()))?;
            crate::log::info("Wrote standard trace", &[("file", &path)]);
            files.push(path);
            Ok(())
        })?;
        if found.is_none() {
            return Err(server(format!("block {} not found", hex::encode(hash))));
        }
        Ok(files)
    }

    /// `debug_printBlock(block)`: the block (by number, tag or hash) as text. The reference
    /// prints its Go structures (`spew`); this is the same content in a plain layout:
    /// `Block(#N) hash: 0x..`, each header field on a line, then each transaction as its
    /// JSON object. `block #N not found` / `block 0x.. not found` for a block the chain
    /// lacks.
    fn print_block(&self, _: &Call, p: &Params) -> Result<String> {
        let block: BlockParam = p.required(0)?;
        let chain = self.chain()?;
        let (found, name) = match block {
            BlockParam::Tag(t) => {
                let n = t.resolve(chain.head_number());
                (chain.block_by_number(Some(n))?, format!("#{}", t.signed()))
            }
            BlockParam::Hash(h) => (chain.block_by_hash(&h)?, format!("0x{}", hex::encode(h))),
            BlockParam::Neither => (None, String::new()),
        };
        let b = found.ok_or_else(|| server(format!("block {name} not found")))?;
        Ok(print_block(&b, chain.total_block_score(b.header.number)))
    }

    /// The block parameter at `i` as the reference's `BlockNumberOrHash` decodes it, and the
    /// number of the canonical block it names (`None` when the chain has no such block).
    fn block_arg(&self, p: &Params, i: usize) -> Result<(BlockParam, Option<u64>)> {
        let chain = self.chain()?;
        let r: BlockParam = p.required(i)?;
        let number = match r {
            BlockParam::Tag(t) => {
                Some(t.resolve(chain.head_number())).filter(|&n| n <= chain.head_number())
            }
            BlockParam::Hash(h) => chain.block_by_hash(&h)?.map(|b| b.header.number),
            BlockParam::Neither => return Err(Missing::Neither.into()),
        };
        Ok((r, number))
    }

    /// `debug_getBlockRlp(number | hash)`: `RLP([header, txList])` as hex without `0x`
    /// (reference 10.7). A block the chain lacks is an error.
    fn get_block_rlp(&self, _: &Call, p: &Params) -> Result<String> {
        let (arg, number) = self.block_arg(p, 0)?;
        let block = self
            .chain()?
            .block_by_number(number)?
            .filter(|_| number.is_some())
            .ok_or_else(|| not_found("", &arg))?;
        let b = crate::types::block::Block {
            header: block.header,
            transactions: block.transactions.into_iter().map(|(t, _)| t).collect(),
        };
        Ok(hex::encode(b.encode()))
    }

    /// `debug_dumpBlock(number | hash, start?, maxResults?)`: `{root, accounts}`, accounts
    /// by address (by trie key when the address is not known); given `start` (a trie key)
    /// or `maxResults`, the accounts from `start` on, at most `maxResults`, and `next`, the
    /// trie key to ask for next, while accounts are left (module `dump`).
    fn dump_block(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let (arg, number) = self.block_arg(p, 0)?;
        let start: Option<HashParam> = p.optional(1)?;
        let max: Option<u64> = p.optional(2)?;
        if max == Some(0) {
            return Err(server("maxResults must be at least 1"));
        }
        let page = Page {
            start: start.map_or([0; 32], |h| h.0),
            max,
        };
        let number = number.ok_or_else(|| not_found("", &arg))?;
        self.dumps
            .block(self.chain()?, number, page)?
            .ok_or_else(|| not_found("", &arg))
    }

    /// `debug_dumpStateTrie(number | hash)`: `{root, nodes}`, the hash of every node.
    fn dump_state_trie(&self, _: &Call, p: &Params) -> Result<RawJson> {
        let (arg, number) = self.block_arg(p, 0)?;
        // The reference writes `#` before the text that already starts with one.
        let number = number.ok_or_else(|| not_found("#", &arg))?;
        self.dumps
            .state_trie(self.chain()?, number)?
            .ok_or_else(|| not_found("#", &arg))
    }

    /// `debug_getBadBlocks`: `[{hash, rlp, reason}]`, oldest first.
    fn get_bad_blocks(&self, _: &Call, _: &Params) -> Result<Value> {
        let bad = self.chain()?.bad_blocks();
        Ok(Value::Array(
            bad.into_iter()
                .map(|(b, why)| {
                    json!({
                        "hash": format!("0x{}", hex::encode(b.hash())),
                        "number": format!("0x{:x}", b.header.number),
                        "rlp": format!("0x{}", hex::encode(b.encode())),
                        "reason": why,
                    })
                })
                .collect(),
        ))
    }

    /// The addresses whose accounts differ between the states of blocks `start` and `end`.
    fn modified(&self, start: u64, end: u64) -> Result<Vec<String>> {
        if start >= end {
            return Err(server(format!(
                "start block height ({start}) must be less than end block height ({end})"
            )));
        }
        let list = self
            .chain()?
            .modified_accounts(start, end)?
            .ok_or_else(|| server(format!("end block number #{end} not found")))?;
        Ok(list
            .iter()
            .map(|a| format!("0x{}", hex::encode(a.0)))
            .collect())
    }

    /// `debug_getModifiedAccountsByNumber(start, end?)`: the addresses changed by the blocks
    /// after `start` up to `end`; with `start` alone, those changed by block `start` (from
    /// its parent's state), as the reference.
    fn modified_by_number(&self, _: &Call, p: &Params) -> Result<Vec<String>> {
        let chain = self.chain()?;
        let head = chain.head_number();
        let start_tag: BlockTag = p.required(0)?;
        let end_tag: Option<BlockTag> = p.optional(1)?;
        // The reference prints the number as an unsigned one (`latest` is 2^64-1).
        let shown = |t: BlockTag| t.signed() as u64;
        let start = Some(start_tag.resolve(head))
            .filter(|&n| n <= head)
            .ok_or_else(|| {
                server(format!(
                    "start block number #{} not found",
                    shown(start_tag)
                ))
            })?;
        let (start, end) = match end_tag {
            None => {
                let parent = start.checked_sub(1).ok_or_else(|| {
                    server(format!("block number #{} has no parent", shown(start_tag)))
                })?;
                (parent, start)
            }
            Some(t) => {
                let end = Some(t.resolve(head))
                    .filter(|&n| n <= head)
                    .ok_or_else(|| server(format!("end block number #{} not found", shown(t))))?;
                (start, end)
            }
        };
        self.modified(start, end)
    }

    /// `debug_getModifiedAccountsByHash(startHash, endHash?)`: as by number, the blocks named
    /// by hash.
    fn modified_by_hash(&self, _: &Call, p: &Params) -> Result<Vec<String>> {
        let chain = self.chain()?;
        let HashParam(start_hash) = p.required(0)?;
        let end_hash: Option<HashParam> = p.optional(1)?;
        let start = chain
            .block_by_hash(&start_hash)?
            .ok_or_else(|| server(format!("start block {} not found", hex::encode(start_hash))))?
            .header
            .number;
        let (start, end) = match end_hash {
            None => {
                let parent = start.checked_sub(1).ok_or_else(|| {
                    server(format!("block {} has no parent", hex::encode(start_hash)))
                })?;
                (parent, start)
            }
            Some(HashParam(h)) => {
                let end = chain
                    .block_by_hash(&h)?
                    .ok_or_else(|| server(format!("end block {} not found", hex::encode(h))))?
                    .header
                    .number;
                (start, end)
            }
        };
        self.modified(start, end)
    }

    /// `debug_getModifiedStorageNodesByNumber(contract, start, end?, printDetail?)`: the
    /// number of nodes of the contract's storage trie at `end` (default `start + 1`) that
    /// its storage trie at `start` does not have. Was: 0, as
    /// no account here has storage.
    fn modified_storage_nodes(&self, _: &Call, p: &Params) -> Result<u64> {
        let contract: crate::crypto::Address = p.required(0)?;
        let head = self.chain()?.head_number();
        let start = p.required::<BlockTag>(1)?.resolve(head);
        let end = match p.optional::<BlockTag>(2)? {
            Some(t) => t.resolve(head),
            None => start + 1,
        };
        Ok(self
            .chain()?
            .modified_storage_nodes(&contract, start, end)?
            .unwrap_or(0) as u64)
    }

    /// `debug_metrics(raw)`: the node's numbers, grouped: the process's memory, and with a
    /// chain its head (number, age in seconds), pool, trie-node cache (with the progress of a
    /// save) and file, and state migration; the connected peers with a p2p server; and when
    /// the node collects (`--metrics`) the RPC calls per method and transport (count, seconds
    /// spent) and the blocks and transactions sealed and imported. `raw` is required, as the
    /// reference's, and changes nothing.
    fn metrics(&self, _: &Call, p: &Params) -> Result<Value> {
        let _raw: bool = p.required(0)?;
        let s = self.metrics.sample();
        let p = s.process;
        let mut m = json!({
            "process": {"rss": p.resident, "peakRss": p.peak_resident, "virtual": p.virtual_size},
            "collecting": self.metrics.collecting(),
        });
        if let Some(c) = &s.chain {
            let t = &c.trie_cache;
            let g = &c.migration;
            m["chain"] = json!({"head": c.head_number, "headAge": s.head_age});
            m["txpool"] = json!({"pending": c.pending, "queued": c.queued});
            m["trie"] = json!({
                "cache": {"enabled": t.enabled, "entries": t.entries, "bytes": t.bytes,
                          "loadedFromDisk": t.loaded_from_disk,
                          "save": {"running": t.saving, "written": t.save_written,
                                   "total": t.save_total}},
                "file": {"nodes": c.node_file_nodes, "bytes": c.node_file_bytes},
            });
            m["migration"] = json!({
                "running": g.running, "blockNumber": g.block_number, "committed": g.committed,
                "read": g.read, "pending": g.pending, "progress": g.progress,
            });
        }
        if let Some(peers) = s.peers {
            m["p2p"] = json!({"peers": peers});
        }
        if self.metrics.collecting() {
            let mut rpc = serde_json::Map::new();
            for c in self.metrics.calls() {
                let per = rpc.entry(c.method).or_insert_with(|| json!({}));
                per[c.transport.as_str()] = json!({"count": c.count, "seconds": c.seconds});
            }
            m["rpc"] = Value::Object(rpc);
            let b = self.metrics.block_counts();
            m["blocks"] = json!({
                "sealed": b.sealed_blocks, "sealedTransactions": b.sealed_transactions,
                "imported": b.imported_blocks, "importedTransactions": b.imported_transactions,
            });
        }
        Ok(m)
    }

    /// `debug_setHead(number)`: null once the chain's head is that block.
    fn set_head(&self, _: &Call, p: &Params) -> Result<()> {
        let super::goparams::Uint64Param(number) = p.required(0)?;
        self.chain()?.set_head(number)?;
        crate::log::warn("Rewound the chain", &[("head", &number.to_string())]);
        Ok(())
    }

    /// `debug_verbosity(level)`: null.
    fn verbosity(&self, _: &Call, p: &Params) -> Result<()> {
        let level: i32 = p.required(0)?;
        // The reference's level check (0 critical .. 5 trace; here 0 is silent).
        if level >= 6 {
            return Err(server("insert log level less than 6"));
        }
        let level = u8::try_from(level)
            .map_err(|_| server("insert log level greater than or equal to 0"))?;
        crate::log::set_verbosity(level);
        Ok(())
    }

    /// `debug_memStats`: resident, peak resident and virtual memory, bytes.
    fn mem_stats(&self, _: &Call, _: &Params) -> Result<Value> {
        let p = ProcessMemory::read();
        Ok(json!({"rss": p.resident, "peakRss": p.peak_resident, "virtual": p.virtual_size}))
    }

    /// `debug_gcStats`: zeros, for tools that expect the method.
    fn gc_stats(&self, _: &Call, _: &Params) -> Result<Value> {
        Ok(json!({"LastGC": null, "NumGC": 0, "PauseTotal": 0, "Pause": [], "PauseEnd": []}))
    }
}

/// `block <#n | 0xhash> not found`, the reference's text (with its `NumberOrHashString`),
/// `prefix` before it.
fn not_found(prefix: &str, arg: &BlockParam) -> Error {
    let shown = match arg {
        BlockParam::Tag(t) => format!("#{}", t.signed()),
        BlockParam::Hash(h) => format!("0x{}", hex::encode(h)),
        BlockParam::Neither => String::new(),
    };
    server(format!("block {prefix}{shown} not found"))
}

fn server(text: impl Into<String>) -> Error {
    Error::Rpc(crate::rpc::RpcError::server(text))
}

#[cfg(test)]
mod tests {
    use super::super::blockfiles::decimal;

    #[test]
    fn balances_in_decimal() {
        let mut v = [0u8; 32];
        assert_eq!(decimal(&v), "0");
        v[31] = 255;
        v[30] = 1;
        assert_eq!(decimal(&v), "511");
        assert_eq!(
            decimal(&[0xff; 32]),
            "115792089237316195423570985008687907853269984665640564039457584007913129639935"
        );
    }
}
