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
