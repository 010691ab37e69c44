//! Resolution (fill every default, check every value and cross-reference) and construction of
//! the simulation from a resolved scenario.

use std::collections::BTreeMap;
use std::path::Path;

use crate::app::{Application, BulkSender, CbrSource, Sink, Socket};
use crate::engine::SeedTree;
use crate::net::harmonizer::{Harmonizer, HarmonizerConfig};
use crate::net::impair::ImpairConfig;
use crate::net::link_layer::LinkLayer;
use crate::net::packet::{IPV4_HEADER, UDP_HEADER};
use crate::net::pipe::Pipe;
use crate::net::queue::Queue;
use crate::net::route::{Graph, NodeId, NodeRole};
use crate::scenario::spec::*;
use crate::scenario::ScenarioError;
use crate::sim::{Coordinator, Flow, FlowEngine, FlowInfo, Simulation, StopRule, Tap, TcpFlow, UdpFlow};
use crate::tcp::cc::{BicConfig, CcConfig, CubicConfig, RenoConfig};
use crate::tcp::{Backoff, Connection, InitialWindowRule, RcvWindowRule, RecoveryKind, RtoPolicy, RttEstimatorKind, TcpConfig};
use crate::trace::pcap::{host_address, PcapWriter, WireIdentity};
use crate::units::{BitRate, QueueLimit, SimDuration, SimTime};

type Res<T> = Result<T, ScenarioError>;

/// The most link-layer framing a link may add per packet (an 802.1Q-tagged Ethernet frame with
/// preamble and gap adds 42; the limit leaves room for tunnels and odd framings).
const MAX_FRAMING: u64 = 1024;

/// The most flows a scenario may expand to (memory: about 3.5 KB per flow plus the packets in
/// flight, `make bench-memory`; 10⁵ flows ≈ 0.4 GB before any packet).
pub const MAX_FLOWS: u64 = 100_000;

/// The shortest period of a recurring event (throughput samples, coordinators, harmonizer
/// updates): 1 µs, below one 1500-byte packet at 10 Gb/s. Shorter periods only cost events.
pub const MIN_PERIOD: SimDuration = SimDuration(1_000_000);

/// The most rows the throughput trace may reach (flows × bins): 2·10⁸ rows take ≈ 5 GB.
pub const MAX_THROUGHPUT_ROWS: u64 = 200_000_000;

/// The largest seed: seeds are in [0, 2⁶³), since the resolved scenario carries its seed as a
/// TOML integer (signed 64-bit).
pub const MAX_SEED: u64 = i64::MAX as u64;

fn check_period(path: String, d: SimDuration) -> Res<()> {
    if d < MIN_PERIOD {
        return err(path, format!("{} is shorter than the shortest period tcplab allows (1us)", crate::units::format_duration(d)));
    }
    Ok(())
}

fn err<T>(path: impl Into<String>, reason: impl Into<String>) -> Res<T> {
    Err(ScenarioError::new(path, reason))
}

/// Built-in TCP defaults, as a fully populated spec (docs/scenario-format.md lists them).
pub fn builtin_tcp() -> TcpSpec {
    let d = TcpConfig::default();
    let bic = BicConfig::default();
    TcpSpec {
        profile: Some(ProfileName::Rfc),
        initial_cwnd_rule: Some(IwRuleName::Rfc5681),
        quickack: Some(0),
        rcv_window_growth: Some(false),
        rcv_window_rule: Some(RcvWindowRuleName::Linux2616),
        hz: Some(1000),
        bic_max_increment: Some(bic.max_increment),
        bic_beta: Some(bic.beta),
        bic_low_window: Some(bic.low_window),
        bic_initial_ssthresh: Some(bic.initial_ssthresh),
        bic_fast_convergence: Some(bic.fast_convergence),
        bic_smooth_part: Some(bic.smooth_part),
        cc: Some(CcName::Newreno),
        mss: Some(d.mss),
        sack: Some(d.sack),
        timestamps: Some(d.timestamps),
        window_scaling: Some(d.window_scaling),
        nagle: Some(d.nagle),
        sndbuf: Some(Size(d.sndbuf)),
        rcvbuf: Some(Size(d.rcvbuf)),
        initial_cwnd: Some(d.initial_cwnd),
        initial_ssthresh: Some(QLimit(QueueLimit::Unlimited)),
        delack_segments: Some(d.delack_segments),
        delack_timeout: Some(Dur(d.delack_timeout)),
        rtt_estimator: Some(EstimatorName::Rfc6298),
        rto_min: Some(Dur(d.rto.min)),
        rto_max: Some(Dur(d.rto.max)),
        rto_initial: Some(Dur(d.rto.initial)),
        rto_granularity: Some(Dur(d.rto.granularity)),
        rto_backoff: Some(BackoffName::Exponential),
        rto_hybrid_switch: Some(3),
        limited_transmit: Some(d.limited_transmit),
        cwnd_validation: Some(d.cwnd_validation),
        dupthresh: Some(d.dupthresh),
        recovery: Some(RecoveryName::Auto),
        abc_limit: Some(RenoConfig::default().abc_limit),
        ts_tick: Some(Dur(d.ts_tick)),
    }
}

/// The TCP defaults a profile brings (applied over the built-ins).
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
            abc_limit: Some(1),
            ts_tick: Some(Dur(SimDuration::from_millis(4))),
            hz: Some(250),
            ..TcpSpec::default()
        },
        // Modern Linux (algorithms.md §2.6 "Modern Linux", §2.7): CUBIC + HyStart, IW 10,
        // RTO initial 1 s / min 200 ms / max 120 s, Linux estimator, timestamps (1 ms clock),
        // SACK; quick ACKs while the receive window grows from the 4.20–6.9 first window
        // (min(rcvbuf, 65535); 6.10+ starts at the whole buffer and does not grow: set
        // rcv_window_growth = false for it); MODEL: PRR is represented by the rate-halving recovery.
        ProfileName::LinuxModern => TcpSpec {
            profile: Some(p),
            cc: Some(CcName::Cubic),
            sack: Some(true),
            timestamps: Some(true),
            window_scaling: Some(true),
            initial_cwnd: Some(10),
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
            recovery: Some(RecoveryName::Linux),
            ts_tick: Some(Dur(SimDuration::from_millis(1))),
            hz: Some(1000),
            ..TcpSpec::default()
        },
    }
}

