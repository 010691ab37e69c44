//! The congestion controller of a resolved `tcp` table: its name and the parameters of its own
//! table (`[….tcp.NAME]`), layered and checked like the `tcp` table's keys. Generated from the
//! one list of controllers (`tcp::cc::registry`); nothing here names a controller.

use serde::Serialize;

use super::{err, Res};
use crate::params::{Overlay, ParamError};
use crate::scenario::spec::{CcName, TcpSpec};
use crate::tcp::cc::{CcConfig, CcContext, Registered};

fn refuse<T>(path: String, e: ParamError) -> Res<T> {
    err(format!("{path}.{}", e.key), e.reason)
}

macro_rules! resolved_cc {
    (controllers { $( $(#[doc = $doc:literal])* $v:ident, $table:ident, $name:literal, $reg:ty; )* }) => {
        /// The controller with its parameters. Serialized as `cc = "<name>"` plus the
        /// controller's table when it has keys.
        #[derive(Clone, Copy, Debug, PartialEq, Serialize)]
        #[serde(tag = "cc")]
        pub enum ResolvedCc {
            $(
                $(#[doc = $doc])*
                #[serde(rename = $name)]
                $v {
                    #[doc = concat!("`[….tcp.", stringify!($table), "]`.")]
                    #[serde(skip_serializing_if = "crate::params::is_keyless")]
                    $table: <$reg as Registered>::Params,
                },
            )*
        }

        impl ResolvedCc {
            /// The controller's name in scenarios.
            pub fn name(&self) -> CcName {
                match self { $( ResolvedCc::$v { .. } => CcName::$v, )* }
            }

            /// The controller's configuration, with what it reads of the `tcp` table.
            pub fn config(&self, tcp: &CcContext) -> CcConfig {
                match self { $( ResolvedCc::$v { $table } => CcConfig::$v(<$reg as Registered>::config($table, tcp)), )* }
            }
        }

        /// Every controller's parameters while the layers of a `tcp` table are applied
        /// (built-ins, profile, `defaults.tcp`, the flow's own keys); the controller named last
        /// keeps its own.
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub(super) struct CcLayers {
            /// The controller named by the last layer that names one.
            pub name: CcName,
            $( $table: <$reg as Registered>::Params, )*
        }

        impl CcLayers {
            /// The built-ins: NewReno, and each controller's declared defaults.
            pub fn builtin() -> Self {
                CcLayers { name: CcName::NewReno, $( $table: Default::default(), )* }
            }

            /// Apply a layer's `cc` and controller tables over these.
            pub fn overlay(&mut self, layer: &TcpSpec) {
                if let Some(name) = layer.cc {
                    self.name = name;
                }
                $( self.$table.overlay(&layer.$table); )*
            }

            /// True when the controller named last needs ECN.
            pub fn needs_ecn(&self) -> bool {
                match self.name { $( CcName::$v => <$reg as Registered>::NEEDS_ECN, )* }
            }

            /// Check every controller's parameters (a bad value is an error even where the
            /// controller is not used), then what the one selected needs of the `tcp` table
            /// (`tcp`); `path` is the `tcp` table's.
            pub fn check(&self, path: &str, tcp: &CcContext) -> Res<()> {
                $(
                    if let Err(e) = <$reg as Registered>::check_params(&self.$table) {
                        return refuse(format!("{path}.{}", stringify!($table)), e);
                    }
                )*
                let selected = match self.name { $( CcName::$v => <$reg as Registered>::check_selected(&self.$table, tcp), )* };
                selected.or_else(|e| refuse(path.to_string(), e))
            }

            /// The controller named last, with its parameters.
            pub fn select(self) -> ResolvedCc {
                match self.name { $( CcName::$v => ResolvedCc::$v { $table: self.$table }, )* }
            }
        }
    };
}

crate::tcp::cc::registry::with_controllers!(resolved_cc {});
