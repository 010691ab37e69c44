//! `[[coordinators]]`: remedies acting on a group of parallel TCP streams.

use serde::Serialize;

use super::flows::{ResolvedFlow, Traffic};
use super::{check_period, err, Res};
use crate::scenario::spec::{CoordinatorKind, CoordinatorSpec, Dur};
use crate::tcp::cc::{CcConfig, CongestionControl, Controller, ControllerInput, CoupledGroup};
use crate::units::SimDuration;

/// `[[coordinators]]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedCoordinator {
    /// What it does.
    pub kind: CoordinatorKind,
    /// The flows it coordinates, at least two (names; a replicated flow's base name means all
    /// its copies).
    pub flows: Vec<String>,
    /// How often it acts, at least 1us (`decp`; default 300ms).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interval: Option<Dur>,
    /// Relative excess over the mean tolerated before acting, in [0, 10] (`decp`; default 0.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<f64>,
    /// The flows by their expanded names (`flows` with each replicated flow's base name
    /// replaced by its copies), each once.
    #[serde(skip)]
    pub members: Vec<String>,
}

/// How many streams flow `f` names: its copies, or a reservoir's streams (one per disk server).
fn copies(f: &ResolvedFlow) -> u32 {
    match &f.traffic {
        Traffic::Reservoir(r) => r.reservoir.servers,
        _ => f.count,
    }
}

/// True when the controller `cc` configures takes a coupled group's membership.
fn couples(cc: &CcConfig) -> bool {
    let mut c = Controller::new(cc, 14_600, u64::MAX, 1460);
    c.attach(&ControllerInput::Coupled(CoupledGroup::join(&CoupledGroup::shared())))
}

/// Resolve `[[coordinators]]` over the resolved flows.
pub(super) fn resolve_coordinators(coordinators: &[CoordinatorSpec], flows: &[ResolvedFlow]) -> Res<Vec<ResolvedCoordinator>> {
    let mut out = Vec::with_capacity(coordinators.len());
    for (i, c) in coordinators.iter().enumerate() {
        let p = |x: &str| format!("coordinators[{i}].{x}");
        let mut members: Vec<String> = Vec::new();
        for (k, name) in c.flows.iter().enumerate() {
            let q = format!("coordinators[{i}].flows[{k}]");
            // The flow itself (`name`, or a replicated flow's base name: all its copies), or
            // one copy of a replicated flow (`name.j`, j < count).
            // A reservoir flow is its streams, `name.s` for each of its disk servers.
            let whole = flows.iter().find(|f| &f.name == name);
            let copy = name.rsplit_once('.').and_then(|(b, j)| {
                let j: u32 = j.parse().ok()?;
                flows.iter().find(|f| f.name == b && j < copies(f) && copies(f) > 1)
            });
            let (f, names) = match (whole, copy) {
                (Some(f), _) => (f, if copies(f) > 1 { (0..copies(f)).map(|j| format!("{}.{j}", f.name)).collect() } else { vec![f.name.clone()] }),
                (None, Some(f)) => (f, vec![name.clone()]),
                (None, None) => {
                    let hint = name.rsplit_once('.').and_then(|(b, _)| flows.iter().find(|f| f.name == b)).map_or(String::new(), |f| {
                        if copies(f) > 1 {
                            let what = if matches!(f.traffic, Traffic::Reservoir(_)) { "streams" } else { "copies" };
                            format!(" ('{}' has {what} {}.0 … {}.{})", f.name, f.name, f.name, copies(f) - 1)
                        } else {
                            format!(" ('{}' is a single flow)", f.name)
                        }
                    });
                    return err(q, format!("no flow named '{name}'{hint}"));
                }
            };
            if !matches!(f.traffic, Traffic::Tcp(_) | Traffic::Reservoir(_)) {
                return err(q, format!("'{name}' is neither a bulk TCP flow (kind = \"tcp\") nor a reservoir; coordinators act on parallel TCP streams"));
            }
            for n in names {
                if members.contains(&n) {
                    return err(q, format!("'{n}' is listed twice; each flow counts once in the mean"));
                }
                members.push(n);
            }
        }
        if members.len() < 2 {
            return err(p("flows"), format!("coordinate at least two flows (these name {})", members.len()));
        }
        let (interval, tolerance) = match c.kind {
            CoordinatorKind::Decp => {
                let interval = c.interval.map_or(SimDuration::from_millis(300), |d| d.0);
                check_period(p("interval"), interval)?;
                let tolerance = c.tolerance.unwrap_or(0.1);
                if !(0.0..=10.0).contains(&tolerance) {
                    return err(p("tolerance"), format!("{tolerance} is out of range [0, 10]"));
                }
                (Some(Dur(interval)), Some(tolerance))
            }
            CoordinatorKind::Lia => {
                for (key, given) in [("interval", c.interval.is_some()), ("tolerance", c.tolerance.is_some())] {
                    if given {
                        return err(p(key), "not used by kind = \"lia\" (the coupled increase acts on every ACK)");
                    }
                }
                for name in &members {
                    let base = flows.iter().find(|f| &f.name == name || name.rsplit_once('.').is_some_and(|(b, _)| f.name == b)).expect("members are flows");
                    let cfg = base.tcp().expect("members are TCP flows").config();
                    if !couples(&cfg.cc) {
                        return err(p("kind"), format!("flow '{name}' uses cc = \"{}\", which has no coupled increase; RFC 6356's applies to reno and newreno", cfg.cc.name()));
                    }
                }
                (None, None)
            }
        };
        out.push(ResolvedCoordinator { kind: c.kind, flows: c.flows.clone(), interval, tolerance, members });
    }
    Ok(out)
}
