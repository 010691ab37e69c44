use super::*;
use crate::tcp::cc::Registered;
use crate::units::SimTime;

const MSS: u32 = 1000;
const SEG: u64 = MSS as u64;

/// An ACK of one segment in `round` carrying an RTT sample of `rtt_us` (none when 0).
fn ack(round: u64, rtt_us: u64) -> AckSample {
    AckSample {
        now: SimTime::ZERO,
        bytes_acked: SEG,
        packets_acked: 1,
        delivered: SEG,
        mss: MSS,
        rtt: (rtt_us > 0).then(|| SimDuration::from_micros(rtt_us)),
        srtt: None,
        min_rtt: None,
        inflight_before: u64::MAX,
        cwnd_limited: true,
        after_timeout: false,
        open: true,
        round,
        timestamps: None,
        ts_tick: SimDuration::from_millis(1),
    }
}

fn segs(v: &Vegas) -> u32 {
    v.w.cwnd
}

/// One round of one ACK per segment of the window at its start, every ACK with `rtt_us`.
fn round(v: &mut Vegas, r: u64, rtt_us: u64) {
    for _ in 0..segs(v) {
        v.on_ack(&ack(r, rtt_us));
    }
}

/// In congestion avoidance at `w` segments, baseRTT 100 ms already seen.
fn avoiding(cfg: VegasConfig, w: u64) -> Vegas {
    let mut v = Vegas::new(cfg, w * SEG, 2 * SEG, MSS);
    v.on_ack(&ack(0, 100_000)); // the first ACK: a decision with one sample, Reno's
    v
}

#[test]
fn at_a_fixed_rtt_above_base_the_window_settles_where_diff_is_alpha_to_beta() {
    // baseRTT 100 ms (100001 µs as Linux keeps it), every later sample 110 ms. Linux's diff =
    // ⌊cwnd·10000/100001⌋: from below the window grows one segment per round until diff = 2
    // (21 segments), from above it shrinks until diff = 4 (50 segments: 4.99995 truncated);
    // there it holds. The paper's diff = cwnd·10000/110001, untruncated: 23 and 44 segments.
    for (diff, from_below, from_above) in [(VegasDiff::Linux, 21, 50), (VegasDiff::Paper, 23, 44)] {
        let cfg = VegasConfig { diff, ..VegasConfig::default() };
        for (start, want) in [(5u64, from_below), (90, from_above)] {
            let mut v = avoiding(cfg, start);
            let mut r = 1;
            for _ in 0..100 {
                round(&mut v, r, 110_000);
                r += 1;
            }
            assert_eq!(segs(&v), want, "{diff:?} from {start}: cwnd {}", segs(&v));
            let d = v.diff().unwrap();
            assert!((2.0..=4.0).contains(&d), "{diff:?}: diff {d}");
            // It holds: twenty more rounds leave it unchanged.
            for _ in 0..20 {
                round(&mut v, r, 110_000);
                r += 1;
            }
            assert_eq!(segs(&v), want);
            assert!(v.ssthresh() <= v.cwnd(), "in congestion avoidance");
        }
    }
}

/// A bottleneck of `bdp` segments per 100 ms base RTT: a window above it queues the excess,
/// and each queued segment adds 100/bdp ms to the RTT (µs).
fn fluid_rtt(cwnd: u32, bdp: u32) -> u64 {
    100_000 * (cwnd.max(bdp) as u64) / bdp as u64
}

