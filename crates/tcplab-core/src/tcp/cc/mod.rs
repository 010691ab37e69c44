//! Congestion control: a narrow trait that sees named events (never sequence numbers) and
//! answers `cwnd()` and `ssthresh()` in bytes. Loss detection, SACK, RTT and RTO belong to the
//! connection. Built-in controllers are variants of the closed enum `Controller`, dispatched by
//! `match` and generated from the one list in `registry`: adding one is a new file here and a
//! line in that list, never a connection change.

pub mod bbr;
pub mod bic;
pub mod coupling;
pub mod cubic;
pub mod dctcp;
pub mod highspeed;
pub mod htcp;
pub mod imtcp_bg;
pub mod input;
pub mod ledbat;
pub mod rate;
pub mod registry;
pub mod reno;
pub mod tcp_lp;
pub mod vegas;
pub mod westwood;
pub mod window;

use crate::engine::Rng;
use crate::tcp::config::RecoveryKind;
use crate::units::{SimDuration, SimTime};

pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use bic::{Bic, BicConfig};
pub use coupling::{ControllerInput, CoupledGroup, CoupledMember};
pub use cubic::{Cubic, CubicConfig};
pub use dctcp::{Dctcp, DctcpConfig};
pub use highspeed::{HighSpeed, HighSpeedConfig};
pub use htcp::{Htcp, HtcpConfig};
pub use imtcp_bg::{ImtcpBg, ImtcpBgConfig, RttCut, RttSource};
pub use input::{CcInput, CcInputKind, InRange};
pub use ledbat::{Ledbat, LedbatConfig};
pub use rate::{CaState, RateSample};
pub use registry::{CcContext, Registered};
pub use reno::{NewReno, Reno, RenoConfig};
pub use tcp_lp::{LpVersion, TcpLp, TcpLpConfig};
pub use vegas::{Vegas, VegasConfig, VegasDiff};
pub use westwood::{RecoverySsthresh, Westwood, WestwoodConfig};
pub use window::{PacketWindow, WindowState};

/// An ACK that acknowledged new data, delivered to the controller outside fast recovery.
#[derive(Clone, Copy, Debug)]
pub struct AckSample {
    /// When the ACK arrived.
    pub now: SimTime,
    /// Bytes newly acknowledged (cumulatively).
    pub bytes_acked: u64,
    /// Segments removed from the retransmission queue by this ACK (Linux `pkts_acked`),
    /// SACKed ones included.
    pub packets_acked: u32,
    /// Payload bytes this ACK newly delivered (Linux `tp->delivered` − `prior_delivered`):
    /// bytes cumulatively acknowledged that were not SACKed before, plus bytes its SACK
    /// blocks newly cover. The measure of window growth: a controller grows by at most its
    /// own bound per delivered segment (`delivered_segments`), never by data the sender
    /// already knew had arrived.
    pub delivered: u64,
    /// Sender MSS (payload bytes per full segment).
    pub mss: u32,
    /// RTT sample carried by this ACK, if valid (Karn / timestamps).
    pub rtt: Option<SimDuration>,
    /// Smoothed RTT after this ACK, if known.
    pub srtt: Option<SimDuration>,
    /// Smallest RTT seen.
    pub min_rtt: Option<SimDuration>,
    /// Bytes in flight before this ACK was processed.
    pub inflight_before: u64,
    /// True when the sender was limited by cwnd (could not send a full segment more).
    pub cwnd_limited: bool,
    /// True while recovering from a timeout (slow start towards ssthresh).
    pub after_timeout: bool,
    /// True in the Linux "Open" state: no recovery, no timeout repair, no duplicate ACKs or
    /// SACKed data outstanding.
    pub open: bool,
    /// Packet-timed round trips completed so far (a round ends when data sent after it began
    /// is acknowledged); lets controllers act per round without seeing sequence numbers.
    pub round: u64,
    /// The ACK's timestamps when both ends use them: TSval (the peer's clock, in ticks of its
    /// timestamp clock) and TSecr (the echo of ours, in ticks of `ts_tick`). Their difference
    /// is a one-way-delay sample up to a constant clock offset (TCP-LP, Linux `tcp_lp`).
    pub timestamps: Option<(u32, u32)>,
    /// Our timestamp clock's tick (Linux: 1 ms, `TCP_TS_HZ` = 1000).
    pub ts_tick: SimDuration,
}

