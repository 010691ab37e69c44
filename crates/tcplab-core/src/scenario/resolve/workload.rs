//! `[flows.workload]` resolved: the number of flows, the arrival process and its rate (or
//! offered load), the size distribution with only its family's keys, the pairing rule and
//! the write size, every value checked with an error naming its key.

use serde::Serialize;

use super::tcp::ResolvedTcp;
use super::{err, Res, MAX_FLOWS};
use crate::app::workload::{Arrivals, Cdf, SizeDist, DATA_MINING, WEB_SEARCH};
use crate::scenario::spec::{ArrivalsName, CdfName, DistName, FlowSpec, PairsName, Size, SizesSpec};

/// A workload: its table and the TCP settings of every flow it makes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadTraffic {
    /// `[flows.workload]`, resolved.
    pub workload: ResolvedWorkload,
    /// The flows' settings.
    pub tcp: ResolvedTcp,
}

/// `[flows.workload]` with every default written out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedWorkload {
    /// Flows to make, 1..=`MAX_FLOWS`.
    pub flows: u64,
    /// The arrival process (default `"poisson"`).
    pub arrivals: ArrivalsName,
    /// Arrivals per second (one of `rate` and `load`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Offered load: the mean payload rate over the sum of the sources' link rates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// The sizes, with the keys of their family only.
    pub sizes: SizesSpec,
    /// The pairing rule (default `"random"`).
    pub pairs: PairsName,
    /// The senders' write size (default 128KiB).
    pub write_size: Size,
}

impl ResolvedWorkload {
    /// The size distribution.
    pub fn size_dist(&self) -> SizeDist {
        size_dist(&self.sizes).expect("checked when resolving")
    }

    /// The arrival process at `rate` flows per second.
    pub fn arrivals(&self, rate: f64) -> Arrivals {
        match self.arrivals {
            ArrivalsName::Poisson => Arrivals::Poisson { rate },
            ArrivalsName::Periodic => Arrivals::Periodic { rate },
        }
    }
}

pub(super) fn size_dist(s: &SizesSpec) -> Result<SizeDist, (&'static str, String)> {
    Ok(match s.dist {
        DistName::Fixed => SizeDist::Fixed(s.bytes.expect("checked").0),
        DistName::Exponential => SizeDist::Exponential { mean: s.mean.expect("checked").0 as f64 },
        DistName::Pareto => SizeDist::pareto_with_mean(s.mean.expect("checked").0 as f64, s.shape.expect("checked"), s.max.map(|m| m.0 as f64)),
        DistName::Cdf => match (s.cdf, &s.points) {
            (Some(CdfName::WebSearch), None) => SizeDist::Empirical(Cdf::new(WEB_SEARCH).expect("a CDF")),
            (Some(CdfName::DataMining), None) => SizeDist::Empirical(Cdf::new(DATA_MINING).expect("a CDF")),
            (None, Some(p)) => SizeDist::Empirical(Cdf::new(&p.iter().map(|&[a, b]| (a, b)).collect::<Vec<_>>()).map_err(|e| ("points", e))?),
            (Some(_), Some(_)) => return Err(("points", "give a shipped cdf or points, not both".into())),
            (None, None) => return Err(("cdf", "dist = \"cdf\" needs cdf = \"web-search\" | \"data-mining\" or points = [[bytes, probability], …]".into())),
        },
    })
}

