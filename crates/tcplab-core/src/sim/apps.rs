//! The applications as the simulation runs them: their slots (one timer each, whose setting
//! is the only time at which a timer event is not stale, so each setting is told once
//! however many events were scheduled for it), the `Sockets` the simulation gives them for one
//! notice, and what it does with their effects afterwards (segments emitted per socket in the
//! order made, datagrams, the timer, finished flows, milestones).

use super::Event;
use std::collections::{BTreeMap, VecDeque};

use crate::app::{Application, Message, Milestone, Notice, Record, Socket, Sockets};
use crate::engine::queue::Lane;
use crate::flow::FlowEngine;
use crate::flow::NO_APP;
use crate::tcp::{Connection, Endpoint, Output};
use crate::units::SimTime;

use crate::flow::Flow;

/// An application and its bookkeeping.
#[derive(Debug)]
pub struct AppSlot {
    /// The application.
    pub app: Application,
    /// Its place among simultaneous events of the same kind (`engine::order`): the flow of its
    /// first socket.
    pub(super) order_id: u32,
    /// When its timer is set to fire; an event at any other time is stale.
    pub(super) timer: Option<SimTime>,
}

/// What one notice produced, beyond the segments in `Output`.
#[derive(Debug, Default, Clone)]
pub(super) struct Effects {
    /// Per socket acted on, in order: the socket and where its segments and TCP events begin
    /// in `Output`.
    pub runs: Vec<(Socket, usize, usize)>,
    /// Datagrams to send: the socket and the IP size.
    pub datagrams: Vec<(Socket, u32)>,
    /// The timer's new setting.
    pub timer: Option<SimTime>,
    /// Flows whose transfer just completed.
    pub finished: u32,
    /// Milestones reported: the socket, the kind, the bytes.
    pub milestones: Vec<(Socket, Milestone, u64)>,
    /// Answered requests reported: the socket, the message.
    pub messages: Vec<(Socket, Message)>,
    /// Set by anything beyond writing to the socket the notice was about (which is sent as
    /// usual afterwards): the slow path then carries the effects out.
    pub dirty: bool,
}

/// Records written on each socket and not yet taken by its peer: (stream offset of the
/// record's end, the record, its length), in the order written.
pub(super) type Records = BTreeMap<Socket, VecDeque<(u64, Record, u64)>>;

/// The sockets as an application sees them during one notice.
struct SocketCtx<'a> {
    now: SimTime,
    records: &'a mut Records,
    /// The socket the notice is about, whose output needs no run of its own.
    about: Option<Socket>,
    flows: &'a mut [Flow],
    out: &'a mut Output,
    fx: &'a mut Effects,
}

impl SocketCtx<'_> {
    /// `s` is acted on from here in the output (its segments and events start a new run
    /// unless it was the last socket acted on).
    #[inline]
    fn note(&mut self, s: Socket) {
        if self.fx.runs.is_empty() {
            if self.about == Some(s) {
                return; // Still the socket the notice is about: its output is sent as usual.
            }
            if let Some(a) = self.about {
                self.fx.runs.push((a, 0, 0));
            }
        } else if self.fx.runs.last().is_some_and(|r| r.0 == s) {
            return;
        }
        self.fx.runs.push((s, self.out.segments.len(), self.out.events.len()));
        self.fx.dirty = true;
    }

    fn conn(&self, s: Socket) -> &Connection {
        match &self.flows[s.flow()].engine {
            FlowEngine::Tcp(t) => t.ends[s.end()].conn(),
            FlowEngine::Udp(_) => panic!("{s:?} belongs to a UDP flow; TCP calls need a TCP flow"),
            FlowEngine::Retired(_) => panic!("{s:?} belongs to a flow whose connections were released"),
        }
    }
}

/// The connection of a TCP socket.
#[inline]
fn tcp_end(flows: &mut [Flow], s: Socket) -> &mut Endpoint {
    match &mut flows[s.flow()].engine {
        FlowEngine::Tcp(t) => &mut t.ends[s.end()],
        FlowEngine::Udp(_) => panic!("{s:?} belongs to a UDP flow; TCP calls need a TCP flow"),
        FlowEngine::Retired(_) => panic!("{s:?} belongs to a flow whose connections were released"),
    }
}

