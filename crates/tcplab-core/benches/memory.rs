//! `make bench-memory`: memory grows with flows and packets in flight, not with simulated time
//! (issue 6). Runs dumbbells of 1,000, 5,000 and 10,000 NewReno flows over a 10 Gb/s, 100 ms
//! RTT bottleneck, each in a fresh child process (so peak RSS belongs to that run alone),
//! advances one simulation to 1, 2, 4, 8 and 16 simulated seconds and to its stop 100 ms later,
//! and at each point samples the live heap (exact, from a counting allocator), the resident
//! set (`VmRSS`) and its peak (`VmHWM`), packets inside the network and bytes in flight. The
//! 10,000-flow run is repeated (to 8 s) with traces on, whose columns are kept in memory and
//! do grow with time. `-- --quick` samples at 1 and 2 s only. Prints figures; asserts nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Instant;

use tcplab_core::flow::FlowEngine;
use tcplab_core::sim::Simulation;
use tcplab_core::units::{SimDuration, SimTime};
use tcplab_core::Run;

/// The system allocator, counting live and peak heap bytes.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to `System`; only counters are added.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = System.alloc(l);
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = System.alloc_zeroed(l);
        if !p.is_null() {
            grow(l.size());
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l);
        LIVE.fetch_sub(l.size(), Relaxed);
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        let q = System.realloc(p, l, new);
        if !q.is_null() {
            LIVE.fetch_sub(l.size(), Relaxed);
            grow(new);
        }
        q
    }
}

fn grow(n: usize) {
    let live = LIVE.fetch_add(n, Relaxed) + n;
    PEAK.fetch_max(live, Relaxed);
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// Bottleneck rate and one-way delays: RTT ≈ 2·(50 ms + 2·10 µs) ≈ 100 ms, so the
/// bandwidth-delay product is 125 MB ≈ 83,000 full-size packets.
const BOTTLENECK: &str = "10Gbps";
/// Bottleneck buffer: 10 ms at 10 Gb/s (12.5 MB, ~8,300 packets of 1500 B) — BDP/10, between
/// the BDP rule and BDP/√N (Appenzeller et al., SIGCOMM 2004).
const BUFFER: &str = "8333pkts";
/// Traces of the "traces on" runs: those of the smoke and paper scenarios.
const TRACES: &str = "[trace]\nthroughput_interval = \"100ms\"\ncwnd = true\nqueues = [\"l->r\"]\nevents = true\n";

/// A dumbbell: `n` NewReno flows from host `s` to host `d` across switches `l` and `r`,
/// starting uniformly over the first `skew`.
fn dumbbell(n: u32, duration: &str, skew: &str, traces: bool) -> String {
    let mut s = format!(
        "name = \"memory\"\n[run]\nduration = \"{duration}\"\n[defaults]\nqueue = \"{BUFFER}\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = 1460\nsack = true\nsndbuf = \"64MB\"\nrcvbuf = \"64MB\"\n\
         [[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n[[hosts]]\nname = \"s\"\nstart_skew = \"{skew}\"\n[[hosts]]\nname = \"d\"\n"
    );
    s += &format!("[[links]]\nbetween = [\"l\", \"r\"]\nrate = \"{BOTTLENECK}\"\ndelay = \"50ms\"\n");
    s += "[[links]]\nbetween = [\"s\", \"l\"]\nrate = \"100Gbps\"\ndelay = \"10us\"\n";
    s += "[[links]]\nbetween = [\"r\", \"d\"]\nrate = \"100Gbps\"\ndelay = \"10us\"\n";
    s += &format!("[[flows]]\nname = \"f\"\nsrc = \"s\"\ndst = \"d\"\ncount = {n}\n");
    if traces {
        s += TRACES;
    }
    s
}

/// A field of `/proc/self/status` in bytes (`VmRSS`, `VmHWM`).
fn status_bytes(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with(field)).and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<u64>().ok()).map_or(0, |kb| kb * 1024)
}