/// Loss detected by duplicate ACKs or SACK: the connection enters fast recovery.
#[derive(Clone, Copy, Debug)]
pub struct CongestionEvent {
    /// When recovery started.
    pub now: SimTime,
    /// Bytes in flight (FlightSize) at that moment.
    pub inflight: u64,
    /// Sender MSS.
    pub mss: u32,
}

/// Fast recovery ended (the cumulative ACK passed the recovery point).
#[derive(Clone, Copy, Debug)]
pub struct RecoveryExit {
    /// When recovery ended.
    pub now: SimTime,
    /// Bytes in flight after the ACK that ended recovery.
    pub inflight: u64,
    /// Sender MSS.
    pub mss: u32,
    /// The window recovery ended with, when the recovery procedure managed one that the
    /// controller should continue from (Linux rate-halving: cwnd = min(window, ssthresh));
    /// `None` for RFC 6582 / RFC 6675, where the window restarts at ssthresh.
    pub window: Option<u64>,
}

impl AckSample {
    /// Segments newly delivered (`delivered` in whole segments, a partial one counted as
    /// one, as Linux counts packets; at least one, as every ACK given to `on_ack` moved
    /// SND.UNA over data).
    pub fn delivered_segments(&self) -> u32 {
        self.delivered.div_ceil(self.mss.max(1) as u64).clamp(1, u32::MAX as u64) as u32
    }
}

/// The retransmission timer expired.
#[derive(Clone, Copy, Debug)]
pub struct TimeoutEvent {
    /// When it fired.
    pub now: SimTime,
    /// Bytes in flight when it fired.
    pub inflight: u64,
    /// Sender MSS.
    pub mss: u32,
    /// Consecutive timeouts so far, this one included.
    pub backoffs: u32,
}

/// The most state values a controller shows the `cc_state` trace (`CongestionControl::probe`).
pub const PROBE_VALUES: usize = 10;

