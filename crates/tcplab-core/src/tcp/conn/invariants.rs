//! The rules a TCP must keep, checked after every call into the connection in debug and test
//! builds (`debug_assertions`; release builds compile none of it). A broken rule panics with
//! what was expected and the connection's state, so a random run that breaks one fails the
//! test that ran it:
//!
//! - sequence space: SND.UNA ≤ SND.NXT ≤ SND.MAX, SND.UNA never moves back, SACKed and
//!   in-flight bytes within what is outstanding;
//! - window growth on an ACK at most the controller's own bound for what that ACK newly
//!   delivered (`CongestionControl::growth_bound`: 1 SMSS per ACK in slow start, L·SMSS with
//!   byte counting, SMSS²/cwnd in avoidance, CUBIC's one segment per two delivered, …), and
//!   none when the sender was not cwnd-limited if the profile validates the window (RFC 7661);
//! - a loss (fast recovery, the first of consecutive timeouts) leaves the controller's ssthresh
//!   (`CongestionControl::loss_ssthresh`) and the recovery's window (RFC 6675: ssthresh;
//!   RFC 6582: ssthresh + DupThresh·SMSS; rate-halving: no more than before); a repeated
//!   timeout keeps ssthresh; a timeout leaves the loss window of one segment; leaving recovery
//!   leaves at most ssthresh (for Westwood+, which sets it anew on leaving, at most the ssthresh
//!   it sets: `Controller::recovery_exit_ssthresh`); an ECN-Echo never grows the window (on the ACK that ends a
//!   recovery, never beyond the window the recovery leaves, at most its ssthresh);
//! - Linux's CWR state (`cwr_reduction = RateHalving`): no growth while in it, at most
//!   ssthresh on leaving it, a recovery begun in it keeps its ssthresh, and one entered on the
//!   ACK that ends a recovery starts at most at the recovery's ssthresh;
//! - inside recovery the window grows by at most one SMSS per ACK (NewReno's inflation and
//!   partial-ACK rule), never under rate-halving or RFC 6675;
//! - an input from outside the ACK path (`feed_controller`) never grows the window;
//! - an undo (`tcp.undo`, `tcp_undo_cwr`) is the one rule that may raise the window past
//!   these bounds: to at most the larger of the window before the call (plus the growth the
//!   ACK allowed) and twice ssthresh before it, and ssthresh to at most the episode's
//!   `prior_ssthresh`; the growth and recovery-window checks give way to it on that call;
//! - SACK blocks above the cumulative ACK, except a D-SACK first block (RFC 2883, `tcp.dsack`)
//!   below it or inside the second block;
//! - a controller that owns its window on every ACK (BBR, `Recovery::Controller`) keeps its
//!   own rules instead of the recovery-window and exit rules (`Controller::owned_window_violation`:
//!   BBR's floor of 4 packets, its gains, and its cwnd within what its gain allows);
//! - new data never goes beyond the peer's window (SND.UNA + SND.WND);
//! - the RTO between its floor and its ceiling.

use crate::tcp::cc::{AckSample, CongestionControl, CongestionEvent, Controller};

use super::recovery::Recovery;
use super::{Connection, Output};

/// What the checks compare against: the connection as it was before the call.
pub(super) struct Before {
    cc: Controller,
    cwnd: u64,
    recovery: Option<Recovery>,
    snd_una: u64,
    snd_max: u64,
    outstanding: u64,
    timeouts: u64,
    fast_retransmits: u64,
    ecn_reductions: u64,
    /// In Linux's CWR state (`cwr`).
    cwr: bool,
    handshake: bool,
    sacked: u64,
    rcv_nxt: u64,
    rcv_adv: u64,
    /// Segments already in the output before the call (it may hold other connections').
    out_len: usize,
    /// The call hands the controller an input (`feed_controller`): it must not grow the window.
    pub(super) input: bool,
    /// Undos so far, and the undo's `prior_ssthresh` (`undo`).
    undos: u64,
    prior_ssthresh: u64,
}

