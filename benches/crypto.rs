//! Cryptographic primitives: scrypt (standard and light), signing and public-key recovery
//! (k256 and libsecp256k1 side by side, and the crate's own calls), Keccak-256, and a full
//! key-file decrypt.
//!
//! Run: `cargo bench --bench crypto` (about a minute and a half), or
//! `cargo bench --bench crypto -- --quick` for a fast, rougher pass.

use std::time::Duration;

use chain_node::crypto::{self, keccak256, SecretKey};
use chain_node::keystore::keyfile::{self, ScryptParams};
use criterion::{
    black_box, criterion_group, criterion_main, BenchmarkId, Criterion, SamplingMode, Throughput,
};

/// The reference example key (see the crypto tests).
const KEY_HEX: &str = "aebb680a5e596c1d1a01bac78a3985b62c685c5e995d780c176138cb2679ba3e";

fn key() -> SecretKey {
    SecretKey::from_slice(&hex::decode(KEY_HEX).unwrap()).unwrap()
}

fn bench_scrypt(c: &mut Criterion) {
    let salt = [0x5au8; 32];
    let mut g = c.benchmark_group("scrypt");
    // 0.3 to 1 s per standard derivation: ten samples of one or two iterations each (flat
    // sampling, not criterion's default 1+2+...+10 iterations).
    g.sample_size(10);
    g.sampling_mode(SamplingMode::Flat);
    g.warm_up_time(Duration::from_millis(500));
    g.measurement_time(Duration::from_secs(6));
    g.throughput(Throughput::Elements(1));
    g.bench_function("standard_n2^18_r8_p1", |b| {
        b.iter(|| {
            keyfile::derive_scrypt(
                black_box("passphrase"),
                black_box(&salt),
                ScryptParams::STANDARD,
            )
        })
    });
    g.finish();

    let mut g = c.benchmark_group("scrypt");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1));
    g.bench_function("light_n2^12_r8_p6", |b| {
        b.iter(|| {
            keyfile::derive_scrypt(
                black_box("passphrase"),
                black_box(&salt),
                ScryptParams::LIGHT,
            )
        })
    });
    g.finish();
}

/// k256's signing, as the crate signed before: r ‖ s ‖ recovery id.
fn sign_k256(key: &k256::ecdsa::SigningKey, hash: &[u8; 32]) -> [u8; 65] {
    let (sig, recid) = key.sign_prehash_recoverable(hash).unwrap();
    let mut out = [0u8; 65];
    out[..64].copy_from_slice(&sig.to_bytes());
    out[64] = recid.to_byte();
    out
}

/// libsecp256k1's signing with a shared, randomized context: r ‖ s ‖ recovery id.
fn sign_libsecp256k1(
    ctx: &secp256k1::Secp256k1<secp256k1::All>,
    key: &secp256k1::SecretKey,
    hash: &[u8; 32],
) -> [u8; 65] {
    let msg = secp256k1::Message::from_digest(*hash);
    let (id, rs) = ctx.sign_ecdsa_recoverable(&msg, key).serialize_compact();
    let mut out = [0u8; 65];
    out[..64].copy_from_slice(&rs);
    out[64] = id.to_i32() as u8;
    out
}

fn bench_sign_recover(c: &mut Criterion) {
    let k = key();
    let hash = keccak256(b"a 32-byte hash to sign");
    let sig = k.sign_hash(&hash);
    let mut rs = [0u8; 64];
    rs.copy_from_slice(&sig[..64]);
    let recid = sig[64];
    assert_eq!(
        crypto::recover_address(&hash, &rs, recid).unwrap(),
        k.address()
    );

    // The two libraries side by side, each called directly, on the same key and hash.
    let key_bytes = hex::decode(KEY_HEX).unwrap();
    let k256_key = k256::ecdsa::SigningKey::from_slice(&key_bytes).unwrap();
    let secp_key = secp256k1::SecretKey::from_slice(&key_bytes).unwrap();
    let mut secp_ctx = secp256k1::Secp256k1::new();
    secp_ctx.seeded_randomize(&[0x42; 32]);
    assert_eq!(sign_k256(&k256_key, &hash), sig);
    assert_eq!(sign_libsecp256k1(&secp_ctx, &secp_key, &hash), sig);

    let k256_sig = k256::ecdsa::Signature::from_slice(&rs).unwrap();
    let k256_id = k256::ecdsa::RecoveryId::from_byte(recid).unwrap();
    let k256_recover = |hash: &[u8; 32]| -> crypto::Address {
        let vk = k256::ecdsa::VerifyingKey::recover_from_prehash(hash, &k256_sig, k256_id).unwrap();
        let point = vk.to_encoded_point(false);
        let mut xy = [0u8; 64];
        xy.copy_from_slice(&point.as_bytes()[1..]);
        crypto::Address::from_public_xy(&xy)
    };
    assert_eq!(k256_recover(&hash), k.address());

    let mut g = c.benchmark_group("secp256k1");
    g.sample_size(30);
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1));
    g.bench_function("sign_hash_k256", |b| {
        b.iter(|| sign_k256(black_box(&k256_key), black_box(&hash)))
    });
    g.bench_function("sign_hash_libsecp256k1", |b| {
        b.iter(|| sign_libsecp256k1(black_box(&secp_ctx), black_box(&secp_key), black_box(&hash)))
    });
    // What the crate does: `SecretKey::sign_hash` and `sign_message` (hash + sign + v).
    g.bench_function("crypto_sign_hash", |b| {
        b.iter(|| black_box(&k).sign_hash(black_box(&hash)))
    });
    g.bench_function("crypto_sign_message", |b| {
        b.iter(|| crypto::sign_message(black_box(&k), black_box(b"hello world")))
    });
    // A key read from 32 bytes (a decrypted key file, an unlock), and the copy `chain_sign`
    // takes of an unlocked key.
    g.bench_function("crypto_key_from_slice", |b| {
        b.iter(|| SecretKey::from_slice(black_box(&key_bytes)).unwrap())
    });
    g.bench_function("crypto_key_clone", |b| b.iter(|| black_box(&k).clone()));
    // Both recoveries include serializing the point and hashing it to an address.
    g.bench_function("recover_address_libsecp256k1", |b| {
        b.iter(|| {
            crypto::recover_address(black_box(&hash), black_box(&rs), black_box(recid)).unwrap()
        })
    });
    g.bench_function("recover_address_k256", |b| {
        b.iter(|| k256_recover(black_box(&hash)))
    });
    let msg_sig = crypto::sign_message(&k, b"hello world");
    g.bench_function("recover_message_signer_libsecp256k1", |b| {
        b.iter(|| {
            crypto::recover_message_signer(black_box(b"hello world"), black_box(&msg_sig)).unwrap()
        })
    });
    g.finish();
}

