//! ImTCP's inline available-bandwidth measurement (study 003): an output stage between TCP
//! and the wire (`Variant::on_departure` holds, its own timer releases) that spaces some of
//! the data segments TCP produced into probing streams and reads the available bandwidth from
//! their ACKs' times (`on_arrival`). No packet is added or dropped: the stage only delays.
//!
//! Steps M0–M9 follow dev/p3/EVIDENCE.md §3; each function says which step it is and whether
//! the slides state it (`[S]`, with its place in the seed) or it is an `ASSUMPTION(p3)` with
//! its source. Rates are in bit/s of IP bytes; times in `SimTime` (ps).

use std::collections::VecDeque;

use crate::net::packet::{flags, TcpHeader};
use crate::tcp::cc::{CcInput, InRange};
use crate::tcp::conn::{Connection, Measurement, Output, RangeFlag};
use crate::tcp::endpoint::{Arrival, Variant};
use crate::tcp::{HostClock, ReleaseLog};
use crate::units::{BitRate, SimDuration, SimTime, PS_PER_SEC};

/// The fewest packets a rise must span to be judged (M5): 4, i.e. 3 gaps. ASSUMPTION(p3):
/// Pathload judges no fewer than 5 (`MIN_PARTITIONED_STREAM_LEN`), which at N = 10 would hide
/// any crossing in a stream's upper half; below 4, one late jitter reads as a rise.
const MIN_RISE: usize = 4;

/// How 「95% 信頼区間」 is read (M7).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CiReading {
    /// The CI of the mean: μ ± 1.96·s/√q.
    Mean,
    /// The 95 % band of the results: μ ± 1.96·s.
    Band,
}

/// Where the first search range comes from (M1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Initial {
    /// A back-to-back train of N segments; its ACK dispersion rate R gives [R/2, R].
    Train,
    /// A known link rate C (bit/s): [C/10, C] (0 cannot be probed: its gap is infinite).
    Link(f64),
}

/// When a planned release time is put on the host's tick grid (M3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Release {
    /// The first tick at or after it.
    NextTick,
    /// The nearest tick.
    NearestTick,
}

/// How a stream's delays are read as "increasing" (M5). Both test the delays from the onset
/// (`ImtcpStage::stream_result`) with the thresholds of `Trend`; they differ in two steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TrendRule {
    /// Pathload 1.3.2 as written (`pathload_rcv_func.c`): S_PCT is the share of all
    /// consecutive pairs that rise (a tie counts as not rising), and the stream is increasing
    /// when both statistics say so, or one does and the other is unclear.
    Pathload,
    /// Pathload 1.3.2's combination, with each tie in S_PCT counted as half a rise: what
    /// Pathload's rule reads, on average, on a testbed, whose clock noise (interrupts, NIC
    /// coalescing, µs timestamps) breaks two equal delays either way at random. ASSUMPTION(p3):
    /// the simulator's clock gives equal packets behind equal queues exactly equal delays,
    /// which Pathload as written reads as "not rising" (the default: the testbed's reading).
    TiesSplit,
    /// ASSUMPTION(p3), a departure from Pathload made after its rule read CBR cross traffic as
    /// no trend: S_PCT counts only pairs whose delays differ (rises / (rises + falls); 0.5 when
    /// none do) — the simulator's clock gives equal packets behind equal queues exactly equal
    /// delays, which a testbed's clock never does — and S_PDT decides, S_PCT only breaking
    /// its "unclear".
    TiesExcluded,
}

/// Pathload's trend thresholds (M5): a statistic above `high` says "increasing", below `low`
/// "no trend", between them "unclear"; and the rule that combines them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trend {
    /// The rule (default `TiesSplit`).
    pub rule: TrendRule,
    /// PCT above this: increasing (default 0.605 = 1.1 × 0.55).
    pub pct_high: f64,
    /// PCT below this: no trend (default 0.495 = 0.9 × 0.55).
    pub pct_low: f64,
    /// PDT above this: increasing (default 0.44 = 1.1 × 0.4).
    pub pdt_high: f64,
    /// PDT below this: no trend (default 0.36 = 0.9 × 0.4).
    pub pdt_low: f64,
}

