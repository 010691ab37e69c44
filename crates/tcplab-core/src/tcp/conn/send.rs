//! The send path: which segment goes next (new data under the congestion and peer windows,
//! Nagle and sender SWS avoidance; RFC 6675 NextSeg during SACK recovery; go-back-N after a
//! timeout), retransmission of one segment, the FIN, and zero-window probing.

use crate::net::packet::flags;
use crate::tcp::cc::CongestionControl;
use crate::tcp::config::{CwndLimitedRule, NagleRule, RecoveryKind};
use crate::tcp::timers::TimerKind;
use crate::units::{SimDuration, SimTime};

use super::{Connection, Output, SentRecord, State, TcpEvent, TcpEventKind};

impl Connection {
    /// The retransmission timer expired: resend the SYN (or SYN-ACK) during the handshake,
    /// else let recovery mark the loss and resend from the first segment it names.
    pub(super) fn on_rto(&mut self, now: SimTime, out: &mut Output) {
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
            self.arm_rto(now);
            return;
        }
        self.resend_after_timeout(now, 0, out);
    }

    /// The timeout's state change, then resend from the first sequence number recovery names,
    /// or from `from` when that is later (a forced timeout whose peer is known to hold the
    /// bytes below it), and send what the window then allows.
    pub(super) fn resend_after_timeout(&mut self, now: SimTime, from: u64, out: &mut Output) {
        let Some(first) = self.enter_timeout(now, out) else { return };
        let first = if from > first {
            if !self.use_sack() {
                self.snd_nxt = from.min(self.snd_max); // Go-back-N from there.
            }
            from.min(self.snd_max)
        } else {
            first
        };
        self.retransmit_range(now, first, out);
        self.arm_rto(now);
        self.try_send(now, out);
    }

    pub(super) fn on_persist(&mut self, now: SimTime, out: &mut Output) {
        if self.snd_una != self.snd_max || !self.has_unsent() {
            return;
        }
        if self.sendable_new_bytes() > 0 {
            // A small window that SWS avoidance refused: send what fits (BSD tcp_output force).
            let room = self.sendable_new_bytes();
            self.restart_after_idle(now);
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

    pub(super) fn arm_persist(&mut self, now: SimTime) {
        let base = self.rtt.base_rto(&self.cfg.rto).max(self.cfg.persist_min);
        let d = SimDuration(base.as_ps().saturating_mul(1 << self.persist_backoff.min(16))).min(self.cfg.rto.max);
        self.timers.set(TimerKind::Persist, now + d);
    }

    pub(super) fn has_unsent(&self) -> bool {
        self.snd_nxt < self.stream_end
    }

    /// New bytes the peer's window allows right now.
    pub(super) fn sendable_new_bytes(&self) -> u64 {
        let wnd_end = self.snd_una + self.snd_wnd;
        wnd_end.min(self.stream_end).saturating_sub(self.snd_nxt.max(self.snd_max))
    }

    pub(super) fn try_send(&mut self, now: SimTime, out: &mut Output) {
        if !self.state_sends() {
            return;
        }
        if self.snd_una == self.snd_max && !self.has_unsent() {
            // Nothing outstanding and nothing unsent (a receiver, or an idle sender): no rule
            // can send a segment, only the FIN may be due.
            self.maybe_send_fin(now, out);
            return;
        }
        if self.cfg.cwnd_idle_restart && self.snd_una == self.snd_max && self.next_new_segment(false).1 > 0 {
            self.restart_after_idle(now); // Data is about to go with nothing outstanding.
        }
        let nxt_before = self.snd_nxt.max(self.snd_max);
        if self.recovery.is_none() && self.sb.loss_point().is_none() && self.sb.sacked().is_empty() {
            self.send_open(now, out);
        } else {
            self.send_repairing(now, out);
        }
        if self.cfg.cwnd_limited == CwndLimitedRule::Linux {
            self.cwnd_validate(self.snd_max > nxt_before);
        }
        if self.cfg.cwnd_app_limited_decay && self.snd_max > nxt_before {
            self.validate_unused_window(now); // tcp_write_xmit sent new data.
        }
    }

    /// Linux `tcp_cwnd_validate` after a send attempt (3.16–6.1): the most segments out in
    /// the current window, and whether the attempt left the flight at or above cwnd.
    fn cwnd_validate(&mut self, sent: bool) {
        let mss = self.smss as u64;
        let limited = self.inflight().div_ceil(mss) >= self.cwnd() / mss;
        if !(sent || limited) {
            return;
        }
        let packets_out = self.outstanding().div_ceil(mss);
        if self.snd_una >= self.max_packets_seq || packets_out > self.max_packets_out || limited {
            self.max_packets_out = packets_out;
            self.max_packets_seq = self.snd_max;
            self.is_cwnd_limited = limited;
        }
    }

    /// True when window growth is allowed on the ACK about to be processed: always without
    /// validation; else by the configured rule, from the state before the ACK.
    pub(super) fn cwnd_limited(&self, inflight_before: u64, cwnd_before: u64) -> bool {
        if !self.cfg.cwnd_validation {
            return true;
        }
        match self.cfg.cwnd_limited {
            CwndLimitedRule::Flight => inflight_before + self.smss as u64 > cwnd_before,
            CwndLimitedRule::Linux => self.is_cwnd_limited || (cwnd_before < self.cc.ssthresh() && cwnd_before < 2 * self.max_packets_out * self.smss as u64),
        }
    }

    /// `try_send` while repairing (recovery, a timeout's loss state, or SACKed data out).
    fn send_repairing(&mut self, now: SimTime, out: &mut Output) {
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
        if self.snd_una == self.snd_max
            && self.has_unsent()
            && !self.timers.is_set(TimerKind::Retransmit)
            && !self.timers.is_set(TimerKind::Persist)
            && !self.timers.is_set(TimerKind::Pacing)
        {
            self.arm_persist(now);
        }
    }

    /// `try_send` in the open state (no recovery, no timeout repair, nothing SACKed), where
    /// every rule of `send_one` reduces to new data within the room the window leaves: the
    /// same segments, with the window read once and no repair rules to walk past.
    pub(super) fn send_open(&mut self, now: SimTime, out: &mut Output) {
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
        if self.snd_una == self.snd_max
            && self.has_unsent()
            && !self.timers.is_set(TimerKind::Retransmit)
            && !self.timers.is_set(TimerKind::Persist)
            && !self.timers.is_set(TimerKind::Pacing)
        {
            self.arm_persist(now);
        }
    }

    /// Flight a non-SACK sender may have out with window `cwnd`: RFC 3042 limited transmit
    /// widens it by a segment per duplicate ACK for the first two, outside any repair.
    pub(super) fn non_sack_allowance(&self, cwnd: u64) -> u64 {
        if self.recovery.is_none() && self.sb.loss_point().is_none() && self.cfg.limited_transmit && (1..=2).contains(&self.dupacks) {
            cwnd + self.dupacks as u64 * self.smss as u64
        } else {
            cwnd
        }
    }

    /// Send one segment if the rules allow; returns whether one was sent.
    pub(super) fn send_one(&mut self, now: SimTime, out: &mut Output) -> bool {
        let mss = self.smss as u64;
        let cwnd = self.cwnd();
        if self.use_sack() {
            let pipe = self.pipe();
            if pipe + mss.min(self.pending_len()) > cwnd || pipe >= cwnd {
                return false;
            }
            if self.pacing_holds(now) {
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
            // Rules 3 and 4 are RFC 6675's; Linux 2.6 had rule 3 (forward retransmission up to
            // the highest SACK) but never a rescue; Linux 4.11+ has neither.
            let (rule3, rule4) = match self.recovery_kind {
                RecoveryKind::LinuxSack => (true, false),
                RecoveryKind::LinuxPrr => (false, false),
                _ => (true, true),
            };
            if self.recovery.is_some() && rule3 {
                // Rule 3: an un-SACKed sequence above HighRxt with SACKed data above it.
                let s = self.sb.sacked().next_uncovered(self.sb.high_rxt().max(self.snd_una));
                if self.sb.sacked().max_end().is_some_and(|m| s < m) && s < self.snd_max {
                    self.retransmit_range(now, s, out);
                    return true;
                }
                // Rule 4: once per recovery, retransmit the highest un-SACKed segment (rescue).
                if rule4 && self.sb.rescue_rxt.is_none() {
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
            if flight >= allowance || self.pacing_holds(now) {
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
    pub(super) fn pending_len(&self) -> u64 {
        self.sendable_new_bytes().min(self.smss as u64).max(1)
    }

    /// Send a new-data segment within `room` bytes of congestion window, if the peer window,
    /// Nagle and sender SWS avoidance allow. Returns whether one was sent.
    pub(super) fn send_new(&mut self, now: SimTime, out: &mut Output, room: u64) -> bool {
        self.send_new_inner(now, out, room, false)
    }

    pub(super) fn send_new_forced(&mut self, now: SimTime, out: &mut Output, room: u64) -> bool {
        self.send_new_inner(now, out, room, true)
    }

    /// The next new-data segment as (start, length) if the peer's window, Nagle and sender
    /// SWS avoidance (unless `force`) let it go, whatever the congestion window; length 0
    /// when none may.
    pub(super) fn next_new_segment(&self, force: bool) -> (u64, u64) {
        let mss = self.smss as u64;
        let start = self.snd_nxt.max(self.snd_max);
        let avail = self.stream_end.saturating_sub(start);
        if avail == 0 {
            return (start, 0);
        }
        let wnd_room = (self.snd_una + self.snd_wnd).saturating_sub(start);
        let len = avail.min(mss).min(wnd_room);
        if len > 0 && len < mss && !force {
            // RFC 1122 §4.2.3.4 sender SWS avoidance with Nagle: a short segment goes only if
            // it is all the data and Nagle does not hold it, or the window would allow at
            // least half the peer's largest window.
            let is_all = len == avail;
            let half_window = len >= self.max_snd_wnd / 2 && self.max_snd_wnd > 0;
            let ok = (is_all && !self.nagle_holds(start + len)) || half_window;
            if !ok {
                return (start, 0);
            }
        }
        (start, len)
    }

    /// Whether Nagle's algorithm holds a short segment that is all the data and ends at
    /// `end`, by the configured rule.
    fn nagle_holds(&self, end: u64) -> bool {
        if !self.cfg.nagle || self.snd_max == self.snd_una {
            return false;
        }
        let closing_tail = self.close_requested && end == self.stream_end;
        match self.cfg.nagle_rule {
            NagleRule::Rfc896 => true,
            NagleRule::Bsd => !closing_tail,
            // tcp_minshall_check: snd_sml after snd_una and not after snd_nxt.
            NagleRule::Linux => !closing_tail && self.snd_sml > self.snd_una && self.snd_sml <= self.snd_max,
        }
    }

    pub(super) fn send_new_inner(&mut self, now: SimTime, out: &mut Output, room: u64, force: bool) -> bool {
        let (start, len) = self.next_new_segment(force);
        if len == 0 || len > room || self.pacing_holds(now) {
            return false;
        }
        self.rfc2861.lsndtime = now;
        let mut h = self.base_segment(now, start, len as u32);
        self.ecn_new_data(&mut h);
        if start + len == self.stream_end {
            h.flags |= flags::PSH;
        }
        let rate = self.rate_stamp(now, self.snd_una == self.snd_max);
        self.pacing_sent(now, len);
        self.snd_nxt = start + len;
        self.snd_max = self.snd_max.max(self.snd_nxt);
        if len < self.smss as u64 {
            self.snd_sml = self.snd_nxt;
        }
        self.sent.push_back(SentRecord { end: self.snd_nxt, at: now, retransmitted: false, rate });
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        out.segments.push(h);
        if !self.timers.is_set(TimerKind::Retransmit) {
            self.arm_rto(now);
        }
        self.timers.clear(TimerKind::Persist);
        true
    }

    /// Retransmit one segment starting at `s` (up to SMSS, a SACKed block or snd_max).
    pub(super) fn retransmit_range(&mut self, now: SimTime, s: u64, out: &mut Output) {
        let data_end = self.snd_max.min(self.stream_end);
        if s >= data_end {
            // Only the FIN is outstanding: a retransmission, though not a data segment (it is
            // in `retransmits`, not in `segments_sent`).
            if self.fin_sent && s < self.snd_max {
                let mut h = self.base_segment(now, self.stream_end, 0);
                h.flags |= flags::FIN;
                h.retransmit = true;
                self.stats.retransmits += 1;
                if self.cfg.undo {
                    self.undo_note_retransmit(now);
                }
                out.events.push(TcpEvent { kind: TcpEventKind::Retransmit, seq: self.stream_end });
                out.segments.push(h);
                self.snd_nxt = self.snd_max;
                self.sb.set_high_rxt(self.snd_max);
                self.karn_mark(self.stream_end, self.snd_max);
                if !self.timers.is_set(TimerKind::Retransmit) {
                    self.arm_rto(now);
                }
            }
            return;
        }
        let mut e = (s + self.smss as u64).min(data_end);
        if let Some(next_sacked) = self.sb.sacked().next_start_after(s) {
            e = e.min(next_sacked);
        }
        let len = e - s;
        self.rfc2861.lsndtime = now;
        self.pacing_sent(now, len);
        if self.rate.on {
            self.rate_restamp(now, s, e);
        }
        if self.logs_retransmissions() {
            self.sb.log_rxt(s, e, self.snd_max);
        }
        let mut h = self.base_segment(now, s, len as u32);
        h.retransmit = true;
        if e == self.stream_end {
            // The segment that ends the written data keeps its push flag (Linux resends the
            // same skb, flags and all).
            h.flags |= flags::PSH;
        }
        if self.fin_sent && e == self.stream_end && self.snd_max > self.stream_end {
            h.flags |= flags::FIN;
        }
        self.stats.segments_sent += 1;
        self.stats.bytes_sent += len;
        self.stats.retransmits += 1;
        if self.cfg.undo {
            self.undo_note_retransmit(now);
        }
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
            self.arm_rto(now);
        }
    }

    /// Karn: no RTT sample from anything in `[s, e)`, which is being retransmitted.
    pub(super) fn karn_mark(&mut self, s: u64, e: u64) {
        let i = self.sent.partition_point(|r| r.end <= s);
        for r in self.sent.iter_mut().skip(i) {
            r.retransmitted = true;
            if r.end >= e {
                break;
            }
        }
    }

    pub(super) fn maybe_send_fin(&mut self, now: SimTime, out: &mut Output) {
        if !self.close_requested || self.fin_sent || self.snd_nxt != self.stream_end || self.snd_max != self.stream_end {
            return;
        }
        let mut h = self.base_segment(now, self.stream_end, 0);
        h.flags |= flags::FIN;
        out.segments.push(h);
        self.fin_sent = true;
        self.cc.on_sender_done();
        self.snd_nxt = self.stream_end + 1;
        self.snd_max = self.snd_nxt;
        self.sent.push_back(SentRecord { end: self.snd_nxt, at: now, retransmitted: false, rate: super::rate::RateStamp::default() });
        self.state = match self.state {
            State::Established => State::FinWait1,
            State::CloseWait => State::LastAck,
            st => st,
        };
        if !self.timers.is_set(TimerKind::Retransmit) {
            self.arm_rto(now);
        }
    }
}
