//! The simulation: owns the clock and event queue, the pipes, the routes, the flows (their TCP
//! endpoints and applications) and the traces, and dispatches events by `match` on a closed
//! enum. No globals: everything a run touches lives in one `Simulation` value.

use serde::Serialize;

use crate::app::{BulkApp, CbrSource};
use crate::engine::order::{Key, Order, Rank};
use crate::engine::queue::Lane;
use crate::engine::EventQueue;
use crate::net::merge::Merge;
use crate::net::packet::{Body, End, FlowId, Packet, RouteId, IPV4_HEADER, UDP_HEADER};
use crate::net::pipe::{Offer, Pipe, PipeId, PipeWake};
use crate::tcp::{Connection, Output, TcpEventKind};
use crate::trace::pcap::{PcapWriter, WireIdentity};
use crate::trace::Traces;
use crate::units::{SimDuration, SimTime};

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopReason {
    /// It has not ended yet.
    Running,
    /// The stop time (`run.duration`) was reached.
    Duration,
    /// Every flow finished.
    FlowsDone,
    /// No event was pending: nothing more could happen (with `flows-done`, some flow could not
    /// finish).
    Idle,
    /// A run with no stop time reached `units::MAX_TIME` of simulated time before its stop
    /// condition held (a flow that could not finish, or a run that never goes idle).
    TimeLimit,
}

/// When a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum StopRule {
    /// At `Simulation::stop_time`.
    Duration,
    /// When every flow has finished (or at the stop time, if one is set).
    FlowsDone,
    /// When no event is pending (or at the stop time, if one is set).
    Idle,
}

#[derive(Clone, Copy, Debug)]
enum Event {
    TxDone(PipeId),
    Arrive(PipeId),
    Timer {
        flow: u32,
        end: u8,
        gen: u32,
    },
    Start(u32),
    AppStop(u32),
    Cbr(u32),
    Sample,
    Coordinate(u32),
    /// Admit the packets a merge holds that are due (see `plan_pass_on`).
    Merge(u32),
}

impl Event {
    /// The event's place among events at the same instant (`engine::order`): its kind and its
    /// source (a pipe, a flow, a flow's endpoint as `2·flow + end`, a merge, a coordinator).
    #[inline(always)]
    fn key(self, order: &Order, t: SimTime) -> Key {
        let (rank, id) = match self {
            Event::TxDone(p) => (Rank::TxDone, p.0),
            Event::Arrive(p) => (Rank::Arrive, p.0),
            Event::Timer { flow, end, .. } => (Rank::Timer, flow << 1 | end as u32),
            Event::Start(f) => (Rank::Start, f),
            Event::AppStop(f) => (Rank::AppStop, f),
            Event::Cbr(f) => (Rank::Cbr, f),
            Event::Sample => (Rank::Sample, 0),
            Event::Coordinate(c) => (Rank::Coordinate, c),
            Event::Merge(m) => (Rank::Flush, m),
        };
        order.key(t, rank, id)
    }
}

/// One hop of a route as the forwarding loop sees it.
#[derive(Clone, Copy, Debug)]
struct Hop {
    pipe: PipeId,
    /// How the packets this pipe accepts reach the next hop's pipe.
    next: NextHop,
    /// With `NextHop::Merge`: the next pipe's merge, and this pipe's feeder slot in it.
    merge: u32,
    merge_slot: u16,
}

/// How packets get from one hop's pipe to the next (see `plan_pass_on`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum NextHop {
    /// Through an arrival event (or this is the last hop).
    Event,
    /// Straight into the next pipe at their arrival time.
    PassOn,
    /// Registered with the next pipe's merge.
    Merge,
}

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

/// Descriptive data about a flow, for summaries.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    /// Flow name.
    pub name: String,
    /// Source host name.
    pub src: String,
    /// Destination host name.
    pub dst: String,
    /// `"tcp"` or `"udp-cbr"`.
    pub kind: &'static str,
    /// Congestion controller name (`"none"` for UDP).
    pub cc: &'static str,
    /// Start time.
    pub start: SimTime,
}

/// A TCP flow: both endpoints, the sender's application, and timer bookkeeping.
#[derive(Debug)]
pub struct TcpFlow {
    /// `[source end, destination end]`.
    pub ends: [Connection; 2],
    /// The source's application.
    pub app: BulkApp,
    sched: [Option<(SimTime, u32)>; 2],
    gen: [u32; 2],
    last_cwnd: (u64, u64),
    dst_closed: bool,
}

impl TcpFlow {
    /// A flow from its two endpoints and the sender application.
    pub fn new(src: Connection, dst: Connection, app: BulkApp) -> Self {
        TcpFlow { ends: [src, dst], app, sched: [None; 2], gen: [0; 2], last_cwnd: (0, 0), dst_closed: false }
    }
}

/// A UDP constant-bit-rate flow and its sink's counters.
#[derive(Debug)]
pub struct UdpFlow {
    /// The source.
    pub src: CbrSource,
    /// Datagrams received.
    pub received: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
}

/// What runs on a flow.
#[derive(Debug)]
pub enum FlowEngine {
    /// A TCP connection with a bulk sender.
    Tcp(Box<TcpFlow>),
    /// A UDP CBR stream.
    Udp(UdpFlow),
}

/// A flow in the simulation.
#[derive(Debug)]
pub struct Flow {
    /// Names and kind.
    pub info: FlowInfo,
    /// Routes: `[src→dst, dst→src]`.
    pub routes: [RouteId; 2],
    /// Priority class of its packets.
    pub class: u8,
    /// The protocol machinery.
    pub engine: FlowEngine,
    /// When the destination had received everything (TCP: the FIN in order).
    pub finish: Option<SimTime>,
    last_sample_bytes: u64,
}

