//! Fuzzing the core's own TOML loader (the Rust API reads TOML itself; the Python front's
//! loader is fuzzed by tests/test_fuzz_loader.py): shipped scenarios, mutated line by line and
//! value by value, must either load, build and run (for at most 20 ms of simulated time) or
//! fail with a `ScenarioError` — never panic or hang.
//!
//! `TCPLAB_FUZZ_CASES=N` runs N cases instead of the default (a longer local run), and
//! `PROPTEST_RNG_SEED=N` another case set. Seeded runs found a udp-cbr rate far above its link
//! (a seeming hang) and a reason lost to the excerpt filter; both are now regression cases in `scenario::tests::limits_are_field_errors_naming_the_limit`.

use proptest::prelude::*;

use tcplab_core::scenario::parse_toml;
use tcplab_core::scenario::spec::Dur;
use tcplab_core::units::SimDuration;
use tcplab_core::Run;

mod seeded;
mod shipped;

/// Values a mutation may put in place of another.
const VALUES: &[&str] = &[
    "0",
    "-1",
    "1",
    "3",
    "65536",
    "9223372036854775807",
    "9223372036854775808",
    "1e400",
    "nan",
    "inf",
    "-inf",
    "0.5",
    "1.0",
    "true",
    "false",
    "\"\"",
    "\"0s\"",
    "\"1ps\"",
    "\"1ns\"",
    "\"1e7s\"",
    "\"1000000s\"",
    "\"-5ms\"",
    "\"0bps\"",
    "\"1bps\"",
    "\"1e30B\"",
    "\"0pkts\"",
    "\"1pkts\"",
    "\"unlimited\"",
    "\"40pkts\"",
    "\"nope\"",
    "\"idle\"",
    "\"flows-done\"",
    "\"udp-cbr\"",
    "\"both\"",
    "[]",
    "[1, 2]",
    "{}",
    "{ classes = [] }",
    "1979-05-27T07:32:00Z",
    "\"a\"",
    "\"sw1\"",
    "[\"a\", \"a\"]",
];

/// Keys a mutation may add.
const KEYS: &[&str] = &[
    "count",
    "bytes",
    "bulk",
    "cbr",
    "block_read",
    "reservoir",
    "servers",
    "disks",
    "file",
    "block",
    "command_window",
    "stop",
    "start",
    "rate",
    "delay",
    "loss",
    "queue",
    "reorder",
    "reorder_delay",
    "duplicate",
    "mss",
    "cc",
    "interval",
    "throughput_interval",
    "seed",
    "duration",
    "class",
    "jitter",
    "start_skew",
    "resolution",
    "direction",
    "framing",
    "x",
];

/// One mutation of a scenario's text, by line.
#[derive(Clone, Debug)]
enum Mutation {
    DeleteLine(usize),
    DuplicateLine(usize),
    ReplaceValue(usize, usize),
    AddKey(usize, usize, usize),
    Truncate(usize),
    InsertByte(usize, u8),
    /// Scale the number in a line (`key = 12`, `key = "150ms"`) by `FACTORS[i]`, keeping its
    /// type and unit, so the value reaches validation.
    Scale(usize, usize),
}

const FACTORS: &[f64] = &[0.0, 1e-12, 1e-6, 1e-3, 0.5, 2.0, 1e3, 1e6, 1e9, 1e15];

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::DeleteLine),
        any::<usize>().prop_map(Mutation::DuplicateLine),
        (any::<usize>(), 0..VALUES.len()).prop_map(|(l, v)| Mutation::ReplaceValue(l, v)),
        (any::<usize>(), 0..KEYS.len(), 0..VALUES.len()).prop_map(|(l, k, v)| Mutation::AddKey(l, k, v)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(p, b)| Mutation::InsertByte(p, b)),
        (any::<usize>(), 0..FACTORS.len()).prop_map(|(l, f)| Mutation::Scale(l, f)),
        (any::<usize>(), 0..FACTORS.len()).prop_map(|(l, f)| Mutation::Scale(l, f)),
    ]
}

