//! Units with explicit types: simulated time in integer picoseconds, sizes in bytes, rates in
//! bit/s — plus the parsers for the human-readable forms used in scenarios (`"150ms"`,
//! `"1Gbps"`, `"256MB"`).
//!
//! Picoseconds because one byte at 100 Gb/s is 80 ps and an ATM cell at OC-3 is not a whole
//! number of nanoseconds; a u64 of picoseconds still covers 213 days.

use std::fmt;
use std::ops::{Add, AddAssign, Mul, Sub};

/// Picoseconds per second.
pub const PS_PER_SEC: u64 = 1_000_000_000_000;

/// An instant of simulated time, in picoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimTime(pub u64);

/// A span of simulated time, in picoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SimDuration(pub u64);

impl SimTime {
    /// Time zero.
    pub const ZERO: SimTime = SimTime(0);
    /// The far future: used for "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// Seconds as f64 (for reporting only; never feed this back into the engine).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }

    /// Time from seconds, rounded to the nearest picosecond.
    pub fn from_secs_f64(s: f64) -> SimTime {
        SimTime((s * PS_PER_SEC as f64).round().max(0.0) as u64)
    }

    /// `self - earlier`, saturating at zero.
    pub fn since(self, earlier: SimTime) -> SimDuration {
        SimDuration(self.0.saturating_sub(earlier.0))
    }
}

impl SimDuration {
    /// Zero duration.
    pub const ZERO: SimDuration = SimDuration(0);
    /// Effectively infinite.
    pub const MAX: SimDuration = SimDuration(u64::MAX);

    /// From picoseconds.
    pub const fn from_ps(ps: u64) -> Self {
        SimDuration(ps)
    }
    /// From nanoseconds.
    pub const fn from_nanos(ns: u64) -> Self {
        SimDuration(ns * 1_000)
    }
    /// From microseconds.
    pub const fn from_micros(us: u64) -> Self {
        SimDuration(us * 1_000_000)
    }
    /// From milliseconds.
    pub const fn from_millis(ms: u64) -> Self {
        SimDuration(ms * 1_000_000_000)
    }
    /// From seconds.
    pub const fn from_secs(s: u64) -> Self {
        SimDuration(s * PS_PER_SEC)
    }
    /// From seconds as f64, rounded to the nearest picosecond.
    pub fn from_secs_f64(s: f64) -> Self {
        SimDuration((s * PS_PER_SEC as f64).round().max(0.0) as u64)
    }
    /// Seconds as f64 (reporting only).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / PS_PER_SEC as f64
    }
    /// Picoseconds.
    pub const fn as_ps(self) -> u64 {
        self.0
    }
    /// Multiply, saturating.
    pub fn saturating_mul(self, k: u64) -> Self {
        SimDuration(self.0.saturating_mul(k))
    }
    /// Round up to a multiple of `q` (no-op when `q` is zero).
    pub fn round_up_to(self, q: SimDuration) -> Self {
        if q.0 == 0 {
            return self;
        }
        SimDuration(self.0.div_ceil(q.0).saturating_mul(q.0))
    }
}

impl Add<SimDuration> for SimTime {
    type Output = SimTime;
    fn add(self, d: SimDuration) -> SimTime {
        SimTime(self.0.saturating_add(d.0))
    }
}
impl AddAssign<SimDuration> for SimTime {
    fn add_assign(&mut self, d: SimDuration) {
        self.0 = self.0.saturating_add(d.0);
    }
}
impl Add for SimDuration {
    type Output = SimDuration;
    fn add(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_add(d.0))
    }
}
impl Sub for SimDuration {
    type Output = SimDuration;
    fn sub(self, d: SimDuration) -> SimDuration {
        SimDuration(self.0.saturating_sub(d.0))
    }
}

impl Mul<SimDuration> for u64 {
    type Output = SimDuration;
    fn mul(self, d: SimDuration) -> SimDuration {
        SimDuration(d.0.saturating_mul(self))
    }
}

impl fmt::Display for SimDuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_duration(*self))
    }
}

/// A rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BitRate(pub u64);

impl BitRate {
    /// Bits per second.
    pub const fn bps(self) -> u64 {
        self.0
    }