#[test]
fn from_slow_start_the_queue_settles_at_alpha_to_beta_segments() {
    // A fluid bottleneck of 50 segments per 100 ms, the RTT of each round set by the window at
    // its start. Slow start doubles until diff passes gamma, drops to the window carrying the
    // measured rate + 1, and avoidance then moves the queue (cwnd − 50) into alpha..beta:
    // exactly with the paper's diff (= the queue); with Linux's (⌊queue·RTT/baseRTT⌋ in
    // alpha..beta) the queue is within alpha − 1..beta.
    for diff in [VegasDiff::Linux, VegasDiff::Paper] {
        for (alpha, beta) in [(2, 4), (1, 3), (4, 8), (3, 3)] {
            let cfg = VegasConfig { alpha, beta, gamma: 1, diff };
            let mut v = Vegas::new(cfg, 2 * SEG, u64::MAX, MSS);
            let mut exited = None;
            for r in 1..200 {
                let rtt = fluid_rtt(segs(&v), 50);
                round(&mut v, r, rtt);
                if exited.is_none() && v.ssthresh() != u64::MAX {
                    exited = Some((r, segs(&v)));
                }
            }
            let queue = segs(&v) as i64 - 50;
            let (r, w) = exited.expect("slow start ends");
            eprintln!("{diff:?} alpha {alpha} beta {beta}: slow start ended in round {r} at {w} segments; queue {queue} segments");
            // The decision lags a round (the samples are the last round's, the window has
            // doubled since): at most the window of the rate measured + 1, twice the path's.
            assert!(w <= 2 * 50 + 1, "slow start ended at {w} segments");
            match diff {
                VegasDiff::Paper => assert!((alpha as i64..=beta as i64).contains(&queue), "queue {queue}"),
                VegasDiff::Linux => assert!((alpha as i64 - 1..=beta as i64).contains(&queue), "queue {queue}"),
            }
            // Settled: no further change.
            let w = segs(&v);
            for r in 200..220 {
                let rtt = fluid_rtt(segs(&v), 50);
                round(&mut v, r, rtt);
            }
            assert_eq!(segs(&v), w);
        }
    }
}

#[test]
fn slow_start_ends_at_the_window_of_the_measured_rate_plus_one() {
    // 40 segments in slow start. The first ACK (baseRTT 100 ms) is a decision with one sample:
    // Reno's slow start; two more in the same round slow-start too (43 segments). The first
    // ACK of the next round has three samples with minRTT 200 ms: Linux's diff =
    // ⌊43·100000/100001⌋ = 42 > gamma, target = ⌊43·100001/200001⌋ = 21: cwnd 22, ssthresh 22.
    let mut v = Vegas::new(VegasConfig::default(), 40 * SEG, u64::MAX, MSS);
    v.on_ack(&ack(0, 100_000));
    assert_eq!(segs(&v), 41);
    v.on_ack(&ack(0, 200_000));
    v.on_ack(&ack(0, 200_000));
    assert_eq!(segs(&v), 43, "slow start between decisions");
    v.on_ack(&ack(1, 200_000));
    assert_eq!(v.diff(), Some((43 * 100_000 / 100_001) as f64));
    assert_eq!((segs(&v), v.ssthresh()), (22, 22 * SEG));
    // Up to gamma slow start goes on.
    let mut v = Vegas::new(VegasConfig { gamma: 42, ..VegasConfig::default() }, 40 * SEG, u64::MAX, MSS);
    for r in [0, 0, 0, 1] {
        v.on_ack(&ack(r, if r == 0 && segs(&v) == 40 { 100_000 } else { 200_000 }));
    }
    assert_eq!((v.diff(), segs(&v), v.ssthresh()), (Some(42.0), 44, u64::MAX));
}

#[test]
fn with_two_samples_or_fewer_in_a_round_it_is_reno() {
    // Linux's cntRTT ≤ 2: no Vegas decision, the round's ACK is Reno's (a full counter adds a
    // segment); RTTs far above base never cut the window.
    let mut v = avoiding(VegasConfig::default(), 10);
    for r in 1..=40 {
        v.on_ack(&ack(r, 500_000)); // one sampled ACK per round, the decision ACK
        v.on_ack(&ack(r, 500_000));
    }
    assert_eq!(v.diff(), None);
    // Reno's counter: 40 segments counted against a window of 10 → +1 per 10 → ≥ 12.
    assert!(segs(&v) >= 12, "cwnd {}", segs(&v));
    // Three samples: Vegas decides and cuts.
    for _ in 0..3 {
        v.on_ack(&ack(41, 500_000));
    }
    let before = segs(&v);
    v.on_ack(&ack(42, 500_000));
    assert!(v.diff().is_some() && segs(&v) == before - 1, "{} → {}", before, segs(&v));
}

