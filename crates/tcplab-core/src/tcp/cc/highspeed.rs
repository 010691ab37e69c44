//! HighSpeed TCP (RFC 3649) on NewReno's window rules (`reno.rs`). With cwnd at most
//! Low_Window = 38 segments it is NewReno exactly. Above that, congestion avoidance adds
//! a(w)·SMSS²/cwnd per ACK (a(w) segments per RTT), and a loss leaves
//! ssthresh = (1 − b(w))·FlightSize, w being cwnd in whole segments.
//!
//! a(w) and b(w) come from RFC 3649's formulas, not from a table:
//!
//! - b(w) = (High_Decrease − 0.5)·x + 0.5, with x = (log w − log Low_Window)/(log High_Window −
//!   log Low_Window);
//! - p(w) = exp(log Low_P + x·(log High_P − log Low_P)): the RFC's response function
//!   w = Low_Window·(p/Low_P)^S (≈ 0.12/p^0.835) solved for p;
//! - a(w) = w²·p(w)·2·b(w)/(2 − b(w)).
//!
//! Low_Window 38, High_Window 83000, High_P 10⁻⁷, High_Decrease 0.1, and Low_P 10⁻³ (Standard
//! TCP's 1.2/√p is 38 segments there; ns-2's HighSpeed takes 1.5/38², a few per cent more
//! a(w) below 10⁴ segments). Linux's `tcp_highspeed.c` uses RFC 3649 Appendix B's 72-row
//! table instead, rounding a(w) up to the next row's integer (a = 2 from 39 segments); the
//! tests check the formulas against that table. Two choices of ours:
//!
//! - a(w) is at least 1: the formula gives 0.96 at 38 segments (Low_P = 10⁻³ lies slightly off
//!   Standard TCP's response) and stays below 1 up to 40;
//! - above High_Window, a(w) and b(w) keep their High_Window values (a ≈ 72.5, b = 0.1), as
//!   Linux keeps its last row; the extrapolated b(w) would reach 0 near 10⁶ segments.
//!
//! Timeouts follow Linux, whose `ssthresh` hook (`hstcp_ssthresh`) serves both fast recovery
//! and the RTO: the first timeout sets ssthresh by the same decrease, then cwnd = 1 SMSS.
//! Slow start is NewReno's, with `abc_limit` (RFC 3465) and Limited Slow Start (RFC 3742,
//! which RFC 3649 recommends using with it; off by default).

use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, RenoConfig, TimeoutEvent, WindowState};

/// Low_Window, segments: at or below it the controller is NewReno.
pub const LOW_WINDOW: u64 = 38;
/// High_Window, segments: the window of the response function at High_P.
pub const HIGH_WINDOW: f64 = 83_000.0;
/// High_P: the loss rate at High_Window.
pub const HIGH_P: f64 = 1e-7;
/// Low_P: Standard TCP's loss rate at Low_Window.
pub const LOW_P: f64 = 1e-3;
/// High_Decrease: b(High_Window).
pub const HIGH_DECREASE: f64 = 0.1;

/// Fractional bits of the fixed-point a(w), b(w) and of the window's fraction of a byte.
const FRAC_BITS: u32 = 16;
const ONE: u64 = 1 << FRAC_BITS;

/// Where log w lies from log Low_Window (0) to log High_Window (1), clamped to [0, 1].
fn position(w: f64) -> f64 {
    let lo = (LOW_WINDOW as f64).ln();
    ((w.ln() - lo) / (HIGH_WINDOW.ln() - lo)).clamp(0.0, 1.0)
}

/// b(w): the share of the window a loss takes at w segments (0.5 up to Low_Window, 0.1 from
/// High_Window on).
pub fn decrease(w: f64) -> f64 {
    (HIGH_DECREASE - 0.5) * position(w) + 0.5
}

/// p(w): the loss rate at which the response function's average window is w segments
/// (Low_P up to Low_Window, High_P from High_Window on).
pub fn loss_rate(w: f64) -> f64 {
    (LOW_P.ln() + position(w) * (HIGH_P.ln() - LOW_P.ln())).exp()
}

