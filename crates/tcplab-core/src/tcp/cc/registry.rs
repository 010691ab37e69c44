//! The one list of built-in congestion controllers, and what a controller tells the rest of
//! tcplab about itself.
//!
//! Adding a controller is one file and one line: write `tcp/cc/NAME.rs` with the controller
//! (`impl CongestionControl`), its runtime configuration, its scenario table (`param_table!`)
//! and `impl Registered`, then add its line to `with_controllers!` below. Everything else is
//! generated from that list: the scenario's `cc = "NAME"` and its `[….tcp.NAME]` table
//! (`scenario::spec::TcpSpec`), the layering and checks of its parameters
//! (`scenario::resolve::cc`), `CcConfig`, and the `Controller` enum the connection dispatches
//! on.

use crate::params::{Overlay, ParamError};
use crate::tcp::config::RecoveryKind;

use super::{CcInputKind, CongestionControl};

/// Settings of the `tcp` table a controller's configuration or checks may read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CcContext {
    /// Slow-start byte-counting limit, segments per ACK (`tcp.abc_limit`; 0 = off).
    pub abc_limit: u32,
    /// Kernel HZ (`tcp.hz`).
    pub hz: u32,
    /// ECN asked for (`tcp.ecn`).
    pub ecn: bool,
    /// RFC 7323 timestamps offered (`tcp.timestamps`).
    pub timestamps: bool,
}

/// A registered controller: its name, its scenario table and how its configuration and
/// controller are built.
pub trait Registered {
    /// The name scenarios use (`cc = "NAME"`), kebab-case.
    const NAME: &'static str;
    /// The controller the connection runs.
    type Controller: CongestionControl + Clone + std::fmt::Debug;
    /// The controller's configuration, as `CcConfig` carries it.
    type Config: Copy + std::fmt::Debug + PartialEq;
    /// Its parameters, resolved (declared with `param_table!`; the table as written is
    /// `<Params as Overlay>::Table`, read from `[….tcp.NAME]`).
    type Params: Overlay;
    /// Check its parameters (run for every controller, used or not, so a bad value is never
    /// silently carried); the error's key is relative to the controller's table.
    fn check_params(p: &Self::Params) -> Result<(), ParamError> {
        let _ = p;
        Ok(())
    }
    /// Check the `tcp` table's settings this controller needs, when it is the one selected;
    /// the error's key is relative to the `tcp` table (e.g. `"abc_limit"`).
    fn check_selected(p: &Self::Params, tcp: &CcContext) -> Result<(), ParamError> {
        let _ = (p, tcp);
        Ok(())
    }
    /// The configuration from the resolved parameters and the `tcp` table's settings.
    fn config(p: &Self::Params, tcp: &CcContext) -> Self::Config;
    /// The controller, starting at `cwnd`/`ssthresh` bytes with the sender's `mss`.
    fn build(cfg: &Self::Config, cwnd: u64, ssthresh: u64, mss: u32) -> Self::Controller;
    /// True when the controller needs ECN: the connection asks for it, marks every segment
    /// ECT and echoes CE exactly (RFC 8257 §3.2), and `tcp.ecn` defaults to true.
    const NEEDS_ECN: bool = false;
    /// The recovery a connection uses without SACK when its recovery is `auto`.
    const RECOVERY_WITHOUT_SACK: RecoveryKind = RecoveryKind::NewReno;
    /// The inputs (`CcInput`) the controller needs from outside the ACK path; resolution
    /// refuses it unless the flow's variant produces every one (default: none).
    const INPUTS: &'static [CcInputKind] = &[];
    /// True when the controller draws random numbers: it is given a seeded stream of its own
    /// (`CongestionControl::seed`, stream `flows/<name>/cc/<end>`; default false).
    const DRAWS: bool = false;
}

/// Call `$m! { …tokens… controllers { … } }` with the list of built-in controllers, one per
/// line: `Variant, table, "name", registration type;` (the table name is the key of the
/// controller's parameter table under `tcp`; the registration type implements `Registered`).
macro_rules! with_controllers {
    ($m:ident { $($pre:tt)* }) => {
        $m! {
            $($pre)*
            controllers {
                /// Reno: RFC 5681 window rules and Reno fast recovery without SACK.
                Reno, reno, "reno", $crate::tcp::cc::reno::Reno;
                /// NewReno: RFC 5681 window rules and RFC 6582 recovery without SACK.
                NewReno, newreno, "newreno", $crate::tcp::cc::reno::NewReno;
                /// BIC as in Linux 2.6.16.
                Bic, bic, "bic", $crate::tcp::cc::bic::Bic;
                /// CUBIC as in modern Linux (HyStart).
                Cubic, cubic, "cubic", $crate::tcp::cc::cubic::Cubic;
                /// DCTCP (RFC 8257; Linux `tcp_dctcp.c`) over ECN.
                Dctcp, dctcp, "dctcp", $crate::tcp::cc::dctcp::Dctcp;
                /// HighSpeed TCP (RFC 3649): NewReno up to 38 segments, then a(w), b(w).
                HighSpeed, highspeed, "highspeed", $crate::tcp::cc::highspeed::HighSpeed;
                /// LEDBAT (RFC 6817): one-way delay held near a target, over TCP timestamps.
                Ledbat, ledbat, "ledbat", $crate::tcp::cc::ledbat::Ledbat;
                /// TCP-LP as Linux `tcp_lp.c` (v2.6.18): NewReno that yields on one-way delay.
                TcpLp, tcp_lp, "tcp-lp", $crate::tcp::cc::tcp_lp::TcpLp;
                /// ImTCP-bg (Tsugawa et al.): Reno capped by Ā·RTT_min from ImTCP's estimates.
                ImtcpBg, imtcp_bg, "imtcp-bg", $crate::tcp::cc::imtcp_bg::ImtcpBg;
                /// TCP Vegas as Linux `tcp_vegas.c`: the queue held at alpha..beta segments.
                Vegas, vegas, "vegas", $crate::tcp::cc::vegas::Vegas;
                /// H-TCP as Linux `tcp_htcp.c`: α growing with the time since the last loss,
                /// β = minRTT/maxRTT.
                Htcp, htcp, "htcp", $crate::tcp::cc::htcp::Htcp;
                /// BBR v1 as Linux `tcp_bbr.c` (4.9–5.x): a model of the path's bottleneck rate
                /// and round-trip time, paced at pacing_gain × BtlBw.
                Bbr, bbr, "bbr", $crate::tcp::cc::bbr::Bbr;
                /// TCP Westwood+ as Linux `tcp_westwood.c`: Reno's growth; after a loss the
                /// window of the bandwidth it measured once per RTT, bw·RTTmin.
                Westwood, westwood, "westwood", $crate::tcp::cc::westwood::Westwood;
            }
        }
    };
}
pub(crate) use with_controllers;
