//! A workload's flow source: TCP transfers made while the run goes on. Built here, where the
//! routes are known: every host pair the workload may join gets its routes (and its path's
//! ideal transfer times) up front; each arrival then draws a pair and a size and makes a flow
//! named `<workload>.<k>` — a bulk sender writing that many bytes, started at once, and a sink.
//! With ECMP each direction of each flow takes the route its 5-tuple hashes to, walked down
//! the pair's `RouteTree` (every route exists before the run). Draws come from three named
//! streams, `flows/<name>/arrivals`, `…/sizes` and `…/pairs`, so
//! the arrivals do not move when the sizes' distribution changes.

use super::flows::{check_frames, Builder};
use super::network::{five_tuple, RouteTree};
use super::variant::tcp_flow;
use crate::app::workload::{Arrivals, SizeDist};
use crate::app::{Application, BulkSender, Sink, Socket};
use crate::engine::{Rng, SeedTree};
use crate::flow::{Flow, FlowEngine, FlowInfo};
use crate::net::ecmp::FiveTuple;
use crate::net::packet::{RouteId, IPV4_HEADER, IPV6_HEADER, TCP_HEADER};
use crate::scenario::resolve::{err, Res, ResolvedFlow, ResolvedTcp, WorkloadTraffic};
use crate::scenario::spec::PairsName;
use crate::sim::{FlowSource, MadeFlow, Simulation};
use crate::units::{SimDuration, SimTime};

/// The serialization and propagation times of a path's pipes: (per-hop line time of an IP
/// packet of a given size, propagation), as `ideal_fct` needs them.
#[derive(Clone, Debug)]
struct PathTimes {
    /// Per pipe: its rate (none: a pure delay), its link layer, its propagation delay.
    hops: Vec<(Option<crate::units::BitRate>, crate::net::link_layer::LinkLayer, SimDuration)>,
}

impl PathTimes {
    fn of(sim: &Simulation, route: RouteId) -> PathTimes {
        let hops = sim.route_pipes(route).iter().map(|&q| &sim.fabric.pipes[q.0 as usize]).map(|p| (p.egress().rate(), p.link_layer(), p.delay())).collect();
        PathTimes { hops }
    }

    /// Line time of an `ip`-byte packet at hop `i`.
    fn tx(&self, i: usize, ip: u32) -> SimDuration {
        let (rate, link, _) = self.hops[i];
        rate.map_or(SimDuration::ZERO, |r| r.tx_time(link.line_bytes(ip)))
    }

    fn propagation(&self) -> SimDuration {
        SimDuration(self.hops.iter().map(|h| h.2.as_ps()).sum())
    }
}

/// A TCP transfer's segments on the wire: how many, and the IP bytes of a full one, the
/// first and the last.
#[derive(Clone, Copy, Debug)]
struct Segments {
    n: u64,
    full: u32,
    first: u32,
    last: u32,
}

/// The wire format of a connection's segments: (payload per full segment, IP + TCP header
/// bytes with options).
#[derive(Clone, Copy, Debug)]
pub(super) struct SegmentFormat {
    per: u64,
    header: u32,
    /// IP + TCP header bytes of an option-less segment (a SYN here).
    bare: u32,
}

impl SegmentFormat {
    pub(super) fn of(tcp: &ResolvedTcp) -> SegmentFormat {
        let cfg = tcp.config();
        let ts = if cfg.timestamps { 12 } else { 0 };
        let bare = if cfg.ipv6 { IPV6_HEADER } else { IPV4_HEADER } + TCP_HEADER;
        SegmentFormat { per: (cfg.mss - ts) as u64, header: bare + ts, bare }
    }

    fn segments(&self, bytes: u64) -> Segments {
        let n = bytes.div_ceil(self.per).max(1);
        let (full, last) = (self.header as u64 + self.per, self.header as u64 + (bytes - (n - 1) * self.per));
        Segments { n, full: full as u32, first: if n == 1 { last as u32 } else { full as u32 }, last: last as u32 }
    }
}

/// The least time from a transfer's first segment leaving to its last arriving: every
/// segment back to back, unlimited by any window, through the empty path — the first across
/// every hop, the others behind it at the path's slowest hop, the last on from there.
fn transfer(path: &PathTimes, s: Segments) -> SimDuration {
    let mut t = path.propagation();
    // The bottleneck: the first hop with the longest line time of a full segment.
    let b = (0..path.hops.len()).fold(0, |b, i| if path.tx(i, s.full) > path.tx(b, s.full) { i } else { b });
    for i in 0..path.hops.len() {
        t = t + path.tx(i, if i <= b { s.first } else { s.last });
    }
    if s.n > 1 && !path.hops.is_empty() {
        let middle = SimDuration(path.tx(b, s.full).as_ps() * (s.n - 2));
        t = t + middle + path.tx(b, s.last);
    }
    t
}