#[test]
fn out_of_open_it_is_reno_and_back_in_it_waits_a_flight() {
    let mut v = avoiding(VegasConfig::default(), 30);
    let mut a = ack(1, 300_000);
    a.open = false;
    for _ in 0..30 {
        v.on_ack(&a);
    }
    assert_eq!(segs(&v), 31, "Reno's one segment per window, no Vegas cut despite the RTT");
    assert_eq!(v.diff(), None);
    // Open again in round 2: no decision in rounds 2 and 3 even with many samples; the first
    // in round 4.
    for _ in 0..10 {
        v.on_ack(&ack(2, 300_000));
        v.on_ack(&ack(3, 300_000));
    }
    assert_eq!((segs(&v), v.diff()), (31, None));
    v.on_ack(&ack(4, 300_000));
    assert_eq!(segs(&v), 30);
    assert!(v.diff().is_some());
}

#[test]
fn losses_halve_the_window_as_reno() {
    let mut v = avoiding(VegasConfig::default(), 31);
    let ev = CongestionEvent { now: SimTime::ZERO, inflight: 5 * SEG, mss: MSS };
    assert_eq!(v.loss_ssthresh(&ev), (15 * SEG, 15 * SEG));
    v.on_congestion(&ev);
    assert_eq!(v.ssthresh(), 15 * SEG);
    v.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None });
    assert_eq!(v.cwnd(), 15 * SEG);
    v.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 1 });
    assert_eq!((v.cwnd(), v.ssthresh()), (SEG, 7 * SEG));
    v.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 2 });
    assert_eq!((v.cwnd(), v.ssthresh()), (SEG, 7 * SEG), "repeated timeouts keep ssthresh");
    let mut v = avoiding(VegasConfig::default(), 3);
    v.on_congestion(&ev);
    assert_eq!(v.ssthresh(), 2 * SEG, "never below two segments");
}

#[test]
fn growth_stays_within_the_declared_bound() {
    // Random ACKs (sizes, samples, rounds, open or not, cwnd-limited or not) with random
    // losses and timeouts: every ACK grows the window by at most `growth_bound`, never when
    // not cwnd-limited, and every loss sets the declared ssthresh.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    let (mut grew, mut cut) = (0, 0);
    for case in 0..200 {
        let diff = if case % 2 == 0 { VegasDiff::Linux } else { VegasDiff::Paper };
        let mut v = Vegas::new(VegasConfig { diff, ..VegasConfig::default() }, (1 + rnd(20)) * SEG, [u64::MAX, 8 * SEG][rnd(2) as usize], MSS);
        let mut r = 0;
        for _ in 0..500 {
            match rnd(100) {
                0 => {
                    let ev = CongestionEvent { now: SimTime::ZERO, inflight: rnd(v.cwnd() + 1), mss: MSS };
                    let (lo, hi) = v.loss_ssthresh(&ev);
                    v.on_congestion(&ev);
                    assert!((lo..=hi).contains(&v.ssthresh()));
                    v.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None });
                }
                1 => v.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 1 }),
                _ => {
                    r += rnd(4) / 3;
                    let mut a = ack(r, [0, 100_000 + rnd(100_000)][(rnd(5) != 0) as usize]);
                    a.delivered = 1 + rnd(3 * SEG);
                    a.cwnd_limited = rnd(6) != 0;
                    a.open = rnd(10) != 0;
                    let (before, bound) = (v.cwnd(), v.growth_bound(&a));
                    v.on_ack(&a);
                    assert!(v.cwnd() <= before + bound, "grew {} past bound {bound}", v.cwnd() - before);
                    assert!(a.cwnd_limited || v.cwnd() <= before, "grew while not cwnd-limited");
                    assert!(v.cwnd() >= SEG);
                    grew += (v.cwnd() > before) as u32;
                    cut += (v.cwnd() < before) as u32;
                }
            }
        }
    }
    assert!(grew > 1000 && cut > 100, "the cases must grow and cut: {grew}, {cut}");
}

#[test]
fn parameters_are_checked() {
    let check = |alpha, beta, gamma| Vegas::check_params(&VegasParams { alpha, beta, gamma, diff: VegasDiff::Linux }).map_err(|e| e.key);
    assert_eq!(check(2, 4, 1), Ok(()));
    assert_eq!(check(3, 3, 0), Ok(()));
    assert_eq!(check(0, 4, 1), Err("alpha".to_string()));
    assert_eq!(check(5, 4, 1), Err("beta".to_string()));
    assert_eq!(VegasParams::default(), VegasParams { alpha: 2, beta: 4, gamma: 1, diff: VegasDiff::Linux });
}
