//! The disk model against the numbers its parameters imply (every expectation derived in a
//! comment from `DiskParams::default()`, not read off the output), and its datasheet anchors
//! (EVIDENCE §2).

use super::*;
use crate::engine::Rng;

const MS: u64 = 1_000_000_000; // picoseconds per millisecond
/// One revolution at 10,000 rpm: 60 s / 10⁴ = 6 ms.
const REV: u64 = 6 * MS;
/// Sectors per track, zone 0: ⌊66.6·10⁶ B/s · 6 ms / 512 B⌋ = ⌊780.47⌋ = 780.
const SPT_OUTER: u64 = 780;
/// Sectors per track, zone 14: ⌊33.4·10⁶ · 0.006 / 512⌋ = ⌊391.41⌋ = 391.
const SPT_INNER: u64 = 391;

fn disk(p: DiskParams) -> Disk {
    Disk::new(p).expect("valid parameters")
}

fn read(lba: u64, sectors: u64, tag: u64) -> Request {
    Request { op: Op::Read, lba, sectors, tag }
}

fn write(lba: u64, sectors: u64, tag: u64) -> Request {
    Request { op: Op::Write, lba, sectors, tag }
}

/// A host keeping `qd` commands queued: each completion submits the next request `gap` later.
fn drive(d: &mut Disk, reqs: Vec<Request>, qd: usize, gap: SimDuration) -> Vec<Done> {
    let mut reqs = reqs.into_iter();
    for r in reqs.by_ref().take(qd) {
        d.submit(SimTime::ZERO, r);
    }
    let mut out = Vec::new();
    while let Some(t) = d.next_completion() {
        for done in d.complete(t) {
            out.push(done);
            if let Some(r) = reqs.next() {
                d.submit(done.done + gap, r);
            }
        }
    }
    out
}

fn sequential(op: Op, first: u64, count: u64, sectors: u64) -> Vec<Request> {
    (0..count).map(|i| Request { op, lba: first + i * sectors, sectors, tag: i }).collect()
}

/// Bytes per second from the first completion to the last (the first command's positioning
/// excluded).
fn steady_rate(done: &[Done], bytes_each: u64) -> f64 {
    let span = done.last().unwrap().done.since(done[0].done).as_secs_f64();
    (done.len() as u64 - 1) as f64 * bytes_each as f64 / span
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    (got - want).abs() <= rel * want.abs()
}

#[test]
fn zones_fall_linearly_from_outer_to_inner() {
    let d = disk(DiskParams::default());
    let g = d.geometry();
    assert_eq!(g.rev_ps, REV);
    assert_eq!(g.zones.len(), 15);
    assert_eq!(g.zones[0].spt, SPT_OUTER);
    assert_eq!(g.zones[14].spt, SPT_INNER);
    // Zone 7: 532.8 − (532.8 − 267.2)·7/14 = 400 Mb/s = 50 MB/s → ⌊50·10⁶ · 0.006 / 512⌋ = 585.
    assert_eq!(g.zones[7].spt, 585);
    assert_eq!(g.zones.iter().map(|z| z.sectors).sum::<u64>(), 143_571_316);
    assert!(g.zones.windows(2).all(|w| w[0].spt >= w[1].spt && w[1].first_lba == w[0].first_lba + w[0].sectors));
}

#[test]
fn sequential_reads_stream_at_the_zone_rate() {
    // EVIDENCE §2's datasheet case: 16 MiB in 128 commands of 128 KiB (256 sectors), one at a
    // time. Zone 0 streams at 780 · 512 B / 6 ms = 66.56 MB/s.
    let mut d = disk(DiskParams::default());
    let done = drive(&mut d, sequential(Op::Read, 0, 128, 256), 1, SimDuration::ZERO);
    let outer = (SPT_OUTER * 512) as f64 / 0.006;
    assert!(close(steady_rate(&done, 256 * 512), outer, 1e-4), "{} vs {outer}", steady_rate(&done, 256 * 512));
    // The first command: overhead 0.4 ms, no seek (head on track 0), then sector 0 comes round at
    // 6 ms; from there the read-ahead stream carries all 32,768 sectors without a gap:
    // end = 6 ms + ⌈32768 · 6 ms / 780⌉ = 258.06 ms (the datasheet's 260 ms adds an average
    // seek, 4.7 ms, and half a turn in place of this case's 5.6 ms wait).
    assert_eq!(done[0].seek, SimDuration::ZERO);
    assert_eq!(done[0].rotation, SimDuration(REV - 400_000_000));
    assert_eq!(done[127].done, SimTime(REV + (32_768 * REV).div_ceil(SPT_OUTER)));
    assert!(done[1..].iter().all(|x| x.seek == SimDuration::ZERO && x.rotation == SimDuration::ZERO));

    // Innermost zone: 391 · 512 / 6 ms = 33.37 MB/s.
    let mut d = disk(DiskParams::default());
    let inner_lba = d.geometry().zones[14].first_lba;
    let done = drive(&mut d, sequential(Op::Read, inner_lba, 128, 256), 1, SimDuration::ZERO);
    let inner = (SPT_INNER * 512) as f64 / 0.006;
    assert!(close(steady_rate(&done, 256 * 512), inner, 1e-4), "{} vs {inner}", steady_rate(&done, 256 * 512));
    // Anchors: within 0.2 % of EVIDENCE's 66.6 and 33.4 MB/s (whole sectors per track).
    assert!(close(outer, 66.6e6, 2e-3) && close(inner, 33.4e6, 2e-3));
}

