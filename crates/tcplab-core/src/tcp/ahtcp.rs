//! AHTCP, ACK-holding TCP (study 001, Kishimoto et al.): the client holds back part of every
//! acknowledgment so that it can later ask a stalled server for a retransmission by
//! acknowledging one byte more; the server answers such a request by forcing its
//! retransmission timeout and resending from a segment boundary.
//!
//! Two endpoint policies (`Variant`s), one per end of a connection, and the client's
//! throughput monitor (`sim::ahtcp_monitor`) that decides when to ask:
//! - `AhtcpReceiver` (the data's receiving end): every ACK it sends carries
//!   `rcv_nxt − min(hold, bytes received since the last complete write)` plus the requests made
//!   since the point last moved; the advertised window grows by the held bytes, so the right
//!   edge stays where the connection put it. A request is one more pure ACK, one byte higher.
//! - `AhtcpSender` (the data's sending end): an ACK that moves SND.UNA by exactly one byte,
//!   with no payload and data still outstanding above it, is a request. The connection takes it
//!   as an ACK (so SND.UNA follows the client's number), then times out at once and resends
//!   from the restart point.
//!
//! Decisions where the paper is silent (each an assumption, `scenarios/p1_incast/README.md`):
//! - *The end of an SRU.* The hold is released once the segment that ends the sender's write
//!   (the one with PSH) has arrived in order; the ACK then carries the full number, so a server
//!   whose SRU is complete stops its timer and never times out spuriously.
//! - *Nothing to hold.* Before `hold` bytes have arrived since the last release the hold is
//!   that smaller amount; with nothing held (the first segments of an SRU lost) no request is
//!   possible and recovery is left to the retransmission timer.
//! - *Restart point.* The paper's eq. (1), snd_nxt = ⌊snd_una/MSS⌋·MSS + 1, assumes every
//!   segment is MSS long and points at the start of the last segment the client already has;
//!   the default `Ceiling` form restarts at the first segment end at or above the request's
//!   number (which is the client's `rcv_nxt` when segments are whole, and never above it: the
//!   client's in-order point is always the end of a segment it received). `Floor` first
//!   resends that already-received segment, then goes on as `Ceiling`.
//! - *The forced timeout is a timeout*: backoff, ssthresh and cwnd as the timer would set them.

use std::collections::BTreeSet;

use super::conn::{Connection, Output};
use super::endpoint::{Arrival, Variant};
use crate::net::packet::{flags, TcpHeader};
use crate::units::SimTime;

/// Where a server restarts after a retransmission request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Restart {
    /// The first segment boundary at or above the request's number (the first byte the client
    /// lacks when segments are whole).
    Ceiling,
    /// The paper's printed eq. (1): the start of the segment holding the request's number,
    /// i.e. a segment the client already has, resent before going on as `Ceiling`.
    Floor,
}

/// AHTCP's per-connection settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AhtcpConfig {
    /// Bytes held back from every ACK (the paper: 1000, under an MSS of 1460), at least 1.
    pub hold: u32,
    /// The server's restart point.
    pub restart: Restart,
}

impl Default for AhtcpConfig {
    fn default() -> Self {
        AhtcpConfig { hold: 1000, restart: Restart::Ceiling }
    }
}

/// The receiving end's policy: held ACKs and retransmission requests.
#[derive(Clone, Debug)]
pub struct AhtcpReceiver {
    hold: u64,
    /// In-order point at which the hold was last released (the end of a complete write); set
    /// by the handshake (the number of the first ACK or SYN-ACK sent: the first data byte).
    released: Option<u64>,
    /// End of the highest segment with PSH seen, in order or not.
    psh_end: u64,
    fin_seen: bool,
    /// The connection's ACK number when the last ACK left, and the number that ACK carried.
    base: u64,
    last_ack: u64,
    /// Retransmission requests sent.
    pub requests: u64,
}

impl AhtcpReceiver {
    /// The receiving end of a connection with these settings.
    pub fn new(cfg: &AhtcpConfig) -> Self {
        AhtcpReceiver { hold: cfg.hold as u64, released: None, psh_end: 0, fin_seen: false, base: 0, last_ack: 0, requests: 0 }
    }

    /// The number to send in place of the connection's `ack`: held back, plus the requests
    /// made since the connection's number last moved.
    fn held(&mut self, conn: &Connection, ack: u64) -> u64 {
        if self.fin_seen {
            return ack;
        }
        if self.psh_end > 0 && conn.rcv_nxt() >= self.psh_end {
            self.released = Some(self.released.map_or(self.psh_end, |r| r.max(self.psh_end)));
        }
        let released = *self.released.get_or_insert(ack);
        let held = ack - self.hold.min(ack.saturating_sub(released));
        if ack == self.base && held < ack {
            held.max(self.last_ack)
        } else {
            held
        }
    }

