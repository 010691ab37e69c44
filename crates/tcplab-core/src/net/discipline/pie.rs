//! PIE (RFC 8033; Linux `sch_pie` without the departure-rate estimator, its default since
//! 5.2): a drop probability updated every `tupdate` from the queueing delay, read from each
//! departing packet's timestamp, and applied to arrivals:
//!
//! `p += α·(qdelay − target) + β·(qdelay − qdelay_old)`, with α and β scaled down while p is
//! small (÷2 below 10 %, ÷4 more per decade below 1 %, down to ÷2048), the step capped at 2 %
//! when p ≥ 10 %, 2 % added while qdelay exceeds 250 ms, and p × 63/64 when the delay has been
//! zero for two updates. Arrivals are never dropped during the burst allowance (150 ms after a
//! quiet start), while the delay is under target/2 and p under 20 %, or while fewer than two
//! MTUs wait; otherwise RFC 8033 §5.1's derandomisation applies (no drop while the
//! accumulated probability is under 0.85, a certain drop at 8.5). With `ecn`, an ECN-capable
//! packet is marked instead while p ≤ 10 %.
//!
//! The periodic update runs lazily: every update due at or before an enqueue or dequeue is run
//! first, with the state as it stood (it changes only at those calls, as the kernel timer
//! reads it).

use super::timed::TimedFifo;
use super::{DropReason, Dropped, QueueDiscipline, QueueStats};
use crate::engine::Rng;
use crate::net::packet::Packet;
use crate::params::ParamError;
use crate::quantity::Dur;
use crate::units::{QueueLimit, SimDuration, SimTime};

crate::param_table! {
    /// `queue.pie`: PIE's parameters (Linux `sch_pie` defaults; RFC 8033 §4).
    PieSpec => PieParams {
        /// Target queueing delay (default 15ms).
        target: Dur = Dur(SimDuration::from_millis(15)),
        /// Probability update period (default 15ms).
        tupdate: Dur = Dur(SimDuration::from_millis(15)),
        /// α, per second (default 0.125).
        alpha: f64 = 0.125,
        /// β, per second (default 1.25).
        beta: f64 = 1.25,
        /// Burst allowance after a quiet period (default 150ms).
        max_burst: Dur = Dur(SimDuration::from_millis(150)),
        /// Backlog guard: no early drop while fewer than 2 × mtu bytes wait (default 1500).
        mtu: u32 = 1500,
        /// Mark ECN-capable packets CE instead of dropping them while p ≤ 10 % (default false).
        ecn: bool = false,
    }
}

/// Check PIE's parameters.
pub fn check_params(p: &PieParams) -> Result<(), ParamError> {
    if p.target.0 == SimDuration::ZERO {
        return Err(ParamError::new("target", "must be positive (RFC 8033: 15ms)"));
    }
    if p.tupdate.0 < SimDuration::from_micros(1) {
        return Err(ParamError::new("tupdate", "must be at least 1us (RFC 8033: 15ms)"));
    }
    for (k, v) in [("alpha", p.alpha), ("beta", p.beta)] {
        if !(v > 0.0 && v <= 32.0) {
            return Err(ParamError::new(k, format!("{v} is out of range (0, 32] per second (RFC 8033: α 0.125, β 1.25)")));
        }
    }
    if p.mtu < 40 {
        return Err(ParamError::new("mtu", format!("{} is below a 40-byte packet", p.mtu)));
    }
    Ok(())
}

/// A PIE queue.
#[derive(Debug)]
pub struct Pie {
    fifo: TimedFifo,
    limit: QueueLimit,
    p: PieParams,
    rng: Rng,
    prob: f64,
    qdelay: SimDuration,
    qdelay_old: SimDuration,
    burst: SimDuration,
    dq_tstamp: Option<SimTime>,
    accu_prob: f64,
    next_update: SimTime,
    stats: QueueStats,
}

impl Pie {
    /// A PIE queue holding at most `limit` (Linux: 1000 packets), drawing from `rng`.
    pub fn new(limit: QueueLimit, p: &PieParams, rng: Rng) -> Self {
        Pie {
            fifo: TimedFifo::default(),
            limit,
            p: *p,
            rng,
            prob: 0.0,
            qdelay: SimDuration::ZERO,
            qdelay_old: SimDuration::ZERO,
            burst: p.max_burst.0,
            dq_tstamp: None,
            accu_prob: 0.0,
            next_update: SimTime::ZERO + p.tupdate.0,
            stats: QueueStats::default(),
        }
    }

    /// The drop probability.
    pub fn prob(&self) -> f64 {
        self.prob
    }

    /// The queueing delay last measured.
    pub fn qdelay(&self) -> SimDuration {
        self.qdelay
    }

