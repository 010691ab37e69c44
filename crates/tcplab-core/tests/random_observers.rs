//! Random scenarios give the same summary and traces in every mode (no observers, every link
//! tapped, every queue traced and every direction's usage counted, hop by hop, both, stepped;
//! `scenario::observers`); a third of them count some directions' usage themselves. The
//! generator favours round numbers — equal rates, equal delays, simultaneous starts — so that
//! events meet on the same picosecond often, which is where an order that depended on the
//! optimisation path or on the observers used to show.
//!
//! `TCPLAB_RANDOM_SCENARIOS=N` runs N cases instead of the default.

use proptest::prelude::*;

use tcplab_core::scenario::observers::check_every_mode;
use tcplab_core::scenario::parse_toml;

mod seeded;

const RATES: [&str; 4] = ["10Mbps", "100Mbps", "1Gbps", "10Gbps"];
const DELAYS: [&str; 4] = ["0s", "10us", "100us", "1ms"];
const QUEUES: [&str; 5] = ["3pkts", "10pkts", "40pkts", "200pkts", "30KB"];

/// One generated scenario, as the choices it is rendered from.
#[derive(Clone, Debug)]
struct Choices {
    switches: usize,
    /// Per host: (switch it hangs off, access rate, delay, queue, jitter?, skew?).
    hosts: Vec<(usize, usize, usize, usize, bool, bool)>,
    /// Per inter-switch link: (rate, delay, queue, classes?).
    trunks: Vec<(usize, usize, usize, bool)>,
    /// An emulator on the first trunk: (delay index, loss ‰, rate-limited?, reorder %,
    /// duplicate %).
    emulator: Option<(usize, u32, bool, u32, u32)>,
    /// Flows: (src, dst, kind 0..=7, start index, bytes?, class, count).
    flows: Vec<(usize, usize, u8, usize, bool, u8, u32)>,
    duration_ms: u64,
    flows_done: bool,
    coordinator: bool,
}

fn choices() -> impl Strategy<Value = Choices> {
    (1usize..=3, 2usize..=5).prop_flat_map(|(switches, nhosts)| {
        (
            Just(switches),
            prop::collection::vec((0..switches, 0usize..4, 0usize..4, 0usize..5, prop::bool::weighted(0.2), prop::bool::weighted(0.2)), nhosts),
            prop::collection::vec((0usize..4, 0usize..4, 0usize..5, prop::bool::weighted(0.2)), switches - 1),
            prop::option::weighted(0.5, (0usize..4, prop_oneof![Just(0u32), Just(1), Just(20)], any::<bool>(), prop_oneof![Just(0u32), Just(5)], prop_oneof![Just(0u32), Just(3)])),
            prop::collection::vec((0..nhosts, 0..nhosts, 0u8..8, 0usize..3, any::<bool>(), 0u8..2, 1u32..=3), 1..=5),
            20u64..150,
            prop::bool::weighted(0.25),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(switches, hosts, trunks, emulator, flows, duration_ms, flows_done, coordinator)| Choices {
                switches,
                hosts,
                trunks,
                emulator,
                flows,
                duration_ms,
                flows_done,
                coordinator,
            })
    })
}

