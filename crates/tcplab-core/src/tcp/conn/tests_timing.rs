//! Timing: RTT samples from timestamps across the 32-bit clock wrap, the RTO after backoff,
//! and the instant fast retransmit fires.

use super::*;

/// The first instant at which the timestamp clock of `tick` reads 0 again (TSval =
/// ⌊t/tick⌋ + 1 mod 2³²).
fn ts_wrap(tick: SimDuration) -> SimTime {
    SimTime(((1u64 << 32) - 1) * tick.as_ps())
}

#[test]
fn timestamp_rtt_samples_hold_across_the_32_bit_clock_wrap() {
    // 20 ms path RTT, per-segment ACKs, no serialization: every sample is 20 ms to within one
    // tick. The connection opens 100 ms before the clock wraps (1 ns tick: 4.3 s after time
    // 0; 1 ms tick: 49.7 days) and sends for several round trips past it.
    for tick in [SimDuration::from_nanos(1), MS] {
        let lead = 100 * MS;
        let c = TcpConfig { timestamps: true, ts_tick: tick, ..cfg() };
        let mut w = Wire::new(c.clone(), c, 10 * MS);
        let wrap = ts_wrap(tick);
        w.now = SimTime(wrap.0 - lead.as_ps());
        w.open();
        w.write(10_000_000);
        let end = wrap + 400 * MS;
        let mut samples_after_wrap = 0;
        let mut last = (SimDuration::ZERO, 0u64);
        while w.now < end && w.step() {
            let latest = w.a.rtt.latest();
            if latest == SimDuration::ZERO {
                continue; // No sample yet.
            }
            assert!(latest >= 20 * MS && latest <= 20 * MS + tick, "tick {tick:?}: sample {latest:?} at {:?}", w.now);
            // Count ACKs of new data after the wrap (each gives a sample).
            if w.now > wrap && w.a.snd_una() > last.1 {
                samples_after_wrap += 1;
            }
            last = (latest, w.a.snd_una());
        }
        assert!(samples_after_wrap > 100, "tick {tick:?}: {samples_after_wrap} samples after the wrap");
        let srtt = w.a.srtt().unwrap();
        assert!(srtt >= 20 * MS && srtt <= 20 * MS + tick, "tick {tick:?}: srtt {srtt:?}");
        // The clock did wrap on the wire: TSvals from a fell back to small values.
        let ts: Vec<u32> = w.log.iter().filter(|s| s.a_to_b).filter_map(|s| s.seg.timestamps).map(|t| t.0).collect();
        assert!(ts.first().unwrap() > &(u32::MAX - 2_000_000_000) && ts.last().unwrap() < &2_000_000_000, "{:?} … {:?}", ts.first(), ts.last());
        assert!(w.a.rto() < SimDuration::from_secs(1), "tick {tick:?}: rto {:?}", w.a.rto());
    }
}

#[test]
fn timestamp_rtt_ignores_zero_stale_and_future_echoes() {
    let c = TcpConfig { timestamps: true, ts_tick: MS, ..cfg() };
    let conn = Connection::new(c);
    // 4.25 ticks after the wrap: the clock reads 4 (⌊t/tick⌋ + 1, wrapped).
    let now = ts_wrap(MS) + SimDuration::from_micros(4_250);
    assert_eq!(conn.ts_val(now), 4);
    let rtt = |ecr: u32| conn.ts_rtt(now, ecr);
    // Echo of a TSval stamped 10 ticks ago, before the wrap: 10 ticks + the 0.25 tick since
    // the current one began.
    assert_eq!(rtt(u32::MAX - 5), Some(SimDuration::from_micros(10_250)));
    assert_eq!(rtt(4), Some(MS), "the current tick: at least one tick");
    assert_eq!(rtt(0), None, "0 echoes no timestamp");
    assert_eq!(rtt(5), None, "from the future");
    assert_eq!(rtt(4u32.wrapping_sub((1 << 31) - 1)), Some(SimDuration::from_micros(250) + MS.saturating_mul((1 << 31) - 1)));
    assert_eq!(rtt(4u32.wrapping_sub(1 << 31)), None, "2^31 ticks or more: stale");
}

/// After a step: (time, a's backoffs, RTO, base RTO, whether a's snd_una moved).
type Step = (SimTime, u32, SimDuration, SimDuration, bool);

/// Run a transfer whose segment 10 and its first two retransmissions are lost, so the RTO
/// backs off; return the wire and, after every step, (time, a's backoffs, RTO, base RTO,
/// whether a's snd_una moved).
fn backed_off(timestamps: bool) -> (Wire, Vec<Step>) {
    let mut c = TcpConfig { timestamps, ..cfg() };
    c.rto = RtoPolicy { min: 30 * MS, ..RtoPolicy::default() };
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    let mut lost_seq = None;
    let mut rxt_drops = 0;
    w.drop = Box::new(move |s, i| {
        if i == 10 {
            lost_seq = Some(s.seg.seq);
            return true;
        }
        if s.seg.retransmit && Some(s.seg.seq) == lost_seq && rxt_drops < 2 {
            rxt_drops += 1;
            return true;
        }
        false
    });
    w.open();
    w.write(300_000);
    w.a.close(w.now, &mut w.out);
    w.emit(true);
    let mut trace = vec![];
    let mut una = w.a.snd_una();
    while w.step() {
        let base = w.a.rtt.base_rto(&w.a.cfg.rto);
        trace.push((w.now, w.a.backoffs, w.a.rto(), base, w.a.snd_una() > una));
        una = w.a.snd_una();
    }
    assert_eq!(w.b.stats.bytes_delivered, 300_000);
    (w, trace)
}

