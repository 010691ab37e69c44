use super::*;
use crate::tcp::cc::Registered;
use crate::units::SimDuration;

const MSS: u32 = 1000;
const SEG: u64 = MSS as u64;

/// An ACK of one segment at `now_us` with an RTT sample of `rtt_us` (none when 0).
fn ack(now_us: u64, rtt_us: u64) -> AckSample {
    AckSample {
        now: SimTime(SimDuration::from_micros(now_us).as_ps()),
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
        round: 0,
        timestamps: None,
        ts_tick: SimDuration::from_millis(1),
    }
}

fn loss(now_us: u64) -> CongestionEvent {
    CongestionEvent { now: SimTime(SimDuration::from_micros(now_us).as_ps()), inflight: 0, mss: MSS }
}

fn exit(now_us: u64) -> RecoveryExit {
    RecoveryExit { now: SimTime(SimDuration::from_micros(now_us).as_ps()), inflight: 0, mss: MSS, window: None }
}

/// The paper's α(Δ) before scaling: 1 up to Δ_L = 1 s, then 1 + 10(Δ − 1) + ((Δ − 1)/2)².
fn formula(delta_s: f64) -> f64 {
    if delta_s <= 1.0 {
        1.0
    } else {
        let d = delta_s - 1.0;
        1.0 + 10.0 * d + (d / 2.0) * (d / 2.0)
    }
}

#[test]
fn alpha_follows_the_time_since_the_last_congestion_event() {
    // Without RTT scaling and β = 0.5, α = 2·(1 − β)·α(Δ) = α(Δ), which Linux keeps as the
    // integer 1 + ⌊10δ + δ²/4⌋ (δ = Δ − 1 s in jiffies): within one segment below the formula,
    // exactly its floor where δ²/4 has no fraction lost to the jiffy arithmetic.
    for hz in [1000u32, 250, 100] {
        let cfg = HtcpConfig { rtt_scaling: false, bandwidth_switch: true, hz };
        for (delta, want) in [(0.0, 1), (0.5, 1), (1.0, 1), (1.05, 1), (1.1, 2), (1.5, 6), (2.0, 11), (3.0, 22), (5.0, 45), (10.0, 111), (31.0, 526)] {
            let since = (delta * hz as f64).round() as u64;
            let a = alpha(&cfg, since, 0, BETA_MIN);
            assert_eq!(a % 128, 0, "a whole number of segments");
            let got = (a / 128) as f64;
            assert_eq!(got as u64, want, "hz {hz}, Δ = {delta} s");
            let f = formula(delta);
            assert!(got <= f + 1e-9 && got > f - 1.0, "hz {hz}, Δ = {delta} s: {got} against {f}");
        }
    }
    // β scales it by 2(1 − β): at β = 102/128, 2·26/128 of α(Δ).
    let cfg = HtcpConfig { rtt_scaling: false, ..HtcpConfig::default() };
    assert_eq!(alpha(&cfg, 3000, 0, BETA_MAX), 2 * 22 * 26);
    assert_eq!(alpha(&cfg, 0, 0, BETA_MAX), 52, "below one segment per RTT right after a loss");
    // RTT scaling: α·minRTT/100 ms, the ratio clamped to [0.1, 2], at least 1 (×2(1 − β)).
    let scaled = |since, min_rtt_ms| alpha(&HtcpConfig::default(), since, min_rtt_ms, BETA_MIN) / 128;
    assert_eq!(scaled(3000, 100), 22);
    assert_eq!(scaled(3000, 50), 11);
    assert_eq!(scaled(3000, 20), 4, "22·8/40");
    assert_eq!(scaled(3000, 5), 2, "clamped at a tenth: 22·8/80");
    assert_eq!(scaled(3000, 1), 2, "clamped at a tenth");
    assert_eq!(scaled(3000, 400), 44, "clamped at twice");
    assert_eq!(scaled(0, 5), 1, "never below one");
    assert_eq!(scaled(3000, 0), 22, "no minRTT yet: unscaled");
}

