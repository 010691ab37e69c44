//! TCP Westwood+ (Mascolo, Casetti, Gerla et al. 2001; Westwood+: Grieco & Mascolo 2004) as
//! Linux `net/ipv4/tcp_westwood.c` (4.x–6.x), in packets like the kernel. Westwood+ grows its
//! window as Reno does and uses an end-to-end estimate of the bandwidth it gets to choose the
//! window after a loss.
//!
//! - Bandwidth: on every ACK given to the controller the bytes it acknowledges are added to
//!   `bk`; once per RTT window — on the first ACK more than max(RTT, 50 ms) after the window
//!   began (Linux `westwood_update_window`, `TCP_WESTWOOD_RTT_MIN`), RTT the last sample — the
//!   sample bk/Δ (Δ the window's length) goes through two 7/8 low-pass stages
//!   (`westwood_do_filter`, integer as the kernel): bw_ns = (7·bw_ns + sample)/8, then
//!   bw = (7·bw + bw_ns)/8; while both are 0 (the first sample) they are set to the sample
//!   itself (`westwood_filter`). bk then restarts at 0 and the next window starts at that ACK;
//!   the ACK that closes a window counts in the next one (Linux checks the window before
//!   adding the ACK's bytes). One sample per RTT, not one per ACK, is what makes it
//!   Westwood+ rather than the original Westwood, whose per-ACK samples ACK compression
//!   inflates.
//! - RTT: the last sample (Linux `pkts_acked`, which runs after the ACK event, so the window
//!   check and RTTmin use the sample of the ACK before) and RTTmin, its minimum
//!   (`update_rtt_min`). Both start at 20 s (`TCP_WESTWOOD_INIT_RTT`); the first ACK, and the
//!   first after a timeout (`reset_rtt_min`), set RTTmin to the last sample instead of taking
//!   the minimum.
//! - Loss: fast recovery and ECN-Echo begin with Reno's ssthresh, max(cwnd/2, 2) segments
//!   (Linux `.ssthresh = tcp_reno_ssthresh`); when recovery completes
//!   (`CA_EVENT_COMPLETE_CWR`) cwnd = ssthresh = max(bw·RTTmin/MSS, 2) segments
//!   (`tcp_westwood_bw_rttmin`), which may be above the halved window — the point of
//!   Westwood: after a loss it keeps the window that carried the rate it measured. A first
//!   timeout (`CA_EVENT_LOSS`) sets ssthresh = max(bw·RTTmin/MSS, 2) and asks for RTTmin
//!   afresh; the window goes to one segment (the connection's loss window).
//!   `recovery_ssthresh = "bandwidth"` (`RecoverySsthresh::Bandwidth`) sets bw·RTTmin (at most
//!   the window) when recovery begins instead, as the Westwood+ papers and ns-2 do on the third
//!   duplicate ACK: the recovery then works towards it and its completion changes nothing.
//!   Under RFC 6675 or PRR recovery Linux's rule steps the window up from Reno's half to
//!   bw·RTTmin the moment recovery completes, a burst at the access rate that a buffer much
//!   smaller than the bandwidth-delay product drops (modern Linux does the same without
//!   pacing); Linux 2.6's rate-halving kept the window near bw·RTTmin throughout (below).
//! - Growth: Linux `tcp_reno_cong_avoid` in packets: slow start by the segments delivered up
//!   to ssthresh, then one segment per window of segments acked, only when cwnd-limited;
//!   `abc_limit` = 0 is refused (as for Vegas and H-TCP).
//! - Rate-halving floor (`min_cwnd`): bw·RTTmin, as the kernels that had the hook
//!   (2.6.13–2.6.3x, `.min_cwnd = tcp_westwood_bw_rttmin`); it only matters under Linux
//!   rate-halving recovery or CWR.
//!
//! Units: bandwidth in payload bytes per second (Linux keeps bytes per jiffy), times in the
//! simulator's picoseconds (`SimTime`, `SimDuration`; Linux: jiffies), windows in segments.
//!
//! Choices of ours, each where Linux acts on something this trait does not report:
//!
//! - The controller is given only ACKs that move SND.UNA outside fast recovery and CWR
//!   (`CongestionControl::on_ack`); it never sees a duplicate ACK. Linux's
//!   `westwood_acked_count` counts each duplicate ACK as one MSS delivered (`accounted`) and
//!   takes that back from the cumulative ACK that follows; with no duplicate ACK to count,
//!   `accounted` would stay 0 and the rule reduces to bk += the bytes each ACK acknowledges,
//!   which is what is done (Linux's fast path, `westwood_fast_bw`, counts the same).
//! - Linux goes on sampling during recovery and CWR, from the duplicate and partial ACKs; here
//!   no ACK arrives then, so the sampling window's clock stops from the loss (or ECN-Echo)
//!   until the next ACK the controller is given: a window spanning a recovery measures the
//!   bytes acknowledged outside it over the time outside it, instead of counting the recovery's
//!   time with none of its bytes (which would bias the estimate low after every loss). The
//!   bytes acknowledged during recovery, and by the ACK that ends it, are not counted.
//!   After a timeout the clock runs (ACKs in Linux's Loss state reach the controller here too).
//! - The first window starts at the first ACK, whose bytes are not counted (Linux: at
//!   connection set-up, `tcp_westwood_init`, with the first ACK's bytes likewise left out by
//!   `first_ack`): the first sample is a whole RTT window of ACKs.
//! - Times are exact, not jiffies: Linux's RTT and RTTmin round up to a jiffy and its rate
//!   truncates to whole bytes per jiffy (at HZ 1000 a few per cent at most on a 40 ms path).
//! - ECN-Echo: the CWR completes at once as far as the window is concerned: ssthresh =
//!   max(bw·RTTmin/MSS, 2) and cwnd = min(cwnd, ssthresh) (an ECN-Echo never raises the
//!   window here, where Linux's `CA_EVENT_COMPLETE_CWR` may); under `cwr_reduction =
//!   "rate-halving"` the connection brings the window down to it gradually.
//! - A timeout during recovery sets the bandwidth ssthresh as any first timeout does (Linux
//!   5.x keeps the recovery's ssthresh: `tcp_enter_loss` recalculates it only from Open or
//!   Disorder).
//! - Linux's undo (`tcp_reno_undo_cwnd`) is the connection's (`tcp.undo`), not the
//!   controller's.