/// Heap bytes reserved by the in-memory trace columns (capacity, not length).
fn trace_bytes(sim: &Simulation) -> u64 {
    fn cap<T>(v: &Vec<T>) -> u64 {
        (v.capacity() * std::mem::size_of::<T>()) as u64
    }
    let t = &sim.traces;
    let mut b = 0;
    if let Some(x) = &t.throughput {
        b += cap(&x.time_s) + cap(&x.flow) + cap(&x.bytes) + cap(&x.bps);
    }
    if let Some(x) = &t.cwnd {
        b += cap(&x.time_s) + cap(&x.flow) + cap(&x.cwnd_bytes) + cap(&x.ssthresh_bytes) + cap(&x.srtt_s) + cap(&x.inflight_bytes);
    }
    if let Some(x) = &t.queue {
        b += cap(&x.time_s) + cap(&x.queue) + cap(&x.packets) + cap(&x.bytes);
    }
    if let Some(x) = &t.events {
        b += cap(&x.time_s) + cap(&x.flow) + cap(&x.kind) + cap(&x.seq);
    }
    b
}

/// One sample, printed by the child as a `SAMPLE` line of space-separated fields.
struct Sample {
    flows: u32,
    traces: bool,
    sim_s: f64,
    data_pkts: u64,
    events: u64,
    wall_s: f64,
    heap: u64,
    heap_peak: u64,
    rss: u64,
    hwm: u64,
    inside: u64,
    inflight: u64,
    trace: u64,
}

impl Sample {
    fn line(&self) -> String {
        format!(
            "SAMPLE {} {} {} {} {} {} {} {} {} {} {} {} {}",
            self.flows,
            self.traces as u8,
            self.sim_s,
            self.data_pkts,
            self.events,
            self.wall_s,
            self.heap,
            self.heap_peak,
            self.rss,
            self.hwm,
            self.inside,
            self.inflight,
            self.trace
        )
    }

    fn parse(line: &str) -> Option<Sample> {
        let f: Vec<&str> = line.strip_prefix("SAMPLE ")?.split(' ').collect();
        let u = |i: usize| f[i].parse::<u64>().expect("child prints integers");
        let x = |i: usize| f[i].parse::<f64>().expect("child prints numbers");
        Some(Sample {
            flows: u(0) as u32,
            traces: u(1) == 1,
            sim_s: x(2),
            data_pkts: u(3),
            events: u(4),
            wall_s: x(5),
            heap: u(6),
            heap_peak: u(7),
            rss: u(8),
            hwm: u(9),
            inside: u(10),
            inflight: u(11),
            trace: u(12),
        })
    }
}

/// Child: build one scenario that stops 100 ms after the last of `times` (seconds), advance it
/// to each of those times, then to the stop; print a sample after the build, at each time and
/// at the stop, and (with traces) the rows of each trace.
fn child(flows: u32, traces: bool, times: &[u64]) {
    let base_heap = LIVE.load(Relaxed);
    let base_rss = status_bytes("VmRSS:");
    println!("BASE {base_heap} {base_rss}");
    let end = *times.last().expect("at least one sample time");
    let stop_ms = end * 1000 + 100;
    let text = dumbbell(flows, &format!("{stop_ms}ms"), "1s", traces);
    let sc = tcplab_core::scenario::parse_toml(&text).expect("bench scenario parses");
    drop(text);
    let mut run = Run::new(&sc, Some(1)).expect("bench scenario is valid");
    drop(sc);
    let sim = &mut run.sim;
    let mut wall = 0.0;
    for ms in std::iter::once(0).chain(times.iter().map(|t| t * 1000)).chain([stop_ms]) {
        if ms > 0 {
            let t0 = Instant::now();
            sim.advance(SimTime::ZERO + SimDuration::from_millis(ms));
            wall += t0.elapsed().as_secs_f64();
        }
        let (mut data, mut inflight) = (0, 0);
        for f in &sim.flows {
            if let FlowEngine::Tcp(t) = &f.engine {
                data += t.ends[0].stats.segments_sent;
                inflight += t.ends[0].inflight();
            }
        }
        let s = Sample {
            flows,
            traces,
            sim_s: sim.now().as_secs_f64(),
            data_pkts: data,
            events: sim.events(),
            wall_s: wall,
            heap: LIVE.load(Relaxed) as u64,
            heap_peak: PEAK.load(Relaxed) as u64,
            rss: status_bytes("VmRSS:"),
            hwm: status_bytes("VmHWM:"),
            inside: sim.packets_inside(),
            inflight,
            trace: trace_bytes(sim),
        };
        println!("{}", s.line());
    }
    for (name, columns) in sim.traces.tables() {
        let rows = columns.first().map_or(0, |c| c.1.len());
        let row_bytes: usize = columns.iter().map(|c| c.1.to_le_bytes().len() / rows.max(1)).sum();
        println!("TRACE {name} {rows} {row_bytes}");
    }
}

