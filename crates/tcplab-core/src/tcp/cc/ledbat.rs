//! LEDBAT (RFC 6817, §2.4.2's sender): a less-than-best-effort controller that holds the
//! queueing delay it sees near TARGET. Every ACK of new data gives a one-way delay sample;
//!
//! - base delay = the minimum over the last BASE_HISTORY per-minute minima of the samples
//!   (the path's delay without queueing, a constant clock offset included);
//! - current delay = FILTER(the last CURRENT_FILTER samples), FILTER = MIN;
//! - queuing_delay = current − base, off_target = (TARGET − queuing_delay)/TARGET;
//! - cwnd += GAIN·off_target·bytes_newly_acked·MSS/cwnd (a decrease when off_target < 0),
//!   then cwnd ≤ flightsize + ALLOWED_INCREASE·MSS, then cwnd ≥ MIN_CWND·MSS;
//! - on a loss, at most once per RTT: cwnd = min(cwnd, max(cwnd/2, MIN_CWND·MSS));
//! - when no ACK arrives for a CTO (here the connection's retransmission timeout): cwnd = 1 MSS
//!   and the current delays are forgotten.
//!
//! The one-way delay comes from TCP timestamps (`owd = "timestamps"`): TSval − TSecr of the ACK
//! (the peer's clock when it sent the ACK less our clock when we stamped the segment it echoes),
//! in ticks of our timestamp clock, counted from the first sample (so the 32-bit difference
//! never wraps between samples). The unknown offset between the clocks is a constant, which the
//! base delay removes.
//!
//! ASSUMPTIONS (each stated where it acts):
//!
//! - No slow start (RFC 6817 §2.4.2: the sender's pseudo-code has none; cwnd starts at
//!   INIT_CWND·MSS and every ACK follows the rule above; implementations differ — libutp has
//!   none, Linux-like ports slow-start — this follows the RFC). `init_cwnd` replaces the
//!   connection's initial window. ssthresh does not govern growth: it only records the window a
//!   loss leaves, for the connection's recovery.
//! - bytes_newly_acked is `AckSample::delivered` (bytes newly acknowledged or SACKed), the
//!   project's measure of growth, so SACKed data counts once.
//! - Growth (not a decrease) needs a cwnd-limited sender (RFC 7661, as every controller here and
//!   the connection's checker require); with ALLOWED_INCREASE = 1 the RFC's cap already implies
//!   it under the `flight` rule.
//! - The peer's timestamp clock ticks at our `ts_tick` rate (the simulator's hosts share one
//!   clock); a skewed clock (RFC 6817 Appendix A.2) is not modelled. TSval − TSecr also holds the
//!   receiver's ACK delay (a delayed ACK echoes the first segment it covers, RFC 7323 §4.3), which
//!   the MIN filter mostly removes; samples have one-tick (1 ms) resolution.
//! - Samples come only from ACKs given to `on_ack` (outside recovery and timeout repair).
//! - A queuing delay below zero (the filter can hold samples older than the base history only
//!   with fewer than CURRENT_FILTER samples in BASE_HISTORY minutes) counts as zero, so
//!   off_target ≤ 1.
//! - "Once per RTT" for a loss uses the last smoothed RTT the connection reported (the last RTT
//!   sample before one); with none yet, every loss cuts. The connection itself enters fast
//!   recovery at most once per window of data.
//! - Without timestamps there is no delay sample: cwnd stays at INIT_CWND, capped and floored.
//!   The scenario refuses `cc = "ledbat"` with `tcp.timestamps = false` (`check_selected`); a
//!   peer that does not answer with timestamps leaves LEDBAT there.

use std::collections::VecDeque;

use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent, WindowState};
use crate::units::{SimDuration, SimTime};

/// The span of one base-delay minimum (RFC 6817 §2.4.2: one minimum per minute).
pub const BASE_INTERVAL: SimDuration = SimDuration::from_secs(60);

/// Where the one-way delay samples come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OwdSource {
    /// TSval − TSecr of each ACK, in ticks of our timestamp clock (RFC 7323 timestamps).
    #[default]
    Timestamps,
    /// The simulator's true one-way delay of the acknowledged segment. Not available: the
    /// connection sees only TCP headers, which carry neither the segment's send time nor its
    /// arrival time; `check_params` refuses it.
    Exact,
}

