//! A disk server's volume: its share of a striped file laid over its `k` local disks (the
//! second level of `i×j×k` striping), driven as tasks. A task reads or writes a byte range of
//! the volume; the volume splits it into per-disk extents, each into disk commands of at most
//! `max_request` bytes (the host's SCSI layer's request limit), submits them to the host's
//! `DiskSet` (the disks and their shared SCSI bus), and reports each task's progress as the
//! extents complete: the bytes now done *in order from the task's start* (a READ's data can
//! only be sent in order), and whether the task is complete.
//!
//! Sans-I/O like the models beneath it: the application that owns the volume calls `submit`
//! and `advance` with the current time and sets its one timer to `next_event`.

use std::collections::BTreeMap;

use super::bus::{BusParams, DiskSet};
use super::disk::{DiskParams, Op, Request};
use super::stripe::{Stripe, StripeParams};
use crate::units::SimTime;

/// What a task has done since the last report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The task's key, as given to `submit`.
    pub key: u64,
    /// Bytes newly done, counted in order from the task's first byte.
    pub bytes: u64,
    /// Every byte of the task is done (this is its last report).
    pub complete: bool,
}

#[derive(Clone, Debug)]
struct Task {
    /// Bytes of each extent, in volume order, and whether it is done.
    parts: Vec<(u64, bool)>,
    /// Extents reported so far (a prefix of `parts`).
    reported: usize,
}

/// The volume of one disk server.
#[derive(Clone, Debug)]
pub struct Volume {
    disks: DiskSet,
    layout: Stripe,
    next_id: u64,
    /// Disk request tag → (task key, extent index).
    inflight: BTreeMap<u64, (u64, usize)>,
    tasks: BTreeMap<u64, Task>,
    bytes: u64,
    max_request: u64,
    /// The disk stripe unit, bytes.
    unit: u64,
    /// Scattered placement: per disk, each of its stripe units' slot (in units from LBA 0);
    /// empty = sequential from the layout's base LBA.
    slots: Vec<Vec<u64>>,
}

impl Volume {
    /// `bytes` of volume striped over `disks` disks of `disk` on one `bus`, in units of
    /// `unit` bytes (a whole number of sectors), from `base_lba` on every disk, in disk
    /// commands of at most `max_request` bytes (whole sectors). Errors name the field: a layout
    /// or request limit that is not whole sectors, a volume that does not fit the disks.
    pub fn new(bytes: u64, disks: u32, unit: u64, base_lba: u64, max_request: u64, disk: DiskParams, bus: BusParams) -> Result<Volume, String> {
        disk.validate()?;
        let sb = disk.sector_bytes as u64;
        if max_request == 0 || !max_request.is_multiple_of(sb) {
            return Err(format!("max_request: {max_request} bytes is not a whole number (≥ 1) of {sb}-byte sectors"));
        }
        let layout = StripeParams { file_servers: 1, servers: 1, disks, unit_servers: unit, unit_disks: unit, sector_bytes: disk.sector_bytes, base_lba }.build()?;
        layout.check_fits(bytes, disk.capacity_sectors)?;
        Ok(Volume {
            disks: DiskSet::new(disks as usize, disk, bus)?,
            layout,
            next_id: 0,
            inflight: BTreeMap::new(),
            tasks: BTreeMap::new(),
            bytes,
            max_request,
            unit,
            slots: Vec::new(),
        })
    }

