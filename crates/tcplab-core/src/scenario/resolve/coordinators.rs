//! `[[coordinators]]`: remedies acting on a group of parallel TCP streams.

use serde::Serialize;

use super::flows::ResolvedFlow;
use super::{check_period, err, Res};
use crate::scenario::spec::{CoordinatorKind, CoordinatorSpec, Dur};
use crate::units::SimDuration;

/// `[[coordinators]]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedCoordinator {
    /// What it does.
    pub kind: CoordinatorKind,
    /// The flows it coordinates, at least two (names; a replicated flow's base name means all
    /// its copies).
    pub flows: Vec<String>,
    /// How often it acts, at least 1us (default 300ms).
    pub interval: Dur,
    /// Relative excess over the mean tolerated before acting, in [0, 10] (default 0.1).
    pub tolerance: f64,
}

/// Resolve `[[coordinators]]` over the resolved flows.
pub(super) fn resolve_coordinators(coordinators: &[CoordinatorSpec], flows: &[ResolvedFlow]) -> Res<Vec<ResolvedCoordinator>> {
    let mut out = Vec::with_capacity(coordinators.len());
    for (i, c) in coordinators.iter().enumerate() {
        let p = |x: &str| format!("coordinators[{i}].{x}");
        if c.flows.len() < 2 {
            return err(p("flows"), "coordinate at least two flows");
        }
        for (k, name) in c.flows.iter().enumerate() {
            let base = name.rsplit_once('.').map_or(name.as_str(), |(b, idx)| if idx.parse::<u32>().is_ok() { b } else { name.as_str() });
            let Some(f) = flows.iter().find(|f| &f.name == name || f.name == base) else {
                return err(format!("coordinators[{i}].flows[{k}]"), format!("no flow named '{name}'"));
            };
            if f.tcp().is_none() {
                return err(format!("coordinators[{i}].flows[{k}]"), format!("'{name}' is not a TCP flow"));
            }
        }
        let interval = c.interval.map_or(SimDuration::from_millis(300), |d| d.0);
        check_period(p("interval"), interval)?;
        let tolerance = c.tolerance.unwrap_or(0.1);
        if !(0.0..=10.0).contains(&tolerance) {
            return err(p("tolerance"), format!("{tolerance} is out of range [0, 10]"));
        }
        out.push(ResolvedCoordinator { kind: c.kind, flows: c.flows.clone(), interval: Dur(interval), tolerance });
    }
    Ok(out)
}
