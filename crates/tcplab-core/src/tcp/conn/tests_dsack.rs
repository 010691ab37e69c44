//! D-SACK (`dsack`) and Linux 2.4's undo (`undo`) on real connections: the receiver's first
//! block, the sender's reading of it, and the undos after a spurious fast retransmit (a
//! reordered segment) and a spurious timeout (a delay spike), never after a real loss.

use super::*;

/// Linux 2.4's recovery with the two keys as given: SACK, timestamps (10 ms clock), FACK
/// rate-halving, moderation to in-flight + 3, a 200 ms RTO floor.
fn linux24(dsack: bool, undo: bool) -> TcpConfig {
    let mut c = TcpConfig { recovery: RecoveryKind::LinuxSack, timestamps: true, moderate_cwnd: 3, initial_ssthresh: 30_000, ts_tick: 10 * MS, dsack, undo, ..cfg() };
    c.rto.min = 200 * MS;
    c
}

/// A connection pair that has moved `bytes` from a to b and gone idle.
fn after_transfer(ca: TcpConfig, cb: TcpConfig, bytes: u64) -> Wire {
    let mut w = Wire::new(ca, cb, 10 * MS);
    w.open();
    w.write(bytes);
    w.run_until_idle(100_000);
    w
}

/// A copy of a's data segment starting at `seq`, as the wire carried it.
fn copy_of(w: &Wire, seq: u64) -> TcpHeader {
    w.data_from_a().find(|s| s.seg.seq == seq).expect("that segment was sent").seg
}

/// Hand `seg` to b now; returns b's answers.
fn to_b(w: &mut Wire, seg: &TcpHeader) -> Vec<TcpHeader> {
    w.b.on_segment(w.now, seg, &mut w.out);
    let segs: Vec<TcpHeader> = w.out.segments.drain(..).collect();
    w.out.clear();
    segs
}

#[test]
fn a_duplicate_below_rcv_nxt_is_the_first_sack_block_of_an_immediate_ack() {
    for dsack in [false, true] {
        let mut w = after_transfer(cfg(), TcpConfig { dsack, ..cfg() }, 3_000);
        let dup = copy_of(&w, 1_001);
        let acks = to_b(&mut w, &dup);
        assert_eq!(acks.len(), 1, "a duplicate is ACKed at once");
        let blocks: Vec<(u64, u64)> = acks[0].sack_blocks().collect();
        assert_eq!(acks[0].ack, 3_001);
        if dsack {
            assert_eq!(blocks, vec![(1_001, 2_001)], "RFC 2883: the duplicate, below the ACK");
        } else {
            assert!(blocks.is_empty());
        }
        // Sent once: the next ACK carries no D-SACK.
        let mut probe = dup;
        probe.seq = 3_001;
        probe.len = 500;
        let acks = to_b(&mut w, &probe);
        assert!(acks.iter().all(|a| a.sack_blocks().len() == 0), "a D-SACK block is reported once");
    }
    // Partly old: the old part is reported, the rest taken, and the ACK goes at once.
    let mut w = after_transfer(cfg(), TcpConfig { dsack: true, delack_segments: 2, ..cfg() }, 3_000);
    let mut part = copy_of(&w, 2_001);
    part.seq = 2_501;
    let acks = to_b(&mut w, &part);
    assert_eq!(acks.len(), 1, "ACKed at once");
    assert_eq!(acks[0].ack, 3_501);
    assert_eq!(acks[0].sack_blocks().collect::<Vec<_>>(), vec![(2_501, 3_001)]);
}

#[test]
fn a_copy_of_held_out_of_order_data_is_reported_before_the_block_holding_it() {
    let ca = cfg();
    let cb = TcpConfig { dsack: true, ..cfg() };
    let mut w = Wire::new(ca, cb, 10 * MS);
    w.drop = Box::new(|s, _| s.seg.seq == 1_001 && !s.seg.retransmit);
    w.open();
    w.write(4_000);
    // The first flight (4 segments) is in: b holds 2001..4001 out of order.
    w.run_until(SimTime(35 * MS.as_ps()));
    assert_eq!((w.b.rcv_nxt, w.b.ooo.to_vec()), (1_001, vec![(2_001, 4_001)]));
    let dup = copy_of(&w, 2_001);
    let acks = to_b(&mut w, &dup);
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].ack, 1_001);
    assert_eq!(acks[0].sack_blocks().collect::<Vec<_>>(), vec![(2_001, 3_001), (2_001, 4_001)], "the D-SACK, then its block");
    // Partly held: the overlap only.
    let mut over = dup;
    over.seq = 3_501;
    let acks = to_b(&mut w, &over);
    assert_eq!(acks[0].sack_blocks().collect::<Vec<_>>(), vec![(3_501, 4_001), (2_001, 4_501)]);
}

