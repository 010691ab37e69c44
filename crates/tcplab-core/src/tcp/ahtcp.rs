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
//!   that smaller amount. With nothing held (the first segments of an SRU lost) the client
//!   asks only with `ask_empty`, its number running up to `hold` − 1 bytes past what arrived,
//!   and a server restarting by eq. (1) (`Floor`, `Literal`) rewinds below it (in ns-2, where
//!   bytes are not real, that is what eq. (1) does). A separate switch from the restart point,
//!   valid with the restarts that rewind; the ceiling form reads such a number as a segment the
//!   client has.
//! - *When to ask at all.* Only while an answer is due: the client sent data (a request)
//!   since the hold was last released.
//! - *Restart point.* The paper's eq. (1), snd_nxt = ⌊snd_una/MSS⌋·MSS + 1, assumes every
//!   segment is MSS long and points at the start of the last segment the client already has;
//!   the default `Ceiling` form restarts at the first segment end at or above the request's
//!   number (which is the client's `rcv_nxt` when segments are whole, and never above it: the
//!   client's in-order point is always the end of a segment it received). `Floor` first
//!   resends that already-received segment, then goes on as `Ceiling`; `Literal` computes
//!   eq. (1) on the byte numbers as printed, which after a first SRU of 65,536 bytes (not a
//!   whole number of 1460-byte segments) points inside a segment.
//! - *The forced timeout is a timeout*: backoff, ssthresh and cwnd as the timer would set them.
//! - *What else the server anticipates* (`Align`): by default it reads every ACK as the segment
//!   boundary at or above it, so the hold costs nothing but the requests; `Restart` adjusts
//!   only the restart, as the paper's sentence literally says.

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
    /// The paper's printed eq. (1) read as segments: the start of the segment holding the
    /// request's number, i.e. a segment the client already has, resent before going on as
    /// `Ceiling`.
    Floor,
    /// The paper's eq. (1) computed as printed, snd_nxt = ⌊snd_una/MSS⌋·MSS + 1 over the
    /// connection's byte numbers (data from 1), with snd_una the request's number: after a
    /// first SRU that is not a whole number of segments it points inside a segment; the bytes
    /// from there to `Ceiling` are resent (in segments of at most an MSS), then as `Ceiling`.
    Literal,
}

/// How much of the hold the server anticipates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// Every ACK is read as the first segment boundary at or above its number (what the client
    /// has, when segments are whole): the server's window, flight and fast retransmits see no
    /// hold, and only requests differ from standard TCP.
    All,
    /// Only the restart after a request is adjusted (the paper's words, read literally): the
    /// server's SND.UNA follows the held numbers, so 1000 bytes the client has count as in
    /// flight, and a fast retransmit starts 1000 bytes inside a segment the client has.
    Restart,
}

/// AHTCP's per-connection settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AhtcpConfig {
    /// Bytes held back from every ACK (the paper: 1000, under an MSS of 1460), at least 1.
    pub hold: u32,
    /// The server's restart point.
    pub restart: Restart,
    /// Which ACKs the server reads past the hold.
    pub align: Align,
    /// The client may ask when nothing of the current write is held (the first segments of an
    /// SRU lost): its number then runs up to `hold` − 1 bytes past what arrived, and the server
    /// rewinds below it. Needs a restart that rewinds (`Floor` or `Literal`) and `Align::All`:
    /// read as the first boundary at or above it, such a number acknowledges a segment the
    /// client lacks (the connection would never resend it).
    pub ask_empty: bool,
}

impl Default for AhtcpConfig {
    fn default() -> Self {
        AhtcpConfig { hold: 1000, restart: Restart::Ceiling, align: Align::All, ask_empty: false }
    }
}

