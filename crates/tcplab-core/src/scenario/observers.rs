//! Observing a run must not change it: a scenario run as it is, with every link tapped, every
//! queue traced and every link direction's usage counted, hop by hop (`Simulation::hop_by_hop`), and stepped in pieces gives the
//! same results and traces. Used by the tests beside it and by `tests/observers.rs`.

use std::collections::BTreeMap;

use crate::scenario::spec::{Dur, LinkSelection, LinkUsageSpec, QueueSelection, Scenario, StopSpec, TapSpec};
use crate::scenario::{Run, ScenarioError};
use crate::units::{SimDuration, SimTime};

/// How a run is executed and observed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mode {
    /// Tap every link (both directions, `capture` trace), trace every queue and count what
    /// every link and emulator direction carries (`link_usage`, unless the scenario has its
    /// own).
    pub observed: bool,
    /// One event per hop: no pass-on, no merges.
    pub hop_by_hop: bool,
    /// Advance in pieces of this many picoseconds instead of in one go.
    pub step_ps: Option<u64>,
}

impl Mode {
    /// The modes compared: as given, observed, hop by hop, both, and stepped.
    pub const ALL: [Mode; 5] = [
        Mode { observed: false, hop_by_hop: false, step_ps: None },
        Mode { observed: true, hop_by_hop: false, step_ps: None },
        Mode { observed: false, hop_by_hop: true, step_ps: None },
        Mode { observed: true, hop_by_hop: true, step_ps: None },
        Mode { observed: false, hop_by_hop: false, step_ps: Some(37_123_457_000) },
    ];
}

/// `sc` with a tap (no file, `capture` trace) on every link, every queue traced and, unless it
/// counts some already, the usage of every link and emulator direction counted every
/// `USAGE_INTERVAL` (not with `stop = "idle"` and no duration, which it would keep going).
pub fn with_every_observer(sc: &Scenario) -> Scenario {
    let mut sc = sc.clone();
    let taken: Vec<String> = sc.taps.iter().map(|t| t.name.clone()).collect();
    for (i, l) in sc.links.iter().enumerate() {
        if sc.taps.iter().any(|t| (t.link == l.between || t.link == [l.between[1].clone(), l.between[0].clone()]) && t.direction.as_deref().is_none_or(|d| d == "both")) {
            continue;
        }
        let mut name = format!("observe-{i}");
        while taken.contains(&name) {
            name.push('_');
        }
        sc.taps.push(TapSpec { name, link: l.between.clone(), direction: None, resolution: None, pcap: Some(false), trace: Some(true), epoch: None });
    }
    for t in &mut sc.taps {
        t.pcap = Some(false);
        t.trace = Some(true);
    }
    sc.trace.queues = QueueSelection::All("all".into());
    let endless = sc.run.duration.is_none() && sc.run.stop == Some(StopSpec::Idle);
    if sc.trace.link_usage.is_none() && !endless {
        sc.trace.link_usage = Some(LinkUsageSpec { links: LinkSelection::All("all".into()), interval: Dur(USAGE_INTERVAL) });
    }
    sc
}

/// The interval of the `link_usage` trace an observed run adds.
pub const USAGE_INTERVAL: SimDuration = SimDuration(1_000_000_000);

/// What a run produced that must not depend on the mode: the summary without the event
/// count, and a digest of every trace column (for the `queue`, `capture` and `link_usage`
/// traces, one per queue, tap or watched pipe, so that runs observing more can be compared on
/// what both observe).
#[derive(Clone, Debug, PartialEq)]
pub struct Outcome {
    /// The summary as JSON, `events` and `traces_stopped_s` removed.
    pub summary: serde_json::Value,
    /// When a trace reached its budget (observed runs record more traces, so this is compared
    /// between runs observed alike).
    pub traces_stopped: serde_json::Value,
    /// (trace, column, queue or tap id or `u32::MAX`) → FNV-1a 64 of the column's values.
    pub traces: BTreeMap<(String, String, u32), u64>,
    /// Events processed (differs between modes by design).
    pub events: u64,
}

/// FNV-1a 64, fed incrementally.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn feed(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 ^= *b as u64;
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// Digests of every trace column, split by queue or tap for the traces that have one.
fn trace_digests(traces: &crate::trace::Traces) -> BTreeMap<(String, String, u32), u64> {
    use crate::trace::Column;
    let mut out = BTreeMap::new();
    for (name, cols) in traces.tables() {
        let split = match name {
            "queue" => cols.iter().find(|(c, _)| *c == "queue"),
            "capture" => cols.iter().find(|(c, _)| *c == "tap"),
            "link_usage" => cols.iter().find(|(c, _)| *c == "pipe"),
            _ => None,
        };
        let split: Option<&[u32]> = split.and_then(|(_, c)| if let Column::U32(v) = c { Some(*v) } else { None });
        for (c, col) in &cols {
            let mut h: BTreeMap<u32, Fnv> = BTreeMap::new();
            let n = col.len();
            for i in 0..n {
                let id = split.map_or(u32::MAX, |s| s[i]);
                let f = h.entry(id).or_insert(Fnv(0xcbf2_9ce4_8422_2325));
                match col {
                    Column::F64(v) => f.feed(&v[i].to_le_bytes()),
                    Column::U64(v) => f.feed(&v[i].to_le_bytes()),
                    Column::U32(v) => f.feed(&v[i].to_le_bytes()),
                }
            }
            if n == 0 && split.is_none() {
                h.insert(u32::MAX, Fnv(0));
            }
            for (id, f) in h {
                out.insert((name.to_string(), c.to_string(), id), f.0);
            }
        }
    }
    out
}

