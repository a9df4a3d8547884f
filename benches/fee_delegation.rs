//! Fee delegation end to end, through the real `chaind --dev` on 127.0.0.1: value transfers
//! (type 0x08, one signature) against fee-delegated value transfers (type 0x09, the sender's
//! signature and the fee payer's: two recoveries each), in one run on one node, rounds
//! interleaved. Both are signed in advance and sent as `chain_sendRawTransaction` over 8
//! keep-alive HTTP connections (the client of `chain_ingest`); the clock runs from the first
//! send until every transfer of the round is sealed.
//!
//! Each kind has its own senders (`FEEDELEG_SENDERS`, default 64, funded in block 1 by the
//! developer account; sender `i` on connection `i % 8`, its nonces in order); the delegated
//! transfers' fees are paid by `FEEDELEG_PAYERS` fee payers (default 1), sender `i` by payer
//! `i % payers`. Every transfer moves 1 to an account of its own, so that both kinds create
//! the same accounts; a fee-delegated transfer's gas is 31,000 (21,000 + 10,000 for the fee
//! payer), all paid by the fee payer.
//!
//! Rounds follow the Thue-Morse order (plain, delegated, delegated, plain, delegated, plain,
//! plain, delegated, ...), so that neither kind runs on the larger state more often. After
//! the run the bench checks that each fee payer paid exactly 31,000 x price per transfer and
//! that a delegated transfer's receipt has status 1.
//!
//! Run: `cargo bench --bench fee_delegation` (`FEEDELEG_ROUNDS`, default 8; `FEEDELEG_ROUND_TXS`,
//! default 40,000; `FEEDELEG_SENDERS`; `FEEDELEG_PAYERS`; `FEEDELEG_ONLY=plain|delegated` for
//! rounds of one kind, to profile it).

#[path = "../tests/common/mod.rs"]
mod common;
#[path = "support/conn.rs"]
mod conn;
#[path = "support/stats.rs"]
mod stats;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use chain_node::crypto::{Address, SecretKey};
use chain_node::types::transaction::{FeeMode, Transaction, ValueTransfer};
use common::{http_call, u256, Node, PRICE};
use conn::Conn;
use serde_json::{json, Value};
use stats::{loadavg, median, thread_cpu};

const CHAIN_ID: u64 = 1000;
const CONNS: usize = 8;
const FUNDS: u128 = 1_000_000_000_000_000_000_000_000;
/// A fee-delegated value transfer's gas: the transfer's and the fee payer's part.
const DELEGATED_GAS: u64 = 31_000;

fn number(v: &Value) -> u128 {
    u128::from_str_radix(v.as_str().unwrap().trim_start_matches("0x"), 16).unwrap()
}

/// `n` keys of their own for `tag`: `[tag, i (8 bytes), 0x33...]`.
fn keys(tag: u8, n: usize) -> Vec<SecretKey> {
    (0..n)
        .map(|i| {
            let mut k = [0x33u8; 32];
            k[0] = tag;
            k[1..9].copy_from_slice(&(i as u64 + 1).to_be_bytes());
            SecretKey::from_slice(&k).unwrap()
        })
        .collect()
}

fn hex_addr(a: &Address) -> String {
    format!("0x{}", hex::encode(a.0))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Plain,
    Delegated,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Plain => "value transfers (0x08)",
            Kind::Delegated => "fee-delegated value transfers (0x09)",
        }
    }
}

/// The run's accounts and the nonces used so far.
struct Accounts {
    plain: Vec<SecretKey>,
    delegated: Vec<SecretKey>,
    payers: Vec<SecretKey>,
    /// Next nonce of each plain / delegated sender.
    plain_next: Vec<u64>,
    delegated_next: Vec<u64>,
    /// Recipients used so far (each transfer goes to a new account).
    recipients: u64,
    /// Delegated transfers sealed per fee payer.
    paid: Vec<u64>,
}

/// A round's transfers: per connection, the request bodies in order and the sender whose
/// nonce shows the last one sealed (with that nonce + 1).
struct Round {
    bodies: Vec<Vec<String>>,
    last: Vec<(Address, u64)>,
    /// The hash of one delegated transfer, to read its receipt at the end.
    sample: Option<String>,
}

