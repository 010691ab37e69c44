//! Resolution of the `tcp` tables and the controllers' own tables: every key is settable and
//! reaches the configuration, each layer overrides the one before, errors name the key, and
//! the keys that moved say where to.

use super::*;
use crate::scenario::spec::{
    BackoffName, BackoffResetName, CwndLimitedName, CwrReductionName, Dur, EstimatorName, IwRuleName, LocalCongestionName, NagleRuleName, PartialAckTimerName, ProfileName,
    RcvWindowRuleName, RecoveryName, Size, TcpSpec, Threshold, TimerGridName,
};
use crate::scenario::{parse_json, parse_toml, Run};
use crate::tcp::cc::bic::BicParams as ResolvedBic;
use crate::tcp::cc::cubic::CubicParams as ResolvedCubic;
use crate::tcp::cc::{BicConfig, CcConfig, CubicConfig};
use crate::units::SimDuration;

const TINY: &str = r#"
name = "t"
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
bulk = { bytes = "100KB" }
"#;

/// `TINY` with `extra` appended (tables after the flow's belong to it).
fn with(extra: &str) -> String {
    format!("{TINY}{extra}\n")
}

fn resolved(text: &str) -> ResolvedScenario {
    Run::from_toml(text, None).unwrap_or_else(|e| panic!("{e}")).resolved
}

fn error_of(text: &str) -> String {
    Run::from_toml(text, None).expect_err("should be rejected").to_string()
}

/// The controller configuration of flow 0.
fn cc_of(text: &str) -> CcConfig {
    resolved(text).flows[0].tcp().expect("a tcp flow").config().cc
}

fn ms(n: u64) -> Dur {
    Dur(SimDuration::from_millis(n))
}

/// A value of every setting, each different from the built-in one.
fn every_setting_changed() -> TcpSettings {
    TcpSettings {
        mss: 9000,
        sack: false,
        timestamps: true,
        window_scaling: false,
        nagle: false,
        nagle_rule: NagleRuleName::Linux,
        sndbuf: Size(123_456),
        rcvbuf: Size(654_321),
        initial_cwnd: 7,
        initial_cwnd_rule: IwRuleName::Linux,
        quickack: 5,
        rcv_window_growth: true,
        rcv_window_rule: RcvWindowRuleName::Linux420,
        rx_truesize: Size(9_300),
        tcp_rmem_max: Size(4 << 20),
        initial_ssthresh: Threshold::Bytes(64_000),
        delack_segments: 3,
        delack_timeout: ms(33),
        rtt_estimator: EstimatorName::Linux,
        rto_min: ms(250),
        rto_max: ms(90_000),
        rto_initial: ms(2_500),
        rto_granularity: ms(3),
        rto_backoff: BackoffName::Hybrid,
        rto_hybrid_switch: 5,
        rto_backoff_reset: BackoffResetName::NewAck,
        rto_randomize: 0.25,
        ecn: true,
        limited_transmit: false,
        cwnd_validation: false,
        cwnd_limited: CwndLimitedName::Linux,
        timer_ticks: true,
        timer_grid: TimerGridName::None,
        rto_slop: ms(0),
        round_buffers_to_mss: true,
        window_update_on_read: true,
        dupthresh: 4,
        partial_ack_timer: PartialAckTimerName::SlowButSteady,
        recovery: RecoveryName::Sack,
        abc_limit: 2,
        ts_tick: ms(2),
        hz: 300,
        ip_version: 6,
        local_congestion: LocalCongestionName::Cwr,
        cwr_reduction: CwrReductionName::RateHalving,
        moderate_cwnd: 2,
        cwnd_idle_restart: true,
        cwnd_app_limited_decay: true,
        dsack: true,
        undo: true,
    }
}

/// The keys `every_setting_changed` leaves at their built-in values because they exclude some
/// of its others (`timer_grid = "hz"` and `timer_ticks`; `rto_slop` and the Linux estimator);
/// `on_the_hz_grid` changes them.
const EXCLUSIVE: [&str; 2] = ["rto_slop", "timer_grid"];

