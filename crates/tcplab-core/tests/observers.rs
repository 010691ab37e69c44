//! Every shipped and bench scenario gives the same summary and traces with no observers, with
//! every link tapped and every queue traced, hop by hop, and advanced in pieces
//! (`tcplab_core::scenario::observers`).

use tcplab_core::scenario::observers::check_every_mode;
use tcplab_core::scenario::parse_toml;

mod shipped;
use shipped::shipped_scenarios;

#[test]
fn every_shipped_and_bench_scenario_is_the_same_however_it_is_observed() {
    let mut files = shipped_scenarios();
    assert!(files.len() >= 12, "found {} scenarios", files.len());
    if cfg!(tcplab_unoptimized) {
        eprintln!("unoptimised build: only the smoke scenario (run with --release or --profile ci for all {})", files.len());
        files.retain(|f| f.ends_with("smoke/smoke.toml"));
    }
    let mut failures = Vec::new();
    for f in &files {
        let mut sc = parse_toml(&std::fs::read_to_string(f).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        if let Some((_, secs, why)) = shipped::OBSERVED_FOR.iter().find(|(suffix, _, _)| f.ends_with(suffix)) {
            eprintln!("{}: observed over its first {secs} s ({why})", f.display());
            sc.run.duration = Some(tcplab_core::scenario::spec::Dur(tcplab_core::units::SimDuration::from_secs(*secs)));
        }
        let t = std::time::Instant::now();
        match check_every_mode(&sc, 1) {
            Ok(None) => eprintln!("{}: same in every mode ({:.1} s)", f.display(), t.elapsed().as_secs_f64()),
            Ok(Some(d)) => failures.push(format!("{}: {d}", f.display())),
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Counting what links carry (`trace.link_usage`) changes no result: the smoke scenario (a
/// bottleneck, an emulator, two TCP flows and a UDP stream), the dumbbell and study 004's
/// ATM path give the same summary and traces with and without it (on a queue, an emulator
/// direction, a reverse direction, an ATM port), and the usage trace itself is the same in
/// every mode (observed, hop by hop, stepped). Observed runs of every shipped scenario count
/// every direction as well (`with_every_observer`).
#[test]
fn link_usage_changes_no_result() {
    use tcplab_core::scenario::observers::{difference, run_in, Mode};
    use tcplab_core::scenario::spec::{Dur, LinkSelection, LinkUsageSpec};
    use tcplab_core::units::SimDuration;
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let cases: [(&str, &[&str], u64); 3] = [
        ("scenarios/smoke/smoke.toml", &["sw1->emu", "emu:sw1->sw2", "sw2->emu", "b->sw2"], 10),
        ("scenarios/dumbbell/dumbbell.toml", &["left->right"], 1),
        ("scenarios/p4_atm/atm.toml", &[], 2),
    ];
    for (rel, names, secs) in cases {
        let mut sc = parse_toml(&std::fs::read_to_string(root.join(rel)).unwrap()).unwrap();
        sc.run.duration = Some(Dur(SimDuration::from_secs(secs)));
        let plain = run_in(&sc, 1, Mode::ALL[0]).unwrap();
        let links = if names.is_empty() { LinkSelection::All("all".into()) } else { LinkSelection::Names(names.iter().map(|s| s.to_string()).collect()) };
        let mut counted = sc.clone();
        counted.trace.link_usage = Some(LinkUsageSpec { links, interval: Dur(SimDuration::from_millis(7)) });
        let with = run_in(&counted, 1, Mode::ALL[0]).unwrap();
        assert_eq!(difference(&plain, &with, false), None, "{rel}: counting changed the run");
        assert!(with.traces.keys().any(|(t, c, _)| t == "link_usage" && c == "bytes"), "{rel}: recorded");
        assert_eq!(check_every_mode(&counted, 1).unwrap(), None, "{rel}");
    }
}
