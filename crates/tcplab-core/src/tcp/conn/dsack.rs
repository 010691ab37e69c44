//! RFC 2883 D-SACK as Linux 2.4 runs it (read in 2.4.17 `tcp_input.c`, the same functions in
//! 2.4.20).
//!
//! Receiver (`tcp.dsack`, with SACK negotiated; Linux `tp->sack_ok && sysctl_tcp_dsack`):
//! - a data segment wholly below RCV.NXT is reported as it is, `[seq, end)` (`tcp_data_queue`'s
//!   "a retransmit" case and `tcp_send_dupack`);
//! - one partly below it, `[seq, RCV.NXT)` (`tcp_data_queue`'s partial packet), the rest taken;
//!   2.4 enters quick-ACK mode there, so the ACK goes at once;
//! - in-order data that runs into held out-of-order data: the overlap with the first held
//!   block, `tcp_ofo_queue`'s `tcp_dsack_extend` (which adds to a block already set only when
//!   the two touch);
//! - out-of-order data that overlaps data already held: the overlap with the first held block
//!   it meets (`tcp_data_queue`'s "all the bits are present" and partial-overlap cases; a
//!   second, disjoint overlap is dropped by `tcp_dsack_extend` as here);
//! - the block is the first of the next segment's SACK blocks, before the out-of-order blocks
//!   (`tcp_build_and_update_options`: `duplicate_sack` then `selective_acks`, at most 4 − 1
//!   with timestamps), and is sent once; a newer duplicate replaces it, and the next data
//!   segment forgets an unsent one (`tcp_data_queue` clears `tp->dsack`). Every duplicate is
//!   ACKed at once, so a block is never left unsent.
//!   MODEL: 2.4 reports `[skb->seq, old RCV.NXT)` for held data an in-order segment fills past
//!   (`tcp_ofo_queue`'s `dsack_high`); here the overlap itself. The quick-ACK mode a duplicate
//!   starts (`tcp_enter_quickack_mode`: the next few ACKs immediate) is not modelled.
//!
//! Sender (always; `tcp_sacktag_write_queue`): the first block is a D-SACK when it starts below
//! the ACK's own cumulative ACK, or lies within the second block (RFC 2883 §4). It is never
//! SACK information (it covers nothing new: Linux tags no segment SACKed for it); it counts
//! against the episode's retransmissions for `undo`.

use crate::net::packet::TcpHeader;

use super::Connection;

impl Connection {
    /// Report `[s, e)` as the next segment's D-SACK block (`tcp_dsack_set`).
    pub(super) fn dsack_set(&mut self, s: u64, e: u64) {
        if self.cfg.dsack && self.sack_ok && e > s {
            self.dsack = Some((s, e));
        }
    }

    /// Add `[s, e)` to the D-SACK block if it touches it, or set it if none is set
    /// (`tcp_dsack_extend`).
    pub(super) fn dsack_extend(&mut self, s: u64, e: u64) {
        match self.dsack {
            None => self.dsack_set(s, e),
            Some((a, b)) if s <= b && a <= e => self.dsack = Some((a.min(s), b.max(e))),
            Some(_) => {}
        }
    }

    /// The part of `[s, e)` the out-of-order queue already holds: the overlap with the first
    /// held block it meets, if any.
    pub(super) fn held_overlap(&self, s: u64, e: u64) -> Option<(u64, u64)> {
        let (a, b) = match self.ooo.range_containing(s) {
            Some(r) => r,
            None => {
                let a = self.ooo.next_start_after(s).filter(|&a| a < e)?;
                self.ooo.range_containing(a)?
            }
        };
        let (x, y) = (a.max(s), b.min(e));
        (y > x).then_some((x, y))
    }

    /// The D-SACK block for the segment being built, taken (it is sent once).
    pub(super) fn take_dsack(&mut self) -> Option<(u64, u64)> {
        self.dsack.take()
    }

    /// Whether the first SACK block of the arriving `seg` is a D-SACK (RFC 2883 §4: below the
    /// segment's own cumulative ACK, or within the second block); counts it and hands it to
    /// the undo accounting. Called before the ACK's cumulative part is taken.
    pub(super) fn dsack_received(&mut self, seg: &TcpHeader) -> bool {
        let mut blocks = seg.sack_blocks();
        let Some((s, e)) = blocks.next() else { return false };
        let dup = s < seg.ack || blocks.next().is_some_and(|(a, b)| a <= s && e <= b);
        if dup {
            self.stats.dsacks_received += 1;
            if self.cfg.undo {
                self.undo_note_dsack(s, e);
            }
        }
        dup
    }
}
