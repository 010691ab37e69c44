//! The simulation: owns the clock and the event queue and dispatches events by `match` on a
//! closed enum to the parts that own the state: the forwarding fabric (`net::fabric`: pipes,
//! routes, forwarding, packet counters), the flows (their TCP endpoints, here), the
//! applications over their sockets (`apps::Apps`: told their notices here, their effects
//! carried out here), the observers (`observe`: taps and traces), the agents (`crate::agent`)
//! and the summary (`summary::summarize`). The fabric hands back the packets that reach a host; the simulation gives them
//! to their flow. No globals: everything a run touches lives in one `Simulation` value.

mod apps;
mod observe;
mod spawn;
mod summary;
mod usage;

pub use apps::{AppSlot, Apps};
pub use observe::{Observers, Tap};
pub use spawn::{FlowSource, MadeFlow};
pub use summary::{event_codes, milestone_codes, summarize, FlowSummary, MessageSummary, QueueSummary, RunSummary};
pub use usage::{LinkUsage, LinkUsageInfo, WatchedPipe};

pub use crate::net::counters::PacketCounters;

use serde::Serialize;

/// The observers as the fabric sees them (a `PipeObserver` borrowing only the observers, the
/// flows and the traces, so the fabric and the event queue stay free).
macro_rules! view {
    ($s:ident) => {
        observe::PipeView { observers: &mut $s.observers, flows: &$s.flows, traces: &mut $s.traces }
    };
}

use crate::agent::{Action, Agent};
use crate::app::{Application, Interest, Notice, Socket};
use crate::engine::order::{Key, Order, Rank};
use crate::engine::queue::Lane;
use crate::engine::EventQueue;
use crate::flow::{Flow, FlowEngine};
use crate::net::fabric::{Fabric, NetEvent, Touched};
use crate::net::link_layer::LinkMark;
use crate::net::packet::{flags, Body, End, FlowId, Packet, RouteId, TcpHeader, IPV4_HEADER, UDP_HEADER};
use crate::net::pipe::{Pipe, PipeId};
use crate::tcp::{Output, Wake};
use crate::trace::pcap::WireIdentity;
use crate::trace::{EventRow, MessageRow, MilestoneRow, Traces};
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
    /// The forwarding fabric's events.
    Net(NetEvent),
    Timer {
        flow: u32,
        end: u8,
        gen: u32,
    },
    /// An application's start.
    AppStart {
        app: u32,
        order: u32,
    },
    /// An application's timer (`rank`: its kind's place among simultaneous events).
    AppTimer {
        app: u32,
        order: u32,
        rank: Rank,
    },
    Sample,
    /// The end of a `link_usage` interval.
    UsageSample,
    /// A flow source's next flow arrives (`spawn`).
    Spawn {
        source: u32,
    },
    /// An agent's instant (`rank` and `source`: its kind's place and its index among its kind).
    Agent {
        agent: u32,
        source: u32,
        rank: Rank,
    },
}

impl From<NetEvent> for Event {
    #[inline(always)]
    fn from(e: NetEvent) -> Event {
        Event::Net(e)
    }
}

impl Event {
    /// The event's place among events at the same instant (`engine::order`): its kind and its
    /// source (a pipe, a flow, a flow's endpoint as `2·flow + end`, a merge, an agent).
    #[inline(always)]
    fn key(self, order: &Order, t: SimTime) -> Key {
        let (rank, id) = match self {
            Event::Net(e) => return e.key(order, t),
            Event::Timer { flow, end, .. } => (Rank::Timer, flow << 1 | end as u32),
            Event::AppStart { order, .. } => (Rank::Start, order),
            Event::AppTimer { order, rank, .. } => (rank, order),
            Event::Sample => (Rank::Sample, 0),
            Event::UsageSample => (Rank::Sample, 1),
            Event::Agent { source, rank, .. } => (rank, source),
            Event::Spawn { source } => Simulation::spawn_key(source),
        };
        order.key(t, rank, id)
    }
}

