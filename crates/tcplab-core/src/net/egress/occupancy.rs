//! A queue's occupancy integrated over time, for its time-weighted mean (what a sampled
//! queue trace approximates): the packets and IP bytes waiting for the transmitter, the one in
//! service excluded, as `Egress::waiting_packets` counts them.

use crate::units::{SimDuration, SimTime};

/// ∫ waiting packets dt and ∫ waiting bytes dt, in packet·ps and byte·ps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Occupancy {
    /// Packets waiting, integrated over time (packet·ps).
    pub packet_ps: u128,
    /// IP bytes waiting, integrated over time (byte·ps).
    pub byte_ps: u128,
}

impl Occupancy {
    /// Add `packets` and `bytes` waiting for `dt`.
    #[inline(always)]
    pub fn add(&mut self, packets: u64, bytes: u64, dt: SimDuration) {
        self.packet_ps += packets as u128 * dt.as_ps() as u128;
        self.byte_ps += bytes as u128 * dt.as_ps() as u128;
    }

    /// Take back `packets` and `bytes` waiting for `dt` (time counted ahead of `now`).
    #[inline]
    pub fn sub(&mut self, packets: u64, bytes: u64, dt: SimDuration) {
        self.packet_ps -= packets as u128 * dt.as_ps() as u128;
        self.byte_ps -= bytes as u128 * dt.as_ps() as u128;
    }

    /// The time-weighted mean (packets, bytes) over `span` (none over an empty span).
    pub fn mean(&self, span: SimDuration) -> Option<(f64, f64)> {
        let ps = span.as_ps();
        (ps > 0).then(|| (self.packet_ps as f64 / ps as f64, self.byte_ps as f64 / ps as f64))
    }
}

/// An `Occupancy` kept up to date by a queue that knows its length only as it changes: call
/// `advance` with the length before every change.
#[derive(Clone, Copy, Debug, Default)]
pub struct OccupancyClock {
    /// The integral up to `since`.
    pub area: Occupancy,
    /// When the integral was last advanced.
    pub since: SimTime,
}

impl OccupancyClock {
    /// Count `packets` and `bytes` as waiting from the last call up to `now`.
    #[inline(always)]
    pub fn advance(&mut self, now: SimTime, packets: u64, bytes: u64) {
        if now > self.since {
            if packets > 0 {
                self.area.add(packets, bytes, now.since(self.since));
            }
            self.since = now;
        }
    }

    /// The integral up to `now`, the queue holding `packets` and `bytes` since the last change.
    pub fn at(&self, now: SimTime, packets: u64, bytes: u64) -> Occupancy {
        let mut a = self.area;
        if now > self.since {
            a.add(packets, bytes, now.since(self.since));
        }
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000_000;

    #[test]
    fn the_mean_weights_each_length_by_how_long_it_lasted() {
        // 0 for 2 ms, 3 packets (4500 B) for 1 ms, 1 packet (1500 B) for 7 ms: a mean of
        // (3·1 + 1·7) / 10 = 1.0 packet and (4500·1 + 1500·7) / 10 = 1500 B over 10 ms.
        let mut c = OccupancyClock::default();
        c.advance(SimTime(2 * MS), 0, 0);
        c.advance(SimTime(3 * MS), 3, 4500);
        let a = c.at(SimTime(10 * MS), 1, 1500);
        let (p, b) = a.mean(SimDuration(10 * MS)).unwrap();
        assert!((p - 1.0).abs() < 1e-12 && (b - 1500.0).abs() < 1e-9, "{p} {b}");
        assert_eq!(a.mean(SimDuration(0)), None);
        // Advancing twice at one instant adds nothing.
        c.advance(SimTime(3 * MS), 5, 7500);
        assert_eq!(c.at(SimTime(3 * MS), 5, 7500), c.area);
    }
}
