//! `[run]`: how the run ends and its default seed.

use serde::Serialize;

use super::{err, Res, MAX_SEED};
use crate::scenario::spec::{Dur, RunSpec, Size, StopSpec};
use crate::units::SimDuration;

/// `[run]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedRun {
    /// Stop time; none: the run ends by its stop rule (at 10⁶ s at the latest).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub duration: Option<Dur>,
    /// Stop rule (default `"duration"` when a duration is given, else `"flows-done"`).
    pub stop: StopSpec,
    /// The seed, in [0, 2⁶³) (default 1; `Run` sets the one used).
    pub seed: u64,
    /// Heap the throughput trace may hold, 1MiB..=1TiB (default 2GiB), checked at load.
    #[serde(skip_serializing_if = "is_default_trace_memory")]
    pub trace_memory: Size,
}

/// The traces' default memory budget: 2 GiB of columns (a throughput row takes 28 bytes, so
/// about 77 million rows), which the Python side copies once more into its DataFrames.
pub const DEFAULT_TRACE_MEMORY: u64 = 2 << 30;

fn is_default_trace_memory(s: &Size) -> bool {
    s.0 == DEFAULT_TRACE_MEMORY
}

/// Resolve `[run]`.
pub(super) fn resolve_run(r: &RunSpec) -> Res<ResolvedRun> {
    let stop = r.stop.unwrap_or(if r.duration.is_some() { StopSpec::Duration } else { StopSpec::FlowsDone });
    if stop == StopSpec::Duration && r.duration.is_none() {
        return err("run.stop", "\"duration\" needs run.duration");
    }
    if r.duration.is_some_and(|d| d.0 == SimDuration::ZERO) {
        return err("run.duration", "must be positive");
    }
    let seed = r.seed.unwrap_or(1);
    if seed > MAX_SEED {
        return err("run.seed", format!("must be an integer in [0, 2^63), got {seed}"));
    }
    let trace_memory = r.trace_memory.unwrap_or(Size(DEFAULT_TRACE_MEMORY));
    if !(1 << 20..=1 << 40).contains(&trace_memory.0) {
        return err("run.trace_memory", format!("{} is out of range (1MiB..=1TiB)", crate::units::format_size(trace_memory.0)));
    }
    Ok(ResolvedRun { duration: r.duration, stop, seed, trace_memory })
}
