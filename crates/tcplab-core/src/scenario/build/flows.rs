//! The flows, one builder per traffic kind: a bulk TCP transfer, a UDP CBR stream, a block
//! read (a client reading striped blocks from servers), a reservoir transfer
//! (`build::reservoir`), a file copy through page caches (`build::fs_copy`). Each builder adds the flows, their
//! routes and their applications; the order of flows and routes follows the scenario's.

use std::collections::BTreeMap;

use super::agents::Agents;
use super::network::{Network, Routes};
use super::variant::tcp_flow;
use crate::app::{Application, BlockReader, BlockServer, BulkSender, CbrPiece, CbrSource, OnOffSource, Sink, Socket};
use crate::engine::{Rng, SeedTree};
use crate::flow::{Flow, FlowEngine, FlowInfo, UdpFlow};
use crate::net::link_layer::LinkLayer;
use crate::net::packet::RouteId;
use crate::scenario::resolve::{block_read_names, err, BlockReadTraffic, Res, ResolvedFlow, ResolvedScenario, TcpTraffic, Traffic, UdpCbrTraffic};
use crate::sim::Simulation;
use crate::trace::pcap::{host_address, WireIdentity};
use crate::units::{SimDuration, SimTime};

/// What every flow builder draws on.
pub(super) struct Builder<'a> {
    pub(super) seeds: &'a SeedTree,
    pub(super) net: &'a Network<'a>,
    pub(super) routes: Routes<'a>,
    pub(super) agents: &'a mut Agents,
    /// Each host's start skew and the stream its flows' delays are drawn from.
    skew: BTreeMap<String, (SimDuration, Rng)>,
    host_index: BTreeMap<String, u32>,
}

impl Builder<'_> {
    /// How late a flow from `host` starts (uniform in [0, start_skew)).
    pub(super) fn late(&mut self, host: &str) -> SimDuration {
        let (skew, rng) = self.skew.get_mut(host).expect("a flow's hosts are hosts");
        if *skew > SimDuration::ZERO {
            SimDuration(rng.below(skew.as_ps()))
        } else {
            SimDuration::ZERO
        }
    }

    /// Flow `id`'s addresses, ports and ISNs in capture files.
    pub(super) fn wire(&self, id: u32, name: &str, src: &str, dst: &str) -> WireIdentity {
        wire_identity(self.seeds, id, name, [self.host_index[src], self.host_index[dst]])
    }

    /// Host `name`'s number (its place among the hosts: its address).
    pub(super) fn host_index(&self, name: &str) -> u32 {
        self.host_index[name]
    }
}

/// Flow `id`'s addresses (of hosts number `hosts`), ports, ISNs and IP ID starts (stream
/// `flows/<name>/isn`) in capture files.
pub(super) fn wire_identity(seeds: &SeedTree, id: u32, name: &str, hosts: [u32; 2]) -> WireIdentity {
    let (sip, smac) = host_address(hosts[0]);
    let (dip, dmac) = host_address(hosts[1]);
    let mut isn = seeds.stream(&format!("flows/{name}/isn"));
    let isns = [isn.next_u64() as u32, isn.next_u64() as u32];
    // Drawn after the ISNs, so the ISNs stay what they were.
    let ip_id = [isn.next_u64() as u16, isn.next_u64() as u16];
    WireIdentity { ip: [sip, dip], mac: [smac, dmac], port: [32_768 + (id % 28_000) as u16, 5001], isn: isns, wscale: [0, 0], ip_id }
}

