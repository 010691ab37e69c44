//! A sans-I/O TCP endpoint: `(now, segment)` or `(now, timer)` in; segments, timer deadlines
//! and trace events out. It owns everything between the application and the wire: handshake
//! and close, the send and receive buffers, window scaling, Nagle and sender SWS avoidance,
//! delayed ACKs, RTT estimation and the RTO (with its policy), duplicate-ACK detection,
//! Reno/NewReno fast recovery (RFC 5681 / RFC 6582), SACK-based recovery (RFC 6675), limited
//! transmit (RFC 3042) and zero-window probing. The congestion controller only sees events;
//! the SACK scoreboard (loss marking and the pipe estimate) is `scoreboard::Scoreboard`.
//!
//! Sequence numbers are 64-bit and unwrapped; both ISNs are 0, so the first data byte is 1.

use std::cell::Cell;
use std::collections::VecDeque;

use crate::engine::Rng;
use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{CongestionControl, Controller, WindowState};
use crate::tcp::config::{RecoveryKind, TcpConfig};
use crate::tcp::ranges::{RangeSet, SackRecency};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::timers::{TimerKind, Timers};
use crate::units::{SimDuration, SimTime};
use handshake::{initial_rcv_ssthresh, initial_window, payload_room, wscale_for};

mod ack;
mod cc_window;
mod cwr;
mod dsack;
mod ecn;
mod handshake;
mod input;
mod inspect;
#[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
mod invariants;
mod local;
mod moderate;
mod rate;
mod receive;
mod recovery;
mod rfc2861;
mod send;
mod types;
mod undo;

pub use types::{Measurement, Output, RangeFlag, State, TcpEvent, TcpEventKind};

use recovery::Recovery;

/// Bytes the timestamps option takes from every segment's payload room.
const TS_OPTION_BYTES: u32 = 12;

/// Always-on counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnStats {
    /// Data segments (segments with payload) sent, retransmissions included. A bare FIN
    /// carries no payload and is not a data segment.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Segments retransmitted: every segment sent with the `retransmit` flag that captures
    /// show, i.e. data segments and bare FINs (so a resent bare FIN counts here but not in
    /// `segments_sent`). SYNs and window probes are not counted.
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits (entries into fast recovery).
    pub fast_retransmits: u64,
    /// Duplicate ACKs received.
    pub dupacks_received: u64,
    /// Pure ACKs sent.
    pub acks_sent: u64,
    /// Payload bytes delivered in order to the application (receive side).
    pub bytes_delivered: u64,
    /// Payload bytes acknowledged by the peer (send side).
    pub bytes_acked: u64,
    /// When the application first wrote (none before).
    pub first_write: Option<SimTime>,
    /// Data segments that arrived marked CE (receive side; with ECN negotiated).
    pub ce_received: u64,
    /// Window reductions in answer to ECN-Echo (send side).
    pub ecn_reductions: u64,
    /// Segments (data and FINs) the host's own interface queue refused and the sender took
    /// back as unsent (`tcp.local_congestion = "cwr"`; see `local`).
    pub local_refusals: u64,
    /// Window reductions for such refusals (Linux `tcp_enter_cwr`).
    pub local_reductions: u64,
    /// ACKs whose first SACK block was a D-SACK (RFC 2883; send side).
    pub dsacks_received: u64,
    /// Window reductions undone (`tcp.undo`; send side).
    pub undos: u64,
}

#[derive(Clone, Copy, Debug)]
struct SentRecord {
    end: u64,
    at: SimTime,
    retransmitted: bool,
    /// The delivery-rate sampler's stamp (`rate`; unstamped when the sampler is off).
    rate: rate::RateStamp,
}