/// The seals of an import batch (2,500 blocks, two seals each) checked together against the
/// validator's key (`chain::seal_batch`), per seal, beside recovering each one.
fn bench_seal_batch(c: &mut Criterion) {
    use chain_node::chain::seal_batch::{holds, Batch, Key, Weights};
    let k = key();
    let seals: Vec<([u8; 32], [u8; 65])> = (0..5000u64)
        .map(|i| {
            let z = keccak256(&i.to_be_bytes());
            (z, k.sign_hash(&z))
        })
        .collect();
    let q = Key::from_xy(&k.public_xy()).unwrap();
    let mut g = c.benchmark_group("seals");
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(seals.len() as u64));
    g.bench_function("batch_5000_in_two_shares", |b| {
        b.iter(|| {
            let w = Weights::random();
            let parts = seals.chunks(seals.len() / 2).map(|share| {
                let mut batch = Batch::new();
                for (i, (z, sig)) in share.iter().enumerate() {
                    assert!(batch.add_block(&[(*z, &sig[..], w.weight(i as u64, 0))]));
                }
                batch.finish()
            });
            assert!(holds(parts.collect::<Vec<_>>(), &q));
        })
    });
    g.bench_function("recover_5000_libsecp256k1", |b| {
        b.iter(|| {
            for (z, sig) in &seals {
                let rs: &[u8; 64] = sig[..64].try_into().unwrap();
                assert_eq!(
                    crypto::recover_address(z, rs, sig[64]).unwrap(),
                    k.address()
                );
            }
        })
    });
    g.finish();
}

fn bench_keccak(c: &mut Criterion) {
    let mut g = c.benchmark_group("keccak256");
    g.sample_size(30);
    g.measurement_time(Duration::from_secs(2));
    for len in [32usize, 1024] {
        let data = vec![0xabu8; len];
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::from_parameter(len), &data, |b, d| {
            b.iter(|| keccak256(black_box(d)))
        });
    }
    g.finish();
}

fn bench_keyfile(c: &mut Criterion) {
    let k = key();
    let address = k.address();
    let enc = keyfile::encrypt(&k, address, "passphrase", ScryptParams::LIGHT);
    let json = enc.json.clone();
    let back = chain_node::keystore::decrypt_for(&json, address, "passphrase").unwrap();
    assert_eq!(*back.to_bytes(), *k.to_bytes());

    let mut g = c.benchmark_group("keyfile");
    g.sample_size(20);
    g.measurement_time(Duration::from_secs(3));
    g.throughput(Throughput::Elements(1));
    // Parse the JSON, derive with the file's (light) scrypt parameters, check the MAC,
    // decrypt, check the address: what `load_key` does after reading the file.
    g.bench_function("decrypt_light_v3", |b| {
        b.iter(|| {
            chain_node::keystore::decrypt_for(black_box(&json), address, black_box("passphrase"))
                .unwrap()
        })
    });
    g.bench_function("parse_only_v3", |b| {
        b.iter(|| keyfile::parse(black_box(&json)).unwrap())
    });
    g.finish();
}

criterion_group!(
    benches,
    bench_scrypt,
    bench_sign_recover,
    bench_seal_batch,
    bench_keccak,
    bench_keyfile
);
criterion_main!(benches);
