//! The `tcp` table's schema: the controllers', profiles' and rules' names, `TcpSpec` and the
//! controllers' and the variant's own tables.

use serde::{Deserialize, Serialize};

use super::{Dur, Rate, Size, Threshold};

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
    /// DCTCP (RFC 8257), over ECN.
    Dctcp,
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
    /// FreeBSD 3.2 (study 004): Reno without SACK, delayed ACK every 2 segments on the 200 ms
    /// fast timer, RTO from BSD's tick estimator on the 500 ms slow timer (min 1 s, max 64 s,
    /// 3 s initial), socket buffers rounded up to whole MSS, no slow start to a local peer.
    #[serde(rename = "freebsd-3.2")]
    FreeBsd32,
}

/// Initial-window rules by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum IwRuleName {
    /// RFC 5681.
    Rfc5681,
    /// Linux 2.6.
    Linux,
    /// BSD, peer on the local network: no slow start.
    BsdLocal,
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
    /// BSD (`tcp_xmit_timer`, in slow-timer ticks of `rto_granularity`).
    Bsd,
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

/// How AHTCP's client sets the throughput below which it asks, by name.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThresholdRuleName {
    /// A fixed `threshold` (the paper's).
    #[default]
    Fixed,
    /// `peak_fraction` of the highest moving average seen in the last `peak_window` (the
    /// paper's future work: a threshold that follows what this client can receive).
    Peak,
}

/// `[….tcp.ahtcp]`: AHTCP's parameters, each optional here and resolved key by key like the
/// `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AhtcpSpec {
    /// Moving-average throughput below which the client asks for retransmissions (payload
    /// delivered in order over all its AHTCP connections); required with the fixed rule (the
    /// paper gives none), not given with the peak rule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Rate>,
    /// How the threshold is set: `"fixed"` (default) or `"peak"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threshold_rule: Option<ThresholdRuleName>,
    /// The peak rule's fraction of the peak, in (0, 1] (default 0.5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_fraction: Option<f64>,
    /// The peak rule's memory: the peak is the highest moving average of the samples in this
    /// long, at least one interval, at most 10 s (default 50ms).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub peak_window: Option<Dur>,
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

/// How the sender decides it is cwnd-limited (window growth needs it), by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CwndLimitedName {
    /// The flight before the ACK was within one MSS of the window (RFC 7661's test; Linux 2.6).
    Flight,
    /// Linux 3.16–6.1 (`tcp_is_cwnd_limited`): the last send attempt of the window was
    /// stopped by cwnd, or, in slow start, cwnd is below twice the most packets out in it.
    Linux,
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
    /// Modern Linux SACK with proportional rate reduction (RFC 6937).
    LinuxPrr,
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
    /// Randomise each retransmission timeout: the timer runs RTO·(1 + u), u uniform in
    /// [0, this), drawn per timer from the connection's own seeded stream (Vasudevan et al.,
    /// SIGCOMM 2009: 0.5), in 0..=1 (default 0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_randomize: Option<f64>,
    /// Ask for ECN (RFC 3168) (default false; true with `cc = "dctcp"`, which needs it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// RFC 3042 limited transmit (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// RFC 7661: grow the window only while cwnd-limited (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_validation: Option<bool>,
    /// How "cwnd-limited" is judged: `"flight"` (default) or `"linux"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_limited: Option<CwndLimitedName>,
    /// Timers on the host's clock ticks, BSD style: delayed ACK at the next `delack_timeout`
    /// tick, the RTO in whole `rto_granularity` ticks (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_ticks: Option<bool>,
    /// Socket buffers rounded up to whole MSS once it is known, BSD `tcp_mss` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_buffers_to_mss: Option<bool>,
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
    /// DCTCP's parameters, used when `cc = "dctcp"`: the `dctcp` table under this one.
    #[serde(default, skip_serializing_if = "DctcpSpec::is_empty")]
    pub dctcp: DctcpSpec,
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

/// `[defaults.tcp.dctcp]`, `[flows.tcp.dctcp]`: DCTCP's module parameters (Linux
/// `tcp_dctcp.c`), each optional here and resolved like the keys of the `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DctcpSpec {
    /// The estimate's gain g = 2^−shift_g, in 0..=10 (default 4, g = 1/16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shift_g: Option<u32>,
    /// α at the start, in 1/1024ths, 0..=1024 (default 1024: the first marks halve the window).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alpha_on_init: Option<u32>,
}

impl DctcpSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == DctcpSpec::default()
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
