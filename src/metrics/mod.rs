//! The node's metrics (`--metrics`), served in Prometheus' text format by [`Exporter`]
//! (`--prometheus`) and shown by `debug_metrics`.
//!
//! This module knows no rpc and no chain. Two kinds of numbers:
//!
//! - Counters that layers record as things happen: RPC calls per method and transport (a
//!   counter and a latency histogram), blocks and transactions sealed and imported. A layer
//!   is handed the [`Metrics`] only when the node collects (`--metrics`); without it the hot
//!   path tests an empty `Option` and does nothing else. A call's meter is looked up once
//!   and kept by the caller ([`CallMeter`]): recording is two atomic additions, no lock.
//! - Gauges read when someone looks (a scrape, `debug_metrics`): the node registers
//!   samplers ([`Metrics::add_sampler`]) that fill a [`Sample`] from the chain, the pool and
//!   the peers; the process's memory is read from `/proc` here.

mod exporter;

pub use exporter::Exporter;

use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use prometheus::{Gauge, Histogram, HistogramOpts, IntCounter, IntCounterVec, IntGauge, Opts};

/// The prefix of the node's own metric names.
pub const NAMESPACE: &str = "chaind";

/// Bucket bounds of the RPC latency histogram, in seconds: 50 µs to 10 s.
const RPC_BUCKETS: &[f64] = &[
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0, 10.0,
];

/// The process's memory, bytes (`/proc/self/status`; zeros where it cannot be read).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessMemory {
    /// `VmRSS`.
    pub resident: u64,
    /// `VmHWM`: the most resident memory the process has had.
    pub peak_resident: u64,
    /// `VmSize`.
    pub virtual_size: u64,
}

impl ProcessMemory {
    /// This process's memory now.
    pub fn read() -> ProcessMemory {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map_or(0, |k| k * 1024)
        };
        ProcessMemory {
            resident: kib("VmRSS:"),
            peak_resident: kib("VmHWM:"),
            virtual_size: kib("VmSize:"),
        }
    }
}

/// The trie-node cache's numbers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrieCacheSample {
    pub enabled: bool,
    pub entries: u64,
    pub bytes: u64,
    /// Entries loaded from the saved cache at start.
    pub loaded_from_disk: u64,
    /// A save to disk is running.
    pub saving: bool,
    /// Entries the running (or last) save has written so far.
    pub save_written: u64,
    /// Entries the running (or last) save writes in all.
    pub save_total: u64,
}

/// The state migration's numbers (`admin_stateMigrationStatus`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MigrationSample {
    pub running: bool,
    /// The block whose state is (or was last) copied; 0 before any.
    pub block_number: u64,
    /// Nodes written to the new node file.
    pub committed: u64,
    /// Nodes read.
    pub read: u64,
    /// Nodes found and not yet copied.
    pub pending: u64,
    /// Percent of the key space walked.
    pub progress: f64,
}

/// What a node with a chain reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ChainSample {
    pub head_number: u64,
    /// The head block's timestamp, Unix seconds.
    pub head_time: u64,
    /// Transactions in the pool, ready to seal and waiting for an earlier nonce.
    pub pending: u64,
    pub queued: u64,
    pub trie_cache: TrieCacheSample,
    /// The trie-node file: nodes and bytes.
    pub node_file_nodes: u64,
    pub node_file_bytes: u64,
    pub migration: MigrationSample,
}

/// The gauges at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Sample {
    pub process: ProcessMemory,
    /// `None` on a node without a chain.
    pub chain: Option<ChainSample>,
    /// Connected peers; `None` without a p2p server.
    pub peers: Option<u64>,
    /// Seconds from the head block's timestamp to the moment of the sample (0 when the head
    /// is in the future).
    pub head_age: f64,
}

/// Fills in part of a [`Sample`].
pub type Sampler = Box<dyn Fn(&mut Sample) + Send + Sync>;

/// One method's calls on one transport: a count and a latency histogram.
#[derive(Clone)]
pub struct CallMeter {
    count: IntCounter,
    seconds: Histogram,
}

