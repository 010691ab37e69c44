//! Observation: taps (pcapng files and the `capture` trace), the queue-occupancy trace, the
//! cwnd trace, the throughput samples and what watched pipes carry (`usage`, the
//! `link_usage` trace). Observers read the network and the flows and write
//! only their own state and the traces; they never change what they observe (the canonical
//! event order makes an observed pipe's event-driven path give the lazy path's results).

use super::usage::LinkUsage;
use crate::flow::{Flow, FlowEngine};
use crate::net::fabric::PipeObserver;
use crate::net::packet::{Body, End, Packet};
use crate::net::pipe::{Pipe, PipeId};
use crate::tcp::cc::{CongestionControl, PROBE_VALUES};
use crate::tcp::Measurement;
use crate::trace::pcap::{PcapWriter, WireIdentity};
use crate::trace::{
    CaptureRow, CcStateRow, CcStateTrace, CwndRow, CwndTrace, MeasurementRow, MeasurementTrace, QueueRow, RttRow, RttTrace, ThroughputRow, ThroughputTrace, Traces,
};
use crate::units::{SimDuration, SimTime};

/// An observation point on one or more pipes: writes pcapng and/or the `capture` trace.
#[derive(Debug)]
pub struct Tap {
    /// Tap name.
    pub name: String,
    /// The pcapng writer, if a file is written.
    pub writer: Option<PcapWriter>,
    /// Also record the `capture` trace.
    pub record_trace: bool,
    /// Timestamp resolution, ps.
    pub resolution_ps: u64,
    /// Packets written.
    pub packets: u64,
}

/// The observers as the fabric sees them.
pub(super) struct PipeView<'a> {
    pub observers: &'a mut Observers,
    pub flows: &'a [Flow],
    pub traces: &'a mut Traces,
}

impl PipeObserver for PipeView<'_> {
    #[inline]
    fn pipe_changed(&mut self, now: SimTime, p: PipeId, pipe: &mut Pipe) {
        self.observers.pipe_changed(now, p, pipe, self.flows, self.traces);
    }
}

/// The observers' per-pipe and per-tap state.
#[derive(Debug, Default)]
pub struct Observers {
    /// Taps.
    pub taps: Vec<Tap>,
    /// Per pipe: the (tap, interface) observing it.
    pipe_taps: Vec<Option<(u32, u32)>>,
    /// Per flow: its addresses and ISNs on the wire.
    pub wire_ids: Vec<WireIdentity>,
    tap_scratch: Vec<(SimTime, Packet)>,
    capture_error: Option<String>,
    /// Per pipe: its index among the summary's queues, if it is one.
    queue_index: Vec<Option<u32>>,
    /// Per pipe: the queue trace follows it.
    queue_traced: Vec<bool>,
    /// Per pipe: the (packets, bytes) last written to the queue trace, if any.
    queue_last: Vec<Option<(u64, u64)>>,
    /// What the watched pipes carry (the `link_usage` trace).
    pub usage: LinkUsage,
}

impl Observers {
    /// A new pipe, reported as the `queue_index`-th queue if it is one.
    pub(super) fn add_pipe(&mut self, queue_index: Option<u32>) {
        self.queue_index.push(queue_index);
        self.queue_traced.push(false);
        self.queue_last.push(None);
        self.pipe_taps.push(None);
        self.usage.add_pipe();
    }

    /// A tap on `pipes` (each with its pcapng interface number).
    pub(super) fn add_tap(&mut self, tap: Tap, pipes: &[(PipeId, u32)], traces: &mut Traces) {
        let t = self.taps.len() as u32;
        if tap.record_trace && traces.capture.is_none() {
            traces.capture = Some(Default::default());
        }
        self.taps.push(tap);
        for &(p, iface) in pipes {
            self.pipe_taps[p.0 as usize] = Some((t, iface));
        }
    }

    /// Follow pipe `p`'s occupancy in the queue trace.
    pub(super) fn trace_queue(&mut self, p: PipeId, traces: &mut Traces) {
        if traces.queue.is_none() {
            traces.queue = Some(Default::default());
        }
        self.queue_traced[p.0 as usize] = true;
    }