    /// Time to serialize `bits` at this rate, rounded up to whole picoseconds.
    pub fn tx_time_bits(self, bits: u64) -> SimDuration {
        // bits * 1e12 / rate, in u128 so 64-bit byte counts at any rate cannot overflow.
        let ps = (bits as u128 * PS_PER_SEC as u128).div_ceil(self.0 as u128);
        SimDuration(ps.min(u64::MAX as u128) as u64)
    }

    /// Time to serialize `bytes` at this rate.
    pub fn tx_time(self, bytes: u64) -> SimDuration {
        self.tx_time_bits(bytes * 8)
    }

    /// Bytes this rate carries in `d` (rounded down).
    pub fn bytes_in(self, d: SimDuration) -> u64 {
        (self.0 as u128 * d.0 as u128 / (8 * PS_PER_SEC as u128)) as u64
    }
}

impl fmt::Display for BitRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&format_rate(*self))
    }
}

/// A limit on a queue: packets, bytes or none.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueLimit {
    /// At most this many packets.
    Packets(u64),
    /// At most this many bytes (IP bytes).
    Bytes(u64),
    /// No limit.
    Unlimited,
}

/// The longest time a scenario may give (10⁶ s ≈ 11.6 days), and the simulated time at which a
/// run with no `run.duration` stops at the latest. With every time value and the sum of all
/// propagation delays below it, no event time comes near the 2⁶⁴ ps (≈ 213 days) that
/// `SimTime` holds, so time arithmetic never saturates within a run.
pub const MAX_TIME: SimDuration = SimDuration(1_000_000 * PS_PER_SEC);

/// Parse a duration: a number with unit `ps`, `ns`, `us`, `ms`, `s`, at most `MAX_TIME`.
pub fn parse_duration(s: &str) -> Result<SimDuration, String> {
    let (num, unit) = split_number(s)?;
    let scale: f64 = match unit {
        "ps" => 1.0,
        "ns" => 1e3,
        "us" | "µs" => 1e6,
        "ms" => 1e9,
        "s" => 1e12,
        "" => return Err(format!("'{s}' has no unit (use ps, ns, us, ms or s)")),
        u => return Err(format!("unknown time unit '{u}' in '{s}' (use ps, ns, us, ms or s)")),
    };
    let ps = num * scale;
    if !(0.0..1.8e19).contains(&ps) {
        return Err(format!("'{s}' is out of range"));
    }
    if ps > MAX_TIME.0 as f64 {
        return Err(format!("'{s}' is longer than the longest time tcplab simulates (1000000s, about 11.6 days)"));
    }
    if ps > 0.0 && ps.round() == 0.0 {
        return Err(format!("'{s}' is shorter than one picosecond, tcplab's time resolution (write 0s for none)"));
    }
    if (ps - ps.round()).abs() > 1e-6 * ps.max(1.0) {
        return Err(format!("'{s}' is not a whole number of picoseconds"));
    }
    Ok(SimDuration(ps.round() as u64))
}

/// Parse a rate: a number with unit `bps`, `kbps`, `Mbps`, `Gbps`, `Tbps` (decimal prefixes).
pub fn parse_rate(s: &str) -> Result<BitRate, String> {
    let (num, unit) = split_number(s)?;
    let scale: f64 = match unit {
        "bps" => 1.0,
        "kbps" | "Kbps" => 1e3,
        "Mbps" => 1e6,
        "Gbps" => 1e9,
        "Tbps" => 1e12,
        "" => return Err(format!("'{s}' has no unit (use bps, kbps, Mbps, Gbps)")),
        u => return Err(format!("unknown rate unit '{u}' in '{s}' (use bps, kbps, Mbps, Gbps)")),
    };
    let v = (num * scale).round();
    if !(1.0..1.8e19).contains(&v) {
        return Err(format!("'{s}' must be a positive rate of at least 1bps"));
    }
    Ok(BitRate(v as u64))
}

