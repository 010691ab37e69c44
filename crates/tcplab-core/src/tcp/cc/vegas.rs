//! TCP Vegas (Brakmo & Peterson 1995) as Linux `net/ipv4/tcp_vegas.c`, in packets like the
//! kernel. Every ACK with an RTT sample (µs, plus 1 so it is never zero) updates
//!
//! - baseRTT, the smallest RTT ever seen (the path without queueing), and
//! - minRTT, the smallest RTT of the current round (delayed ACKs filtered out);
//!
//! once per round (the first ACK past the data sent when the last round began, Linux
//! `beg_snd_nxt`; here the connection's packet-timed `AckSample::round`), with at least three
//! samples in the round (`cntRTT > 2`; with fewer it is Reno on that ACK), Vegas compares
//! the window with the one that would carry the same rate without queueing:
//!
//! - target = cwnd·baseRTT/minRTT, diff = cwnd·(minRTT − baseRTT)/baseRTT segments, truncated
//!   to whole segments (Linux; so "diff > beta" is diff ≥ beta + 1); `diff = "paper"` divides
//!   by minRTT instead, Brakmo & Peterson's (Expected − Actual)·baseRTT, exactly the segments
//!   queued, and compares it untruncated;
//! - in slow start, diff > gamma: cwnd = min(cwnd, target + 1) and ssthresh = min(ssthresh,
//!   cwnd) — the switch to congestion avoidance; otherwise slow start goes on (one segment per
//!   segment delivered, up to ssthresh, on every ACK);
//! - in congestion avoidance, diff > beta: cwnd − 1 (and ssthresh = min(ssthresh, cwnd));
//!   diff < alpha: cwnd + 1; otherwise the window holds. Between decisions it holds.
//!
//! The window settles where alpha ≤ diff ≤ beta: with `diff = "paper"` alpha..beta segments
//! queued at the bottleneck; with Linux's truncated diff, alpha ≤ diff < beta + 1, and the
//! queue is diff·baseRTT/minRTT (a little less than diff).
//!
//! Losses are Reno's (Linux `tcp_reno_ssthresh`): ssthresh = max(cwnd/2, 2) segments for fast
//! recovery, ECN-Echo and the first of consecutive timeouts; a timeout leaves one segment.
//! Vegas runs only in Linux's Open state (`AckSample::open`): out of it (SACKed or duplicate-
//! ACKed data outstanding, timeout repair) every ACK is Reno's, and on returning to Open it
//! waits a whole flight (here: two round boundaries) before its next decision, with the
//! round's samples forgotten (Linux `vegas_enable`).
//!
//! Choices of ours, each where Linux acts on something this trait does not see:
//!
//! - Growth (slow start, the +1) needs a cwnd-limited sender (RFC 7661, as every controller
//!   here; Linux's Vegas checks it only on its Reno path); decreases never wait for it.
//! - Linux floors cwnd at 2 after each decision; here the floor never raises the window (a
//!   window of one segment after a timeout stays one until slow start grows it).
//! - Linux raises ssthresh to ¾·cwnd after each decision (`tcp_current_ssthresh`); that never
//!   changes slow start against avoidance nor any window, and is left out (ssthresh shows the
//!   last cut instead).
//! - baseRTT is kept for the whole connection: Linux resets it when the sender restarts from
//!   idle (`CA_EVENT_TX_START`, `CA_EVENT_CWND_RESTART`), which the controller does not see.
//! - Samples come only from ACKs given to `on_ack` (outside fast recovery); Linux counts the
//!   ones in recovery too, but forgets them when it returns to Open.
//! - Slow start adds the segments an ACK newly delivered (`delivered_segments`), as CUBIC here
//!   (Linux 4.x+ `acked_sacked`); `abc_limit` = 0 (counting ACKs) is refused.

use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::units::SimDuration;

/// What diff is divided by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VegasDiff {
    /// diff = cwnd·(minRTT − baseRTT)/baseRTT (Linux `tcp_vegas.c`).
    #[default]
    Linux,
    /// diff = cwnd·(minRTT − baseRTT)/minRTT = (Expected − Actual)·baseRTT (Brakmo & Peterson):
    /// the segments queued.
    Paper,
}

/// Vegas's parameters (Linux module parameters; segments).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VegasConfig {
    /// Below this diff congestion avoidance adds a segment per round (default 2).
    pub alpha: u32,
    /// Above this diff congestion avoidance removes a segment per round (default 4).
    pub beta: u32,
    /// Above this diff slow start ends (default 1).
    pub gamma: u32,
    /// diff's divisor (default Linux's baseRTT).
    pub diff: VegasDiff,
}

