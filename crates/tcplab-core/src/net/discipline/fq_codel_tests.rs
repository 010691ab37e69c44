use super::*;
use crate::net::packet::test_udp;

const MS: u64 = 1_000_000_000;

fn q(limit: QueueLimit) -> FqCodel {
    FqCodel::new(limit, &FqCodelParams::default(), 7)
}

#[test]
fn fq_codel_hashes_flows_apart_by_a_seeded_key() {
    let f = q(QueueLimit::Unlimited);
    let qs: Vec<usize> = (0..8).map(|k| f.queue_of(&test_udp(k, 0, 1500, 0))).collect();
    let mut d = qs.clone();
    d.sort();
    d.dedup();
    assert_eq!(d.len(), 8, "eight flows in eight queues with this key: {qs:?}");
    // Another key, another mapping; the same key, the same one.
    let g = FqCodel::new(QueueLimit::Unlimited, &FqCodelParams::default(), 8);
    assert_ne!(qs, (0..8).map(|k| g.queue_of(&test_udp(k, 0, 1500, 0))).collect::<Vec<_>>());
    assert_eq!(qs, (0..8).map(|k| q(QueueLimit::Unlimited).queue_of(&test_udp(k, 0, 1500, 0))).collect::<Vec<_>>());
}

#[test]
fn fq_codel_serves_a_sparse_flow_before_the_backlogged_ones() {
    let mut f = q(QueueLimit::Unlimited);
    for s in 0..50 {
        f.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
        f.enqueue(SimTime::ZERO, test_udp(1, 0, 1500, s)).unwrap();
    }
    let mut d = Vec::new();
    for k in 0..10 {
        f.dequeue(SimTime(k * MS / 10), &mut d).unwrap();
    }
    // Flow 2 sends one packet: it joins the new list and goes next, ahead of 90 waiting.
    f.enqueue(SimTime(MS), test_udp(2, 0, 200, 0)).unwrap();
    let p = f.dequeue(SimTime(MS), &mut d).unwrap();
    assert_eq!(p.flow.0, 2);
    // Its queue, now empty, passes through the old list once and then leaves the lists.
    let next = f.dequeue(SimTime(MS), &mut d).unwrap();
    assert_ne!(next.flow.0, 2);
    assert!(d.is_empty());
}

#[test]
fn fq_codel_shares_bytes_by_deficit_round_robin() {
    let mut f = q(QueueLimit::Unlimited);
    for s in 0..3000 {
        f.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
        f.enqueue(SimTime::ZERO, test_udp(1, 0, 300, s)).unwrap();
    }
    let (mut bytes, mut d) = ([0u64; 2], Vec::new());
    // Dequeue at time 0 (no sojourn, so no CoDel drops) until 1 MB has gone.
    while bytes.iter().sum::<u64>() < 1_000_000 {
        let p = f.dequeue(SimTime::ZERO, &mut d).unwrap();
        bytes[p.flow.0 as usize] += p.size as u64;
    }
    let gap = bytes[0].abs_diff(bytes[1]);
    assert!(gap <= 1500, "equal bytes within one quantum: {bytes:?}");
    assert_eq!(f.stats().dropped, 0);
}

#[test]
fn fq_codel_over_its_limit_drops_the_fattest_queues_head() {
    let mut f = q(QueueLimit::Packets(10));
    for s in 0..9 {
        f.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
    }
    f.enqueue(SimTime::ZERO, test_udp(1, 0, 1500, 0)).unwrap();
    // The 11th packet, flow 1's: flow 0's queue is the fattest and loses its head (seq 0).
    let d = f.enqueue(SimTime::ZERO, test_udp(1, 0, 1500, 1)).unwrap_err();
    assert_eq!((d.pkt.flow.0, d.reason, d.phase), (0, DropReason::Full, super::super::DropPhase::AfterDequeue));
    assert!(matches!(d.pkt.body, crate::net::packet::Body::Udp { seq: 0, .. }));
    assert_eq!((f.len_packets(), f.len_bytes()), (10, 15_000));
    assert_eq!(f.queue_len(f.queue_of(&test_udp(1, 0, 1500, 0))), 2);
}

#[test]
fn fq_codel_runs_codel_per_queue_so_a_thin_flow_keeps_its_packets() {
    // Flow 0: a standing queue of hundreds of packets; flow 1: one packet every 4 ms, which
    // its own queue sends within one round. The line takes one 1500-byte packet per ms.
    let mut f = q(QueueLimit::Unlimited);
    for s in 0..2000 {
        f.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
    }
    let mut d = Vec::new();
    let mut thin = 0;
    for k in 0..1000u64 {
        if k % 4 == 0 {
            f.enqueue(SimTime(k * MS), test_udp(1, 0, 1500, k)).unwrap();
        }
        if let Some(p) = f.dequeue(SimTime(k * MS + MS / 2), &mut d) {
            thin += (p.flow.0 == 1) as u64;
        }
    }
    assert!(d.len() >= 10, "the bulk queue is controlled: {} drops", d.len());
    assert!(d.iter().all(|x| x.pkt.flow.0 == 0 && x.phase == super::super::DropPhase::AfterDequeue));
    assert_eq!(thin, 250, "every thin-flow packet delivered");
    assert_eq!(f.stats().dropped_after_dequeue, d.len() as u64);
    let s = f.stats();
    assert_eq!(s.enqueued, s.departed + s.dropped + f.len_packets());
}

#[test]
fn fq_codel_checks_its_parameters() {
    assert!(check_params(&FqCodelParams::default()).is_ok());
    assert_eq!(check_params(&FqCodelParams { flows: 0, ..FqCodelParams::default() }).unwrap_err().key, "flows");
    assert_eq!(check_params(&FqCodelParams { quantum: 10, ..FqCodelParams::default() }).unwrap_err().key, "quantum");
}
