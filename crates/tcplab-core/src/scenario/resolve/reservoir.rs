//! `[flows.reservoir]` resolved (study 002): the transfer's shape `1×j×k`, the file and its
//! striping, the iSCSI session parameters and the disk servers' disks and bus, every default
//! written out, every value checked before the run with an error naming its key.

use serde::Serialize;

use super::nodes::{is_or_member_of, members, Names, NodeKind};
use super::tcp::ResolvedTcp;
use super::{err, Res};
use crate::app::storage::bus::BusParams;
use crate::app::storage::disk::{DiskParams, SeekParams};
use crate::app::storage::iscsi::{Digest, SessionParams};
use crate::app::storage::stripe::{Stripe, StripeParams};
use crate::scenario::spec::{Access, DiskSpec, Dur, FlowSpec, Placement, Rate, ReservoirSpec, Size};
use crate::scenario::ScenarioError;
use crate::units::BitRate;

/// Bytes per sector of the modelled disks (the study's disks are formatted at 512).
pub const SECTOR_BYTES: u32 = 512;

/// A striped transfer: the `reservoir` table and the streams' TCP settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ReservoirTraffic {
    /// `[flows.reservoir]`, resolved.
    pub reservoir: ResolvedReservoir,
    /// The streams' settings.
    pub tcp: ResolvedTcp,
}

/// `[flows.reservoir]` with every default written out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedReservoir {
    /// "remote": source disk server `s` (member `s` of `src`) WRITEs its share to member `s`
    /// of `dst`; "local": the file server `dst` READs the file from the members of `src`.
    pub access: Access,
    /// `j`: disk servers, the first this many members of `src` (and of `dst`, remote).
    pub servers: u32,
    /// `k`: data disks per disk server (default 2: the paper's hosts, 「データディスクを 2 台」).
    pub disks: u32,
    /// The file, a whole number of 512-byte sectors.
    pub file: Size,
    /// Bytes per SCSI command, whole sectors, below 2^32 (default 256KiB; ASSUMPTION(p2): the
    /// paper gives none).
    pub block: Size,
    /// Stripe unit over the servers, whole sectors (default: `block`).
    pub stripe_unit: Size,
    /// Stripe unit over a server's disks, whole sectors (default: `stripe_unit`).
    pub disk_stripe_unit: Size,
    /// The file's place on every disk, 0 = outer edge … 1 = inner edge (default 0).
    pub file_position: f64,
    /// How each disk's stripe units lie on it (default "sequential"; "scattered" ignores
    /// `file_position`).
    pub placement: Placement,
    /// `[flows.reservoir.iscsi]`.
    pub iscsi: ResolvedIscsi,
    /// `[flows.reservoir.disk]`.
    pub disk: ResolvedDisk,
}

/// The session parameters (defaults: `app::storage::iscsi::SessionParams`, each with its
/// evidence there).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedIscsi {
    /// MaxRecvDataSegmentLength, both directions (default 8192).
    pub max_recv_data_segment_length: u32,
    /// FirstBurstLength (default 65536).
    pub first_burst_length: u32,
    /// MaxBurstLength (default 262144).
    pub max_burst_length: u32,
    /// ImmediateData (default true).
    pub immediate_data: bool,
    /// InitialR2T (default true).
    pub initial_r2t: bool,
    /// MaxOutstandingR2T (default 1).
    pub max_outstanding_r2t: u32,
    /// HeaderDigest CRC32C (default false).
    pub header_digest: bool,
    /// DataDigest CRC32C (default false).
    pub data_digest: bool,
    /// The target's command window (default 32, an assumption).
    pub command_window: u32,
    /// A READ's status in its last Data-In (default true, an assumption).
    pub phase_collapse: bool,
}

