//! Route computation over the topology graph: shortest path in hops (breadth-first, ties broken
//! by link declaration order, so routes are deterministic), hosts never used as transit, and
//! each emulator's internal pipe spliced in where the path crosses it. With equal-cost
//! multipath (`route_by`) a path is chosen hop by hop among all the shortest ones, each node
//! with several next hops asking a chooser (`net::ecmp::pick` hashes the flow's 5-tuple).

use std::cell::RefCell;
use std::collections::{HashMap, VecDeque};

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
    /// The pipe of the first declared link from one node to another.
    first_link: HashMap<(NodeId, NodeId), PipeId>,
    /// The search's state, reused between routes so one route costs what it explores, not
    /// the size of the graph (a group of 65,536 hosts has as many routes).
    scratch: RefCell<Search>,
}

/// A breadth-first search's marks: a node is seen in this search when its stamp is the
/// search's.
#[derive(Debug, Default)]
struct Search {
    stamp: Vec<u32>,
    prev: Vec<NodeId>,
    current: u32,
    queue: VecDeque<NodeId>,
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
        self.first_link.entry((a, b)).or_insert(ab);
        self.first_link.entry((b, a)).or_insert(ba);
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
    /// Breadth-first from `from`, neighbours in declaration order: the path is the one whose
    /// last hop reaches `to` from the first node popped that has it as a neighbour.
    pub fn route(&self, from: NodeId, to: NodeId) -> Option<Vec<PipeId>> {
        if from == to {
            return None;
        }
        let n = self.roles.len();
        let mut guard = self.scratch.borrow_mut();
        let sr = &mut *guard;
        if sr.stamp.len() != n {
            sr.stamp = vec![0; n];
            sr.prev = vec![NodeId(u32::MAX); n];
            sr.current = 0;
        }
        sr.current = sr.current.wrapping_add(1);
        if sr.current == 0 {
            sr.stamp.iter_mut().for_each(|s| *s = 0);
            sr.current = 1;
        }
        let cur = sr.current;
        sr.queue.clear();
        sr.stamp[from.0 as usize] = cur;
        sr.queue.push_back(from);
        let mut found = false;
        while let Some(u) = sr.queue.pop_front() {
            if u != from && self.roles[u.0 as usize] == NodeRole::Host {
                continue; // hosts do not forward
            }
            // `to` next to u: u's scan would reach it, and what it reaches before does not
            // change the path.
            if sr.stamp[to.0 as usize] != cur && self.first_link.contains_key(&(u, to)) {
                sr.stamp[to.0 as usize] = cur;
                sr.prev[to.0 as usize] = u;
                found = true;
                break;
            }
            for &(v, _) in &self.adj[u.0 as usize] {
                if sr.stamp[v.0 as usize] != cur {
                    sr.stamp[v.0 as usize] = cur;
                    sr.prev[v.0 as usize] = u;
                    sr.queue.push_back(v);
                }
            }
        }
        if !found {
            return None;
        }
        let mut nodes = vec![to];
        while let Some(&last) = nodes.last() {
            if last == from {
                break;
            }
            nodes.push(sr.prev[last.0 as usize]);
        }
        nodes.reverse();
        Some(self.pipes_along(&nodes))
    }

    /// The pipes along a path of nodes (each consecutive pair linked), with each emulator's
    /// internal pipe spliced in for the direction the path crosses it.
    fn pipes_along(&self, nodes: &[NodeId]) -> Vec<PipeId> {
        let mut pipes = Vec::with_capacity(nodes.len() * 2);
        for (i, w) in nodes.windows(2).enumerate() {
            let (u, v) = (w[0], w[1]);
            if let NodeRole::Emulator { pipes: ep } = self.roles[u.0 as usize] {
                // Entering u from nodes[i-1], leaving towards v.
                let first = self.adj[u.0 as usize][0].0;
                let came_from = nodes[i - 1];
                pipes.push(if came_from == first { ep[0] } else { ep[1] });
            }
            pipes.push(self.first_link[&(u, v)]);
        }
        pipes
    }

    /// Every node's distance in hops to `to` along paths that only hosts end (`u32::MAX`: no
    /// such path): breadth-first from `to`, never expanding past a host other than `to`.
    pub fn distances_to(&self, to: NodeId) -> Vec<u32> {
        let mut dist = vec![u32::MAX; self.roles.len()];
        let mut queue = VecDeque::new();
        dist[to.0 as usize] = 0;
        queue.push_back(to);
        while let Some(v) = queue.pop_front() {
            if v != to && self.roles[v.0 as usize] == NodeRole::Host {
                continue; // hosts do not forward
            }
            let d = dist[v.0 as usize] + 1;
            for &(u, _) in &self.adj[v.0 as usize] {
                if dist[u.0 as usize] == u32::MAX {
                    dist[u.0 as usize] = d;
                    queue.push_back(u);
                }
            }
        }
        dist
    }

