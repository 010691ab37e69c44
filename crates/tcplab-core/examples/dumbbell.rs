//! One 10 Gb/s dumbbell run with a chosen flow count and duration, for profilers
//! (`valgrind --tool=callgrind target/release/examples/dumbbell 10 0.2`): prints the data
//! packets and events it simulated.

use tcplab_core::Run;

fn main() {
    let mut args = std::env::args().skip(1);
    let flows: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(10);
    let duration: f64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1.0);
    let text = format!(
        "name = \"profile\"\n[run]\nduration = \"{duration}s\"\n[defaults]\nqueue = \"1000pkts\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = 1460\nsndbuf = \"256MB\"\nrcvbuf = \"256MB\"\n\
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
    println!("flows {flows} sim {duration}s data pkts {data} events {} wall {wall:.3}s {:.2} M data pkts/s", s.events, data as f64 / wall / 1e6);
}