impl Default for VegasConfig {
    fn default() -> Self {
        VegasConfig { alpha: 2, beta: 4, gamma: 1, diff: VegasDiff::Linux }
    }
}

/// The `cc_state` trace's value columns for Vegas (`probe`): baseRTT (s), the round's minRTT so
/// far (s), the last decision's diff (segments), the round's RTT samples, 1 while Vegas is on
/// (Linux `doing_vegas_now`; 0: Reno's rules).
pub const PROBE_NAMES: [&str; 5] = ["base_rtt_s", "min_rtt_s", "diff", "rtt_samples", "vegas_on"];

/// Vegas state (segments; RTTs in µs + 1 as Linux keeps them).
#[derive(Clone, Debug)]
pub struct Vegas {
    cfg: VegasConfig,
    w: PacketWindow,
    /// baseRTT, µs + 1 (none before the first sample).
    base_rtt: Option<u64>,
    /// The round's minRTT, µs + 1 (none before the round's first sample).
    min_rtt: Option<u64>,
    /// RTT samples this round (`cntRTT`).
    cnt_rtt: u32,
    /// Vegas is on (Linux `doing_vegas_now`): in the Open state.
    on: bool,
    /// The next decision is on the first ACK of this round or a later one (`beg_snd_nxt`).
    beg_round: u64,
    /// The last decision's diff, segments (Linux's truncated).
    diff: Option<f64>,
}

impl Vegas {
    /// A Vegas controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: VegasConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        Vegas { cfg, w: PacketWindow::new(cwnd, ssthresh, mss), base_rtt: None, min_rtt: None, cnt_rtt: 0, on: true, beg_round: 0, diff: None }
    }

    /// baseRTT as Linux keeps it, the least sample in whole µs plus 1 µs (none before the
    /// first sample).
    pub fn base_rtt(&self) -> Option<SimDuration> {
        self.base_rtt.map(SimDuration::from_micros)
    }

    /// The last decision's diff, segments (Linux's truncated to whole segments; none before
    /// the first).
    pub fn diff(&self) -> Option<f64> {
        self.diff
    }

    /// target (segments) and diff as a fraction (numerator, denominator; segments) at `cwnd`
    /// segments, the round's minimum `rtt` and `base` (µs + 1).
    pub fn diff_and_target(&self, cwnd: u32, rtt: u64, base: u64) -> (u64, (u128, u128)) {
        let cwnd = cwnd as u64;
        let target = cwnd * base / rtt.max(1);
        let over = match self.cfg.diff {
            VegasDiff::Linux => base,
            VegasDiff::Paper => rtt,
        };
        (target, (cwnd as u128 * rtt.saturating_sub(base) as u128, over.max(1) as u128))
    }

    /// diff above `x` segments: Linux's truncated diff (⌊diff⌋ > x, i.e. diff ≥ x + 1), the
    /// paper's exact one.
    fn above(&self, (num, den): (u128, u128), x: u32) -> bool {
        match self.cfg.diff {
            VegasDiff::Linux => num >= (x as u128 + 1) * den,
            VegasDiff::Paper => num > x as u128 * den,
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

    /// The once-per-round decision (with three samples or more).
    fn decide(&mut self, a: &AckSample, acked: u32, rtt: u64, base: u64) {
        let before = self.w.cwnd;
        let (target, diff) = self.diff_and_target(before, rtt, base);
        self.diff = Some(match self.cfg.diff {
            VegasDiff::Linux => (diff.0 / diff.1) as f64,
            VegasDiff::Paper => diff.0 as f64 / diff.1 as f64,
        });
        let slow_start = self.w.cwnd < self.w.ssthresh;
        if slow_start && self.above(diff, self.cfg.gamma) {
            // Going too fast: the window that carries the rate seen, +1 for the truncation.
            self.w.cwnd = self.w.cwnd.min(target.saturating_add(1).min(u32::MAX as u64) as u32);
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd);
        } else if slow_start {
            if a.cwnd_limited {
                self.w.slow_start(acked);
            }
        } else if self.above(diff, self.cfg.beta) {
            self.w.cwnd -= 1;
            self.w.ssthresh = self.w.ssthresh.min(self.w.cwnd);
        } else if diff.0 < self.cfg.alpha as u128 * diff.1 && a.cwnd_limited {
            self.w.cwnd += 1;
        }
        // Linux's floor of two segments, never raising the window.
        self.w.cwnd = self.w.cwnd.max(before.min(2));
    }
}

