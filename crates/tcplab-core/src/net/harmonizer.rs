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
    use crate::net::packet::{Body, End, FlowId, RouteId};

    fn pkt(flow: u32) -> Packet {
        Packet { flow: FlowId(flow), to: End::Dst, route: RouteId(0), hop: 0, class: 0, size: 1000, created: SimTime::ZERO, body: Body::Udp { seq: 0, len: 972 } }
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
}