impl Default for Trend {
    /// ASSUMPTION(p3): Pathload 1.3.2's receiver (Jain & Dovrolis; `pathload_rcv.h` v1.72:
    /// PCT_THRESHOLD .55, PDT_THRESHOLD .4; `pathload_rcv_func.c` get_pct_trend/get_pdt_trend:
    /// increasing above 1.1×, no trend below 0.9× the threshold), read in the code index
    /// (y-kzm/pathload_1.3.2_v6). The paper's own values were not readable here.
    fn default() -> Self {
        Trend { rule: TrendRule::TiesSplit, pct_high: 0.605, pct_low: 0.495, pdt_high: 0.44, pdt_low: 0.36 }
    }
}

/// The stage's parameters (`[….tcp.imtcp]`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ImtcpConfig {
    /// Streams per measurement, k (default 4, [S] S7 L123).
    pub streams: u32,
    /// Packets per stream, N ≥ 2 (default 10, [S] S7 L123).
    pub packets: u32,
    /// Results in the confidence interval, q ≥ 2 (default 8).
    pub history: u32,
    /// The CI's reading (default `Mean`).
    pub ci: CiReading,
    /// The narrowest range, a fraction of μ in (0, 1] (default 0.1).
    pub min_width: f64,
    /// The first range (default `Train`).
    pub initial: Initial,
    /// Keep the first range for the whole run instead of M7/M8's moves (default false; the
    /// ablation of S3 L40–L41).
    pub fixed_range: bool,
    /// Trend thresholds.
    pub trend: Trend,
    /// Grid placement (default `NextTick`).
    pub release: Release,
}

impl Default for ImtcpConfig {
    fn default() -> Self {
        ImtcpConfig {
            streams: 4,
            packets: 10,
            history: 8,
            ci: CiReading::Mean,
            min_width: 0.1,
            initial: Initial::Train,
            fixed_range: false,
            trend: Trend::default(),
            release: Release::NextTick,
        }
    }
}

/// A segment the stage holds, with its release time once planned.
#[derive(Clone, Copy, Debug)]
struct Held {
    seg: TcpHeader,
    release: Option<SimTime>,
    /// Its index in the probe, if it is a probe packet.
    probe: Option<u16>,
}

/// One packet of a probe (a train or a stream).
#[derive(Clone, Copy, Debug)]
struct ProbePkt {
    end: u64,
    bits: f64,
    sent: Option<SimTime>,
    acked: Option<SimTime>,
    /// Its ACK covered no earlier probe packet.
    own_ack: bool,
}

/// What the probe is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Train,
    Stream(u32),
}

#[derive(Clone, Debug)]
struct Probe {
    kind: Kind,
    pkts: Vec<ProbePkt>,
    /// Planned rates of its gaps (a stream's N−1), bit/s.
    rates: Vec<f64>,
    /// When collecting began (`None` once its release times are planned).
    collecting_since: Option<SimTime>,
}

/// What one stream showed (M5).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StreamResult {
    /// No increasing trend: A is at least its top rate (bit/s).
    NoRise { top: f64 },
    /// Delays rose from one gap on: A lies between `below`, the actual rate of the gap before
    /// it (`None` when it is the stream's first), and `above`, that gap's actual rate (bit/s).
    Rise { below: Option<f64>, above: f64 },
}