/// The disks and bus of every disk server (defaults: `app::storage::disk::DiskParams` and
/// `bus::BusParams`, the 10,000 rpm Ultra160 73 GB class of 2002, each with its evidence).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedDisk {
    /// Spindle speed, rpm (default 10000).
    pub rpm: u32,
    /// Outer-zone media rate (default 532.8Mbps = 66.6 MB/s).
    pub rate_outer: Rate,
    /// Inner-zone media rate (default 267.2Mbps = 33.4 MB/s).
    pub rate_inner: Rate,
    /// Zones (default 15).
    pub zones: u32,
    /// Capacity (default 143,571,316 sectors).
    pub capacity: Size,
    /// Average read seek (default 4.7ms).
    pub seek_read: Dur,
    /// Average write seek (default 5.3ms).
    pub seek_write: Dur,
    /// Track-to-track seek (default 500us).
    pub seek_track: Dur,
    /// Full-stroke read seek (default 10.5ms).
    pub seek_read_full: Dur,
    /// Full-stroke write seek (default 11.5ms).
    pub seek_write_full: Dur,
    /// Command overhead of a media access (default 400us).
    pub overhead: Dur,
    /// Cache segment (default 4MiB).
    pub cache: Size,
    /// Read-ahead (default true).
    pub read_ahead: bool,
    /// Write cache (default false: write-through).
    pub write_cache: bool,
    /// The largest disk command, whole sectors (default 256KiB: 512 sectors. ASSUMPTION(p2):
    /// Linux 2.4's SCSI layer caps a request at the host adapter's `max_sectors`, recalled as
    /// 255 or 512 for aic7xxx — not verified, EVIDENCE §4; mapped 128–256 KiB).
    pub max_request: Size,
    /// SCSI bus raw rate (default 1.28Gbps = 160 MB/s, Ultra160).
    pub bus: Rate,
    /// Bus efficiency, percent (default 85).
    pub bus_efficiency: u32,
}

impl ResolvedReservoir {
    /// The sessions' parameters.
    pub fn session(&self) -> SessionParams {
        let i = &self.iscsi;
        let digest = |on: bool| if on { Digest::Crc32c } else { Digest::None };
        SessionParams {
            max_recv_data_segment_length_initiator: i.max_recv_data_segment_length,
            max_recv_data_segment_length_target: i.max_recv_data_segment_length,
            first_burst_length: i.first_burst_length,
            max_burst_length: i.max_burst_length,
            immediate_data: i.immediate_data,
            initial_r2t: i.initial_r2t,
            header_digest: digest(i.header_digest),
            data_digest: digest(i.data_digest),
            max_outstanding_r2t: i.max_outstanding_r2t,
            command_window: i.command_window,
            phase_collapse: i.phase_collapse,
        }
    }

    /// The disk model.
    pub fn disk_params(&self) -> DiskParams {
        self.disk.params()
    }

    /// The bus.
    pub fn bus_params(&self) -> BusParams {
        self.disk.bus_params()
    }

    /// The file's `1×j×k` layout, placed at `file_position` on every disk.
    pub fn stripe(&self) -> Stripe {
        self.layout(self.base_lba()).build().expect("validated when resolved")
    }

    fn layout(&self, base_lba: u64) -> StripeParams {
        StripeParams {
            file_servers: 1,
            servers: self.servers,
            disks: self.disks,
            unit_servers: self.stripe_unit.0,
            unit_disks: self.disk_stripe_unit.0,
            sector_bytes: SECTOR_BYTES,
            base_lba,
        }
    }

    /// The file's first LBA on every disk: `file_position` of the room the largest share
    /// leaves.
    pub fn base_lba(&self) -> u64 {
        let most = self.layout(0).build().expect("validated when resolved").disk_bytes(self.file.0, 0, 0).div_ceil(SECTOR_BYTES as u64);
        let room = (self.disk.capacity.0 / SECTOR_BYTES as u64).saturating_sub(most);
        (self.file_position * room as f64).floor() as u64
    }
}

impl ResolvedDisk {
    /// The disk model.
    pub fn params(&self) -> DiskParams {
        DiskParams {
            sector_bytes: SECTOR_BYTES,
            capacity_sectors: self.capacity.0 / SECTOR_BYTES as u64,
            rpm: self.rpm,
            rate_outer: self.rate_outer.0,
            rate_inner: self.rate_inner.0,
            zones: self.zones,
            seek_read: SeekParams { track_to_track: self.seek_track.0, average: self.seek_read.0, full_stroke: self.seek_read_full.0 },
            seek_write: SeekParams { track_to_track: self.seek_track.0, average: self.seek_write.0, full_stroke: self.seek_write_full.0 },
            overhead_miss: self.overhead.0,
            overhead_hit: DiskParams::default().overhead_hit.min(self.overhead.0),
            cache_bytes: self.cache.0,
            read_ahead: self.read_ahead,
            write_cache: self.write_cache,
        }
    }

    /// The bus.
    pub fn bus_params(&self) -> BusParams {
        BusParams { rate: self.bus.0, efficiency_percent: self.bus_efficiency }
    }

