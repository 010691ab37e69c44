//! A pipe is one direction of a link, or one direction of an emulator: a random-loss stage,
//! an egress (`net::egress`: nothing, a lazily run FIFO, a queue discipline and its
//! transmitter, or an ATM port), and a propagation stage (`net::propagation`: a fixed delay,
//! or a delay line of another kind). A pipe has at most two pending events: the head-of-line
//! departure and the earliest arrival (release) of its propagation stage.
//!
//! A pipe can also hand an accepted packet straight back to the caller with its arrival time
//! at the far end (`offer_through`) instead of keeping it in propagation: the fabric uses this
//! to pass a packet on at once to a next pipe that nothing else feeds (`net::fabric`).

use crate::engine::Rng;
use crate::net::atm_port::AtmPortConfig;
use crate::net::discipline::{QueueDiscipline, QueueStats};
use crate::net::egress::{CellPort, CellStage, Egress, LazyFifo, Served, Tapped, Transmitter};
use crate::net::harmonizer::Harmonizer;
use crate::net::impair::{ImpairConfig, Impairment};
use crate::net::link_layer::LinkLayer;
use crate::net::packet::{FlowId, Packet};
use crate::net::propagation::Propagation;
use crate::units::{BitRate, SimDuration, SimTime};

pub use crate::net::egress::Offer;

/// Index of a pipe in the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PipeId(pub u32);

/// Per-pipe counters beyond the queue's.
#[derive(Clone, Copy, Debug, Default)]
pub struct PipeStats {
    /// Packets dropped by the random-loss stage (emulators).
    pub random_drops: u64,
    /// Packets that finished serialization.
    pub transmitted: u64,
    /// IP bytes that finished serialization.
    pub bytes_transmitted: u64,
}

/// Packets that finished serialization, kept for an observer of what a pipe carries (`None`:
/// nobody counts): (end of serialization, flow, IP bytes). The end may lie ahead of the moment
/// the observer collects it only at an ATM port, which decides a frame's cells when it admits
/// it; everywhere else it is the moment itself.
pub type Departures = Option<Vec<(SimTime, FlowId, u32)>>;

/// What the caller must schedule after an operation on a pipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipeWake {
    /// The transmitter will finish its packet at this time.
    pub tx_done: Option<SimTime>,
    /// The earliest packet in propagation arrives at this time.
    pub arrival: Option<SimTime>,
}

/// One direction of a link or emulator.
#[derive(Debug)]
pub struct Pipe {
    /// Display name, e.g. `"sw->b"` or `"emu(sw1->sw2)"`.
    pub name: String,
    delay: SimDuration,
    jitter: SimDuration,
    /// The far end's clock tick (Dummynet's 1/HZ), or zero: see `with_tick`.
    tick: SimDuration,
    last_arrival: SimTime,
    loss: f64,
    rng: Rng,
    /// The link layer: the bytes serialized for a packet of so many IP bytes.
    link: LinkLayer,
    egress: Egress,
    /// The propagation stage: a FIFO line, or a delay line of another kind.
    propagation: Propagation,
    /// Packets that began transmission (first bit on the wire), kept for a tap to collect.
    tapped: Tapped,
    /// Packets that finished serialization, kept for an observer of what the pipe carries.
    departures: Departures,
    /// Counters.
    pub stats: PipeStats,
}

impl Pipe {
    /// A pipe with the given rate (`None`: infinitely fast, no queueing), propagation delay,
    /// random-loss probability and its RNG stream, and queue discipline (a single drop-tail
    /// FIFO runs lazily; a pipe without a rate has no queue).
    pub fn new(name: String, rate: Option<BitRate>, delay: SimDuration, loss: f64, rng: Rng, queue: Box<dyn QueueDiscipline>) -> Self {
        let egress = match rate {
            None => Egress::Instant,
            Some(r) => egress_for(queue, Transmitter::new(r, LinkLayer::Ip)),
        };
        let (jitter, last_arrival, link, propagation, stats) = (SimDuration::ZERO, SimTime::ZERO, LinkLayer::Ip, Propagation::default(), PipeStats::default());
        Pipe { name, delay, jitter, tick: SimDuration::ZERO, last_arrival, loss, rng, link, egress, propagation, tapped: None, departures: None, stats }
    }

    /// The egress stage.
    pub fn egress(&self) -> &Egress {
        &self.egress
    }