impl Flow {
    /// A flow.
    pub fn new(info: FlowInfo, routes: [RouteId; 2], class: u8, engine: FlowEngine) -> Self {
        Flow { info, routes, class, engine, finish: None, last_sample_bytes: 0 }
    }

    /// Payload bytes delivered in order at the destination.
    pub fn delivered(&self) -> u64 {
        match &self.engine {
            FlowEngine::Tcp(t) => t.ends[1].stats.bytes_delivered,
            FlowEngine::Udp(u) => u.bytes_received,
        }
    }
}

/// An observation point on one or more pipes: writes pcapng and/or the `capture` trace.
#[derive(Debug)]
pub struct Tap {
    /// Tap name.
    pub name: String,
    /// The pcapng writer, if a file is written.
    pub writer: Option<PcapWriter>,
    /// Also record the `capture` trace.
    pub record_trace: bool,
    /// Timestamp resolution, ps.
    pub resolution_ps: u64,
    /// Packets written.
    pub packets: u64,
}

/// Network-wide packet counters (conservation checks).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct PacketCounters {
    /// Packets handed to the network by hosts.
    pub created: u64,
    /// Packets that reached their destination host.
    pub delivered: u64,
    /// Packets dropped by full queues.
    pub queue_drops: u64,
    /// Packets dropped by random loss.
    pub random_drops: u64,
    /// Copies made by emulators that duplicate: created + duplicated = delivered + drops +
    /// packets inside.
    pub duplicated: u64,
}

impl PacketCounters {
    /// Count a packet a pipe refused.
    fn count_drop(&mut self, drop: Offer) {
        match drop {
            Offer::QueueDrop => self.queue_drops += 1,
            Offer::RandomDrop => self.random_drops += 1,
            Offer::Accepted => {}
        }
    }
}

/// One simulation run.
#[derive(Debug)]
pub struct Simulation {
    q: EventQueue<Event>,
    /// The canonical order of simultaneous events (salted by the seed).
    order: Order,
    /// All pipes.
    pub pipes: Vec<Pipe>,
    /// Pipes reported as queues (rate-limited ones), in report order.
    pub queue_pipes: Vec<PipeId>,
    queue_index: Vec<Option<u32>>,
    queue_traced: Vec<bool>,
    /// Per pipe: the (packets, bytes) last written to the queue trace, if any.
    queue_last: Vec<Option<(u64, u64)>>,
    routes: Vec<Vec<PipeId>>,
    /// Per route, per hop: the pipe and how the packets it accepts reach the next hop's pipe
    /// (an arrival event, passed straight on, or through a merge; see `plan_pass_on`).
    hops: Vec<Box<[Hop]>>,
    /// Per pipe: a tap or the queue trace observes it.
    observed: Vec<bool>,
    pass_on_planned: bool,
    /// Merges of multi-feeder pipes (see `plan_pass_on`).
    merges: Vec<Merge>,
    /// All flows.
    pub flows: Vec<Flow>,
    /// Recorded traces.
    pub traces: Traces,
    sample_interval: Option<SimDuration>,
    stop_rule: StopRule,
    stop_time: Option<SimTime>,
    finished: bool,
    stop_reason: StopReason,
    flows_done: usize,
    out: Output,
    /// Packet counters.
    pub packets: PacketCounters,
    /// Taps, and for each pipe the (tap, interface) observing it.
    pub taps: Vec<Tap>,
    pipe_taps: Vec<Option<(u32, u32)>>,
    /// Per flow: its addresses and ISNs on the wire.
    pub wire_ids: Vec<WireIdentity>,
    tap_scratch: Vec<(SimTime, Packet)>,
    capture_error: Option<String>,
    /// Stream coordinators.
    pub coordinators: Vec<Coordinator>,
}

impl Simulation {
    /// An empty simulation with a stop rule, an optional stop time and the salt of its event
    /// order (which of several simultaneous events goes first; derive it from the seed).
    pub fn new(stop_rule: StopRule, stop_time: Option<SimTime>, order_salt: u64) -> Self {
        Simulation {
            q: EventQueue::new(),
            order: Order::new(order_salt),
            pipes: Vec::new(),
            queue_pipes: Vec::new(),
            queue_index: Vec::new(),
            queue_traced: Vec::new(),
            queue_last: Vec::new(),
            routes: Vec::new(),
            hops: Vec::new(),
            observed: Vec::new(),
            pass_on_planned: false,
            merges: Vec::new(),
            flows: Vec::new(),
            traces: Traces::default(),
            sample_interval: None,
            stop_rule,
            stop_time,
            finished: false,
            stop_reason: StopReason::Running,
            flows_done: 0,
            out: Output::default(),
            packets: PacketCounters::default(),
            taps: Vec::new(),
            pipe_taps: Vec::new(),
            wire_ids: Vec::new(),
            tap_scratch: Vec::new(),
            capture_error: None,
            coordinators: Vec::new(),
        }
    }

    /// Add a coordinator; it first acts one interval after time zero.
    pub fn add_coordinator(&mut self, c: Coordinator) {
        let id = self.coordinators.len() as u32;
        self.schedule(Lane::Timer, SimTime::ZERO + c.interval, Event::Coordinate(id));
        self.coordinators.push(c);
    }

