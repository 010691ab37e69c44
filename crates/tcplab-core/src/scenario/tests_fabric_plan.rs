//! The fabric's planning — packets passed on through pipe chains without events, and merges
//! that admit many senders' arrivals in batches — changes no result against a hop-by-hop run.

use super::tests::run;
use super::*;

/// Summary without the figures that depend on how the run was executed.
fn outcome(r: &Run) -> serde_json::Value {
    let mut v = serde_json::to_value(r.sim.summary()).expect("summary serializes");
    v["events"].take();
    v["wall_time_s"].take();
    v
}

/// The values that differ between the pass-on and merge tests' common topology.
struct SharedSwitch {
    duration: &'static str,
    queue: &'static str,
    /// Host jitter of sender `a`.
    jitter: &'static str,
    wan_delay: &'static str,
    wan_loss: f64,
    /// (rate, delay) of the links from `a`, `b` and `c` to `s1`.
    access: [(&'static str, &'static str); 3],
    /// (rate, delay) of the shared port `s1 -> wan`.
    port: (&'static str, &'static str),
    /// Rate of the last link, `s2 -> d`.
    exit_rate: &'static str,
    /// Start of flow `h` (from `c`).
    h_start: &'static str,
    /// More `[[flows]]` tables.
    extra_flows: &'static str,
}

/// Three senders share switch `s1`: `a` (with host jitter) runs flow `f`, `b` two flows `g`,
/// `c` flow `h` (starting later) and `extra_flows`; an emulator `wan` with random loss sits
/// between `s1` and `s2`, and `d` receives everything. Throughput, cwnd and event traces on.
fn shared_switch(k: &SharedSwitch) -> String {
    let SharedSwitch { duration, queue, jitter, wan_delay, wan_loss, access, port, exit_rate, h_start, extra_flows } = k;
    let [(ra, da), (rb, db), (rc, dc)] = access;
    let (rp, dp) = port;
    format!(
        r#"
name = "shared-switch"
[run]
duration = "{duration}"
[defaults]
queue = "{queue}"
[defaults.tcp]
cc = "newreno"
[[hosts]]
name = "a"
jitter = "{jitter}"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[hosts]]
name = "d"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[emulators]]
name = "wan"
delay = "{wan_delay}"
loss = {wan_loss}
[[links]]
between = ["a", "s1"]
rate = "{ra}"
delay = "{da}"
[[links]]
between = ["b", "s1"]
rate = "{rb}"
delay = "{db}"
[[links]]
between = ["c", "s1"]
rate = "{rc}"
delay = "{dc}"
[[links]]
between = ["s1", "wan"]
rate = "{rp}"
delay = "{dp}"
[[links]]
between = ["wan", "s2"]
rate = "1Gbps"
[[links]]
between = ["s2", "d"]
rate = "{exit_rate}"
[[flows]]
name = "f"
src = "a"
dst = "d"
[[flows]]
name = "g"
src = "b"
dst = "d"
count = 2
[[flows]]
name = "h"
src = "c"
dst = "d"
start = "{h_start}"
{extra_flows}
[trace]
throughput_interval = "100ms"
cwnd = true
events = true
"#
    )
}

/// Run `text` as usual and with an event per hop (`Simulation::hop_by_hop`), assert that the
/// results and traces are the same and that both conserve packets; returns (usual, hop by hop).
fn same_as_hop_by_hop(text: &str, seed: u64) -> (Run, Run) {
    let fast = run(text, seed);
    let mut slow = Run::from_toml(text, Some(seed)).unwrap();
    slow.sim.hop_by_hop();
    slow.sim.run();
    assert_eq!(outcome(&fast), outcome(&slow));
    assert_eq!(fast.sim.traces.digest(), slow.sim.traces.digest());
    for r in [&fast, &slow] {
        let p = r.sim.fabric.packets;
        assert_eq!(p.created, p.delivered + p.queue_drops + p.random_drops + r.sim.packets_inside());
    }
    (fast, slow)
}

#[test]
fn passing_packets_on_without_events_changes_no_result() {
    // Three senders share an access switch; the emulator (random loss, host jitter on one
    // sender) and a small bottleneck buffer make drops on pass-on pipes and on the others.
    // No propagation delay in front of the shared port: no merge, only pass-on.
    let text = shared_switch(&SharedSwitch {
        duration: "3s",
        queue: "30pkts",
        jitter: "20us",
        wan_delay: "10ms",
        wan_loss: 0.002,
        access: [("1Gbps", "0s"); 3],
        port: ("1Gbps", "0s"),
        exit_rate: "200Mbps",
        h_start: "0.5s",
        extra_flows: "",
    });
    let (fast, slow) = same_as_hop_by_hop(&text, 3);
    let s = fast.sim.summary();
    assert!(s.queues.iter().any(|q| q.name == "s2->d" && q.dropped > 0), "the bottleneck drops");
    assert!(fast.sim.fabric.packets.random_drops > 0);
    assert!(fast.sim.events() * 10 < slow.sim.events() * 8, "{} vs {} events", fast.sim.events(), slow.sim.events());
}

