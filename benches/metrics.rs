//! What counting costs on the path of a call, in process: one JSON-RPC call of a trivial
//! method through `Dispatcher::handle_bytes` without metrics and with them (a count and a
//! latency observation), a bare `CallMeter::record`, the same from 2 threads at once on one
//! meter (the contended case), and rendering a scrape of 200 methods on 3 transports.
//!
//! Run: `cargo bench --bench metrics`.

use std::sync::Arc;
use std::time::Duration;

use chain_node::metrics::Metrics;
use chain_node::rpc::server::DEFAULT_LIMITS;
use chain_node::rpc::{Call, Dispatcher, Params, Registry, Transport};
use criterion::{criterion_group, criterion_main, Criterion};

fn dispatcher(metrics: Option<Arc<Metrics>>) -> Dispatcher {
    let mut r = Registry::default();
    r.register(
        "chain_blockNumber",
        0,
        Arc::new(|_c: &Call, _p: &Params| Ok(serde_json::json!("0x3"))),
    );
    if let Some(m) = metrics {
        r.record_to(m);
    }
    Dispatcher::new(Arc::new(r), None, Transport::Http, false, DEFAULT_LIMITS)
}

fn bench(c: &mut Criterion) {
    let body = br#"{"jsonrpc":"2.0","id":1,"method":"chain_blockNumber","params":[]}"#;
    let off = dispatcher(None);
    c.bench_function("call, metrics off", |b| {
        b.iter(|| off.handle_bytes(std::hint::black_box(body)))
    });
    let on = dispatcher(Some(Arc::new(Metrics::new(true))));
    c.bench_function("call, metrics on", |b| {
        b.iter(|| on.handle_bytes(std::hint::black_box(body)))
    });

    let m = Metrics::new(true);
    let meter = m.call_meter("chain_blockNumber", "http");
    c.bench_function("CallMeter::record", |b| {
        b.iter(|| meter.record(std::hint::black_box(Duration::from_micros(20))))
    });
    c.bench_function("CallMeter::record, 2 threads on one meter", |b| {
        b.iter_custom(|iters| {
            let start = std::time::Instant::now();
            std::thread::scope(|s| {
                for _ in 0..2 {
                    let meter = meter.clone();
                    s.spawn(move || {
                        for _ in 0..iters {
                            meter.record(std::hint::black_box(Duration::from_micros(20)));
                        }
                    });
                }
            });
            // Per record, both threads' records counted.
            start.elapsed() / 2
        })
    });

    let m = Metrics::new(true);
    for i in 0..200 {
        for t in ["http", "ws", "ipc"] {
            m.call_meter(&format!("chain_method{i}"), t)
                .record(Duration::from_micros(i));
        }
    }
    c.bench_function("render, 200 methods x 3 transports", |b| {
        b.iter(|| m.render().len())
    });
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
