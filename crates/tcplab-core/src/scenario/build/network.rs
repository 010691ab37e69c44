//! The network of a scenario: hosts, switches and emulators as graph nodes; each link as two
//! pipes (a group's link as one per member); each emulator as two pipes spliced into the routes
//! that cross it; the hosts' processing stages; routes; and the cell rate feeding each ATM port.

use std::collections::BTreeMap;

use crate::engine::rng::fnv1a64;
use crate::engine::SeedTree;
use crate::flow::FlowEngine;
use crate::net::atm_port::{AtmPortConfig, CbrUnit, Discard};
use crate::net::discipline::{Codel, CodelRule, DropTail, EcnMarking, FqCodel, Pie, QueueDiscipline, Red, StrictPriority};
use crate::net::ecmp::{self, FiveTuple};
use crate::net::harmonizer::{Harmonizer, HarmonizerConfig};
use crate::net::impair::ImpairConfig;
use crate::net::link_layer::LinkLayer;
use crate::net::pipe::Pipe;
use crate::net::route::{Graph, NodeId, NodeRole};
use crate::net::{PipeId, RouteId};
use crate::scenario::resolve::{aqm, err, member_name, Res, ResolvedHost, ResolvedScenario};
use crate::scenario::spec::{AqmName, CbrUnitName, DiscardName, LinkLayerSpec, QueueSpec, UnmarkableName};
use crate::sim::Simulation;
use crate::trace::pcap::WireIdentity;
use crate::units::{BitRate, QueueLimit, SimDuration};

/// The built network: what observers, flows and routes look pipes and nodes up in.
pub(super) struct Network<'r> {
    pub graph: Graph,
    /// Every host (a group's members one by one), switch and emulator by name.
    pub node_of: BTreeMap<String, NodeId>,
    pub names_by_node: BTreeMap<NodeId, String>,
    /// Every host by name, a group's members one by one, with its resolved table.
    pub host_names: Vec<(String, &'r ResolvedHost)>,
    /// Host groups and their sizes.
    pub groups: BTreeMap<String, u32>,
    /// Every queue by name (`"a->b"`, `"emu:a->b"`).
    pub queue_names: BTreeMap<String, PipeId>,
    /// Each direction of every link by its ends.
    pub link_pipes: BTreeMap<(String, String), PipeId>,
    /// ATM ports and the scenario path of each (their inputs are known once the routes are).
    pub atm_ports: Vec<(PipeId, String)>,
    /// Hosts' processing stages (jitter), spliced in front of every route leaving the host.
    pub host_stage: BTreeMap<NodeId, PipeId>,
    /// With equal-cost multipath, the seed every switch's hash is keyed with (drawn from the
    /// stream `routing/ecmp`).
    pub ecmp: Option<u64>,
}

impl Network<'_> {
    /// The hosts a name stands for: a group's members, or the host itself.
    pub fn members(&self, name: &str) -> Vec<String> {
        match self.groups.get(name) {
            Some(&n) => (0..n).map(|k| member_name(name, k)).collect(),
            None => vec![name.to_string()],
        }
    }
}

