//! Figures about the machine and the runs, shared by the benches that put our node beside
//! anvil: CPU seconds of a process and of its threads (from `/proc`), its peak memory, the
//! load average, and the median and spread of a set of rounds.

// Each bench uses a part of this file.
#![allow(dead_code)]

use std::collections::BTreeMap;

/// CPU seconds (user + system, all threads) process `pid` has used so far.
pub fn proc_cpu(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / hz
}

/// CPU seconds of each thread name of process `pid` (threads that ended are not counted).
pub fn thread_cpu(pid: u32) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return out;
    };
    for e in dir.flatten() {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        let (Some(a), Some(b)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[a + 1..b].to_string();
        let f: Vec<&str> = stat[b + 1..].split_whitespace().collect();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        *out.entry(name).or_insert(0.0) += (ticks(11) + ticks(12)) / hz;
    }
    out
}

/// Microseconds of CPU per transaction by thread name between two [`thread_cpu`] readings,
/// the largest first.
pub fn per_tx(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, txs: usize) -> String {
    let mut v: Vec<(String, f64)> = after
        .iter()
        .map(|(k, a)| (k.clone(), a - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    v.iter()
        .take(5)
        .map(|(k, d)| format!("{k} {:.0}", d * 1e6 / txs as f64))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The peak resident memory of process `pid`, KiB.
pub fn vm_hwm_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The one-minute load average.
pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .next()
        .unwrap_or("?")
        .to_string()
}

/// The median (of an even count, the mean of the two middle values); NaN when empty.
pub fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    if s.is_empty() {
        return f64::NAN;
    }
    // An even count: the mean of the two middle values.
    (s[(s.len() - 1) / 2] + s[s.len() / 2]) / 2.0
}

pub fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

pub fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// `median [min-max]`, no decimals.
pub fn spread(v: &[f64]) -> String {
    format!("{:.0} [{:.0}-{:.0}]", median(v), min(v), max(v))
}
