//! Drop-tail: one FIFO limited in packets or bytes (the packet in service not counted),
//! optionally marking ECN by a threshold (`EcnMarking`).

use std::collections::VecDeque;

use super::{admit_tail, pass_tail, Dropped, EcnMarking, QueueDiscipline, QueueStats};
use crate::net::packet::Packet;
use crate::units::{QueueLimit, SimTime};

/// A drop-tail FIFO.
#[derive(Debug)]
pub struct DropTail {
    fifo: VecDeque<Packet>,
    bytes: u64,
    limit: QueueLimit,
    marking: Option<EcnMarking>,
    stats: QueueStats,
}

impl DropTail {
    /// A FIFO holding at most `limit` waiting, marking by `marking` if given.
    pub fn new(limit: QueueLimit, marking: Option<EcnMarking>) -> Self {
        DropTail { fifo: VecDeque::new(), bytes: 0, limit, marking, stats: QueueStats::default() }
    }
}

impl QueueDiscipline for DropTail {
    fn enqueue(&mut self, _now: SimTime, pkt: Packet) -> Result<(), Dropped> {
        let pkt = admit_tail(self.limit, self.marking, self.fifo.len() as u64, self.bytes, pkt, &mut self.stats)?;
        self.bytes += pkt.size as u64;
        self.fifo.push_back(pkt);
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.fifo.len() as u64);
        self.stats.max_bytes = self.stats.max_bytes.max(self.bytes);
        Ok(())
    }

    fn dequeue(&mut self, _now: SimTime, _dropped: &mut Vec<Dropped>) -> Option<Packet> {
        let p = self.fifo.pop_front()?;
        self.bytes -= p.size as u64;
        self.stats.departed += 1;
        Some(p)
    }

    fn pass(&mut self, _now: SimTime, pkt: Packet) -> Result<Packet, Dropped> {
        pass_tail(self.marking, pkt, &mut self.stats)
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> QueueStats {
        self.stats
    }

    fn as_fifo(&self) -> Option<(QueueLimit, Option<EcnMarking>)> {
        Some((self.limit, self.marking))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(size: u32, seq: u64) -> Packet {
        crate::net::packet::test_udp(0, 0, size, seq)
    }

    #[test]
    fn drop_tail_in_packets_and_bytes() {
        let t = SimTime::ZERO;
        let mut q = DropTail::new(QueueLimit::Packets(2), None);
        assert!(q.enqueue(t, pkt(100, 0)).is_ok());
        assert!(q.enqueue(t, pkt(100, 1)).is_ok());
        let d = q.enqueue(t, pkt(100, 2)).unwrap_err();
        assert_eq!((d.phase, d.reason), (super::super::DropPhase::BeforeEnqueue, super::super::DropReason::Full));
        assert_eq!(q.stats().dropped, 1);
        let mut q = DropTail::new(QueueLimit::Bytes(250), None);
        assert!(q.enqueue(t, pkt(100, 0)).is_ok());
        assert!(q.enqueue(t, pkt(100, 1)).is_ok());
        assert!(q.enqueue(t, pkt(100, 2)).is_err());
        assert_eq!(q.len_bytes(), 200);
        assert_eq!(q.stats().max_packets, 2);
        // A packet larger than the byte limit still goes into service when nothing waits.
        let mut q = DropTail::new(QueueLimit::Bytes(50), None);
        assert!(q.pass(t, pkt(100, 3)).is_ok());
        assert_eq!((q.stats().enqueued, q.stats().departed, q.stats().max_bytes), (1, 1, 100));
    }
}
