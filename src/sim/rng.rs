//! Seeded random-number streams, one per source of randomness.
//!
//! Every stochastic element (a flow's arrival process, a flow's frame sizes, each cost
//! distribution) draws from its own stream, derived from
//! (scenario seed, variant key, load-point index, replication, stream name) by SplitMix64
//! mixing; the variant key is 0 in sweeps, so variants share their streams. So a result
//! depends only on those, never on how many threads ran the sweep or in what order, and
//! changing one component's randomness does not shift another's.

use rand::SeedableRng;
use rand::rngs::Xoshiro256PlusPlus;

/// The generator used for every stream (xoshiro256++: fast, 256-bit state).
pub type StreamRng = Xoshiro256PlusPlus;

/// SplitMix64 finaliser: a bijective 64-bit mixer (Steele, Lea, Flood 2014).
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a 64-bit hash: stable across builds and platforms. Names the random streams
/// (so they are named, not numbered) and fingerprints checkpoints.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    fnv1a_more(FNV1A_START, bytes)
}

/// FNV-1a's offset basis: the hash of no bytes.
pub const FNV1A_START: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a continued from the hash `h` of what came before over `bytes`: a file hashed
/// piece by piece hashes as its whole (`fnv1a_more(fnv1a(a), b) == fnv1a(a ++ b)`).
pub fn fnv1a_more(h: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(h, |h, &b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Identifies one simulation run inside a sweep; streams are derived from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RunKey {
    /// Scenario seed (`seed` in the scenario, or `--seed`).
    pub seed: u64,
    /// Variant key: 0 in every sweep, where variants share their streams (common random
    /// numbers, see [`crate::experiment::runner`]); another value gives a run streams of its own.
    pub variant: u64,
    /// Index of the load point in the sweep.
    pub point: u64,
    /// Replication number, from 0.
    pub replication: u64,
}

impl RunKey {
    /// A run on its own: the first point and replication of a sweep without variants.
    pub fn single(seed: u64) -> RunKey {
        RunKey {
            seed,
            variant: 0,
            point: 0,
            replication: 0,
        }
    }

    /// The independent stream called `name` for this run.
    pub fn stream(&self, name: &str) -> StreamRng {
        let mut h = mix(self.seed);
        for part in [
            self.variant,
            self.point,
            self.replication,
            fnv1a(name.as_bytes()),
        ] {
            h = mix(h ^ part);
        }
        StreamRng::seed_from_u64(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let k = RunKey {
            seed: 7,
            variant: 0,
            point: 3,
            replication: 1,
        };
        let a: u64 = k.stream("flow0.arrivals").random();
        let b: u64 = k.stream("flow0.arrivals").random();
        let c: u64 = k.stream("flow0.sizes").random();
        let d: u64 = RunKey {
            replication: 2,
            ..k
        }
        .stream("flow0.arrivals")
        .random();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
    }
}
