//! `defaults.tcp` and `flows[i].tcp`: the built-in settings, the host profiles, the layering of
//! the tables (built-ins, profile, `defaults.tcp`, the flow's own keys), the checks, and the
//! connection configuration a resolved table builds.

use serde::Serialize;

use super::cc::{CcLayers, ResolvedCc};
use super::variant::{ResolvedVariant, VariantLayers};
use super::{err, Res};
use crate::scenario::spec::{
    BackoffName, BackoffResetName, CcName, CwndLimitedName, CwrReductionName, Dur, EstimatorName, IwRuleName, LocalCongestionName, NagleRuleName, PartialAckTimerName, ProfileName,
    RcvWindowRuleName, RecoveryName, TcpSettings, TcpSpec, TimerGridName,
};
use crate::tcp::cc::CcContext;
use crate::tcp::{
    Backoff, BackoffReset, CwndLimitedRule, CwrReduction, InitialWindowRule, LocalCongestion, NagleRule, RcvWindowRule, RecoveryKind, RtoPolicy, RttEstimatorKind, TcpConfig,
};
use crate::units::{SimDuration, PS_PER_SEC};

/// The host's clock tick, 1/HZ rounded to whole picoseconds (below 1 ps of error per tick).
pub fn hz_tick(hz: u32) -> SimDuration {
    let hz = hz.max(1) as u64;
    SimDuration((PS_PER_SEC + hz / 2) / hz)
}

/// A resolved `tcp` table: every setting, and the controller with its own parameters.
/// Serialized as a complete `tcp` table (with the controller's `bic` or `cubic` table).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedTcp {
    /// The host profile whose defaults applied first.
    pub profile: ProfileName,
    /// Everything but the controller.
    #[serde(flatten)]
    pub settings: TcpSettings,
    /// The congestion controller and its parameters.
    #[serde(flatten)]
    pub cc: ResolvedCc,
    /// The variant policy and its parameters.
    #[serde(flatten)]
    pub variant: ResolvedVariant,
}

impl TcpSettings {
    /// What a controller reads of these settings.
    pub fn cc_context(&self) -> CcContext {
        CcContext { abc_limit: self.abc_limit, hz: self.hz, ecn: self.ecn, timestamps: self.timestamps }
    }

