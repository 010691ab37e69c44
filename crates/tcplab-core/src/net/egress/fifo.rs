//! A single drop-tail FIFO and its transmitter run *lazily*: its departures are computed at
//! admission (a FIFO serves in order, so a packet's start and end of service are known the
//! moment it is accepted), the occupancy seen by a new arrival is the number of admitted
//! packets whose service has not started yet, and no departure events exist at all — one event
//! per packet per pipe instead of two, with the drop, marking and timing decisions of
//! `discipline::DropTail` run event by event (tested in `pipe_tests.rs`).

use std::collections::VecDeque;

use super::occupancy::Occupancy;
use super::transmitter::{ClockCheckpoint, Transmitter};
use super::Offer;
use crate::net::discipline::{fits, EcnMarking, QueueStats};
use crate::net::packet::Packet;
use crate::units::{QueueLimit, SimTime};

/// A lazily run drop-tail FIFO with its transmitter.
#[derive(Debug)]
pub struct LazyFifo {
    /// The transmitter.
    pub tx: Transmitter,
    /// The buffer's limit (what waits, the packet in service not counted).
    pub limit: QueueLimit,
    /// ECN marking by threshold, if any.
    pub marking: Option<EcnMarking>,
    /// (Service start, IP bytes) of admitted packets not yet known to have started.
    waiting: VecDeque<(SimTime, u32)>,
    waiting_bytes: u64,
    /// (Service start, IP bytes) of the last packet known to have started service (the one
    /// just ahead of `waiting`).
    serving: Option<(SimTime, u32)>,
    /// The queue's counters (departures settled up to the last admission; `stats_at`).
    pub stats: QueueStats,
    /// Each admitted packet's whole wait for service, summed at its admission
    /// (`occupancy_at` takes back what lies beyond the moment asked about).
    waited: Occupancy,
}

/// A lazy FIFO's state before an admission (`LazyFifo::checkpoint`).
#[derive(Clone, Copy, Debug)]
pub struct FifoCheckpoint {
    queue: QueueStats,
    waited: Occupancy,
    clock: ClockCheckpoint,
    serving: Option<(SimTime, u32)>,
    waiting_bytes: u64,
    waiting_len: usize,
    popped: usize,
}

impl FifoCheckpoint {
    /// Waiting entries the admission moved into service (kept by the caller).
    pub fn popped(&self) -> usize {
        self.popped
    }

    /// Queue drops counted before the admission.
    pub fn dropped(&self) -> u64 {
        self.queue.dropped
    }
}

impl LazyFifo {
    /// An empty FIFO of `limit` marking by `marking`, in front of `tx`.
    pub fn new(tx: Transmitter, limit: QueueLimit, marking: Option<EcnMarking>) -> Self {
        LazyFifo { tx, limit, marking, waiting: VecDeque::new(), waiting_bytes: 0, serving: None, stats: QueueStats::default(), waited: Occupancy::default() }
    }

    /// The waiting packets and bytes integrated from the start up to `now`: every admitted
    /// packet waits from its admission to its start of service, so the integral is the sum of
    /// those waits less the parts of them after `now`.
    pub fn occupancy_at(&self, now: SimTime) -> Occupancy {
        let mut a = self.waited;
        for &(start, size) in self.waiting.iter().rev() {
            if start <= now {
                break;
            }
            a.sub(1, size as u64, start.since(now));
        }
        a
    }

    /// Queue counters as of `now` (settling the service starts already passed).
    pub fn stats_at(&self, now: SimTime) -> QueueStats {
        let mut st = self.stats;
        st.departed += self.waiting.iter().take_while(|(start, _)| *start <= now).count() as u64;
        st
    }

    /// Packets waiting for the transmitter at `now` (the one in service excluded).
    pub fn waiting_at(&self, now: SimTime) -> u64 {
        self.waiting.iter().filter(|(start, _)| *start > now).count() as u64
    }

    /// (Packets, IP bytes) admitted whose serialization has not ended by `now`: a lazy FIFO
    /// counts a packet transmitted when it admits it, and the pipe takes these out.
    pub fn unfinished_at(&self, now: SimTime) -> (u64, u64) {
        let (mut n, mut b) = (0, 0);
        // `serving` and then `waiting` were served back to back.
        let mut last = self.serving;
        let mut next_start = None;
        for &(start, size) in &self.waiting {
            if start <= now {
                last = Some((start, size));
            } else {
                n += 1;
                b += size as u64;
                next_start.get_or_insert(start);
            }
        }
        if let Some((_, size)) = last {
            if next_start.unwrap_or(self.tx.tx_end) > now {
                n += 1;
                b += size as u64;
            }
        }
        (n, b)
    }

