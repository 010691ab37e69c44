use super::*;
use crate::net::packet::{test_udp, Body, Ecn, TcpHeader};

const MS: u64 = 1_000_000_000;

fn at_ms(ms: f64) -> SimTime {
    SimTime((ms * MS as f64).round() as u64)
}

fn rule(ecn: bool) -> CodelRule {
    CodelRule::from(&CodelParams { ecn, ..CodelParams::default() })
}

fn ect(flow: u32, seq: u64) -> Packet {
    let mut p = test_udp(flow, 0, 1500, seq);
    p.body = Body::Tcp(TcpHeader { seq, ecn: Ecn::Ect0, ..TcpHeader::default() });
    p
}

/// `n` packets queued at time 0, then one dequeue per millisecond (a 12 Mb/s line): the
/// times (ms) of every drop (or mark) and the packets delivered.
fn drain(q: &mut Codel, n: u64, until_ms: u64) -> (Vec<u64>, u64) {
    for s in 0..n {
        q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
    }
    let (mut drops, mut out) = (Vec::new(), 0);
    for k in 0..=until_ms {
        let mut d = Vec::new();
        let before = q.stats().dropped + q.stats().marked;
        if q.dequeue(at_ms(k as f64), &mut d).is_some() {
            out += 1;
        }
        for _ in before..q.stats().dropped + q.stats().marked {
            drops.push(k);
        }
    }
    (drops, out)
}

#[test]
fn codel_drops_first_after_an_interval_above_target_then_by_the_control_law() {
    let mut q = Codel::new(QueueLimit::Unlimited, rule(false));
    let (drops, _) = drain(&mut q, 2000, 600);
    // Sojourn k ms at the k-th dequeue: at or above target (5 ms) from k = 5, so the first
    // drop is due at 5 + 100 ms; then drop_next advances by 100/√count from its last value.
    let mut expect = vec![105u64];
    let mut next = 105.0f64;
    let mut count = 1u32;
    while expect.len() < 8 {
        next += 100.0 / (count as f64).sqrt();
        expect.push(next.ceil() as u64);
        count += 1;
    }
    assert_eq!(&drops[..8], &expect[..], "drop times (ms) follow interval/sqrt(count)");
    assert_eq!(&expect[..4], &[105, 205, 276, 334]);
    assert!(q.state().dropping() && q.state().count() as usize >= 8);
    let s = q.stats();
    assert_eq!(s.dropped, s.dropped_after_dequeue);
    assert_eq!(s.enqueued, s.departed + s.dropped + q.len_packets());
}

#[test]
fn codel_below_target_or_a_single_mtu_never_drops() {
    // Sojourn under 5 ms: two packets queued every millisecond and two dequeued, forever.
    let mut q = Codel::new(QueueLimit::Unlimited, rule(false));
    let mut seq = 0;
    for k in 0..2000u64 {
        for _ in 0..2 {
            q.enqueue(at_ms(k as f64), test_udp(0, 0, 1500, seq)).unwrap();
            seq += 1;
        }
        let mut d = Vec::new();
        q.dequeue(at_ms(k as f64 + 0.5), &mut d);
        q.dequeue(at_ms(k as f64 + 0.9), &mut d);
    }
    assert_eq!(q.stats().dropped, 0);
    // A sojourn of seconds, but one packet waiting at a time: never over MAXPACKET.
    let mut q = Codel::new(QueueLimit::Unlimited, rule(false));
    for k in 0..50u64 {
        q.enqueue(at_ms(k as f64 * 1000.0), test_udp(0, 0, 1500, k)).unwrap();
        q.enqueue(at_ms(k as f64 * 1000.0), test_udp(0, 0, 1500, k)).unwrap();
        let mut d = Vec::new();
        assert!(q.dequeue(at_ms(k as f64 * 1000.0 + 900.0), &mut d).is_some());
        assert!(q.dequeue(at_ms(k as f64 * 1000.0 + 950.0), &mut d).is_some());
    }
    assert_eq!(q.stats().dropped, 0);
}

#[test]
fn codel_leaves_dropping_below_target_and_resumes_its_rate_when_reentering_soon() {
    let mut q = Codel::new(QueueLimit::Unlimited, rule(false));
    let (drops, _) = drain(&mut q, 500, 700);
    assert!(!drops.is_empty());
    // The 500 packets are gone by ~500 ms: the empty queue leaves the dropping state.
    let mut d = Vec::new();
    assert!(q.dequeue(at_ms(701.0), &mut d).is_none());
    assert!(!q.state().dropping());
    let count_before = q.state().count();
    assert!(count_before > 2, "{count_before}");
    // A new standing queue 300 ms later (within 16 intervals of the last drop_next): the
    // dropping state starts from count - lastcount, not 1.
    let t0 = 1000.0;
    for s in 0..2000 {
        q.enqueue(at_ms(t0), test_udp(0, 0, 1500, s)).unwrap();
    }
    let mut first = None;
    for k in 0..300u64 {
        let mut d = Vec::new();
        q.dequeue(at_ms(t0 + k as f64), &mut d);
        if !d.is_empty() {
            first = Some(k);
            break;
        }
    }
    assert_eq!(first, Some(105), "the interval rule again from the new queue's start");
    assert_eq!(q.state().count(), count_before - 1, "count = count - lastcount (lastcount was 1)");
}

#[test]
fn codel_with_ecn_marks_capable_packets_and_delivers_them() {
    let mut q = Codel::new(QueueLimit::Unlimited, rule(true));
    for s in 0..1000 {
        q.enqueue(SimTime::ZERO, ect(0, s)).unwrap();
    }
    let mut ce = 0;
    for k in 0..=400u64 {
        let mut d = Vec::new();
        let p = q.dequeue(at_ms(k as f64), &mut d).expect("a packet every ms");
        assert!(d.is_empty(), "nothing dropped");
        if let Body::Tcp(h) = p.body {
            ce += (h.ecn == Ecn::Ce) as u64;
        }
    }
    assert_eq!(q.stats().dropped, 0);
    assert_eq!(ce, q.stats().marked);
    // Marks at the same times drops would have been made: 105, 205, 276, 334, 384 ms.
    assert_eq!(ce, 5);
}

#[test]
fn codel_tail_drops_at_its_limit_and_checks_its_rule() {
    let mut q = Codel::new(QueueLimit::Packets(3), rule(false));
    for s in 0..3 {
        q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, s)).unwrap();
    }
    let d = q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, 3)).unwrap_err();
    assert_eq!(d.reason, DropReason::Full);
    assert!(check_rule(SimDuration::from_millis(5), SimDuration::from_millis(100), 1500).is_ok());
    assert_eq!(check_rule(SimDuration::from_millis(100), SimDuration::from_millis(100), 1500).unwrap_err().key, "target");
    assert_eq!(check_rule(SimDuration::ZERO, SimDuration::ZERO, 1500).unwrap_err().key, "interval");
}
