//! BBR's rules one at a time, driven by hand-made rate samples (one ACK per packet-timed round
//! unless a test says otherwise).

use super::*;

const MSS: u32 = 1000;
const RTT: SimDuration = SimDuration::from_millis(40);

/// RTT/n.
fn part(n: u64) -> SimDuration {
    SimDuration(RTT.as_ps() / n)
}

/// Feeds a BBR controller ACKs: each one delivers `bytes` over one RTT and starts a round.
struct Feed {
    now: SimTime,
    total: u64,
    state: CaState,
    /// ACKs of segments sent before the current round began (no round starts).
    same_round: bool,
}

impl Feed {
    fn new() -> Self {
        Feed { now: SimTime::ZERO, total: 0, state: CaState::Open, same_round: false }
    }

    /// One ACK `after` the last one, delivering `bytes` over one RTT (a new round), with
    /// `inflight` bytes in flight before and after it, an RTT sample `rtt`.
    #[allow(clippy::too_many_arguments)] // each of the sample's fields a test varies
    fn ack(&mut self, b: &mut Bbr, after: SimDuration, bytes: u64, inflight: u64, app_limited: bool, losses: u64, rtt: SimDuration) -> RateSample {
        self.now += after;
        let prior = self.total;
        self.total += bytes;
        let rs = RateSample {
            now: self.now,
            mss: MSS,
            delivered: Some(bytes),
            interval: Some(RTT), // a sample spans about a round trip
            prior_delivered: if self.same_round { 0 } else { prior },
            is_app_limited: app_limited,
            acked_sacked: bytes,
            losses,
            prior_in_flight: inflight,
            inflight,
            rtt: Some(rtt),
            delivered_total: self.total,
            delivered_time: self.now,
            ca_state: self.state,
            srtt: Some(rtt),
        };
        b.on_rate_sample(&rs);
        rs
    }

    /// A round delivering at `rate` bytes/s for one RTT.
    fn round(&mut self, b: &mut Bbr, rate: u64, inflight: u64) {
        let bytes = rate * RTT.as_ps() / 1_000_000_000_000;
        self.ack(b, RTT, bytes, inflight, false, 0, RTT);
    }
}

fn bbr() -> Bbr {
    let mut b = Bbr::new(BbrConfig::default(), 10 * MSS as u64, MSS);
    b.seed(Rng::from_seed(7));
    b
}

/// A BBR controller whose STARTUP found 1.25e6 B/s (10 Mb/s) and which is now in PROBE_BW.
fn in_probe_bw(f: &mut Feed) -> Bbr {
    let mut b = bbr();
    for rate in [200_000, 400_000, 800_000, 1_250_000, 1_250_000, 1_250_000, 1_250_000] {
        f.round(&mut b, rate, 100 * MSS as u64);
    }
    assert_eq!(b.mode(), BbrMode::Drain);
    f.round(&mut b, 1_250_000, 10 * MSS as u64);
    assert_eq!(b.mode(), BbrMode::ProbeBw);
    b
}

#[test]
fn the_max_filter_keeps_the_best_sample_for_its_window_then_the_next_best() {
    // minmax_running_max over a window of 10 rounds: 100 at round 0 holds through round 10;
    // at round 11 it has left the window and the best sample since (50 at round 5) is the max.
    let mut m = MinMax::default();
    assert_eq!(m.running_max(10, 0, 100), 100);
    assert_eq!(m.running_max(10, 5, 50), 100);
    assert_eq!(m.running_max(10, 8, 40), 100);
    assert_eq!(m.running_max(10, 10, 40), 100);
    assert_eq!(m.running_max(10, 11, 40), 50, "the best aged out; the second best takes over");
    // A sample above the max restarts the window with it.
    assert_eq!(m.running_max(10, 12, 70), 70);
    // Nothing for more than a window: the next sample is the max, however small.
    assert_eq!(m.running_max(10, 30, 5), 5);
}

