//! How a namespace declares its methods: one [`Method`] per method, holding its name, its
//! positional parameters with their kinds, a one-line summary and its handler, side by side in
//! the namespace's [`Namespace::METHODS`]. The node registers exactly these handlers; `chainctl`,
//! the console's completion and the man pages read the same declarations ([`super::spec`]).
//! A method cannot be declared without a handler (the field is required), and a handler is
//! reachable only through its declaration.

use std::sync::Arc;

use serde::Serialize;
use serde_json::Value;

use crate::rpc::{Call, Params, Registry, RpcError, SubscriptionKind};

/// What kind of value a parameter takes; clients use it to parse arguments and to know which
/// ones are secrets (read from a file, a prompt or standard input, never argv or a history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    String,
    /// A passphrase that unlocks an existing key.
    Passphrase,
    /// A passphrase that will encrypt a new key file (clients ask for it twice).
    NewPassphrase,
    /// Raw private key data (hex): a secret, sent as a string.
    KeyData,
    Address,
    Bytes,
    /// A 32-byte hash (a block's or a transaction's), 0x + 64 hex digits.
    Hash,
    Integer,
    Bool,
    Object,
    Any,
    /// The path of a file on the node's machine (`admin_exportChain`): clients make a
    /// relative one absolute against their own working directory when the node runs on
    /// their machine, since the node's working directory is not theirs.
    Path,
}

impl ParamKind {
    /// True for both kinds of passphrase: read from a file or a no-echo prompt, never argv.
    pub fn is_passphrase(self) -> bool {
        matches!(self, ParamKind::Passphrase | ParamKind::NewPassphrase)
    }

    /// True for every parameter whose value is a secret (passphrases and key data): clients
    /// keep it out of argv, histories and logs.
    pub fn is_secret(self) -> bool {
        self.is_passphrase() || self == ParamKind::KeyData
    }

    /// What a value of this kind is, in a few words (the console's `help`).
    pub fn describe(self) -> &'static str {
        match self {
            ParamKind::String => "a string",
            ParamKind::Passphrase => "a passphrase (a secret: null or left out, it is prompted for)",
            ParamKind::NewPassphrase => {
                "a new passphrase (a secret: null or left out, it is prompted for twice)"
            }
            ParamKind::KeyData => {
                "raw private key data, hex (a secret: null or left out, it is prompted for)"
            }
            ParamKind::Address => "an address, 0x + 40 hex digits",
            ParamKind::Bytes => "0x-prefixed hex bytes",
            ParamKind::Hash => "a 32-byte hash, 0x + 64 hex digits",
            ParamKind::Integer => "an integer",
            ParamKind::Bool => "true or false",
            ParamKind::Object => "a JSON object",
            ParamKind::Any => "any JSON value",
            ParamKind::Path => {
                "a file path on the node's machine (a relative one is made absolute against this client's working directory when the node runs on this machine)"
            }
        }
    }
}

/// One positional parameter of a method.
#[derive(Debug, Clone, Copy)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub optional: bool,
}

/// A required parameter.
pub const fn p(name: &'static str, kind: ParamKind) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        optional: false,
    }
}

/// An optional parameter (absent or `null` is the default).
pub const fn opt(name: &'static str, kind: ParamKind) -> ParamSpec {
    ParamSpec {
        name,
        kind,
        optional: true,
    }
}

/// A method's name, parameters, one-line summary and result: what clients know of it.
#[derive(Debug, Clone, Copy)]
pub struct MethodSpec {
    pub name: &'static str,
    pub params: &'static [ParamSpec],
    pub summary: &'static str,
    /// What a successful call answers, in a few words (`string: the address`).
    pub returns: &'static str,
}

impl MethodSpec {
    /// The module: the text before the first `_`.
    pub fn module(&self) -> &'static str {
        self.name
            .split_once('_')
            .map(|(m, _)| m)
            .unwrap_or(self.name)
    }
}

/// A handler of namespace `A`: the namespace, the call, its parameters.
pub type HandlerFn<A> = fn(&A, &Call, &Params) -> Result<Value, RpcError>;

/// One method of namespace `A`: its declaration and its handler. Written with [`crate::method!`].
pub struct Method<A: 'static> {
    pub spec: MethodSpec,
    pub handler: HandlerFn<A>,
}

/// A subscription kind of namespace `A` (`<module>_subscribe` with `[name]`): its name, a
/// summary, and how the namespace makes it.
pub struct Subscription<A: 'static> {
    pub name: &'static str,
    pub summary: &'static str,
    pub kind: fn(&Arc<A>) -> Arc<dyn SubscriptionKind>,
}

/// A JSON-RPC namespace: one type holding the few handles its methods use.
pub trait Namespace: Send + Sync + Sized + 'static {
    /// The module name every method name starts with (`personal` for `personal_sign`).
    const MODULE: &'static str;
    /// Every method, in the order clients list them.
    const METHODS: &'static [Method<Self>];
    /// The subscription kinds of `<MODULE>_subscribe`; none by default.
    const SUBSCRIPTIONS: &'static [Subscription<Self>] = &[];
}

