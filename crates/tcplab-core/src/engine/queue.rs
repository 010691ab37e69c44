//! Event queue: a binary heap of small `Copy` events keyed by (time, insertion sequence), so
//! events at the same instant pop in the order they were scheduled (FIFO tie-break).
//!
//! Zero-delay hand-offs (an event scheduled for the current instant) bypass the heap through a
//! same-instant FIFO. Because everything already in the heap for this instant was scheduled
//! earlier (lower sequence number), the FIFO is drained only after those: the pop order is
//! exactly the (time, seq) order a single heap would give, just cheaper.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::units::SimTime;

#[derive(Clone, Copy, Debug)]
struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse so the earliest (time, seq) is on top.
        o.time.cmp(&self.time).then_with(|| o.seq.cmp(&self.seq))
    }
}

/// The pending events of a simulation.
#[derive(Debug)]
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    now_fifo: VecDeque<E>,
    now: SimTime,
    seq: u64,
    popped: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E: Copy> EventQueue<E> {
    /// An empty queue at time zero.
    pub fn new() -> Self {
        EventQueue { heap: BinaryHeap::new(), now_fifo: VecDeque::new(), now: SimTime::ZERO, seq: 0, popped: 0 }
    }

    /// The current simulated time (the time of the last popped event).
    pub fn now(&self) -> SimTime {
        self.now
    }

    /// Number of events popped so far.
    pub fn popped(&self) -> u64 {
        self.popped
    }

    /// Number of pending events.
    pub fn len(&self) -> usize {
        self.heap.len() + self.now_fifo.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Schedule `event` at `time`. Panics if `time` is in the past (a broken invariant of the
    /// caller: simulated time never goes backwards).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {:?} < {:?}", time, self.now);
        if time == self.now {
            self.now_fifo.push_back(event);
        } else {
            self.seq += 1;
            self.heap.push(Entry { time, seq: self.seq, event });
        }
    }

    /// Time of the next event, if any.
    pub fn peek_time(&self) -> Option<SimTime> {
        if let Some(e) = self.heap.peek() {
            if e.time == self.now || self.now_fifo.is_empty() {
                return Some(e.time);
            }
        }
        if !self.now_fifo.is_empty() {
            return Some(self.now);
        }
        None
    }

    /// Pop the next event if its time is at most `limit`, advancing the clock to it.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        if let Some(top) = self.heap.peek() {
            if top.time == self.now {
                let e = self.heap.pop().expect("peeked");
                self.popped += 1;
                return Some((e.time, e.event));
            }
        }
        if let Some(ev) = self.now_fifo.pop_front() {
            self.popped += 1;
            return Some((self.now, ev));
        }
        let top = self.heap.peek()?;
        if top.time > limit {
            return None;
        }
        let e = self.heap.pop().expect("peeked");
        self.now = e.time;
        self.popped += 1;
        Some((e.time, e.event))
    }

    /// Advance the clock to `t` without popping (used when a run stops at a time limit).
    pub fn advance_to(&mut self, t: SimTime) {
        if t > self.now && self.now_fifo.is_empty() {
            self.now = t;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn ties_pop_in_insertion_order() {
        let mut q = EventQueue::new();
        for i in 0..100u32 {
            q.schedule(SimTime(5), i);
        }
        let got: Vec<u32> = std::iter::from_fn(|| q.pop_until(SimTime::MAX).map(|(_, e)| e)).collect();
        assert_eq!(got, (0..100).collect::<Vec<_>>());
    }

    #[test]
    fn same_instant_fifo_runs_after_earlier_scheduled_ties() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 1u32);
        q.schedule(SimTime(10), 2u32);
        let (t, e) = q.pop_until(SimTime::MAX).unwrap();
        assert_eq!((t, e), (SimTime(10), 1));
        q.schedule(SimTime(10), 3u32); // zero-delay hand-off
        assert_eq!(q.pop_until(SimTime::MAX).unwrap().1, 2);
        assert_eq!(q.pop_until(SimTime::MAX).unwrap().1, 3);
        assert!(q.pop_until(SimTime::MAX).is_none());
    }

    #[test]
    #[should_panic(expected = "in the past")]
    fn scheduling_in_the_past_is_a_bug() {
        let mut q = EventQueue::new();
        q.schedule(SimTime(10), 0u8);
        q.pop_until(SimTime::MAX);
        q.schedule(SimTime(9), 0u8);
    }

    proptest! {
        /// Time never goes backwards, and equal-time events keep their scheduling order, even
        /// when handlers schedule more events (including zero-delay ones) while popping.
        #[test]
        fn monotone_and_fifo(delays in proptest::collection::vec(0u64..5, 1..200)) {
            let mut q = EventQueue::new();
            let mut next_id = 0u64;
            let mut sched: Vec<(u64, u64, u64)> = vec![]; // (time, order, id)
            let mut order = 0u64;
            for d in delays.iter().take(20) {
                q.schedule(SimTime(*d), next_id);
                sched.push((*d, order, next_id)); order += 1; next_id += 1;
            }
            let mut i = 20;
            let mut last = (0u64, 0u64);
            let mut seen = vec![];
            while let Some((t, id)) = q.pop_until(SimTime::MAX) {
                let o = sched.iter().find(|s| s.2 == id).unwrap().1;
                prop_assert!(t.0 > last.0 || (t.0 == last.0 && o >= last.1) || seen.is_empty());
                last = (t.0, o);
                seen.push(id);
                if i < delays.len() {
                    let at = t.0 + delays[i];
                    q.schedule(SimTime(at), next_id);
                    sched.push((at, order, next_id)); order += 1; next_id += 1;
                    i += 1;
                }
            }
            prop_assert_eq!(seen.len(), sched.len());
        }
    }
}
