//! The sender's SACK scoreboard (RFC 6675): SACKed ranges, HighRxt, the rescue
//! retransmission, the timeout's loss point, and Linux's log of retransmissions for
//! lost-retransmission detection; with the loss marking (IsLost, or FACK) and the pipe
//! estimate built on them.
//!
//! Per-ACK work does not grow with the window: the SACKed bytes below HighRxt and below the
//! loss point are kept up to date as blocks arrive, the cumulative ACK trims and HighRxt
//! moves (each SACKed range is walked over once by each mark's forward moves), the total is
//! kept by the range set, and the loss bound is found from the top of the scoreboard (at
//! most DupThresh ranges for IsLost, the ranges within DupThresh segments of the highest
//! SACK for FACK). So `pipe` is O(1) plus that walk instead of a scan of every range.

use std::collections::VecDeque;

use crate::tcp::ranges::RangeSet;

/// How un-SACKed data is judged lost (fixed once the handshake has negotiated the MSS and
/// the recovery kind).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LossRule {
    /// Duplicate-ACK threshold.
    pub dupthresh: u32,
    /// Payload bytes per segment.
    pub smss: u64,
    /// Linux FACK: everything more than `dupthresh` segments below the highest SACK is lost
    /// (instead of RFC 6675 IsLost).
    pub fack: bool,
}

/// A sequence number and the SACKed bytes below it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Mark {
    at: u64,
    below: u64,
}

/// The scoreboard.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scoreboard {
    sacked: RangeSet,
    /// RFC 6675 HighRxt and the SACKed bytes below it.
    high_rxt: Mark,
    /// Everything outstanding at a retransmission timeout is lost until acknowledged: the
    /// timeout's snd_max, and the SACKed bytes below it.
    loss_point: Option<Mark>,
    /// RFC 6675 RescueRxt: set once the rescue retransmission of this recovery is sent.
    pub rescue_rxt: Option<u64>,
    /// Linux SACK recovery: retransmissions in order, each with the highest sequence sent
    /// before it (`ack_seq`), for lost-retransmission detection.
    rxt_log: VecDeque<(u64, u64, u64)>,
    /// Retransmissions deemed lost (data sent after them was SACKed): sent again first.
    rxt_lost: VecDeque<(u64, u64)>,
}

impl Scoreboard {
    /// The SACKed ranges.
    pub fn sacked(&self) -> &RangeSet {
        &self.sacked
    }

    /// RFC 6675 HighRxt.
    pub fn high_rxt(&self) -> u64 {
        self.high_rxt.at
    }

    /// The loss point of the timeout being repaired, if any.
    pub fn loss_point(&self) -> Option<u64> {
        self.loss_point.map(|m| m.at)
    }

    /// SACKed bytes below `x`, from scratch (O(1) at or above the highest SACK, as for a
    /// timeout's loss point).
    fn sacked_below(&self, x: u64) -> u64 {
        match (self.sacked.first(), self.sacked.max_end()) {
            (_, Some(top)) if top <= x => self.sacked.bytes(),
            (Some((a, _)), _) if a < x => self.sacked.covered_in(a, x),
            _ => 0,
        }
    }

    /// Move `m` to `x`, keeping its count (costs the ranges between the two positions).
    fn move_mark(sacked: &RangeSet, m: &mut Mark, x: u64) {
        if sacked.first().is_none_or(|(a, _)| x <= a) {
            m.below = 0;
        } else if x >= m.at {
            m.below += sacked.covered_in(m.at, x);
        } else {
            m.below -= sacked.covered_in(x, m.at);
        }
        m.at = x;
    }

    /// Set HighRxt.
    pub fn set_high_rxt(&mut self, x: u64) {
        Self::move_mark(&self.sacked, &mut self.high_rxt, x);
    }

    /// Enter (`Some`) or leave the timeout's loss state.
    pub fn set_loss_point(&mut self, p: Option<u64>) {
        self.loss_point = p.map(|at| Mark { at, below: self.sacked_below(at) });
    }

