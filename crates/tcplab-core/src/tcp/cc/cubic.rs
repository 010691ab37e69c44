//! CUBIC as in modern Linux `net/ipv4/tcp_cubic.c` (algorithms.md §2.7; RFC 8312/9438), with
//! HyStart (ACK-train and delay detection) and the Reno-friendly region, in packets like the
//! kernel: W(t) = C·(t − K)³ + W_max with C = 41·10/1024 ≈ 0.4 (bic_scale) and β = 717/1024.
//! Time `t` is in 1/1024 s and includes the minimum delay, as in the kernel.

use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::units::{SimDuration, SimTime};

const BETA_SCALE: u64 = 1024;
/// t is kept in units of 2^-BICTCP_HZ seconds.
const BICTCP_HZ: u32 = 10;
/// HyStart needs this many delay samples per round before judging.
const HYSTART_MIN_SAMPLES: u32 = 8;

/// CUBIC parameters; defaults are the Linux module parameters (a scenario sets them in its
/// `[defaults.tcp.cubic]` or `[flows.tcp.cubic]` table, `hz` in the `tcp` table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicConfig {
    /// Fast convergence: after a loss below W_max, W_max = (1 + β)/2 of the window (default on).
    pub fast_convergence: bool,
    /// β, the fraction of the window kept after a loss, ×1024, in 1..1024 (default 717 ≈ 0.7).
    pub beta: u32,
    /// C ×1024/10, segments/s³ (default 41 → C ≈ 0.4).
    pub bic_scale: u32,
    /// Reno-friendly region (default on).
    pub tcp_friendliness: bool,
    /// HyStart (default on).
    pub hystart: bool,
    /// HyStart acts only from this window on, segments (default 16).
    pub hystart_low_window: u32,
    /// ACKs at most this far apart form a train (default 2 ms).
    pub hystart_ack_delta: SimDuration,
    /// Kernel HZ, the jiffy of `last_time` and of the HZ/32 recomputation pacing (default 1000).
    pub hz: u32,
}

impl Default for CubicConfig {
    fn default() -> Self {
        CubicConfig {
            fast_convergence: true,
            beta: 717,
            bic_scale: 41,
            tcp_friendliness: true,
            hystart: true,
            hystart_low_window: 16,
            hystart_ack_delta: SimDuration::from_millis(2),
            hz: 1000,
        }
    }
}

/// CUBIC state (segments).
#[derive(Clone, Debug)]
pub struct Cubic {
    cfg: CubicConfig,
    w: PacketWindow,
    cnt: u32,
    last_max_cwnd: u32,
    last_cwnd: u32,
    last_time: u64,
    origin_point: u32,
    k: u64,
    delay_min: Option<SimDuration>,
    epoch_start: u64,
    ack_cnt: u32,
    tcp_cwnd: u32,
    // HyStart.
    found: bool,
    round: u64,
    round_start: SimTime,
    last_ack: SimTime,
    curr_rtt: Option<SimDuration>,
    sample_cnt: u32,
}

