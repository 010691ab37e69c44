//! The variant of a resolved `tcp` table (`variant = "none"`, `"ahtcp"` or `"imtcp"`) and the
//! parameters of its own table (`ahtcp`, `imtcp`), resolved key by key across the layers like
//! the `tcp` table; and the controller inputs each variant produces (`produces`), against
//! which a controller's needs (`Registered::INPUTS`) are checked.

use serde::Serialize;

use super::{check_period, err, Res};
use crate::scenario::spec::{
    AhtcpSpec, AlignName, CiName, DelayedAckName, Dur, ImtcpSpec, InitialName, RangeName, Rate, ReleaseName, RestartName, TargetsName, ThresholdRuleName, TrendRuleName,
    VariantName,
};
use crate::tcp::ahtcp::{AhtcpConfig, Align, Restart};
use crate::tcp::cc::{CcConfig, CcInputKind};
use crate::tcp::imtcp::{CiReading, ImtcpConfig, Initial, Release, Trend, TrendRule};
use crate::units::SimDuration;

/// The settings of a client's AHTCP monitor: threshold rule, threshold (bit/s; 0 with the
/// peak rule), peak fraction (as bits), peak window, interval, samples, targets.
pub type MonitorKey = (ThresholdRuleName, u64, u64, SimDuration, SimDuration, u32, TargetsName);

/// The variant with its parameters. Serialized as `variant = "<name>"` plus its table.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "variant", rename_all = "kebab-case")]
pub enum ResolvedVariant {
    /// Standard TCP.
    None,
    /// AHTCP.
    Ahtcp {
        /// `[…tcp.ahtcp]`.
        ahtcp: ResolvedAhtcp,
    },
    /// ImTCP.
    Imtcp {
        /// `[…tcp.imtcp]`.
        imtcp: ResolvedImtcp,
    },
}

impl ResolvedVariant {
    /// True when the variant acts on the host's 1/HZ ticks (its connections need the host's
    /// clock phase).
    pub fn uses_host_clock(&self) -> bool {
        matches!(self, ResolvedVariant::Imtcp { .. })
    }
}

/// The controller inputs (`tcp::cc::CcInput`) a variant's policy feeds the data sender's
/// controller through `Connection::feed_controller`.
pub fn produces(variant: &ResolvedVariant) -> &'static [CcInputKind] {
    match variant {
        ResolvedVariant::None | ResolvedVariant::Ahtcp { .. } => &[],
        ResolvedVariant::Imtcp { .. } => &[CcInputKind::AvailableBandwidth, CcInputKind::StageRtt],
    }
}

/// The variant that produces `kind`, named in the refusal of a controller that needs it.
fn producer_of(kind: CcInputKind) -> &'static str {
    match kind {
        CcInputKind::AvailableBandwidth | CcInputKind::StageRtt => "imtcp",
    }
}

/// Refuse a controller whose inputs the variant does not produce (`path` is the `tcp`
/// table's; the error names its `cc`).
pub(super) fn check_inputs(path: &str, cc: &CcConfig, variant: &ResolvedVariant) -> Res<()> {
    for &kind in cc.inputs() {
        if !produces(variant).contains(&kind) {
            return err(format!("{path}.cc"), format!("\"{}\" needs the {} input; set tcp.variant = \"{}\"", cc.name(), kind.name(), producer_of(kind)));
        }
    }
    Ok(())
}

/// AHTCP's parameters, resolved (the keys and ranges of `spec::AhtcpSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ResolvedAhtcp {
    /// Moving-average throughput below which the client asks (the fixed rule).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threshold: Option<Rate>,
    /// How the threshold is set (default `"fixed"`).
    pub threshold_rule: ThresholdRuleName,
    /// The peak rule's fraction of the peak (default 0.5).
    pub peak_fraction: f64,
    /// The peak rule's memory (default 50ms).
    pub peak_window: Dur,
    /// Sampling interval (default 1ms).
    pub interval: Dur,
    /// Samples in the moving average (default 5).
    pub samples: u32,
    /// Bytes held back from every ACK (default 1000).
    pub hold: u32,
    /// The server's restart point (default `"ceiling"`).
    pub restart: RestartName,
    /// Which connections are asked (default `"stalled"`).
    pub targets: TargetsName,
    /// Which ACKs the server reads past the hold (default `"all"`).
    pub align: AlignName,
    /// The client may ask with nothing held (default false).
    pub ask_empty: bool,
}