#[test]
fn btlbw_is_the_max_of_the_last_ten_rounds_and_app_limited_samples_only_raise_it() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    assert_eq!(b.btlbw(), 1_250_000);
    // An app-limited sample below the max is ignored, one above it taken.
    f.ack(&mut b, RTT, 10_000, 10_000, true, 0, RTT);
    assert_eq!(b.btlbw(), 1_250_000);
    // Ten rounds at half the rate: the old max lasts the window, then the new rate rules.
    let rounds_at = b.rounds();
    let mut dropped_at = None;
    for _ in 0..12 {
        f.round(&mut b, 625_000, 20 * MSS as u64);
        if b.btlbw() == 625_000 && dropped_at.is_none() {
            dropped_at = Some(b.rounds() - rounds_at);
        }
    }
    // The 1.25e6 sample was taken at round r; it stays while (round - r) <= 10.
    assert_eq!(dropped_at, Some(10), "BtlBw fell after the 10-round window");
}

#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth_and_not_on_app_limited_ones() {
    let mut f = Feed::new();
    let mut b = bbr();
    assert_eq!(b.gains(), (739, 739), "STARTUP: high_gain 2/ln2 for pacing and cwnd");
    for rate in [100_000, 200_000, 400_000, 800_000] {
        f.round(&mut b, rate, 50 * MSS as u64);
        assert_eq!(b.mode(), BbrMode::Startup);
    }
    // Growth of less than 25 %: 900 000 (+12.5 %) twice, then a third flat round.
    f.round(&mut b, 900_000, 50 * MSS as u64);
    f.round(&mut b, 900_000, 50 * MSS as u64);
    assert!(!b.full_bw_reached());
    // App-limited rounds do not count.
    for _ in 0..3 {
        f.ack(&mut b, RTT, 36_000, 50 * MSS as u64, true, 0, RTT);
    }
    assert!(!b.full_bw_reached(), "app-limited rounds never fill the pipe");
    f.round(&mut b, 900_000, 50 * MSS as u64);
    assert!(b.full_bw_reached(), "the third round without 25 % growth");
    assert_eq!(b.mode(), BbrMode::Drain);
    assert_eq!(b.gains(), (88, 739), "DRAIN: pacing 1/high_gain, cwnd high_gain");
    // A round with 25 % growth restarts the count.
    let mut g = Feed::new();
    let mut c = bbr();
    for rate in [100_000, 200_000, 200_000, 200_000, 250_000, 250_000, 250_000] {
        g.round(&mut c, rate, 50 * MSS as u64);
    }
    assert!(!c.full_bw_reached(), "two flat rounds, then 25 % more (250k) restarted the count");
    g.round(&mut c, 250_000, 50 * MSS as u64);
    assert!(c.full_bw_reached(), "the third flat round since");
}

#[test]
fn drain_lasts_until_the_flight_is_down_to_one_bdp() {
    let mut f = Feed::new();
    let mut b = bbr();
    for rate in [200_000, 400_000, 800_000, 1_250_000, 1_250_000, 1_250_000, 1_250_000] {
        f.round(&mut b, rate, 200 * MSS as u64);
    }
    assert_eq!(b.mode(), BbrMode::Drain);
    // BDP = 1.25e6 B/s × 40 ms = 50 000 bytes = 50 packets, + 3 quanta, rounded to even: 54.
    let target = b.inflight_target(b.btlbw(), BBR_UNIT);
    assert_eq!(target, 54);
    assert_eq!(b.ssthresh(), 54 * MSS as u64, "5.x sets ssthresh to the BDP on entering DRAIN");
    f.ack(&mut b, part(4), 10 * MSS as u64, (target as u64 + 1) * MSS as u64, false, 0, RTT);
    assert_eq!(b.mode(), BbrMode::Drain, "one packet above the BDP: still draining");
    f.ack(&mut b, part(4), 10 * MSS as u64, target as u64 * MSS as u64, false, 0, RTT);
    assert_eq!(b.mode(), BbrMode::ProbeBw, "at the BDP: PROBE_BW");
}

#[test]
fn probe_bw_starts_at_any_phase_but_the_draining_one() {
    let mut seen = [0u32; CYCLE_LEN];
    for seed in 0..400 {
        let mut b = bbr();
        b.seed(Rng::from_seed(seed));
        b.full_bw_reached = true;
        b.reset_probe_bw_mode();
        seen[b.cycle_idx()] += 1;
    }
    assert_eq!(seen[1], 0, "never the 3/4 phase first: {seen:?}");
    assert!(seen.iter().enumerate().all(|(i, n)| i == 1 || *n > 20), "every other phase: {seen:?}");
}

