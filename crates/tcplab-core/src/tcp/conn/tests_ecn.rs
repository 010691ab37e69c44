//! ECN (RFC 3168 §6.1) and DCTCP's end-host rules (RFC 8257 §3.2–3.3), and the randomised RTO.

use super::*;
use crate::net::packet::Ecn;
use crate::tcp::cc::{CcConfig, DctcpConfig};

fn ecn() -> TcpConfig {
    TcpConfig { ecn: true, ..cfg() }
}

fn dctcp() -> TcpConfig {
    TcpConfig { ecn: true, cc: CcConfig::Dctcp(DctcpConfig::default()), ..cfg() }
}

fn syn(w: &Wire, from_a: bool) -> TcpHeader {
    w.log.iter().find(|s| s.a_to_b == from_a && s.seg.has(flags::SYN)).expect("a SYN").seg
}

#[test]
fn ecn_is_negotiated_only_when_both_ends_ask() {
    for (a, b, agreed) in [(true, true, true), (true, false, false), (false, true, false), (false, false, false)] {
        let mut w = Wire::new(TcpConfig { ecn: a, ..cfg() }, TcpConfig { ecn: b, ..cfg() }, MS);
        transfer(&mut w, 20_000);
        assert_eq!((w.a.ecn_negotiated(), w.b.ecn_negotiated()), (agreed, agreed), "a {a} b {b}");
        // An ECN-setup SYN carries ECE and CWR; the SYN-ACK answering it, ECE alone.
        assert_eq!(syn(&w, true).has(flags::ECE | flags::CWR), a);
        let synack = syn(&w, false);
        assert_eq!((synack.has(flags::ECE), synack.has(flags::CWR)), (agreed, false));
        assert_eq!(syn(&w, true).ecn, Ecn::NotEct, "RFC 3168 §6.1.1: a SYN is not ECT");
        let ect = w.data_from_a().filter(|s| s.seg.ecn == Ecn::Ect0).count();
        assert_eq!(ect, if agreed { 20 } else { 0 }, "new data is ECT(0) only with ECN agreed");
        assert_eq!(w.b.stats.bytes_delivered, 20_000);
    }
}

#[test]
fn a_mark_is_echoed_until_cwr_and_the_sender_halves_once_without_retransmitting() {
    let mut w = Wire::new(TcpConfig { initial_cwnd: 10, ..ecn() }, ecn(), MS);
    w.mark = Box::new(|_, i| i == 12);
    transfer(&mut w, 60_000);
    assert_eq!(w.b.stats.ce_received, 1);
    assert_eq!(w.a.stats.ecn_reductions, 1);
    assert_eq!(w.a.stats.retransmits, 0, "a mark is not a loss");
    // Pure ACKs and retransmissions are not ECT (RFC 3168 §6.1.4, §6.1.5); here no ACK is.
    assert!(w.acks_from_b().all(|s| s.seg.ecn == Ecn::NotEct));
    // b echoes from the marked segment's ACK on, and stops at the ACK of the CWR segment.
    let marked_end = w.data_from_a().nth(12).unwrap().seg.seq + 1000;
    let cwr: Vec<&Sent> = w.data_from_a().filter(|s| s.seg.has(flags::CWR)).collect();
    assert_eq!(cwr.len(), 1, "CWR once, on the first new segment after the reduction");
    let cwr_end = cwr[0].seg.seq + 1000;
    for s in w.acks_from_b().filter(|s| s.seg.ack > 1) {
        let echoing = s.seg.ack >= marked_end && s.seg.ack < cwr_end;
        assert_eq!(s.seg.has(flags::ECE), echoing, "ACK {}", s.seg.ack);
    }
    // The reduction was Reno's halving of the flight, with nothing resent.
    assert!(w.events.iter().all(|(_, _, e)| e.kind != TcpEventKind::FastRetransmit));
}

#[test]
fn the_sender_reduces_at_most_once_per_window() {
    // Five marks in one window, then one much later: two reductions.
    let mut w = Wire::new(TcpConfig { initial_cwnd: 10, ..ecn() }, ecn(), MS);
    w.mark = Box::new(|_, i| (12..17).contains(&i) || i == 150);
    transfer(&mut w, 200_000);
    assert_eq!(w.b.stats.ce_received, 6);
    assert_eq!(w.a.stats.ecn_reductions, 2);
}

