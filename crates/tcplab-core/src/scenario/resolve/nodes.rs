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
    /// An end host (a member of a group is one too).
    Host,
    /// A group of this many identical hosts (`[[hosts]]` with `count`).
    Group(u32),
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
            NodeKind::Group(_) => "host group",
            NodeKind::Switch => "switch",
            NodeKind::Emulator => "emulator",
        }
    }

    /// The kind's name with its article ("a switch", "an emulator").
    pub fn a_name(self) -> &'static str {
        match self {
            NodeKind::Host => "a host",
            NodeKind::Group(_) => "a host group",
            NodeKind::Switch => "a switch",
            NodeKind::Emulator => "an emulator",
        }
    }
}

/// Every node's name and kind.
pub(super) type Names = BTreeMap<String, NodeKind>;

/// The most hosts one group may have.
pub const MAX_GROUP: u32 = 65_536;

/// The name of member `k` of group `group`.
pub fn member_name(group: &str, k: u32) -> String {
    format!("{group}.{k}")
}

/// The hosts a host name stands for: the members of a group, or the host itself.
pub fn members(name: &str, names: &Names) -> Vec<String> {
    match names.get(name) {
        Some(NodeKind::Group(n)) => (0..*n).map(|k| member_name(name, k)).collect(),
        _ => vec![name.to_string()],
    }
}

/// True when node `node` is `end`, or a member of the group `end`.
pub fn is_or_member_of(node: &str, end: &str, names: &Names) -> bool {
    node == end
        || matches!(names.get(end), Some(NodeKind::Group(n)) if node.strip_prefix(end).and_then(|r| r.strip_prefix('.')).and_then(|k| k.parse::<u32>().ok()).is_some_and(|k| k < *n && member_name(end, k) == node))
}

/// Collect the node names, each non-empty and unique (a group's members' names too).
pub(super) fn node_names(sc: &Scenario) -> Res<Names> {
    let mut names = Names::new();
    for (i, h) in sc.hosts.iter().enumerate() {
        if let Some(n) = h.count {
            if n == 0 || n > MAX_GROUP {
                return err(format!("hosts[{i}].count"), format!("{n} is out of range (1..={MAX_GROUP} hosts in a group)"));
            }
        }
    }
    let hosts = sc.hosts.iter().map(|h| (&h.name, h.count.map_or(NodeKind::Host, NodeKind::Group), "hosts"));
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
        if name.len() > super::MAX_NAME {
            return err(path, format!("{} bytes long; a name has at most {} bytes", name.len(), super::MAX_NAME));
        }
        // Queues are named `A->B` and links addressed as `link(A,B)`, `queue(A->B)`.
        if let Some(bad) = ["->", ",", "(", ")"].into_iter().find(|t| name.contains(t)) {
            return err(path, format!("'{name}' contains '{bad}', which names queues (A->B) and links (link(A,B)); choose another name"));
        }
        if let Some(k) = names.insert(name.clone(), kind) {
            return err(path, format!("'{name}' is already the name of a {}", k.name()));
        }
        if let NodeKind::Group(n) = kind {
            for k in 0..n {
                let m = member_name(name, k);
                if let Some(other) = names.insert(m.clone(), NodeKind::Host) {
                    return err(path, format!("group '{name}' names its member {k} '{m}', already the name of a {}", other.name()));
                }
            }
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
    /// A group of this many hosts, `name.0` … (none: one host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
}

impl ResolvedHost {
    /// The names of the hosts it declares.
    pub fn host_names(&self) -> Vec<String> {
        match self.count {
            Some(n) => (0..n).map(|k| member_name(&self.name, k)).collect(),
            None => vec![self.name.clone()],
        }
    }
}

/// Resolve the hosts.
pub(super) fn resolve_hosts(hosts: &[HostSpec]) -> Vec<ResolvedHost> {
    let zero = Dur(SimDuration::ZERO);
    hosts.iter().map(|h| ResolvedHost { name: h.name.clone(), start_skew: h.start_skew.unwrap_or(zero), jitter: h.jitter.unwrap_or(zero), count: h.count }).collect()
}

/// Switches have nothing to resolve.
pub(super) fn resolve_switches(switches: &[SwitchSpec]) -> Vec<SwitchSpec> {
    switches.to_vec()
}
