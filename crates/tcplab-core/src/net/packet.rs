//! Packets: payload-free header models. Behaviour reads and writes these fields; bytes exist
//! only in the capture writer. Sequence numbers are 64-bit and unwrapped here; they are wrapped
//! to 32 bits only when a header is written to a capture.

use crate::net::link_layer::LinkMark;
use crate::units::SimTime;

/// Index of a flow (one TCP connection or one UDP stream) in the simulation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(pub u32);

/// Index of a precomputed route.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RouteId(pub u32);

/// Which end of a flow a packet is addressed to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum End {
    /// The flow's source host (the active opener / sender).
    Src,
    /// The flow's destination host (the passive opener / receiver).
    Dst,
}

/// IPv4 header bytes (no options).
pub const IPV4_HEADER: u32 = 20;
/// IPv6 header bytes (no extension headers).
pub const IPV6_HEADER: u32 = 40;
/// TCP header bytes without options.
pub const TCP_HEADER: u32 = 20;
/// UDP header bytes.
pub const UDP_HEADER: u32 = 8;

/// TCP flag bits, as on the wire.
pub mod flags {
    /// No more data from sender.
    pub const FIN: u8 = 0x01;
    /// Synchronize sequence numbers.
    pub const SYN: u8 = 0x02;
    /// Reset the connection.
    pub const RST: u8 = 0x04;
    /// Push function.
    pub const PSH: u8 = 0x08;
    /// Acknowledgment field significant.
    pub const ACK: u8 = 0x10;
    /// ECN-Echo (RFC 3168 §6.1): on a SYN, "I can do ECN"; otherwise, "a packet of yours
    /// arrived marked CE".
    pub const ECE: u8 = 0x40;
    /// Congestion Window Reduced (RFC 3168 §6.1): the sender has reacted to an ECE.
    pub const CWR: u8 = 0x80;
}

/// The ECN field of the IP header (RFC 3168 §5), as the two bits on the wire.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u8)]
pub enum Ecn {
    /// Not ECN-capable transport (00).
    #[default]
    NotEct = 0,
    /// ECN-capable transport, ECT(1) (01).
    Ect1 = 1,
    /// ECN-capable transport, ECT(0) (10): what TCP sends (RFC 3168 §6.1.1).
    Ect0 = 2,
    /// Congestion experienced (11): set by a queue instead of dropping.
    Ce = 3,
}

impl Ecn {
    /// True for ECT(0), ECT(1) and CE: a queue may mark the packet instead of dropping it.
    pub fn capable(self) -> bool {
        self != Ecn::NotEct
    }
}

/// Up to four SACK blocks (the most that fit beside timestamps is three; four without them).
pub const MAX_SACK_BLOCKS: usize = 4;

/// A TCP header as the behaviour sees it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpHeader {
    /// Sequence number of the first byte (or of the SYN/FIN), unwrapped, relative to ISN 0.
    pub seq: u64,
    /// Acknowledgment number (valid with the ACK flag), unwrapped.
    pub ack: u64,
    /// Payload length in bytes.
    pub len: u32,
    /// Flag bits (`flags::*`).
    pub flags: u8,
    /// Advertised receive window in bytes, after scaling (what the peer may send).
    pub window: u64,
    /// MSS option (SYN only).
    pub mss: Option<u16>,
    /// Window-scale option shift (SYN only).
    pub wscale: Option<u8>,
    /// SACK-permitted option (SYN only).
    pub sack_permitted: bool,
    /// Timestamps option: (TSval, TSecr) in the sender's timestamp clock ticks.
    pub timestamps: Option<(u32, u32)>,
    /// Number of SACK blocks carried.
    pub(crate) sack_len: u8,
    /// SACK blocks `[start, end)` as signed 32-bit offsets from `ack` (negative only for an
    /// RFC 2883 D-SACK block below it): use `set_sack_blocks`/`sack_blocks`.
    pub(crate) sack: [(u32, u32); MAX_SACK_BLOCKS],
    /// True for a retransmission (model bookkeeping; not a header field).
    pub retransmit: bool,
    /// The ECN field of the IP header carrying this segment (set by the sender, turned to CE
    /// by a marking queue; UDP datagrams are never ECN-capable here).
    pub ecn: Ecn,
    /// The segment rides IPv6 (a 40-byte header) rather than IPv4 (20 bytes).
    pub ipv6: bool,
}

