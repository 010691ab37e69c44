//! Topology generators (`[[topologies]]`) and equal-cost multipath (`[routing] ecmp`) as
//! scenarios declare them: what the generators expand to, the resolved file, the errors, and
//! the routes ECMP gives flows (shortest only, seeded, per 5-tuple, per hop, per direction).

use std::collections::BTreeMap;

use super::tests::{error_of, run};
use super::*;

/// A leaf-spine of `leaves` × `spines` with `hosts` per leaf and ECMP `ecmp`; `flows` appended.
fn leaf_spine(leaves: u32, spines: u32, hosts: u32, ecmp: bool, flows: &str) -> String {
    format!(
        r#"
name = "ls"
[run]
duration = "10ms"
[routing]
ecmp = {ecmp}
[[topologies]]
kind = "leaf-spine"
name = "ls"
leaves = {leaves}
spines = {spines}
hosts_per_leaf = {hosts}
host_link = {{ rate = "10Gbps", delay = "1us" }}
fabric_link = {{ rate = "40Gbps", delay = "1us", queue = "200pkts" }}
{flows}
"#
    )
}

/// The spine each direction of each flow crosses (`[forward, reverse]`), read off its route's
/// pipe names (`ls.leafI->ls.spineJ` going up).
fn spines_of(r: &Run) -> Vec<[u32; 2]> {
    let sim = &r.sim;
    sim.flows
        .iter()
        .map(|f| {
            f.routes.map(|route| {
                let names: Vec<&str> = sim.route_pipes(route).iter().map(|p| sim.fabric.pipes[p.0 as usize].name.as_str()).collect();
                assert_eq!(names.len(), 4, "host->leaf->spine->leaf->host: {names:?}");
                let up = names[1];
                assert!(up.contains("->ls.spine"), "{names:?}");
                up.rsplit("ls.spine").next().unwrap().parse().unwrap()
            })
        })
        .collect()
}

fn built(text: &str, seed: u64) -> Run {
    Run::from_toml(text, Some(seed)).unwrap_or_else(|e| panic!("{e}"))
}

const ALL_TO_ALL: &str = "[[flows]]\nname = \"f\"\nsrc = \"ls.h0\"\ndst = \"ls.h1\"\npattern = \"all-to-all\"\n";

#[test]
fn dumbbell_of_eight_flows_is_under_fifteen_lines_and_expands_to_groups() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/tcplab/scenarios/topologies/dumbbell8.toml");
    let text = std::fs::read_to_string(path).unwrap();
    assert!(text.lines().count() < 15, "{} lines", text.lines().count());
    let r = built(&text, 1);
    let hosts: Vec<(&str, Option<u32>)> = r.resolved.hosts.iter().map(|h| (h.name.as_str(), h.count)).collect();
    assert_eq!(hosts, [("d.src", Some(8)), ("d.dst", Some(8))]);
    let switches: Vec<&str> = r.resolved.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(switches, ["d.left", "d.right"]);
    let links: Vec<[&str; 2]> = r.resolved.links.iter().map(|l| [l.between[0].as_str(), l.between[1].as_str()]).collect();
    assert_eq!(links, [["d.src", "d.left"], ["d.left", "d.right"], ["d.right", "d.dst"]]);
    assert_eq!(r.resolved.links[1].queue_a, spec::QueueSpec::Limit(spec::QLimit(crate::units::QueueLimit::Packets(1700))));
    assert_eq!(r.sim.flows.len(), 8);
    assert_eq!((r.sim.flows[7].info.src.as_str(), r.sim.flows[7].info.dst.as_str()), ("d.src.7", "d.dst.7"));
    // 8 host links a side, one bottleneck: 2 × 17 pipes are queues.
    assert!(r.sim.summary().queues.iter().any(|q| q.name == "d.left->d.right"));
    assert_eq!(r.sim.summary().queues.len(), 2 * (8 + 1 + 8));
}

