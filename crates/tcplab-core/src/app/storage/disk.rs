//! One disk, sans-I/O: a FIFO command queue in front of a zoned, rotating disk with a seek curve,
//! per-command overhead and a one-segment cache with read-ahead; writes through or into the
//! cache (WCE). Defaults are the IBM Ultrastar 146Z10 73 GB class of study 002 (a 10,000 rpm
//! Ultra160 disk of 2002; `scenarios/p2_data_reservoir/EVIDENCE.md` §2, cited per field).
//!
//! `submit(now, request)` in arrival order; the disk works out at once when the command will
//! complete (the queue is FIFO and nothing later can change an earlier command's timing), and
//! `next_completion`/`complete(now)` hand the completions back in order.
//!
//! A command arriving at `t_a` is taken by the controller at `c = max(t_a, c_prev + o_prev)`:
//! its overhead `o` overlaps the previous command's mechanical work when it was queued (tagged
//! queueing). Then:
//! - **media access** (a read miss, any write-through write, a write-back destage): the arm starts at
//!   `m = max(c + o_miss, mech_free)`, seeks `seek(|track(lba) − head|)` (read or write curve,
//!   `geometry::SeekCurve`), waits for the first sector to come round (the platter's angle is
//!   `t mod T_rev`, so the wait is deterministic: a command that reaches the track as its sector
//!   arrives waits nothing), and transfers `n` sectors at the zone's `spt` sectors per
//!   revolution (`geometry::Geometry::media_end`). Done = end of transfer (for a read: data in
//!   the disk's buffer; the bus is `bus::ScsiBus`).
//! - **cache segment** (a read starting inside the segment, or exactly at its end while the
//!   read-ahead still runs): done = `max(c + o_hit, ready(lba + n))`, `ready(x)` the time the
//!   read-ahead stream has read sector `x − 1` (no seek, no rotation: the stream continues).
//!
//! MODEL: one cache segment of `cache_bytes`. After a read the disk keeps reading ahead (when
//! `read_ahead`) until the segment holds `cache_bytes` past the request's end; a miss abandons
//! the read-ahead; a hit extends it, restarting it (one rotational wait, no seek) if it had
//! stopped. Writes invalidate the segment. Two interleaved streams on one disk therefore thrash.
//! MODEL: no reordering (no elevator, no SPTF): service is FIFO in arrival order; completions
//! are reported in that order (a hit behind a slow miss completes after it).
//! MODEL: write-back (`write_cache`) acknowledges after `o_hit` while the dirty data fit the
//! cache, else when enough earlier destages end; destages run FIFO on the mechanism before any
//! later command's media access. A write larger than the cache is written through.

use std::collections::VecDeque;

use super::geometry::{Geometry, SeekCurve};
use crate::units::{BitRate, SimDuration, SimTime};

/// A read or a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read from the disk to the host.
    Read,
    /// Write from the host to the disk.
    Write,
}

/// One SCSI command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    /// Read or write.
    pub op: Op,
    /// First logical block.
    pub lba: u64,
    /// Blocks (sectors), ≥ 1.
    pub sectors: u64,
    /// The caller's tag, returned in `Done`.
    pub tag: u64,
}

/// A completed command and how its time was spent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Done {
    /// The request.
    pub req: Request,
    /// When it was submitted (to the disk; to the host's bus stage in `bus::DiskSet`).
    pub submitted: SimTime,
    /// When the disk began its own work on it: the arm's start for a media access, the
    /// controller's for a cache hit.
    pub started: SimTime,
    /// Seek time (zero for a cache hit).
    pub seek: SimDuration,
    /// Rotational wait before its first sector (zero for a cache hit).
    pub rotation: SimDuration,
    /// Served from the cache segment (read) or acknowledged from the write cache (write).
    pub cache_hit: bool,
    /// When the disk completed it: a read's data is in the disk buffer, a write is acknowledged.
    pub disk_done: SimTime,
    /// When the host has it (equal to `disk_done` for a disk alone; after the bus in a `DiskSet`).
    pub done: SimTime,
}

/// A seek curve's three datasheet points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeekParams {
    /// Seek to the adjacent track.
    pub track_to_track: SimDuration,
    /// Mean over seeks between uniformly random LBAs.
    pub average: SimDuration,
    /// Seek across the whole disk.
    pub full_stroke: SimDuration,
}

