//! Replay of the Linux 2.6.16 BIC window rules, RTT by RTT: the `Bic` controller is driven
//! directly with synthetic ACKs (one RTT = the window's worth of packets, acknowledged two per
//! ACK as a delayed-ACK receiver does) from a loss, and each RTT's increment is compared with an
//! independent closed-form evaluation of the per-RTT rule of tcp_bic.c (algorithms.md §1.4),
//! written here from the rule's statement, not from bic.rs. Run with `--nocapture` to see the
//! tables that docs/validation.md records.
//!
//! The per-RTT rule, with W = W_max, w = cwnd, gap = W − w, x = w − W (Linux 2.6.16 defaults
//! B = 4, S_max = 16, smooth_part = 20, low_window = 14):
//!
//! | region | condition | growth g per RTT |
//! |---|---|---|
//! | low window (Reno) | w ≤ 14 | 1 per w + 1 ACKs (½ per RTT with delayed ACKs) |
//! | additive, S_max | gap ≥ 68 (gap/4 > 16) | 16 |
//! | binary search | 8 ≤ gap < 68 | ⌊gap/4⌋ |
//! | smooth (near W_max) | gap < 8 and x < 4 | B/smooth_part = 0.2 |
//! | max probing, slow start | 4 ≤ x < 48 | x/3 |
//! | max probing, linear | x ≥ 48 | 16 |
//!
//! The closed form of one RTT's increment accounts for: (1) the delayed-ACK ratio — Linux
//! divides `cnt` by the packets-per-ACK estimate (2 here), so above low_window the per-RTT
//! growth in packets does not depend on it, while at low_window it halves; (2) each +1 takes
//! `cnt + 1` ACKs (snd_cwnd_cnt counts from 0 to cnt), which scales the growth by A/(A + g)
//! for A ACKs per RTT; (3) `cnt` is recomputed as the window grows within the RTT, so growth
//! proportional to the distance compounds: the binary search closes the gap as
//! dw/dRTT = (gap − 1.5)/4 (⌊gap/4⌋ on average), giving (gap − 1.5)·(1 − e^(−1/4)), and max
//! probing grows the excess as dx/dRTT = x/3, giving x·(e^(1/3) − 1).
//!
//! Tolerance: each RTT's increment within ±1 segment of the closed form (integer windows and
//! region boundaries crossed inside an RTT account for the rest), the sum over each region
//! within ±2 segments, and the region exact: the growth implied by the controller's `cnt` at
//! the start of each RTT must be the region's g up to `cnt`'s integer rounding.

use tcplab_core::tcp::cc::{AckSample, Bic, BicConfig, CongestionControl, CongestionEvent, RecoveryExit};
use tcplab_core::units::{SimDuration, SimTime};

const MSS: u32 = 1448;
const RTT_MS: u64 = 100;
/// Packets per delayed ACK.
const PER_ACK: u32 = 2;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    LowWindow,
    Additive,
    BinarySearch,
    Smooth,
    ProbeSlowStart,
    ProbeLinear,
}

impl Region {
    fn of(w: u32, w_max: u32) -> Region {
        let (w, wm) = (w as i64, w_max as i64);
        if w <= 14 {
            Region::LowWindow
        } else if wm - w >= 68 {
            Region::Additive
        } else if wm - w >= 8 {
            Region::BinarySearch
        } else if w - wm < 4 {
            Region::Smooth
        } else if w - wm < 48 {
            Region::ProbeSlowStart
        } else {
            Region::ProbeLinear
        }
    }

    fn name(self) -> &'static str {
        match self {
            Region::LowWindow => "low window (Reno)",
            Region::Additive => "additive S_max",
            Region::BinarySearch => "binary search",
            Region::Smooth => "smooth",
            Region::ProbeSlowStart => "max probing slow",
            Region::ProbeLinear => "max probing linear",
        }
    }

    /// The rule's nominal growth per RTT in packets at window `w` (for the low window: per RTT
    /// of `acks` ACKs).
    fn nominal(self, w: u32, w_max: u32, acks: u32) -> f64 {
        let (w, wm) = (w as f64, w_max as f64);
        match self {
            Region::LowWindow => acks as f64 / (w + 1.0),
            Region::Additive | Region::ProbeLinear => 16.0,
            Region::BinarySearch => ((wm - w) / 4.0).floor(),
            Region::Smooth => 4.0 / 20.0,
            Region::ProbeSlowStart => (w - wm) / 3.0,
        }
    }

    /// Closed-form increment over a fraction `tau` of an RTT of `acks` ACKs, starting at window
    /// `w` and staying in this region.
    fn closed_form(self, w: u32, w_max: u32, tau: f64, acks: u32) -> f64 {
        let (wf, wm, a) = (w as f64, w_max as f64, acks as f64);
        let ack_bias = |g: f64| a / (a + g);
        match self {
            Region::LowWindow => tau * self.nominal(w, w_max, acks),
            Region::Additive | Region::ProbeLinear => tau * 16.0 * ack_bias(16.0),
            Region::BinarySearch => {
                let g = self.nominal(w, w_max, acks);
                (wm - wf - 1.5) * (1.0 - (-tau / 4.0).exp()) * ack_bias(g)
            }
            Region::Smooth => tau * 0.2,
            Region::ProbeSlowStart => {
                let g = self.nominal(w, w_max, acks);
                (wf - wm) * ((tau / 3.0).exp() - 1.0) * ack_bias(g)
            }
        }
    }
}

