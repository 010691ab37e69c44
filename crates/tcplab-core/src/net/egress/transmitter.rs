//! A transmitter: serializes packets at a rate, the bytes its link layer puts on the line.
//!
//! It computes each departure from the cumulative bits sent since it last went idle, so
//! per-packet rounding to picoseconds never accumulates: it keeps the exact end of the last
//! serialization as whole picoseconds plus a remainder in units of 1/rate ps, and reports the
//! end rounded up.

use crate::net::link_layer::LinkLayer;
use crate::units::{BitRate, SimDuration, SimTime};

/// A transmitter's clock.
#[derive(Clone, Debug)]
pub struct Transmitter {
    rate: BitRate,
    link: LinkLayer,
    /// Exact end of the last serialization: `clock_ps` + `clock_rem`/rate picoseconds.
    clock_ps: SimTime,
    clock_rem: u64,
    /// Serialization time of the last two packet sizes seen, as (size, whole ps, remainder in
    /// 1/rate ps): saves a 128-bit division per packet.
    ser_cache: [(u32, u64, u64); 2],
    /// End of the last serialization, rounded up.
    pub tx_end: SimTime,
}

/// A transmitter's clock before an admission (`Transmitter::checkpoint`).
#[derive(Clone, Copy, Debug)]
pub struct ClockCheckpoint {
    tx_end: SimTime,
    clock: (SimTime, u64),
}

impl Transmitter {
    /// An idle transmitter at `rate` serializing by the rule of `link`.
    pub fn new(rate: BitRate, link: LinkLayer) -> Self {
        Transmitter { rate, link, clock_ps: SimTime::ZERO, clock_rem: 0, ser_cache: [(u32::MAX, 0, 0); 2], tx_end: SimTime::ZERO }
    }

    /// The rate.
    pub fn rate(&self) -> BitRate {
        self.rate
    }

    /// Serialize by the rule of `link` from now on.
    pub fn set_link(&mut self, link: LinkLayer) {
        self.link = link;
        self.ser_cache = [(u32::MAX, 0, 0); 2];
    }

    /// True while a serialization started before `now` has not ended.
    #[inline(always)]
    pub fn busy_at(&self, now: SimTime) -> bool {
        self.tx_end > now
    }

    /// A packet starts at `now`: if the transmitter went idle before, back-to-back
    /// transmission restarts from now (unless the last one ended exactly now).
    #[inline(always)]
    pub fn restart_if_idle(&mut self, now: SimTime) {
        if self.tx_end < now {
            self.clock_ps = now;
            self.clock_rem = 0;
        }
    }

    /// Serialize a packet of `size` IP bytes after the last: returns (and keeps in `tx_end`)
    /// its end of service rounded up.
    #[inline(always)]
    pub fn serialize(&mut self, size: u32) -> SimTime {
        let r = self.rate.bps();
        // line bytes·8·10¹²/r = qs + rs/r (cached per size); with rem < r, rem + rs < 2r.
        let (qs, rs) = match self.ser_cache {
            [(s0, q, rm), _] if s0 == size => (q, rm),
            [a, (s1, q, rm)] if s1 == size => {
                self.ser_cache = [(s1, q, rm), a];
                (q, rm)
            }
            _ => self.serialization_time(r, size),
        };
        // The true sum is below 2r; it can pass 2^64 only for rates above 2^63 b/s.
        let (sum, wrapped) = self.clock_rem.overflowing_add(rs);
        let carry = wrapped || sum >= r;
        self.clock_ps += SimDuration(qs + carry as u64);
        self.clock_rem = if carry { sum.wrapping_sub(r) } else { sum };
        self.tx_end = self.clock_ps + SimDuration((self.clock_rem > 0) as u64);
        self.tx_end
    }

    /// Serialization time of a packet of `size` IP bytes at `r` b/s, as whole picoseconds and
    /// a remainder in 1/r ps, put first in the cache (a new size: off the common path).
    #[inline(never)]
    fn serialization_time(&mut self, r: u64, size: u32) -> (u64, u64) {
        let bits_ps = self.link.line_bytes(size) as u128 * 8 * crate::units::PS_PER_SEC as u128;
        let (q, rm) = ((bits_ps / r as u128) as u64, (bits_ps % r as u128) as u64);
        self.ser_cache = [(size, q, rm), self.ser_cache[0]];
        (q, rm)
    }

    /// The clock, for `restore`.
    pub fn checkpoint(&self) -> ClockCheckpoint {
        ClockCheckpoint { tx_end: self.tx_end, clock: (self.clock_ps, self.clock_rem) }
    }

    /// Set the clock back to `c`.
    pub fn restore(&mut self, c: &ClockCheckpoint) {
        self.tx_end = c.tx_end;
        (self.clock_ps, self.clock_rem) = c.clock;
    }
}
