//! A packetdrill interpreter of our own: it runs the Linux kernel's TCP test scripts
//! (google/packetdrill `gtests/net/tcp/`) against `tcp::Connection` directly, with no kernel,
//! tun device or real time. The script's clock drives the connection; inbound packets are
//! injected at their times; outbound packets, system-call results and `tcp_info` assertions are
//! compared with the script's, and the first difference is reported with its line, as
//! packetdrill reports it. The semantics follow packetdrill's (`run.c`, `run_packet.c`,
//! `run_system_call.c`, `code.c`): relative times from the end of the previous event,
//! tolerance max(`--tolerance_usecs`, 12.5 % of the gap), outbound segments aggregated up to
//! the script's length, TSval mapped from the first one seen, `%{ }%` blocks evaluated after
//! the script on the values read at their times. Where tcplab models less than Linux, the
//! difference is a failure the conformance report classifies (`tcplab conformance`).
//!
//! The corpus stays outside the product: `run_dir` takes any directory.

pub mod exec;
pub mod host;
pub mod python;
pub mod script;

use std::path::{Path, PathBuf};

pub use exec::{Failure, FailureKind};

/// One script's result.
#[derive(Clone, Debug)]
pub struct ScriptResult {
    /// Path of the script, relative to the directory run.
    pub path: PathBuf,
    /// `Ok` when every event matched; else the first difference.
    pub outcome: Result<(), Failure>,
    /// Outbound packets that differed from the script only in PSH (their lines).
    pub psh_differences: Vec<usize>,
    /// Mechanisms the script's configuration asks for that tcplab does not model.
    pub not_modelled: Vec<String>,
}

/// Run one script's text; `defaults` stand for the corpus's `defaults.sh` when its blocks
/// name it.
pub fn run_text(text: &str) -> (Result<(), Failure>, Vec<usize>, Vec<String>) {
    let (r, psh, nm, _) = run_text_logged(text, false);
    (r, psh, nm)
}

/// `run_text`, with the interpreter's event log when `verbose`.
pub fn run_text_logged(text: &str, verbose: bool) -> (Result<(), Failure>, Vec<usize>, Vec<String>, Vec<String>) {
    let script = match script::parse(text) {
        Ok(s) => s,
        Err(e) => return (Err(Failure { line: e.line, kind: FailureKind::Unsupported, message: format!("syntax: {}", e.reason) }), vec![], vec![], vec![]),
    };
    // Untimed shell blocks configure the host: the first is the setup, a last one after
    // the events is cleanup (it restores sysctls).
    let host = match host::Host::configure(&script.shell) {
        Ok(h) => h,
        Err(e) => return (Err(Failure { line: 0, kind: FailureKind::Unsupported, message: e.0 }), vec![], vec![], vec![]),
    };
    let not_modelled = host.not_modelled.clone();
    let mut ex = match exec::Exec::new(&script, host) {
        Ok(x) => x,
        Err(f) => return (Err(f), vec![], not_modelled, vec![]),
    };
    if verbose {
        ex.log = Some(Vec::new());
    }
    let r = ex.run();
    (r, ex.psh_differences.clone(), not_modelled, ex.log.take().unwrap_or_default())
}

/// Run one script file.
pub fn run_file(path: &Path, root: &Path) -> ScriptResult {
    let rel = path.strip_prefix(root).unwrap_or(path).to_path_buf();
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let (outcome, psh_differences, not_modelled) = run_text(&text);
            ScriptResult { path: rel, outcome, psh_differences, not_modelled }
        }
        Err(e) => ScriptResult {
            path: rel,
            outcome: Err(Failure { line: 0, kind: FailureKind::Unsupported, message: format!("unreadable: {e}") }),
            psh_differences: vec![],
            not_modelled: vec![],
        },
    }
}

/// Every `.pkt` file under `dir`, sorted by path.
pub fn scripts(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "pkt") {
                v.push(p);
            }
        }
    }
    v.sort();
    v
}

/// Run every script under `dir`.
pub fn run_dir(dir: &Path) -> Vec<ScriptResult> {
    scripts(dir).iter().map(|p| run_file(p, dir)).collect()
}
