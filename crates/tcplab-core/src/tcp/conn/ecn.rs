//! Explicit Congestion Notification in TCP (RFC 3168 §6.1), and the DCTCP end-host rules that
//! differ from it (RFC 8257 §3.2–3.3; Linux `tcp_dctcp.c`):
//! - negotiation: a SYN carries ECE and CWR, a SYN-ACK answering one carries ECE;
//! - the sender marks new data ECT(0); with a controller that needs ECN (DCTCP) every segment,
//!   retransmissions, pure ACKs and the handshake too, as Linux does (`INET_ECN_xmit` on the
//!   socket), so a switch that drops unmarkable packets at its threshold does not drop them;
//! - a classic receiver sets ECE on every ACK from a CE-marked arrival until a segment with CWR
//!   arrives; a DCTCP receiver echoes exactly the CE state of the data, and when that state
//!   changes while an ACK is delayed it first ACKs what came before with the old state;
//! - the sender reacts to ECE at most once per window of data (not again until the data sent
//!   before the reduction is acknowledged, nor in loss recovery, which has reduced already),
//!   through the controller's `on_ecn_echo`; after any reduction (ECE, fast retransmit,
//!   timeout) its first new data segment carries CWR.
//!
//! The reduction is made as `tcp.cwr_reduction` says (`cwr`): at once to the controller's new
//! value (RFC 3168 §6.1.2's "halve cwnd and reduce ssthresh"), or through Linux 2.4's CWR
//! state, one segment per two ACKs over a round trip (`tcp_cwnd_down`). MODEL: modern Linux
//! brings cwnd down in CWR by PRR (`tcp_cwnd_reduction`), which neither reading is.

use crate::net::packet::{flags, Ecn, TcpHeader};
use crate::tcp::cc::CongestionControl;
use crate::units::SimTime;

use super::{Connection, Output};

/// One connection's ECN state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct EcnState {
    /// Both ends agreed to use ECN.
    pub negotiated: bool,
    /// Receiver (classic): echo ECE until the peer's CWR.
    pub echo: bool,
    /// Receiver (DCTCP): the CE state of the last data segment.
    pub ce_state: bool,
    /// Sender: set CWR on the next new data segment.
    pub cwr_pending: bool,
    /// Sender: no new reduction until SND.UNA passes this (the end of the window reduced for).
    pub reduced_until: u64,
}

impl Connection {
    /// True when this end's controller needs ECN (DCTCP): ECT on every segment and the
    /// receiver's exact echo.
    fn ecn_accurate(&self) -> bool {
        self.cfg.cc.needs_ecn()
    }

    /// The ECN flags of our SYN or SYN-ACK (`answering`: a SYN-ACK to the peer's SYN).
    pub(super) fn ecn_syn_flags(&self, answering: bool) -> u8 {
        match (self.cfg.ecn, answering) {
            (false, _) => 0,
            (true, false) => flags::ECE | flags::CWR,
            (true, true) if self.ecn.negotiated => flags::ECE,
            (true, true) => 0,
        }
    }

    /// The ECN field of our SYN or SYN-ACK (`answering`: a SYN-ACK, sent once the peer's SYN
    /// settled the negotiation): ECT(0) with a controller that needs ECN, as Linux sends
    /// DCTCP's (`tcp_ecn_send_syn`; `tcp_ecn_send_synack` only when ECN was agreed), so that a
    /// port dropping unmarkable packets at its threshold does not drop the handshake (RFC 3168
    /// §6.1.1 has SYNs not ECT; RFC 8311 §4.3 lifts that for experiments); not ECT otherwise.
    pub(super) fn ecn_syn_codepoint(&self, answering: bool) -> Ecn {
        let agreed = if answering { self.ecn.negotiated } else { self.cfg.ecn };
        if agreed && self.ecn_accurate() {
            Ecn::Ect0
        } else {
            Ecn::NotEct
        }
    }

