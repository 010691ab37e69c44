//! Egress queues: drop-tail FIFOs limited in packets or bytes, optionally split into
//! strict-priority classes each with its own buffer (class 0 is served first), and optionally
//! marking ECN (RFC 3168) by a threshold on the occupancy a packet finds, as data-centre
//! switches do for DCTCP (RFC 8257 §3.1): an ECN-capable packet that finds at least the
//! threshold waiting is marked CE; a packet that is not ECN-capable is dropped there instead
//! (RFC 3168 §5: the router drops what it would have marked), or let through if told so.

use std::collections::VecDeque;

use crate::net::packet::Packet;
use crate::units::QueueLimit;

/// Counters every queue keeps, always on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Packets accepted into the queue.
    pub enqueued: u64,
    /// Packets refused because the buffer was full (tail drop).
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
}

/// ECN marking by threshold at a queue (or one class of it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EcnMarking {
    /// Mark a packet that finds at least this much waiting (packets or bytes, the one in
    /// service excluded; DCTCP's K).
    pub threshold: QueueLimit,
    /// What happens to a packet that is not ECN-capable at the threshold: dropped (RFC 3168
    /// §5, the default) or let through unmarked (`false`).
    pub drop_unmarkable: bool,
}

/// A marking queue's verdict on a packet its buffer has room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Accepted as it is.
    Plain,
    /// Accepted and to be marked CE.
    Mark,
    /// Dropped at the threshold: not ECN-capable.
    DropUnmarkable,
}

impl EcnMarking {
    /// The verdict for a packet (`capable`: ECN-capable) that finds `packets`/`bytes` waiting.
    #[inline]
    pub fn judge(&self, packets: u64, bytes: u64, capable: bool) -> Admission {
        let reached = match self.threshold {
            QueueLimit::Packets(k) => packets >= k,
            QueueLimit::Bytes(k) => bytes >= k,
            QueueLimit::Unlimited => false,
        };
        match (reached, capable) {
            (false, _) => Admission::Plain,
            (true, true) => Admission::Mark,
            (true, false) if self.drop_unmarkable => Admission::DropUnmarkable,
            (true, false) => Admission::Plain,
        }
    }

    /// Judge `pkt`, finding `packets`/`bytes` waiting, and carry the verdict out: mark it CE,
    /// or count its drop (false: the caller drops it). The one place a queue marks, whether
    /// the queue runs event by event or the pipe runs it lazily.
    #[inline]
    pub fn apply(&self, packets: u64, bytes: u64, pkt: &mut Packet, stats: &mut QueueStats) -> bool {
        match self.judge(packets, bytes, pkt.ecn().capable()) {
            Admission::Plain => true,
            Admission::Mark => {
                pkt.mark_ce();
                stats.marked += 1;
                true
            }
            Admission::DropUnmarkable => {
                stats.dropped += 1;
                stats.unmarkable_dropped += 1;
                false
            }
        }
    }
}

#[derive(Debug)]
struct ClassFifo {
    fifo: VecDeque<Packet>,
    bytes: u64,
    limit: QueueLimit,
    marking: Option<EcnMarking>,
}

impl ClassFifo {
    fn admits(&self, size: u32) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => (self.fifo.len() as u64) < n,
            QueueLimit::Bytes(b) => self.bytes + size as u64 <= b,
            QueueLimit::Unlimited => true,
        }
    }
}

/// A drop-tail queue with one or more strict-priority classes.
#[derive(Debug)]
pub struct Queue {
    classes: Vec<ClassFifo>,
    packets: u64,
    bytes: u64,
    /// Always-on counters.
    pub stats: QueueStats,
}

impl Queue {
    /// A single-class FIFO.
    pub fn fifo(limit: QueueLimit) -> Self {
        Self::classes(&[limit])
    }

    /// Strict-priority classes with per-class limits (index 0 = highest priority). Panics on
    /// an empty list (the scenario layer rejects it).
    pub fn classes(limits: &[QueueLimit]) -> Self {
        assert!(!limits.is_empty(), "a queue needs at least one class");
        Queue {
            classes: limits.iter().map(|&limit| ClassFifo { fifo: VecDeque::new(), bytes: 0, limit, marking: None }).collect(),
            packets: 0,
            bytes: 0,
            stats: QueueStats::default(),
        }
    }

