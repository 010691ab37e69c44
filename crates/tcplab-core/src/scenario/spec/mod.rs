//! Scenario schema: serde types that are the single source of truth for the TOML files and the
//! equivalent Python dicts. Every table denies unknown keys; quantities are strings with units
//! parsed by the newtypes below, so a bad value fails with its field path.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

use crate::units;

mod storage;
mod tcp;
mod topology;
mod workload;
pub use crate::quantity::{Dur, QLimit, Rate, RateOrZero, Size, Threshold};
pub use storage::*;
pub use tcp::*;
pub use topology::*;
pub use workload::*;

/// A queue: one drop-tail limit (`"40pkts"`), or a table: a `limit` or strict-priority
/// `classes` with a limit each, and optionally ECN marking by threshold.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueueSpec {
    /// One FIFO.
    Limit(QLimit),
    /// A table: a limit or classes, and ECN marking, an AQM or an ATM port (boxed: it is
    /// large and rare).
    Table(Box<QueueTable>),
}

impl<'de> Deserialize<'de> for QueueSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a queue limit such as \"40pkts\", \"64KB\" or \"unlimited\", or a table { limit = ..., ecn_threshold = ... } or { classes = [...] }")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<QueueSpec, E> {
                units::parse_queue_limit(v).map(|l| QueueSpec::Limit(QLimit(l))).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<QueueSpec, E> {
                Err(E::custom(format!("{v} has no unit: write \"{v}pkts\" or a size such as \"{v}KB\"")))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<QueueSpec, E> {
                match u64::try_from(v) {
                    Ok(u) => self.visit_u64(u),
                    Err(_) => Err(E::custom(format!("{v} is negative: write a limit such as \"40pkts\""))),
                }
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<QueueSpec, A::Error> {
                QueueTable::deserialize(de::value::MapAccessDeserializer::new(map)).map(|t| QueueSpec::Table(Box::new(t)))
            }
        }
        d.deserialize_any(V)
    }
}

/// What a marking queue does with a packet that is not ECN-capable at its threshold.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UnmarkableName {
    /// Drop it, as RFC 3168 §5 has a router do where it would have marked.
    #[default]
    Drop,
    /// Let it through unmarked (only the buffer limit drops it).
    Pass,
}

/// How a flow between two host groups pairs their members.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowPattern {
    /// Member k of src to member k of dst.
    #[default]
    Pairs,
    /// Every member of src to every member of dst (but itself).
    AllToAll,
}

/// An active queue management discipline for a queue table's FIFO.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AqmName {
    /// RED (Floyd & Jacobson 1993; gentle and adaptive variants), table `red`.
    Red,
    /// CoDel (RFC 8289), table `codel`.
    Codel,
    /// FQ-CoDel (RFC 8290), table `fq_codel`.
    FqCodel,
    /// PIE (RFC 8033), table `pie`.
    Pie,
}

impl AqmName {
    /// The key of its parameter table.
    pub fn table(self) -> &'static str {
        match self {
            AqmName::Red => "red",
            AqmName::Codel => "codel",
            AqmName::FqCodel => "fq_codel",
            AqmName::Pie => "pie",
        }
    }

    /// The name a scenario writes.
    pub fn name(self) -> &'static str {
        match self {
            AqmName::Red => "red",
            AqmName::Codel => "codel",
            AqmName::FqCodel => "fq-codel",
            AqmName::Pie => "pie",
        }
    }
}

/// What an ATM port's CBR rate counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CbrUnitName {
    /// Whole 53-byte cells.
    #[default]
    Cell,
    /// 48-byte cell payloads.
    Payload,
}

/// An ATM port's discard policy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DiscardName {
    /// Per-cell tail drop.
    #[default]
    TailDrop,
    /// Partial Packet Discard.
    Ppd,
    /// Early Packet Discard (with PPD).
    Epd,
}