impl TcpHeader {
    /// True if every bit of `f` is set.
    pub fn has(&self, f: u8) -> bool {
        self.flags & f == f
    }

    /// Sequence space this segment occupies (payload + SYN + FIN).
    pub fn seq_len(&self) -> u64 {
        self.len as u64 + self.has(flags::SYN) as u64 + self.has(flags::FIN) as u64
    }

    /// Number of SACK blocks carried.
    pub fn sack_count(&self) -> usize {
        self.sack_len as usize
    }

    /// The SACK blocks carried, `[start, end)` in unwrapped sequence numbers.
    pub fn sack_blocks(&self) -> impl ExactSizeIterator<Item = (u64, u64)> + '_ {
        let base = self.ack;
        let at = move |o: u32| base.wrapping_add(o as i32 as i64 as u64);
        self.sack[..self.sack_len as usize].iter().map(move |&(a, b)| (at(a), at(b)))
    }

    /// Move the cumulative ACK to `ack`, keeping the SACK blocks at their sequence numbers
    /// (they are stored above the ACK); a block at or below the new ACK is dropped, one it
    /// cuts is clipped.
    pub fn set_ack_keeping_sack(&mut self, ack: u64) {
        if self.sack_len == 0 {
            self.ack = ack;
            return;
        }
        let mut blocks = [(0u64, 0u64); MAX_SACK_BLOCKS];
        let mut n = 0;
        for (a, b) in self.sack_blocks() {
            if b > ack {
                blocks[n] = (a.max(ack), b);
                n += 1;
            }
        }
        self.ack = ack;
        self.set_sack_blocks(&blocks[..n]);
    }

    /// Carry these SACK blocks (at most `MAX_SACK_BLOCKS`; set `ack` first). A receiver
    /// reports data above its cumulative ACK and inside its window (< 2³⁰ bytes with window
    /// scaling), and with RFC 2883 a duplicate as the first block, which may lie below the ACK
    /// (within a window of it), so each block is stored as two signed 32-bit offsets from
    /// `ack`, which keeps every packet small.
    pub fn set_sack_blocks(&mut self, blocks: &[(u64, u64)]) {
        assert!(blocks.len() <= MAX_SACK_BLOCKS, "at most {MAX_SACK_BLOCKS} SACK blocks");
        let ack = self.ack;
        let off = |x: u64| i32::try_from(x as i64 - ack as i64).expect("SACK block within 2 GiB of the ACK") as u32;
        for (slot, &(a, b)) in self.sack.iter_mut().zip(blocks) {
            *slot = (off(a), off(b));
        }
        self.sack_len = blocks.len() as u8;
    }

    /// TCP option bytes, laid out as Linux emits them (each option 4-byte aligned with NOPs):
    /// SYN: MSS 4, SACK-permitted + timestamps 12 (or 4 / 12 alone), window scale 4; other
    /// segments: timestamps 12, SACK 4 + 8 per block.
    pub fn options_len(&self) -> u32 {
        let mut n = 0u32;
        if self.mss.is_some() {
            n += 4;
        }
        match (self.sack_permitted, self.timestamps.is_some()) {
            (true, true) => n += 12,
            (true, false) => n += 4,
            (false, true) => n += 12,
            (false, false) => {}
        }
        if self.wscale.is_some() {
            n += 4;
        }
        if self.sack_len > 0 {
            n += 4 + 8 * self.sack_len as u32;
        }
        n
    }

    /// IP packet size: the IP header (IPv4 or IPv6) + TCP + options + payload.
    pub fn ip_len(&self) -> u32 {
        let ip = if self.ipv6 { IPV6_HEADER } else { IPV4_HEADER };
        ip + TCP_HEADER + self.options_len() + self.len
    }
}

