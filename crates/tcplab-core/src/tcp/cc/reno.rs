//! Reno/NewReno window rules (RFC 5681 §3.1): slow start adds min(N, L·SMSS) per ACK,
//! congestion avoidance adds SMSS·SMSS/cwnd per ACK (≈ one SMSS per RTT), a loss sets
//! ssthresh = max(FlightSize/2, 2·SMSS), a timeout also sets cwnd = 1 SMSS (the loss window).
//! The recovery procedures themselves (Reno, NewReno, SACK) live in the connection. Joined to
//! a coupled group (`coupling`), congestion avoidance is RFC 6356's linked increase.

use super::coupling::{ControllerInput, CoupledMember};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent, WindowState};

/// Parameters of the Reno window rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RenoConfig {
    /// Slow-start byte-counting limit L in segments (RFC 3465 / RFC 5681: 1 = at most one SMSS
    /// per ACK; 2 = appropriate byte counting with L = 2).
    pub abc_limit: u32,
    /// Limited Slow Start (RFC 3742): above this many segments of cwnd, slow start adds
    /// MSS/K per ACK with K = ⌊cwnd / (max_ssthresh/2)⌋, at most max_ssthresh/2 segments per
    /// RTT; 0 = off (RFC 5681's slow start).
    pub max_ssthresh: u32,
    /// Congestion avoidance adds exactly SMSS²/cwnd per ACK, the fraction of a byte carried to
    /// the next ACK, as Linux's per-ACK counter `snd_cwnd_cnt` (one segment per cwnd ACKs);
    /// false: rounded up to one byte when smaller (RFC 5681 §3.1), which above SMSS² bytes of
    /// window (2.1 MB at SMSS 1460) grows faster than one segment per RTT.
    pub exact_increase: bool,
}

impl Default for RenoConfig {
    fn default() -> Self {
        RenoConfig { abc_limit: 1, max_ssthresh: 0, exact_increase: false }
    }
}

impl RenoConfig {
    /// Slow start's increase for an ACK of `delivered` new bytes at `cwnd` (RFC 5681 §3.1 with
    /// RFC 3465's limit, then RFC 3742's when cwnd is past max_ssthresh); HighSpeed TCP's too.
    pub(super) fn slow_start_increase(&self, cwnd: u64, delivered: u64, mss: u64) -> u64 {
        let inc = match self.abc_limit {
            // No byte counting: one segment per ACK of new data, however little it
            // acknowledges (RFC 2581 before RFC 3465; ns-2's agents).
            0 => mss,
            // RFC 3465 §2.2 / RFC 5681 §3.1: min(N, L·SMSS), N the bytes newly
            // delivered (Linux `acked_sacked`), not data already SACKed.
            l => delivered.min(l as u64 * mss),
        };
        let max_ss = self.max_ssthresh as u64 * mss;
        if max_ss > 0 && cwnd > max_ss {
            // RFC 3742 §2: K = int(cwnd / (0.5 max_ssthresh)); cwnd += int(MSS / K).
            let k = cwnd / (max_ss / 2).max(1);
            inc.min((mss / k.max(1)).max(1))
        } else {
            inc
        }
    }
}

/// Reno/NewReno controller state.
#[derive(Clone, Debug)]
pub struct Reno {
    name: &'static str,
    cfg: RenoConfig,
    cwnd: u64,
    ssthresh: u64,
    /// The coupled group this controller is a member of (RFC 6356), if any.
    coupled: Option<CoupledMember>,
    /// Fraction of a byte of congestion-avoidance increase carried to the next ACK (exact and
    /// coupled increases), in [0, 1).
    carry: f64,
}

impl Reno {
    /// A controller starting at `cwnd`/`ssthresh` bytes.
    pub fn new(name: &'static str, cfg: RenoConfig, cwnd: u64, ssthresh: u64) -> Self {
        Reno { name, cfg, cwnd, ssthresh, coupled: None, carry: 0.0 }
    }