/// LEDBAT's parameters (RFC 6817 §2.5 names in capitals).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LedbatConfig {
    /// TARGET: the queueing delay aimed at (default 100 ms; the RFC: at most 100 ms).
    pub target: SimDuration,
    /// GAIN: cwnd grows by at most GAIN segments per RTT (default 1; the RFC: at most 1).
    pub gain: f64,
    /// BASE_HISTORY: per-minute minima kept for the base delay (default 10).
    pub base_history: u32,
    /// CURRENT_FILTER: the last samples the current delay is the minimum of (default 4).
    pub current_filter: u32,
    /// ALLOWED_INCREASE: segments cwnd may exceed the flight by (default 1).
    pub allowed_increase: u32,
    /// MIN_CWND: the floor of cwnd, segments (default 2).
    pub min_cwnd: u32,
    /// INIT_CWND: cwnd at the start, segments (default 2).
    pub init_cwnd: u32,
    /// Where the delay samples come from.
    pub owd: OwdSource,
}

impl Default for LedbatConfig {
    fn default() -> Self {
        LedbatConfig {
            target: SimDuration::from_millis(100),
            gain: 1.0,
            base_history: 10,
            current_filter: 4,
            allowed_increase: 1,
            min_cwnd: 2,
            init_cwnd: 2,
            owd: OwdSource::Timestamps,
        }
    }
}

/// LEDBAT controller state (bytes).
#[derive(Clone, Debug)]
pub struct Ledbat {
    cfg: LedbatConfig,
    cwnd: u64,
    /// The window the last loss left (for the connection's recovery); no slow start uses it.
    ssthresh: u64,
    /// cwnd's fraction of a byte, in [0, 1).
    frac: f64,
    /// Per-minute minima, oldest first: (minute index, minimum delay in ticks); at most
    /// BASE_HISTORY of them.
    base: VecDeque<(u64, i64)>,
    /// The last CURRENT_FILTER delay samples, ticks, oldest first.
    current: VecDeque<i64>,
    /// The first raw TSval − TSecr: samples are counted from it.
    ts_ref: Option<u32>,
    /// Our timestamp clock's tick.
    tick: SimDuration,
    /// The last RTT the connection reported (smoothed if it had one).
    rtt: Option<SimDuration>,
    /// When a loss last cut the window.
    last_cut: Option<SimTime>,
}

impl Ledbat {
    /// A controller at INIT_CWND segments of `mss` bytes; `ssthresh` is kept as given until a
    /// loss sets it.
    pub fn new(cfg: LedbatConfig, ssthresh: u64, mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        Ledbat {
            cfg,
            cwnd: (cfg.init_cwnd.max(1) as u64 * mss).max(mss),
            ssthresh,
            frac: 0.0,
            base: VecDeque::new(),
            current: VecDeque::new(),
            ts_ref: None,
            tick: SimDuration::from_millis(1),
            rtt: None,
            last_cut: None,
        }
    }

    /// The base delay, ticks (none before the first sample).
    pub fn base_delay(&self) -> Option<i64> {
        self.base.iter().map(|&(_, d)| d).min()
    }

    /// The current delay, FILTER = MIN of the last CURRENT_FILTER samples, ticks.
    pub fn current_delay(&self) -> Option<i64> {
        self.current.iter().copied().min()
    }

    /// queuing_delay = current − base (at least zero), or none before the first sample.
    pub fn queuing_delay(&self) -> Option<SimDuration> {
        let q = (self.current_delay()? - self.base_delay()?).max(0) as u64;
        Some(SimDuration(q.saturating_mul(self.tick.as_ps())))
    }

    /// off_target = (TARGET − queuing_delay)/TARGET, at most 1; none before the first sample.
    pub fn off_target(&self) -> Option<f64> {
        let q = self.queuing_delay()?.as_secs_f64();
        let t = self.cfg.target.as_secs_f64();
        Some(((t - q) / t).min(1.0))
    }

