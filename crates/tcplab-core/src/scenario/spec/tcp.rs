//! The `tcp` table's schema: the profiles' and rules' names, `TcpSpec` (its keys declared
//! once, with the registered controllers' tables) and the variant's own table.

use serde::{Deserialize, Serialize};

use super::{Dur, Rate, Size, Threshold};
use crate::params::Overlay;
pub use crate::tcp::cc::bic::BicSpec;
pub use crate::tcp::cc::cubic::CubicSpec;
pub use crate::tcp::cc::dctcp::DctcpSpec;
use crate::tcp::cc::Registered;
use crate::units::SimDuration;

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
    /// Linux 2.4.18 as in study 002 (Reno growth without ABC, SACK/FACK with rate-halving,
    /// Linux RTO estimator with a 200 ms floor, timestamps at HZ = 100, quick-ACK, IW 2 for a
    /// peer with no cached route metrics, a refusal by the host's own queue answered by
    /// `tcp_enter_cwr` and the CWR state's gradual cut (`tcp_cwnd_down`), `tcp_moderate_cwnd`,
    /// RFC 2861's idle restart and application-limited decay as `tcp_cwnd_restart` and
    /// `tcp_cwnd_application_limited` run them).
    #[serde(rename = "linux-2.4.18")]
    Linux2418,
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
    /// FreeBSD 4.10 (study 003): NewReno without SACK, timestamps and window scaling on,
    /// timers on the 1/HZ callout grid (`timer_grid = "hz"`, HZ 100 unless set), delayed ACK
    /// every 2 segments or 100 ms after the segment, RTO from BSD's tick estimator with a 30 ms
    /// floor and 200 ms slop (max 64 s, 3 s initial), initial window 1 segment, socket buffers
    /// rounded up to whole MSS.
    #[serde(rename = "freebsd-4.10")]
    FreeBsd410,
}

/// Which clock grid a host's TCP timers run on, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TimerGridName {
    /// Exact timers (or, with `timer_ticks`, BSD 3.2's 200 ms and 500 ms global ticks).
    None,
    /// The host's 1/HZ tick (FreeBSD 4.x callouts).
    Hz,
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

/// Nagle rules by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum NagleRuleName {
    /// RFC 896: a short segment waits while anything is unacknowledged.
    Rfc896,
    /// BSD: RFC 896's, but the closing tail goes with the FIN.
    Bsd,
    /// Linux (Minshall's variant): a short segment waits only while an earlier short one is
    /// unacknowledged; the closing tail goes with the FIN.
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
    /// ImTCP (study 003): the sender's inline available-bandwidth measurement stage.
    Imtcp,
}

/// AHTCP's restart point by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RestartName {
    /// The first segment boundary at or above the request (the first missing byte).
    Ceiling,
    /// The paper's printed eq. (1) read as segments: the segment before, which the client has.
    Floor,
    /// The paper's eq. (1) computed on the byte numbers as printed (inside a segment after a
    /// first SRU that is not a whole number of segments).
    Literal,
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
    /// The client may ask with nothing held (default false; needs align = "all" and restart =
    /// "floor" or "literal").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ask_empty: Option<bool>,
}

impl AhtcpSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == AhtcpSpec::default()
    }
}

/// ImTCP's reading of 「95% 信頼区間」, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CiName {
    /// μ ± 1.96·s/√q (the CI of the mean).
    Mean,
    /// μ ± 1.96·s (the band of the results).
    Band,
}

/// ImTCP's first search range, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum InitialName {
    /// From a back-to-back train's ACK dispersion rate R: [R/2, R].
    Train,
    /// From `link_rate` C: [C/10, C].
    Link,
}

/// How ImTCP's search range moves between measurements, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RangeName {
    /// From the 95 % confidence interval of recent results, moved out of range by its width
    /// (S3 L39–L44; the default).
    #[default]
    Adaptive,
    /// The first range kept for the whole run (the ablation of S3 L40–L41: with
    /// `initial = "link"`, [C/10, C]).
    Fixed,
}

