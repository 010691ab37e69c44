//! TCP: the sans-I/O connection, the endpoint that wraps it with a variant policy (AHTCP's in `ahtcp`), its configuration, RTT/RTO, its timer table, range sets for
//! SACK and reassembly, and the congestion controllers.

pub mod ahtcp;
pub mod cc;
pub mod config;
pub mod conn;
pub mod endpoint;
pub mod host_clock;
pub mod imtcp;
pub mod ranges;
pub mod rtt;
pub(crate) mod scoreboard;
pub mod stage_rtt;
pub mod timers;

pub use config::{CwndLimitedRule, CwrReduction, InitialWindowRule, LocalCongestion, NagleRule, RcvWindowRule, RecoveryKind, TcpConfig};
pub use conn::{ConnStats, Connection, Measurement, Output, RangeFlag, State, TcpEvent, TcpEventKind};
pub use endpoint::{Arrival, Endpoint, Variant, Wake};
pub use host_clock::HostClock;
pub use rtt::{Backoff, BackoffReset, RtoPolicy, RttEstimatorKind};
pub use stage_rtt::ReleaseLog;
