//! Local congestion (`tcp.local_congestion = "cwr"`): the sender's own host had no room in its
//! interface queue for segments the connection had just produced. Linux does not lose such a
//! segment: the qdisc refuses it, `ip_queue_xmit` returns the refusal, `tcp_transmit_skb`
//! calls `tcp_enter_cwr` and `tcp_write_xmit` stops with the segment still at the send head,
//! to go on the next ACK or timer (2.4.17 `tcp_output.c` `tcp_transmit_skb`, `tcp_write_xmit`;
//! `tcp.h` `tcp_enter_cwr`; the same in 2.6 and later). The simulation finds the refusal when
//! it offers the segments to the host's first queue (`sim`), and hands the refused tail back
//! here.
//!
//! What is given back: new data and the FIN (taken back as never sent: SND.MAX and SND.NXT
//! return to the first of them, their send records go, the counters forget them) and pure
//! ACKs (simply not sent, as Linux's refused ACK is freed). A retransmission is not given back:
//! the queue drops it as a network queue would and recovery finds it lost again — MODEL: Linux
//! keeps it marked lost and resends it at once; refusals of retransmissions are rare (recovery
//! and the timeout's slow start send a few segments per ACK, into a queue that has drained).
//!
//! The reduction: `tcp_enter_cwr` sets ssthresh by the controller's rule and enters CWR
//! unless the connection is already in CWR, recovery or the timeout's loss state; here
//! through the controller's reaction to an ECN-Echo (`on_ecn_echo`), once per window (the
//! same guard as an ECN-Echo, which Linux answers with the same `tcp_enter_cwr`), made as
//! `tcp.cwr_reduction` says (`cwr`): cut to the new ssthresh at once (`"at-once"`), or, as
//! Linux does (`"rate-halving"`), lowered by one segment per two ACKs over the next round trip
//! (`tcp_cwnd_down`) without growth in that round trip. With nothing left in flight, the
//! persist timer retries the send (Linux: `tcp_check_probe_timer`, one RTO).

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::timers::TimerKind;
use crate::units::SimTime;

use super::{Connection, Output, State};

impl Connection {
    /// The host's interface queue refused `segs`, the tail of what this connection produced in
    /// its last call, in order (the simulation gives back only new data, the FIN and pure
    /// ACKs; see the module doc): take them back as never sent and reduce the window once.
    pub fn withhold(&mut self, now: SimTime, segs: &[TcpHeader], out: &mut Output) {
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        let before = self.inv_before(out);
        self.withhold_unchecked(now, segs);
        #[cfg(all(debug_assertions, not(tcplab_no_invariants)))]
        self.inv_check("a refusal by the local queue", &before, out);
        let _ = out; // Read only by the checks of test builds.
    }

    fn withhold_unchecked(&mut self, now: SimTime, segs: &[TcpHeader]) {
        let mut first: Option<u64> = None;
        let (mut n, mut bytes, mut fin, mut cwr) = (0u64, 0u64, false, false);
        for h in segs {
            debug_assert!(!h.retransmit && !h.has(flags::SYN), "only new data, FINs and pure ACKs are given back");
            if h.has(flags::FIN) {
                fin = true;
            }
            if h.len > 0 {
                first = Some(first.map_or(h.seq, |s| s.min(h.seq)));
                n += 1;
                bytes += h.len as u64;
            }
            cwr |= h.has(flags::CWR);
        }
        if first.is_none() && !fin {
            return; // Only pure ACKs: nothing to take back, and Linux does not reduce for them.
        }
        let back = first.unwrap_or(self.stream_end);
        debug_assert!(back >= self.snd_una && back <= self.snd_max, "withheld data {back} outside SND.UNA..SND.MAX");
        if fin {
            debug_assert!(self.fin_sent, "a withheld FIN that was never sent");
            self.fin_sent = false;
            self.state = match self.state {
                State::FinWait1 => State::Established,
                State::LastAck => State::CloseWait,
                st => st,
            };
        }
        self.snd_max = back;
        self.snd_nxt = self.snd_nxt.min(back);
        while self.sent.back().is_some_and(|r| r.end > back) {
            self.sent.pop_back();
        }
        if self.sb.high_rxt() > back {
            self.sb.set_high_rxt(back);
        }
        self.stats.segments_sent -= n;
        self.stats.bytes_sent -= bytes;
        self.stats.local_refusals += n + fin as u64;
        if cwr {
            self.ecn.cwr_pending = true; // The CWR flag goes with the next new segment instead.
        }
        if self.snd_una == self.snd_max {
            // Nothing in flight to clock the next send: retry on the persist timer.
            self.timers.clear(TimerKind::Retransmit);
            if !self.timers.is_set(TimerKind::Persist) {
                self.arm_persist(now);
            }
        }
        // tcp_enter_cwr: not again within the window already reduced for, nor in recovery or
        // the timeout's loss state (Linux: ca_state < TCP_CA_CWR).
        let reduced = self.recovery.is_some() || self.sb.loss_point().is_some() || self.snd_una <= self.ecn.reduced_until;
        if !reduced {
            self.reduce_not_lost(now);
            self.ecn_reduced();
            self.stats.local_reductions += 1;
        }
    }
}