/// The queue discipline a queue spec describes, for the queue named `name` on a line of
/// `rate` (an AQM draws from the stream `queues/<name>/aqm`).
fn queue_of(q: &QueueSpec, name: &str, rate: Option<BitRate>, seeds: &SeedTree) -> Box<dyn QueueDiscipline> {
    match q {
        QueueSpec::Limit(l) => Box::new(DropTail::new(l.0, None)),
        QueueSpec::Table(t) if t.aqm.is_some() => {
            let limit = t.limit.map(|l| l.0).or_else(|| t.aqm.and_then(aqm::default_limit)).expect("resolution gives an AQM queue its limit");
            let rng = || seeds.stream(&format!("queues/{name}/aqm"));
            match t.aqm.expect("an AQM") {
                AqmName::Red => Box::new(Red::new(limit, &aqm::red(t), rate, rng())),
                AqmName::Codel => Box::new(Codel::new(limit, CodelRule::from(&aqm::codel(t)))),
                AqmName::FqCodel => Box::new(FqCodel::new(limit, &aqm::fq_codel(t), rng().next_u64())),
                AqmName::Pie => Box::new(Pie::new(limit, &aqm::pie(t), rng())),
            }
        }
        QueueSpec::Table(t) => {
            let marking = t.ecn_threshold.map(|k| EcnMarking { threshold: k.0, drop_unmarkable: t.ecn_unmarkable.unwrap_or_default() == UnmarkableName::Drop });
            match (&t.limit, &t.classes) {
                (_, Some(c)) => Box::new(StrictPriority::new(&c.iter().map(|l| l.0).collect::<Vec<_>>(), marking)),
                (Some(l), None) => Box::new(DropTail::new(l.0, marking)),
                // An ATM port replaces the queue (`atm_port_of`).
                (None, None) => Box::new(DropTail::new(QueueLimit::Unlimited, marking)),
            }
        }
    }
}

/// The ATM port a queue table describes on a link of `line` cell rate, if it is one.
fn atm_port_of(q: &QueueSpec, line: BitRate) -> Option<AtmPortConfig> {
    let QueueSpec::Table(t) = q else { return None };
    let cells = t.cells?;
    Some(AtmPortConfig {
        line_bps: line.bps(),
        ubr_buffer: cells,
        cbr_bps: t.cbr.map_or(0, |r| r.0.bps()),
        cbr_unit: match t.cbr_unit.unwrap_or_default() {
            CbrUnitName::Cell => CbrUnit::Cell,
            CbrUnitName::Payload => CbrUnit::Payload,
        },
        cbr_burst: t.cbr_burst.unwrap_or(1),
        discard: match t.discard.unwrap_or_default() {
            DiscardName::TailDrop => Discard::TailDrop,
            DiscardName::Ppd => Discard::Ppd,
            DiscardName::Epd => Discard::Epd { threshold: t.epd_threshold.expect("resolution requires EPD's threshold") },
        },
    })
}

/// Nodes, links and emulators (in this order: pipe ids follow it).
pub(super) fn build<'r>(r: &'r ResolvedScenario, seeds: &SeedTree, sim: &mut Simulation) -> Network<'r> {
    let host_names: Vec<(String, &ResolvedHost)> = r.hosts.iter().flat_map(|h| h.host_names().into_iter().map(move |n| (n, h))).collect();
    let groups = r.hosts.iter().filter_map(|h| h.count.map(|n| (h.name.clone(), n))).collect();
    let mut net = Network {
        graph: Graph::new(),
        node_of: BTreeMap::new(),
        names_by_node: BTreeMap::new(),
        host_names,
        groups,
        queue_names: BTreeMap::new(),
        link_pipes: BTreeMap::new(),
        atm_ports: Vec::new(),
        host_stage: BTreeMap::new(),
        ecmp: r.routing.ecmp.then(|| seeds.stream("routing/ecmp").next_u64()),
    };
    for (n, _) in &net.host_names {
        net.node_of.insert(n.clone(), net.graph.add_node(NodeRole::Host));
    }
    for s in &r.switches {
        net.node_of.insert(s.name.clone(), net.graph.add_node(NodeRole::Switch));
    }
    for e in &r.emulators {
        net.node_of.insert(e.name.clone(), net.graph.add_node(NodeRole::Switch));
    }
    links(r, seeds, sim, &mut net);
    net.names_by_node = net.node_of.iter().map(|(k, v)| (*v, k.clone())).collect();
    emulators(r, seeds, sim, &mut net);
    net
}

