//! An ATM output port as a pipe's egress: the port (`net::atm_port`, cell-exact), the AAL5
//! framing that turns a packet into a train of cells, and the reassembly at the host the port
//! feeds (`net::reassembly`), so the fabric's delivery path knows nothing of cells.

use super::Tapped;
use crate::net::atm_port::{AtmPort, AtmPortConfig, Fate, Train, CELL_BITS};
use crate::net::discipline::QueueStats;
use crate::net::packet::{End, Packet};
use crate::net::reassembly::{Reassembled, Reassembly};
use crate::units::SimTime;

/// A pipe's ATM port: the port, and what it needs to turn a packet into a train of cells —
/// the link layer (cells per packet) and the cell time of the link that feeds it.
#[derive(Clone, Debug)]
pub struct CellStage {
    /// The port.
    pub port: AtmPort,
    link: crate::net::link_layer::LinkLayer,
    /// Cell time of the feeding link, ps as `num / den` (`(0, 1)`: a host's own queue, whose
    /// packets are whole at once).
    input: (u64, u64),
    /// The first cell of the last frame admitted (frames of one input never overlap).
    last_first: SimTime,
    frames: u64,
    /// AAL5 reassembly at the host this port feeds, per flow and end addressed (a port feeds a
    /// host directly, so frames reach it in the order they leave).
    reassembly: Vec<[Reassembly; 2]>,
    /// Frames the host's reassembly discards: damaged, or merged with one whose end was lost.
    pub frames_discarded: u64,
}

impl CellStage {
    /// A port on a link whose link layer is `link` (AAL5), fed by a host until told otherwise.
    pub fn new(cfg: AtmPortConfig, link: crate::net::link_layer::LinkLayer) -> Self {
        assert!(link.cells(40).is_some(), "an ATM port needs an AAL5 link");
        CellStage { port: AtmPort::new(cfg), link, input: (0, 1), last_first: SimTime::ZERO, frames: 0, reassembly: Vec::new(), frames_discarded: 0 }
    }

    /// The port's settings.
    pub fn config(&self) -> &AtmPortConfig {
        self.port.config()
    }

    /// The port's line rate, bit/s of cells.
    pub fn line_bps(&self) -> u64 {
        self.port.line_bps()
    }

    /// Packets reach the port over a link with this cell rate, bit/s of cells (`None`: from
    /// a host, or over a link that delivers them whole).
    pub fn set_input(&mut self, cell_line_bps: Option<u64>) {
        // 424·10¹² / bps ps a cell, exactly (424·10¹² fits a u64; any rate of the feeding link).
        self.input = match cell_line_bps {
            Some(bps) => ((CELL_BITS * crate::units::PS_PER_SEC as u128) as u64, bps.max(1)),
            None => (0, 1),
        };
    }

    /// A packet of `ip_bytes` whose last cell arrived at `now`: its frame's fate at the port.
    /// One input feeds the port, so the frame is begun and finished at once.
    pub fn admit(&mut self, now: SimTime, ip_bytes: u32) -> Fate {
        let cells = self.link.cells(ip_bytes).expect("AAL5") as u32;
        let (num, den) = self.input;
        let span = (cells as u128 - 1) * num as u128 / den as u128;
        let first = SimTime(now.0.saturating_sub(span as u64)).max(self.last_first);
        self.last_first = first;
        let id = self.frames;
        self.frames += 1;
        self.port.begin(id, Train { first, cells, cell_time: self.input });
        self.port.finish(id)
    }

    /// The frame of flow `flow`'s packet to `end` (0 source, 1 destination) left the port with
    /// `fate`: what reassembly at the host does with it.
    pub fn reassemble(&mut self, flow: usize, end: usize, fate: &Fate) -> Reassembled {
        if self.reassembly.len() <= flow {
            self.reassembly.resize(flow + 1, [Reassembly::default(); 2]);
        }
        let r = self.reassembly[flow][end].frame(fate);
        self.frames_discarded += matches!(r, Reassembled::Corrupt | Reassembled::Merged) as u64;
        r
    }
}

/// An ATM port as a pipe's egress: the cell stage and the queue counters it keeps per frame.
#[derive(Debug)]
pub struct CellPort {
    /// The port, its cell stage and the host's reassembly.
    pub stage: CellStage,
    /// Frames admitted (`enqueued`, `departed`) and lost (`dropped`).
    pub stats: QueueStats,
}

impl CellPort {
    /// A packet whose last cell arrives `now`: the cells of its frame are decided one by one
    /// and those queued take their line slots; the host this port feeds reassembles the frame
    /// and takes the packet only if it is whole and not merged with one whose end was lost.
    /// Returns the time its last cell leaves, and reports it to a tap at its first cell's.
    pub fn offer(&mut self, now: SimTime, pkt: &Packet, tapped: &mut Tapped) -> Option<SimTime> {
        let fate = self.stage.admit(now, pkt.size);
        let end = (pkt.to == End::Dst) as usize;
        let (Reassembled::Delivered, Some(first), Some(last)) = (self.stage.reassemble(pkt.flow.0 as usize, end, &fate), fate.first_out, fate.last_out) else {
            self.stats.dropped += 1;
            return None;
        };
        self.stats.enqueued += 1;
        self.stats.departed += 1;
        if let Some(v) = tapped.as_mut() {
            v.push((first, *pkt));
        }
        Some(last)
    }
}