/// The interface every congestion controller implements.
pub trait CongestionControl {
    /// Short name, e.g. `"newreno"`.
    fn name(&self) -> &'static str;
    /// Congestion window in bytes.
    fn cwnd(&self) -> u64;
    /// Slow-start threshold in bytes (`u64::MAX` = unlimited).
    fn ssthresh(&self) -> u64;
    /// Floor of the window during Linux rate-halving (`tcp_cwnd_down`): ssthresh/2 unless the
    /// controller says otherwise (Linux `min_cwnd` hook; BIC in 2.6.16: ssthresh).
    fn min_cwnd(&self) -> u64 {
        self.ssthresh() / 2
    }
    /// New data was acknowledged outside fast recovery.
    fn on_ack(&mut self, ack: &AckSample);
    /// Fast recovery begins: set ssthresh (the connection manages the window during recovery).
    fn on_congestion(&mut self, ev: &CongestionEvent);
    /// Fast recovery ended: set the window to continue with.
    fn on_recovery_exit(&mut self, ev: &RecoveryExit);
    /// A retransmission timeout.
    fn on_timeout(&mut self, ev: &TimeoutEvent);
    /// An ACK of new data on a connection using ECN: `bytes_acked` acknowledged, `ece` its
    /// ECN-Echo flag, `round` the packet-timed round it falls in (see `AckSample::round`).
    /// Called in and out of recovery, before any reaction to the ECE. Nothing by default.
    fn on_ecn_feedback(&mut self, bytes_acked: u64, ece: bool, round: u64) {
        let _ = (bytes_acked, ece, round);
    }
    /// ECN-Echo, at most once per window (RFC 3168 §6.1.2): by default the controller's own
    /// reduction on loss (its ssthresh) and the window cut to it at once, as for a loss with
    /// nothing to retransmit (Linux `tcp_enter_cwr` with the controller's `ssthresh`).
    fn on_ecn_echo(&mut self, ev: &CongestionEvent) {
        self.on_congestion(ev);
        match self.window() {
            WindowState::Bytes { cwnd, ssthresh } => *cwnd = (*ssthresh).min(*cwnd).max(ev.mss as u64),
            WindowState::Packets(w) => {
                w.cwnd = w.ssthresh.min(w.cwnd).max(1);
                w.cwnd_cnt = 0;
            }
        }
    }
    /// The window itself (cwnd, ssthresh and their counters, in the unit the controller keeps
    /// them), for a remedy that acts on it from outside the controller (a coordinator lowering
    /// it; see `sim::decp`). The controller continues from whatever it is left with.
    fn window(&mut self) -> WindowState<'_>;
    /// The most `on_ack(ack)` may grow the window, bytes, asked of the controller as it was
    /// before the ACK: the controller's own documented bound, which the connection's invariant
    /// checker (debug and test builds) holds every ACK to. Default: the bytes the ACK newly
    /// delivered (never more than one byte of window per byte delivered).
    fn growth_bound(&self, ack: &AckSample) -> u64 {
        ack.delivered
    }
    /// The ssthresh a loss must leave (fast recovery, ECN-Echo, or the first of consecutive
    /// timeouts), bytes, as an inclusive range, asked of the controller as it was before the
    /// loss; `ev.inflight` is FlightSize. The invariant checker holds every loss to it.
    /// Default: from 2·SMSS to the larger of cwnd and FlightSize.
    fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
        let floor = 2 * ev.mss as u64;
        (floor, self.cwnd().max(ev.inflight).max(floor))
    }
    /// Take an input from outside the connection (see `coupling`); false when this controller
    /// cannot use it (the scenario refuses such a pairing before the run). None by default.
    fn attach(&mut self, input: &ControllerInput) -> bool {
        let _ = input;
        false
    }
    /// The sender has sent all its data (its FIN is out): a coupled member leaves its group.
    fn on_sender_done(&mut self) {}
    /// An input from outside the ACK path (`input`), given outside fast recovery (the
    /// connection keeps one that arrives during recovery until it ends). It may lower the
    /// window, never raise it (the invariant checker holds it to that). Ignored by default.
    fn on_input(&mut self, now: SimTime, input: &CcInput) {
        let _ = (now, input);
    }
    /// Names of the state values `probe` shows, in order, at most `PROBE_VALUES` (none by
    /// default): the value columns of the `cc_state` trace for this controller.
    fn probe_names(&self) -> &'static [&'static str] {
        &[]
    }
    /// The controller's own state now, in `probe_names` order (NaN where a value is not
    /// defined yet); the slots past `probe_names` stay as given. Reading it changes nothing.
    fn probe(&self, out: &mut [f64; PROBE_VALUES]) {
        let _ = out;
    }
    /// True for a controller that owns the window on every ACK, in and out of recovery, as
    /// Linux's `cong_control` hook does (BBR): the connection then gives it `on_rate_sample`
    /// on every ACK instead of `on_ack` outside recovery, and keeps no recovery window of its
    /// own (`Recovery::Controller`). False by default.
    fn owns_window(&self) -> bool {
        false
    }
    /// An ACK with its delivery-rate sample (Linux `cong_control(sk, rs)`), for a controller
    /// that `owns_window`; called after the ACK's loss processing. Nothing by default.
    fn on_rate_sample(&mut self, rs: &RateSample) {
        let _ = rs;
    }
    /// True while the controller wants the sampler to mark the flight application-limited
    /// on every ACK (BBR's PROBE_RTT sets Linux's `tp->app_limited`, so that its low-rate
    /// samples do not lower BtlBw). False by default.
    fn holds_app_limited(&self) -> bool {
        false
    }
    /// The rate the connection paces new segments at, bytes per second (Linux
    /// `sk_pacing_rate` with internal pacing or fq): the next segment leaves no earlier than
    /// the last one's departure plus its length over this rate. `None` (the default): no
    /// pacing, segments leave as the windows allow.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// Give the controller its own seeded random stream (`flows/<name>/cc/<end>`), for a
    /// controller that draws (BBR's first gain-cycle phase). Ignored by default.
    fn seed(&mut self, rng: Rng) {
        let _ = rng;
    }
    /// The handshake is over, with `srtt` from its RTT sample if it gave one (Linux calls the
    /// controller's `init` then, in `tcp_init_congestion_control`: BBR starts pacing from that
    /// RTT). Ignored by default.
    fn on_established(&mut self, srtt: Option<SimDuration>) {
        let _ = srtt;
    }
}