/// One simulation run.
#[derive(Debug)]
pub struct Simulation {
    q: EventQueue<Event>,
    /// The canonical order of simultaneous events (salted by the seed).
    order: Order,
    /// The pipes, routes and forwarding state, and the packet counters.
    pub fabric: Fabric,
    /// Pipes reported as queues (rate-limited ones), in report order.
    pub queue_pipes: Vec<PipeId>,
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
    /// Flows a run that stops when the flows are done waits for (those not background).
    flows_awaited: usize,
    out: Output,
    /// Taps, the queue trace's per-pipe state and the flows' wire identities.
    pub observers: Observers,
    /// Agents (coordinators, AHTCP monitors).
    pub agents: Vec<Agent>,
    /// The applications and their last effects.
    apps: Apps,
    /// Flow sources (workloads) making flows at run time.
    sources: Vec<spawn::Source>,
    /// Release the connections of finished flows made at run time (`keep_connections` turns
    /// it off; results are the same either way).
    retire: bool,
    /// Every answered request's (completion time, slowdown), when the run has
    /// request/response flows (the summary's `messages`).
    answered: Option<Vec<(f64, f64)>>,
}

impl Simulation {
    /// An empty simulation with a stop rule, an optional stop time and the salt of its event
    /// order (which of several simultaneous events goes first; derive it from the seed).
    pub fn new(stop_rule: StopRule, stop_time: Option<SimTime>, order_salt: u64) -> Self {
        Simulation {
            q: EventQueue::new(),
            order: Order::new(order_salt),
            fabric: Fabric::new(stop_time, Order::new(order_salt)),
            queue_pipes: Vec::new(),
            flows: Vec::new(),
            traces: Traces::default(),
            sample_interval: None,
            stop_rule,
            stop_time,
            finished: false,
            stop_reason: StopReason::Running,
            flows_done: 0,
            flows_awaited: 0,
            out: Output::default(),
            observers: Observers::default(),
            agents: Vec::new(),
            apps: Apps::default(),
            sources: Vec::new(),
            retire: true,
            answered: None,
        }
    }

    /// Add an agent; it first acts one interval after time zero. Agents of one kind are
    /// ordered among simultaneous events by the order they were added.
    pub fn add_agent(&mut self, a: Agent) {
        let agent = self.agents.len() as u32;
        let source = self.agents.iter().filter(|b| b.rank() == a.rank()).count() as u32;
        self.schedule(Lane::Timer, SimTime::ZERO + a.interval(), Event::Agent { agent, source, rank: a.rank() });
        self.agents.push(a);
    }

    /// Agent `agent` acts at `now`; the simulation carries out what it asks.
    fn agent(&mut self, now: SimTime, agent: u32, source: u32, rank: Rank) {
        for action in self.agents[agent as usize].act(&self.flows) {
            match action {
                Action::ClampWindow { flow, bytes } => {
                    let sender = self.flows[flow].data_sender();
                    if let FlowEngine::Tcp(t) = &mut self.flows[flow].engine {
                        if let Some(w) = t.ends[sender].window_for_remedy() {
                            crate::agent::clamp(w, bytes);
                        }
                    }
                    self.record_cwnd(now, flow);
                }
                Action::Signal { flow, end } => {
                    let FlowEngine::Tcp(t) = &mut self.flows[flow].engine else { continue };
                    if t.ends[end].signal(now, &mut self.out) {
                        self.sent_by(now, crate::app::Socket::new(flow as u32, end as u8));
                    }
                }
            }
        }
        let next = now + self.agents[agent as usize].interval();
        if !self.agents[agent as usize].done(&self.flows) && self.stop_time.is_none_or(|s| next <= s) {
            self.schedule(Lane::Timer, next, Event::Agent { agent, source, rank });
        }
    }

    /// Add a tap observing `pipes` (each with its interface number in the pcapng file).
    pub fn add_tap(&mut self, tap: Tap, pipes: &[(PipeId, u32)]) {
        self.observers.add_tap(tap, pipes, &mut self.traces);
        for &(p, _) in pipes {
            self.fabric.pipes[p.0 as usize].set_tapped();
            self.fabric.observe(p);
        }
    }

    /// The first error writing a capture file, if any (the run goes on without that file).
    pub fn capture_error(&self) -> Option<&str> {
        self.observers.capture_error()
    }

    /// Flush every capture file (call when the run is over).
    pub fn flush_captures(&mut self) {
        self.observers.flush_captures();
    }

    /// Add a pipe; `report_as_queue` lists it among the queues of the summary.
    pub fn add_pipe(&mut self, pipe: Pipe, report_as_queue: bool) -> PipeId {
        let id = self.fabric.add_pipe(pipe);
        self.observers.add_pipe(report_as_queue.then_some(self.queue_pipes.len() as u32));
        if report_as_queue {
            self.queue_pipes.push(id);
        }
        id
    }

