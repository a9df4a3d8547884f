//! The wire forms of the `debug_trace*` methods (reference contracts 6): the trace config, the
//! call arguments and the block parameters decoded as the reference decodes them, with its
//! texts (clients and its test suite match on them), and both tracers' results as JSON in the
//! reference's key order. That order is not alphabetical, so results are written out as text
//! ([`RawJson`]): a `Value` would sort the keys.

use std::collections::BTreeMap;

use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use serde_json::Value;

use super::error::{Error, Result};
use super::goparams::{field_error, HashParam};
use crate::chain::trace::{BlockTraces, StandardTrace, Trace, TraceOptions, DEFAULT_TIMEOUT};
use crate::exec::trace::{op_name, CallFrame, FrameEnd, LogConfig, Mode, StructLog};
use crate::rpc::{json_type, FromParam, RawJson, RpcError};

/// The reference's predefined tracers: the ones a safe `debug_trace*` method may name.
const PREDEFINED: &[&str] = &[
    "4byteTracer",
    "bigramTracer",
    "callTracer",
    "evmdisTracer",
    "noopTracer",
    "opcountTracer",
    "prestateTracer",
    "revertTracer",
    "trigramTracer",
    "unigramTracer",
    "fastCallTracer",
];

fn server(text: impl Into<String>) -> Error {
    Error::Rpc(RpcError::server(text))
}

/// The options of a trace: the optional `config` parameter (`TraceConfig`: keys matched
/// without regard to case, unknown keys ignored, as Go's decoder does). Type errors are the
/// decoder's (-32602); an unknown tracer or a bad duration is the method's error.
pub fn trace_options(v: Option<&Value>, i: usize) -> Result<TraceOptions> {
    let invalid = |m: String| {
        Error::Rpc(RpcError::invalid_params(format!(
            "invalid argument {i}: {m}"
        )))
    };
    let mut log = LogConfig::default();
    let mut tracer = None;
    let mut timeout = None;
    let mut logger_timeout = None;
    let map = match v {
        None | Some(Value::Null) => serde_json::Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(other) => {
            return Err(invalid(format!(
                "json: cannot unmarshal {} into Go value of type tracers.TraceConfig",
                json_type(other)
            )))
        }
    };
    for (key, value) in &map {
        if value.is_null() {
            continue;
        }
        let field =
            |name: &str, ty: &str| invalid(field_error("TraceConfig", name, json_type(value), ty));
        let flag = |name: &str| value.as_bool().ok_or_else(|| field(name, "bool"));
        let text = |name: &str| {
            value
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| field(name, "string"))
        };
        match key.to_ascii_lowercase().as_str() {
            "disablememory" => log.disable_memory = flag("DisableMemory")?,
            "disablestack" => log.disable_stack = flag("DisableStack")?,
            "disablestorage" => log.disable_storage = flag("DisableStorage")?,
            "debug" => {
                flag("Debug")?;
            }
            "limit" => {
                log.limit = match value {
                    Value::Number(n) => n.as_i64().ok_or_else(|| {
                        invalid(field_error(
                            "TraceConfig",
                            "Limit",
                            &format!("number {n}"),
                            "int",
                        ))
                    })?,
                    _ => return Err(field("Limit", "int")),
                }
            }
            "reexec" => match value {
                Value::Number(n) if n.as_u64().is_some() => {}
                Value::Number(n) => {
                    return Err(invalid(field_error(
                        "TraceConfig",
                        "Reexec",
                        &format!("number {n}"),
                        "uint64",
                    )))
                }
                _ => return Err(field("Reexec", "uint64")),
            },
            "tracer" => tracer = Some(text("Tracer")?),
            "timeout" => timeout = Some(text("Timeout")?),
            "loggertimeout" => logger_timeout = Some(text("LoggerTimeout")?),
            _ => {}
        }
    }
    let timeout = match timeout {
        Some(t) => crate::duration::parse_go(&t).map_err(server)?,
        None => DEFAULT_TIMEOUT,
    };
    if let Some(t) = logger_timeout {
        crate::duration::parse_go(&t).map_err(server)?;
    }
    let mode = match tracer.as_deref() {
        None => Mode::Steps(log),
        Some("callTracer") => Mode::Calls,
        Some(name) if PREDEFINED.contains(&name) => {
            return Err(server(format!(
                "tracer {name} is not available on this node: use callTracer, or no tracer for the struct logger"
            )))
        }
        Some(_) => return Err(server("Only predefined tracers are supported")),
    };
    Ok(TraceOptions { mode, timeout })
}

