//! A bulk sender in the manner of iperf/netperf: opens its connection at its start time,
//! writes `write_size` chunks as fast as the socket accepts them until a byte count or a stop
//! time, then closes.

use super::{Milestone, Notice, Socket, Sockets};
use crate::units::SimTime;

/// A bulk sender: writes `write_size` chunks as fast as the socket accepts them.
#[derive(Clone, Debug)]
pub struct BulkSender {
    /// The socket it writes to (the active opener's end of a TCP flow).
    pub socket: Socket,
    /// Bytes per application write (iperf -l; 128 KB by default there, netperf 64 KB).
    pub write_size: u64,
    /// Total bytes to send, if limited.
    pub total: Option<u64>,
    /// Stop writing at this time, if set (iperf -t).
    pub stop_at: Option<SimTime>,
    written: u64,
    chunk_left: u64,
    closed: bool,
}

impl BulkSender {
    /// A bulk sender on `socket`.
    pub fn new(socket: Socket, write_size: u64, total: Option<u64>, stop_at: Option<SimTime>) -> Self {
        BulkSender { socket, write_size, total, stop_at, written: 0, chunk_left: 0, closed: false }
    }

    /// Handle a notice: at the start, open the connection and arm the stop timer; then, and on
    /// every later notice (the socket changed, the stop time came), write what the socket
    /// takes and close once finished writing.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice == Notice::Start {
            io.connect(self.socket);
            if let Some(s) = self.stop_at {
                io.set_timer(s.max(io.now()));
            }
        }
        self.pump(io);
    }

    /// Write as much as the socket takes; close once finished writing.
    #[inline]
    fn pump(&mut self, io: &mut impl Sockets) {
        let (s, now) = (self.socket, io.now());
        loop {
            let want = self.wants(now);
            let space = io.send_space(s);
            if want == 0 || space == 0 {
                break;
            }
            if want < space && io.writes_are_quiet(s) {
                // More than one write to go, and they only queue bytes: make them one.
                let n = self.fill(now, space);
                io.write(s, n);
                break;
            }
            let n = io.write(s, want);
            self.wrote(n);
            if n < want {
                break;
            }
        }
        if self.finished_writing(now) && self.mark_closed() {
            io.close(s);
            io.milestone(s, Milestone::Written, self.written);
        }
    }

    /// Bytes the application wants to hand to the socket next (0 when finished).
    pub fn wants(&mut self, now: SimTime) -> u64 {
        if self.chunk_left == 0 {
            if self.finished_writing(now) {
                return 0;
            }
            let rest = self.total.map_or(u64::MAX, |t| t - self.written);
            self.chunk_left = self.write_size.min(rest);
        }
        self.chunk_left
    }

    /// The socket accepted `n` bytes of the current write.
    pub fn wrote(&mut self, n: u64) {
        self.chunk_left -= n;
        self.written += n;
    }

    /// Hand the socket up to `space` bytes by successive writes, as a loop of `wants` and
    /// `wrote` would with a socket that accepts all it has room for; returns the bytes
    /// written. Leaves the same state as that loop, including a chunk the last `wants` began
    /// when the room ran out exactly at a chunk's end. Constant time, however many chunks.
    pub fn fill(&mut self, now: SimTime, space: u64) -> u64 {
        let first = self.wants(now).min(space);
        self.wrote(first);
        let space = space - first;
        if self.chunk_left > 0 || self.finished_writing(now) || self.write_size == 0 {
            return first;
        }
        // Whole chunks from a chunk boundary: min(write_size, rest) each, tiling the rest.
        let s = self.write_size;
        let rest = self.total.map_or(u64::MAX, |t| t - self.written);
        let b = space.min(rest);
        let (k, r) = (b / s, b % s);
        self.written += b;
        // The chunk in progress (or begun by the last `wants`): its size less what it took.
        self.chunk_left = s.min(rest - k * s) - r;
        first + b
    }

    /// True once no more writes will start (byte count reached or stop time passed).
    pub fn finished_writing(&self, now: SimTime) -> bool {
        self.chunk_left == 0 && (self.total.is_some_and(|t| self.written >= t) || self.stop_at.is_some_and(|s| now >= s))
    }

    /// Mark the socket closed; returns true the first time.
    pub fn mark_closed(&mut self) -> bool {
        !std::mem::replace(&mut self.closed, true)
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bulk_writes_in_chunks_until_total() {
        let mut a = BulkSender::new(Socket::new(0, 0), 100, Some(250), None);
        assert_eq!(a.wants(SimTime::ZERO), 100);
        a.wrote(60);
        assert_eq!(a.wants(SimTime::ZERO), 40, "a write completes before the next starts");
        a.wrote(40);
        a.wrote(0);
        assert_eq!(a.wants(SimTime::ZERO), 100);
        a.wrote(100);
        assert_eq!(a.wants(SimTime::ZERO), 50);
        a.wrote(50);
        assert_eq!(a.wants(SimTime::ZERO), 0);
        assert!(a.finished_writing(SimTime::ZERO));
        assert!(a.mark_closed() && !a.mark_closed());
    }

    /// The loop `fill` stands for: wants/wrote until the room or the application runs out.
    fn fill_by_writes(a: &mut BulkSender, now: SimTime, mut space: u64) -> u64 {
        let mut n = 0;
        loop {
            let want = a.wants(now);
            if want == 0 || space == 0 {
                return n;
            }
            let k = want.min(space);
            a.wrote(k);
            space -= k;
            n += k;
            if k < want {
                return n;
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn fill_matches_writing_chunk_by_chunk(
            write_size in 1u64..50,
            total in proptest::option::of(0u64..400),
            stop in proptest::option::of(0u64..6),
            fills in proptest::collection::vec((0u64..8, 0u64..300), 1..12),
        ) {
            let stop_at = stop.map(SimTime);
            let mut a = BulkSender::new(Socket::new(0, 0), write_size, total, stop_at);
            let mut b = a.clone();
            for (t, space) in fills {
                let now = SimTime(t);
                proptest::prop_assert_eq!(a.fill(now, space), fill_by_writes(&mut b, now, space));
                proptest::prop_assert_eq!((a.written, a.chunk_left), (b.written, b.chunk_left));
                proptest::prop_assert_eq!(a.finished_writing(now), b.finished_writing(now));
            }
        }
    }
}