macro_rules! define_controllers {
    (controllers { $( $(#[doc = $doc:literal])* $v:ident, $table:ident, $name:literal, $reg:ty; )* }) => {
        /// Which controller a connection uses, with its configuration (one variant per line of
        /// `registry::with_controllers!`).
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub enum CcConfig {
            $( $(#[doc = $doc])* $v(<$reg as Registered>::Config), )*
        }

        impl CcConfig {
            /// The controller's name.
            pub fn name(&self) -> &'static str {
                match self { $( CcConfig::$v(_) => <$reg as Registered>::NAME, )* }
            }

            /// True for a controller that needs ECN (DCTCP): the connection then asks for it,
            /// marks every segment ECT and echoes CE exactly (RFC 8257 §3.2).
            pub fn needs_ecn(&self) -> bool {
                match self { $( CcConfig::$v(_) => <$reg as Registered>::NEEDS_ECN, )* }
            }

            /// The recovery a connection uses without SACK when its recovery is `auto`: Reno
            /// fast recovery for Reno (RFC 5681 §3.2), NewReno (RFC 6582) for the others.
            pub fn recovery_without_sack(&self) -> RecoveryKind {
                match self { $( CcConfig::$v(_) => <$reg as Registered>::RECOVERY_WITHOUT_SACK, )* }
            }

            /// True for a controller that draws random numbers (`Registered::DRAWS`: BBR's
            /// first gain-cycle phase): the flow builder gives it a seeded stream of its own.
            pub fn draws(&self) -> bool {
                match self { $( CcConfig::$v(_) => <$reg as Registered>::DRAWS, )* }
            }

            /// The inputs the controller needs (`Registered::INPUTS`).
            pub fn inputs(&self) -> &'static [CcInputKind] {
                match self { $( CcConfig::$v(_) => <$reg as Registered>::INPUTS, )* }
            }
        }

        /// A built-in controller (one variant per registered controller).
        #[derive(Clone, Debug)]
        pub enum Controller {
            $( $(#[doc = $doc])* $v(<$reg as Registered>::Controller), )*
        }

        impl Controller {
            /// Build the controller for `cfg` with the initial window and ssthresh in bytes and
            /// the sender's MSS (payload bytes per segment).
            pub fn new(cfg: &CcConfig, initial_cwnd: u64, initial_ssthresh: u64, mss: u32) -> Self {
                match cfg { $( CcConfig::$v(c) => Controller::$v(<$reg as Registered>::build(c, initial_cwnd, initial_ssthresh, mss)), )* }
            }
        }

        impl CongestionControl for Controller {
            fn name(&self) -> &'static str {
                match self { $( Controller::$v(c) => c.name(), )* }
            }
            fn cwnd(&self) -> u64 {
                match self { $( Controller::$v(c) => c.cwnd(), )* }
            }
            fn ssthresh(&self) -> u64 {
                match self { $( Controller::$v(c) => c.ssthresh(), )* }
            }
            fn min_cwnd(&self) -> u64 {
                match self { $( Controller::$v(c) => c.min_cwnd(), )* }
            }
            fn on_ack(&mut self, ack: &AckSample) {
                match self { $( Controller::$v(c) => c.on_ack(ack), )* }
            }
            fn on_congestion(&mut self, ev: &CongestionEvent) {
                match self { $( Controller::$v(c) => c.on_congestion(ev), )* }
            }
            fn on_recovery_exit(&mut self, ev: &RecoveryExit) {
                match self { $( Controller::$v(c) => c.on_recovery_exit(ev), )* }
            }
            fn on_timeout(&mut self, ev: &TimeoutEvent) {
                match self { $( Controller::$v(c) => c.on_timeout(ev), )* }
            }
            fn window(&mut self) -> WindowState<'_> {
                match self { $( Controller::$v(c) => c.window(), )* }
            }
            fn on_ecn_feedback(&mut self, bytes_acked: u64, ece: bool, round: u64) {
                match self { $( Controller::$v(c) => c.on_ecn_feedback(bytes_acked, ece, round), )* }
            }
            fn on_ecn_echo(&mut self, ev: &CongestionEvent) {
                match self { $( Controller::$v(c) => c.on_ecn_echo(ev), )* }
            }
            fn growth_bound(&self, ack: &AckSample) -> u64 {
                match self { $( Controller::$v(c) => c.growth_bound(ack), )* }
            }
            fn loss_ssthresh(&self, ev: &CongestionEvent) -> (u64, u64) {
                match self { $( Controller::$v(c) => c.loss_ssthresh(ev), )* }
            }
            fn attach(&mut self, input: &ControllerInput) -> bool {
                match self { $( Controller::$v(c) => c.attach(input), )* }
            }
            fn on_sender_done(&mut self) {
                match self { $( Controller::$v(c) => c.on_sender_done(), )* }
            }
            fn probe_names(&self) -> &'static [&'static str] {
                match self { $( Controller::$v(c) => c.probe_names(), )* }
            }
            fn probe(&self, out: &mut [f64; PROBE_VALUES]) {
                match self { $( Controller::$v(c) => c.probe(out), )* }
            }
            fn on_input(&mut self, now: SimTime, input: &CcInput) {
                match self { $( Controller::$v(c) => c.on_input(now, input), )* }
            }
            fn owns_window(&self) -> bool {
                match self { $( Controller::$v(c) => c.owns_window(), )* }
            }
            fn on_rate_sample(&mut self, rs: &RateSample) {
                match self { $( Controller::$v(c) => c.on_rate_sample(rs), )* }
            }
            fn holds_app_limited(&self) -> bool {
                match self { $( Controller::$v(c) => c.holds_app_limited(), )* }
            }
            #[inline]
            fn pacing_rate(&self) -> Option<u64> {
                match self { $( Controller::$v(c) => c.pacing_rate(), )* }
            }
            fn seed(&mut self, rng: Rng) {
                match self { $( Controller::$v(c) => c.seed(rng), )* }
            }
            fn on_established(&mut self, srtt: Option<SimDuration>) {
                match self { $( Controller::$v(c) => c.on_established(srtt), )* }
            }
        }
    };
}

registry::with_controllers!(define_controllers {});

impl Controller {
    /// The rules of a controller that owns its window (`CongestionControl::owns_window`),
    /// checked by the connection's invariant checker against the controller as it was before
    /// the call; `Ok` for every other controller (their rules are the checker's own).
    pub fn owned_window_violation(&self, before: &Controller) -> Result<(), String> {
        match (self, before) {
            (Controller::Bbr(now), Controller::Bbr(b)) => now.check_rules(b),
            _ => Ok(()),
        }
    }

    /// The most the window may be once a recovery that ends now has ended, as the controller
    /// is before the call: its ssthresh, but for a controller that sets ssthresh anew on
    /// leaving recovery (Westwood+: bw·RTTmin, Linux `CA_EVENT_COMPLETE_CWR`), the ssthresh it
    /// will set. The invariant checker holds every recovery exit to it.
    pub fn recovery_exit_ssthresh(&self) -> u64 {
        match self {
            Controller::Westwood(w) => w.exit_ssthresh() as u64 * w.mss(),
            c => c.ssthresh(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_controller_reports_the_name_of_its_config() {
        // The name selects the recovery for "reno" and labels summaries and sweeps.
        for cfg in [
            CcConfig::Reno(RenoConfig::default()),
            CcConfig::NewReno(RenoConfig::default()),
            CcConfig::Bic(BicConfig::default()),
            CcConfig::Cubic(CubicConfig::default()),
            CcConfig::Dctcp(DctcpConfig::default()),
            CcConfig::HighSpeed(HighSpeedConfig::default()),
            CcConfig::Ledbat(LedbatConfig::default()),
            CcConfig::TcpLp(TcpLpConfig::default()),
            CcConfig::ImtcpBg(ImtcpBgConfig::default()),
            CcConfig::Vegas(VegasConfig::default()),
            CcConfig::Htcp(HtcpConfig::default()),
            CcConfig::Bbr(BbrConfig::default()),
            CcConfig::Westwood(WestwoodConfig::default()),
        ] {
            let c = Controller::new(&cfg, 14_600, u64::MAX, 1460);
            assert_eq!(c.name(), cfg.name());
        }
    }

    #[test]
    fn only_reno_recovers_the_reno_way_without_sack() {
        // RFC 5681 §3.2 leaves recovery at the first new ACK; every other controller here uses
        // RFC 6582's NewReno when SACK is off (the config decides, not the name).
        assert_eq!(CcConfig::Reno(RenoConfig::default()).recovery_without_sack(), RecoveryKind::Reno);
        for cfg in [
            CcConfig::NewReno(RenoConfig::default()),
            CcConfig::Bic(BicConfig::default()),
            CcConfig::Cubic(CubicConfig::default()),
            CcConfig::Dctcp(DctcpConfig::default()),
            CcConfig::HighSpeed(HighSpeedConfig::default()),
            CcConfig::Ledbat(LedbatConfig::default()),
            CcConfig::TcpLp(TcpLpConfig::default()),
            CcConfig::ImtcpBg(ImtcpBgConfig::default()),
            CcConfig::Vegas(VegasConfig::default()),
            CcConfig::Htcp(HtcpConfig::default()),
            CcConfig::Bbr(BbrConfig::default()),
            CcConfig::Westwood(WestwoodConfig::default()),
        ] {
            assert_eq!(cfg.recovery_without_sack(), RecoveryKind::NewReno, "{}", cfg.name());
        }
    }
}
