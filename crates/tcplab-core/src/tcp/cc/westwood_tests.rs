use super::*;
use crate::tcp::cc::{CcContext, Registered};

const MSS: u32 = 1000;
const SEG: u64 = MSS as u64;

fn at_us(us: u64) -> SimTime {
    SimTime(SimDuration::from_micros(us).as_ps())
}

/// An ACK at `now_us` of `bytes` (whole segments delivered), with an RTT sample of `rtt_us`
/// (none when 0), from a cwnd-limited sender in the Open state.
fn ack(now_us: u64, bytes: u64, rtt_us: u64) -> AckSample {
    AckSample {
        now: at_us(now_us),
        bytes_acked: bytes,
        packets_acked: bytes.div_ceil(SEG) as u32,
        delivered: bytes,
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
    CongestionEvent { now: at_us(now_us), inflight: 0, mss: MSS }
}

fn exit(now_us: u64) -> RecoveryExit {
    RecoveryExit { now: at_us(now_us), inflight: 0, mss: MSS, window: None }
}

fn timeout(now_us: u64, backoffs: u32) -> TimeoutEvent {
    TimeoutEvent { now: at_us(now_us), inflight: 0, mss: MSS, backoffs }
}

/// A controller in congestion avoidance (cwnd 100, ssthresh 50 segments), so that windows do
/// not move under the bandwidth tests.
fn westwood() -> Westwood {
    Westwood::new(WestwoodConfig::default(), 100 * SEG, 50 * SEG, MSS)
}

/// Feed ACKs of `bytes` every `gap_us` from `from_us` (exclusive) to `to_us` (inclusive), each
/// with an RTT sample of `rtt_us`.
fn feed(w: &mut Westwood, from_us: u64, to_us: u64, gap_us: u64, bytes: u64, rtt_us: u64) {
    let mut t = from_us + gap_us;
    while t <= to_us {
        w.on_ack(&ack(t, bytes, rtt_us));
        t += gap_us;
    }
}

#[test]
fn the_filter_takes_the_first_sample_whole_then_two_seven_eighths_stages() {
    // RTT 100 ms. The first ACK (t = 0) starts the window and is not counted; ACKs of one
    // segment every 10 ms; the ACK at 110 ms is the first more than an RTT after the start:
    // sample = 10 000 bytes / 0.110 s = 90 909 B/s, taken whole (bw_ns = bw = 90 909). That ACK
    // counts in the next window, which the ACK at 220 ms closes: 1000 + 10·2000 bytes over
    // 0.110 s = 190 909 B/s; bw_ns = (7·90 909 + 190 909)/8 = 103 409, bw = (7·90 909 +
    // 103 409)/8 = 92 471. The third: 22 000 bytes / 0.110 s = 200 000; bw_ns = 115 482,
    // bw = 95 347 (Linux's integer truncation at each stage).
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 100_000));
    feed(&mut w, 0, 100_000, 10_000, SEG, 100_000);
    assert_eq!((w.samples(), w.bk()), (0, 10_000), "no sample until the window is longer than the RTT");
    w.on_ack(&ack(110_000, SEG, 100_000));
    assert_eq!((w.samples(), w.bw_ns_est(), w.bw_est()), (1, 90_909, 90_909), "the first sample, whole");
    assert_eq!(w.bk(), SEG, "the ACK that closed the window counts in the next");
    feed(&mut w, 110_000, 210_000, 10_000, 2 * SEG, 100_000);
    w.on_ack(&ack(220_000, 2 * SEG, 100_000));
    assert_eq!((w.samples(), w.bw_ns_est(), w.bw_est()), (2, 103_409, 92_471));
    feed(&mut w, 220_000, 330_000, 10_000, 2 * SEG, 100_000);
    assert_eq!((w.samples(), w.bw_ns_est(), w.bw_est()), (3, 115_482, 95_347));
    assert_eq!(do_filter(8, 0), 7);
    assert_eq!(do_filter(0, 15), 1, "truncated, as Linux's >> 3");
}

#[test]
fn one_sample_per_rtt_not_per_ack() {
    // 1 s of ACKs every millisecond with an RTT of 100 ms: a sample on the first ACK more than
    // 100 ms after each window began (windows of 101 ms), 9 in all — not 1000 (the original
    // Westwood's sample per ACK).
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 100_000));
    feed(&mut w, 0, 1_000_000, 1_000, SEG, 100_000);
    assert_eq!(w.samples(), 9);
    // A short RTT: the window is at least 50 ms (TCP_WESTWOOD_RTT_MIN), 51 ms at 1 ms per ACK.
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 5_000));
    feed(&mut w, 0, 1_020_000, 1_000, SEG, 5_000);
    assert_eq!(w.samples(), 20, "one sample per 51 ms, not per 6 ms");
    // The window follows the last RTT sample: at 300 ms windows of 301 ms.
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 300_000));
    feed(&mut w, 0, 1_000_000, 1_000, SEG, 300_000);
    assert_eq!(w.samples(), 3);
}