/// `every_setting_changed` on FreeBSD 4.x's 1/HZ grid with BSD's estimator and a slop (the
/// grid sets `rto_granularity` and `ts_tick` to 1/HZ).
fn on_the_hz_grid() -> TcpSettings {
    let tick = Dur(super::tcp::hz_tick(300));
    TcpSettings {
        timer_ticks: false,
        timer_grid: TimerGridName::Hz,
        rtt_estimator: EstimatorName::Bsd,
        rto_slop: ms(150),
        rto_granularity: tick,
        ts_tick: tick,
        ..every_setting_changed()
    }
}

/// The keys of two serialized tables whose values are the same, and the keys only one has.
fn same_keys(a: &serde_json::Value, b: &serde_json::Value) -> Vec<String> {
    let (a, b) = (a.as_object().unwrap(), b.as_object().unwrap());
    let mut same: Vec<String> = a.iter().filter(|(k, v)| b.get(*k) == Some(v)).map(|(k, _)| k.clone()).collect();
    same.extend(a.keys().filter(|k| !b.contains_key(*k)).cloned());
    same.extend(b.keys().filter(|k| !a.contains_key(*k)).cloned());
    same
}

#[test]
fn every_tcp_key_is_settable_and_overrides_the_built_in() {
    // The settings written as a flow's `tcp` table (the keys must be the schema's: TcpSpec
    // denies unknown ones) resolve to exactly themselves: no key is dropped on the way.
    let want = every_setting_changed();
    let changed = serde_json::to_value(want).unwrap();
    let builtin = serde_json::to_value(TcpSettings::builtin()).unwrap();
    assert_eq!(same_keys(&changed, &builtin), EXCLUSIVE.map(String::from).to_vec(), "every value differs from the built-in but these");
    let spec: TcpSpec = serde_json::from_value(changed.clone()).unwrap_or_else(|e| panic!("the settings are keys of the tcp table: {e}"));
    let got = resolve_tcp(&TcpSpec::default(), &spec, "flows[0].tcp").unwrap();
    assert_eq!(got.settings, want);
    let grid = serde_json::to_value(on_the_hz_grid()).unwrap();
    assert!(EXCLUSIVE.iter().all(|k| grid[k] != builtin[k]), "{grid}");
    let hz: TcpSpec = serde_json::from_value(grid).unwrap();
    assert_eq!(resolve_tcp(&TcpSpec::default(), &hz, "flows[0].tcp").unwrap().settings, on_the_hz_grid());
    // And the other way: the schema has no key the resolved table lacks (but the profile and
    // the controller with its tables).
    let mut keys: Vec<String> = serde_json::to_value(&spec).unwrap().as_object().unwrap().keys().cloned().collect();
    keys.extend(["profile", "cc", "bic", "cubic"].map(String::from));
    keys.sort();
    let mut all = TcpSpec { profile: Some(ProfileName::Rfc), cc: Some(crate::scenario::spec::CcName::Bic), ..spec };
    all.bic.beta = Some(1);
    all.cubic.beta = Some(1);
    let mut schema: Vec<String> = serde_json::to_value(&all).unwrap().as_object().unwrap().keys().cloned().collect();
    schema.sort();
    assert_eq!(keys, schema);
}

