//! ImTCP's stage, sans-I/O: its pure steps (rates, grid, trend, estimate, ranges) and a
//! sender with the stage beside a plain receiver over a modelled path.

use super::*;
use crate::tcp::{Endpoint, TcpConfig, Wake};
use crate::units::SimDuration;

const MS: SimDuration = SimDuration::from_millis(1);

/// 1460-byte MSS without timestamps: 1500-byte IP packets. One ACK per segment.
fn cfg(hz: u32) -> TcpConfig {
    TcpConfig { mss: 1460, sack: false, delack_segments: 1, sndbuf: 1 << 30, rcvbuf: 256 << 10, initial_cwnd: 4, hz, ..TcpConfig::default() }
}

/// A sender (end 0, with the stage unless `stage` is `None`) and a receiver joined by a path
/// of one-way delay `delay`; data crosses a FIFO bottleneck of `rate` bit/s (IP bytes) with
/// no buffer limit; `drop` loses chosen data-direction segments (by their index among the
/// sender's segments on the wire).
struct Path {
    now: SimTime,
    ends: [Endpoint; 2],
    delay: SimDuration,
    rate: f64,
    free: SimTime,
    /// (arrival, order, to, segment)
    wire: Vec<(SimTime, u64, usize, TcpHeader)>,
    order: u64,
    /// (departure, from, segment, left from a wake-up of its end)
    log: Vec<(SimTime, usize, TcpHeader, bool)>,
    drop: Vec<usize>,
    sent0: usize,
    out: Output,
    measurements: Vec<Measurement>,
}

impl Path {
    fn new(hz: u32, phase: SimDuration, stage: Option<ImtcpConfig>, rate: f64, delay: SimDuration) -> Self {
        let mut c = Connection::new(cfg(hz));
        c.set_clock_phase(phase);
        let sender = match stage {
            Some(s) => Endpoint::with_variant(c, Box::new(ImtcpStage::new(s))),
            None => Endpoint::new(c),
        };
        let receiver = Endpoint::new(Connection::new(cfg(hz)));
        Path {
            now: SimTime::ZERO,
            ends: [sender, receiver],
            delay,
            rate,
            free: SimTime::ZERO,
            wire: vec![],
            order: 0,
            log: vec![],
            drop: vec![],
            sent0: 0,
            out: Output::default(),
            measurements: vec![],
        }
    }

    fn emit(&mut self, from: usize, wake: bool) {
        self.measurements.append(&mut self.out.measurements);
        for seg in std::mem::take(&mut self.out.segments) {
            self.log.push((self.now, from, seg, wake));
            let at = if from == 0 {
                self.sent0 += 1;
                if self.drop.contains(&(self.sent0 - 1)) {
                    continue;
                }
                let start = self.free.max(self.now);
                self.free = start + SimDuration::from_secs_f64(seg.ip_len() as f64 * 8.0 / self.rate);
                self.free + self.delay
            } else {
                self.now + self.delay
            };
            self.order += 1;
            self.wire.push((at, self.order, 1 - from, seg));
        }
        self.out.clear();
    }

    /// Open, then write `bytes` and close at once; run until `until`.
    fn transfer(&mut self, bytes: u64, until: SimTime) {
        self.ends[1].listen();
        self.ends[0].connect(self.now, &mut self.out);
        self.emit(0, false);
        self.run(SimTime::ZERO + 3 * self.delay);
        let n = self.ends[0].write(self.now, bytes, &mut self.out);
        assert_eq!(n, bytes);
        self.ends[0].close(self.now, &mut self.out);
        self.emit(0, false);
        self.run(until);
    }