/// The receiving end's policy: held ACKs and retransmission requests.
#[derive(Clone, Debug)]
pub struct AhtcpReceiver {
    hold: u64,
    /// Requests may run past what arrived (up to `hold` − 1 bytes) when nothing is held: with
    /// the floor restart the server rewinds below them (the paper's eq. (1) does exactly that).
    allow_empty: bool,
    /// In-order point at which the hold was last released (the end of a complete write); set
    /// by the handshake (the number of the first ACK or SYN-ACK sent: the first data byte).
    released: Option<u64>,
    /// End of the highest segment with PSH seen, in order or not.
    psh_end: u64,
    fin_seen: bool,
    /// The client sent data (a request) since the hold was last released: an answer is due.
    expecting: bool,
    /// The connection's ACK number when the last ACK left, the requests made since it last
    /// moved, and the number the last ACK carried.
    base: u64,
    k: u64,
    last_ack: u64,
    /// Retransmission requests sent.
    pub requests: u64,
}

impl AhtcpReceiver {
    /// The receiving end of a connection with these settings.
    pub fn new(cfg: &AhtcpConfig) -> Self {
        AhtcpReceiver {
            hold: cfg.hold as u64,
            // With the ACKs read literally the server takes the request's number as its
            // SND.UNA and cannot rewind below it, so a number past what arrived would strand
            // those bytes.
            allow_empty: cfg.ask_empty && cfg.align == Align::All,
            released: None,
            psh_end: 0,
            fin_seen: false,
            expecting: false,
            base: 0,
            k: 0,
            last_ack: 0,
            requests: 0,
        }
    }

    /// The number to send in place of the connection's `ack`: held back by up to `hold` bytes
    /// received since the last release, plus the requests made at this `ack`.
    fn value(&mut self, conn: &Connection, ack: u64) -> u64 {
        if self.fin_seen {
            return ack;
        }
        if self.psh_end > 0 && conn.rcv_nxt() >= self.psh_end && self.released.is_some_and(|r| r < self.psh_end) {
            self.released = Some(self.psh_end);
            self.expecting = false;
        }
        let released = *self.released.get_or_insert(ack);
        let held = ack - self.hold.min(ack.saturating_sub(released));
        if ack == self.base {
            held + self.k
        } else {
            held
        }
    }

    /// Rewrite `h`'s ACK number, keeping its window's right edge.
    fn rewrite(&mut self, conn: &Connection, h: &mut TcpHeader) {
        let ack = h.ack;
        let v = self.value(conn, ack);
        if ack != self.base {
            self.k = 0;
            self.base = ack;
        }
        h.window = (h.window + ack).saturating_sub(v);
        h.set_ack_keeping_sack(v);
        self.last_ack = v;
    }

    /// True when a request is possible now: an answer is due and one more byte may be
    /// acknowledged (below what arrived, or, with `allow_empty`, less than `hold` past it).
    pub fn can_request(&mut self, conn: &Connection) -> bool {
        let rcv = conn.rcv_nxt();
        if self.released.is_none() || self.fin_seen || !self.expecting {
            return false;
        }
        let next = self.value(conn, rcv) + 1;
        next <= rcv || (self.allow_empty && next < rcv + self.hold)
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
            if h.len > 0 {
                self.expecting = true; // A request left: its answer is due.
            }
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
        let rcv = conn.rcv_nxt();
        if rcv != self.base {
            self.k = 0;
            self.base = rcv;
        }
        self.k += 1;
        let from = out.segments.len();
        conn.send_ack_now(now, out);
        let h = &mut out.segments[from];
        let v = self.value(conn, h.ack);
        h.window = (h.window + h.ack).saturating_sub(v);
        h.set_ack_keeping_sack(v);
        self.last_ack = v;
        self.requests += 1;
        true
    }
}

/// The sending end's policy: answer a request with a forced timeout from the restart point.
#[derive(Clone, Debug)]
pub struct AhtcpSender {
    restart: Restart,
    align: Align,
    /// The highest ACK number the peer sent, as sent.
    last_ack: u64,
    /// Starts and ends of the data segments sent (originals and retransmissions), from just
    /// below SND.UNA up: the boundaries an ACK may be read up to and a restart may use.
    ends: BTreeSet<u64>,
    /// Requests answered.
    pub requests: u64,
}

