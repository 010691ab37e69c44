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

use crate::net::packet::{flags, TcpHeader, MAX_SACK_BLOCKS};
use crate::tcp::cc::{AckSample, CongestionControl, CongestionEvent, Controller, RecoveryExit, TimeoutEvent, WindowState};
use crate::tcp::config::{InitialWindowRule, RcvWindowRule, RecoveryKind, TcpConfig};
use crate::tcp::ranges::{RangeSet, SackRecency};
use crate::tcp::rtt::RttEstimator;
use crate::tcp::scoreboard::{LossRule, Scoreboard};
use crate::tcp::timers::{TimerKind, Timers};
use crate::units::{SimDuration, SimTime};

/// Bytes the timestamps option takes from every segment's payload room.
const TS_OPTION_BYTES: u32 = 12;

/// RFC 793 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No connection.
    Closed,
    /// Waiting for a SYN.
    Listen,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    /// SYN received, SYN-ACK sent.
    SynReceived,
    /// Data transfer.
    Established,
    /// Our FIN sent, not yet acknowledged.
    FinWait1,
    /// Our FIN acknowledged; waiting for the peer's.
    FinWait2,
    /// Peer's FIN received; we may still send.
    CloseWait,
    /// Both FINs sent, ours not yet acknowledged.
    Closing,
    /// Peer closed first; our FIN sent, waiting for its ACK.
    LastAck,
    /// Both directions closed.
    TimeWait,
}

/// Something worth a trace record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpEventKind {
    /// Fast retransmit: loss detected by duplicate ACKs or SACK, fast recovery entered.
    FastRetransmit = 0,
    /// The retransmission timer expired.
    Timeout = 1,
    /// Fast recovery ended.
    RecoveryExit = 2,
    /// A segment was retransmitted.
    Retransmit = 3,
    /// A duplicate ACK arrived.
    DupAck = 4,
}

impl TcpEventKind {
    /// Every kind, in code order.
    pub const ALL: [TcpEventKind; 5] = [Self::FastRetransmit, Self::Timeout, Self::RecoveryExit, Self::Retransmit, Self::DupAck];

    /// Name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::FastRetransmit => "fast_retransmit",
            Self::Timeout => "timeout",
            Self::RecoveryExit => "recovery_exit",
            Self::Retransmit => "retransmit",
            Self::DupAck => "dupack",
        }
    }
}

/// A trace event: kind and the sequence number it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpEvent {
    /// What happened.
    pub kind: TcpEventKind,
    /// Sequence number concerned (snd_una for most).
    pub seq: u64,
}

/// What a call into the connection produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Segments to transmit, in order.
    pub segments: Vec<TcpHeader>,
    /// Trace events.
    pub events: Vec<TcpEvent>,
    /// Set when a call received the peer's FIN in order (the peer closed); whoever reads it
    /// resets it.
    pub peer_fin: bool,
}

impl Output {
    /// Empty both lists, keeping their capacity, and reset the flag.
    pub fn clear(&mut self) {
        self.segments.clear();
        self.events.clear();
        self.peer_fin = false;
    }
}

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
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Recovery {
    /// Reno/NewReno fast recovery with an inflated window.
    NewReno { cwnd: u64, partial_seen: bool },
    /// RFC 6675: window fixed at ssthresh, sending by the pipe rule.
    Sack { cwnd: u64 },
    /// Linux rate-halving: the window shrinks one segment per two ACKs.
    RateHalving { cwnd: u64, acks: u32 },
}

#[derive(Clone, Copy, Debug)]
struct SentRecord {
    end: u64,
    at: SimTime,
    retransmitted: bool,
}

/// One TCP endpoint.
#[derive(Debug)]
pub struct Connection {
    cfg: TcpConfig,
    state: State,
    // Negotiated.
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
    /// Counters.
    pub stats: ConnStats,
}