    /// The first error writing a capture file, if any (the run goes on without that file).
    pub fn capture_error(&self) -> Option<&str> {
        self.capture_error.as_deref()
    }

    /// Flush every capture file.
    pub(super) fn flush_captures(&mut self) {
        for tap in &mut self.taps {
            if let Some(w) = tap.writer.as_mut() {
                if let Err(e) = w.flush() {
                    self.capture_error.get_or_insert_with(|| format!("tap {}: {e}", tap.name));
                    tap.writer = None;
                }
            }
        }
    }

    /// Pipe `p` (`pipe`) accepted, dropped or sent a packet at `now`: record its occupancy if
    /// traced, and write what its tap saw.
    #[inline]
    pub(super) fn pipe_changed(&mut self, now: SimTime, p: PipeId, pipe: &mut Pipe, flows: &[Flow], traces: &mut Traces) {
        self.trace_queue_len(now, p, pipe, traces);
        if self.pipe_taps[p.0 as usize].is_some() {
            self.drain_tap(p, pipe, flows, traces);
        }
        self.usage.pipe_changed(now, p, pipe);
    }

    fn trace_queue_len(&mut self, now: SimTime, p: PipeId, pipe: &Pipe, traces: &mut Traces) {
        if !self.queue_traced[p.0 as usize] {
            return;
        }
        let (Some(tr), Some(qi)) = (traces.queue.as_mut(), self.queue_index[p.0 as usize]) else { return };
        let (n, b) = pipe.egress().queue_len();
        // Record only changes, per queue (kept per pipe: no search back through the trace).
        let last = &mut self.queue_last[p.0 as usize];
        if *last == Some((n, b)) {
            return;
        }
        *last = Some((n, b));
        tr.push(QueueRow { time_s: now.as_secs_f64(), queue: qi, packets: n, bytes: b });
    }

    fn drain_tap(&mut self, p: PipeId, pipe: &mut Pipe, flows: &[Flow], traces: &mut Traces) {
        let Some((t, iface)) = self.pipe_taps[p.0 as usize] else { return };
        let mut seen = std::mem::take(&mut self.tap_scratch);
        pipe.take_tapped(&mut seen);
        let tap = &mut self.taps[t as usize];
        for (time, pkt) in seen.drain(..) {
            let f = pkt.flow.0 as usize;
            let from = if pkt.to == End::Dst { 0 } else { 1 };
            tap.packets += 1;
            if let Some(w) = tap.writer.as_mut() {
                let mut id = self.wire_ids[f];
                if let FlowEngine::Tcp(tf) = &flows[f].engine {
                    id.wscale = [tf.ends[0].window_shift(), tf.ends[1].window_shift()];
                }
                if let Err(e) = w.write(iface, time, &pkt, from, &id) {
                    self.capture_error.get_or_insert_with(|| format!("tap {}: {e}", tap.name));
                    tap.writer = None;
                }
            }
            if tap.record_trace {
                let tr = traces.capture.as_mut().expect("enabled with the tap");
                let q = time.0 / tap.resolution_ps * tap.resolution_ps;
                let (seq, ack, len, flags, window, sack_blocks, retransmit) = match pkt.body {
                    Body::Tcp(h) => (h.seq, h.ack, h.len, h.flags as u32, h.window, h.sack_count() as u32, h.retransmit as u32),
                    Body::Udp { seq, len } => (seq, 0, len, 0, 0, 0, 0),
                };
                tr.push(CaptureRow {
                    time_s: SimTime(q).as_secs_f64(),
                    tap: t,
                    flow: f as u32,
                    dir: from as u32,
                    seq,
                    ack,
                    len,
                    flags,
                    ip_len: pkt.size,
                    window,
                    sack_blocks,
                    retransmit,
                });
            }
        }
        self.tap_scratch = seen;
    }
}