impl ResolvedAhtcp {
    /// The endpoints' settings.
    pub fn config(&self) -> AhtcpConfig {
        AhtcpConfig {
            hold: self.hold,
            restart: match self.restart {
                RestartName::Ceiling => Restart::Ceiling,
                RestartName::Floor => Restart::Floor,
                RestartName::Literal => Restart::Literal,
            },
            align: match self.align {
                AlignName::All => Align::All,
                AlignName::Restart => Align::Restart,
            },
            ask_empty: self.ask_empty,
        }
    }

    /// The client monitor's settings (those that must agree across one client's connections).
    pub fn monitor_key(&self) -> MonitorKey {
        (self.threshold_rule, self.threshold.map_or(0, |t| t.0.bps()), self.peak_fraction.to_bits(), self.peak_window.0, self.interval.0, self.samples, self.targets)
    }
}

/// ImTCP's parameters, resolved (the keys and ranges of `spec::ImtcpSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ResolvedImtcp {
    /// Streams per measurement (default 4).
    pub streams: u32,
    /// Packets per stream (default 10).
    pub packets: u32,
    /// Results in the confidence interval (default 8).
    pub history: u32,
    /// The CI's reading (default `"mean"`).
    pub ci: CiName,
    /// The narrowest range, a fraction of μ (default 0.1).
    pub min_width: f64,
    /// The first range (default `"train"`).
    pub initial: InitialName,
    /// The link rate of `initial = "link"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_rate: Option<Rate>,
    /// How the range moves (default `"adaptive"`; shown only when fixed, so resolved scenarios
    /// and their hashes without the key are as before it existed).
    #[serde(skip_serializing_if = "is_adaptive")]
    pub range: RangeName,
    /// Trend thresholds (PCT, PDT).
    pub trend: ResolvedTrend,
    /// Release on the tick grid (default `"next-tick"`).
    pub release: ReleaseName,
    /// A receiver that delays ACKs (default `"refuse"`).
    pub delayed_ack: DelayedAckName,
}

fn is_adaptive(r: &RangeName) -> bool {
    *r == RangeName::Adaptive
}

/// Pathload's thresholds, resolved.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ResolvedTrend {
    /// How the statistics are read (default `"ties-split"`).
    pub rule: TrendRuleName,
    /// S_PCT above: increasing.
    pub pct_high: f64,
    /// S_PCT below: no trend.
    pub pct_low: f64,
    /// S_PDT above: increasing.
    pub pdt_high: f64,
    /// S_PDT below: no trend.
    pub pdt_low: f64,
}

impl ResolvedImtcp {
    /// The stage's settings.
    pub fn config(&self) -> ImtcpConfig {
        let t = self.trend;
        ImtcpConfig {
            streams: self.streams,
            packets: self.packets,
            history: self.history,
            ci: match self.ci {
                CiName::Mean => CiReading::Mean,
                CiName::Band => CiReading::Band,
            },
            min_width: self.min_width,
            fixed_range: self.range == RangeName::Fixed,
            initial: match (self.initial, self.link_rate) {
                (InitialName::Link, Some(r)) => Initial::Link(r.0.bps() as f64),
                _ => Initial::Train,
            },
            trend: Trend {
                rule: match t.rule {
                    TrendRuleName::Pathload => TrendRule::Pathload,
                    TrendRuleName::TiesSplit => TrendRule::TiesSplit,
                    TrendRuleName::TiesExcluded => TrendRule::TiesExcluded,
                },
                pct_high: t.pct_high,
                pct_low: t.pct_low,
                pdt_high: t.pdt_high,
                pdt_low: t.pdt_low,
            },
            release: match self.release {
                ReleaseName::NextTick => Release::NextTick,
                ReleaseName::NearestTick => Release::NearestTick,
            },
        }
    }
}

/// The variant's name and tables while the layers are applied.
#[derive(Clone, Debug, Default)]
pub(super) struct VariantLayers {
    name: Option<VariantName>,
    ahtcp: AhtcpSpec,
    imtcp: ImtcpSpec,
}