/// Build every flow of the scenario.
pub(super) fn build(r: &ResolvedScenario, net: &Network, seeds: &SeedTree, sim: &mut Simulation, agents: &mut Agents) -> Res<()> {
    let skew = net.host_names.iter().map(|(n, h)| (n.clone(), (h.start_skew.0, seeds.stream(&format!("hosts/{n}/start"))))).collect();
    let host_index = net.host_names.iter().enumerate().map(|(i, (n, _))| (n.clone(), i as u32)).collect();
    let mut b = Builder { seeds, net, routes: Routes::new(net), agents, skew, host_index };
    for (i, f) in r.flows.iter().enumerate() {
        match &f.traffic {
            Traffic::BlockRead(t) => block_read(&mut b, sim, i, f, t)?,
            Traffic::Tcp(t) => bulk(&mut b, sim, i, f, t)?,
            Traffic::UdpCbr(t) => udp_cbr(&mut b, sim, i, f, t)?,
            Traffic::Reservoir(t) => super::reservoir::reservoir(&mut b, sim, i, f, t)?,
            Traffic::FsCopy(t) => super::fs_copy::fs_copy(&mut b, sim, i, f, t)?,
            Traffic::Workload(t) => super::workload::workload(&mut b, sim, i, f, t)?,
            Traffic::RequestResponse(t) => super::request_response::request_response(&mut b, sim, i, f, t)?,
        }
    }
    Ok(())
}

/// The largest AAL5 frame (CPCS-SDU, ITU-T I.363.5): 65,535 bytes, encapsulation included.
const AAL5_MAX_SDU: u64 = 65_535;

/// Refuse a route whose AAL5 links cannot carry an IP packet of `max_ip` bytes in one frame
/// (LLC/SNAP adds 8 bytes); `key` is the flow's key that sets the size.
pub(super) fn check_frames(sim: &Simulation, route: RouteId, max_ip: u32, key: String) -> Res<()> {
    for &q in sim.route_pipes(route) {
        if let LinkLayer::Aal5 { encapsulation } = sim.fabric.pipes[q.0 as usize].link_layer() {
            if max_ip as u64 + encapsulation as u64 > AAL5_MAX_SDU {
                return err(key, format!("{max_ip}-byte IP packets plus {encapsulation} bytes of encapsulation exceed the largest AAL5 frame (65535 bytes) on this flow's path"));
            }
        }
    }
    Ok(())
}

/// Refuse a TCP route through an ATM port that no lone segment of `ip` bytes can cross intact:
/// its frame's cells reach the empty port faster than the UBR slots drain them, and more wait
/// when its last cell arrives than the port holds (`AtmPortConfig::lone_frame_backlog`), so
/// every such segment loses a cell, at any phase of the CBR slots, and the flow can never
/// deliver one (it would stall until the run's time cap).
pub(super) fn check_lone_frames(sim: &Simulation, route: RouteId, ip: u32, key: String) -> Res<()> {
    let pipes = sim.route_pipes(route);
    for (j, &q) in pipes.iter().enumerate() {
        let pipe = &sim.fabric.pipes[q.0 as usize];
        let (Some(port), Some(cells)) = (pipe.egress().atm_port(), pipe.link_layer().cells(ip)) else { continue };
        let cfg = port.config();
        // Cells arrive one per cell time of an AAL5 link that feeds the port, else all at once.
        let input = j.checked_sub(1).map(|u| &sim.fabric.pipes[pipes[u].0 as usize]).and_then(|up| up.link_layer().cells(40).and(up.egress().rate()));
        let cell_time = input.map_or((0, 1), |r| ((crate::net::atm_port::CELL_BITS * crate::units::PS_PER_SEC as u128) as u64, r.bps().max(1)));
        let waiting = cfg.lone_frame_backlog(cells, cell_time);
        if waiting >= cfg.ubr_buffer {
            let arriving = input.map_or("all at once (from the host)".to_string(), |r| format!("at {}", crate::units::format_rate(r)));
            return err(
                key,
                format!(
                    "a full segment ({ip}-byte IP packet) is an AAL5 frame of {cells} cells; arriving {arriving} into the empty ATM port {} it leaves at least {waiting} cells waiting, and the port holds {}, so every such segment loses a cell and the flow can never deliver one; give the port more cells or a smaller MSS",
                    pipe.name,
                    cfg.ubr_buffer
                ),
            );
        }
    }
    Ok(())
}

