//! Scenario schema: serde types that are the single source of truth for the TOML files and the
//! equivalent Python dicts. Every table denies unknown keys; quantities are strings with units
//! parsed by the newtypes below, so a bad value fails with its field path.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::units::{self, BitRate, QueueLimit, SimDuration};

macro_rules! unit_newtype {
    ($name:ident, $inner:ty, $parse:path, $format:path, $what:literal) => {
        #[doc = concat!("A ", $what, " written with units in the scenario.")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} string such as the examples in docs/scenario-format.md", $what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

unit_newtype!(Dur, SimDuration, units::parse_duration, units::format_duration, "duration");
unit_newtype!(Rate, BitRate, units::parse_rate, units::format_rate, "rate");
unit_newtype!(QLimit, QueueLimit, units::parse_queue_limit, units::format_queue_limit, "queue limit");

/// A size in bytes: a string with units (`"128KB"`) or a plain integer of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub u64);

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::format_size(self.0))
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"128KB\" or a whole number of bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
                units::parse_size(v).map(Size).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v).map(Size).map_err(|_| E::custom("a size cannot be negative"))
            }
        }
        d.deserialize_any(V)
    }
}

/// A threshold in bytes or `"unlimited"` (`initial_ssthresh`): a size string such as "64KB".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// No threshold.
    Unlimited,
    /// This many bytes.
    Bytes(u64),
}

impl Threshold {
    /// In bytes, `u64::MAX` for unlimited.
    pub fn bytes(self) -> u64 {
        match self {
            Threshold::Unlimited => u64::MAX,
            Threshold::Bytes(b) => b,
        }
    }
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threshold::Unlimited => s.serialize_str("unlimited"),
            Threshold::Bytes(b) => s.serialize_str(&units::format_size(*b)),
        }
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"64KB\" or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Threshold, E> {
                match units::parse_queue_limit(v).map_err(E::custom)? {
                    QueueLimit::Unlimited => Ok(Threshold::Unlimited),
                    QueueLimit::Bytes(b) => Ok(Threshold::Bytes(b)),
                    QueueLimit::Packets(_) => Err(E::custom("give a size (e.g. \"64KB\") or \"unlimited\"")),
                }
            }
        }
        d.deserialize_str(V)
    }
}

/// A queue: one drop-tail limit, or strict-priority classes with a limit each.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(untagged)]
pub enum QueueSpec {
    /// One FIFO.
    Limit(QLimit),
    /// Strict-priority classes, highest first.
    Classes(ClassesSpec),
}

impl<'de> Deserialize<'de> for QueueSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = QueueSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a queue limit such as \"40pkts\", \"64KB\" or \"unlimited\", or a table { classes = [...] }")
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
                ClassesSpec::deserialize(de::value::MapAccessDeserializer::new(map)).map(QueueSpec::Classes)
            }
        }
        d.deserialize_any(V)
    }
}

/// Strict-priority classes.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClassesSpec {
    /// Per-class buffer limits, class 0 (highest priority) first.
    pub classes: Vec<QLimit>,
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
}

/// `[[coordinators]]`: a remedy acting on a group of parallel streams.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoordinatorSpec {
    /// What it does.
    pub kind: CoordinatorKind,
    /// The flows it coordinates (names; `name.i` for replicated flows, or the base name for
    /// all of them).
    pub flows: Vec<String>,
    /// How often it acts (default 300ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// Relative excess over the mean tolerated before acting (default 0.1).
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
    /// Bytes to send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// Stop writing at this time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Application write size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<Size>,
    /// Priority class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    /// UDP rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// UDP IP packet size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packet_size: Option<Size>,
    /// Background traffic: a run that stops when the flows are done does not wait for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background: Option<bool>,
    /// Block reads: the active servers, the first this many members of `dst`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub servers: Option<u32>,
    /// Block reads: the bytes each server returns per block (the SRU).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sru: Option<Size>,
    /// Block reads: the bytes of one request to one server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Size>,
    /// Block reads: the number of blocks to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blocks: Option<u64>,
    /// Per-flow TCP settings.
    #[serde(default, skip_serializing_if = "is_default_tcp")]
    pub tcp: TcpSpec,
}