/// ImTCP's sender-side stage. The receiving end needs no policy (one ACK per segment:
/// `delayed_ack` is checked when the scenario is resolved, M9).
#[derive(Debug)]
pub struct ImtcpStage {
    cfg: ImtcpConfig,
    held: VecDeque<Held>,
    probe: Option<Probe>,
    /// The current measurement's stream results and its first release time.
    streams: Vec<StreamResult>,
    started: Option<SimTime>,
    /// The search range [low, high], bit/s (`None` until the train's ACKs are in).
    range: Option<(f64, f64)>,
    /// Recent in-range estimates (at most q).
    history: VecDeque<f64>,
    /// Highest ACK number seen (duplicate-ACK detection).
    last_ack: u64,
    /// Stream packets of the current measurement timed by their own ACK.
    own_acks: u32,
    /// When a collecting probe gives up: the first tick half an RTO after it began.
    collect_until: SimTime,
    /// Results published; measurements voided by a loss.
    published: u64,
    voided: u64,
    /// Release times of the data segments out, for the RTT samples the stage publishes.
    releases: ReleaseLog,
}

impl ImtcpStage {
    /// A stage with these parameters.
    pub fn new(cfg: ImtcpConfig) -> Self {
        let range = match cfg.initial {
            Initial::Link(c) => Some((c / 10.0, c)),
            Initial::Train => None,
        };
        ImtcpStage {
            cfg,
            held: VecDeque::new(),
            probe: None,
            streams: Vec::new(),
            started: None,
            range,
            history: VecDeque::new(),
            last_ack: 0,
            own_acks: 0,
            collect_until: SimTime::ZERO,
            published: 0,
            voided: 0,
            releases: ReleaseLog::new(),
        }
    }

    /// The current search range, bit/s.
    pub fn range(&self) -> Option<(f64, f64)> {
        self.range
    }

    /// Measurements voided by a loss (or a duplicate ACK) inside a stream.
    pub fn voided(&self) -> u64 {
        self.voided
    }

    /// Segments held now.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// M0 [S] S5 L80–L84: 「TCP プロトコル処理が終了したパケットを格納する」 and hand them to IP
    /// at the algorithm's times. New data may join a probe; everything else — and new data
    /// when no probe is collecting — passes at once unless something is held, in which case
    /// it waits behind it (the stage never reorders a flow; ASSUMPTION(p3), EVIDENCE §3
    /// "Open inside the algorithm": retransmissions, SYN/FIN and pure ACKs never probe).
    fn take(&mut self, now: SimTime, conn: &Connection, seg: TcpHeader, out: &mut Output) {
        let new_data = seg.len > 0 && !seg.retransmit && !seg.has(flags::SYN) && !seg.has(flags::FIN);
        if seg.retransmit && self.probe.is_some() {
            self.void(now, conn.host_clock()); // A retransmission while a probe is out.
        }
        let collecting = self.probe.as_ref().is_some_and(|p| p.collecting_since.is_some());
        if collecting && !new_data && (seg.has(flags::FIN) || seg.retransmit) {
            self.abandon(now, conn.host_clock());
        }
        if new_data && self.held.is_empty() && self.probe.is_none() && self.may_start(conn) {
            // ASSUMPTION(p3): a probe that has not gathered its N segments within half an RTO
            // gives up (its segments count as in flight: the RTO must not expire on them).
            self.collect_until = conn.host_clock().next_tick_at_or_after(now + SimDuration(conn.rto().as_ps() / 2));
            self.probe = Some(Probe { kind: self.next_kind(), pkts: Vec::new(), rates: Vec::new(), collecting_since: Some(now) });
        }
        match self.probe.as_mut() {
            Some(p) if p.collecting_since.is_some() && new_data && (p.pkts.len() as u32) < self.cfg.packets => {
                p.pkts.push(ProbePkt { end: seg.seq + seg.len as u64, bits: seg.ip_len() as f64 * 8.0, sent: None, acked: None, own_ack: true });
                let i = p.pkts.len() as u16 - 1;
                self.held.push_back(Held { seg, release: None, probe: Some(i) });
                if p.pkts.len() as u32 == self.cfg.packets {
                    self.plan(now, conn.host_clock());
                }
            }
            _ if self.held.is_empty() => {
                self.releases.on_release(now, &seg);
                out.segments.push(seg);
            }
            _ => {
                let release = self.held.back().and_then(|h| h.release).map(|r| r.max(now));
                self.held.push_back(Held { seg, release, probe: None });
            }
        }
    }