/// ImTCP's placement of release times on the host's ticks, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseName {
    /// The first tick at or after the planned time.
    NextTick,
    /// The nearest tick.
    NearestTick,
}

/// What an ImTCP scenario does with a receiver that delays ACKs, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DelayedAckName {
    /// Refuse it (ImTCP needs one ACK per segment).
    Refuse,
    /// Run it (a measurement's `packets` then counts the stream packets with an ACK of their own).
    Warn,
}

/// ImTCP's trend rule, by name (`tcp::imtcp::TrendRule`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TrendRuleName {
    /// Pathload 1.3.2's statistics and combination.
    Pathload,
    /// Pathload's, with a tie counted as half a rise (a testbed clock's noise).
    TiesSplit,
    /// Ties do not vote in S_PCT; S_PDT decides.
    TiesExcluded,
}

/// `[….tcp.imtcp.trend]`: Pathload's trend thresholds, each optional.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrendSpec {
    /// `"ties-split"` (default), `"pathload"` or `"ties-excluded"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<TrendRuleName>,
    /// S_PCT above this: increasing (default 0.605).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_high: Option<f64>,
    /// S_PCT below this: no trend (default 0.495).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pct_low: Option<f64>,
    /// S_PDT above this: increasing (default 0.44).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdt_high: Option<f64>,
    /// S_PDT below this: no trend (default 0.36).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pdt_low: Option<f64>,
}

/// `[….tcp.imtcp]`: ImTCP's parameters, each optional here and resolved key by key like the
/// `tcp` table.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ImtcpSpec {
    /// Streams per measurement, k ≥ 1 (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub streams: Option<u32>,
    /// Packets per stream, N ≥ 2 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub packets: Option<u32>,
    /// Results in the confidence interval, q ≥ 2 (default 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<u32>,
    /// `"mean"` (default) or `"band"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ci: Option<CiName>,
    /// The narrowest range, a fraction of μ in (0, 1] (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_width: Option<f64>,
    /// `"train"` (default) or `"link"` (needs `link_rate`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial: Option<InitialName>,
    /// `"adaptive"` (default) or `"fixed"`: the first range kept (an ablation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeName>,
    /// The link rate `initial = "link"` starts from (IP bit/s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<Rate>,
    /// Trend thresholds.
    #[serde(default, skip_serializing_if = "crate::params::is_unset")]
    pub trend: TrendSpec,
    /// `"next-tick"` (default) or `"nearest-tick"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub release: Option<ReleaseName>,
    /// `"refuse"` (default) or `"warn"`: a receiver with `delack_segments` above 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<DelayedAckName>,
}

impl ImtcpSpec {
    /// True when no key is set.
    pub fn is_empty(&self) -> bool {
        *self == ImtcpSpec::default()
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

/// A sender's answer to its own host's full interface queue, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LocalCongestionName {
    /// The queue drops the segment; the sender finds the loss as any other.
    Drop,
    /// Linux: the segment stays unsent, the window is reduced once (`tcp_enter_cwr`).
    Cwr,
}

/// When NewReno's recovery restarts the retransmission timer on a partial ACK (RFC 6582 §4),
/// by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PartialAckTimerName {
    /// On the first partial ACK only (RFC 6582 §3.2 step 5, "Impatient").
    Impatient,
    /// On every partial ACK ("Slow-but-Steady"; FreeBSD 4.x, Linux).
    SlowButSteady,
}

/// How a reduction that is not a loss cuts the window, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CwrReductionName {
    /// The controller's reduction at once.
    AtOnce,
    /// Linux 2.4's CWR state: one segment less every second ACK (`tcp_cwnd_down`).
    RateHalving,
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