/// A queue as a table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueTable {
    /// One drop-tail limit (give this or `classes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<QLimit>,
    /// Strict-priority classes' limits, class 0 (highest priority) first (1 to 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub classes: Option<Vec<QLimit>>,
    /// ECN marking: a packet that finds at least this many packets (or bytes) waiting, the one
    /// in service excluded, is marked CE if ECN-capable (DCTCP's K; none by default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_threshold: Option<QLimit>,
    /// A packet that is not ECN-capable at the threshold: `"drop"` (default, RFC 3168 §5) or
    /// `"pass"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn_unmarkable: Option<UnmarkableName>,
    /// An ATM output port instead of a packet queue (AAL5 links only): its UBR cell buffer,
    /// cells (give this, `limit` or `classes`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cells: Option<u64>,
    /// The ATM port's CBR traffic, strictly above UBR (default none), below the line rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cbr: Option<Rate>,
    /// What `cbr` counts: `"cell"` (53-byte cells, default) or `"payload"` (48 bytes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cbr_unit: Option<CbrUnitName>,
    /// CBR cells per burst: 1 (default) evenly spaced, k > 1 in runs of k back-to-back cells at
    /// the same mean rate (an analyser's bursty generator), 1..=1000000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cbr_burst: Option<u32>,
    /// An AQM on the FIFO: `"red"`, `"codel"`, `"fq-codel"` or `"pie"` (none by default: drop
    /// tail). Its `limit` defaults to Linux's (CoDel and PIE 1000 packets, FQ-CoDel 10240; RED
    /// needs one), and its parameters are the table of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aqm: Option<AqmName>,
    /// RED's parameters (`aqm = "red"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub red: Option<crate::net::discipline::RedSpec>,
    /// CoDel's parameters (`aqm = "codel"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codel: Option<crate::net::discipline::CodelSpec>,
    /// FQ-CoDel's parameters (`aqm = "fq-codel"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_codel: Option<crate::net::discipline::FqCodelSpec>,
    /// PIE's parameters (`aqm = "pie"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pie: Option<crate::net::discipline::PieSpec>,
    /// The ATM port's discard: `"tail-drop"` (default), `"ppd"` or `"epd"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discard: Option<DiscardName>,
    /// EPD's threshold, cells waiting (required with `discard = "epd"`), below `cells`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epd_threshold: Option<u64>,
}

/// The whole scenario.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Scenario name.
    pub name: String,
    /// Free text.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Stop condition and seed.
    #[serde(default)]
    pub run: RunSpec,
    /// Defaults for every element.
    #[serde(default)]
    pub defaults: DefaultsSpec,
    /// End hosts.
    #[serde(default)]
    pub hosts: Vec<HostSpec>,
    /// Switches.
    #[serde(default)]
    pub switches: Vec<SwitchSpec>,
    /// Delay/loss emulators.
    #[serde(default)]
    pub emulators: Vec<EmulatorSpec>,
    /// Links.
    #[serde(default)]
    pub links: Vec<LinkSpec>,
    /// Topology generators, expanded at resolve time into hosts, switches and links
    /// (`spec::topology`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topologies: Vec<TopologySpec>,
    /// How routes are chosen (equal-cost multipath).
    #[serde(default, skip_serializing_if = "RoutingSpec::is_default")]
    pub routing: RoutingSpec,
    /// Observation points (header capture).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub taps: Vec<TapSpec>,
    /// Traffic.
    #[serde(default)]
    pub flows: Vec<FlowSpec>,
    /// Remedies that coordinate parallel streams.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coordinators: Vec<CoordinatorSpec>,
    /// Requested traces.
    #[serde(default)]
    pub trace: TraceSpec,
}

/// Coordinator kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CoordinatorKind {
    /// DECP-like cooperative window control (Kamezawa et al., SC2004): every interval the
    /// streams in congestion avoidance whose window exceeds (1 + tolerance)·mean of those
    /// streams are pulled down to the mean. ASSUMPTION(p0): the paper gives no formula.
    Decp,
    /// RFC 6356's coupled congestion control (MPTCP's linked increases): on every ACK a
    /// member's congestion avoidance grows by min(α·MSS²/cwnd_total, MSS²/cwnd), so the group
    /// takes no more than one TCP on the best of its paths. Members use `reno` or `newreno`.
    Lia,
}

/// `[[coordinators]]`: a remedy acting on a group of parallel streams.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinatorSpec {
    /// What it does.
    pub kind: CoordinatorKind,
    /// The flows it coordinates (names; `name.i` for replicated flows or a reservoir's
    /// streams, or the base name for all of them).
    pub flows: Vec<String>,
    /// How often it acts (`decp`; default 300ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// Relative excess over the mean tolerated before acting (`decp`; default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
}

