//! Workloads (`kind = "workload"`): flows made at run time from a Poisson stream of arrivals,
//! sizes drawn from a distribution and host pairs drawn from groups; their ideal transfer
//! times; the stop rules that wait for flows not made yet; refused tables.

use super::tests::{error_of, run};
use super::Run;
use crate::units::SimTime;

/// Eight hosts `h.0`…`h.7` on one switch (1 Gb/s, 10 µs links) and a workload `w` among them.
fn text(workload: &str, run: &str) -> String {
    format!(
        r#"
name = "wl"
[run]
{run}
[[hosts]]
name = "h"
count = 8
[[switches]]
name = "s"
[[links]]
between = ["h", "s"]
rate = "1Gbps"
delay = "10us"
queue = "100pkts"
[[flows]]
name = "w"
kind = "workload"
src = "h"
dst = "h"
workload = {{ {workload} }}
"#
    )
}

fn flows(r: &Run) -> Vec<serde_json::Value> {
    let s: serde_json::Value = serde_json::from_str(&r.summary_json()).unwrap();
    s["summary"]["flows"].as_array().cloned().unwrap_or_else(|| s["flows"].as_array().unwrap().clone())
}

#[test]
fn poisson_flows_are_made_at_run_time_and_all_finish() {
    let t = text(r#"flows = 200, rate = 200.0, sizes = { dist = "fixed", bytes = "20KB" }"#, r#"stop = "flows-done""#);
    let mut r = Run::from_toml(&t, Some(3)).unwrap();
    assert_eq!(r.sim.flows.len(), 0, "no flow exists before its arrival");
    r.sim.advance(SimTime::from_secs_f64(0.25));
    let early = r.sim.flows.len();
    assert!((20..=80).contains(&early), "about 50 flows arrive in the first 0.25 s at 200/s: {early}");
    r.sim.run();
    let fs = flows(&r);
    assert_eq!(fs.len(), 200);
    assert_eq!(format!("{:?}", r.sim.stop_reason()), "FlowsDone");
    let mut last_start = 0.0;
    for (k, f) in fs.iter().enumerate() {
        assert_eq!(f["name"], format!("w.{k}"));
        assert_ne!(f["src"], f["dst"], "no flow to its own host");
        assert_eq!(f["bytes_delivered"], 20_000);
        let start = f["start_s"].as_f64().unwrap();
        assert!(start >= last_start, "flows are made in arrival order");
        last_start = start;
        let fct = f["finish_s"].as_f64().unwrap() - start;
        let ideal = f["ideal_fct_s"].as_f64().unwrap();
        assert!(fct >= ideal, "{}: fct {fct} below its ideal {ideal}", f["name"]);
    }
    // 199 exponential gaps of mean 5 ms: their mean within 4 standard errors.
    let mean_gap = last_start / 199.0;
    let first = fs[0]["start_s"].as_f64().unwrap();
    let mean_gap = mean_gap - first / 199.0;
    assert!((mean_gap - 0.005).abs() < 4.0 * 0.005 / 199f64.sqrt(), "mean gap {mean_gap}");
}

/// The ideal of a one-segment transfer is 40 µs of handshake propagation + 4 line times of an
/// option-less 40-byte SYN (0.32 µs) + 20 µs + 2 × 8.32 µs for the 1,040-byte segment =
/// 77.92 µs; on the idle path the transfer takes about a microsecond more: the SYNs' options,
/// the handshake's ACK ahead of the data and the FIN behind it (40 bytes: 0.32 µs each).
#[test]
fn ideal_fct_is_the_idle_transfer_time() {
    let t = text(r#"flows = 3, arrivals = "periodic", rate = 10.0, sizes = { dist = "fixed", bytes = "1000B" }"#, r#"stop = "flows-done""#);
    let r = run(&t, 1);
    for f in flows(&r) {
        let ideal = f["ideal_fct_s"].as_f64().unwrap();
        assert!((ideal - 77.92e-6).abs() < 1e-12, "{ideal}");
        let fct = f["finish_s"].as_f64().unwrap() - f["start_s"].as_f64().unwrap();
        assert!(fct > ideal && fct - ideal < 1.2e-6, "fct {fct}, ideal {ideal}");
    }
}

#[test]
fn load_sets_the_rate_and_pairs_follow_the_permutation() {
    // 10 % of 8 × 1 Gb/s in 100 kB flows: 1,000 flows per second.
    let t = text(r#"flows = 400, load = 0.1, pairs = "permutation", sizes = { dist = "fixed", bytes = "100KB" }"#, r#"stop = "flows-done""#);
    let r = run(&t, 5);
    let fs = flows(&r);
    let span = fs[399]["start_s"].as_f64().unwrap() - fs[0]["start_s"].as_f64().unwrap();
    let gap = span / 399.0;
    assert!((gap - 1e-3).abs() < 4.0 * 1e-3 / 399f64.sqrt(), "mean gap {gap}");
    let mut to = std::collections::BTreeMap::new();
    for f in &fs {
        let (s, d) = (f["src"].as_str().unwrap().to_string(), f["dst"].as_str().unwrap().to_string());
        assert_ne!(s, d);
        assert_eq!(to.entry(s.clone()).or_insert(d.clone()), &d, "{s} sends to one destination");
    }
    let mut dests: Vec<_> = to.values().cloned().collect();
    dests.sort();
    dests.dedup();
    assert_eq!(dests.len(), to.len(), "a permutation: every destination once");
}

#[test]
fn same_seed_same_run_and_the_seed_moves_the_draws() {
    let t = text(r#"flows = 60, rate = 500.0, sizes = { dist = "cdf", cdf = "web-search" }"#, r#"duration = "0.5s""#);
    let a = run(&t, 9).summary_json();
    assert_eq!(a, run(&t, 9).summary_json());
    assert_ne!(a, run(&t, 10).summary_json());
}

/// A run that stops when the flows are done waits for flows not made yet, and no longer for
/// those a `stop` time keeps from being made.
#[test]
fn flows_done_waits_for_arrivals_and_stop_ends_them() {
    let t = text(r#"flows = 1000, rate = 100.0, sizes = { dist = "fixed", bytes = "10KB" }"#, r#"stop = "flows-done""#).replace("workload = {", "stop = \"0.5s\"\nworkload = {");
    let r = run(&t, 2);
    let n = flows(&r).len();
    assert!((25..=80).contains(&n), "about 50 arrivals before 0.5 s: {n}");
    assert_eq!(format!("{:?}", r.sim.stop_reason()), "FlowsDone");
    assert!(r.sim.now() < SimTime::from_secs_f64(0.6));
}

#[test]
fn bulk_flows_of_known_size_have_an_ideal_too() {
    let t = r#"
name = "b"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "100Mbps"
delay = "1ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = { bytes = "1MB" }
[[flows]]
name = "g"
src = "a"
dst = "b"
stop = "1s"
"#;
    let r = run(t, 1);
    let fs = flows(&r);
    // 685 segments: 3 ms of propagation (SYN, SYN-ACK, data) and 685 × 1500 B + 3,200 B
    // of line time… at least the payload's 80 ms at 100 Mb/s.
    let ideal = fs[0]["ideal_fct_s"].as_f64().unwrap();
    assert!(ideal > 0.003 + 0.08 && ideal < 0.003 + 0.0825, "{ideal}");
    assert!(fs[1]["ideal_fct_s"].is_null(), "no size, no ideal");
}

#[test]
fn bad_workloads_are_refused_by_field() {
    let cases = [
        (r#"rate = 1.0, sizes = { dist = "fixed", bytes = "1KB" }"#, "flows[0].workload.flows: required"),
        (r#"flows = 5, rate = 1.0, load = 0.5, sizes = { dist = "fixed", bytes = "1KB" }"#, "flows[0].workload.load: give rate"),
        (r#"flows = 5, sizes = { dist = "fixed", bytes = "1KB" }"#, "flows[0].workload.rate: required"),
        (r#"flows = 5, rate = 1.0"#, "flows[0].workload.sizes: required"),
        (r#"flows = 5, rate = 1.0, sizes = { dist = "fixed", mean = "1KB" }"#, "flows[0].workload.sizes.mean: not a key of dist = \"fixed\""),
        (r#"flows = 5, rate = 1.0, sizes = { dist = "pareto", mean = "1KB", shape = 1.0 }"#, "flows[0].workload.sizes.shape: 1 is out of range"),
        (r#"flows = 5, rate = 1.0, sizes = { dist = "cdf" }"#, "flows[0].workload.sizes.cdf: dist = \"cdf\" needs"),
        (r#"flows = 5, rate = 1.0, sizes = { dist = "cdf", points = [[10, 0.5], [5, 1.0]] }"#, "flows[0].workload.sizes.points: point 1"),
        (r#"flows = 5, rate = -1.0, sizes = { dist = "fixed", bytes = "1KB" }"#, "flows[0].workload.rate: -1 is out of range"),
        (r#"flows = 5, rate = 1.0, sizes = { dist = "fixed", bytes = "1KB" }, nonsense = 1"#, "nonsense"),
    ];
    for (w, want) in cases {
        let e = error_of(&text(w, r#"duration = "1s""#));
        assert!(e.contains(want), "{w}: {e}");
    }
    let e = error_of(
        &text(r#"flows = 5, rate = 1.0, sizes = { dist = "fixed", bytes = "1KB" }"#, r#"duration = "1s""#).replace("kind = \"workload\"", "kind = \"workload\"\ncount = 2"),
    );
    assert!(e.contains("flows[0].count"), "{e}");
}

/// Finished flows release their connections (both ends closed), and the summary reads the
/// same from what they keep as from the live connections.
#[test]
fn finished_flows_release_their_connections_and_results_do_not_change() {
    let t = text(r#"flows = 150, rate = 300.0, sizes = { dist = "pareto", mean = "30KB", shape = 1.5 }"#, r#"stop = "flows-done""#);
    let r = run(&t, 4);
    let retired = r.sim.flows.iter().filter(|f| matches!(f.engine, crate::flow::FlowEngine::Retired(_))).count();
    // The run stops when the last flow's FIN arrives, before that flow's ends have closed.
    assert_eq!(retired, 149, "every flow but the last finished and closed");
    let mut kept = Run::from_toml(&t, Some(4)).unwrap();
    kept.sim.keep_connections();
    kept.sim.run();
    assert!(kept.sim.flows.iter().all(|f| matches!(f.engine, crate::flow::FlowEngine::Tcp(_))));
    assert_eq!(r.summary_json(), kept.summary_json());
    eprintln!("TcpFlow {} bytes inline (+ its buffers), RetiredTcp {} bytes", std::mem::size_of::<crate::flow::TcpFlow>(), std::mem::size_of::<crate::flow::RetiredTcp>());
}

/// An on/off UDP flow (`cbr.on_off`) from h.0 to h.1.
fn on_off(table: &str) -> String {
    text(r#"flows = 1, rate = 1.0, sizes = { dist = "fixed", bytes = "1KB" }"#, r#"duration = "2s""#).replace(
        "[[flows]]",
        &format!("[[flows]]\nname = \"u\"\nkind = \"udp-cbr\"\nsrc = \"h.0\"\ndst = \"h.1\"\ncbr = {{ rate = \"12Mbps\", packet_size = \"1500B\", on_off = {{ {table} }} }}\n\n[[flows]]"),
    )
}

#[test]
fn on_off_sources_send_in_bursts() {
    // Fixed 10 ms on, 30 ms off at one datagram per ms: 10 per 40 ms, 500 in 2 s, and the
    // first of the next burst at 2 s itself (events at the stop time still happen).
    let r = run(&on_off(r#"on = "10ms", off = "30ms", periods = "fixed""#), 1);
    let u = &flows(&r)[0];
    assert_eq!(u["name"], "u");
    assert_eq!(u["segments_sent"], 501);
    // Exponential periods of the same means: a quarter of the time on, loosely (2 s: 50
    // cycles), and the draws follow the seed.
    let e = |seed| flows(&run(&on_off(r#"on = "10ms", off = "30ms""#), seed))[0]["segments_sent"].as_u64().unwrap();
    let (a, b) = (e(1), e(2));
    assert!((200..=900).contains(&a) && a != b, "{a} {b}");
    assert_eq!(a, e(1));
    for (table, want) in [
        (r#"on = "10ms", off = "30ms", shape = 2.0"#, "flows[0].cbr.on_off.shape: only for periods = \"pareto\""),
        (r#"on = "10ms", off = "30ms", periods = "pareto""#, "flows[0].cbr.on_off.shape: periods = \"pareto\" needs shape"),
        (r#"on = "0s", off = "30ms""#, "flows[0].cbr.on_off.on: must be longer than 0s"),
        (r#"on = "10ms""#, "off"),
    ] {
        let e = error_of(&on_off(table));
        assert!(e.contains(want), "{table}: {e}");
    }
}

/// With ECMP a made flow takes the route its 5-tuple hashes to: 400 flows from one leaf's
/// hosts to another's spread over the 4 spines, each direction on its own (Binomial(400, ¼)
/// per spine: 100 ± 6σ, σ ≈ 8.7).
#[test]
fn workload_flows_hash_over_ecmp_routes() {
    let t = r#"
name = "ls"
[run]
stop = "flows-done"
[routing]
ecmp = true
[[topologies]]
kind = "leaf-spine"
name = "ls"
leaves = 2
spines = 4
hosts_per_leaf = 4
host_link = { rate = "10Gbps", delay = "1us" }
fabric_link = { rate = "40Gbps", delay = "1us" }
[[flows]]
name = "w"
kind = "workload"
src = "ls.h0"
dst = "ls.h1"
workload = { flows = 400, rate = 20000.0, sizes = { dist = "fixed", bytes = "20KB" } }
"#;
    let mut r = Run::from_toml(t, Some(8)).unwrap();
    r.sim.keep_connections();
    r.sim.run();
    assert_eq!(flows(&r).iter().filter(|f| f["finish_s"].is_number()).count(), 400);
    let spine = |route| {
        let names: Vec<String> = r.sim.route_pipes(route).iter().map(|p| r.sim.fabric.pipes[p.0 as usize].name.clone()).collect();
        (0..4).find(|k| names.iter().any(|n| n.contains(&format!("spine{k}")))).expect("every cross-leaf route crosses a spine")
    };
    let mut up = [0u32; 4];
    let mut same = 0;
    for f in &r.sim.flows {
        let (a, b) = (spine(f.routes[0]), spine(f.routes[1]));
        up[a] += 1;
        same += u32::from(a == b);
    }
    for n in up {
        assert!((48..=152).contains(&n), "{up:?}");
    }
    assert!((48..=152).contains(&same), "the reverse direction hashes on its own: {same}");
}