#[test]
fn random_4k_reads_take_overhead_seek_and_half_a_turn() {
    // 4000 reads of 8 sectors at independent uniformly random LBAs, one at a time. Expected per
    // command: overhead 0.4 ms + average seek 4.7 ms (the curve is fitted to that mean over
    // random LBA pairs) + half a turn 3.0 ms + transfer 8 · 6 ms / spt averaged over the zones
    // by their share of LBAs (≈ 0.086 ms) ≈ 8.19 ms. EVIDENCE §2's datasheet check: 8.30 ms
    // (0.4 + 4.7 + 3.0 + 0.2).
    let p = DiskParams::default();
    let mut d = disk(p);
    let cap = p.capacity_sectors;
    let g = d.geometry().clone();
    let transfer: f64 = g.zones.iter().map(|z| z.sectors as f64 / cap as f64 * 8.0 * 0.006 / z.spt as f64).sum();
    let mut rng = Rng::from_seed(2002);
    let n = 4000;
    let reqs: Vec<Request> = (0..n).map(|i| read(rng.below(cap / 8) * 8, 8, i)).collect();
    let done = drive(&mut d, reqs, 1, SimDuration::ZERO);
    let mean = |f: &dyn Fn(&Done) -> f64| done.iter().map(f).sum::<f64>() / n as f64;
    let service = mean(&|x| x.done.since(x.submitted).as_secs_f64());
    let seek = mean(&|x| x.seek.as_secs_f64());
    let rot = mean(&|x| x.rotation.as_secs_f64());
    // Tolerances: 3 standard errors (seek σ ≈ 2.3 ms, rotation σ = 6/√12 = 1.73 ms, over √4000)
    // plus the fit's quadrature, rounded up.
    assert!(close(seek, 4.7e-3, 0.03), "mean seek {seek}");
    assert!(close(rot, 3.0e-3, 0.03), "mean rotation {rot}");
    let want = 0.4e-3 + 4.7e-3 + 3.0e-3 + transfer;
    assert!(close(service, want, 0.02), "mean service {service} vs {want}");
    assert!(close(service, 8.30e-3, 0.03), "datasheet 8.30 ms: {service}");
    assert!(done.iter().all(|x| !x.cache_hit));
}

#[test]
fn seek_curves_pass_through_their_three_points() {
    let d = disk(DiskParams::default());
    for (op, track, avg, full) in [(Op::Read, 0.5e-3, 4.7e-3, 10.5e-3), (Op::Write, 0.5e-3, 5.3e-3, 11.5e-3)] {
        let c = *d.seek_curve(op);
        assert!(close(c.time(1).as_secs_f64(), track, 1e-6));
        assert!(close(c.time(c.span).as_secs_f64(), full, 1e-6));
        assert_eq!(c.time(0), SimDuration::ZERO);
        assert!(c.knee > 0.0 && c.knee < 1.0);
        // Increasing, and continuous at the knee.
        let pts: Vec<SimDuration> = (0..=100).map(|i| c.time(1 + (c.span - 1) * i / 100)).collect();
        assert!(pts.windows(2).all(|w| w[0] <= w[1]));
        assert!(close(c.a + c.b * c.knee.sqrt(), c.c + c.e * c.knee, 1e-9));
        // The mean over independent uniformly random LBA pairs is the datasheet's average.
        let g = d.geometry();
        let mut rng = Rng::from_seed(7);
        let n = 20_000;
        let sum: f64 = (0..n).map(|_| c.time(g.track(rng.below(g.capacity)).abs_diff(g.track(rng.below(g.capacity)))).as_secs_f64()).sum();
        assert!(close(sum / n as f64, avg, 0.02), "{op:?}: mean {}", sum / n as f64);
    }
}