/// Congestion controllers by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CcName {
    /// Reno.
    Reno,
    /// NewReno.
    Newreno,
    /// BIC (Linux 2.6.16).
    Bic,
    /// CUBIC (modern Linux, HyStart).
    Cubic,
}

/// Host profiles: bundles of TCP defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ProfileName {
    /// The RFC behaviour of the built-in defaults.
    #[serde(rename = "rfc")]
    Rfc,
    /// Linux 2.6.16 as in study 000 (BIC, SACK/FACK with rate-halving, Linux RTO estimator
    /// with a 200 ms floor, timestamps at HZ = 250, ABC, quick-ACK, initial window by MSS).
    #[serde(rename = "linux-2.6.16")]
    Linux2616,
    /// Modern Linux (CUBIC with HyStart, IW10, RTO initial 1 s, timestamps at 1 ms, SACK with
    /// rate-halving standing in for PRR, receive-window growth from a first window of at most
    /// 65535 bytes as in 4.20–6.9).
    #[serde(rename = "linux-modern")]
    LinuxModern,
}

/// Initial-window rules by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IwRuleName {
    /// RFC 5681.
    Rfc5681,
    /// Linux 2.6.
    Linux,
}

/// Receive-window rules by name (Linux versions).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum RcvWindowRuleName {
    /// Linux 2.6.16.
    #[serde(rename = "linux-2.6.16")]
    Linux2616,
    /// Linux 4.20 to 6.9.
    #[serde(rename = "linux-4.20")]
    Linux420,
}

/// RTT estimators by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EstimatorName {
    /// RFC 6298.
    Rfc6298,
    /// Linux.
    Linux,
}

/// TCP variants by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VariantName {
    /// Standard TCP.
    None,
    /// AHTCP (study 001): held ACKs and the client's retransmission requests.
    Ahtcp,
}

/// AHTCP's restart point by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestartName {
    /// The first segment boundary at or above the request (the first missing byte).
    Ceiling,
    /// The paper's printed eq. (1): the segment before, which the client has.
    Floor,
}

/// Which ACKs an AHTCP server reads past the hold, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AlignName {
    /// Every ACK, as the segment boundary at or above it.
    All,
    /// Only the restart after a request (the paper read literally).
    Restart,
}

/// Which connections AHTCP's client asks when its throughput is low, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TargetsName {
    /// Those that received nothing in order during the whole averaging window (samples ×
    /// interval) and hold bytes back.
    Stalled,
    /// Those that received nothing in order during the last interval and hold bytes back.
    StalledSample,
    /// Every one that holds bytes back.
    Incomplete,
}

/// `[….tcp.ahtcp]`: AHTCP's parameters, each optional here and resolved key by key like the
/// `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AhtcpSpec {
    /// Moving-average throughput below which the client asks for retransmissions (payload
    /// delivered in order over all its AHTCP connections); required (the paper gives none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Rate>,
    /// Sampling interval of the client's throughput, at least 1us (default 1ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// Samples in the moving average, 1..=1000 (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<u32>,
    /// Bytes held back from every ACK, at least 1 and below the MSS (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<u32>,
    /// The server's restart point (default `"ceiling"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart: Option<RestartName>,
    /// Which connections are asked (default `"stalled"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets: Option<TargetsName>,
    /// Which ACKs the server reads past the hold (default `"all"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<AlignName>,
}

impl AhtcpSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == AhtcpSpec::default()
    }
}

/// When the RTO backoff is forgotten, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackoffResetName {
    /// On a new RTT sample.
    RttSample,
    /// On every ACK of new data.
    NewAck,
}

/// Backoff rules by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BackoffName {
    /// Doubling.
    Exponential,
    /// Linear.
    Linear,
    /// Doubling, then linear.
    Hybrid,
    /// Linear, then doubling.
    HybridLinearFirst,
}

/// Recovery procedures by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RecoveryName {
    /// SACK if negotiated, else by controller.
    Auto,
    /// Reno.
    Reno,
    /// NewReno.
    Newreno,
    /// RFC 6675 SACK.
    Sack,
    /// Linux 2.6 SACK/FACK with rate-halving.
    Linux,
}

