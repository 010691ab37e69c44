//! The congestion controller of a resolved `tcp` table: its name and the parameters of its own
//! table (`bic`, `cubic`, `dctcp`), each table resolved key by key like the `tcp` table and building its
//! controller's configuration.

use serde::Serialize;

use super::{err, Res};
use crate::scenario::spec::{BicSpec, CcName, CubicSpec, DctcpSpec, Dur};
use crate::tcp::cc::{BicConfig, CcConfig, CubicConfig, DctcpConfig, RenoConfig};

/// The controller with its parameters. Serialized as `cc = "<name>"` plus the controller's
/// table (`bic`, `cubic`) when it has one.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "cc", rename_all = "kebab-case")]
pub enum ResolvedCc {
    /// Reno: RFC 5681 window rules and Reno fast recovery without SACK.
    Reno,
    /// NewReno: RFC 5681 window rules and RFC 6582 recovery without SACK.
    Newreno,
    /// BIC as in Linux 2.6.16.
    Bic {
        /// `[…tcp.bic]`.
        bic: ResolvedBic,
    },
    /// CUBIC as in modern Linux.
    Cubic {
        /// `[…tcp.cubic]`.
        cubic: ResolvedCubic,
    },
    /// DCTCP (RFC 8257) over ECN.
    Dctcp {
        /// `[…tcp.dctcp]`.
        dctcp: ResolvedDctcp,
    },
}

impl ResolvedCc {
    /// The controller's name in scenarios.
    pub fn name(&self) -> CcName {
        match self {
            ResolvedCc::Reno => CcName::Reno,
            ResolvedCc::Newreno => CcName::Newreno,
            ResolvedCc::Bic { .. } => CcName::Bic,
            ResolvedCc::Cubic { .. } => CcName::Cubic,
            ResolvedCc::Dctcp { .. } => CcName::Dctcp,
        }
    }

    /// The controller's configuration, with the `tcp` table's slow-start byte-counting limit
    /// (`abc_limit`, segments per ACK) and kernel HZ.
    pub fn config(&self, abc_limit: u32, hz: u32) -> CcConfig {
        let reno = RenoConfig { abc_limit };
        match self {
            ResolvedCc::Reno => CcConfig::Reno(reno),
            ResolvedCc::Newreno => CcConfig::NewReno(reno),
            ResolvedCc::Bic { bic } => CcConfig::Bic(bic.config(abc_limit, hz)),
            ResolvedCc::Cubic { cubic } => CcConfig::Cubic(cubic.config(hz)),
            ResolvedCc::Dctcp { dctcp } => CcConfig::Dctcp(DctcpConfig { reno, shift_g: dctcp.shift_g, alpha_on_init: dctcp.alpha_on_init }),
        }
    }
}

/// Every controller's parameters while the layers of a `tcp` table are applied (built-ins,
/// profile, `defaults.tcp`, the flow's own keys); the controller named last keeps its own.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct CcLayers {
    /// The controller named by the last layer that names one.
    pub name: CcName,
    /// BIC's parameters so far.
    pub bic: ResolvedBic,
    /// CUBIC's parameters so far.
    pub cubic: ResolvedCubic,
    /// DCTCP's parameters so far.
    pub dctcp: ResolvedDctcp,
}

impl CcLayers {
    /// The built-ins: NewReno, and each controller's Linux defaults.
    pub fn builtin() -> Self {
        CcLayers { name: CcName::Newreno, bic: ResolvedBic::default(), cubic: ResolvedCubic::default(), dctcp: ResolvedDctcp::default() }
    }

    /// Apply a layer's `cc` and controller tables over these.
    pub fn overlay(&mut self, cc: Option<CcName>, bic: &BicSpec, cubic: &CubicSpec, dctcp: &DctcpSpec) {
        if let Some(name) = cc {
            self.name = name;
        }
        self.bic.overlay(bic);
        self.cubic.overlay(cubic);
        set(&mut self.dctcp.shift_g, &dctcp.shift_g);
        set(&mut self.dctcp.alpha_on_init, &dctcp.alpha_on_init);
    }