fn transfer(key: &SecretKey, nonce: u64, to: Address, payer: Option<&SecretKey>) -> Transaction {
    let mut tx = Transaction::of(ValueTransfer {
        nonce,
        gas_price: u256(PRICE),
        gas: if payer.is_some() {
            DELEGATED_GAS
        } else {
            21_000
        },
        to,
        value: u256(1),
        from: key.address(),
        signatures: Vec::new(),
    });
    if let Some(payer) = payer {
        let Transaction::Native(n) = &mut tx else {
            unreachable!("a value transfer is native")
        };
        n.fee_mode = FeeMode::Delegated;
        n.fee_payer = payer.address();
    }
    tx.sign(key, CHAIN_ID);
    if let Some(payer) = payer {
        assert!(tx.sign_as_fee_payer(payer, CHAIN_ID));
    }
    tx
}

/// Signs `total` transfers of `kind`, the senders' nonces in order, spread over the
/// connections (two signing threads).
fn sign_round(acc: &mut Accounts, kind: Kind, total: usize) -> Round {
    let senders = match kind {
        Kind::Plain => &acc.plain,
        Kind::Delegated => &acc.delegated,
    };
    let next = match kind {
        Kind::Plain => &mut acc.plain_next,
        Kind::Delegated => &mut acc.delegated_next,
    };
    // The plan: (sender, nonce, recipient number), per connection.
    let mut plan: Vec<Vec<(usize, u64, u64)>> = vec![Vec::new(); CONNS];
    for i in 0..total {
        let s = i % senders.len();
        plan[s % CONNS].push((s, next[s], acc.recipients));
        next[s] += 1;
        acc.recipients += 1;
    }
    if kind == Kind::Delegated {
        for (s, _) in senders.iter().enumerate() {
            let n = (0..total).filter(|i| i % senders.len() == s).count() as u64;
            acc.paid[s % acc.payers.len()] += n;
        }
    }
    let last = plan
        .iter()
        .map(|p| {
            let (s, nonce, _) = *p.last().expect("more transfers than connections");
            (senders[s].address(), nonce + 1)
        })
        .collect();
    let payers = &acc.payers;
    let sign = |p: &[(usize, u64, u64)]| -> Vec<String> {
        p.iter()
            .map(|&(s, nonce, r)| {
                let mut to = [0x5a; 20];
                to[12..].copy_from_slice(&r.to_be_bytes());
                let payer = (kind == Kind::Delegated).then(|| &payers[s % payers.len()]);
                let tx = transfer(&senders[s], nonce, Address(to), payer);
                json!({"jsonrpc": "2.0", "id": 1, "method": "chain_sendRawTransaction",
                       "params": [format!("0x{}", hex::encode(tx.encode()))]})
                .to_string()
            })
            .collect()
    };
    let bodies: Vec<Vec<String>> = std::thread::scope(|sc| {
        let (a, b) = plan.split_at(CONNS / 2);
        let h = sc.spawn(|| a.iter().map(|p| sign(p)).collect::<Vec<_>>());
        let mut second: Vec<Vec<String>> = b.iter().map(|p| sign(p)).collect();
        let mut first = h.join().unwrap();
        first.append(&mut second);
        first
    });
    let sample = (kind == Kind::Delegated).then(|| {
        let raw: Value = serde_json::from_str(&bodies[0][0]).unwrap();
        let bytes = hex::decode(raw["params"][0].as_str().unwrap().trim_start_matches("0x"));
        let tx = Transaction::decode(&bytes.unwrap()).unwrap();
        format!("0x{}", hex::encode(tx.hash()))
    });
    Round {
        bodies,
        last,
        sample,
    }
}

/// Microseconds of CPU per transfer by thread name between two readings, the largest first,
/// and the total.
fn per_tx(before: &BTreeMap<String, f64>, after: &BTreeMap<String, f64>, txs: usize) -> String {
    let mut v: Vec<(String, f64)> = after
        .iter()
        .map(|(k, a)| (k.clone(), a - before.get(k).copied().unwrap_or(0.0)))
        .filter(|(_, d)| *d > 0.0)
        .collect();
    v.sort_by(|a, b| b.1.total_cmp(&a.1));
    let all: f64 = v.iter().map(|(_, d)| d).sum();
    let top = v
        .iter()
        .take(5)
        .map(|(k, d)| format!("{k} {:.0}", d * 1e6 / txs as f64))
        .collect::<Vec<_>>()
        .join(", ");
    format!("{:.0} µs in all ({top})", all * 1e6 / txs as f64)
}

