//! What a workload draws: flow sizes (fixed, exponential, Pareto, or an empirical CDF — the
//! published web-search and data-mining workloads ship here as data) and the gaps between flow
//! arrivals (a Poisson process, or evenly spaced). Pure functions of a seeded `Rng`; the
//! flows themselves are made at run time by the scenario's flow source
//! (`scenario::build::workload`).

use crate::engine::Rng;
use crate::units::{SimDuration, PS_PER_SEC};

/// The web-search workload (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010, Fig. 4:
/// the flow sizes of background traffic in a production search cluster), as the authors'
/// own traffic generator ships it (`DCTCP_CDF` in github.com/datacenter/empirical-traffic-gen):
/// (flow size in bytes, cumulative probability). Mean 1,711,250 bytes with linear
/// interpolation.
pub const WEB_SEARCH: &[(f64, f64)] = &[
    (0.0, 0.0),
    (10_000.0, 0.15),
    (20_000.0, 0.2),
    (30_000.0, 0.3),
    (50_000.0, 0.4),
    (80_000.0, 0.53),
    (200_000.0, 0.6),
    (1_000_000.0, 0.7),
    (2_000_000.0, 0.8),
    (5_000_000.0, 0.9),
    (10_000_000.0, 0.97),
    (30_000_000.0, 1.0),
];

/// The data-mining workload (Greenberg et al., "VL2: A Scalable and Flexible Data Center
/// Network", SIGCOMM 2009, Fig. 2: flow sizes in a data-mining cluster), as the same
/// generator ships it (`VL2_CDF`): (bytes, cumulative probability). Most flows are a few
/// hundred bytes, most bytes are in flows of 100 MB and more: mean 12,658,198.6 bytes with
/// linear interpolation.
pub const DATA_MINING: &[(f64, f64)] = &[
    (0.0, 0.0),
    (180.0, 0.1),
    (216.0, 0.2),
    (560.0, 0.3),
    (900.0, 0.4),
    (1_100.0, 0.5),
    (1_870.0, 0.6),
    (3_160.0, 0.7),
    (10_000.0, 0.8),
    (400_000.0, 0.9),
    (3_160_000.0, 0.95),
    (100_000_000.0, 0.98),
    (1_000_000_000.0, 1.0),
];

/// An empirical distribution: points (size in bytes, cumulative probability), sizes and
/// probabilities non-decreasing, the last probability 1. A draw u uniform in [0, 1) falls in
/// the first segment whose probability reaches it and is interpolated linearly along it (as
/// ns-2's `EmpiricalRandomVariable` and the generators built on it); below the first
/// point's probability it is the first size.
#[derive(Clone, Debug, PartialEq)]
pub struct Cdf {
    points: Vec<(f64, f64)>,
}

impl Cdf {
    /// A CDF from its points, or why they are not one.
    pub fn new(points: &[(f64, f64)]) -> Result<Cdf, String> {
        if points.len() < 2 {
            return Err(format!("needs at least 2 points (size, probability), has {}", points.len()));
        }
        for (j, &(s, p)) in points.iter().enumerate() {
            if !s.is_finite() || s < 0.0 {
                return Err(format!("point {j}: size {s} is not a finite number of bytes ≥ 0"));
            }
            if !(0.0..=1.0).contains(&p) {
                return Err(format!("point {j}: probability {p} is outside [0, 1]"));
            }
            if j > 0 && (s < points[j - 1].0 || p < points[j - 1].1) {
                return Err(format!("point {j}: sizes and probabilities must not decrease ({:?} after {:?})", (s, p), points[j - 1]));
            }
        }
        let last = points[points.len() - 1];
        if last.1 != 1.0 {
            return Err(format!("the last point's probability is {}; it must be 1", last.1));
        }
        if last.0 < 1.0 {
            return Err("the largest size is below 1 byte".into());
        }
        Ok(Cdf { points: points.to_vec() })
    }

    /// The points.
    pub fn points(&self) -> &[(f64, f64)] {
        &self.points
    }

    /// The size at cumulative probability `u` in [0, 1).
    pub fn quantile(&self, u: f64) -> f64 {
        let p = &self.points;
        let j = p.partition_point(|&(_, q)| q < u);
        if j == 0 {
            return p[0].0;
        }
        let j = j.min(p.len() - 1);
        let ((s0, q0), (s1, q1)) = (p[j - 1], p[j]);
        if q1 <= q0 {
            return s1;
        }
        s0 + (u - q0) / (q1 - q0) * (s1 - s0)
    }

