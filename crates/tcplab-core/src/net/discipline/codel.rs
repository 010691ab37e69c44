//! CoDel (RFC 8289; Linux `include/net/codel_impl.h`): a FIFO that drops at the head when
//! every packet's sojourn time has stayed above `target` for a whole `interval`, then drops
//! more often by the control law `interval / √count` until the sojourn falls below `target`.
//! With `ecn` an ECN-capable packet is marked CE instead of dropped (Linux's `codel_dequeue`).
//!
//! `CodelState` is the per-queue state machine; FQ-CoDel runs one per flow queue.

use super::timed::TimedFifo;
use super::{DropReason, Dropped, QueueDiscipline, QueueStats};
use crate::net::packet::Packet;
use crate::params::ParamError;
use crate::quantity::Dur;
use crate::units::{QueueLimit, SimDuration, SimTime};

crate::param_table! {
    /// `queue.codel`: CoDel's parameters (Linux `sch_codel` defaults).
    CodelSpec => CodelParams {
        /// Acceptable standing sojourn time (default 5ms, RFC 8289 §4.4).
        target: Dur = Dur(SimDuration::from_millis(5)),
        /// Sliding window over which the sojourn must stay above target (default 100ms,
        /// RFC 8289 §4.3).
        interval: Dur = Dur(SimDuration::from_millis(100)),
        /// A queue holding at most this many IP bytes after the dequeue is never judged over
        /// target (RFC 8289's MAXPACKET; default 1500).
        mtu: u32 = 1500,
        /// Mark ECN-capable packets CE instead of dropping them (default false, Linux's).
        ecn: bool = false,
    }
}

/// The rule CoDel judges by.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelRule {
    /// Acceptable standing sojourn time.
    pub target: SimDuration,
    /// Sliding window and control-law base.
    pub interval: SimDuration,
    /// Backlog (bytes, after the dequeue) at or below which the queue is not judged.
    pub mtu: u64,
    /// Mark instead of dropping where the packet is ECN-capable.
    pub ecn: bool,
}

impl From<&CodelParams> for CodelRule {
    fn from(p: &CodelParams) -> Self {
        CodelRule { target: p.target.0, interval: p.interval.0, mtu: p.mtu as u64, ecn: p.ecn }
    }
}

/// Check CoDel's parameters (also FQ-CoDel's shared ones): a positive interval, a target
/// below it, and an MTU of at least one minimal packet.
pub fn check_rule(target: SimDuration, interval: SimDuration, mtu: u32) -> Result<(), ParamError> {
    if interval == SimDuration::ZERO {
        return Err(ParamError::new("interval", "must be positive (RFC 8289: 100ms)"));
    }
    if target == SimDuration::ZERO || target >= interval {
        return Err(ParamError::new("target", format!("{target} must be positive and below interval ({interval}) (RFC 8289: 5ms, 5–10 % of interval)")));
    }
    if mtu < 40 {
        return Err(ParamError::new("mtu", format!("{mtu} is below a 40-byte packet")));
    }
    Ok(())
}

/// CoDel's state for one queue (RFC 8289 §5).
#[derive(Clone, Copy, Debug, Default)]
pub struct CodelState {
    /// When the sojourn time will have been above target for an interval (None: below).
    first_above: Option<SimTime>,
    /// In the dropping state.
    dropping: bool,
    /// When the next drop (or mark) is due in the dropping state.
    drop_next: SimTime,
    /// Drops (and marks) since the dropping state was entered.
    count: u32,
    /// `count` when the dropping state was last entered.
    lastcount: u32,
}

/// The next drop time: `t + interval / √count` (RFC 8289's control law, exact).
pub fn control_law(t: SimTime, interval: SimDuration, count: u32) -> SimTime {
    t + SimDuration((interval.as_ps() as f64 / (count.max(1) as f64).sqrt()) as u64)
}

impl CodelState {
    /// True while in the dropping state.
    pub fn dropping(&self) -> bool {
        self.dropping
    }

    /// Drops and marks in the current (or last) dropping state.
    pub fn count(&self) -> u32 {
        self.count
    }

