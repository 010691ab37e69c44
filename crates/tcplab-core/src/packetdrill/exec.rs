//! Running a parsed script against `tcp::Connection`, sans-I/O: the script's clock drives
//! the connection's timers, inbound packets are decoded from the wire form (`net::wire`)
//! and handed to the connection at their times, outbound packets are taken in the order the
//! connection sent them and compared field by field with the script's, system calls act on
//! the connection and their results are compared, and `%{ … }%` blocks read `tcp_info` as
//! Linux would report it. The first difference ends the run, reported as packetdrill does:
//! the script's line, what it expected and what happened.

use std::collections::VecDeque;

use crate::net::packet::{flags, Ecn, TcpHeader};
use crate::net::wire::{from_wire, to_wire, WireOption, WireSegment, WireView};
use crate::tcp::config::TcpConfig;
use crate::tcp::conn::{Connection, Output, State};
use crate::units::SimTime;

use super::host::Host;
use super::python::{PyError, Python};
use super::script::{Action, EcnMark, Event, Expr, PacketLine, Script, ScriptOption, Syscall, When};

/// Why a script did not pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FailureKind {
    /// The script uses syntax, a system call, an option or a setting the interpreter does
    /// not run.
    Unsupported,
    /// It reads a `tcp_info` field the model does not provide.
    UnknownField,
    /// An outbound packet differs from the script's (flags, numbers, window, options, ECN).
    Packet,
    /// An outbound packet came outside the time the script allows.
    Timing,
    /// The script expected a packet and none was sent in time.
    Missing,
    /// A system call returned something else.
    Syscall,
    /// A Python assertion failed.
    Assert,
}

impl FailureKind {
    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            FailureKind::Unsupported => "unsupported",
            FailureKind::UnknownField => "unknown tcp_info field",
            FailureKind::Packet => "packet differs",
            FailureKind::Timing => "packet time",
            FailureKind::Missing => "packet missing",
            FailureKind::Syscall => "system call",
            FailureKind::Assert => "assertion",
        }
    }
}

/// The first difference.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// 1-based script line.
    pub line: usize,
    /// What kind of difference.
    pub kind: FailureKind,
    /// Expected and actual, in words.
    pub message: String,
}

/// The connection, or the failure of a call that needs one before it exists.
fn conn_of(c: &mut Option<Connection>, line: usize) -> Result<&mut Connection, Failure> {
    match c.as_mut() {
        Some(c) => Ok(c),
        None => fail(line, FailureKind::Unsupported, "no connection yet"),
    }
}

/// Microseconds as the model's time.
fn at(us: i64) -> SimTime {
    SimTime(us.max(0) as u64 * 1_000_000)
}

fn us(t: SimTime) -> i64 {
    (t.0 / 1_000_000) as i64
}

/// A packet the connection sent, with when.
#[derive(Clone, Debug)]
struct Sent {
    at: SimTime,
    seg: TcpHeader,
}

/// What a socket descriptor refers to.
#[derive(Clone, Debug)]
enum Socket {
    /// Created, not yet listening or connected: its settings.
    Fresh(TcpConfig),
    /// Listening, with the settings its connection inherits.
    Listener(TcpConfig),
    /// The connection (one per script).
    Conn,
}

/// A blocking system call in progress (`t...t2 call()`): it returns when its condition holds.
#[derive(Clone, Debug)]
struct Blocking {
    line: usize,
    name: String,
    start: i64,
    end: i64,
    result: i64,
    /// Bytes a blocking write still has to queue, or a blocking read asks for.
    left: u64,
}