fn links(r: &ResolvedScenario, seeds: &SeedTree, sim: &mut Simulation, net: &mut Network) {
    // A group's link is one link per member.
    let mut links: Vec<(String, String, usize)> = Vec::new();
    for (i, l) in r.links.iter().enumerate() {
        for a in net.members(&l.between[0]) {
            links.extend(net.members(&l.between[1]).into_iter().map(|b| (a.clone(), b, i)));
        }
    }
    for (a, b, index) in &links {
        let l = &r.links[*index];
        let link = match l.link_layer {
            LinkLayerSpec::Ip => match l.framing.0 as u32 {
                0 => LinkLayer::Ip,
                b => LinkLayer::Framing(b),
            },
            LinkLayerSpec::Aal5 => LinkLayer::AAL5_LLC,
            LinkLayerSpec::Aal5VcMux => LinkLayer::AAL5_VC_MUX,
        };
        let mk = |from: &str, to: &str, q: &QueueSpec| {
            let name = format!("{from}->{to}");
            let p = Pipe::new(name.clone(), Some(l.rate.0), l.delay.0, 0.0, seeds.stream(&format!("links/{from}->{to}")), queue_of(q, &name, Some(l.rate.0), seeds))
                .with_link_layer(link);
            match atm_port_of(q, l.rate.0) {
                Some(cfg) => p.with_atm_port(cfg),
                None => p,
            }
        };
        let ab = sim.add_pipe(mk(a, b, &l.queue_a), true);
        let ba = sim.add_pipe(mk(b, a, &l.queue_b), true);
        for (pipe, q, side) in [(ab, &l.queue_a, "queue_a"), (ba, &l.queue_b, "queue_b")] {
            if atm_port_of(q, l.rate.0).is_some() {
                net.atm_ports.push((pipe, format!("links[{index}].{side}")));
            }
        }
        net.queue_names.insert(format!("{a}->{b}"), ab);
        net.queue_names.insert(format!("{b}->{a}"), ba);
        net.link_pipes.entry((a.clone(), b.clone())).or_insert(ab);
        net.link_pipes.entry((b.clone(), a.clone())).or_insert(ba);
        net.graph.add_link(net.node_of[a.as_str()], net.node_of[b.as_str()], ab, ba);
    }
}

fn emulators(r: &ResolvedScenario, seeds: &SeedTree, sim: &mut Simulation, net: &mut Network) {
    for e in &r.emulators {
        let n = net.node_of[e.name.as_str()];
        let nb: Vec<NodeId> = net.graph.neighbours(n).collect();
        let (n0, n1) = (net.names_by_node[&nb[0]].clone(), net.names_by_node[&nb[1]].clone());
        let mut mk = |from: &str, to: &str| {
            let name = format!("{}:{from}->{to}", e.name);
            let (rate, q) = match &e.rate_limit {
                Some(l) => (Some(l.rate.0), queue_of(&l.queue, &name, Some(l.rate.0), seeds)),
                None => (None, Box::new(DropTail::new(QueueLimit::Unlimited, None)) as Box<dyn QueueDiscipline>),
            };
            let mut pipe = Pipe::new(name.clone(), rate, e.delay.0, e.loss, seeds.stream(&format!("emulators/{name}/loss")), q);
            if e.tick.0 > SimDuration::ZERO {
                pipe = pipe.with_tick(e.tick.0);
            }
            let (reorder, reorder_delay) = e.reorder.as_ref().map_or((0.0, SimDuration::ZERO), |r| (r.reorder, r.reorder_delay.0));
            if reorder > 0.0 || e.duplicate > 0.0 {
                pipe = pipe.with_impairment(ImpairConfig { reorder, reorder_delay, duplicate: e.duplicate }, seeds.stream(&format!("emulators/{name}/impair")));
            }
            if let Some(h) = e.harmonizer.as_ref().filter(|h| h.harmonize_from == from) {
                pipe =
                    pipe.with_harmonizer(Harmonizer::new(HarmonizerConfig { base_rtt: h.harmonize_rtt.0, interval: h.harmonize_interval.0, max_delay: h.harmonize_max_delay.0 }));
            }
            let id = sim.add_pipe(pipe, rate.is_some());
            if rate.is_some() {
                net.queue_names.insert(name, id);
            }
            id
        };
        let p01 = mk(&n0, &n1);
        let p10 = mk(&n1, &n0);
        net.graph.set_role(n, NodeRole::Emulator { pipes: [p01, p10] });
    }
}

