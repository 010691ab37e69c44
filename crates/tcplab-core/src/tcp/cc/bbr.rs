//! BBR v1 as Linux `net/ipv4/tcp_bbr.c` (4.9–5.x; Cardwell et al., "BBR: Congestion-Based
//! Congestion Control", ACM Queue 2016), in packets like the kernel, over the connection's
//! delivery-rate sampler (`cc::rate`, Linux `tcp_rate.c`) and pacing gate.
//!
//! The model: BtlBw, the windowed maximum of the delivery-rate samples over the last
//! `bw_rtts` (10) packet-timed round trips (Kathleen Nichols' running max, `lib/minmax.c`,
//! here `MinMax`), app-limited samples taken only when they raise it (`bbr_update_bw`); and
//! min_rtt, the least RTT sample over `min_rtt_win` (10 s; `bbr_update_min_rtt`). A round
//! starts on the ACK of a segment sent after the last round began (`prior_delivered` ≥
//! `next_rtt_delivered`). The state machine:
//!
//! - STARTUP: pacing and cwnd gain high_gain = 2/ln 2 (739/256); the pipe is full once, over
//!   three rounds without app-limited samples, BtlBw grew less than 25 %
//!   (`bbr_check_full_bw_reached`); then
//! - DRAIN: pacing gain 1/high_gain, cwnd gain high_gain, until the flight is at most one BDP
//!   (`bbr_check_drain`; ssthresh is set to that BDP on entry, as 5.x does); then
//! - PROBE_BW: cwnd gain 2, pacing gains cycling [5/4, 3/4, 1, 1, 1, 1, 1, 1], entered at a
//!   random phase other than 3/4 (`bbr_reset_probe_bw_mode`, from the controller's own seeded
//!   stream); a phase lasts one min_rtt, the 5/4 one until the flight also reaches 5/4·BDP or
//!   a loss is seen, the 3/4 one ending early once the flight is down to one BDP
//!   (`bbr_is_next_cycle_phase`);
//! - PROBE_RTT, from any state once min_rtt is `min_rtt_win` old: cwnd at most
//!   `cwnd_min_target` (4) packets until max(`probe_rtt_time` (200 ms), one round) after the
//!   flight first fell to it, then back to PROBE_BW (or STARTUP if the pipe was never full)
//!   with the cwnd from before restored (`bbr_check_probe_rtt_done`).
//!
//! Pacing rate = pacing_gain × BtlBw × (100 − 1) % (`bbr_rate_bytes_per_sec`), raised only
//! until the pipe is full; at first high_gain × cwnd/srtt, srtt from the handshake's RTT sample
//! (`bbr_init_pacing_rate_from_rtt` in `bbr_init`, which Linux runs once the handshake is over),
//! or over 1 ms without one until the first RTT sample. cwnd (`bbr_set_cwnd`): target = ⌈BtlBw·min_rtt·gain⌉ +
//! 3 quanta (one segment each: `bbr_quantization_budget` with a one-segment TSO goal), rounded
//! up to even, +2 in the 5/4 phase; below the target cwnd grows by what each ACK delivered,
//! once the pipe is full it is min(cwnd + delivered, target); never below 4 packets.
//! Losses (`bbr_set_cwnd_to_recover_or_restore`): each ACK takes what it newly marked lost off
//! cwnd; the first round of fast recovery is packet conservation (cwnd = in flight + delivered);
//! leaving recovery or a timeout's repair restores the cwnd saved on entering it
//! (`bbr_save_cwnd`); a timeout leaves one packet (`tcp_enter_loss`), and BBR's next ACK
//! brings it back to at least 4. BBR halves nothing on a loss: ssthresh is unused.
//!
//! Not modelled: the long-term (policer) bandwidth estimate `lt_bw` (4.9–5.x have it; with no
//! policer on the path it never engages, and default behaviour equals Linux's there), 5.1's
//! ACK-aggregation allowance (`extra_acked`), the earliest-departure-time correction of the
//! flight (`bbr_packets_in_net_at_edt`, 4.20+: the 4.9 rule on the flight before the ACK is
//! used), the restart from idle (`CA_EVENT_TX_START`, `idle_restart`) and `is_ack_delayed`.