    /// Check every value; `path` is the table's (the controller checks what it needs of
    /// these, `CcLayers::check`).
    fn check(&self, path: &str) -> Res<()> {
        let g = |name: &str| format!("{path}.{name}");
        let mss = self.mss;
        if !(64..=65_495).contains(&mss) {
            return err(g("mss"), format!("{mss} is out of range (64..=65495 bytes)"));
        }
        for (name, buf) in [("sndbuf", self.sndbuf.0), ("rcvbuf", self.rcvbuf.0)] {
            // BSD's rule (round_buffers_to_mss) shrinks the MSS to a smaller send buffer.
            let least = if self.round_buffers_to_mss { 64 } else { mss as u64 };
            if buf < least {
                let why = if self.round_buffers_to_mss { "smaller than 64 bytes".to_string() } else { format!("smaller than one MSS ({mss})") };
                return err(g(name), format!("{buf} bytes is {why}"));
            }
        }
        for (name, v) in [("rx_truesize", self.rx_truesize.0), ("tcp_rmem_max", self.tcp_rmem_max.0)] {
            if v > 0 && !self.rcv_window_growth {
                return err(g(name), "only applies to rcv_window_growth = true (the window-growth check)");
            }
        }
        if !matches!(self.ip_version, 4 | 6) {
            return err(g("ip_version"), format!("{} is not an IP version (4 or 6)", self.ip_version));
        }
        if self.delack_segments == 0 {
            return err(g("delack_segments"), "must be at least 1");
        }
        if self.dupthresh == 0 {
            return err(g("dupthresh"), "must be at least 1");
        }
        if !(10..=MAX_HZ).contains(&self.hz) {
            let why = if self.hz > MAX_HZ { ": a tick below 1 ns (the clock resolves 1 ps; 10^9 is the most HZ taken)" } else { "" };
            return err(g("hz"), format!("{} is out of range (10..=1000000000){why}", self.hz));
        }
        let (rto_min, rto_max) = (self.rto_min.0, self.rto_max.0);
        if rto_min > rto_max {
            return err(g("rto_min"), format!("{rto_min} is above rto_max ({rto_max})"));
        }
        if self.rto_initial.0 == SimDuration::ZERO {
            return err(g("rto_initial"), "must be positive");
        }
        if rto_max == SimDuration::ZERO {
            return err(g("rto_max"), "must be positive");
        }
        // Timers count whole ticks of the granularity: a tick longer than the longest RTO
        // would make every timeout longer than rto_max.
        if self.rto_granularity.0 > rto_max {
            return err(g("rto_granularity"), format!("{} is above rto_max ({rto_max}): every timer would run past it", self.rto_granularity.0));
        }
        if self.rto_hybrid_switch > 40 {
            return err(g("rto_hybrid_switch"), "must be at most 40");
        }
        if self.ts_tick.0 == SimDuration::ZERO {
            return err(g("ts_tick"), "must be positive");
        }
        if self.timer_grid == TimerGridName::Hz && self.timer_ticks {
            return err(g("timer_grid"), "\"hz\" is a grid of its own: not with timer_ticks = true (BSD 3.2's global 200 ms and 500 ms ticks)");
        }
        if self.rto_slop.0 > SimDuration::ZERO && self.rtt_estimator != EstimatorName::Bsd {
            return err(g("rto_slop"), "only BSD's estimator adds a slop to the RTO: set rtt_estimator = \"bsd\" or rto_slop = \"0s\"");
        }
        if self.rto_slop.0 > rto_max {
            return err(g("rto_slop"), format!("{} is above rto_max ({rto_max})", self.rto_slop.0));
        }
        if !(0.0..=1.0).contains(&self.rto_randomize) {
            return err(g("rto_randomize"), format!("{} is out of range (0..=1, a fraction of the RTO; Vasudevan et al. use 0.5)", self.rto_randomize));
        }
        Ok(())
    }
}

/// With `timer_grid = "hz"`: the timers' tick, `rto_granularity` and `ts_tick` are 1/HZ (FreeBSD
/// 4.x counts its callouts, its RTT estimator and its TSval in `ticks`); a layer that sets
/// either to another value is refused, naming it (`path` is the table's).
fn apply_hz_grid(settings: &mut TcpSettings, layers: &[&TcpSpec], path: &str) -> Res<()> {
    let tick = Dur(hz_tick(settings.hz));
    let given = |f: fn(&TcpSpec) -> Option<Dur>| layers.iter().rev().find_map(|l| f(l));
    for (name, v) in [("rto_granularity", given(|l| l.rto_granularity)), ("ts_tick", given(|l| l.ts_tick))] {
        if let Some(v) = v.filter(|v| *v != tick) {
            let fmt = crate::units::format_duration;
            return err(format!("{path}.{name}"), format!("{} differs from the 1/HZ tick ({}) that timer_grid = \"hz\" sets; leave it out or change hz", fmt(v.0), fmt(tick.0)));
        }
    }
    settings.rto_granularity = tick;
    settings.ts_tick = tick;
    Ok(())
}

/// The highest `tcp.hz`: a tick of 1 ns (the host clock, `tcp::HostClock`, rounds the tick to
/// whole picoseconds, so up to here the tick is exact to 0.05 %).
pub const MAX_HZ: u32 = 1_000_000_000;