    /// The egress stage, to configure (an ATM port's input) before the first packet.
    pub fn egress_mut(&mut self) -> &mut Egress {
        &mut self.egress
    }

    /// The propagation stage.
    pub fn propagation(&self) -> &Propagation {
        &self.propagation
    }

    /// Replace the queue by `queue`, run event by event (before the first packet): any
    /// discipline, also one written outside `net`. Panics on a pipe without a transmitter.
    pub fn set_discipline(&mut self, queue: Box<dyn QueueDiscipline>) {
        assert!(self.packets_inside() == 0, "change the queue before the first packet");
        let tx = match std::mem::replace(&mut self.egress, Egress::Instant) {
            Egress::Fifo(f) => f.tx,
            Egress::Queued(s) => s.tx,
            _ => panic!("{}: only a pipe with a transmitter has a queue", self.name),
        };
        self.egress = Egress::Queued(Box::new(Served::new(queue, tx)));
    }

    /// Run event by event (needed to observe the queue as it changes). Call before use.
    pub fn set_event_driven(&mut self) {
        assert!(self.packets_inside() == 0, "switch modes before the first packet");
        if let Egress::Fifo(f) = &self.egress {
            self.set_discipline(Box::new(crate::net::discipline::DropTail::new(f.limit, f.marking)));
        }
    }

    /// Observe this pipe: every packet is reported when its first bit goes on the wire
    /// (`take_tapped`). Tapped pipes run event by event. Call before use.
    pub fn set_tapped(&mut self) {
        self.set_event_driven();
        self.tapped = Some(Vec::new());
    }

    /// Move the packets that started transmission since the last call into `out`.
    pub fn take_tapped(&mut self, out: &mut Vec<(SimTime, Packet)>) {
        if let Some(v) = self.tapped.as_mut() {
            out.append(v);
        }
    }

    /// Count what this pipe carries: every packet is kept, with its end of serialization, flow
    /// and size, for `take_departures`, when that end is known — at admission for a drop-tail
    /// FIFO (lazy or not, offered or passed on: `offer_through`) and an ATM port, at the end
    /// itself for a queue run event by event. Call before use.
    pub fn set_counted(&mut self) {
        self.departures = Some(Vec::new());
    }

    /// Move the packets that finished serialization (or, at an ATM port, were given their end
    /// of serialization) since the last call into `out`.
    pub fn take_departures(&mut self, out: &mut Vec<(SimTime, FlowId, u32)>) {
        if let Some(v) = self.departures.as_mut() {
            out.append(v);
        }
    }

    /// Keep a packet whose serialization ends at `end` for the observer, if one counts.
    #[inline(always)]
    fn departed(&mut self, end: SimTime, pkt: &Packet) {
        self.departed_as(end, pkt.flow, pkt.size);
    }

    /// `departed` for a packet of `flow` and `size` bytes.
    #[inline(always)]
    fn departed_as(&mut self, end: SimTime, flow: FlowId, size: u32) {
        if let Some(v) = self.departures.as_mut() {
            v.push((end, flow, size));
        }
    }

    /// (Packets, IP bytes) whose serialization ended by `now`, whatever the mode.
    pub fn transmitted_by(&self, now: SimTime) -> (u64, u64) {
        let (un, ub) = self.egress.unfinished_at(now);
        (self.stats.transmitted - un, self.stats.bytes_transmitted - ub)
    }

    /// Release packets on a clock of period `tick` (ticks at whole multiples of it from time 0),
    /// as FreeBSD's Dummynet does: a packet entering between ticks k and k+1 leaves at tick
    /// k + delay/tick (ip_dummynet.c: `output_time = curr_time + p->delay` in ticks, released
    /// by the per-tick handler once `output_time <= curr_time`; a delay of 0 ticks lets it
    /// through at once). The delay should be a whole number of ticks (the resolver truncates it,
    /// as ipfw does); order is kept. Not with jitter.
    pub fn with_tick(mut self, tick: SimDuration) -> Self {
        debug_assert!(self.jitter == SimDuration::ZERO, "a ticked pipe has no jitter");
        self.tick = tick;
        self
    }

    /// Add a uniform random delay in [0, jitter) to each packet's propagation, keeping FIFO
    /// order (a packet never overtakes the one before it). Uses the pipe's RNG stream.
    pub fn with_jitter(mut self, jitter: SimDuration) -> Self {
        self.jitter = jitter;
        self
    }