/// What a packet carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Body {
    /// A TCP segment.
    Tcp(TcpHeader),
    /// A UDP datagram: its sequence number in the stream and payload length.
    Udp {
        /// Datagram index within its stream.
        seq: u64,
        /// Payload bytes.
        len: u32,
    },
}

/// A packet in the network.
#[derive(Clone, Copy, Debug)]
pub struct Packet {
    /// The flow it belongs to.
    pub flow: FlowId,
    /// The end it is addressed to.
    pub to: End,
    /// Route it follows, and the index of the next pipe on it.
    pub route: RouteId,
    /// Index into the route of the pipe the packet is in (or entering).
    pub hop: u16,
    /// Priority class at strict-priority queues (0 = highest).
    pub class: u8,
    /// Link-layer state carried between links (`LinkMark::INTACT` from the host).
    pub link: LinkMark,
    /// IP bytes on the wire (headers + payload).
    pub size: u32,
    /// When the packet left its host (for traces).
    pub created: SimTime,
    /// The sending end's count of packets before this one (mod 2¹⁶): the IPv4 Identification
    /// field less the end's random start (`trace::pcap::WireIdentity::ip_id`), as Linux numbers
    /// a connected socket's packets.
    pub ip_id: u16,
    /// Header model.
    pub body: Body,
}

impl Packet {
    /// The IP header's ECN field (a UDP datagram is not ECN-capable).
    #[inline(always)]
    pub fn ecn(&self) -> Ecn {
        match &self.body {
            Body::Tcp(h) => h.ecn,
            Body::Udp { .. } => Ecn::NotEct,
        }
    }

    /// Mark the packet CE (only an ECN-capable one: RFC 3168 §5).
    #[inline]
    pub fn mark_ce(&mut self) {
        if let Body::Tcp(h) = &mut self.body {
            debug_assert!(h.ecn.capable());
            h.ecn = Ecn::Ce;
        }
    }

    /// The TCP header, if this is a TCP segment.
    pub fn tcp(&self) -> Option<&TcpHeader> {
        match &self.body {
            Body::Tcp(h) => Some(h),
            Body::Udp { .. } => None,
        }
    }
}

/// A UDP datagram of `size` IP bytes for unit tests: flow `flow`, class `class`, sequence
/// number `seq`, on route 0 towards the destination, created at time zero.
#[cfg(test)]
pub(crate) fn test_udp(flow: u32, class: u8, size: u32, seq: u64) -> Packet {
    Packet {
        flow: FlowId(flow),
        to: End::Dst,
        route: RouteId(0),
        hop: 0,
        class,
        link: LinkMark::INTACT,
        size,
        created: SimTime::ZERO,
        ip_id: 0,
        body: Body::Udp { seq, len: size.saturating_sub(IPV4_HEADER + UDP_HEADER) },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packets_stay_small() {
        // Every packet is copied into and out of each pipe's propagation line: keep it compact.
        assert!(std::mem::size_of::<Packet>() <= 120, "{} bytes", std::mem::size_of::<Packet>());
    }

    #[test]
    fn option_lengths_are_padded() {
        let mut h = TcpHeader { len: 1000, ..Default::default() };
        assert_eq!(h.ip_len(), 1040);
        h.timestamps = Some((1, 2));
        assert_eq!(h.options_len(), 12);
        h.set_sack_blocks(&[(10, 20), (30, 40), (50, 60)]);
        assert_eq!(h.options_len(), 40, "the most that fits: timestamps and 3 SACK blocks");
        assert_eq!(h.sack_blocks().collect::<Vec<_>>(), vec![(10, 20), (30, 40), (50, 60)]);
        let syn = TcpHeader { flags: flags::SYN, mss: Some(1460), wscale: Some(7), sack_permitted: true, timestamps: Some((0, 0)), ..Default::default() };
        assert_eq!(syn.options_len(), 20);
        assert_eq!(syn.seq_len(), 1);
    }
}