#[test]
fn without_ecn_agreed_nothing_is_marked_or_reduced() {
    let mut w = Wire::new(cfg(), ecn(), MS);
    w.mark = Box::new(|_, _| true);
    transfer(&mut w, 50_000);
    assert_eq!((w.b.stats.ce_received, w.a.stats.ecn_reductions), (0, 0));
    // A DCTCP listener answering a peer that did not offer ECN sends nothing ECT, its
    // SYN-ACK included (Linux tcp_ecn_send_synack).
    let mut w = Wire::new(cfg(), dctcp(), MS);
    transfer(&mut w, 20_000);
    assert!(!w.b.ecn_negotiated());
    assert_eq!(syn(&w, false).ecn, Ecn::NotEct);
    assert!(w.log.iter().all(|s| s.seg.ecn == Ecn::NotEct), "no ECT without ECN agreed");
}

#[test]
fn dctcp_marks_every_segment_and_echoes_each_segments_ce_state() {
    // Delayed ACKs every 2 segments: the receiver's state machine (RFC 8257 §3.2) must ACK
    // at once when the CE state changes, so every ACK's ECE is the state of all it covers.
    let c = TcpConfig { delack_segments: 2, initial_cwnd: 10, ..dctcp() };
    let mut w = Wire::new(c.clone(), c, MS);
    let pattern = |i: u64| (i / 3) % 2 == 1 && i < 60; // runs of 3 marked, 3 not
    w.mark = Box::new(move |_, i| pattern(i));
    transfer(&mut w, 100_000);
    assert!(w.a.ecn_negotiated());
    assert_eq!((syn(&w, true).ecn, syn(&w, false).ecn), (Ecn::Ect0, Ecn::Ect0), "Linux sends DCTCP's handshake ECT");
    assert!(w.data_from_a().all(|s| s.seg.ecn == Ecn::Ect0));
    assert!(w.acks_from_b().filter(|s| s.seg.ack > 1).all(|s| s.seg.ecn == Ecn::Ect0), "DCTCP sends ACKs ECT too (Linux)");
    // The CE state of each data byte, from the data segments as sent (none were lost).
    let data: Vec<(u64, bool)> = w.data_from_a().enumerate().map(|(i, s)| (s.seg.seq + s.seg.len as u64, pattern(i as u64))).collect();
    let mut prev = 1;
    for s in w.acks_from_b().filter(|s| s.seg.ack > 1 && s.seg.ack <= 100_001) {
        let covered: Vec<bool> = data.iter().filter(|(end, _)| *end > prev && *end <= s.seg.ack).map(|&(_, m)| m).collect();
        if let Some(&first) = covered.first() {
            assert!(covered.iter().all(|&m| m == first), "ACK {} covers mixed CE states {covered:?}", s.seg.ack);
            assert_eq!(s.seg.has(flags::ECE), first, "ACK {}", s.seg.ack);
        }
        prev = prev.max(s.seg.ack);
    }
    assert_eq!(w.b.stats.ce_received, 30);
    assert!(w.a.stats.ecn_reductions >= 1);
    assert_eq!(w.a.stats.retransmits, 0);
}

#[test]
fn dctcp_cuts_less_than_half_once_alpha_has_learnt_a_light_marking() {
    // One mark in a hundred: α falls well below 1 and the cuts are gentle, where classic ECN
    // halves the window each time.
    let run = |c: TcpConfig| {
        let mut w = Wire::new(c.clone(), c, MS);
        w.ps_per_byte = 8_000; // 1 Gb/s: the window grows without limit otherwise
        w.mark = Box::new(|_, i| i % 100 == 99);
        transfer(&mut w, 3_000_000);
        let alpha = match w.a.controller() {
            Controller::Dctcp(d) => Some(d.alpha()),
            _ => None,
        };
        (w.a.stats.ecn_reductions, w.a.controller().ssthresh(), alpha)
    };
    assert_eq!(Connection::new(dctcp()).controller().name(), "dctcp");
    let (n_dctcp, ss_dctcp, alpha) = run(dctcp());
    let (n_reno, ss_reno, _) = run(ecn());
    assert!(n_dctcp > 5 && n_reno > 5, "{n_dctcp} {n_reno}");
    assert!(alpha.unwrap() < 256, "α learnt a light marking: {alpha:?}/1024");
    assert!(ss_dctcp > ss_reno, "DCTCP keeps a larger window: {ss_dctcp} vs {ss_reno}");
}

