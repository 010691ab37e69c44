//! `[[emulators]]`: the presets' defaults and rules, loss, rate limit, harmonizer, reordering
//! and duplication, and the delay as the emulator applies it (rounded to its quantum).

use serde::Serialize;

use super::links::check_queue;
use super::{check_period, err, Res};
use crate::scenario::spec::{Dur, EmulatorSpec, LinkSpec, Preset, QLimit, QueueSpec, Rate};
use crate::units::{format_duration, QueueLimit, SimDuration};

/// `[[emulators]]`, resolved. Serialized with the keys of `spec::EmulatorSpec`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedEmulator {
    /// Unique name.
    pub name: String,
    /// Preset (default `"none"`).
    pub preset: Preset,
    /// One-way delay added in each direction, rounded to `quantum` (default 0s).
    pub delay: Dur,
    /// Drop probability per packet, in [0, 1) (from `loss` or `loss_65536`; default 0).
    pub loss: f64,
    /// Delay step (comet-drop: 1ms; default 0s: none).
    pub quantum: Dur,
    /// Dummynet's clock tick (default 0s: none; shown only when set).
    #[serde(skip_serializing_if = "is_zero")]
    pub tick: Dur,
    /// Rate limit with its queue, if any.
    #[serde(flatten)]
    pub rate_limit: Option<RateLimit>,
    /// Per-stream extra delay (preset `"harmonizer"` only).
    #[serde(flatten)]
    pub harmonizer: Option<ResolvedHarmonizer>,
    /// netem-like reordering, if any.
    #[serde(flatten)]
    pub reorder: Option<Reorder>,
    /// Probability that a packet is sent twice, in [0, 1) (default 0).
    pub duplicate: f64,
}

/// An emulator's rate limit.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RateLimit {
    /// Rate.
    pub rate: Rate,
    /// The queue in front of it (dummynet: 50pkts; default `"unlimited"`).
    pub queue: QueueSpec,
}

/// A harmonizer's settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedHarmonizer {
    /// The neighbour whose outgoing traffic is harmonized.
    pub harmonize_from: String,
    /// The streams' base RTT (default 300ms).
    pub harmonize_rtt: Dur,
    /// Measurement period, at least 1us (default 300ms).
    pub harmonize_interval: Dur,
    /// Largest extra delay (default 300ms).
    pub harmonize_max_delay: Dur,
}

/// netem-like reordering.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Reorder {
    /// Probability that a packet is held back, in (0, 1).
    pub reorder: f64,
    /// How long beyond the delay, positive.
    pub reorder_delay: Dur,
}

/// Resolve `[[emulators]]`; `links` are the scenario's (a harmonizer's neighbour must be linked).
pub(super) fn resolve_emulators(emulators: &[EmulatorSpec], links: &[LinkSpec]) -> Res<Vec<ResolvedEmulator>> {
    emulators.iter().enumerate().map(|(i, e)| resolve_emulator(e, i, links)).collect()
}

