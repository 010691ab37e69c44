//! Parameter tables declared once: `param_table!` turns one list of keys, each with its type,
//! its default and its doc, into the table a scenario writes (every key optional, unknown keys
//! refused), the resolved values, and the overlay of one on the other. Layers (built-ins, a
//! profile, `defaults`, a flow's own keys) are applied by overlaying each in turn.

/// Resolved values that a table of optional keys overlays.
pub trait Overlay: Copy + std::fmt::Debug + PartialEq + Default + serde::Serialize {
    /// The table as written: every key optional.
    type Table: Clone + std::fmt::Debug + Default + PartialEq + serde::Serialize + serde::de::DeserializeOwned;
    /// How many keys the table has (0: a controller without parameters of its own).
    const KEYS: usize;
    /// Apply the keys `t` sets.
    fn overlay(&mut self, t: &Self::Table);
}

/// A bad parameter: the key (relative to the table being checked; the caller prefixes its
/// path) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamError {
    /// The key, e.g. `"beta"` or `"cubic.beta"`.
    pub key: String,
    /// Why it is refused.
    pub reason: String,
}

impl ParamError {
    /// A refusal of `key` for `reason`.
    pub fn new(key: impl Into<String>, reason: impl Into<String>) -> Self {
        ParamError { key: key.into(), reason: reason.into() }
    }
}

/// For `skip_serializing_if`: a table with nothing set.
pub fn is_unset<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

/// For `skip_serializing_if`: resolved values of a table without keys.
pub fn is_keyless<T: Overlay>(_: &T) -> bool {
    T::KEYS == 0
}

/// Declare a parameter table once:
///
/// ```ignore
/// param_table! {
///     /// `[….tcp.cubic]`: CUBIC's module parameters.
///     CubicSpec => CubicParams {
///         /// β ×1024, in 1..1024 (default 717).
///         beta: u32 = 717,
///     }
/// }
/// ```
///
/// makes `CubicSpec` (serde, every key `Option`, unknown keys refused, `is_empty`) and
/// `CubicParams` (the values, `Default` from the declared defaults, `Overlay` by the spec).
#[macro_export]
macro_rules! param_table {
    (
        $(#[doc = $doc:literal])*
        $spec:ident => $params:ident {
            $( $(#[doc = $kdoc:literal])* $key:ident : $ty:ty = $default:expr, )*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        pub struct $spec {
            $(
                $(#[doc = $kdoc])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $key: Option<$ty>,
            )*
        }

        impl $spec {
            /// True when no key is set.
            #[allow(dead_code)]
            pub fn is_empty(&self) -> bool {
                *self == $spec::default()
            }
        }

        $(#[doc = $doc])*
        ///
        /// Resolved: every key with its value.
        #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
        pub struct $params {
            $( $(#[doc = $kdoc])* pub $key: $ty, )*
        }

        impl Default for $params {
            /// The declared defaults.
            fn default() -> Self {
                $params { $( $key: $default, )* }
            }
        }

        impl $crate::params::Overlay for $params {
            type Table = $spec;
            const KEYS: usize = <[&str]>::len(&[$(stringify!($key)),*]);
            #[allow(unused_variables)]
            fn overlay(&mut self, t: &$spec) {
                $( if let Some(v) = &t.$key { self.$key = v.clone(); } )*
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    crate::param_table! {
        /// A test table.
        ToySpec => ToyParams {
            /// A count (default 3).
            count: u32 = 3,
            /// A switch (default on).
            on: bool = true,
        }
    }

    crate::param_table! {
        /// A table without keys.
        EmptySpec => EmptyParams {}
    }

    #[test]
    fn overlay_applies_only_the_keys_set() {
        let mut p = ToyParams::default();
        assert_eq!(p, ToyParams { count: 3, on: true });
        p.overlay(&ToySpec { count: Some(7), on: None });
        assert_eq!(p, ToyParams { count: 7, on: true });
        p.overlay(&ToySpec { count: None, on: Some(false) });
        assert_eq!(p, ToyParams { count: 7, on: false });
        assert_eq!(ToyParams::KEYS, 2);
        assert_eq!(EmptyParams::KEYS, 0);
        assert!(is_keyless(&EmptyParams::default()) && !is_keyless(&p));
    }

    #[test]
    fn the_table_refuses_unknown_keys_and_reads_known_ones() {
        let t: ToySpec = toml::from_str("count = 5").unwrap();
        assert_eq!(t, ToySpec { count: Some(5), on: None });
        assert!(!t.is_empty() && ToySpec::default().is_empty());
        let e = toml::from_str::<ToySpec>("cuont = 5").unwrap_err().to_string();
        assert!(e.contains("unknown field `cuont`"), "{e}");
        assert!(toml::from_str::<EmptySpec>("x = 1").is_err());
    }
}