use super::rate::{CaState, RateSample};
use super::window::{PacketWindow, WindowState};
use super::{AckSample, CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::engine::Rng;
use crate::units::{SimDuration, SimTime};

/// Fixed-point unit of the gains (Linux `BBR_UNIT` = 1 << 8).
pub const BBR_UNIT: u32 = 256;
/// Linux `TCP_INIT_CWND`: the cwnd cap before any RTT sample, packets.
const TCP_INIT_CWND: u32 = 10;
/// The gain cycle's length (`CYCLE_LEN`).
pub const CYCLE_LEN: usize = 8;
/// PROBE_BW's pacing gains (`bbr_pacing_gain`): 5/4, 3/4, then six phases of 1.
pub const PACING_GAINS: [u32; CYCLE_LEN] = [BBR_UNIT * 5 / 4, BBR_UNIT * 3 / 4, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT, BBR_UNIT];

/// BBR's state (`bbr_mode`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up to fill the pipe.
    Startup = 0,
    /// Drain the queue STARTUP made.
    Drain = 1,
    /// Cycle the pacing gain around the estimated bandwidth.
    ProbeBw = 2,
    /// Cut the flight to refresh min_rtt.
    ProbeRtt = 3,
}

/// Kathleen Nichols' windowed running maximum (Linux `lib/minmax.c`): the best, second-best
/// and third-best samples of the window, each with its time (here: round count), so the
/// maximum over the last `win` rounds is kept in constant space.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MinMax {
    s: [(u64, u64); 3],
}

impl MinMax {
    /// The windowed maximum.
    pub fn get(&self) -> u64 {
        self.s[0].1
    }

    /// Restart the window with the sample `v` at `t` (`minmax_reset`).
    pub fn reset(&mut self, t: u64, v: u64) {
        self.s = [(t, v); 3];
    }

    /// Take sample `v` at time `t`, window `win` (`minmax_running_max`); returns the maximum.
    pub fn running_max(&mut self, win: u64, t: u64, v: u64) -> u64 {
        let val = (t, v);
        if v >= self.s[0].1 || t.saturating_sub(self.s[2].0) > win {
            self.reset(t, v); // A new best, or nothing left in the window.
            return v;
        }
        if v >= self.s[1].1 {
            self.s[2] = val;
            self.s[1] = val;
        } else if v >= self.s[2].1 {
            self.s[2] = val;
        }
        self.subwin_update(win, val)
    }

    /// `minmax_subwin_update`: age the best samples out of the window, and keep the second
    /// and third from one quarter and one half of it.
    fn subwin_update(&mut self, win: u64, val: (u64, u64)) -> u64 {
        let dt = val.0.saturating_sub(self.s[0].0);
        if dt > win {
            // The best has left the window: promote the others, and again if the new best has too.
            self.s = [self.s[1], self.s[2], val];
            if val.0.saturating_sub(self.s[0].0) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].0 == self.s[0].0 && dt > win / 4 {
            // A quarter of the window passed with no second choice: take one.
            self.s[2] = val;
            self.s[1] = val;
        } else if self.s[2].0 == self.s[1].0 && dt > win / 2 {
            // Half the window passed with no third choice: take one.
            self.s[2] = val;
        }
        self.s[0].1
    }
}

/// BBR's parameters (Linux's constants in `tcp_bbr.c`; gains in 1/256).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrConfig {
    /// STARTUP's pacing and cwnd gain, 1/256 (`bbr_high_gain` = 2885/1000·256 + 1 = 739).
    pub high_gain: u32,
    /// DRAIN's pacing gain, 1/256 (`bbr_drain_gain` = 1000·256/2885 = 88).
    pub drain_gain: u32,
    /// PROBE_BW's cwnd gain, 1/256 (`bbr_cwnd_gain` = 512).
    pub cwnd_gain: u32,
    /// The BtlBw filter's window, round trips (`bbr_bw_rtts` = 10).
    pub bw_rtts: u32,
    /// The min_rtt filter's window (`bbr_min_rtt_win_sec` = 10 s).
    pub min_rtt_win: SimDuration,
    /// PROBE_RTT's least duration (`bbr_probe_rtt_mode_ms` = 200 ms).
    pub probe_rtt_time: SimDuration,
    /// The least cwnd, and PROBE_RTT's, packets (`bbr_cwnd_min_target` = 4).
    pub cwnd_min_target: u32,
    /// BtlBw growth that counts as growth in STARTUP, 1/256 (`bbr_full_bw_thresh` = 320: 25 %).
    pub full_bw_thresh: u32,
    /// Rounds without such growth before the pipe is full (`bbr_full_bw_cnt` = 3).
    pub full_bw_cnt: u32,
    /// Pacing below the estimate by this many percent (`bbr_pacing_margin_percent` = 1).
    pub pacing_margin_percent: u32,
    /// Phases PROBE_BW may start at, counted back from the last (`bbr_cycle_rand` = 7:
    /// any phase but the 3/4 one).
    pub cycle_rand: u32,
}

impl Default for BbrConfig {
    fn default() -> Self {
        BbrConfig {
            high_gain: BBR_UNIT * 2885 / 1000 + 1,
            drain_gain: BBR_UNIT * 1000 / 2885,
            cwnd_gain: BBR_UNIT * 2,
            bw_rtts: 10,
            min_rtt_win: SimDuration::from_secs(10),
            probe_rtt_time: SimDuration::from_millis(200),
            cwnd_min_target: 4,
            full_bw_thresh: BBR_UNIT * 5 / 4,
            full_bw_cnt: 3,
            pacing_margin_percent: 1,
            cycle_rand: 7,
        }
    }
}

