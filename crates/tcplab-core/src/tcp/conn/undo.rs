//! Linux 2.4's undo of a window reduction that proves needless (`tcp.undo`; read in 2.4.17
//! `tcp_input.c`, `tcp_output.c` and `tcp_timer.c`, the same functions in 2.4.20).
//!
//! State (`struct tcp_opt`):
//! - `undo_marker`: SND.UNA when the episode began — fast recovery (`tcp_fastretrans_alert`,
//!   entering Recovery) or a timeout (`tcp_enter_loss`, only when nothing outstanding was ever
//!   retransmitted: else none, and that timeout cannot be undone); none = no undo possible;
//! - `undo_retrans`: the episode's retransmissions (`tcp_retransmit_skb` adds one each) less
//!   those D-SACKs showed needless (`tcp_sacktag_write_queue`: one per D-SACK block below the
//!   ACK before it and above the marker, "dumb counting"; one per retransmitted segment a block
//!   above it covers). MODEL: at entering Recovery 2.4 starts from `retrans_out`, the
//!   retransmissions then in flight; here 0 (the model enters a recovery only once the last
//!   one's data is acknowledged, so none are); a block above SND.UNA counts its whole
//!   segments (every such copy was a retransmission here);
//! - `prior_ssthresh`: `tcp_current_ssthresh` (the larger of ssthresh and ¾ cwnd) before the
//!   reduction; 0 when the reduction came from CWR or an ACK carried ECN-Echo (step A of
//!   `tcp_fastretrans_alert`: a reduction the network asked for is never undone);
//! - `retrans_stamp`: the timestamp clock (`ts_tick`) at the episode's first retransmission;
//!   cleared in the Open and Disorder states once no retransmission is outstanding
//!   (`tcp_try_to_open`; here: HighRxt at or below SND.UNA).
//!
//! `tcp_may_undo`: a marker, and `undo_retrans` = 0 or `tcp_packet_delayed` (nothing
//! retransmitted, or the ACK echoes a timestamp older than `retrans_stamp`: it was sent for
//! an original). The undos, each an `undo` trace event:
//! - `tcp_try_undo_recovery`, on the ACK that ends a recovery (or a timeout's repair, step E):
//!   `tcp_undo_cwr(1)`, then `tcp_complete_cwr` (cwnd at most ssthresh);
//! - `tcp_try_undo_partial`, on a partial ACK in rate-halving recovery: `tcp_undo_cwr(0)`
//!   (the window only; the marker stays), then `tcp_cwnd_down`'s cap of in-flight + 1;
//! - `tcp_try_undo_loss`, on any ACK during a timeout's repair: `tcp_undo_cwr(1)` and the
//!   repair ends (nothing more is deemed lost; go-back-N stops);
//! - `tcp_try_undo_dsack`, in the Disorder state a recovery not undone leaves (held until an
//!   ACK passes SND.NXT as it was then, `high_seq`): once `undo_retrans` is 0,
//!   `tcp_undo_cwr(1)`.
//!
//! `tcp_undo_cwr`: cwnd = max(cwnd, 2 × ssthresh) with a `prior_ssthresh` (else max(cwnd,
//! ssthresh)); with `undo` ssthresh = max(ssthresh, `prior_ssthresh`); then `tcp_moderate_cwnd`
//! (in flight + `moderate_cwnd` segments, `tcp_max_burst` = 3 when that is 0). 2.4 keeps no
//! prior cwnd (2.6.x added `prior_cwnd`): twice the reduced ssthresh stands for it.
//! The window is the controller's (`set_cc_cwnd`); a controller's own state (CUBIC's or
//! BIC's W_max, the avoidance counter) is not undone.
//!
//! Not modelled: `tcp_update_reordering` (2.4 raises `tp->reordering`, the dupthresh, on a
//! partial undo and on D-SACKs of SACKed retransmissions, and turns FACK off for the
//! connection; dupthresh is fixed here); the suppressed retransmission after a partial undo
//! (Hoe's); a partial undo in NewReno (SACK-less) recovery; the Reno hold at `high_seq`.

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::CongestionControl;
use crate::units::SimTime;

