//! Applications: sans-I/O programs over socket handles. Each sees only notices (its start, its
//! one timer, "this socket changed": bytes acknowledged so there is room to write, bytes
//! arrived to read, the peer closed) and acts through `Sockets` (write, read state, close,
//! connect, send a datagram, set its timer, declare a transfer complete). The simulation
//! implements `Sockets`; tests can implement it with a fake. The set is closed (`Application`),
//! dispatched by `match`; a study adds an application as a new file here and a variant.

pub mod block_read;
pub mod bulk;
pub mod cbr;
pub mod fs_copy;
pub mod onoff;
pub mod request_response;
pub mod sink;
pub mod storage;
pub mod workload;

use crate::engine::order::Rank;
use crate::units::SimTime;

pub use block_read::{BlockReader, BlockServer};
pub use bulk::BulkSender;
pub use cbr::{CbrPiece, CbrSource};
pub use fs_copy::{FsCopySink, FsCopySource};
pub use onoff::{OnOffSource, Period};
pub use request_response::{Message, RequestClient, RequestServer};
pub use sink::Sink;

/// A socket: one end of a flow (end 0: the flow's source, the active opener; 1: its
/// destination), held as `2·flow + end` so that it fits a register.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Socket(u32);

impl Socket {
    /// End `end` (0 or 1) of flow `flow` (below 2^31).
    #[inline]
    pub fn new(flow: u32, end: u8) -> Self {
        debug_assert!(flow < 1 << 31 && end < 2, "a socket is end 0 or 1 of a flow below 2^31");
        Socket(flow << 1 | (end & 1) as u32)
    }

    /// The flow.
    #[inline]
    pub fn flow(self) -> usize {
        (self.0 >> 1) as usize
    }

    /// The end: 0 source, 1 destination.
    #[inline]
    pub fn end(self) -> usize {
        (self.0 & 1) as usize
    }

    /// The other end of the same flow.
    #[inline]
    pub fn peer(self) -> Socket {
        Socket(self.0 ^ 1)
    }
}

impl std::fmt::Debug for Socket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Socket(flow {}, end {})", self.flow(), self.end())
    }
}

/// What an application is told.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notice {
    /// Its start time came.
    Start,
    /// Its timer fired.
    Timer,
    /// One of its sockets processed a segment or a timer: there may be room to write, bytes to
    /// read, or a closed peer (ask the socket; notices are level-triggered, like `poll`).
    Socket(Socket),
}

/// What an application reports as done (the `milestones` trace).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Milestone {
    /// A sender has written everything it will write (its byte count, or its stop time came);
    /// bytes: written.
    Written = 0,
    /// A receiver has everything its peer sent (the peer closed); bytes: received.
    Received = 1,
    /// A datagram source sent its last datagram; bytes: datagrams sent.
    Sent = 2,
    /// A block reader has every server's part of one more block; bytes: the block's payload.
    Block = 3,
    /// An iSCSI initiator has the status of one more command; bytes: the command's data.
    Command = 4,
}

impl Milestone {
    /// Every milestone, in code order.
    pub const ALL: [Milestone; 5] = [Milestone::Written, Milestone::Received, Milestone::Sent, Milestone::Block, Milestone::Command];

    /// Name as in traces.
    pub fn name(self) -> &'static str {
        match self {
            Milestone::Written => "written",
            Milestone::Received => "received",
            Milestone::Sent => "sent",
            Milestone::Block => "block",
            Milestone::Command => "command",
        }
    }
}

/// A message boundary on a TCP byte stream: what an application writes with
/// `Sockets::write_record` and its peer gets back from `Sockets::next_record` once the
/// record's last byte has arrived in order. TCP stays a byte stream (a record can span
/// segments, a segment can end several records); the record is the application's metadata,
/// kept beside the stream, never in the packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// What the record is, in the application's own numbering (a PDU's opcode).
    pub kind: u8,
    /// Which task or request it belongs to (an initiator task tag).
    pub tag: u32,
    /// An application value (an offset, a sequence number).
    pub arg: u64,
}

/// Which socket notices an application needs (the simulation tells it no others).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interest {
    /// Every change of its sockets (room to write, bytes to read, the peer closed).
    Every,
    /// Changes of a socket whose peer has closed.
    PeerClosed,
    /// None: it works from its start and its timer.
    Nothing,
}

