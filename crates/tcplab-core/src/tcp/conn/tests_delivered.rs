//! What an ACK delivers: window growth counts only the data an ACK newly delivers, never the
//! SACKed data a hole-filling ACK removes from the queue; and a new SACK recovery may start as
//! soon as the last one's recovery point is acknowledged.

use super::*;
use crate::tcp::cc::{BicConfig, CcConfig, CubicConfig, DctcpConfig, HighSpeedConfig, ImtcpBgConfig, RenoConfig, TcpLpConfig};

/// A sender (config `c`, 40 segments of 1000 bytes outstanding, nothing arriving) whose
/// retransmission timer has fired once; the wire holds nothing.
fn after_timeout(c: TcpConfig) -> Wire {
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.a.state(), State::Established);
    w.write(40_000);
    assert_eq!((w.a.snd_una(), w.a.snd_nxt()), (1, 40_001));
    w.queue.clear();
    let fire = w.a.next_deadline().expect("the retransmission timer runs");
    w.run_until(fire);
    assert_eq!(w.a.stats.timeouts, 1);
    w.queue.clear(); // The retransmission of segment 1 is lost too: only the ACKs below arrive.
    w
}

fn ack(w: &Wire, n: u64, blocks: &[(u64, u64)]) -> TcpHeader {
    let mut h = TcpHeader { seq: 1, ack: n, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
    h.set_sack_blocks(blocks);
    h
}

#[test]
fn a_hole_filling_ack_after_a_timeout_grows_the_window_by_what_it_delivered() {
    // 39 of 40 segments were SACKed after the timeout; the ACK that fills the hole delivers one
    // segment, so slow start adds one, whatever the controller (it added 39, or ssthresh
    // and half the rest for CUBIC: 1 → 725 segments in an 8-flow run).
    let reno2 = RenoConfig { abc_limit: 2, max_ssthresh: 0, exact_increase: false };
    for cc in [
        CcConfig::Reno(reno2),
        CcConfig::NewReno(reno2),
        CcConfig::Bic(BicConfig::default()),
        CcConfig::Cubic(CubicConfig::default()),
        CcConfig::Dctcp(DctcpConfig::default()),
        CcConfig::HighSpeed(HighSpeedConfig { reno: reno2 }),
        CcConfig::TcpLp(TcpLpConfig { reno: reno2, ..TcpLpConfig::default() }),
        CcConfig::ImtcpBg(ImtcpBgConfig { reno: reno2, ..ImtcpBgConfig::default() }),
        CcConfig::Vegas(crate::tcp::cc::VegasConfig::default()),
        CcConfig::Htcp(crate::tcp::cc::HtcpConfig::default()),
        CcConfig::Westwood(crate::tcp::cc::WestwoodConfig::default()),
    ] {
        let c = TcpConfig { cc, initial_cwnd: 40, recovery: RecoveryKind::Sack, ..cfg() };
        let mut w = after_timeout(c);
        let mut out = Output::default();
        let now = w.now;
        let sack = ack(&w, 1, &[(1_001, 40_001)]);
        w.a.on_segment(now, &sack, &mut out);
        let before = w.a.cwnd();
        assert_eq!(before, 1_000, "{}: the loss window", cc.name());
        let fill = ack(&w, 40_001, &[]);
        w.a.on_segment(now, &fill, &mut out);
        assert_eq!(w.a.snd_una(), 40_001);
        assert_eq!(w.a.cwnd(), before + 1_000, "{}: one segment delivered, one segment more", cc.name());
    }
}

#[test]
fn cubic_grows_by_the_segments_delivered_not_the_segments_removed() {
    // The same ACK delivering ten segments (the hole and nine segments above it that were
    // never SACKed) may add ten in slow start.
    let c = TcpConfig { cc: CcConfig::Cubic(CubicConfig::default()), initial_cwnd: 40, recovery: RecoveryKind::Sack, ..cfg() };
    let mut w = after_timeout(c);
    let mut out = Output::default();
    let now = w.now;
    let sack = ack(&w, 1, &[(10_001, 40_001)]);
    w.a.on_segment(now, &sack, &mut out);
    let fill = ack(&w, 40_001, &[]);
    w.a.on_segment(now, &fill, &mut out);
    assert_eq!(w.a.cwnd(), 11_000);
}

#[test]
fn a_sack_recovery_may_start_when_the_last_recovery_point_is_acknowledged() {
    // Recovery for a loss of segment 1 ends at the ACK of its recovery point; the first
    // segment sent after it is lost, and SACKs for three segments above it must
    // start a new recovery that resends it (RFC 6675 §5; Linux enters Recovery again at
    // snd_una = high_seq). It waited for the retransmission timer when a new recovery needed
    // an ACK above the old recovery point, as NewReno without SACK does.
    let c = TcpConfig { initial_cwnd: 20, recovery: RecoveryKind::Sack, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(60_000);
    assert_eq!(w.a.snd_nxt(), 20_001);
    w.queue.clear();
    let mut out = Output::default();
    let now = w.now;
    for k in 2..=4 {
        let d = ack(&w, 1, &[(1_001, k * 1_000 + 1)]);
        w.a.on_segment(now, &d, &mut out);
    }
    assert!(w.a.in_recovery());
    assert_eq!(w.a.stats.fast_retransmits, 1);
    // The recovery point: everything sent when recovery began (limited transmit included).
    let point = w.a.snd_max();
    let end = ack(&w, point, &[]);
    w.a.on_segment(now, &end, &mut out);
    assert!(!w.a.in_recovery());
    assert!(w.a.snd_nxt() > point + 4_000, "new data went out after recovery: {}", w.a.snd_nxt());
    out.segments.clear();
    for k in 1..=3 {
        let d = ack(&w, point, &[(point + 1_000, point + 1_000 + k * 1_000)]);
        w.a.on_segment(now, &d, &mut out);
    }
    assert!(w.a.in_recovery(), "three segments SACKed above the hole at the old recovery point");
    assert_eq!(w.a.stats.fast_retransmits, 2);
    assert!(out.segments.iter().any(|s| s.retransmit && s.seq == point), "the hole is resent at once");
}

#[test]
fn without_sack_a_new_recovery_needs_an_ack_beyond_the_recovery_point() {
    // RFC 6582 §3.2 step 1 (BSD, Linux's Reno): duplicate ACKs at exactly the old recovery
    // point may be echoes of retransmitted data, so they start nothing.
    let c = TcpConfig { initial_cwnd: 20, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(60_000);
    w.queue.clear();
    let mut out = Output::default();
    let now = w.now;
    for _ in 0..3 {
        let d = ack(&w, 1, &[]);
        w.a.on_segment(now, &d, &mut out);
    }
    assert_eq!(w.a.stats.fast_retransmits, 1);
    let point = w.a.snd_max();
    let end = ack(&w, point, &[]);
    w.a.on_segment(now, &end, &mut out);
    assert!(!w.a.in_recovery());
    for _ in 0..3 {
        let d = ack(&w, point, &[]);
        w.a.on_segment(now, &d, &mut out);
    }
    assert_eq!(w.a.stats.fast_retransmits, 1, "no new recovery at the old recovery point");
}

#[test]
fn without_sack_duplicate_acks_count_as_delivered_before_the_ack_that_covers_them() {
    // Linux `tcp_add_reno_sack`/`tcp_remove_reno_sacks` (packetdrill limited-transmit-no-sack):
    // two duplicate ACKs, then an ACK of two segments, delivers one more segment: slow start
    // adds one (CUBIC; it added two).
    let c = TcpConfig { cc: CcConfig::Cubic(CubicConfig::default()), initial_cwnd: 10, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(15_000);
    w.queue.clear();
    let mut out = Output::default();
    let now = w.now;
    for _ in 0..2 {
        let d = ack(&w, 1, &[]);
        w.a.on_segment(now, &d, &mut out);
    }
    assert_eq!(w.a.cwnd(), 10_000);
    let cum = ack(&w, 2_001, &[]);
    w.a.on_segment(now, &cum, &mut out);
    assert_eq!(w.a.cwnd(), 11_000);
}

#[test]
fn linux_cwnd_validation_lets_slow_start_double_what_an_application_keeps_out() {
    // Linux 3.16+ `tcp_is_cwnd_limited` (packetdrill slow-start-ack-per-2pkt-send-6pkt): six
    // segments out of a window of ten is not "flight within one MSS of cwnd", yet in slow
    // start cwnd may grow while it is below twice the most segments out: 10 → 12, then no more.
    use crate::tcp::config::CwndLimitedRule;
    for (rule, want) in [(CwndLimitedRule::Linux, [12_000, 12_000, 12_000]), (CwndLimitedRule::Flight, [10_000, 10_000, 10_000])] {
        let c = TcpConfig { cc: CcConfig::Cubic(CubicConfig::default()), initial_cwnd: 10, cwnd_limited: rule, ..cfg() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.open();
        w.run_until(SimTime(25 * MS.as_ps()));
        w.write(6_000);
        w.queue.clear();
        let mut out = Output::default();
        let now = w.now;
        for (k, n) in [2_001, 4_001, 6_001].into_iter().enumerate() {
            let a = ack(&w, n, &[]);
            w.a.on_segment(now, &a, &mut out);
            assert_eq!(w.a.cwnd(), want[k], "{rule:?} after ACK {n}");
        }
    }
}