use super::recovery::Recovery;
use super::{Connection, Output, TcpEvent, TcpEventKind};

/// The undo state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Undo {
    /// `undo_marker`.
    marker: Option<u64>,
    /// `undo_retrans`, segments (negative when D-SACKs outnumber the retransmissions counted).
    retrans: i64,
    /// `prior_ssthresh`, bytes (0: none).
    pub prior_ssthresh: u64,
    /// `retrans_stamp`, timestamp-clock ticks.
    stamp: Option<u32>,
    /// `high_seq` of the Disorder state after a recovery that was not undone, while the
    /// marker waits for D-SACKs.
    disorder_until: Option<u64>,
}

/// The connection as an ACK found it, for `undo_after_ack`.
#[derive(Clone, Copy, Debug)]
pub(super) struct UndoPre {
    una: u64,
    recovery: bool,
    loss: bool,
    fast_retransmits: u64,
}

impl Connection {
    /// The state `undo_after_ack` compares against, taken before the ACK is processed.
    pub(super) fn undo_pre(&self) -> UndoPre {
        UndoPre { una: self.snd_una, recovery: self.recovery.is_some(), loss: self.sb.loss_point().is_some(), fast_retransmits: self.stats.fast_retransmits }
    }

    /// A retransmission went out (`tcp_retransmit_skb`).
    pub(super) fn undo_note_retransmit(&mut self, now: SimTime) {
        self.undo.retrans += 1;
        if self.undo.stamp.is_none() {
            self.undo.stamp = Some(self.ts_val(now));
        }
    }

    /// A D-SACK block `[s, e)` arrived (before the ACK's cumulative part is taken).
    pub(super) fn undo_note_dsack(&mut self, s: u64, e: u64) {
        let Some(m) = self.undo.marker else { return };
        if e <= m {
            return;
        }
        self.undo.retrans -= if e <= self.snd_una { 1 } else { (e - s.max(m)).div_ceil(self.smss as u64).max(1) as i64 };
    }

    /// Fast recovery begins (before the controller's reduction).
    pub(super) fn undo_enter_recovery(&mut self) {
        if !self.cfg.undo {
            return;
        }
        let prior = if self.cwr.is_none() { self.current_ssthresh() } else { 0 };
        self.undo = Undo { marker: Some(self.snd_una), retrans: 0, prior_ssthresh: prior, stamp: self.undo.stamp, disorder_until: None };
    }

    /// A timeout with data outstanding (before its backoff and the controller's reduction):
    /// `tcp_enter_loss`.
    pub(super) fn undo_enter_loss(&mut self) {
        if !self.cfg.undo {
            return;
        }
        if self.cwr.is_some() {
            self.undo.prior_ssthresh = 0;
        } else if self.backoffs == 0 && self.recovery.is_none() {
            self.undo.prior_ssthresh = self.current_ssthresh();
        }
        let retransmitted = self.sb.high_rxt() > self.snd_una;
        self.undo.marker = (!retransmitted).then_some(self.snd_una);
        self.undo.retrans = 0;
        self.undo.disorder_until = None;
    }

    /// `tcp_may_undo` for the ACK `seg`.
    fn may_undo(&self, seg: &TcpHeader) -> bool {
        self.undo.marker.is_some() && (self.undo.retrans <= 0 || self.packet_delayed(seg))
    }

    /// `tcp_packet_delayed`: nothing retransmitted, or `seg` echoes a timestamp older than the
    /// first retransmission.
    fn packet_delayed(&self, seg: &TcpHeader) -> bool {
        let Some(stamp) = self.undo.stamp else { return true };
        match seg.timestamps {
            Some((_, ecr)) if self.ts_ok && ecr != 0 => (ecr.wrapping_sub(stamp) as i32) < 0,
            _ => false,
        }
    }