/// Run `sc` with `seed` in `mode`.
pub fn run_in(sc: &Scenario, seed: u64, mode: Mode) -> Result<Outcome, ScenarioError> {
    let sc = if mode.observed { with_every_observer(sc) } else { sc.clone() };
    let mut run = Run::new(&sc, Some(seed))?;
    if mode.hop_by_hop {
        run.sim.hop_by_hop();
    }
    match mode.step_ps {
        Some(step) => {
            let mut t = SimTime::ZERO;
            while !run.sim.finished() {
                t += SimDuration(step);
                run.sim.advance(t);
            }
            run.sim.flush_captures();
        }
        None => run.sim.run(),
    }
    let mut summary = serde_json::to_value(run.sim.summary()).expect("summary serializes");
    let events = summary["events"].take().as_u64().unwrap_or(0);
    let traces_stopped = summary.as_object_mut().and_then(|m| m.remove("traces_stopped_s")).unwrap_or_default();
    Ok(Outcome { summary, traces_stopped, traces: trace_digests(&run.sim.traces), events })
}

/// The first difference between two outcomes. Unless `all_traces`, only the traces (and the
/// queues and taps of the `queue` and `capture` traces) that `a` records are compared.
pub fn difference(a: &Outcome, b: &Outcome, all_traces: bool) -> Option<String> {
    if a.summary != b.summary {
        let (sa, sb) = (a.summary.to_string(), b.summary.to_string());
        let at = sa.bytes().zip(sb.bytes()).position(|(x, y)| x != y).unwrap_or(0);
        let from = at.saturating_sub(120);
        return Some(format!("summaries differ at byte {at}:\n  {}\n  {}", &sa[from..(at + 80).min(sa.len())], &sb[from..(at + 80).min(sb.len())]));
    }
    for (k, d) in &a.traces {
        if b.traces.get(k) != Some(d) {
            let (t, c, id) = k;
            return Some(format!("trace {t}.{c} (queue/tap {id}) differs"));
        }
    }
    if all_traces && a.traces.len() != b.traces.len() {
        return Some("the runs record different traces".into());
    }
    if all_traces && a.traces_stopped != b.traces_stopped {
        return Some(format!("the traces stopped recording at {} and {}", a.traces_stopped, b.traces_stopped));
    }
    None
}

/// Run `sc` in every mode of `Mode::ALL` and return the first disagreement, if any.
pub fn check_every_mode(sc: &Scenario, seed: u64) -> Result<Option<String>, ScenarioError> {
    let outcomes: Vec<(Mode, Outcome)> = Mode::ALL.iter().map(|&m| run_in(sc, seed, m).map(|o| (m, o))).collect::<Result<_, _>>()?;
    let (base_mode, base) = &outcomes[0];
    for (mode, o) in &outcomes[1..] {
        // Observed runs record more traces; compare those only between observed runs.
        let all = mode.observed == base_mode.observed;
        if let Some(d) = difference(base, o, all) {
            return Ok(Some(format!("{base_mode:?} vs {mode:?}: {d}")));
        }
    }
    let observed: Vec<&Outcome> = outcomes.iter().filter(|(m, _)| m.observed).map(|(_, o)| o).collect();
    for o in &observed[1..] {
        if let Some(d) = difference(observed[0], o, true) {
            return Ok(Some(format!("observed runs: {d}")));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_toml;

    fn scenario(rel: &str) -> Scenario {
        let path = format!("{}/../../{rel}", env!("CARGO_MANIFEST_DIR"));
        parse_toml(&std::fs::read_to_string(&path).expect("shipped scenario")).expect("valid")
    }

    /// The dumbbell of issue 16: four identical flows over round-number links, where a tap on
    /// one access link used to permute the flows' results.
    #[test]
    fn a_tap_does_not_change_the_dumbbell() {
        let mut sc = scenario("scenarios/dumbbell/dumbbell.toml");
        sc.run.duration = Some(crate::scenario::spec::Dur(SimDuration::from_millis(1000)));
        let plain = run_in(&sc, 1, Mode::ALL[0]).unwrap();
        let mut one_tap = sc.clone();
        one_tap.taps.push(TapSpec { name: "t".into(), link: ["s0".into(), "left".into()], direction: None, resolution: None, pcap: Some(false), trace: Some(false), epoch: None });
        let tapped = run_in(&one_tap, 1, Mode::ALL[0]).unwrap();
        assert_eq!(difference(&plain, &tapped, true), None);
        assert_eq!(check_every_mode(&sc, 1).unwrap(), None);
    }

    #[test]
    fn the_smoke_scenario_is_the_same_in_every_mode() {
        let sc = scenario("scenarios/smoke/smoke.toml");
        for seed in [1, 2, 3] {
            assert_eq!(check_every_mode(&sc, seed).unwrap(), None, "seed {seed}");
        }
    }
}
