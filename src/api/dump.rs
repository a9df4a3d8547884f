//! The replies of `debug_dumpBlock` and `debug_dumpStateTrie`: a whole state, which can be
//! hundreds of megabytes of JSON. Written as text once, while the state trie is walked (one
//! account in memory at a time), and handed to the transport as that text ([`RawJson`], never
//! a `serde_json::Value` tree, which costs several times the text). One dump runs at a time:
//! another is refused at once instead of waiting, so that dumps never hold more than one of
//! the endpoint's workers, nor more than one reply's worth of memory being built.
//! `debug_dumpBlock` can also answer a page: accounts from a trie key on, at most so many,
//! and the key to ask for next.

use std::sync::atomic::{AtomicBool, Ordering};

use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

use super::blockfiles::decimal;
use super::error::{Error, Result};
use crate::chain::{Chain, DumpEntry};
use crate::rpc::{RawJson, RpcError};
use crate::types::json::AccountKeyJson;

/// The refusal of a dump asked for while another runs.
pub const BUSY: &str =
    "another dump is running: debug_dumpBlock and debug_dumpStateTrie run one at a time";

/// Which accounts of a state `debug_dumpBlock` answers: all (the reference's call), or a
/// page.
#[derive(Debug, Clone, Copy, Default)]
pub struct Page {
    /// The trie key (Keccak-256 of the address) to start from.
    pub start: [u8; 32],
    /// Most accounts in the reply; `None`: all from `start` on.
    pub max: Option<u64>,
}

/// The dumps' one place: held by the running dump.
#[derive(Default)]
pub struct Dumps {
    running: AtomicBool,
}

/// The running dump's hold on [`Dumps`], let go when dropped.
struct Slot<'a>(&'a AtomicBool);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.store(false, Ordering::Release);
    }
}

/// An account as `debug_dumpBlock` shows it (go-ethereum's dump, plus the account key): a
/// contract's code and storage (slots by the Keccak-256 that keys them in its trie).
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct DumpAccount<'a> {
    balance: String,
    nonce: u64,
    root: String,
    code_hash: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    storage: Option<Slots<'a>>,
    key: String,
    account_key: AccountKeyJson,
}

/// A contract's storage as a JSON object, slot hash to value, in the trie's order (which is
/// the order of the keys' text).
struct Slots<'a>(&'a [([u8; 32], [u8; 32])]);

impl Serialize for Slots<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in self.0 {
            m.serialize_entry(&hex0x(k), &crate::chain::state::quantity(v))?;
        }
        m.end()
    }
}

fn hex0x(bytes: &[u8]) -> String {
    format!("0x{}", hex::encode(bytes))
}

impl Dumps {
    pub fn new() -> Dumps {
        Dumps::default()
    }

    /// The dumps' place, or [`BUSY`] while another dump has it.
    fn slot(&self) -> Result<Slot<'_>> {
        if self.running.swap(true, Ordering::AcqRel) {
            return Err(Error::Rpc(RpcError::server(BUSY)));
        }
        Ok(Slot(&self.running))
    }

    /// `{"root", "accounts"}` of the state of block `number`: accounts by address (by trie
    /// key when the address is not known), in trie-key order; with a page's `max`, also
    /// `"next"`, the trie key to start the next page from, when accounts are left. `None`
    /// when the chain lacks the block; [`BUSY`] while another dump runs.
    pub fn block(&self, chain: &Chain, number: u64, page: Page) -> Result<Option<RawJson>> {
        let _slot = self.slot()?;
        sized(|out| write_block(chain, number, page, out))
    }

    /// `{"root", "nodes"}`: the hash of every node of the state of block `number`. `None`
    /// when the chain lacks the block; [`BUSY`] while another dump runs.
    pub fn state_trie(&self, chain: &Chain, number: u64) -> Result<Option<RawJson>> {
        let _slot = self.slot()?;
        sized(|out| write_state_trie(chain, number, out))
    }
}

/// Where a reply is written: counted first, then written into a buffer of that size.
trait Out: std::io::Write {
    fn len(&self) -> usize;
    /// Overwrites the bytes from `at` (written before) with `bytes`.
    fn patch(&mut self, at: usize, bytes: &[u8]);
}

/// A writer that only counts.
#[derive(Default)]
struct Count(usize);

impl std::io::Write for Count {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Out for Count {
    fn len(&self) -> usize {
        self.0
    }

    fn patch(&mut self, _: usize, _: &[u8]) {}
}

impl Out for Vec<u8> {
    fn len(&self) -> usize {
        Vec::len(self)
    }