use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::units::{SimDuration, SimTime};

/// The shortest sampling window, Linux `TCP_WESTWOOD_RTT_MIN` (HZ/20 = 50 ms): on a path with
/// a shorter RTT a sample spans 50 ms.
pub const RTT_WINDOW_MIN: SimDuration = SimDuration::from_millis(50);

/// RTT and RTTmin before the first sample, Linux `TCP_WESTWOOD_INIT_RTT` (20·HZ = 20 s).
pub const INIT_RTT: SimDuration = SimDuration::from_secs(20);

/// Picoseconds per second.
const PS_PER_S: u128 = 1_000_000_000_000;

/// The ssthresh fast recovery and ECN-Echo begin with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoverySsthresh {
    /// Reno's max(cwnd/2, 2) segments (Linux `.ssthresh = tcp_reno_ssthresh`), bw·RTTmin only
    /// when the recovery completes (`CA_EVENT_COMPLETE_CWR`): the window then steps up from
    /// where the recovery left it (at once under RFC 6675 or PRR recovery; under Linux 2.6's
    /// rate-halving the floor `min_cwnd` = bw·RTTmin has kept it there).
    #[default]
    Reno,
    /// bw·RTTmin from the start (at most the window: a loss never raises it), as the
    /// Westwood+ papers and ns-2 set it on the third duplicate ACK; completion leaves it.
    Bandwidth,
}

/// Westwood+'s configuration (Linux's module has no parameters; this is a modelling choice).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WestwoodConfig {
    /// The ssthresh of fast recovery and ECN-Echo (default Linux's, `Reno`).
    pub recovery_ssthresh: RecoverySsthresh,
}

