use super::*;
use crate::net::packet::{test_udp, Body, Ecn, TcpHeader};

const MS: u64 = 1_000_000_000;

fn red(p: RedParams, limit: QueueLimit) -> Red {
    Red::new(limit, &p, Some(BitRate(8_000_000)), Rng::from_seed(11))
}

fn ect(seq: u64) -> Packet {
    let mut p = test_udp(0, 0, 1500, seq);
    p.body = Body::Tcp(TcpHeader { seq, ecn: Ecn::Ect0, ..TcpHeader::default() });
    p
}

#[test]
fn red_average_follows_the_ewma_and_decays_over_idle_time() {
    let p = RedParams { min_th: 1000.0, max_th: 2000.0, ..RedParams::default() };
    let mut q = red(p, QueueLimit::Unlimited);
    // 100 arrivals, each finding k packets: avg_k = (1-w)·avg_{k-1} + w·k.
    let mut want = 0.0f64;
    for k in 0..100u64 {
        q.enqueue(SimTime(k), test_udp(0, 0, 1500, k)).unwrap();
        want = want * (1.0 - p.w_q) + p.w_q * k as f64;
        assert!((q.avg() - want).abs() < 1e-12, "arrival {k}: {} vs {want}", q.avg());
    }
    let mut d = Vec::new();
    while q.dequeue(SimTime(MS), &mut d).is_some() {}
    // Idle for 100 ms: a 500-byte packet takes 0.5 ms at 8 Mb/s, so m = 200 and the next
    // arrival finds avg·(1-w)^201 (plus w·0).
    let before = q.avg();
    q.enqueue(SimTime(101 * MS), test_udp(0, 0, 1500, 0)).unwrap();
    let decayed = before * (1.0 - p.w_q).powi(201);
    assert!((q.avg() - decayed).abs() < 1e-9, "{} vs {decayed}", q.avg());
    assert!(q.avg() < before * 0.7);
}

/// A queue held at `n` packets (w_q = 1, so avg = n at every arrival): the gaps, in
/// arrivals, between successive early drops.
fn gaps(p: RedParams, n: u64, arrivals: u64) -> Vec<u64> {
    let mut q = red(RedParams { w_q: 1.0, ..p }, QueueLimit::Unlimited);
    let mut seq = 0;
    while q.len_packets() < n {
        let _ = q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, seq));
        seq += 1;
    }
    let (mut out, mut last, mut d) = (Vec::new(), 0, Vec::new());
    for k in 1..=arrivals {
        match q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, seq + k)) {
            Ok(()) => {
                q.dequeue(SimTime::ZERO, &mut d);
            }
            Err(x) => {
                assert_eq!(x.reason, DropReason::Policy);
                out.push(k - last);
                last = k;
            }
        }
    }
    out
}

#[test]
fn red_count_spaces_drops_uniformly_up_to_one_over_pb() {
    // avg = 10 between 5 and 15 with max_p 0.1: p_b = 0.05, so gaps are uniform on 1..=20.
    let p = RedParams { max_p: 0.1, ..RedParams::default() };
    let g = gaps(p, 10, 200_000);
    assert!(g.iter().all(|&x| (1..=20).contains(&x)), "max gap {:?}", g.iter().max());
    let mean = g.iter().sum::<u64>() as f64 / g.len() as f64;
    assert!((mean - 10.5).abs() < 0.1, "mean gap {mean} (uniform on 1..=20: 10.5)");
    // Geometric spacing (no count) would have a mean of 20 and gaps beyond 20.
}

#[test]
fn red_gentle_rises_to_one_at_twice_max_th_and_plain_red_drops_all_above_max_th() {
    // avg = 23 with gentle: p_b = 0.02 + 0.98·8/15 = 0.543; gaps of 1 (p_b) or 2, so the
    // drop rate is 1/(0.543 + 2·0.457) = 0.686.
    let g = gaps(RedParams::default(), 23, 20_000);
    let rate = g.len() as f64 / 20_000.0;
    assert!((rate - 0.686).abs() < 0.01, "gentle drop rate {rate}");
    // At 2·max_th every arrival is dropped.
    assert_eq!(gaps(RedParams::default(), 30, 1000).len(), 1000);
    // Without gentle, at max_th every arrival is dropped.
    assert_eq!(gaps(RedParams { gentle: false, ..RedParams::default() }, 15, 1000).len(), 1000);
}

