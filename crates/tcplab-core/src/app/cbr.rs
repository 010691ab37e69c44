//! A constant-bit-rate UDP source, at one rate or by a schedule of piecewise-constant rates.
//! Piece j runs from `start + at_j` until the next piece's start (the last until the source
//! stops); its m-th datagram (m = 0, 1, …) leaves at `start + at_j + m·packet_size·8/rate_j`,
//! computed from the piece's start with its own exact rate, so times never drift: a datagram
//! belongs to the piece it falls in, and a rate of 0 is a silent piece. One piece at 0 is
//! the plain constant-rate source (`CbrSource::constant`).

use std::sync::Arc;

use super::{Milestone, Notice, Socket, Sockets};
use crate::units::{BitRate, SimDuration, SimTime};

/// One piece of a CBR schedule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CbrPiece {
    /// Start of the piece, measured from the source's start.
    pub at: SimDuration,
    /// Sending rate during the piece (IP bytes); 0: silent.
    pub rate: BitRate,
}

/// A constant-bit-rate source.
#[derive(Clone, Debug)]
pub struct CbrSource {
    /// The socket it sends from (the source end of a UDP flow).
    pub socket: Socket,
    /// The schedule: at least one piece, the first at 0, `at` strictly increasing.
    schedule: Arc<[CbrPiece]>,
    /// IP packet size in bytes.
    pub packet_size: u32,
    /// First send time; the schedule's times are measured from it.
    pub start: SimTime,
    /// Stop sending at this time, if set.
    pub stop_at: Option<SimTime>,
    /// Datagrams sent.
    pub sent: u64,
    /// The piece the next datagram falls in, and the datagrams already sent in it.
    piece: usize,
    in_piece: u64,
}

impl CbrSource {
    /// A source following `schedule` from `start`. Panics on a schedule that is empty, does
    /// not begin at 0 or whose times do not increase (resolution refuses them).
    pub fn new(socket: Socket, schedule: Arc<[CbrPiece]>, packet_size: u32, start: SimTime, stop_at: Option<SimTime>) -> Self {
        assert!(schedule.first().is_some_and(|p| p.at == SimDuration::ZERO), "a CBR schedule begins at 0");
        assert!(schedule.windows(2).all(|w| w[0].at < w[1].at), "a CBR schedule's times increase");
        let mut c = CbrSource { socket, schedule, packet_size, start, stop_at, sent: 0, piece: 0, in_piece: 0 };
        c.settle();
        c
    }

    /// A source at one `rate` from `start`: datagram k at `start + k·packet_size·8/rate`.
    pub fn constant(socket: Socket, rate: BitRate, packet_size: u32, start: SimTime, stop_at: Option<SimTime>) -> Self {
        CbrSource::new(socket, Arc::new([CbrPiece { at: SimDuration::ZERO, rate }]), packet_size, start, stop_at)
    }

    /// The schedule.
    pub fn schedule(&self) -> &[CbrPiece] {
        &self.schedule
    }

    /// The time of the next datagram of the current piece, ignoring where the piece ends.
    fn candidate(&self) -> SimTime {
        let p = self.schedule[self.piece];
        self.start + p.at + p.rate.tx_time_bits(self.in_piece * self.packet_size as u64 * 8)
    }

    /// Move on to the piece the next datagram falls in: past every piece that is silent or
    /// whose next datagram would fall at or after the next piece's start.
    fn settle(&mut self) {
        while let Some(next) = self.schedule.get(self.piece + 1) {
            if self.schedule[self.piece].rate.0 > 0 && self.candidate() < self.start + next.at {
                return;
            }
            self.piece += 1;
            self.in_piece = 0;
        }
    }

    /// Time of the next datagram, if the source is still running (none once the stop time is
    /// reached, or in a silent last piece).
    pub fn next_time(&self) -> Option<SimTime> {
        if self.schedule[self.piece].rate.0 == 0 {
            return None;
        }
        let t = self.candidate();
        self.stop_at.is_none_or(|s| t < s).then_some(t)
    }