fn ack(now: SimTime, cwnd: u32) -> AckSample {
    AckSample {
        now,
        bytes_acked: (PER_ACK * MSS) as u64,
        packets_acked: PER_ACK,
        delivered: (PER_ACK * MSS) as u64,
        mss: MSS,
        rtt: Some(SimDuration::from_millis(RTT_MS)),
        srtt: Some(SimDuration::from_millis(RTT_MS)),
        min_rtt: Some(SimDuration::from_millis(RTT_MS)),
        inflight_before: cwnd as u64 * MSS as u64,
        cwnd_limited: true,
        after_timeout: false,
        open: true,
        round: 0,
        timestamps: None,
        ts_tick: SimDuration::from_millis(1),
    }
}

/// A loss at the controller's current window: fast recovery, then exit at ssthresh.
fn loss(b: &mut Bic, now: SimTime) {
    let inflight = b.cwnd();
    b.on_congestion(&CongestionEvent { now, inflight, mss: MSS });
    b.on_recovery_exit(&RecoveryExit { now, inflight, mss: MSS, window: None });
}

struct Replay {
    now: SimTime,
    /// Packets of the previous RTT not yet acknowledged (an odd window leaves one for the next
    /// ACK).
    carry: u32,
    rtt: u32,
    worst: f64,
    /// Per region: (sum of increments, sum of closed forms).
    sums: Vec<(Region, f64, f64)>,
}

impl Replay {
    fn new() -> Self {
        Replay { now: SimTime::ZERO + SimDuration::from_secs(10), carry: 0, rtt: 0, worst: 0.0, sums: vec![] }
    }

    /// One RTT: the window's packets, acknowledged two per ACK, spread evenly over the RTT.
    fn rtt(&mut self, b: &mut Bic) -> u32 {
        let (w0, w_max) = (b.cwnd_segments(), b.w_max());
        let packets = w0 + self.carry;
        let acks = packets / PER_ACK;
        self.carry = packets % PER_ACK;
        let region = Region::of(w0, w_max);
        let step = SimDuration::from_millis(RTT_MS).as_ps() / acks.max(1) as u64;
        let ssthresh = (b.ssthresh() / MSS as u64) as u32;
        // Linux 2.6.16 bictcp_cong_avoid slow-starts while cwnd ≤ ssthresh: the first ACK after
        // recovery (cwnd = ssthresh) adds one segment (ABC: a full MSS was acknowledged).
        let slow_start = if w0 <= ssthresh { 1.0 } else { 0.0 };
        let mut implied = None;
        // Runs of ACKs that found the window in one region: (region, window at the run's
        // start, ACKs). The closed form is applied run by run, so an RTT that crosses a region
        // boundary is predicted piecewise from the ACK at which the window crossed it.
        let mut runs: Vec<(Region, u32, u32)> = vec![];
        for i in 0..acks {
            let before = b.cwnd_segments();
            b.on_ack(&ack(self.now + SimDuration(step * i as u64), before));
            if before <= ssthresh {
                continue;
            }
            if implied.is_none() {
                // cnt was just recomputed for `before`: ACKs per +1. The growth per RTT it
                // implies, in packets: that window's ACKs (before/2) over cnt.
                implied = Some((before, b.cnt(), before as f64 / PER_ACK as f64 / b.cnt() as f64));
            }
            let r = Region::of(before, w_max);
            match runs.last_mut() {
                Some((last, _, n)) if *last == r => *n += 1,
                _ => runs.push((r, before, 1)),
            }
        }
        self.now += SimDuration::from_millis(RTT_MS);
        self.rtt += 1;
        let inc = b.cwnd_segments() - w0;
        let predicted = slow_start + runs.iter().map(|&(r, w, n)| r.closed_form(w, w_max, n as f64 / acks as f64, acks)).sum::<f64>();
        let nominal = region.nominal(w0, w_max, acks);
        let names: Vec<&str> = runs.iter().map(|r| r.0.name()).collect();
        let (w_cnt, cnt, implied) = implied.expect("at least one ACK in avoidance per RTT");
        assert_eq!(Region::of(w_cnt, w_max), region, "RTT {}: region changed on the first ACK", self.rtt);
        let expected = if region == Region::LowWindow { 0.5 } else { region.nominal(w_cnt, w_max, acks) };
        println!("| {} | {w0} | {w_max} | {} | {} | {inc} | {predicted:.2} | {nominal:.2} | {implied:.2} | {} |", self.rtt, names.join(" → "), cnt, b.delayed_ack());
        let err = inc as f64 - predicted;
        self.worst = self.worst.max(err.abs());
        assert!(err.abs() <= 1.0, "RTT {}: +{inc} vs closed form {predicted:.2} ({region:?} at w = {w0}, W_max = {w_max})", self.rtt);
        // Region exact: cnt = ⌊⌊w/g⌋·16/delayed_ack⌋ ACKs per +1, so the implied growth is g up
        // to the two floors (relative error below 1/⌊w/g⌋ + 1/cnt). At the low window cnt = w
        // (no ratio scaling): the implied growth is (w/2)/w = ½.
        let slack = if region == Region::LowWindow { 0.0 } else { expected * (expected / w_cnt as f64 + 1.0 / cnt as f64) * 2.0 };
        assert!((implied - expected).abs() <= slack + 1e-9, "RTT {}: cnt {cnt} implies +{implied:.3}/RTT, the {region:?} rule gives +{expected:.3}", self.rtt);
        match self.sums.last_mut() {
            Some((r, s, p)) if *r == region => {
                *s += inc as f64;
                *p += predicted;
            }
            _ => self.sums.push((region, inc as f64, predicted)),
        }
        inc
    }

