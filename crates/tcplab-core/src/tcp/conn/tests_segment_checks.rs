//! What an arriving segment must carry to be accepted (RFC 793 §3.9's checks), and what the
//! SYN-ACK announces — each found by running Linux's packetdrill scripts against the model
//! (`packetdrill/`): validate-established-no-flags, ts_recent/invalid_ack, the SYN-ACK's MSS
//! in every passive-open script.

use super::*;

/// An established pair (b listening) with nothing in flight.
fn established(c: TcpConfig) -> Wire {
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(35 * MS.as_ps()));
    assert_eq!((w.a.state(), w.b.state()), (State::Established, State::Established));
    w
}

#[test]
fn a_data_segment_without_ack_is_dropped() {
    // RFC 793 §3.9, "fifth, check the ACK field": if the ACK bit is off, drop the segment.
    let mut w = established(cfg());
    let mut out = Output::default();
    let seg = TcpHeader { seq: 1, ack: 0, len: 1000, flags: 0, window: 65_535, ..TcpHeader::default() };
    w.b.on_segment(w.now, &seg, &mut out);
    assert_eq!((w.b.readable(), w.b.rcv_nxt()), (0, 1), "nothing delivered");
    assert!(out.segments.is_empty(), "and nothing answered");
}

#[test]
fn a_segment_acknowledging_unsent_data_is_dropped_whole() {
    // Linux `tcp_ack` discards such a segment (RFC 793: SEG.ACK > SND.NXT): its FIN and data
    // are not taken, and its TSval does not become TS.Recent.
    let c = TcpConfig { timestamps: true, ..cfg() };
    let mut w = established(c);
    let mut out = Output::default();
    let recent = w.b.ts_recent;
    let bad = TcpHeader { seq: 1, ack: 9_999, len: 0, flags: flags::ACK | flags::FIN, window: 65_535, timestamps: Some((200_000, 1)), ..TcpHeader::default() };
    w.b.on_segment(w.now, &bad, &mut out);
    assert!(!w.b.peer_closed(), "the FIN is not taken");
    assert_eq!(w.b.ts_recent, recent, "TS.Recent unchanged");
    let good = TcpHeader { seq: 1, ack: 1, len: 1000, flags: flags::ACK, window: 65_535, timestamps: Some((201, 1)), ..TcpHeader::default() };
    w.b.on_segment(w.now, &good, &mut out);
    assert_eq!((w.b.rcv_nxt(), w.b.ts_recent), (1001, 201));
}

#[test]
fn the_syn_ack_announces_this_end_s_own_mss() {
    // RFC 6691: the MSS option says what this end can receive, whatever the peer announced
    // (the SYN-ACK said the smaller of the two).
    let a = TcpConfig { mss: 1000, ..cfg() };
    let b = TcpConfig { mss: 1460, ..cfg() };
    let mut w = Wire::new(a, b, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    let synack = w.log.iter().find(|s| !s.a_to_b && s.seg.has(flags::SYN)).expect("a SYN-ACK").seg;
    assert_eq!(synack.mss, Some(1460));
    assert_eq!((w.a.smss(), w.b.smss()), (1000, 1000), "both send at the smaller");
}
