use super::*;
use crate::net::discipline::{DropTail, EcnMarking};
use crate::net::egress::Egress;
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
    let mut p = Pipe::new("p".into(), Some(rate), SimDuration::ZERO, 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Unlimited, None)));
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
    let mut p = Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(10), None)))
        .with_link_layer(LinkLayer::Framing(2));
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
    let mut p = Pipe::new("p".into(), Some(BitRate(149_760_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(10), None)))
        .with_link_layer(LinkLayer::AAL5_LLC);
    let mut w = PipeWake::default();
    p.offer(SimTime::ZERO, pkt(1500), &mut w);
    let cell_ps = 424.0 * 1e12 / 149.76e6;
    let got = w.arrival.expect("an arrival").0 as f64;
    assert!((got - 32.0 * cell_ps).abs() <= 1.0, "{got} ps for 32 cells of {cell_ps} ps");
    // A 40-byte ACK needs 2 cells (56 bytes with LLC/SNAP and the trailer).
    let mut q = Pipe::new("q".into(), Some(BitRate(149_760_000)), SimDuration::ZERO, 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(10), None)))
        .with_link_layer(LinkLayer::AAL5_LLC);
    let mut w = PipeWake::default();
    q.offer(SimTime::ZERO, pkt(40), &mut w);
    assert!((w.arrival.expect("an arrival").0 as f64 - 2.0 * cell_ps).abs() <= 1.0);
}

#[test]
fn delay_and_fifo_arrivals() {
    let mut p = Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_millis(1), 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(1), None)));
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
    let mk = || Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(3), 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(4), None)));
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
        assert_eq!(lazy.egress().queue_stats(now).departed, event.egress().queue_stats(now).departed, "stop at {stop}");
        assert_eq!(lazy.egress().waiting_packets(now), event.egress().waiting_packets(now), "stop at {stop}");
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
        let mk = || Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(7), 0.0, Rng::from_seed(0), Box::new(DropTail::new(limit, None)));
        let lazy = mk();
        assert!(matches!(lazy.egress(), Egress::Fifo(_)));
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
        let mk =
            || Pipe::new("p".into(), Some(BitRate(1_000_000_000)), SimDuration::from_micros(7), 0.0, Rng::from_seed(0), Box::new(DropTail::new(QueueLimit::Packets(20), marking)));
        let lazy = mk();
        assert!(matches!(lazy.egress(), Egress::Fifo(f) if f.marking.is_some()));
        let mut event = mk();
        event.set_event_driven();
        let (a, da, pa) = drive_until(lazy, &offers, u64::MAX);
        let (b, db, pb) = drive_until(event, &offers, u64::MAX);
        assert_eq!((&a, &da), (&b, &db), "{threshold:?}: same deliveries, marks and drops");
        let marked = a.iter().filter(|d| d.2).count() as u64;
        assert!(marked > 0 && marked == pa.egress().queue_stats(SimTime::MAX).marked && marked == pb.egress().queue_stats(SimTime::MAX).marked, "{threshold:?}: {marked} marked");
        assert!(a.iter().all(|&(_, seq, ce)| !ce || seq % 4 != 0), "only ECN-capable packets are marked");
        let unmarkable = pa.egress().queue_stats(SimTime::MAX).unmarkable_dropped;
        assert_eq!(unmarkable, pb.egress().queue_stats(SimTime::MAX).unmarkable_dropped);
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
        Box::new(DropTail::new(QueueLimit::Packets(20), Some(EcnMarking { threshold: QueueLimit::Packets(20), drop_unmarkable: true }))),
    );
    let (out, _, p) = drive_until(p, &offers, u64::MAX);
    assert!(out.iter().all(|d| !d.2) && p.egress().queue_stats(SimTime::MAX).marked == 0 && p.egress().queue_stats(SimTime::MAX).unmarkable_dropped == 0);
}

#[test]
fn jitter_delays_within_bounds_and_keeps_order() {
    let j = SimDuration::from_micros(10);
    let mut p = Pipe::new("h".into(), None, SimDuration::ZERO, 0.0, Rng::from_seed(5), Box::new(DropTail::new(QueueLimit::Unlimited, None))).with_jitter(j);
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
    let mut p = Pipe::new("e".into(), None, SimDuration::ZERO, 0.1, Rng::from_seed(3), Box::new(DropTail::new(QueueLimit::Unlimited, None)));
    let mut w = PipeWake::default();
    let drops = (0..100_000).filter(|_| p.offer(SimTime::ZERO, pkt(100), &mut w) == Offer::RandomDrop).count();
    assert!((9_000..11_000).contains(&drops), "{drops}");
}