impl CallMeter {
    /// Counts one call that took `elapsed`.
    pub fn record(&self, elapsed: Duration) {
        self.count.inc();
        self.seconds.observe(elapsed.as_secs_f64());
    }
}

/// One method's calls on one transport, as `debug_metrics` shows them.
#[derive(Debug, Clone, PartialEq)]
pub struct CallCount {
    pub method: String,
    pub transport: String,
    pub count: u64,
    /// Time spent in the calls, seconds.
    pub seconds: f64,
}

/// Blocks and transactions sealed and imported since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BlockCounts {
    pub sealed_blocks: u64,
    pub sealed_transactions: u64,
    pub imported_blocks: u64,
    pub imported_transactions: u64,
}

/// The gauges, set from a [`Sample`] before each scrape.
struct Gauges {
    head_number: IntGauge,
    head_age: Gauge,
    peers: IntGauge,
    pending: IntGauge,
    queued: IntGauge,
    cache_entries: IntGauge,
    cache_bytes: IntGauge,
    cache_loaded: IntGauge,
    cache_saving: IntGauge,
    cache_save_written: IntGauge,
    cache_save_total: IntGauge,
    file_nodes: IntGauge,
    file_bytes: IntGauge,
    migration_running: IntGauge,
    migration_block: IntGauge,
    migration_committed: IntGauge,
    migration_read: IntGauge,
    migration_pending: IntGauge,
    migration_progress: Gauge,
    resident: IntGauge,
    peak_resident: IntGauge,
    virtual_size: IntGauge,
}

/// The node's metrics: the Prometheus registry, its gauges and counters, and the samplers.
pub struct Metrics {
    registry: prometheus::Registry,
    collecting: bool,
    gauges: Gauges,
    rpc_requests: IntCounterVec,
    rpc_seconds: prometheus::HistogramVec,
    /// The meters handed out, for `debug_metrics` (appended to once per method and
    /// transport, never on the path of a call).
    meters: Mutex<Vec<(String, &'static str, CallMeter)>>,
    sealed_blocks: IntCounter,
    sealed_transactions: IntCounter,
    imported_blocks: IntCounter,
    imported_transactions: IntCounter,
    samplers: Mutex<Vec<Sampler>>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics")
            .field("collecting", &self.collecting)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registers families into a registry; a name given twice is a programming error.
struct Builder<'a>(&'a prometheus::Registry);

impl Builder<'_> {
    fn add<C: prometheus::core::Collector + Clone + 'static>(&self, c: C) -> C {
        self.0
            .register(Box::new(c.clone()))
            .expect("metric names are unique");
        c
    }

    fn int_gauge(&self, name: &str, help: &str) -> IntGauge {
        self.add(IntGauge::with_opts(Opts::new(name, help).namespace(NAMESPACE)).expect("gauge"))
    }

    fn gauge(&self, name: &str, help: &str) -> Gauge {
        self.add(Gauge::with_opts(Opts::new(name, help).namespace(NAMESPACE)).expect("gauge"))
    }

    fn counter(&self, name: &str, help: &str) -> IntCounter {
        self.add(
            IntCounter::with_opts(Opts::new(name, help).namespace(NAMESPACE)).expect("counter"),
        )
    }

    /// A gauge with a standard name outside our namespace (`process_*`).
    fn standard_gauge(&self, name: &str, help: &str) -> IntGauge {
        self.add(IntGauge::new(name, help).expect("gauge"))
    }
}