/// `[defaults.tcp]`, `[flows.tcp]`: TCP settings, every key optional here. A flow's settings are
/// resolved from the built-ins, then its profile, then `defaults.tcp`, then its own keys.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// Host profile whose defaults apply before `defaults.tcp` and the flow's own keys
    /// (default `"rfc"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<ProfileName>,
    /// Congestion controller (default `"newreno"`); its parameters are in the `bic` and
    /// `cubic` tables.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<CcName>,
    /// MSS, bytes, 64..=65495, counting option space (default 1460).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<u32>,
    /// Offer SACK (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// Offer RFC 7323 timestamps (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Offer RFC 7323 window scaling (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_scaling: Option<bool>,
    /// Nagle's algorithm (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nagle: Option<bool>,
    /// Send buffer, bytes, at least one MSS (default 4MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sndbuf: Option<Size>,
    /// Receive buffer, bytes, at least one MSS (default 4MB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcvbuf: Option<Size>,
    /// Initial window, segments; 0 = by `initial_cwnd_rule` (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd: Option<u32>,
    /// MSS-based initial-window rule when `initial_cwnd` is 0 (default `"rfc5681"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_cwnd_rule: Option<IwRuleName>,
    /// Segments acknowledged one by one at connection start (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<u32>,
    /// Linux receive-window growth with its quick ACKs, `tcp_grow_window` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_window_growth: Option<bool>,
    /// Which Linux's receive-window rules the growth follows: first window, out-of-order
    /// growth (default `"linux-2.6.16"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_window_rule: Option<RcvWindowRuleName>,
    /// Memory one received data segment occupies, Linux `skb->truesize` (the NIC's receive
    /// buffer plus `struct sk_buff`), for the growth check; 0 = the segment's length, so the
    /// check always passes (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rx_truesize: Option<Size>,
    /// Linux `net.ipv4.tcp_rmem[2]`, the growth fallback's size target when `rx_truesize`
    /// fails the first check; 0 = unbounded (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_rmem_max: Option<Size>,
    /// Initial ssthresh: a size or `"unlimited"` (default `"unlimited"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<Threshold>,
    /// Delayed ACK at least every N full segments, at least 1 (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delack_segments: Option<u32>,
    /// Delayed-ACK timeout (default 40ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delack_timeout: Option<Dur>,
    /// RTT estimator (default `"rfc6298"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_estimator: Option<EstimatorName>,
    /// RTO floor, at most `rto_max` (default 200ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_min: Option<Dur>,
    /// RTO ceiling, positive (default 60s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_max: Option<Dur>,
    /// RTO before the first RTT sample, positive (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_initial: Option<Dur>,
    /// Clock granularity G of RFC 6298 (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_granularity: Option<Dur>,
    /// Backoff rule (default `"exponential"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_backoff: Option<BackoffName>,
    /// Hybrid backoff: backoffs before the growth changes (doublings before linear growth,
    /// or linear steps before doubling), at most 40 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_hybrid_switch: Option<u32>,
    /// When consecutive timeouts are forgotten: `"rtt-sample"` (RFC 6298, Linux) or
    /// `"new-ack"` (ns-2) (default `"rtt-sample"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_backoff_reset: Option<BackoffResetName>,
    /// RFC 3042 limited transmit (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// RFC 7661: grow the window only while cwnd-limited (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_validation: Option<bool>,
    /// Duplicate-ACK threshold, at least 1 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dupthresh: Option<u32>,
    /// Recovery procedure (default `"auto"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryName>,
    /// Slow-start byte-counting limit L, segments per ACK (RFC 3465; default 1); BIC's
    /// `tcp_abc`; 0 turns byte counting off (one MSS per ACK of new data, as RFC 2581 and
    /// ns-2) for reno, newreno and bic; cubic needs at least 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abc_limit: Option<u32>,
    /// Timestamp clock tick, positive (default 1ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ts_tick: Option<Dur>,
    /// Kernel HZ, 10..=100000 (default 1000; linux-2.6.16: 250): the jiffy that paces BIC's
    /// and CUBIC's window recomputation (HZ/32).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
    /// BIC's parameters, used when `cc = "bic"`: the `bic` table under this one.
    #[serde(default, skip_serializing_if = "BicSpec::is_empty")]
    pub bic: BicSpec,
    /// CUBIC's parameters, used when `cc = "cubic"`: the `cubic` table under this one.
    #[serde(default, skip_serializing_if = "CubicSpec::is_empty")]
    pub cubic: CubicSpec,
    /// A policy around the standard connection (default `"none"`); its parameters are in the
    /// table of its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<VariantName>,
    /// AHTCP's parameters, used when `variant = "ahtcp"`: the `ahtcp` table under this one.
    #[serde(default, skip_serializing_if = "AhtcpSpec::is_empty")]
    pub ahtcp: AhtcpSpec,
}

