//! The variant factory: a TCP flow's two endpoints from its resolved `tcp` table — plain
//! connections, or connections with the policies of the variant the table names.

use crate::engine::SeedTree;
use crate::flow::TcpFlow;
use crate::scenario::resolve::{ResolvedTcp, ResolvedVariant};
use crate::tcp::ahtcp::{AhtcpReceiver, AhtcpSender};
use crate::tcp::imtcp::ImtcpStage;
use crate::tcp::{Connection, Endpoint, TcpConfig, Variant};
use crate::units::SimDuration;

/// The (data sender's, data receiver's) policies of `variant`, if it has any.
type Policies = (Option<Box<dyn Variant>>, Option<Box<dyn Variant>>);

fn policies(variant: &ResolvedVariant) -> Option<Policies> {
    match variant {
        ResolvedVariant::None => None,
        ResolvedVariant::Ahtcp { ahtcp } => {
            let c = ahtcp.config();
            Some((Some(Box::new(AhtcpSender::new(&c))), Some(Box::new(AhtcpReceiver::new(&c)))))
        }
        // The receiving end has no policy (its ACK rule is checked when resolving).
        ResolvedVariant::Imtcp { imtcp } => Some((Some(Box::new(ImtcpStage::new(imtcp.config()))), None)),
    }
}

/// A TCP flow's two endpoints (`sender`: the end that sends the data); each end's randomised
/// RTO (if any) draws from a stream of its own, `flows/<name>/rto/<end>`, and so does a
/// controller that draws (`CcConfig::draws`: BBR), `flows/<name>/cc/<end>`. With `timer_ticks`,
/// `timer_grid = "hz"` or a variant on the host's 1/HZ ticks (ImTCP), each end's clock ticks
/// fall at its host's phase, drawn once per host from `hosts/<host>/clock`, uniform in
/// [0, 1 s) (1 s holds whole 200 ms and 500 ms ticks; a 1/HZ grid takes the phase modulo its
/// tick; a named stream, so no other draw moves).
pub(super) fn tcp_flow(tcp: &ResolvedTcp, sender: usize, seeds: &SeedTree, name: &str, hosts: [&str; 2]) -> TcpFlow {
    let cfg: TcpConfig = tcp.config();
    let conn = |end: usize| {
        let mut c = Connection::new(cfg.clone());
        if cfg.rto.randomize > 0.0 {
            c.seed_rto(seeds.stream(&format!("flows/{name}/rto/{end}")));
        }
        if cfg.cc.draws() {
            c.seed_cc(seeds.stream(&format!("flows/{name}/cc/{end}")));
        }
        if cfg.timer_ticks || cfg.timer_tick.is_some() || tcp.variant.uses_host_clock() {
            let u = seeds.stream(&format!("hosts/{}/clock", hosts[end])).next_f64();
            c.set_clock_phase(SimDuration((u * 1e12) as u64));
        }
        c
    };
    let Some((send, receive)) = policies(&tcp.variant) else {
        return TcpFlow::new(conn(0), conn(1));
    };
    let end = |c: Connection, v: Option<Box<dyn Variant>>| match v {
        Some(v) => Endpoint::with_variant(c, v),
        None => Endpoint::new(c),
    };
    let tx = end(conn(sender), send);
    let rx = end(conn(1 - sender), receive);
    if sender == 0 {
        TcpFlow::with_endpoints(tx, rx)
    } else {
        TcpFlow::with_endpoints(rx, tx)
    }
}