impl Metrics {
    /// The registry with every family. `collecting` says whether the node records counters
    /// (`--metrics`); the gauges are sampled either way.
    pub fn new(collecting: bool) -> Metrics {
        let registry = prometheus::Registry::new();
        let b = Builder(&registry);
        let gauges = Gauges {
            head_number: b.int_gauge("head_block_number", "Number of the head block"),
            head_age: b.gauge(
                "head_age_seconds",
                "Seconds since the head block's timestamp",
            ),
            peers: b.int_gauge("p2p_peers", "Connected peers"),
            pending: b.int_gauge(
                "txpool_pending",
                "Transactions in the pool ready to be sealed",
            ),
            queued: b.int_gauge(
                "txpool_queued",
                "Transactions in the pool waiting for an earlier nonce",
            ),
            cache_entries: b.int_gauge("trie_cache_entries", "Nodes in the trie-node cache"),
            cache_bytes: b.int_gauge("trie_cache_bytes", "Bytes held by the trie-node cache"),
            cache_loaded: b.int_gauge(
                "trie_cache_loaded_entries",
                "Nodes the trie-node cache loaded from disk at start",
            ),
            cache_saving: b.int_gauge(
                "trie_cache_save_running",
                "1 while the trie-node cache is being saved to disk",
            ),
            cache_save_written: b.int_gauge(
                "trie_cache_save_written_entries",
                "Nodes the running (or last) trie-node cache save has written",
            ),
            cache_save_total: b.int_gauge(
                "trie_cache_save_total_entries",
                "Nodes the running (or last) trie-node cache save writes in all",
            ),
            file_nodes: b.int_gauge("trie_node_file_nodes", "Nodes in the trie-node file"),
            file_bytes: b.int_gauge("trie_node_file_bytes", "Size of the trie-node file"),
            migration_running: b
                .int_gauge("state_migration_running", "1 while a state migration runs"),
            migration_block: b.int_gauge(
                "state_migration_block_number",
                "Block whose state the running (or last) state migration copies",
            ),
            migration_committed: b.int_gauge(
                "state_migration_committed_nodes",
                "Nodes the running (or last) state migration has written",
            ),
            migration_read: b.int_gauge(
                "state_migration_read_nodes",
                "Nodes the running (or last) state migration has read",
            ),
            migration_pending: b.int_gauge(
                "state_migration_pending_nodes",
                "Nodes the running state migration has found and not yet copied",
            ),
            migration_progress: b.gauge(
                "state_migration_progress_percent",
                "Percent of the key space the running (or last) state migration has walked",
            ),
            resident: b.standard_gauge("process_resident_memory_bytes", "Resident memory size"),
            peak_resident: b.int_gauge(
                "resident_memory_peak_bytes",
                "Most resident memory the process has had (VmHWM)",
            ),
            virtual_size: b.standard_gauge("process_virtual_memory_bytes", "Virtual memory size"),
        };
        let rpc_requests = b.add(
            IntCounterVec::new(
                Opts::new("rpc_requests_total", "JSON-RPC calls answered").namespace(NAMESPACE),
                &["method", "transport"],
            )
            .expect("counter"),
        );
        let rpc_seconds = b.add(
            prometheus::HistogramVec::new(
                HistogramOpts::new(
                    "rpc_request_duration_seconds",
                    "Time to answer a JSON-RPC call",
                )
                .namespace(NAMESPACE)
                .buckets(RPC_BUCKETS.to_vec()),
                &["method", "transport"],
            )
            .expect("histogram"),
        );
        let build = b.add(
            IntGauge::with_opts(
                Opts::new("build_info", "A constant 1 labelled by the node's version")
                    .namespace(NAMESPACE)
                    .const_label("version", env!("CARGO_PKG_VERSION")),
            )
            .expect("gauge"),
        );
        build.set(1);
        Metrics {
            collecting,
            gauges,
            rpc_requests,
            rpc_seconds,
            meters: Mutex::new(Vec::new()),
            sealed_blocks: b.counter("sealed_blocks_total", "Blocks this node sealed"),
            sealed_transactions: b.counter(
                "sealed_transactions_total",
                "Transactions in the blocks this node sealed",
            ),
            imported_blocks: b.counter(
                "imported_blocks_total",
                "Blocks imported from peers or files",
            ),
            imported_transactions: b.counter(
                "imported_transactions_total",
                "Transactions in the blocks imported from peers or files",
            ),
            samplers: Mutex::new(Vec::new()),
            registry,
        }
    }

