//! Queue disciplines: what a pipe's queue does with the packets waiting for its transmitter.
//!
//! A discipline is offered every packet the transmitter cannot take at once (`enqueue`), hands
//! the next packet to the transmitter when it frees (`dequeue`), and owns its counters. It may
//! drop before a packet is queued (a full buffer, an ECN threshold reached by a packet that
//! cannot be marked) or after (an AQM that drops at the head, as CoDel does); every drop is
//! returned to the pipe with its phase and reason (`Dropped`), and the fabric counts it, as
//! ns-3's queue discs report theirs. The pipe runs a discipline event by event
//! (`net::egress::Served`); a single drop-tail FIFO runs lazily instead (`net::egress::LazyFifo`,
//! identical decisions), which is why a discipline says whether it is one (`as_fifo`).
//!
//! Shipped: `DropTail` (one FIFO limited in packets or bytes, optionally marking ECN by a
//! threshold), `StrictPriority` (drop-tail classes, class 0 served first), and the AQMs
//! `Red` (with gentle and adaptive variants), `Codel` (RFC 8289), `FqCodel` (RFC 8290) and
//! `Pie` (RFC 8033). A new discipline is one file implementing `QueueDiscipline`.

mod codel;
mod drop_tail;
mod ecn;
mod fq_codel;
mod pie;
mod priority;
mod red;
mod timed;

pub use codel::{check_rule as check_codel_rule, control_law, Codel, CodelParams, CodelRule, CodelSpec, CodelState};
pub use drop_tail::DropTail;
pub use ecn::{Admission, EcnMarking};
pub use fq_codel::{check_params as check_fq_codel_params, FqCodel, FqCodelParams, FqCodelSpec};
pub use pie::{check_params as check_pie_params, Pie, PieParams, PieSpec};
pub use priority::StrictPriority;
pub use red::{check_params as check_red_params, Red, RedParams, RedSpec};

use crate::net::packet::Packet;
use crate::units::{QueueLimit, SimTime};

/// Counters every queue keeps, always on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets accepted into the queue (also one that went straight into service).
    pub enqueued: u64,
    /// Packets dropped, before or after queueing (tail drops, unmarkable drops, AQM drops).
    pub dropped: u64,
    /// Packets that left the queue for the transmitter.
    pub departed: u64,
    /// Largest occupancy seen, in packets.
    pub max_packets: u64,
    /// Largest occupancy seen, in bytes.
    pub max_bytes: u64,
    /// Packets marked CE (ECN-capable packets that found the marking threshold reached).
    pub marked: u64,
    /// Packets dropped at the marking threshold because they were not ECN-capable (counted in
    /// `dropped` too).
    pub unmarkable_dropped: u64,
    /// Packets dropped after they were queued, when they reached the head (counted in
    /// `dropped` too).
    pub dropped_after_dequeue: u64,
}

/// When a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropPhase {
    /// On arrival, before it was queued.
    BeforeEnqueue,
    /// After it was queued, on its way to the transmitter.
    AfterDequeue,
}

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DropReason {
    /// The buffer (or the packet's class) was full.
    Full,
    /// The ECN marking threshold was reached and the packet is not ECN-capable.
    Unmarkable,
    /// The discipline's own rule (an AQM's drop decision).
    Policy,
}

/// A packet a discipline dropped.
#[derive(Clone, Copy, Debug)]
pub struct Dropped {
    /// The packet.
    pub pkt: Packet,
    /// Before enqueue or after dequeue.
    pub phase: DropPhase,
    /// Why.
    pub reason: DropReason,
}

impl Dropped {
    /// A drop on arrival.
    pub fn on_arrival(pkt: Packet, reason: DropReason) -> Self {
        Dropped { pkt, phase: DropPhase::BeforeEnqueue, reason }
    }

    /// A drop at the head of the queue.
    pub fn at_head(pkt: Packet, reason: DropReason) -> Self {
        Dropped { pkt, phase: DropPhase::AfterDequeue, reason }
    }
}

