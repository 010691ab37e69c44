//! Sets of disjoint half-open sequence ranges, kept sorted and merged. The sender's SACK
//! scoreboard and the receiver's out-of-order queue are both range sets; `SackRecency` is
//! the order in which the receiver reports its blocks.

use std::collections::{BTreeMap, VecDeque};

/// A sorted set of disjoint, non-adjacent `[start, end)` ranges, with the bytes covered kept
/// as a running total. Ranges live in a ring buffer: removing them from the front (as the
/// cumulative ACK or the reassembly point advances) and adding them at the back cost O(1);
/// a merge in the middle moves the shorter side.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    r: VecDeque<(u64, u64)>,
    bytes: u64,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ranges, ascending.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (u64, u64)> + ExactSizeIterator + '_ {
        self.r.iter().copied()
    }

    /// The ranges, ascending, as a vector.
    pub fn to_vec(&self) -> Vec<(u64, u64)> {
        self.r.iter().copied().collect()
    }

    /// The lowest range.
    pub fn first(&self) -> Option<(u64, u64)> {
        self.r.front().copied()
    }

    /// The highest range.
    pub fn last(&self) -> Option<(u64, u64)> {
        self.r.back().copied()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.r.len()
    }

    /// Total bytes covered (O(1)).
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Index of the first range whose end is at least `x` (the first that may touch or
    /// overlap a range starting at `x`).
    fn first_ending_at_or_after(&self, x: u64) -> usize {
        if self.r.back().is_none_or(|&(_, b)| b < x) {
            return self.r.len(); // Past the highest range: the common append.
        }
        self.r.partition_point(|&(_, b)| b < x)
    }

    /// Add `[s, e)`; returns how many bytes were not already covered.
    pub fn insert(&mut self, s: u64, e: u64) -> u64 {
        if s >= e {
            return 0;
        }
        let i = self.first_ending_at_or_after(s);
        let mut j = i;
        let (mut ns, mut ne) = (s, e);
        let mut covered = 0;
        while j < self.r.len() && self.r[j].0 <= e {
            let (a, b) = self.r[j];
            covered += b.min(e).saturating_sub(a.max(s));
            ns = ns.min(a);
            ne = ne.max(b);
            j += 1;
        }
        if i == j {
            self.r.insert(i, (ns, ne));
        } else {
            self.r[i] = (ns, ne);
            self.r.drain(i + 1..j);
        }
        let fresh = (e - s) - covered;
        self.bytes += fresh;
        fresh
    }

    /// Remove everything below `x`; returns how many bytes were removed.
    pub fn trim_below(&mut self, x: u64) -> u64 {
        let mut removed = 0;
        while let Some(&(a, b)) = self.r.front() {
            if b <= x {
                removed += b - a;
                self.r.pop_front();
            } else {
                if a < x {
                    removed += x - a;
                    self.r[0].0 = x;
                }
                break;
            }
        }
        self.bytes -= removed;
        removed
    }

    /// Index of the first range ending above `x` (the one containing `x`, if any).
    fn first_ending_after(&self, x: u64) -> usize {
        self.r.partition_point(|&(_, b)| b <= x)
    }

    /// True if `x` lies in some range.
    pub fn contains(&self, x: u64) -> bool {
        let i = self.first_ending_after(x);
        i < self.r.len() && self.r[i].0 <= x
    }

    /// The smallest `y >= x` not covered.
    pub fn next_uncovered(&self, x: u64) -> u64 {
        let i = self.first_ending_after(x);
        if i < self.r.len() && self.r[i].0 <= x {
            self.r[i].1
        } else {
            x
        }
    }

    /// Start of the first range beginning above `x`, if any.
    pub fn next_start_after(&self, x: u64) -> Option<u64> {
        let i = self.r.partition_point(|&(a, _)| a <= x);
        self.r.get(i).map(|r| r.0)
    }

    /// Bytes covered within `[s, e)`: O(log n + the ranges it meets).
    pub fn covered_in(&self, s: u64, e: u64) -> u64 {
        if s >= e {
            return 0;
        }
        let mut n = 0;
        for &(a, b) in self.r.range(self.first_ending_after(s)..) {
            if a >= e {
                break;
            }
            n += b.min(e) - a.max(s);
        }
        n
    }

    /// End of the highest range.
    pub fn max_end(&self) -> Option<u64> {
        self.r.back().map(|r| r.1)
    }

    /// If the first range starts at or below `x`, remove and return its end (used to advance
    /// rcv_nxt).
    pub fn pop_front_if_starts_at(&mut self, x: u64) -> Option<u64> {
        match self.r.front() {
            Some(&(a, b)) if a <= x => {
                self.r.pop_front();
                self.bytes -= b - a;
                Some(b.max(x))
            }
            _ => None,
        }
    }

    /// The range containing `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.first_ending_after(x);
        self.r.get(i).copied().filter(|r| r.0 <= x)
    }
}

/// The receiver's SACK block order (RFC 2018 §4): one entry per out-of-order block, the start
/// of the segment that last changed it, most recently changed first. Kept as two ordered maps
/// (position → age, age → position) so that dropping the entries below the reassembly point
/// or inside a block costs O(log n) each however many blocks there are.
#[derive(Clone, Debug, Default)]
pub struct SackRecency {
    by_pos: BTreeMap<u64, u64>,
    by_age: BTreeMap<u64, u64>,
    clock: u64,
}