#[test]
fn remembered_seek_fits_are_the_fits_themselves() {
    // `SeekCurve::fit` keeps what it fitted (a pure function, fitted for every disk of every
    // run otherwise): asked again it answers the same curve, bit for bit, as a fresh fit; and a
    // disk that differs in one input (another zone table, another average) gets its own.
    let p = DiskParams::default();
    let g = disk(p).geometry().clone();
    let fresh = SeekCurve::fit_new(&g, 0.5e-3, 4.7e-3, 10.5e-3, "seek_read").unwrap();
    for _ in 0..2 {
        assert_eq!(SeekCurve::fit(&g, 0.5e-3, 4.7e-3, 10.5e-3, "seek_read").unwrap(), fresh);
    }
    let other_avg = SeekCurve::fit(&g, 0.5e-3, 4.9e-3, 10.5e-3, "seek_read").unwrap();
    assert_ne!(other_avg, fresh);
    assert_eq!(other_avg, SeekCurve::fit_new(&g, 0.5e-3, 4.9e-3, 10.5e-3, "seek_read").unwrap());
    let g2 = disk(DiskParams { zones: p.zones + 1, ..p }).geometry().clone();
    let zoned = SeekCurve::fit(&g2, 0.5e-3, 4.7e-3, 10.5e-3, "seek_read").unwrap();
    assert_ne!(zoned, fresh);
    assert_eq!(zoned, SeekCurve::fit_new(&g2, 0.5e-3, 4.7e-3, 10.5e-3, "seek_read").unwrap());
    // Errors are not remembered: a bad average fails every time.
    for _ in 0..2 {
        assert!(SeekCurve::fit(&g, 0.5e-3, 20e-3, 10.5e-3, "seek_read").is_err());
    }
}

#[test]
fn write_seeks_are_slower_than_read_seeks() {
    // From track 0 to the last LBA (the last track): a full stroke, 10.5 ms to read, 11.5 ms to
    // write (146Z10 §4.5.2.2).
    let p = DiskParams::default();
    let last = p.capacity_sectors - 1;
    let mut r = disk(p);
    let rd = drive(&mut r, vec![read(last, 1, 0)], 1, SimDuration::ZERO);
    let mut w = disk(p);
    let wr = drive(&mut w, vec![write(last, 1, 0)], 1, SimDuration::ZERO);
    assert!(close(rd[0].seek.as_secs_f64(), 10.5e-3, 1e-6), "{:?}", rd[0].seek);
    assert!(close(wr[0].seek.as_secs_f64(), 11.5e-3, 1e-6), "{:?}", wr[0].seek);
    // Both start the arm after the 0.4 ms overhead.
    assert_eq!(rd[0].started, SimTime(400_000_000));
    assert_eq!(wr[0].started, SimTime(400_000_000));
}

#[test]
fn queued_requests_complete_in_fifo_order_without_overlap() {
    let p = DiskParams::default();
    let mut d = disk(p);
    let mut rng = Rng::from_seed(34);
    for i in 0..50 {
        d.submit(SimTime::ZERO, read(rng.below(p.capacity_sectors - 8), 8, i));
    }
    assert_eq!(d.queued(), 50);
    let done = d.complete(SimTime::MAX);
    assert_eq!(done.iter().map(|x| x.req.tag).collect::<Vec<_>>(), (0..50).collect::<Vec<_>>());
    for w in done.windows(2) {
        // The next command's arm starts only when the previous transfer has ended...
        assert!(w[1].started >= w[0].disk_done, "{w:?}");
        assert!(w[1].done > w[0].done);
        // ...and at once: its 0.4 ms overhead ran while the previous seek and transfer did.
        assert_eq!(w[1].started, w[0].disk_done);
    }
    assert_eq!(d.next_completion(), None);
}

#[test]
fn read_ahead_serves_the_next_sequential_read_from_the_cache() {
    let p = DiskParams::default();
    // Back to back: the second command's data streams straight after the first's:
    // ⌈512 · 6 ms / 780⌉ − ⌈256 · 6 ms / 780⌉ after the first completes.
    let mut d = disk(p);
    let done = drive(&mut d, sequential(Op::Read, 0, 2, 256), 1, SimDuration::ZERO);
    let media = (512 * REV).div_ceil(SPT_OUTER) - (256 * REV).div_ceil(SPT_OUTER);
    assert_eq!(done[1].done.since(done[1].submitted), SimDuration(media));
    assert!(!done[1].cache_hit);

    // 100 ms later the read-ahead has filled the 4 MiB segment (8192 sectors take
    // 8192 · 6 ms / 780 = 63 ms): the second read is a hit, served in the 30 µs hit overhead.
    let mut d = disk(p);
    let done = drive(&mut d, sequential(Op::Read, 0, 2, 256), 1, SimDuration::from_millis(100));
    assert!(done[1].cache_hit);
    assert_eq!(done[1].done.since(done[1].submitted), SimDuration::from_micros(30));

    // Without read-ahead the same read is a miss on the same track: 0.4 ms overhead, no seek,
    // then sector 256 (at 256 · 6/780 = 1.969 ms into the turn) comes round; the arm starts at
    // 7.969 + 100 + 0.4 ms, i.e. 108.369 mod 6 = 0.369 ms into a turn: wait 1.600 ms.
    let mut d = disk(DiskParams { read_ahead: false, ..p });
    let done = drive(&mut d, sequential(Op::Read, 0, 2, 256), 1, SimDuration::from_millis(100));
    assert!(!done[1].cache_hit);
    assert_eq!(done[1].seek, SimDuration::ZERO);
    let angle = (256 * REV).div_ceil(SPT_OUTER);
    let arm = done[0].done.0 + 100 * MS + 400_000_000;
    assert_eq!(done[1].rotation, SimDuration((angle + REV - arm % REV) % REV));
    assert!(close(done[1].rotation.as_secs_f64(), 1.6e-3, 1e-3));
}