impl VariantLayers {
    /// Apply a layer's `variant` and its `ahtcp` and `imtcp` tables, key by key.
    pub fn overlay(&mut self, name: Option<VariantName>, a: &AhtcpSpec, m: &ImtcpSpec) {
        if name.is_some() {
            self.name = name;
        }
        let i = &mut self.imtcp;
        i.streams = m.streams.or(i.streams);
        i.packets = m.packets.or(i.packets);
        i.history = m.history.or(i.history);
        i.ci = m.ci.or(i.ci);
        i.min_width = m.min_width.or(i.min_width);
        i.initial = m.initial.or(i.initial);
        i.link_rate = m.link_rate.or(i.link_rate);
        i.range = m.range.or(i.range);
        let (t, n) = (&mut i.trend, &m.trend);
        t.rule = n.rule.or(t.rule);
        t.pct_high = n.pct_high.or(t.pct_high);
        t.pct_low = n.pct_low.or(t.pct_low);
        t.pdt_high = n.pdt_high.or(t.pdt_high);
        t.pdt_low = n.pdt_low.or(t.pdt_low);
        i.release = m.release.or(i.release);
        i.delayed_ack = m.delayed_ack.or(i.delayed_ack);
        let t = &mut self.ahtcp;
        t.threshold = a.threshold.or(t.threshold);
        t.threshold_rule = a.threshold_rule.or(t.threshold_rule);
        t.peak_fraction = a.peak_fraction.or(t.peak_fraction);
        t.peak_window = a.peak_window.or(t.peak_window);
        t.interval = a.interval.or(t.interval);
        t.samples = a.samples.or(t.samples);
        t.hold = a.hold.or(t.hold);
        t.restart = a.restart.or(t.restart);
        t.targets = a.targets.or(t.targets);
        t.align = a.align.or(t.align);
        t.ask_empty = a.ask_empty.or(t.ask_empty);
    }

    /// Check the tables (even when unused) and select the variant; `path` is the `tcp`
    /// table's, `delack_segments` the receiver's (both ends share the table).
    pub fn select(self, path: &str, mss: u32, nagle: bool, delack_segments: u32) -> Res<ResolvedVariant> {
        let imtcp = self.imtcp_checked(path, delack_segments)?;
        let g = |k: &str| format!("{path}.ahtcp.{k}");
        let a = &self.ahtcp;
        let interval = a.interval.unwrap_or(Dur(SimDuration::from_millis(1)));
        check_period(g("interval"), interval.0)?;
        let samples = a.samples.unwrap_or(5);
        if !(1..=1000).contains(&samples) {
            return err(g("samples"), format!("{samples} is out of range (1..=1000)"));
        }
        let hold = a.hold.unwrap_or(1000);
        let used = a.hold.is_some() || self.name == Some(VariantName::Ahtcp);
        if used && (hold == 0 || hold >= mss) {
            return err(g("hold"), format!("{hold} bytes is out of range: at least 1 and below the MSS ({mss}), so that a request never acknowledges a byte the client lacks"));
        }
        if a.threshold.is_some_and(|t| t.0.bps() == 0) {
            return err(g("threshold"), "must be positive");
        }
        let peak_fraction = a.peak_fraction.unwrap_or(0.5);
        if !(peak_fraction > 0.0 && peak_fraction <= 1.0) {
            return err(g("peak_fraction"), format!("{peak_fraction} is out of range (0 < fraction <= 1)"));
        }
        let peak_window = a.peak_window.unwrap_or(Dur(SimDuration::from_millis(50)));
        check_period(g("peak_window"), peak_window.0)?;
        let fmt = crate::units::format_duration;
        if peak_window.0 < interval.0 || peak_window.0 > SimDuration::from_secs(10) {
            return err(g("peak_window"), format!("{} is out of range (from the sampling interval, {}, to 10s)", fmt(peak_window.0), fmt(interval.0)));
        }
        let rule = a.threshold_rule.unwrap_or_default();
        if rule == ThresholdRuleName::Peak && a.threshold.is_some() {
            return err(
                g("threshold"),
                "the peak rule sets the threshold from the measured peak (peak_fraction, peak_window); give threshold only with threshold_rule = \"fixed\"",
            );
        }
        let align = a.align.unwrap_or(AlignName::All);
        let ask_empty = a.ask_empty.unwrap_or(false);
        if ask_empty && align == AlignName::Restart {
            return err(
                g("ask_empty"),
                "needs align = \"all\": with the ACKs read literally the server takes a request's number as its SND.UNA, and a number past what arrived would strand those bytes",
            );
        }
        if ask_empty && a.restart.unwrap_or(RestartName::Ceiling) == RestartName::Ceiling {
            return err(
                g("ask_empty"),
                "needs restart = \"floor\" or \"literal\" (eq. (1) rewinds below a number that runs past what arrived); the ceiling restart reads it as a segment the client has and never resends it",
            );
        }
        if self.name == Some(VariantName::Ahtcp) && align == AlignName::Restart && nagle {
            return err(
                g("align"),
                "with align = \"restart\" the sender reads the held ACKs as they are, so the last segment of every write waits for an ACK that never comes under Nagle's algorithm (a transfer never completes); set nagle = false in this tcp table",
            );
        }
        Ok(match self.name.unwrap_or(VariantName::None) {
            VariantName::None => ResolvedVariant::None,
            VariantName::Imtcp => ResolvedVariant::Imtcp { imtcp },
            VariantName::Ahtcp => {
                if rule == ThresholdRuleName::Fixed && a.threshold.is_none() {
                    return err(
                        g("threshold"),
                        "AHTCP needs the throughput below which the client asks for retransmissions (the paper gives no value; see scenarios/p1_incast/README.md), or threshold_rule = \"peak\"",
                    );
                }
                ResolvedVariant::Ahtcp {
                    ahtcp: ResolvedAhtcp {
                        threshold: a.threshold,
                        threshold_rule: rule,
                        peak_fraction,
                        peak_window,
                        interval,
                        samples,
                        hold,
                        restart: a.restart.unwrap_or(RestartName::Ceiling),
                        targets: a.targets.unwrap_or(TargetsName::Stalled),
                        align,
                        ask_empty,
                    },
                }
            }
        })
    }
}

