//! The JSON-RPC 2.0 server, independent of transports: the method table, module gating,
//! envelope rules, batches, notifications, subscriptions and `rpc_modules`. Transports hand
//! it bytes and write back what it returns.

use std::borrow::Cow;
use std::collections::{BTreeSet, HashMap};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;

use super::error::RpcError;
use super::params::Params;
use super::pubsub::{Connection, SubscriptionKind, SubscriptionLimit};
use crate::metrics::{CallMeter, Metrics};

/// Which transport a call arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Transport {
    Http,
    Ws,
    Ipc,
}

impl Transport {
    /// Its name in metrics: `http`, `ws`, `ipc`.
    pub fn label(self) -> &'static str {
        match self {
            Transport::Http => "http",
            Transport::Ws => "ws",
            Transport::Ipc => "ipc",
        }
    }

    /// The transport's name as people say it: `HTTP`, `WebSocket`, `IPC`.
    pub fn name(self) -> &'static str {
        match self {
            Transport::Http => "HTTP",
            Transport::Ws => "WebSocket",
            Transport::Ipc => "IPC",
        }
    }
}

/// One method's call meters, one per transport, made on first use.
#[derive(Default)]
struct Meters([OnceLock<CallMeter>; 3]);

impl Meters {
    fn get(&self, metrics: &Metrics, method: &str, transport: Transport) -> &CallMeter {
        self.0[transport as usize].get_or_init(|| metrics.call_meter(method, transport.label()))
    }
}

/// What a handler knows about the call besides its parameters.
pub struct Call<'a> {
    pub method: &'a str,
    pub transport: Transport,
    /// The endpoint listens on a non-loopback address (always false for IPC).
    pub public_listener: bool,
    /// The connection, on stream transports.
    pub conn: Option<&'a Arc<Connection>>,
    dispatcher: &'a Dispatcher,
}

impl Call<'_> {
    /// The modules the endpoint of this call offers that exist, `rpc` included, sorted (what
    /// `rpc_modules` answers).
    pub fn modules(&self) -> Vec<&'static str> {
        self.dispatcher.modules()
    }

    /// Every method of the node (to serve on an endpoint that a call opens).
    pub fn registry(&self) -> &Arc<Registry> {
        &self.dispatcher.registry
    }
}

/// A method implementation: parameters in, JSON result or error out.
pub type Handler = Arc<dyn Fn(&Call, &Params) -> Result<Value, RpcError> + Send + Sync>;

/// A method's check of its declared parameters ([`Registry::set_precheck`]).
pub type Precheck = Arc<dyn Fn(&Params) -> Result<(), RpcError> + Send + Sync>;

struct Registered {
    /// Most positional parameters the method takes (more is `too many arguments`).
    max_params: usize,
    handler: Handler,
    /// Decodes the declared parameters of a call that has surplus ones, so that a bad one is
    /// reported first, as the reference's decoder reads them in order.
    precheck: Option<Precheck>,
    meters: Meters,
}

/// The module of a method name: the text before the first `_`.
pub fn module_of(name: &str) -> &str {
    name.split_once('_').map_or(name, |(m, _)| m)
}

