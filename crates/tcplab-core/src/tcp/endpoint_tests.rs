//! The endpoint's seams: a sender-side reaction to a special ACK, an output stage that holds
//! segments until its own timer, and the wake-up generations.

use super::*;
use crate::net::packet::flags;
use crate::tcp::TcpConfig;
use crate::units::SimDuration;

const MS: SimDuration = SimDuration::from_millis(1);

fn cfg() -> TcpConfig {
    TcpConfig { mss: 1000, sack: false, delack_segments: 1, sndbuf: 1 << 30, rcvbuf: 1 << 30, ..TcpConfig::default() }
}

/// Two endpoints joined by a wire of one-way delay `delay` that loses nothing.
struct Pair {
    now: SimTime,
    ends: [Endpoint; 2],
    delay: SimDuration,
    /// (arrival time, order, to end, segment)
    wire: Vec<(SimTime, u64, usize, TcpHeader)>,
    order: u64,
    /// (departure time, from end, segment)
    log: Vec<(SimTime, usize, TcpHeader)>,
    out: Output,
}

impl Pair {
    fn new(a: Endpoint, b: Endpoint) -> Self {
        Pair { now: SimTime::ZERO, ends: [a, b], delay: MS, wire: vec![], order: 0, log: vec![], out: Output::default() }
    }

    fn emit(&mut self, from: usize) {
        for seg in std::mem::take(&mut self.out.segments) {
            self.log.push((self.now, from, seg));
            self.order += 1;
            self.wire.push((self.now + self.delay, self.order, 1 - from, seg));
        }
        self.out.clear();
    }

    fn open(&mut self) {
        self.ends[1].listen();
        self.ends[0].connect(self.now, &mut self.out);
        self.emit(0);
    }

    /// Run until nothing is pending or `until`.
    fn run(&mut self, until: SimTime) {
        loop {
            let pkt = self.wire.iter().map(|w| (w.0, w.1)).min();
            let wakes = [self.ends[0].next_deadline(), self.ends[1].next_deadline()];
            let mut next = pkt.map(|p| p.0);
            for w in wakes.into_iter().flatten() {
                next = Some(next.map_or(w, |n: SimTime| n.min(w)));
            }
            let Some(t) = next.filter(|&t| t <= until) else { return };
            self.now = t;
            if let Some((at, order)) = pkt.filter(|p| p.0 == t) {
                let i = self.wire.iter().position(|w| w.0 == at && w.1 == order).unwrap();
                let (_, _, to, seg) = self.wire.remove(i);
                self.ends[to].on_segment(t, &seg, &mut self.out);
                self.emit(to);
                continue;
            }
            for e in 0..2 {
                if self.ends[e].next_deadline().is_some_and(|d| d <= t) {
                    let (_, g) = self.ends[e].wake_to_schedule(t).expect("a due deadline is not yet scheduled");
                    assert_eq!(self.ends[e].on_wake(t, g, &mut self.out), Wake::Fired);
                    self.emit(e);
                }
            }
        }
    }
}

/// AHTCP-like sender reaction: an ACK of exactly `snd_una + 1` while data is outstanding is a
/// retransmission request, answered by expiring the retransmission timer.
#[derive(Debug, Default)]
struct RetransmitOnRequest {
    requests: u32,
}

impl Variant for RetransmitOnRequest {
    fn name(&self) -> &'static str {
        "test-request"
    }
    fn on_arrival(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, out: &mut Output) -> Arrival {
        if seg.len == 0 && seg.ack == conn.snd_una() + 1 && conn.snd_nxt() > conn.snd_una() + 1 {
            self.requests += 1;
            conn.expire_retransmit_timer(now, out);
            return Arrival::Taken;
        }
        Arrival::Deliver
    }
}

/// Establish a connection, send ten segments and stop before their ACKs arrive; returns the
/// pair and a pure ACK of `snd_una + 1` as the receiver would send it.
fn ten_in_flight(sender: Endpoint) -> (Pair, TcpHeader) {
    let mut p = Pair::new(sender, Endpoint::new(Connection::new(cfg())));
    p.open();
    p.run(SimTime::ZERO + SimDuration::from_millis(3));
    assert_eq!(p.ends[0].state(), crate::tcp::State::Established);
    p.ends[0].write(p.now, 10_000, &mut p.out);
    p.emit(0);
    assert_eq!(p.ends[0].snd_nxt() - p.ends[0].snd_una(), 10_000);
    let una = p.ends[0].snd_una();
    let request = TcpHeader { seq: 1, ack: una + 1, flags: flags::ACK, window: 1 << 20, ..TcpHeader::default() };
    (p, request)
}