#[test]
fn a_new_rtt_sample_undoes_the_rto_backoff() {
    for timestamps in [false, true] {
        let (w, trace) = backed_off(timestamps);
        // The lost segment's first retransmissions are lost too: at least two timeouts in a
        // row, each backing the RTO off once more.
        let timeouts = w.a.stats.timeouts as u32;
        assert!(timeouts >= 2, "ts={timestamps}: {timeouts}");
        assert_eq!(trace.iter().map(|t| t.1).max().unwrap(), timeouts, "ts={timestamps}");
        // The first ACK of new data after the last timeout acknowledges the retransmission
        // that got through. With timestamps it gives an RTT sample (the echo times the
        // retransmission itself), which undoes the backoff at once; without, Karn forbids a
        // sample from a retransmitted segment, so the backed-off RTO stays.
        let last_timeout = w.events.iter().rfind(|(_, a, e)| *a && e.kind == TcpEventKind::Timeout).unwrap().0;
        let first_ack = trace.iter().position(|t| t.0 > last_timeout && t.4).expect("an ACK after the timeouts");
        let (at, backoffs, rto, base, _) = trace[first_ack];
        if timestamps {
            assert_eq!((backoffs, rto), (0, base), "ts: the ACK of the retransmission resets the backoff");
        } else {
            assert_eq!(backoffs, timeouts, "Karn: no sample from the retransmission");
            assert_eq!(rto, w.a.cfg.rto.timeout(base, timeouts));
            assert!(rto > base);
        }
        // Once a segment first sent after the timeouts is acknowledged (one RTT later), the
        // RTO is the estimator's own again (RFC 6298 §5.7: the backed-off RTO "collapses").
        let (later, _, rto, base, _) = *trace[first_ack..].iter().find(|t| t.1 == 0).expect("backoff undone by a new sample");
        assert_eq!(rto, base, "ts={timestamps}");
        assert!(later.since(at) <= 25 * MS, "ts={timestamps}: {:?} after the repair", later.since(at));
        let (_, backoffs, rto, base, _) = *trace.last().unwrap();
        assert_eq!((backoffs, rto), (0, base), "ts={timestamps}");
        assert!(rto < 100 * MS, "ts={timestamps}: {rto:?}");
    }
}

/// Lose segment 30 of a transfer paced at 100 Mb/s, so duplicate ACKs come back one at a
/// time, and return (times of a's duplicate ACKs, time of the fast retransmit, times and
/// sequence numbers of the retransmissions, the lost sequence number).
fn dupack_timing(c: TcpConfig) -> (Vec<SimTime>, SimTime, Vec<(SimTime, u64)>, u64) {
    let mut w = Wire::new(c.clone(), c, 10 * MS);
    w.ps_per_byte = 80_000;
    w.drop = Box::new(|_, i| i == 30);
    transfer(&mut w, 100_000);
    assert_eq!(w.b.stats.bytes_delivered, 100_000);
    assert_eq!((w.a.stats.fast_retransmits, w.a.stats.timeouts), (1, 0));
    let dups: Vec<SimTime> = w.events.iter().filter(|(_, a, e)| *a && e.kind == TcpEventKind::DupAck).map(|e| e.0).collect();
    let fr = w.events.iter().find(|(_, a, e)| *a && e.kind == TcpEventKind::FastRetransmit).unwrap().0;
    let rtx = w.data_from_a().filter(|s| s.seg.retransmit).map(|s| (s.at, s.seg.seq)).collect();
    let lost = w.data_from_a().nth(30).unwrap().seg.seq;
    (dups, fr, rtx, lost)
}

#[test]
fn fast_retransmit_goes_on_the_third_duplicate_ack_not_later() {
    use crate::tcp::cc::{BicConfig, CcConfig, RenoConfig};
    let bic = CcConfig::Bic(BicConfig { initial_ssthresh: 0, ..BicConfig::default() });
    for (name, c) in [
        ("newreno", no_sack()),
        ("reno", TcpConfig { recovery: RecoveryKind::Reno, cc: CcConfig::Reno(RenoConfig::default()), ..no_sack() }),
        ("sack", TcpConfig { recovery: RecoveryKind::Sack, ..cfg() }),
        ("linux-sack", TcpConfig { recovery: RecoveryKind::LinuxSack, cc: bic, ..cfg() }),
    ] {
        let (dups, fr, rtx, lost) = dupack_timing(c);
        assert!(dups.len() >= 4, "{name}: {dups:?}");
        // Each duplicate ACK arrives at its own instant (the wire is paced).
        assert!(dups.windows(2).take(3).all(|p| p[1] > p[0]), "{name}: {dups:?}");
        assert_eq!(fr, dups[2], "{name}: fast retransmit on the third duplicate ACK");
        assert_eq!(rtx[0], (dups[2], lost), "{name}: the lost segment goes at once");
    }
}
