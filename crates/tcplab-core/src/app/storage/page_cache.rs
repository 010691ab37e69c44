//! A host's page cache over one file on one local disk, as far as Linux 2.4.18 decides a
//! sequential copy (study 002, Fig. 3's "conventional copy"): clean pages read from the disk
//! with sequential read-ahead, and dirty pages written by an application and written back by
//! bdflush/kupdate. Sans-I/O like `volume` and `disk`: the owning application calls `read`,
//! `write` and `advance` with the current time and sets its one timer to `next_event`. The disk
//! under it is `bus::DiskSet` (one disk of `disk::DiskParams` on its SCSI bus); defaults and their
//! sources: `scenarios/p2_data_reservoir/EVIDENCE.md` §10.
//!
//! MODEL (reading): the file is read in order. The first read starts a window of
//! `min_readahead + 1` pages; each time the reader enters the last window issued, the next
//! window (double the last, at most `max_readahead + 1` pages) is issued as one disk command:
//! 2.4's `generic_file_readahead` doubling `f_ramax` up to `vm_max_readahead` with the async
//! window. Pages are ready when their command's data has crossed the bus.
//! MODEL (writing): the file is written in order; "dirty" are bytes written and not yet handed
//! to the disk (2.4 counts `BUF_DIRTY` buffers; those under I/O are `BUF_LOCKED`). Write-out goes
//! oldest first, in commands of at most `max_request` bytes, at most `requests` queued. Above
//! `nfract` % of `cache_bytes` the writer writes out itself on each write (2.4.18's
//! `balance_dirty` state 0), down to `nfract` %; with the request queue full it waits for a free
//! request (refused here until a command completes). At `nfract_sync` % bdflush is woken and
//! writes out until dirty are back at `nfract` % (its stop test), the writer refused meanwhile
//! (state 1: it waits on the write-out). Every `interval` (kupdate), bytes dirty for at least
//! `age_buffer` are written out too.
//! MODEL: clean pages are evicted for free (no reclaim cost); no file-system metadata I/O (ext2
//! bitmaps, indirect blocks); the file lies contiguously from `base_lba`.

use std::collections::VecDeque;

use super::bus::{BusParams, DiskSet};
use super::disk::{DiskParams, Op, Request};
use crate::units::{SimDuration, SimTime};

/// The parameters of one host's page cache and write-back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageCacheParams {
    /// Page size, bytes. Default 4096 (i386).
    pub page_bytes: u64,
    /// Memory the dirty limits are percentages of, bytes: 2.4.18's `nr_free_buffer_pages()`,
    /// the low-memory zones' pages less their `pages_high`. Default 893 MiB (a 1 GB host with a
    /// HIGHMEM kernel: 896 MiB of DMA+Normal zones less about 3 MiB of watermarks; EVIDENCE §10).
    pub cache_bytes: u64,
    /// `vm.min-readahead`, pages. Default 3 (2.4.18 `mm/filemap.c`).
    pub min_readahead: u64,
    /// `vm.max-readahead`, pages. Default 31 (2.4.18 `mm/filemap.c`).
    pub max_readahead: u64,
    /// bdflush `nfract`: write-out starts above this % dirty. Default 40 (2.4.18 `bdf_prm`).
    pub nfract: u32,
    /// bdflush `nfract_sync`: the writer is throttled above this % dirty. Default 60 (2.4.18).
    pub nfract_sync: u32,
    /// kupdate's period. Default 5 s (2.4.18 `bdf_prm.interval`, 5·HZ).
    pub interval: SimDuration,
    /// Age at which kupdate writes a dirty buffer out. Default 30 s (`age_buffer`, 30·HZ).
    pub age_buffer: SimDuration,
    /// The largest disk command, bytes (whole sectors). Default 256 KiB (as the reservoir's
    /// `disk.max_request`, an assumption there).
    pub max_request: u64,
    /// Write commands queued at most. Default 64 (ASSUMPTION: 2.4's request queue of 128
    /// requests, half for writes — recalled, EVIDENCE §10).
    pub requests: u32,
}

impl Default for PageCacheParams {
    fn default() -> Self {
        PageCacheParams {
            page_bytes: 4096,
            cache_bytes: 893 << 20,
            min_readahead: 3,
            max_readahead: 31,
            nfract: 40,
            nfract_sync: 60,
            interval: SimDuration::from_secs(5),
            age_buffer: SimDuration::from_secs(30),
            max_request: 256 << 10,
            requests: 64,
        }
    }
}

