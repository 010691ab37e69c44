//! TCP-LP (TCP Low Priority; Kuzmanovic & Knightly, INFOCOM 2003) as Linux's
//! `net/ipv4/tcp_lp.c` runs it in v2.6.18 (`$Id: tcp_lp.c,v 1.24`), on NewReno's window rules
//! (`reno.rs`). It yields to other traffic by watching the one-way delay: when the smoothed
//! one-way delay rises past 15 % of the span it has seen, it halves its window before any
//! loss, and drops it to one segment if that happens again within an inference time-out.
//!
//! The rules (dev/p3/EVIDENCE.md §6; "l." are lines of v2.6.18's `tcp_lp.c`), on every ACK of
//! new data that carries timestamps (TSval: the peer's clock; TSecr: the echo of ours):
//!
//! 1. Remote clock rate (l. 137–178): the peer's timestamp clock rate is estimated from two
//!    successive ACKs as HZ·ΔTSval/ΔTSecr (HZ: our timestamp clock's rate, 1 s / `ts_tick`),
//!    kept ×64 with gain 1/64 (the first sample sets it). No estimate while a reference ACK is
//!    missing (a reference of 0 counts as missing) or when either difference is 0; the
//!    references move to every ACK's stamps. It is valid while positive: in 2.6.18 the ×64
//!    value, from 2.6.19 (commit bfbea8a886) the estimate itself (`version`).
//! 2. One-way delay (l. 190–212): TSval·(1000/remote HZ) − TSecr·(1000/HZ), in units of 1 ms
//!    (`LP_RESOL` = 1000) up to a constant clock offset; valid when the remote HZ is valid and
//!    the result is not 0.
//! 3. owd_min is the least sample; owd_max keeps a reserve (l. 234–248): a sample above both
//!    owd_max and the reserve becomes the reserve, and owd_max takes the old reserve (the
//!    sample itself when the reserve was 0); a sample between them becomes owd_max. One spike
//!    thus never sets the maximum on its own.
//! 4. The smoothed one-way delay sowd (l. 251–255), kept ×8, gain 1/8; the first sample sets it.
//! 5. The decision (l. 267–315), after rules 1–4 on the same ACK:
//!    - inference time-out = 3·(our clock now − TSecr), in ticks of our clock (three RTTs as
//!      the ACK measures it), updated only when now > TSecr;
//!    - "within inference" while a reduction happened less than that long ago;
//!    - "within threshold" while sowd < owd_min + 15 %·(owd_max − owd_min);
//!    - outside the threshold (an early congestion indication): owd_min ← sowd, owd_max and its
//!      reserve ← 2·sowd; then cwnd ← 1 segment if within inference, else cwnd ← max(cwnd/2,
//!      1 segment); the time of the reduction is kept. ssthresh is not touched, so a flow whose
//!      ssthresh is still high slow-starts back after the inference time-out.
//! 6. Growth (l. 121–128): Reno's slow start and congestion avoidance, except within inference,
//!    where the window does not grow at all. As in Linux the flag is the one rule 5 computed
//!    on this ACK before its own reduction, so the ACK that brings the first indication still
//!    grows the halved window.
//! 7. Losses and timeouts are Reno's (`tcp_reno_ssthresh`, `tcp_reno_min_cwnd`): the
//!    indication's state is kept across them.
//!
//! The arithmetic is Linux's, in 32-bit unsigned integers where the kernel's are: the clock
//! differences, HZ·ΔTSval (wrapping), the integer factors 1000/HZ (0 above 1000 Hz, so a clock
//! faster than 1 kHz gives no valid delay and TCP-LP is then Reno), the delay itself (a
//! negative difference wraps to near 2³²: the kernel's "absolute value" test is on a value
//! that cannot be negative), sowd ×8 (wrapping) and the threshold's 15·span/100. With the
//! estimate of a 1000 Hz peer above 1000 Hz, 1000/remote HZ is 0 and the delays wrap: the
//! same failure as Linux's.
//!
//! Parameters (`[….tcp.tcp_lp]`): `threshold` (0.15: the 15 % of rule 5), `inference_rtts` (3:
//! the 3 of rule 5), `version` (`"2.6.18"` | `"2.6.19"`, rule 1's validity test).
//!
//! Without timestamps (`timestamps` off at either end) no delay is ever measured, nothing is
//! ever outside the threshold and no ACK is within inference: TCP-LP is NewReno, as in Linux
//! (whose threshold test then compares 0 with owd_min = 2³² − 1). The controller cannot tell
//! whether timestamps were negotiated when the scenario is checked (`CcContext` does not say,
//! and the peer decides too), so the scenario is not refused.
//!
//! ASSUMPTIONS (modelling points, each a departure from the kernel stated here):
//!
//! - Recovery. Linux runs rules 1–5 on every ACK of new data, also in fast recovery
//!   (`pkts_acked` from `tcp_clean_rtx_queue`, tcp_input.c l. 2334–2339), so an indication in
//!   recovery cuts the window the recovery then ends with (`tcp_complete_cwr`: min(cwnd,
//!   ssthresh)). tcplab calls `on_ack` outside recovery only, and this controller does not add
//!   a hook to the connection for it: ACKs in recovery take no sample and make no decision;
//!   the first ACK after recovery does both, with the sowd of before the recovery. Since the
//!   queue is usually still full then, that ACK often brings the indication Linux would have
//!   acted on a few ACKs earlier.
//! - Sampling. Linux takes rules 1–4 once per ACK, in `rtt_sample`, for the first newly
//!   acknowledged segment never retransmitted (Karn); the sample is the ACK's own TSval/TSecr
//!   either way. Here the sample is taken on every ACK that carries timestamps, ACKs covering
//!   only retransmitted segments included (the `AckSample` does not tell them apart).
//! - Our clock. "Now" is our timestamp clock, `now / ts_tick + 1` ticks, as
//!   `Connection::ts_val` stamps TSval; HZ in rules 1–2 is 1 s / `ts_tick`, rounded.
//! - Units. Linux keeps cwnd in segments; here it is bytes (Reno's), halved to max(cwnd/2,
//!   1 SMSS) and set to 1 SMSS.
//! - The loss decrease is the house Reno's (RFC 5681: max(FlightSize/2, 2·SMSS)); Linux's
//!   `tcp_reno_ssthresh` takes max(cwnd/2, 2) segments. They agree when the flight fills the
//!   window. Leaving recovery sets cwnd = ssthresh, as this crate's NewReno does.
//! - 2.6.18's division by zero. With the 2.6.18 test an estimate ×64 in 1..=63 is valid while
//!   the estimate itself is 0, and the kernel divides 1000 by it (an oops). The simulation
//!   cannot crash a host: that ACK gives no delay sample, and the event is counted
//!   (`TcpLp::zero_hz_divisions`). This is the only difference between the two versions.
//! - A loss after an indication. The window may then be far below the flight (one segment
//!   with a full queue out). The connection's recovery starts from it as Linux's does: PRR
//!   (`linux-modern`) divides by the cut window (Linux `prior_cwnd`), so its first sends may
//!   be several segments per segment delivered; the invariant checker allows PRR that much
//!   when the window before the loss was below the flight.
//! - Timestamps missing on one ACK of a connection that uses them: that ACK takes no sample
//!   and no decision (Linux would reuse the last TSecr); growth follows the last decision.