    /// Whether the node records counters (`--metrics`).
    pub fn collecting(&self) -> bool {
        self.collecting
    }

    /// Adds a sampler, run at every [`Metrics::sample`].
    pub fn add_sampler(&self, f: Sampler) {
        lock(&self.samplers).push(f);
    }

    /// The gauges now: the samplers' numbers and the process's memory, also set into the
    /// Prometheus gauges.
    pub fn sample(&self) -> Sample {
        let mut s = Sample {
            process: ProcessMemory::read(),
            ..Sample::default()
        };
        for f in lock(&self.samplers).iter() {
            f(&mut s);
        }
        let g = &self.gauges;
        if let Some(c) = &s.chain {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_secs_f64();
            s.head_age = (now - c.head_time as f64).max(0.0);
            g.head_number.set(to_i64(c.head_number));
            g.head_age.set(s.head_age);
            g.pending.set(to_i64(c.pending));
            g.queued.set(to_i64(c.queued));
            let t = &c.trie_cache;
            g.cache_entries.set(to_i64(t.entries));
            g.cache_bytes.set(to_i64(t.bytes));
            g.cache_loaded.set(to_i64(t.loaded_from_disk));
            g.cache_saving.set(i64::from(t.saving));
            g.cache_save_written.set(to_i64(t.save_written));
            g.cache_save_total.set(to_i64(t.save_total));
            g.file_nodes.set(to_i64(c.node_file_nodes));
            g.file_bytes.set(to_i64(c.node_file_bytes));
            let m = &c.migration;
            g.migration_running.set(i64::from(m.running));
            g.migration_block.set(to_i64(m.block_number));
            g.migration_committed.set(to_i64(m.committed));
            g.migration_read.set(to_i64(m.read));
            g.migration_pending.set(to_i64(m.pending));
            g.migration_progress.set(m.progress);
        }
        g.peers.set(to_i64(s.peers.unwrap_or(0)));
        g.resident.set(to_i64(s.process.resident));
        g.peak_resident.set(to_i64(s.process.peak_resident));
        g.virtual_size.set(to_i64(s.process.virtual_size));
        s
    }

    /// The meter of `method`'s calls on `transport` (`http`, `ws`, `ipc`), created on first
    /// use. Takes a lock: look it up once and keep it.
    pub fn call_meter(&self, method: &str, transport: &'static str) -> CallMeter {
        let mut meters = lock(&self.meters);
        if let Some((_, _, m)) = meters
            .iter()
            .find(|(name, t, _)| name == method && *t == transport)
        {
            return m.clone();
        }
        let meter = CallMeter {
            count: self.rpc_requests.with_label_values(&[method, transport]),
            seconds: self.rpc_seconds.with_label_values(&[method, transport]),
        };
        meters.push((method.to_string(), transport, meter.clone()));
        meter
    }

    /// Every method and transport with a meter, and its calls so far, sorted.
    pub fn calls(&self) -> Vec<CallCount> {
        let mut v: Vec<CallCount> = lock(&self.meters)
            .iter()
            .map(|(method, transport, m)| CallCount {
                method: method.clone(),
                transport: transport.to_string(),
                count: m.count.get(),
                seconds: m.seconds.get_sample_sum(),
            })
            .collect();
        v.sort_by(|a, b| (&a.method, &a.transport).cmp(&(&b.method, &b.transport)));
        v
    }

    /// Counts a block this node sealed, holding `transactions`.
    pub fn sealed(&self, transactions: u64) {
        self.sealed_blocks.inc();
        self.sealed_transactions.inc_by(transactions);
    }

    /// Counts `blocks` imported blocks holding `transactions` in all.
    pub fn imported(&self, blocks: u64, transactions: u64) {
        self.imported_blocks.inc_by(blocks);
        self.imported_transactions.inc_by(transactions);
    }

