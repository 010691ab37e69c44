//! A DECP-like cooperative window controller (study 000's remedy): every `interval` it pulls
//! the windows of the coordinated TCP flows that stand above (1 + tolerance)·mean back to the
//! mean. It sees the flows' data senders only (a reservoir's local READ streams send from
//! their far end), and their windows through
//! `Connection::window_for_remedy`; the controllers know nothing of it.

use super::Action;
use crate::flow::{Flow, FlowEngine};
use crate::net::packet::FlowId;
use crate::tcp::cc::WindowState;
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
    /// (1 + tolerance)·mean to the mean, if there are at least two. Returns the clamps, in
    /// the order it makes them.
    pub fn act(&mut self, flows: &[Flow]) -> Vec<Action> {
        let windows: Vec<(usize, u64)> = self
            .flows
            .iter()
            .filter_map(|f| {
                let flow = &flows[f.0 as usize];
                let sender = flow.data_sender();
                match &flow.engine {
                    FlowEngine::Tcp(t) if matches!(t.ends[sender].state(), State::Established | State::CloseWait) && t.ends[sender].cwnd() >= t.ends[sender].ssthresh() => {
                        Some((f.0 as usize, t.ends[sender].cwnd()))
                    }
                    _ => None,
                }
            })
            .collect();
        let mut clamped = Vec::new();
        if windows.len() > 1 {
            let mean = windows.iter().map(|w| w.1 as f64).sum::<f64>() / windows.len() as f64;
            let limit = mean * (1.0 + self.tolerance);
            clamped.extend(windows.iter().filter(|&&(_, w)| w as f64 > limit).map(|&(flow, _)| Action::ClampWindow { flow, bytes: mean as u64 }));
        }
        self.actions += clamped.len() as u64;
        clamped
    }
}

/// Pull a window down to at most `bytes` (at least one segment), ssthresh following so that
/// it does not slow-start straight back; a window already below is left alone, and so is a
/// packet window's ACK counter then.
pub fn clamp(w: WindowState<'_>, bytes: u64) {
    match w {
        WindowState::Bytes { cwnd, ssthresh } => {
            *cwnd = (*cwnd).min(bytes.max(1));
            *ssthresh = (*ssthresh).min(*cwnd);
        }
        WindowState::Packets(w) => {
            let segs = ((bytes / w.mss) as u32).max(1);
            if segs < w.cwnd {
                w.cwnd = segs;
                w.cwnd_cnt = 0;
            }
            w.ssthresh = w.ssthresh.min(w.cwnd);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tcp::cc::PacketWindow;

    #[test]
    fn a_byte_window_is_lowered_with_its_ssthresh() {
        let (mut cwnd, mut ssthresh) = (30_000u64, u64::MAX);
        clamp(WindowState::Bytes { cwnd: &mut cwnd, ssthresh: &mut ssthresh }, 20_000);
        assert_eq!((cwnd, ssthresh), (20_000, 20_000));
        clamp(WindowState::Bytes { cwnd: &mut cwnd, ssthresh: &mut ssthresh }, 25_000);
        assert_eq!((cwnd, ssthresh), (20_000, 20_000), "never raised");
        clamp(WindowState::Bytes { cwnd: &mut cwnd, ssthresh: &mut ssthresh }, 0);
        assert_eq!((cwnd, ssthresh), (1, 1), "at least one byte");
    }

    #[test]
    fn a_packet_window_is_lowered_in_whole_segments() {
        let mut w = PacketWindow::new(100 * 1000, 80 * 1000, 1000);
        w.cwnd_cnt = 7;
        clamp(WindowState::Packets(&mut w), 42_999);
        assert_eq!((w.cwnd, w.ssthresh, w.cwnd_cnt), (42, 42, 0));
        w.cwnd_cnt = 5;
        clamp(WindowState::Packets(&mut w), 60_000);
        assert_eq!((w.cwnd, w.ssthresh, w.cwnd_cnt), (42, 42, 5), "a window already below keeps its count");
        clamp(WindowState::Packets(&mut w), 10);
        assert_eq!((w.cwnd, w.ssthresh), (1, 1), "at least one segment");
    }
}