    fn run(&mut self, until: SimTime) {
        loop {
            let pkt = self.wire.iter().map(|w| (w.0, w.1)).min();
            let mut next = pkt.map(|p| p.0);
            for w in [self.ends[0].next_deadline(), self.ends[1].next_deadline()].into_iter().flatten() {
                next = Some(next.map_or(w, |n: SimTime| n.min(w)));
            }
            let Some(t) = next.filter(|&t| t <= until) else { return };
            self.now = t;
            if let Some((at, order)) = pkt.filter(|p| p.0 == t) {
                let i = self.wire.iter().position(|w| w.0 == at && w.1 == order).unwrap();
                let (_, _, to, seg) = self.wire.remove(i);
                self.ends[to].on_segment(t, &seg, &mut self.out);
                self.emit(to, false);
                continue;
            }
            for e in 0..2 {
                if self.ends[e].next_deadline().is_some_and(|d| d <= t) {
                    let (_, g) = self.ends[e].wake_to_schedule(t).expect("due");
                    assert_eq!(self.ends[e].on_wake(t, g, &mut self.out), Wake::Fired);
                    self.emit(e, true);
                }
            }
        }
    }

    /// The sender's data segments that left from a wake-up (held by the stage), with times.
    fn released(&self) -> Vec<(SimTime, TcpHeader)> {
        self.log.iter().filter(|l| l.1 == 0 && l.3 && l.2.len > 0).map(|l| (l.0, l.2)).collect()
    }
}

fn secs(s: f64) -> SimTime {
    SimTime::from_secs_f64(s)
}

#[test]
fn stream_rates_rise_across_its_subrange() {
    let range = (20e6, 60e6);
    let mut prev_top: Option<f64> = None;
    for i in 0..4 {
        let r = ImtcpStage::stream_rates(range, 4, 10, i);
        assert_eq!(r.len(), 9, "N − 1 gaps");
        let (lo, hi) = (20e6 + 10e6 * i as f64, 30e6 + 10e6 * i as f64);
        assert!((r[0] - lo).abs() < 1e-6 && (r[8] - hi).abs() < 1e-6, "stream {i}: {r:?}");
        assert!(r.windows(2).all(|w| w[1] > w[0]), "rising within the stream");
        let steps: Vec<f64> = r.windows(2).map(|w| w[1] - w[0]).collect();
        assert!(steps.iter().all(|s| (s - 1.25e6).abs() < 1e-3), "linear: {steps:?}");
        if let Some(t) = prev_top {
            assert!((r[0] - t).abs() < 1e-6, "sub-ranges meet");
        }
        prev_top = Some(r[8]);
    }
}

/// A stage whose stream `i` of range `range` is collected (N held segments of 1500 bytes) at
/// `now`, then planned on `clock`.
fn planned(range: (f64, f64), i: u32, release: Release, clock: HostClock, now: SimTime) -> Vec<SimTime> {
    let cfg = ImtcpConfig { release, ..ImtcpConfig::default() };
    let mut s = ImtcpStage::new(cfg);
    s.range = Some(range);
    let n = cfg.packets as usize;
    let pkts = (0..n).map(|j| ProbePkt { end: 1461 * (j as u64 + 1), bits: 12_000.0, sent: None, acked: None, own_ack: true }).collect();
    s.probe = Some(Probe { kind: Kind::Stream(i), pkts, rates: vec![], collecting_since: Some(now) });
    for j in 0..n {
        let seg = TcpHeader { seq: 1 + 1460 * j as u64, len: 1460, ..TcpHeader::default() };
        s.held.push_back(Held { seg, release: None, probe: Some(j as u16) });
    }
    s.plan(now, clock);
    s.held.iter().map(|h| h.release.unwrap()).collect()
}

#[test]
fn no_two_stream_packets_closer_than_one_tick() {
    // Rates at and above one packet per tick (HZ 1000: 12 Mb/s), both placements.
    let clock = HostClock::new(1000, SimDuration::from_micros(137));
    for release in [Release::NextTick, Release::NearestTick] {
        for range in [(8e6, 40e6), (100e6, 200e6), (11e6, 13e6)] {
            for i in 0..4 {
                let t = planned(range, i, release, clock, secs(0.01234));
                assert!(t.windows(2).all(|w| w[1].0 >= w[0].0 + clock.tick.as_ps()), "{release:?} {range:?} stream {i}: {t:?}");
            }
        }
    }
}