#[test]
fn generators_expand_to_counted_hosts_switches_and_links() {
    let r = built(
        r#"
name = "gen"
[run]
duration = "1s"
[[hosts]]
name = "extra"
[[links]]
between = ["extra", "p.r1"]
rate = "1Gbps"
[[topologies]]
kind = "parking-lot"
name = "p"
hops = 3
host_link = { rate = "1Gbps" }
bottleneck = { rate = "100Mbps", delay = "5ms" }
[[topologies]]
kind = "leaf-spine"
name = "ls"
leaves = 4
spines = 3
hosts_per_leaf = 5
host_link = { rate = "10Gbps" }
fabric_link = { rate = "40Gbps", framing = "38B" }
[[topologies]]
kind = "dumbbell"
name = "d"
senders = 2
receivers = 3
host_link = { rate = "1Gbps" }
bottleneck = { rate = "100Mbps" }
[[flows]]
name = "long"
src = "p.src"
dst = "p.dst"
[[flows]]
name = "x"
src = "extra"
dst = "p.x2.dst"
"#,
        1,
    );
    let res = &r.resolved;
    // Declared first, then each topology in order.
    assert_eq!(res.hosts[0].name, "extra");
    let hosts: Vec<&str> = res.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(hosts, ["extra", "p.src", "p.dst", "p.x0.src", "p.x0.dst", "p.x1.src", "p.x1.dst", "p.x2.src", "p.x2.dst", "ls.h0", "ls.h1", "ls.h2", "ls.h3", "d.src", "d.dst"]);
    assert_eq!(res.hosts.iter().map(|h| h.count.unwrap_or(1)).sum::<u32>(), 1 + 8 + 4 * 5 + 2 + 3);
    let switches: Vec<&str> = res.switches.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(switches, ["p.r0", "p.r1", "p.r2", "p.r3", "ls.leaf0", "ls.leaf1", "ls.leaf2", "ls.leaf3", "ls.spine0", "ls.spine1", "ls.spine2", "d.left", "d.right"]);
    // Parking lot: 2 long-flow host links, 3 hops, 6 cross host links; leaf-spine: 4 group
    // links and 12 fabric links; dumbbell: 3.
    assert_eq!(res.links.len(), 1 + (2 + 3 + 6) + (4 + 12) + 3);
    assert_eq!(res.links[1].between, ["p.src".to_string(), "p.r0".to_string()]);
    assert_eq!(res.links[2].between, ["p.r0".to_string(), "p.r1".to_string()]);
    assert_eq!(res.links[6].between, ["p.x0.src".to_string(), "p.r0".to_string()]);
    assert_eq!(res.links[7].between, ["p.r1".to_string(), "p.x0.dst".to_string()]);
    let fabric: Vec<_> = res.links.iter().filter(|l| l.between[1].starts_with("ls.spine")).collect();
    assert_eq!(fabric.len(), 12);
    assert!(fabric.iter().all(|l| l.framing.0 == 38 && l.rate.0.bps() == 40_000_000_000));
    // The long flow crosses every hop: 5 links.
    assert_eq!(r.sim.route_pipes(r.sim.flows[0].routes[0]).len(), 5);
    assert!(!r.resolved_toml().contains("topologies"));
}

#[test]
fn the_resolved_scenario_lists_the_generated_elements_and_parses_back_to_itself() {
    let text = leaf_spine(2, 2, 3, true, ALL_TO_ALL);
    let a = built(&text, 4);
    let resolved = a.resolved_toml();
    assert!(!resolved.contains("topologies"), "{resolved}");
    assert!(resolved.contains("[routing]\necmp = true"), "{resolved}");
    assert!(resolved.contains("name = \"ls.spine1\""));
    let b = Run::from_toml(&resolved, None).unwrap();
    assert_eq!(b.resolved, a.resolved);
    assert_eq!(b.resolved_toml(), resolved);
    assert_eq!(b.hash, a.hash);
    assert_eq!(spines_of(&a), spines_of(&b));
    // With ECMP off (or no [routing] at all) no routing table is written: such scenarios
    // resolve and hash as before the table existed.
    let off = leaf_spine(2, 2, 3, false, ALL_TO_ALL);
    assert!(off.contains("[routing]\necmp = false\n"));
    for text in [off.clone(), off.replace("[routing]\necmp = false\n", "")] {
        assert!(!built(&text, 1).resolved_toml().contains("routing"));
    }
}