/// The `cc_state` trace's value columns for Westwood+ (`probe`): the bandwidth estimate bw and
/// the first filter stage bw_ns (payload bit/s), RTTmin and the last RTT sample (s; NaN before
/// the first), the bytes counted in the current window (`bk`), bw·RTTmin in segments (the
/// window a loss leaves; at least 2) and the samples taken so far.
pub const PROBE_NAMES: [&str; 7] = ["bw_est_bps", "bw_ns_est_bps", "rtt_min_s", "rtt_s", "bk_bytes", "bw_rtt_min_segs", "samples"];

/// Linux `westwood_do_filter`: (7·a + b)/8, truncated.
pub fn do_filter(a: u64, b: u64) -> u64 {
    ((7 * a as u128 + b as u128) >> 3) as u64
}

/// Westwood+ state (segments; bandwidth in bytes/s; times in ps).
#[derive(Clone, Debug)]
pub struct Westwood {
    cfg: WestwoodConfig,
    w: PacketWindow,
    /// The first filter stage, bytes/s (Linux `bw_ns_est`).
    bw_ns_est: u64,
    /// The bandwidth estimate, bytes/s (Linux `bw_est`).
    bw_est: u64,
    /// Start of the current sampling window (Linux `rtt_win_sx`); none before the first ACK.
    win_start: Option<SimTime>,
    /// Bytes acknowledged in the current window (Linux `bk`).
    bk: u64,
    /// The last RTT sample (Linux `rtt`; `INIT_RTT` before the first).
    rtt: SimDuration,
    /// The least RTT sample (Linux `rtt_min`; `INIT_RTT` before the first ACK).
    rtt_min: SimDuration,
    /// The next ACK sets RTTmin to the last sample (Linux `reset_rtt_min`).
    reset_rtt_min: bool,
    /// True once an RTT sample has arrived (for `probe`).
    sampled_rtt: bool,
    /// When the sampling clock stopped (a loss or an ECN-Echo: no ACK reaches the controller
    /// until the next `on_ack`); none while it runs.
    paused_since: Option<SimTime>,
    /// Bandwidth samples taken.
    samples: u64,
}