/// a with 10 segments out towards a peer whose window (10 segments) holds it below a
/// 20-segment window, the peer silent: ACKs are written by hand.
fn sender_with_room(moderate: u32) -> Wire {
    let ca = TcpConfig { initial_cwnd: 20, cwnd_validation: false, moderate_cwnd: moderate, recovery: RecoveryKind::LinuxSack, ..cfg() };
    let cb = TcpConfig { rcvbuf: 10_000, window_scaling: false, ..cfg() };
    let mut w = Wire::new(ca, cb, 10 * MS);
    w.open();
    w.run_until(SimTime(20 * MS.as_ps()) + SimDuration(1));
    w.drop = Box::new(|_, _| true);
    w.write(100_000);
    assert_eq!(w.a.outstanding(), 10_000);
    w
}

/// An ACK of `ack` from b with `blocks` (timestamps echoing a's latest).
fn ack_from_b(w: &Wire, ack: u64, blocks: &[(u64, u64)]) -> TcpHeader {
    let last = w.data_from_a().last().unwrap().seg;
    let mut h = TcpHeader { seq: 1, ack, flags: flags::ACK, window: 10_000, ..TcpHeader::default() };
    h.timestamps = last.timestamps.map(|(v, _)| (1, v));
    h.set_sack_blocks(blocks);
    h
}

#[test]
fn the_sender_takes_no_sack_information_from_a_dsack_block() {
    // The same ACK with and without a D-SACK first block leaves the sender in the same state:
    // nothing SACKed, and the ACK not "dubious" (which would moderate the unused window to
    // in-flight + 3 segments).
    let after = |blocks: &[(u64, u64)]| {
        let mut w = sender_with_room(3);
        w.now += MS;
        let h = ack_from_b(&w, 3_001, blocks);
        w.a.on_segment(w.now, &h, &mut w.out);
        (w.a.cwnd(), w.a.sacked_bytes(), w.a.stats.dsacks_received)
    };
    let (cwnd, sacked, n) = after(&[]);
    assert_eq!((sacked, n), (0, 0));
    assert!(cwnd > 8_000 + 3_000, "the window ({cwnd}) is far above the flight");
    assert_eq!(after(&[(1_001, 2_001)]), (cwnd, 0, 1), "a D-SACK below the ACK");
    // Inside the second block (RFC 2883 §4): only the second block is SACK information.
    let with_second = |blocks: &[(u64, u64)]| {
        let mut w = sender_with_room(3);
        w.now += MS;
        let h = ack_from_b(&w, 1_001, blocks);
        w.a.on_segment(w.now, &h, &mut w.out);
        (w.a.cwnd(), w.a.sacked_bytes(), w.a.stats.dsacks_received)
    };
    let (c, s, _) = with_second(&[(4_001, 7_001)]);
    assert_eq!(with_second(&[(5_001, 6_001), (4_001, 7_001)]), (c, s, 1));
}

/// The 301st data segment (988 payload bytes with timestamps).
const LATE: u64 = 1 + 300 * 988;

/// A bulk transfer at 100 Mb/s over 10 ms each way in which a's data segment starting at
/// `late` is held `extra` longer on the wire (once), or with `lose` dropped instead.
fn reordered(dsack: bool, undo: bool, late: u64, extra: SimDuration, lose: bool) -> Wire {
    let c = linux24(dsack, undo);
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 80_000;
    if lose {
        w.drop = Box::new(move |s, _| s.seg.seq == late && !s.seg.retransmit);
    }
    w.open();
    w.write(3_000_000);
    let mut held = false;
    while w.step() {
        if !held && !lose {
            if let Some(p) = w.queue.iter_mut().find(|p| p.to_b && p.seg.seq == late && !p.seg.retransmit) {
                p.at += extra;
                held = true;
            }
        }
        if w.a.send_done() || w.a.unacked_app_bytes() == 0 {
            break;
        }
    }
    w
}