    /// Serialize packets by the rule of link layer `link` (`LinkLayer::line_bytes`; PPP framing:
    /// `LinkLayer::Framing(2)`). Queue limits and counters stay in IP bytes.
    pub fn with_link_layer(mut self, link: LinkLayer) -> Self {
        self.link = link;
        self.egress.set_link(link);
        self
    }

    /// Replace the queue and transmitter by an ATM output port (`net::atm_port`): a packet's
    /// AAL5 frame is a train of cells, decided cell by cell; the pipe must feed a host, whose
    /// reassembly the port applies (a frame that lost cells is dropped once its surviving cells
    /// have taken their slots). Needs an AAL5 link layer (set first).
    pub fn with_atm_port(mut self, cfg: AtmPortConfig) -> Self {
        assert!(self.egress.rate().is_some_and(|r| r.bps() == cfg.line_bps), "the port runs at the link's cell rate");
        self.egress = Egress::Cells(Box::new(CellPort { stage: CellStage::new(cfg, self.link), stats: QueueStats::default() }));
        self
    }

    pub fn link_layer(&self) -> LinkLayer {
        self.link
    }

    /// Delay packets per flow through a harmonizer instead of the FIFO propagation stage.
    pub fn with_harmonizer(mut self, h: Harmonizer) -> Self {
        assert!(self.keeps_order(), "a pipe has one propagation stage");
        self.propagation = Propagation::Harmonized(Box::new(h));
        self
    }

    /// Reorder and duplicate packets in the propagation stage (`net::impair`), drawing from
    /// `rng` (a stream of its own, so loss draws do not move).
    pub fn with_impairment(mut self, cfg: ImpairConfig, rng: Rng) -> Self {
        assert!(self.keeps_order(), "a pipe has one propagation stage");
        self.propagation = Propagation::Impaired(Box::new(Impairment::new(cfg, rng)));
        self
    }

    /// True if the pipe decides a packet's arrival time at the far end the moment it accepts
    /// it (a lazy FIFO or no transmitter, FIFO propagation, untapped): `offer_through` may be
    /// used. A queue that marks ECN changes the packet it admits, so its pipe takes packets
    /// through `offer` (still lazily), never passed on: the pass-on path stays free of it.
    pub fn decides_on_admission(&self) -> bool {
        let egress = match &self.egress {
            Egress::Instant => true,
            Egress::Fifo(f) => f.marking.is_none(),
            _ => false,
        };
        egress && self.keeps_order() && self.tapped.is_none()
    }

    /// Whether this pipe's queue would take a packet of `size` bytes offered at `now` (its
    /// random-loss stage aside), or `None` when it cannot tell without offering it (a queue
    /// with a discipline other than drop-tail, ECN marking or cells). The same answer whether
    /// the FIFO runs lazily or event by event (traced, tapped). What a sending host's TCP asks of
    /// its own interface queue (`tcp.local_congestion = "cwr"`).
    pub fn has_room(&mut self, now: SimTime, size: u32) -> Option<bool> {
        match &mut self.egress {
            Egress::Instant => Some(true),
            Egress::Fifo(f) if f.marking.is_none() => Some(f.has_room(now, size)),
            Egress::Queued(s) => s.has_room(size),
            _ => None,
        }
    }

    /// True if packets leave in the order they entered, one for one (no per-flow delay line,
    /// no reordering or duplication).
    #[inline(always)]
    pub fn keeps_order(&self) -> bool {
        self.propagation.keeps_order()
    }