    /// Scatter the stripe units: each disk's units each to its own slot, drawn uniformly over
    /// the whole disk (unit-sized slots from LBA 0) with `draw(n)` (a value in `0..n`), instead
    /// of one after another from the base LBA. Errors when a disk has fewer slots than units.
    pub fn scatter(&mut self, mut draw: impl FnMut(u64) -> u64) -> Result<(), String> {
        let params = *self.disks.disks()[0].params();
        let sb = params.sector_bytes as u64;
        let free = params.capacity_sectors * sb / self.unit;
        let disks = self.disks.disks().len() as u32;
        self.slots = (0..disks)
            .map(|d| {
                let units = self.layout.disk_bytes(self.bytes, 0, d).div_ceil(self.unit);
                if units > free / 2 {
                    return Err(format!("placement: {units} stripe units cannot be scattered over a disk of {free} unit slots (at most half)"));
                }
                let mut taken = std::collections::BTreeSet::new();
                Ok((0..units)
                    .map(|_| loop {
                        let slot = draw(free);
                        if taken.insert(slot) {
                            break slot;
                        }
                    })
                    .collect())
            })
            .collect::<Result<_, _>>()?;
        Ok(())
    }

    /// Set each disk's spindle phase from `draws` (`DiskSet::set_rotation_phases`).
    pub fn set_rotation_phases(&mut self, draws: impl FnMut() -> u64) {
        self.disks.set_rotation_phases(draws);
    }

    /// The volume's size, bytes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Tasks submitted and not complete.
    pub fn tasks(&self) -> usize {
        self.tasks.len()
    }

    /// Start task `key` at `now`: `op` on `[offset, offset + bytes)` of the volume.
    ///
    /// Panics on a key in use, an empty range or one past the volume (the callers derive
    /// ranges from the validated layout).
    pub fn submit(&mut self, now: SimTime, key: u64, op: Op, offset: u64, bytes: u64) {
        assert!(bytes > 0 && offset + bytes <= self.bytes, "volume range {offset}+{bytes} outside {} bytes", self.bytes);
        // Each extent in commands of at most `max_request` bytes: (disk, lba, sectors, bytes).
        let sb = self.layout_sector_bytes();
        let mut pieces = Vec::new();
        for e in self.layout.extents(offset, bytes) {
            let mut done = 0;
            while done < e.bytes {
                let mut n = self.max_request.min(e.bytes - done);
                let lba = match self.slots.get(e.disk as usize) {
                    // Scattered: a command never crosses a unit, whose slot gives its LBA.
                    Some(slots) => {
                        let at = e.disk_offset + done;
                        n = n.min(self.unit - at % self.unit);
                        (slots[(at / self.unit) as usize] * self.unit + at % self.unit) / sb
                    }
                    None => e.lba + done / sb,
                };
                pieces.push((e.disk as usize, lba, n.div_ceil(sb), n));
                done += n;
            }
        }
        let parts = pieces.iter().map(|p| (p.3, false)).collect();
        let previous = self.tasks.insert(key, Task { parts, reported: 0 });
        assert!(previous.is_none(), "volume task {key} already in use");
        for (i, &(disk, lba, sectors, _)) in pieces.iter().enumerate() {
            let id = self.next_id;
            self.next_id += 1;
            self.inflight.insert(id, (key, i));
            self.disks.submit(now, disk, Request { op, lba, sectors, tag: id });
        }
    }

    fn layout_sector_bytes(&self) -> u64 {
        self.disks.disks()[0].params().sector_bytes as u64
    }

    /// When `advance` next has something to report (after the current time when nothing is
    /// pending now).
    pub fn next_event(&self) -> Option<SimTime> {
        self.disks.next_event()
    }