/// The name of `candidates` nearest to `name` in edit distance (ignoring case), when it is
/// close enough to be a slip of the keyboard: at most a fifth of the name's length, at least
/// one edit and at most three.
pub fn nearest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    let lower = name.to_ascii_lowercase();
    let limit = (name.chars().count() / 5).clamp(1, 3);
    candidates
        .map(|c| (edit_distance(&lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// The Levenshtein distance between `a` and `b`, by characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != *cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

/// Every method and subscription kind of the node, registered once per module.
#[derive(Default)]
pub struct Registry {
    methods: HashMap<&'static str, Registered>,
    /// Methods served over IPC only (`--rpc.unsafe-debug.disable`): to HTTP and WebSocket
    /// they do not exist.
    ipc_only: std::collections::HashSet<&'static str>,
    kinds: HashMap<(String, String), Arc<dyn SubscriptionKind>>,
    limit: SubscriptionLimit,
    /// Where calls are counted (`--metrics`); `None`: not counted.
    metrics: Option<Arc<Metrics>>,
    /// Meters of `<module>_subscribe` and `<module>_unsubscribe` for the modules with
    /// subscriptions, and of calls to methods that do not exist (`unknown`: a name an
    /// attacker chooses is no label).
    stream_meters: HashMap<String, Meters>,
    unknown_meters: Meters,
    /// Names known not to be built here (methods of another implementation this node is
    /// compatible with): -32601 says so.
    unbuilt: std::collections::HashSet<String>,
    /// Module names another implementation uses for a module of ours (`klay` for `chain`):
    /// -32601 for `klay_x` points to `chain_x`.
    aliases: HashMap<String, &'static str>,
    /// The modules each running endpoint offers (`None`: all), for -32601 to name the
    /// transports that offer a module this endpoint does not.
    open: std::sync::Mutex<std::collections::BTreeMap<Transport, Option<BTreeSet<String>>>>,
}

impl Registry {
    pub fn new(limit: SubscriptionLimit) -> Registry {
        Registry {
            limit,
            ..Registry::default()
        }
    }

    /// Registers `handler` for method `name` (`<module>_<method>`), which takes at most
    /// `max_params` positional parameters (surplus ones are `too many arguments`, except for
    /// methods without parameters, which ignore them as the reference does). Panics on a
    /// second registration of one name: the method table is built once at start-up and a
    /// clash is a programming error.
    pub fn register(&mut self, name: &'static str, max_params: usize, handler: Handler) {
        assert!(name.contains('_'), "method {name} has no module");
        let prev = self.methods.insert(
            name,
            Registered {
                max_params,
                handler,
                precheck: None,
                meters: Meters::default(),
            },
        );
        assert!(prev.is_none(), "method {name} registered twice");
    }

    /// Sets how a call of `name` with surplus parameters has its declared ones decoded before
    /// it is refused with `too many arguments`.
    pub fn set_precheck(&mut self, name: &str, check: Precheck) {
        if let Some(r) = self.methods.get_mut(name) {
            r.precheck = Some(check);
        }
    }

    /// Serves `name` over IPC only: HTTP and WebSocket answer that it does not exist.
    pub fn restrict_to_ipc(&mut self, name: &'static str) {
        self.ipc_only.insert(name);
    }

    /// Marks `name` as a method this node knows of but does not build: a call of it is
    /// answered -32601 saying so.
    pub fn mark_unbuilt(&mut self, name: &str) {
        self.unbuilt.insert(name.to_string());
    }

    /// Records that `other` is another implementation's name of module `ours`: a call of
    /// `<other>_<m>` is answered -32601 pointing to `<ours>_<m>` when that exists.
    pub fn alias_module(&mut self, other: &str, ours: &'static str) {
        self.aliases.insert(other.to_string(), ours);
    }

    /// Records an endpoint of `transport` as running and offering `offered` (`None`: every
    /// module), until [`Registry::endpoint_closed`].
    pub fn endpoint_opened(&self, transport: Transport, offered: Option<BTreeSet<String>>) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(transport, offered);
    }

    /// Records the endpoint of `transport` as closed.
    pub fn endpoint_closed(&self, transport: Transport) {
        self.open
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&transport);
    }

    /// The -32601 error for `method`, called on an endpoint of `transport`, with its `data`
    /// saying which case it is: a method of a module this endpoint does not offer (naming the
    /// running endpoints that offer it), a method this node knows of but does not build, or
    /// no such method (with the nearest known name, when one is close).
    fn method_not_found(&self, method: &str, transport: Transport) -> RpcError {
        let e = RpcError::method_not_found(method);
        if self.methods.contains_key(method) {
            if self.ipc_only.contains(method) && transport != Transport::Ipc {
                return e.with_data(format!(
                    "{method} is served over IPC only on this node, not over {}",
                    transport.name()
                ));
            }
            let module = module_of(method);
            let open = self.open.lock().unwrap_or_else(|p| p.into_inner());
            let offering: Vec<&str> = open
                .iter()
                .filter(|(t, offered)| {
                    **t != transport && offered.as_ref().is_none_or(|o| o.contains(module))
                })
                .map(|(t, _)| t.name())
                .collect();
            let elsewhere = if offering.is_empty() {
                "no running endpoint of this node offers it".to_string()
            } else {
                format!("it is offered over {}", offering.join(" and "))
            };
            return e.with_data(format!(
                "module {module} is not offered on this {} endpoint; {elsewhere}",
                transport.name()
            ));
        }
        if self.unbuilt.contains(method) {
            return e.with_data(format!(
                "{method} is a method of the reference node that this node does not build"
            ));
        }
        if let Some((module, rest)) = method.split_once('_') {
            if let Some(ours) = self.aliases.get(module) {
                let twin = format!("{ours}_{rest}");
                if self.methods.contains_key(twin.as_str()) {
                    return e.with_data(format!(
                        "no such method: this node serves the reference's {module} module as {ours}; did you mean {twin}?"
                    ));
                }
            }
        }
        match nearest(method, self.methods.keys().copied()) {
            Some(name) => e.with_data(format!("no such method; did you mean {name}?")),
            None => e.with_data("no such method"),
        }
    }

    /// Registers subscription `name` of `module` (`<module>_subscribe` with `[name, ...]`).
    pub fn register_subscription(
        &mut self,
        module: &str,
        name: &str,
        kind: Arc<dyn SubscriptionKind>,
    ) {
        self.kinds
            .insert((module.to_string(), name.to_string()), kind);
        for m in ["subscribe", "unsubscribe"] {
            self.stream_meters
                .entry(format!("{module}_{m}"))
                .or_default();
        }
    }

    /// Counts every call from now on into `metrics`: per method and transport, a count and
    /// the time to answer.
    pub fn record_to(&mut self, metrics: Arc<Metrics>) {
        self.metrics = Some(metrics);
    }

    /// The meter of `method`'s calls on `transport`.
    fn meter(&self, metrics: &Metrics, method: &str, transport: Transport) -> &CallMeter {
        if let Some(r) = self.methods.get(method) {
            return r.meters.get(metrics, method, transport);
        }
        match self.stream_meters.get(method) {
            Some(m) => m.get(metrics, method, transport),
            None => self.unknown_meters.get(metrics, "unknown", transport),
        }
    }

    pub fn limit(&self) -> &SubscriptionLimit {
        &self.limit
    }

    /// Every module with a registered method or subscription kind, `rpc` included.
    pub fn modules(&self) -> BTreeSet<&'static str> {
        let mut m: BTreeSet<&'static str> = self.methods.keys().map(|n| module_of(n)).collect();
        m.insert("rpc");
        m
    }

    /// The name of every registered method, sorted.
    pub fn names(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.methods.keys().copied().collect();
        v.sort_unstable();
        v
    }

    /// The `(module, name)` of every registered subscription kind, sorted.
    pub fn subscription_kinds(&self) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = self.kinds.keys().cloned().collect();
        v.sort();
        v
    }
}

/// Limits on what one request may carry.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Largest request body (HTTP) or message (WebSocket), in bytes. IPC has its own cap,
    /// [`super::ipc::MAX_IPC_MESSAGE_BYTES`].
    pub max_request_bytes: usize,
    /// Most calls in one batch.
    pub max_batch: usize,
}

/// The reference's 512 KiB request limit, and a batch limit of our own.
pub const DEFAULT_LIMITS: Limits = Limits {
    max_request_bytes: 524_288,
    max_batch: 1000,
};

/// The server as one endpoint sees it: the registry, the modules this endpoint offers and
/// the transport's rules.
#[derive(Clone)]
pub struct Dispatcher {
    registry: Arc<Registry>,
    /// `None`: every module (IPC).
    offered: Option<BTreeSet<String>>,
    transport: Transport,
    public_listener: bool,
    limits: Limits,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(default, borrow, deserialize_with = "present")]
    params: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<&'a RawValue>,
}

/// Only the id of a message whose other members may have the wrong types.
#[derive(Deserialize)]
struct IdOnly<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    id: Option<&'a RawValue>,
}