impl VariantLayers {
    /// The `imtcp` table resolved and checked (also when another variant runs: a bad key is
    /// refused wherever it is written); `delayed_ack` only when ImTCP runs.
    fn imtcp_checked(&self, path: &str, delack_segments: u32) -> Res<ResolvedImtcp> {
        let g = |k: &str| format!("{path}.imtcp.{k}");
        let m = &self.imtcp;
        let streams = m.streams.unwrap_or(4);
        if !(1..=64).contains(&streams) {
            return err(g("streams"), format!("{streams} is out of range (1..=64 streams per measurement)"));
        }
        let packets = m.packets.unwrap_or(10);
        if !(2..=1000).contains(&packets) {
            return err(g("packets"), format!("{packets} is out of range (2..=1000: a stream needs at least one gap)"));
        }
        let history = m.history.unwrap_or(8);
        if !(2..=1000).contains(&history) {
            return err(g("history"), format!("{history} is out of range (2..=1000: a confidence interval needs two results)"));
        }
        let min_width = m.min_width.unwrap_or(0.1);
        if !(min_width > 0.0 && min_width <= 1.0) {
            return err(g("min_width"), format!("{min_width} is out of range (0 < fraction of the mean <= 1)"));
        }
        let initial = m.initial.unwrap_or(InitialName::Train);
        match (initial, m.link_rate) {
            (InitialName::Link, None) => return err(g("link_rate"), "initial = \"link\" starts from [link_rate/10, link_rate]: give the path's rate (IP bit/s)"),
            (InitialName::Train, Some(_)) => return err(g("link_rate"), "only applies to initial = \"link\""),
            (_, Some(r)) if r.0.bps() == 0 => return err(g("link_rate"), "must be positive"),
            _ => {}
        }
        let d = Trend::default();
        let t = ResolvedTrend {
            rule: m.trend.rule.unwrap_or(TrendRuleName::TiesSplit),
            pct_high: m.trend.pct_high.unwrap_or(d.pct_high),
            pct_low: m.trend.pct_low.unwrap_or(d.pct_low),
            pdt_high: m.trend.pdt_high.unwrap_or(d.pdt_high),
            pdt_low: m.trend.pdt_low.unwrap_or(d.pdt_low),
        };
        for (k, lo, hi, v) in [("pct", 0.0, 1.0, (t.pct_low, t.pct_high)), ("pdt", -1.0, 1.0, (t.pdt_low, t.pdt_high))] {
            if !(lo <= v.0 && v.0 <= v.1 && v.1 <= hi) {
                return err(g(&format!("trend.{k}_low")), format!("{k}_low {} and {k}_high {} must satisfy {lo} <= low <= high <= {hi}", v.0, v.1));
            }
        }
        let delayed_ack = m.delayed_ack.unwrap_or(DelayedAckName::Refuse);
        if self.name == Some(VariantName::Imtcp) && delack_segments > 1 && delayed_ack == DelayedAckName::Refuse {
            return err(
                format!("{path}.delack_segments"),
                format!("{delack_segments}: ImTCP times every stream packet by its own ACK, so the receiver must ACK every segment (delack_segments = 1); or set imtcp.delayed_ack = \"warn\" to run it anyway"),
            );
        }
        Ok(ResolvedImtcp {
            streams,
            packets,
            history,
            ci: m.ci.unwrap_or(CiName::Mean),
            min_width,
            initial,
            link_rate: m.link_rate,
            range: m.range.unwrap_or_default(),
            trend: t,
            release: m.release.unwrap_or(ReleaseName::NextTick),
            delayed_ack,
        })
    }
}
