//! The packetdrill interpreter against the TCP model.
//!
//! Always: tcplab's own scripts (`tests/packetdrill/pass/` must pass; every script in
//! `tests/packetdrill/fail/` must fail at the line and with the kind its first comment names,
//! so the interpreter's checks can fail).
//!
//! With Linux's corpus (google/packetdrill `gtests/net/tcp/`, not in the repository): set
//! `TCPLAB_PACKETDRILL_DIR` to it, or put it at `.corpus/packetdrill/gtests/net/tcp` in the
//! repository (ignored by git). Every script of an in-scope directory of the triage
//! (`python/tcplab/conformance/packetdrill.toml`) must pass or be triaged, and no triaged
//! script may pass (the triage would be stale). Without the corpus the test says so and checks
//! only the own scripts.

use std::path::{Path, PathBuf};

use tcplab_core::packetdrill::{run_dir, run_file, FailureKind};

fn here() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn own_scripts_pass_and_broken_ones_fail_where_they_say() {
    let dir = here().join("tests/packetdrill");
    let passing = run_dir(&dir.join("pass"));
    assert!(passing.len() >= 3, "the own scripts are there");
    for r in &passing {
        assert!(r.outcome.is_ok(), "{}: {:?}", r.path.display(), r.outcome);
    }
    let failing = run_dir(&dir.join("fail"));
    assert!(failing.len() >= 3);
    for r in &failing {
        let text = std::fs::read_to_string(dir.join("fail").join(&r.path)).unwrap();
        let first = text.lines().next().unwrap_or("");
        let line: usize =
            first.split("line ").nth(1).and_then(|t| t.split(|c: char| !c.is_ascii_digit()).next()).and_then(|n| n.parse().ok()).expect("the first comment names the failing line");
        let f = r.outcome.as_ref().expect_err(&format!("{} must fail", r.path.display()));
        assert_eq!(f.line, line, "{}: {}", r.path.display(), f.message);
        let kind = match f.kind {
            FailureKind::Timing => "timing",
            FailureKind::Assert => "assertion",
            FailureKind::Packet => "packet",
            k => k.name(),
        };
        assert!(
            first.contains(kind) || (kind == "packet" && !first.contains("timing") && !first.contains("assertion")),
            "{}: failed with {:?}, its comment says `{first}`",
            r.path.display(),
            f.kind
        );
    }
}

/// The corpus directory, if there is one.
fn corpus() -> Option<PathBuf> {
    if let Ok(d) = std::env::var("TCPLAB_PACKETDRILL_DIR") {
        return Some(PathBuf::from(d));
    }
    let d = here().join("../../.corpus/packetdrill/gtests/net/tcp");
    d.is_dir().then_some(d)
}

/// The triage: in-scope directories and the scripts with a reason.
fn triage() -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(here().join("../../python/tcplab/conformance/packetdrill.toml")).expect("the triage file");
    let t: toml::Value = toml::from_str(&text).expect("the triage parses");
    let dirs = t["in_scope"]["dirs"].as_array().expect("in_scope.dirs").iter().map(|v| v.as_str().unwrap().to_string()).collect();
    let scripts = t["scripts"].as_table().expect("[scripts]").keys().cloned().collect();
    (dirs, scripts)
}

#[test]
fn linux_corpus_passes_or_is_triaged() {
    let Some(root) = corpus() else {
        eprintln!("packetdrill corpus not found: set TCPLAB_PACKETDRILL_DIR to google/packetdrill's gtests/net/tcp (or put it at .corpus/packetdrill/gtests/net/tcp); only tcplab's own scripts were run");
        return;
    };
    let (dirs, triaged) = triage();
    let mut unclassified = Vec::new();
    let mut stale = Vec::new();
    let (mut passed, mut total) = (0, 0);
    for d in &dirs {
        for path in tcplab_core::packetdrill::scripts(&root.join(d)) {
            let r = run_file(&path, Path::new(&root));
            let name = r.path.to_string_lossy().replace('\\', "/");
            total += 1;
            match (&r.outcome, triaged.contains(&name)) {
                (Ok(()), true) => stale.push(name),
                (Ok(()), false) => passed += 1,
                (Err(f), false) => unclassified.push(format!("{name}:{} [{}] {}", f.line, f.kind.name(), f.message)),
                (Err(_), true) => {}
            }
        }
    }
    eprintln!("packetdrill: {passed} of {total} in-scope scripts pass; the rest are triaged");
    assert!(total > 0, "no in-scope script under {}", root.display());
    assert!(unclassified.is_empty(), "failures not in the triage (possible tcplab bugs):\n{}", unclassified.join("\n"));
    assert!(stale.is_empty(), "triaged scripts that now pass (remove their entries): {stale:?}");
}
