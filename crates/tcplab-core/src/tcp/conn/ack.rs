//! The synchronized states' segment processing on the sending side: the ACK field (new data
//! acknowledged, RTT samples, the controller's ACK sample, window updates) and duplicate-ACK
//! detection, handing losses to `recovery` and sending to `send`.

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{AckSample, CongestionControl};
use crate::tcp::config::RecoveryKind;
use crate::tcp::timers::TimerKind;
use crate::units::{SimDuration, SimTime};

use super::recovery::Recovery;
use super::{Connection, Output, State};

impl Connection {
    pub(super) fn on_segment_synchronized(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        if self.state == State::SynReceived && seg.has(flags::SYN) && !seg.has(flags::ACK) {
            // Our SYN-ACK was lost and the peer retransmitted its SYN.
            let synack = self.syn_segment(now, flags::SYN | flags::ACK);
            out.segments.push(synack);
            return;
        }
        if seg.has(flags::SYN) && seg.has(flags::ACK) {
            // Duplicate SYN-ACK (our ACK was lost): acknowledge again.
            self.send_ack(now, out);
            return;
        }
        // RFC 793 §3.9 ("fifth, check the ACK field"): a segment without ACK is dropped; one
        // that acknowledges data never sent is dropped too, before it can update TS.Recent or
        // deliver data (Linux `tcp_ack` < 0 discards it; RFC 793 and RFC 5961 §5.2 would also
        // send an ACK, which Linux does not).
        if !seg.has(flags::ACK) || seg.ack > self.snd_max {
            return;
        }
        if self.ts_ok {
            if let Some((tsval, _)) = seg.timestamps {
                // RFC 7323 §4.3: TS.Recent from segments at or before Last.ACK.sent.
                if seg.seq <= self.last_ack_sent && tsval.wrapping_sub(self.ts_recent) as i32 >= 0 {
                    self.ts_recent = tsval;
                }
            }
        }
        let established = self.state == State::SynReceived && seg.ack >= 1;
        if established {
            self.state = State::Established;
            self.snd_wnd = seg.window;
        }
        self.on_ack(now, seg, out);
        if established {
            self.cc.on_established(self.rtt.srtt());
        }
        if seg.len > 0 || seg.has(flags::FIN) {
            self.on_data(now, seg, out);
        } else if seg.seq < self.rcv_nxt && seg.len == 0 && !seg.has(flags::SYN) && self.state_has_ack() {
            // An out-of-window probe (zero-window probe): answer with the current window.
            self.send_ack(now, out);
        }
        self.try_send(now, out);
        if self.cfg.cwnd_app_limited_decay {
            self.rfc2861_after_segment();
        }
    }

    pub(super) fn on_ack(&mut self, now: SimTime, seg: &TcpHeader, out: &mut Output) {
        // SACKed bytes before this ACK's blocks: what it newly delivers is counted against it.
        let sacked_before = self.sb.sacked().bytes();
        let (una_before, prior_in_flight) = (self.snd_una, if self.rate.on { self.inflight() } else { 0 });
        let mut sack_news = false;
        let undo_pre = self.cfg.undo.then(|| self.undo_pre());
        if self.sack_ok {
            // A D-SACK first block reports a duplicate, never SACKed data (`dsack`).
            let skip = self.dsack_received(seg) as usize;
            for (s, e) in seg.sack_blocks().skip(skip) {
                let s = s.max(self.snd_una);
                if e > s && e <= self.snd_max && self.sb.insert(s, e) > 0 {
                    sack_news = true;
                    if self.rate.on {
                        self.rate_sacked(s, e);
                    }
                }
            }
        }
        if sack_news && self.logs_retransmissions() {
            self.sb.detect_lost_retransmissions();
        }
        let pre = self.linux_after_ack_rules().then(|| self.pre_ack(seg, sack_news));
        if seg.ack > self.snd_una {
            self.snd_wnd = seg.window;
            self.max_snd_wnd = self.max_snd_wnd.max(seg.window);
            self.handle_new_ack(now, seg, sacked_before, out);
        } else if seg.ack == self.snd_una {
            let window_changed = seg.window != self.snd_wnd;
            self.snd_wnd = seg.window;
            self.max_snd_wnd = self.max_snd_wnd.max(seg.window);
            let is_dup = seg.len == 0 && !seg.has(flags::SYN) && !seg.has(flags::FIN) && self.snd_max > self.snd_una && (!window_changed || sack_news);
            if is_dup {
                let newly_sacked = self.sb.sacked().bytes() - sacked_before;
                if let Some(first) = self.on_dupack(now, newly_sacked, out) {
                    self.retransmit_range(now, first, out); // Fast retransmit.
                }
            } else if window_changed && self.snd_wnd > 0 {
                self.timers.clear(TimerKind::Persist);
                self.persist_backoff = 0;
            }
        }
        self.ecn_on_echo(now, seg);
        if let Some(u) = undo_pre {
            self.undo_after_ack(now, seg, u, out);
        }
        if let Some(pre) = pre {
            self.after_ack(now, seg, pre);
        }
        if self.rate.on && seg.ack >= una_before {
            // What the ACK newly delivered: the cumulative path's count, else what its blocks
            // newly SACKed (without SACK, a duplicate ACK stands for one segment, as Linux's
            // `tcp_add_reno_sack`).
            let acked_sacked = if seg.ack > una_before {
                self.rate.ack.acked_sacked
            } else if self.sack_ok {
                self.sb.sacked().bytes().saturating_sub(sacked_before)
            } else if self.dupacks > 0 && seg.len == 0 {
                self.smss as u64
            } else {
                0
            };
            self.rate_finish_ack(now, prior_in_flight, acked_sacked);
        }
    }

