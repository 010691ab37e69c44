//! What Linux 2.4 does to the window after an ACK outside fast recovery's rate-halving, and
//! `tcp_moderate_cwnd` (read in 2.4.17 `tcp_input.c`, the same in 2.4.20).
//!
//! `tcp_ack` hands an ACK to `tcp_fastretrans_alert` when it is "dubious"
//! (`tcp_ack_is_dubious`): a duplicate (no data, no window update, nothing newly acknowledged:
//! not `FLAG_NOT_DUP`), one with new SACK information or ECN-Echo (`FLAG_CA_ALERT`), or any ACK
//! while the state is not Open (Disorder: SACKed or duplicate-ACKed data outstanding; CWR;
//! Recovery; Loss). Not with nothing outstanding (`prior_packets` = 0), nor for an old ACK.
//! There, after any growth (`tcp_cong_avoid` runs first):
//! - in CWR: leave it once the ACK passes `high_seq` (`tcp_complete_cwr`), else
//!   `tcp_cwnd_down` (`cwr`);
//! - in Recovery: `tcp_cwnd_down` (`Recovery::RateHalving`, with the ACK in `ack`/`recovery`);
//! - in Loss (a timeout's repair), while it lasts: `tcp_moderate_cwnd` (step F, whenever
//!   `tcp_try_undo_loss` fails — always without `tcp.undo`; see `undo`);
//! - in Open or Disorder, and on the ACK that ends Recovery, Loss or CWR (the state is Open
//!   again by then), unless it starts a recovery: `tcp_try_to_open` → `tcp_moderate_cwnd`.
//!
//! `tcp_moderate_cwnd`: cwnd = min(cwnd, packets in flight + `tcp_max_burst`), 3 segments in
//! 2.4 (`tcp.moderate_cwnd`): a stretch ACK, or one that fills a hole under SACKed data, lets at
//! most that many new segments out at once. `tcp_undo_cwr` moderates too (`undo`); the hold of
//! a Reno (SACK-less) recovery at `high_seq` in `tcp_try_undo_recovery` is not modelled
//! (SACK-less recovery here is NewReno's, not Linux's).
//! In flight is the sender's own count (`Connection::inflight`: the RFC 6675 pipe with SACK,
//! SND.NXT − SND.UNA without).
//!
//! Every path through `tcp_fastretrans_alert` ends by changing or re-setting the window, which
//! renews RFC 2861's stamp (`rfc2861`), as does an ACK that may grow the window.

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::CongestionControl;
use crate::tcp::config::CwrReduction;
use crate::units::SimTime;

use super::Connection;

/// The connection as an ACK found it (its SACK blocks recorded), for `after_ack`.
#[derive(Clone, Copy, Debug)]
pub(super) struct PreAck {
    una: u64,
    outstanding: u64,
    inflight: u64,
    cwnd: u64,
    /// `tcp_ack_is_dubious`.
    dubious: bool,
}

impl Connection {
    /// True when some rule needs `after_ack` (moderation, the CWR state, RFC 2861's stamp).
    pub(super) fn linux_after_ack_rules(&self) -> bool {
        self.cfg.moderate_cwnd > 0 || self.cfg.cwnd_app_limited_decay || self.cfg.cwr_reduction == CwrReduction::RateHalving
    }

    /// The state `after_ack` needs, taken once the ACK's SACK blocks are recorded (Linux tags
    /// SACKs before it reads the flight); `sack_news`: the blocks covered new data.
    pub(super) fn pre_ack(&self, seg: &TcpHeader, sack_news: bool) -> PreAck {
        let duplicate = seg.ack == self.snd_una && seg.len == 0 && !seg.has(flags::SYN | flags::FIN) && seg.window <= self.snd_wnd;
        let ece = self.ecn.negotiated && seg.has(flags::ECE) && !seg.has(flags::SYN);
        PreAck {
            una: self.snd_una,
            outstanding: self.outstanding(),
            inflight: self.inflight(),
            cwnd: self.cwnd(),
            dubious: duplicate || sack_news || ece || self.linux_ca_state() != 0,
        }
    }

    /// After the ACK `seg` was processed (growth, recovery, ECN-Echo), before the sends it
    /// allows: RFC 2861's stamp, the CWR state, moderation.
    pub(super) fn after_ack(&mut self, now: SimTime, seg: &TcpHeader, pre: PreAck) {
        if seg.ack < pre.una || pre.outstanding == 0 {
            return; // tcp_ack: an old ACK, or nothing was outstanding (no_queue).
        }
        let mss = self.smss as u64;
        if self.snd_una > pre.una && pre.inflight.div_ceil(mss) >= pre.cwnd / mss {
            self.rfc2861.stamp = now; // tcp_cong_avoid
        }
        if !pre.dubious {
            return;
        }
        // tcp_fastretrans_alert.
        self.rfc2861.stamp = now;
        if self.cwr_on_ack() || self.recovery.is_some() {
            return; // tcp_cwnd_down ran (CWR here, Recovery with the ACK).
        }
        self.moderate_cwnd();
    }

    /// `tcp_moderate_cwnd`: cwnd at most in flight + `moderate_cwnd` segments.
    fn moderate_cwnd(&mut self) {
        let burst = self.cfg.moderate_cwnd as u64;
        if burst == 0 {
            return;
        }
        let cap = self.inflight() + burst * self.smss as u64;
        if self.cc.cwnd() > cap {
            self.set_cc_cwnd(cap);
        }
    }
}
