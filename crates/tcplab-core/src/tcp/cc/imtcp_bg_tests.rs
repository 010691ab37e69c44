//! ImTCP-bg's rules B1–B5 on the controller alone (sans-I/O: ACK samples and inputs fed by
//! hand); the connection-level channel is tested in `tcp/conn/tests_input.rs`.

use super::super::{InRange, Registered};
use super::*;
use crate::units::BitRate;

const MSS: u32 = 1000;
const M: u64 = MSS as u64;

fn ms(v: u64) -> SimDuration {
    SimDuration::from_millis(v)
}

/// An ACK of one segment in round `round` with RTT sample `rtt` and RTT_min `min` (ms).
fn ack(rtt: u64, min: u64, round: u64, limited: bool) -> AckSample {
    AckSample {
        now: SimTime::ZERO,
        bytes_acked: M,
        packets_acked: 1,
        delivered: M,
        mss: MSS,
        rtt: Some(ms(rtt)),
        srtt: Some(ms(rtt)),
        min_rtt: Some(ms(min)),
        inflight_before: 0,
        cwnd_limited: limited,
        after_timeout: false,
        open: true,
        round,
        timestamps: None,
        ts_tick: ms(1),
    }
}

fn result(mbps: u64) -> CcInput {
    CcInput::AvailableBandwidth { rate: BitRate(mbps * 1_000_000), span: ms(120), range: InRange::Within }
}

fn bg(cwnd_segs: u64, ssthresh_segs: u64) -> ImtcpBg {
    ImtcpBg::new(ImtcpBgConfig::default(), cwnd_segs * M, ssthresh_segs * M, MSS)
}

#[test]
fn smoothing_is_gamma_eighth_first_result_sets_it() {
    let mut c = bg(10, 100);
    assert_eq!(c.avail(), None);
    c.on_input(SimTime::ZERO, &result(80));
    assert_eq!(c.avail(), Some(80e6), "the first result sets Ā");
    c.on_input(SimTime::ZERO, &result(16));
    assert_eq!(c.avail(), Some(72e6), "7/8·80 + 1/8·16");
    c.on_input(SimTime::ZERO, &result(72));
    assert_eq!(c.avail(), Some(72e6));
    // After a step the error falls by 7/8 per result: 50 % left after ⌈5.2⌉ = 6 results.
    for _ in 0..6 {
        c.on_input(SimTime::ZERO, &result(8));
    }
    let left = (c.avail().unwrap() - 8e6) / 64e6;
    assert!((left - 0.875f64.powi(6)).abs() < 1e-12, "{left}");
    assert_eq!(c.results(), 9);
    // γ = 1/2: halfway per result.
    let mut c = ImtcpBg::new(ImtcpBgConfig { gamma: 0.5, ..ImtcpBgConfig::default() }, 10 * M, 100 * M, MSS);
    c.on_input(SimTime::ZERO, &result(10));
    c.on_input(SimTime::ZERO, &result(20));
    assert_eq!(c.avail(), Some(15e6));
}

#[test]
fn no_cap_before_first_result() {
    // Slow start from 2 segments, RTT 30 ms: without a result the window grows as Reno's,
    // however far past what any estimate would allow.
    let mut c = ImtcpBg::new(ImtcpBgConfig::default(), 2 * M, u64::MAX, MSS);
    let mut r = Reno::new("newreno", RenoConfig::default(), 2 * M, u64::MAX);
    for i in 0..500 {
        let a = ack(30, 30, i / 10, true);
        c.on_ack(&a);
        r.on_ack(&a);
    }
    assert_eq!(c.cwnd(), r.cwnd());
    assert_eq!(c.cwnd(), 502 * M);
    assert_eq!(c.cap_bytes(), None);
    // The first result caps at once: 8 Mb/s · 30 ms = 30 kB = 30 segments.
    c.on_input(SimTime::ZERO, &result(8));
    assert_eq!((c.cap_bytes(), c.cwnd()), (Some(30 * M), 30 * M));
    // A result before any RTT sample sets Ā but no cap (RTT_min unknown).
    let mut c = bg(50, 100);
    c.on_input(SimTime::ZERO, &result(8));
    assert_eq!((c.cap_bytes(), c.cwnd()), (None, 50 * M));
}