#[test]
fn releases_fall_on_host_ticks() {
    // Pure: every planned release is on the grid and not before the planned time's tick.
    let clock = HostClock::new(20_000, SimDuration::from_nanos(12_345));
    for release in [Release::NextTick, Release::NearestTick] {
        let t = planned((30e6, 90e6), 2, release, clock, secs(1.000_001));
        assert!(t.iter().all(|&x| clock.on_tick(x)), "{t:?}");
        assert_eq!(t[0], clock.next_tick_at_or_after(secs(1.000_001)));
    }
    // A run: every segment the stage held left on a tick of the sender's phase.
    let phase = SimDuration::from_nanos(7_777);
    let mut p = Path::new(20_000, phase, Some(ImtcpConfig::default()), 100e6, 5 * MS);
    p.transfer(20_000_000, secs(2.0));
    let released = p.released();
    assert!(released.len() > 200, "the stage paced streams: {} segments", released.len());
    let clock = p.ends[0].host_clock();
    assert_eq!(clock.phase, phase);
    for (t, seg) in &released {
        assert!(clock.on_tick(*t), "seq {} left at {t:?}, off the grid", seg.seq);
    }
}

#[test]
fn rate_limit_is_packet_bits_times_hz() {
    // One 1500-byte packet per tick is the fastest a stream can go: 12,000 bit × HZ, the
    // slides' 1.2 Mb/s at HZ = 100 and 1.2 Gb/s at HZ = 100,000 (S6 L95–L96).
    for (hz, limit) in [(100u32, 1.2e6), (100_000, 1.2e9)] {
        let clock = HostClock::new(hz, SimDuration::ZERO);
        // Ask for far more than the limit: every gap is one tick.
        let t = planned((10.0 * limit, 40.0 * limit), 3, Release::NextTick, clock, SimTime::ZERO);
        let rates: Vec<f64> = t.windows(2).map(|w| 12_000.0 / w[1].since(w[0]).as_secs_f64()).collect();
        assert!(rates.iter().all(|r| (r - limit).abs() < limit * 1e-9), "HZ {hz}: {rates:?}");
        // And the stage never plans a range above it.
        let c = Connection::new(cfg(hz));
        let s = ImtcpStage::new(ImtcpConfig::default());
        let (_, hi) = s.clamp((5.0 * limit, 10.0 * limit), 12_000.0, &c);
        assert!((hi - limit).abs() < 1e-3, "HZ {hz}: top {hi}");
    }
}

#[test]
fn stream_waits_for_n_segments_of_window() {
    // A peer window of 8 segments never lets 10 go: nothing is ever held.
    let mut p = Path::new(20_000, SimDuration::ZERO, Some(ImtcpConfig::default()), 100e6, 5 * MS);
    p.ends[1] = Endpoint::new(Connection::new(TcpConfig { rcvbuf: 8 * 1460, ..cfg(20_000) }));
    p.transfer(3_000_000, secs(3.0));
    assert!(p.released().is_empty() && p.measurements.is_empty());
    assert_eq!(p.ends[1].stats.bytes_delivered, 3_000_000);
    // With room, the first probe waits for cwnd ≥ 10 segments: slow start from 4 (written at
    // 15 ms) reaches it only in the second round trip (≈ 10 ms each), from 25 ms on.
    let mut p = Path::new(20_000, SimDuration::ZERO, Some(ImtcpConfig::default()), 100e6, 5 * MS);
    p.transfer(3_000_000, secs(3.0));
    let first = p.released()[0].0;
    assert!(first > secs(0.025), "first held segment left at {first:?}");
    assert!(!p.measurements.is_empty());
}