#[test]
fn the_gain_cycle_advances_once_per_min_rtt_in_order() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    let bdp = 54 * MSS as u64;
    // Walk to phase 2 (a gain-1 phase) whatever the start.
    while b.cycle_idx() != 2 {
        f.ack(&mut b, RTT + SimDuration(1), 50 * MSS as u64, 2 * bdp, true, 1, RTT);
    }
    let mut order = vec![];
    for _ in 0..16 {
        // A quarter of min_rtt per ACK: a gain-1 phase lasts four of them, then one more.
        let idx = b.cycle_idx();
        let mut acks = 0;
        // The probing phase needs the flight at 5/4 BDP (here twice the BDP) to end.
        let inflight = if idx == 0 { 2 * bdp } else { bdp };
        while b.cycle_idx() == idx && acks < 100 {
            f.ack(&mut b, part(4), 12 * MSS as u64, inflight, true, 0, RTT);
            acks += 1;
        }
        order.push((idx, acks));
        if idx >= 2 {
            assert_eq!(acks, 5, "a gain-1 phase ends on the first ACK more than min_rtt after it began");
        }
        assert_eq!(b.gains().0, PACING_GAINS[b.cycle_idx()]);
        assert_eq!(b.gains().1, 512, "PROBE_BW's cwnd gain 2");
    }
    let idx: Vec<usize> = order.iter().map(|p| p.0).collect();
    assert_eq!(&idx[..8], &[2, 3, 4, 5, 6, 7, 0, 1], "gains 1 ×6, then 5/4, then 3/4");
}

#[test]
fn the_probing_phase_holds_until_the_flight_reaches_five_quarters_of_bdp_or_a_loss() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    while b.cycle_idx() != 0 {
        f.ack(&mut b, RTT + SimDuration(1), 50 * MSS as u64, 200 * MSS as u64, true, 0, RTT);
    }
    // 5/4 BDP: ⌈62.5⌉ = 63, + 3, even: 66, + 2 in this phase: 68 packets.
    let target = b.inflight_target(b.btlbw(), BBR_UNIT * 5 / 4) as u64;
    assert_eq!(target, 68);
    for _ in 0..8 {
        f.ack(&mut b, part(2), 10 * MSS as u64, (target - 1) * MSS as u64, true, 0, RTT);
    }
    assert_eq!(b.cycle_idx(), 0, "four min_rtts below 5/4 BDP and no loss: still probing");
    f.ack(&mut b, part(2), 10 * MSS as u64, target * MSS as u64, true, 0, RTT);
    assert_eq!(b.cycle_idx(), 1, "the flight reached 5/4 BDP");
    // The 3/4 phase ends early once the flight is down to one BDP.
    f.ack(&mut b, part(4), 10 * MSS as u64, 60 * MSS as u64, true, 0, RTT);
    assert_eq!(b.cycle_idx(), 1);
    f.ack(&mut b, part(4), 10 * MSS as u64, 54 * MSS as u64, true, 0, RTT);
    assert_eq!(b.cycle_idx(), 2, "down to one BDP (54 packets) before min_rtt passed");
    // A loss ends the probing phase too.
    while b.cycle_idx() != 0 {
        f.ack(&mut b, RTT + SimDuration(1), 50 * MSS as u64, 200 * MSS as u64, true, 0, RTT);
    }
    f.ack(&mut b, part(2), 10 * MSS as u64, 10 * MSS as u64, true, 0, RTT);
    f.ack(&mut b, part(2) + SimDuration(1), 10 * MSS as u64, 10 * MSS as u64, true, 0, RTT);
    assert_eq!(b.cycle_idx(), 0, "a full min_rtt, no loss, a small flight: still probing");
    f.ack(&mut b, part(4), 10 * MSS as u64, 10 * MSS as u64, true, MSS as u64, RTT);
    assert_eq!(b.cycle_idx(), 1, "a loss after a full min_rtt ends it");
}