/// One TCP endpoint.
#[derive(Debug)]
pub struct Connection {
    cfg: TcpConfig,
    state: State,
    // Negotiated.
    /// The MSS this end announces (the configured one; `cfg.mss` becomes the smaller of the
    /// two ends' once the peer's SYN is in).
    adv_mss: u32,
    smss: u32,
    sack_ok: bool,
    ts_ok: bool,
    /// The peer's SYN carried the window-scale option.
    peer_wscale: bool,
    rcv_wscale: u8,
    // Send side.
    snd_una: u64,
    snd_nxt: u64,
    snd_max: u64,
    stream_end: u64,
    close_requested: bool,
    fin_sent: bool,
    snd_wnd: u64,
    max_snd_wnd: u64,
    /// End of the last short new-data segment sent (Linux `snd_sml`, for Minshall's Nagle).
    snd_sml: u64,
    cc: Controller,
    recovery: Option<Recovery>,
    recovery_kind: RecoveryKind,
    recover: u64,
    dupacks: u32,
    /// SACKed ranges, HighRxt, the timeout's loss point and the Linux retransmission logs.
    sb: Scoreboard,
    sent: VecDeque<SentRecord>,
    rtt: RttEstimator,
    round: u64,
    round_end: u64,
    /// Linux cwnd validation (`CwndLimitedRule::Linux`): the most segments out in the current
    /// window, where that window ends, and whether its last send attempt was cwnd-limited.
    max_packets_out: u64,
    max_packets_seq: u64,
    is_cwnd_limited: bool,
    backoffs: u32,
    /// The last RTO computed, as (base RTO, backoffs, RTO): the backed-off, rounded value
    /// changes only when an RTT sample or a timeout changes its inputs.
    rto_memo: Cell<(SimDuration, u32, SimDuration)>,
    syn_retries: u32,
    /// Retransmission, delayed-ACK and persist timers.
    timers: Timers,
    persist_backoff: u32,
    // Receive side.
    rcv_nxt: u64,
    rcv_read: u64,
    ooo: RangeSet,
    sack_recent: SackRecency,
    rcv_adv: u64,
    /// Linux `rcv_ssthresh`: the bound on the advertised window while it grows
    /// (`u64::MAX` without receive-window growth).
    rcv_ssthresh: u64,
    rcv_mss: u32,
    auto_read: bool,
    unacked_bytes: u64,
    quickacks_left: u32,
    ts_recent: u32,
    last_ack_sent: u64,
    peer_fin: Option<u64>,
    /// ECN: negotiation, the receiver's echo, the sender's reduction state.
    ecn: ecn::EcnState,
    /// Linux's CWR state while a reduction that is not a loss is under way
    /// (`cwr_reduction = RateHalving`).
    cwr: Option<cwr::Cwr>,
    /// RFC 2861's clocks and counters (`cwnd_idle_restart`, `cwnd_app_limited_decay`).
    rfc2861: rfc2861::Rfc2861,
    /// The D-SACK block the next segment reports first (`tcp.dsack`; receive side).
    dsack: Option<(u64, u64)>,
    /// Linux 2.4's undo state (`tcp.undo`; send side).
    undo: undo::Undo,
    /// The stream the randomised RTO draws from (`seed_rto`; used only with
    /// `rto.randomize` > 0).
    rto_rng: Rng,
    /// Phase of the host's clock ticks (`TcpConfig::timer_ticks`, `timer_tick`).
    clock_phase: SimDuration,
    /// Counters.
    pub stats: ConnStats,
    /// Inputs from outside the connection the controller took (`attach_input`), kept to hand
    /// to the controller rebuilt once the MSS is known.
    inputs: Vec<crate::tcp::cc::ControllerInput>,
    /// Event inputs fed during fast recovery (`feed_controller`), handed to the controller
    /// when recovery ends.
    pending_inputs: Vec<crate::tcp::cc::CcInput>,
    /// The delivery-rate sampler and the pacing gate (`rate`).
    rate: rate::RateState,
    /// The controller's own seeded stream (`seed_cc`), kept to hand to the controller rebuilt
    /// once the MSS is known.
    cc_rng: Option<Rng>,
    /// The sample the controller was given on the current call (invariant checks only).
    #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
    inv_sample: Option<crate::tcp::cc::AckSample>,
}