/// The options of a standard-JSON trace (`debug_standardTraceBlockToFile`'s optional
/// `config`, the reference's `StdTraceConfig`: the struct logger's `disableMemory` and
/// `disableStack` honoured, `disableStorage`, `debug`, `limit` and `reexec` read and ignored
/// as its JSON logger ignores them, and `txHash`, the one transaction to trace). Keys match
/// without regard to case; type errors are the decoder's (-32602).
pub fn std_trace_options(v: Option<&Value>, i: usize) -> Result<(LogConfig, Option<[u8; 32]>)> {
    let invalid = |m: String| {
        Error::Rpc(RpcError::invalid_params(format!(
            "invalid argument {i}: {m}"
        )))
    };
    let map = match v {
        None | Some(Value::Null) => return Ok((LogConfig::default(), None)),
        Some(Value::Object(m)) => m,
        Some(other) => {
            return Err(invalid(format!(
                "json: cannot unmarshal {} into Go value of type tracers.StdTraceConfig",
                json_type(other)
            )))
        }
    };
    let mut log = LogConfig::default();
    let mut tx = None;
    for (key, value) in map {
        if value.is_null() {
            continue;
        }
        let field = |name: &str, ty: &str| {
            invalid(field_error("StdTraceConfig", name, json_type(value), ty))
        };
        let flag = |name: &str| value.as_bool().ok_or_else(|| field(name, "bool"));
        match key.to_ascii_lowercase().as_str() {
            "disablememory" => log.disable_memory = flag("DisableMemory")?,
            "disablestack" => log.disable_stack = flag("DisableStack")?,
            "disablestorage" => {
                flag("DisableStorage")?;
            }
            "debug" => {
                flag("Debug")?;
            }
            "limit" => match value {
                Value::Number(n) if n.as_i64().is_some() => {}
                Value::Number(n) => {
                    return Err(invalid(field_error(
                        "StdTraceConfig",
                        "Limit",
                        &format!("number {n}"),
                        "int",
                    )))
                }
                _ => return Err(field("Limit", "int")),
            },
            "reexec" => match value {
                Value::Number(n) if n.as_u64().is_some() => {}
                Value::Number(n) => {
                    return Err(invalid(field_error(
                        "StdTraceConfig",
                        "Reexec",
                        &format!("number {n}"),
                        "uint64",
                    )))
                }
                _ => return Err(field("Reexec", "uint64")),
            },
            "txhash" => {
                // The hash decoder's texts, naming the struct field as Go's decoder does.
                let HashParam(h) = HashParam::from_param(value).map_err(|m| {
                    invalid(m.replace(
                        "into Go value of type common.Hash",
                        "into Go struct field StdTraceConfig.TxHash of type common.Hash",
                    ))
                })?;
                // The zero hash names no transaction: the whole block is traced.
                tx = (h != [0; 32]).then_some(h);
            }
            _ => {}
        }
    }
    Ok((log, tx))
}

/// One transaction's standard-JSON trace as the reference's JSON logger writes it: a line per
/// step (a step that failed after it was logged twice, the second time with its error), then,
/// when the EVM ran, the end line `{output, gasUsed, error}`. As Go's encoder, `<`, `>` and
/// `&` in strings are escaped.
pub fn write_standard_trace(
    t: &StandardTrace,
    out: &mut impl std::io::Write,
) -> std::io::Result<()> {
    let mut line = |v: &StdLine<'_>| -> std::io::Result<()> {
        let text = serde_json::to_string(v).expect("a trace line serializes");
        let text = text
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026");
        out.write_all(text.as_bytes())?;
        out.write_all(b"\n")
    };
    for l in &t.steps {
        line(&StdLine::Step {
            log: l,
            stack: l.stack.as_deref(),
            memory: l.memory.as_deref(),
            error: l.error.as_deref().unwrap_or(""),
        })?;
        if let Some(f) = &l.fault {
            line(&StdLine::Step {
                log: l,
                stack: f.stack.as_deref(),
                memory: f.memory.as_deref(),
                error: &f.error,
            })?;
        }
    }
    if let Some(end) = &t.end {
        line(&StdLine::End(end))?;
    }
    Ok(())
}

/// A line of the JSON logger.
enum StdLine<'a> {
    /// A step (the reference's `StructLog`, in its field order) with the stack, memory and
    /// error to show.
    Step {
        log: &'a StructLog,
        stack: Option<&'a [revm::primitives::U256]>,
        memory: Option<&'a [u8]>,
        error: &'a str,
    },
    End(&'a FrameEnd),
}