impl CongestionControl for Vegas {
    fn name(&self) -> &'static str {
        "vegas"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    fn on_ack(&mut self, a: &AckSample) {
        // tcp_vegas_pkts_acked: the sample, in µs + 1.
        if let Some(rtt) = a.rtt {
            let v = rtt.as_ps() / 1_000_000 + 1;
            self.base_rtt = Some(self.base_rtt.map_or(v, |b| b.min(v)));
            self.min_rtt = Some(self.min_rtt.map_or(v, |m| m.min(v)));
            self.cnt_rtt += 1;
        }
        // tcp_vegas_state: on in Open, off otherwise; back on, wait a whole flight.
        if !a.open {
            self.on = false;
        } else if !self.on {
            self.on = true;
            self.beg_round = a.round + 2;
            self.cnt_rtt = 0;
            self.min_rtt = None;
        }
        let acked = a.delivered_segments();
        if !self.on {
            self.reno(a, acked);
            return;
        }
        if a.round >= self.beg_round {
            self.beg_round = a.round + 1;
            match (self.min_rtt, self.base_rtt) {
                (Some(rtt), Some(base)) if self.cnt_rtt > 2 => self.decide(a, acked, rtt, base),
                _ => self.reno(a, acked),
            }
            self.cnt_rtt = 0;
            self.min_rtt = None;
        } else if self.w.cwnd < self.w.ssthresh && a.cwnd_limited {
            self.w.slow_start(acked);
        }
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.w.ssthresh = (self.w.cwnd / 2).max(2); // tcp_reno_ssthresh
        self.on = false;
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.w.exit_recovery(ev);
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            self.w.ssthresh = (self.w.cwnd / 2).max(2);
        }
        self.on = false;
        self.w.loss_window();
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    /// Slow start's one segment per segment delivered up to ssthresh, then Reno's counter
    /// (`PacketWindow::reno_growth_bound`), whose one segment also covers Vegas's +1 per round.
    fn growth_bound(&self, a: &AckSample) -> u64 {
        self.w.reno_growth_bound(a.delivered_segments()) * self.w.mss
    }
    fn loss_ssthresh(&self, _ev: &CongestionEvent) -> (u64, u64) {
        let s = (self.w.cwnd / 2).max(2) as u64 * self.w.mss;
        (s, s)
    }
    fn probe_names(&self) -> &'static [&'static str] {
        &PROBE_NAMES
    }
    fn probe(&self, out: &mut [f64; super::PROBE_VALUES]) {
        let secs = |v: Option<u64>| v.map_or(f64::NAN, |v| v as f64 * 1e-6);
        out[0] = secs(self.base_rtt);
        out[1] = secs(self.min_rtt);
        out[2] = self.diff.unwrap_or(f64::NAN);
        out[3] = self.cnt_rtt as f64;
        out[4] = self.on as u8 as f64;
    }
}

crate::param_table! {
    /// `[defaults.tcp.vegas]`, `[flows.tcp.vegas]`: Vegas's thresholds in segments (Linux's
    /// module parameters and defaults).
    VegasSpec => VegasParams {
        /// Congestion avoidance adds a segment per round while diff < alpha; at least 1
        /// (default 2).
        alpha: u32 = VegasConfig::default().alpha,
        /// Congestion avoidance removes a segment per round while diff > beta; at least alpha
        /// (default 4).
        beta: u32 = VegasConfig::default().beta,
        /// Slow start ends once diff > gamma (default 1).
        gamma: u32 = VegasConfig::default().gamma,
        /// diff's divisor: "linux" (baseRTT, `tcp_vegas.c`; default) or "paper" (the round's
        /// minRTT, Brakmo & Peterson's (Expected − Actual)·baseRTT: the segments queued).
        diff: VegasDiff = VegasConfig::default().diff,
    }
}

impl super::Registered for Vegas {
    const NAME: &'static str = "vegas";
    type Controller = Vegas;
    type Config = VegasConfig;
    type Params = VegasParams;
    fn check_params(p: &VegasParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        if p.alpha == 0 {
            return Err(ParamError::new("alpha", "must be at least 1 (segments; with 0 congestion avoidance never grows)"));
        }
        if p.beta < p.alpha {
            return Err(ParamError::new("beta", format!("{} must be at least alpha ({})", p.beta, p.alpha)));
        }
        Ok(())
    }
    fn check_selected(_: &VegasParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if tcp.abc_limit == 0 {
            return Err(crate::params::ParamError::new(
                "abc_limit",
                "must be at least 1 for vegas (its slow start counts segments delivered, as Linux 4.x; 0, byte counting off, is for reno, newreno and bic)",
            ));
        }
        Ok(())
    }
    fn config(p: &VegasParams, _tcp: &super::CcContext) -> VegasConfig {
        let VegasParams { alpha, beta, gamma, diff } = *p;
        VegasConfig { alpha, beta, gamma, diff }
    }
    fn build(cfg: &VegasConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Vegas {
        Vegas::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
#[path = "vegas_tests.rs"]
mod tests;
