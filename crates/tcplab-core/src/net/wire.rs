//! The TCP header as it is on the wire, and the one place where it meets the header model:
//! 32-bit sequence and acknowledgment numbers counted from each end's ISN, the 16-bit window
//! field scaled down by the sender's shift (never on a SYN, RFC 7323 §2.2), and the options in
//! order, laid out as Linux emits them. The capture writer encodes through `to_wire`; the
//! packetdrill interpreter decodes the segments a script injects with `from_wire` and compares
//! the connection's segments with the script's through `to_wire`.

use crate::net::packet::{flags, Ecn, TcpHeader, MAX_SACK_BLOCKS};

/// One TCP option on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireOption {
    /// End of option list (kind 0).
    Eol,
    /// No-operation, padding (kind 1).
    Nop,
    /// Maximum segment size (kind 2), bytes.
    Mss(u16),
    /// Window scale (kind 3): the shift the sender will apply to its windows.
    WindowScale(u8),
    /// SACK permitted (kind 4).
    SackPermitted,
    /// SACK blocks (kind 5): `[start, end)` as 32-bit wire sequence numbers.
    Sack { blocks: [(u32, u32); MAX_SACK_BLOCKS], len: u8 },
    /// Timestamps (kind 8): TSval, TSecr.
    Timestamp(u32, u32),
}

impl WireOption {
    /// Bytes the option takes.
    pub fn len(&self) -> u32 {
        match self {
            WireOption::Eol | WireOption::Nop => 1,
            WireOption::Mss(_) => 4,
            WireOption::WindowScale(_) => 3,
            WireOption::SackPermitted => 2,
            WireOption::Sack { len, .. } => 2 + 8 * *len as u32,
            WireOption::Timestamp(..) => 10,
        }
    }

    /// Never empty (every option is at least its kind byte).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The SACK blocks of a SACK option.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        match self {
            WireOption::Sack { blocks, len } => &blocks[..*len as usize],
            _ => &[],
        }
    }
}

/// A TCP header on the wire (ports and checksum aside).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WireSegment {
    /// Sequence number, mod 2³².
    pub seq: u32,
    /// Acknowledgment number, mod 2³² (0 without the ACK flag).
    pub ack: u32,
    /// Flag bits (`flags::*`).
    pub flags: u8,
    /// The window field as sent.
    pub window: u16,
    /// Options in order.
    pub options: Vec<WireOption>,
    /// Payload bytes.
    pub len: u32,
    /// The IP header's ECN field.
    pub ecn: Ecn,
}

/// How one end's segments map to the wire: its ISN, its peer's ISN (for the acknowledgment
/// number and SACK blocks), and the shift it applies to the windows it advertises.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WireView {
    /// ISN of the end sending the segment (its sequence 0 on the wire).
    pub isn: u32,
    /// ISN of the end receiving it.
    pub peer_isn: u32,
    /// Window-scale shift of the sending end (0 if not negotiated).
    pub shift: u8,
}

fn wrap(isn: u32, seq: u64) -> u32 {
    isn.wrapping_add(seq as u32)
}

/// The 64-bit value whose low 32 bits (after removing `isn`) are `wire`, nearest `near`
/// (RFC 793 sequence arithmetic: within 2³¹ of it).
pub fn unwrap(isn: u32, wire: u32, near: u64) -> u64 {
    let rel = wire.wrapping_sub(isn);
    let d = rel.wrapping_sub(near as u32) as i32 as i64;
    (near as i64 + d).max(0) as u64
}

/// The model header `h`, sent by the end `view` describes, as it goes on the wire; options in
/// Linux's layout (`tcp_options_write`): MSS; SACK-permitted with timestamps, or NOP NOP
/// SACK-permitted, or NOP NOP timestamps; NOP window scale; NOP NOP SACK blocks.
pub fn to_wire(h: &TcpHeader, view: &WireView) -> WireSegment {
    let syn = h.has(flags::SYN);
    let shift = if syn { 0 } else { view.shift };
    let mut options = Vec::with_capacity(8);
    if let Some(m) = h.mss {
        options.push(WireOption::Mss(m));
    }
    match (h.sack_permitted, h.timestamps) {
        (true, Some((v, e))) => options.extend([WireOption::SackPermitted, WireOption::Timestamp(v, e)]),
        (true, None) => options.extend([WireOption::Nop, WireOption::Nop, WireOption::SackPermitted]),
        (false, Some((v, e))) => options.extend([WireOption::Nop, WireOption::Nop, WireOption::Timestamp(v, e)]),
        (false, None) => {}
    }
    if let Some(ws) = h.wscale {
        options.extend([WireOption::Nop, WireOption::WindowScale(ws)]);
    }
    if h.sack_count() > 0 {
        let mut blocks = [(0u32, 0u32); MAX_SACK_BLOCKS];
        for (slot, (s, e)) in blocks.iter_mut().zip(h.sack_blocks()) {
            *slot = (wrap(view.peer_isn, s), wrap(view.peer_isn, e));
        }
        options.extend([WireOption::Nop, WireOption::Nop, WireOption::Sack { blocks, len: h.sack_count() as u8 }]);
    }
    WireSegment {
        seq: wrap(view.isn, h.seq),
        ack: if h.has(flags::ACK) { wrap(view.peer_isn, h.ack) } else { 0 },
        flags: h.flags,
        window: (h.window >> shift).min(65_535) as u16,
        options,
        len: h.len,
        ecn: h.ecn,
    }
}

