//! BSD host rules (the `freebsd-3.2` profile, study 004): timers on the host's clock ticks,
//! the tick estimator's RTO and backoff, socket buffers rounded up to whole segments, and no
//! slow start to a local peer.

use super::*;
use crate::tcp::config::InitialWindowRule;
use crate::tcp::rtt::RttEstimatorKind;

/// BSD's timers and estimator over a `no_sack()` connection (MSS 1000, delayed ACK every 2).
fn bsd() -> TcpConfig {
    let mut c = no_sack();
    c.delack_segments = 2;
    c.delack_timeout = 200 * MS;
    c.rtt_estimator = RttEstimatorKind::Bsd;
    c.rto = RtoPolicy { min: SimDuration::from_secs(1), max: SimDuration::from_secs(64), initial: SimDuration::from_secs(3), granularity: 500 * MS, ..RtoPolicy::default() };
    c.timer_ticks = true;
    c
}

fn wire(c: &TcpConfig, phase: SimDuration, one_way: SimDuration) -> Wire {
    let mut w = Wire::new(c.clone(), c.clone(), one_way);
    w.a.set_clock_phase(phase);
    w.b.set_clock_phase(phase);
    w
}

#[test]
fn a_timer_counts_tick_boundaries_of_the_host_clock() {
    let mut conn = Connection::new(bsd());
    conn.set_clock_phase(100 * MS);
    let at = |now_ms: u64, d_ms: u64| conn.after_ticks(SimTime::ZERO + now_ms * MS, d_ms * MS, 500 * MS);
    // Ticks at 0.1, 0.6, 1.1, 1.6 s …: 3 ticks set at 0.3 s fire at the third, 1.6 s.
    assert_eq!(at(300, 1500), SimTime::ZERO + 1600 * MS);
    // Set exactly on a tick: that tick does not count.
    assert_eq!(at(600, 1500), SimTime::ZERO + 2100 * MS);
    // A part tick is a whole one; at least one tick.
    assert_eq!(at(300, 1200), SimTime::ZERO + 1600 * MS);
    assert_eq!(at(300, 0), SimTime::ZERO + 600 * MS);
}

#[test]
fn the_delayed_ack_goes_at_the_next_fast_timer_tick() {
    for phase_ms in [0u64, 30, 170] {
        let mut c = bsd();
        c.initial_cwnd = 3;
        let phase = phase_ms * MS;
        let mut w = wire(&c, phase, 5 * MS);
        w.open();
        w.write(3_000);
        w.run_until(SimTime::ZERO + 2_000 * MS);
        // Segments 1–2 are ACKed at once, the 3rd by the fast timer at its next tick.
        let acks: Vec<(SimTime, u64)> = w.acks_from_b().filter(|s| s.seg.ack > 1).map(|s| (s.at, s.seg.ack)).collect();
        assert_eq!(acks.len(), 2, "{acks:?}");
        let t = acks[1].0.since(SimTime::ZERO).as_ps();
        assert_eq!((t - phase.as_ps()) % (200 * MS).as_ps(), 0, "phase {phase_ms} ms: on the grid: {acks:?}");
        // The 3rd segment arrived right after the 2nd (within a microsecond of the 1st ACK).
        let wait = acks[1].0.since(acks[0].0);
        assert!(wait > SimDuration::ZERO && wait <= 200 * MS, "phase {phase_ms} ms: waited {wait:?}");
    }
}

