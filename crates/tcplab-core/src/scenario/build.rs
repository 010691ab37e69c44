//! Construction of the simulation from a resolved scenario (`scenario::resolve` fills every
//! default and checks every value first). What is left to fail here is only what needs the
//! network built: routes, a CBR source faster than its host's link, queue names, capture files.

use std::collections::BTreeMap;
use std::path::Path;

use crate::app::{Application, BlockReader, BlockServer, BulkSender, CbrSource, Sink, Socket};
use crate::engine::SeedTree;
use crate::net::atm_port::{AtmPortConfig, CbrUnit, Discard};
use crate::net::discipline::{DropTail, EcnMarking, QueueDiscipline, StrictPriority};
use crate::net::harmonizer::{Harmonizer, HarmonizerConfig};
use crate::net::impair::ImpairConfig;
use crate::net::link_layer::LinkLayer;
use crate::net::pipe::Pipe;
use crate::net::route::{Graph, NodeId, NodeRole};
use crate::scenario::resolve::{block_read_names, err, member_name, MonitorKey, Res, ResolvedAhtcp, ResolvedScenario, ResolvedVariant, TracedQueues, Traffic};
use crate::scenario::spec::{CbrUnitName, DiscardName, LinkLayerSpec, QueueSpec, StopSpec, UnmarkableName};
use crate::scenario::spec::{TargetsName, ThresholdRuleName};
use crate::scenario::ScenarioError;
use crate::sim::{AhtcpMonitor, Coordinator, Flow, FlowEngine, FlowInfo, Simulation, StopRule, Tap, TcpFlow, ThresholdRule, UdpFlow};
use crate::tcp::ahtcp::{AhtcpReceiver, AhtcpSender};
use crate::tcp::{Connection, Endpoint};
use crate::trace::pcap::{host_address, PcapWriter, WireIdentity};
use crate::units::{QueueLimit, SimDuration, SimTime};

