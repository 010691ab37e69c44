//! `[[hosts]]` and `[[switches]]`, and the names of every node (hosts, switches, emulators),
//! unique among all three.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{err, Res};
use crate::scenario::spec::{Dur, HostSpec, Scenario, SwitchSpec};
use crate::units::SimDuration;

/// What a node name names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host.
    Host,
    /// A switch.
    Switch,
    /// A delay/loss emulator.
    Emulator,
}

impl NodeKind {
    /// The kind's name in messages.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Host => "host",
            NodeKind::Switch => "switch",
            NodeKind::Emulator => "emulator",
        }
    }
}

/// Every node's name and kind.
pub(super) type Names = BTreeMap<String, NodeKind>;

/// Collect the node names, each non-empty and unique.
pub(super) fn node_names(sc: &Scenario) -> Res<Names> {
    let mut names = Names::new();
    let hosts = sc.hosts.iter().map(|h| (&h.name, NodeKind::Host, "hosts"));
    let switches = sc.switches.iter().map(|s| (&s.name, NodeKind::Switch, "switches"));
    let emulators = sc.emulators.iter().map(|e| (&e.name, NodeKind::Emulator, "emulators"));
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, kind, table) in hosts.chain(switches).chain(emulators) {
        let i = index.entry(table).or_insert(0);
        let path = format!("{table}[{i}].name");
        *i += 1;
        if name.trim().is_empty() {
            return err(path, "must not be empty");
        }
        if let Some(k) = names.insert(name.clone(), kind) {
            return err(path, format!("'{name}' is already the name of a {}", k.name()));
        }
    }
    Ok(names)
}

/// `[[hosts]]`, resolved.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedHost {
    /// Unique name.
    pub name: String,
    /// Each flow from this host starts late by a uniform random amount in [0, start_skew)
    /// (default 0s).
    pub start_skew: Dur,
    /// Each packet waits a uniform random processing time in [0, jitter) (default 0s).
    pub jitter: Dur,
}

/// Resolve the hosts.
pub(super) fn resolve_hosts(hosts: &[HostSpec]) -> Vec<ResolvedHost> {
    let zero = Dur(SimDuration::ZERO);
    hosts.iter().map(|h| ResolvedHost { name: h.name.clone(), start_skew: h.start_skew.unwrap_or(zero), jitter: h.jitter.unwrap_or(zero) }).collect()
}

/// Switches have nothing to resolve.
pub(super) fn resolve_switches(switches: &[SwitchSpec]) -> Vec<SwitchSpec> {
    switches.to_vec()
}