/// The scenario's TOML text, or `None` when the choices make no valid flow.
fn render(c: &Choices) -> Option<String> {
    let mut t = String::from("name = \"random\"\n[run]\n");
    t += &format!("duration = \"{}ms\"\n", c.duration_ms);
    if c.flows_done {
        t += "stop = \"flows-done\"\n";
    }
    t += "[defaults]\nqueue = \"100pkts\"\n";
    for (i, h) in c.hosts.iter().enumerate() {
        t += &format!("[[hosts]]\nname = \"h{i}\"\n");
        if h.4 {
            t += "jitter = \"2us\"\n";
        }
        if h.5 {
            t += "start_skew = \"1ms\"\n";
        }
    }
    for s in 0..c.switches {
        t += &format!("[[switches]]\nname = \"s{s}\"\n");
    }
    let queue =
        |q: usize, classes: bool| if classes { format!("{{ classes = [\"{}\", \"{}\"] }}", QUEUES[q], QUEUES[(q + 2) % QUEUES.len()]) } else { format!("\"{}\"", QUEUES[q]) };
    // The emulator sits on the first trunk: none without one.
    if let Some((d, loss, rated, reorder, dup)) = c.emulator.filter(|_| c.switches > 1) {
        t += &format!("[[emulators]]\nname = \"emu\"\ndelay = \"{}\"\nloss = {}\n", DELAYS[d], loss as f64 / 1000.0);
        if reorder > 0 {
            t += &format!("reorder = {}\nreorder_delay = \"100us\"\n", reorder as f64 / 100.0);
        }
        if rated {
            t += "rate = \"100Mbps\"\nqueue = \"20pkts\"\n";
        } else if dup > 0 {
            t += &format!("duplicate = {}\n", dup as f64 / 100.0);
        }
    }
    for (i, h) in c.hosts.iter().enumerate() {
        t += &format!("[[links]]\nbetween = [\"h{i}\", \"s{}\"]\nrate = \"{}\"\ndelay = \"{}\"\nqueue = {}\n", h.0, RATES[h.1], DELAYS[h.2], queue(h.3, false));
    }
    for (k, tr) in c.trunks.iter().enumerate() {
        let (a, b) = (format!("s{k}"), format!("s{}", k + 1));
        let q = queue(tr.2, tr.3);
        if k == 0 && c.emulator.is_some() {
            t += &format!("[[links]]\nbetween = [\"{a}\", \"emu\"]\nrate = \"{}\"\ndelay = \"{}\"\nqueue = {q}\n", RATES[tr.0], DELAYS[tr.1]);
            t += &format!("[[links]]\nbetween = [\"emu\", \"{b}\"]\nrate = \"{}\"\ndelay = \"{}\"\nqueue = {q}\n", RATES[tr.0], DELAYS[tr.1]);
        } else {
            t += &format!("[[links]]\nbetween = [\"{a}\", \"{b}\"]\nrate = \"{}\"\ndelay = \"{}\"\nqueue = {q}\n", RATES[tr.0], DELAYS[tr.1]);
        }
    }
    let mut tcp = Vec::new();
    let mut n = 0;
    for (src, dst, kind, start, bytes, class, count) in &c.flows {
        if src == dst {
            continue;
        }
        let start = ["0s", "1ms", "10ms"][*start];
        t += &format!("[[flows]]\nname = \"f{n}\"\nsrc = \"h{src}\"\ndst = \"h{dst}\"\nstart = \"{start}\"\nclass = {class}\ncount = {count}\n");
        if *kind == 7 {
            t += "kind = \"udp-cbr\"\ncbr = { rate = \"20Mbps\", packet_size = \"1000B\" }\nstop = \"15ms\"\n";
        } else {
            let (cc, profile) =
                [("reno", "rfc"), ("newreno", "rfc"), ("bic", "linux-2.6.16"), ("cubic", "linux-modern"), ("newreno", "linux-modern"), ("bic", "rfc"), ("cubic", "rfc")]
                    [*kind as usize];
            let sack = kind % 2 == 0;
            let ts = kind % 3 != 0;
            let mss = [536, 1460, 8960][(*kind as usize) % 3];
            t += &format!("[flows.tcp]\ncc = \"{cc}\"\nprofile = \"{profile}\"\nsack = {sack}\ntimestamps = {ts}\nmss = {mss}\n");
            if *bytes || c.flows_done {
                t.insert_str(t.rfind("[flows.tcp]").unwrap(), "bulk = { bytes = \"150KB\" }\n");
            }
            tcp.push(format!("f{n}"));
        }
        n += 1;
    }
    if n == 0 {
        return None;
    }
    if c.coordinator && tcp.len() >= 2 {
        t += &format!("[[coordinators]]\nkind = \"decp\"\nflows = [\"{}\", \"{}\"]\ninterval = \"5ms\"\n", tcp[0], tcp[1]);
    }
    t += "[trace]\nthroughput_interval = \"5ms\"\ncwnd = true\nevents = true\n";
    // A third of the cases count what some directions carry themselves (observed runs count
    // every direction): the first host's link both ways and, with an emulator, one of its
    // directions.
    if c.duration_ms.is_multiple_of(3) {
        let s = c.hosts[0].0;
        let mut links = vec![format!("\"h0->s{s}\""), format!("\"s{s}->h0\"")];
        if c.emulator.is_some() && c.switches > 1 {
            links.push("\"emu:s0->s1\"".into());
        }
        t += &format!("link_usage = {{ links = [{}], interval = \"{}us\" }}\n", links.join(", "), 500 + c.duration_ms * 10);
    }
    Some(t)
}

#[test]
fn random_scenarios_are_the_same_however_they_are_observed() {
    // Unoptimised builds run 20 cases (say so); --release or --profile ci run 600.
    let default = if cfg!(tcplab_unoptimized) { 20 } else { 600 };
    let cases: u32 = std::env::var("TCPLAB_RANDOM_SCENARIOS").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    if cases < 600 {
        eprintln!("random scenarios: {cases} cases (an unoptimised build or TCPLAB_RANDOM_SCENARIOS; 600 with --release)");
    }
    let mut runner = seeded::runner(cases);
    let (checked, rejected) = (std::cell::Cell::new(0u32), std::cell::Cell::new(0u32));
    let result = runner.run(&choices(), |c| {
        let Some(text) = render(&c) else { return Ok(()) };
        let sc = match parse_toml(&text) {
            Ok(sc) => sc,
            Err(e) => panic!("generated scenario does not parse: {e}\n{text}"),
        };
        match check_every_mode(&sc, c.duration_ms) {
            Ok(None) => checked.set(checked.get() + 1),
            Ok(Some(d)) => return Err(TestCaseError::fail(format!("{d}\n{text}"))),
            // Unroutable hosts and the like: the generator may make invalid scenarios.
            Err(_) => rejected.set(rejected.get() + 1),
        }
        Ok(())
    });
    let (checked, rejected) = (checked.get(), rejected.get());
    eprintln!("random scenarios: {checked} checked in every mode, {rejected} rejected by validation");
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(checked >= cases / 2, "too few valid scenarios: {checked} of {cases}");
}