/// Decodes `params` as the reference does: a value that is not an array is `non-array args`
/// (later, by [`Params::from_value`]); an array element the decoder refuses (a number out of
/// range, a lone surrogate) is `invalid argument <i>: <decoder text>`.
fn decode_params(raw: Option<&RawValue>) -> Result<Option<Value>, RpcError> {
    let Some(raw) = raw else { return Ok(None) };
    if let Ok(v) = serde_json::from_str::<Value>(raw.get()) {
        return Ok(Some(v));
    }
    let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
        return Err(RpcError::invalid_params("non-array args"));
    };
    for (i, item) in items.iter().enumerate() {
        if let Err(e) = serde_json::from_str::<Value>(item.get()) {
            return Err(RpcError::invalid_params(format!(
                "invalid argument {i}: {e}"
            )));
        }
    }
    Err(RpcError::invalid_params("non-array args"))
}

/// A member that is present, even as `null`, is `Some`.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// Splits a module list (`"chain, net,rpc"`) into trimmed names. An empty string is an empty
/// list, which offers nothing but `rpc`.
pub fn parse_module_list(s: &str) -> BTreeSet<String> {
    s.split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// The deepest nesting of arrays and objects a request may have (serde_json's own limit for
/// typed decoding; raw values are skipped without one, so we check before decoding).
pub const MAX_DEPTH: usize = 128;

/// Tracks the nesting depth of a JSON byte stream fed in pieces, strings and escapes
/// included, so that an over-deep request is refused before it is parsed or fully buffered.
#[derive(Debug, Default, Clone)]
pub struct NestingScanner {
    depth: usize,
    in_string: bool,
    escaped: bool,
}

impl NestingScanner {
    /// True when a whole text `bytes` stays within [`MAX_DEPTH`]. A text with no more opening
    /// brackets than that cannot nest deeper, which a quick count shows for most requests.
    pub fn within_limit(bytes: &[u8]) -> bool {
        let opening = bytes.iter().filter(|&&b| b == b'[' || b == b'{').count();
        opening <= MAX_DEPTH || NestingScanner::default().feed(bytes)
    }

    /// [`NestingScanner::within_limit`] for the first JSON value of `bytes` only: what
    /// follows it (ignored by the reader) does not count.
    pub fn first_value_within_limit(bytes: &[u8]) -> bool {
        let opening = bytes.iter().filter(|&&b| b == b'[' || b == b'{').count();
        if opening <= MAX_DEPTH {
            return true;
        }
        match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
            Some(b'[') | Some(b'{') => {}
            _ => return true, // a scalar (or nothing) first: no nesting in it
        }
        let mut scanner = NestingScanner::default();
        for &b in bytes {
            if !scanner.feed(&[b]) {
                return false;
            }
            if scanner.depth == 0 && (b == b']' || b == b'}') && !scanner.in_string {
                return true;
            }
        }
        true
    }

    /// Feeds `bytes`; false once the depth has exceeded [`MAX_DEPTH`].
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        for &b in bytes {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                }
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'[' | b'{' => {
                    self.depth += 1;
                    if self.depth > MAX_DEPTH {
                        return false;
                    }
                }
                b']' | b'}' => self.depth = self.depth.saturating_sub(1),
                _ => {}
            }
        }
        true
    }
}

/// The error for a request nested deeper than [`MAX_DEPTH`].
pub fn too_deep() -> RpcError {
    RpcError::parse(format!("exceeded maximum nesting depth of {MAX_DEPTH}"))
}

/// The key of the one-member object that carries a [`RawJson`] result through a `Value`.
const RAW_JSON_KEY: &str = "\u{0}rpc.raw-json";

/// A result whose JSON text is already written, copied into the response as it is. For
/// results whose object keys must keep an order of their own: a `Value`'s objects are
/// sorted by key. The text must be one valid JSON value.
pub struct RawJson(pub String);

impl serde::Serialize for RawJson {
    /// As a one-member object marking it, which [`response`] writes out as the text.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(Some(1))?;
        m.serialize_entry(RAW_JSON_KEY, &self.0)?;
        m.end()
    }
}

impl RawJson {
    /// The value that carries this text to [`response`], which writes it out as it is (the
    /// text is moved, not copied).
    pub fn into_value(self) -> Value {
        let mut m = serde_json::Map::new();
        m.insert(RAW_JSON_KEY.to_string(), Value::String(self.0));
        Value::Object(m)
    }
}

/// The text of a [`RawJson`] result carried in `v`, taken out; else `v` as it was.
fn take_raw_json(v: Value) -> Result<String, Value> {
    match v {
        Value::Object(mut m)
            if m.len() == 1 && m.get(RAW_JSON_KEY).is_some_and(Value::is_string) =>
        {
            match m.remove(RAW_JSON_KEY) {
                Some(Value::String(s)) => Ok(s),
                _ => unreachable!("checked to be a string"),
            }
        }
        v => Err(v),
    }
}