/// Parse a rate that may be zero (a CBR schedule's silent piece): `"0bps"`, `"0Mbps"`, … are
/// 0; anything else as `parse_rate` (a negative rate is refused).
pub fn parse_rate_or_zero(s: &str) -> Result<BitRate, String> {
    let (num, unit) = split_number(s)?;
    if num == 0.0 {
        // The unit must still be a rate's.
        return parse_rate(&format!("1{unit}")).map(|_| BitRate(0)).map_err(|_| format!("unknown rate unit '{unit}' in '{s}' (use bps, kbps, Mbps, Gbps)"));
    }
    parse_rate(s)
}

/// Format a rate that may be zero (`"0bps"` for zero, else as `format_rate`).
pub fn format_rate_or_zero(r: BitRate) -> String {
    if r.0 == 0 {
        return "0bps".into();
    }
    format_rate(r)
}

/// Parse a size: a number with unit `B`, `KB`, `MB`, `GB` (powers of 1000) or `KiB`, `MiB`,
/// `GiB` (powers of 1024).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let (num, unit) = split_number(s)?;
    let scale: f64 = match unit {
        "B" => 1.0,
        "KB" | "kB" => 1e3,
        "MB" => 1e6,
        "GB" => 1e9,
        "TB" => 1e12,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "" => return Err(format!("'{s}' has no unit (use B, KB, MB, GB, KiB, MiB, GiB)")),
        u => return Err(format!("unknown size unit '{u}' in '{s}' (use B, KB, MB, GB, KiB, MiB, GiB)")),
    };
    let v = num * scale;
    if !(0.0..1.8e19).contains(&v) || (v - v.round()).abs() > 1e-6 {
        return Err(format!("'{s}' is not a whole number of bytes"));
    }
    Ok(v.round() as u64)
}

/// Parse a queue limit: `"40pkts"`, a size such as `"64KB"`, or `"unlimited"`.
pub fn parse_queue_limit(s: &str) -> Result<QueueLimit, String> {
    let t = s.trim();
    if t == "unlimited" {
        return Ok(QueueLimit::Unlimited);
    }
    let (num, unit) = split_number(t)?;
    match unit {
        "pkts" | "pkt" | "packets" => {
            if num < 1.0 || num.fract() != 0.0 {
                return Err(format!("'{s}' must be a whole number of packets, at least 1"));
            }
            Ok(QueueLimit::Packets(num as u64))
        }
        _ => {
            let b = parse_size(t)?;
            if b == 0 {
                return Err(format!("'{s}' must be at least 1 byte"));
            }
            Ok(QueueLimit::Bytes(b))
        }
    }
}

fn split_number(s: &str) -> Result<(f64, &str), String> {
    let t = s.trim();
    let end = t.char_indices().find(|(_, c)| !(c.is_ascii_digit() || *c == '.' || *c == 'e' || *c == 'E' || *c == '+' || *c == '-')).map(|(i, _)| i).unwrap_or(t.len());
    // 'e' may start a unit only if nothing numeric follows; units here never start with 'e'.
    let (n, u) = t.split_at(end);
    let num: f64 = n.parse().map_err(|_| format!("'{s}' does not start with a number"))?;
    if !num.is_finite() || num < 0.0 {
        return Err(format!("'{s}' must be a non-negative finite number"));
    }
    Ok((num, u.trim()))
}

/// Format a duration with the largest unit that keeps it exact, e.g. `"150ms"`.
pub fn format_duration(d: SimDuration) -> String {
    let ps = d.0;
    if ps == 0 {
        return "0s".into();
    }
    for (unit, scale) in [("s", PS_PER_SEC), ("ms", 1_000_000_000), ("us", 1_000_000), ("ns", 1_000)] {
        if ps.is_multiple_of(scale) {
            return format!("{}{unit}", ps / scale);
        }
    }
    format!("{ps}ps")
}

/// Format a rate with the largest unit that keeps it exact, e.g. `"1Gbps"`.
pub fn format_rate(r: BitRate) -> String {
    let v = r.0;
    for (unit, scale) in [("Tbps", 1_000_000_000_000u64), ("Gbps", 1_000_000_000), ("Mbps", 1_000_000), ("kbps", 1_000)] {
        if v.is_multiple_of(scale) {
            return format!("{}{unit}", v / scale);
        }
    }
    format!("{v}bps")
}

