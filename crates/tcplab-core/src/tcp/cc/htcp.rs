//! H-TCP (Leith & Shorten 2004) as Linux `net/ipv4/tcp_htcp.c`, in packets and jiffies
//! (`tcp.hz`) like the kernel, its fixed-point arithmetic (α and β ×128) kept.
//!
//! - Increase: congestion avoidance adds one segment each time α/cwnd per segment acked has
//!   added up to one (Linux: `snd_cwnd_cnt·α ≥ cwnd·128`), α segments per RTT, with
//!   α(Δ) = 1 for Δ ≤ Δ_L = 1 s and 1 + 10(Δ − Δ_L) + ((Δ − Δ_L)/2)² above (integer, as Linux:
//!   1 + ⌊10δ + δ²/4⌋ in jiffies), Δ the time since the last congestion event ended;
//!   RTT scaling (`rtt_scaling`, Linux `use_rtt_scaling`, default on): α·minRTT/100 ms with the
//!   ratio 100 ms/minRTT clamped to [0.5, 10] (so minRTT counts as 10..200 ms), at least 1;
//!   then α = 2(1 − β)·α. α is recomputed at each +1 and at each congestion event.
//! - Decrease: ssthresh = max(β·cwnd, 2) segments, β = minRTT/maxRTT clamped to [0.5, 0.8]
//!   (102/128) once a congestion event has been seen with minRTT above 10 ms (`modeswitch`),
//!   else 0.5; with the bandwidth switch (`bandwidth_switch`, Linux `use_bandwidth_switch`,
//!   default on) β = 0.5 when the largest smoothed throughput of the last congestion epoch
//!   differs from the one before by more than 20 %. maxRTT then fades 5 % towards minRTT.
//! - minRTT: the smallest RTT sample (jiffies, rounded up); maxRTT: the largest in the Open
//!   state, each step up at most 20 ms (outliers ignored). Throughput: segments acked over
//!   at least a minRTT and about a window, smoothed 3/4 old + 1/4 new; reset within three
//!   minRTTs of a congestion event.
//! - A congestion event starts at fast recovery, ECN-Echo (CWR) or a timeout (Linux
//!   `htcp_reset`) and ends at the end of recovery, or at the first ACK in the Open state after
//!   a timeout or a CWR (Linux `htcp_state(TCP_CA_Open)`); Δ counts from its end.
//! - Slow start (cwnd < ssthresh) adds the segments an ACK newly delivered, up to ssthresh
//!   (Linux `tcp_slow_start`); `abc_limit` = 0 is refused. No growth unless cwnd-limited (the
//!   kernel's `tcp_is_cwnd_limited` check). A timeout: the same ssthresh rule (Linux's
//!   `ssthresh` hook serves the RTO too) at the first, then one segment.
//!
//! Choices of ours: Δ first counts from the first ACK (Linux: from `htcp_init` at connection
//! set-up, an RTT earlier); the throughput interval first starts at the first ACK (Linux's
//! starts at jiffy 0, making its first estimate ≈ 0); α, the counters and Δ are 64-bit (Linux's
//! 32-bit `(diff/2)²` wraps after ≈ 131 s without a loss at HZ 1000); Linux's undo of
//! `last_cong`, maxRTT and the bandwidth on a spurious-loss undo is not modelled (the
//! controller sees no undo); samples come only from ACKs given to `on_ack` (none inside fast
//! recovery, where Linux's own checks skip them too: maxRTT and the throughput only count in
//! Open / Disorder).

use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::units::SimTime;

/// α = 1.0 ×128.
pub const ALPHA_BASE: u64 = 1 << 7;
/// β's floor, 0.5 ×128.
pub const BETA_MIN: u64 = 1 << 6;
/// β's ceiling, 102/128 ≈ 0.8.
pub const BETA_MAX: u64 = 102;

/// H-TCP's parameters (Linux module parameters; `hz` is the `tcp` table's).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HtcpConfig {
    /// Scale α by minRTT/100 ms (Linux `use_rtt_scaling`, default on).
    pub rtt_scaling: bool,
    /// β = 0.5 when the throughput moved by more than 20 % (`use_bandwidth_switch`, default on).
    pub bandwidth_switch: bool,
    /// Kernel HZ: the jiffy of every time H-TCP keeps (default 1000).
    pub hz: u32,
}

impl Default for HtcpConfig {
    fn default() -> Self {
        HtcpConfig { rtt_scaling: true, bandwidth_switch: true, hz: 1000 }
    }
}