impl Connection {
    /// The state the checks after a call compare against.
    pub(super) fn inv_before(&mut self, out: &Output) -> Before {
        self.inv_sample = None;
        Before {
            cc: self.cc.clone(),
            cwnd: self.cwnd(),
            recovery: self.recovery,
            snd_una: self.snd_una,
            snd_max: self.snd_max,
            outstanding: self.outstanding(),
            timeouts: self.stats.timeouts,
            fast_retransmits: self.stats.fast_retransmits,
            ecn_reductions: self.stats.ecn_reductions,
            cwr: self.cwr.is_some(),
            out_len: out.segments.len(),
            sacked: self.sb.sacked().bytes(),
            rcv_nxt: self.rcv_nxt,
            rcv_adv: self.rcv_adv,
            handshake: matches!(self.state, super::State::SynSent | super::State::SynReceived),
            input: false,
            undos: self.stats.undos,
            prior_ssthresh: self.undo.prior_ssthresh,
        }
    }

    /// Check every rule after a call (`what` names it in the message); panics on the first
    /// broken one.
    pub(super) fn inv_check(&self, what: &str, b: &Before, out: &Output) {
        if let Err(e) = self.inv_violation(b, out) {
            panic!("TCP invariant broken after {what}: {e}\n  before: cwnd {} (controller {}), ssthresh {}, recovery {:?}, una {}, max {}\n  after: cwnd {} (controller {}), ssthresh {}, recovery {:?}, una {}, nxt {}, max {}, wnd {}, loss {:?}, sample {:?}", b.cwnd, b.cc.cwnd(), b.cc.ssthresh(), b.recovery, b.snd_una, b.snd_max, self.cwnd(), self.cc.cwnd(), self.cc.ssthresh(), self.recovery, self.snd_una, self.snd_nxt, self.snd_max, self.snd_wnd, self.sb.loss_point(), self.inv_sample);
        }
    }

