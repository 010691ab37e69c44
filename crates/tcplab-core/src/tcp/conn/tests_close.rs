//! Options and the end of a connection: one-sided window scaling, counting resent FINs, and
//! the send buffer once everything is acknowledged.

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

#[test]
fn send_space_is_empty_once_the_fin_is_acknowledged() {
    // Once the FIN is acknowledged snd_una is past the end of the stream; neither query may
    // subtract past zero (a debug build panicked on the overflow).
    let mut w = Wire::new(cfg(), cfg(), 5 * MS);
    w.open();
    w.write(50_000);
    w.a.close(w.now, &mut w.out);
    w.emit(true);
    let mut steps = 0;
    while w.step() {
        steps += 1;
        assert!(w.a.unacked_app_bytes() <= 50_000);
        assert_eq!(w.a.send_space(), 0, "closed: no room for more");
        assert!(steps < 100_000);
    }
    assert!(w.a.send_done());
    assert!(w.a.snd_una() > 50_001, "the FIN is acknowledged");
    assert_eq!(w.a.unacked_app_bytes(), 0);
    assert_eq!(w.a.send_space(), 0);
}

/// Transfer with one end not offering window scaling and a large buffer at the other.
fn one_sided_scaling(a_scales: bool) -> Wire {
    let big = TcpConfig { rcvbuf: 10_000_000, sndbuf: 10_000_000, ..cfg() };
    let (ca, cb) = if a_scales { (big.clone(), TcpConfig { window_scaling: false, ..big }) } else { (TcpConfig { window_scaling: false, ..big.clone() }, big) };
    let mut w = Wire::new(ca, cb, 20 * MS);
    w.b.set_auto_read(true);
    w.open();
    w.write(5_000_000);
    // b sends too, so that each direction carries data under the other's window.
    w.b.write(w.now, 2_000_000, &mut w.out);
    w.emit(false);
    let mut max_out = [0u64; 2];
    while w.now < SimTime(3_000 * MS.as_ps()) && w.step() {
        max_out[0] = max_out[0].max(w.a.outstanding());
        max_out[1] = max_out[1].max(w.b.outstanding());
        // Neither end ever reads the other's window as more than the unscaled field holds.
        assert!(w.a.snd_wnd <= 65_535 && w.b.snd_wnd <= 65_535, "a {} b {}", w.a.snd_wnd, w.b.snd_wnd);
    }
    assert!(max_out[0] <= 65_535 && max_out[1] <= 65_535, "{max_out:?}");
    assert!(max_out[0] > 50_000 && max_out[1] > 50_000, "the windows were used: {max_out:?}");
    w
}

#[test]
fn window_scaling_needs_both_ends() {
    for a_scales in [true, false] {
        let w = one_sided_scaling(a_scales);
        // RFC 7323 §2.2: no scaling in either direction unless both SYNs carry the option.
        assert_eq!((w.a.window_shift(), w.b.window_shift()), (0, 0), "a scales: {a_scales}");
        // Every window either end advertised fits the 16-bit field unscaled.
        let max_win = |from_a: bool| w.log.iter().filter(|s| s.a_to_b == from_a).map(|s| s.seg.window).max().unwrap();
        assert!(max_win(true) <= 65_535 && max_win(false) <= 65_535, "a scales: {a_scales}");
        assert!(max_win(true) > 60_000 && max_win(false) > 60_000, "a scales: {a_scales}");
        // The option itself: the SYN-ACK answers a SYN without it with none (§2.2 "MUST NOT").
        let syn = w.log.iter().find(|s| s.a_to_b && s.seg.has(flags::SYN)).unwrap().seg;
        let synack = w.log.iter().find(|s| !s.a_to_b && s.seg.has(flags::SYN)).unwrap().seg;
        assert_eq!(syn.wscale.is_some(), a_scales);
        assert_eq!(synack.wscale, None, "a scales: {a_scales}");
    }
    // Both ends offering it: scaled windows beyond 64 KB (the control case).
    let big = TcpConfig { rcvbuf: 10_000_000, sndbuf: 10_000_000, ..cfg() };
    let mut w = Wire::new(big.clone(), big, 20 * MS);
    w.open();
    w.write(5_000_000);
    let mut max_out = 0;
    while w.now < SimTime(3_000 * MS.as_ps()) && w.step() {
        max_out = max_out.max(w.a.outstanding());
    }
    assert!(w.a.window_shift() > 0 && w.b.window_shift() > 0);
    assert!(w.log.iter().find(|s| !s.a_to_b && s.seg.has(flags::SYN)).unwrap().seg.wscale.is_some());
    assert!(max_out > 65_535, "{max_out}");
}
