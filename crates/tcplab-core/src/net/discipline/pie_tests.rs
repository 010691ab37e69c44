use super::*;
use crate::net::packet::test_udp;

const MS: u64 = 1_000_000_000;

fn pie() -> Pie {
    Pie::new(QueueLimit::Unlimited, &PieParams::default(), Rng::from_seed(5))
}

fn with(prob: f64, qdelay_ms: u64, old_ms: u64) -> Pie {
    let mut q = pie();
    q.prob = prob;
    q.qdelay = SimDuration::from_millis(qdelay_ms);
    q.qdelay_old = SimDuration::from_millis(old_ms);
    q
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12 * b.abs().max(1e-9)
}

#[test]
fn pie_update_scales_alpha_and_beta_with_the_probability() {
    // 30 ms against a 15 ms target, steady: only α's term, 0.125 × 15 ms, scaled.
    for (p0, scale) in [(0.0, 2048.0), (5e-7, 2048.0), (5e-6, 512.0), (5e-5, 128.0), (5e-4, 32.0), (5e-3, 8.0), (0.05, 2.0), (0.5, 1.0)] {
        let mut q = with(p0, 30, 30);
        q.update(100_000);
        let want = p0 + 0.125 * 0.015 / scale;
        assert!(close(q.prob(), want), "from {p0}: {} vs {want}", q.prob());
    }
    // β's term: a delay rising by 10 ms in one update, at p = 0.5: 1.25 × 0.010 + 0.125 × 0.
    let mut q = with(0.5, 15, 5);
    q.update(100_000);
    assert!(close(q.prob(), 0.5 + 0.0125), "{}", q.prob());
}

#[test]
fn pie_caps_the_step_adds_for_huge_delays_decays_and_restores_the_burst_allowance() {
    // At p ≥ 10 % a step is at most 2 %.
    let mut q = with(0.3, 200, 0);
    q.update(100_000);
    assert!(close(q.prob(), 0.32), "{}", q.prob());
    // Over 250 ms, 2 % more (here after the cap): 0.3 + 0.02 + 0.02.
    let mut q = with(0.3, 300, 0);
    q.update(100_000);
    assert!(close(q.prob(), 0.34), "{}", q.prob());
    // Two updates at zero delay with nothing waiting: p falls by 1/64 beyond α's term.
    let mut q = with(0.5, 0, 0);
    q.burst = SimDuration::ZERO;
    q.update(0);
    let step = 0.5 - 0.125 * 0.015;
    assert!(close(q.prob(), step - step / 64.0), "{}", q.prob());
    assert_eq!(q.burst_left(), SimDuration::ZERO, "p is not zero: no new burst allowance");
    // A quiet queue with p back at zero gets its 150 ms allowance back.
    let mut q = with(1e-6, 0, 0);
    q.burst = SimDuration::ZERO;
    q.update(0);
    assert_eq!(q.prob(), 0.0);
    assert_eq!(q.burst_left(), SimDuration::from_millis(150));
}

#[test]
fn pie_derandomised_drops_are_between_0_85_and_8_5_accumulated() {
    let mut q = pie();
    q.burst = SimDuration::ZERO;
    q.prob = 0.1;
    q.qdelay = SimDuration::from_millis(20);
    q.next_update = SimTime::MAX;
    for s in 0..10 {
        q.fifo.push(SimTime::ZERO, test_udp(0, 0, 1500, s));
    }
    let (mut gaps, mut last) = (Vec::new(), 0u64);
    for k in 1..=100_000u64 {
        if q.drop_early() {
            q.accu_prob = 0.0; // as enqueue does on every drop
            gaps.push(k - last);
            last = k;
        }
    }
    // 0.1 per arrival: no drop before 9 arrivals (0.9 ≥ 0.85), a certain one at 86 (85 × 0.1
    // falls just short of 8.5 in binary, as 85 × (MAX_PROB/10) does in Linux's fixed point).
    assert!(gaps.iter().all(|&g| (9..=86).contains(&g)), "{:?} {:?}", gaps.iter().min(), gaps.iter().max());
    assert!(gaps.contains(&9) && gaps.len() > 1000);
}

#[test]
fn pie_holds_an_unresponsive_overload_near_its_target_after_the_burst_allowance() {
    // Arrivals every 0.5 ms, one departure per ms: twice the line. No early drop in the first
    // 150 ms; then p settles where the queueing delay sits near 15 ms.
    let mut q = pie();
    let (mut seq, mut d) = (0u64, Vec::new());
    let mut delays = Vec::new();
    let (mut first_drop, mut late_drops) = (None, 0u64);
    for k in 0..40_000u64 {
        let t = SimTime(k * MS / 2);
        if q.enqueue(t, test_udp(0, 0, 1500, seq)).is_err() {
            first_drop.get_or_insert(t);
            late_drops += (k >= 20_000) as u64;
        }
        seq += 1;
        if k % 2 == 1 && q.dequeue(t, &mut d).is_some() && k > 20_000 {
            delays.push(q.qdelay().as_secs_f64());
        }
    }
    assert!(first_drop.unwrap() >= SimTime(150 * MS), "{:?}", first_drop);
    let mean = delays.iter().sum::<f64>() / delays.len() as f64;
    assert!((0.010..0.025).contains(&mean), "mean queueing delay {mean} s over the last 10 s");
    // Half the arrivals dropped at a steady delay; p itself sits higher (0.83 here), as the
    // derandomisation never drops two arrivals in a row while p < 0.85.
    assert!((late_drops as f64 / 20_000.0 - 0.5).abs() < 0.01, "{late_drops} of 20000 dropped, p = {}", q.prob());
}

#[test]
fn pie_skips_idle_updates_once_they_change_nothing() {
    let mut q = pie();
    q.enqueue(SimTime::ZERO, test_udp(0, 0, 1500, 0)).unwrap();
    let mut d = Vec::new();
    q.dequeue(SimTime(MS), &mut d).unwrap();
    // 1000 s idle: about 66,667 updates due, all but the first few identical.
    q.enqueue(SimTime(1_000_000 * MS), test_udp(0, 0, 1500, 1)).unwrap();
    assert_eq!(q.prob(), 0.0);
    assert!(q.next_update > SimTime(1_000_000 * MS));
    assert!(check_params(&PieParams::default()).is_ok());
    assert_eq!(check_params(&PieParams { alpha: 0.0, ..PieParams::default() }).unwrap_err().key, "alpha");
}