    /// Record a SACKed block; returns how many bytes it newly covers.
    pub fn insert(&mut self, s: u64, e: u64) -> u64 {
        if self.sacked.range_containing(s).is_some_and(|(_, b)| b >= e) {
            return 0; // Reported before (most blocks of most ACKs).
        }
        // The block's new bytes below each mark, before it merges with its neighbours
        // (the ranges met here are the ones the insert merges away).
        let fresh_below = |m: &Mark| if s < m.at { (e.min(m.at) - s) - self.sacked.covered_in(s, e.min(m.at)) } else { 0 };
        let hr = fresh_below(&self.high_rxt);
        let lp = self.loss_point.as_ref().map_or(0, fresh_below);
        self.high_rxt.below += hr;
        if let Some(m) = self.loss_point.as_mut() {
            m.below += lp;
        }
        self.sacked.insert(s, e)
    }

    /// The cumulative ACK reached `una`: forget what lies below it; HighRxt is at least `una`.
    pub fn on_cumulative_ack(&mut self, una: u64) {
        let removed = self.sacked.trim_below(una);
        for m in std::iter::once(&mut self.high_rxt).chain(self.loss_point.as_mut()) {
            // Every byte removed lay below `una`; a mark at or below it has nothing below.
            m.below = if m.at <= una { 0 } else { m.below - removed };
        }
        while self.rxt_log.front().is_some_and(|r| r.1 <= una) {
            self.rxt_log.pop_front();
        }
        while self.rxt_lost.front().is_some_and(|r| r.1 <= una) {
            self.rxt_lost.pop_front();
        }
        if self.high_rxt.at < una {
            self.set_high_rxt(una);
        }
    }

    /// A new repair (fast recovery or a timeout with SACK) starts at `una`.
    pub fn restart_repair(&mut self, una: u64) {
        self.set_high_rxt(una);
        self.rescue_rxt = None;
    }

    /// Forget the Linux retransmission logs (recovery entered or left, or a timeout).
    pub fn clear_rxt_logs(&mut self) {
        self.rxt_log.clear();
        self.rxt_lost.clear();
    }

    /// Log a retransmission of `[s, e)` sent when `snd_max` was the highest sequence sent.
    pub fn log_rxt(&mut self, s: u64, e: u64, snd_max: u64) {
        self.rxt_log.push_back((s, e, snd_max));
    }

    /// FACK: un-SACKed data more than `dupthresh` segments below the highest SACKed byte.
    pub fn fack_lost_below(&self, una: u64, rule: LossRule) -> u64 {
        let reordering = rule.dupthresh as u64 * rule.smss;
        self.sacked.max_end().map_or(una, |m| m.saturating_sub(reordering)).max(una)
    }

    /// Everything below this sequence number that is not SACKed is deemed lost (RFC 6675
    /// IsLost, or FACK, plus everything outstanding at a timeout).
    pub fn lost_below(&self, una: u64, max: u64, rule: LossRule) -> u64 {
        self.lost_bound(una, max, rule).0
    }

    /// `lost_below` and the SACKed bytes below it.
    fn lost_bound(&self, una: u64, max: u64, rule: LossRule) -> (u64, u64) {
        let mut best = (una, 0);
        if let Some(m) = self.loss_point {
            if m.at > best.0 {
                best = (m.at, m.below);
            }
        }
        let total = self.sacked.bytes();
        if rule.fack {
            let f = self.fack_lost_below(una, rule);
            if f > best.0 {
                // SACKed bytes at or above f: the ranges within DupThresh segments of the top.
                let mut above = 0;
                for (a, b) in self.sacked.iter().rev() {
                    if b <= f {
                        break;
                    }
                    above += b - a.max(f);
                }
                best = (f, total - above);
            }
        } else {
            // IsLost: DupThresh ranges, or more than (DupThresh − 1)·SMSS bytes, SACKed above.
            let dt = rule.dupthresh as usize;
            let limit = (rule.dupthresh as u64).saturating_sub(1) * rule.smss;
            let mut cum = 0u64;
            for (k, (a, b)) in self.sacked.iter().rev().enumerate() {
                cum += b - a;
                if k + 1 >= dt || cum > limit {
                    if a > best.0 {
                        best = (a, total - cum);
                    }
                    break;
                }
            }
        }
        if best.0 > max {
            best = (max, total);
        }
        best
    }

