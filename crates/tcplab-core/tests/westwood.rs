//! TCP Westwood+ (`cc = "westwood"`, Linux `tcp_westwood.c`) in whole scenarios: alone behind a
//! buffer far below the bandwidth-delay product its estimate is the link's payload rate and,
//! resuming at bw·RTTmin after each loss instead of half the window, it keeps the link busier
//! than NewReno — where the recovery keeps the window near bw·RTTmin (Linux 2.6's rate-halving
//! floor, or `recovery_ssthresh = "bandwidth"`); with Linux's rule under RFC 6675 or PRR
//! recovery the window steps up when recovery ends, a burst a shallow buffer drops. Four flows
//! on a 25-packet buffer share the link without a starved flow; beside NewReno it takes at
//! least an even share. The connection's invariant checker (test builds) holds every ACK and
//! loss to the controller's own bounds meanwhile.

use tcplab_core::sim::RunSummary;
use tcplab_core::Run;

/// A `rate_mbps` bottleneck with 20 ms each way (40 ms of base RTT) and a `buffer`-packet
/// queue, one sender and one receiver per flow behind 1 Gb/s links, flows starting 10 ms apart,
/// run for `duration_s`; `ccs` the flows' controllers; the bottleneck queue, the windows and
/// the controllers' state traced.
fn dumbbell(ccs: &[&str], rate_mbps: u32, buffer: u32, duration_s: u32) -> String {
    let mut s = format!(
        r#"name = "westwood"
[run]
duration = "{duration_s}s"
[trace]
queues = ["l->r"]
cwnd = true
cc_state = true
[[switches]]
name = "l"
[[switches]]
name = "r"
[[links]]
between = ["l", "r"]
rate = "{rate_mbps}Mbps"
delay = "20ms"
queue_a = "{buffer}pkts"
"#
    );
    for (i, cc) in ccs.iter().enumerate() {
        s.push_str(&format!(
            "[[hosts]]\nname = \"s{i}\"\n[[hosts]]\nname = \"d{i}\"\n[[links]]\nbetween = [\"s{i}\", \"l\"]\nrate = \"1Gbps\"\ndelay = \"10us\"\n[[links]]\nbetween = [\"r\", \"d{i}\"]\nrate = \"1Gbps\"\ndelay = \"10us\"\n[[flows]]\nname = \"f{i}\"\nsrc = \"s{i}\"\ndst = \"d{i}\"\nstart = \"{}ms\"\n[flows.tcp]\ncc = \"{cc}\"\n",
            10 * i
        ));
    }
    s
}

/// What one run shows.
struct Figures {
    s: RunSummary,
    /// The flows' goodput over the bottleneck's payload rate (1460-byte payloads of 1500-byte
    /// packets).
    utilisation: f64,
    /// The bottleneck queue's time-weighted mean, packets, from `from_s` to the end.
    mean_queue: f64,
    /// Each flow's largest window increase between two consecutive rows of the cwnd trace
    /// (one call into the connection), segments of 1460 bytes.
    max_jump: Vec<f64>,
    /// Each flow's last cc_state values: bw_est (bit/s) and RTTmin (s); NaN without any.
    last_bw_rtt: Vec<(f64, f64)>,
}