#[test]
fn compressed_acks_do_not_inflate_the_estimate() {
    // 100 000 B/s (one segment every 10 ms), RTT 100 ms, but every tenth ACK arrives bunched
    // with the nine before it (ACK compression: ten segments acknowledged within 10 µs). A
    // per-ACK sample would see 1000 bytes per µs; the per-RTT sample sees the rate.
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 100_000));
    for burst in 1..=300u64 {
        let t = burst * 100_000;
        for i in 0..10 {
            w.on_ack(&ack(t + i, SEG, 100_000));
        }
    }
    let bw = w.bw_est() as f64;
    assert!((0.9e5..1.1e5).contains(&bw), "bw {bw} B/s against 100 000");
    assert!(w.samples() >= 100 && w.samples() <= 300, "{} samples", w.samples());
}

/// A controller that has measured 1 000 000 B/s (one segment per ms) with RTTmin 40 ms for 2 s
/// (the filter has converged to within a few hundred bytes per second: its first sample,
/// 40 000 bytes over 41 ms, was low).
fn measured() -> Westwood {
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 40_000));
    feed(&mut w, 0, 2_000_000, 1_000, SEG, 40_000);
    w
}

#[test]
fn the_estimate_converges_on_the_rate_and_rtt_min_is_the_least_sample() {
    let mut w = measured();
    assert!((999_000..=1_000_000).contains(&w.bw_est()), "bw {}", w.bw_est());
    assert_eq!(w.rtt_min(), SimDuration::from_millis(40));
    // A larger sample leaves RTTmin; a smaller one (seen on the ACK after it, as Linux updates
    // RTTmin before taking the ACK's sample) lowers it.
    w.on_ack(&ack(2_001_000, SEG, 60_000));
    w.on_ack(&ack(2_002_000, SEG, 30_000));
    assert_eq!(w.rtt_min(), SimDuration::from_millis(40));
    w.on_ack(&ack(2_003_000, SEG, 45_000));
    assert_eq!(w.rtt_min(), SimDuration::from_millis(30));
}

#[test]
fn fast_recovery_halves_then_completion_sets_bw_times_rtt_min() {
    // bw·RTTmin = 1e6 B/s · 0.04 s = 40 000 bytes = 40 segments (39 with the estimate a few
    // bytes per second below the rate, truncated as Linux's).
    let mut w = measured();
    let bw_rtt = (w.bw_est() as u128 * 40 / 1000 / SEG as u128) as u32;
    assert!((39..=40).contains(&bw_rtt));
    assert_eq!(w.bw_rtt_min(), bw_rtt);
    let cwnd = w.w.cwnd;
    w.on_congestion(&loss(2_000_500));
    assert_eq!(w.ssthresh(), (cwnd / 2).max(2) as u64 * SEG, "entering recovery: Reno's ssthresh (tcp_reno_ssthresh)");
    let (lo, hi) = westwood_loss_range(&w);
    assert!(lo <= w.ssthresh() && w.ssthresh() <= hi);
    w.on_recovery_exit(&exit(2_050_000));
    assert_eq!((w.cwnd(), w.ssthresh()), (bw_rtt as u64 * SEG, bw_rtt as u64 * SEG), "CA_EVENT_COMPLETE_CWR: cwnd = ssthresh = bw·RTTmin");
    assert_eq!(w.min_cwnd(), bw_rtt as u64 * SEG, "the rate-halving floor is bw·RTTmin");
    // Above the halved window: Westwood keeps the window of the rate it measured.
    let mut small = measured();
    small.w.cwnd = 30;
    small.on_congestion(&loss(2_000_500));
    assert_eq!(small.ssthresh(), 15 * SEG);
    small.on_recovery_exit(&exit(2_050_000));
    assert_eq!(small.cwnd(), bw_rtt as u64 * SEG);
}

fn westwood_loss_range(w: &Westwood) -> (u64, u64) {
    w.loss_ssthresh(&loss(0))
}