impl SackRecency {
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.by_pos.len()
    }

    /// True when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.by_pos.is_empty()
    }

    /// Drop every entry below `x`.
    #[inline]
    pub fn drop_below(&mut self, x: u64) {
        if !self.by_pos.is_empty() {
            self.drop_below_slow(x); // Out-of-order data is held (rare on most paths).
        }
    }

    #[inline(never)]
    fn drop_below_slow(&mut self, x: u64) {
        while let Some((&p, &age)) = self.by_pos.first_key_value() {
            if p >= x {
                break;
            }
            self.by_pos.pop_first();
            self.by_age.remove(&age);
        }
    }

    /// A segment starting at `s` changed the block `[a, b)` (which holds it): drop the entries
    /// in `[a, b]` and put `s` first.
    pub fn touch(&mut self, a: u64, b: u64, s: u64) {
        while let Some((&p, &age)) = self.by_pos.range(a..=b).next() {
            self.by_pos.remove(&p);
            self.by_age.remove(&age);
        }
        self.clock += 1;
        self.by_pos.insert(s, self.clock);
        self.by_age.insert(self.clock, s);
    }

    /// The entries, most recent first.
    pub fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        self.by_age.values().rev().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn insert_merges() {
        let mut s = RangeSet::new();
        assert_eq!(s.insert(10, 20), 10);
        assert_eq!(s.insert(30, 40), 10);
        assert_eq!(s.insert(15, 35), 10);
        assert_eq!(s.to_vec(), vec![(10, 40)]);
        assert_eq!(s.insert(40, 50), 10, "adjacent ranges merge");
        assert_eq!(s.to_vec(), vec![(10, 50)]);
        s.insert(60, 70);
        assert_eq!(s.covered_in(0, 100), 50);
        assert_eq!(s.covered_in(45, 65), 10);
        assert_eq!(s.next_uncovered(10), 50);
        assert_eq!(s.next_uncovered(55), 55);
        assert_eq!(s.next_start_after(10), Some(60));
        s.trim_below(45);
        assert_eq!(s.to_vec(), vec![(45, 50), (60, 70)]);
        assert!(s.contains(65) && !s.contains(70));
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u8..8, 0u64..200, 1u64..30), 1..80)) {
            let mut s = RangeSet::new();
            let mut bits = vec![false; 256];
            for (op, a, l) in ops {
                let e = (a + l).min(256);
                match op {
                    0 => {
                        // Trim (the cumulative ACK or the reassembly point advances).
                        let gone = (0..a).filter(|&i| bits[i as usize]).count() as u64;
                        prop_assert_eq!(s.trim_below(a), gone);
                        for i in 0..a { bits[i as usize] = false; }
                    }
                    1 => {
                        let first = bits.iter().position(|b| *b).map(|i| i as u64);
                        match s.pop_front_if_starts_at(a) {
                            Some(end) => {
                                let f = first.unwrap();
                                prop_assert!(f <= a);
                                let mut b = f;
                                while b < 256 && bits[b as usize] { bits[b as usize] = false; b += 1; }
                                prop_assert_eq!(end, b.max(a));
                            }
                            None => prop_assert!(first.is_none_or(|f| f > a)),
                        }
                    }
                    _ => {
                        let fresh = (a..e).filter(|&i| !bits[i as usize]).count() as u64;
                        prop_assert_eq!(s.insert(a, e), fresh);
                        for i in a..e { bits[i as usize] = true; }
                    }
                }
                for w in s.to_vec().windows(2) { prop_assert!(w[0].1 < w[1].0); }
                prop_assert_eq!(s.bytes(), bits.iter().filter(|b| **b).count() as u64);
                prop_assert_eq!(s.covered_in(a, e), (a..e).filter(|&i| bits[i as usize]).count() as u64);
            }
            for x in 0..256u64 {
                prop_assert_eq!(s.contains(x), bits[x as usize]);
                let nu = (x..256).find(|&i| !bits[i as usize]).unwrap_or(256);
                prop_assert_eq!(s.next_uncovered(x), nu);
            }
        }

        /// SackRecency against the list it replaces: entries most recent first, dropped below
        /// the reassembly point or inside a changed block.
        #[test]
        fn sack_recency_matches_a_list(ops in proptest::collection::vec((any::<bool>(), 0u64..300, 1u64..40), 1..100)) {
            let mut ooo = RangeSet::new();
            let mut rcv_nxt = 0u64;
            let mut list: Vec<u64> = vec![];
            let mut rec = SackRecency::default();
            for (in_order, a, l) in ops {
                if in_order {
                    // Everything up to a + l arrives in order.
                    rcv_nxt = rcv_nxt.max(a + l);
                    while let Some(end) = ooo.pop_front_if_starts_at(rcv_nxt) { rcv_nxt = rcv_nxt.max(end); }
                    ooo.trim_below(rcv_nxt);
                    list.retain(|&x| x >= rcv_nxt);
                    rec.drop_below(rcv_nxt);
                } else if a > rcv_nxt {
                    ooo.insert(a, a + l);
                    let (x, y) = ooo.range_containing(a).unwrap();
                    list.retain(|&p| !(p >= x && p <= y));
                    list.insert(0, a);
                    rec.touch(x, y, a);
                }
                prop_assert_eq!(rec.iter().collect::<Vec<_>>(), list.clone());
                prop_assert_eq!(rec.len(), list.len());
            }
        }
    }
}