use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, Reno, RenoConfig, TimeoutEvent, WindowState};
use crate::params::ParamError;
use crate::units::{SimDuration, PS_PER_SEC};

/// Resolution of the one-way delay, units per second (Linux `LP_RESOL`).
pub const LP_RESOL: u32 = 1000;

/// Which kernel's remote-HZ validity test.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum LpVersion {
    /// v2.6.18: the estimate is valid while its ×64 value is positive (an estimate below
    /// 1 Hz counts, and the delay then divides by zero).
    #[default]
    #[serde(rename = "2.6.18")]
    V2_6_18,
    /// v2.6.19 (commit bfbea8a886): valid while the estimate itself is positive.
    #[serde(rename = "2.6.19")]
    V2_6_19,
}

/// Parameters of TCP-LP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpLpConfig {
    /// Growth and loss rules (Reno's: `abc_limit`).
    pub reno: RenoConfig,
    /// The early-congestion threshold, a fraction of the one-way-delay span in (0, 1) (Linux:
    /// 15 %, 0.15).
    pub threshold: f64,
    /// The inference time-out, in RTTs as the ACK measures them, at least 1 (Linux: 3).
    pub inference_rtts: u32,
    /// Which kernel's remote-HZ validity test (default 2.6.18).
    pub version: LpVersion,
}

impl Default for TcpLpConfig {
    fn default() -> Self {
        TcpLpConfig { reno: RenoConfig::default(), threshold: 0.15, inference_rtts: 3, version: LpVersion::V2_6_18 }
    }
}

/// A timestamp clock's rate in Hz (1 s / tick, rounded; at least 1).
fn clock_hz(tick: SimDuration) -> u32 {
    let t = tick.as_ps().max(1);
    ((PS_PER_SEC + t / 2) / t).clamp(1, u32::MAX as u64) as u32
}

/// TCP-LP controller state: Linux's `struct lp`, and the Reno it runs on.
#[derive(Clone, Debug)]
pub struct TcpLp {
    cfg: TcpLpConfig,
    reno: Reno,
    /// The remote-HZ estimate is valid (`LP_VALID_RHZ`).
    valid_rhz: bool,
    /// The last one-way delay was valid (`LP_VALID_OWD`).
    valid_owd: bool,
    /// The last decision found sowd within the threshold (`LP_WITHIN_THR`).
    within_thr: bool,
    /// The last decision found the last reduction within the inference time-out
    /// (`LP_WITHIN_INF`): no growth.
    within_inf: bool,
    /// Smoothed one-way delay ×8, LP_RESOL units.
    sowd: u32,
    /// Least one-way delay (u32::MAX before the first), LP_RESOL units.
    owd_min: u32,
    /// Largest one-way delay but the reserve, LP_RESOL units.
    owd_max: u32,
    /// The reserved maximum, LP_RESOL units.
    owd_max_rsv: u32,
    /// Estimated remote timestamp clock rate, Hz.
    remote_hz: u32,
    /// TSval and TSecr of the last ACK (0: none yet).
    remote_ref_time: u32,
    local_ref_time: u32,
    /// Our clock at the last reduction (0: none yet), ticks.
    last_drop: u32,
    /// The inference time-out, ticks of our clock.
    inference: u32,
    /// ACKs on which 2.6.18's test let the delay divide by a remote HZ of 0 (a kernel oops).
    zero_hz_divisions: u64,
    /// Early congestion indications acted on.
    indications: u64,
}

