//! `[flows.fs_copy]` resolved (study 002's conventional copy, Fig. 3): the file, netcat's read
//! size, both hosts' page caches (Linux 2.4.18's read-ahead and bdflush/kupdate) and disks, every
//! default written out (each with its source: `app::storage::page_cache::PageCacheParams`,
//! `scenarios/p2_data_reservoir/EVIDENCE.md` §10), every value checked with an error naming its key.

use serde::Serialize;

use super::reservoir::{keyed, resolve_disk, ResolvedDisk, SECTOR_BYTES};
use super::tcp::ResolvedTcp;
use super::{err, Res};
use crate::app::storage::page_cache::PageCacheParams;
use crate::scenario::spec::{Dur, FlowSpec, FsCopySpec, Size};

/// A file copy: the `fs_copy` table and the stream's TCP settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FsCopyTraffic {
    /// `[flows.fs_copy]`, resolved.
    pub fs_copy: ResolvedFsCopy,
    /// The stream's settings.
    pub tcp: ResolvedTcp,
}

/// `[flows.fs_copy]` with every default written out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedFsCopy {
    /// The file, at least 1 byte (default 1GB: the paper's 「1GB のファイル」).
    pub file: Size,
    /// netcat's read size, at least 1 byte (default 8KiB: nc 1.10's `BIGSIZ`).
    pub buffer: Size,
    /// Memory the dirty limits are percentages of (default 893MiB: a 1 GB host's low memory).
    pub cache: Size,
    /// `vm.min-readahead`, pages (default 3).
    pub min_readahead: u64,
    /// `vm.max-readahead`, pages (default 31).
    pub max_readahead: u64,
    /// bdflush `nfract`, percent (default 40).
    pub nfract: u32,
    /// bdflush `nfract_sync`, percent, at least `nfract` (default 60).
    pub nfract_sync: u32,
    /// kupdate's period (default 5s).
    pub interval: Dur,
    /// Age at which kupdate writes a dirty buffer out (default 30s).
    pub age_buffer: Dur,
    /// Write commands queued at most (default 64, an assumption).
    pub requests: u32,
    /// The file's place on the source's disk, 0 = outer edge … 1 = inner edge (default 0).
    pub src_position: f64,
    /// The copy's place on the destination's disk (default 0).
    pub dst_position: f64,
    /// Both hosts' disk and bus (defaults as `[flows.reservoir.disk]`).
    pub disk: ResolvedDisk,
}

impl ResolvedFsCopy {
    /// The page cache's parameters (both hosts).
    pub fn page_cache(&self) -> PageCacheParams {
        PageCacheParams {
            page_bytes: PageCacheParams::default().page_bytes,
            cache_bytes: self.cache.0,
            min_readahead: self.min_readahead,
            max_readahead: self.max_readahead,
            nfract: self.nfract,
            nfract_sync: self.nfract_sync,
            interval: self.interval.0,
            age_buffer: self.age_buffer.0,
            max_request: self.disk.max_request.0,
            requests: self.requests,
        }
    }

    /// The file's first LBA at `position` (0 outer … 1 inner) of the room the disk leaves.
    pub fn base_lba(&self, position: f64) -> u64 {
        let sectors = self.file.0.div_ceil(SECTOR_BYTES as u64);
        let room = (self.disk.capacity.0 / SECTOR_BYTES as u64).saturating_sub(sectors);
        (position * room as f64).floor() as u64
    }
}

/// Resolve flow `i`'s `[flows.fs_copy]`.
pub(super) fn resolve_fs_copy(i: usize, f: &FlowSpec) -> Res<ResolvedFsCopy> {
    let p = |x: &str| format!("flows[{i}].{x}");
    let rp = |x: &str| format!("flows[{i}].fs_copy.{x}");
    if f.count.is_some_and(|c| c != 1) {
        return err(p("count"), "an fs-copy flow is one netcat stream");
    }
    if f.stop.is_some() {
        return err(p("stop"), "not for fs-copy flows (they copy the whole file)");
    }
    let c: FsCopySpec = f.fs_copy.clone().unwrap_or_default();
    let d = PageCacheParams::default();
    let file = c.file.unwrap_or(Size(1_000_000_000));
    if file.0 == 0 {
        return err(rp("file"), "must be at least 1 byte");
    }
    let buffer = c.buffer.unwrap_or(Size(8192));
    if buffer.0 == 0 {
        return err(rp("buffer"), "must be at least 1 byte");
    }
    let src_position = c.src_position.unwrap_or(0.0);
    let dst_position = c.dst_position.unwrap_or(0.0);
    for (key, v) in [("src_position", src_position), ("dst_position", dst_position)] {
        if !(0.0..=1.0).contains(&v) {
            return err(rp(key), format!("{v} is outside 0 (outer edge) ..= 1 (inner edge)"));
        }
    }
    let disk = resolve_disk(&c.disk.clone().unwrap_or_default(), rp)?;
    let resolved = ResolvedFsCopy {
        file,
        buffer,
        cache: c.cache.unwrap_or(Size(d.cache_bytes)),
        min_readahead: c.min_readahead.unwrap_or(d.min_readahead),
        max_readahead: c.max_readahead.unwrap_or(d.max_readahead),
        nfract: c.nfract.unwrap_or(d.nfract),
        nfract_sync: c.nfract_sync.unwrap_or(d.nfract_sync),
        interval: c.interval.unwrap_or(Dur(d.interval)),
        age_buffer: c.age_buffer.unwrap_or(Dur(d.age_buffer)),
        requests: c.requests.unwrap_or(d.requests),
        src_position,
        dst_position,
        disk,
    };
    resolved.disk.check(&rp("disk"))?;
    let keys = [("cache_bytes", "cache"), ("max_request", "disk.max_request"), ("page_bytes", "cache")];
    resolved.page_cache().validate().map_err(|e| keyed(e, &format!("flows[{i}].fs_copy"), &keys))?;
    let sectors = file.0.div_ceil(SECTOR_BYTES as u64);
    if sectors > resolved.disk.capacity.0 / SECTOR_BYTES as u64 {
        return err(rp("file"), format!("{} bytes do not fit a disk of {} bytes", file.0, resolved.disk.capacity.0));
    }
    Ok(resolved)
}
