//! The pacing gate and the delivery-rate sampler, end to end on a sans-I/O pair: a BBR sender
//! releases segments len/rate apart through its pacing timer; a controller without a pacing
//! rate sends its window at once, with no pacing timer; the sampler's samples make BBR's
//! BtlBw the bottleneck's payload rate; the application-limited mark.

use super::*;
use crate::tcp::cc::{BbrConfig, CcConfig, CubicConfig};

fn bbr() -> TcpConfig {
    TcpConfig { cc: CcConfig::Bbr(BbrConfig::default()), initial_cwnd: 10, ..cfg() }
}

/// The send times of a's data segments.
fn data_times(w: &Wire) -> Vec<SimTime> {
    w.data_from_a().map(|s| s.at).collect()
}

#[test]
fn a_paced_sender_releases_segments_len_over_rate_apart() {
    let mut w = Wire::new(bbr(), bbr(), 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.a.state(), State::Established);
    let rate = w.a.controller().pacing_rate().expect("BBR paces");
    let t0 = w.now;
    w.write(100_000);
    // Only the first segment leaves at once; the pacing timer lets out the rest.
    assert_eq!(data_times(&w).len(), 1, "one segment before the pacing timer");
    let gap = SimDuration(1000 * 1_000_000_000_000 / rate);
    assert_eq!(w.a.next_deadline(), Some(t0 + gap), "the pacing timer at len/rate");
    // The initial window of ten goes out one gap apart (no ACK comes back within 20 ms).
    w.run_until(t0 + SimDuration::from_millis(15));
    let times = data_times(&w);
    assert_eq!(times.len(), 10, "the initial window, paced");
    for (i, t) in times.iter().enumerate() {
        assert_eq!(*t, t0 + SimDuration(gap.as_ps() * i as u64), "segment {i} at {i} gaps");
    }
    assert!(w.timer_fires.iter().filter(|(t, a)| *a && *t > t0).count() >= 9, "released by the pacing timer");
}

#[test]
fn a_bbr_sender_paces_its_first_window_from_the_handshake_rtt() {
    // Linux runs bbr_init when the handshake is over (tcp_init_congestion_control), after the
    // SYN-ACK's RTT sample: the first window leaves at high_gain × IW / srtt (less the 1 %
    // margin), not at IW over the 1 ms BBR assumes before any sample.
    let mut w = Wire::new(bbr(), bbr(), 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    let srtt = w.a.srtt().expect("the SYN-ACK gives an RTT sample");
    let iw = w.a.controller().cwnd();
    let bw = iw as u128 * 1_000_000_000_000 / srtt.as_ps() as u128;
    let want = (bw * 739 / 256 * 99 / 100) as u64;
    assert_eq!(w.a.controller().pacing_rate(), Some(want));
    let t0 = w.now;
    w.write(100_000);
    w.run_until(t0 + SimDuration::from_millis(15));
    let times = data_times(&w);
    assert_eq!(times.len(), 10, "the initial window");
    let gap = SimDuration(1000 * 1_000_000_000_000 / want);
    assert_eq!(times[9], t0 + SimDuration(9 * gap.as_ps()), "nine gaps of len/rate");
}

#[test]
fn without_a_pacing_rate_the_window_goes_at_once_and_no_pacing_timer_runs() {
    let c = TcpConfig { cc: CcConfig::Cubic(CubicConfig::default()), initial_cwnd: 10, ..cfg() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.a.pacing_next(), None);
    let t0 = w.now;
    w.write(100_000);
    let times = data_times(&w);
    assert_eq!(times.len(), 10, "the whole initial window");
    assert!(times.iter().all(|t| *t == t0));
    assert!(!w.a.timers.is_set(TimerKind::Pacing));
    assert!(!w.a.rate.on, "no sampler for a controller that does not own its window");
}

#[test]
fn the_rate_samples_make_btlbw_the_bottleneck_payload_rate() {
    // a's link serializes at 10 Mb/s (800 000 ps per byte of IP packet): the payload rate is
    // 1.25e6 B/s × 1000/ip_len.
    let mut w = Wire::new(bbr(), bbr(), 10 * MS);
    w.ps_per_byte = 800_000;
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(5_000_000);
    w.run_until(SimTime::from_secs_f64(3.0));
    let ip_len = w.data_from_a().next().unwrap().seg.ip_len() as f64;
    let payload_rate = 1.25e6 * 1000.0 / ip_len;
    let Controller::Bbr(b) = w.a.controller() else { panic!("BBR") };
    let btlbw = b.btlbw() as f64;
    assert!((btlbw / payload_rate - 1.0).abs() < 0.01, "BtlBw {btlbw} B/s against {payload_rate}");
    assert!(b.full_bw_reached());
    let min_rtt = b.min_rtt().unwrap();
    assert!(min_rtt >= 20 * MS && min_rtt < 22 * MS, "min_rtt {min_rtt:?}");
}

#[test]
fn a_write_with_less_than_a_segment_unsent_and_room_in_the_window_marks_the_flight_app_limited() {
    let mut w = Wire::new(bbr(), bbr(), 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    assert_eq!(w.a.rate.app_limited, 0);
    w.write(500);
    assert_ne!(w.a.rate.app_limited, 0, "nothing queued and the window open: app-limited");
    w.run_until(SimTime(100 * MS.as_ps()));
    assert_eq!(w.a.rate.app_limited, 0, "the mark ends once what was in flight is delivered");
    // A write with a backlog of a segment or more is not app-limited.
    let c = bbr();
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.open();
    w.run_until(SimTime(25 * MS.as_ps()));
    w.write(100_000);
    assert_ne!(w.a.rate.app_limited, 0, "the first write finds nothing queued: app-limited");
    w.a.rate.app_limited = 0;
    w.write(1_000);
    assert_eq!(w.a.rate.app_limited, 0, "a backlog of a segment or more: not marked");
}