    /// The next hops from `u` on shortest paths to `to` (`dist` from `distances_to(to)`): the
    /// neighbours one hop nearer, each once, in link declaration order.
    pub fn next_hops(&self, u: NodeId, to: NodeId, dist: &[u32]) -> Vec<NodeId> {
        let d = dist[u.0 as usize];
        let mut out: Vec<NodeId> = Vec::new();
        for &(v, _) in &self.adj[u.0 as usize] {
            let on_path = d != u32::MAX && dist[v.0 as usize] == d - 1 && (v == to || self.roles[v.0 as usize] != NodeRole::Host);
            if on_path && !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    /// A shortest path from host `from` to host `to` chosen hop by hop (equal-cost multipath):
    /// at every node with several next hops on shortest paths (`next_hops`), `choose(node,
    /// choices)` says which, by index in declaration order. `dist` is `distances_to(to)`.
    /// `None` if `to` is unreachable (or `from == to`). Every path it can return has as many
    /// hops as `route`'s, and with `choose` always 0 it returns the path whose hops are each
    /// the first declared of their choices.
    pub fn route_by(&self, from: NodeId, to: NodeId, dist: &[u32], mut choose: impl FnMut(NodeId, usize) -> usize) -> Option<Vec<PipeId>> {
        if from == to || dist[from.0 as usize] == u32::MAX {
            return None;
        }
        let mut nodes = vec![from];
        let mut u = from;
        while u != to {
            let hops = self.next_hops(u, to, dist);
            let k = if hops.len() == 1 { 0 } else { choose(u, hops.len()) };
            u = hops[k];
            nodes.push(u);
        }
        Some(self.pipes_along(&nodes))
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

    /// a - s1 - {m1, m2, m3} - s2 - b, where m3 reaches s2 only through an extra switch x: two
    /// equal-cost paths (through m1, m2) and a longer one (m3, x).
    fn diamond() -> (Graph, [NodeId; 4]) {
        let mut g = Graph::new();
        let a = g.add_node(NodeRole::Host);
        let s1 = g.add_node(NodeRole::Switch);
        let m1 = g.add_node(NodeRole::Switch);
        let m2 = g.add_node(NodeRole::Switch);
        let m3 = g.add_node(NodeRole::Switch);
        let x = g.add_node(NodeRole::Switch);
        let s2 = g.add_node(NodeRole::Switch);
        let b = g.add_node(NodeRole::Host);
        let mut p = 0;
        let mut link = |g: &mut Graph, u, v| {
            g.add_link(u, v, PipeId(p), PipeId(p + 1));
            p += 2;
        };
        link(&mut g, a, s1); // 0, 1
        link(&mut g, s1, m3); // 2, 3 (declared first: the longer way)
        link(&mut g, s1, m1); // 4, 5
        link(&mut g, s1, m2); // 6, 7
        link(&mut g, m3, x); // 8, 9
        link(&mut g, x, s2); // 10, 11
        link(&mut g, m1, s2); // 12, 13
        link(&mut g, m2, s2); // 14, 15
        link(&mut g, s2, b); // 16, 17
        (g, [a, s1, s2, b])
    }

    #[test]
    fn equal_cost_paths_are_the_shortest_ones_only() {
        let (g, [a, s1, s2, b]) = diamond();
        let dist = g.distances_to(b);
        assert_eq!(dist[a.0 as usize], 4);
        // At s1: m1 and m2 (declaration order), never m3.
        assert_eq!(g.next_hops(s1, b, &dist).len(), 2);
        let mut asked = Vec::new();
        let via_m1 = g
            .route_by(a, b, &dist, |n, c| {
                asked.push((n, c));
                0
            })
            .unwrap();
        assert_eq!(asked, vec![(s1, 2)], "only s1 has a choice");
        assert_eq!(via_m1, vec![PipeId(0), PipeId(4), PipeId(12), PipeId(16)]);
        let via_m2 = g.route_by(a, b, &dist, |_, _| 1).unwrap();
        assert_eq!(via_m2, vec![PipeId(0), PipeId(6), PipeId(14), PipeId(16)]);
        // BFS's route is one of them, as long as every path route_by gives.
        let bfs = g.route(a, b).unwrap();
        assert!(bfs == via_m1 || bfs == via_m2);
        // Back: the choice is s2's.
        let back = g.distances_to(a);
        let mut at = Vec::new();
        let rev = g.route_by(b, a, &back, |n, c| {
            at.push((n, c));
            1
        });
        assert_eq!(at, vec![(s2, 2)]);
        assert_eq!(rev.unwrap(), vec![PipeId(17), PipeId(15), PipeId(7), PipeId(1)]);
    }

    #[test]
    fn equal_cost_routes_never_cross_a_host_and_fail_where_bfs_does() {
        let mut g = Graph::new();
        let a = g.add_node(NodeRole::Host);
        let h = g.add_node(NodeRole::Host);
        let b = g.add_node(NodeRole::Host);
        g.add_link(a, h, PipeId(0), PipeId(1));
        g.add_link(h, b, PipeId(2), PipeId(3));
        assert!(g.route_by(a, b, &g.distances_to(b), |_, _| 0).is_none());
        assert_eq!(g.route_by(a, h, &g.distances_to(h), |_, _| 0).unwrap(), vec![PipeId(0)]);
        assert!(g.route_by(a, a, &g.distances_to(a), |_, _| 0).is_none());
    }

    #[test]
    fn equal_cost_routes_splice_emulators() {
        // The first test's line: one path, so route_by is route.
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
        assert_eq!(g.route_by(a, b, &g.distances_to(b), |_, _| unreachable!()), g.route(a, b));
        assert_eq!(g.route_by(b, a, &g.distances_to(a), |_, _| unreachable!()), g.route(b, a));
    }
}