impl PageCacheParams {
    /// Check the parameters; errors name the field.
    pub fn validate(&self) -> Result<(), String> {
        if self.page_bytes == 0 {
            return Err("page_bytes: must be at least 1".into());
        }
        if self.cache_bytes < self.page_bytes {
            return Err(format!("cache_bytes: {} bytes hold no {}-byte page", self.cache_bytes, self.page_bytes));
        }
        if self.min_readahead > self.max_readahead {
            return Err(format!("min_readahead: {} pages is above max_readahead ({})", self.min_readahead, self.max_readahead));
        }
        if !(1..=100).contains(&self.nfract) {
            return Err(format!("nfract: {} % is outside 1–100", self.nfract));
        }
        if !(1..=100).contains(&self.nfract_sync) {
            return Err(format!("nfract_sync: {} % is outside 1–100", self.nfract_sync));
        }
        if self.nfract_sync < self.nfract {
            return Err(format!("nfract_sync: {} % is below nfract ({} %): the writer would be throttled before write-out starts", self.nfract_sync, self.nfract));
        }
        if self.interval == SimDuration::ZERO {
            return Err("interval: must be above 0".into());
        }
        if self.max_request == 0 {
            return Err("max_request: must be at least 1 byte".into());
        }
        if self.requests == 0 {
            return Err("requests: must be at least 1".into());
        }
        Ok(())
    }
}

/// One host's page cache over one file.
#[derive(Clone, Debug)]
pub struct PageCache {
    p: PageCacheParams,
    disks: DiskSet,
    sector: u64,
    base_lba: u64,
    file: u64,
    // Reading.
    ready: u64,
    requested: u64,
    consumed: u64,
    window: u64,
    window_start: u64,
    read_sizes: Vec<u64>,
    // Writing.
    written: u64,
    submitted: u64,
    on_disk: u64,
    inflight: u32,
    flushing: bool,
    kupdate_to: u64,
    /// (when, file offset written up to then), for kupdate's ages; oldest first.
    dirtied: VecDeque<(SimTime, u64)>,
    next_tick: SimTime,
    blocked_at: Option<SimTime>,
    blocked: SimDuration,
    last_write_done: Option<SimTime>,
    write_sizes: Vec<u64>,
}

impl PageCache {
    /// A cold cache over a `file`-byte file laid from `base_lba` on one disk of `disk` on `bus`.
    /// Errors name the field (the file not fitting the disk: `file`).
    pub fn new(p: PageCacheParams, file: u64, base_lba: u64, disk: DiskParams, bus: BusParams) -> Result<PageCache, String> {
        p.validate()?;
        let sector = disk.sector_bytes as u64;
        if file == 0 {
            return Err("file: must be at least 1 byte".into());
        }
        if base_lba.saturating_add(file.div_ceil(sector)) > disk.capacity_sectors {
            return Err(format!("file: {file} bytes from LBA {base_lba} do not fit a disk of {} sectors", disk.capacity_sectors));
        }
        if !p.max_request.is_multiple_of(sector) {
            return Err(format!("max_request: {} bytes is not a whole number of {sector}-byte sectors", p.max_request));
        }
        Ok(PageCache {
            p,
            disks: DiskSet::new(1, disk, bus)?,
            sector,
            base_lba,
            file,
            ready: 0,
            requested: 0,
            consumed: 0,
            window: 0,
            window_start: 0,
            read_sizes: Vec::new(),
            written: 0,
            submitted: 0,
            on_disk: 0,
            inflight: 0,
            flushing: false,
            kupdate_to: 0,
            dirtied: VecDeque::new(),
            next_tick: SimTime::ZERO + p.interval,
            blocked_at: None,
            blocked: SimDuration::ZERO,
            last_write_done: None,
            write_sizes: Vec::new(),
        })
    }

    /// Set the disk's spindle phase (`DiskSet::set_rotation_phases`).
    pub fn set_rotation_phase(&mut self, draw: u64) {
        self.disks.set_rotation_phases(|| draw);
    }

    /// The parameters.
    pub fn params(&self) -> &PageCacheParams {
        &self.p
    }

    fn submit(&mut self, now: SimTime, op: Op, offset: u64, bytes: u64) {
        let req = Request { op, lba: self.base_lba + offset / self.sector, sectors: bytes.div_ceil(self.sector), tag: bytes };
        self.disks.submit(now, 0, req);
    }

    // ----- reading -----

    /// Read up to `max` bytes at the reader's position at `now`: returns the bytes that are in
    /// the cache (0 while the disk has not delivered them), and starts read-ahead.
    pub fn read(&mut self, now: SimTime, max: u64) -> u64 {
        self.advance(now);
        let n = max.min(self.ready - self.consumed);
        self.consumed += n;
        self.read_ahead(now);
        n
    }

    /// Bytes the reader has taken.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The sizes of the read commands issued, bytes, in order.
    pub fn read_sizes(&self) -> &[u64] {
        &self.read_sizes
    }

    /// Issue the next read-ahead window once the reader has entered the last one.
    fn read_ahead(&mut self, now: SimTime) {
        let page = self.p.page_bytes;
        while self.requested < self.file && (self.requested == 0 || self.consumed >= self.window_start) {
            self.window = if self.window == 0 { (self.p.min_readahead + 1) * page } else { (2 * self.window).min((self.p.max_readahead + 1) * page) };
            let n = self.window.min(self.p.max_request).min(self.file - self.requested);
            self.window_start = self.requested;
            self.submit(now, Op::Read, self.requested, n);
            self.read_sizes.push(n);
            self.requested += n;
        }
    }

    // ----- writing -----

    /// Bytes written and not yet handed to the disk.
    pub fn dirty(&self) -> u64 {
        self.written - self.submitted
    }

