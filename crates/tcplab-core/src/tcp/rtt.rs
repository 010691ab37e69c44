//! RTT estimation and the retransmission timeout.
//!
//! Two estimators: RFC 6298 (SRTT/RTTVAR with α = 1/8, β = 1/4, RTO = SRTT + max(G, 4·RTTVAR))
//! and the Linux one (`tcp_rtt_estimator`/`tcp_set_rto`, 2.6.x and later): srtt with gain 1/8,
//! mdev with gain 1/4 and extra damping of samples below srtt, rttvar = the per-RTT maximum of
//! mdev floored at `rto_min`, RTO = srtt + rttvar. Linux works in jiffies; here every value is
//! in picoseconds and `RtoPolicy::granularity` reproduces a coarse clock when wanted. The BSD
//! one (4.4BSD/FreeBSD `tcp_xmit_timer`, FreeBSD 2.2–4.x scaling) works in whole slow-timer
//! ticks (`RtoPolicy::granularity`, 500 ms): see `RttEstimatorKind::Bsd`.
//!
//! `RtoPolicy` turns the estimator's base RTO and the number of consecutive backoffs into the
//! timer value: exponential (RFC 6298 §5.5), linear, or hybrid (exponential, then linear).
//! FGTCP, LNRTCP and HYBTCP (study 001) are configurations of this policy, not forks.

use crate::histogram::LogHistogram;
use crate::units::SimDuration;

/// Which estimator computes the base RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RttEstimatorKind {
    /// RFC 6298.
    Rfc6298,
    /// Linux `tcp_rtt_estimator`: rttvar floored at `rto_min` (so RTO ≈ SRTT + max(4·RTTVAR, rto_min)).
    Linux,
    /// BSD `tcp_xmit_timer` in slow-timer ticks (the policy's granularity): a sample is
    /// 1 + the ticks it spans (BSD's `t_rtt` starts at 1), srtt scaled by 32 and rttvar by 16
    /// (`TCP_RTT_SHIFT` 5, `TCP_RTTVAR_SHIFT` 4, `TCP_DELTA_SHIFT` 2), REXMTVAL =
    /// max(`rto_min`, (srtt/8 + rttvar) / 4) ticks, and the timer after a sample
    /// RANGESET(REXMTVAL, max(`rto_min`, rtt + 2 ticks), `rto_max`): 3 ticks (1.5 s) on a LAN.
    /// A backed-off timer is REXMTVAL·2ⁿ (`tcp_backoff`; its 64× cap is `rto_max` = 64 s, since
    /// REXMTVAL is at least TCPTV_MIN, 1 s), not the floored value: `backoff_base`.
    /// MODEL: the ticks a sample spans are ⌊rtt / tick⌋ (BSD counts tick boundaries crossed).
    Bsd,
}

/// How consecutive timeouts grow the RTO.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backoff {
    /// RTO·2^n (RFC 6298 §5.5).
    Exponential,
    /// RTO·(n+1).
    Linear,
    /// RTO·2^n for the first k = `switch_after` backoffs, then one more RTO per further
    /// backoff: RTO·(2^k + (n − k)) for n > k.
    /// ASSUMPTION(p1): study 001 names HYBTCP "exponential then linear" without a formula.
    Hybrid {
        /// Number of exponential doublings before growth turns linear.
        switch_after: u32,
    },
    /// One more RTO per backoff for the first k = `switch_after` backoffs, then doubling:
    /// RTO·(n+1) for n ≤ k, RTO·(k+1)·2^(n−k) beyond (the other reading of "exponential and
    /// linear combined"; Linux's thin-stream linear timeouts, k = 6, are this shape).
    LinearThenExponential {
        /// Number of linear steps before growth turns exponential.
        switch_after: u32,
    },
}

