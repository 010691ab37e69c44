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

use std::collections::VecDeque;

use super::{Flow, FlowEngine};
use crate::units::SimDuration;

/// One client host's AHTCP throughput monitor.
#[derive(Clone, Debug)]
pub struct AhtcpMonitor {
    /// The receiving ends it measures and may ask: (flow, end).
    ends: Vec<(usize, usize)>,
    /// Sampling interval.
    pub interval: SimDuration,
    /// Samples in the moving average.
    pub samples: usize,
    /// Threshold, bit/s.
    pub threshold_bps: f64,
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
    pub fn new(interval: SimDuration, samples: usize, threshold_bps: f64, quiet_intervals: u32) -> Self {
        AhtcpMonitor {
            ends: Vec::new(),
            interval,
            samples,
            threshold_bps,
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
    pub fn sample(&mut self, flows: &[Flow]) -> Vec<(usize, usize)> {
        let mut total = 0u64;
        for (i, &(f, e)) in self.ends.iter().enumerate() {
            let d = match &flows[f].engine {
                FlowEngine::Tcp(t) => t.ends[e].stats.bytes_delivered,
                FlowEngine::Udp(_) => 0,
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
        if mean >= self.threshold_bps {
            return Vec::new();
        }
        self.low_samples += 1;
        self.ends.iter().zip(&self.quiet).filter(|(&(f, _), &q)| flows[f].finish.is_none() && q >= self.quiet_intervals).map(|(&fe, _)| fe).collect()
    }

    /// True once every connection it watches is finished (it stops sampling).
    pub fn done(&self, flows: &[Flow]) -> bool {
        self.ends.iter().all(|&(f, _)| flows[f].finish.is_some())
    }
}