    /// Handle a notice: at the start, arm the timer for the first datagram (or finish at once
    /// if there is none); at each timer, send one datagram and arm the next, finishing the
    /// flow after the last.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice == Notice::Timer {
            io.send_datagram(self.socket, self.packet_size);
            self.sent += 1;
            self.in_piece += 1;
            self.settle();
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
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The send times a source makes, by stepping it as its timer would.
    fn times(mut c: CbrSource) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(t) = c.next_time() {
            out.push(t.0);
            c.sent += 1;
            c.in_piece += 1;
            c.settle();
        }
        out
    }

    fn piece(at_ps: u64, bps: u64) -> CbrPiece {
        CbrPiece { at: SimDuration(at_ps), rate: BitRate(bps) }
    }

    #[test]
    fn cbr_timing_is_exact() {
        let c = CbrSource::constant(Socket::new(0, 0), BitRate(10_000_000), 1250, SimTime(5), Some(SimTime(3_000_000_005)));
        // 1250 B at 10 Mb/s: one per ms, the first at the start; the stop at 3 ms excludes the fourth.
        assert_eq!(times(c), vec![5, 1_000_000_005, 2_000_000_005]);
        let long = CbrSource::constant(Socket::new(0, 0), BitRate(10_000_000), 1250, SimTime(5), None);
        assert_eq!(long.candidate(), SimTime(5));
        let mut c = long;
        c.in_piece = 1000;
        assert_eq!(c.candidate(), SimTime(1_000_000_000_005), "datagram 1000 at exactly 1 s");
    }

    /// Datagram times per piece, by hand: 1250-byte datagrams (10,000 bits), start at 7 ps.
    /// - [0, 3.5 ms) at 10 Mb/s: one per 1 ms → 0, 1, 2, 3 ms;
    /// - [3.5, 5 ms) silent;
    /// - [5, 10 ms) at 4 Mb/s: one per 2.5 ms → 5, 7.5 ms (10 ms is the next piece's start,
    ///   so the third falls there, not here);
    /// - [10 ms, …) at 3 Mb/s: 10,000 bits take 3,333,333,333⅓ ps, rounded up per datagram
    ///   from the piece's start: 10 ms + 3,333,333,334, + 6,666,666,667 (not 2 × …334: no
    ///   drift), + 10,000,000,000 = 20 ms, which the stop at 20 ms excludes.
    #[test]
    fn schedule_times_are_exact_per_piece() {
        let ms = 1_000_000_000u64;
        let s: Arc<[CbrPiece]> = Arc::new([piece(0, 10_000_000), piece(3_500_000_000, 0), piece(5 * ms, 4_000_000), piece(10 * ms, 3_000_000)]);
        let c = CbrSource::new(Socket::new(0, 0), s.clone(), 1250, SimTime(7), Some(SimTime(20 * ms + 7)));
        let want = vec![7, ms + 7, 2 * ms + 7, 3 * ms + 7, 5 * ms + 7, 7_500_000_007, 10 * ms + 7, 10 * ms + 3_333_333_334 + 7, 10 * ms + 6_666_666_667 + 7];
        assert_eq!(times(c), want);
        // Without a stop, the 3 Mb/s piece goes on: datagram m of it at 10 ms + ⌈m·10⁴·10¹²/(3·10⁶)⌉.
        let open = times_upto(CbrSource::new(Socket::new(0, 0), s, 1250, SimTime(7), None), 30);
        for (m, t) in open[6..].iter().enumerate() {
            let m = m as u128;
            assert_eq!(*t as u128, 10 * ms as u128 + 7 + (m * 10_000 * 1_000_000_000_000).div_ceil(3_000_000), "datagram {m} of the last piece");
        }
    }

    fn times_upto(mut c: CbrSource, n: usize) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(t) = c.next_time().filter(|_| out.len() < n) {
            out.push(t.0);
            c.in_piece += 1;
            c.settle();
        }
        out
    }

    #[test]
    fn silent_pieces_start_end_and_stand_alone() {
        let ms = 1_000_000_000u64;
        // Silent first, then 1250 B at 10 Mb/s for 2 ms, then silent for good: the source is done.
        let s: Arc<[CbrPiece]> = Arc::new([piece(0, 0), piece(4 * ms, 10_000_000), piece(6 * ms, 0)]);
        assert_eq!(times(CbrSource::new(Socket::new(0, 0), s, 1250, SimTime(0), None)), vec![4 * ms, 5 * ms]);
        let s: Arc<[CbrPiece]> = Arc::new([piece(0, 0)]);
        assert_eq!(times(CbrSource::new(Socket::new(0, 0), s, 1250, SimTime(0), None)), Vec::<u64>::new());
        // A piece too short for any datagram but its first: one each.
        let s: Arc<[CbrPiece]> = Arc::new([piece(0, 10_000_000), piece(1, 10_000_000), piece(2, 0)]);
        assert_eq!(times(CbrSource::new(Socket::new(0, 0), s, 1250, SimTime(0), None)), vec![0, 1]);
    }
}
