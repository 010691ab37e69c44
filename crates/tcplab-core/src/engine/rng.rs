//! Seeded randomness. One master seed; every component derives its own stream from the seed
//! and a stable name (e.g. `"emulators/emu/loss"`), so adding a component never changes the
//! draws of another. The generator is xoshiro256** seeded through SplitMix64 — small, fast and
//! identical on every platform.

/// Derives named random streams from one master seed.
#[derive(Clone, Copy, Debug)]
pub struct SeedTree {
    master: u64,
}

impl SeedTree {
    /// A tree rooted at `master`.
    pub fn new(master: u64) -> Self {
        SeedTree { master }
    }

    /// The stream for a component name.
    pub fn stream(&self, name: &str) -> Rng {
        Rng::from_seed(self.master ^ fnv1a64(name.as_bytes()).rotate_left(17))
    }
}

/// FNV-1a, 64-bit: a stable hash of bytes (used for stream names and scenario hashes).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= *b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// A xoshiro256** generator.
#[derive(Clone, Debug)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// Seed via SplitMix64 (never produces the all-zero state).
    pub fn from_seed(seed: u64) -> Self {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        Rng { s: [next(), next(), next(), next()] }
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// True with probability `p`.
    pub fn bernoulli(&mut self, p: f64) -> bool {
        p > 0.0 && self.next_f64() < p
    }

    /// Uniform integer in [0, n) (n > 0), by Lemire's multiply-shift (bias < 2^-64·n).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_stable_and_independent() {
        let t = SeedTree::new(7);
        let a1: Vec<u64> = (0..4)
            .map({
                let mut r = t.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let a2: Vec<u64> = (0..4)
            .map({
                let mut r = t.stream("a");
                move |_| r.next_u64()
            })
            .collect();
        let b: Vec<u64> = (0..4)
            .map({
                let mut r = t.stream("b");
                move |_| r.next_u64()
            })
            .collect();
        assert_eq!(a1, a2);
        assert_ne!(a1, b);
        let other_seed: Vec<u64> = (0..4)
            .map({
                let mut r = SeedTree::new(8).stream("a");
                move |_| r.next_u64()
            })
            .collect();
        assert_ne!(a1, other_seed);
    }

    #[test]
    fn bernoulli_rate_is_right() {
        let mut r = Rng::from_seed(1);
        let n = 200_000;
        let hits = (0..n).filter(|_| r.bernoulli(0.01)).count();
        let p = hits as f64 / n as f64;
        assert!((p - 0.01).abs() < 0.001, "p = {p}");
        assert!(!r.bernoulli(0.0));
    }
}
