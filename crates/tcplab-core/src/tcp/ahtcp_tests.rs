//! AHTCP on a pair of endpoints over a wire that drops chosen segments: held ACKs, the
//! released final ACK, a request answered from the ceiling and from the printed floor form,
//! and the cases where no request is possible.

use super::*;
use crate::tcp::{Endpoint, TcpConfig, Wake};
use crate::units::SimDuration;

const MSS: u64 = 1460;

fn cfg() -> TcpConfig {
    // Slow start by ACKs, not bytes (ns-2's agents): with byte counting, the first held ACK
    // after a timeout (460 bytes) leaves a one-segment window 1000 bytes short of a segment.
    let mut c = TcpConfig { mss: MSS as u32, sack: false, delack_segments: 1, initial_cwnd: 10, ..TcpConfig::default() };
    c.cc = crate::tcp::cc::CcConfig::NewReno(crate::tcp::cc::RenoConfig { abc_limit: 0, max_ssthresh: 0, exact_increase: false });
    c
}

/// A server (end 0, the data sender, which here also opens) and a client (end 1) joined by a
/// 50 µs wire that drops the server's data segments listed in `drop` (by first byte, once each).
struct Pair {
    now: SimTime,
    ends: [Endpoint; 2],
    wire: Vec<(SimTime, u64, usize, TcpHeader)>,
    order: u64,
    /// (time, from end, segment) of everything sent.
    log: Vec<(SimTime, usize, TcpHeader)>,
    drop: Vec<u64>,
    out: Output,
}

impl Pair {
    fn new(restart: Restart) -> Self {
        Self::with(AhtcpConfig { restart, ..AhtcpConfig::default() })
    }

    fn with(a: AhtcpConfig) -> Self {
        let server = Endpoint::with_variant(Connection::new(cfg()), Box::new(AhtcpSender::new(&a)));
        let client = Endpoint::with_variant(Connection::new(cfg()), Box::new(AhtcpReceiver::new(&a)));
        Pair { now: SimTime::ZERO, ends: [server, client], wire: vec![], order: 0, log: vec![], drop: vec![], out: Output::default() }
    }

    fn emit(&mut self, from: usize) {
        for seg in std::mem::take(&mut self.out.segments) {
            self.log.push((self.now, from, seg));
            if let Some(i) = self.drop.iter().position(|&d| from == 0 && seg.len > 0 && d == seg.seq) {
                self.drop.remove(i);
                continue;
            }
            self.order += 1;
            self.wire.push((self.now + SimDuration::from_micros(50), self.order, 1 - from, seg));
        }
        self.out.clear();
    }

    /// Open the connection, send the client's 48-byte request and write `bytes` at the server.
    fn start(&mut self, bytes: u64) {
        self.ends[1].listen();
        self.ends[0].connect(self.now, &mut self.out);
        self.emit(0);
        self.run(self.now + SimDuration::from_micros(200));
        // The client's request, then the server's answer.
        self.ends[1].write(self.now, 48, &mut self.out);
        self.emit(1);
        self.ends[0].write(self.now, bytes, &mut self.out);
        self.emit(0);
    }

    /// Another request from the client and the server's write of `bytes` in answer.
    fn write(&mut self, bytes: u64) {
        self.ends[1].write(self.now, 48, &mut self.out);
        self.emit(1);
        self.ends[0].write(self.now, bytes, &mut self.out);
        self.emit(0);
    }

    fn run(&mut self, until: SimTime) {
        loop {
            let pkt = self.wire.iter().map(|w| (w.0, w.1)).min();
            let mut next = pkt.map(|p| p.0);
            for w in [self.ends[0].next_deadline(), self.ends[1].next_deadline()].into_iter().flatten() {
                next = Some(next.map_or(w, |n: SimTime| n.min(w)));
            }
            let Some(t) = next.filter(|&t| t <= until) else {
                self.now = self.now.max(until);
                return;
            };
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
                    let (_, g) = self.ends[e].wake_to_schedule(t).unwrap();
                    assert_eq!(self.ends[e].on_wake(t, g, &mut self.out), Wake::Fired);
                    self.emit(e);
                }
            }
        }
    }

    /// The client's monitor asks for a retransmission now.
    fn request(&mut self) -> bool {
        let did = self.ends[1].signal(self.now, &mut self.out);
        self.emit(1);
        did
    }

    fn acks_from_client(&self) -> Vec<u64> {
        self.log.iter().filter(|l| l.1 == 1).map(|l| l.2.ack).collect()
    }

    fn data_from_server_after(&self, t: SimTime) -> Vec<(u64, u32)> {
        self.log.iter().filter(|l| l.1 == 0 && l.0 >= t && l.2.len > 0).map(|l| (l.2.seq, l.2.len)).collect()
    }
}