/// The hosts' processing stages (jitter), spliced in front of every route leaving the host.
pub(super) fn host_stages(seeds: &SeedTree, sim: &mut Simulation, net: &mut Network) {
    for (name, h) in &net.host_names {
        let j = h.jitter.0;
        if j > SimDuration::ZERO {
            let stage = format!("{name}:processing");
            let pipe =
                Pipe::new(stage, None, SimDuration::ZERO, 0.0, seeds.stream(&format!("hosts/{name}/jitter")), Box::new(DropTail::new(QueueLimit::Unlimited, None))).with_jitter(j);
            net.host_stage.insert(net.node_of[name.as_str()], sim.add_pipe(pipe, false));
        }
    }
}

/// Each ATM port learns the cell time of the link that feeds it; a port fed by several links
/// would need its frames begun at their first cells, which is not modelled yet.
pub(super) fn atm_inputs(net: &Network, sim: &mut Simulation) -> Res<()> {
    for (p, path) in &net.atm_ports {
        let feeders = sim.fabric.feeders_of(*p);
        if !sim.fabric.ends_every_route(*p) {
            return err(
                format!("{path}.cells"),
                "this ATM port forwards to another switch; tcplab models an ATM port that feeds a host (its AAL5 reassembly happens at that host)",
            );
        }
        if feeders.len() > 1 {
            return err(format!("{path}.cells"), format!("this ATM port is fed by {} links; tcplab models a port fed by one link (any number of flows through it)", feeders.len()));
        }
        let input = feeders.first().copied().flatten().and_then(|u| {
            let up = &sim.fabric.pipes[u.0 as usize];
            up.link_layer().cells(40).and(up.egress().rate()).map(|r| r.bps())
        });
        sim.fabric.pipes[p.0 as usize].egress_mut().set_atm_input(input);
    }
    Ok(())
}

/// Routes between hosts. `get` computes one per ordered pair of hosts, once (BFS, ties by
/// link declaration order); `get_for` one per flow direction by its 5-tuple, hop by hop among
/// the equal-cost shortest paths when the scenario turns `routing.ecmp` on. Either has the
/// source's processing stage in front.
pub(super) struct Routes<'a> {
    net: &'a Network<'a>,
    cache: BTreeMap<(NodeId, NodeId), RouteId>,
    /// Routes made by `get_for`, by their pipes (flows whose hashes agree share one).
    by_pipes: BTreeMap<Vec<PipeId>, RouteId>,
    /// Hop distances to recent destinations (`Graph::distances_to`), at most
    /// `DISTANCE_CACHE` entries in all.
    distances: BTreeMap<NodeId, Vec<u32>>,
}

/// How many node distances `Routes` keeps for its destinations (4 M: 16 MB).
const DISTANCE_CACHE: usize = 1 << 22;

impl<'a> Routes<'a> {
    pub fn new(net: &'a Network<'a>) -> Self {
        Routes { net, cache: BTreeMap::new(), by_pipes: BTreeMap::new(), distances: BTreeMap::new() }
    }

    /// The route from host `a` to host `b` (for `flows[flow]`'s messages).
    pub fn get(&mut self, a: &str, b: &str, sim: &mut Simulation, flow: usize) -> Res<RouteId> {
        let (a, b) = (self.net.node_of[a], self.net.node_of[b]);
        if let Some(&id) = self.cache.get(&(a, b)) {
            return Ok(id);
        }
        let Some(mut pipes) = self.net.graph.route(a, b) else {
            return err(format!("flows[{flow}]"), format!("no path from '{}' to '{}'", self.net.names_by_node[&a], self.net.names_by_node[&b]));
        };
        if let Some(&stage) = self.net.host_stage.get(&a) {
            pipes.insert(0, stage);
        }
        let id = sim.add_route(pipes);
        self.cache.insert((a, b), id);
        Ok(id)
    }

