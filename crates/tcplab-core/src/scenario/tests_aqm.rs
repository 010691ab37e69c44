//! AQM queues in whole runs: eight CUBIC flows through a 100 Mb/s bottleneck (RTT about
//! 20 ms, bandwidth-delay product about 170 packets) with a 1000-packet buffer. Drop-tail fills
//! it; each AQM holds the standing queue near its own target while the line stays busy.

use super::tests::{error_of, run};

/// The dumbbell with `queue` on the bottleneck's `s1->s2` side, `extra` appended.
fn dumbbell(queue: &str, flows: &str, extra: &str) -> String {
    format!(
        r#"
name = "aqm"
[run]
duration = "10s"
[defaults.tcp]
cc = "cubic"
{extra}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[links]]
between = ["a", "s1"]
rate = "10Gbps"
delay = "10us"
[[links]]
between = ["s1", "s2"]
rate = "100Mbps"
delay = "10ms"
queue_a = {queue}
[[links]]
between = ["s2", "b"]
rate = "10Gbps"
delay = "10us"
{flows}
[trace]
queues = ["s1->s2"]
"#
    )
}

const EIGHT: &str = "[[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\ncount = 8\n";

/// Time-weighted mean occupancy (packets) of the traced queue from `from_s` to the run's end,
/// the bottleneck's utilisation, and its queue summary.
fn measure(text: &str, from_s: f64) -> (f64, f64, crate::sim::QueueSummary) {
    let r = run(text, 1);
    let s = r.sim.summary();
    let q = r.sim.traces.queue.as_ref().expect("queue trace");
    let end = s.sim_time_s;
    let (mut area, mut last_t, mut last_n) = (0.0, from_s, 0u64);
    for i in 0..q.time_s.len() {
        let t = q.time_s[i];
        if t > from_s {
            area += (t - last_t) * last_n as f64;
            last_t = t;
        }
        last_n = q.packets[i];
    }
    area += (end - last_t) * last_n as f64;
    let summary = s.queues.iter().find(|x| x.name == "s1->s2").expect("bottleneck").clone();
    let util = summary.bytes_transmitted as f64 * 8.0 / end / 100e6;
    (area / (end - from_s), util, summary)
}

/// Packets of 1500 bytes a 100 Mb/s line sends in `ms`.
fn pkts(ms: f64) -> f64 {
    ms * 1e-3 * 100e6 / (1500.0 * 8.0)
}

#[test]
fn each_aqm_holds_the_standing_queue_near_its_target_where_drop_tail_fills_the_buffer() {
    let cases = [
        ("\"1000pkts\"", 0.0, f64::INFINITY),
        ("{ aqm = \"codel\" }", 0.0, pkts(15.0)),
        ("{ aqm = \"fq-codel\" }", 0.0, pkts(15.0)),
        ("{ aqm = \"pie\" }", pkts(5.0), pkts(40.0)),
        ("{ aqm = \"red\", limit = \"1000pkts\", red = { min_th = 20.0, max_th = 60.0 } }", 5.0, 120.0),
    ];
    let mut means = Vec::new();
    for (queue, lo, hi) in cases {
        let (mean, util, q) = measure(&dumbbell(queue, EIGHT, ""), 2.0);
        means.push(mean);
        assert!(mean >= lo && mean <= hi, "{queue}: mean queue {mean:.1} packets, want {lo:.0}..{hi:.0}");
        assert!(util > 0.90, "{queue}: utilisation {util:.3}");
        assert!(q.dropped > 0, "{queue}: the queue is controlled by drops");
        // CoDel's drops are at the head; RED's and PIE's on arrival; none hit the hard limit.
        let at_head = queue.contains("codel");
        assert_eq!(q.dropped_after_dequeue > 0, at_head, "{queue}: {q:?}");
        if at_head {
            assert_eq!(q.dropped_after_dequeue, q.dropped, "{queue}: only CoDel's drops");
        }
    }
    assert!(means[0] > 300.0, "drop-tail's standing queue: {:.0} packets", means[0]);
}