    /// Mark ECN in every class by `marking` (each class judged on its own occupancy).
    pub fn with_marking(mut self, marking: Option<EcnMarking>) -> Self {
        for c in &mut self.classes {
            c.marking = marking;
        }
        self
    }

    /// The ECN marking of a single-class FIFO.
    pub fn single_marking(&self) -> Option<EcnMarking> {
        self.classes[0].marking
    }

    /// Offer a packet. Packets of a class beyond the last go to the last (lowest) class.
    /// Returns the packet back if it was dropped.
    pub fn enqueue(&mut self, mut pkt: Packet) -> Result<(), Packet> {
        let c = (pkt.class as usize).min(self.classes.len() - 1);
        let class = &mut self.classes[c];
        if !class.admits(pkt.size) {
            self.stats.dropped += 1;
            return Err(pkt);
        }
        if let Some(m) = class.marking {
            if !m.apply(class.fifo.len() as u64, class.bytes, &mut pkt, &mut self.stats) {
                return Err(pkt);
            }
        }
        class.bytes += pkt.size as u64;
        self.bytes += pkt.size as u64;
        self.packets += 1;
        class.fifo.push_back(pkt);
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Ok(())
    }

    /// Take the head packet of the highest-priority non-empty class.
    pub fn dequeue(&mut self) -> Option<Packet> {
        for class in &mut self.classes {
            if let Some(p) = class.fifo.pop_front() {
                class.bytes -= p.size as u64;
                self.bytes -= p.size as u64;
                self.packets -= 1;
                self.stats.departed += 1;
                return Some(p);
            }
        }
        None
    }

    /// The limit, if this is a single-class FIFO.
    pub fn single_limit(&self) -> Option<QueueLimit> {
        (self.classes.len() == 1).then(|| self.classes[0].limit)
    }

    /// Packets waiting.
    pub fn len_packets(&self) -> u64 {
        self.packets
    }

    /// Bytes waiting.
    pub fn len_bytes(&self) -> u64 {
        self.bytes
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.packets == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Body;

    fn pkt(class: u8, size: u32, seq: u64) -> Packet {
        crate::net::packet::test_udp(0, class, size, seq)
    }

    #[test]
    fn drop_tail_in_packets_and_bytes() {
        let mut q = Queue::fifo(QueueLimit::Packets(2));
        assert!(q.enqueue(pkt(0, 100, 0)).is_ok());
        assert!(q.enqueue(pkt(0, 100, 1)).is_ok());
        assert!(q.enqueue(pkt(0, 100, 2)).is_err());
        assert_eq!(q.stats.dropped, 1);
        let mut q = Queue::fifo(QueueLimit::Bytes(250));
        assert!(q.enqueue(pkt(0, 100, 0)).is_ok());
        assert!(q.enqueue(pkt(0, 100, 1)).is_ok());
        assert!(q.enqueue(pkt(0, 100, 2)).is_err());
        assert_eq!(q.len_bytes(), 200);
        assert_eq!(q.stats.max_packets, 2);
    }

    #[test]
    fn strict_priority_with_per_class_buffers() {
        let mut q = Queue::classes(&[QueueLimit::Packets(1), QueueLimit::Packets(3)]);
        q.enqueue(pkt(1, 10, 0)).unwrap();
        q.enqueue(pkt(1, 10, 1)).unwrap();
        q.enqueue(pkt(0, 10, 2)).unwrap();
        assert!(q.enqueue(pkt(0, 10, 3)).is_err(), "class 0 buffer holds one");
        q.enqueue(pkt(7, 10, 4)).unwrap(); // beyond the last class: lowest
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue())
            .map(|p| match p.body {
                Body::Udp { seq, .. } => seq,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 0, 1, 4]);
        assert_eq!(q.stats.departed, 4);
        assert!(q.is_empty());
    }
}