    /// M4 ASSUMPTION(p3) (algorithms.md §4.2 step 2; [CC06] "intervals as short as some
    /// RTTs"): a probe starts only in the Open state (no duplicate ACK, recovery or timeout
    /// repair under way: `linux_ca_state` 0), when the congestion and the peer's
    /// windows both let N segments go, and after the previous probe's ACKs are all in (one
    /// stream per RTT).
    fn may_start(&self, conn: &Connection) -> bool {
        let n = self.cfg.packets as u64 * conn.smss() as u64;
        conn.linux_ca_state() == 0 && conn.cwnd() >= n && conn.snd_wnd() >= n
    }

    /// M1: the train first (ASSUMPTION(p3), algorithms.md §4.2 step 1, the Cprobe idea), then
    /// the streams of each measurement in turn.
    fn next_kind(&self) -> Kind {
        match self.range {
            None => Kind::Train,
            Some(_) => Kind::Stream(self.streams.len() as u32),
        }
    }

    /// M2 [S] k and N (S7 L123 「1 回の計測あたりのストリーム数 : 4, 1 ストリームあたりのパケット数 :
    /// 10」); ASSUMPTION(p3) (algorithms.md §4.2 step 2): the range split into k equal
    /// sub-ranges, stream i's N−1 gaps at rates rising linearly across sub-range i.
    pub fn stream_rates(range: (f64, f64), streams: u32, packets: u32, i: u32) -> Vec<f64> {
        let w = (range.1 - range.0) / streams as f64;
        let (lo, hi) = (range.0 + w * i as f64, range.0 + w * (i + 1) as f64);
        let gaps = packets.saturating_sub(1) as usize;
        if gaps <= 1 {
            return vec![(lo + hi) / 2.0; gaps];
        }
        (0..gaps).map(|j| lo + (hi - lo) * j as f64 / (gaps - 1) as f64).collect()
    }

    /// M3 [S] the HZ dependence (S6 L93–L96 「FreeBSD 4.10 では HZ パラメータの値によって粒度を変更
    /// できる」); ASSUMPTION(p3) "next tick" (default) or "nearest tick": the probe's release times
    /// on the host's 1/HZ grid, planned from the first tick at or after `now` and the gaps of
    /// M2 (a train's all on that tick), never two stream packets on one tick, never before
    /// the packet ahead of them.
    fn plan(&mut self, now: SimTime, clock: HostClock) {
        let (range, k, n) = (self.range, self.cfg.streams, self.cfg.packets);
        let Some(p) = self.probe.as_mut() else { return };
        p.collecting_since = None;
        let first = clock.next_tick_at_or_after(now);
        let tick = clock.tick.as_ps();
        if let (Kind::Stream(i), Some(r)) = (p.kind, range) {
            p.rates = Self::stream_rates(r, k, n, i);
        }
        let (mut planned, mut last, mut next_probe) = (first.0 as f64, first, 0usize);
        for h in self.held.iter_mut() {
            let Some(j) = h.probe else {
                h.release = Some(last);
                continue;
            };
            let j = j as usize;
            let at = if j == 0 || p.kind == Kind::Train {
                first
            } else {
                planned += p.pkts[j].bits * PS_PER_SEC as f64 / p.rates[j - 1];
                let t = SimTime(planned.min(u64::MAX as f64 / 2.0) as u64);
                let on = match self.cfg.release {
                    Release::NextTick => clock.next_tick_at_or_after(t),
                    Release::NearestTick => clock.nearest_tick(t),
                };
                on.max(SimTime(last.0 + tick))
            };
            h.release = Some(at.max(last));
            last = at.max(last);
            next_probe = j + 1;
        }
        debug_assert_eq!(next_probe, p.pkts.len());
    }

