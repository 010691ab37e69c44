//! A packetdrill script, parsed: command-line options (`--name=value` lines), shell blocks
//! (`` `…` ``), Python blocks (`%{ … }%`), and timed events — packets the test injects
//! (`<`) or expects (`>`), system calls, and timed Python or shell blocks. The grammar is
//! packetdrill's as its scripts use it (google/packetdrill `parser.y`); what this reader does
//! not understand is an error naming the line, which the conformance report counts as
//! syntax not supported.

use std::fmt;

/// A parse error: line and reason.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line of the script.
    pub line: usize,
    /// What was not understood.
    pub reason: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.reason)
    }
}

/// When an event happens, microseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum When {
    /// At this time from the script's start.
    Absolute(i64),
    /// This long after the previous event.
    Relative(i64),
    /// At any time (`*`).
    Any,
}

/// An event's timing: when it starts, and for a range (`a~b`) or a blocking call
/// (`a...b`) when it may end.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Timing {
    /// The start (or the only time).
    pub start: When,
    /// `a~b`: the event may happen anywhere from `start` to this.
    pub range_end: Option<When>,
    /// `a...b`: a system call that starts at `start` and returns at this time.
    pub blocking_end: Option<When>,
}

/// A TCP option as a script writes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ScriptOption {
    /// `nop`.
    Nop,
    /// `eol`.
    Eol,
    /// `mss N`.
    Mss(u16),
    /// `wscale N`.
    WindowScale(u8),
    /// `sackOK`.
    SackPermitted,
    /// `sack a:b c:d …` (relative sequence numbers).
    Sack(Vec<(u32, u32)>),
    /// `TS val N ecr M`.
    Timestamp(u32, u32),
    /// Any other option (`md5`, `FO`, `exp`, …): its text.
    Other(String),
}

/// The IP ECN marking a packet line names (`[ect0]`, `[ce]`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnMark {
    /// `[noecn]`.
    NotEct,
    /// `[ect0]`.
    Ect0,
    /// `[ect1]`.
    Ect1,
    /// `[ce]`.
    Ce,
    /// `[ect01]`: either ECT codepoint.
    Ect01,
}

/// A packet line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PacketLine {
    /// `<`: the test injects it; `>`: the stack must send it.
    pub inbound: bool,
    /// Flag bits (`flags::*`); `.` is ACK.
    pub flags: u8,
    /// Flags written with letters packetdrill knows but the model has none of (URG: `U`).
    pub other_flags: String,
    /// Sequence number of the first byte, relative to the sender's ISN.
    pub seq: u32,
    /// One past the last payload byte.
    pub end: u32,
    /// Payload length.
    pub len: u32,
    /// `ack N`, relative to the receiver's ISN.
    pub ack: Option<u32>,
    /// `win N`: the raw 16-bit window field.
    pub win: Option<u32>,
    /// `<…>`: `None` when absent, `Some(None)` for the wildcard `<...>`.
    pub options: Option<Option<Vec<ScriptOption>>>,
    /// An ECN marking, if written.
    pub ecn: Option<EcnMark>,
}

/// An argument or result of a system call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Expr {
    /// `...`: anything.
    Ellipsis,
    /// An integer.
    Int(i64),
    /// A symbol (`SOCK_STREAM`, `SOL_TCP`, …).
    Name(String),
    /// Symbols or integers joined by `|`.
    Or(Vec<Expr>),
    /// `[a, b]`.
    Array(Vec<Expr>),
    /// `{a, k=v}`: items with optional keys (a key may carry a count: `msg_iov(1)`).
    Struct(Vec<(Option<String>, Expr)>),
    /// A quoted string.
    Str(String),
}

impl Expr {
    /// The integer this is, if it is one.
    pub fn int(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            Expr::Array(v) if v.len() == 1 => v[0].int(),
            _ => None,
        }
    }

    /// The symbol this is, if it is one.
    pub fn name(&self) -> Option<&str> {
        match self {
            Expr::Name(n) => Some(n),
            _ => None,
        }
    }

    /// Every integer inside, depth first (the byte counts of an iovec, say).
    pub fn ints(&self) -> Vec<i64> {
        match self {
            Expr::Int(v) => vec![*v],
            Expr::Or(v) | Expr::Array(v) => v.iter().flat_map(|e| e.ints()).collect(),
            Expr::Struct(v) => v.iter().flat_map(|(_, e)| e.ints()).collect(),
            _ => vec![],
        }
    }
}