/// The least time a transfer of `bytes` payload bytes can take from its start to its last
/// byte's arrival: the handshake (an option-less SYN out and SYN-ACK back, one base RTT) and
/// then the transfer (`transfer`). A lower bound of the flow-completion time on an idle
/// network; `fct / ideal` is the flow's slowdown.
pub(super) fn ideal_fct(paths: &PathTimesRef, bytes: u64, tcp: &ResolvedTcp) -> SimDuration {
    let (fwd, rev) = (&paths.0, &paths.1);
    let format = SegmentFormat::of(tcp);
    let mut t = fwd.propagation() + rev.propagation();
    for i in 0..fwd.hops.len() {
        t = t + fwd.tx(i, format.bare);
    }
    for i in 0..rev.hops.len() {
        t = t + rev.tx(i, format.bare);
    }
    t + transfer(fwd, format.segments(bytes))
}

/// The least time a request and its response can take on a connection's empty paths: the
/// request's segments across, then the response's back (`transfer` each way; the connection
/// is open).
pub(super) fn ideal_message(paths: &PathTimesRef, format: SegmentFormat, request: u64, response: u64) -> SimDuration {
    transfer(&paths.0, format.segments(request)) + transfer(&paths.1, format.segments(response))
}

/// A pair's forward and reverse path times.
#[derive(Clone, Debug)]
pub(super) struct PathTimesRef(PathTimes, PathTimes);

/// Every route of a tree (`RouteTree`), each once.
fn leaves(t: &RouteTree, out: &mut Vec<RouteId>) {
    match t {
        RouteTree::Route(r) => {
            if !out.contains(r) {
                out.push(*r)
            }
        }
        RouteTree::Choice { branches, .. } => branches.iter().for_each(|b| leaves(b, out)),
    }
}

impl PathTimesRef {
    pub(super) fn of(sim: &Simulation, fwd: RouteId, rev: RouteId) -> Self {
        PathTimesRef(PathTimes::of(sim, fwd), PathTimes::of(sim, rev))
    }
}

/// One host pair a workload may join: its routes each way (with ECMP, every route a flow's
/// 5-tuple may hash to) and their times.
#[derive(Debug)]
struct Pair {
    src: String,
    dst: String,
    routes: [RouteTree; 2],
    hosts: [u32; 2],
}

/// The flow source of one workload.
#[derive(Debug)]
struct WorkloadSource {
    name: String,
    class: u8,
    background: bool,
    tcp: ResolvedTcp,
    cc: &'static str,
    seeds: SeedTree,
    /// The run's ECMP seed (none: one route per direction).
    ecmp: Option<u64>,
    pairs: Vec<Pair>,
    /// Each route's propagation and line times.
    times: std::collections::BTreeMap<u32, PathTimes>,
    /// Per source member, the indices of the pairs it may use.
    choices: Vec<Vec<u32>>,
    sizes: SizeDist,
    arrivals: Arrivals,
    rng_arrivals: Rng,
    rng_sizes: Rng,
    rng_pairs: Rng,
    start: SimTime,
    stop: Option<SimTime>,
    planned: u64,
    made: u64,
    next: SimTime,
    write_size: u64,
}

impl FlowSource for WorkloadSource {
    fn planned(&self) -> u64 {
        self.planned
    }

    fn first(&mut self) -> Option<SimTime> {
        self.next = self.start + self.arrivals.first(&mut self.rng_arrivals);
        self.stop.is_none_or(|s| self.next < s).then_some(self.next)
    }

    fn make(&mut self, now: SimTime, id: u32) -> (MadeFlow, Option<SimTime>) {
        let k = self.made;
        self.made += 1;
        let name = format!("{}.{k}", self.name);
        let from = self.rng_pairs.below(self.choices.len() as u64) as usize;
        let options = &self.choices[from];
        let pair = &self.pairs[options[self.rng_pairs.below(options.len() as u64) as usize] as usize];
        let bytes = self.sizes.draw(&mut self.rng_sizes);
        let engine = FlowEngine::Tcp(Box::new(tcp_flow(&self.tcp, 0, &self.seeds, &name, [&pair.src, &pair.dst])));
        let info =
            FlowInfo { name: name.clone(), src: pair.src.clone(), dst: pair.dst.clone(), kind: "tcp", cc: self.cc, start: now, download: false, background: self.background };
        let wire = super::flows::wire_identity(&self.seeds, id, &name, pair.hosts);
        let routes = match self.ecmp {
            None => pair.routes.clone().map(|t| t.pick(0, &five_tuple(&wire, 0, FiveTuple::TCP))),
            Some(seed) => [0, 1].map(|e| pair.routes[e].pick(seed, &five_tuple(&wire, e, FiveTuple::TCP))),
        };
        let mut flow = Flow::new(info, routes, self.class, engine);
        let times = PathTimesRef(self.times[&routes[0].0].clone(), self.times[&routes[1].0].clone());
        flow.ideal_fct = Some(ideal_fct(&times, bytes, &self.tcp));
        flow.retirable = true;
        let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
        let apps = vec![(Application::Bulk(BulkSender::new(src, self.write_size, Some(bytes), None)), vec![src], true), (Application::Sink(Sink::new(dst)), vec![dst], false)];
        let next = (self.made < self.planned).then(|| now + self.arrivals.gap(&mut self.rng_arrivals)).filter(|&t| self.stop.is_none_or(|s| t < s));
        (MadeFlow { flow, wire, apps }, next)
    }
}