/// How a run ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StopSpec {
    /// At `run.duration`.
    Duration,
    /// When every flow has finished.
    FlowsDone,
    /// When nothing is pending.
    Idle,
}

/// `[run]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunSpec {
    /// Stop time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<Dur>,
    /// Stop rule (default: duration if given, else flows-done).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<StopSpec>,
    /// Default seed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Memory the throughput trace may take (default 2GiB): one that would need more is
    /// refused at load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace_memory: Option<Size>,
}

/// `[defaults]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefaultsSpec {
    /// Default egress queue of every link end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Default TCP settings.
    #[serde(default)]
    pub tcp: TcpSpec,
}

/// `[[hosts]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostSpec {
    /// Unique name.
    pub name: String,
    /// Each flow from this host starts late by a uniform random amount in [0, start_skew)
    /// (seeded): real hosts never start at the same picosecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_skew: Option<Dur>,
    /// Each packet this host sends waits a uniform random processing time in [0, jitter)
    /// before reaching its NIC, in order (seeded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Dur>,
    /// A group of this many identical hosts, named `name.0` … `name.(count-1)`; a link or a
    /// block-read flow naming the group means every member (or the first `servers`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

/// `[[switches]]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwitchSpec {
    /// Unique name.
    pub name: String,
}

/// Emulator presets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// Plain: whatever the fields say.
    #[default]
    None,
    /// Study 000's hardware delay emulator (ANUE GE10): pure fixed delay, no loss, no jitter.
    Anue,
    /// Study 002's Comet Drop: delay in 1 ms steps, loss probability in units of 1/65536.
    CometDrop,
    /// FreeBSD Dummynet pipe: rate limit with its own queue (default 50 slots) plus delay.
    Dummynet,
    /// A Stream-Harmonizer-like gateway: per-stream extra delay for the fast streams in the
    /// direction leaving `harmonize_from` (study 000's second cited remedy).
    Harmonizer,
}

impl Preset {
    /// The preset's name in scenarios.
    pub fn name(self) -> &'static str {
        match self {
            Preset::None => "none",
            Preset::Anue => "anue",
            Preset::CometDrop => "comet-drop",
            Preset::Dummynet => "dummynet",
            Preset::Harmonizer => "harmonizer",
        }
    }
}

/// `[[emulators]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EmulatorSpec {
    /// Unique name.
    pub name: String,
    /// Preset.
    #[serde(default)]
    pub preset: Preset,
    /// One-way delay added in each direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Drop probability per packet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<f64>,
    /// Drop probability in units of 1/65536 (Comet Drop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_65536: Option<u32>,
    /// Delay step: the delay is rounded to the nearest multiple.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<Dur>,
    /// Dummynet's clock tick, the 1/HZ of the host that runs it (preset `"dummynet"` only; none
    /// by default: packets leave at exact times). The delay becomes a whole number of ticks
    /// (truncated, as ipfw does) and a packet leaves at the tick its delay ends on, counted
    /// from the last tick before it arrived.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tick: Option<Dur>,
    /// Rate limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Queue in front of the rate limit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Harmonizer: the neighbour whose outgoing traffic is harmonized.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmonize_from: Option<String>,
    /// Harmonizer: the streams' base RTT (default 300ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmonize_rtt: Option<Dur>,
    /// Harmonizer: measurement period (default 300ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmonize_interval: Option<Dur>,
    /// Harmonizer: largest extra delay (default 300ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harmonize_max_delay: Option<Dur>,
    /// Probability that a packet is held back by `reorder_delay` (netem-like reordering).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder: Option<f64>,
    /// How long a reordered packet is held back beyond the delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reorder_delay: Option<Dur>,
    /// Probability that a packet is sent twice (netem-like duplication).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duplicate: Option<f64>,
}

/// `[[links]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// The two endpoints.
    pub between: [String; 2],
    /// Line rate.
    pub rate: Rate,
    /// Propagation delay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Egress queue at both ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Egress queue at `between[0]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_a: Option<QueueSpec>,
    /// Egress queue at `between[1]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue_b: Option<QueueSpec>,
    /// Link-layer bytes sent with every packet (framing, preamble, gap): they take line time
    /// but are not IP bytes. Default 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framing: Option<Size>,
    /// The link layer: `"ip"` (IP bytes plus `framing`; the default), `"aal5"` (IP over AAL5
    /// with LLC/SNAP, RFC 2684: whole 53-byte cells) or `"aal5-vc-mux"` (AAL5 without the
    /// 8-byte LLC/SNAP header). With AAL5, `rate` is the line's cell rate (OC-3c: 149.76 Mbps).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_layer: Option<LinkLayerSpec>,
}

