//! The SACK scoreboard: RFC 6675's IsLost at its boundaries.

use super::*;

/// A sender with 30 full segments (bytes 1..30001) outstanding and nothing acknowledged, fed
/// one duplicate ACK carrying `blocks`; returns the connection and what it sent in answer.
fn after_one_dupack(blocks: &[(u64, u64)], dupthresh: u32) -> (Connection, Vec<TcpHeader>) {
    let c = TcpConfig { initial_cwnd: 30, recovery: RecoveryKind::Sack, dupthresh, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.a.state(), State::Established);
    w.write(30_000);
    assert_eq!((w.a.snd_una(), w.a.snd_nxt()), (1, 30_001));
    w.queue.clear(); // Nothing arrives: the ACK below is the receiver's only word.
    let mut ack = TcpHeader { seq: 1, ack: 1, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
    ack.set_sack_blocks(blocks);
    let mut out = Output::default();
    w.a.on_segment(w.now, &ack, &mut out);
    assert_eq!(w.a.stats.dupacks_received, 1);
    (w.a, out.segments)
}

/// True when the scoreboard deems byte `seq` lost (RFC 6675 IsLost; not SACKed).
fn is_lost(c: &Connection, seq: u64) -> bool {
    seq < c.lost_below() && !c.sb.sacked().contains(seq)
}

#[test]
fn sack_loss_needs_dupthresh_blocks_or_more_than_dupthresh_minus_one_segments_above() {
    // RFC 6675 IsLost(SeqNum): DupThresh discontiguous SACKed sequences above SeqNum, or more
    // than (DupThresh − 1)·SMSS bytes SACKed above it. One duplicate ACK is below DupThresh,
    // so fast recovery starts (retransmitting byte 1) exactly when IsLost(1).
    type Case<'a> = (&'a str, &'a [(u64, u64)], Option<u64>);
    let cases: [Case; 6] = [
        // Two blocks, 2·SMSS bytes: exactly DupThresh − 1 of each, not lost.
        ("2 blocks, 2000 bytes", &[(2_001, 3_001), (4_001, 5_001)], None),
        // Three blocks of 100 bytes: DupThresh blocks though few bytes; everything below the
        // lowest of them is lost.
        ("3 blocks, 300 bytes", &[(2_001, 2_101), (3_001, 3_101), (4_001, 4_101)], Some(2_001)),
        // One block of exactly 2·SMSS bytes, and one byte more.
        ("1 block, 2000 bytes", &[(3_001, 5_001)], None),
        ("1 block, 2001 bytes", &[(3_001, 5_002)], Some(3_001)),
        // Two blocks, 2001 bytes: the byte count decides, at the lower block.
        ("2 blocks, 2001 bytes", &[(2_001, 3_001), (4_001, 5_002)], Some(2_001)),
        // Four blocks of 100 bytes: only below the third from the top is lost; the hole
        // between the two upper blocks (2 blocks, 200 bytes above it) is not.
        ("4 blocks, 400 bytes", &[(2_001, 2_101), (3_001, 3_101), (4_001, 4_101), (5_001, 5_101)], Some(3_001)),
    ];
    for (name, blocks, lost_below) in cases {
        let (c, sent) = after_one_dupack(blocks, 3);
        assert_eq!(c.lost_below(), lost_below.unwrap_or(1), "{name}");
        assert_eq!(c.in_recovery(), lost_below.is_some(), "{name}");
        let rtx: Vec<u64> = sent.iter().filter(|s| s.retransmit).map(|s| s.seq).collect();
        if lost_below.is_some() {
            assert_eq!(rtx.first(), Some(&1), "{name}: the first hole goes at once");
        } else {
            assert!(rtx.is_empty(), "{name}: {rtx:?}");
        }
    }
    // Byte by byte around the blocks of the four-block case.
    let (c, _) = after_one_dupack(&[(2_001, 2_101), (3_001, 3_101), (4_001, 4_101), (5_001, 5_101)], 3);
    for (seq, lost) in [(1, true), (2_000, true), (2_050, false), (2_101, true), (3_000, true), (3_001, false), (3_101, false), (4_000, false), (4_101, false), (6_000, false)] {
        assert_eq!(is_lost(&c, seq), lost, "byte {seq}");
    }
    // DupThresh 4: three blocks or 3·SMSS bytes are not enough, four blocks or 3001 bytes are.
    let (c, _) = after_one_dupack(&[(2_001, 2_101), (3_001, 3_101), (4_001, 4_101)], 4);
    assert_eq!(c.lost_below(), 1);
    let (c, _) = after_one_dupack(&[(2_001, 2_101), (3_001, 3_101), (4_001, 4_101), (5_001, 5_101)], 4);
    assert_eq!(c.lost_below(), 2_001);
    let (c, _) = after_one_dupack(&[(3_001, 6_001)], 4);
    assert_eq!(c.lost_below(), 1);
    let (c, _) = after_one_dupack(&[(3_001, 6_002)], 4);
    assert_eq!(c.lost_below(), 3_001);
}

#[test]
fn only_rfc_6675_sends_a_rescue_retransmission() {
    // Ten segments out, the first and the last three lost, SACKs for 2..7: RFC 6675's rule 4
    // resends the highest un-SACKed segment once (9001); Linux never had that rule (2.6
    // forward-retransmits only below the highest SACK; 4.11+ not at all).
    for (kind, rescue) in [(RecoveryKind::Sack, true), (RecoveryKind::LinuxSack, false), (RecoveryKind::LinuxPrr, false)] {
        let c = TcpConfig { initial_cwnd: 10, recovery: kind, ..cfg() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.open();
        w.run_until(SimTime(25 * MS.as_ps()));
        w.write(10_000);
        w.queue.clear();
        let mut out = Output::default();
        for k in 2..=7 {
            let mut ack = TcpHeader { seq: 1, ack: 1, flags: flags::ACK, window: w.a.snd_wnd, ..TcpHeader::default() };
            ack.set_sack_blocks(&[(1_001, k * 1_000 + 1)]);
            w.a.on_segment(w.now, &ack, &mut out);
        }
        assert!(w.a.in_recovery(), "{kind:?}");
        let resent: Vec<u64> = out.segments.iter().filter(|s| s.retransmit).map(|s| s.seq).collect();
        assert_eq!(resent.first(), Some(&1), "{kind:?}: the hole first");
        assert_eq!(resent.contains(&9_001), rescue, "{kind:?}: {resent:?}");
    }
}
