//! `[[topologies]]`, expanded into ordinary hosts, switches and links before the rest of the
//! scenario resolves (the resolved scenario lists what they generated and no `topologies`, so
//! it parses back to itself), and `[routing]`.
//!
//! Generated elements come after the declared ones of their table, topology by topology, so
//! a declared element keeps its index (and its error paths); an error about a generated
//! element names the topology's key that made it (`Origins::blame`). Generated names are the
//! topology's `name`, a dot and a role (`d.left`, `ls.h0`; a group's members `ls.h0.3`), and
//! may not collide with a declared name or another topology's.

use serde::Serialize;

use super::nodes::{self, member_name, Names, NodeKind, MAX_GROUP};
use super::{err, Res, ResolvedLink};
use crate::scenario::spec::{HostSpec, LinkLayerSpec, LinkSpec, RoutingSpec, Scenario, SwitchSpec, TopologyKind, TopologyLinkSpec, TopologySpec};
use crate::scenario::ScenarioError;

/// The most routers in a parking lot's chain, leaves or spines in a leaf-spine.
pub const MAX_SWITCHES: u32 = 1024;

/// The most leaf–spine links one leaf-spine may have (leaves × spines).
pub const MAX_FABRIC_LINKS: u64 = 65_536;

/// The most hosts one leaf-spine or fat tree may have (leaves × hosts_per_leaf; k²/2 edges ×
/// hosts_per_edge).
pub const MAX_TOPOLOGY_HOSTS: u64 = 1 << 20;

/// The largest fat tree's k: the paper's own example of 48-port switches (27,648 hosts, 2,880
/// switches, 55,296 switch–switch links, within `MAX_FABRIC_LINKS`).
pub const MAX_FAT_TREE_K: u32 = 48;

/// Where each generated element came from, to name it in errors.
#[derive(Debug, Default)]
pub(super) struct Origins {
    /// Declared hosts, switches and links.
    declared: [usize; 3],
    /// Per generated host, switch and link (in table order): the topology key that made it.
    generated: [Vec<String>; 3],
}

impl Origins {
    /// `e` with a generated element's path (`links[12].queue_a.limit`) replaced by the key of
    /// the topology that generated it (`topologies[0].fabric_link.queue.limit`).
    pub(super) fn blame(&self, e: ScenarioError) -> ScenarioError {
        for (t, table) in ["hosts", "switches", "links"].iter().enumerate() {
            let Some(rest) = e.path.strip_prefix(table).and_then(|r| r.strip_prefix('[')) else { continue };
            let Some((index, suffix)) = rest.split_once(']') else { continue };
            let Ok(k) = index.parse::<usize>() else { continue };
            let Some(origin) = k.checked_sub(self.declared[t]).and_then(|g| self.generated[t].get(g)) else { continue };
            let suffix = match t {
                // A link's queue_a and queue_b are the topology's one queue; where the link
                // goes is the topology's doing.
                2 => suffix.replacen(".queue_a", ".queue", 1).replacen(".queue_b", ".queue", 1),
                _ => String::new(),
            };
            let suffix = if suffix.starts_with(".between") { String::new() } else { suffix };
            return ScenarioError::new(format!("{origin}{suffix}"), e.reason);
        }
        e
    }
}

/// `sc` with its topologies expanded (and `topologies` emptied), with the origins of what they
/// generated; `None` when it has none.
pub(super) fn expand(sc: &Scenario) -> Res<Option<(Scenario, Origins)>> {
    if sc.topologies.is_empty() {
        return Ok(None);
    }
    let mut names = nodes::node_names(sc)?;
    let mut out = sc.clone();
    out.topologies.clear();
    let mut origins = Origins { declared: [sc.hosts.len(), sc.switches.len(), sc.links.len()], generated: Default::default() };
    for (i, t) in sc.topologies.iter().enumerate() {
        let g = generate(t, &format!("topologies[{i}]"))?;
        let at = format!("topologies[{i}]");
        for (name, kind) in g.hosts.iter().map(|h| (&h.name, h.count.map_or(NodeKind::Host, NodeKind::Group))).chain(g.switches.iter().map(|s| (&s.name, NodeKind::Switch))) {
            claim(&mut names, name, kind, &at)?;
        }
        origins.generated[0].extend(g.hosts.iter().map(|_| format!("{at}.name")));
        origins.generated[1].extend(g.switches.iter().map(|_| format!("{at}.name")));
        origins.generated[2].extend(g.links.iter().map(|(_, role)| format!("{at}.{role}")));
        out.hosts.extend(g.hosts);
        out.switches.extend(g.switches);
        out.links.extend(g.links.into_iter().map(|(l, _)| l));
    }
    Ok(Some((out, origins)))
}

