//! BIC TCP exactly as Linux 2.6.16–2.6.18 `net/ipv4/tcp_bic.c` (algorithms.md §1), with the
//! 2.6.16 core's slow start around it (appropriate byte counting, `tcp_abc = 1`).
//!
//! Linux counts the window in packets: so does this controller (`cwnd()` multiplies by the
//! MSS). `snd_cwnd_cnt` counts ACKs towards the next +1, `cnt` is the number of ACKs per +1
//! that `bictcp_update` recomputes at most every HZ/32 jiffies, and `delayed_ack` is the EWMA
//! of packets per ACK kept ×16 (so BIC's per-RTT increments hold with delayed ACKs).

use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::units::SimTime;

/// Fixed-point scale of `beta`.
const BETA_SCALE: u32 = 1024;
/// Binary-search divisor B.
const BICTCP_B: u32 = 4;
/// `delayed_ack` is kept ×2^4.
const ACK_RATIO_SHIFT: u32 = 4;

/// BIC parameters; defaults are the Linux 2.6.16 module parameters (a scenario sets them in
/// its `[defaults.tcp.bic]` or `[flows.tcp.bic]` table, `abc` as `abc_limit` and `hz` in the
/// `tcp` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BicConfig {
    /// Fast convergence (default on).
    pub fast_convergence: bool,
    /// Largest per-RTT increase in segments, S_max (default 16; 32 before 2.6.15).
    pub max_increment: u32,
    /// At or below this window BIC behaves as Reno (default 14).
    pub low_window: u32,
    /// Multiplicative decrease: keep beta/1024 of the window (default 819 ≈ 0.8).
    pub beta: u32,
    /// Initial ssthresh in segments set at connection start (default 100; 0 = no override).
    pub initial_ssthresh: u32,
    /// Near W_max the increase is B/smooth_part segment per RTT (default 20).
    pub smooth_part: u32,
    /// Appropriate byte counting in slow start: 0 off, 1 (2.6.16 default), 2.
    pub abc: u32,
    /// Kernel HZ: the jiffy that paces `cnt` recomputation (HZ/32). 2.6.16 default 250.
    pub hz: u32,
}

impl Default for BicConfig {
    fn default() -> Self {
        BicConfig { fast_convergence: true, max_increment: 16, low_window: 14, beta: 819, initial_ssthresh: 100, smooth_part: 20, abc: 1, hz: 250 }
    }
}

/// BIC state (segments).
#[derive(Clone, Debug)]
pub struct Bic {
    cfg: BicConfig,
    w: PacketWindow,
    bytes_acked: u64,
    // struct bictcp
    cnt: u32,
    last_max_cwnd: u32,
    loss_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    epoch_start: u64,
    delayed_ack: u32,
}

