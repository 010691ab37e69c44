//! `[[topologies]]`: generators of common topologies, expanded at resolve time into ordinary
//! hosts (host groups where a side has many), switches and links (`resolve::topology`); and
//! `[routing]`: how routes are chosen (equal-cost multipath).

use serde::{Deserialize, Serialize};

use super::{Dur, QueueSpec, Rate, Size};

/// What a generator builds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TopologyKind {
    /// `senders` hosts (group `<name>.src`) → switch `<name>.left` → the bottleneck → switch
    /// `<name>.right` → `receivers` hosts (group `<name>.dst`).
    Dumbbell,
    /// A chain of `hops` bottleneck links between switches `<name>.r0` … `<name>.r<hops>`;
    /// hosts `<name>.src` at r0 and `<name>.dst` at the last router for the long flow, and for
    /// each hop i hosts `<name>.x<i>.src` at r<i> and `<name>.x<i>.dst` at r<i+1> for the
    /// cross traffic over that hop alone.
    ParkingLot,
    /// `leaves` leaf switches `<name>.leaf<i>`, `spines` spine switches `<name>.spine<j>`,
    /// a link from every leaf to every spine, and `hosts_per_leaf` hosts (group
    /// `<name>.h<i>`) on each leaf.
    LeafSpine,
    /// The k-ary fat tree of Al-Fares, Loukissas & Vahdat (SIGCOMM 2008): `k` pods, each of
    /// k/2 edge switches `<name>.p<i>.edge<j>` and k/2 aggregation switches
    /// `<name>.p<i>.agg<j>` (every edge linked to every aggregation switch of its pod);
    /// (k/2)² core switches `<name>.core<c>`, aggregation switch j of every pod linked to cores
    /// j·k/2 … j·k/2 + k/2 − 1; `hosts_per_edge` hosts (group `<name>.p<i>.h<j>`) on each edge.
    FatTree,
}

impl TopologyKind {
    /// The name a scenario writes.
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::Dumbbell => "dumbbell",
            TopologyKind::ParkingLot => "parking-lot",
            TopologyKind::LeafSpine => "leaf-spine",
            TopologyKind::FatTree => "fat-tree",
        }
    }
}

/// The links of one role in a generated topology: every link of that role gets these values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyLinkSpec {
    /// Line rate.
    pub rate: Rate,
    /// Propagation delay (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Dur>,
    /// Egress queue at both ends (default: `defaults.queue`); a limit or a queue table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
    /// Link-layer bytes per packet (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub framing: Option<Size>,
}

/// `[[topologies]]`: one generated topology. Each kind reads its own keys and refuses the
/// others'.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySpec {
    /// What to build.
    pub kind: TopologyKind,
    /// The prefix of every generated name (`<name>.left`, `<name>.h0.3`, …).
    pub name: String,
    /// Dumbbell: hosts on the left (1..=65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub senders: Option<u32>,
    /// Dumbbell: hosts on the right (default: `senders`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receivers: Option<u32>,
    /// Parking lot: bottleneck links in the chain (1..=1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hops: Option<u32>,
    /// Leaf-spine: leaf switches (1..=1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<u32>,
    /// Leaf-spine: spine switches (1..=1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spines: Option<u32>,
    /// Leaf-spine: hosts on each leaf (1..=65536).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_leaf: Option<u32>,
    /// Fat tree: the switches' port count k, which sets the pods (k), the switches per pod
    /// layer (k/2) and the cores ((k/2)²); even, 2..=48.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub k: Option<u32>,
    /// Fat tree: hosts on each edge switch (1..=65536; default k/2, the paper's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hosts_per_edge: Option<u32>,
    /// Every host's link to its switch (all kinds; required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_link: Option<TopologyLinkSpec>,
    /// Dumbbell, parking lot: the link (each link of the chain) between routers (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bottleneck: Option<TopologyLinkSpec>,
    /// Leaf-spine: every leaf–spine link; fat tree: every edge–aggregation link, and every
    /// aggregation–core link unless `core_link` is given (required).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fabric_link: Option<TopologyLinkSpec>,
    /// Fat tree: every aggregation–core link (default: `fabric_link`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_link: Option<TopologyLinkSpec>,
}

/// `[routing]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoutingSpec {
    /// Equal-cost multipath: each flow direction's route is chosen hop by hop among all the
    /// shortest paths by a seeded hash of its 5-tuple at each switch (default false: one
    /// shortest path per pair of hosts, ties by link declaration order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecmp: Option<bool>,
}

impl RoutingSpec {
    /// Nothing set (the table is left out of a written scenario).
    pub fn is_default(&self) -> bool {
        *self == RoutingSpec::default()
    }
}
