//! AHTCP's client side (study 001): a host measures the payload its AHTCP connections
//! deliver in order every `interval`, keeps the mean of the last `samples` measurements, and
//! while that moving average is below the threshold asks its connections' servers for
//! retransmissions (`Endpoint::signal`, which the `AhtcpReceiver` variant turns into a
//! request when it holds bytes back).
//!
//! Which connections are asked is a decision the paper leaves open: `stalled` (default) asks
//! only those that received nothing in order during the whole averaging window (`samples` ×
//! `interval`, 5 ms), so that a server that is still sending is not pushed into a timeout: with
//! N servers sharing a 1 Gb/s port each gets a packet every N·12 µs, 3 ms at N = 256, so one
//! quiet 1 ms sample does not tell a waiting server from a sending one. `stalled-sample` asks
//! those quiet during the last interval only; `incomplete` every connection that holds bytes
//! back. Connections that hold nothing (a complete SRU, or none of its bytes yet)
//! cannot be asked either way, so the barrier's idle time between blocks sends nothing.
//!
//! The threshold is fixed (the paper's rule), or follows the peak (`ThresholdRule::Peak`, the
//! paper's future work): a fraction of the highest moving average of the last `window`
//! samples, this one included. What a client can receive is set by wherever its bottleneck is
//! — its own link, a link shared with other clients (model B), background traffic — which it
//! cannot know but does observe; a fixed threshold is right for one of these only.

use std::collections::VecDeque;

use super::Action;
use crate::flow::{Flow, FlowEngine};
use crate::units::SimDuration;

/// How the threshold is set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ThresholdRule {
    /// A fixed threshold, bit/s.
    Fixed(f64),
    /// `fraction` of the highest moving average of the last `window` samples.
    Peak {
        /// Fraction of the peak, in (0, 1].
        fraction: f64,
        /// Samples the peak is taken over.
        window: usize,
    },
}

/// One client host's AHTCP throughput monitor.
#[derive(Clone, Debug)]
pub struct AhtcpMonitor {
    /// The receiving ends it measures and may ask: (flow, end).
    ends: Vec<(usize, usize)>,
    /// Sampling interval.
    pub interval: SimDuration,
    /// Samples in the moving average.
    pub samples: usize,
    /// How the threshold is set.
    pub rule: ThresholdRule,
    /// The threshold of the last sample, bit/s.
    pub threshold_bps: f64,
    /// The peak rule's candidates: (sample number, moving average), decreasing averages.
    peaks: VecDeque<(u64, f64)>,
    taken: u64,
    /// Ask only connections without in-order progress during this many intervals (0: ask
    /// every connection that holds bytes back).
    pub quiet_intervals: u32,
    window: VecDeque<f64>,
    last: Vec<u64>,
    /// Intervals since each connection last progressed.
    quiet: Vec<u32>,
    /// Intervals whose moving average was below the threshold.
    pub low_samples: u64,
}

impl AhtcpMonitor {
    /// A monitor with no connection yet (`watch` adds them).
    pub fn new(interval: SimDuration, samples: usize, rule: ThresholdRule, quiet_intervals: u32) -> Self {
        AhtcpMonitor {
            ends: Vec::new(),
            interval,
            samples,
            rule,
            threshold_bps: match rule {
                ThresholdRule::Fixed(t) => t,
                ThresholdRule::Peak { .. } => 0.0,
            },
            peaks: VecDeque::new(),
            taken: 0,
            quiet_intervals,
            window: VecDeque::with_capacity(samples),
            last: Vec::new(),
            quiet: Vec::new(),
            low_samples: 0,
        }
    }

    /// Measure and ask end `end` of flow `flow` too.
    pub fn watch(&mut self, flow: usize, end: usize) {
        self.ends.push((flow, end));
        self.last.push(0);
        self.quiet.push(0);
    }

    /// Take one sample; returns the ends to ask, in the order listed.
    pub fn sample(&mut self, flows: &[Flow]) -> Vec<Action> {
        let mut total = 0u64;
        for (i, &(f, e)) in self.ends.iter().enumerate() {
            let d = match &flows[f].engine {
                FlowEngine::Tcp(t) => t.ends[e].stats.bytes_delivered,
                FlowEngine::Udp(_) => 0,
                FlowEngine::Retired(_) => unreachable!("AHTCP connections are declared flows, never retired"),
            };
            total += d - self.last[i];
            self.quiet[i] = if d > self.last[i] { 0 } else { self.quiet[i].saturating_add(1) };
            self.last[i] = d;
        }
        if self.window.len() == self.samples {
            self.window.pop_front();
        }
        self.window.push_back(total as f64 * 8.0 / self.interval.as_secs_f64());
        let mean = self.window.iter().sum::<f64>() / self.window.len() as f64;
        self.threshold_bps = self.threshold(mean);
        if mean >= self.threshold_bps {
            return Vec::new();
        }
        self.low_samples += 1;
        self.ends
            .iter()
            .zip(&self.quiet)
            .filter(|(&(f, _), &q)| flows[f].finish.is_none() && q >= self.quiet_intervals)
            .map(|(&(flow, end), _)| Action::Signal { flow, end })
            .collect()
    }

    /// The threshold for this sample, whose moving average is `mean`.
    fn threshold(&mut self, mean: f64) -> f64 {
        let ThresholdRule::Peak { fraction, window } = self.rule else { return self.threshold_bps };
        // A sliding maximum: drop the candidates this sample outdoes or that left the window.
        let k = self.taken;
        self.taken += 1;
        while self.peaks.back().is_some_and(|&(_, v)| v <= mean) {
            self.peaks.pop_back();
        }
        self.peaks.push_back((k, mean));
        while self.peaks.front().is_some_and(|&(i, _)| i + window as u64 <= k) {
            self.peaks.pop_front();
        }
        fraction * self.peaks.front().map_or(mean, |p| p.1)
    }

    /// True once every connection it watches is finished (it stops sampling).
    pub fn done(&self, flows: &[Flow]) -> bool {
        self.ends.iter().all(|&(f, _)| flows[f].finish.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_peak_rule_follows_the_highest_recent_average() {
        let mut m = AhtcpMonitor::new(SimDuration::from_millis(1), 5, ThresholdRule::Peak { fraction: 0.5, window: 3 }, 5);
        let got: Vec<f64> = [100.0, 300.0, 200.0, 100.0, 50.0, 50.0, 400.0].iter().map(|&x| m.threshold(x)).collect();
        // The peak of the last 3 averages, this one included, halved.
        assert_eq!(got, vec![50.0, 150.0, 150.0, 150.0, 100.0, 50.0, 200.0]);
        let mut f = AhtcpMonitor::new(SimDuration::from_millis(1), 5, ThresholdRule::Fixed(500.0), 5);
        assert_eq!(f.threshold(10.0), 500.0, "the fixed rule ignores what it measures");
    }
}
