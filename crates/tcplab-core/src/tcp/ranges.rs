//! Sets of disjoint half-open sequence ranges, kept sorted and merged. The sender's SACK
//! scoreboard and the receiver's out-of-order queue are both range sets.

/// A sorted set of disjoint, non-adjacent `[start, end)` ranges.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RangeSet {
    r: Vec<(u64, u64)>,
}

impl RangeSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The ranges, ascending.
    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.r
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.r.is_empty()
    }

    /// Number of ranges.
    pub fn len(&self) -> usize {
        self.r.len()
    }

    /// Total bytes covered.
    pub fn bytes(&self) -> u64 {
        self.r.iter().map(|(a, b)| b - a).sum()
    }

    /// Add `[s, e)`; returns how many bytes were not already covered.
    pub fn insert(&mut self, s: u64, e: u64) -> u64 {
        if s >= e {
            return 0;
        }
        // First range whose end >= s (may touch or overlap).
        let i = self.r.partition_point(|&(_, b)| b < s);
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
        self.r.splice(i..j, std::iter::once((ns, ne)));
        (e - s) - covered
    }

    /// Remove everything below `x`.
    pub fn trim_below(&mut self, x: u64) {
        let i = self.r.partition_point(|&(_, b)| b <= x);
        self.r.drain(..i);
        if let Some(f) = self.r.first_mut() {
            if f.0 < x {
                f.0 = x;
            }
        }
    }

    /// True if `x` lies in some range.
    pub fn contains(&self, x: u64) -> bool {
        let i = self.r.partition_point(|&(_, b)| b <= x);
        i < self.r.len() && self.r[i].0 <= x
    }

    /// The smallest `y >= x` not covered.
    pub fn next_uncovered(&self, x: u64) -> u64 {
        let i = self.r.partition_point(|&(_, b)| b <= x);
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

    /// Bytes covered within `[s, e)`.
    pub fn covered_in(&self, s: u64, e: u64) -> u64 {
        if s >= e {
            return 0;
        }
        let i = self.r.partition_point(|&(_, b)| b <= s);
        let mut n = 0;
        for &(a, b) in &self.r[i..] {
            if a >= e {
                break;
            }
            n += b.min(e) - a.max(s);
        }
        n
    }

    /// End of the highest range.
    pub fn max_end(&self) -> Option<u64> {
        self.r.last().map(|r| r.1)
    }

    /// If the first range starts at `x`, remove and return its end (used to advance rcv_nxt).
    pub fn pop_front_if_starts_at(&mut self, x: u64) -> Option<u64> {
        match self.r.first() {
            Some(&(a, b)) if a <= x => {
                self.r.remove(0);
                Some(b.max(x))
            }
            _ => None,
        }
    }

    /// The range containing `x`, if any.
    pub fn range_containing(&self, x: u64) -> Option<(u64, u64)> {
        let i = self.r.partition_point(|&(_, b)| b <= x);
        self.r.get(i).copied().filter(|r| r.0 <= x)
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
        assert_eq!(s.ranges(), &[(10, 40)]);
        assert_eq!(s.insert(40, 50), 10, "adjacent ranges merge");
        assert_eq!(s.ranges(), &[(10, 50)]);
        s.insert(60, 70);
        assert_eq!(s.covered_in(0, 100), 50);
        assert_eq!(s.covered_in(45, 65), 10);
        assert_eq!(s.next_uncovered(10), 50);
        assert_eq!(s.next_uncovered(55), 55);
        assert_eq!(s.next_start_after(10), Some(60));
        s.trim_below(45);
        assert_eq!(s.ranges(), &[(45, 50), (60, 70)]);
        assert!(s.contains(65) && !s.contains(70));
    }

    proptest! {
        #[test]
        fn matches_a_bitmap(ops in proptest::collection::vec((0u64..200, 1u64..30), 1..60)) {
            let mut s = RangeSet::new();
            let mut bits = vec![false; 256];
            for (a, l) in ops {
                let e = (a + l).min(256);
                let fresh = (a..e).filter(|&i| !bits[i as usize]).count() as u64;
                prop_assert_eq!(s.insert(a, e), fresh);
                for i in a..e { bits[i as usize] = true; }
            }
            for w in s.ranges().windows(2) { prop_assert!(w[0].1 < w[1].0); }
            prop_assert_eq!(s.bytes(), bits.iter().filter(|b| **b).count() as u64);
            for x in 0..256u64 { prop_assert_eq!(s.contains(x), bits[x as usize]); }
        }
    }
}
