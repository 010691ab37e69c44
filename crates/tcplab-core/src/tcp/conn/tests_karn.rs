//! RTT samples without timestamps (RFC 6298 §3, Karn's algorithm): an ACK that covers any
//! retransmitted data gives no sample, and a segment SACKed before its cumulative ACK is never
//! timed by that ACK (Linux `tcp_clean_rtx_queue`: `FLAG_RETRANS_DATA_ACKED` discards the
//! sequence sample; SACKed skbs are skipped).

use super::*;

/// Ten segments in one flight over a 2 × 10 ms wire without queueing (path RTT 20 ms), the
/// first lost; limited transmit off, so nothing but the repair is sent after the flight.
/// Returns the wire once idle and, for the step whose ACK filled the hole, a's sample count
/// and latest sample before and after it.
fn repair(c: TcpConfig) -> (Wire, (u64, SimDuration), (u64, SimDuration)) {
    let c = TcpConfig { initial_cwnd: 10, limited_transmit: false, ..c };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.drop = Box::new(|_, i| i == 0);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.write(10_000), 10_000);
    let mut hole_filled = None;
    loop {
        let before = (w.a.rtt.samples(), w.a.rtt.latest());
        let una = w.a.snd_una();
        if !w.step() {
            break;
        }
        if una == 1 && w.a.snd_una() > 1 {
            hole_filled = Some((before, (w.a.rtt.samples(), w.a.rtt.latest())));
        }
        // No queue on this wire: no honest sample exceeds the path's 20 ms.
        assert!(w.a.rtt.latest() <= 20 * MS, "t = {:?}: sample {:?}", w.now, w.a.rtt.latest());
    }
    assert_eq!(w.b.stats.bytes_delivered, 10_000);
    assert_eq!((w.a.stats.fast_retransmits, w.a.stats.timeouts), (1, 0));
    let rtx: Vec<u64> = w.data_from_a().filter(|s| s.seg.retransmit).map(|s| s.seg.seq).collect();
    assert_eq!(rtx[0], 1, "{rtx:?}");
    let (before, after) = hole_filled.expect("an ACK filled the hole");
    (w, before, after)
}

#[test]
fn the_ack_of_a_repaired_hole_gives_no_rtt_sample_with_sack() {
    // The flight leaves at t0; segments 2..10 arrive and are SACKed, the third duplicate ACK
    // resends segment 1 at t0 + 20 ms (with RFC 6675's rescue retransmission of segment 10,
    // not yet SACKed then), and the ACK of that repair covers all ten at t0 + 40 ms. Timing
    // segment 9 (sent at t0, SACKed at t0 + 20 ms) would give 40 ms, twice the path's RTT:
    // the ACK covers a retransmission, so Karn allows no sample (Linux:
    // FLAG_RETRANS_DATA_ACKED), and segment 9 was SACKed before it besides.
    let (w, before, after) = repair(cfg());
    assert!(w.a.sack_negotiated());
    assert_eq!(w.a.snd_una(), 10_001);
    assert_eq!(after.0, before.0, "a sample from the ACK of the repair: {:?}", after.1);
    assert_eq!(after.1, before.1);
}

#[test]
fn the_ack_of_a_repaired_hole_gives_no_rtt_sample_without_sack() {
    // NewReno without SACK: the same flight, the same repair; the cumulative ACK covers the
    // resent segment 1 and nine segments sent once, 40 ms before it (a 40 ms sample).
    let (w, before, after) = repair(no_sack());
    assert!(!w.a.sack_negotiated());
    assert_eq!(w.a.stats.retransmits, 1);
    assert_eq!(after.0, before.0, "a sample from the ACK of the repair: {:?}", after.1);
    assert_eq!(after.1, before.1);
}

#[test]
fn a_segment_sacked_before_its_cumulative_ack_is_not_timed() {
    // Three segments sent 5 ms apart (A at t0, B at t0 + 5 ms, C at t0 + 10 ms); A is
    // delayed, not lost: B and C are SACKed (two duplicate ACKs, no repair), then one ACK
    // covers all three at t0 + 40 ms. B and C arrived long before: what this ACK newly
    // delivers is A, whose RTT is 40 ms (Linux times the oldest newly acknowledged segment
    // not SACKed; here the newest such, which is A as well). Timing C would give 30 ms.
    let mut w = Wire::new(cfg(), cfg(), 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.queue.clear();
    let t0 = w.now;
    for k in 0..3u64 {
        w.now = t0 + SimDuration(5 * MS.as_ps() * k);
        assert_eq!(w.write(1_000), 1_000);
    }
    assert_eq!(w.a.snd_nxt(), 3_001);
    w.queue.clear(); // The receiver's word is the ACKs below.
    let mut out = Output::default();
    for (dt, sack_end) in [(25, 2_001), (26, 3_001)] {
        w.now = t0 + SimDuration(dt * MS.as_ps());
        let mut ack = TcpHeader { seq: 1, ack: 1, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
        ack.set_sack_blocks(&[(1_001, sack_end)]);
        w.a.on_segment(w.now, &ack, &mut out);
    }
    assert_eq!(w.a.stats.dupacks_received, 2);
    assert!(!w.a.in_recovery() && w.a.stats.retransmits == 0);
    let samples = w.a.rtt.samples();
    w.now = t0 + SimDuration(40 * MS.as_ps());
    let ack = TcpHeader { seq: 1, ack: 3_001, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
    w.a.on_segment(w.now, &ack, &mut out);
    assert_eq!(w.a.snd_una(), 3_001);
    assert_eq!(w.a.rtt.samples(), samples + 1);
    assert_eq!(w.a.rtt.latest(), 40 * MS, "A's own RTT, not C's (30 ms)");
}