impl Connection {
    /// A closed endpoint with the given settings. Call `connect` or `listen`.
    pub fn new(cfg: TcpConfig) -> Self {
        let smss = payload_room(&cfg, cfg.timestamps);
        let iw = initial_window(&cfg, smss);
        let cc = Controller::new(&cfg.cc, iw, cfg.initial_ssthresh, smss);
        let rtt = RttEstimator::new(cfg.rtt_estimator);
        let rcv_wscale = if cfg.window_scaling { wscale_for(cfg.rcvbuf) } else { 0 };
        Connection {
            state: State::Closed,
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
            stats: ConnStats::default(),
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
            Some(Recovery::NewReno { cwnd, .. }) | Some(Recovery::Sack { cwnd }) | Some(Recovery::RateHalving { cwnd, .. }) => cwnd,
            None => self.cc.cwnd(),
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

    /// Smoothed RTT, if sampled.
    pub fn srtt(&self) -> Option<SimDuration> {
        self.rtt.srtt()
    }

    /// The RTO the timer would use now (backoff included).
    pub fn rto(&self) -> SimDuration {
        let base = self.rtt.base_rto(&self.cfg.rto);
        let (b, n, rto) = self.rto_memo.get();
        if b == base && n == self.backoffs {
            return rto;
        }
        let rto = self.cfg.rto.timeout(base, self.backoffs);
        self.rto_memo.set((base, self.backoffs, rto));
        rto
    }

    /// Window-scale shift applied to the windows this endpoint advertises (0 if not negotiated).
    pub fn window_shift(&self) -> u8 {
        self.rcv_wscale
    }

    /// Payload bytes per full segment.
    pub fn smss(&self) -> u32 {
        self.smss
    }

    /// Bytes sent and not yet cumulatively acknowledged.
    pub fn outstanding(&self) -> u64 {
        self.snd_max - self.snd_una
    }

    /// Bytes in flight as the sender counts them (the RFC 6675 pipe with SACK).
    pub fn inflight(&self) -> u64 {
        if self.use_sack() {
            self.pipe()
        } else {
            self.snd_nxt - self.snd_una
        }
    }

    /// Oldest unacknowledged sequence number.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Next sequence number to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Next sequence number expected from the peer.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// True while in fast recovery.
    pub fn in_recovery(&self) -> bool {
        self.recovery.is_some()
    }

    /// True after a timeout until the data outstanding at the timeout is acknowledged.
    pub fn in_loss(&self) -> bool {
        self.sb.loss_point().is_some()
    }

    /// SACK negotiated.
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }

    /// Room in the send buffer for application bytes.
    pub fn send_space(&self) -> u64 {
        if self.close_requested {
            0
        } else {
            self.cfg.sndbuf.saturating_sub(self.unacked_app_bytes())
        }
    }

    /// Application bytes written and not yet acknowledged (the FIN, at `stream_end`, is not
    /// an application byte: once it is acknowledged `snd_una` is past the stream's end).
    pub fn unacked_app_bytes(&self) -> u64 {
        self.stream_end - self.snd_una.clamp(1, self.stream_end)
    }

    /// True when all written data and our FIN have been acknowledged.
    pub fn send_done(&self) -> bool {
        self.fin_sent && self.snd_una == self.snd_max && self.close_requested
    }

    /// True when the peer's FIN has been received in order.
    pub fn peer_closed(&self) -> bool {
        matches!(self.peer_fin, Some(f) if self.rcv_nxt > f)
    }

    /// Bytes received in order and not yet read by the application.
    pub fn readable(&self) -> u64 {
        self.data_rcv_nxt() - self.rcv_read
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
        self.state = State::SynSent;
        self.snd_nxt = 1;
        self.snd_max = 1;
        let syn = self.syn_segment(now, flags::SYN);
        out.segments.push(syn);
        self.timers.set(TimerKind::Retransmit, now + self.rto());
        self.sent.push_back(SentRecord { end: 1, at: now, retransmitted: false });
    }

    /// Queue up to `bytes` application bytes; returns how many fit in the send buffer.
    pub fn write(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
        let n = bytes.min(self.send_space());
        if n > 0 {
            let quiet = self.writes_are_quiet();
            self.stream_end += n;
            if !quiet {
                self.try_send(now, out);
            }
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
        if !self.close_requested {
            self.close_requested = true;
            self.try_send(now, out);
        }
    }

    /// The application reads up to `bytes` (only meaningful with auto-read off).
    pub fn read(&mut self, now: SimTime, bytes: u64, out: &mut Output) -> u64 {
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
                    self.sent.push_back(SentRecord { end: 1, at: now, retransmitted: false });
                    self.timers.set(TimerKind::Retransmit, now + self.rto());
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
                    self.handle_new_ack(now, seg, out);
                    self.send_ack(now, out);
                    self.try_send(now, out);
                }
            }
            _ => self.on_segment_synchronized(now, seg, out),
        }
    }

    /// Process expired timers (call at or after `next_deadline`).
    pub fn on_timer(&mut self, now: SimTime, out: &mut Output) {
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
    }

    // ---- Internals: handshake ---------------------------------------------------------

    fn syn_segment(&self, now: SimTime, fl: u8) -> TcpHeader {
        let c = &self.cfg;
        let mut h = TcpHeader {
            seq: 0,
            ack: if fl & flags::ACK != 0 { self.rcv_nxt } else { 0 },
            flags: fl,
            // The window in a SYN is never scaled (RFC 7323 §2.2).
            window: c.rcvbuf.min(65_535).min(self.rcv_ssthresh),
            mss: Some(c.mss.min(65_535) as u16),
            wscale: None,
            sack_permitted: c.sack,
            ..TcpHeader::default()
        };
        // RFC 7323 §2.2: a SYN-ACK carries the option only if the SYN did.
        let answering = self.state == State::Listen || self.state == State::SynReceived;
        if c.window_scaling && (!answering || self.peer_wscale) {
            h.wscale = Some(self.rcv_wscale);
        }
        if fl & flags::ACK != 0 {
            h.sack_permitted = self.sack_ok;
            if self.ts_ok {
                h.timestamps = Some((self.ts_val(now), self.ts_recent));
            }
        } else if c.timestamps {
            h.timestamps = Some((self.ts_val(now), 0));
        }
        h
    }

    fn accept_syn_options(&mut self, seg: &TcpHeader) {
        if let Some(m) = seg.mss {
            self.cfg.mss = self.cfg.mss.min(m as u32);
        }
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        self.ts_ok = self.cfg.timestamps && seg.timestamps.is_some();
        if let Some((tsval, _)) = seg.timestamps {
            self.ts_recent = tsval;
        }
        self.peer_wscale = seg.wscale.is_some();
        if !(self.cfg.window_scaling && self.peer_wscale) {
            self.rcv_wscale = 0;
        }
        self.smss = payload_room(&self.cfg, self.ts_ok);
        self.rcv_mss = self.smss;
        self.rcv_ssthresh = initial_rcv_ssthresh(&self.cfg, self.smss, self.rcv_wscale);
        self.quickacks_left = self.cfg.quickack.min((self.cfg.rcvbuf / (2 * self.smss as u64).max(1)) as u32);
        let sack_kind = matches!(self.recovery_kind, RecoveryKind::Sack | RecoveryKind::LinuxSack);
        if self.recovery_kind == RecoveryKind::Auto || sack_kind {
            self.recovery_kind = if self.sack_ok && sack_kind {
                self.recovery_kind
            } else if self.sack_ok {
                RecoveryKind::Sack
            } else {
                self.cfg.cc.recovery_without_sack()
            };
        }
        // The effective MSS is known only now: rebuild the controller for it.
        self.cc = Controller::new(&self.cfg.cc, initial_window(&self.cfg, self.smss), self.cfg.initial_ssthresh, self.smss);
    }

    /// TSval for `now`: ticks of the timestamp clock, offset by one so that it is never 0
    /// (an echoed 0 is treated as "no timestamp").
    fn ts_val(&self, now: SimTime) -> u32 {
        (now.0 / self.cfg.ts_tick.as_ps().max(1)).wrapping_add(1) as u32
    }

    /// RTT sample from an echoed TSecr (RFC 7323 §4.1): (TSval now − TSecr) mod 2³² ticks,
    /// so it holds across the wrap of the 32-bit clock; an echo of 0 or one 2³¹ ticks or more
    /// ahead of or behind the clock (stale or garbage; Linux ignores these too) gives none.
    /// The sample is the whole ticks elapsed plus the time since the current tick began:
    /// `now` minus the start of the tick the segment was stamped in, at least one tick.
    fn ts_rtt(&self, now: SimTime, ecr: u32) -> Option<SimDuration> {
        let ticks = self.ts_val(now).wrapping_sub(ecr);
        if ecr == 0 || ticks >= 1 << 31 {
            return None;
        }
        let tick = self.cfg.ts_tick.as_ps().max(1);
        Some(SimDuration(ticks as u64 * tick + now.0 % tick).max(self.cfg.ts_tick))
    }

    // ---- Internals: segment processing ------------------------------------------------

    fn on_segment_synchronized(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        if self.state == State::SynReceived && seg.has(flags::SYN) && !seg.has(flags::ACK) {
            // Our SYN-ACK was lost and the peer retransmitted its SYN.
            let synack = self.syn_segment(now, flags::SYN | flags::ACK);
            out.segments.push(synack);
            return;
        }
        if seg.has(flags::SYN) && seg.has(flags::ACK) {
            // Duplicate SYN-ACK (our ACK was lost): acknowledge again.
            self.send_ack(now, out);
            return;
        }
        if self.ts_ok {
            if let Some((tsval, _)) = seg.timestamps {
                // RFC 7323 §4.3: TS.Recent from segments at or before Last.ACK.sent.
                if seg.seq <= self.last_ack_sent && tsval.wrapping_sub(self.ts_recent) as i32 >= 0 {
                    self.ts_recent = tsval;
                }
            }
        }
        if seg.has(flags::ACK) {
            if self.state == State::SynReceived && seg.ack >= 1 {
                self.state = State::Established;
                self.snd_wnd = seg.window;
            }
            self.on_ack(now, seg, out);
        }
        if seg.len > 0 || seg.has(flags::FIN) {
            self.on_data(now, seg, out);
        } else if seg.seq < self.rcv_nxt && seg.len == 0 && !seg.has(flags::SYN) && self.state_has_ack() {
            // An out-of-window probe (zero-window probe): answer with the current window.
            self.send_ack(now, out);
        }
        self.try_send(now, out);
    }

    fn on_ack(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        if seg.ack > self.snd_max {
            return; // Acknowledges data never sent: ignore (RFC 793).
        }
        let mut sack_news = false;
        if self.sack_ok {
            for (s, e) in seg.sack_blocks() {
                let s = s.max(self.snd_una);
                if e > s && e <= self.snd_max && self.sb.insert(s, e) > 0 {
                    sack_news = true;
                }
            }
        }
        if sack_news && matches!(self.recovery, Some(Recovery::RateHalving { .. })) {
            self.sb.detect_lost_retransmissions();
        }
        if seg.ack > self.snd_una {
            self.snd_wnd = seg.window;
            self.max_snd_wnd = self.max_snd_wnd.max(seg.window);
            self.handle_new_ack(now, seg, out);
        } else if seg.ack == self.snd_una {
            let window_changed = seg.window != self.snd_wnd;
            self.snd_wnd = seg.window;
            self.max_snd_wnd = self.max_snd_wnd.max(seg.window);
            let is_dup = seg.len == 0 && !seg.has(flags::SYN) && !seg.has(flags::FIN) && self.snd_max > self.snd_una && (!window_changed || sack_news);
            if is_dup {
                self.on_dupack(now, out);
            } else if window_changed && self.snd_wnd > 0 {
                self.timers.clear(TimerKind::Persist);
                self.persist_backoff = 0;
            }
        }
    }

    fn handle_new_ack(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        let inflight_before = self.inflight();
        let cwnd_before = self.cwnd();
        let acked = seg.ack - self.snd_una;
        let fin_acked = self.fin_sent && seg.ack == self.snd_max;
        let syn_acked = self.snd_una == 0;
        let data_acked = acked - syn_acked as u64 - fin_acked as u64;
        self.snd_una = seg.ack;
        self.stats.bytes_acked += data_acked;
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        self.sb.on_cumulative_ack(self.snd_una);
        // RTT: timestamps if negotiated, else the newest fully acknowledged segment that was
        // never retransmitted (Karn's algorithm).
        let mut sample = None;
        let mut packets_acked = 0u32;
        while let Some(r) = self.sent.front() {
            if r.end > self.snd_una {
                break;
            }
            if !r.retransmitted {
                sample = Some(now.since(r.at));
            }
            self.sent.pop_front();
            packets_acked += 1;
        }
        if self.snd_una > self.round_end {
            self.round += 1;
            self.round_end = self.snd_max;
        }
        let was_open = self.recovery.is_none() && self.sb.loss_point().is_none() && self.dupacks == 0 && self.sb.sacked().is_empty();
        if self.ts_ok {
            sample = seg.timestamps.and_then(|(_, ecr)| self.ts_rtt(now, ecr));
        }
        if let Some(r) = sample {
            self.rtt.sample(r, &self.cfg.rto, self.snd_una, self.snd_nxt);
            self.backoffs = 0;
        }
        self.syn_retries = 0;
        if self.state == State::FinWait1 && fin_acked {
            self.state = State::FinWait2;
        } else if self.state == State::Closing && fin_acked {
            self.state = State::TimeWait;
        } else if self.state == State::LastAck && fin_acked {
            self.state = State::Closed;
        }
        self.dupacks = 0;
        self.persist_backoff = 0;
        self.timers.clear(TimerKind::Persist);

        // Loss (post-timeout) state ends when everything outstanding at the timeout is acked.
        if self.sb.loss_point().is_some_and(|p| self.snd_una >= p) {
            self.sb.set_loss_point(None);
        }

        let mut restart_rto = true;
        match self.recovery {
            Some(Recovery::Sack { .. }) | Some(Recovery::RateHalving { .. }) => {
                if self.snd_una >= self.recover {
                    self.exit_recovery(now, out);
                } else {
                    self.rate_halve();
                }
            }
            Some(Recovery::NewReno { cwnd, partial_seen }) => {
                if self.snd_una >= self.recover || self.recovery_kind == RecoveryKind::Reno {
                    self.exit_recovery(now, out);
                } else {
                    // RFC 6582 §3.2 step 5: partial ACK.
                    let mss = self.smss as u64;
                    let mut w = cwnd.saturating_sub(acked);
                    if acked >= mss {
                        w += mss;
                    }
                    self.recovery = Some(Recovery::NewReno { cwnd: w.max(mss), partial_seen: true });
                    self.retransmit_range(now, self.snd_una, out);
                    // "Impatient" variant: reset the timer only on the first partial ACK.
                    restart_rto = !partial_seen;
                }
            }
            None => {
                if data_acked > 0 {
                    let ack = AckSample {
                        now,
                        bytes_acked: data_acked,
                        packets_acked,
                        open: was_open && self.sb.sacked().is_empty(),
                        round: self.round,
                        mss: self.smss,
                        rtt: sample,
                        srtt: self.rtt.srtt(),
                        min_rtt: (self.rtt.min_rtt() != SimDuration::MAX).then(|| self.rtt.min_rtt()),
                        inflight_before,
                        cwnd_limited: !self.cfg.cwnd_validation || inflight_before + self.smss as u64 > cwnd_before,
                        after_timeout: self.sb.loss_point().is_some(),
                        timestamps: if self.ts_ok { seg.timestamps } else { None },
                        ts_tick: self.cfg.ts_tick,
                    };
                    self.cc.on_ack(&ack);
                }
            }
        }
        // RFC 6298 §5.2/5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd_una == self.snd_max {
            self.timers.clear(TimerKind::Retransmit);
        } else if restart_rto {
            self.timers.set(TimerKind::Retransmit, now + self.rto());
        }
    }

    fn on_dupack(&mut self, now: SimTime, out: &mut Output) {
        self.dupacks += 1;
        self.stats.dupacks_received += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::DupAck, seq: self.snd_una });
        match self.recovery {
            Some(Recovery::NewReno { cwnd, partial_seen }) => {
                // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                self.recovery = Some(Recovery::NewReno { cwnd: cwnd + self.smss as u64, partial_seen });
            }
            Some(Recovery::Sack { .. }) => {}
            Some(Recovery::RateHalving { .. }) => self.rate_halve(),
            None => {
                if self.sb.loss_point().is_some() {
                    return; // Still repairing after a timeout: no fast retransmit (Linux Loss state).
                }
                let trigger = if self.recovery_kind == RecoveryKind::LinuxSack && self.sack_ok {
                    // tcp_time_to_recover: dupACKs, or FACK: SACKed data more than `reordering`
                    // segments above snd_una.
                    self.dupacks >= self.cfg.dupthresh || self.sb.fack_lost_below(self.snd_una, self.loss_rule()) > self.snd_una
                } else if self.use_sack() {
                    self.dupacks >= self.cfg.dupthresh || self.lost_below() > self.snd_una
                } else {
                    self.dupacks == self.cfg.dupthresh
                };
                let allowed = self.snd_una > self.recover || self.recover == 0;
                if trigger && allowed {
                    self.enter_recovery(now, out);
                }
            }
        }
    }

    fn enter_recovery(&mut self, now: SimTime, out: &mut Output) {
        let inflight = self.outstanding();
        self.recover = self.snd_max;
        self.cc.on_congestion(&CongestionEvent { now, inflight, mss: self.smss });
        let ssthresh = self.cc.ssthresh();
        self.stats.fast_retransmits += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::FastRetransmit, seq: self.snd_una });
        if self.use_sack() {
            self.recovery = Some(if self.recovery_kind == RecoveryKind::LinuxSack {
                // Rate-halving starts from the current window (tcp_cwnd_down shrinks it).
                Recovery::RateHalving { cwnd: self.cc.cwnd(), acks: 0 }
            } else {
                Recovery::Sack { cwnd: ssthresh }
            });
            self.sb.restart_repair(self.snd_una);
            self.sb.clear_rxt_logs();
            let first = self.sb.sacked().next_uncovered(self.snd_una);
            self.retransmit_range(now, first, out);
        } else {
            let cwnd = ssthresh + self.cfg.dupthresh as u64 * self.smss as u64;
            self.recovery = Some(Recovery::NewReno { cwnd, partial_seen: false });
            self.retransmit_range(now, self.snd_una, out);
        }
    }

    fn exit_recovery(&mut self, now: SimTime, out: &mut Output) {
        let window = match self.recovery {
            Some(Recovery::RateHalving { cwnd, .. }) => Some(cwnd),
            _ => None,
        };
        self.recovery = None;
        self.sb.clear_rxt_logs();
        self.cc.on_recovery_exit(&RecoveryExit { now, inflight: self.outstanding(), mss: self.smss, window });
        out.events.push(TcpEvent { kind: TcpEventKind::RecoveryExit, seq: self.snd_una });
    }

    /// tcp_cwnd_down (Linux 2.6.16): one segment less per two ACKs while above the
    /// controller's floor, and never more than in-flight + 1 segment.
    fn rate_halve(&mut self) {
        let Some(Recovery::RateHalving { cwnd, acks }) = self.recovery else { return };
        let mss = self.smss as u64;
        let decr = acks + 1;
        let mut w = cwnd;
        if decr >= 2 && w > self.cc.min_cwnd() {
            w = w.saturating_sub((decr >> 1) as u64 * mss).max(mss);
        }
        w = w.min(self.inflight() + mss);
        self.recovery = Some(Recovery::RateHalving { cwnd: w.max(mss), acks: decr & 1 });
    }

    fn on_rto(&mut self, now: SimTime, out: &mut Output) {
        if self.state == State::SynSent || self.state == State::SynReceived {
            self.backoffs += 1;
            self.syn_retries += 1;
            self.stats.timeouts += 1;
            out.events.push(TcpEvent { kind: TcpEventKind::Timeout, seq: 0 });
            let fl = if self.state == State::SynSent { flags::SYN } else { flags::SYN | flags::ACK };
            let syn = self.syn_segment(now, fl);
            out.segments.push(syn);
            for r in self.sent.iter_mut() {
                r.retransmitted = true;
            }
            self.timers.set(TimerKind::Retransmit, now + self.rto());
            return;
        }
        if self.snd_una == self.snd_max {
            return;
        }
        self.backoffs += 1;
        self.stats.timeouts += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Timeout, seq: self.snd_una });
        let inflight = self.outstanding();
        self.cc.on_timeout(&TimeoutEvent { now, inflight, mss: self.smss, backoffs: self.backoffs });
        self.recovery = None;
        self.sb.clear_rxt_logs();
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.sb.set_loss_point(Some(self.snd_max));
        for r in self.sent.iter_mut() {
            r.retransmitted = true;
        }
        if self.use_sack() {
            // RFC 6675 §5.1: keep the scoreboard, treat all un-SACKed data as lost.
            self.sb.restart_repair(self.snd_una);
        } else {
            // Go-back-N from the first unacknowledged byte.
            self.snd_nxt = self.snd_una;
        }
        let first = if self.use_sack() { self.sb.sacked().next_uncovered(self.snd_una) } else { self.snd_una };
        self.retransmit_range(now, first, out);
        self.timers.set(TimerKind::Retransmit, now + self.rto());
        self.try_send(now, out);
    }

    fn on_persist(&mut self, now: SimTime, out: &mut Output) {
        if self.snd_una != self.snd_max || !self.has_unsent() {
            return;
        }
        if self.sendable_new_bytes() > 0 {
            // A small window that SWS avoidance refused: send what fits (BSD tcp_output force).
            let room = self.sendable_new_bytes();
            self.send_new_forced(now, out, room);
            return;
        }
        // Zero-window probe: an already-acknowledged sequence number elicits an ACK with the
        // current window (Linux tcp_xmit_probe_skb).
        let h = self.base_segment(now, self.snd_una - 1, 0);
        out.segments.push(h);
        self.persist_backoff += 1;
        self.arm_persist(now);
    }

    fn arm_persist(&mut self, now: SimTime) {
        let base = self.rtt.base_rto(&self.cfg.rto).max(self.cfg.persist_min);
        let d = SimDuration(base.as_ps().saturating_mul(1 << self.persist_backoff.min(16))).min(self.cfg.rto.max);
        self.timers.set(TimerKind::Persist, now + d);
    }

    // ---- Internals: receive side -------------------------------------------------------

    fn on_data(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        let s = seg.seq;
        let e = seg.seq + seg.len as u64;
        if seg.has(flags::FIN) {
            self.peer_fin = Some(e);
        }
        let window_end = self.rcv_nxt + self.rcv_window();
        let mut immediate = false;
        if seg.len > 0 {
            if e <= self.rcv_nxt {
                immediate = true; // Entirely old: a duplicate, ACK at once (RFC 5681 §4.2).
            } else if s >= window_end && s > self.rcv_nxt {
                immediate = true; // Beyond the window: drop, ACK with the current window.
            } else {
                let e = e.min(window_end.max(self.rcv_nxt + 1));
                self.rcv_mss = self.rcv_mss.max(seg.len);
                if s <= self.rcv_nxt {
                    let had_ooo = !self.ooo.is_empty();
                    let old = self.rcv_nxt;
                    self.rcv_nxt = e;
                    while let Some(end) = self.ooo.pop_front_if_starts_at(self.rcv_nxt) {
                        self.rcv_nxt = self.rcv_nxt.max(end);
                    }
                    self.sack_recent.drop_below(self.rcv_nxt);
                    let new = self.data_rcv_nxt() - old.min(self.data_rcv_nxt());
                    self.stats.bytes_delivered += new;
                    self.unacked_bytes += self.rcv_nxt - old;
                    if self.grow_rcv_window(seg.len) {
                        immediate = true; // tcp_grow_window: quick-ACK mode for one ACK.
                    }
                    if had_ooo {
                        immediate = true; // Filled (part of) a hole: ACK at once.
                    }
                } else {
                    let added = self.ooo.insert(s, e);
                    // Linux 4.20+ tcp_data_queue_ofo: a queued out-of-order segment grows the
                    // window too, on SACK connections only (commit 4e4f1fc22681, v3.11, and
                    // 662051215c75, v5.8 and 4.19 stable). Its quick ACK changes nothing: an
                    // out-of-order segment is ACKed at once anyway.
                    if added > 0 && self.sack_ok && self.cfg.rcv_window_rule == RcvWindowRule::Linux420 {
                        self.grow_rcv_window(seg.len);
                    }
                    // One entry per out-of-order block, most recently changed first: drop the
                    // entries of every block the segment joined (RFC 2018 §4 order).
                    let (a, b) = self.ooo.range_containing(s).unwrap_or((s, e));
                    self.sack_recent.touch(a, b, s);
                    immediate = true; // Out of order: duplicate ACK at once.
                }
                if self.auto_read {
                    self.rcv_read = self.data_rcv_nxt();
                }
            }
        }
        // An in-order FIN.
        if let Some(f) = self.peer_fin {
            if self.rcv_nxt == f {
                self.rcv_nxt = f + 1;
                out.peer_fin = true;
                immediate = true;
                self.state = match self.state {
                    State::Established => State::CloseWait,
                    State::FinWait1 => State::Closing,
                    State::FinWait2 => State::TimeWait,
                    st => st,
                };
                if self.auto_read {
                    self.rcv_read = self.data_rcv_nxt();
                }
            }
        }
        let threshold = (self.cfg.delack_segments.saturating_sub(1)) as u64 * self.rcv_mss as u64;
        if !immediate && seg.len > 0 && self.quickacks_left > 0 {
            self.quickacks_left -= 1; // Linux quick-ACK mode at connection start
            immediate = true;
        }
        if immediate || self.unacked_bytes > threshold || self.cfg.delack_segments <= 1 {
            self.send_ack(now, out);
        } else if !self.timers.is_set(TimerKind::DelayedAck) {
            self.timers.set(TimerKind::DelayedAck, now + self.cfg.delack_timeout);
        }
    }

    /// rcv_nxt counted in data bytes (excluding the peer's FIN once received).
    fn data_rcv_nxt(&self) -> u64 {
        match self.peer_fin {
            Some(f) if self.rcv_nxt > f => f,
            _ => self.rcv_nxt,
        }
    }

    /// Linux `tcp_grow_window` (net/ipv4/tcp_input.c; 2.6.16 and 4.20+) for a data segment of
    /// `len` bytes, called for segments of at least 128 bytes (`tcp_event_data_recv`): raise
    /// `rcv_ssthresh` by 2·advmss, at most to the receive buffer. True when it grew (Linux then
    /// sets `icsk_ack.quick |= 1`).
    /// MODEL: the truesize check ("Check #2") always passes, so the step is 2·advmss, with the
    /// negotiated payload MSS as advmss. Linux 4.20+ steps by max(2·advmss, 2·skb->len), the
    /// same here: no segment is longer than the MSS (no GRO/LRO aggregation).
    fn grow_rcv_window(&mut self, len: u32) -> bool {
        if !self.cfg.rcv_window_growth || len < 128 || self.rcv_ssthresh >= self.cfg.rcvbuf {
            return false;
        }
        self.rcv_ssthresh = (self.rcv_ssthresh + 2 * self.smss as u64).min(self.cfg.rcvbuf);
        true
    }

    fn rcv_window(&self) -> u64 {
        self.rcv_adv.saturating_sub(self.rcv_nxt)
    }

    fn update_rcv_adv(&mut self) {
        let held = (self.data_rcv_nxt() - self.rcv_read.min(self.data_rcv_nxt())) + self.ooo.bytes();
        let free = self.cfg.rcvbuf.saturating_sub(held).min(self.rcv_ssthresh);
        // Whole units of the window scale (a shift: the unit is a power of two).
        let free = free >> self.rcv_wscale << self.rcv_wscale;
        let cand = self.rcv_nxt + free.min(65_535u64 << self.rcv_wscale);
        // Receiver SWS avoidance (RFC 1122 §4.2.3.3); never shrink the right edge.
        let step = (self.rcv_mss as u64).min(self.cfg.rcvbuf >> 1).max(1);
        if cand >= self.rcv_adv + step || self.rcv_adv <= self.rcv_nxt && cand > self.rcv_adv && free >= step {
            self.rcv_adv = cand;
        }
        if self.rcv_adv < self.rcv_nxt {
            self.rcv_adv = self.rcv_nxt;
        }
    }

    fn state_has_ack(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }

    fn sack_blocks(&self, h: &mut TcpHeader) {
        if !self.sack_ok || self.ooo.is_empty() {
            return;
        }
        let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        for start in self.sack_recent.iter() {
            if n == max {
                break;
            }
            if let Some(r) = self.ooo.range_containing(start) {
                if !blocks[..n].contains(&r) {
                    blocks[n] = r;
                    n += 1;
                }
            }
        }
        h.set_sack_blocks(&blocks[..n]);
    }

    fn base_segment(&mut self, now: SimTime, seq: u64, len: u32) -> TcpHeader {
        self.update_rcv_adv();
        let mut h = TcpHeader { seq, ack: self.rcv_nxt, len, flags: flags::ACK, window: self.rcv_window(), ..TcpHeader::default() };
        if self.ts_ok {
            h.timestamps = Some((self.ts_val(now), self.ts_recent));
        }
        self.sack_blocks(&mut h);
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_bytes = 0;
        self.timers.clear(TimerKind::DelayedAck);
        h
    }

    fn send_ack(&mut self, now: SimTime, out: &mut Output) {
        let h = self.base_segment(now, self.snd_nxt, 0);
        self.stats.acks_sent += 1;
        out.segments.push(h);
    }

    // ---- Internals: send side ----------------------------------------------------------

    fn use_sack(&self) -> bool {
        self.sack_ok && matches!(self.recovery_kind, RecoveryKind::Sack | RecoveryKind::LinuxSack)
    }

    /// How the scoreboard judges losses: RFC 6675 IsLost, or FACK for Linux recovery.
    fn loss_rule(&self) -> LossRule {
        LossRule { dupthresh: self.cfg.dupthresh, smss: self.smss as u64, fack: self.recovery_kind == RecoveryKind::LinuxSack }
    }

    /// Everything below this sequence number that is not SACKed is deemed lost (RFC 6675
    /// IsLost or FACK, plus everything outstanding at a timeout).
    fn lost_below(&self) -> u64 {
        self.sb.lost_below(self.snd_una, self.snd_max, self.loss_rule())
    }

    /// RFC 6675 pipe: un-SACKed bytes not deemed lost, plus retransmitted un-SACKed bytes.
    #[inline]
    fn pipe(&self) -> u64 {
        self.sb.pipe(self.snd_una, self.snd_max, self.loss_rule())
    }

    fn has_unsent(&self) -> bool {
        self.snd_nxt < self.stream_end
    }

    /// New bytes the peer's window allows right now.
    fn sendable_new_bytes(&self) -> u64 {
        let wnd_end = self.snd_una + self.snd_wnd;
        wnd_end.min(self.stream_end).saturating_sub(self.snd_nxt.max(self.snd_max))
    }

    fn try_send(&mut self, now: SimTime, out: &mut Output) {
        if !self.state_sends() {
            return;
        }
        if self.snd_una == self.snd_max && !self.has_unsent() {
            // Nothing outstanding and nothing unsent (a receiver, or an idle sender): no rule
            // can send a segment, only the FIN may be due.
            self.maybe_send_fin(now, out);
            return;
        }
        if self.recovery.is_none() && self.sb.loss_point().is_none() && self.sb.sacked().is_empty() {
            self.send_open(now, out);
            return;
        }
        let mut guard = 0u32;
        loop {
            guard += 1;
            assert!(
                guard < 1_000_000,
                "send loop does not terminate: una={} nxt={} max={} end={} lost_below={} pipe={} cwnd={} rec={:?} scoreboard={:?}",
                self.snd_una,
                self.snd_nxt,
                self.snd_max,
                self.stream_end,
                self.lost_below(),
                self.inflight(),
                self.cwnd(),
                self.recovery,
                self.sb
            );
            if !self.send_one(now, out) {
                break;
            }
        }
        self.maybe_send_fin(now, out);
        // Persist: data waiting, nothing in flight, yet nothing could be sent — the peer's
        // window is closed or too small to pass sender SWS avoidance (RFC 1122 §4.2.2.17).
        if self.snd_una == self.snd_max && self.has_unsent() && !self.timers.is_set(TimerKind::Retransmit) && !self.timers.is_set(TimerKind::Persist) {
            self.arm_persist(now);
        }
    }

    /// `try_send` in the open state (no recovery, no timeout repair, nothing SACKed), where
    /// every rule of `send_one` reduces to new data within the room the window leaves: the
    /// same segments, with the window read once and no repair rules to walk past.
    fn send_open(&mut self, now: SimTime, out: &mut Output) {
        let cwnd = self.cc.cwnd();
        if self.use_sack() {
            // RFC 6675 with nothing SACKed: pipe = flight + retransmitted bytes above SND.UNA.
            // `send_one`'s test `pipe + min(SMSS, pending) > cwnd` is `send_new`'s own
            // `len > room` (both see the same next segment).
            while self.send_new(now, out, cwnd.saturating_sub(self.pipe())) {}
        } else if self.snd_nxt >= self.snd_max {
            // Flight = SND.NXT − SND.UNA.
            let allowance = self.non_sack_allowance(cwnd);
            while self.send_new(now, out, allowance.saturating_sub(self.snd_nxt - self.snd_una)) {}
        } else {
            // Go-back-N after a timeout, once its loss state is over: the general rules.
            while self.send_one(now, out) {}
        }
        self.maybe_send_fin(now, out);
        if self.snd_una == self.snd_max && self.has_unsent() && !self.timers.is_set(TimerKind::Retransmit) && !self.timers.is_set(TimerKind::Persist) {
            self.arm_persist(now);
        }
    }

    /// Flight a non-SACK sender may have out with window `cwnd`: RFC 3042 limited transmit
    /// widens it by a segment per duplicate ACK for the first two, outside any repair.
    fn non_sack_allowance(&self, cwnd: u64) -> u64 {
        if self.recovery.is_none() && self.sb.loss_point().is_none() && self.cfg.limited_transmit && (1..=2).contains(&self.dupacks) {
            cwnd + self.dupacks as u64 * self.smss as u64
        } else {
            cwnd
        }
    }

    /// Send one segment if the rules allow; returns whether one was sent.
    fn send_one(&mut self, now: SimTime, out: &mut Output) -> bool {
        let mss = self.smss as u64;
        let cwnd = self.cwnd();
        if self.use_sack() {
            let pipe = self.pipe();
            if pipe + mss.min(self.pending_len()) > cwnd || pipe >= cwnd {
                return false;
            }
            let repairing = self.recovery.is_some() || self.sb.loss_point().is_some();
            if repairing {
                // Linux: a retransmission found lost goes again before anything else.
                if let Some(s) = self.sb.next_lost_retransmission(self.snd_una, mss) {
                    self.retransmit_range(now, s, out);
                    return true;
                }
                // NextSeg rule 1: the lowest lost un-SACKed sequence above HighRxt.
                let s = self.sb.sacked().next_uncovered(self.sb.high_rxt().max(self.snd_una));
                if s < self.lost_below() && s < self.snd_max {
                    self.retransmit_range(now, s, out);
                    return true;
                }
            }
            // Rule 2: new data.
            if self.send_new(now, out, cwnd.saturating_sub(pipe)) {
                return true;
            }
            if self.recovery.is_some() {
                // Rule 3: an un-SACKed sequence above HighRxt with SACKed data above it.
                let s = self.sb.sacked().next_uncovered(self.sb.high_rxt().max(self.snd_una));
                if self.sb.sacked().max_end().is_some_and(|m| s < m) && s < self.snd_max {
                    self.retransmit_range(now, s, out);
                    return true;
                }
                // Rule 4: once per recovery, retransmit the highest un-SACKed segment (rescue).
                if self.sb.rescue_rxt.is_none() {
                    let top = match self.sb.sacked().last() {
                        Some((a, b)) if b == self.snd_max => a,
                        _ => self.snd_max.min(self.stream_end),
                    };
                    if top > self.sb.high_rxt() && top > self.snd_una {
                        let mut start = top.saturating_sub(mss).max(self.snd_una);
                        start = self.sb.sacked().next_uncovered(start);
                        self.sb.rescue_rxt = Some(self.recover);
                        let high_rxt = self.sb.high_rxt(); // RFC 6675: the rescue does not move HighRxt.
                        self.retransmit_range(now, start, out);
                        self.sb.set_high_rxt(high_rxt);
                        return true;
                    }
                }
            }
            false
        } else {
            // Non-SACK: flight = snd_nxt − snd_una (after a timeout snd_nxt restarts at snd_una).
            let flight = self.snd_nxt - self.snd_una;
            let allowance = self.non_sack_allowance(cwnd);
            if flight >= allowance {
                return false;
            }
            if self.snd_nxt < self.snd_max {
                // Go-back-N after a timeout: resend what was sent before, one segment at a time.
                if flight + mss.min(self.snd_max - self.snd_nxt) > allowance {
                    return false;
                }
                let s = self.snd_nxt;
                self.retransmit_range(now, s, out);
                return true;
            }
            self.send_new(now, out, allowance - flight)
        }
    }

    /// Bytes the next new segment would carry, ignoring the congestion window.
    fn pending_len(&self) -> u64 {
        self.sendable_new_bytes().min(self.smss as u64).max(1)
    }

    /// Send a new-data segment within `room` bytes of congestion window, if the peer window,
    /// Nagle and sender SWS avoidance allow. Returns whether one was sent.
    fn send_new(&mut self, now: SimTime, out: &mut Output, room: u64) -> bool {
        self.send_new_inner(now, out, room, false)
    }

    fn send_new_forced(&mut self, now: SimTime, out: &mut Output, room: u64) -> bool {
        self.send_new_inner(now, out, room, true)
    }

    fn send_new_inner(&mut self, now: SimTime, out: &mut Output, room: u64, force: bool) -> bool {
        let mss = self.smss as u64;
        let start = self.snd_nxt.max(self.snd_max);
        let avail = self.stream_end.saturating_sub(start);
        if avail == 0 {
            return false;
        }
        let wnd_room = (self.snd_una + self.snd_wnd).saturating_sub(start);
        let len = avail.min(mss).min(wnd_room);
        if len == 0 || len > room {
            return false;
        }
        if len < mss && !force {
            // RFC 1122 §4.2.3.4 sender SWS avoidance with Nagle (RFC 896): a short segment
            // goes only if it is all the data and nothing is outstanding (or Nagle is off),
            // or the window would allow at least half the peer's largest window.
            let is_all = len == avail;
            let idle = self.snd_max == self.snd_una;
            let half_window = len >= self.max_snd_wnd / 2 && self.max_snd_wnd > 0;
            let ok = (is_all && (idle || !self.cfg.nagle)) || half_window;
            if !ok {
                return false;
            }
        }
        let mut h = self.base_segment(now, start, len as u32);
        if start + len == self.stream_end {
            h.flags |= flags::PSH;
        }
        self.snd_nxt = start + len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        self.sent.push_back(SentRecord { end: self.snd_nxt, at: now, retransmitted: false });
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        out.segments.push(h);
        if !self.timers.is_set(TimerKind::Retransmit) {
            self.timers.set(TimerKind::Retransmit, now + self.rto());
        }
        self.timers.clear(TimerKind::Persist);
        true
    }

    /// Retransmit one segment starting at `s` (up to SMSS, a SACKed block or snd_max).
    fn retransmit_range(&mut self, now: SimTime, s: u64, out: &mut Output) {
        let data_end = self.snd_max.min(self.stream_end);
        if s >= data_end {
            // Only the FIN is outstanding: a retransmission, though not a data segment (it is
            // in `retransmits`, not in `segments_sent`).
            if self.fin_sent && s < self.snd_max {
                let mut h = self.base_segment(now, self.stream_end, 0);
                h.flags |= flags::FIN;
                h.retransmit = true;
                self.stats.retransmits += 1;
                out.events.push(TcpEvent { kind: TcpEventKind::Retransmit, seq: self.stream_end });
                out.segments.push(h);
                self.snd_nxt = self.snd_max;
                self.sb.set_high_rxt(self.snd_max);
                self.karn_mark(self.stream_end, self.snd_max);
                if !self.timers.is_set(TimerKind::Retransmit) {
                    self.timers.set(TimerKind::Retransmit, now + self.rto());
                }
            }
            return;
        }
        let mut e = (s + self.smss as u64).min(data_end);
        if let Some(next_sacked) = self.sb.sacked().next_start_after(s) {
            e = e.min(next_sacked);
        }
        let len = e - s;
        if matches!(self.recovery, Some(Recovery::RateHalving { .. })) {
            self.sb.log_rxt(s, e, self.snd_max);
        }
        let mut h = self.base_segment(now, s, len as u32);
        h.retransmit = true;
        if self.fin_sent && e == self.stream_end && self.snd_max > self.stream_end {
            h.flags |= flags::FIN;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        self.stats.retransmits += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Retransmit, seq: s });
        out.segments.push(h);
        if e > self.sb.high_rxt() {
            self.sb.set_high_rxt(e);
        }
        if self.snd_nxt >= s && self.snd_nxt < e {
            self.snd_nxt = e;
            if h.has(flags::FIN) {
                self.snd_nxt = self.snd_max;
            }
        }
        self.karn_mark(s, e);
        if !self.timers.is_set(TimerKind::Retransmit) {
            self.timers.set(TimerKind::Retransmit, now + self.rto());
        }
    }

    /// Karn: no RTT sample from anything in `[s, e)`, which is being retransmitted.
    fn karn_mark(&mut self, s: u64, e: u64) {
        let i = self.sent.partition_point(|r| r.end <= s);
        for r in self.sent.iter_mut().skip(i) {
            r.retransmitted = true;
            if r.end >= e {
                break;
            }
        }
    }

    fn maybe_send_fin(&mut self, now: SimTime, out: &mut Output) {
        if !self.close_requested || self.fin_sent || self.snd_nxt != self.stream_end || self.snd_max != self.stream_end {
            return;
        }
        let mut h = self.base_segment(now, self.stream_end, 0);
        h.flags |= flags::FIN;
        out.segments.push(h);
        self.fin_sent = true;
        self.snd_nxt = self.stream_end + 1;
        self.snd_max = self.snd_nxt;
        self.sent.push_back(SentRecord { end: self.snd_nxt, at: now, retransmitted: false });
        self.state = match self.state {
            State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            st => st,
        };
        if !self.timers.is_set(TimerKind::Retransmit) {
            self.timers.set(TimerKind::Retransmit, now + self.rto());
        }
    }

    fn clear_timers(&mut self) {
        self.timers.clear_all();
    }
}

