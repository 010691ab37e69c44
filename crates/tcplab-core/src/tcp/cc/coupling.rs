//! Inputs a controller reads from outside its own connection, and the first of them: RFC 6356's
//! coupled congestion control ("LIA", the linked-increases algorithm of MPTCP) over a group of
//! parallel streams.
//!
//! A controller is given its inputs by the connection (`Connection::attach_input`), which keeps
//! them and hands them again to the controller it rebuilds once the MSS is known. A controller
//! that cannot use an input refuses it (`CongestionControl::attach`), and the scenario checks
//! that before the run.
//!
//! RFC 6356 §3: for each ACK on subflow i, cwnd_i grows by
//! min(α·bytes_acked·MSS_i / cwnd_total, bytes_acked·MSS_i / cwnd_i), with
//! α = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²; slow start and the decrease
//! on loss stay each subflow's own. The members counted are those with an RTT estimate whose
//! sender has not finished (Linux MPTCP's `mptcp_ccc_recalc_alpha` counts every subflow that
//! can send and has an srtt; an idle one keeps its window in the sums).

use std::sync::{Arc, Mutex};

use crate::units::SimDuration;

/// One input from outside the connection.
#[derive(Clone, Debug)]
pub enum ControllerInput {
    /// Membership of a coupled group (RFC 6356).
    Coupled(CoupledMember),
}

/// A member's last published state.
#[derive(Clone, Copy, Debug, Default)]
struct MemberState {
    /// Congestion window, bytes.
    cwnd: u64,
    /// Smoothed RTT, seconds (0 = no estimate yet: not counted).
    srtt_s: f64,
    /// The sender has finished (sent its FIN): not counted.
    left: bool,
}

/// The group's shared state: one entry per member, in the order they joined.
#[derive(Debug, Default)]
pub struct CoupledGroup {
    members: Vec<MemberState>,
}

impl CoupledGroup {
    /// An empty group, shared.
    pub fn shared() -> Arc<Mutex<CoupledGroup>> {
        Arc::new(Mutex::new(CoupledGroup::default()))
    }

    /// Add a member; the handle it publishes through.
    pub fn join(group: &Arc<Mutex<CoupledGroup>>) -> CoupledMember {
        let mut g = group.lock().expect("a coupled group is never poisoned");
        g.members.push(MemberState::default());
        CoupledMember { group: Arc::clone(group), index: g.members.len() - 1 }
    }

    /// (α, cwnd_total in bytes) over the counted members (RFC 6356 §3); `None` when none is
    /// counted yet.
    fn alpha(&self) -> Option<(f64, u64)> {
        let counted = || self.members.iter().filter(|m| !m.left && m.srtt_s > 0.0);
        let total: u64 = counted().map(|m| m.cwnd).sum();
        let best = counted().map(|m| m.cwnd as f64 / (m.srtt_s * m.srtt_s)).fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))?;
        let sum: f64 = counted().map(|m| m.cwnd as f64 / m.srtt_s).sum();
        (sum > 0.0 && total > 0).then(|| (total as f64 * best / (sum * sum), total))
    }
}

/// A connection's membership of a coupled group.
#[derive(Clone, Debug)]
pub struct CoupledMember {
    group: Arc<Mutex<CoupledGroup>>,
    index: usize,
}

impl CoupledMember {
    /// Publish this member's window (bytes) and smoothed RTT.
    pub fn publish(&self, cwnd: u64, srtt: Option<SimDuration>) {
        let mut g = self.group.lock().expect("a coupled group is never poisoned");
        let m = &mut g.members[self.index];
        m.cwnd = cwnd;
        if let Some(s) = srtt {
            m.srtt_s = s.as_secs_f64();
        }
    }

    /// This member's sender has finished: it no longer counts.
    pub fn leave(&self) {
        self.group.lock().expect("a coupled group is never poisoned").members[self.index].left = true;
    }

