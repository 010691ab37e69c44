//! Strict priority: drop-tail classes, each with its own buffer and ECN marking; class 0 is
//! served first, and a packet of a class beyond the last goes to the last (lowest).

use std::collections::VecDeque;

use super::{admit_tail, pass_tail, Dropped, EcnMarking, QueueDiscipline, QueueStats};
use crate::net::packet::Packet;
use crate::units::{QueueLimit, SimTime};

#[derive(Debug)]
struct Class {
    fifo: VecDeque<Packet>,
    bytes: u64,
    limit: QueueLimit,
}

/// Strict-priority drop-tail classes.
#[derive(Debug)]
pub struct StrictPriority {
    classes: Vec<Class>,
    marking: Option<EcnMarking>,
    packets: u64,
    bytes: u64,
    stats: QueueStats,
}

impl StrictPriority {
    /// Classes with per-class limits (index 0 = highest priority), each marking by `marking`
    /// on its own occupancy. Panics on an empty list (the scenario layer refuses it).
    pub fn new(limits: &[QueueLimit], marking: Option<EcnMarking>) -> Self {
        assert!(!limits.is_empty(), "a queue needs at least one class");
        let classes = limits.iter().map(|&limit| Class { fifo: VecDeque::new(), bytes: 0, limit }).collect();
        StrictPriority { classes, marking, packets: 0, bytes: 0, stats: QueueStats::default() }
    }
}

impl QueueDiscipline for StrictPriority {
    fn enqueue(&mut self, _now: SimTime, pkt: Packet) -> Result<(), Dropped> {
        let c = (pkt.class as usize).min(self.classes.len() - 1);
        let class = &mut self.classes[c];
        let pkt = admit_tail(class.limit, self.marking, class.fifo.len() as u64, class.bytes, pkt, &mut self.stats)?;
        class.bytes += pkt.size as u64;
        class.fifo.push_back(pkt);
        self.bytes += pkt.size as u64;
        self.packets += 1;
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.packets);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Ok(())
    }

    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<Dropped>) -> Option<Packet> {
        let class = self.classes.iter_mut().find(|c| !c.fifo.is_empty())?;
        let p = class.fifo.pop_front().expect("found non-empty");
        class.bytes -= p.size as u64;
        self.bytes -= p.size as u64;
        self.packets -= 1;
        self.stats.departed += 1;
        Some(p)
    }

    fn pass(&mut self, _now: SimTime, pkt: Packet) -> Result<Packet, Dropped> {
        pass_tail(self.marking, pkt, &mut self.stats)
    }

    fn len_packets(&self) -> u64 {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> QueueStats {
        self.stats
    }

    fn as_fifo(&self) -> Option<(QueueLimit, Option<EcnMarking>)> {
        (self.classes.len() == 1).then(|| (self.classes[0].limit, self.marking))
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
    fn strict_priority_with_per_class_buffers() {
        let t = SimTime::ZERO;
        let mut q = StrictPriority::new(&[QueueLimit::Packets(1), QueueLimit::Packets(3)], None);
        q.enqueue(t, pkt(1, 10, 0)).unwrap();
        q.enqueue(t, pkt(1, 10, 1)).unwrap();
        q.enqueue(t, pkt(0, 10, 2)).unwrap();
        assert!(q.enqueue(t, pkt(0, 10, 3)).is_err(), "class 0 buffer holds one");
        q.enqueue(t, pkt(7, 10, 4)).unwrap(); // beyond the last class: lowest
        let mut none = Vec::new();
        let order: Vec<u64> = std::iter::from_fn(|| q.dequeue(t, &mut none))
            .map(|p| match p.body {
                Body::Udp { seq, .. } => seq,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(order, vec![2, 0, 1, 4]);
        assert_eq!(q.stats().departed, 4);
        assert_eq!(q.len_packets(), 0);
        assert!(none.is_empty());
    }
}