impl Cubic {
    /// A CUBIC controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: CubicConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        Cubic {
            cfg,
            w: PacketWindow::new(cwnd, ssthresh, mss),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0,
            delay_min: None,
            epoch_start: 0,
            ack_cnt: 0,
            tcp_cwnd: 0,
            found: false,
            round: 0,
            round_start: SimTime::ZERO,
            last_ack: SimTime::ZERO,
            curr_rtt: None,
            sample_cnt: 0,
        }
    }

    /// W_max, segments.
    pub fn w_max(&self) -> u32 {
        self.last_max_cwnd
    }

    /// True once HyStart ended slow start.
    pub fn hystart_found(&self) -> bool {
        self.found
    }

    fn jiffies(&self, now: SimTime) -> u64 {
        now.0 / (1_000_000_000_000 / self.cfg.hz.max(1) as u64) + 1
    }

    fn reset(&mut self) {
        self.cnt = 0;
        self.last_max_cwnd = 0;
        self.last_cwnd = 0;
        self.last_time = 0;
        self.origin_point = 0;
        self.k = 0;
        self.delay_min = None;
        self.epoch_start = 0;
        self.ack_cnt = 0;
        self.tcp_cwnd = 0;
        self.found = false;
    }

    fn hystart_reset(&mut self, now: SimTime, round: u64) {
        self.round = round;
        self.round_start = now;
        self.last_ack = now;
        self.curr_rtt = None;
        self.sample_cnt = 0;
    }

    /// bictcp_update.
    fn update(&mut self, now: SimTime, acked: u32) {
        let cwnd = self.w.cwnd;
        self.ack_cnt += acked;
        let j = self.jiffies(now);
        if self.last_cwnd == cwnd && j.saturating_sub(self.last_time) <= (self.cfg.hz / 32) as u64 {
            return;
        }
        if !(self.epoch_start != 0 && j == self.last_time) {
            self.last_cwnd = cwnd;
            self.last_time = j;
            if self.epoch_start == 0 {
                self.epoch_start = j;
                self.ack_cnt = acked;
                self.tcp_cwnd = cwnd;
                if self.last_max_cwnd <= cwnd {
                    self.k = 0;
                    self.origin_point = cwnd;
                } else {
                    // K = ∛((W_max − cwnd)/C) in 1/1024 s: cube_factor = 2^40 / (10·bic_scale).
                    let cube_factor = (1u128 << (10 + 3 * BICTCP_HZ)) as f64 / (self.cfg.bic_scale as f64 * 10.0);
                    self.k = (cube_factor * (self.last_max_cwnd - cwnd) as f64).cbrt() as u64;
                    self.origin_point = self.last_max_cwnd;
                }
            }
            let target = self.target(j);
            self.cnt = if target > cwnd as u64 { (cwnd as u64 / (target - cwnd as u64)) as u32 } else { 100 * cwnd };
            // The initial growth before any loss is at most 5 % per RTT faster.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.cfg.tcp_friendliness {
            // beta_scale = 8·(1024 + β)/3/(1024 − β) (= 15 for β = 717).
            let beta = self.cfg.beta as u64;
            let scale = 8 * (BETA_SCALE + beta) / 3 / (BETA_SCALE - beta);
            let delta = ((cwnd as u64 * scale) >> 3).max(1) as u32;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// bictcp_update's target window (segments) at jiffy `j` of the current epoch:
    /// W(t) = origin + C·(t − K)³ with t the time since the epoch *plus the minimum delay*
    /// (RFC 8312 §4.1's W_cubic(t + RTT): where the window should be one RTT from now), t in
    /// 1/1024 s.
    fn target(&self, j: u64) -> u64 {
        let hz = self.cfg.hz as u64;
        let dmin_j = self.delay_min.map_or(0, |d| d.as_ps() / (1_000_000_000_000 / hz));
        let t = ((j - self.epoch_start + dmin_j) << BICTCP_HZ) / hz;
        let offs = t.abs_diff(self.k);
        let delta = ((self.cfg.bic_scale as u128 * 10 * offs as u128 * offs as u128 * offs as u128) >> (10 + 3 * BICTCP_HZ)) as u64;
        if t < self.k {
            (self.origin_point as u64).saturating_sub(delta)
        } else {
            self.origin_point as u64 + delta
        }
    }

    fn hystart_update(&mut self, now: SimTime, delay: SimDuration, round: u64) {
        if round != self.round {
            self.hystart_reset(now, round);
        }
        let dmin = self.delay_min.unwrap_or(delay);
        // ACK train: closely spaced ACKs spanning more than half the minimum delay.
        if now.since(self.last_ack) <= self.cfg.hystart_ack_delta {
            self.last_ack = now;
            if now.since(self.round_start) > SimDuration(dmin.as_ps() / 2) {
                self.found = true;
            }
        }
        // Delay increase: the round's minimum RTT exceeds delay_min + clamp(delay_min/8, 4, 16 ms).
        self.curr_rtt = Some(self.curr_rtt.map_or(delay, |c| c.min(delay)));
        if self.sample_cnt < HYSTART_MIN_SAMPLES {
            self.sample_cnt += 1;
        } else {
            let thresh = SimDuration(dmin.as_ps() / 8).max(SimDuration::from_millis(4)).min(SimDuration::from_millis(16));
            if self.curr_rtt.is_some_and(|c| c > dmin + thresh) {
                self.found = true;
            }
        }
        if self.found {
            self.w.ssthresh = self.w.cwnd;
        }
    }

    fn recalc_ssthresh(&mut self) -> u32 {
        self.epoch_start = 0;
        let cwnd = self.w.cwnd;
        self.last_max_cwnd =
            if cwnd < self.last_max_cwnd && self.cfg.fast_convergence { (cwnd as u64 * (BETA_SCALE + self.cfg.beta as u64) / (2 * BETA_SCALE)) as u32 } else { cwnd };
        ((cwnd as u64 * self.cfg.beta as u64 / BETA_SCALE) as u32).max(2)
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    fn on_ack(&mut self, a: &AckSample) {
        // bictcp_acked (pkts_acked): delay_min, HyStart.
        if let Some(rtt) = a.rtt {
            let recent_epoch = self.epoch_start != 0 && self.jiffies(a.now).saturating_sub(self.epoch_start) < self.cfg.hz as u64;
            if !recent_epoch {
                let d = rtt.max(SimDuration::from_micros(1));
                self.delay_min = Some(self.delay_min.map_or(d, |m| m.min(d)));
                if self.cfg.hystart && !self.found && self.w.cwnd < self.w.ssthresh && self.w.cwnd >= self.cfg.hystart_low_window {
                    self.hystart_update(a.now, d, a.round);
                }
            }
        }
        if !a.cwnd_limited {
            return;
        }
        // Linux 4.x+ `tcp_cong_control(…, acked_sacked)`: segments newly delivered, not the
        // SACKed segments a hole-filling ACK removes from the queue.
        let mut acked = a.delivered_segments();
        if self.w.cwnd < self.w.ssthresh {
            // tcp_slow_start: cwnd += acked, up to ssthresh; the rest goes to avoidance.
            let new = (self.w.cwnd + acked).min(self.w.ssthresh.max(self.w.cwnd));
            acked -= new - self.w.cwnd;
            self.w.cwnd = new;
            if acked == 0 {
                return;
            }
        }
        self.update(a.now, acked);
        // tcp_cong_avoid_ai.
        let w = self.cnt.max(1);
        if self.w.cwnd_cnt >= w {
            self.w.cwnd_cnt = 0;
            self.w.cwnd += 1;
        }
        self.w.cwnd_cnt += acked;
        if self.w.cwnd_cnt >= w {
            let d = self.w.cwnd_cnt / w;
            self.w.cwnd_cnt -= d * w;
            self.w.cwnd += d;
        }
    }
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.w.ssthresh = self.recalc_ssthresh();
    }
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.w.exit_recovery(ev);
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    fn growth_bound(&self, a: &AckSample) -> u64 {
        // tcp_slow_start: one segment per segment delivered, up to ssthresh; the rest goes to
        // tcp_cong_avoid_ai with cnt ≥ 2 (bictcp_update's floor): at most one segment per two
        // delivered (1.5× per RTT), plus the one a full `cwnd_cnt` carried over may add.
        let acked = a.delivered_segments() as u64;
        let (cwnd, ssthresh) = (self.w.cwnd as u64, self.w.ssthresh as u64);
        let ss = if cwnd < ssthresh { acked.min(ssthresh - cwnd) } else { 0 };
        let rest = acked - ss;
        let ca = if rest > 0 { 1 + (self.w.cwnd_cnt as u64 + rest) / 2 } else { 0 };
        (ss + ca) * self.w.mss
    }
    fn loss_ssthresh(&self, _ev: &CongestionEvent) -> (u64, u64) {
        let segs = (self.w.cwnd as u64 * self.cfg.beta as u64 / BETA_SCALE).max(2); // bictcp_recalc_ssthresh
        (segs * self.w.mss, segs * self.w.mss)
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            self.w.ssthresh = self.recalc_ssthresh();
        }
        self.reset();
        self.hystart_reset(ev.now, self.round);
        self.w.loss_window();
    }
}

