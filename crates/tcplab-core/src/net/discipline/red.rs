//! RED (Floyd & Jacobson 1993, "Random Early Detection Gateways for Congestion Avoidance"),
//! with the gentle variant (Floyd 2000) and Adaptive RED (Floyd, Gummadi & Shenker 2001), as
//! ns-3's `RedQueueDisc` runs them and with its defaults.
//!
//! On each arrival the average queue (packets) is `avg ← avg·(1−w_q)^(m+1) + w_q·q`, where `m`
//! is the number of `mean_pkt_size` packets the line could have sent while the queue was empty
//! (0 when it was not). Between `min_th` and `max_th` a packet is dropped (or marked CE, with
//! `ecn` and an ECN-capable packet) with `p_a = p_b / (1 − count·p_b)`,
//! `p_b = max_p·(avg−min_th)/(max_th−min_th)`, `count` the packets accepted in the region since
//! the last drop, so the gaps between drops are uniform on 1..1/p_b (the 1993 paper's §7
//! result; the pseudocode of its figure 2 counts the arriving packet too, which shifts them
//! to 1..1/p_b − 1). Gentle: from max_th
//! to 2·max_th, `p_b` rises from max_p to 1. Above (or above max_th without gentle) every
//! packet is dropped; with `hard_drop` off an ECN-capable one is marked instead.
//! Adaptive: at an arrival at least `interval` (0.5 s) after the last change, max_p grows by
//! min(0.01, max_p/4) if avg is above the middle 40–60 % band between the thresholds (and
//! max_p ≤ 0.5), or is multiplied by 0.9 if below it (and max_p ≥ 0.01).

use super::timed::TimedFifo;
use super::{DropReason, Dropped, QueueDiscipline, QueueStats};
use crate::engine::Rng;
use crate::net::packet::Packet;
use crate::params::ParamError;
use crate::units::{BitRate, QueueLimit, SimDuration, SimTime};

crate::param_table! {
    /// `queue.red`: RED's parameters (ns-3 `RedQueueDisc` defaults; thresholds in packets).
    RedSpec => RedParams {
        /// Average queue below which nothing is dropped, packets (default 5).
        min_th: f64 = 5.0,
        /// Average queue from which every packet is dropped (2·max_th with gentle), packets
        /// (default 15).
        max_th: f64 = 15.0,
        /// Drop probability at max_th, in (0, 1] (default 0.02, ns-3's 1/LInterm).
        max_p: f64 = 0.02,
        /// Weight of the newest sample in the average, in (0, 1] (default 0.002).
        w_q: f64 = 0.002,
        /// Gentle RED between max_th and 2·max_th (default true).
        gentle: bool = true,
        /// Adaptive RED: max_p tuned every 0.5 s toward the middle band (default false).
        adaptive: bool = false,
        /// Packet size the idle-time decay counts in, bytes (default 500).
        mean_pkt_size: u32 = 500,
        /// Mark ECN-capable packets CE instead of dropping them early (default false).
        ecn: bool = false,
        /// Drop, never mark, above max_th (2·max_th with gentle) (default true).
        hard_drop: bool = true,
    }
}

/// Adaptive RED's adjustment period.
pub const ADAPT_INTERVAL: SimDuration = SimDuration::from_millis(500);

/// Check RED's parameters.
pub fn check_params(p: &RedParams) -> Result<(), ParamError> {
    if !(p.min_th >= 0.0 && p.min_th.is_finite()) {
        return Err(ParamError::new("min_th", format!("{} must be a non-negative number of packets", p.min_th)));
    }
    if !(p.max_th > p.min_th && p.max_th.is_finite()) {
        return Err(ParamError::new("max_th", format!("{} must be above min_th ({})", p.max_th, p.min_th)));
    }
    if !(p.max_p > 0.0 && p.max_p <= 1.0) {
        return Err(ParamError::new("max_p", format!("{} is out of range (0, 1]", p.max_p)));
    }
    if !(p.w_q > 0.0 && p.w_q <= 1.0) {
        return Err(ParamError::new("w_q", format!("{} is out of range (0, 1] (ns-3 0.002)", p.w_q)));
    }
    if p.mean_pkt_size == 0 {
        return Err(ParamError::new("mean_pkt_size", "must be positive (bytes; ns-3 500)"));
    }
    Ok(())
}

