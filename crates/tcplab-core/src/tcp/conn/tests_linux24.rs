//! Linux 2.4's window rules on a real connection: `tcp_moderate_cwnd` (`moderate_cwnd`), RFC
//! 2861's restart after idle and application-limited decay (`cwnd_idle_restart`,
//! `cwnd_app_limited_decay`), and the CWR state's gradual cut (`cwr_reduction`).

use super::*;
use crate::tcp::config::CwrReduction;

/// A sender held by b's 8-segment receive window after its window grew without validation
/// (ns-3 style) to many times that: a dubious ACK then meets a window far above the flight.
fn rwnd_limited(moderate: u32) -> Wire {
    let ca = TcpConfig { cwnd_validation: false, moderate_cwnd: moderate, ..cfg() };
    let cb = TcpConfig { rcvbuf: 8_000, window_scaling: false, ..cfg() };
    let mut w = Wire::new(ca, cb, 20 * MS);
    w.b.set_auto_read(true);
    // One segment lost after 2 s: b's next ACKs are duplicates with SACK.
    let mut lost = false;
    w.drop = Box::new(move |s, _| {
        let drop = !lost && s.at >= SimTime(2_000 * MS.as_ps());
        lost |= drop;
        drop
    });
    w.open();
    w.write(10_000_000);
    w
}

#[test]
fn moderation_cuts_the_window_to_the_flight_plus_three_on_a_duplicate_ack() {
    let first_dupack = |moderate: u32| {
        let mut w = rwnd_limited(moderate);
        while w.a.stats.dupacks_received == 0 {
            assert!(w.step());
        }
        assert!(!w.a.in_recovery(), "one duplicate ACK starts no recovery");
        (w.a.cwnd(), w.a.inflight())
    };
    // Off: the window the sender never used stays (it grew on every ACK).
    let (cwnd, _) = first_dupack(0);
    assert!(cwnd >= 40_000, "unmoderated window {cwnd}");
    // On: tcp_try_to_open's tcp_moderate_cwnd leaves in-flight + 3 segments; the flight is
    // at most b's window, so the window is at most 11 segments.
    let (cwnd, inflight) = first_dupack(3);
    assert!(cwnd <= 11_000 && cwnd <= inflight + 3_000, "moderated window {cwnd} with {inflight} in flight");
}

