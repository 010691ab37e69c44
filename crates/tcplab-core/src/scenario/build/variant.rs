//! The variant factory: a TCP flow's two endpoints from its resolved `tcp` table — plain
//! connections, or connections with the policies of the variant the table names.

use crate::engine::SeedTree;
use crate::flow::TcpFlow;
use crate::scenario::resolve::{ResolvedTcp, ResolvedVariant};
use crate::tcp::ahtcp::{AhtcpReceiver, AhtcpSender};
use crate::tcp::{Connection, Endpoint, TcpConfig, Variant};
use crate::units::SimDuration;

/// The (data sender's, data receiver's) policies of `variant`, if it has any.
fn policies(variant: &ResolvedVariant) -> Option<(Box<dyn Variant>, Box<dyn Variant>)> {
    match variant {
        ResolvedVariant::None => None,
        ResolvedVariant::Ahtcp { ahtcp } => {
            let c = ahtcp.config();
            Some((Box::new(AhtcpSender::new(&c)), Box::new(AhtcpReceiver::new(&c))))
        }
    }
}

/// A TCP flow's two endpoints (`sender`: the end that sends the data); each end's randomised
/// RTO (if any) draws from a stream of its own, `flows/<name>/rto/<end>`. With `timer_ticks`
/// or `timer_grid = "hz"`, each end's clock ticks fall at its host's phase, drawn once per host
/// from `hosts/<host>/clock`, uniform in [0, 1 s) (1 s holds whole 200 ms and 500 ms ticks;
/// a 1/HZ grid takes the phase modulo its tick).
pub(super) fn tcp_flow(tcp: &ResolvedTcp, sender: usize, seeds: &SeedTree, name: &str, hosts: [&str; 2]) -> TcpFlow {
    let cfg: TcpConfig = tcp.config();
    let conn = |end: usize| {
        let mut c = Connection::new(cfg.clone());
        if cfg.rto.randomize > 0.0 {
            c.seed_rto(seeds.stream(&format!("flows/{name}/rto/{end}")));
        }
        if cfg.timer_ticks || cfg.timer_tick.is_some() {
            let u = seeds.stream(&format!("hosts/{}/clock", hosts[end])).next_f64();
            c.set_clock_phase(SimDuration((u * 1e12) as u64));
        }
        c
    };
    let Some((send, receive)) = policies(&tcp.variant) else {
        return TcpFlow::new(conn(0), conn(1));
    };
    let tx = Endpoint::with_variant(conn(sender), send);
    let rx = Endpoint::with_variant(conn(1 - sender), receive);
    if sender == 0 {
        TcpFlow::with_endpoints(tx, rx)
    } else {
        TcpFlow::with_endpoints(rx, tx)
    }
}
