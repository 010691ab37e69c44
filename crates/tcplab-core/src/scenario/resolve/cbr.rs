//! `[flows.cbr]`: a constant-bit-rate source's rate, one for the whole flow (`rate`) or
//! piecewise constant (`schedule`), and its packet size.

use serde::Serialize;

use super::{err, Res};
use crate::app::{CbrPiece, Period};
use crate::net::packet::{IPV4_HEADER, UDP_HEADER};
use crate::scenario::spec::{CbrPieceSpec, CbrSpec, OnOffSpec, PeriodsName, Rate, Size, MAX_CBR_PIECES};
use crate::units::{format_duration, SimDuration};

/// A constant-bit-rate source, resolved: exactly one of `rate` and `schedule` is set.
/// Serialized as written, so a resolved scenario parses back to itself.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Cbr {
    /// Sending rate (IP bytes), the whole time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    /// Piecewise-constant sending rate: at least one piece, the first at 0s, times strictly
    /// increasing, at most `MAX_CBR_PIECES`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Vec<CbrPieceSpec>>,
    /// IP packet size, 29..=65535 bytes (default 1500B).
    pub packet_size: Size,
    /// On/off periods (with `rate` only), `periods` written out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_off: Option<OnOffSpec>,
}

impl Cbr {
    /// The source's pieces: `rate` is the one piece from 0s.
    pub fn pieces(&self) -> Vec<CbrPiece> {
        match (&self.schedule, self.rate) {
            (Some(s), _) => s.iter().map(|p| CbrPiece { at: p.at.0, rate: p.rate.0 }).collect(),
            (None, Some(r)) => vec![CbrPiece { at: SimDuration::ZERO, rate: r.0 }],
            (None, None) => unreachable!("resolution requires a rate or a schedule"),
        }
    }

    /// The scenario path of piece `j`'s rate under `flow` (`flows[i]`): `cbr.rate` for a flow
    /// with one `rate`.
    pub fn rate_path(&self, flow: &str, j: usize) -> String {
        match self.schedule {
            Some(_) => format!("{flow}.cbr.schedule[{j}].rate"),
            None => format!("{flow}.cbr.rate"),
        }
    }

    /// True when the source sends nothing after its last piece begins (its rate is 0): it
    /// ends by itself, without a `stop`.
    pub fn ends_silent(&self) -> bool {
        self.on_off.is_none() && self.pieces().last().is_some_and(|p| p.rate.0 == 0)
    }

    /// The on and off periods of an on/off source.
    pub fn periods(&self) -> Option<(Period, Period)> {
        let o = self.on_off.as_ref()?;
        let make = |mean: SimDuration| match o.periods.unwrap_or_default() {
            PeriodsName::Exponential => Period::Exponential(mean),
            PeriodsName::Fixed => Period::Fixed(mean),
            PeriodsName::Pareto => Period::Pareto { mean, shape: o.shape.expect("checked when resolving") },
        };
        Some((make(o.on.0), make(o.off.0)))
    }
}

/// Resolve `flows[i].cbr` (`spec`: the table as written, or the default when absent).
pub(super) fn resolve_cbr(i: usize, spec: &CbrSpec) -> Res<Cbr> {
    let p = |x: &str| format!("flows[{i}].cbr.{x}");
    match (spec.rate, &spec.schedule) {
        (Some(_), Some(_)) => return err(p("schedule"), "give rate or schedule, not both (a single rate is the one-piece schedule [{ at = \"0s\", rate = … }])"),
        (None, None) => return err(p("rate"), "a udp-cbr flow needs a rate: cbr = { rate = \"…\" } (or cbr.schedule = [{ at = \"0s\", rate = \"…\" }, …])"),
        (None, Some(s)) => check_schedule(i, s)?,
        (Some(_), None) => {}
    }
    let packet_size = spec.packet_size.unwrap_or(Size(1500));
    if packet_size.0 <= (IPV4_HEADER + UDP_HEADER) as u64 || packet_size.0 > 65_535 {
        return err(p("packet_size"), format!("{} bytes is out of range (29..=65535 IP bytes)", packet_size.0));
    }
    let on_off = match &spec.on_off {
        None => None,
        Some(o) => {
            let q = |x: &str| format!("flows[{i}].cbr.on_off.{x}");
            if spec.rate.is_none_or(|r| r.0 .0 == 0) {
                return err(q("on"), "an on/off source needs one positive rate (cbr.rate), not a schedule");
            }
            for (key, d) in [("on", o.on.0), ("off", o.off.0)] {
                if d == SimDuration::ZERO {
                    return err(q(key), "must be longer than 0s");
                }
            }
            let periods = o.periods.unwrap_or_default();
            match (periods, o.shape) {
                (PeriodsName::Pareto, None) => return err(q("shape"), "periods = \"pareto\" needs shape (the tail index, above 1)"),
                (PeriodsName::Pareto, Some(a)) if !(a.is_finite() && a > 1.0 && a <= 100.0) => {
                    return err(q("shape"), format!("{a} is out of range (1, 100]: the mean is finite only above 1"))
                }
                (PeriodsName::Exponential | PeriodsName::Fixed, Some(_)) => return err(q("shape"), "only for periods = \"pareto\""),
                _ => {}
            }
            Some(OnOffSpec { on: o.on, off: o.off, periods: Some(periods), shape: o.shape })
        }
    };
    Ok(Cbr { rate: spec.rate, schedule: spec.schedule.clone(), packet_size, on_off })
}

/// A schedule's pieces: at least one, at most `MAX_CBR_PIECES`, the first at 0s (the
/// schedule starts with the flow), times strictly increasing. Rates are checked by their
/// parser (non-negative) and, per piece, against the host's link when the network is built.
fn check_schedule(i: usize, s: &[CbrPieceSpec]) -> Res<()> {
    let p = |x: &str| format!("flows[{i}].cbr.{x}");
    if s.is_empty() {
        return err(p("schedule"), "is empty: give at least one piece, [{ at = \"0s\", rate = \"…\" }]");
    }
    if s.len() > MAX_CBR_PIECES {
        return err(p("schedule"), format!("{} pieces; at most {MAX_CBR_PIECES}", s.len()));
    }
    if s[0].at.0 != SimDuration::ZERO {
        return err(
            p("schedule[0].at"),
            format!("{}: the first piece must be at 0s (times are from the flow's start; give a 0bps piece first for a silent beginning)", format_duration(s[0].at.0)),
        );
    }
    for (j, w) in s.windows(2).enumerate() {
        if w[1].at.0 <= w[0].at.0 {
            return err(
                p(&format!("schedule[{}].at", j + 1)),
                format!("{} is not after the piece before it ({}): times must be strictly increasing", format_duration(w[1].at.0), format_duration(w[0].at.0)),
            );
        }
    }
    Ok(())
}
