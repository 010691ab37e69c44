//! The delivery-rate sampler (Linux `net/ipv4/tcp_rate.c`; draft-cheng-iccrg-delivery-rate-
//! estimation) and the pacing gate, both used only when the controller asks: the sampler for a
//! controller that owns its window (`CongestionControl::owns_window`, BBR), the gate for one
//! with a pacing rate (`CongestionControl::pacing_rate`). With neither, nothing here runs
//! beyond a branch, and every segment leaves exactly as before.
//!
//! Sampler. Every segment sent is stamped (`tcp_rate_skb_sent`) with the connection's
//! delivered count (`delivered`, bytes: Linux `tp->delivered`), the time of the last
//! delivery, the send time of the first segment of the current flight (`first_tx`) and
//! whether the sender was application-limited. Each ACK, of the segments it newly delivers
//! (cumulatively, or by SACK), takes the stamp of the one sent last (`tcp_rate_skb_delivered`)
//! and yields a sample (`tcp_rate_gen`): the bytes delivered since that segment was sent,
//! over max(its send interval, the ACK interval), invalid when shorter than the min RTT. The
//! sender is marked application-limited (`tcp_rate_check_app_limited`) when the application
//! writes with less than a segment unsent, a flight below cwnd and no lost segment waiting
//! for its retransmission; the mark lasts until the data then in flight is delivered.
//!
//! Pacing gate (Linux's internal pacing, `tcp_internal_pacing`, as fq would): after a data
//! segment of `len` payload bytes leaves at `t`, the next may leave at max(t, the last
//! release time) + len / rate; before it the send loops stop and the pacing timer
//! (`TimerKind::Pacing`) wakes the sender. Segments sent by the send loops wait for it (new
//! data, and retransmissions during repair, as Linux's `tcp_pacing_check` in `tcp_write_xmit`
//! and `tcp_xmit_retransmit_queue`); the fast retransmit, a partial ACK's and the timeout's
//! retransmission go at once, and every data segment moves the release time on. The rate is
//! the controller's, in payload bytes (the measure of its delivery rate); headers are not
//! charged.

use crate::tcp::cc::{CaState, CongestionControl, RateSample};
use crate::tcp::timers::TimerKind;
use crate::units::{SimDuration, SimTime};

use super::Connection;

const PS_PER_SEC: u128 = 1_000_000_000_000;

/// A segment's stamp at its (re)transmission (Linux `tcp_skb_cb.tx`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateStamp {
    /// Stamped (the sampler was on when it was sent).
    valid: bool,
    /// Delivered in this ACK's sample already (SACKed earlier).
    used: bool,
    app_limited: bool,
    delivered: u64,
    delivered_time: SimTime,
    first_tx: SimTime,
    sent: SimTime,
}

/// What the ACK being processed has delivered so far (Linux `struct rate_sample` while
/// `tcp_ack` fills it).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct AckRate {
    prior_delivered: u64,
    prior_time: Option<SimTime>,
    is_app_limited: bool,
    send_interval: SimDuration,
    /// Bytes the ACK newly delivered (set by the cumulative-ACK path).
    pub(super) acked_sacked: u64,
    /// Its RTT sample.
    pub(super) rtt: Option<SimDuration>,
}

/// The connection's sampler state (Linux `tcp_sock`'s rate fields).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct RateState {
    /// The sampler runs (the controller owns its window).
    pub(super) on: bool,
    delivered: u64,
    delivered_time: SimTime,
    first_tx: SimTime,
    /// `tp->app_limited`: the delivered count at which the app-limited mark ends; 0 = none.
    pub(super) app_limited: u64,
    /// Bytes below this sequence number were deemed lost already (for `losses`).
    lost_frontier: u64,
    /// The ACK being processed.
    pub(super) ack: AckRate,
    /// When the next segment may leave (pacing; `SimTime::ZERO` = at once).
    pub(super) pacing_next: SimTime,
}

impl RateState {
    /// The sampler on when `on` (the controller owns its window), everything else at rest.
    pub(super) fn new(on: bool) -> Self {
        RateState { on, ..Default::default() }
    }
}

impl Connection {
    /// Stamp a segment about to be sent (`tcp_rate_skb_sent`); `first_of_flight` when nothing
    /// is outstanding.
    pub(super) fn rate_stamp(&mut self, now: SimTime, first_of_flight: bool) -> RateStamp {
        if !self.rate.on {
            return RateStamp::default();
        }
        if first_of_flight {
            self.rate.first_tx = now;
            self.rate.delivered_time = now;
        }
        RateStamp {
            valid: true,
            used: false,
            app_limited: self.rate.app_limited != 0,
            delivered: self.rate.delivered,
            delivered_time: self.rate.delivered_time,
            first_tx: self.rate.first_tx,
            sent: now,
        }
    }

    /// A segment with `stamp` was delivered by the ACK being processed
    /// (`tcp_rate_skb_delivered`): keep the stamp of the one sent last.
    pub(super) fn rate_delivered(&mut self, stamp: &RateStamp) {
        if !stamp.valid || stamp.used {
            return;
        }
        let a = &mut self.rate.ack;
        if a.prior_time.is_none() || stamp.delivered > a.prior_delivered {
            a.prior_delivered = stamp.delivered;
            a.prior_time = Some(stamp.delivered_time);
            a.is_app_limited = stamp.app_limited;
            self.rate.first_tx = stamp.sent;
            a.send_interval = stamp.sent.since(stamp.first_tx);
        }
    }