#[test]
fn cwnd_is_gain_times_bdp_plus_the_quantization_budget_and_pacing_is_gain_times_btlbw() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    while b.cycle_idx() != 3 {
        f.ack(&mut b, RTT + SimDuration(1), 50 * MSS as u64, 200 * MSS as u64, true, 0, RTT);
    }
    for _ in 0..30 {
        f.ack(&mut b, part(100), 5 * MSS as u64, 54 * MSS as u64, true, 0, RTT);
    }
    assert_eq!(b.cycle_idx(), 3);
    assert_eq!(b.cwnd_packets(), 104, "cwnd = 2·BDP + 3 quanta, even");
    assert_eq!(b.pacing_bytes_per_sec(), 1_250_000 * 99 / 100, "gain 1 × BtlBw less 1 %");
    assert_eq!(b.pacing_rate(), Some(1_237_500));
}

#[test]
fn probe_rtt_comes_after_ten_seconds_without_a_lower_rtt_and_lasts_200_ms_and_a_round() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    let cwnd_before = b.cwnd_packets();
    let start = f.now;
    // RTT samples above min_rtt for 10 s: no PROBE_RTT until the filter expires.
    let high = RTT + SimDuration::from_millis(5);
    while f.now.since(start) < SimDuration::from_secs(10) - RTT {
        f.ack(&mut b, RTT, 50 * MSS as u64, 50 * MSS as u64, false, 0, high);
        assert_ne!(b.mode(), BbrMode::ProbeRtt, "at {:?}", f.now.since(start));
    }
    let mut entered = None;
    for _ in 0..3 {
        f.ack(&mut b, RTT, 50 * MSS as u64, 50 * MSS as u64, false, 0, high);
        if b.mode() == BbrMode::ProbeRtt && entered.is_none() {
            entered = Some(f.now);
        }
    }
    let entered = entered.expect("PROBE_RTT once min_rtt is 10 s old");
    assert!(entered.since(start) > SimDuration::from_secs(10) - RTT && entered.since(start) <= SimDuration::from_secs(10) + 2 * RTT);
    assert_eq!(b.cwnd_packets(), 4, "PROBE_RTT's cwnd of 4 packets");
    assert_eq!(b.gains(), (BBR_UNIT, BBR_UNIT));
    assert!(b.holds_app_limited(), "its samples are marked app-limited");
    // The flight falls to 4 packets: 200 ms from here, and a round.
    let low = f.now;
    f.ack(&mut b, SimDuration::from_millis(10), 4 * MSS as u64, 4 * MSS as u64, true, 0, RTT);
    let timer_from = f.now;
    let _ = low;
    while f.now.since(timer_from) <= SimDuration::from_millis(200) {
        f.ack(&mut b, SimDuration::from_millis(20), 4 * MSS as u64, 4 * MSS as u64, true, 0, RTT);
        if f.now.since(timer_from) <= SimDuration::from_millis(200) {
            assert_eq!(b.mode(), BbrMode::ProbeRtt, "before 200 ms");
        }
    }
    f.ack(&mut b, SimDuration::from_millis(1), 4 * MSS as u64, 4 * MSS as u64, true, 0, RTT);
    assert_eq!(b.mode(), BbrMode::ProbeBw, "after 200 ms and a round: back to PROBE_BW");
    assert!(b.cwnd_packets() >= cwnd_before, "the cwnd from before PROBE_RTT restored ({} < {cwnd_before})", b.cwnd_packets());
}

#[test]
fn a_lower_rtt_restarts_the_min_rtt_window() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    for _ in 0..400 {
        // Every sample at min_rtt: each one refreshes the filter, so never PROBE_RTT.
        f.ack(&mut b, RTT, 50 * MSS as u64, 50 * MSS as u64, false, 0, RTT);
        assert_ne!(b.mode(), BbrMode::ProbeRtt);
    }
    assert!(f.now.since(SimTime::ZERO) > SimDuration::from_secs(15));
}