#[test]
fn an_idle_sender_halves_its_window_per_rto_idle_and_keeps_three_quarters_as_ssthresh() {
    // 1 MB with ssthresh at 30 segments, then 500 ms without data (two and a half RTOs of
    // 200 ms), then more data: tcp_cwnd_restart halves the window twice and raises ssthresh
    // to ¾ of the window before the idle time.
    let run = |restart: bool| {
        let c = TcpConfig { cwnd_idle_restart: restart, initial_ssthresh: 30_000, ..cfg() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        w.open();
        w.write(1_000_000);
        w.run_until_idle(1_000_000);
        assert_eq!(w.a.outstanding(), 0);
        assert_eq!(w.a.rto(), 200 * MS, "the RTO floor, a 20 ms path");
        let (cwnd, ssthresh) = (w.a.cwnd(), w.a.ssthresh());
        let last = w.data_from_a().map(|s| s.at).max().unwrap();
        w.now = last + 500 * MS;
        w.write(100_000);
        let burst = w.data_from_a().filter(|s| s.at == w.now).count() as u64;
        (cwnd, ssthresh, w.a.cwnd(), w.a.ssthresh(), burst)
    };
    let (cwnd, ssthresh, after, ss_after, burst) = run(false);
    assert_eq!((after, ss_after), (cwnd, ssthresh), "no restart: the window waits unused");
    assert_eq!(burst, cwnd / 1_000);
    let (cwnd, ssthresh, after, ss_after, burst) = run(true);
    let segs = cwnd / 1_000;
    assert!(segs >> 2 > 4, "the restart window (4 segments at MSS 1000) is not reached: {segs}");
    assert_eq!(after, (segs >> 2) * 1_000, "halved once per RTO idle beyond the first, from {segs} segments");
    assert_eq!(ss_after, ssthresh.max(((segs >> 1) + (segs >> 2)) * 1_000), "tcp_current_ssthresh");
    assert_eq!(burst, segs >> 2, "the first flight after the idle time");
    // Down to the restart window after a long idle time: tcp_init_cwnd's 4 segments (MSS at
    // most 1095 bytes, an RTT sample, ssthresh set).
    let c = TcpConfig { cwnd_idle_restart: true, initial_ssthresh: 30_000, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.write(1_000_000);
    w.run_until_idle(1_000_000);
    w.now += SimDuration::from_secs(30);
    w.write(100_000);
    assert_eq!(w.a.cwnd(), 4_000);
}

/// A window grown by 1 MB of bulk data, then an application that writes two segments every
/// 10 ms (a 20 ms path) for 2 s; with `sndbuf_bound` the sender instead keeps a 4-segment
/// send buffer full. Returns the window before and after the second phase.
fn app_limited(decay: bool, sndbuf_bound: bool) -> (u64, u64, u64) {
    let c = TcpConfig { cwnd_app_limited_decay: decay, initial_ssthresh: 100_000, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.b.set_auto_read(true);
    w.open();
    w.write(1_000_000);
    w.run_until_idle(1_000_000);
    let before = w.a.cwnd();
    let start = w.now;
    if sndbuf_bound {
        w.a.set_sndbuf(4_000);
    }
    let mut next = start;
    while w.now < start + SimDuration::from_secs(2) {
        if sndbuf_bound {
            w.write(1 << 20); // A bulk writer: the buffer takes only what fits.
            assert!(w.step());
            continue;
        }
        if w.now >= next {
            w.write(2_000);
            next += 10 * MS;
        }
        match w.peek() {
            Some(t) if t <= next => {
                w.step();
            }
            _ => w.now = next,
        }
    }
    (before, w.a.cwnd(), w.a.ssthresh())
}

#[test]
fn an_application_limited_window_decays_toward_what_is_used() {
    let (before, after, _) = app_limited(false, false);
    assert_eq!(after, before, "no decay: validation only stops growth");
    let (before, after, ssthresh) = app_limited(true, false);
    assert!(before >= 60_000, "the bulk phase grew the window: {before}");
    // Ten RTOs of (cwnd + used)/2 with at most a few segments used.
    assert!(after <= 8_000, "decayed window {after} from {before}");
    assert!(ssthresh >= 100_000u64.max(before / 1_000 * 3 / 4 * 1_000), "ssthresh kept at ¾ of the window: {ssthresh}");
}

#[test]
fn a_sender_held_by_its_send_buffer_keeps_its_window() {
    // The application waits for room in the send buffer (Linux SOCK_NOSPACE): the window is
    // not the application's to lose.
    let (before, after, _) = app_limited(true, true);
    assert_eq!(after, before);
}

/// A sender with ECN whose 40th segment is marked, in slow start on a 1 Gb/s, 2 ms path:
/// the window each ACK leaves while the reduction lasts (from the ACK that carries the echo
/// until the state is Open), and ssthresh.
fn marked(cwr: CwrReduction) -> (Vec<u64>, u64, Wire) {
    let c = TcpConfig { ecn: true, cwr_reduction: cwr, initial_cwnd: 10, ..cfg() };
    let mut w = Wire::new(c.clone(), c, MS);
    w.ps_per_byte = 8_000;
    w.mark = Box::new(|_, i| i == 40);
    w.open();
    w.write(2_000_000);
    let (mut windows, mut una) = (vec![], 0);
    while w.step() {
        if w.a.stats.ecn_reductions == 1 && w.a.snd_una() != una {
            una = w.a.snd_una();
            windows.push(w.a.cwnd());
            if w.a.linux_ca_state() == 0 {
                break;
            }
        }
    }
    (windows, w.a.ssthresh(), w)
}

#[test]
fn cwr_lowers_the_window_one_segment_per_two_acks_without_growth() {
    let (at_once, ssthresh, _) = marked(CwrReduction::AtOnce);
    assert_eq!(at_once[0], ssthresh, "at once: the window is ssthresh from the echo on");
    let (w, ssthresh, conn) = marked(CwrReduction::RateHalving);
    assert!(w[0] >= ssthresh * 3 / 2, "CWR keeps the window at first: {} against ssthresh {ssthresh}", w[0]);
    // One window per ACK, the last the one that leaves CWR (tcp_complete_cwr: at most
    // ssthresh). Before it: never up, one segment down every second ACK (the steady sender
    // keeps the flight at the window, so the in-flight + 1 clamp never cuts deeper).
    let (last, during) = w.split_last().unwrap();
    assert!(*last <= ssthresh, "{w:?}");
    assert!(during.windows(2).all(|p| p[1] <= p[0] && p[0] - p[1] <= 1_000), "{w:?}");
    let steps = during.windows(2).filter(|p| p[1] < p[0]).count();
    assert!(steps >= 5 && steps <= during.len() / 2 + 1, "{steps} decreases over {} ACKs: {w:?}", during.len());
    assert!(*last <= *during.last().unwrap());
    assert_eq!((conn.a.stats.retransmits, conn.a.stats.ecn_reductions), (0, 1));
}

#[test]
fn a_loss_found_in_cwr_starts_recovery_without_a_second_reduction() {
    // Segment 40 marked, segment 44 lost: the duplicate ACKs come while the window is in CWR.
    let run = |cwr: CwrReduction| {
        let c = TcpConfig { ecn: true, cwr_reduction: cwr, initial_cwnd: 10, recovery: RecoveryKind::LinuxSack, ..cfg() };
        let mut w = Wire::new(c.clone(), c, MS);
        w.ps_per_byte = 8_000;
        w.mark = Box::new(|_, i| i == 40);
        w.drop = Box::new(|_, i| i == 44);
        w.open();
        w.write(2_000_000);
        let mut at_echo = None;
        while !w.a.in_recovery() {
            assert!(w.step());
            if w.a.stats.ecn_reductions == 1 && at_echo.is_none() {
                at_echo = Some(w.a.ssthresh());
            }
        }
        (at_echo.unwrap(), w.a.ssthresh())
    };
    let (echo, recovery) = run(CwrReduction::RateHalving);
    assert_eq!(recovery, echo, "Linux recalculates ssthresh only below CWR");
    let (echo, recovery) = run(CwrReduction::AtOnce);
    assert!(recovery < echo, "at once, the loss reduces again: {echo} then {recovery}");
}

#[test]
fn a_refusal_by_the_local_queue_enters_cwr_from_the_window_in_flight() {
    // The host's queue refuses the last two segments of a burst (`withhold`, as the
    // simulation calls it): ssthresh at once, the window kept at in-flight + 1 segment, then
    // lowered over the next ACKs.
    let c = TcpConfig { cwr_reduction: CwrReduction::RateHalving, initial_cwnd: 10, ..cfg() };
    let mut w = Wire::new(c.clone(), c, MS);
    w.ps_per_byte = 8_000;
    w.open();
    w.write(2_000_000);
    while w.a.cwnd() < 30_000 {
        assert!(w.step());
    }
    // The newest two data segments a sent, taken back from the wire.
    let mut refused = vec![];
    for _ in 0..2 {
        let i = w.queue.iter().rposition(|p| p.to_b && p.seg.len > 0).unwrap();
        refused.insert(0, w.queue.remove(i).seg);
    }
    let prior = w.a.cwnd();
    w.a.withhold(w.now, &refused, &mut w.out);
    w.emit(true);
    assert_eq!(w.a.stats.local_reductions, 1);
    assert_eq!(w.a.linux_ca_state(), 2, "CWR");
    assert!(w.a.ssthresh() < prior);
    assert_eq!(w.a.cwnd(), prior.min(w.a.inflight() + 1_000), "__tcp_enter_cwr");
    let mut windows = vec![w.a.cwnd()];
    while w.a.linux_ca_state() == 2 {
        assert!(w.step());
        windows.push(w.a.cwnd());
    }
    assert!(windows.windows(2).all(|p| p[1] <= p[0]), "no growth in CWR: {windows:?}");
    assert!(*windows.last().unwrap() <= w.a.ssthresh());
    assert_eq!(w.a.stats.retransmits, 0);
}
