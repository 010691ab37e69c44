//! The Dummynet preset's clock tick (`[[emulators]] tick`): packets leave a ticked delay line
//! only on ticks, `delay/tick` ticks after the last tick before they arrived (FreeBSD's
//! ip_dummynet.c), the delay truncated to whole ticks; a pure delay line needs no rate.

use super::observers;
use super::tests::{error_of, run};
use crate::scenario::parse_toml;

const MS: f64 = 1e-3;

/// `a` — 1 Gb/s — `dn` (Dummynet, delay `delay`, `tick`) — 1 Gb/s — `b`, a 1000-byte UDP CBR
/// at 3.7 Mb/s from `a` to `b` for 0.3 s, tapped on both sides of `dn` at 1 ns.
fn ticked(delay: &str, tick: &str) -> String {
    format!(
        r#"
name = "dn"
[run]
duration = "0.35s"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[emulators]]
name = "dn"
preset = "dummynet"
delay = "{delay}"
{tick}
[[links]]
between = ["a", "dn"]
rate = "1Gbps"
[[links]]
between = ["dn", "b"]
rate = "1Gbps"
[[flows]]
name = "u"
kind = "udp-cbr"
src = "a"
dst = "b"
stop = "0.3s"
cbr = {{ rate = "3.7Mbps", packet_size = "1000B" }}
[[taps]]
name = "in"
link = ["a", "dn"]
pcap = false
trace = true
resolution = "1ns"
[[taps]]
name = "out"
link = ["dn", "b"]
pcap = false
trace = true
resolution = "1ns"
"#
    )
}

/// (time at `a`'s side, time at `b`'s side) of every datagram, seconds, by sequence number.
fn crossings(text: &str) -> Vec<(f64, f64)> {
    let r = run(text, 1);
    let cap = r.sim.traces.capture.as_ref().expect("capture trace");
    let mut by_seq: std::collections::BTreeMap<u64, (Option<f64>, Option<f64>)> = Default::default();
    for i in 0..cap.time_s.len() {
        let e = by_seq.entry(cap.seq[i]).or_default();
        if cap.tap[i] == 0 {
            e.0 = Some(cap.time_s[i]);
        } else {
            e.1 = Some(cap.time_s[i]);
        }
    }
    by_seq.into_values().filter_map(|(a, b)| Some((a?, b?))).collect()
}

/// Serialization of a 1000-byte datagram (IP bytes) at 1 Gb/s, seconds.
const SER: f64 = 1000.0 * 8.0 / 1e9;

#[test]
fn packets_leave_on_ticks_a_whole_number_of_ticks_after_the_last_tick_before_arrival() {
    // 15 ms at HZ = 100 is one 10 ms tick (ipfw truncates): a datagram that reaches dn at t
    // leaves at (⌊t / 10 ms⌋ + 1) · 10 ms.
    let seen = crossings(&ticked("15ms", "tick = \"10ms\""));
    assert!(seen.len() > 100, "{}", seen.len());
    // The tap on dn's far side sees each one go onto the 1 Gb/s link to b: when it leaves dn,
    // or when the one released on the same tick before it has been sent.
    let (mut delays, mut link_free, mut shared) = (Vec::new(), 0.0f64, 0);
    for &(sent, left) in &seen {
        let arrived = sent + SER;
        let release = ((arrived / (10.0 * MS)).floor() + 1.0) * 10.0 * MS;
        let want = release.max(link_free);
        shared += usize::from(want > release);
        assert!((left - want).abs() < 2e-9, "sent {sent}: left {left}, want {want}");
        link_free = want + SER;
        delays.push(release - arrived);
    }
    assert!(shared > seen.len() / 2, "most ticks release several datagrams at once: {shared}");
    // The delay each one sees spreads over (0, 10 ms], not the 15 ms asked for.
    let (lo, hi) = delays.iter().fold((f64::MAX, 0.0f64), |(l, h), &d| (l.min(d), h.max(d)));
    assert!(lo > 0.0 && lo < 1.0 * MS && hi > 9.0 * MS && hi <= 10.0 * MS + 1e-9, "{lo} {hi}");
    // Without the tick the same delay line holds every packet exactly 15 ms.
    for (sent, left) in crossings(&ticked("15ms", "")) {
        assert!((left - sent - SER - 15.0 * MS).abs() < 2e-9);
    }
}

#[test]
fn a_delay_shorter_than_a_tick_lets_packets_through_at_once() {
    // 5 ms at HZ = 100 is 0 ticks: output_time = curr_time, released on arrival.
    for (sent, left) in crossings(&ticked("5ms", "tick = \"10ms\"")) {
        assert!((left - sent - SER).abs() < 2e-9, "{sent} {left}");
    }
}

#[test]
fn the_resolved_delay_is_whole_ticks_and_the_run_is_the_same_however_observed() {
    let r = run(&ticked("25ms", "tick = \"10ms\""), 1).resolved;
    let v = serde_json::to_value(&r).unwrap();
    assert_eq!(v["emulators"][0]["delay"], "20ms");
    assert_eq!(v["emulators"][0]["tick"], "10ms");
    assert!(v["emulators"][0].get("rate").is_none() && v["emulators"][0].get("queue").is_none(), "a pure delay line: {v}");
    // Without a tick the key stays out of the resolved scenario.
    let plain = serde_json::to_value(run(&ticked("25ms", ""), 1).resolved).unwrap();
    assert!(plain["emulators"][0].get("tick").is_none());
    let sc = parse_toml(&ticked("25ms", "tick = \"10ms\"\nrate = \"10Mbps\"")).unwrap();
    assert_eq!(observers::check_every_mode(&sc, 1).unwrap(), None);
}

#[test]
fn bad_ticks_are_refused_by_field() {
    assert!(error_of(&ticked("15ms", "tick = \"0s\"")).contains("emulators[0].tick: must be positive"));
    assert!(error_of(&ticked("15ms", "tick = \"2s\"")).contains("emulators[0].tick: 2s is longer than a second"));
    let comet = ticked("15ms", "tick = \"10ms\"").replace("preset = \"dummynet\"", "preset = \"comet-drop\"");
    assert!(error_of(&comet).contains("emulators[0].tick: only for preset = \"dummynet\""), "{}", error_of(&comet));
    let queued = ticked("15ms", "queue = \"10pkts\"");
    assert!(error_of(&queued).contains("emulators[0].queue: a queue needs a rate limit"), "{}", error_of(&queued));
}
