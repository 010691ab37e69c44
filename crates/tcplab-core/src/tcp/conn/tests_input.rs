//! The controller input channel (`cc::input`, `Connection::feed_controller`): inputs reach the
//! controller, never grow the window (the checker catches a controller that does), and wait
//! out fast recovery.

use super::*;
use crate::tcp::cc::{CcConfig, CcInput, ImtcpBg, ImtcpBgConfig, InRange};
use crate::tcp::Endpoint;
use crate::units::BitRate;

fn imtcp_bg() -> TcpConfig {
    TcpConfig { cc: CcConfig::ImtcpBg(ImtcpBgConfig::default()), initial_cwnd: 10, ..no_sack() }
}

fn bg(c: &Connection) -> &ImtcpBg {
    match c.controller() {
        Controller::ImtcpBg(b) => b,
        other => panic!("not imtcp-bg: {}", other.name()),
    }
}

fn avail(mbps: u64) -> CcInput {
    CcInput::AvailableBandwidth { rate: BitRate(mbps * 1_000_000), span: 100 * MS, range: InRange::Within }
}

/// A transfer of `bytes` under way for `ms` milliseconds over a 10 ms one-way wire.
fn running(c: TcpConfig, bytes: u64, ms: u64) -> Wire {
    let mut w = Wire::new(c.clone(), TcpConfig { cc: CcConfig::NewReno(Default::default()), ..c }, 10 * MS);
    w.open();
    w.write(bytes);
    w.run_until(SimTime::ZERO + ms * MS);
    w
}

#[test]
fn input_reaches_the_controller() {
    // Slow start has opened the window past 20 segments by 150 ms (RTT 20 ms).
    let mut w = running(imtcp_bg(), 10_000_000, 150);
    assert!(w.a.cwnd() > 40_000, "{}", w.a.cwnd());
    assert_eq!(bg(&w.a).avail(), None);
    // 8 Mb/s over RTT_min 20 ms: a cap of 20,000 bytes, applied at once.
    let now = w.now;
    w.a.feed_controller(now, &avail(8));
    assert_eq!((bg(&w.a).avail(), bg(&w.a).results()), (Some(8e6), 1));
    assert_eq!(w.a.cwnd(), 20_000);
    // The window stays capped as the transfer goes on.
    while w.now < SimTime::ZERO + 2_000 * MS && w.step() {
        assert!(w.a.cwnd() <= 20_000, "{}", w.a.cwnd());
    }
    assert!(w.b.stats.bytes_delivered > 1_500_000);
    // Through the endpoint (an agent's path), and to a controller that ignores inputs.
    let mut e = Endpoint::new(Connection::new(imtcp_bg()));
    e.feed_controller(SimTime::ZERO, &avail(5));
    assert_eq!(bg(e.conn()).avail(), Some(5e6));
    let mut w = running(no_sack(), 10_000_000, 150);
    let before = w.a.cwnd();
    let now = w.now;
    w.a.feed_controller(now, &avail(1));
    assert_eq!(w.a.cwnd(), before, "newreno takes no input");
}

#[test]
#[should_panic(expected = "an input grew the window")]
fn input_never_grows_the_window() {
    // A controller broken to add a segment on every input: the checker stops the call.
    let mut w = running(imtcp_bg(), 10_000_000, 150);
    let Controller::ImtcpBg(b) = &mut w.a.cc else { unreachable!() };
    b.grow_on_input = 1000;
    let now = w.now;
    w.a.feed_controller(now, &avail(1_000));
}

#[test]
fn an_input_that_lowers_the_window_passes_the_checker() {
    // The same broken controller adding nothing is fine, and a cap far below the window is a
    // decrease the checker allows.
    let mut w = running(imtcp_bg(), 10_000_000, 150);
    let now = w.now;
    w.a.feed_controller(now, &avail(1));
    assert_eq!(w.a.cwnd(), 2_000, "1 Mb/s · 20 ms = 2.5 segments: 2 (the floor too)");
}

#[test]
fn input_during_recovery_applies_at_exit() {
    // Lose the 31st data segment: NewReno recovery. An input fed during it is kept by the
    // connection (the controller has not seen it) and handed over in the call that ends
    // recovery, so the window recovery leaves is already capped.
    let mut w = Wire::new(imtcp_bg(), no_sack(), 10 * MS);
    w.drop = Box::new(|_, i| i == 30);
    w.open();
    w.write(300_000);
    while !w.a.in_recovery() {
        assert!(w.step(), "recovery never began");
    }
    let now = w.now;
    let window = w.a.cwnd();
    w.a.feed_controller(now, &avail(4)); // 4 Mb/s · 20 ms = 10 segments
    assert_eq!((w.a.pending_inputs(), bg(&w.a).avail(), w.a.cwnd()), (1, None, window), "kept, not applied");
    let ssthresh = w.a.ssthresh();
    assert!(ssthresh > 10_000, "recovery would leave {ssthresh} uncapped");
    while w.a.in_recovery() {
        assert!(w.step(), "recovery never ended");
        assert_eq!(bg(&w.a).avail().is_some(), !w.a.in_recovery());
    }
    // The call that ended recovery applied it: ssthresh capped to 10 segments, no ACK since.
    assert_eq!((w.a.pending_inputs(), bg(&w.a).avail(), w.a.cwnd()), (0, Some(4e6), 10_000));
    assert_eq!(w.a.stats.fast_retransmits, 1);
    w.run_until_idle(1_000_000);
    assert_eq!(w.b.stats.bytes_delivered, 300_000);
}