    /// Check every controller's parameters (a bad value is an error even where the
    /// controller is not used); `path` is the `tcp` table's.
    pub fn check(&self, path: &str) -> Res<()> {
        self.bic.check(&format!("{path}.bic"))?;
        self.cubic.check(&format!("{path}.cubic"))?;
        self.dctcp.check(&format!("{path}.dctcp"))
    }

    /// The controller named last, with its parameters.
    pub fn select(self) -> ResolvedCc {
        match self.name {
            CcName::Reno => ResolvedCc::Reno,
            CcName::Newreno => ResolvedCc::Newreno,
            CcName::Bic => ResolvedCc::Bic { bic: self.bic },
            CcName::Cubic => ResolvedCc::Cubic { cubic: self.cubic },
            CcName::Dctcp => ResolvedCc::Dctcp { dctcp: self.dctcp },
        }
    }
}

fn set<T: Clone>(dst: &mut T, v: &Option<T>) {
    if let Some(v) = v {
        *dst = v.clone();
    }
}

/// BIC's parameters, resolved (see `spec::BicSpec` for each key's meaning and range).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedBic {
    /// Largest window increase per RTT, segments (S_max; Linux 2.6.16: 16).
    pub max_increment: u32,
    /// Fraction of the window kept after a loss ×1024 (Linux: 819).
    pub beta: u32,
    /// Reno behaviour at or below this window, segments (Linux: 14).
    pub low_window: u32,
    /// ssthresh at connection start, segments; 0 = the `tcp` table's (Linux 2.6.16: 100).
    pub initial_ssthresh: u32,
    /// Fast convergence (Linux: on).
    pub fast_convergence: bool,
    /// Growth near the previous maximum, B/smooth_part segments per RTT (Linux: 20).
    pub smooth_part: u32,
}

impl Default for ResolvedBic {
    /// Linux 2.6.16's module parameters (`BicConfig::default()`).
    fn default() -> Self {
        let c = BicConfig::default();
        ResolvedBic {
            max_increment: c.max_increment,
            beta: c.beta,
            low_window: c.low_window,
            initial_ssthresh: c.initial_ssthresh,
            fast_convergence: c.fast_convergence,
            smooth_part: c.smooth_part,
        }
    }
}

impl ResolvedBic {
    fn overlay(&mut self, s: &BicSpec) {
        let BicSpec { max_increment, beta, low_window, initial_ssthresh, fast_convergence, smooth_part } = s;
        set(&mut self.max_increment, max_increment);
        set(&mut self.beta, beta);
        set(&mut self.low_window, low_window);
        set(&mut self.initial_ssthresh, initial_ssthresh);
        set(&mut self.fast_convergence, fast_convergence);
        set(&mut self.smooth_part, smooth_part);
    }

    fn check(&self, path: &str) -> Res<()> {
        if self.max_increment == 0 {
            return err(format!("{path}.max_increment"), "must be at least 1");
        }
        if !(1..1024).contains(&self.beta) {
            return err(format!("{path}.beta"), "must be in 1..1024 (the kept fraction ×1024)");
        }
        if self.smooth_part == 0 {
            return err(format!("{path}.smooth_part"), "must be at least 1");
        }
        Ok(())
    }

    /// BIC's configuration with the `tcp` table's ABC limit (`tcp_abc`: 0 off, 1, 2) and HZ.
    pub fn config(&self, abc: u32, hz: u32) -> BicConfig {
        let ResolvedBic { max_increment, beta, low_window, initial_ssthresh, fast_convergence, smooth_part } = *self;
        BicConfig { fast_convergence, max_increment, low_window, beta, initial_ssthresh, smooth_part, abc, hz }
    }
}

/// The largest `bic_scale`: C ≈ 98 segments/s³, far beyond any kernel's use, keeps the cube
/// arithmetic exact.
const MAX_BIC_SCALE: u32 = 10_000;

