//! An output-buffered ATM switch port, cell-exact by arithmetic (study 004): the output line
//! is slotted (one 53-byte cell per slot), CBR cells take their slots with strict priority,
//! and UBR cells wait in a FIFO of `ubr_buffer` cells, tail-dropped cell by cell. A packet
//! reaches the port as a *train* of cells (its AAL5 frame, one cell per input cell time); the
//! port decides every cell's fate — queued and sent in a given slot, or dropped — without an
//! event per cell: a train is *begun* when its first cell arrives and *finished* when its last
//! has, and in between `advance` runs the cells of every open train in arrival order, so trains
//! from several inputs interleave exactly.
//!
//! What a lost cell does (Romanow & Floyd 1995; algorithms.md §6.3): the frame is corrupt, but
//! its other cells still take buffer and line time, unless *PPD* drops the rest of the frame
//! (keeping its end-of-frame cell, which delimits the next frame); with *EPD* a frame whose
//! first cell finds at least `threshold` cells waiting is dropped whole. A lost end-of-frame
//! cell merges the frame with the next one on its VC at reassembly (`net::reassembly`).
//!
//! CBR: a constant stream of `cbr` cells per second in reserved slots: slot n carries a CBR
//! cell iff ⌊(n+1)·ρ⌋ > ⌊n·ρ⌋, ρ = CBR cell rate / line cell rate (evenly spaced, as a
//! traffic generator's constant stream; ρ < 1). The CBR rate's unit is a parameter: whole
//! 53-byte cells (an analyser counting cells) or 48-byte payloads.
//!
//! Slot n of the output line starts at ⌊n·424·10¹²/line_bps⌋ ps (424 bits a cell); a cell
//! that has fully arrived by a slot's start may be sent in it. A cell waits from its arrival
//! until the start of its slot; the UBR occupancy a cell finds is the cells admitted before it
//! whose slots have not started.

use std::collections::VecDeque;

use crate::units::SimTime;

/// Bits in an ATM cell.
pub const CELL_BITS: u128 = 424;

/// What the CBR rate counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CbrUnit {
    /// Whole 53-byte cells (an analyser counting cells on the line).
    Cell,
    /// 48-byte cell payloads.
    Payload,
}

/// Discard policy for UBR frames.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Discard {
    /// Per-cell tail drop only: the rest of a damaged frame is still queued and sent.
    TailDrop,
    /// Partial Packet Discard: after a frame loses a cell, its later cells are dropped, except
    /// its end-of-frame cell.
    Ppd,
    /// Early Packet Discard (with PPD): a frame whose first cell finds at least `threshold`
    /// cells waiting is dropped whole.
    Epd {
        /// Occupancy, cells, at which new frames are refused.
        threshold: u64,
    },
}

/// A port's settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AtmPortConfig {
    /// Line rate of the output, bits of cells per second (OC-3c: 149,760,000).
    pub line_bps: u64,
    /// UBR cell buffer, cells.
    pub ubr_buffer: u64,
    /// CBR rate (0: none), bits per second in `cbr_unit`s.
    pub cbr_bps: u64,
    /// What `cbr_bps` counts.
    pub cbr_unit: CbrUnit,
    /// CBR cells per burst (1: evenly spaced, one cell every 1/ρ slots; k: runs of k back-to-back
    /// cells every k/ρ slots, the same rate), at least 1.
    pub cbr_burst: u32,
    /// Discard policy.
    pub discard: Discard,
}

impl AtmPortConfig {
    /// CBR cells per line cell, as a fraction (numerator, denominator).
    fn rho(&self) -> (u128, u128) {
        let cells = match self.cbr_unit {
            CbrUnit::Cell => self.cbr_bps as u128,
            CbrUnit::Payload => self.cbr_bps as u128 * 53 / 48,
        };
        (cells, self.line_bps as u128)
    }

    /// The fewest cells a lone frame of `cells` cells finds waiting in the UBR buffer when its
    /// last cell arrives at an empty port, whatever the phase of the CBR slots: its cells arrive
    /// one per `cell_time` (ps as numerator/denominator; (0, 1): all at once, from a host), and
    /// until the last one at most ⌊span·line/424·10¹²⌋ + 1 slots start, of which at least
    /// ⌊slots·ρ⌋ − burst are CBR's. When this reaches `ubr_buffer` every such frame loses a
    /// cell (a TCP segment of that size can never get through).
    pub fn lone_frame_backlog(&self, cells: u64, cell_time: (u64, u64)) -> u64 {
        let span = cells.saturating_sub(1) as u128 * cell_time.0 as u128 / cell_time.1.max(1) as u128;
        let slots = span * self.line_bps as u128 / (CELL_BITS * crate::units::PS_PER_SEC as u128) + 1;
        let (p, q) = self.rho();
        let cbr = (slots * p / q).saturating_sub(self.cbr_burst.max(1) as u128);
        let ubr = slots - cbr.min(slots);
        (cells.saturating_sub(1) as u128).saturating_sub(ubr) as u64
    }
}

