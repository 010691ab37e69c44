//! The forwarding fabric: the pipes, the routes through them and the per-route hop tables,
//! the pass-on and merge planning that lets a packet cross several pipes per event, the
//! forwarding itself and the network-wide packet counters. It schedules its own events
//! (`NetEvent`) in the run's queue under their canonical keys and hands back the packets that
//! reach their destination; it knows nothing of flows, endpoints or observers beyond the
//! `PipeObserver` it tells when an observed pipe changed.

use crate::engine::order::{Key, Order, Rank};
use crate::engine::queue::Lane;
use crate::engine::EventQueue;
use crate::net::counters::PacketCounters;
use crate::net::journal::Journal;
use crate::net::merge::Merge;
use crate::net::packet::{Packet, RouteId};
use crate::net::pipe::{Offer, Pipe, PipeId, PipeWake};
use crate::units::{SimDuration, SimTime};

/// The most feeders a merge takes (its slots are `u16`); a pipe fed by more is left to
/// arrival events.
pub const MAX_FEEDERS: usize = u16::MAX as usize + 1;

/// The fabric's events.
#[derive(Clone, Copy, Debug)]
pub enum NetEvent {
    /// An event-driven pipe's transmitter finishes a packet.
    TxDone(PipeId),
    /// A pipe's next packet reaches its far end.
    Arrive(PipeId),
    /// A merge admits the packets it holds that are due (see `Fabric::plan`).
    Flush(u32),
}

impl NetEvent {
    /// The event's place among events at the same instant (`engine::order`).
    #[inline(always)]
    pub fn key(self, order: &Order, t: SimTime) -> Key {
        match self {
            NetEvent::TxDone(p) => order.key(t, Rank::TxDone, p.0),
            NetEvent::Arrive(p) => order.key(t, Rank::Arrive, p.0),
            NetEvent::Flush(m) => order.key(t, Rank::Flush, m),
        }
    }
}

/// Told when an observed pipe (a tap, a traced queue) accepted, dropped or sent a packet.
pub trait PipeObserver {
    /// Pipe `p` changed at `now`.
    fn pipe_changed(&mut self, now: SimTime, p: PipeId, pipe: &mut Pipe);
}

/// An observed pipe that changed, and when (see `Fabric::forward`); or none. Two words, so it
/// comes back in registers (an `Option<(SimTime, PipeId)>` is three and goes through memory).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Touched {
    at: SimTime,
    /// The pipe, or `u32::MAX` for none.
    pipe: u32,
}

impl Touched {
    /// No observed pipe changed.
    pub const NONE: Touched = Touched { at: SimTime::ZERO, pipe: u32::MAX };

    /// The observed pipe that changed, and when.
    #[inline(always)]
    pub fn get(self) -> Option<(SimTime, PipeId)> {
        (self.pipe != u32::MAX).then_some((self.at, PipeId(self.pipe)))
    }
}