#[test]
fn a_variant_takes_a_special_ack_and_forces_a_timeout() {
    let conn = Connection::new(TcpConfig { initial_cwnd: 10, ..cfg() });
    let (mut p, request) = ten_in_flight(Endpoint::with_variant(conn, Box::<RetransmitOnRequest>::default()));
    let una = p.ends[0].snd_una();
    let before = p.log.len();
    p.ends[0].on_segment(p.now, &request, &mut p.out);
    p.emit(0);
    // The request acknowledged nothing; the timer's expiry resent the first segment at once.
    assert_eq!(p.ends[0].snd_una(), una);
    assert_eq!(p.ends[0].stats.timeouts, 1);
    let resent: Vec<_> = p.log[before..].iter().map(|l| l.2).collect();
    assert_eq!(resent.len(), 1, "{resent:?}");
    assert!(resent[0].retransmit && resent[0].seq == una && resent[0].len == 1000);
    assert_eq!(p.ends[0].variant_name(), "test-request");
    // The transfer then completes.
    p.run(SimTime::ZERO + SimDuration::from_secs(5));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10_000);
}

#[test]
fn without_the_variant_the_same_ack_acknowledges_one_byte() {
    let conn = Connection::new(TcpConfig { initial_cwnd: 10, ..cfg() });
    let (mut p, request) = ten_in_flight(Endpoint::new(conn));
    let una = p.ends[0].snd_una();
    let before = p.log.len();
    p.ends[0].on_segment(p.now, &request, &mut p.out);
    p.emit(0);
    assert_eq!(p.ends[0].snd_una(), una + 1);
    assert_eq!(p.ends[0].stats.timeouts, 0);
    assert!(p.log[before..].iter().all(|l| !l.2.retransmit));
    assert_eq!(p.ends[0].variant_name(), "standard");
}

#[test]
fn expiring_the_retransmit_timer_with_nothing_outstanding_does_nothing() {
    let mut c = Connection::new(cfg());
    let mut out = Output::default();
    c.expire_retransmit_timer(SimTime::ZERO, &mut out);
    assert!(out.segments.is_empty() && out.events.is_empty());
    assert_eq!(c.stats.timeouts, 0);
}

/// An output stage that holds every segment and lets them go `hold` later, in order.
#[derive(Debug)]
struct HoldingStage {
    hold: SimDuration,
    held: std::collections::VecDeque<(SimTime, TcpHeader)>,
}

impl Variant for HoldingStage {
    fn name(&self) -> &'static str {
        "test-hold"
    }
    fn on_departure(&mut self, now: SimTime, _conn: &Connection, out: &mut Output, from: usize) {
        for seg in out.segments.drain(from..) {
            self.held.push_back((now + self.hold, seg));
        }
    }
    fn next_deadline(&self) -> Option<SimTime> {
        self.held.front().map(|h| h.0)
    }
    fn on_timer(&mut self, now: SimTime, _conn: &mut Connection, out: &mut Output) {
        while self.held.front().is_some_and(|h| h.0 <= now) {
            out.segments.push(self.held.pop_front().unwrap().1);
        }
    }
}

#[test]
fn an_output_stage_holds_segments_until_its_own_timer() {
    let hold = SimDuration::from_millis(5);
    let stage = HoldingStage { hold, held: Default::default() };
    let sender = Endpoint::with_variant(Connection::new(TcpConfig { initial_cwnd: 4, ..cfg() }), Box::new(stage));
    let mut p = Pair::new(sender, Endpoint::new(Connection::new(cfg())));
    p.open();
    // The SYN was held: nothing left at time 0, and the endpoint's deadline is the stage's.
    assert!(p.log.is_empty());
    assert_eq!(p.ends[0].next_deadline(), Some(SimTime::ZERO + hold));
    p.run(SimTime::ZERO + SimDuration::from_millis(20));
    let syn = p.log[0];
    assert_eq!((syn.0, syn.1), (SimTime::ZERO + hold, 0));
    assert!(syn.2.has(flags::SYN));
    // The handshake's ACK also waits 5 ms: established at 5 + 2·1 ms, ACK out at 12 ms.
    let first_ack = p.log.iter().find(|l| l.1 == 0 && !l.2.has(flags::SYN)).unwrap();
    assert_eq!(first_ack.0, SimTime::ZERO + SimDuration::from_millis(12));
    p.ends[0].write(p.now, 8_000, &mut p.out);
    p.ends[0].close(p.now, &mut p.out);
    assert!(p.out.segments.is_empty(), "the stage held the new data segments");
    p.run(SimTime::ZERO + SimDuration::from_secs(5));
    assert_eq!(p.ends[1].stats.bytes_delivered, 8_000);
    assert!(p.ends[1].peer_closed());
    // Every segment the sender put on the wire left a multiple of the hold after the sender
    // acted, i.e. never at the time an ACK arrived (odd milliseconds here).
    for (t, from, _) in &p.log {
        if *from == 0 {
            assert_eq!(t.0 % MS.as_ps(), 0);
        }
    }
}

