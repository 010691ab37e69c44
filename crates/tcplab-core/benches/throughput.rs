//! `make bench`: simulated data packets and events per wall-clock second on the reference
//! scenarios of the core issue. Prints figures; asserts nothing about time.

use std::time::Instant;

use tcplab_core::Run;

/// A dumbbell: `n` senders and receivers on `access` links around one `bottleneck` link.
struct Dumbbell<'a> {
    n: usize,
    access: &'a str,
    bottleneck: &'a str,
    delay: &'a str,
    access_delay: &'a str,
    mss: u32,
    buffer: &'a str,
    duration: &'a str,
    sack: bool,
}

impl Dumbbell<'_> {
    /// The scenario as TOML.
    fn toml(&self) -> String {
        let Dumbbell { n, access, bottleneck, delay, access_delay, mss, buffer, duration, sack } = self;
        let mut s = format!(
            "name = \"bench\"\n[run]\nduration = \"{duration}\"\n[defaults]\nqueue = \"{buffer}\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = {mss}\nsack = {sack}\nsndbuf = \"256MB\"\nrcvbuf = \"256MB\"\n[[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n[[hosts]]\nname = \"s\"\n[[hosts]]\nname = \"d\"\n"
        );
        s += &format!("[[links]]\nbetween = [\"l\", \"r\"]\nrate = \"{bottleneck}\"\ndelay = \"{delay}\"\n");
        s += &format!("[[links]]\nbetween = [\"s\", \"l\"]\nrate = \"{access}\"\ndelay = \"{access_delay}\"\n");
        s += &format!("[[links]]\nbetween = [\"r\", \"d\"]\nrate = \"{access}\"\ndelay = \"{access_delay}\"\n");
        s += &format!("[[flows]]\nname = \"f\"\nsrc = \"s\"\ndst = \"d\"\ncount = {n}\n");
        s
    }
}

/// One flow with MSS 100 at 1 Gb/s behind a 100,000-packet queue: slow start overshoots the
/// queue, about 51,000 packets of one window are dropped, and SACK recovery (or, with `sack`
/// off, NewReno) runs with about 10^5 segments in flight. The scoreboard's per-ACK work once
/// grew with the window here (21.7 s for 0.5 s simulated, against 3.4 s without SACK).
fn sack_recovery(sack: bool) -> String {
    format!(
        "name = \"sack-recovery\"\n[run]\nduration = \"0.5s\"\n[defaults]\nqueue = \"100000pkts\"\n[defaults.tcp]\ncc = \"newreno\"\nmss = 100\nsack = {sack}\nsndbuf = \"256MB\"\nrcvbuf = \"256MB\"\n\
         [[hosts]]\nname = \"s\"\n[[hosts]]\nname = \"d\"\n[[switches]]\nname = \"l\"\n[[switches]]\nname = \"r\"\n\
         [[links]]\nbetween = [\"s\", \"l\"]\nrate = \"10Gbps\"\ndelay = \"10us\"\n\
         [[links]]\nbetween = [\"l\", \"r\"]\nrate = \"1Gbps\"\ndelay = \"1ms\"\n\
         [[links]]\nbetween = [\"r\", \"d\"]\nrate = \"10Gbps\"\ndelay = \"10us\"\n\
         [[flows]]\nname = \"f\"\nsrc = \"s\"\ndst = \"d\"\n"
    )
}

/// Peak resident memory of this process, in MB (Linux `VmHWM`).
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status.lines().find(|l| l.starts_with("VmHWM:")).and_then(|l| l.split_whitespace().nth(1)).and_then(|kb| kb.parse::<f64>().ok()).map_or(0.0, |kb| kb / 1024.0)
}

fn measure(label: &str, text: &str) -> f64 {
    measure_with(label, text, None)
}

fn measure_with(label: &str, text: &str, capture_dir: Option<&std::path::Path>) -> f64 {
    let sc = tcplab_core::scenario::parse_toml(text).expect("bench scenario parses");
    let mut run = Run::with_capture_dir(&sc, Some(1), capture_dir).expect("bench scenario is valid");
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
    wall
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let (d_a, d_b) = if quick { ("1s", "20s") } else { ("5s", "100s") };
    println!("tcplab-core {} — one core, release build", env!("CARGO_PKG_VERSION"));
    for n in [10, 100] {
        measure(
            &format!("(a) 10Gbps dumbbell, {n} NewReno flows, 1500B"),
            &Dumbbell { n, access: "100Gbps", bottleneck: "10Gbps", delay: "10us", access_delay: "10us", mss: 1460, buffer: "1000pkts", duration: d_a, sack: true }.toml(),
        );
    }
    let b = Dumbbell { n: 4, access: "10Gbps", bottleneck: "1Gbps", delay: "150ms", access_delay: "10us", mss: 8960, buffer: "1000pkts", duration: d_b, sack: true }.toml();
    let plain = measure("(b) 4 flows, 1Gbps / 300ms RTT, MTU 9000", &b);
    // The same with a tap on the sender's link, both directions, writing pcapng.
    let dir = std::env::temp_dir().join(format!("tcplab-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let tapped = format!("{b}[[taps]]\nname = \"sender\"\nlink = [\"s\", \"l\"]\n");
    let rss_before = peak_rss_mb();
    let with_tap = measure_with("(b) + tap on the sender link (pcapng)", &tapped, Some(&dir));
    let size = std::fs::metadata(dir.join("sender.pcapng")).map_or(0, |m| m.len());
    println!(
        "    capture cost: {:.2}x the run time without it; file {:.1} MB; peak RSS {:.0} MB (before the tapped run {:.0} MB)",
        with_tap / plain,
        size as f64 / 1e6,
        peak_rss_mb(),
        rss_before
    );
    let _ = std::fs::remove_dir_all(&dir);
    measure("(c) SACK recovery with 10^5 segments in flight", &sack_recovery(true));
    measure("(c) the same without SACK (NewReno)", &sack_recovery(false));
}