    /// Congestion avoidance's increase for one ACK at the current window, as a real number of
    /// bytes: SMSS²/cwnd, or RFC 6356's coupled increase (one ACK counting one SMSS, as
    /// RFC 5681 eq. (3) counts).
    fn avoidance_increase(&self, mss: u64) -> f64 {
        match &self.coupled {
            Some(m) => m.increase(self.cwnd, mss, mss),
            None => (mss * mss) as f64 / self.cwnd.max(1) as f64,
        }
    }

    /// Publish the window to the coupled group (nothing when uncoupled).
    fn publish(&self, window: u64, srtt: Option<crate::units::SimDuration>) {
        if let Some(m) = &self.coupled {
            m.publish(window, srtt);
        }
    }
}

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        self.name
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, a: &AckSample) {
        if !a.cwnd_limited {
            return; // RFC 7661: do not grow a window the sender is not using.
        }
        let mss = a.mss as u64;
        if self.cwnd < self.ssthresh {
            self.cwnd += self.cfg.slow_start_increase(self.cwnd, a.delivered, mss);
        } else if self.coupled.is_some() || self.cfg.exact_increase {
            self.publish(self.cwnd, a.srtt);
            let inc = self.carry + self.avoidance_increase(mss);
            let whole = inc.floor();
            self.carry = inc - whole;
            self.cwnd += whole as u64;
        } else {
            self.cwnd += (mss * mss / self.cwnd).max(1);
        }
        self.publish(self.cwnd, a.srtt);
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.ssthresh = (ev.inflight / 2).max(2 * ev.mss as u64);
        // The connection manages the window during recovery; the group counts the window this
        // member will continue from.
        self.publish(self.ssthresh, None);
    }
    fn on_recovery_exit(&mut self, _ev: &RecoveryExit) {
        self.cwnd = self.ssthresh; // RFC 6582 §3.2 step 3, the "simply ssthresh" option.
        self.publish(self.cwnd, None);
    }
    fn attach(&mut self, input: &ControllerInput) -> bool {
        match input {
            ControllerInput::Coupled(m) => {
                m.publish(self.cwnd, None);
                self.coupled = Some(m.clone());
                true
            }
        }
    }
    fn on_sender_done(&mut self) {
        if let Some(m) = &self.coupled {
            m.leave();
        }
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Bytes { cwnd: &mut self.cwnd, ssthresh: &mut self.ssthresh }
    }
    fn growth_bound(&self, a: &AckSample) -> u64 {
        let mss = a.mss as u64;
        if self.cwnd < self.ssthresh {
            self.cfg.slow_start_increase(self.cwnd, a.delivered, mss)
        } else if self.coupled.is_some() || self.cfg.exact_increase {
            // SMSS²/cwnd plus a carried fraction below one byte (the coupled increase is
            // never more than the uncoupled one): one byte above its floor even when it is
            // whole, as the f64 carry (a fraction kept at a finer ulp) can round up to 1.
            (mss * mss / self.cwnd.max(1) + 1).max(1)
        } else {
            (mss * mss / self.cwnd.max(1)).max(1) // RFC 5681 eq. (3)
        }
    }
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        let s = (ev.inflight / 2).max(2 * ev.mss as u64); // RFC 5681 eq. (4)
        (s, s)
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            // RFC 5681 eq. (4); on repeated timeouts ssthresh is not halved again (RFC 5681 §3.1).
            self.ssthresh = (ev.inflight / 2).max(2 * ev.mss as u64);
        }
        self.cwnd = ev.mss as u64;
        self.publish(self.cwnd, None);
    }
}

crate::param_table! {
    /// `[….tcp.reno]`: Limited Slow Start (`abc_limit` is the `tcp` table's).
    RenoSpec => RenoParams {
        /// RFC 3742's max_ssthresh in segments: past it slow start grows by at most
        /// max_ssthresh/2 segments per RTT (the RFC suggests 100); 0 = off (default 0).
        max_ssthresh: u32 = 0,
        /// Congestion avoidance adds exactly SMSS²/cwnd per ACK, carrying fractions of a byte
        /// (Linux's `snd_cwnd_cnt`), instead of at least one byte (RFC 5681 §3.1) (default
        /// false; true in the linux-2.4.18 profile).
        exact_increase: bool = false,
    }
}