#[test]
fn every_controller_key_is_settable_and_builds_the_config() {
    let bic = ResolvedBic { max_increment: 32, beta: 700, low_window: 20, initial_ssthresh: 0, fast_convergence: false, smooth_part: 5 };
    let cubic = ResolvedCubic { beta: 512, bic_scale: 82, fast_convergence: false, tcp_friendliness: false, hystart: false, hystart_low_window: 8, hystart_ack_delta: ms(5) };
    let (bic_v, cubic_v) = (serde_json::to_value(bic).unwrap(), serde_json::to_value(cubic).unwrap());
    assert_eq!(same_keys(&bic_v, &serde_json::to_value(ResolvedBic::default()).unwrap()), Vec::<String>::new());
    assert_eq!(same_keys(&cubic_v, &serde_json::to_value(ResolvedCubic::default()).unwrap()), Vec::<String>::new());
    // Written as TOML tables, in defaults.tcp.
    let table = |name: &str, v: serde_json::Value| -> String {
        let t: toml::Table = serde_json::from_value(v).unwrap();
        format!("[defaults.tcp.{name}]\n{}", toml::to_string(&t).unwrap())
    };
    let text = with(&format!("[defaults.tcp]\ncc = \"bic\"\nhz = 300\nabc_limit = 2\n{}{}", table("bic", bic_v), table("cubic", cubic_v)));
    assert_eq!(
        cc_of(&text),
        CcConfig::Bic(BicConfig { max_increment: 32, beta: 700, low_window: 20, initial_ssthresh: 0, fast_convergence: false, smooth_part: 5, abc: 2, hz: 300 })
    );
    let want_cubic = CubicConfig {
        beta: 512,
        bic_scale: 82,
        fast_convergence: false,
        tcp_friendliness: false,
        hystart: false,
        hystart_low_window: 8,
        hystart_ack_delta: SimDuration::from_millis(5),
        hz: 300,
    };
    assert_eq!(cc_of(&text.replace("cc = \"bic\"", "cc = \"cubic\"")), CcConfig::Cubic(want_cubic));
}

#[test]
fn controller_defaults_are_linux_and_follow_the_profile() {
    assert_eq!(cc_of(&with("[defaults.tcp]\ncc = \"bic\"")), CcConfig::Bic(BicConfig { hz: 1000, ..BicConfig::default() }));
    assert_eq!(cc_of(&with("[defaults.tcp]\ncc = \"cubic\"")), CcConfig::Cubic(CubicConfig::default()));
    assert_eq!(cc_of(&with("[defaults.tcp]\nprofile = \"linux-2.6.16\"")), CcConfig::Bic(BicConfig::default()), "2.6.16: HZ 250");
    assert_eq!(cc_of(&with("[defaults.tcp]\nprofile = \"linux-modern\"")), CcConfig::Cubic(CubicConfig::default()));
}

#[test]
fn a_flows_controller_table_overrides_the_defaults_key_by_key() {
    let text = with("[flows.tcp]\ncc = \"cubic\"\n[flows.tcp.cubic]\nbeta = 600\n[defaults.tcp.cubic]\nbeta = 500\nhystart = false\n[defaults.tcp.bic]\nbeta = 700");
    assert_eq!(cc_of(&text), CcConfig::Cubic(CubicConfig { beta: 600, hystart: false, ..CubicConfig::default() }));
    // The defaults' own table, for flows without one; the BIC table applies to BIC flows only.
    let r = resolved(&text);
    assert_eq!(r.defaults.tcp.cc, ResolvedCc::NewReno { newreno: Default::default() });
    let text = text.replace("cc = \"cubic\"", "cc = \"bic\"");
    assert_eq!(cc_of(&text), CcConfig::Bic(BicConfig { beta: 700, hz: 1000, ..BicConfig::default() }));
}

#[test]
fn the_resolved_tcp_table_carries_its_controllers_table_only() {
    let text = with("[defaults.tcp]\ncc = \"cubic\"\n[defaults.tcp.cubic]\nbic_scale = 50\n[defaults.tcp.bic]\nbeta = 700");
    let r = Run::from_toml(&text, None).unwrap();
    let toml_text = r.resolved_toml();
    let back: toml::Table = toml_text.parse().unwrap();
    let tcp = &back["flows"][0]["tcp"];
    assert_eq!(tcp["cc"].as_str(), Some("cubic"));
    assert_eq!(tcp["cubic"]["bic_scale"].as_integer(), Some(50));
    assert_eq!(tcp["cubic"]["hystart_ack_delta"].as_str(), Some("2ms"));
    assert!(tcp.get("bic").is_none(), "{toml_text}");
    let again = Run::from_toml(&toml_text, None).unwrap();
    assert_eq!(again.resolved, r.resolved);
    assert_eq!(again.hash, r.hash);
}