#[inline(always)]
fn schedule<E: From<NetEvent> + Copy>(q: &mut EventQueue<E>, order: &Order, lane: Lane, t: SimTime, ev: NetEvent) {
    q.schedule(lane, ev.key(order, t), E::from(ev));
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

/// The pipes, routes and forwarding state of one run.
#[derive(Debug)]
pub struct Fabric {
    /// All pipes.
    pub pipes: Vec<Pipe>,
    routes: Vec<Vec<PipeId>>,
    /// Per route, per hop: the pipe and how the packets it accepts reach the next hop's pipe
    /// (an arrival event, passed straight on, or through a merge; see `plan`).
    hops: Vec<Box<[Hop]>>,
    planned: bool,
    /// Merges of multi-feeder pipes (see `plan`).
    merges: Vec<Merge>,
    /// Per pipe: the index of its merge, if it has one.
    merge_of: Vec<Option<u32>>,
    /// Per pipe: an observer watches it (it takes an event per packet and is never passed
    /// over).
    observed: Vec<bool>,
    /// Nothing arriving after the stop time is admitted ahead of its event.
    stop_time: Option<SimTime>,
    order: Order,
    /// Packet counters.
    pub packets: PacketCounters,
    /// Admissions made ahead of their events, kept when the stop instant is not known in
    /// advance (`plan(true)`; see `net::journal`).
    journal: Option<Box<Journal>>,
}

impl Fabric {
    /// An empty fabric for a run that stops at `stop_time` (if set) with event order `order`.
    pub fn new(stop_time: Option<SimTime>, order: Order) -> Self {
        Fabric {
            pipes: Vec::new(),
            routes: Vec::new(),
            hops: Vec::new(),
            planned: false,
            merges: Vec::new(),
            merge_of: Vec::new(),
            observed: Vec::new(),
            stop_time,
            order,
            packets: PacketCounters::default(),
            journal: None,
        }
    }

    /// Add a pipe.
    pub fn add_pipe(&mut self, pipe: Pipe) -> PipeId {
        let id = PipeId(self.pipes.len() as u32);
        self.pipes.push(pipe);
        self.observed.push(false);
        id
    }

    /// Add a route (the pipes from a source host to a destination host).
    pub fn add_route(&mut self, pipes: Vec<PipeId>) -> RouteId {
        assert!(!pipes.is_empty() && pipes.len() < u16::MAX as usize, "a route has 1..65535 pipes");
        self.routes.push(pipes);
        RouteId(self.routes.len() as u32 - 1)
    }

    /// How many routes there are.
    pub fn route_count(&self) -> usize {
        self.routes.len()
    }

    /// Replace a route's pipes (equal-cost multipath re-routes a flow once its 5-tuple is
    /// known); only before the fabric is planned, which reads every route.
    pub fn set_route(&mut self, r: RouteId, pipes: Vec<PipeId>) {
        assert!(!self.planned, "routes are fixed once the fabric is planned");
        assert!(!pipes.is_empty() && pipes.len() < u16::MAX as usize, "a route has 1..65535 pipes");
        self.routes[r.0 as usize] = pipes;
    }

    /// The pipes of a route, from its source host.
    pub fn route_pipes(&self, r: RouteId) -> &[PipeId] {
        &self.routes[r.0 as usize]
    }

    /// Whether route `r`'s first queue (the sending host's interface) would take a packet of
    /// `size` bytes offered at `now`; `None` when it cannot tell (see `Pipe::has_room`).
    pub fn first_hop_has_room(&mut self, r: RouteId, now: SimTime, size: u32) -> Option<bool> {
        let p = self.routes[r.0 as usize][0];
        self.pipes[p.0 as usize].has_room(now, size)
    }

    /// What feeds pipe `p` on the routes so far: the pipes before it (`None` for a route that
    /// starts at it, from a host), each once, in order.
    pub fn feeders_of(&self, p: PipeId) -> Vec<Option<PipeId>> {
        let mut out = Vec::new();
        for r in &self.routes {
            for (h, &q) in r.iter().enumerate() {
                if q == p {
                    let f = h.checked_sub(1).map(|i| r[i]);
                    if !out.contains(&f) {
                        out.push(f);
                    }
                }
            }
        }
        out
    }

    /// True if pipe `p` is the last pipe of every route through it (it feeds a host).
    pub fn ends_every_route(&self, p: PipeId) -> bool {
        self.routes.iter().all(|r| r.iter().position(|&q| q == p).is_none_or(|h| h + 1 == r.len()))
    }

    /// An observer watches pipe `p` (call before planning).
    pub fn observe(&mut self, p: PipeId) {
        self.observed[p.0 as usize] = true;
    }

    /// The pipes whose arrivals are admitted through a merge (see `plan`), in merge order.
    pub fn merged_pipes(&self) -> impl Iterator<Item = PipeId> + '_ {
        self.merges.iter().map(|m| m.pipe)
    }

    /// The pipes that some route enters through an arrival event (neither passed on nor
    /// merged; see `plan`), each once, in id order.
    pub fn event_fed_pipes(&self) -> Vec<PipeId> {
        let mut out: Vec<PipeId> = self.hops.iter().flat_map(|r| r.windows(2).filter(|w| w[0].next == NextHop::Event).map(|w| w[1].pipe)).collect();
        out.sort();
        out.dedup();
        out
    }

    /// True once `plan` or `hop_by_hop` has built the hop tables.
    pub fn is_planned(&self) -> bool {
        self.planned
    }

    /// The network-wide packet counters, emulators' copies included.
    pub fn packet_counters(&self) -> PacketCounters {
        PacketCounters { duplicated: self.pipes.iter().map(|p| p.propagation().duplicated()).sum(), ..self.packets }
    }

    /// Packets currently inside the network (queued, in service, propagating or held by a
    /// merge).
    pub fn packets_inside(&self) -> u64 {
        self.pipes.iter().map(|p| p.packets_inside()).sum::<u64>() + self.merges.iter().map(|m| m.len() as u64).sum::<u64>() + self.journal.as_ref().map_or(0, |j| j.limbo)
    }

    /// A host hands `pkt` (hop 0 of its route) to the network at `now`.
    #[inline]
    #[must_use = "an observed pipe that changed must be reported to its observers"]
    pub fn inject<E: From<NetEvent> + Copy>(&mut self, now: SimTime, pkt: Packet, q: &mut EventQueue<E>) -> Touched {
        self.packets.created += 1;
        self.forward(now, pkt, q)
    }

    /// Pipe `p`'s transmitter finished a packet at `now`.
    pub fn tx_done<E: From<NetEvent> + Copy>(&mut self, now: SimTime, p: PipeId, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        let mut wake = PipeWake::default();
        self.packets.queue_drops += self.pipes[p.0 as usize].tx_done(now, &mut wake) as u64;
        self.wake(p, wake, q);
        if self.observed[p.0 as usize] {
            obs.pipe_changed(now, p, &mut self.pipes[p.0 as usize]);
        }
    }

    /// Pipe `p`'s next packet reaches its far end at `now`. Returns the packet, its hop moved
    /// on (`None` if it was lost in the pipe), and the key of the pipe's next arrival, which
    /// the caller schedules as `NetEvent::Arrive(p)` or handles at once if nothing precedes it.
    #[inline]
    pub fn arrive(&mut self, now: SimTime, p: PipeId) -> (Option<Packet>, Option<Key>) {
        let mut wake = PipeWake::default();
        let arrived = self.pipes[p.0 as usize].arrive(now, &mut wake);
        debug_assert!(wake.tx_done.is_none(), "an arrival starts no transmission");
        let next = wake.arrival.map(|t| NetEvent::Arrive(p).key(&self.order, t));
        (
            arrived.map(|mut pkt| {
                pkt.hop += 1;
                pkt
            }),
            next,
        )
    }

    /// True when `pkt` (as `arrive` returned it) has crossed its route's last pipe; count it.
    #[inline]
    pub fn reached_destination(&mut self, pkt: &Packet) -> bool {
        let done = pkt.hop as usize >= self.hops[pkt.route.0 as usize].len();
        self.packets.delivered += done as u64;
        done
    }

    fn wake<E: From<NetEvent> + Copy>(&mut self, p: PipeId, w: PipeWake, q: &mut EventQueue<E>) {
        if let Some(t) = w.tx_done {
            schedule(q, &self.order, Lane::Busy, t, NetEvent::TxDone(p));
        }
        if let Some(t) = w.arrival {
            schedule(q, &self.order, Lane::Busy, t, NetEvent::Arrive(p));
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
        self.planned = true;
        self.merge_of = vec![None; self.pipes.len()];
        for (m, merge) in self.merges.iter().enumerate() {
            self.merge_of[merge.pipe.0 as usize] = Some(m as u32);
        }
        let merge_of = &self.merge_of;
        // Each merge's slot of each of its feeders (a merge has at most MAX_FEEDERS).
        let slot_of: Vec<std::collections::HashMap<PipeId, u16>> =
            feeders.iter().map(|f| f.iter().enumerate().map(|(i, &p)| (p, u16::try_from(i).expect("a merge has at most MAX_FEEDERS feeders"))).collect()).collect();
        self.hops = self
            .routes
            .iter()
            .map(|r| {
                r.iter()
                    .enumerate()
                    .map(|(h, &p)| {
                        let next = r.get(h + 1);
                        let merge = next.and_then(|n| merge_of[n.0 as usize]);
                        let slot = merge.map_or(0, |m| *slot_of[m as usize].get(&p).expect("a merge lists its feeders"));
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
    /// pipes or merged pipes. A packet is then registered, with its arrival time, at least
    /// `lead` before it arrives: when its host sends it (the lead is the smallest sum of
    /// propagation delays in front of the pipe), or when the last merged pipe in front of it
    /// admits it (a spine port fed by merged leaf uplinks; see `chain_lead`). So a flush at
    /// time g admits every arrival before g + lead in exact time order.
    /// Nothing sees the pipe's state but its own later admissions, and whatever it sends on
    /// arrives after its delay, so a flush may wait until the earliest held packet's arrival
    /// plus the pipe's delay: one event per batch instead of one per packet. Equal arrival
    /// times are admitted in the order the packets entered the network.
    ///
    /// Arrivals after the stop time are left to events or held, so every counter at the stop
    /// is the same; only the order of events at the very same picosecond may differ. A run
    /// that stops at an instant nobody knows in advance (`unknown_stop`: when its flows are
    /// done) keeps a journal of the admissions made ahead of their events and takes back, at
    /// the stop, the ones a hop-by-hop run would not have made (`settle_unknown_stop`).
    pub fn plan(&mut self, unknown_stop: bool) {
        if unknown_stop {
            self.journal = Some(Box::default());
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
        // Where each pipe is entered from another (route, hop ≥ 1), found in one pass.
        let mut entered: Vec<Vec<(u32, u16)>> = vec![Vec::new(); n];
        for (r, route) in self.routes.iter().enumerate() {
            for h in 1..route.len() {
                entered[route[h].0 as usize].push((r as u32, h as u16));
            }
        }
        // Rounds: a pipe whose feeders' chains cross merged pipes qualifies once those are
        // merged (a spine port fed by leaf uplinks that are merges themselves), so merges are
        // made in rounds until none is added; each round's are appended, so the merges are in
        // an order where every merge comes after those in front of it (`settle_merges`).
        let mut merged: Vec<Option<SimDuration>> = vec![None; n];
        loop {
            let mut added = Vec::new();
            for p in 0..n {
                if merged[p].is_some() || pass_on[p] || from_host[p] || feeder[p].is_none() || !self.pipes[p].decides_on_admission() || self.observed[p] {
                    continue;
                }
                let mut lead = SimDuration(u64::MAX);
                let mut fed_by: Vec<PipeId> = Vec::new();
                let mut known = std::collections::HashSet::new();
                let mut eligible = true;
                for &(r, h) in &entered[p] {
                    let chain = &self.routes[r as usize][..h as usize];
                    eligible &= chain.iter().all(|q| steady(q.0 as usize)) && chain[1..].iter().all(|q| pass_on[q.0 as usize] || merged[q.0 as usize].is_some());
                    if !eligible {
                        break;
                    }
                    lead = lead.min(Self::chain_lead(&self.pipes, chain, &merged));
                    let last = chain[chain.len() - 1];
                    if known.insert(last) {
                        fed_by.push(last);
                    }
                }
                // A port fed by more pipes than a merge has slots for takes its arrivals as events.
                eligible &= fed_by.len() <= MAX_FEEDERS;
                let pipe = &self.pipes[p];
                // A rate-limited pipe sends nothing on before arrival + serialization + delay; an
                // unlimited one before arrival + delay: the flush must come strictly earlier.
                let hold = match pipe.egress().rate() {
                    Some(_) => Some(pipe.delay()),
                    None => pipe.delay().as_ps().checked_sub(1).map(SimDuration),
                };
                match hold {
                    Some(hold) if eligible && lead.as_ps() + hold.as_ps() >= 1 => added.push((p, fed_by, lead, hold)),
                    _ => {}
                }
            }
            if added.is_empty() {
                break;
            }
            for (p, fed_by, lead, hold) in added {
                merged[p] = Some(hold);
                self.merges.push(Merge::new(PipeId(p as u32), fed_by.clone(), lead, hold, self.order));
                feeders.push(fed_by);
            }
        }
        self.set_pass_on(&pass_on, &feeders);
    }

    /// How long before its arrival at the end of `chain` (a route's pipes in front of a merged
    /// pipe) a packet is registered there at the latest: from its host (no pipe of the chain is
    /// merged), the sum of the chain's delays; else from the flush of the last merged pipe
    /// `k` in the chain, which admits a packet arriving there at `a` by `a + hold_k` while it
    /// reaches the chain's end no sooner than `a + delay_k` plus the delays after `k`
    /// (`merged[q]`: the hold of pipe `q`'s merge, if it has one).
    fn chain_lead(pipes: &[Pipe], chain: &[PipeId], merged: &[Option<SimDuration>]) -> SimDuration {
        let delay = |q: &PipeId| pipes[q.0 as usize].delay().as_ps();
        match chain.iter().rposition(|q| merged[q.0 as usize].is_some()) {
            None => SimDuration(chain.iter().map(delay).sum()),
            Some(k) => {
                let hold = merged[chain[k].0 as usize].expect("merged").as_ps();
                SimDuration(delay(&chain[k]) - hold + chain[k + 1..].iter().map(delay).sum::<u64>())
            }
        }
    }

    /// Admit a merge's packets that are due at `now` (a flush event), and schedule the next.
    pub fn flush_merge<E: From<NetEvent> + Copy>(&mut self, now: SimTime, m: usize, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        let Some(before) = self.merges[m].begin_flush(now) else { return };
        // Never admit a packet that arrives after the stop: the counters at the stop must be
        // those of a run with an event per hop (such packets stay held, inside the network).
        let before = self.stop_time.map_or(before, |s| before.min(s + SimDuration(1)));
        self.admit_held(m, before, q, obs);
        if let Some(t) = self.merges[m].end_flush() {
            schedule(q, &self.order, Lane::Busy, t, NetEvent::Flush(m as u32));
        }
    }

    /// At the end of instant `t` (after every other event at `t`): admit what the merge of
    /// pipe `p`, if it has one, holds that arrives by `t`. Every such packet is registered by
    /// then (each is registered no later than it arrives, by an event at or before its
    /// arrival), so these are the admissions its flushes would make, in the same order, only
    /// sooner: what an observer that reads the pipe at `t` needs (the `link_usage` trace).
    pub fn admit_arrived_by<E: From<NetEvent> + Copy>(&mut self, p: PipeId, t: SimTime, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        if let Some(m) = self.merge_of.get(p.0 as usize).copied().flatten() {
            self.admit_held(m as usize, t + SimDuration(1), q, obs);
        }
    }

    /// At the stop time: admit every held packet that arrives by then, so the counters at the
    /// stop are those of a run with an event per hop.
    pub fn settle_merges<E: From<NetEvent> + Copy>(&mut self, stop: SimTime, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        for m in 0..self.merges.len() {
            self.admit_held(m, stop + SimDuration(1), q, obs);
        }
    }

    /// The run stopped while handling the event with key `stop` (event number `event`), an
    /// instant not known in advance: admit what the merges hold that arrives by then, then
    /// take back every admission a hop-by-hop run would not have made, so that the counters
    /// read as of the stop (`net::journal`). Does nothing without a journal, or a second time.
    pub fn settle_unknown_stop<E: From<NetEvent> + Copy>(&mut self, stop: Key, event: u64, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        let Some(settled_from) = self.journal.as_ref().filter(|j| !j.closed).map(|j| j.len()) else { return };
        self.settle_merges(stop.time(), q, obs);
        let mut journal = self.journal.take().expect("checked above");
        journal.take_back(stop, event, settled_from, &mut self.pipes, &mut self.packets);
        self.journal = Some(journal);
    }

    /// Send on a merge's held packets that arrive before `before`, in order.
    fn admit_held<E: From<NetEvent> + Copy>(&mut self, m: usize, before: SimTime, q: &mut EventQueue<E>, obs: &mut impl PipeObserver) {
        while let Some((at, pkt)) = self.merges[m].pop_before(before) {
            let touched = if self.journal.is_some() { self.forward_journaled(at, pkt, q, true) } else { self.forward(at, pkt, q) };
            if let Some((t, p)) = touched.get() {
                obs.pipe_changed(t, p, &mut self.pipes[p.0 as usize]);
            }
        }
    }

    /// Offer `pkt` (at hop `pkt.hop` of its route) at `now` and carry it through the pass-on
    /// chain that follows. Returns the pipe where it stopped and when, if that pipe is
    /// observed (the caller tells the observers: the fabric holds no reference to them).
    #[must_use = "an observed pipe that changed must be reported to its observers"]
    #[inline(never)]
    pub fn forward<E: From<NetEvent> + Copy>(&mut self, now: SimTime, pkt: Packet, q: &mut EventQueue<E>) -> Touched {
        if self.journal.is_some() {
            return self.forward_journaled(now, pkt, q, false);
        }
        self.forward_from::<E, false>(now, pkt, q, false)
    }

    /// `forward` noting admissions ahead of their events (a run with a journal), out of the
    /// plain loop's way.
    #[inline(never)]
    fn forward_journaled<E: From<NetEvent> + Copy>(&mut self, now: SimTime, pkt: Packet, q: &mut EventQueue<E>, ahead: bool) -> Touched {
        self.forward_from::<E, true>(now, pkt, q, ahead)
    }

    /// `forward`; with `JOURNAL`, every admission made ahead of its event is noted in the
    /// journal first (`ahead`: the first one is, as when a merge admits; every later one in the
    /// pass-on chain is). Without, the loop is exactly the plain forwarding loop.
    #[inline(always)]
    fn forward_from<E: From<NetEvent> + Copy, const JOURNAL: bool>(&mut self, mut now: SimTime, mut pkt: Packet, q: &mut EventQueue<E>, mut ahead: bool) -> Touched {
        // Split borrows: the loop touches only these, so they stay in registers.
        let Fabric { pipes, hops, packets, stop_time, journal, order, .. } = self;
        let hops = &hops[pkt.route.0 as usize];
        let mut wake = PipeWake::default();
        let p = loop {
            let hop = hops[pkt.hop as usize];
            if JOURNAL && ahead {
                if let Some(j) = journal.as_mut() {
                    let key = NetEvent::Arrive(hops[pkt.hop as usize - 1].pipe).key(order, now);
                    j.note(&pipes[hop.pipe.0 as usize], hop.pipe.0, now, key, q.popped(), q.current_key());
                }
            }
            let pipe = &mut pipes[hop.pipe.0 as usize];
            if hop.next == NextHop::Merge {
                self.register_in_merge(now, pkt, q);
                return Touched::NONE;
            }
            if hop.next == NextHop::Event {
                match pipe.offer(now, pkt, &mut wake) {
                    Offer::Accepted => {}
                    drop => packets.count_drop(drop),
                }
                break hop.pipe;
            }
            match pipe.offer_through(now, pkt.flow, pkt.size) {
                Ok(at) if stop_time.is_none_or(|s| at <= s) => {
                    // Straight into the next pipe at its arrival time.
                    now = at;
                    pkt.hop += 1;
                    ahead = JOURNAL;
                }
                Ok(at) => {
                    pipe.keep_in_line(at, pkt, &mut wake);
                    break hop.pipe;
                }
                Err(drop) => {
                    packets.count_drop(drop);
                    break hop.pipe;
                }
            }
        };
        self.wake(p, wake, q);
        if self.observed[p.0 as usize] {
            Touched { at: now, pipe: p.0 }
        } else {
            Touched::NONE
        }
    }

    /// Offer a packet to `hop`'s pipe and, if accepted, register it with the next pipe's merge
    /// (admitted there in time order by a flush).
    #[inline(never)]
    fn register_in_merge<E: From<NetEvent> + Copy>(&mut self, now: SimTime, mut pkt: Packet, q: &mut EventQueue<E>) {
        let hop = self.hops[pkt.route.0 as usize][pkt.hop as usize];
        match self.pipes[hop.pipe.0 as usize].offer_through(now, pkt.flow, pkt.size) {
            Ok(at) => {
                pkt.hop += 1;
                if let Some(t) = self.merges[hop.merge as usize].push(hop.merge_slot as u32, at, pkt) {
                    schedule(q, &self.order, Lane::Busy, t, NetEvent::Flush(hop.merge));
                }
            }
            Err(drop) => self.packets.count_drop(drop),
        }
    }
}
