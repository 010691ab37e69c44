//! RFC 2861 (congestion window validation) as Linux 2.4 runs it, read in 2.4.17 and the same
//! in 2.4.20. Two rules, each behind its own key; both shrink a window the sender is not
//! using, where `cwnd_validation` (RFC 7661) only stops such a window from growing.
//!
//! `cwnd_idle_restart` — `tcp_event_data_sent` → `tcp_cwnd_restart` (`tcp_output.c`): when a
//! data segment goes out (new or resent; `tcp_transmit_skb`) with nothing outstanding
//! (`packets_out` = 0) and more than one RTO (`tp->rto`, backoff included) after the last data
//! segment (`lsndtime`), ssthresh becomes `tcp_current_ssthresh` (the larger of ssthresh and
//! ¾ cwnd) and cwnd is halved once per RTO of the idle time, never below the restart window
//! min(`tcp_init_cwnd`, cwnd). 2.4's `tcp_init_cwnd` (`tcp_input.c`) is evaluated then: 2
//! segments above an MSS of 1460, else 3 above 1095 and 4 below, but 2 without an RTT
//! sample or while ssthresh is unset (≥ 0xFFFF segments) and the smoothed RTT above 20 ms,
//! and at most ssthresh. The segment that finds the idle time is itself sent, as Linux sends
//! it before cutting; the cut is made before the send here, which is the same since a segment
//! always fits a window with nothing outstanding. MODEL: times compare exactly, not in
//! jiffies.
//!
//! `cwnd_app_limited_decay` — `tcp_cwnd_validate` (`tcp.h`) after every send attempt that
//! sent new data (`tcp_write_xmit`) and after every application write (`tcp_push` →
//! `__tcp_push_pending_frames`): with cwnd full (`packets_out` ≥ cwnd) the window is in use
//! (`snd_cwnd_used` = 0, `snd_cwnd_stamp` = now); else `snd_cwnd_used` keeps the most
//! segments out, and once the stamp is an RTO old `tcp_cwnd_application_limited`
//! (`tcp_input.c`) runs: in the Open state and with the application not waiting for room in
//! the send buffer (`SOCK_NOSPACE` clear), if max(`snd_cwnd_used`, 2) is below cwnd, ssthresh
//! becomes `tcp_current_ssthresh` and cwnd (cwnd + max(`snd_cwnd_used`, 2))/2; the stamp is
//! renewed either way. Linux renews the stamp wherever it changes or tests the window: on
//! every ACK it may grow it on (`tcp_cong_avoid`: the flight before the ACK at least cwnd), on
//! every ACK of `tcp_fastretrans_alert` (`tcp_moderate_cwnd`, `tcp_cwnd_down`,
//! `tcp_complete_cwr`; `moderate::after_ack`), on entering CWR and on a timeout
//! (`tcp_enter_loss`).
//!
//! "Waiting for room in the send buffer" is Linux's `SOCK_NOSPACE`: `tcp_sendmsg` sets it when
//! it finds the buffer full with data still to copy (`wait_for_sndbuf`), and `tcp_write_space`
//! clears it when an ACK has freed at least half as much as is still queued
//! (`tcp_wspace` ≥ `tcp_min_write_space`), after that ACK's sends. Here a write that the
//! buffer does not take whole, or that fills it, sets it, as does a writer that finds too
//! little room to try (`Connection::note_write_blocked`, for a record that must go whole); an
//! arriving segment that leaves at least half as many bytes free as queued clears it. A bulk
//! sender held by its send buffer therefore never decays its window; one held by its
//! application's pace does. MODEL: the buffer counts payload bytes, not Linux's
//! `wmem_queued` of socket-buffer memory; the sndbuf growth of `tcp_new_space` (which also
//! renews the stamp) is absent, as for a socket whose SO_SNDBUF is set.

use crate::tcp::cc::CongestionControl;
use crate::units::{SimDuration, SimTime};

use super::Connection;

/// The state RFC 2861's rules keep.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rfc2861 {
    /// When the last data segment was sent (Linux `lsndtime`).
    pub lsndtime: SimTime,
    /// When the window was last found in use or changed (Linux `snd_cwnd_stamp`).
    pub stamp: SimTime,
    /// The most segments out while the window was not full (Linux `snd_cwnd_used`).
    pub used: u64,
    /// The application waits for room in the send buffer (Linux `SOCK_NOSPACE`).
    pub nospace: bool,
}

