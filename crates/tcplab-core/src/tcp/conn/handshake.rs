//! The handshake: the SYN and SYN-ACK this end sends, what it takes from the peer's (MSS, SACK,
//! timestamps, window scale, ECN), the timestamp clock, and the initial window, receive
//! window and window scale a configuration gives.

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{CongestionControl, Controller};
use crate::tcp::config::{InitialWindowRule, RcvWindowRule, RecoveryKind, TcpConfig};
use crate::units::{SimDuration, SimTime};

use super::{Connection, State, TS_OPTION_BYTES};

impl Connection {
    pub(super) fn syn_segment(&self, now: SimTime, fl: u8) -> TcpHeader {
        let c = &self.cfg;
        let mut h = TcpHeader {
            seq: 0,
            ack: if fl & flags::ACK != 0 { self.rcv_nxt } else { 0 },
            ipv6: c.ipv6,
            flags: fl,
            // The window in a SYN is never scaled (RFC 7323 §2.2).
            window: c.rcvbuf.min(65_535).min(self.rcv_ssthresh),
            // What this end can receive (RFC 6691), whatever the peer announced.
            mss: Some(self.adv_mss.min(65_535) as u16),
            wscale: None,
            sack_permitted: c.sack,
            ..TcpHeader::default()
        };
        // RFC 7323 §2.2: a SYN-ACK carries the option only if the SYN did.
        let answering = self.state == State::Listen || self.state == State::SynReceived;
        h.flags |= self.ecn_syn_flags(answering);
        h.ecn = self.ecn_syn_codepoint(answering);
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

    pub(super) fn accept_syn_options(&mut self, seg: &TcpHeader) {
        if let Some(m) = seg.mss {
            self.cfg.mss = self.cfg.mss.min(m as u32);
        }
        self.sack_ok = self.cfg.sack && seg.sack_permitted;
        self.ts_ok = self.cfg.timestamps && seg.timestamps.is_some();
        if let Some((tsval, _)) = seg.timestamps {
            self.ts_recent = tsval;
        }
        self.peer_wscale = seg.wscale.is_some();
        self.ecn_accept_syn(seg);
        if !(self.cfg.window_scaling && self.peer_wscale) {
            self.rcv_wscale = 0;
        }
        self.smss = payload_room(&self.cfg, self.ts_ok);
        if self.cfg.round_buffers_to_mss {
            // BSD tcp_mss: a send buffer below the MSS makes the MSS its size; otherwise it is
            // rounded up to whole segments, and so is a receive buffer above the MSS.
            if self.cfg.sndbuf < self.smss as u64 {
                self.smss = self.cfg.sndbuf as u32;
            }
            let m = self.smss as u64;
            self.cfg.sndbuf = self.cfg.sndbuf.div_ceil(m) * m;
            if self.cfg.rcvbuf > m {
                self.cfg.rcvbuf = self.cfg.rcvbuf.div_ceil(m) * m;
            }
        }
        self.rcv_mss = self.smss;
        self.rcv_ssthresh = initial_rcv_ssthresh(&self.cfg, self.smss, self.rcv_wscale);
        self.quickacks_left = self.cfg.quickack.min((self.cfg.rcvbuf / (2 * self.smss as u64).max(1)) as u32);
        let sack_kind = matches!(self.recovery_kind, RecoveryKind::Sack | RecoveryKind::LinuxSack | RecoveryKind::LinuxPrr);
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
        for input in &self.inputs {
            self.cc.attach(input);
        }
        if let Some(rng) = &self.cc_rng {
            self.cc.seed(rng.clone());
        }
    }

    /// TSval for `now`: ticks of the timestamp clock, offset by one so that it is never 0
    /// (an echoed 0 is treated as "no timestamp").
    pub(super) fn ts_val(&self, now: SimTime) -> u32 {
        (now.0 / self.cfg.ts_tick.as_ps().max(1)).wrapping_add(1) as u32
    }

    /// RTT sample from an echoed TSecr (RFC 7323 §4.1): (TSval now − TSecr) mod 2³² ticks,
    /// so it holds across the wrap of the 32-bit clock; an echo of 0 or one 2³¹ ticks or more
    /// ahead of or behind the clock (stale or garbage; Linux ignores these too) gives none.
    /// The sample is the whole ticks elapsed plus the time since the current tick began:
    /// `now` minus the start of the tick the segment was stamped in, at least one tick.
    pub(super) fn ts_rtt(&self, now: SimTime, ecr: u32) -> Option<SimDuration> {
        let ticks = self.ts_val(now).wrapping_sub(ecr);
        if ecr == 0 || ticks >= 1 << 31 {
            return None;
        }
        let tick = self.cfg.ts_tick.as_ps().max(1);
        Some(SimDuration(ticks as u64 * tick + now.0 % tick).max(self.cfg.ts_tick))
    }

    pub(super) fn clear_timers(&mut self) {
        self.timers.clear_all();
    }
}

/// Payload bytes per full segment for a configured MSS (timestamps take 12).
pub(super) fn payload_room(cfg: &TcpConfig, ts: bool) -> u32 {
    if ts {
        cfg.mss - TS_OPTION_BYTES
    } else {
        cfg.mss
    }
}

/// Initial window in bytes: configured segments, or by MSS (RFC 5681 §3.1 or Linux 2.6).
pub(super) fn initial_window(cfg: &TcpConfig, smss: u32) -> u64 {
    let three_up_to = match cfg.initial_cwnd_rule {
        InitialWindowRule::Rfc5681 => 2190,
        InitialWindowRule::Linux => 1460,
        // TCP_MAXWIN << TCP_MAX_WINSHIFT: the receiver's window is the only limit.
        InitialWindowRule::BsdLocal if cfg.initial_cwnd == 0 => return 65_535 << 14,
        InitialWindowRule::BsdLocal => 0,
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
pub(super) fn initial_rcv_ssthresh(cfg: &TcpConfig, mss: u32, wscale: u8) -> u64 {
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
pub(super) fn wscale_for(rcvbuf: u64) -> u8 {
    let mut s = 0u8;
    while s < 14 && (rcvbuf >> s) > 65_535 {
        s += 1;
    }
    s
}