impl Connection {
    /// A closed endpoint with the given settings. Call `connect` or `listen`.
    pub fn new(cfg: TcpConfig) -> Self {
        let smss = payload_room(&cfg, cfg.timestamps);
        let iw = initial_window(&cfg, smss);
        let cc = Controller::new(&cfg.cc, iw, cfg.initial_ssthresh, smss);
        let rate = rate::RateState::new(cc.owns_window());
        let rtt = RttEstimator::new(cfg.rtt_estimator);
        let rcv_wscale = if cfg.window_scaling { wscale_for(cfg.rcvbuf) } else { 0 };
        Connection {
            state: State::Closed,
            adv_mss: cfg.mss,
            smss,
            sack_ok: false,
            ts_ok: false,
            peer_wscale: false,
            rcv_wscale,
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            stream_end: 1,
            close_requested: false,
            fin_sent: false,
            snd_wnd: 0,
            max_snd_wnd: 0,
            snd_sml: 0,
            cc,
            recovery: None,
            recovery_kind: cfg.recovery,
            recover: 0,
            dupacks: 0,
            sb: Scoreboard::default(),
            sent: VecDeque::new(),
            rtt,
            round: 0,
            round_end: 0,
            max_packets_out: 0,
            max_packets_seq: 0,
            is_cwnd_limited: false,
            backoffs: 0,
            rto_memo: Cell::new((SimDuration::ZERO, u32::MAX, SimDuration::ZERO)),
            syn_retries: 0,
            timers: Timers::default(),
            persist_backoff: 0,
            rcv_nxt: 0,
            rcv_read: 0,
            ooo: RangeSet::new(),
            sack_recent: SackRecency::default(),
            rcv_adv: 0,
            rcv_ssthresh: initial_rcv_ssthresh(&cfg, smss, rcv_wscale),
            rcv_mss: smss,
            auto_read: true,
            unacked_bytes: 0,
            quickacks_left: 0,
            ts_recent: 0,
            last_ack_sent: 0,
            peer_fin: None,
            ecn: ecn::EcnState::default(),
            cwr: None,
            rfc2861: rfc2861::Rfc2861::default(),
            dsack: None,
            undo: undo::Undo::default(),
            rto_rng: Rng::from_seed(0),
            clock_phase: SimDuration::ZERO,
            stats: ConnStats::default(),
            inputs: Vec::new(),
            pending_inputs: Vec::new(),
            rate,
            cc_rng: None,
            #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
            inv_sample: None,
            cfg,
        }
    }

    // ---- Queries ----------------------------------------------------------------------

    /// Current state.
    pub fn state(&self) -> State {
        self.state
    }

    /// Effective congestion window in bytes (the recovery window while in fast recovery).
    pub fn cwnd(&self) -> u64 {
        match self.recovery {
            Some(Recovery::NewReno { cwnd, .. }) | Some(Recovery::Sack { cwnd }) | Some(Recovery::RateHalving { cwnd, .. }) | Some(Recovery::Prr { cwnd, .. }) => cwnd,
            Some(Recovery::Controller) | None => self.cc.cwnd(),
        }
    }

    /// Slow-start threshold in bytes.
    pub fn ssthresh(&self) -> u64 {
        self.cc.ssthresh()
    }

    /// The congestion controller.
    pub fn controller(&self) -> &Controller {
        &self.cc
    }

    /// The RTT estimator (samples, latest, smoothed, variation, minimum).
    pub fn rtt_estimator(&self) -> &crate::tcp::rtt::RttEstimator {
        &self.rtt
    }

    /// Smoothed RTT, if sampled.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }

    /// The RTO the timer would use now (backoff included).
    pub fn rto(&self) -> SimDuration {
        let base = if self.backoffs == 0 { self.rtt.base_rto(&self.cfg.rto) } else { self.rtt.backoff_base(&self.cfg.rto) };
        let (b, n, rto) = self.rto_memo.get();
        if b == base && n == self.backoffs {
            return rto;
        }
        let rto = self.cfg.rto.timeout(base, self.backoffs);
        self.rto_memo.set((base, self.backoffs, rto));
        rto
    }

