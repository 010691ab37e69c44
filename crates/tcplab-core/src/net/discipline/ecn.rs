//! ECN marking by a threshold on the occupancy a packet finds (RFC 3168; DCTCP's K, RFC 8257
//! §3.1): an ECN-capable packet that finds at least the threshold waiting is marked CE; one
//! that is not ECN-capable is dropped there instead (RFC 3168 §5: the router drops what it
//! would have marked), or let through if told so.

use super::QueueStats;
use crate::net::packet::Packet;
use crate::units::QueueLimit;

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