#[test]
fn controller_table_errors_name_the_key() {
    let cases: &[(&str, &str)] = &[
        ("[defaults.tcp.cubic]\nhystrat = true", "defaults.tcp.cubic.hystrat: unknown field `hystrat`, expected one of `beta`, `bic_scale`"),
        ("[defaults.tcp.bic]\nsmoth_part = 3", "defaults.tcp.bic.smoth_part: unknown field `smoth_part`"),
        ("[flows.tcp.cubic]\nc = 0.4", "flows[0].tcp.cubic.c: unknown field `c`"),
        ("[defaults.tcp.cubic]\nhystart = 3", "defaults.tcp.cubic.hystart: invalid type: integer `3`, expected a boolean"),
        ("[defaults.tcp.cubic]\nhystart_ack_delta = 2", "defaults.tcp.cubic.hystart_ack_delta: invalid type: integer `2`, expected a duration string"),
        ("[defaults.tcp.cubic]\nbeta = -1", "defaults.tcp.cubic.beta: invalid value: integer `-1`, expected u32"),
        ("[defaults.tcp.cubic]\nbeta = 1024", "defaults.tcp.cubic.beta: must be in 1..1024 (the kept fraction ×1024)"),
        ("[defaults.tcp.cubic]\nbic_scale = 0", "defaults.tcp.cubic.bic_scale: must be in 1..=10000"),
        ("[defaults.tcp.bic]\nbeta = 0", "defaults.tcp.bic.beta: must be in 1..1024"),
        ("[defaults.tcp.bic]\nmax_increment = 0", "defaults.tcp.bic.max_increment: must be at least 1"),
        ("[flows.tcp.bic]\nsmooth_part = 0", "flows[0].tcp.bic.smooth_part: must be at least 1"),
        // A bad value is an error even where its controller is not used.
        ("[defaults.tcp]\ncc = \"bic\"\n[defaults.tcp.cubic]\nbeta = 2000", "defaults.tcp.cubic.beta: must be in 1..1024"),
        ("[defaults.tcp]\ninitial_ssthresh = \"40pkts\"", "defaults.tcp.initial_ssthresh: give a size (e.g. \"64KB\") or \"unlimited\""),
        ("[defaults.tcp]\ncubic = 3", "defaults.tcp.cubic: invalid type: integer `3`, expected struct CubicSpec"),
    ];
    for (extra, want) in cases {
        let got = error_of(&with(extra));
        assert!(got.contains(want), "for {extra:?}: got {got:?}, want {want:?}");
    }
}

#[test]
fn moved_keys_are_errors_naming_their_new_place() {
    for (old, new) in [
        ("bic_max_increment = 16", "[defaults.tcp.bic] max_increment"),
        ("bic_beta = 819", "[defaults.tcp.bic] beta"),
        ("bic_low_window = 14", "[defaults.tcp.bic] low_window"),
        ("bic_initial_ssthresh = 0", "[defaults.tcp.bic] initial_ssthresh"),
        ("bic_fast_convergence = true", "[defaults.tcp.bic] fast_convergence"),
        ("bic_smooth_part = 20", "[defaults.tcp.bic] smooth_part"),
    ] {
        let key = old.split(' ').next().unwrap();
        let got = error_of(&with(&format!("[defaults.tcp]\n{old}")));
        assert_eq!(got, format!("defaults.tcp.{key}: moved to {new} (docs/tcp-settings.md)"));
    }
    // In a flow's table, and through JSON (the form Python dicts take).
    let got = error_of(&with("[flows.tcp]\nbic_beta = 819"));
    assert_eq!(got, "flows[0].tcp.bic_beta: moved to [flows.tcp.bic] beta (docs/tcp-settings.md)");
    let mut v = serde_json::to_value(parse_toml(TINY).unwrap()).unwrap();
    v["defaults"]["tcp"] = serde_json::json!({ "bic_initial_ssthresh": 0 });
    let e = parse_json(&v.to_string()).unwrap_err().to_string();
    assert_eq!(e, "defaults.tcp.bic_initial_ssthresh: moved to [defaults.tcp.bic] initial_ssthresh (docs/tcp-settings.md)");
    // Only in a tcp table: elsewhere an unknown key is just unknown.
    assert!(error_of(&with("[run]\nbic_beta = 3")).contains("run.bic_beta: unknown field `bic_beta`"));
}