/// The `cc_state` trace's value columns for BBR (`probe`): the mode (0 STARTUP, 1 DRAIN,
/// 2 PROBE_BW, 3 PROBE_RTT), BtlBw (bit/s of payload), min_rtt (s), the pacing and cwnd gains,
/// the pacing rate (bit/s), the gain-cycle phase, 1 once the pipe is full, the round count.
pub const PROBE_NAMES: [&str; 9] = ["mode", "btlbw_bps", "min_rtt_s", "pacing_gain", "cwnd_gain", "pacing_rate_bps", "cycle_idx", "full_bw_reached", "rounds"];

/// BBR's state (cwnd in packets, rates in payload bytes per second).
#[derive(Clone, Debug)]
pub struct Bbr {
    cfg: BbrConfig,
    w: PacketWindow,
    /// BtlBw's filter, bytes/s keyed by round count.
    bw: MinMax,
    rtt_cnt: u64,
    /// `tp->delivered` at which the next round starts, bytes.
    next_rtt_delivered: u64,
    round_start: bool,
    min_rtt: Option<SimDuration>,
    min_rtt_stamp: SimTime,
    mode: BbrMode,
    pacing_gain: u32,
    cwnd_gain: u32,
    /// Bytes per second.
    pacing_rate: u64,
    has_seen_rtt: bool,
    full_bw: u64,
    full_bw_cnt: u32,
    full_bw_reached: bool,
    cycle_idx: usize,
    cycle_stamp: SimTime,
    /// cwnd saved on entering recovery, a timeout or PROBE_RTT, packets.
    prior_cwnd: u32,
    prev_ca_state: CaState,
    packet_conservation: bool,
    probe_rtt_done: Option<SimTime>,
    probe_rtt_round_done: bool,
    /// `tp->delivered_mstamp` of the sample being processed.
    delivered_time: SimTime,
    /// `tp->delivered` of the sample being processed, bytes.
    delivered_total: u64,
    rng: Rng,
    /// cwnd is not yet BBR's own: the initial window, or a timeout's one packet, and no ACK
    /// has delivered anything since (the floor of `cwnd_min_target` does not hold yet).
    loss_window: bool,
    /// The last ACK raised cwnd to a saved one (leaving recovery or PROBE_RTT).
    restored: bool,
    /// The cwnd BBR itself last set, packets: a different cwnd was written from outside
    /// (`window()`: the restart after idle, RFC 2861's decay, a remedy, an undo).
    own_cwnd: u32,
}

impl Bbr {
    /// A BBR controller starting at `cwnd` bytes with segments of `mss` bytes (`bbr_init`).
    pub fn new(cfg: BbrConfig, cwnd: u64, mss: u32) -> Self {
        let mut b = Bbr {
            cfg,
            w: PacketWindow::new(cwnd, u64::MAX, mss),
            bw: MinMax::default(),
            rtt_cnt: 0,
            next_rtt_delivered: 0,
            round_start: false,
            min_rtt: None,
            min_rtt_stamp: SimTime::ZERO,
            mode: BbrMode::Startup,
            pacing_gain: cfg.high_gain,
            cwnd_gain: cfg.high_gain,
            pacing_rate: 0,
            has_seen_rtt: false,
            full_bw: 0,
            full_bw_cnt: 0,
            full_bw_reached: false,
            cycle_idx: 0,
            cycle_stamp: SimTime::ZERO,
            prior_cwnd: 0,
            prev_ca_state: CaState::Open,
            packet_conservation: false,
            probe_rtt_done: None,
            probe_rtt_round_done: false,
            delivered_time: SimTime::ZERO,
            delivered_total: 0,
            rng: Rng::from_seed(0),
            loss_window: true,
            restored: false,
            own_cwnd: 0,
        };
        b.own_cwnd = b.w.cwnd;
        b.init_pacing_rate(None);
        b
    }

    /// The state.
    pub fn mode(&self) -> BbrMode {
        self.mode
    }
    /// BtlBw, payload bytes per second.
    pub fn btlbw(&self) -> u64 {
        self.bw.get()
    }
    /// min_rtt (none before the first sample).
    pub fn min_rtt(&self) -> Option<SimDuration> {
        self.min_rtt
    }
    /// The pacing gain and the cwnd gain, 1/256.
    pub fn gains(&self) -> (u32, u32) {
        (self.pacing_gain, self.cwnd_gain)
    }
    /// The gain-cycle phase (index into `PACING_GAINS`).
    pub fn cycle_idx(&self) -> usize {
        self.cycle_idx
    }
    /// True once STARTUP found the pipe full.
    pub fn full_bw_reached(&self) -> bool {
        self.full_bw_reached
    }
    /// Packet-timed rounds counted so far.
    pub fn rounds(&self) -> u64 {
        self.rtt_cnt
    }
    /// cwnd, packets.
    pub fn cwnd_packets(&self) -> u32 {
        self.w.cwnd
    }
    /// The pacing rate, payload bytes per second.
    pub fn pacing_bytes_per_sec(&self) -> u64 {
        self.pacing_rate
    }