/// The parameters of one disk model. `Default` is the 73 GB Ultrastar 146Z10 class
/// (`scenarios/p2_data_reservoir/EVIDENCE.md` §2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DiskParams {
    /// Bytes per sector. Default 512 (EVIDENCE §2 "sector size": the 146Z10 tables are for 512).
    pub sector_bytes: u32,
    /// Capacity, sectors. Default 143,571,316 (73.5 GB; EVIDENCE §2 "capacity": the one exact
    /// block count of a 73 GB disk of the class, Fujitsu MAP3735's SMART log).
    pub capacity_sectors: u64,
    /// Spindle speed, revolutions per minute. Default 10,000 (EVIDENCE §2 "rotation"; the seed's
    /// 「10,000rpm」).
    pub rpm: u32,
    /// Sustained media rate of the outermost zone. Default 66.6 MB/s = 532.8 Mb/s (EVIDENCE §2,
    /// an estimate from the 146Z10 §4.5.7.1 throughput formula, zone 0).
    pub rate_outer: BitRate,
    /// Sustained media rate of the innermost zone. Default 33.4 MB/s = 267.2 Mb/s (EVIDENCE §2,
    /// same formula, zone 14).
    pub rate_inner: BitRate,
    /// Zones, the rate falling linearly from outer to inner across them. Default 15 (EVIDENCE §2
    /// "zones": zones 0–14; the linear shape is an estimate).
    pub zones: u32,
    /// Read seeks. Default track-to-track 0.5 ms (estimate: class range 0.3–0.6 ms, EVIDENCE §2
    /// "seek curve"), average 4.7 ms and full stroke 10.5 ms (146Z10 §4.5.2, EVIDENCE §2).
    pub seek_read: SeekParams,
    /// Write seeks. Default track-to-track 0.5 ms (estimate, as for reads), average 5.3 ms
    /// (146Z10 §4.5.2.1, mapped 5.3–5.9) and full stroke 11.5 ms (EVIDENCE §2).
    pub seek_write: SeekParams,
    /// Command overhead of a media access. Default 0.4 ms (146Z10 §4.5.1 "< 0.4 ms" cache miss,
    /// an upper bound; EVIDENCE §2).
    pub overhead_miss: SimDuration,
    /// Command overhead of a cache hit. Default 30 µs (146Z10 §4.5.1 "< 30 µs"; EVIDENCE §2).
    pub overhead_hit: SimDuration,
    /// Cache (one segment), bytes. Default 4 MiB (EVIDENCE §2 "cache": not found for the model;
    /// 4 MB taken as 4 MiB, mapped 2–8 MB).
    pub cache_bytes: u64,
    /// Read-ahead after reads. Default on (EVIDENCE §2 "read-ahead": prefetch on by default).
    pub read_ahead: bool,
    /// Write cache enabled (WCE): writes acknowledged from the cache. Default off, write-through
    /// (EVIDENCE §2 "write cache": not found for these models; SCSI disks of the class shipped
    /// with WCE off as a rule — an assumption).
    pub write_cache: bool,
}

impl Default for DiskParams {
    fn default() -> Self {
        let ms = SimDuration::from_micros;
        DiskParams {
            sector_bytes: 512,
            capacity_sectors: 143_571_316,
            rpm: 10_000,
            rate_outer: BitRate(66_600_000 * 8),
            rate_inner: BitRate(33_400_000 * 8),
            zones: 15,
            seek_read: SeekParams { track_to_track: ms(500), average: ms(4_700), full_stroke: ms(10_500) },
            seek_write: SeekParams { track_to_track: ms(500), average: ms(5_300), full_stroke: ms(11_500) },
            overhead_miss: ms(400),
            overhead_hit: ms(30),
            cache_bytes: 4 << 20,
            read_ahead: true,
            write_cache: false,
        }
    }
}

impl DiskParams {
    /// Check the parameters describe a disk that can exist; errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        self.build().map(|_| ())
    }

    /// The geometry and the two seek curves.
    fn build(&self) -> Result<(Geometry, SeekCurve, SeekCurve), String> {
        let geo = Geometry::new(self.capacity_sectors, self.sector_bytes, self.rpm, self.zones, self.rate_outer.bps(), self.rate_inner.bps())?;
        if self.cache_bytes < self.sector_bytes as u64 {
            return Err(format!("cache_bytes: {} bytes hold no {}-byte sector", self.cache_bytes, self.sector_bytes));
        }
        if self.overhead_hit > self.overhead_miss {
            return Err(format!("overhead_hit: {} is above overhead_miss ({})", self.overhead_hit, self.overhead_miss));
        }
        let curve = |s: &SeekParams, field: &str| SeekCurve::fit(&geo, s.track_to_track.as_secs_f64(), s.average.as_secs_f64(), s.full_stroke.as_secs_f64(), field);
        let read = curve(&self.seek_read, "seek_read")?;
        let write = curve(&self.seek_write, "seek_write")?;
        Ok((geo, read, write))
    }
}

/// The cache segment: LBAs `[lo, hi)`, of which those from `stream_lba` on are read by the
/// read-ahead stream that began with sector `stream_lba` at `stream_t`.
#[derive(Clone, Copy, Debug)]
struct Segment {
    lo: u64,
    stream_lba: u64,
    stream_t: SimTime,
    hi: u64,
}

