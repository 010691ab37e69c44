//! The admissions journal of a run that stops at an instant nobody knows in advance (when its
//! flows are done). Pass-on and merges admit a packet into a pipe ahead of the arrival event a
//! hop-by-hop run would have had for it; when the run then stops, a hop-by-hop run would not
//! have had the events ordered after the stop, and its counters would not show those
//! admissions. The journal keeps, for every admission made ahead of its event, the pipe's
//! counters and lazy transmitter state before it (`checkpoint`) and the key of the event
//! it stands for; at the stop it takes back, pipe by pipe, every admission from the first one
//! a hop-by-hop run would not have made, so the counters read "as of the stop".
//!
//! Entries that can no longer be taken back (their event precedes the one being handled) are
//! pruned whenever the journal has doubled, so it holds about one window of admissions ahead.

use crate::engine::order::Key;
use crate::net::counters::PacketCounters;
use crate::net::egress::{Egress, FifoCheckpoint};
use crate::net::pipe::{Pipe, PipeStats};
use crate::units::SimTime;

/// A pipe's counters and lazy FIFO state before an admission (`checkpoint`).
#[derive(Clone, Copy, Debug)]
pub struct PipeCheckpoint {
    stats: PipeStats,
    fifo: Option<FifoCheckpoint>,
}

impl PipeCheckpoint {
    /// Waiting entries the admission moved into service (kept by the journal).
    pub fn popped(&self) -> usize {
        self.fifo.map_or(0, |f| f.popped())
    }
}

/// What an admission to `pipe` at `now` is about to change, so that `restore` can take it
/// back. The waiting packets the admission will move into service are appended to `popped`.
/// Only for pipes that `decides_on_admission`.
pub fn checkpoint(pipe: &Pipe, now: SimTime, popped: &mut Vec<(SimTime, u32)>) -> PipeCheckpoint {
    let fifo = match pipe.egress() {
        Egress::Fifo(f) => Some(f.checkpoint(now, popped)),
        _ => None,
    };
    PipeCheckpoint { stats: pipe.stats, fifo }
}

/// (Queue drops, random drops) of `pipe` since `c` was taken.
pub fn drops_since(pipe: &Pipe, c: &PipeCheckpoint) -> (u64, u64) {
    let queue = match (pipe.egress(), &c.fifo) {
        (Egress::Fifo(f), Some(cf)) => f.stats.dropped - cf.dropped(),
        _ => 0,
    };
    (queue, pipe.stats.random_drops - c.stats.random_drops)
}

/// Undo the admission `c` was taken before (later ones undone first), `popped` being the
/// entries `checkpoint` appended. Packets the undone admissions put into propagation stay
/// there (they are still inside the network, only not yet through this pipe).
pub fn restore(pipe: &mut Pipe, c: &PipeCheckpoint, popped: &[(SimTime, u32)]) {
    if let (Egress::Fifo(f), Some(cf)) = (pipe.egress_mut(), &c.fifo) {
        f.restore(cf, popped);
    }
    pipe.stats = c.stats;
}

/// One admission made ahead of its event.
#[derive(Clone, Copy, Debug)]
struct Admission {
    /// Key of the arrival event a hop-by-hop run would have had for it.
    key: Key,
    /// The event being handled when it was made (`EventQueue::popped`).
    event: u64,
    pipe: u32,
    /// Where its popped waiting entries start in `Journal::popped`.
    popped_at: u32,
    check: PipeCheckpoint,
}

/// See the module doc.
#[derive(Debug, Default)]
pub struct Journal {
    entries: Vec<Admission>,
    popped: Vec<(SimTime, u32)>,
    prune_at: usize,
    /// Packets whose drop was taken back: still inside the network as of the stop.
    pub limbo: u64,
    /// Set once the stop has been settled.
    pub closed: bool,
}

impl Journal {
    /// Record that `pipe` (index `p`) is about to admit a packet at `now` ahead of the event
    /// with key `key`, while event number `event` (current key `current`) is handled.
    #[inline(never)]
    pub fn note(&mut self, pipe: &Pipe, p: u32, now: SimTime, key: Key, event: u64, current: Key) {
        if self.entries.len() >= self.prune_at.max(4096) {
            self.prune(event, current);
        }
        let popped_at = self.popped.len() as u32;
        let check = checkpoint(pipe, now, &mut self.popped);
        self.entries.push(Admission { key, event, pipe: p, popped_at, check });
    }

    /// Drop the entries no stop can take back: those of events handled before `event` whose
    /// own event precedes `current`.
    fn prune(&mut self, event: u64, current: Key) {
        let mut popped = Vec::with_capacity(self.popped.len() / 2);
        let old = std::mem::take(&mut self.popped);
        self.entries.retain_mut(|e| {
            let keep = e.key > current || e.event == event;
            if keep {
                let at = e.popped_at as usize;
                let n = e.check.popped();
                e.popped_at = popped.len() as u32;
                popped.extend_from_slice(&old[at..at + n]);
            }
            keep
        });
        self.popped = popped;
        self.prune_at = 2 * self.entries.len();
    }

    /// Number of entries (for tests).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The run stopped while handling event number `event` with key `stop`: take back every
    /// admission a hop-by-hop run would not have made by then — those standing for an event
    /// after `stop`, and those made while handling the stopping event itself, except the ones
    /// from index `settled_from` on (made when the merges were settled at the stop, which stand
    /// only for their own events) — and, in each pipe, every later one. Drops taken back are
    /// taken off `packets` and counted in `limbo`.
    pub fn take_back(&mut self, stop: Key, event: u64, settled_from: usize, pipes: &mut [Pipe], packets: &mut PacketCounters) {
        let mut first: Vec<Option<usize>> = vec![None; pipes.len()];
        for (i, e) in self.entries.iter().enumerate() {
            let undo = e.key > stop || (i < settled_from && e.event == event);
            if undo && first[e.pipe as usize].is_none() {
                first[e.pipe as usize] = Some(i);
            }
        }
        for (p, f) in first.iter().enumerate() {
            if let Some(i) = *f {
                let (queue_drops, random_drops) = drops_since(&pipes[p], &self.entries[i].check);
                packets.queue_drops -= queue_drops;
                packets.random_drops -= random_drops;
                self.limbo += queue_drops + random_drops;
            }
        }
        for (i, e) in self.entries.iter().enumerate().rev() {
            if first[e.pipe as usize].is_some_and(|f| i >= f) {
                let at = e.popped_at as usize;
                restore(&mut pipes[e.pipe as usize], &e.check, &self.popped[at..at + e.check.popped()]);
            }
        }
        self.entries.clear();
        self.popped.clear();
        self.closed = true;
    }
}