    /// bytes·gain/256 less the pacing margin (`bbr_rate_bytes_per_sec`).
    fn rate_with_gain(&self, bw: u64, gain: u32) -> u64 {
        let r = bw as u128 * gain as u128 / BBR_UNIT as u128 * (100 - self.cfg.pacing_margin_percent.min(100)) as u128 / 100;
        r.min(u64::MAX as u128) as u64
    }

    /// `bbr_init_pacing_rate_from_rtt`: high_gain × cwnd / (srtt, or 1 ms before any sample).
    fn init_pacing_rate(&mut self, srtt: Option<SimDuration>) {
        let rtt = match srtt {
            Some(r) => {
                self.has_seen_rtt = true;
                r.as_ps().max(1_000_000) // at least 1 µs, as Linux
            }
            None => SimDuration::from_millis(1).as_ps(),
        };
        let bw = (self.w.cwnd as u128 * self.w.mss as u128 * 1_000_000_000_000u128 / rtt as u128).min(u64::MAX as u128) as u64;
        self.pacing_rate = self.rate_with_gain(bw, self.cfg.high_gain).max(1);
    }

    /// `bbr_set_pacing_rate`: raise only until the pipe is full, then follow the model.
    fn set_pacing_rate(&mut self, bw: u64, gain: u32, srtt: Option<SimDuration>) {
        if !self.has_seen_rtt && srtt.is_some() {
            self.init_pacing_rate(srtt);
        }
        let rate = self.rate_with_gain(bw, gain);
        if rate > 0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// `bbr_bdp`: ⌈bw·min_rtt·gain⌉ packets (`TCP_INIT_CWND` before any RTT sample).
    pub fn bdp(&self, bw: u64, gain: u32) -> u32 {
        let Some(rtt) = self.min_rtt else { return TCP_INIT_CWND };
        let num = bw as u128 * rtt.as_ps() as u128 * gain as u128;
        let den = 1_000_000_000_000u128 * BBR_UNIT as u128 * self.w.mss as u128;
        num.div_ceil(den).min(u32::MAX as u128 / 2) as u32
    }

    /// `bbr_quantization_budget` with a one-segment quantum: +3, up to even, +2 in the 5/4 phase.
    fn quantization_budget(&self, cwnd: u32) -> u32 {
        let mut c = cwnd + 3;
        c = (c + 1) & !1;
        if self.mode == BbrMode::ProbeBw && self.cycle_idx == 0 {
            c += 2;
        }
        c
    }

    /// `bbr_inflight`: the flight a gain aims at, packets.
    pub fn inflight_target(&self, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(self.bdp(bw, gain))
    }

    /// `bbr_save_cwnd`.
    fn save_cwnd(&mut self) {
        if self.prev_ca_state < CaState::Recovery && self.mode != BbrMode::ProbeRtt {
            self.prior_cwnd = self.w.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.w.cwnd);
        }
    }

    /// `bbr_advance_cycle_phase`.
    fn advance_cycle_phase(&mut self) {
        self.cycle_idx = (self.cycle_idx + 1) % CYCLE_LEN;
        self.cycle_stamp = self.delivered_time;
    }

    /// `bbr_reset_probe_bw_mode`: a random phase other than 3/4, then the next one.
    fn reset_probe_bw_mode(&mut self) {
        self.mode = BbrMode::ProbeBw;
        let r = self.rng.below(self.cfg.cycle_rand.clamp(1, CYCLE_LEN as u32 - 1) as u64) as usize;
        self.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase();
    }

