//! Construction of the simulation from a resolved scenario (`scenario::resolve` fills every
//! default and checks every value first). What is left to fail here is only what needs the
//! network built: routes, a CBR source faster than its host's link, queue names, capture files.

use std::collections::BTreeMap;
use std::path::Path;

use crate::app::{Application, BulkSender, CbrSource, Sink, Socket};
use crate::engine::SeedTree;
use crate::net::harmonizer::{Harmonizer, HarmonizerConfig};
use crate::net::impair::ImpairConfig;
use crate::net::link_layer::LinkLayer;
use crate::net::pipe::Pipe;
use crate::net::queue::Queue;
use crate::net::route::{Graph, NodeId, NodeRole};
use crate::scenario::resolve::{err, Res, ResolvedScenario, TracedQueues, Traffic};
use crate::scenario::spec::{LinkLayerSpec, QueueSpec, StopSpec};
use crate::scenario::ScenarioError;
use crate::sim::{Coordinator, Flow, FlowEngine, FlowInfo, Simulation, StopRule, Tap, TcpFlow, UdpFlow};
use crate::tcp::Connection;
use crate::trace::pcap::{host_address, PcapWriter, WireIdentity};
use crate::units::{QueueLimit, SimDuration, SimTime};

fn queue_of(q: &QueueSpec) -> Queue {
    match q {
        QueueSpec::Limit(l) => Queue::fifo(l.0),
        QueueSpec::Classes(c) => Queue::classes(&c.classes.iter().map(|l| l.0).collect::<Vec<_>>()),
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
    for h in &r.hosts {
        node_of.insert(&h.name, graph.add_node(NodeRole::Host));
    }
    for s in &r.switches {
        node_of.insert(&s.name, graph.add_node(NodeRole::Switch));
    }
    for e in &r.emulators {
        node_of.insert(&e.name, graph.add_node(NodeRole::Switch));
    }
    let mut queue_names: BTreeMap<String, crate::net::PipeId> = BTreeMap::new();
    let mut link_pipes: BTreeMap<(String, String), crate::net::PipeId> = BTreeMap::new();
    for l in &r.links {
        let (a, b) = (&l.between[0], &l.between[1]);
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
            Pipe::new(format!("{from}->{to}"), Some(l.rate.0), delay, 0.0, seeds.stream(&format!("links/{from}->{to}")), queue_of(q)).with_link_layer(link)
        };
        let ab = sim.add_pipe(mk(a, b, &l.queue_a), true);
        let ba = sim.add_pipe(mk(b, a, &l.queue_b), true);
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
                None => (None, Queue::fifo(QueueLimit::Unlimited)),
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
        let dirs: Vec<(&String, &String)> = if dir == "both" {
            vec![(a, b), (b, a)]
        } else if dir == a {
            vec![(a, b)]
        } else {
            vec![(b, a)]
        };
        let pipes: Vec<(crate::net::PipeId, u32)> = dirs.iter().enumerate().map(|(k, (x, y))| (link_pipes[&((*x).clone(), (*y).clone())], k as u32)).collect();
        let resolution_ps = t.resolution.0.as_ps();
        let writer = match (t.pcap, capture_dir) {
            (true, Some(dir)) => {
                let ifaces: Vec<(String, u64)> =
                    pipes.iter().map(|(p, _)| (sim.fabric.pipes[p.0 as usize].name.clone(), sim.fabric.pipes[p.0 as usize].rate().map_or(0, |r| r.bps()))).collect();
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
    for h in &r.hosts {
        let j = h.jitter.0;
        if j > SimDuration::ZERO {
            let name = format!("{}:processing", h.name);
            let pipe = Pipe::new(name.clone(), None, SimDuration::ZERO, 0.0, seeds.stream(&format!("hosts/{}/jitter", h.name)), Queue::fifo(QueueLimit::Unlimited)).with_jitter(j);
            host_stage.insert(node_of[h.name.as_str()], sim.add_pipe(pipe, false));
        }
    }
    let mut start_skew: BTreeMap<&str, (SimDuration, crate::engine::Rng)> = BTreeMap::new();
    for h in &r.hosts {
        start_skew.insert(h.name.as_str(), (h.start_skew.0, seeds.stream(&format!("hosts/{}/start", h.name))));
    }

    // Flows.
    let host_index: BTreeMap<&str, u32> = r.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i as u32)).collect();
    let mut routes: BTreeMap<(NodeId, NodeId), crate::net::RouteId> = BTreeMap::new();
    for (i, f) in r.flows.iter().enumerate() {
        let (s, d) = (node_of[f.src.as_str()], node_of[f.dst.as_str()]);
        let mut route = |a: NodeId, b: NodeId, sim: &mut Simulation| -> Res<crate::net::RouteId> {
            if let Some(&id) = routes.get(&(a, b)) {
                return Ok(id);
            }
            let Some(mut pipes) = graph.route(a, b) else {
                return err(format!("flows[{i}]"), format!("no path from '{}' to '{}'", names_by_node[&a], names_by_node[&b]));
            };
            if let Some(&stage) = host_stage.get(&a) {
                pipes.insert(0, stage);
            }
            let id = sim.add_route(pipes);
            routes.insert((a, b), id);
            Ok(id)
        };
        let fwd = route(s, d, &mut sim)?;
        if let Traffic::UdpCbr(udp) = &f.traffic {
            let rate = udp.rate;
            // A host cannot put datagrams on the wire faster than its own link (the first rated
            // pipe of its route); a faster source would only be dropped at its own NIC, at up
            // to 10^12 events per simulated second, which looks like a hang.
            let nic = sim.route_pipes(fwd).iter().find_map(|&q| sim.fabric.pipes[q.0 as usize].rate());
            if let Some(nic) = nic.filter(|&nic| rate.0 > nic) {
                return err(format!("flows[{i}].rate"), format!("{} is faster than the link out of '{}' ({nic}); a host cannot send faster than its interface", rate.0, f.src));
            }
        }
        let rev = route(d, s, &mut sim)?;
        let count = f.count;
        for k in 0..count {
            let name = if count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
            let (skew, rng) = start_skew.get_mut(f.src.as_str()).expect("src is a host");
            let late = if *skew > SimDuration::ZERO { SimDuration(rng.below(skew.as_ps())) } else { SimDuration::ZERO };
            let start = SimTime::ZERO + f.start.0 + late;
            let stop_at = f.stop.map(|d| SimTime::ZERO + d.0);
            let id = sim.flows.len() as u32;
            let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
            // The flow's applications: a bulk sender and a sink, or a CBR source.
            let (engine, cc, apps) = match &f.traffic {
                Traffic::Tcp(tcp) => {
                    let cfg = tcp.tcp.config();
                    let cc = cfg.cc.name();
                    let app = BulkSender::new(src, tcp.write_size.0, tcp.bytes.map(|b| b.0), stop_at);
                    let t = TcpFlow::new(Connection::new(cfg.clone()), Connection::new(cfg));
                    (FlowEngine::Tcp(Box::new(t)), cc, vec![Application::Bulk(app), Application::Sink(Sink::new(dst))])
                }
                Traffic::UdpCbr(udp) => {
                    let app = CbrSource { socket: src, rate: udp.rate.0, packet_size: udp.packet_size.0 as u32, start, stop_at, sent: 0 };
                    (FlowEngine::Udp(UdpFlow::default()), "none", vec![Application::Cbr(app)])
                }
            };
            let kind = match f.traffic {
                Traffic::Tcp(_) => "tcp",
                Traffic::UdpCbr(_) => "udp-cbr",
            };
            let (sip, smac) = host_address(host_index[f.src.as_str()]);
            let (dip, dmac) = host_address(host_index[f.dst.as_str()]);
            let mut isn = seeds.stream(&format!("flows/{name}/isn"));
            let wire = WireIdentity {
                ip: [sip, dip],
                mac: [smac, dmac],
                port: [32_768 + (id % 28_000) as u16, 5001],
                isn: [isn.next_u64() as u32, isn.next_u64() as u32],
                wscale: [0, 0],
            };
            let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind, cc, start };
            sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), wire);
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