/// Record a generated node's name (a group's members' too), refusing one already taken.
fn claim(names: &mut Names, name: &str, kind: NodeKind, at: &str) -> Res<()> {
    let taken = |names: &Names, n: &str| names.get(n).map(|k| k.name());
    if let Some(other) = taken(names, name) {
        return err(format!("{at}.name"), format!("generates the {} '{name}', already the name of a {other}", kind.name()));
    }
    if let NodeKind::Group(n) = kind {
        for k in 0..n {
            let m = member_name(name, k);
            if let Some(other) = taken(names, &m) {
                return err(format!("{at}.name"), format!("generates the host group '{name}', whose member '{m}' is already the name of a {other}"));
            }
        }
    }
    names.insert(name.to_string(), kind);
    if let NodeKind::Group(n) = kind {
        for k in 0..n {
            names.insert(member_name(name, k), NodeKind::Host);
        }
    }
    Ok(())
}

/// What one topology generates; each link with the key whose values it took.
struct Generated {
    hosts: Vec<HostSpec>,
    switches: Vec<SwitchSpec>,
    links: Vec<(LinkSpec, &'static str)>,
}

impl Generated {
    fn host(&mut self, name: String, count: Option<u32>) {
        self.hosts.push(HostSpec { name, start_skew: None, jitter: None, count });
    }

    fn switch(&mut self, name: String) {
        self.switches.push(SwitchSpec { name });
    }

    fn link(&mut self, a: String, b: String, spec: &TopologyLinkSpec, role: &'static str) {
        let l = LinkSpec { between: [a, b], rate: spec.rate, delay: spec.delay, queue: spec.queue.clone(), queue_a: None, queue_b: None, framing: spec.framing, link_layer: None };
        self.links.push((l, role));
    }
}

/// The keys a topology may set (beyond kind, name and host_link), by kind.
fn keys(kind: TopologyKind) -> &'static [&'static str] {
    match kind {
        TopologyKind::Dumbbell => &["senders", "receivers", "bottleneck"],
        TopologyKind::ParkingLot => &["hops", "bottleneck"],
        TopologyKind::LeafSpine => &["leaves", "spines", "hosts_per_leaf", "fabric_link"],
        TopologyKind::FatTree => &["k", "hosts_per_edge", "fabric_link", "core_link"],
    }
}

/// A count key: required unless `default` is given, within 1..=max.
fn count(v: Option<u32>, default: Option<u32>, path: &str, max: u32, what: &str) -> Res<u32> {
    let Some(n) = v.or(default) else { return err(path, format!("required: {what}")) };
    if n == 0 {
        return err(path, "must be at least 1");
    }
    if n > max {
        return err(path, format!("{n} is more than {max}, the most tcplab generates"));
    }
    Ok(n)
}

fn needed<'a>(l: &'a Option<TopologyLinkSpec>, path: String, what: &str) -> Res<&'a TopologyLinkSpec> {
    match l {
        Some(l) => Ok(l),
        None => err(path, format!("required: {what} (a table {{ rate = ..., delay = ..., queue = ... }})")),
    }
}