    fn limit(&self, percent: u32) -> u64 {
        (self.p.cache_bytes as u128 * percent as u128 / 100) as u64
    }

    /// Write up to `bytes` at the writer's position at `now`: returns the bytes the cache takes
    /// (fewer, down to 0, while the writer is throttled: see `room`).
    pub fn write(&mut self, now: SimTime, bytes: u64) -> u64 {
        self.advance(now);
        let n = bytes.min(self.room());
        if n > 0 {
            if let Some(t) = self.blocked_at.take() {
                self.blocked = self.blocked + now.since(t);
            }
            self.written += n;
            match self.dirtied.back_mut() {
                Some(last) if last.0 == now => last.1 = self.written,
                _ => self.dirtied.push_back((now, self.written)),
            }
            if self.dirty() >= self.limit(self.p.nfract_sync) {
                // balance_dirty's "really out of balance": bdflush is woken.
                self.flushing = true;
            }
            self.write_out(now, true);
        }
        if n < bytes && self.blocked_at.is_none() && self.written < self.file {
            self.blocked_at = Some(now);
        }
        n
    }

    /// Bytes the writer may write now: none while bdflush runs (from `nfract_sync` back down to
    /// `nfract`) or while above `nfract` with the request queue full (the writer's own
    /// write-out waits for a free request); else up to `nfract_sync`.
    pub fn room(&self) -> u64 {
        let d = self.dirty();
        if self.flushing || (d > self.limit(self.p.nfract) && self.inflight >= self.p.requests) {
            return 0;
        }
        self.limit(self.p.nfract_sync).saturating_sub(d).min(self.file - self.written)
    }

    /// Bytes written by the application.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Bytes on the disk.
    pub fn on_disk(&self) -> u64 {
        self.on_disk
    }

    /// When the last write command so far completed.
    pub fn last_write_done(&self) -> Option<SimTime> {
        self.last_write_done
    }

    /// Time the writer has spent refused so far (until `now` if it is refused now).
    pub fn blocked(&self, now: SimTime) -> SimDuration {
        self.blocked + self.blocked_at.map_or(SimDuration::ZERO, |t| now.since(t))
    }

    /// True while the writer is refused.
    pub fn is_blocked(&self) -> bool {
        self.blocked_at.is_some()
    }

    /// The sizes of the write commands issued, bytes, in order.
    pub fn write_sizes(&self) -> &[u64] {
        &self.write_sizes
    }

    /// Hand dirty bytes to the disk, oldest first, with at most `requests` commands queued: the
    /// writer's own write-out down to `nfract` (`by_writer`), bdflush's while it runs (down to
    /// `nfract`), and what kupdate found old.
    fn write_out(&mut self, now: SimTime, by_writer: bool) {
        let low = self.limit(self.p.nfract);
        loop {
            if self.flushing && self.dirty() <= low {
                self.flushing = false;
            }
            let down_to_low = (self.flushing || by_writer) && self.dirty() > low;
            let want = if down_to_low { self.written } else { self.kupdate_to.min(self.written) };
            if want <= self.submitted || self.inflight >= self.p.requests {
                break;
            }
            let n = (want - self.submitted).min(self.p.max_request);
            // Whole pages, but for the file's tail.
            let n = if self.submitted + n == self.file { n } else { n - n % self.p.page_bytes };
            if n == 0 {
                break;
            }
            self.submit(now, Op::Write, self.submitted, n);
            self.write_sizes.push(n);
            self.submitted += n;
            self.inflight += 1;
        }
    }

    // ----- time -----

    /// When `advance` next has something to do: a disk completion, or kupdate's next run while
    /// dirty bytes remain.
    pub fn next_event(&self) -> Option<SimTime> {
        let tick = (self.dirty() > 0).then_some(self.next_tick);
        [self.disks.next_event(), tick].into_iter().flatten().min()
    }

    /// Run the disk and kupdate to `now`.
    pub fn advance(&mut self, now: SimTime) {
        loop {
            let done = self.disks.advance(now);
            if done.is_empty() {
                break;
            }
            for (_, d) in done {
                match d.req.op {
                    Op::Read => self.ready += d.req.tag,
                    Op::Write => {
                        self.on_disk += d.req.tag;
                        self.inflight -= 1;
                        self.last_write_done = Some(d.done);
                    }
                }
            }
            self.write_out(now, false);
        }
        if now >= self.next_tick {
            // kupdate: everything dirtied at least `age_buffer` ago.
            while let Some(&(t, end)) = self.dirtied.front() {
                if t + self.p.age_buffer > now {
                    break;
                }
                self.kupdate_to = self.kupdate_to.max(end);
                self.dirtied.pop_front();
            }
            let k = now.0 / self.p.interval.as_ps() + 1;
            self.next_tick = SimTime(k * self.p.interval.as_ps());
        }
        while self.dirtied.front().is_some_and(|&(_, end)| end <= self.submitted) {
            self.dirtied.pop_front();
        }
        self.write_out(now, false);
    }
}

#[cfg(test)]
#[path = "page_cache_tests.rs"]
mod tests;
