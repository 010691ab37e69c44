//! A queue discipline in front of a transmitter, run event by event: every packet that waits
//! is held by the discipline, and the transmitter asks it for the next when it frees.

use super::occupancy::{Occupancy, OccupancyClock};
use super::transmitter::Transmitter;
use super::Offer;
use crate::net::discipline::{fits, Dropped, QueueDiscipline};
use crate::net::packet::Packet;
use crate::units::SimTime;

/// Packets that began transmission, kept for a tap (`None`: the pipe is not tapped).
pub type Tapped = Option<Vec<(SimTime, Packet)>>;

/// A discipline, its transmitter and the packet in service.
#[derive(Debug)]
pub struct Served {
    /// The queue discipline.
    pub discipline: Box<dyn QueueDiscipline>,
    /// The transmitter.
    pub tx: Transmitter,
    in_service: Option<Packet>,
    /// Drops the discipline made after dequeue, handed to the fabric by `tx_done`.
    dropped: Vec<Dropped>,
    /// The discipline's waiting packets integrated over time.
    occupancy: OccupancyClock,
}

impl Served {
    /// `discipline` in front of `tx`, both idle.
    pub fn new(discipline: Box<dyn QueueDiscipline>, tx: Transmitter) -> Self {
        Served { discipline, tx, in_service: None, dropped: Vec::new(), occupancy: OccupancyClock::default() }
    }

    /// True while a packet is being serialized.
    pub fn in_service(&self) -> bool {
        self.in_service.is_some()
    }

    /// Whether a packet of `size` bytes offered now would be taken, for a drop-tail FIFO
    /// without ECN marking (`offer`'s rule, without offering); `None` for any other discipline.
    pub fn has_room(&self, size: u32) -> Option<bool> {
        let (limit, marking) = self.discipline.as_fifo()?;
        if marking.is_some() {
            return None;
        }
        Some(self.in_service.is_none() || fits(limit, self.discipline.len_packets(), self.discipline.len_bytes(), size))
    }

    /// Offer `pkt` at `now`: queued, or into service at once (its end of service is then
    /// returned in `tx_done`).
    #[inline]
    pub fn offer(&mut self, now: SimTime, pkt: Packet, tx_done: &mut Option<SimTime>, tapped: &mut Tapped) -> Offer {
        if self.in_service.is_some() {
            self.advance(now);
            return match self.discipline.enqueue(now, pkt) {
                Ok(()) => Offer::Accepted,
                Err(_) => Offer::QueueDrop,
            };
        }
        match self.discipline.pass(now, pkt) {
            Ok(pkt) => {
                self.tx.restart_if_idle(now);
                self.start(now, pkt, tx_done, tapped);
                Offer::Accepted
            }
            Err(_) => Offer::QueueDrop,
        }
    }

    /// Count what waited since the last change, before the discipline's length changes.
    #[inline(always)]
    fn advance(&mut self, now: SimTime) {
        self.occupancy.advance(now, self.discipline.len_packets(), self.discipline.len_bytes());
    }

    /// The discipline's waiting packets and bytes integrated from the start up to `now`.
    pub fn occupancy_at(&self, now: SimTime) -> Occupancy {
        self.occupancy.at(now, self.discipline.len_packets(), self.discipline.len_bytes())
    }

    fn start(&mut self, now: SimTime, pkt: Packet, tx_done: &mut Option<SimTime>, tapped: &mut Tapped) {
        if let Some(v) = tapped.as_mut() {
            v.push((now, pkt));
        }
        *tx_done = Some(self.tx.serialize(pkt.size));
        self.in_service = Some(pkt);
    }

    /// The packet in service has been serialized (at its end of service `now`): returns it,
    /// starts the next the discipline gives, and the number of packets the discipline dropped
    /// on the way.
    pub fn tx_done(&mut self, now: SimTime, tx_done: &mut Option<SimTime>, tapped: &mut Tapped) -> (Packet, u32) {
        let pkt = self.in_service.take().expect("tx_done without a packet in service");
        debug_assert_eq!(now, self.tx.tx_end);
        self.dropped.clear();
        self.advance(now);
        if let Some(next) = self.discipline.dequeue(now, &mut self.dropped) {
            self.start(now, next, tx_done, tapped);
        }
        (pkt, self.dropped.len() as u32)
    }
}
