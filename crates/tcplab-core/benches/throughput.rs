//! `make bench`: simulated data packets and events per wall-clock second on the reference
//! scenarios of the core issue. Prints figures; asserts nothing about time.

use std::time::Instant;

use tcplab_core::Run;

/// A dumbbell: `n` senders and receivers on `access` links around one `bottleneck` link.
fn dumbbell(n: usize, access: &str, bottleneck: &str, delay: &str, access_delay: &str, mss: u32, buffer: &str, duration: &str, sack: bool) -> String {
    let mut s = format!(
        "name = \"bench\"\n[run]\nduration = \"{duration}\"\n[defaults]\nqueue = \"{buffer}\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = {mss}\nsack = {sack}\nsndbuf = \"256MB\"\nrcvbuf = \"256MB\"\n[[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n[[hosts]]\nname = \"s\"\n[[hosts]]\nname = \"d\"\n"
    );
    s += &format!("[[links]]\nbetween = [\"l\", \"r\"]\nrate = \"{bottleneck}\"\ndelay = \"{delay}\"\n");
    s += &format!("[[links]]\nbetween = [\"s\", \"l\"]\nrate = \"{access}\"\ndelay = \"{access_delay}\"\n");
    s += &format!("[[links]]\nbetween = [\"r\", \"d\"]\nrate = \"{access}\"\ndelay = \"{access_delay}\"\n");
    s += &format!("[[flows]]\nname = \"f\"\nsrc = \"s\"\ndst = \"d\"\ncount = {n}\n");
    s
}

fn measure(label: &str, text: &str) {
    let mut run = Run::from_toml(text, Some(1)).expect("bench scenario is valid");
    let t0 = Instant::now();
    run.sim.run();
    let wall = t0.elapsed().as_secs_f64();
    let s = run.sim.summary();
    let data: u64 = s.flows.iter().map(|f| f.segments_sent).sum();
    let goodput: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    let drops: u64 = s.queues.iter().map(|q| q.dropped).sum();
    println!(
        "{label:<46} sim {:>6.1}s  wall {:>7.3}s  data pkts {:>10}  {:>6.2} M data pkts/s  {:>6.2} M events/s  goodput {:>7.1} Mb/s  drops {}",
        s.sim_time_s,
        wall,
        data,
        data as f64 / wall / 1e6,
        s.events as f64 / wall / 1e6,
        goodput / 1e6,
        drops
    );
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (d_a, d_b) = if quick { ("1s", "20s") } else { ("5s", "100s") };
    println!("tcplab-core {} — one core, release build", env!("CARGO_PKG_VERSION"));
    for n in [10, 100] {
        measure(
            &format!("(a) 10Gbps dumbbell, {n} NewReno flows, 1500B"),
            &dumbbell(n, "100Gbps", "10Gbps", "10us", "10us", 1460, "1000pkts", d_a, true),
        );
    }
    measure("(b) 4 flows, 1Gbps / 300ms RTT, MTU 9000", &dumbbell(4, "10Gbps", "1Gbps", "150ms", "10us", 8960, "1000pkts", d_b, true));
}
