//! ImTCP-bg (Tsugawa, Hasegawa, Murata; APCC 2005, the seed slides of study 003): a background
//! transfer that keeps its window below what the path has free. Reno inside; ImTCP's
//! available-bandwidth estimates arrive as `CcInput::AvailableBandwidth` (the measurement
//! stage feeds them through `Connection::feed_controller`), and an RTT rule guards against
//! estimates that cannot be trusted.
//!
//! The rules (dev/p3/EVIDENCE.md §5; "S*n* L*k*" are the seed slides' section and line):
//!
//! - B1 smoothing: after each result A_cur, Ā ← (1 − γ)·Ā + γ·A_cur, γ = 1/8 (S4 L54, S7 L124);
//!   the first result sets Ā (ASSUMPTION(p3): the slides give no initialisation).
//! - B2 cap: cwnd ← min(cwnd, Ā·RTT_min) on every ACK, after Reno's own update (S4 L58; "on
//!   every ACK", S5 L88–L89), and at once when a result arrives. ASSUMPTION(p3) (EVIDENCE §5
//!   [R]): Ā·RTT_min in bytes rounded down to whole segments, at least `cap_floor` segments
//!   (default 2); no cap before the first result, nor before the first RTT sample.
//! - B3 RTT rule: on an ACK whose RTT sample gives RTT_cur/RTT_min > δ (δ = 1.4, S4 L66, S7
//!   L124), cwnd ← cwnd·RTT_min/RTT_cur (S4 L72). ASSUMPTION(p3) (§5 [R]): RTT_cur is the
//!   ACK's own sample, not smoothed; applied after the cap; at most once per packet-timed
//!   round (`rtt_cut = "once-per-rtt"`, the default) or on every such ACK (`"per-ack"`);
//!   ssthresh is not touched; the cut never takes cwnd below `cap_floor` segments (nor raises
//!   a smaller one).
//! - B4 everything else is Reno: slow start, congestion avoidance, the loss and timeout rules
//!   ([E2E04]/[HOME]: "ImTCP is based on Reno"; ASSUMPTION(p3) for ImTCP-bg).
//! - B5 RTT_min is the least RTT sample of the connection (S4 L58), `AckSample::min_rtt`.
//! - RTT samples (B2's RTT_min, B3's RTT_cur), `rtt_source`. ASSUMPTION(p3), unknown which the
//!   authors used (EVIDENCE §5 "Open"; README "Unfinished and known gaps"): `"tcp"` (default)
//!   takes the connection's samples, timed from `tcp_output` as FreeBSD's are, so a segment an
//!   output stage holds (ImTCP's stage spacing its streams) carries its wait into RTT_cur;
//!   `"stage"` takes the stage's own samples (`CcInput::StageRtt`: from the stage's release
//!   of the segment to its ACK, `tcp::stage_rtt`), fed just before the ACK's `on_ack`, and
//!   RTT_min is the least of them. An ACK without a stage sample then leaves B3 alone.
//!
//! The slides' δ = 1.4 is the default; the FreeBSD code's sysctl default `imtcp_delta` = 130
//! reads as δ = 1.3 (EVIDENCE §5, [BSDPAGE]), a swept alternative. `cap = false` and
//! `rtt_rule = false` switch B2 and B3 off for the ablations (FINDINGS F10).

use super::{AckSample, CcInput, CcInputKind, CongestionControl, CongestionEvent, RecoveryExit, Reno, RenoConfig, TimeoutEvent, WindowState};
use crate::params::ParamError;
use crate::units::{SimDuration, SimTime, PS_PER_SEC};

/// How often the RTT rule (B3) may cut.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttCut {
    /// At most once per packet-timed round trip (ASSUMPTION(p3), EVIDENCE §5 B3 [R]).
    #[default]
    OncePerRtt,
    /// On every ACK whose sample is above δ·RTT_min.
    PerAck,
}

/// Where ImTCP-bg's RTT samples come from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RttSource {
    /// The connection's samples (`AckSample::rtt`, `min_rtt`), timed from `tcp_output`, before
    /// any output stage: a held segment's wait is in them (the shipped reading).
    #[default]
    Tcp,
    /// The output stage's samples (`CcInput::StageRtt`), timed from the stage's release.
    Stage,
}

