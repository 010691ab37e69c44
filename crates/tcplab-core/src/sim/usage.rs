//! The `link_usage` trace: what watched pipes carry. Each watched pipe keeps its departures
//! with their end of serialization (`Pipe::set_counted`) as soon as that end is known; this
//! observer takes them at every interval's end (a `Sample`-rank event, after everything else
//! at its instant, as the throughput bins; a merge holding packets for a watched pipe admits
//! those that arrived by then first), adds them up per (pipe, flow), and writes one row per
//! pipe and flow with bytes in the interval (t − Δ, t], keeping later ends for later rows.
//! The pipes are not observed packet by packet, so they may still be passed on or merged. It
//! reads the pipes and writes only its own state and the trace, so a run with it gives the
//! results of a run without (`tests/observers.rs`).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::net::pipe::{Pipe, PipeId};
use crate::trace::{LinkUsageRow, LinkUsageTrace};
use crate::units::{SimDuration, SimTime};

/// The IP packet size for which a watched pipe's IP-byte rate is reported, bytes.
pub const PROBE_BYTES: u32 = 1500;

/// The `link_usage` trace's pipes as the run summary reports them.
#[derive(Clone, Debug, Serialize)]
pub struct LinkUsageInfo {
    /// The interval, seconds.
    pub interval_s: f64,
    /// The watched pipes, in trace order.
    pub links: Vec<WatchedPipe>,
}

/// One watched pipe.
#[derive(Clone, Debug, Serialize)]
pub struct WatchedPipe {
    /// Its id in the trace's `pipe` column.
    pub pipe: u32,
    /// Its name (`"a->b"`, `"emu:a->b"`).
    pub name: String,
    /// Its line rate, bit/s (`None`: no rate limit).
    pub rate_bps: Option<u64>,
    /// The IP bytes per second, as bits, it carries when full of `PROBE_BYTES`-byte packets:
    /// the line rate × IP bytes / line bytes of such a packet (its `framing` or AAL5 cells
    /// included), the capacity C the available bandwidth is measured against.
    pub ip_rate_bps: Option<f64>,
}

/// The watched pipes and the bytes they carried in the current interval.
#[derive(Debug, Default)]
pub struct LinkUsage {
    /// Per pipe of the simulation: its index among the watched pipes, if watched.
    index: Vec<Option<u32>>,
    /// The watched pipes, in trace order.
    watched: Vec<PipeId>,
    /// The interval; `None` until the trace is turned on.
    interval: Option<SimDuration>,
    /// IP bytes per (watched index, flow) finished in the current interval.
    bytes: BTreeMap<(u32, u32), u64>,
    /// Departures reported ahead of their end (an ATM port's frames): (end, watched index,
    /// flow, bytes), counted in the interval their end falls in.
    ahead: Vec<(SimTime, u32, u32, u32)>,
    scratch: Vec<(SimTime, crate::net::packet::FlowId, u32)>,
}

impl LinkUsage {
    /// A new pipe of the simulation (not watched).
    pub(super) fn add_pipe(&mut self) {
        self.index.push(None);
    }

    /// Watch pipe `p` (its index in the trace is the number watched before it) and write every
    /// `interval`.
    pub(super) fn watch(&mut self, p: PipeId, interval: SimDuration) {
        assert!(self.index[p.0 as usize].is_none(), "a pipe is watched once");
        self.index[p.0 as usize] = Some(self.watched.len() as u32);
        self.watched.push(p);
        self.interval = Some(interval);
    }

    /// The watched pipes, in trace order.
    pub fn watched(&self) -> &[PipeId] {
        &self.watched
    }

    /// The interval between rows, if the trace is on.
    pub fn interval(&self) -> Option<SimDuration> {
        self.interval
    }

    /// What the summary says of the watched pipes (`None` when the trace is off).
    pub fn describe(&self, pipes: &[Pipe]) -> Option<LinkUsageInfo> {
        let interval = self.interval?;
        let links = self
            .watched
            .iter()
            .enumerate()
            .map(|(i, p)| {
                let pipe = &pipes[p.0 as usize];
                let rate = pipe.egress().rate();
                let line = pipe.link_layer().line_bytes(PROBE_BYTES);
                WatchedPipe {
                    pipe: i as u32,
                    name: pipe.name.clone(),
                    rate_bps: rate.map(|r| r.bps()),
                    ip_rate_bps: rate.map(|r| r.bps() as f64 * PROBE_BYTES as f64 / line as f64),
                }
            })
            .collect();
        Some(LinkUsageInfo { interval_s: interval.as_secs_f64(), links })
    }

    /// Pipe `p` changed at `now`: add up what it finished serializing.
    #[inline]
    pub(super) fn pipe_changed(&mut self, now: SimTime, p: PipeId, pipe: &mut Pipe) {
        let Some(w) = self.index.get(p.0 as usize).copied().flatten() else { return };
        let mut done = std::mem::take(&mut self.scratch);
        pipe.take_departures(&mut done);
        for (end, flow, size) in done.drain(..) {
            if end <= now {
                *self.bytes.entry((w, flow.0)).or_insert(0) += size as u64;
            } else {
                self.ahead.push((end, w, flow.0, size));
            }
        }
        self.scratch = done;
    }

    /// The interval ending at `now`: one row per (pipe, flow) with bytes in it, in pipe and
    /// then flow order; the counts start again from zero.
    pub(super) fn sample(&mut self, now: SimTime, pipes: &mut [Pipe], tr: &mut LinkUsageTrace) {
        for i in 0..self.watched.len() {
            let p = self.watched[i];
            self.pipe_changed(now, p, &mut pipes[p.0 as usize]);
        }
        let bytes = &mut self.bytes;
        self.ahead.retain(|&(end, w, flow, size)| {
            if end <= now {
                *bytes.entry((w, flow)).or_insert(0) += size as u64;
            }
            end > now
        });
        let time_s = now.as_secs_f64();
        for ((pipe, flow), bytes) in std::mem::take(&mut self.bytes) {
            tr.push(LinkUsageRow { time_s, pipe, flow, bytes });
        }
    }
}
