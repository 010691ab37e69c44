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
