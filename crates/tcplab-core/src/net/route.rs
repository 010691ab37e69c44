//! Route computation over the topology graph: shortest path in hops (breadth-first, ties broken
//! by link declaration order, so routes are deterministic), hosts never used as transit, and
//! each emulator's internal pipe spliced in where the path crosses it.

use std::collections::VecDeque;

use crate::net::pipe::PipeId;

/// Index of a node (host, switch or emulator).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// What a node is, for routing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeRole {
    /// An end host: a route may start or end here, never pass through.
    Host,
    /// A switch: forwards with zero processing delay.
    Switch,
    /// A two-port emulator: `pipes[0]` carries traffic from its first neighbour to its second,
    /// `pipes[1]` the reverse.
    Emulator {
        /// The emulator's internal pipes.
        pipes: [PipeId; 2],
    },
}

/// The topology graph.
#[derive(Debug, Default)]
pub struct Graph {
    roles: Vec<NodeRole>,
    /// For each node: (neighbour, pipe from this node to the neighbour), in declaration order.
    adj: Vec<Vec<(NodeId, PipeId)>>,
}

impl Graph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    /// Add a node.
    pub fn add_node(&mut self, role: NodeRole) -> NodeId {
        self.roles.push(role);
        self.adj.push(Vec::new());
        NodeId(self.roles.len() as u32 - 1)
    }

    /// Set a node's role (used to attach an emulator's pipes once they exist).
    pub fn set_role(&mut self, n: NodeId, role: NodeRole) {
        self.roles[n.0 as usize] = role;
    }

    /// Add a full-duplex link: `ab` carries a→b, `ba` carries b→a.
    pub fn add_link(&mut self, a: NodeId, b: NodeId, ab: PipeId, ba: PipeId) {
        self.adj[a.0 as usize].push((b, ab));
        self.adj[b.0 as usize].push((a, ba));
    }

    /// Neighbours of a node in declaration order.
    pub fn neighbours(&self, n: NodeId) -> impl Iterator<Item = NodeId> + '_ {
        self.adj[n.0 as usize].iter().map(|(m, _)| *m)
    }

    /// Number of links at a node.
    pub fn degree(&self, n: NodeId) -> usize {
        self.adj[n.0 as usize].len()
    }

    /// The pipes a packet traverses from host `from` to host `to`, or `None` if unreachable.
    pub fn route(&self, from: NodeId, to: NodeId) -> Option<Vec<PipeId>> {
        let n = self.roles.len();
        let mut prev: Vec<Option<NodeId>> = vec![None; n];
        let mut seen = vec![false; n];
        let mut q = VecDeque::new();
        seen[from.0 as usize] = true;
        q.push_back(from);
        while let Some(u) = q.pop_front() {
            if u == to {
                break;
            }
            if u != from && self.roles[u.0 as usize] == NodeRole::Host {
                continue; // hosts do not forward
            }
            for &(v, _) in &self.adj[u.0 as usize] {
                if !seen[v.0 as usize] {
                    seen[v.0 as usize] = true;
                    prev[v.0 as usize] = Some(u);
                    q.push_back(v);
                }
            }
        }
        if !seen[to.0 as usize] || from == to {
            return None;
        }
        let mut nodes = vec![to];
        while let Some(p) = prev[nodes.last().expect("non-empty").0 as usize] {
            nodes.push(p);
        }
        nodes.reverse();
        let mut pipes = Vec::with_capacity(nodes.len() * 2);
        for (i, w) in nodes.windows(2).enumerate() {
            let (u, v) = (w[0], w[1]);
            if let NodeRole::Emulator { pipes: ep } = self.roles[u.0 as usize] {
                // Entering u from nodes[i-1], leaving towards v.
                let first = self.adj[u.0 as usize][0].0;
                let came_from = nodes[i - 1];
                pipes.push(if came_from == first { ep[0] } else { ep[1] });
            }
            let link = self.adj[u.0 as usize].iter().find(|(m, _)| *m == v).expect("path edge exists").1;
            pipes.push(link);
        }
        Some(pipes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_through_switch_and_emulator() {
        // a - sw1 - emu - sw2 - b, pipes numbered as created.
        let mut g = Graph::new();
        let a = g.add_node(NodeRole::Host);
        let s1 = g.add_node(NodeRole::Switch);
        let e = g.add_node(NodeRole::Emulator { pipes: [PipeId(100), PipeId(101)] });
        let s2 = g.add_node(NodeRole::Switch);
        let b = g.add_node(NodeRole::Host);
        g.add_link(a, s1, PipeId(0), PipeId(1));
        g.add_link(s1, e, PipeId(2), PipeId(3));
        g.add_link(e, s2, PipeId(4), PipeId(5));
        g.add_link(s2, b, PipeId(6), PipeId(7));
        assert_eq!(g.route(a, b).unwrap(), vec![PipeId(0), PipeId(2), PipeId(100), PipeId(4), PipeId(6)]);
        assert_eq!(g.route(b, a).unwrap(), vec![PipeId(7), PipeId(5), PipeId(101), PipeId(3), PipeId(1)]);
    }

    #[test]
    fn hosts_do_not_forward() {
        let mut g = Graph::new();
        let a = g.add_node(NodeRole::Host);
        let h = g.add_node(NodeRole::Host);
        let b = g.add_node(NodeRole::Host);
        g.add_link(a, h, PipeId(0), PipeId(1));
        g.add_link(h, b, PipeId(2), PipeId(3));
        assert!(g.route(a, b).is_none());
        assert!(g.route(a, h).is_some());
    }
}