    /// The pipes from host `a` to host `b` for the packets of 5-tuple `t` (for `flows[flow]`'s
    /// messages): with ECMP, at every node with several next hops on shortest paths, the one
    /// `ecmp::pick` gives for the run's seed, the node's salt (FNV-1a of its name) and `t`;
    /// without it, `get`'s path.
    pub fn pipes_for(&mut self, a: &str, b: &str, t: &FiveTuple, flow: usize) -> Res<Vec<PipeId>> {
        let net = self.net;
        let (a, b) = (net.node_of[a], net.node_of[b]);
        let found = match net.ecmp {
            None => net.graph.route(a, b),
            Some(seed) => {
                if !self.distances.contains_key(&b) {
                    if self.distances.len() * net.names_by_node.len() >= DISTANCE_CACHE {
                        self.distances.clear();
                    }
                    self.distances.insert(b, net.graph.distances_to(b));
                }
                let dist = &self.distances[&b];
                net.graph.route_by(a, b, dist, |node, choices| ecmp::pick(seed, t, fnv1a64(net.names_by_node[&node].as_bytes()), choices))
            }
        };
        let Some(mut pipes) = found else {
            return err(format!("flows[{flow}]"), format!("no path from '{}' to '{}'", net.names_by_node[&a], net.names_by_node[&b]));
        };
        if let Some(&stage) = net.host_stage.get(&a) {
            pipes.insert(0, stage);
        }
        Ok(pipes)
    }

    /// The route from host `a` to host `b` for the packets of 5-tuple `t` (`pipes_for`), made
    /// once per distinct path. For a flow added while the simulation runs (before the fabric
    /// is planned): give each direction its own tuple (the reverse direction `t.reversed()`).
    #[cfg_attr(not(test), allow(dead_code))] // today's flows are all routed by `ecmp_routes`
    pub fn get_for(&mut self, a: &str, b: &str, sim: &mut Simulation, flow: usize, t: &FiveTuple) -> Res<RouteId> {
        self.route_for(a, b, sim, flow, t, None)
    }

    /// `get_for`, writing a new path into route `reuse` (if given) rather than adding one.
    fn route_for(&mut self, a: &str, b: &str, sim: &mut Simulation, flow: usize, t: &FiveTuple, reuse: Option<RouteId>) -> Res<RouteId> {
        let pipes = self.pipes_for(a, b, t, flow)?;
        if let Some(&id) = self.by_pipes.get(&pipes) {
            return Ok(id);
        }
        let id = match reuse {
            Some(old) => {
                sim.fabric.set_route(old, pipes.clone());
                old
            }
            None => sim.add_route(pipes.clone()),
        };
        self.by_pipes.insert(pipes, id);
        Ok(id)
    }
}

/// Every route ECMP may give the packets from one host to another, as the tree of the
/// choices on the way: made when the network is built (so every route exists before the run),
/// walked by a flow made at run time with its 5-tuple (`pick`), which gives the route
/// `Routes::pipes_for` would.
#[derive(Clone, Debug)]
pub(super) enum RouteTree {
    /// The path is decided.
    Route(RouteId),
    /// A node with several next hops on shortest paths: its salt and each choice's subtree.
    Choice { salt: u64, branches: Vec<RouteTree> },
}

impl RouteTree {
    /// The route of the packets of `t` (`seed`: the run's ECMP seed).
    pub(super) fn pick(&self, seed: u64, t: &FiveTuple) -> RouteId {
        let mut node = self;
        loop {
            match node {
                RouteTree::Route(r) => return *r,
                RouteTree::Choice { salt, branches } => node = &branches[ecmp::pick(seed, t, *salt, branches.len())],
            }
        }
    }
}

