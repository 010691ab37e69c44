//! The summary of a run: per-flow and per-queue results and the network-wide counters, read
//! from the simulation's state at any moment (the Python layer turns it into DataFrames).

use serde::Serialize;

use super::{PacketCounters, Simulation, StopReason};
use crate::flow::{FlowEngine, RttFigures};
use crate::tcp::TcpEventKind;
use crate::units::SimTime;

/// The summary of `sim`'s run so far.
pub fn summarize(sim: &Simulation) -> RunSummary {
    let now = sim.now();
    let flows = sim
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let end = f.finish.unwrap_or(now);
            let span = end.since(f.info.start).as_secs_f64();
            let delivered = f.delivered();
            let mut s = FlowSummary {
                id: i as u32,
                name: f.info.name.clone(),
                kind: f.info.kind,
                src: f.info.src.clone(),
                dst: f.info.dst.clone(),
                download: f.info.download,
                cc: f.info.cc,
                start_s: f.info.start.as_secs_f64(),
                finish_s: f.finish.map(|t| t.as_secs_f64()),
                bytes_delivered: delivered,
                goodput_bps: if span > 0.0 { delivered as f64 * 8.0 / span } else { 0.0 },
                owd_mean_s: f.delay.mean().map(|d| d.as_secs_f64()),
                owd_min_s: (f.delay.packets > 0).then(|| f.delay.min.as_secs_f64()),
                owd_max_s: (f.delay.packets > 0).then(|| f.delay.max.as_secs_f64()),
                jitter_s: f.delay.jitter().map(|d| d.as_secs_f64()),
                ideal_fct_s: f.ideal_fct.map(|d| d.as_secs_f64()),
                ..FlowSummary::default()
            };
            match &f.engine {
                FlowEngine::Tcp(t) => {
                    let c = &t.ends[f.data_sender()];
                    s.segments_sent = c.stats.segments_sent;
                    s.bytes_sent = c.stats.bytes_sent;
                    s.retransmits = c.stats.retransmits;
                    s.timeouts = c.stats.timeouts;
                    s.fast_retransmits = c.stats.fast_retransmits;
                    s.dupacks_received = c.stats.dupacks_received;
                    s.srtt_s = c.srtt().map(|d| d.as_secs_f64());
                    s.set_rtt(RttFigures::of(c.rtt_estimator().histogram()));
                    s.data_start_s = c.stats.first_write.map(|t| t.as_secs_f64());
                    s.requests = t.ends[1 - f.data_sender()].variant_actions();
                    s.cwnd_bytes = c.cwnd();
                    s.ecn = c.ecn_negotiated();
                    s.ecn_reductions = c.stats.ecn_reductions;
                    s.ce_received = t.ends[1 - f.data_sender()].stats.ce_received;
                }
                FlowEngine::Retired(r) => {
                    s.segments_sent = r.sender.segments_sent;
                    s.bytes_sent = r.sender.bytes_sent;
                    s.retransmits = r.sender.retransmits;
                    s.timeouts = r.sender.timeouts;
                    s.fast_retransmits = r.sender.fast_retransmits;
                    s.dupacks_received = r.sender.dupacks_received;
                    s.srtt_s = r.srtt.map(|d| d.as_secs_f64());
                    s.set_rtt(r.rtt);
                    s.data_start_s = r.sender.first_write.map(|t| t.as_secs_f64());
                    s.requests = r.requests;
                    s.cwnd_bytes = r.cwnd;
                    s.ecn = r.ecn;
                    s.ecn_reductions = r.sender.ecn_reductions;
                    s.ce_received = r.receiver.ce_received;
                }
                FlowEngine::Udp(u) => {
                    s.segments_sent = u.sent;
                    s.bytes_sent = u.bytes_sent;
                    s.packets_received = u.received;
                }
            }
            s
        })
        .collect();
    let queues = sim
        .queue_pipes
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let pipe = &sim.fabric.pipes[p.0 as usize];
            let st = pipe.egress().queue_stats(now);
            let cells = pipe.egress().atm_port().map(|c| c.port.stats).unwrap_or_default();
            let discarded = pipe.egress().atm_port().map_or(0, |c| c.frames_discarded);
            let mean = pipe.egress().occupancy(now).and_then(|o| o.mean(now.since(SimTime::ZERO)));
            QueueSummary {
                id: i as u32,
                name: pipe.name.clone(),
                enqueued: st.enqueued,
                dropped: st.dropped,
                departed: st.departed,
                max_packets: st.max_packets,
                max_bytes: st.max_bytes,
                random_drops: pipe.stats.random_drops,
                marked: st.marked,
                unmarkable_dropped: st.unmarkable_dropped,
                dropped_after_dequeue: st.dropped_after_dequeue,
                cells_dropped: cells.cells_dropped,
                cells_discarded: cells.cells_discarded,
                frames_damaged: cells.frames_damaged,
                frames_discarded: discarded,
                bytes_transmitted: pipe.transmitted_by(now).1,
                mean_waiting_packets: mean.map(|m| m.0),
                mean_waiting_bytes: mean.map(|m| m.1),
            }
        })
        .collect();
    RunSummary {
        sim_time_s: now.as_secs_f64(),
        stop_reason: sim.stop_reason,
        traces_stopped_s: sim.traces.stopped_s(),
        events: sim.events(),
        flows,
        queues,
        packets: sim.packet_counters(),
        messages: sim.answered.as_deref().map(MessageSummary::of),
    }
}

