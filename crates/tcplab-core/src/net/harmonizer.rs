//! A Stream-Harmonizer-like gateway (Sugawara, Inaba, Hiraki, FGCN 2007): it measures the
//! rate of each parallel stream passing through it and delays the packets of the fast ones,
//! raising their RTT and so lowering their rate (≈ cwnd/RTT), without talking to the hosts.
//!
//! ASSUMPTION(p0): the paper describes the device, not its algorithm. Here, every `interval`
//! the gateway estimates each stream's window as w = rate·(base RTT + its current extra
//! delay) and moves the extra delay towards base RTT·max(0, w/mean(w) − 1) (capped at
//! `max_delay`): a stream with twice the mean window sees twice the RTT, hence the mean rate.
//! The delay moves by at most a tenth of the base RTT per interval, so the senders' RTT
//! estimators follow it instead of timing out. Packets of one flow keep their order;
//! different flows may overtake each other.

use std::collections::BTreeMap;

use crate::net::packet::Packet;
use crate::units::{SimDuration, SimTime};

/// Parameters of the harmonizer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HarmonizerConfig {
    /// Base round-trip time of the streams (known to the operator).
    pub base_rtt: SimDuration,
    /// Measurement and update period.
    pub interval: SimDuration,
    /// Largest extra delay given to a stream.
    pub max_delay: SimDuration,
}

#[derive(Clone, Copy, Debug, Default)]
struct StreamState {
    bytes: u64,
    delay: SimDuration,
    last_release: SimTime,
}

/// Per-flow delay line with rate-equalizing delays.
#[derive(Debug)]
pub struct Harmonizer {
    cfg: HarmonizerConfig,
    streams: BTreeMap<u32, StreamState>,
    next_update: SimTime,
    line: BTreeMap<(SimTime, u64), Packet>,
    seq: u64,
}

impl Harmonizer {
    /// A harmonizer with no streams seen yet.
    pub fn new(cfg: HarmonizerConfig) -> Self {
        Harmonizer { cfg, streams: BTreeMap::new(), next_update: SimTime::ZERO + cfg.interval, line: BTreeMap::new(), seq: 0 }
    }

    /// The extra delay currently given to `flow`.
    pub fn delay_of(&self, flow: u32) -> SimDuration {
        self.streams.get(&flow).map_or(SimDuration::ZERO, |s| s.delay)
    }

    fn update(&mut self, now: SimTime) {
        while now >= self.next_update {
            let secs = self.cfg.interval.as_secs_f64();
            let rtt = self.cfg.base_rtt.as_secs_f64();
            let windows: Vec<(u32, f64)> = self.streams.iter().map(|(f, s)| (*f, s.bytes as f64 / secs * (rtt + s.delay.as_secs_f64()))).collect();
            let active: Vec<f64> = windows.iter().map(|w| w.1).filter(|w| *w > 0.0).collect();
            let mean = if active.is_empty() { 0.0 } else { active.iter().sum::<f64>() / active.len() as f64 };
            for (f, w) in windows {
                let s = self.streams.get_mut(&f).expect("listed");
                let target = if mean > 0.0 && w > mean { (rtt * (w / mean - 1.0)).min(self.cfg.max_delay.as_secs_f64()) } else { 0.0 };
                let now_d = s.delay.as_secs_f64();
                let step = rtt / 10.0;
                s.delay = SimDuration::from_secs_f64(now_d + (target - now_d).clamp(-step, step));
                s.bytes = 0;
            }
            self.next_update += self.cfg.interval;
        }
    }

    /// Admit a packet that would leave at `at` without harmonizing; returns `Some(time)` when
    /// it became the earliest packet inside (the caller schedules an arrival then).
    pub fn admit(&mut self, now: SimTime, at: SimTime, pkt: Packet) -> Option<SimTime> {
        self.update(now);
        let s = self.streams.entry(pkt.flow.0).or_default();
        s.bytes += pkt.size as u64;
        let release = (at + s.delay).max(s.last_release);
        s.last_release = release;
        self.seq += 1;
        let earliest = self.line.keys().next().map(|k| k.0);
        self.line.insert((release, self.seq), pkt);
        (earliest.is_none_or(|e| release < e)).then_some(release)
    }