    /// Record one delay sample `d` (ticks) taken at `now`: the current minute's minimum (a new
    /// minute drops the oldest of BASE_HISTORY) and the last CURRENT_FILTER samples.
    pub fn add_sample(&mut self, now: SimTime, d: i64) {
        let minute = now.0 / BASE_INTERVAL.as_ps();
        match self.base.back_mut() {
            Some((m, min)) if *m == minute => *min = (*min).min(d),
            _ => {
                self.base.push_back((minute, d));
                while self.base.len() > self.cfg.base_history.max(1) as usize {
                    self.base.pop_front();
                }
            }
        }
        self.current.push_back(d);
        while self.current.len() > self.cfg.current_filter.max(1) as usize {
            self.current.pop_front();
        }
    }

    /// The ACK's delay sample, ticks from the first one (TSval − TSecr; none without
    /// timestamps or with an echo of 0).
    fn sample_of(&mut self, a: &AckSample) -> Option<i64> {
        let (tsval, tsecr) = a.timestamps?;
        if tsecr == 0 {
            return None;
        }
        let raw = tsval.wrapping_sub(tsecr);
        let r = *self.ts_ref.get_or_insert(raw);
        Some(raw.wrapping_sub(r) as i32 as i64)
    }

    /// The window after an ACK at `off_target`: (cwnd, its fraction). Growth only when the
    /// sender was cwnd-limited; then the cap at flightsize + ALLOWED_INCREASE·MSS and the floor
    /// MIN_CWND·MSS.
    fn next(&self, a: &AckSample, off_target: Option<f64>) -> (u64, f64) {
        let mss = a.mss.max(1) as f64;
        let mut x = self.cwnd as f64 + self.frac;
        if let Some(off) = off_target {
            let delta = self.cfg.gain * off * a.delivered as f64 * mss / self.cwnd.max(1) as f64;
            if delta < 0.0 || a.cwnd_limited {
                x += delta;
            }
        }
        let cap = (a.inflight_before + self.cfg.allowed_increase as u64 * a.mss.max(1) as u64) as f64;
        let floor = self.cfg.min_cwnd as f64 * mss;
        let x = x.min(cap).max(floor).max(mss);
        let whole = x.floor();
        (whole as u64, x - whole)
    }

    /// The window a loss leaves: min(cwnd, max(cwnd/2, MIN_CWND·MSS)).
    fn halved(&self, mss: u32) -> u64 {
        self.cwnd.min((self.cwnd / 2).max(self.cfg.min_cwnd as u64 * mss as u64))
    }

    /// True when a loss at `now` falls within one RTT of the last cut.
    fn cut_recently(&self, now: SimTime) -> bool {
        matches!((self.last_cut, self.rtt), (Some(t), Some(rtt)) if now < t + rtt)
    }
}

impl CongestionControl for Ledbat {
    fn name(&self) -> &'static str {
        "ledbat"
    }
    fn cwnd(&self) -> u64 {
        self.cwnd
    }
    fn ssthresh(&self) -> u64 {
        self.ssthresh
    }
    fn on_ack(&mut self, a: &AckSample) {
        self.tick = a.ts_tick;
        if let Some(r) = a.srtt.or(a.rtt) {
            self.rtt = Some(r);
        }
        if let Some(d) = self.sample_of(a) {
            self.add_sample(a.now, d);
        }
        let (cwnd, frac) = self.next(a, self.off_target());
        self.cwnd = cwnd;
        self.frac = frac;
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        // RFC 6817 §2.4.2: at most once per RTT.
        if self.cut_recently(ev.now) {
            self.ssthresh = self.cwnd;
        } else {
            self.ssthresh = self.halved(ev.mss);
            self.last_cut = Some(ev.now);
        }
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.cwnd = ev.window.map_or(self.ssthresh, |w| w.min(self.ssthresh)).max(ev.mss as u64);
        self.frac = 0.0;
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Bytes { cwnd: &mut self.cwnd, ssthresh: &mut self.ssthresh }
    }
    /// The window at off_target = 1 (no queueing), the most an ACK can add:
    /// GAIN·bytes·MSS/cwnd, capped at flightsize + ALLOWED_INCREASE·MSS, and at least the step
    /// up to MIN_CWND·MSS.
    fn growth_bound(&self, a: &AckSample) -> u64 {
        self.next(a, Some(1.0)).0.saturating_sub(self.cwnd)
    }
    /// From the halved window (a loss more than one RTT after the last cut) to cwnd (one within
    /// it).
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        (self.halved(ev.mss), self.cwnd)
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            // A timeout is a loss too: the window it would leave, for recovery's sake.
            self.ssthresh = self.halved(ev.mss);
            self.last_cut = Some(ev.now);
        }
        // RFC 6817 §2.4.2: no ACK within a CTO: one segment, current delays forgotten.
        self.cwnd = ev.mss as u64;
        self.frac = 0.0;
        self.current.clear();
    }
}

