//! Loss recovery: duplicate ACKs, fast recovery (Reno/NewReno, RFC 6675 SACK, Linux
//! rate-halving), the retransmission timeout's state change, and the questions the send path
//! asks (is SACK recovery in use, pipe, what is deemed lost).

use crate::tcp::cc::{CongestionControl, CongestionEvent, RecoveryExit, TimeoutEvent};
use crate::tcp::config::RecoveryKind;
use crate::tcp::scoreboard::LossRule;
use crate::units::SimTime;

use super::{Connection, Output, TcpEvent, TcpEventKind};

/// The fast-recovery procedure in progress.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Recovery {
    /// Reno/NewReno fast recovery with an inflated window.
    NewReno { cwnd: u64, partial_seen: bool },
    /// RFC 6675: window fixed at ssthresh, sending by the pipe rule.
    Sack { cwnd: u64 },
    /// Linux rate-halving: the window shrinks one segment per two ACKs.
    RateHalving { cwnd: u64, acks: u32 },
    /// RFC 6937 proportional rate reduction as Linux runs it: the window (bytes), the window
    /// before the loss (Linux `prior_cwnd`, RFC 6937's RecoverFS), bytes delivered since
    /// recovery began (`prr_delivered`), and the connection's `bytes_sent` when it began
    /// (what was sent since is `prr_out`).
    Prr { cwnd: u64, prior_cwnd: u64, delivered: u64, sent_at_entry: u64 },
    /// The controller owns the window through recovery (`CongestionControl::owns_window`,
    /// Linux's `cong_control`: BBR), on every ACK; the connection keeps only the recovery
    /// point and which segments go.
    Controller,
}