/// A wire segment sent by the end `view` describes, as the model header its receiver reads:
/// sequence numbers unwrapped near `near_seq` (what the receiver expects next) and
/// `near_ack` (its oldest unacknowledged byte), the window scaled up by the sender's shift
/// (not on a SYN), options into fields (the last of each kind counts; NOP and EOL carry
/// nothing; at most `MAX_SACK_BLOCKS` SACK blocks).
pub fn from_wire(w: &WireSegment, view: &WireView, near_seq: u64, near_ack: u64) -> TcpHeader {
    let syn = w.flags & flags::SYN != 0;
    let shift = if syn { 0 } else { view.shift };
    let ack = if w.flags & flags::ACK != 0 { unwrap(view.peer_isn, w.ack, near_ack) } else { 0 };
    let mut h = TcpHeader { seq: unwrap(view.isn, w.seq, near_seq), ack, len: w.len, flags: w.flags, window: (w.window as u64) << shift, ecn: w.ecn, ..TcpHeader::default() };
    for o in &w.options {
        match *o {
            WireOption::Mss(m) => h.mss = Some(m),
            WireOption::WindowScale(s) => h.wscale = Some(s),
            WireOption::SackPermitted => h.sack_permitted = true,
            WireOption::Timestamp(v, e) => h.timestamps = Some((v, e)),
            WireOption::Sack { .. } => {
                let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
                let mut n = 0;
                for &(s, e) in o.sack_blocks() {
                    let (s, e) = (unwrap(view.peer_isn, s, near_ack), unwrap(view.peer_isn, e, near_ack));
                    // A block below the ACK or inverted carries nothing the model can hold.
                    if s >= ack && e > s && e - ack < 1 << 32 {
                        blocks[n] = (s, e);
                        n += 1;
                    }
                }
                h.set_sack_blocks(&blocks[..n]);
            }
            WireOption::Eol | WireOption::Nop => {}
        }
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn model_to_wire_and_back_is_the_identity() {
        let view = WireView { isn: u32::MAX - 10, peer_isn: 7, shift: 7 };
        let mut h = TcpHeader { seq: 100, ack: 5_000, len: 1000, flags: flags::ACK | flags::PSH, window: 1 << 20, timestamps: Some((11, 22)), ..TcpHeader::default() };
        h.set_sack_blocks(&[(6_000, 7_000), (8_000, 9_000)]);
        let w = to_wire(&h, &view);
        assert_eq!(w.seq, (u32::MAX - 10).wrapping_add(100), "sequence numbers wrap from the ISN");
        assert_eq!(w.window as u64, (1 << 20) >> 7);
        assert_eq!(w.options.iter().map(|o| o.len()).sum::<u32>(), h.options_len(), "the layout matches the size model");
        assert_eq!(from_wire(&w, &view, 90, 4_000), h);
        // A SYN's window is never scaled, and its options come back.
        let syn = TcpHeader { flags: flags::SYN, window: 65_535, mss: Some(1460), wscale: Some(7), sack_permitted: true, timestamps: Some((1, 0)), ..TcpHeader::default() };
        let w = to_wire(&syn, &view);
        assert_eq!(w.window, 65_535);
        assert_eq!(w.options, vec![WireOption::Mss(1460), WireOption::SackPermitted, WireOption::Timestamp(1, 0), WireOption::Nop, WireOption::WindowScale(7)]);
        assert_eq!(from_wire(&w, &view, 0, 0), syn);
    }

    #[test]
    fn unwrapping_picks_the_value_nearest_the_reference() {
        assert_eq!(unwrap(0, 5, 0), 5);
        assert_eq!(unwrap(0, 5, (1 << 32) + 3), (1 << 32) + 5, "past one wrap");
        assert_eq!(unwrap(0, u32::MAX, 1 << 32), (1 << 32) - 1, "just behind the reference");
        assert_eq!(unwrap(10, 9, 0), 0, "never below zero");
    }
}