/// What a child reported: its heap and RSS before the build, its samples, and per trace its
/// name, rows and bytes per row.
struct ChildRun {
    base_heap: u64,
    base_rss: u64,
    samples: Vec<Sample>,
    tables: Vec<(String, u64, u64)>,
}

/// Parent: run one configuration in a fresh child process.
fn run_child(flows: u32, traces: bool, times: &[u64]) -> ChildRun {
    let exe = std::env::current_exe().expect("own path");
    let times: Vec<String> = times.iter().map(|t| t.to_string()).collect();
    let out = Command::new(exe).args(["--child", &flows.to_string(), if traces { "on" } else { "off" }, &times.join(",")]).output().expect("child runs");
    assert!(out.status.success(), "child failed: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let base = text.lines().find_map(|l| l.strip_prefix("BASE ")).expect("child prints its baseline");
    let mut b = base.split(' ').map(|x| x.parse::<u64>().expect("integer"));
    let (bh, br) = (b.next().expect("heap"), b.next().expect("rss"));
    let tables = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.strip_prefix("TRACE ")?.split(' ').collect();
            Some((f[0].to_string(), f[1].parse().expect("rows"), f[2].parse().expect("bytes per row")))
        })
        .collect();
    ChildRun { base_heap: bh, base_rss: br, samples: text.lines().filter_map(Sample::parse).collect(), tables }
}

