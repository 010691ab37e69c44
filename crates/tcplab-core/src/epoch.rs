//! A wall-clock instant for header captures: the UTC time simulated time 0 is shown at
//! (pcapng timestamps count from 1970-01-01T00:00:00Z). A scenario writes it as an RFC 3339
//! UTC time — `"2024-05-01T12:00:00Z"`, with up to nine decimals of a second — or as whole
//! seconds since 1970; the resolved scenario writes it back in the first form.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

const NS_PER_S: u64 = 1_000_000_000;
const S_PER_DAY: u64 = 86_400;

/// Nanoseconds since 1970-01-01T00:00:00Z (leap seconds not counted, as Unix time).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Epoch(pub u64);

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = ((m + 9) % 12) as i64;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day count since 1970-01-01 (Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

/// Parse `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+00:00)` (a space may stand for `T`).
pub fn parse_epoch(s: &str) -> Result<Epoch, String> {
    let bad = |why: &str| Err(format!("\"{s}\": {why} (write a UTC time such as \"2024-05-01T12:00:00Z\", or whole seconds since 1970)"));
    let body = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')).or_else(|| s.strip_suffix("+00:00"));
    let Some(body) = body else { return bad("must end in Z (UTC)") };
    let b = body.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') || b[13] != b':' || b[16] != b':' {
        return bad("not of the form YYYY-MM-DDTHH:MM:SSZ");
    }
    let digits = |r: std::ops::Range<usize>| b[r.clone()].iter().all(u8::is_ascii_digit).then(|| body[r].parse::<u32>().ok()).flatten();
    let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(sec)) = (digits(0..4), digits(5..7), digits(8..10), digits(11..13), digits(14..16), digits(17..19)) else {
        return bad("not of the form YYYY-MM-DDTHH:MM:SSZ");
    };
    let mut frac_ns = 0u64;
    if b.len() > 19 {
        let f = &body[19..];
        let Some(digs) = f.strip_prefix('.') else { return bad("unexpected text after the seconds") };
        if digs.is_empty() || digs.len() > 9 || !digs.bytes().all(|c| c.is_ascii_digit()) {
            return bad("the fraction of a second must be 1 to 9 digits");
        }
        frac_ns = digs.parse::<u64>().unwrap() * 10u64.pow(9 - digs.len() as u32);
    }
    let y = y as i64;
    if !(1970..=2500).contains(&y) {
        return bad("the year must be 1970 to 2500");
    }
    if !(1..=12).contains(&mo) || d < 1 || d > days_in_month(y, mo) {
        return bad("no such date");
    }
    if h > 23 || mi > 59 || sec > 59 {
        return bad("no such time of day");
    }
    let secs = days_from_civil(y, mo, d) as u64 * S_PER_DAY + u64::from(h) * 3600 + u64::from(mi) * 60 + u64::from(sec);
    Ok(Epoch(secs * NS_PER_S + frac_ns))
}

impl fmt::Display for Epoch {
    /// RFC 3339 UTC, with the fraction of a second only when there is one (trailing zeros cut).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (secs, ns) = (self.0 / NS_PER_S, self.0 % NS_PER_S);
        let (y, m, d) = civil_from_days((secs / S_PER_DAY) as i64);
        let t = secs % S_PER_DAY;
        write!(f, "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}", t / 3600, t / 60 % 60, t % 60)?;
        if ns > 0 {
            let frac = format!("{ns:09}");
            write!(f, ".{}", frac.trim_end_matches('0'))?;
        }
        f.write_str("Z")
    }
}

impl Serialize for Epoch {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_string())
    }
}

impl<'de> Deserialize<'de> for Epoch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Epoch;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a UTC time as a quoted string such as \"2024-05-01T12:00:00Z\", or whole seconds since 1970")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Epoch, E> {
                parse_epoch(v).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Epoch, E> {
                // Up to 2500-01-01, as a string may write.
                if v > 16_725_225_600 {
                    return Err(E::custom(format!("{v} s is after 2500-01-01")));
                }
                Ok(Epoch(v * NS_PER_S))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Epoch, E> {
                u64::try_from(v).map_err(|_| E::custom("an epoch before 1970 cannot be written in a capture")).and_then(|v| self.visit_u64(v))
            }
        }
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_instants_parse_and_print_back() {
        for (s, secs) in [
            ("1970-01-01T00:00:00Z", 0u64),
            ("2000-03-01T00:00:00Z", 951_868_800),
            ("2024-02-29T12:34:56Z", 1_709_210_096),
            ("2038-01-19T03:14:08Z", 1u64 << 31),
            ("2500-01-01T00:00:00Z", 16_725_225_600),
        ] {
            let e = parse_epoch(s).unwrap();
            assert_eq!(e, Epoch(secs * NS_PER_S), "{s}");
            assert_eq!(e.to_string(), s);
        }
        let e = parse_epoch("2002-11-16T09:30:00.000000125Z").unwrap();
        assert_eq!(e.0 % NS_PER_S, 125);
        assert_eq!(e.to_string(), "2002-11-16T09:30:00.000000125Z");
        assert_eq!(parse_epoch("2002-11-16 09:30:00.5+00:00").unwrap().to_string(), "2002-11-16T09:30:00.5Z");
        // Every day of four centuries round-trips.
        for day in (0..146_097 * 4).step_by(7) {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(days_from_civil(y, m, d), day);
        }
    }

    #[test]
    fn bad_instants_say_why() {
        for (s, why) in [
            ("2024-05-01T12:00:00", "must end in Z"),
            ("2024-05-01T12:00:00+09:00", "must end in Z"),
            ("2023-02-29T00:00:00Z", "no such date"),
            ("2024-13-01T00:00:00Z", "no such date"),
            ("2024-05-01T24:00:00Z", "no such time of day"),
            ("1969-12-31T23:59:59Z", "1970 to 2500"),
            ("2024-5-1T12:00:00Z", "not of the form"),
            ("2024-05-01T12:00:00.Z", "1 to 9 digits"),
            ("2024-05-01T12:00:00.1234567890Z", "1 to 9 digits"),
            ("2024-05-01T12:00:00 Z", "unexpected text"),
        ] {
            let e = parse_epoch(s).unwrap_err();
            assert!(e.contains(why), "{s}: {e}");
        }
    }
}
