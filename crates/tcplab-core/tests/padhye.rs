//! Model check: one NewReno flow under Bernoulli loss against the Padhye et al. (SIGCOMM 1998)
//! full model (algorithms.md §7), within ±25 %. Run with `--nocapture` to see the table that
//! docs/validation.md records.

mod common;

use tcplab_core::Run;

/// Padhye's full model: throughput in segments per second.
fn padhye(p: f64, rtt: f64, t0: f64, b: f64, wm: f64) -> f64 {
    let ewu = (2.0 + b) / (3.0 * b) + (8.0 * (1.0 - p) / (3.0 * b * p) + ((2.0 + b) / (3.0 * b)).powi(2)).sqrt();
    let f = 1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6);
    let q = |w: f64| -> f64 {
        let a = (1.0 - (1.0 - p).powi(3)) * (1.0 + (1.0 - p).powi(3) * (1.0 - (1.0 - p).powf(w - 3.0)));
        (a / (1.0 - (1.0 - p).powf(w))).min(1.0)
    };
    if ewu < wm {
        let qq = q(ewu);
        ((1.0 - p) / p + ewu + qq / (1.0 - p)) / (rtt * (b * ewu / 2.0 + 1.0) + qq * t0 * f / (1.0 - p))
    } else {
        let qq = q(wm);
        ((1.0 - p) / p + wm + qq / (1.0 - p)) / (rtt * (b * wm / 8.0 + (1.0 - p) / (p * wm) + 2.0) + qq * t0 * f / (1.0 - p))
    }
}

fn scenario(p: f64, duration_s: u32, delack: u32) -> String {
    let tcp = format!("cc = \"newreno\"\nsack = false\nmss = 1460\ndelack_segments = {delack}\nrto_min = \"200ms\"\nsndbuf = \"64MB\"\nrcvbuf = \"64MB\"");
    common::lossy_path("padhye", &tcp, "50ms", p, "1Gbps", 10_000, duration_s)
}

#[test]
fn newreno_matches_padhye_within_25_percent() {
    let rtt = 0.100; // two 50 ms emulator passes; queueing at 1 Gb/s is negligible here
    let t0 = 0.2 + rtt; // Padhye's T0: the first timeout ≈ SRTT + max(4·RTTVAR, …) floored at 200 ms
    println!("| p | b | simulated (seg/s) | Padhye (seg/s) | sim/model | timeouts | fast rtx |");
    println!("|---|---|---|---|---|---|---|");
    let mut worst: f64 = 0.0;
    for (p, dur) in [(1e-3, 2000u32), (3e-3, 800), (1e-2, 400)] {
        for b in [1u32, 2] {
            let mut seg_rate = 0.0;
            let (mut to, mut fr) = (0, 0);
            let seeds = 3;
            for seed in 0..seeds {
                let mut r = Run::from_toml(&scenario(p, dur, b), Some(seed)).expect("valid");
                r.sim.run();
                let s = r.sim.summary();
                let f = &s.flows[0];
                seg_rate += f.bytes_delivered as f64 / 1460.0 / s.sim_time_s / seeds as f64;
                to += f.timeouts;
                fr += f.fast_retransmits;
            }
            let model = padhye(p, rtt, t0, b as f64, f64::INFINITY);
            let ratio = seg_rate / model;
            worst = worst.max((ratio - 1.0).abs());
            println!("| {p} | {b} | {seg_rate:.1} | {model:.1} | {ratio:.3} | {to} | {fr} |");
            assert!((0.75..=1.25).contains(&ratio), "p={p} b={b}: simulated {seg_rate:.1} vs model {model:.1} seg/s");
        }
    }
    println!("worst deviation: {:.1} %", worst * 100.0);
}