    /// RFC 6675 pipe: un-SACKed bytes not deemed lost, plus retransmitted un-SACKed bytes
    /// (less Linux's lost retransmissions, out of the network).
    #[inline]
    pub fn pipe(&self, una: u64, max: u64, rule: LossRule) -> u64 {
        let hr = self.high_rxt.at.clamp(una, max);
        if self.sacked.is_empty() && self.loss_point.is_none() {
            // Nothing SACKed and no timeout repair: nothing is deemed lost (fast path).
            return (max - una) + (hr - una);
        }
        self.pipe_with_losses(una, max, rule)
    }

    /// `pipe` when something is SACKed or a timeout repair is under way.
    #[inline(never)]
    fn pipe_with_losses(&self, una: u64, max: u64, rule: LossRule) -> u64 {
        let hr = self.high_rxt.at.clamp(una, max);
        let (lb, lb_sacked) = self.lost_bound(una, max, rule);
        // The mark counts SACKed bytes below HighRxt; all SACKed bytes lie in [una, max].
        let hr_sacked = if self.high_rxt.at >= una { self.high_rxt.below } else { 0 };
        let unsacked_all = (max - una) - self.sacked.bytes();
        let unsacked_lost = (lb - una) - lb_sacked;
        let unsacked_rxt = (hr - una) - hr_sacked;
        unsacked_all - unsacked_lost + unsacked_rxt - self.lost_retransmitted_bytes(una)
    }

    /// Linux 2.6 lost-retransmission detection (`tcp_sacktag_write_queue`, FACK, Recovery
    /// state only): a retransmission is lost when data first sent after it has been SACKed
    /// while it has not; it leaves the pipe and is sent again.
    pub fn detect_lost_retransmissions(&mut self) {
        let Some(top) = self.sacked.max_end() else { return };
        while let Some(&(a, b, sent_above)) = self.rxt_log.front() {
            if top <= sent_above {
                break;
            }
            self.rxt_log.pop_front();
            if a < b && self.sacked.covered_in(a, b) < b - a {
                self.rxt_lost.push_back((a, b));
            }
        }
    }

    /// Unsacked bytes of retransmissions deemed lost and not yet sent again (out of the pipe),
    /// counted once each where logged retransmissions overlap (a rescue retransmission may
    /// resend bytes an earlier retransmission carried), so the sum never exceeds the unsacked
    /// bytes below HighRxt that the pipe counts as retransmitted.
    /// MODEL: walks the lost retransmissions not yet sent again; they go first whenever the
    /// window allows, so the list stays short.
    fn lost_retransmitted_bytes(&self, una: u64) -> u64 {
        if self.rxt_lost.is_empty() {
            return 0; // Almost always (pipe_with_losses asks on every ACK in recovery).
        }
        let hr = self.high_rxt.at;
        let unsacked = |a: u64, b: u64| (b - a) - self.sacked.covered_in(a, b);
        let clamp = |&(a, b): &(u64, u64)| (a.max(una), b.min(hr));
        // Usually the ranges are in order and disjoint: sum them as they are.
        let (mut total, mut reach) = (0, 0);
        for (a, b) in self.rxt_lost.iter().map(clamp).filter(|(a, b)| a < b) {
            if a < reach {
                // Overlapping or out of order: merge them in order (rare, so the list is short).
                let mut r: Vec<(u64, u64)> = self.rxt_lost.iter().map(clamp).filter(|(a, b)| a < b).collect();
                r.sort_unstable();
                let (mut total, mut reach) = (0, 0);
                for (a, b) in r {
                    let a = a.max(reach);
                    if a < b {
                        total += unsacked(a, b);
                        reach = b;
                    }
                }
                return total;
            }
            total += unsacked(a, b);
            reach = b;
        }
        total
    }

