//! ImTCP's stage in whole scenarios (`tcp.variant = "imtcp"`): the estimate against the truth
//! under CBR cross traffic, a step out of the search range, the receiver's ACK rule, bad
//! input, and the `measurements` trace changing nothing.

use super::tests::{error_of, run};
use crate::scenario::Run;
use crate::trace::MeasurementTrace;

/// One ImTCP flow snd → rcv over r1 → r2 (100 Mb/s, no framing: C = 100 Mb/s of IP bytes,
/// 15 ms each way, 100-packet buffer) beside a 1500-byte UDP CBR xs → xr of `schedule`;
/// `tcp` and `imtcp` are extra keys of the flow's tables.
pub(super) fn dumbbell(hz: u32, schedule: &str, duration: &str, tcp: &str, imtcp: &str) -> String {
    format!(
        r#"
name = "imtcp"
[run]
duration = "{duration}"
[defaults.tcp]
sndbuf = "1MB"
rcvbuf = "1MB"
delack_segments = 1
hz = {hz}
[[hosts]]
name = "snd"
[[hosts]]
name = "rcv"
[[hosts]]
name = "xs"
[[hosts]]
name = "xr"
[[switches]]
name = "r1"
[[switches]]
name = "r2"
[[links]]
between = ["snd", "r1"]
rate = "1Gbps"
[[links]]
between = ["xs", "r1"]
rate = "1Gbps"
[[links]]
between = ["r1", "r2"]
rate = "100Mbps"
delay = "15ms"
queue = "100pkts"
[[links]]
between = ["r2", "rcv"]
rate = "1Gbps"
[[links]]
between = ["r2", "xr"]
rate = "1Gbps"
[[flows]]
name = "imtcp"
src = "snd"
dst = "rcv"
[flows.tcp]
variant = "imtcp"
{tcp}
[flows.tcp.imtcp]
{imtcp}
[[flows]]
name = "udp"
kind = "udp-cbr"
src = "xs"
dst = "xr"
background = true
[flows.cbr]
packet_size = "1500B"
schedule = {schedule}
[trace]
measurements = true
link_usage = {{ links = ["r1->r2"], interval = "10ms" }}
"#
    )
}

/// The true available bandwidth over [t0, t1] from the `link_usage` trace: C − what the
/// other flows (the CBR, flow 1) carried, bit/s.
fn truth(r: &Run, t0: f64, t1: f64) -> f64 {
    let u = r.sim.traces.link_usage.as_ref().unwrap();
    let dt = 0.01;
    let mut cross = 0.0;
    for i in 0..u.time_s.len() {
        if u.flow[i] != 1 {
            continue;
        }
        let (a, b) = (u.time_s[i] - dt, u.time_s[i]);
        let overlap = (b.min(t1) - a.max(t0)).max(0.0);
        cross += u.bytes[i] as f64 * 8.0 * overlap / dt;
    }
    100e6 - cross / (t1 - t0)
}

fn measurements(r: &Run) -> &MeasurementTrace {
    r.sim.traces.measurements.as_ref().expect("traced")
}

