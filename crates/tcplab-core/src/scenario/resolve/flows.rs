//! `[[flows]]`: endpoints, replication (`count`) and the names it makes, the traffic of each
//! kind (a TCP transfer with its resolved `tcp` table, or a constant-bit-rate UDP stream), and
//! whether the run can end.

use std::collections::BTreeMap;

use serde::Serialize;

pub use super::cbr::Cbr;
use super::fs_copy::FsCopyTraffic;
use super::nodes::{Names, NodeKind};
use super::request_response::{resolve_request_response, RequestResponseTraffic};
use super::reservoir::ReservoirTraffic;
use super::run::ResolvedRun;
use super::tcp::{resolve_tcp, ResolvedTcp};
use super::workload::WorkloadTraffic;
use super::{err, Res, MAX_FLOWS};
use crate::scenario::spec::{Dur, FlowKind, FlowPattern, FlowSpec, Rate, Size, StopSpec, TcpSpec};
use crate::units::SimDuration;

/// `[[flows]]`, resolved. Serialized with the keys of `spec::FlowSpec`.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResolvedFlow {
    /// Name (suffixed `.i` when `count` > 1).
    pub name: String,
    /// Source host.
    pub src: String,
    /// Destination host.
    pub dst: String,
    /// Start time (default 0s).
    pub start: Dur,
    /// Number of identical flows, at least 1 (default 1).
    pub count: u32,
    /// Stop writing (sending) at this time; none: until the bytes are sent or the run ends.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Dur>,
    /// Priority class at strict-priority queues (default 0, the highest).
    pub class: u8,
    /// Background traffic that a run stopping when the flows are done does not wait for
    /// (default false).
    pub background: bool,
    /// What the flow sends.
    #[serde(flatten)]
    pub traffic: Traffic,
}

impl ResolvedFlow {
    /// The TCP settings of a TCP flow.
    pub fn tcp(&self) -> Option<&ResolvedTcp> {
        match &self.traffic {
            Traffic::Tcp(t) => Some(&t.tcp),
            Traffic::BlockRead(b) => Some(&b.tcp),
            Traffic::Reservoir(r) => Some(&r.tcp),
            Traffic::FsCopy(c) => Some(&c.tcp),
            Traffic::Workload(w) => Some(&w.tcp),
            Traffic::RequestResponse(r) => Some(&r.tcp),
            Traffic::UdpCbr(_) => None,
        }
    }
}

/// A flow's traffic by kind; serialized as `kind = "…"` and the kind's keys.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Traffic {
    /// A TCP connection with a bulk sender.
    Tcp(TcpTraffic),
    /// Constant-bit-rate UDP.
    UdpCbr(UdpCbrTraffic),
    /// Barrier-synchronised block reads.
    BlockRead(BlockReadTraffic),
    /// A striped file moved over iSCSI between disk servers (study 002).
    Reservoir(ReservoirTraffic),
    /// netcat copying a file through both hosts' page caches (study 002's conventional copy).
    FsCopy(FsCopyTraffic),
    /// TCP transfers arriving during the run.
    Workload(WorkloadTraffic),
    /// Requests and responses over persistent connections.
    RequestResponse(RequestResponseTraffic),
}

/// The most blocks a block-read flow reads (a TOML integer, and far beyond any run).
const MAX_BLOCKS: u64 = 1_000_000_000;

/// Barrier-synchronised block reads over TCP: the `block_read` table and the connections'
/// settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockReadTraffic {
    /// `[flows.block_read]`, resolved.
    pub block_read: BlockRead,
    /// The connections' settings.
    pub tcp: ResolvedTcp,
}

/// Each client (`src`, or each member of the group) opens one TCP connection to each of the
/// first `servers` members of `dst` and reads `blocks` blocks, each one `sru` from every
/// server, asked for with `request` bytes per server.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BlockRead {
    /// Active servers: the first this many members of `dst` (default: all).
    pub servers: u32,
    /// Bytes each server returns per block, at least 1.
    pub sru: Size,
    /// Bytes of one request, at least 1 (default 48B, an iSCSI command PDU's header).
    pub request: Size,
    /// Blocks to read, at least 1.
    pub blocks: u64,
}

/// The names of the connections of a block-read flow, per client and per server: `name.k`
/// for one client, `name.c.k` for the members of a client group.
pub fn block_read_names(name: &str, clients: usize, client_is_group: bool, servers: u32) -> Vec<Vec<String>> {
    (0..clients).map(|c| (0..servers).map(|k| if client_is_group { format!("{name}.{c}.{k}") } else { format!("{name}.{k}") }).collect()).collect()
}

/// A bulk TCP transfer: the `bulk` table and the connection's settings.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TcpTraffic {
    /// `[flows.bulk]`, resolved.
    pub bulk: Bulk,
    /// The connection's settings.
    pub tcp: ResolvedTcp,
}

