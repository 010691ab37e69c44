//! Reno/NewReno window rules (RFC 5681 §3.1): slow start adds min(N, L·SMSS) per ACK,
//! congestion avoidance adds SMSS·SMSS/cwnd per ACK (≈ one SMSS per RTT), a loss sets
//! ssthresh = max(FlightSize/2, 2·SMSS), a timeout also sets cwnd = 1 SMSS (the loss window).
//! The recovery procedures themselves (Reno, NewReno, SACK) live in the connection.

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
}

impl Default for RenoConfig {
    fn default() -> Self {
        RenoConfig { abc_limit: 1, max_ssthresh: 0 }
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
}

impl Reno {
    /// A controller starting at `cwnd`/`ssthresh` bytes.
    pub fn new(name: &'static str, cfg: RenoConfig, cwnd: u64, ssthresh: u64) -> Self {
        Reno { name, cfg, cwnd, ssthresh }
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
        } else {
            self.cwnd += (mss * mss / self.cwnd).max(1);
        }
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.ssthresh = (ev.inflight / 2).max(2 * ev.mss as u64);
    }
    fn on_recovery_exit(&mut self, _ev: &RecoveryExit) {
        self.cwnd = self.ssthresh; // RFC 6582 §3.2 step 3, the "simply ssthresh" option.
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Bytes { cwnd: &mut self.cwnd, ssthresh: &mut self.ssthresh }
    }
    fn growth_bound(&self, a: &AckSample) -> u64 {
        let mss = a.mss as u64;
        if self.cwnd < self.ssthresh {
            self.cfg.slow_start_increase(self.cwnd, a.delivered, mss)
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
    }
}

crate::param_table! {
    /// `[….tcp.reno]`: Limited Slow Start (`abc_limit` is the `tcp` table's).
    RenoSpec => RenoParams {
        /// RFC 3742's max_ssthresh in segments: past it slow start grows by at most
        /// max_ssthresh/2 segments per RTT (the RFC suggests 100); 0 = off (default 0).
        max_ssthresh: u32 = 0,
    }
}

impl super::Registered for Reno {
    const NAME: &'static str = "reno";
    type Controller = Reno;
    type Config = RenoConfig;
    type Params = RenoParams;
    const RECOVERY_WITHOUT_SACK: crate::tcp::config::RecoveryKind = crate::tcp::config::RecoveryKind::Reno;
    fn config(p: &RenoParams, tcp: &super::CcContext) -> RenoConfig {
        RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: p.max_ssthresh }
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
    }
}

impl super::Registered for NewReno {
    const NAME: &'static str = "newreno";
    type Controller = Reno;
    type Config = RenoConfig;
    type Params = NewRenoParams;
    fn config(p: &NewRenoParams, tcp: &super::CcContext) -> RenoConfig {
        RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: p.max_ssthresh }
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
        let cfg = RenoConfig { abc_limit: 1, max_ssthresh: 100 };
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
        let mut r = Reno::new("newreno", RenoConfig { abc_limit: 1, max_ssthresh: 0 }, 400_000, u64::MAX);
        r.on_ack(&ack(1000, true));
        assert_eq!(r.cwnd(), 401_000);
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