fn queue_of(q: &QueueSpec) -> Box<dyn QueueDiscipline> {
    match q {
        QueueSpec::Limit(l) => Box::new(DropTail::new(l.0, None)),
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
fn atm_port_of(q: &QueueSpec, line: crate::units::BitRate) -> Option<AtmPortConfig> {
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

/// Routes between hosts, each computed once (with the source's processing stage in front).
struct Routes<'a> {
    graph: &'a Graph,
    host_stage: &'a BTreeMap<NodeId, crate::net::PipeId>,
    names_by_node: &'a BTreeMap<NodeId, &'a str>,
    cache: BTreeMap<(NodeId, NodeId), crate::net::RouteId>,
}

impl Routes<'_> {
    /// The route from `a` to `b` (for `flows[flow]`'s messages).
    fn get(&mut self, a: NodeId, b: NodeId, sim: &mut Simulation, flow: usize) -> Res<crate::net::RouteId> {
        if let Some(&id) = self.cache.get(&(a, b)) {
            return Ok(id);
        }
        let Some(mut pipes) = self.graph.route(a, b) else {
            return err(format!("flows[{flow}]"), format!("no path from '{}' to '{}'", self.names_by_node[&a], self.names_by_node[&b]));
        };
        if let Some(&stage) = self.host_stage.get(&a) {
            pipes.insert(0, stage);
        }
        let id = sim.add_route(pipes);
        self.cache.insert((a, b), id);
        Ok(id)
    }
}

/// A TCP flow's two endpoints, with AHTCP's policies when it runs (`sender`: the end that
/// sends the data); each end's randomised RTO (if any) draws from a stream of its own,
/// `flows/<name>/rto/<end>`.
/// With `timer_ticks`, each end's clock ticks fall at its host's phase, drawn once per host
/// from `hosts/<host>/clock`, uniform in [0, 1 s) (1 s holds whole 200 ms and 500 ms ticks).
fn tcp_flow(cfg: &crate::tcp::TcpConfig, ahtcp: Option<&ResolvedAhtcp>, sender: usize, seeds: &SeedTree, name: &str, hosts: [&str; 2]) -> TcpFlow {
    let conn = |end: usize| {
        let mut c = Connection::new(cfg.clone());
        if cfg.rto.randomize > 0.0 {
            c.seed_rto(seeds.stream(&format!("flows/{name}/rto/{end}")));
        }
        if cfg.timer_ticks {
            let u = seeds.stream(&format!("hosts/{}/clock", hosts[end])).next_f64();
            c.set_clock_phase(SimDuration((u * 1e12) as u64));
        }
        c
    };
    let Some(a) = ahtcp else {
        return TcpFlow::new(conn(0), conn(1));
    };
    let c = a.config();
    let tx = Endpoint::with_variant(conn(sender), Box::new(AhtcpSender::new(&c)));
    let rx = Endpoint::with_variant(conn(1 - sender), Box::new(AhtcpReceiver::new(&c)));
    if sender == 0 {
        TcpFlow::with_endpoints(tx, rx)
    } else {
        TcpFlow::with_endpoints(rx, tx)
    }
}

fn ahtcp_of(tcp: &crate::scenario::resolve::ResolvedTcp) -> Option<ResolvedAhtcp> {
    match tcp.variant {
        ResolvedVariant::Ahtcp { ahtcp } => Some(ahtcp),
        ResolvedVariant::None => None,
    }
}

/// One AHTCP monitor per receiving host, over all its AHTCP connections.
#[derive(Default)]
struct Monitors {
    by_host: BTreeMap<String, (MonitorKey, AhtcpMonitor)>,
}

impl Monitors {
    /// End `end` of flow `flow` receives AHTCP data at `host` (declared by `flows[index]`).
    fn join(&mut self, host: &str, flow: usize, end: usize, a: &ResolvedAhtcp, index: usize) -> Res<()> {
        let key = a.monitor_key();
        let m = self.by_host.entry(host.to_string()).or_insert_with(|| {
            let quiet = match a.targets {
                TargetsName::Stalled => a.samples,
                TargetsName::StalledSample => 1,
                TargetsName::Incomplete => 0,
            };
            let rule = match (a.threshold_rule, a.threshold) {
                (ThresholdRuleName::Fixed, Some(t)) => ThresholdRule::Fixed(t.0.bps() as f64),
                (ThresholdRuleName::Fixed, None) => unreachable!("resolution requires the fixed rule's threshold"),
                (ThresholdRuleName::Peak, _) => ThresholdRule::Peak { fraction: a.peak_fraction, window: (a.peak_window.0.as_ps() / a.interval.0.as_ps()).max(1) as usize },
            };
            (key, AhtcpMonitor::new(a.interval.0, a.samples as usize, rule, quiet))
        });
        if m.0 != key {
            return err(
                format!("flows[{index}].tcp.ahtcp"),
                format!("host '{host}' measures its throughput once for all its AHTCP connections; their threshold, interval, samples and targets must agree"),
            );
        }
        m.1.watch(flow, end);
        Ok(())
    }
}

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

    let mut graph = Graph::new();
    let mut node_of: BTreeMap<&str, NodeId> = BTreeMap::new();
    // Every host by name, a group's members one by one.
    let host_names: Vec<(String, &crate::scenario::resolve::ResolvedHost)> = r.hosts.iter().flat_map(|h| h.host_names().into_iter().map(move |n| (n, h))).collect();
    let groups: BTreeMap<&str, u32> = r.hosts.iter().filter_map(|h| h.count.map(|n| (h.name.as_str(), n))).collect();
    let members = |name: &str| -> Vec<String> {
        match groups.get(name) {
            Some(&n) => (0..n).map(|k| member_name(name, k)).collect(),
            None => vec![name.to_string()],
        }
    };
    for (n, _) in &host_names {
        node_of.insert(n, graph.add_node(NodeRole::Host));
    }
    for s in &r.switches {
        node_of.insert(&s.name, graph.add_node(NodeRole::Switch));
    }
    for e in &r.emulators {
        node_of.insert(&e.name, graph.add_node(NodeRole::Switch));
    }
    let mut queue_names: BTreeMap<String, crate::net::PipeId> = BTreeMap::new();
    let mut link_pipes: BTreeMap<(String, String), crate::net::PipeId> = BTreeMap::new();
    // ATM ports and the scenario path of each (their inputs are known once the routes are).
    let mut atm_ports: Vec<(crate::net::PipeId, String)> = Vec::new();
    // A group's link is one link per member.
    let links: Vec<(String, String, &crate::scenario::resolve::ResolvedLink)> =
        r.links.iter().flat_map(|l| members(&l.between[0]).into_iter().flat_map(move |a| members(&l.between[1]).into_iter().map(move |b| (a.clone(), b, l)))).collect();
    for (a, b, l) in &links {
        let delay = l.delay.0;
        let link = match l.link_layer {
            LinkLayerSpec::Ip => match l.framing.0 as u32 {
                0 => LinkLayer::Ip,
                b => LinkLayer::Framing(b),
            },
            LinkLayerSpec::Aal5 => LinkLayer::AAL5_LLC,
            LinkLayerSpec::Aal5VcMux => LinkLayer::AAL5_VC_MUX,
        };
        let mk = |from: &str, to: &str, q: &QueueSpec| {
            let p = Pipe::new(format!("{from}->{to}"), Some(l.rate.0), delay, 0.0, seeds.stream(&format!("links/{from}->{to}")), queue_of(q)).with_link_layer(link);
            match atm_port_of(q, l.rate.0) {
                Some(cfg) => p.with_atm_port(cfg),
                None => p,
            }
        };
        let (a, b) = (&a.to_string(), &b.to_string());
        let ab = sim.add_pipe(mk(a, b, &l.queue_a), true);
        let ba = sim.add_pipe(mk(b, a, &l.queue_b), true);
        let index = r.links.iter().position(|x| std::ptr::eq(x, *l)).expect("a resolved link");
        for (pipe, q, side) in [(ab, &l.queue_a, "queue_a"), (ba, &l.queue_b, "queue_b")] {
            if atm_port_of(q, l.rate.0).is_some() {
                atm_ports.push((pipe, format!("links[{index}].{side}")));
            }
        }
        queue_names.insert(format!("{a}->{b}"), ab);
        queue_names.insert(format!("{b}->{a}"), ba);
        link_pipes.entry((a.clone(), b.clone())).or_insert(ab);
        link_pipes.entry((b.clone(), a.clone())).or_insert(ba);
        graph.add_link(node_of[a.as_str()], node_of[b.as_str()], ab, ba);
    }
    let names_by_node: BTreeMap<NodeId, &str> = node_of.iter().map(|(k, v)| (*v, *k)).collect();
    for e in &r.emulators {
        let n = node_of[e.name.as_str()];
        let nb: Vec<NodeId> = graph.neighbours(n).collect();
        let (n0, n1) = (names_by_node[&nb[0]], names_by_node[&nb[1]]);
        let (delay, loss) = (e.delay.0, e.loss);
        let mut mk = |from: &str, to: &str| {
            let name = format!("{}:{from}->{to}", e.name);
            let (rate, q) = match &e.rate_limit {
                Some(l) => (Some(l.rate.0), queue_of(&l.queue)),
                None => (None, Box::new(DropTail::new(QueueLimit::Unlimited, None)) as Box<dyn QueueDiscipline>),
            };
            let mut pipe = Pipe::new(name.clone(), rate, delay, loss, seeds.stream(&format!("emulators/{name}/loss")), q);
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
                queue_names.insert(name, id);
            }
            id
        };
        let p01 = mk(n0, n1);
        let p10 = mk(n1, n0);
        graph.set_role(n, NodeRole::Emulator { pipes: [p01, p10] });
    }

    // Traces.
    if let Some(d) = r.trace.throughput_interval {
        sim.trace_throughput(d.0);
    }
    if r.trace.cwnd {
        sim.trace_cwnd();
    }
    if r.trace.events {
        sim.trace_events();
    }
    if r.trace.milestones {
        sim.trace_milestones();
    }
    match &r.trace.queues {
        TracedQueues::All => {
            for p in sim.queue_pipes.clone() {
                sim.trace_queue(p);
            }
        }
        TracedQueues::Names(list) => {
            for (i, n) in list.iter().enumerate() {
                let Some(&p) = queue_names.get(n) else {
                    let known: Vec<&str> = queue_names.keys().map(|s| s.as_str()).collect();
                    return err(format!("trace.queues[{i}]"), format!("no queue named '{n}' (queues: {})", known.join(", ")));
                };
                sim.trace_queue(p);
            }
        }
    }

    // Taps.
    for (i, t) in r.taps.iter().enumerate() {
        let [a, b] = &t.link;
        let dir = t.direction.as_str();
        // The link's directions, every member's when an end is a group.
        let mut dirs: Vec<(String, String)> = Vec::new();
        for x in members(a) {
            for y in members(b) {
                if dir == "both" || dir == a {
                    dirs.push((x.clone(), y.clone()));
                }
                if dir == "both" || dir == b {
                    dirs.push((y.clone(), x.clone()));
                }
            }
        }
        let pipes: Vec<(crate::net::PipeId, u32)> = dirs.iter().enumerate().map(|(k, d)| (link_pipes[d], k as u32)).collect();
        let resolution_ps = t.resolution.0.as_ps();
        let writer = match (t.pcap, capture_dir) {
            (true, Some(dir)) => {
                let ifaces: Vec<(String, u64)> =
                    pipes.iter().map(|(p, _)| (sim.fabric.pipes[p.0 as usize].name.clone(), sim.fabric.pipes[p.0 as usize].egress().rate().map_or(0, |r| r.bps()))).collect();
                let path = dir.join(format!("{}.pcapng", t.name));
                Some(PcapWriter::create(&path, &ifaces, resolution_ps).map_err(|e| ScenarioError::new(format!("taps[{i}]"), format!("cannot create {}: {e}", path.display())))?)
            }
            _ => None,
        };
        let tap = Tap { name: t.name.clone(), writer, record_trace: t.trace, resolution_ps, packets: 0 };
        sim.add_tap(tap, &pipes);
    }

    // Host processing stages (jitter), spliced in front of every route leaving the host.
    let mut host_stage: BTreeMap<NodeId, crate::net::PipeId> = BTreeMap::new();
    for (name, h) in &host_names {
        let j = h.jitter.0;
        if j > SimDuration::ZERO {
            let stage = format!("{name}:processing");
            let pipe =
                Pipe::new(stage, None, SimDuration::ZERO, 0.0, seeds.stream(&format!("hosts/{name}/jitter")), Box::new(DropTail::new(QueueLimit::Unlimited, None))).with_jitter(j);
            host_stage.insert(node_of[name.as_str()], sim.add_pipe(pipe, false));
        }
    }
    let mut start_skew: BTreeMap<&str, (SimDuration, crate::engine::Rng)> =
        host_names.iter().map(|(n, h)| (n.as_str(), (h.start_skew.0, seeds.stream(&format!("hosts/{n}/start"))))).collect();
    let mut late = |host: &str| -> SimDuration {
        let (skew, rng) = start_skew.get_mut(host).expect("a flow's hosts are hosts");
        if *skew > SimDuration::ZERO {
            SimDuration(rng.below(skew.as_ps()))
        } else {
            SimDuration::ZERO
        }
    };

    // Flows.
    let host_index: BTreeMap<&str, u32> = host_names.iter().enumerate().map(|(i, (n, _))| (n.as_str(), i as u32)).collect();
    let mut monitors = Monitors::default();
    let mut routes = Routes { graph: &graph, host_stage: &host_stage, names_by_node: &names_by_node, cache: BTreeMap::new() };
    let wire = |id: u32, name: &str, src: &str, dst: &str| {
        let (sip, smac) = host_address(host_index[src]);
        let (dip, dmac) = host_address(host_index[dst]);
        let mut isn = seeds.stream(&format!("flows/{name}/isn"));
        WireIdentity { ip: [sip, dip], mac: [smac, dmac], port: [32_768 + (id % 28_000) as u16, 5001], isn: [isn.next_u64() as u32, isn.next_u64() as u32], wscale: [0, 0] }
    };
    for (i, f) in r.flows.iter().enumerate() {
        if let Traffic::BlockRead(b) = &f.traffic {
            let clients = members(&f.src);
            let servers = &members(&f.dst)[..b.servers as usize];
            let names = block_read_names(&f.name, clients.len(), groups.contains_key(f.src.as_str()), b.servers);
            let cfg = b.tcp.config();
            let ahtcp = ahtcp_of(&b.tcp);
            for (client, names) in clients.iter().zip(names) {
                let start = SimTime::ZERO + f.start.0 + late(client);
                let mut sockets = Vec::with_capacity(servers.len());
                for (server, name) in servers.iter().zip(names) {
                    let (c, s) = (node_of[client.as_str()], node_of[server.as_str()]);
                    let fwd = routes.get(c, s, &mut sim, i)?;
                    let rev = routes.get(s, c, &mut sim, i)?;
                    let id = sim.flows.len() as u32;
                    // The client (end 0) receives the data, the server (end 1) sends it.
                    let t = tcp_flow(&cfg, ahtcp.as_ref(), 1, &seeds, &name, [client, server]);
                    if let Some(a) = &ahtcp {
                        monitors.join(client, id as usize, 0, a, i)?;
                    }
                    let info = FlowInfo { name: name.clone(), src: client.clone(), dst: server.clone(), kind: "tcp", cc: cfg.cc.name(), start, download: true, background: false };
                    let w = wire(id, &name, client, server);
                    sim.add_flow(Flow::new(info, [fwd, rev], f.class, FlowEngine::Tcp(Box::new(t))), w);
                    let server_socket = Socket::new(id, 1);
                    sim.add_app(Application::BlockServer(BlockServer::new(server_socket, b.sru.0, b.request.0)), &[server_socket], None);
                    sockets.push(Socket::new(id, 0));
                }
                let reader = BlockReader::new(sockets.clone(), b.sru.0, b.request.0, b.blocks);
                sim.add_app(Application::BlockReader(reader), &sockets, Some(start));
            }
            continue;
        }
        let (s, d) = (node_of[f.src.as_str()], node_of[f.dst.as_str()]);
        let fwd = routes.get(s, d, &mut sim, i)?;
        if let Traffic::UdpCbr(udp) = &f.traffic {
            let rate = udp.rate;
            // A host cannot put datagrams on the wire faster than its own link (the first rated
            // pipe of its route); a faster source would only be dropped at its own NIC, at up
            // to 10^12 events per simulated second, which looks like a hang.
            let nic = sim.route_pipes(fwd).iter().find_map(|&q| sim.fabric.pipes[q.0 as usize].egress().rate());
            if let Some(nic) = nic.filter(|&nic| rate.0 > nic) {
                return err(format!("flows[{i}].rate"), format!("{} is faster than the link out of '{}' ({nic}); a host cannot send faster than its interface", rate.0, f.src));
            }
        }
        let rev = routes.get(d, s, &mut sim, i)?;
        let count = f.count;
        for k in 0..count {
            let name = if count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
            let start = SimTime::ZERO + f.start.0 + late(&f.src);
            let stop_at = f.stop.map(|d| SimTime::ZERO + d.0);
            let id = sim.flows.len() as u32;
            let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
            // The flow's applications: a bulk sender and a sink, or a CBR source.
            let (engine, cc, apps, kind) = match &f.traffic {
                Traffic::Tcp(tcp) => {
                    let cfg = tcp.tcp.config();
                    let cc = cfg.cc.name();
                    let app = BulkSender::new(src, tcp.write_size.0, tcp.bytes.map(|b| b.0), stop_at);
                    let ahtcp = ahtcp_of(&tcp.tcp);
                    if let Some(a) = &ahtcp {
                        monitors.join(&f.dst, id as usize, 1, a, i)?;
                    }
                    let t = tcp_flow(&cfg, ahtcp.as_ref(), 0, &seeds, &name, [&f.src, &f.dst]);
                    (FlowEngine::Tcp(Box::new(t)), cc, vec![Application::Bulk(app), Application::Sink(Sink::new(dst))], "tcp")
                }
                Traffic::UdpCbr(udp) => {
                    let app = CbrSource { socket: src, rate: udp.rate.0, packet_size: udp.packet_size.0 as u32, start, stop_at, sent: 0 };
                    (FlowEngine::Udp(UdpFlow::default()), "none", vec![Application::Cbr(app)], "udp-cbr")
                }
                Traffic::BlockRead(_) => unreachable!("block reads are built above"),
            };
            let w = wire(id, &name, &f.src, &f.dst);
            let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind, cc, start, download: false, background: f.background };
            sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), w);
            for app in apps {
                // The sender opens the flow at its start; the sink waits for it.
                let (socket, start) = match &app {
                    Application::Sink(_) => (dst, None),
                    _ => (src, Some(start)),
                };
                sim.add_app(app, &[socket], start);
            }
        }
    }
    // Each ATM port learns the cell time of the link that feeds it; a port fed by several
    // links would need its frames begun at their first cells, which is not modelled yet.
    for (p, path) in &atm_ports {
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
    for m in monitors.by_host.into_values() {
        sim.add_monitor(m.1);
    }
    // Coordinators, over the expanded flow names.
    for c in &r.coordinators {
        let mut ids = Vec::new();
        for name in &c.flows {
            for (i, f) in sim.flows.iter().enumerate() {
                let base = f.info.name.rsplit_once('.').map(|(b, _)| b);
                if &f.info.name == name || base == Some(name.as_str()) {
                    ids.push(crate::net::FlowId(i as u32));
                }
            }
        }
        sim.add_coordinator(Coordinator { flows: ids, interval: c.interval.0, tolerance: c.tolerance, actions: 0 });
    }
    Ok(sim)
}