    /// The retransmission timer's duration for a timer set now: the RTO, randomised by the
    /// policy's `randomize` (a fresh draw per timer), at most the policy's `max`.
    fn rto_timer(&mut self) -> SimDuration {
        let rto = self.rto();
        let r = self.cfg.rto.randomize;
        if r <= 0.0 {
            return rto;
        }
        let extra = (rto.as_ps() as f64 * r * self.rto_rng.next_f64()) as u64;
        SimDuration(rto.as_ps() + extra).min(self.cfg.rto.max.max(rto))
    }

    /// (Re)start the retransmission timer for one RTO (randomised by the policy) from `now`.
    fn arm_rto(&mut self, now: SimTime) {
        let d = self.rto_timer();
        let at = if self.cfg.timer_ticks {
            self.after_ticks(now, d, self.cfg.rto.granularity)
        } else if let Some(tick) = self.cfg.timer_tick {
            self.after_ticks(now, d, tick)
        } else {
            now + d
        };
        self.timers.set(TimerKind::Retransmit, at);
    }

    /// A timer of `d` (whole ticks of `tick`) set at `now` on the host's clock: it counts tick
    /// boundaries, so it fires at the ⌈d/tick⌉-th tick after `now` (BSD's slow and fast
    /// timers: between d − tick and d after it is set).
    pub(super) fn after_ticks(&self, now: SimTime, d: SimDuration, tick: SimDuration) -> SimTime {
        let tick = tick.as_ps().max(1);
        let ticks = d.as_ps().div_ceil(tick).max(1);
        let phase = self.clock_phase.as_ps() % tick;
        // The first tick strictly after `now`.
        let since = (now.0 + tick - phase) % tick;
        SimTime(now.0 + (tick - since) + (ticks - 1) * tick)
    }

    /// Set the phase of the host's clock ticks (`TcpConfig::timer_ticks`, `timer_tick`,
    /// `host_clock`): ticks fall at `phase` + k·tick.
    pub fn set_clock_phase(&mut self, phase: SimDuration) {
        self.clock_phase = phase;
    }

    /// The host's 1/HZ clock (`TcpConfig::hz`) at the host's phase.
    pub fn host_clock(&self) -> crate::tcp::HostClock {
        crate::tcp::HostClock::new(self.cfg.hz, self.clock_phase)
    }

    /// Give the randomised RTO its own seeded stream (one per connection, so timers of
    /// different connections are not drawn alike).
    pub fn seed_rto(&mut self, rng: Rng) {
        self.rto_rng = rng;
    }

    /// Give the controller its own seeded stream (`CongestionControl::seed`; BBR's gain-cycle
    /// phase draws from it), kept for the controller rebuilt once the MSS is known.
    pub fn seed_cc(&mut self, rng: Rng) {
        self.cc.seed(rng.clone());
        self.cc_rng = Some(rng);
    }

    /// The earliest pending timer deadline.
    #[inline]
    pub fn next_deadline(&self) -> Option<SimTime> {
        self.timers.next()
    }