/// Registers every method and subscription kind of `api` in `r`.
pub fn register<A: Namespace>(api: &Arc<A>, r: &mut Registry) {
    for m in A::METHODS {
        let (api, handler) = (api.clone(), m.handler);
        let h: crate::rpc::Handler = if m.spec.params.iter().any(|p| p.kind.is_secret()) {
            // A method given a secret handles it (and the key it unlocks) on this thread's
            // stack, where moved-from copies outlive the call: wipe what it used.
            Arc::new(move |c: &Call, p: &Params| {
                let reply = handler(&api, c, p);
                crate::wipe_alloc::wipe_stack();
                reply
            })
        } else {
            Arc::new(move |c: &Call, p: &Params| handler(&api, c, p))
        };
        r.register(m.spec.name, m.spec.params.len(), h);
        r.set_precheck(
            m.spec.name,
            Arc::new(move |p: &Params| precheck(m.spec.params, p)),
        );
    }
    for s in A::SUBSCRIPTIONS {
        r.register_subscription(A::MODULE, s.name, (s.kind)(api));
    }
}

/// Decodes the declared parameters in order, as the reference's decoder does before it counts
/// surplus ones: the dispatcher runs this only when a call has more parameters than declared,
/// so that a bad argument is reported before `too many arguments`. Only kinds whose decoding
/// is one Go type are checked (no value is kept; strings, which may be secrets, are checked
/// for their JSON type only).
fn precheck(specs: &[ParamSpec], p: &Params) -> Result<(), RpcError> {
    use crate::rpc::{go_type_error, json_type};
    for (i, spec) in specs.iter().enumerate() {
        let v = match p.raw(i) {
            None | Some(Value::Null) => continue,
            Some(v) => v,
        };
        let invalid = |m: String| RpcError::invalid_params(format!("invalid argument {i}: {m}"));
        match spec.kind {
            ParamKind::Address => {
                p.required::<crate::crypto::Address>(i)?;
            }
            ParamKind::Hash => {
                p.required::<super::goparams::HashParam>(i)?;
            }
            ParamKind::Bytes => {
                p.required::<crate::rpc::HexBytes>(i)?;
            }
            ParamKind::Bool => {
                p.required::<bool>(i)?;
            }
            ParamKind::String
            | ParamKind::Passphrase
            | ParamKind::NewPassphrase
            | ParamKind::KeyData
            | ParamKind::Path => {
                if !v.is_string() {
                    return Err(invalid(go_type_error(json_type(v), "string")));
                }
            }
            ParamKind::Integer | ParamKind::Object | ParamKind::Any => {}
        }
    }
    Ok(())
}

const SUBSCRIBE_PARAMS: &[ParamSpec] = &[p("name", ParamKind::String)];
const UNSUBSCRIBE_PARAMS: &[ParamSpec] = &[p("id", ParamKind::String)];

/// The declarations of `A` as clients see them: its methods, then `<module>_subscribe` and
/// `<module>_unsubscribe` when it has subscription kinds.
pub fn specs<A: Namespace>() -> Vec<MethodSpec> {
    let mut v: Vec<MethodSpec> = A::METHODS.iter().map(|m| m.spec).collect();
    if !A::SUBSCRIPTIONS.is_empty() {
        let names: Vec<&str> = A::SUBSCRIPTIONS.iter().map(|s| s.name).collect();
        // Made once per process for the client table; leaking them keeps the table 'static.
        let leak = |s: String| -> &'static str { Box::leak(s.into_boxed_str()) };
        v.push(MethodSpec {
            name: leak(format!("{}_subscribe", A::MODULE)),
            params: SUBSCRIBE_PARAMS,
            summary: leak(format!(
                "Subscribe to {} (WebSocket, IPC)",
                names.join(" or ")
            )),
            returns: "string: the subscription id; then one notification per event, {subscription, result}",
        });
        v.push(MethodSpec {
            name: leak(format!("{}_unsubscribe", A::MODULE)),
            params: UNSUBSCRIBE_PARAMS,
            summary: "Cancel a subscription",
            returns: "true; an error for an unknown id",
        });
    }
    v
}

/// A handler's typed result as the dispatcher takes it: the value serialized, the error
/// mapped (in one place: `impl From<api::Error> for RpcError`).
/// A [`RawJson`](crate::rpc::RawJson) result (a dump's text, hundreds of megabytes) is moved
/// into the value, not copied as serializing it would.
pub fn reply<T: Serialize + 'static, E: Into<RpcError>>(
    r: Result<T, E>,
) -> Result<Value, RpcError> {
    let mut v = Some(r.map_err(Into::into)?);
    if let Some(raw) =
        (&mut v as &mut dyn std::any::Any).downcast_mut::<Option<crate::rpc::RawJson>>()
    {
        return Ok(raw.take().expect("just set").into_value());
    }
    serde_json::to_value(v.expect("not taken"))
        .map_err(|e| RpcError::server(format!("cannot encode the result: {e}")))
}

/// Declares one method of a namespace: `method!("personal_sign", [p(..), ..], "summary",
/// "what it returns", Self::sign)`, where the handler is `fn(&Self, &Call, &Params) ->
/// Result<T, E>` with a serializable `T` and an error that maps to a JSON-RPC error.
#[macro_export]
macro_rules! method {
    ($name:literal, [$($param:expr),* $(,)?], $summary:literal, $returns:literal, $handler:path $(,)?) => {
        $crate::api::method::Method {
            spec: $crate::api::method::MethodSpec {
                name: $name,
                params: &[$($param),*],
                summary: $summary,
                returns: $returns,
            },
            handler: |a, c, p| $crate::api::method::reply($handler(a, c, p)),
        }
    };
}
