//! A queue discipline written outside the crate, added through the egress's closed set
//! without touching the pipe or the fabric: a FIFO that drops every k-th packet when it
//! reaches the head. Its after-dequeue drops must reach the run's summary and packet counters,
//! and TCP must repair them.

use std::collections::VecDeque;

use tcplab_core::net::discipline::{DropReason, Dropped, QueueDiscipline, QueueStats};
use tcplab_core::net::Packet;
use tcplab_core::scenario::parse_toml;
use tcplab_core::units::SimTime;
use tcplab_core::Run;

/// Drops every `k`-th packet at the head of the queue; never full.
#[derive(Debug)]
struct DropEveryKth {
    k: u64,
    fifo: VecDeque<Packet>,
    bytes: u64,
    heads: u64,
    stats: QueueStats,
}

impl DropEveryKth {
    fn new(k: u64) -> Self {
        DropEveryKth { k, fifo: VecDeque::new(), bytes: 0, heads: 0, stats: QueueStats::default() }
    }
}

impl QueueDiscipline for DropEveryKth {
    fn enqueue(&mut self, _now: SimTime, pkt: Packet) -> Result<(), Dropped> {
        self.bytes += pkt.size as u64;
        self.fifo.push_back(pkt);
        self.stats.enqueued += 1;
        self.stats.max_packets = self.stats.max_packets.max(self.fifo.len() as u64);
        Ok(())
    }

    fn dequeue(&mut self, _now: SimTime, dropped: &mut Vec<Dropped>) -> Option<Packet> {
        while let Some(p) = self.fifo.pop_front() {
            self.bytes -= p.size as u64;
            self.heads += 1;
            if self.heads.is_multiple_of(self.k) {
                self.stats.dropped += 1;
                self.stats.dropped_after_dequeue += 1;
                dropped.push(Dropped::at_head(p, DropReason::Policy));
                continue;
            }
            self.stats.departed += 1;
            return Some(p);
        }
        None
    }

    fn len_packets(&self) -> u64 {
        self.fifo.len() as u64
    }

    fn len_bytes(&self) -> u64 {
        self.bytes
    }

    fn stats(&self) -> QueueStats {
        self.stats
    }
}

const SCENARIO: &str = r#"
name = "toy-discipline"
[run]
duration = "30s"
stop = "flows-done"
seed = 3
[defaults.tcp]
cc = "newreno"
[[hosts]]
name = "a"
[[hosts]]
name = "b"
[[switches]]
name = "sw"
[[links]]
between = ["a", "sw"]
rate = "1Gbps"
delay = "10us"
[[links]]
between = ["sw", "b"]
rate = "100Mbps"
delay = "2ms"
queue_a = "100pkts"
[[flows]]
name = "bulk"
src = "a"
dst = "b"
bulk = { bytes = "3MB" }
"#;

/// The summary, and the packets still inside the network at the end.
fn run(toy: Option<u64>) -> (tcplab_core::sim::RunSummary, u64) {
    let sc = parse_toml(SCENARIO).unwrap();
    let mut run = Run::new(&sc, None).unwrap();
    if let Some(k) = toy {
        let pipe = run.sim.fabric.pipes.iter_mut().find(|p| p.name == "sw->b").expect("the bottleneck pipe");
        pipe.set_discipline(Box::new(DropEveryKth::new(k)));
    }
    run.sim.run();
    (run.sim.summary(), run.sim.fabric.pipes.iter().map(|p| p.packets_inside()).sum())
}

#[test]
fn a_discipline_from_outside_counts_its_drops_after_dequeue() {
    let (plain, _) = run(None);
    let (toy, inside) = run(Some(50));
    let q = |s: &tcplab_core::sim::RunSummary| s.queues.iter().find(|q| q.name == "sw->b").cloned().expect("the bottleneck queue");
    let (qp, qt) = (q(&plain), q(&toy));
    assert_eq!(qp.dropped_after_dequeue, 0, "drop-tail drops only on arrival");
    // Every 50th packet to reach the head is dropped there, and nothing else (the toy is never full).
    assert!(qt.dropped_after_dequeue > 10, "{qt:?}");
    assert_eq!(qt.dropped, qt.dropped_after_dequeue);
    assert_eq!(qt.departed + qt.dropped_after_dequeue, qt.enqueued, "every packet queued left or was dropped at the head");
    assert_eq!(qt.dropped_after_dequeue, (qt.enqueued) / 50, "the k-th of every 50 at the head");
    // The fabric counted them: packets are conserved and the flow repaired every loss.
    let pk = toy.packets;
    assert_eq!(pk.created + pk.duplicated, pk.delivered + pk.queue_drops + pk.random_drops + inside, "{pk:?}");
    assert_eq!(pk.queue_drops, qt.dropped);
    let f = &toy.flows[0];
    assert_eq!(f.bytes_delivered, 3_000_000, "the flow completes");
    assert!(f.retransmits >= qt.dropped_after_dequeue / 2, "TCP retransmitted what was lost: {} for {}", f.retransmits, qt.dropped_after_dequeue);
}