    /// Add a route (the pipes from a source host to a destination host).
    pub fn add_route(&mut self, pipes: Vec<PipeId>) -> RouteId {
        self.fabric.add_route(pipes)
    }

    /// The pipes of a route, from its source host.
    pub fn route_pipes(&self, r: RouteId) -> &[PipeId] {
        self.fabric.route_pipes(r)
    }

    /// Add a flow (with its wire identity for captures); applications open and use it (see
    /// `add_app`).
    pub fn add_flow(&mut self, flow: Flow, wire: WireIdentity) -> FlowId {
        assert!(self.flows.len() < 1 << 31, "at most 2^31 flows (timer keys hold 2·flow + end)");
        let id = self.flows.len() as u32;
        self.observers.wire_ids.push(wire);
        self.flows_awaited += usize::from(!flow.info.background);
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

    /// Turn on the application milestone trace.
    pub fn trace_milestones(&mut self) {
        self.traces.milestones = Some(Default::default());
    }

    /// Keep every answered request's completion time and slowdown for the summary's
    /// `messages` (a run with request/response flows).
    pub fn summarise_messages(&mut self) {
        self.answered.get_or_insert_with(Vec::new);
    }

    /// Turn on the `messages` trace (every answered request of the request/response clients).
    pub fn trace_messages(&mut self) {
        self.traces.messages = Some(Default::default());
    }

    /// Turn on the `rtt` trace (every RTT sample of each flow's data sender).
    pub fn trace_rtt(&mut self) {
        self.traces.rtt = Some(Default::default());
    }

    /// Turn on the `cc_state` trace (each flow's controller state, `CongestionControl::probe`).
    pub fn trace_cc_state(&mut self) {
        self.traces.cc_state = Some(Default::default());
    }

    /// The names of each TCP flow's `cc_state` values (its data sender's controller's
    /// `probe_names`), by flow id.
    pub fn cc_state_names(&self) -> Vec<(usize, &'static [&'static str])> {
        use crate::tcp::cc::CongestionControl;
        let mut out = Vec::new();
        for (f, flow) in self.flows.iter().enumerate() {
            match &flow.engine {
                FlowEngine::Tcp(t) => out.push((f, t.ends[flow.data_sender()].controller().probe_names())),
                FlowEngine::Retired(r) => out.push((f, r.probe_names)),
                FlowEngine::Udp(_) => {}
            }
        }
        out
    }

    /// Turn on the `measurements` trace (a variant's inline measurements).
    pub fn trace_measurements(&mut self) {
        self.traces.measurements = Some(Default::default());
    }

    /// Turn on the TCP event trace.
    pub fn trace_events(&mut self) {
        self.traces.events = Some(Default::default());
    }

    /// Turn on the `link_usage` trace: count what `pipes` carry per flow, written every
    /// `interval` (the pipes keep what they carried and are read at each row; they may still
    /// be passed on or merged). Call once, before running.
    pub fn trace_link_usage(&mut self, pipes: &[PipeId], interval: SimDuration) {
        assert!(self.traces.link_usage.is_none(), "the link_usage trace is turned on once");
        self.traces.link_usage = Some(Default::default());
        for &p in pipes {
            self.observers.usage.watch(p, interval);
            self.fabric.pipes[p.0 as usize].set_counted();
        }
        self.schedule(Lane::Timer, SimTime::ZERO + interval, Event::UsageSample);
    }

    /// Trace the occupancy of a queue pipe.
    pub fn trace_queue(&mut self, p: PipeId) {
        self.observers.trace_queue(p, &mut self.traces);
        self.fabric.pipes[p.0 as usize].set_event_driven();
        self.fabric.observe(p);
    }

    /// The summary of the run so far (`summary::summarize`).
    pub fn summary(&self) -> RunSummary {
        summarize(self)
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
        self.fabric.packet_counters()
    }

    /// Packets currently inside the network (queued, in service or propagating).
    pub fn packets_inside(&self) -> u64 {
        self.fabric.packets_inside()
    }