    /// Forget the segments the cumulative ACK (now `snd_una`, before it `prior_una`) fully
    /// covers, before the scoreboard drops their SACKs; returns their sequence RTT sample and
    /// how many they were. Karn's algorithm (RFC 6298 §3) as Linux applies it
    /// (`tcp_clean_rtx_queue`): an ACK that covers any retransmitted segment gives no sample
    /// at all (`FLAG_RETRANS_DATA_ACKED`): the segments above a repaired hole waited for the
    /// repair, so timing them measures the repair, not the path. Otherwise the sample times
    /// the newest covered segment not SACKed before (a SACKed one arrived earlier; the
    /// cumulative ACK newly delivers only the rest). Linux times the oldest such segment for
    /// its estimator (`first_ackt`) and the newest for its controller (`last_ackt`); this
    /// connection keeps one sample for both, the newest, as before.
    fn time_acked_segments(&mut self, now: SimTime, prior_una: u64) -> (Option<SimDuration>, u32) {
        let (mut sample, mut packets_acked, mut retransmitted, mut start) = (None, 0u32, false, prior_una);
        while let Some(r) = self.sent.front() {
            if r.end > self.snd_una {
                break;
            }
            let sacked = self.sb.sacked();
            if r.retransmitted {
                retransmitted = true;
            } else if sacked.is_empty() || sacked.covered_in(start, r.end) < r.end - start {
                sample = Some(now.since(r.at));
            }
            start = r.end;
            if self.rate.on {
                let stamp = r.rate;
                self.rate_delivered(&stamp);
            }
            self.sent.pop_front();
            packets_acked += 1;
        }
        (sample.filter(|_| !retransmitted), packets_acked)
    }