/// Fields of `over` win over `base`.
fn merge_tcp(base: &TcpSpec, over: &TcpSpec) -> TcpSpec {
    macro_rules! pick {
        ($($f:ident),*) => { TcpSpec { $($f: over.$f.clone().or_else(|| base.$f.clone()),)* } };
    }
    pick!(
        profile,
        cc,
        mss,
        sack,
        timestamps,
        window_scaling,
        nagle,
        sndbuf,
        rcvbuf,
        initial_cwnd,
        initial_cwnd_rule,
        quickack,
        rcv_window_growth,
        rcv_window_rule,
        initial_ssthresh,
        delack_segments,
        delack_timeout,
        rtt_estimator,
        rto_min,
        rto_max,
        rto_initial,
        rto_granularity,
        rto_backoff,
        rto_hybrid_switch,
        limited_transmit,
        cwnd_validation,
        dupthresh,
        recovery,
        abc_limit,
        ts_tick,
        hz,
        bic_max_increment,
        bic_beta,
        bic_low_window,
        bic_initial_ssthresh,
        bic_fast_convergence,
        bic_smooth_part
    )
}

/// Resolve TCP settings: built-ins, then the profile named by the flow or the defaults, then
/// `defaults.tcp`, then the flow's own keys.
fn resolve_tcp(defaults: &TcpSpec, flow: &TcpSpec) -> TcpSpec {
    let profile = flow.profile.or(defaults.profile).unwrap_or(ProfileName::Rfc);
    let base = merge_tcp(&builtin_tcp(), &profile_tcp(profile));
    let mut t = merge_tcp(&merge_tcp(&base, defaults), flow);
    t.profile = Some(profile);
    t
}

/// Turn a fully populated spec into a connection configuration, checking every value.
pub fn tcp_config(t: &TcpSpec, path: &str) -> Res<TcpConfig> {
    let g = |name: &str| format!("{path}.{name}");
    fn v<T>(x: Option<T>) -> T {
        x.expect("resolved TCP specs are fully populated")
    }
    let timestamps: bool = v(t.timestamps);
    let mss: u32 = v(t.mss);
    if !(64..=65_495).contains(&mss) {
        return err(g("mss"), format!("{mss} is out of range (64..=65495 bytes)"));
    }
    let sndbuf = v(t.sndbuf.map(|s| s.0));
    let rcvbuf = v(t.rcvbuf.map(|s| s.0));
    if sndbuf < mss as u64 {
        return err(g("sndbuf"), format!("{sndbuf} bytes is smaller than one MSS ({mss})"));
    }
    if rcvbuf < mss as u64 {
        return err(g("rcvbuf"), format!("{rcvbuf} bytes is smaller than one MSS ({mss})"));
    }
    let delack_segments = v(t.delack_segments);
    if delack_segments == 0 {
        return err(g("delack_segments"), "must be at least 1");
    }
    let dupthresh = v(t.dupthresh);
    if dupthresh == 0 {
        return err(g("dupthresh"), "must be at least 1");
    }
    let abc = v(t.abc_limit);
    let cc_name = v(t.cc);
    if abc == 0 && cc_name != CcName::Bic {
        return err(g("abc_limit"), "must be at least 1 (0, ABC off, is for cc = \"bic\")");
    }
    let hz = v(t.hz);
    if !(10..=100_000).contains(&hz) {
        return err(g("hz"), format!("{hz} is out of range (10..=100000)"));
    }
    let bic = BicConfig {
        fast_convergence: v(t.bic_fast_convergence),
        max_increment: v(t.bic_max_increment),
        low_window: v(t.bic_low_window),
        beta: v(t.bic_beta),
        initial_ssthresh: v(t.bic_initial_ssthresh),
        smooth_part: v(t.bic_smooth_part),
        abc,
        hz,
    };
    if bic.max_increment == 0 {
        return err(g("bic_max_increment"), "must be at least 1");
    }
    if !(1..1024).contains(&bic.beta) {
        return err(g("bic_beta"), "must be in 1..1024 (the kept fraction ×1024)");
    }
    if bic.smooth_part == 0 {
        return err(g("bic_smooth_part"), "must be at least 1");
    }
    let rto_min = v(t.rto_min).0;
    let rto_max = v(t.rto_max).0;
    if rto_min > rto_max {
        return err(g("rto_min"), format!("{rto_min} is above rto_max ({rto_max})"));
    }
    let rto_initial = v(t.rto_initial).0;
    if rto_initial == SimDuration::ZERO {
        return err(g("rto_initial"), "must be positive");
    }
    if rto_max == SimDuration::ZERO {
        return err(g("rto_max"), "must be positive");
    }
    let hybrid = v(t.rto_hybrid_switch);
    if hybrid > 40 {
        return err(g("rto_hybrid_switch"), "must be at most 40");
    }
    let ts_tick = v(t.ts_tick).0;
    if ts_tick == SimDuration::ZERO {
        return err(g("ts_tick"), "must be positive");
    }
    let initial_ssthresh = match v(t.initial_ssthresh).0 {
        QueueLimit::Unlimited => u64::MAX,
        QueueLimit::Bytes(b) => b,
        QueueLimit::Packets(_) => return err(g("initial_ssthresh"), "give a size (e.g. \"64KB\") or \"unlimited\""),
    };
    let reno = RenoConfig { abc_limit: abc };
    Ok(TcpConfig {
        mss,
        sack: v(t.sack),
        timestamps,
        window_scaling: v(t.window_scaling),
        nagle: v(t.nagle),
        sndbuf,
        rcvbuf,
        initial_cwnd: v(t.initial_cwnd),
        initial_cwnd_rule: match v(t.initial_cwnd_rule) {
            IwRuleName::Rfc5681 => InitialWindowRule::Rfc5681,
            IwRuleName::Linux => InitialWindowRule::Linux,
        },
        quickack: v(t.quickack),
        rcv_window_growth: v(t.rcv_window_growth),
        rcv_window_rule: match v(t.rcv_window_rule) {
            RcvWindowRuleName::Linux2616 => RcvWindowRule::Linux2616,
            RcvWindowRuleName::Linux420 => RcvWindowRule::Linux420,
        },
        initial_ssthresh,
        delack_segments,
        delack_timeout: v(t.delack_timeout).0,
        rtt_estimator: match v(t.rtt_estimator) {
            EstimatorName::Rfc6298 => RttEstimatorKind::Rfc6298,
            EstimatorName::Linux => RttEstimatorKind::Linux,
        },
        rto: RtoPolicy {
            min: rto_min,
            max: rto_max,
            initial: rto_initial,
            granularity: v(t.rto_granularity).0,
            backoff: match v(t.rto_backoff) {
                BackoffName::Exponential => Backoff::Exponential,
                BackoffName::Linear => Backoff::Linear,
                BackoffName::Hybrid => Backoff::Hybrid { switch_after: hybrid },
            },
        },
        limited_transmit: v(t.limited_transmit),
        cwnd_validation: v(t.cwnd_validation),
        dupthresh,
        recovery: match v(t.recovery) {
            RecoveryName::Auto => RecoveryKind::Auto,
            RecoveryName::Reno => RecoveryKind::Reno,
            RecoveryName::Newreno => RecoveryKind::NewReno,
            RecoveryName::Sack => RecoveryKind::Sack,
            RecoveryName::Linux => RecoveryKind::LinuxSack,
        },
        cc: match cc_name {
            CcName::Reno => CcConfig::Reno(reno),
            CcName::Newreno => CcConfig::NewReno(reno),
            CcName::Bic => CcConfig::Bic(bic),
            CcName::Cubic => CcConfig::Cubic(CubicConfig { hz, ..CubicConfig::default() }),
        },
        ts_tick,
        persist_min: SimDuration::from_millis(200),
    })
}

