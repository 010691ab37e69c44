//! `[flows.workload]` (`kind = "workload"`): TCP flows that arrive while the run goes on — a
//! Poisson (or evenly spaced) stream of transfers with sizes drawn from a distribution, each
//! between a pair of hosts drawn from the flow's `src` and `dst` (hosts or groups). Defaults
//! are written out by `resolve::workload`.

use serde::{Deserialize, Serialize};

use super::Size;

/// How flows arrive.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ArrivalsName {
    /// A Poisson process: exponential gaps, the first one after the flow's start.
    #[default]
    Poisson,
    /// Evenly spaced, the first at the flow's start.
    Periodic,
}

/// Which hosts a new flow joins.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PairsName {
    /// A source member drawn uniformly, a destination member drawn uniformly among those that
    /// are not the source host.
    #[default]
    Random,
    /// A permutation drawn once per run (a derangement when `src` and `dst` are one group):
    /// source member k always sends to member π(k) of `dst`; each flow draws its source.
    Permutation,
}

/// A flow-size distribution's family.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DistName {
    /// Every flow `bytes`.
    Fixed,
    /// Exponential with mean `mean`.
    Exponential,
    /// Pareto with mean `mean` and tail index `shape`, cut at `max`.
    Pareto,
    /// An empirical CDF: a shipped one (`cdf`) or `points`.
    Cdf,
}

/// A shipped empirical workload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CdfName {
    /// DCTCP's web search (Alizadeh et al., SIGCOMM 2010).
    WebSearch,
    /// VL2's data mining (Greenberg et al., SIGCOMM 2009).
    DataMining,
}

/// `[flows.workload.sizes]`: the flow sizes (payload bytes each flow's sender writes).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SizesSpec {
    /// The family.
    pub dist: DistName,
    /// `fixed`: the size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// `exponential`, `pareto`: the mean.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean: Option<Size>,
    /// `pareto`: the tail index α, above 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
    /// `pareto`: the largest size (a larger draw is cut to it; optional).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<Size>,
    /// `cdf`: a shipped workload, `"web-search"` or `"data-mining"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cdf: Option<CdfName>,
    /// `cdf`: the points instead, `[[bytes, probability], …]`, both non-decreasing, the last
    /// probability 1, linearly interpolated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub points: Option<Vec<[f64; 2]>>,
}

/// `[flows.workload]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    /// Flows to make, 1..=100,000 (required); arrivals after the flow's `stop` are not made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u64>,
    /// `"poisson"` (default) or `"periodic"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<ArrivalsName>,
    /// Arrivals per second, the whole workload (or `load`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Offered load instead of `rate`: the mean payload rate as a fraction of the sum of the
    /// source hosts' link rates, in (0, 10].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<f64>,
    /// The sizes (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<SizesSpec>,
    /// `"random"` (default) or `"permutation"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<PairsName>,
    /// Each sender's application write size (default 128KiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_size: Option<Size>,
}

/// When a request/response client's requests come.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RequestArrivalsName {
    /// Open loop, a Poisson process at `rate`: exponential gaps, the first after the start.
    #[default]
    Poisson,
    /// Open loop, one every 1/`rate` seconds, the first at the start.
    Periodic,
    /// Closed loop: the first at the start, each next one `think` after the last answer.
    Closed,
}

/// `[flows.request_response]` (`kind = "request-response"`): a client on each connection
/// sends requests; its server answers each with a response of a drawn size.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestResponseSpec {
    /// Payload bytes of each request, 1..=1MiB (default 100B: a small RPC or GET).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<Size>,
    /// The response sizes (required): a table as `workload.sizes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub responses: Option<SizesSpec>,
    /// `"poisson"` (default), `"periodic"` or `"closed"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arrivals: Option<RequestArrivalsName>,
    /// Requests per second on each connection (poisson, periodic: required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// Closed loop: the pause between an answer and the next request (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub think: Option<super::Dur>,
    /// Requests each connection makes (default: until the flow's `stop` or the run's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
}

/// How an on/off source's periods are drawn.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum PeriodsName {
    /// Exponential: an on/off Markov source.
    #[default]
    Exponential,
    /// Pareto with tail index `shape`: heavy-tailed bursts and silences.
    Pareto,
    /// Always the mean.
    Fixed,
}

/// `[flows.cbr.on_off]`: the source alternates on periods at `rate` with silent off periods.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OnOffSpec {
    /// Mean on period.
    pub on: super::Dur,
    /// Mean off period.
    pub off: super::Dur,
    /// `"exponential"` (default), `"pareto"` or `"fixed"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub periods: Option<PeriodsName>,
    /// `pareto`: the tail index, above 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shape: Option<f64>,
}
