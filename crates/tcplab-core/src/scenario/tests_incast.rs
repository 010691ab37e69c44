//! Host groups, block-read flows and AHTCP as scenarios declare them (study 001): expansion,
//! the block reads' results, the resolved file, and the errors.

use super::*;
use crate::app::Milestone;

use super::tests::{error_of, run};

/// One switch, `servers` members in the group, the client's port 40 packets; `extra` is
/// appended (flow keys first, then more tables).
fn incast(servers: u32, flow: &str, extra: &str) -> String {
    format!(
        r#"
name = "incast"
[defaults.tcp]
sack = false
nagle = false
delack_segments = 1
initial_cwnd = 2
abc_limit = 0
[[hosts]]
name = "client"
[[hosts]]
name = "server"
count = {servers}
jitter = "1us"
[[switches]]
name = "sw"
[[links]]
between = ["server", "sw"]
rate = "1Gbps"
delay = "20us"
[[links]]
between = ["sw", "client"]
rate = "1Gbps"
delay = "20us"
queue_a = "40pkts"
[[flows]]
name = "read"
kind = "block-read"
src = "client"
dst = "server"
block_read = {{ sru = "64KiB", {flow} }}
[trace]
milestones = true
{extra}
"#
    )
}

#[test]
fn a_group_expands_to_named_hosts_and_a_block_read_to_one_connection_per_active_server() {
    let r = run(&incast(4, "servers = 3, blocks = 2", ""), 1);
    let s = r.sim.summary();
    let names: Vec<(&str, &str, &str, bool)> = s.flows.iter().map(|f| (f.name.as_str(), f.src.as_str(), f.dst.as_str(), f.download)).collect();
    assert_eq!(names, vec![("read.0", "client", "server.0", true), ("read.1", "client", "server.1", true), ("read.2", "client", "server.2", true)]);
    for f in &s.flows {
        assert_eq!(f.bytes_delivered, 2 * 65_536, "two SRUs from every active server reach the client");
        assert!(f.segments_sent >= 2 * 45, "the server's data segments are the flow's: {}", f.segments_sent);
    }
    let q = |name: &str| s.queues.iter().find(|q| q.name == name).unwrap_or_else(|| panic!("{name}"));
    assert_eq!(q("server.3->sw").enqueued, 0, "the fourth server is idle");
    assert!(q("server.2->sw").enqueued >= 90);
    let m = r.sim.traces.milestones.as_ref().unwrap();
    let blocks: Vec<(f64, u64)> = (0..m.kind.len()).filter(|&i| m.kind[i] == Milestone::Block as u32).map(|i| (m.time_s[i], m.bytes[i])).collect();
    assert_eq!(blocks.len(), 2);
    assert!(blocks.iter().all(|b| b.1 == 3 * 65_536));
    let finish = s.flows[0].finish_s.unwrap();
    assert_eq!(blocks[1].0, finish, "the run's last block ends the reads");
}

#[test]
fn a_client_group_reads_with_one_reader_per_member() {
    let text = incast(3, "blocks = 1", "").replace("name = \"client\"\n", "name = \"client\"\ncount = 2\n");
    let r = run(&text, 1);
    let s = r.sim.summary();
    let names: Vec<&str> = s.flows.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, vec!["read.0.0", "read.0.1", "read.0.2", "read.1.0", "read.1.1", "read.1.2"]);
    assert_eq!(s.flows[4].src, "client.1");
    assert!(s.flows.iter().all(|f| f.bytes_delivered == 65_536));
}

#[test]
fn standard_tcp_collapses_under_incast_and_a_200us_rto_recovers() {
    // 32 servers × IW 2 into a 40-packet port: losses of whole windows, recovered by timeouts.
    let std = run(&incast(32, "blocks = 3", ""), 1).sim.summary();
    let fine = run(&incast(32, "blocks = 3", "").replace("abc_limit = 0", "abc_limit = 0\nrto_min = \"200us\""), 1).sim.summary();
    let span = |s: &crate::sim::RunSummary| s.flows.iter().filter_map(|f| f.finish_s).fold(0.0, f64::max);
    assert!(std.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0);
    assert!(span(&std) > 0.2, "each block waits out a 200 ms timeout: {}", span(&std));
    let ideal = 3.0 * 32.0 * 65_536.0 * 8.0 / (1e9 * 1460.0 / 1500.0);
    assert!(span(&fine) < 2.0 * ideal, "µs-scale timeouts: {} s, ideal {ideal} s", span(&fine));
}