    /// The next piece of a lost retransmission to send again (Linux: ahead of anything
    /// else), at most `mss` bytes and not past a SACKed range; the log moves past it.
    pub fn next_lost_retransmission(&mut self, una: u64, mss: u64) -> Option<u64> {
        while let Some(&(a, b)) = self.rxt_lost.front() {
            let s = self.sacked.next_uncovered(a.max(una));
            if s >= b {
                self.rxt_lost.pop_front();
                continue;
            }
            let e = (s + mss).min(b);
            self.rxt_lost[0].0 = match self.sacked.next_start_after(s) {
                Some(n) if n < e => n,
                _ => e,
            };
            if self.rxt_lost[0].0 >= b {
                self.rxt_lost.pop_front();
            }
            return Some(s);
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The pipe and loss bound as computed before the marks: scans of the whole scoreboard.
    fn naive(sb: &Scoreboard, una: u64, max: u64, rule: LossRule) -> (u64, u64) {
        let s = &sb.sacked;
        let mut l = una;
        if let Some(p) = sb.loss_point() {
            l = l.max(p);
        }
        let lb = if rule.fack {
            l.max(sb.fack_lost_below(una, rule)).min(max)
        } else {
            let dt = rule.dupthresh as usize;
            let limit = (rule.dupthresh as u64).saturating_sub(1) * rule.smss;
            let mut cum = 0u64;
            for (k, (a, b)) in s.to_vec().into_iter().rev().enumerate() {
                cum += b - a;
                if k + 1 >= dt || cum > limit {
                    l = l.max(a);
                    break;
                }
            }
            l.min(max)
        };
        let unsacked = |a: u64, b: u64| (b - a) - s.covered_in(a, b);
        let lbc = lb.clamp(una, max);
        let hr = sb.high_rxt().clamp(una, max);
        // Byte by byte: an unsacked byte below HighRxt inside any lost retransmission.
        let lost_rxt = (una..hr).filter(|&x| s.covered_in(x, x + 1) == 0 && sb.rxt_lost.iter().any(|&(a, b)| a <= x && x < b)).count() as u64;
        let pipe = unsacked(una, max) - unsacked(una, lbc) + unsacked(una, hr) - lost_rxt;
        (lb, pipe)
    }

    proptest! {
        /// Random SACKs, cumulative ACKs, HighRxt moves (forward, and back for the rescue and
        /// new repairs), timeouts and lost retransmissions: the marks always give the pipe
        /// and loss bound that full scans give.
        #[test]
        fn incremental_pipe_matches_full_scans(
            ops in proptest::collection::vec((0u8..10, 0u64..400, 1u64..60), 1..150),
            dupthresh in 1u32..5,
            fack in any::<bool>(),
        ) {
            let rule = LossRule { dupthresh, smss: 10, fack };
            let mut sb = Scoreboard::default();
            let (mut una, mut max) = (0u64, 50u64);
            for (op, x, l) in ops {
                match op {
                    0..=3 => {
                        let s = (una + x % (max - una + 1)).max(una);
                        let e = (s + l).min(max);
                        if e > s { sb.insert(s, e); }
                    }
                    4 => {
                        una = (una + x % 40).min(max);
                        sb.on_cumulative_ack(una);
                    }
                    5 => { let hr = sb.high_rxt(); sb.set_high_rxt((hr + x % 30).min(max)); }
                    6 => { let hr = sb.high_rxt(); sb.set_high_rxt(hr.saturating_sub(x % 15).max(una)); }
                    7 => {
                        if sb.loss_point().is_some() && x % 2 == 0 { sb.set_loss_point(None); } else { sb.set_loss_point(Some(max)); sb.restart_repair(una); }
                    }
                    8 => {
                        max += l;
                        let s = (una + x % (max - una + 1)).min(max - 1);
                        sb.log_rxt(s, (s + 10).min(max), max);
                        sb.detect_lost_retransmissions();
                    }
                    _ => { sb.next_lost_retransmission(una, 10); }
                }
                let lp = sb.loss_point();
                if lp.is_some_and(|p| p <= una) { sb.set_loss_point(None); }
                let (lb, pipe) = naive(&sb, una, max, rule);
                prop_assert_eq!(sb.lost_below(una, max, rule), lb);
                prop_assert_eq!(sb.pipe(una, max, rule), pipe);
                let hr_ref = sb.sacked.covered_in(0, sb.high_rxt());
                prop_assert_eq!(sb.high_rxt.below, hr_ref);
            }
        }
    }
}