/// A `%{ … }%` block: its line, its code, and the `tcp_info` values at its time.
type CodeBlock = (usize, String, Vec<(&'static str, i64)>);

/// The interpreter's state.
pub struct Exec<'a> {
    script: &'a Script,
    host: Host,
    tolerance: i64,
    ts_tick_us: Option<i64>,
    now: SimTime,
    /// Time of the previous event, base of relative times (µs).
    last: i64,
    sockets: Vec<(i64, Socket, bool)>,
    conn: Option<Connection>,
    conn_fd: Option<i64>,
    /// The connection is still to be accepted by the listener's `accept`.
    pending_accept: bool,
    sent: VecDeque<Sent>,
    out: Output,
    /// Window-scale shift of the script's end (what its SYN announced), once negotiated.
    peer_shift: Option<u8>,
    /// The first TSval compared: (script, actual); later actual values map through it.
    ts_base: Option<(i64, i64)>,
    /// Script TSval → actual TSval of every outbound segment compared (for inbound TSecr).
    ts_map: Vec<(u32, u32)>,
    /// `--strict_segments`: no aggregation of outbound segments.
    strict: bool,
    /// Resolved script time of the previous event (µs; the dynamic tolerance counts from it).
    prev_time: i64,
    /// The base relative times of the current event count from (`last` when it began).
    base: i64,
    /// `shutdown(SHUT_RD)` was called: reads return 0.
    shut_rd: bool,
    /// `shutdown(SHUT_WR)` was called: writes fail with EPIPE.
    shut_wr: bool,
    blocking: Option<Blocking>,
    /// `%{ … }%` blocks with the `tcp_info` read at their time; run after the script, as
    /// packetdrill runs them.
    code: Vec<CodeBlock>,
    /// Outbound packets that differed from the script only in PSH.
    pub psh_differences: Vec<usize>,
    /// With `verbose`: one line per event (time, line, the connection's state after it).
    pub log: Option<Vec<String>>,
}

type Res = Result<(), Failure>;

fn fail<T>(line: usize, kind: FailureKind, message: impl Into<String>) -> Result<T, Failure> {
    Err(Failure { line, kind, message: message.into() })
}

impl<'a> Exec<'a> {
    /// An interpreter for `script` on `host`.
    pub fn new(script: &'a Script, host: Host) -> Result<Self, Failure> {
        let mut tolerance = 4_000;
        let mut ts_tick_us = None;
        let mut strict = false;
        for (k, v) in &script.options {
            let n = || v.parse::<i64>().map_err(|_| Failure { line: 0, kind: FailureKind::Unsupported, message: format!("option --{k}={v}") });
            match k.as_str() {
                "tolerance_usecs" => tolerance = n()?,
                "tcp_ts_tick_usecs" => ts_tick_us = Some(n()?),
                "strict_segments" => strict = true,
                "ip_version" if v == "ipv4" || v == "ipv4-mapped-ipv6" || v == "ipv6" => {}
                _ => return fail(0, FailureKind::Unsupported, format!("script option --{k}")),
            }
        }
        Ok(Exec {
            script,
            host,
            tolerance,
            ts_tick_us,
            now: SimTime::ZERO,
            last: 0,
            sockets: Vec::new(),
            conn: None,
            conn_fd: None,
            pending_accept: false,
            sent: VecDeque::new(),
            out: Output::default(),
            peer_shift: None,
            ts_base: None,
            ts_map: Vec::new(),
            strict,
            prev_time: 0,
            base: 0,
            shut_rd: false,
            shut_wr: false,
            blocking: None,
            code: Vec::new(),
            psh_differences: Vec::new(),
            log: None,
        })
    }

    /// Run every event; the first difference is the result.
    pub fn run(&mut self) -> Res {
        let script = self.script;
        for ev in &script.events {
            self.event(ev)?;
        }
        if let Some(b) = self.blocking.take() {
            return fail(b.line, FailureKind::Syscall, format!("{} had not returned by the end of the script", b.name));
        }
        // The code blocks run last, on the values read at their times (packetdrill `code.c`).
        let mut py = Python::default();
        for (line, code, info) in std::mem::take(&mut self.code) {
            let get = |name: &str| -> Option<i64> { info.iter().find(|(n, _)| *n == name).map(|(_, v)| *v).or_else(|| constant(name)) };
            match py.run(&code, &get) {
                Ok(()) => {}
                Err(PyError::Assert(m)) => return fail(line, FailureKind::Assert, format!("assert {m}")),
                Err(PyError::UnknownField(f)) => return fail(line, FailureKind::UnknownField, f),
                Err(PyError::Unsupported(m)) => return fail(line, FailureKind::Unsupported, format!("python: {m}")),
            }
        }
        Ok(())
    }

    /// packetdrill's tolerance for an event at `t` (µs): the script's `tolerance_usecs`, or
    /// 12.5 % of the time since the previous event if more (`run.c: verify_time`).
    fn tol(&self, t: i64) -> i64 {
        self.tolerance.max((t - self.prev_time).max(0) / 8)
    }

    fn when(&self, w: When) -> i64 {
        match w {
            When::Absolute(t) => t,
            When::Relative(d) => self.last + d,
            When::Any => us(self.now),
        }
    }

    fn event(&mut self, ev: &Event) -> Res {
        self.base = self.last;
        let start = self.when(ev.timing.start);
        match &ev.action {
            Action::Packet(p) if !p.inbound => {
                let (lo, hi) = match ev.timing.range_end {
                    Some(end) => {
                        let tol = self.tol(start);
                        (start - tol, self.when(end) + tol)
                    }
                    None if ev.timing.start == When::Any => (i64::MIN, i64::MAX),
                    None => {
                        let tol = self.tol(start);
                        (start - tol, start + tol)
                    }
                };
                self.outbound(ev.line, p, lo, hi)?;
                // The next relative time counts from when this event ended: the packet's
                // time if the interpreter waited for it, else the previous event's end.
                self.last = us(self.now);
                self.prev_time = if ev.timing.start == When::Any { us(self.now) } else { start };
            }
            action => {
                self.advance(at(start), ev.line)?;
                self.last = start;
                match action {
                    Action::Packet(p) => self.inbound(ev.line, p)?,
                    Action::Syscall(s) => self.syscall(ev, s, start)?,
                    Action::Python(code) => {
                        let info = self.conn.as_ref().map(tcp_info_all).unwrap_or_default();
                        self.code.push((ev.line, code.clone(), info));
                    }
                    Action::Shell(cmd) => self.shell(ev.line, cmd)?,
                }
                self.prev_time = start;
            }
        }
        if let Some(log) = self.log.as_mut() {
            let state = self.conn.as_ref().map_or(String::from("no connection"), |c| {
                format!(
                    "cwnd {} ssthresh {} ca_state {} una {} nxt {} rto {}ms",
                    tcp_info(c, "tcpi_snd_cwnd").unwrap_or(0),
                    tcp_info(c, "tcpi_snd_ssthresh").unwrap_or(0),
                    c.linux_ca_state(),
                    c.snd_una(),
                    c.snd_nxt(),
                    c.rto().as_ps() / 1_000_000_000
                )
            });
            log.push(format!("{:>10.6} line {:>3}: {state}", us(self.now) as f64 / 1e6, ev.line));
        }
        self.check_blocking(ev.line)
    }

    /// Run the connection's timers up to `t` (each at its deadline), then set the clock.
    fn advance(&mut self, t: SimTime, line: usize) -> Res {
        let mut guard = 0;
        while let Some(d) = self.conn.as_ref().and_then(|c| c.next_deadline()) {
            if d > t {
                break;
            }
            guard += 1;
            if guard > 100_000 {
                return fail(line, FailureKind::Unsupported, "the connection's timers do not settle");
            }
            self.now = d.max(self.now);
            let now = self.now;
            if let Some(c) = self.conn.as_mut() {
                c.on_timer(now, &mut self.out);
            }
            self.collect();
            self.check_blocking(line)?;
        }
        self.now = t.max(self.now);
        Ok(())
    }

    fn collect(&mut self) {
        let now = self.now;
        for seg in self.out.segments.drain(..) {
            self.sent.push_back(Sent { at: now, seg });
        }
        self.out.events.clear();
        self.out.peer_fin = false;
    }

    // ---- Packets ----------------------------------------------------------------------

    fn inbound(&mut self, line: usize, p: &PacketLine) -> Res {
        if !p.other_flags.is_empty() {
            return fail(line, FailureKind::Unsupported, format!("TCP flags {} are not modelled", p.other_flags));
        }
        let mut options = Vec::new();
        match &p.options {
            Some(Some(opts)) => {
                for o in opts {
                    options.push(match o {
                        ScriptOption::Nop => WireOption::Nop,
                        ScriptOption::Eol => WireOption::Eol,
                        ScriptOption::Mss(m) => WireOption::Mss(*m),
                        ScriptOption::WindowScale(s) => WireOption::WindowScale(*s),
                        ScriptOption::SackPermitted => WireOption::SackPermitted,
                        ScriptOption::Timestamp(v, e) => {
                            // The script's TSecr names one of our TSvals in the script's numbers
                            // (packetdrill `map_inbound_packet`); on a bare SYN it is literal.
                            let ecr = if p.flags & flags::ACK == 0 {
                                *e
                            } else {
                                match self.ts_map.iter().rev().find(|(sv, _)| sv == e) {
                                    Some((_, live)) => *live,
                                    None => return fail(line, FailureKind::Unsupported, format!("TS ecr {e} matches no TSval the script saw")),
                                }
                            };
                            WireOption::Timestamp(*v, ecr)
                        }
                        ScriptOption::Sack(blocks) => {
                            if blocks.len() > crate::net::packet::MAX_SACK_BLOCKS {
                                return fail(line, FailureKind::Unsupported, "more than 4 SACK blocks");
                            }
                            let mut b = [(0u32, 0u32); crate::net::packet::MAX_SACK_BLOCKS];
                            b[..blocks.len()].copy_from_slice(blocks);
                            WireOption::Sack { blocks: b, len: blocks.len() as u8 }
                        }
                        ScriptOption::Other(t) => return fail(line, FailureKind::Unsupported, format!("TCP option `{t}` is not modelled")),
                    });
                }
            }
            Some(None) => return fail(line, FailureKind::Unsupported, "<...> on an inbound packet"),
            None => {}
        }
        let syn = p.flags & flags::SYN != 0;
        let ecn = match p.ecn {
            None | Some(EcnMark::NotEct) => Ecn::NotEct,
            Some(EcnMark::Ect0) | Some(EcnMark::Ect01) => Ecn::Ect0,
            Some(EcnMark::Ect1) => Ecn::Ect1,
            Some(EcnMark::Ce) => Ecn::Ce,
        };
        let wire = WireSegment { seq: p.seq, ack: p.ack.unwrap_or(0), flags: p.flags, window: p.win.unwrap_or(0).min(65_535) as u16, options, len: p.len, ecn };
        if p.win.is_some_and(|w| w > 65_535) {
            return fail(line, FailureKind::Unsupported, "a window field above 65535");
        }
        if p.end != p.seq.wrapping_add(p.len) {
            return fail(line, FailureKind::Unsupported, format!("{}:{}({}) is not seq:seq+len", p.seq, p.end, p.len));
        }
        if syn {
            let ws = wire.options.iter().find_map(|o| if let WireOption::WindowScale(s) = o { Some(*s) } else { None });
            self.peer_shift = ws;
        }
        // A SYN to a listener opens the connection.
        if self.conn.is_none() {
            if !syn || p.flags & flags::ACK != 0 {
                return fail(line, FailureKind::Unsupported, "a packet for no connection (the model sends no RST)");
            }
            let Some(cfg) = self.sockets.iter().find_map(|(_, s, _)| if let Socket::Listener(c) = s { Some(c.clone()) } else { None }) else {
                return fail(line, FailureKind::Unsupported, "a SYN with no listening socket");
            };
            let mut c = Connection::new(cfg);
            c.set_auto_read(false);
            c.listen();
            self.conn = Some(c);
            self.pending_accept = true;
        }
        let conn = self.conn.as_ref().expect("set above");
        // The script's window scale counts only once both ends sent the option.
        let shift = if syn { 0 } else { self.peer_shift.filter(|_| conn.window_shift() > 0 || conn.state() == State::SynSent).unwrap_or(0) };
        let h = from_wire(&wire, &WireView { isn: 0, peer_isn: 0, shift }, conn.rcv_nxt(), conn.snd_una());
        let now = self.now;
        conn_of(&mut self.conn, line)?.on_segment(now, &h, &mut self.out);
        self.collect();
        Ok(())
    }

    /// Take the next packet the connection sent and compare it with the script's, waiting
    /// (running timers) up to two seconds past `hi` as packetdrill does; with aggregation (the
    /// default, packetdrill's non-strict segments) consecutive segments are taken until the
    /// script's payload is reached: each continues the previous one's sequence, with the same
    /// ACK, window and flags but PSH/FIN/CWR, and every one but the last the same size; the
    /// result has the last one's header but the first one's sequence number and CWR, and
    /// the last one's time.
    fn outbound(&mut self, line: usize, p: &PacketLine, lo: i64, hi: i64) -> Res {
        let give_up = hi.saturating_add(2_000_000).min(us(self.now) + MAX_WAIT_US);
        let first = self.next_sent(line, give_up)?.ok_or_else(|| Failure {
            line,
            kind: FailureKind::Missing,
            message: format!("expected {} but nothing was sent by {:.6} s", describe_line(p), give_up as f64 / 1e6),
        })?;
        let mut seg = first.seg;
        let mut t = first.at;
        let mut sizes = vec![seg.len];
        while !self.strict && seg.len < p.len && seg.len > 0 {
            let Some(next) = self.next_sent(line, give_up)? else { break };
            let same = |f: u8| f & !(flags::PSH | flags::FIN | flags::CWR);
            let joins = next.seg.seq == seg.seq + seg.len as u64
                && next.seg.ack == seg.ack
                && next.seg.window == seg.window
                && same(next.seg.flags) == same(seg.flags)
                // Every fragment but the last the same size (`verify_packet_fragments`).
                && sizes.iter().all(|&x| x == sizes[0])
                && seg.len + next.seg.len <= p.len;
            if !joins {
                self.sent.push_front(next);
                break;
            }
            let cwr = seg.flags & flags::CWR;
            let (s0, l0) = (seg.seq, seg.len);
            sizes.push(next.seg.len);
            seg = TcpHeader { seq: s0, len: l0 + next.seg.len, flags: next.seg.flags | cwr, ..next.seg };
            t = next.at;
        }
        let t = us(t);
        self.compare(line, p, &seg, t)?;
        if t < lo || t > hi {
            return fail(
                line,
                FailureKind::Timing,
                format!("{} sent at {:.6} s, expected within {:.6}..{:.6} s", describe_line(p), t as f64 / 1e6, lo as f64 / 1e6, hi as f64 / 1e6),
            );
        }
        Ok(())
    }

    /// The next segment sent, running the connection's timers one deadline at a time up to
    /// `until` µs while none is waiting.
    fn next_sent(&mut self, line: usize, until: i64) -> Result<Option<Sent>, Failure> {
        let mut guard = 0;
        while self.sent.is_empty() {
            let Some(d) = self.conn.as_ref().and_then(|c| c.next_deadline()) else { break };
            if us(d) > until {
                break;
            }
            guard += 1;
            if guard > 100_000 {
                return fail(line, FailureKind::Unsupported, "the connection's timers do not settle");
            }
            self.advance(d, line)?;
        }
        Ok(self.sent.pop_front())
    }

    fn compare(&mut self, line: usize, p: &PacketLine, seg: &TcpHeader, t: i64) -> Res {
        let conn = self.conn.as_ref().expect("a packet was sent, so a connection exists");
        let shift = if seg.has(flags::SYN) { 0 } else { conn.window_shift() };
        let w = to_wire(seg, &WireView { isn: 0, peer_isn: 0, shift });
        let got = describe_wire(&w);
        let mismatch = |what: &str| fail(line, FailureKind::Packet, format!("{what}: expected {}, got {got} at {:.6} s", describe_line(p), t as f64 / 1e6));
        if !p.other_flags.is_empty() {
            return fail(line, FailureKind::Unsupported, format!("TCP flags {} are not modelled", p.other_flags));
        }
        // PSH: where Linux pushes follows its sk_buff boundaries (a push at the end of each
        // write and every half window written, then kept by the last fragment), which the
        // model has none of: a difference in PSH alone is noted, not failed.
        if (w.flags & !flags::PSH) != (p.flags & !flags::PSH) {
            return mismatch("flags");
        }
        if w.flags != p.flags {
            self.psh_differences.push(line);
        }
        if w.seq != p.seq || w.len != p.len {
            return mismatch("sequence numbers");
        }
        // The acknowledgment field is compared even without the ACK flag (0 then).
        if w.ack != p.ack.unwrap_or(0) {
            return mismatch("acknowledgment number");
        }
        if let Some(win) = p.win {
            if w.window as u32 != win {
                return mismatch("window");
            }
        }
        if let Some(m) = p.ecn {
            let ok = match m {
                EcnMark::NotEct => w.ecn == Ecn::NotEct,
                EcnMark::Ect0 => w.ecn == Ecn::Ect0,
                EcnMark::Ect1 => w.ecn == Ecn::Ect1,
                EcnMark::Ce => w.ecn == Ecn::Ce,
                EcnMark::Ect01 => matches!(w.ecn, Ecn::Ect0 | Ecn::Ect1),
            };
            if !ok {
                return mismatch("ECN field");
            }
        }
        if let Some(Some(opts)) = &p.options {
            if opts.len() != w.options.len() {
                return mismatch("options");
            }
            for (want, have) in opts.iter().zip(&w.options) {
                let ok = match (want, have) {
                    (ScriptOption::Nop, WireOption::Nop) | (ScriptOption::Eol, WireOption::Eol) | (ScriptOption::SackPermitted, WireOption::SackPermitted) => true,
                    (ScriptOption::Mss(a), WireOption::Mss(b)) => a == b,
                    (ScriptOption::WindowScale(a), WireOption::WindowScale(b)) => a == b,
                    (ScriptOption::Sack(a), WireOption::Sack { .. }) => a.as_slice() == have.sack_blocks(),
                    (ScriptOption::Timestamp(val, _), WireOption::Timestamp(v, _)) => {
                        // The first TSval sets the mapping; later ones are checked only when the
                        // script gives the clock's tick (`--tcp_ts_tick_usecs`). TSecr is not
                        // compared (packetdrill does not).
                        let (s0, a0) = *self.ts_base.get_or_insert((*val as i64, *v as i64));
                        self.ts_map.push((*val, *v));
                        match self.ts_tick_us {
                            Some(tick) if tick > 0 => {
                                let mapped = s0 + (*v as i64 - a0);
                                ((mapped - *val as i64).abs() * tick) <= self.tolerance.max(t / 8)
                            }
                            _ => true,
                        }
                    }
                    _ => false,
                };
                if !ok {
                    return mismatch("options");
                }
            }
        }
        Ok(())
    }

    // ---- System calls -----------------------------------------------------------------

    fn syscall(&mut self, ev: &Event, s: &Syscall, start: i64) -> Res {
        let line = ev.line;
        let want = match &s.result {
            Expr::Int(v) => Some(*v),
            Expr::Ellipsis => None,
            e => return fail(line, FailureKind::Unsupported, format!("result {e:?}")),
        };
        let fd = s.args.first().and_then(Expr::int);
        let unsupported = |what: String| fail(line, FailureKind::Unsupported, what);
        let accept_ecn = self.host.ecn_mode == 2;
        let got: Result<i64, &'static str> = match s.name.as_str() {
            "socket" => {
                let fd = want.unwrap_or(3);
                self.sockets.push((fd, Socket::Fresh(self.host.tcp.clone()), false));
                Ok(fd)
            }
            "bind" => Ok(0),
            "listen" => match self.socket_mut(fd) {
                Some((s, _)) => {
                    if let Socket::Fresh(c) = s {
                        let mut c = c.clone();
                        // tcp_ecn = 2 accepts ECN from a peer that asks.
                        c.ecn = c.ecn || accept_ecn;
                        *s = Socket::Listener(c);
                    }
                    Ok(0)
                }
                None => Err("EBADF"),
            },
            "fcntl" => {
                let nonblock = s.args.iter().any(|a| matches!(a, Expr::Or(v) if v.iter().any(|x| x.name() == Some("O_NONBLOCK"))) || a.name() == Some("O_NONBLOCK"));
                match s.args.get(1).and_then(Expr::name) {
                    Some("F_SETFL") => {
                        if let Some((_, nb)) = self.socket_mut(fd) {
                            *nb = nonblock;
                        }
                        Ok(0)
                    }
                    Some("F_GETFL") => return unsupported("fcntl F_GETFL".into()),
                    other => return unsupported(format!("fcntl {other:?}")),
                }
            }
            "setsockopt" => return self.setsockopt(line, fd, s, want),
            "getsockopt" => return self.getsockopt(line, fd, s, want),
            "accept" => {
                let established = self.conn.as_ref().is_some_and(|c| !matches!(c.state(), State::Listen | State::SynReceived | State::Closed | State::SynSent));
                if self.pending_accept && established {
                    self.pending_accept = false;
                    let nfd = want.unwrap_or(4);
                    self.conn_fd = Some(nfd);
                    self.sockets.push((nfd, Socket::Conn, false));
                    Ok(nfd)
                } else if let Some(end) = ev.timing.blocking_end {
                    let end = self.blocking_end(ev.timing.start, end);
                    self.blocking = Some(Blocking { line, name: "accept".into(), end, start, result: want.unwrap_or(4), left: 0 });
                    return Ok(());
                } else if !self.listener_nonblocking(fd) {
                    return unsupported("accept before the handshake completed (blocks the interpreter)".into());
                } else {
                    Err("EAGAIN")
                }
            }
            "connect" => {
                let Some(cfg) = self.socket_mut(fd).and_then(|(s, _)| if let Socket::Fresh(c) = s { Some(c.clone()) } else { None }) else {
                    return unsupported("connect on a socket that is not fresh".into());
                };
                let nonblocking = self.socket_mut(fd).is_some_and(|(_, nb)| *nb);
                let mut c = Connection::new(cfg);
                c.set_auto_read(false);
                let now = self.now;
                c.connect(now, &mut self.out);
                self.conn = Some(c);
                self.conn_fd = fd;
                if let Some((s, _)) = self.socket_mut(fd) {
                    *s = Socket::Conn;
                }
                self.collect();
                if nonblocking {
                    Err("EINPROGRESS")
                } else {
                    let Some(end) = ev.timing.blocking_end else {
                        return unsupported("a blocking connect without its return time (t...t2)".into());
                    };
                    let end = self.blocking_end(ev.timing.start, end);
                    self.blocking = Some(Blocking { line, name: "connect".into(), end, start, result: want.unwrap_or(0), left: 0 });
                    return Ok(());
                }
            }
            "write" | "send" | "sendto" | "sendmsg" | "writev" => {
                let n = match s.name.as_str() {
                    "sendmsg" | "writev" => s.args.get(1).map(|a| a.ints().iter().filter(|v| **v > 0).sum::<i64>()),
                    _ => s.args.get(2).and_then(Expr::int),
                };
                let flags_arg = match s.name.as_str() {
                    "send" | "sendto" => s.args.get(3),
                    "sendmsg" => s.args.get(2),
                    _ => None,
                };
                if let Some(f) = flags_arg {
                    if f.int() != Some(0) {
                        return unsupported(format!("{} flags {f:?}", s.name));
                    }
                }
                if s.name == "sendmsg" {
                    if let Some(Expr::Struct(items)) = s.args.get(1) {
                        if items.iter().any(|(k, e)| k.as_deref() == Some("msg_flags") && e.int() != Some(0)) {
                            return unsupported("sendmsg msg_flags".into());
                        }
                    }
                }
                if s.args.get(1).is_some_and(|a| a.int() == Some(0)) {
                    return unsupported(format!("{} from a NULL buffer (EFAULT)", s.name));
                }
                let Some(n) = n.filter(|n| *n >= 0) else { return unsupported(format!("{} length", s.name)) };
                if !self.is_conn(fd) {
                    Err("EBADF")
                } else if self
                    .conn
                    .as_ref()
                    .is_some_and(|c| c.send_done() || matches!(c.state(), State::FinWait1 | State::FinWait2 | State::Closing | State::LastAck | State::TimeWait))
                    || self.shut_wr
                {
                    Err("EPIPE")
                } else {
                    let now = self.now;
                    let c = conn_of(&mut self.conn, line)?;
                    let wrote = c.write(now, n as u64, &mut self.out) as i64;
                    self.collect();
                    if wrote < n && !self.nonblocking(fd) {
                        // A blocking write returns once all of it is in the send buffer.
                        let Some(end) = ev.timing.blocking_end else {
                            return unsupported(format!("a {} that blocks without its return time (t...t2)", s.name));
                        };
                        let end = self.blocking_end(ev.timing.start, end);
                        self.blocking = Some(Blocking { line, name: "write".into(), start, end, result: want.unwrap_or(n), left: (n - wrote) as u64 });
                        return Ok(());
                    }
                    if wrote == 0 && n > 0 {
                        Err("EAGAIN")
                    } else {
                        Ok(wrote)
                    }
                }
            }
            "read" | "recv" | "recvfrom" => {
                let n = s.args.get(2).and_then(Expr::int).unwrap_or(0);
                if !self.is_conn(fd) {
                    Err("EBADF")
                } else {
                    let now = self.now;
                    let shut = self.shut_rd;
                    let c = conn_of(&mut self.conn, line)?;
                    let closed = c.peer_closed() || shut;
                    let got = c.read(now, n.max(0) as u64, &mut self.out) as i64;
                    self.collect();
                    if got == 0 && n > 0 && !closed {
                        if let Some(end) = ev.timing.blocking_end {
                            // A blocking read returns once data (or the peer's FIN) is in.
                            let end = self.blocking_end(ev.timing.start, end);
                            self.blocking = Some(Blocking { line, name: "read".into(), start, end, result: want.unwrap_or(n), left: n as u64 });
                            return Ok(());
                        }
                        if !self.nonblocking(fd) {
                            return unsupported("a read that blocks without its return time (t...t2)".into());
                        }
                        Err("EAGAIN")
                    } else {
                        Ok(got)
                    }
                }
            }
            "close" => {
                if self.is_conn(fd) {
                    let now = self.now;
                    let c = conn_of(&mut self.conn, line)?;
                    if c.readable() > 0 {
                        return unsupported("close with unread data (Linux sends a RST; the model has no RST)".into());
                    }
                    c.close(now, &mut self.out);
                    self.collect();
                }
                self.sockets.retain(|(f, _, _)| Some(*f) != fd);
                Ok(0)
            }
            "shutdown" => {
                let how = s.args.get(1).and_then(Expr::name).unwrap_or("");
                if !self.is_conn(fd) {
                    Err("ENOTCONN")
                } else {
                    if how == "SHUT_RD" || how == "SHUT_RDWR" {
                        self.shut_rd = true;
                    }
                    if how == "SHUT_WR" || how == "SHUT_RDWR" {
                        self.shut_wr = true;
                        let now = self.now;
                        conn_of(&mut self.conn, line)?.close(now, &mut self.out);
                        self.collect();
                    } else if how != "SHUT_RD" {
                        return unsupported(format!("shutdown {how}"));
                    }
                    Ok(0)
                }
            }
            "ioctl" => match s.args.get(1).and_then(Expr::name) {
                Some("SIOCINQ") | Some("FIONREAD") => {
                    let have = self.conn.as_ref().map_or(0, |c| c.readable()) as i64;
                    let expect = s.args.get(2).and_then(Expr::int);
                    if expect.is_some_and(|e| e != have) {
                        return fail(line, FailureKind::Syscall, format!("ioctl SIOCINQ: expected {} bytes readable, {have} are", expect.unwrap_or(0)));
                    }
                    Ok(0)
                }
                other => return unsupported(format!("ioctl {other:?}")),
            },
            other => return unsupported(format!("system call {other}")),
        };
        match (got, want) {
            (Ok(v), Some(w)) if v != w => fail(line, FailureKind::Syscall, format!("{} returned {v}, expected {w}", s.name)),
            (Err(e), Some(w)) if w != -1 || s.errno.as_deref().is_some_and(|x| x != e) => {
                fail(line, FailureKind::Syscall, format!("{} failed with {e}, expected {w} {}", s.name, s.errno.clone().unwrap_or_default()))
            }
            _ => Ok(()),
        }
    }

    fn setsockopt(&mut self, line: usize, fd: Option<i64>, s: &Syscall, want: Option<i64>) -> Res {
        let opt = s.args.get(2).and_then(Expr::name).unwrap_or("");
        let val = s.args.get(3).and_then(Expr::int);
        let apply = |c: &mut TcpConfig| -> Result<(), String> {
            match (opt, val) {
                ("SO_REUSEADDR", _) | ("SO_REUSEPORT", _) => {}
                // Linux doubles the value for its bookkeeping (`sock_setsockopt`).
                ("SO_SNDBUF", Some(v)) => c.sndbuf = 2 * v as u64,
                ("SO_RCVBUF", Some(v)) => c.rcvbuf = 2 * v as u64,
                ("TCP_NODELAY", Some(v)) => c.nagle = v == 0,
                ("TCP_MAXSEG", Some(v)) => c.mss = v as u32,
                _ => return Err(format!("setsockopt {opt}")),
            }
            Ok(())
        };
        match self.socket_mut(fd).map(|(s, _)| s) {
            Some(Socket::Fresh(c)) | Some(Socket::Listener(c)) => apply(c).or_else(|e| fail(line, FailureKind::Unsupported, e))?,
            Some(Socket::Conn) => {
                let c = self.conn.as_mut().expect("a connection socket has its connection");
                match (opt, val) {
                    ("SO_REUSEADDR", _) => {}
                    ("SO_SNDBUF", Some(v)) => c.set_sndbuf(2 * v as u64),
                    ("TCP_NODELAY", Some(v)) => {
                        c.set_nagle(v == 0);
                        // Setting TCP_NODELAY pushes what is pending (Linux `tcp_push_pending_frames`).
                        let now = self.now;
                        c.write(now, 0, &mut self.out);
                        self.collect();
                    }
                    _ => return fail(line, FailureKind::Unsupported, format!("setsockopt {opt} on a connected socket")),
                }
            }
            None => return fail(line, FailureKind::Syscall, "setsockopt on an unknown descriptor"),
        }
        if want.is_some_and(|w| w != 0) {
            return fail(line, FailureKind::Unsupported, "a setsockopt expected to fail");
        }
        Ok(())
    }

    fn getsockopt(&mut self, line: usize, fd: Option<i64>, s: &Syscall, want: Option<i64>) -> Res {
        let opt = s.args.get(2).and_then(Expr::name).unwrap_or("");
        let expect = s.args.get(3).and_then(Expr::int);
        let have = match (opt, self.socket_mut(fd).map(|(s, _)| s.clone())) {
            // Linux: the user's MSS before the connection, the current send MSS after.
            ("TCP_MAXSEG", Some(Socket::Fresh(c))) | ("TCP_MAXSEG", Some(Socket::Listener(c))) => c.mss as i64,
            ("TCP_MAXSEG", Some(Socket::Conn)) => self.conn.as_ref().expect("connection").smss() as i64,
            ("SO_SNDBUF", Some(Socket::Fresh(c))) | ("SO_SNDBUF", Some(Socket::Listener(c))) => c.sndbuf as i64,
            ("SO_SNDBUF", Some(Socket::Conn)) => self.conn.as_ref().expect("connection").config().sndbuf as i64,
            _ => return fail(line, FailureKind::Unsupported, format!("getsockopt {opt}")),
        };
        if expect.is_some_and(|e| e != have) {
            return fail(line, FailureKind::Syscall, format!("getsockopt {opt}: expected {}, got {have}", expect.unwrap_or(0)));
        }
        if want.is_some_and(|w| w != 0) {
            return fail(line, FailureKind::Unsupported, "a getsockopt expected to fail");
        }
        Ok(())
    }

    fn socket_mut(&mut self, fd: Option<i64>) -> Option<(&mut Socket, &mut bool)> {
        let fd = fd?;
        self.sockets.iter_mut().find(|(f, _, _)| *f == fd).map(|(_, s, nb)| (s, nb))
    }

    fn is_conn(&self, fd: Option<i64>) -> bool {
        fd.is_some() && (self.conn_fd == fd || self.sockets.iter().any(|(f, s, _)| Some(*f) == fd && matches!(s, Socket::Conn)))
    }

    fn nonblocking(&self, fd: Option<i64>) -> bool {
        self.sockets.iter().any(|(f, _, nb)| Some(*f) == fd && *nb)
    }

    fn listener_nonblocking(&self, fd: Option<i64>) -> bool {
        self.sockets.iter().any(|(f, _, nb)| Some(*f) == fd && *nb)
    }

    /// The return time of a blocking call `t...t2`: `t2` has the same base as `t` (for a
    /// relative start, the previous event's time), as packetdrill resolves it.
    fn blocking_end(&self, start: When, end: When) -> i64 {
        match (start, end) {
            (When::Relative(_), When::Absolute(e)) => self.base + e,
            (_, e) => self.when(e),
        }
    }

    /// A blocking call returns when its condition holds; it must do so at its `...` end time
    /// (within max(tolerance, 12.5 % of its duration)).
    fn check_blocking(&mut self, line: usize) -> Res {
        let Some(b) = &self.blocking else { return Ok(()) };
        let done = match b.name.as_str() {
            "connect" => self.conn.as_ref().is_some_and(|c| c.state() == State::Established),
            "accept" => self.pending_accept && self.conn.as_ref().is_some_and(|c| !matches!(c.state(), State::Listen | State::SynReceived | State::Closed)),
            "read" => self.conn.as_ref().is_some_and(|c| c.readable() > 0 || c.peer_closed()),
            "write" => {
                let left = b.left;
                let now = self.now;
                let c = self.conn.as_mut().expect("a write has its connection");
                let n = c.write(now, left, &mut self.out);
                self.collect();
                let b = self.blocking.as_mut().expect("checked");
                b.left -= n;
                b.left == 0
            }
            _ => false,
        };
        if !done {
            return Ok(());
        }
        let b = self.blocking.take().expect("checked");
        if b.name == "accept" {
            self.pending_accept = false;
            self.conn_fd = Some(b.result);
            self.sockets.push((b.result, Socket::Conn, false));
        }
        let t = us(self.now);
        let tol = self.tolerance.max((b.end - b.start).max(0) / 8);
        if (t - b.end).abs() > tol {
            let _ = line;
            return fail(b.line, FailureKind::Timing, format!("{} returned at {:.6} s, expected at {:.6} s", b.name, t as f64 / 1e6, b.end as f64 / 1e6));
        }
        let returned = match b.name.as_str() {
            "read" => {
                let now = self.now;
                let c = self.conn.as_mut().expect("a read has its connection");
                let got = c.read(now, b.left, &mut self.out) as i64;
                self.collect();
                got
            }
            "write" => b.result,
            "accept" => b.result,
            _ => 0,
        };
        if returned != b.result {
            return fail(b.line, FailureKind::Syscall, format!("{} returned {returned}, expected {}", b.name, b.result));
        }
        Ok(())
    }

    // ---- Python and shell -------------------------------------------------------------

    fn shell(&mut self, line: usize, cmd: &str) -> Res {
        if cmd.contains("sysctl_restore") {
            return Ok(());
        }
        let blocks = vec![cmd.to_string()];
        match Host::configure(&blocks) {
            Ok(h) if h.ignored.len() == super::host::commands(cmd).len() => Ok(()),
            _ => fail(line, FailureKind::Unsupported, format!("shell command during the run: `{cmd}`")),
        }
    }
}