#[test]
fn ahtcp_requests_recover_a_stalled_server_before_its_200ms_timeout() {
    let ah = "[defaults.tcp.ahtcp]\nthreshold = \"100Mbps\"";
    let text = incast(24, "blocks = 4", ah).replace("abc_limit = 0", "abc_limit = 0\nvariant = \"ahtcp\"");
    let r = run(&text, 1);
    let s = r.sim.summary();
    assert!(s.flows.iter().all(|f| f.bytes_delivered == 4 * 65_536));
    let requests: u64 = s.flows.iter().map(|f| f.requests).sum();
    let timeouts: u64 = s.flows.iter().map(|f| f.timeouts).sum();
    assert!(requests > 0, "the client asked");
    assert!(timeouts >= requests, "each request answered by a forced timeout: {timeouts} timeouts, {requests} requests");
    // The same reads without AHTCP wait for the timer.
    let plain = run(&incast(24, "blocks = 4", ""), 1).sim.summary();
    let span = |s: &crate::sim::RunSummary| s.flows.iter().filter_map(|f| f.finish_s).fold(0.0, f64::max);
    assert!(plain.flows.iter().map(|f| f.timeouts).sum::<u64>() > 0, "standard TCP times out here");
    assert!(span(&s) < span(&plain), "AHTCP {} s vs standard {} s", span(&s), span(&plain));
}

#[test]
fn the_resolved_scenario_keeps_groups_block_reads_and_the_ahtcp_table() {
    let text =
        incast(4, "servers = 2, blocks = 1", "[defaults.tcp.ahtcp]\nthreshold = \"50Mbps\"\nrestart = \"floor\"").replace("abc_limit = 0", "abc_limit = 0\nvariant = \"ahtcp\"");
    let r = Run::from_toml(&text, Some(1)).unwrap();
    let toml = r.resolved_toml();
    assert!(toml.contains("count = 4"), "{toml}");
    assert!(toml.contains("kind = \"block-read\""), "{toml}");
    assert!(toml.contains("variant = \"ahtcp\""), "{toml}");
    assert!(toml.contains("restart = \"floor\""), "{toml}");
    let again = Run::from_toml(&toml, Some(1)).unwrap();
    assert_eq!(again.resolved_toml(), toml, "parses back to itself");
}