/// A RED queue.
#[derive(Debug)]
pub struct Red {
    fifo: TimedFifo,
    limit: QueueLimit,
    p: RedParams,
    /// Transmission time of a `mean_pkt_size` packet (None: no line rate, no idle decay).
    typical: Option<SimDuration>,
    rng: Rng,
    avg: f64,
    /// Packets accepted between the thresholds since the last drop or mark.
    count: u64,
    /// When the queue last became empty (None: not empty).
    idle_since: Option<SimTime>,
    max_p: f64,
    last_set: SimTime,
    stats: QueueStats,
}

/// What RED does with an arrival its buffer has room for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Accept,
    Early,
    Forced,
}

impl Red {
    /// A RED queue holding at most `limit`, on a line of `rate` (for the idle decay), drawing
    /// from `rng`.
    pub fn new(limit: QueueLimit, p: &RedParams, rate: Option<BitRate>, rng: Rng) -> Self {
        Red {
            fifo: TimedFifo::default(),
            limit,
            p: *p,
            typical: rate.map(|r| r.tx_time(p.mean_pkt_size as u64)),
            rng,
            avg: 0.0,
            count: 0,
            idle_since: Some(SimTime::ZERO),
            max_p: p.max_p,
            last_set: SimTime::ZERO,
            stats: QueueStats::default(),
        }
    }

    /// The average queue, packets.
    pub fn avg(&self) -> f64 {
        self.avg
    }

    /// The current max_p (Adaptive RED changes it).
    pub fn max_p(&self) -> f64 {
        self.max_p
    }

    fn update_avg(&mut self, now: SimTime) {
        let m = match (self.idle_since, self.typical) {
            (Some(t), Some(s)) if s.as_ps() > 0 => (now.since(t).as_ps() / s.as_ps()) as f64,
            _ => 0.0,
        };
        let q = self.fifo.len() as f64;
        self.avg = self.avg * (1.0 - self.p.w_q).powf(m + 1.0) + self.p.w_q * q;
    }

    fn adapt(&mut self, now: SimTime) {
        if !self.p.adaptive || now.since(self.last_set) <= ADAPT_INTERVAL {
            return;
        }
        let span = self.p.max_th - self.p.min_th;
        let (lo, hi) = (self.p.min_th + 0.4 * span, self.p.min_th + 0.6 * span);
        if self.avg > hi && self.max_p <= 0.5 {
            self.max_p += (self.max_p / 4.0).min(0.01);
        } else if self.avg < lo && self.max_p >= 0.01 {
            self.max_p *= 0.9;
        }
        self.last_set = now;
    }

    fn judge(&mut self) -> Verdict {
        let (min, max) = (self.p.min_th, self.p.max_th);
        let pb = if self.avg < min {
            self.count = 0;
            return Verdict::Accept;
        } else if self.avg < max {
            self.max_p * (self.avg - min) / (max - min)
        } else if self.p.gentle && self.avg < 2.0 * max {
            self.max_p + (1.0 - self.max_p) * (self.avg - max) / max
        } else {
            self.count = 0;
            return Verdict::Forced;
        };
        let c = self.count as f64 * pb;
        let pa = if c < 1.0 { pb / (1.0 - c) } else { 1.0 };
        if self.rng.next_f64() < pa {
            self.count = 0;
            Verdict::Early
        } else {
            self.count += 1;
            Verdict::Accept
        }
    }
}

impl QueueDiscipline for Red {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet) -> Result<(), Dropped> {
        self.update_avg(now);
        self.adapt(now);
        let verdict = self.judge();
        if !self.fifo.fits(self.limit, pkt.size) {
            self.stats.dropped += 1;
            return Err(Dropped::on_arrival(pkt, DropReason::Full));
        }
        let markable = self.p.ecn && pkt.ecn().capable();
        match verdict {
            Verdict::Accept => {}
            Verdict::Early if markable => {
                pkt.mark_ce();
                self.stats.marked += 1;
            }
            Verdict::Forced if markable && !self.p.hard_drop => {
                pkt.mark_ce();
                self.stats.marked += 1;
            }
            Verdict::Early | Verdict::Forced => {
                self.stats.dropped += 1;
                return Err(Dropped::on_arrival(pkt, DropReason::Policy));
            }
        }
        self.idle_since = None;
        self.fifo.push(now, pkt);
        TimedFifo::count_in(&mut self.stats, self.fifo.len(), self.fifo.bytes());
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime, _dropped: &mut Vec<Dropped>) -> Option<Packet> {
        let (_, p) = self.fifo.pop()?;
        self.stats.departed += 1;
        if self.fifo.is_empty() {
            self.idle_since = Some(now);
        }
        Some(p)
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len()
    }

    fn len_bytes(&self) -> u64 {
        self.fifo.bytes()
    }

    fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
#[path = "red_tests.rs"]
mod tests;
