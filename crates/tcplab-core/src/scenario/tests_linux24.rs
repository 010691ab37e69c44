//! The `tcp` keys of Linux 2.4's window rules (`moderate_cwnd`, `cwnd_idle_restart`,
//! `cwnd_app_limited_decay`, `cwr_reduction`): on in the `linux-2.4.18` profile only, refused
//! with the key named when malformed, and a run of the profile through a short host queue.

use crate::flow::FlowEngine;
use crate::tcp::{CwrReduction, TcpConfig};

use super::tests::{error_of, run};

/// `count` flows of 2 MB from `a` to `b` through `a`'s own 100 Mb/s interface with a
/// 10-packet queue (the bottleneck: refusals, so CWR), then a 20 ms path; `tcp` goes into
/// `[defaults.tcp]`.
fn host_bound(tcp: &str, count: u32) -> String {
    format!(
        r#"
name = "l24"
[run]
duration = "60s"
[defaults.tcp]
{tcp}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
rate = "100Mbps"
delay = "10us"
queue_a = "10pkts"
[[links]]
between = ["s", "b"]
rate = "1Gbps"
delay = "10ms"
[[flows]]
name = "f"
src = "a"
dst = "b"
count = {count}
bulk = {{ bytes = "2MB" }}
"#
    )
}

/// The connection settings of the first flow's data sender.
fn config(tcp: &str) -> TcpConfig {
    let r = crate::Run::from_toml(&host_bound(tcp, 1), Some(1)).unwrap_or_else(|e| panic!("{e}"));
    let FlowEngine::Tcp(t) = &r.sim.flows[0].engine else { unreachable!() };
    t.ends[0].config().clone()
}

#[test]
fn only_the_linux_2_4_18_profile_turns_the_rules_on() {
    let c = config("profile = \"linux-2.4.18\"");
    assert_eq!((c.moderate_cwnd, c.cwnd_idle_restart, c.cwnd_app_limited_decay, c.cwr_reduction), (3, true, true, CwrReduction::RateHalving));
    for p in ["rfc", "linux-2.6.16", "linux-modern", "freebsd-3.2"] {
        let c = config(&format!("profile = \"{p}\""));
        assert_eq!((c.moderate_cwnd, c.cwnd_idle_restart, c.cwnd_app_limited_decay, c.cwr_reduction), (0, false, false, CwrReduction::AtOnce), "{p}");
    }
    // Each is a key of its own, over the profile.
    let c = config("profile = \"linux-2.4.18\"\nmoderate_cwnd = 0\ncwnd_idle_restart = false\ncwnd_app_limited_decay = false\ncwr_reduction = \"at-once\"");
    assert_eq!((c.moderate_cwnd, c.cwnd_idle_restart, c.cwnd_app_limited_decay, c.cwr_reduction), (0, false, false, CwrReduction::AtOnce));
    let c = config("moderate_cwnd = 5\ncwr_reduction = \"rate-halving\"");
    assert_eq!((c.moderate_cwnd, c.cwr_reduction), (5, CwrReduction::RateHalving));
}

#[test]
fn malformed_values_are_refused_with_the_key_named() {
    for (tcp, want) in [
        ("cwr_reduction = \"gradual\"", "defaults.tcp.cwr_reduction: unknown variant `gradual`, expected `at-once` or `rate-halving`"),
        ("moderate_cwnd = -3", "defaults.tcp.moderate_cwnd"),
        ("moderate_cwnd = 2.5", "defaults.tcp.moderate_cwnd"),
        ("cwnd_idle_restart = \"yes\"", "defaults.tcp.cwnd_idle_restart"),
        ("cwnd_app_limited_decay = 1", "defaults.tcp.cwnd_app_limited_decay"),
        ("moderate_cwnds = 3", "defaults.tcp.moderate_cwnds: unknown field `moderate_cwnds`"),
    ] {
        let e = error_of(&host_bound(tcp, 1));
        assert!(e.contains(want), "for {tcp:?}: got {e:?}, want {want:?}");
    }
}

#[test]
fn the_profile_through_a_short_host_queue_loses_nothing_and_repeats_itself() {
    // Four flows refused by their host's queue again and again: every refusal enters CWR
    // (the window cut one segment per two ACKs), moderation and RFC 2861 run on every ACK and
    // send, and the invariant checker (test builds) holds every call. Nothing is lost, every
    // byte arrives, and the same seed gives the same run.
    let text = host_bound("profile = \"linux-2.4.18\"", 4);
    let summary = |seed: u64| {
        let r = run(&text, seed);
        let refusals: u64 = r
            .sim
            .flows
            .iter()
            .map(|f| match &f.engine {
                FlowEngine::Tcp(t) => t.ends[f.data_sender()].stats.local_reductions,
                FlowEngine::Udp(_) | FlowEngine::Retired(_) => 0,
            })
            .sum();
        let mut s = serde_json::to_value(r.sim.summary()).unwrap();
        s["events"].take();
        (s, refusals)
    };
    let (s, reductions) = summary(3);
    assert!(reductions > 0, "the host queue never refused");
    for f in s["flows"].as_array().unwrap() {
        assert_eq!(f["bytes_delivered"], 2_000_000, "{f}");
        assert_eq!(f["retransmits"], 0, "{f}");
    }
    assert_eq!(summary(3).0, s, "same seed, same run");
    // The gradual cut changes the run against the cut at once.
    let at_once = run(&host_bound("profile = \"linux-2.4.18\"\ncwr_reduction = \"at-once\"", 4), 3);
    let mut a = serde_json::to_value(at_once.sim.summary()).unwrap();
    a["events"].take();
    assert_ne!(a["flows"], s["flows"]);
}

#[test]
fn d_sack_and_undo_are_on_in_linux_2_4_18_only_and_a_set_undo_needs_sack_or_timestamps() {
    let c = config("");
    assert!(!c.dsack && !c.undo);
    for p in ["rfc", "linux-2.6.16", "linux-modern", "freebsd-3.2"] {
        let c = config(&format!("profile = \"{p}\""));
        assert!(!c.dsack && !c.undo, "{p}");
    }
    let c = config("profile = \"linux-2.4.18\"");
    assert!(c.dsack && c.undo, "on in linux-2.4.18");
    let c = config("profile = \"linux-2.4.18\"\ndsack = false\nundo = false");
    assert!(!c.dsack && !c.undo, "each a key of its own, over the profile");
    let c = config("dsack = true\nundo = true\nsack = false\ntimestamps = true");
    assert!(c.dsack && c.undo, "D-SACK is inert without SACK (as 2.4's sysctl); undo has the timestamps");
    let e = error_of(&host_bound("undo = true\nsack = false\ntimestamps = false", 1));
    assert!(e.contains("defaults.tcp.undo") && e.contains("needs sack or timestamps"), "{e}");
    // The profile's undo over SACK and timestamps turned off is not refused (it cannot act).
    let c = config("profile = \"linux-2.4.18\"\nsack = false\ntimestamps = false");
    assert!(c.undo && !c.sack && !c.timestamps);
    let e = error_of(&host_bound("dsack = \"on\"", 1));
    assert!(e.contains("defaults.tcp.dsack"), "{e}");
}