/// Found by the generator: a merge flush admitted packets arriving after the stop (up to the
/// merge's lead beyond it), so the queue counters at the stop differed from an observed run.
#[test]
fn a_merge_admits_nothing_that_arrives_after_the_stop() {
    let text = r#"
name = "merge-at-stop"
[run]
duration = "51ms"
[[hosts]]
name = "h0"
[[hosts]]
name = "h1"
[[hosts]]
name = "h2"
[[switches]]
name = "s0"
[[links]]
between = ["h0", "s0"]
rate = "10Gbps"
queue = "40pkts"
[[links]]
between = ["h1", "s0"]
rate = "10Mbps"
delay = "10us"
queue = "3pkts"
[[links]]
between = ["h2", "s0"]
rate = "10Gbps"
delay = "10us"
queue = "3pkts"
[[flows]]
name = "f0"
src = "h0"
dst = "h1"
tcp = { cc = "reno", sack = true, timestamps = false, mss = 536 }
[[flows]]
name = "f1"
src = "h0"
dst = "h2"
tcp = { cc = "newreno", sack = false, timestamps = true, mss = 1460 }
"#;
    let sc = parse_toml(text).unwrap();
    assert_eq!(check_every_mode(&sc, 51).unwrap(), None);
}

/// A run that stops when its flows are done keeps pass-on and merges: at the stop, datagrams
/// of a fast UDP stream are still crossing two long pipes, admitted ahead into the ones beyond
/// the shared port (a merge of two access links, then a pass-on chain). The journal takes
/// those admissions back, so the counters at the stop are a hop-by-hop run's; without it the
/// far pipes would count packets a hop-by-hop run has not yet handed them.
#[test]
fn a_run_that_stops_when_its_flows_are_done_reads_its_counters_as_of_the_stop() {
    let text = r#"
name = "unknown-stop"
[run]
stop = "flows-done"
[[hosts]]
name = "a"
[[hosts]]
name = "c"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[switches]]
name = "s3"
[[links]]
between = ["a", "s1"]
rate = "1Gbps"
delay = "1ms"
[[links]]
between = ["c", "s1"]
rate = "1Gbps"
delay = "2ms"
[[links]]
between = ["s1", "s2"]
rate = "100Mbps"
delay = "20ms"
queue = "20pkts"
[[links]]
between = ["s2", "s3"]
rate = "90Mbps"
delay = "20ms"
queue = "10pkts"
[[links]]
between = ["s3", "b"]
rate = "1Gbps"
delay = "10ms"
[[flows]]
name = "bulk"
src = "a"
dst = "b"
bulk = { bytes = "20KB" }
tcp = { initial_cwnd = 20 }
[[flows]]
name = "cbr"
kind = "udp-cbr"
src = "c"
dst = "b"
cbr = { rate = "95Mbps", packet_size = "1000B" }
start = "250ms"
stop = "450ms"
"#;
    let sc = parse_toml(text).unwrap();
    let run = |hop_by_hop: bool| {
        let mut r = tcplab_core::Run::new(&sc, Some(3)).unwrap();
        if hop_by_hop {
            r.sim.hop_by_hop();
        }
        r.sim.run();
        let mut s = serde_json::to_value(r.sim.summary()).unwrap();
        let events = s["events"].take().as_u64().unwrap();
        (s, events, r.sim.packets_inside())
    };
    let (fast, fast_events, fast_inside) = run(false);
    let (reference, reference_events, reference_inside) = run(true);
    assert_eq!(fast["stop_reason"], "flows-done");
    // Packets were in flight at the stop, some of them dropped: the stop was not quiet.
    assert!(reference_inside > 10, "{reference_inside} packets inside at the stop");
    assert!(reference["packets"]["queue_drops"].as_u64().unwrap() > 0, "{}", reference["packets"]);
    eprintln!("events: {fast_events} with pass-on and merges, {reference_events} hop by hop");
    assert!(fast_events < reference_events, "pass-on and merges saved events: {fast_events} vs {reference_events}");
    assert_eq!(fast, reference);
    assert_eq!(fast_inside, reference_inside, "conservation: packets inside at the stop");
    assert_eq!(check_every_mode(&sc, 3).unwrap(), None);
}
