//! Request/response flows: per connection (`count` of them per pair of hosts, one pair per
//! member pair between groups), a `RequestClient` at the source and a `RequestServer` at the
//! destination, the client measuring each message against its path's yardstick. Each
//! connection's arrivals and response sizes come from its own streams,
//! `flows/<name>/arrivals` and `flows/<name>/sizes`.

use std::sync::Arc;

use super::flows::{check_frames, Builder};
use super::variant::tcp_flow;
use super::workload::{ideal_message, PathTimesRef, SegmentFormat};
use crate::app::request_response::MessageYardstick;
use crate::app::{Application, RequestClient, RequestServer, Socket};
use crate::flow::{Flow, FlowEngine, FlowInfo};
use crate::scenario::resolve::{RequestResponseTraffic, Res, ResolvedFlow};
use crate::sim::Simulation;
use crate::units::{SimDuration, SimTime};

/// A connection's paths as a message yardstick (`ideal_message`).
#[derive(Debug)]
struct PathYardstick {
    paths: PathTimesRef,
    format: SegmentFormat,
}

impl MessageYardstick for PathYardstick {
    fn ideal(&self, request: u64, response: u64) -> SimDuration {
        ideal_message(&self.paths, self.format, request, response)
    }
}

/// `count` request/response connections from `src` (the clients) to `dst` (the servers).
pub(super) fn request_response(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &RequestResponseTraffic) -> Res<()> {
    let fwd = b.routes.get(&f.src, &f.dst, sim, i)?;
    let rev = b.routes.get(&f.dst, &f.src, sim, i)?;
    check_frames(sim, fwd, t.tcp.settings.mss + 40, format!("flows[{i}].tcp.mss"))?;
    check_frames(sim, rev, t.tcp.settings.mss + 40, format!("flows[{i}].tcp.mss"))?;
    let cc = t.tcp.config().cc.name();
    let rr = &t.request_response;
    sim.summarise_messages();
    let yardstick: Arc<dyn MessageYardstick> = Arc::new(PathYardstick { paths: PathTimesRef::of(sim, fwd, rev), format: SegmentFormat::of(&t.tcp) });
    for k in 0..f.count {
        let name = if f.count > 1 { format!("{}.{k}", f.name) } else { f.name.clone() };
        let start = SimTime::ZERO + f.start.0 + b.late(&f.src);
        let id = sim.flows.len() as u32;
        let (client, server) = (Socket::new(id, 0), Socket::new(id, 1));
        // The responses are the data: the server's end sends it (the summary reads that end).
        let engine = FlowEngine::Tcp(Box::new(tcp_flow(&t.tcp, 1, b.seeds, &name, [&f.src, &f.dst])));
        let w = b.wire(id, &name, &f.src, &f.dst);
        let streams = (b.seeds.stream(&format!("flows/{name}/arrivals")), b.seeds.stream(&format!("flows/{name}/sizes")));
        let info = FlowInfo { name, src: f.src.clone(), dst: f.dst.clone(), kind: "tcp", cc, start, download: true, background: f.background };
        sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), w);
        let stop_at = f.stop.map(|d| SimTime::ZERO + d.0);
        let app = RequestClient::new(client, rr.request.0, rr.response_dist(), rr.request_arrivals(), streams, rr.messages, stop_at, yardstick.clone());
        sim.add_app(Application::RequestClient(Box::new(app)), &[client], Some(start));
        sim.add_app(Application::RequestServer(RequestServer::new(server)), &[server], None);
    }
    Ok(())
}
