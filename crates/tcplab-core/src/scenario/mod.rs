//! Scenarios: parse (TOML or JSON) with field paths in every error (`spec`), resolve every
//! default and validate (`resolve`, one module per section), and build a [`Simulation`]
//! (`build`). The only module that knows every other one.

pub mod build;
pub mod observers;
pub mod resolve;
pub mod spec;

use std::fmt;

use serde::Serialize;

use crate::engine::rng::fnv1a64;
use crate::sim::{event_codes, milestone_codes, LinkUsageInfo, RunSummary, Simulation};

pub use resolve::ResolvedScenario;
pub use spec::Scenario;

/// An error a scenario author can cause: the path of the offending field and the reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScenarioError {
    /// Dotted path with indices, e.g. `flows[1].tcp.mss` (empty for the whole document).
    pub path: String,
    /// What is wrong.
    pub reason: String,
}

impl ScenarioError {
    /// An error at `path`.
    pub fn new(path: impl Into<String>, reason: impl Into<String>) -> Self {
        ScenarioError { path: path.into(), reason: reason.into() }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() || self.path == "." {
            write!(f, "{}", self.reason)
        } else {
            write!(f, "{}: {}", self.path, self.reason)
        }
    }
}

impl std::error::Error for ScenarioError {}

fn from_path_error<E: fmt::Display>(e: serde_path_to_error::Error<E>) -> ScenarioError {
    let path = e.path().to_string();
    // toml wraps the message in a source excerpt ("TOML parse error at…", "17 | key", "^^^");
    // keep the message lines only.
    let text = e.inner().to_string();
    let reason = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("TOML parse error") && !is_excerpt_line(l)).collect::<Vec<_>>().join(" ");
    // serde_json appends the position in the JSON text, meaningless to a TOML or dict author.
    let reason = match reason.rfind(" at line ") {
        Some(i) if reason[i..].contains(" column ") => reason[..i].to_string(),
        _ => reason,
    };
    let path = if path == "?" || path == "." { String::new() } else { path };
    if let Some(moved) = moved_key(&path) {
        return ScenarioError::new(path, moved);
    }
    // With no field to name (a syntax error, a number out of range), say where in the text.
    let reason = match text.lines().next().and_then(|l| l.strip_prefix("TOML parse error at ")) {
        Some(at) if path.is_empty() => format!("{at}: {reason}"),
        _ => reason,
    };
    ScenarioError::new(path, reason)
}

/// Where a key that moved now lives: a key of a `tcp` table (`spec::MOVED_TCP_KEYS`; for the
/// path `flows[2].tcp.bic_beta`, "moved to [flows.tcp.bic] beta") or of a flow
/// (`spec::MOVED_FLOW_KEYS`; `flows[0].bytes` moved to the `bulk` table).
fn moved_key(path: &str) -> Option<String> {
    let (parent, key) = path.rsplit_once('.')?;
    // A `[[flows]]` key that moved into the table of its kind: `flows[0].bytes`.
    if parent.strip_prefix("flows[").and_then(|r| r.strip_suffix(']')).is_some_and(|i| i.bytes().all(|c| c.is_ascii_digit())) {
        let (_, table) = spec::MOVED_FLOW_KEYS.iter().find(|(old, _)| *old == key)?;
        return Some(format!("moved to the flow's `{table}` table: {table} = {{ {key} = … }} or [flows.{table}] {key} = … (docs/scenario-format.md)"));
    }
    if parent != "tcp" && !parent.ends_with(".tcp") {
        return None;
    }
    let (_, table, new) = spec::MOVED_TCP_KEYS.iter().find(|(old, ..)| *old == key)?;
    // The TOML table header: the path without its array indices.
    let mut header = String::new();
    let mut in_index = false;
    for c in parent.chars() {
        match c {
            '[' => in_index = true,
            ']' => in_index = false,
            c if !in_index => header.push(c),
            _ => {}
        }
    }
    Some(format!("moved to [{header}.{table}] {new} (docs/tcp-settings.md)"))
}

/// A line of toml's source excerpt: `17 | key = …`, a bare `|`, or `|   ^^^` (a message may
/// itself hold a `|`, quoting the user's value).
fn is_excerpt_line(l: &str) -> bool {
    l.trim_start_matches(|c: char| c.is_ascii_digit()).trim_start().starts_with('|')
}

/// Parse a scenario from TOML text.
pub fn parse_toml(text: &str) -> Result<Scenario, ScenarioError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(from_path_error)
}

/// Parse a scenario from JSON text (the form Python dicts cross the boundary in).
pub fn parse_json(text: &str) -> Result<Scenario, ScenarioError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let sc = serde_path_to_error::deserialize(&mut de).map_err(from_path_error)?;
    de.end().map_err(|e| ScenarioError::new("", e.to_string()))?;
    Ok(sc)
}

/// The resolved scenario as JSON without `run.seed`: what the scenario hash digests.
fn canonical_without_seed(r: &ResolvedScenario) -> String {
    let mut v = serde_json::to_value(r).expect("resolved scenarios always serialize");
    if let Some(run) = v.get_mut("run").and_then(|r| r.as_object_mut()) {
        run.remove("seed");
    }
    v.to_string()
}

/// A built run: the simulation, its fully resolved scenario, the seed and the scenario hash.
#[derive(Debug)]
pub struct Run {
    /// The simulation.
    pub sim: Simulation,
    /// The scenario with every default filled in (and `run.seed` set to the seed used).
    pub resolved: ResolvedScenario,
    /// Master seed.
    pub seed: u64,
    /// FNV-1a 64 of the canonical resolved scenario without its seed, as 16 hex digits.
    pub hash: String,
}