/// Add flow `i`'s workload source.
pub(super) fn workload(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &WorkloadTraffic) -> Res<()> {
    let w = &t.workload;
    let p = |x: &str| format!("flows[{i}].workload.{x}");
    let srcs = b.net.members(&f.src);
    let dsts = b.net.members(&f.dst);
    let name = &f.name;
    let mut pairs = Vec::new();
    let mut choices = Vec::with_capacity(srcs.len());
    let mut times = std::collections::BTreeMap::new();
    let mut pair = |b: &mut Builder, sim: &mut Simulation, s: &String, d: &String| -> Res<u32> {
        let fwd = b.routes.tree(s, d, sim, i)?;
        let rev = b.routes.tree(d, s, sim, i)?;
        let mut all = Vec::new();
        leaves(&fwd, &mut all);
        for &r in &all {
            check_frames(sim, r, t.tcp.settings.mss + 40, format!("flows[{i}].tcp.mss"))?;
        }
        leaves(&rev, &mut all);
        for r in all {
            times.entry(r.0).or_insert_with(|| PathTimes::of(sim, r));
        }
        pairs.push(Pair { src: s.clone(), dst: d.clone(), routes: [fwd, rev], hosts: [b.host_index(s), b.host_index(d)] });
        Ok(pairs.len() as u32 - 1)
    };
    match w.pairs {
        PairsName::Random => {
            for s in &srcs {
                let mut mine = Vec::new();
                for d in dsts.iter().filter(|d| *d != s) {
                    mine.push(pair(b, sim, s, d)?);
                }
                if mine.is_empty() {
                    return err(format!("flows[{i}].dst"), format!("'{s}' has no destination in '{}' but itself", f.dst));
                }
                choices.push(mine);
            }
        }
        PairsName::Permutation => {
            let same = f.src == f.dst;
            if srcs.len() != dsts.len() || (!same && srcs.iter().any(|s| dsts.contains(s))) {
                return err(
                    p("pairs"),
                    format!("\"permutation\" pairs '{}' ({} hosts) with '{}' ({}): give one group, or two disjoint groups of one size", f.src, srcs.len(), f.dst, dsts.len()),
                );
            }
            if same && srcs.len() < 2 {
                return err(p("pairs"), "\"permutation\" within one group needs at least 2 members");
            }
            let mut perm: Vec<usize> = (0..dsts.len()).collect();
            let mut rng = b.seeds.stream(&format!("flows/{name}/permutation"));
            // Sattolo's algorithm within one group (a single cycle: nobody sends to itself),
            // Fisher–Yates between two.
            for k in (1..perm.len()).rev() {
                let j = if same { rng.below(k as u64) } else { rng.below(k as u64 + 1) } as usize;
                perm.swap(k, j);
            }
            for (k, s) in srcs.iter().enumerate() {
                choices.push(vec![pair(b, sim, s, &dsts[perm[k]])?]);
            }
        }
    }
    let rate = match (w.rate, w.load) {
        (Some(r), _) => r,
        (None, Some(load)) => {
            let mut capacity = 0.0;
            for s in &srcs {
                let mut first = Vec::new();
                leaves(&pairs[choices[srcs.iter().position(|x| x == s).expect("a member")][0] as usize].routes[0], &mut first);
                let route = first[0];
                let Some(nic) = sim.route_pipes(route).iter().find_map(|&q| sim.fabric.pipes[q.0 as usize].egress().rate()) else {
                    return err(p("load"), format!("'{s}' has no rated link to send on, so a load has no rate to be a fraction of; give rate (flows per second)"));
                };
                capacity += nic.bps() as f64;
            }
            load * capacity / (8.0 * w.size_dist().mean())
        }
        (None, None) => unreachable!("resolve requires one"),
    };
    let seeds = *b.seeds;
    let source = WorkloadSource {
        name: name.clone(),
        class: f.class,
        background: f.background,
        tcp: t.tcp.clone(),
        cc: t.tcp.config().cc.name(),
        seeds,
        ecmp: b.net.ecmp,
        pairs,
        times,
        choices,
        sizes: w.size_dist(),
        arrivals: w.arrivals(rate),
        rng_arrivals: seeds.stream(&format!("flows/{name}/arrivals")),
        rng_sizes: seeds.stream(&format!("flows/{name}/sizes")),
        rng_pairs: seeds.stream(&format!("flows/{name}/pairs")),
        start: SimTime::ZERO + f.start.0,
        stop: f.stop.map(|d| SimTime::ZERO + d.0),
        planned: w.flows,
        made: 0,
        next: SimTime::ZERO,
        write_size: w.write_size.0,
    };
    sim.add_source(Box::new(source), f.background);
    Ok(())
}
