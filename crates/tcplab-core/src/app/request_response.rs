//! Request/response over one persistent TCP connection: a client (an RPC or key-value client,
//! an HTTP/1.1 client pipelining its requests) sends small requests as they arrive, each
//! naming the size of the response it wants; the server answers each request, in order, with
//! that many bytes. Requests arrive by a Poisson process or evenly spaced (open loop: they do
//! not wait for earlier answers, so a long response delays the ones queued behind it on the
//! connection, as on a real one), or one at a time with a think time after each answer
//! (closed loop). Every answered request is a message: the client reports its id, sizes,
//! arrival time and the yardstick's ideal time (`Sockets::message`), the `messages` trace.
//!
//! Requests travel as records (`Sockets::write_record`, kind `REQUEST`, `arg` = the response's
//! bytes); responses are plain bytes, and the client, which knows every size it asked for,
//! finds each response's end in the stream by counting.

use std::collections::VecDeque;
use std::sync::Arc;

use super::workload::{Arrivals, SizeDist};
use super::{Notice, Record, Socket, Sockets};
use crate::engine::Rng;
use crate::units::{SimDuration, SimTime};

/// The record kind of a request.
pub const REQUEST: u8 = 2;

/// When a client's requests come.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RequestArrivals {
    /// Open loop: each request at its arrival, whatever is still unanswered.
    Open(Arrivals),
    /// Closed loop: the first request at the start, each next one `think` after the answer
    /// to the last.
    Closed {
        /// The pause between an answer and the next request.
        think: SimDuration,
    },
}

/// The least time a message could take on an empty network (the request across, the
/// response back, each segment back to back): its slowdown's denominator. Built where the
/// paths are known (`scenario::build::request_response`).
pub trait MessageYardstick: std::fmt::Debug + Send + Sync {
    /// The ideal time of a `request`-byte request answered by `response` bytes.
    fn ideal(&self, request: u64, response: u64) -> SimDuration;
}

/// One answered request (a row of the `messages` trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Message {
    /// The client's request number on its connection, from 0.
    pub id: u64,
    /// Request bytes.
    pub request: u64,
    /// Response bytes.
    pub response: u64,
    /// When the request arrived at the client.
    pub issued: SimTime,
    /// The yardstick's time for it.
    pub ideal: SimDuration,
}

/// A request sent and not yet answered.
#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u64,
    issued: SimTime,
    response: u64,
    /// The response's last byte is byte `end` of the server's stream (counting from 1).
    end: u64,
}

/// The client: its end of one connection.
#[derive(Clone, Debug)]
pub struct RequestClient {
    /// The client's socket (the flow's source end; it opens the connection).
    pub socket: Socket,
    request: u64,
    responses: SizeDist,
    arrivals: RequestArrivals,
    rng_arrivals: Rng,
    rng_sizes: Rng,
    /// Requests to make (none: until the stop time).
    limit: Option<u64>,
    stop_at: Option<SimTime>,
    yardstick: Arc<dyn MessageYardstick>,
    /// Requests made so far.
    issued: u64,
    /// Requests answered so far.
    answered: u64,
    /// Requests made that did not fit the send buffer yet, in order.
    unsent: VecDeque<Record>,
    /// Requests made and not yet answered, in order.
    pending: VecDeque<Pending>,
    /// Response bytes asked for so far.
    asked: u64,
    /// No more requests will be made.
    no_more: bool,
    closed: bool,
}