/// Parameters of ImTCP-bg.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImtcpBgConfig {
    /// Reno's growth rules (`abc_limit`).
    pub reno: RenoConfig,
    /// γ, the smoothing gain of Ā, in (0, 1] (slides: 1/8).
    pub gamma: f64,
    /// δ, the RTT ratio above which the window is cut, above 1 (slides: 1.4).
    pub delta: f64,
    /// The least window the cap and the RTT cut leave, segments, at least 1 (default 2).
    pub cap_floor: u32,
    /// How often the RTT rule may cut (default once per RTT).
    pub rtt_cut: RttCut,
    /// B2 on (default true).
    pub cap: bool,
    /// B3 on (default true).
    pub rtt_rule: bool,
    /// Where RTT_cur and RTT_min come from (default the connection's).
    pub rtt_source: RttSource,
}

impl Default for ImtcpBgConfig {
    fn default() -> Self {
        ImtcpBgConfig { reno: RenoConfig::default(), gamma: 0.125, delta: 1.4, cap_floor: 2, rtt_cut: RttCut::OncePerRtt, cap: true, rtt_rule: true, rtt_source: RttSource::Tcp }
    }
}

/// ImTCP-bg controller state: Reno and the smoothed estimate.
#[derive(Clone, Debug)]
pub struct ImtcpBg {
    cfg: ImtcpBgConfig,
    reno: Reno,
    /// Sender MSS, bytes (from the last ACK; the build's before one).
    mss: u64,
    /// Ā, bit/s (`None` before the first result).
    avail: Option<f64>,
    /// RTT_min (B5), once sampled.
    min_rtt: Option<SimDuration>,
    /// With `rtt_source = "stage"`: the stage's sample for the ACK arriving at that time.
    stage_rtt: Option<(SimTime, SimDuration)>,
    /// The largest RTT_cur B3 has judged.
    max_rtt_cur: Option<SimDuration>,
    /// The round of the last RTT cut.
    last_cut_round: Option<u64>,
    /// Results taken.
    results: u64,
    /// RTT cuts made.
    cuts: u64,
    /// ACKs taken (`on_ack` calls).
    acks: u64,
    /// The round of the last ACK taken.
    round: Option<u64>,
    /// The last ACK's RTT_cur (`None`: that ACK gave no sample).
    rtt_cur: Option<SimDuration>,
    /// cwnd just before the last RTT cut, bytes.
    cut_from: Option<u64>,
    /// Test only: bytes an input adds to the window (a broken controller for the checker).
    #[cfg(test)]
    pub(crate) grow_on_input: u64,
}

impl ImtcpBg {
    /// A controller starting at `cwnd`/`ssthresh` bytes with segments of `mss` bytes.
    pub fn new(cfg: ImtcpBgConfig, cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        ImtcpBg {
            cfg,
            reno: Reno::new("imtcp-bg", cfg.reno, cwnd, ssthresh),
            mss: mss.max(1) as u64,
            avail: None,
            min_rtt: None,
            stage_rtt: None,
            max_rtt_cur: None,
            last_cut_round: None,
            results: 0,
            cuts: 0,
            acks: 0,
            round: None,
            rtt_cur: None,
            cut_from: None,
            #[cfg(test)]
            grow_on_input: 0,
        }
    }

    /// Ā, bit/s, once a result has arrived.
    pub fn avail(&self) -> Option<f64> {
        self.avail
    }

    /// The cap Ā·RTT_min in bytes, whole segments, at least `cap_floor` segments (B2); `None`
    /// before the first result or the first RTT sample.
    pub fn cap_bytes(&self) -> Option<u64> {
        let (a, rtt) = (self.avail?, self.min_rtt?);
        let bytes = a * rtt.as_ps() as f64 / (8.0 * PS_PER_SEC as f64);
        let segs = (bytes / self.mss as f64).floor() as u64;
        Some(segs.max(self.cfg.cap_floor as u64) * self.mss)
    }

    /// Results taken so far.
    pub fn results(&self) -> u64 {
        self.results
    }

    /// RTT cuts made so far.
    pub fn cuts(&self) -> u64 {
        self.cuts
    }