/// `[defaults.tcp.bic]`, `[flows.tcp.bic]`: BIC's module parameters (Linux 2.6.16
/// `tcp_bic.c`), each optional here and resolved like the keys of the `tcp` table. The
/// defaults are Linux 2.6.16's; `abc_limit` (BIC's `tcp_abc`) and `hz` stay in the `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BicSpec {
    /// Largest window increase per RTT, segments, at least 1 (S_max; default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_increment: Option<u32>,
    /// Multiplicative decrease: the fraction of the window kept after a loss, ×1024, in
    /// 1..1024 (default 819 ≈ 0.8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<u32>,
    /// At or below this window, segments, BIC grows and backs off as Reno (default 14).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub low_window: Option<u32>,
    /// ssthresh set at connection start, segments; 0 keeps the `tcp` table's
    /// `initial_ssthresh` (default 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<u32>,
    /// Fast convergence: a flow that lost below its previous maximum remembers a lower one
    /// (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_convergence: Option<bool>,
    /// Near the previous maximum the window grows by B/smooth_part segments per RTT (B = 4);
    /// at least 1 (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub smooth_part: Option<u32>,
}

impl BicSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == BicSpec::default()
    }
}

/// `[defaults.tcp.cubic]`, `[flows.tcp.cubic]`: CUBIC's module parameters (modern Linux
/// `tcp_cubic.c`), each optional here and resolved like the keys of the `tcp` table. The
/// defaults are Linux's; `hz` stays in the `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    /// β: the fraction of the window kept after a loss, ×1024, in 1..1024 (default 717 ≈ 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<u32>,
    /// The cubic's scale C as Linux's `bic_scale` = C·1024/10, in 1..=10000 (default 41,
    /// C ≈ 0.4 segments/s³).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bic_scale: Option<u32>,
    /// Fast convergence: a flow that lost below its previous maximum remembers a lower one,
    /// (1 + β)/2 of its window (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_convergence: Option<bool>,
    /// The Reno-friendly region: grow at least as fast as Reno with the same β would
    /// (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp_friendliness: Option<bool>,
    /// HyStart: leave slow start on an ACK train or a delay increase (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// HyStart acts only from this window on, segments (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart_low_window: Option<u32>,
    /// HyStart: ACKs at most this far apart form a train (default 2ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart_ack_delta: Option<Dur>,
}

impl CubicSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == CubicSpec::default()
    }
}

/// Keys of the `tcp` table that moved into a controller's own table: (old key, table, new
/// key). Reading one is an error naming its new place (see `scenario::parse_toml`).
pub const MOVED_TCP_KEYS: &[(&str, &str, &str)] = &[
    ("bic_max_increment", "bic", "max_increment"),
    ("bic_beta", "bic", "beta"),
    ("bic_low_window", "bic", "low_window"),
    ("bic_initial_ssthresh", "bic", "initial_ssthresh"),
    ("bic_fast_convergence", "bic", "fast_convergence"),
    ("bic_smooth_part", "bic", "smooth_part"),
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
}

fn is_nothing(q: &QueueSelection) -> bool {
    matches!(q, QueueSelection::Nothing) || matches!(q, QueueSelection::Names(v) if v.is_empty())
}

fn is_default_tcp(t: &TcpSpec) -> bool {
    *t == TcpSpec::default()
}
