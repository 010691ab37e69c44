//! The end of a connection: counting resent FINs.

use super::*;

#[test]
fn retransmitted_bare_fins_count_as_retransmissions() {
    // Data segments 5 and 12 are lost, and so are the FIN and its first retransmission: the
    // FIN goes three times, the last two after timeouts, alone (no data left to carry it).
    for c in [cfg(), no_sack()] {
        let mut w = Wire::new(c.clone(), c.clone(), 10 * MS);
        w.drop = Box::new(|_, i| i == 5 || i == 12);
        let mut fins_dropped = 0;
        w.drop_bare = Box::new(move |s| {
            let drop = s.seg.has(flags::FIN) && fins_dropped < 2;
            fins_dropped += drop as u32;
            drop
        });
        transfer(&mut w, 30_000);
        assert_eq!(w.b.stats.bytes_delivered, 30_000);
        assert!(w.a.send_done() && w.b.peer_closed(), "sack={}", c.sack);
        let from_a = || w.log.iter().filter(|s| s.a_to_b);
        let fins: Vec<&Sent> = from_a().filter(|s| s.seg.has(flags::FIN) && s.seg.len == 0).collect();
        assert_eq!(fins.len(), 3, "sack={}: {fins:?}", c.sack);
        assert!(!fins[0].seg.retransmit && fins[1].seg.retransmit && fins[2].seg.retransmit);
        // The counter agrees with the segments flagged on the wire (what a capture shows and
        // tshark counts), and with the trace events.
        let flagged = from_a().filter(|s| s.seg.retransmit).count() as u64;
        assert_eq!(w.a.stats.retransmits, flagged, "sack={}", c.sack);
        let events = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::Retransmit).count() as u64;
        assert_eq!(events, flagged, "sack={}", c.sack);
        assert!(flagged >= 4, "two data segments and two FINs at least: {flagged}");
        // A bare FIN carries no payload: it is not a data segment.
        let data: Vec<&Sent> = from_a().filter(|s| s.seg.len > 0).collect();
        assert_eq!(w.a.stats.segments_sent, data.len() as u64);
        assert_eq!(w.a.stats.bytes_sent, data.iter().map(|s| s.seg.len as u64).sum::<u64>());
    }
}

#[test]
fn a_bare_fin_resent_in_recovery_gives_no_rtt_sample() {
    // All 20 segments and the FIN go in one flight; segment 14 and the FIN are lost. The
    // duplicate ACKs start NewReno recovery, the partial ACK of the repaired segment then
    // resends the FIN (no timeout), and the ACK of that FIN must not time the original FIN
    // (Karn), whose ACK waited for two repairs.
    let c = TcpConfig { initial_cwnd: 30, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.drop = Box::new(|_, i| i == 14);
    let mut fin_dropped = false;
    w.drop_bare = Box::new(move |s| {
        let drop = s.seg.has(flags::FIN) && !fin_dropped;
        fin_dropped |= drop;
        drop
    });
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(20_000);
    w.a.close(w.now, &mut w.out);
    w.emit(true);
    // a's latest RTT sample before and after the step in which its FIN is acknowledged.
    let mut prev = w.a.rtt.latest();
    let mut at_fin_ack = None;
    while w.step() {
        let latest = w.a.rtt.latest();
        if w.a.snd_una() == 20_002 && at_fin_ack.is_none() {
            at_fin_ack = Some((prev, latest));
        }
        prev = latest;
    }
    assert_eq!(w.b.stats.bytes_delivered, 20_000);
    assert_eq!((w.a.stats.timeouts, w.a.stats.fast_retransmits), (0, 1));
    let fins: Vec<&Sent> = w.log.iter().filter(|s| s.a_to_b && s.seg.has(flags::FIN) && s.seg.len == 0).collect();
    assert_eq!(fins.len(), 2);
    assert!(fins[1].seg.retransmit);
    assert_eq!(w.a.stats.retransmits, 2, "segment 14 and the FIN");
    // The estimator took no sample from the FIN's ACK (the original FIN, sent with the data,
    // would have timed three round trips).
    assert!(w.a.send_done());
    let (before, after) = at_fin_ack.expect("the FIN was acknowledged");
    assert_eq!(after, before, "no sample from the ACK of a retransmitted FIN");
    assert!(before < 50 * MS, "{before:?}");
}
