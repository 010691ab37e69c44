//! A DECP-like cooperative window controller (study 000's remedy): every `interval` it pulls
//! the windows of the coordinated TCP flows that stand above (1 + tolerance)·mean back to the
//! mean. It sees the flows' senders only, through `Connection::clamp_window`.

use super::{Flow, FlowEngine};
use crate::net::packet::FlowId;
use crate::tcp::State;
use crate::units::SimDuration;

/// A DECP-like cooperative window controller over a group of TCP flows.
#[derive(Clone, Debug)]
pub struct Coordinator {
    /// The coordinated flows.
    pub flows: Vec<FlowId>,
    /// How often it acts.
    pub interval: SimDuration,
    /// Windows above (1 + tolerance)·mean are pulled down to the mean.
    pub tolerance: f64,
    /// Number of window reductions made.
    pub actions: u64,
}

impl Coordinator {
    /// One action: among the coordinated flows whose senders are established and past slow
    /// start (windows still in slow start are not comparable yet), clamp every window above
    /// (1 + tolerance)·mean to the mean, if there are at least two. Returns the flows whose
    /// windows it clamped, in the order it clamped them.
    pub fn act(&mut self, flows: &mut [Flow]) -> Vec<usize> {
        let windows: Vec<(usize, u64)> = self
            .flows
            .iter()
            .filter_map(|f| match &flows[f.0 as usize].engine {
                FlowEngine::Tcp(t) if matches!(t.ends[0].state(), State::Established | State::CloseWait) && t.ends[0].cwnd() >= t.ends[0].ssthresh() => {
                    Some((f.0 as usize, t.ends[0].cwnd()))
                }
                _ => None,
            })
            .collect();
        let mut clamped = Vec::new();
        if windows.len() > 1 {
            let mean = windows.iter().map(|w| w.1 as f64).sum::<f64>() / windows.len() as f64;
            let limit = mean * (1.0 + self.tolerance);
            for &(f, w) in &windows {
                if w as f64 > limit {
                    if let FlowEngine::Tcp(t) = &mut flows[f].engine {
                        t.ends[0].clamp_window(mean as u64);
                        clamped.push(f);
                    }
                }
            }
        }
        self.actions += clamped.len() as u64;
        clamped
    }
}
