//! A window reduction that is not a loss — an ECN-Echo (`ecn`) or a refusal by the host's own
//! interface queue (`local`) — as `tcp.cwr_reduction` says to make it.
//!
//! `AtOnce`: the controller's `on_ecn_echo`, ssthresh and cwnd cut together (RFC 3168 §6.1.2).
//!
//! `RateHalving`: Linux 2.4's CWR state (read in 2.4.17, the same in 2.4.20):
//! - entry, `tcp_enter_cwr` → `__tcp_enter_cwr` (`tcp.h`), only from Open or Disorder (not
//!   again in CWR, nor in Recovery or Loss): ssthresh by the controller's rule
//!   (`tcp_recalc_ssthresh`; here the controller's `on_ecn_echo`, whose own cut of cwnd is
//!   undone), cwnd = min(cwnd, in-flight + 1 segment), the ACK counter reset, `high_seq` =
//!   SND.NXT;
//! - every later ACK (all are "dubious" in CWR, so `tcp_ack` hands each to
//!   `tcp_fastretrans_alert`, which calls `tcp_try_to_open` and so `tcp_cwnd_down`): one
//!   segment less every second ACK while cwnd is above ssthresh/2 (the controller's
//!   `min_cwnd`), and never above in-flight + 1 segment — the rule of Linux's rate-halving
//!   recovery, which this shares (`Connection::cwnd_down`);
//! - no growth: `tcp_may_raise_cwnd` is false in CWR, so the controller is not given the ACK;
//! - exit, `tcp_fastretrans_alert` step E: on the first ACK above `high_seq` (the CWR flag must
//!   have reached the receiver) `tcp_complete_cwr`, cwnd = min(cwnd, ssthresh), and the state
//!   is Open again (then `tcp_try_to_open` moderates, `moderate`);
//! - a loss found in CWR starts Recovery from the window as it is, without a second reduction
//!   of ssthresh (step F: `tcp_recalc_ssthresh` only when `ca_state < TCP_CA_CWR`); a timeout
//!   ends CWR (`tcp_enter_loss`). MODEL: the timeout's ssthresh is the controller's, where
//!   2.4's `tcp_enter_loss` keeps a CWR's ssthresh; a reduction begun in CWR is undone without
//!   restoring ssthresh (`undo`: no `prior_ssthresh`).

use crate::tcp::cc::{CongestionControl, CongestionEvent};
use crate::tcp::config::CwrReduction;
use crate::units::SimTime;

use super::Connection;

/// The CWR state while the window comes down gradually.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Cwr {
    /// SND.NXT at entry (Linux `high_seq`): CWR ends on an ACK above it.
    pub high_seq: u64,
    /// ACKs counted towards the next one-segment decrease (Linux `snd_cwnd_cnt`, 0 or 1).
    pub acks: u32,
}

impl Connection {
    /// Reduce the window for an ECN-Echo or a local refusal (the caller has checked that no
    /// reduction is under way for this window): at once, or by entering CWR.
    pub(super) fn reduce_not_lost(&mut self, now: SimTime) {
        let ev = CongestionEvent { now, inflight: self.outstanding(), mss: self.smss };
        match self.cfg.cwr_reduction {
            CwrReduction::AtOnce => self.cc.on_ecn_echo(&ev),
            CwrReduction::RateHalving => {
                let prior = self.cc.cwnd();
                self.cc.on_ecn_echo(&ev);
                // __tcp_enter_cwr: the window as it was, at most in-flight + 1 segment.
                self.set_cc_cwnd(prior.min(self.inflight() + self.smss as u64));
                self.cwr = Some(Cwr { high_seq: self.snd_max, acks: 0 });
                self.rfc2861.stamp = now;
            }
        }
    }

    /// An ACK in CWR (after its cumulative part and SACK blocks were taken): leave CWR if it
    /// passed `high_seq` (`tcp_complete_cwr`), else `tcp_cwnd_down`. Returns true when CWR
    /// continues.
    pub(super) fn cwr_on_ack(&mut self) -> bool {
        let Some(c) = self.cwr else { return false };
        let cwnd = self.cc.cwnd();
        if self.snd_una > c.high_seq {
            let ssthresh = self.cc.ssthresh();
            if cwnd > ssthresh {
                self.set_cc_cwnd(ssthresh);
            }
            self.cwr = None;
            return false;
        }
        let (w, acks) = self.cwnd_down(cwnd, c.acks);
        if w < cwnd {
            self.set_cc_cwnd(w);
        }
        self.cwr = Some(Cwr { acks, ..c });
        true
    }
}
