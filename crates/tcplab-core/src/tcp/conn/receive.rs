//! The receive side: in-order and out-of-order data, the peer's FIN, the advertised window
//! (receiver SWS avoidance, Linux window growth), SACK blocks, and when to ACK (delayed ACKs,
//! quick ACKs, immediate ACKs for out-of-order data).

use crate::net::packet::{flags, TcpHeader, MAX_SACK_BLOCKS};
use crate::tcp::config::{RcvWindowRule, TcpConfig};
use crate::tcp::timers::TimerKind;
use crate::units::SimTime;

use super::{Connection, Output, State};

impl Connection {
    pub(super) fn on_data(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        let s = seg.seq;
        let e = seg.seq + seg.len as u64;
        if seg.has(flags::FIN) {
            self.peer_fin = Some(e);
        }
        if seg.len > 0 {
            self.ecn_on_data(now, seg, out);
        }
        let window_end = self.rcv_nxt + self.rcv_window();
        let mut immediate = false;
        if seg.len > 0 && self.dsack.is_some() {
            self.dsack = None; // tcp_data_queue: a new data segment forgets an unsent D-SACK.
        }
        if seg.len > 0 {
            if e <= self.rcv_nxt {
                immediate = true; // Entirely old: a duplicate, ACK at once (RFC 5681 §4.2).
                self.dsack_set(s, e);
            } else if s >= window_end && s > self.rcv_nxt {
                immediate = true; // Beyond the window: drop, ACK with the current window.
            } else {
                let e = e.min(window_end.max(self.rcv_nxt + 1));
                self.rcv_mss = self.rcv_mss.max(seg.len);
                if s <= self.rcv_nxt {
                    let had_ooo = !self.ooo.is_empty();
                    let old = self.rcv_nxt;
                    if self.cfg.dsack {
                        // Partly old (2.4 also enters quick-ACK mode: ACK at once), or running
                        // into held out-of-order data (tcp_ofo_queue).
                        if s < old {
                            self.dsack_set(s, old);
                            immediate |= self.dsack.is_some();
                        }
                        if let Some((a, b)) = self.ooo.first().filter(|&(a, _)| a < e) {
                            self.dsack_extend(a, b.min(e));
                        }
                    }
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
                    if self.cfg.dsack {
                        if let Some((a, b)) = self.held_overlap(s, e) {
                            self.dsack_set(a, b); // A copy of held out-of-order data.
                        }
                    }
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
        if !immediate && seg.len > 0 && self.auto_read && self.cfg.window_update_on_read && self.bsd_window_update_due() {
            immediate = true; // The application's read: tcp_usr_rcvd → tcp_output's update.
        }
        let threshold = (self.cfg.delack_segments.saturating_sub(1)) as u64 * self.rcv_mss as u64;
        if !immediate && seg.len > 0 && self.quickacks_left > 0 {
            self.quickacks_left -= 1; // Linux quick-ACK mode at connection start
            immediate = true;
        }
        if immediate || self.unacked_bytes > threshold || self.cfg.delack_segments <= 1 {
            self.send_ack(now, out);
        } else if !self.timers.is_set(TimerKind::DelayedAck) {
            let d = self.cfg.delack_timeout;
            let at = if self.cfg.timer_ticks {
                self.after_ticks(now, d, d) // BSD 3.2: the next 200 ms fast-timer tick
            } else if let Some(tick) = self.cfg.timer_tick {
                self.after_ticks(now, d, tick) // FreeBSD 4.x: callout_reset(tt_delack, tcp_delacktime)
            } else {
                now + d
            };
            self.timers.set(TimerKind::DelayedAck, at);
        }
    }

    /// 4.4BSD `tcp_output`'s window-update test, run after the application read everything
    /// received (TCP/IP Illustrated Vol. 2 §26.3): the window it could advertise now (free
    /// buffer, at most 65535 scaled) less what the peer already knows (rcv_adv − rcv_nxt) is at
    /// least two segments, or at least half the receive buffer.
    fn bsd_window_update_due(&self) -> bool {
        let held = self.held_bytes();
        let win = self.cfg.rcvbuf.saturating_sub(held).min(65_535u64 << self.rcv_wscale);
        let adv = win.saturating_sub(self.rcv_adv.saturating_sub(self.rcv_nxt));
        adv >= 2 * self.rcv_mss as u64 || 2 * adv >= self.cfg.rcvbuf
    }

    /// Bytes the receive buffer holds: arrived in order but unread, and out of order.
    fn held_bytes(&self) -> u64 {
        (self.data_rcv_nxt() - self.rcv_read.min(self.data_rcv_nxt())) + self.ooo.bytes()
    }

    /// rcv_nxt counted in data bytes (excluding the peer's FIN once received).
    pub(super) fn data_rcv_nxt(&self) -> u64 {
        match self.peer_fin {
            Some(f) if self.rcv_nxt > f => f,
            _ => self.rcv_nxt,
        }
    }

    /// Linux `tcp_grow_window` (net/ipv4/tcp_input.c; 2.6.16 and 4.20+) for an in-order data
    /// segment of `len` payload bytes, called for segments of at least 128 bytes
    /// (`tcp_event_data_recv`): raise `rcv_ssthresh` by 2·advmss, at most to the receive
    /// buffer, when the segment's memory (`rx_truesize`) will fit the buffer in future. True
    /// when it grew (Linux then sets `icsk_ack.quick |= 1`: this segment is ACKed at once).
    /// MODEL: advmss is the negotiated payload MSS; Linux 4.20+ steps by max(2·advmss,
    /// 2·skb->len), the same here since no segment exceeds the MSS (no GRO/LRO).
    pub(super) fn grow_rcv_window(&mut self, len: u32) -> bool {
        if !self.cfg.rcv_window_growth || len < 128 || self.rcv_ssthresh >= self.cfg.rcvbuf {
            return false;
        }
        let grows = rx_truesize_fits(self.rcv_ssthresh, len, &self.cfg);
        if grows {
            self.rcv_ssthresh = (self.rcv_ssthresh + 2 * self.smss as u64).min(self.cfg.rcvbuf);
        }
        grows
    }

    pub(super) fn rcv_window(&self) -> u64 {
        self.rcv_adv.saturating_sub(self.rcv_nxt)
    }

    pub(super) fn update_rcv_adv(&mut self) {
        let held = self.held_bytes();
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

    pub(super) fn state_has_ack(&self) -> bool {
        !matches!(self.state, State::Closed | State::Listen | State::SynSent)
    }

    /// The SACK blocks of an outgoing segment: a D-SACK first if one is due (`dsack`), then
    /// the out-of-order blocks most recently changed first; 3 in all with timestamps, else 4.
    pub(super) fn sack_blocks(&mut self, h: &mut TcpHeader) {
        let dsack = self.take_dsack();
        if !self.sack_ok || (self.ooo.is_empty() && dsack.is_none()) {
            return;
        }
        let max = if self.ts_ok { 3 } else { MAX_SACK_BLOCKS };
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        if let Some(d) = dsack {
            blocks[0] = d;
            n = 1;
        }
        let first_ooo = n;
        for start in self.sack_recent.iter() {
            if n == max {
                break;
            }
            if let Some(r) = self.ooo.range_containing(start) {
                if !blocks[first_ooo..n].contains(&r) {
                    blocks[n] = r;
                    n += 1;
                }
            }
        }
        h.set_sack_blocks(&blocks[..n]);
    }

    pub(super) fn base_segment(&mut self, now: SimTime, seq: u64, len: u32) -> TcpHeader {
        self.update_rcv_adv();
        let mut h = TcpHeader { seq, ack: self.rcv_nxt, len, flags: flags::ACK, window: self.rcv_window(), ipv6: self.cfg.ipv6, ..TcpHeader::default() };
        if self.ts_ok {
            h.timestamps = Some((self.ts_val(now), self.ts_recent));
        }
        self.sack_blocks(&mut h);
        self.ecn_outgoing(&mut h);
        self.last_ack_sent = self.rcv_nxt;
        self.unacked_bytes = 0;
        self.timers.clear(TimerKind::DelayedAck);
        h
    }

    pub(super) fn send_ack(&mut self, now: SimTime, out: &mut Output) {
        let h = self.base_segment(now, self.snd_nxt, 0);
        self.stats.acks_sent += 1;
        out.segments.push(h);
    }
}

/// Linux `tcp_win_from_space`: the part of `space` bytes of buffer memory the window may
/// offer, `space − space >> tcp_adv_win_scale` (`tcp_adv_win_scale` = 2 in 2.6.16; 1 from
/// Linux 3.4, commit b49960a05e32, so in 4.20).
fn win_from_space(space: u64, rule: RcvWindowRule) -> u64 {
    let scale = match rule {
        RcvWindowRule::Linux2616 => 2,
        RcvWindowRule::Linux420 => 1,
    };
    space - (space >> scale)
}

/// Linux `tcp_grow_window`'s check #2 and `__tcp_grow_window` (2.6.16 with the `tcp_rmem[2]`
/// target of J. Heffner's 2005 patch, as in 2.6.18; 4.20 the same): the window grows when the
/// segment's truesize, seen as window, is at most its length; otherwise it grows while
/// `rcv_ssthresh` ≤ ½·win(`tcp_rmem[2]`) / 2^j for the first j at which ½·win(truesize) / 2^j
/// ≤ `len`. With a 16.3 KB buffer per 9 KB segment (Chelsio's in-kernel driver, see p0's
/// EVIDENCE.md §4) that is j = 0: growth, and a quick ACK, while `rcv_ssthresh` ≤ ⅜·tcp_rmem[2].
pub(super) fn rx_truesize_fits(rcv_ssthresh: u64, len: u32, cfg: &TcpConfig) -> bool {
    let len = len as u64;
    if cfg.rx_truesize == 0 || win_from_space(cfg.rx_truesize, cfg.rcv_window_rule) <= len {
        return true;
    }
    if cfg.tcp_rmem_max == 0 {
        return true; // An unbounded target: the fallback loop always finds its step.
    }
    let mut truesize = win_from_space(cfg.rx_truesize, cfg.rcv_window_rule) / 2;
    let mut window = win_from_space(cfg.tcp_rmem_max, cfg.rcv_window_rule) / 2;
    while rcv_ssthresh <= window {
        if truesize <= len {
            return true;
        }
        truesize >>= 1;
        window >>= 1;
    }
    false
}
