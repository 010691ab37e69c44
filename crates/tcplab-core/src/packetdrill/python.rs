//! The Python that packetdrill scripts put in `%{ … }%` blocks, as far as the TCP tests use
//! it: `assert` with comparisons and integer arithmetic over the socket's `tcpi_*` fields
//! (Linux `struct tcp_info`), assignments to the script's own variables (kept from block to
//! block), and `print` (ignored). Anything else is reported as not supported, never guessed.

use std::collections::BTreeMap;

/// Why a block did not pass.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PyError {
    /// An assertion failed: the expression and the values it read.
    Assert(String),
    /// A `tcpi_*` field the model does not provide.
    UnknownField(String),
    /// Python this evaluator does not run.
    Unsupported(String),
}

/// Variables of one script's blocks, and the `tcpi_*` values of the moment.
#[derive(Debug, Default)]
pub struct Python {
    vars: BTreeMap<String, i64>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Int(i64),
    Name(String),
    Op(&'static str),
}

const OPS: [&str; 20] = ["==", "!=", "<=", ">=", "//", "+=", "-=", "*=", "<", ">", "+", "-", "*", "/", "%", "(", ")", ",", "=", "&"];

fn lex(s: &str) -> Result<Vec<Tok>, PyError> {
    let mut v = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let c = b[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i] as char).is_ascii_alphanumeric() {
                i += 1;
            }
            let t = &s[st..i];
            let n = if let Some(h) = t.strip_prefix("0x") { i64::from_str_radix(h, 16).ok() } else { t.parse().ok() };
            v.push(Tok::Int(n.ok_or_else(|| PyError::Unsupported(format!("number {t}")))?));
        } else if c.is_ascii_alphabetic() || c == '_' {
            let st = i;
            while i < b.len() && ((b[i] as char).is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            v.push(Tok::Name(s[st..i].to_string()));
        } else if let Some(op) = OPS.iter().find(|o| s[i..].starts_with(**o)) {
            v.push(Tok::Op(op));
            i += op.len();
        } else if c == '"' || c == '\'' {
            // A string (a message in assert or print): skip it.
            let q = b[i];
            i += 1;
            while i < b.len() && b[i] != q {
                i += 1;
            }
            i += 1;
            v.push(Tok::Int(0));
        } else {
            return Err(PyError::Unsupported(format!("character `{c}`")));
        }
    }
    Ok(v)
}

struct Eval<'a> {
    t: &'a [Tok],
    i: usize,
    get: &'a dyn Fn(&str) -> Option<i64>,
    vars: &'a BTreeMap<String, i64>,
    reads: Vec<(String, i64)>,
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.t.get(self.i)
    }
    fn is_op(&self, op: &str) -> bool {
        matches!(self.peek(), Some(Tok::Op(o)) if *o == op)
    }
    fn is_name(&self, n: &str) -> bool {
        matches!(self.peek(), Some(Tok::Name(x)) if x == n)
    }
    fn or(&mut self) -> Result<i64, PyError> {
        let mut v = self.and()?;
        while self.is_name("or") {
            self.i += 1;
            let r = self.and()?;
            v = (v != 0 || r != 0) as i64;
        }
        Ok(v)
    }
    fn and(&mut self) -> Result<i64, PyError> {
        let mut v = self.not()?;
        while self.is_name("and") {
            self.i += 1;
            let r = self.not()?;
            v = (v != 0 && r != 0) as i64;
        }
        Ok(v)
    }
    fn not(&mut self) -> Result<i64, PyError> {
        if self.is_name("not") {
            self.i += 1;
            return Ok((self.not()? == 0) as i64);
        }
        self.cmp()
    }
    fn cmp(&mut self) -> Result<i64, PyError> {
        let mut left = self.sum()?;
        let mut all = true;
        let mut any = false;
        while let Some(Tok::Op(op)) = self.peek().cloned() {
            if !["==", "!=", "<", ">", "<=", ">="].contains(&op) {
                break;
            }
            self.i += 1;
            let right = self.sum()?;
            any = true;
            all &= match op {
                "==" => left == right,
                "!=" => left != right,
                "<" => left < right,
                ">" => left > right,
                "<=" => left <= right,
                _ => left >= right,
            };
            left = right;
        }
        Ok(if any { all as i64 } else { left })
    }
    fn sum(&mut self) -> Result<i64, PyError> {
        let mut v = self.prod()?;
        loop {
            if self.is_op("+") {
                self.i += 1;
                v += self.prod()?;
            } else if self.is_op("-") {
                self.i += 1;
                v -= self.prod()?;
            } else {
                return Ok(v);
            }
        }
    }
    fn prod(&mut self) -> Result<i64, PyError> {
        let mut v = self.unary()?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op(o)) if ["*", "/", "//", "%", "&"].contains(o) => *o,
                _ => return Ok(v),
            };
            self.i += 1;
            let r = self.unary()?;
            v = match op {
                "*" => v * r,
                "&" => v & r,
                _ if r == 0 => return Err(PyError::Unsupported("division by zero".into())),
                "%" => v.rem_euclid(r),
                _ => v.div_euclid(r),
            };
        }
    }
    fn unary(&mut self) -> Result<i64, PyError> {
        if self.is_op("-") {
            self.i += 1;
            return Ok(-self.unary()?);
        }
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.i += 1;
                Ok(v)
            }
            Some(Tok::Op("(")) => {
                self.i += 1;
                let v = self.or()?;
                if !self.is_op(")") {
                    return Err(PyError::Unsupported("unbalanced parenthesis".into()));
                }
                self.i += 1;
                Ok(v)
            }
            Some(Tok::Name(n)) => {
                self.i += 1;
                if self.is_op("(") {
                    return Err(PyError::Unsupported(format!("call of {n}()")));
                }
                let v = match n.as_str() {
                    "True" => 1,
                    "False" => 0,
                    _ => match self.vars.get(&n) {
                        Some(v) => *v,
                        None => match (self.get)(&n) {
                            Some(v) => v,
                            None if n.starts_with("tcpi_") => return Err(PyError::UnknownField(n)),
                            None => return Err(PyError::Unsupported(format!("name {n}"))),
                        },
                    },
                };
                self.reads.push((n, v));
                Ok(v)
            }
            t => Err(PyError::Unsupported(format!("expression at {t:?}"))),
        }
    }
}

