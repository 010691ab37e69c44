//! The discrete-event engine: the canonical order of events (`order`), an event queue kept in
//! that order (`queue`) and the seeded random-number streams (`rng`). The `Simulation` that
//! dispatches events lives in `crate::sim`.

pub mod order;
pub mod queue;
pub mod rng;

pub use order::{Key, Order, Rank};
pub use queue::EventQueue;
pub use rng::{Rng, SeedTree};
