//! The connections a `tcp`, `udp-cbr` or `request-response` flow between host groups stands for: member k to
//! member k (`pattern = "pairs"`), every member to every other (`"all-to-all"`), a group to one
//! host (many-to-one, as incast) or one host to a group. Each becomes a flow of its own in
//! the resolved scenario, named `name.j` in this order (source member, then destination).

use super::nodes::{members, Names, NodeKind};
use crate::scenario::spec::{FlowKind, FlowPattern, FlowSpec};

/// The (source, destination) hosts of flow `f`, or the key (relative to the flow) and reason
/// it is refused for.
pub(super) fn endpoints(f: &FlowSpec, names: &Names) -> Result<Vec<(String, String)>, (&'static str, String)> {
    let group = |n: &str| matches!(names.get(n), Some(NodeKind::Group(_)));
    let (gs, gd) = (group(&f.src), group(&f.dst));
    if !matches!(f.kind, FlowKind::Tcp | FlowKind::UdpCbr | FlowKind::RequestResponse) {
        if f.pattern.is_some() {
            return Err(("pattern", "only for kind = \"tcp\", \"udp-cbr\" or \"request-response\" flows between host groups".into()));
        }
        return Ok(vec![(f.src.clone(), f.dst.clone())]);
    }
    if f.pattern.is_some() && !(gs && gd) {
        return Err(("pattern", "only when src and dst are both host groups (a group and a host make one flow per member)".into()));
    }
    let (src, dst) = (members(&f.src, names), members(&f.dst, names));
    let out: Vec<(String, String)> = match (gs && gd, f.pattern.unwrap_or_default()) {
        (true, FlowPattern::Pairs) => {
            if src.len() != dst.len() {
                return Err((
                    "pattern",
                    format!(
                        "\"pairs\" joins member k of '{}' ({}) to member k of '{}' ({}): give groups of one size, or pattern = \"all-to-all\"",
                        f.src,
                        src.len(),
                        f.dst,
                        dst.len()
                    ),
                ));
            }
            if f.src == f.dst {
                return Err(("dst", "\"pairs\" within one group would join each member to itself; use pattern = \"all-to-all\"".into()));
            }
            src.into_iter().zip(dst).collect()
        }
        _ => src.iter().flat_map(|a| dst.iter().filter(move |b| *b != a).map(move |b| (a.clone(), b.clone()))).collect(),
    };
    if out.is_empty() {
        return Err(("dst", "the groups make no pair of different hosts".into()));
    }
    Ok(out)
}

/// The names of `n` flows made from one flow named `name`: itself when one, else `name.j`.
pub(super) fn names(name: &str, n: usize) -> Vec<String> {
    if n == 1 {
        vec![name.to_string()]
    } else {
        (0..n).map(|j| format!("{name}.{j}")).collect()
    }
}