impl Bic {
    /// A BIC controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: BicConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        let mut s = Bic {
            cfg,
            w: PacketWindow::new(cwnd, ssthresh, mss),
            bytes_acked: 0,
            cnt: 0,
            last_max_cwnd: 0,
            loss_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            epoch_start: 0,
            delayed_ack: 2 << ACK_RATIO_SHIFT,
        };
        // bictcp_init: initial_ssthresh overrides the route/default ssthresh.
        if cfg.initial_ssthresh > 0 {
            s.w.ssthresh = cfg.initial_ssthresh;
        }
        s
    }

    /// W_max (`last_max_cwnd`), segments.
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// Window in segments.
    pub fn cwnd_segments(&self) -> u32 {
        self.w.cwnd
    }

    /// `cnt`: ACKs per +1 segment, as last computed.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// The delayed-ACK ratio estimate ×16.
    pub fn delayed_ack(&self) -> u32 {
        self.delayed_ack
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.loss_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.epoch_start = 0;
        self.delayed_ack = 2 << ACK_RATIO_SHIFT;
    }

    fn jiffies(&self, now: SimTime) -> u64 {
        // tcp_time_stamp; +1 so that 0 keeps meaning "unset" as in the kernel's epoch_start.
        now.0 / (1_000_000_000_000 / self.cfg.hz.max(1) as u64) + 1
    }

    /// bictcp_update: compute `cnt` for the current window.
    fn update(&mut self, now: SimTime) {
        let cwnd = self.w.cwnd;
        let t = self.jiffies(now);
        if self.last_cwnd == cwnd && t.saturating_sub(self.last_time) <= (self.cfg.hz / 32) as u64 {
            return;
        }
        self.last_cwnd = cwnd;
        self.last_time = t;
        if self.epoch_start == 0 {
            self.epoch_start = t;
        }
        // Below low_window: Reno (+1 per cwnd ACKs), no ACK-ratio scaling.
        if cwnd <= self.cfg.low_window {
            self.cnt = cwnd;
            return;
        }
        let (wmax, smax, smooth) = (self.last_max_cwnd, self.cfg.max_increment, self.cfg.smooth_part);
        if cwnd < wmax {
            // Binary search towards W_max.
            let dist = (wmax - cwnd) / BICTCP_B;
            self.cnt = if dist > smax {
                cwnd / smax // additive increase: +S_max per RTT
            } else if dist <= 1 {
                cwnd * smooth / BICTCP_B // +B/smooth_part per RTT near W_max
            } else {
                cwnd / dist
            };
        } else if cwnd < wmax + BICTCP_B {
            self.cnt = cwnd * smooth / BICTCP_B; // slow start of max probing
        } else if cwnd < wmax + smax * (BICTCP_B - 1) {
            self.cnt = cwnd * (BICTCP_B - 1) / (cwnd - wmax);
        } else {
            self.cnt = cwnd / smax; // linear max probing
        }
        // No loss yet: at least +5 % per RTT.
        if self.loss_cwnd == 0 && self.cnt > 20 {
            self.cnt = 20;
        }
        self.cnt = (self.cnt << ACK_RATIO_SHIFT) / self.delayed_ack.max(1);
        if self.cnt == 0 {
            self.cnt = 1;
        }
    }

    /// tcp_slow_start of 2.6.16 with ABC.
    fn slow_start(&mut self) {
        if self.cfg.abc > 0 {
            if self.bytes_acked < self.w.mss {
                return;
            }
            if self.cfg.abc > 1 && self.bytes_acked > 2 * self.w.mss {
                self.w.cwnd += 1;
            }
        }
        self.bytes_acked = 0;
        self.w.cwnd += 1;
    }
}

