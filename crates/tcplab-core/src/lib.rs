//! tcplab-core: a deterministic packet-level simulator of TCP over high-speed networks.
//!
//! Layers, each depending only on those before it: [`units`] ← [`engine`] ← [`net`] ←
//! [`tcp`] ← [`app`] ← [`flow`] ← [`agent`]; [`trace`] holds what they report; [`sim`] runs
//! them; [`scenario`] knows them all and builds a [`sim::Simulation`] from a validated
//! scenario.

pub mod agent;
pub mod app;
pub mod engine;
pub mod epoch;
pub mod flow;
pub mod histogram;
pub mod net;
pub mod packetdrill;
pub mod params;
pub mod quantity;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod trace;
pub mod units;

pub use scenario::{Run, Scenario, ScenarioError};