impl Westwood {
    /// A Westwood+ controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: WestwoodConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        Westwood {
            cfg,
            w: PacketWindow::new(cwnd, ssthresh, mss),
            bw_ns_est: 0,
            bw_est: 0,
            win_start: None,
            bk: 0,
            rtt: INIT_RTT,
            rtt_min: INIT_RTT,
            reset_rtt_min: true,
            sampled_rtt: false,
            paused_since: None,
            samples: 0,
        }
    }

    /// The bandwidth estimate, payload bytes per second (0 before the first sample).
    pub fn bw_est(&self) -> u64 {
        self.bw_est
    }

    /// The first filter stage, payload bytes per second.
    pub fn bw_ns_est(&self) -> u64 {
        self.bw_ns_est
    }

    /// RTTmin (`INIT_RTT` before the first ACK).
    pub fn rtt_min(&self) -> SimDuration {
        self.rtt_min
    }

    /// Bytes counted in the current sampling window.
    pub fn bk(&self) -> u64 {
        self.bk
    }

    /// Bytes per segment.
    pub fn mss(&self) -> u64 {
        self.w.mss
    }

    /// Bandwidth samples taken so far.
    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Linux `tcp_westwood_bw_rttmin`: max(bw·RTTmin/MSS, 2) segments, truncated.
    pub fn bw_rtt_min(&self) -> u32 {
        let bytes = self.bw_est as u128 * self.rtt_min.as_ps() as u128 / PS_PER_S;
        (bytes / self.w.mss.max(1) as u128).clamp(2, u32::MAX as u128) as u32
    }

    /// The ssthresh a fast recovery begins with, segments (`WestwoodConfig::recovery_ssthresh`).
    pub fn recovery_ssthresh(&self) -> u32 {
        match self.cfg.recovery_ssthresh {
            RecoverySsthresh::Reno => (self.w.cwnd / 2).max(2), // tcp_reno_ssthresh
            RecoverySsthresh::Bandwidth => self.bw_rtt_min().min(self.w.cwnd.max(2)),
        }
    }

    /// The cwnd and ssthresh a recovery that completes now leaves, segments: bw·RTTmin
    /// (`CA_EVENT_COMPLETE_CWR`), or with `RecoverySsthresh::Bandwidth` the ssthresh set when
    /// it began.
    pub fn exit_ssthresh(&self) -> u32 {
        match self.cfg.recovery_ssthresh {
            RecoverySsthresh::Reno => self.bw_rtt_min(),
            RecoverySsthresh::Bandwidth => self.w.ssthresh,
        }
    }

    /// Linux `westwood_filter` with a sample of `bk` bytes over `delta`.
    fn filter(&mut self, delta: SimDuration) {
        let sample = (self.bk as u128 * PS_PER_S / delta.as_ps().max(1) as u128).min(u64::MAX as u128) as u64;
        if self.bw_ns_est == 0 && self.bw_est == 0 {
            self.bw_ns_est = sample;
            self.bw_est = sample;
        } else {
            self.bw_ns_est = do_filter(self.bw_ns_est, sample);
            self.bw_est = do_filter(self.bw_est, self.bw_ns_est);
        }
        self.samples += 1;
    }

    /// Stop the sampling clock at `now` (no ACK reaches the controller until the next
    /// `on_ack`).
    fn pause(&mut self, now: SimTime) {
        self.paused_since.get_or_insert(now);
    }

    /// Restart the sampling clock at `now`: the window's start moves on by the time it stood.
    fn resume(&mut self, now: SimTime) {
        if let (Some(p), Some(start)) = (self.paused_since.take(), self.win_start) {
            let stood = now.0.saturating_sub(p.0);
            self.win_start = Some(SimTime(start.0.saturating_add(stood).min(now.0)));
        }
    }

    /// Linux `tcp_reno_cong_avoid` in packets, on `acked` segments.
    fn reno(&mut self, a: &AckSample, acked: u32) {
        if !a.cwnd_limited {
            return;
        }
        let mut acked = acked;
        if self.w.cwnd < self.w.ssthresh {
            acked = self.w.slow_start(acked);
            if acked == 0 {
                return;
            }
        }
        let w = self.w.cwnd;
        self.w.cong_avoid_ai(w, acked);
    }
}