#[test]
fn cwnd_never_exceeds_cap_on_any_ack() {
    // Random results, RTTs (within δ, so the RTT rule stays out of it), ACK sizes, losses:
    // after every ACK and every result the window is at most the cap (whole segments, at least
    // cap_floor), and the cap is Ā·RTT_min rounded down.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    let mut capped = 0;
    for _ in 0..200 {
        let mut c = bg(1 + rnd(40), 2 + rnd(200));
        let min = 10 + rnd(50);
        c.on_ack(&ack(min, min, 0, true));
        c.on_input(SimTime::ZERO, &result(1 + rnd(100)));
        for i in 0..300 {
            match rnd(50) {
                0 => c.on_input(SimTime::ZERO, &result(1 + rnd(100))),
                1 => {
                    let ev = CongestionEvent { now: SimTime::ZERO, inflight: c.cwnd(), mss: MSS };
                    c.on_congestion(&ev);
                    c.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None });
                }
                _ => {
                    let mut a = ack(min + rnd(min * 4 / 10), min, i / 8, rnd(6) != 0);
                    a.delivered = 1 + rnd(3 * M);
                    c.on_ack(&a);
                }
            }
            let cap = c.cap_bytes().expect("a result and an RTT sample");
            let bytes = (c.avail().unwrap() * (min * 1_000_000_000) as f64 / 8e12 / M as f64).floor() as u64 * M;
            assert_eq!(cap, bytes.max(2 * M));
            assert!(c.cwnd() <= cap, "cwnd {} above the cap {cap}", c.cwnd());
            capped += (c.cwnd() == cap) as u32;
        }
    }
    assert!(capped > 500, "the cap must bind: {capped}");
    // With the cap off (the ablation), the window grows past it.
    let mut c = ImtcpBg::new(ImtcpBgConfig { cap: false, ..ImtcpBgConfig::default() }, 40 * M, 100 * M, MSS);
    c.on_ack(&ack(30, 30, 0, true));
    c.on_input(SimTime::ZERO, &result(8));
    assert_eq!((c.cap_bytes(), c.cwnd()), (Some(30 * M), 41 * M));
}

#[test]
fn rtt_ratio_above_delta_cuts_by_rtt_min_over_rtt_cur() {
    // RTT_min 30 ms, δ = 1.4: a sample of 42 ms (ratio 1.4) does not cut, 43 ms cuts by 30/43.
    let mut c = bg(100, 50);
    c.on_ack(&ack(30, 30, 0, false));
    c.on_ack(&ack(42, 30, 1, false));
    assert_eq!((c.cwnd(), c.cuts()), (100 * M, 0), "ratio 1.4 is not above δ");
    c.on_ack(&ack(43, 30, 2, false));
    assert_eq!((c.cwnd(), c.cuts()), (100 * M * 30 / 43, 1));
    assert_eq!(c.ssthresh(), 50 * M, "ssthresh untouched");
    // Applied after Reno's growth (avoidance at 100 segments: +10 bytes) on the same ACK.
    let mut c = bg(100, 50);
    c.on_ack(&ack(60, 30, 5, true));
    assert_eq!(c.cwnd(), (100 * M + 10) / 2);
    // Never below cap_floor segments, and never raising a window already below it.
    let mut c = bg(3, 2);
    c.on_ack(&ack(300, 30, 0, false));
    assert_eq!(c.cwnd(), 2 * M);
    let mut c = bg(1, 2);
    c.on_ack(&ack(300, 30, 0, false));
    assert_eq!(c.cwnd(), M);
    // δ = 1.3 (the FreeBSD code's default) cuts at 40 ms; the rule off never cuts.
    let mut c = ImtcpBg::new(ImtcpBgConfig { delta: 1.3, ..ImtcpBgConfig::default() }, 100 * M, 50 * M, MSS);
    c.on_ack(&ack(40, 30, 0, false));
    assert_eq!(c.cwnd(), 75 * M);
    let mut c = ImtcpBg::new(ImtcpBgConfig { rtt_rule: false, ..ImtcpBgConfig::default() }, 100 * M, 50 * M, MSS);
    c.on_ack(&ack(90, 30, 0, false));
    assert_eq!((c.cwnd(), c.cuts()), (100 * M, 0));
    // No RTT sample on the ACK: no cut.
    let mut c = bg(100, 50);
    let mut a = ack(90, 30, 0, false);
    a.rtt = None;
    c.on_ack(&a);
    assert_eq!(c.cwnd(), 100 * M);
}

