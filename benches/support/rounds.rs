//! The measured parts shared by the benches that put our node beside anvil: rounds of
//! pre-signed transactions sent over keep-alive connections and timed until the client has
//! seen every receipt (the receipt watcher), and calls at a fixed number of connections.
//!
//! The bench that includes this file declares at its root `mod conn`, `mod nodes` and
//! `mod stats` (benches/support).

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::conn::{request, Conn};
use crate::nodes::{confirm, sealed_prefix, Endpoint};
use crate::stats::{per_tx, proc_cpu, thread_cpu};

/// One signed transfer: its request to our node, its request to anvil (both made with
/// [`request`]), its hash (`0x` hex).
pub type Signed = (Vec<u8>, Vec<u8>, String);

/// The transfers of one round, signed, as HTTP requests per connection, with their hashes.
pub struct Round {
    per_conn: Vec<Vec<Signed>>,
    total: usize,
    /// A diagnosis: the clock stops when each connection's last transfer is sealed, and
    /// only those receipts are asked for (what the receipts cost, by difference).
    pub last_only: bool,
}

/// What one round on one node gave.
pub struct RoundFigures {
    pub ingest_secs: f64,
    pub receipts_secs: f64,
    pub first_block: u64,
    pub last_block: u64,
    pub polls: usize,
    pub node_cpu: f64,
    pub client_cpu: f64,
    /// CPU µs per transfer of the node's busiest threads.
    pub threads: String,
    pub total: usize,
}

impl RoundFigures {
    /// Transfers per second, end to end.
    pub fn tps(&self) -> f64 {
        self.total as f64 / self.receipts_secs
    }
}

impl Round {
    /// Round `r`: `total` transfers, holder `h` sending (in nonce order, from `nonces[h]`,
    /// which is moved on) to holder `h + 1 + r` (mod the `holders`), the holders taken in
    /// turn; holder `h`'s transfers go over connection `h % conns`. `sign(h, nonce, to)`
    /// gives one transfer's requests and hash; it runs on every core.
    pub fn sign(
        holders: usize,
        nonces: &mut [u64],
        r: usize,
        total: usize,
        conns: usize,
        sign: impl Fn(usize, u64, usize) -> Signed + Sync,
    ) -> Round {
        let n = holders;
        // (holder, nonce, recipient) in sending order.
        let plan: Vec<(usize, u64, usize)> = (0..total)
            .map(|i| {
                let h = i % n;
                let nonce = nonces[h] + (i / n) as u64;
                (h, nonce, (h + 1 + r % (n - 1)) % n)
            })
            .collect();
        for (i, nonce) in nonces.iter_mut().enumerate() {
            *nonce += (total / n + usize::from(i < total % n)) as u64;
        }
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let chunk = total.div_ceil(threads).max(1);
        let sign = &sign;
        let signed: Vec<(usize, Signed)> = std::thread::scope(|s| {
            let hs: Vec<_> = plan
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        part.iter()
                            .map(|&(h, nonce, to)| (h, sign(h, nonce, to)))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            hs.into_iter().flat_map(|h| h.join().unwrap()).collect()
        });
        let mut per_conn = vec![Vec::new(); conns];
        for (h, one) in signed {
            per_conn[h % conns].push(one);
        }
        Round {
            per_conn,
            total,
            last_only: false,
        }
    }

