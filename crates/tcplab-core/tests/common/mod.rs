//! Shared by the model-check tests: one flow from `a` to `b` over a lossy emulated path.

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
