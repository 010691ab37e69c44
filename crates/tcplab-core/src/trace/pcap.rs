//! Header captures as pcapng: the only place where packets become bytes. Frames are
//! Ethernet II + IPv4 (or IPv6 for a flow that uses it: `fd00::` plus the host's IPv4
//! address) + TCP (with options) or UDP, built with `etherparse` from the header
//! model and written with `pcap-file` through a buffered file, one Enhanced Packet Block at a
//! time — memory stays bounded however long the capture. Payload is not stored: each record's
//! captured length is the headers, its original length the whole frame, so readers show the
//! packets as truncated by the snap length, not malformed. TCP checksums are left 0 (there is
//! no payload to sum); the IPv4 header checksum is correct.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::Path;
use std::time::Duration;

use etherparse::{EtherType, Ethernet2Header, IpEcn, IpNumber, Ipv4Header, Ipv6FlowLabel, Ipv6Header, TcpHeader as WireTcp, TcpOptionElement, UdpHeader};
use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketBlock;
use pcap_file::pcapng::blocks::interface_description::{InterfaceDescriptionBlock, InterfaceDescriptionOption};
use pcap_file::pcapng::blocks::name_resolution::{Ipv4Record, Ipv6Record, NameResolutionBlock, Record};
use pcap_file::pcapng::blocks::section_header::{SectionHeaderBlock, SectionHeaderOption};
use pcap_file::pcapng::PcapNgWriter;
use pcap_file::{DataLink, Endianness};

use crate::epoch::Epoch;
use crate::net::packet::{flags, Body, Ecn, Packet, TcpHeader};
use crate::net::wire::{to_wire, WireOption, WireView};
use crate::units::SimTime;

/// Bytes of Ethernet II header before the IP packet.
pub const ETHERNET_HEADER: u32 = 14;
/// Snap length announced for every interface: the largest header stack we write.
pub const SNAPLEN: u32 = 14 + 60 + 60;

/// Addresses and sequence offsets of one flow, as they appear on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WireIdentity {
    /// IPv4 address of the source host and of the destination host.
    pub ip: [[u8; 4]; 2],
    /// MAC address of the source host and of the destination host.
    pub mac: [[u8; 6]; 2],
    /// TCP/UDP port at the source and at the destination.
    pub port: [u16; 2],
    /// Initial sequence number of each end (internal sequence 0 maps to it).
    pub isn: [u32; 2],
    /// Window-scale shift each end applies to the windows it advertises.
    pub wscale: [u8; 2],
    /// Each end's first IPv4 Identification (Linux starts a connected socket's at a random
    /// value and adds one per packet); a packet's field is this plus its `Packet::ip_id`.
    pub ip_id: [u16; 2],
}

/// The wire address of host number `i` (10.x.y.z, from 10.0.0.1) and its MAC address.
pub fn host_address(i: u32) -> ([u8; 4], [u8; 6]) {
    let n = i + 1;
    ([10, (n >> 16) as u8, (n >> 8) as u8, n as u8], [0x02, 0, (n >> 24) as u8, (n >> 16) as u8, (n >> 8) as u8, n as u8])
}

/// Encode `pkt` (sent by end `from`: 0 = flow source, 1 = destination) into `buf` (headers
/// only); returns the original frame length.
pub fn encode(pkt: &Packet, from: usize, id: &WireIdentity, buf: &mut Vec<u8>) -> u32 {
    buf.clear();
    let to = 1 - from;
    let eth = Ethernet2Header { source: id.mac[from], destination: id.mac[to], ether_type: EtherType::IPV4 };
    let original = ETHERNET_HEADER + pkt.size;
    let ip_payload = (pkt.size - 20) as u16;
    match &pkt.body {
        Body::Tcp(h) if h.ipv6 => {
            // Traffic class: DSCP 0 and the ECN bits in its low two (RFC 3168 §5).
            let ip = Ipv6Header {
                traffic_class: h.ecn as u8,
                flow_label: Ipv6FlowLabel::ZERO,
                payload_length: (pkt.size - 40) as u16,
                next_header: IpNumber::TCP,
                hop_limit: 64,
                source: ipv6_of(id.ip[from]),
                destination: ipv6_of(id.ip[to]),
            };
            let tcp = wire_tcp(h, from, id);
            Ethernet2Header { ether_type: EtherType::IPV6, ..eth }.write(buf).expect("Vec write");
            ip.write(buf).expect("Vec write");
            tcp.write(buf).expect("Vec write");
        }
        Body::Tcp(h) => {
            let mut ip = Ipv4Header::new(ip_payload, 64, IpNumber::TCP, id.ip[from], id.ip[to]).expect("IP payload fits 16 bits");
            ip.identification = id.ip_id[from].wrapping_add(pkt.ip_id);
            ip.ecn = match h.ecn {
                Ecn::NotEct => IpEcn::NotEct,
                Ecn::Ect1 => IpEcn::Ect1,
                Ecn::Ect0 => IpEcn::Ect0,
                Ecn::Ce => IpEcn::CongestionExperienced,
            };
            ip.header_checksum = ip.calc_header_checksum();
            let tcp = wire_tcp(h, from, id);
            eth.write(buf).expect("Vec write");
            ip.write(buf).expect("Vec write");
            tcp.write(buf).expect("Vec write");
            debug_assert_eq!(tcp.header_len() as u32, 20 + h.options_len(), "option layout matches the size model");
        }
        Body::Udp { len, .. } => {
            let mut ip = Ipv4Header::new(ip_payload, 64, IpNumber::UDP, id.ip[from], id.ip[to]).expect("IP payload fits 16 bits");
            ip.identification = id.ip_id[from].wrapping_add(pkt.ip_id);
            ip.header_checksum = ip.calc_header_checksum();
            let udp = UdpHeader::without_ipv4_checksum(id.port[from], id.port[to], *len as usize).expect("UDP length fits");
            eth.write(buf).expect("Vec write");
            ip.write(buf).expect("Vec write");
            udp.write(buf).expect("Vec write");
        }
    }
    original
}

