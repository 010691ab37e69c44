//! A pipe is one direction of a link, or one direction of an emulator: an optional random-loss
//! stage, an egress queue, a transmitter that serializes at a rate (or passes instantly) the
//! bytes its link layer puts on the line (`net::link_layer`), and a propagation stage
//! (`net::propagation`: a fixed delay, or a delay line of another kind).
//!
//! The transmitter computes each departure from the cumulative bits sent since it last went
//! idle, so per-packet rounding to picoseconds never accumulates: it keeps the exact end of
//! the last serialization as whole picoseconds plus a remainder in units of 1/rate ps, and
//! reports the end rounded up. A pipe has at most two pending events: the head-of-line
//! departure and the earliest arrival (release) of its propagation stage.
//!
//! A single-class FIFO whose occupancy nobody watches runs *lazily*: its departures are
//! computed at admission (a FIFO serves in order, so a packet's start and end of service are
//! known the moment it is accepted), the occupancy seen by a new arrival is the number of
//! admitted packets whose service has not started yet, and no departure events exist at all —
//! one event per packet per pipe instead of two, with identical drop decisions and timing.
//! Strict-priority queues and traced queues run event by event.
//!
//! A pipe can also hand an accepted packet straight back to the caller with its arrival time
//! at the far end (`offer_through`) instead of keeping it in propagation: the simulation uses
//! this to pass a packet on at once to a next pipe that nothing else feeds (see `sim.rs`).

use std::collections::VecDeque;

use crate::engine::Rng;
use crate::net::atm_port::{AtmPortConfig, CellStage};
use crate::net::harmonizer::Harmonizer;
use crate::net::impair::{ImpairConfig, Impairment};
use crate::net::link_layer::LinkLayer;
use crate::net::packet::Packet;
use crate::net::propagation::Propagation;
use crate::net::queue::{EcnMarking, Queue, QueueStats};
use crate::net::reassembly::Reassembled;
use crate::units::{BitRate, QueueLimit, SimDuration, SimTime};

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

/// A pipe's counters and lazy transmitter state before an admission (`Pipe::checkpoint`).
#[derive(Clone, Copy, Debug)]
pub struct PipeCheckpoint {
    stats: PipeStats,
    queue: QueueStats,
    tx_end: SimTime,
    clock: (SimTime, u64),
    serving: Option<(SimTime, u32)>,
    waiting_bytes: u64,
    waiting_len: usize,
    popped: usize,
}

impl PipeCheckpoint {
    /// Waiting entries the admission moved into service (kept by the caller).
    pub fn popped(&self) -> usize {
        self.popped
    }
}

/// What the caller must schedule after an operation on a pipe.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PipeWake {
    /// The transmitter will finish its packet at this time.
    pub tx_done: Option<SimTime>,
    /// The earliest packet in propagation arrives at this time.
    pub arrival: Option<SimTime>,
}

/// Outcome of offering a packet to a pipe.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Offer {
    /// Accepted (queued, in service or in propagation).
    Accepted,
    /// Dropped by the queue (buffer full).
    QueueDrop,
    /// Dropped by the random-loss stage.
    RandomDrop,
}

/// One direction of a link or emulator.
#[derive(Debug)]
pub struct Pipe {
    /// Display name, e.g. `"sw->b"` or `"emu(sw1->sw2)"`.
    pub name: String,
    rate: Option<BitRate>,
    delay: SimDuration,
    jitter: SimDuration,
    last_arrival: SimTime,
    loss: f64,
    rng: Rng,
    /// Egress queue in front of the transmitter.
    pub queue: Queue,
    in_service: Option<Packet>,
    /// Exact end of the last serialization: `clock_ps` + `clock_rem`/rate picoseconds.
    clock_ps: SimTime,
    clock_rem: u64,
    /// Serialization time of the last two packet sizes seen, as (size, whole ps, remainder in
    /// 1/rate ps): saves a 128-bit division per packet.
    ser_cache: [(u32, u64, u64); 2],
    /// The link layer: the bytes serialized for a packet of so many IP bytes.
    link: LinkLayer,
    tx_end: SimTime,
    /// The propagation stage: a FIFO line, or a delay line of another kind.
    propagation: Propagation,
    /// `Some(limit)` while running lazily (see the module doc).
    lazy: Option<QueueLimit>,
    /// The queue's ECN marking, kept here for the lazy admission.
    lazy_marking: Option<EcnMarking>,
    /// Lazy mode: (service start, IP bytes) of admitted packets not yet known to have started.
    waiting: VecDeque<(SimTime, u32)>,
    waiting_bytes: u64,
    /// Lazy mode: (service start, IP bytes) of the last packet known to have started service
    /// (the one just ahead of `waiting`).
    serving: Option<(SimTime, u32)>,
    /// Packets that began transmission (first bit on the wire), kept for a tap to collect.
    tapped: Option<Vec<(SimTime, Packet)>>,
    /// An ATM port in place of the queue and transmitter (`with_atm_port`).
    cells: Option<Box<CellStage>>,
    /// Counters.
    pub stats: PipeStats,
}