/// The times and kinds of a's events.
fn a_events(w: &Wire, kind: TcpEventKind) -> Vec<SimTime> {
    w.events.iter().filter(|(_, from_a, e)| *from_a && e.kind == kind).map(|(t, _, _)| *t).collect()
}

#[test]
fn a_fast_retransmit_caused_by_reordering_is_undone_with_ssthresh_and_cwnd_restored() {
    // Segment 300 001 is held 3 ms (36 segments at 100 Mb/s): a fast retransmit, needless.
    let late = LATE;
    let extra = 3 * MS;
    let off = reordered(false, false, late, extra, false);
    let on = reordered(true, true, late, extra, false);
    for w in [&off, &on] {
        assert_eq!(w.a.stats.fast_retransmits, 1, "the reordering starts one recovery");
        assert_eq!(w.a.stats.timeouts, 0);
    }
    assert_eq!(off.a.stats.undos, 0);
    assert!(a_events(&off, TcpEventKind::Undo).is_empty());
    let undos = a_events(&on, TcpEventKind::Undo);
    let exit = a_events(&on, TcpEventKind::RecoveryExit)[0];
    assert!(undos.len() >= 2 && undos.iter().all(|&t| t <= exit), "partial undos, then the full one at the recovery's end: {undos:?}, exit {exit:?}");
    assert_eq!(*undos.last().unwrap(), exit);
    assert!(on.b.stats.acks_sent > 0 && on.a.stats.dsacks_received >= 1, "the retransmission came back D-SACKed");
    // Replay the run with undo to the recovery and read the windows around it.
    let c = linux24(true, true);
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 80_000;
    w.open();
    w.write(3_000_000);
    let (mut held, mut before, mut reduced, mut undone) = (false, None, None, None);
    let mut prev = (0u64, 0u64);
    while w.step() {
        let undone_now = w.a.stats.undos > 0 && !w.a.in_recovery() && w.a.stats.fast_retransmits == 1 && reduced.is_some();
        if !held {
            if let Some(p) = w.queue.iter_mut().find(|p| p.to_b && p.seg.seq == late && !p.seg.retransmit) {
                p.at += extra;
                held = true;
            }
        }
        if before.is_none() && w.a.stats.fast_retransmits == 1 {
            before = Some(prev);
            reduced = Some((w.a.cwnd(), w.a.ssthresh()));
        }
        if undone_now {
            undone = Some((w.a.cwnd(), w.a.ssthresh(), w.a.inflight()));
            break;
        }
        prev = (w.a.cwnd(), w.a.ssthresh());
    }
    let (cwnd0, ss0) = before.expect("a recovery");
    let (_, ss_reduced) = reduced.unwrap();
    let (cwnd, ss, inflight) = undone.expect("an undo");
    let mss = w.a.smss() as u64;
    let segs = cwnd0 / mss;
    let prior = ss0.max(((segs >> 1) + (segs >> 2)) * mss);
    assert!(ss_reduced < prior, "the recovery cut ssthresh ({ss_reduced} from {prior})");
    assert_eq!(ss, prior, "ssthresh back to tcp_current_ssthresh before the recovery");
    assert!(!w.a.in_recovery(), "undone at the recovery's end");
    assert!(
        cwnd > ss_reduced && cwnd <= (2 * ss_reduced).min(ss),
        "cwnd {cwnd}: above the reduced ssthresh, at most twice it (moderated to the flight + 3 segments, then sent: {inflight} in flight)"
    );
    // Without undo the window stays at the reduced ssthresh.
    assert!(
        off.a.ssthresh() <= ss_reduced.max(off.a.ssthresh()) && on.a.ssthresh() > off.a.ssthresh(),
        "undo keeps the larger ssthresh: {} vs {}",
        on.a.ssthresh(),
        off.a.ssthresh()
    );
}

#[test]
fn a_real_loss_is_never_undone() {
    // The same segment lost instead of held: the retransmission is needed (no D-SACK, and
    // the ACK that fills the hole echoes the retransmission's timestamp).
    let w = reordered(true, true, LATE, 3 * MS, true);
    assert_eq!(w.a.stats.fast_retransmits, 1);
    assert_eq!(w.a.stats.dsacks_received, 0);
    assert_eq!(w.a.stats.undos, 0, "a needed retransmission is never undone");
    // A blackout of 600 ms: timeouts whose retransmissions are needed.
    let c = linux24(true, true);
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 80_000;
    w.drop = Box::new(|s, _| s.at >= SimTime(500 * MS.as_ps()) && s.at < SimTime(1_100 * MS.as_ps()));
    w.open();
    w.write(3_000_000);
    w.run_until_idle(1_000_000);
    assert!(w.a.stats.timeouts >= 1);
    assert_eq!(w.a.stats.undos, 0);
    assert_eq!(w.b.stats.bytes_delivered, 3_000_000);
}