    /// Blocks and transactions sealed and imported so far.
    pub fn block_counts(&self) -> BlockCounts {
        BlockCounts {
            sealed_blocks: self.sealed_blocks.get(),
            sealed_transactions: self.sealed_transactions.get(),
            imported_blocks: self.imported_blocks.get(),
            imported_transactions: self.imported_transactions.get(),
        }
    }

    /// A fresh sample and every family in Prometheus' text exposition format (0.0.4).
    pub fn render(&self) -> String {
        self.sample();
        prometheus::TextEncoder::new()
            .encode_to_string(&self.registry.gather())
            .unwrap_or_else(|e| format!("# encoding failed: {e}\n"))
    }
}

/// A count as a gauge value (counts beyond `i64::MAX` do not happen; they saturate).
fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
        text.lines().find(|l| l.starts_with(prefix))
    }

    #[test]
    fn samplers_set_the_gauges_and_meters_count_per_method_and_transport() {
        let m = Metrics::new(true);
        m.add_sampler(Box::new(|s| {
            s.chain = Some(ChainSample {
                head_number: 42,
                head_time: 1,
                pending: 3,
                queued: 2,
                ..ChainSample::default()
            });
        }));
        m.add_sampler(Box::new(|s| s.peers = Some(5)));
        let s = m.sample();
        assert_eq!(s.chain.unwrap().head_number, 42);
        assert!(s.head_age > 1.6e9, "{}", s.head_age);
        let a = m.call_meter("chain_blockNumber", "http");
        a.record(Duration::from_millis(2));
        a.record(Duration::from_millis(3));
        m.call_meter("chain_blockNumber", "ws")
            .record(Duration::from_micros(10));
        // The same meter again: it counts into the same series.
        m.call_meter("chain_blockNumber", "http")
            .record(Duration::from_millis(1));
        m.sealed(7);
        m.imported(3, 11);
        let text = m.render();
        assert_eq!(
            line(&text, "chaind_head_block_number "),
            Some("chaind_head_block_number 42")
        );
        assert_eq!(line(&text, "chaind_p2p_peers "), Some("chaind_p2p_peers 5"));
        assert_eq!(
            line(&text, "chaind_txpool_pending "),
            Some("chaind_txpool_pending 3")
        );
        assert_eq!(
            line(
                &text,
                "chaind_rpc_requests_total{method=\"chain_blockNumber\",transport=\"http\"}"
            ),
            Some("chaind_rpc_requests_total{method=\"chain_blockNumber\",transport=\"http\"} 3")
        );
        assert_eq!(
            line(&text, "chaind_rpc_request_duration_seconds_count{method=\"chain_blockNumber\",transport=\"ws\"}"),
            Some("chaind_rpc_request_duration_seconds_count{method=\"chain_blockNumber\",transport=\"ws\"} 1")
        );
        assert_eq!(
            line(&text, "chaind_sealed_transactions_total "),
            Some("chaind_sealed_transactions_total 7")
        );
        assert_eq!(
            line(&text, "chaind_imported_blocks_total "),
            Some("chaind_imported_blocks_total 3")
        );
        assert!(text.contains("# TYPE chaind_rpc_request_duration_seconds histogram"));
        assert!(line(&text, "process_resident_memory_bytes ").is_some());
        let calls = m.calls();
        assert_eq!(
            calls
                .iter()
                .map(|c| (c.method.as_str(), c.transport.as_str(), c.count))
                .collect::<Vec<_>>(),
            vec![
                ("chain_blockNumber", "http", 3),
                ("chain_blockNumber", "ws", 1)
            ]
        );
        assert!(
            (calls[0].seconds - 0.006).abs() < 1e-9,
            "{}",
            calls[0].seconds
        );
        assert_eq!(
            m.block_counts(),
            BlockCounts {
                sealed_blocks: 1,
                sealed_transactions: 7,
                imported_blocks: 3,
                imported_transactions: 11
            }
        );
    }

    #[test]
    fn process_memory_is_read_from_proc() {
        let p = ProcessMemory::read();
        assert!(p.resident > 0 && p.peak_resident >= p.resident && p.virtual_size >= p.resident);
    }
}