    fn coordinate(&mut self, now: SimTime, id: usize) {
        let c = &self.coordinators[id];
        let windows: Vec<(usize, u64)> = c
            .flows
            .iter()
            .filter_map(|f| match &self.flows[f.0 as usize].engine {
                // Streams still in slow start are left alone: their windows are not comparable yet.
                FlowEngine::Tcp(t) if matches!(t.ends[0].state(), crate::tcp::State::Established | crate::tcp::State::CloseWait) && t.ends[0].cwnd() >= t.ends[0].ssthresh() => {
                    Some((f.0 as usize, t.ends[0].cwnd()))
                }
                _ => None,
            })
            .collect();
        let mut actions = 0;
        if windows.len() > 1 {
            let mean = windows.iter().map(|w| w.1 as f64).sum::<f64>() / windows.len() as f64;
            let limit = mean * (1.0 + c.tolerance);
            for &(f, w) in &windows {
                if w as f64 > limit {
                    if let FlowEngine::Tcp(t) = &mut self.flows[f].engine {
                        t.ends[0].clamp_window(mean as u64);
                        actions += 1;
                    }
                    self.record_cwnd(now, f);
                }
            }
        }
        let c = &mut self.coordinators[id];
        c.actions += actions;
        let next = now + c.interval;
        if self.stop_time.is_none_or(|s| next <= s) {
            self.schedule(Lane::Timer, next, Event::Coordinate(id as u32));
        }
    }

    /// Add a tap observing `pipes` (each with its interface number in the pcapng file).
    pub fn add_tap(&mut self, tap: Tap, pipes: &[(PipeId, u32)]) {
        let t = self.taps.len() as u32;
        if tap.record_trace && self.traces.capture.is_none() {
            self.traces.capture = Some(Default::default());
        }
        self.taps.push(tap);
        for &(p, iface) in pipes {
            self.pipe_taps[p.0 as usize] = Some((t, iface));
            self.observed[p.0 as usize] = true;
            self.pipes[p.0 as usize].set_tapped();
        }
    }

    /// The first error writing a capture file, if any (the run goes on without that file).
    pub fn capture_error(&self) -> Option<&str> {
        self.capture_error.as_deref()
    }

    /// Flush every capture file (call when the run is over).
    pub fn flush_captures(&mut self) {
        for tap in &mut self.taps {
            if let Some(w) = tap.writer.as_mut() {
                if let Err(e) = w.flush() {
                    self.capture_error.get_or_insert_with(|| format!("tap {}: {e}", tap.name));
                    tap.writer = None;
                }
            }
        }
    }

    fn drain_tap(&mut self, p: PipeId) {
        let Some((t, iface)) = self.pipe_taps[p.0 as usize] else { return };
        let mut seen = std::mem::take(&mut self.tap_scratch);
        self.pipes[p.0 as usize].take_tapped(&mut seen);
        let tap = &mut self.taps[t as usize];
        for (time, pkt) in seen.drain(..) {
            let f = pkt.flow.0 as usize;
            let from = if pkt.to == End::Dst { 0 } else { 1 };
            tap.packets += 1;
            if let Some(w) = tap.writer.as_mut() {
                let mut id = self.wire_ids[f];
                if let FlowEngine::Tcp(tf) = &self.flows[f].engine {
                    id.wscale = [tf.ends[0].window_shift(), tf.ends[1].window_shift()];
                }
                if let Err(e) = w.write(iface, time, &pkt, from, &id) {
                    self.capture_error.get_or_insert_with(|| format!("tap {}: {e}", tap.name));
                    tap.writer = None;
                }
            }
            if tap.record_trace {
                let tr = self.traces.capture.as_mut().expect("enabled with the tap");
                let q = time.0 / tap.resolution_ps * tap.resolution_ps;
                tr.time_s.push(SimTime(q).as_secs_f64());
                tr.tap.push(t);
                tr.flow.push(f as u32);
                tr.dir.push(from as u32);
                tr.ip_len.push(pkt.size);
                match pkt.body {
                    Body::Tcp(h) => {
                        tr.seq.push(h.seq);
                        tr.ack.push(h.ack);
                        tr.len.push(h.len);
                        tr.flags.push(h.flags as u32);
                        tr.window.push(h.window);
                        tr.sack_blocks.push(h.sack_count() as u32);
                        tr.retransmit.push(h.retransmit as u32);
                    }
                    Body::Udp { seq, len } => {
                        tr.seq.push(seq);
                        tr.ack.push(0);
                        tr.len.push(len);
                        tr.flags.push(0);
                        tr.window.push(0);
                        tr.sack_blocks.push(0);
                        tr.retransmit.push(0);
                    }
                }
            }
        }
        self.tap_scratch = seen;
    }

    /// Add a pipe; `report_as_queue` lists it among the queues of the summary.
    pub fn add_pipe(&mut self, pipe: Pipe, report_as_queue: bool) -> PipeId {
        let id = PipeId(self.pipes.len() as u32);
        self.queue_index.push(report_as_queue.then_some(self.queue_pipes.len() as u32));
        if report_as_queue {
            self.queue_pipes.push(id);
        }
        self.queue_traced.push(false);
        self.queue_last.push(None);
        self.observed.push(false);
        self.pipe_taps.push(None);
        self.pipes.push(pipe);
        id
    }

    /// Add a route (the pipes from a source host to a destination host).
    pub fn add_route(&mut self, pipes: Vec<PipeId>) -> RouteId {
        assert!(!pipes.is_empty() && pipes.len() < u16::MAX as usize, "a route has 1..65535 pipes");
        self.routes.push(pipes);
        RouteId(self.routes.len() as u32 - 1)
    }

    /// The pipes of a route, from its source host.
    pub fn route_pipes(&self, r: RouteId) -> &[PipeId] {
        &self.routes[r.0 as usize]
    }

    /// Add a flow (with its wire identity for captures) and schedule its start.
    pub fn add_flow(&mut self, flow: Flow, wire: WireIdentity) -> FlowId {
        assert!(self.flows.len() < 1 << 31, "at most 2^31 flows (timer keys hold 2·flow + end)");
        let id = self.flows.len() as u32;
        self.wire_ids.push(wire);
        self.schedule(Lane::Timer, flow.info.start, Event::Start(id));
        self.flows.push(flow);
        FlowId(id)
    }

