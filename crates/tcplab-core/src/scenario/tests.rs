//! Scenario parsing, validation errors, and whole-run properties (determinism, conservation).

use super::*;
use crate::app::Milestone;
use crate::flow::FlowEngine;

fn smoke() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/smoke/smoke.toml")).expect("smoke scenario")
}

fn dumbbell() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios/dumbbell/dumbbell.toml")).expect("dumbbell scenario")
}

/// Load `text` with `seed` and run it (panics with the error on a bad scenario); shared by the
/// study test files beside this one.
pub(super) fn run(text: &str, seed: u64) -> Run {
    let mut r = Run::from_toml(text, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    r.sim.run();
    r
}

/// The error `text` is refused with (panics if it loads).
pub(super) fn error_of(text: &str) -> String {
    Run::from_toml(text, None).expect_err("should be rejected").to_string()
}

const TINY: &str = r#"
name = "t"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = { bytes = "100KB" }
"#;

#[test]
fn errors_name_the_field_and_reason() {
    let cases: &[(&str, &str)] = &[
        ("mss = 1460", "flows[0].mss: unknown field `mss`, expected one of `name`"),
        ("[run]\nspeed = 3", "run.speed: unknown field `speed`"),
        ("[flows.tcp]\nmss = 10", "flows[0].tcp.mss: 10 is out of range"),
        ("[flows.tcp]\nmsss = 10", "flows[0].tcp.msss: unknown field `msss`"),
        ("[flows.tcp]\ncc = \"bic2\"", "flows[0].tcp.cc: unknown variant `bic2`"),
        ("[flows.tcp]\nrcv_window_rule = \"linux-4.19\"", "flows[0].tcp.rcv_window_rule: unknown variant `linux-4.19`, expected `linux-2.6.16` or `linux-4.20`"),
        ("[defaults.tcp]\nrcv_window_rule = true", "defaults.tcp.rcv_window_rule: wanted string or table"),
        ("[flows.tcp]\nrx_truesize = \"16KB\"", "flows[0].tcp.rx_truesize: only applies to rcv_window_growth = true"),
        // Found by the TCP invariant checker: ticks longer than rto_max made every RTO exceed it.
        ("[flows.tcp]\nrto_granularity = \"100s\"", "flows[0].tcp.rto_granularity: 100s is above rto_max (60s)"),
        ("[[links]]\nbetween = [\"a\", \"zz\"]\nrate = \"1Gbps\"", "links[1].between[1]: no host, switch or emulator is named 'zz'"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1 furlong\"", "links[1].rate: unknown rate unit 'furlong'"),
        ("[run]\nduration = \"10\"", "run.duration: '10' has no unit"),
        ("[run]\nstop = \"duration\"", "run.stop: \"duration\" needs run.duration"),
        ("[[hosts]]\nname = \"a\"", "hosts[2].name: 'a' is already the name of a host"),
        ("[trace]\nqueues = [\"nope\"]", "trace.queues[0]: no queue named 'nope'"),
        ("[defaults]\nqueue = 40", "defaults.queue: 40 has no unit: write \"40pkts\""),
        ("[defaults]\nqueue = { classes = [\"10pkts\"], x = 1 }", "defaults.queue.x: unknown field `x`"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Gbps\"\nframing = \"5000B\"", "links[1].framing: 5000 bytes per packet is more than the 1024"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Gbps\"\nframing = \"38 octets\"", "links[1].framing:"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Gbps\"\nlink_layer = \"atm\"", "links[1].link_layer: unknown variant `atm`, expected one of `ip`, `aal5`, `aal5-vc-mux`"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Gbps\"\nlink_layer = \"aal5\"\nframing = \"2B\"", "links[1].framing: AAL5 has its own overhead"),
    ];
    for (extra, want) in cases {
        let text = format!("{TINY}\n{extra}\n");
        let got = error_of(&text);
        assert!(got.contains(want), "for {extra:?}: got {got:?}, want {want:?}");
    }
}

#[test]
fn profiles_pick_their_receive_window_rules() {
    let growth = |tcp: &str| {
        let r = Run::from_toml(&format!("{TINY}\n[defaults.tcp]\n{tcp}\n"), None).unwrap_or_else(|e| panic!("{e}"));
        let t = &r.resolved.flows[0].tcp().expect("a tcp flow").settings;
        (t.rcv_window_growth, t.rcv_window_rule)
    };
    use spec::RcvWindowRuleName::*;
    assert_eq!(growth(""), (false, Linux2616));
    assert_eq!(growth("profile = \"linux-2.6.16\""), (true, Linux2616));
    assert_eq!(growth("profile = \"linux-modern\""), (true, Linux420));
    assert_eq!(growth("profile = \"linux-modern\"\nrcv_window_rule = \"linux-2.6.16\""), (true, Linux2616));
    assert_eq!(growth("profile = \"linux-modern\"\nrcv_window_growth = false"), (false, Linux420));
}

#[test]
fn linux_2_4_18_sends_two_segments_first_and_grows_one_per_ack_without_abc() {
    // 2.4.17's tcp_init_cwnd gives 2 segments to a peer with no cached metrics (2.6.16's rule
    // gives 3 at MSS 1448); slow start adds one segment per ACK, no ABC; HZ 100.
    let trace = |profile: &str| {
        let text = format!("{TINY}\n[defaults.tcp]\nprofile = \"{profile}\"\n[trace]\ncwnd = true\n").replace("delay = \"1ms\"", "delay = \"50ms\"").replace("100KB", "2MB");
        let mut r = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        let t = r.resolved.flows[0].tcp().expect("a tcp flow").settings;
        r.sim.run();
        let c = r.sim.traces.cwnd.as_ref().expect("cwnd trace");
        let rows: Vec<(f64, u64)> = (0..c.time_s.len()).filter(|&i| c.flow[i] == 0).map(|i| (c.time_s[i], c.cwnd_bytes[i])).collect();
        (t, rows)
    };
    let (t, rows) = trace("linux-2.4.18");
    assert_eq!((t.hz, t.abc_limit, t.initial_cwnd), (100, 0, 2));
    assert_eq!(t.ts_tick, spec::Dur(crate::units::SimDuration::from_millis(10)));
    let mss = t.mss as u64 - 12; // the timestamp option's 12 bytes
    assert_eq!(rows[0].1, 2 * mss, "first flight");
    // Every cwnd step in slow start is one segment per ACK (quick ACKs first, then every
    // second segment): never a jump of more than one segment between trace rows.
    let ss: Vec<u64> = rows.iter().map(|r| r.1).take_while(|&w| w < 40 * mss).collect();
    assert!(ss.len() > 10, "{ss:?}");
    assert!(ss.windows(2).all(|w| w[1] <= w[0] + mss), "one segment per ACK: {ss:?}");
    let (_, rows26) = trace("linux-2.6.16");
    assert_eq!(rows26[0].1, 3 * mss, "2.6.16's rule: 3 at MSS {mss}");
}

#[test]
fn flows_done_needs_bounded_flows() {
    let text = TINY.replace("bulk = { bytes = \"100KB\" }", "");
    assert!(error_of(&text).contains("flows[0].bulk.bytes: with run.stop = \"flows-done\""));
}

#[test]
fn json_and_toml_are_one_schema() {
    let sc = parse_toml(TINY).unwrap();
    let json = serde_json::to_string(&sc).unwrap();
    let back = parse_json(&json).unwrap();
    assert_eq!(serde_json::to_string(&back).unwrap(), json);
    let bad = json.replace("\"bytes\"", "\"byts\"");
    let e = parse_json(&bad).unwrap_err().to_string();
    assert!(e.contains("flows[0]") && e.contains("unknown field `byts`"), "{e}");
    assert!(!e.contains("column"), "no positions in the internal JSON text: {e}");
}

#[test]
fn resolved_toml_round_trips_and_fills_defaults() {
    let r = Run::from_toml(&smoke(), Some(3)).unwrap();
    let text = r.resolved_toml();
    assert!(text.contains("rto_min = \"200ms\""), "{text}");
    assert!(text.contains("seed = 3"));
    let again = Run::from_toml(&text, None).unwrap();
    assert_eq!(again.hash, r.hash, "resolving is idempotent");
    assert_eq!(again.seed, 3);
    assert_eq!(again.resolved_toml(), text);
}

#[test]
fn link_framing_takes_line_time_but_no_ip_bytes() {
    // A saturated 10 Mb/s link carrying 1500-byte packets: 38 bytes of Ethernet framing per
    // packet leave 1500/1538 of the line rate to IP (and a little less to TCP payload).
    let long = |framing: &str| {
        let text = TINY.replace("bulk = { bytes = \"100KB\" }", "").replace("delay = \"1ms\"", &format!("delay = \"1ms\"\n{framing}"));
        let text = format!("{text}\n[run]\nduration = \"4s\"\n[defaults.tcp]\nmss = 1460\nrcvbuf = \"1MB\"\nsndbuf = \"1MB\"\n");
        let r = run(&text, 1);
        assert_eq!(r.resolved.links[0].framing.0, if framing.starts_with("framing") { 38 } else { 0 });
        r.sim.summary().flows[0].bytes_delivered as f64
    };
    let (plain, framed) = (long(""), long("framing = \"38B\""));
    let ratio = framed / plain;
    assert!((ratio - 1500.0 / 1538.0).abs() < 0.003, "delivered ratio {ratio}, want ≈ {}", 1500.0 / 1538.0);
    // AAL5 with LLC/SNAP: a 1500-byte packet is 32 cells of 53 bytes (1696 line bytes); without
    // the LLC/SNAP header it still needs 32 (1500 + 8 = 1508 > 31·48).
    for kind in ["aal5", "aal5-vc-mux"] {
        let ratio = long(&format!("link_layer = \"{kind}\"")) / plain;
        assert!((ratio - 1500.0 / 1696.0).abs() < 0.003, "{kind}: delivered ratio {ratio}, want ≈ {}", 1500.0 / 1696.0);
    }
}

#[test]
fn tiny_transfer_completes() {
    let r = run(TINY, 1);
    let s = r.sim.summary();
    assert_eq!(s.flows[0].bytes_delivered, 100_000);
    assert!(s.flows[0].finish_s.is_some());
    // 100 KB at 10 Mb/s takes at least 80 ms; with slow start over a 2 ms RTT not much more.
    let fct = s.flows[0].finish_s.unwrap();
    assert!(fct > 0.08 && fct < 0.2, "{fct}");
}

#[test]
fn smoke_run_is_deterministic_and_conserves_packets() {
    let a = run(&smoke(), 7);
    let b = run(&smoke(), 7);
    assert_eq!(a.summary_json(), b.summary_json());
    assert_eq!(a.sim.traces.digest(), b.sim.traces.digest());
    let s = a.sim.summary();
    for f in &s.flows[..2] {
        assert_eq!(f.bytes_delivered, 2_000_000);
    }
    // UDP: 5 Mb/s for 1 s of 1000-byte packets = 625 datagrams, none lost (buffer is ample).
    assert_eq!(s.flows[2].segments_sent, 625);
    let p = a.sim.fabric.packets;
    assert_eq!(p.created, p.delivered + p.queue_drops + p.random_drops + a.sim.packets_inside());
    let queued_drops: u64 = s.queues.iter().map(|q| q.dropped).sum();
    assert_eq!(queued_drops, p.queue_drops);
}

#[test]
fn different_seeds_differ_when_there_is_randomness() {
    let lossy = smoke().replace("loss = 0.0", "loss = 0.01");
    let a = run(&lossy, 1);
    let b = run(&lossy, 2);
    assert_ne!(a.summary_json(), b.summary_json());
    let a2 = run(&lossy, 1);
    assert_eq!(a.summary_json(), a2.summary_json());
    assert!(a.sim.fabric.packets.random_drops > 0);
}

#[test]
fn dumbbell_fills_the_bottleneck() {
    let text = dumbbell().replace("duration = \"10s\"", "duration = \"3s\"");
    let r = run(&text, 1);
    let s = r.sim.summary();
    let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    // 1 Gb/s of IP; payload share 1460/1500, minus slow start over the first ~0.3 s.
    assert!(total > 0.8e9 && total < 0.974e9, "total goodput {total}");
    let bottleneck = s.queues.iter().find(|q| q.name == "left->right").unwrap();
    assert!(bottleneck.max_packets > 100);
    // Packet conservation with drops.
    let p = r.sim.fabric.packets;
    assert_eq!(p.created, p.delivered + p.queue_drops + p.random_drops + r.sim.packets_inside());
}

#[test]
fn per_flow_goodput_matches_trace() {
    let r = run(&smoke(), 1);
    let tr = r.sim.traces.throughput.as_ref().unwrap();
    for (i, f) in r.sim.flows.iter().enumerate() {
        let sum: u64 = tr.flow.iter().zip(&tr.bytes).filter(|(fl, _)| **fl == i as u32).map(|(_, b)| *b).sum();
        // The trace covers whole bins up to the last sample; the remainder is after it.
        assert!(sum <= f.delivered());
        if let FlowEngine::Tcp(_) = f.engine {
            assert!(sum + 200_000 >= f.delivered(), "flow {i}: {sum} vs {}", f.delivered());
        }
    }
}

#[test]
fn strict_priority_protects_the_high_class() {
    // A 10 Mb/s link shared by high-priority CBR (6 Mb/s) and a greedy TCP flow in class 1:
    // the CBR stream loses nothing, TCP gets the rest.
    let text = r#"
name = "prio"
[run]
duration = "5s"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
rate = "100Mbps"
[[links]]
between = ["sw", "b"]
rate = "10Mbps"
delay = "1ms"
queue_a = { classes = ["20pkts", "40pkts"] }
[[flows]]
name = "cbr"
kind = "udp-cbr"
src = "a"
dst = "b"
cbr = { rate = "6Mbps" }
class = 0
[[flows]]
name = "tcp"
src = "a"
dst = "b"
class = 1
"#;
    let r = run(text, 1);
    let s = r.sim.summary();
    // At most the class-0 buffer plus the one in service can still be inside the network.
    let cbr = &s.flows[0];
    assert!(cbr.segments_sent - cbr.packets_received <= 21, "{} sent, {} received", cbr.segments_sent, cbr.packets_received);
    let tcp = s.flows[1].goodput_bps;
    assert!(tcp > 3.0e6 && tcp < 4.0e6, "tcp goodput {tcp}");
    assert!(s.queues.iter().any(|q| q.dropped > 0), "TCP filled its class buffer");
}

#[test]
fn transfers_beyond_four_gib_use_the_64_bit_sequence_space() {
    let text = TINY
        .replace("rate = \"10Mbps\"", "rate = \"100Gbps\"")
        .replace("bulk = { bytes = \"100KB\" }", "bulk = { bytes = \"5GB\" }\n[flows.tcp]\nmss = 65000\nsndbuf = \"64MB\"\nrcvbuf = \"64MB\"\ntimestamps = true");
    let r = run(&text, 1);
    let s = r.sim.summary();
    assert_eq!(s.flows[0].bytes_delivered, 5_000_000_000);
    assert!(s.flows[0].bytes_delivered > u32::MAX as u64);
}

#[test]
fn taps_write_pcapng_and_the_capture_trace() {
    let text = format!(
        "{}\n[[taps]]\nname = \"bottleneck\"\nlink = [\"sw1\", \"emu\"]\ntrace = true\nepoch = \"2002-11-16T09:30:00Z\"\n",
        smoke().replace("stop = \"1s\"", "stop = \"0.2s\"")
    );
    let epoch = std::time::Duration::from_secs(1_037_439_000); // 2002-11-16T09:30:00Z
    let dir = std::env::temp_dir().join(format!("tcplab-tap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let sc = parse_toml(&text).unwrap();
    let mut r = Run::with_capture_dir(&sc, Some(1), Some(&dir)).unwrap();
    r.sim.run();
    assert!(r.sim.capture_error().is_none());
    let cap = r.sim.traces.capture.as_ref().expect("capture trace");
    let n = cap.time_s.len() as u64;
    let tap = r.sim.observers.taps.iter().find(|t| t.name == "bottleneck").unwrap();
    assert_eq!(n, tap.packets);
    // Every data segment of both TCP flows crossed the bottleneck: at least 2 × 2 MB / 1460.
    let data: u64 = cap.dir.iter().zip(&cap.len).filter(|(d, l)| **d == 0 && **l > 0).count() as u64;
    assert!(data >= 2 * 1370, "{data}");
    // Both directions were tapped; times are non-decreasing and on the 100 ns grid.
    assert!(cap.dir.contains(&1));
    assert!(cap.time_s.windows(2).all(|w| w[0] <= w[1]));
    let end = std::time::Duration::from_secs_f64(r.sim.summary().sim_time_s);
    let bytes = std::fs::read(dir.join("bottleneck.pcapng")).unwrap();
    // Section header block magic, then an interface per direction, then one EPB per packet.
    assert_eq!(&bytes[..4], &[0x0a, 0x0d, 0x0d, 0x0a]);
    let mut reader = pcap_file::pcapng::PcapNgReader::new(&bytes[..]).unwrap();
    // The section header names the program and what was captured.
    use pcap_file::pcapng::blocks::section_header::SectionHeaderOption as Shb;
    let shb = reader.section().options.clone();
    assert!(shb.iter().any(|o| matches!(o, Shb::UserApplication(a) if a.starts_with("tcplab "))), "{shb:?}");
    assert!(shb.iter().any(|o| matches!(o, Shb::Comment(c) if c.contains("scenario 'smoke'") && c.contains("seed 1") && c.contains("tap 'bottleneck'"))), "{shb:?}");
    let (mut ifaces, mut epbs, mut named) = (0, 0u64, Vec::new());
    let (mut last_id, mut id_steps) = (std::collections::BTreeMap::new(), 0u64);
    let mut last_ts = epoch;
    while let Some(block) = reader.next_block() {
        match block.unwrap() {
            pcap_file::pcapng::Block::InterfaceDescription(_) => ifaces += 1,
            pcap_file::pcapng::Block::NameResolution(n) => {
                for rec in &n.records {
                    if let pcap_file::pcapng::blocks::name_resolution::Record::Ipv4(r) = rec {
                        named.push((r.ip_addr.to_vec(), r.names[0].to_string()));
                    }
                }
            }
            pcap_file::pcapng::Block::EnhancedPacket(p) => {
                epbs += 1;
                // IP IDs: each socket (flow end) counts its packets (gaps where a packet was
                // lost before the tap), so consecutive IDs from one socket step forward by
                // less than half the 16-bit space.
                if let Ok(pk) = etherparse::LaxSlicedPacket::from_ethernet(&p.data) {
                    let ports = match &pk.transport {
                        Some(etherparse::TransportSlice::Tcp(t)) => (t.source_port(), t.destination_port()),
                        Some(etherparse::TransportSlice::Udp(u)) => (u.source_port(), u.destination_port()),
                        _ => (0, 0),
                    };
                    if let Some(etherparse::LaxNetSlice::Ipv4(ip)) = pk.net {
                        let (src, dst, id) = (ip.header().source(), ip.header().destination(), ip.header().identification());
                        if let Some(prev) = last_id.insert((src, dst, ports), id) {
                            let step = id.wrapping_sub(prev);
                            assert!((1..1 << 15).contains(&step), "{src:?}->{dst:?}: id {prev} then {id}");
                            id_steps += 1;
                        }
                    }
                }
                // Simulated time 0 is the epoch.
                assert!(p.timestamp >= last_ts && p.timestamp <= epoch + end, "{:?}", p.timestamp);
                assert_eq!(p.timestamp.as_nanos() % 100, 0, "100 ns resolution");
                last_ts = p.timestamp;
                assert!(p.original_len as usize >= p.data.len());
            }
            _ => {}
        }
    }
    assert_eq!(ifaces, 2);
    assert_eq!(epbs, n);
    assert!(id_steps + 8 >= n, "{id_steps} ID steps checked of {n} packets");
    // Every host is named at its address (10.0.0.1 is the first host, "a").
    let hosts: Vec<&str> = sc.hosts.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(named.len(), hosts.len(), "{named:?}");
    assert_eq!(named[0], (vec![10, 0, 0, 1], hosts[0].to_string()));
    assert!(named.iter().all(|(_, n)| hosts.contains(&n.as_str())));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn tap_errors_name_the_field() {
    let base = format!("{TINY}\n[[taps]]\nname = \"t\"\n");
    assert!(error_of(&format!("{base}link = [\"a\", \"x\"]\n")).contains("taps[0].link: no link joins 'a' and 'x'"));
    assert!(error_of(&format!("{base}link = [\"a\", \"b\"]\nresolution = \"500ps\"\n")).contains("taps[0].resolution: must be a whole number of nanoseconds"));
    assert!(error_of(&format!("{base}link = [\"a\", \"b\"]\ndirection = \"c\"\n")).contains("taps[0].direction"));
    let e = error_of(&format!("{base}link = [\"a\", \"b\"]\nepoch = \"2023-02-29T00:00:00Z\"\n"));
    assert!(e.contains("taps[0].epoch") && e.contains("no such date"), "{e}");
    let e = error_of(&format!("{base}link = [\"a\", \"b\"]\nepoch = 2023-02-28T00:00:00Z\n"));
    assert!(e.contains("taps[0].epoch") && e.contains("quoted string"), "{e}");
}

/// Values that would exhaust memory, never end or saturate time are field errors at load, each
/// naming the limit (issue 16's probes).
#[test]
fn limits_are_field_errors_naming_the_limit() {
    let dur = "[run]\nduration = \"1s\"\n";
    let cases: &[(String, &str)] = &[
        (format!("{dur}[trace]\nthroughput_interval = \"1ns\""), "trace.throughput_interval: 1ns is shorter than the shortest period tcplab allows (1us)"),
        (
            "[run]\nduration = \"100000s\"\n[trace]\nthroughput_interval = \"1us\"".to_string(),
            "trace.throughput_interval: 100000000000 bins of 1 flows make 100000000000 rows; at most 76695844 (28 bytes a row within run.trace_memory = 2GiB",
        ),
        (
            "[[flows]]\nname = \"many\"\nsrc = \"a\"\ndst = \"b\"\nbulk = { bytes = \"1KB\" }\ncount = 10000000".into(),
            "flows[1].count: the scenario would have 10000001 flows or more; at most 100000",
        ),
        (
            "[[flows]]\nname = \"g.0\"\nsrc = \"a\"\ndst = \"b\"\nbulk = { bytes = \"1KB\" }\n[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"\nbulk = { bytes = \"1KB\" }\ncount = 2".into(),
            "flows[2].name: makes a flow named 'g.0', as flows[1] does",
        ),
        (
            format!("{dur}[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"\n[[coordinators]]\nkind = \"decp\"\nflows = [\"f\", \"g\"]\ninterval = \"1ps\""),
            "coordinators[0].interval: 1ps is shorter than the shortest period",
        ),
        (
            "[run]\nstop = \"idle\"\n[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"".into(),
            "flows[1].bulk.bytes: with run.stop = \"idle\" and no run.duration, every flow needs bulk.bytes or stop (or the run never ends)",
        ),
        ("[run]\nstop = \"idle\"\n[trace]\nthroughput_interval = \"10ms\"".into(), "run.stop: \"idle\" with no run.duration never ends while trace.throughput_interval samples"),
        ("[[links]]\nbetween = [\"a\", \"b\"]\nrate = \"1Gbps\"\ndelay = \"10000000s\"".into(), "links[1].delay: '10000000s' is longer than the longest time tcplab simulates"),
        (
            "[[switches]]\nname = \"c\"\n[[links]]\nbetween = [\"a\", \"c\"]\nrate = \"1Gbps\"\ndelay = \"600000s\"\n[[links]]\nbetween = [\"c\", \"b\"]\nrate = \"1Gbps\"\ndelay = \"600000s\"".into(),
            "links: the propagation delays of all links and emulators add up to more than 1000000s",
        ),
        // A CBR source faster than its host's link would spend ~10^12 events per simulated
        // second being dropped at its own NIC (found by tests/fuzz_loader.rs as a "hang").
        (
            "[[flows]]\nname = \"u\"\nkind = \"udp-cbr\"\nsrc = \"a\"\ndst = \"b\"\ncbr = { rate = \"5000000000Mbps\" }\nstop = \"1s\"".into(),
            "flows[1].cbr.rate: 5000Tbps is faster than the link out of 'a' (10Mbps); a host cannot send faster than its interface",
        ),
        // A message quoting a value with '|' keeps its reason (toml's excerpt lines also hold '|').
        ("[[hosts]]\nname = \"c\"\njitter = \"|1us\"".into(), "hosts[2].jitter: '|1us' does not start with a number"),
        // TOML integers are signed 64-bit: the parser refuses the number, saying where.
        ("[run]\nseed = 9223372036854775808".into(), "line 18, column 8: number too large"),
    ];
    for (extra, want) in cases {
        let text = format!("{TINY}\n{extra}\n");
        let got = match super::parse_toml(&text) {
            Err(e) => e.to_string(),
            Ok(sc) => match Run::new(&sc, None) {
                Err(e) => e.to_string(),
                Ok(_) => panic!("{extra:?} should be rejected"),
            },
        };
        assert!(got.contains(want), "for {extra:?}: got {got:?}, want {want:?}");
    }
    // Through JSON (Python dicts), a seed above 2^63 - 1 is representable and refused.
    let sc = super::parse_toml(TINY).unwrap();
    let mut v = serde_json::to_value(&sc).unwrap();
    v["run"]["seed"] = serde_json::json!(u64::MAX);
    let e = super::parse_json(&v.to_string()).and_then(|sc| Run::new(&sc, None)).expect_err("seed above 2^63 - 1");
    assert_eq!(e.to_string(), format!("run.seed: must be an integer in [0, 2^63), got {}", u64::MAX));
    let e = Run::new(&sc, Some(1 << 63)).expect_err("seed argument above 2^63 - 1");
    assert!(e.to_string().starts_with("run.seed: must be an integer in [0, 2^63)"), "{e}");
    // The largest seed runs, and its resolved scenario serializes to TOML.
    let mut r = Run::new(&sc, Some(i64::MAX as u64)).unwrap();
    r.sim.run();
    assert!(r.resolved_toml().contains("seed = 9223372036854775807"));
}

/// A run with no duration whose flow cannot finish stops at the simulated-time limit, saying
/// so, instead of running for ever or saturating the clock.
#[test]
fn a_run_that_cannot_finish_stops_at_the_time_limit() {
    // 99.9 % loss: the transfer of 10 MB cannot complete within 10^6 s of backed-off RTOs.
    let text = r#"
name = "stuck"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[emulators]]
name = "e"
loss = 0.999
[[links]]
between = ["a", "e"]
rate = "1Gbps"
[[links]]
between = ["e", "b"]
rate = "1Gbps"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = { bytes = "10MB" }
"#;
    let r = run(text, 1);
    let s = r.sim.summary();
    assert_eq!(s.stop_reason, crate::sim::StopReason::TimeLimit);
    assert_eq!(s.sim_time_s, 1e6);
    assert!(s.flows[0].finish_s.is_none());
    let done = run(TINY, 1);
    assert_eq!(done.sim.summary().stop_reason, crate::sim::StopReason::FlowsDone);
}

#[test]
fn impairment_errors_name_the_field() {
    let emu = |extra: &str| {
        format!("name = \"t\"\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n[[emulators]]\nname = \"e\"\n{extra}\n[[links]]\nbetween = [\"a\", \"e\"]\nrate = \"1Gbps\"\n[[links]]\nbetween = [\"e\", \"b\"]\nrate = \"1Gbps\"\n[[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\nbulk = {{ bytes = \"1MB\" }}\n")
    };
    let cases = [
        ("reorder = 1.5\nreorder_delay = \"1ms\"", "emulators[0].reorder: 1.5 is not a probability in [0, 1)"),
        ("reorder = 0.1", "emulators[0].reorder_delay: reorder needs reorder_delay"),
        ("reorder_delay = \"1ms\"", "emulators[0].reorder_delay: 1ms has no effect without reorder"),
        ("duplicate = -0.1", "emulators[0].duplicate: -0.1 is not a probability"),
        ("duplicate = 0.1\nrate = \"1Gbps\"", "emulators[0].duplicate: duplication with a rate limit is not modelled"),
        ("preset = \"anue\"\nduplicate = 0.1", "emulators[0].duplicate: the anue preset does not reorder or duplicate"),
    ];
    for (extra, want) in cases {
        let got = error_of(&emu(extra));
        assert!(got.contains(want), "for {extra:?}: got {got:?}, want {want:?}");
    }
    // Valid: the copies are counted, and reordered packets reach the receiver.
    let mut r = run(&emu("delay = \"1ms\"\nreorder = 0.2\nreorder_delay = \"300us\"\nduplicate = 0.05"), 4);
    r.sim.run();
    let s = r.sim.summary();
    assert!(s.packets.duplicated > 20, "{:?}", s.packets);
    assert_eq!(s.flows[0].bytes_delivered, 1_000_000);
    let p = s.packets;
    assert_eq!(p.created + p.duplicated, p.delivered + p.queue_drops + p.random_drops + r.sim.packets_inside());
    assert!(s.flows[0].dupacks_received > 0, "reordering makes duplicate ACKs");
}

/// The defaults docs/scenario-format.md documents are the ones resolution fills in, and
/// Comet Drop's delay is rounded to the nearest 1 ms step (half a step rounds up).
#[test]
fn documented_defaults_are_the_resolved_ones() {
    let text = r#"
name = "defaults"
[run]
duration = "1s"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[emulators]]
name = "comet"
preset = "comet-drop"
delay = "100.5ms"
[[emulators]]
name = "dn"
preset = "dummynet"
rate = "100Mbps"
delay = "1.4ms"
[[emulators]]
name = "hz"
preset = "harmonizer"
harmonize_from = "s"
[[links]]
between = ["a", "comet"]
rate = "1Gbps"
[[links]]
between = ["comet", "dn"]
rate = "1Gbps"
[[links]]
between = ["dn", "s"]
rate = "1Gbps"
[[links]]
between = ["s", "hz"]
rate = "1Gbps"
[[links]]
between = ["hz", "b"]
rate = "1Gbps"
[[taps]]
name = "t"
link = ["a", "comet"]
[[flows]]
name = "f"
src = "a"
dst = "b"
[[flows]]
name = "g"
src = "a"
dst = "b"
[[flows]]
name = "u"
kind = "udp-cbr"
src = "a"
dst = "b"
cbr = { rate = "1Mbps" }
[[coordinators]]
kind = "decp"
flows = ["f", "g"]
"#;
    let r = Run::from_toml(text, None).unwrap().resolved;
    let v = serde_json::to_value(&r).unwrap();
    let pkts = |n: u64| serde_json::json!(format!("{n}pkts"));
    assert_eq!(v["defaults"]["queue"], pkts(1000), "defaults.queue");
    assert_eq!(v["links"][0]["queue_a"], pkts(1000), "a link's queue defaults to defaults.queue");
    assert_eq!(v["run"]["stop"], "duration");
    assert_eq!(v["hosts"][0]["jitter"], "0s");
    assert_eq!(v["hosts"][0]["start_skew"], "0s");
    // Comet Drop: 1 ms steps, to the nearest (100.5 ms -> 101 ms); loss off.
    assert_eq!(v["emulators"][0]["quantum"], "1ms");
    assert_eq!(v["emulators"][0]["delay"], "101ms");
    assert_eq!(v["emulators"][0]["loss"], 0.0);
    // Dummynet: a 50-slot queue; no quantum, so the delay is kept.
    assert_eq!(v["emulators"][1]["queue"], pkts(50));
    assert_eq!(v["emulators"][1]["delay"], "1400us");
    for k in ["harmonize_rtt", "harmonize_interval", "harmonize_max_delay"] {
        assert_eq!(v["emulators"][2][k], "300ms", "{k}");
    }
    let tap = &v["taps"][0];
    assert_eq!((tap["direction"].as_str(), tap["resolution"].as_str(), tap["pcap"].as_bool(), tap["trace"].as_bool()), (Some("both"), Some("100ns"), Some(true), Some(false)));
    let f = &v["flows"][0];
    assert_eq!((f["start"].as_str(), f["count"].as_u64(), f["class"].as_u64(), f["bulk"]["write_size"].as_str()), (Some("0s"), Some(1), Some(0), Some("128KiB")));
    assert_eq!(v["flows"][2]["cbr"]["packet_size"], "1500B", "udp-cbr packet size");
    assert_eq!(v["coordinators"][0]["interval"], "300ms");
    assert_eq!(v["coordinators"][0]["tolerance"], 0.1);
    // Comet Drop rounding at the half step, below it and at zero.
    for (given, used) in [("0.5ms", "1ms"), ("0.49ms", "0s"), ("1.5ms", "2ms"), ("2.4999ms", "2ms"), ("0s", "0s")] {
        let t = text.replace("delay = \"100.5ms\"", &format!("delay = \"{given}\""));
        let r = Run::from_toml(&t, None).unwrap().resolved;
        assert_eq!(serde_json::to_value(&r).unwrap()["emulators"][0]["delay"], used, "comet-drop delay {given}");
    }
}

#[test]
fn applications_report_their_milestones() {
    // A bulk transfer of 100 KB and a CBR stream of 10 datagrams: the sender reports what it
    // wrote when it closes, the sink what it received when the transfer completes (the flow's
    // finish time), the source how many datagrams it sent after the last.
    let text = format!(
        "{TINY}{}",
        r#"
[[flows]]
name = "u"
kind = "udp-cbr"
src = "a"
dst = "b"
cbr = { rate = "1Mbps", packet_size = "1250B" }
stop = "100ms"
[trace]
milestones = true
"#
    );
    let r = run(&text, 3);
    let m = r.sim.traces.milestones.as_ref().expect("milestones traced");
    let s = r.sim.summary();
    let rows: Vec<(u32, u32, u32, u64)> = (0..m.time_s.len()).map(|i| (m.app[i], m.flow[i], m.kind[i], m.bytes[i])).collect();
    let (written, received, sent) = (Milestone::Written as u32, Milestone::Received as u32, Milestone::Sent as u32);
    assert_eq!(rows.len(), 3, "{rows:?}");
    assert!(rows.contains(&(0, 0, written, 100_000)), "{rows:?}");
    assert!(rows.contains(&(1, 0, received, 100_000)), "{rows:?}");
    assert!(rows.contains(&(2, 1, sent, 10)), "1 Mb/s of 1250-byte datagrams for 100 ms: {rows:?}");
    let at = |kind: u32| m.time_s[rows.iter().position(|r| r.2 == kind).unwrap()];
    assert_eq!(Some(at(received)), s.flows[0].finish_s, "received when the transfer completed");
    assert!(at(written) < at(received));
    assert_eq!(Some(at(sent)), s.flows[1].finish_s);
    let j: serde_json::Value = serde_json::from_str(&r.summary_json()).unwrap();
    assert_eq!(j["trace_codes"]["milestones.kind"]["1"], "received");
}

#[test]
fn what_could_never_work_or_would_do_nothing_is_refused_by_field() {
    // Each accepted silently before (issue: reliability, "silent nonsense").
    let dur = "[run]\nduration = \"1s\"\n";
    let cases: &[(String, &str)] = &[
        // A second link between the same two nodes: never routed, its queues share the names.
        ("[[links]]\nbetween = [\"b\", \"a\"]\nrate = \"1Gbps\"".into(), "links[1].between: links[0] already joins 'b' and 'a'"),
        // Names holding the separators of queue and link names.
        ("[[hosts]]\nname = \"c->d\"".into(), "hosts[2].name: 'c->d' contains '->'"),
        ("[[switches]]\nname = \"s,1\"".into(), "switches[0].name: 's,1' contains ','"),
        (format!("[[hosts]]\nname = \"{}\"", "h".repeat(300)), "hosts[2].name: 300 bytes long; a name has at most 256 bytes"),
        // A flow that would never send, or never start.
        ("[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"\nstart = \"2s\"\nstop = \"1s\"".into(), "flows[1].stop: 1s is not after the flow's start (2s)"),
        (format!("{dur}[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"\nstart = \"3s\""), "flows[1].start: 3s is not before the run's end (run.duration = 1s)"),
        // Keys with no effect.
        ("[defaults]\nqueue = { limit = \"40pkts\", ecn_threshold = \"50pkts\" }".into(), "defaults.queue.ecn_threshold: 50pkts is above the queue's limit (40pkts)"),
        ("[defaults]\nqueue = { cells = 100, cbr_unit = \"cell\" }".into(), "defaults.queue.cbr_unit: only applies with cbr"),
        ("[defaults.tcp.ahtcp]\nthreshold_rule = \"peak\"\nthreshold = \"1Mbps\"".into(), "defaults.tcp.ahtcp.threshold: the peak rule sets the threshold from the measured peak"),
        // A transfer that can never complete: held ACKs read as they are, against Nagle.
        ("[defaults.tcp]\nvariant = \"ahtcp\"\n[defaults.tcp.ahtcp]\nthreshold = \"1Mbps\"\nalign = \"restart\"".into(), "defaults.tcp.ahtcp.align: with align = \"restart\""),
        // Asking with nothing held while the server takes a request's number as its SND.UNA.
        ("[defaults.tcp.ahtcp]\nthreshold = \"1Mbps\"\nalign = \"restart\"\nask_empty = true".into(), "defaults.tcp.ahtcp.ask_empty: needs align = \"all\""),
        ("[defaults.tcp.ahtcp]\nthreshold = \"1Mbps\"\nask_empty = true".into(), "defaults.tcp.ahtcp.ask_empty: needs restart = \"floor\" or \"literal\""),
        // An agent acting every 10 us with nothing but the 10^6 s cap to end the run.
        ("[defaults.tcp]\nvariant = \"ahtcp\"\n[defaults.tcp.ahtcp]\nthreshold = \"1Mbps\"\ninterval = \"10us\"".into(), "defaults.tcp.ahtcp.interval: 10us without run.duration"),
        // Below the clock's resolution.
        ("[[flows]]\nname = \"g\"\nsrc = \"a\"\ndst = \"b\"\nstart = \"1e-30s\"".into(), "flows[1].start: '1e-30s' is shorter than one picosecond"),
    ];
    for (extra, want) in cases {
        let text = format!("{TINY}\n{extra}\n");
        let got = error_of(&text);
        assert!(got.contains(want), "for {extra:?}: got {got:?}, want {want:?}");
    }
    // With a duration, a fast AHTCP client or nagle off with align = "restart" is accepted.
    let ok = format!("{TINY}\n{dur}[defaults.tcp]\nvariant = \"ahtcp\"\nnagle = false\n[defaults.tcp.ahtcp]\nthreshold = \"1Mbps\"\ninterval = \"10us\"\nalign = \"restart\"\n");
    Run::from_toml(&ok, None).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn coordinators_count_their_flows_after_expansion_and_refuse_unknown_or_repeated_ones() {
    let base = |flows: &str| {
        format!("{TINY}\n[run]\nduration = \"1s\"\n[[flows]]\nname = \"bulk\"\nsrc = \"a\"\ndst = \"b\"\ncount = 3\n[[coordinators]]\nkind = \"decp\"\nflows = {flows}\n")
    };
    // A replicated flow's base name means all its copies: three flows, enough to coordinate.
    let r = Run::from_toml(&base("[\"bulk\"]"), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.resolved.coordinators[0].members, ["bulk.0", "bulk.1", "bulk.2"]);
    let r = Run::from_toml(&base("[\"f\", \"bulk.2\"]"), None).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(r.resolved.coordinators[0].members, ["f", "bulk.2"]);
    let cases = [
        ("[\"bulk.99\"]", "coordinators[0].flows[0]: no flow named 'bulk.99' ('bulk' has copies bulk.0 … bulk.2)"),
        ("[\"f\", \"f\"]", "coordinators[0].flows[1]: 'f' is listed twice"),
        ("[\"bulk\", \"bulk.1\"]", "coordinators[0].flows[1]: 'bulk.1' is listed twice"),
        ("[\"f\"]", "coordinators[0].flows: coordinate at least two flows (these name 1)"),
        ("[\"f.0\", \"bulk\"]", "coordinators[0].flows[0]: no flow named 'f.0' ('f' is a single flow)"),
    ];
    for (flows, want) in cases {
        let got = error_of(&base(flows));
        assert!(got.contains(want), "for {flows}: got {got:?}, want {want:?}");
    }
}

#[test]
fn an_aal5_frame_above_65535_bytes_is_refused() {
    // MSS 65495 makes 65535-byte IP packets; LLC/SNAP's 8 bytes take the frame past AAL5's
    // largest CPCS-SDU. VC multiplexing adds nothing, so the same packets fit.
    let text = |layer: &str| {
        format!("{TINY}\n[flows.tcp]\nmss = 65495\nsndbuf = \"1MB\"\nrcvbuf = \"1MB\"\n").replace("delay = \"1ms\"", &format!("delay = \"1ms\"\nlink_layer = \"{layer}\""))
    };
    let got = error_of(&text("aal5"));
    assert!(got.contains("flows[0].tcp.mss: 65535-byte IP packets plus 8 bytes of encapsulation exceed the largest AAL5 frame"), "{got}");
    Run::from_toml(&text("aal5-vc-mux"), None).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn traces_stop_recording_at_their_memory_budget_and_the_run_goes_on_unchanged() {
    // 20 s of a 100 Mb/s transfer with its window traced (about one row per ACK): a 1 MiB
    // budget is reached early; the trace stops there, the run goes to its end and its results
    // are those of the untraced run.
    let text = |trace: &str| {
        format!("{TINY}\n[run]\nduration = \"20s\"\ntrace_memory = \"1MiB\"\n{trace}")
            .replace("bulk = { bytes = \"100KB\" }", "")
            .replace("rate = \"10Mbps\"", "rate = \"100Mbps\"")
    };
    let traced = run(&text("[trace]\ncwnd = true\n"), 1);
    let s = traced.sim.summary();
    assert_eq!(s.stop_reason, crate::sim::StopReason::Duration);
    assert_eq!(s.sim_time_s, 20.0);
    let at = s.traces_stopped_s.expect("the traces reached their budget");
    assert!(at > 0.0 && at < 20.0, "stopped recording at {at} s");
    let held = traced.sim.traces.heap_bytes();
    assert!(held <= 1 << 20 && held > 1 << 19, "the trace holds {held} bytes, at most the budget");
    let cwnd = traced.sim.traces.cwnd.as_ref().expect("traced");
    let last = *cwnd.time_s.last().expect("rows");
    assert!(last <= at && last > at - 0.1, "the last row ({last} s) is from before the stop ({at} s)");
    let plain = run(&text(""), 1).sim.summary();
    assert_eq!(plain.traces_stopped_s, None);
    let json = |s: &crate::sim::RunSummary| serde_json::to_string(&s.flows).expect("serializes");
    assert_eq!(json(&s), json(&plain), "observing the run changed it");
    assert_eq!(s.events, plain.events);
}

#[test]
fn a_receiver_that_reads_at_its_own_rate_closes_the_window_and_bounds_the_transfer() {
    // 1 MB over 10 Mb/s with a receiver reading 2 Mb/s, 8 KB at a time into a 64 KB buffer:
    // unread bytes fill the buffer and the window closes, so the transfer takes about
    // (1 MB − 64 KB) / 2 Mb/s ≈ 3.74 s, not the 0.8 s the link allows.
    let text = |read: &str| {
        format!("{TINY}\n[defaults.tcp]\nrcvbuf = \"64KB\"\n")
            .replace("rate = \"10Mbps\"", "rate = \"10Mbps\"")
            .replace("bulk = { bytes = \"100KB\" }", &format!("bulk = {{ bytes = \"1MB\"{read} }}"))
    };
    let fast = run(&text(""), 1).sim.summary().flows[0].clone();
    let slow = run(&text(", read_rate = \"2Mbps\", read_size = \"8KB\""), 1).sim.summary().flows[0].clone();
    let (tf, ts) = (fast.finish_s.expect("done"), slow.finish_s.expect("done"));
    assert!(tf < 1.2, "link-bound: {tf}");
    assert!((3.5..4.1).contains(&ts), "reader-bound: {ts}");
    assert_eq!(slow.bytes_delivered, 1_000_000);
    assert!(error_of(&text(", read_size = \"8KB\"")).contains("flows[0].bulk.read_size: only with bulk.read_rate"));
    assert!(error_of(&text(", read_rate = \"2Mbps\", read_size = \"0B\"")).contains("flows[0].bulk.read_size: must be at least 1 byte"));
}

#[test]
fn a_throughput_trace_beyond_the_trace_memory_is_refused_before_the_run() {
    // A throughput trace that cannot fit is refused before the run.
    let e = error_of(&format!("{TINY}\n[run]\nduration = \"100s\"\ntrace_memory = \"1MiB\"\n[trace]\nthroughput_interval = \"1ms\"\n"));
    assert!(e.contains("trace.throughput_interval: 100000 bins of 1 flows make 100000 rows; at most 37449"), "{e}");
    assert!(error_of(&format!("{TINY}\n[run]\ntrace_memory = \"1KB\"\n")).contains("run.trace_memory: 1KB is out of range (1MiB..=1TiB)"));
}