impl Pipe {
    /// A pipe with the given rate (`None`: infinitely fast, no queueing), propagation delay,
    /// random-loss probability and its RNG stream, and egress queue.
    pub fn new(name: String, rate: Option<BitRate>, delay: SimDuration, loss: f64, rng: Rng, queue: Queue) -> Self {
        Pipe {
            name,
            rate,
            delay,
            jitter: SimDuration::ZERO,
            last_arrival: SimTime::ZERO,
            loss,
            rng,
            queue,
            in_service: None,
            clock_ps: SimTime::ZERO,
            clock_rem: 0,
            ser_cache: [(u32::MAX, 0, 0); 2],
            link: LinkLayer::Ip,
            tx_end: SimTime::ZERO,
            lazy: None,
            lazy_marking: None,
            waiting: VecDeque::new(),
            waiting_bytes: 0,
            serving: None,
            tapped: None,
            cells: None,
            propagation: Propagation::default(),
            stats: PipeStats::default(),
        }
        .with_default_mode()
    }

    fn with_default_mode(mut self) -> Self {
        if self.rate.is_some() {
            self.lazy = self.queue.single_limit();
            self.lazy_marking = self.queue.single_marking();
        }
        self
    }

    /// Run event by event (needed to observe the queue as it changes). Call before use.
    pub fn set_event_driven(&mut self) {
        assert!(self.packets_inside() == 0, "switch modes before the first packet");
        self.lazy = None;
    }

    /// Observe this pipe: every packet is reported when its first bit goes on the wire
    /// (`take_tapped`). Tapped pipes run event by event. Call before use.
    pub fn set_tapped(&mut self) {
        self.set_event_driven();
        self.tapped = Some(Vec::new());
    }

    /// True if a tap observes this pipe.
    pub fn is_tapped(&self) -> bool {
        self.tapped.is_some()
    }

    /// Move the packets that started transmission since the last call into `out`.
    pub fn take_tapped(&mut self, out: &mut Vec<(SimTime, Packet)>) {
        if let Some(v) = self.tapped.as_mut() {
            out.append(v);
        }
    }

    /// Queue counters as of `now` (lazy pipes settle the service starts already passed).
    pub fn queue_stats(&self, now: SimTime) -> QueueStats {
        let mut st = self.queue.stats;
        st.departed += self.waiting.iter().take_while(|(start, _)| *start <= now).count() as u64;
        st
    }

    /// (Packets, IP bytes) whose serialization ended by `now`. A lazy pipe counts packets when
    /// it admits them; the ones still queued or in service at `now` are taken out here, so
    /// the figure is the event-driven pipe's whatever the mode.
    pub fn transmitted_by(&self, now: SimTime) -> (u64, u64) {
        let (mut n, mut b) = (self.stats.transmitted, self.stats.bytes_transmitted);
        if self.lazy.is_none() {
            return (n, b);
        }
        // `serving` and then `waiting` were served back to back.
        let mut last = self.serving;
        let mut next_start = None;
        for &(start, size) in &self.waiting {
            if start <= now {
                last = Some((start, size));
            } else {
                n -= 1;
                b -= size as u64;
                next_start.get_or_insert(start);
            }
        }
        if let Some((_, size)) = last {
            if next_start.unwrap_or(self.tx_end) > now {
                n -= 1;
                b -= size as u64;
            }
        }
        (n, b)
    }

    /// Packets waiting for the transmitter at `now` (the one in service excluded).
    pub fn waiting_packets(&self, now: SimTime) -> u64 {
        if self.lazy.is_some() {
            self.waiting.iter().filter(|(start, _)| *start > now).count() as u64
        } else {
            self.queue.len_packets()
        }
    }

    /// Add a uniform random delay in [0, jitter) to each packet's propagation, keeping FIFO
    /// order (a packet never overtakes the one before it). Uses the pipe's RNG stream.
    pub fn with_jitter(mut self, jitter: SimDuration) -> Self {
        self.jitter = jitter;
        self
    }

    /// Serialize `bytes` of link-layer framing with every packet (PPP: 2; Ethernet with
    /// preamble and inter-frame gap: 38). Queue limits and counters stay in IP bytes.
    pub fn with_framing(self, bytes: u32) -> Self {
        self.with_link_layer(if bytes == 0 { LinkLayer::Ip } else { LinkLayer::Framing(bytes) })
    }

    /// Serialize packets by the rule of link layer `link` (`LinkLayer::line_bytes`). Queue
    /// limits and counters stay in IP bytes.
    pub fn with_link_layer(mut self, link: LinkLayer) -> Self {
        self.link = link;
        self
    }

    /// Replace the queue and transmitter by an ATM output port (`net::atm_port`): a packet's
    /// AAL5 frame is a train of cells, decided cell by cell; the pipe must feed a host, whose
    /// reassembly the port applies (a frame that lost cells is dropped once its surviving cells
    /// have taken their slots). Needs an AAL5 link layer (set first).
    pub fn with_atm_port(mut self, cfg: AtmPortConfig) -> Self {
        assert!(self.rate.is_some_and(|r| r.bps() == cfg.line_bps), "the port runs at the link's cell rate");
        self.cells = Some(Box::new(CellStage::new(cfg, self.link)));
        // The port serializes cell by cell itself; the pipe's own transmitter stays idle.
        self.rate = None;
        self.lazy = None;
        self.lazy_marking = None;
        self
    }

