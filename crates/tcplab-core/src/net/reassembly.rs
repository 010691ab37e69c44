//! AAL5 reassembly at a receiving host, one state per VC (ITU-T I.363.5; RFC 2684): a frame
//! is the cells up to one with the end-of-frame mark; its length and CRC-32 fail if any cell
//! is missing, and the whole IP packet is discarded. A lost end-of-frame cell leaves the
//! frame's cells waiting for an end that belongs to the *next* frame on the VC, so the merged
//! frame fails too: one lost cell there costs two packets (three, if the next frame also lost
//! its end, and so on). A frame none of whose cells arrived (EPD refused it) leaves no trace.
//!
//! MODEL: no reassembly timer (a real NIC drops a partial frame after a while; with frames
//! following each other within milliseconds it never fires before the next end-of-frame).

use crate::net::atm_port::Fate;

/// What reassembly did with a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reassembled {
    /// The packet is delivered.
    Delivered,
    /// The frame lost cells: the packet is discarded.
    Corrupt,
    /// The frame's cells were joined to an earlier frame that lost its end: discarded with it.
    Merged,
    /// No cell arrived: nothing happened at the receiver.
    Absent,
}

/// One VC's reassembly state.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reassembly {
    /// Cells of a frame whose end was lost are waiting for an end-of-frame cell.
    pending: bool,
}

impl Reassembly {
    /// The frame whose fate along the path was `fate` reaches the receiver.
    pub fn frame(&mut self, fate: &Fate) -> Reassembled {
        if fate.sent == 0 {
            return Reassembled::Absent;
        }
        let joined = self.pending;
        self.pending = fate.eof_lost;
        if joined {
            Reassembled::Merged
        } else if fate.intact() {
            Reassembled::Delivered
        } else {
            Reassembled::Corrupt
        }
    }

    /// True while cells of a frame whose end was lost wait for an end-of-frame cell.
    pub fn pending(&self) -> bool {
        self.pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fate(sent: u32, dropped: u32, eof_lost: bool) -> Fate {
        Fate { sent, dropped, eof_lost, first_out: None, last_out: None }
    }

    #[test]
    fn one_lost_cell_loses_its_packet_and_a_lost_end_loses_the_next_too() {
        let mut r = Reassembly::default();
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Delivered);
        assert_eq!(r.frame(&fate(31, 1, false)), Reassembled::Corrupt, "a middle cell lost");
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Delivered, "the VC recovers at the end-of-frame cell");
        assert_eq!(r.frame(&fate(31, 1, true)), Reassembled::Corrupt, "its end lost");
        assert!(r.pending());
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Merged, "the next frame completes the broken one: both lost");
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Delivered);
    }

    #[test]
    fn ends_lost_in_a_row_chain_and_absent_frames_change_nothing() {
        let mut r = Reassembly::default();
        assert_eq!(r.frame(&fate(10, 22, true)), Reassembled::Corrupt);
        assert_eq!(r.frame(&fate(0, 40, true)), Reassembled::Absent, "EPD refused it whole");
        assert!(r.pending(), "nothing arrived, so the broken frame still waits");
        assert_eq!(r.frame(&fate(5, 27, true)), Reassembled::Merged);
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Merged, "still the same merged frame");
        assert_eq!(r.frame(&fate(32, 0, false)), Reassembled::Delivered);
    }
}
