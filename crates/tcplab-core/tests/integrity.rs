//! TCP under loss, reordering and duplication (`net::impair`): for every congestion control,
//! profile, SACK on/off and timestamps on/off, every byte is delivered exactly once and in
//! order, no cumulative ACK a receiver sends goes backwards, packets are conserved, and runs
//! end.
//!
//! `TCPLAB_INTEGRITY_CASES=N` runs N cases instead of the default.

use proptest::prelude::*;

use tcplab_core::flow::FlowEngine;
use tcplab_core::scenario::parse_toml;
use tcplab_core::sim::StopReason;
use tcplab_core::Run;

mod seeded;

/// One generated case.
#[derive(Clone, Debug)]
struct Case {
    cc: usize,
    profile: usize,
    sack: bool,
    timestamps: bool,
    loss: f64,
    reorder: f64,
    reorder_delay: &'static str,
    duplicate: f64,
    delay: &'static str,
    bytes_kb: u32,
    mss: u32,
    bottleneck: &'static str,
    queue: &'static str,
}

fn cases() -> impl Strategy<Value = Case> {
    (
        (0usize..4, 0usize..3, any::<bool>(), any::<bool>()),
        (
            prop::sample::select(vec![0.0, 0.005, 0.02, 0.05]),
            prop::sample::select(vec![0.0, 0.01, 0.1, 0.3]),
            prop::sample::select(vec!["10us", "100us", "1ms", "5ms"]),
            prop::sample::select(vec![0.0, 0.01, 0.1]),
        ),
        (
            prop::sample::select(vec!["0s", "1ms", "10ms"]),
            20u32..1500,
            prop::sample::select(vec![536u32, 1460, 8960]),
            prop::sample::select(vec!["10Mbps", "100Mbps", "1Gbps"]),
            prop::sample::select(vec!["5pkts", "30pkts", "300pkts"]),
        ),
    )
        .prop_map(|((cc, profile, sack, timestamps), (loss, reorder, reorder_delay, duplicate), (delay, bytes_kb, mss, bottleneck, queue))| Case {
            cc,
            profile,
            sack,
            timestamps,
            loss,
            reorder,
            reorder_delay,
            duplicate,
            delay,
            bytes_kb,
            mss,
            bottleneck,
            queue,
        })
}

/// The scenario: a → s1 → impairing emulator → (bottleneck) s2 → b, one flow each way, taps on
/// both hosts' links recording what each host sends.
fn render(c: &Case) -> String {
    let cc = ["reno", "newreno", "bic", "cubic"][c.cc];
    let profile = ["rfc", "linux-2.6.16", "linux-modern"][c.profile];
    let reorder = if c.reorder > 0.0 { format!("reorder = {}\nreorder_delay = \"{}\"\n", c.reorder, c.reorder_delay) } else { String::new() };
    format!(
        r#"
name = "integrity"
[run]
duration = "3000s"
stop = "flows-done"
[defaults.tcp]
profile = "{profile}"
cc = "{cc}"
sack = {sack}
timestamps = {ts}
mss = {mss}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[emulators]]
name = "emu"
delay = "{delay}"
loss = {loss}
duplicate = {dup}
{reorder}
[[links]]
between = ["a", "s1"]
rate = "1Gbps"
delay = "10us"
[[links]]
between = ["s1", "emu"]
rate = "1Gbps"
[[links]]
between = ["emu", "s2"]
rate = "{bottleneck}"
queue = "{queue}"
[[links]]
between = ["s2", "b"]
rate = "1Gbps"
delay = "10us"
[[taps]]
name = "from-b"
link = ["b", "s2"]
direction = "b"
pcap = false
trace = true
[[taps]]
name = "from-a"
link = ["a", "s1"]
direction = "a"
pcap = false
trace = true
[[flows]]
name = "ab"
src = "a"
dst = "b"
bulk = {{ bytes = "{kb}KB" }}
[[flows]]
name = "ba"
src = "b"
dst = "a"
bulk = {{ bytes = "{kb2}KB" }}
start = "3ms"
"#,
        sack = c.sack,
        ts = c.timestamps,
        mss = c.mss,
        delay = c.delay,
        loss = c.loss,
        dup = c.duplicate,
        bottleneck = c.bottleneck,
        queue = c.queue,
        kb = c.bytes_kb,
        kb2 = c.bytes_kb / 2 + 1,
    )
}