/// CUBIC's parameters, resolved (see `spec::CubicSpec` for each key's meaning and range).
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct ResolvedCubic {
    /// Fraction of the window kept after a loss ×1024 (Linux: 717).
    pub beta: u32,
    /// C·1024/10 (Linux `bic_scale`: 41, C ≈ 0.4).
    pub bic_scale: u32,
    /// Fast convergence (Linux: on).
    pub fast_convergence: bool,
    /// Reno-friendly region (Linux: on).
    pub tcp_friendliness: bool,
    /// HyStart (Linux: on).
    pub hystart: bool,
    /// HyStart acts from this window on, segments (Linux: 16).
    pub hystart_low_window: u32,
    /// ACKs at most this far apart form a HyStart train (Linux: 2 ms).
    pub hystart_ack_delta: Dur,
}

impl Default for ResolvedCubic {
    /// Linux's module parameters (`CubicConfig::default()`).
    fn default() -> Self {
        let c = CubicConfig::default();
        ResolvedCubic {
            beta: c.beta,
            bic_scale: c.bic_scale,
            fast_convergence: c.fast_convergence,
            tcp_friendliness: c.tcp_friendliness,
            hystart: c.hystart,
            hystart_low_window: c.hystart_low_window,
            hystart_ack_delta: Dur(c.hystart_ack_delta),
        }
    }
}

impl ResolvedCubic {
    fn overlay(&mut self, s: &CubicSpec) {
        let CubicSpec { beta, bic_scale, fast_convergence, tcp_friendliness, hystart, hystart_low_window, hystart_ack_delta } = s;
        set(&mut self.beta, beta);
        set(&mut self.bic_scale, bic_scale);
        set(&mut self.fast_convergence, fast_convergence);
        set(&mut self.tcp_friendliness, tcp_friendliness);
        set(&mut self.hystart, hystart);
        set(&mut self.hystart_low_window, hystart_low_window);
        set(&mut self.hystart_ack_delta, hystart_ack_delta);
    }

    fn check(&self, path: &str) -> Res<()> {
        if !(1..1024).contains(&self.beta) {
            return err(format!("{path}.beta"), "must be in 1..1024 (the kept fraction ×1024)");
        }
        if !(1..=MAX_BIC_SCALE).contains(&self.bic_scale) {
            return err(format!("{path}.bic_scale"), format!("must be in 1..={MAX_BIC_SCALE} (C·1024/10; 41 is C ≈ 0.4)"));
        }
        Ok(())
    }

    /// CUBIC's configuration with the `tcp` table's HZ.
    pub fn config(&self, hz: u32) -> CubicConfig {
        let ResolvedCubic { beta, bic_scale, fast_convergence, tcp_friendliness, hystart, hystart_low_window, hystart_ack_delta } = *self;
        CubicConfig { fast_convergence, beta, bic_scale, tcp_friendliness, hystart, hystart_low_window, hystart_ack_delta: hystart_ack_delta.0, hz }
    }
}

/// DCTCP's parameters, resolved (see `spec::DctcpSpec`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct ResolvedDctcp {
    /// g = 2^−shift_g (Linux: 4).
    pub shift_g: u32,
    /// α at the start, 1/1024ths (Linux: 1024).
    pub alpha_on_init: u32,
}

impl Default for ResolvedDctcp {
    /// Linux's module parameters (`DctcpConfig::default()`).
    fn default() -> Self {
        let c = DctcpConfig::default();
        ResolvedDctcp { shift_g: c.shift_g, alpha_on_init: c.alpha_on_init }
    }
}

impl ResolvedDctcp {
    fn check(&self, path: &str) -> Res<()> {
        if self.shift_g > 10 {
            return err(format!("{path}.shift_g"), format!("{} is out of range (0..=10; g = 2^-shift_g)", self.shift_g));
        }
        if self.alpha_on_init > 1024 {
            return err(format!("{path}.alpha_on_init"), format!("{} is out of range (0..=1024, α in 1/1024ths)", self.alpha_on_init));
        }
        Ok(())
    }
}
