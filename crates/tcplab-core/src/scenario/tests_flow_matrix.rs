//! Flows between host groups: one flow per pair of members (`pattern = "pairs"`), every
//! member to every other (`"all-to-all"`), many-to-one and one-to-many, each written out in
//! the resolved scenario; and the 8-flow dumbbell they make short.

use super::tests::{error_of, run};
use crate::scenario::Run;

/// An 8-pair dumbbell, 1 Gb/s bottleneck, in 11 lines.
const DUMBBELL8: &str = r#"
name = "db8"
run.duration = "3s"
hosts = [{ name = "s", count = 8 }, { name = "r", count = 8 }]
switches = [{ name = "left" }, { name = "right" }]
links = [
  { between = ["s", "left"], rate = "10Gbps", delay = "5us" },
  { between = ["left", "right"], rate = "1Gbps", delay = "10ms" },
  { between = ["right", "r"], rate = "10Gbps", delay = "5us" },
]
flows = [{ name = "f", src = "s", dst = "r" }]
"#;

fn ends(text: &str) -> Vec<(String, String, String)> {
    let r = Run::from_toml(text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
    r.resolved.flows.iter().map(|f| (f.name.clone(), f.src.clone(), f.dst.clone())).collect()
}

#[test]
fn a_flow_between_two_groups_is_one_flow_per_pair_of_members() {
    assert!(DUMBBELL8.trim().lines().count() <= 15);
    let e = ends(DUMBBELL8);
    assert_eq!(e.len(), 8);
    for (k, (name, src, dst)) in e.iter().enumerate() {
        assert_eq!((name.as_str(), src.as_str(), dst.as_str()), (format!("f.{k}").as_str(), format!("s.{k}").as_str(), format!("r.{k}").as_str()));
    }
    // They run, and share the bottleneck.
    let r = run(DUMBBELL8, 1);
    let s = r.sim.summary();
    let total: f64 = s.flows.iter().map(|f| f.goodput_bps).sum();
    assert_eq!(s.flows.len(), 8);
    assert!(total > 0.8e9 && total < 1e9, "{total}");
    assert!(s.flows.iter().all(|f| f.goodput_bps > 0.04e9), "{:?}", s.flows.iter().map(|f| f.goodput_bps).collect::<Vec<_>>());
    // The resolved scenario lists them and loads again to the same flows.
    let text = toml::to_string(&Run::from_toml(DUMBBELL8, Some(1)).unwrap().resolved).unwrap();
    assert_eq!(ends(&text), e);
}

#[test]
fn all_to_all_many_to_one_and_one_to_many() {
    let base = DUMBBELL8.replace("flows = [{ name = \"f\", src = \"s\", dst = \"r\" }]", "");
    let with = |flow: &str| format!("{base}\n[[flows]]\n{flow}\n");
    let e = ends(&with("name = \"m\"\nsrc = \"s\"\ndst = \"s\"\npattern = \"all-to-all\""));
    assert_eq!(e.len(), 8 * 7);
    assert!(e.iter().all(|(_, a, b)| a != b));
    assert_eq!(e[0], ("m.0".into(), "s.0".into(), "s.1".into()));
    assert_eq!(e[7], ("m.7".into(), "s.1".into(), "s.0".into()));
    let e = ends(&with("name = \"incast\"\nsrc = \"s\"\ndst = \"r.3\"\ncount = 2"));
    assert_eq!(e.len(), 8);
    assert!(e.iter().all(|(_, _, b)| b == "r.3"));
    let r = Run::from_toml(&with("name = \"incast\"\nsrc = \"s\"\ndst = \"r.3\"\ncount = 2"), Some(1)).unwrap();
    assert_eq!(r.sim.flows.len(), 16, "two flows per member");
    let e = ends(&with("name = \"fan\"\nkind = \"udp-cbr\"\nsrc = \"s.0\"\ndst = \"r\"\ncbr = { rate = \"1Mbps\" }"));
    assert_eq!(e.len(), 8);
    assert!(e.iter().all(|(_, a, _)| a == "s.0"));
}

#[test]
fn group_flows_are_checked() {
    let text = |flow: &str, extra: &str| DUMBBELL8.replace("flows = [{ name = \"f\", src = \"s\", dst = \"r\" }]", &format!("flows = [{flow}]\n{extra}"));
    let cases = [
        (text("{ name = \"f\", src = \"s\", dst = \"r.0\", pattern = \"pairs\" }", ""), "flows[0].pattern: only when src and dst are both host groups"),
        (text("{ name = \"f\", src = \"s\", dst = \"s\" }", ""), "flows[0].dst: source and destination are the same host"),
        (
            text("{ name = \"f\", src = \"s\", dst = \"x\" }", "").replace("{ name = \"r\", count = 8 }]", "{ name = \"r\", count = 8 }, { name = \"x\", count = 3 }]").replace(
                "{ between = [\"right\", \"r\"], rate = \"10Gbps\", delay = \"5us\" },",
                "{ between = [\"right\", \"r\"], rate = \"10Gbps\", delay = \"5us\" },\n  { between = [\"x\", \"right\"], rate = \"1Gbps\" },",
            ),
            "flows[0].pattern: \"pairs\" joins member k of 's' (8) to member k of 'x' (3)",
        ),
        (text("{ name = \"f\", src = \"s\", dst = \"r\", pattern = \"ring\" }", ""), "unknown variant `ring`"),
        (text("{ name = \"f\", src = \"s\", dst = \"r\" }, { name = \"f.3\", src = \"s.0\", dst = \"r.1\" }", ""), "makes a flow named 'f.3'"),
    ];
    for (t, want) in cases {
        let got = error_of(&t);
        assert!(got.contains(want), "{got}");
    }
}
