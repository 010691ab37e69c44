//! A constant-bit-rate UDP source: one datagram of `packet_size` IP bytes every
//! `packet_size·8/rate` seconds from its start, timed from the start so the rate never drifts.

use super::{Milestone, Notice, Socket, Sockets};
use crate::units::{BitRate, SimDuration, SimTime};

/// A constant-bit-rate UDP source.
#[derive(Clone, Debug)]
pub struct CbrSource {
    /// The socket it sends from (the source end of a UDP flow).
    pub socket: Socket,
    /// Sending rate (IP bytes).
    pub rate: BitRate,
    /// IP packet size in bytes.
    pub packet_size: u32,
    /// First send time.
    pub start: SimTime,
    /// Stop sending at this time, if set.
    pub stop_at: Option<SimTime>,
    /// Datagrams sent.
    pub sent: u64,
}

impl CbrSource {
    /// Send time of datagram `k`.
    pub fn time_of(&self, k: u64) -> SimTime {
        self.start + self.rate.tx_time_bits(k * self.packet_size as u64 * 8)
    }

    /// Time of the next datagram, if the source is still running.
    pub fn next_time(&self) -> Option<SimTime> {
        let t = self.time_of(self.sent);
        self.stop_at.is_none_or(|s| t < s).then_some(t)
    }

    /// Handle a notice: at the start, arm the timer for the first datagram (or finish at once
    /// if there is none); at each timer, send one datagram and arm the next, finishing the
    /// flow after the last.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice == Notice::Timer {
            io.send_datagram(self.socket, self.packet_size);
            self.sent += 1;
        }
        if !matches!(notice, Notice::Start | Notice::Timer) {
            return;
        }
        match self.next_time() {
            Some(t) => io.set_timer(t.max(io.now())),
            None => {
                io.finish_flow(self.socket);
                io.milestone(self.socket, Milestone::Sent, self.sent);
            }
        }
    }

    /// Interval between datagrams (for reporting).
    pub fn interval(&self) -> SimDuration {
        self.rate.tx_time_bits(self.packet_size as u64 * 8)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cbr_timing_is_exact() {
        let c = CbrSource { socket: Socket::new(0, 0), rate: BitRate(10_000_000), packet_size: 1250, start: SimTime(5), stop_at: Some(SimTime(3_000_000_005)), sent: 0 };
        assert_eq!(c.interval(), SimDuration::from_millis(1));
        assert_eq!(c.time_of(1000), SimTime(1_000_000_000_005));
        let mut c = c;
        c.sent = 3;
        assert_eq!(c.next_time(), None);
    }
}
