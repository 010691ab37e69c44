//! Shared by the model-check tests: one flow from `a` to `b` over a lossy emulated path.
// Each test binary uses part of this module.
#![allow(dead_code)]

/// A scenario with one flow `f` from host `a` to host `b` through two switches and an
/// emulator adding `one_way` delay each way with Bernoulli `loss` on every packet in both
/// directions. Every link runs at `rate`; the queue in front of the emulator holds
/// `queue_pkts` packets (ample, so losses are the emulator's). `tcp` is the body of the
/// `[defaults.tcp]` table (one `key = value` per line).
pub fn lossy_path(name: &str, tcp: &str, one_way: &str, loss: f64, rate: &str, queue_pkts: u64, duration_s: u32) -> String {
    format!(
        r#"
name = "{name}"
[run]
duration = "{duration_s}s"
[defaults.tcp]
{tcp}
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "s1"
[[switches]]
name = "s2"
[[emulators]]
name = "loss"
delay = "{one_way}"
loss = {loss}
[[links]]
between = ["a", "s1"]
rate = "{rate}"
[[links]]
between = ["s1", "loss"]
rate = "{rate}"
queue = "{queue_pkts}pkts"
[[links]]
between = ["loss", "s2"]
rate = "{rate}"
[[links]]
between = ["s2", "b"]
rate = "{rate}"
[[flows]]
name = "f"
src = "a"
dst = "b"
"#
    )
}

/// Delivery and loss-recovery counters of flow 0 over the steady part of a run.
#[derive(Default)]
pub struct Steady {
    /// Payload bytes per simulated second after the warm-up, mean over seeds.
    pub bytes_per_s: f64,
    /// Retransmission timeouts after the warm-up, summed over seeds.
    pub timeouts: u64,
    /// Fast retransmits after the warm-up, summed over seeds.
    pub fast_rtx: u64,
    /// Retransmitted segments after the warm-up, summed over seeds.
    pub retransmits: u64,
}

/// Run `text` with seeds `0..seeds`, discarding the first tenth of each run (slow-start
/// overshoot), and measure flow 0 over the rest.
pub fn steady_state(text: &str, duration_s: u32, seeds: u64) -> Steady {
    use tcplab_core::units::{SimDuration, SimTime};
    let mut out = Steady::default();
    let warm = SimTime::ZERO + SimDuration::from_secs_f64(duration_s as f64 / 10.0);
    for seed in 0..seeds {
        let mut r = tcplab_core::Run::from_toml(text, Some(seed)).expect("valid scenario");
        r.sim.advance(warm);
        let t0 = r.sim.now().as_secs_f64();
        let w = r.sim.summary().flows[0].clone();
        r.sim.run();
        let s = r.sim.summary();
        let f = &s.flows[0];
        out.bytes_per_s += (f.bytes_delivered - w.bytes_delivered) as f64 / (s.sim_time_s - t0) / seeds as f64;
        out.timeouts += f.timeouts - w.timeouts;
        out.fast_rtx += f.fast_retransmits - w.fast_retransmits;
        out.retransmits += f.retransmits - w.retransmits;
    }
    out
}