#[test]
fn write_through_loses_a_turn_per_command_unless_queued() {
    let p = DiskParams::default();
    // One at a time: each next write arrives as its sector passes; after the 0.4 ms overhead it
    // waits the rest of the turn, 6 − 0.4 = 5.6 ms: service = 6 ms + 256 · 6 ms / 780.
    let mut d = disk(p);
    let done = drive(&mut d, sequential(Op::Write, 0, 20, 256), 1, SimDuration::ZERO);
    for x in &done[1..] {
        assert_eq!(x.rotation, SimDuration(REV - 400_000_000));
        let service = x.done.since(x.submitted).0 as i128;
        assert!((service - (REV + 256 * REV / SPT_OUTER) as i128).abs() <= 1, "{x:?}");
    }
    // Four queued: each write's overhead overlaps the previous transfer; the media rate holds.
    let mut d = disk(p);
    let done = drive(&mut d, sequential(Op::Write, 0, 200, 256), 4, SimDuration::ZERO);
    let outer = (SPT_OUTER * 512) as f64 / 0.006;
    assert!(close(steady_rate(&done, 256 * 512), outer, 1e-4));

    // Write cache on: acknowledged after the 30 µs hit overhead while the 4 MiB cache has room;
    // over 400 commands (50 MiB ≫ 4 MiB) the destages set the pace, at the media rate.
    let mut d = disk(DiskParams { write_cache: true, ..p });
    let done = drive(&mut d, sequential(Op::Write, 0, 400, 256), 1, SimDuration::ZERO);
    assert!(done[0].cache_hit);
    assert_eq!(done[0].done, SimTime(30_000_000));
    assert!(close(steady_rate(&done[200..], 256 * 512), outer, 1e-3), "{}", steady_rate(&done[200..], 256 * 512));
}

#[test]
fn validation_names_the_field() {
    let p = DiskParams::default();
    let err = |q: DiskParams| q.validate().unwrap_err();
    assert!(err(DiskParams { rpm: 0, ..p }).starts_with("rpm:"));
    assert!(err(DiskParams { capacity_sectors: 0, ..p }).starts_with("capacity_sectors:"));
    assert!(err(DiskParams { capacity_sectors: 10, ..p }).starts_with("capacity_sectors:"));
    assert!(err(DiskParams { sector_bytes: 0, ..p }).starts_with("sector_bytes:"));
    assert!(err(DiskParams { zones: 0, ..p }).starts_with("zones:"));
    assert!(err(DiskParams { rate_outer: BitRate(0), ..p }).starts_with("rate_outer:"));
    assert!(err(DiskParams { rate_inner: BitRate(0), ..p }).starts_with("rate_inner:"));
    assert!(err(DiskParams { rate_inner: BitRate(600_000_000), ..p }).starts_with("rate_inner:"));
    // 8 kbit/s at 10,000 rpm: 6 bytes per turn, not one sector.
    assert!(err(DiskParams { rate_inner: BitRate(8_000), ..p }).starts_with("rate_inner:"));
    assert!(err(DiskParams { cache_bytes: 100, ..p }).starts_with("cache_bytes:"));
    assert!(err(DiskParams { overhead_hit: SimDuration::from_millis(1), ..p }).starts_with("overhead_hit:"));
    let bad_seek = SeekParams { average: SimDuration::from_millis(12), ..p.seek_read };
    assert!(err(DiskParams { seek_read: bad_seek, ..p }).starts_with("seek_read"));
    let bad_seek = SeekParams { track_to_track: SimDuration::ZERO, ..p.seek_write };
    assert!(err(DiskParams { seek_write: bad_seek, ..p }).starts_with("seek_write"));
    assert!(p.validate().is_ok());
    assert!(Disk::new(DiskParams { rpm: 0, ..p }).is_err());
}
