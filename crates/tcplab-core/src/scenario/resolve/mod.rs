//! Resolution: every default filled in, every value and cross-reference checked, one module
//! per section. The result, a [`ResolvedScenario`], holds a value wherever the simulation
//! needs one: an `Option` is left only where "none" is itself a setting (no run duration, no
//! byte limit, no rate limit on an emulator). It serializes to the fully resolved scenario,
//! a complete scenario file that parses back, as a `spec::Scenario`, to itself.

pub mod aqm;
mod cbr;
mod cc;
mod coordinators;
mod emulators;
mod flow_matrix;
mod flows;
mod fs_copy;
mod links;
mod nodes;
mod observe;
mod request_response;
mod reservoir;
mod run;
mod tcp;
mod topology;
mod variant;
mod workload;

use serde::Serialize;

pub use crate::scenario::spec::TcpSettings;
pub use cc::ResolvedCc;
pub use coordinators::ResolvedCoordinator;
pub use emulators::{RateLimit, Reorder, ResolvedEmulator, ResolvedHarmonizer};
pub use flows::{block_read_names, BlockReadTraffic, Cbr, ResolvedFlow, TcpTraffic, Traffic, UdpCbrTraffic};
pub use fs_copy::{FsCopyTraffic, ResolvedFsCopy};
pub use links::ResolvedLink;
pub use nodes::{is_or_member_of, member_name, members, NodeKind, ResolvedHost};
pub use observe::{ResolvedTap, ResolvedTrace, TracedQueues};
pub use request_response::{RequestResponseTraffic, ResolvedRequestResponse, MAX_MESSAGES};
pub use reservoir::{reservoir_names, ReservoirTraffic, ResolvedDisk, ResolvedIscsi, ResolvedReservoir, SECTOR_BYTES};
pub use run::ResolvedRun;
pub use tcp::{hz_tick, profile_tcp, resolve_tcp, ResolvedTcp};
pub use topology::ResolvedRouting;
pub use variant::{MonitorKey, ResolvedAhtcp, ResolvedImtcp, ResolvedTrend, ResolvedVariant};
pub use workload::{ResolvedWorkload, WorkloadTraffic};

use crate::scenario::spec::{QueueSpec, Scenario, StopSpec, SwitchSpec, TcpSpec};
use crate::scenario::ScenarioError;
use crate::units::SimDuration;

pub(crate) type Res<T> = Result<T, ScenarioError>;

/// The most flows a scenario may expand to (memory: about 3.5 KB per flow plus the packets in
/// flight, `make bench-memory`; 10⁵ flows ≈ 0.4 GB before any packet).
pub const MAX_FLOWS: u64 = 100_000;

/// The shortest period of a recurring event (throughput samples, coordinators, harmonizer
/// updates): 1 µs, below one 1500-byte packet at 10 Gb/s. Shorter periods only cost events.
pub const MIN_PERIOD: SimDuration = SimDuration(1_000_000);

/// The most rows the throughput trace may reach (flows × bins): 2·10⁸ rows take ≈ 5 GB.
pub const MAX_THROUGHPUT_ROWS: u64 = 200_000_000;

/// The largest seed: seeds are in [0, 2⁶³), since the resolved scenario carries its seed as a
/// TOML integer (signed 64-bit).
pub const MAX_SEED: u64 = i64::MAX as u64;

pub(crate) fn err<T>(path: impl Into<String>, reason: impl Into<String>) -> Res<T> {
    Err(ScenarioError::new(path, reason))
}

fn check_period(path: String, d: SimDuration) -> Res<()> {
    if d < MIN_PERIOD {
        return err(path, format!("{} is shorter than the shortest period tcplab allows (1us)", crate::units::format_duration(d)));
    }
    Ok(())
}

/// The longest name of a node, flow or tap, bytes (names are copied into every trace row's
/// table and every summary).
pub const MAX_NAME: usize = 256;

/// The whole scenario, resolved. Serialized with the keys of `spec::Scenario`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedScenario {
    /// Scenario name, not empty.
    pub name: String,
    /// Free text.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Stop condition and seed.
    pub run: ResolvedRun,
    /// Defaults for every element.
    pub defaults: ResolvedDefaults,
    /// End hosts.
    pub hosts: Vec<ResolvedHost>,
    /// Switches.
    pub switches: Vec<SwitchSpec>,
    /// Delay/loss emulators.
    pub emulators: Vec<ResolvedEmulator>,
    /// Links.
    pub links: Vec<ResolvedLink>,
    /// How routes are chosen (written only when equal-cost multipath is on).
    #[serde(skip_serializing_if = "ResolvedRouting::is_default")]
    pub routing: ResolvedRouting,
    /// Observation points (header capture).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taps: Vec<ResolvedTap>,
    /// Traffic.
    pub flows: Vec<ResolvedFlow>,
    /// Remedies that coordinate parallel streams.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub coordinators: Vec<ResolvedCoordinator>,
    /// Requested traces.
    pub trace: ResolvedTrace,
}