    fn patch(&mut self, at: usize, bytes: &[u8]) {
        self[at..at + bytes.len()].copy_from_slice(bytes);
    }
}

/// Room left after the text for the response's envelope (`{"jsonrpc":"2.0","id":..,
/// "result":`, `}` and a newline), so that adding it does not move the text.
const ENVELOPE_ROOM: usize = 1024;

/// The reply `write` writes, written twice: counted, then into a buffer of its exact size.
/// Writing it once into a growing buffer costs a copy at each growth (the wiping
/// allocator's `realloc` always copies), with both buffers resident then; pieces joined at
/// the end cost two replies' memory too. Twice the work, for one reply's memory.
fn sized(mut write: impl FnMut(&mut dyn Out) -> Result<Option<()>>) -> Result<Option<RawJson>> {
    let mut count = Count::default();
    if write(&mut count)?.is_none() {
        return Ok(None);
    }
    let mut out = Vec::with_capacity(count.0 + ENVELOPE_ROOM);
    if write(&mut out)?.is_none() {
        return Ok(None);
    }
    debug_assert_eq!(out.len(), count.0, "the two passes wrote the same");
    Ok(Some(RawJson(
        String::from_utf8(out).expect("serde_json and hex write UTF-8"),
    )))
}

/// Writes `"{"root":"0x..","` with a placeholder for the root: where it goes.
fn write_root_placeholder(out: &mut dyn Out) -> Result<usize> {
    write_all(out, br#"{"root":""#)?;
    let at = out.len();
    write_all(out, &[b'0'; 66])?;
    write_all(out, b"\",")?;
    Ok(at)
}

fn write_all(out: &mut dyn Out, bytes: &[u8]) -> Result<()> {
    out.write_all(bytes)
        .map_err(|e| Error::Rpc(RpcError::server(format!("cannot write the dump: {e}"))))
}

/// The reply of [`Dumps::block`] into `out`; `None` when the chain lacks the block.
fn write_block(chain: &Chain, number: u64, page: Page, out: &mut dyn Out) -> Result<Option<()>> {
    let root_at = write_root_placeholder(out)?;
    write_all(out, br#""accounts":{"#)?;
    let mut count = 0u64;
    let mut next = None;
    let mut failed = None;
    let root = chain.visit_dump(Some(number), &page.start, &mut |e| {
        if page.max == Some(count) {
            next = Some(e.key);
            return false;
        }
        let written = if count > 0 {
            write_all(out, b",")
        } else {
            Ok(())
        };
        count += 1;
        match written.and_then(|()| write_account(chain, &e, out)) {
            Ok(()) => true,
            Err(err) => {
                failed = Some(err);
                false
            }
        }
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    let Some(root) = root else { return Ok(None) };
    out.patch(root_at, hex0x(&root).as_bytes());
    write_all(out, b"}")?;
    if let Some(key) = next {
        write_all(out, format!(r#","next":"{}""#, hex0x(&key)).as_bytes())?;
    }
    write_all(out, b"}")?;
    Ok(Some(()))
}

/// The reply of [`Dumps::state_trie`] into `out`; `None` when the chain lacks the block.
fn write_state_trie(chain: &Chain, number: u64, out: &mut dyn Out) -> Result<Option<()>> {
    let root_at = write_root_placeholder(out)?;
    write_all(out, br#""nodes":["#)?;
    let mut first = true;
    let mut failed = Ok(());
    let root = chain.visit_state_nodes(Some(number), &mut |h| {
        let sep: &[u8] = if first { b"\"" } else { b",\"" };
        first = false;
        if failed.is_ok() {
            failed = write_all(out, sep)
                .and_then(|()| write_all(out, hex0x(h).as_bytes()))
                .and_then(|()| write_all(out, b"\""));
        }
    })?;
    failed?;
    let Some(root) = root else { return Ok(None) };
    out.patch(root_at, hex0x(&root).as_bytes());
    write_all(out, b"]}")?;
    Ok(Some(()))
}

/// `"0x<address>":{...}` of one account, appended to `out`.
fn write_account(chain: &Chain, e: &DumpEntry, out: &mut dyn Out) -> Result<()> {
    let a = &e.account;
    let contract = chain.contract_dump(a)?;
    let name = match &e.address {
        Some(address) => hex0x(&address.0),
        None => hex0x(&e.key),
    };
    let account = DumpAccount {
        balance: decimal(&a.balance),
        nonce: a.nonce,
        root: hex0x(&a.storage_root()),
        code_hash: hex0x(&a.code_hash()),
        code: contract.as_ref().map(|(code, _)| hex0x(code)),
        storage: contract.as_ref().map(|(_, slots)| Slots(slots)),
        key: hex0x(&e.key),
        account_key: AccountKeyJson::from(&a.key),
    };
    write_all(out, format!("\"{name}\":").as_bytes())?;
    serde_json::to_writer(out, &account)
        .map_err(|err| Error::Rpc(RpcError::server(format!("cannot encode the dump: {err}"))))
}
