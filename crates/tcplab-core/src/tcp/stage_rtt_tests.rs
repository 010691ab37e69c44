//! `ReleaseLog`: samples from the stage's release, one per advancing ACK, none over a
//! retransmitted segment.

use super::*;

fn at(ms: u64) -> SimTime {
    SimTime::ZERO + SimDuration::from_millis(ms)
}

fn data(seq: u64) -> TcpHeader {
    TcpHeader { seq, len: 1000, ..TcpHeader::default() }
}

#[test]
fn sample_runs_from_release_to_ack() {
    let mut log = ReleaseLog::new();
    // Produced by TCP at 0 ms, released by the stage at 15 ms (a 15 ms hold), ACKed at 45 ms:
    // the stage's sample is 30 ms, the path's RTT; the hold is not in it.
    log.on_release(at(15), &data(1));
    log.on_release(at(16), &data(1001));
    assert_eq!(log.len(), 2);
    assert_eq!(log.on_ack(at(45), 1001), Some(SimDuration::from_millis(30)));
    // A duplicate gives nothing; the next advance times the newest segment it covers.
    assert_eq!(log.on_ack(at(46), 1001), None);
    assert_eq!(log.on_ack(at(47), 2001), Some(SimDuration::from_millis(31)));
    assert!(log.is_empty());
    // An ACK covering two segments times the newer.
    log.on_release(at(50), &data(2001));
    log.on_release(at(60), &data(3001));
    assert_eq!(log.on_ack(at(100), 4001), Some(SimDuration::from_millis(40)));
    // An ACK that covers nothing logged (a pure window update) gives nothing.
    assert_eq!(log.on_ack(at(101), 4002), None);
}

#[test]
fn retransmitted_segments_give_no_sample() {
    let mut log = ReleaseLog::new();
    for (j, seq) in [1, 1001, 2001].into_iter().enumerate() {
        log.on_release(at(j as u64), &data(seq));
    }
    log.on_release(at(200), &TcpHeader { retransmit: true, ..data(1001) });
    assert_eq!(log.len(), 3, "a retransmission is not logged as new data");
    assert_eq!(log.on_ack(at(30), 1001), Some(SimDuration::from_millis(30)));
    assert_eq!(log.on_ack(at(230), 2001), None, "Karn: the segment was sent twice");
    assert_eq!(log.on_ack(at(231), 3001), Some(SimDuration::from_millis(229)));
    // Pure ACKs and a second pass of logged data are not logged.
    log.on_release(at(240), &TcpHeader { seq: 3001, len: 0, ..TcpHeader::default() });
    log.on_release(at(241), &data(3001));
    log.on_release(at(242), &data(3001));
    assert_eq!(log.len(), 1);
}
