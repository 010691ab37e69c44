//! The canonical order of events: time first, then, for events at the very same picosecond, a
//! key that depends only on the model — never on which optimisation path scheduled an event,
//! when it was scheduled, or whether anything observes the run.
//!
//! A key is `time << 64 | tie`, with `tie = rank << 60 | scramble << 32 | id`:
//! - **rank** (4 bits): the kind of event, in the fixed order of [`Rank`]. Departures come
//!   before arrivals, so a packet arriving at a port at the instant another finishes
//!   serializing finds the queue the lazy pipe computes (service that starts at `t` has left
//!   the queue at `t`). Arrivals come before the hosts' own events (starts, timers), so a
//!   timer due at the instant a segment arrives sees that segment; samples and coordinators
//!   come last and see everything that happened at their instant.
//! - **scramble** (28 bits): a hash of the run's salt (derived from the seed), the time, the
//!   rank and the id. Among equal-rank events at one instant it orders the sources (pipes,
//!   flows) by a permutation that is fresh at every instant and every seed, so no source wins
//!   every tie by its index in the scenario (a symmetric dumbbell would otherwise hand its
//!   first-listed flow every simultaneous arrival at the bottleneck).
//! - **id** (32 bits): the source itself (a pipe, a flow's endpoint, a merge…), which makes
//!   keys unique: a source has at most one pending event of a kind at an instant (the only
//!   exceptions are stale copies — a superseded timer, a harmonizer's spent arrival — whose
//!   order does not matter since they do nothing).
//!
//! Because the key is a pure function of (time, kind, source, seed), the same model run with or
//! without taps and traces, with packets passed on or merged, or hop by hop, processes the
//! events that exist in every mode in one and the same order.

use crate::units::SimTime;

/// The kinds of events in their order at equal times (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
#[repr(u8)]
pub enum Rank {
    /// A transmitter finishes a packet (event-driven pipes).
    TxDone = 0,
    /// A packet reaches the far end of a pipe.
    Arrive = 1,
    /// A merge admits the packets it holds (its effects come strictly later; any rank works).
    Flush = 2,
    /// A flow starts.
    Start = 3,
    /// A constant-bit-rate source sends.
    Cbr = 4,
    /// An application stops writing.
    AppStop = 5,
    /// A TCP endpoint's timer.
    Timer = 6,
    /// A throughput sample.
    Sample = 7,
    /// A stream coordinator acts.
    Coordinate = 8,
    /// A client's throughput monitor samples (AHTCP), after everything else at its instant.
    Monitor = 9,
}

/// Position of an event in the canonical order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Key(pub u128);

impl Key {
    /// Larger than every key an event can have (an empty heap's minimum).
    pub const NONE: Key = Key(u128::MAX);

    /// The key of an event at `time` with tie-break `tie`.
    #[inline(always)]
    pub fn new(time: SimTime, tie: u64) -> Key {
        Key((time.0 as u128) << 64 | tie as u128)
    }

    /// The event's time.
    #[inline(always)]
    pub fn time(self) -> SimTime {
        SimTime((self.0 >> 64) as u64)
    }

    /// The tie-break half.
    pub fn tie(self) -> u64 {
        self.0 as u64
    }
}

/// Computes the keys of one run (the salt comes from the seed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Order {
    salt: u64,
}

impl Order {
    /// The order of a run whose tie-break permutations derive from `salt`.
    pub fn new(salt: u64) -> Self {
        Order { salt }
    }

    /// The key of an event of kind `rank` from source `id` at `time`.
    #[inline(always)]
    pub fn key(&self, time: SimTime, rank: Rank, id: u32) -> Key {
        Key::new(time, self.tie(time, rank, id))
    }

    /// The tie-break half of `key`.
    #[inline(always)]
    pub fn tie(&self, time: SimTime, rank: Rank, id: u32) -> u64 {
        // Two multiplications: the top bits of a product depend on every bit of its inputs,
        // and only the top 28 are kept.
        let a = (time.0 ^ self.salt).wrapping_mul(0x9e37_79b9_7f4a_7c15);
        let x = (a ^ ((id as u64) << 8 | rank as u64).wrapping_mul(0xc2b2_ae3d_27d4_eb4f)).wrapping_mul(0x1656_67b1_9e37_79f9);
        (rank as u64) << 60 | (x >> 36) << 32 | id as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_orders_kinds_before_scramble_and_id() {
        let o = Order::new(7);
        let t = SimTime(1_000);
        for id in 0..200 {
            assert!(o.key(t, Rank::TxDone, id) < o.key(t, Rank::Arrive, 0));
            assert!(o.key(t, Rank::Arrive, id) < o.key(t, Rank::Timer, 0));
            assert!(o.key(t, Rank::Coordinate, id) < o.key(SimTime(1_001), Rank::TxDone, 0), "time first");
            assert_eq!(o.key(t, Rank::Timer, id).tie() & 0xffff_ffff, id as u64, "the id is kept");
            assert_eq!(o.key(t, Rank::Timer, id).time(), t);
        }
    }

    /// Among sources of one kind at one instant, who goes first is not their index: over many
    /// instants each of 4 sources comes first about a quarter of the time, and which one does
    /// changes with the salt.
    #[test]
    fn ties_between_sources_are_not_ordered_by_index() {
        for salt in [0u64, 1, 0xdead_beef] {
            let o = Order::new(salt);
            let mut first = [0u32; 4];
            for k in 0..4000u64 {
                let t = SimTime(k * 12_000_000);
                let winner = (0..4u32).min_by_key(|&id| o.key(t, Rank::Arrive, id)).unwrap();
                first[winner as usize] += 1;
            }
            assert!(first.iter().all(|&n| (850..1150).contains(&n)), "salt {salt}: {first:?}");
        }
        let t = SimTime(5_000_000);
        let perms: std::collections::BTreeSet<Vec<u32>> = (0..64u64)
            .map(|salt| {
                let o = Order::new(salt);
                let mut ids: Vec<u32> = (0..4).collect();
                ids.sort_by_key(|&id| o.key(t, Rank::Arrive, id));
                ids
            })
            .collect();
        assert!(perms.len() > 10, "the salt changes the permutation: {}", perms.len());
    }
}
