//! The `freebsd-4.10` profile (study 003) as the scenario resolves it: timers on the host's
//! 1/HZ callout grid, the delayed ACK 100 ms after the segment, BSD's RTO with a 30 ms floor
//! and 200 ms slop, NewReno without SACK; and the `freebsd-3.2` profile as it was.

use super::*;
use crate::scenario::resolve::{hz_tick, resolve_tcp};
use crate::scenario::spec::{ProfileName, TcpSpec};
use crate::tcp::cc::CcConfig;
use crate::tcp::config::InitialWindowRule;
use crate::tcp::rtt::RttEstimatorKind;

/// The connection settings of `profile` with `hz` (if given), as a scenario resolves them.
fn profile(p: ProfileName, hz: Option<u32>) -> TcpConfig {
    let spec = TcpSpec { profile: Some(p), hz, ..TcpSpec::default() };
    resolve_tcp(&spec, &TcpSpec::default(), "defaults.tcp").unwrap_or_else(|e| panic!("{e}")).config()
}

fn freebsd410(hz: u32) -> TcpConfig {
    profile(ProfileName::FreeBsd410, Some(hz))
}

fn wire(c: &TcpConfig, phase: SimDuration, one_way: SimDuration) -> Wire {
    let mut w = Wire::new(c.clone(), c.clone(), one_way);
    w.a.set_clock_phase(phase);
    w.b.set_clock_phase(phase);
    w
}

#[test]
fn freebsd410_timers_run_on_hz_ticks() {
    for (hz, phase) in [(100u32, SimDuration::ZERO), (100, 7 * MS), (20_000, SimDuration::from_micros(17)), (1_000, SimDuration::from_micros(999))] {
        let c = freebsd410(hz);
        let tick = hz_tick(hz);
        assert_eq!((c.timer_tick, c.rto.granularity, c.ts_tick), (Some(tick), tick, tick), "HZ {hz}: the timers, the estimator and TSval count 1/HZ");
        assert!(!c.timer_ticks, "not 3.2's global fast and slow timers");
        // The first data segment is lost: the retransmission timer, armed when it left, fires
        // at the ⌈RTO/tick⌉-th tick of the host's clock after that (one tick early at most).
        let mut w = wire(&c, phase, 5 * MS);
        w.drop = Box::new(|_, i| i == 0);
        w.open();
        w.run_until(SimTime::ZERO + 20 * MS);
        assert_eq!(w.a.state(), State::Established);
        let (sent, rto) = (w.now, w.a.rto());
        w.write(500);
        w.run_until(SimTime::ZERO + 2_000 * MS);
        let fire = w.events.iter().find(|(_, a, e)| *a && e.kind == TcpEventKind::Timeout).map(|e| e.0).expect("a timeout");
        assert_eq!(fire.since(SimTime::ZERO).as_ps() % tick.as_ps(), phase.as_ps() % tick.as_ps(), "HZ {hz}: on the grid");
        let after = fire.since(sent);
        assert!(after <= rto && after + tick > rto, "HZ {hz}: fired {after:?} after, RTO {rto:?}");
        assert_eq!(w.b.stats.bytes_delivered, 500);
    }
}

#[test]
fn freebsd410_delack_is_100ms_after_segment() {
    // One segment (the initial window is one): the receiver's delayed-ACK callout runs 100 ms
    // (10 ticks at HZ 100) from its arrival, at whatever phase — not at a global tick.
    for phase_us in [0u64, 3_000, 9_990] {
        let c = freebsd410(100);
        assert_eq!((c.delack_segments, c.delack_timeout, c.initial_cwnd), (2, 100 * MS, 1));
        let phase = SimDuration::from_micros(phase_us);
        let mut w = wire(&c, phase, 5 * MS);
        w.open();
        w.run_until(SimTime::ZERO + 30 * MS);
        w.write(500);
        let arrived = w.now + 5 * MS;
        w.run_until(SimTime::ZERO + 1_000 * MS);
        let ack = w.acks_from_b().find(|s| s.seg.ack > 1).map(|s| s.at).expect("the delayed ACK");
        let waited = ack.since(arrived);
        assert!(waited > 90 * MS && waited <= 100 * MS, "phase {phase_us} us: waited {waited:?}");
        assert_eq!(ack.since(SimTime::ZERO).as_ps() % (10 * MS).as_ps(), phase.as_ps(), "phase {phase_us} us: on the 10 ms grid");
    }
    // At HZ 20,000 the callout's tick is 50 us: 100 ms to within 50 us.
    let c = freebsd410(20_000);
    let mut w = wire(&c, SimDuration::from_micros(21), 5 * MS);
    w.open();
    w.run_until(SimTime::ZERO + 30 * MS);
    w.write(500);
    let arrived = w.now + 5 * MS;
    w.run_until(SimTime::ZERO + 1_000 * MS);
    let ack = w.acks_from_b().find(|s| s.seg.ack > 1).map(|s| s.at).unwrap();
    let waited = ack.since(arrived);
    assert!(waited > 100 * MS - SimDuration::from_micros(50) && waited <= 100 * MS, "{waited:?}");
}