    /// An ACK that moved SND.UNA. `sacked_before` is the scoreboard's SACKed byte count before
    /// this ACK's SACK blocks were recorded.
    pub(super) fn handle_new_ack(&mut self, now: SimTime, seg: &TcpHeader, sacked_before: u64, out: &mut Output) {
        let inflight_before = self.inflight();
        let cwnd_before = self.cwnd();
        let acked = seg.ack - self.snd_una;
        let fin_acked = self.fin_sent && seg.ack == self.snd_max;
        let syn_acked = self.snd_una == 0;
        let data_acked = acked - syn_acked as u64 - fin_acked as u64;
        self.snd_una = seg.ack;
        self.stats.bytes_acked += data_acked;
        self.note_progress();
        if self.snd_nxt < self.snd_una {
            self.snd_nxt = self.snd_una;
        }
        let (sample, packets_acked) = self.time_acked_segments(now, seg.ack - acked);
        let sacked_with_blocks = self.sb.sacked().bytes();
        self.sb.on_cumulative_ack(self.snd_una);
        // Bytes this ACK newly delivered (Linux `tp->delivered`, RFC 6675's "newly
        // acknowledged or SACKed"): the cumulative advance less what was SACKed before it,
        // plus what its blocks SACKed above the new SND.UNA. Every byte counts once, when the
        // sender first learns it arrived; the ACK that fills a hole below SACKed data
        // delivers the hole, not the SACKed data above it.
        let trimmed = sacked_with_blocks - self.sb.sacked().bytes();
        let mut delivered = (acked - trimmed.min(acked) + (sacked_with_blocks - sacked_before)).saturating_sub(syn_acked as u64 + fin_acked as u64);
        if !self.sack_ok && self.dupacks > 0 && data_acked > 0 {
            // Without SACK each duplicate ACK stood for a segment that arrived (RFC 5681 §3.2's
            // inflation; Linux counts it delivered then, `tcp_add_reno_sack`): the ACK that
            // covers them delivers the rest, at least one segment (`tcp_remove_reno_sacks`).
            let mss = self.smss as u64;
            let counted = (self.dupacks as u64).min(data_acked.div_ceil(mss) - 1) * mss;
            delivered = delivered.saturating_sub(counted).max(data_acked.min(mss));
        }
        if self.snd_una > self.round_end {
            self.round += 1;
            self.round_end = self.snd_max;
        }
        self.ecn_feedback(seg, acked);
        let was_open = self.recovery.is_none() && self.sb.loss_point().is_none() && self.dupacks == 0 && self.sb.sacked().is_empty();
        // RTT: the timestamp echo if negotiated, else the sequence sample above.
        let sample = if self.ts_ok { seg.timestamps.and_then(|(_, ecr)| self.ts_rtt(now, ecr)) } else { sample };
        if let Some(r) = sample {
            self.rtt.sample(r, &self.cfg.rto, self.snd_una, self.snd_nxt);
            self.backoffs = 0;
        }
        if self.rate.on {
            self.rate.ack.acked_sacked = delivered;
            self.rate.ack.rtt = sample;
        }
        self.syn_retries = 0;
        if self.state == State::FinWait1 && fin_acked {
            self.state = State::FinWait2;
        } else if self.state == State::Closing && fin_acked {
            self.state = State::TimeWait;
        } else if self.state == State::LastAck && fin_acked {
            self.state = State::Closed;
        }
        self.dupacks = 0;
        self.persist_backoff = 0;
        self.timers.clear(TimerKind::Persist);

        // Loss (post-timeout) state ends when everything outstanding at the timeout is acked.
        if self.sb.loss_point().is_some_and(|p| self.snd_una >= p) {
            self.sb.set_loss_point(None);
        }

        let mut restart_rto = true;
        match self.recovery {
            Some(Recovery::Sack { .. }) | Some(Recovery::RateHalving { .. }) | Some(Recovery::Prr { .. }) => {
                if self.snd_una >= self.recover {
                    self.exit_recovery(now, out);
                } else if matches!(self.recovery, Some(Recovery::Prr { .. })) {
                    self.prr_reduce(delivered, true);
                } else {
                    self.rate_halve();
                }
            }
            Some(Recovery::Controller) => {
                // The controller keeps the window (`rate_finish_ack` gives it this ACK).
                if self.snd_una >= self.recover {
                    self.exit_recovery(now, out);
                } else if !self.use_sack() {
                    self.retransmit_range(now, self.snd_una, out); // RFC 6582's partial ACK.
                }
            }
            Some(Recovery::NewReno { cwnd, partial_seen }) => {
                if self.snd_una >= self.recover || self.recovery_kind == RecoveryKind::Reno {
                    self.exit_recovery(now, out);
                } else {
                    // RFC 6582 §3.2 step 5: partial ACK.
                    let mss = self.smss as u64;
                    let mut w = cwnd.saturating_sub(acked);
                    if acked >= mss {
                        w += mss;
                    }
                    self.recovery = Some(Recovery::NewReno { cwnd: w.max(mss), partial_seen: true });
                    self.retransmit_range(now, self.snd_una, out);
                    // RFC 6582 §4: "Impatient" resets the timer on the first partial ACK only,
                    // "Slow-but-Steady" (FreeBSD 4.x, Linux) on every one.
                    restart_rto = !partial_seen || self.cfg.rto_every_partial_ack;
                }
            }
            None => {
                // No growth in CWR (Linux `tcp_may_raise_cwnd`), nor on an ACK whose
                // ECN-Echo reduces the window.
                if data_acked > 0 && self.cwr.is_none() && !self.ecn_echo_reduces(seg) && !self.rate.on {
                    let ack = AckSample {
                        now,
                        bytes_acked: data_acked,
                        packets_acked,
                        delivered,
                        open: was_open && self.sb.sacked().is_empty(),
                        round: self.round,
                        mss: self.smss,
                        rtt: sample,
                        srtt: self.rtt.srtt(),
                        min_rtt: (self.rtt.min_rtt() != SimDuration::MAX).then(|| self.rtt.min_rtt()),
                        inflight_before,
                        cwnd_limited: self.cwnd_limited(inflight_before, cwnd_before),
                        after_timeout: self.sb.loss_point().is_some(),
                        timestamps: if self.ts_ok { seg.timestamps } else { None },
                        ts_tick: self.cfg.ts_tick,
                    };
                    #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
                    self.inv_note_sample(&ack);
                    self.cc.on_ack(&ack);
                }
            }
        }
        // RFC 6298 §5.2/5.3: stop the timer when all is acknowledged, else restart it.
        if self.snd_una == self.snd_max {
            self.timers.clear(TimerKind::Retransmit);
        } else if restart_rto {
            self.arm_rto(now);
        }
    }
}
