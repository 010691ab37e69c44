//! tcplab-core: a deterministic packet-level simulator of TCP over high-speed networks.
//!
//! Layers, each depending only on those before it: [`units`] ← [`engine`] ← [`net`] ←
//! [`tcp`] ← [`app`]; [`trace`] records what they report; [`scenario`] knows them all and
//! builds a [`sim::Simulation`] from a validated scenario.

pub mod engine;
pub mod net;
pub mod tcp;
pub mod units;