/// The largest `bic_scale`: C ≈ 98 segments/s³, far beyond any kernel's use, keeps the cube
/// arithmetic exact.
const MAX_BIC_SCALE: u32 = 10_000;

crate::param_table! {
    /// `[defaults.tcp.cubic]`, `[flows.tcp.cubic]`: CUBIC's module parameters (modern Linux
    /// `tcp_cubic.c`), each optional and resolved like the keys of the `tcp` table. The
    /// defaults are Linux's; `hz` stays in the `tcp` table.
    CubicSpec => CubicParams {
        /// β: the fraction of the window kept after a loss, ×1024, in 1..1024 (default 717 ≈ 0.7).
        beta: u32 = CubicConfig::default().beta,
        /// The cubic's scale C as Linux's `bic_scale` = C·1024/10, in 1..=10000 (default 41,
        /// C ≈ 0.4 segments/s³).
        bic_scale: u32 = CubicConfig::default().bic_scale,
        /// Fast convergence: a flow that lost below its previous maximum remembers a lower one,
        /// (1 + β)/2 of its window (default true).
        fast_convergence: bool = CubicConfig::default().fast_convergence,
        /// The Reno-friendly region: grow at least as fast as Reno with the same β would
        /// (default true).
        tcp_friendliness: bool = CubicConfig::default().tcp_friendliness,
        /// HyStart: leave slow start on an ACK train or a delay increase (default true).
        hystart: bool = CubicConfig::default().hystart,
        /// HyStart acts only from this window on, segments (default 16).
        hystart_low_window: u32 = CubicConfig::default().hystart_low_window,
        /// HyStart: ACKs at most this far apart form a train (default 2ms).
        hystart_ack_delta: crate::quantity::Dur = crate::quantity::Dur(CubicConfig::default().hystart_ack_delta),
    }
}