/// Segment `i` of the write starts at 1 + i·MSS (the SYN takes sequence number 0).
fn seg(i: u64) -> u64 {
    1 + i * MSS
}

#[test]
fn acks_hold_back_1000_bytes_until_the_write_is_complete_then_acknowledge_it_all() {
    let mut p = Pair::new(Restart::Ceiling);
    p.start(10 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(500));
    let acks = p.acks_from_client();
    // The SYN-ACK and the request carry the first data byte (1), then one ACK per segment, each
    // 1000 short, the last one complete.
    let want: Vec<u64> = [1, 1].into_iter().chain((1..10).map(|i| seg(i) - 1000)).chain(std::iter::once(seg(10))).collect();
    assert_eq!(acks, want);
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS);
    assert_eq!(p.ends[0].stats.timeouts, 0, "the full final ACK stops the server's timer");
    assert_eq!(p.ends[0].stats.retransmits, 0);
    assert_eq!(p.ends[0].snd_una(), seg(10));
}

#[test]
fn a_request_makes_the_server_resend_from_the_first_missing_byte_long_before_its_rto() {
    let mut p = Pair::new(Restart::Ceiling);
    p.drop = vec![seg(8), seg(9)];
    p.start(10 * MSS);
    let t = SimTime::ZERO + SimDuration::from_millis(5);
    p.run(t);
    assert_eq!(p.ends[1].rcv_nxt(), seg(8), "the tail is lost");
    assert_eq!(p.ends[0].stats.timeouts, 0, "the 200 ms RTO has not run out");
    assert!(p.request());
    assert_eq!(*p.acks_from_client().last().unwrap(), seg(8) - 1000 + 1, "the request is the held ACK plus one");
    p.run(t + SimDuration::from_millis(2));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS, "recovered at once, not after 200 ms");
    assert_eq!(p.data_from_server_after(t), vec![(seg(8), MSS as u32), (seg(9), MSS as u32)], "restart at the first missing byte, whole segments");
    assert_eq!(p.ends[0].stats.timeouts, 1, "the forced timeout is a timeout");
    assert_eq!(p.ends[1].variant_actions(), 1);
    assert_eq!(p.ends[0].variant_actions(), 1);
    assert_eq!(p.ends[0].snd_una(), seg(10), "and the last ACK releases the hold");
}

#[test]
fn the_printed_floor_form_resends_a_segment_the_client_already_has() {
    let mut p = Pair::new(Restart::Floor);
    p.drop = vec![seg(8), seg(9)];
    p.start(10 * MSS);
    let t = SimTime::ZERO + SimDuration::from_millis(5);
    p.run(t);
    assert!(p.request());
    p.run(t + SimDuration::from_millis(2));
    let resent = p.data_from_server_after(t);
    assert_eq!(resent[0], (seg(7), MSS as u32), "eq. (1) points at segment 7, which arrived");
    assert!(seg(7) + MSS <= p.log.iter().filter(|l| l.1 == 1 && l.0 < t).map(|l| l.2.ack + 1000).max().unwrap(), "the client had segment 7 before the request");
    assert_eq!(&resent[1..], &[(seg(8), MSS as u32), (seg(9), MSS as u32)]);
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS);
    assert_eq!(p.ends[0].stats.retransmits, 3, "one segment more than the ceiling form");
}