    /// Run until simulated time reaches `until` or the stop condition holds; returns
    /// `finished()`.
    pub fn advance(&mut self, until: SimTime) -> bool {
        if !self.fabric.is_planned() {
            self.fabric.plan(self.stop_rule == StopRule::FlowsDone);
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
                        self.fabric.settle_merges(s, &mut self.q, &mut view!(self));
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
        if self.stop_reason == StopReason::FlowsDone {
            // Stopped at an instant not known in advance: counters as of the stop.
            let (key, event) = (self.q.current_key(), self.q.popped());
            self.fabric.settle_unknown_stop(key, event, &mut self.q, &mut view!(self));
        }
        self.finished
    }

    /// Give every hop its own arrival event (no pass-on, no merges): the reference behaviour,
    /// for checks and benchmarks. Call before running.
    pub fn hop_by_hop(&mut self) {
        self.fabric.hop_by_hop();
    }

    /// Let each trace enabled so far hold at most `bytes` of rows (`Traces::set_budget`;
    /// default: no limit). The run itself is unaffected.
    pub fn set_trace_budget(&mut self, bytes: u64) {
        self.traces.set_budget(bytes);
    }

    /// Run to the stop condition.
    pub fn run(&mut self) {
        self.advance(SimTime::MAX);
        self.flush_captures();
    }

    /// Handle one event popped at `now` (`limit`: the end of the current `advance`).
    fn dispatch(&mut self, now: SimTime, ev: Event, limit: SimTime) {
        match ev {
            Event::Net(NetEvent::TxDone(p)) => self.fabric.tx_done(now, p, &mut self.q, &mut view!(self)),
            Event::Net(NetEvent::Arrive(p)) => self.arrivals(now, p, limit),
            Event::Net(NetEvent::Flush(m)) => self.fabric.flush_merge(now, m as usize, &mut self.q, &mut view!(self)),
            Event::Timer { flow, end, gen } => self.on_timer(now, flow as usize, end as usize, gen),
            Event::AppStart { app, .. } => self.notify(now, app as usize, Notice::Start, None),
            Event::AppTimer { app, .. } => {
                if self.apps.timer_due(now, app as usize) {
                    self.notify(now, app as usize, Notice::Timer, None);
                }
            }
            Event::Sample => self.sample(now),
            Event::UsageSample => self.usage_sample(now),
            Event::Agent { agent, source, rank } => self.agent(now, agent, source, rank),
            Event::Spawn { source } => self.spawn(now, source),
        }
    }

    /// Packets of pipe `p` reach its far end, the first at `now`. Back-to-back arrivals that
    /// no other event precedes are handled here in turn, without going through the event
    /// queue; each is handled exactly where its arrival event would pop.
    fn arrivals(&mut self, mut now: SimTime, p: PipeId, limit: SimTime) {
        loop {
            let (arrived, next) = self.fabric.arrive(now, p);
            if let Some(pkt) = arrived {
                if self.fabric.reached_destination(&pkt) {
                    self.deliver(now, pkt);
                } else {
                    let touched = self.fabric.forward(now, pkt, &mut self.q);
                    self.tell_observers(touched);
                }
            }
            let Some(next) = next else { return };
            if !self.finished {
                if let Some(t) = self.q.take_if_next(next, limit) {
                    now = t;
                    continue;
                }
            }
            self.q.schedule(Lane::Busy, next, Event::Net(NetEvent::Arrive(p)));
            return;
        }
    }

    /// Add an application owning `sockets` (each socket has at most one owner); it is told
    /// `Notice::Start` at `start`, if given. Its events stand among simultaneous ones by the
    /// flow of its first socket. Returns its index.
    pub fn add_app(&mut self, app: Application, sockets: &[Socket], start: Option<SimTime>) -> u32 {
        if app.reads_itself() {
            for s in sockets {
                if let FlowEngine::Tcp(t) = &mut self.flows[s.flow()].engine {
                    t.ends[s.end()].set_auto_read(false);
                }
            }
        }
        let (id, order) = self.apps.add(app, sockets, &mut self.flows);
        if let Some(t) = start {
            self.schedule(Lane::Timer, t, Event::AppStart { app: id, order });
        }
        id
    }

    /// The applications.
    pub fn apps(&self) -> impl Iterator<Item = &Application> {
        self.apps.iter()
    }

    /// Tell application `a` of `notice` (about socket `about`, if any) and carry out what it
    /// did.
    #[inline]
    fn notify(&mut self, now: SimTime, a: usize, notice: Notice, about: Option<Socket>) {
        if self.apps.tell(now, a, notice, about, &mut self.flows, &mut self.out) {
            self.apply_effects(now, a, about);
        } else if let Some(s) = about {
            self.sent_by(now, s);
        }
    }

    /// After end `e` of TCP flow `f` processed a segment or a timer: tell the end's owner if it
    /// needs to know, then send what the connection and the application produced.
    #[inline]
    fn after_conn(&mut self, now: SimTime, f: usize, e: usize) {
        if !self.out.measurements.is_empty() {
            self.take_measurements(f);
        }
        let s = Socket::new(f as u32, e as u8);
        let (owner, interest) = self.flows[f].owners[e];
        let peer_fin = std::mem::take(&mut self.out.peer_fin);
        let tell = match interest {
            Interest::Every => true,
            // The connection flags the call that received the FIN in order: the moment its
            // peer_closed() turns true.
            Interest::PeerClosed => peer_fin,
            Interest::Nothing => false,
        };
        if tell {
            self.notify(now, owner as usize, Notice::Socket(s), Some(s));
        } else {
            self.sent_by(now, s);
        }
    }

    /// Carry out the effects of application `a`'s last notice (about socket `about`, if any):
    /// its timer, finished flows, the segments per socket in the order made, datagrams.
    #[inline(never)]
    fn apply_effects(&mut self, now: SimTime, a: usize, about: Option<Socket>) {
        self.apps.effects.dirty = false;
        if let Some((t, ev, lane)) = self.apps.arm_timer(a) {
            self.schedule(lane, t, ev);
        }
        for _ in 0..std::mem::take(&mut self.apps.effects.finished) {
            self.flow_done();
        }
        if let Some(tr) = self.traces.milestones.as_mut() {
            for &(s, kind, bytes) in &self.apps.effects.milestones {
                tr.push(MilestoneRow { time_s: now.as_secs_f64(), app: a as u32, flow: s.flow() as u32, kind: kind as u32, bytes });
            }
        }
        self.apps.effects.milestones.clear();
        if let Some(log) = self.answered.as_mut() {
            for &(_, m) in &self.apps.effects.messages {
                let fct = now.since(m.issued).as_secs_f64();
                log.push((fct, fct / m.ideal.as_secs_f64()));
            }
        }
        if let Some(tr) = self.traces.messages.as_mut() {
            for &(s, m) in &self.apps.effects.messages {
                let t = now.as_secs_f64();
                let issued = m.issued.as_secs_f64();
                #[rustfmt::skip]
                tr.push(MessageRow { time_s: t, flow: s.flow() as u32, id: m.id, request_bytes: m.request, response_bytes: m.response, issued_s: issued, fct_s: now.since(m.issued).as_secs_f64(), ideal_s: m.ideal.as_secs_f64() });
            }
        }
        self.apps.effects.messages.clear();
        if self.apps.effects.runs.is_empty() {
            if let Some(s) = about {
                self.sent_by(now, s);
            }
        } else {
            // Each socket's share of the output in turn.
            let runs = std::mem::take(&mut self.apps.effects.runs);
            let (segs, evs) = (std::mem::take(&mut self.out.segments), std::mem::take(&mut self.out.events));
            for (i, &(s, a0, b0)) in runs.iter().enumerate() {
                let (a1, b1) = runs.get(i + 1).map_or((segs.len(), evs.len()), |r| (r.1, r.2));
                self.out.segments.extend_from_slice(&segs[a0..a1]);
                self.out.events.extend_from_slice(&evs[b0..b1]);
                self.sent_by(now, s);
            }
            self.apps.effects.runs = runs;
            self.apps.effects.runs.clear();
        }
        if !self.apps.effects.datagrams.is_empty() {
            let datagrams = std::mem::take(&mut self.apps.effects.datagrams);
            for &(s, size) in &datagrams {
                self.send_datagram(now, s, size);
            }
            self.apps.effects.datagrams = datagrams;
            self.apps.effects.datagrams.clear();
        }
    }

    /// Socket `s` produced the output now in `self.out`: send it, re-arm its timer, and trace
    /// a sender's window.
    #[inline]
    fn sent_by(&mut self, now: SimTime, s: Socket) {
        let (f, e) = (s.flow(), s.end());
        self.emit(now, f, e);
        self.resched(f, e);
        if e == self.flows[f].data_sender() {
            self.record_cwnd(now, f);
        }
    }

    /// One UDP datagram of `size` IP bytes from socket `s`.
    fn send_datagram(&mut self, now: SimTime, s: Socket, size: u32) {
        let f = s.flow();
        let flow = &mut self.flows[f];
        let FlowEngine::Udp(u) = &mut flow.engine else { panic!("{s:?} belongs to a TCP flow; datagrams need a UDP flow") };
        let len = size - IPV4_HEADER - UDP_HEADER;
        let seq = u.sent;
        u.sent += 1;
        u.bytes_sent += len as u64;
        let to = if s.end() == 0 { End::Dst } else { End::Src };
        let ip_id = flow.next_ip_id(s.end());
        let pkt = Packet {
            flow: FlowId(f as u32),
            to,
            route: flow.routes[s.end()],
            hop: 0,
            class: flow.class,
            link: LinkMark::INTACT,
            size,
            created: now,
            ip_id,
            body: Body::Udp { seq, len },
        };
        let touched = self.fabric.inject(now, pkt, &mut self.q);
        self.tell_observers(touched);
    }

    /// Tell the observers of a pipe the fabric reported as changed.
    #[inline(always)]
    fn tell_observers(&mut self, touched: Touched) {
        if let Some((t, p)) = touched.get() {
            self.observers.pipe_changed(t, p, &mut self.fabric.pipes[p.0 as usize], &self.flows, &mut self.traces);
        }
    }

    fn deliver(&mut self, now: SimTime, pkt: Packet) {
        let f = pkt.flow.0 as usize;
        let flow = &mut self.flows[f];
        if (pkt.to == End::Dst) != flow.info.download {
            flow.delay.arrived(pkt.created, now);
        }
        match (&mut flow.engine, pkt.body) {
            (FlowEngine::Tcp(t), Body::Tcp(h)) => {
                let e = if pkt.to == End::Dst { 1 } else { 0 };
                t.ends[e].on_segment(now, &h, &mut self.out);
                self.after_conn(now, f, e);
                if self.retire && self.flows[f].retirable && self.flows[f].finish.is_some() {
                    self.retire_if_closed(f);
                }
            }
            // A late segment of a flow whose connections are gone.
            (FlowEngine::Retired(_), _) => {}
            (FlowEngine::Udp(u), Body::Udp { len, .. }) => {
                u.received += 1;
                u.bytes_received += len as u64;
            }
            _ => unreachable!("a packet's body always matches its flow's kind"),
        }
    }

    fn flow_done(&mut self) {
        self.flows_done += 1;
        if self.stop_rule == StopRule::FlowsDone && self.flows_done == self.flows_awaited {
            self.finished = true;
            self.stop_reason = StopReason::FlowsDone;
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
            let end = u32::from(e != flow.data_sender());
            for ev in &self.out.events {
                tr.push(EventRow { time_s: now.as_secs_f64(), flow: f as u32, end, kind: ev.kind as u32, seq: ev.seq });
            }
        }
        self.out.events.clear();
        let mut segs = std::mem::take(&mut self.out.segments);
        if flow.local_cwr[e] {
            self.emit_asking_host(now, f, e, &mut segs);
            self.out.segments = segs;
            return;
        }
        for h in segs.drain(..) {
            let ip_id = self.flows[f].next_ip_id(e);
            let pkt = Packet { flow: FlowId(f as u32), to, route, hop: 0, class, link: LinkMark::INTACT, size: h.ip_len(), created: now, ip_id, body: Body::Tcp(h) };
            let touched = self.fabric.inject(now, pkt, &mut self.q);
            self.tell_observers(touched);
        }
        self.out.segments = segs;
    }

    /// `emit` for an end whose host's interface queue is asked first (`tcp.local_congestion =
    /// "cwr"`): each new-data segment or FIN goes only if the queue has room for it as the
    /// segments before it left it; from the first it refuses, the new data and FINs are given
    /// back to the end (`Connection::withhold`). Retransmissions and pure ACKs are offered as
    /// any packet (and dropped if the queue is full).
    #[inline(never)]
    fn emit_asking_host(&mut self, now: SimTime, f: usize, e: usize, segs: &mut Vec<TcpHeader>) {
        let flow = &self.flows[f];
        let (route, class) = (flow.routes[e], flow.class);
        let to = if e == 0 { End::Dst } else { End::Src };
        let mut refused: Vec<TcpHeader> = Vec::new();
        for h in segs.drain(..) {
            let held = !h.retransmit && !h.has(flags::SYN) && (h.len > 0 || h.has(flags::FIN));
            if held && (!refused.is_empty() || self.fabric.first_hop_has_room(route, now, h.ip_len()) == Some(false)) {
                refused.push(h);
                continue;
            }
            let ip_id = self.flows[f].next_ip_id(e);
            let pkt = Packet { flow: FlowId(f as u32), to, route, hop: 0, class, link: LinkMark::INTACT, size: h.ip_len(), created: now, ip_id, body: Body::Tcp(h) };
            let touched = self.fabric.inject(now, pkt, &mut self.q);
            self.tell_observers(touched);
        }
        if !refused.is_empty() {
            let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { unreachable!("only TCP ends are asked") };
            t.ends[e].withhold(now, &refused, &mut self.out);
            debug_assert!(self.out.segments.is_empty(), "taking segments back sends none");
        }
    }

    /// Make sure end `e` of flow `f` has a wake-up scheduled for its earliest deadline.
    fn resched(&mut self, f: usize, e: usize) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        if t.ends[e].needs_wake() {
            self.schedule_wake(f, e);
        }
    }

