//! Nagle's algorithm by rule: RFC 896 (a short segment waits while anything is unacknowledged),
//! BSD (the closing tail goes with the FIN) and Linux's Minshall variant (a short segment waits
//! only while an earlier short one is unacknowledged).

use super::*;
use crate::tcp::NagleRule;

const RULES: [NagleRule; 3] = [NagleRule::Rfc896, NagleRule::Bsd, NagleRule::Linux];

/// A connection pair with MSS 1000, delayed ACKs every 2 segments (40 ms), the rule given,
/// opened and idle at 30 ms.
fn opened(rule: NagleRule, nagle: bool) -> Wire {
    let c = TcpConfig { nagle, nagle_rule: rule, delack_segments: 2, ..no_sack() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(30 * MS.as_ps()));
    w
}

/// The payload lengths of a's data segments sent so far.
fn lengths(w: &Wire) -> Vec<u32> {
    w.data_from_a().map(|s| s.seg.len).collect()
}

#[test]
fn every_rule_holds_a_second_short_segment_while_the_first_is_outstanding() {
    // Three 100-byte writes on an idle connection: the first goes (nothing is outstanding);
    // the others wait under every rule (for Linux's too, the first short one is unacked).
    for rule in RULES {
        for nagle in [true, false] {
            let mut w = opened(rule, nagle);
            w.write(100);
            w.write(100);
            w.write(100);
            assert_eq!(lengths(&w), if nagle { vec![100] } else { vec![100, 100, 100] }, "{rule:?} nagle={nagle}");
        }
    }
}

#[test]
fn linux_sends_a_short_tail_behind_full_segments_where_rfc_896_holds_it() {
    // One write of 2.5 segments: the two full segments go, then the 500-byte tail. RFC 896
    // (and BSD, the connection staying open) holds the tail until everything is acknowledged;
    // Linux sends it at once, no earlier short segment being outstanding.
    for rule in RULES {
        let mut w = opened(rule, true);
        w.write(2_500);
        let want = if rule == NagleRule::Linux { vec![1000, 1000, 500] } else { vec![1000, 1000] };
        assert_eq!(lengths(&w), want, "{rule:?}");
        // A second short write now waits under Linux too: the 500-byte tail is outstanding.
        w.write(300);
        assert_eq!(lengths(&w).len(), want.len(), "{rule:?}: a short segment behind a short one waits");
        // What is held goes once the short segment before it is acknowledged: under RFC 896 at
        // 50 ms (b ACKs the two full segments at once), under Linux at 90 ms (b delays its ACK
        // of the odd 500-byte segment by 40 ms).
        w.run_until(SimTime(89 * MS.as_ps()));
        let sent = lengths(&w).iter().map(|&l| l as u64).sum::<u64>();
        assert_eq!(sent, if rule == NagleRule::Linux { 2_500 } else { 2_800 }, "{rule:?}");
        w.run_until(SimTime(91 * MS.as_ps()));
        let n = lengths(&w);
        assert_eq!(n.iter().map(|&l| l as u64).sum::<u64>(), 2_800, "{rule:?}: {n:?}");
    }
}

#[test]
fn the_closing_tail_goes_with_the_fin_under_bsd_and_linux_rules() {
    // A short write after a full segment, then close: BSD and Linux send the tail (and the FIN)
    // at once; RFC 896 holds it until the full segment's ACK, which b delays by 40 ms (one
    // segment of two).
    for rule in RULES {
        let mut w = opened(rule, true);
        w.write(1_000);
        w.write(10);
        w.a.close(w.now, &mut w.out);
        w.emit(true);
        let t0 = w.now;
        let tail_sent = |w: &Wire| w.data_from_a().find(|s| s.seg.len == 10).map(|s| s.at);
        let fin_sent = |w: &Wire| w.log.iter().find(|s| s.a_to_b && s.seg.has(flags::FIN)).map(|s| s.at);
        if rule == NagleRule::Rfc896 {
            assert_eq!(tail_sent(&w), None);
            w.run_until_idle(10_000);
            // Held for the delayed ACK: 10 ms there, 40 ms of delay, 10 ms back.
            assert_eq!(tail_sent(&w), Some(t0 + SimDuration::from_millis(60)), "{rule:?}");
        } else {
            assert_eq!(tail_sent(&w), Some(t0), "{rule:?}");
            assert_eq!(fin_sent(&w), Some(t0), "{rule:?}: the FIN follows the tail");
            w.run_until_idle(10_000);
        }
        assert_eq!(w.b.stats.bytes_delivered, 1_010, "{rule:?}");
        assert!(w.a.send_done() && w.b.peer_closed(), "{rule:?}");
    }
}

#[test]
fn a_response_ending_short_is_delivered_one_delayed_ack_sooner_under_linux() {
    // A 21,500-byte response on a warm connection (an RPC server's answer): under RFC 896 its
    // 500-byte tail waits for the ACK of everything before it, and b delays the ACK of the odd
    // last full segment by 40 ms; Linux sends the tail behind the full segments. Delivery of
    // the last byte, measured from the write.
    let finish = |rule: NagleRule| {
        let c = TcpConfig { nagle_rule: rule, delack_segments: 2, initial_cwnd: 40, ..no_sack() };
        let mut w = Wire::new(c.clone(), c, MS);
        w.open();
        w.run_until(SimTime(10 * MS.as_ps()));
        let t0 = w.now;
        w.write(21_500);
        let mut done = None;
        while w.step() {
            if done.is_none() && w.b.stats.bytes_delivered == 21_500 {
                done = Some(w.now.since(t0));
            }
        }
        done.expect("all delivered")
    };
    let linux = finish(NagleRule::Linux);
    let rfc = finish(NagleRule::Rfc896);
    assert_eq!(linux, MS, "one one-way delay: the whole response leaves at once");
    // The 21st segment's ACK is delayed 40 ms, then 1 ms back and 1 ms for the tail.
    assert_eq!(rfc, SimDuration::from_millis(43), "RFC 896: {rfc:?}");
}
