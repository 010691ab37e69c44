//! ImTCP-bg as scenarios name it (`cc = "imtcp-bg"`, `[….tcp.imtcp_bg]`): refused without a
//! variant producing the available-bandwidth input, its table's keys checked by name.

use super::tests::error_of;

/// One bulk flow from `a` to `b` with `tcp` in `[defaults.tcp]` and `flow_tcp` in the flow's
/// own table.
fn scenario(tcp: &str, flow_tcp: &str) -> String {
    format!(
        r#"
name = "bg"
[defaults.tcp]
{tcp}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "10Mbps"
delay = "1ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = {{ bytes = "100KB" }}
[flows.tcp]
{flow_tcp}
"#
    )
}

#[test]
fn imtcp_bg_without_producer_is_refused() {
    // No variant produces the available-bandwidth input yet (the ImTCP stage will): the
    // controller is refused wherever it is named, with the table's `cc` and the variant to set.
    assert_eq!(error_of(&scenario("cc = \"imtcp-bg\"", "")), "defaults.tcp.cc: \"imtcp-bg\" needs the available-bandwidth input; set tcp.variant = \"imtcp\"");
    assert_eq!(error_of(&scenario("", "cc = \"imtcp-bg\"")), "flows[0].tcp.cc: \"imtcp-bg\" needs the available-bandwidth input; set tcp.variant = \"imtcp\"");
    assert_eq!(
        error_of(&scenario("", "cc = \"imtcp-bg\"\nvariant = \"ahtcp\"\nahtcp = { threshold = \"1Mbps\" }")),
        "flows[0].tcp.cc: \"imtcp-bg\" needs the available-bandwidth input; set tcp.variant = \"imtcp\""
    );
    // A controller that needs no input is untouched by the check.
    assert!(crate::Run::from_toml(&scenario("cc = \"tcp-lp\"", ""), None).is_ok());
}

#[test]
fn imtcp_bg_table_keys_are_checked_by_name() {
    // The table is checked even when the controller is not selected (as every controller's).
    for (table, key) in [("gamma = 0.0", "gamma"), ("gamma = 1.5", "gamma"), ("delta = 1.0", "delta"), ("delta = 0.5", "delta"), ("cap_floor = 0", "cap_floor")] {
        let e = error_of(&scenario(&format!("[defaults.tcp.imtcp_bg]\n{table}"), ""));
        assert!(e.starts_with(&format!("defaults.tcp.imtcp_bg.{key}: ")), "{table}: {e}");
    }
    let e = error_of(&scenario("[defaults.tcp.imtcp_bg]\nrtt_cut = \"sometimes\"", ""));
    assert!(e.contains("rtt_cut") || e.contains("sometimes"), "{e}");
    // The defaults resolve and print: γ 1/8, δ 1.4, floor 2, once per RTT, both rules on.
    let p = crate::tcp::cc::imtcp_bg::ImtcpBgParams::default();
    assert_eq!((p.gamma, p.delta, p.cap_floor, p.cap, p.rtt_rule), (0.125, 1.4, 2, true, true));
}

#[test]
fn imtcp_bg_rtt_source_resolves_and_a_bad_value_names_the_field() {
    let e = error_of(&scenario("[defaults.tcp.imtcp_bg]\nrtt_source = \"ack\"", ""));
    assert!(e.contains("imtcp_bg.rtt_source"), "{e}");
    assert!(e.contains("tcp") && e.contains("stage"), "the error lists the values: {e}");
    for (value, want) in [("", "tcp"), ("rtt_source = \"tcp\"", "tcp"), ("rtt_source = \"stage\"", "stage")] {
        let toml = scenario("", &format!("cc = \"imtcp-bg\"\nvariant = \"imtcp\"\ndelack_segments = 1\n[flows.tcp.imtcp_bg]\n{value}"));
        let run = crate::Run::from_toml(&toml, None).unwrap_or_else(|e| panic!("{value}: {e}"));
        let text = run.resolved_toml();
        assert!(text.contains(&format!("rtt_source = \"{want}\"")), "{value}: {text}");
    }
}