impl Serialize for StdLine<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        match self {
            StdLine::Step {
                log,
                stack,
                memory,
                error,
            } => {
                m.serialize_entry("pc", &log.pc)?;
                m.serialize_entry("op", &log.op)?;
                m.serialize_entry("gas", &format!("0x{:x}", log.gas))?;
                m.serialize_entry("gasCost", &format!("0x{:x}", log.gas_cost))?;
                m.serialize_entry(
                    "memory",
                    &format!("0x{}", hex::encode(memory.unwrap_or(&[]))),
                )?;
                m.serialize_entry("memSize", &log.mem_size)?;
                let words: Option<Vec<String>> =
                    stack.map(|st| st.iter().map(|w| format!("{w:#x}")).collect());
                m.serialize_entry("stack", &words)?;
                m.serialize_entry("depth", &log.depth)?;
                m.serialize_entry("refund", &log.refund)?;
                m.serialize_entry("opName", &op_name(log.op))?;
                m.serialize_entry("error", error)?;
            }
            StdLine::End(end) => {
                m.serialize_entry("output", &hex::encode(&end.output))?;
                m.serialize_entry("gasUsed", &format!("0x{:x}", end.gas_used))?;
                if let Some(e) = &end.error {
                    m.serialize_entry("error", e)?;
                }
            }
        }
        m.end()
    }
}

/// A trace as the reference's JSON.
pub fn trace_json(t: &Trace) -> RawJson {
    RawJson(serde_json::to_string(&TraceJson(t)).expect("traces serialize"))
}

/// A block's traces as the reference's JSON: `[{txHash, result}]`, or `{txHash, error}` for
/// a transaction whose trace failed.
pub fn block_json(traces: &BlockTraces) -> RawJson {
    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Entry<'a> {
        tx_hash: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<TraceJson<'a>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        error: Option<String>,
    }
    let entries: Vec<Entry<'_>> = traces
        .iter()
        .map(|(hash, t)| Entry {
            tx_hash: format!("0x{}", hex::encode(hash)),
            result: t.as_ref().ok().map(TraceJson),
            error: t.as_ref().err().map(ToString::to_string),
        })
        .collect();
    RawJson(serde_json::to_string(&entries).expect("traces serialize"))
}

struct TraceJson<'a>(&'a Trace);

impl Serialize for TraceJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            Trace::Steps {
                gas,
                failed,
                return_value,
                logs,
            } => {
                let mut m = s.serialize_map(Some(4))?;
                m.serialize_entry("gas", gas)?;
                m.serialize_entry("failed", failed)?;
                m.serialize_entry("returnValue", &hex::encode(return_value))?;
                m.serialize_entry("structLogs", &Logs(logs))?;
                m.end()
            }
            Trace::Calls(frame) => FrameJson(frame).serialize(s),
        }
    }
}

struct Logs<'a>(&'a [StructLog]);

impl Serialize for Logs<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for l in self.0 {
            seq.serialize_element(&LogJson(l))?;
        }
        seq.end()
    }
}

/// One struct log (the reference's `StructLogRes`, in its field order).
struct LogJson<'a>(&'a StructLog);

impl Serialize for LogJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let l = self.0;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("pc", &l.pc)?;
        m.serialize_entry("op", &op_name(l.op))?;
        m.serialize_entry("gas", &l.gas)?;
        m.serialize_entry("gasCost", &l.gas_cost)?;
        m.serialize_entry("depth", &l.depth)?;
        if l.error.is_some() {
            // A Go error value: its fields are private, so it shows as an empty object.
            m.serialize_entry("error", &BTreeMap::<String, String>::new())?;
        }
        if let Some(stack) = &l.stack {
            let words: Vec<String> = stack
                .iter()
                .map(|w| hex::encode(w.to_be_bytes::<32>()))
                .collect();
            m.serialize_entry("stack", &words)?;
        }
        if let Some(memory) = &l.memory {
            let words: Vec<String> = memory.chunks_exact(32).map(hex::encode).collect();
            m.serialize_entry("memory", &words)?;
        }
        if let Some(storage) = &l.storage {
            let slots: BTreeMap<String, String> = storage
                .iter()
                .map(|(k, v)| (hex::encode(k), hex::encode(v)))
                .collect();
            m.serialize_entry("storage", &slots)?;
        }
        m.serialize_entry("computation", &l.computation)?;
        m.serialize_entry("computationCost", &l.computation_cost)?;
        m.end()
    }
}

/// A minimal 0x quantity of a 256-bit big-endian value.
fn quantity(v: &[u8; 32]) -> String {
    crate::chain::state::quantity(v)
}

/// One call frame (the reference's `callTracer`: keys in its order, absent ones left out).
struct FrameJson<'a>(&'a CallFrame);

