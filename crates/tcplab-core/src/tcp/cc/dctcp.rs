//! DCTCP (RFC 8257; Alizadeh et al., SIGCOMM 2010; Linux `net/ipv4/tcp_dctcp.c`): the Reno
//! window rules, plus an estimate α of the fraction of bytes that met congestion, updated once
//! per window of data as α ← (1 − g)·α + g·F (F: the share of bytes acknowledged with ECE in
//! that window), and on ECN-Echo a cut of the window by α/2 instead of half. Losses and
//! timeouts are answered as by Reno (RFC 8257 §3.4). The connection does the ECN itself
//! (`tcp::conn::ecn`): ECT on every segment, the receiver's exact echo, once-per-window
//! reaction.
//!
//! α is kept as Linux does, in 1/1024ths (`DCTCP_MAX_ALPHA`), starting at `alpha_on_init`
//! (Linux default 1024: the first marks halve the window), with g = 2^−`shift_g` (default 4,
//! g = 1/16). The window of data is the connection's packet-timed round: it ends when data
//! sent after it began is acknowledged (RFC 8257 §3.3's `WindowEnd` = SND.NXT).

use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, Reno, RenoConfig, TimeoutEvent, WindowState};

/// α at its largest: 1 in Linux's fixed point.
pub const MAX_ALPHA: u32 = 1024;

/// Parameters of DCTCP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpConfig {
    /// The window growth rules (Reno's).
    pub reno: RenoConfig,
    /// g = 2^−shift_g (Linux `dctcp_shift_g`, default 4; at most 10).
    pub shift_g: u32,
    /// α at the start, in 1/1024ths (Linux `dctcp_alpha_on_init`, default 1024).
    pub alpha_on_init: u32,
}

impl Default for DctcpConfig {
    fn default() -> Self {
        DctcpConfig { reno: RenoConfig::default(), shift_g: 4, alpha_on_init: MAX_ALPHA }
    }
}

/// DCTCP controller state.
#[derive(Clone, Debug)]
pub struct Dctcp {
    reno: Reno,
    cfg: DctcpConfig,
    alpha: u32,
    /// Bytes acknowledged, and those with ECE, in the current window of data.
    acked: u64,
    acked_ece: u64,
    /// The round the current window of data belongs to.
    round: u64,
}

impl Dctcp {
    /// A controller starting at `cwnd`/`ssthresh` bytes.
    pub fn new(cfg: DctcpConfig, cwnd: u64, ssthresh: u64) -> Self {
        Dctcp { reno: Reno::new("dctcp", cfg.reno, cwnd, ssthresh), cfg, alpha: cfg.alpha_on_init.min(MAX_ALPHA), acked: 0, acked_ece: 0, round: 0 }
    }

    /// α in 1/1024ths.
    pub fn alpha(&self) -> u32 {
        self.alpha
    }

    /// The end of a window of data: α ← (1 − g)·α + g·F.
    fn update_alpha(&mut self) {
        let g = self.cfg.shift_g.min(10);
        // Decay by α·g, or to zero once α·g rounds to nothing (Linux `min_not_zero`).
        let decay = match self.alpha >> g {
            0 => self.alpha,
            d => d,
        };
        self.alpha -= decay;
        if self.acked_ece > 0 {
            let f = ((self.acked_ece as u128) << (10 - g)) / self.acked.max(1) as u128;
            self.alpha = (self.alpha as u128 + f).min(MAX_ALPHA as u128) as u32;
        }
        self.acked = 0;
        self.acked_ece = 0;
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }
    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }
    fn on_ack(&mut self, ack: &AckSample) {
        self.reno.on_ack(ack);
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
    fn growth_bound(&self, ack: &AckSample) -> u64 {
        self.reno.growth_bound(ack)
    }
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        self.reno.loss_ssthresh(ev)
    }
    fn on_ecn_feedback(&mut self, bytes_acked: u64, ece: bool, round: u64) {
        self.acked += bytes_acked;
        if ece {
            self.acked_ece += bytes_acked;
        }
        if round != self.round {
            self.round = round;
            self.update_alpha();
        }
    }
    fn on_ecn_echo(&mut self, ev: &CongestionEvent) {
        // RFC 8257 §3.3: cwnd ← cwnd·(1 − α/2); Linux `dctcp_ssthresh`: at least 2 segments.
        let WindowState::Bytes { cwnd, ssthresh } = self.reno.window() else { unreachable!("Reno keeps bytes") };
        let cut = ((*cwnd as u128 * self.alpha as u128) >> 11) as u64;
        *ssthresh = cwnd.saturating_sub(cut).max(2 * ev.mss as u64);
        *cwnd = (*ssthresh).min(*cwnd).max(ev.mss as u64);
    }
}

