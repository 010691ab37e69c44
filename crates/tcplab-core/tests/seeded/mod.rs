//! Property-test runners that are deterministic by default (as `make test` makes the
//! `proptest!` tests in the library, with the same variable): CI runs the same cases every time
//! (a failure reproduces from the commit alone), and `PROPTEST_RNG_SEED=N` (any u64, read by
//! proptest itself) explores other cases.

use proptest::test_runner::{Config, RngSeed, TestRunner};

/// A runner for `cases` cases, no persistence files, seeded from `PROPTEST_RNG_SEED`
/// (default 0 instead of proptest's random seed).
pub fn runner(cases: u32) -> TestRunner {
    let mut config = Config { cases, failure_persistence: None, ..Config::default() };
    if config.rng_seed == RngSeed::Random {
        config.rng_seed = RngSeed::Fixed(0);
    }
    eprintln!("proptest seed {:?} (PROPTEST_RNG_SEED)", config.rng_seed);
    TestRunner::new(config)
}