/// A host's IPv6 address: the unique-local prefix `fd00::/8` with its IPv4 address as the last
/// 32 bits (`fd00::10.0.0.1`).
fn ipv6_of(v4: [u8; 4]) -> [u8; 16] {
    let mut a = [0u8; 16];
    a[0] = 0xfd;
    a[12..].copy_from_slice(&v4);
    a
}

fn wire_tcp(h: &TcpHeader, from: usize, id: &WireIdentity) -> WireTcp {
    let to = 1 - from;
    let w = to_wire(h, &WireView { isn: id.isn[from], peer_isn: id.isn[to], shift: id.wscale[from] });
    let mut t = WireTcp::new(id.port[from], id.port[to], w.seq, w.window);
    t.acknowledgment_number = w.ack;
    t.fin = w.flags & flags::FIN != 0;
    t.syn = w.flags & flags::SYN != 0;
    t.rst = w.flags & flags::RST != 0;
    t.psh = w.flags & flags::PSH != 0;
    t.ack = w.flags & flags::ACK != 0;
    t.ece = w.flags & flags::ECE != 0;
    t.cwr = w.flags & flags::CWR != 0;
    let opts: Vec<TcpOptionElement> = w
        .options
        .iter()
        .map(|o| match *o {
            WireOption::Eol | WireOption::Nop => TcpOptionElement::Noop,
            WireOption::Mss(m) => TcpOptionElement::MaximumSegmentSize(m),
            WireOption::WindowScale(s) => TcpOptionElement::WindowScale(s),
            WireOption::SackPermitted => TcpOptionElement::SelectiveAcknowledgementPermitted,
            WireOption::Timestamp(v, e) => TcpOptionElement::Timestamp(v, e),
            WireOption::Sack { .. } => {
                let b = o.sack_blocks();
                let mut rest = [None; 3];
                for (k, blk) in b[1..].iter().take(3).enumerate() {
                    rest[k] = Some(*blk);
                }
                TcpOptionElement::SelectiveAcknowledgement(b[0], rest)
            }
        })
        .collect();
    t.set_options(&opts).expect("options fit in 40 bytes");
    t
}

/// What a capture file says about itself besides its packets.
#[derive(Clone, Debug, Default)]
pub struct CaptureHeader {
    /// The section header's comment: what was captured (scenario, seed, tap).
    pub comment: String,
    /// Every host's name and IPv4 address, for the name-resolution block (each IPv6 address,
    /// `fd00::` + the IPv4 address, is named too).
    pub hosts: Vec<(String, [u8; 4])>,
    /// The wall-clock time simulated time 0 is written at.
    pub epoch: Epoch,
}

/// A pcapng file being written.
pub struct PcapWriter {
    w: PcapNgWriter<BufWriter<File>>,
    buf: Vec<u8>,
    resolution_ps: u64,
    epoch_ns: u64,
}

impl std::fmt::Debug for PcapWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PcapWriter").field("resolution_ps", &self.resolution_ps).field("epoch_ns", &self.epoch_ns).finish()
    }
}

