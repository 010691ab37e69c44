//! The builder of an fs-copy flow (study 002's conventional copy): one TCP stream from `src`
//! to `dst`, netcat at each end (`app::fs_copy`), each over its host's page cache and disk.

use super::flows::{check_frames, check_lone_frames, Builder};
use super::variant::tcp_flow;
use crate::app::storage::page_cache::PageCache;
use crate::app::{Application, FsCopySink, FsCopySource, Socket};
use crate::flow::{Flow, FlowEngine, FlowInfo};
use crate::scenario::resolve::{FsCopyTraffic, Res, ResolvedFlow, ResolvedFsCopy};
use crate::scenario::ScenarioError;
use crate::sim::Simulation;
use crate::units::SimTime;

/// Host `host`'s page cache over the file at `position` of its disk, the spindle at a phase
/// drawn from `hosts/<host>/disks` (as a reservoir's disk servers').
fn cache(b: &Builder, c: &ResolvedFsCopy, position: f64, host: &str, key: &str) -> Res<PageCache> {
    let mut pc = PageCache::new(c.page_cache(), c.file.0, c.base_lba(position), c.disk.params(), c.disk.bus_params()).map_err(|e| ScenarioError::new(key, e))?;
    pc.set_rotation_phase(b.seeds.stream(&format!("hosts/{host}/disks")).next_u64());
    Ok(pc)
}

/// Build flow `i`, a file copy.
pub(super) fn fs_copy(b: &mut Builder, sim: &mut Simulation, i: usize, f: &ResolvedFlow, t: &FsCopyTraffic) -> Res<()> {
    let c = &t.fs_copy;
    let fwd = b.routes.get(&f.src, &f.dst, sim, i)?;
    let rev = b.routes.get(&f.dst, &f.src, sim, i)?;
    let mss = t.tcp.settings.mss;
    check_frames(sim, fwd, mss + 40, format!("flows[{i}].tcp.mss"))?;
    check_lone_frames(sim, fwd, mss.min(c.file.0.min(u32::MAX as u64) as u32) + 40, format!("flows[{i}].tcp.mss"))?;
    let cc = t.tcp.config().cc.name();
    let start = SimTime::ZERO + f.start.0 + b.late(&f.src);
    let id = sim.flows.len() as u32;
    let (src, dst) = (Socket::new(id, 0), Socket::new(id, 1));
    b.agents.join(&t.tcp, &f.dst, id as usize, 1, i)?;
    let engine = FlowEngine::Tcp(Box::new(tcp_flow(&t.tcp, 0, b.seeds, &f.name, [&f.src, &f.dst])));
    let w = b.wire(id, &f.name, &f.src, &f.dst);
    let info = FlowInfo { name: f.name.clone(), src: f.src.clone(), dst: f.dst.clone(), kind: "tcp", cc, start, download: false, background: f.background };
    sim.add_flow(Flow::new(info, [fwd, rev], f.class, engine), w);
    let key = format!("flows[{i}].fs_copy");
    let source = FsCopySource::new(src, cache(b, c, c.src_position, &f.src, &key)?, c.file.0, c.buffer.0);
    sim.add_app(Application::FsCopySource(Box::new(source)), &[src], Some(start));
    let sink = FsCopySink::new(dst, cache(b, c, c.dst_position, &f.dst, &key)?, c.buffer.0);
    sim.add_app(Application::FsCopySink(Box::new(sink)), &[dst], None);
    Ok(())
}