impl super::Registered for Cubic {
    const NAME: &'static str = "cubic";
    type Controller = Cubic;
    type Config = CubicConfig;
    type Params = CubicParams;
    fn check_params(p: &CubicParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        if !(1..1024).contains(&p.beta) {
            return Err(ParamError::new("beta", "must be in 1..1024 (the kept fraction ×1024)"));
        }
        if !(1..=MAX_BIC_SCALE).contains(&p.bic_scale) {
            return Err(ParamError::new("bic_scale", format!("must be in 1..={MAX_BIC_SCALE} (C·1024/10; 41 is C ≈ 0.4)")));
        }
        Ok(())
    }
    fn check_selected(_: &CubicParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if tcp.abc_limit == 0 {
            return Err(crate::params::ParamError::new("abc_limit", "must be at least 1 for cubic (0, byte counting off, is for reno, newreno and bic)"));
        }
        Ok(())
    }
    fn config(p: &CubicParams, tcp: &super::CcContext) -> CubicConfig {
        let CubicParams { beta, bic_scale, fast_convergence, tcp_friendliness, hystart, hystart_low_window, hystart_ack_delta } = *p;
        CubicConfig { fast_convergence, beta, bic_scale, tcp_friendliness, hystart, hystart_low_window, hystart_ack_delta: hystart_ack_delta.0, hz: tcp.hz }
    }
    fn build(cfg: &CubicConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Cubic {
        Cubic::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1000;

    fn ack(now: SimTime, rtt_ms: u64, round: u64) -> AckSample {
        AckSample {
            now,
            bytes_acked: MSS as u64,
            packets_acked: 1,
            delivered: MSS as u64,
            mss: MSS,
            rtt: Some(SimDuration::from_millis(rtt_ms)),
            srtt: None,
            min_rtt: None,
            inflight_before: u64::MAX,
            cwnd_limited: true,
            after_timeout: false,
            open: true,
            round,
            timestamps: None,
            ts_tick: SimDuration::from_millis(1),
        }
    }

    #[test]
    fn cubic_curve_returns_to_w_max_after_k() {
        // After a loss at W_max = 1000, cwnd = ⌊1000·717/1024⌋ = 700; K = ∛(300/0.4) ≈ 9.1 s.
        let mut c = Cubic::new(CubicConfig { hystart: false, tcp_friendliness: false, ..CubicConfig::default() }, 1000 * MSS as u64, 0, MSS);
        c.w.ssthresh = 1;
        c.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        c.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None });
        assert_eq!(c.w.cwnd, 700);
        // Feed ACKs at one window per 100 ms RTT for 12 s; record the window each second.
        let mut now = SimTime::ZERO;
        let mut at = vec![];
        for rtt in 0..120u64 {
            for _ in 0..c.w.cwnd {
                c.on_ack(&ack(now, 100, rtt));
            }
            now += SimDuration::from_millis(100);
            if rtt % 10 == 9 {
                at.push(c.w.cwnd);
            }
        }
        // Concave approach to W_max, plateau around K ≈ 8.9 s, convex probing after.
        assert!(at[0] > 700 && at[0] < 1000, "{at:?}");
        let near_k = at[8] as i64;
        assert!((near_k - 1000).abs() <= 15, "at 9 s cwnd {near_k} ≈ W_max: {at:?}");
        // Convex probing: at t = 12 s (+0.1 s of delay_min), W = 0.4·(12.1 − 9.09)³ + 1000 ≈ 1011.
        assert!((at[11] as i64 - 1011).abs() <= 3, "convex growth beyond W_max: {at:?}");
        // Growth per second is smallest around K.
        let growth: Vec<i64> = at.windows(2).map(|w| w[1] as i64 - w[0] as i64).collect();
        let min_i = growth.iter().enumerate().min_by_key(|(_, g)| **g).unwrap().0;
        assert!((6..=9).contains(&min_i), "{growth:?}");
    }