#[test]
fn generator_errors_name_the_field() {
    let base = |kind: &str, keys: &str| format!("name = \"t\"\n[[topologies]]\nkind = \"{kind}\"\nname = \"g\"\nhost_link = {{ rate = \"1Gbps\" }}\n{keys}\n");
    let fabric = "fabric_link = { rate = \"1Gbps\" }";
    let cases: Vec<(String, &str)> = vec![
        (base("leaf-spine", &format!("leaves = 2\nspines = 0\nhosts_per_leaf = 1\n{fabric}")), "topologies[0].spines: must be at least 1"),
        (base("leaf-spine", &format!("leaves = 2\nhosts_per_leaf = 1\n{fabric}")), "topologies[0].spines: required"),
        (base("leaf-spine", "leaves = 2\nspines = 1\nhosts_per_leaf = 1"), "topologies[0].fabric_link: required"),
        (base("leaf-spine", &format!("leaves = 2\nspines = 2000\nhosts_per_leaf = 1\n{fabric}")), "topologies[0].spines: 2000 is more than 1024"),
        (base("leaf-spine", &format!("leaves = 1024\nspines = 1024\nhosts_per_leaf = 1\n{fabric}")), "topologies[0].spines: 1024 leaves × 1024 spines"),
        (base("leaf-spine", &format!("leaves = 2\nspine = 2\nhosts_per_leaf = 1\n{fabric}")), "topologies[0].spine: unknown field `spine`"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }\nspines = 3"), "topologies[0].spines: only for kind = \"leaf-spine\", not \"dumbbell\""),
        (base("parking-lot", "hops = 2\nbottleneck = { rate = \"1Gbps\" }\nsenders = 3"), "topologies[0].senders: only for kind = \"dumbbell\", not \"parking-lot\""),
        (base("dumbbell", "senders = 0\nbottleneck = { rate = \"1Gbps\" }"), "topologies[0].senders: must be at least 1"),
        (base("dumbbell", "senders = 2\nreceivers = 0\nbottleneck = { rate = \"1Gbps\" }"), "topologies[0].receivers: must be at least 1"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\", rtt = \"1ms\" }"), "topologies[0].bottleneck.rtt: unknown field `rtt`"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\", queue = 40 }"), "topologies[0].bottleneck.queue: 40 has no unit"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\", queue = { classes = [] } }"), "topologies[0].bottleneck.queue.classes: give 1 to 8 class limits"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\", framing = \"2000B\" }"), "topologies[0].bottleneck.framing: 2000 bytes per packet"),
        (base("dumbbell", "senders = 2"), "topologies[0].bottleneck: required"),
        (base("parking-lot", "bottleneck = { rate = \"1Gbps\" }"), "topologies[0].hops: required"),
        (base("ring", ""), "topologies[0].kind: unknown variant `ring`"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }").replace("name = \"g\"", "name = \"a->b\""), "topologies[0].name: 'a->b.src' contains '->'"),
        (base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }").replace("name = \"g\"", "name = \" \""), "topologies[0].name: must not be empty"),
        ("name = \"t\"\n[[topologies]]\nkind = \"dumbbell\"\nname = \"g\"\nsenders = 1\nbottleneck = { rate = \"1Gbps\" }\n".to_string(), "topologies[0].host_link: required"),
        // Generated names that collide: with a declared node, a declared group's member, another topology's.
        (format!("{}[[switches]]\nname = \"g.left\"\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "topologies[0].name: generates the switch 'g.left', already the name of a switch"),
        (format!("{}[[hosts]]\nname = \"g.src.1\"\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "topologies[0].name: generates the host group 'g.src', whose member 'g.src.1' is already the name of a host"),
        (format!("{}[[hosts]]\nname = \"g.r1\"\n", base("parking-lot", "hops = 1\nbottleneck = { rate = \"1Gbps\" }")), "topologies[0].name: generates the switch 'g.r1', already the name of a host"),
        (
            format!("{}[[topologies]]\nkind = \"dumbbell\"\nname = \"g\"\nsenders = 1\nhost_link = {{ rate = \"1Gbps\" }}\nbottleneck = {{ rate = \"1Gbps\" }}\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")),
            "topologies[1].name: generates the host group 'g.src', already the name of a host group",
        ),
        // A declared link that a generated one repeats.
        (format!("{}[[links]]\nbetween = [\"g.left\", \"g.right\"]\nrate = \"1Gbps\"\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "topologies[0].bottleneck: links[0] already joins 'g.left' and 'g.right'"),
        // A declared element keeps its own path.
        (format!("{}[[links]]\nbetween = [\"g.left\", \"nowhere\"]\nrate = \"1Gbps\"\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "links[0].between[1]: no host, switch or emulator is named 'nowhere'"),
        // [routing]
        (format!("{}[routing]\necmp = true\nhash = \"crc\"\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "routing.hash: unknown field `hash`"),
        (format!("{}[routing]\necmp = 1\n", base("dumbbell", "senders = 2\nbottleneck = { rate = \"1Gbps\" }")), "routing.ecmp: invalid type"),
        (
            "name = \"t\"\n[routing]\necmp = true\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"149.76Mbps\"\nlink_layer = \"aal5\"\n".to_string(),
            "routing.ecmp: not with AAL5 links (links[0])",
        ),
    ];
    for (text, want) in cases {
        let got = error_of(&text);
        assert!(got.starts_with(want), "got: {got}\nwant: {want}\n{text}");
    }
}

#[test]
fn ecmp_picks_only_shortest_paths_and_spreads_flows_over_the_spines() {
    // 32 × 32 = 1024 flows between two leaves (no host to itself: different groups).
    let r = built(&leaf_spine(4, 4, 32, true, ALL_TO_ALL), 1);
    assert_eq!(r.sim.flows.len(), 1024);
    let spines = spines_of(&r); // asserts every route is 4 links: host, up, down, host
    for e in 0..2 {
        let mut count = [0u32; 4];
        for s in &spines {
            count[s[e] as usize] += 1;
        }
        // Each spine's share is Binomial(1024, 1/4) if the hash behaves as a uniform draw:
        // 256 ± 6σ, σ = √(1024·¼·¾) ≈ 13.9 (a false failure ~10⁻⁸ per spine).
        let sigma = (1024.0f64 * 0.25 * 0.75).sqrt();
        for c in count {
            assert!((f64::from(c) - 256.0).abs() < 6.0 * sigma, "direction {e}: {count:?}");
        }
    }
    // The two directions hash their own tuples: the reverse takes the forward's spine about
    // a quarter of the time (256 ± 6σ), not always.
    let same = spines.iter().filter(|s| s[0] == s[1]).count() as f64;
    assert!((same - 256.0).abs() < 6.0 * (1024.0f64 * 0.25 * 0.75).sqrt(), "{same}");
    // Routes are shared between flows whose hashes agree, never more than one per distinct path.
    let distinct: std::collections::BTreeSet<_> = r.sim.flows.iter().flat_map(|f| f.routes.map(|x| r.sim.route_pipes(x).to_vec())).collect();
    assert_eq!(distinct.len(), r.sim.fabric.route_count());
}

#[test]
fn ecmp_is_deterministic_for_a_seed_and_varies_with_the_seed_and_the_tuple() {
    let text = leaf_spine(2, 4, 8, true, ALL_TO_ALL);
    let a = spines_of(&built(&text, 1));
    assert_eq!(a, spines_of(&built(&text, 1)));
    let b = spines_of(&built(&text, 2));
    let moved = a.iter().zip(&b).filter(|(x, y)| x != y).count();
    // With 4 spines a direction keeps its spine with probability 1/4: of 64 flows, about 60
    // change (in one direction or both).
    assert!(moved > 40, "{moved} of {} flows changed", a.len());
    // One pair of hosts, 64 flows: only their ports differ, and they use every spine.
    let pair = spines_of(&built(&leaf_spine(2, 4, 1, true, "[[flows]]\nname = \"f\"\nsrc = \"ls.h0.0\"\ndst = \"ls.h1.0\"\ncount = 64\n"), 1));
    let used: std::collections::BTreeSet<u32> = pair.iter().map(|s| s[0]).collect();
    assert_eq!(used.len(), 4, "{pair:?}");
}

#[test]
fn without_ecmp_every_flow_takes_the_first_declared_spine() {
    let r = built(&leaf_spine(4, 4, 4, false, ALL_TO_ALL), 1);
    assert!(spines_of(&r).iter().all(|s| *s == [0, 0]));
    // One route per ordered pair of hosts, as before.
    assert_eq!(r.sim.fabric.route_count(), 2 * 16);
}

#[test]
fn every_switch_hashes_on_its_own() {
    // a - s1 = {m1, m2} - s2 = {n1, n2} - s3 - b: two choice points on each path.
    let mut text = String::from("name = \"two\"\n[run]\nduration = \"1s\"\n[routing]\necmp = true\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n");
    for s in ["s1", "m1", "m2", "s2", "n1", "n2", "s3"] {
        text += &format!("[[switches]]\nname = \"{s}\"\n");
    }
    for (x, y) in [("a", "s1"), ("s1", "m1"), ("s1", "m2"), ("m1", "s2"), ("m2", "s2"), ("s2", "n1"), ("s2", "n2"), ("n1", "s3"), ("n2", "s3"), ("s3", "b")] {
        text += &format!("[[links]]\nbetween = [\"{x}\", \"{y}\"]\nrate = \"1Gbps\"\n");
    }
    text += "[[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\ncount = 200\n";
    let r = built(&text, 3);
    let mut combos: BTreeMap<(String, String), u32> = BTreeMap::new();
    for f in &r.sim.flows {
        let names: Vec<String> = r.sim.route_pipes(f.routes[0]).iter().map(|p| r.sim.fabric.pipes[p.0 as usize].name.clone()).collect();
        assert_eq!(names.len(), 6, "{names:?}");
        *combos.entry((names[1].clone(), names[3].clone())).or_default() += 1;
    }
    // All four combinations of the two choices occur, each near 50 (a shared hash would give
    // two at most).
    assert_eq!(combos.len(), 4, "{combos:?}");
    assert!(combos.values().all(|&c| (20..=80).contains(&c)), "{combos:?}");
}

#[test]
fn a_leaf_spine_run_with_ecmp_completes_and_uses_several_spines() {
    let flows = (0..4).map(|i| format!("[[flows]]\nname = \"f{i}\"\nsrc = \"ls.h{i}\"\ndst = \"ls.h{}\"\nbulk = {{ bytes = \"300KB\" }}\n", (i + 1) % 4)).collect::<String>();
    let text = leaf_spine(4, 4, 4, true, &flows).replace("duration = \"10ms\"", "stop = \"flows-done\"");
    let r = run(&text, 1);
    let s = r.sim.summary();
    assert_eq!(s.flows.len(), 16);
    assert!(s.flows.iter().all(|f| f.finish_s.is_some() && f.bytes_delivered == 300_000), "every flow completes");
    // What each spine carried up from the leaves.
    let mut up = [0u64; 4];
    for q in s.queues.iter().filter(|q| q.name.contains("->ls.spine")) {
        up[q.name.rsplit("ls.spine").next().unwrap().parse::<usize>().unwrap()] += q.departed;
    }
    assert!(up.iter().filter(|&&d| d > 0).count() >= 3, "{up:?}");
    assert_eq!(s.packets.queue_drops + s.packets.random_drops, 0);
}
