//! A merge holds the packets on their way to one pipe that several pipes feed (a switch port
//! shared by many senders), so that they can be admitted in time order in batches instead of
//! with one arrival event each.
//!
//! The simulation uses a merge only where it is exact (see `Simulation::plan_pass_on`): every
//! packet bound for the pipe is registered, with its arrival time, when it leaves its host,
//! at least `lead` before it arrives. So at time `g` every arrival earlier than `g + lead` is
//! known, and those can be admitted at once, in the canonical order (`engine::order`) of the
//! arrival events of their feeders: by arrival time and, for equal times, as the feeders'
//! arrival events would pop in a run with an event per hop. Each feeding pipe is a FIFO, so
//! the packets from one feeder arrive in registration order: a merge keeps one FIFO per feeder
//! and a small heap of their heads.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::engine::order::{Key, Order, Rank};
use crate::net::packet::Packet;
use crate::net::pipe::PipeId;
use crate::units::{SimDuration, SimTime};

/// Packets registered for a merged pipe and not yet admitted to it.
#[derive(Debug)]
pub struct Merge {
    /// The pipe the packets are bound for.
    pub pipe: PipeId,
    /// The feeding pipes, by slot.
    feeder_pipes: Vec<PipeId>,
    /// Per feeder: (arrival time, packet), in arrival order.
    feeders: Vec<VecDeque<(SimTime, Packet)>>,
    /// (key of the feeder's arrival event, feeder slot) of each non-empty feeder's first
    /// packet.
    heads: BinaryHeap<Reverse<(Key, u32)>>,
    /// The run's event order (the tie-break between equal arrival times).
    order: Order,
    /// Every packet is registered at least this long before its arrival.
    lead: SimDuration,
    /// A packet arriving at `a` must be admitted by `a + hold` (its effects beyond the pipe
    /// come later than that).
    hold: SimDuration,
    /// Time of the pending flush event, if one is scheduled.
    scheduled: Option<SimTime>,
    len: usize,
    /// The largest bound passed to `pop_before`: no packet registered later may arrive
    /// before it (checked: a broken rule would reorder arrivals).
    admitted_before: SimTime,
}

impl Merge {
    /// An empty merge for `pipe` fed by `feeders` (slot `i` is `feeders[i]`), ordering equal
    /// arrival times as `order` orders the feeders' arrival events. Needs `lead + hold ≥ 1 ps`,
    /// or a flush could admit nothing.
    pub fn new(pipe: PipeId, feeders: Vec<PipeId>, lead: SimDuration, hold: SimDuration, order: Order) -> Self {
        assert!(lead.as_ps() + hold.as_ps() >= 1, "a merge must be able to admit its first packet");
        let n = feeders.len();
        Merge {
            pipe,
            feeder_pipes: feeders,
            feeders: (0..n).map(|_| VecDeque::new()).collect(),
            heads: BinaryHeap::new(),
            order,
            lead,
            hold,
            scheduled: None,
            len: 0,
            admitted_before: SimTime::ZERO,
        }
    }

    /// The key of feeder `slot`'s arrival event at `at`.
    #[inline(always)]
    fn head_key(&self, slot: u32, at: SimTime) -> Key {
        self.order.key(at, Rank::Arrive, self.feeder_pipes[slot as usize].0)
    }

    /// Packets held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no packet is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Register a packet from feeder `slot` arriving at `at` (non-decreasing per feeder).
    /// Returns the time of a new flush event for the caller to schedule, when this packet
    /// needs one earlier than the one scheduled.
    #[inline(always)]
    pub fn push(&mut self, slot: u32, at: SimTime, pkt: Packet) -> Option<SimTime> {
        assert!(at >= self.admitted_before, "registered too late: arrives at {at:?}, admitted up to {:?}", self.admitted_before);
        if self.feeders[slot as usize].is_empty() {
            let key = self.head_key(slot, at);
            self.heads.push(Reverse((key, slot)));
        }
        let q = &mut self.feeders[slot as usize];
        debug_assert!(q.back().is_none_or(|b| b.0 <= at), "a feeder's arrivals never go back in time");
        q.push_back((at, pkt));
        self.len += 1;
        let due = at + self.hold;
        if self.scheduled.is_some_and(|s| s <= due) {
            return None;
        }
        self.scheduled = Some(due);
        Some(due)
    }