impl Routes<'_> {
    /// The tree of every route from host `a` to host `b` (one route without ECMP).
    pub(super) fn tree(&mut self, a: &str, b: &str, sim: &mut Simulation, flow: usize) -> Res<RouteTree> {
        if self.net.ecmp.is_none() {
            return Ok(RouteTree::Route(self.get(a, b, sim, flow)?));
        }
        let (na, nb) = (self.net.node_of[a], self.net.node_of[b]);
        if !self.distances.contains_key(&nb) {
            if self.distances.len() * self.net.names_by_node.len() >= DISTANCE_CACHE {
                self.distances.clear();
            }
            self.distances.insert(nb, self.net.graph.distances_to(nb));
        }
        let dist = self.distances[&nb].clone();
        self.explore(na, nb, &dist, &mut Vec::new(), sim, flow)
    }

    /// The subtree after the choices `prefix` (by index, in the order the walk meets them).
    fn explore(&mut self, a: NodeId, b: NodeId, dist: &[u32], prefix: &mut Vec<usize>, sim: &mut Simulation, flow: usize) -> Res<RouteTree> {
        let net = self.net;
        let mut next: Option<(NodeId, usize)> = None;
        let mut i = 0;
        let found = net.graph.route_by(a, b, dist, |node, choices| {
            let k = prefix.get(i).copied().unwrap_or(0);
            if i == prefix.len() {
                next = Some((node, choices));
            }
            i += 1;
            k
        });
        let Some(mut pipes) = found else {
            return err(format!("flows[{flow}]"), format!("no path from '{}' to '{}'", net.names_by_node[&a], net.names_by_node[&b]));
        };
        match next {
            Some((node, choices)) => {
                let salt = fnv1a64(net.names_by_node[&node].as_bytes());
                let mut branches = Vec::with_capacity(choices);
                for c in 0..choices {
                    prefix.push(c);
                    branches.push(self.explore(a, b, dist, prefix, sim, flow)?);
                    prefix.pop();
                }
                Ok(RouteTree::Choice { salt, branches })
            }
            None => {
                if let Some(&stage) = net.host_stage.get(&a) {
                    pipes.insert(0, stage);
                }
                if let Some(&id) = self.by_pipes.get(&pipes) {
                    return Ok(RouteTree::Route(id));
                }
                let id = sim.add_route(pipes.clone());
                self.by_pipes.insert(pipes, id);
                Ok(RouteTree::Route(id))
            }
        }
    }
}

/// A flow end's 5-tuple: its wire identity's addresses and ports, sent by `end` (0: the
/// flow's source).
pub(super) fn five_tuple(w: &WireIdentity, end: usize, proto: u8) -> FiveTuple {
    let t = FiveTuple { src: w.ip[0], dst: w.ip[1], sport: w.port[0], dport: w.port[1], proto };
    if end == 0 {
        t
    } else {
        t.reversed()
    }
}