impl RequestClient {
    /// A client on `socket` sending `request`-byte requests for responses drawn from
    /// `responses` (stream `rng_sizes`) as `arrivals` says (stream `rng_arrivals`), `limit`
    /// of them or until `stop_at`, each measured against `yardstick`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        socket: Socket,
        request: u64,
        responses: SizeDist,
        arrivals: RequestArrivals,
        (rng_arrivals, rng_sizes): (Rng, Rng),
        limit: Option<u64>,
        stop_at: Option<SimTime>,
        yardstick: Arc<dyn MessageYardstick>,
    ) -> Self {
        assert!(request > 0 && limit != Some(0), "a client makes requests of at least 1 byte");
        RequestClient {
            socket,
            request,
            responses,
            arrivals,
            rng_arrivals,
            rng_sizes,
            limit,
            stop_at,
            yardstick,
            issued: 0,
            answered: 0,
            unsent: VecDeque::new(),
            pending: VecDeque::new(),
            asked: 0,
            no_more: false,
            closed: false,
        }
    }

    /// Requests answered so far.
    pub fn answered(&self) -> u64 {
        self.answered
    }

    /// Handle a notice: open the connection at the start and arm the first arrival; at each
    /// arrival make a request and arm the next; on a socket change send what waited for room,
    /// report every response complete, and close after the last.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        match notice {
            Notice::Start => {
                io.connect(self.socket);
                match self.arrivals {
                    RequestArrivals::Open(a) => {
                        let first = a.first(&mut self.rng_arrivals);
                        self.arm(io.now() + first, io);
                    }
                    RequestArrivals::Closed { .. } => self.issue(io),
                }
            }
            Notice::Timer => {
                self.issue(io);
                if let RequestArrivals::Open(a) = self.arrivals {
                    let gap = a.gap(&mut self.rng_arrivals);
                    self.arm(io.now() + gap, io);
                }
            }
            Notice::Socket(_) => {}
        }
        self.flush(io);
        self.collect(io);
    }

    /// Whether a request may still be made at `at`: neither the limit nor the stop time has
    /// come.
    fn may_issue(&self, at: SimTime) -> bool {
        !(self.limit.is_some_and(|l| self.issued >= l) || self.stop_at.is_some_and(|s| at >= s))
    }

    /// Set the timer for a request at `at`, or, past the limit or the stop time, make no more.
    fn arm(&mut self, at: SimTime, io: &mut impl Sockets) {
        if self.may_issue(at) {
            io.set_timer(at);
        } else {
            self.no_more = true;
        }
    }

    /// Make one request now (unless the limit or the stop time has come).
    fn issue(&mut self, io: &mut impl Sockets) {
        let now = io.now();
        if !self.may_issue(now) {
            self.no_more = true;
            return;
        }
        let response = self.responses.draw(&mut self.rng_sizes).max(1);
        self.asked += response;
        self.pending.push_back(Pending { id: self.issued, issued: now, response, end: self.asked });
        self.unsent.push_back(Record { kind: REQUEST, tag: self.issued as u32, arg: response });
        self.issued += 1;
        if self.limit.is_some_and(|l| self.issued >= l) {
            self.no_more = true;
        }
    }

    /// Write the requests waiting for room, in order, while they fit.
    fn flush(&mut self, io: &mut impl Sockets) {
        while let Some(&r) = self.unsent.front() {
            if !io.write_record(self.socket, self.request, r) {
                break;
            }
            self.unsent.pop_front();
        }
    }

    /// Report every response that has arrived in full; in a closed loop make (or arm) the
    /// next request; close once the last is answered.
    fn collect(&mut self, io: &mut impl Sockets) {
        let got = io.received(self.socket);
        while let Some(p) = self.pending.front().copied().filter(|p| p.end <= got) {
            self.pending.pop_front();
            self.answered += 1;
            let ideal = self.yardstick.ideal(self.request, p.response);
            io.message(self.socket, super::Message { id: p.id, request: self.request, response: p.response, issued: p.issued, ideal });
            if let RequestArrivals::Closed { think } = self.arrivals {
                if think == SimDuration::ZERO {
                    self.issue(io);
                    self.flush(io);
                } else {
                    let at = io.now() + think;
                    self.arm(at, io);
                }
            }
        }
        if self.no_more && self.pending.is_empty() && !self.closed {
            self.closed = true;
            io.close(self.socket);
            io.finish_flow(self.socket);
        }
    }
}

/// The server: the other end of a client's connection.
#[derive(Clone, Debug)]
pub struct RequestServer {
    /// The server's socket (the flow's destination end).
    pub socket: Socket,
    /// Response bytes asked for and not yet written.
    owed: u64,
    closed: bool,
}

impl RequestServer {
    /// A server on `socket`.
    pub fn new(socket: Socket) -> Self {
        RequestServer { socket, owed: 0, closed: false }
    }

