//! Flows as the simulation holds them (below `sim` and `agent`, which both read them): a TCP connection pair, or a UDP stream's counters, with
//! the names and times the summary reports and the applications that own their ends.

use crate::app::Interest;
use crate::net::packet::RouteId;
use crate::tcp::{Connection, Endpoint, LocalCongestion};
use crate::units::{SimDuration, SimTime};

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
    /// The payload runs from the destination to the source: the source opens the connection
    /// and reads (a block-read client). The summary's sender counters, the cwnd trace and
    /// the delivered bytes then follow the destination end's data.
    pub download: bool,
    /// Background traffic: a run that stops when the flows are done does not wait for it.
    pub background: bool,
}

/// A TCP flow: both endpoints.
#[derive(Debug)]
pub struct TcpFlow {
    /// `[source end, destination end]`.
    pub ends: [Endpoint; 2],
    pub(crate) last_cwnd: (u64, u64),
    /// The last `cc_state` row's window, recovery flag and value bits (`sim::observe`).
    pub(crate) last_cc_state: Option<(u64, bool, [u64; crate::tcp::cc::PROBE_VALUES])>,
    /// The data sender's RTT samples at the last `rtt` row (`sim::observe`).
    pub(crate) last_rtt_samples: u64,
}

impl TcpFlow {
    /// A flow of two standard endpoints.
    pub fn new(src: Connection, dst: Connection) -> Self {
        Self::with_endpoints(Endpoint::new(src), Endpoint::new(dst))
    }

    /// A flow from its two endpoints (each may run a variant).
    pub fn with_endpoints(src: Endpoint, dst: Endpoint) -> Self {
        TcpFlow { ends: [src, dst], last_cwnd: (0, 0), last_cc_state: None, last_rtt_samples: 0 }
    }
}

/// A UDP flow's counters: datagrams and payload bytes sent by its source and received at its
/// destination.
#[derive(Debug, Default)]
pub struct UdpFlow {
    /// Datagrams sent.
    pub sent: u64,
    /// Payload bytes sent.
    pub bytes_sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Payload bytes received.
    pub bytes_received: u64,
}

/// The transport of a flow.
#[derive(Debug)]
pub enum FlowEngine {
    /// A TCP connection.
    Tcp(Box<TcpFlow>),
    /// A UDP stream.
    Udp(UdpFlow),
    /// A finished TCP flow whose connections were released (a flow made at run time, once
    /// both ends closed): what its summary reads.
    Retired(Box<RetiredTcp>),
}

/// What a retired TCP flow keeps of its connections: the data sender's counters and last
/// estimates, the receiver's counters.
#[derive(Clone, Debug)]
pub struct RetiredTcp {
    /// The data sender's counters.
    pub sender: crate::tcp::ConnStats,
    /// The data receiver's counters.
    pub receiver: crate::tcp::ConnStats,
    /// The sender's smoothed RTT at the end.
    pub srtt: Option<SimDuration>,
    /// The sender's window at the end, bytes.
    pub cwnd: u64,
    /// ECN was negotiated.
    pub ecn: bool,
    /// The receiver's variant's actions.
    pub requests: u64,
    /// The names of the sender's controller's `cc_state` values.
    pub probe_names: &'static [&'static str],
    /// The sender's RTT samples, summarised.
    pub rtt: RttFigures,
}

/// A data sender's RTT samples summarised (the run summary's `rtt_*` fields), seconds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RttFigures {
    /// Samples taken.
    pub samples: u64,
    /// The smallest sample (exact).
    pub min_s: Option<f64>,
    /// The median, nearest rank, within 0.8 % (`histogram::LogHistogram`).
    pub p50_s: Option<f64>,
    /// The 99th percentile, nearest rank, within 0.8 %.
    pub p99_s: Option<f64>,
    /// The largest sample (exact).
    pub max_s: Option<f64>,
}

impl RttFigures {
    /// The figures of the samples in `h` (ps).
    pub fn of(h: &crate::histogram::LogHistogram) -> RttFigures {
        let s = |ps: f64| ps / crate::units::PS_PER_SEC as f64;
        RttFigures { samples: h.len(), min_s: h.min().map(|v| s(v as f64)), p50_s: h.quantile(0.5).map(s), p99_s: h.quantile(0.99).map(s), max_s: h.max().map(|v| s(v as f64)) }
    }
}

