//! Reordering and duplication in an emulator's propagation stage, seeded, after netem.
//!
//! **Reorder** (`reorder = p`, `reorder_delay = d`): each packet, with probability p, is held
//! back by d beyond the emulator's delay, so the packets that follow it within d overtake it.
//! netem's `delay D reorder P` is the mirror image — a fraction P of the packets skips the
//! delay D and overtakes the ones still waiting (sch_netem.c, `netem_enqueue`: a reordered
//! packet is queued at the head with time_to_send = now) — and is this module with
//! `delay = 0, reorder = 1 − P, reorder_delay = D`. netem's correlation parameters are not
//! modelled: every draw is independent.
//!
//! **Duplicate** (`duplicate = q`): each packet that passes the loss stage is, with
//! probability q, sent twice; each copy draws its own reorder decision, so with reordering on
//! the copies may arrive apart. netem re-enqueues the copy at the root qdisc, where it meets
//! the loss stage a second time; here the copy is not dropped again (duplicates are rare and
//! the difference is a second-order loss), and it takes no extra line time (emulators that
//! duplicate have no rate limit, see `scenario::resolve::emulators`).
//!
//! Packets leave in order of (release time, admission order): a packet that is not held back
//! never overtakes one admitted before it.

use std::collections::BTreeMap;

use crate::engine::Rng;
use crate::net::packet::Packet;
use crate::units::{SimDuration, SimTime};

/// Reordering and duplication parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImpairConfig {
    /// Probability that a packet is held back by `reorder_delay`, in [0, 1).
    pub reorder: f64,
    /// How long a held-back packet waits beyond the delay.
    pub reorder_delay: SimDuration,
    /// Probability that a packet is sent twice, in [0, 1).
    pub duplicate: f64,
}

/// A delay line that reorders and duplicates.
#[derive(Debug)]
pub struct Impairment {
    cfg: ImpairConfig,
    rng: Rng,
    line: BTreeMap<(SimTime, u64), Packet>,
    seq: u64,
    /// Copies made.
    pub duplicated: u64,
    /// Packets held back.
    pub reordered: u64,
}

impl Impairment {
    /// An empty line drawing from `rng`.
    pub fn new(cfg: ImpairConfig, rng: Rng) -> Self {
        Impairment { cfg, rng, line: BTreeMap::new(), seq: 0, duplicated: 0, reordered: 0 }
    }

    /// Admit a packet that would arrive at `at`; returns `Some(time)` when the earliest
    /// packet inside is now due earlier (the caller schedules an arrival then).
    pub fn admit(&mut self, at: SimTime, pkt: Packet) -> Option<SimTime> {
        let before = self.line.keys().next().map(|k| k.0);
        let copies = if self.cfg.duplicate > 0.0 && self.rng.bernoulli(self.cfg.duplicate) {
            self.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut release = at;
            if self.cfg.reorder > 0.0 && self.rng.bernoulli(self.cfg.reorder) {
                self.reordered += 1;
                release = at + self.cfg.reorder_delay;
            }
            self.seq += 1;
            self.line.insert((release, self.seq), pkt);
        }
        let now_first = self.line.keys().next().map(|k| k.0);
        (now_first != before).then_some(now_first).flatten()
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
    use crate::net::packet::Body;

    fn pkt(seq: u64) -> Packet {
        crate::net::packet::test_udp(0, 0, 1000, seq)
    }

    /// Feed `n` packets 10 µs apart; return (arrival time, seq) in release order.
    fn drain(cfg: ImpairConfig, n: u64) -> (Vec<(u64, u64)>, Impairment) {
        let mut im = Impairment::new(cfg, Rng::from_seed(17));
        for k in 0..n {
            im.admit(SimTime(k * 10_000_000), pkt(k));
        }
        let mut out = vec![];
        while let Some(&(t, _)) = im.line.keys().next() {
            let (p, _) = im.release(t);
            let Body::Udp { seq, .. } = p.unwrap().body else { unreachable!() };
            out.push((t.0, seq));
        }
        (out, im)
    }

    #[test]
    fn held_back_packets_are_overtaken_by_those_within_the_reorder_delay() {
        let cfg = ImpairConfig { reorder: 0.05, reorder_delay: SimDuration::from_micros(35), duplicate: 0.0 };
        let (out, im) = drain(cfg, 20_000);
        assert_eq!(out.len(), 20_000, "no packet lost or copied");
        let share = im.reordered as f64 / 20_000.0;
        assert!((0.045..0.055).contains(&share), "{share}");
        assert!(out.windows(2).all(|w| w[0].0 <= w[1].0), "released in time order");
        // A packet held back 35 µs is overtaken by the (up to 3) packets sent in the next 35 µs.
        let mut displaced = 0;
        for (i, &(t, seq)) in out.iter().enumerate() {
            let sent = seq * 10_000_000;
            if t > sent {
                assert_eq!(t - sent, 35_000_000);
                let overtaken_by = out[..i].iter().filter(|&&(_, s)| s > seq).count();
                assert!(overtaken_by <= 3);
                displaced += (overtaken_by > 0) as u32;
            } else {
                assert_eq!(t, sent);
            }
        }
        assert!(displaced > 900, "{displaced}");
    }

    #[test]
    fn duplicates_arrive_with_their_original() {
        let cfg = ImpairConfig { reorder: 0.0, reorder_delay: SimDuration::ZERO, duplicate: 0.02 };
        let (out, im) = drain(cfg, 20_000);
        assert_eq!(out.len() as u64, 20_000 + im.duplicated);
        let share = im.duplicated as f64 / 20_000.0;
        assert!((0.017..0.023).contains(&share), "{share}");
        assert!(out.windows(2).all(|w| w[0].1 <= w[1].1), "no reordering: copies follow their original");
        let twice = out.windows(2).filter(|w| w[0].1 == w[1].1).count() as u64;
        assert_eq!(twice, im.duplicated);
    }

    #[test]
    fn admit_reports_only_an_earlier_head() {
        let cfg = ImpairConfig { reorder: 0.0, reorder_delay: SimDuration::ZERO, duplicate: 0.0 };
        let mut im = Impairment::new(cfg, Rng::from_seed(1));
        assert_eq!(im.admit(SimTime(50), pkt(0)), Some(SimTime(50)));
        assert_eq!(im.admit(SimTime(60), pkt(1)), None);
        assert_eq!(im.admit(SimTime(40), pkt(2)), Some(SimTime(40)));
        assert!(im.release(SimTime(45)).0.is_none(), "nothing due");
        let (p, next) = im.release(SimTime(40));
        assert!(matches!(p.map(|p| p.body), Some(Body::Udp { seq: 2, .. })));
        assert_eq!(next, Some(SimTime(50)));
    }
}