impl Sockets for SocketCtx<'_> {
    fn now(&self) -> SimTime {
        self.now
    }
    fn connect(&mut self, s: Socket) {
        let now = self.now;
        self.note(s);
        tcp_end(self.flows, s.peer()).listen();
        tcp_end(self.flows, s).connect(now, self.out);
    }
    #[inline(always)]
    fn send_space(&self, s: Socket) -> u64 {
        self.conn(s).send_space()
    }
    #[inline]
    fn writes_are_quiet(&self, s: Socket) -> bool {
        self.conn(s).writes_are_quiet()
    }
    #[inline(always)]
    fn write(&mut self, s: Socket, bytes: u64) -> u64 {
        let now = self.now;
        self.note(s);
        tcp_end(self.flows, s).write(now, bytes, self.out)
    }
    fn close(&mut self, s: Socket) {
        let now = self.now;
        self.note(s);
        tcp_end(self.flows, s).close(now, self.out);
    }
    fn peer_closed(&self, s: Socket) -> bool {
        self.conn(s).peer_closed()
    }
    fn established(&self, s: Socket) -> bool {
        matches!(self.conn(s).state(), crate::tcp::State::Established | crate::tcp::State::CloseWait)
    }
    fn received(&self, s: Socket) -> u64 {
        self.conn(s).stats.bytes_delivered
    }
    fn readable(&self, s: Socket) -> u64 {
        self.conn(s).readable()
    }
    fn read(&mut self, s: Socket, bytes: u64) -> u64 {
        let now = self.now;
        self.note(s);
        tcp_end(self.flows, s).read(now, bytes, self.out)
    }
    fn write_record(&mut self, s: Socket, bytes: u64, record: Record) -> bool {
        if self.conn(s).send_space() < bytes {
            // The writer waits for room (Linux SOCK_NOSPACE; RFC 2861's decay reads it).
            tcp_end(self.flows, s).note_write_blocked();
            return false;
        }
        let end = self.conn(s).written() + bytes;
        let now = self.now;
        self.note(s);
        let n = tcp_end(self.flows, s).write(now, bytes, self.out);
        debug_assert_eq!(n, bytes, "the room was there");
        self.records.entry(s).or_default().push_back((end, record, bytes));
        true
    }
    fn next_record(&mut self, s: Socket) -> Option<(Record, u64)> {
        let arrived = self.conn(s).stats.bytes_delivered;
        let queue = self.records.get_mut(&s.peer())?;
        let &(end, record, bytes) = queue.front()?;
        if end > arrived {
            return None;
        }
        queue.pop_front();
        Some((record, bytes))
    }
    fn send_datagram(&mut self, s: Socket, ip_bytes: u32) {
        self.fx.datagrams.push((s, ip_bytes));
        self.fx.dirty = true;
    }
    fn set_timer(&mut self, at: SimTime) {
        self.fx.timer = Some(at);
        self.fx.dirty = true;
    }
    fn milestone(&mut self, s: Socket, kind: Milestone, bytes: u64) {
        self.fx.milestones.push((s, kind, bytes));
        self.fx.dirty = true;
    }
    fn message(&mut self, s: Socket, m: Message) {
        self.fx.messages.push((s, m));
        self.fx.dirty = true;
    }
    fn finish_flow(&mut self, s: Socket) {
        let f = &mut self.flows[s.flow()];
        if f.finish.is_none() {
            f.finish = Some(self.now);
            self.fx.finished += u32::from(!f.info.background);
            self.fx.dirty = true;
        }
    }
}

/// The applications and what the last one told did: a component of the simulation, which
/// tells them their notices (`tell`) and carries out their effects.
#[derive(Debug, Default)]
pub struct Apps {
    slots: Vec<AppSlot>,
    /// Records in transit, per writing socket.
    records: Records,
    /// What the application told last did (reused between notices).
    pub(super) effects: Effects,
}

impl Apps {
    /// Add an application owning `sockets` of `flows` (each socket has at most one owner).
    /// Returns its index and its place among simultaneous events (the flow of its first
    /// socket).
    pub fn add(&mut self, app: Application, sockets: &[Socket], flows: &mut [Flow]) -> (u32, u32) {
        let id = self.slots.len() as u32;
        assert!(id != NO_APP, "too many applications");
        for s in sockets {
            let owner = &mut flows[s.flow()].owners[s.end()];
            assert!(owner.0 == NO_APP, "{s:?} already has an application");
            *owner = (id, app.interest());
        }
        let order_id = sockets.first().map_or(id, |s| s.flow() as u32);
        self.slots.push(AppSlot { app, order_id, timer: None });
        (id, order_id)
    }

    /// The applications.
    pub fn iter(&self) -> impl Iterator<Item = &Application> {
        self.slots.iter().map(|a| &a.app)
    }

    /// An application's timer event popped at `now`: true when it is due (and no longer
    /// set), false when stale (the application set its timer to another time since).
    pub(super) fn timer_due(&mut self, now: SimTime, a: usize) -> bool {
        let slot = &mut self.slots[a];
        if slot.timer != Some(now) {
            return false;
        }
        slot.timer = None;
        true
    }