/// When consecutive timeouts are forgotten (the backoff count returns to 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackoffReset {
    /// On a new RTT sample (RFC 6298 §5.7 with Karn's rule; Linux): an ACK of retransmitted
    /// data keeps the backed-off timer.
    RttSample,
    /// On every ACK of new data (ns-2's `TcpAgent::newack` and FullTcp: `t_backoff_ = 1`).
    NewAck,
}

/// The retransmission-timer policy, as data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoPolicy {
    /// Lower bound on the RTO (RFC 6298: 1 s; Linux: 200 ms; FGTCP: hundreds of µs).
    pub min: SimDuration,
    /// Upper bound on the RTO, backoff included (RFC 6298: ≥ 60 s; Linux: 120 s).
    pub max: SimDuration,
    /// RTO before the first RTT sample (RFC 6298: 1 s; Linux 2.6: 3 s).
    pub initial: SimDuration,
    /// Clock granularity G: the RTO is rounded up to a multiple of it (0 = exact).
    pub granularity: SimDuration,
    /// Backoff rule.
    pub backoff: Backoff,
    /// When the backoff is forgotten.
    pub backoff_reset: BackoffReset,
    /// Randomisation: each timer runs RTO·(1 + u), u uniform in [0, randomize), at most `max`
    /// (Vasudevan et al., SIGCOMM 2009: 0.5; 0 = none).
    pub randomize: f64,
    /// BSD's slop (FreeBSD 4.x `tcp_rexmit_slop`, 200 ms): `TCPT_RANGESET` adds it to every
    /// timer value before the floor and the ceiling — after an RTT sample (`RttEstimator`, BSD
    /// only) and on every backoff (`timeout` with n > 0) — but not to the initial RTO, which
    /// FreeBSD sets without it (`tcp_newtcpcb`). 0 = none (default).
    pub slop: SimDuration,
}

impl Default for RtoPolicy {
    fn default() -> Self {
        RtoPolicy {
            min: SimDuration::from_millis(200),
            max: SimDuration::from_secs(60),
            initial: SimDuration::from_secs(1),
            granularity: SimDuration::ZERO,
            backoff: Backoff::Exponential,
            backoff_reset: BackoffReset::RttSample,
            randomize: 0.0,
            slop: SimDuration::ZERO,
        }
    }
}

impl RtoPolicy {
    /// The timer value after `n` consecutive backoffs, from the estimator's base RTO.
    pub fn timeout(&self, base: SimDuration, n: u32) -> SimDuration {
        let b = base.as_ps() as u128;
        let mult: u128 = match self.backoff {
            Backoff::Exponential => 1u128 << n.min(64),
            Backoff::Linear => n as u128 + 1,
            Backoff::Hybrid { switch_after: k } => {
                if n <= k {
                    1u128 << n.min(64)
                } else {
                    (1u128 << k.min(64)) + (n - k) as u128
                }
            }
            Backoff::LinearThenExponential { switch_after: k } => {
                if n <= k {
                    n as u128 + 1
                } else {
                    (k as u128 + 1).saturating_mul(1u128 << (n - k).min(64))
                }
            }
        };
        // FreeBSD 4.x tcp_timer_rexmt: RANGESET(REXMTVAL·tcp_backoff[n] + slop, rttmin, max).
        let slop = if n > 0 { self.slop.as_ps() as u128 } else { 0 };
        let v = (b.saturating_mul(mult).saturating_add(slop)).min(self.max.as_ps() as u128) as u64;
        SimDuration(v).round_up_to(self.granularity).min(self.max.round_up_to(self.granularity))
    }
}