/// (mean error, standard deviation of the error) of the estimates from `from_s` on against
/// the truth over each one's own span, as fractions of the truth.
fn errors(r: &Run, from_s: f64) -> (f64, f64, usize) {
    let m = measurements(r);
    let e: Vec<f64> = (0..m.time_s.len())
        .filter(|&i| m.start_s[i] >= from_s)
        .map(|i| {
            let a = truth(r, m.start_s[i], m.time_s[i]);
            (m.estimate_bps[i] - a) / a
        })
        .collect();
    let n = e.len() as f64;
    let mean = e.iter().sum::<f64>() / n;
    let sd = (e.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
    (mean, sd, e.len())
}

#[test]
fn estimate_under_cbr_cross_traffic_is_c_minus_cbr() {
    // HZ 100,000 (a 10 µs grid: near 80 Mb/s the grid's rates are 1.2 G/m, 75, 80, 85.7 Mb/s
    // for m = 16, 15, 14), so the grid is not what limits the estimate. Stated tolerance,
    // once the range has settled (after 2 s): the mean error within +15 % / −5 % of C − CBR
    // and the spread (sd) below 8 %. Why it reads high: a 10-packet stream's delays rise by a
    // whole CBR packet's service now and then, not smoothly, so the trend test sees the rise
    // only once the stream runs clearly above A (≈ 10 % at 1500-byte CBR), and the estimate
    // is the midpoint of the last quiet and first rising gap. Measuring C instead (the test's
    // failure mode) is +25 % and +100 %. This bound is the `ties-excluded` trend rule's; the
    // other rules read higher (`every_trend_rule_reads_nearer_a_than_c`).
    for cbr in [20e6, 50e6] {
        let text = dumbbell(100_000, &format!("[{{ at = \"0s\", rate = \"{}Mbps\" }}]", cbr / 1e6), "12s", "", "trend = { rule = \"ties-excluded\" }");
        let r = run(&text, 1);
        let want = 100e6 - cbr;
        // The truth trace agrees with C − CBR over the run.
        let t = truth(&r, 2.0, 12.0);
        assert!((t - want).abs() < 0.2e6, "truth {t} against {want}");
        let (mean, sd, n) = errors(&r, 2.0);
        eprintln!("CBR {} Mb/s, HZ 100000: {n} estimates, mean error {:+.1} %, sd {:.1} %", cbr / 1e6, mean * 100.0, sd * 100.0);
        assert!(n >= 50, "{n} measurements");
        assert!((-0.05..0.15).contains(&mean) && sd < 0.08, "mean error {mean}, sd {sd}");
    }
}

#[test]
fn step_out_of_range_is_found_within_few_measurements() {
    // A falls from 80 to 50 Mb/s at 8 s, far below the 95 % range around 80 (about ±5 %):
    // the first results flag "below" and move the range down by its width until one lands
    // inside. (A fall to 20 Mb/s is not used here: NewReno with 1 MB buffers then loses in
    // nearly every 4-RTT measurement, which voids them; the study's runs show that case.)
    // With the `ties-excluded` trend rule, whose estimates sit within the range it settles on.
    let text = dumbbell(100_000, r#"[{ at = "0s", rate = "20Mbps" }, { at = "8s", rate = "50Mbps" }]"#, "14s", "", "trend = { rule = \"ties-excluded\" }");
    let r = run(&text, 1);
    let m = measurements(&r);
    let after: Vec<usize> = (0..m.time_s.len()).filter(|&i| m.start_s[i] >= 8.0).collect();
    let found = after.iter().position(|&i| m.flag[i] == 0 && (m.estimate_bps[i] - 50e6).abs() < 0.15 * 50e6).expect("found the new level");
    let flags: Vec<u32> = after.iter().take(found + 1).map(|&i| m.flag[i]).collect();
    eprintln!("step 80 -> 50 Mb/s: found in measurement {} after it (flags {flags:?}), {} after it in all", found + 1, after.len());
    assert!(found < 6, "{found} measurements to find the new level");
    assert!(flags.contains(&2), "it left the range below first");
    // And stays there: the later estimates are near 50 Mb/s.
    let (mean, _, _) = errors(&r, m.time_s[after[found]] + 1.0);
    assert!(mean.abs() < 0.15, "mean error after recovery {mean}");
}

#[test]
fn every_trend_rule_reads_nearer_a_than_c() {
    // 50 Mb/s of CBR: the truth is 50 Mb/s, the idle link 100 (+100 %). Each rule's mean
    // error after 2 s, one seed, must be below halfway (+50 %): it measures the available
    // bandwidth, not the link. Pathload's rule as written is the weakest here (a CBR
    // packet's step is followed by ties it reads as "not rising").
    for rule in ["pathload", "ties-split", "ties-excluded"] {
        let text = dumbbell(100_000, r#"[{ at = "0s", rate = "50Mbps" }]"#, "12s", "", &format!("trend = {{ rule = \"{rule}\" }}"));
        let r = run(&text, 1);
        let (mean, sd, n) = errors(&r, 2.0);
        eprintln!("CBR 50 Mb/s, HZ 100000, {rule}: {n} estimates, mean error {:+.1} %, sd {:.1} %", mean * 100.0, sd * 100.0);
        assert!(n >= 50 && mean < 0.5, "{rule}: mean error {mean} over {n}");
    }
}

#[test]
fn delayed_ack_receiver_is_refused() {
    let text = dumbbell(20_000, r#"[{ at = "0s", rate = "20Mbps" }]"#, "2s", "delack_segments = 2", "");
    let e = error_of(&text);
    assert!(e.contains("flows[0].tcp.delack_segments") && e.contains("delayed_ack"), "{e}");
}

#[test]
fn delayed_ack_receiver_is_warned() {
    // "warn" runs it: the receiver ACKs every second segment, so half the stream packets
    // share an ACK, which the measurements' `packets` column shows.
    let text = dumbbell(20_000, r#"[{ at = "0s", rate = "20Mbps" }]"#, "4s", "delack_segments = 2", "delayed_ack = \"warn\"");
    let r = run(&text, 1);
    let m = measurements(&r);
    assert!(!m.time_s.is_empty());
    assert!(m.packets.iter().all(|&p| p < 40) && m.packets.iter().any(|&p| p <= 24), "{:?}", m.packets);
}

#[test]
fn bad_imtcp_input_names_its_field() {
    let base = |tcp: &str, imtcp: &str| dumbbell(20_000, r#"[{ at = "0s", rate = "20Mbps" }]"#, "1s", tcp, imtcp);
    for (tcp, imtcp, want) in [
        ("", "streams = 0", "flows[0].tcp.imtcp.streams: 0 is out of range"),
        ("", "packets = 1", "flows[0].tcp.imtcp.packets: 1 is out of range"),
        ("", "packets = 0", "flows[0].tcp.imtcp.packets: 0 is out of range"),
        ("", "history = 1", "flows[0].tcp.imtcp.history: 1 is out of range"),
        ("", "min_width = 0.0", "flows[0].tcp.imtcp.min_width: 0 is out of range"),
        ("", "min_width = 1.5", "flows[0].tcp.imtcp.min_width: 1.5 is out of range"),
        ("", "initial = \"link\"", "flows[0].tcp.imtcp.link_rate:"),
        ("", "trend = { pct_low = 0.7 }", "flows[0].tcp.imtcp.trend.pct_low:"),
        ("", "range = \"frozen\"", "unknown variant `frozen`, expected `adaptive` or `fixed`"),
        ("hz = 0", "", "flows[0].tcp.hz: 0 is out of range"),
        ("hz = 2000000000", "", "flows[0].tcp.hz: 2000000000 is out of range (10..=1000000000): a tick below 1 ns"),
    ] {
        let e = error_of(&base(tcp, imtcp));
        assert!(e.contains(want), "{tcp} {imtcp}: {e}");
    }
    // The top of the range is taken: a 1 ns tick.
    let text = base("hz = 1000000000", "initial = \"link\"\nlink_rate = \"100Mbps\"");
    let _ = Run::from_toml(&text, Some(1)).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_fixed_range_measures_within_its_first_range_and_is_shown_resolved() {
    let text = dumbbell(20_000, r#"[{ at = "0s", rate = "50Mbps" }]"#, "4s", "", "initial = \"link\"\nlink_rate = \"100Mbps\"\nrange = \"fixed\"");
    let fixed = run(&text, 1);
    let m = measurements(&fixed);
    assert!(m.time_s.len() > 5, "{} results", m.time_s.len());
    assert!(m.low_bps.iter().all(|&l| l == 10e6) && m.high_bps.iter().all(|&h| h == 100e6), "{:?} {:?}", m.low_bps, m.high_bps);
    // The adaptive default moves away from [C/10, C] after the first result.
    let adaptive = run(&text.replace("range = \"fixed\"", ""), 1);
    assert!(measurements(&adaptive).high_bps.iter().any(|&h| h != 100e6));
    // Resolved: the key appears only when fixed (the default leaves resolved scenarios as they were).
    let shown = |t: &str| Run::from_toml(t, Some(1)).unwrap_or_else(|e| panic!("{e}")).resolved_toml();
    assert!(shown(&text).contains("range = \"fixed\""));
    assert!(!shown(&text.replace("range = \"fixed\"", "")).contains("range = "));
}

#[test]
fn measurements_trace_changes_no_result() {
    let on = dumbbell(20_000, r#"[{ at = "0s", rate = "50Mbps" }]"#, "3s", "", "");
    let off = on.replace("measurements = true\n", "");
    let (a, b) = (run(&on, 3), run(&off, 3));
    assert!(b.sim.traces.measurements.is_none() && !measurements(&a).time_s.is_empty());
    let s = |r: &Run| serde_json::to_string(&r.sim.summary()).unwrap();
    assert_eq!(s(&a), s(&b));
    assert_eq!(a.sim.traces.link_usage.as_ref().unwrap().bytes, b.sim.traces.link_usage.as_ref().unwrap().bytes);
    // And the variant runs only when asked: the same path without it measures nothing.
    let plain = off.replace("variant = \"imtcp\"\n", "");
    let c = run(&plain, 3);
    assert_ne!(s(&a), s(&c));
    assert!(c.sim.traces.measurements.is_none());
}