/// Refuse `tcp.local_congestion = "cwr"` where it cannot work: on an end whose variant may
/// hold segments the connection produced after a refused one, and on a host whose interface
/// queue cannot say whether it has room without taking the packet (a discipline of its own,
/// ECN marking, cells).
pub(super) fn check_local_congestion(sim: &mut Simulation) -> Res<()> {
    for f in 0..sim.flows.len() {
        let FlowEngine::Tcp(t) = &sim.flows[f].engine else { continue };
        for e in 0..2 {
            if t.ends[e].config().local_congestion != crate::tcp::LocalCongestion::Cwr {
                continue;
            }
            let flow = &sim.flows[f];
            let (name, host) = (flow.info.name.clone(), if e == 0 { flow.info.src.clone() } else { flow.info.dst.clone() });
            let key = format!("flows.{name}.tcp.local_congestion");
            if t.ends[e].has_variant() {
                return err(
                    key,
                    format!(
                        "\"cwr\" takes refused segments back into the connection, which the endpoint's variant \"{}\" may already hold; use \"drop\"",
                        t.ends[e].variant_name()
                    ),
                );
            }
            let route = flow.routes[e];
            if sim.fabric.first_hop_has_room(route, SimTime::ZERO, 0).is_none() {
                let first = sim.route_pipes(route)[0];
                return err(
                    key,
                    format!("\"cwr\" asks host {host}'s interface queue ({}) whether it has room before each segment; that queue has a discipline, ECN marking or cells of its own and cannot say; use \"drop\"", sim.fabric.pipes[first.0 as usize].name),
                );
            }
        }
    }
    Ok(())
}

/// `count` bulk TCP transfers from `src` to `dst`, each a bulk sender and a sink.
fn bulk(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &TcpTraffic) -> Res<()> {
    let fwd = b.routes.get(&f.src, &f.dst, sim, i)?;
    let rev = b.routes.get(&f.dst, &f.src, sim, i)?;
    check_frames(sim, fwd, t.tcp.settings.mss + 40, format!("flows[{i}].tcp.mss"))?;
    let first = t.bulk.bytes.map_or(t.tcp.settings.mss as u64, |b| b.0.min(t.tcp.settings.mss as u64));
    check_lone_frames(sim, fwd, first as u32 + 40, format!("flows[{i}].tcp.mss"))?;
    let cc = t.tcp.config().cc.name();
    let times = super::workload::PathTimesRef::of(sim, fwd, rev);
    for k in 0..f.count {
        let name = if f.count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
        let start = SimTime::ZERO + f.start.0 + b.late(&f.src);
        let id = sim.flows.len() as u32;
        let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
        b.agents.join(&t.tcp, &f.dst, id as usize, 1, i)?;
        let engine = FlowEngine::Tcp(Box::new(tcp_flow(&t.tcp, 0, b.seeds, &name, [&f.src, &f.dst])));
        let w = b.wire(id, &name, &f.src, &f.dst);
        let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind: "tcp", cc, start, download: false, background: f.background };
        let mut flow = Flow::new(info, [fwd, rev], f.class, engine);
        flow.ideal_fct = t.bulk.bytes.map(|bytes| super::workload::ideal_fct(&times, bytes.0, &t.tcp));
        sim.add_flow(flow, w);
        let app = BulkSender::new(src, t.bulk.write_size.0, t.bulk.bytes.map(|b| b.0), f.stop.map(|d| SimTime::ZERO + d.0));
        // The sender opens the flow at its start; the sink waits for it.
        sim.add_app(Application::Bulk(app), &[src], Some(start));
        let sink = match t.bulk.read {
            Some((rate, size)) => Sink::paced(dst, rate.0, size.0),
            None => Sink::new(dst),
        };
        sim.add_app(Application::Sink(sink), &[dst], None);
    }
    Ok(())
}