#[test]
fn retransmissions_and_acks_pass_unpaced() {
    let conn = Connection::new(cfg(1000));
    let now = secs(0.5);
    let data = |seq: u64| TcpHeader { seq, len: 1460, flags: flags::ACK, ..TcpHeader::default() };
    // Nothing held: a retransmission, a pure ACK, a SYN and a FIN leave in the same call.
    let mut s = ImtcpStage::new(ImtcpConfig::default());
    let mut out = Output::default();
    let kinds = [
        TcpHeader { retransmit: true, ..data(1) },
        TcpHeader { seq: 1, flags: flags::ACK, ..TcpHeader::default() },
        TcpHeader { seq: 0, flags: flags::SYN, ..TcpHeader::default() },
        TcpHeader { seq: 9, flags: flags::FIN | flags::ACK, ..TcpHeader::default() },
    ];
    out.segments.extend(kinds);
    s.on_departure(now, &conn, &mut out, 0);
    assert_eq!(out.segments, kinds.to_vec());
    assert_eq!(s.held(), 0);
    // A stream held (its releases planned ahead): a retransmission voids it, and everything
    // held leaves at the next tick, in order, ahead of the retransmission (the stage hands
    // segments on only from its timer: at most one tick late).
    let mut s = ImtcpStage::new(ImtcpConfig::default());
    s.range = Some((10e6, 20e6));
    let pkts = (0..3).map(|j| ProbePkt { end: 1461 + 1460 * j, bits: 12_000.0, sent: None, acked: None, own_ack: true }).collect();
    s.probe = Some(Probe { kind: Kind::Stream(0), pkts, rates: vec![], collecting_since: None });
    for j in 0..3u64 {
        s.held.push_back(Held { seg: data(1 + 1460 * j), release: Some(now + (10 * (j + 1)) * MS), probe: Some(j as u16) });
    }
    let mut out = Output::default();
    let rtx = TcpHeader { retransmit: true, ..data(1) };
    out.segments.push(rtx);
    let now = now + SimDuration::from_micros(400);
    s.on_departure(now, &conn, &mut out, 0);
    assert!(out.segments.is_empty(), "it waits behind what is held, which now leaves");
    let tick = SimTime::ZERO + 501 * MS;
    assert_eq!((s.voided(), s.next_deadline()), (1, Some(tick)));
    s.on_timer(tick, &mut Connection::new(cfg(1000)), &mut out);
    let seqs: Vec<(u64, bool)> = out.segments.iter().map(|h| (h.seq, h.retransmit)).collect();
    assert_eq!(seqs, vec![(1, false), (1461, false), (2921, false), (1, true)]);
    assert_eq!(s.held(), 0);
}

#[test]
fn stage_never_reorders_a_flow() {
    // Streams, a loss inside one, its recovery: the sender's new data leaves in sequence
    // order and nothing the sender produced is held past a later segment.
    let mut p = Path::new(20_000, SimDuration::from_micros(3), Some(ImtcpConfig::default()), 100e6, 5 * MS);
    p.drop = vec![400, 900];
    p.transfer(10_000_000, secs(4.0));
    assert_eq!(p.ends[1].stats.bytes_delivered, 10_000_000);
    assert!(p.ends[0].stats.retransmits > 0);
    let new: Vec<u64> = p.log.iter().filter(|l| l.1 == 0 && l.2.len > 0 && !l.2.retransmit).map(|l| l.2.seq).collect();
    assert!(new.windows(2).all(|w| w[1] > w[0]), "new data out of order");
    let times: Vec<SimTime> = p.log.iter().filter(|l| l.1 == 0).map(|l| l.0).collect();
    assert!(times.windows(2).all(|w| w[1] >= w[0]));
}

#[test]
fn no_extra_packets_on_the_wire() {
    // F2: the stage sends exactly what TCP produced — as many data segments and bytes as
    // the connection counts, and besides them only the SYN, the FIN and pure ACKs.
    let mut p = Path::new(20_000, SimDuration::ZERO, Some(ImtcpConfig::default()), 100e6, 5 * MS);
    p.drop = vec![700];
    p.transfer(8_000_000, secs(4.0));
    let st = p.ends[0].stats;
    let sent: Vec<&TcpHeader> = p.log.iter().filter(|l| l.1 == 0).map(|l| &l.2).collect();
    let data = sent.iter().filter(|h| h.len > 0).count() as u64;
    let bytes: u64 = sent.iter().map(|h| h.len as u64).sum();
    let other = sent.iter().filter(|h| h.len == 0).count() as u64;
    assert_eq!((data, bytes), (st.segments_sent, st.bytes_sent));
    let fins = sent.iter().filter(|h| h.len == 0 && h.has(flags::FIN)).count() as u64;
    assert_eq!(other, 1 + st.acks_sent + fins, "SYN, pure ACKs, bare FINs");
    assert!(!p.measurements.is_empty() && p.released().len() > 100);
}