/// Declares the `tcp` table from the list of its keys and the registered controllers: the
/// controllers' names (`CcName`), the table as written (`TcpSpec`, every key optional, each
/// controller's parameter table under its name) and as resolved (`TcpSettings`, with the
/// built-in defaults and the overlay of one layer). A key is declared once, here; its
/// mapping to the connection's `TcpConfig` and its checks are in `resolve::tcp`.
macro_rules! tcp_table {
    (
        defaults $d:ident = $dinit:expr;
        keys { $( $(#[doc = $kdoc:literal])* $key:ident : $ty:ty = $default:expr, )* }
        controllers { $( $(#[doc = $cdoc:literal])* $v:ident, $table:ident, $name:literal, $reg:ty; )* }
    ) => {
        /// Congestion controllers by name (one per line of `tcp::cc::registry`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum CcName {
            $( $(#[doc = $cdoc])* #[serde(rename = $name)] $v, )*
        }

        impl CcName {
            /// The name scenarios use.
            pub fn as_str(self) -> &'static str {
                match self { $( CcName::$v => $name, )* }
            }
        }

        /// `[defaults.tcp]`, `[flows.tcp]`: TCP settings, every key optional here. A flow's
        /// settings are resolved from the built-ins, then its profile, then `defaults.tcp`, then
        /// its own keys.
        #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct TcpSpec {
            /// Host profile whose defaults apply before `defaults.tcp` and the flow's own keys
            /// (default `"rfc"`).
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub profile: Option<ProfileName>,
            /// Congestion controller (default `"newreno"`); its parameters are in the table of
            /// its name.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub cc: Option<CcName>,
            $(
                $(#[doc = $kdoc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $key: Option<$ty>,
            )*
            $(
                #[doc = concat!("The `", $name, "` controller's parameters, used when `cc = \"", $name, "\"`: the `", stringify!($table), "` table under this one.")]
                #[serde(default, skip_serializing_if = "crate::params::is_unset")]
                pub $table: <<$reg as Registered>::Params as Overlay>::Table,
            )*
            /// A policy around the standard connection (default `"none"`); its parameters are
            /// in the table of its name.
            #[serde(default, skip_serializing_if = "Option::is_none")]
            pub variant: Option<VariantName>,
            /// AHTCP's parameters, used when `variant = "ahtcp"`: the `ahtcp` table under this one.
            #[serde(default, skip_serializing_if = "AhtcpSpec::is_empty")]
            pub ahtcp: AhtcpSpec,
            /// ImTCP's parameters, used when `variant = "imtcp"`: the `imtcp` table under this one.
            #[serde(default, skip_serializing_if = "ImtcpSpec::is_empty")]
            pub imtcp: ImtcpSpec,
        }

        /// The settings of a `tcp` table but the profile, the controller and the variant,
        /// resolved. Each key's range and built-in default are on `TcpSpec`.
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        pub struct TcpSettings {
            $( $(#[doc = $kdoc])* pub $key: $ty, )*
        }

        impl TcpSettings {
            /// The built-in defaults (docs/tcp-settings.md lists them): mostly
            /// `TcpConfig::default()`'s.
            pub fn builtin() -> Self {
                let $d = $dinit;
                TcpSettings { $( $key: $default, )* }
            }

            /// Apply the keys a layer sets (its profile, controller and variant are resolved
            /// apart).
            pub fn overlay(&mut self, s: &TcpSpec) {
                $( if let Some(v) = &s.$key { self.$key = v.clone(); } )*
            }
        }
    };
}

crate::tcp::cc::registry::with_controllers!(tcp_table {
    defaults d = crate::tcp::TcpConfig::default();
    keys {
        /// MSS, bytes, 64..=65495, counting option space (default 1460).
        mss: u32 = d.mss,
        /// Offer SACK (default true).
        sack: bool = d.sack,
        /// Offer RFC 7323 timestamps (default false).
        timestamps: bool = d.timestamps,
        /// Offer RFC 7323 window scaling (default true).
        window_scaling: bool = d.window_scaling,
        /// Nagle's algorithm (default true).
        nagle: bool = d.nagle,
        /// Which short segments Nagle holds: `"rfc896"`, `"bsd"` or `"linux"` (default
        /// `"rfc896"`; `"linux"` in the Linux profiles, `"bsd"` in the FreeBSD ones).
        nagle_rule: NagleRuleName = NagleRuleName::Rfc896,
        /// Send buffer, bytes, at least one MSS (default 4MB).
        sndbuf: Size = Size(d.sndbuf),
        /// Receive buffer, bytes, at least one MSS (default 4MB).
        rcvbuf: Size = Size(d.rcvbuf),
        /// Initial window, segments; 0 = by `initial_cwnd_rule` (default 0).
        initial_cwnd: u32 = d.initial_cwnd,
        /// MSS-based initial-window rule when `initial_cwnd` is 0 (default `"rfc5681"`).
        initial_cwnd_rule: IwRuleName = IwRuleName::Rfc5681,
        /// Segments acknowledged one by one at connection start (default 0).
        quickack: u32 = 0,
        /// Linux receive-window growth with its quick ACKs, `tcp_grow_window` (default false).
        rcv_window_growth: bool = false,
        /// Which Linux's receive-window rules the growth follows: first window, out-of-order
        /// growth (default `"linux-2.6.16"`).
        rcv_window_rule: RcvWindowRuleName = RcvWindowRuleName::Linux2616,
        /// Memory one received data segment occupies, Linux `skb->truesize` (the NIC's receive
        /// buffer plus `struct sk_buff`), for the growth check; 0 = the segment's length, so the
        /// check always passes (default 0).
        rx_truesize: Size = Size(d.rx_truesize),
        /// Linux `net.ipv4.tcp_rmem[2]`, the growth fallback's size target when `rx_truesize`
        /// fails the first check; 0 = unbounded (default 0).
        tcp_rmem_max: Size = Size(d.tcp_rmem_max),
        /// Initial ssthresh: a size or `"unlimited"` (default `"unlimited"`).
        initial_ssthresh: Threshold = Threshold::Unlimited,
        /// Delayed ACK at least every N full segments, at least 1 (default 2).
        delack_segments: u32 = d.delack_segments,
        /// Delayed-ACK timeout (default 40ms).
        delack_timeout: Dur = Dur(d.delack_timeout),
        /// RTT estimator (default `"rfc6298"`).
        rtt_estimator: EstimatorName = EstimatorName::Rfc6298,
        /// RTO floor, at most `rto_max` (default 200ms).
        rto_min: Dur = Dur(d.rto.min),
        /// RTO ceiling, positive (default 60s).
        rto_max: Dur = Dur(d.rto.max),
        /// RTO before the first RTT sample, positive (default 1s).
        rto_initial: Dur = Dur(d.rto.initial),
        /// Clock granularity G of RFC 6298 (default 0s).
        rto_granularity: Dur = Dur(d.rto.granularity),
        /// Backoff rule (default `"exponential"`).
        rto_backoff: BackoffName = BackoffName::Exponential,
        /// Hybrid backoff: backoffs before the growth changes (doublings before linear growth,
        /// or linear steps before doubling), at most 40 (default 3).
        rto_hybrid_switch: u32 = 3,
        /// When consecutive timeouts are forgotten: `"rtt-sample"` (RFC 6298, Linux) or
        /// `"new-ack"` (ns-2) (default `"rtt-sample"`).
        rto_backoff_reset: BackoffResetName = BackoffResetName::RttSample,
        /// Randomise each retransmission timeout: the timer runs RTO·(1 + u), u uniform in
        /// [0, this), drawn per timer from the connection's own seeded stream (Vasudevan et al.,
        /// SIGCOMM 2009: 0.5), in 0..=1 (default 0: none).
        rto_randomize: f64 = 0.0,
        /// Ask for ECN (RFC 3168) (default false; true with `cc = "dctcp"`, which needs it).
        ecn: bool = d.ecn,
        /// RFC 3042 limited transmit (default true).
        limited_transmit: bool = d.limited_transmit,
        /// RFC 7661: grow the window only while cwnd-limited (default true). It never shrinks
        /// an unused window: that is RFC 2861's decay, `cwnd_app_limited_decay`.
        cwnd_validation: bool = d.cwnd_validation,
        /// How "cwnd-limited" is judged: `"flight"` (default) or `"linux"`.
        cwnd_limited: CwndLimitedName = CwndLimitedName::Flight,
        /// Timers on the host's clock ticks, BSD style: delayed ACK at the next `delack_timeout`
        /// tick, the RTO in whole `rto_granularity` ticks (default false).
        timer_ticks: bool = d.timer_ticks,
        /// Timers on the host's 1/HZ clock as FreeBSD 4.x's callouts: `"none"` (exact timers,
        /// or `timer_ticks`' grids) or `"hz"` (the retransmission timer in whole 1/HZ ticks, the
        /// delayed ACK `delack_timeout` after the segment at the tick the callout counts to;
        /// `rto_granularity` and `ts_tick` are then 1/HZ, and a layer that sets either to
        /// anything else is refused); not with `timer_ticks` (default `"none"`; `"hz"` in
        /// freebsd-4.10).
        timer_grid: TimerGridName = TimerGridName::None,
        /// Slop added to every RTO of the BSD estimator (FreeBSD 4.x `tcp_rexmit_slop`,
        /// `TCPT_RANGESET`): to the timer after each RTT sample before its floor and ceiling,
        /// and to every backed-off timer, not to the initial RTO; needs `rtt_estimator =
        /// "bsd"`; at most `rto_max` (default 0s; 200ms in freebsd-4.10).
        rto_slop: Dur = Dur(SimDuration::ZERO),
        /// Socket buffers rounded up to whole MSS once it is known, BSD `tcp_mss` (default false).
        round_buffers_to_mss: bool = d.round_buffers_to_mss,
        /// The receiving application's read sends BSD's window update (`tcp_usr_rcvd` →
        /// `tcp_output`: an ACK when the window opens by 2 segments or half the buffer)
        /// (default false).
        window_update_on_read: bool = d.window_update_on_read,
        /// IP version of the flow's packets, 4 or 6: 6 gives every segment a 40-byte IPv6
        /// header instead of IPv4's 20 (no extension headers; `mss` is not changed — 1440
        /// fits a 1500-byte MTU) (default 4).
        ip_version: u8 = 4,
        /// What the sender does when its own host's interface queue (its route's first queue)
        /// has no room for a segment: `"drop"` (the queue drops it, a loss like any other) or
        /// `"cwr"` (Linux: the segment stays unsent and the window is reduced once,
        /// `tcp_enter_cwr`) (default `"drop"`; `"cwr"` in the linux-2.4.18 profile).
        local_congestion: LocalCongestionName = LocalCongestionName::Drop,
        /// How a window reduction that is not a loss — an ECN-Echo, a refusal by the host's own
        /// queue (`local_congestion = "cwr"`) — cuts the window: `"at-once"` (the controller's
        /// reduction, ssthresh and cwnd together) or `"rate-halving"` (Linux 2.4's CWR state,
        /// `tcp_enter_cwr`/`tcp_cwnd_down`/`tcp_complete_cwr`: ssthresh at once, cwnd kept at
        /// most in-flight + 1 segment and then one segment less every second ACK, not below
        /// ssthresh/2, no growth, until the data sent before the reduction is acknowledged;
        /// then at most ssthresh) (default `"at-once"`; `"rate-halving"` in linux-2.4.18).
        cwr_reduction: CwrReductionName = CwrReductionName::AtOnce,
        /// Linux `tcp_moderate_cwnd`, segments: after an ACK handled outside fast recovery and
        /// CWR while duplicate ACKs, SACKed data or a timeout's repair are outstanding, after a
        /// duplicate or SACK-bearing ACK, and on the ACK that ends a recovery, cwnd is cut to
        /// the segments in flight plus this many (`tcp_max_burst`); 0 = off (default 0; 3 in
        /// linux-2.4.18).
        moderate_cwnd: u32 = d.moderate_cwnd,
        /// RFC 2861's restart after idle as Linux 2.4 runs it (`tcp_cwnd_restart`): data sent
        /// with nothing outstanding more than an RTO after the last data raises ssthresh to ¾
        /// cwnd if below and halves cwnd per RTO idle, not below min(2.4's `tcp_init_cwnd`,
        /// cwnd) (default false; true in linux-2.4.18).
        cwnd_idle_restart: bool = d.cwnd_idle_restart,
        /// RFC 2861's decay of an unused window as Linux 2.4 runs it
        /// (`tcp_cwnd_application_limited`): after an RTO in the Open state without the window
        /// filled, and the application not waiting for room in the send buffer, ssthresh is
        /// raised to ¾ cwnd if below and cwnd falls halfway to the most segments out (at least
        /// 2). It shrinks the window; `cwnd_validation` (RFC 7661) only stops its growth
        /// (default false; true in linux-2.4.18).
        cwnd_app_limited_decay: bool = d.cwnd_app_limited_decay,
        /// RFC 2883 D-SACK as Linux 2.4 sends it: a data segment wholly or partly below the
        /// cumulative ACK, or a copy of out-of-order data already held, is reported as the
        /// first SACK block of the ACK sent at once (`tcp_dsack_set`); nothing without SACK
        /// (default false; true in linux-2.4.18).
        dsack: bool = d.dsack,
        /// Linux 2.4's undo of a needless window reduction (`tcp_try_undo_recovery`,
        /// `_partial`, `_dsack`, `_loss`, `tcp_undo_cwr`): when D-SACKs cover every
        /// retransmission of a recovery or timeout, or an ACK echoes a timestamp older than
        /// its first retransmission, ssthresh returns to max(ssthresh, ¾ cwnd) as it was before
        /// the reduction and cwnd rises to twice the reduced ssthresh, moderated to in-flight +
        /// `moderate_cwnd` (3 if 0) segments; set with neither `sack` nor `timestamps` it is
        /// refused (default false; true in linux-2.4.18).
        undo: bool = d.undo,
        /// Duplicate-ACK threshold, at least 1 (default 3).
        dupthresh: u32 = d.dupthresh,
        /// NewReno's retransmission timer on partial ACKs (RFC 6582 §4): `"impatient"`,
        /// restarted on the first partial ACK only (RFC 6582 §3.2 step 5), or
        /// `"slow-but-steady"`, on every one — FreeBSD 4.x (`tcp_newreno_partial_ack` stops
        /// the timer and `tcp_output` starts it again) and Linux (`tcp_ack_packets_out` on
        /// every ACK of new data) (default `"impatient"`; `"slow-but-steady"` in the
        /// freebsd-4.10 and Linux profiles). Only NewReno's recovery (no SACK) reads it; SACK
        /// recoveries restart the timer on every ACK of new data (RFC 6298 §5.3).
        partial_ack_timer: PartialAckTimerName = PartialAckTimerName::Impatient,
        /// Recovery procedure (default `"auto"`).
        recovery: RecoveryName = RecoveryName::Auto,
        /// Slow-start byte-counting limit L, segments per ACK (RFC 3465; default 1); BIC's
        /// `tcp_abc`; 0 turns byte counting off (one MSS per ACK of new data, as RFC 2581 and
        /// ns-2) for reno, newreno, highspeed and bic; cubic needs at least 1.
        abc_limit: u32 = crate::tcp::cc::RenoConfig::default().abc_limit,
        /// Timestamp clock tick, positive (default 1ms).
        ts_tick: Dur = Dur(d.ts_tick),
        /// Kernel HZ, 10..=1000000000 (default 1000; linux-2.6.16: 250): the jiffy that paces
        /// BIC's and CUBIC's window recomputation (HZ/32), and the host clock's tick (1/HZ) on
        /// which a variant such as ImTCP releases its segments.
        hz: u32 = 1000,
    }
});

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
