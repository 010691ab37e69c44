//! The run's agents: AHTCP's throughput monitor on each receiving host, the DECP
//! coordinators over named flows, and the coupled groups (RFC 6356) their members' senders join.

use std::collections::BTreeMap;

use crate::agent::{Agent, AhtcpMonitor, Coordinator, ThresholdRule};
use crate::flow::FlowEngine;
use crate::net::FlowId;
use crate::scenario::resolve::{err, MonitorKey, Res, ResolvedAhtcp, ResolvedScenario, ResolvedTcp, ResolvedVariant};
use crate::scenario::spec::{CoordinatorKind, TargetsName, ThresholdRuleName};
use crate::sim::Simulation;
use crate::tcp::cc::{ControllerInput, CoupledGroup};

/// The agents gathered while the flows are built.
#[derive(Default)]
pub(super) struct Agents {
    /// One AHTCP monitor per receiving host, over all its AHTCP connections.
    monitors: BTreeMap<String, (MonitorKey, AhtcpMonitor)>,
}

impl Agents {
    /// End `end` of flow `flow` receives data at `host` under `tcp` (declared by
    /// `flows[index]`): join the host's agent if the variant has one.
    pub fn join(&mut self, tcp: &ResolvedTcp, host: &str, flow: usize, end: usize, index: usize) -> Res<()> {
        match &tcp.variant {
            ResolvedVariant::None | ResolvedVariant::Imtcp { .. } => Ok(()),
            ResolvedVariant::Ahtcp { ahtcp } => self.join_monitor(host, flow, end, ahtcp, index),
        }
    }

    fn join_monitor(&mut self, host: &str, flow: usize, end: usize, a: &ResolvedAhtcp, index: usize) -> Res<()> {
        let key = a.monitor_key();
        let m = self.monitors.entry(host.to_string()).or_insert_with(|| {
            let quiet = match a.targets {
                TargetsName::Stalled => a.samples,
                TargetsName::StalledSample => 1,
                TargetsName::Incomplete => 0,
            };
            let rule = match (a.threshold_rule, a.threshold) {
                (ThresholdRuleName::Fixed, Some(t)) => ThresholdRule::Fixed(t.0.bps() as f64),
                (ThresholdRuleName::Fixed, None) => unreachable!("resolution requires the fixed rule's threshold"),
                (ThresholdRuleName::Peak, _) => ThresholdRule::Peak { fraction: a.peak_fraction, window: (a.peak_window.0.as_ps() / a.interval.0.as_ps()).max(1) as usize },
            };
            (key, AhtcpMonitor::new(a.interval.0, a.samples as usize, rule, quiet))
        });
        if m.0 != key {
            return err(
                format!("flows[{index}].tcp.ahtcp"),
                format!("host '{host}' measures its throughput once for all its AHTCP connections; their threshold, interval, samples and targets must agree"),
            );
        }
        m.1.watch(flow, end);
        Ok(())
    }

    /// Add the monitors, then the scenario's coordinators over the expanded flow names.
    pub fn install(self, r: &ResolvedScenario, sim: &mut Simulation) {
        for m in self.monitors.into_values() {
            sim.add_agent(Agent::AhtcpMonitor(m.1));
        }
        for c in &r.coordinators {
            let ids: Vec<FlowId> =
                c.members.iter().map(|name| FlowId(sim.flows.iter().position(|f| &f.info.name == name).expect("a coordinator's members are flows") as u32)).collect();
            match c.kind {
                CoordinatorKind::Decp => {
                    let (interval, tolerance) = (c.interval.expect("resolved for decp").0, c.tolerance.expect("resolved for decp"));
                    sim.add_agent(Agent::Coordinator(Coordinator { flows: ids, interval, tolerance, actions: 0 }));
                }
                CoordinatorKind::Lia => {
                    // One group; each member's data sender joins it (a local READ stream
                    // sends from its far end).
                    let group = CoupledGroup::shared();
                    for id in ids {
                        let flow = &mut sim.flows[id.0 as usize];
                        let sender = flow.data_sender();
                        if let FlowEngine::Tcp(t) = &mut flow.engine {
                            let taken = t.ends[sender].attach_input(ControllerInput::Coupled(CoupledGroup::join(&group)));
                            assert!(taken, "resolve checked that every member's controller couples");
                        }
                    }
                }
            }
        }
    }
}