impl Run {
    /// Validate and build `sc`. `seed` overrides `run.seed` (default 1). No capture files.
    pub fn new(sc: &Scenario, seed: Option<u64>) -> Result<Run, ScenarioError> {
        Run::with_capture_dir(sc, seed, None)
    }

    /// As `new`, with taps writing their pcapng files into `capture_dir`.
    pub fn with_capture_dir(sc: &Scenario, seed: Option<u64>, capture_dir: Option<&std::path::Path>) -> Result<Run, ScenarioError> {
        let mut resolved = resolve::resolve(sc)?;
        let seed = seed.unwrap_or(resolved.run.seed);
        if seed > resolve::MAX_SEED {
            return Err(ScenarioError::new("run.seed", format!("must be an integer in [0, 2^63), got {seed}")));
        }
        resolved.run.seed = seed;
        let hash = format!("{:016x}", fnv1a64(canonical_without_seed(&resolved).as_bytes()));
        let sim = build::build(&resolved, seed, capture_dir)?;
        Ok(Run { sim, resolved, seed, hash })
    }

    /// Parse TOML and build.
    pub fn from_toml(text: &str, seed: Option<u64>) -> Result<Run, ScenarioError> {
        Run::new(&parse_toml(text)?, seed)
    }

    /// Parse JSON and build.
    pub fn from_json(text: &str, seed: Option<u64>) -> Result<Run, ScenarioError> {
        Run::new(&parse_json(text)?, seed)
    }

    /// The resolved scenario as TOML.
    pub fn resolved_toml(&self) -> String {
        toml::to_string(&self.resolved).expect("scenario types always serialize to TOML")
    }

    /// The summary as JSON (see docs/core-interface.md).
    pub fn summary_json(&self) -> String {
        #[derive(Serialize)]
        struct Full<'a> {
            version: &'static str,
            seed: u64,
            scenario_hash: &'a str,
            scenario_name: &'a str,
            #[serde(flatten)]
            run: RunSummary,
            #[serde(skip_serializing_if = "Option::is_none")]
            link_usage: Option<LinkUsageInfo>,
            /// With the `cc_state` trace: `values`, each TCP flow's value names by flow id.
            #[serde(skip_serializing_if = "Option::is_none")]
            cc_state: Option<serde_json::Value>,
            trace_codes: serde_json::Value,
        }
        let names = |codes: Vec<(u32, &'static str)>| -> serde_json::Map<String, serde_json::Value> {
            codes.into_iter().map(|(c, n)| (c.to_string(), serde_json::Value::from(n))).collect()
        };
        let link_usage = self.sim.observers.usage.describe(&self.sim.fabric.pipes);
        let flags = crate::tcp::RangeFlag::ALL.iter().map(|f| (*f as u32, f.name())).collect();
        let mut trace_codes = serde_json::json!({ "events.kind": names(event_codes()), "milestones.kind": names(milestone_codes()), "measurements.flag": names(flags) });
        let cc_state = self.sim.traces.cc_state.as_ref().map(|_| {
            let values: serde_json::Map<_, _> = self.sim.cc_state_names().into_iter().map(|(f, n)| (f.to_string(), serde_json::Value::from(n.to_vec()))).collect();
            serde_json::json!({ "values": values })
        });
        if let Some(u) = &link_usage {
            trace_codes["link_usage.pipe"] = u.links.iter().map(|l| (l.pipe.to_string(), serde_json::Value::from(l.name.as_str()))).collect::<serde_json::Map<_, _>>().into();
        }
        let full = Full {
            version: env!("CARGO_PKG_VERSION"),
            seed: self.seed,
            scenario_hash: &self.hash,
            scenario_name: &self.resolved.name,
            run: self.sim.summary(),
            link_usage,
            cc_state,
            trace_codes,
        };
        serde_json::to_string(&full).expect("summary always serializes")
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_aqm;
#[cfg(test)]
#[path = "tests_atm.rs"]
mod tests_atm;
#[cfg(test)]
#[path = "tests_coupled.rs"]
mod tests_coupled;
#[cfg(test)]
mod tests_delay_occupancy;
#[cfg(test)]
#[path = "tests_dummynet.rs"]
mod tests_dummynet;
#[cfg(test)]
mod tests_fabric_plan;
#[cfg(test)]
#[path = "tests_fat_tree.rs"]
mod tests_fat_tree;
#[cfg(test)]
mod tests_flow_matrix;
#[cfg(test)]
#[path = "tests_freebsd410.rs"]
mod tests_freebsd410;
#[cfg(test)]
#[path = "tests_fs_copy.rs"]
mod tests_fs_copy;
#[cfg(test)]
#[path = "tests_imtcp.rs"]
mod tests_imtcp;
#[cfg(test)]
#[path = "tests_imtcp_bg.rs"]
mod tests_imtcp_bg;
#[cfg(test)]
#[path = "tests_incast.rs"]
mod tests_incast;
#[cfg(test)]
#[path = "tests_linux24.rs"]
mod tests_linux24;
#[cfg(test)]
#[path = "tests_local_congestion.rs"]
mod tests_local_congestion;
#[cfg(test)]
mod tests_request_response;
#[cfg(test)]
#[path = "tests_reservoir.rs"]
mod tests_reservoir;
#[cfg(test)]
mod tests_rtt_trace;
#[cfg(test)]
#[path = "tests_topology.rs"]
mod tests_topology;
#[cfg(test)]
mod tests_workload;