    /// Burst allowance left.
    pub fn burst_left(&self) -> SimDuration {
        self.burst
    }

    /// One probability update (Linux `pie_calculate_probability`), with `backlog` bytes waiting.
    fn update(&mut self, backlog: u64) {
        let qdelay = self.qdelay.as_secs_f64();
        let old = self.qdelay_old.as_secs_f64();
        let target = self.p.target.0.as_secs_f64();
        let mut decay = !(self.qdelay == SimDuration::ZERO && backlog != 0);
        let (mut a, mut b) = (self.p.alpha, self.p.beta);
        if self.prob < 0.1 {
            a /= 2.0;
            b /= 2.0;
            let mut power = 100.0;
            while self.prob < 1.0 / power && power <= 1e6 {
                a /= 4.0;
                b /= 4.0;
                power *= 10.0;
            }
        }
        let mut delta = a * (qdelay - target) + b * (qdelay - old);
        if delta > 0.02 && self.prob >= 0.1 {
            delta = 0.02;
        }
        if qdelay > 0.25 {
            delta += 0.02;
        }
        self.prob += delta;
        if self.prob > 1.0 {
            self.prob = 1.0;
            decay = false;
        } else if self.prob < 0.0 {
            self.prob = 0.0;
        }
        if self.qdelay == SimDuration::ZERO && self.qdelay_old == SimDuration::ZERO && decay {
            self.prob -= self.prob / 64.0;
        }
        let half = SimDuration(self.p.target.0.as_ps() / 2);
        if self.qdelay < half && self.qdelay_old < half && self.prob == 0.0 {
            // A quiet queue: the burst allowance is restored.
            self.burst = self.p.max_burst.0;
            self.dq_tstamp = None;
            self.accu_prob = 0.0;
        }
        self.qdelay_old = self.qdelay;
    }

    /// Run every update due at or before `now`. Once an update leaves the state as it was,
    /// the rest until `now` would too, and are skipped.
    fn catch_up(&mut self, now: SimTime) {
        let step = self.p.tupdate.0;
        while self.next_update <= now {
            let before = (self.prob, self.qdelay_old, self.burst, self.dq_tstamp, self.accu_prob);
            self.update(self.fifo.bytes());
            self.next_update += step;
            if before == (self.prob, self.qdelay_old, self.burst, self.dq_tstamp, self.accu_prob) && self.next_update <= now {
                let skip = now.since(self.next_update).as_ps() / step.as_ps() + 1;
                self.next_update += step.saturating_mul(skip);
            }
        }
    }

    /// RFC 8033 §4.1 and §5.1 (Linux `pie_drop_early`): whether an arrival is dropped early.
    fn drop_early(&mut self) -> bool {
        if self.burst > SimDuration::ZERO {
            return false;
        }
        if self.qdelay < SimDuration(self.p.target.0.as_ps() / 2) && self.prob < 0.2 {
            return false;
        }
        if self.fifo.bytes() < 2 * self.p.mtu as u64 {
            return false;
        }
        if self.prob == 0.0 {
            self.accu_prob = 0.0;
        } else {
            self.accu_prob += self.prob;
        }
        if self.accu_prob < 0.85 {
            return false;
        }
        if self.accu_prob >= 8.5 {
            return true;
        }
        if self.rng.next_f64() < self.prob {
            self.accu_prob = 0.0;
            return true;
        }
        false
    }
}

impl QueueDiscipline for Pie {
    fn enqueue(&mut self, now: SimTime, mut pkt: Packet) -> Result<(), Dropped> {
        self.catch_up(now);
        let reason = if !self.fifo.fits(self.limit, pkt.size) {
            Some(DropReason::Full)
        } else if !self.drop_early() {
            None
        } else if self.p.ecn && self.prob <= 0.1 && pkt.ecn().capable() {
            pkt.mark_ce();
            self.stats.marked += 1;
            None
        } else {
            Some(DropReason::Policy)
        };
        if let Some(r) = reason {
            self.accu_prob = 0.0;
            self.stats.dropped += 1;
            return Err(Dropped::on_arrival(pkt, r));
        }
        self.fifo.push(now, pkt);
        TimedFifo::count_in(&mut self.stats, self.fifo.len(), self.fifo.bytes());
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime, _dropped: &mut Vec<Dropped>) -> Option<Packet> {
        self.catch_up(now);
        let (queued, pkt) = self.fifo.pop()?;
        self.stats.departed += 1;
        self.qdelay = if self.fifo.bytes() == 0 { SimDuration::ZERO } else { now.since(queued) };
        let dtime = self.dq_tstamp.map_or(SimDuration::ZERO, |t| now.since(t));
        self.dq_tstamp = Some(now);
        self.burst = self.burst - dtime;
        Some(pkt)
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
#[path = "pie_tests.rs"]
mod tests;