impl TcpLp {
    /// A controller starting at `cwnd`/`ssthresh` bytes.
    pub fn new(cfg: TcpLpConfig, cwnd: u64, ssthresh: u64) -> Self {
        TcpLp {
            cfg,
            reno: Reno::new("tcp-lp", cfg.reno, cwnd, ssthresh),
            valid_rhz: false,
            valid_owd: false,
            within_thr: false,
            within_inf: false,
            sowd: 0,
            owd_min: u32::MAX,
            owd_max: 0,
            owd_max_rsv: 0,
            remote_hz: 0,
            remote_ref_time: 0,
            local_ref_time: 0,
            last_drop: 0,
            inference: 0,
            zero_hz_divisions: 0,
            indications: 0,
        }
    }

    /// Early congestion indications acted on so far.
    pub fn indications(&self) -> u64 {
        self.indications
    }

    /// ACKs on which version 2.6.18 would have divided by a remote HZ of 0.
    pub fn zero_hz_divisions(&self) -> u64 {
        self.zero_hz_divisions
    }

    /// The remote-HZ estimate, Hz.
    pub fn remote_hz(&self) -> u32 {
        self.remote_hz
    }

    /// Rule 1: update the remote-HZ estimate from this ACK's stamps, set its validity and move
    /// the references; returns the estimate (l. 137–178).
    fn estimate_remote_hz(&mut self, tsval: u32, tsecr: u32, hz: u32) -> u32 {
        let mut rhz = (self.remote_hz << 6) as i64;
        if self.remote_ref_time != 0 && self.local_ref_time != 0 && tsval != self.remote_ref_time && tsecr != self.local_ref_time {
            // u32 arithmetic, as the kernel's: the product wraps, the quotient is never negative.
            let m = (hz.wrapping_mul(tsval.wrapping_sub(self.remote_ref_time)) / tsecr.wrapping_sub(self.local_ref_time)) as i64;
            if rhz > 0 {
                rhz += m - (rhz >> 6); // 63/64 old + 1/64 new
            } else {
                rhz = m << 6;
            }
        }
        self.valid_rhz = match self.cfg.version {
            LpVersion::V2_6_18 => rhz > 0,
            LpVersion::V2_6_19 => (rhz >> 6) > 0,
        };
        self.remote_ref_time = tsval;
        self.local_ref_time = tsecr;
        (rhz >> 6) as u32
    }

    /// Rule 2: the one-way delay of this ACK, LP_RESOL units (0: none) (l. 190–212).
    fn one_way_delay(&mut self, tsval: u32, tsecr: u32, hz: u32) -> u32 {
        self.remote_hz = self.estimate_remote_hz(tsval, tsecr, hz);
        let mut owd = 0u32;
        if self.valid_rhz {
            match LP_RESOL.checked_div(self.remote_hz) {
                Some(remote) => owd = tsval.wrapping_mul(remote).wrapping_sub(tsecr.wrapping_mul(LP_RESOL / hz)),
                // 2.6.18 only: the kernel divides by zero here (see ASSUMPTIONS).
                None => self.zero_hz_divisions += 1,
            }
        }
        self.valid_owd = owd > 0;
        owd
    }

    /// Rules 1–4 on one ACK's stamps (Linux `tcp_lp_rtt_sample`, l. 224–256).
    fn sample(&mut self, tsval: u32, tsecr: u32, hz: u32) {
        let owd = self.one_way_delay(tsval, tsecr, hz);
        if !self.valid_rhz || !self.valid_owd {
            return;
        }
        self.owd_min = self.owd_min.min(owd);
        if owd > self.owd_max {
            if owd > self.owd_max_rsv {
                self.owd_max = if self.owd_max_rsv == 0 { owd } else { self.owd_max_rsv };
                self.owd_max_rsv = owd;
            } else {
                self.owd_max = owd;
            }
        }
        if self.sowd != 0 {
            let err = owd as i64 - (self.sowd >> 3) as i64;
            self.sowd = (self.sowd as i64 + err) as u32; // 7/8 old + 1/8 new, mod 2^32
        } else {
            self.sowd = owd << 3;
        }
    }

    /// `threshold`·span, as Linux's 15·span/100 in u32 when the threshold is a whole percentage.
    fn share_of_span(&self, span: u32) -> u32 {
        let pct = self.cfg.threshold * 100.0;
        if (pct - pct.round()).abs() < 1e-9 {
            (pct.round() as u32).wrapping_mul(span) / 100
        } else {
            (self.cfg.threshold * span as f64) as u32
        }
    }

    /// Rule 5: the decision on one ACK (Linux `tcp_lp_pkts_acked`, l. 267–315), `now` our
    /// clock in ticks. Returns true on an early congestion indication.
    fn decide(&mut self, now: u32, tsecr: u32, mss: u64) -> bool {
        if now > tsecr {
            self.inference = self.cfg.inference_rtts.wrapping_mul(now - tsecr);
        }
        self.within_inf = self.last_drop != 0 && now.wrapping_sub(self.last_drop) < self.inference;
        let span = self.owd_max.wrapping_sub(self.owd_min);
        self.within_thr = (self.sowd >> 3) < self.owd_min.wrapping_add(self.share_of_span(span));
        if self.within_thr {
            return false;
        }
        self.owd_min = self.sowd >> 3;
        self.owd_max = self.sowd >> 2;
        self.owd_max_rsv = self.sowd >> 2;
        let within_inf = self.within_inf;
        if let WindowState::Bytes { cwnd, .. } = self.reno.window() {
            *cwnd = if within_inf { mss } else { (*cwnd / 2).max(mss) };
        }
        self.last_drop = now;
        self.indications += 1;
        true
    }