/// A packet's AAL5 frame arriving at the port.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Train {
    /// When its first cell has fully arrived.
    pub first: SimTime,
    /// Cells in the frame (the last is the end-of-frame cell).
    pub cells: u32,
    /// Input cell time, picoseconds, as `num / den` (cell k arrives at first + ⌊k·num/den⌋).
    pub cell_time: (u64, u64),
}

impl Train {
    /// When cell `k` has fully arrived.
    pub fn arrival(&self, k: u32) -> SimTime {
        let (num, den) = self.cell_time;
        SimTime(self.first.0 + (k as u128 * num as u128 / den.max(1) as u128) as u64)
    }

    /// When its last cell has arrived (when the port can finish it).
    pub fn last(&self) -> SimTime {
        self.arrival(self.cells.saturating_sub(1))
    }
}

/// What became of a frame at the port.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Fate {
    /// Cells queued (and so sent).
    pub sent: u32,
    /// Cells dropped.
    pub dropped: u32,
    /// The end-of-frame cell was dropped (reassembly merges the frame with the next).
    pub eof_lost: bool,
    /// The start of the slot of its first cell sent (none if no cell was sent).
    pub first_out: Option<SimTime>,
    /// The end of the slot of its last cell sent (none if no cell was sent).
    pub last_out: Option<SimTime>,
}

impl Fate {
    /// True when every cell went through.
    pub fn intact(&self) -> bool {
        self.dropped == 0
    }
}

/// Port counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AtmPortStats {
    /// UBR cells queued.
    pub cells_in: u64,
    /// UBR cells dropped by the full buffer.
    pub cells_dropped: u64,
    /// UBR cells dropped by PPD or EPD (their frame was already lost).
    pub cells_discarded: u64,
    /// Frames that lost at least one cell.
    pub frames_damaged: u64,
    /// Largest UBR occupancy a cell found, cells.
    pub max_waiting: u64,
}

#[derive(Clone, Copy, Debug)]
struct Open {
    id: u64,
    train: Train,
    next: u32,
    fate: Fate,
    /// EPD refused the frame at its first cell.
    refused: bool,
}

/// An ATM output port.
#[derive(Clone, Debug)]
pub struct AtmPort {
    cfg: AtmPortConfig,
    /// ρ = p/q: the share of slots CBR takes.
    rho: (u128, u128),
    /// Slots of admitted UBR cells not started by the last arrival, in order.
    waiting: VecDeque<u64>,
    /// The slot after the last one given to a UBR cell.
    next_free: u64,
    open: Vec<Open>,
    /// Counters.
    pub stats: AtmPortStats,
}

impl AtmPort {
    /// A port with nothing queued. Panics if CBR takes the whole line (the scenario layer
    /// refuses it).
    pub fn new(cfg: AtmPortConfig) -> Self {
        let rho = cfg.rho();
        assert!(rho.0 < rho.1, "CBR must leave slots for UBR");
        AtmPort { cfg, rho, waiting: VecDeque::new(), next_free: 0, open: Vec::new(), stats: AtmPortStats::default() }
    }

    /// When slot `n` starts.
    pub fn slot_start(&self, n: u64) -> SimTime {
        SimTime((n as u128 * CELL_BITS * crate::units::PS_PER_SEC as u128 / self.cfg.line_bps as u128) as u64)
    }

    /// The line rate, bit/s of cells.
    pub fn line_bps(&self) -> u64 {
        self.cfg.line_bps
    }

    /// The port's settings.
    pub fn config(&self) -> &AtmPortConfig {
        &self.cfg
    }

    /// The first slot starting at or after `t`: n = ⌈t·line_bps / (424·10¹²)⌉, since
    /// slot_start(n) = ⌊n·424·10¹²/line_bps⌋ ≥ t exactly when n·424·10¹²/line_bps ≥ t.
    fn slot_at_or_after(&self, t: SimTime) -> u64 {
        let per = CELL_BITS * crate::units::PS_PER_SEC as u128;
        let n = (t.0 as u128 * self.cfg.line_bps as u128).div_ceil(per) as u64;
        debug_assert!(self.slot_start(n) >= t && (n == 0 || self.slot_start(n - 1) < t));
        n
    }