/// What an application can do and ask, for the duration of one notice. Effects take place in
/// the order they are made, at the notice's time.
pub trait Sockets {
    /// The current time.
    fn now(&self) -> SimTime;
    /// Open the connection of a TCP flow from `s` (its source end); the other end listens.
    fn connect(&mut self, s: Socket);
    /// Bytes `s` would accept now.
    fn send_space(&self, s: Socket) -> u64;
    /// True when writes to `s` only queue bytes (nothing is sent at once), so that several
    /// may be made as one.
    fn writes_are_quiet(&self, s: Socket) -> bool;
    /// Write up to `bytes` to `s`; returns the bytes accepted.
    fn write(&mut self, s: Socket, bytes: u64) -> u64;
    /// Close `s` (send FIN after the queued bytes).
    fn close(&mut self, s: Socket);
    /// True once the peer of `s` has closed and everything it sent has been read.
    fn peer_closed(&self, s: Socket) -> bool;
    /// True once the connection of `s` is open (its handshake complete) and not yet closed.
    fn established(&self, s: Socket) -> bool;
    /// Payload bytes received in order on `s` so far.
    fn received(&self, s: Socket) -> u64;
    /// Bytes received in order on `s` and not yet read (an application that reads itself,
    /// `Application::reads_itself`; others have every byte read on arrival).
    fn readable(&self, s: Socket) -> u64;
    /// Read up to `bytes` from `s` (an application that reads itself); returns the bytes read.
    /// The freed buffer may send a window update.
    fn read(&mut self, s: Socket, bytes: u64) -> u64;
    /// Write a record of `bytes` to `s`, all or nothing: false (nothing written) when the send
    /// buffer has less room.
    fn write_record(&mut self, s: Socket, bytes: u64, record: Record) -> bool;
    /// The next record the peer of `s` wrote whose last byte has arrived on `s` in order, with
    /// its length in bytes (each record once, in the order written).
    fn next_record(&mut self, s: Socket) -> Option<(Record, u64)>;
    /// Send one UDP datagram of `ip_bytes` (IP header included) from `s`.
    fn send_datagram(&mut self, s: Socket, ip_bytes: u32);
    /// Set the application's one timer to `at` (replacing any earlier setting).
    fn set_timer(&mut self, at: SimTime);
    /// The transfer on `s`'s flow is complete: its finish time is now (the first time), and a
    /// run that stops when the flows are done counts it.
    fn finish_flow(&mut self, s: Socket);
    /// Report a milestone concerning socket `s` (recorded when the `milestones` trace is on).
    fn milestone(&mut self, s: Socket, kind: Milestone, bytes: u64);
    /// Report an answered request on socket `s` (the `messages` trace).
    fn message(&mut self, s: Socket, m: Message);
}

/// A built-in application.
#[derive(Clone, Debug)]
pub enum Application {
    /// A bulk sender (iperf/netperf-like).
    Bulk(BulkSender),
    /// The receiving end of a bulk transfer: reads everything, closes after the peer.
    Sink(Sink),
    /// A constant-bit-rate UDP source.
    Cbr(CbrSource),
    /// An on/off UDP source: constant-rate bursts and silences of random lengths.
    OnOff(OnOffSource),
    /// The client of barrier-synchronised block reads (one socket per server).
    BlockReader(BlockReader),
    /// A server of block reads.
    BlockServer(BlockServer),
    /// A disk server as an iSCSI target (study 002).
    DiskTarget(Box<storage::DiskTarget>),
    /// An iSCSI initiator moving a striped file's blocks (study 002).
    BlockInitiator(Box<storage::BlockInitiator>),
    /// netcat sending a file through its host's page cache (study 002's conventional copy).
    FsCopySource(Box<FsCopySource>),
    /// netcat receiving into a file through its host's page cache; reads its socket itself.
    FsCopySink(Box<FsCopySink>),
    /// A request/response client on one connection.
    RequestClient(Box<RequestClient>),
    /// The server answering a request/response client.
    RequestServer(RequestServer),
}

impl Application {
    /// Handle a notice.
    #[inline]
    pub fn on(&mut self, notice: Notice, io: &mut impl Sockets) {
        match self {
            Application::Bulk(a) => a.on(notice, io),
            Application::Sink(a) => a.on(notice, io),
            Application::Cbr(a) => a.on(notice, io),
            Application::OnOff(a) => a.on(notice, io),
            Application::BlockReader(a) => a.on(notice, io),
            Application::BlockServer(a) => a.on(notice, io),
            Application::DiskTarget(a) => a.on(notice, io),
            Application::BlockInitiator(a) => a.on(notice, io),
            Application::FsCopySource(a) => a.on(notice, io),
            Application::FsCopySink(a) => a.on(notice, io),
            Application::RequestClient(a) => a.on(notice, io),
            Application::RequestServer(a) => a.on(notice, io),
        }
    }