    /// Turn on the throughput trace with this bin length.
    pub fn trace_throughput(&mut self, interval: SimDuration) {
        self.traces.throughput = Some(Default::default());
        self.sample_interval = Some(interval);
        self.schedule(Lane::Timer, SimTime::ZERO + interval, Event::Sample);
    }

    /// Schedule `ev` at `t` under its canonical key.
    #[inline(always)]
    fn schedule(&mut self, lane: Lane, t: SimTime, ev: Event) {
        self.q.schedule(lane, ev.key(&self.order, t), ev);
    }

    /// Turn on the cwnd trace.
    pub fn trace_cwnd(&mut self) {
        self.traces.cwnd = Some(Default::default());
    }

    /// Turn on the TCP event trace.
    pub fn trace_events(&mut self) {
        self.traces.events = Some(Default::default());
    }

    /// Trace the occupancy of a queue pipe.
    pub fn trace_queue(&mut self, p: PipeId) {
        if self.traces.queue.is_none() {
            self.traces.queue = Some(Default::default());
        }
        self.queue_traced[p.0 as usize] = true;
        self.observed[p.0 as usize] = true;
        self.pipes[p.0 as usize].set_event_driven();
    }

    /// Current simulated time.
    pub fn now(&self) -> SimTime {
        self.q.now()
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.q.popped()
    }

    /// The stop time, if any.
    pub fn stop_time(&self) -> Option<SimTime> {
        self.stop_time
    }

    /// True once the stop condition holds.
    pub fn finished(&self) -> bool {
        self.finished
    }

    /// Why the run ended (`Running` until it has).
    pub fn stop_reason(&self) -> StopReason {
        self.stop_reason
    }

    /// The network-wide packet counters, emulators' copies included.
    pub fn packet_counters(&self) -> PacketCounters {
        PacketCounters { duplicated: self.pipes.iter().map(Pipe::duplicated).sum(), ..self.packets }
    }

    /// Packets currently inside the network (queued, in service or propagating).
    pub fn packets_inside(&self) -> u64 {
        self.pipes.iter().map(|p| p.packets_inside()).sum::<u64>() + self.merges.iter().map(|m| m.len() as u64).sum::<u64>()
    }

    /// Run until simulated time reaches `until` or the stop condition holds; returns
    /// `finished()`.
    pub fn advance(&mut self, until: SimTime) -> bool {
        if !self.pass_on_planned {
            self.plan_pass_on();
        }
        let time_limit = SimTime::ZERO + crate::units::MAX_TIME;
        let limit = until.min(self.stop_time.unwrap_or(time_limit));
        while !self.finished {
            match self.q.pop_until(limit) {
                Some((now, ev)) => self.dispatch(now, ev, limit),
                None => {
                    self.flush_captures();
                    if self.q.is_empty() && self.stop_rule != StopRule::Duration {
                        self.finished = true; // Nothing more can happen.
                        self.stop_reason = StopReason::Idle;
                    } else if let Some(s) = self.stop_time.filter(|&s| limit >= s) {
                        self.settle_merges(s);
                        self.q.advance_to(limit);
                        self.finished = true;
                        self.stop_reason = StopReason::Duration;
                    } else if self.stop_time.is_none() && limit >= time_limit {
                        self.q.advance_to(limit);
                        self.finished = true;
                        self.stop_reason = StopReason::TimeLimit;
                    } else {
                        self.q.advance_to(limit);
                    }
                    break;
                }
            }
        }
        self.finished
    }

    /// Run to the stop condition.
    pub fn run(&mut self) {
        self.advance(SimTime::MAX);
        self.flush_captures();
    }

    /// Handle one event popped at `now` (`limit`: the end of the current `advance`).
    fn dispatch(&mut self, now: SimTime, ev: Event, limit: SimTime) {
        match ev {
            Event::TxDone(p) => {
                let mut wake = PipeWake::default();
                self.pipes[p.0 as usize].tx_done(now, &mut wake);
                self.wake(p, wake);
                self.trace_queue_len(now, p);
                if self.pipe_taps[p.0 as usize].is_some() {
                    self.drain_tap(p);
                }
            }
            Event::Arrive(p) => self.arrivals(now, p, limit),
            Event::Timer { flow, end, gen } => self.on_timer(now, flow as usize, end as usize, gen),
            Event::Start(f) => self.start_flow(now, f as usize),
            Event::AppStop(f) => {
                self.pump(now, f as usize);
                self.emit(now, f as usize, 0);
                self.resched(f as usize, 0);
            }
            Event::Cbr(f) => self.cbr_send(now, f as usize),
            Event::Sample => self.sample(now),
            Event::Coordinate(c) => self.coordinate(now, c as usize),
            Event::Merge(m) => self.flush_merge(now, m as usize),
        }
    }

    /// Packets of pipe `p` reach its far end, the first at `now`. Back-to-back arrivals that
    /// no other event precedes are handled here in turn, without going through the event
    /// queue; each is handled exactly where its arrival event would pop.
    fn arrivals(&mut self, mut now: SimTime, p: PipeId, limit: SimTime) {
        loop {
            let mut wake = PipeWake::default();
            let arrived = self.pipes[p.0 as usize].arrive(now, &mut wake);
            debug_assert!(wake.tx_done.is_none(), "an arrival starts no transmission");
            let next = wake.arrival.map(|t| Event::Arrive(p).key(&self.order, t));
            if let Some(mut pkt) = arrived {
                pkt.hop += 1;
                if (pkt.hop as usize) < self.hops[pkt.route.0 as usize].len() {
                    self.forward(now, pkt);
                } else {
                    self.deliver(now, pkt);
                }
            }
            let Some(next) = next else { return };
            if !self.finished {
                if let Some(t) = self.q.take_if_next(next, limit) {
                    now = t;
                    continue;
                }
            }
            self.q.schedule(Lane::Busy, next, Event::Arrive(p));
            return;
        }
    }