/// a(w): segments added per RTT at w segments, at least 1 (1 up to Low_Window).
pub fn increase(w: f64) -> f64 {
    if w <= LOW_WINDOW as f64 {
        return 1.0;
    }
    let w = w.min(HIGH_WINDOW);
    let b = decrease(w);
    (w * w * loss_rate(w) * 2.0 * b / (2.0 - b)).max(1.0)
}

/// a(w) and b(w) at a whole number of segments, ×2^16.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Aimd {
    w: u64,
    a: u64,
    b: u64,
}

impl Aimd {
    fn at(w: u64) -> Self {
        if w <= LOW_WINDOW {
            return Aimd { w, a: ONE, b: ONE / 2 };
        }
        let q = |x: f64| (x * ONE as f64).round() as u64;
        Aimd { w, a: q(increase(w as f64)), b: q(decrease(w as f64)) }
    }
}

/// Parameters of HighSpeed TCP: its slow start is NewReno's.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct HighSpeedConfig {
    /// Slow start (`abc_limit`, Limited Slow Start's `max_ssthresh`).
    pub reno: RenoConfig,
}

/// HighSpeed TCP controller state (bytes, as Reno's).
#[derive(Clone, Debug)]
pub struct HighSpeed {
    cfg: HighSpeedConfig,
    cwnd: u64,
    ssthresh: u64,
    /// Avoidance's growth below one byte, in 2^-16 bytes.
    frac: u64,
    /// a(w), b(w) at the last window they were needed for.
    aimd: Aimd,
}

impl HighSpeed {
    /// A controller starting at `cwnd`/`ssthresh` bytes.
    pub fn new(cfg: HighSpeedConfig, cwnd: u64, ssthresh: u64) -> Self {
        HighSpeed { cfg, cwnd, ssthresh, frac: 0, aimd: Aimd::at(0) }
    }

    /// a(w), b(w) at the current window (segments of `mss` bytes).
    fn aimd(&self, mss: u64) -> Aimd {
        let w = self.cwnd / mss;
        if self.aimd.w == w {
            self.aimd
        } else {
            Aimd::at(w)
        }
    }

    /// Congestion avoidance on one ACK: (bytes added, the fraction left, a(w) and b(w) used).
    /// Up to Low_Window RFC 5681's SMSS²/cwnd, at least one byte; above it a(w)·SMSS²/cwnd,
    /// its fraction of a byte carried to the next ACK.
    fn avoidance(&self, mss: u64) -> (u64, u64, Aimd) {
        if self.cwnd <= LOW_WINDOW * mss {
            return ((mss * mss / self.cwnd.max(1)).max(1), 0, self.aimd);
        }
        let p = self.aimd(mss);
        let q = self.frac as u128 + p.a as u128 * (mss * mss) as u128 / self.cwnd as u128;
        ((q >> FRAC_BITS) as u64, (q as u64) & (ONE - 1), p)
    }

    /// ssthresh after a loss with `flight` bytes out: max((1 − b(w))·FlightSize, 2·SMSS),
    /// exactly RFC 5681's FlightSize/2 up to Low_Window.
    fn decreased(&self, flight: u64, mss: u64) -> u64 {
        let floor = 2 * mss;
        if self.cwnd <= LOW_WINDOW * mss {
            return (flight / 2).max(floor);
        }
        let cut = (flight as u128 * self.aimd(mss).b as u128) >> FRAC_BITS;
        (flight - cut as u64).max(floor)
    }
}

impl CongestionControl for HighSpeed {
    fn name(&self) -> &'static str {
        "highspeed"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, a: &AckSample) {
        if !a.cwnd_limited {
            return; // RFC 7661, as Reno.
        }
        let mss = a.mss.max(1) as u64;
        if self.cwnd < self.ssthresh {
            self.cwnd += self.cfg.reno.slow_start_increase(self.cwnd, a.delivered, mss);
        } else {
            let (inc, frac, aimd) = self.avoidance(mss);
            self.cwnd += inc;
            self.frac = frac;
            self.aimd = aimd;
        }
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.ssthresh = self.decreased(ev.inflight, ev.mss.max(1) as u64);
    }
    fn on_recovery_exit(&mut self, _ev: &RecoveryExit) {
        self.cwnd = self.ssthresh; // RFC 6582 §3.2 step 3, as Reno.
        self.frac = 0;
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Bytes { cwnd: &mut self.cwnd, ssthresh: &mut self.ssthresh }
    }
    fn growth_bound(&self, a: &AckSample) -> u64 {
        let mss = a.mss.max(1) as u64;
        if self.cwnd < self.ssthresh {
            self.cfg.reno.slow_start_increase(self.cwnd, a.delivered, mss)
        } else {
            self.avoidance(mss).0
        }
    }
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        let s = self.decreased(ev.inflight, ev.mss.max(1) as u64);
        (s, s)
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            // Linux calls the same `ssthresh` hook on an RTO; repeated timeouts keep it.
            self.ssthresh = self.decreased(ev.inflight, ev.mss.max(1) as u64);
        }
        self.cwnd = ev.mss as u64;
        self.frac = 0;
    }
}

