//! Timing: RTT samples from timestamps across the 32-bit clock wrap.

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
    assert_eq!(rtt(4u32.wrapping_sub((1 << 31) - 1)), Some(SimDuration::from_micros(250) + MS.mul((1 << 31) - 1)));
    assert_eq!(rtt(4u32.wrapping_sub(1 << 31)), None, "2^31 ticks or more: stale");
}
