//! The variant of a resolved `tcp` table (`variant = "none"` or `"ahtcp"`) and the parameters
//! of its own table (`ahtcp`), resolved key by key across the layers like the `tcp` table; and
//! the controller inputs each variant produces (`produces`), against which a controller's
//! needs (`Registered::INPUTS`) are checked.

use serde::Serialize;

use super::{check_period, err, Res};
use crate::scenario::spec::{AhtcpSpec, AlignName, Dur, Rate, RestartName, TargetsName, ThresholdRuleName, VariantName};
use crate::tcp::ahtcp::{AhtcpConfig, Align, Restart};
use crate::tcp::cc::{CcConfig, CcInputKind};
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
}

/// The controller inputs (`tcp::cc::CcInput`) a variant's policy feeds the data sender's
/// controller through `Connection::feed_controller`.
pub fn produces(variant: &ResolvedVariant) -> &'static [CcInputKind] {
    match variant {
        ResolvedVariant::None | ResolvedVariant::Ahtcp { .. } => &[],
    }
}

/// The variant that produces `kind`, named in the refusal of a controller that needs it.
fn producer_of(kind: CcInputKind) -> &'static str {
    match kind {
        CcInputKind::AvailableBandwidth => "imtcp",
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

/// The variant's name and table while the layers are applied.
#[derive(Clone, Debug, Default)]
pub(super) struct VariantLayers {
    name: Option<VariantName>,
    ahtcp: AhtcpSpec,
}

impl VariantLayers {
    /// Apply a layer's `variant` and `ahtcp` table, key by key.
    pub fn overlay(&mut self, name: Option<VariantName>, a: &AhtcpSpec) {
        if name.is_some() {
            self.name = name;
        }
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

    /// Check the table (even when unused) and select the variant; `path` is the `tcp` table's.
    pub fn select(self, path: &str, mss: u32, nagle: bool) -> Res<ResolvedVariant> {
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
