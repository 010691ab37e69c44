//! The `rtt` trace (`trace.rtt`, as Linux's tcp_probe): one row per RTT sample of each flow's
//! data sender, on a real multi-flow run over a small buffer; observing changes nothing.

use super::tests::run;

/// Three NewReno flows, 20 Mb/s, 2 × 5 ms, a 20-packet buffer: queueing and losses.
fn text(trace: bool) -> String {
    format!(
        r#"
name = "rtt"
[run]
duration = "5s"
[defaults.tcp]
cc = "newreno"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
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
[[flows]]
name = "f"
src = "a"
dst = "b"
count = 3
[trace]
rtt = {trace}
"#
    )
}

#[test]
fn rtt_trace_has_a_row_per_sample_with_the_estimator_after_it() {
    let r = run(&text(true), 1);
    let t = r.sim.traces.rtt.as_ref().expect("rtt trace");
    let n = t.time_s.len();
    assert!(n > 1000, "{n} rows");
    // The path's propagation RTT is 20 ms (a SYN's sample: 20.04 ms); a 20-packet queue at
    // 20 Mb/s adds at most 12 ms, and every sample is within that (up to 33.0 ms here). The
    // ACK that fills a hole covers a retransmission and gives no sample (Karn): timing the
    // newest segment it covers, SACKed long before the repair, gave samples up to 77 ms.
    for i in 0..n {
        assert!(t.rtt_s[i] >= 0.020 && t.rtt_s[i] < 0.0205 + 0.012 + 0.002, "row {i}: {}", t.rtt_s[i]);
        assert!(t.min_rtt_s[i] <= t.rtt_s[i] && t.srtt_s[i].is_finite() && t.rto_s[i] >= 0.2);
    }
    let mut v = t.rtt_s.clone();
    v.sort_by(f64::total_cmp);
    // Queueing shows: the median sample sits well above the propagation RTT.
    assert!(v[n / 2] > 0.025, "median sample {}", v[n / 2]);
    for f in 0..3u32 {
        let rows: Vec<usize> = (0..n).filter(|&i| t.flow[i] == f).collect();
        assert!(rows.len() > 300, "flow {f}: {}", rows.len());
        assert!(rows.windows(2).all(|w| t.time_s[w[0]] <= t.time_s[w[1]] && t.min_rtt_s[w[1]] <= t.min_rtt_s[w[0]]));
        // The first sample is the estimator's first: srtt equals it.
        assert_eq!(t.srtt_s[rows[0]], t.rtt_s[rows[0]]);
    }
}

#[test]
fn rtt_trace_changes_no_result() {
    let on = run(&text(true), 3);
    let off = run(&text(false), 3);
    assert!(off.sim.traces.rtt.is_none());
    assert_eq!(serde_json::to_string(&on.sim.summary()).unwrap(), serde_json::to_string(&off.sim.summary()).unwrap());
}

#[test]
fn summary_rtt_percentiles_match_the_trace_s_samples() {
    // The summary's rtt_* figures come from a histogram; the trace has every sample exactly.
    let r = run(&text(true), 2);
    let t = r.sim.traces.rtt.as_ref().expect("rtt trace");
    let summary = r.sim.summary();
    for f in 0..3u32 {
        let mut v: Vec<f64> = (0..t.time_s.len()).filter(|&i| t.flow[i] == f).map(|i| t.rtt_s[i]).collect();
        v.sort_by(f64::total_cmp);
        let s = &summary.flows[f as usize];
        assert_eq!(s.rtt_samples, v.len() as u64, "flow {f}: one trace row per sample");
        assert_eq!((s.rtt_min_s, s.rtt_max_s), (Some(v[0]), Some(v[v.len() - 1])), "flow {f}");
        for (q, got) in [(0.5, s.rtt_p50_s.unwrap()), (0.99, s.rtt_p99_s.unwrap())] {
            let exact = v[((q * v.len() as f64).ceil() as usize).max(1) - 1];
            assert!((got - exact).abs() <= exact / 128.0, "flow {f} q {q}: {got} vs {exact}");
        }
        // Queueing spreads the samples: the tail sits above the median by more than the
        // histogram's resolution.
        assert!(s.rtt_p99_s.unwrap() > s.rtt_p50_s.unwrap() * 1.05, "flow {f}: {s:?}");
    }
}
