//! What a run records: `[[taps]]` (header capture on a link) and `[trace]`.

use std::collections::BTreeMap;

use serde::{Serialize, Serializer};

use super::links::ResolvedLink;
use super::nodes::{is_or_member_of, Names};
use super::run::ResolvedRun;
use super::{check_period, err, Res, MAX_THROUGHPUT_ROWS};
use crate::scenario::spec::{Dur, LinkSelection, LinkUsageSpec, QueueSelection, TapSpec, TraceSpec};
use crate::units::SimDuration;

/// `[[taps]]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedTap {
    /// Unique name, a file name; the capture file is `<name>.pcapng`.
    pub name: String,
    /// The tapped link, by its two nodes.
    pub link: [String; 2],
    /// `"both"`, or the node whose outgoing direction is tapped (default `"both"`).
    pub direction: String,
    /// Timestamp resolution, a whole number of nanoseconds (default 100ns).
    pub resolution: Dur,
    /// Write a pcapng file (default true).
    pub pcap: bool,
    /// Also record the `capture` trace (default false).
    pub trace: bool,
    /// The UTC time simulated time 0 is written at (default 1970-01-01T00:00:00Z).
    pub epoch: crate::epoch::Epoch,
}

/// Resolve `[[taps]]` on the resolved links.
pub(super) fn resolve_taps(taps: &[TapSpec], links: &[ResolvedLink], names: &Names) -> Res<Vec<ResolvedTap>> {
    let mut tap_names = BTreeMap::new();
    let mut out = Vec::with_capacity(taps.len());
    for (i, t) in taps.iter().enumerate() {
        let p = |x: &str| format!("taps[{i}].{x}");
        if t.name.trim().is_empty() || t.name.contains(['/', '\\']) || t.name.starts_with('.') {
            return err(p("name"), "must be a non-empty file name (no '/', no leading '.')");
        }
        if tap_names.insert(t.name.clone(), i).is_some() {
            return err(p("name"), format!("another tap is already named '{}'", t.name));
        }
        let [a, b] = &t.link;
        let joins = |x: &str, y: &str, l: &ResolvedLink| is_or_member_of(x, &l.between[0], names) && is_or_member_of(y, &l.between[1], names);
        if !links.iter().any(|l| joins(a, b, l) || joins(b, a, l)) {
            return err(p("link"), format!("no link joins '{a}' and '{b}'"));
        }
        let direction = t.direction.clone().unwrap_or_else(|| "both".into());
        if direction != "both" && &direction != a && &direction != b {
            return err(p("direction"), format!("\"{direction}\" is neither \"both\" nor one of the link's nodes"));
        }
        let resolution = t.resolution.map_or(SimDuration::from_nanos(100), |d| d.0);
        if resolution.as_ps() < 1_000 || resolution.as_ps() % 1_000 != 0 {
            return err(p("resolution"), "must be a whole number of nanoseconds, at least 1ns (pcapng stores nanoseconds)");
        }
        out.push(ResolvedTap {
            name: t.name.clone(),
            link: t.link.clone(),
            direction,
            resolution: Dur(resolution),
            pcap: t.pcap.unwrap_or(true),
            trace: t.trace.unwrap_or(false),
            epoch: t.epoch.unwrap_or_default(),
        });
    }
    Ok(out)
}

/// `[trace]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedTrace {
    /// Throughput bin length, at least 1us; none: no throughput trace.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput_interval: Option<Dur>,
    /// cwnd trace (default false).
    pub cwnd: bool,
    /// Queue traces (default none).
    pub queues: TracedQueues,
    /// Event trace (default false).
    pub events: bool,
    /// Application milestone trace (default false).
    pub milestones: bool,
    /// What chosen link directions carry per flow and interval (default none): at least one
    /// direction, each named once, or `"all"`; an interval of at least 1us. The names are
    /// looked up when the network is built.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_usage: Option<LinkUsageSpec>,
    /// Inline measurement trace (default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub measurements: bool,
    /// Controller state trace (default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub cc_state: bool,
    /// RTT sample trace (default false).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub rtt: bool,
}

/// The queues traced: serialized as `"all"` or a list of names (empty: none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TracedQueues {
    /// Every queue.
    All,
    /// These, by name (`a->b`, `emulator:a->b`).
    Names(Vec<String>),
}

impl Serialize for TracedQueues {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            TracedQueues::All => s.serialize_str("all"),
            TracedQueues::Names(v) => v.serialize(s),
        }
    }
}

/// Resolve `[trace]`: `flows` is how many flows the scenario expands to (the throughput trace
/// has a row per flow and bin).
pub(super) fn resolve_trace(t: &TraceSpec, run: &ResolvedRun, flows: u64) -> Res<ResolvedTrace> {
    let queues = match &t.queues {
        QueueSelection::All(s) if s == "all" => TracedQueues::All,
        QueueSelection::All(s) => return err("trace.queues", format!("give a list of queue names or \"all\", not \"{s}\"")),
        QueueSelection::Names(v) => TracedQueues::Names(v.clone()),
        QueueSelection::Nothing => TracedQueues::Names(Vec::new()),
    };
    if let Some(d) = t.throughput_interval {
        check_period("trace.throughput_interval".into(), d.0)?;
        if let Some(duration) = run.duration {
            let bins = duration.0.as_ps() / d.0.as_ps();
            let rows = bins as u128 * flows as u128;
            let row = crate::trace::ThroughputTrace::ROW_BYTES as u128;
            let most = (run.trace_memory.0 as u128 / row).min(MAX_THROUGHPUT_ROWS as u128);
            if rows > most {
                return err(
                    "trace.throughput_interval",
                    format!(
                        "{bins} bins of {flows} flows make {rows} rows; at most {most} ({row} bytes a row within run.trace_memory = {}; take longer bins or raise it)",
                        crate::units::format_size(run.trace_memory.0)
                    ),
                );
            }
        }
    }
    if let Some(u) = &t.link_usage {
        check_link_usage(u)?;
    }
    Ok(ResolvedTrace {
        throughput_interval: t.throughput_interval,
        cwnd: t.cwnd,
        queues,
        events: t.events,
        milestones: t.milestones,
        link_usage: t.link_usage.clone(),
        measurements: t.measurements,
        cc_state: t.cc_state,
        rtt: t.rtt,
    })
}

/// `trace.link_usage`: a positive interval of at least 1us, and at least one link direction,
/// each named once (or `"all"`).
fn check_link_usage(u: &LinkUsageSpec) -> Res<()> {
    if u.interval.0 == SimDuration::ZERO {
        return err("trace.link_usage.interval", "must be positive (at least 1us)");
    }
    check_period("trace.link_usage.interval".into(), u.interval.0)?;
    match &u.links {
        LinkSelection::All(s) if s == "all" => {}
        LinkSelection::All(s) => return err("trace.link_usage.links", format!("give a list of link directions (\"a->b\", \"emu:a->b\") or \"all\", not \"{s}\"")),
        LinkSelection::Names(v) if v.is_empty() => {
            return err("trace.link_usage.links", "is empty: name at least one link direction (\"a->b\", \"emu:a->b\") or give \"all\"");
        }
        LinkSelection::Names(v) => {
            let mut seen = BTreeMap::new();
            for (i, n) in v.iter().enumerate() {
                if let Some(j) = seen.insert(n.as_str(), i) {
                    return err(format!("trace.link_usage.links[{i}]"), format!("'{n}' is already links[{j}]; name each direction once"));
                }
            }
        }
    }
    Ok(())
}