    /// Rules 1–5 on one ACK (everything but the growth).
    fn early_congestion(&mut self, a: &AckSample) {
        if let Some((tsval, tsecr)) = a.timestamps {
            let hz = clock_hz(a.ts_tick);
            // Our timestamp clock now, as `Connection::ts_val` stamps it.
            let now = (a.now.0 / a.ts_tick.as_ps().max(1)).wrapping_add(1) as u32;
            self.sample(tsval, tsecr, hz);
            self.decide(now, tsecr, a.mss.max(1) as u64);
        }
    }
}

impl CongestionControl for TcpLp {
    fn name(&self) -> &'static str {
        "tcp-lp"
    }
    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }
    fn on_ack(&mut self, a: &AckSample) {
        self.early_congestion(a);
        if !self.within_inf {
            self.reno.on_ack(a);
        }
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.reno.on_congestion(ev);
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.reno.on_recovery_exit(ev);
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.reno.on_timeout(ev);
    }
    fn window(&mut self) -> WindowState<'_> {
        self.reno.window()
    }
    /// Reno's bound on the window Reno grows from: the current one, or the one this ACK's
    /// indication leaves (the cut itself is a decrease), whichever allows more.
    fn growth_bound(&self, a: &AckSample) -> u64 {
        let mut after = self.clone();
        after.early_congestion(a);
        let from = after.reno.cwnd();
        self.reno.growth_bound(a).max((from + after.reno.growth_bound(a)).saturating_sub(self.reno.cwnd()))
    }
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        self.reno.loss_ssthresh(ev)
    }
}

crate::param_table! {
    /// `[….tcp.tcp_lp]`: Linux `tcp_lp.c`'s constants, as parameters (`abc_limit` is the `tcp`
    /// table's; TCP-LP needs `timestamps` on at both ends, else it is NewReno).
    TcpLpSpec => TcpLpParams {
        /// Early congestion threshold: the fraction of the one-way-delay span (owd_max −
        /// owd_min) the smoothed one-way delay may rise above owd_min, in (0, 1) (default
        /// 0.15, Linux's 15 %).
        threshold: f64 = 0.15,
        /// Inference time-out in RTTs (measured per ACK as our clock − TSecr), at least 1
        /// (default 3, Linux's).
        inference_rtts: u32 = 3,
        /// Remote-HZ validity test: `"2.6.18"` (the ×64 estimate positive) or `"2.6.19"` (the
        /// estimate itself positive, commit bfbea8a886) (default `"2.6.18"`).
        version: LpVersion = LpVersion::V2_6_18,
    }
}