fn check_queue(q: &QueueSpec, path: &str) -> Res<()> {
    if let QueueSpec::Classes(c) = q {
        if c.classes.is_empty() || c.classes.len() > 8 {
            return err(format!("{path}.classes"), "give 1 to 8 class limits");
        }
    }
    Ok(())
}

fn queue_of(q: &QueueSpec) -> Queue {
    match q {
        QueueSpec::Limit(l) => Queue::fifo(l.0),
        QueueSpec::Classes(c) => Queue::classes(&c.classes.iter().map(|l| l.0).collect::<Vec<_>>()),
    }
}

/// Fill every default and check every value and reference; the result serializes to the
/// "fully resolved" scenario.
pub fn resolve(sc: &Scenario) -> Res<Scenario> {
    let mut r = sc.clone();
    if r.name.trim().is_empty() {
        return err("name", "must not be empty");
    }
    // Run.
    let stop = r.run.stop.unwrap_or(if r.run.duration.is_some() { StopSpec::Duration } else { StopSpec::FlowsDone });
    if stop == StopSpec::Duration && r.run.duration.is_none() {
        return err("run.stop", "\"duration\" needs run.duration");
    }
    if r.run.duration.is_some_and(|d| d.0 == SimDuration::ZERO) {
        return err("run.duration", "must be positive");
    }
    r.run.stop = Some(stop);
    if let Some(seed) = r.run.seed.filter(|&s| s > MAX_SEED) {
        return err("run.seed", format!("must be an integer in [0, 2^63), got {seed}"));
    }
    // Defaults.
    let default_queue = r.defaults.queue.clone().unwrap_or(QueueSpec::Limit(QLimit(QueueLimit::Packets(1000))));
    check_queue(&default_queue, "defaults.queue")?;
    r.defaults.queue = Some(default_queue.clone());
    let default_tcp = resolve_tcp(&sc.defaults.tcp, &TcpSpec::default());
    tcp_config(&default_tcp, "defaults.tcp")?;
    r.defaults.tcp = default_tcp.clone();

    // Names.
    let mut names: BTreeMap<String, &'static str> = BTreeMap::new();
    let mut add_name = |name: &str, kind: &'static str, path: String| -> Res<()> {
        if name.trim().is_empty() {
            return err(path, "must not be empty");
        }
        if let Some(k) = names.insert(name.to_string(), kind) {
            return err(path, format!("'{name}' is already the name of a {k}"));
        }
        Ok(())
    };
    for (i, h) in r.hosts.iter().enumerate() {
        add_name(&h.name, "host", format!("hosts[{i}].name"))?;
    }
    for h in r.hosts.iter_mut() {
        h.start_skew = Some(h.start_skew.unwrap_or(Dur(SimDuration::ZERO)));
        h.jitter = Some(h.jitter.unwrap_or(Dur(SimDuration::ZERO)));
    }
    for (i, s) in r.switches.iter().enumerate() {
        add_name(&s.name, "switch", format!("switches[{i}].name"))?;
    }
    for (i, e) in r.emulators.iter().enumerate() {
        add_name(&e.name, "emulator", format!("emulators[{i}].name"))?;
    }

    // Emulators.
    for (i, e) in r.emulators.iter_mut().enumerate() {
        let p = |f: &str| format!("emulators[{i}].{f}");
        if e.loss.is_some() && e.loss_65536.is_some() {
            return err(p("loss_65536"), "give either loss or loss_65536, not both");
        }
        let loss = match (e.loss, e.loss_65536) {
            (Some(l), _) => l,
            (None, Some(u)) => {
                if u > 65_536 {
                    return err(p("loss_65536"), format!("{u} is above 65536"));
                }
                u as f64 / 65_536.0
            }
            (None, None) => 0.0,
        };
        if !(0.0..1.0).contains(&loss) {
            return err(p("loss"), format!("{loss} is not a probability in [0, 1)"));
        }
        match e.preset {
            Preset::Anue => {
                if loss > 0.0 {
                    return err(p("loss"), "the anue preset is a pure delay (no loss)");
                }
                if e.rate.is_some() {
                    return err(p("rate"), "the anue preset has no rate limit");
                }
            }
            Preset::CometDrop => {
                e.quantum = Some(e.quantum.unwrap_or(Dur(SimDuration::from_millis(1))));
                if e.rate.is_some() {
                    return err(p("rate"), "the comet-drop preset forwards at line rate");
                }
                if e.delay.is_some_and(|d| d.0 > SimDuration::from_secs(1)) {
                    return err(p("delay"), "Comet Drop delays at most about 1s");
                }
            }
            Preset::Dummynet => {
                if e.rate.is_none() {
                    return err(p("rate"), "the dummynet preset needs a rate");
                }
                e.queue = Some(e.queue.clone().unwrap_or(QueueSpec::Limit(QLimit(QueueLimit::Packets(50)))));
            }
            Preset::Harmonizer => {
                if loss > 0.0 || e.rate.is_some() {
                    return err(p("preset"), "a harmonizer has no loss and no rate limit");
                }
                let Some(from) = e.harmonize_from.clone() else {
                    return err(p("harmonize_from"), "name the neighbour whose outgoing streams are harmonized");
                };
                if !r.links.iter().any(|l| l.between.contains(&from) && l.between.contains(&e.name)) {
                    return err(p("harmonize_from"), format!("'{from}' is not linked to '{}'", e.name));
                }
                let ms300 = Dur(SimDuration::from_millis(300));
                e.harmonize_rtt = Some(e.harmonize_rtt.unwrap_or(ms300));
                e.harmonize_interval = Some(e.harmonize_interval.unwrap_or(ms300));
                e.harmonize_max_delay = Some(e.harmonize_max_delay.unwrap_or(ms300));
                check_period(p("harmonize_interval"), e.harmonize_interval.expect("set above").0)?;
            }
            Preset::None => {}
        }
        if e.preset != Preset::Harmonizer {
            for (field, set) in [
                ("harmonize_from", e.harmonize_from.is_some()),
                ("harmonize_rtt", e.harmonize_rtt.is_some()),
                ("harmonize_interval", e.harmonize_interval.is_some()),
                ("harmonize_max_delay", e.harmonize_max_delay.is_some()),
            ] {
                if set {
                    return err(p(field), "only for preset = \"harmonizer\"");
                }
            }
        }
        if e.queue.is_some() && e.rate.is_none() {
            return err(p("queue"), "a queue needs a rate limit (set rate)");
        }
        // Reordering and duplication (net::impair).
        for (field, v) in [("reorder", e.reorder), ("duplicate", e.duplicate)] {
            let Some(v) = v else { continue };
            if !(0.0..1.0).contains(&v) {
                return err(p(field), format!("{v} is not a probability in [0, 1)"));
            }
            if v > 0.0 && e.preset != Preset::None {
                return err(p(field), format!("the {} preset does not reorder or duplicate (use preset = \"none\")", e.preset.name()));
            }
        }
        let reorder = e.reorder.unwrap_or(0.0);
        match e.reorder_delay {
            None if reorder > 0.0 => return err(p("reorder_delay"), "reorder needs reorder_delay, how long a reordered packet is held back"),
            Some(d) if reorder == 0.0 => return err(p("reorder_delay"), format!("{} has no effect without reorder (a probability)", crate::units::format_duration(d.0))),
            Some(d) if d.0 == SimDuration::ZERO => return err(p("reorder_delay"), "must be positive"),
            _ => {}
        }
        if e.duplicate.is_some_and(|d| d > 0.0) && e.rate.is_some() {
            return err(p("duplicate"), "duplication with a rate limit is not modelled (a copy would take no line time); drop rate or duplicate");
        }
        if let Some(q) = &e.queue {
            check_queue(q, &p("queue"))?;
        }
        let mut delay = e.delay.map_or(SimDuration::ZERO, |d| d.0);
        if let Some(q) = e.quantum {
            if q.0 > SimDuration::ZERO {
                // MODEL: delay steps (Comet Drop's 1 ms): the delay is set to the nearest step.
                let steps = (delay.as_ps() + q.0.as_ps() / 2) / q.0.as_ps();
                delay = SimDuration(steps * q.0.as_ps());
            }
        }
        e.delay = Some(Dur(delay));
        e.loss = Some(loss);
        e.loss_65536 = None;
        e.quantum = Some(e.quantum.unwrap_or(Dur(SimDuration::ZERO)));
    }

    // Links.
    for (i, l) in r.links.iter_mut().enumerate() {
        for (k, n) in l.between.iter().enumerate() {
            if !names.contains_key(n) {
                return err(format!("links[{i}].between[{k}]"), format!("no host, switch or emulator is named '{n}'"));
            }
        }
        if l.between[0] == l.between[1] {
            return err(format!("links[{i}].between"), "a link joins two different nodes");
        }
        let both = l.queue.take().unwrap_or_else(|| default_queue.clone());
        let qa = l.queue_a.clone().unwrap_or_else(|| both.clone());
        let qb = l.queue_b.clone().unwrap_or(both);
        check_queue(&qa, &format!("links[{i}].queue_a"))?;
        check_queue(&qb, &format!("links[{i}].queue_b"))?;
        l.queue_a = Some(qa);
        l.queue_b = Some(qb);
        l.delay = Some(l.delay.unwrap_or(Dur(SimDuration::ZERO)));
        let framing = l.framing.unwrap_or(Size(0));
        if framing.0 > MAX_FRAMING {
            return err(format!("links[{i}].framing"), format!("{} bytes per packet is more than the {MAX_FRAMING} any link layer adds", framing.0));
        }
        l.framing = Some(framing);
        if framing.0 > 0 && l.link_layer.is_some_and(|k| k != LinkLayerSpec::Ip) {
            return err(format!("links[{i}].framing"), "AAL5 has its own overhead (the trailer, padding and cell headers); framing applies only to link_layer = \"ip\"");
        }
    }
    let total_delay =
        r.links.iter().map(|l| l.delay.expect("resolved").0.as_ps() as u128).sum::<u128>() + r.emulators.iter().map(|e| e.delay.expect("resolved").0.as_ps() as u128).sum::<u128>();
    if total_delay > crate::units::MAX_TIME.as_ps() as u128 {
        return err("links", "the propagation delays of all links and emulators add up to more than 1000000s, the longest time tcplab simulates");
    }
    for (i, e) in r.emulators.iter().enumerate() {
        let degree = r.links.iter().filter(|l| l.between.contains(&e.name)).count();
        if degree != 2 {
            return err(format!("emulators[{i}]"), format!("an emulator sits between exactly two links; '{}' has {degree}", e.name));
        }
    }

    // Flows.
    let mut flow_names = BTreeMap::new();
    let mut expanded: BTreeMap<String, usize> = BTreeMap::new();
    let mut total_flows = 0u64;
    for (i, f) in r.flows.iter_mut().enumerate() {
        let p = |x: &str| format!("flows[{i}].{x}");
        if f.name.trim().is_empty() {
            return err(p("name"), "must not be empty");
        }
        if flow_names.insert(f.name.clone(), i).is_some() {
            return err(p("name"), format!("another flow is already named '{}'", f.name));
        }
        for (field, n) in [("src", &f.src), ("dst", &f.dst)] {
            match names.get(n) {
                Some(&"host") => {}
                Some(k) => return err(p(field), format!("'{n}' is a {k}, not a host")),
                None => return err(p(field), format!("no host is named '{n}'")),
            }
        }
        if f.src == f.dst {
            return err(p("dst"), "source and destination are the same host");
        }
        let count = f.count.unwrap_or(1);
        if count == 0 {
            return err(p("count"), "must be at least 1");
        }
        total_flows += count as u64;
        if total_flows > MAX_FLOWS {
            return err(p("count"), format!("the scenario would have {total_flows} flows or more; at most {MAX_FLOWS} (memory: about 3.5 KB per flow plus its packets in flight)"));
        }
        // The names the flows get (`name.k` for k < count), unique across all flows.
        for k in 0..count {
            let name = if count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
            if let Some(j) = expanded.insert(name.clone(), i) {
                return err(p("name"), format!("makes a flow named '{name}', as flows[{j}] does; flow names must be unique (a flow with count = n is named name.0 … name.(n-1))"));
            }
        }
        f.count = Some(count);
        f.start = Some(f.start.unwrap_or(Dur(SimDuration::ZERO)));
        f.class = Some(f.class.unwrap_or(0));
        match f.kind {
            FlowKind::Tcp => {
                for (field, set) in [("rate", f.rate.is_some()), ("packet_size", f.packet_size.is_some())] {
                    if set {
                        return err(p(field), "only for udp-cbr flows");
                    }
                }
                let ws = f.write_size.unwrap_or(Size(128 * 1024));
                if ws.0 == 0 {
                    return err(p("write_size"), "must be at least 1 byte");
                }
                f.write_size = Some(ws);
                if f.bytes.is_some_and(|b| b.0 == 0) {
                    return err(p("bytes"), "must be at least 1 byte");
                }
                let t = resolve_tcp(&sc.defaults.tcp, &f.tcp);
                tcp_config(&t, &p("tcp"))?;
                f.tcp = t;
            }
            FlowKind::UdpCbr => {
                for (field, set) in [("bytes", f.bytes.is_some()), ("write_size", f.write_size.is_some()), ("tcp", f.tcp != TcpSpec::default())] {
                    if set {
                        return err(p(field), "only for tcp flows");
                    }
                }
                if f.rate.is_none() {
                    return err(p("rate"), "a udp-cbr flow needs a rate");
                }
                let ps = f.packet_size.unwrap_or(Size(1500));
                if ps.0 <= (IPV4_HEADER + UDP_HEADER) as u64 || ps.0 > 65_535 {
                    return err(p("packet_size"), format!("{} bytes is out of range (29..=65535 IP bytes)", ps.0));
                }
                f.packet_size = Some(ps);
            }
        }
        let rule = if stop == StopSpec::Idle { "idle" } else { "flows-done" };
        if stop != StopSpec::Duration && r.run.duration.is_none() && f.bytes.is_none() && f.stop.is_none() && f.kind == FlowKind::Tcp {
            return err(p("bytes"), format!("with run.stop = \"{rule}\" and no run.duration, every flow needs bytes or stop (or the run never ends)"));
        }
        if stop != StopSpec::Duration && r.run.duration.is_none() && f.kind == FlowKind::UdpCbr && f.stop.is_none() {
            return err(p("stop"), format!("with run.stop = \"{rule}\" and no run.duration, a udp-cbr flow needs stop (or the run never ends)"));
        }
    }

    // Taps.
    let mut tap_names = BTreeMap::new();
    for (i, t) in r.taps.iter_mut().enumerate() {
        let p = |x: &str| format!("taps[{i}].{x}");
        if t.name.trim().is_empty() || t.name.contains(['/', '\\']) || t.name.starts_with('.') {
            return err(p("name"), "must be a non-empty file name (no '/', no leading '.')");
        }
        if tap_names.insert(t.name.clone(), i).is_some() {
            return err(p("name"), format!("another tap is already named '{}'", t.name));
        }
        let [a, b] = &t.link;
        if !r.links.iter().any(|l| (&l.between[0] == a && &l.between[1] == b) || (&l.between[0] == b && &l.between[1] == a)) {
            return err(p("link"), format!("no link joins '{a}' and '{b}'"));
        }
        let dir = t.direction.clone().unwrap_or_else(|| "both".into());
        if dir != "both" && &dir != a && &dir != b {
            return err(p("direction"), format!("\"{dir}\" is neither \"both\" nor one of the link's nodes"));
        }
        t.direction = Some(dir);
        let res = t.resolution.map_or(SimDuration::from_nanos(100), |d| d.0);
        if res.as_ps() < 1_000 || res.as_ps() % 1_000 != 0 {
            return err(p("resolution"), "must be a whole number of nanoseconds, at least 1ns (pcapng stores nanoseconds)");
        }
        t.resolution = Some(Dur(res));
        t.pcap = Some(t.pcap.unwrap_or(true));
        t.trace = Some(t.trace.unwrap_or(false));
    }

    // Coordinators.
    for (i, c) in r.coordinators.iter_mut().enumerate() {
        let p = |x: &str| format!("coordinators[{i}].{x}");
        if c.flows.len() < 2 {
            return err(p("flows"), "coordinate at least two flows");
        }
        for (k, name) in c.flows.iter().enumerate() {
            let base = name.rsplit_once('.').map_or(name.as_str(), |(b, idx)| if idx.parse::<u32>().is_ok() { b } else { name.as_str() });
            let Some(f) = r.flows.iter().find(|f| &f.name == name || f.name == base) else {
                return err(format!("coordinators[{i}].flows[{k}]"), format!("no flow named '{name}'"));
            };
            if f.kind != FlowKind::Tcp {
                return err(format!("coordinators[{i}].flows[{k}]"), format!("'{name}' is not a TCP flow"));
            }
        }
        let interval = c.interval.map_or(SimDuration::from_millis(300), |d| d.0);
        check_period(p("interval"), interval)?;
        c.interval = Some(Dur(interval));
        let tol = c.tolerance.unwrap_or(0.1);
        if !(0.0..=10.0).contains(&tol) {
            return err(p("tolerance"), format!("{tol} is out of range [0, 10]"));
        }
        c.tolerance = Some(tol);
    }

    // Trace.
    if let QueueSelection::All(s) = &r.trace.queues {
        if s != "all" {
            return err("trace.queues", format!("give a list of queue names or \"all\", not \"{s}\""));
        }
    }
    if let Some(d) = r.trace.throughput_interval {
        check_period("trace.throughput_interval".into(), d.0)?;
        if let Some(run) = r.run.duration {
            let rows = (run.0.as_ps() / d.0.as_ps()) as u128 * total_flows as u128;
            if rows > MAX_THROUGHPUT_ROWS as u128 {
                return err(
                    "trace.throughput_interval",
                    format!("{} bins of {} flows make {rows} rows; at most {MAX_THROUGHPUT_ROWS} (take longer bins)", run.0.as_ps() / d.0.as_ps(), total_flows),
                );
            }
        }
    }
    // A run that stops when idle never idles while something recurs.
    if stop == StopSpec::Idle && r.run.duration.is_none() {
        if r.trace.throughput_interval.is_some() {
            return err("run.stop", "\"idle\" with no run.duration never ends while trace.throughput_interval samples; set run.duration");
        }
        if !r.coordinators.is_empty() {
            return err("run.stop", "\"idle\" with no run.duration never ends while a coordinator acts; set run.duration");
        }
    }
    Ok(r)
}

