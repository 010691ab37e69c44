//! A FIFO that remembers when each packet was queued: the sojourn time CoDel and PIE judge by
//! (the timestamp Linux's `codel` and `pie` qdiscs put in each skb's control block).

use std::collections::VecDeque;

use super::QueueStats;
use crate::net::packet::Packet;
use crate::units::{QueueLimit, SimTime};

/// Packets with their enqueue times, and the bytes they hold.
#[derive(Debug, Default)]
pub struct TimedFifo {
    q: VecDeque<(SimTime, Packet)>,
    bytes: u64,
}

impl TimedFifo {
    /// Queue `pkt` at `now`.
    pub fn push(&mut self, now: SimTime, pkt: Packet) {
        self.bytes += pkt.size as u64;
        self.q.push_back((now, pkt));
    }

    /// The head packet and when it was queued.
    pub fn pop(&mut self) -> Option<(SimTime, Packet)> {
        let (t, p) = self.q.pop_front()?;
        self.bytes -= p.size as u64;
        Some((t, p))
    }

    /// Packets waiting.
    pub fn len(&self) -> u64 {
        self.q.len() as u64
    }

    /// True when nothing waits.
    pub fn is_empty(&self) -> bool {
        self.q.is_empty()
    }

    /// IP bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Count `pkt`'s admission in `stats`, with the occupancy maxima of a queue now holding
    /// `packets` and `bytes`.
    pub fn count_in(stats: &mut QueueStats, packets: u64, bytes: u64) {
        stats.enqueued += 1;
        stats.max_packets = stats.max_packets.max(packets);
        stats.max_bytes = stats.max_bytes.max(bytes);
    }

    /// True if one more packet of `size` bytes fits under `limit`.
    pub fn fits(&self, limit: QueueLimit, size: u32) -> bool {
        super::fits(limit, self.len(), self.bytes, size)
    }
}