crate::param_table! {
    /// `[defaults.tcp.ledbat]`, `[flows.tcp.ledbat]`: RFC 6817 §2.5's parameters, each optional
    /// and resolved like the keys of the `tcp` table. LEDBAT needs `tcp.timestamps = true`.
    LedbatSpec => LedbatParams {
        /// TARGET, the queueing delay aimed at, positive (default 100ms; RFC 6817: at most
        /// 100 ms).
        target: crate::quantity::Dur = crate::quantity::Dur(LedbatConfig::default().target),
        /// GAIN, segments per RTT at most, positive (default 1; RFC 6817: at most 1).
        gain: f64 = LedbatConfig::default().gain,
        /// BASE_HISTORY, per-minute minima kept for the base delay, at least 1 (default 10).
        base_history: u32 = LedbatConfig::default().base_history,
        /// CURRENT_FILTER, samples the current delay is the minimum of, at least 1 (default 4).
        current_filter: u32 = LedbatConfig::default().current_filter,
        /// ALLOWED_INCREASE, segments cwnd may exceed the flight by, at least 1 (default 1).
        allowed_increase: u32 = LedbatConfig::default().allowed_increase,
        /// MIN_CWND, the floor of cwnd in segments, at least 1 (default 2).
        min_cwnd: u32 = LedbatConfig::default().min_cwnd,
        /// INIT_CWND, cwnd at the start in segments, at least 1 (default 2); replaces the
        /// connection's initial window.
        init_cwnd: u32 = LedbatConfig::default().init_cwnd,
        /// Delay samples from "timestamps" (TSval − TSecr; default); "exact" (the simulator's
        /// true one-way delay) is refused: the connection cannot see it.
        owd: OwdSource = LedbatConfig::default().owd,
    }
}