#[test]
fn cubic_parameters_change_the_run() {
    // A lossy path long enough for several CUBIC epochs: β and C shape the window after each
    // loss, HyStart the end of slow start.
    let base = r#"
name = "cubic"
[run]
duration = "5s"
[defaults.tcp]
cc = "cubic"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[emulators]]
name = "e"
delay = "20ms"
loss = 0.001
[[links]]
between = ["a", "e"]
rate = "100Mbps"
[[links]]
between = ["e", "b"]
rate = "100Mbps"
[[flows]]
name = "f"
src = "a"
dst = "b"
"#;
    let delivered = |extra: &str| {
        let mut r = Run::from_toml(&format!("{base}{extra}"), Some(1)).unwrap_or_else(|e| panic!("{e}"));
        r.sim.run();
        r.sim.summary().flows[0].bytes_delivered
    };
    let plain = delivered("");
    assert_eq!(plain, delivered("[defaults.tcp.cubic]\nbeta = 717\nbic_scale = 41\nhystart = true"), "the defaults written out");
    for extra in ["[defaults.tcp.cubic]\nbeta = 300", "[defaults.tcp.cubic]\nbic_scale = 400", "[flows.tcp.cubic]\nhystart = false"] {
        assert_ne!(delivered(extra), plain, "{extra}");
    }
}

#[test]
fn every_section_resolves_to_a_scenario_that_parses_back_to_itself() {
    // Every preset, strict-priority queues (tables among plain keys), AAL5, reordering, taps,
    // both flow kinds and each controller with its own table, a coordinator and every trace.
    let text = r#"
name = "everything"
description = "every section"
[run]
duration = "300ms"
seed = 5
[defaults]
queue = { classes = ["20pkts", "30KB"] }
[defaults.tcp]
profile = "linux-modern"
[defaults.tcp.bic]
smooth_part = 10
[[hosts]]
name = "a"
start_skew = "1ms"
jitter = "2us"
[[hosts]]
name = "b"
[[switches]]
name = "s"
[[emulators]]
name = "comet"
preset = "comet-drop"
delay = "3.4ms"
loss_65536 = 7
[[emulators]]
name = "dn"
preset = "dummynet"
rate = "50Mbps"
queue = { classes = ["10pkts", "unlimited"] }
delay = "1ms"
[[emulators]]
name = "hz"
preset = "harmonizer"
harmonize_from = "s"
harmonize_interval = "100ms"
[[emulators]]
name = "netem"
reorder = 0.01
reorder_delay = "1ms"
duplicate = 0.001
[[links]]
between = ["a", "comet"]
rate = "1Gbps"
framing = "38B"
[[links]]
between = ["comet", "dn"]
rate = "149.76Mbps"
link_layer = "aal5"
queue_b = "64KB"
[[links]]
between = ["dn", "s"]
rate = "1Gbps"
queue = "100pkts"
[[links]]
between = ["s", "hz"]
rate = "1Gbps"
[[links]]
between = ["hz", "netem"]
rate = "1Gbps"
[[links]]
between = ["netem", "b"]
rate = "1Gbps"
delay = "5ms"
[[taps]]
name = "t"
link = ["s", "dn"]
direction = "s"
pcap = false
trace = true
[[flows]]
name = "c"
src = "a"
dst = "b"
count = 2
class = 1
[flows.tcp.cubic]
bic_scale = 60
[[flows]]
name = "bic"
src = "a"
dst = "b"
bulk = { bytes = "1MB" }
start = "10ms"
[flows.tcp]
cc = "bic"
abc_limit = 0
[flows.tcp.bic]
beta = 800
[[flows]]
name = "u"
kind = "udp-cbr"
src = "a"
dst = "b"
cbr = { rate = "1Mbps" }
stop = "100ms"
[[coordinators]]
kind = "decp"
flows = ["c", "bic"]
[trace]
throughput_interval = "10ms"
cwnd = true
queues = "all"
events = true
milestones = true
"#;
    let mut a = Run::from_toml(text, None).unwrap_or_else(|e| panic!("{e}"));
    let resolved_text = a.resolved_toml();
    let mut b = Run::from_toml(&resolved_text, None).unwrap_or_else(|e| panic!("{e}\n{resolved_text}"));
    assert_eq!(b.resolved, a.resolved, "{resolved_text}");
    assert_eq!(b.resolved_toml(), resolved_text);
    assert_eq!((&b.hash, b.seed), (&a.hash, 5));
    // What resolution decided, as the file shows it.
    let v: toml::Table = resolved_text.parse().unwrap();
    assert_eq!(v["emulators"][0]["delay"].as_str(), Some("3ms"), "comet-drop's 1 ms steps");
    assert_eq!(v["emulators"][0]["loss"].as_float(), Some(7.0 / 65536.0));
    assert!(v["emulators"][0].get("loss_65536").is_none());
    assert!(v["emulators"][3].get("queue").is_none(), "no rate limit, no queue");
    assert_eq!(v["emulators"][3]["reorder_delay"].as_str(), Some("1ms"));
    assert_eq!(v["links"][1]["queue_a"]["classes"][1].as_str(), Some("30KB"), "defaults.queue");
    assert_eq!(v["links"][2]["queue_b"].as_str(), Some("100pkts"));
    assert_eq!(v["flows"][0]["tcp"]["cc"].as_str(), Some("cubic"));
    assert_eq!(v["flows"][0]["tcp"]["cubic"]["bic_scale"].as_integer(), Some(60));
    assert_eq!(v["flows"][1]["tcp"]["bic"]["beta"].as_integer(), Some(800));
    assert_eq!(v["flows"][1]["tcp"]["bic"]["smooth_part"].as_integer(), Some(10), "defaults.tcp.bic");
    assert!(v["flows"][2].get("tcp").is_none());
    a.sim.run();
    b.sim.run();
    assert_eq!(a.summary_json(), b.summary_json());
    assert_eq!(a.sim.traces.digest(), b.sim.traces.digest());
}

