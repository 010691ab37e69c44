//! The connection's own writes to the controller's window, for the Linux rules that act on
//! `snd_cwnd` and `snd_ssthresh` outside the controller (`moderate`, `cwr`, `rfc2861`): Linux
//! keeps both in segments, the controllers here in bytes (Reno, NewReno, HighSpeed, DCTCP,
//! …) or in segments (BIC, CUBIC; `WindowState::Packets`). A rule computes in bytes, or in
//! whole segments where Linux shifts or halves; a window kept in segments takes the bytes
//! rounded up to whole segments (Linux counts a partial segment in flight as one packet).

use crate::tcp::cc::{CongestionControl, WindowState};

use super::Connection;

impl Connection {
    /// Set the controller's cwnd to `bytes` (at least one segment). Its other state (the
    /// avoidance counter, a coupled group's published window) is left as it is: Linux's rules
    /// change `snd_cwnd` alone.
    pub(super) fn set_cc_cwnd(&mut self, bytes: u64) {
        let mss = self.smss as u64;
        match self.cc.window() {
            WindowState::Bytes { cwnd, .. } => *cwnd = bytes.max(mss),
            WindowState::Packets(w) => w.cwnd = bytes.div_ceil(w.mss).clamp(1, u32::MAX as u64) as u32,
        }
    }

    /// Set the controller's ssthresh to `bytes` (`u64::MAX` = unlimited).
    pub(super) fn set_cc_ssthresh(&mut self, bytes: u64) {
        match self.cc.window() {
            WindowState::Bytes { ssthresh, .. } => *ssthresh = bytes,
            WindowState::Packets(w) => w.ssthresh = if bytes == u64::MAX { u32::MAX } else { (bytes / w.mss).min(u32::MAX as u64) as u32 },
        }
    }

    /// Linux `tcp_current_ssthresh` (2.4.17–2.4.20 `tcp.h`), bytes: in CWR or fast recovery
    /// ssthresh as it is, else the larger of ssthresh and ¾ cwnd (⌊cwnd/2⌋ + ⌊cwnd/4⌋ in
    /// whole segments).
    pub(super) fn current_ssthresh(&self) -> u64 {
        let ssthresh = self.cc.ssthresh();
        if self.cwr.is_some() || self.recovery.is_some() {
            return ssthresh;
        }
        let mss = self.smss as u64;
        let c = self.cwnd() / mss;
        ssthresh.max(((c >> 1) + (c >> 2)) * mss)
    }
}