impl Serialize for FrameJson<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let f = self.0;
        let hex0x = |b: &[u8]| format!("0x{}", hex::encode(b));
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("type", f.kind.name())?;
        m.serialize_entry("from", &f.from)?;
        if let Some(to) = &f.to {
            m.serialize_entry("to", to)?;
        }
        if let Some(v) = &f.value {
            m.serialize_entry("value", &quantity(v))?;
        }
        m.serialize_entry("gas", &format!("0x{:x}", f.gas))?;
        m.serialize_entry("gasUsed", &format!("0x{:x}", f.gas_used))?;
        m.serialize_entry("input", &hex0x(&f.input))?;
        if let Some(out) = &f.output {
            m.serialize_entry("output", &hex0x(out))?;
        }
        if let Some(e) = &f.error {
            m.serialize_entry("error", e)?;
        }
        if !f.calls.is_empty() {
            let calls: Vec<FrameJson<'_>> = f.calls.iter().map(FrameJson).collect();
            m.serialize_entry("calls", &calls)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Address;
    use serde_json::json;

    #[test]
    fn trace_config_as_the_reference_decodes_it() {
        let opts = trace_options(None, 1).unwrap();
        assert_eq!(opts.mode, Mode::Steps(LogConfig::default()));
        assert_eq!(opts.timeout, DEFAULT_TIMEOUT);
        let opts = trace_options(
            Some(
                &json!({"DISABLEstorage": true, "disableMemory": true, "limit": 7,
                         "timeout": "2s", "reexec": 5, "unknown": 1}),
            ),
            1,
        )
        .unwrap();
        assert_eq!(
            opts.mode,
            Mode::Steps(LogConfig {
                disable_memory: true,
                disable_stack: false,
                disable_storage: true,
                limit: 7
            })
        );
        assert_eq!(opts.timeout, std::time::Duration::from_secs(2));
        assert_eq!(
            trace_options(Some(&json!({"tracer": "callTracer"})), 1)
                .unwrap()
                .mode,
            Mode::Calls
        );
        let e = |v: Value| match trace_options(Some(&v), 1).unwrap_err() {
            Error::Rpc(r) => (r.code, r.message),
            other => panic!("{other}"),
        };
        assert_eq!(
            e(json!({"limit": "x"})),
            (
                -32602,
                "invalid argument 1: json: cannot unmarshal string into Go struct field TraceConfig.Limit of type int".into()
            )
        );
        assert_eq!(
            e(json!({"disableStack": 1})).1,
            "invalid argument 1: json: cannot unmarshal number into Go struct field TraceConfig.DisableStack of type bool"
        );
        assert_eq!(
            e(json!({"reexec": -1})).1,
            "invalid argument 1: json: cannot unmarshal number -1 into Go struct field TraceConfig.Reexec of type uint64"
        );
        assert_eq!(
            e(json!("x")).1,
            "invalid argument 1: json: cannot unmarshal string into Go value of type tracers.TraceConfig"
        );
        assert_eq!(
            e(json!({"tracer": "function() {}"})),
            (-32000, "Only predefined tracers are supported".into())
        );
        assert_eq!(e(json!({"tracer": "prestateTracer"})).0, -32000);
        assert_eq!(
            e(json!({"timeout": "5"})),
            (-32000, r#"time: missing unit in duration "5""#.into())
        );
    }

    fn frame(kind: crate::exec::trace::CallKind) -> CallFrame {
        CallFrame {
            kind,
            from: Address([1; 20]),
            to: Some(Address([2; 20])),
            value: Some([0; 32]),
            gas: 0x10,
            gas_used: 0x8,
            input: vec![0xab],
            output: Some(vec![]),
            error: None,
            calls: Vec::new(),
        }
    }

    /// The keys come in the reference's order, not a `Value`'s.
    #[test]
    fn results_keep_the_reference_key_order() {
        use crate::exec::trace::CallKind;
        let mut top = frame(CallKind::Call);
        let mut inner = frame(CallKind::StaticCall);
        inner.value = None;
        inner.output = None;
        inner.error = Some("evm: execution reverted".into());
        top.calls.push(inner);
        let text = trace_json(&Trace::Calls(top)).0;
        let from = format!("0x{}", "01".repeat(20));
        let to = format!("0x{}", "02".repeat(20));
        assert_eq!(
            text,
            format!(
                r#"{{"type":"CALL","from":"{from}","to":"{to}","value":"0x0","gas":"0x10","gasUsed":"0x8","input":"0xab","output":"0x","calls":[{{"type":"STATICCALL","from":"{from}","to":"{to}","gas":"0x10","gasUsed":"0x8","input":"0xab","error":"evm: execution reverted"}}]}}"#
            )
        );
        let mut storage = crate::exec::trace::Storage::new();
        storage.insert([0; 32], [7; 32]);
        let log = StructLog {
            pc: 3,
            op: 0x55,
            gas: 100,
            gas_cost: 20,
            depth: 1,
            error: Some("out of gas".into()),
            fault: None,
            mem_size: 32,
            refund: 0,
            stack: Some(vec![revm::primitives::U256::from(1)]),
            memory: Some(vec![0; 32]),
            storage: Some(std::sync::Arc::new(storage)),
            computation: 150_000_000,
            computation_cost: 2510,
        };
        let text = trace_json(&Trace::Steps {
            gas: 21_000,
            failed: false,
            return_value: vec![0xbe, 0xef],
            logs: vec![log],
        })
        .0;
        let word = |b: &str| b.repeat(32);
        assert_eq!(
            text,
            format!(
                r#"{{"gas":21000,"failed":false,"returnValue":"beef","structLogs":[{{"pc":3,"op":"SSTORE","gas":100,"gasCost":20,"depth":1,"error":{{}},"stack":["{}01"],"memory":["{}"],"storage":{{"{}":"{}"}},"computation":150000000,"computationCost":2510}}]}}"#,
                "0".repeat(62),
                word("00"),
                word("00"),
                word("07")
            )
        );
    }

    /// The JSON logger's lines: numbers and hex as Go's encoder writes them, `<`, `>` and `&`
    /// escaped, a failed step's stack shown as it was left.
    #[test]
    fn standard_json_lines_as_go_writes_them() {
        use crate::exec::trace::Fault;
        let log = StructLog {
            pc: 7,
            op: 0x01,
            gas: 255,
            gas_cost: 3,
            depth: 2,
            error: Some("stack underflow (0 <=> 2)".into()),
            fault: Some(Box::new(Fault {
                error: "a & b".into(),
                stack: Some(vec![revm::primitives::U256::from(0x1f)]),
                memory: Some(vec![0xab]),
            })),
            mem_size: 64,
            refund: 4800,
            stack: Some(vec![revm::primitives::U256::ZERO]),
            memory: None,
            storage: None,
            computation: 0,
            computation_cost: 0,
        };
        let t = StandardTrace {
            index: 0,
            tx_hash: [0; 32],
            steps: vec![log],
            end: Some(FrameEnd {
                output: vec![0xbe, 0xef],
                gas_used: 26,
                error: None,
            }),
        };
        let mut out = Vec::new();
        write_standard_trace(&t, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"pc":7,"op":1,"gas":"0xff","gasCost":"0x3","memory":"0x","memSize":64,"stack":["0x0"],"depth":2,"refund":4800,"opName":"ADD","error":"stack underflow (0 \u003c=\u003e 2)"}"#,
                "\n",
                r#"{"pc":7,"op":1,"gas":"0xff","gasCost":"0x3","memory":"0xab","memSize":64,"stack":["0x1f"],"depth":2,"refund":4800,"opName":"ADD","error":"a \u0026 b"}"#,
                "\n",
                r#"{"output":"beef","gasUsed":"0x1a"}"#,
                "\n"
            )
        );
    }

    #[test]
    fn standard_trace_config_as_the_reference_decodes_it() {
        let (log, tx) = std_trace_options(
            Some(
                &json!({"DISABLESTACK": true, "disableMemory": true, "limit": 3, "reexec": 1,
                          "txHash": format!("0x{}", "ab".repeat(32)), "other": 1}),
            ),
            1,
        )
        .unwrap();
        assert!(log.disable_stack && log.disable_memory && log.limit == 0);
        assert_eq!(tx, Some([0xab; 32]));
        let (_, tx) = std_trace_options(
            Some(&json!({"txHash": format!("0x{}", "00".repeat(32))})),
            1,
        )
        .unwrap();
        assert_eq!(tx, None, "the zero hash names no transaction");
        let e = |v: Value| RpcError::from(std_trace_options(Some(&v), 1).unwrap_err()).message;
        assert_eq!(
            e(json!("x")),
            "invalid argument 1: json: cannot unmarshal string into Go value of type tracers.StdTraceConfig"
        );
        assert_eq!(
            e(json!({"limit": "x"})),
            "invalid argument 1: json: cannot unmarshal string into Go struct field StdTraceConfig.Limit of type int"
        );
        assert_eq!(
            e(json!({"txHash": 5})),
            "invalid argument 1: json: cannot unmarshal non-string into Go struct field StdTraceConfig.TxHash of type common.Hash"
        );
    }
}