fn run(text: &str, seed: u64, rate_mbps: u32, from_s: f64, end_s: f64) -> Figures {
    let mut r = Run::from_toml(text, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    r.sim.run();
    let s = r.sim.summary();
    let id = s.queues.iter().find(|q| q.name == "l->r").expect("the bottleneck queue").id;
    let t = r.sim.traces.queue.as_ref().expect("the queue trace");
    let rows: Vec<(f64, u64)> = t.time_s.iter().zip(&t.queue).zip(&t.packets).filter(|((_, q), _)| **q == id).map(|((t, _), p)| (*t, *p)).collect();
    let mut area = 0.0;
    let mut level = rows.iter().take_while(|(t, _)| *t <= from_s).last().map_or(0, |r| r.1);
    let mut at = from_s;
    for &(t, p) in rows.iter().filter(|(t, _)| *t > from_s) {
        area += level as f64 * (t - at);
        (at, level) = (t, p);
    }
    area += level as f64 * (end_s - at);
    let cw = r.sim.traces.cwnd.as_ref().expect("the cwnd trace");
    let max_jump = s
        .flows
        .iter()
        .map(|f| {
            let w: Vec<u64> = cw.flow.iter().zip(&cw.cwnd_bytes).filter(|(id, _)| **id == f.id).map(|(_, c)| *c).collect();
            w.windows(2).map(|p| p[1].saturating_sub(p[0])).max().unwrap_or(0) as f64 / 1460.0
        })
        .collect();
    let cc = r.sim.traces.cc_state.as_ref().expect("the cc_state trace");
    let last = |f: u32, v: &[f64]| cc.flow.iter().zip(v).filter(|(id, _)| **id == f).map(|(_, v)| *v).next_back().unwrap_or(f64::NAN);
    let last_bw_rtt = s.flows.iter().map(|f| (last(f.id, &cc.v0), last(f.id, &cc.v2))).collect();
    let utilisation = s.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / (rate_mbps as f64 * 1e6 * 1460.0 / 1500.0);
    Figures { s, utilisation, mean_queue: area / (end_s - from_s), max_jump, last_bw_rtt }
}

/// Jain's fairness index of `x`.
fn jain(x: &[f64]) -> f64 {
    let (s, q) = x.iter().fold((0.0, 0.0), |(s, q), v| (s + v, q + v * v));
    s * s / (x.len() as f64 * q)
}

/// `dumbbell` with every Westwood+ flow under `profile` and `recovery_ssthresh = mode`.
fn westwood_in(text: &str, profile: &str, mode: &str) -> String {
    text.replace("cc = \"westwood\"\n", &format!("cc = \"westwood\"\nprofile = \"{profile}\"\n[flows.tcp.westwood]\nrecovery_ssthresh = \"{mode}\"\n"))
        .replace("cc = \"newreno\"\n", &format!("cc = \"newreno\"\nprofile = \"{profile}\"\n"))
}

#[test]
fn alone_behind_a_small_buffer_it_measures_the_link_and_resumes_at_bw_times_rtt_min() {
    // 50 Mb/s, 40 ms: a BDP of 167 packets behind 16 packets of buffer, 30 s, figures from
    // 5 s. NewReno halves its window at each loss to (BDP + 16)/2 ≈ 92 packets; Westwood+
    // resumes at bw·RTTmin ≈ the BDP, its estimate the link's payload rate (48.67 Mb/s).
    // Measured (seed 1), utilisation: Linux 2.6.16 (rate-halving, whose floor min_cwnd is
    // bw·RTTmin) Westwood+ 0.817 against NewReno 0.583, bw_est 46.3 Mb/s; RFC 6675 recovery
    // with recovery_ssthresh = "bandwidth" 0.857 against NewReno 0.735, bw_est 48.6 Mb/s, the
    // largest window step 2 segments. With Linux's rule under RFC 6675 recovery the window
    // steps up by ~80 segments when recovery completes (from Reno's half to bw·RTTmin): a
    // burst at the access rate that the 16-packet buffer cannot take (utilisation 0.39, 137
    // fast retransmits).
    let payload = 50e6 * 1460.0 / 1500.0;
    let one = dumbbell(&["westwood"], 50, 16, 30);
    let reno_one = dumbbell(&["newreno"], 50, 16, 30);
    for (profile, mode) in [("linux-2.6.16", "reno"), ("rfc", "bandwidth")] {
        let w = run(&westwood_in(&one, profile, mode), 1, 50, 5.0, 30.0);
        let n = run(&westwood_in(&reno_one, profile, mode), 1, 50, 5.0, 30.0);
        let f = &w.s.flows[0];
        let (bw, rtt_min) = w.last_bw_rtt[0];
        eprintln!(
            "1 westwood ({profile}, {mode}), 50 Mb/s, 40 ms, 16 pkts, 30 s: utilisation {:.4} (newreno {:.4}), bw_est {:.3} Mb/s, rtt_min {:.4} s, {} fast retransmits, {} timeouts, {} retransmits, mean queue {:.1} (newreno {:.1}), largest step {:.1} segments",
            w.utilisation, n.utilisation, bw / 1e6, rtt_min, f.fast_retransmits, f.timeouts, f.retransmits, w.mean_queue, n.mean_queue, w.max_jump[0]
        );
        assert_eq!(f.cc, "westwood");
        assert!((bw / payload - 1.0).abs() < 0.08, "{profile}: bw_est {bw} bit/s against the payload rate {payload}");
        assert!((0.040..0.0405).contains(&rtt_min), "{profile}: RTTmin {rtt_min} s against the 40 ms base RTT");
        assert!(f.fast_retransmits >= 5, "{profile}: it loses and recovers: {} fast retransmits", f.fast_retransmits);
        assert!(w.utilisation > 0.8, "{profile}: Westwood+'s utilisation {}", w.utilisation);
        assert!(w.utilisation > n.utilisation + 0.05, "{profile}: Westwood+ {} against NewReno {}", w.utilisation, n.utilisation);
    }
    // The two rules under RFC 6675 recovery: Linux's steps the window up when recovery ends.
    let linux = run(&westwood_in(&one, "rfc", "reno"), 1, 50, 5.0, 30.0);
    let paper = run(&westwood_in(&one, "rfc", "bandwidth"), 1, 50, 5.0, 30.0);
    eprintln!("rfc: linux rule utilisation {:.4} step {:.0}; bandwidth rule {:.4} step {:.0}", linux.utilisation, linux.max_jump[0], paper.utilisation, paper.max_jump[0]);
    assert!(linux.max_jump[0] >= 40.0, "Linux's rule steps up at the end of recovery: {}", linux.max_jump[0]);
    assert!(paper.max_jump[0] <= 4.0, "the bandwidth rule grows by Reno's steps only: {}", paper.max_jump[0]);
}

#[test]
fn four_westwood_flows_on_a_25_packet_buffer_share_without_jumps_or_starvation() {
    // 100 Mb/s, 40 ms (a BDP of 333 packets), 25 packets of buffer (7.5 % of the BDP), 4 flows
    // started 10 ms apart, 30 s, figures from 5 s on, every ACK of every flow under the
    // invariant checker. No window steps up by more than a flow's share of the BDP (~83
    // segments), no flow starves, recovery is by fast retransmit, not timeouts. Measured
    // (seed 1): Linux's rule under linux-2.6.16 utilisation 0.920, Jain 0.996; under
    // linux-modern (PRR, then the step up to bw·RTTmin) 0.727, Jain 0.994; recovery_ssthresh =
    // "bandwidth" under linux-modern 0.942, Jain 0.999, under rfc 0.925 (4 timeouts). NewReno:
    // 0.845 (linux-2.6.16), 0.824 (linux-modern), 0.868 (rfc).
    let four = dumbbell(&["westwood"; 4], 100, 25, 30);
    for (profile, mode, least) in [("linux-2.6.16", "reno", 0.88), ("linux-modern", "reno", 0.6), ("linux-modern", "bandwidth", 0.9), ("rfc", "bandwidth", 0.88)] {
        let f = run(&westwood_in(&four, profile, mode), 1, 100, 5.0, 30.0);
        let g: Vec<f64> = f.s.flows.iter().map(|x| x.goodput_bps).collect();
        let (fr, to, rx): (u64, u64, u64) = f.s.flows.iter().fold((0, 0, 0), |(a, b, c), x| (a + x.fast_retransmits, b + x.timeouts, c + x.retransmits));
        eprintln!(
            "4 westwood ({profile}, {mode}), 100 Mb/s, 40 ms, 25 pkts, 30 s: utilisation {:.4}, goodput {:?} Mb/s, Jain {:.4}, {fr} fast retransmits, {to} timeouts, {rx} retransmits, mean queue {:.1} pkts, largest step {:?} segments, bw_est {:?} Mb/s",
            f.utilisation,
            g.iter().map(|x| (x / 1e4).round() / 100.0).collect::<Vec<_>>(),
            jain(&g),
            f.mean_queue,
            f.max_jump.iter().map(|x| x.round()).collect::<Vec<_>>(),
            f.last_bw_rtt.iter().map(|(b, _)| (b / 1e4).round() / 100.0).collect::<Vec<_>>()
        );
        assert!(f.utilisation > least, "{profile}, {mode}: utilisation {}", f.utilisation);
        assert!(jain(&g) > 0.95, "{profile}, {mode}: Jain {}", jain(&g));
        assert!(g.iter().all(|x| *x > 0.5 * 100e6 / 4.0 * f.utilisation), "{profile}, {mode}: no flow starves: {g:?}");
        assert!(to <= fr / 20, "{profile}, {mode}: fast recovery, not timeouts: {to} timeouts, {fr} fast retransmits");
        assert!(f.max_jump.iter().all(|j| *j <= 100.0), "{profile}, {mode}: window steps {:?} segments", f.max_jump);
    }
}

#[test]
fn beside_newreno_westwood_takes_at_least_an_even_share_and_leaves_newreno_some() {
    // The shipped scenario's path (dumbbell/westwood_vs_newreno.toml: 50 Mb/s, 40 ms, 30
    // packets of buffer, the rfc profile, 30 s).
    let text = dumbbell(&["westwood", "newreno"], 50, 30, 30);
    for mode in ["reno", "bandwidth"] {
        let f = run(&westwood_in(&text, "rfc", mode), 1, 50, 5.0, 30.0);
        let (w, n) = (f.s.flows[0].goodput_bps, f.s.flows[1].goodput_bps);
        eprintln!(
            "westwood ({mode}) beside newreno, 50 Mb/s, 40 ms, 30 pkts, 30 s: westwood {:.2} Mb/s, newreno {:.2} Mb/s (westwood share {:.1} %), utilisation {:.4}, mean queue {:.1}",
            w / 1e6,
            n / 1e6,
            100.0 * w / (w + n),
            f.utilisation,
            f.mean_queue
        );
        assert!((0.45..0.9).contains(&(w / (w + n))), "{mode}: Westwood+'s share {}", w / (w + n));
        assert!(n > 0.1 * 50e6, "{mode}: NewReno keeps some: {n}");
    }
}

#[test]
fn the_same_seed_gives_the_same_run_and_the_table_is_checked() {
    let text = dumbbell(&["westwood", "westwood"], 50, 30, 3);
    let (a, b) = (run(&text, 7, 50, 1.0, 3.0), run(&text, 7, 50, 1.0, 3.0));
    assert_eq!(serde_json::to_string(&a.s).unwrap(), serde_json::to_string(&b.s).unwrap());
    let one = dumbbell(&["westwood"], 50, 30, 1);
    let e = Run::from_toml(&one.replace("cc = \"westwood\"\n", "cc = \"westwood\"\nabc_limit = 0\n"), None).expect_err("abc_limit 0").to_string();
    assert!(e.contains("abc_limit"), "{e}");
    assert!(Run::from_toml(&one.replace("cc = \"westwood\"\n", "cc = \"westwood\"\n[flows.tcp.westwood]\n"), None).is_ok(), "an empty table");
    let e = Run::from_toml(&one.replace("cc = \"westwood\"\n", "cc = \"westwood\"\n[flows.tcp.westwood]\nrtt_min = \"50ms\"\n"), None).expect_err("no such key").to_string();
    assert!(e.contains("rtt_min"), "{e}");
    let e =
        Run::from_toml(&one.replace("cc = \"westwood\"\n", "cc = \"westwood\"\n[flows.tcp.westwood]\nrecovery_ssthresh = \"half\"\n"), None).expect_err("a bad value").to_string();
    assert!(e.contains("recovery_ssthresh"), "{e}");
}

#[test]
fn the_shipped_scenario_runs_and_shares() {
    // scenarios/dumbbell/westwood_vs_newreno.toml as shipped (seed 1), figures over the whole
    // 30 s: the flows' goodput, Jain's index, retransmissions, timeouts and the bottleneck
    // queue's time-weighted mean.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../python/tcplab/scenarios/dumbbell/westwood_vs_newreno.toml");
    let text = std::fs::read_to_string(path).unwrap();
    let mut r = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
    r.sim.run();
    let s = r.sim.summary();
    let id = s.queues.iter().find(|q| q.name == "left->right").expect("the bottleneck queue").id;
    let t = r.sim.traces.queue.as_ref().expect("the queue trace");
    let (mut area, mut at, mut level) = (0.0, 0.0, 0u64);
    for ((time, q), p) in t.time_s.iter().zip(&t.queue).zip(&t.packets) {
        if *q == id {
            area += level as f64 * (time - at);
            (at, level) = (*time, *p);
        }
    }
    area += level as f64 * (30.0 - at);
    let g: Vec<f64> = s.flows.iter().map(|f| f.goodput_bps).collect();
    eprintln!(
        "westwood_vs_newreno (seed 1): westwood {:.2} Mb/s, newreno {:.2} Mb/s, total {:.2}, Jain {:.4}; retransmits {:?}, fast retransmits {:?}, timeouts {:?}; mean queue {:.1} pkts, drops {}",
        g[0] / 1e6,
        g[1] / 1e6,
        (g[0] + g[1]) / 1e6,
        jain(&g),
        s.flows.iter().map(|f| f.retransmits).collect::<Vec<_>>(),
        s.flows.iter().map(|f| f.fast_retransmits).collect::<Vec<_>>(),
        s.flows.iter().map(|f| f.timeouts).collect::<Vec<_>>(),
        area / 30.0,
        s.queues.iter().find(|q| q.id == id).unwrap().dropped
    );
    assert_eq!((s.flows[0].cc, s.flows[1].cc), ("westwood", "newreno"));
    assert!(g[1] > 0.1 * 50e6 && g[0] > 0.1 * 50e6, "both move data: {g:?}");
}