#[test]
fn dctcp_turns_ecn_on_and_its_table_builds_the_config() {
    let r = resolved(&with("[defaults.tcp]\ncc = \"dctcp\"\n[defaults.tcp.dctcp]\nshift_g = 5\nalpha_on_init = 512"));
    let cfg = r.flows[0].tcp().unwrap().config();
    assert!(cfg.ecn, "DCTCP needs ECN: on unless said otherwise");
    assert_eq!(
        cfg.cc,
        CcConfig::Dctcp(crate::tcp::cc::DctcpConfig { reno: crate::tcp::cc::RenoConfig { abc_limit: 1, max_ssthresh: 0, exact_increase: false }, shift_g: 5, alpha_on_init: 512 })
    );
    // ECN alone, for any controller; off by default.
    assert!(resolved(&with("[defaults.tcp]\necn = true\ncc = \"cubic\"")).flows[0].tcp().unwrap().config().ecn);
    assert!(!resolved(TINY).flows[0].tcp().unwrap().config().ecn);
    // The resolved file says so, and parses back to itself.
    let run = Run::from_toml(&with("[defaults.tcp]\ncc = \"dctcp\"\nrto_randomize = 0.5"), None).unwrap();
    let text = run.resolved_toml();
    assert!(text.contains("ecn = true") && text.contains("rto_randomize = 0.5") && text.contains("shift_g = 4"), "{text}");
    assert_eq!(Run::from_toml(&text, None).unwrap().resolved, run.resolved);
}

#[test]
fn highspeed_takes_its_slow_start_from_its_table_and_the_tcp_table() {
    let text = with("[defaults.tcp]\ncc = \"highspeed\"\nabc_limit = 2\n[defaults.tcp.highspeed]\nmax_ssthresh = 100");
    let reno = crate::tcp::cc::RenoConfig { abc_limit: 2, max_ssthresh: 100, exact_increase: false };
    assert_eq!(cc_of(&text), CcConfig::HighSpeed(crate::tcp::cc::HighSpeedConfig { reno }));
    let run = Run::from_toml(&text, None).unwrap();
    let back = run.resolved_toml();
    assert!(back.contains("cc = \"highspeed\"") && back.contains("max_ssthresh = 100"), "{back}");
    assert_eq!(Run::from_toml(&back, None).unwrap().resolved, run.resolved);
}

