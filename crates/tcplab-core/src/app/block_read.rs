//! Barrier-synchronised block reads (study 001, TCP incast): a client reads blocks striped over
//! N servers; each block is one request per server, answered by one SRU (server request unit)
//! per server, and the next block is requested only once every SRU of the current one has
//! arrived (the barrier). `BlockReader` is the client, owning one socket per server; each
//! server runs a `BlockServer` on the other end of its socket.
//!
//! The requests travel on the same connections as the data, client to server, each written
//! as a record (`Sockets::write_record`); a server sends one SRU for every request record
//! whose last byte has arrived. Each completed block is a `Block`
//! milestone (bytes: the block's payload), so per-block completion times are in the
//! `milestones` trace.

use super::{Milestone, Notice, Record, Socket, Sockets};

/// The record kind of a block request.
pub const REQUEST: u8 = 1;

/// The client of a striped block read.
#[derive(Clone, Debug)]
pub struct BlockReader {
    /// One socket per server (the client's end of each connection; the client opens them).
    pub sockets: Vec<Socket>,
    /// Bytes each server returns per block (the SRU), > 0.
    pub sru_bytes: u64,
    /// Bytes of one request, > 0.
    pub request_bytes: u64,
    /// Blocks to read, > 0.
    pub blocks: u64,
    /// Blocks completed so far.
    done: u64,
    /// Requests still to write per socket (a full send buffer defers one).
    owed: Vec<u64>,
    /// The first block has been requested (every connection was open).
    started: bool,
    closed: bool,
}

impl BlockReader {
    /// A reader of `blocks` blocks of `sru_bytes` per server over `sockets`, each block asked
    /// for with `request_bytes` per server.
    pub fn new(sockets: Vec<Socket>, sru_bytes: u64, request_bytes: u64, blocks: u64) -> Self {
        assert!(sru_bytes > 0 && request_bytes > 0 && blocks > 0 && !sockets.is_empty());
        let n = sockets.len();
        BlockReader { sockets, sru_bytes, request_bytes, blocks, done: 0, owed: vec![0; n], started: false, closed: false }
    }

    /// Blocks completed so far.
    pub fn blocks_done(&self) -> u64 {
        self.done
    }

    /// Handle a notice: on start, open every connection; once all are open (a storage
    /// client's sessions exist before it reads), request the first block; on a socket change,
    /// finish writing owed requests, and once every server's SRU of the current block has
    /// arrived, record the block and request the next (or close after the last).
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        match notice {
            Notice::Start => {
                for &s in &self.sockets {
                    io.connect(s);
                }
                self.start_when_open(io);
            }
            Notice::Socket(_) if !self.started => self.start_when_open(io),
            Notice::Socket(_) if !self.closed => {
                self.write_owed(io);
                let want = (self.done + 1) * self.sru_bytes;
                if self.sockets.iter().all(|&s| io.received(s) >= want) {
                    self.done += 1;
                    io.milestone(self.sockets[0], Milestone::Block, self.sru_bytes * self.sockets.len() as u64);
                    if self.done < self.blocks {
                        self.request_block(io);
                    } else {
                        self.closed = true;
                        for &s in &self.sockets {
                            io.close(s);
                            io.finish_flow(s);
                        }
                    }
                }
            }
            Notice::Socket(_) | Notice::Timer => {}
        }
    }

    /// Request the first block once every connection is open.
    fn start_when_open(&mut self, io: &mut impl Sockets) {
        if self.sockets.iter().all(|&s| io.established(s)) {
            self.started = true;
            self.request_block(io);
        }
    }

    /// Owe one request to every server and write what the send buffers take.
    fn request_block(&mut self, io: &mut impl Sockets) {
        for o in &mut self.owed {
            *o += 1;
        }
        self.write_owed(io);
    }

    /// Write the owed requests, each a whole record (one that does not fit waits for room).
    fn write_owed(&mut self, io: &mut impl Sockets) {
        let request = Record { kind: REQUEST, tag: self.done as u32, arg: 0 };
        for (i, &s) in self.sockets.iter().enumerate() {
            while self.owed[i] > 0 && io.write_record(s, self.request_bytes, request) {
                self.owed[i] -= 1;
            }
        }
    }
}

/// A server of a striped block read: one SRU for every whole request received.
#[derive(Clone, Debug)]
pub struct BlockServer {
    /// Its socket (the server's end of the connection; it listens).
    pub socket: Socket,
    /// Bytes of one SRU.
    pub sru_bytes: u64,
    /// Bytes of one request.
    pub request_bytes: u64,
    /// SRU bytes written so far.
    written: u64,
    /// SRU bytes owed for the requests received so far.
    owed: u64,
    closed: bool,
}

