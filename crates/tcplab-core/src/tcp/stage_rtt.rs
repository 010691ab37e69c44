//! RTT samples timed by an output stage (a `Variant` that holds segments before they reach the
//! wire, such as ImTCP's measurement stage): from the stage's own release of a data segment
//! to the ACK that covers it, so the time a segment waited in the stage is not in the sample.
//! The connection's own samples (`AckSample::rtt`) start when `tcp_output` stamps the segment,
//! before any stage, as FreeBSD's do (dev/p3/EVIDENCE.md §5); a stage publishes these as
//! `CcInput::StageRtt` for a controller that asks for them (ImTCP-bg's `rtt_source = "stage"`).
//!
//! The rule, in the spirit of Karn's: an ACK that advances the cumulative acknowledgement
//! gives one sample, ACK time − release time of the newest data segment it covers, unless any
//! segment it covers was retransmitted (a retransmission marks every logged segment it
//! overlaps). ACKs that do not advance (duplicates, pure window updates) give none.

use std::collections::VecDeque;

use crate::net::packet::TcpHeader;
use crate::units::{SimDuration, SimTime};

/// One released data segment: its sequence range and release time, and whether any of it was
/// sent again.
#[derive(Clone, Copy, Debug)]
struct Released {
    start: u64,
    end: u64,
    at: SimTime,
    retransmitted: bool,
}

/// The release times of the data segments a stage let go and their ACKs not yet in.
#[derive(Clone, Debug, Default)]
pub struct ReleaseLog {
    /// New data in release (= sequence) order.
    sent: VecDeque<Released>,
    /// The highest cumulative ACK seen.
    last_ack: u64,
}

impl ReleaseLog {
    /// An empty log.
    pub fn new() -> Self {
        ReleaseLog::default()
    }

    /// The stage handed `seg` to the wire at `now`. Segments without payload are not logged; a
    /// retransmission marks the logged segments it overlaps (their ACKs give no sample).
    pub fn on_release(&mut self, now: SimTime, seg: &TcpHeader) {
        if seg.len == 0 {
            return;
        }
        let (start, end) = (seg.seq, seg.seq + seg.len as u64);
        if seg.retransmit {
            for r in self.sent.iter_mut().filter(|r| r.start < end && start < r.end) {
                r.retransmitted = true;
            }
            return;
        }
        if end <= self.last_ack || self.sent.back().is_some_and(|r| end <= r.end) {
            return; // Already acknowledged or already logged: not new data.
        }
        self.sent.push_back(Released { start, end, at: now, retransmitted: false });
    }

    /// An ACK with cumulative acknowledgement `ack` arrived at `now`: its sample, if it gives
    /// one (see the module's rule).
    pub fn on_ack(&mut self, now: SimTime, ack: u64) -> Option<SimDuration> {
        if ack <= self.last_ack {
            return None;
        }
        self.last_ack = ack;
        let (mut newest, mut clean) = (None, true);
        while self.sent.front().is_some_and(|r| r.end <= ack) {
            let r = self.sent.pop_front().expect("checked");
            clean &= !r.retransmitted;
            newest = Some(r.at);
        }
        if clean {
            newest.map(|at| now.since(at))
        } else {
            None
        }
    }

    /// Segments logged and not yet acknowledged.
    pub fn len(&self) -> usize {
        self.sent.len()
    }

    /// True when nothing is logged.
    pub fn is_empty(&self) -> bool {
        self.sent.is_empty()
    }
}

#[cfg(test)]
#[path = "stage_rtt_tests.rs"]
mod tests;