#[test]
fn ecn_and_queue_table_errors_name_the_key() {
    let link_q = |q: &str| TINY.replace("delay = \"1ms\"", &format!("delay = \"1ms\"\nqueue = {q}"));
    let cases: Vec<(String, &str)> = vec![
        (with("[defaults.tcp]\ncc = \"dctcp\"\necn = false"), "defaults.tcp.ecn: cc = \"dctcp\" needs ECN"),
        (with("[flows.tcp]\nrto_randomize = 1.5"), "flows[0].tcp.rto_randomize: 1.5 is out of range (0..=1"),
        (with("[defaults.tcp.dctcp]\nshift_g = 11"), "defaults.tcp.dctcp.shift_g: 11 is out of range (0..=10"),
        (with("[defaults.tcp.dctcp]\nalpha_on_init = 2000"), "defaults.tcp.dctcp.alpha_on_init: 2000 is out of range"),
        (with("[defaults.tcp.dctcp]\ng = 0.1"), "defaults.tcp.dctcp.g: unknown field `g`"),
        (link_q("{ limit = \"40pkts\", classes = [\"5pkts\"] }"), "links[0].queue_a.classes: give one of limit (one FIFO), classes (strict priority) or cells"),
        (link_q("{ ecn_threshold = \"20pkts\" }"), "links[0].queue_a.limit: a queue table needs a limit (one FIFO), classes (strict priority) or cells"),
        (link_q("{ limit = \"40pkts\", ecn_threshold = \"unlimited\" }"), "links[0].queue_a.ecn_threshold: give a number of packets or bytes"),
        (link_q("{ limit = \"40pkts\", ecn_unmarkable = \"pass\" }"), "links[0].queue_a.ecn_unmarkable: only applies with ecn_threshold"),
        (link_q("{ limit = \"40pkts\", ecn_threshold = \"20pkts\", ecn_unmarkable = \"keep\" }"), "unknown variant `keep`, expected `drop` or `pass`"),
        (link_q("{ limit = \"40pkts\", ecn_treshold = \"20pkts\" }"), "unknown field `ecn_treshold`"),
        (link_q("{ classes = [] }"), "links[0].queue_a.classes: give 1 to 8 class limits"),
    ];
    for (text, want) in &cases {
        let got = error_of(text);
        assert!(got.contains(want), "got {got:?}, want {want:?}");
    }
    // A marking queue resolves, and the resolved file keeps its table.
    let run = Run::from_toml(&link_q("{ limit = \"40pkts\", ecn_threshold = \"20pkts\" }"), None).unwrap();
    let text = run.resolved_toml();
    assert!(text.contains("ecn_threshold = \"20pkts\""), "{text}");
    assert_eq!(Run::from_toml(&text, None).unwrap().resolved, run.resolved);
}

#[test]
fn limited_slow_start_is_newreno_and_renos_table_key() {
    let r = resolved(&with("[defaults.tcp]\ncc = \"newreno\"\nabc_limit = 0\n[defaults.tcp.newreno]\nmax_ssthresh = 100"));
    assert_eq!(r.flows[0].tcp().unwrap().config().cc, CcConfig::NewReno(crate::tcp::cc::RenoConfig { abc_limit: 0, max_ssthresh: 100, exact_increase: false }));
    let r = resolved(&with("[defaults.tcp]\ncc = \"reno\"\n[defaults.tcp.reno]\nmax_ssthresh = 50"));
    assert_eq!(r.flows[0].tcp().unwrap().config().cc, CcConfig::Reno(crate::tcp::cc::RenoConfig { abc_limit: 1, max_ssthresh: 50, exact_increase: false }));
    // Linux 2.4.18 counts avoidance ACKs exactly (snd_cwnd_cnt); a scenario may turn it off.
    let r = resolved(&with("[defaults.tcp]\nprofile = \"linux-2.4.18\""));
    assert_eq!(r.flows[0].tcp().unwrap().config().cc, CcConfig::NewReno(crate::tcp::cc::RenoConfig { abc_limit: 0, max_ssthresh: 0, exact_increase: true }));
    let r = resolved(&with("[defaults.tcp]\nprofile = \"linux-2.4.18\"\n[defaults.tcp.newreno]\nexact_increase = false"));
    assert_eq!(r.flows[0].tcp().unwrap().config().cc, CcConfig::NewReno(crate::tcp::cc::RenoConfig { abc_limit: 0, max_ssthresh: 0, exact_increase: false }));
    let e = Run::from_toml(&with("[defaults.tcp.newreno]\nmax_ssthresh = -1"), None).unwrap_err().to_string();
    assert!(e.contains("max_ssthresh"), "{e}");
}