    fn inv_violation(&self, b: &Before, out: &Output) -> Result<(), String> {
        let mss = self.smss as u64;
        // Sequence space.
        if !(self.snd_una <= self.snd_nxt && self.snd_nxt <= self.snd_max) {
            return Err("SND.UNA ≤ SND.NXT ≤ SND.MAX".into());
        }
        if self.snd_una < b.snd_una {
            return Err("SND.UNA moved back".into());
        }
        let outstanding = self.outstanding();
        if self.sb.sacked().bytes() > outstanding {
            return Err(format!("{} bytes SACKed of {outstanding} outstanding", self.sb.sacked().bytes()));
        }
        if self.use_sack() && self.pipe() > 2 * outstanding {
            return Err(format!("pipe {} above twice the {outstanding} bytes outstanding", self.pipe()));
        }
        if self.cc.cwnd() < mss {
            return Err(format!("the controller's window {} is below one segment", self.cc.cwnd()));
        }
        let (cwnd0, cwnd1) = (b.cc.cwnd(), self.cc.cwnd());
        // An input from outside the ACK path may lower the window, never raise it (cc::input).
        if b.input && (cwnd1 > cwnd0 || self.cwnd() > b.cwnd) {
            return Err(format!("an input grew the window from {cwnd0} to {cwnd1} ({})", self.cc.name()));
        }
        // A timeout of the SYN or SYN-ACK changes no window (the window starts with the data).
        let timeout = self.stats.timeouts > b.timeouts && !b.handshake;
        let entered = self.stats.fast_retransmits > b.fast_retransmits;
        if self.use_sack() && !(self.snd_una <= self.sb.high_rxt() && self.sb.high_rxt() <= self.snd_max.max(self.snd_una)) {
            return Err(format!("HighRxt {} outside SND.UNA..=SND.MAX", self.sb.high_rxt()));
        }
        // What the ACK delivered, as the controller was told, is at most the cumulative advance
        // plus what the scoreboard newly holds (RFC 6675's "newly acknowledged or SACKed").
        if let Some(a) = &self.inv_sample {
            let most = (self.snd_una - b.snd_una) + self.sb.sacked().bytes().saturating_sub(b.sacked);
            if a.delivered > most {
                return Err(format!(
                    "an ACK said to deliver {} bytes; SND.UNA moved {} and the scoreboard grew {}",
                    a.delivered,
                    self.snd_una - b.snd_una,
                    self.sb.sacked().bytes().saturating_sub(b.sacked)
                ));
            }
        }
        // The receive side: the right edge never moves left (RFC 1122 §4.2.2.16), the ACKs and
        // windows this call sent agree with it, and SACK blocks report data above the
        // cumulative ACK and inside the window (RFC 2018 §4).
        if self.rcv_adv < b.rcv_adv || self.rcv_adv < self.rcv_nxt || self.rcv_nxt < b.rcv_nxt {
            return Err(format!("receive window moved back: right edge {} → {}, RCV.NXT {} → {}", b.rcv_adv, self.rcv_adv, b.rcv_nxt, self.rcv_nxt));
        }
        if self.rcv_read > self.data_rcv_nxt() {
            return Err(format!("the application read {} bytes past what arrived in order ({})", self.rcv_read - self.data_rcv_nxt(), self.data_rcv_nxt()));
        }
        for s in out.segments[b.out_len.min(out.segments.len())..].iter().filter(|s| s.has(crate::net::packet::flags::ACK) && !s.has(crate::net::packet::flags::SYN)) {
            if s.ack < b.rcv_nxt || s.ack > self.rcv_nxt {
                return Err(format!("an ACK of {} outside RCV.NXT {}..={}", s.ack, b.rcv_nxt, self.rcv_nxt));
            }
            if s.ack + s.window < b.rcv_adv.min(s.ack + self.cfg.rcvbuf) {
                return Err(format!("an advertised window ending at {} below the earlier right edge {}", s.ack + s.window, b.rcv_adv));
            }
            let second = s.sack_blocks().nth(1);
            for (i, (l, r)) in s.sack_blocks().enumerate() {
                // RFC 2883: a D-SACK first block reports a duplicate below the ACK or inside the
                // out-of-order block after it.
                let dsack = i == 0 && self.cfg.dsack && r > l && (r <= s.ack || second.is_some_and(|(a, b)| a <= l && r <= b));
                if dsack {
                    continue;
                }
                if l <= s.ack || r <= l || r > self.rcv_adv.max(s.ack + s.window) {
                    return Err(format!("SACK block {l}..{r} with ACK {} and right edge {}", s.ack, self.rcv_adv));
                }
            }
        }
        // An undo: its own bound, in place of the growth and recovery-window checks.
        let undone = self.stats.undos > b.undos;
        // A controller that owns its window (BBR) keeps its own rules on every call; an undo
        // (`tcp.undo`, Linux 2.4's) may raise its window past them, within the undo's bound.
        if !undone {
            self.cc.owned_window_violation(&b.cc)?;
        }
        if undone {
            let grown = self.inv_sample.as_ref().map_or(0, |a| b.cc.growth_bound(a));
            let most = (b.cwnd.max(cwnd0) + grown).max(b.cc.ssthresh().saturating_mul(2));
            if self.cwnd() > most {
                return Err(format!("an undo raised the window to {}, above {most} (the window before, or twice ssthresh {})", self.cwnd(), b.cc.ssthresh()));
            }
            // On the ACK that also ends a recovery, ssthresh may first be what the exit sets
            // (Westwood+: bw·RTTmin; for the others the ssthresh before).
            let exit = if b.recovery.is_some() && self.recovery.is_none() { b.cc.recovery_exit_ssthresh() } else { 0 };
            if self.cc.ssthresh() > b.cc.ssthresh().max(b.prior_ssthresh).max(exit) {
                return Err(format!("an undo raised ssthresh to {}, above the prior ssthresh {}", self.cc.ssthresh(), b.prior_ssthresh));
            }
        }
        // Growth on an ACK of new data outside recovery: the controller's bound.
        if let Some(a) = &self.inv_sample {
            if !timeout && !entered && !undone && cwnd1 > cwnd0 {
                let bound = b.cc.growth_bound(a);
                if cwnd1 - cwnd0 > bound {
                    return Err(format!("{} grew the window by {} bytes on an ACK that delivered {} (bound {bound})", self.cc.name(), cwnd1 - cwnd0, a.delivered));
                }
                if !a.cwnd_limited {
                    return Err(format!("the window grew by {} bytes while the sender was not cwnd-limited (flight {} of {})", cwnd1 - cwnd0, a.inflight_before, b.cwnd));
                }
                if self.cfg.cwnd_validation && self.cfg.cwnd_limited == crate::tcp::config::CwndLimitedRule::Flight && a.inflight_before + mss <= b.cwnd {
                    return Err(format!("the window grew by {} bytes with a flight of {} in a window of {} (RFC 7661)", cwnd1 - cwnd0, a.inflight_before, b.cwnd));
                }
            }
        }
        // A loss: the controller's ssthresh, the recovery's window.
        if timeout {
            if cwnd1 != mss {
                return Err(format!("a timeout left a window of {cwnd1} bytes, not one segment ({mss})"));
            }
            let ssthresh = self.cc.ssthresh();
            if self.backoffs <= 1 {
                let (lo, hi) = b.cc.loss_ssthresh(&CongestionEvent { now: crate::units::SimTime::ZERO, inflight: b.outstanding, mss: self.smss });
                if !(lo..=hi).contains(&ssthresh) {
                    return Err(format!("a first timeout set ssthresh {ssthresh}, the controller's rule gives {lo}..={hi}"));
                }
            } else if ssthresh != b.cc.ssthresh() {
                return Err(format!("a repeated timeout moved ssthresh from {} to {ssthresh}", b.cc.ssthresh()));
            }
        } else if entered && b.cwr {
            // Linux recalculates ssthresh only below CWR (tcp_fastretrans_alert).
            if self.cc.ssthresh() != b.cc.ssthresh() {
                return Err(format!("fast recovery begun in CWR moved ssthresh from {} to {}", b.cc.ssthresh(), self.cc.ssthresh()));
            }
        } else if entered {
            let ssthresh = self.cc.ssthresh();
            let (lo, hi) = b.cc.loss_ssthresh(&CongestionEvent { now: crate::units::SimTime::ZERO, inflight: b.outstanding, mss: self.smss });
            if !(lo..=hi).contains(&ssthresh) {
                return Err(format!("fast recovery set ssthresh {ssthresh}, the controller's rule gives {lo}..={hi}"));
            }
        } else if self.stats.ecn_reductions > b.ecn_reductions
            && !self.rate.on
            && cwnd1 > cwnd0.max(if b.recovery.is_some() && self.recovery.is_none() { b.cc.recovery_exit_ssthresh() } else { 0 })
        {
            // On the ACK that ends a recovery the window first becomes the recovery's exit
            // window (at most its ssthresh), which the echo may then cut, never raise.
            return Err("an ECN-Echo grew the window".into());
        } else if b.cwr && cwnd1 > cwnd0 {
            return Err(format!("the window grew from {cwnd0} to {cwnd1} in CWR"));
        } else if b.cwr && self.cwr.is_none() && self.recovery.is_none() && cwnd1 > self.cc.ssthresh().max(mss) {
            return Err(format!("leaving CWR left a window of {cwnd1} above ssthresh {}", self.cc.ssthresh()));
        }
        // The window inside recovery.
        match (b.recovery, self.recovery) {
            (Some(Recovery::NewReno { cwnd: w0, .. }), Some(Recovery::NewReno { cwnd: w1, .. })) if !entered && w1 > w0 + mss => {
                return Err(format!("NewReno recovery grew its window from {w0} to {w1}, more than one SMSS on one ACK"));
            }
            (Some(Recovery::RateHalving { cwnd: w0, .. }), Some(Recovery::RateHalving { cwnd: w1, .. })) if !entered && !undone && w1 > w0 => {
                return Err(format!("rate-halving grew its window from {w0} to {w1}"));
            }
            (Some(Recovery::Prr { .. }), Some(Recovery::Prr { cwnd: w1, prior_cwnd, .. }))
                if !entered && w1 > prior_cwnd.max(self.cc.ssthresh()).max(self.prr_below_flight_bound(b)) + mss =>
            {
                return Err(format!("PRR's window {w1} above the window before the loss ({prior_cwnd}) and ssthresh ({}) by more than one SMSS", self.cc.ssthresh()));
            }
            (Some(Recovery::Sack { cwnd: w0 }), Some(Recovery::Sack { cwnd: w1 })) if !entered && w1 != w0 => {
                return Err(format!("RFC 6675 recovery moved its window from {w0} to {w1}"));
            }
            (Some(_), None) if !timeout && !self.rate.on && self.cwr.is_none() && cwnd1 > self.cc.ssthresh().max(mss) => {
                return Err(format!("leaving recovery left a window of {cwnd1} above ssthresh {}", self.cc.ssthresh()));
            }
            // An ECN-Echo on the ACK that ends recovery enters CWR at once (Linux: tcp_try_to_open
            // → tcp_enter_cwr), from the window recovery left: at most the ssthresh it had.
            // A controller that sets ssthresh on leaving (Westwood+) may leave up to that.
            (Some(_), None) if !timeout && !undone && !self.rate.on && cwnd1 > b.cc.recovery_exit_ssthresh().max(mss) => {
                return Err(format!("leaving recovery into CWR left a window of {cwnd1} above the ssthresh of the recovery, {}", b.cc.recovery_exit_ssthresh()));
            }
            _ => {}
        }
        if entered && !timeout {
            let ssthresh = self.cc.ssthresh();
            let ok = match self.recovery {
                Some(Recovery::Sack { cwnd }) => cwnd == ssthresh,
                Some(Recovery::NewReno { cwnd, .. }) => cwnd <= ssthresh + self.cfg.dupthresh as u64 * mss + mss,
                Some(Recovery::RateHalving { cwnd, .. }) => cwnd <= b.cwnd.max(mss),
                // PRR's first window: the pipe plus at least the fast retransmit.
                Some(Recovery::Prr { cwnd, .. }) => cwnd <= b.cwnd.max(self.prr_below_flight_bound(b)) + mss,
                Some(Recovery::Controller) => true, // The controller's own rules (below).
                None => true,                       // Recovery ended within the same call (Reno's first new ACK).
            };
            if !ok {
                return Err(format!("fast recovery began with window {} (ssthresh {ssthresh})", self.cwnd()));
            }
        }
        // New data within the peer's window.
        let right = self.snd_una + self.snd_wnd;
        for s in out.segments[b.out_len.min(out.segments.len())..].iter().filter(|s| s.len > 0 && s.seq >= b.snd_max) {
            if s.seq + s.len as u64 > right.max(b.snd_una + 1) {
                return Err(format!("new data {}..{} beyond the peer's window ending at {right}", s.seq, s.seq + s.len as u64));
            }
        }
        // The RTO between its floor and ceiling.
        let rto = self.rto();
        let p = &self.cfg.rto;
        let (lo, hi) = (p.min.min(p.initial), p.max.max(p.initial));
        if !(lo..=hi).contains(&rto) {
            return Err(format!("RTO {rto:?} outside {lo:?}..={hi:?}"));
        }
        Ok(())
    }

    /// PRR's window when the controller had cut its window below the flight before the loss
    /// (TCP-LP's early congestion indication; 0 otherwise): Linux's PRR then sets pipe +
    /// ⌈prr_delivered·ssthresh/prior_cwnd⌉ − prr_out, the pipe at most what was outstanding
    /// and the quotient large when prior_cwnd is small.
    fn prr_below_flight_bound(&self, b: &Before) -> u64 {
        let Some(Recovery::Prr { prior_cwnd, delivered, .. }) = self.recovery else { return 0 };
        let (mss, ssthresh) = (self.smss as u64, self.cc.ssthresh());
        if ssthresh <= prior_cwnd && b.outstanding <= prior_cwnd + mss {
            return 0;
        }
        let seg = |x: u64| x.div_ceil(mss);
        let sndcnt = (seg(delivered) * (ssthresh / mss)).div_ceil(seg(prior_cwnd).max(1)) * mss;
        b.outstanding + sndcnt.max(ssthresh)
    }

    /// Remember the sample the controller was given on this call (for the growth check).
    pub(super) fn inv_note_sample(&mut self, a: &AckSample) {
        self.inv_sample = Some(*a);
    }
}
