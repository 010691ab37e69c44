//! A log-linear histogram of non-negative integers (durations in picoseconds): 64 equal
//! sub-buckets per power of two, so every value above 63 falls in a bucket whose width is at
//! most 1/64 of its lower edge (values up to 63 have a bucket each). A quantile is reported as
//! its bucket's midpoint, clamped to the smallest and largest values seen: within 0.8 % of the
//! exact nearest-rank quantile. Only the buckets between the smallest and largest values
//! seen are held (a few hundred counters for samples spanning a few octaves), so the cost is a
//! shift, a subtraction and an increment per value.

/// Sub-buckets per power of two (a power of two itself).
const SUB: u64 = 64;
/// log2(SUB).
const SUB_BITS: u32 = 6;

/// The histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogHistogram {
    /// The bucket index of `counts[0]`.
    first: u32,
    /// Counts per bucket from `first` on.
    counts: Vec<u32>,
    /// Values recorded.
    n: u64,
    /// Smallest and largest values recorded (meaningful once `n > 0`).
    min: u64,
    max: u64,
    /// Sum of the values recorded.
    sum: u128,
}

/// The bucket index of `v`.
#[inline]
fn bucket(v: u64) -> u32 {
    if v < SUB {
        return v as u32;
    }
    let e = 63 - v.leading_zeros(); // floor(log2 v) ≥ SUB_BITS
    let m = (v >> (e - SUB_BITS)) & (SUB - 1);
    ((e - SUB_BITS + 1) as u64 * SUB + m) as u32
}

/// The lowest value of bucket `i` and its width.
fn edges(i: u32) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let shift = (i / SUB - 1) as u32;
    ((SUB + i % SUB) << shift, 1 << shift)
}

impl LogHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LogHistogram::default()
    }

    /// Record `v`.
    #[inline]
    pub fn record(&mut self, v: u64) {
        let b = bucket(v);
        if self.counts.is_empty() {
            self.first = b;
            self.counts.push(0);
            self.min = v;
            self.max = v;
        } else if b < self.first {
            let grow = (self.first - b) as usize;
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = b;
        } else if (b - self.first) as usize >= self.counts.len() {
            self.counts.resize((b - self.first) as usize + 1, 0);
        }
        self.counts[(b - self.first) as usize] += 1;
        self.n += 1;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        self.sum += v as u128;
    }

    /// Values recorded.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// True before the first value.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The smallest value recorded.
    pub fn min(&self) -> Option<u64> {
        (self.n > 0).then_some(self.min)
    }

    /// The largest value recorded.
    pub fn max(&self) -> Option<u64> {
        (self.n > 0).then_some(self.max)
    }

    /// The mean of the values recorded (exact).
    pub fn mean(&self) -> Option<f64> {
        (self.n > 0).then(|| self.sum as f64 / self.n as f64)
    }

    /// The `q`-quantile, 0 ≤ q ≤ 1, by nearest rank (the value of rank ⌈q·n⌉, at least 1):
    /// its bucket's midpoint, clamped to [min, max] (rank 1 and rank n: the exact min and
    /// max). `None` before the first value.
    pub fn quantile(&self, q: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.n as f64).ceil() as u64).max(1);
        if rank == 1 {
            return Some(self.min as f64);
        }
        if rank == self.n {
            return Some(self.max as f64);
        }
        let mut seen = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            seen += c as u64;
            if seen >= rank {
                let (lo, width) = edges(self.first + k as u32);
                let mid = lo as f64 + (width - 1) as f64 / 2.0;
                return Some(mid.clamp(self.min as f64, self.max as f64));
            }
        }
        Some(self.max as f64)
    }

    /// Heap bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u32>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_contiguous_and_narrow() {
        // Every value lies in its bucket; the next bucket starts where this one ends; widths
        // never pass 1/64 of the lower edge.
        let mut prev = None;
        for v in (0..5_000u64).chain((1..60).flat_map(|e| [(1u64 << e) - 1, 1 << e, (1 << e) + 1])) {
            let b = bucket(v);
            let (lo, w) = edges(b);
            assert!(lo <= v && v < lo + w, "v {v} bucket {b} [{lo}, {})", lo + w);
            assert!(w == 1 || w * SUB <= lo, "bucket {b} too wide: {w} at {lo}");
            if let Some((pv, pb)) = prev {
                if v == pv + 1 {
                    assert!(b == pb || b == pb + 1, "bucket jump at {v}");
                    if b == pb + 1 {
                        let (plo, pw) = edges(pb);
                        assert_eq!(plo + pw, lo, "gap before bucket {b}");
                    }
                }
            }
            prev = Some((v, b));
        }
        assert_eq!(bucket(u64::MAX), (64 - SUB_BITS as u64) as u32 * SUB as u32 + (SUB - 1) as u32);
    }

    #[test]
    fn quantiles_within_a_bucket_of_the_exact_ones() {
        // 10,000 values spread over three decades (1 µs … 1 ms in ps), in a scrambled order.
        let mut vals: Vec<u64> = (0..10_000u64).map(|i| 1_000_000 + (i * 7_919 % 10_000) * (i % 97 + 1) * 1_000).collect();
        let mut h = LogHistogram::new();
        for &v in &vals {
            h.record(v);
        }
        vals.sort_unstable();
        for q in [0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0] {
            let rank = ((q * vals.len() as f64).ceil() as usize).max(1);
            let exact = vals[rank - 1] as f64;
            let got = h.quantile(q).unwrap();
            assert!((got - exact).abs() <= exact / 128.0 + 0.5, "q {q}: {got} vs exact {exact}");
        }
        assert_eq!(h.quantile(0.0), Some(*vals.first().unwrap() as f64));
        assert_eq!(h.quantile(1.0), Some(*vals.last().unwrap() as f64));
        assert_eq!(h.len(), 10_000);
        let mean = vals.iter().map(|&v| v as f64).sum::<f64>() / vals.len() as f64;
        assert!((h.mean().unwrap() - mean).abs() < 1e-6 * mean);
    }

    #[test]
    fn small_values_are_exact_and_empty_has_none() {
        let mut h = LogHistogram::new();
        assert_eq!((h.quantile(0.5), h.mean(), h.min()), (None, None, None));
        for v in [5, 3, 9, 3, 60] {
            h.record(v);
        }
        assert_eq!(h.quantile(0.5), Some(5.0), "rank 3 of 3,3,5,9,60");
        assert_eq!(h.quantile(0.2), Some(3.0));
        assert_eq!(h.quantile(0.8), Some(9.0));
        assert_eq!((h.min(), h.max()), (Some(3), Some(60)));
    }

    #[test]
    fn growing_downwards_keeps_the_counts() {
        let mut h = LogHistogram::new();
        h.record(1 << 30);
        h.record(1 << 20); // below the first bucket: the counts move up
        h.record(1 << 25);
        assert_eq!(h.quantile(0.34), Some((1u64 << 25) as f64 + ((1u64 << 19) - 1) as f64 / 2.0));
        assert_eq!(h.quantile(0.0), Some((1u64 << 20) as f64));
        assert_eq!(h.quantile(1.0), Some((1u64 << 30) as f64));
        assert_eq!(h.counts.iter().map(|&c| c as u64).sum::<u64>(), 3);
    }
}
