//! An endpoint's timers: one slot per kind (retransmission, delayed ACK, persist, pacing), each unset
//! or set to an expiry time, and the earliest of them for the simulation to schedule. Unset is
//! kept as `SimTime::MAX`, which no expiry reaches (event times stay below `units::MAX_TIME`
//! plus the run's delays), so the earliest is a plain minimum.

use crate::units::SimTime;

/// The kinds of timer an endpoint keeps, in the order expired ones are handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum TimerKind {
    /// Delayed ACK (RFC 1122 §4.2.3.2; Linux ato).
    DelayedAck = 0,
    /// Retransmission timeout (RFC 6298).
    Retransmit = 1,
    /// Zero-window probe (RFC 9293 §3.8.6.1).
    Persist = 2,
    /// The pacing gate's release of the next segment (only with a pacing rate; `conn::rate`).
    Pacing = 3,
}

impl TimerKind {
    /// Every kind, in the order expired timers are handled.
    pub const ALL: [TimerKind; 4] = [TimerKind::DelayedAck, TimerKind::Retransmit, TimerKind::Persist, TimerKind::Pacing];
}

/// One expiry per timer kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timers {
    at: [SimTime; 4],
}

impl Default for Timers {
    fn default() -> Self {
        Timers { at: [SimTime::MAX; 4] }
    }
}

impl Timers {
    /// Set `kind` to expire at `t` (replacing any earlier setting).
    #[inline]
    pub fn set(&mut self, kind: TimerKind, t: SimTime) {
        debug_assert!(t != SimTime::MAX, "an expiry is a real time");
        self.at[kind as usize] = t;
    }

    /// Unset `kind`.
    #[inline]
    pub fn clear(&mut self, kind: TimerKind) {
        self.at[kind as usize] = SimTime::MAX;
    }

    /// Unset every timer.
    pub fn clear_all(&mut self) {
        *self = Timers::default();
    }

    /// When `kind` expires, if set.
    #[inline]
    pub fn get(&self, kind: TimerKind) -> Option<SimTime> {
        let t = self.at[kind as usize];
        (t != SimTime::MAX).then_some(t)
    }

    /// True when `kind` is set.
    #[inline]
    pub fn is_set(&self, kind: TimerKind) -> bool {
        self.at[kind as usize] != SimTime::MAX
    }

    /// If `kind` has expired by `now`, unset it and return true.
    #[inline]
    pub fn take_expired(&mut self, kind: TimerKind, now: SimTime) -> bool {
        let due = self.at[kind as usize] <= now;
        if due {
            self.clear(kind);
        }
        due
    }

    /// The earliest expiry, if any timer is set.
    #[inline]
    pub fn next(&self) -> Option<SimTime> {
        let t = self.at[0].min(self.at[1]).min(self.at[2]).min(self.at[3]);
        (t != SimTime::MAX).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_set_timer_is_next_and_expired_ones_are_taken_once() {
        let mut t = Timers::default();
        assert_eq!(t.next(), None);
        t.set(TimerKind::Retransmit, SimTime(30));
        t.set(TimerKind::Persist, SimTime(20));
        assert_eq!(t.next(), Some(SimTime(20)));
        assert!(!t.take_expired(TimerKind::Persist, SimTime(19)));
        assert!(t.take_expired(TimerKind::Persist, SimTime(20)));
        assert!(!t.take_expired(TimerKind::Persist, SimTime(21)), "taken once");
        assert_eq!(t.next(), Some(SimTime(30)));
        assert!(!t.is_set(TimerKind::DelayedAck) && t.is_set(TimerKind::Retransmit));
        t.set(TimerKind::Retransmit, SimTime(40));
        assert_eq!(t.get(TimerKind::Retransmit), Some(SimTime(40)), "a new setting replaces the old");
        t.clear_all();
        assert_eq!(t.next(), None);
    }
}
