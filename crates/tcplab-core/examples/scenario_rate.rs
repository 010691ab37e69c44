//! Run one scenario file and print, as `dumbbell` does, its simulated data packets per wall
//! second, then each flow's goodput and the queues whose name contains a filter:
//! `target/release/examples/scenario_rate scenarios/topologies/leaf_spine.toml spine`.

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
    let path = args.next().expect("usage: scenario_rate <scenario.toml> [queue filter]");
    let filter = args.next();
    let sc = tcplab_core::scenario::parse_toml(&std::fs::read_to_string(&path).expect("readable scenario")).expect("scenario parses");
    let mut run = Run::with_capture_dir(&sc, None, None).expect("scenario is valid");
    let t0 = std::time::Instant::now();
    run.sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let s = run.sim.summary();
    let data: u64 = s.flows.iter().map(|f| f.segments_sent).sum();
    say!("{path}: flows {} sim {}s data pkts {data} events {} wall {wall:.3}s {:.2} M data pkts/s", s.flows.len(), s.sim_time_s, s.events, data as f64 / wall / 1e6);
    for f in &s.flows {
        say!("  flow {:>8} {:>10} -> {:<10} {:8.1} Mb/s  retransmits {}", f.name, f.src, f.dst, f.goodput_bps / 1e6, f.retransmits);
    }
    if let Some(filter) = filter {
        for q in s.queues.iter().filter(|q| q.name.contains(&filter)) {
            say!("  queue {:>24} departed {:>9} dropped {:>6} max {:>5} pkts", q.name, q.departed, q.dropped, q.max_packets);
        }
    }
}