/// The answered requests of a run's request/response flows, all connections together: their
/// completion times (request arrival to the response's last byte) and slowdowns (over the
/// ideal time). Percentiles by nearest rank, exact.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct MessageSummary {
    /// Requests answered.
    pub count: u64,
    /// Mean completion time, s (null before an answer, as every field below).
    pub fct_mean_s: Option<f64>,
    /// Median completion time, s.
    pub fct_p50_s: Option<f64>,
    /// 99th-percentile completion time, s.
    pub fct_p99_s: Option<f64>,
    /// Longest completion time, s.
    pub fct_max_s: Option<f64>,
    /// Mean slowdown.
    pub slowdown_mean: Option<f64>,
    /// Median slowdown.
    pub slowdown_p50: Option<f64>,
    /// 99th-percentile slowdown.
    pub slowdown_p99: Option<f64>,
    /// Largest slowdown.
    pub slowdown_max: Option<f64>,
}

impl MessageSummary {
    /// The figures of (completion time, slowdown) pairs.
    pub fn of(answered: &[(f64, f64)]) -> MessageSummary {
        let stats = |mut v: Vec<f64>| {
            if v.is_empty() {
                return [None; 4];
            }
            v.sort_by(f64::total_cmp);
            let rank = |q: f64| v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1];
            [Some(v.iter().sum::<f64>() / v.len() as f64), Some(rank(0.5)), Some(rank(0.99)), v.last().copied()]
        };
        let [fct_mean_s, fct_p50_s, fct_p99_s, fct_max_s] = stats(answered.iter().map(|a| a.0).collect());
        let [slowdown_mean, slowdown_p50, slowdown_p99, slowdown_max] = stats(answered.iter().map(|a| a.1).collect());
        MessageSummary { count: answered.len() as u64, fct_mean_s, fct_p50_s, fct_p99_s, fct_max_s, slowdown_mean, slowdown_p50, slowdown_p99, slowdown_max }
    }
}

/// Per-flow results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSummary {
    /// Flow id (index).
    pub id: u32,
    /// Name.
    pub name: String,
    /// `"tcp"` or `"udp-cbr"`.
    pub kind: &'static str,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// True when the payload runs from `dst` to `src` (a block read: the source opens the
    /// connection and reads); the sender counters below are then `dst`'s.
    pub download: bool,
    /// Congestion controller (`"none"` for UDP).
    pub cc: &'static str,
    /// Start time, s.
    pub start_s: f64,
    /// Completion time at the receiver, s (null while running).
    pub finish_s: Option<f64>,
    /// When the data's sender first wrote, s (a block-read server: when the first request
    /// arrived; null for UDP and before any write).
    pub data_start_s: Option<f64>,
    /// Payload bytes delivered in order.
    pub bytes_delivered: u64,
    /// bytes_delivered·8 / (finish or now − start).
    pub goodput_bps: f64,
    /// Data segments (UDP: datagrams) sent, retransmissions included.
    pub segments_sent: u64,
    /// Payload bytes sent, retransmissions included.
    pub bytes_sent: u64,
    /// Retransmitted segments, bare FINs included (`segments_sent` counts only segments
    /// with payload).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Fast retransmits.
    pub fast_retransmits: u64,
    /// Duplicate ACKs received by the sender.
    pub dupacks_received: u64,
    /// Final smoothed RTT, s.
    pub srtt_s: Option<f64>,
    /// RTT samples the data's sender took (one per ACK that timed a segment).
    pub rtt_samples: u64,
    /// The smallest RTT sample, s (null before one).
    pub rtt_min_s: Option<f64>,
    /// The median RTT sample, s (nearest rank, within 0.8 %: a log-linear histogram).
    pub rtt_p50_s: Option<f64>,
    /// The 99th-percentile RTT sample, s (as `rtt_p50_s`).
    pub rtt_p99_s: Option<f64>,
    /// The largest RTT sample, s.
    pub rtt_max_s: Option<f64>,
    /// Final congestion window, bytes.
    pub cwnd_bytes: u64,
    /// UDP datagrams received.
    pub packets_received: u64,
    /// Retransmission requests the data's receiver sent (AHTCP; 0 otherwise).
    pub requests: u64,
    /// ECN negotiated (RFC 3168).
    pub ecn: bool,
    /// Mean one-way delay of the packets that reached the data's receiver (data segments,
    /// retransmissions, SYN and FIN; UDP datagrams), from leaving the sender's host to
    /// arriving, s (ns-3 FlowMonitor's delaySum / rxPackets; null before any arrived).
    pub owd_mean_s: Option<f64>,
    /// The smallest of those delays, s.
    pub owd_min_s: Option<f64>,
    /// The largest of those delays, s.
    pub owd_max_s: Option<f64>,
    /// Mean absolute difference between consecutive arrivals' delays, s (FlowMonitor's
    /// jitterSum / (rxPackets − 1); null before two arrived).
    pub jitter_s: Option<f64>,
    /// The least time the transfer could take on an empty network, s (a flow of known size:
    /// the handshake, then every segment back to back; null otherwise). Its flow-completion
    /// time over this is its slowdown.
    pub ideal_fct_s: Option<f64>,
    /// Data segments the data's receiver got marked CE.
    pub ce_received: u64,
    /// Window reductions the data's sender made in answer to ECN-Echo.
    pub ecn_reductions: u64,
}