    #[test]
    fn cubic_target_is_the_curve_one_minimum_rtt_ahead() {
        // W_max = 1000, cwnd 700 after the loss; every RTT sample is 300 ms, so the target at
        // s seconds into the epoch is W(s + 0.3 s) = W_max + C·(s + 0.3 − K)³ with
        // C = 41·10/1024 and K = ∛((W_max − 700)/C) ≈ 9.09 s (Linux bictcp_update).
        let cfg = CubicConfig { hystart: false, tcp_friendliness: false, ..CubicConfig::default() };
        let mut c = Cubic::new(cfg, 1000 * MSS as u64, 0, MSS);
        c.w.ssthresh = 1;
        c.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        c.on_recovery_exit(&RecoveryExit { now: SimTime::ZERO, inflight: 0, mss: MSS, window: None });
        assert_eq!(c.w.cwnd, 700);
        let t0 = SimTime::ZERO + SimDuration::from_secs(10);
        c.on_ack(&ack(t0, 300, 0)); // starts the epoch (and samples the 300 ms delay)
        assert_eq!(c.delay_min, Some(SimDuration::from_millis(300)));
        let epoch = c.epoch_start;
        assert_eq!(epoch, c.jiffies(t0));
        let big_c = 41.0 * 10.0 / 1024.0;
        let k = (300.0f64 / big_c).cbrt();
        let w = |t: f64| 1000.0 + big_c * (t - k).powi(3);
        // The kernel's arithmetic (t and K in 1/1024 s, the cube shifted down) is within a
        // packet of the real curve; the minimum delay moves the target by far more.
        let tol = 1.5;
        for s in [0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 13.0, 14.0, 16.0] {
            let want = w(s + 0.3);
            assert!((want - w(s)).abs() > 3.0 * tol, "at {s} s the delay matters: {} vs {}", want, w(s));
            let got = c.target(epoch + (s * 1000.0) as u64) as f64;
            assert!((got - want).abs() <= tol, "target at {s} s: {got}, W(t + d_min) = {want:.2}, W(t) = {:.2}", w(s));
        }
    }

    #[test]
    fn hystart_delay_rule_ends_slow_start() {
        let mut c = Cubic::new(CubicConfig::default(), 10 * MSS as u64, u64::MAX, MSS);
        let mut now = SimTime::ZERO;
        // Rounds with 50 ms RTT, ACKs spread out (no ACK train); then the RTT rises to 70 ms.
        for round in 0..20u64 {
            let rtt = if round < 5 { 50 } else { 70 };
            let n = c.w.cwnd;
            for _ in 0..n {
                now += SimDuration::from_millis(5);
                c.on_ack(&ack(now, rtt, round));
                if c.hystart_found() {
                    break;
                }
            }
            if c.hystart_found() {
                break;
            }
        }
        assert!(c.hystart_found());
        assert_eq!(c.ssthresh(), c.cwnd());
    }

    #[test]
    fn loss_response() {
        let mut c = Cubic::new(CubicConfig::default(), 100 * MSS as u64, u64::MAX, MSS);
        c.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        assert_eq!(c.ssthresh(), 70 * MSS as u64);
        assert_eq!(c.w_max(), 100);
        c.w.cwnd = 80;
        c.on_congestion(&CongestionEvent { now: SimTime::ZERO, inflight: 0, mss: MSS });
        assert_eq!(c.w_max(), 80 * 1741 / 2048, "fast convergence");
        c.on_timeout(&TimeoutEvent { now: SimTime::ZERO, inflight: 0, mss: MSS, backoffs: 1 });
        assert_eq!(c.cwnd(), MSS as u64);
    }
}