#[test]
fn requests_climb_one_byte_each_and_stop_when_the_hold_is_spent() {
    let mut p = Pair::with(AhtcpConfig { align: Align::Restart, ..AhtcpConfig::default() });
    // Segment 2 of 3 lost and the server's answer dropped each time: the client keeps asking.
    p.drop = vec![seg(1); 30];
    p.start(3 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    let held = seg(1) - 1000;
    for k in 1..=20 {
        assert!(p.request());
        assert_eq!(*p.acks_from_client().last().unwrap(), held + k);
        p.run(p.now + SimDuration::from_millis(1));
    }
    assert_eq!(p.ends[0].stats.timeouts, 20, "every request found the server and forced a timeout");
    assert_eq!(p.ends[0].snd_una(), held + 20, "read literally, SND.UNA follows the client's number");
    // Read past the hold, SND.UNA is the boundary the client has reached; requests still count.
    let mut p = Pair::new(Restart::Ceiling);
    p.drop = vec![seg(1); 30];
    p.start(3 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    for k in 1..=5 {
        assert!(p.request());
        assert_eq!(*p.acks_from_client().last().unwrap(), held + k);
        p.run(p.now + SimDuration::from_millis(1));
    }
    assert_eq!((p.ends[0].stats.timeouts, p.ends[0].snd_una()), (5, seg(1)));
}

#[test]
fn read_past_the_hold_a_fast_retransmit_resends_the_lost_segment_whole() {
    // Segment 5 of 20 lost: three duplicate ACKs at the held number.
    let resent = |align: Align| {
        let mut p = Pair::with(AhtcpConfig { align, ..AhtcpConfig::default() });
        p.drop = vec![seg(5)];
        p.start(20 * MSS);
        p.run(SimTime::ZERO + SimDuration::from_millis(50));
        assert_eq!(p.ends[1].stats.bytes_delivered, 20 * MSS);
        assert_eq!(p.ends[0].stats.timeouts, 0);
        p.log.iter().filter(|l| l.1 == 0 && l.2.retransmit).map(|l| (l.2.seq, l.2.len)).collect::<Vec<_>>()
    };
    assert_eq!(resent(Align::All), vec![(seg(5), MSS as u32)], "the lost segment, whole");
    let literal = resent(Align::Restart);
    assert_eq!(literal[0], (seg(5) - 1000, MSS as u32), "read literally: from the held number, 1000 bytes the client has first");
}

#[test]
fn the_floor_form_asks_even_when_nothing_has_arrived_and_the_server_rewinds_to_the_start() {
    let mut p = Pair::with(AhtcpConfig { restart: Restart::Floor, ask_empty: true, ..AhtcpConfig::default() });
    p.drop = (0..10).map(seg).collect();
    p.start(10 * MSS);
    let t = SimTime::ZERO + SimDuration::from_millis(5);
    p.run(t);
    assert!(p.request(), "the number runs one byte past what arrived");
    assert_eq!(*p.acks_from_client().last().unwrap(), seg(0) + 1);
    p.run(t + SimDuration::from_millis(5));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS, "recovered at once, not after the 200 ms timer");
    assert_eq!(p.data_from_server_after(t)[0], (seg(0), MSS as u32), "from the start of segment 0");
    assert_eq!(p.ends[0].snd_una(), seg(10));
}

#[test]
fn no_request_is_possible_when_nothing_of_the_write_has_arrived() {
    let mut p = Pair::new(Restart::Ceiling);
    p.drop = (0..10).map(seg).collect();
    p.start(10 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    assert_eq!(p.ends[1].rcv_nxt(), seg(0));
    assert!(!p.request(), "nothing is held, so there is nothing to ask with");
    p.run(SimTime::ZERO + SimDuration::from_millis(400));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS, "the retransmission timer recovers it");
    assert_eq!(p.ends[0].stats.timeouts, 1);
}

#[test]
fn a_request_needs_exactly_one_byte_above_snd_una_and_data_outstanding() {
    let mut p = Pair::new(Restart::Ceiling);
    p.start(3 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    let c = p.ends[0].conn();
    let una = c.snd_una();
    let ack = |a: u64| TcpHeader { ack: a, flags: flags::ACK, ..TcpHeader::default() };
    assert!(!AhtcpSender::is_request(&ack(una + 1), una, c), "nothing outstanding: the write is complete");
    let mut p = Pair::new(Restart::Ceiling);
    p.drop = vec![seg(2)];
    p.start(3 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    let c = p.ends[0].conn();
    let una = c.snd_una();
    assert!(AhtcpSender::is_request(&ack(una + 1), una, c));
    assert!(!AhtcpSender::is_request(&ack(una + 2), una, c));
    assert!(!AhtcpSender::is_request(&TcpHeader { flags: flags::ACK | flags::FIN, ..ack(una + 1) }, una, c), "a FIN's ACK is not a request");
    assert!(!AhtcpSender::is_request(&TcpHeader { len: 10, ..ack(una + 1) }, una, c), "nor a segment with data");
}

#[test]
fn a_duplicate_ack_at_the_first_byte_acknowledges_nothing() {
    // Segment 0 lost: the client's duplicate ACKs carry the first data byte, which no held
    // number may be read past.
    let mut p = Pair::new(Restart::Ceiling);
    p.drop = vec![seg(0)];
    p.start(10 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(5));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10 * MSS, "read as acknowledging segment 0, they would strand it");
    assert_eq!(p.data_from_server_after(SimTime::ZERO + SimDuration::from_micros(300))[0], (seg(0), MSS as u32), "the fast retransmit resends it");
    assert_eq!((p.ends[0].stats.timeouts, p.ends[0].snd_una()), (0, seg(10)));
}

#[test]
fn under_the_ns2_reset_rule_requests_never_pile_up_backoff() {
    // Five requests to a server whose answers are lost: each forces a timeout. With ns-2's
    // rule the one-byte request is progress and forgets the backoff, so the timer stays at one
    // doubling; with RFC 6298's rule (reset on an RTT sample only) it doubles five times.
    let backoff_after = |reset: crate::tcp::BackoffReset| {
        let mut p = Pair::new(Restart::Ceiling);
        let mut c = cfg();
        c.rto.backoff_reset = reset;
        let a = AhtcpConfig::default();
        p.ends = [Endpoint::with_variant(Connection::new(c.clone()), Box::new(AhtcpSender::new(&a))), Endpoint::with_variant(Connection::new(c), Box::new(AhtcpReceiver::new(&a)))];
        p.drop = vec![seg(1); 30];
        p.start(3 * MSS);
        p.run(SimTime::ZERO + SimDuration::from_millis(5));
        let base = p.ends[0].rto();
        for _ in 0..5 {
            assert!(p.request());
            p.run(p.now + SimDuration::from_millis(1));
        }
        assert_eq!(p.ends[0].stats.timeouts, 5);
        p.ends[0].rto().as_ps() / base.as_ps()
    };
    assert_eq!(backoff_after(crate::tcp::BackoffReset::NewAck), 2);
    assert_eq!(backoff_after(crate::tcp::BackoffReset::RttSample), 32);
}

#[test]
fn a_held_ack_keeps_its_sack_blocks_where_they_were() {
    let mut h = TcpHeader { ack: 10_000, flags: flags::ACK, ..TcpHeader::default() };
    h.set_sack_blocks(&[(12_000, 13_000), (15_000, 16_000)]);
    h.set_ack_keeping_sack(9_000);
    assert_eq!(h.sack_blocks().collect::<Vec<_>>(), vec![(12_000, 13_000), (15_000, 16_000)]);
    h.set_ack_keeping_sack(12_500);
    assert_eq!(h.sack_blocks().collect::<Vec<_>>(), vec![(12_500, 13_000), (15_000, 16_000)], "clipped");
    h.set_ack_keeping_sack(14_000);
    assert_eq!(h.sack_blocks().collect::<Vec<_>>(), vec![(15_000, 16_000)], "dropped");
}

#[test]
fn with_sack_a_lost_segment_is_repaired_and_the_held_acks_keep_their_blocks() {
    let mut p = Pair::new(Restart::Floor);
    for e in 0..2 {
        let mut c = cfg();
        c.sack = true;
        let a = AhtcpConfig { restart: Restart::Floor, ..AhtcpConfig::default() };
        p.ends[e] = if e == 0 {
            Endpoint::with_variant(Connection::new(c), Box::new(AhtcpSender::new(&a)))
        } else {
            Endpoint::with_variant(Connection::new(c), Box::new(AhtcpReceiver::new(&a)))
        };
    }
    p.drop = vec![seg(3)];
    p.start(20 * MSS);
    p.run(SimTime::ZERO + SimDuration::from_millis(50));
    assert_eq!(p.ends[1].stats.bytes_delivered, 20 * MSS);
    let sacked: Vec<(u64, u64)> = p.log.iter().filter(|l| l.1 == 1).flat_map(|l| l.2.sack_blocks().collect::<Vec<_>>()).collect();
    assert!(!sacked.is_empty() && sacked.iter().all(|&(a, _)| a == seg(4)), "every block starts after the hole: {sacked:?}");
    let resent: Vec<(u64, u32)> = p.log.iter().filter(|l| l.1 == 0 && l.2.retransmit).map(|l| (l.2.seq, l.2.len)).collect();
    assert_eq!(resent[0], (seg(3), MSS as u32), "the lost segment first, whole");
    // RFC 6675's rescue retransmission may add the last segment; nothing else is resent.
    assert!(resent.len() <= 2 && resent[1..].iter().all(|&r| r == (seg(19), MSS as u32)), "{resent:?}");
    assert_eq!(p.ends[0].stats.timeouts, 0);
}

#[test]
fn asking_with_nothing_held_is_its_own_switch() {
    // The whole write lost once: with ask_empty the client asks at once (its number one byte
    // past what arrived) and the eq. (1) restarts rewind to segment 0; without it the floor
    // form cannot ask either and the timer recovers.
    let run = |restart: Restart, ask_empty: bool| {
        let mut p = Pair::with(AhtcpConfig { restart, ask_empty, ..AhtcpConfig::default() });
        p.drop = (0..10).map(seg).collect();
        p.start(10 * MSS);
        let t = SimTime::ZERO + SimDuration::from_millis(5);
        p.run(t);
        let asked = p.request();
        p.run(t + SimDuration::from_millis(5));
        let done = p.ends[1].stats.bytes_delivered == 10 * MSS;
        let first = p.data_from_server_after(t).first().copied();
        (asked, done, first)
    };
    assert_eq!(run(Restart::Floor, true), (true, true, Some((seg(0), MSS as u32))), "asked, restarted at segment 0, recovered at once");
    assert_eq!(run(Restart::Literal, true), (true, true, Some((seg(0), MSS as u32))));
    let (asked, done, _) = run(Restart::Floor, false);
    assert!(!asked && !done, "without ask_empty nothing is held, so there is nothing to ask with");
}

#[test]
fn the_literal_equation_restarts_at_floor_of_snd_una_over_mss_times_mss_plus_one() {
    // The first write is 2.5 segments, so the second write's boundaries sit half a segment off
    // the multiples of the MSS: eq. (1) as printed then points inside a segment.
    let mut p = Pair::with(AhtcpConfig { restart: Restart::Literal, ..AhtcpConfig::default() });
    p.start(5 * MSS / 2);
    let t = SimTime::ZERO + SimDuration::from_millis(5);
    p.run(t);
    assert_eq!(p.ends[1].stats.bytes_delivered, 5 * MSS / 2);
    let base = 1 + 5 * MSS / 2; // the second write's first byte
                                // The last two segments lost: no duplicate ACKs, a stall until the client asks.
    p.drop = vec![base + 8 * MSS, base + 9 * MSS];
    p.write(10 * MSS);
    p.run(t + SimDuration::from_millis(5));
    assert!(p.request(), "the client holds back part of what arrived and asks");
    let ack = *p.acks_from_client().last().unwrap();
    let literal = ack / MSS * MSS + 1;
    p.run(t + SimDuration::from_millis(6));
    let resent = p.data_from_server_after(t + SimDuration::from_millis(5));
    assert_eq!(resent[0].0, literal, "from floor(snd_una / MSS) * MSS + 1 = {literal} (the request's number {ack})");
    assert!((literal - 1).is_multiple_of(MSS) && !(literal - base).is_multiple_of(MSS), "a multiple of the MSS, not a segment boundary of this write");
    p.run(t + SimDuration::from_millis(20));
    assert_eq!(p.ends[1].stats.bytes_delivered, 5 * MSS / 2 + 10 * MSS, "every byte arrives");
}