    /// `bbr_reset_mode`.
    fn reset_mode(&mut self) {
        if self.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.mode = BbrMode::Startup;
        }
    }

    /// `bbr_update_bw`: round counting and the BtlBw filter.
    fn update_bw(&mut self, rs: &RateSample) {
        self.round_start = false;
        let (Some(_), Some(bw)) = (rs.delivered, rs.rate_bytes_per_sec()) else { return };
        if rs.prior_delivered >= self.next_rtt_delivered {
            self.next_rtt_delivered = rs.delivered_total;
            self.rtt_cnt += 1;
            self.round_start = true;
            self.packet_conservation = false;
        }
        if !rs.is_app_limited || bw >= self.bw.get() {
            self.bw.running_max(self.cfg.bw_rtts as u64, self.rtt_cnt, bw);
        }
    }

    /// `bbr_is_next_cycle_phase`.
    fn is_next_cycle_phase(&self, rs: &RateSample) -> bool {
        let full_length = self.min_rtt.is_some_and(|m| self.delivered_time.since(self.cycle_stamp) > m);
        if self.pacing_gain == BBR_UNIT {
            return full_length;
        }
        let inflight = rs.prior_in_flight.div_ceil(self.w.mss) as u32;
        let bw = self.bw.get();
        if self.pacing_gain > BBR_UNIT {
            return full_length && (rs.losses > 0 || inflight >= self.inflight_target(bw, self.pacing_gain));
        }
        full_length || inflight <= self.inflight_target(bw, BBR_UNIT)
    }

    /// `bbr_check_full_bw_reached`.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.full_bw_reached || !self.round_start || rs.is_app_limited {
            return;
        }
        let thresh = (self.full_bw as u128 * self.cfg.full_bw_thresh as u128 / BBR_UNIT as u128) as u64;
        if self.bw.get() >= thresh {
            self.full_bw = self.bw.get();
            self.full_bw_cnt = 0;
            return;
        }
        self.full_bw_cnt += 1;
        self.full_bw_reached = self.full_bw_cnt >= self.cfg.full_bw_cnt;
    }

    /// `bbr_check_drain`.
    fn check_drain(&mut self, rs: &RateSample) {
        if self.mode == BbrMode::Startup && self.full_bw_reached {
            self.mode = BbrMode::Drain;
            self.w.ssthresh = self.inflight_target(self.bw.get(), BBR_UNIT);
        }
        if self.mode == BbrMode::Drain && rs.inflight.div_ceil(self.w.mss) as u32 <= self.inflight_target(self.bw.get(), BBR_UNIT) {
            self.reset_probe_bw_mode();
        }
    }

    /// `bbr_check_probe_rtt_done`.
    fn check_probe_rtt_done(&mut self, now: SimTime) {
        if self.probe_rtt_done.is_none_or(|t| now <= t) {
            return;
        }
        self.min_rtt_stamp = now;
        if self.prior_cwnd > self.w.cwnd {
            self.w.cwnd = self.prior_cwnd;
            self.restored = true;
        }
        self.reset_mode();
    }

    /// `bbr_update_min_rtt`, with PROBE_RTT's entry and exit. Returns true when the sampler
    /// should mark the flight app-limited (PROBE_RTT).
    fn update_min_rtt(&mut self, rs: &RateSample) -> bool {
        let now = rs.now;
        let expired = now > self.min_rtt_stamp + self.cfg.min_rtt_win;
        if let Some(rtt) = rs.rtt {
            if self.min_rtt.is_none_or(|m| rtt <= m) || expired {
                self.min_rtt = Some(rtt);
                self.min_rtt_stamp = now;
            }
        }
        if self.cfg.probe_rtt_time > SimDuration::ZERO && expired && self.mode != BbrMode::ProbeRtt {
            self.mode = BbrMode::ProbeRtt;
            self.save_cwnd();
            self.probe_rtt_done = None;
        }
        if self.mode != BbrMode::ProbeRtt {
            return false;
        }
        let inflight = rs.inflight.div_ceil(self.w.mss) as u32;
        if self.probe_rtt_done.is_none() && inflight <= self.cfg.cwnd_min_target {
            self.probe_rtt_done = Some(now + self.cfg.probe_rtt_time);
            self.probe_rtt_round_done = false;
            self.next_rtt_delivered = rs.delivered_total;
        } else if self.probe_rtt_done.is_some() {
            if self.round_start {
                self.probe_rtt_round_done = true;
            }
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(now);
            }
        }
        true
    }

    /// `bbr_update_gains`.
    fn update_gains(&mut self) {
        (self.pacing_gain, self.cwnd_gain) = self.gains_of_mode();
    }

    /// The gains the mode (and phase) calls for.
    fn gains_of_mode(&self) -> (u32, u32) {
        match self.mode {
            BbrMode::Startup => (self.cfg.high_gain, self.cfg.high_gain),
            BbrMode::Drain => (self.cfg.drain_gain, self.cfg.high_gain),
            BbrMode::ProbeBw => (PACING_GAINS[self.cycle_idx], self.cfg.cwnd_gain),
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        }
    }

    /// `bbr_set_cwnd_to_recover_or_restore`: Some(cwnd) while conserving packets.
    fn recover_or_restore(&mut self, rs: &RateSample, acked: u32) -> (u32, bool) {
        let mss = self.w.mss;
        let state = rs.ca_state;
        let mut cwnd = self.w.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses.div_ceil(mss) as u32).max(1);
        }
        let inflight = rs.inflight.div_ceil(mss) as u32;
        if state == CaState::Recovery && self.prev_ca_state != CaState::Recovery {
            // The first round of recovery: packet conservation.
            self.packet_conservation = true;
            self.next_rtt_delivered = rs.delivered_total;
            cwnd = inflight + acked;
        } else if self.prev_ca_state >= CaState::Recovery && state < CaState::Recovery {
            // Recovery over: restore the cwnd saved on entering it.
            if self.prior_cwnd > cwnd {
                self.restored = true;
            }
            cwnd = cwnd.max(self.prior_cwnd);
            self.packet_conservation = false;
        }
        self.prev_ca_state = state;
        if self.packet_conservation {
            return (cwnd.max(inflight + acked), true);
        }
        (cwnd, false)
    }

    /// `bbr_set_cwnd`.
    fn set_cwnd(&mut self, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = self.w.cwnd;
        if acked > 0 {
            let (c, conserving) = self.recover_or_restore(rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.quantization_budget(self.bdp(bw, gain));
                if self.full_bw_reached {
                    cwnd = cwnd.saturating_add(acked).min(target);
                } else if cwnd < target || rs.delivered_total < TCP_INIT_CWND as u64 * self.w.mss {
                    cwnd = cwnd.saturating_add(acked);
                }
                cwnd = cwnd.max(self.cfg.cwnd_min_target);
            }
        }
        let before = self.w.cwnd;
        self.w.cwnd = cwnd.max(1);
        if self.mode == BbrMode::ProbeRtt {
            self.w.cwnd = self.w.cwnd.min(self.cfg.cwnd_min_target);
        }
        // An ACK that delivered nothing only applies the caps (Linux `goto done`): a cwnd it
        // leaves as it found stays whoever's it was.
        if acked > 0 || self.w.cwnd != before {
            self.own_cwnd = self.w.cwnd;
        }
    }

    /// The rules a BBR window keeps after every call (the connection's invariant checker,
    /// `Controller::owned_window_violation`): the gains are the mode's; cwnd is at least
    /// `cwnd_min_target` packets except before BBR first sets it (the initial window) and
    /// right after a timeout (one packet until the next ACK), and while conserving packets in recovery; in PROBE_RTT at most `cwnd_min_target`; once
    /// the pipe is full, outside packet conservation and a restore, at most the target the
    /// cwnd gain allows (`bbr_inflight(bw, cwnd_gain)`); a positive pacing rate. The cwnd rules
    /// hold for the cwnd BBR set: one written from outside through `window()` is the
    /// connection's to check.
    pub fn check_rules(&self, before: &Bbr) -> Result<(), String> {
        let _ = before;
        if (self.pacing_gain, self.cwnd_gain) != self.gains_of_mode() {
            return Err(format!("BBR in {:?} (phase {}) with gains {}/{} of 256", self.mode, self.cycle_idx, self.pacing_gain, self.cwnd_gain));
        }
        let cwnd = self.w.cwnd;
        if cwnd != self.own_cwnd {
            // Written from outside (the connection's restart after idle or RFC 2861 decay, a
            // remedy, an undo): the connection's own rules hold it; BBR's next ACK takes over.
            return Ok(());
        }
        if !self.loss_window && !self.packet_conservation && cwnd < self.cfg.cwnd_min_target {
            return Err(format!("BBR's cwnd of {cwnd} packets below its floor of {}", self.cfg.cwnd_min_target));
        }
        if self.mode == BbrMode::ProbeRtt && cwnd > self.cfg.cwnd_min_target {
            return Err(format!("BBR's cwnd of {cwnd} packets in PROBE_RTT, above {}", self.cfg.cwnd_min_target));
        }
        if self.full_bw_reached && !self.packet_conservation && !self.restored && !self.loss_window && self.mode != BbrMode::ProbeRtt {
            let bound = self.inflight_target(self.bw.get(), self.cwnd_gain).max(self.cfg.cwnd_min_target);
            if cwnd > bound && cwnd > before.w.cwnd {
                return Err(format!("BBR grew cwnd to {cwnd} packets, above the {bound} its gain {}/256 allows", self.cwnd_gain));
            }
        }
        if self.pacing_rate == 0 {
            return Err("BBR's pacing rate is zero".into());
        }
        Ok(())
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }
    fn cwnd(&self) -> u64 {
        self.w.cwnd_bytes()
    }
    fn ssthresh(&self) -> u64 {
        self.w.ssthresh_bytes()
    }
    fn owns_window(&self) -> bool {
        true
    }
    /// Not called: BBR owns the window and takes `on_rate_sample` on every ACK.
    fn on_ack(&mut self, _a: &AckSample) {}
    /// `bbr_main`.
    fn on_rate_sample(&mut self, rs: &RateSample) {
        self.restored = false;
        self.delivered_time = rs.delivered_time;
        self.delivered_total = rs.delivered_total;
        let acked = rs.acked_sacked.div_ceil(self.w.mss) as u32;
        if acked > 0 {
            self.loss_window = false;
        }
        self.update_bw(rs);
        if self.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(rs) {
            self.advance_cycle_phase();
        }
        self.check_full_bw_reached(rs);
        self.check_drain(rs);
        let _ = self.update_min_rtt(rs);
        self.update_gains();
        let bw = self.bw.get();
        self.set_pacing_rate(bw, self.pacing_gain, rs.srtt);
        self.set_cwnd(rs, acked, bw, self.cwnd_gain);
    }
    /// PROBE_RTT marks the flight app-limited (`bbr_update_min_rtt` sets `tp->app_limited`).
    fn holds_app_limited(&self) -> bool {
        self.mode == BbrMode::ProbeRtt
    }
    /// Entering recovery: `bbr_ssthresh` saves cwnd and leaves ssthresh as it is.
    fn on_congestion(&mut self, _ev: &CongestionEvent) {
        self.save_cwnd();
    }
    /// Nothing: the first ACK out of recovery restores cwnd (`bbr_set_cwnd_to_recover_or_restore`).
    fn on_recovery_exit(&mut self, _ev: &RecoveryExit) {}
    /// `tcp_enter_loss` (cwnd saved on the first timeout, then one packet) and
    /// `bbr_set_state(TCP_CA_Loss)`.
    fn on_timeout(&mut self, ev: &TimeoutEvent) {
        if ev.backoffs <= 1 {
            self.save_cwnd();
        }
        self.w.cwnd = 1;
        self.w.cwnd_cnt = 0;
        self.own_cwnd = 1;
        self.prev_ca_state = CaState::Loss;
        self.full_bw = 0;
        self.round_start = true;
        self.loss_window = true;
    }
    /// ECN-Echo (`tcp_enter_cwr`): BBR v1 saves cwnd and reduces nothing (its `cong_control`
    /// replaces the CWR reduction).
    fn on_ecn_echo(&mut self, _ev: &CongestionEvent) {
        self.save_cwnd();
    }
    fn window(&mut self) -> WindowState<'_> {
        WindowState::Packets(&mut self.w)
    }
    /// ssthresh is no loss response: a loss leaves it as it is (`bbr_ssthresh`), but DRAIN,
    /// which the same ACK may enter, sets it to the BDP (at least 4 packets): any value from
    /// 2·SMSS up.
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        (2 * ev.mss as u64, u64::MAX)
    }
    fn pacing_rate(&self) -> Option<u64> {
        Some(self.pacing_rate)
    }
    fn seed(&mut self, rng: Rng) {
        self.rng = rng;
    }
    /// `bbr_init` runs once the handshake is over (Linux `tcp_init_congestion_control`), when
    /// the SYN or SYN-ACK has given srtt: the first window is paced at high_gain × cwnd / srtt
    /// (`bbr_init_pacing_rate_from_rtt`), not over the 1 ms it assumes without a sample.
    fn on_established(&mut self, srtt: Option<SimDuration>) {
        if srtt.is_some() && !self.has_seen_rtt {
            self.init_pacing_rate(srtt);
        }
    }
    fn probe_names(&self) -> &'static [&'static str] {
        &PROBE_NAMES
    }
    fn probe(&self, out: &mut [f64; super::PROBE_VALUES]) {
        out[0] = self.mode as u8 as f64;
        out[1] = self.bw.get() as f64 * 8.0;
        out[2] = self.min_rtt.map_or(f64::NAN, |m| m.as_secs_f64());
        out[3] = self.pacing_gain as f64 / BBR_UNIT as f64;
        out[4] = self.cwnd_gain as f64 / BBR_UNIT as f64;
        out[5] = self.pacing_rate as f64 * 8.0;
        out[6] = self.cycle_idx as f64;
        out[7] = self.full_bw_reached as u8 as f64;
        out[8] = self.rtt_cnt as f64;
    }
}