    /// RTT_min as B2 and B3 use it (from `rtt_source`), once sampled.
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }

    /// The largest RTT_cur B3 has judged so far (from `rtt_source`).
    pub fn max_rtt_cur(&self) -> Option<SimDuration> {
        self.max_rtt_cur
    }

    /// The floor of the cap and of the RTT cut, bytes.
    fn floor(&self) -> u64 {
        self.cfg.cap_floor as u64 * self.mss
    }

    /// B2: cwnd ← min(cwnd, cap); never raises it.
    fn apply_cap(&mut self) {
        if !self.cfg.cap {
            return;
        }
        if let Some(cap) = self.cap_bytes() {
            if let WindowState::Bytes { cwnd, .. } = self.reno.window() {
                *cwnd = (*cwnd).min(cap);
            }
        }
    }

    /// B3 on one ACK's sample `cur` (from `rtt_source`).
    fn rtt_rule(&mut self, a: &AckSample, cur: Option<SimDuration>) {
        self.rtt_cur = cur;
        let (Some(cur), Some(min)) = (cur, self.min_rtt) else { return };
        self.max_rtt_cur = Some(self.max_rtt_cur.map_or(cur, |m| m.max(cur)));
        if !self.cfg.rtt_rule || (cur.as_ps() as f64) <= self.cfg.delta * min.as_ps() as f64 {
            return;
        }
        if self.cfg.rtt_cut == RttCut::OncePerRtt && self.last_cut_round == Some(a.round) {
            return;
        }
        let floor = self.floor();
        if let WindowState::Bytes { cwnd, .. } = self.reno.window() {
            let cut = (*cwnd as u128 * min.as_ps() as u128 / cur.as_ps().max(1) as u128) as u64;
            self.cut_from = Some(*cwnd);
            *cwnd = cut.max(floor.min(*cwnd));
        }
        self.last_cut_round = Some(a.round);
        self.cuts += 1;
    }
}

/// The `cc_state` trace's value columns for ImTCP-bg (`probe`): Ā (bit/s), RTT_min (s), the cap
/// Ā·RTT_min as B2 applies it (bytes), the last ACK's RTT_cur (s; NaN: no sample), ACKs taken, the last ACK's round,
/// RTT cuts made, the last cut's round, cwnd before the last cut (bytes), results taken.
pub const PROBE_NAMES: [&str; super::PROBE_VALUES] = ["avail_bps", "rtt_min_s", "cap_bytes", "rtt_cur_s", "acks", "round", "cuts", "cut_round", "cut_from_bytes", "results"];

impl CongestionControl for ImtcpBg {
    fn name(&self) -> &'static str {
        "imtcp-bg"
    }
    fn cwnd(&self) -> u64 {
        self.reno.cwnd()
    }
    fn ssthresh(&self) -> u64 {
        self.reno.ssthresh()
    }
    /// B4 Reno's update, then B2's cap, then B3's cut.
    fn on_ack(&mut self, a: &AckSample) {
        self.mss = (a.mss as u64).max(1);
        self.acks += 1;
        self.round = Some(a.round);
        let cur = match self.cfg.rtt_source {
            RttSource::Tcp => {
                if let Some(m) = a.min_rtt {
                    self.min_rtt = Some(m);
                }
                a.rtt
            }
            // The stage's sample for this ACK, fed at its arrival (once: a later ACK at the
            // same instant without one of its own does not reuse it).
            RttSource::Stage => self.stage_rtt.take().filter(|&(at, _)| at == a.now).map(|(_, r)| r),
        };
        self.reno.on_ack(a);
        self.apply_cap();
        self.rtt_rule(a, cur);
    }
    fn on_congestion(&mut self, ev: &CongestionEvent) {
        self.reno.on_congestion(ev);
    }
    /// Reno's exit (cwnd = ssthresh), then the cap (B2).
    fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
        self.reno.on_recovery_exit(ev);
        self.apply_cap();
    }
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        self.reno.on_timeout(ev);
    }
    fn window(&mut self) -> WindowState<'_> {
        self.reno.window()
    }
    fn probe_names(&self) -> &'static [&'static str] {
        &PROBE_NAMES
    }
    /// Ā, RTT_min, the cap (NaN with `cap = false`), the last ACK's RTT_cur (NaN when it gave no
    /// sample), the ACKs taken
    /// and the round of the last, the cuts made and the round and the cwnd before the last,
    /// the results taken (`PROBE_NAMES`); NaN before a value exists.
    fn probe(&self, out: &mut [f64; super::PROBE_VALUES]) {
        let secs = |d: Option<SimDuration>| d.map_or(f64::NAN, |d| d.as_secs_f64());
        let count = |n: Option<u64>| n.map_or(f64::NAN, |n| n as f64);
        *out = [
            self.avail.unwrap_or(f64::NAN),
            secs(self.min_rtt),
            count(self.cap_bytes().filter(|_| self.cfg.cap)),
            secs(self.rtt_cur),
            self.acks as f64,
            count(self.round),
            self.cuts as f64,
            count(self.last_cut_round),
            count(self.cut_from),
            self.results as f64,
        ];
    }
    /// Reno's bound: the cap and the RTT cut only lower the window.
    fn growth_bound(&self, a: &AckSample) -> u64 {
        self.reno.growth_bound(a)
    }
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        self.reno.loss_ssthresh(ev)
    }
    /// B1: smooth the result into Ā (the first sets it), then B2's cap at once; a stage RTT
    /// sample is kept for the ACK it came with (`rtt_source = "stage"`; ignored otherwise).
    fn on_input(&mut self, now: SimTime, input: &CcInput) {
        match *input {
            CcInput::AvailableBandwidth { rate, .. } => {
                let a = rate.bps() as f64;
                let g = self.cfg.gamma;
                self.avail = Some(self.avail.map_or(a, |old| (1.0 - g) * old + g * a));
                self.results += 1;
                self.apply_cap();
            }
            CcInput::StageRtt { rtt } if self.cfg.rtt_source == RttSource::Stage => {
                self.stage_rtt = Some((now, rtt));
                self.min_rtt = Some(self.min_rtt.map_or(rtt, |m| m.min(rtt)));
            }
            CcInput::StageRtt { .. } => {}
        }
        #[cfg(test)]
        if let WindowState::Bytes { cwnd, .. } = self.reno.window() {
            *cwnd += self.grow_on_input;
        }
    }
}