/// Linux's `tcp_info` field `name` for connection `c` (None: not provided).
pub fn tcp_info(c: &Connection, name: &str) -> Option<i64> {
    let mss = c.smss().max(1) as u64;
    let segs = |b: u64| b.div_ceil(mss) as i64;
    Some(match name {
        "tcpi_snd_cwnd" => (c.cwnd() / mss) as i64,
        // TCP_INFINITE_SSTHRESH.
        "tcpi_snd_ssthresh" => {
            let s = c.ssthresh();
            if s == u64::MAX {
                0x7fff_ffff
            } else {
                (s / mss) as i64
            }
        }
        "tcpi_ca_state" => c.linux_ca_state() as i64,
        "tcpi_snd_mss" => c.smss() as i64,
        "tcpi_rcv_mss" => c.smss() as i64,
        "tcpi_advmss" => c.config().mss as i64,
        "tcpi_unacked" => segs(c.outstanding()),
        "tcpi_sacked" => segs(c.sacked_bytes()),
        "tcpi_lost" => segs(c.lost_bytes()),
        "tcpi_reordering" => c.dupthresh() as i64,
        "tcpi_total_retrans" => c.stats.retransmits as i64,
        "tcpi_rto" => (c.rto().as_ps() / 1_000_000) as i64,
        "tcpi_rtt" => (c.srtt()?.as_ps() / 1_000_000) as i64,
        "tcpi_state" => match c.state() {
            State::Established => 1,
            State::SynSent => 2,
            State::SynReceived => 3,
            State::FinWait1 => 4,
            State::FinWait2 => 5,
            State::TimeWait => 6,
            State::Closed => 7,
            State::CloseWait => 8,
            State::LastAck => 9,
            State::Listen => 10,
            State::Closing => 11,
        },
        "tcpi_bytes_acked" => c.stats.bytes_acked as i64,
        "tcpi_data_segs_out" => c.stats.segments_sent as i64,
        // Consecutive timeouts without progress (icsk_retransmits): not kept; none.
        "tcpi_retransmits" => return None,
        _ => return None,
    })
}