    /// The socket notices it needs.
    pub fn interest(&self) -> Interest {
        match self {
            Application::Bulk(_)
            | Application::BlockReader(_)
            | Application::BlockServer(_)
            | Application::DiskTarget(_)
            | Application::BlockInitiator(_)
            | Application::FsCopySource(_)
            | Application::FsCopySink(_)
            | Application::RequestClient(_)
            | Application::RequestServer(_) => Interest::Every,
            Application::Sink(s) if s.is_paced() => Interest::Every,
            Application::Sink(_) => Interest::PeerClosed,
            Application::Cbr(_) | Application::OnOff(_) => Interest::Nothing,
        }
    }

    /// True when it reads its sockets itself (`Sockets::read`); the others' connections read
    /// every byte on arrival.
    pub fn reads_itself(&self) -> bool {
        matches!(self, Application::Sink(s) if s.is_paced()) || matches!(self, Application::FsCopySink(_))
    }

    /// Where its timer's events stand among simultaneous events (`engine::order`), and whether
    /// it fires often (a packet clock: the busy lane) or rarely.
    pub fn timer_rank(&self) -> (Rank, bool) {
        match self {
            Application::Bulk(_)
            | Application::Sink(_)
            | Application::BlockReader(_)
            | Application::BlockServer(_)
            | Application::DiskTarget(_)
            | Application::BlockInitiator(_)
            | Application::FsCopySource(_)
            | Application::FsCopySink(_)
            | Application::RequestClient(_)
            | Application::RequestServer(_) => (Rank::AppStop, false),
            Application::Cbr(_) | Application::OnOff(_) => (Rank::Cbr, true),
        }
    }
}

#[cfg(test)]
pub(crate) mod fake {
    //! A fake `Sockets` for application tests: records what the application did.
    use super::*;

    /// One recorded action.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub enum Did {
        Connect(Socket),
        Write(Socket, u64),
        Close(Socket),
        Datagram(Socket, u32),
        Timer(SimTime),
        Finish(Socket),
        Milestone(Socket, Milestone, u64),
        Read(Socket, u64),
        WriteRecord(Socket, u64, Record),
        Message(Socket, Message),
    }

    /// Sockets with a fixed send space, peer state and received count.
    #[derive(Default)]
    pub struct FakeSockets {
        pub now: SimTime,
        pub space: u64,
        pub quiet: bool,
        pub peer_closed: bool,
        pub received: u64,
        pub readable: u64,
        /// Records arrived on the sockets, returned in order by `next_record`.
        pub records: std::collections::VecDeque<(Record, u64)>,
        pub did: Vec<Did>,
    }

    impl Sockets for FakeSockets {
        fn now(&self) -> SimTime {
            self.now
        }
        fn connect(&mut self, s: Socket) {
            self.did.push(Did::Connect(s));
        }
        fn send_space(&self, _: Socket) -> u64 {
            self.space
        }
        fn writes_are_quiet(&self, _: Socket) -> bool {
            self.quiet
        }
        fn write(&mut self, s: Socket, bytes: u64) -> u64 {
            let n = bytes.min(self.space);
            self.space -= n;
            self.did.push(Did::Write(s, n));
            n
        }
        fn close(&mut self, s: Socket) {
            self.did.push(Did::Close(s));
        }
        fn peer_closed(&self, _: Socket) -> bool {
            self.peer_closed
        }
        fn established(&self, _: Socket) -> bool {
            true
        }
        fn received(&self, _: Socket) -> u64 {
            self.received
        }
        fn readable(&self, _: Socket) -> u64 {
            self.readable
        }
        fn read(&mut self, s: Socket, bytes: u64) -> u64 {
            let n = bytes.min(self.readable);
            self.readable -= n;
            self.did.push(Did::Read(s, n));
            n
        }
        fn write_record(&mut self, s: Socket, bytes: u64, record: Record) -> bool {
            if self.space < bytes {
                return false;
            }
            self.space -= bytes;
            self.did.push(Did::WriteRecord(s, bytes, record));
            true
        }
        fn next_record(&mut self, _: Socket) -> Option<(Record, u64)> {
            self.records.pop_front()
        }
        fn send_datagram(&mut self, s: Socket, ip_bytes: u32) {
            self.did.push(Did::Datagram(s, ip_bytes));
        }
        fn set_timer(&mut self, at: SimTime) {
            self.did.push(Did::Timer(at));
        }
        fn finish_flow(&mut self, s: Socket) {
            self.did.push(Did::Finish(s));
        }
        fn milestone(&mut self, s: Socket, kind: Milestone, bytes: u64) {
            self.did.push(Did::Milestone(s, kind, bytes));
        }
        fn message(&mut self, s: Socket, m: Message) {
            self.did.push(Did::Message(s, m));
        }
    }
}