crate::param_table! {
    /// `[defaults.tcp.bbr]`, `[flows.tcp.bbr]`: Linux `tcp_bbr.c`'s constants (gains as
    /// factors; Linux keeps them in 1/256, to which they are rounded down).
    BbrSpec => BbrParams {
        /// STARTUP's pacing and cwnd gain, above 1 (default 2.885 = 2/ln 2, `bbr_high_gain`).
        high_gain: f64 = 2.885,
        /// DRAIN's pacing gain, in (0, 1] (default 1/2.885, `bbr_drain_gain`).
        drain_gain: f64 = 1.0 / 2.885,
        /// PROBE_BW's cwnd gain, at least 1 (default 2, `bbr_cwnd_gain`).
        cwnd_gain: f64 = 2.0,
        /// The BtlBw max filter's window, round trips, at least 1 (default 10, `bbr_bw_rtts`).
        bw_rtts: u32 = BbrConfig::default().bw_rtts,
        /// The min_rtt filter's window, positive (default 10s, `bbr_min_rtt_win_sec`).
        min_rtt_win: crate::quantity::Dur = crate::quantity::Dur(BbrConfig::default().min_rtt_win),
        /// PROBE_RTT's least duration; 0 disables PROBE_RTT (default 200ms,
        /// `bbr_probe_rtt_mode_ms`).
        probe_rtt_time: crate::quantity::Dur = crate::quantity::Dur(BbrConfig::default().probe_rtt_time),
        /// The least cwnd and PROBE_RTT's cwnd, packets, at least 1 (default 4,
        /// `bbr_cwnd_min_target`).
        cwnd_min_target: u32 = BbrConfig::default().cwnd_min_target,
        /// BtlBw growth per round that keeps STARTUP going, above 1 (default 1.25,
        /// `bbr_full_bw_thresh`).
        full_bw_thresh: f64 = 1.25,
        /// Rounds without that growth before the pipe counts as full, at least 1 (default 3,
        /// `bbr_full_bw_cnt`).
        full_bw_cnt: u32 = BbrConfig::default().full_bw_cnt,
        /// Pacing below the model by this many percent, 0..=50 (default 1,
        /// `bbr_pacing_margin_percent`).
        pacing_margin_percent: u32 = BbrConfig::default().pacing_margin_percent,
    }
}

