//! The builder of a reservoir flow (study 002): one TCP stream per disk server, its
//! applications (`app::storage`) and each disk server's volume — its share of the striped file
//! over its own disks and bus.
//!
//! Remote access: stream `s` runs from source disk server `s` (the initiator, which opens it and
//! sends the data) to destination disk server `s` (the target). Local access: stream `s` runs
//! between the file server (the initiator, which opens it and receives the data) and disk
//! server `s` (the target, which sends it).

use super::flows::{check_frames, check_lone_frames, Builder};
use super::variant::tcp_flow;
use crate::app::storage::volume::Volume;
use crate::app::storage::{BlockInitiator, DiskTarget};
use crate::app::{Application, Socket};
use crate::flow::{Flow, FlowEngine, FlowInfo};
use crate::scenario::resolve::{reservoir_names, Res, ReservoirTraffic, ResolvedFlow, ResolvedReservoir, SECTOR_BYTES};
use crate::scenario::spec::{Access, Placement};
use crate::scenario::ScenarioError;
use crate::sim::Simulation;
use crate::units::SimTime;

/// The iSCSI target's well-known TCP port (RFC 3720; IANA `iscsi-target`): captures
/// show the sessions as iSCSI.
const ISCSI_PORT: u16 = 3260;

/// Disk server `host`'s volume: its share of the file over its disks, each disk's spindle at
/// a phase drawn from `hosts/<host>/disks` (disks spin freely before a run starts: where each
/// platter stands when the first command arrives is the run-to-run variation a testbed has);
/// with a scattered placement, each stripe unit's slot drawn from `hosts/<host>/placement`.
fn volume(b: &Builder, r: &ResolvedReservoir, share: u64, host: &str) -> Res<Volume> {
    let mut v =
        Volume::new(share, r.disks, r.disk_stripe_unit.0, r.base_lba(), r.disk.max_request.0, r.disk_params(), r.bus_params()).map_err(|e| ScenarioError::new("reservoir", e))?;
    let mut rng = b.seeds.stream(&format!("hosts/{host}/disks"));
    v.set_rotation_phases(|| rng.next_u64());
    if r.placement == Placement::Scattered {
        let mut rng = b.seeds.stream(&format!("hosts/{host}/placement"));
        v.scatter(|n| rng.below(n)).map_err(|e| ScenarioError::new("reservoir", e))?;
    }
    Ok(v)
}

/// Build flow `i`, a reservoir transfer.
pub(super) fn reservoir(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &ReservoirTraffic) -> Res<()> {
    let r = &t.reservoir;
    let stripe = r.stripe();
    let servers: Vec<String> = b.net.members(&f.src).iter().take(r.servers as usize).cloned().collect();
    let names = reservoir_names(&f.name, r.servers);
    let cc = t.tcp.config().cc.name();
    let session = r.session();
    let key = || format!("flows[{i}].reservoir");
    let mss = t.tcp.settings.mss;
    // A PDU is written whole (`Sockets::write_record`): one larger than the send buffer could
    // never be sent, and the transfer would stall for ever.
    let largest = session.pdu_wire_bytes(session.max_recv_data_segment_length_initiator.max(session.max_recv_data_segment_length_target) as u64);
    let sndbuf = t.tcp.config().sndbuf;
    if sndbuf < largest {
        return Err(ScenarioError::new(
            format!("flows[{i}].tcp.sndbuf"),
            format!("{sndbuf} bytes cannot hold one {largest}-byte iSCSI PDU (reservoir.iscsi.max_recv_data_segment_length plus its header); a PDU is written whole"),
        ));
    }
    let mut local_streams = Vec::new();
    for (s, (server, name)) in servers.iter().zip(&names).enumerate() {
        let share = stripe.server_bytes(r.file.0, s as u32);
        // (initiator host, target host, the data's sender end: 0 the initiator, 1 the target)
        let (initiator, target, sender) = match r.access {
            Access::Remote => (server.clone(), b.net.members(&f.dst)[s].clone(), 0),
            Access::Local => (f.dst.clone(), server.clone(), 1),
        };
        let fwd = b.routes.get(&initiator, &target, sim, i)?;
        let rev = b.routes.get(&target, &initiator, sim, i)?;
        let data_route = if sender == 0 { fwd } else { rev };
        check_frames(sim, data_route, mss + 40, format!("flows[{i}].tcp.mss"))?;
        check_lone_frames(sim, data_route, mss + 40, format!("flows[{i}].tcp.mss"))?;
        let id = sim.flows.len() as u32;
        let receiver = if sender == 0 { &target } else { &initiator };
        b.agents.join(&t.tcp, receiver, id as usize, 1 - sender, i)?;
        let engine = FlowEngine::Tcp(Box::new(tcp_flow(&t.tcp, sender, b.seeds, name, [&initiator, &target])));
        let start = SimTime::ZERO + f.start.0 + b.late(&initiator);
        let info = FlowInfo { name: name.clone(), src: initiator.clone(), dst: target.clone(), kind: "tcp", cc, start, download: sender == 1, background: f.background };
        let mut w = b.wire(id, name, &initiator, &target);
        w.port[1] = ISCSI_PORT;
        sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), w);
        let (ini, tgt) = (Socket::new(id, 0), Socket::new(id, 1));
        let target_app = DiskTarget::new(vec![tgt], session, volume(b, r, share, &target)?, SECTOR_BYTES).map_err(|e| ScenarioError::new(key(), e))?;
        sim.add_app(Application::DiskTarget(Box::new(target_app)), &[tgt], None);
        match r.access {
            Access::Remote => {
                let app =
                    BlockInitiator::new(vec![(ini, share)], session, r.block.0, SECTOR_BYTES, Some(volume(b, r, share, &initiator)?)).map_err(|e| ScenarioError::new(key(), e))?;
                sim.add_app(Application::BlockInitiator(Box::new(app)), &[ini], Some(start));
            }
            Access::Local => local_streams.push((ini, share, start)),
        }
    }
    if let Some(&(_, _, start)) = local_streams.first() {
        let sockets: Vec<Socket> = local_streams.iter().map(|x| x.0).collect();
        let streams = local_streams.iter().map(|x| (x.0, x.1)).collect();
        let app = BlockInitiator::new(streams, session, r.block.0, SECTOR_BYTES, None).map_err(|e| ScenarioError::new(key(), e))?;
        sim.add_app(Application::BlockInitiator(Box::new(app)), &sockets, Some(start));
    }
    Ok(())
}