#[test]
fn estimate_on_an_idle_path_is_the_link_rate_within_one_grid_step() {
    // HZ 100,000: R_max = 1.2 Gb/s, so near C = 100 Mb/s the grid's rates are 1.2 G/m:
    // 1.2G/13 = 92.3, 1.2G/12 = 100, 1.2G/11 = 109.1 Mb/s. Every estimate once the range has
    // found C lies between the neighbours of C on the grid.
    let c = 100e6;
    let mut p = Path::new(100_000, SimDuration::from_nanos(2_500), Some(ImtcpConfig::default()), c, 5 * MS);
    p.transfer(200_000_000, secs(6.0));
    let ms = &p.measurements;
    assert!(ms.len() >= 30, "{} measurements", ms.len());
    let settled: Vec<&Measurement> = ms.iter().skip(5).collect();
    for m in &settled {
        assert!((1.2e9 / 13.0..=1.2e9 / 11.0).contains(&m.estimate_bps), "{m:?}");
    }
    let mean = settled.iter().map(|m| m.estimate_bps).sum::<f64>() / settled.len() as f64;
    eprintln!("idle path: {} measurements, mean of the settled {:.2} Mb/s", ms.len(), mean / 1e6);
    assert!(settled.iter().filter(|m| m.flag == RangeFlag::In).count() * 10 >= settled.len() * 8, "mostly in range");
    assert!(settled.iter().all(|m| m.packets == 40), "every stream packet timed by its own ACK");
}

#[test]
fn measurement_voided_by_loss_in_stream() {
    let run = |drop: Vec<usize>| {
        let mut p = Path::new(20_000, SimDuration::ZERO, Some(ImtcpConfig::default()), 100e6, 5 * MS);
        p.drop = drop;
        p.transfer(30_000_000, secs(3.0));
        p
    };
    let clean = run(vec![]);
    // The first measurement's third stream: its 5th packet on the wire.
    let released = clean.released();
    let first = clean.measurements[0];
    let in_stream: Vec<&(SimTime, TcpHeader)> = released.iter().filter(|(t, _)| *t >= first.start && *t <= first.at).collect();
    let victim = in_stream[25].1.seq;
    let index = clean.log.iter().filter(|l| l.1 == 0).position(|l| l.2.seq == victim && l.2.len > 0).unwrap();
    let lossy = run(vec![index]);
    let dropped_at = lossy.log.iter().filter(|l| l.1 == 0).nth(index).unwrap().0;
    assert_eq!(lossy.ends[0].stats.retransmits, 1);
    // No published measurement spans the loss: the one it hit was voided.
    assert!(lossy.measurements.iter().all(|m| m.start > dropped_at || m.at < dropped_at), "{:?}", lossy.measurements.first());
    assert!(lossy.measurements.iter().any(|m| m.start > dropped_at), "measuring resumes");
    assert!(first.start < dropped_at && dropped_at < first.at, "the loss fell inside what was the first measurement");
}

#[test]
fn trend_test_reads_pathload_statistics() {
    let t = Trend::default();
    let rates: Vec<f64> = (0..9).map(|j| 80e6 + 5e6 * j as f64).collect();
    // Flat, then rising from packet 5: gap 5 (rate 105) is the first above A.
    let d = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.2, 1.5, 1.9, 2.4];
    assert_eq!(ImtcpStage::stream_result(&d, &rates, &t), StreamResult::Rise { below: Some(100e6), above: 105e6 });
    let flat = [1.0, 1.1, 1.0, 1.05, 1.0, 1.1, 1.0, 1.02, 1.0, 1.01];
    assert_eq!(ImtcpStage::stream_result(&flat, &rates, &t), StreamResult::NoRise { top: 120e6 });
    let rising = [1.0, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8, 1.9];
    assert_eq!(ImtcpStage::stream_result(&rising, &rates, &t), StreamResult::Rise { below: None, above: 80e6 });
    for rule in [TrendRule::Pathload, TrendRule::TiesSplit, TrendRule::TiesExcluded] {
        assert_eq!(ImtcpStage::pct_pdt(&rising, rule), (1.0, 1.0));
        let t = Trend { rule, ..Trend::default() };
        assert_eq!(ImtcpStage::stream_result(&d, &rates, &t), StreamResult::Rise { below: Some(100e6), above: 105e6 }, "{rule:?}");
    }
}

