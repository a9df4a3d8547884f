//! Checking the seals of many blocks at once against the validator's known public key.
//!
//! A block is checked by recovering the signer of its proposer seal and of each committed
//! seal and comparing it with the validator (libsecp256k1: about 33 µs a signature here, two
//! thirds of an empty block's import). When a batch of blocks comes in (an import, a peer's
//! sync) and the validator's public key `Q` is known, its seals are checked together instead:
//! a signature `(r, s)` with recovery id `v` over hash `z` recovers `Q` exactly when
//! `s·R = z·G + r·Q`, where `R` is the curve point with x-coordinate `r` and y parity `v`. With
//! `u = z/s` and `w = r/s`, each seal says `R = u·G + w·Q`; the batch holds when
//!
//! ```text
//! Σ aᵢ·Rᵢ = (Σ aᵢ·uᵢ)·G + (Σ aᵢ·wᵢ)·Q
//! ```
//!
//! for weights `aᵢ` of 128 bits drawn at random for each batch after the blocks arrived. If
//! any seal is false, the sum differs unless the weights happen to cancel the difference,
//! which for weights a sender cannot know in advance has a chance of 2⁻¹²⁸. The left side is
//! one multi-scalar multiplication with 128-bit scalars (Pippenger's bucket method) and each
//! seal costs a square root (to find `Rᵢ`), a share of one inversion and a few scalar
//! products: about 12 µs instead of 33 (`cargo bench --bench crypto`).
//!
//! Any signature that does not fit (not 65 bytes, a recovery id other than 0 or 1, `r` or `s`
//! out of range, `r` not an x-coordinate on the curve) is left to the usual recovery; a batch
//! that does not hold is checked again seal by seal, so every error names its block and says
//! what recovery says. Written by hand on `k256`'s curve arithmetic because no maintained
//! crate offers batch verification of ECDSA (it is not a standard operation); all inputs
//! are public, so the code is variable-time.

use k256::elliptic_curve::ops::{Invert, LinearCombination, Reduce};
use k256::elliptic_curve::point::DecompressPoint;
use k256::elliptic_curve::subtle::Choice;
use k256::elliptic_curve::PrimeField;
use k256::{AffinePoint, FieldBytes, ProjectivePoint, Scalar, U256};

/// The validator's public key, as the batch check uses it.
#[derive(Clone, Copy, Debug)]
pub struct Key(AffinePoint);

impl Key {
    /// The key from its uncompressed form X ‖ Y; `None` when that is not a curve point.
    pub fn from_xy(xy: &[u8; 64]) -> Option<Key> {
        let mut sec1 = [0u8; 65];
        sec1[0] = 4;
        sec1[1..].copy_from_slice(xy);
        let ep = k256::EncodedPoint::from_bytes(sec1).ok()?;
        let p: Option<AffinePoint> =
            k256::elliptic_curve::sec1::FromEncodedPoint::from_encoded_point(&ep).into();
        p.map(Key)
    }
}

/// The weights of one batch: 128-bit values drawn from a secret seed.
pub struct Weights {
    seed: [u8; 32],
}

impl Weights {
    /// Weights from a fresh random seed.
    pub fn random() -> Weights {
        let mut seed = [0u8; 32];
        getrandom::getrandom(&mut seed).expect("the system's random source");
        Weights { seed }
    }

    /// Weights from a given seed (tests).
    pub fn from_seed(seed: [u8; 32]) -> Weights {
        Weights { seed }
    }

    /// The weight of seal `j` of block `i`; never zero.
    pub fn weight(&self, i: u64, j: u64) -> u128 {
        let h = crate::crypto::keccak256_concat(&[&self.seed, &i.to_be_bytes(), &j.to_be_bytes()]);
        let a = u128::from_be_bytes(h[..16].try_into().expect("16 bytes"));
        a.max(1)
    }
}

/// One seal: its point `R`, and `r`, `s`, `z` as scalars.
struct Term {
    point: AffinePoint,
    r: Scalar,
    s: Scalar,
    z: Scalar,
    weight: u128,
}

/// A batch (or a share of one) worked out: `Σ aᵢ·Rᵢ`, `Σ aᵢ·uᵢ` and `Σ aᵢ·wᵢ`.
pub struct Part {
    sum: ProjectivePoint,
    u: Scalar,
    w: Scalar,
}

/// A 32-byte big-endian scalar in `1..n`, or `None`.
fn nonzero_scalar(b: &[u8]) -> Option<Scalar> {
    let s: Option<Scalar> = Scalar::from_repr(*FieldBytes::from_slice(b)).into();
    s.filter(|s| !bool::from(s.is_zero()))
}