#[test]
fn beta_is_the_rtt_ratio_within_its_clamps() {
    // minRTT/maxRTT ×128, within [64, 102] (0.5..0.8), once modeswitch is on and minRTT > 10 ms.
    assert_eq!(beta(1000, true, 60, 100), 76);
    assert_eq!(beta(1000, true, 75, 100), 96);
    assert_eq!(beta(1000, true, 90, 100), BETA_MAX, "0.9 clamped to 0.8");
    assert_eq!(beta(1000, true, 100, 100), BETA_MAX);
    assert_eq!(beta(1000, true, 30, 100), BETA_MIN, "0.3 clamped to 0.5");
    assert_eq!(beta(1000, false, 60, 100), BETA_MIN, "no congestion event yet");
    assert_eq!(beta(1000, true, 10, 12), BETA_MIN, "minRTT of 10 ms or less: 0.5");
    assert_eq!(beta(1000, true, 11, 12), BETA_MAX);
    assert_eq!(beta(100, true, 1, 3), BETA_MIN, "at HZ 100, 10 ms is one jiffy");
    assert_eq!(beta(100, true, 6, 10), 76);
    assert_eq!(beta(1000, true, 60, 0), BETA_MIN, "no maxRTT");
}

#[test]
fn loss_keeps_beta_of_the_window_with_beta_from_the_rtts() {
    // minRTT 100 ms, maxRTT raised in 10 ms steps to 160 ms (a step above 20 ms is ignored).
    let mut h = Htcp::new(HtcpConfig::default(), 100 * SEG, 2 * SEG, MSS);
    let mut t = 0;
    for rtt in [100, 110, 120, 190, 130, 140, 150, 160, 300] {
        t += 1_000;
        h.on_ack(&ack(t, rtt * 1000));
    }
    assert_eq!((h.min_rtt, h.max_rtt), (100, 160));
    // The first event: β = 0.5 (modeswitch was off), ssthresh 50; maxRTT fades to 157.
    let w = h.w.cwnd as u64;
    assert_eq!(h.loss_ssthresh(&loss(t)), (w / 2 * SEG, w / 2 * SEG));
    h.on_congestion(&loss(t));
    assert_eq!((h.beta, h.ssthresh(), h.max_rtt), (BETA_MIN, w / 2 * SEG, 157));
    h.on_recovery_exit(&exit(t + 100_000));
    assert_eq!(h.cwnd(), w / 2 * SEG);
    // The second: β = 100/157 → 81/128; ssthresh ⌊50·81/128⌋ = 31.
    let (lo, hi) = h.loss_ssthresh(&loss(t + 200_000));
    h.on_congestion(&loss(t + 200_000));
    assert_eq!((h.beta, h.ssthresh()), ((100 << 7) / 157, 31 * SEG));
    assert_eq!((lo, hi), (31 * SEG, 31 * SEG));
    // The bandwidth switch: the epoch's largest throughput 30 % above the last one's → 0.5;
    // 10 % above → the ratio again.
    let mut g = h.clone();
    (g.old_max_b, g.max_b) = (1000, 1300);
    g.on_congestion(&loss(t + 300_000));
    assert_eq!((g.beta, g.modeswitch), (BETA_MIN, false));
    let mut g = h.clone();
    (g.old_max_b, g.max_b) = (1000, 1100);
    g.on_congestion(&loss(t + 300_000));
    assert!(g.beta > BETA_MIN && g.modeswitch);
    // Off, the switch never forces 0.5.
    let mut g = h.clone();
    g.cfg.bandwidth_switch = false;
    (g.old_max_b, g.max_b) = (1000, 5000);
    g.on_congestion(&loss(t + 300_000));
    assert!(g.beta > BETA_MIN);
    // A timeout: the same rule at the first, kept by the next; one segment.
    let mut g = h.clone();
    let want = g.loss_ssthresh(&loss(0)).0;
    g.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 1 });
    assert_eq!((g.cwnd(), g.ssthresh()), (SEG, want));
    g.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 2 });
    assert_eq!((g.cwnd(), g.ssthresh()), (SEG, want));
    // Never below two segments.
    let mut g = Htcp::new(HtcpConfig::default(), 3 * SEG, 2 * SEG, MSS);
    g.on_congestion(&loss(0));
    assert_eq!(g.ssthresh(), 2 * SEG);
}

/// One RTT of `rtt_ms` from `t` µs: an ACK per segment of the window at its start, spread
/// evenly; returns the time at its end.
fn rtt_of_acks(h: &mut Htcp, t: u64, rtt_ms: u64) -> u64 {
    let n = h.w.cwnd as u64;
    for i in 0..n {
        h.on_ack(&ack(t + i * rtt_ms * 1000 / n, rtt_ms * 1000));
    }
    t + rtt_ms * 1000
}

