//! The window in packets, as Linux keeps it (`snd_cwnd`, `snd_ssthresh`, `snd_cwnd_cnt`),
//! shared by the controllers ported from the kernel (BIC, CUBIC, Vegas, H-TCP), with the
//! kernel's slow start and Reno counter (`tcp_slow_start`, `tcp_cong_avoid_ai`) and the core's
//! own rules around them: leaving recovery, the loss window after a timeout. `WindowState` is
//! the window as a remedy outside the controller sees it, in either unit.

use super::RecoveryExit;

/// cwnd and ssthresh in segments, plus the ACK counter towards the next +1.
#[derive(Clone, Copy, Debug)]
pub struct PacketWindow {
    /// Bytes per segment.
    pub mss: u64,
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments (`u32::MAX` = unlimited).
    pub ssthresh: u32,
    /// ACKs (or packets) counted towards the next increase.
    pub cwnd_cnt: u32,
}

impl PacketWindow {
    /// From byte values (as the connection gives them) and the segment size.
    pub fn new(cwnd: u64, ssthresh: u64, mss: u32) -> Self {
        let mss = mss.max(1) as u64;
        let to_segs = |b: u64| if b == u64::MAX { u32::MAX } else { (b / mss).min(u32::MAX as u64) as u32 };
        PacketWindow { mss, cwnd: to_segs(cwnd).max(1), ssthresh: to_segs(ssthresh), cwnd_cnt: 0 }
    }

    /// cwnd in bytes.
    pub fn cwnd_bytes(&self) -> u64 {
        self.cwnd as u64 * self.mss
    }

    /// ssthresh in bytes (`u64::MAX` = unlimited).
    pub fn ssthresh_bytes(&self) -> u64 {
        if self.ssthresh == u32::MAX {
            u64::MAX
        } else {
            self.ssthresh as u64 * self.mss
        }
    }

    /// Leaving fast recovery: continue from min(recovery window, ssthresh) (Linux
    /// tcp_complete_cwr), or from ssthresh when the recovery kept no window of its own.
    pub fn exit_recovery(&mut self, ev: &RecoveryExit) {
        let w = ev.window.map_or(self.ssthresh, |b| (b / self.mss) as u32);
        self.cwnd = w.min(self.ssthresh).max(1);
        self.cwnd_cnt = 0;
    }

    /// Linux `tcp_slow_start`: cwnd += `acked` segments, up to ssthresh; returns the segments
    /// left over (those past ssthresh).
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = (self.cwnd as u64 + acked as u64).min(self.ssthresh as u64).max(self.cwnd as u64);
        let grown = (cwnd - self.cwnd as u64) as u32;
        self.cwnd = cwnd as u32;
        acked - grown
    }

    /// Linux `tcp_cong_avoid_ai` (4.x and later): one segment more per `w` segments acked,
    /// counted in `cwnd_cnt`.
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let d = self.cwnd_cnt / w;
            self.cwnd_cnt -= d * w;
            self.cwnd += d;
        }
    }

    /// The most `slow_start` then `cong_avoid_ai(cwnd, rest)` (Linux `tcp_reno_cong_avoid`)
    /// may add for `acked` segments, segments: the slow start's share up to ssthresh, then one
    /// segment for a full counter and one per cwnd of the counter plus the rest.
    pub fn reno_growth_bound(&self, acked: u32) -> u64 {
        let (cwnd, ssthresh, acked) = (self.cwnd as u64, self.ssthresh as u64, acked as u64);
        let ss = if cwnd < ssthresh { acked.min(ssthresh - cwnd) } else { 0 };
        let rest = acked - ss;
        let ca = if rest > 0 { 1 + (self.cwnd_cnt as u64 + rest) / (cwnd + ss).max(1) } else { 0 };
        ss + ca
    }

    /// After a timeout: the loss window of one segment.
    pub fn loss_window(&mut self) {
        self.cwnd = 1;
        self.cwnd_cnt = 0;
    }
}

/// A controller's window, borrowed for a remedy acting from outside the controller.
#[derive(Debug)]
pub enum WindowState<'a> {
    /// Kept in bytes (Reno, NewReno).
    Bytes {
        /// Congestion window, bytes.
        cwnd: &'a mut u64,
        /// Slow-start threshold, bytes (`u64::MAX` = unlimited).
        ssthresh: &'a mut u64,
    },
    /// Kept in segments, as Linux does (BIC, CUBIC, Vegas, H-TCP).
    Packets(&'a mut PacketWindow),
}
