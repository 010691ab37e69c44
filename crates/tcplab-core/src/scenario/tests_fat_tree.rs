//! The k-ary fat tree (`[[topologies]] kind = "fat-tree"`, Al-Fares et al. 2008): what it
//! expands to and how it is wired, the resolved file, the errors, and the routes ECMP gives
//! flows across and within pods.

use std::collections::{BTreeMap, BTreeSet};

use super::tests::{error_of, run};
use super::*;

/// A fat tree `ft` of `k` with `extra` topology keys (`hosts_per_edge = 4`, `core_link = …`),
/// ECMP `ecmp`; `flows` appended.
fn fat_tree(k: u32, extra: &str, ecmp: bool, flows: &str) -> String {
    format!(
        r#"
name = "ft"
[run]
duration = "10ms"
[routing]
ecmp = {ecmp}
[[topologies]]
kind = "fat-tree"
name = "ft"
k = {k}
host_link = {{ rate = "10Gbps", delay = "1us" }}
fabric_link = {{ rate = "10Gbps", delay = "1us", queue = "200pkts" }}
{extra}
{flows}
"#
    )
}

fn built(text: &str, seed: u64) -> Run {
    Run::from_toml(text, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

/// The nodes a route crosses, host to host, read off its pipes' names (`a->b`).
fn nodes_of(r: &Run, route: crate::net::packet::RouteId) -> Vec<String> {
    let names: Vec<&str> = r.sim.route_pipes(route).iter().map(|p| r.sim.fabric.pipes[p.0 as usize].name.as_str()).collect();
    let mut nodes = vec![names[0].split("->").next().unwrap().to_string()];
    nodes.extend(names.iter().map(|n| n.rsplit("->").next().unwrap().to_string()));
    nodes
}

/// The digits after the first `prefix` in `name` (`index_after("ft.p3.agg1", ".p")` = 3).
fn index_after(name: &str, prefix: &str) -> u32 {
    let rest = &name[name.find(prefix).unwrap_or_else(|| panic!("{name} has no {prefix}")) + prefix.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `src` to `dst`, every member of one to every member of the other.
fn all_to_all(name: &str, src: &str, dst: &str) -> String {
    format!("[[flows]]\nname = \"{name}\"\nsrc = \"{src}\"\ndst = \"{dst}\"\npattern = \"all-to-all\"\n")
}

/// From every edge's hosts to every edge's hosts in the other pods.
fn between_pods(k: u32) -> String {
    let mut flows = String::new();
    for (p, e) in (0..k).flat_map(|p| (0..k / 2).map(move |e| (p, e))) {
        for (q, f) in (0..k).filter(|&q| q != p).flat_map(|q| (0..k / 2).map(move |f| (q, f))) {
            flows += &all_to_all(&format!("x{p}{e}{q}{f}"), &format!("ft.p{p}.h{e}"), &format!("ft.p{q}.h{f}"));
        }
    }
    flows
}

#[test]
fn a_fat_tree_has_k_cubed_over_4_hosts_5k_squared_over_4_switches_and_3k_cubed_over_4_links() {
    for k in [2u32, 4, 6, 8] {
        let r = built(&fat_tree(k, "", false, ""), 1);
        let res = &r.resolved;
        let hosts: u32 = res.hosts.iter().map(|h| h.count.unwrap_or(1)).sum();
        assert_eq!(hosts, k * k * k / 4, "k = {k}");
        assert_eq!(res.hosts.len() as u32, k * k / 2, "one group per edge switch");
        assert_eq!(res.switches.len() as u32, 5 * k * k / 4, "k = {k}");
        // Host links are one per group (a link per member); switch links one each.
        let physical: u32 = res.links.iter().map(|l| if l.between[0].contains(".h") { k / 2 } else { 1 }).sum();
        assert_eq!(physical, 3 * k * k * k / 4, "k = {k}");
        assert_eq!(res.links.len() as u32, k * k / 2 + k * k * k / 4 + k * k * k / 4);
        // Every link's two directions are queues.
        assert_eq!(r.sim.summary().queues.len() as u32, 2 * 3 * k * k * k / 4, "k = {k}");
    }
    // k = 4 in full: 16 hosts, 20 switches, 48 links (16 host, 16 edge–agg, 16 agg–core).
    let r = built(&fat_tree(4, "", false, ""), 1);
    let res = &r.resolved;
    let groups: Vec<(&str, Option<u32>)> = res.hosts.iter().map(|h| (h.name.as_str(), h.count)).collect();
    let want: Vec<(String, Option<u32>)> = (0..4).flat_map(|p| (0..2).map(move |j| (format!("ft.p{p}.h{j}"), Some(2)))).collect();
    assert_eq!(groups, want.iter().map(|(n, c)| (n.as_str(), *c)).collect::<Vec<_>>());
    let switches: Vec<&str> = res.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(&switches[..4], ["ft.p0.edge0", "ft.p0.edge1", "ft.p0.agg0", "ft.p0.agg1"]);
    assert_eq!(&switches[16..], ["ft.core0", "ft.core1", "ft.core2", "ft.core3"]);
    let role = |l: &resolve::ResolvedLink| match (l.between[0].contains(".h"), l.between[1].contains(".core")) {
        (true, _) => "host",
        (false, false) => "edge-agg",
        (false, true) => "agg-core",
    };
    let mut by_role: BTreeMap<&str, u32> = BTreeMap::new();
    for l in &res.links {
        *by_role.entry(role(l)).or_default() += if role(l) == "host" { 2 } else { 1 };
    }
    assert_eq!(by_role, BTreeMap::from([("host", 16), ("edge-agg", 16), ("agg-core", 16)]));
    // Declared in order: host links, edge–agg pod by pod, agg–core pod by pod.
    let order: Vec<&str> = res.links.iter().map(role).collect();
    assert_eq!(order, [["host"; 8].as_slice(), &["edge-agg"; 16], &["agg-core"; 16]].concat());
    assert_eq!(res.links[0].between, ["ft.p0.h0".to_string(), "ft.p0.edge0".to_string()]);
    assert_eq!(res.links[8].between, ["ft.p0.edge0".to_string(), "ft.p0.agg0".to_string()]);
    assert_eq!(res.links[24].between, ["ft.p0.agg0".to_string(), "ft.core0".to_string()]);
    // hosts_per_edge overrides k/2.
    let r = built(&fat_tree(4, "hosts_per_edge = 5", false, ""), 1);
    assert!(r.resolved.hosts.iter().all(|h| h.count == Some(5)));
    assert_eq!(r.resolved.hosts.iter().map(|h| h.count.unwrap()).sum::<u32>(), 40);
}

#[test]
fn every_core_reaches_one_aggregation_switch_per_pod_the_one_the_paper_names() {
    for k in [4u32, 8] {
        let half = k / 2;
        let r = built(&fat_tree(k, "", false, ""), 1);
        let mut neighbours: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for l in &r.resolved.links {
            let [a, b] = &l.between;
            assert!(neighbours.entry(a.clone()).or_default().insert(b.clone()), "{a}—{b} twice");
            neighbours.entry(b.clone()).or_default().insert(a.clone());
        }
        for c in 0..half * half {
            let aggs = &neighbours[&format!("ft.core{c}")];
            // One port per pod, to aggregation switch c / (k/2) of that pod.
            let want: BTreeSet<String> = (0..k).map(|p| format!("ft.p{p}.agg{}", c / half)).collect();
            assert_eq!(aggs, &want, "k = {k}, core {c}");
        }
        for p in 0..k {
            for j in 0..half {
                // Edge j: its hosts and every aggregation switch of its pod, nothing else.
                let mut want: BTreeSet<String> = (0..half).map(|a| format!("ft.p{p}.agg{a}")).collect();
                want.insert(format!("ft.p{p}.h{j}"));
                assert_eq!(neighbours[&format!("ft.p{p}.edge{j}")], want, "k = {k}");
                // Aggregation j: every edge of its pod below, k/2 cores above.
                let mut want: BTreeSet<String> = (0..half).map(|e| format!("ft.p{p}.edge{e}")).collect();
                want.extend((j * half..(j + 1) * half).map(|c| format!("ft.core{c}")));
                assert_eq!(neighbours[&format!("ft.p{p}.agg{j}")], want, "k = {k}");
            }
        }
    }
}

#[test]
fn the_resolved_fat_tree_lists_its_elements_and_parses_back_to_itself() {
    let core_link = "core_link = { rate = \"40Gbps\", delay = \"3us\", framing = \"38B\" }";
    let text = fat_tree(4, core_link, true, &all_to_all("f", "ft.p0.h0", "ft.p3.h1"));
    let a = built(&text, 7);
    let resolved = a.resolved_toml();
    assert!(!resolved.contains("topologies"), "{resolved}");
    for name in ["name = \"ft.core3\"", "name = \"ft.p3.agg1\"", "name = \"ft.p2.edge0\"", "name = \"ft.p1.h1\"", "between = [\"ft.p3.agg1\", \"ft.core3\"]"] {
        assert!(resolved.contains(name), "{name}\n{resolved}");
    }
    let b = Run::from_toml(&resolved, None).unwrap();
    assert_eq!(b.resolved, a.resolved);
    assert_eq!(b.resolved_toml(), resolved);
    assert_eq!(b.hash, a.hash);
    let routes = |r: &Run| r.sim.flows.iter().flat_map(|f| f.routes.map(|x| nodes_of(r, x))).collect::<Vec<_>>();
    assert_eq!(routes(&a), routes(&b));
    // core_link sets the aggregation–core links only; fabric_link the edge–aggregation ones.
    for l in &a.resolved.links {
        let want = match (l.between[0].contains(".agg"), l.between[1].contains(".core"), l.between[0].contains(".h")) {
            (true, true, _) => (40_000_000_000, 38),
            (_, _, true) | (false, false, false) => (10_000_000_000, 0),
            other => panic!("{other:?}: {:?}", l.between),
        };
        assert_eq!((l.rate.0.bps(), l.framing.0), want, "{:?}", l.between);
    }
}

#[test]
fn fat_tree_errors_name_the_field() {
    let base = |keys: &str| format!("name = \"t\"\n[[topologies]]\nkind = \"fat-tree\"\nname = \"g\"\nhost_link = {{ rate = \"1Gbps\" }}\n{keys}\n");
    let fabric = "fabric_link = { rate = \"1Gbps\" }";
    let other = |kind: &str, keys: &str| format!("name = \"t\"\n[[topologies]]\nkind = \"{kind}\"\nname = \"g\"\nhost_link = {{ rate = \"1Gbps\" }}\n{keys}\n");
    let cases: Vec<(String, &str)> = vec![
        (base(fabric), "topologies[0].k: required: the switches' port count (even, 2..=48)"),
        (base(&format!("k = 0\n{fabric}")), "topologies[0].k: 0 is too few ports: a fat tree needs an even k of at least 2"),
        (base(&format!("k = 1\n{fabric}")), "topologies[0].k: 1 is too few ports"),
        (base(&format!("k = 5\n{fabric}")), "topologies[0].k: 5 is odd: a fat tree needs an even k"),
        (base(&format!("k = 50\n{fabric}")), "topologies[0].k: 50 is more than 48, the most tcplab generates"),
        (base(&format!("k = -4\n{fabric}")), "topologies[0].k: invalid value"),
        (base(&format!("k = 4\nhosts_per_edge = 0\n{fabric}")), "topologies[0].hosts_per_edge: must be at least 1"),
        (base(&format!("k = 4\nhosts_per_edge = 70000\n{fabric}")), "topologies[0].hosts_per_edge: 70000 is more than 65536"),
        (base(&format!("k = 48\nhosts_per_edge = 1000\n{fabric}")), "topologies[0].hosts_per_edge: 1152 edge switches × 1000 hosts is more than 1048576 hosts"),
        (base("k = 4"), "topologies[0].fabric_link: required"),
        (base("k = 4\ncore_link = { rate = \"1Gbps\" }"), "topologies[0].fabric_link: required"),
        (base(&format!("k = 4\nports = 4\n{fabric}")), "topologies[0].ports: unknown field `ports`"),
        ("name = \"t\"\n[[topologies]]\nkind = \"fat-tree\"\nname = \"g\"\nk = 4\nfabric_link = { rate = \"1Gbps\" }\n".to_string(), "topologies[0].host_link: required"),
        // Another kind's keys, and the fat tree's keys in another kind.
        (base(&format!("k = 4\nspines = 2\n{fabric}")), "topologies[0].spines: only for kind = \"leaf-spine\", not \"fat-tree\""),
        (base(&format!("k = 4\nbottleneck = {{ rate = \"1Gbps\" }}\n{fabric}")), "topologies[0].bottleneck: only for kind = \"dumbbell\" or \"parking-lot\", not \"fat-tree\""),
        (other("leaf-spine", &format!("leaves = 2\nspines = 2\nhosts_per_leaf = 1\nk = 4\n{fabric}")), "topologies[0].k: only for kind = \"fat-tree\", not \"leaf-spine\""),
        (
            other("leaf-spine", &format!("leaves = 2\nspines = 2\nhosts_per_leaf = 1\ncore_link = {{ rate = \"1Gbps\" }}\n{fabric}")),
            "topologies[0].core_link: only for kind = \"fat-tree\", not \"leaf-spine\"",
        ),
        (other("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }\nhosts_per_edge = 2"), "topologies[0].hosts_per_edge: only for kind = \"fat-tree\", not \"dumbbell\""),
        (
            other("parking-lot", &format!("hops = 2\nbottleneck = {{ rate = \"1Gbps\" }}\n{fabric}")),
            "topologies[0].fabric_link: only for kind = \"leaf-spine\" or \"fat-tree\", not \"parking-lot\"",
        ),
        // Errors in the generated links name the key whose values they took.
        (base("k = 4\nfabric_link = { rate = \"1Gbps\", framing = \"2000B\" }"), "topologies[0].fabric_link.framing: 2000 bytes per packet"),
        (base(&format!("k = 4\n{fabric}\ncore_link = {{ rate = \"1Gbps\", framing = \"2000B\" }}")), "topologies[0].core_link.framing: 2000 bytes per packet"),
        (base(&format!("k = 4\n{fabric}\ncore_link = {{ rate = \"1Gbps\", queue = 40 }}")), "topologies[0].core_link.queue: 40 has no unit"),
        // Generated names that collide.
        (format!("{}[[switches]]\nname = \"g.core3\"\n", base(&format!("k = 4\n{fabric}"))), "topologies[0].name: generates the switch 'g.core3', already the name of a switch"),
        (
            format!("{}[[hosts]]\nname = \"g.p1.h0.1\"\n", base(&format!("k = 4\n{fabric}"))),
            "topologies[0].name: generates the host group 'g.p1.h0', whose member 'g.p1.h0.1' is already the name of a host",
        ),
    ];
    for (text, want) in cases {
        let got = error_of(&text);
        assert!(got.starts_with(want), "got: {got}\nwant: {want}\n{text}");
    }
}

/// Check a route between pods (host, edge, agg, core, agg, edge, host; the aggregation
/// switches the ones the core is wired to) and give its core, its first aggregation switch's
/// index and its last one's.
fn core_of(nodes: &[String], k: u32) -> (u32, u32, u32) {
    assert_eq!(nodes.len(), 7, "{nodes:?}");
    let roles = [".h", ".edge", ".agg", ".core", ".agg", ".edge", ".h"];
    for (n, role) in nodes.iter().zip(roles) {
        assert!(n.contains(role), "{nodes:?}");
    }
    let (src_pod, dst_pod) = (index_after(&nodes[0], ".p"), index_after(&nodes[6], ".p"));
    assert_ne!(src_pod, dst_pod, "{nodes:?}");
    for (i, pod) in [(1, src_pod), (2, src_pod), (4, dst_pod), (5, dst_pod)] {
        assert_eq!(index_after(&nodes[i], ".p"), pod, "{nodes:?}");
    }
    // The edges are the hosts' own.
    assert_eq!(index_after(&nodes[1], ".edge"), index_after(&nodes[0], ".h"), "{nodes:?}");
    assert_eq!(index_after(&nodes[5], ".edge"), index_after(&nodes[6], ".h"), "{nodes:?}");
    let core = index_after(&nodes[3], ".core");
    let (up, down) = (index_after(&nodes[2], ".agg"), index_after(&nodes[4], ".agg"));
    assert_eq!((up, down), (core / (k / 2), core / (k / 2)), "{nodes:?}");
    (core, up, down)
}

#[test]
fn ecmp_spreads_flows_between_pods_over_every_core_and_keeps_pod_traffic_below_them() {
    // 4 hosts per edge: each of the 8 edges' hosts to each of the 6 edges' in other pods, 16
    // flows a pair of edges: 768 flows.
    let r = built(&fat_tree(4, "hosts_per_edge = 4", true, &between_pods(4)), 1);
    let n = r.sim.flows.len();
    assert_eq!(n, 768);
    for e in 0..2 {
        let (mut cores, mut aggs) = ([0u32; 4], [0u32; 2]);
        for f in &r.sim.flows {
            let (core, up, _) = core_of(&nodes_of(&r, f.routes[e]), 4);
            cores[core as usize] += 1;
            aggs[up as usize] += 1;
        }
        // Two independent halvings (at the edge, then at the aggregation switch): each core's
        // share is Binomial(768, 1/4) if the hash behaves as a uniform draw: 192 ± 6σ, σ = 12.
        let sigma = (n as f64 * 0.25 * 0.75).sqrt();
        for c in cores {
            assert!((f64::from(c) - n as f64 / 4.0).abs() < 6.0 * sigma, "direction {e}: {cores:?}");
        }
        let sigma = (n as f64 * 0.25).sqrt();
        for a in aggs {
            assert!((f64::from(a) - n as f64 / 2.0).abs() < 6.0 * sigma, "direction {e}: {aggs:?}");
        }
    }

    // Within a pod: between its two edges (host, edge, agg, edge, host; both aggregation
    // switches used), and under one edge (host, edge, host). Never a core.
    let mut flows = String::new();
    for p in 0..4 {
        flows += &all_to_all(&format!("across{p}"), &format!("ft.p{p}.h0"), &format!("ft.p{p}.h1"));
        flows += &all_to_all(&format!("under{p}"), &format!("ft.p{p}.h1"), &format!("ft.p{p}.h1"));
    }
    let r = built(&fat_tree(4, "hosts_per_edge = 4", true, &flows), 1);
    assert_eq!(r.sim.flows.len(), 4 * (16 + 12));
    let mut aggs_used = BTreeSet::new();
    for f in &r.sim.flows {
        for route in f.routes {
            let nodes = nodes_of(&r, route);
            assert!(nodes.iter().all(|n| !n.contains(".core")), "{nodes:?}");
            let pod = index_after(&nodes[0], ".p");
            assert!(nodes.iter().all(|n| index_after(n, ".p") == pod), "{nodes:?}");
            if f.info.name.starts_with("across") {
                assert_eq!(nodes.len(), 5, "{nodes:?}");
                assert!(nodes[2].contains(".agg"), "{nodes:?}");
                aggs_used.insert(nodes[2].clone());
            } else {
                assert_eq!(nodes.len(), 3, "{nodes:?}");
                assert!(nodes[1].ends_with(".edge1"), "{nodes:?}");
            }
        }
    }
    assert_eq!(aggs_used.len(), 8, "every pod's two aggregation switches: {aggs_used:?}");
}

#[test]
fn without_ecmp_every_flow_between_pods_takes_the_first_aggregation_switch_and_core() {
    let r = built(&fat_tree(4, "", false, &between_pods(4)), 1);
    assert_eq!(r.sim.flows.len(), 8 * 6 * 4);
    for f in &r.sim.flows {
        for route in f.routes {
            assert_eq!(core_of(&nodes_of(&r, route), 4), (0, 0, 0));
        }
    }
    // One route per ordered pair of hosts, as before (every pair here has flows both ways).
    let pairs: BTreeSet<(&str, &str)> = r.sim.flows.iter().flat_map(|f| [(f.info.src.as_str(), f.info.dst.as_str()), (f.info.dst.as_str(), f.info.src.as_str())]).collect();
    assert_eq!(pairs.len(), r.sim.flows.len());
    assert_eq!(r.sim.fabric.route_count(), pairs.len());
}

#[test]
fn the_shipped_fat_tree_sends_every_flow_between_pods() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/tcplab/scenarios/topologies/fat_tree.toml");
    let r = built(&std::fs::read_to_string(path).unwrap(), 1);
    assert_eq!(r.resolved.hosts.iter().map(|h| h.count.unwrap_or(1)).sum::<u32>(), 16);
    assert_eq!(r.resolved.switches.len(), 20);
    assert!(r.resolved.routing.ecmp);
    assert_eq!(r.sim.flows.len(), 16, "one flow per host");
    let srcs: BTreeSet<&str> = r.sim.flows.iter().map(|f| f.info.src.as_str()).collect();
    let dsts: BTreeSet<&str> = r.sim.flows.iter().map(|f| f.info.dst.as_str()).collect();
    assert_eq!((srcs.len(), dsts.len()), (16, 16), "a permutation");
    for f in &r.sim.flows {
        for route in f.routes {
            core_of(&nodes_of(&r, route), 4);
        }
    }
}

#[test]
fn a_fat_tree_run_with_ecmp_completes_and_crosses_several_cores() {
    // Every host of pod p sends 300 KB to its peer in pod p + 1.
    let flows = (0..4)
        .flat_map(|p| (0..2).map(move |e| format!("[[flows]]\nname = \"f{p}{e}\"\nsrc = \"ft.p{p}.h{e}\"\ndst = \"ft.p{}.h{e}\"\nbulk = {{ bytes = \"300KB\" }}\n", (p + 1) % 4)))
        .collect::<String>();
    let text = fat_tree(4, "", true, &flows).replace("duration = \"10ms\"", "stop = \"flows-done\"");
    let r = run(&text, 1);
    let s = r.sim.summary();
    assert_eq!(s.flows.len(), 16);
    assert!(s.flows.iter().all(|f| f.finish_s.is_some() && f.bytes_delivered == 300_000), "every flow completes");
    // What each core carried down into the pods.
    let mut down = [0u64; 4];
    for q in s.queues.iter().filter(|q| q.name.starts_with("ft.core")) {
        down[index_after(&q.name, ".core") as usize] += q.departed;
    }
    assert!(down.iter().filter(|&&d| d > 0).count() >= 3, "{down:?}");
}