    fn check_sums(&self) {
        for (r, s, p) in &self.sums {
            println!("{}: total +{s} vs closed form {p:.1}", r.name());
            assert!((s - p).abs() <= 2.0, "{r:?}: total +{s} vs closed form {p:.1}");
        }
    }
}

fn header() {
    println!("| RTT | cwnd | W_max | region | cnt (ACKs per +1) | increment | closed form | nominal g | g implied by cnt | delayed_ack ×16 |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
}

/// Replay RTTs through the binary search, the smooth plateau and max probing until linear
/// growth has lasted 3 RTTs.
fn replay_until_linear(r: &mut Replay, b: &mut Bic) {
    let mut linear = 0;
    while linear < 3 {
        r.rtt(b);
        if Region::of(b.cwnd_segments(), b.w_max()) == Region::ProbeLinear {
            linear += 1;
        }
        assert!(r.rtt < 100, "no linear max probing within 100 RTTs");
    }
}

#[test]
fn bic_per_rtt_increments_follow_the_2_6_16_rules() {
    // Case 1: a loss at W = 1000 segments (no earlier W_max).
    let mut b = Bic::new(BicConfig::default(), 1000 * MSS as u64, u64::MAX, MSS);
    let mut r = Replay::new();
    loss(&mut b, r.now);
    assert_eq!(b.w_max(), 1000, "W_max = the window at the loss");
    let ssthresh = (1000.0 * 819.0 / 1024.0f64).floor() as u32;
    assert_eq!(b.cwnd_segments(), ssthresh, "cwnd = ⌊0.8·W⌋ after recovery");
    println!("Case 1: loss at W = 1000, cwnd → {ssthresh}");
    header();
    // Through the binary search, the smooth plateau and max probing until linear growth has
    // lasted 3 RTTs.
    replay_until_linear(&mut r, &mut b);
    r.check_sums();
    let case1 = r.worst;

    // Case 2: fast convergence. Replay from the same loss until the binary search passes
    // cwnd 950, then lose again below W_max = 1000: W_max = w·(1 + 0.8)/2 ≈ 0.9·w.
    let mut b = Bic::new(BicConfig::default(), 1000 * MSS as u64, u64::MAX, MSS);
    let mut quiet = Replay::new();
    loss(&mut b, quiet.now);
    while b.cwnd_segments() < 950 {
        // Advance silently (the rows are case 1's).
        let (w0, packets) = (b.cwnd_segments(), b.cwnd_segments() + quiet.carry);
        quiet.carry = packets % PER_ACK;
        for i in 0..packets / PER_ACK {
            b.on_ack(&ack(quiet.now + SimDuration::from_micros(i as u64 * 100), w0));
        }
        quiet.now += SimDuration::from_millis(RTT_MS);
    }
    let w_loss = b.cwnd_segments();
    let mut r = Replay::new();
    r.now = quiet.now;
    loss(&mut b, r.now);
    let fc = (w_loss as f64 * 0.9).round() as i64;
    assert!((b.w_max() as i64 - fc).abs() <= 1, "fast convergence: W_max {} vs 0.9·{w_loss} = {fc}", b.w_max());
    println!("\nCase 2: second loss at cwnd {w_loss} < W_max 1000 (fast convergence): W_max → {}, cwnd → {}", b.w_max(), b.cwnd_segments());
    header();
    replay_until_linear(&mut r, &mut b);
    r.check_sums();
    let case2 = r.worst;

    // Case 3: a small window: loss at W = 16 → cwnd 12, Reno growth up to 14, then BIC.
    let mut b = Bic::new(BicConfig::default(), 16 * MSS as u64, u64::MAX, MSS);
    let mut r = Replay::new();
    loss(&mut b, r.now);
    println!("\nCase 3: loss at W = 16: cwnd → {}", b.cwnd_segments());
    header();
    for _ in 0..12 {
        r.rtt(&mut b);
    }
    r.check_sums();
    println!("worst per-RTT error: case 1 {case1:.2}, case 2 {case2:.2}, case 3 {:.2} segments", r.worst);
}