/// Check one case; `Err` describes the first violation.
fn check(c: &Case, seed: u64) -> Result<(u64, u64), String> {
    let text = render(c);
    let sc = parse_toml(&text).map_err(|e| format!("does not load: {e}"))?;
    let mut run = Run::new(&sc, Some(seed)).map_err(|e| format!("does not build: {e}"))?;
    run.sim.run();
    let s = run.sim.summary();
    if s.stop_reason != StopReason::FlowsDone {
        return Err(format!("the run did not end with its flows done: {:?} at {} s", s.stop_reason, s.sim_time_s));
    }
    let want = [c.bytes_kb as u64 * 1000, (c.bytes_kb / 2 + 1) as u64 * 1000];
    for (f, w) in s.flows.iter().zip(want) {
        if f.bytes_delivered != w || f.finish_s.is_none() {
            return Err(format!("flow {}: {} of {w} bytes delivered, finish {:?}", f.name, f.bytes_delivered, f.finish_s));
        }
    }
    // In order and exactly once: each receiver delivered exactly the stream's bytes (the FIN,
    // received in order, closes it), and no sender saw more acknowledged than was delivered
    // (the last ACKs may still be on their way when the run stops).
    for f in &run.sim.flows {
        let FlowEngine::Tcp(t) = &f.engine else { unreachable!() };
        if t.ends[0].stats.bytes_acked > t.ends[1].stats.bytes_delivered {
            return Err(format!("flow {}: acked {} but delivered {}", f.info.name, t.ends[0].stats.bytes_acked, t.ends[1].stats.bytes_delivered));
        }
    }
    // No cumulative ACK goes backwards, as each host sends them (taps on the hosts' links).
    let cap = run.sim.traces.capture.as_ref().expect("taps record the capture trace");
    let mut last: std::collections::BTreeMap<(u32, u32), u64> = Default::default();
    for i in 0..cap.flow.len() {
        const ACK: u32 = 0x10;
        if cap.flags[i] & ACK == 0 {
            continue;
        }
        let k = (cap.flow[i], cap.dir[i]);
        let prev = last.entry(k).or_insert(0);
        if cap.ack[i] < *prev {
            return Err(format!("flow {} dir {}: ACK went back from {} to {} at {} s", k.0, k.1, prev, cap.ack[i], cap.time_s[i]));
        }
        *prev = cap.ack[i];
    }
    let p = run.sim.packet_counters();
    if p.created + p.duplicated != p.delivered + p.queue_drops + p.random_drops + run.sim.packets_inside() {
        return Err(format!("packets not conserved: {p:?}, {} inside", run.sim.packets_inside()));
    }
    let im = run.sim.fabric.pipes.iter().filter_map(|p| p.propagation().impairment()).fold((0, 0), |a, i| (a.0 + i.reordered, a.1 + i.duplicated));
    Ok(im)
}

#[test]
fn every_byte_arrives_once_in_order_under_loss_reordering_and_duplication() {
    let default = if cfg!(tcplab_unoptimized) { 24 } else { 2000 };
    let n: u32 = std::env::var("TCPLAB_INTEGRITY_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let mut runner = seeded::runner(n);
    let totals = std::cell::Cell::new((0u32, 0u64, 0u64));
    let result = runner.run(&(cases(), 1u64..1000), |(c, seed)| match check(&c, seed) {
        Ok((r, d)) => {
            let (k, rr, dd) = totals.get();
            totals.set((k + 1, rr + r, dd + d));
            Ok(())
        }
        Err(e) => Err(TestCaseError::fail(format!("seed {seed}: {e}\n{}", render(&c)))),
    });
    let (k, r, d) = totals.get();
    eprintln!("integrity: {k} runs passed ({r} packets held back, {d} duplicated in all)");
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(r > 0 && d > 0, "the cases must reorder and duplicate");
}