    /// Run the disks to `now`; returns each task's progress, in completion order.
    pub fn advance(&mut self, now: SimTime) -> Vec<Progress> {
        let mut out = Vec::new();
        for (_, done) in self.disks.advance(now) {
            let (key, part) = self.inflight.remove(&done.req.tag).expect("every disk request belongs to a task");
            let task = self.tasks.get_mut(&key).expect("a task lives until its last extent");
            task.parts[part].1 = true;
            let mut bytes = 0;
            while task.reported < task.parts.len() && task.parts[task.reported].1 {
                bytes += task.parts[task.reported].0;
                task.reported += 1;
            }
            let complete = task.reported == task.parts.len();
            if complete {
                self.tasks.remove(&key);
            }
            if bytes > 0 {
                out.push(Progress { key, bytes, complete });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::units::SimDuration;

    fn volume(bytes: u64, disks: u32, unit: u64) -> Volume {
        Volume::new(bytes, disks, unit, 0, 256 << 10, DiskParams::default(), BusParams::default()).unwrap()
    }

    /// Run to quiescence, collecting every report.
    fn drain(v: &mut Volume) -> Vec<(SimTime, Progress)> {
        let mut out = Vec::new();
        while let Some(t) = v.next_event() {
            out.extend(v.advance(t).into_iter().map(|p| (t, p)));
        }
        out
    }

    #[test]
    fn a_task_reports_every_byte_once_in_order_and_completes_last() {
        let mut v = volume(64 << 20, 2, 64 << 10);
        v.submit(SimTime::ZERO, 7, Op::Read, 0, 1 << 20);
        let reports = drain(&mut v);
        let total: u64 = reports.iter().map(|r| r.1.bytes).sum();
        assert_eq!(total, 1 << 20);
        assert!(reports.iter().all(|r| r.1.key == 7));
        assert_eq!(reports.iter().filter(|r| r.1.complete).count(), 1);
        assert!(reports.last().unwrap().1.complete);
        assert_eq!(v.tasks(), 0);
        assert!(reports.windows(2).all(|w| w[0].0 <= w[1].0), "reports in time order");
    }

    #[test]
    fn scattered_units_cost_a_seek_and_a_rotation_each_and_land_on_distinct_slots() {
        // 16 MiB read in 256 KiB units from one disk: sequential streams at the outer zone's
        // ~66.6 MB/s (~250 ms); scattered, each unit pays an average seek (~4.7 ms) and half a
        // revolution (3 ms) before its ~4 ms transfer, so ≈ 64 × 12 ms ≈ 0.75 s.
        let time = |scatter: bool| {
            let mut v = volume(64 << 20, 1, 256 << 10);
            if scatter {
                let mut x = 12345u64;
                v.scatter(|n| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (x >> 17) % n
                })
                .unwrap();
                let slots = &v.slots[0];
                let distinct: std::collections::BTreeSet<_> = slots.iter().collect();
                assert_eq!((slots.len(), distinct.len()), (256, 256), "one distinct slot per unit");
            }
            v.submit(SimTime::ZERO, 1, Op::Read, 0, 16 << 20);
            let done = drain(&mut v);
            assert_eq!(done.iter().map(|r| r.1.bytes).sum::<u64>(), 16 << 20);
            done.last().unwrap().0.as_secs_f64()
        };
        let (seq, scat) = (time(false), time(true));
        assert!(seq < 0.3, "sequential {seq:.3} s");
        assert!(scat > 2.0 * seq && scat > 0.5 && scat < 1.1, "scattered {scat:.3} s against sequential {seq:.3} s");
        // A share of more than half the disk's unit slots is refused, not looped on: 40 GiB
        // of 256 KiB units on one 73 GB disk (280,412 slots).
        let mut big = Volume::new(40 << 30, 1, 256 << 10, 0, 256 << 10, DiskParams::default(), BusParams::default()).unwrap();
        let e = big.scatter(|n| n - 1).unwrap_err();
        assert!(e.contains("placement") && e.contains("163840"), "{e}");
    }

    #[test]
    fn two_disks_read_a_large_range_nearly_twice_as_fast_as_one() {
        // 16 MiB sequential from the outer zone in 256 KiB commands: one disk at ~66.6 MB/s
        // takes ~250 ms; two disks share the work and the bus (136 MB/s effective) carries both.
        let time = |disks: u32| {
            let mut v = volume(64 << 20, disks, 256 << 10);
            v.submit(SimTime::ZERO, 1, Op::Read, 0, 16 << 20);
            drain(&mut v).last().unwrap().0
        };
        let (one, two) = (time(1), time(2));
        let ratio = one.since(SimTime::ZERO).as_secs_f64() / two.since(SimTime::ZERO).as_secs_f64();
        assert!(one.since(SimTime::ZERO) > SimDuration::from_millis(240), "one disk: {one:?}");
        assert!((1.6..2.05).contains(&ratio), "two disks {ratio:.2}× one");
    }

    #[test]
    fn a_long_extent_goes_to_the_disk_in_commands_of_at_most_max_request() {
        // One disk, one 16 MiB extent: as one command its data would cross the bus only after
        // the disk had read all of it; in 256 KiB commands the bus overlaps the media.
        let time = |max_request: u64| {
            let mut v = Volume::new(64 << 20, 1, 64 << 20, 0, max_request, DiskParams::default(), BusParams::default()).unwrap();
            v.submit(SimTime::ZERO, 1, Op::Read, 0, 16 << 20);
            drain(&mut v).last().unwrap().0.since(SimTime::ZERO).as_secs_f64()
        };
        let (whole, split) = (time(16 << 20), time(256 << 10));
        let media = (16u64 << 20) as f64 / 66.6e6;
        assert!(split < 1.06 * media, "split: {split:.3} s, media {media:.3} s");
        assert!(whole > split + 0.1, "one 16 MiB command waits for the bus: {whole:.3} s vs {split:.3} s");
    }

    #[test]
    fn a_read_reports_only_its_in_order_prefix() {
        // Extent 0 on disk 0 behind a long queued read; extent 1 on disk 1 finishes first, and
        // is reported only with extent 0.
        let mut v = volume(64 << 20, 2, 64 << 10);
        v.submit(SimTime::ZERO, 1, Op::Read, 0, 8 << 20); // both disks busy
        v.submit(SimTime::ZERO, 2, Op::Read, 8 << 20, 128 << 10);
        let reports: Vec<Progress> = drain(&mut v).into_iter().map(|r| r.1).filter(|p| p.key == 2).collect();
        assert_eq!(reports.iter().map(|p| p.bytes).sum::<u64>(), 128 << 10);
        assert!(reports.iter().all(|p| p.bytes % (64 << 10) == 0));
    }

    #[test]
    fn the_spindle_phase_moves_a_random_reads_rotational_wait() {
        // One random read from rest: the wait for its first sector depends on where the platter
        // stands at time 0, so two phases give two service times, half a revolution apart.
        let time = |phase: u64| {
            let mut v = volume(64 << 20, 1, 64 << 10);
            v.set_rotation_phases(|| phase);
            v.submit(SimTime::ZERO, 1, Op::Read, 40 << 20, 4096);
            drain(&mut v).last().unwrap().0
        };
        let half = 3_000_000_000; // 3 ms: half a revolution at 10,000 rpm
        let (a, b) = (time(0), time(half));
        assert_ne!(a, b);
        assert_eq!(a.0.abs_diff(b.0), half, "{a:?} vs {b:?}");
    }

    #[test]
    fn a_volume_larger_than_the_disks_is_refused() {
        let d = DiskParams { capacity_sectors: 20_000_000, ..DiskParams::default() };
        let e = Volume::new(32 << 30, 2, 64 << 10, 0, 256 << 10, d, BusParams::default()).unwrap_err();
        assert!(e.starts_with("file_bytes:"), "{e}");
        let e = Volume::new(1 << 20, 2, 1000, 0, 256 << 10, DiskParams::default(), BusParams::default()).unwrap_err();
        assert!(e.starts_with("unit_servers:") || e.starts_with("unit_disks:"), "{e}");
        let e = Volume::new(1 << 20, 2, 64 << 10, 0, 1000, DiskParams::default(), BusParams::default()).unwrap_err();
        assert!(e.starts_with("max_request:"), "{e}");
    }
}
