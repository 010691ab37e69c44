//! `[flows.reservoir]` (`kind = "reservoir"`, study 002): a striped file moved between disk
//! servers over iSCSI, one TCP stream per disk server; `[flows.fs_copy]` (`kind = "fs-copy"`):
//! netcat copying a file between two hosts through their page caches. Defaults and their
//! evidence are on the resolved forms (`resolve::ResolvedReservoir`, `resolve::ResolvedFsCopy`).

use serde::{Deserialize, Serialize};

use super::{Dur, Rate, Size};

/// The two access paths of the Data Reservoir (the paper's §2).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// The source disk servers pair up with the destination's: each reads its share from its
    /// disks and WRITEs it to its peer, one stream per pair.
    #[default]
    Remote,
    /// A file server (the destination host) READs the file from the source disk servers.
    Local,
}

/// Where a disk server lays its stripe units on each of its disks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Placement {
    /// One after another from the file's place (`file_position`): what block-level access
    /// lets the Data Reservoir arrange (the paper's §2).
    #[default]
    Sequential,
    /// Each stripe unit at its own slot drawn uniformly over the whole disk (per run, from the
    /// seed): a file system's fragmented layout, a seek and a rotational wait per unit.
    Scattered,
}

/// `[flows.reservoir]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReservoirSpec {
    /// "remote" (default) or "local".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<Access>,
    /// `j`: disk servers the file is striped over, the first this many members of `src`
    /// (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// `k`: data disks per disk server (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disks: Option<u32>,
    /// The file's size; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<Size>,
    /// Bytes per SCSI command (default 256KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<Size>,
    /// Stripe unit over the disk servers (default: `block`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stripe_unit: Option<Size>,
    /// Stripe unit over a server's disks (default: `stripe_unit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_stripe_unit: Option<Size>,
    /// Where the file lies on every disk, 0 (outer edge, fastest) to 1 (inner edge) (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file_position: Option<f64>,
    /// "sequential" (default) or "scattered": how each disk's stripe units lie on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// The iSCSI sessions' parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iscsi: Option<IscsiSpec>,
    /// Every disk server's disks and bus.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskSpec>,
}

/// `[flows.reservoir.iscsi]`: RFC 3720's operational keys (bytes where lengths) and the
/// target's command window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IscsiSpec {
    /// MaxRecvDataSegmentLength, both directions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_recv_data_segment_length: Option<u32>,
    /// FirstBurstLength.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_burst_length: Option<u32>,
    /// MaxBurstLength.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_burst_length: Option<u32>,
    /// ImmediateData.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub immediate_data: Option<bool>,
    /// InitialR2T.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_r2t: Option<bool>,
    /// MaxOutstandingR2T.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_outstanding_r2t: Option<u32>,
    /// HeaderDigest CRC32C on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub header_digest: Option<bool>,
    /// DataDigest CRC32C on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_digest: Option<bool>,
    /// Commands a session keeps outstanding (MaxCmdSN − ExpCmdSN + 1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command_window: Option<u32>,
    /// A READ's status rides in its last Data-In.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase_collapse: Option<bool>,
}

/// `[flows.reservoir.disk]`: the disk model and the SCSI bus of every disk server.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiskSpec {
    /// Spindle speed, rpm.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rpm: Option<u32>,
    /// Sustained media rate of the outermost zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_outer: Option<Rate>,
    /// Sustained media rate of the innermost zone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_inner: Option<Rate>,
    /// Zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<u32>,
    /// Capacity.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capacity: Option<Size>,
    /// Average read seek.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_read: Option<Dur>,
    /// Average write seek.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_write: Option<Dur>,
    /// Track-to-track seek (reads and writes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_track: Option<Dur>,
    /// Full-stroke read seek.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_read_full: Option<Dur>,
    /// Full-stroke write seek.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seek_write_full: Option<Dur>,
    /// Command overhead of a media access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overhead: Option<Dur>,
    /// Cache segment size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Size>,
    /// Read-ahead after reads.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_ahead: Option<bool>,
    /// Write cache (acknowledge writes from the cache).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_cache: Option<bool>,
    /// The largest disk command the host's SCSI layer issues (longer extents are split).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request: Option<Size>,
    /// The SCSI bus's raw rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus: Option<Rate>,
    /// Share of the bus rate left for data, percent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_efficiency: Option<u32>,
}

/// `[flows.fs_copy]` (`kind = "fs-copy"`): netcat copying a file from `src`'s disk to `dst`'s,
/// each through its host's page cache.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FsCopySpec {
    /// The file's size (default 1GB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<Size>,
    /// netcat's read size (default 8KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffer: Option<Size>,
    /// Memory the dirty limits are percentages of (default 893MiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Size>,
    /// `vm.min-readahead`, pages (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_readahead: Option<u64>,
    /// `vm.max-readahead`, pages (default 31).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_readahead: Option<u64>,
    /// bdflush `nfract`, percent (default 40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfract: Option<u32>,
    /// bdflush `nfract_sync`, percent (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nfract_sync: Option<u32>,
    /// kupdate's period (default 5s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// Age at which kupdate writes a dirty buffer out (default 30s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub age_buffer: Option<Dur>,
    /// Write commands queued at most (default 64).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requests: Option<u32>,
    /// Where the file lies on the source's disk, 0 (outer edge) to 1 (inner edge) (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src_position: Option<f64>,
    /// Where the copy lies on the destination's disk, 0 to 1 (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst_position: Option<f64>,
    /// Both hosts' disk and bus (the keys of `[flows.reservoir.disk]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk: Option<DiskSpec>,
}
