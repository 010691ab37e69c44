//! Quantities as scenarios and parameter tables write them: strings with units (`"2ms"`,
//! `"1Gbps"`, `"128KB"`, `"40pkts"`), each parsed by `units` so a bad value fails with its
//! field path, and written back in the same form.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

use crate::units::{self, BitRate, QueueLimit, SimDuration};

macro_rules! unit_newtype {
    ($name:ident, $inner:ty, $parse:path, $format:path, $what:literal) => {
        #[doc = concat!("A ", $what, " written with units in the scenario.")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $name(pub $inner);

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&$format(self.0))
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                        write!(f, "a {} string such as the examples in docs/scenario-format.md", $what)
                    }
                    fn visit_str<E: de::Error>(self, v: &str) -> Result<$name, E> {
                        $parse(v).map($name).map_err(E::custom)
                    }
                }
                d.deserialize_str(V)
            }
        }
    };
}

unit_newtype!(Dur, SimDuration, units::parse_duration, units::format_duration, "duration");
unit_newtype!(Rate, BitRate, units::parse_rate, units::format_rate, "rate");
unit_newtype!(RateOrZero, BitRate, units::parse_rate_or_zero, units::format_rate_or_zero, "rate (0bps for none)");
unit_newtype!(QLimit, QueueLimit, units::parse_queue_limit, units::format_queue_limit, "queue limit");

/// A size in bytes: a string with units (`"128KB"`) or a plain integer of bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Size(pub u64);

impl Serialize for Size {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&units::format_size(self.0))
    }
}

impl<'de> Deserialize<'de> for Size {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Size;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"128KB\" or a whole number of bytes")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Size, E> {
                units::parse_size(v).map(Size).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Size, E> {
                Ok(Size(v))
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Size, E> {
                u64::try_from(v).map(Size).map_err(|_| E::custom("a size cannot be negative"))
            }
        }
        d.deserialize_any(V)
    }
}

/// A threshold in bytes or `"unlimited"` (`initial_ssthresh`): a size string such as "64KB".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threshold {
    /// No threshold.
    Unlimited,
    /// This many bytes.
    Bytes(u64),
}

impl Threshold {
    /// In bytes, `u64::MAX` for unlimited.
    pub fn bytes(self) -> u64 {
        match self {
            Threshold::Unlimited => u64::MAX,
            Threshold::Bytes(b) => b,
        }
    }
}

impl Serialize for Threshold {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Threshold::Unlimited => s.serialize_str("unlimited"),
            Threshold::Bytes(b) => s.serialize_str(&units::format_size(*b)),
        }
    }
}

impl<'de> Deserialize<'de> for Threshold {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = Threshold;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as \"64KB\" or \"unlimited\"")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Threshold, E> {
                match units::parse_queue_limit(v).map_err(E::custom)? {
                    QueueLimit::Unlimited => Ok(Threshold::Unlimited),
                    QueueLimit::Bytes(b) => Ok(Threshold::Bytes(b)),
                    QueueLimit::Packets(_) => Err(E::custom("give a size (e.g. \"64KB\") or \"unlimited\"")),
                }
            }
        }
        d.deserialize_str(V)
    }
}
