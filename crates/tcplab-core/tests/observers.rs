//! Every shipped and bench scenario gives the same summary and traces with no observers, with
//! every link tapped and every queue traced, hop by hop, and advanced in pieces
//! (`tcplab_core::scenario::observers`).

use std::path::PathBuf;

use tcplab_core::scenario::observers::check_every_mode;
use tcplab_core::scenario::parse_toml;

/// Every scenario file shipped in `scenarios/` and `benches/ns3/tcplab_scenarios/` (sweep
/// files, which name a base scenario, are skipped).
pub fn shipped_scenarios() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in ["scenarios", "benches/ns3/tcplab_scenarios"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("readable").map(|e| e.expect("entry").path()) {
                if e.is_dir() {
                    stack.push(e);
                } else if e.extension().is_some_and(|x| x == "toml") && !std::fs::read_to_string(&e).expect("readable").contains("\nbase =") && !std::fs::read_to_string(&e).expect("readable").starts_with("base =") {
                    out.push(e);
                }
            }
        }
    }
    out.sort();
    out
}

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
        let sc = parse_toml(&std::fs::read_to_string(f).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let t = std::time::Instant::now();
        match check_every_mode(&sc, 1) {
            Ok(None) => eprintln!("{}: same in every mode ({:.1} s)", f.display(), t.elapsed().as_secs_f64()),
            Ok(Some(d)) => failures.push(format!("{}: {d}", f.display())),
            Err(e) => failures.push(format!("{}: {e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
