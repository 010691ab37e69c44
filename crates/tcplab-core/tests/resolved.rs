//! Every shipped and bench scenario's resolved scenario (`Run::resolved_toml`, what `tcplab
//! run --out` saves as `scenario.toml`) is a complete scenario file: it parses back to itself
//! (the same resolved scenario, TOML and hash) and runs identically.

use tcplab_core::scenario::parse_toml;
use tcplab_core::scenario::spec::Dur;
use tcplab_core::units::SimDuration;
use tcplab_core::Run;

mod shipped;

#[test]
fn resolved_scenarios_parse_back_to_themselves_and_run_identically() {
    let files = shipped::shipped_scenarios();
    assert!(files.len() >= 12, "found {} scenarios", files.len());
    // Every scenario is resolved; an unoptimised build runs only the smoke scenario.
    let run_for = if cfg!(tcplab_unoptimized) { 0 } else { 300 };
    for f in &files {
        let mut sc = parse_toml(&std::fs::read_to_string(f).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        // Shortened, but past the last flow's start (a flow that would never start is refused).
        let last_start = sc.flows.iter().filter_map(|fl| fl.start).map(|d| d.0).max().unwrap_or(SimDuration::ZERO);
        let short = SimDuration::from_millis(if f.ends_with("smoke/smoke.toml") { 300 } else { run_for.max(1) });
        sc.run.duration = Some(Dur(if last_start >= short { last_start + short } else { short }));
        let mut a = Run::new(&sc, None).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let text = a.resolved_toml();
        let mut b = Run::from_toml(&text, None).unwrap_or_else(|e| panic!("{}: the resolved scenario does not load: {e}\n{text}", f.display()));
        assert_eq!(b.resolved, a.resolved, "{}", f.display());
        assert_eq!(b.resolved_toml(), text, "{}", f.display());
        assert_eq!((&b.hash, b.seed), (&a.hash, a.seed), "{}", f.display());
        if run_for == 0 && !f.ends_with("smoke/smoke.toml") {
            continue;
        }
        a.sim.run();
        b.sim.run();
        assert_eq!(a.summary_json(), b.summary_json(), "{}", f.display());
        assert_eq!(a.sim.traces.digest(), b.sim.traces.digest(), "{}", f.display());
    }
}