    /// Negotiation, from the peer's SYN or SYN-ACK.
    pub(super) fn ecn_accept_syn(&mut self, seg: &TcpHeader) {
        let offered = if seg.has(flags::ACK) {
            seg.has(flags::ECE) && !seg.has(flags::CWR) // RFC 3168 §6.1.1: an ECN-setup SYN-ACK
        } else {
            seg.has(flags::ECE | flags::CWR) // an ECN-setup SYN
        };
        self.ecn.negotiated = self.cfg.ecn && offered;
    }

    /// Mark an outgoing segment: ECT where every segment carries it (DCTCP), and ECE when the
    /// receiver echoes congestion.
    pub(super) fn ecn_outgoing(&mut self, h: &mut TcpHeader) {
        if !self.ecn.negotiated {
            return;
        }
        if self.ecn_accurate() {
            h.ecn = Ecn::Ect0;
        }
        let echo = if self.ecn_accurate() { self.ecn.ce_state } else { self.ecn.echo };
        if echo {
            h.flags |= flags::ECE;
        }
    }

    /// A segment of data never sent before: ECT(0), and CWR if a reduction is to be announced.
    pub(super) fn ecn_new_data(&mut self, h: &mut TcpHeader) {
        if !self.ecn.negotiated {
            return;
        }
        h.ecn = Ecn::Ect0;
        if self.ecn.cwr_pending {
            h.flags |= flags::CWR;
            self.ecn.cwr_pending = false;
        }
    }

    /// A data segment arrived (before it is processed): record CE, end the echo on CWR, and,
    /// for DCTCP, ACK what came before at once when the CE state changes under a delayed ACK.
    pub(super) fn ecn_on_data(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        if !self.ecn.negotiated {
            return;
        }
        let ce = seg.ecn == Ecn::Ce;
        if ce {
            self.stats.ce_received += 1;
        }
        if self.ecn_accurate() {
            if ce != self.ecn.ce_state {
                if self.last_ack_sent < self.rcv_nxt || self.unacked_bytes > 0 {
                    self.send_ack(now, out); // RFC 8257 §3.2: with the old state.
                }
                self.ecn.ce_state = ce;
            }
        } else {
            if seg.has(flags::CWR) {
                self.ecn.echo = false;
            }
            if ce {
                self.ecn.echo = true;
            }
        }
    }

    /// An ACK arrived: count it for the controller's ECN estimate (DCTCP's α), once per ACK
    /// of new data, `acked` bytes, in packet-timed round `round`.
    pub(super) fn ecn_feedback(&mut self, seg: &TcpHeader, acked: u64) {
        if self.ecn.negotiated && acked > 0 {
            self.cc.on_ecn_feedback(acked, seg.has(flags::ECE), self.round);
        }
    }

    /// The ACK carried ECE: reduce once per window unless loss recovery already has, and send
    /// CWR with the next new data.
    pub(super) fn ecn_on_echo(&mut self, now: SimTime, seg: &TcpHeader) {
        if !self.ecn_echo_reduces(seg) {
            return;
        }
        self.reduce_not_lost(now);
        self.ecn_reduced();
        self.stats.ecn_reductions += 1;
    }

    /// True when `seg` (its ACK field processed) carries an ECN-Echo that reduces the window:
    /// ECN in use, no reduction yet for the window it answers, data outstanding. Such an ACK
    /// grows no window (Linux enters CWR before `tcp_cong_control`, which then reduces).
    pub(super) fn ecn_echo_reduces(&self, seg: &TcpHeader) -> bool {
        if !self.ecn.negotiated || !seg.has(flags::ECE) || seg.has(flags::SYN) {
            return false;
        }
        // An ACK up to and including the window reduced for covers only data sent before the
        // reduction: that window has been answered.
        let reduced = self.recovery.is_some() || self.sb.loss_point().is_some() || self.snd_una <= self.ecn.reduced_until;
        !reduced && self.snd_max != self.snd_una
    }

    /// The window was reduced (ECN-Echo, fast retransmit or timeout): this window is answered,
    /// and the first new data segment carries CWR (RFC 3168 §6.1.2).
    pub(super) fn ecn_reduced(&mut self) {
        self.ecn.reduced_until = self.snd_max;
        self.ecn.cwr_pending = true;
    }
}
