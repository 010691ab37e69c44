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

pub mod cells;
pub mod fifo;
pub mod occupancy;
pub mod served;
pub mod transmitter;

pub use cells::{CellPort, CellStage};
pub use fifo::{FifoCheckpoint, LazyFifo};
pub use occupancy::Occupancy;
pub use served::{Served, Tapped};
pub use transmitter::Transmitter;

use crate::net::discipline::QueueStats;
use crate::net::link_layer::LinkLayer;
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

    /// The waiting packets and bytes (the one in service excluded) integrated from the start
    /// up to `now`; `None` for an egress without a packet queue (`Instant`, an ATM port).
    pub fn occupancy(&self, now: SimTime) -> Option<Occupancy> {
        match self {
            Egress::Fifo(f) => Some(f.occupancy_at(now)),
            Egress::Queued(s) => Some(s.occupancy_at(now)),
            Egress::Instant | Egress::Cells(_) => None,
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