/// The `tcp_info` fields the model provides, in packetdrill's Python names.
const TCP_INFO_FIELDS: [&str; 17] = [
    "tcpi_lost",
    "tcpi_reordering",
    "tcpi_snd_cwnd",
    "tcpi_snd_ssthresh",
    "tcpi_ca_state",
    "tcpi_snd_mss",
    "tcpi_rcv_mss",
    "tcpi_advmss",
    "tcpi_unacked",
    "tcpi_sacked",
    "tcpi_total_retrans",
    "tcpi_rto",
    "tcpi_rtt",
    "tcpi_state",
    "tcpi_bytes_acked",
    "tcpi_data_segs_out",
    "tcpi_retransmits",
];

/// Every `tcp_info` field of `c` the model provides, as read now.
fn tcp_info_all(c: &Connection) -> Vec<(&'static str, i64)> {
    TCP_INFO_FIELDS.iter().filter_map(|n| tcp_info(c, n).map(|v| (*n, v))).collect()
}

/// The constants packetdrill defines for the Python blocks (`TCP_CA_*`, `TCP_ESTABLISHED`…).
fn constant(name: &str) -> Option<i64> {
    Some(match name {
        "TCP_CA_Open" => 0,
        "TCP_CA_Disorder" => 1,
        "TCP_CA_CWR" => 2,
        "TCP_CA_Recovery" => 3,
        "TCP_CA_Loss" => 4,
        "TCP_ESTABLISHED" => 1,
        "TCP_SYN_SENT" => 2,
        "TCP_SYN_RECV" => 3,
        "TCP_FIN_WAIT1" => 4,
        "TCP_FIN_WAIT2" => 5,
        "TCP_TIME_WAIT" => 6,
        "TCP_CLOSE" => 7,
        "TCP_CLOSE_WAIT" => 8,
        "TCP_LAST_ACK" => 9,
        "TCP_LISTEN" => 10,
        "TCP_CLOSING" => 11,
        _ => return None,
    })
}