    #[inline(never)]
    fn schedule_wake(&mut self, f: usize, e: usize) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        if let Some((d, gen)) = t.ends[e].wake_to_schedule(self.q.now()) {
            let ev = Event::Timer { flow: f as u32, end: e as u8, gen };
            self.q.schedule(Lane::Timer, ev.key(&self.order, d), ev);
        }
    }

    fn on_timer(&mut self, now: SimTime, f: usize, e: usize, gen: u32) {
        let FlowEngine::Tcp(t) = &mut self.flows[f].engine else { return };
        match t.ends[e].on_wake(now, gen, &mut self.out) {
            Wake::Stale => {}
            Wake::Fired => self.after_conn(now, f, e),
            Wake::Early => self.resched(f, e),
        }
    }

    /// Move the measurements flow `f`'s end just produced into their trace (or drop them).
    #[inline(never)]
    fn take_measurements(&mut self, f: usize) {
        if let Some(tr) = self.traces.measurements.as_mut() {
            observe::record_measurements(tr, f, &self.out.measurements);
        }
        self.out.measurements.clear();
    }

    /// Record flow `f`'s sender window (the `cwnd` trace) and its controller's state (the
    /// `cc_state` trace), each if on and changed.
    #[inline]
    fn record_cwnd(&mut self, now: SimTime, f: usize) {
        if let Some(tr) = self.traces.cwnd.as_mut() {
            observe::record_cwnd(tr, now, f, &mut self.flows[f]);
        }
        if let Some(tr) = self.traces.cc_state.as_mut() {
            observe::record_cc_state(tr, now, f, &mut self.flows[f]);
        }
        if let Some(tr) = self.traces.rtt.as_mut() {
            observe::record_rtt(tr, now, f, &mut self.flows[f]);
        }
    }

    fn usage_sample(&mut self, now: SimTime) {
        let Some(interval) = self.observers.usage.interval() else { return };
        // What a merge holds for a watched pipe and arrives by now is admitted first, so every
        // packet whose serialization ended by now is counted.
        for i in 0..self.observers.usage.watched().len() {
            let p = self.observers.usage.watched()[i];
            self.fabric.admit_arrived_by(p, now, &mut self.q, &mut view!(self));
        }
        let tr = self.traces.link_usage.as_mut().expect("an interval implies the trace");
        self.observers.usage.sample(now, &mut self.fabric.pipes, tr);
        let next = now + interval;
        if self.stop_time.is_none_or(|s| next <= s) {
            self.schedule(Lane::Timer, next, Event::UsageSample);
        }
    }

    fn sample(&mut self, now: SimTime) {
        let Some(interval) = self.sample_interval else { return };
        let tr = self.traces.throughput.as_mut().expect("sampling implies the trace");
        observe::sample_throughput(tr, now, interval, &mut self.flows);
        let next = now + interval;
        if self.stop_time.is_none_or(|s| next <= s) {
            self.schedule(Lane::Timer, next, Event::Sample);
        }
    }
}
