//! Property-test runners that are deterministic by default (as `make test` makes the
//! `proptest!` tests in the library, with the same variable): CI runs the same cases every time
//! (a failure reproduces from the commit alone), and `PROPTEST_RNG_SEED=N` (any u64) explores
//! other cases; the seed in use is printed so a failure found that way can be replayed.

use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// A runner for `cases` cases, no shrinking persistence files, seeded from
/// `PROPTEST_RNG_SEED` (default 0).
pub fn runner(cases: u32) -> TestRunner {
    let seed: u64 = match std::env::var("PROPTEST_RNG_SEED") {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("PROPTEST_RNG_SEED must be an unsigned 64-bit integer, not {v:?}")),
        Err(_) => 0,
    };
    eprintln!("proptest seed {seed} (PROPTEST_RNG_SEED)");
    // ChaCha takes a 32-byte seed: the u64, little-endian, then zeros.
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    TestRunner::new_with_rng(Config { cases, failure_persistence: None, ..Config::default() }, TestRng::from_seed(RngAlgorithm::ChaCha, &bytes))
}