/// A system call line: `name(args) = result [ERRNO (text)]`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Syscall {
    /// The call's name.
    pub name: String,
    /// Its arguments.
    pub args: Vec<Expr>,
    /// The expected return value.
    pub result: Expr,
    /// The expected errno's name, when the result is -1.
    pub errno: Option<String>,
}

/// What an event does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Action {
    /// A packet in or out.
    Packet(PacketLine),
    /// A system call.
    Syscall(Syscall),
    /// A Python block (`%{ … }%`).
    Python(String),
    /// A shell command block.
    Shell(String),
}

/// One timed event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    /// 1-based line where it starts.
    pub line: usize,
    /// When.
    pub timing: Timing,
    /// What.
    pub action: Action,
}

/// A whole script.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Script {
    /// `--name=value` option lines, in order (a bare `--name` has an empty value).
    pub options: Vec<(String, String)>,
    /// Untimed shell blocks (configuration), in order.
    pub shell: Vec<String>,
    /// The timed events, in order.
    pub events: Vec<Event>,
}

/// A statement of the script text: its first line and its text with comments removed.
struct Statement {
    line: usize,
    text: String,
}

/// Parse a script's text.
pub fn parse(text: &str) -> Result<Script, ParseError> {
    let mut script = Script::default();
    for st in statements(text)? {
        let t = st.text.trim();
        if let Some(opt) = t.strip_prefix("--") {
            let (k, v) = opt.split_once('=').unwrap_or((opt, ""));
            script.options.push((k.trim().to_string(), v.trim().to_string()));
        } else if let Some(body) = t.strip_prefix('`') {
            script.shell.push(body.trim_end_matches('`').to_string());
        } else if t.starts_with("%{") {
            let body = t.trim_start_matches("%{").trim_end_matches("}%").to_string();
            script.events.push(Event { line: st.line, timing: Timing { start: When::Relative(0), range_end: None, blocking_end: None }, action: Action::Python(body) });
        } else {
            script.events.push(event(st.line, t)?);
        }
    }
    Ok(script)
}

/// Split the text into statements: comments removed; shell and Python blocks and
/// bracketed syscall arguments kept whole across lines.
fn statements(text: &str) -> Result<Vec<Statement>, ParseError> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut cur_line = 1;
    let mut line = 1;
    let mut depth = 0i32;
    let mut i = 0;
    let flush = |cur: &mut String, cur_line: usize, out: &mut Vec<Statement>| {
        if !cur.trim().is_empty() {
            out.push(Statement { line: cur_line, text: std::mem::take(cur) });
        }
        cur.clear();
    };
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if cur.trim().is_empty() && !c.is_whitespace() {
            cur_line = line;
        }
        match c {
            '/' if next == Some('/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
                continue;
            }
            '/' if next == Some('*') => {
                i += 2;
                while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                    line += (chars[i] == '\n') as usize;
                    i += 1;
                }
                i += 2;
                continue;
            }
            '`' => {
                let start = line;
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '`' {
                    line += (chars[j] == '\n') as usize;
                    j += 1;
                }
                if j >= chars.len() {
                    return Err(ParseError { line: start, reason: "unterminated shell block".into() });
                }
                cur.extend(&chars[i..=j]);
                i = j + 1;
                if depth == 0 && !cur.trim_start().starts_with(|c: char| c == '+' || c == '*' || c.is_ascii_digit() || c == '.') {
                    flush(&mut cur, cur_line, &mut out);
                }
                continue;
            }
            '%' if next == Some('{') => {
                let start = line;
                let mut j = i + 2;
                while j + 1 < chars.len() && !(chars[j] == '}' && chars[j + 1] == '%') {
                    line += (chars[j] == '\n') as usize;
                    j += 1;
                }
                if j + 1 >= chars.len() {
                    return Err(ParseError { line: start, reason: "unterminated %{ … }% block".into() });
                }
                cur.extend(&chars[i..j + 2]);
                i = j + 2;
                continue;
            }
            '"' => {
                let mut j = i + 1;
                while j < chars.len() && chars[j] != '"' && chars[j] != '\n' {
                    j += 1;
                }
                cur.extend(&chars[i..(j + 1).min(chars.len())]);
                i = j + 1;
                continue;
            }
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            '\n' => {
                line += 1;
                if depth <= 0 {
                    depth = 0;
                    flush(&mut cur, cur_line, &mut out);
                    i += 1;
                    continue;
                }
                cur.push(' ');
                i += 1;
                continue;
            }
            _ => {}
        }
        cur.push(c);
        i += 1;
    }
    flush(&mut cur, cur_line, &mut out);
    Ok(out)
}

