//! TCP Vegas (`cc = "vegas"`, Linux `tcp_vegas.c`) in whole scenarios: alone behind a deep
//! buffer it keeps a standing queue of about alpha..beta packets and loses nothing, and the
//! queue it keeps follows alpha and beta. The connection's invariant checker (test builds)
//! holds every ACK and loss to the controller's own bounds meanwhile.

use tcplab_core::Run;

/// A 10 Mb/s bottleneck with 20 ms each way (40 ms of base RTT) and a 1000-packet buffer, one
/// Vegas flow from `a` to `b` with `extra` lines in its `[flows.tcp]` table, the bottleneck
/// queue traced.
fn path(duration_s: u32, extra: &str) -> String {
    format!(
        r#"
name = "vegas"
[run]
duration = "{duration_s}s"
[trace]
queues = ["s->b"]
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
rate = "1Gbps"
delay = "10us"
[[links]]
between = ["s", "b"]
rate = "10Mbps"
delay = "20ms"
queue_a = "1000pkts"
[[flows]]
name = "v"
src = "a"
dst = "b"
[flows.tcp]
cc = "vegas"
{extra}"#
    )
}

/// The bottleneck queue from `from_s` to the end: (time-weighted mean, min, max) packets.
struct Standing {
    mean: f64,
    min: u64,
    max: u64,
}

fn run(extra: &str) -> (Standing, tcplab_core::sim::RunSummary) {
    let mut r = Run::from_toml(&path(60, extra), Some(1)).unwrap_or_else(|e| panic!("{e}"));
    r.sim.run();
    let s = r.sim.summary();
    let id = s.queues.iter().find(|q| q.name == "s->b").expect("the bottleneck queue").id;
    let t = r.sim.traces.queue.as_ref().expect("the queue trace");
    let (from, end) = (20.0, 60.0);
    // The occupancy holds from each row to the next.
    let rows: Vec<(f64, u64)> = t.time_s.iter().zip(&t.queue).zip(&t.packets).filter(|((_, q), _)| **q == id).map(|((t, _), p)| (*t, *p)).collect();
    let (mut area, mut min, mut max) = (0.0, u64::MAX, 0);
    let mut level = rows.iter().take_while(|(t, _)| *t <= from).last().map_or(0, |r| r.1);
    let mut at = from;
    (min, max) = (min.min(level), max.max(level));
    for &(t, p) in rows.iter().filter(|(t, _)| *t > from) {
        area += level as f64 * (t - at);
        (at, level) = (t, p);
        (min, max) = (min.min(p), max.max(p));
    }
    area += level as f64 * (end - at);
    (Standing { mean: area / (end - from), min, max }, s)
}

#[test]
fn vegas_alone_keeps_a_standing_queue_of_alpha_to_beta_packets() {
    // Linux's defaults alpha = 2, beta = 4: from 20 s to 60 s the bottleneck always holds a
    // queue (the link stays busy) of about alpha..beta packets and never fills (no loss at
    // all). Vegas judges the round's least RTT, so it is the queue's low point that sits in
    // alpha..beta (Linux truncates diff, so up to beta + 1); the delayed ACKs' two-segment
    // bursts lift the mean about one packet above it (measured: mean 4.11, min 3, max 5).
    let (q, s) = run("");
    let f = &s.flows[0];
    let queue = s.queues.iter().find(|q| q.name == "s->b").unwrap();
    eprintln!(
        "vegas alone, 10 Mb/s, 40 ms, 1000 pkts: queue 20–60 s mean {:.2} pkts (min {}, max {}); goodput {:.3} Mb/s; cwnd {} B; srtt {:.1} ms; queue max over the run {} pkts; {} drops, {} retransmits, {} timeouts",
        q.mean,
        q.min,
        q.max,
        f.goodput_bps / 1e6,
        f.cwnd_bytes,
        f.srtt_s.unwrap_or(0.0) * 1e3,
        queue.max_packets,
        queue.dropped,
        f.retransmits,
        f.timeouts
    );
    assert!((1.5..=5.0).contains(&q.mean), "mean standing queue {:.2} packets", q.mean);
    assert!((2..=5).contains(&q.min) && q.max <= 8, "queue {}..{} packets in steady state", q.min, q.max);
    assert!(f.goodput_bps > 9.0e6, "goodput {}", f.goodput_bps);
    assert_eq!((queue.dropped, f.retransmits, f.timeouts), (0, 0, 0));
}

#[test]
fn the_standing_queue_follows_alpha_and_beta() {
    // alpha = beta = 10: the queue stands near 10 packets instead (measured: mean 10.11, 9–11);
    // the paper's diff (the queue itself, untruncated) with the defaults holds 2–5 too
    // (measured as Linux's: its low point of 3 packets is in 2..4 under both).
    let (ten, s) = run("[flows.tcp.vegas]\nalpha = 10\nbeta = 10\n");
    let (paper, p) = run("[flows.tcp.vegas]\ndiff = \"paper\"\n");
    eprintln!(
        "vegas alpha = beta = 10: queue mean {:.2} pkts (min {}, max {}), goodput {:.3} Mb/s; diff = \"paper\": mean {:.2} (min {}, max {}), goodput {:.3} Mb/s",
        ten.mean,
        ten.min,
        ten.max,
        s.flows[0].goodput_bps / 1e6,
        paper.mean,
        paper.min,
        paper.max,
        p.flows[0].goodput_bps / 1e6
    );
    assert!((8.5..=11.5).contains(&ten.mean) && ten.min >= 8, "alpha = beta = 10: mean {:.2}, min {}", ten.mean, ten.min);
    assert!((1.5..=5.0).contains(&paper.mean), "paper: mean {:.2}", paper.mean);
    for x in [&s, &p] {
        assert_eq!(x.queues.iter().map(|q| q.dropped).sum::<u64>(), 0);
    }
}

#[test]
fn vegas_parameters_are_checked_at_load() {
    let e = Run::from_toml(&path(1, "[flows.tcp.vegas]\nalpha = 5\nbeta = 4\n"), None).expect_err("beta < alpha").to_string();
    assert!(e.contains("vegas") && e.contains("beta") && e.contains("alpha"), "{e}");
    let e = Run::from_toml(&path(1, "[flows.tcp.vegas]\nalpha = 0\n"), None).expect_err("alpha 0").to_string();
    assert!(e.contains("alpha"), "{e}");
    let e = Run::from_toml(&path(1, "abc_limit = 0\n"), None).expect_err("abc_limit 0").to_string();
    assert!(e.contains("abc_limit"), "{e}");
    let e = Run::from_toml(&path(1, "[flows.tcp.vegas]\ndiff = \"other\"\n"), None).expect_err("an unknown diff").to_string();
    assert!(e.contains("diff"), "{e}");
}
