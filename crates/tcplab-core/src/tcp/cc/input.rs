//! Inputs a controller takes as events from outside the ACK path: `CcInput`, fed through
//! `Connection::feed_controller` (or `Endpoint::feed_controller`) at the moment something
//! outside the connection learns them — a variant's measurement stage, an agent. This is the
//! *event* path; `coupling::ControllerInput` is the *static* one, attached once.
//!
//! Rules the connection keeps for every input (dev/p3/PLAN.md §2):
//! - an input never grows the window (the invariant checker panics if it does); it may lower
//!   it at once (a cap);
//! - during fast recovery the connection owns the window: the input is kept by the connection
//!   and handed to the controller at the end of the call (an arriving segment, a timer) that
//!   ended recovery — after `on_recovery_exit`, or after the timeout — so it takes effect on
//!   the window the controller continues from, before the next ACK.
//!
//! A controller declares the inputs it needs (`Registered::INPUTS`) and resolution refuses it
//! unless the flow's variant produces them (`scenario::resolve::variant::produces`).

use crate::units::{BitRate, SimDuration};

/// Where a measurement fell against the search range its producer used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InRange {
    /// Inside the range.
    Within,
    /// Above its upper end.
    Above,
    /// Below its lower end.
    Below,
}

/// One input from outside the ACK path. An enum so that later inputs (a capacity estimate, a
/// receiver's hint, an agent's target) are variants, not new methods. A controller ignores the
/// inputs it has no use for.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CcInput {
    /// An available-bandwidth estimate (ImTCP's inline measurement, study 003).
    AvailableBandwidth {
        /// The estimate, bit/s (IP bytes).
        rate: BitRate,
        /// The time the measurement spanned.
        span: SimDuration,
        /// Where it fell against the producer's search range.
        range: InRange,
    },
    /// An RTT sample timed by an output stage from its own release of a data segment to the
    /// ACK that covers it (`tcp::stage_rtt`): the time the stage held the segment is not in it,
    /// unlike `AckSample::rtt`, which starts when the connection stamps the segment. Fed just
    /// before the connection processes that ACK, at the ACK's time.
    StageRtt {
        /// The sample.
        rtt: SimDuration,
    },
}

/// The kinds of `CcInput`, for declaring what a controller needs and a variant produces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CcInputKind {
    /// `CcInput::AvailableBandwidth`.
    AvailableBandwidth,
    /// `CcInput::StageRtt`.
    StageRtt,
}

impl CcInput {
    /// Its kind.
    pub fn kind(&self) -> CcInputKind {
        match self {
            CcInput::AvailableBandwidth { .. } => CcInputKind::AvailableBandwidth,
            CcInput::StageRtt { .. } => CcInputKind::StageRtt,
        }
    }
}

impl CcInputKind {
    /// Its name in messages, e.g. `"available-bandwidth"`.
    pub fn name(self) -> &'static str {
        match self {
            CcInputKind::AvailableBandwidth => "available-bandwidth",
            CcInputKind::StageRtt => "stage-rtt",
        }
    }
}