/// A gain as a factor, to Linux's 1/256 (the defaults as Linux writes them).
fn to_unit(g: f64) -> u32 {
    if g == 2.885 {
        BbrConfig::default().high_gain
    } else if g == 1.0 / 2.885 {
        BbrConfig::default().drain_gain
    } else {
        (g * BBR_UNIT as f64) as u32
    }
}

impl super::Registered for Bbr {
    const NAME: &'static str = "bbr";
    type Controller = Bbr;
    type Config = BbrConfig;
    type Params = BbrParams;
    const DRAWS: bool = true;
    fn check_params(p: &BbrParams) -> Result<(), crate::params::ParamError> {
        use crate::params::ParamError;
        let finite = |g: f64| g.is_finite() && g < 64.0;
        if !(finite(p.high_gain) && p.high_gain > 1.0) {
            return Err(ParamError::new("high_gain", "must be above 1 and below 64"));
        }
        if !(finite(p.drain_gain) && p.drain_gain > 0.0 && p.drain_gain <= 1.0) {
            return Err(ParamError::new("drain_gain", "must be in (0, 1]"));
        }
        if !(finite(p.cwnd_gain) && p.cwnd_gain >= 1.0) {
            return Err(ParamError::new("cwnd_gain", "must be at least 1 and below 64"));
        }
        if !(finite(p.full_bw_thresh) && p.full_bw_thresh > 1.0) {
            return Err(ParamError::new("full_bw_thresh", "must be above 1 and below 64"));
        }
        if p.bw_rtts == 0 {
            return Err(ParamError::new("bw_rtts", "must be at least 1 (round trips)"));
        }
        if p.min_rtt_win.0 == SimDuration::ZERO {
            return Err(ParamError::new("min_rtt_win", "must be positive"));
        }
        if p.cwnd_min_target == 0 {
            return Err(ParamError::new("cwnd_min_target", "must be at least 1 (packets)"));
        }
        if p.full_bw_cnt == 0 {
            return Err(ParamError::new("full_bw_cnt", "must be at least 1 (rounds)"));
        }
        if p.pacing_margin_percent > 50 {
            return Err(ParamError::new("pacing_margin_percent", "must be at most 50"));
        }
        Ok(())
    }
    fn config(p: &BbrParams, _tcp: &super::CcContext) -> BbrConfig {
        BbrConfig {
            high_gain: to_unit(p.high_gain),
            drain_gain: to_unit(p.drain_gain).max(1),
            cwnd_gain: to_unit(p.cwnd_gain),
            bw_rtts: p.bw_rtts,
            min_rtt_win: p.min_rtt_win.0,
            probe_rtt_time: p.probe_rtt_time.0,
            cwnd_min_target: p.cwnd_min_target,
            full_bw_thresh: to_unit(p.full_bw_thresh),
            full_bw_cnt: p.full_bw_cnt,
            pacing_margin_percent: p.pacing_margin_percent,
            cycle_rand: BbrConfig::default().cycle_rand,
        }
    }
    fn build(cfg: &BbrConfig, cwnd: u64, _ssthresh: u64, mss: u32) -> Bbr {
        Bbr::new(*cfg, cwnd, mss)
    }
}

#[cfg(test)]
#[path = "bbr_tests.rs"]
mod tests;
