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

mod packets;
mod syscalls;
pub mod tcp_info;

use super::host::Host;
use super::python::{PyError, Python};
use super::script::{Action, EcnMark, Event, Expr, PacketLine, Script, ScriptOption, Syscall, When};
use tcp_info::{constant, tcp_info, tcp_info_all};

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

/// How long the interpreter waits for an expected packet at most, µs.
const MAX_WAIT_US: i64 = 600_000_000;
