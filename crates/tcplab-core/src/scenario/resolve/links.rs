//! `[[links]]` and queues: each end's queue (from `queue_a`/`queue_b`, `queue`, then
//! `defaults.queue`), the link layer, and the bound on all propagation delays together.

use serde::Serialize;

use super::emulators::ResolvedEmulator;
use super::nodes::{Names, NodeKind};
use super::{err, Res};
use crate::scenario::spec::{CbrUnitName, DiscardName, Dur, LinkLayerSpec, LinkSpec, QLimit, QueueSpec, Rate, Size};
use crate::units::{QueueLimit, SimDuration, MAX_TIME};

/// The most link-layer framing a link may add per packet (an 802.1Q-tagged Ethernet frame with
/// preamble and gap adds 42; the limit leaves room for tunnels and odd framings).
const MAX_FRAMING: u64 = 1024;

/// `defaults.queue` when not given: 1000 packets.
pub(super) fn default_queue() -> QueueSpec {
    QueueSpec::Limit(QLimit(QueueLimit::Packets(1000)))
}

/// A queue table has a `limit`, 1 to 8 `classes` or an ATM port's `cells`, and a finite
/// marking threshold; the ATM keys belong to `cells` (checked against the link by
/// `check_atm_port`).
pub(super) fn check_queue(q: &QueueSpec, path: &str) -> Res<()> {
    let QueueSpec::Table(t) = q else { return Ok(()) };
    super::aqm::check(t, path)?;
    let given = [t.limit.is_some() || t.aqm.is_some(), t.classes.is_some(), t.cells.is_some()].iter().filter(|&&g| g).count();
    if given > 1 {
        return err(format!("{path}.classes"), "give one of limit (one FIFO), classes (strict priority) or cells (an ATM port)");
    }
    if given == 0 {
        return err(format!("{path}.limit"), "a queue table needs a limit (one FIFO), classes (strict priority) or cells (an ATM port)");
    }
    if t.classes.as_ref().is_some_and(|c| c.is_empty() || c.len() > 8) {
        return err(format!("{path}.classes"), "give 1 to 8 class limits");
    }
    if t.ecn_threshold.is_some_and(|k| k.0 == QueueLimit::Unlimited) {
        return err(format!("{path}.ecn_threshold"), "give a number of packets or bytes (\"unlimited\" would never mark: leave the key out)");
    }
    if t.ecn_unmarkable.is_some() && t.ecn_threshold.is_none() {
        return err(format!("{path}.ecn_unmarkable"), "only applies with ecn_threshold (a queue that marks)");
    }
    let atm_keys = [
        ("cbr", t.cbr.is_some()),
        ("cbr_unit", t.cbr_unit.is_some()),
        ("cbr_burst", t.cbr_burst.is_some()),
        ("discard", t.discard.is_some()),
        ("epd_threshold", t.epd_threshold.is_some()),
    ];
    if t.cells.is_none() {
        if let Some((k, _)) = atm_keys.iter().find(|(_, set)| *set) {
            return err(format!("{path}.{k}"), "an ATM port's key: only with cells (the port's UBR cell buffer)");
        }
    } else if t.ecn_threshold.is_some() {
        return err(format!("{path}.ecn_threshold"), "an ATM port does not mark ECN");
    }
    if t.cbr_unit.is_some() && t.cbr.is_none() {
        return err(format!("{path}.cbr_unit"), "only applies with cbr (the unit of its rate)");
    }
    // A threshold at or above the limit never marks: the queue drops first.
    if let (Some(k), Some(limit)) = (t.ecn_threshold, t.limit) {
        let above = match (k.0, limit.0) {
            (QueueLimit::Packets(k), QueueLimit::Packets(l)) => k > l,
            (QueueLimit::Bytes(k), QueueLimit::Bytes(l)) => k > l,
            _ => false,
        };
        if above {
            return err(
                format!("{path}.ecn_threshold"),
                format!("{} is above the queue's limit ({}): no packet would ever be marked", crate::units::format_queue_limit(k.0), crate::units::format_queue_limit(limit.0)),
            );
        }
    }
    Ok(())
}