/// One disk: its parameters, state and queue of commands not yet reported complete.
#[derive(Clone, Debug)]
pub struct Disk {
    params: DiskParams,
    geo: Geometry,
    seek_read: SeekCurve,
    seek_write: SeekCurve,
    cache_sectors: u64,
    /// When the controller can take the next command.
    ctl_free: SimTime,
    /// When the mechanism has finished every media access so far (read-ahead excepted).
    mech_free: SimTime,
    /// The head's track when there is no segment (after a write).
    head_track: u64,
    seg: Option<Segment>,
    /// Write-back data not yet on the media: (destage end, sectors), in order.
    dirty: VecDeque<(SimTime, u64)>,
    dirty_sectors: u64,
    last_arrival: SimTime,
    last_done: SimTime,
    pending: VecDeque<Done>,
}

impl Disk {
    /// A disk at rest: head on track 0, empty cache, platter at angle 0 at time 0.
    pub fn new(params: DiskParams) -> Result<Disk, String> {
        let (geo, seek_read, seek_write) = params.build()?;
        Ok(Disk {
            cache_sectors: params.cache_bytes / params.sector_bytes as u64,
            params,
            geo,
            seek_read,
            seek_write,
            ctl_free: SimTime::ZERO,
            mech_free: SimTime::ZERO,
            head_track: 0,
            seg: None,
            dirty: VecDeque::new(),
            dirty_sectors: 0,
            last_arrival: SimTime::ZERO,
            last_done: SimTime::ZERO,
            pending: VecDeque::new(),
        })
    }

    /// Set the platter's angle at time 0 to `draw` modulo one revolution, picoseconds (a disk
    /// spins freely before a run: its phase is a seeded draw, `build::reservoir`).
    pub fn set_rotation_phase(&mut self, draw: u64) {
        self.geo.phase_ps = draw % self.geo.rev_ps;
    }

    /// The parameters.
    pub fn params(&self) -> &DiskParams {
        &self.params
    }

    /// The zone table.
    pub fn geometry(&self) -> &Geometry {
        &self.geo
    }

    /// The seek curve of `op`.
    pub fn seek_curve(&self, op: Op) -> &SeekCurve {
        match op {
            Op::Read => &self.seek_read,
            Op::Write => &self.seek_write,
        }
    }

    /// Queue a command arriving at `now` (non-decreasing across calls).
    ///
    /// Panics if the request is empty or runs past the last sector (a broken invariant: the
    /// striping layer checks the file fits).
    pub fn submit(&mut self, now: SimTime, req: Request) {
        assert!(req.sectors > 0 && req.lba.checked_add(req.sectors).is_some_and(|e| e <= self.geo.capacity), "request {req:?} outside the disk");
        debug_assert!(now >= self.last_arrival, "submissions in time order");
        self.last_arrival = now;
        let c = now.max(self.ctl_free);
        let mut d = match req.op {
            Op::Read => self.read(c, req.lba, req.sectors),
            Op::Write if self.params.write_cache && req.sectors <= self.cache_sectors => self.write_back(c, req.lba, req.sectors),
            Op::Write => self.write_through(c, req.lba, req.sectors),
        };
        d.req = req;
        d.submitted = now;
        d.disk_done = d.disk_done.max(self.last_done);
        d.done = d.disk_done;
        self.last_done = d.disk_done;
        self.pending.push_back(d);
    }

    /// When the next command completes, if any is queued.
    pub fn next_completion(&self) -> Option<SimTime> {
        self.pending.front().map(|d| d.done)
    }

    /// The next completion due by `now`, if any.
    pub fn pop_due(&mut self, now: SimTime) -> Option<Done> {
        if self.pending.front().is_some_and(|d| d.done <= now) {
            self.pending.pop_front()
        } else {
            None
        }
    }

    /// Every completion due by `now`, in order.
    pub fn complete(&mut self, now: SimTime) -> Vec<Done> {
        std::iter::from_fn(|| self.pop_due(now)).collect()
    }

    /// Commands submitted and not yet returned by `complete`.
    pub fn queued(&self) -> usize {
        self.pending.len()
    }

    fn blank(started: SimTime, disk_done: SimTime, seek: SimDuration, rotation: SimDuration, cache_hit: bool) -> Done {
        let req = Request { op: Op::Read, lba: 0, sectors: 0, tag: 0 };
        Done { req, submitted: SimTime::ZERO, started, seek, rotation, cache_hit, disk_done, done: disk_done }
    }