    /// Handle a notice: take every request that has arrived in full, write what is owed as
    /// the send buffer takes it, and close after the client has closed and all is written.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if !matches!(notice, Notice::Socket(_)) || self.closed {
            return;
        }
        while let Some((r, _)) = io.next_record(self.socket) {
            if r.kind == REQUEST {
                self.owed += r.arg;
            }
        }
        if self.owed > 0 {
            self.owed -= io.write(self.socket, self.owed);
        }
        if self.owed == 0 && io.peer_closed(self.socket) {
            self.closed = true;
            io.close(self.socket);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::fake::{Did, FakeSockets};

    #[derive(Debug)]
    struct Flat;
    impl MessageYardstick for Flat {
        fn ideal(&self, request: u64, response: u64) -> SimDuration {
            SimDuration(request + response)
        }
    }

    fn client(arrivals: RequestArrivals, limit: Option<u64>) -> RequestClient {
        RequestClient::new(Socket::new(0, 0), 100, SizeDist::Fixed(1000), arrivals, (Rng::from_seed(1), Rng::from_seed(2)), limit, None, Arc::new(Flat))
    }

    #[test]
    fn open_loop_requests_pipeline_and_answers_are_found_by_counting() {
        let mut c = client(RequestArrivals::Open(Arrivals::Periodic { rate: 1000.0 }), Some(3));
        let mut io = FakeSockets { space: 1 << 20, ..Default::default() };
        c.on(Notice::Start, &mut io);
        // Periodic: the first at the start; the next armed 1 ms on.
        assert_eq!(io.did[0], Did::Connect(Socket::new(0, 0)));
        assert_eq!(io.did[1], Did::Timer(SimTime(0)));
        for k in 0..3u64 {
            io.now = SimTime(k * 1_000_000_000);
            c.on(Notice::Timer, &mut io);
        }
        let writes: Vec<_> = io.did.iter().filter_map(|d| if let Did::WriteRecord(_, b, r) = d { Some((*b, r.arg, r.tag)) } else { None }).collect();
        assert_eq!(writes, vec![(100, 1000, 0), (100, 1000, 1), (100, 1000, 2)], "three requests, none waiting for an answer");
        // 1,999 bytes back: only the first response is complete.
        io.now = SimTime(5_000_000_000);
        io.received = 1999;
        io.did.clear();
        c.on(Notice::Socket(Socket::new(0, 0)), &mut io);
        let msg = super::super::Message { id: 0, request: 100, response: 1000, issued: SimTime(0), ideal: SimDuration(1100) };
        assert_eq!(io.did, vec![Did::Message(Socket::new(0, 0), msg)]);
        io.received = 3000;
        io.did.clear();
        c.on(Notice::Socket(Socket::new(0, 0)), &mut io);
        assert_eq!(io.did.len(), 4, "two messages, then close and finish: {:?}", io.did);
        assert!(matches!(io.did[1], Did::Message(_, m) if m.id == 2 && m.issued == SimTime(2_000_000_000)));
        assert_eq!(&io.did[2..], &[Did::Close(Socket::new(0, 0)), Did::Finish(Socket::new(0, 0))]);
        assert_eq!(c.answered(), 3);
    }

    #[test]
    fn closed_loop_waits_for_each_answer_and_thinks() {
        let mut c = client(RequestArrivals::Closed { think: SimDuration(7) }, Some(2));
        let mut io = FakeSockets { space: 1 << 20, ..Default::default() };
        c.on(Notice::Start, &mut io);
        assert_eq!(io.did.iter().filter(|d| matches!(d, Did::WriteRecord(..))).count(), 1, "one request at the start");
        io.now = SimTime(50);
        io.received = 1000;
        io.did.clear();
        c.on(Notice::Socket(Socket::new(0, 0)), &mut io);
        assert!(matches!(io.did[0], Did::Message(..)));
        assert_eq!(io.did[1], Did::Timer(SimTime(57)), "the next request after the think time");
        io.now = SimTime(57);
        io.did.clear();
        c.on(Notice::Timer, &mut io);
        assert_eq!(io.did, vec![Did::WriteRecord(Socket::new(0, 0), 100, Record { kind: REQUEST, tag: 1, arg: 1000 })]);
    }

    #[test]
    fn a_full_send_buffer_defers_requests_in_order() {
        let mut c = client(RequestArrivals::Open(Arrivals::Periodic { rate: 1000.0 }), None);
        let mut io = FakeSockets { space: 150, ..Default::default() };
        c.on(Notice::Start, &mut io);
        c.on(Notice::Timer, &mut io);
        c.on(Notice::Timer, &mut io);
        assert_eq!(io.did.iter().filter(|d| matches!(d, Did::WriteRecord(..))).count(), 1, "the second waits for room");
        io.space = 1000;
        io.did.clear();
        c.on(Notice::Socket(Socket::new(0, 0)), &mut io);
        assert_eq!(io.did, vec![Did::WriteRecord(Socket::new(0, 0), 100, Record { kind: REQUEST, tag: 1, arg: 1000 })]);
    }

    #[test]
    fn the_server_answers_each_request_with_its_size_and_closes_after_the_client() {
        let s = Socket::new(0, 1);
        let mut srv = RequestServer::new(s);
        let mut io = FakeSockets { space: 1500, ..Default::default() };
        io.records.extend([(Record { kind: REQUEST, tag: 0, arg: 1000 }, 100), (Record { kind: REQUEST, tag: 1, arg: 2000 }, 100)]);
        srv.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Write(s, 1500)], "as much as the buffer takes");
        io.space = 10_000;
        io.peer_closed = true;
        io.did.clear();
        srv.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Write(s, 1500), Did::Close(s)]);
    }
}