/// A transfer over 10 ms each way in which every segment b sends between 300 and 690 ms is
/// held until 700 ms (a return path that stalls longer than the RTO, then delivers).
fn stalled(undo: bool) -> Wire {
    let c = linux24(true, undo);
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 80_000;
    w.open();
    w.write(3_000_000);
    let (from, to, until) = (SimTime(300 * MS.as_ps()), SimTime(690 * MS.as_ps()), SimTime(700 * MS.as_ps()));
    let mut order = 0;
    while w.step() {
        for p in w.queue.iter_mut().filter(|p| !p.to_b && p.order > order) {
            let sent = SimTime(p.at.0 - w.delay.as_ps());
            if sent >= from && sent < to {
                p.at = until + SimDuration(p.order); // Kept in order.
            }
        }
        order = w.queue.iter().map(|p| p.order).max().unwrap_or(order).max(order);
        if w.a.unacked_app_bytes() == 0 {
            break;
        }
    }
    w
}

#[test]
fn a_spurious_timeout_is_undone_by_the_echoed_timestamps() {
    let off = stalled(false);
    let on = stalled(true);
    for w in [&off, &on] {
        assert_eq!(w.a.stats.timeouts, 1, "the stall outlasts the RTO once");
        assert_eq!(w.b.stats.bytes_delivered, 3_000_000);
    }
    assert_eq!(off.a.stats.undos, 0);
    assert_eq!(on.a.stats.undos, 1, "tcp_try_undo_loss on the first delayed ACK");
    let t = a_events(&on, TcpEventKind::Undo)[0];
    assert!(t >= SimTime(700 * MS.as_ps()) && t < SimTime(701 * MS.as_ps()), "undone when the held ACKs arrive: {t:?}");
    assert!(on.a.stats.retransmits < off.a.stats.retransmits, "the repair stops: {} retransmissions with undo, {} without", on.a.stats.retransmits, off.a.stats.retransmits);
}

#[test]
fn dsack_blocks_alone_change_no_sender_decision() {
    // With undo off, a sender given D-SACKs sends exactly what one given none sends.
    let sent = |dsack: bool| {
        let w = reordered(dsack, false, LATE, 3 * MS, false);
        w.data_from_a().map(|s| (s.at, s.seg.seq, s.seg.len)).collect::<Vec<_>>()
    };
    let with = sent(true);
    assert!(!with.is_empty());
    assert_eq!(with, sent(false));
}

#[test]
fn with_sack_linux_starts_a_recovery_on_sacked_data_not_on_counted_duplicates() {
    // tcp_time_to_recover: `fackets_out > reordering`. Duplicates that SACK nothing new (a
    // D-SACK of a segment that arrived twice, or no block at all) start nothing, however many.
    for blocks in [vec![], vec![(1, 1_001)]] {
        let mut w = sender_with_room(0);
        let una = w.a.snd_una;
        for _ in 0..6 {
            let h = ack_from_b(&w, una, &blocks);
            w.a.on_segment(w.now, &h, &mut w.out);
        }
        assert!(w.a.recovery.is_none(), "six duplicates with blocks {blocks:?} started a recovery");
        assert_eq!(w.a.stats.fast_retransmits, 0);
    }
    // One segment missing and SACKed data up to three segments above snd_una (fackets_out 3)
    // is not yet enough; up to four (the classic three duplicates, each SACKing one) is.
    let mut w = sender_with_room(0);
    let una = w.a.snd_una;
    for top in [2, 3, 3] {
        let h = ack_from_b(&w, una, &[(una + 1_000, una + top * 1_000)]);
        w.a.on_segment(w.now, &h, &mut w.out);
        assert!(w.a.recovery.is_none(), "fackets_out {top} ≤ 3");
    }
    let h = ack_from_b(&w, una, &[(una + 1_000, una + 4_000)]);
    w.a.on_segment(w.now, &h, &mut w.out);
    assert!(w.a.recovery.is_some(), "fackets_out 4 > 3 starts fast recovery");
    assert_eq!(w.a.stats.fast_retransmits, 1);
}