/// A queue in front of a transmitter. Work-conserving: whenever the transmitter is free and
/// something waits, `dequeue` is asked for a packet. A drop hands the packet back by value
/// (128 bytes with its phase and reason; disciplines run off the lazy hot path).
#[allow(clippy::result_large_err)]
pub trait QueueDiscipline: std::fmt::Debug + Send {
    /// Offer `pkt` at `now` while the transmitter is busy.
    fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Dropped>;

    /// The next packet for the transmitter at `now`, if any; packets dropped on the way are
    /// pushed onto `dropped`.
    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Dropped>) -> Option<Packet>;

    /// `pkt` arrives at `now` to find the transmitter free and nothing waiting: the packet to
    /// send at once, or its drop. By default it is queued and dequeued.
    fn pass(&mut self, now: SimTime, pkt: Packet) -> Result<Packet, Dropped> {
        self.enqueue(now, pkt)?;
        let mut dropped = Vec::new();
        match self.dequeue(now, &mut dropped) {
            Some(p) => Ok(p),
            None => Err(dropped.pop().expect("a discipline that keeps a packet with the transmitter free is not work-conserving")),
        }
    }

    /// Packets waiting.
    fn len_packets(&self) -> u64;

    /// IP bytes waiting.
    fn len_bytes(&self) -> u64;

    /// The counters.
    fn stats(&self) -> QueueStats;

    /// `Some((limit, marking))` if this is a single drop-tail FIFO, which the pipe may run
    /// lazily with the same decisions (`net::egress::LazyFifo`).
    fn as_fifo(&self) -> Option<(QueueLimit, Option<EcnMarking>)> {
        None
    }
}

/// A drop-tail FIFO's arrival rule (`DropTail`, each class of `StrictPriority`): a packet
/// finding `packets`/`bytes` waiting is refused when `limit` is reached, else judged by
/// `marking` (marked CE, or dropped if it cannot be marked); drops are counted in `stats`.
#[allow(clippy::result_large_err)] // as `QueueDiscipline`: the packet comes back by value
pub(crate) fn admit_tail(limit: QueueLimit, marking: Option<EcnMarking>, packets: u64, bytes: u64, mut pkt: Packet, stats: &mut QueueStats) -> Result<Packet, Dropped> {
    if !fits(limit, packets, bytes, pkt.size) {
        stats.dropped += 1;
        return Err(Dropped::on_arrival(pkt, DropReason::Full));
    }
    match marking {
        Some(m) if !m.apply(packets, bytes, &mut pkt, stats) => Err(Dropped::on_arrival(pkt, DropReason::Unmarkable)),
        _ => Ok(pkt),
    }
}

/// A drop-tail FIFO's packet that finds the transmitter free and nothing waiting: into
/// service whatever the limit (it counts what waits), judged for marking on an empty queue,
/// and counted as queued and departed (an occupancy of one packet).
#[allow(clippy::result_large_err)]
pub(crate) fn pass_tail(marking: Option<EcnMarking>, mut pkt: Packet, stats: &mut QueueStats) -> Result<Packet, Dropped> {
    if let Some(m) = marking {
        if !m.apply(0, 0, &mut pkt, stats) {
            return Err(Dropped::on_arrival(pkt, DropReason::Unmarkable));
        }
    }
    stats.enqueued += 1;
    stats.departed += 1;
    stats.max_packets = stats.max_packets.max(1);
    stats.max_bytes = stats.max_bytes.max(pkt.size as u64);
    Ok(pkt)
}

/// True if a FIFO holding `packets`/`bytes` has room for `size` more bytes under `limit`.
#[inline(always)]
pub fn fits(limit: QueueLimit, packets: u64, bytes: u64, size: u32) -> bool {
    match limit {
        QueueLimit::Packets(n) => packets < n,
        QueueLimit::Bytes(b) => bytes + size as u64 <= b,
        QueueLimit::Unlimited => true,
    }
}