/// Check one topology's keys and generate its elements (`at`: its path).
fn generate(t: &TopologySpec, at: &str) -> Res<Generated> {
    let name = &t.name;
    if name.trim().is_empty() {
        return err(format!("{at}.name"), "must not be empty");
    }
    let given = [
        ("senders", t.senders.is_some()),
        ("receivers", t.receivers.is_some()),
        ("hops", t.hops.is_some()),
        ("leaves", t.leaves.is_some()),
        ("spines", t.spines.is_some()),
        ("hosts_per_leaf", t.hosts_per_leaf.is_some()),
        ("bottleneck", t.bottleneck.is_some()),
        ("fabric_link", t.fabric_link.is_some()),
        ("k", t.k.is_some()),
        ("hosts_per_edge", t.hosts_per_edge.is_some()),
        ("core_link", t.core_link.is_some()),
    ];
    if let Some((k, _)) = given.iter().find(|(k, set)| *set && !keys(t.kind).contains(k)) {
        let owner = [TopologyKind::Dumbbell, TopologyKind::ParkingLot, TopologyKind::LeafSpine, TopologyKind::FatTree]
            .into_iter()
            .filter(|&o| keys(o).contains(k))
            .map(|o| format!("\"{}\"", o.name()))
            .collect::<Vec<_>>()
            .join(" or ");
        return err(format!("{at}.{k}"), format!("only for kind = {owner}, not \"{}\"", t.kind.name()));
    }
    let host_link = needed(&t.host_link, format!("{at}.host_link"), "every host's link to its switch")?;
    let mut g = Generated { hosts: Vec::new(), switches: Vec::new(), links: Vec::new() };
    match t.kind {
        TopologyKind::Dumbbell => {
            let senders = count(t.senders, None, &format!("{at}.senders"), MAX_GROUP, "the hosts on the left")?;
            let receivers = count(t.receivers, Some(senders), &format!("{at}.receivers"), MAX_GROUP, "the hosts on the right")?;
            let bottleneck = needed(&t.bottleneck, format!("{at}.bottleneck"), "the link between the two switches")?;
            let (src, dst, left, right) = (format!("{name}.src"), format!("{name}.dst"), format!("{name}.left"), format!("{name}.right"));
            g.host(src.clone(), Some(senders));
            g.host(dst.clone(), Some(receivers));
            g.switch(left.clone());
            g.switch(right.clone());
            g.link(src, left.clone(), host_link, "host_link");
            g.link(left, right.clone(), bottleneck, "bottleneck");
            g.link(right, dst, host_link, "host_link");
        }
        TopologyKind::ParkingLot => {
            let hops = count(t.hops, None, &format!("{at}.hops"), MAX_SWITCHES, "the bottleneck links in the chain")?;
            let bottleneck = needed(&t.bottleneck, format!("{at}.bottleneck"), "each link of the chain")?;
            let r = |i: u32| format!("{name}.r{i}");
            for i in 0..=hops {
                g.switch(r(i));
            }
            let (src, dst) = (format!("{name}.src"), format!("{name}.dst"));
            g.host(src.clone(), None);
            g.host(dst.clone(), None);
            for i in 0..hops {
                g.host(format!("{name}.x{i}.src"), None);
                g.host(format!("{name}.x{i}.dst"), None);
            }
            g.link(src, r(0), host_link, "host_link");
            for i in 0..hops {
                g.link(r(i), r(i + 1), bottleneck, "bottleneck");
            }
            g.link(r(hops), dst, host_link, "host_link");
            for i in 0..hops {
                g.link(format!("{name}.x{i}.src"), r(i), host_link, "host_link");
                g.link(r(i + 1), format!("{name}.x{i}.dst"), host_link, "host_link");
            }
        }
        TopologyKind::LeafSpine => {
            let leaves = count(t.leaves, None, &format!("{at}.leaves"), MAX_SWITCHES, "the leaf switches")?;
            let spines = count(t.spines, None, &format!("{at}.spines"), MAX_SWITCHES, "the spine switches")?;
            let per_leaf = count(t.hosts_per_leaf, None, &format!("{at}.hosts_per_leaf"), MAX_GROUP, "the hosts on each leaf")?;
            let fabric = needed(&t.fabric_link, format!("{at}.fabric_link"), "every leaf-spine link")?;
            if u64::from(leaves) * u64::from(spines) > MAX_FABRIC_LINKS {
                return err(format!("{at}.spines"), format!("{leaves} leaves × {spines} spines is more than {MAX_FABRIC_LINKS} fabric links"));
            }
            if u64::from(leaves) * u64::from(per_leaf) > MAX_TOPOLOGY_HOSTS {
                return err(format!("{at}.hosts_per_leaf"), format!("{leaves} leaves × {per_leaf} hosts is more than {MAX_TOPOLOGY_HOSTS} hosts"));
            }
            let (leaf, spine, hosts) = (|i: u32| format!("{name}.leaf{i}"), |j: u32| format!("{name}.spine{j}"), |i: u32| format!("{name}.h{i}"));
            for i in 0..leaves {
                g.switch(leaf(i));
            }
            for j in 0..spines {
                g.switch(spine(j));
            }
            for i in 0..leaves {
                g.host(hosts(i), Some(per_leaf));
            }
            for i in 0..leaves {
                g.link(hosts(i), leaf(i), host_link, "host_link");
            }
            for i in 0..leaves {
                for j in 0..spines {
                    g.link(leaf(i), spine(j), fabric, "fabric_link");
                }
            }
        }
        TopologyKind::FatTree => fat_tree(t, at, host_link, &mut g)?,
    }
    Ok(g)
}

