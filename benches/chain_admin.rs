//! Chain administration in process: import and export of 100,000 empty blocks, and import of
//! blocks holding 200,000 value transfers with every signature, seal and state root checked.
//! Export is set beside `dd` writing (and syncing) the same number of bytes.
//!
//! Run: `cargo bench --bench chain_admin` (`ADMIN_EMPTY_BLOCKS`, default 100,000;
//! `ADMIN_TRANSFERS`, default 200,000, in blocks of `ADMIN_BLOCK_TXS`, default 2,000;
//! `ADMIN_EXPORT_RUNS`, default 5; `ADMIN_MIGRATION_ACCOUNTS`, default 1,000,000).

#[path = "../tests/common/mod.rs"]
mod common;

use std::sync::atomic::AtomicBool;
use std::time::Instant;

use chain_node::chain::genesis::Genesis;
use chain_node::chain::import::import_stream;
use chain_node::chain::Chain;
use chain_node::crypto::{Address, SecretKey};

/// CPU seconds (user and system, every thread) the process has used so far.
fn cpu_secs() -> f64 {
    // SAFETY: getrusage fills the struct we pass; nothing else is touched.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 / 1e6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// `dd` writing and syncing `bytes` bytes of zeros: seconds.
fn dd(dir: &std::path::Path, bytes: u64) -> f64 {
    let t = Instant::now();
    let out = std::process::Command::new("dd")
        .arg("if=/dev/zero")
        .arg(format!("of={}", dir.join("dd.out").display()))
        .arg("bs=1M")
        .arg(format!("count={}", bytes.div_ceil(1 << 20)))
        .arg("conv=fsync")
        .output()
        .unwrap();
    assert!(out.status.success());
    let secs = t.elapsed().as_secs_f64();
    std::fs::remove_file(dir.join("dd.out")).unwrap();
    secs
}

fn main() {
    let n_empty = common::env_or("ADMIN_EMPTY_BLOCKS", 100_000) as u64;
    let n_transfers = common::env_or("ADMIN_TRANSFERS", 200_000);
    let block_txs = common::env_or("ADMIN_BLOCK_TXS", 2_000);
    let v = SecretKey::from_slice(&[0x11; 32]).unwrap();
    let senders: Vec<SecretKey> = common::numbered_keys(1000);
    let mut genesis = Genesis::dev(v.address(), common::u256(1 << 100));
    for s in &senders {
        genesis.alloc.insert(s.address(), common::u256(1 << 100));
    }
    let work = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let mut results = Vec::new();

    // Empty blocks: built here, written as an export file, imported, exported again.
    {
        let t = Instant::now();
        common::write_empty_blocks(&work.path().join("empty.rlp"), &genesis, &v, n_empty);
        println!(
            "built {n_empty} empty sealed blocks in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let chain = Chain::open(&work.path().join("a"), &genesis).unwrap();
        let cpu = cpu_secs();
        let t = Instant::now();
        let mut r = std::io::BufReader::with_capacity(
            1 << 20,
            std::fs::File::open(work.path().join("empty.rlp")).unwrap(),
        );
        let done = import_stream(&chain, &mut r, &stop, &mut |_| {}).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let cpu = cpu_secs() - cpu;
        assert_eq!(done.new, n_empty);
        println!(
            "import: {n_empty} empty blocks in {secs:.2} s = {:.0} blocks/s ({cpu:.2} s of CPU: {:.2} cores busy, {:.1} µs of CPU a block)",
            n_empty as f64 / secs,
            cpu / secs,
            cpu * 1e6 / n_empty as f64
        );
        results.push(format!(
            "import_empty_blocks_per_s={:.0}",
            n_empty as f64 / secs
        ));

        // Export and dd in turn, a few times (each is well under a second, and the disk's
        // moods vary): the median ratio is the figure.
        let mut ratios = Vec::new();
        for run in 0..common::env_or("ADMIN_EXPORT_RUNS", 5) {
            let out = work.path().join(format!("export-{run}.rlp"));
            let t = Instant::now();
            let (blocks, bytes) =
                chain_node::chain::export::export(&chain, &out, None, None, &stop, &mut |_, _| {})
                    .unwrap();
            let secs = t.elapsed().as_secs_f64();
            let dd_secs = dd(work.path(), bytes);
            std::fs::remove_file(&out).unwrap();
            println!(
                "export: {blocks} blocks, {bytes} bytes in {secs:.3} s; dd of the same bytes {dd_secs:.3} s: {:.2}x",
                secs / dd_secs
            );
            ratios.push(secs / dd_secs);
        }
        ratios.sort_by(f64::total_cmp);
        results.push(format!("export_vs_dd={:.2}", ratios[ratios.len() / 2]));
    }

    // Transfers: sealed on one chain, exported, imported by another of the same genesis.
    {
        let source = Chain::open(&work.path().join("s"), &genesis).unwrap();
        let mut price = [0u8; 32];
        price[24..].copy_from_slice(&source.unit_price().to_be_bytes());
        let t = Instant::now();
        let mut nonces = vec![0u64; senders.len()];
        let mut sent = 0;
        while sent < n_transfers {
            submit_transfers(
                &source,
                &senders,
                &mut nonces,
                sent,
                block_txs.min(n_transfers - sent),
            );
            sent += block_txs.min(n_transfers - sent);
            source.seal(&v).unwrap().unwrap();
        }
        let file = work.path().join("transfers.rlp");
        chain_node::chain::export::export(&source, &file, None, None, &stop, &mut |_, _| {})
            .unwrap();
        println!(
            "built {} blocks holding {n_transfers} transfers in {:.1} s",
            source.head_number(),
            t.elapsed().as_secs_f64()
        );
        let target = Chain::open(&work.path().join("t"), &genesis).unwrap();
        let cpu = cpu_secs();
        let t = Instant::now();
        let mut r = std::io::BufReader::with_capacity(1 << 20, std::fs::File::open(&file).unwrap());
        let done = import_stream(&target, &mut r, &stop, &mut |_| {}).unwrap();
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(done.new, source.head_number());
        assert_eq!(target.head_hash(), source.head_hash());
        let cpu = cpu_secs() - cpu;
        println!(
            "import: {n_transfers} transfers in {} blocks in {secs:.2} s = {:.0} transfers/s ({cpu:.2} s of CPU: {:.2} cores busy)",
            done.new,
            n_transfers as f64 / secs,
            cpu / secs
        );
        results.push(format!(
            "import_transfers_per_s={:.0}",
            n_transfers as f64 / secs
        ));
    }
    // State migration of a big state while blocks keep being sealed; then the trie-node
    // cache of that state saved and loaded, beside dd and a plain read of the same bytes.
    if let Some((r, chain, dir)) = migration(&senders, &v) {
        results.extend(r);
        results.extend(cache_save_load(&chain, &work));
        drop(dir);
    }
    for r in results {
        println!("RESULT {r}");
    }
}

/// Admits transfers `first..first + count` (of 1 each, to accounts numbered like them) from
/// `senders` in turn.
fn submit_transfers(
    chain: &Chain,
    senders: &[SecretKey],
    nonces: &mut [u64],
    first: usize,
    count: usize,
) {
    for i in first..first + count {
        let tx = common::numbered_transfer(senders, nonces, i, chain.chain_id());
        chain.submit(tx).unwrap();
    }
}

/// Seals `blocks` blocks of `per_block` transfers from `senders` (pre-signed and admitted
/// before each block's clock starts); the transfers per second of sealing.
fn seal_rate(
    chain: &Chain,
    v: &SecretKey,
    senders: &[SecretKey],
    nonces: &mut [u64],
    blocks: usize,
    per_block: usize,
) -> f64 {
    let mut price = [0u8; 32];
    price[24..].copy_from_slice(&chain.unit_price().to_be_bytes());
    let mut sealing = std::time::Duration::ZERO;
    for b in 0..blocks {
        submit_transfers(chain, senders, nonces, b * per_block, per_block);
        let t = Instant::now();
        chain.seal(v).unwrap().unwrap();
        sealing += t.elapsed();
    }
    (blocks * per_block) as f64 / sealing.as_secs_f64()
}

#[allow(clippy::type_complexity)]
fn migration(
    senders: &[SecretKey],
    v: &SecretKey,
) -> Option<(Vec<String>, std::sync::Arc<Chain>, tempfile::TempDir)> {
    let accounts = common::env_or("ADMIN_MIGRATION_ACCOUNTS", 1_000_000) as u64;
    if accounts == 0 {
        return None;
    }
    let mut genesis = Genesis::dev(v.address(), common::u256(1 << 100));
    for s in senders {
        genesis.alloc.insert(s.address(), common::u256(1 << 100));
    }
    for i in 0..accounts {
        let mut a = [0x77u8; 20];
        a[12..].copy_from_slice(&i.to_be_bytes());
        genesis.alloc.insert(Address(a), common::u256(1));
    }
    let dir = tempfile::tempdir().unwrap();
    let chain = std::sync::Arc::new(Chain::open(dir.path(), &genesis).unwrap());
    let mut nonces = vec![0u64; senders.len()];
    let quiet = seal_rate(&chain, v, senders, &mut nonces, 10, 1000);
    let (nodes_before, bytes_before) = chain.node_file_usage();
    let t = Instant::now();
    chain.start_state_migration().unwrap();
    let mut blocks = 0;
    let mut during = Vec::new();
    while chain.state_migration_status().is_migration {
        during.push(seal_rate(&chain, v, senders, &mut nonces, 1, 1000));
        blocks += 1;
    }
    let took = t.elapsed().as_secs_f64();
    let s = chain.state_migration_status();
    assert_eq!(s.err, "null");
    let (nodes_after, bytes_after) = chain.node_file_usage();
    let busy = if during.is_empty() {
        0.0
    } else {
        during.iter().sum::<f64>() / during.len() as f64
    };
    println!(
        "state migration of {} accounts: {took:.2} s ({} nodes copied; node file {nodes_before} nodes / {bytes_before} bytes -> {nodes_after} / {bytes_after}); sealing {quiet:.0} tx/s before, {busy:.0} tx/s during ({blocks} blocks)",
        accounts + senders.len() as u64 + 1,
        s.committed
    );
    Some((
        vec![
            format!("migration_secs={took:.2}"),
            format!("sealing_during_migration_vs_quiet={:.2}", busy / quiet),
        ],
        chain,
        dir,
    ))
}

fn cache_save_load(chain: &std::sync::Arc<Chain>, work: &tempfile::TempDir) -> Vec<String> {
    let dir = work.path().join("cache");
    std::fs::create_dir_all(&dir).unwrap();
    // Touch every node of the head's state so that the cache holds the whole state.
    chain.dump(None).unwrap();
    let (entries, bytes, _) = chain.node_cache_usage();
    let t = Instant::now();
    chain.save_node_cache(&dir).unwrap();
    chain.wait_for_cache_save();
    let save = t.elapsed().as_secs_f64();
    let file = dir.join("fastcache").join("nodes.bin");
    let size = std::fs::metadata(&file).unwrap().len();
    let dd_secs = dd(work.path(), size);
    let t = Instant::now();
    let read = std::fs::read(&file).unwrap().len();
    let read_secs = t.elapsed().as_secs_f64();
    assert_eq!(read as u64, size);
    // Into a cache of its own, as a node starting up loads it (each node is checked against
    // its hash when first served).
    let fresh = chain_node::trie::cache::NodeCache::new(4 << 30);
    let t = Instant::now();
    let loaded =
        chain_node::chain::cachefile::load_into(&fresh, &dir, &chain.genesis_hash().unwrap())
            .unwrap()
            .unwrap();
    let load = t.elapsed().as_secs_f64();
    println!(
        "trie-node cache: {entries} nodes ({bytes} bytes in memory, {size} on disk): saved in {save:.3} s (dd {dd_secs:.3} s: {:.2}x), loaded in {load:.3} s (reading the file {read_secs:.3} s: {:.2}x), {} nodes",
        save / dd_secs,
        load / read_secs,
        loaded.1
    );
    drop(fresh);
    vec![
        format!("cache_save_vs_dd={:.2}", save / dd_secs),
        format!("cache_load_vs_read={:.2}", load / read_secs),
    ]
}