impl FlowSummary {
    /// Fill the `rtt_*` fields.
    fn set_rtt(&mut self, r: RttFigures) {
        (self.rtt_samples, self.rtt_min_s, self.rtt_p50_s, self.rtt_p99_s, self.rtt_max_s) = (r.samples, r.min_s, r.p50_s, r.p99_s, r.max_s);
    }
}

/// Per-queue results.
#[derive(Clone, Debug, Default, Serialize)]
pub struct QueueSummary {
    /// Queue id (index).
    pub id: u32,
    /// Name, e.g. `"sw->b"`.
    pub name: String,
    /// Packets accepted.
    pub enqueued: u64,
    /// Packets tail-dropped.
    pub dropped: u64,
    /// Packets that left for the wire.
    pub departed: u64,
    /// Largest occupancy, packets.
    pub max_packets: u64,
    /// Largest occupancy, bytes.
    pub max_bytes: u64,
    /// Packets dropped by random loss (emulators).
    pub random_drops: u64,
    /// Packets marked CE (ECN marking by threshold).
    pub marked: u64,
    /// Packets dropped at the marking threshold for not being ECN-capable (in `dropped` too).
    pub unmarkable_dropped: u64,
    /// Packets the queue's discipline dropped after queueing them, at the head (in `dropped`
    /// too; an AQM's drops).
    pub dropped_after_dequeue: u64,
    /// ATM port: UBR cells dropped by the full buffer.
    pub cells_dropped: u64,
    /// ATM port: UBR cells dropped by PPD or EPD.
    pub cells_discarded: u64,
    /// ATM port: frames that lost at least one cell.
    pub frames_damaged: u64,
    /// ATM port: frames that left with cells on the line but that AAL5 reassembly at the host
    /// discards (damaged, or merged with one whose end was lost); in `dropped` too.
    pub frames_discarded: u64,
    /// IP bytes transmitted.
    pub bytes_transmitted: u64,
    /// Time-weighted mean of the packets waiting for the transmitter (the one in service
    /// excluded) from 0 to `sim_time_s` (null at an ATM port or a queue-less emulator).
    pub mean_waiting_packets: Option<f64>,
    /// The same in IP bytes.
    pub mean_waiting_bytes: Option<f64>,
}

/// Results of a run (the scenario layer adds version, seed and hash).
#[derive(Clone, Debug, Serialize)]
pub struct RunSummary {
    /// Simulated time reached, s.
    pub sim_time_s: f64,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// The time of the first row a trace did not record because it reached `run.trace_memory`,
    /// s (absent: the traces cover the whole run).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traces_stopped_s: Option<f64>,
    /// Events processed.
    pub events: u64,
    /// Per-flow results.
    pub flows: Vec<FlowSummary>,
    /// Per-queue results.
    pub queues: Vec<QueueSummary>,
    /// Network-wide packet counters.
    pub packets: PacketCounters,
    /// The answered requests (a run with request/response flows; absent otherwise).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<MessageSummary>,
}

/// Names of the event codes used in the `events` trace.
pub fn event_codes() -> Vec<(u32, &'static str)> {
    TcpEventKind::ALL.iter().map(|k| (*k as u32, k.name())).collect()
}

/// Names of the milestone codes used in the `milestones` trace.
pub fn milestone_codes() -> Vec<(u32, &'static str)> {
    crate::app::Milestone::ALL.iter().map(|k| (*k as u32, k.name())).collect()
}