    /// Give up collecting (a FIN or a retransmission came, or the window never let N
    /// segments go in time): what is held leaves at the next tick, in order (the stage hands
    /// segments on only from its timer, 「カーネルシステムのスケジューリング機能を用いて実現する」
    /// S5 L84); the probe is dropped (the measurement's earlier streams are kept).
    fn abandon(&mut self, now: SimTime, clock: HostClock) {
        self.probe = None;
        let at = clock.next_tick_at_or_after(now);
        for h in self.held.iter_mut() {
            h.release = Some(h.release.map_or(at, |r| r.min(at)));
        }
    }

    /// A loss in the measurement: the probe and the measurement's streams are dropped, what is
    /// held leaves now (ASSUMPTION(p3), EVIDENCE §3 "Open": a loss inside a stream voids it).
    fn void(&mut self, now: SimTime, clock: HostClock) {
        self.voided += 1;
        self.own_acks = 0;
        self.streams.clear();
        self.started = None;
        self.abandon(now, clock);
    }

    /// M0 [S] S5 L86: 「データパケットを IP 層へ渡した時刻」 — release what is due and record
    /// each probe packet's release time.
    fn release_due(&mut self, now: SimTime, out: &mut Output) {
        while self.held.front().is_some_and(|h| h.release.is_some_and(|r| r <= now)) {
            let h = self.held.pop_front().expect("checked");
            if let (Some(j), Some(p)) = (h.probe, self.probe.as_mut()) {
                p.pkts[j as usize].sent = Some(now);
                if j == 0 && p.kind != Kind::Train && self.started.is_none() {
                    self.started = Some(now);
                }
            }
            self.releases.on_release(now, &h.seg);
            out.segments.push(h.seg);
        }
    }

    /// M0 [S] S5 L87: 「IP 層から ACK を受け取った時刻」; M9 [P] [HO14]: an ACK that covers
    /// several probe packets times only the last of them. Every ACK that advances also gives
    /// the controller the stage's own RTT sample (`CcInput::StageRtt`, `tcp::stage_rtt`: from
    /// this stage's release of the newest segment it covers), before the connection sees it;
    /// controllers that do not ask for it ignore it (ImTCP-bg's `rtt_source = "stage"` uses it).
    fn on_ack(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, out: &mut Output) {
        if let Some(rtt) = self.releases.on_ack(now, seg.ack) {
            conn.feed_controller(now, &CcInput::StageRtt { rtt });
        }
        let dup = seg.ack == self.last_ack && seg.len == 0 && !seg.has(flags::SYN | flags::FIN);
        self.last_ack = self.last_ack.max(seg.ack);
        let Some(p) = self.probe.as_mut() else { return };
        let sent_unacked = p.pkts.iter().any(|q| q.sent.is_some() && q.acked.is_none());
        if dup && sent_unacked {
            self.void(now, conn.host_clock()); // A duplicate ACK while probe packets are out.
            return;
        }
        let covered: Vec<usize> = (0..p.pkts.len()).filter(|&j| p.pkts[j].acked.is_none() && p.pkts[j].sent.is_some() && p.pkts[j].end <= seg.ack).collect();
        for (n, &j) in covered.iter().enumerate() {
            p.pkts[j].acked = Some(now);
            p.pkts[j].own_ack = n + 1 == covered.len() && p.pkts[j].own_ack;
        }
        let done = p.collecting_since.is_none() && p.pkts.iter().all(|q| q.acked.is_some());
        if done {
            let p = self.probe.take().expect("checked");
            self.finish(now, conn, p, out);
        }
    }