/// `[defaults]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedDefaults {
    /// Egress queue of every link end that does not give its own (default 1000pkts).
    pub queue: QueueSpec,
    /// The TCP settings of a flow without a `tcp` table of its own.
    pub tcp: ResolvedTcp,
}

/// Fill every default and check every value and reference. Topology generators are
/// expanded first (`topology`), and an error about what they generated names their key.
pub fn resolve(sc: &Scenario) -> Res<ResolvedScenario> {
    match topology::expand(sc)? {
        None => resolve_expanded(sc),
        Some((expanded, origins)) => resolve_expanded(&expanded).map_err(|e| origins.blame(e)),
    }
}

/// `resolve` for a scenario without topology generators.
fn resolve_expanded(sc: &Scenario) -> Res<ResolvedScenario> {
    if sc.name.trim().is_empty() {
        return err("name", "must not be empty");
    }
    let run = run::resolve_run(&sc.run)?;
    let queue = sc.defaults.queue.clone().unwrap_or_else(links::default_queue);
    links::check_queue(&queue, "defaults.queue")?;
    let defaults = ResolvedDefaults { queue, tcp: resolve_tcp(&sc.defaults.tcp, &TcpSpec::default(), "defaults.tcp")? };
    let names = nodes::node_names(sc)?;
    let hosts = nodes::resolve_hosts(&sc.hosts);
    let switches = nodes::resolve_switches(&sc.switches);
    let emulators = emulators::resolve_emulators(&sc.emulators, &sc.links)?;
    let links = links::resolve_links(&sc.links, &defaults.queue, &names)?;
    links::check_total_delay(&links, &emulators)?;
    emulators::check_degree(&emulators, &sc.links)?;
    let routing = topology::resolve_routing(&sc.routing, &links)?;
    let (flows, total_flows) = flows::resolve_flows(&sc.flows, &names, &sc.defaults.tcp, &defaults.tcp, &run)?;
    let taps = observe::resolve_taps(&sc.taps, &links, &names)?;
    let coordinators = coordinators::resolve_coordinators(&sc.coordinators, &flows)?;
    let trace = observe::resolve_trace(&sc.trace, &run, total_flows)?;
    // Without a duration only the simulated-time cap (10^6 s) ends a run: an agent acting more
    // often than once a millisecond can make that cap days of work (AHTCP's client asking
    // every 10 us keeps forcing timeouts), so such intervals need run.duration.
    if run.duration.is_none() {
        let fast = |d: SimDuration| d < SimDuration::from_millis(1);
        for (i, f) in flows.iter().enumerate() {
            if let Some(ResolvedVariant::Ahtcp { ahtcp }) = f.tcp().map(|t| &t.variant) {
                if fast(ahtcp.interval.0) {
                    let at = if sc.flows[i].tcp.ahtcp.interval.is_some() { format!("flows[{i}].tcp.ahtcp.interval") } else { "defaults.tcp.ahtcp.interval".to_string() };
                    return err(
                        at,
                        format!(
                            "{} without run.duration: an agent acting more often than every 1ms can keep a run going for days of work before the 1000000s cap; set run.duration",
                            crate::units::format_duration(ahtcp.interval.0)
                        ),
                    );
                }
            }
        }
        for (i, c) in coordinators.iter().enumerate() {
            let Some(interval) = c.interval else { continue };
            if fast(interval.0) {
                return err(
                    format!("coordinators[{i}].interval"),
                    format!(
                        "{} without run.duration: an agent acting more often than every 1ms can keep a run going for days of work before the 1000000s cap; set run.duration",
                        crate::units::format_duration(interval.0)
                    ),
                );
            }
        }
    }
    // A run that stops when idle never idles while something recurs.
    if run.stop == StopSpec::Idle && run.duration.is_none() {
        if trace.throughput_interval.is_some() {
            return err("run.stop", "\"idle\" with no run.duration never ends while trace.throughput_interval samples; set run.duration");
        }
        if trace.link_usage.is_some() {
            return err("run.stop", "\"idle\" with no run.duration never ends while trace.link_usage samples; set run.duration");
        }
        if !coordinators.is_empty() {
            return err("run.stop", "\"idle\" with no run.duration never ends while a coordinator acts; set run.duration");
        }
    }
    Ok(ResolvedScenario { name: sc.name.clone(), description: sc.description.clone(), run, defaults, hosts, switches, emulators, links, routing, taps, flows, coordinators, trace })
}

#[cfg(test)]
mod tests;