impl BlockServer {
    /// A server on `socket` answering each `request_bytes` request with `sru_bytes`.
    pub fn new(socket: Socket, sru_bytes: u64, request_bytes: u64) -> Self {
        assert!(sru_bytes > 0 && request_bytes > 0);
        BlockServer { socket, sru_bytes, request_bytes, written: 0, owed: 0, closed: false }
    }

    /// Handle a notice: write the SRU bytes owed for the requests received so far, as the send
    /// buffer takes them; close once the client has closed and everything is written.
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        if notice != Notice::Socket(self.socket) || self.closed {
            return;
        }
        while let Some((request, _)) = io.next_record(self.socket) {
            debug_assert_eq!(request.kind, REQUEST);
            self.owed += self.sru_bytes;
        }
        if self.owed > self.written {
            self.written += io.write(self.socket, self.owed - self.written);
        }
        if io.peer_closed(self.socket) && self.written >= self.owed {
            self.closed = true;
            io.close(self.socket);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::units::SimTime;

    /// Sockets with per-socket received counts and send space, recording writes per socket.
    #[derive(Default)]
    struct Io {
        received: HashMap<Socket, u64>,
        space: HashMap<Socket, u64>,
        peer_closed: bool,
        writes: Vec<(Socket, u64)>,
        connected: Vec<Socket>,
        closed: Vec<Socket>,
        finished: Vec<Socket>,
        milestones: Vec<(Socket, Milestone, u64)>,
        not_open: Vec<Socket>,
        /// Records written per socket: (stream offset of the end, record, bytes).
        records: HashMap<Socket, std::collections::VecDeque<(u64, Record, u64)>>,
        written: HashMap<Socket, u64>,
    }

    impl Sockets for Io {
        fn now(&self) -> SimTime {
            SimTime::ZERO
        }
        fn connect(&mut self, s: Socket) {
            self.connected.push(s);
        }
        fn send_space(&self, s: Socket) -> u64 {
            self.space.get(&s).copied().unwrap_or(u64::MAX)
        }
        fn writes_are_quiet(&self, _: Socket) -> bool {
            false
        }
        fn write(&mut self, s: Socket, bytes: u64) -> u64 {
            let space = self.send_space(s);
            let n = bytes.min(space);
            if space != u64::MAX {
                self.space.insert(s, space - n);
            }
            self.writes.push((s, n));
            *self.written.entry(s).or_default() += n;
            n
        }
        fn close(&mut self, s: Socket) {
            self.closed.push(s);
        }
        fn peer_closed(&self, _: Socket) -> bool {
            self.peer_closed
        }
        fn established(&self, s: Socket) -> bool {
            !self.not_open.contains(&s)
        }
        fn received(&self, s: Socket) -> u64 {
            self.received.get(&s).copied().unwrap_or(0)
        }
        fn readable(&self, _: Socket) -> u64 {
            0 // Block reads leave reading to the connection.
        }
        fn read(&mut self, _: Socket, _: u64) -> u64 {
            0
        }
        fn write_record(&mut self, s: Socket, bytes: u64, record: Record) -> bool {
            if self.send_space(s) < bytes {
                return false;
            }
            self.write(s, bytes);
            let end = self.written[&s];
            self.records.entry(s).or_default().push_back((end, record, bytes));
            true
        }
        fn next_record(&mut self, s: Socket) -> Option<(Record, u64)> {
            let arrived = self.received(s);
            let q = self.records.get_mut(&s.peer())?;
            let &(end, record, bytes) = q.front()?;
            (end <= arrived).then(|| {
                q.pop_front();
                (record, bytes)
            })
        }
        fn send_datagram(&mut self, _: Socket, _: u32) {}
        fn set_timer(&mut self, _: SimTime) {}
        fn finish_flow(&mut self, s: Socket) {
            self.finished.push(s);
        }
        fn milestone(&mut self, s: Socket, kind: Milestone, bytes: u64) {
            self.milestones.push((s, kind, bytes));
        }
        fn message(&mut self, _: Socket, _: crate::app::Message) {
            unreachable!("a block reader reports blocks as milestones")
        }
    }

    fn sockets(n: u32) -> Vec<Socket> {
        (0..n).map(|f| Socket::new(f, 0)).collect()
    }

    #[test]
    fn the_next_block_waits_for_every_sru_of_the_current_one() {
        let s = sockets(3);
        let mut c = BlockReader::new(s.clone(), 65_536, 100, 2);
        let mut io = Io::default();
        c.on(Notice::Start, &mut io);
        assert_eq!(io.connected, s);
        assert_eq!(io.writes, s.iter().map(|&x| (x, 100)).collect::<Vec<_>>(), "one request per server");
        io.writes.clear();
        // Two of three SRUs complete, the third one byte short: no new request.
        io.received.insert(s[0], 65_536);
        io.received.insert(s[1], 65_536);
        io.received.insert(s[2], 65_535);
        c.on(Notice::Socket(s[0]), &mut io);
        assert!(io.writes.is_empty() && io.milestones.is_empty() && c.blocks_done() == 0);
        // The last byte arrives: the block is recorded and the next one requested everywhere.
        io.received.insert(s[2], 65_536);
        c.on(Notice::Socket(s[2]), &mut io);
        assert_eq!(c.blocks_done(), 1);
        assert_eq!(io.milestones, vec![(s[0], Milestone::Block, 3 * 65_536)]);
        assert_eq!(io.writes.len(), 3);
        // The second (last) block: the client closes every connection and finishes its flows.
        for &x in &s {
            io.received.insert(x, 2 * 65_536);
        }
        c.on(Notice::Socket(s[1]), &mut io);
        assert_eq!(c.blocks_done(), 2);
        assert_eq!(io.closed, s);
        assert_eq!(io.finished, s);
        // Later notices change nothing.
        c.on(Notice::Socket(s[1]), &mut io);
        assert_eq!(io.milestones.len(), 2);
    }

    #[test]
    fn the_first_block_waits_for_every_connection_to_open() {
        let s = sockets(3);
        let mut c = BlockReader::new(s.clone(), 1000, 100, 1);
        let mut io = Io { not_open: s.clone(), ..Io::default() };
        c.on(Notice::Start, &mut io);
        assert_eq!(io.connected, s);
        assert!(io.writes.is_empty(), "no request before the connections are open");
        io.not_open = vec![s[2]];
        c.on(Notice::Socket(s[0]), &mut io);
        assert!(io.writes.is_empty(), "one is still opening");
        io.not_open.clear();
        c.on(Notice::Socket(s[2]), &mut io);
        assert_eq!(io.writes.len(), 3, "all open: the first block is requested everywhere");
        c.on(Notice::Socket(s[1]), &mut io);
        assert_eq!(io.writes.len(), 3, "once");
    }

    #[test]
    fn a_request_the_send_buffer_cannot_take_whole_waits_for_room() {
        // Requests are records, written whole: with room for 60 bytes nothing is written.
        let s = sockets(1);
        let mut c = BlockReader::new(s.clone(), 1000, 100, 3);
        let mut io = Io::default();
        io.space.insert(s[0], 60);
        c.on(Notice::Start, &mut io);
        assert!(io.writes.is_empty());
        io.space.insert(s[0], 1000);
        c.on(Notice::Socket(s[0]), &mut io);
        assert_eq!(io.writes, vec![(s[0], 100)]);
        assert_eq!(io.records[&s[0]].front().map(|r| (r.0, r.1.kind, r.2)), Some((100, REQUEST, 100)));
    }

    #[test]
    fn a_server_answers_each_whole_request_with_one_sru_and_closes_after_the_client() {
        let s = Socket::new(7, 1);
        let mut srv = BlockServer::new(s, 65_536, 100);
        let mut io = Io::default();
        // The client (the peer) wrote two request records, ending at bytes 100 and 200.
        let request = Record { kind: REQUEST, tag: 0, arg: 0 };
        io.records.insert(s.peer(), [(100, request, 100), (200, request, 100)].into());
        srv.on(Notice::Socket(s), &mut io);
        assert!(io.writes.is_empty(), "no request yet");
        io.received.insert(s, 99);
        srv.on(Notice::Socket(s), &mut io);
        assert!(io.writes.is_empty(), "a partial request");
        io.received.insert(s, 100);
        io.space.insert(s, 50_000);
        srv.on(Notice::Socket(s), &mut io);
        assert_eq!(io.writes, vec![(s, 50_000)], "as much as the send buffer takes");
        io.space.insert(s, 1 << 20);
        io.received.insert(s, 200);
        srv.on(Notice::Socket(s), &mut io);
        assert_eq!(io.writes[1], (s, 2 * 65_536 - 50_000), "the rest of SRU 1 and all of SRU 2");
        srv.on(Notice::Socket(Socket::new(8, 1)), &mut io);
        assert_eq!(io.writes.len(), 2, "another socket's notice");
        io.peer_closed = true;
        srv.on(Notice::Socket(s), &mut io);
        assert_eq!(io.closed, vec![s]);
    }
}