#[test]
fn rtt_cut_at_most_once_per_rtt() {
    // Three ACKs of one round all 2× RTT_min: one cut by half; the next round cuts again.
    let mut c = bg(128, 50);
    for _ in 0..3 {
        c.on_ack(&ack(60, 30, 7, false));
    }
    assert_eq!((c.cwnd(), c.cuts()), (64 * M, 1));
    c.on_ack(&ack(60, 30, 8, false));
    assert_eq!((c.cwnd(), c.cuts()), (32 * M, 2));
    // Per ACK: every one of them cuts.
    let mut c = ImtcpBg::new(ImtcpBgConfig { rtt_cut: RttCut::PerAck, ..ImtcpBgConfig::default() }, 128 * M, 50 * M, MSS);
    for _ in 0..3 {
        c.on_ack(&ack(60, 30, 7, false));
    }
    assert_eq!((c.cwnd(), c.cuts()), (16 * M, 3));
}

#[test]
fn otherwise_reno() {
    // With RTT samples within δ and the estimate far above the window (or none), every ACK,
    // loss, recovery and timeout leaves the same window and ssthresh as NewReno's (B4).
    for with_result in [false, true] {
        let mut c = ImtcpBg::new(ImtcpBgConfig::default(), 2 * M, u64::MAX, MSS);
        let mut r = Reno::new("newreno", RenoConfig::default(), 2 * M, u64::MAX);
        if with_result {
            c.on_ack(&ack(30, 30, 0, true));
            r.on_ack(&ack(30, 30, 0, true));
            c.on_input(SimTime::ZERO, &result(100_000)); // 375 MB of cap
        }
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        for i in 0..20_000u64 {
            match rnd(100) {
                0 => {
                    let ev = CongestionEvent { now: SimTime::ZERO, inflight: 2 * M + rnd(c.cwnd()), mss: MSS };
                    assert_eq!(c.loss_ssthresh(&ev), r.loss_ssthresh(&ev));
                    c.on_congestion(&ev);
                    r.on_congestion(&ev);
                    let exit = RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None };
                    c.on_recovery_exit(&exit);
                    r.on_recovery_exit(&exit);
                }
                1 => {
                    let ev = TimeoutEvent { now: SimTime::ZERO, inflight: rnd(c.cwnd()), mss: MSS, backoffs: 1 + rnd(2) as u32 };
                    c.on_timeout(&ev);
                    r.on_timeout(&ev);
                }
                _ => {
                    let mut a = ack(30 + rnd(12), 30, i / 16, rnd(8) != 0);
                    a.delivered = 1 + rnd(3 * M);
                    assert_eq!(c.growth_bound(&a), r.growth_bound(&a));
                    c.on_ack(&a);
                    r.on_ack(&a);
                }
            }
            assert_eq!((c.cwnd(), c.ssthresh()), (r.cwnd(), r.ssthresh()), "step {i}");
        }
        assert_eq!(c.cuts(), 0);
    }
}

#[test]
fn growth_never_exceeds_the_declared_bound() {
    // The checker holds every ACK to `growth_bound` (asked before the ACK), with results and
    // RTT cuts interleaved.
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut rnd = |n: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x % n.max(1)
    };
    for _ in 0..500 {
        let cfg = ImtcpBgConfig { reno: RenoConfig { abc_limit: rnd(3) as u32, ..RenoConfig::default() }, ..ImtcpBgConfig::default() };
        let mut c = ImtcpBg::new(cfg, M + rnd(80 * M), 2 * M + rnd(60 * M), MSS);
        for i in 0..100 {
            if rnd(10) == 0 {
                let before = c.cwnd();
                c.on_input(SimTime::ZERO, &result(1 + rnd(50)));
                assert!(c.cwnd() <= before, "an input grew the window");
            }
            let mut a = ack(20 + rnd(40), 20, i / 4, rnd(4) != 0);
            a.delivered = 1 + rnd(3 * M);
            let (before, bound) = (c.cwnd(), c.growth_bound(&a));
            c.on_ack(&a);
            assert!(c.cwnd() <= before + bound, "{before} + {bound} < {}", c.cwnd());
            assert!(c.cwnd() >= M);
        }
    }
}

