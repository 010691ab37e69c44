//! Identical flows on a symmetric topology are not ranked by their index. The shipped dumbbell
//! (four identical NewReno flows over equal round-number links, all starting at 0) puts their
//! packets on the bottleneck port at the same picoseconds; which one is queued first is decided
//! by the canonical order's seeded scramble (`engine::order`), so the flows' fates — real phase
//! effects — fall to different flows in different seeds instead of to the first-listed one.

use tcplab_core::scenario::parse_toml;
use tcplab_core::scenario::spec::Dur;
use tcplab_core::units::SimDuration;
use tcplab_core::Run;

/// Goodput ranks (1 = highest; equal goodputs share the mean rank) of the dumbbell's flows over
/// one simulated second with `seed`.
fn ranks(seed: u64) -> Vec<f64> {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/dumbbell/dumbbell.toml")).unwrap();
    let mut sc = parse_toml(&text).unwrap();
    sc.run.duration = Some(Dur(SimDuration::from_millis(1000)));
    let mut run = Run::new(&sc, Some(seed)).unwrap();
    run.sim.run();
    let g: Vec<f64> = run.sim.summary().flows.iter().map(|f| f.goodput_bps).collect();
    g.iter().map(|x| 1.0 + g.iter().filter(|y| *y > x).count() as f64 + (g.iter().filter(|y| *y == x).count() as f64 - 1.0) / 2.0).collect()
}

#[test]
fn identical_flows_are_not_ranked_by_their_index() {
    let seeds = 40;
    let all: Vec<Vec<f64>> = (1..=seeds).map(ranks).collect();
    let n = all[0].len();
    assert_eq!(n, 4);
    assert!(all.iter().any(|r| r.iter().any(|&x| x != r[0])), "the flows' fates differ (phase effects)");
    for i in 0..n {
        let mean = all.iter().map(|r| r[i]).sum::<f64>() / seeds as f64;
        let first = all.iter().filter(|r| r[i] == 1.0).count();
        let last = all.iter().filter(|r| r[i] >= n as f64 - 0.5).count();
        eprintln!("flow {i}: mean rank {mean:.2}, first in {first}/{seeds} seeds, last in {last}/{seeds}");
        // Uniform ranks: mean 2.5, standard error over 40 seeds ≈ 0.18.
        assert!((1.9..=3.1).contains(&mean), "flow {i}: mean rank {mean:.2} over {seeds} seeds");
        assert!(first > 0 && last > 0, "flow {i}: first {first}, last {last} times");
    }
}