    /// RFC 8289's `dodequeue` judgement of the packet just taken (`item`), with `backlog`
    /// bytes left behind it: true when it is OK to drop.
    fn ok_to_drop(&mut self, item: Option<&(SimTime, Packet)>, backlog: u64, now: SimTime, r: &CodelRule) -> bool {
        let Some((queued, _)) = item else {
            self.first_above = None;
            return false;
        };
        if now.since(*queued) < r.target || backlog <= r.mtu {
            self.first_above = None;
            return false;
        }
        match self.first_above {
            None => {
                self.first_above = Some(now + r.interval);
                false
            }
            Some(t) => now >= t,
        }
    }

    /// The next packet of `fifo` at `now`, dropping (or marking) by CoDel's rule; drops go onto
    /// `dropped` and are counted in `stats` (as after dequeue), as are marks and departures.
    pub fn dequeue(&mut self, now: SimTime, fifo: &mut TimedFifo, r: &CodelRule, stats: &mut QueueStats, dropped: &mut Vec<Dropped>) -> Option<Packet> {
        let mut item = fifo.pop();
        let mut ok = self.ok_to_drop(item.as_ref(), fifo.bytes(), now, r);
        if item.is_none() {
            self.dropping = false;
            return None;
        }
        let drop = |item: (SimTime, Packet), stats: &mut QueueStats, dropped: &mut Vec<Dropped>| {
            stats.dropped += 1;
            stats.dropped_after_dequeue += 1;
            dropped.push(Dropped::at_head(item.1, DropReason::Policy));
        };
        if self.dropping {
            if !ok {
                self.dropping = false;
            }
            while self.dropping && now >= self.drop_next {
                self.count += 1;
                let (_, pkt) = item.as_mut().expect("dropping with a packet in hand");
                if r.ecn && pkt.ecn().capable() {
                    pkt.mark_ce();
                    stats.marked += 1;
                    self.drop_next = control_law(self.drop_next, r.interval, self.count);
                    break;
                }
                drop(item.take().expect("a packet"), stats, dropped);
                item = fifo.pop();
                ok = self.ok_to_drop(item.as_ref(), fifo.bytes(), now, r);
                if !ok {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, r.interval, self.count);
                }
            }
        } else if ok {
            let (_, pkt) = item.as_mut().expect("a packet");
            if r.ecn && pkt.ecn().capable() {
                pkt.mark_ce();
                stats.marked += 1;
            } else {
                drop(item.take().expect("a packet"), stats, dropped);
                item = fifo.pop();
                self.ok_to_drop(item.as_ref(), fifo.bytes(), now, r);
            }
            self.dropping = true;
            // Re-entering soon after leaving: resume near the drop rate that last controlled
            // the queue (RFC 8289 §5.5).
            let delta = self.count.wrapping_sub(self.lastcount);
            let since_next = now.0 as i128 - self.drop_next.0 as i128;
            self.count = if delta > 1 && delta < u32::MAX / 2 && since_next < 16 * r.interval.as_ps() as i128 { delta } else { 1 };
            self.lastcount = self.count;
            self.drop_next = control_law(now, r.interval, self.count);
        }
        let (_, pkt) = item?;
        stats.departed += 1;
        Some(pkt)
    }
}

/// A CoDel queue: one FIFO with a hard `limit` (Linux's default 1000 packets) and CoDel at its
/// head.
#[derive(Debug)]
pub struct Codel {
    fifo: TimedFifo,
    limit: QueueLimit,
    rule: CodelRule,
    state: CodelState,
    stats: QueueStats,
}

impl Codel {
    /// A CoDel queue holding at most `limit` waiting.
    pub fn new(limit: QueueLimit, rule: CodelRule) -> Self {
        Codel { fifo: TimedFifo::default(), limit, rule, state: CodelState::default(), stats: QueueStats::default() }
    }

    /// The state machine (for tests and traces).
    pub fn state(&self) -> &CodelState {
        &self.state
    }
}

impl QueueDiscipline for Codel {
    fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Dropped> {
        if !self.fifo.fits(self.limit, pkt.size) {
            self.stats.dropped += 1;
            return Err(Dropped::on_arrival(pkt, DropReason::Full));
        }
        self.fifo.push(now, pkt);
        TimedFifo::count_in(&mut self.stats, self.fifo.len(), self.fifo.bytes());
        Ok(())
    }

    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Dropped>) -> Option<Packet> {
        self.state.dequeue(now, &mut self.fifo, &self.rule, &mut self.stats, dropped)
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
#[path = "codel_tests.rs"]
mod tests;