    /// Rewrite `h`'s ACK number (and widen its window by what is held).
    fn rewrite(&mut self, conn: &Connection, h: &mut TcpHeader) {
        let ack = h.ack;
        let held = self.held(conn, ack);
        h.window += ack - held;
        h.ack = held;
        self.base = ack;
        self.last_ack = held;
    }

    /// True when a request is possible now (bytes are held and the budget is not spent).
    pub fn can_request(&mut self, conn: &Connection) -> bool {
        let ack = conn.rcv_nxt();
        self.released.is_some() && self.held(conn, ack) < ack
    }
}

impl Variant for AhtcpReceiver {
    fn name(&self) -> &'static str {
        "ahtcp-receiver"
    }

    fn on_arrival(&mut self, _now: SimTime, _conn: &mut Connection, seg: &TcpHeader, _out: &mut Output) -> Arrival {
        if seg.len > 0 && seg.has(flags::PSH) {
            self.psh_end = self.psh_end.max(seg.seq + seg.len as u64);
        }
        if seg.has(flags::FIN) {
            self.fin_seen = true;
        }
        Arrival::Deliver
    }

    fn on_departure(&mut self, _now: SimTime, conn: &Connection, out: &mut Output, from: usize) {
        for h in &mut out.segments[from..] {
            if h.has(flags::SYN | flags::ACK) {
                // A passive opener's SYN-ACK: its number is the first data byte.
                self.released.get_or_insert(h.ack);
            } else if h.has(flags::ACK) && !h.has(flags::SYN) {
                self.rewrite(conn, h);
            }
        }
    }

    fn actions(&self) -> u64 {
        self.requests
    }

    fn on_signal(&mut self, now: SimTime, conn: &mut Connection, out: &mut Output) -> bool {
        if !self.can_request(conn) {
            return false;
        }
        let from = out.segments.len();
        conn.send_ack_now(now, out);
        let h = &mut out.segments[from];
        self.rewrite(conn, h);
        h.ack += 1;
        h.window -= 1;
        self.last_ack = h.ack;
        self.requests += 1;
        true
    }
}

/// The sending end's policy: answer a request with a forced timeout from the restart point.
#[derive(Clone, Debug)]
pub struct AhtcpSender {
    restart: Restart,
    /// Ends of the data segments sent (originals and retransmissions), from just below
    /// SND.UNA up: the boundaries a restart may use.
    ends: BTreeSet<u64>,
    /// Requests answered.
    pub requests: u64,
}

impl AhtcpSender {
    /// The sending end of a connection with these settings.
    pub fn new(cfg: &AhtcpConfig) -> Self {
        AhtcpSender { restart: cfg.restart, ends: BTreeSet::new(), requests: 0 }
    }

    /// True for a retransmission request: a pure ACK one byte above SND.UNA, below SND.MAX
    /// (not the ACK of a FIN).
    pub fn is_request(seg: &TcpHeader, conn: &Connection) -> bool {
        seg.has(flags::ACK) && seg.flags & (flags::SYN | flags::FIN | flags::RST) == 0 && seg.len == 0 && seg.ack == conn.snd_una() + 1 && seg.ack < conn.snd_max()
    }
}

impl Variant for AhtcpSender {
    fn name(&self) -> &'static str {
        "ahtcp-sender"
    }

    fn on_arrival(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, out: &mut Output) -> Arrival {
        if !Self::is_request(seg, conn) {
            return Arrival::Deliver;
        }
        self.requests += 1;
        conn.on_segment(now, seg, out);
        let ack = seg.ack;
        let ceiling = self.ends.range(ack..).next().copied().unwrap_or(conn.snd_max());
        if self.restart == Restart::Floor {
            if let Some(&start) = self.ends.range(..=ack).next_back() {
                if start < ceiling {
                    conn.resend_copy(now, start, (ceiling - start) as u32, out);
                }
            }
        }
        conn.force_timeout_from(now, ceiling, out);
        // Keep the boundaries from the last one at or below SND.UNA.
        if let Some(&keep) = self.ends.range(..=conn.snd_una()).next_back() {
            self.ends = self.ends.split_off(&keep);
        }
        Arrival::Taken
    }

    fn actions(&self) -> u64 {
        self.requests
    }

    fn on_departure(&mut self, _now: SimTime, _conn: &Connection, out: &mut Output, from: usize) {
        for h in &out.segments[from..] {
            if h.len > 0 {
                self.ends.insert(h.seq + h.len as u64);
            }
        }
    }
}

#[cfg(test)]
#[path = "ahtcp_tests.rs"]
mod tests;
