//! A pipe is one direction of a link, or one direction of an emulator: an optional random-loss
//! stage, an egress queue, a transmitter that serializes at a rate (or passes instantly), and a
//! propagation stage with a fixed delay.
//!
//! The transmitter computes each departure from the cumulative bits sent since it last went
//! idle (`epoch`), so per-packet rounding to picoseconds never accumulates. The propagation
//! stage is a FIFO (the delay is constant), so a pipe has at most two pending events: the
//! head-of-line departure and the earliest arrival.

use std::collections::VecDeque;

use crate::engine::Rng;
use crate::net::packet::Packet;
use crate::net::queue::Queue;
use crate::units::{BitRate, SimDuration, SimTime};

/// Index of a pipe in the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PipeId(pub u32);

/// Per-pipe counters beyond the queue's.
#[derive(Clone, Copy, Debug, Default)]
pub struct PipeStats {
    /// Packets dropped by the random-loss stage (emulators).
    pub random_drops: u64,
    /// Packets that finished serialization.
    pub transmitted: u64,
    /// IP bytes that finished serialization.
    pub bytes_transmitted: u64,
}

/// What the caller must schedule after an operation on a pipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipeWake {
    /// The transmitter will finish its packet at this time.
    pub tx_done: Option<SimTime>,
    /// The earliest packet in propagation arrives at this time.
    pub arrival: Option<SimTime>,
}

/// Outcome of offering a packet to a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted (queued, in service or in propagation).
    Accepted,
    /// Dropped by the queue (buffer full).
    QueueDrop,
    /// Dropped by the random-loss stage.
    RandomDrop,
}

/// One direction of a link or emulator.
#[derive(Debug)]
pub struct Pipe {
    /// Display name, e.g. `"sw->b"` or `"emu(sw1->sw2)"`.
    pub name: String,
    rate: Option<BitRate>,
    delay: SimDuration,
    loss: f64,
    rng: Rng,
    /// Egress queue in front of the transmitter.
    pub queue: Queue,
    in_service: Option<Packet>,
    epoch_start: SimTime,
    epoch_bits: u64,
    tx_end: SimTime,
    line: VecDeque<(SimTime, Packet)>,
    /// Counters.
    pub stats: PipeStats,
}

impl Pipe {
    /// A pipe with the given rate (`None`: infinitely fast, no queueing), propagation delay,
    /// random-loss probability and its RNG stream, and egress queue.
    pub fn new(name: String, rate: Option<BitRate>, delay: SimDuration, loss: f64, rng: Rng, queue: Queue) -> Self {
        Pipe {
            name,
            rate,
            delay,
            loss,
            rng,
            queue,
            in_service: None,
            epoch_start: SimTime::ZERO,
            epoch_bits: 0,
            tx_end: SimTime::ZERO,
            line: VecDeque::new(),
            stats: PipeStats::default(),
        }
    }

    /// Serialization rate, if limited.
    pub fn rate(&self) -> Option<BitRate> {
        self.rate
    }