fn mb(b: u64) -> f64 {
    b as f64 / 1e6
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--child") {
        let flows = args[i + 1].parse().expect("flows");
        let traces = args[i + 2] == "on";
        let times: Vec<u64> = args[i + 3].split(',').map(|t| t.parse().expect("seconds")).collect();
        child(flows, traces, &times);
        return;
    }
    let quick = args.iter().any(|a| a == "--quick");
    let (long, short): (&[u64], &[u64]) = if quick { (&[1, 2], &[1, 2]) } else { (&[1, 2, 4, 8, 16], &[1, 2, 4, 8]) };
    let t_all = Instant::now();
    println!("tcplab-core {} — memory against flows, packets in flight and simulated time; one core, release build", env!("CARGO_PKG_VERSION"));
    println!("dumbbell: N NewReno+SACK flows s→d, {BOTTLENECK} bottleneck, RTT ≈ 100 ms (BDP ≈ 83,000 packets), buffer {BUFFER}, flows start over the first second;");
    println!("each row group is one simulation in a fresh child process, advanced to each simulated time in turn.");
    println!(
        "heap: live heap (counting allocator), its peak; RSS/peak: VmRSS/VmHWM; B/flow: heap and RSS above the process's own baseline, per flow;\n\
         in net: packets queued or on the wire; infl: bytes in flight as the senders count them; trace: capacity of the trace columns.\n\
         sizes: Flow {} B + TcpFlow {} B (boxed; two Endpoints), Packet {} B",
        std::mem::size_of::<tcplab_core::flow::Flow>(),
        std::mem::size_of::<tcplab_core::flow::TcpFlow>(),
        std::mem::size_of::<tcplab_core::net::Packet>()
    );
    println!();
    println!(
        "{:>6} {:>6} {:>5} {:>10} {:>10} {:>7} {:>8} {:>8} {:>7} {:>7} {:>7} {:>7} {:>7} {:>7} {:>8}",
        "flows", "traces", "sim s", "data pkts", "events", "wall s", "heap MB", "heap pk", "RSS MB", "peak MB", "heap/f", "RSS/f", "in net", "infl MB", "trace MB"
    );
    let configs: &[(u32, bool, &[u64])] = &[(1_000, false, long), (5_000, false, long), (10_000, false, long), (10_000, true, short)];
    let mut results = Vec::new();
    for &(flows, traces, times) in configs {
        let ChildRun { base_heap, base_rss, samples, tables } = run_child(flows, traces, times);
        for s in &samples {
            println!(
                "{:>6} {:>6} {:>5.1} {:>10} {:>10} {:>7.2} {:>8.1} {:>8.1} {:>7.1} {:>7.1} {:>7.0} {:>7.0} {:>7} {:>7.1} {:>8.1}",
                s.flows,
                if s.traces { "on" } else { "off" },
                s.sim_s,
                s.data_pkts,
                s.events,
                s.wall_s,
                mb(s.heap),
                mb(s.heap_peak),
                mb(s.rss),
                mb(s.hwm),
                (s.heap - base_heap) as f64 / s.flows as f64,
                s.rss.saturating_sub(base_rss) as f64 / s.flows as f64,
                s.inside,
                mb(s.inflight),
                mb(s.trace)
            );
        }
        println!();
        results.push((flows, traces, samples, tables));
    }
    println!("growth of the live heap once every flow has started (from t = 2 s to the last whole second), per simulated second:");
    for (flows, traces, all, _) in &results {
        let samples = &all[..all.len() - 1]; // Without the stop.
        let (Some(a), Some(z)) = (samples.iter().find(|s| s.sim_s >= 2.0 - 1e-9), samples.last()) else { continue };
        let dt = z.sim_s - a.sim_s;
        if dt <= 0.0 {
            continue;
        }
        let rest = (z.heap as i64 - z.trace as i64) - (a.heap as i64 - a.trace as i64);
        let last = &samples[samples.len() - 2..];
        let last_dt = last[1].sim_s - last[0].sim_s;
        println!(
            "  {flows:>6} flows, traces {:<3}: {:+7.2} MB over {dt:>2.0} s = {:+8.3} MB/s (traces {:+8.3} MB/s, the rest {:+6.3} MB/s; over the last {last_dt:.0} s alone {:+6.3} MB/s); RSS {:+7.1} MB",
            if *traces { "on" } else { "off" },
            mb(z.heap) - mb(a.heap),
            (mb(z.heap) - mb(a.heap)) / dt,
            (mb(z.trace) - mb(a.trace)) / dt,
            rest as f64 / 1e6 / dt,
            (mb(last[1].heap) - mb(last[0].heap)) / last_dt,
            mb(z.rss) - mb(a.rss)
        );
    }
    // Heap against flows at the last whole second, traces off: least squares a + b·N.
    let pts: Vec<(f64, f64, u64)> = results.iter().filter(|r| !r.1).filter_map(|r| r.2.iter().rev().nth(1).map(|s| (r.0 as f64, s.heap as f64, s.inside))).collect();
    if pts.len() >= 2 {
        let n = pts.len() as f64;
        let (mx, my) = (pts.iter().map(|p| p.0).sum::<f64>() / n, pts.iter().map(|p| p.1).sum::<f64>() / n);
        let b = pts.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum::<f64>() / pts.iter().map(|p| (p.0 - mx).powi(2)).sum::<f64>();
        let inside: Vec<String> = pts.iter().map(|p| p.2.to_string()).collect();
        println!(
            "heap at the last whole second, traces off ≈ {:.1} MB + {:.0} B × flows (least squares over {} runs; packets in the network {})",
            (my - b * mx) / 1e6,
            b,
            pts.len(),
            inside.join(" / ")
        );
    }
    println!("at the stop, 100 ms after the last whole second (packets due after the stop time stay in their pipes' propagation lines):");
    for (flows, traces, all, _) in &results {
        let [.., a, z] = &all[..] else { continue };
        println!(
            "  {flows:>6} flows, traces {:<3}: heap {:+7.2} MB (traces {:+7.2} MB), in net {:+6}",
            if *traces { "on" } else { "off" },
            mb(z.heap) - mb(a.heap),
            mb(z.trace) - mb(a.trace),
            z.inside as i64 - a.inside as i64
        );
    }
    for (flows, _, samples, tables) in &results {
        let Some(z) = samples.last() else { continue };
        if tables.is_empty() || z.sim_s <= 0.0 {
            continue;
        }
        println!("traces of the {flows}-flow run at its stop, {:.1} s (rows are kept in memory until the run ends):", z.sim_s);
        for (name, rows, row_bytes) in tables {
            println!("  {name:<10} {rows:>10} rows × {row_bytes:>2} B = {:>7.1} MB, {:>7.1} MB per simulated second", mb(rows * row_bytes), mb(rows * row_bytes) / z.sim_s);
        }
    }
    println!("whole bench: {:.1} s wall", t_all.elapsed().as_secs_f64());
}
