//! The shipped and bench scenarios, for the whole-run tests (observers, digests).

use std::path::PathBuf;

/// Every scenario file shipped in `scenarios/` and `benches/ns3/tcplab_scenarios/` (sweep
/// files, which name a base scenario, are skipped), sorted.
pub fn shipped_scenarios() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut out = Vec::new();
    for dir in ["scenarios", "benches/ns3/tcplab_scenarios"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("readable").map(|e| e.expect("entry").path()) {
                if e.is_dir() {
                    stack.push(e);
                } else if e.extension().is_some_and(|x| x == "toml") && !is_sweep(&e) {
                    out.push(e);
                }
            }
        }
    }
    out.sort();
    out
}

/// A sweep file names its base scenario in a top-level `base` key.
fn is_sweep(path: &std::path::Path) -> bool {
    let text = std::fs::read_to_string(path).expect("readable");
    text.parse::<toml::Table>().is_ok_and(|t| t.contains_key("base"))
}

/// Shipped scenarios too long to run whole in every observation mode, with the simulated
/// seconds the observers test runs them for: (path suffix, seconds, why). Their mechanisms run
/// whole in the shorter scenarios of the same study, and the digests test runs them whole.
#[allow(dead_code)] // read by observers.rs only
pub const OBSERVED_FOR: &[(&str, u64, &str)] = &[
    ("p2_data_reservoir/sc2002.toml", 60, "51 GB over 26 streams (~800 s simulated, ~35 M data packets); fla.toml runs the same applications and path whole"),
    ("p2_data_reservoir/sc2002_shared.toml", 30, "150 s of 26 streams beside 26 bulk flows (~11 GB); fla.toml runs the same applications and path whole"),
];