impl Connection {
    /// The connection starts (SYN sent or received): the clocks start.
    pub(super) fn rfc2861_start(&mut self, now: SimTime) {
        self.rfc2861.lsndtime = now;
        self.rfc2861.stamp = now;
    }

    /// Before a send attempt that would send new data with nothing outstanding: the restart
    /// after idle, if due (`tcp_event_data_sent`).
    pub(super) fn restart_after_idle(&mut self, now: SimTime) {
        if !self.cfg.cwnd_idle_restart || self.snd_una != self.snd_max {
            return;
        }
        let rto = self.rto();
        let mut idle = now.since(self.rfc2861.lsndtime);
        if idle <= rto {
            return;
        }
        // tcp_cwnd_restart, in segments.
        let mss = self.smss as u64;
        let cwnd = self.cc.cwnd() / mss;
        let restart = self.restart_window().min(cwnd);
        let ssthresh = self.current_ssthresh();
        if ssthresh != self.cc.ssthresh() {
            self.set_cc_ssthresh(ssthresh);
        }
        let mut w = cwnd;
        while idle > rto && w > restart {
            idle = idle - rto;
            w >>= 1;
        }
        let w = w.max(restart);
        if w < cwnd {
            self.set_cc_cwnd(w * mss);
        }
        self.rfc2861.stamp = now;
        self.rfc2861.used = 0;
    }

    /// Linux 2.4's `tcp_init_cwnd` now, segments: the restart window's bound.
    fn restart_window(&self) -> u64 {
        let mss = self.smss as u64;
        if mss > 1460 {
            return 2;
        }
        let w = if mss > 1095 { 3 } else { 4 };
        let ssthresh = self.cc.ssthresh();
        let ssthresh = if ssthresh == u64::MAX { u64::MAX } else { ssthresh / mss };
        match self.rtt.srtt() {
            None => 2,
            Some(srtt) if ssthresh >= 0xFFFF && srtt > SimDuration::from_millis(20) => 2,
            Some(_) => w.min(ssthresh),
        }
    }

    /// `tcp_cwnd_validate` after a send attempt that sent new data or an application write.
    pub(super) fn validate_unused_window(&mut self, now: SimTime) {
        let mss = self.smss as u64;
        let packets_out = self.outstanding().div_ceil(mss);
        if packets_out >= self.cwnd() / mss {
            self.rfc2861.used = 0;
            self.rfc2861.stamp = now;
            return;
        }
        self.rfc2861.used = self.rfc2861.used.max(packets_out);
        if now.since(self.rfc2861.stamp) >= self.rto() {
            self.application_limited(now);
        }
    }

    /// `tcp_cwnd_application_limited`.
    fn application_limited(&mut self, now: SimTime) {
        if self.linux_ca_state() == 0 && !self.rfc2861.nospace {
            let mss = self.smss as u64;
            let used = self.rfc2861.used.max(2);
            let cwnd = self.cc.cwnd() / mss;
            if used < cwnd {
                let ssthresh = self.current_ssthresh();
                if ssthresh != self.cc.ssthresh() {
                    self.set_cc_ssthresh(ssthresh);
                }
                self.set_cc_cwnd((cwnd + used) / 2 * mss);
            }
            self.rfc2861.used = 0;
        }
        self.rfc2861.stamp = now;
    }

    /// An application write asked for `asked` bytes and the buffer took `took`: the writer
    /// waits for room if it was refused some or filled the buffer; then `tcp_push`'s validation.
    pub(super) fn rfc2861_on_write(&mut self, now: SimTime, asked: u64, took: u64) {
        if took < asked || self.send_space() == 0 {
            self.rfc2861.nospace = true;
        }
        if took > 0 {
            self.validate_unused_window(now);
        }
    }

    /// An arriving segment was processed and its sends made: `tcp_write_space` wakes a writer
    /// waiting for room once at least half as many bytes are free as are queued.
    pub(super) fn rfc2861_after_segment(&mut self) {
        let queued = self.unacked_app_bytes();
        if self.rfc2861.nospace && 2 * self.cfg.sndbuf.saturating_sub(queued) >= queued {
            self.rfc2861.nospace = false;
        }
    }

    /// The application has data to write but too little room in the send buffer to try (a
    /// record that must go whole): Linux's writer would sleep in `tcp_sendmsg` with
    /// `SOCK_NOSPACE` set. Only RFC 2861's application-limited decay reads it.
    pub fn note_write_blocked(&mut self) {
        self.rfc2861.nospace = true;
    }
}