#[test]
fn merging_arrivals_from_many_senders_changes_no_result() {
    // Three senders with different access delays (one with host jitter) share a switch port
    // that drops: that port takes its packets through a merge. A run stepped in pieces, with
    // the stop time falling while packets are held, must agree with one run and with a run
    // with an event per hop.
    let text = shared_switch(&SharedSwitch {
        duration: "2.5s",
        queue: "20pkts",
        jitter: "15us",
        wan_delay: "7ms",
        wan_loss: 0.001,
        access: [("1Gbps", "10us"), ("1Gbps", "23us"), ("10Gbps", "37us")],
        port: ("300Mbps", "3us"),
        exit_rate: "1Gbps",
        h_start: "0.3s",
        extra_flows: r#"[[flows]]
name = "u"
kind = "udp-cbr"
src = "c"
dst = "d"
cbr = { rate = "20Mbps", packet_size = "700B" }"#,
    });
    let (merged, slow) = same_as_hop_by_hop(&text, 5);
    let mut stepped = Run::from_toml(&text, Some(5)).unwrap();
    let mut t = crate::units::SimTime::ZERO;
    while !stepped.sim.finished() {
        t += crate::units::SimDuration::from_micros(123_457);
        stepped.sim.advance(t);
    }
    assert_eq!(outcome(&merged), outcome(&stepped));
    assert_eq!(merged.sim.traces.digest(), stepped.sim.traces.digest());
    let s = merged.sim.summary();
    assert!(s.queues.iter().any(|q| q.name == "s1->wan" && q.dropped > 20), "the merged port drops: {:?}", s.queues);
    assert!(merged.sim.fabric.packets.random_drops > 0);
    assert!(merged.sim.events() * 10 < slow.sim.events() * 7, "{} vs {} events", merged.sim.events(), slow.sim.events());
}

/// A 3-leaf, 2-spine fabric with ECMP and small fabric buffers, every host sending to every
/// host on the other leaves: each leaf uplink merges its hosts' packets, each spine port its
/// leaves' uplinks (merged pipes), each leaf downlink its spine ports (merged too).
fn small_leaf_spine(stop: &str, fabric_delay: &str) -> String {
    format!(
        r#"
name = "ls"
[run]
{stop}
[routing]
ecmp = true
[defaults.tcp]
cc = "cubic"
[[topologies]]
kind = "leaf-spine"
name = "ls"
leaves = 3
spines = 2
hosts_per_leaf = 3
host_link = {{ rate = "10Gbps", delay = "1us", queue = "15pkts" }}
fabric_link = {{ rate = "10Gbps", delay = "{fabric_delay}", queue = "12pkts" }}
[[flows]]
name = "f"
src = "ls.h0"
dst = "ls.h1"
pattern = "all-to-all"
bulk = {{ bytes = "150KB" }}
[[flows]]
name = "g"
src = "ls.h2"
dst = "ls.h0"
pattern = "all-to-all"
bulk = {{ bytes = "90KB" }}
start = "37us"
[trace]
throughput_interval = "200us"
cwnd = true
events = true
"#
    )
}

#[test]
fn merges_behind_merges_change_no_result() {
    for fabric_delay in ["3us", "700ns"] {
        let text = small_leaf_spine("duration = \"2ms\"", fabric_delay);
        let (merged, slow) = same_as_hop_by_hop(&text, 7);
        // Every fabric pipe (leaf uplink, spine port, leaf downlink) is merged or passed on:
        // uplinks merge their hosts' packets, spine ports and downlinks merged pipes' packets.
        let fabric = &merged.sim.fabric;
        assert_eq!(fabric.event_fed_pipes(), vec![], "every pipe is entered without an event");
        assert!(slow.sim.fabric.event_fed_pipes().len() > 15);
        let merged_pipes: Vec<_> = fabric.merged_pipes().collect();
        let names: Vec<&str> = merged_pipes.iter().map(|p| fabric.pipes[p.0 as usize].name.as_str()).collect();
        assert!(names.iter().any(|n| n.starts_with("ls.spine")) && names.iter().any(|n| n.starts_with("ls.leaf0->ls.h")), "{names:?}");
        let s = merged.sim.summary();
        // Ports behind merged pipes drop: the leaf downlinks where three senders meet one host.
        assert!(s.queues.iter().any(|q| q.name.starts_with("ls.leaf0->ls.h") && q.dropped > 0), "a downlink drops: {:?}", s.queues);
        assert!(merged.sim.events() * 10 < slow.sim.events() * 7, "{} vs {} events", merged.sim.events(), slow.sim.events());
        let mut stepped = Run::from_toml(&text, Some(7)).unwrap();
        let mut t = crate::units::SimTime::ZERO;
        while !stepped.sim.finished() {
            t += crate::units::SimDuration(123_457_000);
            stepped.sim.advance(t);
        }
        assert_eq!(outcome(&merged), outcome(&stepped));
        assert_eq!(merged.sim.traces.digest(), stepped.sim.traces.digest());
    }
    // A run that stops when its flows are done, with packets still held in merges.
    let text = small_leaf_spine("stop = \"flows-done\"", "3us");
    let (merged, _) = same_as_hop_by_hop(&text, 7);
    assert!(merged.sim.summary().flows.iter().all(|f| f.finish_s.is_some()));
}