impl RetiredTcp {
    /// Keep what the summary reads of `t` (its data sent by end `sender`).
    pub fn of(t: &TcpFlow, sender: usize) -> RetiredTcp {
        use crate::tcp::cc::CongestionControl;
        let (tx, rx) = (&t.ends[sender], &t.ends[1 - sender]);
        RetiredTcp {
            sender: tx.stats,
            receiver: rx.stats,
            srtt: tx.srtt(),
            cwnd: tx.cwnd(),
            ecn: tx.ecn_negotiated(),
            requests: rx.variant_actions(),
            probe_names: tx.controller().probe_names(),
            rtt: RttFigures::of(tx.rtt_estimator().histogram()),
        }
    }
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
    /// When the transfer was complete (an application said so: a TCP sink once the FIN
    /// arrived in order, a CBR source after its last datagram).
    pub finish: Option<SimTime>,
    /// The application owning each end (`[source, destination]`; `NO_APP` for none) and the
    /// socket notices it needs.
    pub(crate) owners: [(u32, Interest); 2],
    pub(crate) last_sample_bytes: u64,
    /// Per end: its host's interface queue is asked before each segment goes and refused
    /// segments are given back (`tcp.local_congestion = "cwr"`, an end without a variant).
    pub(crate) local_cwr: [bool; 2],
    /// One-way delays of the packets that reached the data's receiver.
    pub delay: OneWayDelay,
    /// The least time its transfer could take on an empty network (a transfer of known size;
    /// `scenario::build::workload::ideal_fct`): the flow-completion time's yardstick.
    pub ideal_fct: Option<SimDuration>,
    /// Release the connections once the flow has finished and both ends are closed (flows
    /// made at run time).
    pub retirable: bool,
    /// Packets each end has sent, mod 2¹⁶ (`Packet::ip_id`).
    pub(crate) ip_ids: [u16; 2],
}

/// One-way delays of a flow's packets in one direction, as ns-3's FlowMonitor keeps them:
/// their sum, extremes and the sum of the differences between consecutive arrivals' delays.
#[derive(Clone, Copy, Debug, Default)]
pub struct OneWayDelay {
    /// Packets counted.
    pub packets: u64,
    /// Sum of their delays, ps.
    pub sum_ps: u128,
    /// Smallest delay.
    pub min: SimDuration,
    /// Largest delay.
    pub max: SimDuration,
    /// Sum of |delay − previous arrival's delay|, ps.
    pub jitter_sum_ps: u128,
    last: SimDuration,
}

impl OneWayDelay {
    /// A packet that left its host at `created` arrived at `now`.
    #[inline(always)]
    pub fn arrived(&mut self, created: SimTime, now: SimTime) {
        let d = now.since(created);
        if self.packets == 0 {
            self.min = d;
        } else {
            self.min = self.min.min(d);
            self.jitter_sum_ps += d.as_ps().abs_diff(self.last.as_ps()) as u128;
        }
        self.max = self.max.max(d);
        self.sum_ps += d.as_ps() as u128;
        self.last = d;
        self.packets += 1;
    }

    /// Mean delay (none before a packet arrived).
    pub fn mean(&self) -> Option<SimDuration> {
        (self.packets > 0).then(|| SimDuration((self.sum_ps / self.packets as u128) as u64))
    }

    /// Mean absolute delay variation between consecutive arrivals (none before two arrived).
    pub fn jitter(&self) -> Option<SimDuration> {
        (self.packets > 1).then(|| SimDuration((self.jitter_sum_ps / (self.packets - 1) as u128) as u64))
    }
}

/// An end no application owns.
pub(crate) const NO_APP: u32 = u32::MAX;

impl Flow {
    /// A flow (its ends owned by no application yet; see `Simulation::add_app`).
    pub fn new(info: FlowInfo, routes: [RouteId; 2], class: u8, engine: FlowEngine) -> Self {
        let local_cwr = match &engine {
            FlowEngine::Tcp(t) => [0, 1].map(|e| t.ends[e].config().local_congestion == LocalCongestion::Cwr && !t.ends[e].has_variant()),
            FlowEngine::Udp(_) | FlowEngine::Retired(_) => [false; 2],
        };
        Flow {
            info,
            routes,
            class,
            engine,
            finish: None,
            owners: [(NO_APP, Interest::Nothing); 2],
            last_sample_bytes: 0,
            local_cwr,
            delay: OneWayDelay::default(),
            ideal_fct: None,
            retirable: false,
            ip_ids: [0; 2],
        }
    }

    /// The IP identification count for end `e`'s next packet (`Packet::ip_id`).
    #[inline(always)]
    pub(crate) fn next_ip_id(&mut self, e: usize) -> u16 {
        let id = self.ip_ids[e];
        self.ip_ids[e] = id.wrapping_add(1);
        id
    }

    /// The end whose payload the flow's results count (0 normally, 1 for a download).
    #[inline(always)]
    pub fn data_sender(&self) -> usize {
        self.info.download as usize
    }

    /// Payload bytes delivered in order at the receiving end of its data.
    pub fn delivered(&self) -> u64 {
        match &self.engine {
            FlowEngine::Tcp(t) => t.ends[1 - self.data_sender()].stats.bytes_delivered,
            FlowEngine::Udp(u) => u.bytes_received,
            FlowEngine::Retired(r) => r.receiver.bytes_delivered,
        }
    }
}
