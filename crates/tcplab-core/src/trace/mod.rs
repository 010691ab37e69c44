//! Typed columnar trace records, and (in `pcap`) the capture writer. Each trace is a set of equal-length columns; recording is a
//! push onto vectors behind a cheap enabled-check at the call site. The Python front turns the
//! columns into DataFrames without per-row objects.

pub mod pcap;

/// One column of values.
#[derive(Clone, Debug, PartialEq)]
pub enum Column<'a> {
    /// 64-bit floats.
    F64(&'a [f64]),
    /// Unsigned 64-bit integers.
    U64(&'a [u64]),
    /// Unsigned 32-bit integers.
    U32(&'a [u32]),
}

impl Column<'_> {
    /// Number of rows.
    pub fn len(&self) -> usize {
        match self {
            Column::F64(v) => v.len(),
            Column::U64(v) => v.len(),
            Column::U32(v) => v.len(),
        }
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Little-endian bytes of the column (for the Python boundary and digests).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match self {
            Column::F64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Column::U64(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
            Column::U32(v) => v.iter().flat_map(|x| x.to_le_bytes()).collect(),
        }
    }

    /// Type name: `"f64"`, `"u64"` or `"u32"`.
    pub fn dtype(&self) -> &'static str {
        match self {
            Column::F64(_) => "f64",
            Column::U64(_) => "u64",
            Column::U32(_) => "u32",
        }
    }
}

impl<'a> From<&'a [f64]> for Column<'a> {
    fn from(v: &'a [f64]) -> Self {
        Column::F64(v)
    }
}

impl<'a> From<&'a [u64]> for Column<'a> {
    fn from(v: &'a [u64]) -> Self {
        Column::U64(v)
    }
}

impl<'a> From<&'a [u32]> for Column<'a> {
    fn from(v: &'a [u32]) -> Self {
        Column::U32(v)
    }
}

