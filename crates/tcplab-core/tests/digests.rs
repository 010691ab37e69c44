//! The results of every shipped and bench scenario are locked: `tests/digests.txt` holds, per
//! scenario, digests of its summary (event count aside: a pure speed-up may change it), its
//! traces and its capture files, and this test recomputes them. A change of digest must be a
//! deliberate commit that says what moved and why: rerun with `TCPLAB_UPDATE_DIGESTS=1` to
//! rewrite the file, and give the reason in the commit message.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use tcplab_core::engine::rng::fnv1a64;
use tcplab_core::scenario::parse_toml;
use tcplab_core::Run;

mod shipped;

const FILE: &str = "tests/digests.txt";

/// (summary, traces, captures) digests of `path` run with its own seed, as hex strings.
fn digests(path: &Path) -> [String; 3] {
    let sc = parse_toml(&std::fs::read_to_string(path).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let dir = std::env::temp_dir().join(format!("tcplab-digests-{}-{}", std::process::id(), fnv1a64(path.to_string_lossy().as_bytes())));
    std::fs::create_dir_all(&dir).unwrap();
    let mut run = Run::with_capture_dir(&sc, None, Some(&dir)).unwrap();
    run.sim.run();
    let mut s = serde_json::to_value(run.sim.summary()).unwrap();
    s["events"].take();
    let summary = fnv1a64(s.to_string().as_bytes());
    let traces = run.sim.traces.digest();
    drop(run); // closes the capture files
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut all = Vec::new();
    for f in &files {
        all.extend_from_slice(f.file_name().unwrap().as_encoded_bytes());
        all.extend(std::fs::read(f).unwrap());
    }
    std::fs::remove_dir_all(&dir).ok();
    [format!("{summary:016x}"), format!("{traces:016x}"), format!("{:016x}", fnv1a64(&all))]
}

#[test]
fn results_of_shipped_and_bench_scenarios_are_locked() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(FILE);
    let mut got = BTreeMap::new();
    let mut files = shipped::shipped_scenarios();
    if cfg!(tcplab_unoptimized) {
        eprintln!("unoptimised build: only the smoke scenario (run with --release or --profile ci for all {})", files.len());
        files.retain(|f| f.ends_with("smoke/smoke.toml"));
    }
    for f in &files {
        // Lexically, not canonicalized: `scenarios` is a symlink to python/tcplab/scenarios, and
        // the keys stay the paths the repository shows.
        let rel = f.strip_prefix(&root).unwrap().to_string_lossy().replace('\\', "/");
        got.insert(rel, digests(f));
    }
    let render = |m: &BTreeMap<String, [String; 3]>| -> String {
        let mut t = String::from("# scenario  summary  traces  captures (FNV-1a 64; see tests/digests.rs)\n");
        for (k, [a, b, c]) in m {
            t += &format!("{k} {a} {b} {c}\n");
        }
        t
    };
    if std::env::var("TCPLAB_UPDATE_DIGESTS").is_ok_and(|v| v == "1") {
        if cfg!(tcplab_unoptimized) {
            panic!("update the digests from an optimised build (it runs every scenario)");
        }
        std::fs::write(&file, render(&got)).unwrap();
        eprintln!("wrote {}", file.display());
        return;
    }
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    let want: BTreeMap<String, [String; 3]> = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let v: Vec<&str> = l.split_whitespace().collect();
            (v[0].to_string(), [v[1].to_string(), v[2].to_string(), v[3].to_string()])
        })
        .collect();
    let mut moved = Vec::new();
    for (k, g) in &got {
        match want.get(k) {
            Some(w) if w == g => {}
            Some(w) => {
                let what: Vec<&str> = ["summary", "traces", "captures"].iter().zip(w.iter().zip(g)).filter(|(_, (a, b))| a != b).map(|(n, _)| *n).collect();
                moved.push(format!("{k}: {} changed", what.join(", ")));
            }
            None => moved.push(format!("{k}: not in {FILE}")),
        }
    }
    if !cfg!(tcplab_unoptimized) {
        for k in want.keys().filter(|k| !got.contains_key(*k)) {
            moved.push(format!("{k}: in {FILE} but no longer shipped"));
        }
    }
    assert!(
        moved.is_empty(),
        "results moved:\n  {}\nIf this is deliberate, rerun with TCPLAB_UPDATE_DIGESTS=1 and say in the commit message what moved and why.",
        moved.join("\n  ")
    );
}
