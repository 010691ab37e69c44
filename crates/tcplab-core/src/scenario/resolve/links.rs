//! `[[links]]` and queues: each end's queue (from `queue_a`/`queue_b`, `queue`, then
//! `defaults.queue`), the link layer, and the bound on all propagation delays together.

use serde::Serialize;

use super::emulators::ResolvedEmulator;
use super::nodes::{Names, NodeKind};
use super::{err, Res};
use crate::scenario::spec::{Dur, LinkLayerSpec, LinkSpec, QLimit, QueueSpec, Rate, Size};
use crate::units::{QueueLimit, SimDuration, MAX_TIME};

/// The most link-layer framing a link may add per packet (an 802.1Q-tagged Ethernet frame with
/// preamble and gap adds 42; the limit leaves room for tunnels and odd framings).
const MAX_FRAMING: u64 = 1024;

/// `defaults.queue` when not given: 1000 packets.
pub(super) fn default_queue() -> QueueSpec {
    QueueSpec::Limit(QLimit(QueueLimit::Packets(1000)))
}

/// A queue table has a `limit` or 1 to 8 `classes`, and a finite marking threshold.
pub(super) fn check_queue(q: &QueueSpec, path: &str) -> Res<()> {
    let QueueSpec::Table(t) = q else { return Ok(()) };
    match (&t.limit, &t.classes) {
        (Some(_), Some(_)) => return err(format!("{path}.classes"), "give either limit (one FIFO) or classes (strict priority), not both"),
        (None, None) => return err(format!("{path}.limit"), "a queue table needs a limit (one FIFO) or classes (strict priority)"),
        (None, Some(c)) if c.is_empty() || c.len() > 8 => return err(format!("{path}.classes"), "give 1 to 8 class limits"),
        _ => {}
    }
    if t.ecn_threshold.is_some_and(|k| k.0 == QueueLimit::Unlimited) {
        return err(format!("{path}.ecn_threshold"), "give a number of packets or bytes (\"unlimited\" would never mark: leave the key out)");
    }
    if t.ecn_unmarkable.is_some() && t.ecn_threshold.is_none() {
        return err(format!("{path}.ecn_unmarkable"), "only applies with ecn_threshold (a queue that marks)");
    }
    Ok(())
}

/// `[[links]]`, resolved. Serialized with the keys of `spec::LinkSpec` (`queue` is folded
/// into `queue_a` and `queue_b`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedLink {
    /// The two endpoints.
    pub between: [String; 2],
    /// Line rate.
    pub rate: Rate,
    /// Propagation delay (default 0s).
    pub delay: Dur,
    /// Egress queue at `between[0]`.
    pub queue_a: QueueSpec,
    /// Egress queue at `between[1]`.
    pub queue_b: QueueSpec,
    /// Link-layer bytes per packet, at most 1024; 0 with AAL5 (default 0B).
    pub framing: Size,
    /// The link layer (default `"ip"`).
    pub link_layer: LinkLayerSpec,
}

/// Resolve `[[links]]` with the scenario's `defaults.queue` and node names.
pub(super) fn resolve_links(links: &[LinkSpec], default_queue: &QueueSpec, names: &Names) -> Res<Vec<ResolvedLink>> {
    let mut out = Vec::with_capacity(links.len());
    for (i, l) in links.iter().enumerate() {
        for (k, n) in l.between.iter().enumerate() {
            if !names.contains_key(n) {
                return err(format!("links[{i}].between[{k}]"), format!("no host, switch or emulator is named '{n}'"));
            }
        }
        if l.between[0] == l.between[1] {
            return err(format!("links[{i}].between"), "a link joins two different nodes");
        }
        // A group's link is one link per member, to one switch.
        for (k, n) in l.between.iter().enumerate() {
            if let Some(NodeKind::Group(_)) = names.get(n) {
                let other = &l.between[1 - k];
                if names.get(other) != Some(&NodeKind::Switch) {
                    return err(format!("links[{i}].between"), format!("'{n}' is a host group, linked member by member to a switch; '{other}' is a {}", names[other].name()));
                }
            }
        }
        let both = l.queue.clone().unwrap_or_else(|| default_queue.clone());
        let queue_a = l.queue_a.clone().unwrap_or_else(|| both.clone());
        let queue_b = l.queue_b.clone().unwrap_or(both);
        check_queue(&queue_a, &format!("links[{i}].queue_a"))?;
        check_queue(&queue_b, &format!("links[{i}].queue_b"))?;
        let framing = l.framing.unwrap_or(Size(0));
        if framing.0 > MAX_FRAMING {
            return err(format!("links[{i}].framing"), format!("{} bytes per packet is more than the {MAX_FRAMING} any link layer adds", framing.0));
        }
        let link_layer = l.link_layer.unwrap_or_default();
        if framing.0 > 0 && link_layer != LinkLayerSpec::Ip {
            return err(format!("links[{i}].framing"), "AAL5 has its own overhead (the trailer, padding and cell headers); framing applies only to link_layer = \"ip\"");
        }
        let delay = l.delay.unwrap_or(Dur(SimDuration::ZERO));
        out.push(ResolvedLink { between: l.between.clone(), rate: l.rate, delay, queue_a, queue_b, framing, link_layer });
    }
    Ok(out)
}

/// All propagation delays together stay within the longest time tcplab simulates.
pub(super) fn check_total_delay(links: &[ResolvedLink], emulators: &[ResolvedEmulator]) -> Res<()> {
    let total = links.iter().map(|l| l.delay.0.as_ps() as u128).sum::<u128>() + emulators.iter().map(|e| e.delay.0.as_ps() as u128).sum::<u128>();
    if total > MAX_TIME.as_ps() as u128 {
        return err("links", "the propagation delays of all links and emulators add up to more than 1000000s, the longest time tcplab simulates");
    }
    Ok(())
}