    fn wake(&mut self, p: PipeId, w: PipeWake) {
        if let Some(t) = w.tx_done {
            self.schedule(Lane::Busy, t, Event::TxDone(p));
        }
        if let Some(t) = w.arrival {
            self.schedule(Lane::Busy, t, Event::Arrive(p));
        }
    }

    /// Give every hop its own arrival event (no pass-on, no merges; see `plan_pass_on`): the
    /// reference behaviour, for checks and benchmarks. Call before running.
    pub fn hop_by_hop(&mut self) {
        self.merges.clear();
        self.set_pass_on(&vec![false; self.pipes.len()], &[]);
    }

    /// Build the per-route hop tables from the per-pipe pass-on decision and the merges'
    /// feeders (`feeders[m]`: the pipes feeding `self.merges[m]`, in slot order).
    fn set_pass_on(&mut self, pass_on: &[bool], feeders: &[Vec<PipeId>]) {
        self.pass_on_planned = true;
        let mut merge_of = vec![None; self.pipes.len()];
        for (m, merge) in self.merges.iter().enumerate() {
            merge_of[merge.pipe.0 as usize] = Some(m as u32);
        }
        self.hops = self
            .routes
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(h, &p)| {
                        let next = r.get(h + 1);
                        let merge = next.and_then(|n| merge_of[n.0 as usize]);
                        let slot = merge.map_or(0, |m| feeders[m as usize].iter().position(|&f| f == p).expect("a merge lists its feeders"));
                        let slot = u16::try_from(slot).expect("a merge has under 65536 feeders");
                        let how = if merge.is_some() {
                            NextHop::Merge
                        } else if next.is_some_and(|n| pass_on[n.0 as usize]) {
                            NextHop::PassOn
                        } else {
                            NextHop::Event
                        };
                        Hop { pipe: p, next: how, merge: merge.unwrap_or(0), merge_slot: slot }
                    })
                    .collect()
            })
            .collect();
    }

    /// Decide which pipes take packets straight from their upstream pipe, and which take them
    /// through a merge.
    ///
    /// **Pass-on.** A pipe qualifies when every route that uses it enters it from one and the
    /// same upstream pipe (never from a host), that upstream pipe fixes each packet's arrival
    /// time when it accepts the packet and keeps FIFO order, and the pipe itself is unobserved
    /// (no tap, no queue trace) and decides on admission too. Its admissions then come from a
    /// single FIFO in non-decreasing time, so admitting a packet at its (future) arrival time
    /// the moment the upstream pipe accepts it gives the same drops and the same times as an
    /// arrival event would — one event per packet for the whole chain instead of one per hop.
    ///
    /// **Merges.** A pipe that several pipes feed (a switch port shared by many senders) can't
    /// do that: its packets must be admitted in time order across feeders. It qualifies for a
    /// merge (`net::merge`) when it is unobserved and decides on admission, and on every route
    /// that uses it the packet gets there from its host without any event: every pipe before it
    /// decides on admission, keeps order and is unobserved, and all but the first are pass-on
    /// pipes. A packet is then registered, with its arrival time, when its host sends it, at
    /// least `lead` (the smallest sum of propagation delays in front of the pipe) before it
    /// arrives, so a flush at time g admits every arrival before g + lead in exact time order.
    /// Nothing sees the pipe's state but its own later admissions, and whatever it sends on
    /// arrives after its delay, so a flush may wait until the earliest held packet's arrival
    /// plus the pipe's delay: one event per batch instead of one per packet. Equal arrival
    /// times are admitted in the order the packets entered the network.
    ///
    /// Arrivals after the stop time are left to events or held, so every counter at the stop
    /// is the same; only the order of events at the very same picosecond may differ. A run
    /// that stops when its flows are done stops at an instant nobody knows in advance, so
    /// there the queue counters could run ahead of it: such runs keep one event per hop.
    fn plan_pass_on(&mut self) {
        if self.stop_rule == StopRule::FlowsDone {
            self.hop_by_hop();
            return;
        }
        const HOST: u32 = u32::MAX;
        const MANY: u32 = u32::MAX - 1;
        let n = self.pipes.len();
        let mut feeder: Vec<Option<u32>> = vec![None; n];
        let mut from_host = vec![false; n];
        for route in &self.routes {
            from_host[route[0].0 as usize] = true;
            for (h, p) in route.iter().enumerate() {
                let from = if h == 0 { HOST } else { route[h - 1].0 };
                let f = &mut feeder[p.0 as usize];
                *f = match *f {
                    None => Some(from),
                    Some(x) if x == from => Some(x),
                    Some(_) => Some(MANY),
                };
            }
        }
        let steady = |p: usize| {
            let pipe = &self.pipes[p];
            pipe.decides_on_admission() && pipe.keeps_order() && !self.observed[p]
        };
        let pass_on: Vec<bool> = (0..n)
            .map(|p| match feeder[p] {
                Some(u) if u != HOST && u != MANY => steady(u as usize) && self.pipes[p].decides_on_admission() && !self.observed[p],
                _ => false,
            })
            .collect();
        self.merges.clear();
        let mut feeders: Vec<Vec<PipeId>> = Vec::new();
        for p in 0..n {
            if pass_on[p] || from_host[p] || feeder[p].is_none() || !self.pipes[p].decides_on_admission() || self.observed[p] {
                continue;
            }
            let mut lead = SimDuration(u64::MAX);
            let mut fed_by: Vec<PipeId> = Vec::new();
            let mut eligible = true;
            for route in &self.routes {
                for h in (1..route.len()).filter(|&h| route[h].0 as usize == p) {
                    let chain = &route[..h];
                    eligible &= chain.iter().all(|q| steady(q.0 as usize)) && chain[1..].iter().all(|q| pass_on[q.0 as usize]);
                    lead = lead.min(SimDuration(chain.iter().map(|q| self.pipes[q.0 as usize].delay().as_ps()).sum()));
                    if !fed_by.contains(&chain[h - 1]) {
                        fed_by.push(chain[h - 1]);
                    }
                }
            }
            let pipe = &self.pipes[p];
            // A rate-limited pipe sends nothing on before arrival + serialization + delay; an
            // unlimited one before arrival + delay: the flush must come strictly earlier.
            let hold = match pipe.rate() {
                Some(_) => Some(pipe.delay()),
                None => pipe.delay().as_ps().checked_sub(1).map(SimDuration),
            };
            match hold {
                Some(hold) if eligible && lead.as_ps() + hold.as_ps() >= 1 => {
                    self.merges.push(Merge::new(PipeId(p as u32), fed_by.clone(), lead, hold, self.order));
                    feeders.push(fed_by);
                }
                _ => {}
            }
        }
        self.set_pass_on(&pass_on, &feeders);
    }

    /// Admit a merge's packets that are due at `now` (a flush event), and schedule the next.
    fn flush_merge(&mut self, now: SimTime, m: usize) {
        let Some(before) = self.merges[m].begin_flush(now) else { return };
        // Never admit a packet that arrives after the stop: the counters at the stop must be
        // those of a run with an event per hop (such packets stay held, inside the network).
        let before = self.stop_time.map_or(before, |s| before.min(s + SimDuration(1)));
        self.admit_held(m, before);
        if let Some(t) = self.merges[m].end_flush() {
            self.schedule(Lane::Busy, t, Event::Merge(m as u32));
        }
    }

    /// At the stop time: admit every held packet that arrives by then, so the counters at the
    /// stop are those of a run with an event per hop.
    fn settle_merges(&mut self, stop: SimTime) {
        for m in 0..self.merges.len() {
            self.admit_held(m, stop + SimDuration(1));
        }
    }

    /// Send on a merge's held packets that arrive before `before`, in order.
    fn admit_held(&mut self, m: usize, before: SimTime) {
        while let Some((at, pkt)) = self.merges[m].pop_before(before) {
            self.forward(at, pkt);
        }
    }

    fn forward(&mut self, mut now: SimTime, mut pkt: Packet) {
        let hops = &self.hops[pkt.route.0 as usize];
        let mut wake = PipeWake::default();
        let p = loop {
            let hop = hops[pkt.hop as usize];
            let pipe = &mut self.pipes[hop.pipe.0 as usize];
            if hop.next == NextHop::Merge {
                return self.register_in_merge(now, pkt, hop);
            }
            if hop.next == NextHop::Event {
                match pipe.offer(now, pkt, &mut wake) {
                    Offer::Accepted => {}
                    drop => self.packets.count_drop(drop),
                }
                break hop.pipe;
            }
            match pipe.offer_through(now, pkt.size) {
                Ok(at) if self.stop_time.is_none_or(|s| at <= s) => {
                    // Straight into the next pipe at its arrival time.
                    now = at;
                    pkt.hop += 1;
                }
                Ok(at) => {
                    pipe.keep_in_line(at, pkt, &mut wake);
                    break hop.pipe;
                }
                Err(drop) => {
                    self.packets.count_drop(drop);
                    break hop.pipe;
                }
            }
        };
        self.wake(p, wake);
        if self.observed[p.0 as usize] {
            self.trace_queue_len(now, p);
            if self.pipe_taps[p.0 as usize].is_some() {
                self.drain_tap(p);
            }
        }
    }

    /// Offer a packet to `hop`'s pipe and, if accepted, register it with the next pipe's merge
    /// (admitted there in time order by a flush).
    #[inline(never)]
    fn register_in_merge(&mut self, now: SimTime, mut pkt: Packet, hop: Hop) {
        match self.pipes[hop.pipe.0 as usize].offer_through(now, pkt.size) {
            Ok(at) => {
                pkt.hop += 1;
                if let Some(t) = self.merges[hop.merge as usize].push(hop.merge_slot as u32, at, pkt) {
                    self.schedule(Lane::Busy, t, Event::Merge(hop.merge));
                }
            }
            Err(drop) => self.packets.count_drop(drop),
        }
    }

    fn trace_queue_len(&mut self, now: SimTime, p: PipeId) {
        if !self.queue_traced[p.0 as usize] {
            return;
        }
        let (Some(tr), Some(qi)) = (self.traces.queue.as_mut(), self.queue_index[p.0 as usize]) else { return };
        let q = &self.pipes[p.0 as usize].queue;
        let (n, b) = (q.len_packets(), q.len_bytes());
        // Record only changes, per queue (kept per pipe: no search back through the trace).
        let last = &mut self.queue_last[p.0 as usize];
        if *last == Some((n, b)) {
            return;
        }
        *last = Some((n, b));
        tr.time_s.push(now.as_secs_f64());
        tr.queue.push(qi);
        tr.packets.push(n);
        tr.bytes.push(b);
    }

    fn deliver(&mut self, now: SimTime, pkt: Packet) {
        self.packets.delivered += 1;
        let f = pkt.flow.0 as usize;
        match (&mut self.flows[f].engine, pkt.body) {
            (FlowEngine::Tcp(t), Body::Tcp(h)) => {
                let e = if pkt.to == End::Dst { 1 } else { 0 };
                t.ends[e].on_segment(now, &h, &mut self.out);
                self.after_conn(now, f, e);
            }
            (FlowEngine::Udp(u), Body::Udp { len, .. }) => {
                u.received += 1;
                u.bytes_received += len as u64;
            }
            _ => unreachable!("a packet's body always matches its flow's kind"),
        }
    }

    fn after_conn(&mut self, now: SimTime, f: usize, e: usize) {
        if e == 0 {
            self.pump(now, f);
        } else {
            self.close_dst_if_peer_closed(now, f);
        }
        self.emit(now, f, e);
        self.resched(f, e);
        if e == 0 {
            self.record_cwnd(now, f);
        }
    }

    fn close_dst_if_peer_closed(&mut self, now: SimTime, f: usize) {
        let flow = &mut self.flows[f];
        let FlowEngine::Tcp(t) = &mut flow.engine else { return };
        if !t.dst_closed && t.ends[1].peer_closed() {
            t.dst_closed = true;
            t.ends[1].close(now, &mut self.out);
            if flow.finish.is_none() {
                flow.finish = Some(now);
                self.flow_done();
            }
        }
    }

    fn flow_done(&mut self) {
        self.flows_done += 1;
        if self.stop_rule == StopRule::FlowsDone && self.flows_done == self.flows.len() {
            self.finished = true;
            self.stop_reason = StopReason::FlowsDone;
        }
    }

    fn pump(&mut self, now: SimTime, f: usize) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        let conn = &mut t.ends[0];
        loop {
            let want = t.app.wants(now);
            let space = conn.send_space();
            if want == 0 || space == 0 {
                break;
            }
            if want < space && conn.writes_are_quiet() {
                // More than one write to go, and they only queue bytes: make them one.
                let n = t.app.fill(now, space);
                conn.write(now, n, &mut self.out);
                break;
            }
            let n = conn.write(now, want, &mut self.out);
            t.app.wrote(n);
            if n < want {
                break;
            }
        }
        if t.app.finished_writing(now) && t.app.mark_closed() {
            conn.close(now, &mut self.out);
        }
    }

    fn emit(&mut self, now: SimTime, f: usize, e: usize) {
        if self.out.segments.is_empty() && self.out.events.is_empty() {
            return;
        }
        let flow = &self.flows[f];
        let (route, class) = (flow.routes[e], flow.class);
        let to = if e == 0 { End::Dst } else { End::Src };
        if let Some(tr) = self.traces.events.as_mut() {
            for ev in &self.out.events {
                tr.time_s.push(now.as_secs_f64());
                tr.flow.push(f as u32);
                tr.kind.push(ev.kind as u32);
                tr.seq.push(ev.seq);
            }
        }
        self.out.events.clear();
        let mut segs = std::mem::take(&mut self.out.segments);
        for h in segs.drain(..) {
            let pkt = Packet { flow: FlowId(f as u32), to, route, hop: 0, class, size: h.ip_len(), created: now, body: Body::Tcp(h) };
            self.packets.created += 1;
            self.forward(now, pkt);
        }
        self.out.segments = segs;
    }

    fn resched(&mut self, f: usize, e: usize) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        let Some(d) = t.ends[e].next_deadline() else { return };
        if t.sched[e].is_none_or(|(s, _)| d < s) {
            t.gen[e] = t.gen[e].wrapping_add(1);
            let d = d.max(self.q.now());
            t.sched[e] = Some((d, t.gen[e]));
            let ev = Event::Timer { flow: f as u32, end: e as u8, gen: t.gen[e] };
            self.q.schedule(Lane::Timer, ev.key(&self.order, d), ev);
        }
    }

    fn on_timer(&mut self, now: SimTime, f: usize, e: usize, gen: u32) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        if t.sched[e].is_none_or(|(_, g)| g != gen) {
            return; // Stale: superseded by an earlier deadline.
        }
        t.sched[e] = None;
        if t.ends[e].next_deadline().is_some_and(|d| d <= now) {
            t.ends[e].on_timer(now, &mut self.out);
            self.after_conn(now, f, e);
        } else {
            self.resched(f, e);
        }
    }

    fn start_flow(&mut self, now: SimTime, f: usize) {
        match &mut self.flows[f].engine {
            FlowEngine::Tcp(t) => {
                t.ends[1].listen();
                t.ends[0].connect(now, &mut self.out);
                if let Some(s) = t.app.stop_at {
                    let ev = Event::AppStop(f as u32);
                    self.q.schedule(Lane::Timer, ev.key(&self.order, s.max(now)), ev);
                }
                self.after_conn(now, f, 0);
            }
            FlowEngine::Udp(u) => {
                if let Some(t) = u.src.next_time() {
                    let ev = Event::Cbr(f as u32);
                    self.q.schedule(Lane::Busy, ev.key(&self.order, t.max(now)), ev);
                } else {
                    self.flows[f].finish = Some(now);
                    self.flow_done();
                }
            }
        }
    }

    fn cbr_send(&mut self, now: SimTime, f: usize) {
        let flow = &mut self.flows[f];
        let FlowEngine::Udp(u) = &mut flow.engine else { return };
        let size = u.src.packet_size;
        let seq = u.src.sent;
        u.src.sent += 1;
        let next = u.src.next_time();
        let pkt = Packet {
            flow: FlowId(f as u32),
            to: End::Dst,
            route: flow.routes[0],
            hop: 0,
            class: flow.class,
            size,
            created: now,
            body: Body::Udp { seq, len: size - IPV4_HEADER - UDP_HEADER },
        };
        match next {
            Some(t) => {
                let ev = Event::Cbr(f as u32);
                self.q.schedule(Lane::Busy, ev.key(&self.order, t), ev);
            }
            None => {
                flow.finish = Some(now);
                self.flow_done();
            }
        }
        self.packets.created += 1;
        self.forward(now, pkt);
    }

    fn record_cwnd(&mut self, now: SimTime, f: usize) {
        let Some(tr) = self.traces.cwnd.as_mut() else { return };
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        let c = &t.ends[0];
        let key = (c.cwnd(), c.ssthresh());
        if key == t.last_cwnd {
            return;
        }
        t.last_cwnd = key;
        tr.time_s.push(now.as_secs_f64());
        tr.flow.push(f as u32);
        tr.cwnd_bytes.push(key.0);
        tr.ssthresh_bytes.push(key.1);
        tr.srtt_s.push(c.srtt().map_or(0.0, |d| d.as_secs_f64()));
        tr.inflight_bytes.push(c.inflight());
    }

    fn sample(&mut self, now: SimTime) {
        let Some(interval) = self.sample_interval else { return };
        let tr = self.traces.throughput.as_mut().expect("sampling implies the trace");
        for (i, flow) in self.flows.iter_mut().enumerate() {
            let d = flow.delivered();
            let bytes = d - flow.last_sample_bytes;
            flow.last_sample_bytes = d;
            tr.time_s.push(now.as_secs_f64());
            tr.flow.push(i as u32);
            tr.bytes.push(bytes);
            tr.bps.push(bytes as f64 * 8.0 / interval.as_secs_f64());
        }
        let next = now + interval;
        if self.stop_time.is_none_or(|s| next <= s) {
            self.schedule(Lane::Timer, next, Event::Sample);
        }
    }

    /// The summary of the run so far.
    pub fn summary(&self) -> RunSummary {
        let now = self.now();
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let end = f.finish.unwrap_or(now);
                let span = end.since(f.info.start).as_secs_f64();
                let delivered = f.delivered();
                let mut s = FlowSummary {
                    id: i as u32,
                    name: f.info.name.clone(),
                    kind: f.info.kind,
                    src: f.info.src.clone(),
                    dst: f.info.dst.clone(),
                    cc: f.info.cc,
                    start_s: f.info.start.as_secs_f64(),
                    finish_s: f.finish.map(|t| t.as_secs_f64()),
                    bytes_delivered: delivered,
                    goodput_bps: if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 },
                    ..FlowSummary::default()
                };
                match &f.engine {
                    FlowEngine::Tcp(t) => {
                        let c = &t.ends[0];
                        s.segments_sent = c.stats.segments_sent;
                        s.bytes_sent = c.stats.bytes_sent;
                        s.retransmits = c.stats.retransmits;
                        s.timeouts = c.stats.timeouts;
                        s.fast_retransmits = c.stats.fast_retransmits;
                        s.dupacks_received = c.stats.dupacks_received;
                        s.srtt_s = c.srtt().map(|d| d.as_secs_f64());
                        s.cwnd_bytes = c.cwnd();
                    }
                    FlowEngine::Udp(u) => {
                        s.segments_sent = u.src.sent;
                        s.bytes_sent = u.src.sent * (u.src.packet_size - IPV4_HEADER - UDP_HEADER) as u64;
                        s.packets_received = u.received;
                    }
                }
                s
            })
            .collect();
        let queues = self
            .queue_pipes
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let pipe = &self.pipes[p.0 as usize];
                let st = pipe.queue_stats(now);
                QueueSummary {
                    id: i as u32,
                    name: pipe.name.clone(),
                    enqueued: st.enqueued,
                    dropped: st.dropped,
                    departed: st.departed,
                    max_packets: st.max_packets,
                    max_bytes: st.max_bytes,
                    random_drops: pipe.stats.random_drops,
                    bytes_transmitted: pipe.transmitted_by(now).1,
                }
            })
            .collect();
        RunSummary { sim_time_s: now.as_secs_f64(), stop_reason: self.stop_reason, events: self.events(), flows, queues, packets: self.packet_counters() }
    }
}