    /// The packet due at `now`, if the earliest one is due; also the time of the next one.
    pub fn release(&mut self, now: SimTime) -> (Option<Packet>, Option<SimTime>) {
        let due = match self.line.first_key_value() {
            Some((&(t, _), _)) if t == now => self.line.pop_first().map(|(_, p)| p),
            _ => None,
        };
        (due, self.line.keys().next().map(|k| k.0))
    }

    /// Packets inside.
    pub fn len(&self) -> usize {
        self.line.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(flow: u32) -> Packet {
        crate::net::packet::test_udp(flow, 0, 1000, 0)
    }

    /// Base RTT and interval 100 ms, at most 500 ms of extra delay.
    fn harmonizer() -> Harmonizer {
        let ms = SimDuration::from_millis;
        Harmonizer::new(HarmonizerConfig { base_rtt: ms(100), interval: ms(100), max_delay: ms(500) })
    }

    #[test]
    fn fast_streams_get_delayed_in_proportion() {
        let ms = SimDuration::from_millis;
        let mut h = harmonizer();
        // In the first interval flow 1 sends 3 packets for each of flow 0's.
        let mut t = SimTime::ZERO;
        for _ in 0..100 {
            h.admit(t, t, pkt(0));
            for _ in 0..3 {
                h.admit(t, t, pkt(1));
            }
            t += SimDuration::from_micros(900);
        }
        h.admit(SimTime::ZERO + ms(100), SimTime::ZERO + ms(100), pkt(0));
        // Windows 1 : 3, mean 2: flow 1's target is base·(3/2 − 1) = 50 ms; the delay moves
        // a tenth of the base RTT (10 ms) towards it per interval. Flow 0 gets none.
        assert_eq!(h.delay_of(0), SimDuration::ZERO);
        assert_eq!(h.delay_of(1), ms(10));
        // Per-flow order is kept; other flows may overtake.
        let now = SimTime::ZERO + ms(100);
        h.admit(now, now, pkt(1));
        h.admit(now, now + ms(1), pkt(0));
        let mut order = vec![];
        let mut next = h.line.keys().next().map(|k| k.0);
        while let Some(t) = next {
            let (p, n) = h.release(t);
            order.push((t, p.unwrap().flow.0));
            next = n;
        }
        let tail: Vec<u32> = order.iter().rev().take(2).map(|x| x.1).collect();
        assert_eq!(tail[0], 1, "the delayed flow-1 packet leaves last");
        assert!(order.windows(2).all(|w| w[0].0 <= w[1].0));
    }

    #[test]
    fn a_small_excess_gets_exactly_its_target_delay() {
        // Windows 10 : 11 over one interval, mean 10.5: flow 1's target is
        // base·(11/10.5 − 1) = 100 ms / 21 ≈ 4.762 ms, within one step (10 ms), so reached.
        let ms = SimDuration::from_millis;
        let mut h = harmonizer();
        let mut t = SimTime::ZERO;
        for _ in 0..10 {
            h.admit(t, t, pkt(0));
            h.admit(t, t, pkt(1));
            t += ms(5);
        }
        h.admit(t, t, pkt(1));
        h.admit(SimTime::ZERO + ms(100), SimTime::ZERO + ms(100), pkt(0));
        let want = 0.1 / 21.0;
        let got = h.delay_of(1).as_secs_f64();
        assert!((got - want).abs() < 1e-9, "delay {got} s, want {want} s");
        assert_eq!(h.delay_of(0), SimDuration::ZERO);
    }

    /// `n0` packets of flow 0 and `n1` of flow 1 during [from, from + 100 ms), flow 0's first
    /// at `from` (it triggers the updates due by then).
    fn traffic(h: &mut Harmonizer, from: SimTime, n0: u32, n1: u32) {
        let n = n0.max(n1) as u64;
        for i in 0..n {
            let t = from + SimDuration::from_micros(100_000 * i / n);
            if i < n0 as u64 {
                h.admit(t, t, pkt(0));
            }
            if i < n1 as u64 {
                h.admit(t, t, pkt(1));
            }
        }
    }

    #[test]
    fn over_many_intervals_the_delay_settles_where_the_delayed_window_is_harmonized() {
        // Flow 1 sends three times flow 0's bytes every interval. Its window counts the delay
        // it already has (w = rate·(base + delay)), so its target keeps growing with the delay
        // until w1 = 3·(100 + d) and w0 = 100 give base·(w1/mean − 1) = d, i.e. d = 200/3 ms.
        let ms = |k: f64| SimDuration::from_secs_f64(k / 1000.0);
        let close = |got: SimDuration, want: SimDuration, tol_ps: u64| got.as_ps().abs_diff(want.as_ps()) <= tol_ps;
        let mut h = harmonizer();
        let at = |k: u64| SimTime::ZERO + SimDuration::from_millis(100 * k);
        traffic(&mut h, at(0), 10, 30);
        for k in 1..=6 {
            traffic(&mut h, at(k), 10, 30);
            // Targets from 53.5 to 65.5 ms: each interval moves one full step of 10 ms.
            assert!(close(h.delay_of(1), ms(10.0 * k as f64), 1_000), "after {k} intervals: {:?}", h.delay_of(1));
        }
        traffic(&mut h, at(7), 10, 30);
        // At 60 ms the target, base·(3·160 − 100)/(3·160 + 100) = 65.52 ms, is within a step.
        let d60 = 100.0 * (3.0 * 160.0 - 100.0) / (3.0 * 160.0 + 100.0);
        assert!(close(h.delay_of(1), ms(d60), 1_000), "{:?} vs {d60} ms", h.delay_of(1));
        for k in 8..40 {
            traffic(&mut h, at(k), 10, 30);
        }
        assert!(close(h.delay_of(1), ms(200.0 / 3.0), 1_000_000), "settles at 200/3 ms: {:?}", h.delay_of(1));
        assert_eq!(h.delay_of(0), SimDuration::ZERO, "the slow stream is never delayed");
        // Flow 1 falls silent: its measured window is 0 and its delay steps back down, 10 ms
        // per interval (each interval's bytes are counted afresh).
        let settled = h.delay_of(1);
        traffic(&mut h, at(40), 10, 0);
        traffic(&mut h, at(41), 10, 0);
        assert!(close(h.delay_of(1), settled - ms(10.0), 1_000), "{:?}", h.delay_of(1));
        traffic(&mut h, at(42), 10, 0);
        assert!(close(h.delay_of(1), settled - ms(20.0), 1_000), "{:?}", h.delay_of(1));
        assert_eq!(h.delay_of(0), SimDuration::ZERO, "a silent stream is not in the mean: flow 0 alone is the mean");
        // A packet after five silent intervals catches up with every update due: 46.7 ms
        // minus five steps reaches 0 and stays there.
        h.admit(at(48), at(48), pkt(0));
        assert_eq!(h.delay_of(1), SimDuration::ZERO);
    }

    #[test]
    fn the_delay_never_passes_its_cap() {
        let ms = SimDuration::from_millis;
        let mut h = Harmonizer::new(HarmonizerConfig { base_rtt: ms(100), interval: ms(100), max_delay: ms(30) });
        for k in 0..10 {
            traffic(&mut h, SimTime::ZERO + ms(100 * k), 10, 30);
        }
        assert_eq!(h.delay_of(1), ms(30), "three steps up to the 30 ms cap, then held there");
    }

    #[test]
    fn the_line_releases_every_packet_once_in_time_then_admission_order() {
        let us = |k: u64| SimTime::ZERO + SimDuration::from_micros(k);
        let mut h = harmonizer();
        assert!(h.is_empty());
        assert_eq!(h.len(), 0);
        // Admit returns the release time only when the packet becomes the earliest inside.
        assert_eq!(h.admit(us(0), us(50), pkt(0)), Some(us(50)));
        assert_eq!(h.admit(us(1), us(50), pkt(1)), None, "a tie is not earlier");
        assert_eq!(h.admit(us(2), us(70), pkt(2)), None);
        assert_eq!(h.admit(us(3), us(40), pkt(3)), Some(us(40)));
        assert_eq!((h.len(), h.is_empty()), (4, false));
        // Nothing is due before its time; each due packet comes out once.
        assert_eq!(h.release(us(39)).0.map(|p| p.flow.0), None);
        let mut out = vec![];
        for t in [40, 50, 50, 70] {
            let (p, next) = h.release(us(t));
            out.push((t, p.expect("due").flow.0, next));
        }
        assert_eq!(out, vec![(40, 3, Some(us(50))), (50, 0, Some(us(50))), (50, 1, Some(us(70))), (70, 2, None)], "equal times in admission order, none lost");
        assert!(h.is_empty());
        assert_eq!(h.len(), 0);
    }
}