/// What a bulk sender writes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Bulk {
    /// Bytes to send, at least 1; none: until `stop` or the end of the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<Size>,
    /// Application write size, at least 1 byte (default 128KiB).
    pub write_size: Size,
    /// The receiver's reading rate and bytes per read; none: it reads on arrival.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read: Option<(Rate, Size)>,
}

/// A constant-bit-rate UDP stream: the `cbr` table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct UdpCbrTraffic {
    /// `[flows.cbr]`, resolved.
    pub cbr: Cbr,
}

/// The table of each kind (`[flows.bulk]`, `[flows.cbr]`, `[flows.block_read]`): a table
/// given for another kind is an error naming it.
fn kind_tables(f: &FlowSpec) -> [(&'static str, FlowKind, bool); 7] {
    [
        ("bulk", FlowKind::Tcp, f.bulk.is_some()),
        ("cbr", FlowKind::UdpCbr, f.cbr.is_some()),
        ("block_read", FlowKind::BlockRead, f.block_read.is_some()),
        ("reservoir", FlowKind::Reservoir, f.reservoir.is_some()),
        ("fs_copy", FlowKind::FsCopy, f.fs_copy.is_some()),
        ("workload", FlowKind::Workload, f.workload.is_some()),
        ("request_response", FlowKind::RequestResponse, f.request_response.is_some()),
    ]
}

fn kind_name(k: FlowKind) -> &'static str {
    match k {
        FlowKind::Tcp => "tcp",
        FlowKind::UdpCbr => "udp-cbr",
        FlowKind::BlockRead => "block-read",
        FlowKind::Reservoir => "reservoir",
        FlowKind::FsCopy => "fs-copy",
        FlowKind::Workload => "workload",
        FlowKind::RequestResponse => "request-response",
    }
}