    /// The packets whose service has begun by `now` have left the queue.
    #[inline(always)]
    fn settle(&mut self, now: SimTime) {
        while let Some(&(start, size)) = self.waiting.front() {
            if start > now {
                break;
            }
            self.waiting.pop_front();
            self.waiting_bytes -= size as u64;
            self.stats.departed += 1;
            self.serving = Some((start, size));
        }
    }

    /// True when `admit(now, size)` would accept the packet (its rule, without admitting it;
    /// ECN marking aside). Settles the services begun by `now`, as `admit` would.
    pub fn has_room(&mut self, now: SimTime, size: u32) -> bool {
        self.settle(now);
        !self.tx.busy_at(now) || fits(self.limit, self.waiting.len() as u64, self.waiting_bytes, size)
    }

    /// The end of service of an accepted packet of `size` bytes offered at `now`, or its drop.
    #[inline(always)]
    pub fn admit(&mut self, now: SimTime, size: u32) -> Result<SimTime, Offer> {
        self.settle(now);
        let busy = self.tx.busy_at(now);
        if busy {
            if !fits(self.limit, self.waiting.len() as u64, self.waiting_bytes, size) {
                self.stats.dropped += 1;
                return Err(Offer::QueueDrop);
            }
        } else {
            self.tx.restart_if_idle(now);
        }
        let st = &mut self.stats;
        st.enqueued += 1;
        let start = self.tx.tx_end.max(now);
        if busy {
            self.waited.add(1, size as u64, start.since(now));
            self.waiting.push_back((start, size));
            self.waiting_bytes += size as u64;
            st.max_packets = st.max_packets.max(self.waiting.len() as u64);
            st.max_bytes = st.max_bytes.max(self.waiting_bytes);
        } else {
            st.departed += 1;
            st.max_packets = st.max_packets.max(1);
            st.max_bytes = st.max_bytes.max(size as u64);
            self.serving = Some((start, size));
        }
        Ok(self.tx.serialize(size))
    }

    /// `admit` behind the ECN marking `m`: a packet the buffer has room for is judged on the
    /// packets (bytes) it finds waiting, the one in service excluded, exactly as
    /// `DropTail` judges it.
    #[inline(never)]
    pub fn admit_marking(&mut self, now: SimTime, pkt: &mut Packet, m: EcnMarking) -> Result<SimTime, Offer> {
        self.settle(now);
        let busy = self.tx.busy_at(now);
        let (packets, bytes) = if busy { (self.waiting.len() as u64, self.waiting_bytes) } else { (0, 0) };
        if (!busy || fits(self.limit, packets, bytes, pkt.size)) && !m.apply(packets, bytes, pkt, &mut self.stats) {
            return Err(Offer::QueueDrop);
        }
        self.admit(now, pkt.size)
    }

    /// What an admission at `now` is about to change; the waiting packets it will move into
    /// service are appended to `popped`.
    pub fn checkpoint(&self, now: SimTime, popped: &mut Vec<(SimTime, u32)>) -> FifoCheckpoint {
        let before = popped.len();
        popped.extend(self.waiting.iter().take_while(|(start, _)| *start <= now));
        FifoCheckpoint {
            queue: self.stats,
            waited: self.waited,
            clock: self.tx.checkpoint(),
            serving: self.serving,
            waiting_bytes: self.waiting_bytes,
            waiting_len: self.waiting.len(),
            popped: popped.len() - before,
        }
    }

    /// Undo the admission `c` was taken before, `popped` being the entries `checkpoint` appended.
    pub fn restore(&mut self, c: &FifoCheckpoint, popped: &[(SimTime, u32)]) {
        debug_assert_eq!(popped.len(), c.popped);
        self.waiting.truncate(c.waiting_len - c.popped);
        for &e in popped.iter().rev() {
            self.waiting.push_front(e);
        }
        debug_assert_eq!(self.waiting.len(), c.waiting_len);
        self.stats = c.queue;
        self.waited = c.waited;
        self.tx.restore(&c.clock);
        self.serving = c.serving;
        self.waiting_bytes = c.waiting_bytes;
    }
}
