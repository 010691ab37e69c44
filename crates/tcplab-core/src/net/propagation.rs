//! A pipe's propagation stage: what happens to a packet between the end of its serialization
//! and its arrival at the far end. A closed set of delay lines:
//! - `Fifo`: a fixed delay (with the pipe's jitter, order kept) — every link;
//! - `Harmonized`: a per-flow delay line that holds fast streams back (`net::harmonizer`);
//! - `Impaired`: a line that reorders and duplicates (`net::impair`).
//!
//! The planner of pass-on and merges (`net::fabric`) asks one capability of it: whether packets
//! leave in the order they entered, one for one (`keeps_order`).

use std::collections::VecDeque;

use crate::net::harmonizer::Harmonizer;
use crate::net::impair::Impairment;
use crate::net::packet::Packet;
use crate::units::SimTime;

/// A pipe's propagation stage (see the module doc).
#[derive(Debug)]
pub enum Propagation {
    /// Packets in order with their arrival times (never decreasing).
    Fifo(VecDeque<(SimTime, Packet)>),
    /// A per-flow delay line.
    Harmonized(Box<Harmonizer>),
    /// A reordering and duplicating delay line.
    Impaired(Box<Impairment>),
}

impl Default for Propagation {
    fn default() -> Self {
        Propagation::Fifo(VecDeque::new())
    }
}

impl Propagation {
    /// Take in a packet whose last bit left at `now` and that would arrive at `at` on a plain
    /// line. Returns the new earliest release time when it moved earlier (the pipe's arrival
    /// event must then be scheduled), else `None`.
    #[inline(always)]
    pub fn admit(&mut self, now: SimTime, at: SimTime, pkt: Packet) -> Option<SimTime> {
        match self {
            Propagation::Fifo(line) => {
                debug_assert!(line.back().is_none_or(|b| b.0 <= at));
                let first = line.is_empty();
                line.push_back((at, pkt));
                first.then_some(at)
            }
            _ => self.admit_delayed(now, at, pkt),
        }
    }

    #[inline(never)]
    fn admit_delayed(&mut self, now: SimTime, at: SimTime, pkt: Packet) -> Option<SimTime> {
        match self {
            Propagation::Fifo(_) => unreachable!("handled inline"),
            Propagation::Harmonized(h) => h.admit(now, at, pkt),
            Propagation::Impaired(im) => im.admit(at, pkt),
        }
    }

    /// The arrival event at `now`: the packet released, or `None` when the event was spent on
    /// a packet that moved (see `Harmonizer::release`). When a packet is released, `next` is
    /// set to the next release time (`None` when the stage is empty).
    #[inline(always)]
    pub fn release(&mut self, now: SimTime, next: &mut Option<SimTime>) -> Option<Packet> {
        match self {
            Propagation::Fifo(line) => {
                let (at, pkt) = line.pop_front().expect("arrival without a packet in propagation");
                debug_assert_eq!(at, now);
                *next = line.front().map(|f| f.0);
                Some(pkt)
            }
            _ => self.release_delayed(now, next),
        }
    }

    #[inline(never)]
    fn release_delayed(&mut self, now: SimTime, next: &mut Option<SimTime>) -> Option<Packet> {
        let (pkt, n) = match self {
            Propagation::Fifo(_) => unreachable!("handled inline"),
            Propagation::Harmonized(h) => h.release(now),
            Propagation::Impaired(im) => im.release(now),
        };
        if pkt.is_some() {
            *next = n;
        }
        pkt
    }

    /// Packets inside the stage.
    pub fn len(&self) -> usize {
        match self {
            Propagation::Fifo(line) => line.len(),
            Propagation::Harmonized(h) => h.len(),
            Propagation::Impaired(im) => im.len(),
        }
    }

    /// True when no packet is inside.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True if packets leave in the order they entered, one for one.
    #[inline(always)]
    pub fn keeps_order(&self) -> bool {
        matches!(self, Propagation::Fifo(_))
    }

    /// The impairment stage, if this is one.
    pub fn impairment(&self) -> Option<&crate::net::impair::Impairment> {
        match self {
            Propagation::Impaired(im) => Some(im),
            _ => None,
        }
    }

    /// Copies the impairment stage made (0 without one).
    pub fn duplicated(&self) -> u64 {
        self.impairment().map_or(0, |i| i.duplicated)
    }

    /// The harmonizer, if this is one.
    pub fn harmonizer(&self) -> Option<&crate::net::harmonizer::Harmonizer> {
        match self {
            Propagation::Harmonized(h) => Some(h),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::harmonizer::HarmonizerConfig;
    use crate::net::packet::Body;
    use crate::units::SimDuration;

    fn pkt(flow: u32, seq: u64) -> Packet {
        crate::net::packet::test_udp(flow, 0, 1000, seq)
    }

    fn seq(p: &Packet) -> u64 {
        match p.body {
            Body::Udp { seq, .. } => seq,
            Body::Tcp(_) => unreachable!(),
        }
    }

    #[test]
    fn a_fifo_releases_in_order_and_names_the_next_time() {
        let t = |ms| SimTime::ZERO + SimDuration::from_millis(ms);
        let mut p = Propagation::default();
        assert!(p.keeps_order() && p.is_empty());
        assert_eq!(p.admit(t(0), t(10), pkt(0, 1)), Some(t(10)), "the first packet sets the event");
        assert_eq!(p.admit(t(1), t(11), pkt(1, 2)), None, "later ones wait behind it");
        assert_eq!(p.admit(t(2), t(11), pkt(0, 3)), None);
        assert_eq!(p.len(), 3);
        let mut next = None;
        let a = p.release(t(10), &mut next);
        assert_eq!((seq(&a.unwrap()), next), (1, Some(t(11))));
        let b = p.release(t(11), &mut next);
        assert_eq!((seq(&b.unwrap()), next), (2, Some(t(11))));
        let c = p.release(t(11), &mut next);
        assert_eq!((seq(&c.unwrap()), next), (3, None));
        assert!(p.is_empty());
    }

    #[test]
    fn only_the_fifo_keeps_order() {
        let cfg = HarmonizerConfig { base_rtt: SimDuration::from_millis(300), interval: SimDuration::from_millis(300), max_delay: SimDuration::from_millis(300) };
        let h = Propagation::Harmonized(Box::new(Harmonizer::new(cfg)));
        assert!(!h.keeps_order());
        let mut h = h;
        let t0 = SimTime::ZERO;
        assert_eq!(h.admit(t0, t0 + SimDuration::from_millis(5), pkt(3, 9)), Some(t0 + SimDuration::from_millis(5)));
        assert_eq!(h.len(), 1);
        let mut next = Some(t0);
        let p = h.release(t0 + SimDuration::from_millis(5), &mut next);
        assert_eq!((seq(&p.unwrap()), next), (9, None));
        let mut next = Some(t0);
        assert!(h.release(t0 + SimDuration::from_millis(6), &mut next).is_none(), "an event with nothing due is spent");
        assert_eq!(next, Some(t0), "and names no next release");
    }
}