#[test]
fn red_marks_ecn_capable_packets_early_and_drops_them_when_forced() {
    let p = RedParams { w_q: 1.0, max_p: 0.1, ecn: true, ..RedParams::default() };
    let mut q = red(p, QueueLimit::Unlimited);
    for s in 0..10 {
        let _ = q.enqueue(SimTime::ZERO, ect(s));
    }
    let mut d = Vec::new();
    for s in 0..2000 {
        assert!(q.enqueue(SimTime::ZERO, ect(100 + s)).is_ok(), "an ECN-capable packet is marked, never dropped early");
        q.dequeue(SimTime::ZERO, &mut d);
    }
    assert!(q.stats().marked > 50, "{}", q.stats().marked);
    // Forced region (avg ≥ 30): hard_drop drops even ECN-capable packets; without it, marks.
    for (hard, dropped) in [(true, true), (false, false)] {
        let mut q = red(RedParams { hard_drop: hard, ..p }, QueueLimit::Unlimited);
        for s in 0..40 {
            let _ = q.enqueue(SimTime::ZERO, ect(s));
        }
        assert_eq!(q.enqueue(SimTime::ZERO, ect(99)).is_err(), dropped);
    }
}

/// Adaptive RED with the queue held at `n` packets (w_q = 1): one arrival every 501 ms, each
/// at least an interval after the last change; max_p after each.
fn adapt_steps(p: RedParams, n: u64, steps: u64) -> Vec<f64> {
    let mut q = red(RedParams { w_q: 1.0, adaptive: true, ..p }, QueueLimit::Unlimited);
    let mut seq = 0;
    while q.len_packets() < n {
        let _ = q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, seq));
        seq += 1;
    }
    let mut d = Vec::new();
    (1..=steps)
        .map(|step| {
            let t = SimTime(step * 501 * MS);
            let _ = q.enqueue(t, test_udp(0, 0, 1500, seq));
            seq += 1;
            while q.len_packets() > n {
                q.dequeue(t, &mut d);
            }
            q.max_p()
        })
        .collect()
}

#[test]
fn adaptive_red_moves_max_p_toward_the_target_band() {
    // avg 13, above the band 9..11: max_p += min(0.01, max_p/4) at each interval.
    let mut want = 0.02f64;
    for (k, got) in adapt_steps(RedParams::default(), 13, 6).into_iter().enumerate() {
        want += (want / 4.0).min(0.01);
        assert!((got - want).abs() < 1e-12, "step {k}: {got} vs {want}");
    }
    // avg 6, below the band: max_p × 0.9 at each interval, never once below 0.01.
    let got = adapt_steps(RedParams { max_p: 0.05, ..RedParams::default() }, 6, 30);
    assert!((got[0] - 0.045).abs() < 1e-12 && (got[1] - 0.0405).abs() < 1e-12, "{got:?}");
    assert!(got.iter().all(|&m| m > 0.009) && got[29] < 0.0101, "{got:?}");
    // avg 10, in the band: unchanged.
    assert!(adapt_steps(RedParams::default(), 10, 5).iter().all(|&m| m == 0.02));
}

#[test]
fn red_checks_its_parameters() {
    assert!(check_params(&RedParams::default()).is_ok());
    assert_eq!(check_params(&RedParams { max_th: 5.0, ..RedParams::default() }).unwrap_err().key, "max_th");
    assert_eq!(check_params(&RedParams { max_p: 0.0, ..RedParams::default() }).unwrap_err().key, "max_p");
    assert_eq!(check_params(&RedParams { w_q: 1.5, ..RedParams::default() }).unwrap_err().key, "w_q");
}