#[test]
fn the_trend_rules_differ_on_ties_and_on_a_disagreement() {
    let rates: Vec<f64> = (0..9).map(|j| 80e6 + 5e6 * j as f64).collect();
    let pathload = Trend { rule: TrendRule::Pathload, ..Trend::default() };
    let split = Trend { rule: TrendRule::TiesSplit, ..Trend::default() };
    let ties = Trend { rule: TrendRule::TiesExcluded, ..Trend::default() };
    // Delays that step up only behind a cross-traffic packet (equal in between): 3 rises and
    // 5 ties from the onset. Pathload: S_PCT 3/8 = 0.375 says no trend, S_PDT 1 says
    // increasing — a disagreement, so no rise. Ties excluded: S_PCT 3/3 and S_PDT 1, a rise.
    let steps = [1.0, 1.0, 1.2, 1.2, 1.2, 1.4, 1.4, 1.4, 1.6, 1.6];
    assert_eq!(ImtcpStage::pct_pdt(&steps[1..], TrendRule::Pathload), (3.0 / 8.0, 1.0));
    assert_eq!(ImtcpStage::pct_pdt(&steps[1..], TrendRule::TiesExcluded), (1.0, 1.0));
    assert_eq!(ImtcpStage::stream_result(&steps, &rates, &pathload), StreamResult::NoRise { top: 120e6 });
    assert_eq!(ImtcpStage::stream_result(&steps, &rates, &ties), StreamResult::Rise { below: Some(80e6), above: 85e6 });
    // Ties split: S_PCT (3 + 5/2)/8 = 0.6875 and S_PDT 1 both say increasing.
    assert_eq!(ImtcpStage::pct_pdt(&steps[1..], TrendRule::TiesSplit), (5.5 / 8.0, 1.0));
    assert_eq!(ImtcpStage::stream_result(&steps, &rates, &split), StreamResult::Rise { below: Some(80e6), above: 85e6 });
    // Rises and falls alternating around a flat level, with ties: S_PCT 0.5 under the split
    // rule (unclear), S_PDT 0: no trend.
    let jitter = [1.0, 1.1, 1.0, 1.0, 1.1, 1.0, 1.0, 1.1, 1.0, 1.0];
    assert_eq!(ImtcpStage::stream_result(&jitter, &rates, &split), StreamResult::NoRise { top: 120e6 });
    // A flat series: no trend under both (Pathload S_PCT 0; ties excluded 0.5, S_PDT 0).
    let flat = [1.0; 10];
    assert_eq!(ImtcpStage::pct_pdt(&flat, TrendRule::Pathload), (0.0, 0.0));
    assert_eq!(ImtcpStage::pct_pdt(&flat, TrendRule::TiesExcluded), (0.5, 0.0));
    assert_eq!(ImtcpStage::pct_pdt(&flat, TrendRule::TiesSplit), (0.5, 0.0));
    for t in [pathload, split, ties] {
        assert_eq!(ImtcpStage::stream_result(&flat, &rates, &t), StreamResult::NoRise { top: 120e6 });
    }
}

#[test]
fn estimate_combines_the_streams() {
    let range = (40e6, 120e6);
    let no = |top| StreamResult::NoRise { top };
    assert_eq!(ImtcpStage::estimate(&[no(60e6), no(80e6), StreamResult::Rise { below: Some(90e6), above: 92e6 }, no(120e6)], range), (91e6, RangeFlag::In));
    assert_eq!(ImtcpStage::estimate(&[no(60e6), StreamResult::Rise { below: None, above: 62e6 }], range), (61e6, RangeFlag::In));
    assert_eq!(ImtcpStage::estimate(&[no(60e6), no(80e6), no(100e6), no(120e6)], range), (120e6, RangeFlag::Above));
    assert_eq!(ImtcpStage::estimate(&[StreamResult::Rise { below: None, above: 40e6 }, no(80e6)], range), (40e6, RangeFlag::Below));
}