    /// The mean of the interpolated distribution, bytes.
    pub fn mean(&self) -> f64 {
        let p = &self.points;
        let mut m = p[0].0 * p[0].1;
        for w in p.windows(2) {
            m += (w[1].1 - w[0].1) * (w[0].0 + w[1].0) / 2.0;
        }
        m
    }
}

/// A flow-size distribution. Every draw is a whole number of bytes, at least 1 (a draw is
/// rounded up).
#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Every flow this many bytes.
    Fixed(u64),
    /// Exponential with this mean, bytes.
    Exponential {
        /// Mean, bytes.
        mean: f64,
    },
    /// Pareto: P(S > s) = (scale/s)^shape for s ≥ scale, cut at `max` (a draw above it is
    /// `max`).
    Pareto {
        /// The smallest size, bytes.
        scale: f64,
        /// The tail index α (> 1 for a finite mean).
        shape: f64,
        /// The largest size, bytes (none: unbounded).
        max: Option<f64>,
    },
    /// An empirical CDF.
    Empirical(Cdf),
}

impl SizeDist {
    /// A Pareto distribution of tail index `shape` (> 1) whose untruncated mean is `mean`:
    /// scale = mean·(shape − 1)/shape.
    pub fn pareto_with_mean(mean: f64, shape: f64, max: Option<f64>) -> SizeDist {
        SizeDist::Pareto { scale: mean * (shape - 1.0) / shape, shape, max }
    }

    /// One size, bytes (at least 1).
    pub fn draw(&self, rng: &mut Rng) -> u64 {
        let s = match self {
            SizeDist::Fixed(b) => return (*b).max(1),
            SizeDist::Exponential { mean } => -mean * (1.0 - rng.next_f64()).ln(),
            SizeDist::Pareto { scale, shape, max } => {
                let s = scale / (1.0 - rng.next_f64()).powf(1.0 / shape);
                max.map_or(s, |m| s.min(m))
            }
            SizeDist::Empirical(c) => c.quantile(rng.next_f64()),
        };
        (s.ceil() as u64).max(1)
    }

    /// The mean size of the distribution as drawn (before rounding up), bytes.
    pub fn mean(&self) -> f64 {
        match self {
            SizeDist::Fixed(b) => (*b).max(1) as f64,
            SizeDist::Exponential { mean } => *mean,
            SizeDist::Pareto { scale, shape, max: None } => scale * shape / (shape - 1.0),
            // E[min(S, m)] = scale·α/(α−1) − scale^α·m^(1−α)/(α−1).
            SizeDist::Pareto { scale, shape, max: Some(m) } => {
                if *m <= *scale {
                    *m
                } else {
                    scale * shape / (shape - 1.0) - scale.powf(*shape) * m.powf(1.0 - shape) / (shape - 1.0)
                }
            }
            SizeDist::Empirical(c) => c.mean(),
        }
    }
}

/// How flows arrive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Arrivals {
    /// A Poisson process of `rate` flows per second: exponential gaps.
    Poisson {
        /// Flows per second.
        rate: f64,
    },
    /// One flow every 1/`rate` seconds, the first at the start.
    Periodic {
        /// Flows per second.
        rate: f64,
    },
}

impl Arrivals {
    /// The gap before the next arrival (for a Poisson process, also before the first).
    pub fn gap(&self, rng: &mut Rng) -> SimDuration {
        let secs = match *self {
            Arrivals::Poisson { rate } => -(1.0 - rng.next_f64()).ln() / rate,
            Arrivals::Periodic { rate } => 1.0 / rate,
        };
        SimDuration((secs * PS_PER_SEC as f64).round().min(u64::MAX as f64 / 4.0) as u64)
    }

    /// The first arrival's offset from the start.
    pub fn first(&self, rng: &mut Rng) -> SimDuration {
        match self {
            Arrivals::Poisson { .. } => self.gap(rng),
            Arrivals::Periodic { .. } => SimDuration::ZERO,
        }
    }