/// A cursor over one statement's text.
struct Cur<'a> {
    s: &'a str,
    pos: usize,
    line: usize,
}

impl<'a> Cur<'a> {
    fn err<T>(&self, reason: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError { line: self.line, reason: format!("{} (at `{}`)", reason.into(), self.rest().chars().take(40).collect::<String>()) })
    }
    fn rest(&self) -> &'a str {
        &self.s[self.pos..]
    }
    fn ws(&mut self) {
        while self.rest().starts_with(char::is_whitespace) {
            self.pos += self.rest().chars().next().map_or(1, char::len_utf8);
        }
    }
    fn eat(&mut self, t: &str) -> bool {
        self.ws();
        if self.rest().starts_with(t) {
            self.pos += t.len();
            true
        } else {
            false
        }
    }
    fn peek(&mut self) -> Option<char> {
        self.ws();
        self.rest().chars().next()
    }
    fn word(&mut self) -> &'a str {
        self.ws();
        let r = self.rest();
        let n = r.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(r.len());
        self.pos += n;
        &r[..n]
    }
    /// A decimal (or 0x hex) integer, optionally negative.
    fn int(&mut self) -> Result<i64, ParseError> {
        self.ws();
        let r = self.rest();
        let neg = r.starts_with('-');
        let body = &r[neg as usize..];
        let (v, n) = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
            let n = h.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(h.len());
            (i64::from_str_radix(&h[..n], 16).ok(), n + 2)
        } else {
            let n = body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len());
            (body[..n].parse::<i64>().ok(), n)
        };
        match v {
            Some(v) if n > 0 => {
                self.pos += n + neg as usize;
                Ok(if neg { -v } else { v })
            }
            _ => self.err("expected an integer"),
        }
    }
    /// A u32 (sequence numbers, windows, option values).
    fn uint(&mut self) -> Result<u32, ParseError> {
        let v = self.int()?;
        u32::try_from(v).or_else(|_| self.err("expected a 32-bit unsigned integer"))
    }
    /// Seconds as written (`.1`, `0.011`, `2`), in microseconds.
    fn seconds(&mut self) -> Result<i64, ParseError> {
        self.ws();
        let r = self.rest();
        let n = r.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(r.len());
        // `...` after a number: stop before it.
        let n = r[..n].find("..").unwrap_or(n);
        let t = &r[..n];
        match t.parse::<f64>() {
            Ok(v) if !t.is_empty() => {
                self.pos += n;
                Ok((v * 1e6).round() as i64)
            }
            _ => self.err("expected a time in seconds"),
        }
    }
    fn when(&mut self) -> Result<When, ParseError> {
        if self.eat("*") {
            Ok(When::Any)
        } else if self.eat("+") {
            Ok(When::Relative(self.seconds()?))
        } else {
            Ok(When::Absolute(self.seconds()?))
        }
    }
}

