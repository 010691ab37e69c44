//! Event queue keyed by (time, insertion sequence), so events at the same instant pop in the
//! order they were scheduled (FIFO tie-break).
//!
//! The structure is a radix heap over the 128-bit key `time << 64 | seq`: keys only ever grow
//! past the last one popped (time never goes backwards and `seq` increases), so each pending
//! event sits in the bucket of the highest bit in which it differs from the last popped key, and
//! popping refills bucket 0 from the lowest non-empty bucket. Each event moves down a bucket a
//! few times at most, which makes push O(1) and pop amortized O(1) — cheaper than a binary heap
//! for the hundreds to thousands of pending events a large run holds.
//!
//! Zero-delay hand-offs (an event scheduled for the current instant) need no separate FIFO
//! here: their keys differ from the last popped key only in the sequence bits, so they land in
//! the lowest buckets and pop right after the events already due at this instant, in the
//! order they were scheduled.
//!
//! Invariant (checked): nothing is scheduled below the last key taken out of the buckets. The
//! simulation schedules only while dispatching an event, at or after its time, so this holds.

use crate::units::SimTime;

const BUCKETS: usize = 129;

/// The pending events of a simulation.
#[derive(Debug)]
pub struct EventQueue<E> {
    buckets: Vec<Vec<(u128, E)>>,
    /// Bit i set ⇔ bucket i non-empty (i ≤ 128; bucket 128 is tracked in `top_nonempty`).
    mask: u128,
    top_nonempty: bool,
    last: u128,
    heap_len: usize,
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
        EventQueue { buckets: (0..BUCKETS).map(|_| Vec::new()).collect(), mask: 0, top_nonempty: false, last: 0, heap_len: 0, now: SimTime::ZERO, seq: 0, popped: 0 }
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
        self.heap_len
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn bucket(&self, key: u128) -> usize {
        (128 - (key ^ self.last).leading_zeros()) as usize
    }

    /// Schedule `event` at `time`. Panics if `time` is in the past (a broken invariant of the
    /// caller: simulated time never goes backwards).
    pub fn schedule(&mut self, time: SimTime, event: E) {
        assert!(time >= self.now, "event scheduled in the past: {:?} < {:?}", time, self.now);
        self.seq += 1;
        let key = (time.0 as u128) << 64 | self.seq as u128;
        assert!(key > self.last, "event scheduled below the settled minimum");
        self.put(key, event);
        self.heap_len += 1;
    }

    fn put(&mut self, key: u128, event: E) {
        let b = self.bucket(key);
        self.buckets[b].push((key, event));
        if b < 128 {
            self.mask |= 1 << b;
        } else {
            self.top_nonempty = true;
        }
    }

    /// Make bucket 0 hold the smallest key; returns it.
    fn settle(&mut self) -> Option<u128> {
        if self.heap_len == 0 {
            return None;
        }
        if self.mask & 1 != 0 {
            return Some(self.buckets[0][0].0);
        }
        let i = if self.mask != 0 { self.mask.trailing_zeros() as usize } else { 128 };
        let items = std::mem::take(&mut self.buckets[i]);
        if i < 128 {
            self.mask &= !(1 << i);
        } else {
            self.top_nonempty = false;
        }
        self.last = items.iter().map(|(k, _)| *k).min().expect("non-empty bucket");
        for (k, e) in items.iter().copied() {
            self.put(k, e);
        }
        // Hand the emptied vector back to keep its capacity.
        let mut items = items;
        items.clear();
        self.buckets[i] = items;
        Some(self.last)
    }

    fn pop_heap(&mut self) -> (SimTime, E) {
        let (k, e) = self.buckets[0].pop().expect("settled");
        self.mask &= !1;
        self.heap_len -= 1;
        ((SimTime((k >> 64) as u64)), e)
    }

    /// Time of the next event, if any.
    pub fn peek_time(&mut self) -> Option<SimTime> {
        self.settle().map(|k| SimTime((k >> 64) as u64))
    }

    /// Pop the next event if its time is at most `limit`, advancing the clock to it.
    pub fn pop_until(&mut self, limit: SimTime) -> Option<(SimTime, E)> {
        let k = self.settle()?;
        if (k >> 64) as u64 > limit.0 {
            return None;
        }
        let (t, e) = self.pop_heap();
        self.now = t;
        self.popped += 1;
        Some((t, e))
    }

    /// Advance the clock to `t` without popping (used when a run stops at a time limit).
    pub fn advance_to(&mut self, t: SimTime) {
        let next = self.settle().map_or(u64::MAX, |k| (k >> 64) as u64);
        if t > self.now {
            self.now = SimTime(t.0.min(next));
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
    fn zero_delay_events_run_after_earlier_scheduled_ties() {
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