    /// Sends the round to `ep` and waits for every receipt.
    pub fn run(&self, ep: &Endpoint) -> RoundFigures {
        let conns = self.per_conn.len();
        let mut probe = Conn::new(&ep.addr);
        let start_head = ep.head(&mut probe);
        // Each connection's sent, unconfirmed hashes, oldest first.
        let sent: Vec<Mutex<VecDeque<String>>> =
            (0..conns).map(|_| Mutex::new(VecDeque::new())).collect();
        let senders_left = AtomicUsize::new(conns);
        let last_sent: Mutex<Option<Instant>> = Mutex::new(None);
        let confirmed = AtomicUsize::new(0);
        let done = AtomicBool::new(false);
        let barrier = Barrier::new(conns + 2);
        let anvil = ep.anvil;
        let last_only = self.last_only;
        let node_cpu = ep.cpu();
        let threads = thread_cpu(ep.pid);
        let client_cpu = proc_cpu(std::process::id());
        let mut ingest_secs = 0.0;
        let mut receipts_secs = 0.0;
        let mut polls = 0;
        let mut last_block = 0;
        std::thread::scope(|s| {
            for (i, reqs) in self.per_conn.iter().enumerate() {
                let (sent, barrier, senders_left, addr, last_sent) =
                    (&sent[i], &barrier, &senders_left, &ep.addr, &last_sent);
                s.spawn(move || {
                    let mut c = Conn::new(addr);
                    barrier.wait();
                    for (ours, anv, hash) in reqs {
                        let reply = c.roundtrip(if anvil { anv } else { ours });
                        if !reply.starts_with(br#"{"jsonrpc":"2.0","id":1,"result""#)
                            && !String::from_utf8_lossy(&reply).contains("\"result\"")
                        {
                            panic!("refused: {}", String::from_utf8_lossy(&reply));
                        }
                        sent.lock().unwrap().push_back(hash.clone());
                    }
                    if senders_left.fetch_sub(1, Ordering::AcqRel) == 1 {
                        *last_sent.lock().unwrap() = Some(Instant::now());
                    }
                });
            }
            // The watcher: when the head moves, the receipts of each connection's oldest
            // unconfirmed transfers.
            let watcher = s.spawn(|| {
                let mut c = Conn::new(&ep.addr);
                barrier.wait();
                let t0 = Instant::now();
                let mut seen_head = start_head;
                let mut polls = 0;
                loop {
                    let head = ep.head(&mut c);
                    if head == seen_head {
                        std::thread::sleep(Duration::from_millis(2));
                        continue;
                    }
                    seen_head = head;
                    for q in &sent {
                        if last_only {
                            // Diagnosis: only each connection's last transfer, once all
                            // are sent (a block holds every transfer sent before it).
                            if senders_left.load(Ordering::Acquire) > 0 {
                                break;
                            }
                            let last = q.lock().unwrap().back().cloned();
                            if let Some(last) = last {
                                polls += 1;
                                if sealed_prefix(ep, &mut c, &[last]) == 1 {
                                    let n = q.lock().unwrap().drain(..).count();
                                    confirmed.fetch_add(n, Ordering::AcqRel);
                                }
                            }
                            continue;
                        }
                        let (found, batches) = confirm(ep, &mut c, q);
                        polls += batches;
                        confirmed.fetch_add(found, Ordering::AcqRel);
                    }
                    if confirmed.load(Ordering::Acquire) == self.total {
                        let secs = t0.elapsed().as_secs_f64();
                        done.store(true, Ordering::Release);
                        return (t0, secs, polls, head);
                    }
                }
            });
            barrier.wait();
            let (t0, r, p, h) = watcher.join().unwrap();
            ingest_secs = last_sent
                .lock()
                .unwrap()
                .unwrap()
                .duration_since(t0)
                .as_secs_f64();
            receipts_secs = r;
            polls = p;
            last_block = h;
        });
        assert!(done.load(Ordering::Acquire));
        RoundFigures {
            ingest_secs,
            receipts_secs,
            first_block: start_head + 1,
            last_block,
            polls,
            node_cpu: ep.cpu() - node_cpu,
            threads: per_tx(&threads, &thread_cpu(ep.pid), self.total),
            client_cpu: proc_cpu(std::process::id()) - client_cpu,
            total: self.total,
        }
    }
}

/// `conns` connections, one call in flight each, cycling through `bodies` for `secs`:
/// calls/s, p50 and p99 latency (s), the node's cores busy.
pub fn call_load(
    ep: &Endpoint,
    bodies: &[&str],
    conns: usize,
    secs: Duration,
) -> (f64, f64, f64, f64) {
    let reqs: Vec<Vec<u8>> = bodies.iter().map(|b| request(b)).collect();
    let barrier = Barrier::new(conns + 1);
    let stop = AtomicBool::new(false);
    let cpu0 = ep.cpu();
    let mut lat: Vec<f64> = Vec::new();
    let t0 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..conns)
            .map(|i| {
                let (reqs, barrier, stop) = (&reqs, &barrier, &stop);
                s.spawn(move || {
                    let mut c = Conn::new(&ep.addr);
                    let mut lat = Vec::with_capacity(1 << 16);
                    // Warm-up: one pass over a few bodies.
                    for r in reqs.iter().take(50) {
                        c.roundtrip(r);
                    }
                    barrier.wait();
                    let mut k = i * 97;
                    while !stop.load(Ordering::Relaxed) {
                        let t = Instant::now();
                        let reply = c.roundtrip(&reqs[k % reqs.len()]);
                        lat.push(t.elapsed().as_secs_f64());
                        assert!(
                            reply.windows(9).any(|w| w == b"\"result\":"),
                            "{}",
                            String::from_utf8_lossy(&reply)
                        );
                        k += 1;
                    }
                    lat
                })
            })
            .collect();
        barrier.wait();
        let t0 = Instant::now();
        std::thread::sleep(secs);
        stop.store(true, Ordering::Relaxed);
        for h in hs {
            lat.extend(h.join().unwrap());
        }
        t0
    });
    let elapsed = t0.elapsed().as_secs_f64();
    let cpu = (ep.cpu() - cpu0) / elapsed;
    lat.sort_by(f64::total_cmp);
    let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)];
    (lat.len() as f64 / elapsed, p(0.5), p(0.99), cpu)
}
