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
        let mut out = Vec::with_capacity(1 << 16);
        // The root is written once known: a placeholder of its length goes first.
        out.extend_from_slice(br#"{"root":""#);
        let root_at = out.len();
        out.extend_from_slice(&[b'0'; 66]);
        out.extend_from_slice(br#"","accounts":{"#);
        let mut count = 0u64;
        let mut next = None;
        let mut failed = None;
        let root = chain.visit_dump(Some(number), &page.start, &mut |e| {
            if page.max == Some(count) {
                next = Some(e.key);
                return false;
            }
            if count > 0 {
                out.push(b',');
            }
            count += 1;
            match write_account(chain, &e, &mut out) {
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
        out[root_at..root_at + 66].copy_from_slice(hex0x(&root).as_bytes());
        out.push(b'}');
        if let Some(key) = next {
            out.extend_from_slice(br#","next":""#);
            out.extend_from_slice(hex0x(&key).as_bytes());
            out.push(b'"');
        }
        out.push(b'}');
        Ok(Some(raw(out)))
    }

    /// `{"root", "nodes"}`: the hash of every node of the state of block `number`. `None`
    /// when the chain lacks the block; [`BUSY`] while another dump runs.
    pub fn state_trie(&self, chain: &Chain, number: u64) -> Result<Option<RawJson>> {
        let _slot = self.slot()?;
        let mut nodes = Vec::with_capacity(1 << 16);
        let root = chain.visit_state_nodes(Some(number), &mut |h| {
            nodes.extend_from_slice(if nodes.is_empty() { b"\"" } else { b",\"" });
            nodes.extend_from_slice(hex0x(h).as_bytes());
            nodes.push(b'"');
        })?;
        let Some(root) = root else { return Ok(None) };
        let head = format!(r#"{{"root":"{}","nodes":["#, hex0x(&root));
        nodes.splice(0..0, head.bytes());
        nodes.extend_from_slice(b"]}");
        Ok(Some(raw(nodes)))
    }
}

/// `"0x<address>":{...}` of one account, appended to `out`.
fn write_account(chain: &Chain, e: &DumpEntry, out: &mut Vec<u8>) -> Result<()> {
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
    out.push(b'"');
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(b"\":");
    serde_json::to_writer(&mut *out, &account)
        .map_err(|err| Error::Rpc(RpcError::server(format!("cannot encode the dump: {err}"))))
}

/// The text written, as the reply.
fn raw(bytes: Vec<u8>) -> RawJson {
    RawJson(String::from_utf8(bytes).expect("serde_json and hex write UTF-8"))
}