impl PcapWriter {
    /// Create `path`: a section header naming the program and `header.comment`, one
    /// interface per `(name, speed in bit/s)`, a name-resolution block for `header.hosts`;
    /// timestamps are simulated time rounded down to `resolution_ps`, plus `header.epoch`,
    /// stored in nanoseconds.
    pub fn create(path: &Path, interfaces: &[(String, u64)], resolution_ps: u64, header: &CaptureHeader) -> io::Result<Self> {
        let file = BufWriter::with_capacity(1 << 20, File::create(path)?);
        let mut shb_options = vec![SectionHeaderOption::UserApplication(Cow::Owned(format!("tcplab {}", env!("CARGO_PKG_VERSION"))))];
        if !header.comment.is_empty() {
            shb_options.push(SectionHeaderOption::Comment(Cow::Owned(header.comment.clone())));
        }
        let endianness = if cfg!(target_endian = "big") { Endianness::Big } else { Endianness::Little };
        let shb = SectionHeaderBlock { endianness, options: shb_options, ..SectionHeaderBlock::default() };
        let mut w = PcapNgWriter::with_section_header(file, shb).map_err(to_io)?;
        for (name, speed) in interfaces {
            let idb = InterfaceDescriptionBlock {
                linktype: DataLink::ETHERNET,
                snaplen: SNAPLEN,
                options: vec![
                    InterfaceDescriptionOption::IfName(Cow::Owned(name.clone())),
                    InterfaceDescriptionOption::IfSpeed(*speed),
                    InterfaceDescriptionOption::IfTsResol(9),
                    InterfaceDescriptionOption::IfHardware(Cow::Borrowed("tcplab tap")),
                ],
            };
            w.write_pcapng_block(idb).map_err(to_io)?;
        }
        if !header.hosts.is_empty() {
            let mut records = Vec::with_capacity(2 * header.hosts.len());
            for (name, ip) in &header.hosts {
                records.push(Record::Ipv4(Ipv4Record { ip_addr: Cow::Owned(ip.to_vec()), names: vec![Cow::Owned(name.clone())] }));
                records.push(Record::Ipv6(Ipv6Record { ip_addr: Cow::Owned(ipv6_of(*ip).to_vec()), names: vec![Cow::Owned(name.clone())] }));
            }
            w.write_pcapng_block(NameResolutionBlock { records, options: vec![] }).map_err(to_io)?;
        }
        Ok(PcapWriter { w, buf: Vec::with_capacity(256), resolution_ps: resolution_ps.max(1), epoch_ns: header.epoch.0 })
    }

    /// Write one packet seen at `t` on interface `iface`, sent by end `from` of its flow.
    pub fn write(&mut self, iface: u32, t: SimTime, pkt: &Packet, from: usize, id: &WireIdentity) -> io::Result<()> {
        let original = encode(pkt, from, id, &mut self.buf);
        let ps = t.0 / self.resolution_ps * self.resolution_ps;
        let epb = EnhancedPacketBlock {
            interface_id: iface,
            timestamp: Duration::from_nanos(self.epoch_ns + ps / 1_000),
            original_len: original,
            data: Cow::Borrowed(&self.buf),
            options: vec![],
        };
        self.w.write_pcapng_block(epb).map_err(to_io)?;
        Ok(())
    }

    /// Flush buffered records to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        use std::io::Write;
        self.w.get_mut().flush()
    }
}