    /// Tell application `a` of `notice` (about socket `about`, if any) over `flows`, its
    /// segments going to `out`. True when it did more than write to `about` (its `effects`
    /// then need carrying out).
    #[inline]
    pub(super) fn tell(&mut self, now: SimTime, a: usize, notice: Notice, about: Option<Socket>, flows: &mut [Flow], out: &mut Output) -> bool {
        let mut io = SocketCtx { now, records: &mut self.records, about, flows, out, fx: &mut self.effects };
        self.slots[a].app.on(notice, &mut io);
        self.effects.dirty
    }

    /// Set application `a`'s timer to the one its last notice asked for, if any: the time,
    /// and the event to schedule with the lane it goes in.
    pub(super) fn arm_timer(&mut self, a: usize) -> Option<(SimTime, Event, Lane)> {
        let t = self.effects.timer.take()?;
        let slot = &mut self.slots[a];
        slot.timer = Some(t);
        let (rank, busy) = slot.app.timer_rank();
        Some((t, Event::AppTimer { app: a as u32, order: slot.order_id, rank }, if busy { Lane::Busy } else { Lane::Timer }))
    }
}

#[cfg(test)]
mod tests {
    use crate::app::fake::{Did, FakeSockets};
    use crate::app::{BulkSender, CbrSource, Milestone, Notice, Socket};
    use crate::units::{BitRate, SimTime};

    #[test]
    fn a_bulk_sender_connects_arms_its_stop_and_writes_until_closed() {
        let s = Socket::new(2, 0);
        let mut b = BulkSender::new(s, 100, Some(250), Some(SimTime(50)));
        let mut io = FakeSockets { now: SimTime(10), space: 180, ..FakeSockets::default() };
        b.on(Notice::Start, &mut io);
        assert_eq!(io.did, vec![Did::Connect(s), Did::Timer(SimTime(50)), Did::Write(s, 100), Did::Write(s, 80)]);
        io.did.clear();
        io.space = 1000;
        b.on(Notice::Socket(s), &mut io);
        assert_eq!(
            io.did,
            vec![Did::Write(s, 20), Did::Write(s, 50), Did::Close(s), Did::Milestone(s, Milestone::Written, 250)],
            "the rest of the chunk, the last chunk, then FIN"
        );
        io.did.clear();
        b.on(Notice::Timer, &mut io);
        assert!(io.did.is_empty(), "closed once");
    }

    #[test]
    fn a_bulk_sender_finishes_its_write_and_closes_after_its_stop_time() {
        let s = Socket::new(0, 0);
        let mut b = BulkSender::new(s, 100, None, Some(SimTime(50)));
        let mut io = FakeSockets { now: SimTime(0), space: 0, ..FakeSockets::default() };
        b.on(Notice::Start, &mut io);
        io.did.clear();
        io.now = SimTime(50);
        b.on(Notice::Timer, &mut io);
        assert!(io.did.is_empty(), "the write begun before the stop time is still in progress");
        io.space = 1000;
        b.on(Notice::Socket(s), &mut io);
        assert_eq!(io.did, vec![Did::Write(s, 100), Did::Close(s), Did::Milestone(s, Milestone::Written, 100)], "it completes, no other starts, then FIN");
    }

    #[test]
    fn a_cbr_source_sends_one_datagram_per_timer_and_finishes_after_the_last() {
        let s = Socket::new(1, 0);
        let mut c = CbrSource::constant(s, BitRate(8_000), 100, SimTime(7), Some(SimTime(7 + 250_000_000_000)));
        let mut io = FakeSockets::default();
        c.on(Notice::Start, &mut io);
        assert_eq!(io.did, vec![Did::Timer(SimTime(7))]);
        io.did.clear();
        io.now = SimTime(7);
        c.on(Notice::Timer, &mut io);
        assert_eq!(io.did, vec![Did::Datagram(s, 100), Did::Timer(SimTime(7 + 100_000_000_000))], "100 B at 8 kb/s: one per 0.1 s");
        io.did.clear();
        c.on(Notice::Socket(s), &mut io);
        assert!(io.did.is_empty(), "a CBR source ignores its socket");
        c.on(Notice::Timer, &mut io);
        c.on(Notice::Timer, &mut io);
        assert_eq!(io.did, vec![Did::Datagram(s, 100), Did::Timer(SimTime(7 + 200_000_000_000)), Did::Datagram(s, 100), Did::Finish(s), Did::Milestone(s, Milestone::Sent, 3)]);
        assert_eq!(c.sent, 3);
    }
}