impl super::Registered for Ledbat {
    const NAME: &'static str = "ledbat";
    type Controller = Ledbat;
    type Config = LedbatConfig;
    type Params = LedbatParams;
    fn check_params(p: &LedbatParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        if p.target.0 == SimDuration::ZERO {
            return Err(ParamError::new("target", "must be positive"));
        }
        if !(p.gain.is_finite() && p.gain > 0.0) {
            return Err(ParamError::new("gain", format!("{} must be positive (RFC 6817: at most 1)", p.gain)));
        }
        for (key, v) in
            [("base_history", p.base_history), ("current_filter", p.current_filter), ("allowed_increase", p.allowed_increase), ("min_cwnd", p.min_cwnd), ("init_cwnd", p.init_cwnd)]
        {
            if v == 0 {
                return Err(ParamError::new(key, "must be at least 1"));
            }
        }
        if p.owd == OwdSource::Exact {
            return Err(ParamError::new("owd", "\"exact\" is not available (the connection sees only TCP headers, which carry no true send or arrival time); use \"timestamps\""));
        }
        Ok(())
    }
    fn check_selected(_: &LedbatParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if !tcp.timestamps {
            return Err(crate::params::ParamError::new("timestamps", "cc = \"ledbat\" measures one-way delay from TCP timestamps: set timestamps = true"));
        }
        Ok(())
    }
    fn config(p: &LedbatParams, _tcp: &super::CcContext) -> LedbatConfig {
        let LedbatParams { target, gain, base_history, current_filter, allowed_increase, min_cwnd, init_cwnd, owd } = *p;
        LedbatConfig { target: target.0, gain, base_history, current_filter, allowed_increase, min_cwnd, init_cwnd, owd }
    }
    fn build(cfg: &LedbatConfig, _cwnd: u64, ssthresh: u64, mss: u32) -> Ledbat {
        Ledbat::new(*cfg, ssthresh, mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::Overlay;
    use crate::tcp::cc::{CcContext, Registered};

    const MSS: u32 = 1000;
    const SEG: u64 = MSS as u64;
    /// The peer's clock runs this many ticks ahead of ours: the base delay must remove it.
    const OFFSET: u32 = 3_000_000_000;

    /// An ACK at `ms` milliseconds whose segment took `owd` ticks (1 ms) one way, delivering
    /// `delivered` bytes with `inflight` bytes out before it.
    fn ack(ms: u64, owd: u32, delivered: u64, inflight: u64, limited: bool) -> AckSample {
        let sent = (ms as u32).wrapping_sub(owd).wrapping_add(1);
        AckSample {
            now: SimTime(SimDuration::from_millis(ms).as_ps()),
            bytes_acked: delivered,
            packets_acked: 1,
            delivered,
            mss: MSS,
            rtt: None,
            srtt: Some(SimDuration::from_millis(100)),
            min_rtt: None,
            inflight_before: inflight,
            cwnd_limited: limited,
            after_timeout: false,
            open: true,
            round: 0,
            timestamps: Some(((ms as u32).wrapping_add(OFFSET), sent)),
            ts_tick: SimDuration::from_millis(1),
        }
    }

    fn cfg(init_cwnd: u32) -> LedbatConfig {
        LedbatConfig { init_cwnd, ..LedbatConfig::default() }
    }

    fn at(ms: u64) -> SimTime {
        SimTime(SimDuration::from_millis(ms).as_ps())
    }

    fn loss(ms: u64) -> CongestionEvent {
        CongestionEvent { now: at(ms), inflight: 0, mss: MSS }
    }

    /// A controller at `segs` segments whose base delay is 0 and whose last CURRENT_FILTER
    /// samples are all `q` ticks (ACKs delivering nothing, so the window is untouched).
    fn primed(c: LedbatConfig, q: u32) -> Ledbat {
        let mut l = Ledbat::new(c, u64::MAX, MSS);
        l.on_ack(&ack(1, 0, 0, u64::MAX / 4, true));
        for i in 0..c.current_filter {
            l.on_ack(&ack(2 + i as u64, q, 0, u64::MAX / 4, true));
        }
        l
    }

    #[test]
    fn off_target_scales_growth() {
        // cwnd 100 segments, one segment acknowledged: GAIN·off_target·MSS²/cwnd = 10·off_target
        // bytes, off_target = (100 ms − q)/100 ms: +10 at no queueing, +5 at half TARGET, 0 at
        // TARGET, −10 at twice TARGET; GAIN scales it.
        for (q, gain, want) in [(0, 1.0, 10), (50, 1.0, 5), (100, 1.0, 0), (200, 1.0, -10), (0, 0.5, 5), (150, 0.5, -3)] {
            let c = LedbatConfig { gain, ..cfg(100) };
            let mut l = primed(c, q);
            assert_eq!(l.queuing_delay(), Some(SimDuration::from_millis(q as u64)), "the offset of the clocks is removed");
            let before = l.cwnd() as i64;
            l.on_ack(&ack(10, q, SEG, 1_000_000, true));
            // (−2.5 bytes at 150 ms and GAIN 1/2: the byte below, its half kept as a fraction.)
            assert_eq!(l.cwnd() as i64 - before, want, "q = {q}, gain = {gain}");
        }
        // Delayed ACKs: two segments acknowledged add twice as much.
        let mut l = primed(cfg(100), 0);
        l.on_ack(&ack(10, 0, 2 * SEG, 1_000_000, true));
        assert_eq!(l.cwnd(), 100 * SEG + 20);
        // Not cwnd-limited: no growth, but a decrease still applies (RFC 7661 for growth only).
        let mut l = primed(cfg(100), 0);
        l.on_ack(&ack(10, 0, SEG, 1_000_000, false));
        assert_eq!(l.cwnd(), 100 * SEG);
        let mut l = primed(cfg(100), 200);
        l.on_ack(&ack(10, 200, SEG, 1_000_000, false));
        assert_eq!(l.cwnd(), 100 * SEG - 10);
    }

    #[test]
    fn growth_capped_by_flightsize_plus_allowed_increase() {
        // cwnd 10 segments, off_target = 1: +100 bytes uncapped.
        let mut l = primed(cfg(10), 0);
        l.on_ack(&ack(10, 0, SEG, 10 * SEG, true));
        assert_eq!(l.cwnd(), 10 * SEG + 100, "a full flight: not capped");
        // A flight of 9.05 segments: cwnd ≤ flight + 1 segment = 10.05 segments.
        let mut l = primed(cfg(10), 0);
        let a = ack(10, 0, SEG, 9 * SEG + 50, true);
        assert_eq!(l.growth_bound(&a), 50, "the bound is the capped growth");
        l.on_ack(&a);
        assert_eq!(l.cwnd(), 10 * SEG + 50);
        // A flight of 4 segments: the cap takes the window down to 5 (ALLOWED_INCREASE = 1), or
        // to 7 with ALLOWED_INCREASE = 3.
        for (ai, want) in [(1, 5 * SEG), (3, 7 * SEG)] {
            let mut l = primed(LedbatConfig { allowed_increase: ai, ..cfg(10) }, 0);
            l.on_ack(&ack(10, 0, SEG, 4 * SEG, true));
            assert_eq!(l.cwnd(), want, "ALLOWED_INCREASE = {ai}");
        }
    }

    #[test]
    fn cwnd_floor_is_min_cwnd() {
        // Far above TARGET (1 s of queueing: off_target = −9): the window falls to MIN_CWND and
        // no further, whatever the decrease or the cap asks.
        let mut l = primed(cfg(3), 1000);
        l.on_ack(&ack(10, 1000, SEG, 3 * SEG, true));
        assert_eq!(l.cwnd(), 2 * SEG, "MIN_CWND = 2");
        l.on_ack(&ack(11, 1000, SEG, 0, true));
        assert_eq!(l.cwnd(), 2 * SEG, "the floor is above a cap of one segment");
        // INIT_CWND 3 below MIN_CWND 4: the first ACK lifts the window to the floor, a step the
        // growth bound allows.
        let mut l = Ledbat::new(LedbatConfig { min_cwnd: 4, ..cfg(3) }, u64::MAX, MSS);
        let a = ack(10, 1000, SEG, 3 * SEG, true);
        assert_eq!(l.growth_bound(&a), SEG, "the step up to the floor is within the bound");
        l.on_ack(&a);
        assert_eq!(l.cwnd(), 4 * SEG, "MIN_CWND = 4 lifts a window of 3");
    }

    #[test]
    fn loss_halves_at_most_once_per_rtt() {
        // srtt 100 ms (from the ACKs). A loss at 1 s halves; another 50 ms later does not; one
        // 150 ms later halves again.
        let mut l = primed(cfg(100), 0);
        let exit = RecoveryExit { now: at(0), inflight: 0, mss: MSS, window: None };
        assert_eq!(l.loss_ssthresh(&loss(1000)), (50 * SEG, 100 * SEG));
        l.on_congestion(&loss(1000));
        l.on_recovery_exit(&exit);
        assert_eq!((l.ssthresh(), l.cwnd()), (50 * SEG, 50 * SEG));
        l.on_congestion(&loss(1050));
        l.on_recovery_exit(&exit);
        assert_eq!((l.ssthresh(), l.cwnd()), (50 * SEG, 50 * SEG), "within one RTT: no second cut");
        l.on_congestion(&loss(1150));
        l.on_recovery_exit(&exit);
        assert_eq!(l.cwnd(), 25 * SEG, "one RTT later: halved again");
        // Never below MIN_CWND, and never up: 3 segments → 2; 1 segment stays 1.
        let mut l = primed(cfg(3), 0);
        l.on_congestion(&loss(1000));
        assert_eq!(l.ssthresh(), 2 * SEG);
        l.on_timeout(&TimeoutEvent { now: at(1000), inflight: 0, mss: MSS, backoffs: 1 });
        l.on_congestion(&loss(2000));
        assert_eq!(l.ssthresh(), SEG, "a window of one segment (after a timeout) is kept");
        // An ECN-Echo is a loss: the window cut at once.
        let mut l = primed(cfg(100), 0);
        l.on_ecn_echo(&loss(1000));
        assert_eq!(l.cwnd(), 50 * SEG);
    }

    #[test]
    fn cto_sets_one_segment() {
        let mut l = primed(cfg(100), 30);
        assert_eq!(l.current_delay(), Some(30));
        l.on_timeout(&TimeoutEvent { now: at(1000), inflight: 100 * SEG, mss: MSS, backoffs: 1 });
        assert_eq!((l.cwnd(), l.ssthresh()), (SEG, 50 * SEG));
        assert_eq!((l.current_delay(), l.base_delay()), (None, Some(0)), "current delays forgotten, the base kept");
        l.on_timeout(&TimeoutEvent { now: at(2000), inflight: SEG, mss: MSS, backoffs: 2 });
        assert_eq!((l.cwnd(), l.ssthresh()), (SEG, 50 * SEG), "a repeated timeout keeps ssthresh");
        // The next ACK: the floor of MIN_CWND segments, within the growth bound; no slow start.
        let a = ack(3000, 0, SEG, SEG, true);
        let bound = l.growth_bound(&a);
        l.on_ack(&a);
        assert_eq!(l.cwnd(), 2 * SEG);
        assert!(l.cwnd() - SEG <= bound);
        l.on_ack(&ack(3001, 0, SEG, 2 * SEG, true));
        assert_eq!(l.cwnd(), 2 * SEG + 500, "MSS²/cwnd at off_target = 1");
    }

    #[test]
    fn base_delay_is_min_of_per_minute_history() {
        let mut l = Ledbat::new(LedbatConfig::default(), u64::MAX, MSS);
        let min = |m: u64, s: u64| SimTime(m * BASE_INTERVAL.as_ps() + SimDuration::from_secs(s).as_ps());
        // Minute 0: samples 9, 5, 7 — its minimum is 5.
        for (s, d) in [(1, 9), (20, 5), (59, 7)] {
            l.add_sample(min(0, s), d);
        }
        assert_eq!(l.base_delay(), Some(5));
        // Minutes 1..=9 with minima 21..=29: the base is still minute 0's 5.
        for m in 1..=9 {
            l.add_sample(min(m, 0), 20 + m as i64 + 10);
            l.add_sample(min(m, 30), 20 + m as i64);
        }
        assert_eq!(l.base_delay(), Some(5));
        // Minute 10 is the eleventh: minute 0 leaves the history of ten; the base is 21.
        l.add_sample(min(10, 0), 40);
        assert_eq!(l.base_delay(), Some(21));
        assert_eq!(l.base.len(), 10);
        // A lower sample within the current minute lowers its minimum at once.
        l.add_sample(min(10, 5), 3);
        assert_eq!(l.base_delay(), Some(3));
        // BASE_HISTORY = 1: only the current minute counts.
        let mut l = Ledbat::new(LedbatConfig { base_history: 1, ..LedbatConfig::default() }, u64::MAX, MSS);
        l.add_sample(min(0, 0), 5);
        l.add_sample(min(1, 0), 8);
        assert_eq!(l.base_delay(), Some(8));
    }

    #[test]
    fn filter_is_min_of_current_samples() {
        let mut l = Ledbat::new(LedbatConfig::default(), u64::MAX, MSS);
        for d in [10, 30, 20, 40] {
            l.add_sample(SimTime::ZERO, d);
        }
        assert_eq!(l.current_delay(), Some(10));
        l.add_sample(SimTime::ZERO, 50);
        assert_eq!(l.current_delay(), Some(20), "the oldest (10) left the last four");
        let mut l = Ledbat::new(LedbatConfig { current_filter: 1, ..LedbatConfig::default() }, u64::MAX, MSS);
        for d in [10, 30, 20] {
            l.add_sample(SimTime::ZERO, d);
        }
        assert_eq!(l.current_delay(), Some(20), "CURRENT_FILTER = 1: the last sample");
    }

    #[test]
    fn delay_samples_are_tsval_minus_tsecr_across_the_wrap() {
        // The peer's clock 3·10⁹ ticks ahead: TSval wraps past 2³² while TSecr does not; the
        // samples count from the first, so the offset and the wrap cancel.
        let mut l = Ledbat::new(LedbatConfig::default(), u64::MAX, MSS);
        for (ms, owd) in [(1_000, 20), (1_300_000_000, 25), (1_300_000_001, 60)] {
            l.on_ack(&ack(ms, owd, 0, u64::MAX / 4, true));
        }
        assert_eq!((l.base_delay(), l.current_delay()), (Some(0), Some(0)));
        assert_eq!(l.current.iter().copied().collect::<Vec<_>>(), [0, 5, 40]);
        // No timestamps, or an echo of 0: no sample.
        let mut a = ack(2_000, 10, 0, u64::MAX / 4, true);
        a.timestamps = None;
        l.on_ack(&a);
        a.timestamps = Some((5, 0));
        l.on_ack(&a);
        assert_eq!(l.current.len(), 3);
        // Before any sample the window only follows the cap and the floor.
        let mut l = Ledbat::new(cfg(10), u64::MAX, MSS);
        a.delivered = SEG;
        a.inflight_before = 10 * SEG;
        a.timestamps = None;
        l.on_ack(&a);
        assert_eq!(l.cwnd(), 10 * SEG);
    }

    #[test]
    fn growth_never_exceeds_its_bound() {
        // Random delays, flights and ACK sizes: every ACK's growth is within `growth_bound`, and
        // equal to it when there is no queueing.
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        let mut l = Ledbat::new(LedbatConfig::default(), u64::MAX, MSS);
        let (mut grew, mut exact) = (0, 0);
        for i in 0..20_000u64 {
            let owd = if next(3) == 0 { 0 } else { next(300) as u32 };
            let flight = next(l.cwnd() + 3 * SEG);
            let a = ack(i * 7, owd, 1 + next(3 * SEG), flight, next(8) != 0);
            let (before, bound) = (l.cwnd(), l.growth_bound(&a));
            l.on_ack(&a);
            assert!(l.cwnd() <= before + bound, "ACK {i}: {before} → {} (bound {bound})", l.cwnd());
            assert!(l.cwnd() >= 2 * SEG);
            grew += (l.cwnd() > before) as u32;
            if l.queuing_delay() == Some(SimDuration::ZERO) {
                exact += 1;
                assert_eq!(l.cwnd().max(before), before + bound, "ACK {i}");
            }
        }
        assert!(grew > 1000 && exact > 100, "{grew} growths, {exact} at no queueing");
    }

    #[test]
    fn bad_parameters_are_refused_by_name() {
        let ok = LedbatParams::default();
        assert_eq!(Ledbat::check_params(&ok), Ok(()));
        let refused = |p: LedbatParams| Ledbat::check_params(&p).unwrap_err().key;
        assert_eq!(refused(LedbatParams { target: crate::quantity::Dur(SimDuration::ZERO), ..ok }), "target");
        assert_eq!(refused(LedbatParams { gain: 0.0, ..ok }), "gain");
        assert_eq!(refused(LedbatParams { gain: f64::NAN, ..ok }), "gain");
        assert_eq!(refused(LedbatParams { base_history: 0, ..ok }), "base_history");
        assert_eq!(refused(LedbatParams { current_filter: 0, ..ok }), "current_filter");
        assert_eq!(refused(LedbatParams { allowed_increase: 0, ..ok }), "allowed_increase");
        assert_eq!(refused(LedbatParams { min_cwnd: 0, ..ok }), "min_cwnd");
        assert_eq!(refused(LedbatParams { init_cwnd: 0, ..ok }), "init_cwnd");
        assert_eq!(refused(LedbatParams { owd: OwdSource::Exact, ..ok }), "owd");
        let tcp = CcContext { abc_limit: 1, hz: 1000, ecn: false, timestamps: false };
        assert_eq!(Ledbat::check_selected(&ok, &tcp).unwrap_err().key, "timestamps");
        assert_eq!(Ledbat::check_selected(&ok, &CcContext { timestamps: true, ..tcp }), Ok(()));
        // The table's defaults are RFC 6817's, and the configuration carries them.
        let mut p = LedbatParams::default();
        p.overlay(&LedbatSpec { gain: Some(0.5), ..LedbatSpec::default() });
        assert_eq!(Ledbat::config(&p, &tcp), LedbatConfig { gain: 0.5, ..LedbatConfig::default() });
        let l = Ledbat::build(&LedbatConfig::default(), 10 * SEG, u64::MAX, MSS);
        assert_eq!(l.cwnd(), 2 * SEG, "INIT_CWND replaces the connection's initial window");
    }
}