#[test]
fn comet_drops_processing_limit_is_a_rate_limit_below_line_rate() {
    // A 20 MB bulk transfer across Comet Drop on GbE, 1 ms each way: at line rate without a
    // limit, held below 200 Mb/s by a 200 Mb/s processing limit (its queue unlimited).
    let text = |limit: &str| {
        format!(
            "name = \"c\"\n[run]\nstop = \"flows-done\"\n[defaults.tcp]\nsndbuf = \"4MB\"\nrcvbuf = \"4MB\"\n[[hosts]]\nname = \"a\"\n[[hosts]]\nname = \"b\"\n\
             [[emulators]]\nname = \"comet\"\npreset = \"comet-drop\"\ndelay = \"1ms\"\n{limit}\n\
             [[links]]\nbetween = [\"a\", \"comet\"]\nrate = \"1Gbps\"\n[[links]]\nbetween = [\"comet\", \"b\"]\nrate = \"1Gbps\"\n\
             [[flows]]\nname = \"f\"\nsrc = \"a\"\ndst = \"b\"\nbulk = {{ bytes = \"20MB\" }}\n"
        )
    };
    let goodput = |limit: &str| {
        let mut r = Run::from_toml(&text(limit), Some(1)).unwrap_or_else(|e| panic!("{e}"));
        r.sim.run();
        r.sim.summary().flows[0].goodput_bps
    };
    let (free, held) = (goodput(""), goodput("rate = \"200Mbps\""));
    assert!(free > 500e6, "line rate: {:.0} Mb/s", free / 1e6);
    assert!(held < 200e6 && held > 150e6, "held: {:.0} Mb/s", held / 1e6);
}

#[test]
fn ip_version_6_adds_20_bytes_to_every_segment_and_nothing_else() {
    // The same 100 KB transfer over IPv4 and IPv6 (MSS 1440 both, so the segments are the
    // same): the same packets, each 20 bytes longer on the line; the payload delivered and
    // the TCP behaviour unchanged.
    let run = |v: u8| {
        let text = with(&format!("[flows.tcp]\nmss = 1440\nip_version = {v}\n")).replace("name = \"t\"", "name = \"t\"\n[run]\nstop = \"flows-done\"");
        let mut r = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
        r.sim.run();
        r.sim.summary()
    };
    let (v4, v6) = (run(4), run(6));
    let (f4, f6) = (&v4.flows[0], &v6.flows[0]);
    assert_eq!((f4.bytes_delivered, f4.segments_sent, f4.retransmits), (f6.bytes_delivered, f6.segments_sent, f6.retransmits));
    let (q4, q6) = (&v4.queues[0], &v6.queues[0]);
    assert_eq!(q4.departed, q6.departed, "the same packets");
    assert_eq!(q6.bytes_transmitted - q4.bytes_transmitted, 20 * q4.departed, "20 more bytes per packet");
    assert!(f6.finish_s.unwrap() > f4.finish_s.unwrap(), "longer packets take longer on a 10 Mb/s line");
    assert_eq!(error_of(&with("[flows.tcp]\nip_version = 5\n")), "flows[0].tcp.ip_version: 5 is not an IP version (4 or 6)");
}