/// A fat tree's k: required, even, 2..=`MAX_FAT_TREE_K`.
fn fat_tree_k(k: Option<u32>, path: &str) -> Res<u32> {
    let Some(k) = k else { return err(path, format!("required: the switches' port count (even, 2..={MAX_FAT_TREE_K})")) };
    if k < 2 {
        return err(path, format!("{k} is too few ports: a fat tree needs an even k of at least 2"));
    }
    if k > MAX_FAT_TREE_K {
        return err(path, format!("{k} is more than {MAX_FAT_TREE_K}, the most tcplab generates (48-port switches: 27,648 hosts)"));
    }
    if k % 2 == 1 {
        return err(path, format!("{k} is odd: a fat tree needs an even k (each switch has k/2 ports down and k/2 up)"));
    }
    Ok(k)
}

/// Generate a k-ary fat tree (Al-Fares et al. 2008) into `g`: per pod its edge switches then
/// its aggregation switches, then the cores; host links, edge–aggregation links pod by pod,
/// then aggregation–core links pod by pod.
fn fat_tree(t: &TopologySpec, at: &str, host_link: &TopologyLinkSpec, g: &mut Generated) -> Res<()> {
    let name = &t.name;
    let k = fat_tree_k(t.k, &format!("{at}.k"))?;
    let half = k / 2;
    let per_edge = count(t.hosts_per_edge, Some(half), &format!("{at}.hosts_per_edge"), MAX_GROUP, "the hosts on each edge switch")?;
    let fabric = needed(&t.fabric_link, format!("{at}.fabric_link"), "every edge-aggregation link (and aggregation-core link unless core_link is given)")?;
    let (core_spec, core_role) = match &t.core_link {
        Some(c) => (c, "core_link"),
        None => (fabric, "fabric_link"),
    };
    if u64::from(k) * u64::from(half) * u64::from(per_edge) > MAX_TOPOLOGY_HOSTS {
        return err(format!("{at}.hosts_per_edge"), format!("{} edge switches × {per_edge} hosts is more than {MAX_TOPOLOGY_HOSTS} hosts", k * half));
    }
    let edge = |p: u32, j: u32| format!("{name}.p{p}.edge{j}");
    let agg = |p: u32, j: u32| format!("{name}.p{p}.agg{j}");
    let core = |c: u32| format!("{name}.core{c}");
    let hosts = |p: u32, j: u32| format!("{name}.p{p}.h{j}");
    for p in 0..k {
        for j in 0..half {
            g.switch(edge(p, j));
        }
        for j in 0..half {
            g.switch(agg(p, j));
        }
    }
    for c in 0..half * half {
        g.switch(core(c));
    }
    for p in 0..k {
        for j in 0..half {
            g.host(hosts(p, j), Some(per_edge));
        }
    }
    for p in 0..k {
        for j in 0..half {
            g.link(hosts(p, j), edge(p, j), host_link, "host_link");
        }
    }
    for p in 0..k {
        for e in 0..half {
            for a in 0..half {
                g.link(edge(p, e), agg(p, a), fabric, "fabric_link");
            }
        }
    }
    for p in 0..k {
        for a in 0..half {
            for c in a * half..(a + 1) * half {
                g.link(agg(p, a), core(c), core_spec, core_role);
            }
        }
    }
    Ok(())
}

/// `[routing]`, resolved. Written out only when something is on, so a scenario without it
/// resolves (and hashes) as it did before the table existed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ResolvedRouting {
    /// Equal-cost multipath (default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub ecmp: bool,
}

impl ResolvedRouting {
    /// Routing as it always was: one shortest path per pair of hosts.
    pub fn is_default(&self) -> bool {
        *self == ResolvedRouting::default()
    }
}

/// Resolve `[routing]`. ECMP is refused beside AAL5 links: the checks of a flow's AAL5 frames
/// read its path before the flow's 5-tuple picks it.
pub(super) fn resolve_routing(r: &RoutingSpec, links: &[ResolvedLink]) -> Res<ResolvedRouting> {
    let ecmp = r.ecmp.unwrap_or(false);
    if ecmp {
        if let Some(i) = links.iter().position(|l| l.link_layer != LinkLayerSpec::Ip) {
            return err("routing.ecmp", format!("not with AAL5 links (links[{i}]): a flow's AAL5 frames and ATM ports are checked on one path per pair of hosts"));
        }
    }
    Ok(ResolvedRouting { ecmp })
}