impl AhtcpSender {
    /// The sending end of a connection with these settings.
    pub fn new(cfg: &AhtcpConfig) -> Self {
        AhtcpSender { restart: cfg.restart, align: cfg.align, last_ack: 0, ends: BTreeSet::new(), requests: 0 }
    }

    /// True for a retransmission request: a pure ACK one byte above the peer's previous
    /// highest ACK number (`last_ack`), below SND.MAX (so not the ACK of a FIN).
    pub fn is_request(seg: &TcpHeader, last_ack: u64, conn: &Connection) -> bool {
        seg.has(flags::ACK) && seg.flags & (flags::SYN | flags::FIN | flags::RST) == 0 && seg.len == 0 && seg.ack == last_ack + 1 && seg.ack < conn.snd_max()
    }

    /// The first segment boundary at or above `ack` (never above what the peer has: its
    /// in-order point is the end of a segment it received); `ack` itself when none is known.
    fn boundary(&self, ack: u64) -> u64 {
        self.ends.range(ack..).next().copied().unwrap_or(ack)
    }

    /// Forget the boundaries below the last one at or below `una` (SND.UNA, or the peer's
    /// held number when lower: a floor restart needs the boundary below it).
    fn prune(&mut self, una: u64) {
        if let Some(&keep) = self.ends.range(..=una).next_back() {
            while self.ends.first().is_some_and(|&e| e < keep) {
                self.ends.pop_first();
            }
        }
    }
}

impl Variant for AhtcpSender {
    fn name(&self) -> &'static str {
        "ahtcp-sender"
    }

    fn on_arrival(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, out: &mut Output) -> Arrival {
        if !seg.has(flags::ACK) {
            return Arrival::Deliver;
        }
        if seg.has(flags::SYN) {
            self.last_ack = seg.ack; // A SYN-ACK's number: the first byte of the stream.
            return Arrival::Deliver;
        }
        let request = Self::is_request(seg, self.last_ack, conn);
        self.last_ack = self.last_ack.max(seg.ack);
        if !request {
            if self.align == Align::Restart {
                return Arrival::Deliver;
            }
            // Read the ACK past the hold, keeping its window's right edge.
            let b = self.boundary(seg.ack);
            let mut h = *seg;
            h.window = h.window.saturating_sub(b - seg.ack);
            h.set_ack_keeping_sack(b);
            conn.on_segment(now, &h, out);
            self.prune(conn.snd_una().min(self.last_ack));
            return Arrival::Taken;
        }
        self.requests += 1;
        let ack = seg.ack;
        if self.align == Align::Restart {
            conn.on_segment(now, seg, out); // SND.UNA follows the client's number.
        } else {
            conn.note_progress(); // The request acknowledges one more byte.
        }
        let ceiling = self.ends.range(ack..).next().copied().unwrap_or(conn.snd_max());
        match self.restart {
            Restart::Ceiling => {}
            Restart::Floor => {
                if let Some(&start) = self.ends.range(..=ack).next_back() {
                    if start < ceiling {
                        conn.resend_copy(now, start, (ceiling - start) as u32, out);
                    }
                }
            }
            Restart::Literal => {
                let mss = conn.smss().max(1) as u64;
                let mut at = ack / mss * mss + 1;
                while at < ceiling {
                    let len = (ceiling - at).min(mss);
                    conn.resend_copy(now, at, len as u32, out);
                    at += len;
                }
            }
        }
        conn.force_timeout_from(now, ceiling, out);
        self.prune(conn.snd_una().min(self.last_ack));
        Arrival::Taken
    }

    fn actions(&self) -> u64 {
        self.requests
    }

    fn on_departure(&mut self, _now: SimTime, _conn: &Connection, out: &mut Output, from: usize) {
        for h in &out.segments[from..] {
            if h.len > 0 {
                // Starts too: the peer's in-order point is the end of a segment it received
                // or, before any, the first data byte (a segment's start).
                self.ends.insert(h.seq);
                self.ends.insert(h.seq + h.len as u64);
            }
        }
    }
}

#[cfg(test)]
#[path = "ahtcp_tests.rs"]
mod tests;