/// Resolve `[[flows]]`: `defaults_tcp` is the scenario's `defaults.tcp` as written and
/// `resolved_tcp` as resolved (what a flow without a `tcp` table of its own uses). Returns the
/// flows and how many they expand to.
pub(super) fn resolve_flows(flows: &[FlowSpec], names: &Names, defaults_tcp: &TcpSpec, resolved_tcp: &ResolvedTcp, run: &ResolvedRun) -> Res<(Vec<ResolvedFlow>, u64)> {
    let mut flow_names = BTreeMap::new();
    let mut expanded: BTreeMap<String, usize> = BTreeMap::new();
    let mut total_flows = 0u64;
    let mut out = Vec::with_capacity(flows.len());
    for (i, f) in flows.iter().enumerate() {
        let p = |x: &str| format!("flows[{i}].{x}");
        if f.name.trim().is_empty() {
            return err(p("name"), "must not be empty");
        }
        if f.name.len() > super::MAX_NAME {
            return err(p("name"), format!("{} bytes long; a name has at most {} bytes", f.name.len(), super::MAX_NAME));
        }
        if flow_names.insert(f.name.clone(), i).is_some() {
            return err(p("name"), format!("another flow is already named '{}'", f.name));
        }
        for (field, n) in [("src", &f.src), ("dst", &f.dst)] {
            match names.get(n) {
                Some(NodeKind::Host) => {}
                Some(NodeKind::Group(_)) if matches!(f.kind, FlowKind::BlockRead | FlowKind::Reservoir | FlowKind::Tcp | FlowKind::UdpCbr | FlowKind::Workload | FlowKind::RequestResponse) => {}
                Some(NodeKind::Group(_)) => {
                    return err(
                        p(field),
                        format!(
                            "'{n}' is a host group; name one member ('{n}.0') or use kind = \"tcp\", \"udp-cbr\", \"block-read\", \"reservoir\", \"workload\" or \"request-response\", which use a group's members"
                        ),
                    )
                }
                Some(k) => return err(p(field), format!("'{n}' is {}, not a host", k.a_name())),
                None => return err(p(field), format!("no host is named '{n}'")),
            }
        }
        let one_group = matches!(names.get(&f.src), Some(NodeKind::Group(_)));
        if f.src == f.dst && !((f.pattern == Some(FlowPattern::AllToAll) || f.kind == FlowKind::Workload) && one_group) {
            return err(p("dst"), "source and destination are the same host");
        }
        let ends = super::flow_matrix::endpoints(f, names).or_else(|e| err(p(e.0), e.1))?;
        let count = f.count.unwrap_or(1);
        if count == 0 {
            return err(p("count"), "must be at least 1");
        }
        if f.kind == FlowKind::BlockRead && count > 1 {
            return err(p("count"), "a block-read flow makes one connection per server (and per client of a group); set servers instead");
        }
        for (table, kind, set) in kind_tables(f) {
            if set && kind != f.kind {
                return err(p(table), format!("only for kind = \"{}\" flows (this one is kind = \"{}\")", kind_name(kind), kind_name(f.kind)));
            }
        }
        let br = f.block_read.clone().unwrap_or_default();
        let bp = |x: &str| format!("flows[{i}].block_read.{x}");
        let clients = super::nodes::members(&f.src, names);
        let dst_members = super::nodes::members(&f.dst, names).len() as u32;
        let servers = br.servers.unwrap_or(dst_members);
        let reservoir = if f.kind == FlowKind::Reservoir { Some(super::reservoir::resolve_reservoir(i, f, names)?) } else { None };
        let fs_copy = if f.kind == FlowKind::FsCopy { Some(super::fs_copy::resolve_fs_copy(i, f)?) } else { None };
        let workload = if f.kind == FlowKind::Workload { Some(super::workload::resolve_workload(i, f)?) } else { None };
        if workload.is_some() && count > 1 {
            return err(p("count"), "a workload makes workload.flows flows; set that instead");
        }
        let (count, made) = if let Some(w) = &workload {
            (1, w.flows)
        } else if let Some(r) = &reservoir {
            (1, r.servers as u64)
        } else if f.kind == FlowKind::BlockRead {
            if servers == 0 || servers > dst_members {
                return err(bp("servers"), format!("{servers} active servers out of range: '{}' has {dst_members} (1..={dst_members})", f.dst));
            }
            if clients.iter().any(|c| super::nodes::is_or_member_of(c, &f.dst, names)) {
                return err(p("dst"), "a client cannot read from itself");
            }
            (1, clients.len() as u64 * servers as u64)
        } else {
            (count, count as u64 * ends.len() as u64)
        };
        total_flows += made;
        if total_flows > MAX_FLOWS {
            return err(p("count"), format!("the scenario would have {total_flows} flows or more; at most {MAX_FLOWS} (memory: about 3.5 KB per flow plus its packets in flight)"));
        }
        // The names the flows get (`name.k` for k < count; a block read's per connection),
        // unique across all flows.
        let made_names: Vec<String> = if let Some(w) = &workload {
            (0..w.flows).map(|k| format!("{}.{k}", f.name)).collect()
        } else if let Some(r) = &reservoir {
            super::reservoir::reservoir_names(&f.name, r.servers)
        } else if f.kind == FlowKind::BlockRead {
            let client_is_group = matches!(names.get(&f.src), Some(NodeKind::Group(_)));
            block_read_names(&f.name, clients.len(), client_is_group, servers).concat()
        } else {
            super::flow_matrix::names(&f.name, ends.len()).iter().flat_map(|n| (0..count).map(move |k| if count > 1 { format!("{n}.{k}") } else { n.clone() })).collect()
        };
        for name in made_names {
            if let Some(j) = expanded.insert(name.clone(), i) {
                return err(p("name"), format!("makes a flow named '{name}', as flows[{j}] does; flow names must be unique (a flow with count = n is named name.0 … name.(n-1))"));
            }
        }
        let traffic = match f.kind {
            FlowKind::Tcp => {
                let bulk = f.bulk.clone().unwrap_or_default();
                let write_size = bulk.write_size.unwrap_or(Size(128 * 1024));
                if write_size.0 == 0 {
                    return err(p("bulk.write_size"), "must be at least 1 byte");
                }
                if bulk.bytes.is_some_and(|b| b.0 == 0) {
                    return err(p("bulk.bytes"), "must be at least 1 byte");
                }
                let read = match (bulk.read_rate, bulk.read_size) {
                    (None, Some(_)) => return err(p("bulk.read_size"), "only with bulk.read_rate (without it the connection reads on arrival)"),
                    (None, None) => None,
                    (Some(_), Some(s)) if s.0 == 0 => return err(p("bulk.read_size"), "must be at least 1 byte"),
                    (Some(r), s) => Some((r, s.unwrap_or(Size(128 * 1024)))),
                };
                // A flow without settings of its own has the resolved defaults.
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                Traffic::Tcp(TcpTraffic { bulk: Bulk { bytes: bulk.bytes, write_size, read }, tcp })
            }
            FlowKind::UdpCbr => {
                if f.tcp != TcpSpec::default() {
                    return err(p("tcp"), "only for TCP flows (kind = \"tcp\" or \"block-read\")");
                }
                Traffic::UdpCbr(UdpCbrTraffic { cbr: super::cbr::resolve_cbr(i, &f.cbr.clone().unwrap_or_default())? })
            }
            FlowKind::BlockRead => {
                if f.stop.is_some() {
                    return err(p("stop"), "not for block-read flows (they read sru × servers per block, blocks times)");
                }
                let Some(sru) = br.sru else {
                    return err(bp("sru"), "a block-read flow needs the bytes each server returns per block: block_read = { sru = …, blocks = … }");
                };
                let Some(blocks) = br.blocks else {
                    return err(bp("blocks"), "a block-read flow needs the number of blocks to read: block_read = { sru = …, blocks = … }");
                };
                let request = br.request.unwrap_or(Size(48));
                for (field, v) in [("sru", sru.0), ("request", request.0), ("blocks", blocks)] {
                    if v == 0 {
                        return err(bp(field), "must be at least 1");
                    }
                }
                if blocks > MAX_BLOCKS {
                    return err(bp("blocks"), format!("{blocks} is out of range (1..={MAX_BLOCKS})"));
                }
                if sru.0.checked_mul(blocks).is_none_or(|b| b > 1 << 62) || request.0.checked_mul(blocks).is_none_or(|b| b > 1 << 62) {
                    return err(bp("blocks"), "sru × blocks (and request × blocks) must stay below 2^62 bytes per connection");
                }
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                Traffic::BlockRead(BlockReadTraffic { block_read: BlockRead { servers, sru, request, blocks }, tcp })
            }
            FlowKind::Reservoir => {
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                Traffic::Reservoir(ReservoirTraffic { reservoir: reservoir.expect("resolved above for this kind"), tcp })
            }
            FlowKind::FsCopy => {
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                Traffic::FsCopy(FsCopyTraffic { fs_copy: fs_copy.expect("resolved above for this kind"), tcp })
            }
            FlowKind::Workload => {
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                if tcp.variant != super::ResolvedVariant::None {
                    return err(p("tcp.variant"), "a workload's flows are plain TCP (a variant's monitors and stages are set up per declared flow)");
                }
                Traffic::Workload(WorkloadTraffic { workload: workload.expect("resolved above for this kind"), tcp })
            }
            FlowKind::RequestResponse => {
                let tcp = if f.tcp == TcpSpec::default() { resolved_tcp.clone() } else { resolve_tcp(defaults_tcp, &f.tcp, &p("tcp"))? };
                if tcp.variant != super::ResolvedVariant::None {
                    return err(p("tcp.variant"), "request-response connections are plain TCP");
                }
                Traffic::RequestResponse(RequestResponseTraffic { request_response: resolve_request_response(i, f, &tcp)?, tcp })
            }
        };
        let start = f.start.map_or(SimDuration::ZERO, |d| d.0);
        if let Some(stop) = f.stop.filter(|s| s.0 <= start) {
            return err(
                p("stop"),
                format!("{} is not after the flow's start ({}): it would never send", crate::units::format_duration(stop.0), crate::units::format_duration(start)),
            );
        }
        if let Some(d) = run.duration.filter(|d| start >= d.0) {
            return err(
                p("start"),
                format!("{} is not before the run's end (run.duration = {}): the flow would never start", crate::units::format_duration(start), crate::units::format_duration(d.0)),
            );
        }
        let rule = if run.stop == StopSpec::Idle { "idle" } else { "flows-done" };
        let endless = run.stop != StopSpec::Duration && run.duration.is_none() && f.stop.is_none();
        if endless && matches!(&traffic, Traffic::Tcp(t) if t.bulk.bytes.is_none()) {
            return err(p("bulk.bytes"), format!("with run.stop = \"{rule}\" and no run.duration, every flow needs bulk.bytes or stop (or the run never ends)"));
        }
        if endless && matches!(&traffic, Traffic::RequestResponse(r) if r.request_response.messages.is_none()) {
            return err(
                p("request_response.messages"),
                format!("with run.stop = \"{rule}\" and no run.duration, a request-response flow needs messages or stop (or the run never ends)"),
            );
        }
        if endless && matches!(&traffic, Traffic::UdpCbr(u) if !u.cbr.ends_silent()) {
            return err(p("stop"), format!("with run.stop = \"{rule}\" and no run.duration, a udp-cbr flow needs stop (or the run never ends)"));
        }
        // A flow between groups is one flow per pair of members, each written out.
        let pair_names = super::flow_matrix::names(&f.name, ends.len());
        let pairs = if matches!(f.kind, FlowKind::Tcp | FlowKind::UdpCbr | FlowKind::RequestResponse) {
            ends.into_iter().zip(pair_names).collect()
        } else {
            vec![((f.src.clone(), f.dst.clone()), f.name.clone())]
        };
        for ((src, dst), name) in pairs {
            out.push(ResolvedFlow {
                name,
                src,
                dst,
                start: f.start.unwrap_or(Dur(SimDuration::ZERO)),
                count,
                stop: f.stop,
                class: f.class.unwrap_or(0),
                background: f.background.unwrap_or(false),
                traffic: traffic.clone(),
            });
        }
    }
    if run.stop == StopSpec::FlowsDone && !out.is_empty() && out.iter().all(|f| f.background) {
        return err("run.stop", "\"flows-done\" waits for the flows that are not background, and every flow is");
    }
    Ok((out, total_flows))
}