    /// Flows per second.
    pub fn rate(&self) -> f64 {
        match *self {
            Arrivals::Poisson { rate } | Arrivals::Periodic { rate } => rate,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: &SizeDist, n: usize, seed: u64) -> Vec<u64> {
        let mut r = Rng::from_seed(seed);
        (0..n).map(|_| d.draw(&mut r)).collect()
    }

    #[test]
    fn shipped_cdfs_are_cdfs_with_their_published_means() {
        let web = Cdf::new(WEB_SEARCH).unwrap();
        assert_eq!(web.mean(), 1_711_250.0, "hand sum: .15·5000 + .05·15000 + … + .03·2e7");
        let dm = Cdf::new(DATA_MINING).unwrap();
        // Half the flows are at most 1,100 bytes; the mean is dominated by the tail.
        assert_eq!(dm.quantile(0.5), 1_100.0);
        assert!((dm.mean() - 12_658_198.6).abs() < 1e-3, "hand sum: .1·90 + … + .02·5.5e8; {}", dm.mean());
    }

    #[test]
    fn quantile_interpolates_linearly_and_holds_mass_at_the_first_point() {
        let c = Cdf::new(&[(100.0, 0.5), (300.0, 1.0)]).unwrap();
        assert_eq!(c.quantile(0.0), 100.0);
        assert_eq!(c.quantile(0.4), 100.0, "half the mass sits at 100");
        assert_eq!(c.quantile(0.75), 200.0);
        assert_eq!(c.mean(), 0.5 * 100.0 + 0.5 * 200.0);
    }

    #[test]
    fn bad_cdfs_are_refused_with_the_reason() {
        assert!(Cdf::new(&[(1.0, 1.0)]).unwrap_err().contains("at least 2"));
        assert!(Cdf::new(&[(10.0, 0.5), (5.0, 1.0)]).unwrap_err().contains("must not decrease"));
        assert!(Cdf::new(&[(10.0, 0.5), (20.0, 0.9)]).unwrap_err().contains("must be 1"));
        assert!(Cdf::new(&[(10.0, -0.1), (20.0, 1.0)]).unwrap_err().contains("outside [0, 1]"));
    }

    /// The sample mean of each distribution is within 4 standard errors of its mean (the
    /// web-search CDF: 200,000 draws; its standard deviation is about 3.6 MB).
    #[test]
    fn sample_means_match_the_distributions() {
        let cases = [
            (SizeDist::Exponential { mean: 50_000.0 }, 200_000),
            (SizeDist::pareto_with_mean(100_000.0, 2.5, None), 400_000),
            (SizeDist::pareto_with_mean(100_000.0, 1.2, Some(1.0e6)), 400_000),
            (SizeDist::Empirical(Cdf::new(WEB_SEARCH).unwrap()), 200_000),
        ];
        for (d, n) in cases {
            let xs = draws(&d, n, 11);
            let m = xs.iter().map(|&x| x as f64).sum::<f64>() / n as f64;
            let var = xs.iter().map(|&x| (x as f64 - m).powi(2)).sum::<f64>() / (n - 1) as f64;
            let se = (var / n as f64).sqrt();
            // Rounding up adds at most 1 byte to every draw.
            assert!((m - d.mean() - 0.5).abs() < 4.0 * se + 0.5, "{d:?}: sample mean {m}, mean {}, se {se}", d.mean());
        }
    }

    #[test]
    fn pareto_tail_and_cut() {
        let d = SizeDist::Pareto { scale: 1000.0, shape: 1.5, max: Some(50_000.0) };
        let xs = draws(&d, 100_000, 3);
        assert!(xs.iter().all(|&x| (1000..=50_000).contains(&x)));
        // P(S > 4000) = (1000/4000)^1.5 = 1/8.
        let tail = xs.iter().filter(|&&x| x > 4000).count() as f64 / xs.len() as f64;
        assert!((tail - 0.125).abs() < 0.005, "{tail}");
        assert_eq!(draws(&SizeDist::Fixed(0), 3, 1), vec![1, 1, 1], "at least one byte");
    }

    #[test]
    fn poisson_gaps_have_the_rate_and_periodic_ones_are_exact() {
        let a = Arrivals::Poisson { rate: 1000.0 };
        let mut r = Rng::from_seed(5);
        let n = 100_000;
        let total: u64 = (0..n).map(|_| a.gap(&mut r).as_ps()).sum();
        let mean_s = total as f64 / n as f64 / PS_PER_SEC as f64;
        assert!((mean_s - 1e-3).abs() < 4.0 * 1e-3 / (n as f64).sqrt(), "{mean_s}");
        let p = Arrivals::Periodic { rate: 4.0 };
        assert_eq!(p.gap(&mut r), SimDuration(PS_PER_SEC / 4));
        assert_eq!(p.first(&mut r), SimDuration::ZERO);
    }

    #[test]
    fn draws_are_deterministic_for_a_seed() {
        let d = SizeDist::Empirical(Cdf::new(DATA_MINING).unwrap());
        assert_eq!(draws(&d, 50, 9), draws(&d, 50, 9));
        assert_ne!(draws(&d, 50, 9), draws(&d, 50, 10));
    }
}
