//! The receiving end of a bulk transfer. By default the connection reads everything as it
//! arrives (as iperf's server does); a *paced* sink reads itself, at most `rate` (a receiver
//! bound by its disk or CPU): it reads up to `chunk` bytes, waits the chunk's time at the rate,
//! and reads again, so unread bytes fill the receive buffer and the advertised window closes.
//! Once the peer has closed (and, paced, everything is read), it closes too and the transfer
//! is complete.

use super::{Milestone, Notice, Socket, Sockets};
use crate::units::{BitRate, SimTime};

/// A sink on one socket.
#[derive(Clone, Debug)]
pub struct Sink {
    /// The socket it reads (the destination end of a TCP flow).
    pub socket: Socket,
    closed: bool,
    pace: Option<Pace>,
}

/// A paced sink's reading.
#[derive(Clone, Copy, Debug)]
struct Pace {
    /// Reading rate, bit/s of payload.
    rate: BitRate,
    /// Bytes read at a time, at least 1.
    chunk: u64,
    /// Until when the last read keeps it busy (its timer is set then).
    busy_until: Option<SimTime>,
}

impl Sink {
    /// A sink on `socket` whose connection reads on arrival.
    pub fn new(socket: Socket) -> Self {
        Sink { socket, closed: false, pace: None }
    }

    /// A sink on `socket` that reads itself at `rate` bit/s, `chunk` bytes at a time.
    pub fn paced(socket: Socket, rate: BitRate, chunk: u64) -> Self {
        assert!(rate.0 > 0 && chunk > 0, "a paced sink reads at a positive rate");
        Sink { socket, closed: false, pace: Some(Pace { rate, chunk, busy_until: None }) }
    }

    /// True when it reads itself (`Application::reads_itself`).
    pub fn is_paced(&self) -> bool {
        self.pace.is_some()
    }

    /// Handle a notice: a paced sink reads when not busy; when its socket's peer has closed
    /// (and everything was read), close (once) and finish the flow.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        let s = self.socket;
        match notice {
            Notice::Socket(x) if x != s => return,
            Notice::Start => return,
            _ => {}
        }
        if let Some(p) = self.pace.as_mut() {
            let now = io.now();
            if notice == Notice::Timer && p.busy_until == Some(now) {
                p.busy_until = None;
            }
            if p.busy_until.is_none() {
                let n = io.read(s, p.chunk);
                if n > 0 {
                    let until = now + p.rate.tx_time(n);
                    p.busy_until = Some(until);
                    io.set_timer(until);
                }
            }
        }
        if !self.closed && io.peer_closed(s) {
            self.closed = true;
            io.close(s);
            io.finish_flow(s);
            io.milestone(s, Milestone::Received, io.received(s));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::fake::{Did, FakeSockets};
    use super::super::Milestone;
    use super::*;
    use crate::units::SimDuration;

    #[test]
    fn closes_once_after_the_peer_and_finishes_the_flow() {
        let s = Socket::new(3, 1);
        let mut sink = Sink::new(s);
        let mut io = FakeSockets::default();
        sink.on(Notice::Socket(s), &mut io);
        assert!(io.did.is_empty(), "the peer is still open");
        io.peer_closed = true;
        sink.on(Notice::Socket(Socket::new(4, 1)), &mut io);
        assert!(io.did.is_empty(), "another socket's notice");
        sink.on(Notice::Socket(s), &mut io);
        sink.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Close(s), Did::Finish(s), Did::Milestone(s, Milestone::Received, 0)]);
    }

    #[test]
    fn a_paced_sink_reads_a_chunk_then_waits_its_time_at_the_rate() {
        // 8 Mb/s, 1000-byte chunks: one chunk per millisecond, whatever has arrived.
        let s = Socket::new(0, 1);
        let mut sink = Sink::paced(s, BitRate(8_000_000), 1_000);
        let mut io = FakeSockets { readable: 2_500, ..FakeSockets::default() };
        let ms = SimDuration::from_millis(1);
        sink.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Read(s, 1_000), Did::Timer(SimTime::ZERO + ms)]);
        io.did.clear();
        sink.on(Notice::Socket(s), &mut io);
        assert!(io.did.is_empty(), "busy: more arrivals wait for the timer");
        io.now = SimTime::ZERO + ms;
        sink.on(Notice::Timer, &mut io);
        io.now = SimTime(ms.0 * 2);
        sink.on(Notice::Timer, &mut io);
        assert_eq!(io.did, vec![Did::Read(s, 1_000), Did::Timer(SimTime(ms.0 * 2)), Did::Read(s, 500), Did::Timer(SimTime(ms.0 * 2 + ms.0 / 2))]);
        io.did.clear();
        io.now = SimTime(ms.0 * 2 + ms.0 / 2);
        sink.on(Notice::Timer, &mut io);
        assert_eq!(io.did, vec![Did::Read(s, 0)], "nothing left: idle until the next arrival");
        io.did.clear();
        io.readable = 10;
        io.peer_closed = true;
        sink.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did[0], Did::Read(s, 10));
        assert!(io.did.contains(&Did::Close(s)) && io.did.contains(&Did::Finish(s)));
    }
}
