//! The shared bus: FIFO at its effective rate, and the cap it puts on a host's disks.

use super::*;
use crate::units::SimDuration;

/// Sectors per track of the default disk's zone 0 (⌊66.6·10⁶ · 0.006 / 512⌋ = 780): its media
/// rate is 780 · 512 B / 6 ms = 66.56 MB/s.
const OUTER_RATE: f64 = 780.0 * 512.0 / 0.006;

/// Each disk of `set` reads `per_disk` sequential 256-sector commands from LBA 0 with `qd`
/// outstanding; returns the host completions.
fn drive(set: &mut DiskSet, per_disk: u64, qd: u64) -> Vec<(usize, Done)> {
    let n = set.disks().len();
    let req = |i: u64| Request { op: Op::Read, lba: i * 256, sectors: 256, tag: i };
    let mut issued = vec![0u64; n];
    for (d, k) in issued.iter_mut().enumerate() {
        while *k < qd {
            set.submit(SimTime::ZERO, d, req(*k));
            *k += 1;
        }
    }
    let mut out = Vec::new();
    while let Some(t) = set.next_event() {
        for (d, done) in set.advance(t) {
            out.push((d, done));
            if issued[d] < per_disk {
                set.submit(t, d, req(issued[d]));
                issued[d] += 1;
            }
        }
    }
    out
}

/// Aggregate bytes/s of host completions after the first tenth.
fn aggregate(out: &[(usize, Done)]) -> f64 {
    let skip = out.len() / 10;
    let span = out.last().unwrap().1.done.since(out[skip].1.done).as_secs_f64();
    (out.len() - skip - 1) as f64 * 131_072.0 / span
}

#[test]
fn bus_is_fifo_at_its_effective_rate() {
    // 1000 bytes at 160 MB/s: 6.25 µs each, back to back.
    let mut bus = ScsiBus::new(BusParams { efficiency_percent: 100, ..BusParams::default() }).unwrap();
    let ends: Vec<SimTime> = (0..3).map(|i| bus.submit(SimTime::ZERO, 1000, i)).collect();
    assert_eq!(ends, vec![SimTime(6_250_000), SimTime(12_500_000), SimTime(18_750_000)]);
    assert_eq!(bus.pop_due(SimTime(6_249_999)), None);
    assert_eq!(bus.pop_due(SimTime(20_000_000)), Some((SimTime(6_250_000), 0)));
    // Default 85 %: 136 MB/s, 1000 bytes in ⌈8000 bit / 1.088 Gb/s⌉ = 7,352,942 ps.
    let mut bus = ScsiBus::new(BusParams::default()).unwrap();
    assert_eq!(bus.submit(SimTime::ZERO, 1000, ()), SimTime(7_352_942));
}

#[test]
fn bus_caps_the_aggregate_of_several_disks() {
    // Four outer-zone readers want 4 × 66.56 = 266 MB/s; a 160 MB/s bus (efficiency 100 %)
    // carries 160 MB/s: 128 KiB every 131072 / 160·10⁶ = 0.8192 ms.
    let bus = BusParams { efficiency_percent: 100, ..BusParams::default() };
    let mut set = DiskSet::new(4, DiskParams::default(), bus).unwrap();
    let out = drive(&mut set, 300, 2);
    assert_eq!(out.len(), 1200);
    let agg = aggregate(&out);
    assert!((agg - 160e6).abs() < 0.005 * 160e6, "aggregate {agg}");
    // Every disk got its share (FIFO bus, equal demand).
    for d in 0..4 {
        assert_eq!(out.iter().filter(|o| o.0 == d).count(), 300);
    }
}

#[test]
fn two_outer_disks_stay_under_the_default_bus() {
    // EVIDENCE §2: two outer-zone streams need 2 × 66.56 = 133.1 MB/s, under 160 × 0.85 = 136.
    let mut set = DiskSet::new(2, DiskParams::default(), BusParams::default()).unwrap();
    let out = drive(&mut set, 300, 2);
    let agg = aggregate(&out);
    assert!((agg - 2.0 * OUTER_RATE).abs() < 0.01 * 2.0 * OUTER_RATE, "aggregate {agg}");
    // A read's host completion is its disk completion plus its wait and crossing of the bus.
    for (_, d) in &out {
        assert!(d.done >= d.disk_done + SimDuration(131_072 * 8 * 1_000_000 / 1_088));
    }
}

#[test]
fn a_write_crosses_the_bus_before_the_disk() {
    // One 256-sector write on an idle set: bus 131072 B at 136 MB/s = 0.963765 ms, then the
    // disk: overhead 0.4 ms, no seek (LBA 0, head on track 0), wait for sector 0, 1.969 ms.
    let mut set = DiskSet::new(1, DiskParams::default(), BusParams::default()).unwrap();
    set.submit(SimTime::ZERO, 0, Request { op: Op::Write, lba: 0, sectors: 256, tag: 9 });
    let t = set.next_event().unwrap();
    assert_eq!(t, SimTime((131_072u64 * 8 * 1_000_000_000_000).div_ceil(1_088_000_000)));
    assert!(set.advance(t).is_empty());
    let t = set.next_event().unwrap();
    let out = set.advance(t);
    assert_eq!(out.len(), 1);
    let (_, d) = out[0];
    assert_eq!(d.submitted, SimTime::ZERO);
    assert_eq!(d.started, SimTime((131_072u64 * 8 * 1_000_000_000_000).div_ceil(1_088_000_000) + 400_000_000));
    // Sector 0 next comes round at 6 ms; the write ends 256 · 6 ms / 780 later.
    assert_eq!(d.done, SimTime(6_000_000_000 + (256u64 * 6_000_000_000).div_ceil(780)));
    assert_eq!(set.next_event(), None);
}

#[test]
fn validation_names_the_field() {
    let e = BusParams { efficiency_percent: 0, ..BusParams::default() }.validate().unwrap_err();
    assert!(e.starts_with("efficiency_percent:"), "{e}");
    let e = BusParams { efficiency_percent: 101, ..BusParams::default() }.validate().unwrap_err();
    assert!(e.starts_with("efficiency_percent:"), "{e}");
    let e = BusParams { rate: BitRate(0), ..BusParams::default() }.validate().unwrap_err();
    assert!(e.starts_with("rate:"), "{e}");
    let e = DiskSet::new(0, DiskParams::default(), BusParams::default()).unwrap_err();
    assert!(e.starts_with("disks:"), "{e}");
    let e = DiskSet::new(2, DiskParams { rpm: 0, ..DiskParams::default() }, BusParams::default()).unwrap_err();
    assert!(e.starts_with("rpm:"), "{e}");
}