/// The `cc_state` trace's value columns for H-TCP (`probe`): α (segments per RTT), β, the time
/// since the last congestion event ended (s; at the last ACK or event), minRTT and maxRTT (s),
/// the largest smoothed throughput of the epoch (segments/s).
pub const PROBE_NAMES: [&str; 6] = ["alpha", "beta", "since_congestion_s", "min_rtt_s", "max_rtt_s", "max_b_pps"];

/// α (×128) for `since` jiffies since the last congestion event, minRTT `min_rtt` jiffies
/// (0: none) and β (×128) (Linux `htcp_alpha_update`).
pub fn alpha(cfg: &HtcpConfig, since: u64, min_rtt: u64, beta: u64) -> u64 {
    let hz = cfg.hz.max(1) as u64;
    let mut factor = 1;
    if since > hz {
        let d = since - hz;
        factor = 1 + (10 * d + (d / 2) * (d / 2) / hz) / hz;
    }
    if cfg.rtt_scaling && min_rtt > 0 {
        // 8·(100 ms / minRTT), clamped to [0.5, 10]·8.
        let scale = ((hz << 3) / (10 * min_rtt)).clamp(4, 80);
        factor = ((factor << 3) / scale).max(1);
    }
    let a = 2 * factor * (128 - beta);
    if a == 0 {
        ALPHA_BASE
    } else {
        a
    }
}

/// β (×128) from minRTT and maxRTT (jiffies) when the bandwidth is steady and a congestion event
/// was seen (`modeswitch`): minRTT/maxRTT within [BETA_MIN, BETA_MAX] above 10 ms of minRTT,
/// else BETA_MIN (Linux `htcp_beta_update` after the bandwidth switch).
pub fn beta(hz: u32, modeswitch: bool, min_rtt: u64, max_rtt: u64) -> u64 {
    if modeswitch && min_rtt > msecs_to_jiffies(10, hz) && max_rtt > 0 {
        ((min_rtt << 7) / max_rtt).clamp(BETA_MIN, BETA_MAX)
    } else {
        BETA_MIN
    }
}

/// Linux `msecs_to_jiffies` (rounded up).
fn msecs_to_jiffies(ms: u64, hz: u32) -> u64 {
    (ms * hz as u64).div_ceil(1000)
}

/// H-TCP state (segments; times in jiffies).
#[derive(Clone, Debug)]
pub struct Htcp {
    cfg: HtcpConfig,
    w: PacketWindow,
    /// α ×128.
    alpha: u64,
    /// β ×128.
    beta: u64,
    /// A congestion event has been seen: β may follow the RTT ratio.
    modeswitch: bool,
    /// Segments the last Open ACK acked (Linux `ca->pkts_acked`; 1 otherwise).
    pkts_acked: u32,
    /// Segments acked since `lasttime` (throughput).
    packetcount: u64,
    /// minRTT, maxRTT (0: none yet).
    min_rtt: u64,
    max_rtt: u64,
    /// When the last congestion event ended or started (none before the first ACK).
    last_cong: Option<u64>,
    /// Inside a congestion event (its end resets `last_cong`).
    in_event: bool,
    /// Throughput, segments/s: the smoothed one, its epoch's extremes and the last epoch's max.
    bi: u64,
    min_b: u64,
    max_b: u64,
    old_max_b: u64,
    /// Start of the throughput interval (none before the first ACK).
    lasttime: Option<u64>,
    /// The last time the controller was told, jiffies (for `probe`).
    now: u64,
}

