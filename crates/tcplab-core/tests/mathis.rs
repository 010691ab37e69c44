//! Model check: one NewReno flow (SACK on, RFC 6675 recovery) under Bernoulli loss against the
//! Mathis, Semke, Mahdavi, Ott (CCR 1997) square-root law, throughput = (MSS/RTT)·C/√p with
//! C = √(3/(2b)) (periodic loss, b segments per ACK), within ±15 %. Run with `--nocapture` to
//! see the table that docs/validation.md records.
//!
//! Mathis's C is derived for *periodic* loss; for independent (Bernoulli) loss the stationary
//! mean window of ideal congestion avoidance is ≈ 1.31/√p (Ott, Kemperman, Mathis 1996; the
//! "random loss" row of Mathis et al.'s table, 0.93 with delayed ACKs), 7 % above √(3/2). The
//! table prints both ratios; the assertion is on Mathis's √(3/(2b)).
//!
//! Tolerance: Mathis is a loose model and ±30 % is the usual band for it, but here its
//! assumptions nearly hold (SACK repairs most multi-loss windows without a timeout; the RTO of
//! SRTT + 200 ms keeps the few timeouts cheap), the expected gap is +7 % (random loss) minus a
//! few % (recovery, timeouts at p = 1e-2), and each row averages about 600 losses (sampling
//! spread ≈ 2 %). ±15 % leaves ≥ 10 % (5σ) above every row and still fails for a 1.5× additive
//! increase (measured 1.27) or a decrease to 0.6 instead of 0.5 of the window (1.18).
//!
//! RTO: the Linux estimator (SRTT + max(4·RTTVAR, 200 ms)). With the RFC 6298 estimator and a
//! 200 ms floor the RTO collapses to ≈ RTT at RTT = 200 ms (constant RTT: RTTVAR → 0), every
//! fast recovery ends in a spurious timeout, and the row is meaningless (RFC 6298 asks for a
//! 1 s floor).

mod common;

/// Payload bytes per segment (MSS 1460, no timestamps).
const MSS: f64 = 1460.0;

/// Mathis et al.: segments per second.
fn mathis(p: f64, rtt: f64, b: f64) -> f64 {
    (1.5 / b).sqrt() / p.sqrt() / rtt
}

fn scenario(p: f64, one_way_ms: u32, duration_s: u32, delack: u32) -> String {
    let tcp =
        format!("cc = \"newreno\"\nsack = true\nmss = 1460\ndelack_segments = {delack}\nrtt_estimator = \"linux\"\nrto_min = \"200ms\"\nsndbuf = \"64MB\"\nrcvbuf = \"64MB\"");
    common::lossy_path("mathis", &tcp, &format!("{one_way_ms}ms"), p, "1Gbps", 10_000, duration_s)
}

/// One row: mean over seeds of the steady-state rate (segments/s after a warm-up of a tenth
/// of the run), plus counters over the whole runs.
struct Row {
    rate: f64,
    timeouts: u64,
    fast_rtx: u64,
    retransmits: u64,
}

fn simulate(p: f64, rtt: f64, b: u32, duration_s: u32, seeds: u64) -> Row {
    let one_way_ms = (rtt * 500.0).round() as u32;
    let st = common::steady_state(&scenario(p, one_way_ms, duration_s, b), duration_s, seeds);
    Row { rate: st.bytes_per_s / MSS, timeouts: st.timeouts, fast_rtx: st.fast_rtx, retransmits: st.retransmits }
}

#[test]
fn newreno_sack_matches_mathis_within_15_percent() {
    println!("| RTT (s) | p | b | run (s) × seeds | simulated (seg/s) | Mathis (seg/s) | sim/Mathis | sim/random-loss C | timeouts | fast rtx | rtx per reduction |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    let seeds = 2u64;
    // Each row sees about `losses` lost packets in total: the run length follows from the model.
    let losses = 600.0;
    for rtt in [0.05, 0.2] {
        for p in [1e-4, 3e-4, 1e-3, 3e-3, 1e-2] {
            for b in [1u32, 2] {
                let model = mathis(p, rtt, b as f64);
                let duration_s = (losses / seeds as f64 / (p * model)).ceil().max(60.0) as u32;
                let row = simulate(p, rtt, b, duration_s, seeds);
                let ratio = row.rate / model;
                let random_c = 1.31 / (b as f64).sqrt() / p.sqrt() / rtt;
                worst = worst.max((ratio - 1.0).abs());
                let per_reduction = row.retransmits as f64 / (row.fast_rtx + row.timeouts).max(1) as f64;
                println!(
                    "| {rtt} | {p} | {b} | {duration_s} × {seeds} | {:.1} | {model:.1} | {ratio:.3} | {:.3} | {} | {} | {per_reduction:.2} |",
                    row.rate,
                    row.rate / random_c,
                    row.timeouts,
                    row.fast_rtx
                );
                assert!((0.85..=1.15).contains(&ratio), "RTT={rtt} p={p} b={b}: simulated {:.1} vs Mathis {model:.1} seg/s", row.rate);
            }
        }
    }
    println!("worst deviation: {:.1} %", worst * 100.0);
}