    /// Check the disk model and the bus; errors name the key under `path` (`….disk`).
    pub(super) fn check(&self, path: &str) -> Res<()> {
        let disk_keys = [("capacity_sectors", "capacity"), ("cache_bytes", "cache"), ("overhead_hit", "overhead"), ("overhead_miss", "overhead")];
        self.params().validate().map_err(|e| keyed(e, path, &disk_keys))?;
        self.bus_params().validate().map_err(|e| keyed(e, path, &[("rate", "bus"), ("efficiency_percent", "bus_efficiency")]))?;
        Ok(())
    }
}

/// `[….disk]` with every default written out, its simple checks made (`rp` names a key).
pub(super) fn resolve_disk(d: &DiskSpec, rp: impl Fn(&str) -> String) -> Res<ResolvedDisk> {
    let sector = SECTOR_BYTES as u64;
    let (dd, bd) = (DiskParams::default(), BusParams::default());
    let disk = ResolvedDisk {
        rpm: d.rpm.unwrap_or(dd.rpm),
        rate_outer: d.rate_outer.unwrap_or(Rate(dd.rate_outer)),
        rate_inner: d.rate_inner.unwrap_or(Rate(dd.rate_inner)),
        zones: d.zones.unwrap_or(dd.zones),
        capacity: d.capacity.unwrap_or(Size(dd.capacity_sectors * sector)),
        seek_read: d.seek_read.unwrap_or(Dur(dd.seek_read.average)),
        seek_write: d.seek_write.unwrap_or(Dur(dd.seek_write.average)),
        seek_track: d.seek_track.unwrap_or(Dur(dd.seek_read.track_to_track)),
        seek_read_full: d.seek_read_full.unwrap_or(Dur(dd.seek_read.full_stroke)),
        seek_write_full: d.seek_write_full.unwrap_or(Dur(dd.seek_write.full_stroke)),
        overhead: d.overhead.unwrap_or(Dur(dd.overhead_miss)),
        cache: d.cache.unwrap_or(Size(dd.cache_bytes)),
        read_ahead: d.read_ahead.unwrap_or(dd.read_ahead),
        write_cache: d.write_cache.unwrap_or(dd.write_cache),
        max_request: d.max_request.unwrap_or(Size(256 * 1024)),
        bus: d.bus.unwrap_or(Rate(bd.rate)),
        bus_efficiency: d.bus_efficiency.unwrap_or(bd.efficiency_percent),
    };
    if disk.capacity.0 < sector {
        return err(rp("disk.capacity"), format!("{} bytes hold no {sector}-byte sector", disk.capacity.0));
    }
    if disk.max_request.0 == 0 || !disk.max_request.0.is_multiple_of(sector) {
        return err(rp("disk.max_request"), format!("{} bytes is not a whole number (≥ 1) of {sector}-byte sectors", disk.max_request.0));
    }
    if disk.rate_outer.0 == BitRate(0) {
        return err(rp("disk.rate_outer"), "must be above 0");
    }
    Ok(disk)
}

/// The names of a reservoir flow's streams: `name.s` for disk server `s`.
pub fn reservoir_names(name: &str, servers: u32) -> Vec<String> {
    (0..servers).map(|s| format!("{name}.{s}")).collect()
}

/// Rewrite a model's error (`field: reason`) with the scenario key it comes from.
pub(super) fn keyed(e: String, path: &str, keys: &[(&str, &str)]) -> ScenarioError {
    let (field, rest) = e.split_once(':').unwrap_or(("", &e));
    let head = field.split('.').next().unwrap_or(field);
    let key = keys.iter().find(|(model, _)| *model == head).map_or(head, |k| k.1);
    ScenarioError::new(format!("{path}.{key}"), rest.trim())
}