    /// A probe's ACKs are all in: the train sets the first range (M1); a stream adds its
    /// result (M5), and the k-th stream ends the measurement (M6–M8).
    fn finish(&mut self, now: SimTime, conn: &mut Connection, p: Probe, out: &mut Output) {
        match p.kind {
            Kind::Train => {
                let r = Self::train_rate(&p.pkts).unwrap_or(conn.host_clock().tick.as_secs_f64().recip() * p.pkts[0].bits);
                self.range = Some(self.clamp((r / 2.0, r), p.pkts[0].bits, conn));
            }
            Kind::Stream(_) => {
                let d: Vec<f64> = p.pkts.iter().map(|q| q.acked.expect("done").since(q.sent.expect("done")).as_secs_f64()).collect();
                let rates = Self::actual_rates(&p.pkts);
                self.streams.push(Self::stream_result(&d, &rates, &self.cfg.trend));
                self.own_acks += p.pkts.iter().filter(|q| q.own_ack).count() as u32;
                if self.streams.len() as u32 == self.cfg.streams {
                    let (estimate, flag) = Self::estimate(&self.streams, self.range.expect("streams follow the range"));
                    let range = self.range.expect("streams follow the range");
                    let m = Measurement { at: now, start: self.started.unwrap_or(now), estimate_bps: estimate, flag, low_bps: range.0, high_bps: range.1, packets: self.own_acks };
                    self.next_range(estimate, flag, p.pkts[0].bits, conn);
                    self.streams.clear();
                    self.started = None;
                    self.own_acks = 0;
                    self.publish(now, conn, m, out);
                }
            }
        }
    }

    /// M1's rate: the train's ACK dispersion, Σ bits of packets 2…N / (last ACK − first ACK).
    fn train_rate(pkts: &[ProbePkt]) -> Option<f64> {
        let (first, last) = (pkts.first()?.acked?, pkts.last()?.acked?);
        let dt = last.since(first).as_secs_f64();
        (dt > 0.0).then(|| pkts[1..].iter().map(|q| q.bits).sum::<f64>() / dt)
    }

    /// The rate each gap of a stream actually had on the grid: packet j+1's bits over the
    /// time between the releases of packets j and j+1.
    fn actual_rates(pkts: &[ProbePkt]) -> Vec<f64> {
        pkts.windows(2)
            .map(|w| {
                let dt = w[1].sent.expect("released").since(w[0].sent.expect("released")).as_secs_f64();
                if dt > 0.0 {
                    w[1].bits / dt
                } else {
                    f64::INFINITY
                }
            })
            .collect()
    }

    /// Pathload's statistics of a delay series: S_PCT, the share of consecutive pairs that
    /// rise, and S_PDT, (D_N − D_1) / Σ|D_{j+1} − D_j| (0 for a flat series). With `rule`
    /// `Pathload` S_PCT divides by every pair (a tie is not a rise); `TiesSplit` counts a tie
    /// as half a rise; `TiesExcluded` divides by the pairs whose delays differ (0.5,
    /// "unclear", when none do).
    pub fn pct_pdt(d: &[f64], rule: TrendRule) -> (f64, f64) {
        if d.len() < 2 {
            return (0.5, 0.0);
        }
        let rises = d.windows(2).filter(|w| w[1] > w[0]).count() as f64;
        let falls = d.windows(2).filter(|w| w[1] < w[0]).count() as f64;
        let total: f64 = d.windows(2).map(|w| (w[1] - w[0]).abs()).sum();
        let pdt = if total > 0.0 { (d[d.len() - 1] - d[0]) / total } else { 0.0 };
        let pct = match rule {
            TrendRule::Pathload => rises / (d.len() - 1) as f64,
            TrendRule::TiesSplit => (rises + 0.5 * ((d.len() - 1) as f64 - rises - falls)) / (d.len() - 1) as f64,
            TrendRule::TiesExcluded if rises + falls > 0.0 => rises / (rises + falls),
            TrendRule::TiesExcluded => 0.5,
        };
        (pct, pdt)
    }

