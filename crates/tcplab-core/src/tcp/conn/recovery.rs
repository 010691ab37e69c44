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
}

impl Connection {
    /// A duplicate ACK: count it, inflate or shrink the recovery window, or decide that fast
    /// recovery starts. Returns the sequence number to retransmit first when it starts (the
    /// send path sends it); never sends.
    pub(super) fn on_dupack(&mut self, now: SimTime, out: &mut Output) -> Option<u64> {
        self.dupacks += 1;
        self.stats.dupacks_received += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::DupAck, seq: self.snd_una });
        match self.recovery {
            Some(Recovery::NewReno { cwnd, partial_seen }) => {
                // RFC 6582 §3.2 step 4: inflate by one SMSS per further duplicate ACK.
                self.recovery = Some(Recovery::NewReno { cwnd: cwnd + self.smss as u64, partial_seen });
            }
            Some(Recovery::Sack { .. }) => {}
            Some(Recovery::RateHalving { .. }) => self.rate_halve(),
            None => {
                if self.sb.loss_point().is_some() {
                    return None; // Still repairing after a timeout: no fast retransmit (Linux Loss state).
                }
                let trigger = if self.recovery_kind == RecoveryKind::LinuxSack && self.sack_ok {
                    // tcp_time_to_recover: dupACKs, or FACK: SACKed data more than `reordering`
                    // segments above snd_una.
                    self.dupacks >= self.cfg.dupthresh || self.sb.fack_lost_below(self.snd_una, self.loss_rule()) > self.snd_una
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
                    return Some(self.enter_recovery(now, out));
                }
            }
        }
        None
    }

    /// Enter fast recovery: the controller's reduction, the recovery window, the scoreboard
    /// restarted. Returns the first sequence number to retransmit.
    fn enter_recovery(&mut self, now: SimTime, out: &mut Output) -> u64 {
        let inflight = self.outstanding();
        self.recover = self.snd_max;
        self.ecn_reduced();
        self.cc.on_congestion(&CongestionEvent { now, inflight, mss: self.smss });
        let ssthresh = self.cc.ssthresh();
        self.stats.fast_retransmits += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::FastRetransmit, seq: self.snd_una });
        if self.use_sack() {
            self.recovery = Some(if self.recovery_kind == RecoveryKind::LinuxSack {
                // Rate-halving starts from the current window (tcp_cwnd_down shrinks it).
                Recovery::RateHalving { cwnd: self.cc.cwnd(), acks: 0 }
            } else {
                Recovery::Sack { cwnd: ssthresh }
            });
            self.sb.restart_repair(self.snd_una);
            self.sb.clear_rxt_logs();
            self.sb.sacked().next_uncovered(self.snd_una)
        } else {
            let cwnd = ssthresh + self.cfg.dupthresh as u64 * self.smss as u64;
            self.recovery = Some(Recovery::NewReno { cwnd, partial_seen: false });
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

    /// tcp_cwnd_down (Linux 2.6.16): one segment less per two ACKs while above the
    /// controller's floor, and never more than in-flight + 1 segment.
    pub(super) fn rate_halve(&mut self) {
        let Some(Recovery::RateHalving { cwnd, acks }) = self.recovery else { return };
        let mss = self.smss as u64;
        let decr = acks + 1;
        let mut w = cwnd;
        if decr >= 2 && w > self.cc.min_cwnd() {
            w = w.saturating_sub((decr >> 1) as u64 * mss).max(mss);
        }
        w = w.min(self.inflight() + mss);
        self.recovery = Some(Recovery::RateHalving { cwnd: w.max(mss), acks: decr & 1 });
    }

    /// The retransmission timer expired with data outstanding: back off, tell the controller,
    /// leave any fast recovery and deem everything outstanding lost (RFC 6298 §5.5–5.7,
    /// RFC 6675 §5.1 with SACK, go-back-N without). Returns the first sequence number to
    /// retransmit, or `None` when nothing is outstanding; never sends.
    pub(super) fn enter_timeout(&mut self, now: SimTime, out: &mut Output) -> Option<u64> {
        if self.snd_una == self.snd_max {
            return None;
        }
        self.backoffs += 1;
        self.stats.timeouts += 1;
        out.events.push(TcpEvent { kind: TcpEventKind::Timeout, seq: self.snd_una });
        let inflight = self.outstanding();
        self.cc.on_timeout(&TimeoutEvent { now, inflight, mss: self.smss, backoffs: self.backoffs });
        self.recovery = None;
        self.sb.clear_rxt_logs();
        self.dupacks = 0;
        self.recover = self.snd_max;
        self.ecn_reduced();
        self.sb.set_loss_point(Some(self.snd_max));
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

    /// True when losses are repaired by the SACK scoreboard (RFC 6675 or Linux).
    pub(super) fn use_sack(&self) -> bool {
        self.sack_ok && matches!(self.recovery_kind, RecoveryKind::Sack | RecoveryKind::LinuxSack)
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