/// The settings a profile brings (applied over the built-ins, before `defaults.tcp`).
pub fn profile_tcp(p: ProfileName) -> TcpSpec {
    match p {
        ProfileName::Rfc => TcpSpec::default(),
        // Linux 2.6.16 (algorithms.md §1, §2.6): HZ = 250 so jiffies are 4 ms; RTO from the
        // Linux estimator with TCP_RTO_MIN 200 ms, TCP_TIMEOUT_INIT 3 s, TCP_RTO_MAX 120 s;
        // SACK + FACK with rate-halving; timestamps on; tcp_abc = 1; quick-ACK 16 and
        // quick ACKs while the receive window grows from 2.6.16's first window;
        // tcp_init_cwnd's MSS thresholds; delayed-ACK ato 40 ms; BIC with its 2.6.16 defaults.
        ProfileName::Linux2616 => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::Bic),
            sack: Some(true),
            timestamps: Some(true),
            window_scaling: Some(true),
            initial_cwnd: Some(0),
            initial_cwnd_rule: Some(IwRuleName::Linux),
            nagle_rule: Some(NagleRuleName::Linux),
            quickack: Some(16),
            rcv_window_growth: Some(true),
            rcv_window_rule: Some(RcvWindowRuleName::Linux2616),
            delack_segments: Some(2),
            delack_timeout: Some(Dur(SimDuration::from_millis(40))),
            rtt_estimator: Some(EstimatorName::Linux),
            rto_min: Some(Dur(SimDuration::from_millis(200))),
            rto_max: Some(Dur(SimDuration::from_secs(120))),
            rto_initial: Some(Dur(SimDuration::from_secs(3))),
            rto_granularity: Some(Dur(SimDuration::from_millis(4))),
            recovery: Some(RecoveryName::Linux),
            partial_ack_timer: Some(PartialAckTimerName::SlowButSteady),
            abc_limit: Some(1),
            ts_tick: Some(Dur(SimDuration::from_millis(4))),
            hz: Some(250),
            ..TcpSpec::default()
        },
        // Linux 2.4.18 (study 002's hosts; scenarios/p2_data_reservoir/EVIDENCE.md §3, read from 2.4.17's
        // tcp_input.c/tcp.h): HZ = 100, so jiffies and timestamps tick every 10 ms; the same
        // RTO estimator as 2.6.16 (tcp_rtt_estimator, tcp_set_rto: TCP_RTO_MIN 200 ms,
        // TCP_TIMEOUT_INIT 3 s, TCP_RTO_MAX 120 s); SACK + FACK with rate-halving
        // (tcp_fastretrans_alert, tcp_cwnd_down); timestamps and window scaling on; Reno
        // growth counted per ACK, no ABC (tcp_cong_avoid); tcp_init_cwnd's 2 segments for a
        // peer without cached metrics (every run starts fresh); quick-ACK 16 and the receive
        // window of tcp_select_initial_window/tcp_grow_window (line for line 2.6.16's);
        // delayed ACK every 2 segments or TCP_ATO_MIN 40 ms; a segment the host's own queue
        // refuses kept unsent, the window cut in CWR one segment per two ACKs (tcp_enter_cwr,
        // tcp_cwnd_down, tcp_complete_cwr); tcp_moderate_cwnd with tcp_max_burst = 3 where
        // tcp_fastretrans_alert calls it (tcp_try_to_open, the Loss state); RFC 2861 as 2.4
        // runs it (tcp_output.c tcp_cwnd_restart after an idle RTO; tcp.h tcp_cwnd_validate
        // and tcp_input.c tcp_cwnd_application_limited); D-SACK (tcp_dsack_set) and the undo
        // it and timestamps enable (tcp_try_undo_recovery/_partial/_dsack/_loss,
        // tcp_undo_cwr). The same functions in 2.4.20. MODEL, not modelled: the reordering
        // estimate undo raises (tcp_update_reordering: adaptive dupthresh), the Reno-only hold
        // at high_seq in tcp_try_undo_recovery, the ato adaptation, route metrics. 2.6.16's
        // bundle with 2.4's differences.
        ProfileName::Linux2418 => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::NewReno),
            initial_cwnd: Some(2),
            initial_cwnd_rule: None,
            rto_granularity: Some(Dur(SimDuration::from_millis(10))),
            abc_limit: Some(0),
            ts_tick: Some(Dur(SimDuration::from_millis(10))),
            hz: Some(100),
            // A segment the host's own queue refuses stays unsent and the window enters CWR
            // (2.4.17 tcp_transmit_skb → tcp_enter_cwr; tcp_write_xmit stops at it).
            local_congestion: Some(LocalCongestionName::Cwr),
            // 2.4's CWR state: ssthresh at once, cwnd down one segment per two ACKs
            // (tcp_enter_cwr, tcp_cwnd_down, tcp_complete_cwr).
            cwr_reduction: Some(CwrReductionName::RateHalving),
            // tcp_moderate_cwnd: cwnd ≤ in-flight + tcp_max_burst (3).
            moderate_cwnd: Some(3),
            // RFC 2861: tcp_cwnd_restart after an idle RTO; tcp_cwnd_application_limited.
            cwnd_idle_restart: Some(true),
            cwnd_app_limited_decay: Some(true),
            // RFC 2883 D-SACK (sysctl_tcp_dsack = 1) and the undo of needless reductions.
            dsack: Some(true),
            undo: Some(true),
            // 2.4's tcp_cong_avoid counts ACKs in snd_cwnd_cnt and adds one segment per cwnd
            // of them: SMSS²/cwnd per ACK exactly, never rounded up to a byte.
            newreno: crate::tcp::cc::reno::NewRenoSpec { exact_increase: Some(true), ..Default::default() },
            reno: crate::tcp::cc::reno::RenoSpec { exact_increase: Some(true), ..Default::default() },
            ..profile_tcp(ProfileName::Linux2616)
        },
        // Modern Linux (algorithms.md §2.6 "Modern Linux", §2.7): CUBIC + HyStart, IW 10,
        // RTO initial 1 s / min 200 ms / max 120 s, Linux estimator, timestamps (1 ms clock),
        // SACK; quick ACKs while the receive window grows from the 4.20–6.9 first window
        // (min(rcvbuf, 65535); 6.10+ starts at the whole buffer and does not grow: set
        // rcv_window_growth = false for it); Linux's SACK recovery with PRR (RFC 6937) and its
        // cwnd validation (3.16+). MODEL: loss marking is RFC 6675's (Linux 4.18+ uses RACK),
        // and there is no tail loss probe.
        ProfileName::LinuxModern => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::Cubic),
            sack: Some(true),
            timestamps: Some(true),
            window_scaling: Some(true),
            initial_cwnd: Some(10),
            nagle_rule: Some(NagleRuleName::Linux),
            quickack: Some(16),
            rcv_window_growth: Some(true),
            rcv_window_rule: Some(RcvWindowRuleName::Linux420),
            delack_segments: Some(2),
            delack_timeout: Some(Dur(SimDuration::from_millis(40))),
            rtt_estimator: Some(EstimatorName::Linux),
            rto_min: Some(Dur(SimDuration::from_millis(200))),
            rto_max: Some(Dur(SimDuration::from_secs(120))),
            rto_initial: Some(Dur(SimDuration::from_secs(1))),
            rto_granularity: Some(Dur(SimDuration::from_millis(1))),
            recovery: Some(RecoveryName::LinuxPrr),
            partial_ack_timer: Some(PartialAckTimerName::SlowButSteady),
            cwnd_limited: Some(CwndLimitedName::Linux),
            ts_tick: Some(Dur(SimDuration::from_millis(1))),
            hz: Some(1000),
            ..TcpSpec::default()
        },
        // FreeBSD 3.2 (algorithms.md §6.5; 4.4BSD/FreeBSD tcp_input.c tcp_mss, tcp_xmit_timer,
        // tcp_timer.h): Reno without SACK (3.2 predates FreeBSD's NewReno and SACK); RFC 1323
        // on (net.inet.tcp.rfc1323 = 1) for window scaling (64 KB needs it). MODEL: timestamps
        // off: on a LAN BSD's timestamp RTT (1 + slow ticks between TSval and TSecr) and its
        // per-segment timing both give 1 tick, and without the option a segment carries the
        // whole MSS (at MTU 1500 the same 32 cells either way); delayed ACK every 2
        // segments, sent by the 200 ms fast timer (PR_FASTHZ 5); the retransmission timer on
        // the 500 ms slow timer (PR_SLOWHZ 2), TCPTV_MIN 1 s, TCPTV_REXMTMAX 64 s, 3 s before a
        // sample, backoff tcp_backoff[] (doubling, at most 64×); socket buffers rounded up to
        // whole MSS; snd_cwnd not reduced to one segment for a peer in_localaddr; the
        // receiving application's read followed by tcp_usr_rcvd → tcp_output, whose window
        // update goes when the window opens by two segments or half the buffer.
        ProfileName::FreeBsd32 => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::Reno),
            sack: Some(false),
            timestamps: Some(false),
            window_scaling: Some(true),
            initial_cwnd: Some(0),
            initial_cwnd_rule: Some(IwRuleName::BsdLocal),
            nagle_rule: Some(NagleRuleName::Bsd),
            delack_segments: Some(2),
            delack_timeout: Some(Dur(SimDuration::from_millis(200))),
            rtt_estimator: Some(EstimatorName::Bsd),
            rto_min: Some(Dur(SimDuration::from_secs(1))),
            rto_max: Some(Dur(SimDuration::from_secs(64))),
            rto_initial: Some(Dur(SimDuration::from_secs(3))),
            rto_granularity: Some(Dur(SimDuration::from_millis(500))),
            recovery: Some(RecoveryName::Reno),
            limited_transmit: Some(false),
            cwnd_validation: Some(false),
            timer_ticks: Some(true),
            round_buffers_to_mss: Some(true),
            window_update_on_read: Some(true),
            ..TcpSpec::default()
        },
        // FreeBSD 4.10 (study 003; dev/p3/EVIDENCE.md §8, which records what of it was read):
        // NewReno without SACK (tcp_do_newreno = 1 in 4.x's tcp_output.c; SACK came with 5.3);
        // RFC 1323 on (tcp_do_rfc1323 = 1: window scaling and timestamps, TSval in 1/HZ
        // ticks); timers are per-connection callouts counted in 1/HZ ticks (timer_grid = "hz";
        // HZ 100, i386's default, the slides' runs set 20,000); delayed ACK when the second
        // segment arrives or tcp_delacktime = TCPTV_DELACK (hz/10, 100 ms) after the first,
        // its callout counted from that segment; the RTO from tcp_xmit_timer in ticks
        // (TCP_REXMTVAL as 3.2's), with Dillon's 2002 change (FreeBSD commit 701bec5a; in
        // RELENG_4 as tcp_timer.h 1.18.2.1): tcp_rexmit_min = TCPTV_MIN = hz/33 ticks (30 ms
        // at HZ 100) and tcp_rexmit_slop = TCPTV_CPU_VAR = hz/5 (200 ms) added by
        // TCPT_RANGESET to every RTO; TCPTV_REXMTMAX 64 s, TCPTV_RTOBASE 3 s, tcp_backoff[]
        // doubling; initial window ss_fltsz = 1 segment (net.inet.tcp.slowstart_flightsize;
        // ss_fltsz_local = 4 for a peer in_localaddr, not used: the testbed's hosts sit
        // behind routers); socket buffers rounded up to whole MSS and the read's window
        // update (tcp_usr_rcvd → tcp_output), as 3.2. Inferred, not read in a 4.10 tree:
        // limited transmit off (not found in 4.x; [?]), the slop's MFC to RELENG_4, the
        // delack value. MODEL, not modelled: the restart to ss_fltsz after an idle RTO,
        // inflight limiting (net.inet.tcp.inflight_enable, off by default in 4.x: [?]),
        // TCPTV_MIN's integer ticks (⌊hz/33⌋: 30.3 ms at HZ 20,000; here 30 ms).
        ProfileName::FreeBsd410 => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::NewReno),
            sack: Some(false),
            timestamps: Some(true),
            window_scaling: Some(true),
            initial_cwnd: Some(1),
            nagle_rule: Some(NagleRuleName::Bsd),
            delack_segments: Some(2),
            delack_timeout: Some(Dur(SimDuration::from_millis(100))),
            rtt_estimator: Some(EstimatorName::Bsd),
            rto_min: Some(Dur(SimDuration::from_millis(30))),
            rto_max: Some(Dur(SimDuration::from_secs(64))),
            rto_initial: Some(Dur(SimDuration::from_secs(3))),
            rto_slop: Some(Dur(SimDuration::from_millis(200))),
            recovery: Some(RecoveryName::Newreno),
            partial_ack_timer: Some(PartialAckTimerName::SlowButSteady),
            limited_transmit: Some(false),
            cwnd_validation: Some(false),
            timer_grid: Some(TimerGridName::Hz),
            hz: Some(100),
            round_buffers_to_mss: Some(true),
            window_update_on_read: Some(true),
            ..TcpSpec::default()
        },
    }
}