impl Connection {
    /// A duplicate ACK: count it, inflate or shrink the recovery window, or decide that fast
    /// recovery starts. Returns the sequence number to retransmit first when it starts (the
    /// send path sends it); never sends.
    /// `newly_sacked` is what the ACK's SACK blocks newly covered (PRR counts it delivered).
    pub(super) fn on_dupack(&mut self, now: SimTime, newly_sacked: u64, out: &mut Output) -> Option<u64> {
        self.dupacks += 1;
        self.stats.dupacks_received += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::DupAck, seq: self.snd_una });
        match self.recovery {
            Some(Recovery::NewReno { cwnd, partial_seen }) => {
                // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                self.recovery = Some(Recovery::NewReno { cwnd: cwnd + self.smss as u64, partial_seen });
            }
            Some(Recovery::Sack { .. }) | Some(Recovery::Controller) => {}
            Some(Recovery::RateHalving { .. }) => self.rate_halve(),
            Some(Recovery::Prr { .. }) => self.prr_reduce(newly_sacked, false),
            None => {
                if self.sb.loss_point().is_some() {
                    return None; // Still repairing after a timeout: no fast retransmit (Linux Loss state).
                }
                let trigger = if self.recovery_kind == RecoveryKind::LinuxSack && self.sack_ok {
                    // tcp_time_to_recover (2.4.17 and 2.6.16 alike): with SACK it counts no
                    // duplicate ACKs, only `fackets_out > reordering` — SACKed data more than
                    // DupThresh segments above snd_una. A duplicate ACK that SACKs nothing new
                    // (one for a segment that arrived twice, a D-SACK) cannot start a recovery.
                    // Not modelled: its Trick #3 (a window of at most DupThresh segments) and
                    // `tcp_head_timedout`.
                    self.sb.fack_lost_below(self.snd_una, self.loss_rule()) > self.snd_una
                } else if self.use_sack() {
                    self.dupacks >= self.cfg.dupthresh || self.lost_below() > self.snd_una
                } else {
                    self.dupacks == self.cfg.dupthresh
                };
                // A new recovery only once the last one's data is acknowledged. Without SACK
                // (RFC 6582 §3.2 step 1; BSD's `SEQ_LEQ(th_ack, snd_recover)`, Linux holding
                // Reno's Recovery state until something above high_seq is ACKed) the ACK must
                // cover more than the recovery point, so that duplicates of data that arrived
                // twice cannot start one. With SACK the blocks say what is missing, and a
                // recovery may start as soon as the recovery point is acknowledged (RFC 6675
                // §5; Linux leaves Recovery at snd_una = high_seq and may enter it again on
                // the same ACK): a loss of the first segment sent after the recovery point
                // is repaired by a fast retransmit, not left to the timer.
                let allowed = self.recover == 0 || if self.use_sack() { self.snd_una >= self.recover } else { self.snd_una > self.recover };
                if trigger && allowed {
                    let first = self.enter_recovery(now, out);
                    if matches!(self.recovery, Some(Recovery::Prr { .. })) {
                        self.prr_reduce(newly_sacked, false);
                    }
                    return Some(first);
                }
            }
        }
        None
    }

    /// Enter fast recovery: the controller's reduction, the recovery window, the scoreboard
    /// restarted. Returns the first sequence number to retransmit.
    fn enter_recovery(&mut self, now: SimTime, out: &mut Output) -> u64 {
        let inflight = self.outstanding();
        self.undo_enter_recovery();
        self.recover = self.snd_max;
        self.ecn_reduced();
        // From CWR (`cwr`) the reduction is made already: Linux 2.4 recalculates ssthresh only
        // when `ca_state < TCP_CA_CWR` (tcp_fastretrans_alert) and goes on from the window
        // CWR has left.
        if self.cwr.take().is_none() {
            self.cc.on_congestion(&CongestionEvent { now, inflight, mss: self.smss });
        }
        let ssthresh = self.cc.ssthresh();
        self.stats.fast_retransmits += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::FastRetransmit, seq: self.snd_una });
        if self.use_sack() {
            self.recovery = Some(match self.recovery_kind {
                _ if self.rate.on => Recovery::Controller,
                // Rate-halving starts from the current window (tcp_cwnd_down shrinks it).
                RecoveryKind::LinuxSack => Recovery::RateHalving { cwnd: self.cc.cwnd(), acks: 0 },
                // tcp_init_cwnd_reduction: prior_cwnd, prr_delivered = prr_out = 0.
                RecoveryKind::LinuxPrr => Recovery::Prr { cwnd: self.cc.cwnd(), prior_cwnd: self.cc.cwnd(), delivered: 0, sent_at_entry: self.stats.bytes_sent },
                _ => Recovery::Sack { cwnd: ssthresh },
            });
            self.sb.restart_repair(self.snd_una);
            self.sb.clear_rxt_logs();
            self.sb.sacked().next_uncovered(self.snd_una)
        } else {
            self.recovery =
                Some(if self.rate.on { Recovery::Controller } else { Recovery::NewReno { cwnd: ssthresh + self.cfg.dupthresh as u64 * self.smss as u64, partial_seen: false } });
            self.snd_una
        }
    }

    /// Leave fast recovery (the controller sets the window it continues from).
    pub(super) fn exit_recovery(&mut self, now: SimTime, out: &mut Output) {
        let window = match self.recovery {
            Some(Recovery::RateHalving { cwnd, .. }) => Some(cwnd),
            _ => None,
        };
        self.recovery = None;
        self.sb.clear_rxt_logs();
        self.cc.on_recovery_exit(&RecoveryExit { now, inflight: self.outstanding(), mss: self.smss, window });
        out.events.push(TcpEvent { kind: TcpEventKind::RecoveryExit, seq: self.snd_una });
    }

    /// Rate-halving on an ACK in recovery (`cwnd_down`).
    pub(super) fn rate_halve(&mut self) {
        let Some(Recovery::RateHalving { cwnd, acks }) = self.recovery else { return };
        let (cwnd, acks) = self.cwnd_down(cwnd, acks);
        self.recovery = Some(Recovery::RateHalving { cwnd, acks });
    }

    /// Linux `tcp_cwnd_down` (2.4.17–2.4.20 and 2.6.16 `tcp_input.c`), shared by rate-halving
    /// recovery and the CWR state (`cwr`): the window `cwnd` and the ACK counter after one
    /// more ACK — one segment less per two ACKs while above the controller's floor
    /// (`min_cwnd`: ssthresh/2 in 2.4, a controller's own in 2.6), and never more than
    /// in-flight + 1 segment.
    pub(super) fn cwnd_down(&self, cwnd: u64, acks: u32) -> (u64, u32) {
        let mss = self.smss as u64;
        let decr = acks + 1;
        let mut w = cwnd;
        if decr >= 2 && w > self.cc.min_cwnd() {
            w = w.saturating_sub((decr >> 1) as u64 * mss).max(mss);
        }
        w = w.min(self.inflight() + mss);
        (w.max(mss), decr & 1)
    }

    /// Linux `tcp_cwnd_reduction` (3.x–6.x; RFC 6937 with PRR-SSRB): on an ACK in recovery
    /// that delivered `delivered` bytes (newly ACKed or SACKed), `advanced` when it moved
    /// SND.UNA. While the pipe is above ssthresh the window lets out ssthresh/prior_cwnd of
    /// what has been delivered since recovery began; once at or below, it grows back towards
    /// ssthresh by what was delivered plus one segment (on a cumulative ACK) or by what this
    /// ACK delivered; the first ACK always lets the fast retransmit out.
    pub(super) fn prr_reduce(&mut self, delivered: u64, advanced: bool) {
        let Some(Recovery::Prr { prior_cwnd, delivered: total, sent_at_entry, .. }) = self.recovery else { return };
        if delivered == 0 {
            return;
        }
        let mss = self.smss as u64;
        let ssthresh = self.cc.ssthresh();
        let total = total + delivered;
        let prr_out = self.stats.bytes_sent - sent_at_entry;
        let pipe = self.pipe();
        let sndcnt = if pipe > ssthresh {
            // ⌈prr_delivered·ssthresh / prior_cwnd⌉ − prr_out, in segments as Linux counts.
            let seg = |b: u64| b.div_ceil(mss);
            (seg(total) * (ssthresh / mss)).div_ceil(seg(prior_cwnd).max(1)).saturating_sub(seg(prr_out)) * mss
        } else {
            let room = ssthresh - pipe;
            if advanced {
                room.min(total.saturating_sub(prr_out).max(delivered) + mss)
            } else {
                room.min(delivered)
            }
        };
        // Force the fast retransmit out on entering recovery.
        let sndcnt = if prr_out == 0 { sndcnt.max(mss) } else { sndcnt };
        self.recovery = Some(Recovery::Prr { cwnd: (pipe + sndcnt).max(mss), prior_cwnd, delivered: total, sent_at_entry });
    }

    /// The retransmission timer expired with data outstanding: back off, tell the controller,
    /// leave any fast recovery and deem everything outstanding lost (RFC 6298 §5.5–5.7,
    /// RFC 6675 §5.1 with SACK, go-back-N without). Returns the first sequence number to
    /// retransmit, or `None` when nothing is outstanding; never sends.
    pub(super) fn enter_timeout(&mut self, now: SimTime, out: &mut Output) -> Option<u64> {
        if self.snd_una == self.snd_max {
            return None;
        }
        self.undo_enter_loss();
        self.backoffs += 1;
        self.stats.timeouts += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Timeout, seq: self.snd_una });
        let inflight = self.outstanding();
        self.cc.on_timeout(&TimeoutEvent { now, inflight, mss: self.smss, backoffs: self.backoffs });
        self.recovery = None;
        self.cwr = None; // tcp_enter_loss: the Loss state replaces CWR.
        self.rfc2861.stamp = now;
        self.sb.clear_rxt_logs();
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.ecn_reduced();
        self.sb.set_loss_point(Some(self.snd_max));
        if self.rate.on {
            self.rate_on_timeout();
        }
        for r in self.sent.iter_mut() {
            r.retransmitted = true;
        }
        if self.use_sack() {
            // RFC 6675 §5.1: keep the scoreboard, treat all un-SACKed data as lost.
            self.sb.restart_repair(self.snd_una);
            Some(self.sb.sacked().next_uncovered(self.snd_una))
        } else {
            // Go-back-N from the first unacknowledged byte.
            self.snd_nxt = self.snd_una;
            Some(self.snd_una)
        }
    }

    /// True when the recovery keeps Linux's retransmission log, for its lost-retransmission
    /// detection: rate-halving and PRR, and a controller's own recovery window
    /// (`Recovery::Controller`) with Linux's SACK recovery.
    pub(super) fn logs_retransmissions(&self) -> bool {
        match self.recovery {
            Some(Recovery::RateHalving { .. }) | Some(Recovery::Prr { .. }) => true,
            Some(Recovery::Controller) => matches!(self.recovery_kind, RecoveryKind::LinuxSack | RecoveryKind::LinuxPrr),
            _ => false,
        }
    }

    /// True when losses are repaired by the SACK scoreboard (RFC 6675 or Linux).
    pub(super) fn use_sack(&self) -> bool {
        self.sack_ok && matches!(self.recovery_kind, RecoveryKind::Sack | RecoveryKind::LinuxSack | RecoveryKind::LinuxPrr)
    }

    /// How the scoreboard judges losses: RFC 6675 IsLost, or FACK for Linux recovery.
    pub(super) fn loss_rule(&self) -> LossRule {
        LossRule { dupthresh: self.cfg.dupthresh, smss: self.smss as u64, fack: self.recovery_kind == RecoveryKind::LinuxSack }
    }

    /// Everything below this sequence number that is not SACKed is deemed lost (RFC 6675
    /// IsLost or FACK, plus everything outstanding at a timeout).
    pub(super) fn lost_below(&self) -> u64 {
        self.sb.lost_below(self.snd_una, self.snd_max, self.loss_rule())
    }

    /// RFC 6675 pipe: un-SACKed bytes not deemed lost, plus retransmitted un-SACKed bytes.
    #[inline]
    pub(super) fn pipe(&self) -> u64 {
        self.sb.pipe(self.snd_una, self.snd_max, self.loss_rule())
    }
}