#[test]
fn avoidance_adds_alpha_segments_per_rtt() {
    // A 100 ms path (RTT scaling ×1), β = 0.5: after the event ends at 1 s, one segment per RTT
    // for a second (α = 1), then α(Δ) per RTT: ≈ 22 in the RTT after Δ = 3 s.
    let mut h = Htcp::new(HtcpConfig::default(), 100 * SEG, 2 * SEG, MSS);
    let mut t = rtt_of_acks(&mut h, 0, 100);
    h.on_congestion(&loss(t));
    h.on_recovery_exit(&exit(t));
    let start = (t, h.w.cwnd);
    for _ in 0..9 {
        t = rtt_of_acks(&mut h, t, 100);
    }
    let grew = h.w.cwnd - start.1;
    assert!((8..=10).contains(&grew), "{grew} segments in the first 9 RTTs");
    while t < start.0 + 3_000_000 {
        t = rtt_of_acks(&mut h, t, 100);
    }
    let before = h.w.cwnd;
    t = rtt_of_acks(&mut h, t, 100);
    let grew = h.w.cwnd - before;
    eprintln!("Δ = {:.1} s: +{grew} segments in one RTT (α(2 s past Δ_L) = 22)", (t - start.0) as f64 / 1e6);
    assert!((17..=23).contains(&grew), "{grew}");
    // Not cwnd-limited: nothing.
    let mut a = ack(t, 100_000);
    a.cwnd_limited = false;
    let w = h.clone();
    h.on_ack(&a);
    assert_eq!((h.w.cwnd, h.w.cwnd_cnt), (w.w.cwnd, w.w.cwnd_cnt));
}

#[test]
fn growth_and_loss_bounds_are_exact() {
    // Over random ACKs, events and times: every ACK grows by exactly `growth_bound` when
    // cwnd-limited, and every loss sets `loss_ssthresh`.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    let mut grew = 0;
    for case in 0..200 {
        let cfg = HtcpConfig { rtt_scaling: case % 2 == 0, bandwidth_switch: case % 3 != 0, hz: [1000, 250, 100][case % 3] };
        let mut h = Htcp::new(cfg, (1 + rnd(200)) * SEG, [u64::MAX, 20 * SEG][rnd(2) as usize], MSS);
        let mut t = 0;
        for _ in 0..2000 {
            t += rnd(20_000);
            match rnd(200) {
                0 => {
                    let (lo, hi) = h.loss_ssthresh(&loss(t));
                    h.on_congestion(&loss(t));
                    assert_eq!((h.ssthresh(), h.ssthresh()), (lo, hi));
                    t += rnd(300_000);
                    h.on_recovery_exit(&exit(t));
                }
                1 => {
                    let (lo, _) = h.loss_ssthresh(&loss(t));
                    h.on_timeout(&TimeoutEvent { now: SimTime(SimDuration::from_micros(t).as_ps()), inflight: 0, mss: MSS, backoffs: 1 });
                    assert_eq!(h.ssthresh(), lo);
                }
                _ => {
                    let mut a = ack(t, [0, 5_000 + rnd(300_000)][(rnd(4) != 0) as usize]);
                    a.delivered = 1 + rnd(3 * SEG);
                    a.packets_acked = a.delivered_segments();
                    a.open = rnd(10) != 0;
                    a.after_timeout = !a.open && rnd(2) == 0;
                    let (before, bound) = (h.cwnd(), h.growth_bound(&a));
                    h.on_ack(&a);
                    assert_eq!(h.cwnd() - before, bound, "case {case}");
                    grew += (bound > 0) as u32;
                }
            }
        }
    }
    assert!(grew > 10_000, "{grew}");
}

#[test]
fn the_probe_shows_alpha_beta_and_the_time_since_congestion() {
    let mut h = Htcp::new(HtcpConfig::default(), 10 * SEG, 2 * SEG, MSS);
    h.on_ack(&ack(0, 100_000));
    h.on_congestion(&loss(500_000));
    h.on_recovery_exit(&exit(600_000));
    h.on_ack(&ack(2_100_000, 100_000));
    let mut out = [0.0; crate::tcp::cc::PROBE_VALUES];
    h.probe(&mut out);
    assert_eq!(h.probe_names(), &PROBE_NAMES);
    assert_eq!(&out[..5], &[1.0, 0.5, 1.5, 0.1, 0.1]);
    assert!(Htcp::check_params(&HtcpParams::default()).is_ok());
}
