//! One 10 Gb/s dumbbell run with a chosen flow count and duration, for profilers
//! (`valgrind --tool=callgrind target/release/examples/dumbbell 10 0.2`): prints the data
//! packets and events it simulated, then (outside the timed run) goodput, drops,
//! retransmissions and timeouts.
//!
//! `dumbbell FLOWS SECONDS [DELACK]`: DELACK is `delack_segments` (default 2, tcplab's; 1
//! ACKs every segment, as htsim's TcpSink does: benches/htsim/).

use std::io::Write as _;

/// `println!` that ends the program quietly when stdout is closed (`| head`).
macro_rules! say {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0)
        }
    };
}

use tcplab_core::Run;

fn main() {
    let mut args = std::env::args().skip(1);
    let flows: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let duration: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let delack: u32 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let text = format!(
        "name = \"profile\"\n[run]\nduration = \"{duration}s\"\n[defaults]\nqueue = \"1000pkts\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = 1460\nsndbuf = \"256MB\"\nrcvbuf = \"256MB\"\ndelack_segments = {delack}\n\
[[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n[[hosts]]\nname = \"s\"\n[[hosts]]\nname = \"d\"\n\
[[links]]\nbetween = [\"l\", \"r\"]\nrate = \"10Gbps\"\ndelay = \"10us\"\n\
[[links]]\nbetween = [\"s\", \"l\"]\nrate = \"100Gbps\"\ndelay = \"10us\"\n\
[[links]]\nbetween = [\"r\", \"d\"]\nrate = \"100Gbps\"\ndelay = \"10us\"\n\
[[flows]]\nname = \"f\"\nsrc = \"s\"\ndst = \"d\"\ncount = {flows}\n"
    );
    let sc = tcplab_core::scenario::parse_toml(&text).expect("scenario parses");
    let mut run = Run::with_capture_dir(&sc, Some(1), None).expect("scenario is valid");
    let t0 = std::time::Instant::now();
    run.sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let s = run.sim.summary();
    let data: u64 = s.flows.iter().map(|f| f.segments_sent).sum();
    say!("flows {flows} sim {duration}s data pkts {data} events {} wall {wall:.3}s {:.2} M data pkts/s", s.events, data as f64 / wall / 1e6);
    let goodput: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    let (lo, hi) = s.flows.iter().fold((f64::MAX, 0.0f64), |(lo, hi), f| (lo.min(f.goodput_bps), hi.max(f.goodput_bps)));
    let bottleneck: u64 = s.queues.iter().filter(|q| q.name == "l->r").map(|q| q.dropped).sum();
    let sum = |f: fn(&tcplab_core::sim::FlowSummary) -> u64| -> u64 { s.flows.iter().map(f).sum() };
    say!(
        "goodput {:.1} Mb/s per-flow {:.1}-{:.1} Mb/s bottleneck drops {bottleneck} other drops {} retransmits {} fast retransmits {} timeouts {}",
        goodput / 1e6,
        lo / 1e6,
        hi / 1e6,
        s.packets.queue_drops - bottleneck,
        sum(|f| f.retransmits),
        sum(|f| f.fast_retransmits),
        sum(|f| f.timeouts)
    );
}