/// Resolve a `tcp` table: the built-ins, then the profile named by `flow` or `defaults`
/// (default `"rfc"`), then `defaults`, then `flow`; every value checked, errors under `path`.
pub fn resolve_tcp(defaults: &TcpSpec, flow: &TcpSpec, path: &str) -> Res<ResolvedTcp> {
    let profile = flow.profile.or(defaults.profile).unwrap_or(ProfileName::Rfc);
    let mut settings = TcpSettings::builtin();
    let mut cc = CcLayers::builtin();
    let mut variant = VariantLayers::default();
    let layers = [&profile_tcp(profile), defaults, flow];
    for layer in layers {
        settings.overlay(layer);
        cc.overlay(layer);
        variant.overlay(layer.variant, &layer.ahtcp, &layer.imtcp);
    }
    // A controller that needs ECN (DCTCP) turns it on unless a layer said otherwise (which
    // its check refuses).
    if cc.needs_ecn() && layers.iter().all(|l| l.ecn.is_none()) {
        settings.ecn = true;
    }
    settings.check(path)?;
    if settings.timer_grid == TimerGridName::Hz {
        apply_hz_grid(&mut settings, &layers, path)?;
    }
    // `undo` set in a table (not by the profile) with neither SACK nor timestamps can never
    // act: refused. The profile's over both turned off is inert, as 2.4's is.
    if settings.undo && !settings.sack && !settings.timestamps && [defaults, flow].iter().any(|l| l.undo == Some(true)) {
        return err(format!("{path}.undo"), "needs sack or timestamps: without D-SACKs or echoed timestamps no retransmission can be shown needless (set undo = false)");
    }
    cc.check(path, &settings.cc_context())?;
    let variant = variant.select(path, settings.mss, settings.nagle, settings.delack_segments)?;
    let cc = cc.select();
    super::variant::check_inputs(path, &cc.config(&settings.cc_context()), &variant)?;
    Ok(ResolvedTcp { profile, settings, cc, variant })
}