/// `count` constant-bit-rate UDP streams from `src` to `dst`.
fn udp_cbr(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &UdpCbrTraffic) -> Res<()> {
    let fwd = b.routes.get(&f.src, &f.dst, sim, i)?;
    // A host cannot put datagrams on the wire faster than its own link (the first rated pipe
    // of its route); a faster source would only be dropped at its own NIC, at up to 10^12
    // events per simulated second, which looks like a hang.
    // Checked per piece of a schedule.
    let nic = sim.route_pipes(fwd).iter().find_map(|&q| sim.fabric.pipes[q.0 as usize].egress().rate());
    let pieces: std::sync::Arc<[CbrPiece]> = t.cbr.pieces().into();
    for (j, piece) in pieces.iter().enumerate() {
        if let Some(nic) = nic.filter(|&nic| piece.rate > nic) {
            return err(
                t.cbr.rate_path(&format!("flows[{i}]"), j),
                format!("{} is faster than the link out of '{}' ({nic}); a host cannot send faster than its interface", piece.rate, f.src),
            );
        }
    }
    let rev = b.routes.get(&f.dst, &f.src, sim, i)?;
    check_frames(sim, fwd, t.cbr.packet_size.0 as u32, format!("flows[{i}].cbr.packet_size"))?;
    for k in 0..f.count {
        let name = if f.count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
        let start = SimTime::ZERO + f.start.0 + b.late(&f.src);
        let id = sim.flows.len() as u32;
        let src = Socket::new(id, 0);
        let w = b.wire(id, &name, &f.src, &f.dst);
        let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind: "udp-cbr", cc: "none", start, download: false, background: f.background };
        sim.add_flow(Flow::new(info, [fwd, rev], f.class, FlowEngine::Udp(UdpFlow::default())), w);
        let stop_at = f.stop.map(|d| SimTime::ZERO + d.0);
        let app = match t.cbr.periods() {
            // Each on/off source draws its periods from a stream of its own.
            Some(periods) => Application::OnOff(OnOffSource::new(
                src,
                pieces[0].rate,
                t.cbr.packet_size.0 as u32,
                periods,
                b.seeds.stream(&format!("flows/{}/on_off", sim.flows[id as usize].info.name)),
                start,
                stop_at,
            )),
            None => Application::Cbr(CbrSource::new(src, pieces.clone(), t.cbr.packet_size.0 as u32, start, stop_at)),
        };
        sim.add_app(app, &[src], Some(start));
    }
    Ok(())
}

/// Each client (a host, or every member of a group) reads `blocks` blocks striped over the
/// first `servers` members of `dst`, one TCP connection per server: the client (end 0)
/// receives the data, the server (end 1) sends it.
fn block_read(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &BlockReadTraffic) -> Res<()> {
    let clients = b.net.members(&f.src);
    let servers = &b.net.members(&f.dst)[..t.block_read.servers as usize];
    let names = block_read_names(&f.name, clients.len(), b.net.groups.contains_key(f.src.as_str()), t.block_read.servers);
    let cc = t.tcp.config().cc.name();
    for (client, names) in clients.iter().zip(names) {
        let start = SimTime::ZERO + f.start.0 + b.late(client);
        let mut sockets = Vec::with_capacity(servers.len());
        for (server, name) in servers.iter().zip(names) {
            let fwd = b.routes.get(client, server, sim, i)?;
            let rev = b.routes.get(server, client, sim, i)?;
            check_frames(sim, rev, t.tcp.settings.mss + 40, format!("flows[{i}].tcp.mss"))?;
            let first = t.block_read.sru.0.min(t.tcp.settings.mss as u64);
            check_lone_frames(sim, rev, first as u32 + 40, format!("flows[{i}].tcp.mss"))?;
            let id = sim.flows.len() as u32;
            let engine = FlowEngine::Tcp(Box::new(tcp_flow(&t.tcp, 1, b.seeds, &name, [client, server])));
            b.agents.join(&t.tcp, client, id as usize, 0, i)?;
            let info = FlowInfo { name: name.clone(), src: client.clone(), dst: server.clone(), kind: "tcp", cc, start, download: true, background: false };
            let w = b.wire(id, &name, client, server);
            sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), w);
            let server_socket = Socket::new(id, 1);
            sim.add_app(Application::BlockServer(BlockServer::new(server_socket, t.block_read.sru.0, t.block_read.request.0)), &[server_socket], None);
            sockets.push(Socket::new(id, 0));
        }
        let reader = BlockReader::new(sockets.clone(), t.block_read.sru.0, t.block_read.request.0, t.block_read.blocks);
        sim.add_app(Application::BlockReader(reader), &sockets, Some(start));
    }
    Ok(())
}