#[test]
fn a_wake_is_scheduled_once_per_earlier_deadline_and_old_ones_are_stale() {
    let mut e = Endpoint::new(Connection::new(cfg()));
    assert_eq!(e.wake_to_schedule(SimTime::ZERO), None, "no timer, no wake-up");
    let mut out = Output::default();
    e.connect(SimTime::ZERO, &mut out);
    let rto = e.next_deadline().expect("the SYN's retransmission timer");
    let (t1, g1) = e.wake_to_schedule(SimTime::ZERO).unwrap();
    assert_eq!(t1, rto);
    assert_eq!(e.wake_to_schedule(SimTime::ZERO), None, "already covered");
    // A wake-up that pops before anything is due is early; the next scheduling supersedes it.
    assert_eq!(e.on_wake(SimTime::ZERO + MS, g1, &mut out), Wake::Early);
    let (t2, g2) = e.wake_to_schedule(SimTime::ZERO + MS).unwrap();
    assert_eq!(t2, rto);
    assert_ne!(g1, g2);
    assert_eq!(e.on_wake(rto, g1, &mut out), Wake::Stale);
    out.clear();
    assert_eq!(e.on_wake(rto, g2, &mut out), Wake::Fired);
    assert!(out.segments[0].has(flags::SYN), "the SYN resent");
    // A deadline already past is scheduled at `now`, not in the past.
    let late = rto + SimDuration::from_secs(100);
    let (t3, _) = e.wake_to_schedule(late).unwrap();
    assert_eq!(t3, late);
}

/// A test-only producer of the available-bandwidth input: a variant whose timer feeds the
/// controller a fixed estimate every `period` (ImTCP's measurement stage stands in its place
/// in the scenarios; this one measures nothing).
#[derive(Debug)]
struct FixedAvailability {
    rate: crate::units::BitRate,
    period: SimDuration,
    next: SimTime,
    fed: u32,
}

impl Variant for FixedAvailability {
    fn name(&self) -> &'static str {
        "test-fixed-availability"
    }
    fn next_deadline(&self) -> Option<SimTime> {
        Some(self.next)
    }
    fn on_timer(&mut self, now: SimTime, conn: &mut Connection, _out: &mut Output) {
        use crate::tcp::cc::{CcInput, InRange};
        conn.feed_controller(now, &CcInput::AvailableBandwidth { rate: self.rate, span: self.period, range: InRange::Within });
        self.fed += 1;
        self.next = now + self.period;
    }
}

#[test]
fn imtcp_bg_fed_every_rtt_holds_its_rate_to_the_estimate() {
    // RTT 20 ms, no bottleneck: NewReno's window would grow without end; ImTCP-bg fed 8 Mb/s
    // every RTT from 100 ms on keeps Ā·RTT_min = 20 segments, so from then on the transfer
    // runs at exactly 8 Mb/s (one window of 20,000 bytes per 20 ms).
    use crate::tcp::cc::{CcConfig, Controller, ImtcpBgConfig};
    let c = TcpConfig { cc: CcConfig::ImtcpBg(ImtcpBgConfig::default()), initial_cwnd: 2, ..cfg() };
    let period = SimDuration::from_millis(20);
    let feeder = FixedAvailability { rate: crate::units::BitRate(8_000_000), period, next: SimTime::ZERO + SimDuration::from_millis(100), fed: 0 };
    let mut p = Pair::new(Endpoint::with_variant(Connection::new(c), Box::new(feeder)), Endpoint::new(Connection::new(cfg())));
    p.delay = SimDuration::from_millis(10);
    p.open();
    p.run(SimTime::ZERO + SimDuration::from_millis(25));
    p.ends[0].write(p.now, 100_000_000, &mut p.out);
    p.emit(0);
    let at = |p: &mut Pair, ms: u64| {
        p.run(SimTime::ZERO + SimDuration::from_millis(ms));
        p.ends[1].stats.bytes_delivered
    };
    let (d1, d2) = (at(&mut p, 500), at(&mut p, 2_500));
    assert_eq!(d2 - d1, 2_000_000, "8 Mb/s for 2 s");
    assert_eq!(p.ends[0].cwnd(), 20_000);
    let Controller::ImtcpBg(b) = p.ends[0].controller() else { unreachable!() };
    assert_eq!((b.avail(), b.results()), (Some(8e6), 121), "fed at 100, 120, …, 2,500 ms");
}