/// An ATM port (`cells`) needs an AAL5 link, a buffer of at least one cell, CBR below the
/// line, and EPD's threshold with EPD only, below the buffer.
fn check_atm_port(q: &QueueSpec, path: &str, link: &LinkSpecView) -> Res<()> {
    let QueueSpec::Table(t) = q else { return Ok(()) };
    let Some(cells) = t.cells else { return Ok(()) };
    if link.link_layer == LinkLayerSpec::Ip {
        return err(format!("{path}.cells"), "an ATM port needs link_layer = \"aal5\" or \"aal5-vc-mux\" on its link");
    }
    if cells == 0 || cells > MAX_CELLS {
        return err(format!("{path}.cells"), format!("{cells} is out of range: an ATM port buffers 1..={MAX_CELLS} cells"));
    }
    if let Some(cbr) = t.cbr {
        let cell_bps = match t.cbr_unit.unwrap_or_default() {
            CbrUnitName::Cell => cbr.0.bps() as u128,
            CbrUnitName::Payload => cbr.0.bps() as u128 * 53 / 48,
        };
        if cell_bps >= link.rate.0.bps() as u128 {
            return err(format!("{path}.cbr"), format!("{} leaves no cell slot for UBR on a {} line", cbr.0, link.rate.0));
        }
    }
    if let Some(k) = t.cbr_burst {
        if t.cbr.is_none() {
            return err(format!("{path}.cbr_burst"), "only with cbr (the bursts are CBR's)");
        }
        if !(1..=1_000_000).contains(&k) {
            return err(format!("{path}.cbr_burst"), format!("{k} is out of range: 1..=1000000 cells per burst"));
        }
    }
    if !link.rate.0.bps().is_multiple_of(1_000) {
        return err(format!("{path}.cells"), "an ATM port's line rate must be whole kb/s");
    }
    match (t.discard.unwrap_or_default(), t.epd_threshold) {
        (DiscardName::Epd, None) => err(format!("{path}.epd_threshold"), "EPD needs its threshold, cells waiting"),
        (DiscardName::Epd, Some(e)) if e >= cells => err(format!("{path}.epd_threshold"), format!("{e} cells is not below the buffer ({cells} cells)")),
        (DiscardName::TailDrop | DiscardName::Ppd, Some(_)) => err(format!("{path}.epd_threshold"), "only with discard = \"epd\""),
        _ => Ok(()),
    }
}

/// The largest ATM cell buffer (far beyond any switch's; and a TOML integer).
const MAX_CELLS: u64 = 1 << 30;

/// What `check_atm_port` reads of a link.
struct LinkSpecView {
    link_layer: LinkLayerSpec,
    rate: Rate,
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
    // The pairs of nodes joined so far (a group's link joins each member), and by which link.
    let mut joined: std::collections::HashMap<(String, String), usize> = std::collections::HashMap::new();
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
                    return err(format!("links[{i}].between"), format!("'{n}' is a host group, linked member by member to a switch; '{other}' is {}", names[other].a_name()));
                }
            }
        }
        let both = l.queue.clone().unwrap_or_else(|| default_queue.clone());
        let queue_a = l.queue_a.clone().unwrap_or_else(|| both.clone());
        let queue_b = l.queue_b.clone().unwrap_or(both);
        check_queue(&queue_a, &format!("links[{i}].queue_a"))?;
        check_queue(&queue_b, &format!("links[{i}].queue_b"))?;
        let (queue_a, queue_b) = (super::aqm::complete(queue_a), super::aqm::complete(queue_b));
        let view = LinkSpecView { link_layer: l.link_layer.unwrap_or_default(), rate: l.rate };
        check_atm_port(&queue_a, &format!("links[{i}].queue_a"), &view)?;
        check_atm_port(&queue_b, &format!("links[{i}].queue_b"), &view)?;
        let framing = l.framing.unwrap_or(Size(0));
        if framing.0 > MAX_FRAMING {
            return err(format!("links[{i}].framing"), format!("{} bytes per packet is more than the {MAX_FRAMING} any link layer adds", framing.0));
        }
        let link_layer = l.link_layer.unwrap_or_default();
        if framing.0 > 0 && link_layer != LinkLayerSpec::Ip {
            return err(format!("links[{i}].framing"), "AAL5 has its own overhead (the trailer, padding and cell headers); framing applies only to link_layer = \"ip\"");
        }
        let delay = l.delay.unwrap_or(Dur(SimDuration::ZERO));
        // One link per pair of nodes: routes take one, and the queues of a second would share
        // its names (A->B) and stay unused.
        let (a, b) = (super::nodes::members(&l.between[0], names), super::nodes::members(&l.between[1], names));
        for x in &a {
            for y in &b {
                let key = if x < y { (x.clone(), y.clone()) } else { (y.clone(), x.clone()) };
                if let Some(j) = joined.insert(key, i) {
                    return err(
                        format!("links[{i}].between"),
                        format!("links[{j}] already joins '{x}' and '{y}'; tcplab routes over one link per pair of nodes (give the link the rate of both)"),
                    );
                }
            }
        }
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