fn event(line: usize, text: &str) -> Result<Event, ParseError> {
    let mut c = Cur { s: text, pos: 0, line };
    let start = c.when()?;
    let mut timing = Timing { start, range_end: None, blocking_end: None };
    if c.eat("~") {
        timing.range_end = Some(c.when()?);
    } else if c.eat("...") {
        timing.blocking_end = Some(c.when()?);
    }
    let action = match c.peek() {
        Some('<') | Some('>') => Action::Packet(packet(&mut c)?),
        Some('%') => {
            let body = c.rest().trim().trim_start_matches("%{").trim_end_matches("}%").to_string();
            Action::Python(body)
        }
        Some('`') => Action::Shell(c.rest().trim().trim_matches('`').to_string()),
        Some(_) => Action::Syscall(syscall(&mut c)?),
        None => return c.err("an event needs an action"),
    };
    Ok(Event { line, timing, action })
}

fn ecn_mark(c: &mut Cur) -> Result<Option<EcnMark>, ParseError> {
    if !c.eat("[") {
        return Ok(None);
    }
    let m = match c.word() {
        "noecn" => EcnMark::NotEct,
        "ect0" => EcnMark::Ect0,
        "ect1" => EcnMark::Ect1,
        "ce" => EcnMark::Ce,
        "ect01" => EcnMark::Ect01,
        w => return c.err(format!("unknown ECN marking [{w}]")),
    };
    if !c.eat("]") {
        return c.err("expected ] after an ECN marking");
    }
    Ok(Some(m))
}

fn packet(c: &mut Cur) -> Result<PacketLine, ParseError> {
    use crate::net::packet::flags as f;
    let inbound = c.eat("<");
    if !inbound && !c.eat(">") {
        return c.err("expected < or >");
    }
    let mut ecn = ecn_mark(c)?;
    c.ws();
    let mut fl = 0u8;
    let mut other = String::new();
    while let Some(ch) = c.rest().chars().next() {
        let bit = match ch {
            'S' => f::SYN,
            'F' => f::FIN,
            'R' => f::RST,
            'P' => f::PSH,
            '.' => f::ACK,
            'E' => f::ECE,
            'W' => f::CWR,
            '-' => 0,
            'U' => {
                other.push('U');
                0
            }
            _ => break,
        };
        fl |= bit;
        c.pos += 1;
    }
    let seq = c.uint()?;
    if !c.eat(":") {
        return c.err("expected seq:end(len)");
    }
    let end = c.uint()?;
    if !c.eat("(") {
        return c.err("expected (len)");
    }
    let len = c.uint()?;
    if !c.eat(")") {
        return c.err("expected )");
    }
    let mut p = PacketLine { inbound, flags: fl, other_flags: other, seq, end, len, ack: None, win: None, options: None, ecn };
    loop {
        match c.peek() {
            None => break,
            Some('<') => {
                c.eat("<");
                if c.eat("...") {
                    if !c.eat(">") {
                        return c.err("expected > after <...");
                    }
                    p.options = Some(None);
                } else {
                    p.options = Some(Some(options(c)?));
                }
            }
            Some('[') => {
                ecn = ecn_mark(c)?;
                p.ecn = ecn;
            }
            Some(_) => match c.word() {
                "ack" => p.ack = Some(c.uint()?),
                "win" => p.win = Some(c.uint()?),
                "urg" => {
                    c.uint()?;
                }
                w => return c.err(format!("unknown packet field `{w}`")),
            },
        }
    }
    Ok(p)
}

fn options(c: &mut Cur) -> Result<Vec<ScriptOption>, ParseError> {
    let mut v = Vec::new();
    loop {
        if c.eat(">") {
            return Ok(v);
        }
        let w = c.word();
        let o = match w {
            "nop" => ScriptOption::Nop,
            "eol" => ScriptOption::Eol,
            "sackOK" => ScriptOption::SackPermitted,
            "mss" => ScriptOption::Mss(u16::try_from(c.uint()?).or_else(|_| c.err("mss above 65535"))?),
            "wscale" => ScriptOption::WindowScale(u8::try_from(c.uint()?).or_else(|_| c.err("wscale above 255"))?),
            "TS" => {
                if c.word() != "val" {
                    return c.err("expected TS val N ecr M");
                }
                let val = c.uint()?;
                if c.word() != "ecr" {
                    return c.err("expected ecr");
                }
                ScriptOption::Timestamp(val, c.uint()?)
            }
            "sack" => {
                let mut blocks = Vec::new();
                while c.peek().is_some_and(|ch| ch.is_ascii_digit()) {
                    let s = c.uint()?;
                    if !c.eat(":") {
                        return c.err("expected a:b in a SACK block");
                    }
                    blocks.push((s, c.uint()?));
                }
                ScriptOption::Sack(blocks)
            }
            "" => return c.err("expected an option or >"),
            other => {
                // Options the model has none of (md5, FO, exp, …): keep their text.
                c.ws();
                let r = c.rest();
                let n = r.find([',', '>']).unwrap_or(r.len());
                c.pos += n;
                ScriptOption::Other(format!("{other} {}", r[..n].trim()).trim().to_string())
            }
        };
        v.push(o);
        c.eat(",");
    }
}