impl CongestionControl for Westwood {
    fn name(&self) -> &'static str {
        "westwood"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    /// bw·RTTmin (Linux 2.6's `min_cwnd` hook): the floor of rate-halving and CWR.
    fn min_cwnd(&self) -> u64 {
        self.bw_rtt_min() as u64 * self.w.mss
    }
    fn on_ack(&mut self, a: &AckSample) {
        let now = a.now;
        self.resume(now);
        // tcp_westwood_ack → westwood_update_window, then the bytes (westwood_acked_count
        // without duplicate ACKs), then update_rtt_min; the first ACK only starts the window.
        match self.win_start {
            None => self.win_start = Some(now),
            Some(start) => {
                let delta = now.since(start);
                if delta > self.rtt.max(RTT_WINDOW_MIN) {
                    self.filter(delta);
                    self.bk = 0;
                    self.win_start = Some(now);
                }
                self.bk = self.bk.saturating_add(a.bytes_acked);
            }
        }
        if self.reset_rtt_min {
            self.rtt_min = self.rtt;
            self.reset_rtt_min = false;
        } else {
            self.rtt_min = self.rtt_min.min(self.rtt);
        }
        // tcp_westwood_pkts_acked: the sample, for the next ACK.
        if let Some(r) = a.rtt.filter(|r| r.as_ps() > 0) {
            self.rtt = r;
            self.sampled_rtt = true;
        }
        self.reno(a, a.delivered_segments());
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.pause(ev.now);
        self.w.ssthresh = self.recovery_ssthresh();
    }
    fn on_recovery_exit(&mut self, _ev: &RecoveryExit) {
        // CA_EVENT_COMPLETE_CWR (after tcp_end_cwnd_reduction's cwnd = ssthresh).
        let s = self.exit_ssthresh();
        self.w.ssthresh = s;
        self.w.cwnd = s;
        self.w.cwnd_cnt = 0;
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.resume(ev.now);
        if ev.backoffs <= 1 {
            // CA_EVENT_LOSS (tcp_enter_loss, once per loss episode).
            self.w.ssthresh = self.bw_rtt_min();
            self.reset_rtt_min = true;
        }
        self.w.loss_window();
    }
    fn on_ecn_echo(&mut self, ev: &CongestionEvent) {
        self.pause(ev.now);
        let s = self.bw_rtt_min();
        self.w.ssthresh = s;
        self.w.cwnd = self.w.cwnd.min(s).max(1);
        self.w.cwnd_cnt = 0;
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    /// Reno's: slow start's one segment per segment delivered up to ssthresh, then the
    /// counter's (`PacketWindow::reno_growth_bound`).
    fn growth_bound(&self, a: &AckSample) -> u64 {
        self.w.reno_growth_bound(a.delivered_segments()) * self.w.mss
    }
    /// Fast recovery sets `recovery_ssthresh` (Reno's max(cwnd/2, 2) segments by default), a
    /// first timeout max(bw·RTTmin/MSS, 2): the range between the two (each exact for its
    /// event).
    fn loss_ssthresh(&self, _ev: &CongestionEvent) -> (u64, u64) {
        let reno = self.recovery_ssthresh() as u64 * self.w.mss;
        let bw = self.bw_rtt_min() as u64 * self.w.mss;
        (reno.min(bw), reno.max(bw))
    }
    fn probe_names(&self) -> &'static [&'static str] {
        &PROBE_NAMES
    }
    fn probe(&self, out: &mut [f64; super::PROBE_VALUES]) {
        out[0] = self.bw_est as f64 * 8.0;
        out[1] = self.bw_ns_est as f64 * 8.0;
        let secs = |d: SimDuration| if self.sampled_rtt { d.as_secs_f64() } else { f64::NAN };
        out[2] = secs(self.rtt_min);
        out[3] = secs(self.rtt);
        out[4] = self.bk as f64;
        out[5] = self.bw_rtt_min() as f64;
        out[6] = self.samples as f64;
    }
}

crate::param_table! {
    /// `[defaults.tcp.westwood]`, `[flows.tcp.westwood]`: a modelling choice (Linux's module
    /// has no parameters; the 50 ms floor of the sampling window is `RTT_WINDOW_MIN`).
    WestwoodSpec => WestwoodParams {
        /// The ssthresh fast recovery and ECN-Echo begin with: "reno" (Linux's
        /// `tcp_reno_ssthresh`, bw·RTTmin when the recovery completes; default) or "bandwidth"
        /// (bw·RTTmin, at most the window, from the start: the Westwood+ papers, ns-2).
        recovery_ssthresh: RecoverySsthresh = RecoverySsthresh::Reno,
    }
}

impl super::Registered for Westwood {
    const NAME: &'static str = "westwood";
    type Controller = Westwood;
    type Config = WestwoodConfig;
    type Params = WestwoodParams;
    fn check_selected(_: &WestwoodParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if tcp.abc_limit == 0 {
            return Err(crate::params::ParamError::new(
                "abc_limit",
                "must be at least 1 for westwood (its slow start counts segments delivered, as Linux 4.x; 0, byte counting off, is for reno, newreno and bic)",
            ));
        }
        Ok(())
    }
    fn config(p: &WestwoodParams, _tcp: &super::CcContext) -> WestwoodConfig {
        WestwoodConfig { recovery_ssthresh: p.recovery_ssthresh }
    }
    fn build(cfg: &WestwoodConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Westwood {
        Westwood::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
#[path = "westwood_tests.rs"]
mod tests;