#[test]
fn recovery_conserves_packets_then_restores_the_cwnd_and_nothing_is_halved() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    for _ in 0..30 {
        f.ack(&mut b, part(100), 5 * MSS as u64, 54 * MSS as u64, true, 0, RTT);
    }
    let (cwnd, ssthresh) = (b.cwnd_packets(), b.ssthresh());
    b.on_congestion(&CongestionEvent { now: f.now, inflight: 80 * MSS as u64, mss: MSS });
    assert_eq!((b.cwnd_packets(), b.ssthresh()), (cwnd, ssthresh), "entering recovery halves nothing");
    f.state = CaState::Recovery;
    f.same_round = true;
    f.ack(&mut b, part(100), 2 * MSS as u64, 30 * MSS as u64, true, 3 * MSS as u64, RTT);
    assert_eq!(b.cwnd_packets(), 32, "packet conservation: in flight (30) + delivered (2)");
    f.ack(&mut b, part(100), MSS as u64, 30 * MSS as u64, true, 0, RTT);
    assert_eq!(b.cwnd_packets(), 32, "still conserving: at least in flight + delivered");
    f.state = CaState::Open;
    f.ack(&mut b, part(100), MSS as u64, 30 * MSS as u64, true, 0, RTT);
    assert_eq!(b.cwnd_packets(), cwnd, "recovery over: the cwnd from before restored");
}

#[test]
fn a_timeout_leaves_one_packet_and_the_next_ack_at_least_four() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    b.on_timeout(&TimeoutEvent { now: f.now, inflight: 50 * MSS as u64, mss: MSS, backoffs: 1 });
    assert_eq!(b.cwnd_packets(), 1);
    assert!(b.check_rules(&b.clone()).is_ok(), "one packet is allowed until the next ACK");
    f.state = CaState::Loss;
    f.ack(&mut b, RTT, MSS as u64, 0, false, 0, RTT);
    assert!(b.cwnd_packets() >= 4, "{}", b.cwnd_packets());
}

#[test]
fn the_rule_checker_catches_a_cwnd_beyond_the_gain() {
    let mut f = Feed::new();
    let mut b = in_probe_bw(&mut f);
    for _ in 0..30 {
        f.ack(&mut b, part(100), 5 * MSS as u64, 54 * MSS as u64, true, 0, RTT);
    }
    let before = b.clone();
    assert!(b.check_rules(&before).is_ok());
    b.w.cwnd += 50;
    b.own_cwnd = b.w.cwnd;
    assert!(b.check_rules(&before).is_err(), "a cwnd above 2·BDP + budget is refused");
    let mut c = before.clone();
    c.w.cwnd = 3;
    assert!(c.check_rules(&before).is_ok(), "a cwnd written from outside is the connection's to check");
    c.own_cwnd = 3;
    assert!(c.check_rules(&before).is_err(), "below 4 packets");
    let mut d = before.clone();
    d.pacing_gain = BBR_UNIT * 2;
    assert!(d.check_rules(&before).is_err(), "a gain that is not the mode's");
}

#[test]
fn the_handshake_rtt_sets_the_first_pacing_rate() {
    // bbr_init (Linux tcp_init_congestion_control, once the handshake is over) paces the first
    // window at high_gain × cwnd / srtt when the SYN or SYN-ACK gave srtt, less the 1 % margin;
    // without a sample over 1 ms, until the first one.
    let gain_rate = |cwnd_bytes: u64, rtt: SimDuration| {
        let bw = cwnd_bytes as u128 * 1_000_000_000_000 / rtt.as_ps() as u128;
        (bw * 739 / 256 * 99 / 100) as u64
    };
    let mut b = bbr();
    assert_eq!(b.pacing_bytes_per_sec(), gain_rate(10 * MSS as u64, SimDuration::from_millis(1)));
    b.on_established(Some(RTT));
    assert_eq!(b.pacing_bytes_per_sec(), gain_rate(10 * MSS as u64, RTT));
    // Only once: a later call (or one without a sample) changes nothing.
    b.on_established(Some(part(2)));
    assert_eq!(b.pacing_bytes_per_sec(), gain_rate(10 * MSS as u64, RTT));
    let mut c = bbr();
    c.on_established(None);
    assert_eq!(c.pacing_bytes_per_sec(), gain_rate(10 * MSS as u64, SimDuration::from_millis(1)));
}