/// Format a size in bytes exactly, e.g. `"256MB"`, `"64KiB"`, `"1500B"`.
pub fn format_size(b: u64) -> String {
    if b == 0 {
        return "0B".into();
    }
    for (unit, scale) in [("GB", 1_000_000_000u64), ("MB", 1_000_000), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KB", 1_000), ("KiB", 1 << 10)] {
        if b.is_multiple_of(scale) {
            return format!("{}{unit}", b / scale);
        }
    }
    format!("{b}B")
}

/// Format a queue limit in the scenario syntax.
pub fn format_queue_limit(q: QueueLimit) -> String {
    match q {
        QueueLimit::Packets(n) => format!("{n}pkts"),
        QueueLimit::Bytes(b) => format_size(b),
        QueueLimit::Unlimited => "unlimited".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_times() {
        assert_eq!(parse_duration("150ms").unwrap(), SimDuration::from_millis(150));
        assert_eq!(parse_duration("10us").unwrap(), SimDuration::from_micros(10));
        assert_eq!(parse_duration("2.5s").unwrap(), SimDuration::from_millis(2500));
        assert_eq!(parse_duration("80ps").unwrap(), SimDuration(80));
        assert!(parse_duration("10").unwrap_err().contains("no unit"));
        assert!(parse_duration("10 fortnights").unwrap_err().contains("unknown time unit"));
        assert!(parse_duration("-1s").is_err());
        assert!(parse_duration("0.5ps").unwrap_err().contains("whole number"));
        assert_eq!(parse_duration("1000000s").unwrap(), MAX_TIME);
        assert!(parse_duration("1000001s").unwrap_err().contains("longest time"), "no time value past MAX_TIME");
        assert!(parse_duration("1e7s").unwrap_err().contains("longest time"));
    }

    #[test]
    fn parses_rates_sizes_limits() {
        assert_eq!(parse_rate("1Gbps").unwrap(), BitRate(1_000_000_000));
        assert_eq!(parse_rate("155.52Mbps").unwrap(), BitRate(155_520_000));
        assert!(parse_rate("0bps").is_err());
        assert_eq!(parse_rate_or_zero("0Mbps").unwrap(), BitRate(0));
        assert_eq!(parse_rate_or_zero("2Mbps").unwrap(), BitRate(2_000_000));
        assert!(parse_rate_or_zero("-2Mbps").unwrap_err().contains("non-negative"));
        assert!(parse_rate_or_zero("0furlongs").unwrap_err().contains("unknown rate unit"));
        assert_eq!(format_rate_or_zero(BitRate(0)), "0bps");
        assert_eq!(parse_size("256MB").unwrap(), 256_000_000);
        assert_eq!(parse_size("64KiB").unwrap(), 65_536);
        assert_eq!(parse_queue_limit("40pkts").unwrap(), QueueLimit::Packets(40));
        assert_eq!(parse_queue_limit("64KB").unwrap(), QueueLimit::Bytes(64_000));
        assert_eq!(parse_queue_limit("unlimited").unwrap(), QueueLimit::Unlimited);
        assert!(parse_queue_limit("0pkts").is_err());
    }

    #[test]
    fn formats_round_trip() {
        for s in ["150ms", "10us", "3s", "80ps", "1ns"] {
            assert_eq!(format_duration(parse_duration(s).unwrap()), s);
        }
        for s in ["1Gbps", "155520kbps", "10Mbps"] {
            assert_eq!(format_rate(parse_rate(s).unwrap()), s);
        }
        for s in ["256MB", "64KiB", "1500B"] {
            assert_eq!(format_size(parse_size(s).unwrap()), s);
        }
    }

    #[test]
    fn serialization_time_is_exact() {
        // One byte at 100 Gb/s is 80 ps; a 53-byte cell at 149.76 Mb/s is 2 831 196.58… ps.
        assert_eq!(BitRate(100_000_000_000).tx_time(1), SimDuration(80));
        assert_eq!(BitRate(1_000_000_000).tx_time(1500), SimDuration::from_nanos(12_000));
        assert_eq!(BitRate(149_760_000).tx_time(53), SimDuration(2_831_197));
    }
}