    /// Propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// Offer a packet at `now`.
    pub fn offer(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) -> Offer {
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            self.stats.random_drops += 1;
            return Offer::RandomDrop;
        }
        let Some(rate) = self.rate else {
            self.stats.transmitted += 1;
            self.stats.bytes_transmitted += pkt.size as u64;
            self.propagate(now, pkt, wake);
            return Offer::Accepted;
        };
        if self.in_service.is_some() {
            return match self.queue.enqueue(pkt) {
                Ok(()) => Offer::Accepted,
                Err(_) => Offer::QueueDrop,
            };
        }
        // The queue counts every accepted packet, also one that goes straight into service.
        self.queue.stats.enqueued += 1;
        self.queue.stats.departed += 1;
        self.queue.stats.max_packets = self.queue.stats.max_packets.max(1);
        self.queue.stats.max_bytes = self.queue.stats.max_bytes.max(pkt.size as u64);
        if self.tx_end < now {
            // The transmitter was idle: a new epoch of back-to-back transmission starts.
            self.epoch_start = now;
            self.epoch_bits = 0;
        }
        self.start(rate, pkt, wake);
        Offer::Accepted
    }

    fn start(&mut self, rate: BitRate, pkt: Packet, wake: &mut PipeWake) {
        self.epoch_bits += pkt.size as u64 * 8;
        self.tx_end = self.epoch_start + rate.tx_time_bits(self.epoch_bits);
        self.in_service = Some(pkt);
        wake.tx_done = Some(self.tx_end);
    }

    fn propagate(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) {
        let at = now + self.delay;
        if self.line.is_empty() {
            wake.arrival = Some(at);
        }
        self.line.push_back((at, pkt));
    }

    /// The transmitter's packet has been serialized (called at the `tx_done` time): it enters
    /// propagation and the next queued packet starts. Returns the packet that finished (for taps).
    pub fn tx_done(&mut self, now: SimTime, wake: &mut PipeWake) -> Packet {
        let pkt = self.in_service.take().expect("tx_done without a packet in service");
        debug_assert_eq!(now, self.tx_end);
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += pkt.size as u64;
        self.propagate(now, pkt, wake);
        if let Some(next) = self.queue.dequeue() {
            let rate = self.rate.expect("only rate-limited pipes queue");
            self.start(rate, next, wake);
        }
        pkt
    }

    /// The earliest packet in propagation reaches the far end (called at the `arrival` time).
    pub fn arrive(&mut self, now: SimTime, wake: &mut PipeWake) -> Packet {
        let (at, pkt) = self.line.pop_front().expect("arrival without a packet in propagation");
        debug_assert_eq!(at, now);
        if let Some((next, _)) = self.line.front() {
            wake.arrival = Some(*next);
        }
        pkt
    }

    /// Packets inside the pipe: queued, in service, or propagating.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_packets() + self.in_service.is_some() as u64 + self.line.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Body, End, FlowId, RouteId};
    use crate::units::QueueLimit;

    fn pkt(size: u32) -> Packet {
        Packet { flow: FlowId(0), to: End::Dst, route: RouteId(0), hop: 0, class: 0, size, created: SimTime::ZERO, body: Body::Udp { seq: 0, len: size } }
    }

    #[test]
    fn back_to_back_departures_do_not_drift() {
        // 1000 packets of 53 bytes at 149.76 Mb/s: each is 2 831 196.58 ps; per-packet rounding
        // would drift by ~0.4 ns per packet, the cumulative rule keeps the total exact.
        let rate = BitRate(149_760_000);
        let mut p = Pipe::new("p".into(), Some(rate), SimDuration::ZERO, 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Unlimited));
        let mut w = PipeWake::default();
        for _ in 0..1000 {
            p.offer(SimTime::ZERO, pkt(53), &mut w);
        }
        let mut t = w.tx_done.unwrap();
        let mut n = 0;
        loop {
            let mut w = PipeWake::default();
            p.tx_done(t, &mut w);
            n += 1;
            match w.tx_done {
                Some(next) => t = next,
                None => break,
            }
        }
        assert_eq!(n, 1000);
        assert_eq!(t, SimTime::ZERO + rate.tx_time_bits(1000 * 53 * 8));
        assert_eq!(t.0, 2_831_196_582); // ⌈424 000 bits / 149.76 Mb/s⌉ in ps
    }

    #[test]
    fn delay_and_fifo_arrivals() {
        let mut p = Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_millis(1), 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(1)));
        let mut w = PipeWake::default();
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::Accepted);
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::Accepted);
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::QueueDrop);
        let t1 = w.tx_done.unwrap();
        assert_eq!(t1, SimTime(12_000_000));
        let mut w = PipeWake::default();
        p.tx_done(t1, &mut w);
        assert_eq!(w.arrival, Some(SimTime(1_012_000_000)));
        assert_eq!(w.tx_done, Some(SimTime(24_000_000)));
        assert_eq!(p.packets_inside(), 2);
    }

    #[test]
    fn random_loss_rate() {
        let mut p = Pipe::new("e".into(), None, SimDuration::ZERO, 0.1, Rng::from_seed(3), Queue::fifo(QueueLimit::Unlimited));
        let mut w = PipeWake::default();
        let drops = (0..100_000).filter(|_| p.offer(SimTime::ZERO, pkt(100), &mut w) == Offer::RandomDrop).count();
        assert!((9_000..11_000).contains(&drops), "{drops}");
    }
}