#[test]
fn bad_groups_block_reads_and_ahtcp_tables_are_refused_by_field() {
    let base = incast(4, "blocks = 1", "");
    let cases = [
        (base.replace("count = 4", "count = 0"), "hosts[1].count: 0 is out of range"),
        (base.replace("blocks = 1", "blocks = 1, servers = 5"), "flows[0].block_read.servers: 5 active servers out of range"),
        (base.replace(", blocks = 1", ""), "flows[0].block_read.blocks: a block-read flow needs"),
        (base.replace("blocks = 1", "blocks = 9223372036854775807"), "flows[0].block_read.blocks: 9223372036854775807 is out of range (1..=1000000000)"),
        (base.replace("blocks = 1", "blocks = 1000000000").replace("sru = \"64KiB\"", "sru = \"10TB\""), "flows[0].block_read.blocks: sru × blocks"),
        (base.replace("sru = \"64KiB\", ", ""), "flows[0].block_read.sru: a block-read flow needs"),
        (base.replace("blocks = 1 }", "blocks = 1 }\nbulk = { bytes = \"1MB\" }"), "flows[0].bulk: only for kind = \"tcp\" flows (this one is kind = \"block-read\")"),
        (base.replace("blocks = 1 }", "blocks = 1 }\nbytes = \"1MB\""), "flows[0].bytes: moved to the flow's `bulk` table"),
        (base.replace("blocks = 1 }", "blocks = 1 }\nstop = \"1s\""), "flows[0].stop: not for block-read flows"),
        (base.replace("blocks = 1 }", "blocks = 1 }\ncount = 2"), "flows[0].count: a block-read flow makes one connection per server"),
        // A tcp flow to a group is one flow per member (scenario::tests_flow_matrix); this one
        // has no end.
        (
            base.replace("kind = \"block-read\"", "kind = \"tcp\"").replace("block_read = { sru = \"64KiB\", blocks = 1 }", ""),
            "flows[0].bulk.bytes: with run.stop = \"flows-done\"",
        ),
        (base.replace("kind = \"block-read\"", "kind = \"tcp\""), "flows[0].block_read: only for kind = \"block-read\" flows"),
        (base.replace("[[switches]]", "[[hosts]]\nname = \"server.2\"\n[[switches]]"), "hosts[2].name: 'server.2' is already the name of a host"),
        (base.replace("between = [\"server\", \"sw\"]", "between = [\"server\", \"client\"]"), "links[0].between: 'server' is a host group, linked member by member to a switch"),
        (base.replace("abc_limit = 0", "abc_limit = 0\nvariant = \"ahtcp\""), "defaults.tcp.ahtcp.threshold: AHTCP needs"),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\nhold = 1460"), "defaults.tcp.ahtcp.hold: 1460 bytes is out of range"),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\nsamples = 0"), "defaults.tcp.ahtcp.samples: 0 is out of range"),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\nwindow = 3"), "unknown field `window`"),
        (
            base.replace("abc_limit = 0", "abc_limit = 0\nvariant = \"ahtcp\"\n[defaults.tcp.ahtcp]\nthreshold_rule = \"peak\"\nthreshold = \"1Mbps\""),
            "defaults.tcp.ahtcp.threshold: the peak rule sets the threshold from the measured peak",
        ),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\npeak_fraction = 0.0"), "defaults.tcp.ahtcp.peak_fraction: 0 is out of range"),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\npeak_window = \"20s\""), "defaults.tcp.ahtcp.peak_window: 20s is out of range"),
        (base.replace("abc_limit = 0", "abc_limit = 0\n[defaults.tcp.ahtcp]\nthreshold_rule = \"max\""), "unknown variant `max`, expected `fixed` or `peak`"),
    ];
    for (text, want) in cases {
        let e = error_of(&text);
        assert!(e.contains(want), "want {want:?}, got {e:?}");
    }
}

#[test]
fn a_tap_on_a_member_link_captures_that_member() {
    let text = incast(3, "blocks = 1", "[[taps]]\nname = \"s1\"\nlink = [\"server.1\", \"sw\"]\npcap = false\ntrace = true");
    let r = run(&text, 1);
    let c = r.sim.traces.capture.as_ref().expect("captured");
    assert!(!c.flow.is_empty());
    assert!(c.flow.iter().all(|&f| f == 1), "only read.1 crosses server.1's link");
    let all = run(&incast(3, "blocks = 1", "[[taps]]\nname = \"all\"\nlink = [\"server\", \"sw\"]\npcap = false\ntrace = true"), 1);
    let c = all.sim.traces.capture.as_ref().expect("captured");
    let mut flows: Vec<u32> = c.flow.clone();
    flows.sort();
    flows.dedup();
    assert_eq!(flows, vec![0, 1, 2], "a tap on the group's link taps every member's");
    let e = error_of(&incast(3, "blocks = 1", "[[taps]]\nname = \"s\"\nlink = [\"server.3\", \"sw\"]"));
    assert!(e.contains("taps[0].link: no link joins 'server.3' and 'sw'"), "{e}");
}