    /// A flush event at `now` begins: the bound below which held packets are due now
    /// (`pop_before`), or `None` if the event is stale (an earlier one took its place).
    pub fn begin_flush(&mut self, now: SimTime) -> Option<SimTime> {
        if self.scheduled != Some(now) {
            return None;
        }
        self.scheduled = None;
        Some(now + self.lead)
    }

    /// A flush is over: the time of the next flush event for the caller to schedule, if any
    /// packet is still held.
    pub fn end_flush(&mut self) -> Option<SimTime> {
        debug_assert!(self.scheduled.is_none(), "end_flush follows begin_flush");
        self.scheduled = self.heads.peek().map(|Reverse((key, _))| key.time() + self.hold);
        self.scheduled
    }

    /// Remove and return the earliest packet (ties: in the order of the feeders' arrival
    /// events) if it arrives before `before`.
    #[inline(always)]
    pub fn pop_before(&mut self, before: SimTime) -> Option<(SimTime, Packet)> {
        self.admitted_before = self.admitted_before.max(before);
        let &Reverse((key, slot)) = self.heads.peek()?;
        let at = key.time();
        if at >= before {
            return None;
        }
        let q = &mut self.feeders[slot as usize];
        let (_, pkt) = q.pop_front().expect("a head has a packet");
        match q.front().map(|&(next, _)| next) {
            Some(next) => {
                let key = self.head_key(slot, next);
                self.heads.peek_mut().expect("peeked").0 = (key, slot);
            }
            None => {
                self.heads.pop();
            }
        }
        self.len -= 1;
        Some((at, pkt))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::Body;

    fn pkt(id: u64) -> Packet {
        crate::net::packet::test_udp(0, 0, 100, id)
    }

    fn id(p: &Packet) -> u64 {
        let Body::Udp { seq, .. } = p.body else { unreachable!() };
        seq
    }

    #[test]
    fn pops_in_time_then_in_the_order_of_the_feeders_arrival_events() {
        let order = Order::new(11);
        let pipes = vec![PipeId(4), PipeId(9), PipeId(2)];
        let mut m = Merge::new(PipeId(0), pipes.clone(), SimDuration(10), SimDuration(100), order);
        // (feeder, arrival); the packet id is the index.
        let regs = [(0, 50), (1, 20), (2, 50), (0, 60), (1, 50), (2, 55), (1, 70)];
        let due: Vec<_> = regs.iter().enumerate().map(|(i, &(slot, at))| m.push(slot, SimTime(at), pkt(i as u64))).collect();
        // Only registrations that need an earlier flush ask for one.
        assert_eq!(due[0], Some(SimTime(150)));
        assert_eq!(due[1], Some(SimTime(120)));
        assert!(due[2..].iter().all(Option::is_none));
        assert_eq!(m.begin_flush(SimTime(150)), None, "superseded by the flush at 120");
        assert_eq!(m.begin_flush(SimTime(120)), Some(SimTime(130)), "due: arrivals before now + lead");
        let mut got = vec![];
        while let Some((at, p)) = m.pop_before(SimTime(61)) {
            got.push((at.0, id(&p)));
        }
        // At 50 three feeders tie: they come in the order their arrival events would pop.
        let mut at50 = [(order.key(SimTime(50), Rank::Arrive, 4), 0), (order.key(SimTime(50), Rank::Arrive, 2), 2), (order.key(SimTime(50), Rank::Arrive, 9), 4)];
        at50.sort();
        let mut expected = vec![(20, 1)];
        expected.extend(at50.iter().map(|&(_, i)| (50, i)));
        expected.extend([(55, 5), (60, 3)]);
        assert_eq!(got, expected);
        assert_eq!(m.len(), 1);
        assert_eq!(m.end_flush(), Some(SimTime(170)));
        assert!(m.pop_before(SimTime(70)).is_none(), "the bound is strict");
        assert_eq!(m.pop_before(SimTime(71)).map(|(t, p)| (t.0, id(&p))), Some((70, 6)));
        assert!(m.is_empty());
        assert_eq!(m.begin_flush(SimTime(170)), Some(SimTime(180)));
        assert_eq!(m.end_flush(), None);
    }

    #[test]
    #[should_panic(expected = "admit its first packet")]
    fn a_merge_without_lead_or_hold_cannot_exist() {
        Merge::new(PipeId(0), vec![PipeId(1), PipeId(2)], SimDuration::ZERO, SimDuration::ZERO, Order::default());
    }
}