    /// M5 ASSUMPTION(p3) (imtcp_pct_high [BSDPAGE]; Pathload lineage): D_j = ACK time −
    /// release time of stream packet j (one-way delay plus the constant return path). The
    /// candidate onset is the last packet whose delay is within 10 % of the stream's delay
    /// span of the lowest delay so far (the point 「where the delays begin to rise」; no ImTCP
    /// text read); the delays from it on (at least `MIN_RISE` packets) must be "increasing" by
    /// Pathload 1.3.2's per-stream rule (`aggregate_trend_result`: PCT and PDT both say so,
    /// or one does and the other is unclear; `TrendRule::TiesExcluded` reads them its own
    /// way). The whole stream is not tested: its rates rise,
    /// so only the part above A rises, and a whole-stream PCT would miss a crossing midway.
    /// A then lies between the rate of the gap before the onset and the onset gap's.
    pub fn stream_result(d: &[f64], rates: &[f64], t: &Trend) -> StreamResult {
        let top = rates.iter().copied().fold(0.0, f64::max);
        let lo = d.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = d.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let tol = 0.1 * (hi - lo);
        let (mut floor, mut onset) = (f64::INFINITY, 0);
        for (j, &x) in d.iter().enumerate() {
            floor = floor.min(x);
            if x <= floor + tol {
                onset = j;
            }
        }
        if d.len() < onset + MIN_RISE || onset >= rates.len() {
            return StreamResult::NoRise { top };
        }
        let (pct, pdt) = Self::pct_pdt(&d[onset..], t.rule);
        let say = |v: f64, hi: f64, lo: f64| {
            if v > hi {
                1
            } else if v < lo {
                -1
            } else {
                0
            }
        };
        let (a, b) = (say(pct, t.pct_high, t.pct_low), say(pdt, t.pdt_high, t.pdt_low));
        let increasing = match t.rule {
            TrendRule::Pathload | TrendRule::TiesSplit => (a == 1 && b >= 0) || (b == 1 && a >= 0),
            TrendRule::TiesExcluded => b == 1 || (b == 0 && a == 1),
        };
        if !increasing {
            return StreamResult::NoRise { top };
        }
        // Gap `onset` (packets onset → onset + 1) is the first that raised the delay.
        StreamResult::Rise { below: onset.checked_sub(1).map(|g| rates[g]), above: rates[onset] }
    }

    /// M6 ASSUMPTION(p3) (algorithms.md §4.2 step 4): the lowest-rate stream whose delays rose
    /// gives A, between the last rate that did not raise them and the first that did (the
    /// midpoint; at a stream's first gap, the top of the stream below); no rise in any stream
    /// flags "above" (A = the range's top); a rise from the lowest stream's first gap flags
    /// "below" (A = its bottom).
    pub fn estimate(streams: &[StreamResult], range: (f64, f64)) -> (f64, RangeFlag) {
        let mut prev_top: Option<f64> = None;
        for s in streams {
            match *s {
                StreamResult::NoRise { top } => prev_top = Some(top),
                StreamResult::Rise { below: Some(b), above } => return ((b + above.min(2.0 * b)) / 2.0, RangeFlag::In),
                StreamResult::Rise { below: None, above } => {
                    return match prev_top {
                        Some(t) => ((t + above.min(2.0 * t)) / 2.0, RangeFlag::In),
                        None => (range.0, RangeFlag::Below),
                    }
                }
            }
        }
        (range.1, RangeFlag::Above)
    }

    /// M7 [S] S3 L39 「過去の計測結果から 95% 信頼区間を導出し次回の探索区間とする」; ASSUMPTION(p3)
    /// q (`history`), the reading (`ci`) and the floor (`min_width`): after an in-range result
    /// the next range is μ ± h over the last q results, h = 1.96·s/√n ("mean") or 1.96·s
    /// ("band") with n ≤ q results and s their sample deviation (0 for one), and h at least
    /// min_width·μ/2. M8 [S] claim S3 L42–L44 「数回の計測で新たな利用可能帯域を発見できる」;
    /// ASSUMPTION(p3) the rule: a result above (below) the range moves it up (down) by its
    /// width and forgets the history (the old level no longer describes the path).
    /// With `fixed_range` the range never moves (the first one stays).
    fn next_range(&mut self, estimate: f64, flag: RangeFlag, bits: f64, conn: &Connection) {
        if self.cfg.fixed_range {
            return;
        }
        let (lo, hi) = self.range.expect("a measurement follows the range");
        let w = hi - lo;
        let next = match flag {
            RangeFlag::Above => {
                self.history.clear();
                (lo + w, hi + w)
            }
            RangeFlag::Below => {
                self.history.clear();
                ((lo - w).max(lo / 2.0), lo)
            }
            RangeFlag::In => {
                self.history.push_back(estimate);
                while self.history.len() > self.cfg.history as usize {
                    self.history.pop_front();
                }
                Self::ci_range(self.history.make_contiguous(), self.cfg.ci, self.cfg.min_width)
            }
        };
        self.range = Some(self.clamp(next, bits, conn));
    }