#[test]
fn the_bsd_estimator_gives_three_ticks_on_a_lan_and_backs_off_from_rexmtval() {
    let c = bsd();
    let mut conn = Connection::new(c.clone());
    let secs = |conn: &mut Connection, n: u32| {
        conn.backoffs = n;
        conn.rto().as_ps() as f64 / 1e12
    };
    assert_eq!(secs(&mut conn, 0), 3.0, "before a sample: the 3 s initial RTO");
    conn.rtt.sample(SimDuration::from_micros(300), &c.rto, 0, 0);
    // First sample: rtt = 1 tick, srtt 1 tick, rttvar ½ tick: REXMTVAL 3 ticks, floor rtt + 2 = 3.
    assert_eq!([secs(&mut conn, 0), secs(&mut conn, 1)], [1.5, 3.0]);
    for _ in 0..50 {
        conn.rtt.sample(SimDuration::from_micros(300), &c.rto, 0, 0);
    }
    // Converged: REXMTVAL is TCPTV_MIN (2 ticks) but the timer keeps rtt + 2 = 3 ticks; a
    // backed-off timer doubles REXMTVAL: 2, 4, 8 s … at most 64 s. (The timer after the sample
    // is still 1.5 s, so a value remembered for one backoff at the first sample is stale.)
    // One backoff first: the last value computed was for one backoff at the first sample.
    assert_eq!([secs(&mut conn, 1), secs(&mut conn, 0), secs(&mut conn, 2), secs(&mut conn, 3)], [2.0, 1.5, 4.0, 8.0]);
    assert_eq!(secs(&mut conn, 6), 64.0);
    assert_eq!(secs(&mut conn, 9), 64.0, "tcp_backoff stops at 64× and TCPTV_REXMTMAX at 64 s");
    // A sample spanning a slow tick raises the floor to 4 ticks.
    conn.rtt.sample(SimDuration::from_millis(600), &c.rto, 0, 0);
    assert_eq!(secs(&mut conn, 0), 2.0);
}

#[test]
fn a_timeout_fires_on_the_slow_timer_grid_one_to_one_and_a_half_seconds_on() {
    for phase_ms in [0u64, 260, 499] {
        let c = bsd();
        let phase = phase_ms * MS;
        let mut w = wire(&c, phase, SimDuration::from_micros(50));
        // Lose segments 10.. for 50 ms: a timeout, then recovery.
        w.drop = Box::new(|s, i| i >= 10 && s.at < SimTime::ZERO + 50 * MS);
        transfer(&mut w, 30_000);
        assert_eq!(w.b.stats.bytes_delivered, 30_000);
        let fires: Vec<SimTime> = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::Timeout).map(|e| e.0).collect();
        assert!(!fires.is_empty());
        let t = fires[0].since(SimTime::ZERO).as_ps();
        assert_eq!((t - phase.as_ps()) % (500 * MS).as_ps(), 0, "phase {phase_ms}: {fires:?}");
        // Armed within the first 50 ms: its third slow tick is 1.0–1.5 s later.
        assert!(fires[0] > SimTime::ZERO + 1000 * MS && fires[0] <= SimTime::ZERO + 1550 * MS, "phase {phase_ms}: {fires:?}");
    }
}

#[test]
fn socket_buffers_round_up_to_whole_segments() {
    // 25 600 bytes are 25.6 segments of 1000: rounded up to 26 000.
    let rounded = |snd: u64, rcv: u64, round: bool| TcpConfig { sndbuf: snd, rcvbuf: rcv, round_buffers_to_mss: round, ..no_sack() };
    for (round, want, window) in [(true, 26_000, 26_000), (false, 25_600, 25_000)] {
        // The send buffer: what a write may leave unacknowledged or unsent.
        let c = rounded(25_600, 1 << 30, round);
        let mut w = Wire::new(c.clone(), c, 20 * MS);
        w.open();
        w.run_until(SimTime::ZERO + 50 * MS);
        assert_eq!(w.write(10_000_000), want, "round {round}");
        // The receive buffer: the window the sender fills.
        let c = rounded(1 << 30, 25_600, round);
        let mut w = Wire::new(c.clone(), c, 20 * MS);
        w.open();
        w.write(10_000_000);
        let mut most = 0;
        while w.now < SimTime::ZERO + 3_000 * MS && w.step() {
            most = most.max(w.a.outstanding());
        }
        // Unrounded, only whole segments fit: 25 of them.
        assert_eq!(most, window, "round {round}");
    }
}