fn flag_letters(f: u8) -> String {
    let mut s = String::new();
    for (bit, ch) in [(flags::SYN, 'S'), (flags::FIN, 'F'), (flags::RST, 'R'), (flags::PSH, 'P'), (flags::ECE, 'E'), (flags::CWR, 'W'), (flags::ACK, '.')] {
        if f & bit != 0 {
            s.push(ch);
        }
    }
    if s.is_empty() {
        s.push('-');
    }
    s
}

fn describe_line(p: &PacketLine) -> String {
    let mut s = format!("{} {}:{}({})", flag_letters(p.flags), p.seq, p.end, p.len);
    if let Some(a) = p.ack {
        s += &format!(" ack {a}");
    }
    if let Some(w) = p.win {
        s += &format!(" win {w}");
    }
    match &p.options {
        Some(None) => s += " <...>",
        Some(Some(o)) => {
            let o: Vec<String> = o
                .iter()
                .map(|o| match o {
                    ScriptOption::Nop => "nop".into(),
                    ScriptOption::Eol => "eol".into(),
                    ScriptOption::Mss(m) => format!("mss {m}"),
                    ScriptOption::WindowScale(x) => format!("wscale {x}"),
                    ScriptOption::SackPermitted => "sackOK".into(),
                    ScriptOption::Timestamp(v, e) => format!("TS val {v} ecr {e}"),
                    ScriptOption::Sack(b) => format!("sack {}", b.iter().map(|(a, b)| format!("{a}:{b}")).collect::<Vec<_>>().join(" ")),
                    ScriptOption::Other(t) => t.clone(),
                })
                .collect();
            s += &format!(" <{}>", o.join(","));
        }
        None => {}
    }
    s
}