impl super::Registered for Reno {
    const NAME: &'static str = "reno";
    type Controller = Reno;
    type Config = RenoConfig;
    type Params = RenoParams;
    const RECOVERY_WITHOUT_SACK: crate::tcp::config::RecoveryKind = crate::tcp::config::RecoveryKind::Reno;
    fn config(p: &RenoParams, tcp: &super::CcContext) -> RenoConfig {
        RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: p.max_ssthresh, exact_increase: p.exact_increase }
    }
    fn build(cfg: &RenoConfig, cwnd: u64, ssthresh: u64, _mss: u32) -> Reno {
        Reno::new("reno", *cfg, cwnd, ssthresh)
    }
}

/// NewReno's registration: Reno's window rules under its own name, with RFC 6582 recovery
/// without SACK.
pub struct NewReno;

crate::param_table! {
    /// `[….tcp.newreno]`: Limited Slow Start (`abc_limit` is the `tcp` table's).
    NewRenoSpec => NewRenoParams {
        /// RFC 3742's max_ssthresh in segments: past it slow start grows by at most
        /// max_ssthresh/2 segments per RTT (the RFC suggests 100); 0 = off (default 0).
        max_ssthresh: u32 = 0,
        /// Congestion avoidance adds exactly SMSS²/cwnd per ACK, carrying fractions of a byte
        /// (Linux's `snd_cwnd_cnt`), instead of at least one byte (RFC 5681 §3.1) (default
        /// false; true in the linux-2.4.18 profile).
        exact_increase: bool = false,
    }
}