    /// The ATM port, if this pipe is one.
    pub fn atm_port(&self) -> Option<&CellStage> {
        self.cells.as_deref()
    }

    /// Tell the ATM port the cell rate of the link that feeds it (`None`: a host, or a link
    /// that delivers packets whole).
    pub fn set_atm_input(&mut self, cell_line_bps: Option<u64>) {
        if let Some(c) = self.cells.as_mut() {
            c.set_input(cell_line_bps);
        }
    }

    /// The link layer.
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

    /// The impairment stage, if this pipe has one.
    pub fn impairment(&self) -> Option<&Impairment> {
        match &self.propagation {
            Propagation::Impaired(im) => Some(im),
            _ => None,
        }
    }

    /// Copies this pipe's impairment stage made (0 without one).
    pub fn duplicated(&self) -> u64 {
        self.impairment().map_or(0, |i| i.duplicated)
    }

    /// The harmonizer, if this pipe has one.
    pub fn harmonizer(&self) -> Option<&Harmonizer> {
        match &self.propagation {
            Propagation::Harmonized(h) => Some(h),
            _ => None,
        }
    }

    /// True if the pipe decides a packet's arrival time at the far end the moment it accepts
    /// it (lazy or rate-unlimited, FIFO propagation): `offer_through` may be used. A queue that
    /// marks ECN changes the packet it admits, so its pipe takes packets through `offer` (still
    /// lazily), never passed on: the pass-on path stays free of the marking.
    pub fn decides_on_admission(&self) -> bool {
        (self.lazy.is_some() || self.rate.is_none()) && self.keeps_order() && self.tapped.is_none() && self.lazy_marking.is_none() && self.cells.is_none()
    }

    /// True if packets leave in the order they entered, one for one (no per-flow delay line,
    /// no reordering or duplication).
    #[inline(always)]
    pub fn keeps_order(&self) -> bool {
        self.propagation.keeps_order()
    }

    /// Offer a packet of `size` IP bytes at `now` without handing it over: if it is accepted,
    /// get its arrival time at the far end, the caller keeping the packet. Only for pipes that
    /// `decides_on_admission`; the arrival times returned never decrease.
    #[inline(always)]
    pub fn offer_through(&mut self, now: SimTime, size: u32) -> Result<SimTime, Offer> {
        debug_assert!(self.decides_on_admission());
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            self.stats.random_drops += 1;
            return Err(Offer::RandomDrop);
        }
        let end = match (self.rate, self.lazy) {
            (Some(rate), Some(limit)) => self.admit_lazy(now, size, rate, limit)?,
            _ => {
                self.stats.transmitted += 1;
                self.stats.bytes_transmitted += size as u64;
                now
            }
        };
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

    /// Serialization rate, if limited (an ATM port's line rate).
    pub fn rate(&self) -> Option<BitRate> {
        self.rate.or_else(|| self.cells.as_ref().map(|c| BitRate(c.line_bps())))
    }

    /// Propagation delay.
    pub fn delay(&self) -> SimDuration {
        self.delay
    }

    /// Offer a packet at `now`.
    #[inline(always)]
    pub fn offer(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) -> Offer {
        if self.loss > 0.0 && self.rng.bernoulli(self.loss) {
            self.stats.random_drops += 1;
            return Offer::RandomDrop;
        }
        let Some(rate) = self.rate else {
            return self.offer_untimed(now, pkt, wake);
        };
        if let Some(limit) = self.lazy {
            return self.offer_lazy(now, pkt, rate, limit, wake);
        }
        if self.in_service.is_some() {
            return match self.queue.enqueue(pkt) {
                Ok(()) => Offer::Accepted,
                Err(_) => Offer::QueueDrop,
            };
        }
        // The queue counts every accepted packet, also one that goes straight into service,
        // which finds nothing waiting.
        let mut pkt = pkt;
        if let Some(m) = self.queue.single_marking() {
            if self.judge_marking(m, 0, 0, &mut pkt).is_err() {
                return Offer::QueueDrop;
            }
        }
        self.queue.stats.enqueued += 1;
        self.queue.stats.departed += 1;
        self.queue.stats.max_packets = self.queue.stats.max_packets.max(1);
        self.queue.stats.max_bytes = self.queue.stats.max_bytes.max(pkt.size as u64);
        if self.tx_end < now {
            // The transmitter was idle: back-to-back transmission restarts from now.
            self.clock_ps = now;
            self.clock_rem = 0;
        }
        self.start(now, rate, pkt, wake);
        Offer::Accepted
    }

    /// A pipe without a transmitter of its own: straight into propagation, or an ATM port
    /// (which keeps its line rate in its cell stage, off the rate-limited path).
    #[inline(never)]
    fn offer_untimed(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) -> Offer {
        if self.cells.is_some() {
            return self.offer_cells(now, pkt, wake);
        }
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += pkt.size as u64;
        self.propagate(now, pkt, wake);
        Offer::Accepted
    }

