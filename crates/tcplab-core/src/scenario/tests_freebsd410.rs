//! The `freebsd-4.10` profile and its keys (`timer_grid`, `rto_slop`) as scenarios write
//! them: whole runs, the resolved table, and bad input refused by field.

use super::tests::{error_of, run};
use super::Run;

/// One bulk flow of `bytes` from `a` to `b` over 10 Mb/s with 10 ms each way, `tcp` in
/// `[defaults.tcp]`.
fn scenario(tcp: &str, bytes: &str) -> String {
    format!(
        r#"
name = "fbsd"
[defaults.tcp]
{tcp}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[links]]
between = ["a", "b"]
rate = "10Mbps"
delay = "10ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
bulk = {{ bytes = "{bytes}" }}
"#
    )
}

#[test]
fn freebsd410_runs_and_its_resolved_table_round_trips() {
    for hz in [100, 20_000] {
        let text = scenario(&format!("profile = \"freebsd-4.10\"\nhz = {hz}"), "2MB");
        let r = run(&text, 1);
        let s: serde_json::Value = serde_json::from_str(&r.summary_json()).unwrap();
        assert_eq!(s["flows"][0]["bytes_delivered"], 2_000_000, "HZ {hz}");
        // The grid sets the estimator's and TSval's tick to 1/HZ, printed and read back.
        let resolved = Run::from_toml(&text, Some(1)).unwrap().resolved_toml();
        let tick = if hz == 100 { "10ms" } else { "50us" };
        for key in [format!("rto_granularity = \"{tick}\""), format!("ts_tick = \"{tick}\""), "timer_grid = \"hz\"".into(), "rto_slop = \"200ms\"".into()] {
            assert!(resolved.contains(&key), "HZ {hz}: {key} missing in {resolved}");
        }
        let again = Run::from_toml(&resolved, None).unwrap();
        assert_eq!(again.resolved_toml(), resolved, "HZ {hz}");
        // The same seed, the same run.
        assert_eq!(run(&text, 1).summary_json(), r.summary_json());
    }
}

#[test]
fn freebsd410_keys_refuse_bad_input_by_field() {
    let p = "profile = \"freebsd-4.10\"\n";
    for (tcp, field) in [
        (format!("{p}timer_ticks = true"), "defaults.tcp.timer_grid: "),
        ("rto_slop = \"100ms\"".to_string(), "defaults.tcp.rto_slop: "),
        (format!("{p}rto_slop = \"65s\""), "defaults.tcp.rto_slop: "),
        (format!("{p}hz = 20000\nrto_granularity = \"10ms\""), "defaults.tcp.rto_granularity: "),
        (format!("{p}ts_tick = \"1ms\""), "defaults.tcp.ts_tick: "),
        (format!("{p}hz = 0"), "defaults.tcp.hz: "),
    ] {
        let e = error_of(&scenario(&tcp, "100KB"));
        assert!(e.starts_with(field), "{tcp}: {e}");
    }
    assert_eq!(
        error_of(&scenario(&format!("{p}hz = 20000\nrto_granularity = \"10ms\""), "100KB")),
        "defaults.tcp.rto_granularity: 10ms differs from the 1/HZ tick (50us) that timer_grid = \"hz\" sets; leave it out or change hz"
    );
    let e = error_of(&scenario("timer_grid = \"hourly\"", "100KB"));
    assert!(e.contains("timer_grid") || e.contains("hourly"), "{e}");
    // Set to the tick itself they are accepted, and the slop with BSD's estimator anywhere.
    assert!(Run::from_toml(&scenario(&format!("{p}hz = 20000\nrto_granularity = \"50us\"\nts_tick = \"50us\""), "100KB"), None).is_ok());
    assert!(Run::from_toml(&scenario("profile = \"freebsd-3.2\"\nrto_slop = \"200ms\"", "100KB"), None).is_ok());
}
