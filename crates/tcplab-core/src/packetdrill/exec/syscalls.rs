//! System calls: sockets, options, connect/accept/read/write/close/shutdown on the one
//! connection, and blocking calls (`t...t2`) that return when their condition holds.

use super::*;

impl Exec<'_> {
    pub(super) fn syscall(&mut self, ev: &Event, s: &Syscall, start: i64) -> Res {
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

    pub(super) fn setsockopt(&mut self, line: usize, fd: Option<i64>, s: &Syscall, want: Option<i64>) -> Res {
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

    pub(super) fn getsockopt(&mut self, line: usize, fd: Option<i64>, s: &Syscall, want: Option<i64>) -> Res {
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

    pub(super) fn socket_mut(&mut self, fd: Option<i64>) -> Option<(&mut Socket, &mut bool)> {
        let fd = fd?;
        self.sockets.iter_mut().find(|(f, _, _)| *f == fd).map(|(_, s, nb)| (s, nb))
    }

    pub(super) fn is_conn(&self, fd: Option<i64>) -> bool {
        fd.is_some() && (self.conn_fd == fd || self.sockets.iter().any(|(f, s, _)| Some(*f) == fd && matches!(s, Socket::Conn)))
    }

    pub(super) fn nonblocking(&self, fd: Option<i64>) -> bool {
        self.sockets.iter().any(|(f, _, nb)| Some(*f) == fd && *nb)
    }

    pub(super) fn listener_nonblocking(&self, fd: Option<i64>) -> bool {
        self.sockets.iter().any(|(f, _, nb)| Some(*f) == fd && *nb)
    }

    /// The return time of a blocking call `t...t2`: `t2` has the same base as `t` (for a
    /// relative start, the previous event's time), as packetdrill resolves it.
    pub(super) fn blocking_end(&self, start: When, end: When) -> i64 {
        match (start, end) {
            (When::Relative(_), When::Absolute(e)) => self.base + e,
            (_, e) => self.when(e),
        }
    }

    /// A blocking call returns when its condition holds; it must do so at its `...` end time
    /// (within max(tolerance, 12.5 % of its duration)).
    pub(super) fn check_blocking(&mut self, line: usize) -> Res {
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
}
