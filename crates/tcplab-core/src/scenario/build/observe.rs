//! The scenario's instruments: traces and taps (capture files written into `capture_dir`).

use std::collections::BTreeMap;
use std::path::Path;

use super::network::Network;
use crate::net::PipeId;
use crate::scenario::resolve::{err, Res, ResolvedScenario, TracedQueues, Traffic};
use crate::scenario::spec::LinkSelection::{self, Names};
use crate::scenario::ScenarioError;
use crate::sim::{Simulation, Tap};
use crate::trace::pcap::{host_address, CaptureHeader, PcapWriter};

/// Turn on the traces the scenario asks for.
pub(super) fn traces(r: &ResolvedScenario, net: &Network, sim: &mut Simulation) -> Res<()> {
    if let Some(d) = r.trace.throughput_interval {
        sim.trace_throughput(d.0);
    }
    if r.trace.cwnd {
        sim.trace_cwnd();
    }
    if r.trace.events {
        sim.trace_events();
    }
    if r.trace.milestones {
        sim.trace_milestones();
    }
    if r.trace.measurements {
        sim.trace_measurements();
    }
    if r.trace.cc_state {
        sim.trace_cc_state();
    }
    if r.trace.rtt {
        sim.trace_rtt();
    }
    // A request/response flow's messages are its result: recorded whenever there is one.
    if r.flows.iter().any(|f| matches!(f.traffic, Traffic::RequestResponse(_))) {
        sim.trace_messages();
    }
    if let Some(u) = &r.trace.link_usage {
        let pipes = link_usage_pipes(&u.links, sim)?;
        sim.trace_link_usage(&pipes, u.interval.0);
    }
    match &r.trace.queues {
        TracedQueues::All => {
            for p in sim.queue_pipes.clone() {
                sim.trace_queue(p);
            }
        }
        TracedQueues::Names(list) => {
            for (i, n) in list.iter().enumerate() {
                let Some(&p) = net.queue_names.get(n) else {
                    let known: Vec<&str> = net.queue_names.keys().map(|s| s.as_str()).collect();
                    return err(format!("trace.queues[{i}]"), format!("no queue named '{n}' (queues: {})", known.join(", ")));
                };
                sim.trace_queue(p);
            }
        }
    }
    Ok(())
}

/// The pipes `trace.link_usage.links` names, in its order (`"all"`: every pipe built so far —
/// every link direction, then every emulator direction — in the order they were built).
fn link_usage_pipes(links: &LinkSelection, sim: &Simulation) -> Res<Vec<PipeId>> {
    let built = sim.fabric.pipes.len() as u32;
    let Names(names) = links else { return Ok((0..built).map(PipeId).collect()) };
    let by_name: BTreeMap<&str, PipeId> = sim.fabric.pipes.iter().enumerate().map(|(i, p)| (p.name.as_str(), PipeId(i as u32))).collect();
    names
        .iter()
        .enumerate()
        .map(|(i, n)| {
            by_name.get(n.as_str()).copied().ok_or_else(|| {
                const SHOWN: usize = 12;
                let mut known: Vec<&str> = by_name.keys().copied().take(SHOWN).collect();
                if by_name.len() > SHOWN {
                    known.push("…");
                }
                ScenarioError::new(
                    format!("trace.link_usage.links[{i}]"),
                    format!(
                        "no link direction or emulator direction is named '{n}' (\"a->b\" for the link from a to b, \"emu:a->b\" for an emulator's; have: {})",
                        known.join(", ")
                    ),
                )
            })
        })
        .collect()
}

fn dir_name(direction: &str) -> bool {
    direction == "both"
}

/// Add the scenario's taps, each on the directions of its link (every member's when an end is
/// a group).
pub(super) fn taps(r: &ResolvedScenario, net: &Network, sim: &mut Simulation, capture_dir: Option<&Path>) -> Res<()> {
    let hosts: Vec<(String, [u8; 4])> = net.host_names.iter().enumerate().map(|(k, (n, _))| (n.clone(), host_address(k as u32).0)).collect();
    for (i, t) in r.taps.iter().enumerate() {
        let [a, b] = &t.link;
        let dir = t.direction.as_str();
        let mut dirs: Vec<(String, String)> = Vec::new();
        for x in net.members(a) {
            for y in net.members(b) {
                if dir == "both" || dir == a {
                    dirs.push((x.clone(), y.clone()));
                }
                if dir == "both" || dir == b {
                    dirs.push((y.clone(), x.clone()));
                }
            }
        }
        let pipes: Vec<(PipeId, u32)> = dirs.iter().enumerate().map(|(k, d)| (net.link_pipes[d], k as u32)).collect();
        let resolution_ps = t.resolution.0.as_ps();
        let writer = match (t.pcap, capture_dir) {
            (true, Some(dir)) => {
                let ifaces: Vec<(String, u64)> =
                    pipes.iter().map(|(p, _)| (sim.fabric.pipes[p.0 as usize].name.clone(), sim.fabric.pipes[p.0 as usize].egress().rate().map_or(0, |r| r.bps()))).collect();
                let path = dir.join(format!("{}.pcapng", t.name));
                let towards = if dir_name(&t.direction) { "both directions".to_string() } else { format!("from {}", t.direction) };
                let header = CaptureHeader {
                    comment: format!("tcplab scenario '{}', seed {}, tap '{}' on the link {a} <-> {b}, {towards}", r.name, r.run.seed, t.name),
                    hosts: hosts.clone(),
                    epoch: t.epoch,
                };
                Some(
                    PcapWriter::create(&path, &ifaces, resolution_ps, &header)
                        .map_err(|e| ScenarioError::new(format!("taps[{i}]"), format!("cannot create {}: {e}", path.display())))?,
                )
            }
            _ => None,
        };
        let tap = Tap { name: t.name.clone(), writer, record_trace: t.trace, resolution_ps, packets: 0 };
        sim.add_tap(tap, &pipes);
    }
    Ok(())
}