/// Round-trip time estimator.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    kind: RttEstimatorKind,
    samples: u64,
    srtt: Option<SimDuration>,
    rttvar: SimDuration,
    latest: SimDuration,
    min_rtt: SimDuration,
    // Linux state, scaled as in the kernel: srtt8 = 8·srtt, mdev4 = 4·mdev.
    srtt8: i128,
    mdev4: i128,
    mdev_max: i128,
    lx_rttvar: i128,
    rtt_seq: u64,
    // BSD state, in ticks, scaled as in the kernel: srtt32 = 32·srtt, rttvar16 = 16·rttvar;
    // `bsd_rxtcur` the timer after the last sample, ticks.
    srtt32: i64,
    rttvar16: i64,
    bsd_rxtcur: i64,
    /// Every sample, ps (the summary's RTT percentiles).
    hist: LogHistogram,
}

impl RttEstimator {
    /// A fresh estimator.
    pub fn new(kind: RttEstimatorKind) -> Self {
        RttEstimator {
            kind,
            samples: 0,
            srtt: None,
            rttvar: SimDuration::ZERO,
            latest: SimDuration::ZERO,
            min_rtt: SimDuration::MAX,
            srtt8: 0,
            mdev4: 0,
            mdev_max: 0,
            lx_rttvar: 0,
            rtt_seq: 0,
            srtt32: 0,
            rttvar16: 0,
            bsd_rxtcur: 0,
            hist: LogHistogram::new(),
        }
    }