/// An output stage that, every `period`, holds the data TCP produces for `hold` (everything
/// produced meanwhile waits behind it; nothing is reordered) and publishes its own RTT samples
/// (`CcInput::StageRtt`), as ImTCP's stage does when it spaces a stream.
#[derive(Debug)]
struct PeriodicHold {
    period: SimDuration,
    hold: SimDuration,
    next_hold: SimTime,
    until: SimTime,
    held: std::collections::VecDeque<TcpHeader>,
    releases: crate::tcp::ReleaseLog,
}

impl Variant for PeriodicHold {
    fn name(&self) -> &'static str {
        "test-periodic-hold"
    }
    fn on_arrival(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, _out: &mut Output) -> Arrival {
        if let Some(rtt) = self.releases.on_ack(now, seg.ack) {
            conn.feed_controller(now, &crate::tcp::cc::CcInput::StageRtt { rtt });
        }
        Arrival::Deliver
    }
    fn on_departure(&mut self, now: SimTime, _conn: &Connection, out: &mut Output, from: usize) {
        for seg in out.segments.drain(from..).collect::<Vec<_>>() {
            if seg.len > 0 && now >= self.next_hold {
                self.until = now + self.hold;
                self.next_hold = now + self.period;
            }
            if now < self.until {
                self.held.push_back(seg);
            } else {
                self.releases.on_release(now, &seg);
                out.segments.push(seg);
            }
        }
    }
    fn next_deadline(&self) -> Option<SimTime> {
        (!self.held.is_empty()).then_some(self.until)
    }
    fn on_timer(&mut self, now: SimTime, _conn: &mut Connection, out: &mut Output) {
        for seg in self.held.drain(..) {
            self.releases.on_release(now, &seg);
            out.segments.push(seg);
        }
    }
}

/// ImTCP-bg behind a stage holding 20 ms every 200 ms, RTT 20 ms, no bottleneck, for 2 s:
/// (cuts, RTT_min, largest RTT_cur judged).
fn imtcp_bg_behind_a_holding_stage(source: crate::tcp::cc::RttSource) -> (u64, SimDuration, SimDuration) {
    use crate::tcp::cc::{CcConfig, Controller, ImtcpBgConfig};
    let bg = ImtcpBgConfig { rtt_source: source, ..ImtcpBgConfig::default() };
    // The receiver's 64 KB window stops the flight at 64 segments (no loss, no bottleneck).
    let c = TcpConfig { cc: CcConfig::ImtcpBg(bg), initial_cwnd: 2, timestamps: true, ..cfg() };
    let small = TcpConfig { timestamps: true, rcvbuf: 64_000, ..cfg() };
    let stage = PeriodicHold {
        period: 200 * MS,
        hold: 20 * MS,
        next_hold: SimTime::ZERO + 300 * MS,
        until: SimTime::ZERO,
        held: Default::default(),
        releases: crate::tcp::ReleaseLog::new(),
    };
    let mut p = Pair::new(Endpoint::with_variant(Connection::new(c), Box::new(stage)), Endpoint::new(Connection::new(small)));
    p.delay = 10 * MS;
    p.open();
    p.run(SimTime::ZERO + 25 * MS);
    p.ends[0].write(p.now, 100_000_000, &mut p.out);
    p.emit(0);
    p.run(SimTime::ZERO + 2_000 * MS);
    assert!(p.ends[1].stats.bytes_delivered > 1_000_000, "the transfer ran");
    let Controller::ImtcpBg(b) = p.ends[0].controller() else { unreachable!() };
    (b.cuts(), b.min_rtt().expect("sampled"), b.max_rtt_cur().expect("judged"))
}

#[test]
fn imtcp_bg_rtt_source_tcp_counts_the_stage_hold_and_stage_does_not() {
    use crate::tcp::cc::RttSource;
    // "tcp": the connection stamps a segment when it produces it, so a held segment's sample
    // is the path's 20 ms plus up to the 20 ms hold: RTT_cur/RTT_min reaches about 2 > δ = 1.4
    // and B3 cuts, though no queue anywhere grew.
    let (cuts, min, max) = imtcp_bg_behind_a_holding_stage(RttSource::Tcp);
    assert!((20 * MS..=21 * MS).contains(&min), "{min:?}");
    assert!(max >= 35 * MS, "the hold is in the connection's samples: {max:?}");
    assert!(cuts >= 5, "B3 fires on the hold: {cuts} cuts");
    // "stage": timed from the stage's release, every sample is the path's RTT: B3 never fires.
    let (cuts, min, max) = imtcp_bg_behind_a_holding_stage(RttSource::Stage);
    assert!((20 * MS..=21 * MS).contains(&min), "{min:?}");
    assert!(max <= 21 * MS, "the hold is not in the stage's samples: {max:?}");
    assert_eq!(cuts, 0);
}