crate::param_table! {
    /// `[defaults.tcp.dctcp]`, `[flows.tcp.dctcp]`: DCTCP's module parameters (Linux
    /// `tcp_dctcp.c`), each optional and resolved like the keys of the `tcp` table.
    DctcpSpec => DctcpParams {
        /// The estimate's gain g = 2^−shift_g, in 0..=10 (default 4, g = 1/16).
        shift_g: u32 = DctcpConfig::default().shift_g,
        /// α at the start, in 1/1024ths, 0..=1024 (default 1024: the first marks halve the window).
        alpha_on_init: u32 = DctcpConfig::default().alpha_on_init,
    }
}

impl super::Registered for Dctcp {
    const NAME: &'static str = "dctcp";
    type Controller = Dctcp;
    type Config = DctcpConfig;
    type Params = DctcpParams;
    const NEEDS_ECN: bool = true;
    fn check_params(p: &DctcpParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        if p.shift_g > 10 {
            return Err(ParamError::new("shift_g", format!("{} is out of range (0..=10; g = 2^-shift_g)", p.shift_g)));
        }
        if p.alpha_on_init > 1024 {
            return Err(ParamError::new("alpha_on_init", format!("{} is out of range (0..=1024, α in 1/1024ths)", p.alpha_on_init)));
        }
        Ok(())
    }
    fn check_selected(_: &DctcpParams, tcp: &super::CcContext) -> Result<(), crate::params::ParamError> {
        if !tcp.ecn {
            return Err(crate::params::ParamError::new("ecn", "cc = \"dctcp\" needs ECN (leave ecn out, or set it true)"));
        }
        Ok(())
    }
    fn config(p: &DctcpParams, tcp: &super::CcContext) -> DctcpConfig {
        DctcpConfig { reno: RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: 0, exact_increase: false }, shift_g: p.shift_g, alpha_on_init: p.alpha_on_init }
    }
    fn build(cfg: &DctcpConfig, cwnd: u64, ssthresh: u64, _mss: u32) -> Dctcp {
        Dctcp::new(*cfg, cwnd, ssthresh)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimTime;

    fn ev() -> CongestionEvent {
        CongestionEvent { now: SimTime::ZERO, inflight: 100_000, mss: 1000 }
    }

    #[test]
    fn alpha_follows_the_marked_fraction() {
        let mut d = Dctcp::new(DctcpConfig::default(), 100_000, u64::MAX);
        assert_eq!(d.alpha(), 1024, "starts at 1 (Linux dctcp_alpha_on_init)");
        // Windows with no marks: α decays by 1/16 each, to zero in the end.
        for r in 1..=200 {
            d.on_ecn_feedback(10_000, false, r);
        }
        assert_eq!(d.alpha(), 0);
        // A steady 25 % of bytes marked: α converges to 1/4 (256/1024), within rounding.
        for r in 201..=600 {
            d.on_ecn_feedback(7_500, false, r);
            d.on_ecn_feedback(2_500, true, r);
        }
        assert!((240..=256).contains(&d.alpha()), "α = {}", d.alpha());
    }

    #[test]
    fn alpha_changes_once_per_window() {
        let mut d = Dctcp::new(DctcpConfig { alpha_on_init: 0, ..Default::default() }, 100_000, u64::MAX);
        // The ACK that moves to a new round acknowledges data of the old one: it is counted in
        // the window it closes (Linux: accumulate, then compare SND.UNA with `next_seq`).
        d.on_ecn_feedback(1000, true, 1);
        let a = d.alpha();
        assert_eq!(a, 64, "F = 1 over the first window: α = g");
        d.on_ecn_feedback(1000, true, 1);
        d.on_ecn_feedback(1000, true, 1);
        assert_eq!(d.alpha(), a, "no update inside a window");
        d.on_ecn_feedback(1000, false, 2);
        // Round 1: 2000 bytes marked and the closing ACK's 1000 not, F = 2/3:
        // α = 64 − 64/16 + (2/3)·64 = 60 + 42.
        assert_eq!(d.alpha(), 102, "updated when the window ends");
    }

    #[test]
    fn echo_cuts_by_half_alpha_and_loss_halves() {
        let mut d = Dctcp::new(DctcpConfig::default(), 100_000, u64::MAX);
        d.on_ecn_echo(&ev());
        assert_eq!((d.cwnd(), d.ssthresh()), (50_000, 50_000), "α = 1: half");
        let mut d = Dctcp::new(DctcpConfig { alpha_on_init: 256, ..Default::default() }, 100_000, u64::MAX);
        d.on_ecn_echo(&ev());
        assert_eq!(d.cwnd(), 87_500, "α = 1/4: cwnd·(1 − α/2)");
        let mut d = Dctcp::new(DctcpConfig { alpha_on_init: 0, ..Default::default() }, 100_000, u64::MAX);
        d.on_ecn_echo(&ev());
        assert_eq!(d.cwnd(), 100_000, "α = 0: no cut");
        d.on_congestion(&ev());
        assert_eq!(d.ssthresh(), 50_000, "a loss halves, as Reno (RFC 8257 §3.4)");
        let mut d = Dctcp::new(DctcpConfig::default(), 2_000, u64::MAX);
        d.on_ecn_echo(&ev());
        assert_eq!(d.cwnd(), 2_000, "never below two segments");
    }
}