fn apply(text: &str, m: &Mutation) -> String {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let n = lines.len().max(1);
    match *m {
        Mutation::DeleteLine(l) => {
            if !lines.is_empty() {
                lines.remove(l % n);
            }
        }
        Mutation::DuplicateLine(l) => {
            if let Some(x) = lines.get(l % n).cloned() {
                lines.insert(l % n, x);
            }
        }
        Mutation::ReplaceValue(l, v) => {
            if let Some(line) = lines.get_mut(l % n) {
                if let Some((k, _)) = line.split_once('=') {
                    *line = format!("{k}= {}", VALUES[v]);
                }
            }
        }
        Mutation::AddKey(l, k, v) => lines.insert(l % (lines.len() + 1), format!("{} = {}", KEYS[k], VALUES[v])),
        Mutation::Truncate(p) => {
            let t = lines.join("\n");
            let mut cut = p % (t.len() + 1);
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            return t[..cut].to_string();
        }
        Mutation::Scale(l, f) => {
            // The l-th line (counting only lines that hold a number) gets its number scaled.
            let numeric: Vec<usize> =
                (0..lines.len()).filter(|&i| lines[i].split_once('=').is_some_and(|(_, v)| v.trim().trim_start_matches('"').starts_with(|c: char| c.is_ascii_digit()))).collect();
            if let Some(&i) = numeric.get(l % numeric.len().max(1)) {
                let (k, v) = lines[i].split_once('=').expect("numeric lines have a value");
                let v = v.trim();
                let quoted = v.starts_with('"');
                let body = v.trim_matches('"');
                let end = body.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == 'e' || c == '-')).unwrap_or(body.len());
                if let Ok(x) = body[..end].parse::<f64>() {
                    let y = x * FACTORS[f];
                    let num = if quoted || y.fract() != 0.0 { format!("{y}") } else { format!("{}", y as i64) };
                    let q = if quoted { "\"" } else { "" };
                    lines[i] = format!("{k}= {q}{num}{}{q}", &body[end..]);
                }
            }
        }
        Mutation::InsertByte(p, b) => {
            let mut t = lines.join("\n").into_bytes();
            let at = p % (t.len() + 1);
            t.insert(at, b);
            return String::from_utf8_lossy(&t).into_owned();
        }
    }
    lines.join("\n")
}

#[test]
fn mutated_scenarios_load_build_and_run_or_fail_with_a_field_error() {
    let texts: Vec<String> = shipped::shipped_scenarios().iter().map(|p| std::fs::read_to_string(p).unwrap()).collect();
    let default = if cfg!(tcplab_unoptimized) { 200 } else { 6000 };
    let cases: u32 = std::env::var("TCPLAB_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
    let mut runner = seeded::runner(cases);
    let tally = std::cell::Cell::new([0u32; 3]); // parse errors, build errors, runs
                                                 // A watchdog prints a case that has run for more than 10 s of wall time while it runs, so
                                                 // a hang names its input (a report, not a verdict: timing is not asserted).
    let current = std::sync::Arc::new(std::sync::Mutex::new((0u64, String::new(), std::time::Instant::now())));
    let watched = std::sync::Arc::clone(&current);
    std::thread::spawn(move || {
        let mut reported = u64::MAX;
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
            let c = watched.lock().unwrap();
            if c.0 != reported && c.2.elapsed().as_secs() >= 10 {
                eprintln!("case {} running for {} s:\n{}\n----", c.0, c.2.elapsed().as_secs(), c.1);
                reported = c.0;
            }
        }
    });
    let result = runner.run(&(0..texts.len(), prop::collection::vec(mutation(), 1..4)), |(i, ms)| {
        let text = ms.iter().fold(texts[i].clone(), |t, m| apply(&t, m));
        let started = std::time::Instant::now();
        {
            let mut c = current.lock().unwrap();
            *c = (c.0 + 1, text.clone(), started);
        }
        let mut t = tally.get();
        match parse_toml(&text) {
            Err(e) => {
                prop_assert!(!e.reason.is_empty(), "an error says why: {e:?} for\n{text}");
                t[0] += 1;
            }
            Ok(mut sc) => {
                // Bound the run: at most 20 ms of simulated time.
                let cap = SimDuration::from_millis(20);
                sc.run.duration = Some(Dur(sc.run.duration.map_or(cap, |d| d.0.min(cap))));
                match Run::new(&sc, None) {
                    Err(e) => {
                        prop_assert!(!e.reason.is_empty(), "an error says why: {e:?} for\n{text}");
                        t[1] += 1;
                    }
                    Ok(mut run) => {
                        run.sim.run();
                        let _ = run.summary_json();
                        let _ = run.resolved_toml();
                        t[2] += 1;
                    }
                }
            }
        }
        tally.set(t);
        // Report (not judge) slow cases: a hang would show here first.
        if started.elapsed().as_secs_f64() > 2.0 {
            eprintln!("slow case ({:.1} s):\n{text}\n----", started.elapsed().as_secs_f64());
        }
        Ok(())
    });
    let [p, b, r] = tally.get();
    eprintln!("fuzzed {} cases: {p} refused by the parser, {b} by validation, {r} built and ran", p + b + r);
    if let Err(e) = result {
        panic!("{e}");
    }
    assert!(r > cases / 10 && b > cases / 100, "the mutations must reach both validation and runs: {p}/{b}/{r}");
}
