//! Network-wide packet counters: what the hosts handed in, what arrived, what the queues and
//! loss stages dropped (conservation checks).

use serde::Serialize;

use crate::net::egress::Offer;

/// Network-wide packet counters (conservation checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PacketCounters {
    /// Packets handed to the network by hosts.
    pub created: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped by full queues.
    pub queue_drops: u64,
    /// Packets dropped by random loss.
    pub random_drops: u64,
    /// Copies made by emulators that duplicate: created + duplicated = delivered + drops +
    /// packets inside.
    pub duplicated: u64,
}

impl PacketCounters {
    /// Count a packet a pipe refused.
    pub fn count_drop(&mut self, drop: Offer) {
        match drop {
            Offer::QueueDrop => self.queue_drops += 1,
            Offer::RandomDrop => self.random_drops += 1,
            Offer::Accepted => {}
        }
    }
}