#[test]
fn the_window_after_a_loss_is_at_least_two_segments() {
    // Before any sample bw = 0: Linux's max(0, 2) = 2 segments.
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 40_000));
    w.on_congestion(&loss(1_000));
    w.on_recovery_exit(&exit(2_000));
    assert_eq!((w.cwnd(), w.ssthresh()), (2 * SEG, 2 * SEG));
    // A slow flow: 1000 bytes per 100 ms (10 000 B/s) with RTTmin 40 ms: 400 bytes, below one
    // segment: the floor of 2.
    let mut w = westwood();
    w.on_ack(&ack(0, SEG, 40_000));
    feed(&mut w, 0, 3_000_000, 100_000, SEG, 40_000);
    assert!(w.samples() > 0 && w.bw_est() > 0);
    assert_eq!(w.bw_rtt_min(), 2);
    w.on_timeout(&timeout(3_000_001, 1));
    assert_eq!((w.cwnd(), w.ssthresh()), (SEG, 2 * SEG));
}

#[test]
fn a_timeout_sets_ssthresh_to_bw_times_rtt_min_and_asks_for_rtt_min_afresh() {
    let mut w = measured();
    let s = w.bw_rtt_min() as u64 * SEG;
    w.on_timeout(&timeout(2_000_500, 1));
    assert_eq!((w.cwnd(), w.ssthresh()), (SEG, s), "CA_EVENT_LOSS: ssthresh bw·RTTmin, the loss window");
    let (lo, hi) = w.loss_ssthresh(&loss(0));
    assert!(lo <= s && s <= hi);
    // A repeated timeout keeps ssthresh.
    w.w.ssthresh = 7;
    w.on_timeout(&timeout(3_000_000, 2));
    assert_eq!(w.ssthresh(), 7 * SEG, "only the first timeout of an episode recalculates");
    // reset_rtt_min: the next ACK takes RTTmin from the last sample (40 ms here) even if it is
    // above the old minimum; then the minimum again.
    w.rtt_min = SimDuration::from_millis(10);
    w.on_ack(&ack(3_500_000, SEG, 80_000));
    assert_eq!(w.rtt_min(), SimDuration::from_millis(40), "RTTmin reset to the last sample");
    w.on_ack(&ack(3_501_000, SEG, 90_000));
    assert_eq!(w.rtt_min(), SimDuration::from_millis(40), "then min(RTTmin, sample) again");
}

#[test]
fn the_sampling_clock_stops_through_recovery() {
    // 1e6 B/s, RTT 40 ms; a recovery of 300 ms during which no ACK reaches the controller. The
    // window spanning it measures the bytes outside it over the time outside it: the rate,
    // not the rate times 41/341. After a timeout the clock runs (as Linux's Loss state).
    let mut a = measured();
    let before = a.bw_est();
    let start = a.win_start.unwrap();
    a.on_congestion(&loss(2_000_500));
    a.on_recovery_exit(&exit(2_300_000));
    assert_eq!(a.win_start.unwrap(), start, "the window's start stays until an ACK arrives");
    a.on_ack(&ack(2_301_000, SEG, 40_000));
    assert_eq!(a.win_start.unwrap().0, start.0 + SimDuration::from_micros(300_500).as_ps(), "moved on by the 300.5 ms the clock stood");
    feed(&mut a, 2_301_000, 2_400_000, 1_000, SEG, 40_000);
    assert!(a.bw_est().abs_diff(before) < 1_000, "bw {} against {before} before the recovery", a.bw_est());
    // Without the pause (a timeout: the clock runs), the window across the gap samples low.
    let mut b = measured();
    let ns = b.bw_ns_est();
    b.on_timeout(&timeout(2_000_500, 1));
    b.on_ack(&ack(2_301_000, SEG, 40_000));
    // 33 000 bytes over 333 ms: bw_ns drops by an eighth of the difference, about 112 000 B/s.
    assert!(b.bw_ns_est() + 100_000 < ns, "the gap counts after a timeout: bw_ns {} (was {ns})", b.bw_ns_est());
    // An ECN-Echo stops the clock too (the ACKs of CWR are not given to the controller).
    let mut c = measured();
    c.on_ecn_echo(&loss(2_000_500));
    assert!(c.paused_since.is_some());
    c.on_ack(&ack(2_100_000, SEG, 40_000));
    assert!(c.paused_since.is_none());
}

#[test]
fn ecn_echo_cuts_to_bw_times_rtt_min_never_raising_the_window() {
    let mut w = measured();
    let s = w.bw_rtt_min();
    w.on_ecn_echo(&loss(2_000_500));
    assert_eq!((w.cwnd(), w.ssthresh()), (s as u64 * SEG, s as u64 * SEG));
    let mut w = measured();
    w.w.cwnd = 20;
    w.on_ecn_echo(&loss(2_000_500));
    assert_eq!((w.cwnd(), w.ssthresh()), (20 * SEG, s as u64 * SEG), "a window below bw·RTTmin is kept");
}

