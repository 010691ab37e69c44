//! Agents: components that watch the flows from outside the endpoints and act on them at
//! their own intervals — study 000's DECP-like coordinator, study 001's AHTCP client monitor.
//! A closed set (`Agent`); each reads the flows and returns `Action`s, which the simulation
//! applies (it knows no agent's rules, and an agent holds no reference into the simulation).
//! A new agent is one file here and one variant of `Agent`.

mod ahtcp_monitor;
mod decp;

pub use ahtcp_monitor::{AhtcpMonitor, ThresholdRule};
pub use decp::{clamp, Coordinator};

use crate::engine::order::Rank;
use crate::flow::Flow;
use crate::units::SimDuration;

/// What an agent asks the simulation to do, in the order returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Pull flow `flow`'s sending window down to at most `bytes` (`clamp`), and record it.
    ClampWindow {
        /// The flow.
        flow: usize,
        /// The window's new ceiling, bytes.
        bytes: u64,
    },
    /// Signal end `end` of flow `flow` (`Endpoint::signal`: its variant decides what it means).
    Signal {
        /// The flow.
        flow: usize,
        /// The end (0 source, 1 destination).
        end: usize,
    },
}

/// An agent.
#[derive(Clone, Debug)]
pub enum Agent {
    /// A DECP-like window coordinator.
    Coordinator(Coordinator),
    /// An AHTCP client's throughput monitor.
    AhtcpMonitor(AhtcpMonitor),
}

impl Agent {
    /// How often it acts (first one interval after time zero).
    pub fn interval(&self) -> SimDuration {
        match self {
            Agent::Coordinator(c) => c.interval,
            Agent::AhtcpMonitor(m) => m.interval,
        }
    }

    /// Its place among simultaneous events (`engine::order`).
    pub fn rank(&self) -> Rank {
        match self {
            Agent::Coordinator(_) => Rank::Coordinate,
            Agent::AhtcpMonitor(_) => Rank::Monitor,
        }
    }

    /// Act at one of its instants.
    pub fn act(&mut self, flows: &[Flow]) -> Vec<Action> {
        match self {
            Agent::Coordinator(c) => c.act(flows),
            Agent::AhtcpMonitor(m) => m.sample(flows),
        }
    }

    /// True once it has nothing left to do (it is not scheduled again).
    pub fn done(&self, flows: &[Flow]) -> bool {
        match self {
            Agent::Coordinator(_) => false,
            Agent::AhtcpMonitor(m) => m.done(flows),
        }
    }
}