    /// The congestion-avoidance increase for one ACK, bytes (fractional): RFC 6356 §3 with
    /// `acked` bytes acknowledged, for a member at `cwnd` bytes (already published) with
    /// segment size `mss`. The uncoupled term, `acked·mss/cwnd`, when the group has no α yet.
    pub fn increase(&self, cwnd: u64, acked: u64, mss: u64) -> f64 {
        let own = acked as f64 * mss as f64 / cwnd.max(1) as f64;
        let g = self.group.lock().expect("a coupled group is never poisoned");
        match g.alpha() {
            Some((alpha, total)) => (alpha * acked as f64 * mss as f64 / total as f64).min(own),
            None => own,
        }
    }

    /// (α, cwnd_total) as this member sees them now (tests and traces).
    pub fn alpha(&self) -> Option<(f64, u64)> {
        self.group.lock().expect("a coupled group is never poisoned").alpha()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Option<SimDuration> {
        Some(SimDuration::from_millis(v))
    }

    #[test]
    fn equal_paths_give_alpha_one_over_n() {
        // n members with equal windows and RTTs: α = 1/n, so each grows 1/n² of a segment per
        // RTT and the group 1/n — with each loss halving only one member's n-th of the total,
        // the group's equilibrium is one TCP's (RFC 6356 §3).
        let g = CoupledGroup::shared();
        let m: Vec<_> = (0..4).map(|_| CoupledGroup::join(&g)).collect();
        for x in &m {
            x.publish(100_000, ms(200));
        }
        let (alpha, total) = m[0].alpha().unwrap();
        assert!((alpha - 0.25).abs() < 1e-12, "α = {alpha}");
        assert_eq!(total, 400_000);
        // One ACK of 1000 bytes at MSS 1000: uncoupled 10 bytes, coupled 10/16.
        assert!((m[0].increase(100_000, 1000, 1000) - 0.625).abs() < 1e-12);
    }

    #[test]
    fn alpha_follows_rfc_6356_with_unequal_paths() {
        // Two members, w = (10, 30) segments of 1000 bytes, rtt = (100 ms, 300 ms):
        // max(w/rtt²) = max(10/0.01, 30/0.09) = 1000; Σ w/rtt = 100 + 100 = 200;
        // α = 40 · 1000 / 200² = 1 (in segments; the same in bytes, α is scale-free).
        let g = CoupledGroup::shared();
        let a = CoupledGroup::join(&g);
        let b = CoupledGroup::join(&g);
        a.publish(10_000, ms(100));
        b.publish(30_000, ms(300));
        let (alpha, total) = a.alpha().unwrap();
        assert!((alpha - 1.0).abs() < 1e-9, "α = {alpha}");
        assert_eq!(total, 40_000);
        // a: min(α·1000·1000/40000, 1000·1000/10000) = min(25, 100) = 25 bytes.
        assert!((a.increase(10_000, 1000, 1000) - 25.0).abs() < 1e-9);
        // The coupled increase never exceeds the member's own (uncoupled) one.
        assert!(b.increase(30_000, 1000, 1000) <= 1000.0 * 1000.0 / 30_000.0 + 1e-12);
    }

    #[test]
    fn members_without_rtt_or_finished_do_not_count() {
        let g = CoupledGroup::shared();
        let a = CoupledGroup::join(&g);
        let b = CoupledGroup::join(&g);
        let c = CoupledGroup::join(&g);
        assert!(a.alpha().is_none(), "nobody has an RTT yet");
        assert!((a.increase(10_000, 1000, 1000) - 100.0).abs() < 1e-12, "alone, the uncoupled increase");
        a.publish(10_000, ms(100));
        b.publish(10_000, None); // no RTT estimate yet
        c.publish(10_000, ms(100));
        assert_eq!(a.alpha().unwrap().1, 20_000);
        c.leave();
        let (alpha, total) = a.alpha().unwrap();
        assert_eq!(total, 10_000);
        assert!((alpha - 1.0).abs() < 1e-12, "a single member is plain TCP: α = 1");
    }
}