    /// True if slot `n` carries a CBR cell. Evenly spaced: slot n is CBR when ⌊(n+1)ρ⌋ >
    /// ⌊nρ⌋. In bursts of k: burst j starts at s_j = ⌊j·k/ρ⌋ and holds k slots; the last burst
    /// starting at or before n is j = ⌈(n+1)ρ/k⌉ − 1.
    pub fn is_cbr(&self, n: u64) -> bool {
        let (p, q) = self.rho;
        let k = self.cfg.cbr_burst.max(1) as u128;
        if p == 0 {
            return false;
        }
        if k == 1 {
            return ((n as u128 + 1) * p / q) > (n as u128 * p / q);
        }
        let j = ((n as u128 + 1) * p).div_ceil(k * q) - 1;
        let start = j * k * q / p;
        (n as u128) < start + k
    }

    /// The first UBR slot at or after slot `n`.
    fn ubr_slot_from(&self, mut n: u64) -> u64 {
        while self.is_cbr(n) {
            n += 1;
        }
        n
    }

    /// Open a frame whose first cell arrives at `train.first` (`id`: the caller's name for it),
    /// before anything advances past that instant. Its cells are decided by `advance`; call
    /// `finish` at `train.last()`. Cells of several frames arriving at one instant go in the
    /// order the frames were begun.
    pub fn begin(&mut self, id: u64, train: Train) {
        assert!(train.cells > 0, "a frame has at least one cell");
        self.open.push(Open { id, train, next: 0, fate: Fate::default(), refused: false });
    }

    /// Decide every cell of the open frames that has arrived by `until`, in arrival order
    /// (cells arriving at the same instant: the frame begun first goes first).
    /// `finish` advances by itself; a trace of the occupancy may call it to be current.
    pub fn advance(&mut self, until: SimTime) {
        loop {
            let mut best: Option<(SimTime, usize)> = None;
            for (i, o) in self.open.iter().enumerate() {
                if o.next < o.train.cells {
                    let t = o.train.arrival(o.next);
                    if t <= until && best.is_none_or(|(bt, _)| t < bt) {
                        best = Some((t, i));
                    }
                }
            }
            let Some((t, i)) = best else { return };
            self.cell(t, i);
        }
    }

    /// One cell of open frame `i`, arriving at `t`.
    fn cell(&mut self, t: SimTime, i: usize) {
        // Cells whose slot has started by `t` have left the buffer.
        while self.waiting.front().is_some_and(|&s| self.slot_start(s) <= t) {
            self.waiting.pop_front();
        }
        let found = self.waiting.len() as u64;
        self.stats.max_waiting = self.stats.max_waiting.max(found);
        let ppd = !matches!(self.cfg.discard, Discard::TailDrop);
        let o = self.open[i];
        let k = o.next;
        let eof = k + 1 == o.train.cells;
        let mut fate = o.fate;
        let mut refused = o.refused;
        if k == 0 {
            if let Discard::Epd { threshold } = self.cfg.discard {
                refused = found >= threshold;
            }
        }
        let discard = refused || (ppd && fate.dropped > 0 && !eof);
        if discard {
            fate.dropped += 1;
            self.stats.cells_discarded += 1;
            fate.eof_lost |= eof;
        } else if found >= self.cfg.ubr_buffer {
            fate.dropped += 1;
            self.stats.cells_dropped += 1;
            fate.eof_lost |= eof;
        } else {
            let n = self.ubr_slot_from(self.next_free.max(self.slot_at_or_after(t)));
            self.next_free = n + 1;
            self.waiting.push_back(n);
            self.stats.cells_in += 1;
            fate.sent += 1;
            fate.first_out.get_or_insert(self.slot_start(n));
            fate.last_out = Some(self.slot_start(n + 1));
        }
        if fate.dropped == 1 && o.fate.dropped == 0 {
            self.stats.frames_damaged += 1;
        }
        self.open[i] = Open { next: k + 1, fate, refused, ..o };
    }

    /// Close frame `id` once its last cell has arrived (`advance` to `train.last()` first, or
    /// this does it) and return its fate.
    pub fn finish(&mut self, id: u64) -> Fate {
        let i = self.open.iter().position(|o| o.id == id).expect("finish a frame that was begun");
        let last = self.open[i].train.last();
        self.advance(last);
        // `remove`, not `swap_remove`: ties in `advance` go to the frame begun first.
        let o = self.open.remove(i);
        debug_assert_eq!(o.next, o.train.cells);
        o.fate
    }

    /// Open frames.
    pub fn open_frames(&self) -> usize {
        self.open.len()
    }

    /// UBR cells waiting at `t` (slots not started), for traces.
    pub fn waiting_at(&self, t: SimTime) -> u64 {
        self.waiting.iter().filter(|&&s| self.slot_start(s) > t).count() as u64
    }
}

#[cfg(test)]
#[path = "atm_port_tests.rs"]
mod tests;