/// Build the simulation from a resolved scenario. Taps write their pcapng files into
/// `capture_dir` (none are written without one).
pub fn build(r: &Scenario, seed: u64, capture_dir: Option<&Path>) -> Res<Simulation> {
    let seeds = SeedTree::new(seed);
    let stop = match r.run.stop.expect("resolved") {
        StopSpec::Duration => StopRule::Duration,
        StopSpec::FlowsDone => StopRule::FlowsDone,
        StopSpec::Idle => StopRule::Idle,
    };
    let mut sim = Simulation::new(stop, r.run.duration.map(|d| SimTime::ZERO + d.0), seeds.stream("engine/order").next_u64());

    let mut graph = Graph::new();
    let mut node_of: BTreeMap<&str, NodeId> = BTreeMap::new();
    for h in &r.hosts {
        node_of.insert(&h.name, graph.add_node(NodeRole::Host));
    }
    for s in &r.switches {
        node_of.insert(&s.name, graph.add_node(NodeRole::Switch));
    }
    for e in &r.emulators {
        node_of.insert(&e.name, graph.add_node(NodeRole::Switch));
    }
    let mut queue_names: BTreeMap<String, crate::net::PipeId> = BTreeMap::new();
    let mut link_pipes: BTreeMap<(String, String), crate::net::PipeId> = BTreeMap::new();
    for l in &r.links {
        let (a, b) = (&l.between[0], &l.between[1]);
        let delay = l.delay.expect("resolved").0;
        let link = match l.link_layer.unwrap_or_default() {
            LinkLayerSpec::Ip => match l.framing.expect("resolved").0 as u32 {
                0 => LinkLayer::Ip,
                b => LinkLayer::Framing(b),
            },
            LinkLayerSpec::Aal5 => LinkLayer::AAL5_LLC,
            LinkLayerSpec::Aal5VcMux => LinkLayer::AAL5_VC_MUX,
        };
        let mk = |from: &str, to: &str, q: &QueueSpec| {
            Pipe::new(format!("{from}->{to}"), Some(l.rate.0), delay, 0.0, seeds.stream(&format!("links/{from}->{to}")), queue_of(q)).with_link_layer(link)
        };
        let ab = sim.add_pipe(mk(a, b, l.queue_a.as_ref().expect("resolved")), true);
        let ba = sim.add_pipe(mk(b, a, l.queue_b.as_ref().expect("resolved")), true);
        queue_names.insert(format!("{a}->{b}"), ab);
        queue_names.insert(format!("{b}->{a}"), ba);
        link_pipes.entry((a.clone(), b.clone())).or_insert(ab);
        link_pipes.entry((b.clone(), a.clone())).or_insert(ba);
        graph.add_link(node_of[a.as_str()], node_of[b.as_str()], ab, ba);
    }
    let names_by_node: BTreeMap<NodeId, &str> = node_of.iter().map(|(k, v)| (*v, *k)).collect();
    for e in &r.emulators {
        let n = node_of[e.name.as_str()];
        let nb: Vec<NodeId> = graph.neighbours(n).collect();
        let (n0, n1) = (names_by_node[&nb[0]], names_by_node[&nb[1]]);
        let delay = e.delay.expect("resolved").0;
        let loss = e.loss.expect("resolved");
        let mut mk = |from: &str, to: &str| {
            let name = format!("{}:{from}->{to}", e.name);
            let q = e.queue.as_ref().map_or(Queue::fifo(QueueLimit::Unlimited), queue_of);
            let rate: Option<BitRate> = e.rate.map(|r| r.0);
            let mut pipe = Pipe::new(name.clone(), rate, delay, loss, seeds.stream(&format!("emulators/{name}/loss")), q);
            let (reorder, duplicate) = (e.reorder.unwrap_or(0.0), e.duplicate.unwrap_or(0.0));
            if reorder > 0.0 || duplicate > 0.0 {
                let reorder_delay = e.reorder_delay.map_or(SimDuration::ZERO, |d| d.0);
                pipe = pipe.with_impairment(ImpairConfig { reorder, reorder_delay, duplicate }, seeds.stream(&format!("emulators/{name}/impair")));
            }
            if e.harmonize_from.as_deref() == Some(from) {
                pipe = pipe.with_harmonizer(Harmonizer::new(HarmonizerConfig {
                    base_rtt: e.harmonize_rtt.expect("resolved").0,
                    interval: e.harmonize_interval.expect("resolved").0,
                    max_delay: e.harmonize_max_delay.expect("resolved").0,
                }));
            }
            let id = sim.add_pipe(pipe, rate.is_some());
            if rate.is_some() {
                queue_names.insert(name, id);
            }
            id
        };
        let p01 = mk(n0, n1);
        let p10 = mk(n1, n0);
        graph.set_role(n, NodeRole::Emulator { pipes: [p01, p10] });
    }

    // Traces.
    if let Some(d) = r.trace.throughput_interval {
        sim.trace_throughput(d.0);
    }
    if r.trace.cwnd {
        sim.trace_cwnd();
    }
    if r.trace.events {
        sim.trace_events();
    }
    if r.trace.milestones {
        sim.trace_milestones();
    }
    match &r.trace.queues {
        QueueSelection::All(_) => {
            for p in sim.queue_pipes.clone() {
                sim.trace_queue(p);
            }
        }
        QueueSelection::Names(list) => {
            for (i, n) in list.iter().enumerate() {
                let Some(&p) = queue_names.get(n) else {
                    let known: Vec<&str> = queue_names.keys().map(|s| s.as_str()).collect();
                    return err(format!("trace.queues[{i}]"), format!("no queue named '{n}' (queues: {})", known.join(", ")));
                };
                sim.trace_queue(p);
            }
        }
        QueueSelection::Nothing => {}
    }

    // Taps.
    for (i, t) in r.taps.iter().enumerate() {
        let [a, b] = &t.link;
        let dir = t.direction.as_deref().expect("resolved");
        let dirs: Vec<(&String, &String)> = if dir == "both" {
            vec![(a, b), (b, a)]
        } else if dir == a {
            vec![(a, b)]
        } else {
            vec![(b, a)]
        };
        let pipes: Vec<(crate::net::PipeId, u32)> = dirs.iter().enumerate().map(|(k, (x, y))| (link_pipes[&((*x).clone(), (*y).clone())], k as u32)).collect();
        let resolution_ps = t.resolution.expect("resolved").0.as_ps();
        let writer = match (t.pcap.expect("resolved"), capture_dir) {
            (true, Some(dir)) => {
                let ifaces: Vec<(String, u64)> =
                    pipes.iter().map(|(p, _)| (sim.fabric.pipes[p.0 as usize].name.clone(), sim.fabric.pipes[p.0 as usize].rate().map_or(0, |r| r.bps()))).collect();
                let path = dir.join(format!("{}.pcapng", t.name));
                Some(PcapWriter::create(&path, &ifaces, resolution_ps).map_err(|e| ScenarioError::new(format!("taps[{i}]"), format!("cannot create {}: {e}", path.display())))?)
            }
            _ => None,
        };
        let tap = Tap { name: t.name.clone(), writer, record_trace: t.trace.expect("resolved"), resolution_ps, packets: 0 };
        sim.add_tap(tap, &pipes);
    }

    // Host processing stages (jitter), spliced in front of every route leaving the host.
    let mut host_stage: BTreeMap<NodeId, crate::net::PipeId> = BTreeMap::new();
    for h in &r.hosts {
        let j = h.jitter.expect("resolved").0;
        if j > SimDuration::ZERO {
            let name = format!("{}:processing", h.name);
            let pipe = Pipe::new(name.clone(), None, SimDuration::ZERO, 0.0, seeds.stream(&format!("hosts/{}/jitter", h.name)), Queue::fifo(QueueLimit::Unlimited)).with_jitter(j);
            host_stage.insert(node_of[h.name.as_str()], sim.add_pipe(pipe, false));
        }
    }
    let mut start_skew: BTreeMap<&str, (SimDuration, crate::engine::Rng)> = BTreeMap::new();
    for h in &r.hosts {
        start_skew.insert(h.name.as_str(), (h.start_skew.expect("resolved").0, seeds.stream(&format!("hosts/{}/start", h.name))));
    }

    // Flows.
    let host_index: BTreeMap<&str, u32> = r.hosts.iter().enumerate().map(|(i, h)| (h.name.as_str(), i as u32)).collect();
    let mut routes: BTreeMap<(NodeId, NodeId), crate::net::RouteId> = BTreeMap::new();
    for (i, f) in r.flows.iter().enumerate() {
        let (s, d) = (node_of[f.src.as_str()], node_of[f.dst.as_str()]);
        let mut route = |a: NodeId, b: NodeId, sim: &mut Simulation| -> Res<crate::net::RouteId> {
            if let Some(&id) = routes.get(&(a, b)) {
                return Ok(id);
            }
            let Some(mut pipes) = graph.route(a, b) else {
                return err(format!("flows[{i}]"), format!("no path from '{}' to '{}'", names_by_node[&a], names_by_node[&b]));
            };
            if let Some(&stage) = host_stage.get(&a) {
                pipes.insert(0, stage);
            }
            let id = sim.add_route(pipes);
            routes.insert((a, b), id);
            Ok(id)
        };
        let fwd = route(s, d, &mut sim)?;
        if let Some(rate) = f.rate.filter(|_| f.kind == FlowKind::UdpCbr) {
            // A host cannot put datagrams on the wire faster than its own link (the first rated
            // pipe of its route); a faster source would only be dropped at its own NIC, at up
            // to 10^12 events per simulated second, which looks like a hang.
            let nic = sim.route_pipes(fwd).iter().find_map(|&q| sim.fabric.pipes[q.0 as usize].rate());
            if let Some(nic) = nic.filter(|&nic| rate.0 > nic) {
                return err(format!("flows[{i}].rate"), format!("{} is faster than the link out of '{}' ({nic}); a host cannot send faster than its interface", rate.0, f.src));
            }
        }
        let rev = route(d, s, &mut sim)?;
        let count = f.count.expect("resolved");
        for k in 0..count {
            let name = if count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
            let (skew, rng) = start_skew.get_mut(f.src.as_str()).expect("src is a host");
            let late = if *skew > SimDuration::ZERO { SimDuration(rng.below(skew.as_ps())) } else { SimDuration::ZERO };
            let start = SimTime::ZERO + f.start.expect("resolved").0 + late;
            let stop_at = f.stop.map(|d| SimTime::ZERO + d.0);
            let id = sim.flows.len() as u32;
            let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
            // The flow's applications: a bulk sender and a sink, or a CBR source.
            let (engine, cc, apps) = match f.kind {
                FlowKind::Tcp => {
                    let cfg = tcp_config(&f.tcp, &format!("flows[{i}].tcp"))?;
                    let cc = cfg.cc.name();
                    let app = BulkSender::new(src, f.write_size.expect("resolved").0, f.bytes.map(|b| b.0), stop_at);
                    let t = TcpFlow::new(Connection::new(cfg.clone()), Connection::new(cfg));
                    (FlowEngine::Tcp(Box::new(t)), cc, vec![Application::Bulk(app), Application::Sink(Sink::new(dst))])
                }
                FlowKind::UdpCbr => {
                    let app = CbrSource { socket: src, rate: f.rate.expect("resolved").0, packet_size: f.packet_size.expect("resolved").0 as u32, start, stop_at, sent: 0 };
                    (FlowEngine::Udp(UdpFlow::default()), "none", vec![Application::Cbr(app)])
                }
            };
            let kind = match f.kind {
                FlowKind::Tcp => "tcp",
                FlowKind::UdpCbr => "udp-cbr",
            };
            let (sip, smac) = host_address(host_index[f.src.as_str()]);
            let (dip, dmac) = host_address(host_index[f.dst.as_str()]);
            let mut isn = seeds.stream(&format!("flows/{name}/isn"));
            let wire = WireIdentity {
                ip: [sip, dip],
                mac: [smac, dmac],
                port: [32_768 + (id % 28_000) as u16, 5001],
                isn: [isn.next_u64() as u32, isn.next_u64() as u32],
                wscale: [0, 0],
            };
            let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind, cc, start };
            sim.add_flow(Flow::new(info, [fwd, rev], f.class.expect("resolved"), engine), wire);
            for app in apps {
                // The sender opens the flow at its start; the sink waits for it.
                let (socket, start) = match &app {
                    Application::Sink(_) => (dst, None),
                    _ => (src, Some(start)),
                };
                sim.add_app(app, &[socket], start);
            }
        }
    }
    // Coordinators, over the expanded flow names.
    for c in &r.coordinators {
        let mut ids = Vec::new();
        for name in &c.flows {
            for (i, f) in sim.flows.iter().enumerate() {
                let base = f.info.name.rsplit_once('.').map(|(b, _)| b);
                if &f.info.name == name || base == Some(name.as_str()) {
                    ids.push(crate::net::FlowId(i as u32));
                }
            }
        }
        sim.add_coordinator(Coordinator { flows: ids, interval: c.interval.expect("resolved").0, tolerance: c.tolerance.expect("resolved"), actions: 0 });
    }
    Ok(sim)
}