/// With `routing.ecmp`, give every flow direction the route its 5-tuple hashes to. The flow
/// builders route by pair of hosts before a flow's ports exist; once every flow is built (and
/// before anything reads the routes) each direction is routed again by its own tuple (from
/// the flow's wire identity; protocol UDP for a CBR flow, TCP otherwise). A pair's route is
/// rewritten in place for the first direction that used it, so none is left unused.
pub(super) fn ecmp_routes(net: &Network, sim: &mut Simulation) -> Res<()> {
    if net.ecmp.is_none() {
        return Ok(());
    }
    let mut routes = Routes::new(net);
    let mut claimed = vec![false; sim.fabric.route_count()];
    for f in 0..sim.flows.len() {
        let flow = &sim.flows[f];
        let proto = if matches!(flow.engine, FlowEngine::Udp(_)) { FiveTuple::UDP } else { FiveTuple::TCP };
        let hosts = [flow.info.src.clone(), flow.info.dst.clone()];
        let wire = sim.observers.wire_ids[f];
        for e in 0..2 {
            let old = sim.flows[f].routes[e];
            let reuse = (!claimed[old.0 as usize]).then_some(old);
            let id = routes.route_for(&hosts[e], &hosts[1 - e], sim, f, &five_tuple(&wire, e, proto), reuse)?;
            claimed[old.0 as usize] |= id == old;
            sim.flows[f].routes[e] = id;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::StopRule;
    use crate::Run;

    /// `Routes::get_for`, the call for a flow made while the simulation runs, gives each
    /// tuple the route the build gave the flow that has it (both directions), once per path.
    #[test]
    fn get_for_routes_a_tuple_as_the_build_routes_its_flow() {
        let text = r#"
name = "ls"
[run]
duration = "1s"
[routing]
ecmp = true
[[topologies]]
kind = "leaf-spine"
name = "ls"
leaves = 2
spines = 4
hosts_per_leaf = 2
host_link = { rate = "10Gbps" }
fabric_link = { rate = "40Gbps" }
[[hosts]]
name = "j"
jitter = "1us"
[[links]]
between = ["j", "ls.leaf1"]
rate = "10Gbps"
[[flows]]
name = "f"
src = "ls.h0.1"
dst = "j"
count = 24
[[flows]]
name = "u"
kind = "udp-cbr"
src = "ls.h0"
dst = "ls.h1"
cbr = { rate = "1Mbps" }
"#;
        let built = Run::from_toml(text, Some(5)).unwrap();
        let seeds = SeedTree::new(5);
        let mut sim = Simulation::new(StopRule::Duration, None, 0);
        let mut net = build(&built.resolved, &seeds, &mut sim);
        host_stages(&seeds, &mut sim, &mut net);
        let mut routes = Routes::new(&net);
        let names = |s: &Simulation, r: RouteId| s.route_pipes(r).iter().map(|p| s.fabric.pipes[p.0 as usize].name.clone()).collect::<Vec<_>>();
        for (f, flow) in built.sim.flows.iter().enumerate() {
            let proto = if flow.info.kind == "udp-cbr" { FiveTuple::UDP } else { FiveTuple::TCP };
            let t = five_tuple(&built.sim.observers.wire_ids[f], 0, proto);
            let fwd = routes.get_for(&flow.info.src, &flow.info.dst, &mut sim, f, &t).unwrap();
            let rev = routes.get_for(&flow.info.dst, &flow.info.src, &mut sim, f, &t.reversed()).unwrap();
            assert_eq!(names(&sim, fwd), names(&built.sim, flow.routes[0]), "{}", flow.info.name);
            assert_eq!(names(&sim, rev), names(&built.sim, flow.routes[1]), "{}", flow.info.name);
            assert_eq!(routes.get_for(&flow.info.src, &flow.info.dst, &mut sim, f, &t).unwrap(), fwd);
        }
        // The jittered host's processing stage leads its routes.
        let j = built.sim.flows[0].routes[1];
        assert_eq!(names(&built.sim, j)[0], "j:processing");
        assert_eq!(sim.fabric.route_count(), built.sim.fabric.route_count());
        // (After the count above: the trees add every route.) A route tree walked with a tuple gives what `get_for` gives.
        for (f, flow) in built.sim.flows.iter().enumerate() {
            let t = five_tuple(&built.sim.observers.wire_ids[f], 0, FiveTuple::TCP);
            let tree = routes.tree(&flow.info.src, &flow.info.dst, &mut sim, f).unwrap();
            let picked = tree.pick(net.ecmp.unwrap(), &t);
            let direct = routes.get_for(&flow.info.src, &flow.info.dst, &mut sim, f, &t).unwrap();
            assert_eq!(names(&sim, picked), names(&sim, direct));
        }
        let tree = routes.tree("ls.h0.0", "ls.h1.1", &mut sim, 0).unwrap();
        assert!(matches!(&tree, RouteTree::Choice { branches, .. } if branches.len() == 4), "four spines: {tree:?}");
    }
}