fn to_io(e: pcap_file::PcapError) -> io::Error {
    io::Error::other(e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::packet::{flags, End, FlowId, RouteId};

    fn ident() -> WireIdentity {
        let (a, ma) = host_address(0);
        let (b, mb) = host_address(1);
        WireIdentity { ip: [a, b], mac: [ma, mb], port: [40000, 5001], isn: [u32::MAX - 10, 7], wscale: [7, 9], ip_id: [65_530, 0] }
    }

    fn tcp_pkt(h: TcpHeader) -> Packet {
        Packet {
            flow: FlowId(0),
            to: End::Dst,
            route: RouteId(0),
            hop: 0,
            class: 0,
            link: crate::net::link_layer::LinkMark::INTACT,
            size: h.ip_len(),
            created: SimTime::ZERO,
            ip_id: 0,
            body: Body::Tcp(h),
        }
    }

    #[test]
    fn frames_parse_back_with_the_model_values() {
        let mut h = TcpHeader { seq: 100, ack: 5, len: 1000, flags: flags::ACK | flags::PSH, window: 1 << 20, timestamps: Some((11, 22)), ..TcpHeader::default() };
        h.set_sack_blocks(&[(200, 300), (400, 500)]);
        let p = Packet { ip_id: 10, ..tcp_pkt(h) };
        let mut buf = Vec::new();
        let orig = encode(&p, 0, &ident(), &mut buf);
        assert_eq!(orig, 14 + h.ip_len());
        // Lax parsing: the payload is absent by design (captured length < original length).
        let parsed = etherparse::LaxSlicedPacket::from_ethernet(&buf).expect("parses");
        let Some(etherparse::LaxNetSlice::Ipv4(ip)) = parsed.net else { panic!("IPv4") };
        assert_eq!(ip.header().total_len() as u32, h.ip_len(), "IP length is the real packet's");
        // The end's start (65,530) plus its count (10), wrapping at 2^16; don't-fragment set.
        assert_eq!(ip.header().identification(), 4);
        assert!(ip.header().dont_fragment());
        let Some(etherparse::TransportSlice::Tcp(t)) = parsed.transport else { panic!("TCP") };
        // Sequence numbers wrap past 2^32 from the ISN.
        assert_eq!(t.sequence_number(), (u32::MAX - 10).wrapping_add(100));
        assert_eq!(t.acknowledgment_number(), 12);
        assert_eq!(t.window_size() as u32, (1u32 << 20) >> 7);
        assert_eq!(t.header_len() as u32, 20 + h.options_len());
        assert!(t.psh() && t.ack() && !t.syn());
    }

    #[test]
    fn an_ipv6_segment_is_20_bytes_longer_and_parses_as_ipv6() {
        let v4 = TcpHeader { seq: 100, ack: 5, len: 1000, flags: flags::ACK, window: 1 << 16, ecn: Ecn::Ect0, ..TcpHeader::default() };
        let v6 = TcpHeader { ipv6: true, ..v4 };
        assert_eq!(v6.ip_len(), v4.ip_len() + 20);
        let mut buf = Vec::new();
        let orig = encode(&tcp_pkt(v6), 0, &ident(), &mut buf);
        assert_eq!(orig, 14 + 40 + 20 + 1000);
        let parsed = etherparse::LaxSlicedPacket::from_ethernet(&buf).expect("parses");
        let Some(etherparse::LaxNetSlice::Ipv6(ip)) = parsed.net else { panic!("IPv6") };
        let hdr = ip.header();
        assert_eq!(hdr.payload_length() as u32, 20 + 1000, "payload length is TCP header + payload");
        assert_eq!(hdr.traffic_class() & 3, 2, "ECT(0) in the traffic class");
        assert_eq!(hdr.source_addr(), std::net::Ipv6Addr::from(ipv6_of(ident().ip[0])));
        let Some(etherparse::TransportSlice::Tcp(t)) = parsed.transport else { panic!("TCP") };
        assert_eq!(t.sequence_number(), (u32::MAX - 10).wrapping_add(100));
    }

    #[test]
    fn ecn_bits_reach_the_wire() {
        // RFC 3168: the IP header's ECN field (the TOS byte's low two bits) and the TCP
        // header's ECE (0x40) and CWR (0x80) flags.
        for (ecn, wire) in [(Ecn::NotEct, IpEcn::NotEct), (Ecn::Ect0, IpEcn::Ect0), (Ecn::Ect1, IpEcn::Ect1), (Ecn::Ce, IpEcn::CongestionExperienced)] {
            let h = TcpHeader { seq: 1, ack: 1, len: 100, flags: flags::ACK | flags::ECE | flags::CWR, ecn, ..TcpHeader::default() };
            let mut buf = Vec::new();
            encode(&tcp_pkt(h), 0, &ident(), &mut buf);
            assert_eq!(buf[14 + 1] & 0x03, ecn as u8, "TOS byte's ECN bits");
            let parsed = etherparse::LaxSlicedPacket::from_ethernet(&buf).unwrap();
            let Some(etherparse::LaxNetSlice::Ipv4(ip)) = parsed.net else { panic!("IPv4") };
            assert_eq!(ip.header().ecn(), wire);
            assert!(ip.header().to_header().calc_header_checksum() == ip.header().header_checksum(), "checksum covers the ECN bits");
            let Some(etherparse::TransportSlice::Tcp(t)) = parsed.transport else { panic!() };
            assert!(t.ece() && t.cwr() && t.ack());
            assert_eq!(buf[14 + 20 + 13], 0x80 | 0x40 | 0x10, "flags byte");
        }
    }

    #[test]
    fn syn_options_have_the_linux_layout() {
        let h = TcpHeader { flags: flags::SYN, window: 65_535, mss: Some(1460), wscale: Some(7), sack_permitted: true, timestamps: Some((1, 0)), ..TcpHeader::default() };
        let mut buf = Vec::new();
        encode(&tcp_pkt(h), 0, &ident(), &mut buf);
        assert_eq!(buf.len() as u32, 14 + 20 + 20 + 20);
        let parsed = etherparse::LaxSlicedPacket::from_ethernet(&buf).unwrap();
        let Some(etherparse::TransportSlice::Tcp(t)) = parsed.transport else { panic!() };
        assert_eq!(t.window_size(), 65_535, "SYN windows are not scaled");
        let opts: Vec<_> = t.options_iterator().map(|o| o.unwrap()).collect();
        assert!(opts.contains(&TcpOptionElement::MaximumSegmentSize(1460)));
        assert!(opts.contains(&TcpOptionElement::WindowScale(7)));
    }
}
