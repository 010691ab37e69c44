//! RFC 6356's coupled increase as scenarios declare it (`[[coordinators]] kind = "lia"`): a
//! group of parallel streams takes about one TCP's share beside a competing flow, where as
//! many independent streams take their count's; and the errors.

use super::*;
use crate::tcp::cc::CongestionControl;

use super::tests::{error_of, run};

/// Four parallel NewReno streams `p` and one competing flow `c` from `a` to `b` through a
/// 100 Mb/s bottleneck with a 40-packet buffer, 20 ms of RTT, 30 s; `extra` is appended.
fn dumbbell(extra: &str) -> String {
    format!(
        r#"
name = "coupled"
[run]
duration = "30s"
[defaults.tcp]
cc = "newreno"
[[hosts]]
name = "a"
jitter = "20us"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[links]]
between = ["a", "s"]
rate = "1Gbps"
delay = "10us"
[[links]]
between = ["s", "b"]
rate = "100Mbps"
delay = "10ms"
queue_a = "40pkts"
[[flows]]
name = "p"
src = "a"
dst = "b"
count = 4
[[flows]]
name = "c"
src = "a"
dst = "b"
{extra}"#
    )
}

const LIA: &str = "[[coordinators]]\nkind = \"lia\"\nflows = [\"p\"]\n";

/// (the group's goodput, the competitor's), Mb/s.
fn shares(text: &str, seed: u64) -> (f64, f64) {
    let s = run(text, seed).sim.summary();
    let group: f64 = s.flows.iter().filter(|f| f.name.starts_with("p.")).map(|f| f.goodput_bps).sum();
    let comp = s.flows.iter().find(|f| f.name == "c").expect("the competitor").goodput_bps;
    (group / 1e6, comp / 1e6)
}

#[test]
fn a_coupled_group_takes_about_one_share_beside_a_competitor() {
    // Four independent NewReno streams beside one more flow take about 4/5 of the line; coupled
    // (RFC 6356) they take about half: the competitor gets at least 1.5x more than beside the
    // independent ones, in each of three seeds, and the line stays as busy (the goodputs sum
    // to within 5 % of each other). The connection's invariant checker (test builds) holds
    // every coupled ACK to Reno's growth bound.
    for seed in 1..=3 {
        let (g_free, c_free) = shares(&dumbbell(""), seed);
        let (g_lia, c_lia) = shares(&dumbbell(LIA), seed);
        assert!(c_lia >= 1.5 * c_free, "seed {seed}: competitor {c_free:.1} Mb/s beside independent streams, {c_lia:.1} beside coupled ones");
        assert!(g_free / (g_free + c_free) > 0.7, "seed {seed}: independent group share {:.2}", g_free / (g_free + c_free));
        let share = g_lia / (g_lia + c_lia);
        assert!((0.3..0.7).contains(&share), "seed {seed}: coupled group share {share:.2} (group {g_lia:.1}, competitor {c_lia:.1} Mb/s)");
        let (busy_free, busy_lia) = (g_free + c_free, g_lia + c_lia);
        assert!((busy_lia / busy_free - 1.0).abs() < 0.05, "seed {seed}: line {busy_free:.1} vs {busy_lia:.1} Mb/s");
    }
}

#[test]
fn coupling_is_deterministic_and_only_on_the_members() {
    let a = run(&dumbbell(LIA), 7).sim.summary();
    let b = run(&dumbbell(LIA), 7).sim.summary();
    assert_eq!(format!("{a:?}"), format!("{b:?}"), "same seed, same run");
    let r = Run::from_toml(&dumbbell(LIA), Some(7)).unwrap();
    assert_eq!(r.resolved.coordinators[0].members, ["p.0", "p.1", "p.2", "p.3"]);
    let v = serde_json::to_value(&r.resolved).unwrap();
    assert_eq!(v["coordinators"][0]["kind"], "lia");
    assert!(v["coordinators"][0].get("interval").is_none(), "lia has no interval");
}

#[test]
fn coupling_is_refused_for_controllers_without_it_and_with_decp_keys() {
    let cubic = dumbbell(LIA).replace("cc = \"newreno\"", "cc = \"cubic\"");
    assert_eq!(error_of(&cubic), "coordinators[0].kind: flow 'p.0' uses cc = \"cubic\", which has no coupled increase; RFC 6356's applies to reno and newreno");
    let keyed = dumbbell(&format!("{LIA}interval = \"1s\"\n"));
    assert_eq!(error_of(&keyed), "coordinators[0].interval: not used by kind = \"lia\" (the coupled increase acts on every ACK)");
    let keyed = dumbbell(&format!("{LIA}tolerance = 0.2\n"));
    assert_eq!(error_of(&keyed), "coordinators[0].tolerance: not used by kind = \"lia\" (the coupled increase acts on every ACK)");
}

#[test]
fn only_reno_family_controllers_take_a_coupled_group() {
    use crate::tcp::cc::{CcConfig, Controller, ControllerInput, CoupledGroup};
    let g = CoupledGroup::shared();
    for cfg in [CcConfig::Reno(Default::default()), CcConfig::NewReno(Default::default())] {
        assert!(Controller::new(&cfg, 14_600, u64::MAX, 1460).attach(&ControllerInput::Coupled(CoupledGroup::join(&g))), "{}", cfg.name());
    }
    for cfg in [
        CcConfig::Bic(Default::default()),
        CcConfig::Cubic(Default::default()),
        CcConfig::Dctcp(Default::default()),
        CcConfig::HighSpeed(Default::default()),
        CcConfig::TcpLp(Default::default()),
        CcConfig::Ledbat(Default::default()),
        CcConfig::ImtcpBg(Default::default()),
        CcConfig::Vegas(Default::default()),
        CcConfig::Htcp(Default::default()),
        CcConfig::Westwood(Default::default()),
    ] {
        assert!(!Controller::new(&cfg, 14_600, u64::MAX, 1460).attach(&ControllerInput::Coupled(CoupledGroup::join(&g))), "{}", cfg.name());
    }
}
