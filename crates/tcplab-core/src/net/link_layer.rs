//! Link-layer rules: how many bytes a link serializes for an IP packet of a given size. The
//! IP bytes are what TCP, queues in bytes and captures count; the line bytes are what takes
//! line time.

/// Bytes of an ATM cell: 5 of header, 48 of payload.
pub const ATM_CELL: u64 = 53;
/// Payload bytes of an ATM cell.
pub const ATM_CELL_PAYLOAD: u64 = 48;
/// The AAL5 CPCS trailer (UU, CPI, length, CRC-32), bytes.
pub const AAL5_TRAILER: u64 = 8;
/// RFC 2684 LLC/SNAP encapsulation header for routed IPv4 (AA-AA-03 00-00-00 08-00), bytes.
pub const LLC_SNAP: u64 = 8;

/// Link-layer state a packet carries from link to link; the network layer never reads it.
/// Room for what a cell-level path element must remember about a frame: on ATM, that a frame
/// lost a cell at one switch, so that its remaining cells still take line time on the next
/// links and reassembly discards it (study 004). `INTACT` everywhere today.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinkMark(pub u8);

impl LinkMark {
    /// Nothing to remember (every packet a host creates).
    pub const INTACT: LinkMark = LinkMark(0);
}

/// The link layer of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LinkLayer {
    /// IP bytes only (the default).
    #[default]
    Ip,
    /// A fixed number of bytes serialized with every packet (PPP: 2; Ethernet with preamble,
    /// FCS and inter-frame gap: 38).
    Framing(u32),
    /// IP over AAL5 over ATM (RFC 2684): the packet plus `encapsulation` bytes (LLC/SNAP: 8,
    /// VC multiplexing: 0) plus the 8-byte trailer, padded to a multiple of 48 bytes, sent as
    /// 53-byte cells. With a link rate that is the cell rate of the line (OC-3c: 149.76 Mb/s of
    /// cells, 353,208 cells/s), the line time is exact per cell.
    Aal5 {
        /// Encapsulation bytes before the packet.
        encapsulation: u32,
    },
}

impl LinkLayer {
    /// AAL5 with LLC/SNAP encapsulation (RFC 2684 §5, the default for routed IP).
    pub const AAL5_LLC: LinkLayer = LinkLayer::Aal5 { encapsulation: LLC_SNAP as u32 };
    /// AAL5 with VC-based multiplexing (RFC 2684 §6: no encapsulation header).
    pub const AAL5_VC_MUX: LinkLayer = LinkLayer::Aal5 { encapsulation: 0 };

    /// Cells an IP packet of `ip_bytes` takes (AAL5 only).
    pub fn cells(self, ip_bytes: u32) -> Option<u64> {
        match self {
            LinkLayer::Aal5 { encapsulation } => Some((ip_bytes as u64 + encapsulation as u64 + AAL5_TRAILER).div_ceil(ATM_CELL_PAYLOAD)),
            LinkLayer::Ip | LinkLayer::Framing(_) => None,
        }
    }

    /// Bytes on the line for an IP packet of `ip_bytes`.
    pub fn line_bytes(self, ip_bytes: u32) -> u64 {
        match self {
            LinkLayer::Ip => ip_bytes as u64,
            LinkLayer::Framing(b) => ip_bytes as u64 + b as u64,
            LinkLayer::Aal5 { .. } => self.cells(ip_bytes).expect("AAL5 has cells") * ATM_CELL,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aal5_pads_to_whole_cells() {
        // 1500 + 8 (LLC/SNAP) + 8 (trailer) = 1516 bytes: 32 cells (1536), 1696 bytes on the line.
        assert_eq!(LinkLayer::AAL5_LLC.cells(1500), Some(32));
        assert_eq!(LinkLayer::AAL5_LLC.line_bytes(1500), 1696);
        // 9180 (the RFC 2225 default MTU) + 16 = 9196: 192 cells.
        assert_eq!(LinkLayer::AAL5_LLC.cells(9180), Some(192));
        // A 40-byte ACK: 56 bytes, two cells; without the LLC/SNAP header it fits one.
        assert_eq!(LinkLayer::AAL5_LLC.cells(40), Some(2));
        assert_eq!(LinkLayer::AAL5_VC_MUX.cells(40), Some(1));
        // Exactly full: 32 + 8 + 8 = 48.
        assert_eq!(LinkLayer::AAL5_LLC.cells(32), Some(1));
        assert_eq!(LinkLayer::AAL5_LLC.cells(33), Some(2));
    }

    #[test]
    fn framing_adds_and_ip_is_bare() {
        assert_eq!(LinkLayer::Framing(38).line_bytes(1500), 1538);
        assert_eq!(LinkLayer::Ip.line_bytes(1500), 1500);
        assert_eq!(LinkLayer::Ip.cells(1500), None);
    }
}
