//! The host's kernel clock: ticks of 1/HZ at the host's phase. A variant that can act only on
//! a tick (ImTCP's output stage, a pacing gate) asks it where the ticks fall.
//!
//! `SimTime` counts picoseconds, so a tick is 10¹²/HZ ps rounded to a whole picosecond: the
//! grid drifts from the exact 1/HZ by less than 0.5 ps per tick (at HZ = 10⁹, the top of
//! `tcp.hz`, 0.05 %; at HZ ≤ 10⁶ under 1 ppm).

use crate::units::{SimDuration, SimTime, PS_PER_SEC};

/// The host's clock ticks: at `phase` + k·`tick` (k ≥ 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HostClock {
    /// One tick, 1/HZ rounded to whole picoseconds (at least 1 ps).
    pub tick: SimDuration,
    /// Where the ticks fall, in [0, tick).
    pub phase: SimDuration,
}

impl HostClock {
    /// The clock of a host with kernel HZ `hz` (> 0) whose ticks are offset by `phase` (taken
    /// modulo the tick).
    pub fn new(hz: u32, phase: SimDuration) -> Self {
        let hz = u64::from(hz.max(1));
        let tick = ((PS_PER_SEC + hz / 2) / hz).max(1);
        HostClock { tick: SimDuration(tick), phase: SimDuration(phase.as_ps() % tick) }
    }

    /// The first tick at or after `t`.
    pub fn next_tick_at_or_after(&self, t: SimTime) -> SimTime {
        let (tick, phase) = (self.tick.as_ps(), self.phase.as_ps());
        if t.0 <= phase {
            return SimTime(phase);
        }
        let k = (t.0 - phase).div_ceil(tick);
        SimTime(phase + k * tick)
    }

    /// The tick nearest `t` (the earlier one at a tie), never before the first tick.
    pub fn nearest_tick(&self, t: SimTime) -> SimTime {
        let (tick, phase) = (self.tick.as_ps(), self.phase.as_ps());
        if t.0 <= phase {
            return SimTime(phase);
        }
        let k = (t.0 - phase + (tick - 1) / 2) / tick;
        SimTime(phase + k * tick)
    }

    /// The `n`-th tick after the first tick at or after `t` (`n` = 0: that tick itself).
    pub fn after_ticks(&self, t: SimTime, n: u64) -> SimTime {
        SimTime(self.next_tick_at_or_after(t).0 + n * self.tick.as_ps())
    }

    /// True when `t` falls on a tick.
    pub fn on_tick(&self, t: SimTime) -> bool {
        t.0 >= self.phase.as_ps() && (t.0 - self.phase.as_ps()).is_multiple_of(self.tick.as_ps())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hz_tick_rounds_to_whole_picoseconds() {
        let ps = |hz| HostClock::new(hz, SimDuration::ZERO).tick.as_ps();
        assert_eq!(ps(100), 10_000_000_000);
        assert_eq!(ps(20_000), 50_000_000);
        assert_eq!(ps(1_000_000_000), 1_000);
        // 10¹²/3 = 333,333,333,333.3 → 333,333,333,333; 10¹²/7 = 142,857,142,857.14 → …857;
        // 10¹²/6 = 166,666,666,666.67 → …667 (rounded, not truncated).
        assert_eq!(ps(3), 333_333_333_333);
        assert_eq!(ps(7), 142_857_142_857);
        assert_eq!(ps(6), 166_666_666_667);
        assert_eq!(ps(999_999_999), 1_000);
        for hz in [10, 100, 250, 1000, 3000, 20_000, 33_333, 100_000, 999_983, 1_000_000_000] {
            let exact = 1e12 / hz as f64;
            assert!((ps(hz) as f64 - exact).abs() <= 0.5, "HZ {hz}: {} ps against {exact}", ps(hz));
        }
    }

    #[test]
    fn next_tick_is_at_or_after_and_on_the_phase_grid() {
        let c = HostClock::new(20_000, SimDuration(1_234_567_891_011)); // phase taken mod 50 µs
        assert_eq!(c.phase.as_ps(), 1_234_567_891_011 % 50_000_000);
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let t = SimTime(x % 10_000_000_000_000);
            let n = c.next_tick_at_or_after(t);
            assert!(n >= t && n.0 - t.0 < c.tick.as_ps(), "{t:?} -> {n:?}");
            assert!(c.on_tick(n));
            assert_eq!(c.after_ticks(t, 3).0, n.0 + 3 * c.tick.as_ps());
            let near = c.nearest_tick(t);
            assert!(c.on_tick(near) && near.0.abs_diff(t.0) <= c.tick.as_ps() / 2 + 1 || near.0 == c.phase.as_ps());
        }
        // A time on a tick is its own next tick; one picosecond later is the following one.
        let on = SimTime(c.phase.as_ps() + 7 * c.tick.as_ps());
        assert_eq!(c.next_tick_at_or_after(on), on);
        assert_eq!(c.next_tick_at_or_after(SimTime(on.0 + 1)).0, on.0 + c.tick.as_ps());
        // Before the first tick: the first tick.
        assert_eq!(c.next_tick_at_or_after(SimTime::ZERO), SimTime(c.phase.as_ps()));
    }
}