    /// True if the random-loss stage drops the packet offered now (a draw from the stream).
    #[inline(always)]
    fn lost(&mut self) -> bool {
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            self.stats.random_drops += 1;
            return true;
        }
        false
    }

    /// Count a packet of `size` bytes as transmitted.
    #[inline(always)]
    fn count(&mut self, size: u32) {
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += size as u64;
    }

    /// Offer a packet of `flow` and `size` IP bytes at `now` without handing it over: if it is
    /// accepted, get its arrival time at the far end, the caller keeping the packet. Only for
    /// pipes that `decides_on_admission`; the arrival times returned never decrease.
    #[inline(always)]
    pub fn offer_through(&mut self, now: SimTime, flow: FlowId, size: u32) -> Result<SimTime, Offer> {
        debug_assert!(self.decides_on_admission());
        if self.lost() {
            return Err(Offer::RandomDrop);
        }
        let end = match &mut self.egress {
            Egress::Fifo(f) => f.admit(now, size)?,
            _ => now,
        };
        self.count(size);
        self.departed_as(end, flow, size);
        Ok(self.arrival_time(end))
    }

    /// Put a packet offered with `offer_through` into propagation after all, arriving at `at`.
    pub fn keep_in_line(&mut self, at: SimTime, pkt: Packet, wake: &mut PipeWake) {
        let Propagation::Fifo(line) = &mut self.propagation else { unreachable!("only order-keeping pipes pass packets on") };
        debug_assert!(line.back().is_none_or(|b| b.0 <= at));
        if line.is_empty() {
            wake.arrival = Some(at);
        }
        line.push_back((at, pkt));
    }

    /// Propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// Offer a packet at `now`.
    #[inline(always)]
    pub fn offer(&mut self, now: SimTime, mut pkt: Packet, wake: &mut PipeWake) -> Offer {
        if self.lost() {
            return Offer::RandomDrop;
        }
        let end = match &mut self.egress {
            Egress::Fifo(f) => match f.marking {
                None => f.admit(now, pkt.size),
                Some(m) => f.admit_marking(now, &mut pkt, m),
            },
            Egress::Instant => Ok(now),
            Egress::Queued(s) => return s.offer(now, pkt, &mut wake.tx_done, &mut self.tapped),
            Egress::Cells(c) => c.offer(now, &pkt, &mut self.tapped).ok_or(Offer::QueueDrop),
        };
        match end {
            Ok(end) => {
                self.count(pkt.size);
                self.departed(end, &pkt);
                self.propagate(end, pkt, wake);
                Offer::Accepted
            }
            Err(drop) => drop,
        }
    }

    /// When a packet whose last bit leaves at `end` reaches the far end (FIFO: with jitter,
    /// never before the packet ahead of it). Draws the jitter from the pipe's stream.
    fn arrival_time(&mut self, end: SimTime) -> SimTime {
        let mut at = end + self.delay;
        if self.jitter > SimDuration::ZERO {
            at = (at + SimDuration(self.rng.below(self.jitter.as_ps()))).max(self.last_arrival);
            self.last_arrival = at;
        }
        if self.tick > SimDuration::ZERO {
            at = self.ticked(end);
        }
        at
    }

    /// `with_tick`'s release time for a packet entering at `end`.
    #[cold]
    fn ticked(&self, end: SimTime) -> SimTime {
        let t = self.tick.as_ps();
        SimTime((end.0 / t) * t + self.delay.as_ps()).max(end)
    }

    fn propagate(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) {
        let at = self.arrival_time(now);
        if let Some(t) = self.propagation.admit(now, at, pkt) {
            wake.arrival = Some(t);
        }
    }

    /// The transmitter's packet has been serialized (called at the `tx_done` time): it enters
    /// propagation and the next queued packet starts. Returns the packets the queue dropped
    /// after dequeue meanwhile (the fabric counts them).
    pub fn tx_done(&mut self, now: SimTime, wake: &mut PipeWake) -> u32 {
        let Egress::Queued(s) = &mut self.egress else { unreachable!("{}: tx_done without a queue run event by event", self.name) };
        let (pkt, dropped) = s.tx_done(now, &mut wake.tx_done, &mut self.tapped);
        self.count(pkt.size);
        self.departed(now, &pkt);
        self.propagate(now, pkt, wake);
        dropped
    }

    /// The earliest packet in propagation reaches the far end (called at the `arrival` time).
    /// With a harmonizer or an impairment stage an arrival event may find a different packet
    /// first (one that overtook); it then returns `None` and the event is spent.
    pub fn arrive(&mut self, now: SimTime, wake: &mut PipeWake) -> Option<Packet> {
        self.propagation.release(now, &mut wake.arrival)
    }

    /// Packets inside the pipe: queued, in service, or propagating (a lazy FIFO's packets are
    /// in propagation from their admission).
    pub fn packets_inside(&self) -> u64 {
        self.egress.packets_inside() + self.propagation.len() as u64
    }
}

/// The egress for `queue` in front of `tx`: a single drop-tail FIFO runs lazily.
fn egress_for(queue: Box<dyn QueueDiscipline>, tx: Transmitter) -> Egress {
    match queue.as_fifo() {
        Some((limit, marking)) => Egress::Fifo(LazyFifo::new(tx, limit, marking)),
        None => Egress::Queued(Box::new(Served::new(queue, tx))),
    }
}

#[cfg(test)]
#[path = "pipe_tests.rs"]
mod tests;
