//! The run summary's time-weighted mean queue (`mean_waiting_packets`/`_bytes`) and per-flow
//! one-way delay and jitter (`owd_*`, `jitter_s`), on a multi-flow run over a small buffer.

use super::tests::run;

/// Three NewReno flows a→b (20 Mb/s bottleneck, 2 × 5 ms, a 20-packet buffer) and, when
/// `udp`, a 1 Mb/s CBR stream c→d on an idle path of its own.
fn text(traced: bool) -> String {
    let trace = if traced { "[trace]\nqueues = [\"s->b\"]\n" } else { "" };
    format!(
        r#"
name = "delay"
[run]
duration = "5s"
[defaults.tcp]
cc = "newreno"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[hosts]]
name = "c"
[[hosts]]
name = "d"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
rate = "1Gbps"
delay = "5ms"
[[links]]
between = ["s", "b"]
rate = "20Mbps"
delay = "5ms"
queue_a = "20pkts"
[[links]]
between = ["c", "d"]
rate = "100Mbps"
delay = "3ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
count = 3
[[flows]]
name = "u"
kind = "udp-cbr"
src = "c"
dst = "d"
cbr = {{ rate = "1Mbps", packet_size = "1000B" }}
{trace}"#
    )
}

/// The time-weighted mean of a step function given as (time, value) rows from 0 to `end`
/// (0 before the first row; the last row at an instant holds).
fn step_mean(rows: &[(f64, f64)], end: f64) -> f64 {
    let mut area = 0.0;
    for (i, &(t, v)) in rows.iter().enumerate() {
        let next = rows.get(i + 1).map_or(end, |r| r.0);
        area += v * (next - t);
    }
    area / end
}

#[test]
fn the_mean_queue_is_the_time_weighted_mean_of_the_queue_trace() {
    let traced = run(&text(true), 3);
    let s = traced.sim.summary();
    let q = s.queues.iter().find(|q| q.name == "s->b").unwrap();
    let t = traced.sim.traces.queue.as_ref().expect("queue trace");
    let id = q.id;
    let rows = |col: &[u64]| -> Vec<(f64, f64)> { (0..t.time_s.len()).filter(|&i| t.queue[i] == id).map(|i| (t.time_s[i], col[i] as f64)).collect() };
    let (pk, by) = (rows(&t.packets), rows(&t.bytes));
    assert!(pk.len() > 1000, "{} rows", pk.len());
    let (mp, mb) = (q.mean_waiting_packets.unwrap(), q.mean_waiting_bytes.unwrap());
    let (tp, tb) = (step_mean(&pk, s.sim_time_s), step_mean(&by, s.sim_time_s));
    assert!((mp - tp).abs() < 1e-6 * tp && (mb - tb).abs() < 1e-6 * tb, "summary {mp} pkts {mb} B, trace {tp} pkts {tb} B");
    // Three flows keep the 20-packet buffer busy: well above empty, below full, and the mean
    // packet is a full segment or close to it.
    assert!(mp > 5.0 && mp < 20.0 && q.dropped > 0, "mean {mp} pkts, {} drops", q.dropped);
    assert!(mb / mp > 1400.0 && mb / mp <= 1500.0, "{} B per waiting packet", mb / mp);
    // The same run unobserved (a lazy FIFO, no events of its own) gives the same integral.
    let plain = run(&text(false), 3).sim.summary();
    let p = plain.queues.iter().find(|q| q.name == "s->b").unwrap();
    assert_eq!((p.mean_waiting_packets, p.mean_waiting_bytes), (q.mean_waiting_packets, q.mean_waiting_bytes));
    // The emulator-free reverse direction and the idle UDP path hold nothing.
    let back = s.queues.iter().find(|q| q.name == "d->c").map(|q| q.mean_waiting_packets);
    assert!(back.is_none() || back == Some(Some(0.0)), "{back:?}");
}

#[test]
fn one_way_delay_and_jitter_of_each_flow() {
    let s = run(&text(false), 3).sim.summary();
    // TCP: 2 × 5 ms of propagation, 12 µs at 1 Gb/s and 600 µs at 20 Mb/s for a 1500-byte
    // segment, then up to 20 waiting packets of 600 µs each at the bottleneck.
    let (prop, queue_max) = (0.010 + 0.000_012 + 0.000_6, 20.0 * 0.000_6);
    for f in s.flows.iter().filter(|f| f.kind == "tcp") {
        let (min, mean, max, jitter) = (f.owd_min_s.unwrap(), f.owd_mean_s.unwrap(), f.owd_max_s.unwrap(), f.jitter_s.unwrap());
        // The SYN (a small packet) may be the fastest: its own serialization is shorter.
        assert!(min >= 0.010 && min <= prop + 1e-9, "{}: min {min}", f.name);
        assert!(max <= prop + queue_max + 0.000_6 + 1e-9 && max > prop + 0.5 * queue_max, "{}: max {max}", f.name);
        assert!(mean > min + 0.002 && mean < max, "{}: mean {mean} of [{min}, {max}]", f.name);
        // A queue that fills and drains makes consecutive delays differ, by less than its range.
        assert!(jitter > 1e-6 && jitter < max - min, "{}: jitter {jitter}", f.name);
    }
    // UDP alone on its path: every datagram takes the same 3 ms + 1000 IP bytes at 100 Mb/s.
    let u = s.flows.iter().find(|f| f.kind == "udp-cbr").unwrap();
    let exact = 0.003 + 1000.0 * 8.0 / 100e6;
    assert!(u.packets_received > 600, "{}", u.packets_received);
    for v in [u.owd_min_s, u.owd_mean_s, u.owd_max_s] {
        assert!((v.unwrap() - exact).abs() < 1e-12, "{v:?} against {exact}");
    }
    assert_eq!(u.jitter_s, Some(0.0));
}