/// ImTCP-bg on `tests_imtcp::dumbbell` (CBR 50 Mb/s, 100 Mb/s path), `secs` long, with the
/// `cc_state` trace on or off.
fn bg_run(cc_state: bool, secs: u64) -> crate::scenario::Run {
    let text = super::tests_imtcp::dumbbell(20_000, r#"[{ at = "0s", rate = "50Mbps" }]"#, &format!("{secs}s"), "cc = \"imtcp-bg\"", "");
    let text = if cc_state { text.replace("measurements = true\n", "measurements = true\ncc_state = true\n") } else { text };
    super::tests::run(&text, 5)
}

#[test]
fn cc_state_trace_shows_imtcp_bg_state_and_changes_no_result() {
    let (on, off) = (bg_run(true, 4), bg_run(false, 4));
    let s = |r: &crate::scenario::Run| serde_json::to_string(&r.sim.summary()).unwrap();
    assert_eq!(s(&on), s(&off), "observing the controller changes nothing");
    assert!(off.sim.traces.cc_state.is_none());
    let t = on.sim.traces.cc_state.as_ref().unwrap();
    let names = on.sim.cc_state_names();
    assert_eq!(names, vec![(0, &crate::tcp::cc::imtcp_bg::PROBE_NAMES[..])], "the CBR has no controller");
    let n = t.time_s.len();
    assert!(n > 1000, "a row per ACK at least: {n}");
    assert!(t.flow.iter().all(|&f| f == 0));
    // The ACK count (v4) rises by one row at a time or stays (an input's row), never falls.
    assert!(t.v4.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1.0));
    // Once Ā and RTT_min exist, outside recovery after the controller acted, cwnd ≤ the cap.
    let capped: Vec<usize> = (0..n).filter(|&i| t.v2[i].is_finite() && t.recovery[i] == 0).collect();
    assert!(capped.len() > n / 2);
    assert!(capped.iter().all(|&i| t.cwnd_bytes[i] as f64 <= t.v2[i]), "cwnd above the cap");
    // Ā is the smoothing of the results: it appears with the first result (v9 ≥ 1).
    assert!((0..n).all(|i| t.v0[i].is_nan() == (t.v9[i] == 0.0)));
    // Each RTT cut leaves cwnd = max(⌊cut_from·RTT_min/RTT_cur⌋, min(2 segments, cut_from)).
    let cuts: Vec<usize> = (1..n).filter(|&i| t.v6[i] > t.v6[i - 1]).collect();
    assert!(cuts.len() >= 5, "{} cuts: the checks below need some", cuts.len());
    for &i in &cuts {
        let want = (t.v8[i] * t.v1[i] / t.v3[i]).floor().max((2.0 * 1448.0f64).min(t.v8[i]));
        assert!((t.cwnd_bytes[i] as f64 - want).abs() <= 1.0, "row {i}: cwnd {} after a cut, want {want}", t.cwnd_bytes[i]);
        assert!(t.v3[i] > 1.4 * t.v1[i], "a cut only above δ·RTT_min");
    }
    // Every ACK whose sample is above δ·RTT_min cuts, unless this round has been cut.
    for i in 1..n {
        if t.v4[i] > t.v4[i - 1] && t.v3[i] > 1.4 * t.v1[i] && t.recovery[i] == 0 {
            let row: Vec<f64> = [&t.v1, &t.v3, &t.v4, &t.v5, &t.v6, &t.v7].iter().flat_map(|v| [v[i - 1], v[i]]).collect();
            assert!(t.v6[i] > t.v6[i - 1] || t.v7[i] == t.v5[i], "row {i}: above δ without a cut in a new round: {row:?}");
        }
    }
}