impl Htcp {
    /// An H-TCP controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: HtcpConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        Htcp {
            cfg,
            w: PacketWindow::new(cwnd, ssthresh, mss),
            alpha: ALPHA_BASE,
            beta: BETA_MIN,
            modeswitch: false,
            pkts_acked: 1,
            packetcount: 0,
            min_rtt: 0,
            max_rtt: 0,
            last_cong: None,
            in_event: false,
            bi: 0,
            min_b: 0,
            max_b: 0,
            old_max_b: 0,
            lasttime: None,
            now: 0,
        }
    }

    /// α as a real number (segments per RTT).
    pub fn alpha_segments(&self) -> f64 {
        self.alpha as f64 / 128.0
    }

    /// β as a real number.
    pub fn beta_value(&self) -> f64 {
        self.beta as f64 / 128.0
    }

    fn jiffies(&self, t: SimTime) -> u64 {
        t.0 / (1_000_000_000_000 / self.cfg.hz.max(1) as u64)
    }

    fn since_cong(&self, now: u64) -> u64 {
        now.saturating_sub(self.last_cong.unwrap_or(now))
    }

    fn alpha_update(&mut self, now: u64) {
        self.alpha = alpha(&self.cfg, self.since_cong(now), self.min_rtt, self.beta);
    }

    /// β and modeswitch the next congestion event sets, and the epoch's maximum throughput it
    /// remembers (Linux `htcp_beta_update`).
    fn next_beta(&self) -> (u64, bool) {
        if self.cfg.bandwidth_switch {
            let (max_b, old) = (self.max_b, self.old_max_b);
            if !(4 * old <= 5 * max_b && 5 * max_b <= 6 * old) {
                return (BETA_MIN, false);
            }
        }
        if self.modeswitch && self.min_rtt > msecs_to_jiffies(10, self.cfg.hz) && self.max_rtt > 0 {
            (beta(self.cfg.hz, true, self.min_rtt, self.max_rtt), true)
        } else {
            (BETA_MIN, true)
        }
    }

    /// The ssthresh, segments, a congestion event now sets: max(β·cwnd, 2).
    fn decreased(&self) -> u32 {
        ((self.w.cwnd as u64 * self.next_beta().0) >> 7).max(2) as u32
    }

    /// Linux `htcp_recalc_ssthresh` (`htcp_param_update`) then `htcp_reset`: β, α, the fading
    /// maxRTT, ssthresh, and a congestion event begins.
    fn congestion(&mut self, now: u64) {
        let ssthresh = self.decreased();
        (self.beta, self.modeswitch) = self.next_beta();
        if self.cfg.bandwidth_switch {
            self.old_max_b = self.max_b;
        }
        self.alpha_update(now);
        if self.min_rtt > 0 && self.max_rtt > self.min_rtt {
            self.max_rtt = self.min_rtt + (self.max_rtt - self.min_rtt) * 95 / 100;
        }
        self.w.ssthresh = ssthresh;
        self.last_cong = Some(now);
        self.in_event = true;
    }

    /// Linux `measure_rtt` on a sample of `rtt` jiffies.
    fn measure_rtt(&mut self, rtt: u64, open: bool) {
        if self.min_rtt > rtt || self.min_rtt == 0 {
            self.min_rtt = rtt;
        }
        if open {
            self.max_rtt = self.max_rtt.max(self.min_rtt);
            if self.max_rtt < rtt && rtt <= self.max_rtt + msecs_to_jiffies(20, self.cfg.hz) {
                self.max_rtt = rtt;
            }
        }
    }

    /// Linux `measure_achieved_throughput`: the RTT sample and the throughput estimate.
    fn measure(&mut self, a: &AckSample, now: u64) {
        if a.open {
            self.pkts_acked = a.delivered_segments();
        }
        if let Some(rtt) = a.rtt.filter(|r| r.as_ps() >= 1_000_000) {
            // usecs_to_jiffies of the sample in whole µs, rounded up.
            let us = rtt.as_ps() / 1_000_000;
            self.measure_rtt((us * self.cfg.hz as u64).div_ceil(1_000_000), a.open);
        }
        if !self.cfg.bandwidth_switch {
            return;
        }
        let lasttime = *self.lasttime.get_or_insert(now);
        if a.after_timeout {
            // Linux: neither Open nor Disorder (Loss).
            self.packetcount = 0;
            self.lasttime = Some(now);
            return;
        }
        self.packetcount += a.packets_acked as u64;
        let enough = (self.w.cwnd as u64).checked_sub((self.alpha >> 7).max(1)).is_some_and(|t| self.packetcount >= t);
        if enough && self.min_rtt > 0 && now - lasttime >= self.min_rtt {
            let cur = self.packetcount * self.cfg.hz as u64 / (now - lasttime);
            if self.since_cong(now) / self.min_rtt <= 3 {
                // Just after a backoff.
                (self.min_b, self.max_b, self.bi) = (cur, cur, cur);
            } else {
                self.bi = (3 * self.bi + cur) / 4;
                self.max_b = self.max_b.max(self.bi);
                self.min_b = self.min_b.min(self.max_b);
            }
            self.packetcount = 0;
            self.lasttime = Some(now);
        }
    }
}