    /// The ATM port's admission (a packet whose last cell arrives `now`): the cells of its
    /// frame are decided one by one and those queued take their line slots; the host this port
    /// feeds reassembles the frame and takes the packet only if it is whole and not merged
    /// with one whose end was lost. The packet goes on as it left the port's last cell.
    #[inline(never)]
    fn offer_cells(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) -> Offer {
        let stage = self.cells.as_mut().expect("an ATM pipe");
        let fate = stage.admit(now, pkt.size);
        let end = (pkt.to == crate::net::packet::End::Dst) as usize;
        let (Reassembled::Delivered, Some(first), Some(last)) = (stage.reassemble(pkt.flow.0 as usize, end, &fate), fate.first_out, fate.last_out) else {
            self.queue.stats.dropped += 1;
            return Offer::QueueDrop;
        };
        self.queue.stats.enqueued += 1;
        self.queue.stats.departed += 1;
        if let Some(v) = self.tapped.as_mut() {
            v.push((first, pkt));
        }
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += pkt.size as u64;
        let at = self.arrival_time(last);
        if let Some(t) = self.propagation.admit(last, at, pkt) {
            wake.arrival = Some(t);
        }
        Offer::Accepted
    }

    #[inline(always)]
    fn offer_lazy(&mut self, now: SimTime, mut pkt: Packet, rate: BitRate, limit: QueueLimit, wake: &mut PipeWake) -> Offer {
        let admitted = match self.lazy_marking {
            None => self.admit_lazy(now, pkt.size, rate, limit),
            Some(m) => self.admit_lazy_marking(now, &mut pkt, rate, limit, m),
        };
        match admitted {
            Ok(end) => {
                self.propagate(end, pkt, wake);
                Offer::Accepted
            }
            Err(drop) => drop,
        }
    }

    /// `admit_lazy` behind ECN marking `m`: a packet the buffer has room for is judged on the
    /// packets (bytes) it finds waiting, the one in service excluded, exactly as the
    /// event-driven queue judges it.
    #[inline(never)]
    fn admit_lazy_marking(&mut self, now: SimTime, pkt: &mut Packet, rate: BitRate, limit: QueueLimit, m: EcnMarking) -> Result<SimTime, Offer> {
        self.settle_lazy(now);
        let (packets, bytes) = if self.tx_end > now { (self.waiting.len() as u64, self.waiting_bytes) } else { (0, 0) };
        let room = match limit {
            QueueLimit::Packets(n) => packets < n,
            QueueLimit::Bytes(b) => bytes + pkt.size as u64 <= b,
            QueueLimit::Unlimited => true,
        };
        if room || self.tx_end <= now {
            self.judge_marking(m, packets, bytes, pkt)?;
        }
        self.admit_lazy(now, pkt.size, rate, limit)
    }

    /// Apply ECN marking `m` to a packet finding `packets`/`bytes` waiting: mark it, or count
    /// the drop of one that cannot be marked (`Err`).
    #[inline(never)]
    fn judge_marking(&mut self, m: EcnMarking, packets: u64, bytes: u64, pkt: &mut Packet) -> Result<(), Offer> {
        if m.apply(packets, bytes, pkt, &mut self.queue.stats) {
            Ok(())
        } else {
            Err(Offer::QueueDrop)
        }
    }