fn syscall(c: &mut Cur) -> Result<Syscall, ParseError> {
    let name = c.word().to_string();
    if name.is_empty() {
        return c.err("expected a packet, a system call or a block");
    }
    if !c.eat("(") {
        return c.err(format!("expected ( after {name}"));
    }
    let mut args = Vec::new();
    if !c.eat(")") {
        loop {
            args.push(expr(c)?);
            if c.eat(")") {
                break;
            }
            if !c.eat(",") {
                return c.err("expected , or ) in the arguments");
            }
        }
    }
    if !c.eat("=") {
        return c.err("expected = and the result");
    }
    let result = expr(c)?;
    let mut errno = None;
    if c.peek().is_some_and(|ch| ch.is_ascii_uppercase()) {
        errno = Some(c.word().to_string());
    }
    // `(Operation now in progress)` after an errno, or a note such as `(flags O_RDWR)`:
    // text for people, never compared.
    while c.eat("(") {
        let r = c.rest();
        let n = r.find(')').unwrap_or(r.len());
        c.pos += (n + 1).min(r.len());
    }
    c.ws();
    if !c.rest().is_empty() {
        return c.err("unexpected text after the system call");
    }
    Ok(Syscall { name, args, result, errno })
}

fn expr(c: &mut Cur) -> Result<Expr, ParseError> {
    let first = atom(c)?;
    if c.peek() != Some('|') {
        return Ok(first);
    }
    let mut v = vec![first];
    while c.eat("|") {
        v.push(atom(c)?);
    }
    Ok(Expr::Or(v))
}