    /// M7's range from results `r` (see `next_range`).
    pub fn ci_range(r: &[f64], ci: CiReading, min_width: f64) -> (f64, f64) {
        let n = r.len() as f64;
        let mu = r.iter().sum::<f64>() / n;
        let s = if r.len() > 1 { (r.iter().map(|x| (x - mu).powi(2)).sum::<f64>() / (n - 1.0)).sqrt() } else { 0.0 };
        let h = match ci {
            CiReading::Mean => 1.96 * s / n.sqrt(),
            CiReading::Band => 1.96 * s,
        };
        let h = h.max(min_width * mu / 2.0);
        ((mu - h).max(min_width * mu / 2.0), mu + h)
    }

    /// Keep a range probe-able: its top at most one packet per tick (§4's R_max = packet bits
    /// × HZ, above which no stream can go), its bottom positive and below the top.
    fn clamp(&self, (lo, hi): (f64, f64), bits: f64, conn: &Connection) -> (f64, f64) {
        let r_max = bits * f64::from(conn.config().hz);
        let hi = hi.min(r_max);
        let lo = lo.min(hi * (1.0 - self.cfg.min_width / 2.0)).max(hi * 1e-3);
        (lo, hi)
    }

    /// Hand a result out: to the data sender's controller as `CcInput::AvailableBandwidth`
    /// (ImTCP-bg takes it; other controllers ignore it) and to the `measurements` trace.
    fn publish(&mut self, now: SimTime, conn: &mut Connection, m: Measurement, out: &mut Output) {
        let range = match m.flag {
            RangeFlag::In => InRange::Within,
            RangeFlag::Above => InRange::Above,
            RangeFlag::Below => InRange::Below,
        };
        let input = CcInput::AvailableBandwidth { rate: BitRate(m.estimate_bps.round() as u64), span: m.at.since(m.start), range };
        conn.feed_controller(now, &input);
        self.published += 1;
        out.measurements.push(m);
    }
}

impl Variant for ImtcpStage {
    fn name(&self) -> &'static str {
        "imtcp"
    }

    fn on_arrival(&mut self, now: SimTime, conn: &mut Connection, seg: &TcpHeader, out: &mut Output) -> Arrival {
        if seg.has(flags::ACK) {
            self.on_ack(now, conn, seg, out);
        }
        Arrival::Deliver
    }

    fn on_departure(&mut self, now: SimTime, conn: &Connection, out: &mut Output, from: usize) {
        let produced: Vec<TcpHeader> = out.segments.drain(from..).collect();
        for seg in produced {
            self.take(now, conn, seg, out);
        }
    }

    fn next_deadline(&self) -> Option<SimTime> {
        match self.held.front().and_then(|h| h.release) {
            Some(r) => Some(r),
            None => self.probe.as_ref().and_then(|p| p.collecting_since).map(|_| self.collect_until),
        }
    }

    fn on_timer(&mut self, now: SimTime, conn: &mut Connection, out: &mut Output) {
        if self.probe.as_ref().and_then(|p| p.collecting_since).is_some() && now >= self.collect_until {
            self.abandon(now, conn.host_clock());
        }
        self.release_due(now, out);
    }

    fn actions(&self) -> u64 {
        self.published
    }
}

#[cfg(test)]
#[path = "imtcp_tests.rs"]
mod tests;