/// A seal as a term, or `None` when it cannot go into a batch.
fn term(hash: &[u8; 32], sig: &[u8], weight: u128) -> Option<Term> {
    if sig.len() != 65 || sig[64] > 1 {
        return None;
    }
    let r = nonzero_scalar(&sig[..32])?;
    let s = nonzero_scalar(&sig[32..64])?;
    // r < n < p, so r is a field element; R is the point with that x and y parity v.
    let point: Option<AffinePoint> =
        AffinePoint::decompress(FieldBytes::from_slice(&sig[..32]), Choice::from(sig[64])).into();
    Some(Term {
        point: point?,
        r,
        s,
        z: <Scalar as Reduce<U256>>::reduce_bytes(FieldBytes::from_slice(hash)),
        weight,
    })
}

/// The seals of one block made ready for a batch (the costly part: each `R` found, each `s`
/// inverted), on whichever thread has time; only the final sum is left to the batch.
pub struct Prepared {
    points: Vec<AffinePoint>,
    weights: Vec<u128>,
    u: Scalar,
    w: Scalar,
}

/// The seals of one block, `(signed hash, signature, weight)`; the signature borrowed or
/// owned.
pub type Seals<S> = [([u8; 32], S, u128)];

impl Prepared {
    /// The seals of one block; `None` when one of them cannot go into a batch (the block's
    /// seals are then to be recovered one by one).
    pub fn new<S: AsRef<[u8]>>(seals: &Seals<S>) -> Option<Prepared> {
        Prepared::many(&[seals]).pop().flatten()
    }

    /// The seals of several blocks, each prepared as [`Prepared::new`] does, with one
    /// inversion for all of them.
    pub fn many<S: AsRef<[u8]>>(blocks: &[&Seals<S>]) -> Vec<Option<Prepared>> {
        let terms: Vec<Option<Vec<Term>>> = blocks
            .iter()
            .map(|seals| {
                seals
                    .iter()
                    .map(|(hash, sig, weight)| term(hash, sig.as_ref(), *weight))
                    .collect()
            })
            .collect();
        // Every s inverted with one inversion (Montgomery's trick): prefix products, the
        // inverse of the product, then back.
        let s: Vec<Scalar> = terms.iter().flatten().flatten().map(|t| t.s).collect();
        let mut prefix = Vec::with_capacity(s.len());
        let mut acc = Scalar::ONE;
        for x in &s {
            prefix.push(acc);
            acc *= x;
        }
        let mut inv = acc
            .invert_vartime()
            .expect("a product of nonzero scalars mod a prime is nonzero");
        let mut s_inv = vec![Scalar::ZERO; s.len()];
        for i in (0..s.len()).rev() {
            s_inv[i] = inv * prefix[i];
            inv *= s[i];
        }
        let mut s_inv = s_inv.into_iter();
        terms
            .into_iter()
            .map(|block| {
                let block = block?;
                let (mut u, mut w) = (Scalar::ZERO, Scalar::ZERO);
                for (t, si) in block.iter().zip(s_inv.by_ref()) {
                    let a = Scalar::from_repr(u128_repr(t.weight)).expect("below 2^128 < n");
                    let a_s = a * si;
                    u += a_s * t.z;
                    w += a_s * t.r;
                }
                Some(Prepared {
                    points: block.iter().map(|t| t.point).collect(),
                    weights: block.iter().map(|t| t.weight).collect(),
                    u,
                    w,
                })
            })
            .collect()
    }
}

/// The seals of many blocks, to be checked together.
#[derive(Default)]
pub struct Batch {
    points: Vec<AffinePoint>,
    weights: Vec<u128>,
    u: Scalar,
    w: Scalar,
}

impl Batch {
    pub fn new() -> Batch {
        Batch::default()
    }

    /// Adds one block's prepared seals.
    pub fn add(&mut self, p: Prepared) {
        self.points.extend(p.points);
        self.weights.extend(p.weights);
        self.u += p.u;
        self.w += p.w;
    }

    /// Prepares and adds the seals of one block; adds nothing and returns false when one of
    /// them cannot go into a batch.
    pub fn add_block(&mut self, seals: &Seals<&[u8]>) -> bool {
        match Prepared::new(seals) {
            Some(p) => {
                self.add(p);
                true
            }
            None => false,
        }
    }

    /// Seals added so far.
    pub fn len(&self) -> usize {
        self.points.len()
    }

    pub fn is_empty(&self) -> bool {
        self.points.is_empty()
    }

    /// Works the sum out.
    pub fn finish(self) -> Part {
        Part {
            sum: msm_u128(&self.points, &self.weights),
            u: self.u,
            w: self.w,
        }
    }
}