fn describe_wire(w: &WireSegment) -> String {
    let mut s = format!("{} {}:{}({})", flag_letters(w.flags), w.seq, w.seq.wrapping_add(w.len), w.len);
    if w.flags & flags::ACK != 0 {
        s += &format!(" ack {}", w.ack);
    }
    s += &format!(" win {}", w.window);
    if !w.options.is_empty() {
        let o: Vec<String> = w
            .options
            .iter()
            .map(|o| match o {
                WireOption::Nop => "nop".into(),
                WireOption::Eol => "eol".into(),
                WireOption::Mss(m) => format!("mss {m}"),
                WireOption::WindowScale(x) => format!("wscale {x}"),
                WireOption::SackPermitted => "sackOK".into(),
                WireOption::Timestamp(v, e) => format!("TS val {v} ecr {e}"),
                WireOption::Sack { .. } => format!("sack {}", o.sack_blocks().iter().map(|(a, b)| format!("{a}:{b}")).collect::<Vec<_>>().join(" ")),
            })
            .collect();
        s += &format!(" <{}>", o.join(","));
    }
    if w.ecn != Ecn::NotEct {
        s += &format!(" [{:?}]", w.ecn);
    }
    s
}

/// How long the interpreter waits for an expected packet at most, µs.
const MAX_WAIT_US: i64 = 600_000_000;
