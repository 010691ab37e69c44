//! Packets: inbound ones decoded from the script's wire form and handed to the connection,
//! outbound ones taken in the order the connection sent them (aggregated as packetdrill does)
//! and compared field by field.

use super::*;

impl Exec<'_> {
    pub(super) fn inbound(&mut self, line: usize, p: &PacketLine) -> Res {
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
    pub(super) fn outbound(&mut self, line: usize, p: &PacketLine, lo: i64, hi: i64) -> Res {
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
    pub(super) fn next_sent(&mut self, line: usize, until: i64) -> Result<Option<Sent>, Failure> {
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

    pub(super) fn compare(&mut self, line: usize, p: &PacketLine, seg: &TcpHeader, t: i64) -> Res {
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
}

pub(super) fn flag_letters(f: u8) -> String {
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

pub(super) fn describe_line(p: &PacketLine) -> String {
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

pub(super) fn describe_wire(w: &WireSegment) -> String {
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