#[test]
fn freebsd410_rto_has_30ms_floor_and_200ms_slop() {
    for hz in [100u32, 1_000] {
        let c = freebsd410(hz);
        assert_eq!((c.rto.min, c.rto.slop, c.rto.max, c.rto.initial), (30 * MS, 200 * MS, SimDuration::from_secs(64), SimDuration::from_secs(3)));
        assert_eq!(c.rtt_estimator, RttEstimatorKind::Bsd);
        let mut conn = Connection::new(c.clone());
        let rto = |conn: &mut Connection, n: u32| {
            conn.backoffs = n;
            conn.rto()
        };
        // Before a sample: 3 s without slop (tcp_newtcpcb sets t_rxtcur as is); a backed-off
        // SYN timer is 3 s·2ⁿ plus the slop (tcp_timer_rexmt's RANGESET).
        assert_eq!((rto(&mut conn, 0), rto(&mut conn, 1)), (SimDuration::from_secs(3), SimDuration::from_millis(6_200)));
        // A LAN: samples far below a tick. REXMTVAL is the 30 ms floor, and the timer is the
        // floor plus 200 ms; backed off, REXMTVAL·2ⁿ + 200 ms.
        for _ in 0..50 {
            conn.rtt.sample(SimDuration::from_micros(300), &c.rto, 0, 0);
        }
        let got: Vec<SimDuration> = (0..4).map(|n| rto(&mut conn, n)).collect();
        assert_eq!(got, [230, 260, 320, 440].map(|v| v * MS), "HZ {hz}");
        // Without the slop the floor itself: 30, 60, 120, 240 ms.
        let no_slop = RtoPolicy { slop: SimDuration::ZERO, ..c.rto };
        let mut bare = Connection::new(TcpConfig { rto: no_slop, ..c.clone() });
        for _ in 0..50 {
            bare.rtt.sample(SimDuration::from_micros(300), &no_slop, 0, 0);
        }
        let got: Vec<SimDuration> = (0..4).map(|n| rto(&mut bare, n)).collect();
        assert_eq!(got, [30, 60, 120, 240].map(|v| v * MS), "HZ {hz}");
        // The ceiling holds with the slop: 64 s.
        assert_eq!(rto(&mut conn, 12), SimDuration::from_secs(64));
    }
    // A first sample of 100 ms at HZ 100, as tcp_xmit_timer takes it:
    let c = freebsd410(100);
    let mut conn = Connection::new(c.clone());
    conn.rtt.sample(100 * MS, &c.rto, 0, 0);
    // rtt = 1 + 10 ticks; srtt32 = 11·32, rttvar16 = 11·8: REXMTVAL = (44 + 88) / 4 = 33 ticks;
    // + 20 ticks of slop = 53 ticks, above rtt + 2 = 13.
    assert_eq!(conn.rto(), 530 * MS);
}

#[test]
fn freebsd410_is_newreno_without_sack() {
    let c = freebsd410(100);
    assert_eq!(
        (c.cc, c.sack, c.recovery, c.timestamps, c.window_scaling, c.limited_transmit),
        (CcConfig::NewReno(Default::default()), false, RecoveryKind::NewReno, true, true, false)
    );
    // Two losses in one window are repaired by NewReno's partial ACK, without a timeout and
    // without SACK on the wire.
    let mut w = wire(&c, SimDuration::ZERO, 5 * MS);
    w.drop = Box::new(|s, i| (i == 20 || i == 24) && !s.seg.retransmit);
    transfer(&mut w, 200_000);
    assert_eq!(w.b.stats.bytes_delivered, 200_000);
    assert!(!w.a.sack_negotiated());
    assert_eq!((w.a.stats.fast_retransmits, w.a.stats.timeouts, w.a.stats.retransmits), (1, 0, 2));
    assert!(w.log.iter().all(|s| s.seg.sack_blocks().next().is_none()), "no SACK blocks");
}

#[test]
fn freebsd32_unchanged() {
    // The 3.2 profile keeps its global 200 ms / 500 ms ticks, Reno, no slop, no 1/HZ grid
    // (its behaviour is `tests_bsd.rs`'s, and study 004's results are locked in the digests).
    let c = profile(ProfileName::FreeBsd32, None);
    assert!(c.timer_ticks);
    assert_eq!((c.timer_tick, c.rto.slop, c.rto.granularity, c.rto.min, c.delack_timeout), (None, SimDuration::ZERO, 500 * MS, SimDuration::from_secs(1), 200 * MS));
    assert_eq!((c.cc, c.recovery, c.timestamps, c.initial_cwnd_rule), (CcConfig::Reno(Default::default()), RecoveryKind::Reno, false, InitialWindowRule::BsdLocal));
    // Its RTO on a LAN is 3 slow ticks (1.5 s) after a sample, 2·2ⁿ s backed off.
    let mut conn = Connection::new(c.clone());
    conn.rtt.sample(SimDuration::from_micros(300), &c.rto, 0, 0);
    assert_eq!(conn.rto(), 1_500 * MS);
    conn.backoffs = 1;
    assert_eq!(conn.rto(), 3_000 * MS);
}