/// CPU seconds of this process, its ended threads included.
fn process_cpu() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / hz
}

/// Sends the round over its connections, then waits until each connection's last transfer
/// is sealed. Transfers/s from the first send.
fn run_round(n: &Node, addr: &str, round: &Round, total: usize) -> f64 {
    let pid = n.child.id();
    let head = |c: &mut Conn| {
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": "chain_blockNumber", "params": []});
        let v: Value = serde_json::from_str(&c.call(&body.to_string())).unwrap();
        number(&v["result"])
    };
    let first_block = head(&mut Conn::new(addr));
    let (cpu0, me0) = (thread_cpu(pid), process_cpu());
    let t0 = Instant::now();
    std::thread::scope(|s| {
        for bodies in &round.bodies {
            s.spawn(move || {
                let mut c = Conn::new(addr);
                for b in bodies {
                    let reply = c.call(b);
                    assert!(reply.contains("\"result\""), "{reply}");
                }
            });
        }
    });
    let accepted = t0.elapsed();
    let mut c = Conn::new(addr);
    let mut waiting: Vec<&(Address, u64)> = round.last.iter().collect();
    let deadline = Instant::now() + Duration::from_secs(120);
    while !waiting.is_empty() {
        waiting.retain(|(a, want)| {
            let body = json!({"jsonrpc": "2.0", "id": 1, "method": "chain_getTransactionCount",
                              "params": [hex_addr(a), "latest"]});
            let v: Value = serde_json::from_str(&c.call(&body.to_string())).unwrap();
            number(&v["result"]) < u128::from(*want)
        });
        if !waiting.is_empty() {
            assert!(
                Instant::now() < deadline,
                "the round was not sealed in 120 s"
            );
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    let sealed = t0.elapsed();
    let (cpu1, me1) = (thread_cpu(pid), process_cpu());
    let blocks = head(&mut c) - first_block;
    println!(
        "    accepted in {:.2} s ({:.0} tx/s), all sealed in {:.2} s: {:.0} tx/s ({blocks} blocks)",
        accepted.as_secs_f64(),
        total as f64 / accepted.as_secs_f64(),
        sealed.as_secs_f64(),
        total as f64 / sealed.as_secs_f64()
    );
    println!(
        "    chaind CPU per transfer: {}",
        per_tx(&cpu0, &cpu1, total)
    );
    println!(
        "    client CPU per transfer: {:.0} µs",
        (me1 - me0) * 1e6 / total as f64
    );
    total as f64 / sealed.as_secs_f64()
}

fn balance(url: &str, a: &Address) -> u128 {
    number(&http_call(url, "chain_getBalance", json!([hex_addr(a), "latest"]))["result"])
}

/// What one signature recovery costs on this machine, in process (no node running): µs per
/// recovery on one thread, and on each of two threads recovering at once.
fn recovery_cost() -> (f64, f64) {
    const N: usize = 2000;
    let (sender, payer) = (&keys(0x34, 1)[0], &keys(0x35, 1)[0]);
    let txs: Vec<Transaction> = (0..N as u64)
        .map(|i| transfer(sender, i, Address([0x5b; 20]), Some(payer)))
        .collect();
    let run = |txs: &[Transaction]| {
        let t = Instant::now();
        for tx in txs {
            assert_eq!(
                tx.recovered_fee_payer().unwrap()[0].address,
                payer.address()
            );
        }
        t.elapsed().as_secs_f64() * 1e6 / txs.len() as f64
    };
    let one = run(&txs);
    let two = std::thread::scope(|s| {
        let (a, b) = txs.split_at(N / 2);
        let h = s.spawn(|| run(a));
        (run(b) + h.join().unwrap()) / 2.0
    });
    (one, two)
}

fn main() {
    let rounds: usize = common::env_or("FEEDELEG_ROUNDS", 8);
    let total: usize = common::env_or("FEEDELEG_ROUND_TXS", 40_000);
    let senders: usize = common::env_or("FEEDELEG_SENDERS", 64);
    let payers: usize = common::env_or("FEEDELEG_PAYERS", 1);
    // For a profile of one kind: every round of that kind.
    let only = std::env::var("FEEDELEG_ONLY").ok();
    assert!(senders >= CONNS && payers >= 1 && total >= senders);
    let mut acc = Accounts {
        plain: keys(0x31, senders),
        delegated: keys(0x32, senders),
        payers: keys(0x33, payers),
        plain_next: vec![0; senders],
        delegated_next: vec![0; senders],
        recipients: 0,
        paid: vec![0; payers],
    };

    let (one, two) = recovery_cost();
    println!(
        "one signature recovery: {one:.1} µs on one thread, {two:.1} µs on each of two at once (load average {})",
        loadavg()
    );

    // The node, its senders and fee payers funded in block 1 (not timed).
    let mut args = vec!["--dev"];
    args.extend(common::http_args("chain"));
    let n = Node::start(&args);
    let url = n.http.clone().unwrap();
    let addr = url.trim_start_matches("http://").to_string();
    let dev = common::dev_key(&n);
    let funded: Vec<Address> = acc
        .plain
        .iter()
        .chain(&acc.delegated)
        .chain(&acc.payers)
        .map(SecretKey::address)
        .collect();
    for (i, a) in funded.iter().enumerate() {
        let raw = common::raw_transfer(&dev, i as u64, *a, FUNDS, PRICE, CHAIN_ID);
        let r = http_call(&url, "chain_sendRawTransaction", json!([raw]));
        assert!(r.get("result").is_some(), "{r}");
    }
    let dev_addr = dev.address();
    while number(
        &http_call(
            &url,
            "chain_getTransactionCount",
            json!([hex_addr(&dev_addr), "latest"]),
        )["result"],
    ) < funded.len() as u128
    {
        std::thread::sleep(Duration::from_millis(10));
    }
    println!(
        "{senders} senders of each kind, {payers} fee payer(s), {total} transfers a round, {rounds} rounds, {CONNS} connections"
    );

    let mut figures: Vec<(Kind, f64)> = Vec::new();
    let mut sample = None;
    for i in 0..rounds {
        // Thue-Morse: the parity of the round number's one bits.
        let kind = match only.as_deref() {
            Some("plain") => Kind::Plain,
            Some("delegated") => Kind::Delegated,
            Some(other) => panic!("FEEDELEG_ONLY={other:?}: plain or delegated"),
            None if i.count_ones() % 2 == 0 => Kind::Plain,
            None => Kind::Delegated,
        };
        let t = Instant::now();
        let round = sign_round(&mut acc, kind, total);
        sample = sample.or(round.sample.clone());
        println!(
            "round {} of {rounds}: {total} {} (signed in {:.2} s; load average {})",
            i + 1,
            kind.name(),
            t.elapsed().as_secs_f64(),
            loadavg()
        );
        let tps = run_round(&n, &addr, &round, total);
        figures.push((kind, tps));
    }

    // The delegated transfers ran as such: each fee payer paid their gas, all of it.
    for (p, count) in acc.payers.iter().zip(&acc.paid) {
        let paid = FUNDS - balance(&url, &p.address());
        assert_eq!(
            paid,
            u128::from(*count) * u128::from(DELEGATED_GAS) * PRICE,
            "fee payer {} paid for {count} transfers",
            hex_addr(&p.address())
        );
    }
    if let Some(h) = sample {
        let r = http_call(&url, "chain_getTransactionReceipt", json!([h]));
        assert_eq!(r["result"]["status"], "0x1", "{r}");
        assert_eq!(r["result"]["typeInt"], 9, "{r}");
    }

    let of = |k: Kind| -> Vec<f64> {
        figures
            .iter()
            .filter(|(kind, _)| *kind == k)
            .map(|(_, t)| *t)
            .collect()
    };
    let (plain, delegated) = (of(Kind::Plain), of(Kind::Delegated));
    let list = |v: &[f64]| {
        v.iter()
            .map(|t| format!("{t:.0}"))
            .collect::<Vec<_>>()
            .join(" / ")
    };
    let ratio = median(&delegated) / median(&plain);
    println!(
        "RESULT plain_tps={} (median {:.0})",
        list(&plain),
        median(&plain)
    );
    println!(
        "RESULT delegated_tps={} (median {:.0})",
        list(&delegated),
        median(&delegated)
    );
    println!("RESULT ratio={ratio:.3} (delegated / plain, medians)");
    println!("RESULT recovery_us={one:.1} (one thread) {two:.1} (two at once)");
}