/// `links[].link_layer`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LinkLayerSpec {
    /// IP bytes plus the link's `framing`.
    #[default]
    Ip,
    /// IP over AAL5 with LLC/SNAP encapsulation.
    Aal5,
    /// IP over AAL5 with VC multiplexing (no encapsulation header).
    Aal5VcMux,
}

/// `[[taps]]`: a capture point on a link.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TapSpec {
    /// Unique name; the capture file is `<name>.pcapng`.
    pub name: String,
    /// The tapped link, by its two nodes (either order).
    pub link: [String; 2],
    /// `"both"`, or the node whose outgoing direction is tapped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
    /// Timestamp resolution (default 100ns, as the TAPEE analyzer; at least 1ns).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolution: Option<Dur>,
    /// Write a pcapng file (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap: Option<bool>,
    /// Also record the `capture` trace (default false: it holds every header in memory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<bool>,
    /// The UTC time simulated time 0 is written at in the pcapng file ("2024-05-01T12:00:00Z"
    /// or whole seconds since 1970; default 1970-01-01T00:00:00Z).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<crate::epoch::Epoch>,
}

/// Flow kinds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FlowKind {
    /// A TCP connection with a bulk sender.
    #[default]
    Tcp,
    /// Constant-bit-rate UDP.
    UdpCbr,
    /// Barrier-synchronised block reads: the source (a client, or each member of a group)
    /// reads blocks striped over the destination's members, one TCP connection per server.
    BlockRead,
    /// A striped file moved between disk servers over iSCSI (study 002's Data Reservoir): one
    /// TCP stream per disk server of `src`, to the paired member of `dst` (remote access) or to
    /// the file server `dst` (local access).
    Reservoir,
    /// netcat copying a file from `src`'s disk to `dst`'s through both page caches (study 002's
    /// conventional copy, Fig. 3): one TCP stream.
    FsCopy,
    /// TCP transfers arriving during the run (`[flows.workload]`): sizes drawn from a
    /// distribution, hosts drawn from `src` and `dst`, each flow made when it arrives.
    Workload,
    /// Requests and responses over one persistent TCP connection per flow
    /// (`[flows.request_response]`): a client at `src`, its server at `dst`.
    RequestResponse,
}

/// `[[flows]]`.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowSpec {
    /// Name (suffixed `.i` when `count` > 1).
    pub name: String,
    /// Kind.
    #[serde(default)]
    pub kind: FlowKind,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// Start time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<Dur>,
    /// Number of identical flows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    /// Between two host groups (kind tcp or udp-cbr): `"pairs"` (default; member k to member
    /// k, the groups of one size) or `"all-to-all"` (every member of src to every member of
    /// dst but itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<FlowPattern>,
    /// Stop writing (sending) at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// Background traffic: a run that stops when the flows are done does not wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// `kind = "tcp"`: the bulk sender's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bulk: Option<BulkSpec>,
    /// `kind = "udp-cbr"`: the constant-bit-rate source's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cbr: Option<CbrSpec>,
    /// `kind = "block-read"`: the block reads' table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_read: Option<BlockReadSpec>,
    /// `kind = "reservoir"`: the striped transfer's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reservoir: Option<ReservoirSpec>,
    /// `kind = "fs-copy"`: the file copy's table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fs_copy: Option<FsCopySpec>,
    /// `kind = "workload"`: the arrivals, sizes and pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workload: Option<WorkloadSpec>,
    /// `kind = "request-response"`: the requests, their arrivals and the response sizes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_response: Option<RequestResponseSpec>,
    /// Per-flow TCP settings.
    #[serde(default, skip_serializing_if = "is_default_tcp")]
    pub tcp: TcpSpec,
}