/// Payload bytes per full segment for a configured MSS (timestamps take 12).
fn payload_room(cfg: &TcpConfig, ts: bool) -> u32 {
    if ts {
        cfg.mss - TS_OPTION_BYTES
    } else {
        cfg.mss
    }
}

/// Initial window in bytes: configured segments, or by MSS (RFC 5681 §3.1 or Linux 2.6).
fn initial_window(cfg: &TcpConfig, smss: u32) -> u64 {
    let three_up_to = match cfg.initial_cwnd_rule {
        InitialWindowRule::Rfc5681 => 2190,
        InitialWindowRule::Linux => 1460,
    };
    let segs = if cfg.initial_cwnd > 0 {
        cfg.initial_cwnd as u64
    } else if smss > three_up_to {
        2
    } else if smss > 1095 {
        3
    } else {
        4
    };
    segs * smss as u64
}

/// Linux `tcp_select_initial_window` (net/ipv4/tcp_output.c): the first advertised window
/// (and `rcv_ssthresh`) when the receive window grows; unbounded otherwise. `mss` is the
/// payload MSS (Linux passes the MSS less the timestamp option).
/// MODEL: the receive space is `rcvbuf` (no `tcp_win_from_space` overhead share, no
/// `window_clamp`, no route `init_rcv_wnd`), and `tcp_workaround_signed_windows` is off in 4.20+.
/// MODEL: later windows are rounded down to the window-scale unit (`update_rcv_adv`), where
/// Linux 4.20+ `__tcp_select_window` rounds up (ALIGN): with a 256 MB buffer (unit 8192 bytes)
/// a 65535-byte window is 57344 bytes once scaled, not 65536.
fn initial_rcv_ssthresh(cfg: &TcpConfig, mss: u32, wscale: u8) -> u64 {
    if !cfg.rcv_window_growth {
        return u64::MAX;
    }
    let mss = mss as u64;
    let space = cfg.rcvbuf / mss.max(1) * mss; // quantised to whole segments
    match cfg.rcv_window_rule {
        // Linux 2.6.16: at most MAX_TCP_WINDOW, then at most 4/3/2 segments (RFC 2414's
        // initial window) when the window scale is below the MSS.
        RcvWindowRule::Linux2616 => {
            let mut wnd = space.min(32_767);
            if mss > 1 << wscale {
                let segs = if mss > 1460 * 3 {
                    2
                } else if mss > 1460 {
                    3
                } else {
                    4
                };
                wnd = wnd.min(segs * mss);
            }
            wnd
        }
        // Linux 4.20 to 6.9 (commit a337531b942b, "tcp: up initial rmem to 128KB and SYN
        // rwin to around 64KB"): min(space, U16_MAX), no segment cap.
        RcvWindowRule::Linux420 => space.min(65_535),
    }
}

/// The smallest window-scale shift that lets `rcvbuf` be advertised (RFC 7323, max 14).
fn wscale_for(rcvbuf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (rcvbuf >> s) > 65_535 {
        s += 1;
    }
    s
}

#[cfg(test)]
#[path = "conn_tests.rs"]
mod tests;