#[test]
fn a_background_flow_does_not_hold_up_a_run_that_stops_when_the_flows_are_done() {
    let bg = "[[hosts]]\nname = \"u\"\n[[links]]\nbetween = [\"u\", \"sw\"]\nrate = \"1Gbps\"\n[[flows]]\nname = \"bg\"\nkind = \"udp-cbr\"\nsrc = \"u\"\ndst = \"client\"\ncbr = { rate = \"10Mbps\" }\nstop = \"100s\"";
    let text = incast(4, "blocks = 2", &format!("{bg}\nbackground = true"));
    let s = run(&text, 1).sim.summary();
    assert_eq!(s.stop_reason, crate::sim::StopReason::FlowsDone);
    assert!(s.sim_time_s < 1.0, "stopped with the reads at {} s, not with the background at 100 s", s.sim_time_s);
    assert!(s.flows[4].packets_received > 0, "the background ran meanwhile");
    let s = run(&incast(4, "blocks = 2", bg), 1).sim.summary();
    assert!(s.sim_time_s > 99.0, "without the flag the run waits for it: {} s", s.sim_time_s);
    let all_bg = r#"
name = "b"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "10Mbps"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = { bytes = "1KB" }
background = true
"#;
    assert!(error_of(all_bg).contains("run.stop: \"flows-done\" waits for the flows that are not background"), "{}", error_of(all_bg));
}

#[test]
fn the_peak_threshold_keeps_asking_for_stalls_where_a_fixed_one_asks_all_the_time() {
    // UDP takes 600 Mb/s of the client's 1 Gb/s link: the reads cannot reach a 500 Mb/s
    // threshold even when nothing is stalled, so the fixed rule asks throughout; the peak rule
    // asks only when the rate falls well below what was reached.
    let bg = "[[hosts]]\nname = \"u\"\n[[links]]\nbetween = [\"u\", \"sw\"]\nrate = \"1Gbps\"\n[[flows]]\nname = \"bg\"\nkind = \"udp-cbr\"\nsrc = \"u\"\ndst = \"client\"\ncbr = { rate = \"600Mbps\" }\nstop = \"100s\"\nbackground = true";
    let with_rule = |rule: &str| {
        let text = incast(24, "blocks = 4", &format!("[defaults.tcp.ahtcp]\n{rule}\n{bg}")).replace("abc_limit = 0", "abc_limit = 0\nvariant = \"ahtcp\"");
        let r = run(&text, 1);
        let crate::agent::Agent::AhtcpMonitor(m) = &r.sim.agents[0] else { panic!("the client's monitor first") };
        let low = m.low_samples;
        let s = r.sim.summary();
        assert!(s.flows[..24].iter().all(|f| f.bytes_delivered == 4 * 65_536), "{rule}: every read completes");
        (s.flows.iter().map(|f| f.requests).sum::<u64>(), low)
    };
    let (fixed_requests, fixed_low) = with_rule("threshold = \"500Mbps\"");
    let (peak_requests, peak_low) = with_rule("threshold_rule = \"peak\"");
    assert!(fixed_low > 2 * peak_low, "below the threshold: fixed {fixed_low} samples, peak {peak_low}");
    assert!(fixed_requests > peak_requests, "requests: fixed {fixed_requests}, peak {peak_requests}");
}

#[test]
fn a_port_fed_by_more_links_than_a_merge_has_slots_runs_on_arrival_events() {
    // The documented largest group (65,536 members) reading into one client port, plus one
    // more sender into that port: 65,537 feeders, one more than a merge's slots. The port takes
    // its arrivals as events instead (it used to panic after ~50 s of planning).
    let text = r#"
name = "wide"
[run]
duration = "300us"
[[hosts]]
name = "client"
[[hosts]]
name = "u"
[[hosts]]
name = "server"
count = 65536
[[switches]]
name = "sw"
[[links]]
between = ["server", "sw"]
rate = "1Gbps"
delay = "1us"
[[links]]
between = ["u", "sw"]
rate = "1Gbps"
delay = "1us"
[[links]]
between = ["sw", "client"]
rate = "1Gbps"
delay = "1us"
queue_a = "100pkts"
[[flows]]
name = "read"
kind = "block-read"
src = "client"
dst = "server"
block_read = { sru = "1KB", blocks = 1 }
[[flows]]
name = "bg"
kind = "udp-cbr"
src = "u"
dst = "client"
cbr = { rate = "100Mbps" }
"#;
    let r = run(text, 1);
    let s = r.sim.summary();
    let port = s.queues.iter().find(|q| q.name == "sw->client").expect("the client's port");
    assert!(port.enqueued > 0, "packets reached the client's port: {port:?}");
    assert!(s.flows.iter().any(|f| f.name == "bg" && f.packets_received > 0), "the CBR flow is delivered");
}