/// Record flow `f`'s sender window in the cwnd trace if (cwnd, ssthresh) changed.
pub(super) fn record_cwnd(tr: &mut CwndTrace, now: SimTime, f: usize, flow: &mut Flow) {
    let sender = flow.data_sender();
    let FlowEngine::Tcp(t) = &mut flow.engine else { return };
    let c = &t.ends[sender];
    let key = (c.cwnd(), c.ssthresh());
    if key == t.last_cwnd {
        return;
    }
    t.last_cwnd = key;
    tr.push(CwndRow {
        time_s: now.as_secs_f64(),
        flow: f as u32,
        cwnd_bytes: key.0,
        ssthresh_bytes: key.1,
        srtt_s: c.srtt().map_or(0.0, |d| d.as_secs_f64()),
        inflight_bytes: c.inflight(),
    });
}

/// Record flow `f`'s data sender's new RTT sample, if it took one since the last row, in the
/// `rtt` trace (an ACK gives at most one).
pub(super) fn record_rtt(tr: &mut RttTrace, now: SimTime, f: usize, flow: &mut Flow) {
    let sender = flow.data_sender();
    let FlowEngine::Tcp(t) = &mut flow.engine else { return };
    let c = &t.ends[sender];
    let e = c.rtt_estimator();
    if e.samples() == t.last_rtt_samples {
        return;
    }
    t.last_rtt_samples = e.samples();
    tr.push(RttRow {
        time_s: now.as_secs_f64(),
        flow: f as u32,
        rtt_s: e.latest().as_secs_f64(),
        srtt_s: e.srtt().map_or(f64::NAN, |d| d.as_secs_f64()),
        rttvar_s: e.rttvar().as_secs_f64(),
        min_rtt_s: e.min_rtt().as_secs_f64(),
        rto_s: c.rto().as_secs_f64(),
        cwnd_bytes: c.cwnd(),
        inflight_bytes: c.inflight(),
    });
}

/// Record flow `f`'s controller state in the `cc_state` trace if its window, recovery or one
/// of its probe values changed (values compared bit for bit, so NaN equals NaN).
pub(super) fn record_cc_state(tr: &mut CcStateTrace, now: SimTime, f: usize, flow: &mut Flow) {
    let sender = flow.data_sender();
    let FlowEngine::Tcp(t) = &mut flow.engine else { return };
    let c = &t.ends[sender];
    let mut v = [f64::NAN; PROBE_VALUES];
    c.controller().probe(&mut v);
    let key = (c.cwnd(), c.in_recovery(), v.map(f64::to_bits));
    if t.last_cc_state.as_ref() == Some(&key) {
        return;
    }
    t.last_cc_state = Some(key);
    let [v0, v1, v2, v3, v4, v5, v6, v7, v8, v9] = v;
    tr.push(CcStateRow { time_s: now.as_secs_f64(), flow: f as u32, cwnd_bytes: key.0, recovery: key.1 as u32, v0, v1, v2, v3, v4, v5, v6, v7, v8, v9 });
}

/// One throughput bin ending at `now`: every flow's bytes delivered since the last bin.
pub(super) fn sample_throughput(tr: &mut ThroughputTrace, now: SimTime, interval: SimDuration, flows: &mut [Flow]) {
    for (i, flow) in flows.iter_mut().enumerate() {
        let d = flow.delivered();
        let bytes = d - flow.last_sample_bytes;
        flow.last_sample_bytes = d;
        tr.push(ThroughputRow { time_s: now.as_secs_f64(), flow: i as u32, bytes, bps: bytes as f64 * 8.0 / interval.as_secs_f64() });
    }
}

/// Record flow `f`'s inline measurements (`Output::measurements`).
pub(super) fn record_measurements(tr: &mut MeasurementTrace, f: usize, ms: &[Measurement]) {
    for m in ms {
        tr.push(MeasurementRow {
            time_s: m.at.as_secs_f64(),
            flow: f as u32,
            estimate_bps: m.estimate_bps,
            flag: m.flag as u32,
            low_bps: m.low_bps,
            high_bps: m.high_bps,
            packets: m.packets,
            start_s: m.start.as_secs_f64(),
        });
    }
}