impl Python {
    /// Run one block; `get` reads a `tcpi_*` field of the socket (None: not provided).
    pub fn run(&mut self, code: &str, get: &dyn Fn(&str) -> Option<i64>) -> Result<(), PyError> {
        let lines: Vec<&str> = code.lines().map(|l| l.split('#').next().unwrap_or("")).collect();
        for stmt in lines.join("\n").split([';', '\n']).map(str::trim).filter(|s| !s.is_empty()) {
            self.statement(stmt, get)?;
        }
        Ok(())
    }

    fn statement(&mut self, stmt: &str, get: &dyn Fn(&str) -> Option<i64>) -> Result<(), PyError> {
        if stmt.starts_with("print(") || stmt.starts_with("print ") || stmt.starts_with("import ") || stmt.starts_with('#') {
            return Ok(());
        }
        let toks = lex(stmt)?;
        let mut e = Eval { t: &toks, i: 0, get, vars: &self.vars, reads: vec![] };
        if e.is_name("assert") {
            e.i += 1;
            let v = e.or()?;
            // The message after the comma is only shown, never judged.
            if !(e.i == toks.len() || e.is_op(",")) {
                return Err(PyError::Unsupported(format!("`{stmt}`")));
            }
            if v == 0 {
                let read: Vec<String> = e.reads.iter().map(|(n, v)| format!("{n} = {v}")).collect();
                let expr = stmt.trim_start_matches("assert").split(',').next().unwrap_or("").trim();
                return Err(PyError::Assert(format!("{expr} ({})", read.join(", "))));
            }
            return Ok(());
        }
        if let (Some(Tok::Name(n)), Some(Tok::Op(op))) = (toks.first(), toks.get(1)) {
            if ["=", "+=", "-=", "*="].contains(op) {
                e.i = 2;
                let v = e.or()?;
                if e.i != toks.len() {
                    return Err(PyError::Unsupported(format!("`{stmt}`")));
                }
                let old = self.vars.get(n).copied();
                let new = match (*op, old) {
                    ("=", _) => v,
                    (_, None) => return Err(PyError::Unsupported(format!("{n} used before it is set"))),
                    ("+=", Some(o)) => o + v,
                    ("-=", Some(o)) => o - v,
                    (_, Some(o)) => o * v,
                };
                self.vars.insert(n.clone(), new);
                return Ok(());
            }
        }
        Err(PyError::Unsupported(format!("`{stmt}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcpi(n: &str) -> Option<i64> {
        match n {
            "tcpi_snd_cwnd" => Some(10),
            "tcpi_snd_ssthresh" => Some(7),
            _ => None,
        }
    }

    #[test]
    fn asserts_and_variables_work_across_blocks() {
        let mut py = Python::default();
        py.run("assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd", &tcpi).unwrap();
        py.run("print(tcpi_snd_cwnd); cwnd = 8; assert tcpi_snd_cwnd == cwnd + 2", &tcpi).unwrap();
        py.run("cwnd += 1\nassert 5 < tcpi_snd_ssthresh <= cwnd and not tcpi_snd_cwnd < 3", &tcpi).unwrap();
        let e = py.run("assert tcpi_snd_cwnd == cwnd, tcpi_snd_cwnd", &tcpi).unwrap_err();
        assert_eq!(e, PyError::Assert("tcpi_snd_cwnd == cwnd (tcpi_snd_cwnd = 10, cwnd = 9)".into()));
        assert_eq!(py.run("assert tcpi_delivery_rate > 0", &tcpi), Err(PyError::UnknownField("tcpi_delivery_rate".into())));
        assert!(matches!(py.run("for x in y: pass", &tcpi), Err(PyError::Unsupported(_))));
        py.run("assert (tcpi_snd_cwnd * 3) // 2 == 15 and 7 % 4 == 3", &tcpi).unwrap();
    }
}