    /// Smoothed RTT, once there is a sample.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.srtt
    }

    /// RTT variation (RFC 6298 RTTVAR, or Linux `rttvar`).
    pub fn rttvar(&self) -> SimDuration {
        self.rttvar
    }

    /// Latest sample.
    pub fn latest(&self) -> SimDuration {
        self.latest
    }

    /// Samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Smallest sample seen (`SimDuration::MAX` before any).
    pub fn min_rtt(&self) -> SimDuration {
        self.min_rtt
    }

    /// Every sample so far, ps.
    pub fn histogram(&self) -> &LogHistogram {
        &self.hist
    }

    /// Feed a sample. `snd_una`/`snd_nxt` drive the Linux per-RTT rttvar decay.
    pub fn sample(&mut self, rtt: SimDuration, policy: &RtoPolicy, snd_una: u64, snd_nxt: u64) {
        self.latest = rtt;
        self.samples += 1;
        self.hist.record(rtt.as_ps());
        self.min_rtt = self.min_rtt.min(rtt);
        match self.kind {
            RttEstimatorKind::Rfc6298 => match self.srtt {
                None => {
                    self.srtt = Some(rtt);
                    self.rttvar = SimDuration(rtt.as_ps() / 2);
                }
                Some(s) => {
                    let (s, r, v) = (s.as_ps() as i128, rtt.as_ps() as i128, self.rttvar.as_ps() as i128);
                    let v = v - v / 4 + (s - r).abs() / 4;
                    let s = s - s / 8 + r / 8;
                    self.rttvar = SimDuration(v as u64);
                    self.srtt = Some(SimDuration(s as u64));
                }
            },
            RttEstimatorKind::Linux => {
                // net/ipv4/tcp_input.c tcp_rtt_estimator (2.6.16…): same arithmetic, in ps.
                let rto_min = policy.min.as_ps() as i128;
                let mut m = rtt.as_ps() as i128;
                if self.srtt8 != 0 {
                    m -= self.srtt8 >> 3;
                    self.srtt8 += m;
                    if m < 0 {
                        m = -m;
                        m -= self.mdev4 >> 2;
                        if m > 0 {
                            m >>= 3;
                        }
                    } else {
                        m -= self.mdev4 >> 2;
                    }
                    self.mdev4 += m;
                    if self.mdev4 > self.mdev_max {
                        self.mdev_max = self.mdev4;
                        if self.mdev_max > self.lx_rttvar {
                            self.lx_rttvar = self.mdev_max;
                        }
                    }
                    if snd_una > self.rtt_seq {
                        if self.mdev_max < self.lx_rttvar {
                            self.lx_rttvar -= (self.lx_rttvar - self.mdev_max) >> 2;
                        }
                        self.rtt_seq = snd_nxt;
                        self.mdev_max = rto_min;
                    }
                } else {
                    self.srtt8 = m << 3;
                    self.mdev4 = m << 1;
                    self.mdev_max = self.mdev4.max(rto_min);
                    self.lx_rttvar = self.mdev_max;
                    self.rtt_seq = snd_nxt;
                }
                self.srtt = Some(SimDuration((self.srtt8 >> 3).max(1) as u64));
                self.rttvar = SimDuration(self.lx_rttvar.max(0) as u64);
            }
            RttEstimatorKind::Bsd => self.bsd_sample(rtt, policy),
        }
    }

    /// `tcp_xmit_timer` (FreeBSD 2.2–4.x): the arithmetic in ticks.
    fn bsd_sample(&mut self, rtt: SimDuration, policy: &RtoPolicy) {
        let tick = policy.granularity.as_ps().max(1);
        let rtt_ticks = 1 + (rtt.as_ps() / tick) as i64;
        if self.srtt32 != 0 {
            let mut delta = ((rtt_ticks - 1) << 2) - (self.srtt32 >> 3);
            self.srtt32 += delta;
            if self.srtt32 <= 0 {
                self.srtt32 = 1;
            }
            delta = delta.abs() - (self.rttvar16 >> 2);
            self.rttvar16 += delta;
            if self.rttvar16 <= 0 {
                self.rttvar16 = 1;
            }
        } else {
            self.srtt32 = rtt_ticks << 5;
            self.rttvar16 = rtt_ticks << 3;
        }
        let (min, max) = Self::bsd_bounds(policy);
        // TCPT_RANGESET(t_rxtcur, REXMTVAL, max(rttmin, rtt + 2), REXMTMAX), with FreeBSD 4.x's
        // slop added to the value before the bounds (0 before 4.x: tcp_timer.h 1.18.2.1).
        let slop = (policy.slop.as_ps() / tick) as i64;
        self.bsd_rxtcur = (self.bsd_rexmtval(policy) + slop).max(min.max(rtt_ticks + 2)).min(max);
        let t = |ticks_32: i64, scale: i64| SimDuration((ticks_32 as u128 * tick as u128 / scale as u128) as u64);
        self.srtt = Some(t(self.srtt32, 32).max(SimDuration(1)));
        self.rttvar = t(self.rttvar16, 16);
    }

    /// `rto_min` and `rto_max` in whole ticks.
    fn bsd_bounds(policy: &RtoPolicy) -> (i64, i64) {
        let tick = policy.granularity.as_ps().max(1);
        (policy.min.as_ps().div_ceil(tick) as i64, (policy.max.as_ps() / tick).max(1) as i64)
    }

    /// `TCP_REXMTVAL`: max(rttmin, (srtt/8 + rttvar) / 4) ticks, from the scaled state.
    fn bsd_rexmtval(&self, policy: &RtoPolicy) -> i64 {
        let (min, _) = Self::bsd_bounds(policy);
        (((self.srtt32 >> 3) + self.rttvar16) >> 2).max(min)
    }

    /// The RTO that backoffs multiply: the base RTO, except for BSD, whose backed-off timer is
    /// REXMTVAL·2ⁿ, not the timer after the last sample (floored at rtt + 2 ticks).
    pub fn backoff_base(&self, policy: &RtoPolicy) -> SimDuration {
        if self.kind != RttEstimatorKind::Bsd || self.srtt.is_none() {
            return self.base_rto(policy);
        }
        let (_, max) = Self::bsd_bounds(policy);
        SimDuration(self.bsd_rexmtval(policy).min(max) as u64 * policy.granularity.as_ps().max(1))
    }
    /// The base RTO (before backoff): `policy.initial` until the first sample.
    pub fn base_rto(&self, policy: &RtoPolicy) -> SimDuration {
        let Some(srtt) = self.srtt else { return policy.initial };
        let rto = match self.kind {
            RttEstimatorKind::Rfc6298 => srtt + policy.granularity.max(self.rttvar.saturating_mul(4)),
            RttEstimatorKind::Linux => srtt + self.rttvar,
            RttEstimatorKind::Bsd => SimDuration(self.bsd_rxtcur as u64 * policy.granularity.as_ps().max(1)),
        };
        rto.max(policy.min).min(policy.max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: u64) -> SimDuration {
        SimDuration::from_millis(x)
    }

    #[test]
    fn rfc6298_first_and_later_samples() {
        let p = RtoPolicy { min: ms(1), ..RtoPolicy::default() };
        let mut e = RttEstimator::new(RttEstimatorKind::Rfc6298);
        assert_eq!(e.base_rto(&p), SimDuration::from_secs(1));
        e.sample(ms(100), &p, 0, 0);
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        assert_eq!(e.base_rto(&p), ms(300));
        e.sample(ms(200), &p, 0, 0);
        // RTTVAR = 3/4·50 + 1/4·100 = 62.5; SRTT = 7/8·100 + 1/8·200 = 112.5
        assert_eq!(e.rttvar(), SimDuration::from_micros(62_500));
        assert_eq!(e.srtt(), Some(SimDuration::from_micros(112_500)));
        assert_eq!(e.base_rto(&p), SimDuration::from_micros(362_500));
    }

    #[test]
    fn rto_min_floors() {
        let p = RtoPolicy::default();
        let mut e = RttEstimator::new(RttEstimatorKind::Rfc6298);
        e.sample(SimDuration::from_micros(100), &p, 0, 0);
        assert_eq!(e.base_rto(&p), ms(200));
    }

    #[test]
    fn linux_first_sample_gives_three_rtt_and_floor() {
        let p = RtoPolicy::default();
        let mut e = RttEstimator::new(RttEstimatorKind::Linux);
        e.sample(ms(300), &p, 0, 10);
        // srtt = R, mdev = R/2 → rttvar = max(4·R/2, 200ms) = 2R: RTO = 3R (algorithms.md §2.6).
        assert_eq!(e.base_rto(&p), ms(900));
        let mut e = RttEstimator::new(RttEstimatorKind::Linux);
        e.sample(SimDuration::from_micros(200), &p, 0, 10);
        // Tiny RTT: rttvar floored at rto_min → RTO = srtt + 200 ms, not max(srtt+4var, 200ms).
        assert_eq!(e.base_rto(&p), ms(200) + SimDuration::from_micros(200));
        // Many identical samples: mdev decays, rttvar stays at the floor after each RTT.
        for i in 0..50 {
            e.sample(SimDuration::from_micros(200), &p, 20 + i * 10, 30 + i * 10);
        }
        assert_eq!(e.base_rto(&p), ms(200) + SimDuration::from_micros(200));
    }

    #[test]
    fn backoff_policies() {
        let base = ms(100);
        let mut p = RtoPolicy { max: SimDuration::from_secs(60), ..RtoPolicy::default() };
        let seq = |p: &RtoPolicy| (0..6).map(|n| p.timeout(base, n).as_ps() / 1_000_000_000).collect::<Vec<_>>();
        assert_eq!(seq(&p), vec![100, 200, 400, 800, 1600, 3200]);
        p.backoff = Backoff::Linear;
        assert_eq!(seq(&p), vec![100, 200, 300, 400, 500, 600]);
        p.backoff = Backoff::Hybrid { switch_after: 2 };
        assert_eq!(seq(&p), vec![100, 200, 400, 500, 600, 700]);
        p.backoff = Backoff::Exponential;
        p.max = ms(1000);
        assert_eq!(p.timeout(base, 10), ms(1000));
        assert_eq!(p.timeout(base, 200), ms(1000), "huge backoff counts saturate");
        p.granularity = ms(500);
        assert_eq!(p.timeout(ms(120), 0), ms(500));
    }
}
