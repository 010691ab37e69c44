//! FQ-CoDel (RFC 8290; Linux `sch_fq_codel`): packets hashed by flow into `flows` queues, each
//! with its own CoDel state; a deficit round robin of `quantum` bytes serves the queues, and a
//! queue that becomes active joins the *new* list, served before the *old* one, so a sparse
//! flow's packets skip the bulk flows' queues.
//!
//! The hash is the flow's identity (connection and direction, which stand for the 5-tuple)
//! mixed with a key drawn from the run's seed (Linux perturbs its flow hash with a random key).
//! When the whole queue exceeds `limit`, the packet at the head of the queue holding the most
//! bytes is dropped (RFC 8290 §4.1.1; Linux drops up to half of that queue, 64 packets at most,
//! in one go).

use std::collections::VecDeque;

use super::codel::{check_rule, CodelRule, CodelState};
use super::timed::TimedFifo;
use super::{DropReason, Dropped, QueueDiscipline, QueueStats};
use crate::net::packet::{End, Packet};
use crate::params::ParamError;
use crate::quantity::Dur;
use crate::units::{QueueLimit, SimDuration, SimTime};

crate::param_table! {
    /// `queue.fq_codel`: FQ-CoDel's parameters (Linux `sch_fq_codel` defaults; the limit is the
    /// queue's `limit`, default 10240 packets).
    FqCodelSpec => FqCodelParams {
        /// Flow queues the hash spreads flows over, 1..=65536 (default 1024).
        flows: u32 = 1024,
        /// Bytes a queue may send per round (default 1500: Linux's 1514-byte quantum less the
        /// Ethernet header, as tcplab's sizes are IP bytes).
        quantum: u32 = 1500,
        /// CoDel's target sojourn per queue (default 5ms).
        target: Dur = Dur(SimDuration::from_millis(5)),
        /// CoDel's interval (default 100ms).
        interval: Dur = Dur(SimDuration::from_millis(100)),
        /// CoDel's MAXPACKET per queue, IP bytes (default 1500).
        mtu: u32 = 1500,
        /// Mark ECN-capable packets CE instead of dropping them (default true, Linux's).
        ecn: bool = true,
    }
}

/// Check FQ-CoDel's parameters.
pub fn check_params(p: &FqCodelParams) -> Result<(), ParamError> {
    if p.flows == 0 || p.flows > 65536 {
        return Err(ParamError::new("flows", format!("{} is out of range (1..=65536; Linux 1024)", p.flows)));
    }
    if p.quantum < 64 {
        return Err(ParamError::new("quantum", format!("{} bytes is below 64 (Linux 1514 with the Ethernet header)", p.quantum)));
    }
    check_rule(p.target.0, p.interval.0, p.mtu)
}

/// Which list a flow queue is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum List {
    None,
    New,
    Old,
}

#[derive(Debug)]
struct FlowQueue {
    fifo: TimedFifo,
    codel: CodelState,
    deficit: i64,
    list: List,
}

/// An FQ-CoDel queue.
#[derive(Debug)]
pub struct FqCodel {
    queues: Vec<FlowQueue>,
    new_flows: VecDeque<u32>,
    old_flows: VecDeque<u32>,
    limit: QueueLimit,
    quantum: i64,
    rule: CodelRule,
    key: u64,
    packets: u64,
    bytes: u64,
    stats: QueueStats,
}

fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl FqCodel {
    /// An FQ-CoDel queue holding at most `limit` in all, hashing with `key` (from the run's
    /// seed).
    pub fn new(limit: QueueLimit, p: &FqCodelParams, key: u64) -> Self {
        let queues = (0..p.flows).map(|_| FlowQueue { fifo: TimedFifo::default(), codel: CodelState::default(), deficit: 0, list: List::None }).collect();
        FqCodel {
            queues,
            new_flows: VecDeque::new(),
            old_flows: VecDeque::new(),
            limit,
            quantum: p.quantum as i64,
            rule: CodelRule { target: p.target.0, interval: p.interval.0, mtu: p.mtu as u64, ecn: p.ecn },
            key,
            packets: 0,
            bytes: 0,
            stats: QueueStats::default(),
        }
    }

    /// The queue `pkt` hashes to.
    pub fn queue_of(&self, pkt: &Packet) -> usize {
        let id = ((pkt.flow.0 as u64) << 1) | (pkt.to == End::Dst) as u64;
        ((mix(id ^ self.key) as u128 * self.queues.len() as u128) >> 64) as usize
    }

    fn over_limit(&self) -> bool {
        match self.limit {
            QueueLimit::Packets(n) => self.packets > n,
            QueueLimit::Bytes(b) => self.bytes > b,
            QueueLimit::Unlimited => false,
        }
    }

    /// Packets waiting in flow queue `i`.
    pub fn queue_len(&self, i: usize) -> u64 {
        self.queues[i].fifo.len()
    }
}

impl QueueDiscipline for FqCodel {
    fn enqueue(&mut self, now: SimTime, pkt: Packet) -> Result<(), Dropped> {
        let i = self.queue_of(&pkt);
        self.packets += 1;
        self.bytes += pkt.size as u64;
        let q = &mut self.queues[i];
        q.fifo.push(now, pkt);
        if q.list == List::None {
            q.list = List::New;
            q.deficit = self.quantum;
            self.new_flows.push_back(i as u32);
        }
        TimedFifo::count_in(&mut self.stats, self.packets, self.bytes);
        if !self.over_limit() {
            return Ok(());
        }
        // Full: the fattest queue (by bytes; the lowest index among equals) loses its head.
        let fat = (0..self.queues.len()).max_by_key(|&j| (self.queues[j].fifo.bytes(), std::cmp::Reverse(j))).expect("at least one queue");
        let (_, victim) = self.queues[fat].fifo.pop().expect("the fattest queue holds a packet");
        self.packets -= 1;
        self.bytes -= victim.size as u64;
        self.stats.dropped += 1;
        self.stats.dropped_after_dequeue += 1;
        Err(Dropped::at_head(victim, DropReason::Full))
    }

    fn dequeue(&mut self, now: SimTime, dropped: &mut Vec<Dropped>) -> Option<Packet> {
        loop {
            let (from_new, i) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (true, i as usize),
                (None, Some(&i)) => (false, i as usize),
                (None, None) => return None,
            };
            let pop = |s: &mut Self| if from_new { s.new_flows.pop_front() } else { s.old_flows.pop_front() };
            if self.queues[i].deficit <= 0 {
                self.queues[i].deficit += self.quantum;
                pop(self);
                self.old_flows.push_back(i as u32);
                self.queues[i].list = List::Old;
                continue;
            }
            let before = dropped.len();
            let q = &mut self.queues[i];
            let (p0, b0) = (q.fifo.len(), q.fifo.bytes());
            let got = q.codel.dequeue(now, &mut q.fifo, &self.rule, &mut self.stats, dropped);
            self.packets -= p0 - q.fifo.len();
            self.bytes -= b0 - q.fifo.bytes();
            debug_assert_eq!(dropped.len() - before, (p0 - q.fifo.len()) as usize - got.is_some() as usize);
            match got {
                Some(pkt) => {
                    q.deficit -= pkt.size as i64;
                    return Some(pkt);
                }
                None => {
                    // Empty: a new queue passes once through the old list (so it cannot
                    // starve the old ones by coming back as new), else it leaves the lists.
                    pop(self);
                    if from_new && !self.old_flows.is_empty() {
                        self.old_flows.push_back(i as u32);
                        self.queues[i].list = List::Old;
                    } else {
                        self.queues[i].list = List::None;
                    }
                }
            }
        }
    }

    fn len_packets(&self) -> u64 {
        self.packets
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> QueueStats {
        self.stats
    }
}

#[cfg(test)]
#[path = "fq_codel_tests.rs"]
mod tests;
