//! The CBR source's schedule (`cbr.schedule`): one piece is exactly `rate`, a step changes what
//! a bottleneck carries when it should, and bad schedules are refused naming their key.

use tcplab_core::scenario::observers::{difference, run_in, Mode};
use tcplab_core::scenario::parse_toml;
use tcplab_core::Run;

/// A CBR source on host a (100 Mb/s) through a switch to b over a 10 Mb/s link, zero delays,
/// with `cbr` as its table and `extra` appended to the flow.
fn scenario(cbr: &str, extra: &str) -> String {
    format!(
        r#"
name = "cbr-schedule"
[run]
duration = "3s"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
rate = "100Mbps"
[[links]]
between = ["sw", "b"]
rate = "10Mbps"
queue = "20pkts"
[[flows]]
name = "u"
kind = "udp-cbr"
src = "a"
dst = "b"
{extra}
[flows.cbr]
{cbr}
[trace]
throughput_interval = "100ms"
queues = "all"
milestones = true
"#
    )
}

fn error_of(text: &str) -> String {
    match parse_toml(text).and_then(|sc| Run::new(&sc, Some(1))) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn one_piece_schedule_equals_rate() {
    for (rate, size, stop) in [("2Mbps", "1500B", ""), ("3Mbps", "1250B", "stop = \"2.5s\""), ("7777777bps", "700B", "start = \"13ms\"")] {
        let plain = parse_toml(&scenario(&format!("rate = \"{rate}\"\npacket_size = \"{size}\""), stop)).unwrap();
        let piece = parse_toml(&scenario(&format!("schedule = [{{ at = \"0s\", rate = \"{rate}\" }}]\npacket_size = \"{size}\""), stop)).unwrap();
        for mode in [Mode::ALL[0], Mode::ALL[1]] {
            let (a, b) = (run_in(&plain, 5, mode).unwrap(), run_in(&piece, 5, mode).unwrap());
            assert_eq!(difference(&a, &b, true), None, "{rate}: {mode:?}");
            assert_eq!(a.events, b.events, "{rate}: the same events");
        }
    }
}

/// 1500-byte datagrams (12,000 bits) at 2 Mb/s for 1 s (one per 6 ms: 167 datagrams,
/// 0…996 ms), 6 Mb/s for 1 s (one per 2 ms: 500, 1.000…1.998 s), then silence. Each crosses
/// the 100 Mb/s access link (120 µs) and the 10 Mb/s link (1.2 ms) with no delay and no queue
/// (2 and 6 Mb/s are below 10), so by 1 s the 10 Mb/s link has carried exactly the first
/// piece's bytes, by 2 s both pieces', and nothing more after.
#[test]
fn a_step_changes_what_the_bottleneck_carries() {
    let text = scenario(r#"schedule = [{ at = "0s", rate = "2Mbps" }, { at = "1s", rate = "6Mbps" }, { at = "2s", rate = "0bps" }]"#, "");
    let mut run = Run::from_toml(&text, Some(1)).unwrap();
    let carried = |run: &Run| {
        let s = run.sim.summary();
        s.queues.iter().find(|q| q.name == "sw->b").unwrap().bytes_transmitted
    };
    let mut seen = Vec::new();
    for t in [1, 2, 3] {
        run.sim.advance(tcplab_core::units::SimTime::ZERO + tcplab_core::units::SimDuration::from_secs(t));
        seen.push(carried(&run));
    }
    assert_eq!(seen, vec![167 * 1500, 667 * 1500, 667 * 1500], "bytes carried by 1 s, 2 s, 3 s");
    let s = run.sim.summary();
    assert_eq!(s.flows[0].segments_sent, 667);
    // The source finished after its last datagram: its `sent` milestone is at 1.998 s.
    let m = run.sim.traces.milestones.as_ref().unwrap();
    assert_eq!((m.time_s.len(), m.bytes[0]), (1, 667));
    assert!((m.time_s[0] - 1.998).abs() < 1e-9, "{}", m.time_s[0]);
}

/// A schedule that ends silent needs no `stop` where a run with no duration would otherwise
/// never end; one that does not, still does.
#[test]
fn a_silent_last_piece_ends_the_source() {
    let silent = scenario(r#"schedule = [{ at = "0s", rate = "2Mbps" }, { at = "1s", rate = "0bps" }]"#, "").replace("duration = \"3s\"", "stop = \"flows-done\"");
    let mut run = Run::from_toml(&silent, Some(1)).unwrap();
    run.sim.run();
    let s = run.sim.summary();
    assert_eq!(serde_json::to_value(s.stop_reason).unwrap(), "flows-done");
    assert_eq!(s.flows[0].segments_sent, 167);
    let endless = scenario(r#"schedule = [{ at = "0s", rate = "0bps" }, { at = "1s", rate = "2Mbps" }]"#, "").replace("duration = \"3s\"", "stop = \"flows-done\"");
    assert!(error_of(&endless).contains("flows[0].stop: with run.stop = \"flows-done\" and no run.duration, a udp-cbr flow needs stop"), "{}", error_of(&endless));
}

#[test]
fn bad_schedules_are_refused_naming_their_key() {
    let cases = [
        (
            r#"schedule = [{ at = "0s", rate = "2Mbps" }, { at = "1s", rate = "3Mbps" }, { at = "1s", rate = "1Mbps" }]"#,
            "flows[0].cbr.schedule[2].at: 1s is not after the piece before it (1s): times must be strictly increasing",
        ),
        (
            r#"schedule = [{ at = "0s", rate = "2Mbps" }, { at = "2s", rate = "3Mbps" }, { at = "1s", rate = "1Mbps" }]"#,
            "flows[0].cbr.schedule[2].at: 1s is not after the piece before it (2s)",
        ),
        (r#"schedule = [{ at = "1s", rate = "2Mbps" }]"#, "flows[0].cbr.schedule[0].at: 1s: the first piece must be at 0s"),
        (r#"schedule = [{ at = "0s", rate = "-2Mbps" }]"#, "flows[0].cbr.schedule[0].rate: '-2Mbps' must be a non-negative finite number"),
        (r#"schedule = [{ at = "0s", rate = "2 parsecs" }]"#, "flows[0].cbr.schedule[0].rate: unknown rate unit 'parsecs'"),
        (r#"schedule = [{ at = "0s", rate = 2 }]"#, "flows[0].cbr.schedule[0].rate: invalid type"),
        (r#"schedule = [{ at = "0s" }]"#, "flows[0].cbr.schedule[0]: missing field `rate`"),
        (r#"schedule = [{ at = "0s", rate = "1Mbps", rtae = "2Mbps" }]"#, "flows[0].cbr.schedule[0].rtae: unknown field"),
        (r#"schedule = [{ at = "0s", rate = "2Mbps" }, { at = "1s", rate = "101Mbps" }]"#, "flows[0].cbr.schedule[1].rate: 101Mbps is faster than the link out of 'a' (100Mbps)"),
        ("rate = \"101Mbps\"", "flows[0].cbr.rate: 101Mbps is faster than the link out of 'a' (100Mbps)"),
        (
            r#"rate = "2Mbps"
schedule = [{ at = "0s", rate = "2Mbps" }]"#,
            "flows[0].cbr.schedule: give rate or schedule, not both",
        ),
        ("schedule = []", "flows[0].cbr.schedule: is empty"),
        ("packet_size = \"1500B\"", "flows[0].cbr.rate: a udp-cbr flow needs a rate"),
    ];
    for (cbr, want) in cases {
        let e = error_of(&scenario(cbr, ""));
        assert!(e.contains(want), "{cbr}:\n  got  {e}\n  want {want}");
    }
    let many: Vec<String> = (0..=10_000).map(|k| format!("{{ at = \"{k}ms\", rate = \"1Mbps\" }}")).collect();
    let e = error_of(&scenario(&format!("schedule = [{}]", many.join(", ")), ""));
    assert!(e.contains("flows[0].cbr.schedule: 10001 pieces; at most 10000"), "{e}");
    let most: Vec<String> = (0..10_000).map(|k| format!("{{ at = \"{k}ms\", rate = \"1Mbps\" }}")).collect();
    assert!(Run::from_toml(&scenario(&format!("schedule = [{}]", most.join(", ")), ""), Some(1)).is_ok(), "10,000 pieces are allowed");
}

/// The resolved scenario keeps the schedule as written and parses back to itself.
#[test]
fn a_schedule_survives_the_resolved_scenario() {
    let text = scenario(r#"schedule = [{ at = "0s", rate = "0bps" }, { at = "1.5s", rate = "2.5Mbps" }]"#, "");
    let run = Run::from_toml(&text, Some(1)).unwrap();
    let resolved = run.resolved_toml();
    assert!(resolved.contains("rate = \"0bps\"") && resolved.contains("at = \"1500ms\""), "{resolved}");
    let again = Run::from_toml(&resolved, Some(1)).unwrap();
    assert_eq!(again.resolved, run.resolved);
}