impl CongestionControl for Bic {
    fn name(&self) -> &'static str {
        "bic"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    fn min_cwnd(&self) -> u64 {
        self.ssthresh() // bictcp_min_cwnd (2.6.16/17): rate-halving floor is ssthresh
    }
    fn on_ack(&mut self, a: &AckSample) {
        // bictcp_acked: the packets-per-ACK EWMA, in the Open state only.
        if a.open && a.packets_acked > 0 {
            let n = a.packets_acked;
            self.delayed_ack = self.delayed_ack + n - (self.delayed_ack >> ACK_RATIO_SHIFT);
        }
        // tcp_ack's byte counter for ABC (full bytes in Open/Disorder, ≤ 1 MSS in Loss).
        self.bytes_acked += if a.after_timeout { a.bytes_acked.min(self.w.mss) } else { a.bytes_acked };
        // bictcp_cong_avoid: only when cwnd-limited.
        if !a.cwnd_limited {
            return;
        }
        if self.w.cwnd <= self.w.ssthresh {
            self.slow_start();
        } else {
            self.update(a.now);
            if self.w.cwnd_cnt >= self.cnt {
                self.w.cwnd += 1;
                self.w.cwnd_cnt = 0;
            } else {
                self.w.cwnd_cnt += 1;
            }
        }
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.w.ssthresh = self.recalc_ssthresh();
        self.w.cwnd_cnt = 0;
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.w.exit_recovery(ev);
        self.bytes_acked = 0;
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    fn growth_bound(&self, _a: &AckSample) -> u64 {
        // 2.6.16 tcp_slow_start: one segment per ACK, two with tcp_abc = 2 and more than two
        // segments' bytes counted; avoidance: one segment per `cnt` ACKs, at most one per ACK.
        let segs = if self.w.cwnd <= self.w.ssthresh && self.cfg.abc > 1 { 2 } else { 1 };
        segs * self.w.mss
    }
    fn loss_ssthresh(&self, _ev: &CongestionEvent) -> (u64, u64) {
        // bictcp_recalc_ssthresh: Reno's half at or below low_window, else β·cwnd; ≥ 2.
        let cwnd = self.w.cwnd as u64;
        let segs = if self.w.cwnd <= self.cfg.low_window { (cwnd >> 1).max(2) } else { (cwnd * self.cfg.beta as u64 / BETA_SCALE as u64).max(2) };
        (segs * self.w.mss, segs * self.w.mss)
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        // tcp_enter_loss: ssthresh from the controller once per loss episode, then the
        // controller's Loss-state reset (bictcp_state), cwnd = 1.
        if ev.backoffs <= 1 {
            self.w.ssthresh = self.recalc_ssthresh();
        }
        self.reset();
        self.w.loss_window();
        self.bytes_acked = 0;
    }
}

impl Bic {
    /// bictcp_recalc_ssthresh.
    fn recalc_ssthresh(&mut self) -> u32 {
        self.epoch_start = 0;
        let cwnd = self.w.cwnd;
        if cwnd < self.last_max_cwnd && self.cfg.fast_convergence {
            self.last_max_cwnd = cwnd * (BETA_SCALE + self.cfg.beta) / (2 * BETA_SCALE);
        } else {
            self.last_max_cwnd = cwnd;
        }
        self.loss_cwnd = cwnd;
        if cwnd <= self.cfg.low_window {
            (cwnd >> 1).max(2)
        } else {
            (cwnd * self.cfg.beta / BETA_SCALE).max(2)
        }
    }
}

crate::param_table! {
    /// `[defaults.tcp.bic]`, `[flows.tcp.bic]`: BIC's module parameters (Linux 2.6.16
    /// `tcp_bic.c`), each optional and resolved like the keys of the `tcp` table. The defaults
    /// are Linux 2.6.16's; `abc_limit` (BIC's `tcp_abc`) and `hz` stay in the `tcp` table.
    BicSpec => BicParams {
        /// Largest window increase per RTT, segments, at least 1 (S_max; default 16).
        max_increment: u32 = BicConfig::default().max_increment,
        /// Multiplicative decrease: the fraction of the window kept after a loss, ×1024, in
        /// 1..1024 (default 819 ≈ 0.8).
        beta: u32 = BicConfig::default().beta,
        /// At or below this window, segments, BIC grows and backs off as Reno (default 14).
        low_window: u32 = BicConfig::default().low_window,
        /// ssthresh set at connection start, segments; 0 keeps the `tcp` table's
        /// `initial_ssthresh` (default 100).
        initial_ssthresh: u32 = BicConfig::default().initial_ssthresh,
        /// Fast convergence: a flow that lost below its previous maximum remembers a lower one
        /// (default true).
        fast_convergence: bool = BicConfig::default().fast_convergence,
        /// Near the previous maximum the window grows by B/smooth_part segments per RTT (B = 4);
        /// at least 1 (default 20).
        smooth_part: u32 = BicConfig::default().smooth_part,
    }
}

impl super::Registered for Bic {
    const NAME: &'static str = "bic";
    type Controller = Bic;
    type Config = BicConfig;
    type Params = BicParams;
    fn check_params(p: &BicParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        if p.max_increment == 0 {
            return Err(ParamError::new("max_increment", "must be at least 1"));
        }
        if !(1..1024).contains(&p.beta) {
            return Err(ParamError::new("beta", "must be in 1..1024 (the kept fraction ×1024)"));
        }
        if p.smooth_part == 0 {
            return Err(ParamError::new("smooth_part", "must be at least 1"));
        }
        Ok(())
    }
    fn config(p: &BicParams, tcp: &super::CcContext) -> BicConfig {
        let BicParams { max_increment, beta, low_window, initial_ssthresh, fast_convergence, smooth_part } = *p;
        BicConfig { fast_convergence, max_increment, low_window, beta, initial_ssthresh, smooth_part, abc: tcp.abc_limit, hz: tcp.hz }
    }
    fn build(cfg: &BicConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Bic {
        Bic::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    const MSS: u32 = 1000;

    fn ack(now_ms: u64, open: bool) -> AckSample {
        AckSample {
            now: SimTime::ZERO + SimDuration::from_millis(now_ms),
            bytes_acked: MSS as u64,
            packets_acked: 1,
            delivered: MSS as u64,
            mss: MSS,
            rtt: None,
            srtt: None,
            min_rtt: None,
            inflight_before: u64::MAX,
            cwnd_limited: true,
            after_timeout: false,
            open,
            round: 0,
            timestamps: None,
            ts_tick: SimDuration::from_millis(1),
        }
    }

    /// Run one RTT of per-segment ACKs (one ACK per segment of the window) and return the
    /// window afterwards, in segments.
    fn one_rtt(b: &mut Bic, now_ms: &mut u64) -> u32 {
        let w = b.w.cwnd;
        for _ in 0..w {
            b.on_ack(&ack(*now_ms, true));
        }
        *now_ms += 300;
        b.w.cwnd
    }

    fn bic_at(cwnd: u32, w_max: u32, loss_cwnd: u32) -> Bic {
        let mut b = Bic::new(BicConfig::default(), cwnd as u64 * MSS as u64, 0, MSS);
        b.w.ssthresh = 1;
        b.last_max_cwnd = w_max;
        b.loss_cwnd = loss_cwnd;
        // Per-segment ACKs: the ratio estimate converges to 1 (×16).
        b.delayed_ack = 16;
        b
    }

    #[test]
    fn initial_ssthresh_is_100_segments() {
        let b = Bic::new(BicConfig::default(), 2 * 9000, u64::MAX, 9000);
        assert_eq!(b.ssthresh(), 100 * 9000);
        assert_eq!(b.cwnd_segments(), 2);
    }

    #[test]
    fn per_rtt_increments_follow_the_linux_regions() {
        let mut t = 0;
        // Far below W_max: additive increase, +16 per RTT (cnt = cwnd/16 ACKs per +1).
        let mut b = bic_at(400, 1000, 1000);
        let w0 = b.w.cwnd;
        let w1 = one_rtt(&mut b, &mut t);
        assert!((w1 - w0).abs_diff(16) <= 1, "+{} per RTT", w1 - w0);
        // Binary search: about a quarter of the remaining distance (40/4 = 10), less because the
        // distance shrinks within the RTT and each +1 takes cnt + 1 ACKs: by hand,
        // 97 + 107 + 107 + 108 + 108 + 121 + 121 + 121 = 890 ≤ 960 < 1029 ACKs → +8.
        let mut b = bic_at(960, 1000, 1000);
        let w1 = one_rtt(&mut b, &mut t);
        assert_eq!(w1 - 960, 8);
        // Within 4 of W_max: +B/smooth_part = 0.2 per RTT (cnt = 5·cwnd).
        let mut b = bic_at(998, 1000, 1000);
        let mut w = b.w.cwnd;
        for _ in 0..6 {
            w = one_rtt(&mut b, &mut t);
        }
        // cnt = 998·20/4 = 4990, so +1 takes 4991 ACKs: just past five RTTs of 998 ACKs.
        assert_eq!(w - 998, 1, "one segment in about five RTTs");
        // Max probing 4–48 above W_max: the excess grows ×4/3 per RTT: 12 above → +4.
        let mut b = bic_at(1012, 1000, 1000);
        let w1 = one_rtt(&mut b, &mut t);
        assert!((w1 - 1012).abs_diff(4) <= 1, "+{}", w1 - 1012);
        // Beyond 48 above: linear, +16.
        let mut b = bic_at(1100, 1000, 1000);
        let w1 = one_rtt(&mut b, &mut t);
        assert!((w1 - 1100).abs_diff(16) <= 1, "+{}", w1 - 1100);
        // At or below low_window: Reno, cnt = cwnd (+1 per cwnd + 1 ACKs): 3 RTTs of 10, 10
        // and 11 ACKs pass 11 and 11 + 12 = 23 ACKs → +2.
        let mut b = bic_at(10, 100, 100);
        for _ in 0..3 {
            one_rtt(&mut b, &mut t);
        }
        assert_eq!(b.w.cwnd, 12);
        // Before any loss: at least 5 % per RTT (cnt ≤ 20).
        let mut b = bic_at(400, 0, 0);
        let w1 = one_rtt(&mut b, &mut t);
        assert!(w1 - 400 >= 19, "+{}", w1 - 400);
    }

    #[test]
    fn loss_response_and_fast_convergence() {
        let mut b = bic_at(1000, 0, 0);
        b.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        assert_eq!(b.w_max(), 1000);
        assert_eq!(b.ssthresh(), 1000 * 819 / 1024 * MSS as u64);
        // A second loss below W_max: W_max = cwnd·(1024+819)/2048 ≈ 0.9·cwnd.
        b.w.cwnd = 900;
        b.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        assert_eq!(b.w_max(), 900 * 1843 / 2048);
        // Small windows halve.
        let mut b = bic_at(12, 0, 0);
        b.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        assert_eq!(b.ssthresh(), 6 * MSS as u64);
    }

    #[test]
    fn timeout_resets_bic_and_the_ack_ratio() {
        let mut b = bic_at(500, 800, 800);
        b.delayed_ack = 40;
        b.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 1 });
        assert_eq!(b.cwnd_segments(), 1);
        assert_eq!(b.w_max(), 0, "BIC forgets W_max after an RTO (ssthresh first, then reset)");
        assert_eq!(b.delayed_ack(), 32);
        assert_eq!(b.ssthresh(), 500 * 819 / 1024 * MSS as u64);
    }

