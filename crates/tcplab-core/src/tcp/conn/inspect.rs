//! What a connection shows of itself: its sequence variables, windows, recovery state, buffers
//! and negotiated options (read-only views), and the two socket options it lets change.

use super::*;

impl Connection {
    /// When the pacing gate next lets a segment go (`None` without a pacing rate).
    pub fn pacing_next(&self) -> Option<SimTime> {
        self.cc.pacing_rate().map(|_| self.rate.pacing_next)
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

    /// The peer's advertised window (SND.WND), bytes.
    pub fn snd_wnd(&self) -> u64 {
        self.snd_wnd
    }

    /// Oldest unacknowledged sequence number.
    pub fn snd_una(&self) -> u64 {
        self.snd_una
    }

    /// Next sequence number to send.
    pub fn snd_nxt(&self) -> u64 {
        self.snd_nxt
    }

    /// Highest sequence number sent, plus one.
    pub fn snd_max(&self) -> u64 {
        self.snd_max
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

    /// The congestion state as Linux names it (`tcp_info.tcpi_ca_state`, `TCP_CA_*`): 4 Loss
    /// (repairing after a timeout), 3 Recovery (fast recovery), 2 CWR (the CWR state of
    /// `cwr_reduction = RateHalving`, or a window reduced at once for ECN-Echo and not yet
    /// answered), 1 Disorder (duplicate ACKs or SACKed data outstanding), 0 Open.
    pub fn linux_ca_state(&self) -> u8 {
        if self.sb.loss_point().is_some() {
            4
        } else if self.recovery.is_some() {
            3
        } else if self.cwr.is_some() || (self.ecn.negotiated && self.snd_una <= self.ecn.reduced_until && self.stats.ecn_reductions > 0) {
            2
        } else if self.dupacks > 0 || !self.sb.sacked().is_empty() {
            1
        } else {
            0
        }
    }

    /// Bytes SACKed above SND.UNA (the sender's scoreboard).
    pub fn sacked_bytes(&self) -> u64 {
        self.sb.sacked().bytes()
    }

    /// Bytes deemed lost and not SACKed (RFC 6675 IsLost or FACK; everything outstanding after
    /// a timeout), 0 without SACK recovery.
    pub fn lost_bytes(&self) -> u64 {
        if !self.use_sack() {
            return 0;
        }
        let below = self.lost_below();
        below.saturating_sub(self.snd_una).saturating_sub(self.sb.sacked().covered_in(self.snd_una, below))
    }

    /// The duplicate-ACK threshold in use (Linux `tp->reordering`, which it also raises on
    /// detected reordering; the model keeps it fixed).
    pub fn dupthresh(&self) -> u32 {
        self.cfg.dupthresh
    }

    /// Change the send buffer (`SO_SNDBUF` on an open socket), bytes, at least one segment.
    pub fn set_sndbuf(&mut self, bytes: u64) {
        self.cfg.sndbuf = bytes.max(self.smss as u64);
    }

    /// Turn Nagle's algorithm on or off (`TCP_NODELAY` on an open socket).
    pub fn set_nagle(&mut self, on: bool) {
        self.cfg.nagle = on;
    }

    /// The settings this endpoint runs with (after the handshake: the negotiated MSS and
    /// buffers as rounded).
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }

    /// SACK negotiated.
    pub fn sack_negotiated(&self) -> bool {
        self.sack_ok
    }

    /// ECN negotiated (RFC 3168 §6.1.1).
    pub fn ecn_negotiated(&self) -> bool {
        self.ecn.negotiated
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

    /// Application bytes written so far (the send stream's length).
    pub fn written(&self) -> u64 {
        self.stream_end - 1
    }
}
