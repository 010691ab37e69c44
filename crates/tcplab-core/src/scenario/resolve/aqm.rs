//! A queue table's AQM (`aqm` and the table of its name): what it may be combined with, its
//! parameters checked, and the resolved queue with the AQM's default limit and every
//! parameter written out.

use serde::{de::DeserializeOwned, Serialize};

use super::{err, Res};
use crate::net::discipline::{check_codel_rule, check_fq_codel_params, check_pie_params, check_red_params, CodelParams, FqCodelParams, PieParams, RedParams};
use crate::params::{Overlay, ParamError};
use crate::scenario::spec::{AqmName, QLimit, QueueSpec, QueueTable};
use crate::units::QueueLimit;

/// The limit an AQM's queue has when the table gives none: Linux's defaults (`sch_codel`
/// and `sch_pie` 1000 packets, `sch_fq_codel` 10240); RED has none (`tc` requires one).
pub fn default_limit(aqm: AqmName) -> Option<QueueLimit> {
    match aqm {
        AqmName::Red => None,
        AqmName::Codel | AqmName::Pie => Some(QueueLimit::Packets(1000)),
        AqmName::FqCodel => Some(QueueLimit::Packets(10240)),
    }
}

/// The resolved parameters of `table` over the defaults.
fn resolved<P: Overlay>(table: &Option<P::Table>) -> P {
    let mut p = P::default();
    if let Some(t) = table {
        p.overlay(t);
    }
    p
}

/// RED's parameters as the table gives them over the defaults.
pub fn red(t: &QueueTable) -> RedParams {
    resolved(&t.red)
}

/// CoDel's parameters.
pub fn codel(t: &QueueTable) -> CodelParams {
    resolved(&t.codel)
}

/// FQ-CoDel's parameters.
pub fn fq_codel(t: &QueueTable) -> FqCodelParams {
    resolved(&t.fq_codel)
}

/// PIE's parameters.
pub fn pie(t: &QueueTable) -> PieParams {
    resolved(&t.pie)
}

/// Check the AQM keys of queue table `t` at `path`.
pub(super) fn check(t: &QueueTable, path: &str) -> Res<()> {
    let tables = [(AqmName::Red, t.red.is_some()), (AqmName::Codel, t.codel.is_some()), (AqmName::FqCodel, t.fq_codel.is_some()), (AqmName::Pie, t.pie.is_some())];
    for (name, given) in tables {
        if given && t.aqm != Some(name) {
            return err(format!("{path}.{}", name.table()), format!("{}'s parameters: only with aqm = \"{}\"", name.name(), name.name()));
        }
    }
    let Some(aqm) = t.aqm else { return Ok(()) };
    for (key, given) in [("classes", t.classes.is_some()), ("cells", t.cells.is_some())] {
        if given {
            return err(format!("{path}.{key}"), format!("aqm = \"{}\" runs on one FIFO: give limit, not {key}", aqm.name()));
        }
    }
    if t.ecn_threshold.is_some() {
        return err(format!("{path}.ecn_threshold"), format!("aqm = \"{}\" marks by its own rule: set {}.ecn = true instead", aqm.name(), aqm.table()));
    }
    if t.limit.is_none() && default_limit(aqm).is_none() {
        return err(format!("{path}.limit"), format!("aqm = \"{}\" needs the queue's hard limit (as tc does), e.g. limit = \"100pkts\"", aqm.name()));
    }
    let checked: Result<(), ParamError> = match aqm {
        AqmName::Red => check_red_params(&red(t)),
        AqmName::Codel => {
            let p = codel(t);
            check_codel_rule(p.target.0, p.interval.0, p.mtu)
        }
        AqmName::FqCodel => check_fq_codel_params(&fq_codel(t)),
        AqmName::Pie => check_pie_params(&pie(t)),
    };
    checked.or_else(|e| err(format!("{path}.{}.{}", aqm.table(), e.key), e.reason))
}

/// Every key of a resolved parameter set, as the table a scenario writes.
fn written<P: Serialize, T: DeserializeOwned>(p: &P) -> T {
    let v = serde_json::to_value(p).expect("parameters serialize");
    serde_json::from_value(v).expect("a parameter table reads its own resolved values")
}

/// The queue as it runs: an AQM queue with its limit and every parameter given.
pub(super) fn complete(q: QueueSpec) -> QueueSpec {
    let QueueSpec::Table(mut t) = q else { return q };
    let Some(aqm) = t.aqm else { return QueueSpec::Table(t) };
    if t.limit.is_none() {
        t.limit = default_limit(aqm).map(QLimit);
    }
    match aqm {
        AqmName::Red => t.red = Some(written(&red(&t))),
        AqmName::Codel => t.codel = Some(written(&codel(&t))),
        AqmName::FqCodel => t.fq_codel = Some(written(&fq_codel(&t))),
        AqmName::Pie => t.pie = Some(written(&pie(&t))),
    }
    QueueSpec::Table(t)
}