    /// After the ACK `seg` was processed (its SACK blocks, cumulative part, recovery and
    /// ECN-Echo), before moderation and the sends it allows: try each undo its state allows.
    pub(super) fn undo_after_ack(&mut self, now: SimTime, seg: &TcpHeader, pre: UndoPre, out: &mut Output) {
        if self.ecn.negotiated && seg.has(flags::ECE) {
            self.undo.prior_ssthresh = 0; // Step A: the reduction is required.
        }
        if self.stats.fast_retransmits > pre.fast_retransmits {
            return; // Recovery began on this ACK.
        }
        if pre.recovery {
            if self.recovery.is_none() {
                // tcp_try_undo_recovery, then tcp_complete_cwr.
                if self.may_undo(seg) {
                    self.undo_cwr(now, true, out);
                    let ss = self.cc.ssthresh();
                    if self.cc.cwnd() > ss {
                        self.set_cc_cwnd(ss);
                    }
                    self.undo.marker = None;
                } else if self.undo.marker.is_some() {
                    self.undo.disorder_until = Some(self.snd_max);
                }
            } else if self.snd_una > pre.una && matches!(self.recovery, Some(Recovery::RateHalving { .. })) && self.may_undo(seg) {
                // tcp_try_undo_partial.
                if self.sb.high_rxt() <= self.snd_una {
                    self.undo.stamp = None;
                }
                self.undo_cwr(now, false, out);
            }
        } else if pre.loss {
            if self.may_undo(seg) {
                // tcp_try_undo_loss (or tcp_try_undo_recovery on the ACK that ends the repair).
                self.undo_cwr(now, true, out);
                self.undo.marker = None;
                if self.sb.loss_point().is_some() {
                    self.sb.set_loss_point(None);
                    self.snd_nxt = self.snd_max; // No more go-back-N.
                }
            } else if self.sb.loss_point().is_none() && self.undo.marker.is_some() {
                self.undo.disorder_until = Some(self.snd_max);
            }
        } else if let Some(until) = self.undo.disorder_until {
            if self.undo.marker.is_some() && self.undo.retrans <= 0 && self.cwr.is_none() {
                self.undo_cwr(now, true, out); // tcp_try_undo_dsack.
                self.undo.marker = None;
                self.undo.disorder_until = None;
            } else if self.snd_una > until || (!self.use_sack() && self.snd_una >= until) {
                self.undo.marker = None; // Disorder ends: back to Open.
                self.undo.disorder_until = None;
            }
        }
        if self.recovery.is_none() && self.sb.loss_point().is_none() && self.sb.high_rxt() <= self.snd_una {
            self.undo.stamp = None;
        }
    }

    /// `tcp_undo_cwr`: raise the window (the recovery's, for a partial undo) and, with
    /// `restore`, ssthresh; then moderate.
    fn undo_cwr(&mut self, now: SimTime, restore: bool, out: &mut Output) {
        let mss = self.smss as u64;
        let ss = self.cc.ssthresh();
        let prior = self.undo.prior_ssthresh;
        let mut w = if prior > 0 { self.cwnd().max(ss.saturating_mul(2)) } else { self.cwnd().max(ss) };
        if restore && prior > ss {
            self.set_cc_ssthresh(prior);
        }
        let burst = if self.cfg.moderate_cwnd > 0 { self.cfg.moderate_cwnd } else { 3 } as u64;
        w = w.min(self.inflight() + burst * mss).max(mss);
        match self.recovery {
            Some(Recovery::RateHalving { acks, .. }) => {
                // tcp_cwnd_down runs next in 2.4: at most in flight + 1.
                let cwnd = w.min(self.inflight() + mss).max(mss);
                self.recovery = Some(Recovery::RateHalving { cwnd, acks });
            }
            _ => self.set_cc_cwnd(w),
        }
        self.rfc2861.stamp = now;
        self.stats.undos += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Undo, seq: self.snd_una });
    }
}