impl ResolvedTcp {
    /// The connection configuration (both ends of a flow use it).
    pub fn config(&self) -> TcpConfig {
        #[rustfmt::skip]
        let TcpSettings {
            mss, sack, timestamps, window_scaling, nagle, nagle_rule, sndbuf, rcvbuf, initial_cwnd, initial_cwnd_rule, quickack,
            rcv_window_growth, rcv_window_rule, rx_truesize, tcp_rmem_max, initial_ssthresh, delack_segments, delack_timeout, rtt_estimator,
            rto_min, rto_max, rto_initial, rto_granularity, rto_backoff, rto_hybrid_switch, rto_backoff_reset, rto_randomize, ecn,
            limited_transmit, cwnd_validation, cwnd_limited, timer_ticks, timer_grid, rto_slop, round_buffers_to_mss, window_update_on_read, dupthresh, partial_ack_timer, recovery, abc_limit: _, ts_tick, hz,
            ip_version,
            local_congestion, cwr_reduction, moderate_cwnd, cwnd_idle_restart, cwnd_app_limited_decay, dsack, undo,
        } = self.settings;
        TcpConfig {
            mss,
            sack,
            timestamps,
            window_scaling,
            nagle,
            nagle_rule: match nagle_rule {
                NagleRuleName::Rfc896 => NagleRule::Rfc896,
                NagleRuleName::Bsd => NagleRule::Bsd,
                NagleRuleName::Linux => NagleRule::Linux,
            },
            sndbuf: sndbuf.0,
            rcvbuf: rcvbuf.0,
            initial_cwnd,
            initial_cwnd_rule: match initial_cwnd_rule {
                IwRuleName::Rfc5681 => InitialWindowRule::Rfc5681,
                IwRuleName::Linux => InitialWindowRule::Linux,
                IwRuleName::BsdLocal => InitialWindowRule::BsdLocal,
            },
            quickack,
            rcv_window_growth,
            rcv_window_rule: match rcv_window_rule {
                RcvWindowRuleName::Linux2616 => RcvWindowRule::Linux2616,
                RcvWindowRuleName::Linux420 => RcvWindowRule::Linux420,
            },
            rx_truesize: rx_truesize.0,
            tcp_rmem_max: tcp_rmem_max.0,
            initial_ssthresh: initial_ssthresh.bytes(),
            delack_segments,
            delack_timeout: delack_timeout.0,
            rtt_estimator: match rtt_estimator {
                EstimatorName::Rfc6298 => RttEstimatorKind::Rfc6298,
                EstimatorName::Linux => RttEstimatorKind::Linux,
                EstimatorName::Bsd => RttEstimatorKind::Bsd,
            },
            rto: RtoPolicy {
                min: rto_min.0,
                max: rto_max.0,
                initial: rto_initial.0,
                granularity: rto_granularity.0,
                backoff: match rto_backoff {
                    BackoffName::Exponential => Backoff::Exponential,
                    BackoffName::Linear => Backoff::Linear,
                    BackoffName::Hybrid => Backoff::Hybrid { switch_after: rto_hybrid_switch },
                    BackoffName::HybridLinearFirst => Backoff::LinearThenExponential { switch_after: rto_hybrid_switch },
                },
                backoff_reset: match rto_backoff_reset {
                    BackoffResetName::RttSample => BackoffReset::RttSample,
                    BackoffResetName::NewAck => BackoffReset::NewAck,
                },
                randomize: rto_randomize,
                slop: rto_slop.0,
            },
            limited_transmit,
            cwnd_validation,
            cwnd_limited: match cwnd_limited {
                CwndLimitedName::Flight => CwndLimitedRule::Flight,
                CwndLimitedName::Linux => CwndLimitedRule::Linux,
            },
            dupthresh,
            rto_every_partial_ack: partial_ack_timer == PartialAckTimerName::SlowButSteady,
            recovery: match recovery {
                RecoveryName::Auto => RecoveryKind::Auto,
                RecoveryName::Reno => RecoveryKind::Reno,
                RecoveryName::Newreno => RecoveryKind::NewReno,
                RecoveryName::Sack => RecoveryKind::Sack,
                RecoveryName::Linux => RecoveryKind::LinuxSack,
                RecoveryName::LinuxPrr => RecoveryKind::LinuxPrr,
            },
            cc: self.cc.config(&self.settings.cc_context()),
            ecn,
            ts_tick: ts_tick.0,
            persist_min: SimDuration::from_millis(200),
            hz,
            timer_ticks,
            timer_tick: (timer_grid == TimerGridName::Hz).then(|| hz_tick(hz)),
            round_buffers_to_mss,
            window_update_on_read,
            ipv6: ip_version == 6,
            local_congestion: match local_congestion {
                LocalCongestionName::Drop => LocalCongestion::Drop,
                LocalCongestionName::Cwr => LocalCongestion::Cwr,
            },
            moderate_cwnd,
            cwnd_idle_restart,
            cwnd_app_limited_decay,
            cwr_reduction: match cwr_reduction {
                CwrReductionName::AtOnce => CwrReduction::AtOnce,
                CwrReductionName::RateHalving => CwrReduction::RateHalving,
            },
            dsack,
            undo,
        }
    }
}