#[test]
fn the_randomised_rto_draws_per_timer_within_its_range_from_its_own_stream() {
    let timeouts = |randomize: f64, seed: u64| {
        let mut c = TcpConfig { sack: false, ..cfg() };
        c.rto.randomize = randomize;
        let mut w = Wire::new(c.clone(), c, SimDuration::from_micros(50));
        w.a.seed_rto(Rng::from_seed(seed));
        // Lose everything after the handshake for a while: repeated timeouts.
        w.drop = Box::new(|s, _| s.at < SimTime::ZERO + SimDuration::from_secs(3));
        transfer(&mut w, 2_000);
        let fires: Vec<SimTime> = w.timer_fires.iter().filter(|(_, a)| *a).map(|(t, _)| *t).collect();
        let rto1 = fires.windows(2).map(|p| p[1].since(p[0]).as_ps() as f64).collect::<Vec<_>>();
        (rto1, w.b.stats.bytes_delivered)
    };
    let (plain, got) = timeouts(0.0, 1);
    assert_eq!(got, 2_000);
    let (r1, _) = timeouts(0.5, 1);
    let (r1_again, _) = timeouts(0.5, 1);
    let (r2, _) = timeouts(0.5, 2);
    assert_eq!(r1, r1_again, "same stream, same timers");
    assert_ne!(r1, r2, "another stream, other timers");
    // Each backed-off interval lies in [RTO, 1.5·RTO) of the plain one (exponential backoff).
    for (k, (&p, &r)) in plain.iter().zip(&r1).enumerate() {
        // The plain run's k-th interval is 2^k·RTO; the randomised run's k-th timer is its own
        // draw on the same backed-off RTO.
        assert!(r >= p && r < 1.5 * p + 1.0, "timer {k}: {r} vs plain {p}");
    }
    assert!(r1.iter().zip(&plain).any(|(r, p)| r > p), "some draw lengthens a timer");
}

#[test]
fn an_ack_carrying_the_echo_that_reduces_the_window_does_not_grow_it_first() {
    // With α near 0 (α starts at 0, gain 1/1024) DCTCP's cut is a few bytes, so the window
    // after the echo must be at most the window before it: the ACK's slow-start growth must
    // not slip in ahead of the reduction (it did, +1000 bytes, found by the invariant checker;
    // Linux enters CWR before `tcp_cong_control`).
    let c = TcpConfig { initial_cwnd: 10, cc: CcConfig::Dctcp(DctcpConfig { alpha_on_init: 0, shift_g: 10, ..DctcpConfig::default() }), ..dctcp() };
    let mut w = Wire::new(c.clone(), c, MS);
    w.open();
    w.run_until(SimTime(3 * MS.as_ps()));
    assert!(w.a.ecn_negotiated());
    w.write(20_000);
    w.queue.clear();
    let before = w.a.cwnd();
    let ack = TcpHeader { seq: 1, ack: 1_001, flags: flags::ACK | flags::ECE, window: w.a.snd_wnd, ..TcpHeader::default() };
    let mut out = Output::default();
    w.a.on_segment(w.now, &ack, &mut out);
    assert_eq!(w.a.stats.ecn_reductions, 1);
    assert!(w.a.cwnd() <= before && w.a.cwnd() >= before - 10, "no growth on the ACK that reduces: {} against {before}", w.a.cwnd());
    // The next ACK without the echo grows the window again.
    let ack = TcpHeader { seq: 1, ack: 2_001, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
    w.a.on_segment(w.now, &ack, &mut out);
    assert!(w.a.cwnd() > before);
}