    /// Lazy mode: the packets whose service has begun by `now` have left the queue.
    #[inline(always)]
    fn settle_lazy(&mut self, now: SimTime) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= size as u64;
            self.queue.stats.departed += 1;
            self.serving = Some((start, size));
        }
    }

    /// Lazy queue and transmitter: the end of service of an accepted packet of `size` bytes.
    #[inline(always)]
    fn admit_lazy(&mut self, now: SimTime, size: u32, rate: BitRate, limit: QueueLimit) -> Result<SimTime, Offer> {
        self.settle_lazy(now);
        let busy = self.tx_end > now;
        if busy {
            let fits = match limit {
                QueueLimit::Packets(n) => (self.waiting.len() as u64) < n,
                QueueLimit::Bytes(b) => self.waiting_bytes + size as u64 <= b,
                QueueLimit::Unlimited => true,
            };
            if !fits {
                self.queue.stats.dropped += 1;
                return Err(Offer::QueueDrop);
            }
        } else {
            // Idle: back-to-back transmission restarts from now (unless it ended exactly now).
            if self.tx_end < now {
                self.clock_ps = now;
                self.clock_rem = 0;
            }
        }
        let st = &mut self.queue.stats;
        st.enqueued += 1;
        let start = self.tx_end.max(now);
        if busy {
            self.waiting.push_back((start, size));
            self.waiting_bytes += size as u64;
            st.max_packets = st.max_packets.max(self.waiting.len() as u64);
            st.max_bytes = st.max_bytes.max(self.waiting_bytes);
        } else {
            st.departed += 1;
            st.max_packets = st.max_packets.max(1);
            st.max_bytes = st.max_bytes.max(size as u64);
            self.serving = Some((start, size));
        }
        self.tx_end = self.serialize(rate, size);
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += size as u64;
        Ok(self.tx_end)
    }

    /// Advance the exact transmit clock by one packet; returns its end of service rounded up.
    #[inline(always)]
    fn serialize(&mut self, rate: BitRate, size: u32) -> SimTime {
        let r = rate.bps();
        // line bytes·8·10¹²/r = qs + rs/r (cached per size); with rem < r, rem + rs < 2r.
        let (qs, rs) = match self.ser_cache {
            [(s0, q, rm), _] if s0 == size => (q, rm),
            [a, (s1, q, rm)] if s1 == size => {
                self.ser_cache = [(s1, q, rm), a];
                (q, rm)
            }
            _ => self.serialization_time(r, size),
        };
        // The true sum is below 2r; it can pass 2^64 only for rates above 2^63 b/s.
        let (sum, wrapped) = self.clock_rem.overflowing_add(rs);
        let carry = wrapped || sum >= r;
        self.clock_ps += SimDuration(qs + carry as u64);
        self.clock_rem = if carry { sum.wrapping_sub(r) } else { sum };
        self.clock_ps + SimDuration((self.clock_rem > 0) as u64)
    }

    /// Serialization time of a packet of `size` IP bytes at `r` b/s, as whole picoseconds and
    /// a remainder in 1/r ps, put first in the cache (a new size: off the common path).
    #[inline(never)]
    fn serialization_time(&mut self, r: u64, size: u32) -> (u64, u64) {
        let bits_ps = self.link.line_bytes(size) as u128 * 8 * crate::units::PS_PER_SEC as u128;
        let (q, rm) = ((bits_ps / r as u128) as u64, (bits_ps % r as u128) as u64);
        self.ser_cache = [(size, q, rm), self.ser_cache[0]];
        (q, rm)
    }

    fn start(&mut self, now: SimTime, rate: BitRate, pkt: Packet, wake: &mut PipeWake) {
        if let Some(v) = self.tapped.as_mut() {
            v.push((now, pkt));
        }
        self.tx_end = self.serialize(rate, pkt.size);
        self.in_service = Some(pkt);
        wake.tx_done = Some(self.tx_end);
    }

    /// When a packet whose last bit leaves at `end` reaches the far end (FIFO: with jitter,
    /// never before the packet ahead of it). Draws the jitter from the pipe's stream.
    fn arrival_time(&mut self, end: SimTime) -> SimTime {
        let mut at = end + self.delay;
        if self.jitter > SimDuration::ZERO {
            at = (at + SimDuration(self.rng.below(self.jitter.as_ps()))).max(self.last_arrival);
            self.last_arrival = at;
        }
        at
    }

    fn propagate(&mut self, now: SimTime, pkt: Packet, wake: &mut PipeWake) {
        let at = self.arrival_time(now);
        if let Some(t) = self.propagation.admit(now, at, pkt) {
            wake.arrival = Some(t);
        }
    }

    /// The transmitter's packet has been serialized (called at the `tx_done` time): it enters
    /// propagation and the next queued packet starts. Returns the packet that finished (for taps).
    pub fn tx_done(&mut self, now: SimTime, wake: &mut PipeWake) -> Packet {
        let pkt = self.in_service.take().expect("tx_done without a packet in service");
        debug_assert_eq!(now, self.tx_end);
        self.stats.transmitted += 1;
        self.stats.bytes_transmitted += pkt.size as u64;
        self.propagate(now, pkt, wake);
        if let Some(next) = self.queue.dequeue() {
            let rate = self.rate.expect("only rate-limited pipes queue");
            self.start(now, rate, next, wake);
        }
        pkt
    }

    /// The earliest packet in propagation reaches the far end (called at the `arrival` time).
    /// With a harmonizer or an impairment stage an arrival event may find a different packet
    /// first (one that overtook); it then returns `None` and the event is spent.
    pub fn arrive(&mut self, now: SimTime, wake: &mut PipeWake) -> Option<Packet> {
        self.propagation.release(now, &mut wake.arrival)
    }

    /// What an admission at `now` is about to change, so that `restore` can take it back (a
    /// run that stops at an instant nobody knew in advance reads its counters as of that
    /// instant; see `Fabric::settle_unknown_stop`). The waiting packets the admission will
    /// move into service are appended to `popped`. Only for pipes that `decides_on_admission`.
    pub fn checkpoint(&self, now: SimTime, popped: &mut Vec<(SimTime, u32)>) -> PipeCheckpoint {
        let before = popped.len();
        popped.extend(self.waiting.iter().take_while(|(start, _)| *start <= now));
        PipeCheckpoint {
            stats: self.stats,
            queue: self.queue.stats,
            tx_end: self.tx_end,
            clock: (self.clock_ps, self.clock_rem),
            serving: self.serving,
            waiting_bytes: self.waiting_bytes,
            waiting_len: self.waiting.len(),
            popped: popped.len() - before,
        }
    }

    /// (Queue drops, random drops) since `c` was taken.
    pub fn drops_since(&self, c: &PipeCheckpoint) -> (u64, u64) {
        (self.queue.stats.dropped - c.queue.dropped, self.stats.random_drops - c.stats.random_drops)
    }

    /// Undo the admission `c` was taken before (later ones undone first), `popped` being the
    /// entries `checkpoint` appended.
    /// Packets the undone admissions put into propagation stay there (they are still inside
    /// the network, only not yet through this pipe).
    pub fn restore(&mut self, c: &PipeCheckpoint, popped: &[(SimTime, u32)]) {
        debug_assert_eq!(popped.len(), c.popped);
        self.waiting.truncate(c.waiting_len - c.popped);
        for &e in popped.iter().rev() {
            self.waiting.push_front(e);
        }
        debug_assert_eq!(self.waiting.len(), c.waiting_len);
        self.stats = c.stats;
        self.queue.stats = c.queue;
        self.tx_end = c.tx_end;
        (self.clock_ps, self.clock_rem) = c.clock;
        self.serving = c.serving;
        self.waiting_bytes = c.waiting_bytes;
    }

    /// Packets inside the pipe: queued, in service, or propagating.
    pub fn packets_inside(&self) -> u64 {
        self.queue.len_packets() + self.in_service.is_some() as u64 + self.propagation.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{Body, Ecn, TcpHeader};
    use crate::units::QueueLimit;

    fn pkt(size: u32) -> Packet {
        crate::net::packet::test_udp(0, 0, size, 0)
    }

    #[test]
    fn back_to_back_departures_do_not_drift() {
        // 1000 packets of 53 bytes at 149.76 Mb/s: each is 2 831 196.58 ps; per-packet rounding
        // would drift by ~0.4 ns per packet, the cumulative rule keeps the total exact.
        let rate = BitRate(149_760_000);
        let mut p = Pipe::new("p".into(), Some(rate), SimDuration::ZERO, 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Unlimited));
        p.set_event_driven();
        let mut w = PipeWake::default();
        for _ in 0..1000 {
            p.offer(SimTime::ZERO, pkt(53), &mut w);
        }
        let mut t = w.tx_done.unwrap();
        let mut n = 0;
        loop {
            let mut w = PipeWake::default();
            p.tx_done(t, &mut w);
            n += 1;
            match w.tx_done {
                Some(next) => t = next,
                None => break,
            }
        }
        assert_eq!(n, 1000);
        assert_eq!(t, SimTime::ZERO + rate.tx_time_bits(1000 * 53 * 8));
        assert_eq!(t.0, 2_831_196_582); // ⌈424 000 bits / 149.76 Mb/s⌉ in ps
    }

    #[test]
    fn framing_adds_line_time_per_packet() {
        // 1500 IP bytes + 2 bytes of PPP at 1 Gb/s: 12.016 µs each, back to back.
        let mut p = Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(10))).with_framing(2);
        let mut w = PipeWake::default();
        p.offer(SimTime::ZERO, pkt(1500), &mut w);
        p.offer(SimTime::ZERO, pkt(1500), &mut w);
        assert_eq!(w.arrival, Some(SimTime(12_016_000)));
        let mut w = PipeWake::default();
        p.arrive(SimTime(12_016_000), &mut w);
        assert_eq!(w.arrival, Some(SimTime(24_032_000)));
        assert_eq!(p.transmitted_by(SimTime(24_032_000)), (2, 3000), "counters stay in IP bytes");
        assert_eq!(p.transmitted_by(SimTime(24_031_999)), (1, 1500), "the second is still on the wire");
    }

    #[test]
    fn aal5_serializes_whole_cells() {
        // OC-3c carries 353,208 cells/s: 149.76 Mb/s of 53-byte cells. A 1500-byte packet over
        // AAL5 with LLC/SNAP is 32 cells: 32 × 424 bits / 149.76 Mb/s = 90.598... µs.
        let mut p =
            Pipe::new("p".into(), Some(BitRate(149_760_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(10))).with_link_layer(LinkLayer::AAL5_LLC);
        let mut w = PipeWake::default();
        p.offer(SimTime::ZERO, pkt(1500), &mut w);
        let cell_ps = 424.0 * 1e12 / 149.76e6;
        let got = w.arrival.expect("an arrival").0 as f64;
        assert!((got - 32.0 * cell_ps).abs() <= 1.0, "{got} ps for 32 cells of {cell_ps} ps");
        // A 40-byte ACK needs 2 cells (56 bytes with LLC/SNAP and the trailer).
        let mut q =
            Pipe::new("q".into(), Some(BitRate(149_760_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(10))).with_link_layer(LinkLayer::AAL5_LLC);
        let mut w = PipeWake::default();
        q.offer(SimTime::ZERO, pkt(40), &mut w);
        assert!((w.arrival.expect("an arrival").0 as f64 - 2.0 * cell_ps).abs() <= 1.0);
    }

    #[test]
    fn delay_and_fifo_arrivals() {
        let mut p = Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_millis(1), 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(1)));
        p.set_event_driven();
        let mut w = PipeWake::default();
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::Accepted);
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::Accepted);
        assert_eq!(p.offer(SimTime::ZERO, pkt(1500), &mut w), Offer::QueueDrop);
        let t1 = w.tx_done.unwrap();
        assert_eq!(t1, SimTime(12_000_000));
        let mut w = PipeWake::default();
        p.tx_done(t1, &mut w);
        assert_eq!(w.arrival, Some(SimTime(1_012_000_000)));
        assert_eq!(w.tx_done, Some(SimTime(24_000_000)));
        assert_eq!(p.packets_inside(), 2);
    }

    /// Drive a pipe with its own little event loop; return (arrival time, seq) of every packet
    /// that came out and the seqs that were dropped.
    fn drive(p: Pipe, offers: &[(u64, u32)]) -> (Vec<(u64, u64)>, Vec<u64>) {
        let (out, dropped, _) = drive_until(p, offers, u64::MAX);
        (out.iter().map(|&(t, seq, _)| (t, seq)).collect(), dropped)
    }

    /// `drive`, handling only the events due by `stop`; also returns the pipe.
    /// Offer `offers` (time, size) as TCP segments numbered by their index, ECN-capable but
    /// every fourth; returns the deliveries (time, index, marked CE), the drops and the pipe.
    fn drive_until(mut p: Pipe, offers: &[(u64, u32)], stop: u64) -> (Vec<(u64, u64, bool)>, Vec<u64>, Pipe) {
        use std::collections::BTreeMap;
        // (time, rank, order) -> 0 offer, 1 tx, 2 arrive. As in the simulation's canonical
        // order, departures (rank 0) come before offers and arrivals (rank 1) at equal times.
        let mut events: BTreeMap<(u64, u8, u64), u8> = BTreeMap::new();
        let mut order = 0u64;
        let mut offer_at = BTreeMap::new();
        for (i, (t, _)) in offers.iter().enumerate() {
            events.insert((*t, 1, order), 0);
            offer_at.insert(order, i);
            order += 1;
        }
        let (mut out, mut dropped) = (vec![], vec![]);
        while let Some(((t, _, o), kind)) = events.pop_first() {
            if t > stop {
                break;
            }
            let now = SimTime(t);
            let mut w = PipeWake::default();
            match kind {
                0 => {
                    let i = offer_at[&o];
                    let mut pk = pkt(offers[i].1);
                    let ecn = if i % 4 == 0 { Ecn::NotEct } else { Ecn::Ect0 };
                    pk.body = Body::Tcp(TcpHeader { seq: i as u64, ecn, ..TcpHeader::default() });
                    if p.offer(now, pk, &mut w) != Offer::Accepted {
                        dropped.push(i as u64);
                    }
                }
                1 => {
                    p.tx_done(now, &mut w);
                }
                _ => {
                    let pk = p.arrive(now, &mut w).expect("FIFO pipes always deliver");
                    let Body::Tcp(h) = pk.body else { unreachable!() };
                    out.push((t, h.seq, h.ecn == Ecn::Ce));
                }
            }
            if let Some(x) = w.tx_done {
                events.insert((x.0, 0, order), 1);
                order += 1;
            }
            if let Some(x) = w.arrival {
                events.insert((x.0, 1, order), 2);
                order += 1;
            }
        }
        (out, dropped, p)
    }

    /// Stopped at any instant — between packets, in the middle of one's serialization, at the
    /// very picosecond one ends — the two modes count the same packets and bytes transmitted,
    /// and the same departures.
    #[test]
    fn lazy_and_event_driven_pipes_count_the_same_at_any_stop() {
        let mut rng = Rng::from_seed(9);
        let mut offers = vec![];
        let mut t = 0u64;
        for _ in 0..400 {
            t += rng.below(20_000_000);
            offers.push((t, 64 + rng.below(1436) as u32));
        }
        let mk = || Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(3), 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(4)));
        let mut stops: Vec<u64> = (0..300).map(|_| rng.below(t + 50_000_000)).collect();
        // Exactly at ends of service too.
        let (ends, _, _) = drive_until(mk(), &offers, u64::MAX);
        stops.extend(ends.iter().take(100).map(|(at, _, _)| at - 3_000_000));
        for stop in stops {
            let (_, _, lazy) = drive_until(mk(), &offers, stop);
            let mut e = mk();
            e.set_event_driven();
            let (_, _, event) = drive_until(e, &offers, stop);
            let now = SimTime(stop);
            assert_eq!(lazy.transmitted_by(now), event.transmitted_by(now), "stop at {stop}");
            assert_eq!(lazy.queue_stats(now).departed, event.queue_stats(now).departed, "stop at {stop}");
            assert_eq!(lazy.waiting_packets(now), event.waiting_packets(now), "stop at {stop}");
        }
    }

    #[test]
    fn lazy_and_event_driven_pipes_agree() {
        let mut rng = Rng::from_seed(42);
        for (limit, aligned) in
            [(QueueLimit::Packets(5), false), (QueueLimit::Bytes(6000), false), (QueueLimit::Unlimited, false), (QueueLimit::Packets(3), true), (QueueLimit::Bytes(4000), true)]
        {
            let mut offers = vec![];
            let mut t = 0u64;
            for _ in 0..3000 {
                if aligned {
                    // 1000-byte packets at whole multiples of their 8 µs serialization: offers
                    // fall on the very picosecond a service ends.
                    t += 8_000_000 * rng.below(3);
                    offers.push((t, 1000));
                } else {
                    t += rng.below(15_000_000); // bursty: mean gap ≈ a 1000-byte packet at 1 Gb/s
                    offers.push((t, 64 + rng.below(1436) as u32));
                }
            }
            let mk = || Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(7), 0.0, Rng::from_seed(0), Queue::fifo(limit));
            let lazy = mk();
            assert!(lazy.lazy.is_some());
            let mut event = mk();
            event.set_event_driven();
            let (a, da) = drive(lazy, &offers);
            let (b, db) = drive(event, &offers);
            assert!(!da.is_empty() || limit == QueueLimit::Unlimited, "the test must exercise drops");
            assert_eq!(da, db, "{limit:?}: same drops");
            assert_eq!(a, b, "{limit:?}: same arrival times");
        }
    }

    /// ECN marking by threshold: the lazy pipe marks exactly the packets the event-driven one
    /// marks (both judge the occupancy a packet finds, the one in service excluded), drops the
    /// unmarkable ones there or lets them pass, and marks nothing below the threshold.
    #[test]
    fn lazy_and_event_driven_pipes_mark_alike() {
        let mut rng = Rng::from_seed(7);
        let mut offers = vec![];
        let mut t = 0u64;
        for _ in 0..3000 {
            t += rng.below(12_000_000);
            offers.push((t, 1000));
        }
        for (threshold, drop_unmarkable) in [(QueueLimit::Packets(0), true), (QueueLimit::Packets(4), true), (QueueLimit::Packets(4), false), (QueueLimit::Bytes(3000), true)] {
            let marking = Some(EcnMarking { threshold, drop_unmarkable });
            let mk = || {
                Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(7), 0.0, Rng::from_seed(0), Queue::fifo(QueueLimit::Packets(20)).with_marking(marking))
            };
            let lazy = mk();
            assert!(lazy.lazy.is_some() && lazy.lazy_marking.is_some());
            let mut event = mk();
            event.set_event_driven();
            let (a, da, pa) = drive_until(lazy, &offers, u64::MAX);
            let (b, db, pb) = drive_until(event, &offers, u64::MAX);
            assert_eq!((&a, &da), (&b, &db), "{threshold:?}: same deliveries, marks and drops");
            let marked = a.iter().filter(|d| d.2).count() as u64;
            assert!(marked > 0 && marked == pa.queue.stats.marked && marked == pb.queue.stats.marked, "{threshold:?}: {marked} marked");
            assert!(a.iter().all(|&(_, seq, ce)| !ce || seq % 4 != 0), "only ECN-capable packets are marked");
            let unmarkable = pa.queue.stats.unmarkable_dropped;
            assert_eq!(unmarkable, pb.queue.stats.unmarkable_dropped);
            assert_eq!(unmarkable > 0, drop_unmarkable, "{threshold:?}: {unmarkable} unmarkable drops");
            if threshold == QueueLimit::Packets(0) {
                assert_eq!(marked as usize, a.len() - a.iter().filter(|d| d.1 % 4 == 0).count(), "K = 0 marks every capable packet");
            }
        }
        // Below the threshold nothing is marked: with K above the buffer no packet ever is.
        let p = Pipe::new(
            "p".into(),
            Some(BitRate(1_000_000_000)),
            SimDuration::ZERO,
            0.0,
            Rng::from_seed(0),
            Queue::fifo(QueueLimit::Packets(20)).with_marking(Some(EcnMarking { threshold: QueueLimit::Packets(20), drop_unmarkable: true })),
        );
        let (out, _, p) = drive_until(p, &offers, u64::MAX);
        assert!(out.iter().all(|d| !d.2) && p.queue.stats.marked == 0 && p.queue.stats.unmarkable_dropped == 0);
    }

    #[test]
    fn jitter_delays_within_bounds_and_keeps_order() {
        let j = SimDuration::from_micros(10);
        let mut p = Pipe::new("h".into(), None, SimDuration::ZERO, 0.0, Rng::from_seed(5), Queue::fifo(QueueLimit::Unlimited)).with_jitter(j);
        let mut w = PipeWake::default();
        for k in 0..1000u64 {
            p.offer(SimTime(k * 1_000_000), pkt(100), &mut w);
        }
        let mut last = SimTime::ZERO;
        let mut extra = 0u64;
        let mut t = w.arrival.unwrap();
        for k in 0..1000u64 {
            let mut w = PipeWake::default();
            p.arrive(t, &mut w);
            assert!(t >= last && t.0 >= k * 1_000_000 && t.0 < k * 1_000_000 + j.as_ps() + 10_000_000);
            extra += t.0 - k * 1_000_000;
            last = t;
            if let Some(n) = w.arrival {
                t = n;
            }
        }
        let mean = extra as f64 / 1000.0;
        assert!(mean > 4.0e6 && mean < 7.0e6, "mean extra {mean} ps ≈ 5 µs");
    }

    #[test]
    fn random_loss_rate() {
        let mut p = Pipe::new("e".into(), None, SimDuration::ZERO, 0.1, Rng::from_seed(3), Queue::fifo(QueueLimit::Unlimited));
        let mut w = PipeWake::default();
        let drops = (0..100_000).filter(|_| p.offer(SimTime::ZERO, pkt(100), &mut w) == Offer::RandomDrop).count();
        assert!((9_000..11_000).contains(&drops), "{drops}");
    }
}