impl super::Registered for TcpLp {
    const NAME: &'static str = "tcp-lp";
    type Controller = TcpLp;
    type Config = TcpLpConfig;
    type Params = TcpLpParams;
    fn check_params(p: &TcpLpParams) -> Result<(), ParamError> {
        if !(p.threshold > 0.0 && p.threshold < 1.0) {
            return Err(ParamError::new("threshold", format!("{} is out of range (a fraction of the one-way-delay span in (0, 1); Linux 0.15)", p.threshold)));
        }
        if p.inference_rtts == 0 {
            return Err(ParamError::new("inference_rtts", "must be at least 1 (RTTs; Linux 3)"));
        }
        Ok(())
    }
    fn config(p: &TcpLpParams, tcp: &super::CcContext) -> TcpLpConfig {
        TcpLpConfig {
            reno: RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: 0, exact_increase: false },
            threshold: p.threshold,
            inference_rtts: p.inference_rtts,
            version: p.version,
        }
    }
    fn build(cfg: &TcpLpConfig, cwnd: u64, ssthresh: u64, _mss: u32) -> TcpLp {
        TcpLp::new(*cfg, cwnd, ssthresh)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Registered;
    use super::*;
    use crate::units::SimTime;

    const MSS: u32 = 1000;
    const M: u64 = MSS as u64;
    /// Our timestamp clock: 1 ms ticks, 1000 Hz.
    const HZ: u32 = 1000;

    /// An ACK of one segment arriving when our clock reads `now` ticks (1 ms each; the clock
    /// reads `t / 1 ms + 1`), with these stamps.
    fn ack_at(now: u32, ts: Option<(u32, u32)>, limited: bool) -> AckSample {
        AckSample {
            now: SimTime((now as u64 - 1) * SimDuration::from_millis(1).as_ps()),
            bytes_acked: M,
            packets_acked: 1,
            delivered: M,
            mss: MSS,
            rtt: None,
            srtt: None,
            min_rtt: None,
            inflight_before: 0,
            cwnd_limited: limited,
            after_timeout: false,
            open: true,
            round: 0,
            timestamps: ts,
            ts_tick: SimDuration::from_millis(1),
        }
    }

    fn lp(cwnd_segs: u64, ssthresh_segs: u64) -> TcpLp {
        TcpLp::new(TcpLpConfig::default(), cwnd_segs * M, ssthresh_segs * M)
    }

    /// A controller whose remote-HZ estimate is 1000 Hz (the peer's clock runs as ours) and
    /// whose references are a long way back, so that a stamp pair (T + d, T) with d small
    /// keeps the estimate at 1000 Hz; owd_min 10, owd_max 100 (and reserve), sowd 50:
    /// bound 10 + 15 % of 90 = 23.
    fn primed(cwnd_segs: u64, ssthresh_segs: u64) -> TcpLp {
        let mut c = lp(cwnd_segs, ssthresh_segs);
        c.remote_hz = 1000;
        c.valid_rhz = true;
        (c.remote_ref_time, c.local_ref_time) = (1, 1);
        (c.owd_min, c.owd_max, c.owd_max_rsv, c.sowd) = (10, 100, 100, 50 << 3);
        c
    }

    /// The stamps of an ACK echoing our `tsecr` with a one-way delay of `owd` ticks from a
    /// peer whose clock reads as ours.
    fn stamps(tsecr: u32, owd: u32) -> Option<(u32, u32)> {
        Some((tsecr + owd, tsecr))
    }

    /// Feed `owd` samples through rules 1–4, the estimate held at its value (each ACK's
    /// references are its own stamps, so rule 1 has no difference to work on).
    fn feed(c: &mut TcpLp, owds: &[u32]) {
        for &o in owds {
            let tsecr = c.local_ref_time.max(1) + 1_000;
            (c.remote_ref_time, c.local_ref_time) = (tsecr + o, tsecr);
            let rhz = c.remote_hz;
            c.sample(tsecr + o, tsecr, HZ);
            assert_eq!(c.remote_hz, rhz, "the estimate moved");
        }
    }

    #[test]
    fn remote_hz_converges_with_gain_one_sixty_fourth() {
        let mut c = lp(10, 100);
        let est = |c: &mut TcpLp, tsval: u32, tsecr: u32| {
            c.remote_hz = c.estimate_remote_hz(tsval, tsecr, HZ);
            c.remote_hz
        };
        // The first ACK only records its stamps (no reference yet): no estimate, not valid.
        assert_eq!(est(&mut c, 1000, 500), 0);
        assert!(!c.valid_rhz);
        // A peer at 2000 Hz against our 1000: the first estimate is the sample itself.
        assert_eq!(est(&mut c, 1200, 600), 2000);
        assert!(c.valid_rhz);
        // A difference of zero in either clock: no estimate, the references move.
        assert_eq!(est(&mut c, 1200, 700), 2000);
        assert_eq!((c.remote_ref_time, c.local_ref_time), (1200, 700));
        assert_eq!(est(&mut c, 1300, 700), 2000);
        assert_eq!((c.remote_ref_time, c.local_ref_time), (1300, 700));
        // The peer now at 1000 Hz: each sample moves the estimate by 1/64 of the error, kept
        // ×64 (2000·64 − 2000 + 1000 = 127,000: 1984.375, read 1984).
        let (mut v, mut e) = (1300u32, 700u32);
        let mut step = |c: &mut TcpLp| {
            v += 100;
            e += 100;
            c.remote_hz = c.estimate_remote_hz(v, e, HZ);
            c.remote_hz
        };
        assert_eq!(step(&mut c), 1984);
        // The ×64 value is not kept, only the estimate (as Linux's `remote_hz`): the next step
        // starts from 1984·64.
        assert_eq!(step(&mut c), 1968); // 1984·64 − 1984 + 1000 = 125,992 → 1968.6
        for _ in 2..64 {
            step(&mut c);
        }
        // After 64 samples the error is about (63/64)^64 ≈ 37 % of 1000 (a little less: each
        // step truncates).
        let after64 = c.remote_hz;
        assert!((1340..=1370).contains(&after64), "{after64}");
        for _ in 0..2000 {
            step(&mut c);
        }
        assert_eq!(c.remote_hz, 1000, "converged");
        // HZ·ΔTSval/ΔTSecr across the wrap of both 32-bit clocks.
        let mut c = lp(10, 100);
        c.estimate_remote_hz(u32::MAX - 49, u32::MAX - 99, HZ);
        assert_eq!(c.estimate_remote_hz(50, 100, HZ), 500, "100 peer ticks in 200 of ours");
    }

    #[test]
    fn owd_is_scaled_tsval_minus_tsecr() {
        // With the estimate fixed (the references at this ACK's own stamps skip the update).
        let owd = |remote_hz: u32, tsval: u32, tsecr: u32, hz: u32| {
            let mut c = lp(10, 100);
            c.remote_hz = remote_hz;
            (c.remote_ref_time, c.local_ref_time) = (tsval, tsecr);
            let d = c.one_way_delay(tsval, tsecr, hz);
            (d, c.valid_owd)
        };
        // Both clocks at 1000 Hz: TSval − TSecr, in ms.
        assert_eq!(owd(1000, 5_030, 5_000, 1000), (30, true));
        // Both at 250 Hz (linux-2.6.16): ×4.
        assert_eq!(owd(250, 5_030, 5_000, 250), (120, true));
        // A 100 Hz peer against our 250 Hz: 10·TSval − 4·TSecr.
        assert_eq!(owd(100, 2_003, 5_000, 250), (10 * 2_003 - 4 * 5_000, true));
        // Equal scaled stamps: no delay, not valid.
        assert_eq!(owd(1000, 5_000, 5_000, 1000), (0, false));
        // u32 arithmetic: a negative difference wraps (Linux's "absolute value" never acts).
        assert_eq!(owd(1000, 4_990, 5_000, 1000), (u32::MAX - 9, true));
        // An estimate above 1000 Hz makes 1000/remote HZ 0: the delay is −TSecr, wrapped.
        assert_eq!(owd(1001, 5_030, 5_000, 1000), (0u32.wrapping_sub(5_000), true));
        // Our clock above 1000 Hz: 1000/HZ = 0 on both sides, no valid delay.
        assert_eq!(owd(2000, 5_030, 5_000, 2000), (0, false));
        // No valid estimate: no delay.
        assert_eq!(owd(0, 5_030, 5_000, 1000), (0, false));
        // On an ACK: the sample is this ACK's stamps (sowd ×8: 400 + (37 − 50); the ACK then
        // brings an indication, which sets owd_min to sowd).
        let mut c = primed(10, 100);
        c.on_ack(&ack_at(200_020, stamps(200_001, 37), false));
        assert_eq!((c.remote_hz, c.sowd, c.owd_min), (1000, 387, 48));
    }

    #[test]
    fn owd_max_keeps_a_reserve() {
        let mut c = lp(10, 100);
        c.remote_hz = 1000;
        // The first sample: owd_max and the reserve both take it (the reserve was 0).
        feed(&mut c, &[40]);
        assert_eq!((c.owd_min, c.owd_max, c.owd_max_rsv), (40, 40, 40));
        // A spike above both: it goes to the reserve, owd_max takes the old reserve.
        feed(&mut c, &[90]);
        assert_eq!((c.owd_max, c.owd_max_rsv), (40, 90), "one spike does not set the maximum");
        // A second one above: owd_max takes the first.
        feed(&mut c, &[95]);
        assert_eq!((c.owd_max, c.owd_max_rsv), (90, 95));
        // Between owd_max and the reserve: owd_max takes it, the reserve stays.
        feed(&mut c, &[93]);
        assert_eq!((c.owd_max, c.owd_max_rsv), (93, 95));
        // Below owd_max: neither moves; owd_min is the least sample.
        feed(&mut c, &[20, 60]);
        assert_eq!((c.owd_min, c.owd_max, c.owd_max_rsv), (20, 93, 95));
    }

    #[test]
    fn sowd_gain_one_eighth() {
        let mut c = lp(10, 100);
        c.remote_hz = 1000;
        feed(&mut c, &[100]);
        assert_eq!(c.sowd, 800, "the first sample sets it (×8)");
        feed(&mut c, &[180]);
        assert_eq!(c.sowd, 880, "7/8·100 + 1/8·180 = 110, ×8");
        feed(&mut c, &[180]);
        assert_eq!(c.sowd, 950, "880 + (180 − 110)");
        assert_eq!(c.sowd >> 3, 118);
        // Downwards too: 950 + (30 − 118) = 862.
        feed(&mut c, &[30]);
        assert_eq!(c.sowd, 862);
    }

    #[test]
    fn within_threshold_is_fifteen_percent_of_span() {
        // owd_min 100, owd_max 200: the bound is 100 + 15 = 115, strictly below.
        let decide = |threshold: f64, sowd: u32| {
            let mut c = TcpLp::new(TcpLpConfig { threshold, ..TcpLpConfig::default() }, 10 * M, 100 * M);
            (c.owd_min, c.owd_max, c.owd_max_rsv, c.sowd) = (100, 200, 200, sowd << 3);
            c.decide(1_000, 990, M)
        };
        assert!(!decide(0.15, 114), "114 < 115: within");
        assert!(decide(0.15, 115), "115: an indication");
        assert!(!decide(0.30, 129) && decide(0.30, 130), "threshold 0.30: bound 130");
        assert!(!decide(0.125, 111) && decide(0.125, 112), "12.5 % of 100 = 12.5, truncated: bound 112");
        // Before any sample (owd_min = 2³² − 1, owd_max = 0) everything is within.
        let mut c = lp(10, 100);
        for now in 10..1_000 {
            assert!(!c.decide(now, now - 5, M));
        }
        assert_eq!(c.cwnd(), 10 * M);
    }

    #[test]
    fn first_eci_halves_cwnd() {
        // sowd 50 against a bound of 23: the first indication halves the window.
        let mut c = primed(20, 10);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!((c.cwnd(), c.indications()), (10 * M, 1));
        // A window of one segment stays one segment (max(cwnd/2, 1)); an odd one rounds down.
        let mut c = primed(1, 10);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!(c.cwnd(), M);
        let mut c = TcpLp::new(TcpLpConfig::default(), 5_999, 10 * M);
        (c.remote_hz, c.valid_rhz, c.remote_ref_time, c.local_ref_time) = (1000, true, 1, 1);
        (c.owd_min, c.owd_max, c.owd_max_rsv, c.sowd) = (10, 100, 100, 50 << 3);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!(c.cwnd(), 2_999);
        // As in Linux the growth of the same ACK follows, on the halved window (the "within
        // inference" flag was computed before the indication): 10 segments + SMSS²/cwnd.
        let mut c = primed(20, 10);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), true));
        assert_eq!(c.cwnd(), 10 * M + M * M / (10 * M));
    }

    /// `primed(20, 10)` after a first indication at our clock 200,020 on an ACK echoing
    /// 200,001 (RTT 19 ticks, inference 57), cwnd 10 segments; owd_min 50, owd_max 100.
    fn after_first_eci() -> TcpLp {
        let mut c = primed(20, 10);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!((c.cwnd(), c.indications(), c.last_drop, c.inference), (10 * M, 1, 200_020, 57));
        c
    }

    #[test]
    fn eci_within_inference_sets_cwnd_one() {
        // A rise to 200 ticks (sowd 50 + 150/8 = 68 against 50 + 15 % of 50 = 57), 30 ticks
        // after the first indication: within inference, one segment.
        let mut c = after_first_eci();
        c.on_ack(&ack_at(200_050, stamps(200_031, 200), false));
        assert!(c.within_inf);
        assert_eq!((c.cwnd(), c.indications()), (M, 2));
        // The same rise after the inference time-out: halved instead.
        let mut c = after_first_eci();
        c.on_ack(&ack_at(200_080, stamps(200_061, 200), false));
        assert!(!c.within_inf);
        assert_eq!((c.cwnd(), c.indications()), (5 * M, 2));
    }

    #[test]
    fn inference_is_three_rtts() {
        // 3·(our clock − TSecr), in ticks, from each ACK: 3·19 = 57 after the first indication.
        let mut c = after_first_eci();
        // 56 ticks later, RTT 19: within; 57 ticks later: no longer.
        c.on_ack(&ack_at(200_076, stamps(200_057, 50), false));
        assert!(c.within_inf && c.inference == 57);
        c.on_ack(&ack_at(200_077, stamps(200_058, 50), false));
        assert!(!c.within_inf && c.inference == 57);
        // The ACK's own RTT sets it: an RTT of 40 ticks makes it 120.
        let mut c = after_first_eci();
        c.on_ack(&ack_at(200_130, stamps(200_090, 50), false));
        assert!(c.within_inf && c.inference == 120);
        // An echo not behind our clock leaves it as it was.
        c.on_ack(&ack_at(200_131, stamps(200_131, 0), false));
        assert_eq!(c.inference, 120);
        // `inference_rtts` = 5: five RTTs.
        let mut c = primed(20, 10);
        c.cfg.inference_rtts = 5;
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!(c.inference, 95);
    }

    #[test]
    fn no_growth_within_inference() {
        // After the first indication, cwnd-limited ACKs within the inference time-out (sowd
        // back within the threshold) leave the window alone; the first ACK after it grows it
        // as Reno (slow start: cwnd 10 segments is at ssthresh 10 → avoidance).
        let mut c = after_first_eci();
        for now in 200_021..200_077 {
            c.on_ack(&ack_at(now, stamps(now - 19, 50), true));
            assert_eq!(c.cwnd(), 10 * M, "at {now}");
        }
        assert_eq!(c.indications(), 1);
        c.on_ack(&ack_at(200_077, stamps(200_058, 50), true));
        assert_eq!(c.cwnd(), 10 * M + M * M / (10 * M));
    }

    #[test]
    fn eci_resets_min_and_max() {
        // owd_min ← sowd, owd_max and its reserve ← 2·sowd (Linux's sowd >> 3, sowd >> 2).
        let mut c = primed(20, 10);
        c.sowd = 50 * 8 + 5; // 50.6: >> 3 = 50, >> 2 = 101
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!(c.indications(), 1);
        assert_eq!((c.owd_min, c.owd_max, c.owd_max_rsv), (c.sowd >> 3, c.sowd >> 2, c.sowd >> 2));
        assert_eq!((c.owd_min, c.owd_max), (50, 101));
        // Within the threshold nothing is reset.
        let mut c = primed(20, 10);
        c.sowd = 20 << 3;
        c.on_ack(&ack_at(200_020, stamps(200_001, 20), false));
        assert_eq!((c.indications(), c.owd_min, c.owd_max, c.owd_max_rsv), (0, 10, 100, 100));
    }

    #[test]
    fn eci_leaves_ssthresh() {
        // Neither indication touches ssthresh; with ssthresh above the cut window the flow
        // slow-starts back after the inference time-out.
        let mut c = primed(20, 30);
        c.on_ack(&ack_at(200_020, stamps(200_001, 50), false));
        assert_eq!((c.cwnd(), c.ssthresh()), (10 * M, 30 * M));
        c.on_ack(&ack_at(200_050, stamps(200_031, 200), false));
        assert_eq!((c.cwnd(), c.ssthresh()), (M, 30 * M));
        // Past the inference time-out (the sowd 68 now within 68 + 15 % of 68): slow start.
        let now = 200_050 + 3 * 19;
        c.on_ack(&ack_at(now, stamps(now - 19, 68), true));
        assert_eq!((c.cwnd(), c.ssthresh(), c.indications()), (2 * M, 30 * M, 2));
    }

    #[test]
    fn loss_is_reno() {
        // Losses, recovery and timeouts are NewReno's, with TCP-LP's state kept across them.
        let mut c = after_first_eci();
        let mut r = Reno::new("newreno", RenoConfig::default(), c.cwnd(), c.ssthresh());
        let ev = CongestionEvent { now: SimTime::ZERO, inflight: 9 * M, mss: MSS };
        assert_eq!(c.loss_ssthresh(&ev), r.loss_ssthresh(&ev));
        c.on_congestion(&ev);
        r.on_congestion(&ev);
        assert_eq!((c.cwnd(), c.ssthresh()), (r.cwnd(), r.ssthresh()));
        assert_eq!(c.ssthresh(), 4_500);
        let exit = RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: Some(3 * M) };
        c.on_recovery_exit(&exit);
        r.on_recovery_exit(&exit);
        assert_eq!((c.cwnd(), c.ssthresh()), (r.cwnd(), r.ssthresh()));
        for backoffs in [1, 2] {
            let to = TimeoutEvent { now: SimTime::ZERO, inflight: 7 * M, mss: MSS, backoffs };
            c.on_timeout(&to);
            r.on_timeout(&to);
            assert_eq!((c.cwnd(), c.ssthresh()), (r.cwnd(), r.ssthresh()));
        }
        assert_eq!((c.cwnd(), c.ssthresh()), (M, 3_500));
        assert_eq!((c.min_cwnd(), c.indications(), c.last_drop), (1_750, 1, 200_020), "min_cwnd ssthresh/2; the indication state kept");
        // ECN-Echo: Reno's reduction (the default hook).
        let mut c = primed(20, 100);
        c.on_ecn_echo(&CongestionEvent { now: SimTime::ZERO, inflight: 20 * M, mss: MSS });
        assert_eq!((c.cwnd(), c.ssthresh()), (10 * M, 10 * M));
    }

    #[test]
    fn without_timestamps_it_is_newreno() {
        // No stamps: no sample, no decision, no indication; the same window as NewReno's on any
        // sequence of ACKs, losses and timeouts (as Linux, whose threshold test then compares
        // 0 with owd_min = 2³² − 1).
        let mut c = TcpLp::new(TcpLpConfig::default(), 2 * M, u64::MAX);
        let mut r = Reno::new("newreno", RenoConfig::default(), 2 * M, u64::MAX);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for i in 0..20_000u32 {
            match rnd(100) {
                0 => {
                    let ev = CongestionEvent { now: SimTime::ZERO, inflight: 2 * M + rnd(c.cwnd()), mss: MSS };
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
                    let mut a = ack_at(10 + i, None, rnd(8) != 0);
                    a.delivered = 1 + rnd(3 * M);
                    assert_eq!(c.growth_bound(&a), r.growth_bound(&a));
                    c.on_ack(&a);
                    r.on_ack(&a);
                }
            }
            assert_eq!((c.cwnd(), c.ssthresh()), (r.cwnd(), r.ssthresh()), "step {i}");
        }
        assert_eq!((c.indications(), c.valid_rhz, c.sowd), (0, false, 0));
    }

    #[test]
    fn version_2_6_19_refuses_an_estimate_below_one_hertz() {
        // An estimate of 1 Hz and a sample of 0 (one peer tick in 2000 of ours): ×64 it is
        // 64 − 1 + 0 = 63. 2.6.18 counts that as valid with an estimate of 0 and divides by it
        // (a kernel oops; here: no sample, counted); 2.6.19 finds it invalid.
        for (version, valid) in [(LpVersion::V2_6_18, true), (LpVersion::V2_6_19, false)] {
            let mut c = TcpLp::new(TcpLpConfig { version, ..TcpLpConfig::default() }, 10 * M, 100 * M);
            c.remote_hz = 1;
            (c.remote_ref_time, c.local_ref_time) = (100, 100);
            let owd = c.one_way_delay(101, 2_100, HZ);
            assert_eq!((owd, c.remote_hz, c.valid_rhz, c.valid_owd), (0, 0, valid, false), "{version:?}");
            assert_eq!(c.zero_hz_divisions(), valid as u64, "{version:?}");
            // Otherwise the two agree.
            let mut c = TcpLp::new(TcpLpConfig { version, ..TcpLpConfig::default() }, 10 * M, 100 * M);
            c.sample(1_000, 900, HZ);
            c.sample(2_000, 1_900, HZ);
            assert_eq!((c.remote_hz, c.owd_min, c.sowd >> 3), (1000, 100, 100));
        }
    }

    #[test]
    fn growth_never_exceeds_the_declared_bound() {
        // The invariant checker holds every ACK to `growth_bound`, asked before the ACK: over
        // random states, stamps and ACK sizes (indications on the same ACK included).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n.max(1)
        };
        let mut cuts = 0;
        for _ in 0..3_000 {
            let cfg = TcpLpConfig { reno: RenoConfig { abc_limit: rnd(3) as u32, ..RenoConfig::default() }, ..TcpLpConfig::default() };
            let cwnd = M + rnd(60 * M);
            let mut c = TcpLp::new(cfg, cwnd, 2 * M + rnd(40 * M));
            let mut now = 1_000u32;
            for _ in 0..1 + rnd(60) {
                now += rnd(30) as u32;
                let rtt = 1 + rnd(40) as u32;
                let ts = (rnd(10) != 0).then(|| (now - rtt + rnd(3 * rtt as u64) as u32, now - rtt));
                let mut a = ack_at(now, ts, rnd(4) != 0);
                a.delivered = 1 + rnd(3 * M);
                let (before, bound, n) = (c.cwnd(), c.growth_bound(&a), c.indications());
                c.on_ack(&a);
                cuts += (c.indications() > n) as u32;
                assert!(c.cwnd() <= before + bound, "{before} + {bound} < {}", c.cwnd());
                assert!(c.cwnd() >= M);
            }
        }
        assert!(cuts > 100, "the runs must cut: {cuts}");
    }

    #[test]
    fn parameters_are_checked_by_name() {
        let check = |threshold: f64, inference_rtts: u32| TcpLp::check_params(&TcpLpParams { threshold, inference_rtts, version: LpVersion::V2_6_19 }).map_err(|e| e.key);
        assert_eq!(check(0.15, 3), Ok(()));
        assert_eq!(check(0.999, 1), Ok(()));
        for t in [0.0, 1.0, -0.1, 1.5, f64::NAN] {
            assert_eq!(check(t, 3), Err("threshold".to_string()), "{t}");
        }
        assert_eq!(check(0.15, 0), Err("inference_rtts".to_string()));
        assert_eq!(TcpLpParams::default(), TcpLpParams { threshold: 0.15, inference_rtts: 3, version: LpVersion::V2_6_18 });
        let ctx = super::super::CcContext { abc_limit: 2, hz: 250, ecn: false, timestamps: true };
        let cfg = TcpLp::config(&TcpLpParams::default(), &ctx);
        assert_eq!(cfg, TcpLpConfig { reno: RenoConfig { abc_limit: 2, ..RenoConfig::default() }, ..TcpLpConfig::default() });
        assert_eq!(clock_hz(SimDuration::from_millis(4)), 250);
        assert_eq!(clock_hz(SimDuration::from_micros(50)), 20_000);
    }
}