    /// The controller's window for a remedy acting from outside (external window
    /// coordination); `None` during fast recovery, whose window the connection manages.
    pub fn window_for_remedy(&mut self) -> Option<WindowState<'_>> {
        self.recovery.is_none().then(|| self.cc.window())
    }

    /// Give the controller an input from outside the connection (a coupled group's
    /// membership); false, and nothing kept, when the controller cannot use it.
    pub fn attach_input(&mut self, input: crate::tcp::cc::ControllerInput) -> bool {
        let taken = self.cc.attach(&input);
        if taken {
            self.inputs.push(input);
        }
        taken
    }

    /// Have the application read received data as soon as it arrives (the default, as iperf
    /// does), or only through `read`.
    pub fn set_auto_read(&mut self, on: bool) {
        self.auto_read = on;
    }

    // ---- Application side -------------------------------------------------------------

    /// Passive open.
    pub fn listen(&mut self) {
        self.state = State::Listen;
    }

    /// Active open: send the SYN.
    pub fn connect(&mut self, now: SimTime, out: &mut Output) {
        self.rfc2861_start(now);
        self.state = State::SynSent;
        self.snd_nxt = 1;
        self.snd_max = 1;
        let syn = self.syn_segment(now, flags::SYN);
        out.segments.push(syn);
        self.arm_rto(now);
        self.sent.push_back(SentRecord { end: 1, at: now, retransmitted: false, rate: rate::RateStamp::default() });
    }

    /// Queue up to `bytes` application bytes; returns how many fit in the send buffer.
    #[inline]
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        let r = self.write_unchecked(now, bytes, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a write", &before, out);
        r
    }

    fn write_unchecked(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        let n = bytes.min(self.send_space());
        if self.rate.on && n > 0 {
            self.rate_check_app_limited();
        }
        if n > 0 {
            self.stats.first_write.get_or_insert(now);
            let quiet = self.writes_are_quiet();
            self.stream_end += n;
            if !quiet {
                self.try_send(now, out);
            }
        }
        if self.cfg.cwnd_app_limited_decay {
            self.rfc2861_on_write(now, bytes, n);
        }
        n
    }

    /// True if a write now cannot send anything, nor can any write after it until the state
    /// changes: with a full segment or more already waiting, the last send attempt (every
    /// state change ends in one) was stopped by the windows, not by a lack of data, so more
    /// data cannot change what may be sent. Writes then only queue their bytes, and several
    /// in a row are one write of their sum.
    pub fn writes_are_quiet(&self) -> bool {
        if !self.state_sends() {
            return true; // `try_send` does nothing in this state (before the handshake ends).
        }
        let backlog = self.stream_end.saturating_sub(self.snd_nxt.max(self.snd_max));
        backlog >= self.smss as u64 && self.state == State::Established
    }

    /// True in the states where `try_send` may send.
    fn state_sends(&self) -> bool {
        matches!(self.state, State::Established | State::CloseWait | State::FinWait1 | State::Closing | State::LastAck)
    }

    /// Close the sending direction once all written data is sent (FIN after the data).
    pub fn close(&mut self, now: SimTime, out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.close_unchecked(now, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a close", &before, out);
    }

    fn close_unchecked(&mut self, now: SimTime, out: &mut Output) {
        if !self.close_requested {
            self.close_requested = true;
            self.try_send(now, out);
        }
    }

    /// The application reads up to `bytes` (only meaningful with auto-read off).
    pub fn read(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        let r = self.read_unchecked(now, bytes, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a read", &before, out);
        r
    }

    fn read_unchecked(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        let n = bytes.min(self.readable());
        let before = self.rcv_adv;
        self.rcv_read += n;
        self.update_rcv_adv();
        if self.rcv_adv > before && self.state_has_ack() {
            // Window update (RFC 1122 §4.2.3.3: only when it moved by ≥ min(MSS, buf/2)).
            self.send_ack(now, out);
        }
        n
    }

    // ---- Wire side --------------------------------------------------------------------

    /// Process an arriving segment.
    pub fn on_segment(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.on_segment_unchecked(now, seg, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("an arriving segment", &before, out);
        self.flush_inputs(now);
    }

    fn on_segment_unchecked(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        if seg.has(flags::RST) {
            self.state = State::Closed;
            self.clear_timers();
            return;
        }
        match self.state {
            State::Closed => {}
            State::TimeWait => {
                if seg.has(flags::FIN) {
                    self.send_ack(now, out); // Our last ACK was lost: the peer resent its FIN.
                }
            }
            State::Listen => {
                if seg.has(flags::SYN) && !seg.has(flags::ACK) {
                    self.rfc2861_start(now);
                    self.accept_syn_options(seg);
                    self.rcv_nxt = seg.seq + 1;
                    self.rcv_read = self.rcv_nxt;
                    self.last_ack_sent = self.rcv_nxt;
                    self.state = State::SynReceived;
                    self.snd_nxt = 1;
                    self.snd_max = 1;
                    self.snd_wnd = seg.window;
                    self.max_snd_wnd = seg.window;
                    self.update_rcv_adv();
                    let synack = self.syn_segment(now, flags::SYN | flags::ACK);
                    out.segments.push(synack);
                    self.sent.push_back(SentRecord { end: 1, at: now, retransmitted: false, rate: rate::RateStamp::default() });
                    self.arm_rto(now);
                }
            }
            State::SynSent => {
                if seg.has(flags::SYN | flags::ACK) && seg.ack == 1 {
                    self.accept_syn_options(seg);
                    self.rcv_nxt = seg.seq + 1;
                    self.rcv_read = self.rcv_nxt;
                    self.state = State::Established;
                    self.update_rcv_adv();
                    self.snd_wnd = seg.window;
                    self.max_snd_wnd = seg.window;
                    self.handle_new_ack(now, seg, 0, out);
                    self.cc.on_established(self.rtt.srtt());
                    self.send_ack(now, out);
                    self.try_send(now, out);
                }
            }
            _ => self.on_segment_synchronized(now, seg, out),
        }
    }

    /// Expire the retransmission timer now, exactly as if it had run out (a variant's forced
    /// timeout, such as AHTCP's answer to a retransmission request). Nothing happens when the
    /// timer is not running (nothing outstanding).
    pub fn expire_retransmit_timer(&mut self, now: SimTime, out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.expire_retransmit_timer_unchecked(now, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a forced timeout", &before, out);
    }

    fn expire_retransmit_timer_unchecked(&mut self, now: SimTime, out: &mut Output) {
        if self.timers.is_set(TimerKind::Retransmit) {
            self.timers.clear(TimerKind::Retransmit);
            self.on_rto(now, out);
        }
    }

    /// A forced timeout that resends from `from` rather than from SND.UNA (AHTCP: the peer,
    /// holding its ACKs back, is known to have the bytes below `from`): the timeout's state
    /// change (backoff, the controller's reaction, everything outstanding deemed lost), then
    /// go-back-N from max(`from`, SND.UNA). Nothing happens when nothing is outstanding.
    pub fn force_timeout_from(&mut self, now: SimTime, from: u64, out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.force_timeout_from_unchecked(now, from, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a forced timeout", &before, out);
    }

    fn force_timeout_from_unchecked(&mut self, now: SimTime, from: u64, out: &mut Output) {
        if !self.timers.is_set(TimerKind::Retransmit) {
            return;
        }
        self.timers.clear(TimerKind::Retransmit);
        self.resend_after_timeout(now, from, out);
    }

    /// Send a copy of bytes `[seq, seq + len)` already sent and acknowledged or held (a
    /// variant's duplicate, such as AHTCP's restart by the paper's floor form); it counts as a
    /// retransmitted segment and changes no other state.
    pub fn resend_copy(&mut self, now: SimTime, seq: u64, len: u32, out: &mut Output) {
        let mut h = self.base_segment(now, seq, len);
        h.retransmit = true;
        self.rfc2861.lsndtime = now;
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len as u64;
        self.stats.retransmits += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Retransmit, seq });
        out.segments.push(h);
    }

    /// An ACK of new data arrived (or, for a variant, bytes the connection does not track
    /// were acknowledged: AHTCP's one-byte request): forget the backoff if the policy says so.
    pub fn note_progress(&mut self) {
        if self.cfg.rto.backoff_reset == crate::tcp::rtt::BackoffReset::NewAck {
            self.backoffs = 0;
        }
    }

    /// Send a pure ACK now, as the connection would (a variant's extra ACK, such as AHTCP's
    /// retransmission request, which then rewrites its number).
    pub fn send_ack_now(&mut self, now: SimTime, out: &mut Output) {
        self.send_ack(now, out);
    }

    /// Process expired timers (call at or after `next_deadline`).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.on_timer_unchecked(now, out);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a timer", &before, out);
        self.flush_inputs(now);
    }

    fn on_timer_unchecked(&mut self, now: SimTime, out: &mut Output) {
        // An expired delayed ACK is taken (unset) first, then sent if something is unacknowledged.
        if self.timers.take_expired(TimerKind::DelayedAck, now) && (self.last_ack_sent < self.rcv_nxt || self.unacked_bytes > 0) {
            self.send_ack(now, out);
        }
        if self.timers.take_expired(TimerKind::Retransmit, now) {
            self.on_rto(now, out);
        }
        if self.timers.take_expired(TimerKind::Persist, now) {
            self.on_persist(now, out);
        }
        if self.timers.take_expired(TimerKind::Pacing, now) {
            self.try_send(now, out); // The pacing gate opens.
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