/// Resolve flow `i`'s `[flows.reservoir]`; `names` are the scenario's nodes.
pub(super) fn resolve_reservoir(i: usize, f: &FlowSpec, names: &Names) -> Res<ResolvedReservoir> {
    let p = |x: &str| format!("flows[{i}].{x}");
    let rp = |x: &str| format!("flows[{i}].reservoir.{x}");
    let r: ReservoirSpec = f.reservoir.clone().unwrap_or_default();
    if f.count.is_some_and(|c| c != 1) {
        return err(p("count"), "a reservoir flow makes one stream per disk server; set reservoir.servers instead");
    }
    if f.stop.is_some() {
        return err(p("stop"), "not for reservoir flows (they move the whole file)");
    }
    let access = r.access.unwrap_or_default();
    let sources = members(&f.src, names);
    let servers = r.servers.unwrap_or(sources.len() as u32);
    if servers == 0 || servers as usize > sources.len() {
        return err(rp("servers"), format!("{servers} disk servers out of range: '{}' has {} (1..={})", f.src, sources.len(), sources.len()));
    }
    match access {
        Access::Local => {
            if matches!(names.get(&f.dst), Some(NodeKind::Group(_))) {
                return err(p("dst"), "local access reads into one file server: name a host, not a group");
            }
            if sources.iter().any(|s| is_or_member_of(s, &f.dst, names)) {
                return err(p("dst"), "the file server cannot be one of the disk servers");
            }
        }
        Access::Remote => {
            let peers = members(&f.dst, names);
            if peers.len() < servers as usize {
                return err(p("dst"), format!("remote access pairs each of the {servers} source disk servers with a member of '{}', which has {}", f.dst, peers.len()));
            }
        }
    }
    let disks = r.disks.unwrap_or(2);
    if !(1..=64).contains(&disks) {
        return err(rp("disks"), format!("{disks} data disks per server is out of range (1..=64)"));
    }
    let sector = SECTOR_BYTES as u64;
    let Some(file) = r.file else {
        return err(rp("file"), "a reservoir flow needs the file's size: reservoir = { file = \"1GB\" }");
    };
    if file.0 == 0 || !file.0.is_multiple_of(sector) {
        return err(rp("file"), format!("{} bytes is not a whole number (≥ 1) of {sector}-byte sectors", file.0));
    }
    let block = r.block.unwrap_or(Size(256 * 1024));
    let stripe_unit = r.stripe_unit.unwrap_or(block);
    let disk_stripe_unit = r.disk_stripe_unit.unwrap_or(stripe_unit);
    for (key, v) in [("block", block.0), ("stripe_unit", stripe_unit.0), ("disk_stripe_unit", disk_stripe_unit.0)] {
        if v == 0 || !v.is_multiple_of(sector) {
            return err(rp(key), format!("{v} bytes is not a whole number (≥ 1) of {sector}-byte sectors"));
        }
    }
    if block.0 > u32::MAX as u64 {
        return err(rp("block"), format!("{} bytes exceeds a SCSI command's 32-bit transfer length", block.0));
    }
    if file.0 / block.0 >= u32::MAX as u64 {
        return err(rp("block"), "the file would take 2^32 or more commands; use a larger block");
    }
    let file_position = r.file_position.unwrap_or(0.0);
    if !(0.0..=1.0).contains(&file_position) {
        return err(rp("file_position"), format!("{file_position} is outside 0 (outer edge) ..= 1 (inner edge)"));
    }
    let s = r.iscsi.clone().unwrap_or_default();
    let dflt = SessionParams::default();
    let iscsi = ResolvedIscsi {
        max_recv_data_segment_length: s.max_recv_data_segment_length.unwrap_or(dflt.max_recv_data_segment_length_initiator),
        first_burst_length: s.first_burst_length.unwrap_or(dflt.first_burst_length),
        max_burst_length: s.max_burst_length.unwrap_or(dflt.max_burst_length),
        immediate_data: s.immediate_data.unwrap_or(dflt.immediate_data),
        initial_r2t: s.initial_r2t.unwrap_or(dflt.initial_r2t),
        max_outstanding_r2t: s.max_outstanding_r2t.unwrap_or(dflt.max_outstanding_r2t),
        header_digest: s.header_digest.unwrap_or(false),
        data_digest: s.data_digest.unwrap_or(false),
        command_window: s.command_window.unwrap_or(dflt.command_window),
        phase_collapse: s.phase_collapse.unwrap_or(dflt.phase_collapse),
    };
    let disk = resolve_disk(&r.disk.clone().unwrap_or_default(), rp)?;
    let placement = r.placement.unwrap_or_default();
    let resolved = ResolvedReservoir { access, servers, disks, file, block, stripe_unit, disk_stripe_unit, file_position, placement, iscsi, disk };
    let iscsi_keys = [("max_recv_data_segment_length_initiator", "max_recv_data_segment_length"), ("max_recv_data_segment_length_target", "max_recv_data_segment_length")];
    resolved.session().validate().map_err(|e| keyed(e, &rp("iscsi"), &iscsi_keys))?;
    resolved.disk.check(&rp("disk"))?;
    resolved.layout(resolved.base_lba()).build().map_err(|e| keyed(e, &format!("flows[{i}].reservoir"), &[("unit_servers", "stripe_unit"), ("unit_disks", "disk_stripe_unit")]))?;
    resolved.stripe().check_fits(file.0, resolved.disk.capacity.0 / sector).map_err(|e| keyed(e, &format!("flows[{i}].reservoir"), &[("file_bytes", "file")]))?;
    Ok(resolved)
}