fn stage_with(range: (f64, f64), ci: CiReading, history: u32) -> ImtcpStage {
    let mut s = ImtcpStage::new(ImtcpConfig { ci, history, ..ImtcpConfig::default() });
    s.range = Some(range);
    s
}

#[test]
fn next_range_is_95_ci_of_last_q() {
    let conn = Connection::new(cfg(100_000));
    let results = [70e6, 95e6, 80e6, 90e6, 85e6, 100e6, 75e6, 92e6, 88e6, 83e6];
    for (ci, q) in [(CiReading::Mean, 8u32), (CiReading::Band, 8), (CiReading::Mean, 4)] {
        let mut s = stage_with((60e6, 110e6), ci, q);
        for &r in &results {
            s.next_range(r, RangeFlag::In, 12_000.0, &conn);
        }
        let last = &results[results.len() - q as usize..];
        let n = last.len() as f64;
        let mu = last.iter().sum::<f64>() / n;
        let sd = (last.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        let h = match ci {
            CiReading::Mean => 1.96 * sd / n.sqrt(),
            CiReading::Band => 1.96 * sd,
        };
        let (lo, hi) = s.range().unwrap();
        assert!((lo - (mu - h)).abs() < 1.0 && (hi - (mu + h)).abs() < 1.0, "{ci:?} q {q}: ({lo}, {hi}) against {mu} ± {h}");
    }
}

#[test]
fn range_has_minimum_width() {
    let conn = Connection::new(cfg(100_000));
    for w in [0.1, 0.3] {
        let mut s = ImtcpStage::new(ImtcpConfig { min_width: w, ..ImtcpConfig::default() });
        s.range = Some((50e6, 60e6));
        for _ in 0..5 {
            s.next_range(80e6, RangeFlag::In, 12_000.0, &conn);
        }
        let (lo, hi) = s.range().unwrap();
        assert!(((hi - lo) - w * 80e6).abs() < 1.0 && ((hi + lo) / 2.0 - 80e6).abs() < 1.0, "{w}: ({lo}, {hi})");
    }
}

#[test]
fn result_above_range_moves_range_up() {
    let conn = Connection::new(cfg(100_000));
    let mut s = stage_with((40e6, 60e6), CiReading::Mean, 8);
    s.next_range(60e6, RangeFlag::Above, 12_000.0, &conn);
    assert_eq!(s.range(), Some((60e6, 80e6)));
    s.next_range(60e6, RangeFlag::Below, 12_000.0, &conn);
    assert_eq!(s.range(), Some((40e6, 60e6)));
    // Not beyond one packet per tick (1.2 Gb/s at HZ 100,000).
    let mut s = stage_with((1.0e9, 1.15e9), CiReading::Mean, 8);
    s.next_range(1.15e9, RangeFlag::Above, 12_000.0, &conn);
    assert_eq!(s.range().unwrap().1, 1.2e9);
}

#[test]
fn a_fixed_range_never_moves() {
    // The ablation of S3 L40–L41: the first range stays through in-range, above and below
    // results; the adaptive stage (the same calls) moves every time.
    let conn = Connection::new(cfg(100_000));
    let mut fixed = ImtcpStage::new(ImtcpConfig { fixed_range: true, initial: Initial::Link(100e6), ..ImtcpConfig::default() });
    assert_eq!(fixed.range(), Some((10e6, 100e6)));
    let mut adaptive = stage_with((10e6, 100e6), CiReading::Mean, 8);
    for (estimate, flag) in [(50e6, RangeFlag::In), (100e6, RangeFlag::Above), (10e6, RangeFlag::Below), (47e6, RangeFlag::In)] {
        let before = adaptive.range();
        fixed.next_range(estimate, flag, 12_000.0, &conn);
        adaptive.next_range(estimate, flag, 12_000.0, &conn);
        assert_eq!(fixed.range(), Some((10e6, 100e6)));
        assert_ne!(adaptive.range(), before);
    }
}
