//! What a connection reports: its RFC 793 state, the events worth a trace record, and what a
//! call produced (`Output`).

use crate::net::packet::TcpHeader;
use crate::units::SimTime;

/// RFC 793 connection states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    /// No connection.
    Closed,
    /// Waiting for a SYN.
    Listen,
    /// SYN sent, waiting for SYN-ACK.
    SynSent,
    /// SYN received, SYN-ACK sent.
    SynReceived,
    /// Data transfer.
    Established,
    /// Our FIN sent, not yet acknowledged.
    FinWait1,
    /// Our FIN acknowledged; waiting for the peer's.
    FinWait2,
    /// Peer's FIN received; we may still send.
    CloseWait,
    /// Both FINs sent, ours not yet acknowledged.
    Closing,
    /// Peer closed first; our FIN sent, waiting for its ACK.
    LastAck,
    /// Both directions closed.
    TimeWait,
}

/// Something worth a trace record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TcpEventKind {
    /// Fast retransmit: loss detected by duplicate ACKs or SACK, fast recovery entered.
    FastRetransmit = 0,
    /// The retransmission timer expired.
    Timeout = 1,
    /// Fast recovery ended.
    RecoveryExit = 2,
    /// A segment was retransmitted.
    Retransmit = 3,
    /// A duplicate ACK arrived.
    DupAck = 4,
    /// A window reduction was undone (Linux 2.4 `tcp_undo_cwr`: `conn::undo`).
    Undo = 5,
}

impl TcpEventKind {
    /// Every kind, in code order.
    pub const ALL: [TcpEventKind; 6] = [Self::FastRetransmit, Self::Timeout, Self::RecoveryExit, Self::Retransmit, Self::DupAck, Self::Undo];

    /// Name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::FastRetransmit => "fast_retransmit",
            Self::Timeout => "timeout",
            Self::RecoveryExit => "recovery_exit",
            Self::Retransmit => "retransmit",
            Self::DupAck => "dupack",
            Self::Undo => "undo",
        }
    }
}

/// A trace event: kind and the sequence number it concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpEvent {
    /// What happened.
    pub kind: TcpEventKind,
    /// Sequence number concerned (snd_una for most).
    pub seq: u64,
}

/// Where a measurement fell against the search range it probed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RangeFlag {
    /// Inside the range.
    In = 0,
    /// Above it: no stream saw its delays rise (the estimate is the range's top).
    Above = 1,
    /// Below it: every stream's delays rose from its first gap (the estimate is the bottom).
    Below = 2,
}

impl RangeFlag {
    /// Every flag, in code order.
    pub const ALL: [RangeFlag; 3] = [Self::In, Self::Above, Self::Below];

    /// Name used in traces.
    pub fn name(self) -> &'static str {
        match self {
            Self::In => "in",
            Self::Above => "above",
            Self::Below => "below",
        }
    }
}

/// One result of an inline measurement (ImTCP's available bandwidth, `tcp::imtcp`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measurement {
    /// When the last ACK of the measurement arrived.
    pub at: SimTime,
    /// When its first stream packet left the stage.
    pub start: SimTime,
    /// The estimate, bit/s (IP bytes).
    pub estimate_bps: f64,
    /// Where it fell against the search range.
    pub flag: RangeFlag,
    /// The search range probed, bit/s.
    pub low_bps: f64,
    /// The search range probed, bit/s.
    pub high_bps: f64,
    /// Stream packets whose own ACK timed them (k·N with one ACK per segment).
    pub packets: u32,
}

/// What a call into the connection produced.
#[derive(Debug, Default)]
pub struct Output {
    /// Segments to transmit, in order.
    pub segments: Vec<TcpHeader>,
    /// Trace events.
    pub events: Vec<TcpEvent>,
    /// Set when a call received the peer's FIN in order (the peer closed); whoever reads it
    /// resets it.
    pub peer_fin: bool,
    /// Results of a variant's inline measurement (only from its `on_arrival` and `on_timer`);
    /// the simulation moves them to the `measurements` trace, or drops them, after the call.
    pub measurements: Vec<Measurement>,
}

impl Output {
    /// Empty the lists, keeping their capacity, and reset the flag.
    pub fn clear(&mut self) {
        self.segments.clear();
        self.events.clear();
        self.measurements.clear();
        self.peer_fin = false;
    }
}