/// Builds the JSON text of a response. The id is echoed byte for byte.
fn response(id: &str, body: Result<Value, RpcError>) -> String {
    let room = match &body {
        Ok(Value::String(s)) => s.len(),
        _ => 96,
    };
    let mut out = Vec::with_capacity(48 + id.len() + room);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id.as_bytes());
    let written = match body {
        // A string needing no escapes (hex data, addresses: most results) is copied as is.
        Ok(Value::String(s)) if plain(&s) => {
            out.extend_from_slice(br#","result":""#);
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
            Ok(())
        }
        Ok(v) => match take_raw_json(v) {
            // Written around the text, in its own buffer: a large one is never copied.
            Ok(mut text) => {
                out.extend_from_slice(br#","result":"#);
                let head = String::from_utf8(out).expect("ASCII so far");
                // One byte more for the newline a transport puts after it.
                text.reserve_exact(head.len() + 2);
                text.insert_str(0, &head);
                text.push('}');
                return text;
            }
            Err(v) => {
                out.extend_from_slice(br#","result":"#);
                serde_json::to_writer(&mut out, &v)
            }
        },
        Err(e) => {
            out.extend_from_slice(br#","error":"#);
            serde_json::to_writer(&mut out, &e)
        }
    };
    written.expect("values and error objects serialize");
    out.push(b'}');
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// True when `s` needs no escaping inside a JSON string (written to vectorise: no early exit).
fn plain(s: &str) -> bool {
    s.bytes()
        .fold(true, |ok, b| ok & (b >= 0x20) & (b != b'"') & (b != b'\\'))
}

/// An error response with id `null`.
pub fn error_response(e: RpcError) -> String {
    response("null", Err(e))
}

fn valid_id(raw: &RawValue) -> bool {
    !matches!(raw.get().as_bytes().first(), Some(b'{') | Some(b'['))
}

impl Dispatcher {
    /// A dispatcher for one endpoint. `offered` is the endpoint's module list (`None` for all
    /// modules, as IPC); `rpc` is always offered.
    pub fn new(
        registry: Arc<Registry>,
        offered: Option<BTreeSet<String>>,
        transport: Transport,
        public_listener: bool,
        limits: Limits,
    ) -> Dispatcher {
        Dispatcher {
            registry,
            offered,
            transport,
            public_listener,
            limits,
        }
    }

    pub fn transport(&self) -> Transport {
        self.transport
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// True when this endpoint offers `module`.
    pub fn offers(&self, module: &str) -> bool {
        module == "rpc" || self.offered.as_ref().is_none_or(|o| o.contains(module))
    }

    /// The modules this endpoint offers that exist, `rpc` included, sorted (`rpc_modules`).
    pub fn modules(&self) -> Vec<&'static str> {
        self.registry
            .modules()
            .into_iter()
            .filter(|m| self.offers(m))
            .collect()
    }

    /// Handles one HTTP request body (a single message or a batch): the reply, or `None`
    /// when nothing is to be written (a notification, an empty body). Malformed or too deeply
    /// nested JSON answers `parse error`. Stream transports decode their own byte streams
    /// (they answer the decoder's text and close, and check nesting as they read) and call
    /// [`Dispatcher::handle_within_limit`].
    pub fn handle_bytes(&self, body: &[u8]) -> Option<String> {
        let parse_error = || Some(error_response(RpcError::parse("parse error")));
        // Only the first JSON value counts; trailing bytes are ignored, as the reference does.
        if !NestingScanner::first_value_within_limit(body) {
            return parse_error();
        }
        // Most bodies are one well-formed call: read it as a message in one pass. The decoder
        // skips unknown members without checking their text, so the value read must also be
        // UTF-8 (as the general path below requires).
        let first = body.iter().find(|b| !b.is_ascii_whitespace());
        if first == Some(&b'{') {
            let mut stream = serde_json::Deserializer::from_slice(body).into_iter::<Message>();
            if let Some(Ok(msg)) = stream.next() {
                if std::str::from_utf8(&body[..stream.byte_offset()]).is_ok() {
                    return self.handle_message(msg, None);
                }
            }
        }
        match serde_json::Deserializer::from_slice(body)
            .into_iter::<&RawValue>()
            .next()
        {
            None => None,
            Some(Ok(raw)) => self.handle_within_limit(raw, None),
            Some(Err(_)) => parse_error(),
        }
    }

    /// Handles one decoded JSON value (object or batch array).
    pub fn handle_value(&self, raw: &RawValue, conn: Option<&Arc<Connection>>) -> Option<String> {
        if !NestingScanner::within_limit(raw.get().as_bytes()) {
            return Some(error_response(too_deep()));
        }
        self.handle_within_limit(raw, conn)
    }

    /// [`Dispatcher::handle_value`] for a value whose depth the caller has already checked
    /// (at most [`MAX_DEPTH`]), as the stream transports' decoders do.
    pub fn handle_within_limit(
        &self,
        raw: &RawValue,
        conn: Option<&Arc<Connection>>,
    ) -> Option<String> {
        let text = raw.get();
        if text.starts_with('[') {
            let items: Vec<&RawValue> = match serde_json::from_str(text) {
                Ok(v) => v,
                Err(e) => return Some(error_response(RpcError::parse(e.to_string()))),
            };
            if items.is_empty() {
                return Some(error_response(RpcError::new(
                    super::error::INVALID_REQUEST,
                    "empty batch",
                )));
            }
            if items.len() > self.limits.max_batch {
                return Some(error_response(RpcError::new(
                    super::error::INVALID_REQUEST,
                    format!(
                        "batch too large: {} calls, at most {} allowed",
                        items.len(),
                        self.limits.max_batch
                    ),
                )));
            }
            let replies: Vec<String> = items
                .into_iter()
                .filter_map(|m| self.handle_one(m, conn))
                .collect();
            if replies.is_empty() {
                return None;
            }
            return Some(format!("[{}]", replies.join(",")));
        }
        self.handle_one(raw, conn)
    }

    fn handle_one(&self, raw: &RawValue, conn: Option<&Arc<Connection>>) -> Option<String> {
        // Only an object is a message: serde would read an array into the struct by position.
        let parsed = if raw.get().starts_with('{') {
            serde_json::from_str::<Message>(raw.get())
        } else {
            Err(serde::de::Error::custom("not an object"))
        };
        let msg: Message = match parsed {
            Ok(m) => m,
            Err(_) => {
                // Not an object, or members of the wrong type: answer with the id (byte for
                // byte) if we can still find a usable one.
                let id = if raw.get().starts_with('{') {
                    serde_json::from_str::<IdOnly>(raw.get())
                        .ok()
                        .and_then(|m| m.id)
                        .filter(|i| valid_id(i))
                } else {
                    None
                };
                let id = id.map_or("null", RawValue::get);
                return Some(response(id, Err(RpcError::invalid_request())));
            }
        };
        self.handle_message(msg, conn)
    }

    /// Handles one message whose members have the right types.
    fn handle_message(&self, msg: Message, conn: Option<&Arc<Connection>>) -> Option<String> {
        let method = msg.method.as_deref().unwrap_or("");
        let id = msg.id.filter(|i| valid_id(i));
        if method.is_empty() {
            if id.is_some() && msg.params.is_none() && (msg.result.is_some() || msg.error.is_some())
            {
                return None; // an inbound response: client-side traffic, dropped
            }
            let id_text = id.map(RawValue::get).unwrap_or("null");
            return Some(response(id_text, Err(RpcError::invalid_request())));
        }
        let notification = msg.id.is_none();
        if notification && method.ends_with("_subscription") {
            return None;
        }
        if !notification && id.is_none() {
            return Some(response("null", Err(RpcError::invalid_request())));
        }
        let version_ok = msg.jsonrpc.is_some_and(|v| v.get() == "\"2.0\"");
        let result = if !version_ok {
            Err(RpcError::invalid_request())
        } else {
            self.call_decoded(method, decode_params(msg.params), conn)
        };
        if notification {
            return None;
        }
        Some(response(id.map(RawValue::get).unwrap_or("null"), result))
    }

    /// Runs one call: method lookup (gated by module), parameter count, the handler.
    pub fn call(
        &self,
        method: &str,
        params: Option<Value>,
        conn: Option<&Arc<Connection>>,
    ) -> Result<Value, RpcError> {
        self.call_decoded(method, Ok(params), conn)
    }

    /// [`Dispatcher::call`] with parameters that may have failed to decode: that error is
    /// answered where the reference decodes them, after the method is found. Counted when
    /// the registry records calls.
    fn call_decoded(
        &self,
        method: &str,
        params: Result<Option<Value>, RpcError>,
        conn: Option<&Arc<Connection>>,
    ) -> Result<Value, RpcError> {
        let Some(metrics) = self.registry.metrics.as_deref() else {
            return self.run_call(method, params, conn);
        };
        let started = Instant::now();
        let result = self.run_call(method, params, conn);
        self.registry
            .meter(metrics, method, self.transport)
            .record(started.elapsed());
        result
    }

    /// Runs one call: subscriptions, or method lookup (gated by module), parameter count,
    /// the handler.
    fn run_call(
        &self,
        method: &str,
        params: Result<Option<Value>, RpcError>,
        conn: Option<&Arc<Connection>>,
    ) -> Result<Value, RpcError> {
        if method.ends_with("_unsubscribe") {
            return self.unsubscribe(params?, conn);
        }
        if method.ends_with("_subscribe") {
            return self.subscribe(method, params, conn);
        }
        let Some(reg) = self.registry.methods.get(method) else {
            return Err(self.registry.method_not_found(method, self.transport));
        };
        if !self.offers(module_of(method))
            || (self.transport != Transport::Ipc && self.registry.ipc_only.contains(method))
        {
            return Err(self.registry.method_not_found(method, self.transport));
        }
        let params = Params::from_value(params?)?;
        if reg.max_params > 0 && params.len() > reg.max_params {
            if let Some(check) = &reg.precheck {
                check(&params)?;
            }
        }
        params.at_most(reg.max_params)?;
        let call = Call {
            method,
            transport: self.transport,
            public_listener: self.public_listener,
            conn,
            dispatcher: self,
        };
        match catch_unwind(AssertUnwindSafe(|| (reg.handler)(&call, &params))) {
            Ok(r) => r,
            Err(_) => Err(RpcError::server("method handler crashed")),
        }
    }

    /// Subscribes, with the reference's checks in its order (§1.10): a transport without
    /// notifications, the per-connection limit, the parameters, then the name in the module
    /// (a module this endpoint does not offer has no subscriptions).
    fn subscribe(
        &self,
        method: &str,
        params: Result<Option<Value>, RpcError>,
        conn: Option<&Arc<Connection>>,
    ) -> Result<Value, RpcError> {
        let module = method.split_once('_').map(|(m, _)| m).unwrap_or(method);
        let Some(conn) = conn else {
            return Err(RpcError::server("notifications not supported"));
        };
        let limit = self.registry.limit.get();
        if conn.subscription_count() as i64 >= limit {
            return Err(SubscriptionLimit::exceeded(limit));
        }
        let params = Params::from_value(params?)?;
        let name = match params.raw(0) {
            Some(Value::String(s)) => s.clone(),
            _ => {
                return Err(RpcError::invalid_params(
                    "expected subscription name as first argument",
                ))
            }
        };
        let kind = self
            .registry
            .kinds
            .get(&(module.to_string(), name.clone()))
            .filter(|_| self.offers(module));
        let Some(kind) = kind else {
            return Err(RpcError::new(
                super::error::METHOD_NOT_FOUND,
                format!("no \"{name}\" subscription in {module} namespace"),
            ));
        };
        let notifier = conn.add(module);
        let id = notifier.id().to_string();
        match kind.subscribe(&params.shift(), notifier) {
            Ok(attachment) => conn.attach(&id, attachment),
            Err(e) => {
                conn.remove(&id);
                return Err(e);
            }
        }
        Ok(Value::String(id))
    }

    fn unsubscribe(
        &self,
        params: Option<Value>,
        conn: Option<&Arc<Connection>>,
    ) -> Result<Value, RpcError> {
        let params = Params::from_value(params)?;
        let id: String = params.required(0)?;
        match conn {
            Some(c) if c.remove(&id) => Ok(Value::Bool(true)),
            _ => Err(RpcError::server("subscription not found")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// `rpc_modules` as the API layer declares it: the modules of the call's endpoint.
    fn register_modules(r: &mut Registry) {
        r.register(
            "rpc_modules",
            0,
            Arc::new(|c: &Call, _p: &Params| {
                let m: BTreeMap<&str, &str> = c.modules().into_iter().map(|m| (m, "1.0")).collect();
                Ok(serde_json::to_value(m).unwrap())
            }),
        );
    }

    fn dispatcher(offered: Option<&str>) -> Dispatcher {
        let mut r = Registry::default();
        r.register(
            "test_echo",
            2,
            Arc::new(|_c: &Call, p: &Params| {
                Ok(json!([p.required::<String>(0)?, p.optional::<u64>(1)?]))
            }),
        );
        r.register(
            "test_panic",
            0,
            Arc::new(|_c: &Call, _p: &Params| panic!("boom")),
        );
        r.register(
            "other_x",
            0,
            Arc::new(|_c: &Call, _p: &Params| Ok(json!(1))),
        );
        register_modules(&mut r);
        Dispatcher::new(
            Arc::new(r),
            offered.map(parse_module_list),
            Transport::Http,
            false,
            DEFAULT_LIMITS,
        )
    }

    fn reply(d: &Dispatcher, body: &str) -> Option<String> {
        d.handle_bytes(body.as_bytes())
    }

    /// A result written beforehand keeps its keys' order (a `Value` would sort them), alone
    /// and in a batch.
    #[test]
    fn raw_json_results_are_copied_as_written() {
        let mut r = Registry::default();
        r.register(
            "test_raw",
            0,
            Arc::new(|_c: &Call, _p: &Params| {
                Ok(serde_json::to_value(RawJson(r#"{"z":1,"a":[true]}"#.into())).unwrap())
            }),
        );
        let d = Dispatcher::new(Arc::new(r), None, Transport::Http, false, DEFAULT_LIMITS);
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1,"method":"test_raw"}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"z":1,"a":[true]}}"#
        );
        assert_eq!(
            reply(&d, r#"[{"jsonrpc":"2.0","id":1,"method":"test_raw"}]"#).unwrap(),
            r#"[{"jsonrpc":"2.0","id":1,"result":{"z":1,"a":[true]}}]"#
        );
    }

    #[test]
    fn envelope_rules() {
        let d = dispatcher(None);
        assert_eq!(
            reply(
                &d,
                r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["x"]}"#
            )
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":["x",null]}"#
        );
        // The id is echoed byte for byte, null included.
        assert_eq!(
            reply(
                &d,
                r#"{"jsonrpc":"2.0","id":1.50,"method":"test_echo","params":["x",2]}"#
            )
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":1.50,"result":["x",2]}"#
        );
        assert_eq!(
            reply(
                &d,
                r#"{"jsonrpc":"2.0","id":null,"method":"test_echo","params":["x"]}"#
            )
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"result":["x",null]}"#
        );
        // Notifications get nothing, not even errors.
        assert_eq!(reply(&d, r#"{"jsonrpc":"2.0","method":"test_nope"}"#), None);
        // jsonrpc 2.0 is required (DECISIONS.md).
        assert_eq!(
            reply(&d, r#"{"id":7,"method":"test_echo","params":["x"]}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(
                &d,
                r#"{"jsonrpc":"1.0","id":7,"method":"test_echo","params":["x"]}"#
            )
            .unwrap(),
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(&d, "1").unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(&d, "{}").unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(&d, r#"{"id":1}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":{"a":1},"method":"test_echo"}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1,"method":5}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        // Inbound responses are dropped.
        assert_eq!(reply(&d, r#"{"jsonrpc":"2.0","id":1,"result":5}"#), None);
        assert_eq!(reply(&d, "   "), None);
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1,"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
        );
    }

    /// -32601 keeps the reference's text and says in `data` which case it is.
    #[test]
    fn method_not_found_says_which_case_it_is() {
        let ok = || -> Handler { Arc::new(|_c: &Call, _p: &Params| Ok(json!(1))) };
        let mut r = Registry::default();
        for name in [
            "admin_addPeer",
            "admin_peers",
            "chain_blockNumber",
            "debug_setHead",
        ] {
            r.register(name, 1, ok());
        }
        r.restrict_to_ipc("debug_setHead");
        r.mark_unbuilt("governance_vote");
        r.alias_module("klay", "chain");
        let r = Arc::new(r);
        let http = Dispatcher::new(
            r.clone(),
            Some(parse_module_list("chain,debug")),
            Transport::Http,
            false,
            DEFAULT_LIMITS,
        );
        let data = |method: &str| -> String {
            let e = http.call(method, None, None).unwrap_err();
            assert_eq!(
                (e.code, e.message.as_str()),
                (
                    -32601,
                    format!("the method {method} does not exist/is not available").as_str()
                )
            );
            e.data.unwrap().as_str().unwrap().to_string()
        };
        // No such method: the nearest name when it is a slip of the keyboard.
        assert_eq!(
            data("admin_addPeeer"),
            "no such method; did you mean admin_addPeer?"
        );
        assert_eq!(
            data("chain_BlockNumbr"),
            "no such method; did you mean chain_blockNumber?"
        );
        assert_eq!(data("foo_bar"), "no such method");
        assert_eq!(
            data("klay_blockNumber"),
            "no such method: this node serves the reference's klay module as chain; did you mean chain_blockNumber?"
        );
        // A module this endpoint does not offer: where it is offered.
        assert_eq!(
            data("admin_peers"),
            "module admin is not offered on this HTTP endpoint; no running endpoint of this node offers it"
        );
        r.endpoint_opened(Transport::Http, Some(parse_module_list("chain,debug")));
        r.endpoint_opened(Transport::Ipc, None);
        r.endpoint_opened(Transport::Ws, Some(parse_module_list("admin")));
        assert_eq!(
            data("admin_peers"),
            "module admin is not offered on this HTTP endpoint; it is offered over WebSocket and IPC"
        );
        r.endpoint_closed(Transport::Ws);
        assert_eq!(
            data("admin_peers"),
            "module admin is not offered on this HTTP endpoint; it is offered over IPC"
        );
        assert_eq!(
            data("debug_setHead"),
            "debug_setHead is served over IPC only on this node, not over HTTP"
        );
        // A method this node knows of but does not build.
        assert_eq!(
            data("governance_vote"),
            "governance_vote is a method of the reference node that this node does not build"
        );
    }

    #[test]
    fn nearest_names_are_close_ones_only() {
        let names = [
            "personal_unlockAccount",
            "personal_lockAccount",
            "admin_peers",
        ];
        let near = |n: &str| nearest(n, names.iter().copied());
        assert_eq!(
            near("personal_unlockAcount"),
            Some("personal_unlockAccount")
        );
        assert_eq!(near("PERSONAL_LOCKACCOUNT"), Some("personal_lockAccount"));
        assert_eq!(near("admin_peer"), Some("admin_peers"));
        assert_eq!(near("admin_pee"), None);
        assert_eq!(near("x"), None);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn methods_params_and_gating() {
        let d = dispatcher(Some("test"));
        let err = |body: &str| -> Value {
            serde_json::from_str::<Value>(&reply(&d, body).unwrap()).unwrap()["error"].clone()
        };
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_nope","params":5}"#),
            json!({"code":-32601,"message":"the method test_nope does not exist/is not available","data":"no such method"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"other_x"}"#),
            json!({"code":-32601,"message":"the method other_x does not exist/is not available","data":"module other is not offered on this HTTP endpoint; no running endpoint of this node offers it"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":{}}"#),
            json!({"code":-32602,"message":"non-array args"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":[]}"#),
            json!({"code":-32602,"message":"missing value for required argument 0"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["a",1,2]}"#),
            json!({"code":-32602,"message":"too many arguments, want at most 2"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_panic","params":[1,2]}"#),
            json!({"code":-32000,"message":"method handler crashed"})
        );
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules"}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"rpc":"1.0","test":"1.0"}}"#
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules","params":{}}"#),
            json!({"code":-32602,"message":"non-array args"})
        );
        // Over HTTP any *_subscribe is refused first, whatever its module (reference §1.10).
        for m in ["chain_subscribe", "test_subscribe"] {
            assert_eq!(
                err(&format!(
                    r#"{{"jsonrpc":"2.0","id":1,"method":"{m}","params":["newHeads"]}}"#
                )),
                json!({"code":-32000,"message":"notifications not supported"})
            );
        }
        // Parameters the decoder refuses: per element, after the method is found.
        let e = err(r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["a",1e400]}"#);
        assert_eq!(e["code"], -32602);
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .starts_with("invalid argument 1: number out of range"),
            "{e}"
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":1e400}"#),
            json!({"code":-32602,"message":"non-array args"})
        );
        assert_eq!(
            err(r#"{"jsonrpc":"2.0","id":1,"method":"test_nope","params":[1e400]}"#),
            json!({"code":-32601,"message":"the method test_nope does not exist/is not available","data":"no such method"})
        );
        // Members of the wrong type: the id is still echoed byte for byte.
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1.50,"method":5}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1.50,"error":{"code":-32600,"message":"invalid request"}}"#
        );
        let d = dispatcher(Some(""));
        assert_eq!(
            reply(&d, r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules"}"#).unwrap(),
            r#"{"jsonrpc":"2.0","id":1,"result":{"rpc":"1.0"}}"#
        );
    }

    #[test]
    fn result_strings_are_escaped_when_they_need_it() {
        let mut r = Registry::default();
        r.register(
            "test_echo",
            2,
            Arc::new(|_c: &Call, p: &Params| Ok(Value::String(p.required::<String>(0)?))),
        );
        let d = Dispatcher::new(Arc::new(r), None, Transport::Http, false, DEFAULT_LIMITS);
        for s in [
            "0xabc",
            "",
            "a\"b",
            "back\\slash",
            "tab\tnew\nline\u{1}",
            "é ✓",
        ] {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "test_echo", "params": [s]});
            let out = reply(&d, &body.to_string()).unwrap();
            let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
            assert_eq!(v["result"], json!(s), "{out}");
            let escaped = serde_json::to_string(s).unwrap();
            assert_eq!(
                out,
                format!(r#"{{"jsonrpc":"2.0","id":1,"result":{escaped}}}"#)
            );
        }
    }

    #[test]
    fn a_body_is_its_first_value() {
        let d = dispatcher(None);
        let call = r#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["x"]}"#;
        let want = r#"{"jsonrpc":"2.0","id":1,"result":["x",null]}"#;
        for body in [
            format!(" \r\n\t{call}"),
            format!("{call} trailing {{ garbage"),
            format!("{call}{call}"),
        ] {
            assert_eq!(reply(&d, &body).as_deref(), Some(want), "{body}");
        }
        // Deep nesting after the first value does not count; in it, it does.
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH + 1), "]".repeat(MAX_DEPTH + 1));
        assert_eq!(reply(&d, &format!("{call}{deep}")).as_deref(), Some(want));
        let parse_error =
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#;
        assert_eq!(
            reply(&d, &format!("{deep}{call}")).as_deref(),
            Some(parse_error)
        );
        // Bytes that are not UTF-8 in an ignored member of the first value: a parse error (as
        // in a batch); after the first value they are ignored.
        let mut bad =
            br#"{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["x"],"z":""#.to_vec();
        bad.extend_from_slice(b"\xff\"}");
        assert_eq!(d.handle_bytes(&bad).as_deref(), Some(parse_error));
        let mut after = call.as_bytes().to_vec();
        after.extend_from_slice(b" \xff");
        assert_eq!(d.handle_bytes(&after).as_deref(), Some(want));
        // A first value cut short is a parse error, whatever its members so far.
        assert_eq!(
            reply(&d, &call[..call.len() - 1]).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
        );
    }

    #[test]
    fn nesting_is_counted_outside_strings_only() {
        let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert!(NestingScanner::within_limit(deep(MAX_DEPTH).as_bytes()));
        assert!(!NestingScanner::within_limit(
            deep(MAX_DEPTH + 1).as_bytes()
        ));
        // Many brackets, but inside a string (escaped quotes included): within the limit.
        let in_string = format!(r#"["\"{}"]"#, "[{".repeat(MAX_DEPTH));
        assert!(NestingScanner::within_limit(in_string.as_bytes()));
        // Many brackets side by side: within the limit.
        let wide = format!("[{}]", vec!["[]"; 3 * MAX_DEPTH].join(","));
        assert!(NestingScanner::within_limit(wide.as_bytes()));
        let d = dispatcher(None);
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["{}"]}}"#,
            "[".repeat(3 * MAX_DEPTH)
        );
        let out = reply(&d, &body).unwrap();
        assert!(out.contains(r#""result":["#), "{out}");
    }

    #[test]
    fn batches() {
        let d = dispatcher(None);
        assert_eq!(
            reply(&d, r#"[["2.0",1,"test_echo"]]"#).unwrap(),
            r#"[{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}}]"#
        );
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        assert_eq!(
            reply(&d, &deep).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#
        );
        let ok_depth = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["{}",{}]}}"#,
            "[".repeat(500),
            "[".repeat(100) + &"]".repeat(100)
        );
        assert!(
            reply(&d, &ok_depth).unwrap().contains("invalid argument 1"),
            "brackets inside strings do not count"
        );
        assert_eq!(
            reply(&d, "[]").unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"empty batch"}}"#
        );
        assert_eq!(
            reply(&d, r#"[{"jsonrpc":"2.0","id":1,"method":"test_echo","params":["a"]},{"jsonrpc":"2.0","method":"test_echo","params":["n"]},1,{"jsonrpc":"2.0","id":"b","method":"nope"}]"#).unwrap(),
            r#"[{"jsonrpc":"2.0","id":1,"result":["a",null]},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request"}},{"jsonrpc":"2.0","id":"b","error":{"code":-32601,"message":"the method nope does not exist/is not available","data":"no such method"}}]"#
        );
        assert_eq!(
            reply(
                &d,
                r#"[{"jsonrpc":"2.0","method":"test_echo","params":["n"]}]"#
            ),
            None
        );
        let big = format!(
            "[{}]",
            vec![r#"{"jsonrpc":"2.0","id":1,"method":"rpc_modules"}"#; 1001].join(",")
        );
        assert_eq!(
            reply(&d, &big).unwrap(),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large: 1001 calls, at most 1000 allowed"}}"#
        );
    }

    #[test]
    fn calls_are_counted_per_method_and_transport_when_recording() {
        let mut r = Registry::default();
        r.register(
            "chain_x",
            0,
            Arc::new(|_c: &Call, _p: &Params| Ok(json!(1))),
        );
        r.register_subscription(
            "chain",
            "newHeads",
            Arc::new(super::super::pubsub::FeedKind(
                super::super::pubsub::Feed::new(),
            )),
        );
        let metrics = Arc::new(Metrics::new(true));
        r.record_to(metrics.clone());
        let r = Arc::new(r);
        let http = Dispatcher::new(r.clone(), None, Transport::Http, false, DEFAULT_LIMITS);
        let ipc = Dispatcher::new(r, None, Transport::Ipc, false, DEFAULT_LIMITS);
        for _ in 0..3 {
            http.handle_bytes(br#"{"jsonrpc":"2.0","id":1,"method":"chain_x"}"#);
        }
        // A batch counts each call; a refused call counts too.
        http.handle_bytes(
            br#"[{"jsonrpc":"2.0","id":1,"method":"chain_x"},{"jsonrpc":"2.0","id":2,"method":"chain_x","params":[1]}]"#,
        );
        ipc.call("chain_x", None, None).unwrap();
        // Names nobody registered are one series, whatever they are.
        http.call("nope_a", None, None).unwrap_err();
        http.call("nope_b", None, None).unwrap_err();
        http.call("nope_subscribe", None, None).unwrap_err();
        http.call("chain_subscribe", Some(json!(["newHeads"])), None)
            .unwrap_err();
        let counts: Vec<(String, String, u64)> = metrics
            .calls()
            .into_iter()
            .map(|c| (c.method, c.transport, c.count))
            .collect();
        let row = |m: &str, t: &str, n| (m.to_string(), t.to_string(), n);
        assert_eq!(
            counts,
            vec![
                row("chain_subscribe", "http", 1),
                row("chain_x", "http", 5),
                row("chain_x", "ipc", 1),
                row("unknown", "http", 3),
            ]
        );
    }

    #[test]
    fn subscriptions_need_a_stream_and_respect_the_limit() {
        let mut r = Registry::default();
        r.register(
            "chain_x",
            0,
            Arc::new(|_c: &Call, _p: &Params| Ok(json!(1))),
        );
        let feed = super::super::pubsub::Feed::new();
        r.register_subscription(
            "chain",
            "newHeads",
            Arc::new(super::super::pubsub::FeedKind(feed.clone())),
        );
        let r = Arc::new(r);
        let http = Dispatcher::new(r.clone(), None, Transport::Http, false, DEFAULT_LIMITS);
        assert_eq!(
            http.call("chain_subscribe", Some(json!(["newHeads"])), None)
                .unwrap_err()
                .message,
            "notifications not supported"
        );
        assert_eq!(
            http.call("chain_unsubscribe", Some(json!(["0x1"])), None)
                .unwrap_err()
                .message,
            "subscription not found"
        );
        let ws = Dispatcher::new(r.clone(), None, Transport::Ws, false, DEFAULT_LIMITS);
        let (tx, rx) = std::sync::mpsc::channel::<String>();
        let conn = Connection::new(move |m| tx.send(m).is_ok());
        assert_eq!(
            ws.call("chain_subscribe", Some(json!(["nope"])), Some(&conn))
                .unwrap_err(),
            RpcError::new(-32601, "no \"nope\" subscription in chain namespace")
        );
        // A module this endpoint does not offer, or that does not exist, has no subscriptions.
        let gated = Dispatcher::new(
            r.clone(),
            Some(parse_module_list("")),
            Transport::Ws,
            false,
            DEFAULT_LIMITS,
        );
        assert_eq!(
            gated
                .call("chain_subscribe", Some(json!(["newHeads"])), Some(&conn))
                .unwrap_err(),
            RpcError::new(-32601, "no \"newHeads\" subscription in chain namespace")
        );
        assert_eq!(
            ws.call("nope_subscribe", Some(json!(["x"])), Some(&conn))
                .unwrap_err(),
            RpcError::new(-32601, "no \"x\" subscription in nope namespace")
        );
        assert_eq!(
            ws.call("chain_subscribe", Some(json!([5])), Some(&conn))
                .unwrap_err()
                .message,
            "expected subscription name as first argument"
        );
        assert_eq!(
            ws.call("chain_subscribe", Some(json!(["newHeads", 1])), Some(&conn))
                .unwrap_err()
                .code,
            -32602
        );
        assert_eq!(
            conn.subscription_count(),
            0,
            "a failed subscribe leaves nothing behind"
        );
        r.limit().set(2);
        let a = ws
            .call("chain_subscribe", Some(json!(["newHeads"])), Some(&conn))
            .unwrap();
        ws.call("chain_subscribe", Some(json!(["newHeads"])), Some(&conn))
            .unwrap();
        assert_eq!(
            ws.call("chain_subscribe", Some(json!(["newHeads"])), Some(&conn)).unwrap_err().message,
            "Maximum 2 subscriptions are allowed for a websocket connection. The limit can be updated with 'admin_setMaxSubscriptionPerWSConn' API"
        );
        assert_eq!(
            ws.call("foo_unsubscribe", Some(json!([a])), Some(&conn))
                .unwrap(),
            json!(true)
        );
        conn.activate();
        feed.publish(&json!({"n": 1}));
        assert_eq!(
            rx.try_iter().count(),
            1,
            "one live subscription gets one notification"
        );
    }
}