fn resolve_emulator(e: &EmulatorSpec, i: usize, links: &[LinkSpec]) -> Res<ResolvedEmulator> {
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
    let mut quantum = e.quantum;
    let mut queue = e.queue.clone();
    let mut harmonizer = None;
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
            quantum = Some(quantum.unwrap_or(Dur(SimDuration::from_millis(1))));
            // A `rate` here is the device's processing limit (study 002 blames Fig. 12's 0 ms
            // point on it): by default it forwards at line rate.
            if e.delay.is_some_and(|d| d.0 > SimDuration::from_secs(1)) {
                return err(p("delay"), "Comet Drop delays at most about 1s");
            }
        }
        Preset::Dummynet => {
            // With a rate, Dummynet's queue (50 slots by default); without, a pure delay line.
            if e.rate.is_some() {
                queue = Some(queue.unwrap_or(QueueSpec::Limit(QLimit(QueueLimit::Packets(50)))));
            }
        }
        Preset::Harmonizer => {
            if loss > 0.0 || e.rate.is_some() {
                return err(p("preset"), "a harmonizer has no loss and no rate limit");
            }
            let Some(from) = e.harmonize_from.clone() else {
                return err(p("harmonize_from"), "name the neighbour whose outgoing streams are harmonized");
            };
            if !links.iter().any(|l| l.between.contains(&from) && l.between.contains(&e.name)) {
                return err(p("harmonize_from"), format!("'{from}' is not linked to '{}'", e.name));
            }
            let ms300 = Dur(SimDuration::from_millis(300));
            let h = ResolvedHarmonizer {
                harmonize_from: from,
                harmonize_rtt: e.harmonize_rtt.unwrap_or(ms300),
                harmonize_interval: e.harmonize_interval.unwrap_or(ms300),
                harmonize_max_delay: e.harmonize_max_delay.unwrap_or(ms300),
            };
            check_period(p("harmonize_interval"), h.harmonize_interval.0)?;
            harmonizer = Some(h);
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
    if queue.is_some() && e.rate.is_none() {
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
    let reorder = match e.reorder_delay {
        None if reorder > 0.0 => return err(p("reorder_delay"), "reorder needs reorder_delay, how long a reordered packet is held back"),
        Some(d) if reorder == 0.0 => return err(p("reorder_delay"), format!("{} has no effect without reorder (a probability)", format_duration(d.0))),
        Some(d) if d.0 == SimDuration::ZERO => return err(p("reorder_delay"), "must be positive"),
        Some(d) => Some(Reorder { reorder, reorder_delay: d }),
        None => None,
    };
    let duplicate = e.duplicate.unwrap_or(0.0);
    if duplicate > 0.0 && e.rate.is_some() {
        return err(p("duplicate"), "duplication with a rate limit is not modelled (a copy would take no line time); drop rate or duplicate");
    }
    if let Some(q) = &queue {
        check_queue(q, &p("queue"))?;
        if matches!(q, QueueSpec::Table(t) if t.cells.is_some()) {
            return err(p("queue.cells"), "an ATM port is a link's queue (on an AAL5 link), not an emulator's");
        }
    }
    let quantum = quantum.unwrap_or(Dur(SimDuration::ZERO));
    let mut delay = e.delay.map_or(SimDuration::ZERO, |d| d.0);
    let tick = match e.tick {
        None => SimDuration::ZERO,
        Some(_) if e.preset != Preset::Dummynet => return err(p("tick"), "only for preset = \"dummynet\" (Comet Drop's delay steps are `quantum`)"),
        Some(t) if t.0 == SimDuration::ZERO => return err(p("tick"), "must be positive (leave it out for exact release times)"),
        Some(t) if t.0 > SimDuration::from_secs(1) => return err(p("tick"), format!("{} is longer than a second: a kernel HZ of at least 1", format_duration(t.0))),
        Some(t) => {
            // MODEL: ipfw sets a pipe's delay in ticks as `delay_ms * hz / 1000` (truncated).
            delay = SimDuration(delay.as_ps() / t.0.as_ps() * t.0.as_ps());
            t.0
        }
    };
    if quantum.0 > SimDuration::ZERO {
        // MODEL: delay steps (Comet Drop's 1 ms): the delay is set to the nearest step.
        let steps = (delay.as_ps() + quantum.0.as_ps() / 2) / quantum.0.as_ps();
        delay = SimDuration(steps * quantum.0.as_ps());
    }
    let rate_limit = e.rate.map(|rate| RateLimit { rate, queue: super::aqm::complete(queue.unwrap_or(QueueSpec::Limit(QLimit(QueueLimit::Unlimited)))) });
    Ok(ResolvedEmulator { name: e.name.clone(), preset: e.preset, delay: Dur(delay), loss, quantum, tick: Dur(tick), rate_limit, harmonizer, reorder, duplicate })
}

/// Whether a duration is zero (a key left out of the resolved scenario).
fn is_zero(d: &Dur) -> bool {
    d.0 == SimDuration::ZERO
}

/// Every emulator sits between exactly two links.
pub(super) fn check_degree(emulators: &[ResolvedEmulator], links: &[LinkSpec]) -> Res<()> {
    for (i, e) in emulators.iter().enumerate() {
        let degree = links.iter().filter(|l| l.between.contains(&e.name)).count();
        if degree != 2 {
            return err(format!("emulators[{i}]"), format!("an emulator sits between exactly two links; '{}' has {degree}", e.name));
        }
    }
    Ok(())
}
