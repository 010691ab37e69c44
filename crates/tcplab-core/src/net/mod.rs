//! The network: packets, queue disciplines, egress stages, pipes (link and emulator directions) and routes.
//!
//! A link is two pipes; an emulator is two pipes spliced into every route that crosses it.
//! Switches forward with zero processing delay, so a route is simply the ordered list of pipes
//! a packet traverses from its source host to its destination host.

pub mod atm_port;
pub mod counters;
pub mod discipline;
pub mod ecmp;
pub mod egress;
pub mod fabric;
pub mod harmonizer;
pub mod impair;
pub mod journal;
pub mod link_layer;
pub mod merge;
pub mod packet;
pub mod pipe;
pub mod propagation;
pub mod reassembly;
pub mod route;
pub mod wire;

pub use discipline::{QueueDiscipline, QueueStats};
pub use link_layer::LinkLayer;
pub use packet::{Body, End, FlowId, Packet, RouteId, TcpHeader};
pub use pipe::{Offer, Pipe, PipeId, PipeWake};
