//! The discrete-event engine: an event queue ordered by (time, insertion sequence) and the
//! seeded random-number streams. The `Simulator` that dispatches events lives in `crate::sim`.

pub mod queue;
pub mod rng;

pub use queue::EventQueue;
pub use rng::{Rng, SeedTree};