#[test]
fn growth_is_renos_in_packets() {
    // Slow start: the segments delivered, up to ssthresh; then one segment per window acked.
    let mut w = Westwood::new(WestwoodConfig::default(), 10 * SEG, 12 * SEG, MSS);
    w.on_ack(&ack(0, 3 * SEG, 40_000));
    assert_eq!(w.cwnd(), 12 * SEG, "slow start stops at ssthresh, the rest goes to the counter");
    assert_eq!(w.w.cwnd_cnt, 1);
    for i in 0..11 {
        w.on_ack(&ack(1_000 + i, SEG, 40_000));
    }
    assert_eq!(w.cwnd(), 13 * SEG, "one segment after a window of 12 acked");
    let mut a = ack(2_000, SEG, 40_000);
    a.cwnd_limited = false;
    let before = w.cwnd();
    w.on_ack(&a);
    assert_eq!(w.cwnd(), before, "no growth when not cwnd-limited");
    // The declared bound: slow start's share plus the counter's segment.
    let w = Westwood::new(WestwoodConfig::default(), 10 * SEG, 12 * SEG, MSS);
    assert_eq!(w.growth_bound(&ack(0, 3 * SEG, 0)), 3 * SEG);
}

#[test]
fn probe_shows_the_estimate_in_bits_per_second() {
    let w = westwood();
    let mut out = [f64::NAN; crate::tcp::cc::PROBE_VALUES];
    w.probe(&mut out);
    assert_eq!(w.probe_names(), &PROBE_NAMES);
    assert_eq!((out[0], out[4], out[5], out[6]), (0.0, 0.0, 2.0, 0.0));
    assert!(out[2].is_nan() && out[3].is_nan(), "no RTT before the first sample");
    let w = measured();
    w.probe(&mut out);
    assert_eq!(out[0], w.bw_est() as f64 * 8.0);
    assert!((out[2] - 0.04).abs() < 1e-12);
    assert_eq!(out[5], w.bw_rtt_min() as f64);
    assert_eq!(out[6], w.samples() as f64);
}

#[test]
fn registration_refuses_ack_counting() {
    let ctx = CcContext { abc_limit: 0, hz: 1000, ecn: false, timestamps: false };
    let e = Westwood::check_selected(&WestwoodParams::default(), &ctx).unwrap_err();
    assert!(format!("{e:?}").contains("abc_limit"));
    assert!(Westwood::check_selected(&WestwoodParams::default(), &CcContext { abc_limit: 1, ..ctx }).is_ok());
    assert_eq!(Westwood::build(&WestwoodConfig::default(), 10 * SEG, u64::MAX, MSS).name(), "westwood");
}

#[test]
fn the_bandwidth_rule_sets_bw_times_rtt_min_when_recovery_begins() {
    let cfg = WestwoodConfig { recovery_ssthresh: RecoverySsthresh::Bandwidth };
    let mut w = measured();
    w.cfg = cfg;
    let s = w.bw_rtt_min();
    w.on_congestion(&loss(2_000_500));
    assert_eq!(w.ssthresh(), s as u64 * SEG, "bw·RTTmin from the start");
    let (lo, hi) = westwood_loss_range(&measured_with(cfg));
    assert!(lo <= s as u64 * SEG && s as u64 * SEG <= hi);
    w.on_recovery_exit(&exit(2_050_000));
    assert_eq!((w.cwnd(), w.ssthresh()), (s as u64 * SEG, s as u64 * SEG));
    // Never above the window: a loss with bw·RTTmin above cwnd keeps cwnd.
    let mut w = measured_with(cfg);
    w.w.cwnd = 20;
    w.on_congestion(&loss(2_000_500));
    assert_eq!(w.ssthresh(), 20 * SEG);
    w.on_recovery_exit(&exit(2_050_000));
    assert_eq!(w.cwnd(), 20 * SEG, "completion leaves what the recovery began with");
    // The Linux rule on the same state: Reno's half, then bw·RTTmin at completion (a step up).
    let mut l = measured();
    l.w.cwnd = 20;
    l.on_congestion(&loss(2_000_500));
    assert_eq!(l.ssthresh(), 10 * SEG);
    l.on_recovery_exit(&exit(2_050_000));
    assert_eq!(l.cwnd(), s as u64 * SEG);
}

fn measured_with(cfg: WestwoodConfig) -> Westwood {
    let mut w = measured();
    w.cfg = cfg;
    w
}