#[test]
fn parameters_are_checked_by_name() {
    let check = |gamma: f64, delta: f64, cap_floor: u32| ImtcpBg::check_params(&ImtcpBgParams { gamma, delta, cap_floor, ..ImtcpBgParams::default() }).map_err(|e| e.key);
    assert_eq!(check(0.125, 1.4, 2), Ok(()));
    assert_eq!(check(1.0, 1.0001, 1), Ok(()));
    for g in [0.0, -0.1, 1.01, f64::NAN, f64::INFINITY] {
        assert_eq!(check(g, 1.4, 2), Err("gamma".to_string()), "{g}");
    }
    for d in [1.0, 0.9, 0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert_eq!(check(0.125, d, 2), Err("delta".to_string()), "{d}");
    }
    assert_eq!(check(0.125, 1.4, 0), Err("cap_floor".to_string()));
    let p = ImtcpBgParams::default();
    assert_eq!((p.gamma, p.delta, p.cap_floor, p.rtt_cut, p.cap, p.rtt_rule), (0.125, 1.4, 2, RttCut::OncePerRtt, true, true));
    let ctx = super::super::CcContext { abc_limit: 2, hz: 100, ecn: false, timestamps: true };
    assert_eq!(ImtcpBg::config(&p, &ctx), ImtcpBgConfig { reno: RenoConfig { abc_limit: 2, ..RenoConfig::default() }, ..ImtcpBgConfig::default() });
    assert_eq!(ImtcpBg::INPUTS, &[CcInputKind::AvailableBandwidth, CcInputKind::StageRtt]);
    assert_eq!(p.rtt_source, RttSource::Tcp, "the connection's samples by default (the shipped reading)");
    let p = ImtcpBgParams { rtt_source: RttSource::Stage, ..p };
    assert_eq!(ImtcpBg::config(&p, &ctx).rtt_source, RttSource::Stage);
}

#[test]
fn rtt_source_stage_takes_the_stage_sample_of_the_same_ack_only() {
    let stage = ImtcpBgConfig { rtt_source: RttSource::Stage, ..ImtcpBgConfig::default() };
    let t = |ms_: u64| SimTime::ZERO + ms(ms_);
    let at = |now: SimTime, rtt: u64, min: u64, round: u64| AckSample { now, ..ack(rtt, min, round, true) };
    // "tcp" (default): the connection's 60 ms against its 30 ms minimum cuts cwnd by half; a
    // stage sample is ignored.
    let mut c = bg(40, 40);
    c.on_input(t(1), &CcInput::StageRtt { rtt: ms(30) });
    c.on_ack(&at(t(1), 60, 30, 1));
    assert_eq!((c.cuts(), c.min_rtt(), c.max_rtt_cur()), (1, Some(ms(30)), Some(ms(60))));
    // "stage": the same ACK with the stage's 31 ms sample does not cut; RTT_min is the
    // stage's least sample, not the connection's.
    let mut c = ImtcpBg::new(stage, 40 * M, 40 * M, MSS);
    c.on_input(t(1), &CcInput::StageRtt { rtt: ms(31) });
    c.on_ack(&at(t(1), 60, 20, 1));
    assert_eq!((c.cuts(), c.min_rtt(), c.max_rtt_cur()), (0, Some(ms(31)), Some(ms(31))));
    // A stage sample above δ·RTT_min cuts by RTT_min/RTT_cur, whatever the connection says.
    c.on_input(t(2), &CcInput::StageRtt { rtt: ms(62) });
    let before = c.cwnd();
    c.on_ack(&at(t(2), 31, 31, 2));
    assert_eq!(c.cuts(), 1);
    assert!(c.cwnd() <= (before + M) / 2, "{} from {before}", c.cwnd());
    // An ACK without a sample of its own (none fed at its time) leaves B3 alone, even with a
    // stale high one kept from an earlier instant.
    c.on_input(t(3), &CcInput::StageRtt { rtt: ms(90) });
    let before = c.cwnd();
    c.on_ack(&at(t(4), 90, 31, 3));
    assert_eq!(c.cuts(), 1);
    assert!(c.cwnd() >= before);
    // A sample is used once: a second ACK at the same instant does not reuse it.
    c.on_input(t(5), &CcInput::StageRtt { rtt: ms(31) });
    c.on_ack(&at(t(5), 31, 31, 4));
    c.on_ack(&at(t(5), 90, 31, 4));
    assert_eq!(c.cuts(), 1);
}