impl super::Registered for NewReno {
    const NAME: &'static str = "newreno";
    type Controller = Reno;
    type Config = RenoConfig;
    type Params = NewRenoParams;
    fn config(p: &NewRenoParams, tcp: &super::CcContext) -> RenoConfig {
        RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: p.max_ssthresh, exact_increase: p.exact_increase }
    }
    fn build(cfg: &RenoConfig, cwnd: u64, ssthresh: u64, _mss: u32) -> Reno {
        Reno::new("newreno", *cfg, cwnd, ssthresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::{SimDuration, SimTime};

    fn ack(bytes: u64, limited: bool) -> AckSample {
        AckSample {
            now: SimTime::ZERO,
            bytes_acked: bytes,
            packets_acked: 1,
            delivered: bytes,
            mss: 1000,
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

    #[test]
    fn slow_start_then_avoidance() {
        let mut r = Reno::new("newreno", RenoConfig::default(), 2000, 4000);
        r.on_ack(&ack(2000, true));
        assert_eq!(r.cwnd(), 3000, "at most one SMSS per ACK in slow start");
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 4000);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 4250, "SMSS²/cwnd in avoidance");
        r.on_ack(&ack(1000, false));
        assert_eq!(r.cwnd(), 4250, "no growth when not cwnd-limited");
    }

    #[test]
    fn limited_slow_start_adds_at_most_half_max_ssthresh_per_window() {
        // RFC 3742 with max_ssthresh = 100 segments (MSS 1000): up to 100 segments one
        // segment per ACK; at 150 segments K = 3, a third of a segment per ACK; at 250, K = 5.
        let cfg = RenoConfig { abc_limit: 1, max_ssthresh: 100, exact_increase: false };
        let mut r = Reno::new("newreno", cfg, 100_000, u64::MAX);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 101_000, "at max_ssthresh itself: one segment");
        let mut r = Reno::new("newreno", cfg, 150_000, u64::MAX);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 150_333);
        let mut r = Reno::new("newreno", cfg, 250_000, u64::MAX);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 250_200);
        // One window of ACKs (one per segment) from 400 segments grows ≤ 50 segments, where
        // RFC 5681 would double it.
        let mut r = Reno::new("newreno", cfg, 400_000, u64::MAX);
        for _ in 0..400 {
            r.on_ack(&ack(1000, true));
        }
        let grown = (r.cwnd() - 400_000) / 1000;
        assert!((45..=50).contains(&grown), "grew {grown} segments in one window");
        // Off (0): plain slow start.
        let mut r = Reno::new("newreno", RenoConfig { abc_limit: 1, max_ssthresh: 0, exact_increase: false }, 400_000, u64::MAX);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 401_000);
    }

    #[test]
    fn exact_increase_carries_fractions_where_rfc_5681_rounds_up() {
        // 4000 segments of 1000 bytes: SMSS²/cwnd = 0.25 byte per ACK. One window of ACKs adds
        // one segment exactly (Linux's snd_cwnd_cnt); RFC 5681's rounding adds a byte per ACK,
        // four segments.
        let exact = RenoConfig { exact_increase: true, ..RenoConfig::default() };
        let (mut e, mut r) = (Reno::new("newreno", exact, 4_000_000, 1), Reno::new("newreno", RenoConfig::default(), 4_000_000, 1));
        for _ in 0..4000 {
            let before = e.cwnd();
            e.on_ack(&ack(1000, true));
            assert!(e.cwnd() - before <= e.growth_bound(&ack(1000, true)).max(1));
            r.on_ack(&ack(1000, true));
        }
        assert!((999..=1000).contains(&(e.cwnd() - 4_000_000)), "exact: grew {} bytes", e.cwnd() - 4_000_000);
        assert_eq!(r.cwnd() - 4_000_000, 4000, "RFC 5681: one byte per ACK");
        // Below SMSS² bytes the two agree to within the carried fraction.
        let (mut e, mut r) = (Reno::new("newreno", exact, 100_000, 1), Reno::new("newreno", RenoConfig::default(), 100_000, 1));
        for _ in 0..100 {
            e.on_ack(&ack(1000, true));
            r.on_ack(&ack(1000, true));
        }
        assert!(e.cwnd().abs_diff(r.cwnd()) <= 100, "{} vs {}", e.cwnd(), r.cwnd());
    }

    #[test]
    fn coupled_members_grow_by_rfc_6356s_share() {
        use crate::tcp::cc::coupling::{ControllerInput, CoupledGroup};
        // Two members at 100 segments and equal RTTs: α = 1/2, cwnd_total = 200 segments, so a
        // member's ACK adds α·SMSS²/total = a quarter of its uncoupled increase, and a window
        // of ACKs a quarter segment; the decrease stays the member's own.
        let g = CoupledGroup::shared();
        let mut m: Vec<Reno> = (0..2).map(|_| Reno::new("newreno", RenoConfig::default(), 100_000, 1)).collect();
        for r in &mut m {
            assert!(r.attach(&ControllerInput::Coupled(CoupledGroup::join(&g))));
        }
        let mut a = ack(1000, true);
        a.srtt = Some(SimDuration::from_millis(100));
        for r in &mut m {
            r.on_ack(&a); // publish the RTT
        }
        let start = m[0].cwnd();
        for _ in 0..100 {
            m[0].on_ack(&a);
        }
        let grown = m[0].cwnd() - start;
        assert!((240..=260).contains(&grown), "a window of coupled ACKs added {grown} bytes (uncoupled: ~1000)");
        m[0].on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 100_000, mss: 1000 });
        assert_eq!(m[0].ssthresh(), 50_000, "the decrease is the member's own");
        // The member that finished leaves: the other is then plain NewReno (α = 1, own total).
        m[0].on_sender_done();
        let start = m[1].cwnd();
        for _ in 0..100 {
            m[1].on_ack(&a);
        }
        assert!((985..=1000).contains(&(m[1].cwnd() - start)), "alone: {}", m[1].cwnd() - start);
    }

    #[test]
    fn loss_and_timeout() {
        let mut r = Reno::new("newreno", RenoConfig::default(), 10_000, u64::MAX);
        r.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 10_000, mss: 1000 });
        assert_eq!(r.ssthresh(), 5000);
        r.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: 1000, window: None });
        assert_eq!(r.cwnd(), 5000);
        r.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 3000, mss: 1000, backoffs: 1 });
        assert_eq!((r.cwnd(), r.ssthresh()), (1000, 2000));
        r.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 1000, mss: 1000, backoffs: 2 });
        assert_eq!(r.ssthresh(), 2000, "repeated timeouts keep ssthresh");
    }
}