/// Per-flow results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    /// Flow id (index).
    pub id: u32,
    /// Name.
    pub name: String,
    /// `"tcp"` or `"udp-cbr"`.
    pub kind: &'static str,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// Congestion controller (`"none"` for UDP).
    pub cc: &'static str,
    /// Start time, s.
    pub start_s: f64,
    /// Completion time at the receiver, s (null while running).
    pub finish_s: Option<f64>,
    /// Payload bytes delivered in order.
    pub bytes_delivered: u64,
    /// bytes_delivered·8 / (finish or now − start).
    pub goodput_bps: f64,
    /// Data segments (UDP: datagrams) sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Retransmitted segments, bare FINs included (`segments_sent` counts only segments
    /// with payload).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Duplicate ACKs received by the sender.
    pub dupacks_received: u64,
    /// Final smoothed RTT, s.
    pub srtt_s: Option<f64>,
    /// Final congestion window, bytes.
    pub cwnd_bytes: u64,
    /// UDP datagrams received.
    pub packets_received: u64,
}

/// Per-queue results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSummary {
    /// Queue id (index).
    pub id: u32,
    /// Name, e.g. `"sw->b"`.
    pub name: String,
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets tail-dropped.
    pub dropped: u64,
    /// Packets that left for the wire.
    pub departed: u64,
    /// Largest occupancy, packets.
    pub max_packets: u64,
    /// Largest occupancy, bytes.
    pub max_bytes: u64,
    /// Packets dropped by random loss (emulators).
    pub random_drops: u64,
    /// IP bytes transmitted.
    pub bytes_transmitted: u64,
}

/// Results of a run (the scenario layer adds version, seed and hash).
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// Simulated time reached, s.
    pub sim_time_s: f64,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// Events processed.
    pub events: u64,
    /// Per-flow results.
    pub flows: Vec<FlowSummary>,
    /// Per-queue results.
    pub queues: Vec<QueueSummary>,
    /// Network-wide packet counters.
    pub packets: PacketCounters,
}

/// Names of the event codes used in the `events` trace.
pub fn event_codes() -> Vec<(u32, &'static str)> {
    TcpEventKind::ALL.iter().map(|k| (*k as u32, k.name())).collect()
}