#[test]
fn a_send_buffer_below_the_mss_makes_the_mss_its_size() {
    // BSD tcp_mss: `if (bufsize < mss) mss = bufsize;` — 600 bytes with an MSS of 1000.
    let c = TcpConfig { sndbuf: 600, rcvbuf: 600, round_buffers_to_mss: true, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 5 * MS);
    w.open();
    w.run_until(SimTime::ZERO + 20 * MS);
    assert_eq!(w.write(6_000), 600, "the send buffer holds 600 bytes");
    w.run_until(SimTime::ZERO + 2_000 * MS);
    let lens: Vec<u32> = w.log.iter().filter(|s| s.a_to_b && s.seg.len > 0).map(|s| s.seg.len).collect();
    assert_eq!(lens, vec![600], "one segment of the buffer's size");
    assert_eq!(w.b.stats.bytes_delivered, 600);
    assert_eq!(w.a.smss(), 600);
}

#[test]
fn a_local_peer_gets_no_slow_start() {
    let mut c = no_sack();
    c.initial_cwnd_rule = InitialWindowRule::BsdLocal;
    c.rcvbuf = 20_000;
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    let opened = w.now;
    w.write(100_000);
    w.run_until(opened + 25 * MS);
    // Handshake done at 20 ms: the whole offered window (20 segments) leaves at once.
    let sent = w.log.iter().filter(|s| s.a_to_b && s.seg.len > 0).count();
    assert_eq!(sent, 20);
    // RFC 5681's rule sends 4 of this MSS.
    let mut d = no_sack();
    d.rcvbuf = 20_000;
    let mut v = Wire::new(d.clone(), d, 10 * MS);
    v.open();
    let opened = v.now;
    v.write(100_000);
    v.run_until(opened + 25 * MS);
    assert_eq!(v.log.iter().filter(|s| s.a_to_b && s.seg.len > 0).count(), 4);
}

#[test]
fn the_applications_read_sends_the_window_update_bsd_sends() {
    // A send buffer below the MSS makes each segment fill the peer's receive buffer (800 bytes,
    // as MTU 9180 with 8 KB socket buffers): one segment is never two, so without the read's
    // window update every ACK waits for the 200 ms fast timer; with it (tcp_usr_rcvd →
    // tcp_output: the window opened by half the buffer) each goes at once.
    let done = |update: bool| {
        let mut c = bsd();
        c.sndbuf = 800;
        c.rcvbuf = 800;
        c.round_buffers_to_mss = true;
        c.window_update_on_read = update;
        let mut w = wire(&c, SimDuration::ZERO, 5 * MS);
        w.open();
        // The application keeps the send buffer full (it takes 800 bytes at a time).
        let mut left = 8_000u64;
        while w.now < SimTime::ZERO + 10_000 * MS && (left > 0 || w.peek().is_some()) {
            left -= w.write(left);
            if !w.step() {
                break;
            }
        }
        let last = w.acks_from_b().find(|s| s.seg.ack >= 8_001).map(|s| s.at).expect("all acknowledged");
        last.since(SimTime::ZERO)
    };
    let (without, with) = (done(false), done(true));
    assert!(without > 1_000 * MS, "ten segments each waiting for the fast timer: {without:?}");
    assert!(with < 150 * MS, "ten round trips of 10 ms: {with:?}");
    // With room for many segments the update goes when two have arrived, as the delayed-ACK
    // rule already does: the ACKs are the same with and without it.
    let acks = |update: bool| {
        let mut c = bsd();
        c.initial_cwnd = 4;
        c.rcvbuf = 20_000;
        c.window_update_on_read = update;
        let mut w = wire(&c, SimDuration::ZERO, 5 * MS);
        w.open();
        w.write(9_000);
        w.run_until(SimTime::ZERO + 5_000 * MS);
        w.acks_from_b().map(|s| (s.at, s.seg.ack, s.seg.window)).collect::<Vec<_>>()
    };
    assert_eq!(acks(true), acks(false));
}
