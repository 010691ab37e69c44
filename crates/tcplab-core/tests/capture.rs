//! The pcapng file a tap writes, read back with pcap-file and parsed with etherparse: every
//! frame carries the flags of the segment the simulator sent (FIN included), frame by frame
//! against the tap's own columnar trace.

use std::path::PathBuf;

use etherparse::{LaxSlicedPacket, TransportSlice};
use pcap_file::pcapng::{Block, PcapNgReader};
use tcplab_core::net::packet::flags;
use tcplab_core::Run;

/// The smoke scenario (two TCP flows and a UDP stream, a tap on the sender's link), with the
/// tap also recording its trace and `loss` on the emulator.
fn smoke(loss: f64) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/smoke/smoke.toml");
    let text = std::fs::read_to_string(path).expect("smoke scenario");
    let text = text.replace("resolution = \"100ns\"", "resolution = \"100ns\"\ntrace = true");
    text.replace("loss = 0.0", &format!("loss = {loss}"))
}

/// TCP flags (as `flags::*` bits) of every frame in the file, `None` for UDP.
fn frame_flags(path: &std::path::Path) -> Vec<Option<u32>> {
    let mut r = PcapNgReader::new(std::fs::File::open(path).expect("capture written")).expect("pcapng header");
    let mut out = vec![];
    while let Some(b) = r.next_block() {
        let Block::EnhancedPacket(p) = b.expect("valid block") else { continue };
        let pkt = LaxSlicedPacket::from_ethernet(&p.data).expect("frame parses");
        out.push(match pkt.transport {
            Some(TransportSlice::Tcp(t)) => {
                let bit = |on: bool, f: u8| if on { f as u32 } else { 0 };
                Some(bit(t.fin(), flags::FIN) | bit(t.syn(), flags::SYN) | bit(t.rst(), flags::RST) | bit(t.psh(), flags::PSH) | bit(t.ack(), flags::ACK))
            }
            _ => None,
        });
    }
    out
}

#[test]
fn pcapng_frames_carry_every_tcp_flag_fin_included() {
    for (seed, loss) in [(1, 0.0), (3, 0.01)] {
        let sc = tcplab_core::scenario::parse_toml(&smoke(loss)).expect("parses");
        let dir = std::env::temp_dir().join(format!("tcplab-capture-test-{}-{seed}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut run = Run::with_capture_dir(&sc, Some(seed), Some(&dir)).expect("valid");
        run.sim.run();
        run.sim.flush_captures();
        let frames = frame_flags(&dir.join("sender.pcapng"));
        let tr = run.sim.traces.capture.as_ref().expect("the tap records a trace");
        assert_eq!(frames.len(), tr.flags.len(), "one frame per packet the tap saw");
        let mut fins = [0u32; 2];
        for (i, f) in frames.iter().enumerate() {
            if let Some(f) = f {
                assert_eq!(*f, tr.flags[i], "seed {seed}: frame {i} (flow {} dir {})", tr.flow[i], tr.dir[i]);
                if f & flags::FIN as u32 != 0 {
                    fins[tr.dir[i] as usize] += 1;
                }
            }
        }
        // Both flows' senders closed (the run stops once the receivers have everything, so
        // a receiver's own FIN may not be out yet).
        assert!(fins[0] >= 2 && fins[1] >= 1, "seed {seed}: FINs per direction {fins:?}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