fn atom(c: &mut Cur) -> Result<Expr, ParseError> {
    match c.peek() {
        Some('.') if c.eat("...") => Ok(Expr::Ellipsis),
        Some('[') => {
            c.eat("[");
            let mut v = Vec::new();
            if c.eat("]") {
                return Ok(Expr::Array(v));
            }
            loop {
                v.push(expr(c)?);
                if c.eat("]") {
                    return Ok(Expr::Array(v));
                }
                if !c.eat(",") {
                    return c.err("expected , or ] in an array");
                }
            }
        }
        Some('{') => {
            c.eat("{");
            let mut v = Vec::new();
            if c.eat("}") {
                return Ok(Expr::Struct(v));
            }
            loop {
                // `key=value`, `key(n)=value`, or a bare value.
                let save = c.pos;
                let mut key = None;
                let w = c.word();
                if !w.is_empty() && !w.chars().all(|ch| ch.is_ascii_digit()) {
                    let mut k = w.to_string();
                    if c.peek() == Some('(') {
                        let r = c.rest();
                        let n = r.find(')').map_or(r.len(), |n| n + 1);
                        k.push_str(&r[..n]);
                        c.pos += n;
                    }
                    if c.eat("=") {
                        key = Some(k);
                    } else {
                        c.pos = save;
                    }
                } else {
                    c.pos = save;
                }
                v.push((key, expr(c)?));
                if c.eat("}") {
                    return Ok(Expr::Struct(v));
                }
                if !c.eat(",") {
                    return c.err("expected , or } in a struct");
                }
            }
        }
        Some('"') => {
            c.eat("\"");
            let r = c.rest();
            let n = r.find('"').unwrap_or(r.len());
            c.pos += (n + 1).min(r.len());
            Ok(Expr::Str(r[..n].to_string()))
        }
        Some(ch) if ch == '-' || ch.is_ascii_digit() => Ok(Expr::Int(c.int()?)),
        Some(ch) if ch.is_ascii_alphabetic() || ch == '_' => {
            let w = c.word().to_string();
            // A call-like value (`htons(8080)`, `inet_addr("…")`): keep its argument.
            if c.peek() == Some('(') {
                c.eat("(");
                let inner = if c.eat(")") { Expr::Ellipsis } else { expr(c)? };
                if !c.eat(")") {
                    return c.err("expected )");
                }
                return Ok(Expr::Struct(vec![(Some(w), inner)]));
            }
            Ok(Expr::Name(w))
        }
        _ => c.err("expected a value"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCRIPT: &str = r#"
--tolerance_usecs=20000
// Set up config.
`../common/defaults.sh
sysctl -q net.ipv4.tcp_tso_win_divisor=100`

    0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
   +0 setsockopt(3, SOL_SOCKET, SO_REUSEADDR, [1], 4) = 0
  +.1 < S 0:0(0) win 32792 <mss 1000,sackOK,nop,nop,nop,wscale 7>
   +0 > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 8>
  +.1 < . 1:1(0) ack 1 win 257 <sack 4000:4001 5001:6001,nop,nop>
/* a block
   comment */
+.1~+.105 > P. 3001:4001(1000) ack 1
 +.01...0.011 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
   +0 sendmsg(4, {msg_name(...)=...,
                  msg_iov(2)=[{..., 100}, {..., 200}], msg_flags=0}, MSG_MORE) = 300
   +0 %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%
   +0 > [ect0] SEW 0:0(0) <...>
"#;

    #[test]
    fn a_script_parses_into_options_blocks_and_events() {
        let s = parse(SCRIPT).unwrap();
        assert_eq!(s.options, vec![("tolerance_usecs".to_string(), "20000".to_string())]);
        assert_eq!(s.shell.len(), 1);
        assert!(s.shell[0].contains("tcp_tso_win_divisor=100"));
        assert_eq!(s.events.len(), 10);
        let Action::Packet(p) = &s.events[2].action else { panic!() };
        assert!(p.inbound);
        assert_eq!((p.flags, p.win), (crate::net::packet::flags::SYN, Some(32792)));
        assert_eq!(
            p.options,
            Some(Some(vec![ScriptOption::Mss(1000), ScriptOption::SackPermitted, ScriptOption::Nop, ScriptOption::Nop, ScriptOption::Nop, ScriptOption::WindowScale(7)]))
        );
        let Action::Packet(p) = &s.events[4].action else { panic!() };
        assert!(p.options.as_ref().unwrap().as_ref().unwrap().contains(&ScriptOption::Sack(vec![(4000, 4001), (5001, 6001)])));
        assert_eq!(s.events[5].timing, Timing { start: When::Relative(100_000), range_end: Some(When::Relative(105_000)), blocking_end: None });
        assert_eq!(s.events[5].line, 14);
        let Action::Syscall(sc) = &s.events[6].action else { panic!() };
        assert_eq!((sc.name.as_str(), sc.result.int(), sc.errno.as_deref()), ("connect", Some(-1), Some("EINPROGRESS")));
        assert_eq!(s.events[6].timing.blocking_end, Some(When::Absolute(11_000)));
        let Action::Syscall(sc) = &s.events[7].action else { panic!() };
        assert_eq!(sc.args[1].ints(), vec![100, 200, 0], "iovec lengths (and the flags) inside the struct");
        assert!(matches!(&s.events[8].action, Action::Python(p) if p.contains("tcpi_snd_cwnd == 10")));
        let Action::Packet(p) = &s.events[9].action else { panic!() };
        assert_eq!((p.ecn, p.options.clone()), (Some(EcnMark::Ect0), Some(None)));
    }

    #[test]
    fn what_is_not_understood_names_its_line() {
        let e = parse("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 > Q 1:1(0) frob 3\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.reason.contains("frob") || e.reason.contains("integer"), "{e}");
    }
}