fn u128_repr(a: u128) -> FieldBytes {
    let mut b = [0u8; 32];
    b[16..].copy_from_slice(&a.to_be_bytes());
    b.into()
}

/// Whether the shares of a batch hold together for `key`: `Σ aᵢ·Rᵢ = U·G + W·Q`.
pub fn holds(parts: impl IntoIterator<Item = Part>, key: &Key) -> bool {
    let (mut sum, mut u, mut w) = (ProjectivePoint::IDENTITY, Scalar::ZERO, Scalar::ZERO);
    for p in parts {
        sum += p.sum;
        u += p.u;
        w += p.w;
    }
    let rhs = ProjectivePoint::lincomb(
        &ProjectivePoint::GENERATOR,
        &u,
        &ProjectivePoint::from(key.0),
        &w,
    );
    sum == rhs
}

/// `Σ kᵢ·Pᵢ` for 128-bit `kᵢ`, by Pippenger's bucket method: the scalars are cut into
/// windows of `c` bits; per window, each point is added to the bucket of its digit, and the
/// buckets are summed with their digits as weights by a running sum (2·2ᶜ additions).
fn msm_u128(points: &[AffinePoint], scalars: &[u128]) -> ProjectivePoint {
    let n = points.len();
    if n == 0 {
        return ProjectivePoint::IDENTITY;
    }
    // About log2(n) - 1 bits a window balances the n additions against the 2·2ᶜ.
    let c = (n.ilog2() as usize).saturating_sub(1).clamp(2, 13);
    let windows = 128usize.div_ceil(c);
    let mask = (1u128 << c) - 1;
    let mut buckets = vec![ProjectivePoint::IDENTITY; (1 << c) - 1];
    let mut total = ProjectivePoint::IDENTITY;
    for window in (0..windows).rev() {
        for _ in 0..c {
            total = total.double();
        }
        buckets.fill(ProjectivePoint::IDENTITY);
        let shift = window * c;
        for (p, k) in points.iter().zip(scalars) {
            let digit = ((k >> shift) & mask) as usize;
            if digit != 0 {
                buckets[digit - 1] += p;
            }
        }
        let (mut running, mut sum) = (ProjectivePoint::IDENTITY, ProjectivePoint::IDENTITY);
        for b in buckets.iter().rev() {
            running += b;
            sum += running;
        }
        total += sum;
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::SecretKey;

    fn signed(key: &SecretKey, n: usize) -> Vec<([u8; 32], [u8; 65])> {
        (0..n)
            .map(|i| {
                let z = crate::crypto::keccak256(&(i as u64).to_be_bytes());
                (z, key.sign_hash(&z))
            })
            .collect()
    }

    fn check(key: &SecretKey, sigs: &[([u8; 32], [u8; 65])], shares: usize) -> bool {
        let weights = Weights::random();
        let mut batches: Vec<Batch> = (0..shares).map(|_| Batch::new()).collect();
        for (i, (z, sig)) in sigs.iter().enumerate() {
            let b = &mut batches[i % shares];
            assert!(b.add_block(&[(*z, &sig[..], weights.weight(i as u64, 0))]));
        }
        let q = Key::from_xy(&key.public_xy()).unwrap();
        holds(batches.into_iter().map(Batch::finish), &q)
    }

    #[test]
    fn true_seals_hold_in_batches_of_every_size_and_share() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        for n in [1, 2, 3, 17, 300] {
            let sigs = signed(&key, n);
            assert!(check(&key, &sigs, 1), "{n} seals");
            assert!(check(&key, &sigs, 2), "{n} seals in two shares");
        }
    }

    #[test]
    fn one_false_seal_anywhere_breaks_the_batch() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        let other = SecretKey::from_slice(&[0x22; 32]).unwrap();
        let sigs = signed(&key, 64);
        for bad in [0, 31, 63] {
            // Signed by another key.
            let mut s = sigs.clone();
            s[bad].1 = other.sign_hash(&s[bad].0);
            assert!(!check(&key, &s, 2), "another signer at {bad}");
            // The hash it claims to sign changed.
            let mut s = sigs.clone();
            s[bad].0[5] ^= 1;
            assert!(!check(&key, &s, 2), "another hash at {bad}");
            // The recovery id flipped: the signature verifies for Q, but recovers another key.
            let mut s = sigs.clone();
            s[bad].1[64] ^= 1;
            assert!(
                crate::crypto::recover_address(
                    &s[bad].0,
                    s[bad].1[..64].try_into().unwrap(),
                    s[bad].1[64]
                )
                .unwrap()
                    != key.address()
            );
            assert!(!check(&key, &s, 1), "flipped recovery id at {bad}");
            // s negated: also a valid ECDSA signature, but with this recovery id it
            // recovers another key.
            let mut s = sigs.clone();
            let neg = -nonzero_scalar(&s[bad].1[32..64]).unwrap();
            s[bad].1[32..64].copy_from_slice(&neg.to_repr());
            assert!(!check(&key, &s, 2), "negated s at {bad}");
        }
    }

    #[test]
    fn a_high_s_seal_with_its_matching_recovery_id_holds_as_recovery_accepts_it() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        let mut sigs = signed(&key, 8);
        let neg = -nonzero_scalar(&sigs[3].1[32..64]).unwrap();
        sigs[3].1[32..64].copy_from_slice(&neg.to_repr());
        sigs[3].1[64] ^= 1;
        let (z, sig) = &sigs[3];
        assert_eq!(
            crate::crypto::recover_address(z, sig[..64].try_into().unwrap(), sig[64]).unwrap(),
            key.address()
        );
        assert!(check(&key, &sigs, 2));
    }

    #[test]
    fn seals_that_cannot_be_batched_are_refused_whole_per_block() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        let sigs = signed(&key, 2);
        let w = Weights::from_seed([7; 32]);
        let good = (sigs[0].0, &sigs[0].1[..], w.weight(0, 0));
        let mut b = Batch::new();
        let mut high_id = sigs[1].1;
        high_id[64] = 2;
        let mut zero_r = sigs[1].1;
        zero_r[..32].fill(0);
        let mut big_s = sigs[1].1;
        big_s[32..64].fill(0xff);
        // x = 5 is not on the curve (5³ + 7 = 132 is not a square mod p).
        let mut off_curve = sigs[1].1;
        off_curve[..32].fill(0);
        off_curve[31] = 5;
        for bad in [
            &sigs[1].1[..64],
            &high_id[..],
            &zero_r[..],
            &big_s[..],
            &off_curve[..],
        ] {
            assert!(!b.add_block(&[good, (sigs[1].0, bad, 1)]));
            assert_eq!(b.len(), 0, "nothing of the block stays");
        }
        assert!(b.add_block(&[good]));
        assert_eq!(b.len(), 1);
    }

    #[test]
    fn blocks_prepared_together_hold_as_blocks_prepared_apart_and_a_bad_one_is_none() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        let q = Key::from_xy(&key.public_xy()).unwrap();
        let sigs = signed(&key, 7);
        let w = Weights::random();
        let seals: Vec<([u8; 32], &[u8], u128)> = sigs
            .iter()
            .enumerate()
            .map(|(i, (z, s))| (*z, &s[..], w.weight(i as u64, 0)))
            .collect();
        let mut short = seals[4];
        short.1 = &short.1[..64];
        let blocks: Vec<&Seals<&[u8]>> = vec![
            &seals[0..2],
            &seals[2..3],
            &seals[3..4],
            std::slice::from_ref(&short),
            &seals[5..7],
        ];
        let prepared = Prepared::many(&blocks);
        assert_eq!(prepared.len(), 5);
        assert!(prepared[3].is_none());
        let mut batch = Batch::new();
        for p in prepared.into_iter().flatten() {
            batch.add(p);
        }
        assert_eq!(batch.len(), 6);
        assert!(holds([batch.finish()], &q));
        // The same seals, one block with a hash changed: the batch does not hold.
        let mut z = seals[5].0;
        z[0] ^= 1;
        let mut changed = seals[5];
        changed.0 = z;
        let blocks: Vec<&Seals<&[u8]>> = vec![&seals[0..2], std::slice::from_ref(&changed)];
        let mut batch = Batch::new();
        for p in Prepared::many(&blocks).into_iter().flatten() {
            batch.add(p);
        }
        assert!(!holds([batch.finish()], &q));
    }

    #[test]
    fn an_empty_batch_holds_and_the_key_must_be_a_curve_point() {
        let key = SecretKey::from_slice(&[0x11; 32]).unwrap();
        let q = Key::from_xy(&key.public_xy()).unwrap();
        assert!(holds([Batch::new().finish()], &q));
        assert!(Key::from_xy(&[1; 64]).is_none());
    }

    #[test]
    fn weights_differ_by_seed_and_position_and_are_never_zero() {
        let a = Weights::from_seed([1; 32]);
        let b = Weights::from_seed([2; 32]);
        assert_ne!(a.weight(0, 0), b.weight(0, 0));
        assert_ne!(a.weight(0, 0), a.weight(0, 1));
        assert_ne!(a.weight(0, 1), a.weight(1, 0));
        assert!(a.weight(3, 3) != 0);
    }
}