crate::param_table! {
    /// `[….tcp.imtcp_bg]`: ImTCP-bg's constants (`abc_limit` is the `tcp` table's). ImTCP-bg
    /// needs the available-bandwidth input: `tcp.variant = "imtcp"`.
    ImtcpBgSpec => ImtcpBgParams {
        /// γ, the smoothing gain of Ā, in (0, 1] (default 0.125: the slides' 1/8).
        gamma: f64 = 0.125,
        /// δ, the RTT ratio RTT_cur/RTT_min above which cwnd is cut by RTT_min/RTT_cur, above 1
        /// (default 1.4, the slides'; the FreeBSD code's default reads as 1.3).
        delta: f64 = 1.4,
        /// The least window the cap and the RTT cut leave, segments, at least 1 (default 2).
        cap_floor: u32 = 2,
        /// How often the RTT rule may cut: `"once-per-rtt"` (default) or `"per-ack"`.
        rtt_cut: RttCut = RttCut::OncePerRtt,
        /// The cap cwnd ≤ Ā·RTT_min (default true; false for the ablation).
        cap: bool = true,
        /// The RTT rule (default true; false for the ablation).
        rtt_rule: bool = true,
        /// Where RTT_cur (B3) and RTT_min (B2, B3) come from, a name (no unit): `"tcp"`
        /// (default: the connection's samples, timed from `tcp_output`, so a segment ImTCP's
        /// stage holds carries its wait; `AckSample::rtt`, as the connection measures it) or `"stage"` (the
        /// ImTCP stage's samples, exact, from its release of the segment to the ACK that covers
        /// it, none when a covered segment was retransmitted; the wait is not in them).
        rtt_source: RttSource = RttSource::Tcp,
    }
}

impl super::Registered for ImtcpBg {
    const NAME: &'static str = "imtcp-bg";
    type Controller = ImtcpBg;
    type Config = ImtcpBgConfig;
    type Params = ImtcpBgParams;
    /// The estimates; the stage's RTT samples (used with `rtt_source = "stage"`), which the same
    /// variant produces.
    const INPUTS: &'static [CcInputKind] = &[CcInputKind::AvailableBandwidth, CcInputKind::StageRtt];
    fn check_params(p: &ImtcpBgParams) -> Result<(), ParamError> {
        if !(p.gamma > 0.0 && p.gamma <= 1.0) {
            return Err(ParamError::new("gamma", format!("{} is out of range (a gain in (0, 1]; the slides' 1/8 = 0.125)", p.gamma)));
        }
        if !(p.delta.is_finite() && p.delta > 1.0) {
            return Err(ParamError::new("delta", format!("{} is out of range (an RTT ratio above 1; the slides' 1.4)", p.delta)));
        }
        if !(1..=1_000_000).contains(&p.cap_floor) {
            return Err(ParamError::new("cap_floor", format!("{} is out of range (1..=1000000 segments)", p.cap_floor)));
        }
        Ok(())
    }
    fn config(p: &ImtcpBgParams, tcp: &super::CcContext) -> ImtcpBgConfig {
        let ImtcpBgParams { gamma, delta, cap_floor, rtt_cut, cap, rtt_rule, rtt_source } = *p;
        ImtcpBgConfig { reno: RenoConfig { abc_limit: tcp.abc_limit, max_ssthresh: 0, exact_increase: false }, gamma, delta, cap_floor, rtt_cut, cap, rtt_rule, rtt_source }
    }
    fn build(cfg: &ImtcpBgConfig, cwnd: u64, ssthresh: u64, mss: u32) -> ImtcpBg {
        ImtcpBg::new(*cfg, cwnd, ssthresh, mss)
    }
}

#[cfg(test)]
#[path = "imtcp_bg_tests.rs"]
mod tests;
