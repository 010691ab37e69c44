//! Flows as the simulation holds them: a TCP connection pair with its sender application, or
//! a UDP CBR source and its sink's counters, with the names and times the summary reports.

use crate::app::{BulkApp, CbrSource};
use crate::net::packet::RouteId;
use crate::tcp::Connection;
use crate::units::SimTime;

/// Descriptive data about a flow, for summaries.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    /// Flow name.
    pub name: String,
    /// Source host name.
    pub src: String,
    /// Destination host name.
    pub dst: String,
    /// `"tcp"` or `"udp-cbr"`.
    pub kind: &'static str,
    /// Congestion controller name (`"none"` for UDP).
    pub cc: &'static str,
    /// Start time.
    pub start: SimTime,
}

/// A TCP flow: both endpoints, the sender's application, and timer bookkeeping.
#[derive(Debug)]
pub struct TcpFlow {
    /// `[source end, destination end]`.
    pub ends: [Connection; 2],
    /// The source's application.
    pub app: BulkApp,
    pub(super) sched: [Option<(SimTime, u32)>; 2],
    pub(super) gen: [u32; 2],
    pub(super) last_cwnd: (u64, u64),
    pub(super) dst_closed: bool,
}

impl TcpFlow {
    /// A flow from its two endpoints and the sender application.
    pub fn new(src: Connection, dst: Connection, app: BulkApp) -> Self {
        TcpFlow { ends: [src, dst], app, sched: [None; 2], gen: [0; 2], last_cwnd: (0, 0), dst_closed: false }
    }
}

/// A UDP constant-bit-rate flow and its sink's counters.
#[derive(Debug)]
pub struct UdpFlow {
    /// The source.
    pub src: CbrSource,
    /// Datagrams received.
    pub received: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
}

/// What runs on a flow.
#[derive(Debug)]
pub enum FlowEngine {
    /// A TCP connection with a bulk sender.
    Tcp(Box<TcpFlow>),
    /// A UDP CBR stream.
    Udp(UdpFlow),
}

/// A flow in the simulation.
#[derive(Debug)]
pub struct Flow {
    /// Names and kind.
    pub info: FlowInfo,
    /// Routes: `[src→dst, dst→src]`.
    pub routes: [RouteId; 2],
    /// Priority class of its packets.
    pub class: u8,
    /// The protocol machinery.
    pub engine: FlowEngine,
    /// When the destination had received everything (TCP: the FIN in order).
    pub finish: Option<SimTime>,
    pub(super) last_sample_bytes: u64,
}

impl Flow {
    /// A flow.
    pub fn new(info: FlowInfo, routes: [RouteId; 2], class: u8, engine: FlowEngine) -> Self {
        Flow { info, routes, class, engine, finish: None, last_sample_bytes: 0 }
    }

    /// Payload bytes delivered in order at the destination.
    pub fn delivered(&self) -> u64 {
        match &self.engine {
            FlowEngine::Tcp(t) => t.ends[1].stats.bytes_delivered,
            FlowEngine::Udp(u) => u.bytes_received,
        }
    }
}