/// Declares a trace once: its column struct (one vector per field), its row struct (one value
/// per field, appended by `push`), its table name and its columns in declaration order.
macro_rules! trace {
    ($(#[$doc:meta])* $name:ident, $row:ident = $table:literal {
        $($(#[$fdoc:meta])* $field:ident : $ty:ty),+ $(,)?
    }) => {
        $(#[$doc])*
        #[derive(Clone, Debug, Default)]
        pub struct $name {
            $($(#[$fdoc])* pub $field: Vec<$ty>,)+
            /// Rows it may hold (0: no limit); beyond, `push` records nothing more.
            pub max_rows: usize,
            /// The time of the first row it did not record (it reached `max_rows`).
            pub stopped_s: Option<f64>,
        }

        #[doc = concat!("One row of `", stringify!($name), "`.")]
        #[derive(Clone, Copy, Debug, PartialEq)]
        pub struct $row {
            $($(#[$fdoc])* pub $field: $ty,)+
        }

        impl $name {
            /// The trace's table name.
            pub const NAME: &'static str = $table;

            /// Bytes one row takes in the columns.
            pub const ROW_BYTES: usize = 0 $(+ std::mem::size_of::<$ty>())+;

            /// Append one row (every column grows by one).
            #[inline]
            pub fn push(&mut self, r: $row) {
                if self.max_rows != 0 {
                    let len = self.time_s.len();
                    if len >= self.max_rows {
                        self.stopped_s.get_or_insert(r.time_s);
                        return;
                    }
                    if len == self.time_s.capacity() {
                        // Grow by doubling, but never past the limit.
                        let room = (self.max_rows - len).min(len.max(4));
                        $(self.$field.reserve_exact(room);)+
                    }
                }
                $(self.$field.push(r.$field);)+
            }

            /// Heap bytes its columns hold (their capacity).
            pub fn heap_bytes(&self) -> u64 {
                0 $(+ (self.$field.capacity() * std::mem::size_of::<$ty>()) as u64)+
            }

            /// The columns, named, in declaration order.
            pub fn columns(&self) -> Vec<(&'static str, Column<'_>)> {
                vec![$((stringify!($field), Column::from(&self.$field[..])),)+]
            }
        }
    };
}

trace! {
    /// Per-flow delivered bytes per fixed interval.
    ThroughputTrace, ThroughputRow = "throughput" {
        /// End of the bin, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// Payload bytes delivered in order during the bin.
        bytes: u64,
        /// bytes·8 / bin length.
        bps: f64,
    }
}

trace! {
    /// Sender window state, recorded whenever cwnd or ssthresh changes.
    CwndTrace, CwndRow = "cwnd" {
        /// Time, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// Congestion window, bytes.
        cwnd_bytes: u64,
        /// Slow-start threshold, bytes (u64::MAX = unlimited).
        ssthresh_bytes: u64,
        /// Smoothed RTT, seconds (0 before the first sample).
        srtt_s: f64,
        /// Bytes in flight as the sender counts them.
        inflight_bytes: u64,
    }
}

trace! {
    /// Queue occupancy, recorded whenever it changes.
    QueueTrace, QueueRow = "queue" {
        /// Time, seconds.
        time_s: f64,
        /// Queue id (index in the summary's queue list).
        queue: u32,
        /// Packets waiting (the one in service excluded).
        packets: u64,
        /// Bytes waiting.
        bytes: u64,
    }
}

trace! {
    /// TCP events (fast retransmit, timeout, recovery exit, retransmission, duplicate ACK).
    EventTrace, EventRow = "events" {
        /// Time, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// Which end's sender: 0 = the flow's data sender, 1 = the other end (the replies of
        /// a two-way application: iSCSI responses and R2Ts, requests).
        end: u32,
        /// Event code (`TcpEventKind as u32`).
        kind: u32,
        /// Sequence number concerned (that end's own sequence space).
        seq: u64,
    }
}

trace! {
    /// Every packet seen by taps that record a trace (the columnar twin of the pcapng file).
    CaptureTrace, CaptureRow = "capture" {
        /// Time the first bit went on the wire at the tap, seconds (rounded to the resolution).
        time_s: f64,
        /// Tap id (order in the scenario).
        tap: u32,
        /// Flow id.
        flow: u32,
        /// 0 = data direction (source → destination), 1 = reverse.
        dir: u32,
        /// Relative sequence number (first data byte = 1; datagram index for UDP).
        seq: u64,
        /// Relative acknowledgment number.
        ack: u64,
        /// Payload bytes.
        len: u32,
        /// TCP flag bits.
        flags: u32,
        /// IP packet length.
        ip_len: u32,
        /// Advertised window, bytes (after scaling).
        window: u64,
        /// Number of SACK blocks.
        sack_blocks: u32,
        /// 1 if the simulator sent this segment as a retransmission.
        retransmit: u32,
    }
}

trace! {
    /// Application milestones: a transfer written, received or sent in full (later studies: a
    /// block read, a request answered), each with the bytes it concerns.
    MilestoneTrace, MilestoneRow = "milestones" {
        /// Time, seconds.
        time_s: f64,
        /// Application id (order of creation).
        app: u32,
        /// Flow of the socket concerned.
        flow: u32,
        /// Milestone code (`app::Milestone as u32`).
        kind: u32,
        /// Bytes (or datagrams, for `sent`) the milestone concerns.
        bytes: u64,
    }
}

trace! {
    /// Answered requests of request/response clients (`kind = "request-response"` flows;
    /// recorded whenever a scenario has one): one row per message, at its answer's last byte.
    MessageTrace, MessageRow = "messages" {
        /// When the response's last byte arrived in order at the client, seconds.
        time_s: f64,
        /// Flow (connection) id.
        flow: u32,
        /// The request's number on its connection, from 0.
        id: u64,
        /// Request payload bytes.
        request_bytes: u64,
        /// Response payload bytes.
        response_bytes: u64,
        /// When the request arrived at the client, seconds.
        issued_s: f64,
        /// time_s − issued_s: the message's completion time, seconds.
        fct_s: f64,
        /// The least time it could take on an empty network, seconds: the request's segments
        /// back to back across the path, then the response's back (no handshake).
        ideal_s: f64,
    }
}

trace! {
    /// What watched pipes carried (`trace.link_usage`): per pipe and per flow, the IP bytes
    /// whose serialization on the pipe ended in each interval. One row per pipe and flow that
    /// had bytes in the interval; an interval with none has no row.
    LinkUsageTrace, LinkUsageRow = "link_usage" {
        /// End of the interval, seconds (it covers (time_s − interval, time_s], as the
        /// throughput bins).
        time_s: f64,
        /// Watched pipe: its index in `trace.link_usage.links` (for `"all"`: every link
        /// direction, then every emulator direction, in the order the network is built).
        pipe: u32,
        /// Flow id.
        flow: u32,
        /// IP bytes of the flow that finished serialization on the pipe in the interval.
        bytes: u64,
    }
}

trace! {
    /// Inline measurements (`trace.measurements`): one row per result of a variant's
    /// measurement stage (ImTCP's available bandwidth).
    MeasurementTrace, MeasurementRow = "measurements" {
        /// When the measurement's last ACK arrived, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// The estimate, bit/s (IP bytes).
        estimate_bps: f64,
        /// Against the search range: 0 in, 1 above, 2 below (`RangeFlag as u32`).
        flag: u32,
        /// The search range probed, bit/s.
        low_bps: f64,
        /// The search range probed, bit/s.
        high_bps: f64,
        /// Stream packets timed by an ACK of their own.
        packets: u32,
        /// When the measurement's first stream packet left, seconds: it spans
        /// [start_s, time_s].
        start_s: f64,
    }
}

trace! {
    /// RTT samples (`trace.rtt`, as Linux's `tcp_probe`): a row for every ACK that gave the
    /// data sender an RTT sample, with the estimator and window after it.
    RttTrace, RttRow = "rtt" {
        /// Time, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// The sample, seconds.
        rtt_s: f64,
        /// Smoothed RTT after it, seconds.
        srtt_s: f64,
        /// RTT variation after it, seconds (RFC 6298 RTTVAR, or Linux's `rttvar`).
        rttvar_s: f64,
        /// Smallest sample so far, seconds.
        min_rtt_s: f64,
        /// Retransmission timeout after it, seconds.
        rto_s: f64,
        /// Congestion window, bytes.
        cwnd_bytes: u64,
        /// Bytes in flight.
        inflight_bytes: u64,
    }
}

trace! {
    /// Controller state (`trace.cc_state`): a row whenever a flow's window or one of its
    /// controller's state values changes (`CongestionControl::probe`). The values are
    /// `v0`…`v9`; the run summary's `cc_state` names each flow's (a controller that shows
    /// none has rows for its window only, its values NaN).
    CcStateTrace, CcStateRow = "cc_state" {
        /// Time, seconds.
        time_s: f64,
        /// Flow id.
        flow: u32,
        /// Congestion window the connection uses, bytes (the recovery window in recovery).
        cwnd_bytes: u64,
        /// 1 while the connection is in fast recovery (the controller does not set the
        /// window then), else 0.
        recovery: u32,
        /// The controller's value 0 (its `probe_names()[0]`), NaN where it shows none.
        v0: f64,
        /// Value 1.
        v1: f64,
        /// Value 2.
        v2: f64,
        /// Value 3.
        v3: f64,
        /// Value 4.
        v4: f64,
        /// Value 5.
        v5: f64,
        /// Value 6.
        v6: f64,
        /// Value 7.
        v7: f64,
        /// Value 8.
        v8: f64,
        /// Value 9.
        v9: f64,
    }
}

/// All traces of a run; `None` for the ones not requested.
#[derive(Clone, Debug, Default)]
pub struct Traces {
    /// Per-flow throughput bins.
    pub throughput: Option<ThroughputTrace>,
    /// Window changes.
    pub cwnd: Option<CwndTrace>,
    /// Queue occupancy changes.
    pub queue: Option<QueueTrace>,
    /// TCP events.
    pub events: Option<EventTrace>,
    /// Tap captures.
    pub capture: Option<CaptureTrace>,
    /// Application milestones.
    pub milestones: Option<MilestoneTrace>,
    /// Bytes carried per watched pipe and flow.
    pub link_usage: Option<LinkUsageTrace>,
    /// Inline measurements.
    pub measurements: Option<MeasurementTrace>,
    /// Controller state.
    pub cc_state: Option<CcStateTrace>,
    /// RTT samples.
    pub rtt: Option<RttTrace>,
    /// Answered requests.
    pub messages: Option<MessageTrace>,
}

/// A named trace with its named columns.
pub type Table<'a> = (&'static str, Vec<(&'static str, Column<'a>)>);

impl Traces {
    /// Heap bytes the recorded traces hold.
    pub fn heap_bytes(&self) -> u64 {
        self.throughput.as_ref().map_or(0, |t| t.heap_bytes())
            + self.cwnd.as_ref().map_or(0, |t| t.heap_bytes())
            + self.queue.as_ref().map_or(0, |t| t.heap_bytes())
            + self.events.as_ref().map_or(0, |t| t.heap_bytes())
            + self.capture.as_ref().map_or(0, |t| t.heap_bytes())
            + self.milestones.as_ref().map_or(0, |t| t.heap_bytes())
            + self.link_usage.as_ref().map_or(0, |t| t.heap_bytes())
            + self.measurements.as_ref().map_or(0, |t| t.heap_bytes())
            + self.cc_state.as_ref().map_or(0, |t| t.heap_bytes())
            + self.rtt.as_ref().map_or(0, |t| t.heap_bytes())
            + self.messages.as_ref().map_or(0, |t| t.heap_bytes())
    }

    /// Let each recorded trace hold at most `bytes` of rows (columns included): a trace that
    /// reaches it records nothing more, the run goes on. Each table's limit is a row count, so
    /// where it stops depends only on the rows it recorded, never on how the run was observed.
    pub fn set_budget(&mut self, bytes: u64) {
        macro_rules! budget {
            ($($t:ident: $ty:ty),+) => {$(if let Some(x) = self.$t.as_mut() {
                x.max_rows = (bytes / <$ty>::ROW_BYTES as u64).clamp(1, usize::MAX as u64) as usize;
            })+};
        }
        budget!(throughput: ThroughputTrace, cwnd: CwndTrace, queue: QueueTrace, events: EventTrace, capture: CaptureTrace, milestones: MilestoneTrace, link_usage: LinkUsageTrace, measurements: MeasurementTrace, cc_state: CcStateTrace, rtt: RttTrace, messages: MessageTrace);
    }

    /// The time of the first row a trace did not record for its budget (`None`: they hold the
    /// whole run).
    pub fn stopped_s(&self) -> Option<f64> {
        [
            self.throughput.as_ref().and_then(|t| t.stopped_s),
            self.cwnd.as_ref().and_then(|t| t.stopped_s),
            self.queue.as_ref().and_then(|t| t.stopped_s),
            self.events.as_ref().and_then(|t| t.stopped_s),
            self.capture.as_ref().and_then(|t| t.stopped_s),
            self.milestones.as_ref().and_then(|t| t.stopped_s),
            self.link_usage.as_ref().and_then(|t| t.stopped_s),
            self.measurements.as_ref().and_then(|t| t.stopped_s),
            self.cc_state.as_ref().and_then(|t| t.stopped_s),
            self.rtt.as_ref().and_then(|t| t.stopped_s),
            self.messages.as_ref().and_then(|t| t.stopped_s),
        ]
        .into_iter()
        .flatten()
        .reduce(f64::min)
    }

    /// Every recorded trace as named columns.
    pub fn tables(&self) -> Vec<Table<'_>> {
        let mut t = Vec::new();
        if let Some(x) = &self.throughput {
            t.push((ThroughputTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.cwnd {
            t.push((CwndTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.queue {
            t.push((QueueTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.events {
            t.push((EventTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.capture {
            t.push((CaptureTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.milestones {
            t.push((MilestoneTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.link_usage {
            t.push((LinkUsageTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.measurements {
            t.push((MeasurementTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.cc_state {
            t.push((CcStateTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.rtt {
            t.push((RttTrace::NAME, x.columns()));
        }
        if let Some(x) = &self.messages {
            t.push((MessageTrace::NAME, x.columns()));
        }
        t
    }

    /// FNV-1a digest over every column's bytes (golden-run checks).
    pub fn digest(&self) -> u64 {
        let mut all = Vec::new();
        for (name, cols) in self.tables() {
            all.extend_from_slice(name.as_bytes());
            for (c, col) in cols {
                all.extend_from_slice(c.as_bytes());
                all.extend(col.to_le_bytes());
            }
        }
        crate::engine::rng::fnv1a64(&all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_have_equal_length_columns() {
        let mut tr = Traces { throughput: Some(ThroughputTrace::default()), events: Some(EventTrace::default()), ..Default::default() };
        tr.throughput.as_mut().unwrap().push(ThroughputRow { time_s: 0.1, flow: 0, bytes: 10, bps: 800.0 });
        for (_, cols) in tr.tables() {
            let n = cols[0].1.len();
            assert!(cols.iter().all(|(_, c)| c.len() == n));
        }
        assert_eq!(tr.tables()[0].1[2], ("bytes", Column::U64(&[10])), "columns in declaration order, named by field");
        assert_eq!(tr.tables()[1].0, "events");
        let d = tr.digest();
        tr.throughput.as_mut().unwrap().bytes[0] = 11;
        assert_ne!(d, tr.digest());
    }
}
