//! The delivery-rate sample a window-owning controller (BBR) is given on every ACK: Linux's
//! `struct rate_sample` (`net/ipv4/tcp_rate.c`, draft-cheng-iccrg-delivery-rate-estimation)
//! plus the parts of the connection Linux's `cong_control` hook reads (`tp->delivered`,
//! `delivered_mstamp`, the congestion state, in-flight). The connection's sampler
//! (`tcp::conn::rate`) builds it; only a controller that asks (`CongestionControl::owns_window`)
//! gets it, so no other controller's behaviour depends on it.

use crate::units::{SimDuration, SimTime};

/// The connection's congestion state as Linux names it (`icsk_ca_state`), ordered as Linux's
/// `TCP_CA_*` so that `state >= Recovery` reads as in the kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum CaState {
    /// No loss, no reordering signs (`TCP_CA_Open`).
    #[default]
    Open = 0,
    /// Duplicate ACKs or SACKed data outstanding (`TCP_CA_Disorder`).
    Disorder = 1,
    /// A reduction that is not a loss (ECN, local congestion; `TCP_CA_CWR`).
    Cwr = 2,
    /// Fast recovery (`TCP_CA_Recovery`).
    Recovery = 3,
    /// Repairing after a retransmission timeout (`TCP_CA_Loss`).
    Loss = 4,
}

impl CaState {
    /// From Linux's number (`Connection::ca_state`).
    pub fn from_linux(n: u8) -> CaState {
        match n {
            0 => CaState::Open,
            1 => CaState::Disorder,
            2 => CaState::Cwr,
            3 => CaState::Recovery,
            _ => CaState::Loss,
        }
    }
}

/// One ACK as a window-owning controller sees it (Linux `tcp_rate_gen` and `tcp_cong_control`).
/// Byte counts are payload bytes; Linux counts packets, which a controller gets by dividing by
/// `mss`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateSample {
    /// When the ACK arrived.
    pub now: SimTime,
    /// Sender MSS, bytes.
    pub mss: u32,
    /// Bytes delivered over `interval` (`rs->delivered`); `None` when the ACK delivered
    /// nothing that was stamped, or the interval was not valid (`rs->delivered = -1`,
    /// `interval_us = -1`).
    pub delivered: Option<u64>,
    /// The sampling interval, max(send elapsed, ACK elapsed) (`rs->interval_us`); `None` when
    /// not valid (no stamped delivery, or shorter than the connection's min RTT).
    pub interval: Option<SimDuration>,
    /// `tp->delivered` when the newest segment this ACK delivered was sent
    /// (`rs->prior_delivered`), bytes.
    pub prior_delivered: u64,
    /// That segment was sent while the sender was application-limited (`rs->is_app_limited`).
    pub is_app_limited: bool,
    /// Bytes this ACK newly delivered, cumulatively or by SACK (`rs->acked_sacked`).
    pub acked_sacked: u64,
    /// Bytes this ACK newly deemed lost (`rs->losses`; with SACK only).
    pub losses: u64,
    /// Bytes in flight before the ACK (`rs->prior_in_flight`).
    pub prior_in_flight: u64,
    /// Bytes in flight after it (`tcp_packets_in_flight`, in bytes).
    pub inflight: u64,
    /// RTT sample of this ACK (`rs->rtt_us`), if any.
    pub rtt: Option<SimDuration>,
    /// Bytes delivered since the connection began (`tp->delivered`), this ACK included.
    pub delivered_total: u64,
    /// When the last delivery happened (`tp->delivered_mstamp`).
    pub delivered_time: SimTime,
    /// The congestion state after the ACK was processed (Linux runs `cong_control` after
    /// `tcp_fastretrans_alert`).
    pub ca_state: CaState,
    /// Smoothed RTT, if sampled (`tp->srtt_us`).
    pub srtt: Option<SimDuration>,
}

impl RateSample {
    /// The sample's delivery rate, bytes per second, when valid.
    pub fn rate_bytes_per_sec(&self) -> Option<u64> {
        match (self.delivered, self.interval) {
            (Some(d), Some(i)) if i.as_ps() > 0 => Some(((d as u128 * 1_000_000_000_000u128) / i.as_ps() as u128).min(u64::MAX as u128) as u64),
            _ => None,
        }
    }
}
