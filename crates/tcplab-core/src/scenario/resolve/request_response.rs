//! `[flows.request_response]` resolved: the request size, the response sizes (checked as
//! `workload.sizes`), the arrivals with their rate or think time, and the number of requests,
//! every value checked with an error naming its key.

use serde::Serialize;

use super::tcp::ResolvedTcp;
use super::workload::{check_sizes, size_dist};
use super::{err, Res};
use crate::app::request_response::RequestArrivals;
use crate::app::workload::{Arrivals, SizeDist};
use crate::scenario::spec::{Dur, FlowSpec, RequestArrivalsName, Size, SizesSpec};
use crate::units::SimDuration;

/// Request/response connections: the table and the connections' settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RequestResponseTraffic {
    /// `[flows.request_response]`, resolved.
    pub request_response: ResolvedRequestResponse,
    /// The connections' settings.
    pub tcp: ResolvedTcp,
}

/// `[flows.request_response]` with every default written out.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedRequestResponse {
    /// Request payload bytes (default 100B).
    pub request: Size,
    /// The response sizes, with the keys of their family only.
    pub responses: SizesSpec,
    /// The arrivals (default `"poisson"`).
    pub arrivals: RequestArrivalsName,
    /// Requests per second per connection (open loop).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate: Option<f64>,
    /// The think time (closed loop; default 0s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub think: Option<Dur>,
    /// Requests per connection; none: until the flow's stop or the run's end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
}

/// The most requests one connection makes (far beyond any run).
pub const MAX_MESSAGES: u64 = 1_000_000_000;

/// The largest request.
const MAX_REQUEST: u64 = 1 << 20;

impl ResolvedRequestResponse {
    /// The response size distribution.
    pub fn response_dist(&self) -> SizeDist {
        size_dist(&self.responses).expect("checked when resolving")
    }

    /// When the requests come.
    pub fn request_arrivals(&self) -> RequestArrivals {
        match self.arrivals {
            RequestArrivalsName::Poisson => RequestArrivals::Open(Arrivals::Poisson { rate: self.rate.expect("checked") }),
            RequestArrivalsName::Periodic => RequestArrivals::Open(Arrivals::Periodic { rate: self.rate.expect("checked") }),
            RequestArrivalsName::Closed => RequestArrivals::Closed { think: self.think.map_or(SimDuration::ZERO, |d| d.0) },
        }
    }
}

/// Resolve flow `i`'s `[flows.request_response]`; `tcp` is the connections' resolved settings
/// (a request must fit their send buffer).
pub(super) fn resolve_request_response(i: usize, f: &FlowSpec, tcp: &ResolvedTcp) -> Res<ResolvedRequestResponse> {
    let p = |x: &str| format!("flows[{i}].request_response.{x}");
    let Some(r) = &f.request_response else {
        return err(
            format!("flows[{i}].request_response"),
            "a request-response flow needs its table: request_response = { rate = … (or arrivals = \"closed\"), responses = { dist = … } }",
        );
    };
    let request = r.request.unwrap_or(Size(100));
    if request.0 == 0 || request.0 > MAX_REQUEST {
        return err(p("request"), format!("{} bytes is out of range (1B..=1MiB)", request.0));
    }
    if request.0 > tcp.settings.sndbuf.0 {
        return err(p("request"), format!("{} bytes do not fit the connection's send buffer (tcp.sndbuf = {} bytes)", request.0, tcp.settings.sndbuf.0));
    }
    let arrivals = r.arrivals.unwrap_or_default();
    match (arrivals, r.rate, r.think) {
        (RequestArrivalsName::Closed, Some(_), _) => return err(p("rate"), "not with arrivals = \"closed\" (each request follows the last answer; set think)"),
        (RequestArrivalsName::Poisson | RequestArrivalsName::Periodic, _, Some(_)) => return err(p("think"), "only with arrivals = \"closed\""),
        (RequestArrivalsName::Poisson | RequestArrivalsName::Periodic, None, _) => return err(p("rate"), "required: requests per second on each connection"),
        (_, Some(rate), _) if !(rate.is_finite() && rate > 0.0 && rate <= 1e9) => return err(p("rate"), format!("{rate} is out of range (0, 1e9] requests per second")),
        _ => {}
    }
    if r.messages.is_some_and(|m| m == 0 || m > MAX_MESSAGES) {
        return err(p("messages"), format!("{} is out of range (1..={MAX_MESSAGES})", r.messages.unwrap_or(0)));
    }
    let Some(responses) = &r.responses else {
        return err(p("responses"), "required: responses = { dist = \"fixed\" | \"exponential\" | \"pareto\" | \"cdf\", … }");
    };
    check_sizes(responses, &p("responses"))?;
    let think = match arrivals {
        RequestArrivalsName::Closed => Some(r.think.unwrap_or(Dur(SimDuration::ZERO))),
        _ => None,
    };
    Ok(ResolvedRequestResponse { request, responses: responses.clone(), arrivals, rate: r.rate, think, messages: r.messages })
}