/// `[flows.bulk]` (`kind = "tcp"`): what the bulk sender writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BulkSpec {
    /// Bytes to send, at least 1; none: until `stop` or the end of the run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// Application write size, at least 1 byte (default 128KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<Size>,
    /// The receiving application reads at most this rate (payload), itself, `read_size` at a
    /// time; unread bytes fill the receive buffer and close the window (default: the connection
    /// reads everything on arrival).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_rate: Option<Rate>,
    /// Bytes the receiving application reads at a time, at least 1 (default 128KiB; only with
    /// `read_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_size: Option<Size>,
}

/// `[flows.cbr]` (`kind = "udp-cbr"`): the constant-bit-rate source, at one `rate` or by a
/// `schedule` of rates (exactly one of the two).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrSpec {
    /// Sending rate (IP bytes), the whole time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Piecewise-constant sending rate: pieces in strictly increasing `at`, the first at 0s,
    /// at most `MAX_CBR_PIECES`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<CbrPieceSpec>>,
    /// IP packet size, 29..=65535 bytes (default 1500B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
    /// On/off instead of always on (with `rate` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_off: Option<OnOffSpec>,
}

/// The most pieces a `cbr.schedule` may have.
pub const MAX_CBR_PIECES: usize = 10_000;

/// One piece of `cbr.schedule`: from `at` after the flow's start until the next piece's `at`
/// (the last until the flow stops), datagrams at `rate`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CbrPieceSpec {
    /// Start of the piece, measured from the flow's start (the first piece's is 0s).
    pub at: Dur,
    /// Sending rate (IP bytes) during the piece; `"0bps"`: silent.
    pub rate: RateOrZero,
}

/// `[flows.block_read]` (`kind = "block-read"`): barrier-synchronised block reads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BlockReadSpec {
    /// The active servers, the first this many members of `dst` (default: all).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// The bytes each server returns per block (the SRU); required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sru: Option<Size>,
    /// The bytes of one request to one server (default 48B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Size>,
    /// The number of blocks to read; required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
}

/// Keys of `[[flows]]` that moved into the table of their kind: (old key, table). Reading one
/// is an error naming its new place (see `scenario::parse_toml`).
pub const MOVED_FLOW_KEYS: &[(&str, &str)] = &[
    ("bytes", "bulk"),
    ("write_size", "bulk"),
    ("rate", "cbr"),
    ("packet_size", "cbr"),
    ("servers", "block_read"),
    ("sru", "block_read"),
    ("request", "block_read"),
    ("blocks", "block_read"),
];

/// Which queues to trace.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum QueueSelection {
    /// By name.
    Names(Vec<String>),
    /// `"all"`.
    All(String),
    /// None.
    #[default]
    #[serde(skip)]
    Nothing,
}

/// `[trace]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceSpec {
    /// Throughput bin length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub throughput_interval: Option<Dur>,
    /// cwnd trace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cwnd: bool,
    /// Queue traces.
    #[serde(default, skip_serializing_if = "is_nothing")]
    pub queues: QueueSelection,
    /// Event trace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub events: bool,
    /// Application milestone trace.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub milestones: bool,
    /// What chosen links carry, per flow and interval (`trace.link_usage = { links, interval }`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_usage: Option<LinkUsageSpec>,
    /// Inline measurements of a variant's stage (`tcp.variant = "imtcp"`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub measurements: bool,
    /// Each flow's controller state (`CongestionControl::probe`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cc_state: bool,
    /// Every RTT sample of each flow's data sender, with its estimator and window (tcp_probe).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rtt: bool,
}

/// `trace.link_usage`: the IP bytes each flow finished serializing on each chosen link
/// direction, per interval (the `link_usage` trace). Both keys are required.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkUsageSpec {
    /// The link directions watched: `"a->b"` (the link from node a to node b, as queues are
    /// named), `"emu:a->b"` (an emulator's direction), or `"all"`: every link direction and
    /// then every emulator direction. Watching a direction runs it event by event.
    pub links: LinkSelection,
    /// Length of each interval, at least 1us.
    pub interval: Dur,
}

/// Which link directions `trace.link_usage` watches.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LinkSelection {
    /// By name.
    Names(Vec<String>),
    /// `"all"`.
    All(String),
}

fn is_nothing(q: &QueueSelection) -> bool {
    matches!(q, QueueSelection::Nothing) || matches!(q, QueueSelection::Names(v) if v.is_empty())
}

fn is_default_tcp(t: &TcpSpec) -> bool {
    *t == TcpSpec::default()
}