    /// A read taken by the controller at `c`.
    fn read(&mut self, c: SimTime, l: u64, n: u64) -> Done {
        let cap = self.geo.capacity;
        let ra = if self.params.read_ahead { self.cache_sectors } else { 0 };
        if let Some(mut seg) = self.seg {
            let running = c < self.ready(&seg, seg.hi);
            if seg.lo <= l && (l < seg.hi || (l == seg.hi && running)) {
                let c_end = c + self.params.overhead_hit;
                let want = seg.hi.max((l + n).saturating_add(ra).min(cap));
                if want > seg.hi && !running {
                    // The read-ahead had stopped at `hi`: restart it there (no seek, one wait).
                    seg.stream_lba = seg.hi;
                    let at = c_end.max(self.mech_free);
                    seg.stream_t = at + self.geo.rotation_wait(seg.hi, at);
                }
                seg.hi = want;
                seg.lo = seg.lo.max(seg.hi.saturating_sub(self.cache_sectors));
                let ready = self.ready(&seg, l + n);
                self.seg = Some(seg);
                self.ctl_free = c_end;
                self.mech_free = self.mech_free.max(ready);
                return Disk::blank(c, c_end.max(ready), SimDuration::ZERO, SimDuration::ZERO, ready <= c_end);
            }
        }
        let (m, seek, rot, end) = self.media(c, l, n, Op::Read);
        let hi = (l + n).saturating_add(ra).min(cap);
        self.seg = Some(Segment { lo: l.max(hi.saturating_sub(self.cache_sectors)), stream_lba: l + n, stream_t: end, hi });
        Disk::blank(m, end, seek, rot, false)
    }

    /// A write taken at `c`, on the media before it is acknowledged.
    fn write_through(&mut self, c: SimTime, l: u64, n: u64) -> Done {
        let (m, seek, rot, end) = self.media(c, l, n, Op::Write);
        self.after_write(l, n);
        Disk::blank(m, end, seek, rot, false)
    }

    /// A write taken at `c` into the write cache; its destage is scheduled on the mechanism.
    fn write_back(&mut self, c: SimTime, l: u64, n: u64) -> Done {
        let c_end = c + self.params.overhead_hit;
        let mut ack = c_end;
        while let Some(&(end, s)) = self.dirty.front() {
            if end > ack && self.dirty_sectors + n <= self.cache_sectors {
                break;
            }
            ack = ack.max(end);
            self.dirty_sectors -= s;
            self.dirty.pop_front();
        }
        // The destage: a media access after the data is in the cache (no command overhead of
        // its own beyond the hit's).
        let m = c_end.max(self.mech_free);
        let (_, _, end) = self.position_and_transfer(m, l, n, Op::Write);
        self.mech_free = end;
        self.after_write(l, n);
        self.dirty.push_back((end, n));
        self.dirty_sectors += n;
        self.ctl_free = ack;
        Disk::blank(c, ack, SimDuration::ZERO, SimDuration::ZERO, true)
    }

    fn after_write(&mut self, l: u64, n: u64) {
        self.seg = None;
        self.head_track = self.geo.track(l + n);
    }

    /// A media access taken by the controller at `c`: (arm start, seek, rotation, end).
    fn media(&mut self, c: SimTime, l: u64, n: u64, op: Op) -> (SimTime, SimDuration, SimDuration, SimTime) {
        let c_end = c + self.params.overhead_miss;
        let m = c_end.max(self.mech_free);
        let (seek, rot, end) = self.position_and_transfer(m, l, n, op);
        self.ctl_free = c_end;
        self.mech_free = end;
        (m, seek, rot, end)
    }

    /// Seek from where the head is at `m`, wait for sector `l`, transfer `n` sectors.
    fn position_and_transfer(&self, m: SimTime, l: u64, n: u64, op: Op) -> (SimDuration, SimDuration, SimTime) {
        let d = self.head_at(m).abs_diff(self.geo.track(l));
        let seek = self.seek_curve(op).time(d);
        let p = m + seek;
        let rot = self.geo.rotation_wait(l, p);
        (seek, rot, self.geo.media_end(l, n, p))
    }

    /// The head's track at `m`: where the read-ahead stream is (or stopped), else where the
    /// last write left it.
    fn head_at(&self, m: SimTime) -> u64 {
        match self.seg {
            Some(s) if m >= self.ready(&s, s.hi) => self.geo.track(s.hi),
            Some(s) => self.geo.track(self.geo.lba_at(s.stream_lba, s.stream_t, m).min(s.hi)),
            None => self.head_track,
        }
    }

    /// When sector `x − 1` is in the segment (time zero if it already was before the stream).
    fn ready(&self, s: &Segment, x: u64) -> SimTime {
        if x <= s.stream_lba {
            SimTime::ZERO
        } else {
            self.geo.media_end(s.stream_lba, x - s.stream_lba, s.stream_t)
        }
    }
}

#[cfg(test)]
#[path = "disk_tests.rs"]
mod tests;