    #[test]
    fn delayed_ack_ratio_tracks_packets_per_ack() {
        let mut b = bic_at(400, 1000, 1000);
        b.delayed_ack = 16;
        let mut a = ack(0, true);
        a.packets_acked = 2;
        a.bytes_acked = 2 * MSS as u64;
        for _ in 0..200 {
            b.on_ack(&a);
        }
        assert!((b.delayed_ack() as i64 - 32).abs() <= 1, "{}", b.delayed_ack());
        // Not updated outside the Open state.
        a.open = false;
        a.packets_acked = 1;
        let before = b.delayed_ack();
        b.on_ack(&a);
        assert_eq!(b.delayed_ack(), before);
    }

    #[test]
    fn slow_start_with_abc_counts_bytes() {
        let mut b = Bic::new(BicConfig::default(), 2 * MSS as u64, u64::MAX, MSS);
        let mut a = ack(0, true);
        a.bytes_acked = 500;
        b.on_ack(&a);
        assert_eq!(b.cwnd_segments(), 2, "half a segment acked: no increase");
        b.on_ack(&a);
        assert_eq!(b.cwnd_segments(), 3);
        a.bytes_acked = 2 * MSS as u64; // a delayed ACK of two segments still gives +1 (abc = 1)
        b.on_ack(&a);
        assert_eq!(b.cwnd_segments(), 4);
    }
}
