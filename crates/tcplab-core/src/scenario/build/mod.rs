//! Construction of the simulation from a resolved scenario (`scenario::resolve` fills every
//! default and checks every value first). What is left to fail here is only what needs the
//! network built: routes, a CBR source faster than its host's link, queue names, capture files.
//!
//! The order of construction is `build`'s, and it fixes every pipe's, route's and flow's
//! index: the network (`network`: nodes, links, emulators), the instruments (`observe`:
//! traces, taps), the hosts' processing stages, the flows (`flows`: one builder per traffic
//! kind; TCP endpoints from `variant`, the variant factory), with `routing.ecmp` each flow
//! direction routed again by its 5-tuple (`network::ecmp_routes`), the ATM ports' inputs, and the
//! agents (`agents`: AHTCP monitors, DECP coordinators).

mod agents;
mod flows;
mod fs_copy;
mod network;
mod observe;
mod request_response;
mod reservoir;
mod variant;
mod workload;

use std::path::Path;

use crate::engine::SeedTree;
use crate::scenario::resolve::{Res, ResolvedScenario};
use crate::scenario::spec::StopSpec;
use crate::sim::{Simulation, StopRule};
use crate::units::SimTime;

/// Build the simulation from a resolved scenario. Taps write their pcapng files into
/// `capture_dir` (none are written without one).
pub fn build(r: &ResolvedScenario, seed: u64, capture_dir: Option<&Path>) -> Res<Simulation> {
    let seeds = SeedTree::new(seed);
    let stop = match r.run.stop {
        StopSpec::Duration => StopRule::Duration,
        StopSpec::FlowsDone => StopRule::FlowsDone,
        StopSpec::Idle => StopRule::Idle,
    };
    let mut sim = Simulation::new(stop, r.run.duration.map(|d| SimTime::ZERO + d.0), seeds.stream("engine/order").next_u64());
    let mut net = network::build(r, &seeds, &mut sim);
    observe::traces(r, &net, &mut sim)?;
    observe::taps(r, &net, &mut sim, capture_dir)?;
    network::host_stages(&seeds, &mut sim, &mut net);
    let mut agents = agents::Agents::default();
    flows::build(r, &net, &seeds, &mut sim, &mut agents)?;
    network::ecmp_routes(&net, &mut sim)?;
    flows::check_local_congestion(&mut sim)?;
    network::atm_inputs(&net, &mut sim)?;
    agents.install(r, &mut sim);
    sim.set_trace_budget(r.run.trace_memory.0);
    Ok(sim)
}