/// Check a sizes table (`workload.sizes`, `request_response.responses`) found at `at`: the keys
/// of its family only, each in range, a CDF that is one.
pub(super) fn check_sizes(sizes: &SizesSpec, at: &str) -> Res<()> {
    let sp = |x: &str| format!("{at}.{x}");
    let family = match sizes.dist {
        DistName::Fixed => "fixed",
        DistName::Exponential => "exponential",
        DistName::Pareto => "pareto",
        DistName::Cdf => "cdf",
    };
    let allowed: &[&str] = match sizes.dist {
        DistName::Fixed => &["bytes"],
        DistName::Exponential => &["mean"],
        DistName::Pareto => &["mean", "shape", "max"],
        DistName::Cdf => &["cdf", "points"],
    };
    let given = [
        ("bytes", sizes.bytes.is_some()),
        ("mean", sizes.mean.is_some()),
        ("shape", sizes.shape.is_some()),
        ("max", sizes.max.is_some()),
        ("cdf", sizes.cdf.is_some()),
        ("points", sizes.points.is_some()),
    ];
    for (key, set) in given {
        if set && !allowed.contains(&key) {
            return err(sp(key), format!("not a key of dist = \"{family}\" (its keys: {})", allowed.join(", ")));
        }
    }
    let need = |key: &str, v: Option<u64>| -> Res<()> {
        match v {
            None => err(sp(key), format!("dist = \"{family}\" needs {key}")),
            Some(0) => err(sp(key), "must be at least 1 byte"),
            Some(b) if b > 1 << 50 => err(sp(key), "must be at most 2^50 bytes"),
            Some(_) => Ok(()),
        }
    };
    match sizes.dist {
        DistName::Fixed => need("bytes", sizes.bytes.map(|b| b.0))?,
        DistName::Exponential => need("mean", sizes.mean.map(|b| b.0))?,
        DistName::Pareto => {
            need("mean", sizes.mean.map(|b| b.0))?;
            let Some(shape) = sizes.shape else { return err(sp("shape"), "dist = \"pareto\" needs shape (the tail index α, above 1)") };
            if !(shape.is_finite() && shape > 1.0 && shape <= 100.0) {
                return err(sp("shape"), format!("{shape} is out of range (1, 100]: the mean is finite only above 1"));
            }
            if let Some(m) = sizes.max {
                need("max", Some(m.0))?;
            }
        }
        DistName::Cdf => {}
    }
    size_dist(sizes).or_else(|(key, msg)| err(sp(key), msg))?;
    Ok(())
}

/// Resolve flow `i`'s `[flows.workload]`.
pub(super) fn resolve_workload(i: usize, f: &FlowSpec) -> Res<ResolvedWorkload> {
    let p = |x: &str| format!("flows[{i}].workload.{x}");
    let Some(w) = &f.workload else {
        return err(format!("flows[{i}].workload"), "a workload flow needs its table: workload = { flows = …, rate = … (or load = …), sizes = { dist = … } }");
    };
    let Some(flows) = w.flows else {
        return err(p("flows"), "required: how many flows the workload makes");
    };
    if flows == 0 || flows > MAX_FLOWS {
        return err(p("flows"), format!("{flows} is out of range (1..={MAX_FLOWS})"));
    }
    match (w.rate, w.load) {
        (Some(_), Some(_)) => return err(p("load"), "give rate (flows per second) or load, not both"),
        (None, None) => return err(p("rate"), "required: arrivals per second (rate = …) or the offered load (load = …)"),
        (Some(r), None) if !(r.is_finite() && r > 0.0 && r <= 1e9) => return err(p("rate"), format!("{r} is out of range (0, 1e9] flows per second")),
        (None, Some(l)) if !(l.is_finite() && l > 0.0 && l <= 10.0) => return err(p("load"), format!("{l} is out of range (0, 10]")),
        _ => {}
    }
    let Some(sizes) = &w.sizes else {
        return err(p("sizes"), "required: sizes = { dist = \"fixed\" | \"exponential\" | \"pareto\" | \"cdf\", … }");
    };
    check_sizes(sizes, &format!("flows[{i}].workload.sizes"))?;
    let write_size = w.write_size.unwrap_or(Size(128 * 1024));
    if write_size.0 == 0 {
        return err(p("write_size"), "must be at least 1 byte");
    }
    Ok(ResolvedWorkload { flows, arrivals: w.arrivals.unwrap_or_default(), rate: w.rate, load: w.load, sizes: sizes.clone(), pairs: w.pairs.unwrap_or_default(), write_size })
}