impl CongestionControl for Htcp {
    fn name(&self) -> &'static str {
        "htcp"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    fn on_ack(&mut self, a: &AckSample) {
        let now = self.jiffies(a.now);
        self.now = now;
        self.last_cong.get_or_insert(now);
        self.measure(a, now);
        // htcp_state(TCP_CA_Open): the congestion event is over.
        if a.open && self.in_event {
            self.last_cong = Some(now);
            self.in_event = false;
        }
        if !a.cwnd_limited {
            return;
        }
        if self.w.cwnd < self.w.ssthresh {
            self.w.slow_start(a.delivered_segments());
        } else {
            if (self.w.cwnd_cnt as u64 * self.alpha) >> 7 >= self.w.cwnd as u64 {
                self.w.cwnd += 1;
                self.w.cwnd_cnt = 0;
                self.alpha_update(now);
            } else {
                self.w.cwnd_cnt = self.w.cwnd_cnt.saturating_add(self.pkts_acked);
            }
            self.pkts_acked = 1;
        }
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        let now = self.jiffies(ev.now);
        self.now = now;
        self.congestion(now);
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.w.exit_recovery(ev);
        let now = self.jiffies(ev.now);
        self.now = now;
        self.last_cong = Some(now);
        self.in_event = false;
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        let now = self.jiffies(ev.now);
        self.now = now;
        if ev.backoffs <= 1 {
            self.congestion(now);
        } else {
            self.last_cong = Some(now); // htcp_reset on every entry to Loss
            self.in_event = true;
        }
        self.w.loss_window();
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    /// Slow start: one segment per segment delivered, up to ssthresh. Avoidance: one segment
    /// when the counter is full (`snd_cwnd_cnt·α ≥ 128·cwnd`), else none.
    fn growth_bound(&self, a: &AckSample) -> u64 {
        let (cwnd, ssthresh) = (self.w.cwnd as u64, self.w.ssthresh as u64);
        let segs = if cwnd < ssthresh { (a.delivered_segments() as u64).min(ssthresh - cwnd) } else { ((self.w.cwnd_cnt as u64 * self.alpha) >> 7 >= cwnd) as u64 };
        segs * self.w.mss
    }
    /// max(β·cwnd, 2) segments with the β this event sets (exact).
    fn loss_ssthresh(&self, _ev: &CongestionEvent) -> (u64, u64) {
        let s = self.decreased() as u64 * self.w.mss;
        (s, s)
    }
    fn probe_names(&self) -> &'static [&'static str] {
        &PROBE_NAMES
    }
    fn probe(&self, out: &mut [f64; super::PROBE_VALUES]) {
        let hz = self.cfg.hz.max(1) as f64;
        let secs = |j: u64| if j == 0 { f64::NAN } else { j as f64 / hz };
        out[0] = self.alpha_segments();
        out[1] = self.beta_value();
        out[2] = self.last_cong.map_or(f64::NAN, |c| self.now.saturating_sub(c) as f64 / hz);
        out[3] = secs(self.min_rtt);
        out[4] = secs(self.max_rtt);
        out[5] = self.max_b as f64;
    }
}

crate::param_table! {
    /// `[defaults.tcp.htcp]`, `[flows.tcp.htcp]`: Linux `tcp_htcp.c`'s module parameters
    /// (`hz` is the `tcp` table's).
    HtcpSpec => HtcpParams {
        /// Scale α by minRTT/100 ms, the ratio clamped to [0.1, 2] (Linux `use_rtt_scaling`;
        /// default true).
        rtt_scaling: bool = HtcpConfig::default().rtt_scaling,
        /// β = 0.5 after an epoch whose largest throughput moved by more than 20 % from the
        /// one before (Linux `use_bandwidth_switch`; default true).
        bandwidth_switch: bool = HtcpConfig::default().bandwidth_switch,
    }
}

impl super::Registered for Htcp {
    const NAME: &'static str = "htcp";
    type Controller = Htcp;
    type Config = HtcpConfig;
    type Params = HtcpParams;
    fn check_selected(_: &HtcpParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if tcp.abc_limit == 0 {
            return Err(crate::params::ParamError::new(
                "abc_limit",
                "must be at least 1 for htcp (its slow start counts segments delivered, as Linux 4.x; 0, byte counting off, is for reno, newreno and bic)",
            ));
        }
        Ok(())
    }
    fn config(p: &HtcpParams, tcp: &super::CcContext) -> HtcpConfig {
        HtcpConfig { rtt_scaling: p.rtt_scaling, bandwidth_switch: p.bandwidth_switch, hz: tcp.hz }
    }
    fn build(cfg: &HtcpConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Htcp {
        Htcp::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
#[path = "htcp_tests.rs"]
mod tests;
