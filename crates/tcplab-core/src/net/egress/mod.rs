//! A pipe's egress: what stands between its loss stage and its propagation stage. A closed
//! set, as the propagation stage is (`net::propagation`):
//!
//! - `Instant`: no transmitter (a rate-unlimited emulator, a host's jitter stage): straight
//!   into propagation;
//! - `Fifo`: one drop-tail FIFO run lazily (`LazyFifo`), the only egress that decides a
//!   packet's end of service the moment it admits it, so its pipe may pass packets on and
//!   feed merges (`net::fabric`);
//! - `Queued`: a queue discipline (`net::discipline`) in front of a transmitter, event by event
//!   (`Served`): strict priority, a watched queue, a tapped pipe, any AQM;
//! - `Cells`: an ATM output port deciding each packet's AAL5 cells (`net::atm_port`).

pub mod fifo;
pub mod served;
pub mod transmitter;

pub use fifo::{FifoCheckpoint, LazyFifo};
pub use served::{Served, Tapped};
pub use transmitter::Transmitter;

use crate::net::atm_port::CellStage;
use crate::net::discipline::QueueStats;
use crate::net::link_layer::LinkLayer;
use crate::net::packet::{End, Packet};
use crate::net::reassembly::Reassembled;
use crate::units::{BitRate, SimTime};

/// Outcome of offering a packet to a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted (queued, in service or in propagation).
    Accepted,
    /// Dropped by the queue (buffer full, or its discipline's rule).
    QueueDrop,
    /// Dropped by the random-loss stage.
    RandomDrop,
}

/// The egress stage of a pipe. The lazy FIFO stays inline (the hot path of every plain
/// link: no pointer to follow per packet); the rest are boxed.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Egress {
    /// No transmitter: straight into propagation.
    Instant,
    /// A lazily run drop-tail FIFO and its transmitter.
    Fifo(LazyFifo),
    /// A queue discipline and its transmitter, event by event.
    Queued(Box<Served>),
    /// An ATM output port.
    Cells(Box<CellPort>),
}

impl Egress {
    /// The queue's counters as of `now`.
    pub fn queue_stats(&self, now: SimTime) -> QueueStats {
        match self {
            Egress::Instant => QueueStats::default(),
            Egress::Fifo(f) => f.stats_at(now),
            Egress::Queued(s) => s.discipline.stats(),
            Egress::Cells(c) => c.stats,
        }
    }

    /// Packets waiting for the transmitter at `now` (the one in service excluded).
    pub fn waiting_packets(&self, now: SimTime) -> u64 {
        match self {
            Egress::Fifo(f) => f.waiting_at(now),
            Egress::Queued(s) => s.discipline.len_packets(),
            Egress::Instant | Egress::Cells(_) => 0,
        }
    }

    /// (Packets, IP bytes) waiting in a queue run event by event (a lazy one reports none).
    pub fn queue_len(&self) -> (u64, u64) {
        match self {
            Egress::Queued(s) => (s.discipline.len_packets(), s.discipline.len_bytes()),
            _ => (0, 0),
        }
    }

    /// Serialization rate, if limited (an ATM port's line rate).
    pub fn rate(&self) -> Option<BitRate> {
        match self {
            Egress::Instant => None,
            Egress::Fifo(f) => Some(f.tx.rate()),
            Egress::Queued(s) => Some(s.tx.rate()),
            Egress::Cells(c) => Some(BitRate(c.stage.line_bps())),
        }
    }

    /// Serialize by the rule of `link` from now on (before the first packet).
    pub fn set_link(&mut self, link: LinkLayer) {
        match self {
            Egress::Fifo(f) => f.tx.set_link(link),
            Egress::Queued(s) => s.tx.set_link(link),
            _ => {}
        }
    }

    /// The ATM port, if this is one.
    pub fn atm_port(&self) -> Option<&CellStage> {
        match self {
            Egress::Cells(c) => Some(&c.stage),
            _ => None,
        }
    }

    /// Tell an ATM port the cell rate of the link that feeds it (`None`: a host, or a link
    /// that delivers packets whole); nothing for another egress.
    pub fn set_atm_input(&mut self, cell_line_bps: Option<u64>) {
        if let Egress::Cells(c) = self {
            c.stage.set_input(cell_line_bps);
        }
    }

    /// (Packets, IP bytes) counted transmitted but not yet serialized by `now`: a lazy FIFO
    /// counts a packet when it admits it.
    pub fn unfinished_at(&self, now: SimTime) -> (u64, u64) {
        match self {
            Egress::Fifo(f) => f.unfinished_at(now),
            _ => (0, 0),
        }
    }

    /// Packets queued or in service (a lazy FIFO's are in propagation from their admission).
    pub fn packets_inside(&self) -> u64 {
        match self {
            Egress::Queued(s) => s.discipline.len_packets() + s.in_service() as u64,
            _ => 0,
        }
    }
}

/// An ATM port as a pipe's egress: the cell stage and the queue counters it keeps per frame.
#[derive(Debug)]
pub struct CellPort {
    /// The port, its cell stage and the host's reassembly.
    pub stage: CellStage,
    /// Frames admitted (`enqueued`, `departed`) and lost (`dropped`).
    pub stats: QueueStats,
}

impl CellPort {
    /// A packet whose last cell arrives `now`: the cells of its frame are decided one by one
    /// and those queued take their line slots; the host this port feeds reassembles the frame
    /// and takes the packet only if it is whole and not merged with one whose end was lost.
    /// Returns the time its last cell leaves, and reports it to a tap at its first cell's.
    pub fn offer(&mut self, now: SimTime, pkt: &Packet, tapped: &mut Tapped) -> Option<SimTime> {
        let fate = self.stage.admit(now, pkt.size);
        let end = (pkt.to == End::Dst) as usize;
        let (Reassembled::Delivered, Some(first), Some(last)) = (self.stage.reassemble(pkt.flow.0 as usize, end, &fate), fate.first_out, fate.last_out) else {
            self.stats.dropped += 1;
            return None;
        };
        self.stats.enqueued += 1;
        self.stats.departed += 1;
        if let Some(v) = tapped.as_mut() {
            v.push((first, *pkt));
        }
        Some(last)
    }
}