    /// The segments wholly inside `[s, e)`, newly SACKed: delivered, once.
    pub(super) fn rate_sacked(&mut self, s: u64, e: u64) {
        let i = self.sent.partition_point(|r| r.end <= s);
        let mut start = if i == 0 { self.snd_una } else { self.sent[i - 1].end };
        for k in i..self.sent.len() {
            let r = self.sent[k];
            if r.end > e {
                break;
            }
            if start >= s && !r.rate.used {
                self.rate_delivered(&r.rate);
                self.sent[k].rate.used = true;
            }
            start = r.end;
        }
    }

    /// A retransmission of `[s, e)`: its segments are stamped anew.
    pub(super) fn rate_restamp(&mut self, now: SimTime, s: u64, e: u64) {
        let stamp = self.rate_stamp(now, false);
        let i = self.sent.partition_point(|r| r.end <= s);
        for r in self.sent.iter_mut().skip(i) {
            r.rate = RateStamp { used: r.rate.used, ..stamp };
            if r.end >= e {
                break;
            }
        }
    }

    /// `tcp_rate_check_app_limited`, when the application writes.
    pub(super) fn rate_check_app_limited(&mut self) {
        let mss = self.smss as u64;
        let unsent = self.stream_end.saturating_sub(self.snd_nxt.max(self.snd_max));
        let inflight = self.inflight();
        let lost_waiting = self.use_sack() && (self.recovery.is_some() || self.sb.loss_point().is_some()) && {
            let s = self.sb.sacked().next_uncovered(self.sb.high_rxt().max(self.snd_una));
            s < self.lost_below() && s < self.snd_max
        };
        if unsent < mss && inflight.div_ceil(mss) < self.cwnd() / mss && !lost_waiting {
            self.rate.app_limited = (self.rate.delivered + inflight).max(1);
        }
    }

    /// Bytes newly deemed lost since the last ACK (Linux `rs->losses`, with SACK): the
    /// un-SACKed bytes between the old loss frontier and the new one.
    fn rate_new_losses(&mut self) -> u64 {
        if !self.use_sack() || self.sb.loss_point().is_some() {
            self.rate.lost_frontier = self.rate.lost_frontier.max(self.snd_una);
            return 0;
        }
        let below = self.lost_below();
        let from = self.rate.lost_frontier.max(self.snd_una);
        self.rate.lost_frontier = self.rate.lost_frontier.max(below);
        if below <= from {
            return 0;
        }
        (below - from).saturating_sub(self.sb.sacked().covered_in(from, below))
    }

    /// A timeout deemed everything outstanding lost (counted there, not on a later ACK).
    pub(super) fn rate_on_timeout(&mut self) {
        self.rate.lost_frontier = self.rate.lost_frontier.max(self.snd_max);
    }

    /// The end of an ACK's processing (`tcp_rate_gen` then `tcp_cong_control`): the sample,
    /// given to the controller; `prior_in_flight` before the ACK, `acked_sacked` what it
    /// newly delivered.
    pub(super) fn rate_finish_ack(&mut self, now: SimTime, prior_in_flight: u64, acked_sacked: u64) {
        let a = std::mem::take(&mut self.rate.ack);
        self.rate.delivered += acked_sacked;
        if self.rate.app_limited != 0 && self.rate.delivered > self.rate.app_limited {
            self.rate.app_limited = 0;
        }
        if acked_sacked > 0 {
            self.rate.delivered_time = now;
        }
        let (delivered, interval) = match a.prior_time {
            None => (None, None),
            Some(prior_time) => {
                let interval = a.send_interval.max(now.since(prior_time));
                let min_rtt = self.rtt.min_rtt();
                let d = self.rate.delivered - a.prior_delivered;
                (Some(d), (interval >= min_rtt && min_rtt != SimDuration::MAX).then_some(interval))
            }
        };
        let losses = self.rate_new_losses();
        let rs = RateSample {
            now,
            mss: self.smss,
            delivered,
            interval,
            prior_delivered: a.prior_delivered,
            is_app_limited: a.is_app_limited,
            acked_sacked,
            losses,
            prior_in_flight,
            inflight: self.inflight(),
            rtt: a.rtt,
            delivered_total: self.rate.delivered,
            delivered_time: self.rate.delivered_time,
            ca_state: CaState::from_linux(self.linux_ca_state()),
            srtt: self.rtt.srtt(),
        };
        self.cc.on_rate_sample(&rs);
        if self.cc.holds_app_limited() {
            self.rate.app_limited = (self.rate.delivered + self.inflight()).max(1);
        }
    }

    /// True when the pacing gate holds the next segment back at `now`; it then sets the pacing
    /// timer for its release.
    #[inline]
    pub(super) fn pacing_holds(&mut self, now: SimTime) -> bool {
        if self.cc.pacing_rate().is_none() || now >= self.rate.pacing_next {
            return false;
        }
        self.timers.set(TimerKind::Pacing, self.rate.pacing_next);
        true
    }

    /// A data segment of `len` payload bytes left at `now`: the next may leave len/rate after
    /// it (or after the last release time, if later).
    #[inline]
    pub(super) fn pacing_sent(&mut self, now: SimTime, len: u64) {
        if let Some(rate) = self.cc.pacing_rate() {
            let gap = (len as u128 * PS_PER_SEC / rate.max(1) as u128).min(u64::MAX as u128) as u64;
            self.rate.pacing_next = self.rate.pacing_next.max(now) + SimDuration(gap);
        }
    }
}