#[test]
fn fq_codel_with_ecn_marks_instead_of_dropping() {
    let (mean, util, q) = measure(&dumbbell("{ aqm = \"fq-codel\" }", EIGHT, "ecn = true"), 2.0);
    assert!(q.marked > 100 && q.dropped == 0, "{q:?}");
    assert!(mean < pkts(15.0) && util > 0.9, "{mean} {util}");
    // Without ECN at the senders the same queue drops.
    let (_, _, q) = measure(&dumbbell("{ aqm = \"fq-codel\" }", EIGHT, "ecn = false"), 2.0);
    assert!(q.marked == 0 && q.dropped > 100, "{q:?}");
}

#[test]
fn fq_codel_isolates_a_tcp_flow_from_an_unresponsive_udp_stream() {
    let flows = r#"
[[flows]]
name = "tcp"
src = "a"
dst = "b"
[[flows]]
name = "udp"
kind = "udp-cbr"
src = "a"
dst = "b"
[flows.cbr]
rate = "80Mbps"
packet_size = "1500B"
"#;
    let share = |queue: &str| {
        let r = run(&dumbbell(queue, flows, ""), 1);
        let s = r.sim.summary();
        s.flows.iter().find(|f| f.name == "tcp").expect("tcp flow").goodput_bps
    };
    let (tail, fq) = (share("\"1000pkts\""), share("{ aqm = \"fq-codel\" }"));
    // Drop-tail: the 80 Mb/s stream keeps its rate, TCP gets the rest or less. FQ-CoDel:
    // each queue gets half the line.
    assert!(tail < 25e6, "drop-tail TCP goodput {tail}");
    assert!(fq > 42e6, "FQ-CoDel TCP goodput {fq}");
}

#[test]
fn aqm_keys_are_checked_with_their_path() {
    let q = |queue: &str| error_of(&dumbbell(queue, EIGHT, ""));
    let cases = [
        ("{ aqm = \"red\" }", "links[1].queue_a.limit: aqm = \"red\" needs the queue's hard limit"),
        ("{ aqm = \"red\", limit = \"100pkts\", red = { max_th = 2.0 } }", "links[1].queue_a.red.max_th: 2 must be above min_th (5)"),
        ("{ aqm = \"codel\", codel = { target = \"200ms\" } }", "links[1].queue_a.codel.target: 200ms must be positive and below interval (100ms)"),
        ("{ aqm = \"pie\", codel = { target = \"1ms\" } }", "links[1].queue_a.codel: codel's parameters: only with aqm = \"codel\""),
        ("{ limit = \"100pkts\", red = { min_th = 1.0 } }", "links[1].queue_a.red: red's parameters: only with aqm = \"red\""),
        ("{ aqm = \"fq-codel\", fq_codel = { flows = 0 } }", "links[1].queue_a.fq_codel.flows: 0 is out of range"),
        ("{ aqm = \"pie\", ecn_threshold = \"10pkts\" }", "links[1].queue_a.ecn_threshold: aqm = \"pie\" marks by its own rule"),
        ("{ aqm = \"codel\", classes = [\"10pkts\"] }", "links[1].queue_a.classes: aqm = \"codel\" runs on one FIFO"),
        ("{ aqm = \"blue\" }", "unknown variant `blue`"),
        ("{ aqm = \"pie\", pie = { alpha = 0.1, gamma = 1 } }", "unknown field `gamma`"),
    ];
    for (queue, want) in cases {
        let got = q(queue);
        assert!(got.contains(want), "{queue}: {got}");
    }
}

#[test]
fn the_resolved_scenario_shows_the_aqm_limit_and_every_parameter() {
    let r = crate::scenario::Run::from_toml(&dumbbell("{ aqm = \"codel\", codel = { ecn = true } }", EIGHT, ""), Some(1)).unwrap();
    let text = toml::to_string(&r.resolved).unwrap();
    assert!(text.contains("limit = \"1000pkts\""), "{text}");
    assert!(text.contains("target = \"5ms\"") && text.contains("interval = \"100ms\"") && text.contains("ecn = true"), "{text}");
    // It loads again as a scenario, to the same result.
    let again = crate::scenario::Run::from_toml(&text, Some(1)).unwrap();
    assert_eq!(toml::to_string(&again.resolved).unwrap(), text);
}