crate::param_table! {
    /// `[….tcp.highspeed]`: Limited Slow Start (`abc_limit` is the `tcp` table's). RFC 3649's
    /// constants are fixed.
    HighSpeedSpec => HighSpeedParams {
        /// RFC 3742's max_ssthresh in segments: past it slow start grows by at most
        /// max_ssthresh/2 segments per RTT (RFC 3742 suggests 100); 0 = off (default 0).
        max_ssthresh: u32 = 0,
    }
}

impl super::Registered for HighSpeed {
    const NAME: &'static str = "highspeed";
    type Controller = HighSpeed;
    type Config = HighSpeedConfig;
    type Params = HighSpeedParams;
    fn config(p: &HighSpeedParams, tcp: &super::CcContext) -> HighSpeedConfig {
        HighSpeedConfig { reno: RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: p.max_ssthresh, exact_increase: false } }
    }
    fn build(cfg: &HighSpeedConfig, cwnd: u64, ssthresh: u64, _mss: u32) -> HighSpeed {
        HighSpeed::new(*cfg, cwnd, ssthresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::Reno;
    use crate::units::{SimDuration, SimTime};

    const MSS: u32 = 1000;

    fn ack_of(delivered: u64, mss: u32, limited: bool) -> AckSample {
        AckSample {
            now: SimTime::ZERO,
            bytes_acked: delivered,
            packets_acked: 1,
            delivered,
            mss,
            rtt: None,
            srtt: None,
            min_rtt: None,
            inflight_before: 0,
            cwnd_limited: limited,
            after_timeout: false,
            open: true,
            round: 0,
            timestamps: None,
            ts_tick: SimDuration::from_millis(1),
        }
    }

    fn ack() -> AckSample {
        ack_of(MSS as u64, MSS, true)
    }

    fn loss(inflight: u64, mss: u32) -> CongestionEvent {
        CongestionEvent { now: SimTime::ZERO, inflight, mss }
    }

    fn exit() -> RecoveryExit {
        RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None }
    }

    fn timeout(inflight: u64, backoffs: u32) -> TimeoutEvent {
        TimeoutEvent { now: SimTime::ZERO, inflight, mss: MSS, backoffs }
    }

    /// In congestion avoidance at `w` segments.
    fn avoiding(w: u64) -> HighSpeed {
        HighSpeed::new(HighSpeedConfig::default(), w * MSS as u64, 2 * MSS as u64)
    }

    /// xorshift64: a fixed pseudo-random sequence.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n.max(1)
        }
    }

    #[test]
    fn a_and_b_match_rfc_3649_appendix_b() {
        // Rows of RFC 3649 Appendix B (w, a(w), b(w) to two decimals), as Linux's
        // tcp_highspeed.c carries them: each row's w is where a(w) reaches that integer.
        // From the exact formulas a is within 3 % (the table fits the rounded form
        // p(w) = 0.078/w^1.2 best, within 0.05) and b within its rounding.
        let rows = [
            (118.0, 2.0, 0.44),
            (221.0, 3.0, 0.41),
            (1058.0, 8.0, 0.33),
            (5036.0, 20.0, 0.25),
            (9991.0, 29.0, 0.21),
            (19965.0, 41.0, 0.17),
            (48961.0, 60.0, 0.13),
            (84035.0, 71.0, 0.10),
        ];
        for (w, a, b) in rows {
            let (got_a, got_b) = (increase(w), decrease(w));
            assert!((got_a - a).abs() <= 0.03 * a, "a({w}) = {got_a}, table {a}");
            assert!((got_b - b).abs() <= 0.005 + 1e-9, "b({w}) = {got_b}, table {b}");
        }
        // The ends: Standard TCP at Low_Window, High_Decrease and High_P at High_Window, where
        // a = 83000²·1e-7·0.2/1.9 = 72.5; held beyond it.
        assert_eq!((increase(38.0), decrease(38.0)), (1.0, 0.5));
        assert_eq!((increase(10.0), decrease(10.0)), (1.0, 0.5));
        assert!((loss_rate(10.0) - 1e-3).abs() < 1e-15 && (loss_rate(38.0) - 1e-3).abs() < 1e-15);
        assert!((loss_rate(HIGH_WINDOW) - 1e-7).abs() < 1e-19);
        assert!((decrease(HIGH_WINDOW) - 0.1).abs() < 1e-12);
        assert!((increase(HIGH_WINDOW) - 72.5158).abs() < 1e-3, "{}", increase(HIGH_WINDOW));
        assert_eq!((increase(1e6), decrease(1e6)), (increase(HIGH_WINDOW), decrease(HIGH_WINDOW)));
        // a(w) never below Standard TCP's 1 (the formula's 0.98 at 39 segments).
        assert_eq!(increase(39.0), 1.0);
        assert!(increase(41.0) > 1.0);
        // The fixed point the controller uses.
        let p = Aimd::at(1058);
        assert_eq!((p.a, p.b), ((increase(1058.0) * 65536.0).round() as u64, (decrease(1058.0) * 65536.0).round() as u64));
        assert_eq!(Aimd::at(38), Aimd { w: 38, a: 65536, b: 32768 });
    }

    #[test]
    fn at_or_below_low_window_it_is_newreno() {
        // The same events give the same cwnd and ssthresh, and the same declared bounds, as
        // NewReno's controller, with every slow start (byte counting off, L = 1, L = 2, Limited
        // Slow Start from 10 segments), as long as cwnd stays at most 38 segments.
        let abc = |abc_limit, max_ssthresh| RenoConfig { abc_limit, max_ssthresh, exact_increase: false };
        for cfg in [abc(1, 0), abc(0, 0), abc(2, 0), abc(1, 10)] {
            let mut r = Reno::new("newreno", cfg, 2 * MSS as u64, u64::MAX);
            let mut h = HighSpeed::new(HighSpeedConfig { reno: cfg }, 2 * MSS as u64, u64::MAX);
            let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
            let (mut top, mut avoided) = (0, 0);
            for step in 0..20_000 {
                let mss = MSS as u64;
                match rng.next(1000) {
                    0..=993 => {
                        let a = ack_of(1 + rng.next(3 * mss), MSS, rng.next(8) != 0);
                        assert_eq!(h.growth_bound(&a), r.growth_bound(&a), "step {step}");
                        avoided += (a.cwnd_limited && h.cwnd() >= h.ssthresh()) as u32;
                        r.on_ack(&a);
                        h.on_ack(&a);
                    }
                    994..=996 => {
                        let ev = loss(2 * mss + rng.next(h.cwnd()), MSS);
                        assert_eq!(h.loss_ssthresh(&ev), r.loss_ssthresh(&ev), "step {step}");
                        r.on_congestion(&ev);
                        h.on_congestion(&ev);
                        r.on_recovery_exit(&exit());
                        h.on_recovery_exit(&exit());
                    }
                    997..=998 => {
                        let ev = loss(h.cwnd(), MSS);
                        r.on_ecn_echo(&ev);
                        h.on_ecn_echo(&ev);
                    }
                    _ => {
                        let ev = timeout(rng.next(h.cwnd() + 1), 1 + rng.next(3) as u32);
                        r.on_timeout(&ev);
                        h.on_timeout(&ev);
                    }
                }
                top = top.max(h.cwnd());
                if h.cwnd() > 36 * mss {
                    // Keep below Low_Window: slow start adds at most 2 segments per ACK.
                    let ev = loss(h.cwnd(), MSS);
                    r.on_congestion(&ev);
                    h.on_congestion(&ev);
                    r.on_recovery_exit(&exit());
                    h.on_recovery_exit(&exit());
                }
                assert_eq!((h.cwnd(), h.ssthresh()), (r.cwnd(), r.ssthresh()), "{cfg:?} step {step}");
            }
            assert!(top > 36 * MSS as u64 && avoided > 1000, "{cfg:?}: the run must reach Low_Window and avoid congestion ({top}, {avoided})");
        }
    }

    #[test]
    fn avoidance_adds_a_w_segments_per_rtt() {
        // One ACK per segment for one window: a(w) segments more (1 up to 40, 8.1 at 1058, 29.6
        // at 10000, 72.5 from 83000 on), a little less as cwnd grows within the window (each
        // ACK adds a(w)·SMSS²/cwnd). At 38, NewReno's SMSS²/cwnd.
        for (w, a) in [38, 40, 118, 1058, 10_000, 83_000, 200_000].map(|w| (w, increase(w as f64))) {
            let mut h = avoiding(w);
            let before = h.cwnd();
            for _ in 0..w {
                h.on_ack(&ack());
            }
            let grew = (h.cwnd() - before) as f64 / MSS as f64;
            assert!(grew <= a * 1.0001 && grew >= 0.98 * a, "w = {w}: +{grew} segments, a(w) = {a}");
        }
        // Not cwnd-limited: no growth (RFC 7661).
        let mut h = avoiding(1000);
        h.on_ack(&ack_of(MSS as u64, MSS, false));
        assert_eq!(h.cwnd(), 1000 * MSS as u64);
    }

    #[test]
    fn a_loss_keeps_1_minus_b_of_the_flight() {
        // b(10000) = 0.5 − 0.4·ln(10000/38)/ln(83000/38) = 0.210: a loss keeps 79 %.
        let mut h = avoiding(10_000);
        let flight = 10_000 * MSS as u64;
        h.on_congestion(&loss(flight, MSS));
        let kept = h.ssthresh() as f64 / flight as f64;
        assert!((kept - (1.0 - decrease(10_000.0))).abs() < 1e-4 && (0.785..0.795).contains(&kept), "kept {kept}");
        h.on_recovery_exit(&exit());
        assert_eq!(h.cwnd(), h.ssthresh());
        // Half at Low_Window (FlightSize/2, as NewReno), 90 % from High_Window on.
        let mut h = avoiding(38);
        h.on_congestion(&loss(38_001, MSS));
        assert_eq!(h.ssthresh(), 19_000);
        let mut h = avoiding(200_000);
        h.on_congestion(&loss(200_000_000, MSS));
        assert_eq!(h.ssthresh(), 200_000_000 - 200_000_000 * 6554 / 65536, "b = 0.1 as 6554/65536");
        // b(w) is the window's, applied to FlightSize; never below two segments.
        let mut h = avoiding(10_000);
        h.on_congestion(&loss(1000, MSS));
        assert_eq!(h.ssthresh(), 2000);
        h.on_congestion(&loss(100_000, MSS));
        assert_eq!(h.ssthresh(), 100_000 - 100_000 * Aimd::at(10_000).b / 65536);
    }

    #[test]
    fn a_timeout_decreases_as_a_loss_then_restarts_from_one_segment() {
        // Linux's ssthresh hook serves the RTO too: (1 − b(w)) at the first timeout, kept by
        // the next ones; cwnd one segment, then slow start up to ssthresh.
        let mut h = avoiding(10_000);
        let want = h.loss_ssthresh(&loss(5_000_000, MSS)).0;
        h.on_timeout(&timeout(5_000_000, 1));
        assert_eq!((h.cwnd(), h.ssthresh()), (MSS as u64, want));
        assert!((3_900_000..4_000_000).contains(&want), "{want}");
        h.on_timeout(&timeout(MSS as u64, 2));
        assert_eq!((h.cwnd(), h.ssthresh()), (MSS as u64, want), "repeated timeouts keep ssthresh");
        h.on_ack(&ack());
        assert_eq!(h.cwnd(), 2 * MSS as u64, "slow start");
    }

    #[test]
    fn growth_and_loss_bounds_are_exact() {
        // What the invariant checker is told is what happens: the growth of every ACK and the
        // ssthresh of every loss, over random windows, segment sizes and ACK sizes.
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for _ in 0..2_000 {
            let mss = [536u32, 1000, 1460, 8960][rng.next(4) as usize];
            let w = 1 + rng.next(300_000);
            let cwnd = w * mss as u64 + rng.next(mss as u64);
            let ssthresh = if rng.next(4) == 0 { u64::MAX } else { 2 * mss as u64 + rng.next(cwnd) };
            let cfg = HighSpeedConfig { reno: RenoConfig { abc_limit: rng.next(3) as u32, max_ssthresh: [0, 100][rng.next(2) as usize], exact_increase: false } };
            let mut h = HighSpeed::new(cfg, cwnd, ssthresh);
            for _ in 0..1 + rng.next(50) {
                let a = ack_of(1 + rng.next(3 * mss as u64), mss, true);
                let (before, bound) = (h.cwnd(), h.growth_bound(&a));
                h.on_ack(&a);
                assert_eq!(h.cwnd() - before, bound, "w {w}, mss {mss}, ssthresh {ssthresh}");
            }
            let ev = loss(rng.next(2 * h.cwnd()), mss);
            let (lo, hi) = h.loss_ssthresh(&ev);
            assert_eq!(lo, hi);
            let mut t = h.clone();
            h.on_congestion(&ev);
            assert_eq!(h.ssthresh(), lo);
            t.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: ev.inflight, mss, backoffs: 1 });
            assert_eq!(t.ssthresh(), lo);
        }
    }

    /// The deterministic sawtooth at loss rate `p`: one ACK per segment, a loss every 1/p
    /// segments (FlightSize = cwnd, recovery over at once). The average window in segments
    /// over `cycles` loss cycles after `warm` ones, weighting each segment by the time it
    /// takes (cwnd segments per RTT), so throughput = average window / RTT.
    fn sawtooth(c: &mut impl CongestionControl, p: f64, warm: u32, cycles: u32) -> f64 {
        let n = (1.0 / p).round() as u64;
        let (mut segments, mut rtts) = (0u64, 0f64);
        let a = ack();
        for cycle in 0..warm + cycles {
            for _ in 0..n {
                c.on_ack(&a);
                if cycle >= warm {
                    segments += 1;
                    rtts += MSS as f64 / c.cwnd() as f64;
                }
            }
            c.on_congestion(&loss(c.cwnd(), MSS));
            c.on_recovery_exit(&exit());
        }
        segments as f64 / rtts
    }

    #[test]
    fn the_sawtooth_follows_the_rfc_3649_response_function() {
        // RFC 3649's response function: w = 0.12/p^0.835 segments. At 1e-3 the window (≈ 25–52 segments) is
        // mostly NewReno's and near Standard TCP's 1.2/√p = 37.9 (the Reno sawtooth: √(1.5/p)).
        let response = |p: f64| 0.12 / p.powf(0.835);
        for (p, warm, cycles) in [(1e-3, 20, 200), (1e-5, 5, 20), (1e-7, 2, 3)] {
            let start = (response(p) * MSS as f64) as u64;
            let mut h = HighSpeed::new(HighSpeedConfig::default(), start, start);
            let avg = sawtooth(&mut h, p, warm, cycles);
            let want = response(p);
            eprintln!("p = {p:e}: average window {avg:.1} segments, 0.12/p^0.835 = {want:.1} ({:+.1} %)", 100.0 * (avg / want - 1.0));
            assert!((avg / want - 1.0).abs() <= 0.15, "p = {p:e}: {avg:.1} against {want:.1}");
            if p == 1e-3 {
                let reno_avg = sawtooth(&mut Reno::new("newreno", RenoConfig::default(), start, start), p, warm, cycles);
                let standard = 1.2 / p.sqrt();
                eprintln!("p = 1e-3: NewReno {reno_avg:.1} segments, 1.2/sqrt(p) = {standard:.1}");
                assert!((avg / standard - 1.0).abs() <= 0.15 && (avg / reno_avg - 1.0).abs() <= 0.10, "{avg:.1} against NewReno {reno_avg:.1}, 1.2/sqrt(p) {standard:.1}");
            } else {
                // Far above Standard TCP's window at the same loss rate.
                assert!(avg > 4.0 * 1.2 / p.sqrt(), "p = {p:e}: {avg:.1}");
            }
        }
    }
}
