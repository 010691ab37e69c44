//! The `link_usage` trace (`trace.link_usage`): what it counts adds up to what the pipes
//! report, the truth it gives on a fixed load is C − the load, and bad settings are refused
//! naming their key. (That it changes no result: tests/observers.rs.)

use std::collections::BTreeMap;

use tcplab_core::scenario::parse_toml;
use tcplab_core::trace::LinkUsageTrace;
use tcplab_core::units::SimTime;
use tcplab_core::Run;

fn run(text: &str) -> Run {
    let mut r = Run::from_toml(text, Some(1)).unwrap_or_else(|e| panic!("{e}\n{text}"));
    r.sim.run();
    r
}

/// (pipe, flow) → bytes over the whole trace.
fn totals(t: &LinkUsageTrace) -> BTreeMap<(u32, u32), u64> {
    let mut m = BTreeMap::new();
    for i in 0..t.time_s.len() {
        *m.entry((t.pipe[i], t.flow[i])).or_insert(0) += t.bytes[i];
    }
    m
}

fn shipped(rel: &str) -> String {
    std::fs::read_to_string(format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// Per watched pipe and interval, the trace's bytes are the bytes whose serialization ended in
/// that interval: a run with an event per hop is advanced one interval at a time and the
/// pipe's own count of finished bytes (`Pipe::transmitted_by`) read at each interval's end
/// (the usual run, whose watched pipes may be passed on or merged, gives the same trace); over the run they add
/// up to the queue summary's `bytes_transmitted` (the duration a whole number of intervals).
/// Pipes of every kind: the smoke scenario's bottleneck (a queue), its emulator's two
/// directions (no rate: bytes pass at once) and the ACK direction; the ATM scenario's access
/// link; the leaf-spine's leaf uplinks, whose packets come through merges. Rows are per (pipe, flow) with bytes, in order, at interval ends.
///
/// The ATM port is the exception: the port decides a frame's cells, and so the time its last
/// cell leaves, when it admits the frame, and its pipe counts the frame then (so does the
/// summary's `bytes_transmitted`), while the trace holds the frame back until its last cell
/// has left. So at every interval's end the trace's running total is at most the admitted
/// bytes, it falls behind them at some (50 µs intervals: frames are still leaving), by no
/// more than the frames admitted within the port's longest drain (1,024 buffered cells and a
/// 32-cell frame at UBR's share of the line, 353,208 − 141,509 cells/s for the 60 Mb/s CBR:
/// 1,056 / 211,699 s = 4.99 ms, 100 intervals), and at the stop by what is still leaving.
#[test]
fn link_usage_sums_to_bytes_transmitted() {
    let smoke = shipped("scenarios/smoke/smoke.toml").replace("stop = \"flows-done\"", "").replace("duration = \"10s\"", "duration = \"2s\"")
        + "link_usage = { links = [\"sw1->emu\", \"emu:sw1->sw2\", \"emu:sw2->sw1\", \"sw2->emu\"], interval = \"20ms\" }\n";
    let atm = shipped("scenarios/p4_atm/atm.toml").replace("duration = \"10s\"", "duration = \"1s\"")
        + "\n[trace]\nlink_usage = { links = [\"a->sw\", \"sw->b\"], interval = \"50us\" }\n";
    // Four leaf uplinks, each fed by its leaf's hosts through a merge.
    let leaf_spine = shipped("scenarios/topologies/leaf_spine.toml").replace("duration = \"50ms\"", "duration = \"6ms\"").replace("interval = \"5ms\" }", "interval = \"100us\" }");
    let uplinks = vec!["ls.leaf0->ls.spine0", "ls.leaf0->ls.spine1", "ls.leaf0->ls.spine2", "ls.leaf0->ls.spine3"];
    let cases = [
        (smoke, vec!["sw1->emu", "emu:sw1->sw2", "emu:sw2->sw1", "sw2->emu"], 20_000_000_000u64, None),
        (atm, vec!["a->sw", "sw->b"], 50_000_000, Some("sw->b")),
        (leaf_spine, uplinks, 100_000_000, None),
    ];
    for (text, names, interval_ps, port) in cases {
        let mut r = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        r.sim.run();
        // The pipes' own counts, read at each interval's end of a run with an event per hop
        // (in the usual run a pipe may have admitted, ahead of its arrival event, a packet
        // that arrives after the read; at the stop the counts agree).
        let mut reference = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        reference.sim.hop_by_hop();
        let pipes: Vec<usize> = names.iter().map(|n| r.sim.fabric.pipes.iter().position(|p| p.name == *n).unwrap()).collect();
        // Per pipe, the bytes finished (at the port: admitted) by each interval's end.
        let mut by_interval: Vec<Vec<u64>> = vec![Vec::new(); pipes.len()];
        let mut last = vec![0u64; pipes.len()];
        let mut k = 0u64;
        while !reference.sim.finished() {
            k += 1;
            let t = SimTime(k * interval_ps);
            reference.sim.advance(t);
            for (i, &p) in pipes.iter().enumerate() {
                let done = reference.sim.fabric.pipes[p].transmitted_by(t).1;
                by_interval[i].push(done - last[i]);
                last[i] = done;
            }
        }
        if port.is_none() && names[0].starts_with("ls.") {
            let merged: Vec<usize> = r.sim.fabric.merged_pipes().map(|p| p.0 as usize).collect();
            assert!(pipes.iter().all(|p| merged.contains(p)), "the watched uplinks are merged");
        }
        let t = r.sim.traces.link_usage.as_ref().expect("recorded");
        let hop_by_hop = reference.sim.traces.link_usage.as_ref().expect("recorded");
        assert_eq!((&t.time_s, &t.pipe, &t.flow, &t.bytes), (&hop_by_hop.time_s, &hop_by_hop.pipe, &hop_by_hop.flow, &hop_by_hop.bytes), "the same trace hop by hop");
        let mut traced: BTreeMap<(u32, u64), u64> = BTreeMap::new();
        for row in 0..t.time_s.len() {
            let k = (t.time_s[row] * 1e12 / interval_ps as f64).round() as u64;
            *traced.entry((t.pipe[row], k)).or_insert(0) += t.bytes[row];
        }
        for (i, name) in names.iter().enumerate() {
            let got: Vec<u64> = (1..=by_interval[i].len() as u64).map(|k| traced.get(&(i as u32, k)).copied().unwrap_or(0)).collect();
            let total: u64 = got.iter().sum();
            let counted = r.sim.fabric.pipes[pipes[i]].transmitted_by(r.sim.now()).1;
            assert!(total > 0, "{name} carried something");
            if port == Some(*name) {
                let running = |v: &[u64]| {
                    v.iter()
                        .scan(0u64, |s, b| {
                            *s += b;
                            Some(*s)
                        })
                        .collect::<Vec<u64>>()
                };
                let (traced_by, admitted_by) = (running(&got), running(&by_interval[i]));
                let behind = traced_by.iter().zip(&admitted_by).filter(|(t, a)| t < a).count();
                assert!(traced_by.iter().zip(&admitted_by).all(|(t, a)| t <= a), "{name}: never counted before admitted");
                assert!(behind > 100, "{name}: frames held back until their last cell left at {behind} interval ends");
                for k in 100..traced_by.len() {
                    assert!(traced_by[k] >= admitted_by[k - 100], "{name}: a frame admitted 5 ms before interval {k} is still not counted");
                }
                assert!(counted - total < 1056 * 48, "{name}: at the stop, at most a port's worth still leaving ({} bytes)", counted - total);
            } else {
                assert_eq!(got, by_interval[i], "{name}: bytes per interval, trace vs the pipe's count");
                assert_eq!(total, counted, "{name}: over the run");
                if let Some(q) = r.sim.summary().queues.iter().find(|q| q.name == *name) {
                    assert_eq!(total, q.bytes_transmitted, "{name}: the queue summary");
                }
            }
        }
        assert_eq!(totals(t).keys().map(|&(p, _)| p).max(), Some(names.len() as u32 - 1), "every pipe has rows");
        // Rows at interval ends, sorted by (time, pipe, flow), each with bytes.
        for k in 0..t.time_s.len() {
            let bins = t.time_s[k] * 1e12 / interval_ps as f64;
            assert!((bins - bins.round()).abs() < 1e-6 && bins >= 1.0, "row at {}", t.time_s[k]);
            assert!(t.bytes[k] > 0);
            if k > 0 {
                assert!((t.time_s[k - 1], t.pipe[k - 1], t.flow[k - 1]) < (t.time_s[k], t.pipe[k], t.flow[k]), "order at row {k}");
            }
        }
    }
}

/// A window-limited TCP flow (the measured one) beside a 30 Mb/s CBR stream of 1500-byte
/// datagrams over a 100 Mb/s link with Ethernet framing (38 bytes): C, the link's IP-byte rate
/// for 1500-byte packets, is 100·1500/1538 Mb/s, and in every 10 ms interval the truth
/// A = C − (bytes of every flow but the measured one)·8/Δ is C − 30 Mb/s within one packet
/// (1500·8/Δ = 1.2 Mb/s). The measured flow keeps the queue nearly empty (its window, 64 KB
/// over a 20 ms RTT, is about 26 Mb/s), so the CBR's departures stay evenly spaced.
#[test]
fn truth_equals_c_minus_cbr_on_a_fixed_load() {
    let text = r#"
name = "fixed-load"
[run]
duration = "3s"
[[hosts]]
name = "snd"
[[hosts]]
name = "rcv"
[[hosts]]
name = "xs"
[[hosts]]
name = "xr"
[[switches]]
name = "r1"
[[switches]]
name = "r2"
[[links]]
between = ["snd", "r1"]
rate = "1Gbps"
[[links]]
between = ["xs", "r1"]
rate = "1Gbps"
[[links]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "10ms"
framing = "38B"
queue = "100pkts"
[[links]]
between = ["r2", "rcv"]
rate = "1Gbps"
[[links]]
between = ["r2", "xr"]
rate = "1Gbps"
[[flows]]
name = "measured"
src = "snd"
dst = "rcv"
tcp = { rcvbuf = "64KB" }
[[flows]]
name = "udp"
kind = "udp-cbr"
src = "xs"
dst = "xr"
cbr = { rate = "30Mbps", packet_size = "1500B" }
[trace]
link_usage = { links = ["r1->r2"], interval = "10ms" }
"#;
    let r = run(text);
    let t = r.sim.traces.link_usage.as_ref().unwrap();
    let pipe = r.sim.fabric.pipes.iter().find(|p| p.name == "r1->r2").unwrap();
    let c = 100e6 * 1500.0 / pipe.link_layer().line_bytes(1500) as f64;
    assert!((c - 97_529_258.777).abs() < 1e-3, "C = {c}");
    let dt = 0.01;
    let bins = (3.0 / dt) as usize;
    let (mut cross, mut measured) = (vec![0u64; bins], vec![0u64; bins]);
    for i in 0..t.time_s.len() {
        let k = (t.time_s[i] / dt).round() as usize - 1;
        if t.flow[i] == 0 {
            measured[k] += t.bytes[i];
        } else {
            cross[k] += t.bytes[i];
        }
    }
    assert!(measured.iter().sum::<u64>() > 5_000_000, "the measured flow ran beside it");
    let one_packet = 1500.0 * 8.0 / dt;
    // From the second interval (the first datagram crosses the access link first).
    for (k, &b) in cross.iter().enumerate().skip(1) {
        let a = c - b as f64 * 8.0 / dt;
        assert!((a - (c - 30e6)).abs() <= one_packet + 1e-6, "interval ending {:.2} s: A = {a:.0}, C − CBR = {:.0}", (k + 1) as f64 * dt, c - 30e6);
    }
    let mean = cross[1..].iter().sum::<u64>() as f64 * 8.0 / (dt * (bins - 1) as f64);
    assert!((mean - 30e6).abs() < 30e6 * 1e-3, "mean CBR {mean:.0}");
}

fn error_of(trace: &str) -> String {
    let text = shipped("scenarios/smoke/smoke.toml").replace("[trace]\n", &format!("[trace]\n{trace}\n"));
    match parse_toml(&text).and_then(|sc| Run::new(&sc, Some(1))) {
        Ok(_) => panic!("accepted: {trace}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_link_usage_settings_name_their_key() {
    let cases = [
        (r#"link_usage = { links = ["sw1->nowhere"], interval = "10ms" }"#, "trace.link_usage.links[0]: no link direction or emulator direction is named 'sw1->nowhere'"),
        (r#"link_usage = { links = ["sw1->emu", "sw2->sw1"], interval = "10ms" }"#, "trace.link_usage.links[1]: no link direction or emulator direction is named 'sw2->sw1'"),
        (r#"link_usage = { links = ["sw1->emu"], interval = "0s" }"#, "trace.link_usage.interval: must be positive"),
        (r#"link_usage = { links = ["sw1->emu"], interval = "-1ms" }"#, "trace.link_usage.interval: '-1ms' must be a non-negative finite number"),
        (r#"link_usage = { links = ["sw1->emu"], interval = "100ns" }"#, "trace.link_usage.interval: 100ns is shorter than the shortest period"),
        (r#"link_usage = { links = [], interval = "10ms" }"#, "trace.link_usage.links: is empty"),
        (r#"link_usage = { links = "every", interval = "10ms" }"#, "trace.link_usage.links: give a list of link directions"),
        (r#"link_usage = { links = ["sw1->emu", "sw1->emu"], interval = "10ms" }"#, "trace.link_usage.links[1]: 'sw1->emu' is already links[0]"),
        (r#"link_usage = { interval = "10ms" }"#, "trace.link_usage: missing field `links`"),
        (r#"link_usage = { links = ["sw1->emu"] }"#, "trace.link_usage: missing field `interval`"),
        (r#"link_usage = { links = ["sw1->emu"], interval = "10ms", every = true }"#, "trace.link_usage.every: unknown field"),
    ];
    for (trace, want) in cases {
        let e = error_of(trace);
        assert!(e.contains(want), "{trace}:\n  got  {e}\n  want {want}");
    }
    let idle = shipped("scenarios/smoke/smoke.toml")
        .replace("duration = \"10s\"", "")
        .replace("stop = \"flows-done\"", "stop = \"idle\"")
        .replace("throughput_interval = \"100ms\"\n", "")
        + "link_usage = { links = \"all\", interval = \"10ms\" }\n";
    let e = Run::from_toml(&idle, Some(1)).unwrap_err().to_string();
    assert!(e.contains("run.stop: \"idle\" with no run.duration never ends while trace.link_usage samples"), "{e}");
}
