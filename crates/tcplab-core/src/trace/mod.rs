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

/// Per-flow delivered bytes per fixed interval.
#[derive(Clone, Debug, Default)]
pub struct ThroughputTrace {
    /// End of the bin, seconds.
    pub time_s: Vec<f64>,
    /// Flow id.
    pub flow: Vec<u32>,
    /// Payload bytes delivered in order during the bin.
    pub bytes: Vec<u64>,
    /// bytes·8 / bin length.
    pub bps: Vec<f64>,
}

/// Sender window state, recorded whenever cwnd or ssthresh changes.
#[derive(Clone, Debug, Default)]
pub struct CwndTrace {
    /// Time, seconds.
    pub time_s: Vec<f64>,
    /// Flow id.
    pub flow: Vec<u32>,
    /// Congestion window, bytes.
    pub cwnd_bytes: Vec<u64>,
    /// Slow-start threshold, bytes (u64::MAX = unlimited).
    pub ssthresh_bytes: Vec<u64>,
    /// Smoothed RTT, seconds (0 before the first sample).
    pub srtt_s: Vec<f64>,
    /// Bytes in flight as the sender counts them.
    pub inflight_bytes: Vec<u64>,
}

/// Queue occupancy, recorded whenever it changes.
#[derive(Clone, Debug, Default)]
pub struct QueueTrace {
    /// Time, seconds.
    pub time_s: Vec<f64>,
    /// Queue id (index in the summary's queue list).
    pub queue: Vec<u32>,
    /// Packets waiting (the one in service excluded).
    pub packets: Vec<u64>,
    /// Bytes waiting.
    pub bytes: Vec<u64>,
}

/// TCP events (fast retransmit, timeout, recovery exit, retransmission, duplicate ACK).
#[derive(Clone, Debug, Default)]
pub struct EventTrace {
    /// Time, seconds.
    pub time_s: Vec<f64>,
    /// Flow id.
    pub flow: Vec<u32>,
    /// Event code (`TcpEventKind as u32`).
    pub kind: Vec<u32>,
    /// Sequence number concerned.
    pub seq: Vec<u64>,
}

/// Every packet seen by taps that record a trace (the columnar twin of the pcapng file).
#[derive(Clone, Debug, Default)]
pub struct CaptureTrace {
    /// Time the first bit went on the wire at the tap, seconds (rounded to the resolution).
    pub time_s: Vec<f64>,
    /// Tap id (order in the scenario).
    pub tap: Vec<u32>,
    /// Flow id.
    pub flow: Vec<u32>,
    /// 0 = data direction (source → destination), 1 = reverse.
    pub dir: Vec<u32>,
    /// Relative sequence number (first data byte = 1; datagram index for UDP).
    pub seq: Vec<u64>,
    /// Relative acknowledgment number.
    pub ack: Vec<u64>,
    /// Payload bytes.
    pub len: Vec<u32>,
    /// TCP flag bits.
    pub flags: Vec<u32>,
    /// IP packet length.
    pub ip_len: Vec<u32>,
    /// Advertised window, bytes (after scaling).
    pub window: Vec<u64>,
    /// Number of SACK blocks.
    pub sack_blocks: Vec<u32>,
    /// 1 if the simulator sent this segment as a retransmission.
    pub retransmit: Vec<u32>,
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
}

/// A named trace with its named columns.
pub type Table<'a> = (&'static str, Vec<(&'static str, Column<'a>)>);

impl Traces {
    /// Every recorded trace as named columns.
    pub fn tables(&self) -> Vec<Table<'_>> {
        let mut t = Vec::new();
        if let Some(x) = &self.throughput {
            t.push(("throughput", vec![("time_s", Column::F64(&x.time_s)), ("flow", Column::U32(&x.flow)), ("bytes", Column::U64(&x.bytes)), ("bps", Column::F64(&x.bps))]));
        }
        if let Some(x) = &self.cwnd {
            t.push((
                "cwnd",
                vec![
                    ("time_s", Column::F64(&x.time_s)),
                    ("flow", Column::U32(&x.flow)),
                    ("cwnd_bytes", Column::U64(&x.cwnd_bytes)),
                    ("ssthresh_bytes", Column::U64(&x.ssthresh_bytes)),
                    ("srtt_s", Column::F64(&x.srtt_s)),
                    ("inflight_bytes", Column::U64(&x.inflight_bytes)),
                ],
            ));
        }
        if let Some(x) = &self.queue {
            t.push(("queue", vec![("time_s", Column::F64(&x.time_s)), ("queue", Column::U32(&x.queue)), ("packets", Column::U64(&x.packets)), ("bytes", Column::U64(&x.bytes))]));
        }
        if let Some(x) = &self.events {
            t.push(("events", vec![("time_s", Column::F64(&x.time_s)), ("flow", Column::U32(&x.flow)), ("kind", Column::U32(&x.kind)), ("seq", Column::U64(&x.seq))]));
        }
        if let Some(x) = &self.capture {
            t.push((
                "capture",
                vec![
                    ("time_s", Column::F64(&x.time_s)),
                    ("tap", Column::U32(&x.tap)),
                    ("flow", Column::U32(&x.flow)),
                    ("dir", Column::U32(&x.dir)),
                    ("seq", Column::U64(&x.seq)),
                    ("ack", Column::U64(&x.ack)),
                    ("len", Column::U32(&x.len)),
                    ("flags", Column::U32(&x.flags)),
                    ("ip_len", Column::U32(&x.ip_len)),
                    ("window", Column::U64(&x.window)),
                    ("sack_blocks", Column::U32(&x.sack_blocks)),
                    ("retransmit", Column::U32(&x.retransmit)),
                ],
            ));
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
        let t = tr.throughput.as_mut().unwrap();
        t.time_s.push(0.1);
        t.flow.push(0);
        t.bytes.push(10);
        t.bps.push(800.0);
        for (_, cols) in tr.tables() {
            let n = cols[0].1.len();
            assert!(cols.iter().all(|(_, c)| c.len() == n));
        }
        assert_eq!(tr.tables()[0].1[2].1.to_le_bytes(), 10u64.to_le_bytes().to_vec());
        let d = tr.digest();
        tr.throughput.as_mut().unwrap().bytes[0] = 11;
        assert_ne!(d, tr.digest());
    }
}
